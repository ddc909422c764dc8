#include "config.h"
#include "merge.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmerge.h"
#include "mergecut.h"
#include "radix.h"
#include "util.h"

/* --- parallel merge ------------------------------------------------------
 * The merged output is cut by key into parts that threads merge at once:
 * splitter keys come from samples of every run, each run is cut after its
 * last record with a key at most the splitter, and part p is the merge of
 * every run's piece p.  Equal keys always share a part, so the merge stays
 * stable.  Parts are merged a round of one per thread at a time, each into
 * memory, and written in order.  The pieces of runs in temporary files are
 * read into memory by the thread that merges them, one long read each:
 * page faults on a mapping would read them 4 KiB at a time, and giving
 * the pages back would serialize the threads on the mapping. */

/* Output bytes per round, at most; a round's parts are held twice (one
 * round merging, the one before being written), within an eighth of
 * --memory; parts read from files or sorted are held twice more, the
 * pieces read and the merged part, or the keys and their sort words; and
 * the pieces of READ_AHEAD_ROUNDS rounds come into the page cache ahead:
 * three quarters of --memory in all. */
#define ROUND_BYTES ((size_t)256 << 20)
#define ROUND_MIN ((size_t)16 << 20)
/* Below this the merge of runs in memory is not worth threads. */
#define PARALLEL_MERGE_MIN ((size_t)16 << 20)
/* Rounds read ahead of the one merging, from runs in files: 8 GiB of runs
 * on a disk, out of the page cache, merged in 15-17 s two rounds ahead,
 * 16-19 s one round ahead. */
#define READ_AHEAD_ROUNDS 2
/* Samples per part and run. */
#define SAMPLES 8

static size_t round_bytes(bool files, uint64_t memory, unsigned threads)
{
	const size_t lo = files ? (size_t)threads * MRG_READ_MIN : ROUND_MIN;
	return memory / 8 < lo ? lo : memory / 8 > ROUND_BYTES ? ROUND_BYTES : (size_t)(memory / 8);
}

size_t mrg_fanin(const struct enc_format *f, uint64_t memory)
{
	const size_t per = round_bytes(true, memory, f->threads) / f->threads / MRG_READ_MIN;
	return per < 2 ? 2 : per;
}

struct part_job {
	const struct enc_format *f;
	size_t expect;		/* bytes of a part, about */
	struct mrg_run *pieces;	/* k ranges */
	size_t k;
	const struct mrg_run *runs;	/* the runs, whose pieces in files are... */
	const size_t *from;	/* ...read from from[r] */
	unsigned char *in;	/* into here */
	size_t in_cap;
	unsigned char *words;	/* bare keys: the part's sort words */
	size_t words_cap;
	struct out_writer w;	/* else: the merged part */
	unsigned char *dst;	/* claimed: its place in the output's
				 * mapping, or NULL */
	const unsigned char *out;	/* the part's output */
	size_t out_len;
	double t_read, t_merge;
	int rc;
};

/* Room for need bytes at *buf, whose content is not kept. */
static int room(unsigned char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	free(*buf);
	*cap = 0;
	*buf = malloc(need);
	if (!*buf) {
		msg_errno(ENOMEM, "cannot merge runs");
		return CLS_E_FAIL;
	}
	*cap = need;
	return 0;
}

/* Read the pieces of runs in files into the job's memory, need bytes
 * (at least those pieces). */
