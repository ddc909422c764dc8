/* Keys of text lines: the key field of a line (sort's -k N,N), read as a
 * number or taken as a byte string, and several keys (-K) composed into
 * one byte string whose memcmp order is the keys' order, so that every
 * string-key path (sort words, rounds of ties, -u, merges) sorts by all of
 * them at once.
 *
 * A composed key is each key in turn: a number as its sortable value,
 * big-endian, in the type's width; a string with each NUL byte written as
 * NUL 0x01 and ended by NUL NUL, so that a key that begins another ends
 * below it whatever follows (the last key, when ascending, is its bytes as
 * they are).  A descending key has every byte of its part inverted. */
#ifndef CLSORT_KVKEY_H
#define CLSORT_KVKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"

/* Why a line has no key, beside enum key_parse: fewer fields than the
 * key's. */
enum { KV_NOFIELD = -10 };

/* The sortable key of a line (mask applied): KEY_OK, or KEY_BAD /
 * KEY_RANGE / KV_NOFIELD.  *kp, *kplen: the key's bytes: the field of a
 * single key, or the composed key of several, of which only the first cap
 * bytes are written to buf (*kplen may be larger: then call again with
 * room for *kplen).  key may be NULL for string keys, whose bytes alone
 * are then found (a whole line's are not read). */
int kvk_key(const struct enc_format *f, const char *line, size_t len, uint64_t *key,
	    const char **kp, size_t *kplen, unsigned char *buf, size_t cap);

/* Whether a line's key may be read by kvk_digits_key: kv lines whose key
 * is a number whose type reads plain digits (key_type.dec_max), the first
 * field, split at a separator that is neither a digit nor the line end. */
bool kvk_digits_ok(const struct enc_format *f);

/* Decimal digits kvk_digits_key reads at most: 10^19 - 1 fits 64 bits. */
#define KVK_DIGITS 19

/* The key of the line at line, read no further than end, where it is
 * one to KVK_DIGITS decimal digits ended by the separator, as most kv
 * lines' ("123:value") are, and in its type's range: true, with *key as
 * kvk_key would set it and *sep at the separator; false where the line
 * needs kvk_key.  Only where kvk_digits_ok(f). */
static inline bool kvk_digits_key(const struct enc_format *f, const char *line, const char *end,
				  uint64_t *key, const char **sep)
{
	const char *const stop = end - line > KVK_DIGITS ? line + KVK_DIGITS : end;
	const char *q = line;
	uint64_t v = 0;
	unsigned d;

	while (q < stop && (d = (unsigned char)*q - '0') <= 9) {
		v = v * 10 + d;
		q++;
	}
	if (q == line || q == end || *q != f->sep || v > f->kt->dec_max)
		return false;
	*key = f->kt->sortable(v) ^ f->mask;
	*sep = q;
	return true;
}

/* Order of two lines whose keys parse, by all the keys of f (several
 * keys): negative, 0 or positive, the order of their composed keys. */
int kvk_cmp(const struct enc_format *f, const char *a, size_t alen, const char *b, size_t blen);

/* One-line message for a line without a key (why from kvk_key), naming
 * the file and the line and showing the bad key printable and short: an
 * error, or (skipped) a -v note that --skip-bad dropped it. */
void kvk_report(const struct enc_format *f, const char *name, uint64_t line_no, const char *line,
		size_t len, int why, bool skipped);

#endif
