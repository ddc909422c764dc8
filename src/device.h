/* OpenCL platforms and devices: choosing one from a spec, listing them,
 * contexts and queues, and a device opened on a thread of its own while
 * the input is read.  Programs are built by devbuild.h. */
#ifndef CLSORT_DEVICE_H
#define CLSORT_DEVICE_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stdio.h>

enum dev_spec_kind { DEV_AUTO, DEV_GPU, DEV_CPU, DEV_INDEX, DEV_NAME, DEV_ALL, DEV_LIST };

struct dev_spec {
	enum dev_spec_kind kind;
	unsigned platform, device;	/* DEV_INDEX */
	const char *name;		/* DEV_NAME: case-insensitive substring;
					 * DEV_LIST: the list */
};

/* Parse "auto", "gpu", "cpu", "P:D", a name substring, "all" (every GPU,
 * else every CPU device) or a comma-separated list of specs for one
 * device each; -1 if empty or malformed (a bad "P:D", an empty item). */
int dev_parse_spec(const char *text, struct dev_spec *spec);

/* The specs of one device each that text stands for: "all" becomes "P:D"
 * of each device it takes, a list its items, anything else itself.
 * *specs is an array of *count strings for dev_free_specs.  0, or
 * CLS_E_FAIL after a message (no OpenCL device for "all"). */
int dev_expand(const char *text, char ***specs, size_t *count);
void dev_free_specs(char **specs, size_t count);

/* Programs a device opened ahead may build for its sort: the sort's own,
 * and the one that puts kv lines in order (cl_engine.c). */
#define DEV_EARLY 2
#define DEV_STAGE 3

struct dev_ctx {
	cl_platform_id platform;
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	bool profiling;
	char name[256];
	char platform_name[256];
	char version[256];	/* device and driver version, for cache keys */
	cl_device_type type;
	cl_ulong global_mem;
	cl_ulong max_alloc;
	cl_ulong local_mem;
	size_t max_wg;
	cl_uint compute_units;
	unsigned pi, di;	/* indices, as -L prints them */
	double t_build;		/* seconds spent building programs the cache did not have */
	double t_ahead;		/* seconds dev_open_ahead spent opening it, or 0 */
	/* Programs dev_build_early built, each for the dev_build with the
	 * same options that takes it; prog NULL where none waits. */
	struct {
		cl_program prog;
		char options[768];
		bool loaded;	/* from clsort's cache, not built */
	} early[DEV_EARLY];
	/* Pinned staging buffers made where the device was opened ahead,
	 * mapped through queue, for the sort's transfers to take (cl_stage.h);
	 * bytes 0 where none wait. */
	struct {
		cl_mem mem[DEV_STAGE];
		void *host[DEV_STAGE];
		size_t bytes;
	} stage;
	/* A stream's first words, sent up while it arrived (sendahead.h):
	 * buf, of cap words, holds the words of its first records at data;
	 * words 0 where none wait.  The engine's first buffer takes buf.  A
	 * stream of kv lines: text, of text_cap bytes, holds the first
	 * text_bytes of it, at text_at (NULL where none wait), for the
	 * gather of its lines to take. */
	struct {
		cl_mem buf;
		size_t cap, words;
		const unsigned char *data;
		cl_mem text;
		uint64_t text_cap, text_bytes;
		const unsigned char *text_at;
		double seconds;		/* the sending's, from its start */
	} sent;
};

/* OpenCL error code as its name ("CL_OUT_OF_RESOURCES"). */
const char *dev_strerror(cl_int err);

/* Print every platform and device on out, marking the one "auto" picks
 * and those "all" takes.
 * Returns 0 or CLS_E_FAIL after a message. */
int dev_list(FILE *out);

/* The device "auto" opens: its name as its engine gives it ("NAME
 * [PLATFORM]", size bytes at most) and whether it is a CPU, found without
 * opening it.  0, or CLS_E_FAIL where there is no OpenCL device, with why
 * in why_size bytes and no message. */
int dev_auto_probe(char *name, size_t size, bool *cpu, char *why, size_t why_size);

/* Where the ICD loader finds the drivers and when that last changed (a
 * driver registered or removed), as text of at most size bytes: what
 * dev_auto_probe found holds while it is the same. */
void dev_drivers_stamp(char *stamp, size_t size);

/* Open the device spec selects, with a context and an in-order queue
 * (profiling on when asked).  0 or CLS_E_FAIL after a message saying what
 * was found. */
int dev_open(struct dev_ctx *d, const char *spec, bool profiling);
void dev_close(struct dev_ctx *d);

/* Unmap through q and release the pinned buffers of mem[0..n) that are
 * set (host: where each is mapped, or NULL), leaving them NULL. */
void dev_unpin(cl_command_queue q, cl_mem *mem, void **host, size_t n);

/* Start opening the device spec selects on a thread of its own (once a
 * process), for the dev_open with the same spec and profiling that will
 * follow: it takes that device, or the failure and its message.  For a
 * device opened while the input is still being read.  Once it is open,
 * then (may be NULL) is called on the same thread with it and arg: to
 * build there what the sort will run (dev_build_early). */
void dev_open_ahead(const char *spec, bool profiling, void (*then)(struct dev_ctx *, void *),
		    void *arg);
/* Whether the dev_open that takes the device opened ahead has come (then
 * waits for the thread): what the thread has not begun to build is left
 * to the sort, whose builds overlap its transfers. */
bool dev_ahead_wanted(void);
/* Close what dev_open_ahead opened where no dev_open took it. */
void dev_ahead_done(void);
/* Whether dev_open_ahead has a device opening or open for a dev_open to
 * take. */
bool dev_ahead_pending(void);
/* Wait for the device dev_open_ahead opens, as dev_open would (what the
 * thread has not begun is left to the sort), and leave it for dev_open to
 * take: whether it opened.  False where none is pending. */
bool dev_ahead_opened(void);
/* Why the device dev_ahead_opened waited for did not open (the message
 * its thread kept instead of printing); NULL where it opened or none was
 * waited for. */
const char *dev_ahead_failure(void);

/* Report a failed OpenCL call: "clsort: what: CL_NAME". */
int dev_fail(const char *what, cl_int err);

/* A read-write buffer of bytes on d, its last byte written (on d's
 * queue, waited for): some drivers allocate on first use, and a buffer
 * the device cannot hold fails here, where a smaller one can be tried,
 * rather than in the middle of a sort.  NULL with *err set on failure. */
cl_mem dev_buffer(struct dev_ctx *d, size_t bytes, cl_int *err);

/* dev_buffer of bytes holding the first keep bytes of old (copied on d's
 * queue), old released; old may be NULL. */
cl_mem dev_regrow(struct dev_ctx *d, cl_mem old, size_t keep, size_t bytes, cl_int *err);

#endif