static int read_pieces(struct part_job *j, size_t need)
{
	size_t at = 0, r;

	if (room(&j->in, &j->in_cap, need))
		return CLS_E_FAIL;
	for (r = 0; r < j->k; r++) {
		struct mrg_run *piece = &j->pieces[r];
		size_t got = 0;
		if (j->runs[r].fd < 0)
			continue;
		while (got < piece->len) {
			const ssize_t n = pread(j->runs[r].fd, j->in + at + got, piece->len - got,
						(off_t)(j->from[r] + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				msg_errno(n < 0 ? errno : EIO, "cannot read back %s", j->runs[r].name);
				return CLS_E_FAIL;
			}
			got += (size_t)n;
		}
		piece->data = j->in + at;
		at += piece->len;
	}
	return 0;
}

/* A part of bare keys (enc_bare_keys) is the same sorted as merged, for
 * equal keys are equal bytes, and the radix sort of a part costs a
 * fraction of a merge of many pieces: its pieces' keys encoded, sorted,
 * and decoded into its place in the output, or into whichever of the
 * job's buffers the sort left free; need bytes in all. */
static int sort_part(struct part_job *j, size_t need)
{
	const struct enc_format *f = j->f;
	const size_t width = f->kt->width;
	size_t n = need / width, at = 0, r, i, u;
	unsigned char *sorted;
	void *where;

	j->out_len = 0;
	if (n == 0)
		return 0;
	if (room(&j->words, &j->words_cap, need))
		return CLS_E_FAIL;
	for (r = 0; r < j->k; r++) {
		f->kt->encode(j->pieces[r].data, width, j->pieces[r].len / width, f->mask,
			      j->words + at, false, 0);
		at += j->pieces[r].len;
	}
	if (radix_sort(j->words, j->in, n, key_word_kind(f->kt, false), 1, &where))
		return CLS_E_FAIL;
	sorted = where;
	if (f->unique && n) {
		for (i = 1, u = 1; i < n; i++)
			if (memcmp(sorted + i * width, sorted + (u - 1) * width, width)) {
				memmove(sorted + u * width, sorted + i * width, width);
				u++;
			}
		n = u;
	}
	j->out = j->dst ? j->dst : sorted == j->words ? j->in : j->words;
	f->kt->decode(sorted, n, f->mask, (unsigned char *)j->out);
	j->out_len = n * width;
	return 0;
}

/* Merge (or sort) one part into the job's memory, kept from round to
 * round so that its pages are faulted in once. */
static void part_job(void *arg)
{
	struct part_job *j = arg;
	const bool sort = enc_bare_keys(j->f);
	size_t need = 0, r;
	double t0 = now_sec(), t1;

	for (r = 0; r < j->k; r++)
		if (sort || j->runs[r].fd >= 0)
			need += j->pieces[r].len;
	j->rc = read_pieces(j, need);
	t1 = now_sec();
	j->t_read += t1 - t0;
	if (j->rc == 0 && sort) {
		j->rc = sort_part(j, need);
	} else if (j->rc == 0 && j->dst) {
		j->out = j->dst;
		j->out_len = 0;
		for (r = 0; r < j->k; r++)
			j->out_len += j->pieces[r].len;
		j->rc = kmerge(j->f, j->pieces, j->k, NULL, j->dst, j->out_len);
	} else if (j->rc == 0) {
		if (!j->w.buf)
			j->rc = out_open_mem(&j->w, j->expect, 1);
		j->w.len = 0;
		if (j->rc == 0)
			j->rc = kmerge(j->f, j->pieces, j->k, &j->w, NULL, 0);
		j->out = j->w.buf;
		j->out_len = j->w.len;
	}
	j->t_merge += now_sec() - t1;
}

/* A round of parts merged on threads of its own, while the previous
 * round is written. */
struct round {
	struct part_job *jobs;
	unsigned count;
	pthread_t thread;
};

static void *round_main(void *arg)
{
	struct round *r = arg;
	run_parallel(part_job, r->jobs, sizeof *r->jobs, r->count);
	return NULL;
}

/* The merge's traffic with the disk, on a thread of its own: the kernel is
 * asked to read the pieces of the rounds ahead (from a disk, reading a
 * round and then merging it would leave the disk idle half the time), and
 * to write back the output's merged bytes as they come, as cat's writes
 * would be.  Both calls can block, on the disk's queue or on reclaim: on
 * the thread that starts the rounds they held the next round back. */
struct traffic {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started, stop;
	const struct mrg_run *runs;
	size_t k;
	const size_t *cuts;
	size_t parts;
	unsigned threads;
	size_t ahead_to;	/* rounds below this may be read ahead... */
	size_t ahead_done;	/* ...and those below this were */
	int out_fd;		/* the output's file, or -1... */
	uint64_t out_at;	/* ...whose bytes from here... */
	uint64_t behind_to;	/* ...up to this many are merged... */
	uint64_t behind_done;	/* ...and this many asked to be written back */
};

/* Ask the kernel for round q's pieces of the runs in files. */
static void read_ahead(const struct traffic *t, size_t q)
{
	const size_t first = q * t->threads;
	size_t end, r;

	if (first >= t->parts)
		return;
	end = t->parts - first < t->threads ? t->parts : first + t->threads;
	for (r = 0; r < t->k; r++)
		if (t->runs[r].fd >= 0 && t->cuts[end * t->k + r] > t->cuts[first * t->k + r])
			posix_fadvise(t->runs[r].fd, (off_t)t->cuts[first * t->k + r],
				      (off_t)(t->cuts[end * t->k + r] - t->cuts[first * t->k + r]),
				      POSIX_FADV_WILLNEED);
}

static void *traffic_main(void *arg)
{
	struct traffic *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		if (t->ahead_done < t->ahead_to) {
			const size_t q = t->ahead_done++;
			pthread_mutex_unlock(&t->lock);
			read_ahead(t, q);
			pthread_mutex_lock(&t->lock);
		} else if (t->behind_done < t->behind_to) {
			const uint64_t from = t->behind_done, to = t->behind_to;
			t->behind_done = to;
			pthread_mutex_unlock(&t->lock);
			(void)sync_file_range(t->out_fd, (off_t)(t->out_at + from), (off_t)(to - from),
					      SYNC_FILE_RANGE_WRITE);
			pthread_mutex_lock(&t->lock);
		} else {
			pthread_cond_wait(&t->wake, &t->lock);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* Rounds below ahead_to may be read ahead; the output's first behind_to
 * bytes are merged. */
static void traffic_ask(struct traffic *t, size_t ahead_to, uint64_t behind_to)
{
	if (!t->started)
		return;
	pthread_mutex_lock(&t->lock);
	if (ahead_to > t->ahead_to)
		t->ahead_to = ahead_to;
	if (t->out_fd >= 0 && behind_to > t->behind_to)
		t->behind_to = behind_to;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
}

static void traffic_stop(struct traffic *t)
{
	if (!t->started)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	t->started = false;
}

/* Runs in files only: runs in memory have neither traffic.  w: the output
 * to write back, or NULL. */
static void traffic_start(struct traffic *t, const struct mrg_run *runs, size_t k,
			  const size_t *cuts, size_t parts, unsigned threads, struct out_writer *w)
{
	memset(t, 0, sizeof *t);
	t->runs = runs;
	t->k = k;
	t->cuts = cuts;
	t->parts = parts;
	t->threads = threads;
	/* The first round is read by its merges. */
	t->ahead_to = t->ahead_done = 1;
	t->out_fd = w && out_file_mapped(w, &t->out_at) ? w->fd : -1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	t->started = pthread_create(&t->thread, NULL, traffic_main, t) == 0;
	if (!t->started) {
		pthread_mutex_destroy(&t->lock);
		pthread_cond_destroy(&t->wake);
	}
}

static int merge_parallel(const struct enc_format *f, const struct mrg_run *runs, size_t k,
			  bool files, bool behind, uint64_t memory, struct out_writer *w,
			  size_t total)
{
	const unsigned threads = f->threads;
	const size_t round = round_bytes(files, memory, threads);
	const size_t rounds = (total + round - 1) / round;
	const size_t parts = rounds ? threads * rounds : 1;
	/* Parts, sorted or merged, are as long as their pieces (but for -u;
	 * runs end every line): where the output has room to claim (a
	 * mapping), each thread writes its part straight into its place.
	 * (Copied there after the merge instead, 8 GiB of 16-byte records
	 * took 16.6 s of a 20 s merge out of the page cache.) */
	const bool claim = (f->fmt == CLS_FMT_BIN || f->fmt == CLS_FMT_KV) && !f->unique &&
			   out_claimable(w, total);
	size_t *cuts = calloc((parts + 1) * k, sizeof *cuts);	/* cuts[p * k + r] */
	struct part_job *jobs = calloc(2 * (size_t)threads, sizeof *jobs);
	struct mrg_run *pieces = calloc(2 * (size_t)threads * k, sizeof *pieces);
	struct round set[2] = { { jobs, 0, 0 }, { jobs + threads, 0, 0 } };
	bool started[2] = { false, false };
	struct traffic traffic = { .started = false, .out_fd = -1 };
	uint64_t claimed;
	size_t r, p, i, largest = 0;
	double t0 = now_sec(), t_cut, t1, t_write = 0, t_wait = 0, t_read = 0, t_merge = 0;
	int rc = CLS_E_FAIL;

	if (!cuts || !jobs || !pieces) {
		msg_errno(ENOMEM, "cannot merge runs");
		goto out;
	}
	if (mrg_cut(f, runs, k, parts, SAMPLES, total, cuts))
		goto out;
	t_cut = now_sec() - t0;
	if (files)
		traffic_start(&traffic, runs, k, cuts, parts, threads, behind ? w : NULL);
	for (p = 0; p < parts; p++) {
		size_t bytes = 0;
		for (r = 0; r < k; r++)
			bytes += cuts[(p + 1) * k + r] - cuts[p * k + r];
		largest = bytes > largest ? bytes : largest;
	}
	/* Rounds alternate between two sets of jobs: while one set merges
	 * round p, the other's output of round p - 1 is written. */
	for (p = 0; p <= parts; p += threads) {
		struct round *cur = &set[(p / threads) % 2], *prev = &set[(p / threads + 1) % 2];
		unsigned t;

		cur->count = 0;
		claimed = w->total;
		if (p < parts) {
			const unsigned now = (unsigned)(parts - p < threads ? parts - p : threads);
			struct mrg_run *pcs = &pieces[(p / threads) % 2 * threads * k];
			for (t = 0; t < now; t++) {
				for (r = 0; r < k; r++) {
					struct mrg_run *piece = &pcs[t * k + r];
					const size_t a = cuts[(p + t) * k + r], b = cuts[(p + t + 1) * k + r];
					/* Pieces of runs in files: read_pieces. */
					piece->data = runs[r].data ? runs[r].data + a : NULL;
					piece->len = b - a;
				}
				cur->jobs[t].f = f;
				cur->jobs[t].expect = round / threads + 1;
				cur->jobs[t].pieces = &pcs[t * k];
				cur->jobs[t].k = k;
				cur->jobs[t].runs = runs;
				cur->jobs[t].from = &cuts[(p + t) * k];
				cur->jobs[t].dst = NULL;
				if (claim) {
					size_t bytes = 0;
					for (r = 0; r < k; r++)
						bytes += pcs[t * k + r].len;
					cur->jobs[t].dst = out_claim(w, bytes);
				}
			}
			cur->count = now;
			if (pthread_create(&cur->thread, NULL, round_main, cur))
				round_main(cur);
			else
				started[(p / threads) % 2] = true;
		}
		rc = 0;
		t1 = now_sec();
		for (t = 0; t < prev->count; t++) {
			if (rc == 0)
				rc = prev->jobs[t].rc;
			if (rc == 0 && !prev->jobs[t].dst)
				rc = out_write(w, prev->jobs[t].out, prev->jobs[t].out_len);
		}
		t_write += now_sec() - t1;
		prev->count = 0;
		/* Round p / threads merges: the rounds after it may come in, and
		 * the output before it is complete (claimed parts are written
		 * by their merges, the others were just now). */
		traffic_ask(&traffic, p / threads + 1 + READ_AHEAD_ROUNDS, claim ? claimed : w->total);
		t1 = now_sec();
		if (started[(p / threads) % 2]) {
			pthread_join(cur->thread, NULL);
			started[(p / threads) % 2] = false;
		}
		t_wait += now_sec() - t1;
		if (rc)
			goto out;
	}
	rc = 0;
	for (i = 0; i < 2 * (size_t)threads; i++) {
		t_read += jobs[i].t_read;
		t_merge += jobs[i].t_merge;
	}
	msg_info(2, "merge pass: %zu runs%s, %zu MiB, %zu parts in %zu rounds on %u threads, the "
		 "largest %.0f%% of the bytes: cut %.3f s, read %.3f s, merge%s %.3f s (thread "
		 "seconds), writing %.3f s, waiting for merges %.3f s%s",
		 k, files ? " in temporary files" : "", total >> 20, parts, rounds, threads,
		 total ? 100.0 * (double)largest / (double)total : 0.0, t_cut, t_read,
		 enc_bare_keys(f) ? (claim ? " by sorting into the output's mapping" : " by sorting")
				  : claim ? " into the output's mapping" : "",
		 t_merge, t_write, t_wait,
		 traffic.out_fd >= 0 ? "; the output written back as it came" : "");
out:
	traffic_stop(&traffic);
	for (i = 0; jobs && i < 2 * (size_t)threads; i++) {
		out_abort(&jobs[i].w);
		free(jobs[i].in);
		free(jobs[i].words);
	}
	free(cuts);
	free(jobs);
	free(pieces);
	return rc;
}

int mrg_runs(const struct enc_format *f, const struct mrg_run *runs, size_t k, bool files,
	     bool behind, uint64_t memory, struct out_writer *w)
{
	const char *min = getenv("CLSORT_PARALLEL_MERGE_MIN");
	size_t total = 0, i;

	for (i = 0; i < k; i++)
		total += runs[i].len;
	if (files || (f->threads > 1 &&
		      total >= (min ? strtoull(min, NULL, 10) : PARALLEL_MERGE_MIN)))
		return merge_parallel(f, runs, k, files, behind, memory, w, total);
	return kmerge_heap(f, runs, k, w, NULL, 0);
}

int mrg_stream(const struct enc_format *f, const struct mrg_run *runs, size_t k,
	       struct out_writer *w)
{
	return kmerge(f, runs, k, w, NULL, 0);
}

int mrg_inputs(const struct enc_format *f, const struct in_set *in, struct out_writer *out)
{
	struct mrg_run *r = calloc(in->count ? in->count : 1, sizeof *r);
	size_t i;
	int rc;

	if (!r) {
		msg_errno(ENOMEM, "cannot merge the inputs");
		return CLS_E_FAIL;
	}
	for (i = 0; i < in->count; i++) {
		r[i].fd = -1;
		r[i].data = in->files[i].data;
		r[i].len = in->files[i].size;
		r[i].input = &in->files[i];
	}
	rc = kmerge_heap(f, r, in->count, out, NULL, 0);
	free(r);
	return rc;
}
