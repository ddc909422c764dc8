#include "config.h"
#include "cl_gather.h"

#include <stdio.h>
#include <string.h>

#include "cl_build.h"
#include "clsort.h"
#include "util.h"

/* Work-group size of the gather: any the device takes. */
#define GATHER_WG 256

void clg_init(struct clg *g, struct dev_ctx *d, size_t wsize)
{
	memset(g, 0, sizeof *g);
	g->d = d;
	g->wsize = wsize;
}

static void release_mem(cl_mem *m)
{
	if (*m)
		clReleaseMemObject(*m);
	*m = NULL;
}

void clg_release(struct clg *g)
{
	cl_kernel *k[] = { &g->kernel, &g->line_sums, &g->line_scan, &g->line_copy };
	size_t i;

	release_mem(&g->recs);
	release_mem(&g->out);
	release_mem(&g->text);
	release_mem(&g->sums);
	for (i = 0; i < sizeof k / sizeof k[0]; i++) {
		if (*k[i])
			clReleaseKernel(*k[i]);
		*k[i] = NULL;
	}
	if (g->prog)
		clReleaseProgram(g->prog);
	if (g->lines_prog)
		clReleaseProgram(g->lines_prog);
	g->prog = g->lines_prog = NULL;
	g->recs_words = g->text_words = g->sums_n = g->out_words = 0;
}

int clg_prepare(struct clg *g, size_t units, bool own_out)
{
	cl_int err = CL_SUCCESS;

	if (g->recs_words < units) {
		release_mem(&g->recs);
		release_mem(&g->out);
		g->recs_words = g->out_words = 0;
		if (!(g->recs = dev_buffer(g->d, units * g->wsize, &err)))
			goto nomem;
		g->recs_words = units;
	}
	if (own_out && g->out_words < g->recs_words) {
		release_mem(&g->out);
		g->out_words = 0;
		if (!(g->out = dev_buffer(g->d, g->recs_words * g->wsize, &err)))
			goto nomem;
		g->out_words = g->recs_words;
	}
	return 0;
nomem:
	msg_info(2, "device gather: no room for %zu words' worth of records (%s)", units,
		 dev_strerror(err));
	return 1;
}

/* Lines each work-group of the lines' kernels takes: LINES_PER_ITEM
 * (kernels/gather.cl) for each of its work-items. */
#define LINES_PER_ITEM 4

/* The lines' work-groups: GATHER_WG, or the largest power of two the
 * device takes below it. */
static size_t lines_wg(const struct clg *g)
{
	size_t wg = GATHER_WG;

	while (wg > g->d->max_wg)
		wg /= 2;
	return wg;
}

static size_t line_groups(const struct clg *g, size_t n)
{
	const size_t per = lines_wg(g) * LINES_PER_ITEM;
	return (n + per - 1) / per;
}

int clg_prepare_lines(struct clg *g, const struct clg_lines *l)
{
	const size_t out_words = clg_words(l->out_bytes, g->wsize), groups = line_groups(g, l->n);
	cl_int err = CL_SUCCESS;

	if (clg_prepare(g, l->entry_words, false))
		return 1;
	if (g->text_words < l->text_words) {
		release_mem(&g->text);
		g->text_words = 0;
		if (!(g->text = dev_buffer(g->d, l->text_words * g->wsize, &err)))
			goto nomem;
		g->text_words = l->text_words;
	}
	if (g->out_words < out_words) {
		release_mem(&g->out);
		g->out_words = 0;
		if (!(g->out = dev_buffer(g->d, out_words * g->wsize, &err)))
			goto nomem;
		g->out_words = out_words;
	}
	if (g->sums_n < groups) {
		release_mem(&g->sums);
		g->sums_n = 0;
		if (!(g->sums = dev_buffer(g->d, groups * sizeof(cl_ulong), &err)))
			goto nomem;
		g->sums_n = groups;
	}
	return 0;
nomem:
	msg_info(2, "device gather: no room for %zu lines' text (%s)", l->n, dev_strerror(err));
	return 1;
}

