/* --progress: what phase the sort is in, bytes done of the total, rate and
 * time left, on standard error.  On a terminal one line is redrawn in place
 * about twice a second and erased at the end; elsewhere each phase gets one
 * line when it ends.  Every function is a no-op unless prog_start turned it
 * on, and prog_add costs one atomic add: call it per chunk, not per record. */
#ifndef CLSORT_PROGRESS_H
#define CLSORT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* In the order they come. */
enum prog_phase { PROG_NONE, PROG_READ, PROG_SORT, PROG_MERGE, PROG_WRITE };

/* Turn the report on (when on), before any phase. */
void prog_start(bool on);
/* The bytes every phase but a read of a stream goes through: the input's. */
void prog_total(uint64_t bytes);
/* Phase p begins, and the one before ends; nothing when p is current. */
void prog_phase(enum prog_phase p);
/* bytes more done in phase p, which begins if it comes after the current
 * one; bytes of an earlier phase are not counted.  Not for the write: see
 * prog_output. */
void prog_add(enum prog_phase p, uint64_t bytes);
/* Bytes written to the output: of the merge while one runs, else of the
 * write, which begins once the sort has done all its bytes (with key ranges,
 * counted from what was written by then). */
void prog_output(uint64_t bytes);
/* The sort is over (well or not): the last phase ends, the terminal line
 * is erased, the report stops. */
void prog_end(void);

#endif
