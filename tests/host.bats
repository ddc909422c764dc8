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

@test "host: records that fit in their words beside an integer key are sorted as words, stably" {
  local f=$BATS_TEST_TMPDIR/in spec n r
  for spec in "16 0 u64" "16 8 i64" "16 3 u64" "12 4 i64" "9 0 u64" "8 0 u32" "8 4 i32" \
    "8 2 u32" "5 1 i32"; do
    set -- $spec
    for n in 1 2 2049 70001; do
      "$REFSORT" gen-rec "$n" "$1" "$2" "$3" "$n" few > "$f"
      for r in "" -r; do
        "$REFSORT" sort -R "$1" --key-offset "$2" -k "$3" $r < "$f" > "$BATS_TEST_TMPDIR/want"
        "$CLSORT" -d host -vv -R "$1" --key-offset "$2" -k "$3" $r "$f" > "$BATS_TEST_TMPDIR/got" \
          2> "$BATS_TEST_TMPDIR/err" || fail "$spec $n $r: $(cat "$BATS_TEST_TMPDIR/err")"
        cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "$spec, $n records $r: not refsort's"
        grep -q "host engine: $n records sorted in their words" "$BATS_TEST_TMPDIR/err" ||
          fail "$spec $n $r: $(cat "$BATS_TEST_TMPDIR/err")"
      done
    done
  done
  # In runs of -S, each run's records as words, merged: still stable.
  "$REFSORT" gen-rec 70001 16 0 u64 5 few > "$f"
  "$REFSORT" sort -R 16 -k u64 < "$f" > "$BATS_TEST_TMPDIR/want"
  "$CLSORT" -d host -vv -S 64K -R 16 -k u64 "$f" > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "-S 64K: not refsort's"
  # Not: a float key, records too wide for the word, -u, byte-string keys,
  # an OpenCL device (whose sorts order every bit of a word).
  for spec in "16 f64" "17 u64" "9 u32" "16 u64 -u" "16 bytes:8"; do
    set -- $spec
    "$REFSORT" gen-rec 3001 "$1" 0 "${2/bytes:8/u64}" 6 few > "$BATS_TEST_TMPDIR/other"
    "$CLSORT" -d host -vv -R "$1" -k "$2" $3 "$BATS_TEST_TMPDIR/other" > /dev/null \
      2> "$BATS_TEST_TMPDIR/err" || fail "$spec: $(cat "$BATS_TEST_TMPDIR/err")"
    ! grep -q "in their words" "$BATS_TEST_TMPDIR/err" || fail "$spec: as words"
  done
  "$CLSORT" "${DEV[@]}" -vv -R 16 -k u64 "$f" > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "the device: not refsort's"
  ! grep -q "in their words" "$BATS_TEST_TMPDIR/err" || fail "the device: as words"
}

