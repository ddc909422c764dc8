/* Where sorted runs are cut into parts by key, for merges that run part
 * by part on several threads (merge.c) or sort each part again on the
 * device (runs.c): splitters sampled from the runs, each run cut by binary
 * search, whole keys compared where a key is longer than its word. */
#ifndef CLSORT_MERGECUT_H
#define CLSORT_MERGECUT_H

#include <stddef.h>

#include "encode.h"
#include "merge.h"

/* Cut k runs of total bytes into parts by key: cuts[p * k + r] is where
 * part p starts in run r (cuts[parts * k + r] its end).  Splitter keys come
 * from per samples of every run for each part, and each run is cut after
 * its last record with a key at most the splitter, so equal keys share a
 * part.  0, or CLS_E_FAIL after a message when out of memory. */
int mrg_cut(const struct enc_format *f, const struct mrg_run *runs, size_t k, size_t parts,
	    size_t per, size_t total, size_t *cuts);

#endif
