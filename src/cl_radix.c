#include "config.h"
#include "cl_radix.h"

#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clsort.h"
#include "util.h"

#define BINS 256
/* Entries of hist one work-group of radix_scan_up scans (SCAN_SEG in
 * kernels/radix.cl). */
#define SCAN_ITEMS 8
/* Work-groups of a pass per compute unit, at most: enough to fill a GPU
 * several times over, few enough that each runs many tiles, on which the
 * block's fixed costs (reading its offsets, writing its counts) spread,
 * and that the scan of the counts stays small.  On an H100 (132 compute
 * units, 2^26 u32 keys) 1024 to 4096 work-groups ran within 2% of each
 * other, 512 8% slower. */
#define BLOCKS_PER_CU 8
/* --device-sort=auto: runs of at least this many words go through the
 * radix sort on a GPU, smaller ones through the bitonic networks where
 * their program is built already (in the binary cache); CPU devices keep
 * the tiles and merge-path passes (measured faster on PoCL).  On an H100
 * (contrib/bench/results/h100-radix.md) the networks were faster up to
 * 2^22 words (u32 keys 15.2 against 12.7 Gkeys/s there, u64 6.9 against
 * 4.8), even at 2^24 for u64, and the radix sort from 2^24 u32 keys on
 * (14.4 against 11.2 Gkeys/s; at 2^28 1.9x, u64 1.6x).  But the gain below
 * 2^23 is a fraction of a millisecond, where building the networks'
 * program costs the NVIDIA compiler 2-5 s and the radix sort's 0.5-0.8 s
 * (h100-firstuse.md): a small run on a fresh cache takes the radix sort. */
#define RADIX_MIN ((size_t)1 << 23)

enum { K_DIFF, K_COUNT, K_SCAN_UP, K_SCAN_TOP, K_SCATTER };

static const char *const kernel_names[CLR_NKERNELS] = { "radix_diff", "radix_count",
							 "radix_scan_up", "radix_scan_top",
							 "radix_scatter" };

/* The scatter that ranks a tile by warp matches (RADIX_MATCH in
 * kernels/radix.cl) runs work-groups of BINS work-items, in warps of 32. */
#define MATCH_WG BINS
#define WARP 32

/* Local memory radix_scatter takes (as declared there), bytes. */
static size_t scatter_local(size_t wsize, size_t wg, size_t items, bool match)
{
	const size_t tile = wg * items;
	if (match)
		return tile * wsize + (wg / WARP) * (BINS + 1) * 4 + 2 * BINS * 4 + BINS * 8;
	return (tile + tile / items) * wsize + (16 * wg + 16 * wg / 32) * 4 + wg * 4 +
	       (BINS + 1) * 4 + BINS * 8;
}

/* Whether d's scatter ranks by warp matches: NVIDIA GPUs of compute
 * capability 7.0 and later, which have match.any.sync (inline PTX, which
 * their OpenCL compiler takes), unless CLSORT_RADIX_MATCH=0 or a
 * work-group size other than MATCH_WG is asked for. */
static bool match_for(const struct dev_ctx *d)
{
	const char *env = getenv("CLSORT_RADIX_MATCH");
	const char *wg = getenv("CLSORT_RADIX_WG");
	cl_uint major = 0;

	if ((env && !strcmp(env, "0")) || (wg && *wg && strtoul(wg, NULL, 10) != MATCH_WG))
		return false;
	if (!(d->type & CL_DEVICE_TYPE_GPU) || !strstr(d->platform_name, "NVIDIA") ||
	    d->max_wg < MATCH_WG)
		return false;
	if (clGetDeviceInfo(d->device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
			    NULL) != CL_SUCCESS)
		return false;
	return major >= 7;
}

bool clr_wanted(enum cls_devsort how, const struct dev_ctx *d, size_t n, bool networks_built)
{
	switch (how) {
	case CLS_DEVSORT_RADIX:
		return true;
	case CLS_DEVSORT_BITONIC:
		return false;
	default:
		return (d->type & CL_DEVICE_TYPE_GPU) && (n >= RADIX_MIN || !networks_built);
	}
}

