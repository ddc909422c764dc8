#include "config.h"
#include "cl_gather.h"

#include <stdio.h>
#include <stdlib.h>
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
	cl_kernel *k[] = { &g->kernel, &g->line_count, &g->line_scan, &g->line_starts,
			   &g->line_sums, &g->line_copy };
	size_t i;

	release_mem(&g->recs);
	release_mem(&g->out);
	release_mem(&g->text);
	release_mem(&g->counts);
	release_mem(&g->starts);
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
	g->recs_words = g->text_words = g->counts_n = g->starts_n = g->sums_n = g->out_words = 0;
}

/* *m holding at least want units of size bytes, made anew where it holds
 * fewer (*have: the units it holds).  CL_SUCCESS or the error. */
static cl_int room(struct clg *g, cl_mem *m, size_t *have, size_t want, size_t size)
{
	cl_int err = CL_SUCCESS;

	if (*have >= want)
		return CL_SUCCESS;
	release_mem(m);
	*have = 0;
	if ((*m = dev_buffer(g->d, want * size, &err)))
		*have = want;
	return err;
}

int clg_prepare(struct clg *g, size_t units, bool own_out)
{
	cl_int err = room(g, &g->recs, &g->recs_words, units, g->wsize);

	if (err == CL_SUCCESS && own_out)
		err = room(g, &g->out, &g->out_words, units, g->wsize);
	if (err == CL_SUCCESS)
		return 0;
	msg_info(2, "device gather: no room for %zu words' worth of records (%s)", units,
		 dev_strerror(err));
	return 1;
}

/* Lines each work-group of the lines' kernels takes, and bytes of text:
 * LINES_PER_ITEM and TEXT_PER_ITEM (kernels/gather.cl) for each of its
 * work-items. */
#define LINES_PER_ITEM 4
#define TEXT_PER_ITEM 256

/* The lines' work-groups: GATHER_WG, or the largest power of two the
 * device takes below it. */
static size_t lines_wg(const struct clg *g)
{
	size_t wg = GATHER_WG;

	while (wg > g->d->max_wg)
		wg /= 2;
	return wg;
}

static size_t groups_of(uint64_t items, size_t per)
{
	return (size_t)((items + per - 1) / per);
}

static size_t line_groups(const struct clg *g, const struct clg_lines *l)
{
	return groups_of(l->n, lines_wg(g) * LINES_PER_ITEM);
}

static size_t text_groups(const struct clg *g, const struct clg_lines *l)
{
	return groups_of(l->text_bytes, lines_wg(g) * TEXT_PER_ITEM);
}

uint64_t clg_lines_bytes(const struct clg *g, const struct clg_lines *l)
{
	return ((uint64_t)l->text_words + clg_words(l->out_bytes, g->wsize)) * g->wsize +
	       ((uint64_t)l->n + 1 + line_groups(g, l) + text_groups(g, l)) * sizeof(cl_ulong);
}

void clg_take_text(struct clg *g, cl_mem buf, size_t words)
{
	release_mem(&g->text);
	g->text = buf;
	g->text_words = words;
}

int clg_prepare_lines(struct clg *g, const struct clg_lines *l)
{
	cl_int err = room(g, &g->text, &g->text_words, l->text_words, g->wsize);

	if (err == CL_SUCCESS)
		err = room(g, &g->out, &g->out_words, clg_words(l->out_bytes, g->wsize), g->wsize);
	if (err == CL_SUCCESS)
		err = room(g, &g->starts, &g->starts_n, l->n + 1, sizeof(cl_ulong));
	if (err == CL_SUCCESS)
		err = room(g, &g->counts, &g->counts_n, text_groups(g, l), sizeof(cl_ulong));
	if (err == CL_SUCCESS)
		err = room(g, &g->sums, &g->sums_n, line_groups(g, l), sizeof(cl_ulong));
	if (err == CL_SUCCESS)
		return 0;
	msg_info(2, "device gather: no room for %zu lines' text (%s)", l->n, dev_strerror(err));
	return 1;
}

