#include "config.h"
#include "sieve.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Pieces of the input per thread, for the balance of the scatter. */
#define PIECES_PER_THREAD 4

/* The range of a record: how many splitters lie at or below it, by a
 * binary search without branches (with random keys every comparison
 * would be a coin toss for the branch predictor). */
static size_t range_search(const struct part_key *sp, size_t nsp, uint64_t key, uint64_t pos)
{
	const struct part_key *b = sp;
	size_t n = nsp;

	if (n == 0)
		return 0;
	while (n > 1) {
		const size_t half = n / 2;
		const struct part_key *m = b + half - 1;
		const bool le = (m->key < key) | ((m->key == key) & (m->pos <= pos));
		b = le ? b + half : b;
		n -= half;
	}
	return (size_t)(b - sp) + ((b->key < key) | ((b->key == key) & (b->pos <= pos)));
}

#define CLASS_BITS 12
#define CLASS_MIXED 0xffff

/* The splitters, and a table that answers range_search for most keys in
 * one load: the keys from the first splitter's to the last one's cut into
 * 2^CLASS_BITS slots; a slot that holds no splitter key lies in one range,
 * the others (CLASS_MIXED) are searched.  slot[0] stands for the keys below
 * the first splitter, slot[1 + i] for slot i, the last for the keys above
 * the slots. */
struct classifier {
	const struct part_key *sp;
	size_t nsp;
	uint64_t lo;
	unsigned shift;
	uint16_t slot[(1u << CLASS_BITS) + 2];
};

static void class_init(struct classifier *c, const struct part_key *sp, size_t nsp)
{
	const size_t nslots = (size_t)1 << CLASS_BITS;
	uint64_t hi;
	size_t i, j = 0;

	c->sp = sp;
	c->nsp = nsp;
	c->shift = 0;
	c->lo = nsp ? sp[0].key : 0;
	hi = nsp ? sp[nsp - 1].key : 0;
	while (((hi - c->lo) >> c->shift) >= nslots)
		c->shift++;
	c->slot[0] = 0;
	for (i = 0; i < nslots; i++) {
		const uint64_t first = c->lo + ((uint64_t)i << c->shift);
		uint64_t last = first + (((uint64_t)1 << c->shift) - 1);
		if (first < c->lo || first > hi) {
			c->slot[1 + i] = (uint16_t)nsp;
			continue;
		}
		if (last < first)
			last = UINT64_MAX;
		/* The splitters below the slot; is one inside it? */
		while (j < nsp && sp[j].key < first)
			j++;
		c->slot[1 + i] = j < nsp && sp[j].key <= last ? CLASS_MIXED : (uint16_t)j;
	}
	c->slot[nslots + 1] = (uint16_t)nsp;
}

/* Without branches but for the rare mixed slot: with random keys a branch
 * on the key would be mispredicted often. */
static inline size_t range_of(const struct classifier *c, uint64_t key, uint64_t pos)
{
	const uint64_t d = (key - c->lo) >> c->shift;
	const size_t at = key < c->lo ? 0 : d >= (1u << CLASS_BITS) ? (1u << CLASS_BITS) + 1 : d + 1;
	const size_t r = c->slot[at];

	return r != CLASS_MIXED ? r : range_search(c->sp, c->nsp, key, pos);
}

/* A stretch of one input, whole records, walked by one thread. */
struct piece {
	const struct enc_format *f;
	const unsigned char *data;	/* the piece's first byte */
	size_t len;
	uint64_t pos;			/* its position in the inputs end to end */
	const struct classifier *cls;
	size_t *at;			/* per range: bytes (count pass), then where
					 * the next record goes (scatter pass) */
	unsigned char *buf;		/* NULL: count only */
	size_t only;			/* the range to copy; SIZE_MAX: every range */
	int rc;
};

size_t part_record_len(const struct enc_format *f, const unsigned char *p,
		       const unsigned char *end, const unsigned char **next)
{
	const unsigned char *nl;
	if (f->fmt == CLS_FMT_BIN) {
		*next = p + f->rec_size;
		return f->rec_size;
	}
	nl = memchr(p, f->eol, (size_t)(end - p));
	*next = nl ? nl + 1 : end;
	return nl ? (size_t)(nl - p) : (size_t)(end - p);
}

