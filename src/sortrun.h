/* Sorting one planned run through an engine into a writer: the records
 * encoded into sort words as the engine asks for them, the sorted words
 * turned back into records.  Helper threads may prepare the input and the
 * output meanwhile (while a device starts): they are joined before the
 * output is first written. */
#ifndef CLSORT_SORTRUN_H
#define CLSORT_SORTRUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "encode.h"
#include "engine.h"
#include "input.h"
#include "output.h"

/* The helper threads: fault in the input's pages, prepare the output's
 * blocks (or its mapping, when its size is known); and, once all of a
 * run's input is staged and the output comes from the words alone, give
 * the input's pages back while the engine sorts. */
struct srt_warm {
	const struct in_set *in;	/* NULL: the input is not the helpers' */
	uint64_t in_bytes;
	struct out_writer *out;
	uint64_t out_bytes;
	bool map_out;		/* map the output, at most out_bytes (cut to
				 * what is written)... */
	bool fault_out;		/* ...and fault its pages in (all of it in
				 * memory at once: a small output) */
	unsigned threads;
	const struct enc_batch *drop;	/* input no longer needed */
	pthread_t in_thread, out_thread, drop_thread;
	bool in_running, out_running, drop_running;
};

void srt_warm_start(struct srt_warm *w);
/* The output is ready: it may be written from now on. */
void srt_warm_out_done(struct srt_warm *w);
/* Join every helper. */
void srt_warm_done(struct srt_warm *w);

/* Time spent sorting runs, summed over them. */
struct srt_times {
	double encode;		/* parsing kv runs whole */
	double sort;		/* the rest: the engine's sort, with producing and writing */
	/* Of sort: filling the engine's words, waiting for the output's
	 * helper, writing the sorted records (as the engine hands them over,
	 * or after the ties), ordering the records tied on their words
	 * (string keys, keys longer than a word) and -u. */
	double produce, warm, consume, ties;
};

/* Whether runs of f are kv lines that the engine may put in order, text
 * and all (eng_sort_lines): not where their ties or -u need the words
 * whole afterwards.  String keys may tie past their words; those of
 * numbers and months rarely do (kvk_fits_word), and are taken to be in
 * order here, so that the engine gets ready for their lines.  Whether a
 * run of string keys is, its words tell (sortrun.c's str_ties). */
bool srt_lines_in_order(const struct enc_format *f);
/* Whether runs of f are bin records that the engine may put in order
 * beside their words (eng_sort_records): not those packed into them. */
bool srt_records_in_order(const struct enc_format *f);

/* Sort the planned run b (its words buffer for kv and -u, its lines for
 * kv) on e and
 * write it to w; warm, when not NULL, is joined before w is first written.
 * 0, CLS_E_PIPE, or CLS_E_FAIL after a message (naming file and line of a
 * bad key). */
int srt_run(struct engine *e, const struct enc_format *f, struct enc_batch *b,
	    struct out_writer *w, struct srt_warm *warm, struct srt_times *t);

/* As srt_run, for a run whose records come as k pieces each already in
 * order, records [bounds[i], bounds[i+1]) of b: the engine may merge them
 * (eng_merge). */
int srt_merge(struct engine *e, const struct enc_format *f, struct enc_batch *b,
	      const size_t *bounds, size_t k, struct out_writer *w, struct srt_times *t);

#endif
