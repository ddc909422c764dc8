/* Keeping the sorted runs of an input until they are merged: in memory, or
 * in temporary files when memory is short.  Files are merged fan-in at a
 * time as they come, so that the files open at once stay within the
 * descriptors left. */
#ifndef CLSORT_SPILL_H
#define CLSORT_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "merge.h"
#include "output.h"

struct spl_set {
	const struct enc_format *f;
	const char *tmpdir;
	uint64_t memory;	/* --memory, for the merges' rounds */
	bool files;		/* runs go to temporary files */
	uint64_t cache_room;	/* files: the page cache they may take, about... */
	uint64_t spilled;	/* ...and the bytes written to them so far... */
	bool behind;		/* ...past which their pages are written back as
				 * they come, as is a merge's output */
	unsigned fanin;
	struct mrg_run *runs;
	size_t n, cap;
	unsigned merges;	/* merge passes */
	double t_merge;
};

/* Start keeping runs: in files when files, about est_runs of them.  0 or
 * CLS_E_FAIL after a message when too few descriptors are left to merge
 * files. */
int spl_init(struct spl_set *s, const struct enc_format *f, const char *tmpdir, uint64_t memory,
	     bool files, uint64_t est_runs);
/* From now on, new runs go to temporary files (those kept in memory stay
 * there): about est_runs in all.  0 or CLS_E_FAIL as spl_init. */
int spl_to_files(struct spl_set *s, uint64_t est_runs);
/* Release every run kept (the set may keep more after). */
void spl_free(struct spl_set *s);

/* A writer for a new run of at most expect bytes (more go on through
 * write(2)), and the run it fills.
 * 0 or CLS_E_FAIL after a message. */
int spl_writer(struct spl_set *s, struct out_writer *w, struct mrg_run *r, size_t expect);

/* Keep the run w has written.  0 or CLS_E_FAIL after a message; r is
 * released either way. */
int spl_keep(struct spl_set *s, struct out_writer *w, struct mrg_run *r);

/* Drop a run whose writing failed. */
void spl_discard(struct out_writer *w, struct mrg_run *r);

/* Merge every run kept into out, and release them.  0, CLS_E_PIPE or
 * CLS_E_FAIL. */
int spl_merge(struct spl_set *s, struct out_writer *out);

#endif
