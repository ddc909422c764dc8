#include "config.h"
#include "sortrun.h"

#include <stdlib.h>
#include <string.h>

#include "keyahead.h"
#include "kvkey.h"
#include "progress.h"
#include "refine.h"
#include "strkey.h"
#include "util.h"

static void *warm_in(void *arg)
{
	const struct srt_warm *w = arg;
	in_prefault(w->in, w->in_bytes);
	return NULL;
}

static void *warm_out(void *arg)
{
	struct srt_warm *w = arg;
	if (!w->map_out || !out_map(w->out, w->out_bytes, w->threads, w->fault_out))
		out_reserve(w->out, w->out_bytes);
	return NULL;
}

static void *warm_drop(void *arg)
{
	const struct srt_warm *w = arg;
	size_t i;
	for (i = 0; i < w->drop->nslices; i++)
		in_release(w->drop->slices[i].file, w->drop->slices[i].off, w->drop->slices[i].len);
	return NULL;
}

/* All of b's input is staged, and the output comes from the words alone:
 * give the input's pages back while the engine sorts, which leaves little
 * for munmap to do at the end. */
static void warm_drop_input(struct srt_warm *w, const struct enc_batch *b)
{
	w->drop = b;
	w->drop_running = pthread_create(&w->drop_thread, NULL, warm_drop, w) == 0;
}

void srt_warm_start(struct srt_warm *w)
{
	w->in_running = w->in && pthread_create(&w->in_thread, NULL, warm_in, w) == 0;
	w->out_running = pthread_create(&w->out_thread, NULL, warm_out, w) == 0;
}

void srt_warm_out_done(struct srt_warm *w)
{
	if (w->out_running)
		pthread_join(w->out_thread, NULL);
	w->out_running = false;
}

void srt_warm_done(struct srt_warm *w)
{
	srt_warm_out_done(w);
	if (w->in_running)
		pthread_join(w->in_thread, NULL);
	w->in_running = false;
	if (w->drop_running)
		pthread_join(w->drop_thread, NULL);
	w->drop_running = false;
}

/* Where the words of the current run come from and go to. */
struct run_io {
	struct out_writer *w;
	const struct enc_format *f;
	const struct enc_batch *b;
	struct srt_warm *warm;	/* joined before w is written, or NULL */
	struct srt_times *t;
	const unsigned char *text;	/* kv lines put in order with their text */
	uint64_t text_bytes, out_bytes;
	bool packed;			/* bin records packed in their words... */
	bool in_place;			/* ...made where the input lies */
	struct engine *e;		/* the engine that sorts them */
};

/* Input bytes of records [first, first+count) of run b, for --progress
 * (lines: in proportion, so that the shares of a run add up to its
 * bytes). */
static uint64_t run_bytes(const struct enc_format *f, const struct enc_batch *b, size_t first,
			  size_t count)
{
	uint64_t bytes = 0;
	size_t i;
	if (f->fmt == CLS_FMT_BIN)
		return (uint64_t)count * f->rec_size;
	for (i = 0; i < b->nslices; i++)
		bytes += b->slices[i].len;
	return b->n ? bytes * (first + count) / b->n - bytes * first / b->n : 0;
}

static int produce(void *arg, void *dst, size_t first, size_t count)
{
	const struct run_io *io = arg;
	const size_t ws = word_size(io->f->kind);
	const double t0 = now_sec();
	int rc = 0;

	/* kv runs are parsed whole (and may be sorted where they are): their
	 * words copied on the threads (4 GiB of kv lines have 1.5 GB of them,
	 * whose copy on one thread took the staging of a GPU's sort 0.36-0.44
	 * s against 0.16-0.20 s shared); bin records are encoded as they go. */
	if (io->b->words) {
		const char *src = (const char *)io->b->words + first * ws;
		if (dst != src)
			out_copy(dst, src, count * ws, io->f->threads);
	} else if (io->b->pick)
		rc = io->b->pick(io->b->pick_ctx, first, count, dst);
	else if (io->packed)
		rc = enc_pack_range(io->f, io->b, first, count, dst);
	else
		rc = enc_encode_range(io->f, io->b, first, count, dst);
	if (rc == 0 && io->warm && io->warm->in && (!io->f->indexed || io->packed) &&
	    !io->in_place && first + count == io->b->n)
		warm_drop_input(io->warm, io->b);
	prog_add(PROG_SORT, run_bytes(io->f, io->b, first, count));
	io->t->produce += now_sec() - t0;
	return rc;
}

