#!/usr/bin/env bats
# Byte-string keys (-k bytes:N): N bytes compared as unsigned bytes, the
# order of memcmp.  Sort words hold a key's first 8 bytes; longer keys that
# tie on them are ordered by the rest on the host, in every path: one run
# on the device or the host, runs merged in memory, in parallel parts or
# from temporary files, and --check.  Compared with refsort, and with the
# Sort Benchmark's gensort and valsort where they can be had.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
}

# ref_cmp IN WHAT [OPTION]... [-- CLSORT-ONLY OPTION...]: clsort and
# refsort, given the same options, sort IN alike; -vv of clsort in $T/err.
ref_cmp() {
  local in=$1 what=$2 opts=() extra=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  [ $# -eq 0 ] || { shift; extra=("$@"); }
  "$REFSORT" sort "${opts[@]}" < "$in" > "$T/want" || fail "refsort ${opts[*]} failed on $what"
  "$CLSORT" -vv "${opts[@]}" "${extra[@]}" "$in" > "$T/got" 2> "$T/err" ||
    fail "clsort ${opts[*]} ${extra[*]} failed on $what: $(cat "$T/err")"
  cmp "$T/want" "$T/got" || fail "clsort ${opts[*]} ${extra[*]} differs from refsort on $what"
}

@test "bytes:N for N from 1 to 64, at offsets, every distribution, both orders" {
  local n d r size
  for n in 1 2 3 4 5 7 8 9 10 16 33 64; do
    for d in rand tied few equal; do
      size=$((n + 5))
      "$REFSORT" gen-bytes 20011 $size 3 $n $n $d > "$T/in"
      for r in "" -r; do
        ref_cmp "$T/in" "$d keys" -R $size --key-offset 3 -k bytes:$n $r -- "${DEV[@]}"
      done
    done
  done
  # Bare keys: the record is the key.
  "$REFSORT" gen-bytes 20011 10 0 10 1 tied > "$T/in"
  ref_cmp "$T/in" "bare 10-byte keys" -k bytes:10 -- "${DEV[@]}"
  ref_cmp "$T/in" "bare 10-byte keys" -k bytes:10 -r -- "${DEV[@]}"
}

@test "bytes:N on the host, without a device" {
  local n
  for n in 3 8 12; do
    "$REFSORT" gen-bytes 3001 $((n + 2)) 1 $n 2 tied > "$T/in"
    ref_cmp "$T/in" "$n-byte keys" -R $((n + 2)) --key-offset 1 -k bytes:$n -r
    grep -q "sorting on the host" "$T/err" || fail "not on the host: $(cat "$T/err")"
  done
}

@test "long keys tied on their first 8 bytes across the device's download chunks" {
  # 2100007 words of 16 bytes come back in more than one chunk, and the
  # three groups of tied keys span chunks.
  "$REFSORT" gen-bytes 2100007 10 0 10 3 tied > "$T/in"
  ref_cmp "$T/in" "2100007 tied keys" -R 10 -k bytes:10 -- "${DEV[@]}"
  ref_cmp "$T/in" "2100007 tied keys" -R 10 -k bytes:10 -r -- "${DEV[@]}"
}

@test "bytes:N out of core: runs merged on the device, on the host, in parallel parts and from files" {
  local n r
  mkdir "$T/tmp"
  for n in 6 10 40; do
    "$REFSORT" gen-bytes 30011 $((n + 4)) 2 $n $n tied > "$T/in"
    for r in "" -r; do
      ref_cmp "$T/in" "$n-byte keys, runs" -R $((n + 4)) --key-offset 2 -k bytes:$n $r \
        -- "${DEV[@]}" -S 4K
      grep -q "kept in memory\|key ranges" "$T/err" || fail "one run: $(cat "$T/err")"
      CLSORT_MERGE_RUNS=host ref_cmp "$T/in" "$n-byte keys, host merge" \
        -R $((n + 4)) --key-offset 2 -k bytes:$n $r -- "${DEV[@]}" -S 4K
      CLSORT_MERGE_RUNS=host CLSORT_PARALLEL_MERGE_MIN=1 ref_cmp "$T/in" \
        "$n-byte keys, parallel merge" -R $((n + 4)) --key-offset 2 -k bytes:$n $r -- "${DEV[@]}" -S 4K
      ref_cmp "$T/in" "$n-byte keys, spilled" -R $((n + 4)) --key-offset 2 -k bytes:$n $r \
        -- "${DEV[@]}" -S 4K --memory=64K -T "$T/tmp"
      grep -q "kept in temporary files" "$T/err" || fail "not spilled: $(cat "$T/err")"
    done
  done
  # Keys of up to 8 bytes are whole in their words: cut into key ranges.
  "$REFSORT" gen-bytes 30011 6 0 6 1 few > "$T/in"
  ref_cmp "$T/in" "6-byte keys" -R 6 -k bytes:6 -- "${DEV[@]}" -S 4K
  grep -q "key ranges" "$T/err" || fail "no key ranges: $(cat "$T/err")"
  # Longer ones are not: ranges would split their ties.
  "$REFSORT" gen-bytes 30011 12 0 12 1 tied > "$T/in"
  ref_cmp "$T/in" "12-byte keys" -R 12 -k bytes:12 -- "${DEV[@]}" -S 4K
  ! grep -q "key ranges" "$T/err" || fail "cut into key ranges: $(cat "$T/err")"
}

@test "-u with bytes:N: the first record of each key, keys tied past their first 8 bytes too" {
  local n r
  for n in 4 10 20; do
    "$REFSORT" gen-bytes 30011 $((n + 3)) 1 $n $n tied > "$T/in"
    for r in "" -r; do
      ref_cmp "$T/in" "$n-byte keys" -R $((n + 3)) --key-offset 1 -k bytes:$n -u $r -- "${DEV[@]}"
      ref_cmp "$T/in" "$n-byte keys in runs" -R $((n + 3)) --key-offset 1 -k bytes:$n -u $r \
        -- "${DEV[@]}" -S 4K
      CLSORT_HOST_THRESHOLD=100000 ref_cmp "$T/in" "$n-byte keys on the host" -R $((n + 3)) \
        --key-offset 1 -k bytes:$n -u $r
      grep -q "sorting on the host" "$T/err" || fail "not on the host: $(cat "$T/err")"
    done
    # Some keys repeat: -u has something to drop.
    [ "$(stat -c %s "$T/want")" -lt "$(stat -c %s "$T/in")" ]
  done
}

@test "-c with bytes:N: disorder found past the first 8 bytes, with -r too" {
  "$REFSORT" gen-bytes 1000 12 0 12 4 tied > "$T/in"
  "$REFSORT" sort -R 12 -k bytes:12 < "$T/in" > "$T/sorted"
  "$CLSORT" -c -R 12 -k bytes:12 "$T/sorted"
  run --separate-stderr "$CLSORT" -c -R 12 -k bytes:12 -r "$T/sorted"
  [ "$status" -eq 1 ]
  # Two records that differ only in their last byte, swapped.
  printf 'AAAAAAAABBB\002AAAAAAAABBB\001' > "$T/swapped"
  run --separate-stderr "$CLSORT" -c -R 12 -k bytes:12 "$T/swapped"
  [ "$status" -eq 1 ]
  [ "$stderr" = "clsort: $T/swapped: record 2: disorder" ]
  "$CLSORT" -c -R 12 -k bytes:12 -r "$T/swapped"
  # Keys that leave the last byte out are equal: in order.
  "$CLSORT" -C -R 12 -k bytes:9 --key-offset 2 "$T/swapped"
}

@test "bytes:N errors: bad N, kv lines, a key past the record, a partial record" {
  local k
  printf 'abcdefghij' > "$T/in"
  for k in bytes:0 bytes:65 bytes:04 bytes: bytes:x bytes:4x; do
    run --separate-stderr "$CLSORT" -k $k "$T/in"
    [ "$status" -eq 2 ]
    [ "${stderr_lines[0]}" = "clsort: invalid key type '$k': use u32, i32, f32, u64, i64, f64, str or bytes:N (N from 1 to 64)" ]
  done
  run --separate-stderr "$CLSORT" -f kv -k bytes:4 "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: bytes:4 keys are binary: they go with -f bin" ]
  run --separate-stderr "$CLSORT" -R 8 -k bytes:10 "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: a bytes:10 key at offset 0 does not fit in 8-byte records" ]
  run --separate-stderr "$CLSORT" -k bytes:3 -o "$T/out" "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/in: size 10 is not a multiple of the 3-byte record size (1 trailing byte)" ]
  [ ! -e "$T/out" ]
}

