/* Keys of text lines: the key field of a line (sort's -k N,N), read as a
 * number or taken as a byte string, and several keys (-K) composed into
 * one byte string whose memcmp order is the keys' order, so that every
 * string-key path (sort words, rounds of ties, -u, merges) sorts by all of
 * them at once.
 *
 * A composed key is each key in turn: a number as its sortable value,
 * big-endian, in the type's width (a number of sort -n, cls_key's exact,
 * its double's, then what orders it among the numbers of that double,
 * deckey.h's dec_put); a string with each NUL byte written as
 * NUL 0x01 and ended by NUL NUL, so that a key that begins another ends
 * below it whatever follows (the last key, when ascending, is its bytes as
 * they are).  A descending key has every byte of its part inverted. */
#ifndef CLSORT_KVKEY_H
#define CLSORT_KVKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* Whether f's composed keys fit their sort word (strkey.h) wherever each
 * number of sort -n is its double's (up to 15 significant digits, or an
 * integer below 2^53): keys of numbers and months alone, their bytes
 * STR_PREFIX at most.  Their words then order most runs of them wholly
 * (str_words_whole). */
bool kvk_fits_word(const struct enc_format *f);

/* Whether a line's key may be read by kvk_digits_key: kv lines whose key
 * is a number whose type reads plain digits (key_type.dec_max), the first
 * field, split at a separator that is neither a digit nor the line end. */
bool kvk_digits_ok(const struct enc_format *f);

/* Decimal digits kvk_digits_key reads at most: 10^19 - 1 fits 64 bits. */
#define KVK_DIGITS 19

#ifdef __SSE2__
/* The number eight decimal digits make, one a byte (0-9), the first in
 * the lowest: pairs, then fours, then the eight, each step one multiply. */
static inline uint64_t kvk_eight_digits(uint64_t v)
{
	v = v * 10 + (v >> 8);
	return (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
		(((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
}

/* 10^k for k < 8. */
static const uint32_t kvk_pow10[8] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000 };
#endif

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

#ifdef __SSE2__
	/* Up to 15 digits from one load of 16 bytes: where they end, from
	 * the bytes that are not digits, and their value a word of eight at
	 * a time, with no branch on each digit. */
	if (end - line >= 16) {
		const __m128i t =
			_mm_sub_epi8(_mm_loadu_si128((const __m128i *)line), _mm_set1_epi8('0'));
		const unsigned digit = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t));
		const unsigned n = (unsigned)__builtin_ctz(~digit);
		const uint64_t lo = (uint64_t)_mm_cvtsi128_si64(t);

		if (n - 1 < 15) {
			if (n <= 8) {
				v = kvk_eight_digits(lo << (8 * (8 - n)));
			} else {
				const uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(t, t));
				v = kvk_eight_digits(lo) * kvk_pow10[n - 8] +
				    kvk_eight_digits(hi << (8 * (16 - n)));
			}
			q = line + n;
			if (*q != f->sep || v > f->kt->dec_max)
				return false;
			*key = f->kt->sortable(v) ^ f->mask;
			*sep = q;
			return true;
		}
		if (n == 0)
			return false;
	}
#endif
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

/* The end of the line p is in (its first eol at or past p, before end),
 * or NULL: kv lines are short, and a call to memchr for each cost more
 * than the look. */
static inline const char *kvk_line_end(const char *p, const char *end, char eol)
{
#ifdef __SSE2__
	const __m128i e = _mm_set1_epi8(eol);
	int k;

	for (k = 0; k < 4 && end - p >= 16; k++, p += 16) {
		const unsigned m =
			(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), e));
		if (m)
			return p + __builtin_ctz(m);
	}
#endif
	return memchr(p, eol, (size_t)(end - p));
}

/* The line that starts at *p, in a text that ends at end: its start, and
 * its bytes without the line end in *len (a last line without one runs
 * to end); *p moves past its line end. */
static inline const char *kvk_next_line(const char **p, const char *end, char eol, size_t *len)
{
	const char *const line = *p, *nl = kvk_line_end(line, end, eol);

	*len = nl ? (size_t)(nl - line) : (size_t)(end - line);
	*p = nl ? nl + 1 : end;
	return line;
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