/* Wait for the output's helper (srt_warm), where there is one, the wait
 * counted; the clock after it. */
static double join_output(const struct run_io *io)
{
	const double t0 = now_sec();

	if (!io->warm)
		return t0;
	srt_warm_out_done(io->warm);
	io->t->warm += now_sec() - t0;
	return now_sec();
}

/* The words are on their way from a device that leaves the host idle
 * (eng_consumer's count 0): the output's pages where the run will go
 * faulted in meanwhile, which its copies would otherwise take one page at
 * a time as they come (kv lines or 16-byte records, 1 GiB from an H200
 * into tmpfs: 59-72 ms of copies at 14-18 GB/s).  Bytes of the run's
 * input, and a line end the last line may lack: all it writes, or a
 * little more (-u, --skip-bad). */
static int make_ready(const struct run_io *io)
{
	const double t0 = now_sec();
	uint64_t bytes;

	join_output(io);
	bytes = out_fault_ahead(io->w, run_bytes(io->f, io->b, 0, io->b->n) + 1);
	if (bytes)
		msg_info(2, "output: %llu bytes of its pages faulted in in %.3f s while the device "
			 "sorted", (unsigned long long)bytes, now_sec() - t0);
	return 0;
}

static int consume(void *arg, const void *src, size_t first, size_t count)
{
	const struct run_io *io = arg;
	double t0;
	size_t spare_bytes;
	void *spare;
	int rc;

	(void)first;
	if (!count)
		return make_ready(io);
	t0 = join_output(io);
	spare = eng_spare(io->e, src, &spare_bytes);
	rc = io->packed ? out_emit_packed(io->w, io->f, src, count)
			: out_emit(io->w, io->f, io->b, src, count, spare, spare_bytes);
	io->t->consume += now_sec() - t0;
	return rc;
}

/* The widest records an engine may put in order itself: wider ones are
 * read from the input a few cache lines at a time all the same. */
#define RECORDS_MAX 256

struct records_job {
	const struct run_io *io;
	uint64_t from;
	size_t len;
	unsigned char *dst;
};

static void records_job(void *arg)
{
	const struct records_job *j = arg;
	enc_copy_record_bytes(j->io->f, j->io->b, j->from, j->len, j->dst);
}

/* Bytes [from, from+len) of the lines' text, zeros past its end. */
static void text_job(void *arg)
{
	const struct records_job *j = arg;
	const uint64_t have = j->from >= j->io->text_bytes ? 0 : j->io->text_bytes - j->from;
	const size_t n = have < j->len ? (size_t)have : j->len;

	if (n)
		memcpy(j->dst, j->io->text + j->from, n);
	memset(j->dst + n, 0, j->len - n);
}

/* Units [first, first+count) of fn's bytes, each unit a word's size, for
 * an engine that puts them in order itself: shared by the threads as
 * copies into the output are (one thread's copy of a 64 MiB chunk took
 * longer than the device's sort of it). */
static int produce_units(const struct run_io *io, void (*fn)(void *), void *dst, size_t first,
			 size_t count)
{
	const size_t ws = word_size(io->f->kind), bytes = count * ws;
	const double t0 = now_sec();
	struct records_job jobs[OUT_COPY_MAX_THREADS];
	const unsigned n = out_copy_threads(bytes, io->f->threads);
	unsigned i;

	for (i = 0; i < n; i++) {
		const size_t at = bytes / n * i;
		jobs[i] = (struct records_job){ io, (uint64_t)first * ws + at,
						i + 1 < n ? bytes / n : bytes - at,
						(unsigned char *)dst + at };
	}
	run_parallel(fn, jobs, sizeof jobs[0], n);
	io->t->produce += now_sec() - t0;
	return 0;
}

