#include "config.h"
#include "tie.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clsort.h"
#include "util.h"

int tie_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
	    bool descending)
{
	const size_t min = alen < blen ? alen : blen;
	int c = 0;

	if (min > TIE_PREFIX)
		c = memcmp(a + TIE_PREFIX, b + TIE_PREFIX, min - TIE_PREFIX);
	if (c == 0)
		c = (alen > blen) - (alen < blen);
	return descending ? -c : c;
}

static int cmp_tied(const void *x, const void *y, void *arg)
{
	const struct tie_key *k = arg;
	const struct word128 *a = x, *b = y;
	const unsigned char *pa, *pb;
	const size_t la = k->key(k->ctx, (size_t)a->lo, &pa), lb = k->key(k->ctx, (size_t)b->lo, &pb);
	const int c = tie_cmp(pa, la, pb, lb, k->descending);

	return c ? c : (a->lo > b->lo) - (a->lo < b->lo);
}

void tie_refine(struct word128 *words, size_t n, const struct tie_key *k)
{
	size_t i = 0, g;
	while (i < n) {
		g = i;
		while (++i < n && words[i].hi == words[g].hi)
			;
		if (i - g > 1)
			qsort_r(words + g, i - g, sizeof *words, cmp_tied, (void *)k);
	}
}

/* Keep words[0..n) held back, after what is held already. */
static int hold(struct tie_stream *s, const struct word128 *words, size_t n)
{
	if (s->n + n > s->cap) {
		size_t cap = s->cap ? s->cap : 1024;
		struct word128 *g;
		while (cap < s->n + n)
			cap *= 2;
		g = realloc(s->held, cap * sizeof *g);
		if (!g) {
			msg_errno(ENOMEM, "cannot order keys that tie on their first %d bytes",
				  TIE_PREFIX);
			return CLS_E_FAIL;
		}
		s->held = g;
		s->cap = cap;
	}
	memcpy(s->held + s->n, words, n * sizeof *words);
	s->n += n;
	return 0;
}

/* Emit the held group, ordered. */
static int release(struct tie_stream *s, const struct tie_key *k, tie_emit emit, void *ctx)
{
	const size_t n = s->n;
	if (n == 0)
		return 0;
	if (n > 1)
		qsort_r(s->held, n, sizeof *s->held, cmp_tied, (void *)k);
	s->n = 0;
	return emit(ctx, s->held, n);
}

int tie_push(struct tie_stream *s, const struct tie_key *k, const struct word128 *words, size_t n,
	     tie_emit emit, void *ctx)
{
	size_t i = 0, start, g;
	int rc;

	if (n == 0)
		return 0;
	/* The held group goes on where these words start with its prefix. */
	if (s->n) {
		const uint64_t hi = s->held[0].hi;
		while (i < n && words[i].hi == hi)
			i++;
		if ((rc = hold(s, words, i)))
			return rc;
		if (i == n)
			return 0;
		if ((rc = release(s, k, emit, ctx)))
			return rc;
	}
	/* Single words go out as they are, in stretches; a group of tied words
	 * is ordered on its own; the last group is held back. */
	start = i;
	while (i < n) {
		g = i;
		while (i + 1 < n && words[i + 1].hi == words[g].hi)
			i++;
		i++;
		if (i == n || i - g > 1) {
			if (g > start && (rc = emit(ctx, words + start, g - start)))
				return rc;
			if ((rc = hold(s, words + g, i - g)))
				return rc;
			if (i < n && (rc = release(s, k, emit, ctx)))
				return rc;
			start = i;
		}
	}
	return 0;
}

int tie_flush(struct tie_stream *s, const struct tie_key *k, tie_emit emit, void *ctx)
{
	return release(s, k, emit, ctx);
}

void tie_free(struct tie_stream *s)
{
	free(s->held);
	memset(s, 0, sizeof *s);
}
