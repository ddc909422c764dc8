#include "config.h"
#include "cl_engine.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_engine_priv.h"
#include "devbuild.h"
#include "sendahead.h"
#include "util.h"

static const struct eng_ops cle_ops;
static void cle_close(struct engine *base);

/* Whether a run of n words goes through the radix sort: as --device-sort
 * says, auto taking the networks for small runs only where their program
 * is built (or cached). */
bool cle_radix_for(const struct cle *e, size_t n)
{
	const bool built = e->net_cached || e->net.prog;
	const bool radix = clr_wanted(e->c.devsort, e->dev, n, built);

	if (radix && !clr_wanted(e->c.devsort, e->dev, n, true))
		msg_info(2, "device sort: radix, as the networks' program is not built yet");
	return radix;
}

/* The device's memory a sort of c's may take on d: -S, else a share of
 * what it has. */
static uint64_t budget_of(const struct dev_ctx *d, const struct eng_config *c)
{
	if (c->buffer_percent > 0)
		return (uint64_t)((double)d->global_mem * c->buffer_percent / 100.0);
	if (c->buffer_bytes)
		return c->buffer_bytes;
	return (uint64_t)((double)d->global_mem * DEVICE_FRACTION);
}

uint64_t cle_budget_bytes(const struct cle *e)
{
	return budget_of(e->dev, &e->c);
}

/* The shape of c's words on d, into sh, and the options of every program
 * of an engine that is instance on the device (clb_instance_open). */
static void base_options(const struct dev_ctx *d, const struct eng_config *c, unsigned instance,
			 struct clb_shape *sh, char *options, size_t size)
{
	const char *extra = getenv("CLSORT_CL_OPTIONS");
	char instance_opt[32] = "";

	clb_choose_shape(d, word_size(c->kind), c->local == CLS_LOCAL_MERGE, sh);
	/* -w: some compilers (PoCL's) print optimizer notes, such as loops
	 * they chose not to unroll, straight to our stderr; errors still fail
	 * the build with its log. */
	if (instance)
		snprintf(instance_opt, sizeof instance_opt, " -DINSTANCE=%u", instance);
	snprintf(options, size,
		 "-w -DWORD_BITS=%zu -DWG=%zu -DEPT=%zu -DLOG_WG=%u -DLOG_EPT=%u -DMERGE_ITEMS=%zu%s %s",
		 sh->wsize * 8, sh->wg, sh->ept, clb_log2(sh->wg), clb_log2(sh->ept), sh->merge_items,
		 instance_opt, extra ? extra : "");
}

/* Whether d puts in order what goes up beside the words, as far as the
 * device goes (may_gather): not a CPU device (whose gather would read the
 * same memory the host's does, and copy it twice more) unless
 * CLSORT_DEVICE_GATHER=1, and not any with CLSORT_DEVICE_GATHER=0. */
bool cle_gathers_on(const struct dev_ctx *d)
{
	const char *s = getenv("CLSORT_DEVICE_GATHER");

	if (s && !strcmp(s, "0"))
		return false;
	return !(d->type & CL_DEVICE_TYPE_CPU) || (s && !strcmp(s, "1"));
}

/* What a large run of c's words needs on d, made where the device was
 * opened ahead, as the first engine on it: the programs, built or loaded
 * from clsort's cache (a load took the sort 4-40 ms after a 1 GiB
 * stream's last byte on an H100 machine), the sort's (cle_start's choice
 * where the run has RADIX_MIN words or more) and the one that puts the
 * records (kv lines: with their text) in order where the device does;
 * then the pinned staging buffers, where the device has memory of its own
 * as cle_gathers_on judges (an H100 machine's driver took 0.02-0.08 s for
 * 48-96 MiB of them; a CPU device's staging is the host's own memory).
 * Nothing the thread has not begun once the sort has come for the device:
 * the sort's own builds overlap its uploads. */
