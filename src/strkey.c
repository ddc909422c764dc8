#include "config.h"
#include "strkey.h"

#include <stdatomic.h>
#include <string.h>

#include "util.h"

void str_word(const unsigned char *key, size_t len, uint64_t mask, uint32_t index,
	      struct word128 *w)
{
	unsigned char b[STR_PREFIX] = { 0 };
	uint64_t hi = 0, ext = 0;
	size_t i;

	memcpy(b, key, len < STR_PREFIX ? len : STR_PREFIX);
	for (i = 0; i < 8; i++)
		hi = hi << 8 | b[i];
	for (; i < STR_PREFIX; i++)
		ext = ext << 8 | b[i];
	ext = ext << 8 | (len <= STR_PREFIX ? len : STR_LONG);
	w->hi = hi ^ mask;
	w->lo = (ext ^ (uint32_t)mask) << 32 | index;
}

uint64_t str_prefix(const unsigned char *key, size_t len)
{
	uint64_t v = 0;
	size_t i;
	for (i = 0; i < 8; i++)
		v = v << 8 | (i < len ? key[i] : 0);
	return v;
}

int str_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	const int c = memcmp(a, b, alen < blen ? alen : blen);
	if (c)
		return c;
	return (alen > blen) - (alen < blen);
}

bool str_tied(const struct word128 *a, const struct word128 *b, uint64_t mask)
{
	return a->hi == b->hi && a->lo >> 32 == b->lo >> 32 &&
	       ((a->lo >> 32 ^ (uint32_t)mask) & 0xff) == STR_LONG;
}

struct whole_job {
	const struct word128 *w;
	size_t lo, hi;
	uint32_t mask;
	atomic_bool *long_seen;
};

/* Below this many words str_words_whole looks on one thread; a thread
 * looks at the others' finding after each stretch of it. */
#define WHOLE_STRETCH ((size_t)1 << 16)

static void whole_job(void *arg)
{
	const struct whole_job *j = arg;
	size_t i, end;

	for (i = j->lo; i < j->hi; i = end) {
		end = j->hi - i < WHOLE_STRETCH ? j->hi : i + WHOLE_STRETCH;
		if (atomic_load_explicit(j->long_seen, memory_order_relaxed))
			return;
		for (; i < end; i++)
			if (((j->w[i].lo >> 32 ^ j->mask) & 0xff) == STR_LONG) {
				atomic_store_explicit(j->long_seen, true, memory_order_relaxed);
				return;
			}
	}
}

bool str_words_whole(const struct word128 *w, size_t n, uint64_t mask, unsigned threads)
{
	struct whole_job jobs[64];
	atomic_bool long_seen = false;
	unsigned t, k = n < WHOLE_STRETCH ? 1 : threads ? threads : 1;

	if (k > sizeof jobs / sizeof jobs[0])
		k = sizeof jobs / sizeof jobs[0];
	for (t = 0; t < k; t++)
		jobs[t] = (struct whole_job){ w, n / k * t, t + 1 < k ? n / k * (t + 1) : n,
					      (uint32_t)mask, &long_seen };
	run_parallel(whole_job, jobs, sizeof jobs[0], k);
	return !atomic_load(&long_seen);
}
