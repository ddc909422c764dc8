/* The whole sort: inputs -> encode -> device sort (runs, merge) -> output. */
#ifndef CLSORT_PIPELINE_H
#define CLSORT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "clsort.h"
#include "encode.h"
#include "input.h"
#include "npy.h"
#include "output.h"

/* Fill the defaults that depend on the machine (memory, temporary
 * directory) into o. */
void cls_defaults(struct cls_opts *o);

/* The inputs opened, their format set up, and what goes out before the
 * sorted records: the npy header, the --header lines. */
struct cls_input {
	struct enc_format f;
	struct in_set in;
	bool opened;
	struct npy_info npy;
	const unsigned char *head;	/* --header lines of the first input */
	size_t head_len;
};

/* Set up the format, open and map every input, read npy headers and cut
 * --header lines off.  0, or CLS_E_FAIL after a message (nothing left
 * open). */
int cls_open_input(const struct cls_opts *o, struct cls_input *ci);
void cls_close_input(struct cls_input *ci);

/* Write what precedes the sorted records to out.  0 or what out_write
 * returns. */
int cls_write_head(const struct cls_opts *o, const struct cls_input *ci, struct out_writer *out);

/* Run the sort (or check) the options describe.  0, CLS_E_DISORDER,
 * CLS_E_PIPE or CLS_E_FAIL; messages are already printed. */
int cls_run(const struct cls_opts *o);

#endif