static void build_early(struct dev_ctx *d, void *arg)
{
	const struct eng_config *c = arg;
	struct clb_shape sh;
	char options[sizeof ((struct cle *)0)->options];
	struct clb_job j[DEV_EARLY];
	size_t n = 0, i;

	base_options(d, c, 0, &sh, options, sizeof options);
	if (clr_wanted(c->devsort, d, SIZE_MAX, true)) {
		struct clr r;
		clr_init(&r, d, sh.wsize, options);
		clr_program(&r, &j[n++]);
	} else {
		clb_sort_program(&sh, options, &j[n++]);
	}
	if ((c->lines || c->records) && cle_gathers_on(d)) {
		struct clg g;
		clg_init(&g, d, sh.wsize);
		if (c->lines)
			clg_lines_program(&g, options, &j[n++]);
		else
			clg_records_program(&g, options, &j[n++]);
	}
	for (i = 0; i < n && !dev_ahead_wanted(); i++)
		clb_build_early(d, &j[i]);
	if (cle_gathers_on(d) && !dev_ahead_wanted())
		stg_make_ahead(d);
	/* The programs and pinned buffers made: what faults pages in beside
	 * the read may go on (util.h). */
	faults_hold(false);
	/* A stream's words (bare keys, packed records, kv lines' words), sent
	 * while the rest arrives, for the radix sort to take where they lie:
	 * room for them, and for the sort's second buffer beside them; kv
	 * lines' text for their gather. */
	if (clr_wanted(c->devsort, d, SIZE_MAX, true) && !dev_ahead_wanted()) {
		uint64_t most = budget_of(d, c) / 2;
		if (most > d->max_alloc)
			most = d->max_alloc;
		sa_send(d, most, c->lines && cle_gathers_on(d));
	}
}

void cle_open_ahead(const struct eng_config *c)
{
	static struct eng_config config;
	static atomic_bool given;

	/* Once a process, as dev_open_ahead: a later stream's call must not
	 * write the config the thread of the first may be reading. */
	if (atomic_exchange(&given, true))
		return;
	config = *c;
	dev_open_ahead(c->device, c->profiling, build_early, &config);
}

/* The device opened and the build of the program a run of about n words
 * needs started (the radix sort's or the tile sort's): on the first call
 * that has words to sort, so that an input with none never touches
 * OpenCL.  Once: a failure is kept for every later call.  0 or CLS_E_FAIL
 * after a message. */
