#include "config.h"
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clsort.h"
#include "progress.h"
#include "tmpfile.h"
#include "util.h"

/* Map bytes [off, end) of the regular file fd; the mapping starts at the
 * page that holds off. */
static int map_fd(struct in_file *f, int fd, off_t off, off_t end)
{
	const off_t page = (off_t)sysconf(_SC_PAGESIZE), start = off / page * page;
	const size_t len = (size_t)(end - start);
	void *p;

	if (off >= end) {
		f->data = (const unsigned char *)"";
		return 0;
	}
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, start);
	if (p == MAP_FAILED)
		return -1;
	/* Read in order, but records are gathered back in any order. */
	madvise(p, len, MADV_WILLNEED);
	f->map = p;
	f->map_len = len;
	f->data = (const unsigned char *)p + (off - start);
	f->size = (size_t)(end - off);
	return 0;
}

/* Bytes asked of one read(2) of a stream, and the pipe buffer asked for:
 * the default 64 KiB pipe wakes the reader 16 times a megabyte. */
#define STREAM_READ ((size_t)8 << 20)
#define PIPE_BUFFER (1 << 20)
/* A large stream's pages are taken ahead of the reader, by another
 * thread, STREAM_AHEAD bytes at the most: a page fault in read(2) stalls
 * the reader, and with it the writer at the pipe's other end. */
#define STREAM_AHEAD ((size_t)64 << 20)

struct prefault {
	unsigned char *buf;
	size_t cap;
	size_t read;		/* bytes the reader has */
	size_t taken;		/* bytes whose pages are taken */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t more;	/* read has grown, or stop is set */
	pthread_t thread;
	bool running;
};

static void *prefault_main(void *arg)
{
	struct prefault *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && p->taken < p->cap) {
		size_t at, n;
		if (p->taken >= p->read + STREAM_AHEAD) {
			pthread_cond_wait(&p->more, &p->lock);
			continue;
		}
		/* Pages the reader has filled are taken already. */
		at = p->taken > p->read ? p->taken : p->read;
		n = p->cap - at < STREAM_READ ? p->cap - at : STREAM_READ;
		pthread_mutex_unlock(&p->lock);
		/* Takes the pages and leaves what they hold: safe beside the
		 * reader's writes. */
		if (madvise(p->buf + at, n, MADV_POPULATE_WRITE)) {
			pthread_mutex_lock(&p->lock);
			break;
		}
		pthread_mutex_lock(&p->lock);
		p->taken = at + n;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The reader has len bytes of the region, or (stop) needs no more pages. */
static void prefault_tell(struct prefault *p, size_t len, bool stop)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->read = len;
	p->stop = stop;
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->lock);
	if (stop) {
		pthread_join(p->thread, NULL);
		p->running = false;
	}
}

/* The reader has len bytes of buf's cap: the helper takes the pages ahead
 * of it from STREAM_READ bytes on (started here), or is told how far the
 * reader is. */
static void prefault_follow(struct prefault *p, unsigned char *buf, size_t cap, size_t len)
{
	if (!p->running && len >= STREAM_READ && len < cap) {
		p->buf = buf;
		p->cap = cap;
		p->read = p->taken = len;
		p->stop = false;
		p->running = pthread_create(&p->thread, NULL, prefault_main, p) == 0;
	} else {
		prefault_tell(p, len, false);
	}
}

/* One read(2) of the stream fd into buf + len, at most cap - len bytes,
 * base bytes of it before buf: the bytes read, 0 at its end, or -1 after
 * a message naming it.  watch (may be NULL) is told as the stream passes
 * IN_WATCH_BYTES, and of its length after every read from then on.
 * cancellable: a thread with cancellation disabled may be cancelled in
 * the read(2), and nowhere else. */
static ssize_t read_step(const char *name, int fd, unsigned char *buf, size_t cap, size_t len,
			 uint64_t base, const struct in_watch *watch, bool cancellable)
{
	ssize_t r;
	int err;

	do {
		if (cancellable)
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		r = read(fd, buf + len, cap - len < STREAM_READ ? cap - len : STREAM_READ);
		err = errno;
		if (cancellable)
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	} while (r < 0 && err == EINTR);
	if (r < 0) {
		msg_errno(err, "%s: read failed", name);
		return -1;
	}
	if (r > 0) {
		if (watch && watch->large && base + len < IN_WATCH_BYTES &&
		    base + len + (size_t)r >= IN_WATCH_BYTES)
			watch->large(watch->ctx, buf, len + (size_t)r);
		if (watch && watch->grow && base + len + (size_t)r >= IN_WATCH_BYTES)
			watch->grow(watch->ctx, base + len + (uint64_t)r);
		prog_add(PROG_READ, (uint64_t)r);
	}
	return r;
}

