#include "config.h"
#include "spill.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tmpfile.h"
#include "util.h"

static void run_free(struct mrg_run *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->heap);
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

static void free_job(void *arg)
{
	run_free(arg);
}

/* Closing a run's file gives its pages back, which for a file in memory
 * (tmpfs) costs about as much as writing it did: the runs are released
 * side by side. */
static void free_runs(struct mrg_run *runs, size_t n)
{
	run_parallel(free_job, runs, sizeof *runs, (unsigned)n);
}

static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;
	if (!d)
		return 16;
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n > 3 ? n - 3 : n;	/* ".", ".." and the DIR itself */
}

/* Largest fan-in whose worst case of open run files, (F-1) per level plus
 * a merge's F inputs and its output, fits in the descriptors left, and
 * whose merges read every run in pieces of MRG_READ_MIN or more within
 * --memory. */
static int choose_fanin(struct spl_set *s, uint64_t est_runs)
{
	const size_t by_memory = mrg_fanin(s->f, s->memory);
	struct rlimit rl;
	long avail;
	unsigned f, passes = 1;
	uint64_t left;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096)
		rl.rlim_cur = 4096;
	avail = (long)rl.rlim_cur - (long)open_fds() - 2;
	for (f = by_memory < 64 ? (unsigned)by_memory : 64; f >= 2; f--) {
		uint64_t span = f;
		long levels = 1;
		while (span < est_runs) {
			span *= f;
			levels++;
		}
		if ((long)(f - 1) * levels + 2 <= avail) {
			s->fanin = f;
			for (left = est_runs; left > f; left = (left + f - 1) / f)
				passes++;
			msg_info(1, "merge plan: about %llu runs in temporary files, %u at a time "
				 "(%zu within --memory in reads of %zu KiB or more, %ld descriptors): "
				 "%u merge pass%s", (unsigned long long)est_runs, f, by_memory,
				 MRG_READ_MIN >> 10, avail, passes, passes == 1 ? "" : "es");
			return 0;
		}
	}
	msg_err("too few file descriptors for merging temporary files (ulimit -n is %llu)",
		(unsigned long long)rl.rlim_cur);
	return CLS_E_FAIL;
}

/* Runs in files stay in the page cache while it has room: a sort whose
 * runs are merged before the kernel writes them back never writes them
 * (writing back 256 MiB of runs made a spilled sort on 2 cores 1.26x
 * slower).  Past half the memory available, the runs' pages go to the
 * disk as they are written, not when the kernel's dirty limits are
 * reached, which leaves the next runs' writes waiting for them (8 GiB of
 * runs in a 4 GiB cgroup: sort and write 12-15 s, 6.5-7 s written back as
 * they come). */
int spl_to_files(struct spl_set *s, uint64_t est_runs)
{
	s->files = true;
	s->cache_room = mem_available() / 2;
	return choose_fanin(s, est_runs);
}

int spl_init(struct spl_set *s, const struct enc_format *f, const char *tmpdir, uint64_t memory,
	     bool files, uint64_t est_runs)
{
	memset(s, 0, sizeof *s);
	s->f = f;
	s->tmpdir = tmpdir;
	s->memory = memory;
	return files ? spl_to_files(s, est_runs) : 0;
}

void spl_free(struct spl_set *s)
{
	free_runs(s->runs, s->n);
	free(s->runs);
	s->runs = NULL;
	s->n = s->cap = 0;
}

int spl_writer(struct spl_set *s, struct out_writer *w, struct mrg_run *r, size_t expect)
{
	static char name[4200];

	memset(r, 0, sizeof *r);
	r->fd = -1;
	if (!s->files) {
		if (out_open_mem(w, expect, s->f->threads))
			return CLS_E_FAIL;
		populate_parallel(w->buf, expect, s->f->threads);
		return 0;
	}
	r->fd = tmp_create(s->tmpdir);
	if (r->fd < 0)
		return CLS_E_FAIL;
	snprintf(name, sizeof name, "a temporary file in %s", s->tmpdir);
	r->name = name;
	return out_open_run(w, r->fd, name, expect, s->f->threads);
}

void spl_discard(struct out_writer *w, struct mrg_run *r)
{
	out_abort(w);
	run_free(r);
}

/* Make the run's written bytes readable: in memory at r->data, or in its
 * file by merges that read it. */
static int seal(struct spl_set *s, struct out_writer *w, struct mrg_run *r)
{
	if (w->mem) {
		r->heap = w->buf;
		r->data = w->buf;
		r->len = w->len;
		w->buf = NULL;
		/* The run keeps the buffer; what else the writer holds (the
		 * gathers' buffers, tied words held back) goes with it. */
		return out_finish(w);
	}
	if (out_finish(w))
		return CLS_E_FAIL;
	r->len = w->total;
	s->spilled += r->len;
	if (!s->behind && s->spilled > s->cache_room) {
		s->behind = true;
		msg_info(2, "runs: more than half the memory available (%llu MiB) in temporary "
			 "files, written back to the disk as they come",
			 (unsigned long long)(2 * s->cache_room >> 20));
	}
	if (s->behind)
		(void)sync_file_range(r->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	return 0;
}

static int merge(struct spl_set *s, const struct mrg_run *runs, size_t k, struct out_writer *w)
{
	const double t0 = now_sec();
	const int rc = mrg_runs(s->f, runs, k, s->files, s->behind, s->memory, w);
	s->merges++;
	s->t_merge += now_sec() - t0;
	return rc;
}

/* Merge the last k runs into one, in their place. */
static int merge_tail(struct spl_set *s, size_t k)
{
	struct mrg_run *first = &s->runs[s->n - k], merged;
	struct out_writer w;
	size_t i, bytes = 0;
	unsigned level = 0;
	int rc;

	for (i = 0; i < k; i++) {
		bytes += first[i].len;
		if (first[i].level > level)
			level = first[i].level;
	}
	if (spl_writer(s, &w, &merged, bytes))
		return CLS_E_FAIL;
	rc = merge(s, first, k, &w);
	if (rc == 0)
		rc = seal(s, &w, &merged);
	else
		out_abort(&w);
	if (rc) {
		run_free(&merged);
		return rc;
	}
	free_runs(first, k);
	merged.level = level + 1;
	*first = merged;
	s->n -= k - 1;
	return 0;
}

int spl_keep(struct spl_set *s, struct out_writer *w, struct mrg_run *r)
{
	if (seal(s, w, r)) {
		run_free(r);
		return CLS_E_FAIL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct mrg_run *g = realloc(s->runs, cap * sizeof *g);
		if (!g) {
			msg_errno(ENOMEM, "cannot keep a sorted run");
			run_free(r);
			return CLS_E_FAIL;
		}
		s->runs = g;
		s->cap = cap;
	}
	s->runs[s->n++] = *r;
	/* Files: merge fan-in runs of one level as soon as there are that many,
	 * which bounds the files open at once. */
	while (s->files && s->n >= s->fanin) {
		size_t i;
		for (i = s->n - s->fanin; i < s->n; i++)
			if (s->runs[i].level != s->runs[s->n - 1].level)
				return 0;
		if (merge_tail(s, s->fanin))
			return CLS_E_FAIL;
	}
	return 0;
}

int spl_merge(struct spl_set *s, struct out_writer *out)
{
	int rc = 0;

	while (s->files && s->n > s->fanin && rc == 0)
		rc = merge_tail(s, s->fanin);
	if (rc == 0)
		rc = merge(s, s->runs, s->n, out);
	free_runs(s->runs, s->n);
	s->n = 0;
	return rc;
}