/* Records of a bin piece, a block at a time: the key type's encoder turns
 * a block's keys into sortable keys, then each record goes to its range.
 * Inlined with size a constant for the common record sizes, so that the
 * copy is a single move. */
#define BLOCK 512

/* With few splitters (a range per device or process), a record's range
 * comes from comparing it with each splitter: loops without a table or a
 * branch, which the compiler vectorizes. */
#define FEW_SPLITTERS 8

/* The first of a block's n records (record i at pos + i * size) that lies
 * at position at or past it. */
static inline size_t first_at(uint64_t at, uint64_t pos, size_t size, size_t n)
{
	uint64_t d, t;

	if (at <= pos)
		return 0;
	d = at - pos;
	t = d / size + (d % size != 0);
	return t < n ? (size_t)t : n;
}

/* ge[i]: whether record i of a block (key k[i], at pos + i * size) lies
 * at or above splitter s, that is has a greater key, or the same key at
 * s's position or past it; 0 past the block's n records.  Returns how many
 * do.  Over the whole BLOCK of keys, whose trip count lets the compiler
 * vectorize the 32-bit loop. */
static inline uint32_t at_or_above(const struct part_key *s, const void *restrict keys,
				   bool narrow, uint32_t n, uint64_t pos, size_t size,
				   uint32_t *restrict ge)
{
	const uint32_t t = (uint32_t)first_at(s->pos, pos, size, n);
	uint32_t i, sum = 0;

	if (narrow) {
		const uint32_t *restrict k = keys, sk = (uint32_t)s->key;
		for (i = 0; i < BLOCK; i++) {
			ge[i] = ((k[i] > sk) | ((k[i] == sk) & (i >= t))) & (i < n);
			sum += ge[i];
		}
	} else {
		const uint64_t *restrict k = keys, sk = s->key;
		for (i = 0; i < BLOCK; i++) {
			ge[i] = ((k[i] > sk) | ((k[i] == sk) & (i >= t))) & (i < n);
			sum += ge[i];
		}
	}
	return sum;
}

/* rid[i]: the range of record i of a block (0 past its n records). */
static inline void block_ranges(const struct classifier *c, const void *keys, bool narrow,
				uint32_t n, uint64_t pos, size_t size, uint32_t *restrict rid)
{
	const uint32_t *const k32 = keys;
	const uint64_t *const k64 = keys;
	uint32_t ge[BLOCK], i;
	size_t r;

	memset(rid, 0, BLOCK * sizeof *rid);
	if (c->nsp > FEW_SPLITTERS) {
		for (i = 0; i < n; i++)
			rid[i] = (uint32_t)range_of(c, narrow ? k32[i] : k64[i], pos + i * size);
		return;
	}
	for (r = 0; r < c->nsp; r++) {
		at_or_above(&c->sp[r], keys, narrow, n, pos, size, ge);
		for (i = 0; i < BLOCK; i++)
			rid[i] += ge[i];
	}
}

/* The counts of a block's records per range into at, in bytes.  Four
 * sets of counters, each record's to the set of its place mod 4: with one
 * set, the records of a range would add to the same counter one after
 * another, each waiting for the last one's store (with two ranges, half of
 * all records). */
#define COUNT_SETS 4
#define COUNT_RANGES 64

