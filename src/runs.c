#include "config.h"
#include "runs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "engine.h"
#include "lineahead.h"
#include "mergecut.h"
#include "partition.h"
#include "progress.h"
#include "sortrun.h"
#include "spill.h"
#include "threshold.h"
#include "util.h"

/* Inputs that would take more key ranges than this are sorted in runs and
 * merged instead: each range costs a pass of its own on the device. */
#define MAX_RANGES 4096

/* Bytes per record and key that composed keys (kvkey.h) are reckoned to
 * take beside their line: a number's 8, or a short string's escaped bytes. */
#define KEY_BYTES 16
/* Merging runs on the device: samples per part and run, so that the parts'
 * sizes are within a few per cent of what the splitters aim at. */
#define RESORT_SAMPLES 32

struct sorter {
	const struct cls_opts *o;
	const struct enc_format *f;
	struct engine *eng;
	size_t cap;		/* records per run */
	struct spl_set spill;
	struct srt_times t;
	size_t ranges;		/* key ranges the input was cut into, or 0... */
	bool in_place;		/* ...laid out in the output's place */
	size_t resorted;	/* parts of runs merged by sorting them again */
	double t_part;		/* cutting it */
};

/* What the sorts of one input (or of every range of it) add up to. */
struct tally {
	uint64_t records, skipped, skipped_fields;
	size_t runs;
};

void runs_report_skipped(const struct cls_opts *o, uint64_t skipped, uint64_t fields)
{
	const uint64_t keys = skipped - fields;
	char a[96] = "", b[96] = "";

	if (keys)
		snprintf(a, sizeof a, "%llu with a bad key", (unsigned long long)keys);
	if (fields)
		snprintf(b, sizeof b, "%llu with fewer than %u fields", (unsigned long long)fields,
			 o->field);
	msg_err("skipped %llu line%s: %s%s%s%s", (unsigned long long)skipped,
		skipped == 1 ? "" : "s", a, keys && fields ? ", " : "", b,
		util_verbose ? "" : " (-v names the first few)");
}

/* Auto's choice between the host engine and the auto OpenCL device. */
struct choice {
	const char *device;	/* what eng_open is given */
	bool measure;		/* by the rates, which this sort then refines */
	char slot[16];
	struct thr_rates rates;
};

static void start_text(char *buf, size_t size, double start, bool ahead)
{
	if (start > 0)
		snprintf(buf, size, "%.3f s to start%s", start,
			 ahead ? " (beside a stream's read)" : "");
	else
		snprintf(buf, size, "start not measured");
}

static void rate_text(char *buf, size_t size, double rate, double at)
{
	if (rate > 0)
		snprintf(buf, size, "%.3g ns per record (measured up to %.0f records)", rate * 1e9,
			 at);
	else
		snprintf(buf, size, "not measured");
}

/* Whether auto's choice by r for total records is the host. */
static bool by_rates(const struct thr_rates *r, uint64_t total, double elapsed)
{
	return elapsed >= 0 ? thr_stream_host_wins(r, total, elapsed) : thr_host_wins(r, total);
}

/* What auto's device is, for r: whether it is a CPU, into r->cpu, and
 * where r's device rates are of another device (a driver registered
 * since they were measured), r's device unmeasured.  As the cache says
 * where it was found with the drivers as they are; else found now where
 * it matters (an input big enough to time, and r's device measured or
 * r's choice trying it), and kept.  False where it was looked for, there
 * is none and r's choice was the device (the host sorts: a warning says
 * why, once).  tell: -vv says where r's rates are set aside (not at each
 * look at a stream). */
static bool auto_device(struct thr_rates *r, uint64_t total, double elapsed, bool tell)
{
	char name[sizeof r->dev], stamp[THR_STAMP_BYTES], why[512];
	bool cpu;

	dev_drivers_stamp(stamp, sizeof stamp);
	if (!thr_load_auto(stamp, name, sizeof name, &cpu)) {
		if (total < THR_MEASURE_MIN || (!r->dev[0] && by_rates(r, total, elapsed)))
			return true;
		if (dev_auto_probe(name, sizeof name, &cpu, why, sizeof why)) {
			static atomic_bool warned;
			if (by_rates(r, total, elapsed))
				return true;
			/* Once, where the first choice wanted it. */
			if (!atomic_exchange(&warned, true))
				msg_err("warning: %s; sorting on the host", why);
			return false;
		}
		msg_info(2, "auto: its device is %s, %s", name, cpu ? "a CPU" : "not a CPU");
		thr_store_auto(stamp, name, cpu);
	}
	if (r->dev[0] && strcmp(name, r->dev)) {
		if (tell)
			msg_info(2, "auto: the device rates are of %s, not of its device: not taken",
				 r->dev);
		r->start = r->device = r->device_at = 0;
		r->start_ahead = false;
		snprintf(r->dev, sizeof r->dev, "%s", name);
	}
	r->cpu = cpu;
	return true;
}

