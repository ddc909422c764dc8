/* Minimal TAP output for the C unit tests. */
#ifndef CLSORT_TAP_H
#define CLSORT_TAP_H
#include <stdio.h>
static int tap_n, tap_failed;
#define ok(cond, ...) do { \
	int ok_ = !!(cond); \
	printf("%sok %d - ", ok_ ? "" : "not ", ++tap_n); \
	printf(__VA_ARGS__); \
	printf("\n"); \
	if (!ok_) tap_failed++; \
} while (0)
#define done_testing() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)
#endif
