#include "config.h"
#include "lineahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arriving.h"
#include "encode_kv.h"
#include "util.h"

/* Bytes of a chunk at the least (it ends at the first line end past
 * them): a few milliseconds of one thread's parse. */
#define CHUNK ((size_t)4 << 20)
/* ...and once a stream has ended: what is left then, parsed while the
 * sort waits for it, is shared by the parsers.  In chunks of CHUNK, the
 * last 4 MiB of 1 GiB of kv lines on an H200 machine took one parser 4-7
 * ms after the stream's last byte. */
#define END_CHUNK ((size_t)256 << 10)
/* Lines of this many bytes or more on average (the first chunk's) have
 * the line table written as they are parsed.  Shorter ones leave it for
 * whatever reads it, which the host's deal into a mapped output and the
 * device's sort of the text do not: 16 bytes a line neither written nor
 * taken (on 2 cores, 256 MiB of kv lines of 22 bytes through a pipe, 0.83
 * of the time).  The deal then finds each line's end twice (log-shaped
 * lines of 172 bytes took 1.08 of the time without the table). */
#define TABLE_LINE_BYTES 64
/* Threads that parse chunks of a stream: half the sort's less one, at the
 * most STREAM_PARSERS (on 16 threads, 7 kept up with a pipe of 2 GB/s);
 * the stream's reader and writer, the output's room and the device's
 * start take others meanwhile.  A whole input's: all but the counter. */
#define STREAM_PARSERS 8
#define PARSERS_MAX 64

struct chunk {
	const char *start, *end;
	size_t first;		/* index of its first line */
	size_t lines;
	bool done;		/* parsed */
};

struct line_ahead {
	const struct enc_format *f;
	const char *data;
	pthread_mutex_t lock;
	pthread_cond_t change;	/* chunks were counted or parsed, the stream
				 * ended, or stop was set */
	struct arriving in;	/* the stream's bytes, for the counter; woken
				 * too where the stream ended or stop was set */
	uint64_t size;		/* once ended: the stream's length */
	bool whole;		/* the input was whole from the start (a file) */
	bool ended, stop, failed, counted, joined, adopted;
	bool table;		/* the line table is written as the lines are
				 * parsed; else it is left due (enc_kv_lines) */
	double t_ended;		/* when the input ended */
	double t_after;		/* seconds from then to the last line parsed */
	double t_wait;		/* of them, seconds la_adopt waited */
	double t_count, t_parse;	/* seconds counting, and parsing (all threads') */
	/* Words and line table for cap lines: regions reserved whole, whose
	 * pages are taken as the lines fill them (they never move). */
	struct enc_batch b;
	size_t cap, words_bytes, lines_bytes, keys_bytes;
	struct chunk *q;	/* chunks counted, in order */
	size_t nq, qcap;
	size_t next;		/* the next chunk to parse */
	size_t parsed;		/* chunks parsed */
	size_t in_order;	/* chunks parsed, all those before them too */
	la_told told;		/* told of those, and of the words' end */
	size_t lines;		/* lines counted */
	uint64_t at;		/* bytes counted */
	pthread_t counter, parsers[PARSERS_MAX];
	unsigned nparsers, started;	/* parsers running, and started */
	bool counter_running;
};

/* On 2 cores, 256 MiB of kv lines through a pipe: parsed while they
 * arrived by one parser, 0.71 -> 0.62 s and 0.80 -> 0.73 s (12201611
 * lines; pairs taking turns). */
bool la_applies(const struct enc_format *f, bool stream)
{
	return f->fmt == CLS_FMT_KV && !f->skip_bad && !f->unique && f->threads >= (stream ? 2 : 4);
}

static unsigned parsers_for(const struct enc_format *f, uint64_t whole)
{
	const unsigned n = whole ? f->threads - 1 : f->threads < 4 ? 1 : f->threads / 2 - 1;
	const unsigned most = whole ? PARSERS_MAX : STREAM_PARSERS;
	return n > most ? most : n;
}

/* A region of bytes of memory reserved, its pages taken on first use
 * (huge ones where the system gives them); NULL where it cannot be had. */
static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mem_huge(p, bytes);
	return p;
}

/* Release a's words and line table. */
static void unreserve(struct line_ahead *a)
{
	if (a->told && a->b.words)
		a->told(NULL, 0);
	if (a->b.words)
		munmap(a->b.words, a->words_bytes);
	if (a->b.lines)
		munmap(a->b.lines, a->lines_bytes);
	if (a->b.keys)
		munmap(a->b.keys, a->keys_bytes);
	a->b.words = NULL;
	a->b.lines = NULL;
	a->b.keys = NULL;
	enc_free_keys(&a->b);
}

