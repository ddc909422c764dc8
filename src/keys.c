#include "config.h"
#include "keys.h"
#include "bytekey.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Sortable maps.  Signed: flip the sign bit.  Float: negative values have
 * all bits inverted, positive ones the sign bit set, so -0.0 sorts just
 * before +0.0 and infinities at the ends; every NaN becomes the largest
 * value, so NaNs sort last, in input order among themselves. */
static inline uint64_t s_u32(uint64_t r) { return r; }
static inline uint64_t s_i32(uint64_t r) { return r ^ 0x80000000u; }
static inline uint64_t s_u64(uint64_t r) { return r; }
static inline uint64_t s_i64(uint64_t r) { return r ^ 0x8000000000000000u; }

static inline uint64_t s_f32(uint64_t r)
{
	if ((r & 0x7fffffffu) > 0x7f800000u)
		return 0xffffffffu;
	return (r & 0x80000000u) ? (~r & 0xffffffffu) : (r | 0x80000000u);
}

static inline uint64_t s_f64(uint64_t r)
{
	if ((r & 0x7fffffffffffffffu) > 0x7ff0000000000000u)
		return ~(uint64_t)0;
	return (r >> 63) ? ~r : (r | 0x8000000000000000u);
}

static uint64_t f_u32(uint64_t r) { return s_u32(r); }
static uint64_t f_i32(uint64_t r) { return s_i32(r); }
static uint64_t f_u64(uint64_t r) { return s_u64(r); }
static uint64_t f_i64(uint64_t r) { return s_i64(r); }
static uint64_t f_f32(uint64_t r) { return s_f32(r); }
static uint64_t f_f64(uint64_t r) { return s_f64(r); }

/* Decimal integer parse: digits only, after an optional sign where
 * allowed.  Returns the magnitude; neg set for '-'. */
static int parse_decimal(const char *s, size_t len, bool sign_ok, uint64_t limit_pos,
			 uint64_t limit_neg, uint64_t *mag, bool *neg)
{
	size_t i = 0;
	uint64_t v = 0;

	*neg = false;
	if (sign_ok && len && (s[0] == '-' || s[0] == '+')) {
		*neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return KEY_BAD;
	for (; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return KEY_BAD;
		if (v > (UINT64_MAX - d) / 10) {
			/* Keep scanning: a non-digit later makes it BAD, not RANGE. */
			for (i++; i < len; i++)
				if ((unsigned)((unsigned char)s[i] - '0') > 9)
					return KEY_BAD;
			return KEY_RANGE;
		}
		v = v * 10 + d;
	}
	if (v > (*neg ? limit_neg : limit_pos))
		return KEY_RANGE;
	*mag = v;
	return KEY_OK;
}

static int p_u32(const char *s, size_t len, uint64_t *raw)
{
	bool neg;
	return parse_decimal(s, len, false, UINT32_MAX, 0, raw, &neg);
}

static int p_u64(const char *s, size_t len, uint64_t *raw)
{
	bool neg;
	return parse_decimal(s, len, false, UINT64_MAX, 0, raw, &neg);
}

static int p_i32(const char *s, size_t len, uint64_t *raw)
{
	uint64_t m;
	bool neg;
	int rc = parse_decimal(s, len, true, INT32_MAX, (uint64_t)INT32_MAX + 1, &m, &neg);
	if (rc == KEY_OK)
		*raw = (uint32_t)(neg ? -(uint32_t)m : (uint32_t)m);
	return rc;
}

static int p_i64(const char *s, size_t len, uint64_t *raw)
{
	uint64_t m;
	bool neg;
	int rc = parse_decimal(s, len, true, INT64_MAX, (uint64_t)INT64_MAX + 1, &m, &neg);
	if (rc == KEY_OK)
		*raw = neg ? -m : m;
	return rc;
}

bool key_float_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '.' ||
	       c == '+' || c == '-';
}

/* strtod wants a terminated string: copy the key, on the stack when short.
 * The program never calls setlocale(), so strtod reads the C locale.
 * lead: the number at the key's start (parse_lead), else the whole key;
 * only the bytes that may be part of it are copied, so that the rest of
 * a long field is not, and a zero is +0. */
