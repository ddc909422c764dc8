/* The sort engines, behind one interface: an engine is opened for one
 * word kind, says how many sort words one run may hold, sorts runs of up
 * to that many (ascending by unsigned value, equal words kept in order),
 * and is closed.  Runs, merge and output do not know which engine they
 * drive: the OpenCL engine (src/cl_engine.c) or the host engine
 * (src/host_engine.c). */
#ifndef CLSORT_ENGINE_H
#define CLSORT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clsort.h"
#include "keys.h"

struct radix_counts;

/* The device name of the host engine. */
#define ENG_HOST "host"

struct eng_config {
	const char *device;	/* ENG_HOST, or an OpenCL device spec */
	enum word_kind kind;
	enum cls_local local;	/* OpenCL: the tile kernel */
	enum cls_devsort devsort;	/* OpenCL: radix or tiles and global passes */
	bool profiling;		/* OpenCL: time the device's work, for -v */
	unsigned threads;	/* host threads */
	uint64_t buffer_bytes;	/* -S in bytes, or... */
	double buffer_percent;	/* ...in percent of the device's memory; both 0: default */
	uint64_t memory;	/* host memory a run may take, all told */
	size_t beside;		/* bytes per record the caller holds beside the engine */
	bool lines;		/* kv lines, which eng_sort_lines may be given */
	bool records;		/* bin records beside their words, which
				 * eng_sort_records may be given */
};

/* Fills dst with words [first, first+count) of the array to sort. */
typedef int (*eng_producer)(void *ctx, void *dst, size_t first, size_t count);
/* Receives sorted words [first, first+count) at src, in order, count 1
 * or more.  Before the first of them, an engine whose sort runs on a
 * device that leaves the host's threads idle (a GPU) calls it once with
 * count 0 (src NULL) while it waits for the sort: time for the consumer
 * to make ready for what comes (the output's pages faulted in). */
typedef int (*eng_consumer)(void *ctx, const void *src, size_t first, size_t count);

struct engine;

/* kv lines that eng_sort_lines puts in order, text and all: the n lines
 * (one word each, which index them in order) of the text_bytes of text
 * fills in units, each line ending in eol but perhaps the last; out_bytes
 * what they come to, each with its line end.  words: where the words lie
 * that the producer of words takes, where they were parsed while a stream
 * arrived (lineahead.h), else NULL; text_at: where the text lies. */
struct eng_lines {
	size_t n;
	eng_producer text;
	uint64_t text_bytes, out_bytes;
	unsigned char eol;
	const void *words;
	const unsigned char *text_at;
};

/* What each engine implements; eng_* below call them. */
struct eng_ops {
	int (*capacity)(struct engine *e, size_t want, size_t *cap);
	int (*sort)(struct engine *e, size_t n, eng_producer produce, eng_consumer consume,
		    void *ctx);
	/* NULL where the engine has no merge of its own: eng_merge sorts. */
	int (*merge)(struct engine *e, size_t n, const size_t *bounds, size_t k,
		     eng_producer produce, eng_consumer consume, void *ctx);
	void (*report)(const struct engine *e);
	void (*close)(struct engine *e);
	/* NULL where the engine cannot: eng_sort_records, eng_sort_lines. */
	int (*sort_records)(struct engine *e, size_t n, size_t rec_size, eng_producer produce,
			    eng_producer records, eng_consumer consume, void *ctx);
	int (*sort_lines)(struct engine *e, const struct eng_lines *l, eng_producer produce,
			  eng_consumer consume, void *ctx);
	/* NULL where the engine cannot: eng_sort_in, eng_sort_above. */
	int (*sort_in)(struct engine *e, size_t n, void *words, void *room, unsigned low,
		       const struct radix_counts *counts, eng_producer produce,
		       eng_consumer consume, void *ctx);
	int (*sort_above)(struct engine *e, size_t n, unsigned low, eng_producer produce,
			  eng_consumer consume, void *ctx);
	/* NULL where the engine has none: eng_spare. */
	void *(*spare)(struct engine *e, const void *sorted, size_t *bytes);
};

/* The part every engine starts with. */
struct engine {
	const struct eng_ops *ops;
	bool host;		/* the host engine */
	char name[560];		/* what it runs on, for messages and the rates */
	double t_once;		/* of opening it, seconds the next open will not take
				 * (kernels built for the cache) */
	double t_ahead;		/* seconds of opening it spent before it was opened:
				 * a device opened while the input was read */
	double t_wait;		/* of its sorts, seconds spent waiting for those
				 * kernels: they are built while the first sort's
				 * words come */
	uint64_t memory;	/* host memory a run may take: the config's, or
				 * eng_set_memory's */
};

/* Whether spec names the host engine (case does not matter). */
bool eng_is_host(const char *spec);

/* Open the engine c->device names: the host engine, or an OpenCL device,
 * which opens and builds its kernels for c->kind once there are words to
 * sort (cl_engine.h).  0 or CLS_E_FAIL after a message. */
int eng_open(struct engine **e, const struct eng_config *c);

/* While the input is read: start opening c->device on a thread of its
 * own for the eng_open of the same config that will follow, and building
 * there what its sort will run (cl_engine.h).  Nothing for the host. */
void eng_open_ahead(const struct eng_config *c);