/* The engine for total records: the one -d names; for auto, the host up
 * to a threshold when one is set, else the quicker of the host and the
 * device by the rates measured; told (-v) when tell.  elapsed >= 0: a
 * stream looked at while it arrives, elapsed seconds after its first look
 * (thr_stream_host_wins); else the sort itself, which takes a device
 * opened ahead for it by those looks (the host, where it failed to open). */
static void choose(const struct cls_opts *o, const struct enc_format *f, uint64_t total,
		   struct choice *c, bool tell, double elapsed)
{
	struct dev_spec spec;
	char host[128], dev[128], start[64];
	bool host_wins;

	memset(c, 0, sizeof *c);
	c->device = o->device;
	if (eng_is_host(o->device) || dev_parse_spec(o->device, &spec) || spec.kind != DEV_AUTO)
		return;
	if (o->host_max_set) {
		if (tell)
			msg_info(2, "host threshold: %llu records, as set",
				 (unsigned long long)o->host_max);
		host_wins = total <= o->host_max;
	} else {
		thr_slot(c->slot, sizeof c->slot, f->fmt, f->indexed, f->kind);
		thr_load(c->slot, &c->rates);
		c->measure = true;
		if (!auto_device(&c->rates, total, elapsed, tell)) {
			host_wins = true;
		} else if (elapsed >= 0) {
			host_wins = thr_stream_host_wins(&c->rates, total, elapsed);
		} else {
			host_wins = thr_host_wins(&c->rates, total);
			if (host_wins && dev_ahead_opened()) {
				host_wins = false;
				if (tell)
					msg_info(2, "auto: the device opened while the stream "
						    "arrived, its start spent");
			} else if (host_wins && dev_ahead_failure()) {
				msg_err("warning: %s; sorting on the host", dev_ahead_failure());
			}
		}
		if (tell) {
			rate_text(host, sizeof host, c->rates.host, c->rates.host_at);
			rate_text(dev, sizeof dev, c->rates.device, c->rates.device_at);
			start_text(start, sizeof start, c->rates.start, c->rates.start_ahead);
			msg_info(1, "auto, %s: host %s; device %s%s%s, %s", c->slot, host,
				 c->rates.dev[0] ? c->rates.dev : "", c->rates.dev[0] ? ": " : "",
				 start, dev);
		}
	}
	if (host_wins)
		c->device = ENG_HOST;
}

static const char *device_for(const struct cls_opts *o, const struct enc_format *f,
			      uint64_t records, double elapsed)
{
	struct dev_spec spec;
	struct choice c;

	if (eng_is_host(o->device) || dev_parse_spec(o->device, &spec) || spec.kind == DEV_ALL ||
	    spec.kind == DEV_LIST)
		return NULL;
	choose(o, f, records, &c, false, elapsed);
	return eng_is_host(c.device) ? NULL : c.device;
}

const char *runs_device(const struct cls_opts *o, const struct enc_format *f, uint64_t records)
{
	return device_for(o, f, records, -1);
}

const char *runs_stream_device(const struct cls_opts *o, const struct enc_format *f,
			       uint64_t records, double elapsed)
{
	return device_for(o, f, records, elapsed > 0 ? elapsed : 0);
}

/* Fold this sort into the rates auto chose by: the work of sorting
 * records records, and for the device its start (open, buffers, release,
 * with what of it ran while the input was read) but for what the next
 * start will not repeat.  work leaves out the ordering of keys tied on
 * their words and -u, which the host does the same after either engine
 * and whose cost is the data's (string keys sharing 5 bytes or 50), not
 * the engine's: with it in, a slot's rates were those of whichever inputs
 * each side happened to be measured on. */
