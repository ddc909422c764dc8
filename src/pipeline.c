#include "config.h"
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "answer.h"
#include "check.h"
#include "device.h"
#include "encode.h"
#include "engine.h"
#include "input.h"
#include "keyahead.h"
#include "lineahead.h"
#include "merge.h"
#include "multidev.h"
#include "npy.h"
#include "output.h"
#include "progress.h"
#include "runs.h"
#include "sendahead.h"
#include "streamsort.h"
#include "tmpfile.h"
#include "util.h"

/* Half the memory available (to this process's cgroup, where it has a
 * limit), at least 64 MiB. */
static uint64_t default_memory(void)
{
	const uint64_t bytes = mem_available() / 2;
	return bytes < ((uint64_t)64 << 20) ? (uint64_t)64 << 20 : bytes;
}

void cls_defaults(struct cls_opts *o)
{
	if (!o->memory_bytes)
		o->memory_bytes = default_memory();
	if (!o->tmpdir) {
		const char *t = getenv("TMPDIR");
		o->tmpdir = t && *t ? t : "/tmp";
	}
}

/* -v: the most memory the sort held at once.  The resident set counts the
 * pages of the mapped inputs and of a mapped -o output that were touched,
 * which the --memory budget leaves out. */
static void report_peak(const struct in_set *in, const struct cls_opts *o)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		msg_info(1, "peak resident memory %llu MiB (budget %llu MiB, beside the mapped "
			 "input of %llu MiB and a mapped output)",
			 (unsigned long long)ru.ru_maxrss >> 10,
			 (unsigned long long)(o->memory_bytes >> 20),
			 (unsigned long long)(in->bytes >> 20));
}

/* npy: the inputs' headers read and cut off, their records made bin
 * records with the key field's type (unless -k names one).  0 or
 * CLS_E_FAIL after a message. */
static int npy_setup(struct in_set *in, const struct cls_opts *o, struct npy_info *npy,
		     struct enc_format *f)
{
	struct cls_opts bin = *o;

	if (npy_open(in, o->field_name, npy))
		return CLS_E_FAIL;
	bin.format = CLS_FMT_BIN;
	bin.record_size = npy->itemsize;
	bin.key_offset = npy->key_off;
	if (!o->key_explicit)
		bin.key = npy->kt;
	else if (key_size(o->key) != key_size(npy->kt)) {
		msg_err("%s: -k %s is %zu bytes wide, the key field %zu", in->files[0].name, o->key->name,
			key_size(o->key), key_size(npy->kt));
		return CLS_E_FAIL;
	}
	msg_info(1, "npy: %zu-byte records, a %s key at offset %zu", npy->itemsize, bin.key->name,
		 npy->key_off);
	return enc_setup(f, &bin);
}

/* --header: cut the first n lines off every input; those of the first
 * are the output's first lines, head[0..*len). */
static void cut_header(const struct enc_format *f, struct in_set *in, uint64_t n,
		       const unsigned char **head, size_t *len)
{
	size_t i;

	*head = NULL;
	*len = 0;
	for (i = 0; i < in->count; i++) {
		struct in_file *file = &in->files[i];
		const unsigned char *p = file->data, *const end = p + file->size;
		uint64_t k;

		for (k = 0; k < n && p < end; k++) {
			const unsigned char *e = memchr(p, f->eol, (size_t)(end - p));
			p = e ? e + 1 : end;
		}
		if (i == 0) {
			*head = file->data;
			*len = (size_t)(p - file->data);
		}
		file->first_line = k;
		in->bytes -= (uint64_t)(p - file->data);
		file->size -= (size_t)(p - file->data);
		file->data = p;
	}
}

/* Bytes of an input's start looked at to tell text from binary keys. */
#define TEXT_PROBE 4096

/* One warning where the first input with data looks like text lines (its
 * first TEXT_PROBE bytes printable, a newline among them) but is sorted
 * as binary keys because nothing named a format. */
