#include "config.h"
#include "output.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvkey.h"
#include "util.h"

/* --- gather ----------------------------------------------------------- */

#define DECODE_WORDS 8192
/* Gathers of fewer records than this stay on one thread. */
#define GATHER_MIN 65536
#define GATHER_MAX_THREADS 64
/* Records each thread gathers into its buffer before the buffers are
 * written: the buffers stay small and in the caches, and are reused. */
#define GATHER_ROUND 32768

/* Turns n sorted words into their n records at dst. */
typedef void (*words_fn)(const struct enc_format *f, const void *words, size_t n,
			 unsigned char *dst);

static void decode_words(const struct enc_format *f, const void *words, size_t n,
			 unsigned char *dst)
{
	f->kt->decode(words, n, f->mask, dst);
}

struct words_job {
	const struct enc_format *f;
	words_fn fn;
	const unsigned char *words;
	size_t count;
	unsigned char *dst;
};

static void words_job(void *arg)
{
	const struct words_job *j = arg;
	j->fn(j->f, j->words, j->count, j->dst);
}

/* Write the records of rec bytes each that fn makes of count words: a
 * mapped output is written into in place, on several threads when there
 * are enough of them; any other through a buffer. */
static int emit_words(struct out_writer *w, const struct enc_format *f, const void *words,
		      size_t count, size_t rec, words_fn fn)
{
	const size_t ws = word_size(f->kind);
	unsigned char tmp[DECODE_WORDS * 16];
	unsigned char *dst = out_claim(w, count * rec);
	size_t i;
	int rc = 0;

	if (dst) {
		struct words_job jobs[OUT_COPY_MAX_THREADS];
		const unsigned threads = out_copy_threads(count * rec, f->threads);
		unsigned t;
		for (t = 0; t < threads; t++) {
			const size_t first = count / threads * t;
			jobs[t] = (struct words_job){ f, fn, (const unsigned char *)words + first * ws,
						      t + 1 < threads ? count / threads : count - first,
						      dst + first * rec };
		}
		run_parallel(words_job, jobs, sizeof jobs[0], threads);
		return 0;
	}
	for (i = 0; i < count && rc == 0; i += DECODE_WORDS) {
		const size_t c = count - i < DECODE_WORDS ? count - i : DECODE_WORDS;
		fn(f, (const char *)words + i * ws, c, tmp);
		rc = out_write(w, tmp, c * rec);
	}
	return rc;
}

static int emit_plain(struct out_writer *w, const struct enc_format *f, const void *words,
		      size_t count)
{
	const size_t ws = word_size(f->kind);

	/* Ascending unsigned keys are their own bytes. */
	if (f->mask == 0 && f->kt->raw(1) == 1 && f->kt->raw(0) == 0)
		return out_write(w, words, count * ws);
	return emit_words(w, f, words, count, ws, decode_words);
}

int out_emit_packed(struct out_writer *w, const struct enc_format *f, const void *words,
		    size_t count)
{
	return emit_words(w, f, words, count, f->rec_size, enc_unpack);
}

/* One thread's share of a gather: records [first, first+count) of the
 * sorted words, copied into its own buffer. */
struct gather {
	const struct enc_format *f;
	const struct enc_batch *b;
	const void *words;
	const struct kv_line *sorted;	/* kv lines in order already, or NULL */
	struct kv_line *ent;	/* kv lines of words: the thread's entries of a round */
	size_t first, count;
	unsigned char *dst;	/* where the records go in a mapped output, or NULL */
	unsigned char *buf;
	size_t cap, len;
	bool failed;
};

static bool gather_room(struct gather *g, size_t more)
{
	if (g->len + more > g->cap) {
		size_t cap = g->cap ? g->cap : (size_t)1 << 20;
		unsigned char *grown;
		while (cap < g->len + more)
			cap *= 2;
		grown = realloc(g->buf, cap);
		if (!grown)
			return false;
		g->buf = grown;
		g->cap = cap;
	}
	return true;
}

