#include "config.h"
#include "lineahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "encode_kv.h"
#include "util.h"

/* Bytes of a chunk at the least (it ends at the first line end past
 * them): a few milliseconds of one thread's parse. */
#define CHUNK ((size_t)4 << 20)
/* Threads that parse chunks, at the most, and one for every this many of
 * the sort's: the stream's reader and writer, the output's room and the
 * device's start take others meanwhile. */
#define PARSERS_MAX 8
#define THREADS_PER_PARSER 4

struct chunk {
	const char *start, *end;
	size_t first;		/* index of its first line */
	size_t lines;
};

struct line_ahead {
	const struct enc_format *f;
	const char *data;
	uint64_t memory, max_lines;
	pthread_mutex_t lock;
	pthread_cond_t change;	/* bytes came, the stream ended, chunks were
				 * counted or parsed, or stop was set */
	uint64_t avail;		/* bytes delivered */
	uint64_t size;		/* once ended: the stream's length */
	bool ended, stop, failed, counted, adopted;
	double t_after;		/* seconds from the stream's end to the last line parsed */
	struct enc_batch b;	/* words and line table for cap lines */
	size_t cap;
	struct chunk *q;	/* chunks counted, in order */
	size_t nq, qcap;
	size_t next;		/* the next chunk to parse */
	size_t busy;		/* chunks being parsed */
	size_t parsed;		/* chunks parsed */
	size_t lines;		/* lines counted */
	uint64_t at;		/* bytes counted */
	pthread_t counter, parsers[PARSERS_MAX];
	unsigned nparsers, started;	/* parsers running, and started */
	bool counter_running;
};

bool la_applies(const struct enc_format *f)
{
	return f->fmt == CLS_FMT_KV && !f->nkeys && !f->skip_bad && !f->unique &&
	       f->threads >= THREADS_PER_PARSER;
}

/* Room in a's words and table for want lines, grown by doubling: with the
 * lock held and no chunk being parsed (the arrays may move).  False
 * (failed set) past the memory or the index a run allows. */
static bool room_for(struct line_ahead *a, size_t want)
{
	const size_t ws = word_size(a->f->kind), per = ws + sizeof(struct kv_line);
	size_t cap = a->cap ? a->cap : 1;
	void *w, *l;

	while (cap < want)
		cap *= 2;
	if (cap == a->cap)
		return true;
	if (want > a->max_lines || (uint64_t)want * per > a->memory)
		return false;
	if ((uint64_t)cap * per > a->memory)
		cap = (size_t)(a->memory / per);
	while (a->busy)
		pthread_cond_wait(&a->change, &a->lock);
	if (!(w = realloc(a->b.words, cap * ws)))
		return false;
	a->b.words = w;
	if (!(l = realloc(a->b.lines, cap * sizeof(struct kv_line))))
		return false;
	a->b.lines = l;
	mem_huge(a->b.words, cap * ws);
	mem_huge(a->b.lines, cap * sizeof(struct kv_line));
	a->cap = cap;
	return true;
}

/* The end of the chunk that starts at a->at, with the lock held: past the
 * first line end CHUNK bytes on, or the stream's end; NULL while neither
 * has come. */
static const char *chunk_end(const struct line_ahead *a)
{
	const char *p = a->data + a->at, *nl;
	const uint64_t have = (a->ended ? a->size : a->avail) - a->at;

	if (have <= CHUNK)
		return a->ended ? p + have : NULL;
	nl = memchr(p + CHUNK, a->f->eol, (size_t)(have - CHUNK));
	return nl ? nl + 1 : a->ended ? p + have : NULL;
}

