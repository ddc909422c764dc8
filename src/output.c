#include "config.h"
#include "output.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#endif

#include "progress.h"
#include "tmpfile.h"
#include "util.h"

#define OUT_BUF (4u << 20)
/* Copies into the mapping of at least this many bytes are split over
 * threads, each taking at least COPY_SHARE. */
#define COPY_SPLIT ((size_t)4 << 20)
#define COPY_SHARE ((size_t)1 << 20)

static int init(struct out_writer *w, int fd, const char *name, size_t cap)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
	w->name = name;
	w->cap = cap;
	w->buf = malloc(cap);
	if (!w->buf) {
		msg_errno(ENOMEM, "cannot allocate the output buffer");
		return CLS_E_FAIL;
	}
	return 0;
}

int out_open_fd(struct out_writer *w, int fd, const char *name)
{
	return init(w, fd, name, OUT_BUF);
}

int out_open_run(struct out_writer *w, int fd, const char *name, size_t expect, unsigned threads)
{
	if (init(w, fd, name, OUT_BUF))
		return CLS_E_FAIL;
	w->own = true;
	out_map(w, expect, threads, false);
	return 0;
}

int out_open_mem(struct out_writer *w, size_t expect, unsigned threads)
{
	if (init(w, -1, "memory", expect ? expect : 4096))
		return CLS_E_FAIL;
	w->mem = true;
	w->threads = threads ? threads : 1;
	return 0;
}

int out_open_final(struct out_writer *w, const char *path, bool sync)
{
	struct out_dest d;
	int fd;

	if (!path) {
		if (init(w, STDOUT_FILENO, "standard output", OUT_BUF))
			return CLS_E_FAIL;
		w->progress = true;
		w->is_stdout = true;
		return 0;
	}
	fd = dest_open(&d, path, sync);
	if (fd < 0)
		return CLS_E_FAIL;
	if (init(w, fd, path, OUT_BUF)) {
		dest_drop(&d, fd);
		return CLS_E_FAIL;
	}
	w->dest = d;
	w->dest_open = true;
	w->progress = true;
	return 0;
}

static int flush(struct out_writer *w);
static int fail_write(struct out_writer *w);

int out_open_part(struct out_writer *part, struct out_writer *w, uint64_t off)
{
	off_t here;
	int rc = flush(w);

	assert(out_seekable(w));
	if (rc)
		return rc;
	here = lseek(w->fd, 0, SEEK_CUR);
	if (here < 0)
		return fail_write(w);
	if (init(part, w->fd, w->name, OUT_BUF))
		return CLS_E_FAIL;
	part->part = true;
	part->at = (uint64_t)here + off;
	part->threads = w->threads;
	return 0;
}

int out_advance(struct out_writer *w, uint64_t bytes)
{
	int rc = flush(w);
	off_t here;

	if (rc)
		return rc;
	here = lseek(w->fd, 0, SEEK_CUR);
	if (here < 0 || lseek(w->fd, here + (off_t)bytes, SEEK_SET) < 0)
		return fail_write(w);
	w->total += bytes;
	return 0;
}

void out_reserve(struct out_writer *w, uint64_t bytes)
{
	struct stat st;
	if (w->mem || bytes == 0 || fstat(w->fd, &st) || !S_ISREG(st.st_mode))
		return;
	/* Only the blocks: the size grows as the data is written. */
	if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)bytes))
		return;
}

int out_rw_fd(const struct out_writer *w, bool *own)
{
	struct stat a, b;
	int fd;

	*own = false;
	if (!w->is_stdout)
		return w->fd;
	fd = open("/proc/self/fd/1", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &a) || fstat(w->fd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return -1;
	}
	*own = true;
	return fd;
}

/* A shared mapping of len bytes of w's file from off (out_rw_fd). */
static unsigned char *map_rw(struct out_writer *w, size_t len, off_t off)
{
	bool own;
	const int fd = out_rw_fd(w, &own);
	void *p;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (own)
		close(fd);
	return p;
}

/* Unmap what out_grow mapped of the room, where out_map did not take it. */
static void drop_grown_map(struct out_writer *w)
{
	if (w->grown_map)
		munmap(w->grown_map, w->grown_map_len);
	w->grown_map = NULL;
	w->grown_map_len = w->grown_faulted = 0;
}

/* out_grow's mapping of the room for len bytes from the page the output
 * starts in, its tail past them unmapped, its pages faulted in for
 * *faulted bytes of the output; MAP_FAILED where there is none, or it is
 * too short (then unmapped). */