static void warn_if_text(const struct cls_opts *o, const struct in_set *in)
{
	size_t i, k, n;

	if (!o->bare_default)
		return;
	for (i = 0; i < in->count && in->files[i].size == 0; i++)
		;
	if (i == in->count)
		return;
	n = in->files[i].size < TEXT_PROBE ? in->files[i].size : TEXT_PROBE;
	for (k = 0; k < n; k++) {
		const unsigned char c = in->files[i].data[k];
		if ((c < 0x20 || c > 0x7e) && c != '\n' && c != '\t' && c != '\r')
			return;
	}
	if (memchr(in->files[i].data, '\n', n))
		msg_err("warning: %s: looks like text lines, but is sorted as binary %s keys (for "
			"lines: -f kv with a numeric key field, e.g. -t, -F 2, or -k str)",
			in->files[i].name, o->key->name);
}

/* cls_open_input, watch told of a large stream. */
static int open_input(const struct cls_opts *o, struct cls_input *ci, const struct in_watch *watch)
{
	struct in_watch w;
	double t0 = now_sec();
	int rc;

	memset(ci, 0, sizeof *ci);
	if (o->format != CLS_FMT_NPY && enc_setup(&ci->f, o))
		return CLS_E_FAIL;
	if (watch) {
		w = *watch;
		w.run_bytes = stream_run_bytes(o, &ci->f);
		w.run_rate = stream_run_rate();
		w.near_rate = stream_near_rate();
		w.idle_share = stream_idle_share();
		watch = &w;
	}
	if (in_open(&ci->in, o->files, o->nfiles, o->memory_bytes, o->tmpdir, watch))
		return CLS_E_FAIL;
	ci->opened = true;
	/* stream_sort says so, naming where the runs are sorted. */
	if (ci->in.files[0].stream)
		return 0;
	warn_if_text(o, &ci->in);
	rc = o->format == CLS_FMT_NPY ? npy_setup(&ci->in, o, &ci->npy, &ci->f) : 0;
	if (rc == 0)
		rc = enc_validate(&ci->f, &ci->in);
	if (rc) {
		if (watch && watch->leave)
			watch->leave(watch->ctx);
		cls_close_input(ci);
		return rc;
	}
	if (o->header)
		cut_header(&ci->f, &ci->in, o->header, &ci->head, &ci->head_len);
	msg_info(1, "read %llu bytes from %zu input%s in %.3f s", (unsigned long long)ci->in.bytes,
		 ci->in.count, ci->in.count == 1 ? "" : "s", now_sec() - t0);
	return 0;
}

int cls_open_input(const struct cls_opts *o, struct cls_input *ci)
{
	return open_input(o, ci, NULL);
}

/* A stream has delivered its first IN_WATCH_BYTES: where the sort of a
 * stream of that many records would already run on an OpenCL device
 * (runs_stream_device: judged as twice as many, the device's start hidden
 * by the rest of the stream), the device is opened while the rest is read
 * (opening NVIDIA's takes a few tenths of a second), the sort taking it
 * once the input is complete; and kv lines are parsed as they come
 * (lineahead.h), bare keys sorted on the host counted (keyahead.h).
 * Where the host would sort that many, the choice is looked at again each
 * time the stream has grown by an eighth (a look is a few microseconds):
 * auto tries the host on inputs its rates do not cover up to a size
 * (threshold.h), and a stream past it would otherwise open its device only
 * after its last byte; looks at each doubling missed streams of up to
 * twice that size. */
#define LOOK_STEP(bytes) ((bytes) + (bytes) / 8)

struct ahead {
	const struct cls_opts *o;
	const struct enc_format *f;
	struct out_writer *out;
	const unsigned char *data;	/* the first stream's bytes */
	struct line_ahead *lines;
	struct key_ahead *keys;
	unsigned streams;	/* streams that passed IN_WATCH_BYTES */
	uint64_t first_bytes, first_records;	/* at IN_WATCH_BYTES */
	uint64_t look_at;	/* the length of the next look; 0: none */
	double t_first;		/* when the first stream passed IN_WATCH_BYTES */
};

/* The device spec names, opened for the sort while the stream is read,
 * and the first stream's words (and kv lines' text) sent to it as they
 * come, where no header is cut off its start; the keys no longer counted
 * for the host's sort. */
static void open_device(const struct ahead *a, const char *spec)
{
	struct eng_config c;

	if (a->streams == 1 && !a->o->header && sa_applies(a->f))
		sa_begin(a->f, a->data, a->first_bytes);
	runs_config(a->o, a->f, spec, &c);
	eng_open_ahead(&c);
	ka_stop(a->keys);
}

