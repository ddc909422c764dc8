#!/usr/bin/env bats
# The device's radix sort (--device-sort=radix) on PoCL: edge sizes around
# its tiles and blocks, key distributions that skip digit passes, every
# key type, both directions, records, text lines and --stable, each
# compared byte for byte with refsort (or GNU sort for string keys), and
# with the tiles and global passes (--device-sort=bitonic) on one input.
load helpers

setup() {
  T=$BATS_TEST_TMPDIR
}

# A small radix shape (tiles of 64 words, at most 4 blocks), so that small
# inputs fill several tiles per block, and partial tiles and blocks.
small() {
  CLSORT_RADIX_WG=16 CLSORT_RADIX_ITEMS=4 CLSORT_RADIX_BLOCKS=4 "$@"
}

# same_as_ref FILE WHAT REFSORT-OPTIONS -- CLSORT-OPTIONS...: clsort's
# radix sort of FILE, in its default shape and the small one, is
# refsort's.
same_as_ref() {
  local in=$1 what=$2 ref=() s
  shift 2
  while [ "$1" != -- ]; do ref+=("$1"); shift; done
  shift
  "$REFSORT" sort "${ref[@]}" < "$in" > "$T/want"
  for s in "" small; do
    $s "$CLSORT" "${DEV[@]}" --device-sort=radix "$@" "$in" > "$T/got" ||
      fail "clsort $* ($s) failed with status $? on $what"
    cmp "$T/want" "$T/got" || fail "clsort $* ($s) differs from refsort on $what"
  done
}

