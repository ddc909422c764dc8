#include "config.h"
#include "device.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clsort.h"
#include "util.h"

static const struct {
	cl_int code;
	const char *name;
} cl_errors[] = {
#define E(x) { x, #x }
	E(CL_SUCCESS), E(CL_DEVICE_NOT_FOUND), E(CL_DEVICE_NOT_AVAILABLE),
	E(CL_COMPILER_NOT_AVAILABLE), E(CL_MEM_OBJECT_ALLOCATION_FAILURE),
	E(CL_OUT_OF_RESOURCES), E(CL_OUT_OF_HOST_MEMORY),
	E(CL_PROFILING_INFO_NOT_AVAILABLE), E(CL_MEM_COPY_OVERLAP), E(CL_IMAGE_FORMAT_MISMATCH),
	E(CL_IMAGE_FORMAT_NOT_SUPPORTED), E(CL_BUILD_PROGRAM_FAILURE), E(CL_MAP_FAILURE),
	E(CL_MISALIGNED_SUB_BUFFER_OFFSET), E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
	E(CL_COMPILE_PROGRAM_FAILURE), E(CL_LINKER_NOT_AVAILABLE), E(CL_LINK_PROGRAM_FAILURE),
	E(CL_DEVICE_PARTITION_FAILED), E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
	E(CL_INVALID_VALUE), E(CL_INVALID_DEVICE_TYPE), E(CL_INVALID_PLATFORM),
	E(CL_INVALID_DEVICE), E(CL_INVALID_CONTEXT), E(CL_INVALID_QUEUE_PROPERTIES),
	E(CL_INVALID_COMMAND_QUEUE), E(CL_INVALID_HOST_PTR), E(CL_INVALID_MEM_OBJECT),
	E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), E(CL_INVALID_IMAGE_SIZE), E(CL_INVALID_SAMPLER),
	E(CL_INVALID_BINARY), E(CL_INVALID_BUILD_OPTIONS), E(CL_INVALID_PROGRAM),
	E(CL_INVALID_PROGRAM_EXECUTABLE), E(CL_INVALID_KERNEL_NAME),
	E(CL_INVALID_KERNEL_DEFINITION), E(CL_INVALID_KERNEL), E(CL_INVALID_ARG_INDEX),
	E(CL_INVALID_ARG_VALUE), E(CL_INVALID_ARG_SIZE), E(CL_INVALID_KERNEL_ARGS),
	E(CL_INVALID_WORK_DIMENSION), E(CL_INVALID_WORK_GROUP_SIZE),
	E(CL_INVALID_WORK_ITEM_SIZE), E(CL_INVALID_GLOBAL_OFFSET),
	E(CL_INVALID_EVENT_WAIT_LIST), E(CL_INVALID_EVENT), E(CL_INVALID_OPERATION),
	E(CL_INVALID_GL_OBJECT), E(CL_INVALID_BUFFER_SIZE), E(CL_INVALID_MIP_LEVEL),
	E(CL_INVALID_GLOBAL_WORK_SIZE), E(CL_INVALID_PROPERTY), E(CL_INVALID_IMAGE_DESCRIPTOR),
	E(CL_INVALID_COMPILER_OPTIONS), E(CL_INVALID_LINKER_OPTIONS),
	E(CL_INVALID_DEVICE_PARTITION_COUNT),
#undef E
	{ -1001, "CL_PLATFORM_NOT_FOUND_KHR" },
};

const char *dev_strerror(cl_int err)
{
	static __thread char buf[32];
	size_t i;
	for (i = 0; i < sizeof cl_errors / sizeof cl_errors[0]; i++)
		if (cl_errors[i].code == err)
			return cl_errors[i].name;
	snprintf(buf, sizeof buf, "OpenCL error %d", (int)err);
	return buf;
}

int dev_fail(const char *what, cl_int err)
{
	msg_err("%s: %s", what, dev_strerror(err));
	return CLS_E_FAIL;
}

