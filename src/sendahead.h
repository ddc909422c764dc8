/* A stream's words sent up to the device while the stream arrives.
 * Where a stream of records whose words are made where they lie (bare
 * keys, or records packed: enc_words_in_place) opens its device ahead of
 * its sort (pipeline.c), the thread that opened it, once it has built the
 * sort's programs and its pinned staging buffers, goes on to encode the
 * records come so far into those buffers and send them into a device
 * buffer that grows with the stream (each time to twice what has come),
 * until the stream is complete.  The sort of that stream, one run of all of it,
 * then sends only the rest (cl_sort.c).  On an H200 machine the staging
 * and upload of 4 GiB of u32 keys took 0.15-0.19 s after the stream's
 * last byte, of 0.4-0.55 s in all from it to the answer.
 *
 * A stream of kv lines sends its text as it comes, for the device that
 * puts the lines in order to take, and the words of the lines parsed so
 * far (lineahead.h) as their parse reaches them, in order. */
#ifndef CLSORT_SENDAHEAD_H
#define CLSORT_SENDAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "encode.h"

/* Whether a stream of f's records may be sent ahead: bare keys, records
 * packed in words as wide (enc_words_in_place), or kv lines. */
bool sa_applies(const struct enc_format *f);

/* The stream of f's records at data has delivered len bytes, and its
 * device is about to be opened ahead: sa_send may send them.  Once a
 * process, on the thread that reads the stream, as sa_grow. */
void sa_begin(const struct enc_format *f, const unsigned char *data, uint64_t len);
void sa_grow(uint64_t bytes);

/* The words of the stream's first lines lines, at words, are parsed
 * (lineahead.h); words NULL: they are about to go, and nothing reads them
 * once this returns. */
void sa_parsed(const void *words, size_t lines);

/* The stream is complete (its bytes stay where they are for its sort) or
 * not (they leave that memory, or another input comes): what was sent is
 * kept for the sort, or dropped.  Nothing reads the stream's bytes once
 * this returns.  Before the sort opens the device, whose open waits for
 * sa_send to return. */
void sa_end(bool complete);

/* On the thread of dev_open_ahead, with d open and its staging buffers
 * made: send the stream's words to d as they come, into a buffer of at
 * most most bytes, and with text (kv lines whose device puts them in
 * order) their text into another as large, their words then into half
 * that, until sa_end; then leave them in d->sent, where the stream is
 * complete and all of it came within those. */
void sa_send(struct dev_ctx *d, uint64_t most, bool text);

#endif
