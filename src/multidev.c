#include "config.h"
#include "multidev.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deal.h"
#include "device.h"
#include "engine.h"
#include "partition.h"
#include "sieve.h"
#include "runs.h"
#include "sortrun.h"
#include "tmpfile.h"
#include "util.h"

/* Records sampled per range: the ranges' sizes then vary by about
 * 1/sqrt(SAMPLES) of a range, which the devices wait for. */
#define SAMPLES 16384

int md_devices(struct md_devices *d, const struct cls_opts *o)
{
	struct dev_spec spec;

	d->planned = !dev_parse_spec(o->device, &spec) && spec.kind == DEV_ALL;
	return dev_expand(o->device, &d->specs, &d->count);
}

void md_devices_free(struct md_devices *d)
{
	dev_free_specs(d->specs, d->count);
	d->specs = NULL;
	d->count = 0;
}

/* Sort in into out on one device, as runs_sort_on does: with its engine e
 * where it is open already, else NULL. */
static int sort_on(const struct cls_opts *o, const struct enc_format *f, const char *device,
		   struct engine *e, const struct in_set *in, struct out_writer *out)
{
	struct cls_opts one = *o;

	one.device = device;
	return runs_sort_on(&one, f, in, out, e);
}

bool md_exact(const struct enc_format *f)
{
	return !f->unique && !f->skip_bad;
}

bool md_whole_keys(const struct enc_format *f)
{
	return f->unique || f->str || f->tail;
}

int md_append(struct out_writer *w, int fd)
{
	const size_t size = (size_t)4 << 20;
	unsigned char *buf = xmalloc(size, "copying a sorted range");
	uint64_t off = 0;
	ssize_t got;
	int rc = 0;

	if (!buf)
		return CLS_E_FAIL;
	while (rc == 0 && (got = pread(fd, buf, size, (off_t)off)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			msg_errno(errno, "cannot read a sorted range back from its temporary file");
			rc = CLS_E_FAIL;
			break;
		}
		off += (uint64_t)got;
		rc = out_write(w, buf, (size_t)got);
	}
	free(buf);
	return rc;
}

/* The jobs wait for their ranges here once their devices started. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t open;
	bool ready;		/* the ranges are assigned... */
	bool cancel;		/* ...or there will be none */
	pthread_cond_t up;	/* signalled as each device starts... */
	size_t started;		/* ...or fails to: how many did */
};

/* How the ranges reach their devices: copied out of the input into
 * buffers of their own, or (bin records, but for -u and keys longer than
 * their words) dealt straight from the input, in one pass that hands each
 * device's staging the words of its range: the input is never written a
 * second time. */
struct cut {
	struct part_set parts;		/* copied */
	struct part_sieve sieve;	/* or counted... */
	struct deal *deal;		/* ...and dealt from the input... */
	struct enc_batch whole;		/* ...whose records this batch holds */
	bool sieved;
};

/* One device: its engine, its range and what became of it. */
struct job {
	struct cls_opts o;	/* the device's share of the options */
	struct enc_format f;
	struct gate *gate;
	struct engine *eng;
	const struct cut *cut;
	size_t r;		/* its range... */
	bool assigned;		/* ...if it has one */
	uint64_t bytes;		/* of the range */
	struct out_writer w;	/* a part of the output, or a temporary file */
	int tmp;		/* that file, or -1 */
	bool opened;
	double t_open, secs;
	int rc;
};

static int pick(const void *ctx, size_t first, size_t count, void *dst)
{
	const struct job *j = ctx;
	return deal_words(j->cut->deal, j->r, first, count, dst);
}

/* Sort job j's range, dealt from the input: in one run where it fits,
 * else copied out and sorted in runs. */
