#include "config.h"
#include "radix_bucket.h"

#include <stdbool.h>
#include <string.h>

/* A bucket's digits: at most DIGIT_BITS wide, at least LOCAL_MIN_BITS. */
#define LOCAL_MIN_BITS 4

/* Whether words a and b have the same bits from bit s up. */
static inline bool same_above32(uint32_t a, uint32_t b, unsigned s)
{
	return (a ^ b) >> s == 0;
}

static inline bool same_above64(uint64_t a, uint64_t b, unsigned s)
{
	return (a ^ b) >> s == 0;
}

static inline bool same_above128(struct word128 a, struct word128 b, unsigned s)
{
	if (s >= 64)
		return (a.hi ^ b.hi) >> (s - 64) == 0;
	return a.hi == b.hi && (a.lo ^ b.lo) >> s == 0;
}

/* Whether a's bits from bit s up are below b's (the bits under s take no
 * part in the order of a sort above them, which keeps their words in
 * order). */
static inline bool less_above32(uint32_t a, uint32_t b, unsigned s)
{
	return s < 32 && a >> s < b >> s;
}

static inline bool less_above64(uint64_t a, uint64_t b, unsigned s)
{
	return s < 64 && a >> s < b >> s;
}

static inline bool less_above128(struct word128 a, struct word128 b, unsigned s)
{
	if (s >= 64)
		return s < 128 && a.hi >> (s - 64) < b.hi >> (s - 64);
	return a.hi < b.hi || (a.hi == b.hi && a.lo >> s < b.lo >> s);
}

#define DIGIT(w, b, mask) ((uint32_t)((w) >> (b)) & (mask))
#define DIGIT128(w, b, mask) digit128(&(w), b, mask)

/* sort_bucket_32, _64 and _128: sort words[0..m) by bits [low, low +
 * bits), stably, with room for m words and counts for two digits; the
 * result ends in words.
 *
 * Two LSD passes on the highest bits first, digits narrower than the
 * first pass's where the bucket is small, so that a pass's counts do not
 * cost more than its words.  Where the bits take more than two digits,
 * the words are then in order but for runs that agree on those two (few,
 * and short, unless the keys are skewed): each run is sorted the same way
 * by the bits below. */
#define DEFINE_SORT_BUCKET(SUFFIX, T, LESS_ABOVE, DIGIT_, SAME_ABOVE)                   \
	static void insertion_##SUFFIX(T *a, size_t m, unsigned low)                    \
	{                                                                               \
		size_t i, k;                                                            \
		for (i = 1; i < m; i++) {                                               \
			const T x = a[i];                                               \
			for (k = i; k > 0 && LESS_ABOVE(x, a[k - 1], low); k--)         \
				a[k] = a[k - 1];                                        \
			a[k] = x;                                                       \
		}                                                                       \
	}                                                                               \
                                                                                        \
	static void sort_bucket_##SUFFIX(uint32_t (*count)[RADIX], T *words, T *room,   \
					 size_t m, unsigned low, unsigned bits)         \
	{                                                                               \
		T *src = words, *dst = room;                                            \
		unsigned width = DIGIT_BITS, ndig, base, d;                             \
		size_t i, v, k;                                                         \
		uint32_t at, mask;                                                      \
                                                                                        \
		if (m < SMALL) {                                                        \
			insertion_##SUFFIX(words, m, low);                              \
			return;                                                         \
		}                                                                       \
		if (bits == 0)                                                          \
			return;                                                         \
		while (width > LOCAL_MIN_BITS && ((size_t)4 << width) > m)              \
			width--;                                                        \
		ndig = (bits + width - 1) / width;                                      \
		if (ndig <= 2)                                                          \
			width = (bits + ndig - 1) / ndig;                               \
		else                                                                    \
			ndig = 2;                                                       \
		base = bits > ndig * width ? low + bits - ndig * width : low;           \
		mask = ((uint32_t)1 << width) - 1;                                      \
		for (d = 0; d < ndig; d++)                                              \
			memset(count[d], 0, (mask + 1) * sizeof count[0][0]);           \
		for (i = 0; i < m; i++) {                                               \
			const T w = words[i];                                           \
			count[0][DIGIT_(w, base, mask)]++;                              \
			if (ndig > 1)                                                   \
				count[1][DIGIT_(w, base + width, mask)]++;              \
		}                                                                       \
		for (d = 0; d < ndig; d++) {                                            \
			uint32_t *const c = count[d];                                   \
			const unsigned b = base + d * width;                            \
			for (v = 0; v <= mask && !c[v]; v++)                            \
				;                                                       \
			if (c[v] == m) /* one value: the pass would change nothing */   \
				continue;                                               \
			for (v = 0, at = 0; v <= mask; v++) {                           \
				const uint32_t n_ = c[v];                               \
				c[v] = at;                                              \
				at += n_;                                               \
			}                                                               \
			for (i = 0; i < m; i++) {                                       \
				const T w = src[i];                                     \
				dst[c[DIGIT_(w, b, mask)]++] = w;                       \
			}                                                               \
			T *const t_ = src;                                              \
			src = dst;                                                      \
			dst = t_;                                                       \
		}                                                                       \
		if (src != words)                                                       \
			memcpy(words, src, m * sizeof(T));                              \
		if (base == low)                                                        \
			return;                                                         \
		for (i = 0; i < m; i = k) {                                             \
			for (k = i + 1; k < m && SAME_ABOVE(words[i], words[k], base); k++) \
				;                                                       \
			if (k - i > 1)                                                  \
				sort_bucket_##SUFFIX(count, words + i, room, k - i, low,    \
						     base - low);                       \
		}                                                                       \
	}

DEFINE_SORT_BUCKET(32, uint32_t, less_above32, DIGIT, same_above32)
DEFINE_SORT_BUCKET(64, uint64_t, less_above64, DIGIT, same_above64)
DEFINE_SORT_BUCKET(128, struct word128, less_above128, DIGIT128, same_above128)

void rb_insertion(void *words, size_t n, enum word_kind kind, unsigned low)
{
	switch (kind) {
	case WORD32:
		insertion_32(words, n, low);
		break;
	case WORD64:
		insertion_64(words, n, low);
		break;
	case WORD128:
		insertion_128(words, n, low);
		break;
	}
}

void rb_sort(enum word_kind kind, uint32_t (*count)[RADIX], void *words, void *room, size_t m,
	     unsigned low, unsigned bits)
{
	switch (kind) {
	case WORD32:
		sort_bucket_32(count, words, room, m, low, bits);
		break;
	case WORD64:
		sort_bucket_64(count, words, room, m, low, bits);
		break;
	case WORD128:
		sort_bucket_128(count, words, room, m, low, bits);
		break;
	}
}
