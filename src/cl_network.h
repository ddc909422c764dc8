/* The OpenCL engine's network sort (kernels/bitonic.cl, merge.cl): tiles
 * sorted in local memory, then global passes over the words resident in
 * one device buffer (bitonic merges on a GPU, merge-path merges through a
 * second buffer on a CPU device).  Its program is built on a thread while
 * the words come up, and only for sorts that run it. */
#ifndef CLSORT_CL_NETWORK_H
#define CLSORT_CL_NETWORK_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

#include "cl_build.h"
#include "device.h"

/* Kernels of the network program, in the order -vv names them. */
#define CLN_NKERNELS (5 + 2 * CLB_MAX_FUSE)

struct cln {
	struct dev_ctx *d;
	const struct clb_shape *sh;
	const char *options;		/* the engine's program options */
	clb_record record;		/* each kernel's event, when profiling */
	void *record_ctx;
	bool started;			/* cln_start ran: its build... */
	bool building;			/* ...not yet joined by cln_ready... */
	int ready_rc;			/* ...which returned this */
	struct clb_job job;
	cl_program prog;
	cl_kernel tile_sort, tail;
	cl_kernel pair, pair_flip;	/* two tails after the substage of distance TILE */
	cl_kernel half[CLB_MAX_FUSE + 1], flip[CLB_MAX_FUSE + 1];
	cl_kernel merge;		/* sh->global_merge: its passes through buf2 */
};

/* The network sort on d for sorts of shape sh (both outlive it), its
 * programs built with options; record (may be NULL) is given every
 * kernel's event when d profiles.  Nothing is built yet. */
void cln_init(struct cln *s, struct dev_ctx *d, const struct clb_shape *sh, const char *options,
	      clb_record record, void *record_ctx);

/* Whether the program is in the binary cache: a sort would not wait for
 * the device's compiler. */
bool cln_cached(const struct cln *s);

/* Start building the program on a thread, once. */
void cln_start(struct cln *s);

/* Whether the kernels are there or cln_ready would not wait for them. */
bool cln_built(struct cln *s);

/* Whether cln_ready would wait for a build. */
bool cln_building(const struct cln *s);

/* The build cln_start started waited for, once: 0 (also where none
 * started; then there are no kernels) or CLS_E_FAIL after a message. */
int cln_ready(struct cln *s);

/* Enqueue the tile sort of tiles [t0, t1) of the n words of buf on q,
 * once the nwait events of wait are complete; *ev its event. */
cl_int cln_tiles(struct cln *s, cl_command_queue q, cl_mem buf, size_t n, size_t t0, size_t t1,
		 cl_uint nwait, const cl_event *wait, cl_event *ev);

/* Enqueue the global passes that merge the sorted tiles of the n words
 * of buf (through buf2 on a CPU device) on q, after the tile sorts:
 * *result is the buffer that holds the words sorted.  The words are
 * downloaded in chunks of chunk_tiles tiles: sorted[c] (one per chunk,
 * the tile sorts' events on entry) is replaced by the event after which
 * chunk c is final.  CL_SUCCESS or the failing call's error. */
cl_int cln_passes(struct cln *s, cl_command_queue q, cl_mem buf, cl_mem buf2, size_t n,
		  size_t chunk_tiles, size_t chunks, cl_event *sorted, cl_mem *result);

/* The kernel i (0 to CLN_NKERNELS - 1; NULL when not built) and its name
 * for -vv (into name, size bytes). */
cl_kernel cln_kernel(const struct cln *s, size_t i, char *name, size_t size);

/* Release everything, joining a build still running. */
void cln_release(struct cln *s);

#endif