static inline __attribute__((always_inline)) void count_block(const struct classifier *c,
								  const void *keys, bool narrow,
								  size_t n, uint64_t pos, size_t size,
								  size_t *at)
{
	const uint32_t *const k32 = keys;
	const uint64_t *const k64 = keys;
	uint32_t cnt[COUNT_SETS][COUNT_RANGES];
	size_t i, r;

	if (c->nsp <= FEW_SPLITTERS) {
		/* The records at or above a splitter are at or above every
		 * one before it. */
		uint32_t ge[BLOCK];
		size_t above = n;
		for (r = 0; r < c->nsp; r++) {
			const size_t next = at_or_above(&c->sp[r], keys, narrow, (uint32_t)n, pos,
							size, ge);
			at[r] += (above - next) * size;
			above = next;
		}
		at[c->nsp] += above * size;
		return;
	}
	if (c->nsp + 1 > COUNT_RANGES) {
		for (i = 0; i < n; i++)
			at[range_of(c, narrow ? k32[i] : k64[i], pos + i * size)] += size;
		return;
	}
	memset(cnt, 0, sizeof cnt);
	for (i = 0; i + COUNT_SETS <= n; i += COUNT_SETS) {
		cnt[0][range_of(c, narrow ? k32[i] : k64[i], pos + i * size)]++;
		cnt[1][range_of(c, narrow ? k32[i + 1] : k64[i + 1], pos + (i + 1) * size)]++;
		cnt[2][range_of(c, narrow ? k32[i + 2] : k64[i + 2], pos + (i + 2) * size)]++;
		cnt[3][range_of(c, narrow ? k32[i + 3] : k64[i + 3], pos + (i + 3) * size)]++;
	}
	for (; i < n; i++)
		cnt[0][range_of(c, narrow ? k32[i] : k64[i], pos + i * size)]++;
	for (r = 0; r <= c->nsp; r++)
		at[r] += (size_t)(cnt[0][r] + cnt[1][r] + cnt[2][r] + cnt[3][r]) * size;
}

static inline __attribute__((always_inline)) void bin_records(struct piece *pc, size_t size)
{
	const struct enc_format *f = pc->f;
	const struct classifier *const c = pc->cls;
	const bool narrow = f->kt->width == 4;
	const size_t count = pc->len / size;
	/* In locals, and restrict: the stores must not make the compiler
	 * load them again for every record. */
	size_t *restrict const at = pc->at;
	unsigned char *restrict const buf = pc->buf;
	union {
		uint32_t k32[BLOCK];
		uint64_t k64[BLOCK];
	} k;
	uint32_t rid[BLOCK];
	size_t done, i;

	for (done = 0; done < count; done += BLOCK) {
		const size_t n = count - done < BLOCK ? count - done : BLOCK;
		const unsigned char *const p = pc->data + done * size;
		const uint64_t pos = pc->pos + done * size;
		if (n < BLOCK)
			memset(&k, 0, sizeof k);
		f->kt->encode(p + f->key_off, size, n, f->mask, &k, false, 0);
		if (!buf) {
			count_block(c, &k, narrow, n, pos, size, at);
			continue;
		}
		block_ranges(c, &k, narrow, (uint32_t)n, pos, size, rid);
		for (i = 0; i < n; i++) {
			const size_t r = rid[i];
			if (pc->only != SIZE_MAX && r != pc->only)
				continue;
			memcpy(buf + at[r], p + i * size, size);
			at[r] += size;
		}
	}
}

static void bin_piece(struct piece *pc)
{
	switch (pc->f->rec_size) {
	case 4: bin_records(pc, 4); break;
	case 8: bin_records(pc, 8); break;
	case 16: bin_records(pc, 16); break;
	default: bin_records(pc, pc->f->rec_size); break;
	}
}

/* Lines of a kv piece, one by one. */
static void kv_piece(struct piece *pc)
{
	const struct enc_format *f = pc->f;
	const unsigned char *p = pc->data, *end = pc->data + pc->len, *next;

	while (p < end) {
		const size_t len = part_record_len(f, p, end, &next);
		uint64_t key = 0;
		size_t r = 0;

		/* A line without a key: with --skip-bad it goes to the first
		 * range, whose encoding drops and counts it. */
		if (enc_key(f, p, len, &key) == KEY_OK)
			r = range_of(pc->cls, key, pc->pos + (uint64_t)(p - pc->data));
		else if (!f->skip_bad) {
			pc->rc = PART_BAD_LINE;
			return;
		}
		if (pc->buf && pc->only != SIZE_MAX && r != pc->only) {
			p = next;
			continue;
		}
		if (pc->buf) {
			memcpy(pc->buf + pc->at[r], p, len);
			pc->buf[pc->at[r] + len] = (unsigned char)f->eol;
		}
		pc->at[r] += len + 1;
		p = next;
	}
}

