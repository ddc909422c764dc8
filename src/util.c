#include "config.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int util_verbose;
char util_who[32];
void (*msg_erase)(void);
static pthread_mutex_t msg_mutex = PTHREAD_MUTEX_INITIALIZER;

void msg_lock(void)
{
	pthread_mutex_lock(&msg_mutex);
}

void msg_unlock(void)
{
	pthread_mutex_unlock(&msg_mutex);
}

/* Where msg_keep keeps this thread's errors; NULL: printed. */
static __thread char *kept;
static __thread size_t kept_size;

void msg_keep(char *buf, size_t size)
{
	kept = size ? buf : NULL;
	kept_size = size;
	if (kept)
		kept[0] = '\0';
}

static void vmsg(bool error, int errnum, const char *fmt, va_list ap)
{
	char buf[1024];
	ssize_t written;
	const int head = snprintf(buf, sizeof buf, "clsort: %s", util_who);
	int len = head + vsnprintf(buf + head, sizeof buf - (size_t)head, fmt, ap);
	if (len >= (int)sizeof buf)
		len = sizeof buf - 1;
	if (errnum)
		len += snprintf(buf + len, sizeof buf - (size_t)len, ": %s", strerror(errnum));
	if (len >= (int)sizeof buf - 1)
		len = sizeof buf - 2;
	if (error && kept) {
		if (!kept[0])
			snprintf(kept, kept_size, "%.*s", len - head, buf + head);
		return;
	}
	buf[len++] = '\n';
	/* One write, so that lines from threads never interleave. */
	msg_lock();
	if (msg_erase)
		msg_erase();
	written = write(STDERR_FILENO, buf, (size_t)len);
	msg_unlock();
	(void)written;	/* nowhere to report it */
}

void msg_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(true, 0, fmt, ap);
	va_end(ap);
}

void msg_errno(int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(true, errnum, fmt, ap);
	va_end(ap);
}

void msg_info(int level, const char *fmt, ...)
{
	va_list ap;
	if (util_verbose < level)
		return;
	va_start(ap, fmt);
	vmsg(false, 0, fmt, ap);
	va_end(ap);
}

struct timespec deadline_in(long ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ns / 1000000000L;
	ts.tv_nsec += ns % 1000000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double thread_cpu_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void *xmalloc(size_t size, const char *what)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		msg_errno(ENOMEM, "cannot allocate %zu bytes for %s", size, what);
	return p;
}

void *xmalloc_aligned(size_t align, size_t size, const char *what)
{
	void *p = NULL;
	const int err = posix_memalign(&p, align, size ? size : 1);
	if (err) {
		msg_errno(err, "cannot allocate %zu bytes for %s", size, what);
		return NULL;
	}
	return p;
}

void copy_stream(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
#if defined(__SSE2__)
	if (len >= 4096) {
		/* Up to a 16-byte boundary of dst, then 64 bytes at a time. */
		const size_t head = (16 - ((uintptr_t)d & 15)) & 15;
		memcpy(d, s, head);
		d += head;
		s += head;
		len -= head;
		for (; len >= 64; len -= 64, d += 64, s += 64) {
			__m128i *const o = (__m128i *)d;
			const __m128i *const i = (const __m128i *)s;
			_mm_stream_si128(o, _mm_loadu_si128(i));
			_mm_stream_si128(o + 1, _mm_loadu_si128(i + 1));
			_mm_stream_si128(o + 2, _mm_loadu_si128(i + 2));
			_mm_stream_si128(o + 3, _mm_loadu_si128(i + 3));
		}
		/* Ordered before whatever tells the reader the copy is done. */
		_mm_sfence();
	}
#endif
	memcpy(d, s, len);
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* write(2), or pwrite(2) at *off when off is not NULL, until all len
 * bytes are written, in pieces of at most 1 GiB. */
static int write_all(int fd, const void *buf, size_t len, uint64_t *off)
{
	const char *p = buf;
	while (len) {
		const size_t n = len > (1u << 30) ? (1u << 30) : len;
		ssize_t w = off ? pwrite(fd, p, n, (off_t)*off) : write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		if (off)
			*off += (uint64_t)w;
		len -= (size_t)w;
	}
	return 0;
}

int write_full(int fd, const void *buf, size_t len)
{
	return write_all(fd, buf, len, NULL);
}

int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	return write_all(fd, buf, len, &off);
}