static void open_ahead(void *ctx, const unsigned char *data, size_t len)
{
	struct ahead *a = ctx;
	const uint64_t records = enc_count_records(a->f, data, len);
	const char *spec = runs_stream_device(a->o, a->f, records, 0);

	if (!a->streams++) {
		a->data = data;
		a->first_bytes = len;
	}
	if (spec)
		open_device(a, spec);
	/* A later stream: the input is several pieces, which no run holds
	 * whole as one stream's; and the later stream's lengths would be
	 * taken for the first's. */
	if (a->streams > 1) {
		la_stop(a->lines);
		ka_stop(a->keys);
		sa_end(false);
		a->look_at = 0;
		return;
	}
	a->first_records = records;
	a->t_first = now_sec();
	a->look_at = spec ? 0 : LOOK_STEP((uint64_t)len);
	if (!a->o->header && la_applies(a->f, true))
		a->lines = la_start(a->f, data, len, 0, runs_lines_ahead(a->o, a->f), sa_parsed);
	if (!spec && ka_applies(a->f))
		a->keys = ka_start(a->f, data, len, KA_SEG);
}

/* The stream has delivered bytes: where the sort will map the output
 * (and no header line goes before it), its room is taken meanwhile; the
 * device looked at again (its records taken as the first bytes' were:
 * counting lines would slow the reader). */
static void stream_grew(void *ctx, uint64_t bytes)
{
	struct ahead *a = ctx;

	if (a->look_at && bytes >= a->look_at) {
		const uint64_t records =
			(uint64_t)((double)a->first_records * ((double)bytes / (double)a->first_bytes));
		const char *spec = runs_stream_device(a->o, a->f, records, now_sec() - a->t_first);

		a->look_at = spec ? 0 : LOOK_STEP(bytes);
		if (spec)
			open_device(a, spec);
	}
	if (!a->o->header && runs_grows_output(a->f, a->out))
		out_grow(a->out, runs_output_bytes(a->f, bytes, 1), a->f->threads);
	la_grow(a->lines, bytes);
	ka_grow(a->keys, bytes);
	sa_grow(bytes);
}

static void stream_leaves(void *ctx)
{
	const struct ahead *a = ctx;

	la_stop(a->lines);
	ka_stop(a->keys);
	sa_end(false);
}

void cls_close_input(struct cls_input *ci)
{
	npy_free(&ci->npy);
	if (ci->opened)
		in_close(&ci->in);
	ci->opened = false;
}

/* Whether the .npy header can only be written after the sort: -u drops
 * records, and the header says how many there are. */
static bool npy_counted(const struct cls_opts *o)
{
	return o->format == CLS_FMT_NPY && o->unique;
}

int cls_write_head(const struct cls_opts *o, const struct cls_input *ci, struct out_writer *out)
{
	int rc = 0;

	if (o->format == CLS_FMT_NPY && !npy_counted(o))
		rc = npy_write_header(out, &ci->npy, ci->npy.records);
	if (rc == 0 && ci->head_len) {
		rc = out_write(out, ci->head, ci->head_len);
		/* A header without its line end gets one, as every line does. */
		if (rc == 0 && ci->head[ci->head_len - 1] != (unsigned char)ci->f.eol)
			rc = out_write(out, &ci->f.eol, 1);
	}
	return rc;
}

static int sort_or_merge(const struct cls_opts *o, struct md_devices *devs, struct cls_input *ci,
			 struct out_writer *out)
{
	return o->merge ? mrg_inputs(&ci->f, &ci->in, out) : md_sort(devs, o, &ci->f, &ci->in, out);
}

/* npy_counted: the records go to a temporary file, then out gets the
 * header with their count and the records. */
static int sort_counted(const struct cls_opts *o, struct md_devices *devs, struct cls_input *ci,
			struct out_writer *out)
{
	struct out_writer body;
	const size_t chunk = (size_t)8 << 20;
	unsigned char *buf = NULL;
	uint64_t at = 0;
	int fd = tmp_create(o->tmpdir), rc;

