#include "config.h"
#include "threshold.h"

#include <fcntl.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "util.h"

static const char entry_name[] = "host-threshold";
static const char entry_head[] = "clsort host threshold 2\n";

bool thr_load(struct thr_entry *e)
{
	char path[4096], text[1024];
	unsigned long long n;
	ssize_t len;
	int fd, end = 0;

	if (cache_path(path, sizeof path, entry_name, false))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read_full(fd, text, sizeof text - 1);
	close(fd);
	if (len <= 0)
		return false;
	text[len] = '\0';
	/* The head; the threshold and the measurements it comes from; the
	 * device's name on the rest of the line. */
	if (strncmp(text, entry_head, sizeof entry_head - 1) ||
	    sscanf(text + sizeof entry_head - 1, "%llu %lg %lg %lg %n", &n, &e->start,
		   &e->per_record, &e->host_rate, &end) != 4 || end == 0 ||
	    n == 0 || n > THR_MAX || text[len - 1] != '\n' || !(e->start >= 0 && e->start < 1e3) ||
	    !(e->per_record >= 0 && e->per_record < 1) || !(e->host_rate > 0 && e->host_rate < 1)) {
		msg_info(2, "no usable host threshold in %s", path);
		return false;
	}
	text[len - 1] = '\0';
	e->records = n;
	snprintf(e->dev, sizeof e->dev, "%s", text + sizeof entry_head - 1 + end);
	return true;
}

void thr_store(struct thr_entry *e)
{
	char path[4096], text[1024];
	int len;

	e->records = thr_solve(e->start, e->per_record, e->host_rate);
	if (cache_path(path, sizeof path, entry_name, true))
		return;
	len = snprintf(text, sizeof text, "%s%llu %.6g %.6g %.6g %s\n", entry_head,
		       (unsigned long long)e->records, e->start, e->per_record, e->host_rate, e->dev);
	if (len > 0 && (size_t)len < sizeof text)
		cache_replace(path, text, (size_t)len, NULL, 0);
}

double thr_host_rate(enum word_kind kind, unsigned threads)
{
	const size_t n = (size_t)1 << 16, ws = word_size(kind);
	uint64_t x = 0x9e3779b97f4a7c15ull, *w;
	size_t i;
	double t0, t;
	int rc;

	w = malloc(n * ws);
	if (!w)
		return 0;
	for (i = 0; i < n * ws / sizeof *w; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	t0 = now_sec();
	rc = host_sort(w, n, kind, threads);
	t = now_sec() - t0;
	free(w);
	return rc ? 0 : thr_rate(n, t);
}

double thr_rate(size_t n, double seconds)
{
	return seconds / ((double)n * log2((double)n));
}

/* The host's time over the device's, less one: up to 0 the host wins. */
static double excess(double start, double per_record, double host_rate, uint64_t n)
{
	const double x = (double)n;
	return host_rate * x * log2(x) - start - per_record * x;
}

uint64_t thr_solve(double start, double per_record, double host_rate)
{
	uint64_t lo = 1, hi = THR_MAX;

	if (!(host_rate > 0) || !(start >= 0) || !(per_record >= 0))
		return THR_DEFAULT;
	/* excess() is convex and negative at 1: below 0 up to one crossing. */
	if (excess(start, per_record, host_rate, hi) <= 0)
		return hi;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (excess(start, per_record, host_rate, mid) <= 0)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
