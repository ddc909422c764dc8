/* The OpenCL engine's gather of records: for a run of words that index
 * fixed-size records, the records go up beside the words, and once the
 * words are sorted a kernel puts the records in their order, on the
 * device, so that what comes down is the output itself (kernels/gather.cl).
 * The host then writes records in order instead of reading each from
 * wherever it lies in the input: a random read a record, which on the GPU
 * machine cost more than the sort and the transfers together. */
#ifndef CLSORT_CL_GATHER_H
#define CLSORT_CL_GATHER_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

#include "device.h"

struct clg {
	struct dev_ctx *d;
	size_t wsize;
	cl_program prog;	/* gather_records, built on the first gather */
	cl_kernel kernel;
	cl_mem recs;		/* the records, in index order... */
	cl_mem out;		/* ...and in the words' order, where the sort's free
				 * buffer cannot hold them */
	size_t recs_words;	/* words' worth each holds */
};

void clg_init(struct clg *g, struct dev_ctx *d, size_t wsize);

/* Room for units words' worth of records, in a buffer for them and, with
 * own_out, one for their order: 0, or 1 where the device cannot hold them
 * (-vv says so; the host gathers then). */
int clg_prepare(struct clg *g, size_t units, bool own_out);
/* The kernel, built with options (the engine's) where it is not yet: once
 * the sort's own program is built, never beside it (some implementations,
 * Oclgrind's, do not take two builds at once).  0 or CLS_E_FAIL after a
 * message. */
int clg_build(struct clg *g, const char *options);

/* Enqueue on q, after the nwait events of wait (the records' uploads), the
 * gather of the n records of rec_size bytes indexed by the sorted words of
 * sorted into out; *done its event.  CL_SUCCESS or the error. */
cl_int clg_enqueue(struct clg *g, cl_command_queue q, cl_mem sorted, cl_mem out, size_t n,
		   size_t rec_size, cl_uint nwait, const cl_event *wait, cl_event *done);

void clg_release(struct clg *g);

#endif
