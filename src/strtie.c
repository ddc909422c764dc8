#include "config.h"
#include "strtie.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clsort.h"
#include "radix.h"
#include "strkey.h"
#include "util.h"

#define REFINE_MAX_THREADS 64

/* Refinement in rounds.  A tied group (a segment of the sorted words) is
 * sorted again on the next ROUND_BYTES bytes of its keys, as (bytes, marker,
 * position) words through the host's parallel radix sort; where those tie and
 * the keys go on, the smaller segment is sorted again on the bytes after, and
 * so on.  The keys are found once, into a table in the words' order that each
 * round permutes as it permutes the words, so that a round reads a key's
 * bytes and nothing else of it.  Where a round leaves its whole segment tied
 * (and before a group's first round), the bytes that every key of the segment
 * shares are skipped in one scan, so that all-equal keys end at once and a
 * long shared prefix costs one pass, not a round per ROUND_BYTES bytes; other
 * segments go straight to their round, which reads each key once.  The
 * largest segment is sorted on every thread (each step of its round shared
 * out by words) while it holds more than a thread's share of the words still
 * tied; then the segments are taken by the threads, the largest first, each
 * ordered on one thread in rounds of a one-thread radix sort, and by
 * comparisons below REFINE_SMALL. */
#define REFINE_BIG ((size_t)1 << 16)
#define REFINE_SMALL 48
/* The fewest words of a share when the tied groups are looked for on
 * several threads. */
#define GROUP_SHARE_MIN ((size_t)1 << 16)
/* A round's word holds 11 key bytes: 8 in hi, 3 in lo's top bytes; below
 * them a marker byte, the bytes left from its depth, up to ROUND_BYTES,
 * REST_LONG where more follow (the keys may still tie); the low 32 bits
 * the word's position in its segment.  The radix sort passes over the
 * bits from ROUND_LOW up: where the first 8 bytes already differ, the 3
 * below cost little, and where they tie the round goes 3 bytes further
 * than 8 would. */
#define ROUND_BYTES 11
#define REST_LONG (ROUND_BYTES + 1)
#define ROUND_LOW 32

struct segment {
	size_t start, n;	/* words [start, start + n) of the array */
	size_t depth;		/* key bytes every key of it shares */
	bool scan;		/* look for more shared bytes before its round */
};

/* A record's key, found once for all the rounds: finding it again (a
 * line's field) would cost more than the round. */
struct kref {
	const unsigned char *p;
	size_t len;
	uint32_t index;		/* the record's: the word's low 32 bits */
};

struct refiner {
	struct word128 *w;
	uint64_t mask;
	struct kref *keys;	/* by position: those of tied words, w's order */
	const struct str_keys *find;	/* finds them */
};

/* Keys whose bytes are asked for before they are read: the records lie
 * anywhere in memory. */
#define PREFETCH_AHEAD 16

/* Find the keys of words [start, start + n). */
static void find_range(const struct refiner *r, size_t start, size_t n)
{
	const struct str_keys *f = r->find;
	const size_t end = start + n;
	size_t i;

	for (i = start; i < end; i++) {
		if (f->ahead && i + PREFETCH_AHEAD < end)
			f->ahead(f->ctx, (uint32_t)r->w[i + PREFETCH_AHEAD].lo, false);
		if (f->ahead && i + PREFETCH_AHEAD / 2 < end)
			f->ahead(f->ctx, (uint32_t)r->w[i + PREFETCH_AHEAD / 2].lo, true);
		r->keys[i].index = (uint32_t)r->w[i].lo;
		f->key(f->ctx, r->keys[i].index, &r->keys[i].p, &r->keys[i].len);
	}
}

/* The key of the word at position i. */
static inline void key_of(const struct refiner *r, size_t i, const unsigned char **p,
			  size_t *len)
{
	*p = r->keys[i].p;
	*len = r->keys[i].len;
}

/* Bytes from depth on that the key p[0..len) shares with p0 (a key at
 * least depth + cap bytes long), at most cap. */
static size_t common_rest(const unsigned char *p0, const unsigned char *p, size_t len,
			  size_t depth, size_t cap)
{
	size_t l = len - depth < cap ? len - depth : cap, k = 0;

	if (l && memcmp(p0 + depth, p + depth, l)) {
		while (p0[depth + k] == p[depth + k])
			k++;
		l = k;
	}
	return l;
}

