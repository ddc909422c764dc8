#include "config.h"
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_FUSE 4

struct engine {
	struct dev_ctx *dev;
	enum word_kind kind;
	size_t wsize;
	size_t wg, ept, tile;
	cl_program prog;
	cl_kernel tile_sort, tail;
	cl_kernel half[MAX_FUSE + 1], flip[MAX_FUSE + 1];
	cl_mem buf;
	size_t buf_words;
	struct eng_times times;
};

static unsigned log2_floor(size_t v)
{
	unsigned l = 0;
	while (v >>= 1)
		l++;
	return l;
}

static size_t env_size(const char *name, size_t fallback)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;
	if (!s || !*s)
		return fallback;
	v = strtoul(s, &end, 10);
	if (*end || v == 0 || (v & (v - 1))) {
		msg_err("warning: ignoring %s=%s: not a power of two", name, s);
		return fallback;
	}
	return v;
}

/* Tile shape: work-group size times words per work-item, within the
 * device's work-group and local-memory limits.  CLSORT_WG and CLSORT_EPT
 * override, for measurement. */
static void choose_tile(struct engine *e)
{
	const struct dev_ctx *d = e->dev;
	bool gpu = d->type & CL_DEVICE_TYPE_GPU;
	size_t wg = env_size("CLSORT_WG", gpu ? 256 : 64);
	size_t ept = env_size("CLSORT_EPT", e->wsize == 16 ? 4 : 8);

	while (wg > 1 && wg > d->max_wg)
		wg /= 2;
	/* Leave room for what the compiler keeps in local memory itself. */
	while (wg * ept * e->wsize > d->local_mem / 2 && wg > 1)
		wg /= 2;
	while (wg * ept * e->wsize > d->local_mem / 2 && ept > 2)
		ept /= 2;
	e->wg = wg;
	e->ept = ept;
	e->tile = wg * ept;
}

static cl_kernel make_kernel(struct engine *e, const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(e->prog, name, &err);
	if (!k)
		msg_err("cannot create kernel %s: %s", name, dev_strerror(err));
	return k;
}

int eng_open(struct engine **out, struct dev_ctx *d, enum word_kind kind, enum cls_local local)
{
	struct engine *e = calloc(1, sizeof *e);
	char options[256], name[16];
	int i;

	if (!e) {
		msg_err("out of memory");
		return CLS_E_FAIL;
	}
	e->dev = d;
	e->kind = kind;
	e->wsize = word_size(kind);
	choose_tile(e);
	snprintf(options, sizeof options, "-DWORD_BITS=%zu -DWG=%zu -DEPT=%zu", e->wsize * 8,
		 e->wg, e->ept);
	if (dev_build(d, options, &e->prog))
		goto fail;
	e->tile_sort = make_kernel(e, local == CLS_LOCAL_MERGE ? "tile_sort_merge" : "tile_sort_bitonic");
	e->tail = make_kernel(e, "tile_merge_tail");
	if (!e->tile_sort || !e->tail)
		goto fail;
	for (i = 1; i <= MAX_FUSE; i++) {
		snprintf(name, sizeof name, "half_%d", i);
		if (!(e->half[i] = make_kernel(e, name)))
			goto fail;
		snprintf(name, sizeof name, "flip_%d", i);
		if (!(e->flip[i] = make_kernel(e, name)))
			goto fail;
	}
	msg_info(2, "%zu-bit words: tiles of %zu (work-group %zu x %zu), %s tile kernel",
		 e->wsize * 8, e->tile, e->wg, e->ept, local == CLS_LOCAL_MERGE ? "merge" : "bitonic");
	*out = e;
	return 0;
fail:
	eng_close(e);
	return CLS_E_FAIL;
}

void eng_close(struct engine *e)
{
	int i;
	if (!e)
		return;
	if (e->buf)
		clReleaseMemObject(e->buf);
	for (i = 1; i <= MAX_FUSE; i++) {
		if (e->half[i])
			clReleaseKernel(e->half[i]);
		if (e->flip[i])
			clReleaseKernel(e->flip[i]);
	}
	if (e->tile_sort)
		clReleaseKernel(e->tile_sort);
	if (e->tail)
		clReleaseKernel(e->tail);
	if (e->prog)
		clReleaseProgram(e->prog);
	free(e);
}

size_t eng_max_words(const struct engine *e)
{
	return (size_t)(e->dev->max_alloc / e->wsize);
}

