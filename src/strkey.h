/* String keys (-k str): byte strings compared as memcmp does, a shorter
 * key before a longer one it begins, as sort(1) compares in the C locale.
 *
 * A key of any length becomes a 128-bit sort word: the first 11 bytes,
 * zero-padded, big-endian in the upper 88 bits, then one byte that is the
 * key's length up to 11 and STR_LONG for longer keys, then the record
 * index in the low 32 bits.  Ordered as unsigned numbers, these words put
 * every key of up to 11 bytes in its place (its padding sorts it below any
 * key it begins, its length below a key that only adds NULs); only long
 * keys that share their first 11 bytes tie, and str_refine orders those
 * groups on the host by the rest of the key. */
#ifndef CLSORT_STRKEY_H
#define CLSORT_STRKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"

/* Bytes of a key that its sort word holds. */
#define STR_PREFIX 11
/* Length byte of a key longer than STR_PREFIX. */
#define STR_LONG 12

/* The sort word of key[0..len) for the record index; mask (all ones for a
 * descending sort, else 0) is xored into the key bits. */
void str_word(const unsigned char *key, size_t len, uint64_t mask, uint32_t index,
	      struct word128 *w);

/* The key's first 8 bytes, zero-padded, big-endian: a number whose order
 * never contradicts the keys' (the cursor key of merges and checks). */
uint64_t str_prefix(const unsigned char *key, size_t len);

/* memcmp order of two keys, the shorter first where one begins the
 * other: negative, 0 or positive. */
int str_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen);

/* Whether two words' keys may still differ though the words tie but for
 * the index: both keys long, the same first STR_PREFIX bytes. */
bool str_tied(const struct word128 *a, const struct word128 *b, uint64_t mask);

/* How str_refine finds keys: key finds the key of the record with index
 * i; ahead, where not NULL, asks for the memory key will read for record
 * i: near false, what it reads first (a table's entry), near true, what
 * it reads next (a line, found through that entry). */
struct str_keys {
	void (*key)(const void *ctx, size_t i, const unsigned char **key, size_t *len);
	void (*ahead)(const void *ctx, size_t i, bool near);
	const void *ctx;
};

/* Order sorted words whose keys tie on the word (str_tied) by their whole
 * keys, the index breaking ties (descending keys when mask is all ones),
 * on up to threads threads.  same, when not NULL, is then set for -u:
 * same[i] (i >= 1) tells whether word i's key equals word i-1's, found
 * with the keys the rounds looked up.  0, or CLS_E_FAIL after a message
 * when out of memory. */
int str_refine(struct word128 *w, size_t n, uint64_t mask, const struct str_keys *keys,
	       unsigned threads, unsigned char *same);

#endif
