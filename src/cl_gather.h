/* The OpenCL engine's gather of records: for a run of words that index
 * fixed-size records, the records go up beside the words, and once the
 * words are sorted a kernel puts the records in their order, on the
 * device, so that what comes down is the output itself (kernels/gather.cl).
 * The host then writes records in order instead of reading each from
 * wherever it lies in the input: a random read a record, which on the GPU
 * machine cost more than the sort and the transfers together.  kv lines
 * likewise: their text goes up, the device finds the lines in it and
 * copies them into the words' order, each with its line end. */
#ifndef CLSORT_CL_GATHER_H
#define CLSORT_CL_GATHER_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cl_build.h"
#include "device.h"

struct clg {
	struct dev_ctx *d;
	size_t wsize;
	cl_program prog;	/* gather_records, built on the first gather */
	cl_kernel kernel;
	cl_mem recs;		/* the records, in index order... */
	cl_mem out;		/* ...and in the words' order, where the sort's free
				 * buffer cannot hold them (or the lines') */
	size_t recs_words;	/* words' worth recs holds */
	/* Lines: their text, the line ends before each stretch of it, where
	 * each line starts, what each work-group's lines come to, and the
	 * output (in out, sized out_words); a program of their own. */
	cl_program lines_prog;
	cl_kernel line_count, line_scan, line_starts, line_sums, line_copy;
	size_t lines_wg;
	cl_mem text, counts, starts, sums;
	size_t text_words, counts_n, starts_n, sums_n, out_words;
	cl_ulong ends[2];	/* starts[0] and starts[n], written from here */
};

/* Lines put in order on the device: the n lines of a text of text_bytes
 * (text_words words' worth), which the sorted words index in order;
 * out_bytes what they come to, each with its line end eol. */
struct clg_lines {
	size_t n, text_words;
	uint64_t text_bytes, out_bytes;
	unsigned char eol;
};

void clg_init(struct clg *g, struct dev_ctx *d, size_t wsize);

/* Room for units words' worth of records, in a buffer for them and, with
 * own_out, in out for their order (the gather's into out is then asked
 * for by name: out may hold an earlier run's lines): 0, or 1 where the
 * device cannot hold them (-vv says so; the host gathers then). */
int clg_prepare(struct clg *g, size_t units, bool own_out);
/* The records' program for options, its kernel's name with it, into j
 * (not built). */
void clg_records_program(const struct clg *g, const char *options, struct clb_job *j);
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

/* Device bytes the lines of l take: their text, where each starts, the
 * output and the kernels' sums. */
uint64_t clg_lines_bytes(const struct clg *g, const struct clg_lines *l);
/* The lines' text buffer from now: buf, of words words' worth, whose first
 * bytes hold their text already; the one before released. */
void clg_take_text(struct clg *g, cl_mem buf, size_t words);
/* Room for the lines of l (clg_lines_bytes).  0, or 1 where the device
 * cannot hold them (-vv says so). */
int clg_prepare_lines(struct clg *g, const struct clg_lines *l);
/* The lines' program for options, its kernels' names with it, into j
 * (not built). */
void clg_lines_program(const struct clg *g, const char *options, struct clb_job *j);
/* The lines' kernels, built with options once the sort's program is.  0
 * or CLS_E_FAIL after a message. */
int clg_build_lines(struct clg *g, const char *options);
/* Enqueue on q, after the nwait events of wait (the text's uploads), the
 * lines of l in the order of the sorted words into g->out, in pieces:
 * once the places of the lines are found (the host waits for that), the
 * copy goes in pieces of the output, so that its download starts behind
 * the first.  ready[c] (retained; the caller releases them) is the event
 * after which chunk c of nchunks of the output, chunk_bytes each, is
 * whole.  record (may be NULL) is told of each piece.  CL_SUCCESS or the
 * error. */
cl_int clg_enqueue_lines(struct clg *g, cl_command_queue q, cl_mem sorted, const struct clg_lines *l,
			 cl_uint nwait, const cl_event *wait, size_t chunk_bytes, size_t nchunks,
			 cl_event *ready, clb_record record, void *ctx);
/* Where a buffer of bytes comes to whole words' worth. */
static inline size_t clg_words(uint64_t bytes, size_t wsize)
{
	return (size_t)((bytes + wsize - 1) / wsize);
}

void clg_release(struct clg *g);

#endif
