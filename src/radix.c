#include "config.h"
#include "radix.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "clsort.h"
#include "radix_bucket.h"
#include "util.h"

/* The most passes: 128 bits that all differ. */
#define MAX_DIGITS ((128 + DIGIT_BITS - 1) / DIGIT_BITS)
/* Below this one thread: each pass is a batch of jobs, and waking threads
 * for small batches costs more than it saves. */
#define PARALLEL_MIN ((size_t)1 << 16)
/* Blocks never smaller than this, so that each thread's buckets see a
 * fair share of words to scatter. */
#define BLOCK_MIN ((size_t)1 << 15)
/* As many as run_parallel keeps in its pool. */
#define MAX_THREADS 64
/* The scatter gathers each digit value's words in a buffer of a cache line
 * and stores whole lines: a store to one of 2048 places at random misses
 * the cache each time, a line of them once. */
#define LINE 64

/* Past a first pass on the highest bits that differ, each of its values'
 * words (a bucket) is sorted on its own by one thread, in the caches where
 * it fits: a bucket of up to this many words, or up to 1/BUCKET_SHARE of
 * a thread's share of all the words where that is more.  A larger bucket
 * (skewed keys) is sorted by every thread.  With a fixed bound alone, half
 * the buckets of 2^28 uniform keys (2^18 words each on average) went one
 * by one to all threads, a sort of their own each: 1.2 s on 16 threads
 * against 0.27 s for a quarter of the keys on 2. */
#define BUCKET_MAX ((size_t)1 << 18)
#define BUCKET_SHARE 4
/* ...and at least this many words are sorted; below it every pass is in
 * the caches anyway. */
#define BUCKETS_MIN ((size_t)1 << 16)

/* Bits [shift, shift + width) of a word, width at most DIGIT_BITS; bit 0
 * is the lowest (WORD128: lo's bits, then hi's). */
struct digit {
	unsigned shift;
	uint32_t mask;		/* width ones */
};

/* The pass all threads are on. */
struct radix {
	const void *src;
	void *dst;
	enum word_kind kind;
	struct digit dig[MAX_DIGITS];	/* the passes' digits, lowest first */
	unsigned first, last;	/* count digits [first, last) */
	unsigned pass;		/* scatter on this one */
};

/* One thread's contiguous block of the words. */
struct radix_job {
	struct radix *r;
	size_t lo, hi;
	uint64_t any[2], all[2];	/* the OR and the AND of the block's words */
	size_t count[MAX_DIGITS][RADIX];	/* the block's words by digit value */
	size_t off[RADIX];	/* where the block's first word of each value goes */
	/* The scatter's lines: value v's words not yet stored wait in slots
	 * first[v] to fill[v] - 1 of line[v], whose slot k goes to the place
	 * k words past at[v], the start of a line of the destination.  Only a
	 * value's first line may start before its first place, its slots
	 * below first[v] another's; past it first[v] is 0. */
	unsigned char line[RADIX][LINE] __attribute__((aligned(LINE)));
	uintptr_t at[RADIX];
	unsigned char fill[RADIX], first[RADIX];
};

/* The bits that differ between the block's words show which digits a
 * sort must pass over: the OR and the AND of the block. */
static void span(void *arg)
{
	struct radix_job *j = arg;
	const struct radix *r = j->r;
	const size_t hi = j->hi;
	/* A word narrower than 128 bits has a hi half of zeros. */
	uint64_t any0 = 0, any1 = 0, all0 = ~(uint64_t)0, all1 = 0;
	size_t i;

	switch (r->kind) {
	case WORD32: {
		const uint32_t *w = r->src;
		uint32_t a = 0, b = ~(uint32_t)0;
		for (i = j->lo; i < hi; i++) {
			a |= w[i];
			b &= w[i];
		}
		any0 = a;
		all0 = b;
		break;
	}
	case WORD64: {
		const uint64_t *w = r->src;
		for (i = j->lo; i < hi; i++) {
			any0 |= w[i];
			all0 &= w[i];
		}
		break;
	}
	case WORD128: {
		const struct word128 *w = r->src;
		all1 = ~(uint64_t)0;
		for (i = j->lo; i < hi; i++) {
			any0 |= w[i].lo;
			all0 &= w[i].lo;
			any1 |= w[i].hi;
			all1 &= w[i].hi;
		}
		break;
	}
	}
	j->any[0] = any0;
	j->any[1] = any1;
	j->all[0] = all0;
	j->all[1] = all1;
}

