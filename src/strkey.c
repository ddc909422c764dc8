#include "config.h"
#include "strkey.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clsort.h"
#include "util.h"

/* Shares of fewer words than this are refined on one thread. */
#define REFINE_SHARE ((size_t)1 << 16)
#define REFINE_MAX_THREADS 64

void str_word(const unsigned char *key, size_t len, uint64_t mask, uint32_t index,
	      struct word128 *w)
{
	unsigned char b[STR_PREFIX] = { 0 };
	uint64_t hi = 0, ext = 0;
	size_t i;

	memcpy(b, key, len < STR_PREFIX ? len : STR_PREFIX);
	for (i = 0; i < 8; i++)
		hi = hi << 8 | b[i];
	for (; i < STR_PREFIX; i++)
		ext = ext << 8 | b[i];
	ext = ext << 8 | (len <= STR_PREFIX ? len : STR_LONG);
	w->hi = hi ^ mask;
	w->lo = (ext ^ (uint32_t)mask) << 32 | index;
}

uint64_t str_prefix(const unsigned char *key, size_t len)
{
	uint64_t v = 0;
	size_t i;
	for (i = 0; i < 8; i++)
		v = v << 8 | (i < len ? key[i] : 0);
	return v;
}

int str_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	const int c = memcmp(a, b, alen < blen ? alen : blen);
	if (c)
		return c;
	return (alen > blen) - (alen < blen);
}

bool str_tied(const struct word128 *a, const struct word128 *b, uint64_t mask)
{
	return a->hi == b->hi && a->lo >> 32 == b->lo >> 32 &&
	       ((a->lo >> 32 ^ (uint32_t)mask) & 0xff) == STR_LONG;
}

/* A long key of a tied group: the bytes past the shared prefix. */
struct tied {
	const unsigned char *rest;
	size_t len;
	uint32_t index;
};

static int tied_up(const void *x, const void *y)
{
	const struct tied *a = x, *b = y;
	const int c = str_cmp(a->rest, a->len, b->rest, b->len);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int tied_down(const void *x, const void *y)
{
	const struct tied *a = x, *b = y;
	const int c = str_cmp(b->rest, b->len, a->rest, a->len);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

struct refine_job {
	struct word128 *w;
	size_t n;
	uint64_t mask;
	str_key_fn key;
	const void *ctx;
	struct tied *buf;
	size_t cap;
	bool failed;
};

static void refine_job(void *arg)
{
	struct refine_job *j = arg;
	size_t i = 0;

	while (i + 1 < j->n) {
		size_t end = i + 1, k;
		while (end < j->n && str_tied(&j->w[i], &j->w[end], j->mask))
			end++;
		if (end - i > 1) {
			if (end - i > j->cap) {
				struct tied *g = realloc(j->buf, (end - i) * sizeof *g);
				if (!g) {
					j->failed = true;
					return;
				}
				j->buf = g;
				j->cap = end - i;
			}
			for (k = i; k < end; k++) {
				struct tied *t = &j->buf[k - i];
				const unsigned char *p;
				size_t len;
				t->index = (uint32_t)j->w[k].lo;
				j->key(j->ctx, t->index, &p, &len);
				t->rest = p + STR_PREFIX;
				t->len = len - STR_PREFIX;
			}
			qsort(j->buf, end - i, sizeof *j->buf, j->mask ? tied_down : tied_up);
			/* The words differ in their index only. */
			for (k = i; k < end; k++)
				j->w[k].lo = (j->w[k].lo & ~(uint64_t)UINT32_MAX) | j->buf[k - i].index;
		}
		i = end;
	}
}

int str_refine(struct word128 *w, size_t n, uint64_t mask, str_key_fn key, const void *ctx,
	       unsigned threads)
{
	struct refine_job jobs[REFINE_MAX_THREADS];
	size_t start = 0;
	unsigned t, count = 0;
	int rc = 0;

	if (threads > REFINE_MAX_THREADS)
		threads = REFINE_MAX_THREADS;
	if (n / REFINE_SHARE < threads)
		threads = n / REFINE_SHARE ? (unsigned)(n / REFINE_SHARE) : 1;
	/* Shares end between groups, never inside one. */
	for (t = 0; t < threads && start < n; t++) {
		size_t end = t + 1 < threads ? n / threads * (t + 1) : n;
		if (end < start)
			end = start;
		while (end < n && end > 0 && str_tied(&w[end - 1], &w[end], mask))
			end++;
		memset(&jobs[count], 0, sizeof jobs[count]);
		jobs[count].w = w + start;
		jobs[count].n = end - start;
		jobs[count].mask = mask;
		jobs[count].key = key;
		jobs[count].ctx = ctx;
		count++;
		start = end;
	}
	run_parallel(refine_job, jobs, sizeof jobs[0], count);
	for (t = 0; t < count; t++) {
		if (jobs[t].failed)
			rc = CLS_E_FAIL;
		free(jobs[t].buf);
	}
	if (rc)
		msg_errno(ENOMEM, "cannot order keys that share a long prefix");
	return rc;
}
