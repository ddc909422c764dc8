#include "config.h"
#include "streamsort.h"

#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "progress.h"
#include "runs.h"
#include "sortrun.h"
#include "spill.h"
#include "util.h"

/* Bytes of the stream sorted into each run.  Small enough that the last
 * one, sorted after the stream has ended, takes a small share of the
 * time; large enough that a device's work per run (its launches, the
 * waits for its transfers) stays small beside it, and that the merge
 * takes few runs at once.  CLSORT_STREAM_RUN sets it, for tests. */
#define STREAM_RUN ((size_t)64 << 20)
/* Streams that deliver their first run at more bytes a second than this
 * are read whole, then sorted: their runs would be sorted slower than they
 * arrive (records on the GPU machine: about 1.3 GB/s, kv lines 0.6 GB/s;
 * a pipe from a file in the page cache there: 1.7 GB/s), and runs and
 * their merge cost more than one sort after the read.  A slower stream
 * (decompression, the network) hides its runs' sorts: on 16 threads at
 * 400 MB/s, and on 2 at 50-400 MB/s (lines; records up to 1 GB/s).
 * CLSORT_STREAM_RATE sets it, for tests. */
#define STREAM_RATE ((double)(512 << 20))
/* A stream whose first run came at this share of STREAM_RATE or more, but
 * not over it, is looked at again past its second run: a fast pipe on a
 * busy machine may deliver its first run at half its speed (kv lines on
 * the GPU machine, whose parse starts as they arrive: 0.8-1.1 GB/s, once
 * in six under 512 MiB/s and sorted in runs, 1.5x the time).
 * CLSORT_STREAM_NEAR sets it, for tests. */
#define STREAM_NEAR 0.5
/* A slow stream is sorted in runs only where the CPUs (those clsort may
 * run on) spent this share of their time idle or more while it came: runs
 * are sorted in time the stream leaves spare.  A fast pipe on a busy
 * machine leaves none: on 2 cores, where its writer, its reader and the
 * parse of its lines kept them 0-8 % idle, 256 MiB of kv lines after a
 * pause came at 364-531 MB/s in 3 of 5 runs, sorted in runs then in
 * 2.34-2.41 s against 1.67-1.93 s read whole; writers paced at 150-600
 * MB/s left them 22-74 % idle.  CLSORT_STREAM_IDLE sets it, for tests. */
#define STREAM_IDLE 0.25
static size_t run_bytes(void)
{
	const char *s = getenv("CLSORT_STREAM_RUN");
	const unsigned long long n = s && *s ? strtoull(s, NULL, 10) : 0;
	return n >= 64 ? (size_t)n : STREAM_RUN;
}

/* The number the environment variable name sets, else def. */
static double env_number(const char *name, double def)
{
	const char *s = getenv(name);
	return s && *s ? strtod(s, NULL) : def;
}

double stream_run_rate(void)
{
	return env_number("CLSORT_STREAM_RATE", STREAM_RATE);
}

double stream_near_rate(void)
{
	return env_number("CLSORT_STREAM_NEAR", STREAM_NEAR) * stream_run_rate();
}

double stream_idle_share(void)
{
	return env_number("CLSORT_STREAM_IDLE", STREAM_IDLE);
}

size_t stream_run_bytes(const struct cls_opts *o, const struct enc_format *f)
{
	struct dev_spec spec;

	/* Records and lines, whose output gathers them from the input:
	 * gathered run by run, from memory still in the cache, while the
	 * stream arrives.  Bare keys come out of their words, and one sort
	 * after the stream costs less than runs and their merge. */
	if (!f->indexed || o->check != CLS_CHECK_NONE ||
	    o->merge || o->format == CLS_FMT_NPY || o->header || o->nfiles > 1)
		return 0;
	if (!eng_is_host(o->device) &&
	    (dev_parse_spec(o->device, &spec) || spec.kind == DEV_ALL || spec.kind == DEV_LIST))
		return 0;
	return run_bytes();
}

struct sorter {
	const struct cls_opts *o;
	const struct enc_format *f;
	const char *name;
	size_t run;		/* bytes of the stream a run takes */
	struct engine *eng;
	size_t cap;		/* records per run */
	struct enc_batch b;
	struct spl_set spill;
	uint64_t kept;		/* bytes of the runs kept in memory */
	uint64_t records, lines, skipped, skipped_fields;
	size_t runs;
	struct srt_times t;
};

/* How many of the len bytes at p the next run takes: about want, ending
 * at a record's or a line's end; all of them once the stream has ended
 * with no more than want left; 0 when a line goes on past them. */
static size_t cut(const struct enc_format *f, const unsigned char *p, size_t len, size_t want,
		  bool ended)
{
	const unsigned char *e;

	if (ended && len <= want)
		return len;
	if (f->fmt == CLS_FMT_BIN) {
		const size_t n = (len < want ? len : want) / f->rec_size * f->rec_size;
		return n ? n : len >= f->rec_size ? f->rec_size : ended ? len : 0;
	}
	e = memrchr(p, f->eol, len < want ? len : want);
	if (!e && len > want)
		e = memchr(p + want, f->eol, len - want);
	return e ? (size_t)(e - p) + 1 : ended ? len : 0;
}