/* The run's records side by side in index order (kv lines: their entries
 * in the line table). */
static int produce_records(void *arg, void *dst, size_t first, size_t count)
{
	const struct run_io *io = arg;

	if (io->f->fmt == CLS_FMT_KV && enc_kv_lines(io->f, io->b))
		return CLS_E_FAIL;
	return produce_units(arg, records_job, dst, first, count);
}

/* The text of kv lines the engine puts in order with it. */
static int produce_text(void *arg, void *dst, size_t first, size_t count)
{
	return produce_units(arg, text_job, dst, first, count);
}

/* Units [first, first+count) of what comes down in order instead of the
 * words, total bytes in all (the last unit padded): the output's next
 * bytes, or with entries kv lines' entries in the line table, whose lines
 * are written. */
static int write_units(const struct run_io *io, const void *src, uint64_t total, size_t first,
		       size_t count, bool entries)
{
	const size_t ws = word_size(io->f->kind);
	const uint64_t at = (uint64_t)first * ws;
	const size_t bytes = at >= total ? 0 : total - at < count * ws ? (size_t)(total - at) : count * ws;
	const double t0 = join_output(io);
	int rc;

	/* Whole lines' entries in each call: units come in chunks of whole
	 * tiles, a power of two words. */
	if (entries)
		rc = out_emit_lines(io->w, io->f, src, bytes / sizeof(struct kv_line));
	else
		rc = out_write(io->w, src, bytes);
	io->t->consume += now_sec() - t0;
	return rc;
}

/* The run's records in order (kv lines: their entries in the line
 * table). */
static int consume_records(void *arg, const void *src, size_t first, size_t count)
{
	const struct run_io *io = arg;

	if (!count)
		return make_ready(io);
	return write_units(io, src, (uint64_t)io->b->n * enc_record_bytes(io->f), first, count,
			   io->f->fmt == CLS_FMT_KV);
}

/* The run's lines in order, each with its line end. */
static int consume_text(void *arg, const void *src, size_t first, size_t count)
{
	const struct run_io *io = arg;

	if (!count)
		return make_ready(io);
	return write_units(io, src, io->out_bytes, first, count, false);
}

/* kv lines of run b put in order by the engine, text and all, where they
 * are one slice of an input with none dropped (so that the words' indexes
 * number its lines): ENG_NO_RECORDS where the engine does not
 * (eng_sort_lines) or they are not. */
static int sort_lines(struct engine *e, const struct enc_format *f, const struct enc_batch *b,
		      struct run_io *io)
{
	const struct enc_slice *sl = &b->slices[0];
	struct eng_lines l;

	if (f->fmt != CLS_FMT_KV || b->nslices != 1 || b->skipped || !b->n)
		return ENG_NO_RECORDS;
	io->text = sl->file->data + sl->off;
	io->text_bytes = sl->len;
	/* Every line of the slice, each with its line end: a last one
	 * without it gets one. */
	io->out_bytes = sl->len + (sl->len && io->text[sl->len - 1] != (unsigned char)f->eol);
	l = (struct eng_lines){ b->n, produce_text, io->text_bytes, io->out_bytes,
				(unsigned char)f->eol, b->lent ? b->words : NULL, io->text };
	return eng_sort_lines(e, &l, produce, consume_text, io);
}

/* Whether records of f are written as they are in the words' order: no
 * ties ordered on the host, no -u.  String keys (f->str) tie past their
 * words; a run of them is written in order where none does (str_ties). */
static bool format_in_order(const struct enc_format *f)
{
	return f->indexed && !f->tail && !f->unique && !f->str;
}

/* Whether string keys of run b may tie past their words: where -u
 * compares them, or one of them is longer than its word holds (its words,
 * made, looked at until one is found).  A sort -n key of up to 15
 * significant digits takes 9 bytes, a field of a few letters as many: a
 * run of such keys is sorted and written as plain numbers are, with no
 * rounds of ties, and on a device its lines are put in order there
 * (eng_sort_lines). */
static bool str_ties(const struct enc_format *f, const struct enc_batch *b)
{
	return f->str && (f->unique || !str_words_whole(b->words, b->n, f->mask, f->threads));
}

