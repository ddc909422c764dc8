/* Unit tests of the host threshold's arithmetic: where the host's
 * n log2 n sort stops beating the device's start and per-record cost. */
#include "config.h"

#include <math.h>

#include "../src/threshold.h"
#include "tap.h"

static double excess(double start, double per, double rate, double n)
{
	return rate * n * log2(n) - start - per * n;
}

/* n is the last count at which the host is no slower, n + 1 the first at
 * which it is. */
static int crossover(double start, double per, double rate, uint64_t n)
{
	return n >= 1 && n < THR_MAX && excess(start, per, rate, (double)n) <= 0 &&
	       excess(start, per, rate, (double)n + 1) > 0;
}

int main(void)
{
	/* A GPU: 0.3 s to start, 0.4 ns per record; a host at 5 ns. */
	uint64_t n = thr_solve(0.3, 0.4e-9, 5e-9);
	ok(crossover(0.3, 0.4e-9, 5e-9, n), "GPU-like: crossover at %llu", (unsigned long long)n);
	ok(n > 2000000 && n < 4000000, "GPU-like: between 2M and 4M records");

	/* A CPU device: quick to start, dearer per record. */
	n = thr_solve(0.03, 40e-9, 5e-9);
	ok(crossover(0.03, 40e-9, 5e-9, n), "CPU-like: crossover at %llu", (unsigned long long)n);

	ok(thr_solve(0.3, 1e-9, 6e-9) > thr_solve(0.1, 1e-9, 6e-9),
	   "a slower start raises the threshold");
	ok(thr_solve(0.3, 1e-9, 6e-9) < thr_solve(0.3, 1e-9, 3e-9),
	   "a quicker host raises the threshold");
	ok(thr_solve(0, 0, 1e-9) == 1, "a device that costs nothing: the host keeps one record");
	ok(thr_solve(100, 0, 1e-12) == THR_MAX, "a host always quicker: capped at THR_MAX");
	ok(thr_solve(0.3, 1e-9, 0) == THR_DEFAULT, "no host rate: the default");
	ok(thr_solve(0.3, 1e-9, NAN) == THR_DEFAULT, "a NaN host rate: the default");
	ok(thr_solve(-1, 1e-9, 1e-9) == THR_DEFAULT, "a negative start: the default");
	return done_testing();
}