/* Bytes from depth on that the keys of seg share with its first key, at
 * most the shortest's rest; *equal when every one is the same as the
 * first. */
static size_t shared_rest(const struct refiner *r, const struct segment *seg, bool *equal)
{
	const unsigned char *p0, *p;
	size_t len0, len, i, l, lcp;

	key_of(r, seg->start, &p0, &len0);
	lcp = len0 - seg->depth;
	*equal = true;
	for (i = 1; i < seg->n && (lcp || *equal); i++) {
		if (i + PREFETCH_AHEAD < seg->n)
			__builtin_prefetch(r->keys[seg->start + i + PREFETCH_AHEAD].p + seg->depth);
		key_of(r, seg->start + i, &p, &len);
		l = common_rest(p0, p, len, seg->depth, lcp);
		if (len != len0 || l < len0 - seg->depth)
			*equal = false;
		lcp = l;
	}
	return lcp;
}

/* Keys of a large segment compared with its first for the bytes they
 * share: a guess, checked as the round reads every key. */
#define REST_SAMPLES 32

/* Bytes from depth on that seg's first key shares with REST_SAMPLES of
 * its keys, spread over it: most often what all of them share. */
static size_t sampled_rest(const struct refiner *r, const struct segment *seg)
{
	const unsigned char *p0, *p;
	size_t len0, len, k, lcp;

	key_of(r, seg->start, &p0, &len0);
	lcp = len0 - seg->depth;
	for (k = 1; k <= REST_SAMPLES && lcp; k++) {
		key_of(r, seg->start + k * (seg->n - 1) / REST_SAMPLES, &p, &len);
		lcp = common_rest(p0, p, len, seg->depth, lcp);
	}
	return lcp;
}

/* The round's word of the word at position at, the i-th of its segment:
 * ROUND_BYTES key bytes from depth, the marker, i (whose order is the
 * indexes'). */
static inline void round_word(const struct refiner *r, size_t at, size_t i, size_t depth,
			      struct word128 *out)
{
	const unsigned char *p;
	size_t len, left;
	uint64_t hi = 0, lo = 0, marker;
	unsigned k;

	key_of(r, at, &p, &len);
	left = len - depth;
	p += depth;
	if (left >= ROUND_BYTES) {
		for (k = 0; k < 8; k++)
			hi = hi << 8 | p[k];
		lo = (uint64_t)p[8] << 16 | (uint64_t)p[9] << 8 | p[10];
	} else {
		for (k = 0; k < 8; k++)
			hi = hi << 8 | (k < left ? p[k] : 0);
		for (; k < ROUND_BYTES; k++)
			lo = lo << 8 | (k < left ? p[k] : 0);
	}
	marker = left > ROUND_BYTES ? REST_LONG : left;
	out->hi = hi ^ r->mask;
	out->lo = ((lo << 8 | marker) ^ (r->mask & 0xffffffff)) << ROUND_LOW | (uint32_t)i;
}

/* Whether two round words hold the same bytes and marker. */
static bool round_same(const struct word128 *a, const struct word128 *b)
{
	return a->hi == b->hi && a->lo >> ROUND_LOW == b->lo >> ROUND_LOW;
}

/* Whether a round word's key goes on past its bytes. */
static bool round_long(const struct refiner *r, const struct word128 *a)
{
	return ((a->lo >> ROUND_LOW ^ r->mask) & 0xff) == REST_LONG;
}

static bool round_tied(const struct refiner *r, const struct word128 *a, const struct word128 *b)
{
	return round_same(a, b) && round_long(r, a);
}

struct small_key {
	const unsigned char *p;
	size_t len;
	uint32_t index;
};

static int small_up(const void *x, const void *y)
{
	const struct small_key *a = x, *b = y;
	const int c = str_cmp(a->p, a->len, b->p, b->len);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int small_down(const void *x, const void *y)
{
	const struct small_key *a = x, *b = y;
	const int c = str_cmp(b->p, b->len, a->p, a->len);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* A growing list of segments. */
struct seg_list {
	struct segment *s;
	size_t n, cap;
};

static bool seg_push(struct seg_list *l, size_t start, size_t n, size_t depth, bool scan)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct segment *g = realloc(l->s, cap * sizeof *g);
		if (!g)
			return false;
		l->s = g;
		l->cap = cap;
	}
	l->s[l->n++] = (struct segment){ start, n, depth, scan };
	return true;
}

