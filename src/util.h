/* Small helpers shared by all modules: messages, time, memory, full I/O. */
#ifndef CLSORT_UTIL_H
#define CLSORT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>

extern int util_verbose;
/* Who speaks, between "clsort: " and a message: "rank 3: " among the
 * processes of a distributed sort, else empty. */
extern char util_who[32];

/* "clsort: " + message on stderr, one line. */
void msg_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, followed by ": strerror(errnum)". */
void msg_errno(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Printed only at verbosity >= level. */
void msg_info(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This thread's msg_err and msg_errno kept instead of printed: the first
 * one's text (without "clsort: ", util_who or its newline) in buf, size
 * bytes, for whoever takes the thread's work to print or drop; buf NULL
 * prints them again. */
void msg_keep(char *buf, size_t size);
/* Other writers to stderr (a line redrawn in place) hold this lock while
 * they write; when msg_erase is set, every message calls it first, under
 * the lock, to take such a line away. */
void msg_lock(void);
void msg_unlock(void);
extern void (*msg_erase)(void);

double now_sec(void);
/* Seconds of CPU time the calling thread has used. */
double thread_cpu_sec(void);
/* The wall-clock time ns nanoseconds from now, as pthread_cond_timedwait
 * takes a deadline. */
struct timespec deadline_in(long ns);

/* malloc that reports failure with what it was for; NULL on failure. */
void *xmalloc(size_t size, const char *what);
/* The same, at a multiple of align (a power of two, a multiple of the
 * size of a pointer): for types declared with a larger alignment than
 * malloc's.  Released with free. */
void *xmalloc_aligned(size_t align, size_t size, const char *what);

/* memcpy for a copy into memory that this core does not read again (what
 * a device reads from staging memory): with streaming stores where the
 * CPU has them, so that no line of dst is read before it is overwritten.
 * Short copies are plain ones. */
void copy_stream(void *dst, const void *src, size_t len);

/* The first and last w bytes of n (w <= n <= 2w) from s to d, both read
 * before either is stored: every byte of the n, none past them. */
static inline void copy_ends(unsigned char *d, const unsigned char *s, size_t n, size_t w)
{
	unsigned char a[16], b[16];

	__builtin_memcpy(a, s, w);
	__builtin_memcpy(b, s + n - w, w);
	__builtin_memcpy(d, a, w);
	__builtin_memcpy(d + n - w, b, w);
}

/* memcpy inline for a short copy (a line of a few dozen bytes): two
 * loads that may overlap, then two stores, no byte outside either range
 * touched; longer copies go to memcpy.  Per line, the call to memcpy cost
 * more than the copy. */
static inline void copy_short(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n > 32) {
		memcpy(d, s, n);
	} else if (n >= 16) {
		copy_ends(d, s, n, 16);
	} else if (n >= 8) {
		copy_ends(d, s, n, 8);
	} else if (n >= 4) {
		copy_ends(d, s, n, 4);
	} else if (n) {
		const unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
		d[0] = a;
		d[n / 2] = b;
		d[n - 1] = c;
	}
}

/* Read up to len bytes, retrying on EINTR and short reads; returns bytes
 * read (less only at end of file) or -1 with errno set. */
ssize_t read_full(int fd, void *buf, size_t len);
/* Write all len bytes, retrying on EINTR and partial writes; a write of 0
 * bytes counts as ENOSPC.  Returns 0 or -1 with errno set. */
int write_full(int fd, const void *buf, size_t len);

/* The same at file offset off, with pwrite(2). */
int pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

/* Parse "123", "4K", "2G", ... into bytes; percent set when it ends in %. */
int parse_size(const char *s, uint64_t *bytes, double *percent);

/* A mkstemp() template: a new string "<head><tail>" followed by the six
 * characters mkstemp replaces; NULL when out of memory. */
char *tmp_template(const char *head, const char *tail);

/* The path of the cache file name in $XDG_CACHE_HOME/clsort (else
 * ~/.cache/clsort), creating the directories when make_dir; -1 when there
 * is no cache: no such directory can be named, or CLSORT_NO_CACHE is set. */
int cache_path(char *path, size_t size, const char *name, bool make_dir);
/* Replace the file at path with a[0..alen) then b[0..blen), through a
 * temporary file renamed over it, so that a reader never sees half of it;
 * -1 when that fails, leaving nothing behind. */
int cache_replace(const char *path, const void *a, size_t alen, const void *b, size_t blen);

/* Memory this process may still take: the system's available memory, or
 * less where a memory cgroup limits it (CLSORT_MEMORY_AVAILABLE, bytes,
 * says instead, for tests). */
uint64_t mem_available(void);

/* Online CPUs, at least 1. */
unsigned cpu_count(void);

/* The clock ticks the CPUs this process may run on have spent idle
 * (waiting for input and output included), and in all, since the system
 * started (/proc/stat); false where they cannot be read. */
bool cpu_ticks(uint64_t *idle, uint64_t *total);

/* What the CPUs this process may run on did from cpu_watch_start to
 * cpu_others_share. */
struct cpu_watch {
	uint64_t idle, total;	/* cpu_ticks */
	double self;		/* this process's CPU seconds */
	double t0;		/* now_sec */
	bool known;
};

void cpu_watch_start(struct cpu_watch *w);

/* The share of the CPUs' time since cpu_watch_start that other processes
 * took, or -1 where that is not known: /proc/stat unread, or too short a
 * while for its clock ticks (under CPU_WATCH_TICKS of them, each CPU's
 * ticks counting on its own). */
#define CPU_WATCH_TICKS 5
double cpu_others_share(const struct cpu_watch *w);

/* Fault in the pages of fresh memory p[0..len) on up to threads threads,
 * which is much faster than taking the faults one by one while writing.
 * Large anonymous memory is first asked for huge pages (mem_huge). */
void populate_parallel(void *p, size_t len, unsigned threads);

/* While held, helpers that only fault pages in ahead of their use
 * (outgrow.c) wait: a device opens beside the input's read (device.c),
 * its driver mapping and pinning memory of its own in the same process.
 * An H200's open beside a 4 GiB stream took 0.42-0.94 s while the
 * output's pages were faulted in on the side, 0.22-0.23 s without. */
void faults_hold(bool on);
bool faults_held(void);

/* Fault in the whole pages of p[0..len) for writing on this thread, in
 * one call: false where the kernel cannot (it lacks MADV_POPULATE_WRITE),
 * and the stores that follow take the faults. */
bool populate_range(void *p, size_t len);

/* Ask for huge pages in the anonymous memory p[0..len) where the kernel
 * gives them on request: a fault then maps 2 MiB instead of 4 KiB, which
 * makes faulting fresh buffers in, and giving them back, several times
 * faster.  Does nothing to small buffers. */
void mem_huge(void *p, size_t len);

/* The same, one write fault per page: slower than populate_parallel, but
 * it never holds the address space's lock for long, so that a device
 * driver starting on another thread (it maps memory as it goes) is not
 * kept waiting.  For memory prepared while the device starts. */
void touch_parallel(void *p, size_t len, unsigned threads);

/* Fault in p[0..len) for reading, a page at a time (see touch_parallel). */
void touch_read(const void *p, size_t len);

/* Run fn(arg_i) for i in [0, n) on up to n threads, the calling thread
 * among them, and return when all are done.  args is an array of n
 * elements of size argsize.  The threads are kept for later calls. */
void run_parallel(void (*fn)(void *), void *args, size_t argsize, unsigned n);

/* Run fn over n jobs (an array of elements of size bytes), threads of
 * them at a time. */
void run_jobs(void (*fn)(void *), void *jobs, size_t size, size_t n, unsigned threads);

#endif