/* The block's counts of digits [first, last) of its words w, of type T;
 * one digit on its own in a loop of its own. */
#define COUNT_WORDS(T)                                                                 \
	do {                                                                           \
		const T *const w = r->src;                                             \
		if (last - first == 1) {                                               \
			size_t *const c = j->count[first];                             \
			const unsigned b = dig[first].shift;                           \
			const uint32_t m = dig[first].mask;                            \
			for (i = j->lo; i < hi; i++)                                   \
				c[w[i] >> b & m]++;                                    \
			break;                                                         \
		}                                                                      \
		for (i = j->lo; i < hi; i++)                                           \
			for (d = first; d < last; d++)                                 \
				j->count[d][w[i] >> dig[d].shift & dig[d].mask]++;     \
	} while (0)

/* The block's counts of digits [first, last), over the block as the last
 * pass left it. */
static void count(void *arg)
{
	struct radix_job *j = arg;
	const struct radix *r = j->r;
	const struct digit *const dig = r->dig;
	const unsigned first = r->first, last = r->last;
	const size_t hi = j->hi;
	size_t i;
	unsigned d;

	for (d = first; d < last; d++)
		memset(j->count[d], 0, sizeof j->count[d]);
	switch (r->kind) {
	case WORD32:
		COUNT_WORDS(uint32_t);
		break;
	case WORD64:
		COUNT_WORDS(uint64_t);
		break;
	case WORD128: {
		const struct word128 *w = r->src;
		for (i = j->lo; i < hi; i++)
			for (d = first; d < last; d++)
				j->count[d][digit128(w + i, dig[d].shift, dig[d].mask)]++;
		break;
	}
	}
}

/* A whole line of words to dst, a line's start, past the caches where
 * the processor has such stores: the words are read again only by the
 * next pass, after many more lines. */
static inline void store_line(void *dst, const void *line)
{
#ifdef __SSE2__
	const __m128i *l = line;
	__m128i *d = dst;
	_mm_stream_si128(d, _mm_load_si128(l));
	_mm_stream_si128(d + 1, _mm_load_si128(l + 1));
	_mm_stream_si128(d + 2, _mm_load_si128(l + 2));
	_mm_stream_si128(d + 3, _mm_load_si128(l + 3));
#else
	memcpy(dst, line, LINE);
#endif
}

/* Each value's line starts where its first place is within a line of the
 * destination, so that every line stored after the first is whole and
 * aligned. */
static void lines_start(struct radix_job *j, const unsigned char *dst, size_t ws)
{
	size_t v;

	for (v = 0; v < RADIX; v++) {
		const uintptr_t p = (uintptr_t)(dst + j->off[v] * ws);
		j->fill[v] = j->first[v] = (unsigned char)(p % LINE / ws);
		j->at[v] = p - p % LINE;
	}
}

/* Value v's full line to its place: stored whole, or where it is the
 * value's first and starts before it, its own slots alone. */
static inline void line_out(struct radix_job *j, size_t v, size_t ws)
{
	unsigned char *const at = (unsigned char *)j->at[v];
	const size_t first = j->first[v] * ws;

	if (!first) {
		store_line(at, j->line[v]);
	} else {
		memcpy(at + first, j->line[v] + first, LINE - first);
		j->first[v] = 0;
	}
	j->at[v] += LINE;
}

/* The words held in each value's line to their places, at the end of the
 * block. */
static void lines_flush(struct radix_job *j, size_t ws)
{
	size_t v;

	for (v = 0; v < RADIX; v++)
		if (j->fill[v] > j->first[v]) {
			const size_t first = j->first[v] * ws;
			memcpy((unsigned char *)j->at[v] + first, j->line[v] + first,
			       j->fill[v] * ws - first);
		}
}