static void piece_job(void *arg)
{
	struct piece *pc = arg;

	pc->rc = 0;
	if (pc->f->fmt == CLS_FMT_BIN)
		bin_piece(pc);
	else
		kv_piece(pc);
}
/* One thread's share of n items: every step-th from first. */
struct worker {
	void (*fn)(void *);
	unsigned char *items;
	size_t size, n, first, step;
};

static void worker_job(void *arg)
{
	const struct worker *w = arg;
	size_t i;
	for (i = w->first; i < w->n; i += w->step)
		w->fn(w->items + i * w->size);
}

/* Run fn over n items of size bytes each, on up to threads threads. */
static void run_items(void (*fn)(void *), void *items, size_t size, size_t n, unsigned threads)
{
	struct worker w[256];
	unsigned t;

	if (threads > 256)
		threads = 256;
	if (threads > n)
		threads = n ? (unsigned)n : 1;
	for (t = 0; t < threads; t++)
		w[t] = (struct worker){ fn, items, size, n, t, threads };
	run_parallel(worker_job, w, sizeof w[0], threads);
}

/* Cut the inputs into pieces of whole records, about share bytes each. */
static struct piece *make_pieces(const struct enc_format *f, const struct in_set *in,
				 uint64_t base, size_t share, size_t *count)
{
	size_t n = 0, cap = 16, i;
	struct piece *pcs = malloc(cap * sizeof *pcs);

	for (i = 0; pcs && i < in->count; i++) {
		const struct in_file *file = &in->files[i];
		size_t off = 0;
		while (off < file->size) {
			size_t end = file->size - off > share ? off + share : file->size;
			if (f->fmt == CLS_FMT_BIN) {
				end -= (end - off) % f->rec_size;
				if (end == off)
					end = file->size;
			} else if (end < file->size) {
				const unsigned char *nl = memchr(file->data + end - 1, f->eol,
								 file->size - (end - 1));
				end = nl ? (size_t)(nl - file->data) + 1 : file->size;
			}
			if (n == cap) {
				struct piece *g = realloc(pcs, 2 * cap * sizeof *pcs);
				if (!g) {
					free(pcs);
					return NULL;
				}
				pcs = g;
				cap *= 2;
			}
			memset(&pcs[n], 0, sizeof pcs[n]);
			pcs[n].f = f;
			pcs[n].data = file->data + off;
			pcs[n].len = end - off;
			pcs[n].pos = base + off;
			n++;
			off = end;
		}
		base += file->size;
	}
	*count = n;
	return pcs;
}
int part_sieve_init(struct part_sieve *s, const struct enc_format *f, const struct in_set *in,
		    uint64_t base, const struct part_key *sp, size_t nsp, bool small)
{
	size_t share = in->bytes / ((size_t)f->threads * PIECES_PER_THREAD) + 1;
	size_t i, r, *at;

	memset(s, 0, sizeof *s);
	if (small && share > PART_SIEVE_SMALL)
		share = PART_SIEVE_SMALL;
	s->f = f;
	s->nranges = nsp + 1;
	/* Each piece's counters on cache lines of their own: the threads
	 * update them for every record. */
	s->stride = (s->nranges + 7) / 8 * 8;
	s->cls = malloc(sizeof *s->cls);
	s->sp = malloc((nsp ? nsp : 1) * sizeof *s->sp);
	s->pcs = make_pieces(f, in, base, share, &s->npieces);
	if (!s->cls || !s->sp || !s->pcs)
		msg_errno(ENOMEM, "cannot cut the input into key ranges");
	else
		s->start = xmalloc_aligned(64, (s->npieces + 1) * s->stride * sizeof *s->start,
					   "cutting the input into key ranges");
	if (!s->start) {
		part_sieve_free(s);
		return CLS_E_FAIL;
	}
	memset(s->start, 0, (s->npieces + 1) * s->stride * sizeof *s->start);
	memcpy(s->sp, sp, nsp * sizeof *sp);
	class_init(s->cls, s->sp, nsp);
	/* Piece i counts into row i + 1... */
	for (i = 0; i < s->npieces; i++) {
		s->pcs[i].cls = s->cls;
		s->pcs[i].at = s->start + (i + 1) * s->stride;
		s->pcs[i].only = SIZE_MAX;
	}
	run_items(piece_job, s->pcs, sizeof *s->pcs, s->npieces, f->threads);
	for (i = 0; i < s->npieces; i++)
		if (s->pcs[i].rc) {
			const int rc = s->pcs[i].rc;
			part_sieve_free(s);
			return rc;
		}
	/* ...and the rows add up to where each piece's records of each range
	 * start in the range. */
	for (i = 0; i < s->npieces; i++) {
		const size_t *prev = s->start + i * s->stride;
		at = s->start + (i + 1) * s->stride;
		for (r = 0; r < s->nranges; r++)
			at[r] += prev[r];
	}
	return 0;
}