# --- the Sort Benchmark's records ------------------------------------------------

# gensort_tools: $GENSORT and $VALSORT, found in PATH or built from the
# gensort 1.5 source in $GENSORT_SRC (gensort.c, valsort.c, rand16.c; zlib);
# the test is skipped, saying why, where there are none.
gensort_tools() {
  if command -v gensort > /dev/null && command -v valsort > /dev/null; then
    GENSORT=$(command -v gensort) VALSORT=$(command -v valsort)
    return
  fi
  [ -n "$GENSORT_SRC" ] ||
    skip "no gensort and valsort in PATH, and GENSORT_SRC names no source of them (www.ordinal.com/gensort.html)"
  [ -f "$GENSORT_SRC/gensort.c" ] || skip "GENSORT_SRC=$GENSORT_SRC holds no gensort.c"
  GENSORT=$BATS_FILE_TMPDIR/gensort VALSORT=$BATS_FILE_TMPDIR/valsort
  if [ ! -x "$VALSORT" ]; then
    local o=$BATS_FILE_TMPDIR/rand16.o
    cc -O2 -w -c -o "$o" "$GENSORT_SRC/rand16.c" &&
      cc -O2 -w -I"$GENSORT_SRC" -o "$GENSORT" "$GENSORT_SRC/gensort.c" "$o" -lz &&
      cc -O2 -w -I"$GENSORT_SRC" -o "$VALSORT" "$GENSORT_SRC/valsort.c" "$o" -lz ||
      skip "gensort and valsort do not build from $GENSORT_SRC (zlib missing?)"
  fi
}

