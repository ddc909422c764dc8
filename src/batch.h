/* A run's records as the encoder hands them on: the format that says how
 * input bytes become records and sort words, and a run's batch (its
 * slices of the inputs, its words, kv's line table and composed keys).
 * The parsers (encode_kv.h, lineahead.h) fill these; encode.h plans and
 * encodes runs with them, and the sort and the output read them. */
#ifndef CLSORT_BATCH_H
#define CLSORT_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "clsort.h"
#include "input.h"
#include "keys.h"

struct key_ahead;
struct line_ahead;

struct enc_format {
	enum cls_format fmt;
	const struct key_type *kt;
	size_t rec_size;	/* bin: bytes per record */
	size_t key_off;		/* bin: key offset in a record */
	size_t key_len;		/* bin: bytes of the key in a record */
	bool tail;		/* keys longer than their word: ties ordered by tie.c */
	bool indexed;		/* words carry the record index */
	enum word_kind kind;
	uint64_t mask;		/* xored into keys: all ones when descending */
	char sep;		/* kv */
	char eol;		/* kv: the byte that ends a line: newline, or NUL (-z) */
	bool blank;		/* kv: fields split at runs of blanks, not at sep */
	unsigned field;		/* kv: the key is this field, from 1; 0: the whole line */
	unsigned field_span;	/* kv: a string key's fields past the first (cls_key) */
	bool num_lead;		/* kv: a float key is the number at its field's start
				 * (cls_key) */
	bool skip_bad;		/* kv: drop lines whose key does not parse */
	bool unique;		/* keep the first record of each key */
	bool str;		/* kv: string keys (strkey.h); kt is NULL */
	const struct cls_key *keys;	/* kv: several keys, composed into one string */
	size_t nkeys;			/* key (kvkey.h), str set; else 0 */
	unsigned threads;
	/* kv: the single stream's lines parsed while it arrived
	 * (lineahead.h), or NULL. */
	struct line_ahead *ahead;
	/* Bare keys: the single stream's counted while it arrived
	 * (keyahead.h), or NULL. */
	struct key_ahead *key_ahead;
};

/* A stretch of one input file inside a run. */
struct enc_slice {
	const struct in_file *file;
	size_t off, len;	/* bytes */
	uint64_t first_no;	/* record (bin) or line (kv) number in the file, from 0 */
	size_t first_rec;	/* index in the run of its first record */
};

struct kv_line {
	const char *p;
	size_t len;		/* without the line end */
};

/* Memory for composed keys, in blocks that never move. */
struct enc_block {
	struct enc_block *next;
	size_t size, used;
	unsigned char data[];
};

/* One run: its slices, and buffers for up to cap records. */
struct enc_batch {
	struct enc_slice *slices;
	size_t nslices, slices_cap;
	size_t n;		/* records */
	void *words;		/* cap words, where the whole run is encoded at once */
	struct kv_line *lines;	/* kv: cap lines */
	struct kv_line *keys;	/* kv, several keys: cap lines' composed keys... */
	struct enc_block *blocks;	/* ...kept in these */
	uint64_t skipped;	/* kv --skip-bad: lines dropped... */
	uint64_t skipped_fields;	/* ...of them for fewer fields than the key's */
	/* bin: where the run's n words come from when they are not the
	 * slices' records in order (a key range's records, taken from
	 * slices that hold the whole input): fills words [first,
	 * first + count) into dst.  NULL: the slices. */
	int (*pick)(const void *ctx, size_t first, size_t count, void *dst);
	const void *pick_ctx;
	/* kv: lines its words and line table hold already, parsed from
	 * parsed_at on (a stream's, while it arrived: lineahead.h); the run
	 * of exactly those lines is not parsed again. */
	size_t parsed;
	const unsigned char *parsed_at;
	bool lent;		/* words, lines and keys are that parse's, which
				 * frees them (the blocks are the batch's) */
	/* kv: the line table's entries are not yet written (a parse that
	 * left them for whoever reads them: enc_kv_lines), the run's lines
	 * lying side by side in its one slice. */
	bool lines_due;
};

/* Release the composed keys of b's run. */
static inline void enc_free_keys(struct enc_batch *b)
{
	struct enc_block *bl, *next;

	for (bl = b->blocks; bl; bl = next) {
		next = bl->next;
		free(bl);
	}
	b->blocks = NULL;
}

#endif