/* Scratch of one thread's rounds. */
struct round_buf {
	struct word128 *words, *scratch;
	struct kref *keys;
	struct small_key *small;
	size_t cap, small_cap;
};

static bool buf_room(struct round_buf *b, size_t n)
{
	if (n > b->cap) {
		struct word128 *w = realloc(b->words, n * sizeof *w), *s;
		struct kref *k;
		if (!w)
			return false;
		b->words = w;
		s = realloc(b->scratch, n * sizeof *s);
		if (!s)
			return false;
		b->scratch = s;
		k = realloc(b->keys, n * sizeof *k);
		if (!k)
			return false;
		b->keys = k;
		b->cap = n;
	}
	return true;
}

static void buf_free(struct round_buf *b)
{
	free(b->words);
	free(b->scratch);
	free(b->keys);
	free(b->small);
}

/* Order a small segment by comparisons of the keys' rest. */
static bool order_small(const struct refiner *r, const struct segment *seg, struct round_buf *b)
{
	struct word128 *w = r->w + seg->start;
	size_t i;

	if (seg->n > b->small_cap) {
		struct small_key *g = realloc(b->small, seg->n * sizeof *g);
		if (!g)
			return false;
		b->small = g;
		b->small_cap = seg->n;
	}
	for (i = 0; i < seg->n; i++) {
		const unsigned char *p;
		size_t len;
		if (i + PREFETCH_AHEAD < seg->n)
			__builtin_prefetch(r->keys[seg->start + i + PREFETCH_AHEAD].p + seg->depth);
		key_of(r, seg->start + i, &p, &len);
		b->small[i] = (struct small_key){ p + seg->depth, len - seg->depth, (uint32_t)w[i].lo };
	}
	qsort(b->small, seg->n, sizeof *b->small, r->mask ? small_down : small_up);
	for (i = 0; i < seg->n; i++) {
		const struct small_key *k = &b->small[i];
		w[i].lo = (w[i].lo & ~(uint64_t)UINT32_MAX) | k->index;
		r->keys[seg->start + i] = (struct kref){ k->p - seg->depth, k->len + seg->depth,
							 k->index };
	}
	return true;
}

/* What a share of a large segment's round (or of the first sort's words, for
 * the groups it left tied) does. */
enum share_step { SHARE_GROUPS, SHARE_FIND, SHARE_WORDS, SHARE_GATHER, SHARE_PUT, SHARE_TIES };

/* What the shares of a step found. */
struct share_result {
	size_t lcp;		/* SHARE_WORDS: the least shared bytes of keys
				 * that fall short of skip, */
	bool equal;		/* unless all share skip bytes; */
	bool alike;		/* whether every word is the first key's */
	bool failed;		/* SHARE_GROUPS, SHARE_TIES: out of memory */
};

/* A share of a large segment's round: words [from, to) of it. */
struct share_job {
	const struct refiner *r;
	const struct segment *seg;
	enum share_step step;
	size_t from, to;
	size_t skip;		/* SHARE_WORDS: bytes from depth the words skip */
	struct share_result res;
	struct word128 *words;	/* the round's words, sorted after SHARE_WORDS */
	struct kref *keys;	/* the segment's keys in the sorted order */
	struct seg_list tied;	/* SHARE_TIES: the runs of tied words that
				 * begin in the share */
};

/* The segment's keys in the order of the round's sorted words, i of
 * them from..to: into keys, then (SHARE_PUT) back in place, and the
 * words' record indexes with them (the words of a tied segment differ in
 * nothing else). */
