/* The OpenCL engine: runs sorted on an OpenCL device, tile sorts in local
 * memory, then global passes (bitonic merges on a GPU, merge-path merges
 * on a CPU device), the words staged through pinned buffers so that
 * producing, transfers and sorting overlap. */
#ifndef CLSORT_CL_ENGINE_H
#define CLSORT_CL_ENGINE_H

#include "engine.h"

/* An engine for the device c->device names, sorting c->kind words.  It
 * touches OpenCL only once it has words to sort (eng_capacity for more
 * than a few, or eng_sort): then it opens the device and builds the
 * kernels that sort runs, and eng_merge builds its own when it first
 * merges.  A bad device spec fails there.  0 or CLS_E_FAIL after a
 * message. */
int cle_open(struct engine **e, const struct eng_config *c);

/* Start opening c's device on a thread of its own while the input is
 * read (dev_open_ahead), for the cle_open of the same config that will
 * follow; once it is open, the program a large sort of c's words runs is
 * built there too, for the sort to take. */
void cle_open_ahead(const struct eng_config *c);

#endif
