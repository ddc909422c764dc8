#!/usr/bin/env bats
# The host engine (-d host) against the reference: every key type and
# format, sizes at the radix sort's limits (its insertion sort, its 11-bit
# digits, its threads), stability, -r.
load helpers
bats_require_minimum_version 1.5.0

# host_as_ref FILE WHAT [OPTION]...: clsort -d host with the options sorts
# FILE as refsort does with them (-k, -r, -R, --key-offset, -f, -t, -s).
host_as_ref() {
  local in=$1 what=$2
  shift 2
  "$REFSORT" sort "$@" < "$in" > "$BATS_TEST_TMPDIR/want"
  "$CLSORT" -d host "$@" "$in" > "$BATS_TEST_TMPDIR/got" ||
    fail "clsort -d host $* failed with status $? on $what"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" ||
    fail "clsort -d host $* differs from refsort on $what"
}

@test "host: bare keys of every type and distribution, sizes at the radix sort's limits" {
  local f=$BATS_TEST_TMPDIR/in t n d r
  for t in u32 i32 f32 u64 i64 f64; do
    for n in 0 1 2 255 256 257 2047 2048 2049 65535 65537; do
      for d in rand few equal sorted reverse special; do
        "$REFSORT" gen "$t" "$n" "$n" "$d" > "$f"
        for r in "" -r; do
          host_as_ref "$f" "$n $t keys, $d" -k "$t" $r
        done
      done
    done
  done
}

@test "host: 2^20 +-1 keys of every type" {
  local f=$BATS_TEST_TMPDIR/in t n
  for t in u32 i32 f32 u64 i64 f64; do
    for n in 1048575 1048577; do
      "$REFSORT" gen "$t" "$n" 7 rand > "$f"
      host_as_ref "$f" "$n $t keys" -k "$t"
      host_as_ref "$f" "$n $t keys" -k "$t" -r
    done
  done
}

@test "host: records of every type, 64- and 128-bit words, stable in both directions" {
  local f=$BATS_TEST_TMPDIR/in t n r
  for t in u32 i32 f32 u64 i64 f64; do
    for n in 1 2049 70001; do
      "$REFSORT" gen-rec "$n" 24 8 "$t" "$n" few > "$f"
      for r in "" -r; do
        host_as_ref "$f" "$n records of $t" -R 24 --key-offset 8 -k "$t" -s $r
      done
    done
  done
}

@test "host: kv lines of every type, duplicate keys in input order, both directions" {
  local f=$BATS_TEST_TMPDIR/in t n r
  for t in u32 i32 f32 u64 i64 f64; do
    for n in 0 1 2049 70001; do
      "$REFSORT" gen-kv "$n" "$n" "$t" few > "$f"
      for r in "" -r; do
        host_as_ref "$f" "$n kv lines of $t" -f kv -k "$t" -s $r
      done
    done
  done
}

@test "host: 2^20 +-1 records and kv lines" {
  local f=$BATS_TEST_TMPDIR/in n
  for n in 1048575 1048577; do
    "$REFSORT" gen-rec "$n" 8 0 u32 "$n" few > "$f"
    host_as_ref "$f" "$n records" -R 8 -s
    "$REFSORT" gen-kv "$n" "$n" u64 > "$f"
    host_as_ref "$f" "$n kv lines" -f kv -k u64 -r
  done
}

@test "host: -L lists the host engine; -v names it; --parallel=1 sorts the same" {
  local f=$BATS_TEST_TMPDIR/in
  run "$CLSORT" -L
  [[ "${lines[0]}" == "host  radix sort on the host  CPU, "* ]] || fail "-L: $output"
  "$REFSORT" gen u32 300000 9 few > "$f"
  run --separate-stderr "$CLSORT" -v -d host "$f" -o "$BATS_TEST_TMPDIR/got"
  assert_success
  [[ "$stderr" == *"300000 records: sorting on the host ("*" threads)"* ]]
  [[ "$stderr" == *"host engine: radix sort "*" s on "* ]]
  "$REFSORT" sort < "$f" > "$BATS_TEST_TMPDIR/want"
  "$CLSORT" -d host --parallel=1 "$f" | cmp "$BATS_TEST_TMPDIR/want" -
}

@test "host: a bad kv line is named with file and line, status 2" {
  printf '3:a\nx:b\n1:c\n' > "$BATS_TEST_TMPDIR/in"
  run --separate-stderr "$CLSORT" -d host -f kv "$BATS_TEST_TMPDIR/in"
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: $BATS_TEST_TMPDIR/in:2: "* ]] || fail "stderr: $stderr"
}