/* Record i of g's share: from the words and the run, or in order already. */
static inline void record_at(const struct gather *g, size_t i, const unsigned char **p, size_t *len)
{
	if (g->sorted) {
		*p = (const unsigned char *)g->sorted[i].p;
		*len = g->sorted[i].len;
	} else {
		enc_record(g->f, g->b, enc_word_index(g->f, g->words, i), p, len);
	}
}

static void gather_job(void *arg)
{
	struct gather *g = arg;
	const struct enc_format *f = g->f;
	const bool kv = f->fmt == CLS_FMT_KV;
	const size_t end = g->first + g->count;
	size_t i;

	g->len = 0;
	for (i = g->first; i < end; i++) {
		const unsigned char *p;
		unsigned char *to;
		size_t len;

		/* The records lie anywhere: ask for one a little ahead of its
		 * use. */
		if (i + 8 < end) {
			record_at(g, i + 8, &p, &len);
			__builtin_prefetch(p);
		}
		record_at(g, i, &p, &len);
		if (!g->dst && !gather_room(g, len + 1)) {
			g->failed = true;
			return;
		}
		to = g->dst ? g->dst : g->buf;
		memcpy(to + g->len, p, len);
		g->len += len;
		if (kv)
			to[g->len++] = (unsigned char)f->eol;
	}
}

/* Shares records [first, first + n) of words out to threads gathers, in
 * shares of n / threads rounded down or up; none with a place set yet. */
static void share_out(struct gather *g, unsigned threads, const struct enc_format *f,
		      const struct enc_batch *b, const void *words, const struct kv_line *sorted,
		      size_t first, size_t n)
{
	unsigned i;

	/* The n % threads left over one each to the first threads: a round
	 * of threads * GATHER_ROUND records or fewer fits each thread's
	 * GATHER_ROUND entries (the last share taking them all overran them
	 * by up to threads - 1). */
	for (i = 0; i < threads; i++) {
		g[i].f = f;
		g[i].b = b;
		g[i].words = words;
		g[i].sorted = sorted;
		g[i].count = n / threads + (i < n % threads);
		g[i].first = i ? g[i - 1].first + g[i - 1].count : first;
		g[i].dst = NULL;
		g[i].failed = false;
	}
}

/* One thread's share of the sizes of lines to gather: into len. */
static void size_job(void *arg)
{
	struct gather *g = arg;
	const size_t end = g->first + g->count;
	size_t i;

	g->len = 0;
	for (i = g->first; i < end; i++)
		g->len += g->sorted[i].len + 1;
}

/* One thread's share of kv lines of words: their line table entries in
 * the words' order into its own, first to count, their size into len. */
static void entries_job(void *arg)
{
	struct gather *g = arg;
	const struct kv_line *lines = g->b->lines;
	const size_t end = g->first + g->count;
	size_t i;

	g->len = 0;
	for (i = g->first; i < end; i++) {
		const struct kv_line *e = &lines[enc_word_index(g->f, g->words, i)];
		if (i + 16 < end)
			__builtin_prefetch(&lines[enc_word_index(g->f, g->words, i + 16)]);
		g->ent[i - g->first] = *e;
		g->len += e->len + 1;
	}
	g->sorted = g->ent;
	g->first = 0;
}

/* The place of lines g[0..threads) have sized, each thread's part set
 * for it to gather into: in a mapped output (or a run kept in memory)
 * with room for them, else NULL. */
static unsigned char *claim_lines(struct out_writer *w, struct gather *g, unsigned threads)
{
	unsigned char *dst;
	size_t i, at = 0;

	for (i = 0; i < threads; i++)
		at += g[i].len;
	if (!(dst = out_claim(w, at)))
		return NULL;
	for (i = 0, at = 0; i < threads; i++) {
		g[i].dst = dst + at;
		at += g[i].len;
	}
	return dst;
}

/* The gathers' buffers, in order, where they did not gather into place. */
static int write_gathered(struct out_writer *w, const struct gather *g, unsigned threads)
{
	unsigned i;
	int rc = 0;

	for (i = 0; i < threads && rc == 0; i++) {
		if (g[i].failed) {
			msg_errno(ENOMEM, "cannot gather the sorted records");
			return CLS_E_FAIL;
		}
		if (!g[i].dst)
			rc = out_write(w, g[i].buf, g[i].len);
	}
	return rc;
}

