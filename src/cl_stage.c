#include "config.h"
#include "cl_stage.h"

#include <string.h>

#include "clsort.h"
#include "util.h"

#define CHUNK_MIN ((size_t)16 << 20)
#define CHUNK_MAX ((size_t)64 << 20)
#define CHUNKS 32

void stg_init(struct stg *s, struct dev_ctx *d, cl_command_queue q, size_t wsize, size_t tile)
{
	memset(s, 0, sizeof *s);
	s->d = d;
	s->q = q;
	s->wsize = wsize;
	s->tile = tile;
}

void stg_release(struct stg *s)
{
	int i;

	for (i = 0; i < STG_N; i++)
		if (s->host[i])
			clEnqueueUnmapMemObject(s->q, s->mem[i], s->host[i], 0, NULL, NULL);
	if (s->mem[0])
		clFinish(s->q);
	for (i = 0; i < STG_N; i++) {
		if (s->mem[i])
			clReleaseMemObject(s->mem[i]);
		s->mem[i] = NULL;
		s->host[i] = NULL;
	}
}

int stg_make(struct stg *s, size_t n)
{
	const size_t pair = 2 * s->tile * s->wsize;
	size_t bytes = n * s->wsize / CHUNKS;
	cl_int err = CL_SUCCESS;
	int i;

	if (s->host[0])
		return 0;
	bytes = bytes < CHUNK_MIN ? CHUNK_MIN : bytes > CHUNK_MAX ? CHUNK_MAX : bytes;
	if (bytes < pair)
		bytes = pair;
	for (i = 0; i < STG_N; i++) {
		s->mem[i] = clCreateBuffer(s->d->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
					   NULL, &err);
		if (s->mem[i])
			s->host[i] = clEnqueueMapBuffer(s->q, s->mem[i], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
							0, bytes, 0, NULL, NULL, &err);
		if (!s->host[i]) {
			msg_err("cannot allocate %zu bytes of pinned host memory: %s", bytes,
				dev_strerror(err));
			stg_release(s);
			return CLS_E_FAIL;
		}
	}
	s->bytes = bytes;
	return 0;
}

size_t stg_chunk_tiles(const struct stg *s, bool pairs)
{
	const size_t t = s->bytes / (s->tile * s->wsize);
	return pairs ? t & ~(size_t)1 : t;
}

struct stg_chunk stg_chunk(const struct stg *s, size_t c, size_t chunk_tiles, size_t n)
{
	const size_t tiles = (n + s->tile - 1) / s->tile;
	struct stg_chunk k;

	k.t0 = c * chunk_tiles;
	k.t1 = k.t0 + chunk_tiles < tiles ? k.t0 + chunk_tiles : tiles;
	k.w0 = k.t0 * s->tile;
	k.w1 = k.t1 * s->tile < n ? k.t1 * s->tile : n;
	return k;
}

void stg_release_events(cl_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ev[i])
			clReleaseEvent(ev[i]);
}

cl_int stg_upload(struct stg *s, cl_mem buf, size_t c, struct stg_chunk k, cl_event *up,
		  eng_producer produce, void *ctx, int *rc)
{
	void *slot = s->host[c % STG_N];
	cl_int err;

	if (c >= STG_N && (err = clWaitForEvents(1, &up[c - STG_N])) != CL_SUCCESS)
		return err;
	if ((*rc = produce(ctx, slot, k.w0, k.w1 - k.w0)) != 0)
		return CL_SUCCESS;
	return clEnqueueWriteBuffer(s->q, buf, CL_FALSE, k.w0 * s->wsize, (k.w1 - k.w0) * s->wsize, slot,
				    0, NULL, &up[c]);
}

cl_int stg_download(struct stg *s, cl_mem result, size_t off, size_t n, size_t chunk_tiles,
		    size_t chunks, cl_event *ready, bool each, cl_event *down, eng_consumer consume,
		    void *ctx, int *rc)
{
	cl_int err = CL_SUCCESS;
	size_t c;

	for (c = 0; c < chunks + STG_N && err == CL_SUCCESS; c++) {
		if (c >= STG_N) {
			const size_t d = c - STG_N;
			const struct stg_chunk k = stg_chunk(s, d, chunk_tiles, n);
			if ((err = clWaitForEvents(1, &down[d])) != CL_SUCCESS)
				break;
			if ((*rc = consume(ctx, s->host[d % STG_N], k.w0, k.w1 - k.w0)) != 0)
				break;
		}
		if (c < chunks) {
			const struct stg_chunk k = stg_chunk(s, c, chunk_tiles, n);
			err = clEnqueueReadBuffer(s->q, result, CL_FALSE, (off + k.w0) * s->wsize,
						  (k.w1 - k.w0) * s->wsize, s->host[c % STG_N], 1,
						  &ready[each ? c : 0], &down[c]);
			clFlush(s->q);
		}
	}
	return err;
}
