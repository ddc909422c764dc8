#include "config.h"
#include "encode.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvkey.h"
#include "strkey.h"
#include "tie.h"
#include "util.h"

/* Below this many bytes a job is not worth a thread. */
#define MIN_JOB_BYTES (1u << 20)

int enc_setup(struct enc_format *f, const struct cls_opts *o)
{
	memset(f, 0, sizeof *f);
	f->fmt = o->format;
	f->kt = o->key;
	f->mask = o->descending ? key_mask(o->key) : 0;
	f->sep = o->separator;
	f->eol = o->zero_terminated ? '\0' : '\n';
	f->blank = o->blank_sep;
	f->field = o->field;
	f->skip_bad = o->skip_bad;
	f->str = o->str_key;
	f->unique = o->unique;
	f->threads = o->threads ? o->threads : cpu_count();
	if (f->fmt == CLS_FMT_KV && f->kt->size) {
		msg_err("%s keys are binary: they go with -f bin", f->kt->name);
		return CLS_E_FAIL;
	}
	if (f->fmt == CLS_FMT_BIN) {
		f->key_len = key_size(f->kt);
		f->tail = f->key_len > TIE_PREFIX;
		f->rec_size = o->record_size ? o->record_size : f->key_len;
		f->key_off = o->key_offset;
		if (f->key_off > f->rec_size || f->rec_size - f->key_off < f->key_len) {
			msg_err("a %s key at offset %zu does not fit in %zu-byte records",
				f->kt->name, f->key_off, f->rec_size);
			return CLS_E_FAIL;
		}
		/* Bare invertible keys need no index: the key is the record. */
		f->indexed = !(f->rec_size == f->kt->width && f->kt->invertible);
	} else {
		f->indexed = true;
	}
	if (o->nkeys) {
		/* Composed into one string, each key's direction its own. */
		f->keys = o->keys;
		f->nkeys = o->nkeys;
		f->mask = 0;
		f->str = true;
		f->kt = NULL;
		f->kind = WORD128;
		return 0;
	}
	if (f->str) {
		f->kt = NULL;
		f->kind = WORD128;
		f->mask = o->descending ? ~(uint64_t)0 : 0;
		return 0;
	}
	f->kind = key_word_kind(f->kt, f->indexed);
	return 0;
}

int enc_validate(const struct enc_format *f, const struct in_set *in)
{
	size_t i;
	if (f->fmt != CLS_FMT_BIN)
		return 0;
	for (i = 0; i < in->count; i++) {
		const struct in_file *file = &in->files[i];
		if (file->size % f->rec_size) {
			const size_t tail = file->size % f->rec_size;
			msg_err("%s: size %zu is not a multiple of the %zu-byte record size (%zu trailing "
				"byte%s)", file->name, file->size, f->rec_size, tail, tail == 1 ? "" : "s");
			return CLS_E_FAIL;
		}
	}
	return 0;
}

/* Lines in p[0..len): line ends (eol), plus one for an unterminated last
 * line. */
static size_t count_lines(const char *p, size_t len, char eol)
{
	const char *end = p + len, *nl;
	size_t n = 0;
	while (p < end && (nl = memchr(p, eol, (size_t)(end - p)))) {
		n++;
		p = nl + 1;
	}
	return n + (p < end);
}

uint64_t enc_count_records(const struct enc_format *f, const void *data, size_t len)
{
	return f->fmt == CLS_FMT_KV ? count_lines(data, len, f->eol) : len / f->rec_size;
}

/* End of a share of [p, end) about want bytes long: just past the first
 * line end (eol) at or after p + want, or end. */
static const char *cut_at_line(const char *p, const char *end, size_t want, char eol)
{
	const char *nl;
	if ((size_t)(end - p) <= want)
		return end;
	nl = memchr(p + want, eol, (size_t)(end - p - want));
	return nl ? nl + 1 : end;
}

struct count_job {
	const char *p;
	size_t len;
	char eol;
	size_t lines;
};

static void count_job(void *arg)
{
	struct count_job *j = arg;
	j->lines = count_lines(j->p, j->len, j->eol);
}

