#!/usr/bin/env bats
# First use: what clsort builds, and when.  An input with nothing to sort,
# a --check and a sort on the host engine never touch OpenCL (OpenCL here
# has no platform: any use of it fails); a device sort builds a program of
# the kernels its word width and shape run, and nothing more; a merge of
# runs builds its own; each program is cached by its options and source.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
  export XDG_CACHE_HOME="$T/cache"
  # clsort's own cache, which on PoCL it keeps only without PoCL's.
  export POCL_KERNEL_CACHE=0
  mkdir "$T/no-vendors"
}

# The program lines of -vv on stderr in FILE, as "built: KERNELS" or
# "loaded: KERNELS", one per program.
programs() {
  sed -n -e 's/^clsort: program built in [0-9.]* s: /built: /p' \
    -e 's/^clsort: program loaded from cache in [0-9.]* s: /loaded: /p' "$1"
}

@test "an empty input on a device touches no OpenCL" {
  : > "$T/empty"
  for f in bin kv; do
    OCL_ICD_VENDORS="$T/no-vendors" run --separate-stderr \
      "$CLSORT" "${DEV[@]}" -vv -f $f -o "$T/out.$f" "$T/empty"
    assert_success
    [[ "$stderr" != *"program"* ]] || fail "$f: $stderr"
    [ -f "$T/out.$f" ] && [ ! -s "$T/out.$f" ] || fail "$f: output not empty"
  done
  OCL_ICD_VENDORS="$T/no-vendors" run --separate-stderr "$CLSORT" "${DEV[@]}" -k f64 < "$T/empty"
  assert_success
  [ -z "$output" ]
  [ -z "$stderr" ]
  OCL_ICD_VENDORS="$T/no-vendors" run --separate-stderr \
    "$CLSORT" "${DEV[@]}" -R 16 -k u64 -o "$T/out" "$T/empty" "$T/empty"
  assert_success
  [ ! -s "$T/out" ]
}

@test "--check with a device touches no OpenCL" {
  head -c 40000 /dev/urandom > "$T/in"
  "$CLSORT" -d host -o "$T/sorted" "$T/in"
  OCL_ICD_VENDORS="$T/no-vendors" run --separate-stderr "$CLSORT" "${DEV[@]}" -c "$T/sorted"
  assert_success
  OCL_ICD_VENDORS="$T/no-vendors" run --separate-stderr "$CLSORT" "${DEV[@]}" -C "$T/in"
  [ "$status" -eq 1 ]
  [ -z "$stderr" ]
}

@test "a sort on the host engine touches no OpenCL" {
  head -c 400000 /dev/urandom > "$T/in"
  OCL_ICD_VENDORS="$T/no-vendors" run --separate-stderr "$CLSORT" -d host -o "$T/out" "$T/in"
  assert_success
  [ -z "$stderr" ]
  "$CLSORT" "${DEV[@]}" "$T/in" | cmp - "$T/out"
}

