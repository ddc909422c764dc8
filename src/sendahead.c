#include "config.h"
#include "sendahead.h"

#include <pthread.h>

#include "arriving.h"
#include "util.h"

/* Once a process, as the device opened ahead. */
static struct {
	pthread_mutex_t lock;
	struct arriving in;	/* the stream's bytes */
	const struct enc_format *f;
	const unsigned char *data;
	bool begun, ended, complete;
} sa = { .lock = PTHREAD_MUTEX_INITIALIZER };

bool sa_applies(const struct enc_format *f)
{
	return enc_words_in_place(f);
}

void sa_begin(const struct enc_format *f, const unsigned char *data, uint64_t len)
{
	pthread_mutex_lock(&sa.lock);
	if (!sa.begun && !sa.ended) {
		arriving_init(&sa.in, len);
		sa.f = f;
		sa.data = data;
		sa.begun = true;
	}
	pthread_mutex_unlock(&sa.lock);
}

void sa_grow(uint64_t bytes)
{
	if (sa.begun)
		arriving_tell(&sa.in, &sa.lock, bytes);
}

void sa_end(bool complete)
{
	pthread_mutex_lock(&sa.lock);
	if (!sa.ended) {
		sa.ended = true;
		sa.complete = complete && sa.begun;
		if (sa.begun)
			arriving_wake(&sa.in);
	}
	pthread_mutex_unlock(&sa.lock);
}

/* Send records [sent, sent + chunk) of the stream, bytes of which have
 * come, to *buf on d through staging buffer slot (once ev, its last
 * upload, is done), *buf grown first where it has no room for them (*cap
 * words, at most most). */
static cl_int send_chunk(struct dev_ctx *d, cl_mem *buf, size_t *cap, size_t sent, size_t chunk,
			 uint64_t bytes, size_t most, size_t slot, cl_event *ev)
{
	const struct enc_format *f = sa.f;
	const size_t ws = word_size(f->kind);
	cl_int err = CL_SUCCESS;

	/* Room for twice what has come: a stream that came this far is
	 * taken to come as far again. */
	if (sent + chunk > *cap) {
		const size_t come = (size_t)(bytes / f->rec_size);
		size_t want = come < most / 2 ? 2 * come : most;
		want -= want % chunk;
		if (want < sent + chunk)
			return CL_MEM_OBJECT_ALLOCATION_FAILURE;
		if (!(*buf = dev_regrow(d, *buf, sent * ws, want * ws, &err)))
			return err;
		*cap = want;
	}
	if (*ev) {
		err = clWaitForEvents(1, ev);
		clReleaseEvent(*ev);
		*ev = NULL;
	}
	if (err != CL_SUCCESS)
		return err;
	enc_words_of(f, sa.data + sent * f->rec_size, chunk, d->stage.host[slot]);
	err = clEnqueueWriteBuffer(d->queue, *buf, CL_FALSE, sent * ws, chunk * ws,
				   d->stage.host[slot], 0, NULL, ev);
	clFlush(d->queue);
	return err;
}

void sa_send(struct dev_ctx *d, size_t most)
{
	cl_event ev[DEV_STAGE] = { NULL };
	cl_mem buf = NULL;
	cl_int err = CL_SUCCESS;
	size_t chunk, sent = 0, cap = 0, slot = 0, i;
	bool complete = false;
	const double t0 = now_sec();

	pthread_mutex_lock(&sa.lock);
	if (!sa.begun || !d->stage.bytes) {
		pthread_mutex_unlock(&sa.lock);
		return;
	}
	chunk = d->stage.bytes / word_size(sa.f->kind);
	for (;;) {
		const uint64_t bytes = arriving_seen(&sa.in);
		if (sa.ended) {
			complete = sa.complete;
			break;
		}
		if (bytes / sa.f->rec_size < sent + chunk) {
			arriving_wait(&sa.in, &sa.lock, bytes);
			continue;
		}
		pthread_mutex_unlock(&sa.lock);
		err = send_chunk(d, &buf, &cap, sent, chunk, bytes, most, slot, &ev[slot]);
		pthread_mutex_lock(&sa.lock);
		if (err != CL_SUCCESS)
			break;
		sent += chunk;
		slot = (slot + 1) % DEV_STAGE;
	}
	pthread_mutex_unlock(&sa.lock);
	if (buf && clFinish(d->queue) != CL_SUCCESS)
		err = CL_OUT_OF_RESOURCES;
	for (i = 0; i < DEV_STAGE; i++)
		if (ev[i])
			clReleaseEvent(ev[i]);
	if (!complete || err != CL_SUCCESS || !sent) {
		if (buf)
			clReleaseMemObject(buf);
		return;
	}
	d->sent.buf = buf;
	d->sent.cap = cap;
	d->sent.words = sent;
	d->sent.data = sa.data;
	d->sent.seconds = now_sec() - t0;
}