void clr_init(struct clr *r, struct dev_ctx *d, size_t wsize, const char *base)
{
	const bool gpu = d->type & CL_DEVICE_TYPE_GPU;
	const bool match = match_for(d);
	/* Counting rounds: a tile of 16 KiB of words, 16 to 4 words per
	 * work-item, so that a work-group's local memory (about 40 KiB with
	 * the counters) leaves room for several on a compute unit.  Warp
	 * matches: 16 words per work-item (as many as fit for 128-bit
	 * words); on an H100, 2^28 keys, 8 took 1.3x the time of 16 for u32
	 * keys and for u64, 32 1.2x for u32. */
	size_t wg = match ? MATCH_WG : clb_env_size("CLSORT_RADIX_WG", 256);
	size_t items = clb_env_size("CLSORT_RADIX_ITEMS", match ? 16 : 64 / wsize);
	size_t blocks = clb_env_size("CLSORT_RADIX_BLOCKS", 0);

	memset(r, 0, sizeof *r);
	r->d = d;
	r->wsize = wsize;
	r->match = match;
	while (wg > 1 && wg > d->max_wg)
		wg /= 2;
	/* A work-item keeps its words in registers. */
	while (items > 128)
		items /= 2;
	while (items > 1 && scatter_local(wsize, wg, items, r->match) > d->local_mem)
		items /= 2;
	while (!r->match && wg > 1 && scatter_local(wsize, wg, items, false) > d->local_mem)
		wg /= 2;
	r->wg = wg;
	r->items = items;
	r->tile = wg * items;
	if (!blocks)
		blocks = (size_t)(d->compute_units ? d->compute_units : 1) * (gpu ? BLOCKS_PER_CU : 4);
	r->max_blocks = blocks;
	snprintf(r->options, sizeof r->options,
		 "%s -DRADIX -DRADIX_WG=%zu -DRADIX_ITEMS=%zu -DLOG_RADIX_ITEMS=%u%s", base, wg, items,
		 clb_log2(items), r->match ? " -DRADIX_MATCH" : "");
}

void clr_program(const struct clr *r, struct clb_job *j)
{
	size_t i;

	j->d = r->d;
	snprintf(j->options, sizeof j->options, "%s", r->options);
	for (i = 0; i < CLR_NKERNELS; i++)
		j->names[i] = kernel_names[i];
	j->n = CLR_NKERNELS;
}

void clr_start(struct clr *r)
{
	if (r->started)
		return;
	r->started = true;
	clr_program(r, &r->job);
	clb_start(&r->job);
	r->building = true;
}

int clr_ready(struct clr *r)
{
	size_t i;

	clr_start(r);
	if (!r->building)
		return r->ready_rc;
	r->building = false;
	r->ready_rc = clb_join(&r->job);
	if (r->ready_rc)
		return r->ready_rc;
	r->prog = r->job.prog;
	for (i = 0; i < CLR_NKERNELS; i++)
		r->k[i] = r->job.kernels[i];
	msg_info(2, "radix sort: tiles of %zu (work-group %zu x %zu) ranked by %s, up to %zu "
		 "work-groups a pass", r->tile, r->wg, r->items,
		 r->match ? "warp matches" : "two 4-bit counting rounds", r->max_blocks);
	return 0;
}

static size_t hist_entries(size_t blocks)
{
	return BINS * blocks;
}

static size_t seg_count(const struct clr *r, size_t blocks)
{
	const size_t seg = r->wg * SCAN_ITEMS;
	return (hist_entries(blocks) + seg - 1) / seg;
}

size_t clr_extra_bytes(const struct clr *r)
{
	return (hist_entries(r->max_blocks) + seg_count(r, r->max_blocks)) * sizeof(cl_ulong) +
	       5 * sizeof(cl_uint);
}

