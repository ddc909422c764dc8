#include "config.h"
#include "cl_engine.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_engine_priv.h"
#include "devbuild.h"
#include "sendahead.h"
#include "util.h"

static const struct eng_ops cle_ops;
static void cle_close(struct engine *base);

/* Whether a run of n words goes through the radix sort: as --device-sort
 * says, auto taking the networks for small runs only where their program
 * is built (or cached). */
static bool radix_for(const struct cle *e, size_t n)
{
	const bool built = e->net_cached || e->net.prog;
	const bool radix = clr_wanted(e->c.devsort, e->dev, n, built);

	if (radix && !clr_wanted(e->c.devsort, e->dev, n, true))
		msg_info(2, "device sort: radix, as the networks' program is not built yet");
	return radix;
}

/* The device's memory a sort of c's may take on d: -S, else a share of
 * what it has. */
static uint64_t budget_of(const struct dev_ctx *d, const struct eng_config *c)
{
	if (c->buffer_percent > 0)
		return (uint64_t)((double)d->global_mem * c->buffer_percent / 100.0);
	if (c->buffer_bytes)
		return c->buffer_bytes;
	return (uint64_t)((double)d->global_mem * DEVICE_FRACTION);
}

static uint64_t budget_bytes(const struct cle *e)
{
	return budget_of(e->dev, &e->c);
}

/* The shape of c's words on d, into sh, and the options of every program
 * of an engine that is instance on the device (clb_instance_open). */
static void base_options(const struct dev_ctx *d, const struct eng_config *c, unsigned instance,
			 struct clb_shape *sh, char *options, size_t size)
{
	const char *extra = getenv("CLSORT_CL_OPTIONS");
	char instance_opt[32] = "";

	clb_choose_shape(d, word_size(c->kind), c->local == CLS_LOCAL_MERGE, sh);
	/* -w: some compilers (PoCL's) print optimizer notes, such as loops
	 * they chose not to unroll, straight to our stderr; errors still fail
	 * the build with its log. */
	if (instance)
		snprintf(instance_opt, sizeof instance_opt, " -DINSTANCE=%u", instance);
	snprintf(options, size,
		 "-w -DWORD_BITS=%zu -DWG=%zu -DEPT=%zu -DLOG_WG=%u -DLOG_EPT=%u -DMERGE_ITEMS=%zu%s %s",
		 sh->wsize * 8, sh->wg, sh->ept, clb_log2(sh->wg), clb_log2(sh->ept), sh->merge_items,
		 instance_opt, extra ? extra : "");
}

/* Whether d puts in order what goes up beside the words, as far as the
 * device goes (may_gather): not a CPU device (whose gather would read the
 * same memory the host's does, and copy it twice more) unless
 * CLSORT_DEVICE_GATHER=1, and not any with CLSORT_DEVICE_GATHER=0. */
static bool gathers_on(const struct dev_ctx *d)
{
	const char *s = getenv("CLSORT_DEVICE_GATHER");

	if (s && !strcmp(s, "0"))
		return false;
	return !(d->type & CL_DEVICE_TYPE_CPU) || (s && !strcmp(s, "1"));
}

/* What a large run of c's words needs on d, made where the device was
 * opened ahead, as the first engine on it: the programs, built or loaded
 * from clsort's cache (a load took the sort 4-40 ms after a 1 GiB
 * stream's last byte on an H100 machine), the sort's (cle_start's choice
 * where the run has RADIX_MIN words or more) and the one that puts the
 * records (kv lines: with their text) in order where the device does;
 * then the pinned staging buffers, where the device has memory of its own
 * as gathers_on judges (an H100 machine's driver took 0.02-0.08 s for
 * 48-96 MiB of them; a CPU device's staging is the host's own memory).
 * Nothing the thread has not begun once the sort has come for the device:
 * the sort's own builds overlap its uploads. */
