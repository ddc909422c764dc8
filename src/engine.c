#include "config.h"
#include "engine.h"

#include <pthread.h>
#include <stdlib.h>
#include <strings.h>

#include "cl_engine.h"
#include "device.h"
#include "host_engine.h"
#include "util.h"

bool eng_is_host(const char *spec)
{
	return spec && !strcasecmp(spec, ENG_HOST);
}

int eng_open(struct engine **e, const struct eng_config *c)
{
	*e = NULL;
	return eng_is_host(c->device) ? hst_open(e, c) : cle_open(e, c);
}

void eng_open_ahead(const struct eng_config *c)
{
	if (!eng_is_host(c->device))
		cle_open_ahead(c);
}

int eng_capacity(struct engine *e, size_t want, size_t *cap)
{
	return e->ops->capacity(e, want, cap);
}

void eng_set_memory(struct engine *e, uint64_t memory)
{
	e->memory = memory;
}

int eng_sort(struct engine *e, size_t n, eng_producer produce, eng_consumer consume, void *ctx)
{
	return e->ops->sort(e, n, produce, consume, ctx);
}

int eng_sort_records(struct engine *e, size_t n, size_t rec_size, eng_producer produce,
		     eng_producer records, eng_consumer consume, void *ctx)
{
	if (!e->ops->sort_records)
		return ENG_NO_RECORDS;
	return e->ops->sort_records(e, n, rec_size, produce, records, consume, ctx);
}

int eng_sort_lines(struct engine *e, const struct eng_lines *l, eng_producer produce,
		   eng_consumer consume, void *ctx)
{
	if (!e->ops->sort_lines)
		return ENG_NO_RECORDS;
	return e->ops->sort_lines(e, l, produce, consume, ctx);
}

int eng_sort_in(struct engine *e, size_t n, void *words, void *room, unsigned low,
		const struct radix_counts *counts, eng_producer produce, eng_consumer consume,
		void *ctx)
{
	if (!e->ops->sort_in)
		return ENG_NO_RECORDS;
	return e->ops->sort_in(e, n, words, room, low, counts, produce, consume, ctx);
}

void *eng_spare(struct engine *e, const void *sorted, size_t *bytes)
{
	*bytes = 0;
	return e->ops->spare ? e->ops->spare(e, sorted, bytes) : NULL;
}

int eng_sort_above(struct engine *e, size_t n, unsigned low, eng_producer produce,
		   eng_consumer consume, void *ctx)
{
	if (!e->ops->sort_above)
		return ENG_NO_RECORDS;
	return e->ops->sort_above(e, n, low, produce, consume, ctx);
}

int eng_merge(struct engine *e, size_t n, const size_t *bounds, size_t k, eng_producer produce,
	      eng_consumer consume, void *ctx)
{
	if (!e->ops->merge)
		return e->ops->sort(e, n, produce, consume, ctx);
	return e->ops->merge(e, n, bounds, k, produce, consume, ctx);
}

void eng_report(const struct engine *e)
{
	e->ops->report(e);
}

/* Engines eng_close kept, where closes are deferred (eng_close is called
 * on the threads of several devices' jobs). */
static struct {
	pthread_mutex_t lock;
	bool on;
	struct engine **kept;
	size_t n;
} deferred = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Whether e was kept for eng_close_deferred. */
static bool keep(struct engine *e)
{
	struct engine **more;
	bool kept = false;

	pthread_mutex_lock(&deferred.lock);
	if (deferred.on && !e->host &&
	    (more = realloc(deferred.kept, (deferred.n + 1) * sizeof *more))) {
		deferred.kept = more;
		deferred.kept[deferred.n++] = e;
		kept = true;
	}
	pthread_mutex_unlock(&deferred.lock);
	return kept;
}

void eng_defer_closes(void)
{
	pthread_mutex_lock(&deferred.lock);
	deferred.on = true;
	pthread_mutex_unlock(&deferred.lock);
}

void eng_close_deferred(void)
{
	struct engine **kept;
	size_t i, n;

	pthread_mutex_lock(&deferred.lock);
	deferred.on = false;
	kept = deferred.kept;
	n = deferred.n;
	deferred.kept = NULL;
	deferred.n = 0;
	pthread_mutex_unlock(&deferred.lock);
	for (i = 0; i < n; i++)
		eng_close(kept[i]);
	free(kept);
}

double eng_close(struct engine *e)
{
	double t0, t;
	bool host;

	if (!e || keep(e))
		return 0;
	host = e->host;
	t0 = now_sec();
	e->ops->close(e);
	t = now_sec() - t0;
	if (!host)
		msg_info(2, "device released in %.3f s", t);
	return t;
}

int eng_list(FILE *out, unsigned threads)
{
	fprintf(out, "%s  radix sort on the host  CPU, %u thread%s\n", ENG_HOST, threads,
		threads == 1 ? "" : "s");
	return dev_list(out);
}