/* kv lines of words, GATHER_ROUND a thread at a time: each thread first
 * copies its share's line table entries in the words' order into an
 * array of its own (asking for each ahead from the words), which sizes
 * the share, then reads the lines from there (asking for each ahead from
 * its entry).  Read in one loop, a line's entry and its text are two
 * misses in a row, and the text cannot be asked for before its entry
 * has come. */
static int emit_kv_words(struct out_writer *w, const struct enc_format *f,
			 const struct enc_batch *b, const void *words, size_t count, struct gather *g,
			 unsigned threads)
{
	const size_t step = (size_t)threads * GATHER_ROUND;
	size_t first, i;
	int rc = 0;

	for (i = 0; i < threads; i++)
		if (!g[i].ent && !(g[i].ent = malloc(GATHER_ROUND * sizeof *g[i].ent))) {
			msg_errno(ENOMEM, "cannot gather the sorted records");
			return CLS_E_FAIL;
		}
	for (first = 0; first < count && rc == 0; first += step) {
		const size_t n = count - first < step ? count - first : step;
		share_out(g, threads, f, b, words, NULL, first, n);
		run_parallel(entries_job, g, sizeof *g, threads);
		claim_lines(w, g, threads);
		run_parallel(gather_job, g, sizeof *g, threads);
		rc = write_gathered(w, g, threads);
	}
	return rc;
}

/* --- kv lines dealt by rank ------------------------------------------------
 * A run's kv lines fetched in the words' order are two misses each, the
 * line's entry and its text, wherever they lie (86 ns a line a thread on
 * 2 cores, 175 on 16).  Where the whole run goes into a mapped output at
 * once, each line's rank (its place among the sorted words) is noted
 * instead, and the lines are read in the order they lie in, each copied
 * into the output at the place of its bucket: DEAL_RANKS ranks, about a
 * megabyte of text, whose lines then all lie in that place, and its rank
 * beside the bucket's others in the order they were dealt.  Each bucket
 * is then put in order where it lies, from a copy in the caches.  (A
 * rank's line's place stored at the rank, a store at random a line, took
 * the deal of 256 MiB of lines on 2 cores 120-138 ms, 60-97 without.) */

/* Runs of fewer lines than this are gathered: their lines are in the
 * caches or nearly. */
#define DEAL_MIN ((size_t)1 << 20)
/* Ranks in a bucket (the last may hold fewer): a prime, not 2^15.  Where
 * the lines have one length (keys and values of fixed widths), buckets of
 * 2^15 ranks were all a multiple of 4 KiB long, and the places the deal
 * stores at, one in each bucket and one in each bucket's ranks, moved on
 * together at the same offsets within their pages: the same few sets of
 * the caches for all of them.  (2 cores, 256 MiB of kv lines of 22 bytes:
 * the deal 144-160 ms with 2^15, 65-108 ms with this.) */
#define DEAL_RANKS ((size_t)32749)
/* Bits of a rank in its bucket, below a line's bytes in dealt. */
#define DEAL_RANK_BITS 15
_Static_assert(DEAL_RANKS <= (size_t)1 << DEAL_RANK_BITS, "a bucket's ranks fit their bits");
/* A line's bytes, its end with them, that dealt holds beside its rank:
 * the order of a longer one's bucket looks for its end.  (Looking for
 * every line's end, the order of 256 MiB of kv lines on 2 cores took
 * 62-66 ms.) */
#define DEAL_LEN_MOST ((size_t)1 << (32 - DEAL_RANK_BITS))

struct deal {
	const struct enc_format *f;
	const struct kv_line *lines;	/* the run's line table, or NULL where it
					 * is due: the lines are found in their text */
	const struct kv_stretch *st;	/* the run's lines, in input order */
	const void *words;
	uint32_t *rank;		/* of each line */
	uint32_t *dealt;	/* each bucket's lines in the order they lie in
				 * it, bucket c's from c * DEAL_RANKS: a line's
				 * rank in its bucket, and above it its bytes (0:
				 * DEAL_LEN_MOST or more) (with rank,
				 * OUT_EMIT_LINE_BYTES a line) */
	const uint64_t *start;	/* where each bucket starts in dst, and the end */
	unsigned char *dst;
	size_t n, nb, nst;
};

