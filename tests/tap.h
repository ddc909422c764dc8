/* Minimal TAP output for the C unit tests. */
#ifndef CLSORT_TAP_H
#define CLSORT_TAP_H
#include <stdint.h>
#include <stdio.h>
static int tap_n, tap_failed;
#define ok(cond, ...) do { \
	int ok_ = !!(cond); \
	printf("%sok %d - ", ok_ ? "" : "not ", ++tap_n); \
	printf(__VA_ARGS__); \
	printf("\n"); \
	if (!ok_) tap_failed++; \
} while (0)
/* A test that cannot run here, counted as passed with the reason. */
#define skip(...) do { \
	printf("ok %d # SKIP ", ++tap_n); \
	printf(__VA_ARGS__); \
	printf("\n"); \
} while (0)
/* xorshift64*, fixed seed: the same pseudo-random numbers on every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static inline uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}
#define done_testing() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)
#endif
