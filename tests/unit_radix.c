/* Unit tests of the host sort (radix.h): radix_sort against qsort, for
 * every word kind, several thread counts, sizes around the insertion sort's
 * and the threads' limits, and data shapes that skip passes or none;
 * radix_sort_above, which leaves ordered low bits unsorted; and
 * radix_sort_counted, given the counts its first pass would take. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "radix.h"
#include "tap.h"

enum shape {
	RANDOM, EQUAL, SORTED, REVERSED, FEW, TOP_BYTE, BOTTOM_BYTE, SAME_HI, FEW_HIGH, MIDDLE,
	SHAPES
};

static const char *const shape_names[SHAPES] = {
	"random", "all equal", "sorted", "reversed", "few distinct", "top byte only",
	"bottom byte only", "equal hi, distinct lo", "few high parts, random low bits",
	"random middle bits",
};

static const char *const kind_names[] = { "u32", "u64", "128-bit" };

static int cmp32(const void *a, const void *b)
{
	const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static int cmp64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp128(const void *a, const void *b)
{
	const struct word128 *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int (*const cmps[])(const void *, const void *) = { cmp32, cmp64, cmp128 };

static void put(void *w, size_t i, enum word_kind kind, uint64_t hi, uint64_t lo)
{
	switch (kind) {
	case WORD32:
		((uint32_t *)w)[i] = (uint32_t)lo;
		break;
	case WORD64:
		((uint64_t *)w)[i] = lo;
		break;
	case WORD128:
		((struct word128 *)w)[i].hi = hi;
		((struct word128 *)w)[i].lo = lo;
		break;
	}
}

/* The top byte of a word of kind, as a shift of hi (WORD128) or lo. */
static unsigned top_shift(enum word_kind kind)
{
	return kind == WORD32 ? 24 : 56;
}

static void fill(void *w, size_t n, enum word_kind kind, enum shape shape)
{
	const uint64_t base = rnd(), base2 = rnd();
	uint64_t few[5];
	size_t i;

	for (i = 0; i < 5; i++)
		few[i] = rnd();
	for (i = 0; i < n; i++) {
		switch (shape) {
		default:	/* random, or sorted or reversed below */
			put(w, i, kind, rnd(), rnd());
			break;
		case EQUAL:
			put(w, i, kind, base, base2);
			break;
		case FEW:
			put(w, i, kind, few[rnd() % 5], few[rnd() % 3]);
			break;
		case TOP_BYTE: {
			const uint64_t top = (rnd() & 0xff) << top_shift(kind);
			if (kind == WORD128)
				put(w, i, kind, (base & ~(0xffull << 56)) | top, base2);
			else
				put(w, i, kind, base, (base & ~(0xffull << top_shift(kind))) | top);
			break;
		}
		case BOTTOM_BYTE:
			put(w, i, kind, base, (base2 & ~0xffull) | (rnd() & 0xff));
			break;
		case FEW_HIGH:
			/* Long runs that agree on all but the lowest bits. */
			put(w, i, kind, few[rnd() % 5], few[rnd() % 3] << 11 | (rnd() & 0x7ff));
			break;
		case MIDDLE:
			/* Bits 10 to 21 of a 32-bit word, 26 to 41 of a 64-bit
			 * one, 58 to 73 of a 128-bit one: the last across the
			 * halves. */
			if (kind == WORD128)
				put(w, i, kind, (base & ~0x3ffull) | (rnd() & 0x3ff),
				    (base2 & ~(0x3full << 58)) | (rnd() & 0x3f) << 58);
			else if (kind == WORD64)
				put(w, i, kind, base, (base2 & ~(0xffffull << 26)) | (rnd() & 0xffff) << 26);
			else
				put(w, i, kind, base, (base2 & ~(0xfffull << 10)) | (rnd() & 0xfff) << 10);
			break;
		case SAME_HI:
			/* A bijection of i: distinct, in no order. */
			put(w, i, kind, base, (uint64_t)i * 0x9e3779b97f4a7c15ull);
			break;
		}
	}
	if (shape == SORTED || shape == REVERSED)
		qsort(w, n, word_size(kind), cmps[kind]);
	if (shape == REVERSED) {
		const size_t ws = word_size(kind);
		unsigned char *const b = w, tmp[16];
		for (i = 0; i < n / 2; i++) {
			memcpy(tmp, b + i * ws, ws);
			memcpy(b + i * ws, b + (n - 1 - i) * ws, ws);
			memcpy(b + (n - 1 - i) * ws, tmp, ws);
		}
	}
}

static void *alloc(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);
	if (!p) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

