/* Key definitions of the command line: clsort's -K FIELD[,TYPE][,r] and
 * sort(1)'s -k N[,M][ngbr], gathered in the order given into the keys of a
 * sort of text lines (struct cls_key), the first the primary. */
#ifndef CLSORT_KEYDEF_H
#define CLSORT_KEYDEF_H

#include <stdbool.h>
#include <stddef.h>

#include "clsort.h"

struct kd_list {
	struct cls_key *keys;
	bool *inherit;		/* takes --descending (sort's rule, below) */
	bool sort_syntax;	/* a key came as sort's -k: fields split at blanks
				 * unless -t says otherwise */
	bool own_syntax;	/* a key came as -K */
	size_t n, cap;
};

/* Append the key of -K arg: FIELD (0 for the whole line, up to 65535),
 * then TYPE (u32, i32, f32, u64, i64, f64 or str, the default) and r for a
 * descending key, each after a comma, e.g. "3,u32", "2,str,r", "2,r".  0,
 * or -1 with a one-line message in err. */
int kd_add_key(struct kd_list *l, const char *arg, char *err, size_t errlen);

/* Append sort's key definition, def being "N,M" (fields N to M, M at
 * least N) with the options n (a number, cls_key's exact) or g (a float:
 * f64; not beside n or h), h (a number and its
 * unit, cls_key's human), V (cls_key's version), f (fold), b (blanks: a
 * number's are skipped anyway), and r; or "N" with the same
 * options, a key that runs from field N to the line's end (N 1 with no n,
 * g or b: the whole line).  As in sort, a key with options of its own does not take
 * --descending.  0, or -1 with a message in err that names the clsort
 * way where there is one. */
int kd_add_sort_key(struct kd_list *l, const char *def, char *err, size_t errlen);

/* Append the key of -F field with sort's -n: the number at the start of
 * the field (a number up to 65535; 0: the line's), as sort -n reads it.
 * 0, or -1 with a message in err. */
int kd_add_number(struct kd_list *l, const char *field, char *err, size_t errlen);

/* Once the separator is known (blank, or the byte sep): a number's key
 * of several fields is read from its first field alone, as sort reads the
 * number at the field's start and stops at the separator, but for one of
 * sort -n, -h or -g split at a blank byte, which may begin past an empty
 * field (sort skips blanks first) and keeps its fields; -1 with a
 * message in err where a number may go on past the separator (-t . or a
 * digit).  one_number: the one key of l is a number (its type comes from
 * -k TYPE where it is not its own). */
int kd_check_ends(struct kd_list *l, bool one_number, bool blank, char sep, char *err,
		  size_t errlen);

/* sort's options that apply to the keys with none of their own. */
struct kd_options {
	bool descending;
	bool numeric;	/* the type f64: sort's -n, read exactly */
	bool general;	/* with numeric, sort's -g: a float */
	bool human;	/* with numeric, sort's -h */
	bool version;	/* sort's -V */
	bool month;	/* sort's -M */
	bool fold;	/* sort's -f */
	bool blanks;	/* sort's -b */
};

/* Apply o to the keys that take them: those of sort's -k with no option
 * of their own. */
void kd_finish(struct kd_list *l, const struct kd_options *o);

/* Whether a key of l is one that only a composed key holds: sort's -n
 * and -h, -V, -M, -f or a string's b. */
bool kd_composed(const struct kd_list *l);

void kd_free(struct kd_list *l);

#endif
