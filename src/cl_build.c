#include "config.h"
#include "cl_build.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clsort.h"
#include "devbuild.h"
#include "util.h"

unsigned clb_log2(size_t v)
{
	unsigned l = 0;
	while (v >>= 1)
		l++;
	return l;
}

/* The kernels fuse up to 6 substages for 32-bit words, 5 for 64-bit ones
 * and 4 for 128-bit ones (FUSE_MAX in bitonic.cl): 64 words per work-item
 * at most, and no more than 128 bytes of them. */
static unsigned max_fuse(size_t wsize)
{
	return wsize == 4 ? CLB_MAX_FUSE : wsize == 8 ? CLB_MAX_FUSE - 1 : CLB_MAX_FUSE - 2;
}

size_t clb_env_size(const char *name, size_t fallback)
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

/* The tile kernels' work-group on a CPU device.  PoCL compiles a kernel
 * for its work-group size at its first launch, and the tile kernel's
 * barriers cost more to compile the more work-items they hold: on 2
 * cores, the first sort of 2^24 u32 keys on a fresh cache took 2.9-3.2 s
 * with 64, 2.3 s with 8, 2.0-2.2 s with 4, against a warm sort of
 * 0.83-0.91 s.  Warm, 4 against 64 (taking turns): u32 1.04-1.06 of the
 * time, u64 1.03, 16-byte records 0.85. */
#define CPU_WG 4

void clb_choose_shape(const struct dev_ctx *d, size_t wsize, bool merge_tile, struct clb_shape *s)
{
	const bool gpu = d->type & CL_DEVICE_TYPE_GPU;
	size_t wg = clb_env_size("CLSORT_WG", gpu ? 256 : CPU_WG);
	size_t ept = clb_env_size("CLSORT_EPT", gpu ? 128 / wsize : wsize == 16 ? 4 : 8);
	const size_t fuse = clb_env_size("CLSORT_FUSE", (size_t)1 << max_fuse(wsize));
	/* The tile with its padding, within three quarters of local memory:
	 * the rest is for what the compiler keeps there itself. */
	const cl_ulong room = d->local_mem / 4 * 3;
	const char *g = getenv("CLSORT_GLOBAL");

	while (wg > 1 && wg > d->max_wg)
		wg /= 2;
	while (wg * ept * wsize * 17 / 16 > room && wg > 1)
		wg /= 2;
	while (wg * ept * wsize * 17 / 16 > room && ept > 2)
		ept /= 2;
	s->wsize = wsize;
	s->wg = wg;
	s->ept = ept;
	s->tile = wg * ept;
	s->merge_tile = merge_tile;
	s->global_merge = !gpu;
	if (g && !strcmp(g, "merge"))
		s->global_merge = true;
	else if (g && !strcmp(g, "bitonic"))
		s->global_merge = false;
	else if (g && *g)
		msg_err("warning: ignoring CLSORT_GLOBAL=%s: use bitonic or merge", g);
	s->merge_items = clb_env_size("CLSORT_MERGE_ITEMS", gpu ? 16 : 4096);
	s->merge_wg = gpu ? 256 : 1;
	s->fuse = clb_log2(fuse);
	if (s->fuse < 1)
		s->fuse = 1;
	if (s->fuse > max_fuse(wsize))
		s->fuse = max_fuse(wsize);
}

void clb_sort_program(const struct clb_shape *s, const char *base, struct clb_job *j)
{
	static const char *const half[] = { "half_1", "half_2", "half_3", "half_4", "half_5", "half_6" };
	static const char *const flip[] = { "flip_1", "flip_2", "flip_3", "flip_4", "flip_5", "flip_6" };
	unsigned i;

	snprintf(j->options, sizeof j->options, "%s -D%s -D%s -DFUSE=%u", base,
		 s->merge_tile ? "TILE_MERGE" : "TILE_BITONIC",
		 s->global_merge ? "GLOBAL_MERGE" : "GLOBAL_BITONIC", s->fuse);
	j->n = 0;
	j->names[j->n++] = s->merge_tile ? "tile_sort_merge" : "tile_sort_bitonic";
	if (s->global_merge) {
		j->names[j->n++] = "merge_pass";
		return;
	}
	j->names[j->n++] = "tile_merge_tail";
	j->names[j->n++] = "tile_pair_tail";
	j->names[j->n++] = "tile_pair_flip_tail";
	for (i = 0; i < s->fuse; i++) {
		j->names[j->n++] = half[i];
		j->names[j->n++] = flip[i];
	}
}