static void gather_share(const struct share_job *j)
{
	const struct refiner *r = j->r;
	const size_t start = j->seg->start;
	size_t i;

	if (j->step == SHARE_PUT) {
		memcpy(r->keys + start + j->from, j->keys + j->from,
		       (j->to - j->from) * sizeof *j->keys);
		for (i = j->from; i < j->to; i++)
			r->w[start + i].lo = (r->w[start + i].lo & ~(uint64_t)UINT32_MAX) |
					     j->keys[i].index;
		return;
	}
	for (i = j->from; i < j->to; i++) {
		if (i + PREFETCH_AHEAD < j->to)
			__builtin_prefetch(&r->keys[start + (uint32_t)j->words[i + PREFETCH_AHEAD].lo]);
		j->keys[i] = r->keys[start + (uint32_t)j->words[i].lo];
	}
}

/* The round's words of words from..to, skip bytes past the depth: each
 * key checked to share them with the first, in the same read, and each
 * word with the first key's. */
static void words_share(struct share_job *j)
{
	const struct refiner *r = j->r;
	const size_t start = j->seg->start, depth = j->seg->depth;
	const unsigned char *p0, *p;
	struct word128 first;
	size_t len0, len, i, c;

	key_of(r, start, &p0, &len0);
	round_word(r, start, 0, depth + j->skip, &first);
	for (i = j->from; i < j->to; i++) {
		if (i + PREFETCH_AHEAD < j->to)
			__builtin_prefetch(r->keys[start + i + PREFETCH_AHEAD].p + depth + j->skip);
		if (j->skip) {
			key_of(r, start + i, &p, &len);
			if (len - depth < j->skip || memcmp(p0 + depth, p + depth, j->skip)) {
				c = common_rest(p0, p, len, depth, j->skip);
				if (c < j->res.lcp)
					j->res.lcp = c;
				j->res.equal = false;
				continue;
			}
		}
		round_word(r, start + i, i, depth + j->skip, &j->words[i]);
		if (!round_same(&first, &j->words[i]))
			j->res.alike = false;
	}
}

/* Whether the words at positions a and b tie: SHARE_GROUPS, the first
 * sort's on its prefix; SHARE_TIES, the round's sorted words. */
static bool tied_at(const struct share_job *j, size_t a, size_t b)
{
	if (j->step == SHARE_GROUPS)
		return str_tied(&j->r->w[a], &j->r->w[b], j->r->mask);
	return round_tied(j->r, &j->words[a], &j->words[b]);
}

/* The runs of tied words that begin in from..to (the last may go on past
 * to), as segments: SHARE_GROUPS, the groups the first sort left tied,
 * each to be scanned for shared bytes; SHARE_TIES, those of the sorted
 * round words, one round deeper, one that is the whole segment to be
 * scanned. */
static void ties_share(struct share_job *j)
{
	const bool groups = j->step == SHARE_GROUPS;
	const size_t n = j->seg->n, depth = j->seg->depth + (groups ? 0 : ROUND_BYTES);
	size_t i = j->from, k;

	/* A run begun in the share before is that share's. */
	while (i > 0 && i < j->to && tied_at(j, i - 1, i))
		i++;
	for (; i < j->to; i = k) {
		for (k = i + 1; k < n && tied_at(j, i, k); k++)
			;
		if (k - i > 1 &&
		    !seg_push(&j->tied, j->seg->start + i, k - i, depth, groups || k - i == n)) {
			j->res.failed = true;
			return;
		}
	}
}

static void share_job(void *arg)
{
	struct share_job *j = arg;

	switch (j->step) {
	case SHARE_FIND:
		find_range(j->r, j->seg->start + j->from, j->to - j->from);
		break;
	case SHARE_WORDS:
		words_share(j);
		break;
	case SHARE_GATHER:
	case SHARE_PUT:
		gather_share(j);
		break;
	case SHARE_GROUPS:
	case SHARE_TIES:
		ties_share(j);
		break;
	}
}

/* Run one step of seg's round (words: the round's, sorted after
 * SHARE_WORDS) on its words shared out between up to threads threads (on
 * this one where threads is 1), what they found in *res: SHARE_FIND finds
 * the keys of a group not ordered yet, SHARE_TIES pushes the runs of tied
 * words on out; SHARE_GROUPS, not a round's, pushes the groups of seg's
 * words that the first sort left tied. */