int cle_start(struct cle *e, size_t n)
{
	struct dev_ctx *d = e->dev;
	unsigned instance;
	cl_int err;

	if (e->started)
		return e->start_rc;
	e->started = true;
	e->start_rc = CLS_E_FAIL;
	if (dev_open(d, e->c.device, e->c.profiling))
		return CLS_E_FAIL;
	e->dev_opened = true;
	e->base.t_ahead = d->t_ahead;
	if (d->sent.text)
		msg_info(2, "%zu words and %llu bytes of text sent to the device in %.3f s while "
			 "the stream arrived", d->sent.words, (unsigned long long)d->sent.text_bytes,
			 d->sent.seconds);
	else if (d->sent.words)
		msg_info(2, "%zu words sent to the device in %.3f s while the stream arrived",
			 d->sent.words, d->sent.seconds);
	e->open_slot = clb_instance_open(d->device, &instance);
	snprintf(e->base.name, sizeof e->base.name, "%s [%s]", d->name, d->platform_name);
	base_options(d, &e->c, instance, &e->sh, e->options, sizeof e->options);
	e->xfer = clCreateCommandQueue(d->context, d->device,
				       d->profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
	if (!e->xfer)
		return dev_fail("cannot create an OpenCL command queue", err);
	stg_init(&e->stg, d, e->xfer, e->sh.wsize, e->sh.tile);
	clg_init(&e->gather, d, e->sh.wsize);
	if (e->sh.global_merge)
		msg_info(2, "%zu-bit words: tiles of %zu (work-group %zu x %zu), %s tile kernel, "
			 "global merge-path passes of %zu words per work-item", e->sh.wsize * 8, e->sh.tile,
			 e->sh.wg, e->sh.ept, e->c.local == CLS_LOCAL_MERGE ? "merge" : "bitonic",
			 e->sh.merge_items);
	else
		msg_info(2, "%zu-bit words: tiles of %zu (work-group %zu x %zu), %s tile kernel, "
			 "global bitonic passes of %u substages", e->sh.wsize * 8, e->sh.tile, e->sh.wg, e->sh.ept,
			 e->c.local == CLS_LOCAL_MERGE ? "merge" : "bitonic", e->sh.fuse);
	msg_info(2, "device limits: work-groups of %zu, %llu KiB of local memory", d->max_wg,
		 (unsigned long long)(d->local_mem >> 10));
	cln_init(&e->net, d, &e->sh, e->options, cle_record_kernel, e);
	clr_init(&e->radix, d, e->sh.wsize, e->options);
	e->radix_may = clr_wanted(e->c.devsort, d, SIZE_MAX, true);
	e->net_cached = e->radix_may && e->c.devsort == CLS_DEVSORT_AUTO && cln_cached(&e->net);
	if (clr_wanted(e->c.devsort, d, n, e->net_cached))
		clr_start(&e->radix);
	else
		cln_start(&e->net);
	e->start_rc = 0;
	return 0;
}

/* The network sort's kernels, once the build cln_start started has
 * ended: it is waited for here, and the wait counted in t_wait.  0 (also
 * where it never started) or CLS_E_FAIL after a message. */
int cle_ready(struct cle *e)
{
	const double t0 = now_sec();
	const bool waits = cln_building(&e->net);
	const int rc = cln_ready(&e->net);

	if (waits) {
		e->base.t_wait += now_sec() - t0;
		e->base.t_once = e->dev->t_build;
	}
	return rc;
}

/* The network sort's kernels, their build started here where it was not. */
int cle_sort_kernels(struct cle *e)
{
	cln_start(&e->net);
	return cle_ready(e);
}

/* The radix sort's kernels, likewise; the wait counted in t_wait. */
int cle_radix_kernels(struct cle *e)
{
	const double t0 = now_sec();
	const bool waits = !e->radix.prog;
	const int rc = clr_ready(&e->radix);

	if (waits) {
		e->base.t_wait += now_sec() - t0;
		e->base.t_once = e->dev->t_build;
	}
	return rc;
}

int cle_open(struct engine **out, const struct eng_config *c)
{
	struct cle *e = calloc(1, sizeof *e);

	if (!e) {
		msg_err("out of memory");
		return CLS_E_FAIL;
	}
	e->base.ops = &cle_ops;
	e->c = *c;
	e->base.memory = c->memory;
	e->dev = &e->devc;
	e->open_slot = -1;
	e->sh.wsize = word_size(c->kind);
	/* Named by its spec until it starts. */
	snprintf(e->base.name, sizeof e->base.name, "OpenCL device %s", c->device);
	*out = &e->base;
	return 0;
}

static void cle_close(struct engine *base)
{
	struct cle *e = (struct cle *)base;

	cln_release(&e->net);
	clr_release(&e->radix);
	stg_release(&e->stg);
	clg_release(&e->gather);
	if (e->buf)
		clReleaseMemObject(e->buf);
	if (e->merge_pieces)
		clReleaseKernel(e->merge_pieces);
	if (e->buf2)
		clReleaseMemObject(e->buf2);
	if (e->pieces_prog)
		clReleaseProgram(e->pieces_prog);
	if (e->xfer)
		clReleaseCommandQueue(e->xfer);
	free(e->prof);
	free(e->prof_kernel);
	if (e->dev_opened) {
		clb_instance_close(e->open_slot);
		dev_close(&e->devc);
	}
	free(e);
}

static size_t cle_max_words(const struct cle *e)
{
	return (size_t)(e->dev->max_alloc / e->sh.wsize);
}

static bool is_nomem(cl_int err)
{
	return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
	       err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

/* A buffer of words words on the device for the first: the one a
 * stream's first words were sent into while it arrived (sendahead.h),
 * where it has the room, or a new one, those words copied into it. */
static cl_mem take_sent(struct cle *e, size_t words, cl_int *err)
{
	struct dev_ctx *d = e->dev;
	cl_mem sent = d->sent.buf;

	*err = CL_SUCCESS;
	d->sent.buf = NULL;
	if (sent && d->sent.cap >= words)
		return sent;
	if (!sent || d->sent.words > words)
		d->sent.words = 0;
	return dev_regrow(d, sent, d->sent.words * e->sh.wsize, words * e->sh.wsize, err);
}

int cle_reserve(struct cle *e, size_t words)
{
	cl_int err;

	if (e->buf && e->buf_words >= words)
		return 0;
	/* Sent words, where there were, go with the buffer. */
	if (e->buf) {
		clReleaseMemObject(e->buf);
		e->dev->sent.words = 0;
	}
	if (e->buf2)
		clReleaseMemObject(e->buf2);
	e->buf = e->buf2 = NULL;
	e->buf_words = 0;
	if (words == 0)
		return 0;
	if (words > cle_max_words(e))
		return CLE_E_NOMEM;
	e->buf = take_sent(e, words, &err);
	if (e->buf && (e->sh.global_merge || e->radix_may))
		e->buf2 = dev_buffer(e->dev, words * e->sh.wsize, &err);
	if (err != CL_SUCCESS) {
		if (e->buf)
			clReleaseMemObject(e->buf);
		if (e->buf2)
			clReleaseMemObject(e->buf2);
		e->buf = e->buf2 = NULL;
		e->dev->sent.words = 0;
		if (is_nomem(err)) {
			msg_info(1, "device buffer of %zu words failed (%s)", words, dev_strerror(err));
			return CLE_E_NOMEM;
		}
		return dev_fail("cannot allocate the device buffer", err);
	}
	e->buf_words = words;
	return 0;
}

int cle_finish(struct cle *e, cl_int err, const char *what, cl_mem result, size_t off, size_t n,
	       size_t chunk_tiles, size_t chunks, cl_event *ready, bool each, const cl_event *up,
	       size_t nup, cl_event *down, eng_consumer consume, void *ctx)
{
	int cb = 0;

	clFlush(e->dev->queue);
	if (err == CL_SUCCESS) {
		what = "download from the device";
		err = stg_download(&e->stg, result, off, n, chunk_tiles, chunks, ready, each, down,
				   consume, ctx, &cb);
	}
	if (cb)
		return cb;
	if (err != CL_SUCCESS) {
		dev_fail(what, err);
		return CLS_E_FAIL;
	}
	if (e->dev->profiling)
		cle_add_times(e, up, nup, down, chunks);
	return 0;
}

/* The budget: -S, else a fraction of the device's memory; never more than
 * one buffer may hold, nor, on a CPU device whose buffers are host memory
 * too (the words, and the merge-path passes' second buffer), more than the
 * host memory allows.  Then halved until the device holds it: it may hold
 * less than it says. */
static int cle_capacity(struct engine *base, size_t want, size_t *cap)
{
	struct cle *e = (struct cle *)base;
	const struct dev_ctx *d = e->dev;
	size_t per_record = e->c.beside;
	uint64_t most;
	double t0 = now_sec();
	int rc;

	/* Runs that small need nothing of the device: an empty input never
	 * starts it, and a sort of a few words starts it when it sorts. */
	if (want <= MIN_RUN) {
		*cap = want;
		return 0;
	}
	if (cle_start(e, want))
		return CLS_E_FAIL;
	most = cle_budget_bytes(e);
	/* The radix sort's second buffer (on a CPU device the merge-path
	 * passes have it anyway, counted below) and its counts. */
	if (e->radix_may && !e->sh.global_merge) {
		const uint64_t extra = clr_extra_bytes(&e->radix);
		most = most > extra ? (most - extra) / 2 : 0;
	}
	most /= e->sh.wsize;
	if (most > cle_max_words(e))
		most = cle_max_words(e);
	if (d->type & CL_DEVICE_TYPE_CPU)
		per_record += 2 * e->sh.wsize;
	if (per_record && most > base->memory / per_record)
		most = base->memory / per_record;
	if (most < MIN_RUN)
		most = MIN_RUN;
	if (most > want)
		most = want;
	while ((rc = cle_reserve(e, (size_t)most)) == CLE_E_NOMEM && most > MIN_RUN)
		most = most / 2 < MIN_RUN ? MIN_RUN : most / 2;
	if (rc) {
		if (rc == CLE_E_NOMEM)
			msg_err("the device cannot hold even %llu words", (unsigned long long)most);
		return CLS_E_FAIL;
	}
	*cap = (size_t)most;
	msg_info(1, "device buffer of %zu words in %.3f s", *cap, now_sec() - t0);
	return 0;
}

static const struct eng_ops cle_ops = {
	.capacity = cle_capacity,
	.sort = cle_sort,
	.merge = cle_merge,
	.report = cle_report,
	.close = cle_close,
	.sort_records = cle_sort_records,
	.sort_lines = cle_sort_lines,
	.sort_in = cle_sort_in,
	.sort_above = cle_sort_above,
};