/* Sort the n bytes at p, the next of the stream, into runs kept. */
static int sort_part(struct sorter *s, const unsigned char *p, size_t n)
{
	struct in_file part = { .name = s->name, .data = p, .size = n, .first_line = s->lines };
	const struct in_set set = { &part, 1, n };
	struct enc_planner pl;
	int planned, rc = 0;

	if (enc_plan_init(&pl, s->f, &set))
		return CLS_E_FAIL;
	s->lines += pl.total;
	while (rc == 0 && (planned = enc_plan_next(&pl, s->cap, &s->b)) != 0) {
		size_t bytes;

		if (planned < 0) {
			rc = CLS_E_FAIL;
			break;
		}
		bytes = runs_kept_bytes(&s->b);
		/* Runs stay in memory within half of --memory (the stream's
		 * unsorted bytes take the other half); the later ones go to
		 * temporary files. */
		if (!s->spill.files && s->kept + bytes > s->o->memory_bytes / 2 &&
		    (rc = spl_to_files(&s->spill, 2 * (s->runs + 1))))
			break;
		rc = runs_keep(&s->spill, s->eng, s->f, &s->b, bytes, &s->t);
		s->records += s->b.n;
		s->skipped += s->b.skipped;
		s->skipped_fields += s->b.skipped_fields;
		if (rc)
			break;
		if (!s->spill.files)
			s->kept += bytes;
		s->runs++;
	}
	enc_plan_free(&pl);
	return rc;
}

/* A bin stream that ends within a record: the message a file of its size
 * gets. */
static int check_size(const struct sorter *s, uint64_t bytes)
{
	struct in_file whole = { .name = s->name, .size = (size_t)bytes };
	const struct in_set set = { &whole, 1, bytes };

	return enc_validate(s->f, &set);
}

/* The engine for runs of about records records, and room for them. */
static int open_engine(struct sorter *s, uint64_t records)
{
	const char *dev = runs_device(s->o, s->f, records);
	struct eng_config ec;
	/* Later parts may hold more lines than the first (shorter ones):
	 * room for half as many again, and for lines of 16 bytes or more. */
	uint64_t want = records > s->run / 16 ? records : s->run / 16;

	want += want / 2 + 1024;

	runs_config(s->o, s->f, dev ? dev : ENG_HOST, &ec);
	if (eng_open(&s->eng, &ec))
		return CLS_E_FAIL;
	if (want > runs_index_limit())
		want = runs_index_limit();
	if (eng_capacity(s->eng, (size_t)want, &s->cap))
		return CLS_E_FAIL;
	if (enc_batch_alloc(s->f, s->cap, &s->b))
		return CLS_E_FAIL;
	msg_info(1, "%s: sorting its runs on %s while it is read, %zu bytes a run", s->name,
		 s->eng->name, s->run);
	return 0;
}

int stream_sort(const struct cls_opts *o, const struct enc_format *f, struct in_file *file,
		struct out_writer *out)
{
	struct in_stream *st = file->stream;
	struct sorter s;
	const unsigned char *p;
	size_t len, n, ask;
	uint64_t bytes;
	bool ended;
	double t0 = now_sec(), t_wait = 0, t_sort = 0, t1, waited;
	int rc;

	memset(&s, 0, sizeof s);
	s.o = o;
	s.f = f;
	s.name = file->name;
	s.run = ask = run_bytes();
	rc = spl_init(&s.spill, f, o->tmpdir, o->memory_bytes, false, 0);
	for (; rc == 0;) {
		t1 = now_sec();
		if ((rc = in_stream_take(st, ask, &p, &len, &ended)))
			break;
		t_wait += now_sec() - t1;
		n = cut(f, p, len, s.run, ended);
		msg_info(3, "stream: %zu bytes held, %zu of them the next part%s", len, n,
			 ended ? ", the last" : "");
		if (n == 0 && !ended) {
			/* A line longer than a run: more of it first. */
			in_stream_done(st, 0);
			ask = len;
			continue;
		}
		ask = s.run;
		t1 = now_sec();
		if (ended && f->fmt == CLS_FMT_BIN && len % f->rec_size)
			rc = check_size(&s, in_stream_bytes(st, NULL));
		if (rc == 0 && !s.eng)
			rc = open_engine(&s, enc_count_records(f, p, n));
		if (rc == 0)
			rc = sort_part(&s, p, n);
		in_stream_done(st, n);
		t_sort += now_sec() - t1;
		if (ended && n == len)
			break;
	}
	bytes = in_stream_bytes(st, &waited);
	if (rc == 0) {
		msg_info(1, "read %llu bytes from %s in %.3f s, its runs sorted meanwhile",
			 (unsigned long long)bytes, file->name, now_sec() - t0);
		/* Mapped where it can be, for the merge's threads to fill. */
		if (runs_maps_output(f, out))
			out_map(out, runs_output_bytes(f, bytes, 1), f->threads, false);
		prog_phase(PROG_MERGE);
		rc = spl_merge(&s.spill, out);
	}
	if (rc == 0 && s.skipped)
		runs_report_skipped(o, s.skipped, s.skipped_fields);
	if (rc == 0) {
		msg_info(1, "%llu records in %zu runs of up to %zu%s; %u merge pass%s",
			 (unsigned long long)s.records, s.runs, s.cap,
			 s.spill.files ? ", the later ones in temporary files" : ", kept in memory",
			 s.spill.merges, s.spill.merges == 1 ? "" : "es");
		msg_info(1, "time: sorting runs %.3f s, waiting for the stream %.3f s, the reader "
			 "waiting for room %.3f s, merge %.3f s", t_sort, t_wait, waited,
			 s.spill.t_merge);
		eng_report(s.eng);
	}
	spl_free(&s.spill);
	enc_batch_free(&s.b);
	eng_close(s.eng);
	return rc;
}