/* The end of the chunk that starts at a->at, with the lock held and avail
 * bytes delivered: past the first line end CHUNK bytes on, or the stream's
 * end; NULL while neither has come. */
static const char *chunk_end(const struct line_ahead *a, uint64_t avail)
{
	const char *p = a->data + a->at, *nl;
	const uint64_t have = (a->ended ? a->size : avail) - a->at;
	const size_t least = a->ended && !a->whole ? END_CHUNK : CHUNK;

	if (have <= least)
		return a->ended ? p + have : NULL;
	nl = memchr(p + least, a->f->eol, (size_t)(have - least));
	return nl ? nl + 1 : a->ended ? p + have : NULL;
}

/* Cuts the stream into chunks and counts their lines, in order. */
static void *count_main(void *arg)
{
	struct line_ahead *a = arg;

	pthread_mutex_lock(&a->lock);
	while (!a->stop && !a->failed && !(a->ended && a->at == a->size)) {
		const uint64_t avail = arriving_seen(&a->in);
		const char *p = a->data + a->at, *end = chunk_end(a, avail);
		double t0;
		size_t n;

		if (!end) {
			arriving_wait(&a->in, &a->lock, avail);
			continue;
		}
		pthread_mutex_unlock(&a->lock);
		t0 = now_sec();
		n = enc_kv_count_lines(p, (size_t)(end - p), a->f->eol);
		t0 = now_sec() - t0;
		pthread_mutex_lock(&a->lock);
		a->t_count += t0;
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
		if (a->lines + n > a->cap) {
			a->failed = true;
			break;
		}
		/* Before any line is parsed: the table, where the first
		 * chunk's lines are long enough for it. */
		if (!a->nq && !a->table && n && (uint64_t)(end - p) / n >= TABLE_LINE_BYTES) {
			if (!(a->b.lines = reserve(a->lines_bytes))) {
				a->failed = true;
				break;
			}
			a->table = true;
		}
		a->q[a->nq++] = (struct chunk){ p, end, a->lines, n, false };
		a->lines += n;
		a->at += (uint64_t)(end - p);
		pthread_cond_broadcast(&a->change);
	}
	a->counted = true;
	pthread_cond_broadcast(&a->change);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* With the lock held, a chunk parsed: where the chunks parsed in order
 * are more, told so. */
static void tell_in_order(struct line_ahead *a)
{
	const size_t was = a->in_order;

	while (a->in_order < a->nq && a->q[a->in_order].done)
		a->in_order++;
	if (a->told && a->in_order > was)
		a->told(a->b.words, a->q[a->in_order - 1].first + a->q[a->in_order - 1].lines);
}

/* Parses counted chunks, whichever comes next. */
static void *parse_main(void *arg)
{
	struct line_ahead *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct enc_block *blocks = NULL;
		struct chunk c;
		size_t at;
		double t0;
		bool ok;

		if (a->stop || a->failed || (a->counted && a->next == a->nq))
			break;
		if (a->next == a->nq) {
			pthread_cond_wait(&a->change, &a->lock);
			continue;
		}
		at = a->next++;
		c = a->q[at];
		pthread_mutex_unlock(&a->lock);
		t0 = now_sec();
		ok = enc_kv_parse(a->f, &a->b, c.start, c.end, c.first, c.lines, &blocks);
		t0 = now_sec() - t0;
		pthread_mutex_lock(&a->lock);
		/* The composed keys' blocks are the words', kept with them. */
		while (blocks) {
			struct enc_block *next = blocks->next;
			blocks->next = a->b.blocks;
			a->b.blocks = blocks;
			blocks = next;
		}
		a->t_parse += t0;
		a->parsed++;
		a->q[at].done = true;
		if (!ok)
			a->failed = true;
		else
			tell_in_order(a);
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

/* The input has ended at size bytes, with the lock held. */
static void end_at(struct line_ahead *a, uint64_t size)
{
	a->ended = true;
	a->size = size;
	a->t_ended = now_sec();
	pthread_cond_broadcast(&a->change);
	arriving_wake(&a->in);
}

/* Whether the line table is read where nothing makes it first: by the
 * rounds of ties and -u (refine.h).  Elsewhere its entries may be left
 * (TABLE_LINE_BYTES). */
static bool table_wanted(const struct enc_format *f)
{
	return f->tail || f->str || f->unique || f->nkeys;
}

struct line_ahead *la_start(const struct enc_format *f, const unsigned char *data, size_t len,
			    uint64_t whole, uint64_t max_lines, la_told told)
{
	const size_t ws = word_size(f->kind);
	const unsigned want = parsers_for(f, whole);
	struct line_ahead *a;
	unsigned i;

	if (whole > max_lines || !(a = calloc(1, sizeof *a)))
		return NULL;
	a->f = f;
	a->data = (const char *)data;
	a->whole = whole != 0;
	a->told = told;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->change, NULL);
	arriving_init(&a->in, len);
	if (whole)
		end_at(a, len);
	a->cap = (size_t)max_lines;
	a->words_bytes = a->cap * ws;
	a->lines_bytes = a->cap * sizeof(struct kv_line);
	a->keys_bytes = f->nkeys ? a->lines_bytes : 0;
	a->table = table_wanted(f);
	if (!a->cap || !(a->b.words = reserve(a->words_bytes)) ||
	    (a->table && !(a->b.lines = reserve(a->lines_bytes))) ||
	    (f->nkeys && !(a->b.keys = reserve(a->keys_bytes)))) {
		la_free(a);
		return NULL;
	}
	a->counter_running = pthread_create(&a->counter, NULL, count_main, a) == 0;
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
	arriving_tell(&a->in, &a->lock, bytes);
}

void la_stop(struct line_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->change);
	arriving_wake(&a->in);
	pthread_mutex_unlock(&a->lock);
	join_all(a);
}

