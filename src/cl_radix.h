/* The OpenCL engine's LSD radix sort (kernels/radix.cl): words resident
 * in one device buffer sorted through a second, 8-bit digit by digit,
 * each pass counting, scanning and scattering without any work-group
 * waiting for another; digits where all words agree are skipped.  Its
 * program is built only for sorts that run it. */
#ifndef CLSORT_CL_RADIX_H
#define CLSORT_CL_RADIX_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

#include "cl_build.h"
#include "clsort.h"
#include "device.h"

/* Kernels of the radix program, in the order -vv names them. */
#define CLR_NKERNELS 5

struct clr {
	struct dev_ctx *d;
	size_t wsize;			/* bytes per word */
	size_t wg, items, tile;		/* a tile: work-group size x words per work-item */
	size_t max_blocks;		/* work-groups of a pass, at most */
	bool match;			/* the scatter ranks by warp matches (NVIDIA) */
	char options[768];
	bool started;			/* clr_start ran: its build... */
	bool building;			/* ...not yet joined by clr_ready... */
	int ready_rc;			/* ...which returned this */
	struct clb_job job;
	cl_program prog;
	cl_kernel k[CLR_NKERNELS];	/* diff, count, scan_up, scan_top, scatter */
	cl_mem hist, sums, diff;	/* per-block counts, their segments' sums, differing bits */
	size_t hist_blocks;		/* blocks hist has room for */
};

/* The radix sort of wsize-byte words on d, with the shape the device
 * suits (CLSORT_RADIX_WG, CLSORT_RADIX_ITEMS, CLSORT_RADIX_BLOCKS and
 * CLSORT_RADIX_MATCH=0 override, for measurement and tests); base is the engine's program
 * options.  Nothing is built or allocated yet. */
void clr_init(struct clr *r, struct dev_ctx *d, size_t wsize, const char *base);

/* Whether how (--device-sort) sends a run of n words on d through the
 * radix sort, where the networks' program is built or cached
 * (networks_built) or not; n = SIZE_MAX: whether any run may go. */
bool clr_wanted(enum cls_devsort how, const struct dev_ctx *d, size_t n, bool networks_built);

/* The program the sort runs, its options and kernels, into j (not built). */
void clr_program(const struct clr *r, struct clb_job *j);

/* Start building the program on a thread, once. */
void clr_start(struct clr *r);

/* The program built: started here if clr_start was not called, and
 * waited for.  0 or CLS_E_FAIL after a message. */
int clr_ready(struct clr *r);

/* Device bytes a sort needs beside its two buffers of words: small, and
 * the same for any n. */
size_t clr_extra_bytes(const struct clr *r);

/* Enqueue the sort of the n words (n >= 1) of buf on q, in order of
 * their bits from key_low up (the rest kept in the order they come),
 * through buf2 (n words at least), once the nwait events of wait are
 * complete: *result is the buffer that holds them sorted once *done (an
 * event to release) completes.  It reads back which digits differ, so
 * the passes are known before it returns; record (may be NULL) is given
 * each kernel's event.  clr_ready first.  CL_SUCCESS or the failing
 * call's error; -vv says how many passes ran. */
cl_int clr_sort(struct clr *r, cl_command_queue q, cl_mem buf, cl_mem buf2, size_t n,
		unsigned key_low, cl_uint nwait, const cl_event *wait, clb_record record, void *ctx,
		cl_mem *result, cl_event *done);

/* The kernel i (0 to CLR_NKERNELS - 1; NULL when not built) and its name
 * for -vv. */
cl_kernel clr_kernel(const struct clr *r, size_t i, const char **name);

/* Release everything, joining a build still running. */
void clr_release(struct clr *r);

#endif
