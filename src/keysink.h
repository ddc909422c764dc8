/* Where a line's keys are composed into one byte string (kvkey.h has the
 * layout): the first cap bytes into p, n counting them all, so that a
 * caller learns the length it needs. */
#ifndef CLSORT_KEYSINK_H
#define CLSORT_KEYSINK_H

#include <stdbool.h>
#include <stddef.h>

struct key_sink {
	unsigned char *p;
	size_t cap, n;
};

static inline void sink_put(struct key_sink *s, unsigned char c)
{
	if (s->n < s->cap)
		s->p[s->n] = c;
	s->n++;
}

/* A byte of a composed key: xored with inv, and where escape (a key that
 * others follow) a 0 followed by a 1, so that the key's end (two 0s)
 * sorts before any byte of a longer key. */
static inline void sink_put_esc(struct key_sink *s, unsigned char c, unsigned char inv,
				bool escape)
{
	sink_put(s, c ^ inv);
	if (escape && c == 0)
		sink_put(s, 1 ^ inv);
}

#endif
