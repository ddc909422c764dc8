/* Bytes of a stream as they arrive, told by the thread that reads them to
 * one that works behind it (keyahead.c, lineahead.c).  The reader tells
 * each new length without a lock, so that it never waits for the worker;
 * it takes the worker's lock only to wake it, and only where the worker
 * has said that it waits. */
#ifndef CLSORT_ARRIVING_H
#define CLSORT_ARRIVING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct arriving {
	_Atomic uint64_t avail;	/* bytes delivered */
	atomic_bool waiting;	/* the worker waits for more */
	pthread_cond_t cond;	/* bytes came, or the owner's state changed */
};

void arriving_init(struct arriving *w, uint64_t len);
void arriving_destroy(struct arriving *w);

/* The bytes delivered so far. */
uint64_t arriving_seen(struct arriving *w);

/* The reader: bytes are now delivered, the worker woken under lock (its
 * owner's) where it waits. */
void arriving_tell(struct arriving *w, pthread_mutex_t *lock, uint64_t bytes);

/* The worker, with lock held, having found seen bytes too few: wait until
 * more are told, or arriving_wake is called.  It may return early, so the
 * caller looks again. */
void arriving_wait(struct arriving *w, pthread_mutex_t *lock, uint64_t seen);

/* Wake the worker, with lock held: its owner's state changed (the stream
 * ended, or the worker is to stop). */
void arriving_wake(struct arriving *w);

#endif
