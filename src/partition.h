/* Cutting an input into key ranges that each fit one run.
 *
 * Splitters are drawn from a sample of the input's records and ordered by
 * (sortable key, position in the input), so that equal keys are split by
 * position and even an input of one key spreads evenly.  Every record is
 * then copied, on all threads, into the buffer of its range, in input
 * order.  Sorted one after another, each stably, and written in order, the
 * ranges are the sorted output: no merge. */
#ifndef CLSORT_PARTITION_H
#define CLSORT_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "input.h"

/* part_split's answer when a kv line has no key and bad lines are not
 * skipped: sort the input the other way, which names the line. */
#define PART_BAD_LINE (-20)

struct part_set {
	struct in_set *ranges;		/* count of them, in key order */
	size_t count;
	struct in_file *files;		/* one per range, in buf */
	unsigned char *buf;
	size_t buf_len;
};

/* Cut records records of in into ranges that each hold about cap records,
 * threads at a time.  0, PART_BAD_LINE, or CLS_E_FAIL after a message. */
int part_split(const struct enc_format *f, const struct in_set *in, uint64_t records, size_t cap,
	       struct part_set *p);
void part_free(struct part_set *p);

/* Ranges part_split would make of records records with runs of cap. */
size_t part_count(uint64_t records, size_t cap);

#endif
