#include "config.h"
#include "bytekey.h"

#include <stdlib.h>
#include <string.h>

/* The first k (1 to 8) bytes at p as a big-endian number of width bytes
 * (4 or 8), the bytes past k zero: no byte past the key is read. */
static inline uint64_t prefix(const unsigned char *p, unsigned k, unsigned width)
{
	uint64_t v = 0;
	memcpy(&v, p, k);
	return width == 4 ? __builtin_bswap32((uint32_t)v) : __builtin_bswap64(v);
}

/* key_load reads the key's first min(N, width) bytes little-endian: its
 * word is their byte reversal. */
static uint64_t s_bytes4(uint64_t raw) { return __builtin_bswap32((uint32_t)raw); }
static uint64_t s_bytes8(uint64_t raw) { return __builtin_bswap64(raw); }

/* One encoder per prefix length, so that the load is inlined; the words
 * are laid out as the numeric types' (keys.h). */
#define DEFINE_ENCODE(K, WIDTH)                                                              \
	static void e_bytes##K(const unsigned char *src, size_t stride, size_t n, uint64_t mask,  \
			       void *dst, bool indexed, uint32_t first)                           \
	{                                                                                        \
		size_t i;                                                                        \
		if (WIDTH == 4 && !indexed) {                                                    \
			uint32_t *w = dst;                                                       \
			for (i = 0; i < n; i++)                                                  \
				w[i] = (uint32_t)(prefix(src + i * stride, K, 4) ^ mask);        \
		} else if (WIDTH == 4) {                                                         \
			uint64_t *w = dst;                                                       \
			for (i = 0; i < n; i++)                                                  \
				w[i] = ((prefix(src + i * stride, K, 4) ^ mask) << 32) |         \
				       (uint32_t)(first + i);                                    \
		} else if (!indexed) {                                                           \
			uint64_t *w = dst;                                                       \
			for (i = 0; i < n; i++)                                                  \
				w[i] = prefix(src + i * stride, K, 8) ^ mask;                    \
		} else {                                                                         \
			struct word128 *w = dst;                                                 \
			for (i = 0; i < n; i++) {                                                \
				w[i].hi = prefix(src + i * stride, K, 8) ^ mask;                 \
				w[i].lo = (uint32_t)(first + i);                                 \
			}                                                                        \
		}                                                                                \
	}
DEFINE_ENCODE(1, 4)
DEFINE_ENCODE(2, 4)
DEFINE_ENCODE(3, 4)
DEFINE_ENCODE(4, 4)
DEFINE_ENCODE(5, 8)
DEFINE_ENCODE(6, 8)
DEFINE_ENCODE(7, 8)
DEFINE_ENCODE(8, 8)

static void (*const encoders[8])(const unsigned char *, size_t, size_t, uint64_t, void *, bool,
				 uint32_t) = {
	e_bytes1, e_bytes2, e_bytes3, e_bytes4, e_bytes5, e_bytes6, e_bytes7, e_bytes8,
};

const struct key_type *bytes_key_type(const char *spec)
{
	static struct key_type types[BYTES_MAX];
	static char names[BYTES_MAX][12];
	struct key_type *kt;
	char *end;
	unsigned long n;

	if (*spec < '1' || *spec > '9')
		return NULL;
	n = strtoul(spec, &end, 10);
	if (*end || n < 1 || n > BYTES_MAX)
		return NULL;
	kt = &types[n - 1];
	if (!kt->name) {
		const unsigned k = n < 8 ? (unsigned)n : 8;
		memcpy(names[n - 1], "bytes:", 6);
		memcpy(names[n - 1] + 6, spec, strlen(spec) + 1);
		/* Always indexed (not invertible): the records are gathered by
		 * the index, and longer keys' ties are refined by it. */
		kt->width = k <= 4 ? 4 : 8;
		kt->invertible = false;
		kt->sortable = kt->width == 4 ? s_bytes4 : s_bytes8;
		kt->encode = encoders[k - 1];
		kt->size = (unsigned)n;
		kt->name = names[n - 1];
	}
	return kt;
}
