/* The host sort: a stable radix sort of sort words on host threads.  Only
 * the bits that differ between the words are sorted on: one pass on the
 * highest 10 of them, then each bucket sorted in the caches, two digits at
 * a time from its highest; where a bucket is too large for the caches
 * (skewed keys), LSD passes of up to 11 bits over the whole array. */
#ifndef CLSORT_RADIX_H
#define CLSORT_RADIX_H

#include <stdbool.h>
#include <stddef.h>

#include "keys.h"

/* Sort words[0..n) of kind ascending by unsigned value (WORD128: hi, then
 * lo), keeping equal words in their order, on up to threads threads (0
 * counts as 1).  scratch holds n words, or is NULL to have the sort
 * allocate them; words and scratch lie at multiples of the word's size
 * (its passes store whole cache lines there, aligned).  The sorted words end in words, or, where sorted is not
 * NULL and scratch was given, in whichever of words and scratch *sorted
 * names (which spares a copy).  0, or CLS_E_FAIL after a message when the
 * scratch allocation fails. */
int radix_sort(void *words, void *scratch, size_t n, enum word_kind kind, unsigned threads,
	       void **sorted);

/* radix_sort of words on their bits from low up, no pass spent on the
 * bits below: where those already ascend among words that agree above
 * them (a position in a tied group), the words end wholly in order; where
 * they do not (records packed beside their keys), words that agree above
 * them keep their order, the sort being stable.  radix_sort is low 0. */
int radix_sort_above(void *words, void *scratch, size_t n, enum word_kind kind, unsigned low,
		     unsigned threads, void **sorted);

/* The first pass's digit where the words are many (2^16 and more): 1024
 * buckets measured faster than 2048 (from 2^20 to 2^26 words of each
 * kind), 512 about as fast.  It is the highest RADIX_MSD_BITS bits that
 * differ between the words. */
#define RADIX_MSD_BITS 10

/* Whether words whose differing bits span lo..hi (inclusive) are sorted
 * first on one digit of RADIX_MSD_BITS bits, the highest that differ, and
 * that digit's lowest bit in *shift.  They are where more than
 * RADIX_MSD_BITS bits lie in that span; fewer are sorted by LSD passes. */
bool radix_first_digit(unsigned lo, unsigned hi, unsigned *shift);

/* What the sort reads the words for before it moves any, taken while they
 * arrived (keyahead.h): the bits in which the words differ, and for each
 * segment of seg words (the last may be shorter) the words of each value
 * of the digit [shift, shift + RADIX_MSD_BITS), values xored with flip.
 * counts is NULL where no digit was counted (fewer differing bits). */
struct radix_counts {
	uint64_t differ;
	unsigned shift;
	uint32_t flip;
	size_t seg, nseg;
	const uint32_t *counts;	/* nseg rows of 1 << RADIX_MSD_BITS */
};

/* radix_sort of WORD32 or WORD64 words, c describing them (may be NULL):
 * no pass over them but the ones that move them where c's digit is the
 * one the sort takes. */
int radix_sort_counted(void *words, void *scratch, size_t n, enum word_kind kind, unsigned threads,
		       const struct radix_counts *c, void **sorted);

#endif
