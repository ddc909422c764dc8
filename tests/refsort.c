/* refsort: the reference the test suites compare clsort against, and the
 * generator of their data.  Deliberately simple and independent of the
 * clsort sources: keys are compared as typed values (no bit tricks), the
 * sort is a plain stable merge sort over record indices.
 *
 *   refsort gen TYPE N SEED [DIST]
 *       N little-endian keys of TYPE (u32 i32 f32 u64 i64 f64).
 *       DIST: rand (default), few, equal, sorted, reverse, special.
 *   refsort gen-rec N SIZE OFFSET TYPE SEED [DIST]
 *       N records of SIZE bytes, the key at OFFSET, every other byte taken
 *       from the record's input position (little-endian, repeating).
 *   refsort gen-bytes N SIZE OFFSET KLEN SEED [DIST]
 *       N records of SIZE bytes with a KLEN-byte key at OFFSET (for -k
 *       bytes:KLEN), the other bytes as gen-rec makes them.  DIST: rand
 *       (random bytes, default), tied (the first 8 bytes one of three
 *       values, the rest drawn from 00, 01 and ff: ties on the first 8 bytes
 *       and equal keys), few (every byte drawn from 00, 01, 80 and ff),
 *       equal (all keys the same).
 *   refsort gen-kv N SEED [TYPE] [MAXKEY|DIST] [MAXVAL]
 *       N KEY:VALUE lines.  MAXKEY bounds the magnitude of the keys; a DIST
 *       word instead draws them as gen does.  Values are printable text of
 *       0..MAXVAL bytes (default 40) that may contain ':'.
 *   refsort sort [-k TYPE|bytes:N] [-r] [-u] [-R SIZE] [--key-offset OFF] [-f bin|kv]
 *                [-t SEP] [--skip-bad] [-s]
 *       stdin to stdout, stable, in clsort's documented order: NaNs (any
 *       sign or payload) compare equal to each other and above everything
 *       else, -0.0 below +0.0.  -r reverses the order, equal keys still in
 *       input order.  bytes:N keys compare as memcmp does.  -u (bin only)
 *       keeps the first record of each key.  kv lines go out
 *       byte for byte, each with a newline.
 *
 * Exit status: 0, or 2 on a usage error or a bad kv line.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ktype { T_U32, T_I32, T_F32, T_U64, T_I64, T_F64, T_BYTES };

/* The N of bytes:N keys. */
static size_t bytes_len;

static const char *const type_names[] = { "u32", "i32", "f32", "u64", "i64", "f64" };

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "refsort: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static enum ktype parse_type(const char *s)
{
	int i;
	char *end;
	for (i = 0; i < 6; i++)
		if (!strcmp(s, type_names[i]))
			return (enum ktype)i;
	if (!strncmp(s, "bytes:", 6)) {
		bytes_len = strtoul(s + 6, &end, 10);
		if (!*end && bytes_len > 0)
			return T_BYTES;
	}
	die("unknown key type", s);
	return T_U32;
}

/* A key type the generators make: not bytes:N (gen-bytes makes those). */
static enum ktype numeric_type(const char *s)
{
	const enum ktype t = parse_type(s);
	if (t == T_BYTES)
		die("byte-string keys are made by gen-bytes", s);
	return t;
}

static size_t type_width(enum ktype t)
{
	if (t == T_BYTES)
		return bytes_len;
	return (t == T_U32 || t == T_I32 || t == T_F32) ? 4 : 8;
}

static int is_float(enum ktype t)
{
	return t == T_F32 || t == T_F64;
}

static unsigned long long parse_ull(const char *s)
{
	char *end;
	unsigned long long v;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		die("not a number", s);
	return v;
}

/* --- a typed key value ---------------------------------------------------- */

struct key {
	enum ktype t;
	union {
		uint64_t u;
		int64_t i;
		double d;	/* f32 keys are widened: exact, order kept */
		const unsigned char *p;	/* bytes:N: the key's bytes */
	} v;
};

