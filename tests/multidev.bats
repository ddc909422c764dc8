#!/usr/bin/env bats
# Several devices at once: -d all and -d LIST.  The input is cut into one
# key range per device, ranges are sorted side by side and written in
# order; the output must be the one-device sort's, byte for byte.  Where
# the platform offers one device, it is listed several times (each entry
# gets a context of its own).
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
  TWO=(-d 0:0,0:0)
  THREE=(-d 0:0,0:0,0:0)
}

# same_as_one ARGS...: sorting $T/in with ARGS on two and on three devices
# gives the one-device output, to -o FILE and to a pipe.
same_as_one() {
  "$CLSORT" -d cpu "$@" "$T/in" -o "$T/one"
  "$CLSORT" "${TWO[@]}" "$@" "$T/in" -o "$T/two"
  cmp "$T/one" "$T/two"
  "$CLSORT" "${THREE[@]}" "$@" "$T/in" | cat > "$T/three"
  cmp "$T/one" "$T/three"
}

@test "-L marks the devices all takes" {
  run "$CLSORT" -L
  assert_success
  assert_output --partial "(all)"
}

@test "-d all sorts as one device does" {
  "$REFSORT" gen u32 200000 1 > "$T/in"
  "$CLSORT" -d cpu "$T/in" -o "$T/one"
  "$CLSORT" -d all "$T/in" -o "$T/all"
  cmp "$T/one" "$T/all"
}

@test "-d all shares records only where each device holds its range in one run, never lines" {
  # Two CPU devices, where the platform can offer them.
  export POCL_DEVICES="pthread pthread"
  [ "$("$CLSORT" -L | grep -c '(all)')" -ge 2 ] || skip "one device for all"
  "$REFSORT" gen u32 300000 21 > "$T/in"
  "$CLSORT" -d cpu "$T/in" -o "$T/one"
  # The whole input in one run on the first device (300000 words).
  run "$CLSORT" -v -d all "$T/in" -o "$T/all"
  assert_success
  assert_output --partial "all: device 0:0 holds the 300000 records in one run; sorting on it alone"
  refute_output --partial "key ranges"
  cmp "$T/one" "$T/all"
  # Runs of 262144 words: the input needs two, each range one.
  run "$CLSORT" -v -d all -S 1M "$T/in"
  assert_success
  assert_output --partial "all: each of 2 devices holds its range (about 150000 records) in one run"
  assert_output --partial "cut into 2 key ranges for 2 devices"
  "$CLSORT" -d all -S 1M "$T/in" | cmp "$T/one" -
  # Runs of 65536 words: the ranges would need runs too.
  run "$CLSORT" -v -d all -S 256K "$T/in" -o "$T/all"
  assert_success
  assert_output --partial "all: 2 devices would sort their ranges in runs too; sorting in runs on device 0:0 alone"
  refute_output --partial "key ranges"
  cmp "$T/one" "$T/all"
  # The first device is asked with the host memory it has alone: within
  # --memory 6M it holds the input in one run, within its share it would not.
  run "$CLSORT" -v -d all --memory 6M "$T/in" -o "$T/all"
  assert_success
  assert_output --partial "all: device 0:0 holds the 300000 records in one run; sorting on it alone"
  cmp "$T/one" "$T/all"
  # A list of devices is always shared.
  run "$CLSORT" -v -d 0:0,0:1 "$T/in" -o "$T/all"
  assert_success
  assert_output --partial "cut into 2 key ranges for 2 devices"
  cmp "$T/one" "$T/all"
  # Lines go to the first device alone, whatever their size; a list
  # shares them.
  "$REFSORT" gen-kv 20000 22 i32 50 > "$T/in"
  "$CLSORT" -d cpu -f kv -k i32 "$T/in" -o "$T/one"
  for s in "" -S16K; do
    run "$CLSORT" -v -d all $s -f kv -k i32 "$T/in" -o "$T/all"
    assert_success
    assert_output --partial "all: lines are sorted on device 0:0 alone"
    refute_output --partial "key ranges for"
    refute_output --partial "device 0:1"
    cmp "$T/one" "$T/all"
  done
  run "$CLSORT" -v -d 0:0,0:1 -f kv -k i32 "$T/in" -o "$T/all"
  assert_success
  assert_output --partial "key ranges for 2 devices"
  cmp "$T/one" "$T/all"
}

