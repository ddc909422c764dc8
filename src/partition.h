/* Cutting an input into key ranges that each fit one run.
 *
 * Splitters are drawn from a sample of the input's records and ordered by
 * (sortable key, position in the input), so that equal keys are split by
 * position and even an input of one key spreads evenly.  Every record is
 * then copied, on all threads, into the buffer of its range, in input
 * order.  Sorted one after another, each stably, and written in order, the
 * ranges are the sorted output: no merge. */
#ifndef CLSORT_PARTITION_H
#define CLSORT_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "input.h"

/* part_split's answer when a kv line has no key and bad lines are not
 * skipped: sort the input the other way, which names the line. */
#define PART_BAD_LINE (-20)

struct part_set {
	struct in_set *ranges;		/* count of them, in key order */
	size_t count;
	struct in_file *files;		/* one per range, in buf */
	unsigned char *buf;
	size_t buf_len;
};

/* Cut records records of in into ranges that each hold about cap records,
 * threads at a time.  0, PART_BAD_LINE, or CLS_E_FAIL after a message. */
int part_split(const struct enc_format *f, const struct in_set *in, uint64_t records, size_t cap,
	       struct part_set *p);

/* Cut records records of in into up to nranges ranges of about equal
 * size, from per samples a range; whole_keys: every key in one range (for
 * -u and string keys, whose equal words must meet), else equal keys split
 * by position.  Same returns as part_split. */
int part_split_n(const struct enc_format *f, const struct in_set *in, uint64_t records,
		 size_t nranges, size_t per, bool whole_keys, struct part_set *p);

/* The pieces of part_split_n, for inputs cut over several processes,
 * where in is a slice of the inputs that starts base bytes into them (the
 * positions that break ties are global). */

/* A splitter, or a sampled record: its key, then its position (the byte
 * offset of the record in the inputs taken end to end) breaks ties. */
struct part_key {
	uint64_t key, pos;
};

/* A sampled record, and the share of the records it stands for. */
struct part_sample {
	struct part_key at;
	double weight;
};

/* Sample up to want records of in into out (want of them); returns how
 * many were taken (kv lines without a key are not). */
size_t part_sample(const struct enc_format *f, const struct in_set *in, uint64_t base,
		   size_t want, struct part_sample *out);

/* Sort the got samples and pick up to nranges - 1 splitters from them into
 * sp, in order; returns how many. */
size_t part_splitters(struct part_sample *smp, size_t got, size_t nranges, bool whole_keys,
		      struct part_key *sp);

/* Sample records records of in, per a range, and pick up to nranges - 1
 * splitters into sp (room for nranges), as part_split_n does; returns
 * how many, or SIZE_MAX after a message. */
size_t part_pick(const struct enc_format *f, const struct in_set *in, uint64_t records,
		 size_t nranges, size_t per, bool whole_keys, struct part_key *sp);

/* Copy every record of in into the range the nsp splitters sp give it:
 * p gets nsp + 1 ranges.  Same returns as part_split. */
int part_scatter(const struct enc_format *f, const struct in_set *in, uint64_t base,
		 const struct part_key *sp, size_t nsp, struct part_set *p);

/* The cut that copies nothing: the records of in counted per range of
 * the nsp splitters sp, piece by piece, so that each range's records can
 * then be dealt straight from the input, piece by piece
 * (part_sieve_piece), or copied out (part_sieve_copy). */
struct classifier;
struct piece;
struct part_sieve {
	const struct enc_format *f;
	struct classifier *cls;	/* of its own copy of the splitters */
	struct part_key *sp;
	struct piece *pcs;	/* the input in pieces of whole records */
	size_t npieces, nranges;
	size_t stride;
	size_t *start;		/* start[i * stride + r]: bytes of range r in the
				 * pieces before piece i (i up to npieces) */
};

/* Count; small: in pieces small enough for part_sieve_piece.  0,
 * PART_BAD_LINE, or CLS_E_FAIL after a message. */
int part_sieve_init(struct part_sieve *s, const struct enc_format *f, const struct in_set *in,
		    uint64_t base, const struct part_key *sp, size_t nsp, bool small);

/* Bytes of range r's records. */
uint64_t part_sieve_bytes(const struct part_sieve *s, size_t r);

/* bin: the sort words of piece i's records, into buf (of
 * part_sieve_piece_room bytes): range r's, in input order, from word
 * at[r] on, as many as the range has records in the piece.  Range r's
 * words of piece i are its records [start[i * stride + r] / rec_size,
 * start[(i + 1) * stride + r] / rec_size) in the range.  Indexed words
 * carry each record's number in the input (its position over the record
 * size), which must fit 32 bits. */
size_t part_sieve_piece_room(const struct part_sieve *s);
void part_sieve_piece(const struct part_sieve *s, size_t i, void *buf, size_t *at);

/* Copy the records of range r (SIZE_MAX: of every range, one range after
 * another) into p.  0 or CLS_E_FAIL after a message. */
int part_sieve_copy(const struct part_sieve *s, size_t r, struct part_set *p);
void part_sieve_free(struct part_sieve *s);

void part_free(struct part_set *p);

/* Ranges part_split would make of records records with runs of cap. */
size_t part_count(uint64_t records, size_t cap);

#endif