/* --- a stream read while its runs are sorted ------------------------------ */

struct in_stream {
	const char *name;
	int fd;
	bool own_fd;		/* closed with it */
	struct in_watch watch;	/* a copy: the reader outlives in_open */
	unsigned char *buf;
	size_t cap;
	size_t len;		/* bytes in buf */
	uint64_t base;		/* the stream's offset of buf[0] */
	uint64_t used;		/* the offset the consumer is done below */
	uint64_t need;		/* the offset the consumer waits for */
	bool busy;		/* the consumer holds bytes of buf */
	bool ended, stop;
	int rc;			/* CLS_E_FAIL once a read failed */
	double waited;		/* the reader, for room */
	pthread_mutex_t lock;
	pthread_cond_t change;	/* any of the above changed */
	pthread_t thread;
	bool running;
	struct prefault pf;
};

/* The region is full: wait until the consumer holds none of it and waits
 * for more than it has, then move the bytes it is not done with to the
 * start (or, where it is done with none, a line longer than the region,
 * make the region twice as large).  Under s->lock. */
static int make_room(struct in_stream *s)
{
	const double t0 = now_sec();
	size_t keep;

	while (!s->stop && (s->busy || s->need <= s->base + s->len))
		pthread_cond_wait(&s->change, &s->lock);
	s->waited += now_sec() - t0;
	if (s->stop)
		return CLS_E_FAIL;
	keep = (size_t)(s->base + s->len - s->used);
	if (keep < s->len) {
		memmove(s->buf, s->buf + (s->len - keep), keep);
		s->base = s->used;
		s->len = keep;
		return 0;
	}
	void *g = mremap(s->buf, s->cap, 2 * s->cap, MREMAP_MAYMOVE);
	if (g == MAP_FAILED) {
		msg_errno(errno, "%s: cannot hold a line of more than %zu bytes", s->name, s->cap);
		return CLS_E_FAIL;
	}
	s->buf = g;
	s->cap *= 2;
	return 0;
}

static void *stream_main(void *arg)
{
	struct in_stream *s = arg;
	size_t len = s->len;
	ssize_t r;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		if (len == s->cap) {
			int rc;
			/* The pages ahead are taken again after the move. */
			prefault_tell(&s->pf, len, true);
			pthread_mutex_lock(&s->lock);
			rc = make_room(s);
			len = s->len;
			pthread_mutex_unlock(&s->lock);
			if (rc) {
				s->rc = CLS_E_FAIL;
				break;
			}
		}
		/* in_close cancels a reader that waits on a stalled writer. */
		r = read_step(s->name, s->fd, s->buf, s->cap, len, s->base, &s->watch, true);
		if (r < 0)
			s->rc = CLS_E_FAIL;
		if (r <= 0)
			break;
		len += (size_t)r;
		prefault_follow(&s->pf, s->buf, s->cap, len);
		pthread_mutex_lock(&s->lock);
		s->len = len;
		pthread_cond_broadcast(&s->change);
		pthread_mutex_unlock(&s->lock);
	}
	prefault_tell(&s->pf, len, true);
	pthread_mutex_lock(&s->lock);
	s->ended = true;
	pthread_cond_broadcast(&s->change);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Stop s's reader and release it. */
static void stream_free(struct in_stream *s)
{
	if (s->running) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_broadcast(&s->change);
		pthread_mutex_unlock(&s->lock);
		pthread_cancel(s->thread);
		pthread_join(s->thread, NULL);
		/* A reader cancelled in read(2) left its helper running. */
		prefault_tell(&s->pf, s->len, true);
	}
	if (s->buf)
		munmap(s->buf, s->cap);
	if (s->own_fd)
		close(s->fd);
	free(s);
}