static void by_shares(const struct refiner *r, const struct segment *seg, unsigned threads,
		      enum share_step step, struct round_buf *b, struct word128 *words,
		      size_t skip, struct share_result *res, struct seg_list *out)
{
	struct share_job jobs[REFINE_MAX_THREADS];
	const size_t per = (seg->n + threads - 1) / threads;
	unsigned t, count = 0;
	size_t i;

	for (t = 0; t < threads && t * per < seg->n; t++, count++)
		jobs[t] = (struct share_job){ r, seg, step, t * per,
					      seg->n - t * per < per ? seg->n : (t + 1) * per, skip,
					      { SIZE_MAX, true, true, false }, words, b->keys,
					      { 0 } };
	if (count == 1)
		share_job(jobs);
	else
		run_parallel(share_job, jobs, sizeof jobs[0], count);
	*res = (struct share_result){ SIZE_MAX, true, true, false };
	for (t = 0; t < count; t++) {
		const struct share_result *g = &jobs[t].res;
		if (g->lcp < res->lcp)
			res->lcp = g->lcp;
		res->equal = res->equal && g->equal;
		res->alike = res->alike && g->alike;
		res->failed = res->failed || g->failed;
		for (i = 0; i < jobs[t].tied.n && !res->failed; i++)
			res->failed = !seg_push(out, jobs[t].tied.s[i].start, jobs[t].tied.s[i].n,
						jobs[t].tied.s[i].depth, jobs[t].tied.s[i].scan);
		free(jobs[t].tied.s);
	}
}

/* One round of seg on threads threads: where it is to be scanned, its
 * shared bytes skipped (a small segment's found first; a large one's
 * guessed from samples and checked as its words are made, which then read
 * each key once); its words sorted on the next ROUND_BYTES, with their
 * keys; the segments still tied pushed on out.  False when out of memory. */
static bool round_of(const struct refiner *r, struct segment seg, unsigned threads,
		     struct round_buf *b, struct seg_list *out)
{
	struct share_result res;
	void *sorted = NULL;
	size_t skip;
	bool equal = false;

	if (seg.n < REFINE_SMALL) {
		if (seg.scan) {
			seg.depth += shared_rest(r, &seg, &equal);
			/* Equal keys are in index order already. */
			if (equal)
				return true;
		}
		return order_small(r, &seg, b);
	}
	if (!buf_room(b, seg.n))
		return false;
	skip = seg.scan ? sampled_rest(r, &seg) : 0;
	by_shares(r, &seg, threads, SHARE_WORDS, b, b->words, skip, &res, NULL);
	if (!res.equal) {
		/* Some keys share less than the samples did: all share lcp. */
		skip = res.lcp;
		by_shares(r, &seg, threads, SHARE_WORDS, b, b->words, skip, &res, NULL);
	}
	seg.depth += skip;
	/* All alike (equal keys among them): in index order already. */
	if (res.alike)
		return !round_long(r, &b->words[0]) ||
		       seg_push(out, seg.start, seg.n, seg.depth + ROUND_BYTES, true);
	/* Positions ascend among equal bytes and markers. */
	if (radix_sort_above(b->words, b->scratch, seg.n, WORD128, ROUND_LOW, threads,
			     &sorted))
		return false;
	by_shares(r, &seg, threads, SHARE_GATHER, b, sorted, 0, &res, NULL);
	by_shares(r, &seg, threads, SHARE_PUT, b, sorted, 0, &res, NULL);
	by_shares(r, &seg, threads, SHARE_TIES, b, sorted, 0, &res, out);
	return !res.failed;
}

/* The segments shared out, taken by the threads a piece at a time, the
 * largest first: a segment of PIECE_WORDS words or more alone, smaller
 * ones together up to about PIECE_WORDS words. */
#define PIECE_WORDS ((size_t)4096)

struct pieces {
	struct segment *segs;
	size_t *at;		/* piece p is segs[at[p]..at[p + 1]) */
	size_t n;
	size_t next;		/* the next piece to take */
};

/* A thread of the shared-out segments, each ordered on it alone. */
struct refine_job {
	const struct refiner *r;
	struct pieces *pool;
	bool failed;
	double time;		/* the thread's, for -vvv */
};

static int larger_first(const void *x, const void *y)
{
	const struct segment *a = x, *b = y;
	return (a->n < b->n) - (a->n > b->n);
}

/* Cut l into pieces, its large segments first, the largest first.  False
 * when out of memory. */
