/* The whole sort: inputs -> encode -> device sort (runs, merge) -> output. */
#ifndef CLSORT_PIPELINE_H
#define CLSORT_PIPELINE_H

#include "clsort.h"

/* Fill the defaults that depend on the machine (memory, temporary
 * directory) into o. */
void cls_defaults(struct cls_opts *o);

/* Run the sort (or check) the options describe.  0, CLS_E_DISORDER,
 * CLS_E_PIPE or CLS_E_FAIL; messages are already printed. */
int cls_run(const struct cls_opts *o);

#endif
