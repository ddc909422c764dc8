/* After the sort of a run's words: the words whose keys tie on the word
 * ordered by their whole keys (string keys in rounds, strtie.h; binary keys
 * longer than their words, tie.h), and -u's first of each key. */
#ifndef CLSORT_REFINE_H
#define CLSORT_REFINE_H

#include <stddef.h>

#include "encode.h"

/* -u: keep the first of each stretch of equal keys among count sorted
 * words of the run b, moving them to the front; returns how many are
 * kept.  same: which words' keys equal the word's before, as rfn_ties
 * found them, or NULL. */
size_t rfn_unique(const struct enc_format *f, const struct enc_batch *b, void *words,
		  size_t count, const unsigned char *same);

/* String keys, and binary keys longer than their words (bytes:N): order
 * the count sorted words of the run b whose keys tie on the word by their
 * whole keys (str_refine, tie_refine).  For string keys, same (count
 * bytes), when not NULL, is then set for rfn_unique as str_refine sets it.
 * 0 or CLS_E_FAIL. */
int rfn_ties(const struct enc_format *f, const struct enc_batch *b, void *words, size_t count,
	     unsigned char *same);

#endif