@test "u32 keys on two and three devices" {
  "$REFSORT" gen u32 300000 2 > "$T/in"
  same_as_one -k u32
  "$REFSORT" sort -k u32 < "$T/in" | cmp - "$T/two"
}

@test "f64 keys with NaNs and signed zeros, descending" {
  "$REFSORT" gen f64 100000 3 special > "$T/in"
  same_as_one -k f64 -r
  "$REFSORT" sort -k f64 -r < "$T/in" | cmp - "$T/two"
}

@test "16-byte records, i64 key at offset 8, stable and descending" {
  "$REFSORT" gen-rec 100000 16 8 i64 4 few > "$T/in"
  same_as_one -R 16 --key-offset 8 -k i64 -s
  "$REFSORT" sort -R 16 --key-offset 8 -k i64 -s < "$T/in" | cmp - "$T/two"
  same_as_one -R 16 --key-offset 8 -k i64 -s -r
  "$REFSORT" sort -R 16 --key-offset 8 -k i64 -s -r < "$T/in" | cmp - "$T/two"
}

@test "all-equal keys still spread over the devices, in input order" {
  "$REFSORT" gen-rec 100000 8 0 u32 5 equal > "$T/in"
  same_as_one -R 8
  cmp "$T/in" "$T/two"
  run "$CLSORT" -v "${TWO[@]}" -R 8 "$T/in" -o "$T/two"
  assert_success
  assert_output --regexp "range 0 on device 0:0: [0-9]+ bytes \((4[0-9]|5[0-9])\.[0-9]%\)"
  assert_output --regexp "range 1 on device 0:0: [0-9]+ bytes \((4[0-9]|5[0-9])\.[0-9]%\)"
}

@test "skewed keys: few distinct ones" {
  "$REFSORT" gen u32 200000 6 few > "$T/in"
  same_as_one
}

@test "kv lines, stable and descending" {
  "$REFSORT" gen-kv 50000 7 i32 100 > "$T/in"
  same_as_one -f kv -k i32 -s
  "$REFSORT" sort -f kv -k i32 -s < "$T/in" | cmp - "$T/two"
  same_as_one -f kv -k i32 -s -r
}

@test "kv lines without a final newline, NUL-terminated lines" {
  "$REFSORT" gen-kv 20000 8 u64 > "$T/in"
  printf '5:last' >> "$T/in"
  same_as_one -f kv -k u64
  tr '\n' '\0' < "$T/in" > "$T/in0" && mv "$T/in0" "$T/in"
  same_as_one -f kv -k u64 -z
}

@test "string keys, -u and --header" {
  "$REFSORT" gen-kv 30000 9 u32 300 > "$T/in"
  same_as_one -f kv -k str
  same_as_one -f kv -k str -r
  same_as_one -f kv -k u32 -u
  same_as_one -f kv -k u32 --header=3
}

@test "--skip-bad drops the same lines and counts them" {
  "$REFSORT" gen-kv 20000 10 i32 1000 > "$T/in"
  printf 'x:bad\n\n12:good\n' >> "$T/in"
  same_as_one -f kv -k i32 --skip-bad
  run "$CLSORT" "${TWO[@]}" -f kv -k i32 --skip-bad "$T/in" -o "$T/two"
  assert_success
  assert_output --partial "skipped 2 lines"
}

