/* --check: is the input already sorted? */
#ifndef CLSORT_CHECK_H
#define CLSORT_CHECK_H

#include "clsort.h"
#include "encode.h"
#include "input.h"

/* 0 when the records of all inputs, taken in order, are sorted (with
 * -u: no two keys equal);
 * CLS_E_DISORDER after reporting the first record out of order (unless
 * quiet); CLS_E_FAIL on a bad record. */
int check_sorted(const struct enc_format *f, const struct in_set *in, bool quiet);

#endif
