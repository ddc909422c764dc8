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

void clg_release(struct clg *g)
{
	if (g->recs)
		clReleaseMemObject(g->recs);
	if (g->out)
		clReleaseMemObject(g->out);
	if (g->kernel)
		clReleaseKernel(g->kernel);
	if (g->prog)
		clReleaseProgram(g->prog);
	g->recs = g->out = NULL;
	g->kernel = NULL;
	g->prog = NULL;
	g->recs_words = 0;
}

int clg_prepare(struct clg *g, size_t units, bool own_out)
{
	cl_int err = CL_SUCCESS;

	if (g->recs_words < units) {
		if (g->recs)
			clReleaseMemObject(g->recs);
		if (g->out)
			clReleaseMemObject(g->out);
		g->recs = g->out = NULL;
		g->recs_words = 0;
		if (!(g->recs = dev_buffer(g->d, units * g->wsize, &err)))
			goto nomem;
		g->recs_words = units;
	}
	if (own_out && !g->out && !(g->out = dev_buffer(g->d, g->recs_words * g->wsize, &err)))
		goto nomem;
	return 0;
nomem:
	msg_info(2, "device gather: no room for %zu words' worth of records (%s)", units,
		 dev_strerror(err));
	return 1;
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
