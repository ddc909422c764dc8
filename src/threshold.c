#include "config.h"
#include "threshold.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char entry_name[] = "rates";
/* Version 2: the rates leave out the ordering of ties and -u (runs.c).
 * Version 3: whether the start was measured only beside a stream's read.
 * Version 4: no rate from a sort that shared the CPUs with other work
 * (runs.c); those of version 3 may hold such a rate. */
static const char entry_head[] = "clsort rates 4\n";
/* The file holds a line per slot, of at most this many bytes. */
#define LINE_MAX_BYTES 768
#define SLOTS_MAX 16

void thr_slot(char *slot, size_t size, enum cls_format fmt, bool indexed, enum word_kind kind)
{
	snprintf(slot, size, "%s%zu", fmt == CLS_FMT_KV ? "kv" : indexed ? "records" : "keys",
		 word_size(kind) * 8);
}

/* The lines after its head of the cache file name, which starts with
 * head, or 0 bytes when there is none. */
static size_t read_entry(const char *name, const char *head, char *text, size_t size, char *path,
			 size_t path_size, bool make_dir)
{
	const size_t hl = strlen(head);
	ssize_t len;
	int fd;

	text[0] = '\0';
	if (cache_path(path, path_size, name, make_dir))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read_full(fd, text, size - 1);
	close(fd);
	if (len <= 0 || strncmp(text, head, hl)) {
		text[0] = '\0';
		return 0;
	}
	text[len] = '\0';
	memmove(text, text + hl, (size_t)len - hl + 1);
	return strlen(text);
}

static bool rate_ok(double v, double most)
{
	return v >= 0 && v < most;
}

/* Parse a line "SLOT HOST HOST_AT START AHEAD DEVICE DEVICE_AT DEV..." of
 * slot, AHEAD 1 where START was measured only beside a stream's read, else
 * 0. */
static bool parse_line(const char *line, const char *slot, struct thr_rates *r)
{
	const size_t len = strcspn(line, "\n");
	char name[32];
	unsigned ahead = 2;
	int end = 0;

	if (sscanf(line, "%31s %lg %lg %lg %u %lg %lg %n", name, &r->host, &r->host_at, &r->start,
		   &ahead, &r->device, &r->device_at, &end) != 7 || end == 0 || strcmp(name, slot))
		return false;
	r->start_ahead = ahead == 1;
	/* No device named: the space before %n took the line end, and what
	 * follows is the next line's. */
	if ((size_t)end > len)
		end = (int)len;
	snprintf(r->dev, sizeof r->dev, "%.*s", (int)(len - (size_t)end), line + end);
	return rate_ok(r->host, 1) && rate_ok(r->host_at, 1e15) && rate_ok(r->start, 1e3) &&
	       ahead <= 1 && rate_ok(r->device, 1) && rate_ok(r->device_at, 1e15);
}

void thr_load(const char *slot, struct thr_rates *r)
{
	char text[SLOTS_MAX * LINE_MAX_BYTES], path[4096];
	const char *line;

	memset(r, 0, sizeof *r);
	if (!read_entry(entry_name, entry_head, text, sizeof text, path, sizeof path, false))
		return;
	for (line = text; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
		struct thr_rates got;
		memset(&got, 0, sizeof got);
		if (!strncmp(line, slot, strlen(slot)) && line[strlen(slot)] == ' ') {
			if (line[strcspn(line, "\n")] == '\n' && parse_line(line, slot, &got))
				*r = got;
			else
				msg_info(2, "no usable %s rates in %s", slot, path);
			return;
		}
	}
}

void thr_store(const char *slot, const struct thr_rates *r)
{
	char text[SLOTS_MAX * LINE_MAX_BYTES], out[(SLOTS_MAX + 1) * LINE_MAX_BYTES], path[4096];
	const char *line;
	size_t len = 0, n = 0;
	int w;

	read_entry(entry_name, entry_head, text, sizeof text, path, sizeof path, true);
	if (!path[0])
		return;
	w = snprintf(out, sizeof out, "%s%s %.6g %.6g %.6g %d %.6g %.6g %s\n", entry_head, slot,
		     r->host, r->host_at, r->start, r->start_ahead, r->device, r->device_at, r->dev);
	if (w < 0 || (size_t)w >= LINE_MAX_BYTES)
		return;
	len = (size_t)w;
	/* The other slots' whole lines stay as they were. */
	for (line = text; *line && n < SLOTS_MAX; line += strcspn(line, "\n") + 1, n++) {
		const size_t l = strcspn(line, "\n");
		if (line[l] != '\n')
			break;
		if ((!strncmp(line, slot, strlen(slot)) && line[strlen(slot)] == ' ') ||
		    l + 1 > LINE_MAX_BYTES)
			continue;
		memcpy(out + len, line, l + 1);
		len += l + 1;
	}
	cache_replace(path, out, len, NULL, 0);
}