static int sort_sieved(struct job *j)
{
	const struct enc_format *f = &j->f;
	const size_t n = j->bytes / f->rec_size;
	struct enc_batch b = j->cut->whole;
	struct srt_times t;
	struct part_set own;
	size_t cap;
	int rc;

	if (n == 0)
		return 0;
	if ((rc = eng_capacity(j->eng, n, &cap)))
		return rc;
	if (cap >= n && (!f->indexed || b.n <= runs_index_limit())) {
		/* The output's blocks prepared while the range is staged. */
		struct srt_warm warm = { .out = &j->w, .out_bytes = j->bytes,
					 .map_out = j->bytes <= j->o.memory_bytes / 2, .fault_out = true,
					 .threads = f->threads };
		memset(&t, 0, sizeof t);
		b.n = n;
		b.pick = pick;
		b.pick_ctx = j;
		srt_warm_start(&warm);
		rc = srt_run(j->eng, f, &b, &j->w, &warm, &t);
		srt_warm_done(&warm);
		msg_info(2, "range %zu on device %s: one run, sorted and written in %.3f s, of which "
			 "staging %.3f s, waiting for the output %.3f s, writing %.3f s", j->r,
			 j->o.device, t.sort, t.produce, t.warm, t.consume);
		eng_report(j->eng);
		return rc;
	}
	msg_info(1, "range %zu does not fit a run on device %s: copied out and sorted in runs",
		 j->r, j->o.device);
	deal_leave(j->cut->deal, j->r);
	if ((rc = part_sieve_copy(&j->cut->sieve, j->r, NULL, &own)))
		return rc;
	rc = runs_sort_on(&j->o, f, &own.ranges[0], &j->w, j->eng);
	part_free(&own);
	return rc;
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct eng_config ec;
	double t0 = now_sec();
	bool cancel;

	/* The device starts while the input is cut into ranges. */
	runs_config(&j->o, &j->f, j->o.device, &ec);
	j->rc = eng_open(&j->eng, &ec);
	j->t_open = now_sec() - t0;
	pthread_mutex_lock(&j->gate->lock);
	j->gate->started++;
	pthread_cond_broadcast(&j->gate->up);
	while (!j->gate->ready)
		pthread_cond_wait(&j->gate->open, &j->gate->lock);
	cancel = j->gate->cancel;
	pthread_mutex_unlock(&j->gate->lock);
	t0 = now_sec();
	if (j->rc == 0 && !cancel && j->assigned) {
		j->rc = j->cut->sieved ? sort_sieved(j)
				       : runs_sort_on(&j->o, &j->f, &j->cut->parts.ranges[j->r],
						      &j->w, j->eng);
		if (j->rc == 0)
			j->rc = out_finish(&j->w);
	}
	/* Done with the deal, or failed before the last word. */
	if (j->assigned && j->cut->deal)
		deal_leave(j->cut->deal, j->r);
	j->secs = now_sec() - t0;
	eng_close(j->eng);
	return NULL;
}

/* Open job j's writer: at its place in out when the ranges' outputs have
 * known sizes and out can be written at offsets, else a temporary file
 * appended to out afterwards. */
static int open_job(struct job *j, struct out_writer *out, bool parts, uint64_t off)
{
	if (parts)
		return out_open_part(&j->w, out, off);
	j->tmp = tmp_create(j->o.tmpdir);
	if (j->tmp < 0)
		return CLS_E_FAIL;
	return out_open_fd(&j->w, j->tmp, "a temporary file");
}

/* Let the jobs go: to their ranges, or (cancel) to closing their devices. */
static void release(struct gate *g, bool cancel)
{
	pthread_mutex_lock(&g->lock);
	g->ready = true;
	g->cancel = cancel;
	pthread_cond_broadcast(&g->open);
	pthread_mutex_unlock(&g->lock);
}

/* Cut in into up to n ranges, *count of them.  Same returns as
 * part_split_n. */
