#include "config.h"
#include "encode.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode_kv.h"
#include "kvkey.h"
#include "lineahead.h"
#include "strkey.h"
#include "tie.h"
#include "util.h"

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
	f->field_span = o->field_span;
	f->num_lead = o->num_lead;
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

uint64_t enc_count_records(const struct enc_format *f, const void *data, size_t len)
{
	return f->fmt == CLS_FMT_KV ? enc_kv_count_lines(data, len, f->eol) : len / f->rec_size;
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
	j->lines = enc_kv_count_lines(j->p, j->len, j->eol);
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
		const char *cut = n + 1 < threads ? enc_kv_cut(p, end, per, eol) : end;
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
		if (f->fmt == CLS_FMT_BIN)
			p->counts[i] = in->files[i].size / f->rec_size;
		else if (!la_lines(f->ahead, &in->files[i], &p->counts[i]))
			p->counts[i] = count_file_lines(&in->files[i], f->threads, f->eol);
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
	if (!b->lent) {
		free(b->words);
		free(b->lines);
		free(b->keys);
	}
	enc_free_keys(b);
	free(b->slices);
	b->words = NULL;
	b->lines = NULL;
	b->keys = NULL;
	b->slices = NULL;
	b->parsed = 0;
	b->lent = false;
	b->lines_due = false;
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

/* Records packed in their words (enc_packs): the sortable key above
 * low, the record's other bytes below it.  The packed keys are integers,
 * whose sortable form is their own bits but for an exclusive or, as is
 * the descending one: xor. */
static uint64_t pack_xor(const struct enc_format *f)
{
	return f->kt->sortable(0) ^ f->mask;
}

/* Whether the key is one half of the record, first or second: whole
 * loads and stores then. */
static bool halves(const struct enc_format *f)
{
	return f->rec_size == 2 * f->kt->width && (f->key_off == 0 || f->key_off == f->kt->width);
}

static void pack_job(void *arg)
{
	const struct bin_job *j = arg;
	const struct enc_format *f = j->f;
	const size_t w = f->kt->width, rest = f->rec_size - f->key_off - w;
	const uint64_t x = pack_xor(f);
	const unsigned char *r = j->src;
	struct word128 *d128 = j->dst;
	uint64_t *d64 = j->dst;
	size_t i;

	/* Records that fill their words may be packed where they lie (dst
	 * the records): a record's halves are both loaded before its word is
	 * stored. */
	if (halves(f) && f->kind == WORD128) {
		const size_t k = f->key_off, o = w - k;
		for (i = 0; i < j->count; i++, r += 16)
			d128[i] = (struct word128){ le_load64(r + o), le_load64(r + k) ^ x };
		return;
	}
	if (halves(f)) {
		const size_t k = f->key_off, o = w - k;
		for (i = 0; i < j->count; i++, r += 8)
			d64[i] = (le_load32(r + k) ^ (uint32_t)x) << 32 | le_load32(r + o);
		return;
	}
	for (i = 0; i < j->count; i++, r += f->rec_size) {
		uint64_t key = 0, low = 0;
		memcpy(&key, r + f->key_off, w);
		memcpy(&low, r, f->key_off);
		memcpy((unsigned char *)&low + f->key_off, r + f->key_off + w, rest);
		if (f->kind == WORD64)
			d64[i] = (key ^ x) << 32 | low;
		else
			d128[i] = (struct word128){ low, key ^ x };
	}
}

bool enc_words_in_place(const struct enc_format *f)
{
	return enc_bare_keys(f) || (enc_packs(f) && halves(f));
}

bool enc_packs(const struct enc_format *f)
{
	return f->fmt == CLS_FMT_BIN && f->indexed && !f->tail && !f->unique && !f->str &&
	       f->kt && f->kt->raw && !f->kt->size &&
	       ((f->kind == WORD64 && f->kt->width == 4 && f->rec_size <= 8) ||
		(f->kind == WORD128 && f->kt->width == 8 && f->rec_size <= 16));
}

unsigned enc_packed_low(const struct enc_format *f)
{
	return f->kind == WORD64 ? 32 : 64;
}

void enc_unpack(const struct enc_format *f, const void *words, size_t n, unsigned char *dst)
{
	const size_t w = f->kt->width, rest = f->rec_size - f->key_off - w;
	const uint64_t x = pack_xor(f);
	const struct word128 *w128 = words;
	const uint64_t *w64 = words;
	size_t i;

	if (halves(f) && f->kind == WORD128) {
		const size_t k = f->key_off, o = w - k;
		for (i = 0; i < n; i++, dst += 16) {
			const uint64_t key = w128[i].hi ^ x, low = w128[i].lo;
			memcpy(dst + k, &key, 8);
			memcpy(dst + o, &low, 8);
		}
		return;
	}
	if (halves(f)) {
		const size_t k = f->key_off, o = w - k;
		for (i = 0; i < n; i++, dst += 8) {
			const uint32_t key = (uint32_t)(w64[i] >> 32) ^ (uint32_t)x;
			const uint32_t low = (uint32_t)w64[i];
			memcpy(dst + k, &key, 4);
			memcpy(dst + o, &low, 4);
		}
		return;
	}
	for (i = 0; i < n; i++, dst += f->rec_size) {
		const uint64_t key = (f->kind == WORD64 ? w64[i] >> 32 : w128[i].hi) ^ x;
		const uint64_t low = f->kind == WORD64 ? (uint32_t)w64[i] : w128[i].lo;
		memcpy(dst, &low, f->key_off);
		memcpy(dst + f->key_off, &key, w);
		memcpy(dst + f->key_off + w, (const unsigned char *)&low + f->key_off, rest);
	}
}

/* Records [first, first+count) of run b into dst, job by job (fn: one
 * job's records into its words). */
static int encode_jobs(const struct enc_format *f, const struct enc_batch *b, size_t first,
		       size_t count, void *dst, void (*fn)(void *))
{
	const size_t ws = word_size(f->kind);
	size_t per = count / f->threads + 1, s, nj = 0, cap = f->threads + b->nslices + 1;
	struct bin_job *jobs;

	assert(f->fmt == CLS_FMT_BIN);
	if (per < ENC_MIN_JOB_BYTES / f->rec_size)
		per = ENC_MIN_JOB_BYTES / f->rec_size + 1;
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
	run_jobs(fn, jobs, sizeof *jobs, nj, f->threads);
	free(jobs);
	return 0;
}

int enc_encode_range(const struct enc_format *f, const struct enc_batch *b, size_t first,
		     size_t count, void *dst)
{
	return encode_jobs(f, b, first, count, dst, bin_job);
}

void enc_words_of(const struct enc_format *f, const unsigned char *src, size_t count, void *dst)
{
	const struct bin_job j = { f, src, count, 0, dst };

	if (enc_bare_keys(f))
		bin_job((void *)&j);
	else
		pack_job((void *)&j);
}

int enc_pack_range(const struct enc_format *f, const struct enc_batch *b, size_t first,
		   size_t count, void *dst)
{
	return encode_jobs(f, b, first, count, dst, pack_job);
}

int enc_encode(const struct enc_format *f, struct enc_batch *b)
{
	return f->fmt == CLS_FMT_KV ? enc_kv_encode(f, b) : enc_encode_range(f, b, 0, b->n, b->words);
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
		assert(!b->lines_due);
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
		assert(!b->lines_due);
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
	c->digits = kvk_digits_ok(f);
}

int enc_cursor_next(struct enc_cursor *c)
{
	const struct enc_format *f = c->f;

	for (;;) {
		const unsigned char *nl, *from;
		const char *k, *sep;
		size_t klen;
		unsigned char prefix[8];
		bool read;
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
		/* A key of digits read, the line's end is looked for past it. */
		read = c->digits && kvk_digits_key(f, (const char *)c->rec, (const char *)c->end,
						   &c->key, &sep);
		from = read ? (const unsigned char *)sep : c->rec;
		nl = (const unsigned char *)kvk_line_end((const char *)from, (const char *)c->end, f->eol);
		c->len = nl ? (size_t)(nl - c->rec) : (size_t)(c->end - c->rec);
		c->p = nl ? nl + 1 : c->end;
		if (read) {
			rc = KEY_OK;
			k = (const char *)c->rec;
			klen = (size_t)(sep - k);
		} else {
			rc = kvk_key(f, (const char *)c->rec, c->len, &c->key, &k, &klen, prefix,
				     sizeof prefix);
		}
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