static struct key load_key(enum ktype t, const unsigned char *p)
{
	struct key k;
	uint32_t u32;
	uint64_t u64;
	float f;

	k.t = t;
	switch (t) {
	case T_U32:
		memcpy(&u32, p, 4);
		k.v.u = u32;
		break;
	case T_I32:
		memcpy(&u32, p, 4);
		k.v.i = (int32_t)u32;
		break;
	case T_F32:
		memcpy(&f, p, 4);
		k.v.d = (double)f;
		break;
	case T_U64:
		memcpy(&u64, p, 8);
		k.v.u = u64;
		break;
	case T_I64:
		memcpy(&u64, p, 8);
		k.v.i = (int64_t)u64;
		break;
	case T_F64:
		memcpy(&k.v.d, p, 8);
		break;
	case T_BYTES:
		k.v.p = p;
		break;
	}
	return k;
}

static int cmp_double(double a, double b)
{
	int na = isnan(a), nb = isnan(b);
	if (na || nb)
		return na - nb;	/* NaN above all, NaNs equal */
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	if (a == 0 && b == 0)	/* -0.0 below +0.0 */
		return (signbit(b) ? 1 : 0) - (signbit(a) ? 1 : 0);
	return 0;
}

static int cmp_key(const struct key *a, const struct key *b)
{
	switch (a->t) {
	case T_U32:
	case T_U64:
		return (a->v.u > b->v.u) - (a->v.u < b->v.u);
	case T_I32:
	case T_I64:
		return (a->v.i > b->v.i) - (a->v.i < b->v.i);
	case T_BYTES: {
		const int c = memcmp(a->v.p, b->v.p, bytes_len);
		return (c > 0) - (c < 0);
	}
	default:
		return cmp_double(a->v.d, b->v.d);
	}
}

/* --- stable merge sort of indices ------------------------------------------ */

static struct key *sort_keys;
static int sort_desc;

static int cmp_idx(size_t a, size_t b)
{
	int c = cmp_key(&sort_keys[a], &sort_keys[b]);
	return sort_desc ? -c : c;
}

/* Sorts idx[0..n) by cmp_idx; on ties the element from the left half
 * goes first, so input order survives. */
static void merge_sort(size_t *idx, size_t *tmp, size_t n)
{
	size_t mid, i, j, k;
	if (n < 2)
		return;
	mid = n / 2;
	merge_sort(idx, tmp, mid);
	merge_sort(idx + mid, tmp, n - mid);
	i = 0;
	j = mid;
	k = 0;
	while (i < mid && j < n)
		tmp[k++] = cmp_idx(idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
	while (i < mid)
		tmp[k++] = idx[i++];
	while (j < n)
		tmp[k++] = idx[j++];
	memcpy(idx, tmp, n * sizeof *idx);
}

static size_t *sorted_order(struct key *keys, size_t n, int desc)
{
	size_t *idx = malloc((n ? n : 1) * sizeof *idx), *tmp = malloc((n ? n : 1) * sizeof *tmp);
	size_t i;
	if (!idx || !tmp)
		die("out of memory", NULL);
	for (i = 0; i < n; i++)
		idx[i] = i;
	sort_keys = keys;
	sort_desc = desc;
	merge_sort(idx, tmp, n);
	free(tmp);
	return idx;
}

/* --- generators ------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)	/* splitmix64 */
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* The raw little-endian bits of one key, in the low width bytes. */
static uint64_t f32_bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

static uint64_t f64_bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, 8);
	return b;
}

static uint64_t from_small(enum ktype t, int v)
{
	switch (t) {
	case T_F32:
		return f32_bits((float)v);
	case T_F64:
		return f64_bits((double)v);
	case T_I32:
		return (uint32_t)(int32_t)v;
	default:
		return (uint64_t)(int64_t)v;
	}
}