struct deal_job {
	const struct deal *d;
	size_t lo, hi;		/* ranks (rank_job), stretches (deal_size_job,
				 * deal_job) or buckets (order_job) */
	uint64_t *off;		/* nb: the bytes of each bucket (deal_size_job), then where
				 * the thread's next line of each goes (deal_job) */
	uint32_t *cnt;		/* nb: the lines of each bucket, then where the
				 * thread's next rank of each goes in dealt */
	unsigned char *tmp;	/* order_job's copy of a bucket... */
	size_t tmp_cap;
	uint32_t *at, *len;	/* ...and where each rank's line lies in it, and
				 * its bytes (DEAL_RANKS each) */
	bool failed;
};

/* Shares [0, n) out to threads jobs, the last taking what the others
 * leave. */
static void deal_share(struct deal_job *jobs, unsigned threads, size_t n)
{
	unsigned t;

	for (t = 0; t < threads; t++) {
		jobs[t].lo = n / threads * t;
		jobs[t].hi = t + 1 < threads ? n / threads * (t + 1) : n;
	}
}

#define RANK_AHEAD 32

static void rank_job(void *arg)
{
	struct deal_job *j = arg;
	const struct deal *d = j->d;
	size_t r;

	for (r = j->lo; r < j->hi; r++) {
		/* A store at random a line: its line asked for RANK_AHEAD
		 * ranks before, so that more than the stores the core holds
		 * are on their way at once. */
		if (r + RANK_AHEAD < j->hi)
			__builtin_prefetch(&d->rank[enc_word_index(d->f, d->words, r + RANK_AHEAD)], 1);
		d->rank[enc_word_index(d->f, d->words, r)] = (uint32_t)r;
	}
}

/* Line i of stretch st, which starts at *p where the line table is due:
 * its bytes, and *p moved past its line end. */
static inline const char *deal_line(const struct deal *d, const struct kv_stretch *st, size_t i,
				    const char **p, size_t *len)
{
	if (d->lines) {
		*len = d->lines[i].len;
		return d->lines[i].p;
	}
	return kvk_next_line(p, st->end, d->f->eol, len);
}

static void deal_size_job(void *arg)
{
	struct deal_job *j = arg;
	const struct deal *d = j->d;
	size_t k, i, len;

	memset(j->off, 0, d->nb * sizeof *j->off);
	memset(j->cnt, 0, d->nb * sizeof *j->cnt);
	for (k = j->lo; k < j->hi; k++) {
		const struct kv_stretch *st = &d->st[k];
		const char *p = st->p;
		for (i = st->first; i < st->first + st->n; i++) {
			const size_t c = d->rank[i] / DEAL_RANKS;
			deal_line(d, st, i, &p, &len);
			j->off[c] += len + 1;
			j->cnt[c]++;
		}
	}
}

/* The lines of the job's stretches into their buckets, each with its line
 * end (a last one without gets one). */
static void deal_job(void *arg)
{
	struct deal_job *j = arg;
	const struct deal *d = j->d;
	const unsigned char eol = (unsigned char)d->f->eol;
	size_t k, i, len;

	for (k = j->lo; k < j->hi; k++) {
		const struct kv_stretch *st = &d->st[k];
		const char *p = st->p;
		for (i = st->first; i < st->first + st->n; i++) {
			const uint32_t r = d->rank[i];
			const size_t c = r / DEAL_RANKS;
			const char *line = deal_line(d, st, i, &p, &len);
			const uint64_t at = j->off[c];
			copy_short(d->dst + at, line, len);
			d->dst[at + len] = eol;
			d->dealt[c * DEAL_RANKS + j->cnt[c]++] =
				(uint32_t)(r - c * DEAL_RANKS) |
				(len + 1 < DEAL_LEN_MOST ? (uint32_t)(len + 1) << DEAL_RANK_BITS : 0);
			j->off[c] = at + len + 1;
		}
	}
}

