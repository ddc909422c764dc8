/* String keys (-k str): byte strings compared as memcmp does, a shorter
 * key before a longer one it begins, as sort(1) compares in the C locale.
 *
 * A key of any length becomes a 128-bit sort word: the first 11 bytes,
 * zero-padded, big-endian in the upper 88 bits, then one byte that is the
 * key's length up to 11 and STR_LONG for longer keys, then the record
 * index in the low 32 bits.  Ordered as unsigned numbers, these words put
 * every key of up to 11 bytes in its place (its padding sorts it below any
 * key it begins, its length below a key that only adds NULs); only long
 * keys that share their first 11 bytes tie, and str_refine (strtie.h)
 * orders those groups on the host by the rest of the key. */
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

/* Whether none of the n words w holds a key longer than STR_PREFIX bytes
 * (mask as for str_word): their order is then the keys' order wholly,
 * ties between equal keys alone.  Looked at on up to threads threads,
 * ended at the first long key. */
bool str_words_whole(const struct word128 *w, size_t n, uint64_t mask, unsigned threads);

#endif