# sizes_check N [DIST...]: N u32 keys of each distribution (all five by
# default), ascending and descending.
sizes_check() {
  local n=$1 d dists
  shift
  dists=("$@")
  [ $# -gt 0 ] || dists=(rand equal few sorted reverse)
  for d in "${dists[@]}"; do
    "$REFSORT" gen u32 "$n" "$n" "$d" > "$T/in"
    same_as_ref "$T/in" "$n keys, $d" -- 
    same_as_ref "$T/in" "$n keys, $d, -r" -r -- -r
  done
}

@test "radix: no keys, 1, 2 and 3 keys" {
  sizes_check 0
  [ ! -s "$T/got" ]
  sizes_check 1
  sizes_check 2
  sizes_check 3
}

@test "radix: 255, 256 and 257 keys" {
  sizes_check 255
  sizes_check 256
  sizes_check 257
}

@test "radix: 2^k -+ 1 keys around tiles and blocks" {
  local n
  for n in 63 65 4095 4097 16383 16385; do
    sizes_check $n rand few
  done
  sizes_check 65535 rand
  sizes_check 65537 rand equal
}

@test "radix: a prime number of keys, every distribution" {
  sizes_check 100003
}

@test "radix: 2^20+1 keys" {
  sizes_check $(((1 << 20) + 1)) rand
}

@test "radix: every key type, special values, both directions" {
  local t
  for t in u32 i32 f32 u64 i64 f64; do
    "$REFSORT" gen $t 20011 7 special > "$T/in"
    same_as_ref "$T/in" "$t special" -k $t -- -k $t
    same_as_ref "$T/in" "$t special, -r" -k $t -r -- -k $t -r
    "$REFSORT" gen $t 30011 8 rand > "$T/in"
    same_as_ref "$T/in" "$t rand" -k $t -- -k $t
    "$REFSORT" gen $t 3001 9 few > "$T/in"
    same_as_ref "$T/in" "$t few, -r" -k $t -r -- -k $t -r
  done
}

@test "radix: records (indexed 64- and 128-bit words), --stable and -r" {
  local t
  for t in u32 i64 f64; do
    "$REFSORT" gen-rec 20003 16 4 $t 11 few > "$T/in"
    same_as_ref "$T/in" "$t records" -k $t -R 16 --key-offset 4 -- -k $t -R 16 --key-offset 4
    same_as_ref "$T/in" "$t records, -s -r" -k $t -R 16 --key-offset 4 -r -- \
      -k $t -R 16 --key-offset 4 -s -r
  done
}

@test "radix: kv lines, numeric keys and string keys (128-bit words), --stable" {
  "$REFSORT" gen-kv 30001 12 u32 500 > "$T/in"
  same_as_ref "$T/in" "kv lines" -f kv -- -f kv
  same_as_ref "$T/in" "kv lines, -s -r" -f kv -r -- -f kv -s -r
  "$REFSORT" gen-kv 30001 13 i64 > "$T/in"
  same_as_ref "$T/in" "kv i64 lines" -f kv -k i64 -- -f kv -k i64
  sort -s -t: -k1,1 "$T/in" > "$T/want"
  for s in "" small; do
    $s "$CLSORT" "${DEV[@]}" --device-sort=radix -f kv -k str -s "$T/in" > "$T/got"
    cmp "$T/want" "$T/got" || fail "-k str ($s) differs from sort -s"
  done
  sort -s -r -t: -k1,1 "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" --device-sort=radix -f kv -k str -s -r "$T/in" > "$T/got"
  cmp "$T/want" "$T/got" || fail "-k str -r differs from sort -s -r"
}

@test "radix and bitonic give the same bytes" {
  local o
  "$REFSORT" gen-rec 50021 12 0 u64 14 few > "$T/in"
  for o in "" -r; do
    "$CLSORT" "${DEV[@]}" --device-sort=radix -k u64 -R 12 $o "$T/in" > "$T/radix"
    "$CLSORT" "${DEV[@]}" --device-sort=bitonic -k u64 -R 12 $o "$T/in" > "$T/bitonic"
    cmp "$T/radix" "$T/bitonic" || fail "radix and bitonic differ ($o)"
  done
}

@test "radix: runs out of core, each sorted on the device" {
  "$REFSORT" gen u64 200003 15 rand > "$T/in"
  "$REFSORT" sort -k u64 < "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" --device-sort=radix -k u64 -S 256K "$T/in" > "$T/got"
  cmp "$T/want" "$T/got"
}

@test "-vv says which sort ran and how many digit passes" {
  "$REFSORT" gen u32 5000 1 equal > "$T/in"
  "$CLSORT" "${DEV[@]}" -vv --device-sort=radix "$T/in" 2> "$T/err" > /dev/null
  grep -q 'device sort: radix, 0 of 4 digit passes' "$T/err" || fail "$(cat "$T/err")"
  # Keys below 256 differ in their lowest byte only.
  perl -e 'print pack("V*", reverse 0 .. 255)' > "$T/in"
  "$CLSORT" "${DEV[@]}" -vv --device-sort=radix "$T/in" 2> "$T/err" > "$T/got"
  grep -q 'device sort: radix, 1 of 4 digit passes' "$T/err" || fail "$(cat "$T/err")"
  cmp <(perl -e 'print pack("V*", 0 .. 255)') "$T/got"
  "$REFSORT" gen u64 5000 2 rand > "$T/in"
  "$CLSORT" "${DEV[@]}" -vv --device-sort=radix -k u64 "$T/in" 2> "$T/err" > /dev/null
  grep -q 'device sort: radix, 8 of 8 digit passes' "$T/err" || fail "$(cat "$T/err")"
  # Warp matches are for NVIDIA GPUs only: a CPU device ranks by counting rounds.
  grep -q 'ranked by two 4-bit counting rounds' "$T/err" || fail "$(cat "$T/err")"
  # auto keeps the merge-path passes on a CPU device.
  "$CLSORT" "${DEV[@]}" -vv "$T/in" 2> "$T/err" > /dev/null
  grep -q 'device sort: tiles and merge-path passes' "$T/err" || fail "$(cat "$T/err")"
  "$CLSORT" "${DEV[@]}" -vv --device-sort=bitonic "$T/in" 2> "$T/err" > /dev/null
  grep -q 'device sort: tiles and' "$T/err" || fail "$(cat "$T/err")"
}

@test "radix: no pass on the low bits words come in order by, and only there" {
  # Indexed words in index order: no pass on the index (records too wide
  # to go whole into their words).
  "$REFSORT" gen-rec 30011 12 0 u32 16 > "$T/in"
  "$CLSORT" "${DEV[@]}" -vv --device-sort=radix -k u32 -R 12 "$T/in" 2> "$T/err" > "$T/got"
  grep -q 'device sort: radix, 4 of 8 digit passes (in order by the low 32 bits)' "$T/err" ||
    fail "$(cat "$T/err")"
  "$REFSORT" sort -k u32 -R 12 < "$T/in" | cmp - "$T/got"
  # A sorted input: no pass at all; one pair out of order anywhere: every
  # pass.
  "$REFSORT" gen u64 30011 17 sorted > "$T/in"
  "$CLSORT" "${DEV[@]}" -vv --device-sort=radix -k u64 "$T/in" 2> "$T/err" > "$T/got"
  grep -q 'device sort: radix, 0 of 8 digit passes' "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/in" "$T/got"
  for at in 0 15000 30009; do
    perl -e 'local $/; $_ = <STDIN>; my $i = $ARGV[0] * 8;
      substr($_, $i, 16) = substr($_, $i + 8, 8) . substr($_, $i, 8); print' $at \
      < "$T/in" > "$T/swapped"
    cmp -s "$T/in" "$T/swapped" && fail "nothing swapped at $at"
    same_as_ref "$T/swapped" "sorted but one pair at $at" -k u64 -- -k u64
  done
  # Indexed words merged from sorted pieces come out of index order.
  "$REFSORT" gen-rec 20011 16 0 u64 18 few > "$T/in"
  "$REFSORT" sort -k u64 -R 16 < "$T/in" > "$T/want"
  CLSORT_MERGE_RUNS=device "$CLSORT" "${DEV[@]}" --device-sort=radix -k u64 -R 16 -S 64K \
    "$T/in" > "$T/got"
  cmp "$T/want" "$T/got"
}


@test "radix: -S holds the run twice where the global passes need no second buffer" {
  local b r
  "$REFSORT" gen u32 300007 19 > "$T/in"
  "$REFSORT" sort < "$T/in" > "$T/want"
  # CLSORT_GLOBAL=bitonic: the GPU's global passes, in place, on PoCL.
  CLSORT_GLOBAL=bitonic "$CLSORT" "${DEV[@]}" -v --device-sort=bitonic -S 1M "$T/in" \
    2> "$T/err" > "$T/got"
  cmp "$T/want" "$T/got"
  b=$(sed -n 's/.*device buffer of \([0-9]*\) words.*/\1/p' "$T/err")
  CLSORT_GLOBAL=bitonic "$CLSORT" "${DEV[@]}" -v --device-sort=radix -S 1M "$T/in" \
    2> "$T/err" > "$T/got"
  cmp "$T/want" "$T/got"
  r=$(sed -n 's/.*device buffer of \([0-9]*\) words.*/\1/p' "$T/err")
  [ "$b" = 262144 ] || fail "bitonic: $b words in 1 MiB"
  [ "$r" -le 131072 ] && [ "$r" -gt 120000 ] || fail "radix: $r words in 1 MiB"
}

# --- records put in order on the device -------------------------------------
# Records of up to 256 bytes go up beside their words and come down in
# order (CLSORT_DEVICE_GATHER=1 asks for it on PoCL, a CPU device, which by
# default leaves the gather to the host).

# gathered FILE WHAT REFSORT-OPTIONS -- CLSORT-OPTIONS...: the records of
# FILE put in order on the device, by both device sorts, are refsort's,
# and -vv says the device gathered them ($GATHERED of them: records unless
# set), or, records that fit in their words beside an integer key on the
# radix sort, sorted them as those words.
gathered() {
  local in=$1 what=$2 ref=() s
  shift 2
  while [ "$1" != -- ]; do ref+=("$1"); shift; done
  shift
  "$REFSORT" sort "${ref[@]}" < "$in" > "$T/want"
  for s in radix bitonic; do
    CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" --device-sort=$s -vv "$@" "$in" \
      > "$T/got" 2> "$T/err" || fail "clsort $* ($s) failed with status $? on $what: $(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "clsort $* ($s) differs from refsort on $what"
    grep -Eq "device gather: [0-9]* ${GATHERED:-records} put in order on the device" "$T/err" ||
      { [ $s = radix ] && [ -z "${GATHERED-}" ] && grep -q 'records sorted in their words' "$T/err"; } ||
      fail "clsort $* ($s): not gathered on the device: $(cat "$T/err")"
  done
}

@test "records gathered on the device: 8 to 256 bytes, every count, both directions, stable" {
  local n
  for n in 1 2 3 1023 1025 4099; do
    "$REFSORT" gen-rec $n 16 4 u64 $((50 + n)) > "$T/in"
    gathered "$T/in" "$n records" -R 16 --key-offset 4 -k u64 -- -R 16 --key-offset 4 -k u64
  done
  "$REFSORT" gen-rec 30011 16 8 i64 61 few > "$T/in"
  gathered "$T/in" "few i64 keys" -R 16 --key-offset 8 -k i64 -- -R 16 --key-offset 8 -k i64
  gathered "$T/in" "few i64 keys, descending" -R 16 --key-offset 8 -k i64 -r -- \
    -R 16 --key-offset 8 -k i64 -r
  "$REFSORT" gen-rec 20011 16 0 f64 62 special > "$T/in"
  gathered "$T/in" "f64 specials" -R 16 -k f64 -- -R 16 -k f64
  "$REFSORT" gen-rec 30011 8 4 u32 63 few > "$T/in"
  gathered "$T/in" "8-byte records" -R 8 --key-offset 4 -k u32 -- -R 8 --key-offset 4 -k u32
  "$REFSORT" gen-rec 20011 8 0 f32 64 > "$T/in"
  gathered "$T/in" "8-byte f32 records, descending" -R 8 -k f32 -r -- -R 8 -k f32 -r
  # Wider than the word, and not a whole number of words: the records'
  # bytes go up in units of a word, the last padded.
  "$REFSORT" gen-rec 20011 24 4 u64 73 few > "$T/in"
  gathered "$T/in" "24-byte records" -R 24 --key-offset 4 -k u64 -- -R 24 --key-offset 4 -k u64
  "$REFSORT" gen-rec 20011 12 8 u32 74 few > "$T/in"
  gathered "$T/in" "12-byte records" -R 12 --key-offset 8 -k u32 -- -R 12 --key-offset 8 -k u32
  "$REFSORT" gen-rec 3001 7 1 i32 75 few > "$T/in"
  gathered "$T/in" "7-byte records, copied byte by byte" -R 7 --key-offset 1 -k i32 -r -- \
    -R 7 --key-offset 1 -k i32 -r
  "$REFSORT" gen-rec 5003 256 100 f64 76 > "$T/in"
  gathered "$T/in" "256-byte records" -R 256 --key-offset 100 -k f64 -- -R 256 --key-offset 100 -k f64
}

@test "kv lines in order on the device, their text with them: refsort's, every key type, a last line without its end" {
  local n
  GATHERED=lines
  "$REFSORT" gen-kv 30011 77 > "$T/in"
  gathered "$T/in" "kv lines" -f kv -- -f kv
  gathered "$T/in" "kv lines, descending" -f kv -r -- -f kv -r
  "$REFSORT" gen-kv 20011 78 i64 few > "$T/in"
  printf '7:no line end' >> "$T/in"
  gathered "$T/in" "few i64 keys, the last line without its end" -f kv -k i64 -- -f kv -k i64
  "$REFSORT" gen-kv 20011 79 f64 special > "$T/in"
  gathered "$T/in" "f64 specials" -f kv -k f64 -- -f kv -k f64
  # Around a work-group's 1024 lines (256 work-items of 4 lines).
  for n in 1 2 3 1023 1024 1025 4097; do
    "$REFSORT" gen-kv $n $((90 + n % 7)) u32 50 > "$T/in"
    gathered "$T/in" "$n lines" -f kv -- -f kv
  done
}

@test "records that fit in their words: sorted as words by the device's radix sort on the key's bits, stably" {
  local spec r
  for spec in "16 0 u64" "16 8 i64" "16 3 u64" "12 4 i64" "8 0 u32" "8 4 i32" "5 1 i32"; do
    set -- $spec
    "$REFSORT" gen-rec 30011 "$1" "$2" "$3" 81 few > "$T/in"
    for r in "" -r; do
      "$REFSORT" sort -R "$1" --key-offset "$2" -k "$3" $r < "$T/in" > "$T/want"
      "$CLSORT" "${DEV[@]}" --device-sort=radix -vv -R "$1" --key-offset "$2" -k "$3" $r "$T/in" \
        > "$T/got" 2> "$T/err" || fail "$spec $r: $(cat "$T/err")"
      cmp "$T/want" "$T/got" || fail "$spec $r: not refsort's order"
      grep -q "30011 records sorted in their words" "$T/err" || fail "$spec $r: $(cat "$T/err")"
      grep -q "digit passes (on the bits from $((8 * ($1 > 8 ? 8 : 4))) up)" "$T/err" ||
        fail "$spec $r: $(cat "$T/err")"
    done
  done
  # The networks order every bit: the index, then the device's gather.
  "$REFSORT" gen-rec 30011 16 0 u64 82 few > "$T/in"
  "$REFSORT" sort -R 16 -k u64 < "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" --device-sort=bitonic -vv -R 16 -k u64 "$T/in" \
    > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "bitonic: not refsort's order"
  ! grep -q "in their words" "$T/err" || fail "bitonic: $(cat "$T/err")"
  grep -q 'device gather: 30011 records' "$T/err" || fail "bitonic: $(cat "$T/err")"
}

@test "kv lines in order on the device with their text: long, empty and CR-ended values, NUL ends, as the host writes them" {
  local i
  # Values of 0 to 70000 bytes, some ending in a carriage return.
  for ((i = 0; i < 300; i++)); do
    printf '%d:' $(((i * 7919) % 97))
    case $((i % 5)) in
      0) ;;
      1) head -c $(((i * 131) % 70000)) /dev/zero | tr '\0' 'x' ;;
      2) printf 'v%d\r' $i ;;
      *) printf 'value %d' $i ;;
    esac
    printf '\n'
  done > "$T/in"
  "$CLSORT" -d host -f kv "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -f kv "$T/in" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "long, empty and CR values: not the host's bytes"
  grep -q 'device gather: 300 lines' "$T/err" || fail "$(cat "$T/err")"
  tr '\n' '\0' < "$T/in" > "$T/z"
  "$CLSORT" -d host -f kv -z "$T/z" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -f kv -z "$T/z" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "-z: not the host's bytes"
  grep -q 'device gather: 300 lines' "$T/err" || fail "$(cat "$T/err")"
  # One line, and two, without a last line end.
  printf '5:x' > "$T/one"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -f kv "$T/one" > "$T/got" 2> "$T/err"
  [ "$(cat "$T/got")" = 5:x ] && [ "$(od -An -c "$T/got" | tr -d ' ')" = '5:x\n' ] ||
    fail "one line: $(od -c "$T/got")"
  grep -q 'device gather: 1 lines' "$T/err" || fail "$(cat "$T/err")"
  printf '9:b\n5:a' > "$T/two"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -f kv "$T/two" > "$T/got"
  [ "$(cat "$T/got")" = "$(printf '5:a\n9:b')" ] && [ "$(tail -c 1 "$T/got" | od -An -c | tr -d ' ')" = '\n' ] ||
    fail "two lines: $(od -c "$T/got")"
  # --skip-bad drops a line: their table's entries alone, the host
  # writing the lines.
  "$REFSORT" gen-kv 30011 83 > "$T/in"
  sed '100s/^[0-9]*:/x:/' "$T/in" > "$T/bad"
  "$CLSORT" -d host -f kv --skip-bad "$T/bad" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -f kv --skip-bad "$T/bad" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'device gather: 30010 records' "$T/err" || fail "$(cat "$T/err")"
  # A stream's lines parsed as it arrives: the device puts them in order
  # from their text, no line table made on the host.
  "$REFSORT" gen-kv 1100009 15 u32 1000 > "$T/in"
  "$REFSORT" sort -f kv < "$T/in" > "$T/want"
  cat "$T/in" | CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" --parallel=2 -vv -f kv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "a stream"
  grep -q 'device gather: 1100009 lines' "$T/err" || fail "$(cat "$T/err")"
  grep -q 'their line table left until read' "$T/err" || fail "$(cat "$T/err")"
  ! grep -q 'line table of' "$T/err" || fail "$(cat "$T/err")"
}