int in_stream_take(struct in_stream *s, size_t want, const unsigned char **p, size_t *len,
		   bool *ended)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	s->need = s->used + want + 1;
	pthread_cond_broadcast(&s->change);
	while (!s->ended && s->base + s->len < s->need)
		pthread_cond_wait(&s->change, &s->lock);
	rc = s->rc;
	s->busy = rc == 0;
	*p = s->buf + (s->used - s->base);
	*len = (size_t)(s->base + s->len - s->used);
	*ended = s->ended;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void in_stream_done(struct in_stream *s, size_t n)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t start, end;

	pthread_mutex_lock(&s->lock);
	/* Whole pages only: the next part may begin in the last one. */
	start = (size_t)(s->used - s->base) / page * page;
	end = (size_t)(s->used + n - s->base) / page * page;
	if (end > start)
		madvise(s->buf + start, end - start, MADV_DONTNEED);
	s->used += n;
	s->busy = false;
	pthread_cond_broadcast(&s->change);
	pthread_mutex_unlock(&s->lock);
}

uint64_t in_stream_bytes(struct in_stream *s, double *waited)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->base + s->len;
	if (waited)
		*waited = s->waited;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* The stream f, fd, whose first len bytes are in buf: read on by a thread
 * of its own from now on (f->stream). */
static int start_stream(struct in_file *f, int fd, unsigned char *buf, size_t cap, size_t len,
			const struct in_watch *watch)
{
	struct in_stream *s = calloc(1, sizeof *s);

	if (!s) {
		msg_errno(ENOMEM, "cannot read %s", f->name);
		munmap(buf, cap);
		return CLS_E_FAIL;
	}
	s->name = f->name;
	s->fd = fd;
	s->watch = *watch;
	s->buf = buf;
	s->cap = cap;
	s->len = len;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->change, NULL);
	pthread_mutex_init(&s->pf.lock, NULL);
	pthread_cond_init(&s->pf.more, NULL);
	if (pthread_create(&s->thread, NULL, stream_main, s)) {
		msg_errno(errno, "cannot read %s", f->name);
		stream_free(s);
		return CLS_E_FAIL;
	}
	s->running = true;
	s->own_fd = fd != STDIN_FILENO;
	f->stream = s;
	f->data = (const unsigned char *)"";
	return 0;
}

/* Tell watch (may be NULL) that the stream's bytes leave its region. */
static void leave(const struct in_watch *watch)
{
	if (watch && watch->leave)
		watch->leave(watch->ctx);
}

/* The rest of stream f left to a thread that reads it on, its runs sorted
 * meanwhile, the len bytes come so far in buf (of cap) their start. */
static int stream_runs(struct in_file *f, int fd, unsigned char *buf, size_t cap, size_t len,
		       const struct in_watch *watch, struct prefault *pf)
{
	prefault_tell(pf, len, true);
	leave(watch);
	return start_stream(f, fd, buf, cap, len, watch);
}

/* A stream: read into a region of memory bytes reserved up front (pages
 * taken as they fill, huge ones where the system gives them: no copies as
 * it grows, a few page faults); past memory bytes, the region goes to an
 * unlinked temporary file, and so does every later region's worth, and
 * that file is mapped. */
