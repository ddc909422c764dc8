#include "config.h"
#include "runs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "partition.h"
#include "progress.h"
#include "threshold.h"
#include "util.h"

/* Merge sources give back pages this often: with many sources, what they
 * hold between two releases counts against --memory. */
#define RELEASE_STEP ((size_t)4 << 20)
/* Host sorts of fewer records are too quick to time for the threshold. */
#define HOST_MEASURE_MIN ((size_t)1 << 14)
/* Default device budget: this fraction of its global memory. */
#define DEVICE_FRACTION 0.5
/* Inputs that would take more key ranges than this are sorted in runs and
 * merged instead: each range costs a pass of its own on the device. */
#define MAX_RANGES 4096

int tmp_create(const char *dir)
{
	char *path = tmp_template(dir, "/clsort.");
	sigset_t all, old;
	int fd, err;

	if (!path) {
		msg_errno(ENOMEM, "cannot create a temporary file in %s", dir);
		return -1;
	}
	/* Unnamed where the file system allows: not even SIGKILL leaves it. */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		free(path);
		return fd;
	}
	/* A signal while the file still has a name: this thread does not take
	 * it, and whichever thread does removes the file before dying. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	out_guard_path(path);
	fd = mkostemp(path, O_CLOEXEC);
	err = errno;
	if (fd >= 0)
		unlink(path);
	out_guard_path(NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0)
		msg_errno(err, "cannot create a temporary file in %s", dir);
	free(path);
	return fd;
}

/* A sorted run in output form: in memory, or in a mapped temporary file. */
struct run {
	int fd;
	unsigned char *heap;
	void *map;
	const unsigned char *data;
	size_t len;
	unsigned level;
	const struct in_file *input;	/* -m: the input it is, whose order is checked */
};

struct sorter {
	const struct cls_opts *o;
	const struct enc_format *f;
	struct dev_ctx dev;
	bool dev_opened;
	struct engine *eng;
	bool host;		/* sort on the host, no device */
	uint64_t host_max;	/* the host threshold in force */
	struct thr_entry thr;	/* what it was measured from... */
	bool measured;		/* ...when it was */
	bool measuring;		/* this run measures it (on the auto device) */
	double t_start;		/* opening the device */
	size_t cap;		/* records per run */
	bool spill;		/* runs go to temporary files */
	unsigned fanin;
	struct run *runs;
	size_t nruns, runs_cap;
	unsigned merges;
	size_t ranges;		/* key ranges the input was cut into, or 0 */
	size_t resorted;	/* parts of runs merged by sorting them again */
	double t_part;		/* cutting it */
	double t_encode, t_sort, t_merge;	/* t_sort includes writing the run */
	/* Of t_sort, on the device path: filling the staging buffers, waiting
	 * for the output's warm-up, writing out the sorted chunks. */
	double t_produce, t_warm, t_consume;
};

static void run_free(struct run *r)
{
	if (r->map)
		munmap(r->map, r->len);
	if (r->fd >= 0)
		close(r->fd);
	free(r->heap);
	memset(r, 0, sizeof *r);
	r->fd = -1;
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
 * a merge's F inputs and its output, fits in the descriptors left. */
static int choose_fanin(struct sorter *s, uint64_t est_runs)
{
	struct rlimit rl;
	long avail;
	unsigned f;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096)
		rl.rlim_cur = 4096;
	avail = (long)rl.rlim_cur - (long)open_fds() - 2;
	for (f = 64; f >= 2; f--) {
		uint64_t span = f;
		long levels = 1;
		while (span < est_runs) {
			span *= f;
			levels++;
		}
		if ((long)(f - 1) * levels + 2 <= avail) {
			s->fanin = f;
			return 0;
		}
	}
	msg_err("too few file descriptors for merging temporary files (ulimit -n is %llu)",
		(unsigned long long)rl.rlim_cur);
	return CLS_E_FAIL;
}

/* --- merging ------------------------------------------------------------- */

struct source {
	struct enc_cursor c;
	const struct run *run;
	size_t order;		/* of its run among those merged */
	size_t released;
};

static bool before(const struct source *a, const struct source *b)
{
	/* Equal keys: the earlier run first, which keeps the sort stable. */
	const int c = a->c.key != b->c.key ? (a->c.key < b->c.key ? -1 : 1) :
		      enc_cursor_cmp(&a->c, &b->c);
	return c < 0 || (c == 0 && a->order < b->order);
}

