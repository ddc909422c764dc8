#include "config.h"
#include "devbuild.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clsort.h"
#include "kernels.h"
#include "util.h"

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;
	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t fnv1a_str(uint64_t h, const char *s)
{
	return fnv1a(h, s, strlen(s) + 1);
}

static const char cache_magic[8] = { 'C', 'L', 'S', 'O', 'R', 'T', 'B', '1' };

struct cache_header {
	char magic[8];
	uint64_t key;
	uint64_t size;
	uint64_t sum;
};

/* Cache file path for key. */
static int program_path(char *path, size_t size, uint64_t key, bool make_dir)
{
	char name[32];
	snprintf(name, sizeof name, "%016llx.bin", (unsigned long long)key);
	return cache_path(path, size, name, make_dir);
}

/* A program from the cache entry for key, or NULL when there is none or
 * it does not load and build. */
static cl_program cache_load(struct dev_ctx *d, uint64_t key, const char *options)
{
	char path[4096];
	struct cache_header h;
	unsigned char *bin = NULL;
	cl_program prog = NULL;
	cl_int err, status;
	struct stat st;
	int fd;

	if (program_path(path, sizeof path, key, false))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || read_full(fd, &h, sizeof h) != (ssize_t)sizeof h ||
	    memcmp(h.magic, cache_magic, 8) || h.key != key ||
	    h.size != (uint64_t)st.st_size - sizeof h || h.size == 0)
		goto out;
	bin = malloc(h.size);
	if (!bin || read_full(fd, bin, h.size) != (ssize_t)h.size ||
	    fnv1a(0xcbf29ce484222325ull, bin, h.size) != h.sum)
		goto out;
	{
		const unsigned char *bins[1] = { bin };
		size_t size = h.size;
		prog = clCreateProgramWithBinary(d->context, 1, &d->device, &size, bins, &status, &err);
	}
	if (prog && (err != CL_SUCCESS || status != CL_SUCCESS ||
		     clBuildProgram(prog, 1, &d->device, options, NULL, NULL) != CL_SUCCESS)) {
		clReleaseProgram(prog);
		prog = NULL;
	}
out:
	if (!prog)
		msg_info(2, "no usable program cache entry %s", path);
	free(bin);
	close(fd);
	return prog;
}

/* Store the program's binary; failures only cost the next run a build. */
static void cache_store(struct dev_ctx *d, cl_program prog, uint64_t key)
{
	char path[4096];
	struct cache_header h;
	unsigned char *bin = NULL;
	size_t size = 0;
	const double t0 = now_sec();

	if (program_path(path, sizeof path, key, true))
		return;
	if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
	    size == 0 || !(bin = malloc(size)))
		goto out;
	{
		unsigned char *bins[1] = { bin };
		if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS)
			goto out;
	}
	memcpy(h.magic, cache_magic, 8);
	h.key = key;
	h.size = size;
	h.sum = fnv1a(0xcbf29ce484222325ull, bin, size);
	cache_replace(path, &h, sizeof h, bin, size);
	msg_info(2, "program binary of %zu bytes cached in %.3f s", size, now_sec() - t0);
out:
	free(bin);
}

/* Kernel sources: embedded, or from $CLSORT_KERNEL_DIR for kernel work
 * (quiet: no message where one cannot be read, which a later load meets
 * again and reports). */
static int load_sources(const char **texts, size_t *lens, size_t *count, char **owned, bool quiet)
{
	const char *dir = getenv("CLSORT_KERNEL_DIR");
	size_t i;

	for (i = 0; kernel_sources[i].name; i++) {
		texts[i] = kernel_sources[i].text;
		lens[i] = kernel_sources[i].len;
		owned[i] = NULL;
		if (dir && *dir) {
			char path[4096];
			struct stat st;
			int fd;
			snprintf(path, sizeof path, "%s/%s", dir, kernel_sources[i].name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || fstat(fd, &st) || !(owned[i] = malloc((size_t)st.st_size + 1)) ||
			    read_full(fd, owned[i], (size_t)st.st_size) != st.st_size) {
				if (!quiet)
					msg_errno(errno, "%s", path);
				if (fd >= 0)
					close(fd);
				while (i + 1 > 0) {
					free(owned[i]);
					if (i-- == 0)
						break;
				}
				return CLS_E_FAIL;
			}
			close(fd);
			owned[i][st.st_size] = '\0';
			texts[i] = owned[i];
			lens[i] = (size_t)st.st_size;
		}
	}
	*count = i;
	return 0;
}

/* The cache key of the program the count sources texts build on d with
 * options. */
static uint64_t program_key(const struct dev_ctx *d, const char *options, const char *const *texts,
			    const size_t *lens, size_t count)
{
	uint64_t key = 0xcbf29ce484222325ull;
	size_t i;

	key = fnv1a_str(key, PACKAGE_VERSION);
	key = fnv1a_str(key, options);
	key = fnv1a_str(key, d->platform_name);
	key = fnv1a_str(key, d->name);
	key = fnv1a_str(key, d->version);
	for (i = 0; i < count; i++)
		key = fnv1a(key, texts[i], lens[i]);
	return key;
}

/* Seconds of the building thread's CPU time within which a build from the
 * driver's own cache was a load.  CPU time, not the clock's: PoCL builds
 * in the calling thread (0.63 s compiling the radix program on two cores,
 * 0.03 s from its cache, CPU and clock alike on an idle machine), and a
 * load on a machine busy with other work took more than 0.25 s by the
 * clock, counted a compile, its start left unmeasured. */
#define DRIVER_CACHE_LOAD 0.25

