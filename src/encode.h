/* Formats: how input bytes become records and sort words.
 *
 * bin: fixed-size little-endian records (by default the key alone);
 * kv:  text lines KEY<sep>VALUE.
 * A run of records is planned as slices of the input files, encoded into
 * words (the sortable key, with the record's index in the run where the
 * record must be found again), and after the sort the index leads back to
 * the record's bytes.  Cursors walk records one by one, for merges and
 * --check. */
#ifndef CLSORT_ENCODE_H
#define CLSORT_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "clsort.h"
#include "input.h"
#include "keys.h"

/* Resolve the format from the options; CLS_E_FAIL on a bad combination. */
int enc_setup(struct enc_format *f, const struct cls_opts *o);

/* Check what can be checked before reading: bin files must hold whole
 * records.  0 or CLS_E_FAIL after a message naming the file. */
int enc_validate(const struct enc_format *f, const struct in_set *in);

struct enc_planner {
	const struct enc_format *f;
	const struct in_set *in;
	uint64_t *counts;	/* records in each file */
	uint64_t total;		/* records in all */
	size_t file, off;
	uint64_t no;
};

/* Bare keys whose sort word turns back into the key (no payload, no
 * index, no longer key): sorted words are the output. */
bool enc_bare_keys(const struct enc_format *f);

/* Whether each record's sort word is as wide as the record and can be
 * made where the record lies (bare keys; records packed, enc_packs, that
 * fill their word): encoded in place, the input's memory holds its
 * words; decoded (or unpacked) in place, the output's. */
bool enc_words_in_place(const struct enc_format *f);

/* Records in data[0..len) of an input: bin records, or kv lines (a last
 * one without its line end counted too). */
uint64_t enc_count_records(const struct enc_format *f, const void *data, size_t len);

/* Count the records of every input (kv lines in parallel) and start
 * planning at the first.  0 or CLS_E_FAIL when out of memory. */
int enc_plan_init(struct enc_planner *p, const struct enc_format *f, const struct in_set *in);
void enc_plan_free(struct enc_planner *p);

/* Plan the next run of at most cap records into b's slices; false when
 * the input is exhausted.  CLS_E_FAIL (negative) when out of memory. */
int enc_plan_next(struct enc_planner *p, size_t cap, struct enc_batch *b);

/* True when every record has been planned. */
bool enc_plan_done(const struct enc_planner *p);

/* Fill b->words (and b->lines, b->keys) for the whole planned run.  0, or CLS_E_FAIL
 * after a message naming file and line of a bad key. */
int enc_encode(const struct enc_format *f, struct enc_batch *b);

/* Room in b for runs of up to cap records of f: their words where a whole
 * run is encoded at once (kv lines, -u), kv's line table, and the
 * composed keys' table of several keys.  0 or CLS_E_FAIL after a message;
 * enc_batch_free releases what was had either way. */
int enc_batch_alloc(const struct enc_format *f, size_t cap, struct enc_batch *b);
/* Release all that b holds: its buffers, slices and composed keys. */
void enc_batch_free(struct enc_batch *b);

/* Whether f's records fit in their sort words beside their key, an
 * invertible integer key (u32 keys: records of up to 8 bytes; u64: 16),
 * sorted without -u: packed, the sortable key above enc_packed_low bits
 * and the record's other bytes below them, which take no part in the
 * order, the words are the records themselves, in no need of an index
 * (equal keys keep their order in a stable sort of the key bits alone)
 * nor of a gather. */
bool enc_packs(const struct enc_format *f);
unsigned enc_packed_low(const struct enc_format *f);
/* Pack records [first, first+count) of the run into dst (as
 * enc_encode_range); unpack n packed words into their n records at dst
 * (which may be words where they fill them, enc_words_in_place). */
int enc_pack_range(const struct enc_format *f, const struct enc_batch *b, size_t first,
		   size_t count, void *dst);
void enc_unpack(const struct enc_format *f, const void *words, size_t n, unsigned char *dst);

