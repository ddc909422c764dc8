/* The host engine: runs sorted in host memory by the radix sort (radix.h)
 * on --parallel threads. */
#ifndef CLSORT_HOST_ENGINE_H
#define CLSORT_HOST_ENGINE_H

#include "engine.h"

/* 0, or CLS_E_FAIL after a message when out of memory. */
int hst_open(struct engine **e, const struct eng_config *c);

#endif