/* The share of the CPUs other work may take while a rate is measured:
 * THR_OTHERS_MAX, or CLSORT_OTHERS_MAX (test suites whose sorts run
 * beside others', as make -j check runs them, and measure rates all the
 * same). */
static double others_max(void)
{
	const char *s = getenv("CLSORT_OTHERS_MAX");
	char *end;
	const double v = s && *s ? strtod(s, &end) : 0;

	return s && *s && !*end && v >= 0 ? v : THR_OTHERS_MAX;
}

static void measure(struct choice *c, const struct engine *e, const struct enc_format *f,
		    uint64_t records, double start, double work, double others)
{
	struct thr_rates *r = &c->rates;
	const unsigned all = cpu_count();
	char text[128];

	/* A sort that shared the CPUs with other work measures that work
	 * too: a host rate taken so (121 ns a kv line on 2 cores, 25-50 on
	 * their own) had auto take PoCL at 2.7 times the time from then on,
	 * the host never tried again to mend it. */
	if (others > others_max()) {
		if (records >= THR_MEASURE_MIN)
			msg_info(1, "rates of %s on %s: not kept, other work took %.0f%% of the CPUs",
				 c->slot, e->host ? "the host" : e->name, 100 * others);
		return;
	}
	if (e->host) {
		/* The rates are of sorts on every thread: one held to fewer
		 * (--parallel) would make the host look slower to the next
		 * choices, which take every thread. */
		if (f->threads < all) {
			if (records >= THR_MEASURE_MIN)
				msg_info(1, "rates of %s on the host: not kept, a sort on %u of "
					    "%u threads", c->slot, f->threads, all);
			return;
		}
		thr_measure(&r->host, &r->host_at, records, work);
		rate_text(text, sizeof text, r->host, r->host_at);
	} else {
		if (records < THR_MEASURE_MIN)
			return;
		/* Another device than the one measured: its rates start afresh,
		 * and what the cache says of auto's device is found again. */
		if (strcmp(r->dev, e->name)) {
			char name[sizeof r->dev], stamp[THR_STAMP_BYTES];
			bool cpu;
			r->start = r->device = r->device_at = 0;
			r->start_ahead = false;
			snprintf(r->dev, sizeof r->dev, "%s", e->name);
			dev_drivers_stamp(stamp, sizeof stamp);
			if (thr_load_auto(stamp, name, sizeof name, &cpu) && strcmp(name, e->name))
				thr_store_auto(stamp, NULL, false);
		}
		/* The least start seen: what comes on top is not the device's.
		 * Not from a sort that built the kernels, whose first use of
		 * the driver costs more than the build (a second on a fresh
		 * GPU machine): the next sort measures it.  One measured
		 * beside a stream's read (opened ahead) shared the CPUs with
		 * it, and gives way to the first measured on its own. */
		start += e->t_ahead;
		if (e->t_once == 0 && start > 0) {
			const bool ahead = e->t_ahead > 0;
			if (r->start <= 0 || start < r->start || (r->start_ahead && !ahead)) {
				r->start_ahead = ahead && (r->start <= 0 || r->start_ahead);
				r->start = start;
			}
		}
		thr_measure(&r->device, &r->device_at, records, work - e->t_wait);
		rate_text(text, sizeof text, r->device, r->device_at);
	}
	if (records < THR_MEASURE_MIN)
		return;
	thr_store(c->slot, r);
	if (e->host)
		msg_info(1, "rates of %s on the host: %s", c->slot, text);
	else {
		char st[64];
		start_text(st, sizeof st, r->start, r->start_ahead);
		msg_info(1, "rates of %s on %s: %s, %s", c->slot, e->name, st, text);
	}
}

/* The host engine maps an output of HOST_MAP_BYTES or more where it has
 * HOST_MAP_THREADS threads or more (a stream's output takes its room while
 * the stream arrives).  On 16 threads, 10^7 paths (490 MB of lines) were
 * written in 0.27-0.30 s through write(2), in 0.10-0.13 s gathered into a
 * mapping.  On 2 threads, 256 MiB: kv lines through a pipe 0.745 -> 0.667
 * s, 16-byte records from a file 0.33 -> 0.29 s (0.46 -> 0.28 s to ext4),
 * u32 keys through a pipe the same; on one thread no faster (u32 keys
 * through a pipe 0.77 -> 0.86 s). */
