/* Inputs: every FILE (or stdin) opened and made addressable before any
 * sorting starts.  Regular files are mapped; pipes and other streams are
 * read into memory, spilling to an unlinked temporary file when larger
 * than the memory budget. */
#ifndef CLSORT_INPUT_H
#define CLSORT_INPUT_H

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
	void *ctx;
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

#endif
