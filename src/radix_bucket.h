/* The host sort's buckets (radix.h): words few enough for the caches,
 * sorted there by one thread, stably, on the bits that differ below the
 * digit they were cut by; and the insertion sort that takes the fewest. */
#ifndef CLSORT_RADIX_BUCKET_H
#define CLSORT_RADIX_BUCKET_H

#include <stddef.h>
#include <stdint.h>

#include "keys.h"

/* 11-bit digits: three passes for a 32-bit word where bytes take four.
 * Although 2048 buckets cost more per pass than 256, they measured faster
 * from a few thousand words up for 32- and 64-bit words, and about as fast
 * for 128-bit ones. */
#define DIGIT_BITS 11
#define RADIX (1u << DIGIT_BITS)
/* Below this insertion sort is about as fast or faster (measured from
 * 128 words for WORD32 to 256 for WORD128): every radix pass pays for all
 * its buckets whatever the words. */
#define SMALL 256

/* Bits [b, b + width) of a WORD128 under mask: a digit that starts in lo
 * may end in hi. */
static inline uint32_t digit128(const struct word128 *w, unsigned b, uint32_t mask)
{
	if (b >= 64)
		return (uint32_t)(w->hi >> (b - 64)) & mask;
	return (uint32_t)(w->lo >> b | (b ? w->hi << (64 - b) : 0)) & mask;
}

/* Insertion sort of words[0..n) of kind on the bits from low up, stable:
 * words equal there are never moved past each other. */
void rb_insertion(void *words, size_t n, enum word_kind kind, unsigned low);

/* Sort words[0..m) of kind by bits [low, low + bits), stably, with room
 * for m words and counts for two digits; the result ends in words. */
void rb_sort(enum word_kind kind, uint32_t (*count)[RADIX], void *words, void *room, size_t m,
	     unsigned low, unsigned bits);

#endif
