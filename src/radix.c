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
#include "util.h"

/* 11-bit digits: three passes for a 32-bit word where bytes take four.
 * Although 2048 buckets cost more per pass than 256, they measured faster
 * from a few thousand words up for 32- and 64-bit words, and about as fast
 * for 128-bit ones. */
#define DIGIT_BITS 11
#define RADIX (1u << DIGIT_BITS)
#define DIGIT_MASK (RADIX - 1)
/* Digits of a 64-bit word or of either half of a WORD128, the last of them
 * narrower. */
#define HALF_DIGITS ((64 + DIGIT_BITS - 1) / DIGIT_BITS)
#define MAX_DIGITS (2 * HALF_DIGITS)
/* Below this insertion sort is about as fast or faster (measured from
 * 128 words for WORD32 to 256 for WORD128): every radix pass pays for all
 * its buckets whatever the words. */
#define SMALL 256
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

/* Past a first pass on the highest digit that differs, each of its values'
 * words (a bucket) is sorted on its own, in the caches: when the largest
 * bucket holds at most this many words... */
#define BUCKET_MAX ((size_t)1 << 18)
/* ...and at least this many words are sorted; below it every pass is in
 * the caches anyway. */
#define BUCKETS_MIN ((size_t)1 << 16)
/* A bucket's digits: at most DIGIT_BITS wide, at least LOCAL_MIN_BITS. */
#define LOCAL_MIN_BITS 4
#define LOCAL_DIGITS (128 / LOCAL_MIN_BITS)

/* The pass all threads are on. */
struct radix {
	const void *src;
	void *dst;
	enum word_kind kind;
	unsigned digit;		/* 0 the lowest; WORD128: lo's, then hi's */
};

/* One thread's contiguous block of the words. */
struct radix_job {
	struct radix *r;
	size_t lo, hi;
	size_t count[MAX_DIGITS][RADIX];	/* the block's words by digit value */
	size_t off[RADIX];	/* where the block's next word of each value goes */
	/* The scatter's lines: each value's words not yet stored, from
	 * fill[v] - held[v] to fill[v] - 1; slot k of a line goes to a place
	 * k words past a line's start in the destination. */
	unsigned char line[RADIX][LINE] __attribute__((aligned(LINE)));
	unsigned char fill[RADIX], held[RADIX];
};

/* Strictly less, so that insertion sort keeps equal words in order. */
static bool word_less(const void *a, const void *b, enum word_kind kind)
{
	const struct word128 *x = a, *y = b;

	switch (kind) {
	case WORD32:
		return *(const uint32_t *)a < *(const uint32_t *)b;
	case WORD64:
		return *(const uint64_t *)a < *(const uint64_t *)b;
	case WORD128:
		break;
	}
	return x->hi < y->hi || (x->hi == y->hi && x->lo < y->lo);
}

static void insertion_sort(void *words, size_t n, enum word_kind kind)
{
	const size_t ws = word_size(kind);
	unsigned char *const w = words;
	union {
		uint32_t w32;
		uint64_t w64;
		struct word128 w128;
	} tmp;
	size_t i, j;

	for (i = 1; i < n; i++) {
		memcpy(&tmp, w + i * ws, ws);
		for (j = i; j > 0 && word_less(&tmp, w + (j - 1) * ws, kind); j--)
			;
		memmove(w + (j + 1) * ws, w + j * ws, (i - j) * ws);
		memcpy(w + j * ws, &tmp, ws);
	}
}

static unsigned digits(enum word_kind kind)
{
	switch (kind) {
	case WORD32:
		return (32 + DIGIT_BITS - 1) / DIGIT_BITS;
	case WORD64:
		return HALF_DIGITS;
	case WORD128:
		break;
	}
	return MAX_DIGITS;
}

/* All digits' counts in one read of the block: they show which passes can
 * be skipped, and serve the first pass that is not. */
static void count_all(void *arg)
{
	struct radix_job *j = arg;
	const struct radix *r = j->r;
	const size_t hi = j->hi;
	size_t i, d;

	memset(j->count, 0, digits(r->kind) * sizeof j->count[0]);
	switch (r->kind) {
	case WORD32: {
		const uint32_t *w = r->src;
		for (i = j->lo; i < hi; i++)
			for (d = 0; d < digits(WORD32); d++)
				j->count[d][w[i] >> DIGIT_BITS * d & DIGIT_MASK]++;
		break;
	}
	case WORD64: {
		const uint64_t *w = r->src;
		for (i = j->lo; i < hi; i++)
			for (d = 0; d < HALF_DIGITS; d++)
				j->count[d][w[i] >> DIGIT_BITS * d & DIGIT_MASK]++;
		break;
	}
	case WORD128: {
		const struct word128 *w = r->src;
		for (i = j->lo; i < hi; i++)
			for (d = 0; d < HALF_DIGITS; d++) {
				j->count[d][w[i].lo >> DIGIT_BITS * d & DIGIT_MASK]++;
				j->count[HALF_DIGITS + d][w[i].hi >> DIGIT_BITS * d & DIGIT_MASK]++;
			}
		break;
	}
	}
}