int parse_size(const char *s, uint64_t *bytes, double *percent)
{
	char *end;
	double v;

	*percent = 0;
	*bytes = 0;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	switch (*end) {
	case '%':
		if (end[1] || v <= 0 || v > 100)
			return -1;
		*percent = v;
		return 0;
	case 'b': case 'B': case '\0': break;
	case 'k': case 'K': v *= 1024.0; break;
	case 'm': case 'M': v *= 1024.0 * 1024; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
	case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
	default: return -1;
	}
	if (*end && end[1] && !(end[1] == 'B' && !end[2]) && !(end[1] == 'i' && end[2] == 'B' && !end[3]))
		return -1;
	if (v < 1 || v > 1.8e19)
		return -1;
	*bytes = (uint64_t)v;
	return 0;
}

char *tmp_template(const char *head, const char *tail)
{
	const size_t hl = strlen(head), tl = strlen(tail);
	char *t = malloc(hl + tl + 7);
	if (!t)
		return NULL;
	memcpy(t, head, hl);
	memcpy(t + hl, tail, tl);
	memset(t + hl + tl, 'X', 6);
	t[hl + tl + 6] = '\0';
	return t;
}

unsigned cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

bool cpu_ticks(uint64_t *idle, uint64_t *total)
{
	cpu_set_t mine;
	FILE *fp = fopen("/proc/stat", "r");
	char line[512];
	bool any = false;

	*idle = *total = 0;
	if (!fp)
		return false;
	if (sched_getaffinity(0, sizeof mine, &mine))
		CPU_ZERO(&mine);
	while (fgets(line, sizeof line, fp)) {
		unsigned long long v[8];
		unsigned cpu;
		int k;

		if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
		    cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mine))
			continue;
		/* user nice system idle iowait irq softirq steal */
		for (k = 0; k < 8; k++)
			*total += v[k];
		*idle += v[3] + v[4];
		any = true;
	}
	fclose(fp);
	return any;
}

/* This process's CPU seconds, all its threads, user and system. */
static double self_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void cpu_watch_start(struct cpu_watch *w)
{
	w->t0 = now_sec();
	w->self = self_cpu_seconds();
	w->known = w->self >= 0 && cpu_ticks(&w->idle, &w->total);
}

double cpu_others_share(const struct cpu_watch *w)
{
	const long hz = sysconf(_SC_CLK_TCK);
	uint64_t idle, total;
	double self, busy, others;

	if (!w->known || hz <= 0 || now_sec() - w->t0 < (double)CPU_WATCH_TICKS / (double)hz ||
	    !cpu_ticks(&idle, &total) || (self = self_cpu_seconds()) < 0)
		return -1;
	total -= w->total;
	idle -= w->idle;
	if (total == 0 || idle > total)
		return -1;
	busy = (double)(total - idle);
	others = busy - (self - w->self) * (double)hz;
	return others > 0 ? others / (double)total : 0;
}

struct thread_call {
	void (*fn)(void *);
	void *arg;
};

static void *thread_main(void *p)
{
	struct thread_call *c = p;
	c->fn(c->arg);
	return NULL;
}

/* A batch on threads started for it: shares 1 .. 255 on threads of their
 * own, the others on the calling thread. */
static void run_threads(void (*fn)(void *), char *args, size_t argsize, unsigned n)
{
	pthread_t tid[256];
	struct thread_call calls[256];
	bool started[256];
	const unsigned spawn = n < 256 ? n : 256;
	unsigned i;

	for (i = 1; i < spawn; i++) {
		calls[i].fn = fn;
		calls[i].arg = args + i * argsize;
		started[i] = pthread_create(&tid[i], NULL, thread_main, &calls[i]) == 0;
		/* No thread to spare: do that share here instead. */
		if (!started[i])
			fn(calls[i].arg);
	}
	fn(args);
	for (i = spawn; i < n; i++)
		fn(args + i * argsize);
	for (i = 1; i < spawn; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
}

/* Worker threads kept for the life of the process, so that the many short
 * batches of a sort (two for every 16 MiB chunk) do not pay for starting
 * threads each time, which costs about 0.5 ms for 16 of them.  One batch
 * runs on the pool at a time; a batch asked for meanwhile (by another
 * thread, or by a share of the running batch) starts threads of its own. */
#define POOL_MAX 64

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	unsigned workers;
	bool busy;
	void (*fn)(void *);
	char *args;
	size_t argsize;
	unsigned next, count, unfinished;	/* shares of the batch */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	   .done = PTHREAD_COND_INITIALIZER };

