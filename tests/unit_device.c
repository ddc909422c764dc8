/* Unit tests of the device spec parser, OpenCL error names and the binary
 * cache (device.h), and of the choice of the device's sort (cl_radix.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl_radix.h"
#include "cl_stage.h"
#include "devbuild.h"
#include "tap.h"

static void kind_is(const char *text, enum dev_spec_kind kind)
{
	struct dev_spec s;
	int rc = dev_parse_spec(text, &s);
	ok(rc == 0 && s.kind == kind, "dev_parse_spec('%s') gives kind %d (rc %d, kind %d)", text,
	   (int)kind, rc, (int)s.kind);
}

static void index_is(const char *text, unsigned p, unsigned d)
{
	struct dev_spec s;
	int rc = dev_parse_spec(text, &s);
	ok(rc == 0 && s.kind == DEV_INDEX && s.platform == p && s.device == d,
	   "dev_parse_spec('%s') = platform %u, device %u (rc %d, %u:%u)", text, p, d, rc,
	   s.platform, s.device);
}

static void name_is(const char *text)
{
	struct dev_spec s;
	int rc = dev_parse_spec(text, &s);
	ok(rc == 0 && s.kind == DEV_NAME && s.name && !strcmp(s.name, text),
	   "dev_parse_spec('%s') is a name substring (rc %d, kind %d)", text, rc, (int)s.kind);
}

static void bad(const char *text)
{
	struct dev_spec s;
	int rc = dev_parse_spec(text, &s);
	ok(rc == -1, "dev_parse_spec rejects '%s' (rc %d)", text ? text : "(null)", rc);
}

static void err_is(cl_int code, const char *name)
{
	const char *got = dev_strerror(code);
	ok(got && !strcmp(got, name), "dev_strerror(%d) = %s (got %s)", (int)code, name,
	   got ? got : "(null)");
}

/* --device-sort: auto takes the radix sort on a GPU for large runs, and
 * for small ones too where the networks' program is not built yet. */
static void devsort_choice(void)
{
	struct dev_ctx gpu, cpu;
	const size_t big = (size_t)1 << 23, small = big - 1;

	memset(&gpu, 0, sizeof gpu);
	memset(&cpu, 0, sizeof cpu);
	gpu.type = CL_DEVICE_TYPE_GPU;
	cpu.type = CL_DEVICE_TYPE_CPU;
	ok(clr_wanted(CLS_DEVSORT_AUTO, &gpu, big, true), "auto: a run of 2^23 words on a GPU: radix");
	ok(!clr_wanted(CLS_DEVSORT_AUTO, &gpu, small, true),
	   "auto: a smaller run on a GPU, the networks built: the networks");
	ok(clr_wanted(CLS_DEVSORT_AUTO, &gpu, small, false),
	   "auto: a smaller run on a GPU, the networks not built: radix");
	ok(clr_wanted(CLS_DEVSORT_AUTO, &gpu, 1, false), "auto: one word, the networks not built: radix");
	ok(!clr_wanted(CLS_DEVSORT_AUTO, &cpu, big, false), "auto: a CPU device never takes radix");
	ok(!clr_wanted(CLS_DEVSORT_AUTO, &cpu, SIZE_MAX, true), "auto: a CPU device's runs may not go");
	ok(clr_wanted(CLS_DEVSORT_RADIX, &cpu, 1, true), "radix: on any device, any size");
	ok(!clr_wanted(CLS_DEVSORT_BITONIC, &gpu, big, false), "bitonic: never radix");
}

