/* The OpenCL engine: runs sorted on an OpenCL device, tile sorts in local
 * memory, then global passes (bitonic merges on a GPU, merge-path merges
 * on a CPU device), the words staged through pinned buffers so that
 * producing, transfers and sorting overlap. */
#ifndef CLSORT_CL_ENGINE_H
#define CLSORT_CL_ENGINE_H

#include "engine.h"

/* Open the device c->device names and build the kernels for c->kind.  0
 * or CLS_E_FAIL after a message. */
int cle_open(struct engine **e, const struct eng_config *c);

#endif
