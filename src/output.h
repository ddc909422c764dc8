/* Output: buffered writers to the final destination (stdout, or -o FILE
 * through a temporary file renamed into place when complete), to run
 * files, or to memory (output.c), whose state is writer.h's and the room of
 * whose stream output is taken as the stream arrives (outgrow.h); and the
 * gather that writes a sorted run's records in word order (emit.c). */
#ifndef CLSORT_OUTPUT_H
#define CLSORT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "encode.h"
#include "outgrow.h"
#include "writer.h"

/* The final output: stdout when path is NULL, else path, written through a
 * temporary file in its directory when it is (or will be) a regular file
 * of one name: an unnamed one (O_TMPFILE) where the file system has them,
 * else one named .clsort. and six random characters; symbolic links are
 * followed, and a file with other names (or /dev/stdout) is given the
 * result by a copy at the end (outfile.h).  With sync, out_finish makes
 * the file and its name durable.  0 or CLS_E_FAIL after a message. */
int out_open_final(struct out_writer *w, const char *path, bool sync);
/* A writer to an open file descriptor (run files), which it leaves open;
 * name for messages. */
int out_open_fd(struct out_writer *w, int fd, const char *name);
/* A writer to fd, an empty temporary file of its own (a run's), which it
 * leaves open: mapped for expect bytes at most where the file system
 * allows (out_map, its pages faulted in by the copies into it), so that
 * the run is written by copies on up to threads threads; else through
 * write(2). */
int out_open_run(struct out_writer *w, int fd, const char *name, size_t expect, unsigned threads);
/* A writer that keeps everything in memory (w->buf, w->len), room for
 * expect bytes to start with; copies and decodes into that room run on up
 * to threads threads. */
int out_open_mem(struct out_writer *w, size_t expect, unsigned threads);

/* For w seekable: a writer (part) of the bytes of w's file from off bytes
 * past what w has written, for another thread to write with pwrite(2)
 * while the other parts are written; out_finish flushes it, and leaves the
 * file open.  0, or CLS_E_FAIL or CLS_E_PIPE after a message. */
int out_open_part(struct out_writer *part, struct out_writer *w, uint64_t off);
/* w's next bytes were written by its parts: count them as written and go
 * past them.  Same returns. */
int out_advance(struct out_writer *w, uint64_t bytes);

/* Ask the file system for room for bytes more of output (a regular
 * file), so that writing later does not allocate; a failure is ignored. */
void out_reserve(struct out_writer *w, uint64_t bytes);
/* A descriptor of w's file open for reading and writing, as a shared
 * mapping needs: w's own, or for standard output, which is often open for
 * writing only, its file opened again through /proc (where its permissions
 * allow), *own set: the caller closes that one.  -1 where there is none. */
int out_rw_fd(const struct out_writer *w, bool *own);

/* For a -o temporary file (a part of a file, a run's file, standard output
 * that is a regular file ending at its offset) not written to yet, whose
 * output will be at most bytes long: allocate the file (the part) at that
 * size and map it, so that writes become copies on up to threads threads;
 * with fault_in, its pages are faulted in now, else by the copies.  The
 * file is cut to what was written at the end (a part: it must be written
 * whole; standard output's offset is left at the end of the data, as
 * write(2) leaves it, and an abort cuts off all of it).  False, with the file as it was, where that
 * cannot be done (no fallocate, no room, no mapping); writes then go
 * through write(2) as usual.  True at once where w is mapped already. */
bool out_map(struct out_writer *w, uint64_t bytes, unsigned threads, bool fault_in);

/* 0, CLS_E_PIPE when the reader went away, or CLS_E_FAIL after a
 * message. */
int out_write(struct out_writer *w, const void *p, size_t len);
/* The next len bytes of the output, for the caller to fill in place (in
 * any order, from any thread) instead of writing them: a pointer into the
 * mapping, counted as written; NULL when the writer has no mapping or they
 * do not fit in it. */
void *out_claim(struct out_writer *w, size_t len);
/* The next len bytes of the output's mapping, where its next writes will
 * go, not counted as written: for data laid out there before it is
 * written (key ranges sorted in their place).  NULL as out_claim. */