static void order_job(void *arg)
{
	struct deal_job *j = arg;
	const struct deal *d = j->d;
	const unsigned char eol = (unsigned char)d->f->eol;
	size_t c;

	if (!j->at && (!(j->at = malloc(DEAL_RANKS * sizeof *j->at)) ||
		       !(j->len = malloc(DEAL_RANKS * sizeof *j->len)))) {
		j->failed = true;
		return;
	}
	for (c = j->lo; c < j->hi; c++) {
		const size_t bytes = d->start[c + 1] - d->start[c];
		const size_t base = c * DEAL_RANKS;
		const size_t end = base + DEAL_RANKS < d->n ? base + DEAL_RANKS : d->n;
		unsigned char *to = d->dst + d->start[c];
		size_t k, at = 0;

		if (bytes > j->tmp_cap) {
			free(j->tmp);
			j->tmp_cap = 0;
			if (!(j->tmp = malloc(bytes))) {
				j->failed = true;
				return;
			}
			j->tmp_cap = bytes;
		}
		memcpy(j->tmp, to, bytes);
		/* The bucket's lines in the order they lie: each rank's. */
		for (k = base; k < end; k++) {
			const uint32_t v = d->dealt[k];
			const uint32_t rank = v & (((uint32_t)1 << DEAL_RANK_BITS) - 1);
			size_t len = v >> DEAL_RANK_BITS;
			if (!len) {
				const unsigned char *p = j->tmp + at;
				len = (size_t)((const unsigned char *)memchr(p, eol, bytes - at) - p) + 1;
			}
			j->at[rank] = (uint32_t)at;
			j->len[rank] = (uint32_t)len;
			at += len;
		}
		for (k = 0; k < end - base; k++) {
			copy_short(to, j->tmp + j->at[k], j->len[k]);
			to += j->len[k];
		}
	}
}

/* The threads that write count records of f. */
static unsigned gather_threads(const struct enc_format *f, size_t count)
{
	if (count < GATHER_MIN)
		return 1;
	return f->threads < GATHER_MAX_THREADS ? f->threads : GATHER_MAX_THREADS;
}

/* Whether n kv lines of b (all of them, in words' order) go into w by
 * rank, as above, on threads. */
static bool deals(const struct out_writer *w, const struct enc_format *f,
		  const struct enc_batch *b, size_t n, unsigned threads)
{
	return f->fmt == CLS_FMT_KV && n >= DEAL_MIN && n == b->n && n <= UINT32_MAX &&
	       threads >= 2 && out_claimable(w, 1);
}

bool out_deals(const struct out_writer *w, const struct enc_format *f, const struct enc_batch *b)
{
	return !f->tail && f->indexed && deals(w, f, b, b->n, gather_threads(f, b->n));
}

/* The most bytes of lines a bucket holds (its lines' places are 32 bits);
 * CLSORT_DEAL_BUCKET_MAX sets less, for tests of the gather that takes
 * over from a deal that cannot hold a bucket. */
static uint64_t bucket_max(void)
{
	const char *s = getenv("CLSORT_DEAL_BUCKET_MAX");
	const unsigned long long v = s && *s ? strtoull(s, NULL, 10) : 0;
	return v && v < UINT32_MAX ? v : UINT32_MAX;
}

/* The n kv lines of b (all of them, in words' order) into a mapped
 * output by rank, as above: 0, CLS_E_FAIL after a message, or 1 where it
 * does not apply (nothing written). */