/* hist, sums and diff for up to blocks blocks. */
static cl_int reserve(struct clr *r, size_t blocks)
{
	cl_int err = CL_SUCCESS;

	if (r->hist && r->hist_blocks >= blocks)
		return CL_SUCCESS;
	if (r->hist)
		clReleaseMemObject(r->hist);
	if (r->sums)
		clReleaseMemObject(r->sums);
	r->hist = clCreateBuffer(r->d->context, CL_MEM_READ_WRITE,
				 hist_entries(blocks) * sizeof(cl_ulong), NULL, &err);
	r->sums = r->hist ? clCreateBuffer(r->d->context, CL_MEM_READ_WRITE,
					   seg_count(r, blocks) * sizeof(cl_ulong), NULL, &err) : NULL;
	if (!r->diff && r->sums)
		r->diff = clCreateBuffer(r->d->context, CL_MEM_READ_WRITE, 5 * sizeof(cl_uint),
					 NULL, &err);
	r->hist_blocks = r->hist && r->sums && r->diff ? blocks : 0;
	return err;
}

static cl_int run(struct clr *r, cl_command_queue q, size_t which, size_t groups, cl_uint nwait,
		  const cl_event *wait, clb_record record, void *ctx, cl_event *ev)
{
	const size_t global = groups * r->wg;
	cl_int err;

	*ev = NULL;
	err = clEnqueueNDRangeKernel(q, r->k[which], 1, NULL, &global, &r->wg, nwait, wait, ev);
	if (err == CL_SUCCESS && record)
		record(ctx, r->k[which], *ev);
	return err;
}

/* Set kernel k's arguments from the list of (size, pointer) pairs. */
static cl_int args(cl_kernel k, unsigned n, const size_t *size, const void *const *val)
{
	cl_int err = CL_SUCCESS;
	unsigned i;
	for (i = 0; i < n; i++)
		err |= clSetKernelArg(k, i, size[i], val[i]);
	return err == CL_SUCCESS ? CL_SUCCESS : CL_INVALID_KERNEL_ARGS;
}

