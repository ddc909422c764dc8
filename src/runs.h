/* Sorting an input of any size: runs of at most the device's (or host
 * memory's) capacity are sorted one after another; a single run goes
 * straight to the output, more are kept (in memory, or in temporary files
 * when memory is short) and merged. */
#ifndef CLSORT_RUNS_H
#define CLSORT_RUNS_H

#include "clsort.h"
#include "encode.h"
#include "engine.h"
#include "input.h"
#include "output.h"
#include "sortrun.h"
#include "spill.h"

/* Sort everything in `in` into out: on engine e, opened beforehand with
 * runs_config's settings, which it leaves open; or, e NULL, on the engine
 * o->device names (auto: the one chosen for the input's size).  0,
 * CLS_E_PIPE or CLS_E_FAIL. */
int runs_sort_on(const struct cls_opts *o, const struct enc_format *f, const struct in_set *in,
		 struct out_writer *out, struct engine *e);

/* The one OpenCL device spec a sort of about records records of f would
 * run on (as runs_sort_on chooses: -d, or auto by its rates), or NULL for
 * the host engine or several devices.  Prints nothing. */
const char *runs_device(const struct cls_opts *o, const struct enc_format *f, uint64_t records);
/* The same for a stream that has delivered about records records,
 * elapsed seconds after its first look (thr_stream_host_wins): the device
 * to open while the rest arrives, which the sort then takes. */
const char *runs_stream_device(const struct cls_opts *o, const struct enc_format *f,
			       uint64_t records, double elapsed);

/* The most bytes that sorting bytes of f's records from inputs inputs
 * writes (0: not known beforehand). */
uint64_t runs_output_bytes(const struct enc_format *f, uint64_t bytes, size_t inputs);
/* Whether that output is mapped (out_map) where out allows it. */
bool runs_maps_output(const struct enc_format *f, const struct out_writer *out);
/* Whether the output of a stream is worth its room taken while the stream
 * arrives (out_grow): mapped by the sort on any engine, with threads to
 * spare beside the stream's reader and writer. */
bool runs_grows_output(const struct enc_format *f, const struct out_writer *out);

/* The most bytes a run of b's records takes when kept (spl_writer's
 * expect). */
size_t runs_kept_bytes(const struct enc_batch *b);
/* Sort b's run with e into a run of spill, through a writer for bytes:
 * kept, or dropped where the sort fails.  0, CLS_E_PIPE or CLS_E_FAIL. */
int runs_keep(struct spl_set *spill, struct engine *e, const struct enc_format *f,
	      struct enc_batch *b, size_t bytes, struct srt_times *t);

/* --skip-bad: tell how many lines were dropped, fields of them for
 * having fewer fields than the key's. */
void runs_report_skipped(const struct cls_opts *o, uint64_t skipped, uint64_t fields);

/* The most kv lines of f parsed ahead of their sort may take
 * (lineahead.h): as many as a run's words and tables hold within its
 * share of o's memory, and a run's index. */
uint64_t runs_lines_ahead(const struct cls_opts *o, const struct enc_format *f);

/* The settings of the engine that sorts f's records for o on device. */
void runs_config(const struct cls_opts *o, const struct enc_format *f, const char *device,
		 struct eng_config *ec);

/* Most records a run of indexed words may hold: the index is 32 bits
 * wide in a 64-bit word (32-bit keys), and the runs of larger inputs are
 * key ranges or merged.  CLSORT_INDEX_BITS narrows it, so that tests cross
 * the limit on small inputs. */
uint64_t runs_index_limit(void);

#endif
