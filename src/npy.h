/* NumPy's .npy files (-f npy): a header, then the array's records.
 *
 * Version 1, 2 and 3 headers; C order; one dimension, of plain numbers or
 * of records of a structured dtype whose key field -F names.  The records
 * are then sorted as bin records: npy_open finds the key, its type and the
 * record size, and leaves each input's data and size on its records; the
 * output is written behind a header that describes it. */
#ifndef CLSORT_NPY_H
#define CLSORT_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input.h"
#include "keys.h"
#include "output.h"

struct npy_info {
	const struct key_type *kt;	/* the key field's type */
	size_t itemsize;		/* bytes per record */
	size_t key_off;			/* of the key field in a record */
	/* The first input's header, for the output. */
	unsigned char *header;
	size_t header_len;
	unsigned major;
	char *descr;			/* its 'descr' as written */
	uint64_t header_records;	/* the records that header describes */
	uint64_t records;		/* in all inputs */
};

/* Read the headers of every input (all of one dtype), choose the key
 * field (field: its name, for structured dtypes, else NULL), and cut the
 * headers off the inputs.  0, or CLS_E_FAIL after a one-line message
 * naming the file. */
int npy_open(struct in_set *in, const char *field, struct npy_info *info);

/* Write the header of an output of records records: the first input's
 * where it describes as many, else one of its dtype with that count.  0
 * or what out_write returns. */
int npy_write_header(struct out_writer *w, const struct npy_info *info, uint64_t records);

void npy_free(struct npy_info *info);

#endif