/* dev_cached finds what dev_build stored, on the OpenCL CPU device. */
static void cache_entries(void)
{
	char dir[] = "/tmp/unit_device.XXXXXX", cmd[64];
	struct dev_ctx d;
	struct clr r;

	if (!mkdtemp(dir)) {
		ok(0, "a temporary cache directory");
		return;
	}
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("CLSORT_NO_CACHE");
	/* clsort's own cache, which on PoCL it keeps only without PoCL's. */
	setenv("POCL_KERNEL_CACHE", "0", 1);
	if (dev_open(&d, "cpu", false)) {
		skip("no OpenCL CPU device");
	} else {
		/* The engine's options for every program (cl_engine.c). */
		clr_init(&r, &d, 4, "-w -DWORD_BITS=32 -DWG=64 -DEPT=4 -DLOG_WG=6 -DLOG_EPT=2 -DMERGE_ITEMS=8");
		ok(!dev_cached(&d, r.options), "an empty cache holds no program");
		ok(clr_ready(&r) == 0, "the radix program builds");
		ok(dev_cached(&d, r.options), "the program built is in the cache");
		ok(!dev_cached(&d, "-w -DWORD_BITS=64 -DRADIX"), "another program's options are not");
		setenv("CLSORT_NO_CACHE", "1", 1);
		ok(!dev_cached(&d, r.options), "CLSORT_NO_CACHE: no cache to find it in");
		unsetenv("CLSORT_NO_CACHE");
		if (strstr(d.platform_name, "Portable Computing Language")) {
			setenv("POCL_KERNEL_CACHE", "1", 1);
			ok(!dev_cached(&d, r.options), "PoCL with its own kernel cache: clsort's is not used");
		}
		clr_release(&r);
		dev_close(&d);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		ok(0, "%s", cmd);
}

/* The program waiting early with options, or NULL. */
static cl_program early_for(const struct dev_ctx *d, const char *options)
{
	size_t i;

	for (i = 0; i < DEV_EARLY; i++)
		if (d->early[i].prog && !strcmp(d->early[i].options, options))
			return d->early[i].prog;
	return NULL;
}

static size_t early_waiting(const struct dev_ctx *d)
{
	size_t i, n = 0;

	for (i = 0; i < DEV_EARLY; i++)
		n += d->early[i].prog != NULL;
	return n;
}

/* dev_build_early's programs are the ones dev_build with their options
 * takes, once; other options and later builds are built as usual. */
static void early_build(void)
{
	const char *base = "-w -DWORD_BITS=64 -DWG=64 -DEPT=4 -DLOG_WG=6 -DLOG_EPT=2 -DMERGE_ITEMS=8";
	char gather[256];
	struct dev_ctx d;
	struct clr r;
	cl_program p = NULL, q = NULL, g = NULL, radix, plain;

	setenv("CLSORT_NO_CACHE", "1", 1);
	setenv("POCL_KERNEL_CACHE", "0", 1);
	if (dev_open(&d, "cpu", false)) {
		skip("no OpenCL CPU device");
		unsetenv("CLSORT_NO_CACHE");
		return;
	}
	snprintf(gather, sizeof gather, "%s -DGATHER", base);
	clr_init(&r, &d, 8, base);
	ok(early_waiting(&d) == 0, "a device opened has no program built early");
	dev_build_early(&d, r.options, "radix");
	dev_build_early(&d, r.options, "radix");
	ok(early_waiting(&d) == 1 && (radix = early_for(&d, r.options)) != NULL,
	   "a program built early, once for its options");
	dev_build_early(&d, base, "plain");
	ok(early_waiting(&d) == 2 && (plain = early_for(&d, base)) != NULL,
	   "a second program built early");
	dev_build_early(&d, gather, "gather");
	ok(early_waiting(&d) == DEV_EARLY && !early_for(&d, gather), "past DEV_EARLY, none built");
	ok(dev_build(&d, gather, "gather", &g) == 0 && g && g != radix && g != plain &&
	   early_waiting(&d) == 2, "other options: built anew, the early programs left waiting");
	ok(dev_build(&d, r.options, "radix", &p) == 0 && p == radix && !early_for(&d, r.options) &&
	   early_waiting(&d) == 1, "the same options: that early program taken");
	ok(dev_build(&d, base, "plain", &q) == 0 && q == plain && early_waiting(&d) == 0,
	   "and the other");
	dev_build_early(&d, "-w -DWORD_BITS=32 -DNO_SUCH_OPTION -DWG=", "broken");
	ok(early_waiting(&d) == 0, "an early build that fails leaves nothing waiting");
	if (p)
		clReleaseProgram(p);
	if (q)
		clReleaseProgram(q);
	if (g)
		clReleaseProgram(g);
	dev_build_early(&d, r.options, "radix");
	ok(early_waiting(&d) == 1, "built early again");
	dev_close(&d);
	ok(early_waiting(&d) == 0, "dev_close releases a program nobody took");
	unsetenv("CLSORT_NO_CACHE");
}

/* stg_make_ahead's buffers are the ones the first stg_make on the device
 * takes, and they carry transfers; a later stager makes its own; dev_close
 * releases those nobody took. */
static void early_stage(void)
{
	struct dev_ctx d;
	struct stg s, t;
	cl_command_queue q;
	cl_mem buf;
	cl_int err;
	void *first;
	size_t bytes;
	int i, same = 1;

	if (dev_open(&d, "cpu", false)) {
		skip("no OpenCL CPU device");
		return;
	}
	ok(d.stage.bytes == 0, "a device opened has no staging buffers waiting");
	stg_make_ahead(&d);
	bytes = d.stage.bytes;
	first = d.stage.host[0];
	for (i = 0; i < STG_N; i++)
		same &= d.stage.mem[i] && d.stage.host[i];
	ok(bytes >= ((size_t)16 << 20) && same, "staging buffers made ahead (%zu bytes each)", bytes);
	stg_make_ahead(&d);
	ok(d.stage.bytes == bytes && d.stage.host[0] == first, "made once");
	q = clCreateCommandQueue(d.context, d.device, 0, &err);
	stg_init(&s, &d, q, 8, 256);
	ok(stg_make(&s, 1000) == 0 && s.host[0] == first && s.bytes == bytes && d.stage.bytes == 0 &&
	   !d.stage.mem[0], "the first stager takes them, whatever its size");
	buf = clCreateBuffer(d.context, CL_MEM_READ_WRITE, 4096, NULL, &err);
	memset(s.host[0], 0x5a, 4096);
	memset(s.host[1], 0, 4096);
	err = clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, 4096, s.host[0], 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 4096, s.host[1], 0, NULL, NULL);
	ok(err == CL_SUCCESS && !memcmp(s.host[0], s.host[1], 4096), "and transfers go through them");
	clReleaseMemObject(buf);
	stg_init(&t, &d, q, 8, 256);
	ok(stg_make(&t, 1000) == 0 && t.host[0] && t.host[0] != first && t.mapq == q,
	   "a second stager makes its own");
	stg_release(&t);
	stg_release(&s);
	ok(!s.host[0] && !s.mem[0], "stg_release releases the buffers taken");
	stg_make_ahead(&d);
	ok(d.stage.bytes == bytes, "made ahead again");
	clReleaseCommandQueue(q);
	dev_close(&d);
	ok(d.stage.bytes == 0 && !d.stage.mem[0] && !d.stage.host[0],
	   "dev_close releases the buffers nobody took");
}

