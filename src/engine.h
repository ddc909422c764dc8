/* The in-core device sort: one array of sort words, at most
 * eng_capacity() of them, sorted ascending by unsigned value on the
 * device (tile sorts, then global bitonic merge passes). */
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

/* Host memory for words words, pinned where the device can copy from it
 * fastest; it lives until eng_close.  NULL after a message. */
void *eng_host_buffer(struct engine *e, size_t words);

/* Receives sorted words[first..first+count) as each chunk arrives. */
typedef int (*eng_consumer)(void *ctx, size_t first, size_t count);

/* Sort words[0..n) (the host buffer) through the device, n at most what
 * was reserved: uploads in chunks that are tile-sorted as they land, runs
 * the merge passes, and downloads in chunks, handing each to consume (if
 * not NULL) while the next one is on its way.  0, CLS_E_FAIL, or what
 * consume returned. */
int eng_sort(struct engine *e, void *words, size_t n, eng_consumer consume, void *ctx);

/* Device time spent so far, in seconds, by phase. */
struct eng_times {
	double upload, sort, download;
};
void eng_times(const struct engine *e, struct eng_times *t);

/* Sort words[0..n) on the host: the path for inputs too small to be worth
 * a device. */
void host_sort(void *words, size_t n, enum word_kind kind);

#endif