static int parse_float(const char *s, size_t len, bool single, bool lead, uint64_t *raw)
{
	char small[128], *buf = small, *end;
	int rc = KEY_OK;

	if (lead) {
		size_t n = 0;
		while (len && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		while (n < len && key_float_byte((unsigned char)s[n]))
			n++;
		len = n;
	}
	if (len == 0 || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ||
	    s[0] == '\v' || s[0] == '\f' || memchr(s, '\0', len))
		return KEY_BAD;
	if (len >= sizeof small && !(buf = malloc(len + 1)))
		return KEY_BAD;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	/* sort -n and -g find -0 equal to 0: as they read it, it is 0. */
	if (single) {
		float f = strtof(buf, &end);
		uint32_t b;
		if (lead && f == 0)
			f = 0;
		memcpy(&b, &f, 4);
		*raw = b;
		if (errno == ERANGE && isinf(f))
			rc = KEY_RANGE;
	} else {
		double d = strtod(buf, &end);
		if (lead && d == 0)
			d = 0;
		memcpy(raw, &d, 8);
		if (errno == ERANGE && isinf(d))
			rc = KEY_RANGE;
	}
	if (lead ? end == buf : end != buf + len)
		rc = KEY_BAD;
	if (buf != small)
		free(buf);
	return rc;
}

static int p_f32(const char *s, size_t len, uint64_t *raw)
{
	return parse_float(s, len, true, false, raw);
}

static int p_f64(const char *s, size_t len, uint64_t *raw)
{
	return parse_float(s, len, false, false, raw);
}

static int l_f32(const char *s, size_t len, uint64_t *raw)
{
	return parse_float(s, len, true, true, raw);
}

static int l_f64(const char *s, size_t len, uint64_t *raw)
{
	return parse_float(s, len, false, true, raw);
}

static uint64_t r_u32(uint64_t s) { return s; }
static uint64_t r_i32(uint64_t s) { return s ^ 0x80000000u; }
static uint64_t r_u64(uint64_t s) { return s; }
static uint64_t r_i64(uint64_t s) { return s ^ 0x8000000000000000u; }

/* dst[0..n words of TW) = src ^ k: a bare integer key's map and its inverse
 * are an exclusive or with a constant.  Large runs of words go where this
 * core does not read them again (staging memory the device reads, the
 * output's pages), so where the CPU has streaming stores they bypass the
 * cache: no line is read before being overwritten, a third less memory
 * traffic (on the 16 cores of an H200 machine, 60 GB/s against 39 GB/s for
 * memcpy).  Small ones (a block the caller reads next, as the cut into key
 * ranges does) stay in the cache. */
#define XOR_STREAM_MIN ((size_t)64 << 10)
#define DEFINE_XOR(TW)                                                                   \
	static void xor_##TW(const unsigned char *src, void *dst, size_t n, TW k)        \
	{                                                                                \
		unsigned char *w = dst;                                                  \
		size_t i = 0;                                                            \
		if (k == 0 && w == src)                                                  \
			return; /* keys encoded where they lie, as they are */          \
		XOR_STREAM(TW)                                                           \
		XOR_VECTOR(TW)                                                           \
		for (; i < n; i++)                                                       \
			XOR_ONE(TW)                                                      \
	}
/* One word, at any alignment. */
#define XOR_ONE(TW)                                                                      \
	{                                                                                \
		TW v;                                                                    \
		memcpy(&v, src + i * sizeof v, sizeof v);                                \
		v ^= k;                                                                  \
		memcpy(w + i * sizeof v, &v, sizeof v);                                  \
	}
#if defined(__SSE2__)
/* Words up to a 16-byte boundary of dst, then 64 bytes at a time. */
#define XOR_STREAM(TW)                                                                   \
	if (n * sizeof(TW) >= XOR_STREAM_MIN) {                                          \
		const __m128i kk = sizeof(TW) == 4 ? _mm_set1_epi32((int)k)              \
						   : _mm_set1_epi64x((long long)k);      \
		for (; i < n && ((uintptr_t)(w + i * sizeof(TW)) & 15); i++)             \
			XOR_ONE(TW)                                                      \
		for (; (n - i) * sizeof(TW) >= 64; i += 64 / sizeof(TW)) {               \
			const __m128i *s = (const __m128i *)(src + i * sizeof(TW));      \
			__m128i *d = (__m128i *)(w + i * sizeof(TW));                    \
			_mm_stream_si128(d, _mm_xor_si128(_mm_loadu_si128(s), kk));      \
			_mm_stream_si128(d + 1, _mm_xor_si128(_mm_loadu_si128(s + 1), kk)); \
			_mm_stream_si128(d + 2, _mm_xor_si128(_mm_loadu_si128(s + 2), kk)); \
			_mm_stream_si128(d + 3, _mm_xor_si128(_mm_loadu_si128(s + 3), kk)); \
		}                                                                        \
		_mm_sfence();                                                            \
	}
/* The rest (all of a small run) 16 bytes at a time, through the cache. */
#define XOR_VECTOR(TW)                                                                   \
	{                                                                                \
		const __m128i kk = sizeof(TW) == 4 ? _mm_set1_epi32((int)k)              \
						   : _mm_set1_epi64x((long long)k);      \
		for (; (n - i) * sizeof(TW) >= 16; i += 16 / sizeof(TW))                 \
			_mm_storeu_si128((__m128i *)(w + i * sizeof(TW)),                \
					 _mm_xor_si128(_mm_loadu_si128(                  \
						(const __m128i *)(src + i * sizeof(TW))), kk)); \
	}
#else
#define XOR_STREAM(TW)
#define XOR_VECTOR(TW)
#endif
DEFINE_XOR(uint32_t)
DEFINE_XOR(uint64_t)

/* Bulk loops, one per type, so the per-key map is inlined.  Bare keys of an
 * integer type (LINEAR) take the exclusive or. */
#define DEFINE_BULK(T, LOAD, TW, LINEAR)                                                  \
	static void e_##T(const unsigned char *src, size_t stride, size_t n, uint64_t mask, \
			  void *dst, bool indexed, uint32_t first)                        \
	{                                                                                 \
		size_t i;                                                                 \
		if (!indexed && LINEAR && stride == sizeof(TW)) {                         \
			xor_##TW(src, dst, n, (TW)(s_##T(0) ^ mask));                     \
		} else if (!indexed) {                                                    \
			TW *w = dst;                                                      \
			for (i = 0; i < n; i++)                                           \
				w[i] = (TW)(s_##T(LOAD(src + i * stride)) ^ mask);        \
		} else if (sizeof(TW) == 4) {                                             \
			uint64_t *w = dst;                                                \
			for (i = 0; i < n; i++)                                           \
				w[i] = ((s_##T(LOAD(src + i * stride)) ^ mask) << 32) |   \
				       (uint32_t)(first + i);                             \
		} else {                                                                  \
			struct word128 *w = dst;                                          \
			for (i = 0; i < n; i++) {                                         \
				w[i].hi = s_##T(LOAD(src + i * stride)) ^ mask;           \
				w[i].lo = (uint32_t)(first + i);                          \
			}                                                                 \
		}                                                                         \
	}
DEFINE_BULK(u32, le_load32, uint32_t, true)
DEFINE_BULK(i32, le_load32, uint32_t, true)
DEFINE_BULK(f32, le_load32, uint32_t, false)
DEFINE_BULK(u64, le_load64, uint64_t, true)
DEFINE_BULK(i64, le_load64, uint64_t, true)
DEFINE_BULK(f64, le_load64, uint64_t, false)

/* The inverse maps of the integer types are exclusive ors too. */
#define DEFINE_DECODE(T, TW)                                                               \
	static void d_##T(const void *words, size_t n, uint64_t mask, unsigned char *dst) \
	{                                                                                  \
		xor_##TW(words, dst, n, (TW)r_##T(mask));                                  \
	}
DEFINE_DECODE(u32, uint32_t)
DEFINE_DECODE(i32, uint32_t)
DEFINE_DECODE(u64, uint64_t)
DEFINE_DECODE(i64, uint64_t)

const struct key_type key_types[] = {
	{ "u32", 4, true, f_u32, r_u32, p_u32, e_u32, d_u32, 0, UINT32_MAX, NULL },
	{ "i32", 4, true, f_i32, r_i32, p_i32, e_i32, d_i32, 0, INT32_MAX, NULL },
	{ "f32", 4, false, f_f32, NULL, p_f32, e_f32, NULL, 0, 0, l_f32 },
	{ "u64", 8, true, f_u64, r_u64, p_u64, e_u64, d_u64, 0, UINT64_MAX, NULL },
	{ "i64", 8, true, f_i64, r_i64, p_i64, e_i64, d_i64, 0, INT64_MAX, NULL },
	{ "f64", 8, false, f_f64, NULL, p_f64, e_f64, NULL, 0, 0, l_f64 },
	{ NULL, 0, false, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL },
};

const struct key_type *key_type_find(const char *name)
{
	const struct key_type *kt;
	if (!strncmp(name, "bytes:", 6))
		return bytes_key_type(name + 6);
	for (kt = key_types; kt->name; kt++)
		if (!strcmp(kt->name, name))
			return kt;
	return NULL;
}

enum word_kind key_word_kind(const struct key_type *kt, bool indexed)
{
	if (kt->width == 4)
		return indexed ? WORD64 : WORD32;
	return indexed ? WORD128 : WORD64;
}

size_t word_size(enum word_kind kind)
{
	return kind == WORD32 ? 4 : kind == WORD64 ? 8 : 16;
}

uint64_t key_mask(const struct key_type *kt)
{
	return kt->width == 4 ? 0xffffffffu : ~(uint64_t)0;
}

uint64_t key_load(const struct key_type *kt, const unsigned char *p)
{
	if (kt->size && kt->size < kt->width) {
		uint64_t v = 0;
		memcpy(&v, p, kt->size);
		return v;
	}
	return kt->width == 4 ? le_load32(p) : le_load64(p);
}

size_t key_size(const struct key_type *kt)
{
	return kt->size ? kt->size : kt->width;
}
