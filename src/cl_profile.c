#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cl_engine_priv.h"
#include "util.h"

/* Profiling keeps every kernel's event, to add up their run times. */
void cle_record_event(struct cle *e, cl_kernel k, cl_event ev)
{
	if (e->nprof == e->prof_cap) {
		size_t cap = 2 * e->prof_cap + 64;
		cl_event *g = realloc(e->prof, cap * sizeof *g);
		cl_kernel *gk = realloc(e->prof_kernel, cap * sizeof *gk);
		if (g)
			e->prof = g;
		if (gk)
			e->prof_kernel = gk;
		if (!g || !gk)
			return;
		e->prof_cap = cap;
	}
	clRetainEvent(ev);
	e->prof_kernel[e->nprof] = k;
	e->prof[e->nprof++] = ev;
}

void cle_record_kernel(void *ctx, cl_kernel k, cl_event ev)
{
	cle_record_event(ctx, k, ev);
}

/* The engine's kernels in the order -vv reports them: kernel i (NULL where
 * this engine has none) and, when name is not NULL, its name. */
static cl_kernel kernel_at(const struct cle *e, size_t i, char *name, size_t size)
{
	const char *rname;
	cl_kernel k;

	if (i < CLN_NKERNELS)
		return cln_kernel(&e->net, i, name, size);
	i -= CLN_NKERNELS;
	if (i == 0) {
		if (name)
			snprintf(name, size, "merge of pieces");
		return e->merge_pieces;
	}
	if (i == 1) {
		if (name)
			snprintf(name, size, "gather of records");
		return e->gather.kernel;
	}
	if (i == 2) {
		if (name)
			snprintf(name, size, "copy of lines");
		return e->gather.line_copy;
	}
	k = clr_kernel(&e->radix, i - 3, &rname);
	if (name)
		snprintf(name, size, "%s", rname);
	return k;
}

/* Slot of kernel k, one of the engine's, in kernel_time[]. */
static size_t kernel_slot(const struct cle *e, cl_kernel k)
{
	size_t i = 0;
	while (i + 1 < NKERNELS && kernel_at(e, i, NULL, 0) != k)
		i++;
	return i;
}

static double event_seconds(cl_event first, cl_event last)
{
	cl_ulong start = 0, end = 0;
	if (!first || !last ||
	    clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ||
	    clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL))
		return 0;
	return end > start ? (double)(end - start) * 1e-9 : 0;
}

void cle_add_times(struct cle *e, const cl_event *up, size_t nup, const cl_event *down,
		      size_t ndown)
{
	size_t i;

	for (i = 0; i < nup; i++)
		e->times.upload += event_seconds(up[i], up[i]);
	for (i = 0; i < ndown; i++)
		e->times.download += event_seconds(down[i], down[i]);
	for (i = 0; i < e->nprof; i++) {
		const double t = event_seconds(e->prof[i], e->prof[i]);
		e->times.sort += t;
		e->kernel_time[kernel_slot(e, e->prof_kernel[i])] += t;
	}
}

void cle_report(const struct engine *base)
{
	const struct cle *e = (const struct cle *)base;
	char line[512], name[32];
	size_t len = 0, i;

	if (e->dev->profiling)
		msg_info(1, "device time: upload %.6f s, sort %.6f s, download %.6f s",
			 e->times.upload, e->times.sort, e->times.download);
	line[0] = '\0';
	for (i = 0; i < NKERNELS; i++) {
		const double s = e->kernel_time[i];
		kernel_at(e, i, name, sizeof name);
		if (s > 0 && len < sizeof line - 64)
			len += (size_t)snprintf(line + len, sizeof line - len, "%s%s %.6f s",
						len ? ", " : "", name, s);
	}
	if (len)
		msg_info(2, "kernel time: %s", line);
}
