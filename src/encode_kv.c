#include "config.h"
#include "encode_kv.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kvkey.h"
#include "strkey.h"
#include "util.h"

/* Lines in p[0..len): line ends (eol), plus one for an unterminated last
 * line. */
size_t enc_kv_count_lines(const char *p, size_t len, char eol)
{
	size_t i = 0, n = 0;
#ifdef __SSE2__
	/* Sixteen bytes at a time: each line end adds one to its byte's
	 * counter, the counters summed before any can reach 256. */
	const __m128i e = _mm_set1_epi8(eol), zero = _mm_setzero_si128();

	while (i + 16 <= len) {
		__m128i acc = zero, sums;
		size_t k;
		for (k = 0; k < 255 && i + 16 <= len; k++, i += 16)
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), e));
		sums = _mm_sad_epu8(acc, zero);
		n += (size_t)_mm_cvtsi128_si64(sums) + (size_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
	}
#endif
	for (; i < len; i++)
		n += p[i] == eol;
	return n + (len && p[len - 1] != eol);
}

/* End of a share of [p, end) about want bytes long: just past the first
 * line end (eol) at or after p + want, or end. */
const char *enc_kv_cut(const char *p, const char *end, size_t want, char eol)
{
	const char *nl;
	if ((size_t)(end - p) <= want)
		return end;
	nl = memchr(p + want, eol, (size_t)(end - p - want));
	return nl ? nl + 1 : end;
}

static inline void put_word(enum word_kind kind, void *words, size_t i, uint64_t key, size_t idx)
{
	switch (kind) {
	case WORD32:
		((uint32_t *)words)[i] = (uint32_t)key;
		break;
	case WORD64:
		((uint64_t *)words)[i] = (key << 32) | (uint32_t)idx;
		break;
	case WORD128:
		((struct word128 *)words)[i].hi = key;
		((struct word128 *)words)[i].lo = idx;
		break;
	}
}

/* Bad lines --skip-bad names with -v, at the most. */
#define SKIPPED_NAMED 5

/* A share of one slice, cut at line boundaries, parsed by one thread. */
struct kv_job {
	const struct enc_format *f;
	const struct enc_slice *slice;
	const char *start, *end;
	uint64_t line0;		/* line number in the file of the first line, from 0 */
	size_t first;		/* index in the run of the first line */
	size_t lines;		/* lines in [start, end) */
	size_t good;		/* lines kept */
	size_t bad;
	size_t bad_fields;	/* of them, lines with fewer fields than the key's */
	size_t bad_first;	/* line index in the job of the first bad line */
	int bad_why;
	struct enc_batch *b;
	struct enc_block *blocks;	/* several keys: where this job composed them */
	bool nomem;
};

/* Bytes of a block of composed keys, unless a key needs more. */
#define KEY_BLOCK ((size_t)1 << 20)

/* The key of a line of job j, where several keys are composed into one
 * string: into j's current block, or a new one where it has no room. */
static int composed_key(struct kv_job *j, const char *line, size_t len, uint64_t *key,
			const char **k, size_t *klen)
{
	struct enc_block *bl = j->blocks;
	int rc = KEY_OK;

	if (bl)
		rc = kvk_key(j->f, line, len, key, k, klen, bl->data + bl->used, bl->size - bl->used);
	if (!bl || (rc == KEY_OK && *klen > bl->size - bl->used)) {
		const size_t size = bl && *klen > KEY_BLOCK ? *klen : KEY_BLOCK;
		struct enc_block *nb = malloc(sizeof *nb + size);
		if (!nb) {
			j->nomem = true;
			return KEY_BAD;
		}
		nb->next = bl;
		nb->size = size;
		nb->used = 0;
		j->blocks = bl = nb;
		rc = kvk_key(j->f, line, len, key, k, klen, bl->data, bl->size);
		if (rc == KEY_OK && *klen > bl->size)
			return composed_key(j, line, len, key, k, klen);
	}
	if (rc == KEY_OK)
		bl->used += *klen;
	return rc;
}

/* Skipped lines named so far (-v). */
static atomic_uint skipped_named;

static void kv_count_job(void *arg)
{
	struct kv_job *j = arg;
	j->lines = enc_kv_count_lines(j->start, (size_t)(j->end - j->start), j->f->eol);
}