/* Lines of a file, counted by up to threads threads, each on a share
 * that ends at a newline. */
static uint64_t count_file_lines(const struct in_file *file, unsigned threads, char eol)
{
	struct count_job jobs[64];
	const char *p = (const char *)file->data, *end = p + file->size;
	size_t per, n = 0, i;
	uint64_t total = 0;

	if (threads > 64)
		threads = 64;
	per = file->size / threads + 1;
	while (p < end) {
		const char *cut = n + 1 < threads ? cut_at_line(p, end, per, eol) : end;
		jobs[n].p = p;
		jobs[n].eol = eol;
		jobs[n].len = (size_t)(cut - p);
		n++;
		p = cut;
	}
	run_parallel(count_job, jobs, sizeof jobs[0], (unsigned)n);
	for (i = 0; i < n; i++)
		total += jobs[i].lines;
	return total;
}

int enc_plan_init(struct enc_planner *p, const struct enc_format *f, const struct in_set *in)
{
	size_t i;

	memset(p, 0, sizeof *p);
	p->f = f;
	p->in = in;
	p->counts = calloc(in->count ? in->count : 1, sizeof *p->counts);
	if (!p->counts) {
		msg_errno(ENOMEM, "cannot plan the sort");
		return CLS_E_FAIL;
	}
	for (i = 0; i < in->count; i++) {
		p->counts[i] = f->fmt == CLS_FMT_BIN ? in->files[i].size / f->rec_size :
			       count_file_lines(&in->files[i], f->threads, f->eol);
		p->total += p->counts[i];
	}
	return 0;
}

void enc_plan_free(struct enc_planner *p)
{
	free(p->counts);
	p->counts = NULL;
}

static int add_slice(struct enc_batch *b, const struct in_file *file, size_t off, size_t len,
		     uint64_t no, size_t records)
{
	struct enc_slice *s;
	if (b->nslices == b->slices_cap) {
		size_t cap = b->slices_cap ? b->slices_cap * 2 : 8;
		s = realloc(b->slices, cap * sizeof *s);
		if (!s) {
			msg_errno(ENOMEM, "cannot plan a run");
			return CLS_E_FAIL;
		}
		b->slices = s;
		b->slices_cap = cap;
	}
	s = &b->slices[b->nslices++];
	s->file = file;
	s->off = off;
	s->len = len;
	s->first_no = no;
	s->first_rec = b->n;
	b->n += records;
	return 0;
}

int enc_plan_next(struct enc_planner *p, size_t cap, struct enc_batch *b)
{
	const struct enc_format *f = p->f;

	b->nslices = 0;
	b->n = 0;
	b->skipped = b->skipped_fields = 0;
	while (b->n < cap && p->file < p->in->count) {
		const struct in_file *file = &p->in->files[p->file];
		size_t left = file->size - p->off, len, records;

		if (left == 0) {
			p->file++;
			p->off = 0;
			p->no = 0;
			continue;
		}
		if (f->fmt == CLS_FMT_BIN) {
			records = left / f->rec_size;
			if (records > cap - b->n)
				records = cap - b->n;
			len = records * f->rec_size;
		} else if (p->counts[p->file] - p->no <= cap - b->n) {
			records = p->counts[p->file] - p->no;
			len = left;
		} else {
			const char *s = (const char *)file->data + p->off, *end = s + left, *q = s, *nl;
			records = 0;
			while (records < cap - b->n && q < end) {
				nl = memchr(q, f->eol, (size_t)(end - q));
				q = nl ? nl + 1 : end;
				records++;
			}
			len = (size_t)(q - s);
		}
		if (add_slice(b, file, p->off, len, p->no, records))
			return CLS_E_FAIL;
		p->off += len;
		p->no += records;
	}
	return b->n > 0;
}

bool enc_bare_keys(const struct enc_format *f)
{
	return f->fmt == CLS_FMT_BIN && !f->indexed && !f->tail && f->kt && f->kt->invertible &&
	       f->key_off == 0 && f->rec_size == f->kt->width;
}

