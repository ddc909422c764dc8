/* clsort: shared types of the sort pipeline: options, status codes. */
#ifndef CLSORT_H
#define CLSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses, as sort(1). */
enum cls_exit { CLS_EXIT_OK = 0, CLS_EXIT_DISORDER = 1, CLS_EXIT_ERROR = 2 };

/* Return codes of the engine: 0 or negative.  Each module prints its own
 * message before returning an error; main only maps codes to statuses. */
enum cls_err {
	CLS_OK = 0,
	CLS_E_FAIL = -1,	/* error already reported */
	CLS_E_DISORDER = -2,	/* --check found unsorted input */
	CLS_E_PIPE = -3,	/* output pipe closed by the reader */
};

enum cls_format { CLS_FMT_BIN, CLS_FMT_KV, CLS_FMT_NPY };
enum cls_check { CLS_CHECK_NONE, CLS_CHECK_REPORT, CLS_CHECK_QUIET };
enum cls_local { CLS_LOCAL_AUTO, CLS_LOCAL_BITONIC, CLS_LOCAL_MERGE };
/* How the OpenCL engine sorts a run: by the radix sort, or by tiles and
 * the global passes that join them (bitonic networks on a GPU, merge-path
 * merges on a CPU device). */
enum cls_devsort { CLS_DEVSORT_AUTO, CLS_DEVSORT_RADIX, CLS_DEVSORT_BITONIC };

struct key_type;

/* One of several keys of text lines (-K, or sort's -k given more than
 * once), the first the primary. */
struct cls_key {
	unsigned field;			/* from 1; 0: the whole line */
	const struct key_type *type;	/* NULL: a byte string */
	bool reverse;
	unsigned span;			/* a string: the fields past the first it
					 * takes (CLS_SPAN_END: all) */
	bool lead;			/* a float: the number at its field's start,
					 * as sort -g reads it (key_type's
					 * parse_lead) */
	bool human;			/* with exact: the unit right after the
					 * number (K, M, G...) orders first, as
					 * sort -h has it */
	bool version;			/* a string: in sort -V's order, numbers
					 * within it by value */
	bool fold;			/* a string: a to z read as A to Z (sort -f);
					 * with human, the unit read so */
	bool blanks;			/* a string: its leading blanks not read
					 * (sort -b) */
	bool month;			/* a string: sort -M's month, JAN to DEC
					 * (any case) after its blanks, anything
					 * else first */
	bool exact;			/* a float: the number at its field's
					 * start as sort -n reads it, 0 where
					 * none, ties of its double ordered
					 * exactly (deckey.h) */
};

/* A string key's fields past its first: all, to the line's end (sort's
 * -k N; sort's -k N,M takes M - N). */
#define CLS_SPAN_END (~0u)

struct cls_opts {
	const struct key_type *key;
	bool key_explicit;	/* -k given (npy: else the dtype's) */
	const char *field_name;	/* npy: the key field of structured records */
	enum cls_format format;
	bool bare_default;	/* bare binary keys because nothing named a format
				 * or a record (-f, the text options, -R) */
	size_t record_size;	/* bin: bytes per record; 0 = the key alone */
	size_t key_offset;	/* bin: offset of the key inside a record */
	char separator;		/* kv */
	bool blank_sep;		/* kv: fields split at runs of blanks (-t blank) */
	unsigned field;		/* kv: the key is this field, from 1; 0: the whole line */
	unsigned field_span;	/* kv: a string key's fields past the first (cls_key) */
	bool num_lead;		/* kv: a float key is the number at its field's start
				 * (cls_key) */
	bool zero_terminated;	/* kv: lines end in NUL (-z) */
	bool str_key;		/* kv: the key is a byte string (-k str); key unused */
	const struct cls_key *keys;	/* kv: several keys (2 or more), for all of */
	size_t nkeys;			/* which the options above are unused; else 0 */
	bool descending;
	bool stable;
	bool unique;		/* keep the first record of each key */
	bool merge;		/* the inputs are sorted: merge them (-m) */
	uint64_t header;	/* kv: lines at the top of each input that pass unsorted */
	bool skip_bad;
	enum cls_check check;
	const char *output;	/* NULL: stdout */
	bool no_sync;		/* -o: do not fsync the output */
	const char *device;	/* device spec */
	uint64_t buffer_bytes;	/* -S in bytes, 0 = default */
	double buffer_percent;	/* -S N%, 0 = not given */
	uint64_t memory_bytes;	/* --memory, 0 = default */
	const char *tmpdir;
	uint64_t host_max;	/* sort up to this many records on the host... */
	bool host_max_set;	/* ...when set; else as measured */
	enum cls_local local;
	enum cls_devsort devsort;	/* --device-sort */
	unsigned threads;	/* host threads, 0 = online CPUs */
	int verbose;
	bool progress;		/* --progress */
	const char *const *files;
	size_t nfiles;
};

#endif
