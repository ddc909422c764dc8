/* bufprobe: how an OpenCL device treats byte offsets of 2 GiB and more in
 * one buffer.  For each buffer size it tries, each on a new queue, one byte
 * written at the buffer's last byte by clEnqueueFillBuffer, by
 * clEnqueueFillBuffer with a 4-byte pattern over the last word, by
 * clEnqueueWriteBuffer and by a kernel, and reads the byte back.  Each try
 * runs in a process of its own: on some drivers one failure leaves the
 * device unusable to the process, and every later command fails too.
 *
 *   bufprobe [-d PLATFORM:DEVICE] [SIZE_MIB...]
 *
 * It prints one line per size and way: "ok", or the OpenCL error.  This is
 * the minimal program behind the note on device buffers in NOTES.md. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *src =
	"__kernel void poke(__global uchar *b, const ulong at, const uchar v) { b[at] = v; }\n";

enum way { FILL, FILL4, WRITE, KERNEL };
static const char *const way_name[] = { "fill", "fill4", "write", "kernel" };

/* Write 0x5a at byte at of a new buffer of size bytes by the way given and
 * read it back: CL_SUCCESS, -9999 for a wrong byte, or the error. */
static cl_int probe(cl_device_id dev, size_t size, size_t at, enum way way)
{
	cl_int err, e2;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_program prog = NULL;
	cl_command_queue q = NULL;
	cl_mem buf = NULL;
	cl_kernel k = NULL;
	unsigned char v = 0x5a, back = 0;

	if (!ctx)
		return err;
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (prog)
		err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
	if (err == CL_SUCCESS)
		q = clCreateCommandQueue(ctx, dev, 0, &err);
	if (!q) {
		if (prog)
			clReleaseProgram(prog);
		clReleaseContext(ctx);
		return err;
	}
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
	if (!buf)
		goto out;
	switch (way) {
	case FILL:
		err = clEnqueueFillBuffer(q, buf, &v, 1, at, 1, 0, NULL, NULL);
		break;
	case FILL4: {
		/* a whole word's pattern over the last aligned word */
		const cl_uint word = 0x5a5a5a5au;
		err = clEnqueueFillBuffer(q, buf, &word, 4, at & ~(size_t)3, 4, 0, NULL, NULL);
		break;
	}
	case WRITE:
		err = clEnqueueWriteBuffer(q, buf, CL_TRUE, at, 1, &v, 0, NULL, NULL);
		break;
	case KERNEL: {
		const cl_ulong a = at;
		size_t one = 1;
		k = clCreateKernel(prog, "poke", &err);
		if (!k)
			goto out;
		err = clSetKernelArg(k, 0, sizeof buf, &buf);
		err |= clSetKernelArg(k, 1, sizeof a, &a);
		err |= clSetKernelArg(k, 2, 1, &v);
		if (err == CL_SUCCESS)
			err = clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL);
		break;
	}
	}
	if (err == CL_SUCCESS)
		err = clFinish(q);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(q, buf, CL_TRUE, at, 1, &back, 0, NULL, NULL);
	if (err == CL_SUCCESS && back != v)
		err = -9999;
out:
	e2 = clFinish(q);
	(void)e2;
	if (k)
		clReleaseKernel(k);
	if (buf)
		clReleaseMemObject(buf);
	clReleaseCommandQueue(q);
	clReleaseProgram(prog);
	clReleaseContext(ctx);
	return err;
}

/* Device di of platform pi, or NULL. */
static cl_device_id find_device(unsigned pi, unsigned di)
{
	cl_platform_id plats[16];
	cl_device_id devs[16];
	cl_uint np = 0, nd = 0;
	if (clGetPlatformIDs(16, plats, &np) || pi >= np ||
	    clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 16, devs, &nd) || di >= nd)
		return NULL;
	return devs[di];
}

int main(int argc, char **argv)
{
	static const size_t dflt[] = { 1024, 2048, 2049, 3072, 4096, 4097, 6144, 8192, 8193 };
	unsigned pi = 0, di = 0;
	cl_device_id dev;
	cl_ulong max_alloc = 0;
	char name[256];
	int a = 1, i;

	if (argc > 2 && !strcmp(argv[1], "-d")) {
		if (sscanf(argv[2], "%u:%u", &pi, &di) != 2) {
			fprintf(stderr, "bufprobe: -d takes PLATFORM:DEVICE\n");
			return 2;
		}
		a = 3;
	}
	/* The parent only forks: each child opens the device afresh. */
	{
		pid_t pid = fork();
		if (pid == 0) {
			if (!(dev = find_device(pi, di)))
				_exit(2);
			clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
			clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc,
					NULL);
			printf("device: %s, largest buffer %llu MiB\n", name,
			       (unsigned long long)(max_alloc >> 20));
			fflush(stdout);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &i, 0) < 0 || !WIFEXITED(i) || WEXITSTATUS(i) == 2) {
			fprintf(stderr, "bufprobe: no device %u:%u\n", pi, di);
			return 2;
		}
	}
	for (i = 0; i < (a < argc ? argc - a : (int)(sizeof dflt / sizeof dflt[0])); i++) {
		const size_t mib = a < argc ? strtoull(argv[a + i], NULL, 10) : dflt[i];
		const size_t size = mib << 20;
		int w, st;
		for (w = FILL; w <= KERNEL; w++) {
			pid_t pid = fork();
			if (pid == 0) {
				cl_int r;
				dev = find_device(pi, di);
				clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc,
						&max_alloc, NULL);
				if (size > max_alloc)
					_exit(0);
				r = probe(dev, size, size - 1, (enum way)w);
				printf("%6zu MiB, last byte at %% 2^32 = 0x%08llx, %-6s: %s (%d)\n", mib,
				       (unsigned long long)((size - 1) & 0xffffffffu), way_name[w],
				       r == CL_SUCCESS ? "ok" : "FAILED", r);
				fflush(stdout);
				_exit(0);
			}
			if (pid > 0)
				waitpid(pid, &st, 0);
		}
	}
	return 0;
}