@test "records gathered on the device: several inputs, runs of -S, a pipe, as the host writes them" {
  "$REFSORT" gen-rec 20011 16 4 u64 65 few > "$T/a"
  "$REFSORT" gen-rec 7001 16 4 u64 66 few > "$T/b"
  "$CLSORT" -d host -R 16 --key-offset 4 -k u64 "$T/a" "$T/b" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -R 16 --key-offset 4 -k u64 "$T/a" "$T/b" \
    > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'device gather: 27012 records' "$T/err" || fail "$(cat "$T/err")"
  # Runs of 4096 records, each gathered, then merged.
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -S 64K -R 16 --key-offset 4 -k u64 "$T/a" "$T/b" \
    > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  [ "$(grep -c 'device gather: ' "$T/err")" -gt 2 ] || fail "runs not gathered: $(cat "$T/err")"
  cat "$T/a" "$T/b" | CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -R 16 --key-offset 4 -k u64 > "$T/got"
  cmp "$T/want" "$T/got"
  # kv lines: two inputs, runs, a pipe.
  "$REFSORT" gen-kv 20011 80 > "$T/a"
  "$REFSORT" gen-kv 7001 81 > "$T/b"
  "$CLSORT" -d host -f kv "$T/a" "$T/b" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -f kv -S 64K "$T/a" "$T/b" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  [ "$(grep -c 'device gather: ' "$T/err")" -gt 2 ] || fail "kv runs not gathered: $(cat "$T/err")"
  cat "$T/a" "$T/b" | CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -f kv > "$T/got"
  cmp "$T/want" "$T/got"
  # Runs in turn within one input (their lines with their text) and across
  # two (their entries, each line's 16 bytes in 128-bit words, in the sort's
  # free buffer): lines of 4 or 5 bytes leave the lines' output buffer
  # smaller than the entries' order, which must not go there.
  "$REFSORT" gen-kv 3000 84 u64 1000 | sed 's/:.*/:/' > "$T/a"
  "$REFSORT" gen-kv 3000 85 u64 1000 | sed 's/:.*/:/' > "$T/b"
  "$CLSORT" -d host -f kv -k u64 "$T/a" "$T/b" "$T/a" > "$T/want"
  CLSORT_MERGE_RUNS=host CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -S 16K -f kv -k u64 \
    "$T/a" "$T/b" "$T/a" > "$T/got" 2> "$T/err" || fail "status $?: $(cat "$T/err")"
  cmp "$T/want" "$T/got"
  grep -q 'device gather: 1024 lines' "$T/err" && grep -q 'device gather: 1024 records' "$T/err" ||
    fail "not both kinds of runs: $(cat "$T/err")"
}