#define HOST_MAP_THREADS 2
#define HOST_MAP_BYTES ((uint64_t)16 << 20)

uint64_t runs_output_bytes(const struct enc_format *f, uint64_t bytes, size_t inputs)
{
	/* bin records come out as they went in; kv lines take at most the
	 * input's bytes and a line end for each input (its last line may
	 * lack one). */
	return f->fmt == CLS_FMT_BIN ? bytes : f->fmt == CLS_FMT_KV ? bytes + inputs : 0;
}

bool runs_maps_output(const struct enc_format *f, const struct out_writer *out)
{
	/* A whole output (not a part of another's file) is cut to what was
	 * written: kv lines may come out shorter, -u drops records. */
	return (f->fmt == CLS_FMT_KV && !out->part) || (f->fmt == CLS_FMT_BIN && !f->unique);
}

bool runs_grows_output(const struct enc_format *f, const struct out_writer *out)
{
	return runs_maps_output(f, out) && f->threads >= HOST_MAP_THREADS;
}

uint64_t runs_index_limit(void)
{
	const char *s = getenv("CLSORT_INDEX_BITS");
	const unsigned long bits = s && *s ? strtoul(s, NULL, 10) : 32;
	return (uint64_t)1 << (bits >= 4 && bits < 32 ? bits : 32);
}

/* --- merge on the device ---------------------------------------------------
 * Runs in memory are merged on the device, part by part: the runs are cut
 * by key into parts that each fit a run (as the parallel merge cuts them),
 * and each part, the runs' pieces taken in run order, goes through the
 * device straight into the output.  There records (bin) are merged from
 * their sorted pieces in log2 k passes, which takes room for the part twice
 * (parts of half a run); lines are sorted again.  Equal keys share a part
 * and keep their run order, so the result stays stable.  The host only
 * encodes and writes, as for one run; a part that does not fit a run (many
 * equal keys) is merged on the host. */

/* How an input larger than a run is sorted, where its copy fits in memory:
 * cut into key ranges (records and lines, whose output gathers records by
 * index: a second pass over the device would gather them twice; and
 * everything on the host engine, whose sorts take several passes where
 * cutting ranges takes one), or in runs then merged on the device (bare
 * keys, which the partition's pass on the host costs more than a second
 * pass on the device).  For tests and measurements CLSORT_MERGE_RUNS
 * chooses: "ranges", "device" (runs merged on the device) or "host" (runs
 * merged on the host). */
static bool cut_ranges(const struct enc_format *f, const struct engine *e)
{
	const char *how = getenv("CLSORT_MERGE_RUNS");
	return how ? strcmp(how, "ranges") == 0 : f->indexed || e->host;
}

/* Records of a part of the merge on the device: a run's worth, or half of
 * one for records the engine merges (eng_merge), which it does where it
 * holds the part twice. */
static size_t part_cap(const struct enc_format *f, const struct engine *e, size_t cap)
{
	return f->fmt == CLS_FMT_BIN && e->ops->merge && cap >= 2 ? cap / 2 : cap;
}

/* The cut points of a merge on the device are runs times parts, both about
 * records over a run: with many runs (a run far smaller than the input)
 * the host merges instead.  So does the host engine (a merge is one pass
 * where its sort takes several), and so it does for string keys, cut in
 * ranges of whole keys on every thread: there a merge reads each line
 * once, where the device would parse the lines and order their ties
 * again.  CLSORT_MERGE_RUNS=device or host decides instead. */
#define RESORT_MAX_CUTS ((size_t)1 << 16)

static bool merge_on_device(const struct enc_format *f, const struct engine *e, size_t runs,
			    uint64_t records, size_t cap)
{
	const char *how = getenv("CLSORT_MERGE_RUNS");
	return (how ? strcmp(how, "host") != 0 : !e->host && !f->str) &&
	       (double)runs * (double)part_count(records, part_cap(f, e, cap)) <=
		       (double)RESORT_MAX_CUTS;
}

static int resort_runs(struct sorter *s, const struct mrg_run *runs, size_t k, uint64_t records,
		       struct enc_batch *b, struct out_writer *out)
{
	const struct enc_format *f = s->f;
	const size_t parts = part_count(records, part_cap(f, s->eng, s->cap));
	size_t *cuts = calloc((parts + 1) * k, sizeof *cuts);
	size_t *bounds = calloc(k + 1, sizeof *bounds);
	struct in_file *files = calloc(k, sizeof *files);
	struct mrg_run *pieces = calloc(k, sizeof *pieces);
	size_t total = 0, p, r, on_host = 0;
	double t1, t2;
	int rc = CLS_E_FAIL;

