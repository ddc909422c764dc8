/* The in-core device sort: one array of sort words, at most
 * eng_max_words() of them, sorted ascending by unsigned value on the
 * device: tile sorts in local memory, then global passes (bitonic merges
 * on a GPU, merge-path merges on a CPU device). */
#ifndef CLSORT_ENGINE_H
#define CLSORT_ENGINE_H

#include <stddef.h>

#include "clsort.h"
#include "device.h"
#include "keys.h"

/* Returned when the device cannot hold the words asked for: the caller
 * may retry with fewer. */
#define ENG_E_NOMEM (-10)

struct engine;

/* Build the kernels for words of this kind on an open device.  local picks
 * the tile kernel (rank merge or bitonic network).  0 or CLS_E_FAIL. */
int eng_open(struct engine **e, struct dev_ctx *d, enum word_kind kind, enum cls_local local);
void eng_close(struct engine *e);

/* Most words one sort can take: what one device buffer may hold. */
size_t eng_max_words(const struct engine *e);

/* Allocate the device buffer for up to words words, and prove it usable.
 * 0, ENG_E_NOMEM (try fewer) or CLS_E_FAIL. */
int eng_reserve(struct engine *e, size_t words);

/* Fills dst with words [first, first+count) of the array to sort. */
typedef int (*eng_producer)(void *ctx, void *dst, size_t first, size_t count);
/* Receives sorted words [first, first+count) at src, in order. */
typedef int (*eng_consumer)(void *ctx, const void *src, size_t first, size_t count);

/* Sort n words (n at most what was reserved) through the device.  The
 * words travel in chunks through a few pinned staging buffers: produce
 * fills each chunk, which is uploaded and tile-sorted while the next one is
 * produced; after the merge passes each sorted chunk is downloaded and
 * handed to consume while the next one is on its way.  0, CLS_E_FAIL, or
 * what a callback returned. */
int eng_sort(struct engine *e, size_t n, eng_producer produce, eng_consumer consume, void *ctx);

/* Device time spent so far, in seconds, by phase. */
struct eng_times {
	double upload, sort, download;
};
void eng_times(const struct engine *e, struct eng_times *t);

/* Sort words[0..n) on the host, on up to threads threads: the path for
 * inputs too small to be worth a device.  0, or CLS_E_FAIL after a message
 * when the sort's scratch memory (as much again as the words) cannot be
 * had. */
int host_sort(void *words, size_t n, enum word_kind kind, unsigned threads);

#endif