/* bin only: encode records [first, first+count) of the run into dst,
 * without touching b->words.  0 or CLS_E_FAIL. */
int enc_encode_range(const struct enc_format *f, const struct enc_batch *b, size_t first,
		     size_t count, void *dst);

/* The words of count records at src whose words are made where they lie
 * (enc_words_in_place: bare keys, or records packed), as the run whose
 * first they are makes them (enc_encode_range, enc_pack_range): a
 * stream's, before any run holds them (sendahead.h). */
void enc_words_of(const struct enc_format *f, const unsigned char *src, size_t count, void *dst);

/* Bytes of record i of the run (kv: without the line end; its line table
 * made: enc_kv_lines). */
void enc_record(const struct enc_format *f, const struct enc_batch *b, size_t i,
		const unsigned char **p, size_t *len);

/* The bytes of a record as enc_copy_record_bytes lays them out: a bin
 * record's, or a kv line's entry in the line table (struct kv_line). */
size_t enc_record_bytes(const struct enc_format *f);
/* Bytes [from, from+len) of b's records side by side in index order (bin
 * records; kv: their line table's entries, made: enc_kv_lines), copied
 * to dst; past the last record, zeros. */
void enc_copy_record_bytes(const struct enc_format *f, const struct enc_batch *b, uint64_t from,
			   size_t len, void *dst);

/* A stretch of a run's kv lines: lines [first, first + n) of the run;
 * where its line table is due, they lie side by side in one slice, their
 * text from p to end. */
struct kv_stretch {
	const char *p, *end;
	size_t first, n;
};

/* Cuts run b's lines into stretches, about one for each thread (in each
 * slice, where the table is due): shares of the line table's entries where
 * it is made, else of the text, of about equal bytes, their lines counted
 * on the threads.  Their count, and them in order in *out (the caller
 * frees it); 0 where b has no lines or memory ran out. */
size_t enc_kv_stretches(const struct enc_format *f, const struct enc_batch *b,
			struct kv_stretch **out);

/* Fills run b's line table from the text where it is due (b->lines_due):
 * 0, or CLS_E_FAIL after a message.  Not on two threads at once. */
int enc_kv_lines(const struct enc_format *f, const struct enc_batch *b);

/* Record index carried by a word (indexed formats): inline, as the gather
 * and the deal take one a record.  Runs hold fewer than 2^32 records, and
 * string keys use the upper half of a 128-bit word's low 64 bits. */
static inline size_t enc_word_index(const struct enc_format *f, const void *words, size_t i)
{
	if (f->kind == WORD64)
		return (uint32_t)((const uint64_t *)words)[i];
	return (uint32_t)((const struct word128 *)words)[i].lo;
}

/* Sortable key of the record at rec (kv: the line, len bytes without its
 * line end), mask applied: KEY_OK, or why a kv line has none. */
int enc_key(const struct enc_format *f, const unsigned char *rec, size_t len, uint64_t *key);

/* Walks the records of a byte range in output form: bin records, or kv
 * lines each ending in the line end (but for a last one). */
struct enc_cursor {
	const struct enc_format *f;
	const unsigned char *p, *end;
	const char *name;	/* for messages */
	uint64_t no;		/* number of the current record, from 1 */
	const unsigned char *rec;
	size_t len;		/* kv: without the line end */
	uint64_t key;		/* sortable key, mask applied */
	const unsigned char *kp;	/* string keys: the key's bytes */
	size_t klen;
	bool digits;		/* kv: keys may be read as digits (kvk_digits_ok) */
};

void enc_cursor_init(struct enc_cursor *c, const struct enc_format *f, const void *data,
		     size_t len, const char *name);
/* Advance: 1 with rec/len/key set, 0 at the end, CLS_E_FAIL after a
 * message for a bad kv line (lines are skipped with --skip-bad). */
int enc_cursor_next(struct enc_cursor *c);

/* Order of the keys of two cursors' records: negative, 0 or positive. */
int enc_cursor_cmp(const struct enc_cursor *a, const struct enc_cursor *b);

#endif
