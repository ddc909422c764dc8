#include "config.h"
#include "mergecut.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Where the cut looks at records: in a run in memory, in place; in a run
 * in a file, through small reads into buf (a mapping's pages would stay
 * resident, and a fault maps the 64 KiB around the record looked at, so
 * that the samples of a cut would bring in every run whole). */
struct probe {
	const struct enc_format *f;
	const struct mrg_run *r;
	unsigned char *buf;
	size_t cap;
	int err;		/* errno of the first read that failed, or 0... */
	const char *failed;	/* ...of this file */
};

/* The run's bytes from at (< r->len): the whole record there, for lines
 * up to the end of the line or of the run, and maybe more; *len of them.
 * NULL after a failed read (pr->err). */
static const unsigned char *peek(struct probe *pr, size_t at, size_t *len)
{
	const struct mrg_run *r = pr->r;
	const bool bin = pr->f->fmt == CLS_FMT_BIN;
	size_t have = 0, step = bin ? pr->f->rec_size : 256;

	if (r->fd < 0) {
		*len = r->len - at;
		return r->data + at;
	}
	for (;;) {
		const size_t chunk = r->len - at - have < step ? r->len - at - have : step;
		size_t got = 0;
		if (have + chunk > pr->cap) {
			unsigned char *g = realloc(pr->buf, 2 * (have + chunk));
			if (!g) {
				pr->err = pr->err ? pr->err : ENOMEM;
				pr->failed = pr->failed ? pr->failed : r->name;
				return NULL;
			}
			pr->buf = g;
			pr->cap = 2 * (have + chunk);
		}
		while (got < chunk) {
			const ssize_t n = pread(r->fd, pr->buf + have + got, chunk - got,
						(off_t)(at + have + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pr->err = pr->err ? pr->err : n < 0 ? errno : EIO;
				pr->failed = pr->failed ? pr->failed : r->name;
				return NULL;
			}
			got += (size_t)n;
		}
		have += chunk;
		if (bin || at + have == r->len || memchr(pr->buf + have - chunk, pr->f->eol, chunk))
			break;
		step *= 2;
	}
	*len = have;
	return pr->buf;
}

/* Start of the first record at or after byte pos of a run. */
static size_t record_at(struct probe *pr, size_t pos)
{
	const struct enc_format *f = pr->f;
	const size_t end = pr->r->len;
	const unsigned char *p, *nl;
	size_t len;

	if (f->fmt == CLS_FMT_BIN)
		return (pos + f->rec_size - 1) / f->rec_size * f->rec_size;
	if (pos == 0 || pos >= end)
		return pos == 0 ? 0 : end;
	p = peek(pr, pos - 1, &len);
	nl = p ? memchr(p, f->eol, len) : NULL;
	return nl ? pos + (size_t)(nl - p) : end;
}

/* Sortable key of the record starting at byte at (< r->len). */
static uint64_t key_at(struct probe *pr, size_t at)
{
	struct enc_cursor c;
	size_t len;
	const unsigned char *p = peek(pr, at, &len);

	if (!p)
		return 0;
	enc_cursor_init(&c, pr->f, p, len, "run");
	return enc_cursor_next(&c) == 1 ? c.key : 0;
}

/* Keys whose sortable key is only a prefix (string keys, several keys,
 * bytes:N longer than a word): cuts compare whole keys, so that runs whose
 * keys share long prefixes (URLs, paths) are cut as finely as any. */
static bool whole_keys(const struct enc_format *f)
{
	return f->str || f->tail;
}

/* A sample of the cut: a record's key, and for whole keys the record. */
struct sample {
	uint64_t key;
	double weight;		/* bytes it stands for */
	unsigned char *rec;	/* whole keys: a copy of the record... */
	size_t len;		/* ...of this many bytes (kv: without its line end) */
};

/* Order of the keys of two records (each the first of its bytes). */
static int cmp_records(const struct enc_format *f, const unsigned char *a, size_t alen,
		       const unsigned char *b, size_t blen)
{
	struct enc_cursor x, y;

	enc_cursor_init(&x, f, a, alen, "run");
	enc_cursor_init(&y, f, b, blen, "run");
	if (enc_cursor_next(&x) != 1 || enc_cursor_next(&y) != 1)
		return 0;
	return enc_cursor_cmp(&x, &y);
}

/* The sample of the record starting at byte at (< r->len).  false when a
 * read or the copy failed (pr->err). */
static bool sample_at(struct probe *pr, size_t at, struct sample *s)
{
	struct enc_cursor c;
	size_t len;
	const unsigned char *p = peek(pr, at, &len);

	if (!p)
		return false;
	enc_cursor_init(&c, pr->f, p, len, "run");
	if (enc_cursor_next(&c) != 1)
		return true;
	s->key = c.key;
	if (whole_keys(pr->f)) {
		s->len = c.len;
		s->rec = malloc(c.len ? c.len : 1);
		if (!s->rec) {
			pr->err = pr->err ? pr->err : ENOMEM;
			pr->failed = pr->failed ? pr->failed : "the samples of a cut";
			return false;
		}
		memcpy(s->rec, c.rec, c.len);
	}
	return true;
}

/* Whether the record starting at byte at (< r->len) is above the
 * sample's, by the key alone or by the whole key. */
static bool above(struct probe *pr, size_t at, const struct sample *s)
{
	size_t len;
	const unsigned char *p;

	if (!whole_keys(pr->f))
		return key_at(pr, at) > s->key;
	p = peek(pr, at, &len);
	return p && cmp_records(pr->f, p, len, s->rec, s->len) > 0;
}

/* Byte offset of the first record of the run whose key is above s's. */
static size_t cut_after(struct probe *pr, const struct sample *s)
{
	size_t lo = 0, hi = pr->r->len;
	/* Smallest pos whose record (at or after pos) has a key above s's. */
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2, at = record_at(pr, mid);
		if (at < pr->r->len && !above(pr, at, s))
			lo = mid + 1;
		else
			hi = mid;
	}
	return record_at(pr, lo);
}