/* Whether the engine may put run b's records in order itself
 * (eng_sort_records): bin records of at most RECORDS_MAX bytes, or kv
 * lines (their line table's entries: the host then reads each line once,
 * not its entry first), written as they are in the words' order
 * (format_in_order; string keys without ties: str_ties), the run's
 * own slices. */
static bool records_in_order(const struct enc_format *f, const struct enc_batch *b, bool ties)
{
	if (!f->indexed || f->tail || f->unique || ties || b->pick)
		return false;
	return f->fmt == CLS_FMT_BIN ? f->rec_size <= RECORDS_MAX : f->fmt == CLS_FMT_KV && b->lines;
}

bool srt_lines_in_order(const struct enc_format *f)
{
	return f->fmt == CLS_FMT_KV &&
	       (format_in_order(f) || (f->str && !f->unique && f->indexed && kvk_fits_word(f)));
}

bool srt_records_in_order(const struct enc_format *f)
{
	return f->fmt == CLS_FMT_BIN && format_in_order(f) && f->rec_size <= RECORDS_MAX &&
	       !enc_packs(f);
}

/* Sorted words back into the run's own array, where string keys that tie
 * on the word are ordered and -u thins them before they are written. */
static int collect(void *arg, const void *src, size_t first, size_t count)
{
	const struct run_io *io = arg;
	const size_t ws = word_size(io->f->kind);
	char *const dst = (char *)io->b->words + first * ws;

	/* Into the run's words: nothing to make ready. */
	if (count && dst != src)
		memcpy(dst, src, count * ws);
	return 0;
}

/* Whether the run's words are its records where they lie but for an
 * exclusive or or the key's place: bare keys, or records packed in words
 * they fill (io->packed, enc_words_in_place). */
static bool words_are_records(const struct run_io *io)
{
	return io->packed ? enc_words_in_place(io->f) : enc_bare_keys(io->f);
}

/* Memory of the run's own that the sort may take for its words: the
 * words it parsed (kv lines), or where its bare keys lie (or its records,
 * packed: io->packed, enc_words_in_place), each made into its word where
 * it is, when they are a stream read whole into memory of its own (not a
 * mapped file), all of it this one run.  NULL otherwise, and for a run
 * picked from words that others share. */
static void *own_words(const struct run_io *io)
{
	const struct enc_format *f = io->f;
	const struct enc_batch *b = io->b;
	const struct enc_slice *s = b->nslices == 1 ? &b->slices[0] : NULL;
	const struct in_file *file = s ? s->file : NULL;

	if (b->pick)
		return NULL;
	if (b->words)
		return b->words;
	if (!file || !file->heap || !words_are_records(io) ||
	    s->off || s->len != file->size || (uint64_t)b->n * f->rec_size != s->len ||
	    (uintptr_t)file->data % word_size(f->kind))
		return NULL;
	return (unsigned char *)file->heap + (file->data - (const unsigned char *)file->heap);
}

/* Whether run b is all of a stream read into memory of its own (not a
 * mapped file). */
static bool from_stream(const struct enc_batch *b)
{
	return b->nslices == 1 && b->slices[0].file->heap;
}

/* Where the host engine may sort a stream's words through the output
 * (their place in its mapping, its pages faulted in first), or NULL.
 * Words as wide as their records (enc_words_in_place: bare keys of an
 * integer type, records packed beside their keys) are the records but for
 * an exclusive or or the key's place, which their output undoes where they
 * lie: sorted there, they need no scratch of the engine's (256 MiB more
 * memory faulted in for 2^26 u32 keys) and, where they end there, no copy
 * into the output.  Faulted in one at a time by the sort's scattered
 * stores, the pages cost more than both (2 cores, 2^26 u32 keys through a
 * pipe: 0.62 s against 0.54, faulted in first 0.46).  A stream's output
 * took its room while the stream arrived; a file's is mapped while its
 * records are encoded, and sort_file_in takes its place after them.  A
 * stream's kv lines that the output deals by rank (out_deals) take the
 * place as well: their words are read (for their ranks) before any line
 * is written there. */