static bool cut_pieces(struct seg_list *l, struct pieces *p)
{
	struct segment *s = malloc((l->n ? l->n : 1) * sizeof *s);
	size_t i, k = 0, words = 0;

	p->at = malloc((l->n + 1) * sizeof *p->at);
	p->segs = s;
	p->n = p->next = 0;
	if (!s || !p->at)
		return false;
	for (i = 0; i < l->n; i++)
		if (l->s[i].n >= PIECE_WORDS)
			s[k++] = l->s[i];
	qsort(s, k, sizeof *s, larger_first);
	for (i = 0; i < k; i++)
		p->at[p->n++] = i;
	for (i = 0; i < l->n; i++) {
		if (l->s[i].n >= PIECE_WORDS)
			continue;
		if (words == 0 || words >= PIECE_WORDS) {
			p->at[p->n++] = k;
			words = 0;
		}
		words += l->s[i].n;
		s[k++] = l->s[i];
	}
	p->at[p->n] = k;
	return true;
}

static void refine_job(void *arg)
{
	struct refine_job *j = arg;
	struct pieces *pool = j->pool;
	struct round_buf b = { 0 };
	struct seg_list todo = { 0 };
	const double t0 = now_sec();
	size_t p, i;

	while (!j->failed && (p = __atomic_fetch_add(&pool->next, 1, __ATOMIC_RELAXED)) < pool->n)
		for (i = pool->at[p]; i < pool->at[p + 1] && !j->failed; i++) {
			const struct segment *g = &pool->segs[i];
			/* A group the device sort left tied: its keys found
			 * here, just before its rounds read them again (its
			 * lines then come from the caches, not from memory). */
			if (g->depth == STR_PREFIX)
				find_range(j->r, g->start, g->n);
			if (!seg_push(&todo, g->start, g->n, g->depth, g->scan)) {
				j->failed = true;
				break;
			}
			while (todo.n && !j->failed) {
				const struct segment seg = todo.s[--todo.n];
				if (!round_of(j->r, seg, 1, &b, &todo))
					j->failed = true;
			}
		}
	free(todo.s);
	buf_free(&b);
	j->time = now_sec() - t0;
}

/* A share of the sorted words whose keys it compares with the word's
 * before (str_refine's same). */
struct same_job {
	const struct refiner *r;
	unsigned char *same;
	size_t lo, hi;
};

static void same_job(void *arg)
{
	const struct same_job *j = arg;
	const struct word128 *w = j->r->w;
	const unsigned char *x, *y;
	size_t i, xl, yl;

	for (i = j->lo; i < j->hi; i++) {
		if (w[i].hi != w[i - 1].hi || w[i].lo >> 32 != w[i - 1].lo >> 32) {
			j->same[i] = 0;
			continue;
		}
		/* Tied on the word: short keys are equal; long ones were found
		 * for the rounds. */
		if (!str_tied(&w[i], &w[i - 1], j->r->mask)) {
			j->same[i] = 1;
			continue;
		}
		key_of(j->r, i, &x, &xl);
		key_of(j->r, i - 1, &y, &yl);
		j->same[i] = str_cmp(x, xl, y, yl) == 0;
	}
}

static void mark_same(const struct refiner *r, size_t n, unsigned char *same, unsigned threads)
{
	struct same_job jobs[REFINE_MAX_THREADS];
	unsigned t;

	if (n == 0)
		return;
	same[0] = 0;
	for (t = 0; t < threads; t++)
		jobs[t] = (struct same_job){ r, same, 1 + (n - 1) * t / threads,
					     1 + (n - 1) * (t + 1) / threads };
	run_parallel(same_job, jobs, sizeof jobs[0], threads);
}

/* The segments of l onto big (REFINE_BIG words or more) or small, their
 * words added to *left; l freed.  False when out of memory. */
static bool by_size(struct seg_list *l, struct seg_list *big, struct seg_list *small,
		    size_t *left)
{
	bool ok = true;
	size_t i;

	for (i = 0; ok && i < l->n; i++) {
		ok = seg_push(l->s[i].n >= REFINE_BIG ? big : small, l->s[i].start, l->s[i].n,
			      l->s[i].depth, l->s[i].scan);
		*left += l->s[i].n;
	}
	free(l->s);
	return ok;
}