@test "keys that their words hold: lines in order on the device; a longer key: ties on the host" {
  # Numbers of up to 15 digits, months, blanks and lines with no number:
  # every key (a number, a month, a field of a few letters) fits its
  # 128-bit word, so the lines go up with the words.
  awk 'BEGIN {
    srand(11)
    split("Jan feb MAR xyz Dec", m, " ")
    for (i = 0; i < 20011; i++) {
      r = rand()
      if (r < 0.4) n = int(rand() * 2000) - 1000
      else if (r < 0.7) n = sprintf("%.2f", rand() * 100)
      else if (r < 0.9) n = int(rand() * 2^40)
      else n = ""
      printf "%s %s v%d\n", m[1 + int(rand() * 5)], n, i
    }
  }' > "$T/in"
  local opts
  for opts in "-k2,2n" "-k2,2rn" "-k1,1M -k2,2n" "-k2,2h" "-k1,1" "-k1,1r"; do
    # shellcheck disable=SC2086
    sort -s $opts "$T/in" > "$T/want"
    # shellcheck disable=SC2086
    CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv $opts "$T/in" > "$T/got" 2> "$T/err"
    cmp "$T/want" "$T/got" || fail "$opts: not sort's bytes"
    grep -q 'device gather: 20011 lines' "$T/err" || fail "$opts: $(cat "$T/err")"
  done
  # Runs of -S, each gathered, then merged.
  sort -s -k1,1M -k2,2n "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -S 128K -k1,1M -k2,2n "$T/in" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "runs: not sort's bytes"
  [ "$(grep -c 'device gather: ' "$T/err")" -gt 2 ] || fail "runs not gathered: $(cat "$T/err")"
  # 19-digit numbers, which their words cannot hold, the greater first
  # (one double): that run's ties are ordered on the host; -u always is.
  sed -e '5000s/^\([a-zA-Z]*\) [^ ]*/\1 1732924800123456789/' \
    -e '6000s/^\([a-zA-Z]*\) [^ ]*/\1 1732924800123456780/' "$T/in" > "$T/long"
  for opts in "-k2,2n" "-u -k2,2n"; do
    # shellcheck disable=SC2086
    sort -s $opts "$T/long" > "$T/want"
    # shellcheck disable=SC2086
    CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv $opts "$T/long" > "$T/got" 2> "$T/err"
    cmp "$T/want" "$T/got" || fail "$opts, a long number: not sort's bytes"
    ! grep -q 'device gather' "$T/err" || fail "$opts, a long number: gathered: $(cat "$T/err")"
  done
  # Two numbers as keys need more than a word, and so do fields of 13
  # letters that share their first 12: ties on the host.
  sort -s -k2,2n -k1,1n "$T/in" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -k2,2n -k1,1n "$T/in" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  ! grep -q 'device gather' "$T/err" || fail "two numbers: gathered: $(cat "$T/err")"
  sed -e '7000s/^[a-zA-Z]*/MonthOfMonthZ/' -e '8000s/^[a-zA-Z]*/MonthOfMonthA/' "$T/in" > "$T/long"
  sort -s -k1,1 "$T/long" > "$T/want"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -k1,1 "$T/long" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "-k1,1, a long field: not sort's bytes"
  ! grep -q 'device gather' "$T/err" || fail "-k1,1, a long field: gathered: $(cat "$T/err")"
}