/* A random finite value: random sign, exponent and mantissa, denormals and
 * zeros included, never inf or NaN. */
static uint64_t rand_bits(enum ktype t)
{
	uint64_t r = rnd();
	switch (t) {
	case T_U32:
	case T_I32:
		return r & 0xffffffffu;
	case T_F32: {
		uint32_t sign = (uint32_t)(r >> 63) << 31;
		uint32_t exp = (uint32_t)rnd_below(255) << 23;	/* 0..254 */
		uint32_t man = (uint32_t)r & 0x7fffffu;
		return sign | exp | man;
	}
	case T_F64: {
		uint64_t sign = (r >> 63) << 63;
		uint64_t exp = rnd_below(2047) << 52;	/* 0..2046 */
		uint64_t man = r & 0xfffffffffffffu;
		return sign | exp | man;
	}
	default:
		return r;
	}
}

static uint64_t special_bits(enum ktype t)
{
	static const uint64_t f32s[] = {
		0x00000000u, 0x80000000u,	/* +0.0, -0.0 */
		0x7f800000u, 0xff800000u,	/* +inf, -inf */
		0x7fc00000u, 0xffc00000u,	/* quiet NaN, negative NaN */
		0x7f800001u, 0x7fffffffu,	/* signalling NaN, NaN with payload */
		0x00000001u, 0x80000001u,	/* smallest denormals */
		0x007fffffu, 0x807fffffu,	/* largest denormals */
		0x7f7fffffu, 0xff7fffffu,	/* largest finite */
		0x00800000u, 0x3f800000u, 0xbf800000u,	/* smallest normal, 1, -1 */
	};
	static const uint64_t f64s[] = {
		0x0000000000000000u, 0x8000000000000000u,
		0x7ff0000000000000u, 0xfff0000000000000u,
		0x7ff8000000000000u, 0xfff8000000000000u,
		0x7ff0000000000001u, 0x7fffffffffffffffu,
		0x0000000000000001u, 0x8000000000000001u,
		0x000fffffffffffffu, 0x800fffffffffffffu,
		0x7fefffffffffffffu, 0xffefffffffffffffu,
		0x0010000000000000u, 0x3ff0000000000000u, 0xbff0000000000000u,
	};
	static const uint64_t u32s[] = { 0, 1, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu };
	static const uint64_t u64s[] = { 0, 1, 0x7fffffffffffffffu, 0x8000000000000000u,
					 0xfffffffffffffffeu, 0xffffffffffffffffu, 0xffffffffu,
					 0x100000000u };

	if (rnd() & 1)
		return rand_bits(t);
	switch (t) {
	case T_F32:
		return f32s[rnd_below(sizeof f32s / sizeof f32s[0])];
	case T_F64:
		return f64s[rnd_below(sizeof f64s / sizeof f64s[0])];
	case T_U32:
	case T_I32:
		return u32s[rnd_below(sizeof u32s / sizeof u32s[0])];
	default:
		return u64s[rnd_below(sizeof u64s / sizeof u64s[0])];
	}
}

static void put_bits(unsigned char *p, enum ktype t, uint64_t bits)
{
	uint32_t b32 = (uint32_t)bits;
	if (type_width(t) == 4)
		memcpy(p, &b32, 4);
	else
		memcpy(p, &bits, 8);
}