int str_refine(struct word128 *w, size_t n, uint64_t mask, const struct str_keys *keys,
	       unsigned threads, unsigned char *same)
{
	struct refiner r = { w, mask, NULL, keys };
	struct seg_list big = { 0 }, small = { 0 }, found = { 0 };
	const struct segment all = { 0, n, STR_PREFIX, true };
	struct refine_job jobs[REFINE_MAX_THREADS];
	struct round_buf b = { 0 };
	struct pieces pool = { NULL, NULL, 0, 0 };
	struct share_result res;
	size_t i, left = 0, groups = 0, big_rounds = 0;
	unsigned t, count = 0, found_threads;
	double t0 = now_sec(), t_find = 0, t_big, longest = 0, sum = 0;
	bool ok = true;

	if (threads < 1)
		threads = 1;
	if (threads > REFINE_MAX_THREADS)
		threads = REFINE_MAX_THREADS;
	/* The groups the device sort left tied, looked for on threads of
	 * GROUP_SHARE_MIN words or more. */
	found_threads = n / GROUP_SHARE_MIN < 1 ? 1 :
			n / GROUP_SHARE_MIN < threads ? (unsigned)(n / GROUP_SHARE_MIN) : threads;
	by_shares(&r, &all, found_threads, SHARE_GROUPS, &b, NULL, 0, &res, &found);
	groups = found.n;
	ok = !res.failed && by_size(&found, &big, &small, &left);
	if (ok && (big.n || small.n))
		ok = (r.keys = malloc(n * sizeof *r.keys)) != NULL;
	/* The largest segment on every thread, round after round, while it
	 * holds more than a thread's share of the words left tied; what it
	 * leaves tied goes back on the list it is sized for.  Then all are
	 * shared out, each ordered on one thread. */
	while (ok && big.n) {
		struct seg_list next = { 0 };
		struct segment seg;
		size_t most = 0;
		for (i = 0; i < big.n; i++)
			if (big.s[i].n > big.s[most].n)
				most = i;
		if (big.s[most].n * threads <= left)
			break;
		seg = big.s[most];
		big.s[most] = big.s[--big.n];
		left -= seg.n;
		/* A group the device sort left tied: its keys found first, on
		 * every thread (it alone would leave the others idle). */
		if (seg.depth == STR_PREFIX) {
			const double t1 = now_sec();
			by_shares(&r, &seg, threads, SHARE_FIND, &b, NULL, 0, &res, NULL);
			t_find += now_sec() - t1;
		}
		ok = ok && round_of(&r, seg, threads, &b, &next);
		big_rounds++;
		ok = by_size(&next, &big, &small, &left) && ok;
	}
	for (i = 0; ok && i < big.n; i++)
		ok = seg_push(&small, big.s[i].start, big.s[i].n, big.s[i].depth, big.s[i].scan);
	buf_free(&b);
	t_big = now_sec() - t0;
	t0 = now_sec();
	/* The rest shared out, a piece at a time, each on one thread. */
	ok = ok && cut_pieces(&small, &pool);
	if (ok && pool.n) {
		count = pool.n < threads ? (unsigned)pool.n : threads;
		for (t = 0; t < count; t++)
			jobs[t] = (struct refine_job){ &r, &pool, false, 0 };
		run_parallel(refine_job, jobs, sizeof jobs[0], count);
	}
	free(pool.segs);
	free(pool.at);
	for (t = 0; t < count; t++) {
		if (jobs[t].failed)
			ok = false;
		sum += jobs[t].time;
		if (jobs[t].time > longest)
			longest = jobs[t].time;
	}
	msg_info(3, "ties: %zu tied groups; %zu rounds of large segments on %u threads in "
		 "%.3f s (finding keys %.3f s); then %zu segments shared out in %.3f s (the "
		 "busiest thread %.3f s, the mean %.3f s)", groups, big_rounds, threads, t_big,
		 t_find, small.n, now_sec() - t0, longest, count ? sum / count : 0.0);
	if (ok && same)
		mark_same(&r, n, same, threads);
	free(big.s);
	free(small.s);
	free(r.keys);
	if (!ok) {
		msg_errno(ENOMEM, "cannot order keys that share a long prefix");
		return CLS_E_FAIL;
	}
	return 0;
}