static unsigned char *take_grown_map(struct out_writer *w, size_t len, size_t *faulted)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t keep = (len + page - 1) / page * page;
	unsigned char *p = w->grown_map;

	if (!p || keep > w->grown_map_len) {
		drop_grown_map(w);
		return MAP_FAILED;
	}
	if (keep < w->grown_map_len)
		munmap(p + keep, w->grown_map_len - keep);
	*faulted = w->grown_faulted;
	/* Taken: nothing left to unmap. */
	w->grown_map = NULL;
	drop_grown_map(w);
	return p;
}

bool out_map(struct out_writer *w, uint64_t bytes, unsigned threads, bool fault_in)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t start, lead, taken;
	size_t faulted = 0;
	unsigned char *p;
	off_t end;

	if (w->map)
		return true;
	/* Room taken while a stream arrived: from where it starts. */
	out_grow_end(w);
	taken = w->grown ? w->presized : 0;
	if (w->grown)
		end = w->is_stdout ? (off_t)w->map_at : -1;
	else
		end = w->is_stdout && !w->total && !w->len ? (off_t)out_stdout_end(w) : -1;
	/* A part (and standard output) maps from the page its first byte
	 * lies in. */
	start = w->part ? w->at : end > 0 ? (uint64_t)end : 0;
	lead = start % page;
	if ((!w->dest.temp && !w->part && !w->own && end < 0) || w->total || w->len || bytes == 0 ||
	    bytes > SIZE_MAX - lead)
		return false;
	/* Standard output has no temporary name to drop: from before it is
	 * sized, a signal cuts it back instead. */
	if (w->is_stdout)
		tmp_guard_stdout((long long)start);
	/* The whole size at once (but what is taken already), so that a full
	 * file system says so here, where write(2) can take over, and not as
	 * SIGBUS on a store later. */
	if (bytes > taken && tmp_fallocate(w->fd, (off_t)(start + taken), (off_t)(bytes - taken)))
		goto undo;
	p = w->grown ? take_grown_map(w, (size_t)(lead + bytes), &faulted) : MAP_FAILED;
	if (p == MAP_FAILED)
		p = map_rw(w, (size_t)(lead + bytes), (off_t)(start - lead));
	if (p == MAP_FAILED)
		goto undo;
	/* Fault the pages in now, while the device starts: a page at a time,
	 * since the driver maps memory as it starts and must not wait for a
	 * populate of the whole range (beside one, an H200 took 0.5-0.7 s to
	 * start instead of 0.25 s).  Four threads are as quick as sixteen,
	 * and leave the other cores to the start. */
	if (fault_in)
		touch_parallel(p + lead, (size_t)bytes, threads == 0 ? 1 : threads < 4 ? threads : 4);
	w->map = p + lead;
	w->map_faulted = fault_in ? (size_t)bytes : faulted < bytes ? faulted : (size_t)bytes;
	w->map_lead = (size_t)lead;
	w->map_len = (size_t)bytes;
	w->map_at = start;
	/* A part's file holds the other parts too: it is not cut to this
	 * one's size. */
	if (!w->part)
		w->presized = (size_t)(bytes > taken ? bytes : taken);
	w->threads = threads ? threads : 1;
	msg_info(w->own ? 3 : 2, "output: writing %s through a shared mapping of %zu bytes%s",
		 w->name, w->map_len, fault_in ? "" : ", its pages faulted in as they are written");
	return true;
undo:
	drop_grown_map(w);
	/* A fallocate that failed part way, or one whose mapping failed, may
	 * have left the file longer than its data will be: cut it back, or at
	 * least remember to at the end.  The parts of a file are written to
	 * its end, which leaves it as long as their data. */
	if (!w->part && ftruncate(w->fd, (off_t)start)) {
		w->presized = (size_t)(bytes > taken ? bytes : taken);
		return false;
	}
	if (!w->part)
		w->presized = 0;
	if (w->is_stdout)
		tmp_guard_stdout(-1);
	return false;
}

static int fail_write(struct out_writer *w)
{
	if (errno == EPIPE)
		return CLS_E_PIPE;
	msg_errno(errno, "write error on %s", w->name);
	return CLS_E_FAIL;
}

/* Write p[0..len) to the file: at the writer's place in it for a part,
 * else at the file offset. */
static int put(struct out_writer *w, const void *p, size_t len)
{
	if (w->part) {
		if (pwrite_full(w->fd, p, len, w->at))
			return fail_write(w);
		w->at += len;
		return 0;
	}
	return write_full(w->fd, p, len) ? fail_write(w) : 0;
}

static int flush(struct out_writer *w)
{
	int rc;
	if (w->mem || w->len == 0)
		return 0;
	if ((rc = put(w, w->buf, w->len)))
		return rc;
	w->len = 0;
	return 0;
}

