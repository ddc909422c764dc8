#include "config.h"
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
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

/* A stream: read into a region of memory bytes reserved up front (pages
 * taken as they fill, huge ones where the system gives them: no copies as
 * it grows, a few page faults); past memory bytes, the region goes to an
 * unlinked temporary file, and so does every later region's worth, and
 * that file is mapped. */
static int read_stream(struct in_file *f, int fd, uint64_t memory, const char *tmpdir,
		       const struct in_watch *watch)
{
	const size_t cap = memory < ((size_t)1 << 20) ? (size_t)1 << 20 : (size_t)memory;
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
		if (len == cap) {
			/* Every page is taken: the region is used again. */
			prefault_tell(&pf, len, true);
			if (tfd < 0 && (tfd = tmp_create(tmpdir)) < 0)
				goto fail;
			if (write_full(tfd, buf, len)) {
				msg_errno(errno, "cannot write a temporary file in %s", tmpdir);
				goto fail;
			}
			len = 0;
		}
		r = read(fd, buf + len, cap - len < STREAM_READ ? cap - len : STREAM_READ);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			msg_errno(errno, "%s: read failed", f->name);
			goto fail;
		}
		if (r == 0)
			break;
		if (watch && tfd < 0 && len < IN_WATCH_BYTES && len + (size_t)r >= IN_WATCH_BYTES)
			watch->large(watch->ctx, buf, len + (size_t)r);
		len += (size_t)r;
		prog_add(PROG_READ, (uint64_t)r);
		if (!pf.running && tfd < 0 && len >= STREAM_READ && len < cap) {
			pf.buf = buf;
			pf.cap = cap;
			pf.read = pf.taken = len;
			pf.running = pthread_create(&pf.thread, NULL, prefault_main, &pf) == 0;
		} else {
			prefault_tell(&pf, len, false);
		}
	}
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
	if (buf)
		munmap(buf, cap);
	if (tfd >= 0)
		close(tfd);
	return CLS_E_FAIL;
}

static int open_one(struct in_file *f, uint64_t memory, const char *tmpdir,
		    const struct in_watch *watch)
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
	rc = read_stream(f, fd, memory, tmpdir, watch);
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
		if (open_one(&set->files[i], memory, tmpdir, watch)) {
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
