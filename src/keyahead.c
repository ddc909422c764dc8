#include "config.h"
#include "keyahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arriving.h"
#include "util.h"

#define VALUES ((size_t)1 << RADIX_MSD_BITS)

struct key_ahead {
	const unsigned char *data;
	size_t ws;		/* bytes of a key: 4 or 8 */
	size_t seg;		/* keys of a segment */
	uint64_t xor;		/* a key's sort word is its bytes xor this */
	pthread_mutex_t lock;
	struct arriving in;	/* the stream's bytes; woken for stop too */
	bool stop, running;
	bool left;		/* the stream's bytes left their memory */
	pthread_t thread;
	/* The thread's, read by others once it is joined: */
	uint64_t any, all;	/* the OR and the AND of the keys counted */
	bool digit;		/* a digit chosen, and every segment counted on it... */
	bool stale;		/* ...but those before it moved last */
	unsigned shift;		/* the digit's */
	uint32_t *counts;	/* a row of VALUES a segment */
	size_t counted, cap;	/* segments counted, and rows room */
	size_t recounts;	/* segments counted again, the digit moved */
	size_t tail;		/* segments counted after the stream's end */
	double t_count, t_tail;
	bool failed;
};

bool ka_applies(const struct enc_format *f)
{
	return enc_bare_keys(f) && f->threads >= 2;
}

/* The shift of the sort's first digit for keys that differ in the bits x;
 * false where the sort takes no such digit. */
static bool digit_of(uint64_t x, unsigned *shift)
{
	return x && radix_first_digit((unsigned)__builtin_ctzll(x),
				      63 - (unsigned)__builtin_clzll(x), shift);
}

/* Keys [lo, hi) of a into row, on digit shift; their OR and AND into
 * *any and *all. */
static void count_keys(const struct key_ahead *a, size_t lo, size_t hi, unsigned shift,
		       uint32_t *row, uint64_t *any, uint64_t *all)
{
	const uint64_t m = VALUES - 1;
	uint64_t o = 0, n = ~(uint64_t)0;
	size_t i;

	memset(row, 0, VALUES * sizeof *row);
	if (a->ws == 4) {
		const uint32_t *k = (const uint32_t *)(const void *)a->data;
		uint32_t o32 = 0, n32 = ~(uint32_t)0;
		for (i = lo; i < hi; i++) {
			o32 |= k[i];
			n32 &= k[i];
			row[k[i] >> shift & m]++;
		}
		/* A 32-bit word's high half: zeros in both (radix.c). */
		o = o32;
		n = n32;
	} else {
		const uint64_t *k = (const uint64_t *)(const void *)a->data;
		for (i = lo; i < hi; i++) {
			o |= k[i];
			n &= k[i];
			row[k[i] >> shift & m]++;
		}
	}
	*any |= o;
	*all &= n;
}

/* Room for segment s's row; false where memory is short. */
static bool room_for(struct key_ahead *a, size_t s)
{
	size_t cap;
	uint32_t *p;

	if (s < a->cap)
		return true;
	for (cap = a->cap ? 2 * a->cap : 64; cap <= s; cap *= 2)
		;
	if (!(p = realloc(a->counts, cap * VALUES * sizeof *p)))
		return false;
	a->counts = p;
	a->cap = cap;
	return true;
}

/* Count segment s (keys [s * seg, end)): where its keys give the sort a
 * first digit, or move it up, on the new digit, and every segment before
 * it again; or, where that would make the segments counted again more
 * than twice those come so far (a highest bit that keeps moving up: keys
 * that ascend move it up at segments 1, 2, 4, 8 and so on, within that),
 * those are left stale, for ka_counts to count again on every thread. */
static bool count_segment(struct key_ahead *a, size_t s, size_t end)
{
	unsigned shift;
	size_t r, from;

	if (!room_for(a, s))
		return false;
	count_keys(a, s * a->seg, end, a->shift, a->counts + s * VALUES, &a->any, &a->all);
	/* The highest bit that differs only moves up, the lowest down. */
	if (digit_of(a->any ^ a->all, &shift) && (!a->digit || shift != a->shift)) {
		a->shift = shift;
		a->digit = true;
		a->stale = a->stale || a->recounts + s > 2 * (s + 1);
		from = a->stale ? s : 0;
		for (r = from; r <= s; r++) {
			uint64_t any = 0, all = ~(uint64_t)0;
			count_keys(a, r * a->seg, r < s ? (r + 1) * a->seg : end, shift,
				   a->counts + r * VALUES, &any, &all);
		}
		a->recounts += s - from;
	}
	a->counted = s + 1;
	return true;
}