static int read_stream(struct in_file *f, int fd, uint64_t memory, const char *tmpdir,
		       const struct in_watch *watch, bool runs)
{
	const size_t cap = memory < ((size_t)1 << 20) ? (size_t)1 << 20 : (size_t)memory;
	/* When the first bytes came, and how many: the stream's rate is its
	 * writer's from then on, not the wait for a writer that starts late;
	 * and when it passed its first run, where it came slow enough for
	 * runs (looked). */
	double t_first = 0, t_look = 0;
	size_t first_len = 0, look_len = 0;
	bool looked = false;
	/* The CPUs' ticks idle and in all at the first byte, then at the
	 * look; ticked: they could be read. */
	uint64_t idle0 = 0, ticks0 = 0;
	bool ticked = false;
	struct prefault pf = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER };
	unsigned char *buf;
	size_t len = 0;
	int tfd = -1;
	ssize_t r;

	/* Not for a terminal or a file: a failure only leaves the default. */
	fcntl(fd, F_SETPIPE_SZ, PIPE_BUFFER);
	buf = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (buf == MAP_FAILED) {
		msg_errno(errno, "%s: cannot reserve memory to read it", f->name);
		return CLS_E_FAIL;
	}
	madvise(buf, cap, MADV_HUGEPAGE);
	for (;;) {
		/* Near the line at the first look, its memory full before the
		 * second: in runs, as the first look found it. */
		if (len == cap && runs && looked && tfd < 0)
			return stream_runs(f, fd, buf, cap, len, watch, &pf);
		if (len == cap) {
			/* Every page is taken: the region is used again. */
			prefault_tell(&pf, len, true);
			if (tfd < 0)
				leave(watch);
			if (tfd < 0 && (tfd = tmp_create(tmpdir)) < 0)
				goto fail;
			if (write_full(tfd, buf, len)) {
				msg_errno(errno, "cannot write a temporary file in %s", tmpdir);
				goto fail;
			}
			len = 0;
		}
		/* A region used again holds none of the stream's first bytes. */
		r = read_step(f->name, fd, buf, cap, len, 0, tfd < 0 ? watch : NULL, false);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		if (!t_first) {
			t_first = now_sec();
			first_len = (size_t)r;
			ticked = runs && cpu_ticks(&idle0, &ticks0);
		}
		len += (size_t)r;
		/* Past a run, a stream that came no faster than its runs are
		 * sorted, the CPUs idle meanwhile, goes on being read by a
		 * thread of its own, its runs sorted meanwhile; a faster one is
		 * read whole first, and so is one that kept the CPUs busy (a
		 * fast writer slowed by the machine's load, its own reader's
		 * or others'), whose runs could be sorted only by slowing it
		 * further.  One that came near that rate (near_rate or more) is
		 * looked at again past a second run, so that a fast stream
		 * slowed for a moment (its writer's start, a busy machine) is
		 * not taken for a slow one. */
		if (runs && tfd < 0 && len > (looked ? 2 : 1) * watch->run_bytes) {
			const double t = now_sec(), took = looked ? t - t_look : t - t_first;
			const size_t came = looked ? len - look_len : len - first_len;
			const double rate = took > 0 ? (double)came / took : 1e300;
			uint64_t idle1 = 0, ticks1 = 0;
			/* Not known (the ticks unread, or none passed): spare. */
			const bool known = ticked && cpu_ticks(&idle1, &ticks1) && ticks1 > ticks0;
			const double idle =
				known ? (double)(idle1 - idle0) / (double)(ticks1 - ticks0) : 1;
			const bool busy = idle < watch->idle_share;
			const bool slow = rate <= watch->run_rate && !busy;
			const bool near = slow && !looked && rate >= watch->near_rate;
			char said[32] = "";

			if (known)
				snprintf(said, sizeof said, ", the CPUs %.0f%% idle", 100 * idle);
			msg_info(2, "%s: %s %zu MiB came at %.0f MB/s%s: %s", f->name,
				 looked ? "the next" : "its first", (looked ? came : len) >> 20, rate / 1e6,
				 said,
				 rate > watch->run_rate ? "read whole first"
				 : busy ? "the CPUs busy, read whole first"
				 : near ? "near the line, looked at again" : "sorted in runs as it arrives");
			if (known) {
				idle0 = idle1;
				ticks0 = ticks1;
			}
			if (slow && !near)
				return stream_runs(f, fd, buf, cap, len, watch, &pf);
			runs = near;
			looked = true;
			t_look = t;
			look_len = len;
		}
		/* A region used again has every page taken. */
		if (tfd < 0)
			prefault_follow(&pf, buf, cap, len);
	}
	/* Near the line at the first look, and ended before the second: in
	 * runs, as the first look found it. */
	if (runs && looked && tfd < 0)
		return stream_runs(f, fd, buf, cap, len, watch, &pf);
	prefault_tell(&pf, len, true);
	if (tfd >= 0) {
		struct stat st;
		if (write_full(tfd, buf, len) || fstat(tfd, &st)) {
			msg_errno(errno, "cannot write a temporary file in %s", tmpdir);
			goto fail;
		}
		munmap(buf, cap);
		buf = NULL;
		if (map_fd(f, tfd, 0, st.st_size)) {
			msg_errno(errno, "%s: cannot map its temporary copy", f->name);
			goto fail;
		}
		close(tfd);
		return 0;
	}
	f->heap = buf;
	f->heap_len = cap;
	f->data = buf;
	f->size = len;
	return 0;