static int cmp_sample(const void *a, const void *b, void *arg)
{
	const struct sample *x = a, *y = b;
	const struct enc_format *f = arg;
	if (x->key != y->key || !whole_keys(f))
		return (x->key > y->key) - (x->key < y->key);
	return cmp_records(f, x->rec, x->len, y->rec, y->len);
}

/* One thread's runs of a cut: every jobs-th from first.  The runs of a cut
 * are sampled and searched side by side: from a disk each probe of a run
 * in a file waits for its read (a cut of 17 runs of 8 GiB in all into 512
 * parts took 2.4 s on one thread). */
struct cut_job {
	const struct enc_format *f;
	const struct mrg_run *runs;
	size_t k, first, jobs;
	size_t parts, per;
	struct sample *smp;	/* parts * per slots a run */
	size_t *got;		/* samples of each run */
	const struct sample *const *split;
	size_t *cuts;
	struct probe pr;
};

static void sample_job(void *arg)
{
	struct cut_job *j = arg;
	const size_t slots = j->parts * j->per;
	size_t r;

	for (r = j->first; r < j->k && !j->pr.err; r += j->jobs) {
		const size_t every = j->runs[r].len / slots + 1;
		struct sample *smp = j->smp + r * slots;
		size_t pos, n = 0;
		j->pr.r = &j->runs[r];
		for (pos = 0; pos < j->runs[r].len && n < slots; pos += every) {
			const size_t at = record_at(&j->pr, pos);
			if (at >= j->runs[r].len || !sample_at(&j->pr, at, &smp[n]))
				break;
			smp[n].weight = (double)every;
			n++;
		}
		j->got[r] = n;
	}
}

static void cut_job(void *arg)
{
	struct cut_job *j = arg;
	const size_t k = j->k, parts = j->parts;
	size_t r, p;

	for (r = j->first; r < k && !j->pr.err; r += j->jobs) {
		size_t *cuts = j->cuts;
		cuts[r] = 0;
		cuts[parts * k + r] = j->runs[r].len;
		j->pr.r = &j->runs[r];
		for (p = 0; p + 1 < parts; p++) {
			size_t c = j->split[p] ? cut_after(&j->pr, j->split[p]) : 0;
			/* Splitters never decrease, nor may the cuts. */
			cuts[(p + 1) * k + r] = c < cuts[p * k + r] ? cuts[p * k + r] : c;
		}
	}
}

int mrg_cut(const struct enc_format *f, const struct mrg_run *runs, size_t k, size_t parts,
	    size_t per, size_t total, size_t *cuts)
{
	const size_t slots = parts * per, nsamples = k * slots;
	const size_t jobs = k < f->threads ? k : f->threads ? f->threads : 1;
	struct sample *smp = calloc(nsamples ? nsamples : 1, sizeof *smp);
	const struct sample **split = calloc(parts, sizeof *split);
	size_t *got = calloc(k ? k : 1, sizeof *got);
	struct cut_job *job = calloc(jobs ? jobs : 1, sizeof *job);
	size_t r, p, i, n = 0;
	double acc = 0, step;
	int err = 0;
	const char *failed = NULL;

	if (!smp || !split || !got || !job) {
		free(smp);
		free(split);
		free(got);
		free(job);
		msg_errno(ENOMEM, "cannot merge runs");
		return CLS_E_FAIL;
	}
	for (i = 0; i < jobs; i++)
		job[i] = (struct cut_job){ .f = f, .runs = runs, .k = k, .first = i, .jobs = jobs,
					   .parts = parts, .per = per, .smp = smp, .got = got,
					   .split = split, .cuts = cuts,
					   .pr = { f, NULL, NULL, 0, 0, NULL } };
	run_parallel(sample_job, job, sizeof *job, (unsigned)jobs);
	/* The runs' samples end to end. */
	for (r = 0; r < k; r++) {
		memmove(&smp[n], &smp[r * slots], got[r] * sizeof *smp);
		n += got[r];
	}
	for (i = n; i < nsamples; i++)
		smp[i].rec = NULL;
	qsort_r(smp, n, sizeof *smp, cmp_sample, (void *)f);
	/* Splitter p closes part p: the key where the running weight passes
	 * (p+1)/parts of the total; none (NULL) cuts every run at 0. */
	step = (double)total / (double)parts;
	for (p = 0, i = 0; p + 1 < parts; p++) {
		while (i + 1 < n && acc + smp[i].weight < step * (double)(p + 1))
			acc += smp[i++].weight;
		split[p] = n ? &smp[i] : NULL;
	}
	for (i = 0; i < jobs && !err; i++)
		if (job[i].pr.err) {
			err = job[i].pr.err;
			failed = job[i].pr.failed;
		}
	if (!err)
		run_parallel(cut_job, job, sizeof *job, (unsigned)jobs);
	for (i = 0; i < jobs; i++) {
		if (!err && job[i].pr.err) {
			err = job[i].pr.err;
			failed = job[i].pr.failed;
		}
		free(job[i].pr.buf);
	}
	for (i = 0; i < n; i++)
		free(smp[i].rec);
	free(smp);
	free(split);
	free(got);
	free(job);
	if (err) {
		msg_errno(err, "cannot read back %s", failed);
		return CLS_E_FAIL;
	}
	return 0;
}
