/* Unit tests of string keys' order (src/strkey.c): words made by str_word,
 * sorted as the device sorts them, then refined by str_refine, must put
 * the records in the order of a comparison sort of the whole keys (memcmp,
 * a key before the longer keys it begins, the index breaking ties), both
 * ascending and descending, on keys shaped to tie for long: shared
 * prefixes of every length around the word's 11 bytes and far past it,
 * keys that begin one another, empty keys, NULs, all-equal keys. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/radix.h"
#include "../src/strkey.h"
#include "../src/strtie.h"
#include "tap.h"

struct keys {
	unsigned char **p;
	size_t *len;
};

static void key_of(const void *ctx, size_t i, const unsigned char **key, size_t *len)
{
	const struct keys *k = ctx;
	*key = k->p[i];
	*len = k->len[i];
}

/* Asks for key i's memory ahead, as the line table's finder does. */
static void key_ahead(const void *ctx, size_t i, bool near)
{
	const struct keys *k = ctx;
	__builtin_prefetch(near ? (const void *)k->p[i] : (const void *)&k->p[i]);
}

static const struct keys *cmp_keys;
static int cmp_down;

static int ref_cmp(const void *x, const void *y)
{
	const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = str_cmp(cmp_keys->p[a], cmp_keys->len[a], cmp_keys->p[b], cmp_keys->len[b]);
	if (cmp_down)
		c = -c;
	return c ? c : (a > b) - (a < b);
}

/* n keys: a shared prefix of pre bytes, then up to tail bytes drawn from
 * an alphabet of alpha letters (NUL among them), lengths varying. */
static void make_keys(struct keys *k, size_t n, size_t pre, size_t tail, unsigned alpha)
{
	size_t i, j;
	k->p = malloc((n ? n : 1) * sizeof *k->p);
	k->len = malloc((n ? n : 1) * sizeof *k->len);
	for (i = 0; i < n; i++) {
		const size_t t = tail ? rnd() % (tail + 1) : 0;
		k->len[i] = pre + t;
		k->p[i] = malloc(k->len[i] + 1);
		for (j = 0; j < pre; j++)
			k->p[i][j] = (unsigned char)('a' + j % 7);
		for (j = pre; j < k->len[i]; j++)
			k->p[i][j] = (unsigned char)(rnd() % alpha);
	}
}

static void free_keys(struct keys *k, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		free(k->p[i]);
	free(k->p);
	free(k->len);
}

/* Whether words, made and refined, put the n keys in the reference order,
 * and mark each key that equals the one before as the same (-u). */
