#include "config.h"
#include "cl_network.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "clsort.h"
#include "devbuild.h"
#include "util.h"

/* Work-items of a global bitonic pass's work-group. */
#define GLOBAL_WG 256

void cln_init(struct cln *s, struct dev_ctx *d, const struct clb_shape *sh, const char *options,
	      clb_record record, void *record_ctx)
{
	memset(s, 0, sizeof *s);
	s->d = d;
	s->sh = sh;
	s->options = options;
	s->record = record;
	s->record_ctx = record_ctx;
}

bool cln_cached(const struct cln *s)
{
	struct clb_job j;

	clb_sort_program(s->sh, s->options, &j);
	return dev_cached(s->d, j.options);
}

void cln_start(struct cln *s)
{
	if (s->started)
		return;
	s->started = true;
	s->job.d = s->d;
	clb_sort_program(s->sh, s->options, &s->job);
	clb_start(&s->job);
	s->building = true;
}

bool cln_built(struct cln *s)
{
	return !s->building || clb_done(&s->job);
}

bool cln_building(const struct cln *s)
{
	return s->building;
}

int cln_ready(struct cln *s)
{
	size_t i = 0;

	if (!s->building)
		return s->ready_rc;
	s->building = false;
	s->ready_rc = clb_join(&s->job);
	if (s->ready_rc)
		return s->ready_rc;
	s->prog = s->job.prog;
	s->tile_sort = s->job.kernels[i++];
	if (s->sh->global_merge) {
		s->merge = s->job.kernels[i++];
	} else {
		unsigned f;
		s->tail = s->job.kernels[i++];
		s->pair = s->job.kernels[i++];
		s->pair_flip = s->job.kernels[i++];
		for (f = 1; f <= s->sh->fuse; f++) {
			s->half[f] = s->job.kernels[i++];
			s->flip[f] = s->job.kernels[i++];
		}
	}
	assert(i == s->job.n);
	return 0;
}

static size_t round_up(size_t v, size_t m)
{
	return (v + m - 1) / m * m;
}

/* Enqueue kernel k over items work-items on q; buf and n are its first
 * arguments, arg2 (a uint or ulong, by its size) the third. */
static cl_int launch(struct cln *s, cl_command_queue q, cl_kernel k, cl_mem buf, size_t items,
		     size_t local, const void *arg2, size_t arg2_size, cl_ulong n, cl_uint nwait,
		     const cl_event *wait, cl_event *ev)
{
	cl_int err = clSetKernelArg(k, 0, sizeof buf, &buf);
	size_t global = round_up(items, local);

	err |= clSetKernelArg(k, 1, sizeof n, &n);
	err |= clSetKernelArg(k, 2, arg2_size, arg2);
	if (err != CL_SUCCESS)
		return CL_INVALID_KERNEL_ARGS;
	err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, nwait, wait, ev);
	if (err == CL_SUCCESS && s->d->profiling && s->record && ev)
		s->record(s->record_ctx, k, *ev);
	return err;
}

/* Does merge stage 2^log_b leave its last global substage (distance
 * TILE) to the pair tail kernels?  When the stage's global substages come
 * to one more than a multiple of sh->fuse, that substage would take a
 * global pass of its own. */
static bool fold_last(const struct cln *s, unsigned log_b)
{
	return (log_b - clb_log2(s->sh->tile)) % s->sh->fuse == 1;
}

/* One of the tile kernels over tiles [t0, t1). */
static cl_int launch_tiles(struct cln *s, cl_command_queue q, cl_kernel k, cl_mem buf, size_t n,
			   size_t t0, size_t t1, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	const cl_ulong first = t0;
	return launch(s, q, k, buf, (t1 - t0) * s->sh->wg, s->sh->wg, &first, sizeof first, n, nwait,
		      wait, ev);
}

cl_int cln_tiles(struct cln *s, cl_command_queue q, cl_mem buf, size_t n, size_t t0, size_t t1,
		 cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	return launch_tiles(s, q, s->tile_sort, buf, n, t0, t1, nwait, wait, ev);
}

/* The tails of merge stage 2^log_b over tiles [t0, t1) (t0 even): one
 * work-group per tile, or per pair of tiles when the stage folds its last
 * global substage into them. */
static cl_int launch_tails(struct cln *s, cl_command_queue q, cl_mem buf, unsigned log_b, size_t n,
			   size_t t0, size_t t1, cl_event *ev)
{
	const cl_ulong first = t0 / 2;
	cl_kernel k;

	if (!fold_last(s, log_b))
		return launch_tiles(s, q, s->tail, buf, n, t0, t1, 0, NULL, ev);
	k = log_b == clb_log2(s->sh->tile) + 1 ? s->pair_flip : s->pair;
	return launch(s, q, k, buf, (t1 - t0 + 1) / 2 * s->sh->wg, s->sh->wg, &first, sizeof first, n,
		      0, NULL, ev);
}

/* The global passes of merge stage 2^log_b: the flip step fused with the
 * half-cleaners after it, then the remaining half-cleaners of distance at
 * least a tile (but the last one when fold_last), sh->fuse substages per
 * pass. */