static int emit_kv_dealt(struct out_writer *w, const struct enc_format *f,
			 const struct enc_batch *b, const void *words, size_t n, unsigned threads,
			 void *spare, size_t spare_bytes)
{
	struct deal d = { f, b->lines_due ? NULL : b->lines, NULL, words, NULL, NULL, NULL, NULL,
			  n, 0, 0 };
	struct kv_stretch *st = NULL;
	struct deal_job jobs[GATHER_MAX_THREADS];
	uint32_t *own_rank = NULL, *own_dealt = NULL;
	uint64_t *start = NULL, total = 0, most = bucket_max();
	size_t c, t;
	int rc = 1;

	if (!deals(w, f, b, n, threads))
		return 1;
	d.nb = (n - 1) / DEAL_RANKS + 1;
	memset(jobs, 0, sizeof jobs);
	/* The ranks and places in the sort's spare memory (no more memory
	 * faulted in), else in their own: not in the output's place, where
	 * the lines go. */
	if (spare && !out_holds(w, spare) && spare_bytes / (sizeof *d.rank + sizeof *d.dealt) >= n) {
		d.rank = spare;
		d.dealt = d.rank + n;
	} else {
		d.rank = own_rank = malloc(n * sizeof *d.rank);
		d.dealt = own_dealt = malloc(n * sizeof *d.dealt);
	}
	start = malloc((d.nb + 1) * sizeof *start);
	for (t = 0; t < threads; t++)
		if (!(jobs[t].off = malloc(d.nb * sizeof *jobs[t].off)) ||
		    !(jobs[t].cnt = malloc(d.nb * sizeof *jobs[t].cnt)))
			goto out;
	if (!d.rank || !d.dealt || !start)
		goto out;
	for (t = 0; t < threads; t++)
		jobs[t].d = &d;
	if (!(d.nst = enc_kv_stretches(f, b, &st)))
		goto out;
	d.st = st;
	deal_share(jobs, threads, n);
	run_parallel(rank_job, jobs, sizeof jobs[0], threads);
	deal_share(jobs, threads, d.nst);
	run_parallel(deal_size_job, jobs, sizeof jobs[0], threads);
	/* Each bucket's place, and in it each thread's lines' (their order
	 * there does not matter: the ranks put them in order). */
	for (c = 0; c < d.nb; c++) {
		uint32_t lines = 0;
		start[c] = total;
		for (t = 0; t < threads; t++) {
			const uint64_t bytes = jobs[t].off[c];
			const uint32_t count = jobs[t].cnt[c];
			jobs[t].off[c] = total;
			jobs[t].cnt[c] = lines;
			total += bytes;
			lines += count;
		}
		if (total - start[c] > most)
			goto out;
	}
	start[d.nb] = total;
	d.start = start;
	if (!(d.dst = out_claim(w, total)))
		goto out;
	/* Stores scattered over the buckets: 2 cores, 12201611 lines
	 * through a pipe, 0.91 s with the faults taken as they came, 0.67 s
	 * faulted in first. */
	out_fault_in(w, d.dst, total, threads);
	run_parallel(deal_job, jobs, sizeof jobs[0], threads);
	deal_share(jobs, threads, d.nb);
	run_parallel(order_job, jobs, sizeof jobs[0], threads);
	rc = 0;
	for (t = 0; t < threads; t++)
		if (jobs[t].failed)
			rc = CLS_E_FAIL;
	if (rc)
		msg_errno(ENOMEM, "cannot gather the sorted records");
	else
		msg_info(2, "%zu kv lines dealt by rank into %zu buckets%s", n, d.nb,
			 own_rank ? "" : ", their ranks in the sort's spare memory");
out:
	for (t = 0; t < threads; t++) {
		free(jobs[t].off);
		free(jobs[t].cnt);
		free(jobs[t].tmp);
		free(jobs[t].at);
		free(jobs[t].len);
	}
	free(start);
	free(st);
	free(own_dealt);
	free(own_rank);
	return rc;
}

/* The threads' buffers out_emit keeps between runs, freed by out_finish
 * and out_abort through w->emit_free. */
static void emit_free(struct out_writer *w)
{
	struct gather *g = w->emit_state;
	size_t i;

	if (!g)
		return;
	for (i = 0; i < GATHER_MAX_THREADS; i++) {
		free(g[i].buf);
		free(g[i].ent);
	}
	free(g);
	w->emit_state = NULL;
}

/* Records of indexed words (or kv lines in order already, sorted):
 * copied by several threads into buffers of their own, written in order,
 * GATHER_ROUND records a thread at a time; fixed-size records and lines
 * into a mapped output all at once, into place. */