/* The engines open on each device.  PoCL 3.1 keeps the kernels it has
 * loaded in one cache for the whole process, found by the program's build,
 * and fails an assertion when two contexts on one device (a device listed
 * twice) run the same kernel at once; so each engine opened on a device
 * that already has one builds its programs with its own -DINSTANCE: the
 * lowest number that no engine open on the device has. */
#define MAX_OPEN 64
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	cl_device_id id;	/* NULL: a free slot */
	unsigned instance;
} open_on[MAX_OPEN];

int clb_instance_open(cl_device_id id, unsigned *instance)
{
	bool taken[MAX_OPEN + 1] = { false };
	int i, slot = -1;
	unsigned k = 0;

	pthread_mutex_lock(&open_lock);
	for (i = 0; i < MAX_OPEN; i++) {
		if (open_on[i].id == id)
			taken[open_on[i].instance] = true;
		else if (!open_on[i].id && slot < 0)
			slot = i;
	}
	while (taken[k])
		k++;
	if (slot >= 0) {
		open_on[slot].id = id;
		open_on[slot].instance = k;
	}
	pthread_mutex_unlock(&open_lock);
	*instance = k;
	return slot;
}

void clb_instance_close(int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&open_lock);
	open_on[slot].id = NULL;
	pthread_mutex_unlock(&open_lock);
}

/* The kernels' names, for -vv's account of a build. */
static void name_list(const char *const *names, size_t n, char *list, size_t size)
{
	size_t i, len = 0;

	assert(n <= CLB_MAX_KERNELS);
	list[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(list + len, size - len, "%s%s", i ? " " : "", names[i]);
}

void clb_build_early(struct dev_ctx *d, const struct clb_job *j)
{
	char list[CLB_MAX_KERNELS * 24];

	name_list(j->names, j->n, list, sizeof list);
	dev_build_early(d, j->options, list);
}

int clb_build(struct dev_ctx *d, const char *options, const char *const *names, size_t n,
	      cl_program *prog, cl_kernel *kernels)
{
	char list[CLB_MAX_KERNELS * 24];
	size_t i;
	double t0;

	name_list(names, n, list, sizeof list);
	*prog = NULL;
	if (dev_build(d, options, list, prog))
		return CLS_E_FAIL;
	/* Some drivers compile a kernel when it is created: part of the
	 * build's cost. */
	t0 = now_sec();
	for (i = 0; i < n; i++) {
		cl_int err;
		kernels[i] = clCreateKernel(*prog, names[i], &err);
		if (!kernels[i]) {
			msg_err("cannot create kernel %s: %s", names[i], dev_strerror(err));
			while (i-- > 0)
				clReleaseKernel(kernels[i]);
			clReleaseProgram(*prog);
			*prog = NULL;
			return CLS_E_FAIL;
		}
	}
	msg_info(2, "%zu kernel%s created in %.3f s", n, n == 1 ? "" : "s", now_sec() - t0);
	return 0;
}

static void *build_main(void *arg)
{
	struct clb_job *j = arg;
	const int rc = clb_build(j->d, j->options, j->names, j->n, &j->prog, j->kernels);

	pthread_mutex_lock(&j->lock);
	j->rc = rc;
	j->done = true;
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

void clb_start(struct clb_job *j)
{
	pthread_mutex_init(&j->lock, NULL);
	j->done = false;
	j->running = pthread_create(&j->tid, NULL, build_main, j) == 0;
	if (!j->running)
		build_main(j);
}

bool clb_done(struct clb_job *j)
{
	bool done;
	pthread_mutex_lock(&j->lock);
	done = j->done;
	pthread_mutex_unlock(&j->lock);
	return done;
}

int clb_join(struct clb_job *j)
{
	if (j->running)
		pthread_join(j->tid, NULL);
	j->running = false;
	pthread_mutex_destroy(&j->lock);
	return j->rc;
}