/* Make room for runs of up to want words (want >= 1), within the engine's
 * budget (device memory, -S, host memory), and set *cap to the most words
 * a run may hold, 1 to want.  0 or CLS_E_FAIL after a message. */
int eng_capacity(struct engine *e, size_t want, size_t *cap);

/* Let e's runs take memory bytes of host memory, where its config gave
 * it another share: for eng_capacity calls from then on. */
void eng_set_memory(struct engine *e, uint64_t memory);

/* Sort n words (at most *cap of eng_capacity): produce fills them, in one
 * call or chunk by chunk, and consume receives them sorted, in order.  0,
 * CLS_E_FAIL, or what a callback returned. */
int eng_sort(struct engine *e, size_t n, eng_producer produce, eng_consumer consume, void *ctx);

/* As eng_sort, for words that index records of rec_size bytes: the
 * records' bytes side by side in index order are taken as words' worth
 * (units of the word's size, the last padded), records fills dst with
 * units [first, first+count) of them, and consume receives units of the
 * records in the order of the sorted words instead of the words.
 * ENG_NO_RECORDS, having called neither, where the engine does not put
 * records in order (the host engine; a device without the memory for
 * them, or a CPU device, unless CLSORT_DEVICE_GATHER=1; never with
 * CLSORT_DEVICE_GATHER=0): eng_sort then. */
#define ENG_NO_RECORDS 1
int eng_sort_records(struct engine *e, size_t n, size_t rec_size, eng_producer produce,
		     eng_producer records, eng_consumer consume, void *ctx);

/* As eng_sort_records, for kv lines: what consume receives is units of
 * the lines themselves in the sorted words' order, each with its line end
 * (the last unit padded), l->out_bytes in all.  ENG_NO_RECORDS, having
 * called nothing, where the engine does not (as eng_sort_records; also
 * where the text does not fit beside the rest). */
int eng_sort_lines(struct engine *e, const struct eng_lines *l, eng_producer produce,
		   eng_consumer consume, void *ctx);

/* As eng_sort (low 0) or eng_sort_above (low: the bits from which the
 * words are ordered), produce filling n words at words, the caller's
 * memory, which the engine sorts them in (and leaves in any order): no
 * copy of them of its own.  room, where not NULL, is n words' worth more
 * of the caller's that the engine may sort through in place of memory of
 * its own, and leave the sorted words in: consume then receives them
 * there (a stream's keys sorted in the output's place).  counts, where
 * not NULL, describes the words at words as produce leaves them (low 0: a
 * stream's bare keys counted while they arrived, keyahead.h), sparing the
 * host's sort its passes that read them.  An OpenCL device, which has
 * memory of its own, sorts them there, produce filling its staging
 * instead: only where words are a stream's whose first words it was sent
 * while they arrived (sendahead.h), which it keeps.  ENG_NO_RECORDS,
 * having called neither, where the engine does not: eng_sort or
 * eng_sort_above then. */
int eng_sort_in(struct engine *e, size_t n, void *words, void *room, unsigned low,
		const struct radix_counts *counts, eng_producer produce, eng_consumer consume,
		void *ctx);

/* As eng_sort, for words whose bits below low take no part in their
 * order (records packed beside their keys, enc_packs): sorted on the bits
 * from low up, equal ones kept in their order.  ENG_NO_RECORDS, having
 * called neither, where the engine does not (an OpenCL device whose sort
 * of n words takes the networks, which order every bit): eng_sort then,
 * of words that order them. */
int eng_sort_above(struct engine *e, size_t n, unsigned low, eng_producer produce,
		   eng_consumer consume, void *ctx);

/* As eng_sort, for n words that come as k pieces each already sorted,
 * piece i being words [bounds[i], bounds[i+1]) (bounds[0] = 0, bounds[k]
 * = n): the engine may merge them rather than sort them, which on the
 * OpenCL engine it does where it can hold them twice (n at most half of
 * *cap).  Equal words come out in piece order either way. */
int eng_merge(struct engine *e, size_t n, const size_t *bounds, size_t k, eng_producer produce,
	      eng_consumer consume, void *ctx);

/* Called from a sort's consume with the sorted words it received: memory
 * the sort went through that does not hold them (the engine's scratch, or
 * the caller's words or room of eng_sort_in that the sorted words left),
 * *bytes long, which consume may use as scratch until it returns.  NULL
 * where there is none (the words come from a device). */
void *eng_spare(struct engine *e, const void *sorted, size_t *bytes);

/* -v: what the engine spent its time on. */
void eng_report(const struct engine *e);

/* Release everything (-vv: how long a device took); e may be NULL.  The
 * seconds it took.  While closes are deferred, a device's engine is kept
 * as it is until eng_close_deferred (0 s). */
double eng_close(struct engine *e);

/* From now on, keep the devices' engines that eng_close is given for
 * eng_close_deferred: their release (an NVIDIA context's is 0.06-0.08 s)
 * then comes after the output is complete and the caller answered
 * (answer.h). */
void eng_defer_closes(void);

/* Close the engines kept since eng_defer_closes, and close the later
 * ones at once again. */
void eng_close_deferred(void);

/* Print the host engine and every OpenCL device on out, marking the one
 * "auto" weighs against the host.  0, or CLS_E_FAIL after a message when
 * OpenCL has no device (the host engine is listed all the same). */
int eng_list(FILE *out, unsigned threads);

#endif