/* N keys of TYPE by DIST, as raw bits. */
static uint64_t *gen_keys(enum ktype t, size_t n, const char *dist)
{
	uint64_t *bits = malloc((n ? n : 1) * sizeof *bits), fixed;
	size_t i;

	if (!bits)
		die("out of memory", NULL);
	if (!strcmp(dist, "rand") || !strcmp(dist, "sorted") || !strcmp(dist, "reverse")) {
		for (i = 0; i < n; i++)
			bits[i] = rand_bits(t);
	} else if (!strcmp(dist, "few")) {
		for (i = 0; i < n; i++)
			bits[i] = from_small(t, (int)rnd_below(5));
	} else if (!strcmp(dist, "equal")) {
		fixed = rand_bits(t);
		for (i = 0; i < n; i++)
			bits[i] = fixed;
	} else if (!strcmp(dist, "special")) {
		for (i = 0; i < n; i++)
			bits[i] = special_bits(t);
	} else {
		die("unknown distribution", dist);
	}
	if (!strcmp(dist, "sorted") || !strcmp(dist, "reverse")) {
		const size_t w = type_width(t);
		unsigned char *raw = malloc((n ? n : 1) * w);
		struct key *keys = malloc((n ? n : 1) * sizeof *keys);
		uint64_t *out = malloc((n ? n : 1) * sizeof *out);
		size_t *idx;
		if (!raw || !keys || !out)
			die("out of memory", NULL);
		for (i = 0; i < n; i++) {
			put_bits(raw + i * w, t, bits[i]);
			keys[i] = load_key(t, raw + i * w);
		}
		idx = sorted_order(keys, n, !strcmp(dist, "reverse"));
		for (i = 0; i < n; i++)
			out[i] = bits[idx[i]];
		free(idx);
		free(keys);
		free(raw);
		free(bits);
		bits = out;
	}
	return bits;
}

static void write_all(const void *p, size_t len)
{
	if (len && fwrite(p, 1, len, stdout) != len)
		die("write error", NULL);
}

static int cmd_gen(int argc, char **argv)
{
	enum ktype t;
	size_t n, i;
	uint64_t *bits;
	unsigned char buf[8];

	if (argc < 3 || argc > 4)
		die("usage: gen TYPE N SEED [DIST]", NULL);
	t = numeric_type(argv[0]);
	n = (size_t)parse_ull(argv[1]);
	rng_state = parse_ull(argv[2]);
	bits = gen_keys(t, n, argc > 3 ? argv[3] : "rand");
	for (i = 0; i < n; i++) {
		put_bits(buf, t, bits[i]);
		write_all(buf, type_width(t));
	}
	free(bits);
	return 0;
}

static int cmd_gen_rec(int argc, char **argv)
{
	size_t n, size, off, i, j, k;
	enum ktype t;
	uint64_t *bits;
	unsigned char *rec;

	if (argc < 5 || argc > 6)
		die("usage: gen-rec N SIZE OFFSET TYPE SEED [DIST]", NULL);
	n = (size_t)parse_ull(argv[0]);
	size = (size_t)parse_ull(argv[1]);
	off = (size_t)parse_ull(argv[2]);
	t = numeric_type(argv[3]);
	rng_state = parse_ull(argv[4]);
	if (off > size || size - off < type_width(t))
		die("the key does not fit in the record", NULL);
	bits = gen_keys(t, n, argc > 5 ? argv[5] : "rand");
	rec = malloc(size);
	if (!rec)
		die("out of memory", NULL);
	for (i = 0; i < n; i++) {
		for (j = 0, k = 0; j < size; j++) {
			if (j >= off && j < off + type_width(t))
				continue;
			rec[j] = (unsigned char)((uint64_t)i >> (8 * (k++ % 8)));
		}
		put_bits(rec + off, t, bits[i]);
		write_all(rec, size);
	}
	free(rec);
	free(bits);
	return 0;
}

