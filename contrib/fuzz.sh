#!/bin/sh
# Long fuzzing runs by hand with libFuzzer: builds the targets of tests/fuzz/
# with clang -fsanitize=fuzzer,address,undefined and runs one for SECONDS,
# its corpus in DIR/corpus-TARGET (started from tests/fuzz/seeds/TARGET),
# any crashing input in DIR.  The targets' messages on bad input are
# dropped (-close_fd_mask=2); libFuzzer's and the sanitizers' reports stay.
#
#   contrib/fuzz.sh TARGET [SECONDS] [DIR]     TARGET: npy, kv, num or argv
#
# Run from a configured and built source tree (config.h and src/kernels.c
# exist).  The argv target runs $CLSORT, by default ./clsort: build that one
# with ./configure --enable-sanitizers for its memory errors to be seen.
set -eu

target=${1:?usage: contrib/fuzz.sh npy|kv|num|argv [SECONDS] [DIR]}
seconds=${2:-600}
dir=${3:-fuzz-out}
top=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-clang}

[ -f "$top/config.h" ] && [ -f "$top/src/kernels.c" ] ||
	{ echo "fuzz.sh: configure and make first" >&2; exit 2; }
mkdir -p "$dir/corpus-$target"
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
	-I$top -I$top/src -DCL_TARGET_OPENCL_VERSION=120 -DCL_USE_DEPRECATED_OPENCL_1_2_APIS
	$(pkg-config --cflags OpenCL popt 2>/dev/null || true)"
libs="$(pkg-config --libs OpenCL popt 2>/dev/null || echo -lOpenCL -lpopt) -lpthread -lm"

# The library's sources: every file of src/ but the program's own.
srcs=
for f in "$top"/src/*.c; do
	case ${f##*/} in main.c|dist_*.c) ;; *) srcs="$srcs $f" ;; esac
done
if [ "$target" = argv ]; then
	srcs=
	export CLSORT="${CLSORT:-$top/clsort}"
fi
# shellcheck disable=SC2086
$CC $flags -fsanitize=fuzzer -o "$dir/fuzz_$target" "$top/tests/fuzz/fuzz_$target.c" $srcs $libs
cd "$dir"
exec ./"fuzz_$target" -max_total_time="$seconds" -max_len=4096 -timeout=60 -close_fd_mask=2 \
	"corpus-$target" "$top/tests/fuzz/seeds/$target"