static cl_int enqueue_stage(struct cln *s, cl_command_queue q, cl_mem buf, size_t n, unsigned log_b)
{
	const unsigned log_t = clb_log2(s->sh->tile);
	unsigned levels = log_b - log_t - (fold_last(s, log_b) ? 1 : 0);
	cl_event ev = NULL, *evp = s->d->profiling ? &ev : NULL;
	unsigned k = levels < s->sh->fuse ? levels : s->sh->fuse;
	const size_t blocks = (n + ((size_t)1 << log_b) - 1) >> log_b;
	const cl_uint arg_b = log_b;
	unsigned log_d;
	cl_int err;

	if (levels == 0)
		return CL_SUCCESS;
	err = launch(s, q, s->flip[k], buf, blocks << (log_b - k), GLOBAL_WG, &arg_b, sizeof arg_b, n,
		     0, NULL, evp);
	if (ev)
		clReleaseEvent(ev);
	levels -= k;
	log_d = log_b - k - 1;
	while (err == CL_SUCCESS && levels) {
		const unsigned kk = levels < s->sh->fuse ? levels : s->sh->fuse;
		const cl_uint log_s = log_d - kk + 1;
		const size_t items = (((n - 1) >> (log_s + kk)) << log_s) + ((size_t)1 << log_s);
		ev = NULL;
		err = launch(s, q, s->half[kk], buf, items, GLOBAL_WG, &log_s, sizeof log_s, n, 0, NULL,
			     evp);
		if (ev)
			clReleaseEvent(ev);
		levels -= kk;
		log_d -= kk;
	}
	return err;
}

/* The merge-path passes, out of place between buf and buf2, each
 * doubling the sorted length from a tile: every chunk is final once the
 * last pass is done. */
static cl_int merge_passes(struct cln *s, cl_command_queue q, cl_mem buf, cl_mem buf2, size_t n,
			   size_t chunks, cl_event *sorted, cl_mem *result)
{
	cl_ulong w, nn = n;
	cl_mem src = buf, dst = buf2, t;
	cl_int err = CL_SUCCESS;
	size_t c;

	for (w = s->sh->tile; err == CL_SUCCESS && w < n; w *= 2) {
		size_t global = round_up((n + s->sh->merge_items - 1) / s->sh->merge_items, s->sh->merge_wg);
		cl_event ev = NULL;
		err = clSetKernelArg(s->merge, 0, sizeof src, &src);
		err |= clSetKernelArg(s->merge, 1, sizeof dst, &dst);
		err |= clSetKernelArg(s->merge, 2, sizeof nn, &nn);
		err |= clSetKernelArg(s->merge, 3, sizeof w, &w);
		if (err == CL_SUCCESS)
			err = clEnqueueNDRangeKernel(q, s->merge, 1, NULL, &global, &s->sh->merge_wg, 0,
						     NULL, &ev);
		if (err == CL_SUCCESS && s->d->profiling && s->record)
			s->record(s->record_ctx, s->merge, ev);
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
	*result = src;
	return err;
}

cl_int cln_passes(struct cln *s, cl_command_queue q, cl_mem buf, cl_mem buf2, size_t n,
		  size_t chunk_tiles, size_t chunks, cl_event *sorted, cl_mem *result)
{
	const size_t tiles = (n + s->sh->tile - 1) / s->sh->tile;
	unsigned log_n = clb_log2(n), log_b;
	cl_int err = CL_SUCCESS;
	size_t c;

	msg_info(2, "device sort: %s", s->sh->global_merge ? "tiles and merge-path passes" :
		 "tiles and bitonic passes");
	*result = buf;
	if (s->sh->global_merge)
		return n > s->sh->tile ? merge_passes(s, q, buf, buf2, n, chunks, sorted, result) :
					 CL_SUCCESS;
	if (((size_t)1 << log_n) < n)
		log_n++;
	for (log_b = clb_log2(s->sh->tile) + 1; err == CL_SUCCESS && log_b <= log_n; log_b++) {
		err = enqueue_stage(s, q, buf, n, log_b);
		if (err != CL_SUCCESS)
			break;
		if (log_b < log_n) {
			cl_event ev = NULL;
			err = launch_tails(s, q, buf, log_b, n, 0, tiles, s->d->profiling ? &ev : NULL);
			if (ev)
				clReleaseEvent(ev);
			continue;
		}
		/* The last stage's tail runs chunk by chunk, so that downloads
		 * start as soon as their part is final. */
		for (c = 0; c < chunks && err == CL_SUCCESS; c++) {
			const size_t t0 = c * chunk_tiles;
			const size_t t1 = t0 + chunk_tiles < tiles ? t0 + chunk_tiles : tiles;
			clReleaseEvent(sorted[c]);
			sorted[c] = NULL;
			err = launch_tails(s, q, buf, log_b, n, t0, t1, &sorted[c]);
		}
	}
	return err;
}

cl_kernel cln_kernel(const struct cln *s, size_t i, char *name, size_t size)
{
	static const char *const names[] = { "tile sort", "tile tail", "pair tail", "pair flip tail",
					     "merge" };
	const cl_kernel fixed[] = { s->tile_sort, s->tail, s->pair, s->pair_flip, s->merge };
	const size_t nfixed = sizeof fixed / sizeof fixed[0];

	if (i < nfixed) {
		if (name)
			snprintf(name, size, "%s", names[i]);
		return fixed[i];
	}
	i -= nfixed;
	if (name)
		snprintf(name, size, "%s_%zu", i < CLB_MAX_FUSE ? "flip" : "half", i % CLB_MAX_FUSE + 1);
	return i < CLB_MAX_FUSE ? s->flip[i + 1] : s->half[i - CLB_MAX_FUSE + 1];
}

void cln_release(struct cln *s)
{
	size_t i;

	/* A build not waited for yet: its kernels are released below. */
	if (s->building)
		cln_ready(s);
	for (i = 0; i < CLN_NKERNELS; i++) {
		const cl_kernel k = cln_kernel(s, i, NULL, 0);
		if (k)
			clReleaseKernel(k);
	}
	if (s->prog)
		clReleaseProgram(s->prog);
}
