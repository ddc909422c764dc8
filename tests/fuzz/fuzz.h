/* A fuzz target: one input of size bytes, any content.  It must return 0
 * and neither crash nor trip a sanitizer, whatever data holds.  Built with
 * driver.c for make check, or with clang -fsanitize=fuzzer (contrib/fuzz.sh). */
#ifndef CLSORT_FUZZ_H
#define CLSORT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* How many inputs driver.c feeds the target when FUZZ_ITERATIONS does not
 * say: a few seconds' worth under the sanitizers. */
extern const unsigned long fuzz_iterations;

#endif