/* A write, not clEnqueueFillBuffer: NVIDIA's fill (driver 580) fails with
 * CL_INVALID_COMMAND_QUEUE, and leaves the context unusable, when the low
 * 32 bits of the byte offset it ends at are 2^31 or more (2 GiB + 1 MiB
 * fails, 2 GiB and 4 GiB + 1 MiB pass; contrib/bench/bufprobe.c). */
cl_mem dev_buffer(struct dev_ctx *d, size_t bytes, cl_int *err)
{
	static const cl_uchar zero = 0;
	cl_mem m = clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes, NULL, err);

	if (m && (*err = clEnqueueWriteBuffer(d->queue, m, CL_TRUE, bytes - 1, 1, &zero, 0, NULL,
					      NULL)) != CL_SUCCESS) {
		clReleaseMemObject(m);
		m = NULL;
	}
	return m;
}

cl_mem dev_regrow(struct dev_ctx *d, cl_mem old, size_t keep, size_t bytes, cl_int *err)
{
	cl_mem m = dev_buffer(d, bytes, err);

	if (m && old && keep &&
	    (*err = clEnqueueCopyBuffer(d->queue, old, m, 0, 0, keep, 0, NULL, NULL)) != CL_SUCCESS) {
		clReleaseMemObject(m);
		m = NULL;
	}
	if (old)
		clReleaseMemObject(old);
	return m;
}

int dev_parse_spec(const char *text, struct dev_spec *spec)
{
	unsigned p, d;
	char tail;

	memset(spec, 0, sizeof *spec);
	if (!text || !*text)
		return -1;
	if (strchr(text, ',')) {
		const char *at = text;
		/* Every item a spec for one device. */
		for (;;) {
			const size_t len = strcspn(at, ",");
			char item[256];
			struct dev_spec one;
			if (len == 0 || len >= sizeof item)
				return -1;
			memcpy(item, at, len);
			item[len] = '\0';
			if (dev_parse_spec(item, &one) || one.kind == DEV_ALL)
				return -1;
			if (!at[len])
				break;
			at += len + 1;
		}
		spec->kind = DEV_LIST;
		spec->name = text;
	} else if (!strcasecmp(text, "all")) {
		spec->kind = DEV_ALL;
	} else if (!strcasecmp(text, "auto")) {
		spec->kind = DEV_AUTO;
	} else if (!strcasecmp(text, "gpu")) {
		spec->kind = DEV_GPU;
	} else if (!strcasecmp(text, "cpu")) {
		spec->kind = DEV_CPU;
	} else if (isdigit((unsigned char)text[0]) && strchr(text, ':')) {
		if (sscanf(text, "%u:%u%c", &p, &d, &tail) != 2)
			return -1;
		spec->kind = DEV_INDEX;
		spec->platform = p;
		spec->device = d;
	} else {
		spec->kind = DEV_NAME;
		spec->name = text;
	}
	return 0;
}

/* Every device of every platform, flattened. */
struct dev_entry {
	cl_platform_id platform;
	cl_device_id device;
	unsigned pi, di;
	cl_device_type type;
	char name[256];
	char platform_name[256];
};

static const char no_platform_help[] =
	"install an OpenCL driver (Debian: pocl-opencl-icd for the CPU) or register "
	"an installed one in /etc/OpenCL/vendors (for NVIDIA: echo "
	"/usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd)";

/* The ICD loader's first listing is not safe to race: devices opened on
 * several threads at once list them one at a time. */
static pthread_mutex_t enum_lock = PTHREAD_MUTEX_INITIALIZER;

static int enumerate_locked(struct dev_entry **out, size_t *count);

static int enumerate(struct dev_entry **out, size_t *count)
{
	int rc;
	pthread_mutex_lock(&enum_lock);
	rc = enumerate_locked(out, count);
	pthread_mutex_unlock(&enum_lock);
	return rc;
}

