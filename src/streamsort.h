/* Sorting a stream while it is read: each part of it that arrives is
 * sorted into a run (on the device or the host engine) while the rest
 * comes; the runs are kept (in memory, in temporary files once they pass
 * half of --memory) and merged when it ends. */
#ifndef CLSORT_STREAMSORT_H
#define CLSORT_STREAMSORT_H

#include <stddef.h>

#include "clsort.h"
#include "encode.h"
#include "input.h"
#include "output.h"

/* Bytes of a run of a stream that o sorts with f, where its runs are
 * sorted while it is read (in_watch's run_bytes); 0 where it is read
 * whole first. */
size_t stream_run_bytes(const struct cls_opts *o, const struct enc_format *f);

/* Bytes a second at most that a stream delivers its first run at, for its
 * runs to be sorted while it is read (in_watch's run_rate). */
double stream_run_rate(void);
/* The rate at or over which a stream no faster than stream_run_rate is
 * looked at again past a second run before it is sorted in runs. */
double stream_near_rate(void);
/* The share of the CPUs' time idle under which a stream that came slow
 * enough is read whole all the same (in_watch's idle_share). */
double stream_idle_share(void);

/* Sort the stream that file still reads (file->stream) into out.  0,
 * CLS_E_PIPE or CLS_E_FAIL after a message. */
int stream_sort(const struct cls_opts *o, const struct enc_format *f, struct in_file *file,
		struct out_writer *out);

#endif