/* Cuts the stream into chunks and counts their lines, in order. */
static void *count_main(void *arg)
{
	struct line_ahead *a = arg;

	pthread_mutex_lock(&a->lock);
	while (!a->stop && !a->failed && !(a->ended && a->at == a->size)) {
		const char *p = a->data + a->at, *end = chunk_end(a);
		size_t n;

		if (!end) {
			pthread_cond_wait(&a->change, &a->lock);
			continue;
		}
		pthread_mutex_unlock(&a->lock);
		n = enc_kv_count_lines(p, (size_t)(end - p), a->f->eol);
		pthread_mutex_lock(&a->lock);
		if (a->nq == a->qcap) {
			const size_t qcap = a->qcap ? 2 * a->qcap : 256;
			struct chunk *q = realloc(a->q, qcap * sizeof *q);
			if (!q) {
				a->failed = true;
				break;
			}
			a->q = q;
			a->qcap = qcap;
		}
		if (!room_for(a, a->lines + n)) {
			a->failed = true;
			break;
		}
		a->q[a->nq++] = (struct chunk){ p, end, a->lines, n };
		a->lines += n;
		a->at += (uint64_t)(end - p);
		pthread_cond_broadcast(&a->change);
	}
	a->counted = true;
	pthread_cond_broadcast(&a->change);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Parses counted chunks, whichever comes next. */
static void *parse_main(void *arg)
{
	struct line_ahead *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct chunk c;
		bool ok;

		if (a->stop || a->failed || (a->counted && a->next == a->nq))
			break;
		if (a->next == a->nq) {
			pthread_cond_wait(&a->change, &a->lock);
			continue;
		}
		c = a->q[a->next++];
		a->busy++;
		pthread_mutex_unlock(&a->lock);
		ok = enc_kv_parse(a->f, &a->b, c.start, c.end, c.first, c.lines);
		pthread_mutex_lock(&a->lock);
		a->busy--;
		a->parsed++;
		if (!ok)
			a->failed = true;
		pthread_cond_broadcast(&a->change);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Wait for every thread of a to end. */
static void join_all(struct line_ahead *a)
{
	unsigned i;

	if (a->counter_running)
		pthread_join(a->counter, NULL);
	a->counter_running = false;
	for (i = 0; i < a->nparsers; i++)
		pthread_join(a->parsers[i], NULL);
	a->nparsers = 0;
}

struct line_ahead *la_start(const struct enc_format *f, const unsigned char *data, size_t len,
			    uint64_t memory, uint64_t max_lines)
{
	struct line_ahead *a = calloc(1, sizeof *a);
	unsigned want = f->threads / THREADS_PER_PARSER, i;

	if (!a)
		return NULL;
	a->f = f;
	a->data = (const char *)data;
	a->memory = memory;
	a->max_lines = max_lines;
	a->avail = len;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->change, NULL);
	pthread_mutex_lock(&a->lock);
	/* Room for the lines of about twice the bytes come so far. */
	if (!room_for(a, 2 * enc_kv_count_lines(a->data, len, f->eol) + 1)) {
		pthread_mutex_unlock(&a->lock);
		la_free(a);
		return NULL;
	}
	pthread_mutex_unlock(&a->lock);
	a->counter_running = pthread_create(&a->counter, NULL, count_main, a) == 0;
	if (want > PARSERS_MAX)
		want = PARSERS_MAX;
	for (i = 0; a->counter_running && i < want; i++) {
		if (pthread_create(&a->parsers[a->nparsers], NULL, parse_main, a))
			break;
		a->nparsers++;
	}
	a->started = a->nparsers;
	if (!a->nparsers) {
		la_free(a);
		return NULL;
	}
	return a;
}

void la_grow(struct line_ahead *a, uint64_t bytes)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	if (!a->stop && !a->ended && bytes > a->avail) {
		a->avail = bytes;
		pthread_cond_broadcast(&a->change);
	}
	pthread_mutex_unlock(&a->lock);
}

void la_stop(struct line_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->change);
	pthread_mutex_unlock(&a->lock);
	join_all(a);
}

bool la_lines(struct line_ahead *a, const struct in_file *file, uint64_t *lines)
{
	const double t0 = now_sec();
	bool ok;

	if (!a || file->stream || (const char *)file->data != a->data)
		return false;
	pthread_mutex_lock(&a->lock);
	if (!a->ended && !a->stop) {
		a->ended = true;
		a->size = file->size;
		pthread_cond_broadcast(&a->change);
	}
	pthread_mutex_unlock(&a->lock);
	join_all(a);
	a->t_after = now_sec() - t0;
	ok = a->ended && !a->stop && !a->failed && a->counted && a->at == a->size &&
	     a->parsed == a->nq;
	if (ok)
		*lines = a->lines;
	return ok;
}

bool la_adopt(struct line_ahead *a, size_t cap, struct enc_batch *b)
{
	if (!a || a->adopted || !a->ended || a->stop || a->failed || a->lines != cap ||
	    a->parsed != a->nq || a->at != a->size)
		return false;
	a->adopted = true;
	b->words = a->b.words;
	b->lines = a->b.lines;
	b->parsed = a->lines;
	b->parsed_at = (const unsigned char *)a->data;
	a->b.words = NULL;
	a->b.lines = NULL;
	return true;
}

void la_free(struct line_ahead *a)
{
	if (!a)
		return;
	la_stop(a);
	if (a->adopted)
		msg_info(2, "%zu lines parsed while the stream arrived (%zu chunks, %u parsing "
			 "thread%s), the last %.3f s after its end", a->lines, a->nq, a->started,
			 a->started == 1 ? "" : "s", a->t_after);
	else if (a->ended)
		msg_info(2, "lines parsed again after the stream: %s",
			 a->failed ? "a line without a key, or too many for one run's memory" :
			 "more than one run");
	else if (a->stop)
		msg_info(2, "lines parsed ahead: stopped after %llu bytes, where the stream left "
			 "its memory", (unsigned long long)a->at);
	free(a->b.words);
	free(a->b.lines);
	free(a->q);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->change);
	free(a);
}