static int enumerate_locked(struct dev_entry **out, size_t *count)
{
	cl_platform_id plats[32];
	cl_uint np = 0, p;
	struct dev_entry *list = NULL;
	size_t n = 0;
	cl_int err;

	err = clGetPlatformIDs(32, plats, &np);
	if (err == -1001 || (err == CL_SUCCESS && np == 0)) {
		msg_err("no OpenCL platform found: %s", no_platform_help);
		return CLS_E_FAIL;
	}
	if (err != CL_SUCCESS)
		return dev_fail("cannot list OpenCL platforms", err);
	if (np > 32)
		np = 32;
	for (p = 0; p < np; p++) {
		cl_device_id devs[64];
		cl_uint nd = 0, d;
		char pname[256] = "";

		clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS)
			continue;
		if (nd > 64)
			nd = 64;
		for (d = 0; d < nd; d++) {
			struct dev_entry *grown = realloc(list, (n + 1) * sizeof *list);
			if (!grown) {
				free(list);
				msg_errno(ENOMEM, "cannot list OpenCL devices");
				return CLS_E_FAIL;
			}
			list = grown;
			list[n].platform = plats[p];
			list[n].device = devs[d];
			list[n].pi = p;
			list[n].di = d;
			list[n].name[0] = '\0';
			clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof list[n].name, list[n].name, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof list[n].type, &list[n].type, NULL);
			memcpy(list[n].platform_name, pname, sizeof pname);
			n++;
		}
	}
	if (n == 0) {
		free(list);
		msg_err("OpenCL platforms found, but no device: %s", no_platform_help);
		return CLS_E_FAIL;
	}
	*out = list;
	*count = n;
	return 0;
}

static bool name_matches(const char *name, const char *needle)
{
	size_t nl = strlen(needle), i;
	for (i = 0; name[i]; i++)
		if (!strncasecmp(name + i, needle, nl))
			return true;
	return nl == 0;
}

/* Index into list of the device spec picks, or -1. */
static long pick(const struct dev_entry *list, size_t n, const struct dev_spec *spec)
{
	size_t i;
	switch (spec->kind) {
	case DEV_AUTO:
		for (i = 0; i < n; i++)
			if (list[i].type & CL_DEVICE_TYPE_GPU)
				return (long)i;
		for (i = 0; i < n; i++)
			if (list[i].type & CL_DEVICE_TYPE_CPU)
				return (long)i;
		return 0;
	case DEV_GPU:
	case DEV_CPU:
		for (i = 0; i < n; i++)
			if (list[i].type & (spec->kind == DEV_GPU ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU))
				return (long)i;
		return -1;
	case DEV_INDEX:
		for (i = 0; i < n; i++)
			if (list[i].pi == spec->platform && list[i].di == spec->device)
				return (long)i;
		return -1;
	case DEV_NAME:
		for (i = 0; i < n; i++)
			if (name_matches(list[i].name, spec->name) ||
			    name_matches(list[i].platform_name, spec->name))
				return (long)i;
		return -1;
	case DEV_ALL:
	case DEV_LIST:
		return -1;
	}
	return -1;
}

/* Whether "all" takes entry e of list: every GPU, or every CPU device
 * where there is no GPU. */
static bool takes_all(const struct dev_entry *list, size_t n, const struct dev_entry *e)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (list[i].type & CL_DEVICE_TYPE_GPU)
			return (e->type & CL_DEVICE_TYPE_GPU) != 0;
	return (e->type & CL_DEVICE_TYPE_CPU) != 0;
}

