/* An output writer's state (output.h writes through it, outgrow.h takes
 * room for it), and what its file is: seekable, or standard output that
 * ends at its offset. */
#ifndef CLSORT_WRITER_H
#define CLSORT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outfile.h"
#include "tie.h"

struct out_grow;

struct out_writer {
	int fd;			/* -1 for a memory writer */
	const char *name;	/* for messages */
	bool dest_open;		/* -o: dest holds what fd writes for it */
	struct out_dest dest;
	bool progress;		/* the final output: its bytes count for --progress */
	unsigned char *buf;
	size_t cap, len;
	bool mem;		/* grows in memory, never flushed */
	size_t total;		/* bytes written so far */
	/* What out_emit keeps between runs (emit.c: its threads' buffers),
	 * and how it is freed: set by out_emit, called by out_finish and
	 * out_abort. */
	void *emit_state;
	void (*emit_free)(struct out_writer *w);
	unsigned char *map;	/* -o: a shared mapping of the file's first map_len bytes
				 * (a part: of its own), map_lead bytes into it */
	size_t map_lead;
	size_t map_len;
	size_t map_faulted;	/* bytes from the mapping's start whose pages are
				 * faulted in (all of them where it was made so) */
	size_t presized;	/* bytes the file was given before any data */
	unsigned threads;	/* for copies into the mapping or memory */
	struct tie_stream ties;	/* out_emit: tied words of long keys held back */
	bool own;		/* fd is a temporary file of this writer's own (a run's) */
	bool part;		/* a part of another writer's file, written at... */
	uint64_t at;		/* ...this offset */
	bool is_stdout;		/* standard output, which a regular file may be */
	uint64_t map_at;	/* the file offset the mapping's data starts at */
	struct out_grow *grow;	/* out_grow's thread, while it runs */
	bool grow_declined;	/* out_grow found nothing to take room in */
	bool grown;		/* out_grow took presized bytes of room from
				 * map_at on... */
	unsigned char *grown_map;	/* ...and mapped grown_map_len bytes of
					 * its file from the page map_at lies in,
					 * its pages faulted in for grown_faulted
					 * bytes from map_at: for out_map */
	size_t grown_map_len, grown_faulted;
};

/* Whether w writes a regular file at its offset, where parts of it may be
 * written side by side (out_open_part). */
bool out_seekable(struct out_writer *w);
/* Where standard output is a regular file that ends at its offset (not
 * appended to, nothing after it to keep), that offset: the output may be
 * mapped from there.  -1 otherwise. */
long long out_stdout_end(struct out_writer *w);

#endif
