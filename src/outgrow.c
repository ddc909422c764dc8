#include "config.h"
#include "outgrow.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tmpfile.h"
#include "util.h"

/* Room is taken in steps of at least this many bytes, behind the stream:
 * a few hundred calls for gigabytes, each short beside the reads. */
#define GROW_STEP ((uint64_t)32 << 20)

struct out_grow {
	int fd;
	uint64_t want;		/* the output bytes the stream stands for so far */
	uint64_t taken;		/* bytes of room taken from start on */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t more;	/* want has grown, or stop is set */
	pthread_t thread;
	uint64_t start;		/* the file offset the output starts at */
	double t;		/* seconds in fallocate */
};

static void *grow_main(void *arg)
{
	struct out_grow *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		uint64_t at, n;
		double t0;
		bool ok;

		if (g->want < g->taken + GROW_STEP) {
			pthread_cond_wait(&g->more, &g->lock);
			continue;
		}
		at = g->taken;
		n = g->want - at;
		pthread_mutex_unlock(&g->lock);
		t0 = now_sec();
		ok = fallocate(g->fd, 0, (off_t)(g->start + at), (off_t)n) == 0;
		pthread_mutex_lock(&g->lock);
		g->t += now_sec() - t0;
		/* A file system without fallocate, or a full one: out_map
		 * finds out for itself. */
		if (!ok)
			break;
		g->taken = at + n;
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/* Where w's output would start in its file, if out_map could map it; -1
 * where it could not. */
static long long grow_from(struct out_writer *w)
{
	if (w->map || w->part || w->own || w->mem || w->total || w->len)
		return -1;
	if (w->dest.temp)
		return 0;
	return w->is_stdout ? out_stdout_end(w) : -1;
}

void out_grow(struct out_writer *w, uint64_t bytes)
{
	struct out_grow *g = w->grow;

	if (!g) {
		long long start;

		if (w->grow_declined || w->grown || (start = grow_from(w)) < 0 ||
		    !(g = calloc(1, sizeof *g))) {
			w->grow_declined = true;
			return;
		}
		g->fd = w->fd;
		g->start = (uint64_t)start;
		pthread_mutex_init(&g->lock, NULL);
		pthread_cond_init(&g->more, NULL);
		/* Standard output has no temporary name to drop: a signal cuts
		 * it back to where the output starts. */
		if (w->is_stdout)
			tmp_guard_stdout(start);
		if (pthread_create(&g->thread, NULL, grow_main, g)) {
			if (w->is_stdout)
				tmp_guard_stdout(-1);
			pthread_cond_destroy(&g->more);
			pthread_mutex_destroy(&g->lock);
			free(g);
			w->grow_declined = true;
			return;
		}
		w->grow = g;
	}
	pthread_mutex_lock(&g->lock);
	g->want = bytes;
	pthread_cond_signal(&g->more);
	pthread_mutex_unlock(&g->lock);
}

void out_grow_end(struct out_writer *w)
{
	struct out_grow *g = w->grow;
	struct stat st;

	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	pthread_cond_signal(&g->more);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	w->grow = NULL;
	/* The file's length says what was taken, a failed step's part too:
	 * the end cuts it back to the data. */
	w->grown = true;
	w->map_at = g->start;
	w->presized = fstat(g->fd, &st) == 0 && (uint64_t)st.st_size > g->start
			      ? (size_t)((uint64_t)st.st_size - g->start)
			      : 0;
	if (w->presized == 0 && w->is_stdout)
		tmp_guard_stdout(-1);
	msg_info(2, "output: room for %llu bytes taken in %.3f s while the input arrived",
		 (unsigned long long)g->taken, g->t);
	pthread_cond_destroy(&g->more);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
