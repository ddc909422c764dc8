#!/usr/bin/env bats
# Input formats and key types: key:value lines, every key type as bare
# keys, inside records and in kv lines, stability, --check and --skip-bad.
# Sorted output is compared byte for byte with refsort's and, for kv lines
# with u32 keys, with GNU sort's.
load helpers
bats_require_minimum_version 1.5.0

TYPES=(u32 i32 f32 u64 i64 f64)

width() { case $1 in *32) echo 4 ;; *) echo 8 ;; esac; }

# ref_cmp IN WHAT [OPTION]... [-- CLSORT-ONLY OPTION...]: clsort on the
# device and refsort, given the same options, sort IN alike.
ref_cmp() {
  local in=$1 what=$2 opts=() extra=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  [ $# -eq 0 ] || { shift; extra=("$@"); }
  "$REFSORT" sort "${opts[@]}" < "$in" > "$BATS_TEST_TMPDIR/want" ||
    fail "refsort ${opts[*]} failed on $what"
  "$CLSORT" "${DEV[@]}" "${opts[@]}" "${extra[@]}" "$in" > "$BATS_TEST_TMPDIR/got" ||
    fail "clsort ${opts[*]} ${extra[*]} failed with status $? on $what"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" ||
    fail "clsort ${opts[*]} ${extra[*]} differs from refsort on $what"
}

# gnu_cmp IN WHAT SEP [CLSORT OPTION]...: kv lines with u32 keys, clsort
# against GNU sort, stable, numeric on the first field, reversed if -r is
# among the options.
gnu_cmp() {
  local in=$1 what=$2 sep=$3 k=-k1,1n a
  shift 3
  for a; do [ "$a" = -r ] && k=-k1,1nr; done
  sort -s -t "$sep" "$k" < "$in" > "$BATS_TEST_TMPDIR/gnu"
  "$CLSORT" "${DEV[@]}" -f kv "$@" "$in" > "$BATS_TEST_TMPDIR/got" ||
    fail "clsort $* failed with status $? on $what"
  cmp "$BATS_TEST_TMPDIR/gnu" "$BATS_TEST_TMPDIR/got" ||
    fail "clsort $* differs from sort -s -t '$sep' $k on $what"
}

# both_cmp IN WHAT: kv lines with ':', both directions, against both.
both_cmp() {
  local r
  for r in "" -r; do
    ref_cmp "$1" "$2" -f kv $r
    gnu_cmp "$1" "$2" : $r
  done
}

# le32 N...: u32 keys, little-endian, to stdout.
le32() {
  local n
  for n; do
    printf "\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8 & 255)))"
    printf "\\x$(printf %02x $((n >> 16 & 255)))\\x$(printf %02x $((n >> 24 & 255)))"
  done
}

# --- key:value lines ----------------------------------------------------

@test "kv: duplicate keys keep input order, as sort -s" {
  local f=$BATS_TEST_TMPDIR/in
  "$REFSORT" gen-kv 30000 1 u32 500 > "$f"
  # Many keys repeat: the values must come out in input order.
  [ "$(cut -d: -f1 "$f" | sort -u | wc -l)" -le 501 ]
  both_cmp "$f" "30000 lines, keys 0..500"
}

@test "kv: full-range u32 keys, from 0 to 4294967295" {
  local f=$BATS_TEST_TMPDIR/in
  { echo "4294967295:max"; "$REFSORT" gen-kv 20000 2; echo "0:min"; echo "4294967295:max2"; } > "$f"
  both_cmp "$f" "full-range keys"
  "$CLSORT" "${DEV[@]}" -f kv "$f" > "$BATS_TEST_TMPDIR/got"
  [ "$(head -n 1 "$BATS_TEST_TMPDIR/got")" = "0:min" ]
  [ "$(tail -n 2 "$BATS_TEST_TMPDIR/got" | tr '\n' ' ')" = "4294967295:max 4294967295:max2 " ]
}

@test "kv: the key ends at the first separator; values may hold more" {
  local f=$BATS_TEST_TMPDIR/in
  "$REFSORT" gen-kv 5000 3 u32 100 > "$f"
  printf '7:a:b:c\n7::\n3:::\n7:\n' >> "$f"
  grep -q '^[0-9]*:.*:' "$f"
  both_cmp "$f" "values with ':'"
  printf '3:::\n7:a:b:c\n7::\n7:\n' > "$BATS_TEST_TMPDIR/want"
  tail -n 4 "$f" | "$CLSORT" "${DEV[@]}" -f kv > "$BATS_TEST_TMPDIR/got"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

@test "kv: empty values" {
  local f=$BATS_TEST_TMPDIR/in
  # Values of at most 1 byte: about half of them empty.
  "$REFSORT" gen-kv 8000 4 u32 50 1 > "$f"
  grep -q '^[0-9]*:$' "$f"
  both_cmp "$f" "empty values"
}

@test "kv: values longer than 64 KiB" {
  local f=$BATS_TEST_TMPDIR/in
  "$REFSORT" gen-kv 40 5 u32 10 200000 > "$f"
  [ "$(awk '{ if (length > m) m = length } END { print m }' "$f")" -gt 65536 ]
  both_cmp "$f" "long values"
}

@test "kv: CRLF lines keep their carriage return in the value" {
  local f=$BATS_TEST_TMPDIR/in
  "$REFSORT" gen-kv 5000 6 u32 300 | sed 's/$/\r/' > "$f"
  both_cmp "$f" "CRLF lines"
  printf '2:b\r\n1:a\r\n' | "$CLSORT" "${DEV[@]}" -f kv > "$BATS_TEST_TMPDIR/got"
  printf '1:a\r\n2:b\r\n' | cmp - "$BATS_TEST_TMPDIR/got"
}

@test "kv: a missing final newline is added" {
  local f=$BATS_TEST_TMPDIR/in
  "$REFSORT" gen-kv 3000 7 u32 1000 > "$f"
  printf '5:no newline' >> "$f"
  both_cmp "$f" "unterminated last line"
  printf '9:z\n1:last' | "$CLSORT" "${DEV[@]}" -f kv > "$BATS_TEST_TMPDIR/got"
  printf '1:last\n9:z\n' | cmp - "$BATS_TEST_TMPDIR/got"
  printf '1:only' | "$CLSORT" "${DEV[@]}" -f kv > "$BATS_TEST_TMPDIR/got"
  printf '1:only\n' | cmp - "$BATS_TEST_TMPDIR/got"
}

@test "kv: empty input gives empty output" {
  "$CLSORT" "${DEV[@]}" -f kv < /dev/null > "$BATS_TEST_TMPDIR/got"
  [ ! -s "$BATS_TEST_TMPDIR/got" ]
}

@test "kv: -t, splits at commas, ':' then belongs to the value" {
  local f=$BATS_TEST_TMPDIR/in r
  "$REFSORT" gen-kv 6000 8 u32 400 | sed 's/:/,/' > "$f"
  grep -q '^[0-9]*,.*[:,]' "$f"
  for r in "" -r; do
    ref_cmp "$f" "comma-separated" -f kv -t , $r
    gnu_cmp "$f" "comma-separated" , -t , $r
  done
}

@test "kv: a tab separator, given as a tab or as \\t" {
  local f=$BATS_TEST_TMPDIR/in r tab=$'\t'
  "$REFSORT" gen-kv 6000 9 u32 400 | sed 's/:/\t/' > "$f"
  for r in "" -r; do
    ref_cmp "$f" "tab-separated" -f kv -t "$tab" $r
    gnu_cmp "$f" "tab-separated" "$tab" -t "$tab" $r
    gnu_cmp "$f" "tab-separated" "$tab" -t '\t' $r
  done
}

@test "kv: several files are sorted together, each last line its own" {
  local d=$BATS_TEST_TMPDIR r
  "$REFSORT" gen-kv 4000 10 u32 200 > "$d/a"
  "$REFSORT" gen-kv 3000 11 u32 200 | head -c -1 > "$d/b"   # no final newline
  printf '' > "$d/c"
  "$REFSORT" gen-kv 5000 12 u32 200 > "$d/e"
  awk 1 "$d/a" "$d/b" "$d/c" "$d/e" > "$d/all"
  for r in "" -r; do
    "$REFSORT" sort -f kv $r < "$d/all" > "$d/want"
    "$CLSORT" "${DEV[@]}" -f kv $r "$d/a" "$d/b" "$d/c" "$d/e" > "$d/got"
    cmp "$d/want" "$d/got"
    sort -s -t : -k1,1n$([ -n "$r" ] && echo r) "$d/a" "$d/b" "$d/c" "$d/e" | cmp - "$d/got"
  done
}

@test "kv: bigger than the host shortcut, with and without a device" {
  local f=$BATS_TEST_TMPDIR/in
  "$REFSORT" gen-kv 100000 13 u32 5000 > "$f"
  both_cmp "$f" "100000 lines"
  env -u CLSORT_DEVICE "$CLSORT" -f kv "$f" > "$BATS_TEST_TMPDIR/got"
  sort -s -t : -k1,1n "$f" | cmp - "$BATS_TEST_TMPDIR/got"
}

# --- key types --------------------------------------------------------------

@test "bare keys of every type: extremes, -0.0, inf, NaN, both directions" {
  local f=$BATS_TEST_TMPDIR/in t d r
  for t in "${TYPES[@]}"; do
    for d in special rand few; do
      "$REFSORT" gen "$t" 20000 21 "$d" > "$f"
      for r in "" -r; do
        ref_cmp "$f" "$t $d keys" -k "$t" $r
      done
    done
  done
}

@test "bare keys of every type, tiny inputs through the host shortcut" {
  local f=$BATS_TEST_TMPDIR/in t r
  for t in "${TYPES[@]}"; do
    "$REFSORT" gen "$t" 300 22 special > "$f"
    for r in "" -r; do
      "$REFSORT" sort -k "$t" $r < "$f" > "$BATS_TEST_TMPDIR/want"
      env -u CLSORT_DEVICE "$CLSORT" -k "$t" $r "$f" > "$BATS_TEST_TMPDIR/got"
      cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" ||
        fail "host sort of $t keys $r differs from refsort"
    done
  done
}

@test "float order: NaNs last, -0.0 before +0.0, infinities at the ends" {
  # Hand-written f64 keys, checked without refsort: -inf -1 -0.0 +0.0 1 inf
  # then the NaNs in input order (negative NaN first, as it came first).
  local d=$BATS_TEST_TMPDIR
  printf '%s\n' 'nan1:-nan' '1:1' 'pz:0' 'ninf:-inf' 'nz:-0' 'pinf:inf' 'nan2:nan' 'm1:-1' |
    awk -F: '{ print $2 ":" $1 }' > "$d/in"
  "$CLSORT" "${DEV[@]}" -f kv -k f64 "$d/in" | cut -d: -f2 | tr '\n' ' ' > "$d/got"
  [ "$(cat "$d/got")" = "ninf m1 nz pz 1 pinf nan1 nan2 " ]
  "$CLSORT" "${DEV[@]}" -f kv -k f32 -r "$d/in" | cut -d: -f2 | tr '\n' ' ' > "$d/got"
  [ "$(cat "$d/got")" = "nan1 nan2 pinf 1 pz nz m1 ninf " ]
}

@test "records of every type, key at start, middle and end" {
  local f=$BATS_TEST_TMPDIR/in t w size off r
  for t in "${TYPES[@]}"; do
    w=$(width "$t")
    for size in "$w" $((w + 1)) 12 37 256; do
      [ "$size" -ge "$w" ] || continue
      for off in $(printf '%s\n' 0 $(((size - w) / 2)) $((size - w)) | sort -un); do
        "$REFSORT" gen-rec 3000 "$size" "$off" "$t" "$size" special > "$f"
        for r in "" -r; do
          ref_cmp "$f" "$size-byte $t records, key at $off" -k "$t" -R "$size" --key-offset "$off" $r
        done
      done
    done
  done
}

@test "records: sizes 4 to 256 in one sweep of u32 and f64 keys" {
  local f=$BATS_TEST_TMPDIR/in size off t
  for size in 8 9 10 15 16 17 31 33 63 64 65 100 127 128 129 200 255 256; do
    for t in u32 f64; do
      off=$(((size * 7 + 3) % (size - $(width "$t") + 1)))
      "$REFSORT" gen-rec 2000 "$size" "$off" "$t" $((size + 1)) rand > "$f"
      ref_cmp "$f" "$size-byte $t records, key at $off" -k "$t" -R "$size" --key-offset "$off"
    done
  done
  for size in 4 5 6 7; do
    "$REFSORT" gen-rec 2000 "$size" $((size - 4)) i32 "$size" special > "$f"
    ref_cmp "$f" "$size-byte i32 records" -k i32 -R "$size" --key-offset $((size - 4)) -r
  done
}

@test "kv lines with keys of every type, special values" {
  local f=$BATS_TEST_TMPDIR/in t d r
  for t in "${TYPES[@]}"; do
    for d in special rand few 1000; do
      "$REFSORT" gen-kv 8000 23 "$t" "$d" > "$f"
      for r in "" -r; do
        ref_cmp "$f" "kv, $t keys, $d" -f kv -k "$t" $r
      done
    done
  done
}

@test "kv: signed keys take a sign, unsigned ones do not" {
  local d=$BATS_TEST_TMPDIR
  printf '%s\n' '+5:a' '-2147483648:b' '2147483647:c' '-0:d' '0:e' '-1:f' > "$d/in"
  "$CLSORT" "${DEV[@]}" -f kv -k i32 "$d/in" | cut -d: -f2 | tr -d '\n' > "$d/got"
  [ "$(cat "$d/got")" = "bfdeac" ]
  printf '%s\n' '-9223372036854775808:a' '9223372036854775807:b' '-1:c' > "$d/in"
  "$CLSORT" "${DEV[@]}" -f kv -k i64 -r "$d/in" | cut -d: -f2 | tr -d '\n' > "$d/got"
  [ "$(cat "$d/got")" = "bca" ]
  printf '%s\n' '18446744073709551615:a' '0:b' '9223372036854775808:c' > "$d/in"
  "$CLSORT" "${DEV[@]}" -f kv -k u64 "$d/in" | cut -d: -f2 | tr -d '\n' > "$d/got"
  [ "$(cat "$d/got")" = "bca" ]
  run "$CLSORT" "${DEV[@]}" -f kv -k u32 <<< '+5:a'
  assert_failure 2
  run "$CLSORT" "${DEV[@]}" -f kv -k i32 <<< '2147483648:a'
  assert_failure 2
}

# --- stability ----------------------------------------------------------------

@test "--stable: equal keys keep input order, both directions, every type" {
  local f=$BATS_TEST_TMPDIR/in t r s
  for t in "${TYPES[@]}"; do
    "$REFSORT" gen-rec 20000 24 8 "$t" 31 few > "$f"
    for r in "" -r; do
      for s in --stable ""; do
        ref_cmp "$f" "24-byte $t records, 5 distinct keys" -k "$t" -R 24 --key-offset 8 $r $s
      done
    done
  done
}

@test "--stable: input positions rise within each key (checked with od and sort)" {
  # 8-byte records: u32 key, then the u32 input position.  The stable
  # order is (key, position), or (key descending, position) with -r.
  local d=$BATS_TEST_TMPDIR
  "$REFSORT" gen-rec 50000 8 0 u32 32 few > "$d/in"
  od -An -v -tu4 -w8 "$d/in" | awk '{ print $1, $2 }' > "$d/pairs"
  [ "$(awk '{ print $1 }' "$d/pairs" | sort -u | wc -l)" -eq 5 ]
  sort -k1,1n -k2,2n "$d/pairs" > "$d/want"
  "$CLSORT" "${DEV[@]}" -s -R 8 "$d/in" | od -An -v -tu4 -w8 | awk '{ print $1, $2 }' > "$d/got"
  cmp "$d/want" "$d/got"
  sort -k1,1nr -k2,2n "$d/pairs" > "$d/want"
  "$CLSORT" "${DEV[@]}" -s -r -R 8 "$d/in" | od -An -v -tu4 -w8 | awk '{ print $1, $2 }' > "$d/got"
  cmp "$d/want" "$d/got"
}

@test "--stable: records over several runs keep input order" {
  local f=$BATS_TEST_TMPDIR/in r
  "$REFSORT" gen-rec 40000 12 4 f32 34 few > "$f"
  for r in "" -r; do
    ref_cmp "$f" "12-byte f32 records, 5 distinct keys" -k f32 -R 12 --key-offset 4 -s $r -- -S 64K
  done
}

@test "--stable: kv lines over several runs keep input order" {
  local f=$BATS_TEST_TMPDIR/in
  "$REFSORT" gen-kv 60000 33 u32 3 > "$f"
  ref_cmp "$f" "kv, 4 distinct keys" -f kv -s -- -S 64K
  gnu_cmp "$f" "kv, 4 distinct keys" : -r -s -S 64K
}

# --- --check -------------------------------------------------------------------

@test "-c: sorted input of every type exits 0, prints nothing" {
  local d=$BATS_TEST_TMPDIR t r
  for t in "${TYPES[@]}"; do
    "$REFSORT" gen "$t" 5000 41 special > "$d/k"
    for r in "" -r; do
      "$REFSORT" sort -k "$t" $r < "$d/k" > "$d/sorted"
      run --separate-stderr "$CLSORT" -c -k "$t" $r "$d/sorted"
      [ "$status" -eq 0 ] || fail "-c -k $t $r: status $status on sorted input ($stderr)"
      [ -z "$output" ] && [ -z "$stderr" ]
    done
  done
  "$REFSORT" gen-kv 5000 42 f64 special | "$REFSORT" sort -f kv -k f64 > "$d/kv"
  run --separate-stderr "$CLSORT" -c -f kv -k f64 "$d/kv"
  assert_success
  [ -z "$output" ] && [ -z "$stderr" ]
}

@test "-c: equal keys are in order; empty input is in order" {
  local d=$BATS_TEST_TMPDIR
  "$REFSORT" gen u64 1000 43 equal > "$d/k"
  run "$CLSORT" -c -k u64 "$d/k"
  assert_success
  run "$CLSORT" -c -r -k u64 "$d/k"
  assert_success
  : > "$d/empty"
  run "$CLSORT" -c -f kv "$d/empty"
  assert_success
  assert_output ""
}

@test "-c: unsorted bin input exits 1 naming the file and record" {
  local d=$BATS_TEST_TMPDIR
  le32 1 2 3 5 4 6 > "$d/k"
  run --separate-stderr "$CLSORT" -c -k u32 "$d/k"
  assert_failure 1
  [ -z "$output" ]
  [[ $stderr == *"$d/k"* ]] || fail "no file name in: $stderr"
  [[ $stderr == *"record 5"* ]] || fail "no record number in: $stderr"
  # The key sits at offset 4 of 8-byte records: only it counts.
  le32 9 1 0 2 7 3 > "$d/rec"
  run "$CLSORT" -c -R 8 --key-offset 4 "$d/rec"
  assert_success
  le32 0 2 9 1 > "$d/rec"
  run "$CLSORT" -C -R 8 --key-offset 4 - < "$d/rec"
  assert_failure 1
}

@test "-c: unsorted kv input exits 1 naming the file and line" {
  local d=$BATS_TEST_TMPDIR
  printf '1:a\n2:b\n2:c\n1:d\n3:e\n' > "$d/kv"
  run --separate-stderr "$CLSORT" -c -f kv "$d/kv"
  assert_failure 1
  [ -z "$output" ]
  [[ $stderr == *"$d/kv:4"* ]] || fail "no file:line in: $stderr"
}

@test "-c: the check runs across files, the message names the file" {
  local d=$BATS_TEST_TMPDIR
  printf '1:a\n5:b\n' > "$d/a"
  printf '5:c\n9:d\n' > "$d/b"
  printf '6:e\n4:f\n' > "$d/c"
  run "$CLSORT" -c -f kv "$d/a" "$d/b"
  assert_success
  run --separate-stderr "$CLSORT" -c -f kv "$d/a" "$d/c"
  assert_failure 1
  [[ $stderr == *"$d/c:2"* ]] || fail "no file:line in: $stderr"
  run --separate-stderr "$CLSORT" -c -f kv "$d/b" "$d/a"
  assert_failure 1
  [[ $stderr == *"$d/a:1"* ]] || fail "no file:line in: $stderr"
}

@test "-C, --check=quiet and --check=silent exit 1 without a word" {
  local d=$BATS_TEST_TMPDIR o
  le32 3 2 > "$d/k"
  printf '2:x\n1:y\n' > "$d/kv"
  for o in -C --check=quiet --check=silent; do
    run --separate-stderr "$CLSORT" "$o" -k u32 "$d/k"
    assert_failure 1
    [ -z "$output" ] && [ -z "$stderr" ]
    run --separate-stderr "$CLSORT" "$o" -f kv "$d/kv"
    assert_failure 1
    [ -z "$output" ] && [ -z "$stderr" ]
  done
  run "$CLSORT" -C -r -k u32 "$d/k"
  assert_success
}

@test "-c -r checks descending order" {
  local d=$BATS_TEST_TMPDIR
  "$REFSORT" gen-kv 3000 44 i64 special | "$REFSORT" sort -f kv -k i64 -r > "$d/desc"
  run "$CLSORT" -c -r -f kv -k i64 "$d/desc"
  assert_success
  assert_output ""
  run --separate-stderr "$CLSORT" -c -f kv -k i64 "$d/desc"
  assert_failure 1
  printf '3:a\n2:b\n2:c\n5:d\n' > "$d/kv"
  run --separate-stderr "$CLSORT" -c -r -f kv "$d/kv"
  assert_failure 1
  [[ $stderr == *"$d/kv:4"* ]] || fail "no file:line in: $stderr"
}

@test "-c FILE: the file after -c is read, not taken as the mode" {
  local d=$BATS_TEST_TMPDIR
  le32 1 2 3 > "$d/k"
  run "$CLSORT" -c "$d/k"
  assert_success
  run "$CLSORT" --check "$d/k"
  assert_success
}

# --- --skip-bad --------------------------------------------------------------

# bad_kv FILE: good lines with bad ones in between, 8 of them, the first
# bad one on line 3.
bad_kv() {
  {
    printf '5:a\n3:b\n'
    printf 'x:bad letters\n'
    "$REFSORT" gen-kv 1000 51 u32 100
    printf 'no separator\n:empty key\n-1:negative\n4294967296:too big\n 7:leading blank\n'
    "$REFSORT" gen-kv 1000 52 u32 100
    printf '7 :trailing blank\n\n2:last'
  } > "$1"
}

@test "--skip-bad drops bad kv lines and counts them" {
  local d=$BATS_TEST_TMPDIR
  bad_kv "$d/in"
  "$REFSORT" sort -f kv --skip-bad < "$d/in" > "$d/want" 2> /dev/null
  [ "$(wc -l < "$d/want")" -eq 2003 ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv --skip-bad -o "$d/got" "$d/in"
  assert_success
  [[ $stderr == *"skipped 8 lines"* ]] || fail "no count in: $stderr"
  cmp "$d/want" "$d/got"
  "$REFSORT" sort -f kv --skip-bad -r < "$d/in" > "$d/want" 2> /dev/null
  "$CLSORT" "${DEV[@]}" -f kv --skip-bad -r "$d/in" > "$d/got" 2> /dev/null
  cmp "$d/want" "$d/got"
}

@test "--skip-bad with float keys and another separator" {
  local d=$BATS_TEST_TMPDIR
  {
    "$REFSORT" gen-kv 2000 53 f64 special | sed 's/:/,/'
    printf '1.5.2,x\nnanx,y\n1e999,range\n1:2,colon in key\n,empty\n0x,hex\n'
  } > "$d/in"
  "$REFSORT" sort -f kv -k f64 -t , --skip-bad < "$d/in" > "$d/want" 2> /dev/null
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv -k f64 -t , --skip-bad -o "$d/got" "$d/in"
  assert_success
  [[ $stderr == *"skipped 6 lines"* ]] || fail "no count in: $stderr"
  cmp "$d/want" "$d/got"
}

@test "--skip-bad over megabytes parsed by several threads and runs" {
  local d=$BATS_TEST_TMPDIR i p
  for i in 1 2 3 4 5 6; do
    "$REFSORT" gen-kv 12000 $((60 + i)) u32 1000 100
    echo "bad $i"
  done > "$d/in"
  "$REFSORT" sort -f kv --skip-bad < "$d/in" > "$d/want" 2> /dev/null
  for p in "--parallel=1" "--parallel=4" "--parallel=3 -S 256K"; do
    run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv --skip-bad $p -o "$d/got" "$d/in"
    assert_success
    [[ $stderr == *"skipped 6 lines"* ]] || fail "$p: no count in: $stderr"
    cmp "$d/want" "$d/got" || fail "$p differs from refsort"
  done
  # Without it, the first bad line, counted across the threads' shares.
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv --parallel=4 "$d/in"
  assert_failure 2
  [[ $stderr == *"$d/in:12001:"* ]] || fail "no file:line in: $stderr"
  sed -i 's/^bad [1-5]$/1:now good/' "$d/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv --parallel=4 "$d/in"
  assert_failure 2
  [[ $stderr == *"$d/in:72006:"* ]] || fail "no file:line in: $stderr"
}

@test "--skip-bad: a clean input reports nothing" {
  local d=$BATS_TEST_TMPDIR
  "$REFSORT" gen-kv 500 54 > "$d/in"
  run --separate-stderr "$CLSORT" -f kv --skip-bad -o "$d/got" "$d/in"
  assert_success
  [[ $stderr != *skipped* ]] || fail "unexpected: $stderr"
  "$REFSORT" sort -f kv < "$d/in" | cmp - "$d/got"
}

@test "without --skip-bad a bad line is an error naming file:line" {
  local d=$BATS_TEST_TMPDIR
  bad_kv "$d/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv "$d/in"
  assert_failure 2
  [ -z "$output" ]
  [[ $stderr == *"$d/in:3:"* ]] || fail "no file:line in: $stderr"
  # Line numbers count within each file.
  printf '1:a\n2:b\n' > "$d/a"
  printf '3:c\n4:d\n5:e\nfive:f\n' > "$d/b"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv "$d/a" "$d/b"
  assert_failure 2
  [ -z "$output" ]
  [[ $stderr == *"$d/b:4:"* ]] || fail "no file:line in: $stderr"
  # So does --check.
  run --separate-stderr "$CLSORT" -c -f kv "$d/a" "$d/b"
  assert_failure 2
  [[ $stderr == *"$d/b:4:"* ]] || fail "no file:line in: $stderr"
}

@test "a bad key is shown with its type in the message" {
  local d=$BATS_TEST_TMPDIR
  printf '1:a\nx:b\n' > "$d/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv "$d/in"
  assert_failure 2
  [[ $stderr == *"invalid u32 key 'x'"* ]] || fail "unexpected message: $stderr"
}

@test "global bitonic passes and pair tails on 64- and 128-bit words" {
  export CLSORT_GLOBAL=bitonic CLSORT_WG=16 CLSORT_EPT=4
  local f=$BATS_TEST_TMPDIR/in t n fuse
  for t in u64 i64 f64; do
    for fuse in 2 16; do
      for n in 700 4033; do
        "$REFSORT" gen "$t" "$n" "$n" > "$f"
        CLSORT_FUSE=$fuse ref_cmp "$f" "$n $t keys, $fuse words per work-item" -k "$t"
        CLSORT_FUSE=$fuse ref_cmp "$f" "$n $t keys, $fuse words per work-item, descending" -k "$t" -r
      done
    done
  done
}

@test "-u with float keys: keys equal as the order has them, -0 and 0 two, every NaN one" {
  local T=$BATS_TEST_TMPDIR
  printf '0\n-0\nnan\n1\n-nan\n0\nNaN\n-0\n' | sed 's/$/:v/' | cat -n | sed 's/^ *\([0-9]*\)\t\(.*\)/\2\1/' > "$T/f.kv"
  for dev in "${DEV[@]}" host; do
    [ "$dev" = -d ] && continue
    run -0 "$CLSORT" -d "$dev" -f kv -k f64 -u "$T/f.kv"
    [ "$output" = $'-0:v2\n0:v1\n1:v4\nnan:v3' ] || fail "-d $dev: $output"
    run -0 "$CLSORT" -d "$dev" -f kv -k f64 -u -r "$T/f.kv"
    [ "$output" = $'nan:v3\n1:v4\n0:v1\n-0:v2' ] || fail "-d $dev -r: $output"
  done
}

@test "text under the binary default: one warning naming -f kv and -k str, the sort unchanged" {
  local T=$BATS_TEST_TMPDIR
  printf '30:cc\n10:aa\n20:bb\n40:dd\n' > "$T/lines"
  run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/lines" -o "$T/got"
  [ "$status" -eq 0 ]
  [ "$stderr" = "clsort: warning: $T/lines: looks like text lines, but is sorted as binary u32 keys (for lines: -f kv with a numeric key field, e.g. -t, -F 2, or -k str)" ]
  "$REFSORT" sort < "$T/lines" | cmp - "$T/got"
  # Named formats and records, binary data and empty inputs: no warning.
  for opts in "-f bin" "-R 4" "-f kv"; do
    run --separate-stderr "$CLSORT" "${DEV[@]}" $opts "$T/lines"
    [ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$opts: status $status, '$stderr'"
  done
  "$REFSORT" gen u32 3000 1 > "$T/keys"
  run --separate-stderr "$CLSORT" "${DEV[@]}" /dev/null "$T/keys" -o /dev/null
  [ "$status" -eq 0 ] && [ -z "$stderr" ]
}