static void build_early(struct dev_ctx *d, void *arg)
{
	const struct eng_config *c = arg;
	struct clb_shape sh;
	char options[sizeof ((struct cle *)0)->options];
	struct clb_job j[DEV_EARLY];
	size_t n = 0, i;

	base_options(d, c, 0, &sh, options, sizeof options);
	if (clr_wanted(c->devsort, d, SIZE_MAX, true)) {
		struct clr r;
		clr_init(&r, d, sh.wsize, options);
		clr_program(&r, &j[n++]);
	} else {
		clb_sort_program(&sh, options, &j[n++]);
	}
	if ((c->lines || c->records) && gathers_on(d)) {
		struct clg g;
		clg_init(&g, d, sh.wsize);
		if (c->lines)
			clg_lines_program(&g, options, &j[n++]);
		else
			clg_records_program(&g, options, &j[n++]);
	}
	for (i = 0; i < n && !dev_ahead_wanted(); i++)
		clb_build_early(d, &j[i]);
	if (gathers_on(d) && !dev_ahead_wanted())
		stg_make_ahead(d);
	/* The programs and pinned buffers made: what faults pages in beside
	 * the read may go on (util.h). */
	faults_hold(false);
	/* A stream's words (bare keys, packed records, kv lines' words), sent
	 * while the rest arrives, for the radix sort to take where they lie:
	 * room for them, and for the sort's second buffer beside them; kv
	 * lines' text for their gather. */
	if (clr_wanted(c->devsort, d, SIZE_MAX, true) && !dev_ahead_wanted()) {
		uint64_t most = budget_of(d, c) / 2;
		if (most > d->max_alloc)
			most = d->max_alloc;
		sa_send(d, most, c->lines && gathers_on(d));
	}
}

void cle_open_ahead(const struct eng_config *c)
{
	static struct eng_config config;
	static atomic_bool given;

	/* Once a process, as dev_open_ahead: a later stream's call must not
	 * write the config the thread of the first may be reading. */
	if (atomic_exchange(&given, true))
		return;
	config = *c;
	dev_open_ahead(c->device, c->profiling, build_early, &config);
}

/* The device opened and the build of the program a run of about n words
 * needs started (the radix sort's or the tile sort's): on the first call
 * that has words to sort, so that an input with none never touches
 * OpenCL.  Once: a failure is kept for every later call.  0 or CLS_E_FAIL
 * after a message. */
