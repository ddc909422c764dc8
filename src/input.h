/* Inputs: every FILE (or stdin) opened and made addressable before any
 * sorting starts.  Regular files are mapped; pipes and other streams are
 * read into memory, spilling to an unlinked temporary file when larger
 * than the memory budget. */
#ifndef CLSORT_INPUT_H
#define CLSORT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct in_file {
	const char *name;		/* as given; "-" for stdin */
	const unsigned char *data;
	size_t size;
	void *map;			/* mapping to unmap, or NULL */
	size_t map_len;
	void *heap;			/* memory that holds a stream, or NULL: */
	size_t heap_len;		/* unmapped at the end, never released early */
	uint64_t first_line;		/* lines before data, cut off by --header */
	struct in_stream *stream;	/* a stream still being read (in_watch's
					 * run_bytes): data and size are empty */
};

struct in_set {
	struct in_file *files;
	size_t count;
	uint64_t bytes;
};

/* Told, on the reading thread, when a stream (an input that is not
 * mapped) has delivered IN_WATCH_BYTES: its first len bytes at data.  It
 * must return at once (start a thread for anything slow). */
#define IN_WATCH_BYTES ((size_t)8 << 20)
struct in_watch {
	void (*large)(void *ctx, const unsigned char *data, size_t len);
	/* From then on, after every read: the bytes the stream has
	 * delivered (not once it outgrows the memory it is read into).  It
	 * too must return at once.  May be NULL. */
	void (*grow)(void *ctx, uint64_t bytes);
	/* Before the stream's bytes leave the memory they were read into
	 * (to a temporary file, to the reader of its runs, or freed at an
	 * error): nothing may read them once it returns.  May be NULL. */
	void (*leave)(void *ctx);
	void *ctx;
	/* Not 0: a single input that is a stream, delivers more than
	 * run_bytes, and no more than run_rate bytes a second meanwhile, is
	 * left to a thread that goes on reading it (the in_file's stream),
	 * so that its runs are sorted while the rest arrives. */
	size_t run_bytes;
	double run_rate;
	/* One that came at near_rate or more (but no more than run_rate)
	 * is looked at again past a second run. */
	double near_rate;
	/* One that left the CPUs less than this share of their time idle
	 * meanwhile is read whole all the same: they had no time to spare
	 * for its runs, whose sorts would only slow it further. */
	double idle_share;
};

/* Open and map (or read) every name; no names means stdin.  memory bounds
 * the bytes held on the heap for streams; tmpdir takes the rest; watch
 * (may be NULL) is told of a large stream.  0 or CLS_E_FAIL after a
 * message naming the file. */
int in_open(struct in_set *set, const char *const *names, size_t count, uint64_t memory,
	    const char *tmpdir, const struct in_watch *watch);
void in_close(struct in_set *set);

/* Map the first limit bytes of the mapped inputs into the page tables,
 * a page at a time (done while the device starts, so that encoding does
 * not wait on page faults; see touch_parallel). */
void in_prefault(const struct in_set *set, uint64_t limit);

/* Done with f's bytes [off, off+len): give mapped pages back to the
 * system, so reading a large file does not grow the resident set. */
void in_release(const struct in_file *f, size_t off, size_t len);

/* A stream read on a thread of its own, into memory of in_open's memory
 * bytes that its consumer gives back as it is done with each part (the
 * bytes kept move to its start when it is full: the consumer has sorted
 * the rest, or the reader waits).  in_close stops and releases it. */
struct in_stream;

/* Wait until s holds more than want bytes past those the consumer is done
 * with, or has ended; then every byte held past those, (*p, *len), is the
 * consumer's until in_stream_done, and *ended tells that the stream has
 * ended and nothing more will come.  0, or CLS_E_FAIL when reading failed
 * (after a message). */
int in_stream_take(struct in_stream *s, size_t want, const unsigned char **p, size_t *len,
		   bool *ended);
/* The consumer is done with the first n bytes of those taken (n may be 0:
 * it needs more to go on); their memory is given back. */
void in_stream_done(struct in_stream *s, size_t n);
/* Bytes read so far, and (waited, unless NULL) the seconds the reader
 * waited for the consumer to make room. */
uint64_t in_stream_bytes(struct in_stream *s, double *waited);

#endif
