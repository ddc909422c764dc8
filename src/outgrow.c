#include "config.h"
#include "outgrow.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "tmpfile.h"
#include "util.h"

/* Room is taken in steps of at least this many bytes, behind the stream:
 * a few hundred calls for gigabytes, each short beside the reads. */
#define GROW_STEP ((uint64_t)32 << 20)
/* Its pages are faulted in in pieces of this many bytes: the stream's end
 * waits for the one under way (a few milliseconds). */
#define FAULT_STEP ((uint64_t)8 << 20)
/* From this many threads the room's pages are faulted in behind the room,
 * while the stream arrives, so that the sort after the stream's end finds
 * them there.  A stream from the page cache leaves most of such a machine
 * idle (16 threads: 75 % while 1 GiB of kv lines came); on 2 the read and
 * the stream's writer keep both busy. */
#define FAULT_THREADS 4
/* While faults are held (util.h), the pages wait this long between
 * looks. */
#define FAULT_HELD_NS 2000000

struct out_grow {
	int fd;
	int rw;			/* the file open for reading and writing... */
	bool rw_own;		/* ...a descriptor of its own (out_rw_fd) */
	unsigned char *map;	/* its mapping from the page start lies in,
				 * made for the first pages faulted in... */
	size_t map_len;		/* ...lead + fault_most bytes long */
	uint64_t want;		/* the output bytes the stream stands for so far */
	uint64_t taken;		/* bytes of room taken from start on */
	bool fault;		/* their pages faulted in behind them... */
	uint64_t faulted;	/* ...bytes of map so far, whole pages... */
	uint64_t fault_most;	/* ...up to this many */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t more;	/* want has grown, or stop is set */
	pthread_t thread;
	uint64_t start;		/* the file offset the output starts at... */
	uint64_t page, lead;	/* ...its page size, and where in its first page
				 * the output starts */
	double t;		/* seconds in fallocate */
	double t_fault;		/* seconds faulting pages in */
};

/* The pages [at, at + n) of the mapping the sort will write through
 * (out_map takes it) faulted in for writing, at and n whole pages: the
 * room's bytes from at - lead on (lead: where in its first page the output
 * starts), not the first page where it holds what standard output held
 * before the output's start.  The mapping reaches past the file's end, up
 * to the most faulted in, and is made on the first call.  False where they
 * could not be (a file that cannot be mapped for writing). */
static bool fault_room(struct out_grow *g, uint64_t at, uint64_t n)
{
	const uint64_t lead = g->lead;
	const uint64_t from = at == 0 && lead ? g->page : at;

	if (!g->map) {
		void *p = mmap(NULL, (size_t)(lead + g->fault_most), PROT_READ | PROT_WRITE,
			       MAP_SHARED, g->rw, (off_t)(g->start - lead));
		if (p == MAP_FAILED)
			return false;
		g->map = p;
		g->map_len = (size_t)(lead + g->fault_most);
	}
	return from >= at + n || populate_range(g->map + from, (size_t)(at + n - from));
}

static void *grow_main(void *arg)
{
	struct out_grow *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		/* Whole pages of room not faulted in yet (faulted counts the
		 * mapping's bytes, from the output's first page). */
		const uint64_t room = (g->lead + g->taken) / g->page * g->page;
		const bool to_fault = g->fault && g->faulted < room && g->faulted < g->fault_most;
		uint64_t at, n;
		double t0;
		bool ok;

		if (g->want >= g->taken + GROW_STEP) {
			at = g->taken;
			n = g->want - at;
			pthread_mutex_unlock(&g->lock);
			t0 = now_sec();
			ok = tmp_fallocate(g->fd, (off_t)(g->start + at), (off_t)n) == 0;
			pthread_mutex_lock(&g->lock);
			g->t += now_sec() - t0;
			/* A file system without fallocate, or a full one:
			 * out_map finds out for itself. */
			if (!ok)
				break;
			g->taken = at + n;
		} else if (to_fault && faults_held()) {
			/* A device opening: looked at again shortly. */
			const struct timespec ts = deadline_in(FAULT_HELD_NS);
			pthread_cond_timedwait(&g->more, &g->lock, &ts);
		} else if (to_fault) {
			at = g->faulted;
			n = room - at < FAULT_STEP ? room - at : FAULT_STEP;
			if (n > g->fault_most - at)
				n = g->fault_most - at;
			pthread_mutex_unlock(&g->lock);
			t0 = now_sec();
			ok = fault_room(g, at, n);
			pthread_mutex_lock(&g->lock);
			g->t_fault += now_sec() - t0;
			if (ok)
				g->faulted = at + n;
			else
				g->fault = false;
		} else {
			pthread_cond_wait(&g->more, &g->lock);
		}
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

void out_grow(struct out_writer *w, uint64_t bytes, unsigned threads)
{
	struct out_grow *g = w->grow;

	if (!g) {
		const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		long long start;

		if (w->grow_declined || w->grown || (start = grow_from(w)) < 0 ||
		    !(g = calloc(1, sizeof *g))) {
			w->grow_declined = true;
			return;
		}
		g->fd = w->fd;
		g->start = (uint64_t)start;
		g->page = page;
		g->lead = g->start % page;
		/* No more pages than a quarter of the memory free: a stream
		 * that outgrows memory is sorted in runs, and its output's
		 * pages wait for the merge. */
		g->rw = threads >= FAULT_THREADS ? out_rw_fd(w, &g->rw_own) : -1;
		g->fault = g->rw >= 0;
		g->fault_most = mem_available() / 4 / page * page;
		pthread_mutex_init(&g->lock, NULL);
		pthread_cond_init(&g->more, NULL);
		/* Standard output has no temporary name to drop: a signal cuts
		 * it back to where the output starts. */
		if (w->is_stdout)
			tmp_guard_stdout(start);
		if (pthread_create(&g->thread, NULL, grow_main, g)) {
			if (w->is_stdout)
				tmp_guard_stdout(-1);
			if (g->rw_own)
				close(g->rw);
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
	if (g->rw_own)
		close(g->rw);
	w->grow = NULL;
	w->grown_map = g->map;
	w->grown_map_len = g->map_len;
	/* The output's bytes in the pages faulted in (the first page's
	 * lead is what came before it). */
	w->grown_faulted = g->faulted > g->lead ? (size_t)(g->faulted - g->lead) : 0;
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
	if (w->grown_faulted)
		msg_info(2, "output: %zu bytes of its pages faulted in in %.3f s while the input "
			    "arrived", w->grown_faulted, g->t_fault);
	pthread_cond_destroy(&g->more);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