	if (fd < 0)
		return CLS_E_FAIL;
	rc = out_open_fd(&body, fd, "a temporary file");
	if (rc == 0) {
		rc = sort_or_merge(o, devs, ci, &body);
		if (rc == 0)
			rc = out_finish(&body);
		else
			out_abort(&body);
	}
	if (rc == 0)
		rc = npy_write_header(out, &ci->npy, body.total / ci->npy.itemsize);
	if (rc == 0 && !(buf = malloc(chunk))) {
		msg_errno(ENOMEM, "cannot copy the sorted records");
		rc = CLS_E_FAIL;
	}
	if (rc == 0 && lseek(fd, 0, SEEK_SET) < 0) {
		msg_errno(errno, "cannot read back a temporary file in %s", o->tmpdir);
		rc = CLS_E_FAIL;
	}
	while (rc == 0 && at < body.total) {
		const size_t n = body.total - at < chunk ? (size_t)(body.total - at) : chunk;
		if (read_full(fd, buf, n) != (ssize_t)n) {
			msg_errno(errno ? errno : EIO, "cannot read back a temporary file in %s",
				  o->tmpdir);
			rc = CLS_E_FAIL;
		} else {
			rc = out_write(out, buf, n);
			at += n;
		}
	}
	free(buf);
	close(fd);
	return rc;
}

int cls_run(const struct cls_opts *o)
{
	struct cls_input ci;
	struct out_writer out;
	struct md_devices devs = { NULL, 0, false };
	struct ahead ahead = { .o = o, .f = &ci.f, .out = &out };
	const struct in_watch watch = { .large = open_ahead, .grow = stream_grew,
					.leave = stream_leaves, .ctx = &ahead };
	const double t0 = now_sec();
	bool completed = false;
	int rc;

	util_verbose = o->verbose;
	if (answer_awaited())
		eng_defer_closes();
	tmp_install_signals();
	prog_start(o->progress && o->check == CLS_CHECK_NONE);
	memset(&ci, 0, sizeof ci);
	/* The output before the input, for a stream's output to take its
	 * room while the stream arrives; an error in the input (or a device
	 * spec that names none) leaves none of it behind. */
	if (o->check == CLS_CHECK_NONE && (rc = out_open_final(&out, o->output, !o->no_sync)))
		goto out;
	/* Not for npy, whose format is known after its header. */
	rc = open_input(o, &ci, o->check == CLS_CHECK_NONE && !o->merge &&
					o->format != CLS_FMT_NPY ? &watch : NULL);
	if (o->check != CLS_CHECK_NONE) {
		if (rc == 0) {
			prog_total(ci.in.bytes);
			rc = check_sorted(&ci.f, &ci.in, o->check == CLS_CHECK_QUIET);
		}
		goto out;
	}
	/* A stream read whole: what was sent of it waits for its sort. */
	sa_end(rc == 0 && !ci.in.files[0].stream);
	if (rc == 0 && !ci.in.files[0].stream) {
		ci.f.ahead = ahead.lines;
		ci.f.key_ahead = ahead.keys;
	}
	if (rc == 0 && !o->merge)
		rc = md_devices(&devs, o);
	if (rc == 0) {
		prog_total(ci.in.bytes);
		prog_phase(o->merge ? PROG_MERGE : PROG_SORT);
		rc = cls_write_head(o, &ci, &out);
	}
	if (rc) {
		out_abort(&out);
		goto out;
	}
	if (ci.in.files[0].stream)
		rc = stream_sort(o, &ci.f, &ci.in.files[0], &out);
	else if (npy_counted(o))
		rc = sort_counted(o, &devs, &ci, &out);
	else
		rc = sort_or_merge(o, &devs, &ci, &out);
	if (rc == 0) {
		rc = out_complete(&out);
		completed = rc == 0;
		prog_end();
		msg_info(1, "total %.3f s", now_sec() - t0);
		report_peak(&ci.in, o);
		if (rc == 0)
			rc = answer_now();
	} else {
		out_abort(&out);
	}
out:
	if (completed)
		out_release(&out);
	eng_close_deferred();
	md_devices_free(&devs);
	dev_ahead_done();
	prog_end();
	la_free(ahead.lines);
	ka_free(ahead.keys);
	cls_close_input(&ci);
	return rc;
}
