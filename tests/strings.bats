#!/usr/bin/env bats
# String keys (-k str) and whole-line keys (-F 0) against GNU sort -s in
# the C locale, byte for byte: keys sharing prefixes of every length a
# sort word or a refinement round could end on, keys that begin one
# another, empty keys, all-equal lines, on the device and the host engine,
# in one run and out of core.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
}

# gen_lines N SEED: N lines of 3 comma-separated fields; fields 2 and the
# line begin with a prefix of 0, 7, 8, 11, 12, 16, 22, 23, 100 or 4000
# bytes shared with other lines (a sort word holds 11 key bytes, a round
# of the ties 11 more), then 0 to 5 bytes of a few letters, bytes
# 0x80-0xff and commas; some lines are empty, some repeat.
gen_lines() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed)
    np = split("0 7 8 11 12 16 22 23 100 4000", plen, " ")
    for (k = 1; k <= np; k++) {
      p = ""
      for (i = 0; i < plen[k]; i++) p = p sprintf("%c", 97 + (i * 7 + k) % 3)
      pre[k] = p
    }
    for (i = 0; i < n; i++) {
      if (rand() < 0.02) { print ""; continue }
      if (i > 0 && rand() < 0.05) { print last; continue }
      v = pre[1 + int(rand() * np)]
      len = int(rand() * 6)
      for (k = 0; k < len; k++)
        v = v sprintf("%c", rand() < 0.1 ? 128 + int(rand() * 128) : 97 + int(rand() * 3))
      line = sprintf("%d,%s,%d", int(rand() * 10), v, int(rand() * 10))
      if (rand() < 0.3) line = v
      print line
      last = line
    }
  }'
}

MODES=("" "-S 16K" "--memory=1M")
ENGINES=("-d cpu" "-d host")

# same_as_sort IN "CLSORT OPTIONS" SORT-OPTION...: on both engines and in
# every mode, clsort's output is GNU sort -s's.
same_as_sort() {
  local in=$1 opts=$2 mode dev
  shift 2
  sort -s "$@" < "$in" > "$T/want"
  for dev in "${ENGINES[@]}"; do
    for mode in "${MODES[@]}"; do
      "$CLSORT" $dev $mode $opts "$in" > "$T/got" ||
        fail "clsort $dev $mode $opts failed with status $?"
      cmp "$T/want" "$T/got" || fail "clsort $dev $mode $opts differs from sort -s $*"
    done
  done
}

@test "-F 0: the whole line is the key, as sort -s without -k" {
  gen_lines 3000 1 > "$T/in"
  same_as_sort "$T/in" "-k str -F 0"
  same_as_sort "$T/in" "-k str -F 0 -r" -r
  same_as_sort "$T/in" "-k str -F 0 -u" -u
  same_as_sort "$T/in" "-k str -F 0 -u -r" -u -r
}

@test "sort's -k 2 and -k 1,2: keys of several fields, sharing long prefixes" {
  gen_lines 3000 7 > "$T/in"
  same_as_sort "$T/in" "-t , -k2" -t , -k2
  same_as_sort "$T/in" "-t , -k1,2" -t , -k1,2
  same_as_sort "$T/in" "-t , -k2 -u -r" -t , -k2 -u -r
  same_as_sort "$T/in" "-t , -k3 -k1,1r" -t , -k3 -k1,1r
}

@test "-F 0 -z: NUL-ended lines holding newlines" {
  gen_lines 2000 2 | tr '\n' '\0' | sed -z 's/b/\n/' > "$T/in"
  same_as_sort "$T/in" "-z -k str -F 0" -z
  same_as_sort "$T/in" "-z -k str -F 0 -u -r" -z -u -r
}

@test "-F 0: all-equal lines, and one line of 1 MB among short ones" {
  yes 'the same line, longer than a sort word' | head -n 3000 > "$T/in"
  same_as_sort "$T/in" "-k str -F 0"
  same_as_sort "$T/in" "-k str -F 0 -u" -u
  { gen_lines 500 3; head -c 1048576 /dev/zero | tr '\0' a; echo; gen_lines 500 4
    head -c 1048575 /dev/zero | tr '\0' a; echo b; } > "$T/big"
  same_as_sort "$T/big" "-k str -F 0"
}

@test "-F 0: several inputs, -m and --header" {
  gen_lines 1000 5 > "$T/a"
  gen_lines 1000 6 > "$T/b"
  sort -s "$T/a" "$T/b" > "$T/want"
  "$CLSORT" "${DEV[@]}" -k str -F 0 "$T/a" "$T/b" > "$T/got"
  cmp "$T/want" "$T/got"
  sort -s "$T/a" > "$T/sa"
  sort -s "$T/b" > "$T/sb"
  sort -s -m "$T/sa" "$T/sb" > "$T/want"
  "$CLSORT" -m -k str -F 0 "$T/sa" "$T/sb" > "$T/got"
  cmp "$T/want" "$T/got"
  { echo 'z header'; cat "$T/a"; } > "$T/h"
  { echo 'z header'; sort -s "$T/a"; } > "$T/want"
  for mode in "" "-S 16K"; do
    "$CLSORT" "${DEV[@]}" $mode --header -k str -F 0 "$T/h" > "$T/got"
    cmp "$T/want" "$T/got" || fail "--header $mode"
  done
}

@test "-F 0 with a numeric key: the whole line is the number" {
  seq 1000 -7 1 > "$T/in"
  sort -s -n "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -F 0 "$T/in" > "$T/got"
  cmp "$T/want" "$T/got"
}

@test "runs of keys sharing 100 bytes are merged in parts cut by whole keys, on every thread" {
  # The first 8 bytes, what a sortable key holds, are the same in every
  # line: parts cut by them alone would leave one part with everything.
  awk 'BEGIN { srand(5); p = sprintf("%0100d", 0)
    for (i = 0; i < 40000; i++) printf "%d,%s%06d\n", i % 7, p, int(rand() * 1000000) }' > "$T/in"
  sort -s -t, -k2,2 "$T/in" > "$T/want"
  for dev in "${ENGINES[@]}"; do
    CLSORT_PARALLEL_MERGE_MIN=0 CLSORT_MERGE_RUNS=host \
      "$CLSORT" $dev -vv -S 64K --parallel=4 -t, -F 2 -k str "$T/in" > "$T/got" 2> "$T/err" ||
      fail "$(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "clsort $dev differs from sort -s"
    line=$(grep "^clsort: merge pass:" "$T/err" | tail -1)
    [[ $line =~ ([0-9]+)\ parts.*the\ largest\ ([0-9]+)%\ of\ the\ bytes ]] || fail "no merge pass: $(cat "$T/err")"
    [ "${BASH_REMATCH[1]}" -ge 4 ] || fail "$line"
    [ "${BASH_REMATCH[2]}" -le 40 ] || fail "unbalanced parts: $line"
  done
  # -u, and several keys, through the same cuts.
  sort -s -u -t, -k2,2 "$T/in" |
    cmp - <(CLSORT_PARALLEL_MERGE_MIN=0 "$CLSORT" -d cpu -S 64K --parallel=4 -u -t, -F 2 -k str "$T/in")
  sort -s -t, -k1,1n -k2,2r "$T/in" |
    cmp - <(CLSORT_PARALLEL_MERGE_MIN=0 "$CLSORT" -d cpu -S 64K --parallel=4 -t, -K 1,u32 -K 2,str,r "$T/in")
}