static void *output_room(const struct engine *e, struct run_io *io)
{
	const size_t bytes = io->b->n * word_size(io->f->kind);
	const bool lines = io->f->fmt == CLS_FMT_KV;
	void *room;

	if (!e->host || !(words_are_records(io) || (lines && from_stream(io->b))))
		return NULL;
	/* The output's mapping, made meanwhile, is needed now. */
	if (io->warm)
		srt_warm_out_done(io->warm);
	if ((lines && !out_deals(io->w, io->f, io->b)) || !(room = out_place(io->w, bytes)))
		return NULL;
	/* The sort's words lie at multiples of their size (radix.h): not so
	 * the place of an output that follows what standard output held at
	 * an offset that is not one. */
	if ((uintptr_t)room % word_size(io->f->kind))
		return NULL;
	msg_info(2, "%zu %s sorted through the output's place", io->b->n,
		 lines ? "kv lines' words" : io->packed ? "records" : "keys");
	out_fault_in(io->w, room, bytes, io->f->threads);
	return room;
}

/* The run's words sorted in in, its own memory (own_words), through the
 * output's place where that is room for them (output_room), on their bits
 * from low up, and handed to the consumer to; io->in_place while they are
 * made there, where that is the input's (whose pages must then stay).
 * A stream's bare keys come with what the host's sort would read them
 * for first, counted while they arrived (keyahead.h); on a device, those
 * sent to it while they arrived stay there (sendahead.h).  ENG_NO_RECORDS
 * where the engine does not. */
static int sort_in(struct engine *e, struct run_io *io, void *in, unsigned low, eng_consumer to)
{
	void *room = output_room(e, io);
	struct radix_counts counts;
	const bool counted = e->host && low == 0 && in != io->b->words &&
			     ka_counts(io->f->key_ahead, in, io->b->n, io->f->threads, &counts);
	int rc;

	/* Made there by the host's sort; a device's takes them from there. */
	io->in_place = e->host && in != io->b->words;
	rc = eng_sort_in(e, io->b->n, in, room, low, counted ? &counts : NULL, produce, to, io);
	if (rc == ENG_NO_RECORDS)
		io->in_place = false;
	return rc;
}

/* For a sort whose words are made already. */
static int made(void *arg, void *dst, size_t first, size_t count)
{
	(void)arg;
	(void)dst;
	(void)first;
	(void)count;
	return 0;
}

/* A mapped file's words as wide as their records (bare keys, or records
 * packed: io->packed) on the host engine, into an output that is mapped
 * (srt_warm) in a file on a disk: made in memory of the run's own, then
 * sorted through the output's place (output_room) instead of the engine's
 * scratch, which spares that memory's fresh pages and the copy into the
 * output.  Its pages are faulted in once the words are made.  From a file
 * into ext4, against the engine's scratch: 2 cores, 2^26 u32 keys
 * 0.71-0.78x the time, 2^24 16-byte records 0.78x; 16 threads, 2^28 u32
 * keys 0.85-0.89x, 2^26 records 0.85x, 2^26 u32 keys 0.67x.  Into tmpfs
 * on 16 threads it lost (1.04-1.16x for u32 keys, 1.17-1.32x for 16-byte
 * records), so there the engine's scratch stays.  ENG_NO_RECORDS where
 * not (nothing done). */
static int sort_file_in(struct engine *e, struct run_io *io, unsigned low)
{
	const size_t bytes = io->b->n * word_size(io->f->kind);
	void *words;
	int rc;

	if (!e->host || io->b->words || io->b->pick || !words_are_records(io) || !io->b->n ||
	    !io->warm || !io->warm->map_out || out_in_memory(io->w))
		return ENG_NO_RECORDS;
	/* The mapping alone (its pages are faulted in by output_room). */
	join_output(io);
	if (!out_place(io->w, bytes))
		return ENG_NO_RECORDS;
	if (!(words = xmalloc(bytes, "the host sort's words")))
		return CLS_E_FAIL;
	populate_parallel(words, bytes, io->f->threads);
	io->in_place = false;
	rc = produce(io, words, 0, io->b->n);
	if (rc == 0)
		rc = eng_sort_in(e, io->b->n, words, output_room(e, io), low, NULL, made, consume,
				 io);
	free(words);
	return rc;
}

