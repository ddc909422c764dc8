/* sort -V's order of strings, as GNU coreutils 9.1's sort -V (gnulib's
 * filevercmp) has it: numbers within them by value past their leading
 * zeros; the text between numbers byte by byte, but '~' before its end
 * and letters before other bytes; file suffixes (".tar.gz") set aside
 * unless all else ties; the empty string, ".", ".." and other names that
 * start with '.' first. */
#ifndef CLSORT_VERKEY_H
#define CLSORT_VERKEY_H

#include <stdbool.h>
#include <stddef.h>

#include "keysink.h"

/* The bytes of s[0..n) into o, each xored with inv and escaped where
 * escape (sink_put_esc): they compare byte by byte as sort -V compares
 * the strings. */
void ver_key(const unsigned char *s, size_t n, struct key_sink *o, unsigned char inv, bool escape);

/* sort -V's comparison of a[0..an) and b[0..bn): below, at or above 0,
 * as their ver_key bytes compare. */
int ver_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn);

#endif
