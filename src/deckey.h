/* Numbers as sort -n reads and compares them: leading blanks, an optional
 * minus, digits and at most one decimal point, compared exactly whatever
 * their length (sort -n compares the digits, not a float: two 19-digit
 * timestamps that a double cannot tell apart are still ordered).  A key
 * with no digit there is 0, as in sort, and so is -0. */
#ifndef CLSORT_DECKEY_H
#define CLSORT_DECKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keysink.h"

/* A number read: its integer digits past their leading zeros, its
 * fraction's digits short of their trailing zeros. */
struct dec {
	int sign;		/* -1, 0 or 1 */
	const char *ip, *fp;	/* integer and fraction digits */
	size_t il, fl;
	size_t end;		/* bytes of the key the number took, its blanks
				 * included; 0 where it has no digit */
};

/* The number at the start of s[0..n), its blanks (a space, a tab, or a
 * newline, which only -z's lines hold) skipped. */
void dec_read(const char *s, size_t n, struct dec *d);

/* The double nearest to d (+0 for zero), never less for a greater
 * number, so that its sort word orders as the number but for ties; *rel
 * where d lies against it: -1 below, 0 equal, 1 above. */
double dec_double(const struct dec *d, int *rel);

/* What orders d among the numbers of the same double (dec_double, rel),
 * as bytes, each xored with inv: such byte strings compare as the
 * numbers do, and none is the start of another, so that a key may
 * follow. */
void dec_put(struct key_sink *s, const struct dec *d, int rel, unsigned char inv);

/* sort -n's comparison of a and b: below, at or above 0. */
int dec_cmp(const struct dec *a, const struct dec *b);

#endif