static bool is_nomem(cl_int err)
{
	return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
	       err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

int eng_reserve(struct engine *e, size_t words)
{
	cl_int err;
	const cl_uchar zero = 0;

	if (e->buf && e->buf_words >= words)
		return 0;
	if (e->buf)
		clReleaseMemObject(e->buf);
	e->buf = NULL;
	e->buf_words = 0;
	if (words == 0)
		return 0;
	if (words > eng_max_words(e))
		return ENG_E_NOMEM;
	e->buf = clCreateBuffer(e->dev->context, CL_MEM_READ_WRITE, words * e->wsize, NULL, &err);
	/* Some drivers allocate on first use: touch the buffer's last byte. */
	if (e->buf)
		err = clEnqueueFillBuffer(e->dev->queue, e->buf, &zero, 1, words * e->wsize - 1, 1, 0,
					  NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(e->dev->queue);
	if (err != CL_SUCCESS) {
		if (e->buf)
			clReleaseMemObject(e->buf);
		e->buf = NULL;
		if (is_nomem(err)) {
			msg_info(1, "device buffer of %zu words failed (%s)", words, dev_strerror(err));
			return ENG_E_NOMEM;
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

static cl_int launch(struct engine *e, cl_kernel k, size_t items, size_t local, cl_uint arg2,
		     bool has_arg2, cl_ulong n, cl_event *ev)
{
	cl_int err = clSetKernelArg(k, 0, sizeof e->buf, &e->buf);
	size_t global = round_up(items, local);

	err |= clSetKernelArg(k, 1, sizeof n, &n);
	if (has_arg2)
		err |= clSetKernelArg(k, 2, sizeof arg2, &arg2);
	if (err != CL_SUCCESS)
		return CL_INVALID_KERNEL_ARGS;
	return clEnqueueNDRangeKernel(e->dev->queue, k, 1, NULL, &global, &local, 0, NULL, ev);
}

static double event_seconds(cl_event first, cl_event last)
{
	cl_ulong start = 0, end = 0;
	if (clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ||
	    clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL))
		return 0;
	return end > start ? (double)(end - start) * 1e-9 : 0;
}

/* Enqueue the whole network over the buffer's first n words. */
static cl_int enqueue_network(struct engine *e, size_t n, cl_event *first, cl_event *last)
{
	const size_t gwg = 256;
	const unsigned log_t = log2_floor(e->tile);
	unsigned log_n = log2_floor(n), log_b;
	cl_int err;

	if (((size_t)1 << log_n) < n)
		log_n++;
	err = launch(e, e->tile_sort, (n + e->tile - 1) / e->tile * e->wg, e->wg, 0, false, n, first);
	for (log_b = log_t + 1; err == CL_SUCCESS && log_b <= log_n; log_b++) {
		/* Substages of distance >= tile go through global memory, up to
		 * MAX_FUSE at a time in registers; the first one fused with the
		 * flip step. */
		unsigned levels = log_b - log_t;
		unsigned k = levels < MAX_FUSE ? levels : MAX_FUSE;
		size_t blocks = (n + ((size_t)1 << log_b) - 1) >> log_b;
		unsigned log_d;

		err = launch(e, e->flip[k], blocks << (log_b - k), gwg, log_b, true, n, NULL);
		levels -= k;
		log_d = log_b - k - 1;
		while (err == CL_SUCCESS && levels) {
			unsigned kk = levels < MAX_FUSE ? levels : MAX_FUSE;
			unsigned log_s = log_d - kk + 1;
			size_t items = (((n - 1) >> (log_s + kk)) << log_s) + ((size_t)1 << log_s);
			err = launch(e, e->half[kk], items, gwg, log_s, true, n, NULL);
			levels -= kk;
			log_d -= kk;
		}
		if (err == CL_SUCCESS)
			err = launch(e, e->tail, (n + e->tile - 1) / e->tile * e->wg, e->wg, 0, false, n,
				     NULL);
	}
	/* A marker closes the sort, for its end time. */
	if (err == CL_SUCCESS && e->dev->profiling)
		err = clEnqueueMarkerWithWaitList(e->dev->queue, 0, NULL, last);
	return err;
}

int eng_sort(struct engine *e, void *words, size_t n)
{
	cl_command_queue q = e->dev->queue;
	cl_event up = NULL, s0 = NULL, s1 = NULL, down = NULL;
	const bool prof = e->dev->profiling;
	cl_int err;
	int rc = CLS_E_FAIL;

	if (n < 2)
		return 0;
	if (eng_reserve(e, n) != 0) {
		msg_err("cannot hold %zu words on the device", n);
		return CLS_E_FAIL;
	}
	err = clEnqueueWriteBuffer(q, e->buf, CL_FALSE, 0, n * e->wsize, words, 0, NULL,
				   prof ? &up : NULL);
	if (err != CL_SUCCESS) {
		dev_fail("upload to the device failed", err);
		goto out;
	}
	err = enqueue_network(e, n, prof ? &s0 : NULL, prof ? &s1 : NULL);
	if (err != CL_SUCCESS) {
		dev_fail("sort kernel launch failed", err);
		goto out;
	}
	err = clEnqueueReadBuffer(q, e->buf, CL_TRUE, 0, n * e->wsize, words, 0, NULL,
				  prof ? &down : NULL);
	if (err != CL_SUCCESS) {
		dev_fail("download from the device failed", err);
		goto out;
	}
	if (prof) {
		e->times.upload += event_seconds(up, up);
		e->times.sort += event_seconds(s0, s1);
		e->times.download += event_seconds(down, down);
	}
	rc = 0;
out:
	if (rc)
		clFinish(q);
	if (up)
		clReleaseEvent(up);
	if (s0)
		clReleaseEvent(s0);
	if (s1)
		clReleaseEvent(s1);
	if (down)
		clReleaseEvent(down);
	return rc;
}

void eng_times(const struct engine *e, struct eng_times *t)
{
	*t = e->times;
}

static int cmp32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp128(const void *a, const void *b)
{
	const struct word128 *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

void host_sort(void *words, size_t n, enum word_kind kind)
{
	qsort(words, n, word_size(kind), kind == WORD32 ? cmp32 : kind == WORD64 ? cmp64 : cmp128);
}
