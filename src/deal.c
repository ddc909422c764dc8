#include "config.h"
#include "deal.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The chunk a range's device waits for. */
struct request {
	unsigned char *dst;
	size_t first, count;	/* of the range's words */
	size_t filled;
	unsigned copying;	/* threads filling it now */
	bool open;		/* posted and not yet filled */
};

struct deal {
	const struct part_sieve *s;
	size_t ws;
	pthread_mutex_t lock;
	pthread_cond_t change;	/* a chunk asked for or filled, a range left */
	struct request *req;	/* per range: the last chunk asked for */
	bool *left;
	size_t claimed;		/* pieces taken by the threads, in order */
	unsigned nworkers;
	struct worker *workers;
	pthread_t *tids;
	unsigned nthreads;	/* started */
};

/* Hand range r's words [lo, hi) of a piece, at src, to the chunks that
 * take them: the one open now, and for a piece across two chunks, the
 * next one once its device asks for it. */
static void hand(struct deal *d, size_t r, size_t lo, size_t hi, const unsigned char *src)
{
	struct request *const q = &d->req[r];

	while (lo < hi) {
		unsigned char *dst;
		size_t n;

		pthread_mutex_lock(&d->lock);
		while (!d->left[r] && !(q->open && q->first <= lo && lo < q->first + q->count))
			pthread_cond_wait(&d->change, &d->lock);
		if (d->left[r]) {
			pthread_mutex_unlock(&d->lock);
			return;
		}
		n = (hi < q->first + q->count ? hi : q->first + q->count) - lo;
		dst = q->dst + (lo - q->first) * d->ws;
		q->copying++;
		pthread_mutex_unlock(&d->lock);
		/* The chunk stays open, its device waiting, until every word
		 * of it is in. */
		copy_stream(dst, src, n * d->ws);
		pthread_mutex_lock(&d->lock);
		q->filled += n;
		q->copying--;
		if (q->filled == q->count)
			q->open = false;
		if (!q->open || d->left[r])
			pthread_cond_broadcast(&d->change);
		pthread_mutex_unlock(&d->lock);
		lo += n;
		src += n * d->ws;
	}
}

struct worker {
	struct deal *d;
	unsigned char *buf;	/* a piece's words */
	size_t *at;		/* where each range's words begin in buf */
};

static void *work(void *arg)
{
	const struct worker *const w = arg;
	struct deal *const d = w->d;
	const struct part_sieve *const s = d->s;
	const size_t size = s->f->rec_size;
	size_t i, r;

	while ((i = __atomic_fetch_add(&d->claimed, 1, __ATOMIC_RELAXED)) < s->npieces) {
		const size_t *const before = s->start + i * s->stride;
		part_sieve_piece(s, i, w->buf, w->at);
		for (r = 0; r < s->nranges; r++)
			hand(d, r, before[r] / size, before[s->stride + r] / size,
			     w->buf + w->at[r] * d->ws);
	}
	return NULL;
}

static void deal_free(struct deal *d)
{
	unsigned t;

	for (t = 0; t < d->nworkers; t++) {
		free(d->workers[t].buf);
		free(d->workers[t].at);
	}
	free(d->workers);
	free(d->tids);
	free(d->req);
	free(d->left);
	pthread_cond_destroy(&d->change);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

int deal_open(struct deal **out, const struct part_sieve *s, unsigned threads)
{
	struct deal *d = calloc(1, sizeof *d);
	const size_t room = part_sieve_piece_room(s);
	unsigned t;
	int err = 0;

	*out = NULL;
	if (!d) {
		msg_errno(ENOMEM, "cannot deal the key ranges");
		return CLS_E_FAIL;
	}
	if (threads > s->npieces)
		threads = (unsigned)s->npieces;
	if (threads < 1)
		threads = 1;
	d->s = s;
	d->ws = word_size(s->f->kind);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->change, NULL);
	d->req = calloc(s->nranges, sizeof *d->req);
	d->left = calloc(s->nranges, sizeof *d->left);
	d->tids = calloc(threads, sizeof *d->tids);
	d->workers = calloc(threads, sizeof *d->workers);
	d->nworkers = d->workers ? threads : 0;
	for (t = 0; t < d->nworkers; t++) {
		d->workers[t].d = d;
		d->workers[t].buf = malloc(room);
		d->workers[t].at = malloc(s->nranges * sizeof *d->workers[t].at);
		if (!d->workers[t].buf || !d->workers[t].at)
			break;
	}
	if (!d->req || !d->left || !d->tids || !d->workers || t < threads) {
		deal_free(d);
		msg_errno(ENOMEM, "cannot deal the key ranges");
		return CLS_E_FAIL;
	}
	/* Fewer threads only deal slower; none cannot deal at all. */
	for (d->nthreads = 0; d->nthreads < threads; d->nthreads++)
		if ((err = pthread_create(&d->tids[d->nthreads], NULL, work,
					  &d->workers[d->nthreads])))
			break;
	if (d->nthreads == 0) {
		deal_free(d);
		msg_errno(err, "cannot start a thread to deal the key ranges");
		return CLS_E_FAIL;
	}
	*out = d;
	return 0;
}

int deal_words(struct deal *d, size_t r, size_t first, size_t count, void *dst)
{
	struct request *const q = &d->req[r];
	size_t next;

	if (count == 0)
		return 0;
	pthread_mutex_lock(&d->lock);
	/* Each chunk goes on where the last one ended. */
	next = q->first + q->count;
	if (first != next || d->left[r]) {
		pthread_mutex_unlock(&d->lock);
		msg_err("range %zu's words asked for out of order (%zu, where %zu was next)", r,
			first, next);
		return CLS_E_FAIL;
	}
	*q = (struct request){ dst, first, count, 0, 0, true };
	pthread_cond_broadcast(&d->change);
	while ((q->open && !d->left[r]) || q->copying)
		pthread_cond_wait(&d->change, &d->lock);
	if (q->open) {
		/* Closed while it waited. */
		q->open = false;
		pthread_mutex_unlock(&d->lock);
		msg_err("range %zu's words were left undealt", r);
		return CLS_E_FAIL;
	}
	pthread_mutex_unlock(&d->lock);
	return 0;
}

void deal_leave(struct deal *d, size_t r)
{
	pthread_mutex_lock(&d->lock);
	d->left[r] = true;
	pthread_cond_broadcast(&d->change);
	pthread_mutex_unlock(&d->lock);
}

void deal_close(struct deal *d)
{
	size_t r;
	unsigned t;

	if (!d)
		return;
	for (r = 0; r < d->s->nranges; r++)
		deal_leave(d, r);
	for (t = 0; t < d->nthreads; t++)
		pthread_join(d->tids[t], NULL);
	deal_free(d);
}