uint64_t part_sieve_bytes(const struct part_sieve *s, size_t r)
{
	return s->start[s->npieces * s->stride + r];
}

/* Copy the records of range only (SIZE_MAX: of every range) into buf,
 * range r from byte off[r] on. */
static int sieve_copy(const struct part_sieve *s, size_t only, const size_t *off,
		      unsigned char *buf)
{
	struct piece *pcs = malloc(s->npieces * sizeof *pcs);
	size_t *at = malloc(s->npieces * s->stride * sizeof *at);
	size_t i, r;

	if (!pcs || !at) {
		free(pcs);
		free(at);
		msg_errno(ENOMEM, "cannot cut the input into key ranges");
		return CLS_E_FAIL;
	}
	for (i = 0; i < s->npieces; i++) {
		pcs[i] = s->pcs[i];
		pcs[i].at = at + i * s->stride;
		pcs[i].buf = buf;
		pcs[i].only = only;
		for (r = 0; r < s->nranges; r++)
			pcs[i].at[r] = off[r] + s->start[i * s->stride + r];
	}
	run_items(piece_job, pcs, sizeof *pcs, s->npieces, s->f->threads);
	free(pcs);
	free(at);
	return 0;
}

int part_sieve_copy(const struct part_sieve *s, size_t r, unsigned char *dst, struct part_set *p)
{
	const size_t nr = r == SIZE_MAX ? s->nranges : 1;
	size_t *off = calloc(s->nranges, sizeof *off);
	size_t i, total = 0;
	double t0 = now_sec(), t1;

	memset(p, 0, sizeof *p);
	p->count = nr;
	p->ranges = calloc(nr, sizeof *p->ranges);
	p->files = calloc(nr, sizeof *p->files);
	if (!off || !p->ranges || !p->files)
		goto nomem;
	for (i = 0; i < s->nranges; i++) {
		off[i] = r == SIZE_MAX ? total : 0;
		if (r == SIZE_MAX || i == r)
			total += part_sieve_bytes(s, i);
	}
	if (!dst) {
		p->buf_len = total;
		p->buf = total ? malloc(total) : NULL;
		if (total && !p->buf)
			goto nomem;
		/* Faulting the copy's pages in, all threads at once, is several
		 * times faster than the copy taking one fault per page. */
		populate_parallel(p->buf, total, s->f->threads);
		dst = p->buf;
	}
	t1 = now_sec();
	for (i = 0, total = 0; i < nr; i++) {
		const uint64_t bytes = part_sieve_bytes(s, r == SIZE_MAX ? i : r);
		p->files[i].name = "the input";
		p->files[i].data = dst ? dst + total : (const unsigned char *)"";
		p->files[i].size = bytes;
		p->ranges[i].files = &p->files[i];
		p->ranges[i].count = 1;
		p->ranges[i].bytes = bytes;
		total += bytes;
	}
	if (sieve_copy(s, r, off, dst))
		goto fail;
	msg_info(2, "key ranges: copy's pages in %.3f s, copied in %.3f s (%zu pieces)", t1 - t0,
		 now_sec() - t1, s->npieces);
	free(off);
	return 0;
nomem:
	msg_errno(ENOMEM, "cannot cut the input into key ranges");
fail:
	free(off);
	part_free(p);
	return CLS_E_FAIL;
}