void *out_place(struct out_writer *w, size_t len);
/* Fault in the pages of p[0..len), bytes out_claim or out_place gave, on
 * up to threads threads, but those of the mapping faulted in already
 * (when it was made, or by a call before for bytes from its start): for
 * stores scattered over them, which taking the faults one at a time as
 * they come costs more than the stores themselves. */
void out_fault_in(struct out_writer *w, void *p, size_t len, unsigned threads);
/* Fault in the pages of the output's mapping where its next len bytes
 * will go (out_fault_in), on w's threads: for time the writer would
 * otherwise spend waiting for what it writes (a device's sort).  The
 * bytes of them not faulted in before; 0 where w writes no mapping. */
uint64_t out_fault_ahead(struct out_writer *w, uint64_t len);
/* Whether w writes a file through a mapping, its bytes from file offset
 * *at on. */
bool out_file_mapped(const struct out_writer *w, uint64_t *at);
/* Whether out_claim would give the next len bytes (in one claim or in
 * several that add up to len). */
bool out_claimable(const struct out_writer *w, uint64_t len);
/* Flush and, for -o, move the file into place (synced first when asked).
 * Same returns.  The output is then complete for whoever reads it, but the
 * writer keeps its mapping and buffers until out_release: a sort that
 * answers its caller once its output is complete (answer.h) lets go of
 * them after the answer (unmapping 1 GiB took 0.02-0.1 s).  On failure it
 * is dropped as by out_abort. */
int out_complete(struct out_writer *w);
/* Unmap and free what out_complete kept; again, nothing. */
void out_release(struct out_writer *w);
/* out_complete, then out_release. */
int out_finish(struct out_writer *w);
/* Drop everything: close, and remove a temporary -o file. */
void out_abort(struct out_writer *w);

/* Write the records that count sorted words of the run stand for, in
 * word order: the next words of the run, in calls that follow it through.
 * Where keys are longer than their word (f->tail), words that tie are put
 * in order first, and the last may be held back until out_emit_end.
 * spare, where not NULL, is spare_bytes of memory it may use as scratch
 * (eng_spare). */
int out_emit(struct out_writer *w, const struct enc_format *f, const struct enc_batch *b,
	     const void *words, size_t count, void *spare, size_t spare_bytes);
/* Write the records that count words packed (enc_packs) hold, in
 * order.  0 or CLS_E_FAIL as out_write. */
int out_emit_packed(struct out_writer *w, const struct enc_format *f, const void *words,
		    size_t count);
/* The next count kv lines of the output, in order already (a run's line
 * table put in the order of its words on the device): each line and its
 * line end.  Same returns. */
int out_emit_lines(struct out_writer *w, const struct enc_format *f, const struct kv_line *lines,
		   size_t count);
/* Whether out_emit writes all b's kv lines, sorted at once, into w by
 * their ranks (emit.c): it then reads their words before it writes any
 * line, and they may lie in w's place (out_place).  w mapped already. */
bool out_deals(const struct out_writer *w, const struct enc_format *f, const struct enc_batch *b);
/* Whether p lies in w's mapping. */
bool out_holds(const struct out_writer *w, const void *p);
/* Whether w's file lies in memory (tmpfs, ramfs). */
bool out_in_memory(const struct out_writer *w);
/* Bytes a kv line takes beside its run while out_emit writes a run of
 * them whole into a mapped output (its rank and its place, emit.c), where
 * the sort leaves no spare memory for them (an OpenCL device's: the host
 * engine's is eng_spare). */
#define OUT_EMIT_LINE_BYTES 8
/* The run's words are all emitted: write what is held back.  Same
 * returns. */
int out_emit_end(struct out_writer *w, const struct enc_format *f, const struct enc_batch *b);

/* How many of threads (at most OUT_COPY_MAX_THREADS) share a copy of
 * bytes into the output: one for a small copy. */
#define OUT_COPY_MAX_THREADS 64
unsigned out_copy_threads(size_t bytes, unsigned threads);
/* dst[0..len) = src[0..len), shared by those threads as a copy into the
 * output is: for other large copies beside the output's (the words a
 * device's staging takes). */
void out_copy(void *dst, const void *src, size_t len, unsigned threads);

#endif