/* Whether d's driver keeps compiled kernels in a cache of its own, so
 * that a second build of a program costs little and clsort's cache would
 * only add the cost of asking for the binary: PoCL, unless its kernel
 * cache is turned off (POCL_KERNEL_CACHE=0).  Asking PoCL for a binary
 * compiles every kernel of the program for it (1.6 s of a first sort's 4.5
 * s of 2^24 keys on two cores), where a sort compiles only what it runs. */
static bool driver_caches(const struct dev_ctx *d)
{
	const char *pocl_cache = getenv("POCL_KERNEL_CACHE");

	return strstr(d->platform_name, "Portable Computing Language") &&
	       !(pocl_cache && !strcmp(pocl_cache, "0"));
}

bool dev_cached(const struct dev_ctx *d, const char *options)
{
	const char *texts[16];
	size_t lens[16], count, i;
	char *owned[16], path[4096];
	bool found;

	if (driver_caches(d) || load_sources(texts, lens, &count, owned, true))
		return false;
	found = program_path(path, sizeof path, program_key(d, options, texts, lens, count), false) == 0 &&
		access(path, R_OK) == 0;
	for (i = 0; i < count; i++)
		free(owned[i]);
	return found;
}

static int build(struct dev_ctx *d, const char *options, const char *what, bool quiet,
		 cl_program *program, bool *loaded);

/* The slot of d's early program built with options, or -1. */
static int early_for(const struct dev_ctx *d, const char *options)
{
	int i;

	for (i = 0; i < DEV_EARLY; i++)
		if (d->early[i].prog && !strcmp(d->early[i].options, options))
			return i;
	return -1;
}

int dev_build(struct dev_ctx *d, const char *options, const char *what, cl_program *program)
{
	const int i = early_for(d, options);
	bool loaded;

	if (i >= 0) {
		msg_info(2, "program %s while the input was read: %s",
			 d->early[i].loaded ? "loaded" : "built", what);
		*program = d->early[i].prog;
		d->early[i].prog = NULL;
		return 0;
	}
	return build(d, options, what, false, program, &loaded);
}

void dev_build_early(struct dev_ctx *d, const char *options, const char *what)
{
	size_t i;

	if (strlen(options) >= sizeof d->early[0].options || early_for(d, options) >= 0)
		return;
	for (i = 0; i < DEV_EARLY && d->early[i].prog; i++)
		;
	if (i == DEV_EARLY)
		return;
	if (build(d, options, what, true, &d->early[i].prog, &d->early[i].loaded) == 0)
		strcpy(d->early[i].options, options);
	else
		d->early[i].prog = NULL;
}

/* dev_build but for the early programs; quiet: no message where it
 * fails; *loaded: whether it came from clsort's cache. */
static int build(struct dev_ctx *d, const char *options, const char *what, bool quiet,
		 cl_program *program, bool *loaded)
{
	const char *texts[16];
	size_t lens[16], count, i;
	char *owned[16];
	uint64_t key;
	cl_program prog;
	cl_int err;
	double t0 = now_sec(), cpu0 = thread_cpu_sec();
	const bool own_cache = !driver_caches(d);
	int rc = CLS_E_FAIL;

	if (load_sources(texts, lens, &count, owned, quiet))
		return CLS_E_FAIL;
	key = program_key(d, options, texts, lens, count);

	prog = own_cache ? cache_load(d, key, options) : NULL;
	*loaded = prog != NULL;
	if (prog) {
		msg_info(2, "program loaded from cache in %.3f s: %s", now_sec() - t0, what);
		*program = prog;
		rc = 0;
		goto out;
	}
	prog = clCreateProgramWithSource(d->context, (cl_uint)count, texts, lens, &err);
	if (!prog) {
		if (!quiet)
			dev_fail("cannot create the OpenCL program", err);
		goto out;
	}
	err = clBuildProgram(prog, 1, &d->device, options, NULL, NULL);
	if (err != CL_SUCCESS && quiet) {
		clReleaseProgram(prog);
		goto out;
	}
	if (err != CL_SUCCESS) {
		size_t size = 0;
		char *log;
		clGetProgramBuildInfo(prog, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
		log = malloc(size + 1);
		if (log) {
			log[0] = '\0';
			clGetProgramBuildInfo(prog, d->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
			log[size] = '\0';
			fprintf(stderr, "%s\n", log);
			free(log);
		}
		msg_err("building the kernels for %s failed (%s), options: %s", d->name,
			dev_strerror(err), options);
		clReleaseProgram(prog);
		goto out;
	}
	if (util_verbose >= 2) {
		size_t size = 0;
		char *log;
		clGetProgramBuildInfo(prog, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
		if (size > 1 && (log = malloc(size + 1))) {
			clGetProgramBuildInfo(prog, d->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
			log[size] = '\0';
			fprintf(stderr, "%s\n", log);
			free(log);
		}
	}
	msg_info(2, "program built in %.3f s: %s", now_sec() - t0, what);
	/* Asking for the binary is where some drivers (PoCL, whose own cache
	 * is left to keep it) compile each kernel's code, at about the cost
	 * of the build. */
	if (own_cache)
		cache_store(d, prog, key);
	/* A build the driver took from its own cache is a load, as from
	 * clsort's, and part of the device's start as auto measures it; one
	 * that took longer compiled. */
	if (own_cache || thread_cpu_sec() - cpu0 > DRIVER_CACHE_LOAD)
		d->t_build += now_sec() - t0;
	*program = prog;
	rc = 0;
out:
	for (i = 0; i < count; i++)
		free(owned[i]);
	return rc;
}
