/* Merging sorted runs into one output, stably: of equal keys, the
 * earlier run's records first.  In one stream (a tournament tree over fixed
 * records, a heap over kv lines), or in parallel: the output cut by
 * sampled keys into parts that threads merge at once. */
#ifndef CLSORT_MERGE_H
#define CLSORT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "output.h"

/* A sorted run in output form: in memory, or in a temporary file, read
 * with pread(2) (data NULL). */
struct mrg_run {
	const unsigned char *data;
	size_t len;
	int fd;			/* its file, or -1 */
	const char *name;	/* its file, for messages */
	unsigned char *heap;	/* the memory data lies in, or NULL */
	unsigned level;		/* merges it took to make */
	const struct in_file *input;	/* -m: the input it is, whose order is checked */
};

/* Merge runs[0..k), given in input order, into w: in parallel parts on
 * f->threads threads, in rounds within memory / 2 bytes, when the runs are
 * in files (files: each piece read with one pread) or large enough
 * (CLSORT_PARALLEL_MERGE_MIN bytes lowers the limit, for tests); else in
 * one stream; behind: a file output's merged bytes are written back to
 * the disk as they come (the page cache is short).  0, CLS_E_PIPE or
 * CLS_E_FAIL. */
int mrg_runs(const struct enc_format *f, const struct mrg_run *runs, size_t k, bool files,
	     bool behind, uint64_t memory, struct out_writer *w);

/* Bytes of a run, at least, that a merge of runs in files reads at once. */
#define MRG_READ_MIN ((size_t)64 << 10)
/* Runs in files that one merge merges at once within memory, each read
 * MRG_READ_MIN bytes or more at a time. */
size_t mrg_fanin(const struct enc_format *f, uint64_t memory);

/* -m: merge the inputs, each already sorted, into out; an input out of
 * order is an error naming it and the record.  0, CLS_E_PIPE or
 * CLS_E_FAIL. */
int mrg_inputs(const struct enc_format *f, const struct in_set *in, struct out_writer *out);

/* Merge runs[0..k) into w in one stream, in one thread, giving nothing
 * back.  0, CLS_E_PIPE or CLS_E_FAIL. */
int mrg_stream(const struct enc_format *f, const struct mrg_run *runs, size_t k,
	       struct out_writer *w);

#endif
