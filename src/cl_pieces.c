#include "config.h"
#include "cl_engine_priv.h"

#include <stdio.h>
#include <stdlib.h>

#include "util.h"

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

/* Merge the k sorted pieces of n words (bounds[0] = 0 <= ... <= bounds[k]
 * = n) in log2 k merge-path passes, back and forth between two places in
 * the buffer, where it holds them twice; else sort them.  The words go up
 * and come down in chunks through the staging buffers, as in cle_sort;
 * one piece does not go through the device at all. */
int cle_merge(struct engine *base, size_t n, const size_t *bounds, size_t k, eng_producer produce,
	      eng_consumer consume, void *ctx)
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
	if (stg_make(&e->stg, n))
		return CLS_E_FAIL;
	chunk_tiles = stg_chunk_tiles(&e->stg, false);
	chunks = ((n + e->sh.tile - 1) / e->sh.tile + chunk_tiles - 1) / chunk_tiles;
	/* One piece (a sorted input gives parts of one run): in order already. */
	for (c = 0; k < 2 && c < chunks; c++) {
		const struct stg_chunk ck = stg_chunk(&e->stg, c, chunk_tiles, n);
		if ((rc = produce(ctx, e->stg.host[0], ck.w0, ck.w1 - ck.w0)) != 0 ||
		    (rc = consume(ctx, e->stg.host[0], ck.w0, ck.w1 - ck.w0)) != 0)
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
		err = stg_upload(&e->stg, e->buf, c, stg_chunk(&e->stg, c, chunk_tiles, n), up, produce,
				 ctx, &cb);
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
		const size_t global = cle_round_up((n + e->sh.merge_items - 1) / e->sh.merge_items,
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
			cle_record_event(e, e->merge_pieces, ev);
		if (done)
			clReleaseEvent(done);
		done = ev;
		from ^= to;
		to ^= from;
		from ^= to;
	}
	rc = cle_finish(e, err, what, e->buf, from, n, chunk_tiles, chunks, &done, false, up, chunks,
			down, consume, ctx);
out:
	clFinish(e->xfer);
	clFinish(e->dev->queue);
	if (up)
		stg_release_events(up, chunks);
	if (down)
		stg_release_events(down, chunks);
	if (done)
		clReleaseEvent(done);
	if (bmem)
		clReleaseMemObject(bmem);
	stg_release_events(e->prof, e->nprof);
	e->nprof = 0;
	free(up);
	free(down);
	free(b64);
	return rc;
}
