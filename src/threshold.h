/* The host threshold: inputs of up to this many records are sorted on the
 * host without starting OpenCL, because the device would take longer to
 * start than the host takes to sort them.  Both sides are measured where
 * they run (the device's start, release and cost per record on runs of the
 * device auto picks, the host sort's speed on host runs) and kept in the
 * cache, so the threshold follows the machine it is on. */
#ifndef CLSORT_THRESHOLD_H
#define CLSORT_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"

/* Until a device run has measured one. */
#define THR_DEFAULT 4096
/* The host sort holds a whole input's words at once: never more. */
#define THR_MAX ((uint64_t)1 << 24)

struct thr_entry {
	uint64_t records;	/* the threshold */
	double start;		/* seconds to start and release the device */
	double per_record;	/* seconds per record on the device path */
	double host_rate;	/* seconds per record and log2(records) on the host */
	char dev[520];		/* the device it was measured on */
};

/* The cached entry; false when there is none or it is not sound. */
bool thr_load(struct thr_entry *e);

/* Keep e, with its threshold worked out from its measurements; failures
 * only cost the next runs the measurement. */
void thr_store(struct thr_entry *e);

/* host_rate of a host sort of n records that took seconds. */
double thr_rate(size_t n, double seconds);

/* host_rate of host_sort on words of kind, timed on a sample of random
 * words sorted on up to threads threads, as host runs sort them; 0 when
 * the sample cannot be sorted. */
double thr_host_rate(enum word_kind kind, unsigned threads);

/* The largest record count n, at most THR_MAX, at which the host's
 * host_rate * n * log2(n) is still no more than the device's
 * start + per_record * n. */
uint64_t thr_solve(double start, double per_record, double host_rate);

#endif