int clg_build_lines(struct clg *g, const char *options)
{
	static const char *const names[] = { "line_sums", "line_scan", "line_copy" };
	cl_kernel k[3];
	char opts[640];

	if (g->line_copy)
		return 0;
	g->lines_wg = lines_wg(g);
	snprintf(opts, sizeof opts, "%s -DGATHER_LINES -DLINES_WG=%zu", options, g->lines_wg);
	if (clb_build(g->d, opts, names, 3, &g->lines_prog, k))
		return CLS_E_FAIL;
	g->line_sums = k[0];
	g->line_scan = k[1];
	g->line_copy = k[2];
	return 0;
}

cl_int clg_enqueue_lines(struct clg *g, cl_command_queue q, cl_mem sorted, const struct clg_lines *l,
			 cl_uint nwait, const cl_event *wait, cl_event *done)
{
	const cl_ulong n = l->n, groups = line_groups(g, l->n), base = l->base;
	const cl_uchar eol = l->eol;
	const size_t local = g->lines_wg, global = (size_t)groups * local;
	cl_event summed = NULL, scanned = NULL;
	cl_int err;

	err = clSetKernelArg(g->line_sums, 0, sizeof sorted, &sorted);
	err |= clSetKernelArg(g->line_sums, 1, sizeof g->recs, &g->recs);
	err |= clSetKernelArg(g->line_sums, 2, sizeof g->sums, &g->sums);
	err |= clSetKernelArg(g->line_sums, 3, sizeof n, &n);
	err |= clSetKernelArg(g->line_scan, 0, sizeof g->sums, &g->sums);
	err |= clSetKernelArg(g->line_scan, 1, sizeof groups, &groups);
	err |= clSetKernelArg(g->line_copy, 0, sizeof sorted, &sorted);
	err |= clSetKernelArg(g->line_copy, 1, sizeof g->recs, &g->recs);
	err |= clSetKernelArg(g->line_copy, 2, sizeof g->text, &g->text);
	err |= clSetKernelArg(g->line_copy, 3, sizeof g->out, &g->out);
	err |= clSetKernelArg(g->line_copy, 4, sizeof g->sums, &g->sums);
	err |= clSetKernelArg(g->line_copy, 5, sizeof n, &n);
	err |= clSetKernelArg(g->line_copy, 6, sizeof base, &base);
	err |= clSetKernelArg(g->line_copy, 7, sizeof eol, &eol);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(q, g->line_sums, 1, NULL, &global, &local, nwait, wait,
					     &summed);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(q, g->line_scan, 1, NULL, &local, &local, 1, &summed,
					     &scanned);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(q, g->line_copy, 1, NULL, &global, &local, 1, &scanned,
					     done);
	if (summed)
		clReleaseEvent(summed);
	if (scanned)
		clReleaseEvent(scanned);
	return err;
}

int clg_build(struct clg *g, const char *options)
{
	static const char *const names[] = { "gather_records" };
	char opts[640];

	if (g->kernel)
		return 0;
	snprintf(opts, sizeof opts, "%s -DGATHER", options);
	return clb_build(g->d, opts, names, 1, &g->prog, &g->kernel);
}

cl_int clg_enqueue(struct clg *g, cl_command_queue q, cl_mem sorted, cl_mem out, size_t n,
		   size_t rec_size, cl_uint nwait, const cl_event *wait, cl_event *done)
{
	const cl_ulong nn = n, rs = rec_size;
	const size_t local = GATHER_WG < g->d->max_wg ? GATHER_WG : g->d->max_wg;
	const size_t global = (n + local - 1) / local * local;
	cl_int err;

	err = clSetKernelArg(g->kernel, 0, sizeof sorted, &sorted);
	err |= clSetKernelArg(g->kernel, 1, sizeof g->recs, &g->recs);
	err |= clSetKernelArg(g->kernel, 2, sizeof out, &out);
	err |= clSetKernelArg(g->kernel, 3, sizeof rs, &rs);
	err |= clSetKernelArg(g->kernel, 4, sizeof nn, &nn);
	if (err != CL_SUCCESS)
		return err;
	return clEnqueueNDRangeKernel(q, g->kernel, 1, NULL, &global, &local, nwait, wait, done);
}