static const char auto_name[] = "autodev";
/* Then a line of the drivers' stamp, and one of the type and the name. */
static const char auto_head[] = "clsort auto device 2\n";

bool thr_load_auto(const char *stamp, char *name, size_t size, bool *cpu)
{
	char text[2 * LINE_MAX_BYTES + THR_STAMP_BYTES], path[4096], type[8];
	const size_t sl = strlen(stamp);
	size_t len = read_entry(auto_name, auto_head, text, sizeof text, path, sizeof path, false);
	const char *line = text;
	int end = 0;

	if (len == 0 || text[len - 1] != '\n' || strncmp(line, stamp, sl) || line[sl] != '\n')
		return false;
	text[len - 1] = '\0';
	line += sl + 1;
	if (sscanf(line, "%7s %n", type, &end) != 1 || end == 0 ||
	    (strcmp(type, "cpu") && strcmp(type, "other")) || strchr(line, '\n'))
		return false;
	*cpu = !strcmp(type, "cpu");
	snprintf(name, size, "%s", line + end);
	return true;
}

void thr_store_auto(const char *stamp, const char *name, bool cpu)
{
	char path[4096], text[2 * LINE_MAX_BYTES + THR_STAMP_BYTES];
	int w;

	if (cache_path(path, sizeof path, auto_name, name != NULL))
		return;
	if (!name) {
		unlink(path);
		return;
	}
	w = snprintf(text, sizeof text, "%s%s\n%s %s\n", auto_head, stamp, cpu ? "cpu" : "other",
		     name);
	if (w > 0 && (size_t)w < sizeof text && !strchr(stamp, '\n'))
		cache_replace(path, text, (size_t)w, NULL, 0);
}

void thr_measure(double *rate, double *at, uint64_t n, double seconds)
{
	const double per = seconds / (double)n, x = (double)n;

	if (n < THR_MEASURE_MIN || !(per > 0))
		return;
	if (*rate <= 0 || x > 2 * *at) {
		*rate = per;
		*at = x;
	} else if (2 * x >= *at) {
		*rate = (*rate + per) / 2;
		if (x > *at)
			*at = x;
	}
}

/* thr_host_wins, where the device's start leaves start seconds to wait
 * for (r->start, where none of it is hidden); retry: a start measured only
 * beside a stream's read may be tried again. */
static bool host_wins(const struct thr_rates *r, uint64_t n, double start, bool retry)
{
	const double x = (double)n;

	/* A CPU device (PoCL) not measured quicker per record than the host
	 * is tried only on inputs small enough for that to cost little. */
	if (r->cpu && r->host > 0 && !(r->device > 0 && r->device < r->host) &&
	    n > THR_TRY_CPU_DEVICE)
		return true;
	/* A device measured slower per record than the host loses at the
	 * size it was measured on, whatever its start.  Its rate carries the
	 * fixed costs of the sorts it came from (an H200 measured 25 ns a key
	 * on 10^6 keys, 0.4 on 2^28, where the host took 2): it is measured
	 * again on a sort THR_EXPLORE times larger where the host would take
	 * longer than the device's start and the whole of the work it was
	 * measured on, the least the device could take.  Other devices whose
	 * work grows with the records meet that only on inputs many times
	 * larger than they were measured on. */
	if (r->host > 0 && r->device >= r->host)
		return !(x >= THR_EXPLORE * r->device_at &&
			 r->host * x > start + r->device * r->device_at);
	if (r->host > 0 && r->device > 0 && r->start > 0) {
		const double host = r->host * x;
		/* A rate from sorts much smaller than this one carries their
		 * fixed costs: the side it makes lose is measured on this size,
		 * the host where that costs little, the device where its start
		 * alone would not lose. */
		if (host > start + r->device * x)
			return x >= THR_EXPLORE * r->host_at && n <= THR_TRY_HOST;
		if (retry && r->start_ahead && host > start / 2 + r->device * x)
			return false;
		return !(x >= THR_EXPLORE * r->device_at && host > start);
	}
	/* A side unmeasured, or the device's start: try it, where the input
	 * is big enough to measure it and, for the host, small enough to
	 * cost little, or the device measured too slow (or known to be a
	 * CPU) for the host to lose by much. */
	if (r->host > 0)
		return n < THR_MEASURE_MIN;
	return n <= THR_TRY_HOST || r->device >= THR_DEVICE_SLOW || r->cpu;
}

bool thr_host_wins(const struct thr_rates *r, uint64_t n)
{
	return host_wins(r, n, r->start, true);
}

bool thr_stream_host_wins(const struct thr_rates *r, uint64_t n, double elapsed)
{
	double start = r->start;

	/* A device never measured here may not open at all. */
	if (!(r->device > 0 && r->start > 0))
		return thr_host_wins(r, n);
	if (elapsed > 0)
		start = r->start > elapsed ? r->start - elapsed : 0;
	return host_wins(r, n > UINT64_MAX / 2 ? UINT64_MAX : 2 * n, start, false);
}
