/* The OpenCL engine's insides, shared by its start and its buffers
 * (cl_engine.c), its sorts (cl_sort.c) and its merge of sorted pieces
 * (cl_pieces.c). */
#ifndef CLSORT_CL_ENGINE_PRIV_H
#define CLSORT_CL_ENGINE_PRIV_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cl_build.h"
#include "cl_gather.h"
#include "cl_network.h"
#include "cl_radix.h"
#include "cl_stage.h"
#include "device.h"
#include "engine.h"

/* Kernels of an engine: the network sort's, the merge of pieces, the
 * gather of records, the copy of lines, the radix sort's. */
#define NKERNELS (CLN_NKERNELS + 3 + CLR_NKERNELS)
/* Returned when the device cannot hold the words asked for. */
#define CLE_E_NOMEM (-10)
/* Default device budget: this fraction of its global memory. */
#define DEVICE_FRACTION 0.5
/* Runs never hold fewer words than this, whatever the budget. */
#define MIN_RUN 1024

struct cle {
	struct engine base;		/* first: a struct engine * is a struct cle * */
	struct eng_config c;
	struct dev_ctx devc;
	bool started;			/* cle_start ran... */
	int start_rc;			/* ...and returned this */
	bool dev_opened;
	int open_slot;			/* its place among the engines open */
	struct dev_ctx *dev;		/* &devc */
	cl_command_queue xfer;		/* transfers; kernels go on dev->queue */
	struct clb_shape sh;		/* of its sorts, once started */
	char options[512];		/* every program's, before the kernels' own */
	struct cln net;			/* the network sort, its program built while
					 * the first run's words come up */
	cl_program pieces_prog;		/* merge_pieces, once a merge needs it */
	struct clr radix;		/* the radix sort, its program built when a sort
					 * first runs it */
	bool radix_may;			/* --device-sort lets runs go through it: they
					 * need buf2 */
	bool net_cached;		/* the network sort's program was in the cache
					 * (asked only where auto would care) */
	cl_kernel merge_pieces;		/* eng_merge: sorted pieces merged again */
	struct clg gather;		/* eng_sort_records: records put in order */
	cl_mem buf, buf2;
	size_t buf_words;
	struct stg stg;			/* the transfers, on xfer */
	struct {
		double upload, sort, download;
	} times;			/* device time by phase, when profiling */
	cl_event *prof;			/* kernel events of this sort, when profiling */
	cl_kernel *prof_kernel;		/* and which kernel each was */
	size_t nprof, prof_cap;
	double kernel_time[NKERNELS];	/* per kernel (kernel_at), for -vv */
};

/* The device opened and the build of the program a run of about n words
 * needs started, on the first call that has words to sort.  0 or
 * CLS_E_FAIL after a message (kept for every later call). */
int cle_start(struct cle *e, size_t n);
/* The network sort's kernels, once their build has ended (waited for and
 * counted in t_wait).  0 or CLS_E_FAIL after a message. */
int cle_ready(struct cle *e);
/* The same, their build started here where it was not; and the radix
 * sort's, likewise. */
int cle_sort_kernels(struct cle *e);
int cle_radix_kernels(struct cle *e);
/* Whether a run of n words goes through the radix sort: as --device-sort
 * says, auto taking the networks for small runs only where their program
 * is built (or cached). */
bool cle_radix_for(const struct cle *e, size_t n);
/* The device's memory the engine's sorts may take: -S, else a share of
 * what it has. */
uint64_t cle_budget_bytes(const struct cle *e);
/* Whether d puts in order what goes up beside the words, as far as the
 * device goes: not a CPU device (whose gather would read the same memory
 * the host's does, and copy it twice more) unless CLSORT_DEVICE_GATHER=1,
 * and not any with CLSORT_DEVICE_GATHER=0. */
bool cle_gathers_on(const struct dev_ctx *d);
/* The engine's buffers for words words (buf, and buf2 where its sorts
 * need it), those of a stream's words sent while it arrived taken where
 * they are.  0, CLE_E_NOMEM where the device cannot hold them, or
 * CLS_E_FAIL after a message. */
int cle_reserve(struct cle *e, size_t words);
/* Profiling (cl_profile.c): kernel k's event ev counts in -vv's kernel
 * times; the same, for the network and radix sorts (ctx the engine). */
void cle_record_event(struct cle *e, cl_kernel k, cl_event ev);
void cle_record_kernel(void *ctx, cl_kernel k, cl_event ev);
/* Profiling: a sort's transfers (nup uploads, ndown downloads) and its
 * kernels added to the engine's times. */
void cle_add_times(struct cle *e, const cl_event *up, size_t nup, const cl_event *down,
		   size_t ndown);
/* -v: the device's time by phase; -vv: by kernel. */
void cle_report(const struct engine *base);
/* The end of a sort or a merge, whose launches left err (from what they
 * were doing): the n sorted words at word off of result down to consume
 * (ready and each as the download takes them), and the times of the
 * transfers (nup uploads in up) and kernels added.  0, what consume returned, or CLS_E_FAIL
 * after a message. */
int cle_finish(struct cle *e, cl_int err, const char *what, cl_mem result, size_t off, size_t n,
	       size_t chunk_tiles, size_t chunks, cl_event *ready, bool each, const cl_event *up,
	       size_t nup, cl_event *down, eng_consumer consume, void *ctx);
/* The engine's sorts (cl_sort.c) and merge (cl_pieces.c), its eng_ops. */
int cle_sort(struct engine *base, size_t n, eng_producer produce, eng_consumer consume, void *ctx);
int cle_sort_in(struct engine *base, size_t n, void *words, void *room, unsigned low,
		const struct radix_counts *counts, eng_producer produce, eng_consumer consume,
		void *ctx);
int cle_sort_above(struct engine *base, size_t n, unsigned low, eng_producer produce,
		   eng_consumer consume, void *ctx);
int cle_sort_records(struct engine *base, size_t n, size_t rec_size, eng_producer produce,
		     eng_producer records, eng_consumer consume, void *ctx);
int cle_sort_lines(struct engine *base, const struct eng_lines *l, eng_producer produce,
		   eng_consumer consume, void *ctx);
int cle_merge(struct engine *base, size_t n, const size_t *bounds, size_t k, eng_producer produce,
	      eng_consumer consume, void *ctx);

static inline size_t cle_round_up(size_t v, size_t m)
{
	return (v + m - 1) / m * m;
}

#endif