/* The counts of the pass's digit, over the block as the last pass left it. */
static void count_digit(void *arg)
{
	struct radix_job *j = arg;
	const struct radix *r = j->r;
	const unsigned shift = DIGIT_BITS * (r->digit % HALF_DIGITS);
	const size_t hi = j->hi;
	size_t *const c = j->count[r->digit];
	size_t i;

	memset(c, 0, sizeof j->count[0]);
	switch (r->kind) {
	case WORD32: {
		const uint32_t *w = r->src;
		for (i = j->lo; i < hi; i++)
			c[w[i] >> shift & DIGIT_MASK]++;
		break;
	}
	case WORD64: {
		const uint64_t *w = r->src;
		for (i = j->lo; i < hi; i++)
			c[w[i] >> shift & DIGIT_MASK]++;
		break;
	}
	case WORD128: {
		const struct word128 *w = r->src;
		const bool high = r->digit >= HALF_DIGITS;
		for (i = j->lo; i < hi; i++)
			c[(high ? w[i].hi : w[i].lo) >> shift & DIGIT_MASK]++;
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
		j->fill[v] = (unsigned char)((uintptr_t)(dst + j->off[v] * ws) % LINE / ws);
		j->held[v] = 0;
	}
}

/* The words held in each value's line to their places, at the end of the
 * block. */
static void lines_flush(struct radix_job *j, unsigned char *dst, size_t ws)
{
	size_t v;

	for (v = 0; v < RADIX; v++)
		if (j->held[v]) {
			const size_t first = j->fill[v] - j->held[v];
			memcpy(dst + (j->off[v] - j->held[v]) * ws, j->line[v] + first * ws,
			       j->held[v] * ws);
		}
}

/* One word w of value v into its line; a full line to its place. */
#define SCATTER_ONE(T, t, v, w)                                                        \
	do {                                                                           \
		const size_t v_ = (v);                                                 \
		((T *)j->line[v_])[j->fill[v_]++] = (w);                               \
		j->held[v_]++;                                                         \
		j->off[v_]++;                                                          \
		if (j->fill[v_] == LINE / sizeof(T)) {                                 \
			T *const at_ = (t) + j->off[v_] - LINE / sizeof(T);            \
			if (j->held[v_] == LINE / sizeof(T))                           \
				store_line(at_, j->line[v_]);                          \
			else                                                           \
				memcpy(at_ + (LINE / sizeof(T) - j->held[v_]),         \
				       (T *)j->line[v_] + (LINE / sizeof(T) - j->held[v_]), \
				       j->held[v_] * sizeof(T));                       \
			j->fill[v_] = 0;                                               \
			j->held[v_] = 0;                                               \
		}                                                                      \
	} while (0)

/* The block's words to their places for this pass, each value's in the
 * order they come. */
static void scatter(void *arg)
{
	struct radix_job *j = arg;
	const struct radix *r = j->r;
	const unsigned shift = DIGIT_BITS * (r->digit % HALF_DIGITS);
	const size_t hi = j->hi;	/* not reloaded after each store */
	const size_t ws = word_size(r->kind);
	size_t i;

	lines_start(j, r->dst, ws);
	switch (r->kind) {
	case WORD32: {
		const uint32_t *s = r->src;
		uint32_t *t = r->dst;
		for (i = j->lo; i < hi; i++)
			SCATTER_ONE(uint32_t, t, s[i] >> shift & DIGIT_MASK, s[i]);
		break;
	}
	case WORD64: {
		const uint64_t *s = r->src;
		uint64_t *t = r->dst;
		for (i = j->lo; i < hi; i++)
			SCATTER_ONE(uint64_t, t, s[i] >> shift & DIGIT_MASK, s[i]);
		break;
	}
	case WORD128: {
		const struct word128 *s = r->src;
		struct word128 *t = r->dst;
		const bool high = r->digit >= HALF_DIGITS;
		for (i = j->lo; i < hi; i++)
			SCATTER_ONE(struct word128, t, (high ? s[i].hi : s[i].lo) >> shift & DIGIT_MASK,
				    s[i]);
		break;
	}
	}
	lines_flush(j, r->dst, ws);
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

/* Whether all n words have the same digit d: then its pass would leave
 * them as they are. */
static bool digit_shared(const struct radix_job *jobs, unsigned threads, unsigned d, size_t n)
{
	size_t v, t, sum;

	for (v = 0; v < RADIX; v++) {
		for (t = 0, sum = 0; t < threads; t++)
			sum += jobs[t].count[d][v];
		if (sum)
			return sum == n;
	}
	return true;
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

/* The digit of w at bit b under mask (WORD128: bits of lo, then of hi). */
static inline size_t local_digit(const void *w, enum word_kind kind, unsigned b, size_t mask)
{
	switch (kind) {
	case WORD32:
		return *(const uint32_t *)w >> b & mask;
	case WORD64:
		return *(const uint64_t *)w >> b & mask;
	case WORD128:
		break;
	}
	if (b >= 64)
		return ((const struct word128 *)w)->hi >> (b - 64) & mask;
	/* A digit that starts in lo may end in hi. */
	return (((const struct word128 *)w)->lo >> b |
		(b ? ((const struct word128 *)w)->hi << (64 - b) : 0)) & mask;
}

/* One thread's buckets: values [vlo, vhi) of the first pass's digit. */
struct bucket_job {
	const struct radix *r;	/* src: the first pass's output; dst: room */
	const size_t *start;	/* where each value's bucket starts, and the end */
	size_t vlo, vhi;
	unsigned bits;		/* the bits below the first pass's digit */
	uint32_t count[LOCAL_DIGITS][RADIX];	/* buckets hold < 2^32 words */
};

/* Sort words[0..m) by their low j->bits bits, with room for m words,
 * stably; the result ends in words.  Digits narrower than the first
 * pass's where the bucket is small, so that a pass's counts do not cost
 * more than its words. */
static void sort_bucket(struct bucket_job *j, unsigned char *words, unsigned char *room, size_t m)
{
	const enum word_kind kind = j->r->kind;
	const size_t ws = word_size(kind);
	unsigned char *src = words, *dst = room;
	unsigned width = DIGIT_BITS, ndig, d;
	size_t i, v, mask;
	uint32_t at;

	if (m < SMALL) {
		insertion_sort(words, m, kind);
		return;
	}
	while (width > LOCAL_MIN_BITS && ((size_t)4 << width) > m)
		width--;
	ndig = (j->bits + width - 1) / width;
	width = (j->bits + ndig - 1) / ndig;
	mask = ((size_t)1 << width) - 1;
	for (d = 0; d < ndig; d++)
		memset(j->count[d], 0, (mask + 1) * sizeof j->count[0][0]);
	for (i = 0; i < m; i++)
		for (d = 0; d < ndig; d++)
			j->count[d][local_digit(words + i * ws, kind, d * width, mask)]++;
	for (d = 0; d < ndig; d++) {
		uint32_t *const c = j->count[d];
		const unsigned b = d * width;
		for (v = 0; v <= mask && !c[v]; v++)
			;
		if (c[v] == m)	/* one value: the pass would change nothing */
			continue;
		for (v = 0, at = 0; v <= mask; v++) {
			const uint32_t k = c[v];
			c[v] = at;
			at += k;
		}
		switch (kind) {
		case WORD32:
			for (i = 0; i < m; i++) {
				const uint32_t w = ((const uint32_t *)src)[i];
				((uint32_t *)dst)[c[w >> b & mask]++] = w;
			}
			break;
		case WORD64:
			for (i = 0; i < m; i++) {
				const uint64_t w = ((const uint64_t *)src)[i];
				((uint64_t *)dst)[c[w >> b & mask]++] = w;
			}
			break;
		case WORD128:
			for (i = 0; i < m; i++) {
				const struct word128 *w = (const struct word128 *)src + i;
				((struct word128 *)dst)[c[local_digit(w, kind, b, mask)]++] = *w;
			}
			break;
		}
		unsigned char *const t = src;
		src = dst;
		dst = t;
	}
	if (src != words)
		memcpy(words, src, m * ws);
}

static void sort_buckets(void *arg)
{
	struct bucket_job *j = arg;
	const size_t ws = word_size(j->r->kind);
	size_t v;

	for (v = j->vlo; v < j->vhi; v++)
		sort_bucket(j, (unsigned char *)j->r->src + j->start[v] * ws,
			    (unsigned char *)j->r->dst + j->start[v] * ws, j->start[v + 1] - j->start[v]);
}

/* The lowest bit of digit d, counting WORD128's lo bits first. */
static unsigned digit_bit(unsigned d)
{
	return d < HALF_DIGITS ? DIGIT_BITS * d : 64 + DIGIT_BITS * (d - HALF_DIGITS);
}

/* The MSD way: one pass on digit top (all digits above it the same in
 * every word) from words to scratch, then each bucket sorted in place
 * there, words' space as its room.  The sorted words end in scratch. */
static int sort_msd(struct radix *r, struct radix_job *jobs, unsigned threads, unsigned top,
		    size_t n, void *words, void *scratch)
{
	struct bucket_job *bj = xmalloc(threads * sizeof *bj, "the host sort's counts");
	size_t *start = xmalloc((RADIX + 1) * sizeof *start, "the host sort's counts");
	size_t v, at, share;
	unsigned t;

	if (!bj || !start) {
		free(bj);
		free(start);
		return CLS_E_FAIL;
	}
	r->digit = top;
	r->src = words;
	r->dst = scratch;
	place(jobs, threads, top, n);
	run_parallel(scatter, jobs, sizeof *jobs, threads);
	for (v = 0, at = 0; v < RADIX; v++) {
		start[v] = at;
		for (t = 0; t < threads; t++)
			at += jobs[t].count[top][v];
	}
	start[RADIX] = at;
	/* Buckets to threads in runs of about equal words. */
	r->src = scratch;
	r->dst = words;
	share = (n + threads - 1) / threads;
	for (t = 0, v = 0; t < threads; t++) {
		bj[t].r = r;
		bj[t].start = start;
		bj[t].bits = digit_bit(top);
		bj[t].vlo = v;
		while (v < RADIX && (t + 1 == threads || start[v + 1] <= share * (t + 1)))
			v++;
		bj[t].vhi = v;
	}
	run_parallel(sort_buckets, bj, sizeof *bj, threads);
	free(start);
	free(bj);
	return 0;
}

/* The largest bucket of digit d. */
static size_t largest_bucket(const struct radix_job *jobs, unsigned threads, unsigned d)
{
	size_t most = 0, v, t, sum;

	for (v = 0; v < RADIX; v++) {
		for (t = 0, sum = 0; t < threads; t++)
			sum += jobs[t].count[d][v];
		if (sum > most)
			most = sum;
	}
	return most;
}

int radix_sort(void *words, void *scratch, size_t n, enum word_kind kind, unsigned threads,
	       void **sorted)
{
	const size_t ws = word_size(kind);
	struct radix r = { words, NULL, kind, 0 };
	struct radix_job *jobs = NULL;
	void *own = NULL;
	unsigned pass[MAX_DIGITS], passes = 0, d, k, t;
	int rc = CLS_E_FAIL;

	if (sorted)
		*sorted = words;
	if (n < SMALL) {
		insertion_sort(words, n, kind);
		return 0;
	}
	threads = plan_threads(n, threads);
	jobs = xmalloc(threads * sizeof *jobs, "the host sort's counts");
	if (!jobs)
		goto out;
	for (t = 0; t < threads; t++) {
		jobs[t].r = &r;
		jobs[t].lo = n / threads * t;
		jobs[t].hi = t + 1 < threads ? n / threads * (t + 1) : n;
	}
	run_parallel(count_all, jobs, sizeof *jobs, threads);
	/* The high digits of small keys and of record indexes are often the
	 * same in all words. */
	for (d = 0; d < digits(kind); d++)
		if (!digit_shared(jobs, threads, d, n))
			pass[passes++] = d;
	if (passes && !scratch) {
		scratch = own = xmalloc(n * ws, "the host sort's scratch array");
		if (!scratch)
			goto out;
		populate_parallel(scratch, n * ws, threads);
	}
	if (passes > 1 && n >= BUCKETS_MIN &&
	    largest_bucket(jobs, threads, pass[passes - 1]) <= BUCKET_MAX) {
		if (sort_msd(&r, jobs, threads, pass[passes - 1], n, words, scratch))
			goto out;
		r.src = scratch;
		passes = 0;
	}
	for (k = 0; k < passes; k++) {
		r.digit = pass[k];
		/* The first pass has its counts from count_all; the passes
		 * after it have moved the words between the blocks. */
		if (k > 0)
			run_parallel(count_digit, jobs, sizeof *jobs, threads);
		place(jobs, threads, r.digit, n);
		r.dst = r.src == words ? scratch : words;
		run_parallel(scatter, jobs, sizeof *jobs, threads);
		r.src = r.dst;
	}
	if (sorted && !own) {
		*sorted = (void *)r.src;
	} else if (r.src != words) {
		r.dst = words;
		run_parallel(copy_block, jobs, sizeof *jobs, threads);
	}
	rc = 0;
out:
	free(own);
	free(jobs);
	return rc;
}
