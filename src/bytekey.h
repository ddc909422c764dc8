/* Byte-string keys (-k bytes:N): N bytes at the key offset, compared as
 * unsigned bytes (memcmp order).  Their sort word holds the key's first
 * bytes big-endian, so that unsigned order is memcmp order: 4 of them for
 * N <= 4, else 8.  Keys of more than 8 bytes tie on their word where their
 * first 8 bytes are equal; tie.c orders those by the rest. */
#ifndef CLSORT_BYTEKEY_H
#define CLSORT_BYTEKEY_H

#include "keys.h"

/* Longest byte-string key. */
#define BYTES_MAX 64

/* The key type of spec, the text after "bytes:" (a decimal N from 1 to
 * BYTES_MAX); NULL when it is not one. */
const struct key_type *bytes_key_type(const char *spec);

#endif