@test "a few keys start the device when they are sorted" {
  head -c 40 /dev/urandom > "$T/in"
  OCL_ICD_VENDORS="$T/no-vendors" run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/in"
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: no OpenCL platform found"* ]]
  [ ! -e "$T/out" ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -vv -o "$T/out" "$T/in"
  assert_success
  [[ "$stderr" == *"program built in"* ]]
  "$CLSORT" -d host "$T/in" | cmp - "$T/out"
}

@test "a program holds only the kernels its sort runs" {
  head -c 400000 /dev/urandom > "$T/in"
  "$CLSORT" -d host -o "$T/want" "$T/in"
  # A CPU device joins tiles by merge-path passes.
  "$CLSORT" "${DEV[@]}" -vv -o "$T/out" "$T/in" 2> "$T/err"
  cmp "$T/want" "$T/out"
  [ "$(programs "$T/err")" = "built: tile_sort_bitonic merge_pass" ] || fail "$(cat "$T/err")"
  "$CLSORT" "${DEV[@]}" --local-kernel=merge -vv -o "$T/out" "$T/in" 2> "$T/err"
  cmp "$T/want" "$T/out"
  [ "$(programs "$T/err")" = "built: tile_sort_merge merge_pass" ] || fail "$(cat "$T/err")"
  # Bitonic passes: the tails, and passes of up to CLSORT_FUSE substages.
  CLSORT_GLOBAL=bitonic CLSORT_WG=16 CLSORT_EPT=4 CLSORT_FUSE=4 \
    "$CLSORT" "${DEV[@]}" -vv -o "$T/out" "$T/in" 2> "$T/err"
  cmp "$T/want" "$T/out"
  [ "$(programs "$T/err")" = "built: tile_sort_bitonic tile_merge_tail tile_pair_tail tile_pair_flip_tail half_1 flip_1 half_2 flip_2" ] ||
    fail "$(cat "$T/err")"
  # The second time, each comes from the cache.
  "$CLSORT" "${DEV[@]}" -vv -o "$T/out" "$T/in" 2> "$T/err"
  [ "$(programs "$T/err")" = "loaded: tile_sort_bitonic merge_pass" ] || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/out"
}

@test "-vv says what each build cost and what its binary took to cache" {
  head -c 40000 /dev/urandom > "$T/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -vv -o "$T/out" "$T/in"
  assert_success
  [[ "$stderr" =~ clsort:\ program\ built\ in\ [0-9]+\.[0-9]{3}\ s:\ tile_sort ]] || fail "$stderr"
  [[ "$stderr" =~ clsort:\ program\ binary\ of\ [1-9][0-9]*\ bytes\ cached\ in\ [0-9]+\.[0-9]{3}\ s ]] ||
    fail "$stderr"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -vv -o "$T/out" "$T/in"
  assert_success
  [[ "$stderr" =~ clsort:\ program\ loaded\ from\ cache\ in\ [0-9]+\.[0-9]{3}\ s:\ tile_sort ]] ||
    fail "$stderr"
  [[ "$stderr" != *"cached in"* ]] || fail "stored again: $stderr"
}

@test "a merge of runs on the device builds the merge of pieces on its own" {
  perl -e 'srand(3); print pack("VVVV", int(rand(2**32)), int(rand(2**32)), $_, 0) for 0 .. 9999' > "$T/rec"
  "$CLSORT" -d host -R 16 -k u64 -o "$T/want" "$T/rec"
  CLSORT_MERGE_RUNS=device "$CLSORT" "${DEV[@]}" -vv -S 16K -R 16 -k u64 -o "$T/out" "$T/rec" 2> "$T/err"
  cmp "$T/want" "$T/out"
  grep -q "then merged on the device" "$T/err" || fail "not merged on the device: $(cat "$T/err")"
  [ "$(programs "$T/err")" = "built: tile_sort_bitonic merge_pass
built: merge_pieces" ] || fail "$(cat "$T/err")"
  # A sort that merges nothing builds no merge.
  "$CLSORT" "${DEV[@]}" -vv -R 16 -k u64 -o "$T/out" "$T/rec" 2> "$T/err"
  cmp "$T/want" "$T/out"
  [ "$(programs "$T/err")" = "loaded: tile_sort_bitonic merge_pass" ] || fail "$(cat "$T/err")"
}

@test "programs are cached by word width and by kernel source" {
  head -c 40000 /dev/urandom > "$T/in"
  "$CLSORT" "${DEV[@]}" -k u32 "$T/in" > /dev/null
  "$CLSORT" "${DEV[@]}" -k u64 "$T/in" > /dev/null
  [ "$(ls "$XDG_CACHE_HOME"/clsort/*.bin | wc -l)" -eq 2 ] || fail "$(ls "$XDG_CACHE_HOME"/clsort)"
  # The same kernels with one more comment are another source.
  mkdir "$T/kernels"
  for f in "$BATS_TEST_DIRNAME"/../kernels/*.cl; do
    cp "$f" "$T/kernels/"
  done
  echo '/* edited */' >> "$T/kernels/merge.cl"
  CLSORT_KERNEL_DIR="$T/kernels" "$CLSORT" "${DEV[@]}" -vv -k u32 -o "$T/out" "$T/in" 2> "$T/err"
  [ "$(programs "$T/err")" = "built: tile_sort_bitonic merge_pass" ] || fail "$(cat "$T/err")"
  "$CLSORT" -d host -k u32 "$T/in" | cmp - "$T/out"
  [ "$(ls "$XDG_CACHE_HOME"/clsort/*.bin | wc -l)" -eq 3 ]
}

@test "a build that fails while the words come up: status 2, its log, no output" {
  head -c 400000 /dev/urandom > "$T/in"
  for f in "-k u32" "-R 8 -k u32"; do
    # shellcheck disable=SC2086
    CLSORT_CL_OPTIONS=-DWORD_BITS=7 run --separate-stderr "$CLSORT" "${DEV[@]}" $f -o "$T/out" "$T/in"
    [ "$status" -eq 2 ] || fail "$f: status $status"
    [[ "$stderr" == *"WORD_BITS must be 32, 64 or 128"* ]] || fail "$f: no build log: $stderr"
    [[ "${stderr_lines[-1]}" == "clsort: building the kernels for "*" failed (CL_BUILD_PROGRAM_FAILURE)"* ]] ||
      fail "$f: $stderr"
    [ ! -e "$T/out" ]
  done
}