	if (!cuts || !bounds || !files || !pieces) {
		msg_errno(ENOMEM, "cannot merge runs");
		goto out;
	}
	for (r = 0; r < k; r++)
		total += runs[r].len;
	if (mrg_cut(f, runs, k, parts, RESORT_SAMPLES, total, cuts))
		goto out;
	for (p = 0; p < parts; p++) {
		struct in_set set = { files, 0, 0 };
		struct enc_planner pl;
		for (r = 0; r < k; r++) {
			const size_t a = cuts[p * k + r], e = cuts[(p + 1) * k + r];
			pieces[r].data = runs[r].data + a;
			pieces[r].len = e - a;
			if (a == e)
				continue;
			memset(&files[set.count], 0, sizeof files[0]);
			files[set.count].name = "a sorted run";
			files[set.count].data = runs[r].data + a;
			files[set.count].size = e - a;
			set.count++;
			set.bytes += e - a;
			/* bin records: the pieces' bounds in records. */
			if (f->fmt == CLS_FMT_BIN)
				bounds[set.count] = bounds[set.count - 1] + (e - a) / f->rec_size;
		}
		t1 = now_sec();
		if (enc_plan_init(&pl, f, &set))
			goto out;
		if (pl.total > s->cap) {
			on_host++;
			rc = mrg_stream(f, pieces, k, out);
		} else if ((rc = enc_plan_next(&pl, s->cap, b)) > 0) {
			rc = f->fmt == CLS_FMT_BIN ? srt_merge(s->eng, f, b, bounds, set.count, out, &s->t)
						   : srt_run(s->eng, f, b, out, NULL, &s->t);
		}
		enc_plan_free(&pl);
		if (rc < 0)
			goto out;
		t2 = now_sec();
		msg_info(3, "part %zu: planned and sorted in %.3f s", p, t2 - t1);
	}
	rc = 0;
	s->resorted += parts;
	msg_info(2, "merge on the device: %zu parts, %zu of them too large and merged on the host",
		 parts, on_host);
out:
	free(cuts);
	free(bounds);
	free(files);
	free(pieces);
	return rc;
}

static void report(const struct sorter *s, size_t runs, uint64_t records)
{
	msg_info(1, "host memory budget %llu MiB", (unsigned long long)(s->o->memory_bytes >> 20));
	if (s->ranges)
		msg_info(1, "%llu records cut into %zu key ranges%s in %.3f s, sorted in %zu run%s "
			 "of up to %zu; %u merge pass%s", (unsigned long long)records, s->ranges,
			 s->in_place ? " in the output's place" : "",
			 s->t_part, runs, runs == 1 ? "" : "s", s->cap, s->spill.merges,
			 s->spill.merges == 1 ? "" : "es");
	else
		msg_info(1, "%llu records in %zu run%s of up to %zu%s; %u merge pass%s%s",
			 (unsigned long long)records, runs, runs == 1 ? "" : "s", s->cap,
			 runs > 1 ? (s->spill.files ? ", kept in temporary files" : ", kept in memory") : "",
			 s->spill.merges, s->spill.merges == 1 ? "" : "es",
			 s->resorted ? " on the host, then merged on the device" : "");
	msg_info(1, "time: encode %.3f s, sort and write %.3f s, merge %.3f s", s->t.encode,
		 s->t.sort, s->spill.t_merge);
	msg_info(2, "of sort and write: staging %.3f s, ties and -u %.3f s, waiting for the "
		 "output %.3f s, writing %.3f s", s->t.produce, s->t.ties, s->t.warm, s->t.consume);
	eng_report(s->eng);
}

size_t runs_kept_bytes(const struct enc_batch *b)
{
	size_t bytes = 0, i;

	/* A line end for each slice: an input's last line may lack one. */
	for (i = 0; i < b->nslices; i++)
		bytes += b->slices[i].len + 1;
	return bytes;
}

int runs_keep(struct spl_set *spill, struct engine *e, const struct enc_format *f,
	      struct enc_batch *b, size_t bytes, struct srt_times *t)
{
	struct out_writer w;
	struct mrg_run r;
	int rc = spl_writer(spill, &w, &r, bytes);