/* One input, sorted by qsort once and by radix_sort on each thread count. */
static void check(enum word_kind kind, size_t n, enum shape shape)
{
	static const unsigned threads[] = { 1, 2, 3, 8 };
	const size_t bytes = n * word_size(kind);
	void *const in = alloc(bytes), *const want = alloc(bytes), *const got = alloc(bytes);
	void *const scratch = alloc(bytes);
	size_t t;

	fill(in, n, kind, shape);
	memcpy(want, in, bytes);
	qsort(want, n, word_size(kind), cmps[kind]);
	for (t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		void *sorted = NULL;
		int rc;
		memcpy(got, in, bytes);
		/* Scratch given on odd turns, where the result may end in it;
		 * allocated by the sort on even ones, the result in got. */
		rc = t % 2 ? radix_sort(got, scratch, n, kind, threads[t], &sorted) :
			     radix_sort(got, NULL, n, kind, threads[t], NULL);
		if (!(t % 2))
			sorted = got;
		ok(rc == 0 && (sorted == got || sorted == scratch) &&
		   memcmp(sorted, want, bytes) == 0, "%s, %s, n=%zu, %u thread%s%s: as qsort",
		   kind_names[kind], shape_names[shape], n, threads[t], threads[t] == 1 ? "" : "s",
		   t % 2 ? ", scratch given" : "");
	}
	free(scratch);
	free(got);
	free(want);
	free(in);
}

/* radix_sort_above on 128-bit words whose low 32 bits count up (a tied
 * group's positions) under few distinct high bits: the order qsort gives
 * the whole words, with no pass on the low bits needed for it. */
static void check_above(size_t n, unsigned threads)
{
	struct word128 *const in = alloc(n * sizeof *in), *const want = alloc(n * sizeof *in);
	struct word128 *const scratch = alloc(n * sizeof *in);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	void *sorted = NULL;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		in[i].hi = x % 5 << 40 | (x >> 20 & 3);
		in[i].lo = (x >> 8 & 3) << 56 | (uint32_t)i;
	}
	memcpy(want, in, n * sizeof *in);
	qsort(want, n, sizeof *want, cmp128);
	rc = radix_sort_above(in, scratch, n, WORD128, 56, threads, &sorted);
	ok(rc == 0 && memcmp(sorted, want, n * sizeof *want) == 0,
	   "128-bit, positions below bit 56, n=%zu, %u thread%s: as qsort", n, threads,
	   threads == 1 ? "" : "s");
	free(scratch);
	free(want);
	free(in);
}

/* A word's key above the bits a sort above them leaves, and its input
 * position. */
struct keyed {
	uint64_t key;
	size_t i;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* radix_sort_above keeps words that are equal from bit low up in their
 * order whatever their bits below it (records packed beside their keys,
 * whose bytes count down here): the order of a stable sort by the bits
 * from low up, on every path (the insertion sort of fewer than 256 words,
 * small buckets, passes).  Keys of n/4 values: ties in short runs. */
static void check_above_stable(enum word_kind kind, size_t n, unsigned threads)
{
	const size_t ws = word_size(kind);
	const unsigned low = kind == WORD32 ? 16 : kind == WORD64 ? 32 : 64;
	const uint64_t values = kind == WORD32 && n / 4 + 1 > 65536 ? 65536 : n / 4 + 1;
	unsigned char *const in = alloc(n * ws), *const want = alloc(n * ws);
	unsigned char *const scratch = alloc(n * ws);
	struct keyed *const k = alloc(n * sizeof *k);
	uint64_t x = 0x2545f4914f6cdd1dull;
	void *sorted = NULL;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		const uint64_t payload = n - i;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k[i].key = x % values;
		k[i].i = i;
		if (kind == WORD128)
			put(in, i, kind, k[i].key, payload);
		else
			put(in, i, kind, 0, k[i].key << low | (payload & (((uint64_t)1 << low) - 1)));
	}
	qsort(k, n, sizeof *k, cmp_keyed);
	for (i = 0; i < n; i++)
		memcpy(want + i * ws, in + k[i].i * ws, ws);
	rc = radix_sort_above(in, scratch, n, kind, low, threads, &sorted);
	ok(rc == 0 && memcmp(sorted, want, n * ws) == 0,
	   "%s, ties above bit %u in input order, the bits below counting down, n=%zu, "
	   "%u thread%s", kind_names[kind], low, n, threads, threads == 1 ? "" : "s");
	free(k);
	free(scratch);
	free(want);
	free(in);
}

/* radix_sort_counted of words that are raw values xor x, given counts of
 * the raw values in segments of seg words (as keyahead.c takes them): of
 * the first pass's digit where the words have one, else none; and given
 * a digit one bit off, which the sort must count again. */