/* Whether a holds file's lines: the bytes it parses are the file's. */
static bool holds(const struct line_ahead *a, const struct in_file *file)
{
	return a && !file->stream && (const char *)file->data == a->data &&
	       (!a->ended || a->size == file->size);
}

bool la_lines(struct line_ahead *a, const struct in_file *file, uint64_t *lines)
{
	bool ok;

	if (!holds(a, file))
		return false;
	pthread_mutex_lock(&a->lock);
	if (!a->ended && !a->stop)
		end_at(a, file->size);
	while (!a->counted)
		pthread_cond_wait(&a->change, &a->lock);
	ok = !a->stop && !a->failed && a->at == a->size;
	if (ok)
		*lines = a->lines;
	pthread_mutex_unlock(&a->lock);
	return ok;
}

bool la_adopt(struct line_ahead *a, const struct in_file *file, size_t cap, struct enc_batch *b)
{
	double t0;

	if (!holds(a, file) || a->adopted || a->stop)
		return false;
	pthread_mutex_lock(&a->lock);
	if (!a->ended)
		end_at(a, file->size);
	while (!a->counted)
		pthread_cond_wait(&a->change, &a->lock);
	/* Not one run's lines: the parse stops, and its memory goes. */
	if (a->failed || a->lines != cap) {
		pthread_mutex_unlock(&a->lock);
		la_stop(a);
		unreserve(a);
		return false;
	}
	pthread_mutex_unlock(&a->lock);
	/* What is left is parsed on this thread too. */
	t0 = now_sec();
	if (a->nparsers)
		parse_main(a);
	join_all(a);
	if (!a->joined) {
		a->joined = true;
		a->t_wait = now_sec() - t0;
		a->t_after = now_sec() - a->t_ended;
	}
	if (a->failed || a->lines != cap || a->parsed != a->nq || a->at != a->size)
		return false;
	if (!a->table && !(a->b.lines = reserve(a->lines_bytes)))
		return false;
	a->adopted = true;
	b->words = a->b.words;
	b->lines = a->b.lines;
	b->lines_due = !a->table;
	b->keys = a->b.keys;
	b->blocks = a->b.blocks;
	a->b.blocks = NULL;
	b->lent = true;
	b->parsed = a->lines;
	b->parsed_at = (const unsigned char *)a->data;
	return true;
}

void la_free(struct line_ahead *a)
{
	if (!a)
		return;
	la_stop(a);
	if (a->adopted)
		msg_info(2, "%zu lines parsed %s (%zu chunks, %u parsing thread%s), %s %.3f s, the "
			 "sort waiting %.3f s for them; counting %.3f s, parsing %.3f thread seconds%s",
			 a->lines, a->whole ? "while the device started" : "while the stream arrived",
			 a->nq, a->started, a->started == 1 ? "" : "s",
			 a->whole ? "all in" : "the last after its end in", a->t_after, a->t_wait,
			 a->t_count, a->t_parse, a->table ? "" : "; their line table left until read");
	else if (a->ended)
		msg_info(2, "lines parsed again, as usual: %s",
			 a->failed ? "a line without a key, or more lines than a run's index or "
				     "memory holds" : "more than one run, or device");
	else if (a->stop)
		msg_info(2, "lines parsed ahead: stopped after %llu bytes, where the stream left "
			 "its memory", (unsigned long long)a->at);
	unreserve(a);
	free(a->q);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->change);
	arriving_destroy(&a->in);
	free(a);
}