static int cmd_gen_bytes(int argc, char **argv)
{
	static const unsigned char few[] = { 0x00, 0x01, 0x80, 0xff }, tie[] = { 0x00, 0x01, 0xff };
	size_t n, size, off, klen, i, j, k;
	const char *dist = argc > 5 ? argv[5] : "rand";
	unsigned char *rec, heads[3][8];

	if (argc < 5 || argc > 6)
		die("usage: gen-bytes N SIZE OFFSET KLEN SEED [DIST]", NULL);
	n = (size_t)parse_ull(argv[0]);
	size = (size_t)parse_ull(argv[1]);
	off = (size_t)parse_ull(argv[2]);
	klen = (size_t)parse_ull(argv[3]);
	rng_state = parse_ull(argv[4]);
	if (off > size || size - off < klen)
		die("the key does not fit in the record", NULL);
	if (strcmp(dist, "rand") && strcmp(dist, "tied") && strcmp(dist, "few") &&
	    strcmp(dist, "equal"))
		die("unknown distribution", dist);
	rec = malloc(size);
	if (!rec)
		die("out of memory", NULL);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 8; j++)
			heads[i][j] = (unsigned char)rnd();
	for (i = 0; i < n; i++) {
		const size_t head = rnd_below(3);
		for (j = 0, k = 0; j < size; j++) {
			if (j >= off && j < off + klen)
				continue;
			rec[j] = (unsigned char)((uint64_t)i >> (8 * (k++ % 8)));
		}
		for (j = 0; j < klen; j++) {
			unsigned char *b = rec + off + j;
			if (!strcmp(dist, "rand"))
				*b = (unsigned char)rnd();
			else if (!strcmp(dist, "few"))
				*b = few[rnd_below(4)];
			else if (!strcmp(dist, "equal"))
				*b = (unsigned char)(0x5a + j);
			else
				*b = j < 8 ? heads[head][j] : tie[rnd_below(3)];
		}
		write_all(rec, size);
	}
	free(rec);
	return 0;
}

static void print_key(enum ktype t, uint64_t bits)
{
	float f;
	double d;
	switch (t) {
	case T_U32:
	case T_U64:
		printf("%llu", (unsigned long long)bits);
		break;
	case T_I32:
		printf("%d", (int32_t)(uint32_t)bits);
		break;
	case T_I64:
		printf("%lld", (long long)(int64_t)bits);
		break;
	case T_F32: {
		uint32_t b = (uint32_t)bits;
		memcpy(&f, &b, 4);
		printf("%.9g", (double)f);
		break;
	}
	case T_F64:
		memcpy(&d, &bits, 8);
		printf("%.17g", d);
		break;
	case T_BYTES:
		assert(!"numeric_type refuses byte-string keys");
	}
}

static int cmd_gen_kv(int argc, char **argv)
{
	static const char extra[] = "::,,\t";	/* separators, more often */
	enum ktype t = T_U32;
	size_t n, i, maxval = 40;
	uint64_t maxkey = 0, *bits = NULL;
	int bounded = 0;

	if (argc < 2 || argc > 5)
		die("usage: gen-kv N SEED [TYPE] [MAXKEY|DIST] [MAXVAL]", NULL);
	n = (size_t)parse_ull(argv[0]);
	rng_state = parse_ull(argv[1]);
	if (argc > 2)
		t = numeric_type(argv[2]);
	if (argc > 4)
		maxval = (size_t)parse_ull(argv[4]);
	if (argc > 3 && argv[3][0] >= '0' && argv[3][0] <= '9') {
		maxkey = parse_ull(argv[3]);
		bounded = 1;
	} else {
		bits = gen_keys(t, n, argc > 3 ? argv[3] : "rand");
	}
	for (i = 0; i < n; i++) {
		size_t len = rnd_below(maxval + 1), j;
		if (!bounded) {
			print_key(t, bits[i]);
		} else if (is_float(t)) {
			/* Multiples of 1/4: exact in either width. */
			double v = (double)rnd_below(maxkey * 4 + 1) / 4;
			print_key(t, t == T_F32 ? f32_bits((float)(rnd() & 1 ? -v : v))
						 : f64_bits(rnd() & 1 ? -v : v));
		} else if (t == T_I32 || t == T_I64) {
			int64_t v = (int64_t)rnd_below(maxkey + 1);
			print_key(t, (uint64_t)(rnd() & 1 ? -v : v));
		} else {
			print_key(t, maxkey == UINT64_MAX ? rnd() : rnd_below(maxkey + 1));
		}
		putchar(':');
		for (j = 0; j < len; j++) {
			uint64_t r = rnd_below(100);
			putchar(r < 5 ? extra[r] : 0x20 + (int)rnd_below(0x7f - 0x20));
		}
		putchar('\n');
	}
	free(bits);
	return ferror(stdout) ? 2 : 0;
}