struct copy_job {
	unsigned char *dst;
	const unsigned char *src;
	size_t len;
	bool fault;		/* dst's pages not faulted in yet */
};

/* Pages of a mapped output faulted in by one call before the copy, not one
 * fault per page as the stores come: a 1 GiB copy into a file on tmpfs on
 * 2 threads 0.29-0.31 s against 0.22-0.24 s. */
static void copy_job(void *arg)
{
	const struct copy_job *j = arg;
	if (j->fault)
		populate_range(j->dst, j->len);
	memcpy(j->dst, j->src, j->len);
}

/* How many of threads share a copy of bytes into the output: one below
 * COPY_SPLIT, else at most one per COPY_SHARE. */
unsigned out_copy_threads(size_t bytes, unsigned threads)
{
	if (bytes < COPY_SPLIT || threads < 2)
		return 1;
	if (threads > OUT_COPY_MAX_THREADS)
		threads = OUT_COPY_MAX_THREADS;
	if (threads > bytes / COPY_SHARE)
		threads = (unsigned)(bytes / COPY_SHARE);
	return threads;
}

/* dst[0..len) = src[0..len), large copies on up to threads threads;
 * with fault, dst's pages faulted in first, each thread its share's. */
static void copy_parallel(unsigned char *dst, const unsigned char *src, size_t len,
			  unsigned threads, bool fault)
{
	struct copy_job jobs[OUT_COPY_MAX_THREADS];
	size_t share, at = 0;
	unsigned n = 0;

	threads = out_copy_threads(len, threads);
	if (threads == 1) {
		copy_job(&(struct copy_job){ dst, src, len, fault });
		return;
	}
	/* Whole multiples of 4 KiB: every share keeps the alignment of the
	 * first. */
	share = ((len + threads - 1) / threads + 4095) & ~(size_t)4095;
	for (; at < len; n++) {
		assert(n < threads);
		jobs[n].dst = dst + at;
		jobs[n].src = src + at;
		jobs[n].len = len - at < share ? len - at : share;
		jobs[n].fault = fault;
		at += jobs[n].len;
	}
	run_parallel(copy_job, jobs, sizeof jobs[0], n);
}

void out_copy(void *dst, const void *src, size_t len, unsigned threads)
{
	copy_parallel(dst, src, len, threads, false);
}

bool out_claimable(const struct out_writer *w, uint64_t len)
{
	/* A run kept in memory, within the room it was opened with. */
	if (w->mem)
		return len <= w->cap - w->len;
	return w->map && w->total <= w->map_len && len <= w->map_len - w->total;
}

void *out_claim(struct out_writer *w, size_t len)
{
	void *p;

	if (!out_claimable(w, len))
		return NULL;
	if (w->mem) {
		p = w->buf + w->len;
		w->len += len;
		w->total += len;
		return p;
	}
	p = w->map + w->total;
	w->total += len;
	if (w->progress)
		prog_output(len);
	return p;
}

void *out_place(struct out_writer *w, size_t len)
{
	return !w->mem && out_claimable(w, len) ? w->map + w->total : NULL;
}

