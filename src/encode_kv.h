/* The encode module's kv half (src/encode_kv.c): a run's lines parsed
 * into sort words and a line table, and the counting and cutting of lines
 * that the planning shares.  For encode.c and the lines parsed while a
 * stream arrives (lineahead.c); others go through encode.h. */
#ifndef CLSORT_ENCODE_KV_H
#define CLSORT_ENCODE_KV_H

#include <stdbool.h>
#include <stddef.h>

#include "batch.h"

/* Below this many bytes a job is not worth a thread. */
#define ENC_MIN_JOB_BYTES (1u << 20)

/* Lines in p[0..len): line ends (eol), plus one for an unterminated last
 * line. */
size_t enc_kv_count_lines(const char *p, size_t len, char eol);

/* End of a share of [p, end) about want bytes long: just past the first
 * line end (eol) at or after p + want, or end. */
const char *enc_kv_cut(const char *p, const char *end, size_t want, char eol);

/* Parse the count lines of [start, end) into b's words and line table
 * (and composed keys' table), from index first on, as enc_kv_encode does
 * without --skip-bad; the blocks that hold composed keys are put at the
 * head of *blocks.  False at a line without a key, where it stops, or
 * out of memory. */
bool enc_kv_parse(const struct enc_format *f, struct enc_batch *b, const char *start,
		  const char *end, size_t first, size_t count, struct enc_block **blocks);

/* enc_encode of a kv run. */
int enc_kv_encode(const struct enc_format *f, struct enc_batch *b);

#endif