int cle_start(struct cle *e, size_t n)
{
	struct dev_ctx *d = e->dev;
	unsigned instance;
	cl_int err;

	if (e->started)
		return e->start_rc;
	e->started = true;
	e->start_rc = CLS_E_FAIL;
	if (dev_open(d, e->c.device, e->c.profiling))
		return CLS_E_FAIL;
	e->dev_opened = true;
	e->base.t_ahead = d->t_ahead;
	if (d->sent.text)
		msg_info(2, "%zu words and %llu bytes of text sent to the device in %.3f s while "
			 "the stream arrived", d->sent.words, (unsigned long long)d->sent.text_bytes,
			 d->sent.seconds);
	else if (d->sent.words)
		msg_info(2, "%zu words sent to the device in %.3f s while the stream arrived",
			 d->sent.words, d->sent.seconds);
	e->open_slot = clb_instance_open(d->device, &instance);
	snprintf(e->base.name, sizeof e->base.name, "%s [%s]", d->name, d->platform_name);
	base_options(d, &e->c, instance, &e->sh, e->options, sizeof e->options);
	e->xfer = clCreateCommandQueue(d->context, d->device,
				       d->profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
	if (!e->xfer)
		return dev_fail("cannot create an OpenCL command queue", err);
	stg_init(&e->stg, d, e->xfer, e->sh.wsize, e->sh.tile);
	clg_init(&e->gather, d, e->sh.wsize);
	if (e->sh.global_merge)
		msg_info(2, "%zu-bit words: tiles of %zu (work-group %zu x %zu), %s tile kernel, "
			 "global merge-path passes of %zu words per work-item", e->sh.wsize * 8, e->sh.tile,
			 e->sh.wg, e->sh.ept, e->c.local == CLS_LOCAL_MERGE ? "merge" : "bitonic",
			 e->sh.merge_items);
	else
		msg_info(2, "%zu-bit words: tiles of %zu (work-group %zu x %zu), %s tile kernel, "
			 "global bitonic passes of %u substages", e->sh.wsize * 8, e->sh.tile, e->sh.wg, e->sh.ept,
			 e->c.local == CLS_LOCAL_MERGE ? "merge" : "bitonic", e->sh.fuse);
	msg_info(2, "device limits: work-groups of %zu, %llu KiB of local memory", d->max_wg,
		 (unsigned long long)(d->local_mem >> 10));
	cln_init(&e->net, d, &e->sh, e->options, cle_record_kernel, e);
	clr_init(&e->radix, d, e->sh.wsize, e->options);
	e->radix_may = clr_wanted(e->c.devsort, d, SIZE_MAX, true);
	e->net_cached = e->radix_may && e->c.devsort == CLS_DEVSORT_AUTO && cln_cached(&e->net);
	if (clr_wanted(e->c.devsort, d, n, e->net_cached))
		clr_start(&e->radix);
	else
		cln_start(&e->net);
	e->start_rc = 0;
	return 0;
}

/* The network sort's kernels, once the build cln_start started has
 * ended: it is waited for here, and the wait counted in t_wait.  0 (also
 * where it never started) or CLS_E_FAIL after a message. */
int cle_ready(struct cle *e)
{
	const double t0 = now_sec();
	const bool waits = cln_building(&e->net);
	const int rc = cln_ready(&e->net);

	if (waits) {
		e->base.t_wait += now_sec() - t0;
		e->base.t_once = e->dev->t_build;
	}
	return rc;
}

/* The network sort's kernels, their build started here where it was not. */
static int sort_kernels(struct cle *e)
{
	cln_start(&e->net);
	return cle_ready(e);
}

/* The radix sort's kernels, likewise; the wait counted in t_wait. */
static int radix_kernels(struct cle *e)
{
	const double t0 = now_sec();
	const bool waits = !e->radix.prog;
	const int rc = clr_ready(&e->radix);

	if (waits) {
		e->base.t_wait += now_sec() - t0;
		e->base.t_once = e->dev->t_build;
	}
	return rc;
}

int cle_open(struct engine **out, const struct eng_config *c)
{
	struct cle *e = calloc(1, sizeof *e);

	if (!e) {
		msg_err("out of memory");
		return CLS_E_FAIL;
	}
	e->base.ops = &cle_ops;
	e->c = *c;
	e->base.memory = c->memory;
	e->dev = &e->devc;
	e->open_slot = -1;
	e->sh.wsize = word_size(c->kind);
	/* Named by its spec until it starts. */
	snprintf(e->base.name, sizeof e->base.name, "OpenCL device %s", c->device);
	*out = &e->base;
	return 0;
}

static void cle_close(struct engine *base)
{
	struct cle *e = (struct cle *)base;

	cln_release(&e->net);
	clr_release(&e->radix);
	stg_release(&e->stg);
	clg_release(&e->gather);
	if (e->buf)
		clReleaseMemObject(e->buf);
	if (e->merge_pieces)
		clReleaseKernel(e->merge_pieces);
	if (e->buf2)
		clReleaseMemObject(e->buf2);
	if (e->pieces_prog)
		clReleaseProgram(e->pieces_prog);
	if (e->xfer)
		clReleaseCommandQueue(e->xfer);
	free(e->prof);
	free(e->prof_kernel);
	if (e->dev_opened) {
		clb_instance_close(e->open_slot);
		dev_close(&e->devc);
	}
	free(e);
}

static size_t cle_max_words(const struct cle *e)
{
	return (size_t)(e->dev->max_alloc / e->sh.wsize);
}

static bool is_nomem(cl_int err)
{
	return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
	       err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

/* A buffer of words words on the device for the first: the one a
 * stream's first words were sent into while it arrived (sendahead.h),
 * where it has the room, or a new one, those words copied into it. */
static cl_mem take_sent(struct cle *e, size_t words, cl_int *err)
{
	struct dev_ctx *d = e->dev;
	cl_mem sent = d->sent.buf;

	*err = CL_SUCCESS;
	d->sent.buf = NULL;
	if (sent && d->sent.cap >= words)
		return sent;
	if (!sent || d->sent.words > words)
		d->sent.words = 0;
	return dev_regrow(d, sent, d->sent.words * e->sh.wsize, words * e->sh.wsize, err);
}

/* The text a stream of kv lines sent while it arrived, dropped where the
 * gather of its lines did not take it. */
static void drop_sent_text(struct dev_ctx *d)
{
	if (d->sent.text)
		clReleaseMemObject(d->sent.text);
	d->sent.text = NULL;
	d->sent.text_cap = d->sent.text_bytes = 0;
	d->sent.text_at = NULL;
}

/* The gather's buffer for the text of l, of text_words words' worth: the
 * one l's stream sent its text into while it arrived, where that is l's
 * text (grown, the text sent kept, where it holds too little).  The bytes
 * of text it holds already; 0 where it is not taken (it is dropped). */
static uint64_t take_sent_text(struct cle *e, const struct eng_lines *l, size_t text_words)
{
	struct dev_ctx *d = e->dev;
	const size_t ws = e->sh.wsize;
	const uint64_t bytes = d->sent.text_bytes;
	size_t cap = (size_t)(d->sent.text_cap / ws);
	cl_mem buf = d->sent.text;
	cl_int err = CL_SUCCESS;

	if (!buf || l->text_at != d->sent.text_at || bytes > l->text_bytes) {
		drop_sent_text(d);
		return 0;
	}
	d->sent.text = NULL;
	drop_sent_text(d);
	if (cap < text_words) {
		/* The copy done before the rest of the text goes up beside it. */
		buf = dev_regrow(d, buf, (size_t)bytes, text_words * ws, &err);
		if (!buf || clFinish(d->queue) != CL_SUCCESS) {
			if (buf)
				clReleaseMemObject(buf);
			return 0;
		}
		cap = text_words;
	}
	clg_take_text(&e->gather, buf, cap);
	return bytes;
}

static int cle_reserve(struct cle *e, size_t words)
{
	cl_int err;

	if (e->buf && e->buf_words >= words)
		return 0;
	/* Sent words, where there were, go with the buffer. */
	if (e->buf) {
		clReleaseMemObject(e->buf);
		e->dev->sent.words = 0;
	}
	if (e->buf2)
		clReleaseMemObject(e->buf2);
	e->buf = e->buf2 = NULL;
	e->buf_words = 0;
	if (words == 0)
		return 0;
	if (words > cle_max_words(e))
		return CLE_E_NOMEM;
	e->buf = take_sent(e, words, &err);
	if (e->buf && (e->sh.global_merge || e->radix_may))
		e->buf2 = dev_buffer(e->dev, words * e->sh.wsize, &err);
	if (err != CL_SUCCESS) {
		if (e->buf)
			clReleaseMemObject(e->buf);
		if (e->buf2)
			clReleaseMemObject(e->buf2);
		e->buf = e->buf2 = NULL;
		e->dev->sent.words = 0;
		if (is_nomem(err)) {
			msg_info(1, "device buffer of %zu words failed (%s)", words, dev_strerror(err));
			return CLE_E_NOMEM;
		}
		return dev_fail("cannot allocate the device buffer", err);
	}
	e->buf_words = words;
	return 0;
}

int cle_finish(struct cle *e, cl_int err, const char *what, cl_mem result, size_t off, size_t n,
	       size_t chunk_tiles, size_t chunks, cl_event *ready, bool each, const cl_event *up,
	       size_t nup, cl_event *down, eng_consumer consume, void *ctx)
{
	int cb = 0;

	clFlush(e->dev->queue);
	if (err == CL_SUCCESS) {
		what = "download from the device";
		err = stg_download(&e->stg, result, off, n, chunk_tiles, chunks, ready, each, down,
				   consume, ctx, &cb);
	}
	if (cb)
		return cb;
	if (err != CL_SUCCESS) {
		dev_fail(what, err);
		return CLS_E_FAIL;
	}
	if (e->dev->profiling)
		cle_add_times(e, up, nup, down, chunks);
	return 0;
}

/* What goes up beside the words, while they are sorted, and comes down in
 * their order instead of them (the gather prepared for it): units words'
 * worth of records of rec_size bytes that the words index
 * (eng_sort_records), or, lines not NULL, the text of the kv lines they
 * index, the output then the lines themselves (eng_sort_lines). */
struct beside {
	eng_producer records;
	size_t rec_size, units;
	bool own_out;			/* records: their order in the gather's
					 * own buffer, not the sort's free one */
	const struct eng_lines *lines;
	struct clg_lines shape;		/* lines: the gather's view of them */
	uint64_t text_sent;		/* lines: bytes of their text on the
					 * device already (sendahead.h) */
};

/* Chunks of whole tiles that units words' worth take. */
static size_t chunks_of(const struct cle *e, size_t units, size_t chunk_tiles)
{
	return ((units + e->sh.tile - 1) / e->sh.tile + chunk_tiles - 1) / chunk_tiles;
}

/* Upload units words' worth from produce into buf, chunk by chunk from
 * chunk from on (those before it are there), their events in up (after
 * those of the chunks before: first). */
static cl_int upload_beside(struct cle *e, cl_mem buf, size_t first, size_t from, size_t units,
			    size_t chunk_tiles, cl_event *up, eng_producer produce, void *ctx, int *cb)
{
	const size_t chunks = chunks_of(e, units, chunk_tiles);
	cl_int err = CL_SUCCESS;
	size_t c;

	for (c = from; c < chunks && err == CL_SUCCESS && !*cb; c++) {
		err = stg_upload(&e->stg, buf, first + c, stg_chunk(&e->stg, c, chunk_tiles, units), up,
				 produce, ctx, cb);
		clFlush(e->xfer);
	}
	return err;
}

/* Sort n words that produce fills, down to consume, on their bits from
 * key_low up; with bs (not NULL), what it describes goes up beside them
 * and comes down instead.  With key_low not 0, ENG_NO_RECORDS, having
 * called neither, where the run would go through the networks.  sent:
 * whether the first words sent while a stream arrived (the device's
 * sent.words) are these words' first, to stay where they are. */
static int sort_words(struct cle *e, size_t n, unsigned key_low, eng_producer produce,
		      const struct beside *bs, eng_consumer consume, void *ctx, bool sent)
{
	size_t tiles, chunk_tiles, chunks, c, c0 = 0, tiled, rchunks = 0, tchunks = 0, t0 = 0;
	size_t ochunks = 0;
	size_t out_units = 0;
	bool radix;
	cl_event *up = NULL, *sorted = NULL, *down = NULL, *ready = NULL, done = NULL;
	cl_int err = CL_SUCCESS;
	cl_mem result;
	int rc = CLS_E_FAIL, cb = 0;
	const char *what = "";

	if (n == 0)
		return 0;
	if (cle_start(e, n))
		return CLS_E_FAIL;
	if (!bs || !bs->lines)
		drop_sent_text(e->dev);
	radix = radix_for(e, n);
	/* Only the radix sort, whose passes may start at key_low, orders
	 * words on some of their bits alone; the networks order all of
	 * them. */
	if (key_low && !radix)
		return ENG_NO_RECORDS;
	if (key_low)
		msg_info(2, "%zu records sorted in their words, on the words' bits from %u up", n,
			 key_low);
	tiles = (n + e->sh.tile - 1) / e->sh.tile;
	if (cle_reserve(e, n) != 0) {
		msg_err("cannot hold %zu words on the device", n);
		return CLS_E_FAIL;
	}
	if (stg_make(&e->stg, n))
		return CLS_E_FAIL;
	/* Whole pairs of tiles, for the pair tails of the last stage. */
	chunk_tiles = stg_chunk_tiles(&e->stg, true);
	chunks = (tiles + chunk_tiles - 1) / chunk_tiles;
	/* The whole chunks sent already, for the radix sort, which waits for
	 * the rest only; none for a sort of other words, which write over
	 * them. */
	if (sent && radix && e->dev->sent.words <= n) {
		c0 = e->dev->sent.words / (chunk_tiles * e->sh.tile);
		msg_info(2, "%zu words of %zu on the device already", c0 * chunk_tiles * e->sh.tile,
			 n);
	}
	e->dev->sent.words = 0;
	/* The records' uploads (and the lines' text's) follow the words' in
	 * up, through the same staging buffers in turn, in chunks as large. */
	if (bs) {
		rchunks = chunks_of(e, bs->units, chunk_tiles);
		out_units = bs->units;
		if (bs->lines) {
			tchunks = chunks_of(e, bs->shape.text_words, chunk_tiles);
			out_units = clg_words(bs->shape.out_bytes, e->sh.wsize);
			/* The text's whole chunks sent while the stream arrived. */
			t0 = (size_t)(bs->text_sent / (chunk_tiles * e->sh.tile * e->sh.wsize));
			if (t0 > tchunks)
				t0 = tchunks;
			if (t0)
				msg_info(2, "%llu bytes of text of %llu on the device already",
					 (unsigned long long)t0 * chunk_tiles * e->sh.tile * e->sh.wsize,
					 (unsigned long long)bs->shape.text_bytes);
		}
		ochunks = chunks_of(e, out_units, chunk_tiles);
	}
	up = calloc(chunks + rchunks + tchunks, sizeof *up);
	sorted = calloc(chunks, sizeof *sorted);
	down = calloc(chunks > ochunks ? chunks : ochunks, sizeof *down);
	if (bs && bs->lines)
		ready = calloc(ochunks, sizeof *ready);
	if (!up || !sorted || !down || (bs && bs->lines && !ready)) {
		msg_err("out of memory");
		goto out;
	}

	/* Upload chunk by chunk, each produced into a free staging buffer;
	 * each chunk's tiles are sorted once it lands and the kernels are
	 * built: until they are, the chunks go on coming up. */
	what = "upload to the device";
	for (c = c0, tiled = 0; c < chunks && err == CL_SUCCESS; c++) {
		err = stg_upload(&e->stg, e->buf, c, stg_chunk(&e->stg, c, chunk_tiles, n), up, produce,
				 ctx, &cb);
		if (cb) {
			rc = cb;
			goto out;
		}
		if (err == CL_SUCCESS && !radix && (cln_built(&e->net) || c + 1 == chunks)) {
			if (sort_kernels(e))
				goto out;
			for (; tiled <= c && err == CL_SUCCESS; tiled++) {
				const struct stg_chunk k = stg_chunk(&e->stg, tiled, chunk_tiles, n);
				err = cln_tiles(&e->net, e->dev->queue, e->buf, n, k.t0, k.t1, 1,
						&up[tiled], &sorted[tiled]);
			}
		}
		/* Start the copy now, not at the next wait. */
		clFlush(e->xfer);
		clFlush(e->dev->queue);
	}
	/* clFlush makes both queues start now rather than at the first wait. */
	clFlush(e->xfer);
	what = "sort kernel launch";
	result = e->buf;
	if (radix) {
		/* The words sorted where they lie, once they are all up. */
		if (radix_kernels(e))
			goto out;
		if (err == CL_SUCCESS)
			err = clr_sort(&e->radix, e->dev->queue, e->buf, e->buf2, n, key_low,
				       (cl_uint)(chunks - c0), chunks > c0 ? up + c0 : NULL,
				       e->dev->profiling ? cle_record_kernel : NULL, e, &result, &done);
	} else if (err == CL_SUCCESS) {
		err = cln_passes(&e->net, e->dev->queue, e->buf, e->buf2, n, chunk_tiles, chunks, sorted,
				 &result);
	}
	if (bs && err == CL_SUCCESS) {
		/* The records (and text) go up while the words are sorted, then
		 * are put in their order in the buffer the sort left free, or
		 * the gather's own. */
		const cl_mem out = bs->own_out || bs->lines ? e->gather.out :
				   result == e->buf ? e->buf2 : e->buf;
		clFlush(e->dev->queue);
		what = "upload to the device";
		if (bs->records)
			err = upload_beside(e, e->gather.recs, chunks, 0, bs->units, chunk_tiles, up,
					    bs->records, ctx, &cb);
		if (err == CL_SUCCESS && !cb && bs->lines)
			err = upload_beside(e, e->gather.text, chunks + rchunks, t0,
					    bs->shape.text_words, chunk_tiles, up, bs->lines->text, ctx,
					    &cb);
		if (cb) {
			rc = cb;
			goto out;
		}
		/* Built once the sort's program is. */
		if (err == CL_SUCCESS && !bs->lines && !e->gather.kernel) {
			if (clg_build(&e->gather, e->options))
				goto out;
			e->base.t_once = e->dev->t_build;
		}
		if (err == CL_SUCCESS && bs->lines && !e->gather.line_copy) {
			if (clg_build_lines(&e->gather, e->options))
				goto out;
			e->base.t_once = e->dev->t_build;
		}
		what = "gather kernel launch";
		if (done)
			clReleaseEvent(done);
		done = NULL;
		/* Each chunk of the lines comes down once the piece of their
		 * copy that ends it is done. */
		if (err == CL_SUCCESS && bs->lines)
			err = clg_enqueue_lines(&e->gather, e->dev->queue, result, &bs->shape,
						(cl_uint)(tchunks - t0),
						tchunks > t0 ? up + chunks + rchunks + t0 : NULL,
						chunk_tiles * e->sh.tile * e->sh.wsize, ochunks, ready,
						e->dev->profiling ? cle_record_kernel : NULL, e);
		else if (err == CL_SUCCESS)
			err = clg_enqueue(&e->gather, e->dev->queue, result, out, n, bs->rec_size,
					  (cl_uint)rchunks, up + chunks, &done);
		if (err == CL_SUCCESS && e->dev->profiling && !bs->lines)
			cle_record_event(e, e->gather.kernel, done);
		result = out;
	}
	/* Down come the records (or lines), after their gather, or the
	 * words: after the radix sort, or chunk by chunk as the networks sort
	 * them. */
	if (bs)
		rc = cle_finish(e, err, what, result, 0, out_units, chunk_tiles, ochunks,
				bs->lines ? ready : &done, bs->lines != NULL, up,
				chunks + rchunks + tchunks, down, consume, ctx);
	else
		rc = cle_finish(e, err, what, result, 0, n, chunk_tiles, chunks, radix ? &done : sorted,
				!radix, up, chunks, down, consume, ctx);
out:
	/* Nothing may still be writing into words when we return. */
	clFinish(e->xfer);
	clFinish(e->dev->queue);
	if (done)
		clReleaseEvent(done);
	if (up)
		stg_release_events(up, chunks + rchunks + tchunks);
	if (sorted)
		stg_release_events(sorted, chunks);
	if (down)
		stg_release_events(down, chunks > ochunks ? chunks : ochunks);
	if (ready)
		stg_release_events(ready, ochunks);
	free(ready);
	free(up);
	free(sorted);
	free(down);
	stg_release_events(e->prof, e->nprof);
	e->nprof = 0;
	return rc;
}

int cle_sort(struct engine *base, size_t n, eng_producer produce, eng_consumer consume, void *ctx)
{
	return sort_words((struct cle *)base, n, 0, produce, NULL, consume, ctx, false);
}

/* The run's words are those of all of a stream, read into words
 * (eng_sort_in): its first words sent while it arrived, where they were
 * sent from there, stay where they are (sendahead.h); the rest go up as
 * any sort's.  ENG_NO_RECORDS where none were, or where the networks
 * would sort on the bits from low up (eng_sort_above). */
static int cle_sort_in(struct engine *base, size_t n, void *words, void *room, unsigned low,
		       const struct radix_counts *counts, eng_producer produce,
		       eng_consumer consume, void *ctx)
{
	struct cle *e = (struct cle *)base;

	(void)room;
	(void)counts;
	if (!e->dev->sent.words || (const unsigned char *)words != e->dev->sent.data)
		return ENG_NO_RECORDS;
	return sort_words(e, n, low, produce, NULL, consume, ctx, true);
}

static int cle_sort_above(struct engine *base, size_t n, unsigned low, eng_producer produce,
			  eng_consumer consume, void *ctx)
{
	return sort_words((struct cle *)base, n, low, produce, NULL, consume, ctx, false);
}

/* Whether the device may put in order what goes up beside n words: where
 * gathers_on says so, the device's buffer for the words had.  *rc
 * CLS_E_FAIL where the device fails to start. */
static bool may_gather(struct cle *e, size_t n, int *rc)
{
	const char *s = getenv("CLSORT_DEVICE_GATHER");

	*rc = 0;
	if ((s && !strcmp(s, "0")) || n == 0)
		return false;
	if (cle_start(e, n)) {
		*rc = CLS_E_FAIL;
		return false;
	}
	if (!gathers_on(e->dev))
		return false;
	return cle_reserve(e, n) == 0;
}

/* Whether beside bytes fit beside n words and the second buffer within
 * the budget (always with CLSORT_DEVICE_GATHER=1); the second buffer is
 * made (the tiles and bitonic passes sort in place: what goes beside
 * needs it all the same). */
static bool gather_fits(struct cle *e, size_t n, uint64_t beside)
{
	const char *s = getenv("CLSORT_DEVICE_GATHER");
	uint64_t need = 2 * (uint64_t)n * e->sh.wsize + beside;
	cl_int err;

	if (e->radix_may && !e->sh.global_merge)
		need += clr_extra_bytes(&e->radix);
	if (need > budget_bytes(e) && !(s && !strcmp(s, "1")))
		return false;
	return e->buf2 || (e->buf2 = dev_buffer(e->dev, e->buf_words * e->sh.wsize, &err));
}

static int cle_sort_records(struct engine *base, size_t n, size_t rec_size, eng_producer produce,
			    eng_producer records, eng_consumer consume, void *ctx)
{
	struct cle *e = (struct cle *)base;
	struct beside bs = { records, rec_size, 0, false, NULL, { 0, 0, 0, 0, 0 }, 0 };
	int rc;

	if (!may_gather(e, n, &rc))
		return rc ? rc : ENG_NO_RECORDS;
	bs.units = (n * rec_size + e->sh.wsize - 1) / e->sh.wsize;
	bs.own_out = bs.units > e->buf_words;
	if (!gather_fits(e, n, (uint64_t)bs.units * (bs.own_out ? 2 : 1) * e->sh.wsize) ||
	    clg_prepare(&e->gather, bs.units, bs.own_out))
		return ENG_NO_RECORDS;
	msg_info(2, "device gather: %zu records put in order on the device", n);
	return sort_words(e, n, 0, produce, &bs, consume, ctx, false);
}

/* kv lines put in order on the device, text and all: where their text,
 * where each starts and the output fit beside the words within the
 * budget, as records do. */
static int cle_sort_lines(struct engine *base, const struct eng_lines *l, eng_producer produce,
			  eng_consumer consume, void *ctx)
{
	struct cle *e = (struct cle *)base;
	const size_t ws = e->sh.wsize;
	struct beside bs = { NULL, 0, 0, false, l, { 0, 0, 0, 0, 0 }, 0 };
	bool sent;
	int rc;

	bs.shape = (struct clg_lines){ l->n, clg_words(l->text_bytes, ws), l->text_bytes,
				       l->out_bytes, l->eol };
	if (!may_gather(e, l->n, &rc) || !gather_fits(e, l->n, clg_lines_bytes(&e->gather, &bs.shape))) {
		drop_sent_text(e->dev);
		return rc ? rc : ENG_NO_RECORDS;
	}
	/* The words and text a stream of them sent while it arrived, where
	 * they are these lines'. */
	sent = l->words && e->dev->sent.words && l->words == e->dev->sent.data;
	bs.text_sent = take_sent_text(e, l, bs.shape.text_words);
	if (clg_prepare_lines(&e->gather, &bs.shape))
		return ENG_NO_RECORDS;
	msg_info(2, "device gather: %zu lines put in order on the device, their text with them",
		 l->n);
	return sort_words(e, l->n, 0, produce, &bs, consume, ctx, sent);
}

/* The budget: -S, else a fraction of the device's memory; never more than
 * one buffer may hold, nor, on a CPU device whose buffers are host memory
 * too (the words, and the merge-path passes' second buffer), more than the
 * host memory allows.  Then halved until the device holds it: it may hold
 * less than it says. */
static int cle_capacity(struct engine *base, size_t want, size_t *cap)
{
	struct cle *e = (struct cle *)base;
	const struct dev_ctx *d = e->dev;
	size_t per_record = e->c.beside;
	uint64_t most;
	double t0 = now_sec();
	int rc;

	/* Runs that small need nothing of the device: an empty input never
	 * starts it, and a sort of a few words starts it when it sorts. */
	if (want <= MIN_RUN) {
		*cap = want;
		return 0;
	}
	if (cle_start(e, want))
		return CLS_E_FAIL;
	most = budget_bytes(e);
	/* The radix sort's second buffer (on a CPU device the merge-path
	 * passes have it anyway, counted below) and its counts. */
	if (e->radix_may && !e->sh.global_merge) {
		const uint64_t extra = clr_extra_bytes(&e->radix);
		most = most > extra ? (most - extra) / 2 : 0;
	}
	most /= e->sh.wsize;
	if (most > cle_max_words(e))
		most = cle_max_words(e);
	if (d->type & CL_DEVICE_TYPE_CPU)
		per_record += 2 * e->sh.wsize;
	if (per_record && most > base->memory / per_record)
		most = base->memory / per_record;
	if (most < MIN_RUN)
		most = MIN_RUN;
	if (most > want)
		most = want;
	while ((rc = cle_reserve(e, (size_t)most)) == CLE_E_NOMEM && most > MIN_RUN)
		most = most / 2 < MIN_RUN ? MIN_RUN : most / 2;
	if (rc) {
		if (rc == CLE_E_NOMEM)
			msg_err("the device cannot hold even %llu words", (unsigned long long)most);
		return CLS_E_FAIL;
	}
	*cap = (size_t)most;
	msg_info(1, "device buffer of %zu words in %.3f s", *cap, now_sec() - t0);
	return 0;
}

static const struct eng_ops cle_ops = {
	.capacity = cle_capacity,
	.sort = cle_sort,
	.merge = cle_merge,
	.report = cle_report,
	.close = cle_close,
	.sort_records = cle_sort_records,
	.sort_lines = cle_sort_lines,
	.sort_in = cle_sort_in,
	.sort_above = cle_sort_above,
};