static int emit_gather(struct out_writer *w, const struct enc_format *f, const struct enc_batch *b,
		       const void *words, const struct kv_line *sorted, size_t count, void *spare,
		       size_t spare_bytes)
{
	unsigned threads = gather_threads(f, count);
	unsigned char *dst = f->fmt == CLS_FMT_BIN ? out_claim(w, count * f->rec_size) : NULL;
	struct gather *g;
	size_t i, first, step;
	int rc = 0;

	if (!w->emit_state) {
		w->emit_state = calloc(GATHER_MAX_THREADS, sizeof *g);
		w->emit_free = emit_free;
		if (!w->emit_state) {
			msg_errno(ENOMEM, "cannot gather the sorted records");
			return CLS_E_FAIL;
		}
	}
	g = w->emit_state;
	if (f->fmt == CLS_FMT_KV && !sorted) {
		rc = emit_kv_dealt(w, f, b, words, count, threads, spare, spare_bytes);
		if (rc != 1)
			return rc;
		/* Not dealt: from the line table, made where it is due. */
		if (enc_kv_lines(f, b))
			return CLS_E_FAIL;
		/* Not dealt after all (no memory for it): words sorted where the
		 * lines go (out_deals) leave first, for the spare. */
		if (out_holds(w, words)) {
			const size_t bytes = count * word_size(f->kind);
			if (!spare || spare_bytes < bytes) {
				msg_errno(ENOMEM, "cannot gather the sorted records");
				return CLS_E_FAIL;
			}
			memcpy(spare, words, bytes);
			words = spare;
		}
		return emit_kv_words(w, f, b, words, count, g, threads);
	}
	if (f->fmt == CLS_FMT_KV && out_claimable(w, 1)) {
		share_out(g, threads, f, b, words, sorted, 0, count);
		run_parallel(size_job, g, sizeof *g, threads);
		if (claim_lines(w, g, threads)) {
			run_parallel(gather_job, g, sizeof *g, threads);
			return 0;
		}
	}
	step = dst ? count : (size_t)threads * GATHER_ROUND;
	for (first = 0; first < count && rc == 0; first += step) {
		const size_t n = count - first < step ? count - first : step;
		share_out(g, threads, f, b, words, sorted, first, n);
		for (i = 0; dst && i < threads; i++)
			g[i].dst = dst + (g[i].first - first) * f->rec_size;
		run_parallel(gather_job, g, sizeof *g, threads);
		rc = write_gathered(w, g, threads);
	}
	return rc;
}

/* Where tie.c finds the keys of a run's records, and sends them. */
struct tie_run {
	struct out_writer *w;
	const struct enc_format *f;
	const struct enc_batch *b;
};

static size_t tie_run_key(const void *ctx, size_t idx, const unsigned char **p)
{
	const struct tie_run *t = ctx;
	size_t len;
	enc_record(t->f, t->b, idx, p, &len);
	*p += t->f->key_off;
	return t->f->key_len;
}

static int tie_run_emit(void *ctx, const struct word128 *words, size_t n)
{
	const struct tie_run *t = ctx;
	return emit_gather(t->w, t->f, t->b, words, NULL, n, NULL, 0);
}

int out_emit(struct out_writer *w, const struct enc_format *f, const struct enc_batch *b,
	     const void *words, size_t count, void *spare, size_t spare_bytes)
{
	if (f->tail) {
		struct tie_run t = { w, f, b };
		const struct tie_key k = { tie_run_key, &t, f->mask != 0 };
		assert(f->kind == WORD128);
		return tie_push(&w->ties, &k, words, count, tie_run_emit, &t);
	}
	return f->indexed ? emit_gather(w, f, b, words, NULL, count, spare, spare_bytes)
			  : emit_plain(w, f, words, count);
}

int out_emit_lines(struct out_writer *w, const struct enc_format *f, const struct kv_line *lines,
		   size_t count)
{
	return emit_gather(w, f, NULL, NULL, lines, count, NULL, 0);
}

int out_emit_end(struct out_writer *w, const struct enc_format *f, const struct enc_batch *b)
{
	struct tie_run t = { w, f, b };
	const struct tie_key k = { tie_run_key, &t, f->mask != 0 };
	return f->tail ? tie_flush(&w->ties, &k, tie_run_emit, &t) : 0;
}
