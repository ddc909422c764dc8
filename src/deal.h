/* One pass over the input that deals every key range its sort words.
 *
 * The devices of a sort over key ranges (multidev.c) each stage their own
 * range, chunk by chunk, into buffers of their own.  Were each to read
 * the whole input for its range, the input would be read once per device.
 * Instead a pool of threads walks the input once, in pieces
 * (part_sieve_piece), and hands each range's words of a piece to the
 * chunk its device asks for (deal_words), which they fill in turn. */
#ifndef CLSORT_DEAL_H
#define CLSORT_DEAL_H

#include <stddef.h>

#include "sieve.h"

struct deal;

/* Start dealing the ranges of s (in small pieces) on threads threads.
 * 0, or CLS_E_FAIL after a message. */
int deal_open(struct deal **d, const struct part_sieve *s, unsigned threads);

/* Range r's words [first, first + count) into dst, once dealt: range r's
 * words are asked for in order, each call going on where the last one
 * ended.  0, or CLS_E_FAIL after a message. */
int deal_words(struct deal *d, size_t r, size_t first, size_t count, void *dst);

/* Range r takes no more words: the pass skips them.  A range that stops
 * before its last word must leave, lest the pass, and with it every other
 * range, wait for it. */
void deal_leave(struct deal *d, size_t r);

/* Leave every range, and wait for the pass to end. */
void deal_close(struct deal *d);

#endif