static void sift_down(struct source **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && before(h[l], h[m]))
			m = l;
		if (l + 1 < n && before(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct source *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Give back the pages of a mapped run the merge has passed. */
/* Give back the whole pages of mapped run r below byte end; returns the
 * byte up to which they are given back. */
static size_t release_prefix(const struct run *r, size_t end)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	end = end / page * page;
	if (r->map && end)
		madvise(r->map, end, MADV_DONTNEED);
	return end;
}

static void release_behind(struct source *src)
{
	const size_t done = (size_t)(src->c.p - src->run->data);
	if (src->run->map && done - src->released >= RELEASE_STEP)
		src->released = release_prefix(src->run, done);
}

/* Fixed-size records merge without a cursor per record: each source's
 * keys are turned into sortable ones a block at a time by the key type's
 * bulk encoder, and records are copied into a local buffer. */
#define KEY_BLOCK 256
#define COPY_BLOCK ((size_t)256 << 10)

struct bin_source {
	const unsigned char *p, *end;	/* next record to load keys for, range end */
	uint64_t keys[KEY_BLOCK];
	size_t pos, count;		/* current key in keys[], keys loaded */
	const unsigned char *rec;	/* record of keys[pos] */
};

/* Load the next block of keys; false when the source is exhausted. */
static bool bin_refill(const struct enc_format *f, struct bin_source *s)
{
	size_t n = (size_t)(s->end - s->p) / f->rec_size, i;
	if (n == 0)
		return false;
	if (n > KEY_BLOCK)
		n = KEY_BLOCK;
	if (f->kt->width == 4) {
		uint32_t k32[KEY_BLOCK];
		f->kt->encode(s->p + f->key_off, f->rec_size, n, f->mask, k32, false, 0);
		for (i = 0; i < n; i++)
			s->keys[i] = k32[i];
	} else {
		f->kt->encode(s->p + f->key_off, f->rec_size, n, f->mask, s->keys, false, 0);
	}
	s->rec = s->p;
	s->p += n * f->rec_size;
	s->pos = 0;
	s->count = n;
	return true;
}

/* A tournament (loser) tree over the sources: every record costs the same
 * log2 of the source count of compare-and-selects, which compile without
 * branches, instead of a heap sift whose data-dependent branches the
 * processor keeps mispredicting.  Entries hold the key by value; past the
 * last source, sentinels with the largest key and a larger source number
 * lose to everything. */
struct bin_head {
	uint64_t key;
	size_t src;		/* index of the source, in run order */
};

static inline bool bin_before(struct bin_head a, struct bin_head b)
{
	/* Bitwise, so that no branch is made of it. */
	return (a.key < b.key) | ((a.key == b.key) & (a.src < b.src));
}

static int bin_merge(const struct enc_format *f, const struct run *ranges, size_t k,
		     struct out_writer *w)
{
	size_t leaves = 1, i, len = 0;
	struct bin_source *src = calloc(k ? k : 1, sizeof *src);
	struct bin_head *tree, *entry, win;
	unsigned char *buf = malloc(COPY_BLOCK + f->rec_size);
	const size_t rs = f->rec_size;
	uint64_t last = 0;		/* -u: the key written last */
	bool have_last = false;
	int rc = 0;

	while (leaves < k)
		leaves *= 2;
	tree = calloc(2 * leaves, sizeof *tree);	/* losers in [1, leaves) */
	entry = tree + leaves;				/* leaves, for the build */
	if (!src || !tree || !buf) {
		msg_errno(ENOMEM, "cannot merge runs");
		rc = CLS_E_FAIL;
		goto out;
	}
	for (i = 0; i < leaves; i++) {
		entry[i].key = UINT64_MAX;
		entry[i].src = k + i;
		if (i < k) {
			src[i].p = ranges[i].data;
			src[i].end = ranges[i].data + ranges[i].len;
			if (bin_refill(f, &src[i]))
				entry[i].key = src[i].keys[0], entry[i].src = i;
		}
	}
	/* Build: each inner node keeps the loser of its subtree's final, and
	 * passes the winner up (winners kept in tree[] temporarily from the
	 * leaves' row upward). */
	{
		struct bin_head *wins = calloc(2 * leaves, sizeof *wins);
		if (!wins) {
			msg_errno(ENOMEM, "cannot merge runs");
			rc = CLS_E_FAIL;
			goto out;
		}
		for (i = 0; i < leaves; i++)
			wins[leaves + i] = entry[i];
		for (i = leaves - 1; i >= 1; i--) {
			const struct bin_head l = wins[2 * i], r = wins[2 * i + 1];
			const bool lw = bin_before(l, r);
			wins[i] = lw ? l : r;
			tree[i] = lw ? r : l;
		}
		win = leaves > 1 ? wins[1] : wins[leaves];
		free(wins);
	}
	while (win.src < k) {
		struct bin_source *top = &src[win.src];
		size_t node;
		if (f->unique && have_last && win.key == last)
			goto next;
		/* Constant sizes for the common records let memcpy be a move. */
		switch (rs) {
		case 4: memcpy(buf + len, top->rec, 4); break;
		case 8: memcpy(buf + len, top->rec, 8); break;
		case 16: memcpy(buf + len, top->rec, 16); break;
		default: memcpy(buf + len, top->rec, rs); break;
		}
		len += rs;
		last = win.key;
		have_last = true;
		if (len >= COPY_BLOCK) {
			if ((rc = out_write(w, buf, len)))
				goto out;
			len = 0;
		}
next:
		top->rec += rs;
		if (++top->pos < top->count || bin_refill(f, top))
			win.key = top->keys[top->pos];
		else
			win.key = UINT64_MAX, win.src += leaves;
		/* Replay the path from the winner's leaf to the root. */
		for (node = (leaves + (win.src % leaves)) / 2; node >= 1; node /= 2) {
			const struct bin_head t = tree[node];
			/* All ones when the winner stays: selects by mask. */
			const uint64_t m = -(uint64_t)bin_before(win, t);
			tree[node].key = (t.key & m) | (win.key & ~m);
			tree[node].src = (t.src & m) | (win.src & ~m);
			win.key = (win.key & m) | (t.key & ~m);
			win.src = (win.src & m) | (t.src & ~m);
		}
	}
	rc = out_write(w, buf, len);
out:
	free(src);
	free(tree);
	free(buf);
	return rc;
}

/* Heap-merge k sorted byte ranges, given in run order, into w.  runs, when
 * not NULL, are the runs the ranges start, whose passed pages are given
 * back as the merge goes.  A range that is an input (-m) is checked to be
 * sorted: CLS_E_FAIL after a message naming the first record out of
 * order. */
static int heap_merge(const struct enc_format *f, const struct run *ranges, size_t k,
		      const struct run *runs, struct out_writer *w)
{
	struct source *src = calloc(k ? k : 1, sizeof *src);
	struct source **heap = calloc(k ? k : 1, sizeof *heap);
	const bool kv = f->fmt == CLS_FMT_KV;
	struct enc_cursor last, was;	/* -u: the record written last */
	bool have_last = false;
	size_t i, n = 0;
	int rc = 0;

	if (!src || !heap) {
		msg_errno(ENOMEM, "cannot merge runs");
		rc = CLS_E_FAIL;
		goto out;
	}
	for (i = 0; i < k; i++) {
		src[i].run = runs ? &runs[i] : &ranges[i];
		src[i].order = i;
		enc_cursor_init(&src[i].c, f, ranges[i].data, ranges[i].len,
				ranges[i].input ? ranges[i].input->name : "run");
		if (ranges[i].input)
			src[i].c.no = ranges[i].input->first_line;
		rc = enc_cursor_next(&src[i].c);
		if (rc < 0)
			goto out;
		if (rc)
			heap[n++] = &src[i];
	}
	rc = 0;
	for (i = n / 2; i-- > 0;)
		sift_down(heap, n, i);
	while (n && rc == 0) {
		struct source *top = heap[0];
		if (!f->unique || !have_last || enc_cursor_cmp(&last, &top->c) != 0) {
			rc = out_write(w, top->c.rec, top->c.len);
			if (rc == 0 && kv)
				rc = out_write(w, &f->eol, 1);
			if (rc)
				break;
			last = top->c;
			have_last = true;
		}
		was = top->c;
		rc = enc_cursor_next(&top->c);
		if (rc < 0)
			break;
		if (rc == 1 && top->run->input && enc_cursor_cmp(&was, &top->c) > 0) {
			if (kv)
				msg_err("%s:%llu: disorder: %.*s", top->c.name,
					(unsigned long long)top->c.no,
					(int)(top->c.len > 200 ? 200 : top->c.len), (const char *)top->c.rec);
			else
				msg_err("%s: record %llu: disorder", top->c.name,
					(unsigned long long)top->c.no);
			rc = CLS_E_FAIL;
			break;
		}
		if (rc == 0)
			heap[0] = heap[--n];
		rc = 0;
		if (runs)
			release_behind(top);
		sift_down(heap, n, 0);
	}
out:
	free(src);
	free(heap);
	return rc;
}

/* --- parallel merge ------------------------------------------------------
 * The merged output is cut by key into parts that threads merge at once:
 * splitter keys come from samples of every run, each run is cut after its
 * last record with a key at most the splitter, and part p is the merge of
 * every run's piece p.  Equal keys always share a part, so the merge stays
 * stable.  Parts are merged a round of one per thread at a time, each into
 * memory, and written in order. */

/* Output bytes per round, at most; a round's parts are held twice (one
 * round merging, the one before being written), within an eighth of
 * --memory. */
#define ROUND_BYTES ((size_t)256 << 20)
#define ROUND_MIN ((size_t)16 << 20)
/* Below this the merge is not worth threads. */
#define PARALLEL_MERGE_MIN ((size_t)16 << 20)
/* Samples per part and run. */
#define SAMPLES 8

/* Start of the first record at or after byte pos of a run. */
static size_t record_at(const struct enc_format *f, const struct run *r, size_t pos)
{
	const unsigned char *nl;
	if (f->fmt == CLS_FMT_BIN)
		return (pos + f->rec_size - 1) / f->rec_size * f->rec_size;
	if (pos == 0 || pos >= r->len)
		return pos == 0 ? 0 : r->len;
	nl = memchr(r->data + pos - 1, f->eol, r->len - (pos - 1));
	return nl ? (size_t)(nl - r->data) + 1 : r->len;
}

/* Sortable key of the record starting at byte at (< r->len). */
static uint64_t key_at(const struct enc_format *f, const struct run *r, size_t at)
{
	struct enc_cursor c;
	enc_cursor_init(&c, f, r->data + at, r->len - at, "run");
	return enc_cursor_next(&c) == 1 ? c.key : 0;
}

/* Byte offset of the first record of r whose key is above v. */
static size_t cut_after(const struct enc_format *f, const struct run *r, uint64_t v)
{
	size_t lo = 0, hi = r->len;
	/* Smallest pos whose record (at or after pos) has a key above v. */
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2, at = record_at(f, r, mid);
		if (at < r->len && key_at(f, r, at) <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return record_at(f, r, lo);
}

struct sample {
	uint64_t key;
	double weight;		/* bytes it stands for */
};

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

/* Cut k runs of total bytes into parts by key: cuts[p * k + r] is where
 * part p starts in run r (cuts[parts * k + r] its end).  Splitter keys come
 * from per samples of every run for each part, and each run is cut after its last record
 * with a key at most the splitter, so equal keys share a part.  0, or
 * CLS_E_FAIL when out of memory. */
static int cut_runs(const struct enc_format *f, const struct run *runs, size_t k, size_t parts,
		    size_t per, size_t total, size_t *cuts)
{
	const size_t nsamples = k * parts * per;
	struct sample *smp = calloc(nsamples ? nsamples : 1, sizeof *smp);
	uint64_t *split = calloc(parts, sizeof *split);
	size_t r, p, i, n = 0;
	double acc = 0, step;

	if (!smp || !split) {
		free(smp);
		free(split);
		msg_errno(ENOMEM, "cannot merge runs");
		return CLS_E_FAIL;
	}
	for (r = 0; r < k; r++) {
		const size_t every = runs[r].len / (parts * per) + 1;
		size_t pos;
		for (pos = 0; pos < runs[r].len && n < nsamples; pos += every) {
			const size_t at = record_at(f, &runs[r], pos);
			if (at >= runs[r].len)
				break;
			smp[n].key = key_at(f, &runs[r], at);
			smp[n].weight = (double)every;
			n++;
		}
	}
	qsort(smp, n, sizeof *smp, cmp_sample);
	/* Splitter p closes part p: the key where the running weight passes
	 * (p+1)/parts of the total. */
	step = (double)total / (double)parts;
	for (p = 0, i = 0; p + 1 < parts; p++) {
		while (i + 1 < n && acc + smp[i].weight < step * (double)(p + 1))
			acc += smp[i++].weight;
		split[p] = n ? smp[i].key : 0;
	}
	for (r = 0; r < k; r++) {
		cuts[r] = 0;
		cuts[parts * k + r] = runs[r].len;
		for (p = 0; p + 1 < parts; p++) {
			size_t c = cut_after(f, &runs[r], split[p]);
			/* Splitters never decrease, nor may the cuts. */
			cuts[(p + 1) * k + r] = c < cuts[p * k + r] ? cuts[p * k + r] : c;
		}
	}
	free(smp);
	free(split);
	return 0;
}

struct part_job {
	const struct enc_format *f;
	size_t expect;		/* bytes of a part, about */
	struct run *pieces;	/* k ranges */
	size_t k;
	struct out_writer w;
	int rc;
};

/* Merge one part into the job's memory writer, kept from round to round
 * so that its pages are faulted in once. */
static void part_job(void *arg)
{
	struct part_job *j = arg;
	j->rc = 0;
	if (!j->w.buf)
		j->rc = out_open_mem(&j->w, j->expect);
	j->w.len = 0;
	if (j->rc == 0)
		j->rc = j->f->fmt == CLS_FMT_BIN && !j->f->tail ? bin_merge(j->f, j->pieces, j->k, &j->w) :
			heap_merge(j->f, j->pieces, j->k, NULL, &j->w);
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

static int merge_parallel(struct sorter *s, const struct run *runs, size_t k,
			  struct out_writer *w, size_t total)
{
	const struct enc_format *f = s->f;
	const unsigned threads = f->threads;
	const size_t round_bytes = s->o->memory_bytes / 8 < ROUND_MIN ? ROUND_MIN :
				   s->o->memory_bytes / 8 > ROUND_BYTES ? ROUND_BYTES :
				   s->o->memory_bytes / 8;
	const size_t rounds = (total + round_bytes - 1) / round_bytes;
	const size_t parts = threads * rounds;
	size_t *cuts = calloc((parts + 1) * k, sizeof *cuts);	/* cuts[p * k + r] */
	struct part_job *jobs = calloc(2 * (size_t)threads, sizeof *jobs);
	struct run *pieces = calloc(2 * (size_t)threads * k, sizeof *pieces);
	struct round round[2] = { { jobs, 0, 0 }, { jobs + threads, 0, 0 } };
	bool started[2] = { false, false };
	size_t r, p, i;
	double t0 = now_sec(), t1, t_write = 0, t_wait = 0;
	int rc = CLS_E_FAIL;

	if (!cuts || !jobs || !pieces) {
		msg_errno(ENOMEM, "cannot merge runs");
		goto out;
	}
	if (cut_runs(f, runs, k, parts, SAMPLES, total, cuts))
		goto out;
	msg_info(2, "parallel merge: %zu parts in %zu rounds, cut in %.3f s", parts, rounds,
		 now_sec() - t0);
	/* Rounds alternate between two sets of jobs: while one set merges
	 * round p, the other's output of round p - 1 is written. */
	for (p = 0; p <= parts; p += threads) {
		struct round *cur = &round[(p / threads) % 2], *prev = &round[(p / threads + 1) % 2];
		unsigned t;

		cur->count = 0;
		if (p < parts) {
			const unsigned now = (unsigned)(parts - p < threads ? parts - p : threads);
			struct run *set = &pieces[(p / threads) % 2 * threads * k];
			for (t = 0; t < now; t++) {
				for (r = 0; r < k; r++) {
					struct run *piece = &set[t * k + r];
					const size_t a = cuts[(p + t) * k + r], b = cuts[(p + t + 1) * k + r];
					piece->data = runs[r].data + a;
					piece->len = b - a;
				}
				cur->jobs[t].f = f;
				cur->jobs[t].expect = round_bytes / threads + 1;
				cur->jobs[t].pieces = &set[t * k];
				cur->jobs[t].k = k;
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
			if (rc == 0)
				rc = out_write(w, prev->jobs[t].w.buf, prev->jobs[t].w.len);
		}
		t_write += now_sec() - t1;
		prev->count = 0;
		t1 = now_sec();
		if (started[(p / threads) % 2]) {
			pthread_join(cur->thread, NULL);
			started[(p / threads) % 2] = false;
		}
		t_wait += now_sec() - t1;
		if (rc)
			goto out;
		/* Give back what the merged rounds have passed in mapped runs. */
		for (r = 0; r < k && p < parts; r++)
			release_prefix(&runs[r], cuts[(p + cur->count) * k + r]);
	}
	rc = 0;
	msg_info(2, "parallel merge: writing %.3f s, then waiting for merges %.3f s", t_write, t_wait);
out:
	for (i = 0; jobs && i < 2 * (size_t)threads; i++)
		out_abort(&jobs[i].w);
	free(cuts);
	free(jobs);
	free(pieces);
	return rc;
}

/* Merge k runs into w: in parallel parts when they are in memory and
 * large enough (the limit, CLSORT_PARALLEL_MERGE_MIN bytes, can be lowered
 * for tests). */
static int merge_runs(struct sorter *s, const struct run *runs, size_t k, struct out_writer *w)
{
	size_t total = 0, i;
	for (i = 0; i < k; i++)
		total += runs[i].len;
	const char *min = getenv("CLSORT_PARALLEL_MERGE_MIN");
	s->merges++;
	/* Spilled runs mean memory is short: merge them in one stream, which
	 * holds the least. */
	if (!s->spill && s->f->threads > 1 &&
	    total >= (min ? strtoull(min, NULL, 10) : PARALLEL_MERGE_MIN))
		return merge_parallel(s, runs, k, w, total);
	return heap_merge(s->f, runs, k, runs, w);
}

/* A writer for a new run: a temporary file or memory. */
static int run_writer(struct sorter *s, struct out_writer *w, struct run *r, size_t expect)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	if (!s->spill) {
		if (out_open_mem(w, expect))
			return CLS_E_FAIL;
		populate_parallel(w->buf, expect, s->f->threads);
		return 0;
	}
	r->fd = tmp_create(s->o->tmpdir);
	if (r->fd < 0)
		return CLS_E_FAIL;
	{
		static char name[4200];
		snprintf(name, sizeof name, "a temporary file in %s", s->o->tmpdir);
		return out_open_fd(w, r->fd, name);
	}
}

/* Make the run's written bytes readable through r->data. */
static int run_seal(struct out_writer *w, struct run *r)
{
	if (w->mem) {
		r->heap = w->buf;
		r->data = w->buf;
		r->len = w->len;
		w->buf = NULL;
		return 0;
	}
	if (out_finish(w))
		return CLS_E_FAIL;
	r->len = w->total;
	if (r->len == 0) {
		r->data = (const unsigned char *)"";
		return 0;
	}
	r->map = mmap(NULL, r->len, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		msg_errno(errno, "cannot map %s", w->name);
		return CLS_E_FAIL;
	}
	madvise(r->map, r->len, MADV_SEQUENTIAL);
	r->data = r->map;
	return 0;
}

/* Merge the last k runs into one, in their place. */
static int merge_tail(struct sorter *s, size_t k)
{
	struct run *first = &s->runs[s->nruns - k], merged;
	struct out_writer w;
	size_t i, bytes = 0;
	unsigned level = 0;
	double t0 = now_sec();
	int rc;

	for (i = 0; i < k; i++) {
		bytes += first[i].len;
		if (first[i].level > level)
			level = first[i].level;
	}
	if (run_writer(s, &w, &merged, bytes))
		return CLS_E_FAIL;
	rc = merge_runs(s, first, k, &w);
	if (rc == 0)
		rc = run_seal(&w, &merged);
	else
		out_abort(&w);
	if (rc) {
		run_free(&merged);
		return rc;
	}
	for (i = 0; i < k; i++)
		run_free(&first[i]);
	merged.level = level + 1;
	*first = merged;
	s->nruns -= k - 1;
	s->t_merge += now_sec() - t0;
	return 0;
}

static int push_run(struct sorter *s, const struct run *r)
{
	if (s->nruns == s->runs_cap) {
		size_t cap = s->runs_cap ? 2 * s->runs_cap : 16;
		struct run *g = realloc(s->runs, cap * sizeof *g);
		if (!g) {
			msg_errno(ENOMEM, "cannot keep a sorted run");
			return CLS_E_FAIL;
		}
		s->runs = g;
		s->runs_cap = cap;
	}
	s->runs[s->nruns++] = *r;
	/* Files: merge fan-in runs of one level as soon as there are that many,
	 * which bounds the files open at once. */
	while (s->spill && s->nruns >= s->fanin) {
		size_t i;
		for (i = s->nruns - s->fanin; i < s->nruns; i++)
			if (s->runs[i].level != s->runs[s->nruns - 1].level)
				return 0;
		if (merge_tail(s, s->fanin))
			return CLS_E_FAIL;
	}
	return 0;
}

/* --- setup --------------------------------------------------------------- */

/* What helper threads do beside the device: while it starts, fault in the
 * input's pages, prepare the output's blocks (or its mapping, when its size
 * is known) and, for a first host threshold, time the host sort; while it
 * sorts, give back the input's pages once they are all staged. */
struct warm {
	const struct in_set *in;
	uint64_t in_bytes;
	struct out_writer *out;
	uint64_t out_bytes;
	bool out_exact;		/* out_bytes is the output's size */
	unsigned threads;
	bool measure;		/* time the host sort, for the host threshold */
	enum word_kind kind;
	double host_rate;	/* thr_host_rate's answer */
	const struct enc_batch *drop;	/* input no longer needed */
	pthread_t in_thread, out_thread, rate_thread, drop_thread;
	bool in_running, out_running, rate_running, drop_running;
};

static void *warm_in(void *arg)
{
	const struct warm *w = arg;
	in_prefault(w->in, w->in_bytes);
	return NULL;
}

static void *warm_out(void *arg)
{
	struct warm *w = arg;
	if (!w->out_exact || !out_map(w->out, w->out_bytes, w->threads))
		out_reserve(w->out, w->out_bytes);
	return NULL;
}

static void *warm_rate(void *arg)
{
	struct warm *w = arg;
	w->host_rate = thr_host_rate(w->kind);
	return NULL;
}

static void *warm_drop(void *arg)
{
	const struct warm *w = arg;
	size_t i;
	for (i = 0; i < w->drop->nslices; i++)
		in_release(w->drop->slices[i].file, w->drop->slices[i].off, w->drop->slices[i].len);
	return NULL;
}

/* All of b's input is staged, and the output comes from the words alone:
 * give the input's pages back while the device sorts, which leaves little
 * for munmap to do at the end. */
static void warm_drop_input(struct warm *w, const struct enc_batch *b)
{
	w->drop = b;
	w->drop_running = pthread_create(&w->drop_thread, NULL, warm_drop, w) == 0;
}

static void warm_start(struct warm *w)
{
	w->in_running = pthread_create(&w->in_thread, NULL, warm_in, w) == 0;
	w->out_running = pthread_create(&w->out_thread, NULL, warm_out, w) == 0;
	if (w->measure)
		w->rate_running = pthread_create(&w->rate_thread, NULL, warm_rate, w) == 0;
}

/* The output is ready: it may be written from now on. */
static void warm_out_done(struct warm *w)
{
	if (w->out_running)
		pthread_join(w->out_thread, NULL);
	w->out_running = false;
}

static void warm_done(struct warm *w)
{
	warm_out_done(w);
	if (w->in_running)
		pthread_join(w->in_thread, NULL);
	w->in_running = false;
	if (w->rate_running)
		pthread_join(w->rate_thread, NULL);
	w->rate_running = false;
	if (w->drop_running)
		pthread_join(w->drop_thread, NULL);
	w->drop_running = false;
}

/* The device auto picks: the one the host threshold is measured on. */
static bool auto_device(const struct cls_opts *o)
{
	struct dev_spec spec;
	return dev_parse_spec(o->device, &spec) == 0 && spec.kind == DEV_AUTO;
}

/* The host threshold in force: as set, else as measured, else the default. */
static void host_threshold(struct sorter *s)
{
	s->measuring = !s->o->host_max_set && auto_device(s->o);
	if (s->o->host_max_set) {
		s->host_max = s->o->host_max;
		msg_info(2, "host threshold: %llu records, as set", (unsigned long long)s->host_max);
	} else if ((s->measured = thr_load(&s->thr))) {
		s->host_max = s->thr.records;
		msg_info(2, "host threshold: %llu records, measured on %s",
			 (unsigned long long)s->host_max, s->thr.dev);
	} else {
		s->host_max = THR_DEFAULT;
		msg_info(2, "host threshold: %llu records, until a device run measures one",
			 (unsigned long long)s->host_max);
	}
}

/* Small inputs skip the device, unless one was asked for: those the host
 * sorts sooner than the device starts, and that fit in memory at once. */
static bool on_host(const struct sorter *s, uint64_t total)
{
	const uint64_t per_record = word_size(s->f->kind) +
		(s->f->fmt == CLS_FMT_KV ? sizeof(struct kv_line) : 0);
	return !s->o->device_explicit && total <= s->host_max &&
	       total <= s->o->memory_bytes / 2 / per_record;
}

/* The device's side of the host threshold, measured on this run: its start
 * and release, and the sorting and writing per record.  The host's side is
 * the cached one, else a sample timed while the device started. */
static void measure_device(struct sorter *s, double release, uint64_t records,
			   double host_rate)
{
	s->thr.start = s->t_start + release;
	s->thr.per_record = (s->t_sort + s->t_merge) / (double)records;
	if (!s->measured)
		s->thr.host_rate = host_rate;
	snprintf(s->thr.dev, sizeof s->thr.dev, "%s [%s]", s->dev.name, s->dev.platform_name);
	thr_store(&s->thr);
	msg_info(1, "host threshold: %llu records (device start and release %.3f s, "
		 "%.2f ns per record; host sort %.2f ns per record and log2 of records)",
		 (unsigned long long)s->thr.records, s->thr.start, s->thr.per_record * 1e9,
		 s->thr.host_rate * 1e9);
}

/* The host's side, measured on a host sort of n records in t seconds. */
static void measure_host(struct sorter *s, size_t n, double t)
{
	const uint64_t old = s->thr.records;

	if (!s->measured || n < HOST_MEASURE_MIN)
		return;
	s->thr.host_rate = thr_rate(n, t);
	thr_store(&s->thr);
	if (s->thr.records != old)
		msg_info(1, "host threshold: %llu records (host sort %.2f ns per record and "
			 "log2 of records)", (unsigned long long)s->thr.records,
			 s->thr.host_rate * 1e9);
}

/* Most records a run of indexed words may hold: the index is 32 bits
 * wide in a 64-bit word (32-bit keys), and the runs of larger inputs are
 * key ranges or merged.  CLSORT_INDEX_BITS narrows it, so that tests cross
 * the limit on small inputs. */
static uint64_t index_limit(void)
{
	const char *s = getenv("CLSORT_INDEX_BITS");
	const unsigned long bits = s && *s ? strtoul(s, NULL, 10) : 32;
	return (uint64_t)1 << (bits >= 4 && bits < 32 ? bits : 32);
}

static int setup(struct sorter *s, const struct in_set *in, uint64_t total)
{
	const struct cls_opts *o = s->o;
	const struct enc_format *f = s->f;
	const size_t ws = word_size(f->kind);
	size_t per_record = ws + (f->fmt == CLS_FMT_KV ? sizeof(struct kv_line) : 0);
	uint64_t cap, budget;
	double t0, t1, t2;
	int rc;

	if (on_host(s, total)) {
		s->host = true;
		s->cap = total ? (size_t)total : 1;
		return 0;
	}
	t0 = now_sec();
	if (dev_open(&s->dev, o->device, o->verbose > 0))
		return CLS_E_FAIL;
	s->dev_opened = true;
	t1 = now_sec();
	s->t_start = t1 - t0;
	if (eng_open(&s->eng, &s->dev, f->kind, o->local))
		return CLS_E_FAIL;
	t2 = now_sec();

	budget = o->buffer_bytes;
	if (o->buffer_percent > 0)
		budget = (uint64_t)((double)s->dev.global_mem * o->buffer_percent / 100.0);
	if (budget == 0)
		budget = (uint64_t)((double)s->dev.global_mem * DEVICE_FRACTION);
	cap = budget / ws;
	if (cap > eng_max_words(s->eng))
		cap = eng_max_words(s->eng);
	/* A CPU device's buffers live in host memory too: the words, and the
	 * second buffer of the merge-path passes. */
	if (s->dev.type & CL_DEVICE_TYPE_CPU)
		per_record += 2 * ws;
	if (cap > o->memory_bytes / 2 / per_record)
		cap = o->memory_bytes / 2 / per_record;
	if (cap < 1024)
		cap = 1024;
	if (f->indexed && cap > index_limit())
		cap = index_limit();
	if (cap > total)
		cap = total ? total : 1;
	/* The device may hold less than it says: halve until it holds. */
	while ((rc = eng_reserve(s->eng, (size_t)cap)) == ENG_E_NOMEM && cap > 1024)
		cap = cap / 2 < 1024 ? 1024 : cap / 2;
	if (rc) {
		if (rc == ENG_E_NOMEM)
			msg_err("the device cannot hold even %llu words", (unsigned long long)cap);
		return CLS_E_FAIL;
	}
	s->cap = (size_t)cap;
	msg_info(1, "setup: device %.3f s, kernels %.3f s, device buffer %.3f s", t1 - t0, t2 - t1,
		 now_sec() - t2);
	return 0;
}

/* Where the words of the current run come from and go to, chunk by chunk. */
struct run_io {
	struct sorter *s;
	struct out_writer *w;
	const struct enc_format *f;
	const struct enc_batch *b;
	struct warm *warm;	/* joined before w is written, or NULL */
};

/* Input bytes of records [first, first+count) of run b, for --progress
 * (kv: in proportion, so that the shares of a run add up to its bytes). */
static uint64_t run_bytes(const struct enc_format *f, const struct enc_batch *b, size_t first,
			  size_t count)
{
	uint64_t bytes = 0;
	size_t i;
	if (f->fmt == CLS_FMT_BIN)
		return (uint64_t)count * f->rec_size;
	for (i = 0; i < b->nslices; i++)
		bytes += b->slices[i].len;
	return b->n ? bytes * (first + count) / b->n - bytes * first / b->n : 0;
}

static int produce_chunk(void *arg, void *dst, size_t first, size_t count)
{
	const struct run_io *io = arg;
	const size_t ws = word_size(io->f->kind);
	const double t0 = now_sec();
	int rc = 0;

	/* kv runs are parsed whole; bin records are encoded as they go. */
	if (io->b->words)
		memcpy(dst, (const char *)io->b->words + first * ws, count * ws);
	else
		rc = enc_encode_range(io->f, io->b, first, count, dst);
	if (rc == 0 && io->warm && !io->f->indexed && first + count == io->b->n)
		warm_drop_input(io->warm, io->b);
	prog_add(PROG_SORT, run_bytes(io->f, io->b, first, count));
	io->s->t_produce += now_sec() - t0;
	return rc;
}

static int consume_chunk(void *arg, const void *src, size_t first, size_t count)
{
	const struct run_io *io = arg;
	double t0 = now_sec();
	int rc;

	(void)first;
	if (io->warm) {
		warm_out_done(io->warm);
		io->s->t_warm += now_sec() - t0;
		t0 = now_sec();
	}
	rc = out_emit(io->w, io->f, io->b, src, count);
	io->s->t_consume += now_sec() - t0;
	return rc;
}

/* Sorted words back into the run's own array, where string keys that tie
 * on the word are ordered and -u thins them before they are written. */
static int collect_chunk(void *arg, const void *src, size_t first, size_t count)
{
	const struct run_io *io = arg;
	const size_t ws = word_size(io->f->kind);
	memcpy((char *)io->b->words + first * ws, src, count * ws);
	return 0;
}

/* Sort the planned run and write it to w; warm, when not NULL, is joined
 * before the first write. */
static int sort_run(struct sorter *s, struct enc_batch *b, struct out_writer *w,
		    struct warm *warm)
{
	struct run_io io = { s, w, s->f, b, warm };
	const bool whole = s->f->unique || s->f->str;
	double t0 = now_sec();
	int rc = 0;

	if (b->words) {
		if (enc_encode(s->f, b))
			return CLS_E_FAIL;
		s->t_encode += now_sec() - t0;
		t0 = now_sec();
	}
	if (s->host) {
		host_sort(b->words, b->n, s->f->kind);
		measure_host(s, b->n, now_sec() - t0);
		prog_add(PROG_SORT, run_bytes(s->f, b, 0, b->n));
	} else {
		rc = eng_sort(s->eng, b->n, produce_chunk, whole ? collect_chunk : consume_chunk, &io);
	}
	if (rc == 0 && (s->f->str || (s->f->tail && whole)))
		rc = enc_refine(s->f, b, b->words, b->n);
	if (rc == 0 && (s->host || whole)) {
		const size_t n = s->f->unique ? enc_unique(s->f, b, b->words, b->n) : b->n;
		if (warm)
			warm_out_done(warm);
		rc = out_emit(w, s->f, b, b->words, n);
	}
	if (rc == 0)
		rc = out_emit_end(w, s->f, b);
	s->t_sort += now_sec() - t0;
	return rc;
}

/* --- merge on the device ---------------------------------------------------
 * Runs in memory are merged by sorting them again, part by part: the runs
 * are cut by key into parts that each fit a run (as the parallel merge
 * cuts them), and each part, the runs' pieces taken in run order, is
 * sorted on the device straight into the output.  Equal keys share a part
 * and keep their run order, so the sort stays stable.  The host only
 * encodes and writes, as for one run; a part that does not fit a run (many
 * equal keys) is merged on the host. */

/* Samples per part and run: the parts' sizes are then within a few per
 * cent of what the splitters aim at. */
#define RESORT_SAMPLES 32

/* How an input larger than a run is sorted, where its copy fits in memory:
 * cut into key ranges (records and lines, whose output gathers records by
 * index: a second pass over the device would gather them twice), or in
 * runs then merged on the device (bare keys, which the partition's pass on
 * the host costs more than a second pass on the device).  For tests and
 * measurements CLSORT_MERGE_RUNS chooses: "ranges", "device" (runs merged
 * on the device) or "host" (runs merged on the host). */
static bool cut_ranges(const struct enc_format *f)
{
	const char *how = getenv("CLSORT_MERGE_RUNS");
	return how ? strcmp(how, "ranges") == 0 : f->indexed;
}

/* The cut points of a merge on the device are runs times parts, both about
 * records over a run: with many runs (a run far smaller than the input)
 * the host merges instead. */
#define RESORT_MAX_CUTS ((size_t)1 << 16)

static bool merge_on_device(size_t runs, uint64_t records, size_t cap)
{
	const char *how = getenv("CLSORT_MERGE_RUNS");
	return (!how || strcmp(how, "host") != 0) &&
	       (double)runs * (double)part_count(records, cap) <= (double)RESORT_MAX_CUTS;
}

static int resort_runs(struct sorter *s, const struct run *runs, size_t k, uint64_t records,
		       struct enc_batch *b, struct out_writer *out)
{
	const struct enc_format *f = s->f;
	const size_t parts = part_count(records, s->cap);
	size_t *cuts = calloc((parts + 1) * k, sizeof *cuts);
	struct in_file *files = calloc(k, sizeof *files);
	struct run *pieces = calloc(k, sizeof *pieces);
	size_t total = 0, p, r, on_host = 0;
	int rc = CLS_E_FAIL;

	if (!cuts || !files || !pieces) {
		msg_errno(ENOMEM, "cannot merge runs");
		goto out;
	}
	for (r = 0; r < k; r++)
		total += runs[r].len;
	if (cut_runs(f, runs, k, parts, RESORT_SAMPLES, total, cuts))
		goto out;
	for (p = 0; p < parts; p++) {
		struct in_set set = { files, 0, 0 };
		struct enc_planner pl;
		for (r = 0; r < k; r++) {
			const size_t a = cuts[p * k + r], e = cuts[(p + 1) * k + r];
			pieces[r].data = runs[r].data + a;
			pieces[r].len = e - a;
			if (a == e)
				continue;
			memset(&files[set.count], 0, sizeof files[0]);
			files[set.count].name = "a sorted run";
			files[set.count].data = runs[r].data + a;
			files[set.count].size = e - a;
			set.count++;
			set.bytes += e - a;
		}
		if (enc_plan_init(&pl, f, &set))
			goto out;
		if (pl.total > s->cap) {
			on_host++;
			rc = f->fmt == CLS_FMT_BIN && !f->tail ? bin_merge(f, pieces, k, out) :
				heap_merge(f, pieces, k, NULL, out);
		} else if ((rc = enc_plan_next(&pl, s->cap, b)) > 0) {
			rc = sort_run(s, b, out, NULL);
		}
		enc_plan_free(&pl);
		if (rc < 0)
			goto out;
		/* What the parts have passed of the runs is needed no more. */
		for (r = 0; r < k; r++)
			release_prefix(&runs[r], cuts[(p + 1) * k + r]);
	}
	rc = 0;
	s->resorted += parts;
	msg_info(2, "merge on the device: %zu parts, %zu of them too large and merged on the host",
		 parts, on_host);
out:
	free(cuts);
	free(files);
	free(pieces);
	return rc;
}

static void report(const struct sorter *s, size_t runs, uint64_t records)
{
	struct eng_times t = { 0, 0, 0 };
	if (s->eng)
		eng_times(s->eng, &t);
	msg_info(1, "host memory budget %llu MiB", (unsigned long long)(s->o->memory_bytes >> 20));
	if (s->ranges)
		msg_info(1, "%llu records cut into %zu key ranges in %.3f s, sorted in %zu run%s "
			 "of up to %zu; %u merge pass%s", (unsigned long long)records, s->ranges,
			 s->t_part, runs, runs == 1 ? "" : "s", s->cap, s->merges,
			 s->merges == 1 ? "" : "es");
	else
		msg_info(1, "%llu records in %zu run%s of up to %zu%s; %u merge pass%s%s",
			 (unsigned long long)records, runs, runs == 1 ? "" : "s", s->cap,
			 runs > 1 ? (s->spill ? ", kept in temporary files" : ", kept in memory") : "",
			 s->merges, s->merges == 1 ? "" : "es",
			 s->resorted ? " on the host, then merged on the device" : "");
	msg_info(1, "time: encode %.3f s, sort and write %.3f s, merge %.3f s", s->t_encode,
		 s->t_sort, s->t_merge);
	if (s->eng)
		msg_info(2, "of sort and write: staging %.3f s, waiting for the output %.3f s, "
			 "writing %.3f s", s->t_produce, s->t_warm, s->t_consume);
	if (s->eng && s->dev.profiling)
		msg_info(1, "device time: upload %.6f s, sort %.6f s, download %.6f s", t.upload,
			 t.sort, t.download);
}

/* What the sorts of one input (or of every range of it) add up to. */
struct tally {
	uint64_t records, skipped;
	size_t runs;
};

/* Sort the records pl plans into out: one run straight to it, or runs
 * kept and merged.  warm, when not NULL, is joined before out is written. */
static int sort_set(struct sorter *s, struct enc_planner *pl, struct enc_batch *b,
		    struct out_writer *out, struct warm *warm, struct tally *t)
{
	size_t runs = 0, i;
	uint64_t records = 0;
	double t0;
	int rc = CLS_E_FAIL;

	for (;;) {
		int planned = enc_plan_next(pl, s->cap, b);
		if (planned < 0)
			goto out;
		if (!planned)
			break;
		t->runs++;
		if (++runs == 1 && enc_plan_done(pl)) {
			rc = sort_run(s, b, out, warm);
			t->records += b->n;
			t->skipped += b->skipped;
			if (rc)
				goto out;
			break;
		} else {
			struct out_writer w;
			struct run r;
			size_t bytes = 0;
			for (i = 0; i < b->nslices; i++)
				bytes += b->slices[i].len + 1;
			if (run_writer(s, &w, &r, bytes))
				goto out;
			rc = sort_run(s, b, &w, NULL);
			records += b->n;
			t->records += b->n;
			t->skipped += b->skipped;
			if (rc == 0)
				rc = run_seal(&w, &r);
			else
				out_abort(&w);
			if (rc == 0)
				rc = push_run(s, &r);
			else
				run_free(&r);
			if (rc)
				goto out;
			for (i = 0; i < b->nslices; i++)
				in_release(b->slices[i].file, b->slices[i].off, b->slices[i].len);
		}
	}
	rc = 0;
	if (runs > 1) {
		while (s->spill && s->nruns > s->fanin)
			if ((rc = merge_tail(s, s->fanin)))
				goto out;
		if (warm)
			warm_out_done(warm);
		t0 = now_sec();
		prog_phase(PROG_MERGE);
		if (!s->spill && !s->host && merge_on_device(s->nruns, records, s->cap))
			rc = resort_runs(s, s->runs, s->nruns, records, b, out);
		else
			rc = merge_runs(s, s->runs, s->nruns, out);
		s->t_merge += now_sec() - t0;
	}
out:
	for (i = 0; i < s->nruns; i++)
		run_free(&s->runs[i]);
	s->nruns = 0;
	return rc;
}

/* Sort in, cut into key ranges that each fit a run, range by range into
 * out.  PART_BAD_LINE when a kv line has no key: the caller sorts the
 * input the usual way, which reports the line. */
static int sort_ranges(struct sorter *s, const struct in_set *in, uint64_t records,
		       struct enc_batch *b, struct out_writer *out, struct tally *t)
{
	struct part_set parts;
	double t0 = now_sec();
	size_t r;
	int rc = part_split(s->f, in, records, s->cap, &parts);

	if (rc)
		return rc;
	s->ranges = parts.count;
	s->t_part = now_sec() - t0;
	/* Every record is in the ranges now. */
	for (r = 0; r < in->count; r++)
		in_release(&in->files[r], 0, in->files[r].size);
	for (r = 0; r < parts.count && rc == 0; r++) {
		struct enc_planner pl;
		if (enc_plan_init(&pl, s->f, &parts.ranges[r])) {
			rc = CLS_E_FAIL;
			break;
		}
		rc = sort_set(s, &pl, b, out, NULL, t);
		enc_plan_free(&pl);
	}
	part_free(&parts);
	return rc;
}

int runs_sort(const struct cls_opts *o, const struct enc_format *f, const struct in_set *in,
	      struct out_writer *out)
{
	struct sorter s;
	struct enc_planner pl;
	struct enc_batch b;
	struct tally t = { 0, 0, 0 };
	uint64_t total;
	int rc = CLS_E_FAIL;
	/* bin records come out as they went in: the output's size is known.
	 * Mapped and populated, the output is in memory all at once, which
	 * is for outputs well inside the memory budget only. */
	struct warm warm = { .in = in, .in_bytes = o->memory_bytes / 4, .out = out,
			     .out_bytes = f->fmt == CLS_FMT_BIN ? in->bytes : 0,
			     .out_exact = f->fmt == CLS_FMT_BIN && !f->unique &&
					  in->bytes <= o->memory_bytes / 2,
			     .threads = f->threads, .kind = f->kind };
	double t0;

	memset(&s, 0, sizeof s);
	memset(&b, 0, sizeof b);
	s.o = o;
	s.f = f;
	if (enc_plan_init(&pl, f, in))
		return CLS_E_FAIL;
	total = pl.total;
	host_threshold(&s);
	if (on_host(&s, total)) {
		msg_info(1, "%llu records: sorting on the host", (unsigned long long)total);
	} else {
		/* Starting a device takes a while: have the input's pages and
		 * the output's blocks ready by then, and time the host sort
		 * for a first host threshold. */
		warm.measure = s.measuring && !s.measured;
		warm_start(&warm);
	}
	if (setup(&s, in, total))
		goto out;
	/* The whole run's words are kept on the host only where they cannot
	 * be made chunk by chunk: kv lines are parsed at once, and the host
	 * sort and -u need them all. */
	if (s.host || f->fmt == CLS_FMT_KV || f->unique) {
		b.words = xmalloc(s.cap * word_size(f->kind), "sort words");
		if (!b.words)
			goto out;
	}
	if (f->fmt == CLS_FMT_KV) {
		b.lines = xmalloc(s.cap * sizeof *b.lines, "line table");
		if (!b.lines)
			goto out;
	}
	/* Runs stay in memory when the whole input fits beside the run
	 * buffers; otherwise they go to temporary files. */
	s.spill = in->bytes + (uint64_t)s.cap * word_size(f->kind) > o->memory_bytes;
	if (s.spill && choose_fanin(&s, in->bytes / (s.cap * (f->fmt == CLS_FMT_KV ? 2 : f->rec_size)) + 1))
		goto out;
	/* More than a run, and room for a copy of the input: key ranges that
	 * each fit a run, and no merge.  Not for -u, whose equal keys must
	 * meet, where ranges may split them, nor for string keys, whose
	 * ranges would be cut by a prefix alone, nor for keys longer than
	 * their words (bytes:N), whose ties they would split. */
	rc = PART_BAD_LINE;
	if (!s.spill && !f->unique && !f->str && !f->tail && total > s.cap &&
	    part_count(total, s.cap) <= MAX_RANGES && cut_ranges(f)) {
		warm_out_done(&warm);
		rc = sort_ranges(&s, in, total, &b, out, &t);
		if (rc == PART_BAD_LINE)
			msg_info(1, "a line without a key: sorting in runs, which names it");
	}
	if (rc == PART_BAD_LINE)
		rc = sort_set(&s, &pl, &b, out, &warm, &t);
	if (rc)
		goto out;
	if (t.skipped)
		msg_err("skipped %llu line%s with a bad key", (unsigned long long)t.skipped,
			t.skipped == 1 ? "" : "s");
	report(&s, t.runs, t.records);
out:
	warm_done(&warm);
	free(s.runs);
	free(b.words);
	free(b.lines);
	enc_plan_free(&pl);
	free(b.slices);
	t0 = now_sec();
	eng_close(s.eng);
	if (s.dev_opened) {
		double released;
		dev_close(&s.dev);
		released = now_sec() - t0;
		msg_info(2, "device released in %.3f s", released);
		if (rc == 0 && t.records && s.measuring && (s.measured || warm.host_rate > 0))
			measure_device(&s, released, t.records, warm.host_rate);
	}
	return rc;
}

int runs_merge(const struct enc_format *f, const struct in_set *in, struct out_writer *out)
{
	struct run *r = calloc(in->count ? in->count : 1, sizeof *r);
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
	rc = heap_merge(f, r, in->count, NULL, out);
	free(r);
	return rc;
}