/* Piece pc's words into buf, range r's in input order from word at[r] on,
 * which is left past them; the word past each range's may be overwritten.
 * No branch on the key. */
static inline __attribute__((always_inline)) void piece_words(const struct part_sieve *s,
								  const struct piece *pc, size_t size,
								  size_t ws, unsigned char *buf,
								  size_t *at)
{
	const struct enc_format *f = s->f;
	const bool narrow = f->kt->width == 4;
	const size_t count = pc->len / size;
	union {
		uint32_t k32[BLOCK];
		uint64_t k64[BLOCK];
	} k;
	struct word128 words[BLOCK];
	uint32_t rid[BLOCK];
	const unsigned char *w = f->indexed ? (const unsigned char *)words
					    : (const unsigned char *)&k;
	size_t done, i;

	for (done = 0; done < count; done += BLOCK) {
		const size_t n = count - done < BLOCK ? count - done : BLOCK;
		const unsigned char *const p = pc->data + done * size;
		const uint64_t pos = pc->pos + done * size;
		if (f->indexed)
			f->kt->encode(p + f->key_off, size, n, f->mask, words, true,
				      (uint32_t)(pos / size));
		if (n < BLOCK)
			memset(&k, 0, sizeof k);
		f->kt->encode(p + f->key_off, size, n, f->mask, &k, false, 0);
		block_ranges(s->cls, &k, narrow, (uint32_t)n, pos, size, rid);
		if (s->nranges == 2) {
			/* Each word stored at both ranges' next places, and
			 * only its own range's place moves on: no branch on
			 * the key (with random keys it would be mispredicted
			 * half the time) and no choice of address.  The other
			 * range's copy is overwritten by that range's next
			 * word, or lands in the word of room past its end. */
			size_t o0 = at[0] * ws, o1 = at[1] * ws;
			for (i = 0; i < n; i++) {
				memcpy(buf + o0, w + i * ws, ws);
				memcpy(buf + o1, w + i * ws, ws);
				o0 += (rid[i] ^ 1) * ws;
				o1 += rid[i] * ws;
			}
			at[0] = o0 / ws;
			at[1] = o1 / ws;
		} else {
			for (i = 0; i < n; i++) {
				memcpy(buf + at[rid[i]] * ws, w + i * ws, ws);
				at[rid[i]]++;
			}
		}
	}
}

size_t part_sieve_piece_room(const struct part_sieve *s)
{
	size_t i, most = 0;

	for (i = 0; i < s->npieces; i++)
		if (s->pcs[i].len / s->f->rec_size > most)
			most = s->pcs[i].len / s->f->rec_size;
	/* A word of room past each range's words. */
	return (most + s->nranges) * word_size(s->f->kind);
}

void part_sieve_piece(const struct part_sieve *s, size_t i, void *buf, size_t *at)
{
	const size_t size = s->f->rec_size, ws = word_size(s->f->kind);
	const size_t *const before = s->start + i * s->stride, *const after = before + s->stride;
	size_t r, next = 0;

	for (r = 0; r < s->nranges; r++) {
		at[r] = next;
		next += (after[r] - before[r]) / size + 1;
	}
	if (size == 4 && ws == 4)
		piece_words(s, &s->pcs[i], 4, 4, buf, at);
	else if (size == 8 && ws == 8)
		piece_words(s, &s->pcs[i], 8, 8, buf, at);
	else if (size == 16 && ws == 16)
		piece_words(s, &s->pcs[i], 16, 16, buf, at);
	else
		piece_words(s, &s->pcs[i], size, ws, buf, at);
	/* at[r] is now where range r's words end: back to where they start. */
	for (r = 0; r < s->nranges; r++)
		at[r] -= (after[r] - before[r]) / size;
}

void part_sieve_free(struct part_sieve *s)
{
	free(s->cls);
	free(s->sp);
	free(s->pcs);
	free(s->start);
	memset(s, 0, sizeof *s);
}

void part_free(struct part_set *p)
{
	free(p->buf);
	free(p->files);
	free(p->ranges);
	memset(p, 0, sizeof *p);
}
