/* Sorting an input of any size: runs of at most the device's (or host
 * memory's) capacity are sorted one after another; a single run goes
 * straight to the output, more are kept (in memory, or in temporary files
 * when memory is short) and merged. */
#ifndef CLSORT_RUNS_H
#define CLSORT_RUNS_H

#include "clsort.h"
#include "encode.h"
#include "input.h"
#include "output.h"

/* A new temporary file in dir, already unlinked so that nothing is left
 * behind however the process ends.  The fd, or -1 after a message naming
 * the directory. */
int tmp_create(const char *dir);

/* Sort everything in `in` into out.  0, CLS_E_PIPE or CLS_E_FAIL. */
int runs_sort(const struct cls_opts *o, const struct enc_format *f, const struct in_set *in,
	      struct out_writer *out);

/* -m: merge the inputs, each already sorted, into out; an input out of
 * order is an error naming it and the record.  0, CLS_E_PIPE or
 * CLS_E_FAIL. */
int runs_merge(const struct enc_format *f, const struct in_set *in, struct out_writer *out);

#endif