/* One word w of value v into its line; a full line to its place.  Per
 * word one count moves: a line's place moves once a line. */
#define SCATTER_ONE(T, v, w)                                                           \
	do {                                                                           \
		const size_t v_ = (v);                                                 \
		unsigned f_ = j->fill[v_];                                             \
		((T *)(void *)j->line[v_])[f_] = (w);                                  \
		if (++f_ == LINE / sizeof(T)) {                                        \
			line_out(j, v_, sizeof(T));                                    \
			f_ = 0;                                                        \
		}                                                                      \
		j->fill[v_] = (unsigned char)f_;                                       \
	} while (0)

/* The block's words to their places for this pass, each value's in the
 * order they come. */
static void scatter(void *arg)
{
	struct radix_job *j = arg;
	const struct radix *r = j->r;
	const unsigned b = r->dig[r->pass].shift;
	const uint32_t m = r->dig[r->pass].mask;
	const size_t hi = j->hi;	/* not reloaded after each store */
	const size_t ws = word_size(r->kind);
	size_t i;

	lines_start(j, r->dst, ws);
	switch (r->kind) {
	case WORD32: {
		const uint32_t *s = r->src;
		for (i = j->lo; i < hi; i++)
			SCATTER_ONE(uint32_t, s[i] >> b & m, s[i]);
		break;
	}
	case WORD64: {
		const uint64_t *s = r->src;
		for (i = j->lo; i < hi; i++)
			SCATTER_ONE(uint64_t, s[i] >> b & m, s[i]);
		break;
	}
	case WORD128: {
		const struct word128 *s = r->src;
		for (i = j->lo; i < hi; i++)
			SCATTER_ONE(struct word128, digit128(s + i, b, m), s[i]);
		break;
	}
	}
	lines_flush(j, ws);
#ifdef __SSE2__
	_mm_sfence();
#endif
}

static void copy_block(void *arg)
{
	const struct radix_job *j = arg;
	const struct radix *r = j->r;
	const size_t ws = word_size(r->kind);

	memcpy((unsigned char *)r->dst + j->lo * ws, (const unsigned char *)r->src + j->lo * ws,
	       (j->hi - j->lo) * ws);
}

/* The number of words of each value of digit d, all blocks together. */
static void totals(const struct radix_job *jobs, unsigned threads, unsigned d, size_t *sum)
{
	size_t v;
	unsigned t;

	memset(sum, 0, RADIX * sizeof *sum);
	for (t = 0; t < threads; t++)
		for (v = 0; v < RADIX; v++)
			sum[v] += jobs[t].count[d][v];
}

/* Where each block's words go in the pass on digit d: digit values in
 * order, and within a value the blocks in order, which keeps the sort
 * stable. */
static void place(struct radix_job *jobs, unsigned threads, unsigned d, size_t n)
{
	size_t at = 0, v, t;

	for (v = 0; v < RADIX; v++)
		for (t = 0; t < threads; t++) {
			jobs[t].off[v] = at;
			at += jobs[t].count[d][v];
		}
	assert(at == n);
}

static unsigned plan_threads(size_t n, unsigned threads)
{
	if (n < PARALLEL_MIN || threads < 1)
		return 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if (threads > n / BLOCK_MIN)
		threads = (unsigned)(n / BLOCK_MIN);
	return threads;
}

/* One thread's buckets: values [vlo, vhi) of the first pass's digit. */
struct bucket_job {
	const struct radix *r;	/* src: the first pass's output */
	void *room;		/* the thread's, for its largest bucket: it stays
				 * in the caches from one to the next */
	const size_t *start;	/* where each value's bucket starts, and the end */
	size_t vlo, vhi;
	size_t own;		/* the largest bucket sorted by one thread */
	unsigned low, bits;	/* the bits below the first pass's digit that
				 * differ: [low, low + bits) */
	uint32_t count[2][RADIX];	/* buckets hold < 2^32 words */
};

