#include "config.h"
#include "cl_stage.h"

#include <stdlib.h>
#include <string.h>

#include "clsort.h"
#include "util.h"

#define CHUNK_MIN ((size_t)16 << 20)
#define CHUNK_MAX ((size_t)64 << 20)
#define CHUNKS 32

void stg_init(struct stg *s, struct dev_ctx *d, cl_command_queue q, size_t wsize, size_t tile)
{
	const char *forced = getenv("CLSORT_HOST_IDLE");

	memset(s, 0, sizeof *s);
	s->d = d;
	s->q = q;
	s->host_idle = !(d->type & CL_DEVICE_TYPE_CPU) || (forced && !strcmp(forced, "1"));
	s->wsize = wsize;
	s->tile = tile;
}

void stg_release(struct stg *s)
{
	dev_unpin(s->mapq, s->mem, s->host, STG_N);
}

/* STG_N pinned buffers of bytes each on d, mapped through q, into mem and
 * host: CL_SUCCESS, or the error with none left. */
static cl_int make_pinned(struct dev_ctx *d, cl_command_queue q, size_t bytes, cl_mem *mem,
			  void **host)
{
	cl_int err = CL_SUCCESS;
	int i;

	for (i = 0; i < STG_N; i++) {
		mem[i] = clCreateBuffer(d->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL,
					&err);
		if (mem[i])
			host[i] = clEnqueueMapBuffer(q, mem[i], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
						     bytes, 0, NULL, NULL, &err);
		if (!host[i]) {
			dev_unpin(q, mem, host, STG_N);
			return err == CL_SUCCESS ? CL_OUT_OF_HOST_MEMORY : err;
		}
	}
	return CL_SUCCESS;
}

/* The smallest: pinning them takes a thread beside the stream's read
 * 0.03 s each at 64 MiB, and a sort that comes first waits for it (1 GiB
 * of 16-byte records through a pipe on an H200: 0.03 s after the last
 * byte).  Smaller chunks also shorten the first upload and the last copy
 * out, which nothing overlaps; at 1 GiB, nine rounds against 3 x 64 MiB
 * (the output faulted in while the device sorts, both): u32 keys 1.00x,
 * 16-byte records 0.92x, kv lines 0.97x. */
void stg_make_ahead(struct dev_ctx *d)
{
	if (d->stage.bytes)
		return;
	if (make_pinned(d, d->queue, CHUNK_MIN, d->stage.mem, d->stage.host) == CL_SUCCESS)
		d->stage.bytes = CHUNK_MIN;
}

int stg_make(struct stg *s, size_t n)
{
	const size_t pair = 2 * s->tile * s->wsize;
	size_t bytes = n * s->wsize / CHUNKS;
	const double t0 = now_sec();
	cl_int err;

	if (s->host[0])
		return 0;
	if (s->d->stage.bytes >= pair) {
		memcpy(s->mem, s->d->stage.mem, sizeof s->mem);
		memcpy(s->host, s->d->stage.host, sizeof s->host);
		s->bytes = s->d->stage.bytes;
		s->mapq = s->d->queue;
		memset(&s->d->stage, 0, sizeof s->d->stage);
		msg_info(2, "pinned staging buffers of %zu bytes made while the input was read",
			 s->bytes);
		return 0;
	}
	bytes = bytes < CHUNK_MIN ? CHUNK_MIN : bytes > CHUNK_MAX ? CHUNK_MAX : bytes;
	if (bytes < pair)
		bytes = pair;
	if ((err = make_pinned(s->d, s->q, bytes, s->mem, s->host)) != CL_SUCCESS) {
		msg_err("cannot allocate %zu bytes of pinned host memory: %s", bytes, dev_strerror(err));
		return CLS_E_FAIL;
	}
	s->bytes = bytes;
	s->mapq = s->q;
	msg_info(2, "pinned staging buffers of %zu bytes made in %.3f s", bytes, now_sec() - t0);
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

	if (c >= STG_N && up[c - STG_N] && (err = clWaitForEvents(1, &up[c - STG_N])) != CL_SUCCESS)
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
			/* The first chunks on their way: the consumer told. */
			if (d == 0 && s->host_idle && (*rc = consume(ctx, NULL, 0, 0)) != 0)
				break;
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