static void kv_parse_job(void *arg)
{
	struct kv_job *j = arg;
	const struct enc_format *f = j->f;
	const bool digits = kvk_digits_ok(f);
	const char *p = j->start, *nl, *k, *sep;
	size_t i, out = j->first, klen;
	uint64_t key;
	int rc;

	for (i = 0; i < j->lines; i++) {
		/* A key of digits read, the line's end is looked for past it. */
		const bool read = digits && kvk_digits_key(f, p, j->end, &key, &sep);
		const char *from = read ? sep : p;
		size_t len;
		nl = kvk_line_end(from, j->end, f->eol);
		len = nl ? (size_t)(nl - p) : (size_t)(j->end - p);
		if (read) {
			rc = KEY_OK;
		} else if (f->nkeys) {
			rc = composed_key(j, p, len, &key, &k, &klen);
			if (j->nomem)
				break;
		} else {
			rc = kvk_key(f, p, len, &key, &k, &klen, NULL, 0);
		}
		if (rc == KEY_OK) {
			if (j->b->lines) {
				j->b->lines[out].p = p;
				j->b->lines[out].len = len;
			}
			if (f->nkeys) {
				j->b->keys[out].p = k;
				j->b->keys[out].len = klen;
			}
			if (f->str)
				str_word((const unsigned char *)k, klen, f->mask, (uint32_t)out,
					 (struct word128 *)j->b->words + out);
			else
				put_word(f->kind, j->b->words, out, key, out);
			out++;
		} else {
			if (j->bad++ == 0) {
				j->bad_first = i;
				j->bad_why = rc;
			}
			if (!f->skip_bad)
				break;
			j->bad_fields += rc == KV_NOFIELD;
			if (util_verbose >= 1 && atomic_fetch_add(&skipped_named, 1) < SKIPPED_NAMED)
				kvk_report(f, j->slice->file->name,
					  j->slice->file->first_line + j->line0 + i + 1, p, len, rc,
					  true);
		}
		p = nl ? nl + 1 : j->end;
	}
	j->good = out - j->first;
}

/* Cut each slice into jobs of at least ENC_MIN_JOB_BYTES, about threads per
 * slice.  Returns the job count, or 0 when out of memory. */
static size_t kv_make_jobs(const struct enc_format *f, struct enc_batch *b, struct kv_job **out)
{
	size_t s, n = 0, cap = 0;
	struct kv_job *jobs = NULL;

	for (s = 0; s < b->nslices; s++) {
		const struct enc_slice *sl = &b->slices[s];
		const char *p = (const char *)sl->file->data + sl->off, *end = p + sl->len;
		size_t want = sl->len / f->threads;
		if (want < ENC_MIN_JOB_BYTES)
			want = ENC_MIN_JOB_BYTES;
		while (p < end) {
			const char *cut = enc_kv_cut(p, end, want, f->eol);
			if (n == cap) {
				struct kv_job *g;
				cap = cap ? cap * 2 : 16;
				g = realloc(jobs, cap * sizeof *jobs);
				if (!g) {
					free(jobs);
					return 0;
				}
				jobs = g;
			}
			memset(&jobs[n], 0, sizeof jobs[n]);
			jobs[n].f = f;
			jobs[n].slice = sl;
			jobs[n].start = p;
			jobs[n].end = cut;
			jobs[n].b = b;
			n++;
			p = cut;
		}
	}
	*out = jobs;
	return n;
}

/* kv_make_jobs, each job's lines counted on the threads and numbered: in
 * the run (first) and in its file (line0), as the lines before it leave
 * them.  The job count, or 0 when out of memory. */
static size_t counted_jobs(const struct enc_format *f, struct enc_batch *b, struct kv_job **out)
{
	const struct enc_slice *prev = NULL;
	const size_t nj = kv_make_jobs(f, b, out);
	struct kv_job *const jobs = *out;
	size_t i, run = 0;
	uint64_t line0 = 0;

	if (!nj)
		return 0;
	run_jobs(kv_count_job, jobs, sizeof *jobs, nj, f->threads);
	for (i = 0; i < nj; i++) {
		if (jobs[i].slice != prev) {
			prev = jobs[i].slice;
			line0 = prev->first_no;
		}
		jobs[i].line0 = line0;
		jobs[i].first = run;
		line0 += jobs[i].lines;
		run += jobs[i].lines;
	}
	return nj;
}

bool enc_kv_parse(const struct enc_format *f, struct enc_batch *b, const char *start,
		  const char *end, size_t first, size_t count, struct enc_block **blocks)
{
	struct enc_block *bl, *next;
	struct kv_job j;

	memset(&j, 0, sizeof j);
	j.f = f;
	j.start = start;
	j.end = end;
	j.first = first;
	j.lines = count;
	j.b = b;
	kv_parse_job(&j);
	for (bl = j.blocks; bl; bl = next) {
		next = bl->next;
		bl->next = *blocks;
		*blocks = bl;
	}
	return j.bad == 0 && !j.nomem;
}

/* Whether b's words and line table hold its run's lines already. */
static bool parsed(const struct enc_batch *b)
{
	const struct enc_slice *s = &b->slices[0];

	return b->parsed && b->parsed == b->n && b->nslices == 1 && s->off == 0 &&
	       s->first_rec == 0 && s->file->data == b->parsed_at;
}