/* --- sort ----------------------------------------------------------------- */

static unsigned char *read_stdin(size_t *len)
{
	size_t cap = 1 << 16, n = 0, r;
	unsigned char *buf = malloc(cap);
	if (!buf)
		die("out of memory", NULL);
	while ((r = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			if (!(buf = realloc(buf, cap)))
				die("out of memory", NULL);
		}
	}
	if (ferror(stdin))
		die("read error", NULL);
	*len = n;
	return buf;
}

static int parse_kv_text(enum ktype t, const char *buf, size_t len, struct key *k);

/* The key of a kv line: 0 when it parses, -1 when not. */
static int parse_kv_key(enum ktype t, const char *s, size_t len, struct key *k)
{
	char *buf;
	int rc;

	k->t = t;
	if (len == 0)
		return -1;
	if (!(buf = malloc(len + 1)))
		die("out of memory", NULL);
	memcpy(buf, s, len);
	buf[len] = '\0';
	rc = parse_kv_text(t, buf, len, k);
	free(buf);
	return rc;
}

static int parse_kv_text(enum ktype t, const char *buf, size_t len, struct key *k)
{
	char *end;
	size_t i;
	if (!is_float(t)) {
		int neg = 0;
		unsigned long long mag = 0;
		i = 0;
		if ((t == T_I32 || t == T_I64) && (buf[0] == '-' || buf[0] == '+')) {
			neg = buf[0] == '-';
			i = 1;
		}
		if (i == len)
			return -1;
		for (; i < len; i++) {
			if (buf[i] < '0' || buf[i] > '9')
				return -1;
			if (mag > (ULLONG_MAX - (unsigned)(buf[i] - '0')) / 10)
				return -1;
			mag = mag * 10 + (unsigned)(buf[i] - '0');
		}
		switch (t) {
		case T_U32:
			if (mag > UINT32_MAX)
				return -1;
			k->v.u = mag;
			break;
		case T_U64:
			k->v.u = mag;
			break;
		case T_I32:
			if (mag > (neg ? 2147483648ull : 2147483647ull))
				return -1;
			k->v.i = neg ? -(int64_t)mag : (int64_t)mag;
			break;
		default:
			if (mag > (neg ? 9223372036854775808ull : 9223372036854775807ull))
				return -1;
			k->v.i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
			break;
		}
		return 0;
	}
	if (strchr(" \t\n\r\v\f", buf[0]) || strlen(buf) != len)
		return -1;
	errno = 0;
	if (t == T_F32) {
		float f = strtof(buf, &end);
		if (errno == ERANGE && isinf(f))
			return -1;
		k->v.d = (double)f;
	} else {
		k->v.d = strtod(buf, &end);
		if (errno == ERANGE && isinf(k->v.d))
			return -1;
	}
	return end == buf + len ? 0 : -1;
}