bool out_in_memory(const struct out_writer *w)
{
#ifdef TMPFS_MAGIC
	struct statfs sf;

	return w->fd >= 0 && fstatfs(w->fd, &sf) == 0 &&
	       (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
#else
	(void)w;
	return false;
#endif
}

bool out_holds(const struct out_writer *w, const void *p)
{
	const uintptr_t a = (uintptr_t)p;
	return !w->mem && w->map && a >= (uintptr_t)w->map && a < (uintptr_t)w->map + w->map_len;
}

void out_fault_in(struct out_writer *w, void *p, size_t len, unsigned threads)
{
	size_t at, end;

	if (!out_holds(w, p)) {
		populate_parallel(p, len, threads);
		return;
	}
	at = (size_t)((unsigned char *)p - w->map);
	end = at + len;
	if (at > w->map_faulted) {
		populate_parallel(p, len, threads);
		return;
	}
	if (end > w->map_faulted) {
		populate_parallel(w->map + w->map_faulted, end - w->map_faulted, threads);
		w->map_faulted = end;
	}
}

uint64_t out_fault_ahead(struct out_writer *w, uint64_t len)
{
	size_t done;

	if (w->mem || !w->map || w->total >= w->map_len)
		return 0;
	if (len > w->map_len - w->total)
		len = w->map_len - w->total;
	done = w->map_faulted > w->total ? w->map_faulted - w->total : 0;
	if (done >= len)
		return 0;
	out_fault_in(w, w->map + w->total, (size_t)len, w->threads);
	return len - done;
}

bool out_file_mapped(const struct out_writer *w, uint64_t *at)
{
	if (!w->map || w->fd < 0)
		return false;
	*at = w->map_at;
	return true;
}

int out_write(struct out_writer *w, const void *p, size_t len)
{
	if (w->progress)
		prog_output(len);
	if (w->map && w->total <= w->map_len) {
		const size_t fit = len < w->map_len - w->total ? len : w->map_len - w->total;
		/* Bytes laid out in their place already (out_place). */
		if (p != w->map + w->total)
			copy_parallel(w->map + w->total, p, fit, w->threads,
				      w->map_faulted < w->total + fit);
		w->total += fit;
		if (w->map_faulted < w->total)
			w->map_faulted = w->total;
		p = (const unsigned char *)p + fit;
		len -= fit;
		if (len == 0)
			return 0;
		assert(w->len == 0);
		/* More than was mapped: the rest follows the mapping through
		 * write(2), which has not moved the file offset yet. */
		if (w->part)
			w->at += w->map_len;
		else if (lseek(w->fd, (off_t)(w->map_at + w->map_len), SEEK_SET) < 0)
			return fail_write(w);
	}
	w->total += len;
	if (w->mem) {
		if (w->len + len > w->cap) {
			size_t cap = w->cap * 2 > w->len + len ? w->cap * 2 : w->len + len;
			unsigned char *g = realloc(w->buf, cap);
			if (!g) {
				msg_errno(ENOMEM, "cannot keep a sorted run in memory");
				return CLS_E_FAIL;
			}
			w->buf = g;
			w->cap = cap;
		}
		copy_parallel(w->buf + w->len, p, len, w->threads, false);
		w->len += len;
		return 0;
	}
	if (w->len + len > w->cap) {
		int rc = flush(w);
		if (rc)
			return rc;
		/* Large writes go straight from the caller's memory. */
		if (len >= w->cap)
			return put(w, p, len);
	}
	memcpy(w->buf + w->len, p, len);
	w->len += len;
	return 0;
}

/* Give back the mapping; the data stays in the file. */
static void unmap(struct out_writer *w)
{
	drop_grown_map(w);
	if (!w->map)
		return;
	/* Pages unmapped from a mapping not marked sequential (or random) are
	 * each marked accessed, which moves them between LRU lists under a
	 * lock: half of munmap's time. */
	madvise(w->map - w->map_lead, w->map_lead + w->map_len, MADV_SEQUENTIAL);
	munmap(w->map - w->map_lead, w->map_lead + w->map_len);
	w->map = NULL;
}

/* What out_emit keeps in w between runs: tied words held back, and its
 * threads' buffers, which it frees through the hook it set. */
static void drop_emitted(struct out_writer *w)
{
	tie_free(&w->ties);
	if (w->emit_free)
		w->emit_free(w);
}

int out_complete(struct out_writer *w)
{
	int rc;

	out_grow_end(w);
	rc = flush(w);

	/* A file sized ahead for more than came (or one whose failed
	 * reservation could not be undone) ends where its data does: the
	 * pages past the end leave the mapping with it. */
	if (rc == 0 && w->presized > w->total && ftruncate(w->fd, (off_t)(w->map_at + w->total)))
		rc = fail_write(w);
	/* Standard output goes on where the data ends, as after write(2). */
	if (rc == 0 && w->is_stdout && w->presized) {
		tmp_guard_stdout(-1);
		if (lseek(w->fd, (off_t)(w->map_at + w->total), SEEK_SET) < 0)
			rc = fail_write(w);
	}
	if (rc == 0 && w->dest_open) {
		w->dest_open = false;
		rc = dest_place(&w->dest, w->fd, w->name);
		w->fd = -1;
	}
	if (rc)
		out_abort(w);
	return rc;
}

void out_release(struct out_writer *w)
{
	unmap(w);
	drop_emitted(w);
	free(w->buf);
	w->buf = NULL;
}

int out_finish(struct out_writer *w)
{
	const int rc = out_complete(w);

	if (rc == 0)
		out_release(w);
	return rc;
}

void out_abort(struct out_writer *w)
{
	out_grow_end(w);
	drop_emitted(w);
	unmap(w);
	/* Standard output mapped and sized ahead: none of it stays. */
	if (w->is_stdout && w->presized && ftruncate(w->fd, (off_t)w->map_at) == 0) {
		w->presized = 0;
		tmp_guard_stdout(-1);
	}
	if (w->dest_open) {
		w->dest_open = false;
		dest_drop(&w->dest, w->fd);
		w->fd = -1;
	}
	free(w->buf);
	w->buf = NULL;
}
