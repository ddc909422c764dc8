/* The ties of string keys (strkey.h): the groups of sorted words whose
 * keys share their first STR_PREFIX bytes, ordered on the host by the rest
 * of their keys, in rounds of the next 11 bytes through the host's radix
 * sort, on every thread. */
#ifndef CLSORT_STRTIE_H
#define CLSORT_STRTIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"

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
