#!/usr/bin/env bats
# Several keys (-K, and sort's -k given more than once) against GNU sort -s
# in the C locale, byte for byte: every key type as primary and secondary,
# descending keys, string keys sharing long prefixes, keys that begin one
# another and NUL bytes inside them, -u on all keys, -r, -z, -m, --check,
# --header, several inputs, in one run and out of core, on the device and
# the host engine; and bad lines named by the key that fails.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
}

# gen_rows N SEED: N comma-separated lines of 5 fields: 1 a string that
# begins with a prefix of 0, 7, 8, 11, 12, 16, 100 or 4000 bytes shared with
# other lines; 2 an integer from -20 to 20; 3 a short string, often empty
# or a prefix of another, with NUL bytes; 4 a multiple of 1/4 from -10 to
# 10; 5 an integer below 2^32, often small.  Some lines repeat.
gen_rows() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed)
    split("0 7 8 11 12 16 100 4000", plen, " ")
    for (k = 1; k <= 8; k++) {
      p = ""
      for (i = 0; i < plen[k]; i++) p = p sprintf("%c", 97 + (i * 7 + k) % 3)
      pre[k] = p
    }
    for (i = 0; i < n; i++) {
      if (i > 0 && rand() < 0.05) { print last; continue }
      a = pre[1 + int(rand() * 8)]
      len = int(rand() * 4)
      for (k = 0; k < len; k++) a = a sprintf("%c", 97 + int(rand() * 3))
      c = substr("aab", 1, int(rand() * 4))
      len = int(rand() * 3)
      for (k = 0; k < len; k++) c = c (rand() < 0.15 ? "~" : sprintf("%c", 97 + int(rand() * 2)))
      e = rand() < 0.3 ? int(rand() * 5) : int(rand() * 4000000000)
      line = sprintf("%s,%d,%s,%s,%d", a, int(rand() * 41) - 20, c, (int(rand() * 81) - 40) / 4, e)
      print line
      last = line
    }
  }' | tr '~' '\000'
}

MODES=("" "-S 16K" "--memory=1M")
ENGINES=("-d cpu" "-d host")

# same_as_sort IN "CLSORT OPTIONS" SORT-OPTION...: on both engines and in
# every mode, clsort -t , gives GNU sort -s -t ,'s bytes.
same_as_sort() {
  local in=$1 opts=$2 mode dev
  shift 2
  sort -s -t , "$@" < "$in" > "$T/want"
  for dev in "${ENGINES[@]}"; do
    for mode in "${MODES[@]}"; do
      "$CLSORT" $dev $mode -t , $opts "$in" > "$T/got" ||
        fail "clsort $dev $mode $opts failed with status $?"
      cmp "$T/want" "$T/got" || fail "clsort $dev $mode $opts differs from sort -s -t , $*"
    done
  done
}

@test "-K: the issue's example, -K 3,u32 -K 2,str,r as sort -k3,3n -k2,2r" {
  printf 'a,zeta,3\nb,alpha,10\nc,beta,3\nd,alpha,2\ne,zeta,10\nf,,3\ng,beta,3\n' > "$T/in"
  run "$CLSORT" -t, -K 3,u32 -K 2,str,r "$T/in"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'd,alpha,2\na,zeta,3\nc,beta,3\ng,beta,3\nf,,3\ne,zeta,10\nb,alpha,10')" ]
  sort -s -t, -k3,3n -k2,2r "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t, -K 3,u32 -K 2,str,r "$T/in")
}

@test "-K: every key type, primary and secondary, ascending and descending" {
  gen_rows 3000 1 > "$T/in"
  same_as_sort "$T/in" "-K 2,i64 -K 3,str,r" -k2,2n -k3,3r
  same_as_sort "$T/in" "-K 3 -K 2,i32" -k3,3 -k2,2n
  same_as_sort "$T/in" "-K 4,f64,r -K 1" -k4,4nr -k1,1
  same_as_sort "$T/in" "-K 4,f32 -K 5,u64 -K 1,str,r" -k4,4n -k5,5n -k1,1r
  same_as_sort "$T/in" "-K 1,str,r -K 5,u32" -k1,1r -k5,5n
  same_as_sort "$T/in" "-K 3,str,r -K 1,str,r -K 2,i64,r" -k3,3r -k1,1r -k2,2nr
}

@test "-K 0: the whole line as a later key, as sort's -k1" {
  gen_rows 2000 2 > "$T/in"
  same_as_sort "$T/in" "-K 2,i64 -K 0" -k2,2n -k1
  same_as_sort "$T/in" "-K 3 -K 0,str,r" -k3,3 -k1r
  same_as_sort "$T/in" "-k2,2n -k1" -k2,2n -k1
}