int dev_expand(const char *text, char ***specs, size_t *count)
{
	struct dev_spec spec;
	struct dev_entry *list = NULL;
	char **out = NULL;
	size_t n = 0, i, len;
	const char *p;

	*specs = NULL;
	*count = 0;
	if (dev_parse_spec(text, &spec))
		return CLS_E_FAIL;
	if (spec.kind == DEV_ALL) {
		size_t nd;
		if (enumerate(&list, &nd))
			return CLS_E_FAIL;
		out = calloc(nd, sizeof *out);
		for (i = 0; out && i < nd; i++) {
			if (!takes_all(list, nd, &list[i]))
				continue;
			if (!(out[n] = malloc(32)))
				break;
			snprintf(out[n++], 32, "%u:%u", list[i].pi, list[i].di);
		}
		free(list);
		if (!out || i < nd)
			goto nomem;
	} else {
		const size_t items = spec.kind == DEV_LIST ? 1 + strlen(text) / 2 : 1;
		out = calloc(items, sizeof *out);
		for (p = text; out; p += len + 1) {
			len = strcspn(p, ",");
			if (!(out[n] = strndup(p, len)))
				goto nomem;
			n++;
			if (!p[len])
				break;
		}
		if (!out)
			goto nomem;
	}
	*specs = out;
	*count = n;
	return 0;
nomem:
	dev_free_specs(out, n);
	msg_errno(ENOMEM, "cannot list the devices");
	return CLS_E_FAIL;
}

void dev_free_specs(char **specs, size_t count)
{
	size_t i;
	for (i = 0; specs && i < count; i++)
		free(specs[i]);
	free(specs);
}

static const char *type_name(cl_device_type t)
{
	if (t & CL_DEVICE_TYPE_GPU)
		return "GPU";
	if (t & CL_DEVICE_TYPE_CPU)
		return "CPU";
	if (t & CL_DEVICE_TYPE_ACCELERATOR)
		return "accelerator";
	return "other";
}

