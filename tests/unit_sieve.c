/* Unit tests of the cut into key ranges (partition.c, deal.c): the count
 * of each range's records, the sort words of every range dealt straight
 * from the input to takers that ask for them chunk by chunk at once, and
 * the copies of one range and of all, each against a plain
 * classification of every record by (key, position).  Few splitters
 * (compared one by one) and many (the table) both run; inputs come in
 * several files, of sizes around the block and the piece. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../src/deal.h"
#include "../src/keys.h"
#include "../src/partition.h"
#include "../src/sieve.h"
#include "../src/util.h"
#include "tap.h"

enum shape { RANDOM, FEW, EQUAL };
static const char *const shape_name[] = { "random", "few", "equal" };

struct layout {
	const char *key;
	size_t rec, off;
	bool desc;
};

static const struct layout layouts[] = {
	{ "u32", 0, 0, false },		/* bare 32-bit words */
	{ "i64", 0, 0, true },		/* bare 64-bit words, descending */
	{ "u32", 8, 4, false },		/* a 32-bit key with its index */
	{ "f64", 16, 8, false },	/* a 64-bit key with its index */
	{ "i32", 12, 0, true },		/* a record size of no inline case */
};

static struct enc_format fmt(const struct layout *l)
{
	struct cls_opts o;
	struct enc_format f;

	memset(&o, 0, sizeof o);
	o.format = CLS_FMT_BIN;
	o.key = key_type_find(l->key);
	o.record_size = l->rec;
	o.key_offset = l->off;
	o.descending = l->desc;
	o.threads = 3;
	if (enc_setup(&f, &o))
		abort();
	return f;
}

static void fill(unsigned char *buf, const struct enc_format *f, size_t n, enum shape s)
{
	size_t i, b;

	for (i = 0; i < n * f->rec_size; i++)
		buf[i] = (unsigned char)rnd();
	for (i = 0; i < n && s != RANDOM; i++) {
		const uint64_t v = s == FEW ? rnd() % 3 : 7;
		for (b = 0; b < f->kt->width; b++)
			buf[i * f->rec_size + f->key_off + b] = (unsigned char)(v >> (8 * b));
	}
}

/* Record g's range: how many splitters lie at or below (key, position). */
static size_t range_of_record(const struct enc_format *f, const unsigned char *rec, uint64_t g,
			      const struct part_key *sp, size_t nsp)
{
	const uint64_t pos = g * f->rec_size;
	uint64_t key;
	size_t r = 0;

	if (enc_key(f, rec, f->rec_size, &key) != KEY_OK)
		abort();
	while (r < nsp && (sp[r].key < key || (sp[r].key == key && sp[r].pos <= pos)))
		r++;
	return r;
}

/* A range's taker: asks for its words in chunks of the sizes given (0
 * ends them), into got, then leaves. */
struct taker {
	struct deal *d;
	size_t r, ws;
	const size_t *chunks;
	unsigned char *got;
	size_t taken;
	int rc;
};

static void *take(void *arg)
{
	struct taker *t = arg;
	size_t i;

	for (i = 0; t->rc == 0 && t->chunks[i]; i++) {
		t->rc = deal_words(t->d, t->r, t->taken, t->chunks[i], t->got + t->taken * t->ws);
		t->taken += t->chunks[i];
	}
	deal_leave(t->d, t->r);
	return NULL;
}

/* Deal every range of s (want[r]: its words) to a taker of its own;
 * quit: a range that leaves after its first chunk. */
static bool dealt(const struct part_sieve *s, unsigned char *const *want, const size_t *m,
		  size_t ws, size_t quit)
{
	struct taker *tk = calloc(s->nranges, sizeof *tk);
	pthread_t *tid = calloc(s->nranges, sizeof *tid);
	size_t **chunks = calloc(s->nranges, sizeof *chunks);
	struct deal *d;
	bool good = deal_open(&d, s, 3) == 0;
	size_t r, i, left;

	for (r = 0; d && r < s->nranges; r++) {
		/* Chunks of random sizes, of one word up to the whole range. */
		chunks[r] = calloc(m[r] + 1, sizeof **chunks);
		for (i = 0, left = m[r]; left; i++) {
			const size_t c = rnd() % 3 == 0 ? left : 1 + rnd() % (left < 3000 ? left : 3000);
			chunks[r][i] = c;
			left -= c;
			if (r == quit)
				break;
		}
		tk[r] = (struct taker){ d, r, ws, chunks[r], malloc(m[r] * ws + 1), 0, 0 };
		memset(tk[r].got, 0xa5, m[r] * ws);
		if (pthread_create(&tid[r], NULL, take, &tk[r]))
			abort();
	}
	for (r = 0; d && r < s->nranges; r++) {
		pthread_join(tid[r], NULL);
		good &= tk[r].rc == 0 && (tk[r].taken == m[r] || r == quit) &&
			memcmp(tk[r].got, want[r], tk[r].taken * ws) == 0;
	}
	if (d)
		deal_close(d);
	for (r = 0; r < s->nranges; r++) {
		free(tk[r].got);
		free(chunks[r]);
	}
	free(chunks);
	free(tk);
	free(tid);
	return good;
}