int enc_kv_encode(const struct enc_format *f, struct enc_batch *b)
{
	struct kv_job *jobs = NULL;
	size_t nj, i, pos;

	/* Lines parsed ahead keep their composed keys. */
	if (b->n && parsed(b)) {
		b->parsed = 0;
		return 0;
	}
	b->parsed = 0;
	b->lines_due = false;
	enc_free_keys(b);
	if (b->n == 0)
		return 0;
	nj = counted_jobs(f, b, &jobs);
	if (nj == 0) {
		msg_errno(ENOMEM, "cannot parse the input");
		return CLS_E_FAIL;
	}
	run_jobs(kv_parse_job, jobs, sizeof *jobs, nj, f->threads);
	/* The composed keys' blocks are the batch's, freed with it. */
	for (i = 0; i < nj; i++) {
		struct enc_block *bl = jobs[i].blocks, *next;
		for (; bl; bl = next) {
			next = bl->next;
			bl->next = b->blocks;
			b->blocks = bl;
		}
		if (jobs[i].nomem) {
			msg_errno(ENOMEM, "cannot hold the composed keys");
			free(jobs);
			return CLS_E_FAIL;
		}
	}

	/* Close the gaps skipped lines left, renumbering the indices. */
	pos = 0;
	for (i = 0; i < nj; i++) {
		const struct kv_job *j = &jobs[i];
		if (j->bad && !f->skip_bad) {
			const char *p = j->start, *nl;
			size_t k;
			for (k = 0; k < j->bad_first; k++)
				p = memchr(p, f->eol, (size_t)(j->end - p)) + 1;
			nl = memchr(p, f->eol, (size_t)(j->end - p));
			kvk_report(f, j->slice->file->name,
				  j->slice->file->first_line + j->line0 + j->bad_first + 1, p,
				  nl ? (size_t)(nl - p) : (size_t)(j->end - p), j->bad_why, false);
			free(jobs);
			return CLS_E_FAIL;
		}
		if (pos != j->first) {
			size_t k;
			memmove(b->lines + pos, b->lines + j->first, j->good * sizeof *b->lines);
			if (f->nkeys)
				memmove(b->keys + pos, b->keys + j->first, j->good * sizeof *b->keys);
			for (k = 0; k < j->good; k++) {
				if (f->kind == WORD64) {
					put_word(f->kind, b->words, pos + k,
						 ((uint64_t *)b->words)[j->first + k] >> 32, pos + k);
				} else {
					struct word128 *w = b->words;
					w[pos + k].hi = w[j->first + k].hi;
					w[pos + k].lo = (w[j->first + k].lo & ~(uint64_t)UINT32_MAX) |
							(pos + k);
				}
			}
		}
		pos += j->good;
		b->skipped += j->bad;
		b->skipped_fields += j->bad_fields;
	}
	b->n = pos;
	free(jobs);
	return 0;
}

size_t enc_kv_stretches(const struct enc_format *f, const struct enc_batch *b,
			struct kv_stretch **out)
{
	struct kv_job *jobs = NULL;
	struct kv_stretch *st;
	size_t nj, i;

	*out = NULL;
	assert(!b->lines_due || !b->skipped);
	if (!b->n)
		return 0;
	/* Where the line table is made, shares of its entries. */
	if (!b->lines_due) {
		const size_t k = b->n < f->threads ? b->n : f->threads;
		if (!(st = malloc(k * sizeof *st)))
			return 0;
		for (i = 0; i < k; i++) {
			const size_t lo = b->n / k * i, hi = i + 1 < k ? b->n / k * (i + 1) : b->n;
			st[i] = (struct kv_stretch){ b->lines[lo].p,
						     b->lines[hi - 1].p + b->lines[hi - 1].len, lo,
						     hi - lo };
		}
		*out = st;
		return k;
	}
	/* The jobs only read b here. */
	nj = counted_jobs(f, (struct enc_batch *)b, &jobs);
	if (!nj || !(st = malloc(nj * sizeof *st))) {
		free(jobs);
		return 0;
	}
	for (i = 0; i < nj; i++)
		st[i] = (struct kv_stretch){ jobs[i].start, jobs[i].end, jobs[i].first, jobs[i].lines };
	free(jobs);
	*out = st;
	return nj;
}

/* One job's entries in the line table. */
static void lines_job(void *arg)
{
	struct kv_job *j = arg;
	struct kv_line *const t = j->b->lines + j->first;
	const char *p = j->start;
	size_t i;

	for (i = 0; i < j->lines; i++)
		t[i].p = kvk_next_line(&p, j->end, j->f->eol, &t[i].len);
}

int enc_kv_lines(const struct enc_format *f, const struct enc_batch *b)
{
	/* The table is the batch's only part filled late: its entries are
	 * written through the pointer b holds, and the mark is cleared. */
	struct enc_batch *const due = (struct enc_batch *)b;
	struct kv_job *jobs = NULL;
	size_t n;
	double t0;

	if (!b->lines_due)
		return 0;
	if (!b->n) {
		due->lines_due = false;
		return 0;
	}
	t0 = now_sec();
	n = counted_jobs(f, due, &jobs);
	if (!n) {
		free(jobs);
		msg_errno(ENOMEM, "cannot make the line table");
		return CLS_E_FAIL;
	}
	run_jobs(lines_job, jobs, sizeof *jobs, n, f->threads);
	due->lines_due = false;
	msg_info(2, "line table of %zu lines made from their text in %.3f s", b->n, now_sec() - t0);
	free(jobs);
	return 0;
}
