#!/usr/bin/env bats
# The kernels under Oclgrind, a simulator that checks every memory access:
# small sorts, crossing tile boundaries so that the global merge passes run
# too, for bare keys and for indexed words (64- and 128-bit), with both
# tile kernels.  Each must give the right order and no Oclgrind report
# (data race, uninitialized value, invalid access, API error).
load helpers
bats_require_minimum_version 1.5.0

setup() {
  command -v oclgrind > /dev/null || skip "oclgrind not installed"
  T=$BATS_TEST_TMPDIR
  # Oclgrind runs programs built for it: keep them out of the cache.
  export CLSORT_NO_CACHE=1
}

# Lines of an Oclgrind report: its messages name the kernel and the
# work-item, or the API call.
REPORT='Kernel: |Entity: |data race|[Uu]ninitiali[sz]ed|Invalid (read|write)|OCLGRIND|Oclgrind - |out of bounds|divergence'

# grind [--optimized|--races-only] OPTION... : clsort on Oclgrind's device
# (the only one it shows) into $T/got, stderr into $T/err; fails on a bad
# status or any report.  Oclgrind cannot interpret some instructions and
# intrinsics the optimizer emits ("freeze", llvm.usub.sat), so kernels are
# built with -cl-opt-disable unless --optimized (then data races only; the
# caller skips when Oclgrind cannot create the kernels).
grind() {
  local checks=(--check-api --data-races --uninitialized --build-options -cl-opt-disable)
  if [ "$1" = --optimized ]; then
    checks=(--check-api --data-races)
    shift

  elif [ "$1" = --races-only ]; then
    checks=(--check-api --data-races --build-options -cl-opt-disable)
    shift
  fi
  # Oclgrind's device says it is a GPU, where auto takes the radix sort
  # for every run until the networks' program is cached (never, here):
  # the networks unless a case names the sort.
  [[ " $* " == *" --device-sort="* ]] || set -- --device-sort=bitonic "$@"
  oclgrind "${checks[@]}" "$CLSORT" -d 0:0 "$@" > "$T/got" 2> "$T/err" ||
    fail "clsort $* under oclgrind: status $?: $(cat "$T/err")"
  if grep -Eq "$REPORT" "$T/err"; then
    fail "oclgrind reports on clsort $*: $(grep -v 'warning' "$T/err" | head -40)"
  fi
}

# u32 keys of FILE, sorted, as decimal lines (-r: descending).
ref_u32() {
  od -An -v -tu4 -w4 "$1" | sort -n ${2:+-r}
}

# grind_u32 N OPTION...: N random u32 keys, both tile kernels, checked
# against the reference order.
grind_u32() {
  local n=$1 k r=
  shift
  for a; do [ "$a" = -r ] && r=-r; done
  head -c $((n * 4)) /dev/urandom > "$T/in"
  for k in bitonic merge; do
    grind --local-kernel=$k "$@" "$T/in"
    od -An -v -tu4 -w4 "$T/got" | cmp - <(ref_u32 "$T/in" $r) ||
      fail "$n keys, $k $*: wrong order under oclgrind"
  done
}

@test "clsort runs on Oclgrind's device" {
  oclgrind "$CLSORT" -L > "$T/list"
  grep -q '^0:0  .*Oclgrind' "$T/list" || fail "no Oclgrind device: $(cat "$T/list")"
  head -c 400 /dev/urandom > "$T/in"
  CLSORT_WG=16 CLSORT_EPT=4 oclgrind --build-options -cl-opt-disable "$CLSORT" -d 0:0 -vv "$T/in" > /dev/null 2> "$T/err" ||
    fail "status $?: $(cat "$T/err")"
  grep -q 'device 0:0 .*Oclgrind' "$T/err" || fail "$(cat "$T/err")"
  grep -q 'tiles of 64 (work-group 16 x 4)' "$T/err" || fail "$(cat "$T/err")"
}

