#include "config.h"
#include "multidev.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "partition.h"
#include "runs.h"
#include "tmpfile.h"
#include "util.h"

/* Records sampled per range: the ranges' sizes then vary by about
 * 1/sqrt(SAMPLES) of a range, which the devices wait for. */
#define SAMPLES 16384

int md_devices(struct md_devices *d, const struct cls_opts *o)
{
	return dev_expand(o->device, &d->specs, &d->count);
}

void md_devices_free(struct md_devices *d)
{
	dev_free_specs(d->specs, d->count);
	d->specs = NULL;
	d->count = 0;
}

int md_sort_on(const struct cls_opts *o, const struct enc_format *f, const char *device,
	       unsigned threads, uint64_t memory, const struct in_set *range,
	       struct out_writer *w)
{
	struct cls_opts one = *o;
	struct enc_format ff = *f;

	one.device = device;
	one.memory_bytes = memory;
	one.threads = threads;
	ff.threads = threads;
	return runs_sort(&one, &ff, range, w);
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

/* One device's range and what became of it. */
struct job {
	const struct cls_opts *o;
	const struct enc_format *f;
	const char *device;
	unsigned threads;
	uint64_t memory;
	const struct in_set *range;
	struct out_writer w;	/* a part of the output, or a temporary file */
	int tmp;		/* that file, or -1 */
	bool opened;
	double secs;
	int rc;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	const double t0 = now_sec();

	j->rc = md_sort_on(j->o, j->f, j->device, j->threads, j->memory, j->range, &j->w);
	if (j->rc == 0)
		j->rc = out_finish(&j->w);
	j->secs = now_sec() - t0;
	return NULL;
}

/* Open job j's writer: at its place in out when the ranges' outputs have
 * known sizes and out can be written at offsets, else a temporary file
 * appended to out afterwards. */
static int open_job(struct job *j, struct out_writer *out, bool parts, uint64_t off)
{
	if (parts)
		return out_open_part(&j->w, out, off);
	j->tmp = tmp_create(j->o->tmpdir);
	if (j->tmp < 0)
		return CLS_E_FAIL;
	return out_open_fd(&j->w, j->tmp, "a temporary file");
}

int md_sort(const struct md_devices *d, const struct cls_opts *o, const struct enc_format *f,
	    const struct in_set *in, struct out_writer *out)
{
	const size_t n = d->count;
	const unsigned threads = f->threads / n ? f->threads / (unsigned)n : 1;
	const uint64_t records = f->fmt == CLS_FMT_BIN ? in->bytes / f->rec_size : in->bytes;
	struct part_set parts;
	struct job *jobs = NULL;
	pthread_t *tids = NULL;
	bool exact_parts;
	uint64_t off = 0;
	size_t i, started = 0;
	double t0 = now_sec();
	int rc;

	if (n == 1)
		return md_sort_on(o, f, d->specs[0], f->threads, o->memory_bytes, in, out);
	rc = part_split_n(f, in, records, n, SAMPLES, md_whole_keys(f), &parts);
	/* A kv line without a key: sorting on one device names it. */
	if (rc == PART_BAD_LINE)
		return md_sort_on(o, f, d->specs[0], f->threads, o->memory_bytes, in, out);
	if (rc)
		return rc;
	msg_info(1, "%llu bytes cut into %zu key ranges for %zu devices in %.3f s",
		 (unsigned long long)in->bytes, parts.count, n, now_sec() - t0);
	/* Every record is in the ranges now. */
	for (i = 0; i < in->count; i++)
		in_release(&in->files[i], 0, in->files[i].size);
	exact_parts = md_exact(f) && out_seekable(out);
	jobs = calloc(parts.count, sizeof *jobs);
	tids = calloc(parts.count, sizeof *tids);
	if (!jobs || !tids) {
		msg_errno(ENOMEM, "cannot sort on %zu devices", n);
		rc = CLS_E_FAIL;
		goto out;
	}
	for (i = 0; i < parts.count; i++) {
		struct job *j = &jobs[i];
		j->o = o;
		j->f = f;
		j->device = d->specs[i % n];
		j->threads = threads;
		j->memory = o->memory_bytes / n;
		j->range = &parts.ranges[i];
		j->tmp = -1;
		if ((rc = open_job(j, out, exact_parts, off)))
			goto out;
		j->opened = true;
		off += parts.ranges[i].bytes;
	}
	t0 = now_sec();
	for (started = 0; started < parts.count; started++) {
		const int err = pthread_create(&tids[started], NULL, job_main, &jobs[started]);
		if (err) {
			msg_errno(err, "cannot start a thread for device %s", jobs[started].device);
			rc = CLS_E_FAIL;
			break;
		}
	}
	for (i = 0; i < started; i++) {
		const struct job *j = &jobs[i];
		pthread_join(tids[i], NULL);
		if (rc == 0)
			rc = j->rc;
		if (rc == 0 && !exact_parts)
			rc = md_append(out, j->tmp);
		msg_info(1, "range %zu on device %s: %llu bytes (%.1f%%) sorted in %.3f s", i,
			 j->device, (unsigned long long)j->range->bytes,
			 in->bytes ? 100.0 * (double)j->range->bytes / (double)in->bytes : 0.0,
			 j->secs);
	}
	if (rc == 0 && exact_parts)
		rc = out_advance(out, off);
	if (rc == 0)
		msg_info(1, "%zu devices sorted their ranges in %.3f s", n, now_sec() - t0);
out:
	for (i = 0; jobs && i < parts.count; i++) {
		/* What a writer not finished holds is dropped (a part's
		 * file is out's, and stays). */
		if (jobs[i].opened)
			out_abort(&jobs[i].w);
		if (jobs[i].tmp >= 0)
			close(jobs[i].tmp);
	}
	free(jobs);
	free(tids);
	part_free(&parts);
	return rc;
}
