/* The room of a stream's output, taken while the stream arrives, for the
 * sort to map (output.h: out_map). */
#ifndef CLSORT_OUTGROW_H
#define CLSORT_OUTGROW_H

#include <stdint.h>

#include "writer.h"

/* The output of an input stream that is still arriving, bytes of it so
 * far, where the sort will map it (out_map): a -o temporary file, or
 * standard output that is a regular file ending at its offset, nothing
 * written yet.  A thread of its own allocates the file's room behind the
 * stream (fallocate), so that out_map finds it taken: in memory (tmpfs)
 * its pages zeroed while the stream is read instead of after it.  Where
 * the sort has 4 threads or more (threads), the same thread then faults
 * the room's pages in through a mapping that out_map takes (a quarter of
 * the memory free at most), which a sort after the stream's end would
 * otherwise wait for (4 GiB on a GPU machine: 0.22-0.27 s).  Called as the
 * stream grows, on the thread that reads it; returns at once.  An
 * allocation that fails stops the thread and is not an error: out_map
 * finds out, as before. */
void out_grow(struct out_writer *w, uint64_t bytes, unsigned threads);
/* Stop out_grow's thread and wait for it: the room it took is the file's
 * sized ahead from then on (out_map maps it; out_finish cuts the file to
 * what was written, out_abort standard output to none of it).  Nothing
 * where no thread runs. */
void out_grow_end(struct out_writer *w);

#endif