static int check(const struct keys *k, size_t n, int down, unsigned threads)
{
	const uint64_t mask = down ? ~(uint64_t)0 : 0;
	struct word128 *w = malloc((n ? n : 1) * sizeof *w);
	uint32_t *ref = malloc((n ? n : 1) * sizeof *ref);
	unsigned char *same = malloc(n ? n : 1);
	const struct str_keys finder = { key_of, threads > 1 ? key_ahead : NULL, k };
	size_t i;
	int good = 1;

	for (i = 0; i < n; i++) {
		str_word(k->p[i], k->len[i], mask, (uint32_t)i, &w[i]);
		ref[i] = (uint32_t)i;
	}
	if (radix_sort(w, NULL, n, WORD128, threads, NULL) ||
	    str_refine(w, n, mask, &finder, threads, same))
		good = 0;
	cmp_keys = k;
	cmp_down = down;
	qsort(ref, n, sizeof *ref, ref_cmp);
	for (i = 0; good && i < n; i++)
		if ((uint32_t)w[i].lo != ref[i])
			good = 0;
	for (i = 1; good && i < n; i++)
		if (same[i] != !str_cmp(k->p[ref[i]], k->len[ref[i]], k->p[ref[i - 1]],
					k->len[ref[i - 1]]))
			good = 0;
	free(w);
	free(ref);
	free(same);
	return good;
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 47, 48, 49, 127, 129, 1021, 4097, 65537, 131071 };
	static const size_t prefixes[] = { 0, 7, 8, 11, 12, 16, 19, 22, 23, 100, 4000 };
	size_t s, p;

	for (s = 0; s < sizeof sizes / sizeof *sizes; s++)
		for (p = 0; p < sizeof prefixes / sizeof *prefixes; p++) {
			const size_t n = sizes[s], pre = prefixes[p];
			struct keys k;
			if (n > 5000 && pre > 100)
				continue;
			make_keys(&k, n, pre, 24, 3);
			ok(check(&k, n, 0, 2) && check(&k, n, 1, 2),
			   "%zu keys sharing %zu bytes, up to 24 more of 3 letters", n, pre);
			free_keys(&k, n);
		}
	{
		/* Keys that begin one another: a, aa, aaa... with NULs. */
		struct keys k;
		size_t i;
		make_keys(&k, 3001, 30, 40, 1);
		ok(check(&k, 3001, 0, 2) && check(&k, 3001, 1, 2), "keys that begin one another");
		free_keys(&k, 3001);
		/* All equal, long, in one large group and in a small one. */
		make_keys(&k, 70001, 200, 0, 1);
		ok(check(&k, 70001, 0, 2) && check(&k, 70001, 1, 2), "70001 equal keys of 200 bytes");
		free_keys(&k, 70001);
		make_keys(&k, 33, 50, 0, 1);
		ok(check(&k, 33, 0, 1) && check(&k, 33, 1, 1), "33 equal keys of 50 bytes");
		free_keys(&k, 33);
		/* A large group that splits late, on one thread and on four. */
		make_keys(&k, 100003, 60, 9, 2);
		ok(check(&k, 100003, 0, 1) && check(&k, 100003, 1, 4),
		   "100003 keys sharing 60 bytes, split on the last 9");
		free_keys(&k, 100003);
		/* A large group whose keys share 60 bytes but for a few that
		 * part at byte 15 (missed by the round's samples), and a small
		 * one alike. */
		make_keys(&k, 100003, 60, 9, 2);
		for (i = 5; i < 100003; i += 9973)
			k.p[i][15] = i % 2 ? 'A' : 'z';
		ok(check(&k, 100003, 0, 2) && check(&k, 100003, 1, 1),
		   "100003 keys sharing 60 bytes but for a few that part at byte 15");
		free_keys(&k, 100003);
		make_keys(&k, 1001, 60, 9, 2);
		k.p[777][15] = 'A';
		ok(check(&k, 1001, 0, 1) && check(&k, 1001, 1, 2),
		   "1001 keys sharing 60 bytes but for one that parts at byte 15");
		free_keys(&k, 1001);
		/* Tied groups found on several threads: groups that cross
		 * the threads' shares, and one group that spans them all. */
		make_keys(&k, 300007, 0, 0, 1);
		for (i = 0; i < 300007; i++) {
			free(k.p[i]);
			k.len[i] = 30;
			k.p[i] = malloc(k.len[i] + 1);
			snprintf((char *)k.p[i], 31, "group-%05zu/%018zu", (i * 7919) % 97, rnd() % 5003);
		}
		ok(check(&k, 300007, 0, 4) && check(&k, 300007, 1, 3),
		   "300007 keys in 97 groups tied on 12 bytes, on 3 and 4 threads");
		free_keys(&k, 300007);
		make_keys(&k, 300007, 30, 12, 3);
		ok(check(&k, 300007, 0, 4) && check(&k, 300007, 1, 4),
		   "300007 keys sharing 30 bytes, one group over every thread's share");
		free_keys(&k, 300007);
		/* Empty keys among long ones. */
		make_keys(&k, 5003, 0, 30, 2);
		ok(check(&k, 5003, 0, 2) && check(&k, 5003, 1, 2), "empty keys among keys of up to 30 bytes");
		free_keys(&k, 5003);
	}
	{
		/* str_words_whole: keys of 0 to 11 bytes, then one of 12 put
		 * at each place a thread's share or stretch begins or ends,
		 * ascending and descending, on 1 to 5 threads. */
		static const size_t n = 300007;
		static const size_t at[] = { 0, 1, 65535, 65536, 100001, 150003, 299999, 300006 };
		static const unsigned char key[12] = "abcdefghijkl";
		struct word128 *w = malloc(n * sizeof *w);
		size_t i, a;
		unsigned t, good = 1, d;
		for (d = 0; d < 2; d++) {
			const uint64_t mask = d ? ~(uint64_t)0 : 0;
			for (i = 0; i < n; i++)
				str_word(key, i % 12, mask, (uint32_t)i, &w[i]);
			for (t = 1; t <= 5; t++) {
				good &= str_words_whole(w, n, mask, t) && str_words_whole(w, 0, mask, t);
				for (a = 0; a < sizeof at / sizeof *at; a++) {
					str_word(key, 12, mask, (uint32_t)at[a], &w[at[a]]);
					/* Found in all n, and in the first 3 or
					 * 1000 words where it lies among them. */
					good &= !str_words_whole(w, n, mask, t);
					good &= (at[a] < 1000) == !str_words_whole(w, 1000, mask, t);
					good &= (at[a] < 3) == !str_words_whole(w, 3, mask, t);
					str_word(key, at[a] % 12, mask, (uint32_t)at[a], &w[at[a]]);
				}
			}
		}
		ok(good, "str_words_whole finds a key of 12 bytes among %zu of up to 11, wherever it lies", n);
		free(w);
	}
	return done_testing();
}
