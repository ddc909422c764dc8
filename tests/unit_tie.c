/* Unit tests of tie.c: keys longer than their sort word.  Sorted words are
 * pushed in pieces of every size, so that groups of tied words straddle
 * the pieces, and what comes out must be the order of a plain sort of the
 * whole keys. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../src/tie.h"
#include "tap.h"

#define N 5000
#define KEY 12

static unsigned char keys[N][KEY];
static size_t lens[N];

static size_t key_of(const void *ctx, size_t idx, const unsigned char **p)
{
	(void)ctx;
	*p = keys[idx];
	return lens[idx];
}

struct sink {
	struct word128 out[N];
	size_t n;
};

static int collect(void *ctx, const struct word128 *w, size_t n)
{
	struct sink *s = ctx;
	memcpy(s->out + s->n, w, n * sizeof *w);
	s->n += n;
	return 0;
}

static bool desc;

/* The whole order, by memcmp of whole keys (the shorter first where one
 * begins the other), then index. */
static int cmp_whole(const void *x, const void *y)
{
	const struct word128 *a = x, *b = y;
	const size_t la = lens[a->lo], lb = lens[b->lo], m = la < lb ? la : lb;
	int c = memcmp(keys[a->lo], keys[b->lo], m);
	if (c == 0)
		c = (la > lb) - (la < lb);
	if (desc)
		c = -c;
	return c ? c : (a->lo > b->lo) - (a->lo < b->lo);
}

static int cmp_word(const void *x, const void *y)
{
	const struct word128 *a = x, *b = y;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return (a->lo > b->lo) - (a->lo < b->lo);
}

/* The sort word of key i: its first 8 bytes, zero-padded, big-endian. */
static uint64_t prefix(size_t i)
{
	uint64_t v = 0;
	size_t j;
	for (j = 0; j < TIE_PREFIX; j++)
		v = v << 8 | (j < lens[i] ? keys[i][j] : 0);
	return desc ? ~v : v;
}

/* Keys drawn from few bytes, so that many tie on their prefix and some are
 * equal; lengths from 1 to KEY when varied. */
static void make_keys(unsigned seed, bool varied)
{
	static const unsigned char alphabet[] = { 0, 1, 0xff };
	size_t i, j;
	srand(seed);
	for (i = 0; i < N; i++) {
		lens[i] = varied ? 1 + (size_t)rand() % KEY : KEY;
		for (j = 0; j < KEY; j++)
			keys[i][j] = j < 7 ? (unsigned char)(rand() % 2) : alphabet[rand() % 3];
	}
}

/* Push the sorted words in pieces of 1 to maxpiece words. */
static bool pushed_in_order(size_t maxpiece)
{
	static struct word128 w[N], want[N];
	static struct sink sink;
	const struct tie_key k = { key_of, NULL, desc };
	struct tie_stream s;
	size_t i, at = 0;

	memset(&s, 0, sizeof s);
	for (i = 0; i < N; i++) {
		w[i].hi = prefix(i);
		w[i].lo = i;
	}
	qsort(w, N, sizeof *w, cmp_word);
	memcpy(want, w, sizeof w);
	qsort(want, N, sizeof *want, cmp_whole);
	sink.n = 0;
	while (at < N) {
		size_t piece = 1 + (size_t)rand() % maxpiece;
		if (piece > N - at)
			piece = N - at;
		if (tie_push(&s, &k, w + at, piece, collect, &sink))
			return false;
		at += piece;
	}
	if (tie_flush(&s, &k, collect, &sink))
		return false;
	tie_free(&s);
	return sink.n == N && memcmp(sink.out, want, sizeof want) == 0;
}

int main(void)
{
	static const size_t pieces[] = { 1, 2, 3, 17, 1000, N };
	size_t p;
	int d;

	for (d = 0; d < 2; d++) {
		desc = d;
		for (p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
			make_keys((unsigned)(p + 1), false);
			ok(pushed_in_order(pieces[p]), "%s 12-byte keys in pieces of up to %zu words",
			   desc ? "descending" : "ascending", pieces[p]);
			make_keys((unsigned)(p + 7), true);
			ok(pushed_in_order(pieces[p]), "%s keys of 1 to 12 bytes in pieces of up to %zu words",
			   desc ? "descending" : "ascending", pieces[p]);
		}
	}
	{
		const unsigned char a[] = "abcdefghXY", b[] = "abcdefghXZ";
		ok(tie_cmp(a, 10, b, 10, false) < 0 && tie_cmp(a, 10, b, 10, true) > 0,
		   "tie_cmp: the bytes past the prefix decide, reversed when descending");
		ok(tie_cmp(a, 9, a, 10, false) < 0 && tie_cmp(a, 3, a, 5, false) < 0 &&
		   tie_cmp(a, 10, a, 10, false) == 0, "tie_cmp: a key that begins another comes first");
	}
	return done_testing();
}
