/* Key types: how a key is read from bytes or text and mapped to an unsigned
 * "sortable" integer whose unsigned order is the key order.  Adding a key
 * type means adding one entry to the table in keys.c. */
#ifndef CLSORT_KEYS_H
#define CLSORT_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What a sort word holds: the key alone, or the key with the record index
 * below it (ties broken by input order, and the record found again). */
enum word_kind { WORD32, WORD64, WORD128 };

/* A 128-bit word: key above, record index below. */
struct word128 {
	uint64_t lo;
	uint64_t hi;
};

enum key_parse { KEY_OK = 0, KEY_BAD = -1, KEY_RANGE = -2 };

struct key_type {
	const char *name;
	unsigned width;		/* bytes: 4 or 8 */
	/* sortable() is a bijection, so bare keys can be sorted without an
	 * index and turned back into bytes; false for floats, whose NaNs all
	 * sort as one value.  An invertible type's sortable form is its bits
	 * but for an exclusive or (with sortable(0)), which keyahead.c and
	 * packed records (encode.c) rely on. */
	bool invertible;
	uint64_t (*sortable)(uint64_t raw);
	uint64_t (*raw)(uint64_t sortable);	/* only when invertible */
	/* Parse text s[0..len) as this type; KEY_OK and *raw set, or
	 * KEY_BAD / KEY_RANGE. */
	int (*parse)(const char *s, size_t len, uint64_t *raw);
	/* Keys at src + i*stride (little-endian) for i < n: bare sortable keys
	 * (words of width bytes), or indexed words (key, first_index + i).
	 * mask is xored into the sortable key (all ones of the width for a
	 * descending sort). */
	void (*encode)(const unsigned char *src, size_t stride, size_t n, uint64_t mask,
		       void *dst, bool indexed, uint32_t first_index);
	/* Inverse of a bare encode (invertible types only). */
	void (*decode)(const void *words, size_t n, uint64_t mask, unsigned char *dst);
	/* Bytes of the key in a record where that is not width: byte-string
	 * keys (bytekey.h), whose word holds their first width bytes.  No
	 * parse: they are binary only. */
	unsigned size;
	/* The largest value parse takes from plain decimal digits, without
	 * a sign, as the digits' own value (kvk_digits_key); 0 where parse
	 * reads more than plain digits. */
	uint64_t dec_max;
	/* parse, but of the number at the start of s, as sort -g reads it:
	 * its leading blanks skipped, what follows it ignored, -0 read as 0
	 * (which sort finds equal); KEY_BAD where s does not start with one.
	 * NULL but for the float types. */
	int (*parse_lead)(const char *s, size_t len, uint64_t *raw);
};

extern const struct key_type key_types[];

/* Whether byte c may be part of a number strtod reads: a digit, a letter
 * (an exponent, a hexadecimal digit, inf, nan), a point or a sign. */
bool key_float_byte(unsigned char c);

/* The type named name, or NULL. */
const struct key_type *key_type_find(const char *name);

/* Word kind for this type, bare or indexed. */
enum word_kind key_word_kind(const struct key_type *kt, bool indexed);
size_t word_size(enum word_kind kind);

/* All ones in the key's width: the xor mask of a descending sort. */
uint64_t key_mask(const struct key_type *kt);

/* Read a little-endian key of the type's width at p (of a byte-string
 * key, its first bytes, at most its size). */
uint64_t key_load(const struct key_type *kt, const unsigned char *p);

/* Host byte order is little-endian on every platform clsort targets; the
 * loads go through memcpy so unaligned records are fine. */
static inline uint64_t le_load32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t le_load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Bytes of the key in a record. */
size_t key_size(const struct key_type *kt);

#endif