	if (rc)
		return rc;
	rc = srt_run(e, f, b, &w, NULL, t);
	if (rc) {
		spl_discard(&w, &r);
		return rc;
	}
	return spl_keep(spill, &w, &r);
}

/* Sort the records pl plans into out: one run straight to it, or runs
 * kept and merged.  warm, when not NULL, is joined before out is written. */
static int sort_set(struct sorter *s, struct enc_planner *pl, struct enc_batch *b,
		    struct out_writer *out, struct srt_warm *warm, struct tally *t)
{
	size_t runs = 0, i;
	uint64_t records = 0;
	double t0;
	int rc;

	for (;;) {
		double t1 = now_sec(), t2, t3;
		int planned = enc_plan_next(pl, s->cap, b);
		if (planned < 0)
			return CLS_E_FAIL;
		if (!planned)
			break;
		t->runs++;
		if (++runs == 1 && enc_plan_done(pl)) {
			rc = srt_run(s->eng, s->f, b, out, warm, &s->t);
			t->records += b->n;
			t->skipped += b->skipped;
			t->skipped_fields += b->skipped_fields;
			return rc;
		} else {
			t2 = now_sec();
			rc = runs_keep(&s->spill, s->eng, s->f, b, runs_kept_bytes(b), &s->t);
			t3 = now_sec();
			records += b->n;
			t->records += b->n;
			t->skipped += b->skipped;
			t->skipped_fields += b->skipped_fields;
			if (rc)
				return rc;
			for (i = 0; i < b->nslices; i++)
				in_release(b->slices[i].file, b->slices[i].off, b->slices[i].len);
			msg_info(3, "run %zu: %zu records; planned in %.3f s, sorted and kept in %.3f s, "
				 "its input released in %.3f s", runs, b->n, t2 - t1, t3 - t2,
				 now_sec() - t3);
		}
	}
	if (runs <= 1)
		return 0;
	if (warm)
		srt_warm_out_done(warm);
	/* The host engine's sort had no device start to map the output
	 * during (srt_warm_start is for devices): the merge's threads copy
	 * into it through a mapping all the same. */
	if (warm && warm->map_out && s->eng->host)
		out_map(out, warm->out_bytes, warm->threads, false);
	prog_phase(PROG_MERGE);
	if (s->spill.files || !merge_on_device(s->f, s->eng, s->spill.n, records, s->cap))
		return spl_merge(&s->spill, out);
	t0 = now_sec();
	rc = resort_runs(s, s->spill.runs, s->spill.n, records, b, out);
	s->spill.t_merge += now_sec() - t0;
	spl_free(&s->spill);
	return rc;
}

/* Sort in, cut into key ranges that each fit a run, range by range into
 * out.  The ranges are copied into a buffer of their own, or where dst is
 * not NULL into dst: out's next bytes, bare keys (enc_bare_keys) only,
 * whose sorts read all of their input before they write their output.
 * PART_BAD_LINE when a kv line has no key: the caller sorts the input the
 * usual way, which reports the line. */
static int sort_ranges(struct sorter *s, const struct in_set *in, uint64_t records,
		       unsigned char *dst, struct enc_batch *b, struct out_writer *out,
		       struct tally *t)
{
	struct part_set parts;
	double t0 = now_sec();
	size_t r;
	int rc = part_split(s->f, in, records, s->cap, dst, &parts);

	if (rc)
		return rc;
	s->ranges = parts.count;
	s->t_part = now_sec() - t0;
	/* Every record is in the ranges now. */
	for (r = 0; r < in->count; r++)
		in_release(&in->files[r], 0, in->files[r].size);
	for (r = 0; r < parts.count && rc == 0; r++) {
		struct enc_planner pl;
		if (enc_plan_init(&pl, s->f, &parts.ranges[r])) {
			rc = CLS_E_FAIL;
			break;
		}
		rc = sort_set(s, &pl, b, out, NULL, t);
		enc_plan_free(&pl);
	}
	part_free(&parts);
	return rc;
}