@test "-K -u: lines equal on all keys are one" {
  gen_rows 3000 3 > "$T/in"
  same_as_sort "$T/in" "-u -K 3 -K 1" -u -k3,3 -k1,1
  same_as_sort "$T/in" "-u -K 2,i64,r -K 3,str,r" -u -k2,2nr -k3,3r
  same_as_sort "$T/in" "-u -K 5,u32 -K 2,i32" -u -k5,5n -k2,2n
}

@test "-r: -K keys without r of their own are reversed; sort's rule for -k" {
  gen_rows 2000 4 > "$T/in"
  same_as_sort "$T/in" "-r -K 2,i64 -K 3,str,r" -k2,2nr -k3,3r
  # sort's -k: a key with options of its own (n) does not take -r.
  same_as_sort "$T/in" "-r -k2,2n -k3,3" -r -k2,2n -k3,3
  same_as_sort "$T/in" "-k2,2n -k3,3r -k1,1" -k2,2n -k3,3r -k1,1
}

@test "-K with -z, --header, several inputs, -m and --check" {
  gen_rows 2000 5 | tr -d '\000' > "$T/in"
  tr '\n' '\0' < "$T/in" > "$T/inz"
  sort -z -s -t, -k2,2n -k3,3r "$T/inz" | cmp - <("$CLSORT" "${DEV[@]}" -z -t, -K 2,i64 -K 3,str,r "$T/inz")
  head -n 1000 "$T/in" > "$T/a"
  tail -n +1001 "$T/in" > "$T/b"
  sort -s -t, -k2,2n -k3,3r "$T/a" "$T/b" |
    cmp - <("$CLSORT" "${DEV[@]}" -t, -K 2,i64 -K 3,str,r "$T/a" "$T/b")
  (echo 'name,n,s,x,y'; cat "$T/a") > "$T/h"
  (echo 'name,n,s,x,y'; sort -s -t, -k2,2n -k3,3r "$T/a") |
    cmp - <("$CLSORT" "${DEV[@]}" --header -t, -K 2,i64 -K 3,str,r "$T/h")
  sort -s -t, -k2,2n -k3,3r "$T/a" > "$T/as"
  sort -s -t, -k2,2n -k3,3r "$T/b" > "$T/bs"
  sort -m -s -t, -k2,2n -k3,3r "$T/as" "$T/bs" |
    cmp - <("$CLSORT" "${DEV[@]}" -m -t, -K 2,i64 -K 3,str,r "$T/as" "$T/bs")
  run "$CLSORT" --check -t, -K 2,i64 -K 3,str,r "$T/as"
  [ "$status" -eq 0 ]
  # Sorted on the first key, not on the second.
  run "$CLSORT" --check -t, -K 2,i64 -K 3,str "$T/as"
  [ "$status" -eq 1 ]
}

@test "-K: a bad number is named by file, line and the key that fails" {
  printf 'a,1,x\nb,zz,y\nc,3\n' > "$T/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t, -K 3 -K 2,i64 "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/in:2: invalid i64 key 'zz'" ]
  [ -z "$output" ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t, -K 2,i64 -K 4,u32 "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/in:1: fewer than 4 fields" ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t, -K 3 -K 2,i64 --skip-bad "$T/in"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'c,3\na,1,x')" ]
}

@test "-K: malformed keys and conflicting options, one line each, status 2" {
  printf 'a,1\n' > "$T/in"
  for case in "2,x|invalid key type 'x'" "x|the key is FIELD[,TYPE][,r]" \
              "2,u32,r,r|the key is FIELD[,TYPE][,r]" "2,bytes:4|invalid key type 'bytes:4'" \
              "70000|FIELD a number from 0"; do
    run --separate-stderr "$CLSORT" -t, -K "${case%%|*}" "$T/in"
    [ "$status" -eq 2 ] || fail "-K ${case%%|*}: status $status"
    [[ "${stderr_lines[0]}" == *"${case#*|}"* ]] || fail "-K ${case%%|*}: ${stderr_lines[0]}"
  done
  run --separate-stderr "$CLSORT" -f bin -K 1 -K 2 "$T/in"
  [ "$status" -eq 2 ]
  [[ "${stderr_lines[0]}" == *"several keys (-K) apply to the kv format only"* ]]
  run --separate-stderr "$CLSORT" -t, -F 2 -K 1 "$T/in"
  [ "$status" -eq 2 ]
  [[ "${stderr_lines[0]}" == *"and -F both name the key field"* ]]
  run --separate-stderr "$CLSORT" -t, -k u32 -K 1 "$T/in"
  [ "$status" -eq 2 ]
  [[ "${stderr_lines[0]}" == *"and -k TYPE both name the key's type"* ]]
}

@test "-K: one key is -F N -k TYPE" {
  gen_rows 1000 6 > "$T/in"
  "$CLSORT" "${DEV[@]}" -t, -F 2 -k i64 "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -t, -K 2,i64 "$T/in" | cmp "$T/want" -
  "$CLSORT" "${DEV[@]}" -t, -F 3 -k str -r "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -t, -K 3,r "$T/in" | cmp "$T/want" -
}
