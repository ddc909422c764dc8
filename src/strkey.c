#include "config.h"
#include "strkey.h"

#include <string.h>

void str_word(const unsigned char *key, size_t len, uint64_t mask, uint32_t index,
	      struct word128 *w)
{
	unsigned char b[STR_PREFIX] = { 0 };
	uint64_t hi = 0, ext = 0;
	size_t i;

	memcpy(b, key, len < STR_PREFIX ? len : STR_PREFIX);
	for (i = 0; i < 8; i++)
		hi = hi << 8 | b[i];
	for (; i < STR_PREFIX; i++)
		ext = ext << 8 | b[i];
	ext = ext << 8 | (len <= STR_PREFIX ? len : STR_LONG);
	w->hi = hi ^ mask;
	w->lo = (ext ^ (uint32_t)mask) << 32 | index;
}

uint64_t str_prefix(const unsigned char *key, size_t len)
{
	uint64_t v = 0;
	size_t i;
	for (i = 0; i < 8; i++)
		v = v << 8 | (i < len ? key[i] : 0);
	return v;
}

int str_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	const int c = memcmp(a, b, alen < blen ? alen : blen);
	if (c)
		return c;
	return (alen > blen) - (alen < blen);
}

bool str_tied(const struct word128 *a, const struct word128 *b, uint64_t mask)
{
	return a->hi == b->hi && a->lo >> 32 == b->lo >> 32 &&
	       ((a->lo >> 32 ^ (uint32_t)mask) & 0xff) == STR_LONG;
}