static void sort_buckets(void *arg)
{
	struct bucket_job *j = arg;
	const size_t ws = word_size(j->r->kind);
	size_t v;

	for (v = j->vlo; v < j->vhi; v++) {
		const size_t at = j->start[v], m = j->start[v + 1] - at;
		if (m <= j->own)
			rb_sort(j->r->kind, j->count, (char *)j->r->src + at * ws, j->room, m,
				    j->low, j->bits);
	}
}

/* The MSD way: one pass on digit r->pass (the highest bits that differ)
 * from words to scratch, then each bucket sorted there by the bits
 * [low, r->dig[r->pass].shift): those of up to own words (see BUCKET_MAX) on
 * the threads' own room, each larger one (skewed keys) by
 * radix_sort_above on every thread, with its place in words as scratch.
 * The sorted words end in scratch.  sum holds the words of each value of
 * the digit. */
static int sort_msd(struct radix *r, struct radix_job *jobs, unsigned threads, unsigned low,
		    const size_t *sum, size_t n, void *words, void *scratch)
{
	const size_t ws = word_size(r->kind);
	struct bucket_job *bj = xmalloc(threads * sizeof *bj, "the host sort's counts");
	size_t *start = xmalloc((RADIX + 1) * sizeof *start, "the host sort's counts");
	size_t v, at, share, most, small = 0, taken = 0;
	size_t own = n / ((size_t)BUCKET_SHARE * threads);
	unsigned t;
	int rc = CLS_E_FAIL;

	if (own < BUCKET_MAX)
		own = BUCKET_MAX;
	if (own > UINT32_MAX)	/* a bucket's counts are 32 bits */
		own = UINT32_MAX;

	if (!bj || !start)
		goto out;
	/* The buckets sorted in the caches to threads in runs of about equal
	 * words. */
	for (v = 0, at = 0; v < RADIX; v++) {
		start[v] = at;
		at += sum[v];
		if (sum[v] <= own)
			small += sum[v];
	}
	start[RADIX] = at;
	share = (small + threads - 1) / threads;
	for (t = 0, v = 0; t < threads; t++) {
		bj[t].r = r;
		bj[t].start = start;
		bj[t].low = low;
		bj[t].own = own;
		bj[t].bits = r->dig[r->pass].shift - low;
		bj[t].vlo = v;
		while (v < RADIX &&
		       (t + 1 == threads ||
			taken + (sum[v] <= own ? sum[v] : 0) <= share * (t + 1)))
			taken += sum[v] <= own ? sum[v] : 0, v++;
		bj[t].vhi = v;
		for (most = 0, at = bj[t].vlo; at < v; at++)
			if (sum[at] > most && sum[at] <= own)
				most = sum[at];
		bj[t].room = xmalloc(most * ws + 1, "the host sort's buckets");
		if (!bj[t].room) {
			while (t--)
				free(bj[t].room);
			goto out;
		}
	}
	r->src = words;
	r->dst = scratch;
	place(jobs, threads, r->pass, n);
	run_parallel(scatter, jobs, sizeof *jobs, threads);
	r->src = scratch;
	run_parallel(sort_buckets, bj, sizeof *bj, threads);
	for (t = 0; t < threads; t++)
		free(bj[t].room);
	rc = 0;
	for (v = 0; v < RADIX && rc == 0; v++)
		if (sum[v] > own)
			rc = radix_sort_above((char *)scratch + start[v] * ws,
					      (char *)words + start[v] * ws, sum[v], r->kind, low,
					      threads, NULL);
out:
	free(start);
	free(bj);
	return rc;
}

/* The lowest and the highest bit that differ between the words, from the
 * blocks' ORs and ANDs; false when none does. */
