/* The OpenCL engine's sorts: a run's words go up chunk by chunk (those a
 * stream sent while it arrived stay where they are), are sorted by the
 * radix sort or the networks, and come down chunk by chunk; records or kv
 * lines' text go up beside them, are put in the words' order on the
 * device (cl_gather.c) and come down instead. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cl_engine_priv.h"
#include "util.h"

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
	radix = cle_radix_for(e, n);
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
			if (cle_sort_kernels(e))
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
		if (cle_radix_kernels(e))
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
int cle_sort_in(struct engine *base, size_t n, void *words, void *room, unsigned low,
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

int cle_sort_above(struct engine *base, size_t n, unsigned low, eng_producer produce,
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
	if (!cle_gathers_on(e->dev))
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
	if (need > cle_budget_bytes(e) && !(s && !strcmp(s, "1")))
		return false;
	return e->buf2 || (e->buf2 = dev_buffer(e->dev, e->buf_words * e->sh.wsize, &err));
}

int cle_sort_records(struct engine *base, size_t n, size_t rec_size, eng_producer produce,
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
int cle_sort_lines(struct engine *base, const struct eng_lines *l, eng_producer produce,
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

