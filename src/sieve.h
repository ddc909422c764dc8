/* The cut of an input into the key ranges of given splitters (picked by
 * partition.h): the records counted per range, piece by piece on every
 * thread, then dealt to the ranges as sort words or copied into memory,
 * each range's records in input order. */
#ifndef CLSORT_SIEVE_H
#define CLSORT_SIEVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "input.h"

/* The cut's answer (and part_split's) when a kv line has no key and bad
 * lines are not skipped: sort the input the other way, which names the
 * line. */
#define PART_BAD_LINE (-20)

/* The ranges a cut copied the records into. */
struct part_set {
	struct in_set *ranges;		/* count of them, in key order */
	size_t count;
	struct in_file *files;		/* one per range, in buf */
	unsigned char *buf;
	size_t buf_len;
};

/* A splitter, or a sampled record: its key, then its position (the byte
 * offset of the record in the inputs taken end to end) breaks ties. */
struct part_key {
	uint64_t key, pos;
};

/* Give back the ranges' memory. */
void part_free(struct part_set *p);

/* Length of the record at p (kv: of the line, without its end) and where
 * the next one starts. */
size_t part_record_len(const struct enc_format *f, const unsigned char *p,
		       const unsigned char *end, const unsigned char **next);

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

/* Pieces small enough for part_sieve_piece, whose words then stay in
 * the caches until they are handed on. */
#define PART_SIEVE_SMALL ((size_t)256 << 10)

/* Count; small: in pieces of PART_SIEVE_SMALL at most, for
 * part_sieve_piece.  0, PART_BAD_LINE, or CLS_E_FAIL after a message. */
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
 * another) into p: into dst, which has room for them, or where dst is NULL
 * into a buffer of p's own.  0 or CLS_E_FAIL after a message. */
int part_sieve_copy(const struct part_sieve *s, size_t r, unsigned char *dst, struct part_set *p);

void part_sieve_free(struct part_sieve *s);

#endif
