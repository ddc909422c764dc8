/* Unit tests of the device spec parser and OpenCL error names (device.h). */
#include "config.h"

#include <string.h>

#include "device.h"
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

int main(void)
{
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