bool enc_plan_done(const struct enc_planner *p)
{
	size_t i;
	for (i = p->file; i < p->in->count; i++)
		if (p->in->files[i].size > (i == p->file ? p->off : 0))
			return false;
	return true;
}

/* --- words ------------------------------------------------------------- */

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

size_t enc_word_index(const struct enc_format *f, const void *words, size_t i)
{
	/* Runs hold fewer than 2^32 records, and string keys use the upper
	 * half of a 128-bit word's low 64 bits. */
	if (f->kind == WORD64)
		return (uint32_t)((const uint64_t *)words)[i];
	return (uint32_t)((const struct word128 *)words)[i].lo;
}

/* --- kv lines ------------------------------------------------------------ */

int enc_key(const struct enc_format *f, const unsigned char *rec, size_t len, uint64_t *key)
{
	const char *k;
	size_t klen;
	unsigned char prefix[8];
	if (f->fmt == CLS_FMT_BIN) {
		*key = f->kt->sortable(key_load(f->kt, rec + f->key_off)) ^ f->mask;
		return KEY_OK;
	}
	return kvk_key(f, (const char *)rec, len, key, &k, &klen, prefix, sizeof prefix);
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
	j->lines = count_lines(j->start, (size_t)(j->end - j->start), j->f->eol);
}