static bool differ(const struct radix_job *jobs, unsigned threads, unsigned *lo, unsigned *hi)
{
	uint64_t any[2] = { 0, 0 }, all[2] = { ~(uint64_t)0, ~(uint64_t)0 }, x0, x1;
	unsigned t, h;

	for (t = 0; t < threads; t++)
		for (h = 0; h < 2; h++) {
			any[h] |= jobs[t].any[h];
			all[h] &= jobs[t].all[h];
		}
	x0 = any[0] ^ all[0];
	x1 = any[1] ^ all[1];
	if (!x0 && !x1)
		return false;
	*lo = x0 ? (unsigned)__builtin_ctzll(x0) : 64 + (unsigned)__builtin_ctzll(x1);
	*hi = x1 ? 127 - (unsigned)__builtin_clzll(x1) : 63 - (unsigned)__builtin_clzll(x0);
	return true;
}

/* Digits of at most DIGIT_BITS, all of one width, over bits [lo, top). */
static unsigned plan_digits(struct digit *dig, unsigned lo, unsigned top)
{
	const unsigned ndig = (top - lo + DIGIT_BITS - 1) / DIGIT_BITS;
	const unsigned width = (top - lo + ndig - 1) / ndig;
	unsigned d;

	for (d = 0; d < ndig; d++) {
		dig[d].shift = lo + d * width;
		dig[d].mask = ((uint32_t)1 << (d + 1 < ndig ? width : top - dig[d].shift)) - 1;
	}
	return ndig;
}

/* Blocks of c's whole segments to the jobs, each job's OR and AND of its
 * words c's as well (differ() reads only their exclusive or); false where
 * there are fewer segments than jobs. */
static bool take_blocks(struct radix_job *jobs, unsigned threads, size_t n,
			const struct radix_counts *c)
{
	unsigned t;

	if (!c || c->nseg < threads || c->seg * (c->nseg - 1) >= n || c->seg * c->nseg < n)
		return false;
	for (t = 0; t < threads; t++) {
		jobs[t].lo = c->seg * (c->nseg * t / threads);
		jobs[t].hi = t + 1 < threads ? c->seg * (c->nseg * (t + 1) / threads) : n;
		jobs[t].any[0] = jobs[t].any[1] = jobs[t].all[1] = 0;
		jobs[t].all[0] = ~(uint64_t)0;
	}
	jobs[0].any[0] = c->differ;
	jobs[0].all[0] = 0;
	return true;
}

/* The jobs' counts of the first pass's digit from c's segments, where c
 * counted that digit. */
static bool take_counts(struct radix_job *jobs, unsigned threads, const struct radix *r,
			const struct radix_counts *c)
{
	const size_t values = (size_t)1 << RADIX_MSD_BITS;
	unsigned t;
	size_t s, v;

	if (!c->counts || c->shift != r->dig[0].shift)
		return false;
	for (t = 0; t < threads; t++) {
		size_t *const sum = jobs[t].count[0];
		memset(sum, 0, sizeof jobs[t].count[0]);
		for (s = jobs[t].lo / c->seg; s * c->seg < jobs[t].hi; s++)
			for (v = 0; v < values; v++)
				sum[v ^ c->flip] += c->counts[s * values + v];
	}
	return true;
}

bool radix_first_digit(unsigned lo, unsigned hi, unsigned *shift)
{
	if (hi + 1 <= lo + RADIX_MSD_BITS)
		return false;
	*shift = hi + 1 - RADIX_MSD_BITS;
	return true;
}

static int sort_words(void *words, void *scratch, size_t n, enum word_kind kind, unsigned low,
		      unsigned threads, const struct radix_counts *c, void **sorted);

int radix_sort(void *words, void *scratch, size_t n, enum word_kind kind, unsigned threads,
	       void **sorted)
{
	return sort_words(words, scratch, n, kind, 0, threads, NULL, sorted);
}

int radix_sort_above(void *words, void *scratch, size_t n, enum word_kind kind, unsigned low,
		     unsigned threads, void **sorted)
{
	return sort_words(words, scratch, n, kind, low, threads, NULL, sorted);
}

int radix_sort_counted(void *words, void *scratch, size_t n, enum word_kind kind, unsigned threads,
		       const struct radix_counts *c, void **sorted)
{
	assert(kind != WORD128);
	return sort_words(words, scratch, n, kind, 0, threads, c, sorted);
}