# valsorted IN OUT: valsort finds OUT in order, with IN's records (the same
# checksum).
valsorted() {
  "$VALSORT" "$2" > "$T/val" 2>&1 || fail "valsort: $(cat "$T/val")"
  grep -q "^SUCCESS" "$T/val" || fail "valsort: $(cat "$T/val")"
  "$VALSORT" "$1" > "$T/val.in" 2>&1 || true  # unsorted: status 1
  [ "$(grep Checksum "$T/val")" = "$(grep Checksum "$T/val.in")" ] ||
    fail "checksums differ: $(grep Checksum "$T/val" "$T/val.in")"
}

@test "gensort records, binary, -a and -s: clsort -R 100 -k bytes:10, as valsort and refsort see it" {
  local opt
  gensort_tools
  for opt in "" -a -s "-a -s"; do
    # shellcheck disable=SC2086
    "$GENSORT" $opt 200003 "$T/in" > /dev/null
    ref_cmp "$T/in" "gensort $opt records" -R 100 -k bytes:10 -- "${DEV[@]}"
    valsorted "$T/in" "$T/got"
    "$CLSORT" "${DEV[@]}" -S 64K -R 100 -k bytes:10 -o "$T/out" "$T/in"
    valsorted "$T/in" "$T/out"
    CLSORT_MERGE_RUNS=host CLSORT_PARALLEL_MERGE_MIN=1 "$CLSORT" "${DEV[@]}" -S 64K -R 100 \
      -k bytes:10 -o "$T/out" "$T/in"
    valsorted "$T/in" "$T/out"
    "$CLSORT" -c -R 100 -k bytes:10 "$T/out"
  done
}