/* Check one input of n records (in three files) against nsp splitters. */
static void check(const struct enc_format *f, const unsigned char *buf, size_t n, size_t nranges,
		  const char *what)
{
	const size_t rs = f->rec_size, ws = word_size(f->kind);
	const size_t cut1 = n / 3, cut2 = n - n / 5;
	struct in_file files[3];
	struct in_set in = { files, 3, (uint64_t)n * rs };
	struct part_key *sp = calloc(nranges, sizeof *sp);
	struct part_sieve s;
	struct part_set all, placed;
	unsigned char *placed_buf = malloc(n * rs + 1);
	unsigned char *want_recs = malloc(n * rs + 1), *want_words = malloc(n * ws + 1);
	unsigned char **want = calloc(nranges, sizeof *want);
	size_t *m = calloc(nranges, sizeof *m);
	size_t nsp, r, g, total = 0;
	bool counts_ok = true, copy_ok = true, all_ok = true, placed_ok = true, words_ok, quit_ok;

	memset(files, 0, sizeof files);
	files[0] = (struct in_file){ .name = "a", .data = buf, .size = cut1 * rs };
	files[1] = (struct in_file){ .name = "b", .data = buf + cut1 * rs, .size = (cut2 - cut1) * rs };
	files[2] = (struct in_file){ .name = "c", .data = buf + cut2 * rs, .size = (n - cut2) * rs };
	nsp = part_pick(f, &in, n, nranges, 64, false, sp);
	if (part_sieve_init(&s, f, &in, 0, sp, nsp, true) ||
	    part_scatter(f, &in, 0, sp, nsp, NULL, &all) ||
	    part_scatter(f, &in, 0, sp, nsp, placed_buf, &placed))
		abort();
	for (r = 0; r <= nsp; r++) {
		struct part_set one;
		want[r] = want_words + total * ws;
		for (g = 0; g < n; g++) {
			const unsigned char *rec = buf + g * rs;
			if (range_of_record(f, rec, g, sp, nsp) != r)
				continue;
			memcpy(want_recs + m[r] * rs, rec, rs);
			f->kt->encode(rec + f->key_off, rs, 1, f->mask, want[r] + m[r] * ws,
				      f->indexed, (uint32_t)g);
			m[r]++;
		}
		counts_ok &= part_sieve_bytes(&s, r) == m[r] * rs;
		copy_ok &= part_sieve_copy(&s, r, NULL, &one) == 0 && one.count == 1 &&
			   one.ranges[0].bytes == m[r] * rs &&
			   memcmp(one.files[0].data, want_recs, m[r] * rs) == 0;
		part_free(&one);
		all_ok &= all.ranges[r].bytes == m[r] * rs &&
			  memcmp(all.files[r].data, want_recs, m[r] * rs) == 0;
		placed_ok &= placed.ranges[r].bytes == m[r] * rs &&
			     placed.files[r].data == placed_buf + total * rs &&
			     memcmp(placed.files[r].data, want_recs, m[r] * rs) == 0;
		total += m[r];
	}
	words_ok = dealt(&s, want, m, ws, SIZE_MAX);
	quit_ok = dealt(&s, want, m, ws, nsp / 2);
	ok(counts_ok && total == n && s.nranges == nsp + 1, "%s: counts of %zu ranges", what,
	   nsp + 1);
	ok(words_ok, "%s: words of every range dealt, chunk by chunk", what);
	ok(quit_ok, "%s: a range that leaves early holds up no other", what);
	ok(copy_ok, "%s: each range copied out", what);
	ok(all_ok && all.count == nsp + 1, "%s: every range copied", what);
	ok(placed_ok && placed.count == nsp + 1 && !placed.buf,
	   "%s: every range copied into the caller's memory, one after another", what);
	part_free(&all);
	part_free(&placed);
	free(placed_buf);
	part_sieve_free(&s);
	free(sp);
	free(want_recs);
	free(want_words);
	free(want);
	free(m);
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 511, 513, 4099, 70001 };
	static const size_t ranges[] = { 2, 3, 4, 12 };
	size_t l, z, r;
	int sh;

	for (l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
		const struct enc_format f = fmt(&layouts[l]);
		for (z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
			unsigned char *buf = malloc(sizes[z] * f.rec_size + 1);
			for (sh = RANDOM; sh <= EQUAL; sh++) {
				fill(buf, &f, sizes[z], (enum shape)sh);
				for (r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
					char what[128];
					snprintf(what, sizeof what, "%s%s in %zu-byte records, %zu %s, %zu ranges",
						 layouts[l].key, layouts[l].desc ? " descending" : "",
						 f.rec_size, sizes[z], shape_name[sh], ranges[r]);
					check(&f, buf, sizes[z], ranges[r], what);
				}
			}
			free(buf);
		}
	}
	return done_testing();
}