static int sort_words(void *words, void *scratch, size_t n, enum word_kind kind, unsigned low,
		      unsigned threads, const struct radix_counts *c, void **sorted)
{
	const size_t ws = word_size(kind);
	struct radix r = { .src = words, .kind = kind };
	struct radix_job *jobs = NULL;
	size_t sum[RADIX];
	void *own = NULL;
	unsigned ndig, lo, hi, d, t;
	bool moved = false;
	int rc = CLS_E_FAIL;

	if (sorted)
		*sorted = words;
	if (n < SMALL) {
		rb_insertion(words, n, kind, low);
		return 0;
	}
	threads = plan_threads(n, threads);
	/* Its lines are aligned for whole-line stores. */
	jobs = xmalloc_aligned(_Alignof(struct radix_job), threads * sizeof *jobs,
			       "the host sort's counts");
	if (!jobs)
		goto out;
	for (t = 0; t < threads; t++) {
		jobs[t].r = &r;
		jobs[t].lo = n / threads * t;
		jobs[t].hi = t + 1 < threads ? n / threads * (t + 1) : n;
	}
	/* Only the bits that differ need passes: the high bits of small
	 * keys and of record indexes are often the same in every word. */
	if (!take_blocks(jobs, threads, n, c)) {
		c = NULL;
		run_parallel(span, jobs, sizeof *jobs, threads);
	}
	rc = 0;
	if (!differ(jobs, threads, &lo, &hi) || hi < low)
		goto out;
	if (lo < low)
		lo = low;
	if (!scratch) {
		scratch = own = xmalloc(n * ws, "the host sort's scratch array");
		if (!scratch) {
			rc = CLS_E_FAIL;
			goto out;
		}
		populate_parallel(scratch, n * ws, threads);
	}
	/* Few words, in the caches: sorted as a bucket is, by its highest
	 * digits first, only the runs they leave tied by the digits below
	 * (where LSD passes would pay for every digit). */
	if (n < BUCKETS_MIN) {
		uint32_t counts[2][RADIX];
		rb_sort(kind, counts, words, scratch, n, lo, hi + 1 - lo);
		goto done;
	}
	/* The highest bits first: where their buckets are small enough, each
	 * is sorted on its own in the caches. */
	if (radix_first_digit(lo, hi, &r.dig[0].shift)) {
		r.dig[0].mask = ((uint32_t)1 << RADIX_MSD_BITS) - 1;
		r.first = r.pass = 0;
		r.last = 1;
		if (!c || !take_counts(jobs, threads, &r, c))
			run_parallel(count, jobs, sizeof *jobs, threads);
		totals(jobs, threads, 0, sum);
		rc = sort_msd(&r, jobs, threads, lo, sum, n, words, scratch);
		r.src = scratch;
		goto done;
	}
	/* LSD passes over all the bits that differ, the counts of all their
	 * digits in one read.  A digit of one value is skipped: the counts
	 * of all blocks together do not depend on where the passes before
	 * have moved the words, each block's do. */
	ndig = plan_digits(r.dig, lo, hi + 1);
	r.first = 0;
	r.last = ndig;
	run_parallel(count, jobs, sizeof *jobs, threads);
	for (d = 0; d < ndig; d++) {
		totals(jobs, threads, d, sum);
		for (t = 0; t < RADIX && !sum[t]; t++)
			;
		if (sum[t] == n)
			continue;
		if (moved) {
			r.first = d;
			r.last = d + 1;
			run_parallel(count, jobs, sizeof *jobs, threads);
		}
		r.pass = d;
		place(jobs, threads, d, n);
		r.dst = r.src == words ? scratch : words;
		run_parallel(scatter, jobs, sizeof *jobs, threads);
		r.src = r.dst;
		moved = true;
	}
done:
	if (rc)
		goto out;
	if (sorted && !own) {
		*sorted = (void *)r.src;
	} else if (r.src != words) {
		r.dst = words;
		run_parallel(copy_block, jobs, sizeof *jobs, threads);
	}
out:
	free(own);
	free(jobs);
	return rc;
}