/* Run shares of the batch until none is left to take; with pool.lock held. */
static void pool_take(void)
{
	while (pool.next < pool.count) {
		void (*fn)(void *) = pool.fn;
		void *arg = pool.args + pool.next++ * pool.argsize;

		pthread_mutex_unlock(&pool.lock);
		fn(arg);
		pthread_mutex_lock(&pool.lock);
		if (--pool.unfinished == 0)
			pthread_cond_signal(&pool.done);
	}
}

static void *pool_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		while (pool.next >= pool.count)
			pthread_cond_wait(&pool.work, &pool.lock);
		pool_take();
	}
	return NULL;
}

void run_parallel(void (*fn)(void *), void *args, size_t argsize, unsigned n)
{
	if (n <= 1) {
		if (n)
			fn(args);
		return;
	}
	pthread_mutex_lock(&pool.lock);
	if (pool.busy) {
		pthread_mutex_unlock(&pool.lock);
		run_threads(fn, args, argsize, n);
		return;
	}
	pool.busy = true;
	/* The calling thread takes shares too: with fewer workers than
	 * shares, the batch only takes longer. */
	while (pool.workers < n - 1 && pool.workers < POOL_MAX) {
		pthread_t t;
		if (pthread_create(&t, NULL, pool_main, NULL))
			break;
		pthread_detach(t);
		pool.workers++;
	}
	pool.fn = fn;
	pool.args = args;
	pool.argsize = argsize;
	pool.next = 0;
	pool.count = n;
	pool.unfinished = n;
	pthread_cond_broadcast(&pool.work);
	pool_take();
	while (pool.unfinished)
		pthread_cond_wait(&pool.done, &pool.lock);
	pool.busy = false;
	pthread_mutex_unlock(&pool.lock);
}

void run_jobs(void (*fn)(void *), void *jobs, size_t size, size_t n, unsigned threads)
{
	size_t done = 0;
	while (done < n) {
		size_t now = n - done < threads ? n - done : threads;
		run_parallel(fn, (char *)jobs + done * size, size, (unsigned)now);
		done += now;
	}
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct populate_job {
	unsigned char *p;
	size_t len;
	bool touch;
};

/* The whole pages of p[0..len), [*start, *end). */
static bool whole_pages(const void *p, size_t len, uintptr_t *start, uintptr_t *end)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	*start = ((uintptr_t)p + page - 1) / page * page;
	*end = ((uintptr_t)p + len) / page * page;
	return *end > *start;
}

static atomic_bool faults_on_hold;

void faults_hold(bool on)
{
	atomic_store(&faults_on_hold, on);
}

bool faults_held(void)
{
	return atomic_load(&faults_on_hold);
}

bool populate_range(void *p, size_t len)
{
	uintptr_t start, end;

	return whole_pages(p, len, &start, &end) &&
	       madvise((void *)start, end - start, MADV_POPULATE_WRITE) == 0;
}

static void populate_job(void *arg)
{
	const struct populate_job *j = arg;
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start, end, a;

	if (!whole_pages(j->p, j->len, &start, &end))
		return;
	/* Older kernels lack MADV_POPULATE_WRITE: write every page. */
	if (!j->touch && populate_range(j->p, j->len))
		return;
	for (a = start; a < end; a += page)
		*(volatile unsigned char *)a = 0;
}

static void populate_jobs(void *p, size_t len, unsigned threads, bool touch)
{
	struct populate_job jobs[64];
	unsigned i;

	if (threads > 64)
		threads = 64;
	if (len < ((size_t)1 << 24))
		threads = 1;
	for (i = 0; i < threads; i++) {
		jobs[i].p = (unsigned char *)p + len / threads * i;
		jobs[i].len = i + 1 < threads ? len / threads : len - len / threads * i;
		jobs[i].touch = touch;
	}
	run_parallel(populate_job, jobs, sizeof jobs[0], threads);
}

#define HUGE_PAGE ((uintptr_t)2 << 20)

void mem_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	const uintptr_t end = ((uintptr_t)p + len) & ~(HUGE_PAGE - 1);

	if (len >= 4 * HUGE_PAGE && end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

void populate_parallel(void *p, size_t len, unsigned threads)
{
	mem_huge(p, len);
	populate_jobs(p, len, threads, false);
}

void touch_parallel(void *p, size_t len, unsigned threads)
{
	populate_jobs(p, len, threads, true);
}

void touch_read(const void *p, size_t len)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start, end, a;

	if (!whole_pages(p, len, &start, &end))
		return;
	for (a = start; a < end; a += page)
		(void)*(volatile const unsigned char *)a;
}

