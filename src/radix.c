#include "config.h"
#include "radix.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The block's words to their places for this pass, each value's in the
 * order they come. */
static void scatter(void *arg)
{
	struct radix_job *j = arg;
	const struct radix *r = j->r;
	const unsigned shift = DIGIT_BITS * (r->digit % HALF_DIGITS);
	const size_t hi = j->hi;	/* not reloaded after each store */
	size_t *const off = j->off;
	size_t i;

	switch (r->kind) {
	case WORD32: {
		const uint32_t *s = r->src;
		uint32_t *t = r->dst;
		for (i = j->lo; i < hi; i++)
			t[off[s[i] >> shift & DIGIT_MASK]++] = s[i];
		break;
	}
	case WORD64: {
		const uint64_t *s = r->src;
		uint64_t *t = r->dst;
		for (i = j->lo; i < hi; i++)
			t[off[s[i] >> shift & DIGIT_MASK]++] = s[i];
		break;
	}
	case WORD128: {
		const struct word128 *s = r->src;
		struct word128 *t = r->dst;
		const bool high = r->digit >= HALF_DIGITS;
		for (i = j->lo; i < hi; i++)
			t[off[(high ? s[i].hi : s[i].lo) >> shift & DIGIT_MASK]++] = s[i];
		break;
	}
	}
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

int radix_sort(void *words, void *scratch, size_t n, enum word_kind kind, unsigned threads)
{
	const size_t ws = word_size(kind);
	struct radix r = { words, NULL, kind, 0 };
	struct radix_job *jobs = NULL;
	void *own = NULL;
	unsigned pass[MAX_DIGITS], passes = 0, d, k, t;
	int rc = CLS_E_FAIL;

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
	if (r.src != words) {
		r.dst = words;
		run_parallel(copy_block, jobs, sizeof *jobs, threads);
	}
	rc = 0;
out:
	free(own);
	free(jobs);
	return rc;
}
