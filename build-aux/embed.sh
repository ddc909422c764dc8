#!/bin/sh
# Turn OpenCL C sources into a C file holding them as byte arrays, so the
# binary needs no kernel files at run time.  Usage: embed.sh FILE.cl... > kernels.c
set -e
echo '/* Generated from the kernels/ sources by build-aux/embed.sh; do not edit. */'
echo '#include "kernels.h"'
n=0
for f in "$@"; do
	echo "static const char k$n[] = {"
	od -An -v -tx1 "$f" | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
	echo '0x00 };'
	n=$((n + 1))
done
echo 'const struct kernel_source kernel_sources[] = {'
n=0
for f in "$@"; do
	echo "	{ \"$(basename "$f")\", k$n, sizeof k$n - 1 },"
	n=$((n + 1))
done
echo '	{ 0, 0, 0 }'
echo '};'
