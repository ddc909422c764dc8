#include "config.h"
#include "cl_build.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clsort.h"
#include "util.h"

/* The engines open on each device.  PoCL 3.1 keeps the kernels it has
 * loaded in one cache for the whole process, found by the program's build,
 * and fails an assertion when two contexts on one device (a device listed
 * twice) run the same kernel at once; so each engine opened on a device
 * that already has one builds its programs with its own -DINSTANCE: the
 * lowest number that no engine open on the device has. */
#define MAX_OPEN 64
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	cl_device_id id;	/* NULL: a free slot */
	unsigned instance;
} open_on[MAX_OPEN];

int clb_instance_open(cl_device_id id, unsigned *instance)
{
	bool taken[MAX_OPEN + 1] = { false };
	int i, slot = -1;
	unsigned k = 0;

	pthread_mutex_lock(&open_lock);
	for (i = 0; i < MAX_OPEN; i++) {
		if (open_on[i].id == id)
			taken[open_on[i].instance] = true;
		else if (!open_on[i].id && slot < 0)
			slot = i;
	}
	while (taken[k])
		k++;
	if (slot >= 0) {
		open_on[slot].id = id;
		open_on[slot].instance = k;
	}
	pthread_mutex_unlock(&open_lock);
	*instance = k;
	return slot;
}

void clb_instance_close(int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&open_lock);
	open_on[slot].id = NULL;
	pthread_mutex_unlock(&open_lock);
}

int clb_build(struct dev_ctx *d, const char *options, const char *const *names, size_t n,
	      cl_program *prog, cl_kernel *kernels)
{
	char list[CLB_MAX_KERNELS * 24] = "";
	size_t i, len = 0;
	double t0;

	assert(n <= CLB_MAX_KERNELS);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? " " : "", names[i]);
	*prog = NULL;
	if (dev_build(d, options, list, prog))
		return CLS_E_FAIL;
	/* Some drivers compile a kernel when it is created: part of the
	 * build's cost. */
	t0 = now_sec();
	for (i = 0; i < n; i++) {
		cl_int err;
		kernels[i] = clCreateKernel(*prog, names[i], &err);
		if (!kernels[i]) {
			msg_err("cannot create kernel %s: %s", names[i], dev_strerror(err));
			while (i-- > 0)
				clReleaseKernel(kernels[i]);
			clReleaseProgram(*prog);
			*prog = NULL;
			return CLS_E_FAIL;
		}
	}
	msg_info(2, "%zu kernel%s created in %.3f s", n, n == 1 ? "" : "s", now_sec() - t0);
	return 0;
}

static void *build_main(void *arg)
{
	struct clb_job *j = arg;
	const int rc = clb_build(j->d, j->options, j->names, j->n, &j->prog, j->kernels);

	pthread_mutex_lock(&j->lock);
	j->rc = rc;
	j->done = true;
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

void clb_start(struct clb_job *j)
{
	pthread_mutex_init(&j->lock, NULL);
	j->done = false;
	j->running = pthread_create(&j->tid, NULL, build_main, j) == 0;
	if (!j->running)
		build_main(j);
}

bool clb_done(struct clb_job *j)
{
	bool done;
	pthread_mutex_lock(&j->lock);
	done = j->done;
	pthread_mutex_unlock(&j->lock);
	return done;
}

int clb_join(struct clb_job *j)
{
	if (j->running)
		pthread_join(j->tid, NULL);
	j->running = false;
	return j->rc;
}
