/* Bare keys counted ahead of their sort.  While a stream of bare integer
 * keys (enc_bare_keys) is read whole into memory of its own, a thread
 * takes what the host's radix sort would read first, segment by segment
 * as the bytes come: the bits that differ between the keys, and how many
 * keys of each value of its first pass's digit each segment holds
 * (radix.h, struct radix_counts).  The sort then starts with its scatter.
 * Where the keys' highest differing bit moves up, the digit moves with it
 * and the segments come so far are counted again; a stream that leaves
 * its memory, or ends as anything but one run of bare keys, leaves the
 * counts unused. */
#ifndef CLSORT_KEYAHEAD_H
#define CLSORT_KEYAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "radix.h"

struct key_ahead;

/* Whether f's keys may be counted ahead: bare keys, and a thread to
 * spare beside the stream's reader. */
bool ka_applies(const struct enc_format *f);

/* Keys of a stream's segment: 4 or 8 MiB, a few milliseconds of the
 * thread's, and 4 KiB of counts. */
#define KA_SEG ((size_t)1 << 20)

/* Start counting the keys of the stream at data, which has len bytes so
 * far, in segments of seg keys (KA_SEG).  NULL where the thread cannot
 * start (the sort counts them itself). */
struct key_ahead *ka_start(const struct enc_format *f, const unsigned char *data, size_t len,
			   size_t seg);

/* The stream has delivered bytes in all.  Returns at once (on the reading
 * thread); a NULL a is not told. */
void ka_grow(struct key_ahead *a, uint64_t bytes);

/* Stop reading the stream's bytes, which are about to move or go away;
 * returns once nothing reads them.  a may be NULL. */
void ka_stop(struct key_ahead *a);

/* The stream ended as the n keys at words: stop the thread, count what
 * it left on threads threads, and fill *c (the keys as f's sort words),
 * whose counts a keeps until ka_free.  False where a (may be NULL) did not
 * count these keys, or their bytes left its memory. */
bool ka_counts(struct key_ahead *a, const void *words, size_t n, unsigned threads,
	       struct radix_counts *c);

/* Stop, then release a; a may be NULL.  -vv: what it did. */
void ka_free(struct key_ahead *a);

#endif