cl_int clr_sort(struct clr *r, cl_command_queue q, cl_mem buf, cl_mem buf2, size_t n,
		unsigned key_low, cl_uint nwait, const cl_event *wait, clb_record record, void *ctx,
		cl_mem *result, cl_event *done)
{
	static const cl_uint zero[5] = { 0, 0, 0, 0, 0 };
	const size_t tiles = (n + r->tile - 1) / r->tile;
	/* A block's counts are 32-bit in local memory: blocks of 2^31 words
	 * at most, whatever max_blocks. */
	const size_t least = (tiles + (((size_t)1 << 31) / r->tile) - 1) / (((size_t)1 << 31) / r->tile);
	size_t blocks = tiles < r->max_blocks ? tiles : r->max_blocks < least ? least : r->max_blocks;
	const size_t per_tiles = (tiles + blocks - 1) / blocks;
	const cl_ulong nn = n, per_block = per_tiles * r->tile;
	cl_uint diff[5] = { 0, 0, 0, 0, 0 }, nb;
	cl_ulong m, ns;
	cl_mem src = buf, dst = buf2;
	cl_event ev = NULL;
	const unsigned bits = (unsigned)r->wsize * 8;
	unsigned low = 0, shift, passes = 0;
	cl_int err;

	*result = buf;
	*done = NULL;
	blocks = (tiles + per_tiles - 1) / per_tiles;
	nb = (cl_uint)blocks;
	m = hist_entries(blocks);
	ns = seg_count(r, blocks);
	if ((err = reserve(r, blocks)) != CL_SUCCESS)
		return err;

	/* The bits where words differ: which digits need a pass. */
	err = clEnqueueWriteBuffer(q, r->diff, CL_FALSE, 0, sizeof zero, zero, 0, NULL, NULL);
	if (err == CL_SUCCESS) {
		const size_t sz[] = { sizeof buf, sizeof nn, sizeof r->diff };
		const void *const val[] = { &buf, &nn, &r->diff };
		err = args(r->k[K_DIFF], 3, sz, val);
	}
	if (err == CL_SUCCESS)
		err = run(r, q, K_DIFF, blocks, nwait, wait, record, ctx, &ev);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(q, r->diff, CL_TRUE, 0, sizeof diff, diff, 0, NULL, NULL);
	if (err != CL_SUCCESS) {
		if (ev)
			clReleaseEvent(ev);
		return err;
	}
	/* The words in order by their low 32, 64 or all bits: no pass on
	 * the digits there. */
	if (!(diff[4] & 1))
		low = 32;
	if (bits >= 64 && !(diff[4] & 2))
		low = 64;
	if (!(diff[4] & 4))
		low = bits;
	/* Bits below the key's: no part of the order. */
	if (low < key_low)
		low = key_low;
	for (shift = low; shift < bits && err == CL_SUCCESS; shift += 8) {
		const cl_uint sh = shift;
		cl_event e2;
		cl_mem t;

		if (!((diff[shift / 32] >> (shift % 32)) & 0xff))
			continue;
		{
			const size_t sz[] = { sizeof src, sizeof nn, sizeof sh, sizeof per_block,
					      sizeof r->hist, sizeof nb };
			const void *const val[] = { &src, &nn, &sh, &per_block, &r->hist, &nb };
			err = args(r->k[K_COUNT], 6, sz, val);
		}
		if (err == CL_SUCCESS)
			err = run(r, q, K_COUNT, blocks, 0, NULL, record, ctx, &e2);
		if (err == CL_SUCCESS) {
			const size_t sz[] = { sizeof r->hist, sizeof m, sizeof r->sums };
			const void *const val[] = { &r->hist, &m, &r->sums };
			clReleaseEvent(e2);
			err = args(r->k[K_SCAN_UP], 3, sz, val);
			if (err == CL_SUCCESS)
				err = run(r, q, K_SCAN_UP, (size_t)ns, 0, NULL, record, ctx, &e2);
		}
		if (err == CL_SUCCESS) {
			const size_t sz[] = { sizeof r->sums, sizeof ns };
			const void *const val[] = { &r->sums, &ns };
			clReleaseEvent(e2);
			err = args(r->k[K_SCAN_TOP], 2, sz, val);
			if (err == CL_SUCCESS)
				err = run(r, q, K_SCAN_TOP, 1, 0, NULL, record, ctx, &e2);
		}
		if (err == CL_SUCCESS) {
			const size_t sz[] = { sizeof src, sizeof dst, sizeof nn, sizeof sh,
					      sizeof per_block, sizeof r->hist, sizeof r->sums,
					      sizeof nb };
			const void *const val[] = { &src, &dst, &nn, &sh, &per_block, &r->hist,
						    &r->sums, &nb };
			clReleaseEvent(e2);
			err = args(r->k[K_SCATTER], 8, sz, val);
			if (err == CL_SUCCESS)
				err = run(r, q, K_SCATTER, blocks, 0, NULL, record, ctx, &e2);
		}
		if (err != CL_SUCCESS)
			break;
		clReleaseEvent(ev);
		ev = e2;
		passes++;
		t = src;
		src = dst;
		dst = t;
	}
	if (err != CL_SUCCESS) {
		clReleaseEvent(ev);
		return err;
	}
	*result = src;
	*done = ev;
	if (key_low)
		msg_info(2, "device sort: radix, %u of %u digit passes (on the bits from %u up)",
			 passes, bits / 8, low);
	else if (low)
		msg_info(2, "device sort: radix, %u of %u digit passes (in order by the low %u bits)",
			 passes, bits / 8, low);
	else
		msg_info(2, "device sort: radix, %u of %u digit passes", passes, bits / 8);
	return CL_SUCCESS;
}

cl_kernel clr_kernel(const struct clr *r, size_t i, const char **name)
{
	static const char *const names[CLR_NKERNELS] = { "radix digits", "radix count",
							  "radix scan", "radix scan top",
							  "radix scatter" };
	if (name)
		*name = names[i];
	return r->k[i];
}

void clr_release(struct clr *r)
{
	size_t i;

	if (r->building)
		clr_ready(r);
	for (i = 0; i < CLR_NKERNELS; i++)
		if (r->k[i])
			clReleaseKernel(r->k[i]);
	if (r->prog)
		clReleaseProgram(r->prog);
	if (r->hist)
		clReleaseMemObject(r->hist);
	if (r->sums)
		clReleaseMemObject(r->sums);
	if (r->diff)
		clReleaseMemObject(r->diff);
	memset(r->k, 0, sizeof r->k);
	r->prog = NULL;
	r->hist = r->sums = r->diff = NULL;
}