static void *count_main(void *arg)
{
	struct key_ahead *a = arg;
	const size_t seg_bytes = a->seg * a->ws;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		const uint64_t avail = arriving_seen(&a->in);
		double t0;
		bool ok;

		if (a->stop || a->failed)
			break;
		if (avail < (a->counted + 1) * seg_bytes) {
			arriving_wait(&a->in, &a->lock, avail);
			continue;
		}
		pthread_mutex_unlock(&a->lock);
		t0 = now_sec();
		ok = count_segment(a, a->counted, (a->counted + 1) * a->seg);
		t0 = now_sec() - t0;
		pthread_mutex_lock(&a->lock);
		a->t_count += t0;
		if (!ok)
			a->failed = true;
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct key_ahead *ka_start(const struct enc_format *f, const unsigned char *data, size_t len,
			   size_t seg)
{
	struct key_ahead *a;

	if ((uintptr_t)data % 8 || !seg || !(a = calloc(1, sizeof *a)))
		return NULL;
	a->data = data;
	a->ws = f->kt->width;
	a->seg = seg;
	/* Bare keys of an integer type: their sortable form is their bits
	 * but for an exclusive or (keys.h), the descending one too. */
	a->xor = f->kt->sortable(0) ^ f->mask;
	a->all = ~(uint64_t)0;
	pthread_mutex_init(&a->lock, NULL);
	arriving_init(&a->in, len);
	a->running = pthread_create(&a->thread, NULL, count_main, a) == 0;
	if (!a->running) {
		ka_free(a);
		return NULL;
	}
	return a;
}

void ka_grow(struct key_ahead *a, uint64_t bytes)
{
	if (!a)
		return;
	arriving_tell(&a->in, &a->lock, bytes);
}

/* Stop the thread, once it is done with its segment, and join it. */
static void join(struct key_ahead *a)
{
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	arriving_wake(&a->in);
	pthread_mutex_unlock(&a->lock);
	if (a->running)
		pthread_join(a->thread, NULL);
	a->running = false;
}

void ka_stop(struct key_ahead *a)
{
	if (!a)
		return;
	join(a);
	a->left = true;
}

/* Segments [s0, s1) of n keys counted on digit shift, by one of several
 * threads. */
struct count_job {
	struct key_ahead *a;
	size_t s0, s1, n;
	unsigned shift;
	uint64_t any, all;
};

static void count_job(void *arg)
{
	struct count_job *j = arg;
	const size_t seg = j->a->seg;
	size_t s;

	j->any = 0;
	j->all = ~(uint64_t)0;
	for (s = j->s0; s < j->s1; s++)
		count_keys(j->a, s * seg, (s + 1) * seg < j->n ? (s + 1) * seg : j->n, j->shift,
			   j->a->counts + s * VALUES, &j->any, &j->all);
}

/* Segments [from, to) of n keys counted on threads threads, on digit
 * shift; their OR and AND added to a's. */
static bool count_rest(struct key_ahead *a, size_t from, size_t to, size_t n, unsigned shift,
		       unsigned threads)
{
	struct count_job jobs[64];
	unsigned t;

	if (to <= from)
		return true;
	if (!room_for(a, to - 1))
		return false;
	if (threads > 64)
		threads = 64;
	if (threads > to - from)
		threads = (unsigned)(to - from);
	for (t = 0; t < threads; t++)
		jobs[t] = (struct count_job){ a, from + (to - from) * t / threads,
					      from + (to - from) * (t + 1) / threads, n, shift, 0, 0 };
	run_parallel(count_job, jobs, sizeof jobs[0], threads);
	for (t = 0; t < threads; t++) {
		a->any |= jobs[t].any;
		a->all &= jobs[t].all;
	}
	return true;
}

bool ka_counts(struct key_ahead *a, const void *words, size_t n, unsigned threads,
	       struct radix_counts *c)
{
	unsigned shift;
	size_t segs, from;
	double t0;

	if (!a || a->left || words != a->data || (uint64_t)n * a->ws != arriving_seen(&a->in))
		return false;
	segs = (n + a->seg - 1) / a->seg;
	/* What the thread has not counted yet, counted on every thread. */
	join(a);
	if (a->failed)
		return false;
	t0 = now_sec();
	from = a->counted;
	if (!count_rest(a, from, segs, n, a->shift, threads))
		return false;
	a->counted = segs;
	a->tail = segs - from;
	/* Their keys gave the sort a first digit, or moved it up; or the
	 * thread left segments stale. */
	if (digit_of(a->any ^ a->all, &shift) && (!a->digit || shift != a->shift || a->stale)) {
		a->digit = true;
		a->shift = shift;
		count_rest(a, 0, segs, n, shift, threads);
		a->recounts += segs;
	}
	a->t_tail = now_sec() - t0;
	c->differ = a->any ^ a->all;
	c->seg = a->seg;
	c->nseg = segs;
	c->shift = a->shift;
	c->counts = a->digit ? a->counts : NULL;
	c->flip = (uint32_t)(a->xor >> a->shift & (VALUES - 1));
	return true;
}

void ka_free(struct key_ahead *a)
{
	if (!a)
		return;
	join(a);
	if (a->counted)
		msg_info(2, "%zu segments of %zu keys counted while the stream arrived, %.3f "
			 "thread seconds; %zu after its end in %.3f s; %zu counted again",
			 a->counted - a->tail, a->seg, a->t_count, a->tail, a->t_tail, a->recounts);
	arriving_destroy(&a->in);
	pthread_mutex_destroy(&a->lock);
	free(a->counts);
	free(a);
}