@test "a bad line is named as on one device" {
  "$REFSORT" gen-kv 20000 11 i32 > "$T/in"
  printf 'oops\n' >> "$T/in"
  run "$CLSORT" -d cpu -f kv -k i32 "$T/in" -o "$T/one"
  assert_failure 2
  local want=$output
  run "$CLSORT" "${TWO[@]}" -f kv -k i32 "$T/in" -o "$T/two"
  assert_failure 2
  assert_output "$want"
  [ ! -e "$T/two" ]
}

@test "each device sorts its range in runs when it does not fit" {
  "$REFSORT" gen-rec 200000 8 0 u32 12 > "$T/in"
  same_as_one -R 8 -S 64K
  "$REFSORT" gen-kv 40000 13 i32 50 > "$T/in"
  same_as_one -f kv -k i32 -S 16K
  same_as_one -f kv -k i32 -S 16K --memory=1M
}

@test "records are dealt from the input; a range too large for a run is copied out" {
  "$REFSORT" gen-rec 60000 8 0 u32 16 > "$T/in"
  "$CLSORT" -d cpu -R 8 "$T/in" -o "$T/one"
  run "$CLSORT" -v "${TWO[@]}" -R 8 "$T/in" -o "$T/two"
  assert_success
  assert_output --partial "dealt from the input to the devices' staging"
  refute_output --partial "does not fit a run"
  cmp "$T/one" "$T/two"
  run "$CLSORT" -v "${TWO[@]}" -R 8 -S 64K "$T/in" -o "$T/two"
  assert_success
  assert_output --partial "range 1 does not fit a run on device 0:0"
  cmp "$T/one" "$T/two"
  # Words whose index cannot reach every record of the input.
  CLSORT_INDEX_BITS=15 run "$CLSORT" -v "${TWO[@]}" -R 8 "$T/in" -o "$T/two"
  assert_success
  assert_output --partial "range 0 does not fit a run"
  cmp "$T/one" "$T/two"
}

@test "standard output redirected to a file, after what it holds" {
  "$REFSORT" gen u32 100000 14 > "$T/in"
  "$CLSORT" -d cpu "$T/in" -o "$T/one"
  { printf 'head'; "$CLSORT" "${TWO[@]}" "$T/in"; } > "$T/two"
  { printf 'head'; cat "$T/one"; } | cmp - "$T/two"
  printf 'head' > "$T/app"
  "$CLSORT" "${TWO[@]}" "$T/in" >> "$T/app"
  { printf 'head'; cat "$T/one"; } | cmp - "$T/app"
}

@test "an input smaller than the devices" {
  printf '\3\0\0\0\1\0\0\0' > "$T/in"
  same_as_one
  : > "$T/in"
  same_as_one
  [ ! -s "$T/two" ]
}

@test "bad device lists are usage errors; a missing device leaves no output" {
  "$REFSORT" gen u32 1000 15 > "$T/in"
  run "$CLSORT" -d 0:0, "$T/in"
  assert_failure 2
  assert_output --partial "invalid device '0:0,'"
  run "$CLSORT" -d all,0:0 "$T/in"
  assert_failure 2
  run "$CLSORT" -d 0:0,9:9 "$T/in" -o "$T/out"
  assert_failure 2
  assert_output --partial "no OpenCL device matches '9:9'"
  [ ! -e "$T/out" ]
}

@test "bytes:N keys, longer than their words: ties within a key kept whole" {
  local n
  for n in 4 12 33; do
    "$REFSORT" gen-bytes 30011 $((n + 5)) 3 $n $n tied > "$T/in"
    same_as_one -R $((n + 5)) --key-offset 3 -k bytes:$n
    same_as_one -R $((n + 5)) --key-offset 3 -k bytes:$n -r
  done
}

@test "npy arrays" {
  gen_npy "$T/in" 16 -1000 1000 200000 int64
  same_as_one -f npy
  python3 -c "
import numpy as np
a = np.load('$T/two')
assert (a[:-1] <= a[1:]).all() and len(a) == 200000
"
}
