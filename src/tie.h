/* Keys longer than a sort word.  Such a key's word carries its first
 * TIE_PREFIX bytes, big-endian so that unsigned order is memcmp order, and
 * the record's index below them (struct word128).  Where words tie on
 * those bytes, the rest of the keys decide, then the index (which keeps
 * the sort stable): this module orders the tied words of a sorted array,
 * and compares two keys whose prefixes are equal, for merges and checks.
 *
 * Keys are byte strings of any length in memcmp order, a key that is a
 * prefix of a longer one first; shorter keys' words are padded with zero
 * bytes.  A module with keys of its own supplies how the key of a record
 * index is found: fixed-size binary keys (-k bytes:N) do.  String keys
 * (strkey.h) are ordered the same way, though their words carry 11 bytes,
 * the length and a 32-bit index, and str_refine (strtie.h) orders their
 * ties. */
#ifndef CLSORT_TIE_H
#define CLSORT_TIE_H

#include <stdbool.h>
#include <stddef.h>

#include "keys.h"

/* Key bytes a word carries. */
#define TIE_PREFIX 8

struct tie_key {
	/* The whole key of record idx: its bytes at *p, its length returned. */
	size_t (*key)(const void *ctx, size_t idx, const unsigned char **p);
	const void *ctx;
	bool descending;	/* keys in reverse memcmp order (indexes still ascending) */
};

/* Order of keys a[0..alen) and b[0..blen) whose first TIE_PREFIX bytes (as
 * padded in a word) are equal: negative, 0 or positive, reversed when
 * descending. */
int tie_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
	    bool descending);

/* Order each group of tied words of the sorted words[0..n) by k, in place. */
void tie_refine(struct word128 *words, size_t n, const struct tie_key *k);

/* Words of a sorted array that go out in order, tied words put in order
 * first.  Each push may end with tied words that the next push continues:
 * those are held back until a word that differs comes, or the flush. */
typedef int (*tie_emit)(void *ctx, const struct word128 *words, size_t n);

struct tie_stream {
	struct word128 *held;	/* the tied words held back */
	size_t n, cap;
};

/* Emit words[0..n), the next of a sorted array, through emit, with every
 * group of tied words ordered by k; 0, CLS_E_FAIL after a message when out
 * of memory, or what emit returned. */
int tie_push(struct tie_stream *s, const struct tie_key *k, const struct word128 *words, size_t n,
	     tie_emit emit, void *ctx);
/* The array is complete: emit what is held back.  Same returns. */
int tie_flush(struct tie_stream *s, const struct tie_key *k, tie_emit emit, void *ctx);
void tie_free(struct tie_stream *s);

#endif