/* Bare keys larger than memory, to a file: rather than runs in temporary
 * files and a merge, key ranges laid out in the output's mapping, each then
 * sorted in its place.  Each key is classified once and sorted once (runs
 * and a merge sort it twice), and no temporary file is written (on 2
 * cores, writing the fresh pages of runs beside those of the output was
 * most of a spilled sort's time).  The output's pages take the ranges'
 * bytes first: where memory is short the kernel writes them back and reads
 * each range again for its sort, as it would temporary files.
 * CLSORT_MERGE_RUNS=host or device (for tests) spills runs instead.
 * place_ranges: where out's next in->bytes lie, or NULL where it is not a
 * mapped file. */
static bool ranges_in_place(void)
{
	const char *how = getenv("CLSORT_MERGE_RUNS");
	return !how || strcmp(how, "ranges") == 0;
}

static unsigned char *place_ranges(struct out_writer *out, struct srt_warm *warm,
				   const struct in_set *in)
{
	srt_warm_out_done(warm);
	if (warm->map_out)
		out_map(out, warm->out_bytes, warm->threads, false);
	return out_place(out, in->bytes);
}

void runs_config(const struct cls_opts *o, const struct enc_format *f, const char *device,
		 struct eng_config *ec)
{
	const bool kv = f->fmt == CLS_FMT_KV;
	const size_t ws = word_size(f->kind);
	const size_t deal = kv && !eng_is_host(device) ? OUT_EMIT_LINE_BYTES : 0;

	*ec = (struct eng_config){ .device = device, .kind = f->kind, .local = o->local,
				   .devsort = o->devsort, .lines = srt_lines_in_order(f),
				   .records = srt_records_in_order(f),
				   .profiling = o->verbose > 0, .threads = f->threads,
				   .buffer_bytes = o->buffer_bytes,
				   .buffer_percent = o->buffer_percent,
				   .memory = o->memory_bytes / 2,
				   .beside = (kv || f->unique ? ws : 0) +
					     (kv ? sizeof(struct kv_line) : 0) + deal +
					     (f->nkeys ? sizeof(struct kv_line) + KEY_BYTES * f->nkeys : 0) };
}

uint64_t runs_lines_ahead(const struct cls_opts *o, const struct enc_format *f)
{
	struct eng_config ec;
	uint64_t n;

	runs_config(o, f, ENG_HOST, &ec);
	n = ec.memory / ec.beside;
	return n < runs_index_limit() ? n : runs_index_limit();
}

int runs_sort_on(const struct cls_opts *o, const struct enc_format *f, const struct in_set *in,
		 struct out_writer *out, struct engine *given)
{
	const size_t ws = word_size(f->kind);
	struct sorter s;
	struct choice choice;
	struct eng_config ec;
	struct enc_planner pl;
	struct enc_batch b;
	struct line_ahead *own = NULL, *ahead;
	struct tally t = { 0, 0, 0, 0 };
	uint64_t total, want;
	unsigned char *dst;
	bool ranges;
	int rc = CLS_E_FAIL;
	/* Populated, the output is in memory all at once, which is for
	 * outputs well inside the memory budget only (and where a device
	 * starts meanwhile: one opened while a stream was read has no start
	 * left to hide it under); a larger one is mapped all the same, its
	 * pages faulted in by the threads that copy into them. */
	struct srt_warm warm = { .in = in, .in_bytes = o->memory_bytes / 4, .out = out,
				 .out_bytes = runs_output_bytes(f, in->bytes, in->count),
				 .map_out = runs_maps_output(f, out),
				 .fault_out = in->bytes <= o->memory_bytes / 2 && !dev_ahead_pending(),
				 .threads = f->threads };
	struct cpu_watch cpus;
	double t0, t_start = 0, t_work = 0, others = -1;