void clg_lines_program(const struct clg *g, const char *options, struct clb_job *j)
{
	static const char *const names[] = { "line_count", "line_scan", "line_starts", "line_sums",
					     "line_copy" };
	size_t i;

	j->d = g->d;
	snprintf(j->options, sizeof j->options, "%s -DGATHER_LINES -DLINES_WG=%zu", options,
		 lines_wg(g));
	for (i = 0; i < 5; i++)
		j->names[i] = names[i];
	j->n = 5;
}

int clg_build_lines(struct clg *g, const char *options)
{
	struct clb_job j;
	cl_kernel k[5];

	if (g->line_copy)
		return 0;
	g->lines_wg = lines_wg(g);
	clg_lines_program(g, options, &j);
	if (clb_build(g->d, j.options, j.names, j.n, &g->lines_prog, k))
		return CLS_E_FAIL;
	g->line_count = k[0];
	g->line_scan = k[1];
	g->line_starts = k[2];
	g->line_sums = k[3];
	g->line_copy = k[4];
	return 0;
}

/* Enqueue kernel k on q over groups work-groups after *after (released,
 * and set to the kernel's event). */
static cl_int run_after(struct clg *g, cl_command_queue q, cl_kernel k, size_t groups,
			cl_event *after)
{
	const size_t local = g->lines_wg, global = groups * local;
	cl_event ev = NULL;
	cl_int err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, *after ? 1 : 0,
					    *after ? after : NULL, &ev);

	if (*after)
		clReleaseEvent(*after);
	*after = ev;
	return err;
}

/* The copy of the lines goes in this many pieces at the most: the
 * download of the output's first chunks waits for the first piece alone.
 * In one, 1 GB of kv lines' copy took an H200 7.4 ms before their download
 * (22 ms) began. */
#define COPY_PIECES 16

/* Enqueue the copy of l's lines, once the places are found (after ev,
 * the sums' scan), in pieces of the line groups: sums[], read back, says
 * where each group's bytes start in the output, and so which piece
 * completes each chunk of it (ready). */
static cl_int copy_in_pieces(struct clg *g, cl_command_queue q, const struct clg_lines *l,
			     cl_event ev, size_t chunk_bytes, size_t nchunks, cl_event *ready,
			     clb_record record, void *ctx)
{
	const size_t lgroups = line_groups(g, l), local = g->lines_wg;
	const size_t pieces = lgroups < COPY_PIECES ? lgroups : COPY_PIECES;
	cl_ulong *sums = malloc(lgroups * sizeof *sums);
	cl_event piece[COPY_PIECES] = { NULL };
	cl_int err;
	size_t p, c;

	if (!sums)
		return CL_OUT_OF_HOST_MEMORY;
	err = clEnqueueReadBuffer(q, g->sums, CL_TRUE, 0, lgroups * sizeof *sums, sums, 1, &ev,
				  NULL);
	for (p = 0; p < pieces && err == CL_SUCCESS; p++) {
		const cl_ulong g0 = lgroups * p / pieces;
		const size_t global = (lgroups * (p + 1) / pieces - g0) * local;
		err = clSetKernelArg(g->line_copy, 7, sizeof g0, &g0);
		if (err == CL_SUCCESS)
			err = clEnqueueNDRangeKernel(q, g->line_copy, 1, NULL, &global, &local, 0, NULL,
						     &piece[p]);
		if (err == CL_SUCCESS && record)
			record(ctx, g->line_copy, piece[p]);
	}
	/* Chunk c is whole once the piece that holds its last byte is: the
	 * pieces run in order. */
	for (c = 0, p = 0; c < nchunks && err == CL_SUCCESS; c++) {
		const uint64_t end = (uint64_t)(c + 1) * chunk_bytes;
		while (p + 1 < pieces && sums[lgroups * (p + 1) / pieces] < end)
			p++;
		ready[c] = piece[p];
		clRetainEvent(ready[c]);
	}
	for (p = 0; p < pieces; p++)
		if (piece[p])
			clReleaseEvent(piece[p]);
	free(sums);
	clFlush(q);
	return err;
}