static int cut_input(struct cut *c, const struct enc_format *f, const struct in_set *in,
		     uint64_t records, size_t n, size_t *count)
{
	struct part_key *sp;
	struct enc_planner pl;
	size_t nsp, i;
	int rc;

	c->sieved = f->fmt == CLS_FMT_BIN && !f->unique && !f->tail;
	if (!c->sieved) {
		if ((rc = part_split_n(f, in, records, n, SAMPLES, md_whole_keys(f), NULL, &c->parts)))
			return rc;
		*count = c->parts.count;
		/* Every record is in the ranges now. */
		for (i = 0; i < in->count; i++)
			in_release(&in->files[i], 0, in->files[i].size);
		return 0;
	}
	sp = calloc(n, sizeof *sp);
	if (!sp) {
		msg_errno(ENOMEM, "cannot cut the input into key ranges");
		return CLS_E_FAIL;
	}
	nsp = part_pick(f, in, records, n, SAMPLES, false, sp);
	rc = nsp == SIZE_MAX ? CLS_E_FAIL : part_sieve_init(&c->sieve, f, in, 0, sp, nsp, true);
	free(sp);
	if (rc)
		return rc;
	*count = c->sieve.nranges;
	/* One batch of every record, which the ranges' words index. */
	if (enc_plan_init(&pl, f, in))
		return CLS_E_FAIL;
	rc = enc_plan_next(&pl, SIZE_MAX, &c->whole) < 0 ? CLS_E_FAIL : 0;
	enc_plan_free(&pl);
	return rc ? rc : deal_open(&c->deal, &c->sieve, f->threads);
}

static uint64_t cut_bytes(const struct cut *c, size_t r)
{
	return c->sieved ? part_sieve_bytes(&c->sieve, r) : c->parts.ranges[r].bytes;
}

static void cut_free(struct cut *c)
{
	deal_close(c->deal);
	part_free(&c->parts);
	part_sieve_free(&c->sieve);
	free(c->whole.slices);
}

/* For "all", once the n devices of jobs started: whether they share the
 * input's records records (else the first sorts them alone, as o says; see
 * md_sort in multidev.h), *rc set where asking a device failed.  The first
 * is asked with the host memory it would have alone.  Ranges come out
 * within a few per cent of their share: room for a 16th more is asked. */
static bool share(struct job *jobs, size_t n, struct gate *g, const struct cls_opts *o,
		  const struct enc_format *f, uint64_t records, int *rc)
{
	const bool indexable = !f->indexed || records <= runs_index_limit();
	const uint64_t per = records / n + records / (16 * n) + 1;
	const char *first = jobs[0].o.device;
	struct eng_config alone, part;
	size_t cap, i;

	pthread_mutex_lock(&g->lock);
	while (g->started < n)
		pthread_cond_wait(&g->up, &g->lock);
	pthread_mutex_unlock(&g->lock);
	for (i = 0; i < n; i++)
		if (jobs[i].rc)
			return true;	/* and the device's job says why */
	runs_config(o, f, first, &alone);
	eng_set_memory(jobs[0].eng, alone.memory);
	if (indexable) {
		if ((*rc = eng_capacity(jobs[0].eng, records > 1 ? (size_t)records : 1, &cap)))
			return false;
		if (cap >= records) {
			msg_info(1, "all: device %s holds the %llu records in one run; sorting on it "
				 "alone", first, (unsigned long long)records);
			return false;
		}
		runs_config(&jobs[0].o, &jobs[0].f, first, &part);
		eng_set_memory(jobs[0].eng, part.memory);
		for (i = 0; i < n; i++) {
			if ((*rc = eng_capacity(jobs[i].eng, (size_t)per, &cap)))
				return false;
			if (cap < per)
				break;
		}
	}
	if (!indexable || i < n) {
		msg_info(1, "all: %zu devices would sort their ranges in runs too; sorting in runs "
			 "on device %s alone", n, first);
		eng_set_memory(jobs[0].eng, alone.memory);
		return false;
	}
	msg_info(1, "all: each of %zu devices holds its range (about %llu records) in one run, "
		 "where device %s would sort the input in runs", n,
		 (unsigned long long)(records / n), first);
	return true;
}