@test "records the device does not gather: on a CPU device by default, over 256 bytes, -u, ties, CLSORT_DEVICE_GATHER=0" {
  "$REFSORT" gen-rec 5003 16 4 u64 67 few > "$T/in"
  "$CLSORT" "${DEV[@]}" -vv -R 16 --key-offset 4 -k u64 "$T/in" > "$T/got" 2> "$T/err"
  ! grep -q 'device gather' "$T/err" || fail "gathered on a CPU device by default"
  CLSORT_DEVICE_GATHER=0 "$CLSORT" "${DEV[@]}" -vv -R 16 --key-offset 4 -k u64 "$T/in" > "$T/got0" \
    2> "$T/err"
  ! grep -q 'device gather' "$T/err" || fail "gathered with CLSORT_DEVICE_GATHER=0"
  cmp "$T/got" "$T/got0"
  "$REFSORT" gen-rec 5003 260 4 u64 68 few > "$T/in260"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -R 260 --key-offset 4 -k u64 "$T/in260" \
    > "$T/got" 2> "$T/err"
  ! grep -q 'device gather' "$T/err" || fail "260-byte records gathered"
  "$REFSORT" sort -R 260 --key-offset 4 -k u64 < "$T/in260" | cmp - "$T/got"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -u -R 16 --key-offset 4 -k u64 "$T/in" \
    > "$T/got" 2> "$T/err"
  ! grep -q 'device gather' "$T/err" || fail "gathered with -u"
  "$REFSORT" sort -u -R 16 --key-offset 4 -k u64 < "$T/in" | cmp - "$T/got"
  "$REFSORT" gen-kv 5003 82 u32 100 > "$T/kv"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -f kv -u "$T/kv" > "$T/got" 2> "$T/err"
  ! grep -q 'device gather' "$T/err" || fail "kv lines gathered with -u"
  "$CLSORT" -d host -f kv -u "$T/kv" | cmp - "$T/got"
  # String keys that share more than their words hold: ties on the host.
  sed 's/^/user-session-/' "$T/kv" > "$T/kvlong"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -f kv -k str "$T/kvlong" > "$T/got" 2> "$T/err"
  ! grep -q 'device gather' "$T/err" || fail "string keys gathered"
  "$CLSORT" -d host -f kv -k str "$T/kvlong" | cmp - "$T/got"
  # A 12-byte key in 16-byte records: ties on the word ordered on the host.
  "$REFSORT" gen-bytes 5003 16 0 12 69 tied > "$T/inb"
  CLSORT_DEVICE_GATHER=1 "$CLSORT" "${DEV[@]}" -vv -R 16 -k bytes:12 "$T/inb" > "$T/got" 2> "$T/err"
  ! grep -q 'device gather' "$T/err" || fail "gathered with ties on the host"
  "$REFSORT" sort -R 16 -k bytes:12 < "$T/inb" | cmp - "$T/got"
}

@test "contrib/bench/shapes: each device's output is the host engine's, through a pipe and a file" {
  python3 -c 'import numpy' 2> /dev/null || skip "numpy is not installed"
  export PYTHON3
  run "$TESTS_DIR/../contrib/bench/shapes" -b "$CLSORT" -d cpu -n 12 -o "$T/shapes"
  assert_success
  assert_equal "$(grep -c ': pipe same, file same (the pipe sorted on ' <<< "$output")" 18
  # A difference fails it: a binary that drops the last record.
  printf '#!/bin/sh\n"%s" "$@" | head -c -1\n' "$CLSORT" > "$T/short"
  chmod +x "$T/short"
  run "$TESTS_DIR/../contrib/bench/shapes" -b "$T/short" -d cpu -n 12 -o "$T/shapes"
  assert_failure
}