static void kv_parse_job(void *arg)
{
	struct kv_job *j = arg;
	const struct enc_format *f = j->f;
	const char *p = j->start, *nl, *k;
	size_t i, out = j->first, klen;
	uint64_t key;
	int rc;

	for (i = 0; i < j->lines; i++) {
		size_t len;
		nl = memchr(p, f->eol, (size_t)(j->end - p));
		len = nl ? (size_t)(nl - p) : (size_t)(j->end - p);
		if (f->nkeys) {
			rc = composed_key(j, p, len, &key, &k, &klen);
			if (j->nomem)
				break;
		} else {
			rc = kvk_key(f, p, len, &key, &k, &klen, NULL, 0);
		}
		if (rc == KEY_OK) {
			j->b->lines[out].p = p;
			j->b->lines[out].len = len;
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

/* Cut each slice into jobs of at least MIN_JOB_BYTES, about threads per
 * slice.  Returns the job count, or 0 when out of memory. */
static size_t kv_make_jobs(const struct enc_format *f, struct enc_batch *b, struct kv_job **out)
{
	size_t s, n = 0, cap = 0;
	struct kv_job *jobs = NULL;

	for (s = 0; s < b->nslices; s++) {
		const struct enc_slice *sl = &b->slices[s];
		const char *p = (const char *)sl->file->data + sl->off, *end = p + sl->len;
		size_t want = sl->len / f->threads;
		if (want < MIN_JOB_BYTES)
			want = MIN_JOB_BYTES;
		while (p < end) {
			const char *cut = cut_at_line(p, end, want, f->eol);
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

/* Run fn over the jobs, threads at a time. */
static void run_jobs(void (*fn)(void *), void *jobs, size_t size, size_t n, unsigned threads)
{
	size_t done = 0;
	while (done < n) {
		size_t now = n - done < threads ? n - done : threads;
		run_parallel(fn, (char *)jobs + done * size, size, (unsigned)now);
		done += now;
	}
}

static int kv_encode(const struct enc_format *f, struct enc_batch *b)
{
	struct kv_job *jobs = NULL;
	size_t nj, i, run = 0, pos;
	uint64_t line0 = 0;
	const struct enc_slice *prev = NULL;

	enc_free_keys(b);
	if (b->n == 0)
		return 0;
	nj = kv_make_jobs(f, b, &jobs);
	if (nj == 0) {
		msg_errno(ENOMEM, "cannot parse the input");
		return CLS_E_FAIL;
	}
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

void enc_free_keys(struct enc_batch *b)
{
	struct enc_block *bl, *next;
	for (bl = b->blocks; bl; bl = next) {
		next = bl->next;
		free(bl);
	}
	b->blocks = NULL;
}

int enc_batch_alloc(const struct enc_format *f, size_t cap, struct enc_batch *b)
{
	const bool kv = f->fmt == CLS_FMT_KV;

	/* kv lines are parsed a whole run at once, into words and a line
	 * table, and -u thins a whole run's sorted words; bin records are
	 * otherwise encoded as the engine takes them. */
	if ((kv || f->unique) && !(b->words = xmalloc(cap * word_size(f->kind), "sort words")))
		return CLS_E_FAIL;
	if (kv && !(b->lines = xmalloc(cap * sizeof *b->lines, "line table")))
		return CLS_E_FAIL;
	if (f->nkeys && !(b->keys = xmalloc(cap * sizeof *b->keys, "key table")))
		return CLS_E_FAIL;
	return 0;
}

void enc_batch_free(struct enc_batch *b)
{
	free(b->words);
	free(b->lines);
	free(b->keys);
	enc_free_keys(b);
	free(b->slices);
	b->words = NULL;
	b->lines = NULL;
	b->keys = NULL;
	b->slices = NULL;
}

/* --- bin records ---------------------------------------------------------- */

struct bin_job {
	const struct enc_format *f;
	const unsigned char *src;
	size_t count;
	size_t first;		/* index in the run of the first record */
	void *dst;
};

static void bin_job(void *arg)
{
	const struct bin_job *j = arg;
	const struct enc_format *f = j->f;
	f->kt->encode(j->src + f->key_off, f->rec_size, j->count, f->mask, j->dst, f->indexed,
		      (uint32_t)j->first);
}

int enc_encode_range(const struct enc_format *f, const struct enc_batch *b, size_t first,
		     size_t count, void *dst)
{
	const size_t ws = word_size(f->kind);
	size_t per = count / f->threads + 1, s, nj = 0, cap = f->threads + b->nslices + 1;
	struct bin_job *jobs;

	assert(f->fmt == CLS_FMT_BIN);
	if (per < MIN_JOB_BYTES / f->rec_size)
		per = MIN_JOB_BYTES / f->rec_size + 1;
	jobs = calloc(cap, sizeof *jobs);
	if (!jobs) {
		msg_errno(ENOMEM, "cannot encode the input");
		return CLS_E_FAIL;
	}
	for (s = 0; s < b->nslices; s++) {
		const struct enc_slice *sl = &b->slices[s];
		const size_t recs = sl->len / f->rec_size;
		size_t lo = sl->first_rec > first ? sl->first_rec : first;
		const size_t hi = sl->first_rec + recs < first + count ? sl->first_rec + recs : first + count;
		while (lo < hi) {
			const size_t c = hi - lo < per ? hi - lo : per;
			if (nj == cap) {
				struct bin_job *g = realloc(jobs, 2 * cap * sizeof *jobs);
				if (!g) {
					free(jobs);
					msg_errno(ENOMEM, "cannot encode the input");
					return CLS_E_FAIL;
				}
				jobs = g;
				cap *= 2;
			}
			jobs[nj].f = f;
			jobs[nj].src = sl->file->data + sl->off + (lo - sl->first_rec) * f->rec_size;
			jobs[nj].count = c;
			jobs[nj].first = lo;
			jobs[nj].dst = (char *)dst + (lo - first) * ws;
			nj++;
			lo += c;
		}
	}
	run_jobs(bin_job, jobs, sizeof *jobs, nj, f->threads);
	free(jobs);
	return 0;
}

int enc_encode(const struct enc_format *f, struct enc_batch *b)
{
	return f->fmt == CLS_FMT_KV ? kv_encode(f, b) : enc_encode_range(f, b, 0, b->n, b->words);
}

/* The last of b's slices that starts at or before record i. */
static size_t slice_of(const struct enc_batch *b, size_t i)
{
	size_t lo = 0, hi = b->nslices;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (b->slices[mid].first_rec <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void enc_record(const struct enc_format *f, const struct enc_batch *b, size_t i,
		const unsigned char **p, size_t *len)
{
	size_t lo;

	if (f->fmt == CLS_FMT_KV) {
		*p = (const unsigned char *)b->lines[i].p;
		*len = b->lines[i].len;
		return;
	}
	lo = slice_of(b, i);
	*p = b->slices[lo].file->data + b->slices[lo].off + (i - b->slices[lo].first_rec) * f->rec_size;
	*len = f->rec_size;
}

size_t enc_record_bytes(const struct enc_format *f)
{
	return f->fmt == CLS_FMT_KV ? sizeof(struct kv_line) : f->rec_size;
}

void enc_copy_record_bytes(const struct enc_format *f, const struct enc_batch *b, uint64_t from,
			   size_t len, void *dst)
{
	const uint64_t end = from + len, total = (uint64_t)b->n * enc_record_bytes(f);
	unsigned char *d = dst;
	size_t lo;

	/* kv: the line table, in index order already. */
	if (f->fmt == CLS_FMT_KV) {
		const size_t n = from >= total ? 0 : total - from < len ? (size_t)(total - from) : len;
		memcpy(d, (const unsigned char *)b->lines + from, n);
		memset(d + n, 0, len - n);
		return;
	}
	/* From the slice byte from lies in: a slice's records lie side by
	 * side in its file. */
	for (lo = slice_of(b, (size_t)(from / f->rec_size)); from < end && from < total && lo < b->nslices; lo++) {
		const struct enc_slice *s = &b->slices[lo];
		const uint64_t s0 = (uint64_t)s->first_rec * f->rec_size;
		const uint64_t s1 = s0 + s->len / f->rec_size * f->rec_size;
		const size_t n = (size_t)((end < s1 ? end : s1) - from);

		if (from >= s1)
			continue;
		memcpy(d, s->file->data + s->off + (from - s0), n);
		d += n;
		from += n;
	}
	if (from < end)
		memset(d, 0, (size_t)(end - from));
}

/* --- cursors ------------------------------------------------------------- */

void enc_cursor_init(struct enc_cursor *c, const struct enc_format *f, const void *data,
		     size_t len, const char *name)
{
	memset(c, 0, sizeof *c);
	c->f = f;
	c->p = data;
	c->end = c->p + len;
	c->name = name;
}

int enc_cursor_next(struct enc_cursor *c)
{
	const struct enc_format *f = c->f;

	for (;;) {
		const unsigned char *nl;
		const char *k;
		size_t klen;
		unsigned char prefix[8];
		int rc;

		if (c->p >= c->end)
			return 0;
		c->no++;
		c->rec = c->p;
		if (f->fmt == CLS_FMT_BIN) {
			c->len = f->rec_size;
			c->p += f->rec_size;
			c->key = f->kt->sortable(key_load(f->kt, c->rec + f->key_off)) ^ f->mask;
			return 1;
		}
		nl = memchr(c->p, f->eol, (size_t)(c->end - c->p));
		c->len = nl ? (size_t)(nl - c->p) : (size_t)(c->end - c->p);
		c->p = nl ? nl + 1 : c->end;
		rc = kvk_key(f, (const char *)c->rec, c->len, &c->key, &k, &klen, prefix,
			     sizeof prefix);
		if (rc == KEY_OK) {
			/* Several keys are compared line by line (kvk_cmp). */
			c->kp = f->nkeys ? NULL : (const unsigned char *)k;
			c->klen = f->nkeys ? 0 : klen;
			return 1;
		}
		if (!f->skip_bad) {
			kvk_report(f, c->name, c->no, (const char *)c->rec, c->len, rc, false);
			return CLS_E_FAIL;
		}
	}
}

int enc_cursor_cmp(const struct enc_cursor *a, const struct enc_cursor *b)
{
	const struct enc_format *f = a->f;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (f->nkeys)
		return kvk_cmp(f, (const char *)a->rec, a->len, (const char *)b->rec, b->len);
	if (f->str)
		return f->mask ? str_cmp(b->kp, b->klen, a->kp, a->klen) :
				 str_cmp(a->kp, a->klen, b->kp, b->klen);
	if (f->tail)
		return tie_cmp(a->rec + f->key_off, f->key_len, b->rec + f->key_off, f->key_len,
			       f->mask != 0);
	return 0;
}
