/* Cutting an input into key ranges that each fit one run.
 *
 * Splitters are drawn from a sample of the input's records and ordered by
 * (sortable key, position in the input), so that equal keys are split by
 * position and even an input of one key spreads evenly.  Every record is
 * then copied, on all threads, into the buffer of its range, in input
 * order.  Sorted one after another, each stably, and written in order, the
 * ranges are the sorted output: no merge.  The cut itself, which counts and
 * copies the records by range, and the ranges it makes, are sieve.h's. */
#ifndef CLSORT_PARTITION_H
#define CLSORT_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "input.h"
#include "sieve.h"

/* Cut records records of in into ranges that each hold about cap records,
 * threads at a time: copied into dst, which has room for in's bytes, or
 * where dst is NULL into a buffer of p's own.  0, PART_BAD_LINE, or
 * CLS_E_FAIL after a message. */
int part_split(const struct enc_format *f, const struct in_set *in, uint64_t records, size_t cap,
	       unsigned char *dst, struct part_set *p);

/* Cut records records of in into up to nranges ranges of about equal
 * size, from per samples a range; whole_keys: every key in one range (for
 * -u and string keys, whose equal words must meet), else equal keys split
 * by position; copied into dst or a buffer of p's own, as part_split.
 * Same returns as part_split. */
int part_split_n(const struct enc_format *f, const struct in_set *in, uint64_t records,
		 size_t nranges, size_t per, bool whole_keys, unsigned char *dst, struct part_set *p);

/* The pieces of part_split_n, for inputs cut over several processes,
 * where in is a slice of the inputs that starts base bytes into them (the
 * positions that break ties are global). */

/* A sampled record, and the share of the records it stands for. */
struct part_sample {
	struct part_key at;
	double weight;
};

/* Sample up to want records of in into out (want of them); returns how
 * many were taken (kv lines without a key are not). */
size_t part_sample(const struct enc_format *f, const struct in_set *in, uint64_t base,
		   size_t want, struct part_sample *out);

/* Sort the got samples and pick up to nranges - 1 splitters from them into
 * sp, in order; returns how many. */
size_t part_splitters(struct part_sample *smp, size_t got, size_t nranges, bool whole_keys,
		      struct part_key *sp);

/* Sample records records of in, per a range, and pick up to nranges - 1
 * splitters into sp (room for nranges), as part_split_n does; returns
 * how many, or SIZE_MAX after a message. */
size_t part_pick(const struct enc_format *f, const struct in_set *in, uint64_t records,
		 size_t nranges, size_t per, bool whole_keys, struct part_key *sp);

/* Copy every record of in into the range the nsp splitters sp give it:
 * p gets nsp + 1 ranges, in dst or a buffer of its own (as part_split).
 * Same returns as part_split. */
int part_scatter(const struct enc_format *f, const struct in_set *in, uint64_t base,
		 const struct part_key *sp, size_t nsp, unsigned char *dst, struct part_set *p);

/* Ranges part_split would make of records records with runs of cap. */
size_t part_count(uint64_t records, size_t cap);

#endif
