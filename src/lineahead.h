/* Lines parsed ahead of their sort.  A single kv stream read whole before
 * its sort (input.c's region) is cut into chunks at line ends as its bytes
 * come; a thread counts each chunk's lines, which numbers them, and a few
 * more parse each into the run's sort words and line table, as enc_encode
 * would after the last byte.  A mapped file is parsed the same way on all
 * threads while the device starts.  The planner takes the count
 * (enc_plan_init: a stream's), the run the words and the table
 * (la_adopt, then enc_encode), where they are one run's; anything else (a
 * line without a key, a stream that leaves its region, more lines than a
 * run's index holds, too little memory) leaves the lines to be parsed as
 * usual, which also names a bad line. */
#ifndef CLSORT_LINEAHEAD_H
#define CLSORT_LINEAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"

struct line_ahead;

/* Whether f's lines may be parsed ahead: no --skip-bad (whose messages
 * the usual parse gives), no -u, and threads to spare: a stream's from 2
 * up (a counter and a parser beside its reader), a file's from 4 (while a
 * device starts). */
bool la_applies(const struct enc_format *f, bool stream);

/* Told, under the parse's lock, that the words of the first lines lines,
 * at words, are parsed; words NULL: they are about to go, and nothing may
 * read them once it returns. */
typedef void (*la_told)(const void *words, size_t lines);

/* Start parsing the lines of the input at data, which has len bytes so
 * far, into words and tables for at most max_lines lines (reserved, taken
 * as lines come).  whole: not 0 where the input is all there (a file), and
 * holds that many lines.  told (may be NULL): told as lines are parsed in
 * order.  NULL where they would not fit, the memory cannot be reserved or
 * the threads cannot start (nothing is said: the lines are parsed as
 * usual). */
struct line_ahead *la_start(const struct enc_format *f, const unsigned char *data, size_t len,
			    uint64_t whole, uint64_t max_lines, la_told told);

/* The stream has delivered bytes in all.  Returns at once (on the reading
 * thread); a stopped or NULL a is not told. */
void la_grow(struct line_ahead *a, uint64_t bytes);

/* Stop reading the stream's bytes, which are about to move or go away;
 * returns once nothing reads them.  a may be NULL. */
void la_stop(struct line_ahead *a);

/* The stream has ended as the input file: where a holds its lines, wait
 * until they are counted (not parsed) and set *lines to their count.
 * False where a (may be NULL) does not (then they are counted as usual). */
bool la_lines(struct line_ahead *a, const struct in_file *file, uint64_t *lines);

/* Wait for the last of file's lines parsed (parsing on this thread too)
 * and lend b the words and line table where a holds all of them and they
 * are exactly a run's cap lines: b's run that holds them all is then not
 * parsed again (enc_encode), and a later run (of another input) fits
 * them.  Once; la_free releases them, after b.  a may be NULL. */
bool la_adopt(struct line_ahead *a, const struct in_file *file, size_t cap, struct enc_batch *b);

/* Stop, then release all that a holds but what a batch adopted; a may be
 * NULL.  -vv: what it did. */
void la_free(struct line_ahead *a);

#endif