int md_sort(const struct md_devices *d, const struct cls_opts *o, const struct enc_format *f,
	    const struct in_set *in, struct out_writer *out)
{
	const size_t n = d->count;
	const unsigned threads = f->threads / n ? f->threads / (unsigned)n : 1;
	const uint64_t records = f->fmt == CLS_FMT_BIN ? in->bytes / f->rec_size : in->bytes;
	struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false,
			     PTHREAD_COND_INITIALIZER, 0 };
	struct cut cut;
	struct job *jobs = NULL;
	pthread_t *tids = NULL;
	bool exact_parts = false, alone = false;
	uint64_t off = 0;
	size_t i, ranges = 0, started = 0;
	double t0 = now_sec();
	int rc = CLS_E_FAIL;

	memset(&cut, 0, sizeof cut);
	if (n == 1)
		return sort_on(o, f, d->specs[0], NULL, in, out);
	if (d->planned && f->fmt != CLS_FMT_BIN) {
		msg_info(1, "all: lines are sorted on device %s alone: the host bounds their sort",
			 d->specs[0]);
		return sort_on(o, f, d->specs[0], NULL, in, out);
	}
	jobs = calloc(n, sizeof *jobs);
	tids = calloc(n, sizeof *tids);
	if (!jobs || !tids) {
		msg_errno(ENOMEM, "cannot sort on %zu devices", n);
		goto out;
	}
	for (started = 0; started < n; started++) {
		struct job *j = &jobs[started];
		int err;
		j->o = *o;
		j->o.device = d->specs[started];
		j->o.memory_bytes = o->memory_bytes / n;
		j->o.threads = threads;
		j->f = *f;
		j->f.threads = threads;
		/* A stream's lines parsed ahead are for one sort of all. */
		j->f.ahead = NULL;
		j->gate = &gate;
		j->cut = &cut;
		j->tmp = -1;
		if ((err = pthread_create(&tids[started], NULL, job_main, j))) {
			msg_errno(err, "cannot start a thread for device %s", j->o.device);
			goto out;
		}
	}
	if (d->planned && !share(jobs, n, &gate, o, f, records, &rc)) {
		struct engine *e = jobs[0].eng;

		if (rc)
			goto out;
		/* The first device's engine, taken from its job, which like
		 * the others closes its own. */
		jobs[0].eng = NULL;
		release(&gate, true);
		rc = sort_on(o, f, d->specs[0], e, in, out);
		eng_close(e);
		alone = true;
		goto out;
	}
	if ((rc = cut_input(&cut, f, in, records, n, &ranges)))
		goto out;
	msg_info(1, "%llu bytes cut into %zu key ranges for %zu devices in %.3f s%s",
		 (unsigned long long)in->bytes, ranges, n, now_sec() - t0,
		 cut.sieved ? ", dealt from the input to the devices' staging" : "");
	exact_parts = md_exact(f) && out_seekable(out);
	for (i = 0; i < ranges; i++) {
		if ((rc = open_job(&jobs[i], out, exact_parts, off)))
			goto out;
		jobs[i].opened = true;
		jobs[i].assigned = true;
		jobs[i].r = i;
		jobs[i].bytes = cut_bytes(&cut, i);
		off += jobs[i].bytes;
	}
	t0 = now_sec();
out:
	if (!alone)
		release(&gate, rc != 0);
	for (i = 0; i < started; i++) {
		struct job *j = &jobs[i];
		pthread_join(tids[i], NULL);
		if (rc == 0)
			rc = j->rc;
		if (rc == 0 && j->assigned && !exact_parts)
			rc = md_append(out, j->tmp);
		if (j->assigned)
			msg_info(1, "range %zu on device %s: %llu bytes (%.1f%%), device started in "
				 "%.3f s, range sorted in %.3f s", i, j->o.device,
				 (unsigned long long)j->bytes,
				 in->bytes ? 100.0 * (double)j->bytes / (double)in->bytes : 0.0,
				 j->t_open, j->secs);
	}
	if (rc == 0 && exact_parts)
		rc = out_advance(out, off);
	if (rc == 0 && !alone)
		msg_info(1, "%zu devices sorted their ranges in %.3f s", n, now_sec() - t0);
	for (i = 0; jobs && i < n; i++) {
		/* What a writer not finished holds is dropped (a part's
		 * file is out's, and stays). */
		if (jobs[i].opened)
			out_abort(&jobs[i].w);
		if (jobs[i].tmp >= 0)
			close(jobs[i].tmp);
	}
	free(jobs);
	free(tids);
	cut_free(&cut);
	/* A kv line without a key: sorting on one device names it. */
	if (rc == PART_BAD_LINE)
		return sort_on(o, f, d->specs[0], NULL, in, out);
	return rc;
}