	memset(&s, 0, sizeof s);
	memset(&b, 0, sizeof b);
	s.o = o;
	s.f = f;
	if (enc_plan_init(&pl, f, in))
		return CLS_E_FAIL;
	total = pl.total;
	if (given) {
		memset(&choice, 0, sizeof choice);
		choice.device = given->host ? ENG_HOST : o->device;
	} else {
		choose(o, f, total, &choice, true, -1);
	}
	/* The lines of a mapped file are parsed while the device starts (a
	 * stream's, f->ahead, while it arrived). */
	if (!eng_is_host(choice.device) && !f->ahead && in->count == 1 && !in->files[0].stream &&
	    total && la_applies(f, false))
		own = la_start(f, in->files[0].data, in->files[0].size, total,
			       runs_lines_ahead(o, f), NULL);
	/* Starting a device takes a while: have the input's pages and the
	 * output's blocks ready by then.  The host engine starts at once;
	 * on HOST_MAP_THREADS threads or more it maps a large output all the
	 * same, its pages faulted in by the threads that copy into them,
	 * where one stream of write(2) would take as long as the sort.  The
	 * mapping is made while the input is encoded and sorted: sizing the
	 * file first (in memory, its pages zeroed one by one) took 0.05-0.1
	 * s of 0.7 for 490 MB of lines on 16 threads. */
	if (!eng_is_host(choice.device)) {
		srt_warm_start(&warm);
	} else if (warm.map_out && f->threads >= HOST_MAP_THREADS &&
		   warm.out_bytes >= HOST_MAP_BYTES) {
		warm.in = NULL;
		warm.fault_out = false;
		srt_warm_start(&warm);
	}
	t0 = now_sec();
	if (given) {
		s.eng = given;
	} else {
		runs_config(o, f, choice.device, &ec);
		if (eng_open(&s.eng, &ec))
			goto out;
	}
	want = total ? total : 1;
	if (f->indexed && want > runs_index_limit())
		want = runs_index_limit();
	if (eng_capacity(s.eng, (size_t)want, &s.cap))
		goto out;
	t_start = now_sec() - t0;
	msg_info(1, "%llu records: sorting on %s", (unsigned long long)total, s.eng->name);
	t0 = now_sec();
	if (choice.measure)
		cpu_watch_start(&cpus);
	/* A file's lines that are not one run's: its parse stops at once. */
	if (own && total != s.cap) {
		la_free(own);
		own = NULL;
	}
	ahead = f->ahead ? f->ahead : own;
	if (!(in->count && la_adopt(ahead, &in->files[0], s.cap, &b)) &&
	    enc_batch_alloc(f, s.cap, &b))
		goto out;
	/* Runs stay in memory when the whole input fits beside the run
	 * buffers; otherwise they go to temporary files. */
	if (spl_init(&s.spill, f, o->tmpdir, o->memory_bytes,
		     in->bytes + (uint64_t)s.cap * ws > o->memory_bytes,
		     total ? (total + s.cap - 1) / s.cap : 1))
		goto out;
	/* More than a run, and room for a copy of the input: key ranges that
	 * each fit a run, and no merge.  Not for -u, whose equal keys must
	 * meet, where ranges may split them, nor for string keys, whose
	 * ranges would be cut by a prefix alone, nor for keys longer than
	 * their words (bytes:N), whose ties they would split. */
	rc = PART_BAD_LINE;
	ranges = !s.spill.files && !f->unique && !f->str && !f->tail && total > s.cap &&
		 part_count(total, s.cap) <= MAX_RANGES && cut_ranges(f, s.eng);
	if (ranges) {
		srt_warm_out_done(&warm);
		rc = sort_ranges(&s, in, total, NULL, &b, out, &t);
		if (rc == PART_BAD_LINE)
			msg_info(1, "a line without a key: sorting in runs, which names it");
	} else if (s.spill.files && enc_bare_keys(f) && !f->unique && total > s.cap &&
		   part_count(total, s.cap) <= MAX_RANGES && ranges_in_place() &&
		   (dst = place_ranges(out, &warm, in))) {
		s.in_place = true;
		rc = sort_ranges(&s, in, total, dst, &b, out, &t);
	}
	if (rc == PART_BAD_LINE)
		rc = sort_set(&s, &pl, &b, out, &warm, &t);
	t_work = now_sec() - t0;
	if (choice.measure)
		others = cpu_others_share(&cpus);
	if (rc)
		goto out;
	if (t.skipped)
		runs_report_skipped(o, t.skipped, t.skipped_fields);
	report(&s, t.runs, t.records);
out:
	srt_warm_done(&warm);
	spl_free(&s.spill);
	enc_batch_free(&b);
	la_free(own);
	enc_plan_free(&pl);
	if (s.eng && !given) {
		/* What measure needs of it, kept past closing it. */
		const struct engine seen = *s.eng;
		const double t_close = eng_close(s.eng);
		if (rc == 0 && choice.measure)
			measure(&choice, &seen, f, t.records, t_start + t_close,
				t_work - s.t.ties, others);
	}
	return rc;
}
