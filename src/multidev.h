/* Sorting on several devices at once (-d all, -d LIST): the input is cut
 * by sampled splitters into one key range per device, each range is
 * sorted on its device by a thread of its own (in runs when it does not
 * fit, as on one device), and the ranges are written in order, each at
 * its place in the output: no merge.  Equal keys are split by input
 * position, so the output is the one-device sort's, byte for byte. */
#ifndef CLSORT_MULTIDEV_H
#define CLSORT_MULTIDEV_H

#include <stdbool.h>
#include <stdint.h>

#include "clsort.h"
#include "encode.h"
#include "input.h"
#include "output.h"

/* The devices a sort runs on. */
struct md_devices {
	char **specs;		/* one spec of one device each */
	size_t count;
	bool planned;		/* "all": as many of them as pay (md_sort) */
};

/* Expand o->device ("all", a list, or one spec) into the devices to sort
 * on.  0, or CLS_E_FAIL after a message. */
int md_devices(struct md_devices *d, const struct cls_opts *o);
void md_devices_free(struct md_devices *d);

/* Sort in into out on the devices d: on one as runs_sort_on does, on several
 * in key ranges side by side.  For "all", binary records, the devices
 * started, go to several only where each holds its range in one run and
 * the first would not hold the whole input in one: where one device sorts
 * them in one run, their sort is the host's reading and writing, which the
 * cut into ranges only adds to; where the ranges would need runs too, one
 * device's runs merged on the device were measured faster.  Lines go to
 * the first device alone, no other started: their sort is the host's
 * parsing and copying, which the cut into ranges adds a copy to.  A list
 * of devices is always shared.  0, CLS_E_PIPE or CLS_E_FAIL. */
int md_sort(const struct md_devices *d, const struct cls_opts *o, const struct enc_format *f,
	    const struct in_set *in, struct out_writer *out);

/* What sorting key ranges takes, for the ranges of md_sort and of the
 * processes of a distributed sort. */

/* Whether the sorted output of a range cut by the partitioner has exactly
 * the range's bytes (no -u, no --skip-bad: every record is written once;
 * every kv line of a range already ends in its line end). */
bool md_exact(const struct enc_format *f);

/* Whether the ranges' splitters keep each key whole in one range: for -u,
 * string keys and keys longer than their words, whose equal sort words
 * must meet. */
bool md_whole_keys(const struct enc_format *f);

/* Append the whole of file fd (a range sorted into a temporary file) to
 * w.  0, CLS_E_PIPE or CLS_E_FAIL after a message. */
int md_append(struct out_writer *w, int fd);

#endif
