#include "config.h"
#include "cl_engine.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_build.h"
#include "cl_radix.h"
#include "device.h"
#include "util.h"

/* Kernels of an engine: tile sort, tail, pair tails, merge, merge of
 * pieces, the radix sort's, flip and half. */
#define NKERNELS (2 * CLB_MAX_FUSE + 6 + CLR_NKERNELS)
/* Returned when the device cannot hold the words asked for. */
#define CLE_E_NOMEM (-10)
/* Default device budget: this fraction of its global memory. */
#define DEVICE_FRACTION 0.5
/* Runs never hold fewer words than this, whatever the budget. */
#define MIN_RUN 1024
/* Transfers move in chunks through NSTAGE pinned staging buffers, so that
 * producing, uploading and tile-sorting (and downloading and consuming)
 * overlap.  A chunk is about a CHUNKS-th of the first sort, from CHUNK_MIN
 * to CHUNK_MAX bytes: the first upload and the last download are not
 * overlapped, and a producer fed by many threads (the deal of key ranges
 * to several devices) makes them wait at each chunk's end. */
#define CHUNK_MIN ((size_t)16 << 20)
#define CHUNK_MAX ((size_t)64 << 20)
#define CHUNKS 32
#define NSTAGE 3

struct cle {
	struct engine base;		/* first: a struct engine * is a struct cle * */
	struct eng_config c;
	struct dev_ctx devc;
	bool started;			/* cle_start ran... */
	int start_rc;			/* ...and returned this */
	struct clb_job job;		/* the build of the tile sort's program... */
	bool sort_started;		/* ...started... */
	bool building;			/* ...not yet joined by cle_ready... */
	int ready_rc;			/* ...which returned this */
	bool dev_opened;
	int open_slot;			/* its place among the engines open */
	struct dev_ctx *dev;		/* &devc */
	cl_command_queue xfer;		/* transfers; kernels go on dev->queue */
	struct clb_shape sh;		/* of its sorts, once started */
	char options[512];		/* every program's, before the kernels' own */
	cl_program prog;		/* the sort's kernels */
	cl_program pieces_prog;		/* merge_pieces, once a merge needs it */
	struct clr radix;		/* the radix sort, its program built when a sort
					 * first runs it */
	bool radix_may;			/* --device-sort lets runs go through it: they
					 * need buf2 */
	cl_kernel tile_sort, tail;
	cl_kernel pair, pair_flip;	/* two tails after the substage of distance TILE */
	cl_kernel half[CLB_MAX_FUSE + 1], flip[CLB_MAX_FUSE + 1];
	cl_kernel merge;		/* sh.global_merge: its passes through buf2 */
	cl_kernel merge_pieces;		/* eng_merge: sorted pieces merged again */
	cl_mem buf, buf2;
	size_t buf_words;
	cl_mem stage_mem[NSTAGE];	/* pinned staging buffers, mapped */
	void *stage[NSTAGE];
	size_t stage_bytes;		/* of each */
	struct {
		double upload, sort, download;
	} times;			/* device time by phase, when profiling */
	cl_event *prof;			/* kernel events of this sort, when profiling */
	cl_kernel *prof_kernel;		/* and which kernel each was */
	size_t nprof, prof_cap;
	double kernel_time[NKERNELS];	/* per kernel (kernel_at), for -vv */
};

static const struct eng_ops cle_ops;
static void cle_close(struct engine *base);

/* Start building the tile sort's program on a thread, once. */
static void start_sort_program(struct cle *e)
{
	if (e->sort_started)
		return;
	e->sort_started = true;
	e->job.d = e->dev;
	clb_sort_program(&e->sh, e->options, &e->job);
	clb_start(&e->job);
	e->building = true;
}

/* The device opened and the build of the program a run of about n words
 * needs started (the radix sort's or the tile sort's): on the first call
 * that has words to sort, so that an input with none never touches
 * OpenCL.  Once: a failure is kept for every later call.  0 or CLS_E_FAIL
 * after a message. */
