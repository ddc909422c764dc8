#include "config.h"
#include "host_engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "radix.h"
#include "util.h"

/* Runs never hold fewer words than this, whatever the memory budget. */
#define MIN_RUN 1024

struct hst {
	struct engine base;	/* first: a struct engine * is a struct hst * */
	struct eng_config c;
	void *scratch;		/* cap words, made by the first sort that takes
				 * no room of its caller's */
	void *words;		/* cap words, made by the first eng_sort (runs
				 * sorted in their caller's memory need none) */
	size_t cap;
	double t_sort;		/* in the radix sort */
	/* While a sort's consume runs: the words it sorted and the room it
	 * went through, n of them (hst_spare). */
	void *at_words, *at_room;
	size_t at_n;
};

static int hst_capacity(struct engine *e, size_t want, size_t *cap)
{
	struct hst *h = (struct hst *)e;
	const size_t ws = word_size(h->c.kind);
	uint64_t most = e->memory / (h->c.beside + 2 * ws);

	/* -S bounds a run here too: in bytes, or in percent of --memory. */
	if (h->c.buffer_bytes && most > h->c.buffer_bytes / ws)
		most = h->c.buffer_bytes / ws;
	if (h->c.buffer_percent > 0 &&
	    most > (uint64_t)((double)e->memory * 2 * h->c.buffer_percent / 100.0) / ws)
		most = (uint64_t)((double)e->memory * 2 * h->c.buffer_percent / 100.0) / ws;
	if (most < MIN_RUN)
		most = MIN_RUN;
	if (most > want)
		most = want;
	if (h->cap < most) {
		free(h->words);
		free(h->scratch);
		h->words = h->scratch = NULL;
		h->cap = (size_t)most;
	}
	*cap = (size_t)most;
	return 0;
}

/* The engine's scratch words, made now if they are not yet. */
static void *scratch(struct hst *h)
{
	const size_t ws = word_size(h->c.kind);

	if (!h->scratch && (h->scratch = xmalloc(h->cap * ws, "the host engine's words")))
		/* Faulted in on all threads at once: much faster than one
		 * fault at a time as the sort writes them. */
		populate_parallel(h->scratch, h->cap * ws, h->c.threads);
	return h->scratch;
}

/* Sort the n words produce fills at words (cap of them at least), on
 * their bits from low up, through room (n words) or the engine's
 * scratch; counts (low 0), where not NULL, describes them. */
static int sort_at(struct hst *h, size_t n, void *words, void *room, unsigned low,
		   const struct radix_counts *counts, eng_producer produce, eng_consumer consume,
		   void *ctx)
{
	void *sorted;
	double t0;
	int rc;

	if (n > h->cap) {
		msg_err("cannot hold %zu words on the host", n);
		return CLS_E_FAIL;
	}
	if (!room && !(room = scratch(h)))
		return CLS_E_FAIL;
	if ((rc = produce(ctx, words, 0, n)))
		return rc;
	t0 = now_sec();
	rc = counts && low == 0
		     ? radix_sort_counted(words, room, n, h->c.kind, h->c.threads, counts, &sorted)
		     : radix_sort_above(words, room, n, h->c.kind, low, h->c.threads, &sorted);
	h->t_sort += now_sec() - t0;
	if (rc)
		return rc;
	h->at_words = words;
	h->at_room = room;
	h->at_n = n;
	/* None: count 0 means something else to a consumer (engine.h). */
	rc = n ? consume(ctx, sorted, 0, n) : 0;
	h->at_words = h->at_room = NULL;
	return rc;
}

static void *hst_spare(struct engine *e, const void *sorted, size_t *bytes)
{
	struct hst *h = (struct hst *)e;

	if (!h->at_words)
		return NULL;
	*bytes = h->at_n * word_size(h->c.kind);
	return sorted == h->at_words ? h->at_room : h->at_words;
}

/* Sort n words in the engine's own, made now if they are not yet. */
static int sort_own(struct hst *h, size_t n, unsigned low, eng_producer produce,
		    eng_consumer consume, void *ctx)
{
	const size_t ws = word_size(h->c.kind);

	if (n == 0)
		return 0;
	if (!h->words && n <= h->cap) {
		if (!(h->words = xmalloc(h->cap * ws, "the host engine's words")))
			return CLS_E_FAIL;
		populate_parallel(h->words, h->cap * ws, h->c.threads);
	}
	return sort_at(h, n, h->words, NULL, low, NULL, produce, consume, ctx);
}

static int hst_sort(struct engine *e, size_t n, eng_producer produce, eng_consumer consume,
		    void *ctx)
{
	return sort_own((struct hst *)e, n, 0, produce, consume, ctx);
}

static int hst_sort_above(struct engine *e, size_t n, unsigned low, eng_producer produce,
			  eng_consumer consume, void *ctx)
{
	msg_info(2, "host engine: %zu records sorted in their words, on the words' bits from %u up",
		 n, low);
	return sort_own((struct hst *)e, n, low, produce, consume, ctx);
}

static int hst_sort_in(struct engine *e, size_t n, void *words, void *room, unsigned low,
		       const struct radix_counts *counts, eng_producer produce,
		       eng_consumer consume, void *ctx)
{
	struct hst *h = (struct hst *)e;

	if (n == 0)
		return 0;
	if (low)
		msg_info(2, "host engine: %zu records sorted in their words, in place, on the "
			 "words' bits from %u up", n, low);
	else
		msg_info(2, "host engine: %zu words sorted in place", n);
	return sort_at(h, n, words, room, low, counts, produce, consume, ctx);
}

static void hst_report(const struct engine *e)
{
	const struct hst *h = (const struct hst *)e;
	msg_info(1, "host engine: radix sort %.3f s on %u thread%s", h->t_sort, h->c.threads,
		 h->c.threads == 1 ? "" : "s");
}

static void hst_close(struct engine *e)
{
	struct hst *h = (struct hst *)e;
	free(h->words);
	free(h->scratch);
	free(h);
}

/* No merge nor gather of its own: eng_merge sorts, and its sort's output
 * gathers the records. */
static const struct eng_ops hst_ops = {
	.capacity = hst_capacity,
	.sort = hst_sort,
	.report = hst_report,
	.close = hst_close,
	.sort_in = hst_sort_in,
	.sort_above = hst_sort_above,
	.spare = hst_spare,
};

int hst_open(struct engine **e, const struct eng_config *c)
{
	struct hst *h = calloc(1, sizeof *h);
	if (!h) {
		msg_errno(ENOMEM, "cannot start the host engine");
		return CLS_E_FAIL;
	}
	h->base.ops = &hst_ops;
	h->base.host = true;
	snprintf(h->base.name, sizeof h->base.name, "the host (%u thread%s)", c->threads,
		 c->threads == 1 ? "" : "s");
	h->c = *c;
	h->base.memory = c->memory;
	*e = &h->base;
	return 0;
}