fail:
	prefault_tell(&pf, len, true);
	if (tfd < 0)
		leave(watch);
	if (buf)
		munmap(buf, cap);
	if (tfd >= 0)
		close(tfd);
	return CLS_E_FAIL;
}

/* runs: the single input, whose stream may be left to its reader
 * (start_stream). */
static int open_one(struct in_file *f, uint64_t memory, const char *tmpdir,
		    const struct in_watch *watch, bool runs)
{
	const bool is_stdin = !strcmp(f->name, "-");
	struct stat st;
	int fd = is_stdin ? STDIN_FILENO : open(f->name, O_RDONLY | O_CLOEXEC);
	int rc = CLS_E_FAIL;

	if (fd < 0) {
		msg_errno(errno, "cannot read %s", f->name);
		return CLS_E_FAIL;
	}
	if (fstat(fd, &st)) {
		msg_errno(errno, "cannot read %s", f->name);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		msg_errno(EISDIR, "cannot read %s", f->name);
		goto out;
	}
	/* A regular file of size 0 may still have contents to read (files
	 * of /proc): read it. */
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		/* Standard input starts where the shell or an earlier command
		 * left it, as sort reads what is left; like sort, the sort
		 * consumes it to its end. */
		const off_t off = is_stdin ? lseek(fd, 0, SEEK_CUR) : 0;
		if (off >= 0 && map_fd(f, fd, off, st.st_size) == 0) {
			if (is_stdin && off < st.st_size)
				lseek(fd, 0, SEEK_END);
			rc = 0;
			goto out;
		}
	}
	rc = read_stream(f, fd, memory, tmpdir, watch, runs);
	/* A stream left to its reader closes fd with it. */
	if (f->stream)
		return rc;
out:
	if (!is_stdin)
		close(fd);
	return rc;
}

int in_open(struct in_set *set, const char *const *names, size_t count, uint64_t memory,
	    const char *tmpdir, const struct in_watch *watch)
{
	static const char *const stdin_name[] = { "-" };
	size_t i;

	memset(set, 0, sizeof *set);
	if (count == 0) {
		names = stdin_name;
		count = 1;
	}
	set->files = calloc(count, sizeof *set->files);
	if (!set->files) {
		msg_errno(ENOMEM, "cannot open the inputs");
		return CLS_E_FAIL;
	}
	set->count = count;
	for (i = 0; i < count; i++) {
		set->files[i].name = names[i];
		if (open_one(&set->files[i], memory, tmpdir, watch,
			     watch && watch->run_bytes && count == 1)) {
			in_close(set);
			return CLS_E_FAIL;
		}
		set->bytes += set->files[i].size;
	}
	return 0;
}

void in_close(struct in_set *set)
{
	size_t i;
	for (i = 0; i < set->count; i++) {
		if (set->files[i].stream)
			stream_free(set->files[i].stream);
		if (set->files[i].map) {
			/* Unmapped pages of a sequential mapping are not marked
			 * accessed one by one: munmap takes half the time. */
			madvise(set->files[i].map, set->files[i].map_len, MADV_SEQUENTIAL);
			munmap(set->files[i].map, set->files[i].map_len);
		}
		if (set->files[i].heap)
			munmap(set->files[i].heap, set->files[i].heap_len);
	}
	free(set->files);
	memset(set, 0, sizeof *set);
}

void in_release(const struct in_file *f, size_t off, size_t len)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t start, end;

	if (!f->map)
		return;
	/* Offsets from data, which --header may have moved past the map's
	 * start. */
	off += (size_t)(f->data - (const unsigned char *)f->map);
	/* Whole pages inside the range only: a neighbour's record may share
	 * the first or last page. */
	start = (off + page - 1) / page * page;
	end = (off + len) / page * page;
	if (end > start)
		madvise((char *)f->map + start, end - start, MADV_DONTNEED);
}

void in_prefault(const struct in_set *set, uint64_t limit)
{
	size_t i;

	for (i = 0; i < set->count && limit; i++) {
		const struct in_file *f = &set->files[i];
		size_t len = f->map_len < limit ? f->map_len : (size_t)limit;
		if (!f->map)
			continue;
		touch_read(f->map, len);
		limit -= len;
	}
}
