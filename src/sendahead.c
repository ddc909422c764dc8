#include "config.h"
#include "sendahead.h"

#include <pthread.h>
#include <string.h>

#include "arriving.h"
#include "output.h"
#include "util.h"

/* Threads that share the copy of a staging buffer's worth of text or
 * words (16 MiB): on one, an H200 machine's sender moved 4.3-5 GB/s while
 * 1 GiB of kv lines arrived, and opened 0.3 s into a 0.55 s stream it
 * left 470-990 MB of the text to go up after the last byte. */
#define SEND_THREADS 4

/* Once a process, as the device opened ahead. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t idle;	/* copying went false */
	struct arriving in;	/* the stream's bytes */
	const struct enc_format *f;
	const unsigned char *data;
	const unsigned char *words;	/* kv lines' words parsed ahead */
	size_t lines;		/* of them, those parsed in order */
	bool begun, ended, complete;
	bool copying;		/* the sender reads data or words */
} sa = { .lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };

bool sa_applies(const struct enc_format *f)
{
	return enc_words_in_place(f) || f->fmt == CLS_FMT_KV;
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

/* With the lock held: once nothing reads data or words. */
static void wait_idle(void)
{
	while (sa.copying)
		pthread_cond_wait(&sa.idle, &sa.lock);
}

void sa_parsed(const void *words, size_t lines)
{
	pthread_mutex_lock(&sa.lock);
	sa.words = words;
	sa.lines = words ? lines : 0;
	if (sa.begun)
		arriving_wake(&sa.in);
	if (!words)
		wait_idle();
	pthread_mutex_unlock(&sa.lock);
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
	wait_idle();
	pthread_mutex_unlock(&sa.lock);
}

/* What a staging buffer's worth sent takes from: the stream's records
 * encoded (KEYS), its bytes as they are (TEXT), or its lines' words
 * (WORDS). */
enum piece { KEYS, TEXT, WORDS };

/* A device buffer of cap bytes that the first sent bytes went into. */
struct target {
	cl_mem buf;
	uint64_t cap, sent;
};

/* t with room for chunk bytes more: where it has not, grown to twice come
 * (bytes come so far: a stream that came this far is taken to come as far
 * again), in whole chunks, at most most. */
static cl_int room(struct dev_ctx *d, struct target *t, size_t chunk, uint64_t come, uint64_t most)
{
	uint64_t want = come < most / 2 ? 2 * come : most;
	cl_int err = CL_SUCCESS;

	if (t->sent + chunk <= t->cap)
		return CL_SUCCESS;
	want -= want % chunk;
	if (want < t->sent + chunk)
		return CL_MEM_OBJECT_ALLOCATION_FAILURE;
	if (!(t->buf = dev_regrow(d, t->buf, (size_t)t->sent, (size_t)want, &err)))
		return err;
	t->cap = want;
	return CL_SUCCESS;
}

/* Fill staging buffer host with the next chunk bytes of what, at from,
 * from t->sent on, with copying raised (the lock not held: from stays
 * while it is). */
static void copy_piece(const struct enc_format *f, enum piece what, const unsigned char *from,
		       const struct target *t, size_t chunk, void *host)
{
	const size_t ws = word_size(f->kind);

	if (what == KEYS)
		enc_words_of(f, from + t->sent / ws * f->rec_size, chunk / ws, host);
	else
		out_copy(host, from + t->sent, chunk,
			 f->threads < SEND_THREADS ? f->threads : SEND_THREADS);
}

/* Send what's next chunk bytes to t through staging buffer slot, once
 * *ev (its last upload) is done, t grown first where it has no room (come:
 * bytes of what come so far).  With the lock held; it is let go meanwhile.
 * CL_SUCCESS with t->sent as it was where the stream ended or the words
 * went meanwhile. */
static cl_int send_piece(struct dev_ctx *d, enum piece what, struct target *t, uint64_t come,
			 uint64_t most, size_t slot, cl_event *ev)
{
	const size_t chunk = d->stage.bytes;
	const unsigned char *from;
	cl_int err;

	pthread_mutex_unlock(&sa.lock);
	err = room(d, t, chunk, come, most);
	if (err == CL_SUCCESS && *ev) {
		err = clWaitForEvents(1, ev);
		clReleaseEvent(*ev);
		*ev = NULL;
	}
	pthread_mutex_lock(&sa.lock);
	if (err != CL_SUCCESS || sa.ended || (what == WORDS && !sa.words))
		return err;
	from = what == WORDS ? sa.words : sa.data;
	sa.copying = true;
	pthread_mutex_unlock(&sa.lock);
	copy_piece(sa.f, what, from, t, chunk, d->stage.host[slot]);
	err = clEnqueueWriteBuffer(d->queue, t->buf, CL_FALSE, (size_t)t->sent, chunk,
				   d->stage.host[slot], 0, NULL, ev);
	clFlush(d->queue);
	pthread_mutex_lock(&sa.lock);
	sa.copying = false;
	pthread_cond_broadcast(&sa.idle);
	if (err == CL_SUCCESS)
		t->sent += chunk;
	return err;
}

/* With the lock held, where the stream has delivered bytes: what to send
 * next, and how many bytes of it have come (*come); false where nothing
 * has a chunk's worth yet.  Words first: after the last byte, the words
 * that are left are staged and sent before the sort starts, the text that
 * is left while it sorts. */
static bool next_piece(const struct target *words, const struct target *text, bool lines,
		       size_t chunk, uint64_t bytes, enum piece *what, uint64_t *come)
{
	const size_t ws = word_size(sa.f->kind);

	*come = lines ? (sa.words ? (uint64_t)sa.lines * ws : 0) : bytes / sa.f->rec_size * ws;
	*what = lines ? WORDS : KEYS;
	if (*come >= words->sent + chunk)
		return true;
	*what = TEXT;
	*come = bytes;
	return lines && bytes >= text->sent + chunk;
}

/* Release t's buffer, where it has one. */
static void drop(struct target *t)
{
	if (t->buf)
		clReleaseMemObject(t->buf);
	memset(t, 0, sizeof *t);
}

void sa_send(struct dev_ctx *d, uint64_t most, bool text)
{
	cl_event ev[DEV_STAGE] = { NULL };
	struct target words = { NULL, 0, 0 }, txt = { NULL, 0, 0 };
	cl_int err = CL_SUCCESS;
	size_t slot = 0, i, ws;
	bool complete = false, lines;
	const unsigned char *words_at;
	const double t0 = now_sec();

	pthread_mutex_lock(&sa.lock);
	lines = sa.begun && sa.f->fmt == CLS_FMT_KV;
	/* kv lines' words and text only for the device that puts the lines
	 * in order: another sort sends its own. */
	if (!sa.begun || !d->stage.bytes || (lines && !text)) {
		pthread_mutex_unlock(&sa.lock);
		return;
	}
	ws = word_size(sa.f->kind);
	for (;;) {
		const uint64_t bytes = arriving_seen(&sa.in);
		enum piece what;
		uint64_t come;
		struct target *t;

		if (sa.ended) {
			complete = sa.complete;
			break;
		}
		if (!next_piece(&words, &txt, lines, d->stage.bytes, bytes, &what, &come)) {
			arriving_wait(&sa.in, &sa.lock, bytes);
			continue;
		}
		t = what == TEXT ? &txt : &words;
		/* kv lines' words take half the room of their text at most:
		 * their gather holds them twice, the text and its lines in
		 * order. */
		err = send_piece(d, what, t, come, what == WORDS ? most / 2 : most, slot, &ev[slot]);
		if (err != CL_SUCCESS)
			break;
		slot = (slot + 1) % DEV_STAGE;
	}
	/* Lines' words that went meanwhile are not the sort's. */
	words_at = lines ? sa.words : sa.data;
	if (!words_at)
		words.sent = 0;
	pthread_mutex_unlock(&sa.lock);
	if ((words.buf || txt.buf) && clFinish(d->queue) != CL_SUCCESS)
		err = CL_OUT_OF_RESOURCES;
	for (i = 0; i < DEV_STAGE; i++)
		if (ev[i])
			clReleaseEvent(ev[i]);
	if (!complete || err != CL_SUCCESS) {
		drop(&words);
		drop(&txt);
		return;
	}
	if (words.sent) {
		d->sent.buf = words.buf;
		d->sent.cap = (size_t)(words.cap / ws);
		d->sent.words = (size_t)(words.sent / ws);
		d->sent.data = words_at;
	} else {
		drop(&words);
	}
	if (txt.sent) {
		d->sent.text = txt.buf;
		d->sent.text_cap = txt.cap;
		d->sent.text_bytes = txt.sent;
		d->sent.text_at = sa.data;
	} else {
		drop(&txt);
	}
	d->sent.seconds = now_sec() - t0;
}