int dev_list(FILE *out)
{
	struct dev_entry *list;
	struct dev_spec autospec = { DEV_AUTO, 0, 0, NULL };
	size_t n, i;
	long chosen;

	if (enumerate(&list, &n))
		return CLS_E_FAIL;
	chosen = pick(list, n, &autospec);
	for (i = 0; i < n; i++) {
		cl_ulong mem = 0, alloc = 0;
		cl_uint cu = 0;
		clGetDeviceInfo(list[i].device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
		clGetDeviceInfo(list[i].device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
		clGetDeviceInfo(list[i].device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
		fprintf(out, "%u:%u  %s  [%s]  %s, %llu MiB global memory, %llu MiB max allocation, %u compute units%s%s\n",
			list[i].pi, list[i].di, list[i].name, list[i].platform_name,
			type_name(list[i].type), (unsigned long long)(mem >> 20),
			(unsigned long long)(alloc >> 20), cu, takes_all(list, n, &list[i]) ? "  (all)" : "",
			(long)i == chosen ? "  (auto)" : "");
	}
	free(list);
	return 0;
}

void dev_drivers_stamp(char *stamp, size_t size)
{
	/* ocl-icd's: OCL_ICD_VENDORS (a directory or one .icd file), else
	 * this directory. */
	const char *at = getenv("OCL_ICD_VENDORS");
	struct stat st;

	if (!at || !*at)
		at = "/etc/OpenCL/vendors";
	if (stat(at, &st))
		snprintf(stamp, size, "%s none", at);
	else
		snprintf(stamp, size, "%s %lld.%09ld", at, (long long)st.st_mtim.tv_sec,
			 (long)st.st_mtim.tv_nsec);
}

int dev_auto_probe(char *name, size_t size, bool *cpu, char *why, size_t why_size)
{
	struct dev_entry *list;
	struct dev_spec autospec = { DEV_AUTO, 0, 0, NULL };
	size_t n;
	long i;
	int rc;

	/* Its failure, as dev_open would print it, for the caller to tell. */
	msg_keep(why, why_size);
	rc = enumerate(&list, &n);
	msg_keep(NULL, 0);
	if (rc)
		return CLS_E_FAIL;
	i = pick(list, n, &autospec);
	/* As the engine names it (cl_engine.c). */
	snprintf(name, size, "%s [%s]", list[i].name, list[i].platform_name);
	*cpu = (list[i].type & CL_DEVICE_TYPE_CPU) && !(list[i].type & CL_DEVICE_TYPE_GPU);
	free(list);
	return 0;
}

static int open_now(struct dev_ctx *d, const char *spec_text, bool profiling)
{
	struct dev_entry *list;
	struct dev_spec spec;
	size_t n;
	long i;
	cl_int err;
	char drv[128] = "", dver[128] = "";

	memset(d, 0, sizeof *d);
	if (dev_parse_spec(spec_text, &spec)) {
		msg_err("invalid device '%s': use auto, gpu, cpu, P:D or part of a device name",
			spec_text ? spec_text : "");
		return CLS_E_FAIL;
	}
	/* Several devices are opened one by one, each by its own spec. */
	assert(spec.kind != DEV_ALL && spec.kind != DEV_LIST);
	if (enumerate(&list, &n))
		return CLS_E_FAIL;
	i = pick(list, n, &spec);
	if (i < 0) {
		size_t j;
		char found[1024];
		int len = 0;
		for (j = 0; j < n && len < (int)sizeof found - 1; j++)
			len += snprintf(found + len, sizeof found - (size_t)len, "%s%u:%u %s (%s)",
					j ? ", " : "", list[j].pi, list[j].di, list[j].name,
					type_name(list[j].type));
		msg_err("no OpenCL device matches '%s'; found: %s", spec_text, found);
		free(list);
		return CLS_E_FAIL;
	}
	d->platform = list[i].platform;
	d->device = list[i].device;
	d->pi = list[i].pi;
	d->di = list[i].di;
	d->type = list[i].type;
	memcpy(d->name, list[i].name, sizeof d->name);
	memcpy(d->platform_name, list[i].platform_name, sizeof d->platform_name);
	free(list);

	clGetDeviceInfo(d->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, NULL);
	clGetDeviceInfo(d->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL);
	clGetDeviceInfo(d->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem, &d->local_mem, NULL);
	clGetDeviceInfo(d->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg, &d->max_wg, NULL);
	clGetDeviceInfo(d->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units, NULL);
	clGetDeviceInfo(d->device, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
	clGetDeviceInfo(d->device, CL_DEVICE_VERSION, sizeof dver, dver, NULL);
	snprintf(d->version, sizeof d->version, "%s / %s", dver, drv);

	d->context = clCreateContext(NULL, 1, &d->device, NULL, NULL, &err);
	if (!d->context)
		return dev_fail("cannot create an OpenCL context", err);
	d->profiling = profiling;
	d->queue = clCreateCommandQueue(d->context, d->device,
					profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
	if (!d->queue) {
		clReleaseContext(d->context);
		d->context = NULL;
		return dev_fail("cannot create an OpenCL command queue", err);
	}
	msg_info(1, "device %u:%u %s [%s], %s", d->pi, d->di, d->name, d->platform_name, d->version);
	return 0;
}

/* The device dev_open_ahead opens, until dev_open takes it or
 * dev_ahead_done closes it. */
static struct {
	/* Opened ahead once, or a device opened already (a stream sorted in
	 * runs as it is read; the threads of -d all). */
	atomic_bool tried;
	atomic_bool wanted;	/* dev_open has come for the device */
	bool running;		/* the thread, not joined yet */
	bool joined;		/* joined by dev_ahead_opened, not taken yet */
	pthread_t thread;
	char spec[256];
	bool profiling;
	struct dev_ctx d;
	int rc;
	char failure[1024];	/* why it did not open, for the sort to say */
	double t_open;
	void (*then)(struct dev_ctx *, void *);
	void *arg;
} ahead;

static void *ahead_main(void *arg)
{
	const double t0 = now_sec();
	(void)arg;
	/* Its failure is the sort's to report, where the sort comes for the
	 * device, or to set aside where the host takes the sort. */
	msg_keep(ahead.failure, sizeof ahead.failure);
	faults_hold(true);
	ahead.rc = open_now(&ahead.d, ahead.spec, ahead.profiling);
	msg_keep(NULL, 0);
	ahead.t_open = now_sec() - t0;
	/* then lets the faults go where it has made what it makes beside
	 * the read and goes on at length (cl_engine.c). */
	if (ahead.rc == 0 && ahead.then)
		ahead.then(&ahead.d, ahead.arg);
	faults_hold(false);
	return NULL;
}

void dev_open_ahead(const char *spec, bool profiling, void (*then)(struct dev_ctx *, void *),
		    void *arg)
{
	if (strlen(spec) >= sizeof ahead.spec || atomic_exchange(&ahead.tried, true))
		return;
	strcpy(ahead.spec, spec);
	ahead.profiling = profiling;
	ahead.then = then;
	ahead.arg = arg;
	ahead.running = pthread_create(&ahead.thread, NULL, ahead_main, NULL) == 0;
}

bool dev_ahead_wanted(void)
{
	return atomic_load(&ahead.wanted);
}

/* Join the thread of dev_open_ahead, if it runs; its device, opened or
 * not, is then joined, for join_ahead to take. */
static void wait_ahead(void)
{
	if (!ahead.running)
		return;
	pthread_join(ahead.thread, NULL);
	ahead.running = false;
	ahead.joined = true;
}

/* Take the device of dev_open_ahead, once its thread is joined: true when
 * it opened the device spec names with profiling, or failed to (its
 * failure kept for the caller to print). */
static bool join_ahead(const char *spec, bool profiling)
{
	wait_ahead();
	if (!ahead.joined)
		return false;
	ahead.joined = false;
	if (strcmp(ahead.spec, spec) || ahead.profiling != profiling) {
		if (ahead.rc == 0)
			dev_close(&ahead.d);
		return false;
	}
	return true;
}

int dev_open(struct dev_ctx *d, const char *spec_text, bool profiling)
{
	atomic_store(&ahead.tried, true);
	atomic_store(&ahead.wanted, true);
	if (spec_text && join_ahead(spec_text, profiling)) {
		if (ahead.rc) {
			msg_err("%s", ahead.failure);
			return ahead.rc;
		}
		*d = ahead.d;
		d->t_ahead = ahead.t_open;
		msg_info(2, "device opened in %.3f s while the input was read", ahead.t_open);
		return 0;
	}
	return open_now(d, spec_text, profiling);
}

bool dev_ahead_pending(void)
{
	return ahead.running || ahead.joined;
}

bool dev_ahead_opened(void)
{
	if (ahead.running)
		atomic_store(&ahead.wanted, true);
	wait_ahead();
	return ahead.joined && ahead.rc == 0;
}

const char *dev_ahead_failure(void)
{
	return ahead.joined && ahead.rc ? ahead.failure : NULL;
}

void dev_ahead_done(void)
{
	if (join_ahead(ahead.spec, ahead.profiling) && ahead.rc == 0)
		dev_close(&ahead.d);
}

void dev_unpin(cl_command_queue q, cl_mem *mem, void **host, size_t n)
{
	size_t i;
	bool any = false;

	for (i = 0; i < n; i++)
		if (host[i])
			clEnqueueUnmapMemObject(q, mem[i], host[i], 0, NULL, NULL);
	for (i = 0; i < n; i++) {
		any |= mem[i] != NULL;
		host[i] = NULL;
	}
	if (any)
		clFinish(q);
	for (i = 0; i < n; i++) {
		if (mem[i])
			clReleaseMemObject(mem[i]);
		mem[i] = NULL;
	}
}

void dev_close(struct dev_ctx *d)
{
	size_t i;

	for (i = 0; i < DEV_EARLY; i++) {
		if (d->early[i].prog)
			clReleaseProgram(d->early[i].prog);
		d->early[i].prog = NULL;
	}
	dev_unpin(d->queue, d->stage.mem, d->stage.host, DEV_STAGE);
	d->stage.bytes = 0;
	if (d->sent.buf)
		clReleaseMemObject(d->sent.buf);
	if (d->sent.text)
		clReleaseMemObject(d->sent.text);
	memset(&d->sent, 0, sizeof d->sent);
	if (d->queue)
		clReleaseCommandQueue(d->queue);
	if (d->context)
		clReleaseContext(d->context);
	d->queue = NULL;
	d->context = NULL;
}