cl_int clg_enqueue_lines(struct clg *g, cl_command_queue q, cl_mem sorted, const struct clg_lines *l,
			 cl_uint nwait, const cl_event *wait, size_t chunk_bytes, size_t nchunks,
			 cl_event *ready, clb_record record, void *ctx)
{
	const cl_ulong n = l->n, lgroups = line_groups(g, l), tgroups = text_groups(g, l);
	const cl_ulong bytes = l->text_bytes;
	const cl_uchar eol = l->eol;
	cl_event ev = NULL;
	cl_int err;

	/* Where the first line starts, and past the last: the output's size
	 * (a last line without its end gets one). */
	g->ends[0] = 0;
	g->ends[1] = l->out_bytes;
	err = clEnqueueWriteBuffer(q, g->starts, CL_FALSE, 0, sizeof g->ends[0], &g->ends[0], nwait,
				   wait, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueWriteBuffer(q, g->starts, CL_FALSE, n * sizeof(cl_ulong),
					   sizeof g->ends[1], &g->ends[1], 0, NULL, &ev);
	err |= clSetKernelArg(g->line_count, 0, sizeof g->text, &g->text);
	err |= clSetKernelArg(g->line_count, 1, sizeof bytes, &bytes);
	err |= clSetKernelArg(g->line_count, 2, sizeof g->counts, &g->counts);
	err |= clSetKernelArg(g->line_count, 3, sizeof eol, &eol);
	err |= clSetKernelArg(g->line_scan, 0, sizeof g->counts, &g->counts);
	err |= clSetKernelArg(g->line_scan, 1, sizeof tgroups, &tgroups);
	if (err == CL_SUCCESS)
		err = run_after(g, q, g->line_count, tgroups, &ev);
	if (err == CL_SUCCESS)
		err = run_after(g, q, g->line_scan, 1, &ev);
	err |= clSetKernelArg(g->line_starts, 0, sizeof g->text, &g->text);
	err |= clSetKernelArg(g->line_starts, 1, sizeof bytes, &bytes);
	err |= clSetKernelArg(g->line_starts, 2, sizeof g->counts, &g->counts);
	err |= clSetKernelArg(g->line_starts, 3, sizeof g->starts, &g->starts);
	err |= clSetKernelArg(g->line_starts, 4, sizeof eol, &eol);
	if (err == CL_SUCCESS)
		err = run_after(g, q, g->line_starts, tgroups, &ev);
	err |= clSetKernelArg(g->line_sums, 0, sizeof sorted, &sorted);
	err |= clSetKernelArg(g->line_sums, 1, sizeof g->starts, &g->starts);
	err |= clSetKernelArg(g->line_sums, 2, sizeof g->sums, &g->sums);
	err |= clSetKernelArg(g->line_sums, 3, sizeof n, &n);
	if (err == CL_SUCCESS)
		err = run_after(g, q, g->line_sums, lgroups, &ev);
	err |= clSetKernelArg(g->line_scan, 0, sizeof g->sums, &g->sums);
	err |= clSetKernelArg(g->line_scan, 1, sizeof lgroups, &lgroups);
	if (err == CL_SUCCESS)
		err = run_after(g, q, g->line_scan, 1, &ev);
	err |= clSetKernelArg(g->line_copy, 0, sizeof sorted, &sorted);
	err |= clSetKernelArg(g->line_copy, 1, sizeof g->starts, &g->starts);
	err |= clSetKernelArg(g->line_copy, 2, sizeof g->text, &g->text);
	err |= clSetKernelArg(g->line_copy, 3, sizeof g->out, &g->out);
	err |= clSetKernelArg(g->line_copy, 4, sizeof g->sums, &g->sums);
	err |= clSetKernelArg(g->line_copy, 5, sizeof n, &n);
	err |= clSetKernelArg(g->line_copy, 6, sizeof eol, &eol);
	if (err == CL_SUCCESS)
		err = copy_in_pieces(g, q, l, ev, chunk_bytes, nchunks, ready, record, ctx);
	if (ev)
		clReleaseEvent(ev);
	return err;
}

void clg_records_program(const struct clg *g, const char *options, struct clb_job *j)
{
	j->d = g->d;
	snprintf(j->options, sizeof j->options, "%s -DGATHER", options);
	j->names[0] = "gather_records";
	j->n = 1;
}

int clg_build(struct clg *g, const char *options)
{
	struct clb_job j;

	if (g->kernel)
		return 0;
	clg_records_program(g, options, &j);
	return clb_build(g->d, j.options, j.names, j.n, &g->prog, &g->kernel);
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
