/* The caller answered once the output is complete.  Releasing an NVIDIA
 * GPU (its OpenCL context, its pinned buffers, the driver's end with the
 * process) takes 0.1-0.2 s whatever the sort's size: a fifth of a 1 GiB
 * pipe's time.  So a sort that may open a GPU runs in a child process, the
 * worker: the process the caller started waits for it, passes the signals
 * it gets on to it (and stops when it stops), and ends with its status,
 * or with 0 as soon as the worker's output is whole, named and closed,
 * while the worker goes on to release the device on its own. */
#ifndef CLSORT_ANSWER_H
#define CLSORT_ANSWER_H

#include <stdbool.h>

#include "clsort.h"

/* Start the worker where o is a sort (not -c or -m) that may open a GPU
 * (a device spec other than host and cpu), or any sort where
 * CLSORT_ANSWER is "early"; none where it is "late".  Returns in the worker (or where no
 * worker was started); the caller's process ends in here.  Call it
 * before any thread is started. */
void answer_start(const struct cls_opts *o);

/* Whether this process is a worker whose caller waits for answer_now. */
bool answer_awaited(void);

/* The output is complete and nothing is left to say: answer the caller
 * with status 0 now, and leave the standard streams to /dev/null.  For
 * the worker after its output's finish; elsewhere nothing.  Returns
 * CLS_E_FAIL (after a message) if standard output's close failed, which
 * is then the worker's status, or 0. */
int answer_now(void);

#endif