int main(void)
{
	devsort_choice();
	/* Before cache_entries: after it, PoCL 3.1 failed to build the same
	 * radix program again in a context of its own. */
	early_build();
	early_stage();
	cache_entries();
	kind_is("auto", DEV_AUTO);
	kind_is("AUTO", DEV_AUTO);
	kind_is("Auto", DEV_AUTO);
	kind_is("gpu", DEV_GPU);
	kind_is("GPU", DEV_GPU);
	kind_is("gPu", DEV_GPU);
	kind_is("cpu", DEV_CPU);
	kind_is("CPU", DEV_CPU);
	kind_is("Cpu", DEV_CPU);

	index_is("1:0", 1, 0);
	index_is("0:0", 0, 0);
	index_is("0:3", 0, 3);
	index_is("12:34", 12, 34);

	bad("1:x");
	bad("1:2:3");
	bad("1:");
	bad("0:0x");
	bad("1:0 ");
	bad("");
	bad(NULL);

	/* Anything else is part of a device or platform name. */
	name_is("pthread");
	name_is("NVIDIA GeForce");
	name_is("Portable Computing Language");
	name_is("cpux");
	name_is("autox");
	name_is("x1:0");
	name_is(":0");
	name_is("7");

	/* The name points at the caller's text, not a copy. */
	{
		const char *text = "skylake";
		struct dev_spec s;
		ok(dev_parse_spec(text, &s) == 0 && s.name == text,
		   "a name spec keeps the caller's string");
	}
	/* A failed parse leaves no stale fields behind. */
	{
		struct dev_spec s;
		memset(&s, 0x55, sizeof s);
		dev_parse_spec("cpu", &s);
		ok(s.kind == DEV_CPU && s.name == NULL && s.platform == 0 && s.device == 0,
		   "dev_parse_spec clears the fields it does not set");
	}

	err_is(CL_SUCCESS, "CL_SUCCESS");
	err_is(CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND");
	err_is(CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES");
	err_is(-5, "CL_OUT_OF_RESOURCES");
	err_is(CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY");
	err_is(CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE");
	err_is(CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE");
	err_is(CL_INVALID_VALUE, "CL_INVALID_VALUE");
	err_is(CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE");
	err_is(CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE");
	err_is(CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS");
	err_is(-1001, "CL_PLATFORM_NOT_FOUND_KHR");
	{
		const char *s = dev_strerror(-9999);
		ok(s && strstr(s, "-9999") && strncmp(s, "CL_", 3),
		   "an unknown code is shown by number (%s)", s ? s : "(null)");
		s = dev_strerror(12345);
		ok(s && strstr(s, "12345"), "a positive unknown code is shown by number (%s)",
		   s ? s : "(null)");
	}
	return done_testing();
}