/* Sort run b into w; bounds, when not NULL, cut its words into k pieces
 * each already sorted, which the engine may merge. */
static int run(struct engine *e, const struct enc_format *f, struct enc_batch *b,
	       const size_t *bounds, size_t k, struct out_writer *w, struct srt_warm *warm,
	       struct srt_times *t)
{
	struct run_io io = { w, f, b, warm, t, NULL, 0, 0, false, false, e };
	unsigned char *same = NULL;
	bool ties, whole;
	void *in;
	double t0 = now_sec();
	int rc;

	if (b->words) {
		if (enc_encode(f, b))
			return CLS_E_FAIL;
		t->encode += now_sec() - t0;
		t0 = now_sec();
	}
	ties = str_ties(f, b);
	whole = f->unique || ties;
	rc = ENG_NO_RECORDS;
	/* Records that fit in their words beside their keys, where the
	 * engine sorts on the keys' bits alone: the words are the output
	 * (made where the records lie, where they fill them). */
	if (!bounds && !b->pick && enc_packs(f)) {
		io.packed = true;
		if ((in = own_words(&io)))
			rc = sort_in(e, &io, in, enc_packed_low(f), consume);
		else
			rc = sort_file_in(e, &io, enc_packed_low(f));
		if (rc == ENG_NO_RECORDS)
			rc = eng_sort_above(e, b->n, enc_packed_low(f), produce, consume, &io);
		io.packed = rc != ENG_NO_RECORDS;
	}
	if (rc == ENG_NO_RECORDS && !bounds && records_in_order(f, b, ties)) {
		rc = sort_lines(e, f, b, &io);
		if (rc == ENG_NO_RECORDS)
			rc = eng_sort_records(e, b->n, enc_record_bytes(f), produce, produce_records,
					      consume_records, &io);
	}
	/* kv words whose ties or -u need them whole afterwards are sorted
	 * where they were parsed too, and collected back there. */
	if (rc == ENG_NO_RECORDS && !bounds && (in = own_words(&io)) &&
	    (!whole || f->fmt == CLS_FMT_KV))
		rc = sort_in(e, &io, in, 0, whole ? collect : consume);
	if (rc == ENG_NO_RECORDS && !bounds && !whole)
		rc = sort_file_in(e, &io, 0);
	if (rc == ENG_NO_RECORDS)
		rc = bounds ? eng_merge(e, b->n, bounds, k, produce, whole ? collect : consume, &io)
			    : eng_sort(e, b->n, produce, whole ? collect : consume, &io);
	/* -u of string keys: which keys equal the one before, found while
	 * the rounds hold them. */
	if (rc == 0 && f->unique && f->str && !(same = xmalloc(b->n ? b->n : 1, "-u marks")))
		rc = CLS_E_FAIL;
	if (whole) {
		const double t1 = now_sec();
		size_t n = b->n;
		if (rc == 0 && (ties || f->tail))
			rc = rfn_ties(f, b, b->words, b->n, same);
		if (rc == 0 && f->unique)
			n = rfn_unique(f, b, b->words, b->n, same);
		t->ties += now_sec() - t1;
		if (rc == 0 && warm)
			srt_warm_out_done(warm);
		if (rc == 0) {
			const double t2 = now_sec();
			rc = out_emit(w, f, b, b->words, n, NULL, 0);
			t->consume += now_sec() - t2;
		}
	}
	if (rc == 0)
		rc = out_emit_end(w, f, b);
	free(same);
	t->sort += now_sec() - t0;
	return rc;
}

int srt_run(struct engine *e, const struct enc_format *f, struct enc_batch *b,
	    struct out_writer *w, struct srt_warm *warm, struct srt_times *t)
{
	return run(e, f, b, NULL, 0, w, warm, t);
}

int srt_merge(struct engine *e, const struct enc_format *f, struct enc_batch *b,
	      const size_t *bounds, size_t k, struct out_writer *w, struct srt_times *t)
{
	return run(e, f, b, bounds, k, w, NULL, t);
}