@test "host: records that fill their words, from a pipe, are made into them where they were read" {
  local f=$BATS_TEST_TMPDIR/in spec n r
  for spec in "16 0 u64" "16 8 i64" "8 0 u32" "8 4 i32"; do
    set -- $spec
    for n in 1 2 2049 70001; do
      "$REFSORT" gen-rec "$n" "$1" "$2" "$3" "$n" few > "$f"
      for r in "" -r; do
        "$REFSORT" sort -R "$1" --key-offset "$2" -k "$3" $r < "$f" > "$BATS_TEST_TMPDIR/want"
        cat "$f" | "$CLSORT" -d host -vv -R "$1" --key-offset "$2" -k "$3" $r \
          > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err" ||
          fail "$spec $n $r: $(cat "$BATS_TEST_TMPDIR/err")"
        cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "$spec, $n records $r: not refsort's"
        grep -q "host engine: $n records sorted in their words, in place, on the words' bits from $(($1 * 4)) up" \
          "$BATS_TEST_TMPDIR/err" || fail "$spec $n $r: $(cat "$BATS_TEST_TMPDIR/err")"
      done
    done
  done
  # Not: records narrower than their words, a mapped file, runs of -S.
  "$REFSORT" gen-rec 70001 12 4 u64 7 few > "$f"
  "$REFSORT" sort -R 12 --key-offset 4 -k u64 < "$f" > "$BATS_TEST_TMPDIR/want"
  cat "$f" | "$CLSORT" -d host -vv -R 12 --key-offset 4 -k u64 > "$BATS_TEST_TMPDIR/got" \
    2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "12-byte records: not refsort's"
  grep -q "records sorted in their words" "$BATS_TEST_TMPDIR/err" || fail "12: $(cat "$BATS_TEST_TMPDIR/err")"
  ! grep -q "in place" "$BATS_TEST_TMPDIR/err" || fail "12-byte records: in place"
  "$REFSORT" gen-rec 70001 16 0 u64 8 few > "$f"
  "$REFSORT" sort -R 16 -k u64 < "$f" > "$BATS_TEST_TMPDIR/want"
  cp "$f" "$f.was"
  "$CLSORT" -d host -vv -R 16 -k u64 "$f" > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "file: not refsort's"
  cmp "$f.was" "$f" || fail "file: the input changed"
  cat "$f" | "$CLSORT" -d host -vv -S 256K -R 16 -k u64 > "$BATS_TEST_TMPDIR/got" \
    2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "runs: not refsort's"
  ! grep -q "in place" "$BATS_TEST_TMPDIR/err" || fail "runs: in place"
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

@test "host: bare keys of a pipe are sorted in the stream's own memory, as refsort sorts them" {
  local f=$BATS_TEST_TMPDIR/in t n r
  for t in u32 i32 u64 i64; do
    for n in 1 2 257 65537 1048577; do
      "$REFSORT" gen "$t" "$n" "$n" rand > "$f"
      for r in "" -r; do
        "$REFSORT" sort -k "$t" $r < "$f" > "$BATS_TEST_TMPDIR/want"
        cat "$f" | "$CLSORT" -d host -vv -k "$t" $r > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err"
        cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "$n $t keys $r from a pipe"
        grep -q "host engine: $n words sorted in place" "$BATS_TEST_TMPDIR/err" ||
          fail "$n $t keys $r: $(cat "$BATS_TEST_TMPDIR/err")"
      done
    done
  done
  # Not the memory of a mapped file, nor of keys that are not the words
  # (f32, -u; records: the test above), nor of a stream in several runs.
  "$REFSORT" gen u32 300000 11 few > "$f"
  "$REFSORT" sort -k u32 < "$f" > "$BATS_TEST_TMPDIR/want"
  for args in "-k u32 -u" "-k f32" "-k u32 -S 256K"; do
    cat "$f" | "$CLSORT" -d host -vv $args > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err" ||
      fail "$args: $(cat "$BATS_TEST_TMPDIR/err")"
    ! grep -q "sorted in place" "$BATS_TEST_TMPDIR/err" || fail "$args: in place"
  done
  # A mapped file's keys: made in words of their own (the file unchanged).
  cp "$f" "$f.was"
  "$CLSORT" -d host -vv -k u32 "$f" 2> "$BATS_TEST_TMPDIR/err" | cmp "$BATS_TEST_TMPDIR/want" -
  ! grep -q "sorted in place" "$BATS_TEST_TMPDIR/err" || fail "a file into a pipe: in place"
  "$CLSORT" -d host -vv -k u32 "$f" > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "a file"
  cmp "$f.was" "$f" || fail "a file: the input changed"
  "$CLSORT" -d host -k u32 -S 256K < <(cat "$f") | cmp "$BATS_TEST_TMPDIR/want" -
  "$CLSORT" -d host -vv -k u32 < "$f" 2> "$BATS_TEST_TMPDIR/err" | cmp "$BATS_TEST_TMPDIR/want" -
  ! grep -q "sorted in place" "$BATS_TEST_TMPDIR/err" || fail "a file as stdin: in place"
}

@test "host: bare keys of a pipe counted while they arrive are sorted as refsort sorts them" {
  local f=$BATS_TEST_TMPDIR/in t n d r msg="segments of 1048576 keys counted while the stream arrived"
  # Past the first 8 MiB of a stream its keys are counted, in segments of
  # 2^20 keys, the last one short; sorted keys move the first digit up as
  # they come, few and equal keys leave the sort none.
  for t in u32 i32 u64 i64; do
    for n in 2097155 4194309; do
      [ "$t" = u32 ] || [ "$n" = 2097155 ] || continue
      for d in rand sorted reverse few equal; do
        [ "$t" = u32 ] || [ "$d" = rand ] || [ "$d" = sorted ] || continue
        "$REFSORT" gen "$t" "$n" "$n" "$d" > "$f"
        for r in "" -r; do
          "$REFSORT" sort -k "$t" $r < "$f" > "$BATS_TEST_TMPDIR/want"
          cat "$f" | "$CLSORT" -d host -vv -k "$t" $r > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err"
          cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "$n $t keys, $d, $r"
          grep -q "$msg" "$BATS_TEST_TMPDIR/err" || fail "$n $t keys, $d, $r: $(cat "$BATS_TEST_TMPDIR/err")"
        done
      done
    done
  done
  "$REFSORT" gen u32 4194309 5 rand > "$f"
  "$REFSORT" sort -k u32 < "$f" > "$BATS_TEST_TMPDIR/want"
  # A writer that pauses past the first segments; three threads.
  { dd if="$f" bs=1M count=9 status=none; sleep 0.2; dd if="$f" bs=1M skip=9 status=none; } |
    "$CLSORT" -d host --parallel=3 -k u32 | cmp "$BATS_TEST_TMPDIR/want" -
  # A stream that leaves its memory once counted from: sorted in runs.
  cat "$f" | "$CLSORT" -d host -vv --memory 12M -k u32 2> "$BATS_TEST_TMPDIR/err" |
    cmp "$BATS_TEST_TMPDIR/want" - || fail "--memory 12M: $(cat "$BATS_TEST_TMPDIR/err")"
  # One thread: none to spare for the count.
  cat "$f" | "$CLSORT" -d host -vv --parallel=1 -k u32 2> "$BATS_TEST_TMPDIR/err" |
    cmp "$BATS_TEST_TMPDIR/want" -
  ! grep -q "$msg" "$BATS_TEST_TMPDIR/err" || fail "--parallel=1 counted"
  # Two streams past 8 MiB, the later one longer: one input of two pieces.
  "$REFSORT" gen u32 2097155 6 rand > "$BATS_TEST_TMPDIR/in2"
  cat "$BATS_TEST_TMPDIR/in2" "$f" | "$REFSORT" sort -k u32 > "$BATS_TEST_TMPDIR/want"
  "$CLSORT" -d host -k u32 <(cat "$BATS_TEST_TMPDIR/in2") <(cat "$f") | cmp "$BATS_TEST_TMPDIR/want" -
}

@test "host: kv lines' words sorted where they were parsed, and back there where the ties need them whole" {
  local f=$BATS_TEST_TMPDIR/kv args
  "$REFSORT" gen-kv 200000 12 > "$f"
  for args in "-f kv" "-f kv -k u64 -r" "-f kv -u" "-f kv -k str" "-f kv -k str -u -r" \
    "-t: -K 2,str -K 1,u32,r"; do
    "$CLSORT" "${DEV[@]}" $args "$f" > "$BATS_TEST_TMPDIR/want"
    "$CLSORT" -d host -vv $args "$f" > "$BATS_TEST_TMPDIR/got" 2> "$BATS_TEST_TMPDIR/err" ||
      fail "$args: $(cat "$BATS_TEST_TMPDIR/err")"
    cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || fail "$args: differs from the device's"
    grep -q "host engine: 200000 words sorted in place" "$BATS_TEST_TMPDIR/err" ||
      fail "$args: $(cat "$BATS_TEST_TMPDIR/err")"
    cat "$f" | "$CLSORT" -d host $args | cmp "$BATS_TEST_TMPDIR/want" - || fail "$args: a pipe"
  done
}

@test "host: kv lines gathered in rounds, to a pipe and into a mapping, in refsort's order" {
  local f=$BATS_TEST_TMPDIR/kv p
  # Few keys: the order of each key's lines shows a round's shares out
  # of place.  200003 lines are several rounds on every thread count.
  "$REFSORT" gen-kv 200003 14 u32 1000 > "$f"
  "$REFSORT" sort -f kv < "$f" > "$BATS_TEST_TMPDIR/want"
  for p in 1 2 3 4; do
    "$CLSORT" -d host --parallel=$p -f kv "$f" | cmp "$BATS_TEST_TMPDIR/want" - ||
      fail "--parallel=$p to a pipe"
    rm -f "$BATS_TEST_TMPDIR/out"
    "$CLSORT" -d host --parallel=$p -f kv -o "$BATS_TEST_TMPDIR/out" "$f"
    cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" || fail "--parallel=$p to -o"
  done
  # A last round just short of a whole one (32768 lines a thread), its
  # lines not a multiple of the threads: no share larger than a thread's
  # entries (the last share took the rest, and overran them).
  for spec in "3 196607" "4 1048575" "8 262143"; do
    read -r p n <<< "$spec"
    "$REFSORT" gen-kv "$n" 15 u32 1000 > "$f"
    "$REFSORT" sort -f kv < "$f" > "$BATS_TEST_TMPDIR/want"
    "$CLSORT" -d host --parallel=$p -f kv "$f" | cmp "$BATS_TEST_TMPDIR/want" - ||
      fail "$n lines, --parallel=$p to a pipe"
    rm -f "$BATS_TEST_TMPDIR/out"
    "$CLSORT" -d host --parallel=$p -f kv -o "$BATS_TEST_TMPDIR/out" "$f" ||
      fail "$n lines, --parallel=$p to -o: status $?"
    cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" || fail "$n lines, --parallel=$p to -o"
  done
}

@test "host: a run of 2^20 kv lines or more dealt by rank into a mapping, in refsort's order" {
  local f=$BATS_TEST_TMPDIR/kv p
  # Few keys, so that equal keys span buckets and threads; a line of 300
  # KB (its bucket larger than the caches); lines of 2^17 - 1 bytes and
  # 2^17 with their ends, the first the longest whose length the deal
  # keeps beside its rank; the last line without its end.
  "$REFSORT" gen-kv 1100009 15 u32 1000 > "$f"
  { head -n 500000 "$f"; printf '77:%0300000d\n' 0; printf '78:%0131067d\n78:%0131068d\n' 1 2
    tail -n +500001 "$f" | head -c -1; } > "$f.x"
  mv "$f.x" "$f"
  "$REFSORT" sort -f kv < "$f" > "$BATS_TEST_TMPDIR/want"
  for p in 2 3 4; do
    rm -f "$BATS_TEST_TMPDIR/out"
    "$CLSORT" -d host --parallel=$p -vv -f kv -o "$BATS_TEST_TMPDIR/out" "$f" 2> "$BATS_TEST_TMPDIR/err"
    cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" || fail "--parallel=$p to -o"
    # Their ranks and places in the memory the sort went through.
    grep -q "1100012 kv lines dealt by rank into 34 buckets, their ranks in the sort's spare memory" \
      "$BATS_TEST_TMPDIR/err" || fail "--parallel=$p: $(cat "$BATS_TEST_TMPDIR/err")"
  done
  # Keys of 64 bits: words of 16 bytes.
  "$REFSORT" sort -f kv -k u64 < "$f" > "$BATS_TEST_TMPDIR/want64"
  "$CLSORT" -d host --parallel=2 -vv -f kv -k u64 -o "$BATS_TEST_TMPDIR/out" "$f" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want64" "$BATS_TEST_TMPDIR/out" || fail "-k u64"
  grep -q "dealt by rank into 34 buckets, their ranks in the sort's spare memory" \
    "$BATS_TEST_TMPDIR/err" || fail "-k u64: $(cat "$BATS_TEST_TMPDIR/err")"
  cat "$f" | "$CLSORT" -d host --parallel=2 -vv -f kv -k u64 > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want64" "$BATS_TEST_TMPDIR/out" || fail "-k u64, a pipe"
  grep -q "sorted through the output's place" "$BATS_TEST_TMPDIR/err" ||
    fail "-k u64, a pipe: $(cat "$BATS_TEST_TMPDIR/err")"
  # A stream's lines: their words sorted in the output's place, then
  # dealt; a deal that cannot hold a bucket leaves them to the gather,
  # which takes the words out of the output's place first.
  cat "$f" | "$CLSORT" -d host --parallel=2 -vv -f kv > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" || fail "a pipe"
  grep -q "1100012 kv lines' words sorted through the output's place" "$BATS_TEST_TMPDIR/err" ||
    fail "a pipe: $(cat "$BATS_TEST_TMPDIR/err")"
  grep -q "dealt by rank" "$BATS_TEST_TMPDIR/err" || fail "a pipe: $(cat "$BATS_TEST_TMPDIR/err")"
  cat "$f" | CLSORT_DEAL_BUCKET_MAX=1000 "$CLSORT" -d host --parallel=2 -vv -f kv \
    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" || fail "a pipe, buckets too large"
  grep -q "sorted through the output's place" "$BATS_TEST_TMPDIR/err" ||
    fail "buckets too large: $(cat "$BATS_TEST_TMPDIR/err")"
  ! grep -q "dealt by rank" "$BATS_TEST_TMPDIR/err" || fail "buckets too large: dealt"
  # Descending, and through a pipe into standard output.
  "$REFSORT" sort -f kv -r < "$f" > "$BATS_TEST_TMPDIR/want"
  cat "$f" | "$CLSORT" -d host --parallel=3 -f kv -r > "$BATS_TEST_TMPDIR/out"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out"
  # One thread writes through write(2): its lines are gathered.
  "$CLSORT" -d host --parallel=1 -vv -f kv -r "$f" 2> "$BATS_TEST_TMPDIR/err" |
    cmp "$BATS_TEST_TMPDIR/want" -
  ! grep -q "dealt by rank" "$BATS_TEST_TMPDIR/err"
}

@test "host: a stream's kv lines dealt from their text, no line table made; the gather makes it" {
  local f=$BATS_TEST_TMPDIR/kv e=$BATS_TEST_TMPDIR/err
  "$REFSORT" gen-kv 1100009 15 u32 1000 > "$f"
  "$REFSORT" sort -f kv < "$f" > "$BATS_TEST_TMPDIR/want"
  # Read whole first however fast the stream comes (a busy machine's
  # can look slow), then into a mapping: dealt, the table never written.
  export CLSORT_STREAM_RATE=1
  cat "$f" | "$CLSORT" -d host --parallel=2 -vv -f kv > "$BATS_TEST_TMPDIR/out" 2> "$e"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" || fail "into a mapping"
  grep -q "their line table left until read" "$e" || fail "not left: $(cat "$e")"
  grep -q "dealt by rank" "$e" || fail "not dealt: $(cat "$e")"
  ! grep -q "line table of" "$e" || fail "made for a deal: $(cat "$e")"
  # Into a pipe, and where the deal cannot hold a bucket: gathered from
  # the table, made from the text once the words are sorted.
  cat "$f" | "$CLSORT" -d host --parallel=2 -vv -f kv 2> "$e" | cmp "$BATS_TEST_TMPDIR/want" - ||
    fail "into a pipe"
  grep -q "line table of 1100009 lines made from their text" "$e" || fail "pipe: $(cat "$e")"
  cat "$f" | CLSORT_DEAL_BUCKET_MAX=1000 "$CLSORT" -d host --parallel=3 -vv -f kv \
    > "$BATS_TEST_TMPDIR/out" 2> "$e"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" || fail "buckets too large"
  grep -q "line table of 1100009 lines made from their text" "$e" || fail "buckets: $(cat "$e")"
  # Lines of 64 bytes and more: the table written as they are parsed,
  # the deal reading it.
  "$REFSORT" gen-kv 1100009 70 u32 1000 150 > "$f.long"
  cat "$f.long" | "$CLSORT" -d host --parallel=2 -vv -f kv > "$BATS_TEST_TMPDIR/out" 2> "$e"
  "$REFSORT" sort -f kv < "$f.long" | cmp - "$BATS_TEST_TMPDIR/out" || fail "long lines"
  grep -q "1100009 lines parsed while the stream arrived" "$e" || fail "long: $(cat "$e")"
  ! grep -q "line table left until read" "$e" || fail "long: $(cat "$e")"
  grep -q "dealt by rank" "$e" || fail "long, not dealt: $(cat "$e")"
  # Ties of string keys read the table as they are ordered: written as
  # the lines are parsed.
  cat "$f" | "$CLSORT" -d host --parallel=2 -vv -f kv -k str > "$BATS_TEST_TMPDIR/out" 2> "$e"
  LC_ALL=C sort -s -t: -k1,1 "$f" | cmp - "$BATS_TEST_TMPDIR/out" || fail "-k str"
  ! grep -q "line table left until read" "$e" || fail "-k str: $(cat "$e")"
}

@test "host: kv lines of several files dealt by rank, one file without its last line end; lines skipped" {
  local d=$BATS_TEST_TMPDIR
  # Three stretches and more: each file's lines lie side by side in it,
  # not with the next file's.
  "$REFSORT" gen-kv 700001 15 u32 5000 > "$d/a"
  "$REFSORT" gen-kv 500003 40 u32 5000 | head -c -1 > "$d/b"
  printf '3:short\n' > "$d/c"
  { cat "$d/a" "$d/b"; printf '\n'; cat "$d/c"; } | "$REFSORT" sort -f kv > "$d/want"
  for p in 2 3; do
    rm -f "$d/out"
    "$CLSORT" -d host --parallel=$p -vv -f kv -o "$d/out" "$d/a" "$d/b" "$d/c" 2> "$d/err"
    cmp "$d/want" "$d/out" || fail "--parallel=$p"
    grep -q "1200005 kv lines dealt by rank" "$d/err" || fail "--parallel=$p: $(cat "$d/err")"
  done
  # Lines dropped by --skip-bad: dealt from the line table's entries.
  "$REFSORT" gen-kv 1100009 16 u32 5000 | sed '100s/^[0-9]*:/x:/; 600000s/^[0-9]*:/y:/' > "$d/bad"
  grep -v '^[xy]:' "$d/bad" | "$REFSORT" sort -f kv > "$d/want"
  rm -f "$d/out"
  "$CLSORT" -d host --parallel=2 -vv -f kv --skip-bad -o "$d/out" "$d/bad" 2> "$d/err"
  cmp "$d/want" "$d/out" || fail "--skip-bad"
  grep -q "1100007 kv lines dealt by rank" "$d/err" || fail "--skip-bad: $(cat "$d/err")"
}

@test "host: records that fit in their words keep equal keys in input order, whatever their other bytes" {
  local spec n s
  # Keys of about n/4 values (ties in short runs, in small buckets and
  # below the insertion sort's 256 words), the other bytes counting down.
  for spec in "8 0 4 u32" "8 4 4 i32" "5 1 4 i32" "16 0 8 u64" "16 8 8 i64" "9 0 8 i64" "12 4 8 u64"; do
    set -- $spec
    for n in 2 255 3001 70001; do
      perl -e '($n, $size, $off, $w, $seed) = @ARGV; srand($seed);
        for $i (0 .. $n - 1) {
          $r = pack("C", ($n - $i) & 255) x $size;
          $k = int(rand($n / 4 + 1)) - int($n / 8);
          substr($r, $off, $w) = $w == 4 ? pack("l<", $k) : pack("q<", $k);
          print $r;
        }' "$n" "$1" "$2" "$3" 7 > "$BATS_TEST_TMPDIR/in"
      "$REFSORT" sort -R "$1" --key-offset "$2" -k "$4" < "$BATS_TEST_TMPDIR/in" > "$BATS_TEST_TMPDIR/want"
      for s in "" -s; do
        "$CLSORT" -d host -R "$1" --key-offset "$2" -k "$4" $s "$BATS_TEST_TMPDIR/in" |
          cmp "$BATS_TEST_TMPDIR/want" - || fail "-R $1 --key-offset $2 -k $4 $s, $n records"
      done
      "$REFSORT" sort -R "$1" --key-offset "$2" -k "$4" -r < "$BATS_TEST_TMPDIR/in" > "$BATS_TEST_TMPDIR/want"
      cat "$BATS_TEST_TMPDIR/in" | "$CLSORT" -d host -R "$1" --key-offset "$2" -k "$4" -r -s |
        cmp "$BATS_TEST_TMPDIR/want" - || fail "-R $1 --key-offset $2 -k $4 -r -s, $n records, a pipe"
    done
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
