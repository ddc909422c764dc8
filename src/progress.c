#include "config.h"
#include "progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* Redraws per second on a terminal. */
#define TICK_NS 500000000L

static const char *const names[] = { "", "read", "sort", "merge", "write" };

static struct {
	bool on, tty;
	_Atomic int phase;
	_Atomic uint64_t done;
	_Atomic uint64_t written;	/* to the output, whatever the phase */
	uint64_t total;
	double t_phase;		/* when the phase began */
	bool drawn;		/* a line is on the terminal */
	bool stop;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;	/* phase changes and the thread's wait */
	pthread_cond_t wake;
} pg = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

/* "1.5 GiB" and the like. */
static void human(char *buf, size_t size, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* The state of the current phase as one line, without its end. */
static void describe(char *line, size_t size, bool final)
{
	const int phase = atomic_load(&pg.phase);
	uint64_t done = atomic_load(&pg.done);
	const double t = now_sec() - pg.t_phase, rate = t > 0 ? (double)done / t : 0;
	char d[32], tot[32], r[32];
	const bool known = pg.total && phase != PROG_READ;
	int n;

	if (known && done > pg.total)
		done = pg.total;
	human(d, sizeof d, (double)done);
	human(tot, sizeof tot, (double)pg.total);
	human(r, sizeof r, rate);
	if (final) {
		snprintf(line, size, "clsort: %s: %s in %.1f s, %s/s", names[phase], d, t, r);
		return;
	}
	n = known ? snprintf(line, size, "clsort: %s: %s of %s (%.0f%%), %s/s", names[phase], d, tot,
			     100.0 * (double)done / (double)pg.total, r) :
		    snprintf(line, size, "clsort: %s: %s, %s/s", names[phase], d, r);
	if (known && rate > 0 && done < pg.total && n > 0 && (size_t)n < size)
		snprintf(line + n, size - (size_t)n, ", %.0f s left",
			 (double)(pg.total - done) / rate + 0.5);
}

/* Erase the terminal line (before a message); under the message lock. */
static void erase(void)
{
	if (pg.drawn && write(STDERR_FILENO, "\r\033[K", 4) < 0)
		return;
	pg.drawn = false;
}

static void draw(void)
{
	char line[256];
	size_t len;

	describe(line, sizeof line - 8, false);
	len = strlen(line);
	memmove(line + 1, line, len);
	line[0] = '\r';
	memcpy(line + len + 1, "\033[K", 3);
	msg_lock();
	if (write(STDERR_FILENO, line, len + 4) >= 0)
		pg.drawn = true;
	msg_unlock();
}

static void *ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pg.lock);
	while (!pg.stop) {
		const struct timespec at = deadline_in(TICK_NS);
		pthread_cond_timedwait(&pg.wake, &pg.lock, &at);
		if (!pg.stop && atomic_load(&pg.phase) != PROG_NONE)
			draw();
	}
	pthread_mutex_unlock(&pg.lock);
	return NULL;
}

void prog_start(bool on)
{
	if (!on)
		return;
	pg.on = true;
	pg.tty = isatty(STDERR_FILENO);
	if (pg.tty) {
		msg_erase = erase;
		pg.running = pthread_create(&pg.thread, NULL, ticker, NULL) == 0;
	}
}

void prog_total(uint64_t bytes)
{
	pg.total = bytes;
}

/* End the current phase (its line, off a terminal) and begin p; under
 * pg.lock. */
static void switch_to(enum prog_phase p)
{
	if (atomic_load(&pg.phase) != PROG_NONE && !pg.tty) {
		char line[256];
		describe(line, sizeof line, true);
		msg_info(0, "%s", line + strlen("clsort: "));
	}
	atomic_store(&pg.done, 0);
	pg.t_phase = now_sec();
	atomic_store(&pg.phase, p);
	/* On a terminal a phase shows at once, however short. */
	if (pg.tty && p != PROG_NONE)
		draw();
}

void prog_phase(enum prog_phase p)
{
	if (!pg.on || atomic_load(&pg.phase) == (int)p)
		return;
	pthread_mutex_lock(&pg.lock);
	if (atomic_load(&pg.phase) != (int)p)
		switch_to(p);
	pthread_mutex_unlock(&pg.lock);
}

void prog_add(enum prog_phase p, uint64_t bytes)
{
	int cur;
	if (!pg.on)
		return;
	cur = atomic_load(&pg.phase);
	if ((int)p > cur) {
		pthread_mutex_lock(&pg.lock);
		if ((int)p > atomic_load(&pg.phase))
			switch_to(p);
		pthread_mutex_unlock(&pg.lock);
		cur = (int)p;
	}
	if (cur == (int)p)
		atomic_fetch_add(&pg.done, bytes);
}

void prog_output(uint64_t bytes)
{
	int cur;
	if (!pg.on)
		return;
	atomic_fetch_add(&pg.written, bytes);
	cur = atomic_load(&pg.phase);
	if (cur == PROG_MERGE || cur == PROG_WRITE) {
		atomic_fetch_add(&pg.done, bytes);
		return;
	}
	/* Key ranges write each as it is sorted: the write is what remains
	 * once all are sorted, counted from what is written by then. */
	if (cur == PROG_SORT && atomic_load(&pg.done) >= pg.total) {
		pthread_mutex_lock(&pg.lock);
		if (atomic_load(&pg.phase) == PROG_SORT) {
			switch_to(PROG_WRITE);
			atomic_store(&pg.done, atomic_load(&pg.written));
		} else {
			atomic_fetch_add(&pg.done, bytes);
		}
		pthread_mutex_unlock(&pg.lock);
	}
}

void prog_end(void)
{
	if (!pg.on)
		return;
	pthread_mutex_lock(&pg.lock);
	pg.stop = true;
	pthread_cond_signal(&pg.wake);
	pthread_mutex_unlock(&pg.lock);
	if (pg.running)
		pthread_join(pg.thread, NULL);
	pg.running = false;
	pthread_mutex_lock(&pg.lock);
	if (atomic_load(&pg.phase) != PROG_NONE)
		switch_to(PROG_NONE);
	pthread_mutex_unlock(&pg.lock);
	msg_lock();
	erase();
	msg_unlock();
	msg_erase = NULL;
	pg.on = false;
}
