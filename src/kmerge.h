/* Merging k sorted ranges into one on one thread, stably: of equal keys,
 * the earlier range's records first.  Fixed-size records whose sort word
 * orders them go through a tournament tree; lines, and records whose keys
 * are longer than their words, through a heap of cursors.  merge.c merges
 * runs with them, a part per thread or in one stream. */
#ifndef CLSORT_KMERGE_H
#define CLSORT_KMERGE_H

#include <stddef.h>

#include "encode.h"
#include "merge.h"
#include "output.h"

/* Merge k sorted ranges, given in run order, into w, or where dst is not
 * NULL (not -u, runs whose lines all end) straight into dst, room bytes,
 * which the ranges fill exactly: fixed-size records whose sort word orders
 * them through the tournament tree, others through kmerge_heap. */
int kmerge(const struct enc_format *f, const struct mrg_run *ranges, size_t k,
	   struct out_writer *w, unsigned char *dst, size_t room);

/* Heap-merge k sorted byte ranges, given in run order, into w, or where
 * dst is not NULL (not -u, runs whose lines all end) straight into dst,
 * room bytes, which the ranges fill exactly.  A range that is an input
 * (-m) is checked to be sorted: CLS_E_FAIL after a message naming the
 * first record out of order. */
int kmerge_heap(const struct enc_format *f, const struct mrg_run *ranges, size_t k,
		struct out_writer *w, unsigned char *dst, size_t room);

#endif
