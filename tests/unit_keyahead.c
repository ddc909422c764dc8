/* Unit tests of the bare keys counted while a stream arrives
 * (keyahead.h): for every integer key type and both directions, keys that
 * come at once, in steps, and whose highest differing bit moves up late,
 * the counts ka_counts gives are those of the keys' sort words, counted
 * here again; segments many more than the thread reached (its rows of
 * counts grown at the end); a stream that left its memory, and keys that
 * are not the stream's, give none. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encode.h"
#include "keyahead.h"
#include "keys.h"
#include "radix.h"
#include "tap.h"

#define VALUES ((size_t)1 << RADIX_MSD_BITS)

enum shape { RANDOM, RISING, LATE, SMALL_RANGE };
static const char *const shape_names[] = { "random", "rising", "one wide key last",
					   "small range" };

static uint64_t key_at(const void *keys, size_t width, size_t i)
{
	return width == 4 ? ((const uint32_t *)keys)[i] : ((const uint64_t *)keys)[i];
}

static void fill(void *keys, size_t width, size_t n, enum shape shape)
{
	const uint64_t all = width == 4 ? UINT32_MAX : UINT64_MAX;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = rnd();
		switch (shape) {
		case RANDOM:
			break;
		case RISING:	/* the highest bit set grows with i */
			v &= ((uint64_t)2 << (i * (width * 8 - 1) / n)) - 1;
			break;
		case LATE:	/* 12 bits differ, then all of them */
			v = i + 1 < n ? v & 0xfff : ~v;
			break;
		case SMALL_RANGE:	/* fewer bits than a digit's */
			v &= 0x1ff;
			break;
		}
		v &= all;
		if (width == 4)
			((uint32_t *)keys)[i] = (uint32_t)v;
		else
			((uint64_t *)keys)[i] = v;
	}
}

static void pause_ms(long ms)
{
	const struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

/* The keys of f, n of them in segments of seg, told to the counter in
 * steps (or all at once), against counts made here. */
static void check(const char *type, bool descending, size_t n, size_t seg, enum shape shape,
		  unsigned steps)
{
	struct enc_format f;
	const struct key_type *kt = key_type_find(type);
	const size_t width = kt->width, segs = (n + seg - 1) / seg;
	uint64_t *const keys = malloc(n * width + 8), any = 0, all = ~(uint64_t)0, x, differ;
	uint32_t *const want = calloc(segs * VALUES + 1, sizeof *want);
	struct key_ahead *a;
	struct radix_counts c;
	unsigned hi, lo, shift = 0, s;
	bool got, digit, same = true;
	size_t i;

	memset(&f, 0, sizeof f);
	f.kt = kt;
	f.mask = descending ? key_mask(kt) : 0;
	f.threads = 3;
	x = kt->sortable(0) ^ f.mask;
	fill(keys, width, n, shape);
	for (i = 0; i < n; i++) {
		const uint64_t w = key_at(keys, width, i) ^ x;
		any |= w;
		all &= w;
	}
	if (width == 4)
		all &= UINT32_MAX;
	differ = any ^ all;
	hi = differ ? 63 - (unsigned)__builtin_clzll(differ) : 0;
	lo = differ ? (unsigned)__builtin_ctzll(differ) : 0;
	digit = differ && hi + 1 > lo + RADIX_MSD_BITS;
	if (digit)
		shift = hi + 1 - RADIX_MSD_BITS;
	for (i = 0; digit && i < n; i++)
		want[i / seg * VALUES + ((key_at(keys, width, i) ^ x) >> shift & (VALUES - 1))]++;

	a = ka_start(&f, (const unsigned char *)keys, 0, seg);
	for (s = 1; s <= steps; s++) {
		ka_grow(a, (uint64_t)n * width * s / steps);
		if (s < steps)
			pause_ms(2);
	}
	got = ka_counts(a, keys, n, f.threads, &c);
	if (got && digit) {
		for (i = 0; i < segs * VALUES; i++)
			if (c.counts[(i / VALUES) * VALUES + ((i % VALUES) ^ c.flip)] != want[i])
				same = false;
	}
	ok(a && got && c.differ == differ && c.seg == seg && c.nseg == segs &&
	   (digit ? c.counts && c.shift == shift && same : !c.counts),
	   "%s%s, %s, %zu keys in segments of %zu, told in %u step%s: as counted again",
	   type, descending ? " descending" : "", shape_names[shape], n, seg, steps,
	   steps == 1 ? "" : "s");
	ka_free(a);
	free(want);
	free(keys);
}

int main(void)
{
	static const char *const types[] = { "u32", "i32", "u64", "i64" };
	static const enum shape shapes[] = { RANDOM, RISING, LATE, SMALL_RANGE };
	const struct key_type *u32 = key_type_find("u32");
	struct enc_format f;
	struct radix_counts c;
	uint32_t *keys;
	struct key_ahead *a;
	size_t t, s, i;

	for (t = 0; t < 4; t++)
		for (s = 0; s < 4; s++) {
			check(types[t], t % 2, 1, 256, shapes[s], 1);
			check(types[t], t % 2, 256 * 7 + 3, 256, shapes[s], 1);
			check(types[t], t % 2, 256 * 40, 256, shapes[s], 5);
			/* Rows past twice those the thread grew to. */
			check(types[t], t % 2, 256 * 300 + 1, 256, shapes[s], 1);
			check(types[t], !(t % 2), 4096 * 33 - 1, 4096, shapes[s], 9);
		}

	memset(&f, 0, sizeof f);
	f.kt = u32;
	f.threads = 2;
	keys = malloc(4096 * sizeof *keys);
	for (i = 0; i < 4096; i++)
		keys[i] = (uint32_t)rnd();
	a = ka_start(&f, (const unsigned char *)keys, 0, 256);
	ka_grow(a, 4096 * 4);
	ka_stop(a);
	ok(!ka_counts(a, keys, 4096, 2, &c), "a stream that left its memory: no counts");
	ka_free(a);
	a = ka_start(&f, (const unsigned char *)keys, 0, 256);
	ka_grow(a, 4096 * 4);
	ok(!ka_counts(a, keys + 2, 4094, 2, &c) && !ka_counts(a, keys, 4095, 2, &c) &&
	   ka_counts(a, keys, 4096, 2, &c), "other keys than the stream's: no counts; its own: counts");
	ka_free(a);
	ok(!ka_counts(NULL, keys, 4096, 2, &c), "no counter: no counts");
	free(keys);
	return done_testing();
}