static void check_counted(enum word_kind kind, size_t n, enum shape shape, size_t seg, uint64_t x)
{
	static const unsigned threads[] = { 1, 2, 3, 8 };
	const size_t ws = word_size(kind), bytes = n * ws, values = (size_t)1 << RADIX_MSD_BITS;
	const size_t nseg = (n + seg - 1) / seg;
	void *const in = alloc(bytes), *const want = alloc(bytes), *const got = alloc(bytes);
	void *const scratch = alloc(bytes);
	uint32_t *const counts = alloc(nseg * values * sizeof *counts);
	uint64_t any = 0, all = ~(uint64_t)0, d;
	struct radix_counts c;
	unsigned hi = 0, lo = 0, off;
	size_t i, t;

	fill(in, n, kind, shape);
	for (i = 0; i < n; i++) {
		const uint64_t v = kind == WORD32 ? ((uint32_t *)in)[i] : ((uint64_t *)in)[i];
		any |= v;
		all &= v;
	}
	if (kind == WORD32)
		all &= UINT32_MAX;
	d = any ^ all;
	if (d) {
		hi = 63 - (unsigned)__builtin_clzll(d);
		lo = (unsigned)__builtin_ctzll(d);
	}
	memcpy(want, in, bytes);
	qsort(want, n, ws, cmps[kind]);
	for (off = 0; off < 2; off++) {
		c.differ = d;
		c.seg = seg;
		c.nseg = nseg;
		c.counts = d && hi + 1 > lo + RADIX_MSD_BITS ? counts : NULL;
		c.shift = c.counts ? hi + 1 - RADIX_MSD_BITS - off : 0;
		c.flip = (uint32_t)(x >> c.shift & (values - 1));
		memset(counts, 0, nseg * values * sizeof *counts);
		for (i = 0; c.counts && i < n; i++) {
			const uint64_t raw =
				(kind == WORD32 ? ((uint32_t *)in)[i] : ((uint64_t *)in)[i]) ^ x;
			counts[i / seg * values + (raw >> c.shift & (values - 1))]++;
		}
		for (t = 0; t < sizeof threads / sizeof threads[0]; t++) {
			void *sorted = NULL;
			int rc;
			memcpy(got, in, bytes);
			rc = radix_sort_counted(got, scratch, n, kind, threads[t], &c, &sorted);
			ok(rc == 0 && (sorted == got || sorted == scratch) &&
			   memcmp(sorted, want, bytes) == 0,
			   "counted: %s, %s, n=%zu, segments of %zu, xor %llx, %u thread%s%s: as qsort",
			   kind_names[kind], shape_names[shape], n, seg, (unsigned long long)x,
			   threads[t], threads[t] == 1 ? "" : "s",
			   !c.counts ? ", no digit" : off ? ", a digit one bit off" : "");
		}
		if (!c.counts)
			break;
	}
	free(counts);
	free(scratch);
	free(got);
	free(want);
	free(in);
}

int main(void)
{
	static const size_t sizes[] = {
		0, 1, 2, 3, 255, 256, 257, 2047, 2048, 2049, 65535, 65537, ((size_t)1 << 20) - 1, ((size_t)1 << 20) + 1,
	};
	const enum word_kind kinds[] = { WORD32, WORD64, WORD128 };
	size_t k, i;
	int s;

	for (k = 0; k < 3; k++)
		for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
			for (s = 0; s < SHAPES; s++)
				if (s != SAME_HI || kinds[k] == WORD128)
					check(kinds[k], sizes[i], (enum shape)s);
	/* Buckets of the first pass larger than BUCKET_MAX words: on one
	 * thread each sorted by it alone, on 8 by all of them. */
	for (k = 0; k < 3; k++) {
		check(kinds[k], ((size_t)1 << 21) + 3, FEW_HIGH);
		check(kinds[k], ((size_t)1 << 21) + 3, RANDOM);
	}
	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		check_above(sizes[i], 1);
		check_above(sizes[i], 3);
	}
	for (k = 0; k < 3; k++)
		for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			check_above_stable(kinds[k], sizes[i], 1);
			check_above_stable(kinds[k], sizes[i], 3);
		}
	/* Counted ahead: segments of 2^16 words (fewer than threads below
	 * 2^19), of 2^20, and the words as unsigned, signed and descending
	 * keys would have them, in turns. */
	for (k = 0; k < 2; k++) {
		static const size_t counted_sizes[] = {
			0, 1, 300, 65536, 65537, ((size_t)1 << 18) + 5, 3 * ((size_t)1 << 18) + 5,
			((size_t)1 << 20) + 1, ((size_t)1 << 21) + 3,
		};
		static const enum shape counted_shapes[] = { RANDOM, EQUAL, SORTED, FEW_HIGH, TOP_BYTE,
							     MIDDLE, BOTTOM_BYTE };
		const uint64_t sign = kinds[k] == WORD32 ? 0x80000000ull : 0x8000000000000000ull;
		const uint64_t xs[] = { 0, sign, kinds[k] == WORD32 ? UINT32_MAX : UINT64_MAX };
		size_t j;
		for (i = 0; i < sizeof counted_sizes / sizeof counted_sizes[0]; i++)
			for (j = 0; j < sizeof counted_shapes / sizeof counted_shapes[0]; j++)
				check_counted(kinds[k], counted_sizes[i], counted_shapes[j],
					      counted_sizes[i] > ((size_t)1 << 20) ? (size_t)1 << 20
										 : (size_t)1 << 16,
					      xs[(i + j) % 3]);
	}
	return done_testing();
}