int cache_path(char *path, size_t size, const char *name, bool make_dir)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[4096];

	if (getenv("CLSORT_NO_CACHE"))
		return -1;
	if (xdg && *xdg)
		snprintf(dir, sizeof dir, "%s", xdg);
	else if (home && *home)
		snprintf(dir, sizeof dir, "%s/.cache", home);
	else
		return -1;
	if (make_dir)
		mkdir(dir, 0755);
	if ((size_t)snprintf(path, size, "%s/clsort", dir) >= size)
		return -1;
	if (make_dir)
		mkdir(path, 0755);
	if ((size_t)snprintf(path, size, "%s/clsort/%s", dir, name) >= size)
		return -1;
	return 0;
}

int cache_replace(const char *path, const void *a, size_t alen, const void *b, size_t blen)
{
	char *tmp = tmp_template(path, ".");
	int fd = tmp ? mkstemp(tmp) : -1, rc = -1;

	if (fd >= 0) {
		if (write_full(fd, a, alen) || (blen && write_full(fd, b, blen))) {
			close(fd);
			unlink(tmp);
		} else if (close(fd) || rename(tmp, path)) {
			unlink(tmp);
		} else {
			rc = 0;
		}
	}
	free(tmp);
	return rc;
}

/* A number from the first line of path; false when there is none ("max"). */
static bool read_number(const char *path, uint64_t *v)
{
	FILE *fp = fopen(path, "r");
	unsigned long long n;
	bool ok;

	if (!fp)
		return false;
	ok = fscanf(fp, "%llu", &n) == 1;
	fclose(fp);
	if (ok)
		*v = n;
	return ok;
}

/* What one memory cgroup leaves, its limit less its use, from the files
 * named limit and use in its directory; false where it has no limit. */
static bool group_left(const char *dir, const char *limit, const char *use, uint64_t *left)
{
	char path[4300];
	uint64_t l, u;

	snprintf(path, sizeof path, "%s/%s", dir, limit);
	if (!read_number(path, &l))
		return false;
	snprintf(path, sizeof path, "%s/%s", dir, use);
	if (!read_number(path, &u))
		return false;
	*left = l > u ? l - u : 0;
	return true;
}

/* What the memory cgroups of this process leave it, the least over its
 * group and every group above it (v2: memory.max less memory.current; v1:
 * memory.limit_in_bytes less memory.usage_in_bytes); UINT64_MAX where
 * none is limited. */
static uint64_t cgroup_room(void)
{
	FILE *fp = fopen("/proc/self/cgroup", "r");
	char line[4096], dir[4200];
	uint64_t room = UINT64_MAX, left;

	if (!fp)
		return room;
	/* Lines of "id:controllers:path"; v2's have no controllers. */
	while (fgets(line, sizeof line, fp)) {
		char *ctl = strchr(line, ':'), *path, *up;
		bool v2;
		if (!ctl || !(path = strchr(ctl + 1, ':')))
			continue;
		*path++ = '\0';
		ctl++;
		path[strcspn(path, "\n")] = '\0';
		v2 = *ctl == '\0';
		if (!v2 && !strstr(ctl, "memory"))
			continue;
		for (;;) {
			snprintf(dir, sizeof dir, "/sys/fs/cgroup%s%s", v2 ? "" : "/memory",
				 strcmp(path, "/") ? path : "");
			if (v2 ? group_left(dir, "memory.max", "memory.current", &left)
			       : group_left(dir, "memory.limit_in_bytes", "memory.usage_in_bytes", &left))
				room = left < room ? left : room;
			if (!(up = strrchr(path, '/')) || up == path)
				break;
			*up = '\0';
		}
	}
	fclose(fp);
	return room;
}

uint64_t mem_available(void)
{
	const char *given = getenv("CLSORT_MEMORY_AVAILABLE");
	FILE *fp;
	char line[256];
	unsigned long long kb = 0;
	uint64_t bytes = 0, room;

	if (given && *given)
		return strtoull(given, NULL, 10);
	if ((fp = fopen("/proc/meminfo", "r"))) {
		while (fgets(line, sizeof line, fp))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
				break;
		fclose(fp);
		bytes = (uint64_t)kb * 1024;
	}
	if (bytes == 0)
		bytes = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	room = cgroup_room();
	return room < bytes ? room : bytes;
}
