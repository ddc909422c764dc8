/* The OpenCL engine's sort shape and programs: the tile and global passes
 * chosen for the device, and programs that each hold only the kernels
 * those sorts run, built (or loaded from the binary cache) when a sort
 * first needs them. */
#ifndef CLSORT_CL_BUILD_H
#define CLSORT_CL_BUILD_H

#include <CL/cl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "device.h"

/* Most kernels one program holds. */
#define CLB_MAX_KERNELS 16
/* Most substages one global pass fuses in registers (2^K words per
 * work-item); kernels exist for 1..CLB_MAX_FUSE. */
#define CLB_MAX_FUSE 6

/* The shape of an engine's sorts, which its programs are built for. */
struct clb_shape {
	size_t wsize;		/* bytes per sort word */
	size_t wg, ept, tile;	/* a tile: work-group size x words per work-item */
	unsigned fuse;		/* substages fused per global bitonic pass */
	bool merge_tile;	/* the tile kernel: rank-merge, else bitonic */
	/* Global phase by merge-path passes, out of place through a second
	 * buffer, instead of bitonic passes: the better choice on CPU
	 * devices. */
	bool global_merge;
	size_t merge_items, merge_wg;
};

/* The shape of sorts of wsize-byte words on d: tiles within the device's
 * work-group and local-memory limits, and how many substages a global
 * pass fuses.  CLSORT_WG, CLSORT_EPT, CLSORT_FUSE, CLSORT_GLOBAL and
 * CLSORT_MERGE_ITEMS override, for measurement. */
void clb_choose_shape(const struct dev_ctx *d, size_t wsize, bool merge_tile, struct clb_shape *s);

/* The power of two environment variable name holds, else fallback (with
 * a warning where it holds something else). */
size_t clb_env_size(const char *name, size_t fallback);

/* floor(log2(v)), v > 0. */
unsigned clb_log2(size_t v);

/* Take a slot for an engine about to build programs on device id, and the
 * -DINSTANCE its programs' options carry (0: none).  -1 when every slot is
 * taken (the instance still differs from those of the slots). */
int clb_instance_open(cl_device_id id, unsigned *instance);
void clb_instance_close(int slot);

/* Build the program of the embedded kernels for options (from the cache
 * when it has it, else into it), and create the n kernels named in names
 * into kernels.  -vv says what it cost.  0, or CLS_E_FAIL after a message
 * (nothing left to release). */
int clb_build(struct dev_ctx *d, const char *options, const char *const *names, size_t n,
	      cl_program *prog, cl_kernel *kernels);

/* Called with each kernel's event, for profiling. */
typedef void (*clb_record)(void *ctx, cl_kernel k, cl_event ev);

/* clb_build on a thread of its own, so that its caller reads, encodes and
 * uploads the words to sort meanwhile. */
struct clb_job {
	pthread_t tid;
	bool running;
	pthread_mutex_t lock;
	bool done;			/* under lock: the build ended */
	struct dev_ctx *d;
	char options[768];
	const char *names[CLB_MAX_KERNELS];	/* static strings */
	size_t n;
	cl_program prog;		/* what clb_build gives, after clb_join */
	cl_kernel kernels[CLB_MAX_KERNELS];
	int rc;
};

/* The program a sort of shape s runs, into j: its options (base, then
 * those choosing its kernels) and its kernels' names. */
void clb_sort_program(const struct clb_shape *s, const char *base, struct clb_job *j);

/* Build j's program (options, names and n set) on d now, for the clb_build
 * with the same options that will follow (dev_build_early). */
void clb_build_early(struct dev_ctx *d, const struct clb_job *j);

/* Start building j's program (j->d, options, names and n set) on a
 * thread, or build it at once where no thread starts. */
void clb_start(struct clb_job *j);
/* Whether j's build has ended: clb_join would not wait. */
bool clb_done(struct clb_job *j);
/* Wait for j's build, once: clb_build's return, j->prog and j->kernels
 * set. */
int clb_join(struct clb_job *j);

#endif