@test "a kernel without its barriers is reported (the check can fail)" {
  src=${TESTS_DIR:-$BATS_TEST_DIRNAME}/../kernels
  [ -d "$src" ] || skip "no kernel sources at $src"
  mkdir "$T/kernels"
  cp "$src"/*.cl "$T/kernels/"
  sed -i 's/barrier(CLK_LOCAL_MEM_FENCE);//g' "$T/kernels"/*.cl
  cmp -s "$src/bitonic.cl" "$T/kernels/bitonic.cl" && skip "no local barrier to remove"
  head -c 1200 /dev/urandom > "$T/in"
  CLSORT_KERNEL_DIR="$T/kernels" CLSORT_WG=16 CLSORT_EPT=4 oclgrind --data-races \
    --uninitialized --build-options -cl-opt-disable "$CLSORT" -d 0:0 "$T/in" > "$T/got" 2> "$T/err" || true
  grep -Eq "$REPORT" "$T/err" || fail "no report without barriers: $(head -20 "$T/err")"
}

@test "u32, 300 keys in tiles of 64: both tile kernels, no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  grind_u32 300
}

@test "u32 descending, 300 keys in tiles of 64: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  grind_u32 300 -r
}

@test "u32, sizes around the tile (63, 65, 129, 1000) in tiles of 64: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  for n in 63 65 129 1000; do
    grind_u32 $n
  done
}

@test "u32, 3000 keys with the default tile: no report" {
  grind_u32 3000
}

@test "u32, optimized kernels, 300 keys in tiles of 64: no data race" {
  export CLSORT_WG=16 CLSORT_EPT=4
  head -c 1200 /dev/urandom > "$T/in"
  if ! oclgrind "$CLSORT" -d 0:0 "$T/in" > /dev/null 2> "$T/err" &&
    grep -q 'Undefined external function' "$T/err"; then
    skip "oclgrind cannot create the optimized kernels: $(grep -m1 'Undefined external function' "$T/err")"
  fi
  for k in bitonic merge; do
    grind --optimized --local-kernel=$k "$T/in"
    od -An -v -tu4 -w4 "$T/got" | cmp - <(ref_u32 "$T/in") || fail "$k: wrong order"
  done
}

@test "f32 keys (indexed 64-bit words), 300 keys in tiles of 64: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  head -c 1200 /dev/urandom > "$T/in"
  "$CLSORT" "${DEV[@]}" -k f32 "$T/in" > "$T/want"
  for k in bitonic merge; do
    grind -k f32 --local-kernel=$k "$T/in"
    cmp "$T/want" "$T/got" || fail "$k: differs from the sort on the CPU device"
  done
}

@test "kv lines (indexed 64-bit words), 300 lines in tiles of 64: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  awk 'BEGIN { srand(7); for (i = 0; i < 300; i++) printf "%d:v%d\n", int(rand() * 40), i }' > "$T/in"
  sort -t: -k1,1n -s "$T/in" > "$T/want"
  for k in bitonic merge; do
    grind -f kv --local-kernel=$k "$T/in"
    cmp "$T/want" "$T/got" || fail "$k: not a stable numeric sort"
  done
}

@test "u64 records (indexed 128-bit words), 300 records in tiles of 64: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  head -c $((300 * 16)) /dev/urandom > "$T/in"
  "$CLSORT" "${DEV[@]}" -k u64 -R 16 --key-offset=8 "$T/in" > "$T/want"
  for k in bitonic merge; do
    grind -k u64 -R 16 --key-offset=8 --local-kernel=$k "$T/in"
    cmp "$T/want" "$T/got" || fail "$k: differs from the sort on the CPU device"
  done
}

@test "records put in order on the device (gather.cl), 16-, 8- and 12-byte records: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  "$REFSORT" gen-rec 301 16 8 u64 71 few > "$T/in"
  "$REFSORT" sort -k u64 -R 16 --key-offset 8 < "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 grind -vv -k u64 -R 16 --key-offset=8 "$T/in"
  cmp "$T/want" "$T/got" || fail "16-byte records: not refsort's order"
  grep -q 'device gather: 301 records' "$T/err" || fail "not gathered: $(cat "$T/err")"
  "$REFSORT" gen-rec 299 8 0 u32 72 few > "$T/in"
  "$REFSORT" sort -k u32 -R 8 -r < "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 grind -vv -k u32 -R 8 -r "$T/in"
  cmp "$T/want" "$T/got" || fail "8-byte records: not refsort's order"
  grep -q 'device gather: 299 records' "$T/err" || fail "not gathered: $(cat "$T/err")"
  "$REFSORT" gen-rec 257 12 4 u32 73 few > "$T/in"
  "$REFSORT" sort -k u32 -R 12 --key-offset 4 < "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 grind -vv -k u32 -R 12 --key-offset=4 "$T/in"
  cmp "$T/want" "$T/got" || fail "12-byte records: not refsort's order"
  grep -q 'device gather: 257 records' "$T/err" || fail "not gathered: $(cat "$T/err")"
}

# Data races only: the sums line_sums writes and line_scan reads are taken
# for uninitialized, as a second merge pass's words are (below).
@test "kv lines put in order on the device with their text (line_count, line_starts, line_sums, line_scan, line_copy), two work-groups: no data race" {
  export CLSORT_WG=16 CLSORT_EPT=4
  # Work-groups of 1024 lines and of 64 KiB of text (about 80 KB here);
  # values of up to 100 bytes, teams of 32 work-items copying each line.
  awk 'BEGIN { srand(74); for (i = 0; i < 1500; i++) {
    printf "%d:", int(rand() * 300); for (j = int(rand() * 100); j > 0; j--) printf "v"; print "" } }' \
    > "$T/in"
  printf '3:no line end' >> "$T/in"
  "$REFSORT" sort -f kv < "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 grind --races-only -vv -f kv "$T/in"
  cmp "$T/want" "$T/got" || fail "kv lines: not refsort's order"
  grep -q 'device gather: 1501 lines' "$T/err" || fail "not gathered: $(cat "$T/err")"
}

@test "whole-line string keys (128-bit words), 300 lines sharing prefixes, in tiles of 64: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  awk 'BEGIN { srand(11); split("/usr/share/doc/ /usr/lib/ /home/user/projects/", d, " ")
    for (i = 0; i < 300; i++) printf "%s%c%d\n", d[1 + int(rand() * 3)], 97 + int(rand() * 3), int(rand() * 50) }' > "$T/in"
  LC_ALL=C sort -s "$T/in" > "$T/want"
  for k in bitonic merge; do
    grind -F 0 -k str --local-kernel=$k "$T/in"
    cmp "$T/want" "$T/got" || fail "$k: differs from sort -s"
  done
}

@test "i64 bare keys (64-bit words), descending, 300 keys: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4
  head -c $((300 * 8)) /dev/urandom > "$T/in"
  "$CLSORT" "${DEV[@]}" -k i64 -r "$T/in" > "$T/want"
  for k in bitonic merge; do
    grind -k i64 -r --local-kernel=$k "$T/in"
    cmp "$T/want" "$T/got" || fail "$k: differs from the sort on the CPU device"
  done
}

# Data races only: Oclgrind 21.10 takes every word a second merge pass
# reads for uninitialized (as for CLSORT_GLOBAL=merge below), here where
# the passes go back and forth between two halves of one buffer; the
# outputs are checked.
@test "runs merged on the device from their sorted pieces, u32 and u64 records: no data race" {
  export CLSORT_WG=16 CLSORT_EPT=4 CLSORT_MERGE_ITEMS=16
  # 3000 keys in runs of 1024: parts of up to 512 words from 3 pieces each.
  head -c 12000 /dev/urandom > "$T/in"
  grind --races-only -vv -S 4K "$T/in"
  grep -q "merge of pieces" "$T/err" || fail "no merge of pieces: $(cat "$T/err")"
  od -An -v -tu4 -w4 "$T/got" | cmp - <(ref_u32 "$T/in") || fail "u32: wrong order"
  # Indexed 128-bit words, records with equal keys: the merge keeps them stable.
  perl -e 'srand(3); print pack("Q<Q<", int(rand(7)), $_) for 0 .. 1499' > "$T/rec"
  "$CLSORT" "${DEV[@]}" -R 16 -k u64 "$T/rec" > "$T/want"
  CLSORT_MERGE_RUNS=device grind --races-only -vv -S 16K -R 16 -k u64 "$T/rec"
  grep -q "merge of pieces" "$T/err" || fail "records: no merge of pieces"
  cmp "$T/want" "$T/got" || fail "records: differ from the sort on the CPU device"
}

@test "global merge-path passes (CLSORT_GLOBAL=merge), u32 and kv: no data race" {
  export CLSORT_WG=16 CLSORT_EPT=4 CLSORT_GLOBAL=merge CLSORT_MERGE_ITEMS=16
  head -c 4000 /dev/urandom > "$T/in"
  for k in bitonic merge; do
    grind --races-only --local-kernel=$k "$T/in"
    od -An -v -tu4 -w4 "$T/got" | cmp - <(ref_u32 "$T/in") || fail "$k: wrong order"
  done
  awk 'BEGIN { srand(9); for (i = 0; i < 300; i++) printf "%d:v%d\n", int(rand() * 40), i }' > "$T/in"
  sort -t: -k1,1n -s "$T/in" > "$T/want"
  grind --races-only -f kv "$T/in"
  cmp "$T/want" "$T/got" || fail "kv: not a stable numeric sort"
}

@test "global merge-path passes (CLSORT_GLOBAL=merge): no uninitialized value" {
  skip "Oclgrind 21.10 flags every word a second merge pass reads, even with the buffer zero-filled beforehand; races are checked above and the output is checked everywhere"
  export CLSORT_WG=16 CLSORT_EPT=4 CLSORT_GLOBAL=merge CLSORT_MERGE_ITEMS=16
  grind_u32 129
  grind_u32 1000
}

@test "global bitonic passes with fewer fused substages (CLSORT_FUSE=2), pair tails: no report" {
  export CLSORT_WG=16 CLSORT_EPT=4 CLSORT_GLOBAL=bitonic CLSORT_FUSE=2
  grind_u32 1000
  grind_u32 700
  head -c $((300 * 16)) /dev/urandom > "$T/in"
  "$CLSORT" "${DEV[@]}" -k f64 -R 16 "$T/in" > "$T/want"
  grind -k f64 -R 16 "$T/in"
  cmp "$T/want" "$T/got" || fail "f64 records: differ from the sort on the CPU device"
}

# The radix sort in tiles of 64 (work-groups of 16), at most 4 blocks: a
# block of several tiles, the last one partial.  Uninitialized values are
# checked on one digit pass (keys below 256): Oclgrind 21.10 takes every
# word a kernel wrote and a later pass reads for uninitialized (as for
# CLSORT_GLOBAL=merge above); every pass of u32 keys, and of 128-bit words
# (16-byte records in their words, the low 64 bits skipped), for data
# races.
@test "radix sort (--device-sort=radix), u32 and u64 records in tiles of 64: no report" {
  export CLSORT_RADIX_WG=16 CLSORT_RADIX_ITEMS=4 CLSORT_RADIX_BLOCKS=4
  local n
  for n in 1 65 300; do
    perl -e "srand($n); print pack('V*', map { int(rand(256)) } 1 .. $n)" > "$T/in"
    grind --device-sort=radix -vv "$T/in"
    grep -q "device sort: radix, [01] of 4" "$T/err" || fail "$(cat "$T/err")"
    od -An -v -tu4 -w4 "$T/got" | cmp - <(ref_u32 "$T/in") || fail "$n keys: wrong order"
    head -c $((n * 4)) /dev/urandom > "$T/in"
    grind --races-only --device-sort=radix -vv "$T/in"
    grep -q "device sort: radix, 4 of 4" "$T/err" || [ $n = 1 ] || fail "$(cat "$T/err")"
    od -An -v -tu4 -w4 "$T/got" | cmp - <(ref_u32 "$T/in") || fail "$n keys: wrong order"
  done
  perl -e 'srand(5); print pack("Q<Q<", int(rand(300)), $_) for 0 .. 299' > "$T/rec"
  "$CLSORT" "${DEV[@]}" -R 16 -k u64 "$T/rec" > "$T/want"
  grind --races-only --device-sort=radix -R 16 -k u64 "$T/rec"
  cmp "$T/want" "$T/got" || fail "records: differ from the sort on the CPU device"
}
