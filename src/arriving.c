#include "config.h"
#include "arriving.h"

void arriving_init(struct arriving *w, uint64_t len)
{
	atomic_init(&w->avail, len);
	atomic_init(&w->waiting, false);
	pthread_cond_init(&w->cond, NULL);
}

void arriving_destroy(struct arriving *w)
{
	pthread_cond_destroy(&w->cond);
}

uint64_t arriving_seen(struct arriving *w)
{
	return atomic_load(&w->avail);
}

void arriving_tell(struct arriving *w, pthread_mutex_t *lock, uint64_t bytes)
{
	atomic_store(&w->avail, bytes);
	if (atomic_load(&w->waiting)) {
		pthread_mutex_lock(lock);
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(lock);
	}
}

void arriving_wait(struct arriving *w, pthread_mutex_t *lock, uint64_t seen)
{
	/* The flag is raised before the length is looked at again: bytes
	 * told before the reader could see it are found here, the ones told
	 * after it come with a wake-up, which needs the lock held here. */
	atomic_store(&w->waiting, true);
	if (atomic_load(&w->avail) == seen)
		pthread_cond_wait(&w->cond, lock);
	atomic_store(&w->waiting, false);
}

void arriving_wake(struct arriving *w)
{
	pthread_cond_broadcast(&w->cond);
}