static int cle_start(struct cle *e, size_t n)
{
	struct dev_ctx *d = e->dev;
	const char *extra = getenv("CLSORT_CL_OPTIONS");
	char instance_opt[32] = "";
	unsigned instance;
	cl_int err;

	if (e->started)
		return e->start_rc;
	e->started = true;
	e->start_rc = CLS_E_FAIL;
	if (dev_open(d, e->c.device, e->c.profiling))
		return CLS_E_FAIL;
	e->dev_opened = true;
	e->open_slot = clb_instance_open(d->device, &instance);
	snprintf(e->base.name, sizeof e->base.name, "%s [%s]", d->name, d->platform_name);
	clb_choose_shape(d, e->sh.wsize, e->c.local == CLS_LOCAL_MERGE, &e->sh);
	e->xfer = clCreateCommandQueue(d->context, d->device,
				       d->profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
	if (!e->xfer)
		return dev_fail("cannot create an OpenCL command queue", err);
	/* -w: some compilers (PoCL's) print optimizer notes, such as loops
	 * they chose not to unroll, straight to our stderr; errors still fail
	 * the build with its log. */
	if (instance)
		snprintf(instance_opt, sizeof instance_opt, " -DINSTANCE=%u", instance);
	snprintf(e->options, sizeof e->options,
		 "-w -DWORD_BITS=%zu -DWG=%zu -DEPT=%zu -DLOG_WG=%u -DLOG_EPT=%u -DMERGE_ITEMS=%zu%s %s",
		 e->sh.wsize * 8, e->sh.wg, e->sh.ept, clb_log2(e->sh.wg), clb_log2(e->sh.ept), e->sh.merge_items,
		 instance_opt, extra ? extra : "");
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
	clr_init(&e->radix, d, e->sh.wsize, e->options);
	e->radix_may = clr_wanted(e->c.devsort, d, SIZE_MAX);
	if (clr_wanted(e->c.devsort, e->dev, n))
		clr_start(&e->radix);
	else
		start_sort_program(e);
	e->start_rc = 0;
	return 0;
}

/* The tile sort's kernels, once their build (start_sort_program) has
 * ended: it is waited for here, and the wait counted in t_wait.  0 (also
 * where it never started) or CLS_E_FAIL after a message. */
static int cle_ready(struct cle *e)
{
	const double t0 = now_sec();
	size_t i = 0;

	if (!e->building)
		return e->ready_rc;
	e->building = false;
	e->ready_rc = clb_join(&e->job);
	e->base.t_wait += now_sec() - t0;
	if (e->ready_rc)
		return e->ready_rc;
	e->prog = e->job.prog;
	e->base.t_once = e->dev->t_build;
	e->tile_sort = e->job.kernels[i++];
	if (e->sh.global_merge) {
		e->merge = e->job.kernels[i++];
	} else {
		unsigned f;
		e->tail = e->job.kernels[i++];
		e->pair = e->job.kernels[i++];
		e->pair_flip = e->job.kernels[i++];
		for (f = 1; f <= e->sh.fuse; f++) {
			e->half[f] = e->job.kernels[i++];
			e->flip[f] = e->job.kernels[i++];
		}
	}
	assert(i == e->job.n);
	return 0;
}

/* The tile sort's kernels, their build started here where it was not. */
static int sort_kernels(struct cle *e)
{
	start_sort_program(e);
	return cle_ready(e);
}

/* The radix sort's kernels, likewise; the wait counted in t_wait. */
static int radix_kernels(struct cle *e)
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

/* The merge of sorted pieces, a program of its own: built on the first
 * merge.  0 or CLS_E_FAIL after a message. */
static int build_pieces(struct cle *e)
{
	static const char *const names[] = { "merge_pieces" };
	char options[640];

	if (e->merge_pieces)
		return 0;
	snprintf(options, sizeof options, "%s -DPIECES", e->options);
	if (clb_build(e->dev, options, names, 1, &e->pieces_prog, &e->merge_pieces))
		return CLS_E_FAIL;
	e->base.t_once = e->dev->t_build;
	return 0;
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

static void release_stages(struct cle *e)
{
	int i;
	for (i = 0; i < NSTAGE; i++)
		if (e->stage[i])
			clEnqueueUnmapMemObject(e->xfer, e->stage_mem[i], e->stage[i], 0, NULL, NULL);
	if (e->stage_mem[0])
		clFinish(e->xfer);
	for (i = 0; i < NSTAGE; i++) {
		if (e->stage_mem[i])
			clReleaseMemObject(e->stage_mem[i]);
		e->stage_mem[i] = NULL;
		e->stage[i] = NULL;
	}
}

/* Bytes of each staging buffer for a first sort of n words: at least a
 * pair of tiles. */
static size_t chunk_bytes(const struct cle *e, size_t n)
{
	const size_t pair = 2 * e->sh.tile * e->sh.wsize;
	size_t b = n * e->sh.wsize / CHUNKS;
	b = b < CHUNK_MIN ? CHUNK_MIN : b > CHUNK_MAX ? CHUNK_MAX : b;
	return b < pair ? pair : b;
}

/* The pinned staging buffers, made on first use. */
static int make_stages(struct cle *e, size_t bytes)
{
	cl_int err = CL_SUCCESS;
	int i;

	if (e->stage[0])
		return 0;
	for (i = 0; i < NSTAGE; i++) {
		e->stage_mem[i] = clCreateBuffer(e->dev->context,
						 CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
		if (e->stage_mem[i])
			e->stage[i] = clEnqueueMapBuffer(e->xfer, e->stage_mem[i], CL_TRUE,
							 CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
							 NULL, &err);
		if (!e->stage[i]) {
			msg_err("cannot allocate %zu bytes of pinned host memory: %s", bytes,
				dev_strerror(err));
			release_stages(e);
			return CLS_E_FAIL;
		}
	}
	e->stage_bytes = bytes;
	return 0;
}

static void cle_close(struct engine *base)
{
	struct cle *e = (struct cle *)base;
	int i;

	/* A build not waited for yet: its kernels are released below. */
	cle_ready(e);
	clr_release(&e->radix);
	release_stages(e);
	if (e->buf)
		clReleaseMemObject(e->buf);
	for (i = 1; i <= CLB_MAX_FUSE; i++) {
		if (e->half[i])
			clReleaseKernel(e->half[i]);
		if (e->flip[i])
			clReleaseKernel(e->flip[i]);
	}
	if (e->tile_sort)
		clReleaseKernel(e->tile_sort);
	if (e->tail)
		clReleaseKernel(e->tail);
	if (e->pair)
		clReleaseKernel(e->pair);
	if (e->pair_flip)
		clReleaseKernel(e->pair_flip);
	if (e->merge)
		clReleaseKernel(e->merge);
	if (e->merge_pieces)
		clReleaseKernel(e->merge_pieces);
	if (e->buf2)
		clReleaseMemObject(e->buf2);
	if (e->prog)
		clReleaseProgram(e->prog);
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

/* Some drivers allocate on first use: write a buffer's last byte, so that
 * a buffer the device cannot hold fails here, where a smaller one can be
 * tried, rather than in the middle of a sort.  A write, not
 * clEnqueueFillBuffer: NVIDIA's fill (driver 580) fails with
 * CL_INVALID_COMMAND_QUEUE, and leaves the context unusable, when the low
 * 32 bits of the byte offset it ends at are 2^31 or more (2 GiB + 1 MiB
 * fails, 2 GiB and 4 GiB + 1 MiB pass; contrib/bench/bufprobe.c). */
static cl_int touch_last(struct cle *e, cl_mem buf, size_t bytes)
{
	static const cl_uchar zero = 0;
	return clEnqueueWriteBuffer(e->dev->queue, buf, CL_FALSE, bytes - 1, 1, &zero, 0, NULL, NULL);
}

static int cle_reserve(struct cle *e, size_t words)
{
	cl_int err;

	if (e->buf && e->buf_words >= words)
		return 0;
	if (e->buf)
		clReleaseMemObject(e->buf);
	if (e->buf2)
		clReleaseMemObject(e->buf2);
	e->buf = e->buf2 = NULL;
	e->buf_words = 0;
	if (words == 0)
		return 0;
	if (words > cle_max_words(e))
		return CLE_E_NOMEM;
	e->buf = clCreateBuffer(e->dev->context, CL_MEM_READ_WRITE, words * e->sh.wsize, NULL, &err);
	if (e->buf)
		err = touch_last(e, e->buf, words * e->sh.wsize);
	if (err == CL_SUCCESS && (e->sh.global_merge || e->radix_may)) {
		e->buf2 = clCreateBuffer(e->dev->context, CL_MEM_READ_WRITE, words * e->sh.wsize, NULL, &err);
		if (e->buf2)
			err = touch_last(e, e->buf2, words * e->sh.wsize);
	}
	if (err == CL_SUCCESS)
		err = clFinish(e->dev->queue);
	if (err != CL_SUCCESS) {
		if (e->buf)
			clReleaseMemObject(e->buf);
		if (e->buf2)
			clReleaseMemObject(e->buf2);
		e->buf = e->buf2 = NULL;
		if (is_nomem(err)) {
			msg_info(1, "device buffer of %zu words failed (%s)", words, dev_strerror(err));
			return CLE_E_NOMEM;
		}
		return dev_fail("cannot allocate the device buffer", err);
	}
	e->buf_words = words;
	return 0;
}

static size_t round_up(size_t v, size_t m)
{
	return (v + m - 1) / m * m;
}

/* Profiling keeps every kernel's event, to add up their run times. */
static void record_event(struct cle *e, cl_kernel k, cl_event ev)
{
	if (e->nprof == e->prof_cap) {
		size_t cap = 2 * e->prof_cap + 64;
		cl_event *g = realloc(e->prof, cap * sizeof *g);
		cl_kernel *gk = realloc(e->prof_kernel, cap * sizeof *gk);
		if (g)
			e->prof = g;
		if (gk)
			e->prof_kernel = gk;
		if (!g || !gk)
			return;
		e->prof_cap = cap;
	}
	clRetainEvent(ev);
	e->prof_kernel[e->nprof] = k;
	e->prof[e->nprof++] = ev;
}

/* record_event for the radix sort's kernels. */
static void record_radix(void *ctx, cl_kernel k, cl_event ev)
{
	record_event(ctx, k, ev);
}

/* The engine's kernels in the order -vv reports them: kernel i (NULL where
 * this engine has none) and, when name is not NULL, its name. */
static cl_kernel kernel_at(const struct cle *e, size_t i, char *name, size_t size)
{
	static const char *const names[] = { "tile sort", "tile tail", "pair tail",
					     "pair flip tail", "merge", "merge of pieces" };
	const cl_kernel fixed[] = { e->tile_sort, e->tail, e->pair, e->pair_flip, e->merge,
				    e->merge_pieces };
	const size_t nfixed = sizeof fixed / sizeof fixed[0];

	if (i < nfixed) {
		if (name)
			snprintf(name, size, "%s", names[i]);
		return fixed[i];
	}
	i -= nfixed;
	if (i < CLR_NKERNELS) {
		const char *rname;
		const cl_kernel k = clr_kernel(&e->radix, i, &rname);
		if (name)
			snprintf(name, size, "%s", rname);
		return k;
	}
	i -= CLR_NKERNELS;
	if (name)
		snprintf(name, size, "%s_%zu", i < CLB_MAX_FUSE ? "flip" : "half",
			 i % CLB_MAX_FUSE + 1);
	return i < CLB_MAX_FUSE ? e->flip[i + 1] : e->half[i - CLB_MAX_FUSE + 1];
}

/* Slot of kernel k, one of the engine's, in kernel_time[]. */
static size_t kernel_slot(const struct cle *e, cl_kernel k)
{
	size_t i = 0;
	while (i + 1 < NKERNELS && kernel_at(e, i, NULL, 0) != k)
		i++;
	return i;
}

/* Enqueue kernel k over items work-items on the compute queue; buf and n
 * are its first arguments, arg2 (a uint or ulong, by its size) the third. */
static cl_int launch(struct cle *e, cl_kernel k, size_t items, size_t local, const void *arg2,
		     size_t arg2_size, cl_ulong n, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	cl_int err = clSetKernelArg(k, 0, sizeof e->buf, &e->buf);
	size_t global = round_up(items, local);

	err |= clSetKernelArg(k, 1, sizeof n, &n);
	err |= clSetKernelArg(k, 2, arg2_size, arg2);
	if (err != CL_SUCCESS)
		return CL_INVALID_KERNEL_ARGS;
	err = clEnqueueNDRangeKernel(e->dev->queue, k, 1, NULL, &global, &local, nwait, wait, ev);
	if (err == CL_SUCCESS && e->dev->profiling && ev)
		record_event(e, k, *ev);
	return err;
}

/* Does merge stage 2^log_b leave its last global substage (distance
 * TILE) to the pair tail kernels?  When the stage's global substages come
 * to one more than a multiple of e->sh.fuse, that substage would take a
 * global pass of its own. */
static bool fold_last(const struct cle *e, unsigned log_b)
{
	return (log_b - clb_log2(e->sh.tile)) % e->sh.fuse == 1;
}

/* One of the tile kernels over tiles [t0, t1). */
static cl_int launch_tiles(struct cle *e, cl_kernel k, size_t n, size_t t0, size_t t1,
			   cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	const cl_ulong first = t0;
	return launch(e, k, (t1 - t0) * e->sh.wg, e->sh.wg, &first, sizeof first, n, nwait, wait, ev);
}

/* The tails of merge stage 2^log_b over tiles [t0, t1) (t0 even): one
 * work-group per tile, or per pair of tiles when the stage folds its last
 * global substage into them. */
static cl_int launch_tails(struct cle *e, unsigned log_b, size_t n, size_t t0, size_t t1,
			   cl_event *ev)
{
	const cl_ulong first = t0 / 2;
	cl_kernel k;

	if (!fold_last(e, log_b))
		return launch_tiles(e, e->tail, n, t0, t1, 0, NULL, ev);
	k = log_b == clb_log2(e->sh.tile) + 1 ? e->pair_flip : e->pair;
	return launch(e, k, (t1 - t0 + 1) / 2 * e->sh.wg, e->sh.wg, &first, sizeof first, n, 0, NULL, ev);
}

/* The global passes of merge stage 2^log_b: the flip step fused with the
 * half-cleaners after it, then the remaining half-cleaners of distance at
 * least a tile (but the last one when fold_last), e->sh.fuse substages per
 * pass. */
static cl_int enqueue_stage(struct cle *e, size_t n, unsigned log_b)
{
	const size_t gwg = 256;
	const unsigned log_t = clb_log2(e->sh.tile);
	unsigned levels = log_b - log_t - (fold_last(e, log_b) ? 1 : 0);
	cl_event ev = NULL, *evp = e->dev->profiling ? &ev : NULL;
	unsigned k = levels < e->sh.fuse ? levels : e->sh.fuse;
	const size_t blocks = (n + ((size_t)1 << log_b) - 1) >> log_b;
	const cl_uint arg_b = log_b;
	unsigned log_d;
	cl_int err;

	if (levels == 0)
		return CL_SUCCESS;
	err = launch(e, e->flip[k], blocks << (log_b - k), gwg, &arg_b, sizeof arg_b, n, 0, NULL, evp);
	if (ev)
		clReleaseEvent(ev);
	levels -= k;
	log_d = log_b - k - 1;
	while (err == CL_SUCCESS && levels) {
		const unsigned kk = levels < e->sh.fuse ? levels : e->sh.fuse;
		const cl_uint log_s = log_d - kk + 1;
		const size_t items = (((n - 1) >> (log_s + kk)) << log_s) + ((size_t)1 << log_s);
		ev = NULL;
		err = launch(e, e->half[kk], items, gwg, &log_s, sizeof log_s, n, 0, NULL, evp);
		if (ev)
			clReleaseEvent(ev);
		levels -= kk;
		log_d -= kk;
	}
	return err;
}

static double event_seconds(cl_event first, cl_event last)
{
	cl_ulong start = 0, end = 0;
	if (!first || !last ||
	    clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ||
	    clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL))
		return 0;
	return end > start ? (double)(end - start) * 1e-9 : 0;
}

/* Chunk c of the sort: tiles [t0, t1) and words [w0, w1). */
struct chunk {
	size_t t0, t1, w0, w1;
};

static struct chunk chunk_of(const struct cle *e, size_t c, size_t chunk_tiles, size_t n)
{
	const size_t tiles = (n + e->sh.tile - 1) / e->sh.tile;
	struct chunk k;
	k.t0 = c * chunk_tiles;
	k.t1 = k.t0 + chunk_tiles < tiles ? k.t0 + chunk_tiles : tiles;
	k.w0 = k.t0 * e->sh.tile;
	k.w1 = k.t1 * e->sh.tile < n ? k.t1 * e->sh.tile : n;
	return k;
}

static void release_events(cl_event *ev, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (ev[i])
			clReleaseEvent(ev[i]);
}

/* Produce chunk c (its words k) into its staging buffer, once the upload
 * that last used that buffer is done, and start its upload, *up.  A
 * callback's failure comes back in *rc. */
static cl_int upload_chunk(struct cle *e, size_t c, struct chunk k, cl_event *up,
			   eng_producer produce, void *ctx, int *rc)
{
	void *slot = e->stage[c % NSTAGE];
	cl_int err;

	if (c >= NSTAGE && (err = clWaitForEvents(1, &up[c - NSTAGE])) != CL_SUCCESS)
		return err;
	if ((*rc = produce(ctx, slot, k.w0, k.w1 - k.w0)) != 0)
		return CL_SUCCESS;
	return clEnqueueWriteBuffer(e->xfer, e->buf, CL_FALSE, k.w0 * e->sh.wsize,
				    (k.w1 - k.w0) * e->sh.wsize, slot, 0, NULL, &up[c]);
}

/* Bring the n sorted words at word off of result down through the staging
 * buffers in turn, chunk by chunk, each handed to consume: chunk c +
 * NSTAGE goes into chunk c's buffer once that has been consumed.  Chunk
 * c's download waits for ready[c] (each) or ready[0].  A callback's
 * failure comes back in *rc. */
static cl_int download(struct cle *e, cl_mem result, size_t off, size_t n, size_t chunk_tiles,
		       size_t chunks, cl_event *ready, bool each, cl_event *down,
		       eng_consumer consume, void *ctx, int *rc)
{
	cl_int err = CL_SUCCESS;
	size_t c;

	for (c = 0; c < chunks + NSTAGE && err == CL_SUCCESS; c++) {
		if (c >= NSTAGE) {
			const size_t d = c - NSTAGE;
			const struct chunk k = chunk_of(e, d, chunk_tiles, n);
			if ((err = clWaitForEvents(1, &down[d])) != CL_SUCCESS)
				break;
			if ((*rc = consume(ctx, e->stage[d % NSTAGE], k.w0, k.w1 - k.w0)) != 0)
				break;
		}
		if (c < chunks) {
			const struct chunk k = chunk_of(e, c, chunk_tiles, n);
			err = clEnqueueReadBuffer(e->xfer, result, CL_FALSE, (off + k.w0) * e->sh.wsize,
						  (k.w1 - k.w0) * e->sh.wsize, e->stage[c % NSTAGE], 1,
						  &ready[each ? c : 0], &down[c]);
			clFlush(e->xfer);
		}
	}
	return err;
}

/* Profiling: add a sort's transfers and kernels to the engine's times. */
static void add_times(struct cle *e, const cl_event *up, const cl_event *down, size_t chunks)
{
	size_t i;

	for (i = 0; i < chunks; i++) {
		e->times.upload += event_seconds(up[i], up[i]);
		e->times.download += event_seconds(down[i], down[i]);
	}
	for (i = 0; i < e->nprof; i++) {
		const double t = event_seconds(e->prof[i], e->prof[i]);
		e->times.sort += t;
		e->kernel_time[kernel_slot(e, e->prof_kernel[i])] += t;
	}
}

/* The end of a sort or a merge, whose launches left err (from what they
 * were doing): the n sorted words at word off of result down to consume
 * (ready and each as download takes them), and the times of the
 * transfers and kernels added.  0, what consume returned, or CLS_E_FAIL
 * after a message. */
static int finish(struct cle *e, cl_int err, const char *what, cl_mem result, size_t off,
		  size_t n, size_t chunk_tiles, size_t chunks, cl_event *ready, bool each,
		  const cl_event *up, cl_event *down, eng_consumer consume, void *ctx)
{
	int cb = 0;

	clFlush(e->dev->queue);
	if (err == CL_SUCCESS) {
		what = "download from the device";
		err = download(e, result, off, n, chunk_tiles, chunks, ready, each, down, consume,
			       ctx, &cb);
	}
	if (cb)
		return cb;
	if (err != CL_SUCCESS) {
		dev_fail(what, err);
		return CLS_E_FAIL;
	}
	if (e->dev->profiling)
		add_times(e, up, down, chunks);
	return 0;
}

static int cle_sort(struct engine *base, size_t n, eng_producer produce, eng_consumer consume,
		    void *ctx)
{
	struct cle *e = (struct cle *)base;
	size_t tiles, chunk_tiles, chunks, c, tiled;
	unsigned log_n, log_b;
	bool radix;
	cl_event *up = NULL, *sorted = NULL, *down = NULL;
	cl_int err = CL_SUCCESS;
	cl_mem result;
	int rc = CLS_E_FAIL, cb = 0;
	const char *what = "";

	if (n == 0)
		return 0;
	if (cle_start(e, n))
		return CLS_E_FAIL;
	radix = clr_wanted(e->c.devsort, e->dev, n);
	tiles = (n + e->sh.tile - 1) / e->sh.tile;
	if (cle_reserve(e, n) != 0) {
		msg_err("cannot hold %zu words on the device", n);
		return CLS_E_FAIL;
	}
	if (make_stages(e, chunk_bytes(e, n)))
		return CLS_E_FAIL;
	/* Whole pairs of tiles, for the pair tails of the last stage. */
	chunk_tiles = (e->stage_bytes / (e->sh.tile * e->sh.wsize)) & ~(size_t)1;
	chunks = (tiles + chunk_tiles - 1) / chunk_tiles;
	up = calloc(chunks, sizeof *up);
	sorted = calloc(chunks, sizeof *sorted);
	down = calloc(chunks, sizeof *down);
	if (!up || !sorted || !down) {
		msg_err("out of memory");
		goto out;
	}
	log_n = clb_log2(n);
	if (((size_t)1 << log_n) < n)
		log_n++;

	/* Upload chunk by chunk, each produced into a free staging buffer;
	 * each chunk's tiles are sorted once it lands and the kernels are
	 * built: until they are, the chunks go on coming up. */
	what = "upload to the device";
	for (c = 0, tiled = 0; c < chunks && err == CL_SUCCESS; c++) {
		err = upload_chunk(e, c, chunk_of(e, c, chunk_tiles, n), up, produce, ctx, &cb);
		if (cb) {
			rc = cb;
			goto out;
		}
		if (err == CL_SUCCESS && !radix &&
		    (!e->building || clb_done(&e->job) || c + 1 == chunks)) {
			if (sort_kernels(e))
				goto out;
			for (; tiled <= c && err == CL_SUCCESS; tiled++) {
				const struct chunk k = chunk_of(e, tiled, chunk_tiles, n);
				err = launch_tiles(e, e->tile_sort, n, k.t0, k.t1, 1, &up[tiled],
						   &sorted[tiled]);
			}
		}
		/* Start the copy now, not at the next wait. */
		clFlush(e->xfer);
		clFlush(e->dev->queue);
	}
	/* clFlush makes both queues start now rather than at the first wait. */
	clFlush(e->xfer);
	what = "sort kernel launch";
	result = e->buf;
	if (radix) {
		/* The words sorted where they lie, once they are all up. */
		cl_event done = NULL;
		if (radix_kernels(e))
			goto out;
		if (err == CL_SUCCESS)
			err = clr_sort(&e->radix, e->dev->queue, e->buf, e->buf2, n, (cl_uint)chunks,
				       up, e->dev->profiling ? record_radix : NULL, e, &result, &done);
		rc = finish(e, err, what, result, 0, n, chunk_tiles, chunks, &done, false, up, down,
			    consume, ctx);
		if (done)
			clReleaseEvent(done);
		goto out;
	}
	msg_info(2, "device sort: %s", e->sh.global_merge ? "tiles and merge-path passes" :
		 "tiles and bitonic passes");
	if (e->sh.global_merge && n > e->sh.tile) {
		cl_ulong w, nn = n;
		cl_mem src = e->buf, dst = e->buf2, t;
		for (w = e->sh.tile; err == CL_SUCCESS && w < n; w *= 2) {
			size_t global = round_up((n + e->sh.merge_items - 1) / e->sh.merge_items, e->sh.merge_wg);
			cl_event ev = NULL;
			err = clSetKernelArg(e->merge, 0, sizeof src, &src);
			err |= clSetKernelArg(e->merge, 1, sizeof dst, &dst);
			err |= clSetKernelArg(e->merge, 2, sizeof nn, &nn);
			err |= clSetKernelArg(e->merge, 3, sizeof w, &w);
			if (err == CL_SUCCESS)
				err = clEnqueueNDRangeKernel(e->dev->queue, e->merge, 1, NULL, &global,
							     &e->sh.merge_wg, 0, NULL, &ev);
			if (err == CL_SUCCESS && e->dev->profiling)
				record_event(e, e->merge, ev);
			for (c = 0; c < chunks && ev; c++) {
				clReleaseEvent(sorted[c]);
				clRetainEvent(ev);
				sorted[c] = ev;
			}
			if (ev)
				clReleaseEvent(ev);
			t = src;
			src = dst;
			dst = t;
		}
		result = src;
		log_n = 0;	/* no bitonic stages */
	}
	for (log_b = clb_log2(e->sh.tile) + 1; err == CL_SUCCESS && log_b <= log_n; log_b++) {
		err = enqueue_stage(e, n, log_b);
		if (err != CL_SUCCESS)
			break;
		if (log_b < log_n) {
			cl_event ev = NULL;
			err = launch_tails(e, log_b, n, 0, tiles, e->dev->profiling ? &ev : NULL);
			if (ev)
				clReleaseEvent(ev);
			continue;
		}
		/* The last stage's tail runs chunk by chunk, so that downloads
		 * start as soon as their part is final. */
		for (c = 0; c < chunks && err == CL_SUCCESS; c++) {
			const struct chunk k = chunk_of(e, c, chunk_tiles, n);
			clReleaseEvent(sorted[c]);
			sorted[c] = NULL;
			err = launch_tails(e, log_b, n, k.t0, k.t1, &sorted[c]);
		}
	}
	rc = finish(e, err, what, result, 0, n, chunk_tiles, chunks, sorted, true, up, down,
		    consume, ctx);
out:
	/* Nothing may still be writing into words when we return. */
	clFinish(e->xfer);
	clFinish(e->dev->queue);
	if (up)
		release_events(up, chunks);
	if (sorted)
		release_events(sorted, chunks);
	if (down)
		release_events(down, chunks);
	free(up);
	free(sorted);
	free(down);
	release_events(e->prof, e->nprof);
	e->nprof = 0;
	return rc;
}

/* Merge the k sorted pieces of n words (bounds[0] = 0 <= ... <= bounds[k]
 * = n) in log2 k merge-path passes, back and forth between two places in
 * the buffer, where it holds them twice; else sort them.  The words go up
 * and come down in chunks through the staging buffers, as in cle_sort;
 * one piece does not go through the device at all. */
static int cle_merge(struct engine *base, size_t n, const size_t *bounds, size_t k,
		     eng_producer produce, eng_consumer consume, void *ctx)
{
	struct cle *e = (struct cle *)base;
	size_t chunk_tiles, chunks, c, i;
	cl_ulong *b64 = NULL, from = 0, to = n, kk = k, nn = n, step;
	cl_event *up = NULL, *down = NULL, done = NULL;
	cl_mem bmem = NULL;
	cl_int err = CL_SUCCESS;
	const char *what = "upload to the device";
	int rc = CLS_E_FAIL, cb = 0;

	if (n == 0)
		return 0;
	if (cle_start(e, n))
		return CLS_E_FAIL;
	if (k > 1 && 2 * n > e->buf_words)
		return cle_sort(base, n, produce, consume, ctx);
	/* Chunks of the staging buffers as the first sort made them, or as
	 * cle_sort would make them for n words. */
	if (make_stages(e, chunk_bytes(e, n)))
		return CLS_E_FAIL;
	chunk_tiles = e->stage_bytes / (e->sh.tile * e->sh.wsize);
	chunks = ((n + e->sh.tile - 1) / e->sh.tile + chunk_tiles - 1) / chunk_tiles;
	/* One piece (a sorted input gives parts of one run): in order already. */
	for (c = 0; k < 2 && c < chunks; c++) {
		const struct chunk ck = chunk_of(e, c, chunk_tiles, n);
		if ((rc = produce(ctx, e->stage[0], ck.w0, ck.w1 - ck.w0)) != 0 ||
		    (rc = consume(ctx, e->stage[0], ck.w0, ck.w1 - ck.w0)) != 0)
			return rc;
	}
	if (k < 2)
		return 0;
	if (cle_ready(e) || build_pieces(e))
		return CLS_E_FAIL;
	b64 = malloc((k + 1) * sizeof *b64);
	up = calloc(chunks, sizeof *up);
	down = calloc(chunks, sizeof *down);
	if (!b64 || !up || !down) {
		msg_err("out of memory");
		goto out;
	}
	for (i = 0; i <= k; i++)
		b64[i] = bounds[i];
	bmem = clCreateBuffer(e->dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
			      (k + 1) * sizeof *b64, b64, &err);
	for (c = 0; c < chunks && err == CL_SUCCESS; c++) {
		err = upload_chunk(e, c, chunk_of(e, c, chunk_tiles, n), up, produce, ctx, &cb);
		if (cb) {
			rc = cb;
			goto out;
		}
		clFlush(e->xfer);
	}
	if (err == CL_SUCCESS)
		err = clFinish(e->xfer);
	what = "merge kernel launch";
	for (step = 1; err == CL_SUCCESS && step < k; step *= 2) {
		const size_t global = round_up((n + e->sh.merge_items - 1) / e->sh.merge_items,
					       e->sh.merge_wg);
		cl_event ev = NULL;
		err = clSetKernelArg(e->merge_pieces, 0, sizeof e->buf, &e->buf);
		err |= clSetKernelArg(e->merge_pieces, 1, sizeof from, &from);
		err |= clSetKernelArg(e->merge_pieces, 2, sizeof to, &to);
		err |= clSetKernelArg(e->merge_pieces, 3, sizeof bmem, &bmem);
		err |= clSetKernelArg(e->merge_pieces, 4, sizeof kk, &kk);
		err |= clSetKernelArg(e->merge_pieces, 5, sizeof step, &step);
		err |= clSetKernelArg(e->merge_pieces, 6, sizeof nn, &nn);
		if (err == CL_SUCCESS)
			err = clEnqueueNDRangeKernel(e->dev->queue, e->merge_pieces, 1, NULL,
						     &global, &e->sh.merge_wg, 0, NULL, &ev);
		if (err == CL_SUCCESS && e->dev->profiling)
			record_event(e, e->merge_pieces, ev);
		if (done)
			clReleaseEvent(done);
		done = ev;
		from ^= to;
		to ^= from;
		from ^= to;
	}
	rc = finish(e, err, what, e->buf, from, n, chunk_tiles, chunks, &done, false, up, down,
		    consume, ctx);
out:
	clFinish(e->xfer);
	clFinish(e->dev->queue);
	if (up)
		release_events(up, chunks);
	if (down)
		release_events(down, chunks);
	if (done)
		clReleaseEvent(done);
	if (bmem)
		clReleaseMemObject(bmem);
	release_events(e->prof, e->nprof);
	e->nprof = 0;
	free(up);
	free(down);
	free(b64);
	return rc;
}

static void cle_report(const struct engine *base)
{
	const struct cle *e = (const struct cle *)base;
	char line[512], name[32];
	size_t len = 0, i;

	if (e->dev->profiling)
		msg_info(1, "device time: upload %.6f s, sort %.6f s, download %.6f s",
			 e->times.upload, e->times.sort, e->times.download);
	line[0] = '\0';
	for (i = 0; i < NKERNELS; i++) {
		const double s = e->kernel_time[i];
		kernel_at(e, i, name, sizeof name);
		if (s > 0 && len < sizeof line - 64)
			len += (size_t)snprintf(line + len, sizeof line - len, "%s%s %.6f s",
						len ? ", " : "", name, s);
	}
	if (len)
		msg_info(2, "kernel time: %s", line);
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
	uint64_t most = e->c.buffer_bytes;
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
	if (e->c.buffer_percent > 0)
		most = (uint64_t)((double)d->global_mem * e->c.buffer_percent / 100.0);
	if (most == 0)
		most = (uint64_t)((double)d->global_mem * DEVICE_FRACTION);
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

static const struct eng_ops cle_ops = { cle_capacity, cle_sort, cle_merge, cle_report, cle_close };