static int cmd_sort(int argc, char **argv)
{
	enum ktype t = T_U32;
	int desc = 0, kv = 0, skip_bad = 0, unique = 0, i;
	size_t rsize = 0, off = 0, len, n, j, *idx, bad = 0;
	char sep = ':';
	unsigned char *data;
	struct key *keys;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-r")) {
			desc = 1;
		} else if (!strcmp(a, "-u")) {
			unique = 1;
		} else if (!strcmp(a, "--skip-bad")) {
			skip_bad = 1;
		} else if (!strcmp(a, "-s") || !strcmp(a, "--stable")) {
			/* always stable */
		} else if (!v) {
			die("option needs a value", a);
		} else if (!strcmp(a, "-k")) {
			t = parse_type(v), i++;
		} else if (!strcmp(a, "-R")) {
			rsize = (size_t)parse_ull(v), i++;
		} else if (!strcmp(a, "--key-offset")) {
			off = (size_t)parse_ull(v), i++;
		} else if (!strcmp(a, "-f")) {
			if (!strcmp(v, "kv"))
				kv = 1;
			else if (strcmp(v, "bin"))
				die("unknown format", v);
			i++;
		} else if (!strcmp(a, "-t")) {
			if (!strcmp(v, "\\t"))
				sep = '\t';
			else if (strlen(v) == 1)
				sep = v[0];
			else
				die("bad separator", v);
			i++;
		} else {
			die("unknown option", a);
		}
	}

	data = read_stdin(&len);
	if (!kv) {
		const size_t w = type_width(t);
		if (!rsize)
			rsize = w;
		if (off > rsize || rsize - off < w)
			die("the key does not fit in the record", NULL);
		if (len % rsize)
			die("input size is not a multiple of the record size", NULL);
		n = len / rsize;
		keys = malloc((n ? n : 1) * sizeof *keys);
		if (!keys)
			die("out of memory", NULL);
		for (j = 0; j < n; j++)
			keys[j] = load_key(t, data + j * rsize + off);
		idx = sorted_order(keys, n, desc);
		for (j = 0; j < n; j++)
			if (!unique || j == 0 || cmp_key(&keys[idx[j]], &keys[idx[j - 1]]))
				write_all(data + idx[j] * rsize, rsize);
	} else {
		/* Lines: start and length, the newline left out. */
		size_t cap = 1024, pos = 0, *start = malloc(cap * sizeof *start),
		       *llen = malloc(cap * sizeof *llen);
		keys = malloc(cap * sizeof *keys);
		n = 0;
		if (!start || !llen || !keys)
			die("out of memory", NULL);
		while (pos < len) {
			const unsigned char *nl = memchr(data + pos, '\n', len - pos);
			size_t l = nl ? (size_t)(nl - (data + pos)) : len - pos;
			const unsigned char *s = memchr(data + pos, sep, l);
			if (n == cap) {
				cap *= 2;
				start = realloc(start, cap * sizeof *start);
				llen = realloc(llen, cap * sizeof *llen);
				keys = realloc(keys, cap * sizeof *keys);
				if (!start || !llen || !keys)
					die("out of memory", NULL);
			}
			if (s && parse_kv_key(t, (const char *)data + pos,
					      (size_t)(s - (data + pos)), &keys[n]) == 0) {
				start[n] = pos;
				llen[n] = l;
				n++;
			} else if (skip_bad) {
				bad++;
			} else {
				fprintf(stderr, "refsort: bad key in line: %.*s\n", (int)l,
					(const char *)data + pos);
				return 2;
			}
			pos += l + 1;
		}
		idx = sorted_order(keys, n, desc);
		for (j = 0; j < n; j++) {
			write_all(data + start[idx[j]], llen[idx[j]]);
			write_all("\n", 1);
		}
		if (bad)
			fprintf(stderr, "refsort: skipped %zu lines\n", bad);
		free(start);
		free(llen);
	}
	free(idx);
	free(keys);
	free(data);
	if (fflush(stdout))
		die("write error", NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: refsort gen|gen-rec|gen-kv|sort ...", NULL);
	if (!strcmp(argv[1], "gen"))
		return cmd_gen(argc - 2, argv + 2);
	if (!strcmp(argv[1], "gen-rec"))
		return cmd_gen_rec(argc - 2, argv + 2);
	if (!strcmp(argv[1], "gen-bytes"))
		return cmd_gen_bytes(argc - 2, argv + 2);
	if (!strcmp(argv[1], "gen-kv"))
		return cmd_gen_kv(argc - 2, argv + 2);
	if (!strcmp(argv[1], "sort"))
		return cmd_sort(argc - 2, argv + 2);
	die("unknown command", argv[1]);
	return 2;
}
