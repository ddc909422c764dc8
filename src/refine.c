#include "config.h"
#include "refine.h"

#include <stdlib.h>
#include <string.h>

#include "kvkey.h"
#include "strkey.h"
#include "strtie.h"
#include "tie.h"
#include "util.h"

/* Jobs -u shares its comparisons out to, at the most. */
#define UNIQUE_JOBS 64

/* Key bits of word i: the word without its index. */
static inline uint64_t word_key(const struct enc_format *f, const void *words, size_t i)
{
	switch (f->kind) {
	case WORD32:
		return ((const uint32_t *)words)[i];
	case WORD64:
		return f->indexed ? ((const uint64_t *)words)[i] >> 32 : ((const uint64_t *)words)[i];
	case WORD128:
		break;
	}
	return ((const struct word128 *)words)[i].hi;
}

/* A run's lines, for the string keys in them. */
struct batch_ctx {
	const struct enc_format *f;
	const struct enc_batch *b;
};

/* The string key of line i of a run (a struct batch_ctx).  The line had
 * the field when it was encoded. */
static void batch_key(const void *ctx, size_t i, const unsigned char **key, size_t *len)
{
	const struct batch_ctx *c = ctx;
	const char *k;

	if (c->f->nkeys) {
		*key = (const unsigned char *)c->b->keys[i].p;
		*len = c->b->keys[i].len;
		return;
	}
	kvk_key(c->f, c->b->lines[i].p, c->b->lines[i].len, NULL, &k, len, NULL, 0);
	*key = (const unsigned char *)k;
}

/* batch_key's memory for line i asked for ahead: its entry in the table,
 * or the line, where its key is a field to be found in it. */
static void batch_ahead(const void *ctx, size_t i, bool near)
{
	const struct batch_ctx *c = ctx;

	if (c->f->nkeys)
		__builtin_prefetch(&c->b->keys[i]);
	else if (!near)
		__builtin_prefetch(&c->b->lines[i]);
	else if (c->f->field)
		__builtin_prefetch(c->b->lines[i].p);
}

/* The key of bin record i of a run (a struct batch_ctx), for tie.c. */
static size_t batch_bin_key(const void *ctx, size_t i, const unsigned char **key)
{
	const struct batch_ctx *c = ctx;
	size_t len;
	enc_record(c->f, c->b, i, key, &len);
	*key += c->f->key_off;
	return c->f->key_len;
}

/* Whether sorted words i-1 and i of a run hold equal keys: refined, equal
 * keys are next to each other. */
static bool same_key(const struct batch_ctx *ctx, const void *words, size_t i)
{
	const struct enc_format *f = ctx->f;
	const struct word128 *w = words;
	const unsigned char *x, *y;
	size_t xl, yl;

	if (f->str) {
		if (w[i].hi != w[i - 1].hi || w[i].lo >> 32 != w[i - 1].lo >> 32)
			return false;
		if (!str_tied(&w[i], &w[i - 1], f->mask))
			return true;
		batch_key(ctx, (uint32_t)w[i].lo, &x, &xl);
		batch_key(ctx, (uint32_t)w[i - 1].lo, &y, &yl);
		return str_cmp(x, xl, y, yl) == 0;
	}
	if (f->tail) {
		if (w[i].hi != w[i - 1].hi)
			return false;
		batch_bin_key(ctx, (size_t)w[i].lo, &x);
		batch_bin_key(ctx, (size_t)w[i - 1].lo, &y);
		return tie_cmp(x, f->key_len, y, f->key_len, false) == 0;
	}
	return word_key(f, words, i) == word_key(f, words, i - 1);
}

/* Below this many words -u looks at them on one thread. */
#define UNIQUE_SERIAL ((size_t)1 << 16)

struct same_job {
	const struct batch_ctx *ctx;
	const void *words;
	unsigned char *same;	/* same[i]: word i's key is word i-1's */
	size_t lo, hi;
};

static void same_job(void *arg)
{
	const struct same_job *j = arg;
	size_t i;
	for (i = j->lo; i < j->hi; i++)
		j->same[i] = same_key(j->ctx, j->words, i);
}

size_t rfn_unique(const struct enc_format *f, const struct enc_batch *b, void *words,
		  size_t count, const unsigned char *found)
{
	const size_t ws = word_size(f->kind);
	const struct batch_ctx ctx = { f, b };
	unsigned char *same = NULL;
	size_t i, kept = count ? 1 : 0;

	/* Keys are compared to their neighbour's on all threads (long binary
	 * keys are looked up in the records, far apart), then the first of
	 * each key is moved up here. */
	if (!found && count >= UNIQUE_SERIAL && f->threads > 1 && (same = malloc(count))) {
		struct same_job jobs[UNIQUE_JOBS];
		const unsigned n = f->threads < UNIQUE_JOBS ? f->threads : UNIQUE_JOBS;
		unsigned t;
		for (t = 0; t < n; t++)
			jobs[t] = (struct same_job){ &ctx, words, same, 1 + (count - 1) * t / n,
						     1 + (count - 1) * (t + 1) / n };
		run_parallel(same_job, jobs, sizeof *jobs, n);
		found = same;
	}
	/* Word i-1 is still in its place when word i is looked at: only
	 * places below i have been written. */
	for (i = 1; i < count; i++) {
		if (found ? found[i] : same_key(&ctx, words, i))
			continue;
		if (kept != i)
			memcpy((char *)words + kept * ws, (const char *)words + i * ws, ws);
		kept++;
	}
	free(same);
	return kept;
}

int rfn_ties(const struct enc_format *f, const struct enc_batch *b, void *words, size_t count,
	     unsigned char *same)
{
	const struct batch_ctx ctx = { f, b };
	if (f->tail) {
		const struct tie_key k = { batch_bin_key, &ctx, f->mask != 0 };
		tie_refine(words, count, &k);
		return 0;
	}
	const struct str_keys keys = { batch_key, batch_ahead, &ctx };
	return str_refine(words, count, f->mask, &keys, f->threads, same);
}
