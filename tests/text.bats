#!/usr/bin/env bats
# Text lines as sort(1) has them: a key field (-F) split at a byte or at
# blanks, numeric and string keys, -u, -z, -m and --header.  Every output
# is compared byte for byte with GNU sort's in the C locale, stable and
# given the matching options: in one run, in key ranges, in runs merged in
# memory and in runs spilled to temporary files.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
}

# gen_text N SEED SEP [MINLEN]: N lines of 5 fields joined by SEP: a
# number below 2^32, a string, a number below 1000 (many repeats), and two
# more strings.  Strings are 0 (or MINLEN) to 11 bytes of a few letters
# and bytes 0x80-0xff, a third of them after a prefix longer than any
# fixed width a sort word could hold.
gen_text() {
  awk -v n="$1" -v seed="$2" -v sep="$3" -v minlen="${4:-0}" 'BEGIN {
    srand(seed)
    for (i = 0; i < n; i++) {
      line = ""
      for (f = 1; f <= 5; f++) {
        if (f == 1) v = sprintf("%.0f", int(rand() * 4294967296))
        else if (f == 3) v = int(rand() * 1000)
        else {
          v = ""
          if (rand() < 0.3) v = "a_shared_prefix_longer_than_any_sort_word_"
          len = minlen + int(rand() * 12)
          for (k = 0; k < len; k++)
            v = v sprintf("%c", rand() < 0.1 ? 128 + int(rand() * 128) : 97 + int(rand() * 4))
        }
        line = line (f > 1 ? sep : "") v
      }
      print line
    }
  }'
}

# Ways to run clsort on a few thousand lines: one run, then runs of 1024
# lines in key ranges, merged on the device, merged on the host, and
# spilled to temporary files.
MODES=("" "ranges -S 4K" "device -S 4K" "host -S 4K" "--memory=1M")

# same_as_sort IN "CLSORT OPTIONS" SORT-OPTION...: in every mode,
# clsort's output is GNU sort -s's, byte for byte.
# refused FILE "OPTIONS:MESSAGE"...: clsort OPTIONS FILE is a usage
# error (status 2) whose first line says MESSAGE.
refused() {
  local in=$1 case
  shift
  for case; do
    run --separate-stderr "$CLSORT" ${case%%:*} "$in"
    [ "$status" -eq 2 ] || fail "${case%%:*}: status $status"
    [[ "${stderr_lines[0]}" == *"${case#*:}"* ]] || fail "${case%%:*}: ${stderr_lines[0]}"
  done
}

same_as_sort() {
  local in=$1 opts=$2 mode env
  shift 2
  sort -s "$@" < "$in" > "$T/want"
  for mode in "${MODES[@]}"; do
    env=()
    [[ $mode == [a-z]* ]] && { env=(CLSORT_MERGE_RUNS=${mode%% *}); mode=${mode#* }; }
    env "${env[@]}" "$CLSORT" "${DEV[@]}" $mode $opts "$in" > "$T/got" ||
      fail "clsort $mode $opts failed with status $?"
    cmp "$T/want" "$T/got" || fail "clsort ${env[*]} $mode $opts differs from sort -s $*"
  done
}

# --- key fields -----------------------------------------------------------

@test "-F: numeric key fields of CSV lines, as sort -t, -kN,Nn" {
  gen_text 5000 1 , > "$T/in"
  same_as_sort "$T/in" "-t , -F 3" -t , -k3,3n
  same_as_sort "$T/in" "-t , -F 3 -r" -t , -k3,3nr
  same_as_sort "$T/in" "-t , -F 1 -k u64" -t , -k1,1n
}

@test "-F: a tab separator" {
  gen_text 3000 2 $'\t' > "$T/in"
  same_as_sort "$T/in" "-t \\t -F 3 -k i64" -t $'\t' -k3,3n
}

@test "-t blank: fields split at runs of blanks, leading blanks belong to the field" {
  gen_text 3000 3 $'  \t' 1 | sed 's/^/ \t/' > "$T/in"
  same_as_sort "$T/in" "-t blank -F 3" -k3,3n
  same_as_sort "$T/in" "-t blank -F 1 -k u64 -r" -k1,1nr
  printf 'a 10\nb\t 9\n' > "$T/two"
  run "$CLSORT" -t blank -F 2 "$T/two"
  assert_success
  assert_output $'b\t 9\na 10'
}

@test "-F 1 without a separator in the line takes the whole line" {
  printf '10\n9,x\n' > "$T/in"
  run "$CLSORT" -t , "$T/in"
  assert_success
  assert_output $'9,x\n10'
}

@test "CRLF lines and a missing final newline" {
  gen_text 3000 4 , | awk -F, '{ print $0 "," $3 }' | sed 's/$/\r/' > "$T/in"
  printf '7,x,7,y,z,7' >> "$T/in"
  same_as_sort "$T/in" "-t , -F 6" -t , -k6,6n
  same_as_sort "$T/in" "-t , -F 3 -r" -t , -k3,3nr
}

@test "a line with fewer fields than -F is an error naming file and line" {
  printf '1,a,3\n2,b\n' > "$T/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t , -F 3 "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/in:2: fewer than 3 fields" ]
  [ -z "$output" ]
  printf '1 a\n2 b  \n3\n' > "$T/blank"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t blank -F 3 "$T/blank"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/blank:1: fewer than 3 fields" ]
}

@test "--skip-bad drops lines with fewer fields and counts them" {
  { gen_text 2000 5 ,; printf '1,2\n\n'; gen_text 2000 6 ,; } > "$T/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t , -F 3 --skip-bad -o "$T/got" "$T/in"
  assert_success
  [ "$stderr" = "clsort: skipped 2 lines: 2 with fewer than 3 fields (-v names the first few)" ]
  grep '^[^,]*,[^,]*,' "$T/in" | sort -s -t , -k3,3n | cmp - "$T/got"
}

@test "--skip-bad counts by cause, and -v names the first few lines" {
  { printf '1,2,3
2,x,1
bad
3,3,2
4,,x
'; for i in 1 2 3 4 5 6; do echo "y,z"; done; } > "$T/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t , -F 3 --skip-bad -o "$T/got" "$T/in"
  assert_success
  [ "$stderr" = "clsort: skipped 8 lines: 1 with a bad key, 7 with fewer than 3 fields (-v names the first few)" ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -v -t , -F 3 --skip-bad -o "$T/got" "$T/in"
  assert_success
  grep -q "^clsort: $T/in:3: skipped: fewer than 3 fields$" <<< "$stderr" || fail "line 3 not named: $stderr"
  grep -q "^clsort: $T/in:5: skipped: invalid u32 key 'x'$" <<< "$stderr" || fail "line 5 not named: $stderr"
  [ "$(grep -c ': skipped: ' <<< "$stderr")" -eq 5 ] || fail "not five named: $stderr"
  grep -q "^clsort: skipped 8 lines: 1 with a bad key, 7 with fewer than 3 fields$" <<< "$stderr"
}

@test "-F: bad field numbers are usage errors" {
  for n in -1 x 1x '' 65536; do
    run --separate-stderr "$CLSORT" -t , -F "$n"
    [ "$status" -eq 2 ] || fail "-F '$n' gave status $status"
    [[ ${stderr_lines[0]} == "clsort: invalid field number '$n' (0 to 65535)" ]] ||
      fail "-F '$n': $stderr"
  done
  run --separate-stderr "$CLSORT" -f bin -F 2
  [ "$status" -eq 2 ]
  [[ $stderr == *"apply to the kv format only"* ]]
}

# --- -u -------------------------------------------------------------------

@test "-u keeps the first line of each key, as sort -s -u, in every mode and with -r" {
  gen_text 5000 7 , > "$T/in"
  same_as_sort "$T/in" "-u -t , -F 3" -u -t , -k3,3n
  same_as_sort "$T/in" "-u -t , -F 3 -r" -u -t , -k3,3nr
  same_as_sort "$T/in" "--unique -t , -F 1 -k u64" -u -t , -k1,1n
}

@test "-u: runs merged in parallel parts keep one line of each key" {
  gen_text 20000 8 , > "$T/in"
  sort -s -u -t , -k3,3n "$T/in" > "$T/want"
  CLSORT_MERGE_RUNS=host CLSORT_PARALLEL_MERGE_MIN=1 "$CLSORT" "${DEV[@]}" -S 16K -u -t , -F 3 \
    "$T/in" > "$T/got"
  cmp "$T/want" "$T/got"
}


@test "-u with binary keys and records" {
  "$REFSORT" gen u32 20000 9 few > "$T/keys"
  od -An -v -tu4 -w4 "$T/keys" | sort -n -u > "$T/want"
  for mode in "" "-S 4K" "--memory=40K"; do
    for how in device host; do
      CLSORT_MERGE_RUNS=$how "$CLSORT" "${DEV[@]}" $mode -u "$T/keys" |
        od -An -v -tu4 -w4 | cmp "$T/want" - ||
        fail "bare keys, $mode, merged on the $how"
    done
  done
  "$REFSORT" gen-rec 20000 8 0 u32 10 few > "$T/recs"
  for r in "" r; do
    od -An -v -tu4 -w8 "$T/recs" | sort -s -u -k1,1n$r > "$T/want"
    for mode in "" "-S 4K" "--memory=80K"; do
      "$CLSORT" "${DEV[@]}" $mode -u ${r:+-r} -R 8 "$T/recs" > "$T/got"
      od -An -v -tu4 -w8 "$T/got" | cmp "$T/want" - || fail "records, $mode $r"
    done
  done
}

@test "-c -u: equal keys are disorder" {
  printf '1,a\n2,b\n2,c\n' > "$T/in"
  run --separate-stderr "$CLSORT" -c -t , "$T/in"
  assert_success
  run --separate-stderr "$CLSORT" -c -u -t , "$T/in"
  [ "$status" -eq 1 ]
  [ "$stderr" = "clsort: $T/in:3: disorder: 2,c" ]
}

# --- -z -------------------------------------------------------------------

@test "-z: lines end in NUL and may hold newlines, as sort -z" {
  gen_text 5000 11 , | tr '\n' '\0' | sed -z 's/b/\n/' > "$T/in"
  same_as_sort "$T/in" "-z -t , -F 3" -z -t , -k3,3n
  same_as_sort "$T/in" "-z -u -r -t , -F 3" -z -u -t , -k3,3nr
  printf '2\0001' > "$T/two"
  "$CLSORT" -z "$T/two" | od -An -c | tr -s ' ' > "$T/got"
  [ "$(cat "$T/got")" = " 1 \\0 2 \\0" ]
}

@test "-z: a bad line is named by its number of NUL-ended lines" {
  printf '1,5\0002\n3,4\0002' > "$T/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -z -t , -F 2 "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/in:3: fewer than 2 fields" ]
}

# --- string keys ------------------------------------------------------------

@test "-k str: keys compared byte by byte, as sort -t SEP -kN,N" {
  gen_text 5000 12 $'\t' > "$T/in"
  same_as_sort "$T/in" "-t \\t -F 2 -k str" -t $'\t' -k2,2
  same_as_sort "$T/in" "-t \\t -F 4 -k str -r" -t $'\t' -k4,4r
  same_as_sort "$T/in" "-t \\t -F 2 -k str -u" -t $'\t' -k2,2 -u
  same_as_sort "$T/in" "-t \\t -F 5 -k str -u -r" -t $'\t' -k5,5 -u -r
}

@test "-k str: runs merged in parallel parts" {
  gen_text 20000 13 , > "$T/in"
  for r in "" r; do
    sort -s -t , -k2,2$r "$T/in" > "$T/want"
    CLSORT_MERGE_RUNS=host CLSORT_PARALLEL_MERGE_MIN=1 "$CLSORT" "${DEV[@]}" -S 16K ${r:+-r} \
      -t , -F 2 -k str "$T/in" > "$T/got"
    cmp "$T/want" "$T/got" || fail "-r: '$r'"
  done
}

@test "-k str: empty keys, long shared prefixes, high bytes, NULs and CRLF" {
  local p=a_prefix_much_longer_than_the_bytes_of_a_sort_word
  {
    gen_text 3000 14 ,
    printf ',\n,x\nx,\n%s,%s\n' "$p" "$p"
    printf '1,%s\n2,%s\0\n3,%s\0\0\n4,%s\n5,\0\n6,\0\0\n7,\n' "$p" "$p" "$p" "${p}a"
    printf '1,\xff\n2,\x80\n3,\x7f\n4,\xff\xff\n5,%s\xff\n6,%s\x01\r\n' "$p" "$p"
  } > "$T/in"
  same_as_sort "$T/in" "-t , -F 2 -k str" -t , -k2,2
  same_as_sort "$T/in" "-t , -F 2 -k str -r -u" -t , -k2,2r -u
  sed 's/$/\r/' "$T/in" > "$T/crlf"
  same_as_sort "$T/crlf" "-t , -F 2 -k str" -t , -k2,2
}

@test "-k str -t blank: leading blanks are part of the key, as in sort -kN,N" {
  gen_text 3000 15 ' ' 1 | sed 's/ /  /2; s/^/ /' > "$T/in"
  same_as_sort "$T/in" "-t blank -F 2 -k str" -k2,2
  same_as_sort "$T/in" "-t blank -F 3 -k str -u" -k3,3 -u
}

@test "-k str -c: finds disorder past the bytes a sort word holds" {
  printf 'x,a_long_shared_prefix_1\nx,a_long_shared_prefix_2\n' > "$T/in"
  "$CLSORT" -c -t , -F 2 -k str "$T/in"
  printf 'x,a_long_shared_prefix_2\nx,a_long_shared_prefix_1\n' > "$T/in"
  run --separate-stderr "$CLSORT" -c -t , -F 2 -k str "$T/in"
  [ "$status" -eq 1 ]
  [ "$stderr" = "clsort: $T/in:2: disorder: x,a_long_shared_prefix_1" ]
}

@test "-k str is for text lines only" {
  run --separate-stderr "$CLSORT" -f bin -k str
  [ "$status" -eq 2 ]
  [[ $stderr == *"-k str and --skip-bad apply to the kv format only"* ]]
}

# --- -m -------------------------------------------------------------------

@test "-m merges sorted inputs as sort -m, numeric and string keys, with -u and -r" {
  local i
  for i in 1 2 3; do
    gen_text 2000 2$i , > "$T/in$i"
    sort -s -t , -k3,3n "$T/in$i" > "$T/n$i"
    sort -s -t , -k2,2r "$T/in$i" > "$T/s$i"
  done
  sort -m -s -t , -k3,3n "$T/n1" "$T/n2" "$T/n3" > "$T/want"
  "$CLSORT" -m -t , -F 3 "$T/n1" "$T/n2" "$T/n3" > "$T/got"
  cmp "$T/want" "$T/got"
  sort -m -s -u -t , -k3,3n "$T/n1" "$T/n2" "$T/n3" > "$T/want"
  "$CLSORT" -m -u -t , -F 3 "$T/n1" - "$T/n3" < "$T/n2" > "$T/got"
  cmp "$T/want" "$T/got"
  sort -m -s -t , -k2,2r "$T/s1" "$T/s2" "$T/s3" > "$T/want"
  "$CLSORT" --merge -r -t , -F 2 -k str "$T/s1" "$T/s2" "$T/s3" > "$T/got"
  cmp "$T/want" "$T/got"
}

@test "-m with binary records" {
  "$REFSORT" gen-rec 3000 8 0 u32 31 few | "$REFSORT" sort -R 8 > "$T/a"
  "$REFSORT" gen-rec 3000 8 0 u32 32 few | "$REFSORT" sort -R 8 > "$T/b"
  cat "$T/a" "$T/b" | "$REFSORT" sort -R 8 > "$T/want"
  "$CLSORT" -m -R 8 "$T/a" "$T/b" > "$T/got"
  cmp "$T/want" "$T/got"
}

@test "-m: an input out of order is an error naming it and the line" {
  printf '1,a\n3,b\n' > "$T/a"
  printf '2,c\n4,d\n3,e\n5,f\n' > "$T/b"
  run --separate-stderr "$CLSORT" -m -t , "$T/a" "$T/b"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/b:3: disorder: 3,e" ]
  run --separate-stderr "$CLSORT" -m -t , -o "$T/out" "$T/a" "$T/b"
  [ "$status" -eq 2 ]
  [ ! -e "$T/out" ]
  printf '\x02\0\0\0\x01\0\0\0' > "$T/bin"
  run --separate-stderr "$CLSORT" -m "$T/bin"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/bin: record 2: disorder" ]
  run --separate-stderr "$CLSORT" -m -c "$T/bin"
  [ "$status" -eq 2 ]
  [[ $stderr == *"--check and --merge cannot be used together"* ]]
}

# --- --header ---------------------------------------------------------------

@test "--header: the first input's first lines go out first; as many are dropped from the others" {
  gen_text 3000 41 , > "$T/a"
  gen_text 3000 42 , > "$T/b"
  { printf 'id,name,score,x,y\n'; cat "$T/a"; } > "$T/ha"
  { printf 'id,name,score,x,y\n'; cat "$T/b"; } > "$T/hb"
  { printf 'id,name,score,x,y\n'; cat "$T/a" "$T/b" | sort -s -t , -k3,3n; } > "$T/want"
  for mode in "" "-S 4K" "--memory=1M"; do
    "$CLSORT" "${DEV[@]}" $mode --header -t , -F 3 "$T/ha" "$T/hb" > "$T/got"
    cmp "$T/want" "$T/got" || fail "--header $mode"
  done
  { printf 'h1\nh2\n'; sort -s -t , -k2,2 -u "$T/a"; } > "$T/want"
  { printf 'h1\nh2\n'; cat "$T/a"; } | "$CLSORT" --header=2 -u -t , -F 2 -k str > "$T/got"
  cmp "$T/want" "$T/got"
}

@test "--header with -m, -z, -c and a header without its newline" {
  printf 'k\n1\n3\n' > "$T/a"
  printf 'k\n2\n' > "$T/b"
  run "$CLSORT" -m --header -t , "$T/a" "$T/b"
  assert_success
  assert_output $'k\n1\n2\n3'
  printf 'k\0002\0001\000' | "$CLSORT" -z --header -t , | od -An -c | tr -s ' ' > "$T/got"
  [ "$(cat "$T/got")" = " k \\0 1 \\0 2 \\0" ]
  printf 'name' > "$T/h"
  run "$CLSORT" --header -t , "$T/h"
  assert_success
  assert_output 'name'
  [ "$(wc -c < <("$CLSORT" --header -t , "$T/h"))" -eq 5 ]
  printf 'k\n1\n2\n' | "$CLSORT" -c --header -t ,
}

@test "--header: bad lines are named by their line in the file" {
  printf 'id,score\n1,5\n2,x\n' > "$T/in"
  run --separate-stderr "$CLSORT" "${DEV[@]}" --header -t , -F 2 "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/in:3: invalid u32 key 'x'" ]
  printf 'id,score\n1,5\n2,3\n' > "$T/in"
  run --separate-stderr "$CLSORT" -c --header -t , -F 2 "$T/in"
  [ "$status" -eq 1 ]
  [ "$stderr" = "clsort: $T/in:3: disorder: 2,3" ]
  run --separate-stderr "$CLSORT" --header=x -t , "$T/in"
  [ "$status" -eq 2 ]
  [[ ${stderr_lines[0]} == "clsort: invalid header line count 'x'" ]]
}

# --- sort's habits -------------------------------------------------------------

@test "-k str: a missing field is an empty key, as in sort; a number is still required" {
  printf '.\0./b/c\0./a\0.\0./a/b\0/\0' > "$T/paths"
  same_as_sort "$T/paths" "-z -t / -F 2 -k str" -z -t / -k2,2
  same_as_sort "$T/paths" "-z -t / -F 3 -k str -r" -z -t / -k3,3r
  printf 'b,2\na\nc,1\n,\n' > "$T/csv"
  same_as_sort "$T/csv" "-t , -F 2 -k str" -t , -k2,2
  same_as_sort "$T/csv" "-t , -F 2 -k str -u" -t , -k2,2 -u
  printf 'x y\nz\n w\n' > "$T/words"
  same_as_sort "$T/words" "-t blank -F 2 -k str" -k2,2
  run --separate-stderr "$CLSORT" "${DEV[@]}" -t , -F 2 "$T/csv"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/csv:2: fewer than 2 fields" ]
}

@test "-z -t blank: a newline is a blank, as for sort -z" {
  printf 'b\n2 x\0a 3\0c\n1\0a\t0\0d 1\n\0' > "$T/in"
  same_as_sort "$T/in" "-z -t blank -F 2" -z -k2,2n
  same_as_sort "$T/in" "-z -t blank -F 2 -k str" -z -k2,2
  # Without -z a newline ends the line, never a field.
  printf 'b 2\na 1\n' > "$T/nl"
  same_as_sort "$T/nl" "-t blank -F 2" -k2,2n
}

@test "sort's -k N,N of one field: the same bytes as sort -s -k" {
  gen_text 3000 21 , > "$T/in"
  for k in 3,3n 3,3nr 3,3rn 2,2 2,2r 5,5 1,1g 3b,3n; do
    sort -s -t , -k "$k" < "$T/in" > "$T/want"
    "$CLSORT" "${DEV[@]}" -t , -k "$k" "$T/in" > "$T/got" || fail "-k $k: status $?"
    cmp "$T/want" "$T/got" || fail "-k $k differs from sort -s -t , -k $k"
  done
  # -r given apart, and a key type beside the key's field.
  sort -s -t , -k3,3nr < "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t , -k3,3nr "$T/in")
  # As in sort, a key with options of its own does not take -r; one without does.
  sort -s -r -t , -k3,3n < "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t , -k3,3n -r "$T/in")
  sort -s -r -t , -k2,2 < "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t , -k2,2 -r "$T/in")
  sort -s -t , -k3,3n < "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t , -k3,3 -k u32 "$T/in")
  printf 'x 2\ny  1\nz 10\n' > "$T/blank"
  sort -s -k2,2n < "$T/blank" | cmp - <("$CLSORT" "${DEV[@]}" -t blank -k2,2n "$T/blank")
  # Without -t, fields split at blanks, as in sort.
  sort -s -k2,2n < "$T/blank" | cmp - <("$CLSORT" "${DEV[@]}" -k2,2n "$T/blank")
  sort -s -k2,2 < "$T/blank" | cmp - <("$CLSORT" "${DEV[@]}" -k2,2 "$T/blank")
}

@test "sort's -k N and -k N,M: a string takes the fields, a number its first, as sort -s" {
  gen_text 3000 23 , > "$T/in"
  same_as_sort "$T/in" "-t , -k2" -t , -k2
  same_as_sort "$T/in" "-t , -k2,4" -t , -k2,4
  same_as_sort "$T/in" "-t , -k4,5r -k1,2" -t , -k4,5r -k1,2
  same_as_sort "$T/in" "-t , -k3,4n" -t , -k3,4n
  same_as_sort "$T/in" "-t , -k4r" -t , -k4r
  same_as_sort "$T/in" "-t , -k2 -r -u" -t , -k2 -r -u
  same_as_sort "$T/in" "-t , -k3n" -t , -k3n
  same_as_sort "$T/in" "-t , -k1nr" -t , -k1nr
  same_as_sort "$T/in" "-t , -k3nr -k2" -t , -k3nr -k2
  same_as_sort "$T/in" "-t , -k4 -k1,1n" -t , -k4 -k1,1n
  same_as_sort "$T/in" "-t , -k3 -k u32" -t , -k3n
  # Split at blanks, a key keeps the blanks before its field; a line of
  # fewer fields has an empty key; with -z a newline is a blank.
  printf 'x  b c\ny a\nz\n w  a\nv b c\nu b\tc\n' > "$T/blank"
  same_as_sort "$T/blank" "-k2" -k2
  same_as_sort "$T/blank" "-k2 -r" -k2 -r
  same_as_sort "$T/blank" "-k3" -k3
  same_as_sort "$T/blank" "-k1,2" -k1,2
  same_as_sort "$T/blank" "-k2,3 -r" -k2,3 -r
  printf 'b\n2 x\0a 3\0c\n1 y\0a\t0\0d 1\n\0' > "$T/z"
  same_as_sort "$T/z" "-z -k2" -z -k2
  same_as_sort "$T/z" "-z -k2n" -z -k2n
  same_as_sort "$T/z" "-z -k1,2" -z -k1,2
  # Sorted by -k 2, the lines pass -c; by field 2 alone they need not.
  printf 'a,x,2\nb,x,1\n' > "$T/c"
  "$CLSORT" -c -t , -k2,2 "$T/c"
  run -1 "$CLSORT" -c -t , -k2 "$T/c"
}

@test "sort's -n and -g: the line's number, or the keys' with no options of their own, as sort -s" {
  gen_text 3000 29 , > "$T/in"
  same_as_sort "$T/in" "-t , -n" -t , -n
  same_as_sort "$T/in" "-t , -rn" -t , -rn
  same_as_sort "$T/in" "-t , -k3,3 -n" -t , -k3,3 -n
  same_as_sort "$T/in" "-t , -k3 -g -r" -t , -k3 -g -r
  same_as_sort "$T/in" "-t , -k3,3 -k1 -n" -t , -k3,3 -k1 -n
  same_as_sort "$T/in" "-t , -n -k2,2r -k1,1" -t , -n -k2,2r -k1,1
  # Split at blanks: a number after blanks, a tab, a sign, a point.
  printf '10 apples\n9 pears\n  100 x\n-3 y\n2.5\tz\n9 a\n' > "$T/blank"
  same_as_sort "$T/blank" "-n" -n
  same_as_sort "$T/blank" "-g -r" -g -r
  # -F names the field as clsort does, -n makes its key a number.
  sort -s -t , -k3,3n < "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t , -F 3 -n "$T/in")
}

@test "sort's -n, -g and -kNn read the number at the key's start, what follows it ignored, -0 as 0" {
  # grep -n's lines, a count and a word, units: the number, then text.
  printf '12:foo bar\n3:baz\n0:u\n100:x\n-2:y\n7.5:z\n-0:w\n  4abc d\n12:again\n0.0:v\n' > "$T/lead"
  same_as_sort "$T/lead" "-n" -n
  same_as_sort "$T/lead" "-rn" -rn
  same_as_sort "$T/lead" "-g" -g
  printf 'a,5kg,x\nb, 3 kg,y\nc,-1.5e0x,z\nd,40,w\ne,5kg,v\n' > "$T/units"
  same_as_sort "$T/units" "-t , -k2n" -t , -k2n
  same_as_sort "$T/units" "-t , -k2,2nr -k1,1" -t , -k2,2nr -k1,1
  sort -s -t , -k2,2n < "$T/units" | cmp - <("$CLSORT" "${DEV[@]}" -t , -F 2 -n "$T/units")
  # A key with no number at its start, or no such field, is 0 for -n, as
  # in sort; -g reads a float (1e3, inf, +5, 0x10, nan) and puts such a
  # key first, then NaNs, as sort -g does.
  printf '3:x\nabc:y\n-1:z\n\n+5:w\ninf:v\n1e3:u\n0x10:t\n.:s\n-:r\nnan:q\n-inf:p\n' > "$T/bad"
  same_as_sort "$T/bad" "-n" -n
  same_as_sort "$T/bad" "-t : -k2,2n -k1,1" -t : -k2,2n -k1,1
  same_as_sort "$T/bad" "-t : -k2,2nr" -t : -k2,2nr
  same_as_sort "$T/bad" "-g" -g
  same_as_sort "$T/bad" "-rg" -rg
  same_as_sort "$T/bad" "-u -g" -u -g
  same_as_sort "$T/bad" "-t : -k2,2g -k1,1" -t : -k2,2g -k1,1
  # clsort's own key types read the whole field: -K and -k f64 refuse '5kg'.
  for opts in "-t , -K 2,f64" "-t , -F 2 -k f64"; do
    run --separate-stderr "$CLSORT" "${DEV[@]}" $opts "$T/units"
    [ "$status" -eq 2 ] || fail "$opts: status $status"
    [[ "$stderr" == *"$T/units:1: invalid f64 key '5kg'" ]] || fail "$opts: $stderr"
  done
  # What names its keys' types, and formats other than text, refuse it.
  refused "$T/blank" "-k u32 -n:-n (or -g, -h) and -k TYPE both name the key's type" \
    "-K 2 -n:-n (or -g, -h) applies to sort's -k" \
    "-f bin -n:sort's key options apply to the kv format only" \
    "-t . -n:may go on past the separator '.'"
}

@test "sort's -n compares numbers exactly: 19-digit timestamps, long decimals, as sort -s -n" {
  # Numbers a double cannot tell apart: nanosecond timestamps, decimals
  # past 17 digits, numbers past 10^308; and zeros written three ways.
  awk 'BEGIN {
    srand(7)
    for (i = 0; i < 3000; i++) {
      r = rand()
      if (r < 0.4) printf "17329248001234%05d ns%d\n", int(rand() * 100000), i
      else if (r < 0.6) printf "-0.1000000000000000%03d d%d\n", int(rand() * 1000), i
      else if (r < 0.7) printf "0.1%s e%d\n", rand() < 0.5 ? "0" : "", i
      else if (r < 0.8) {
        s = "9"
        for (k = 0; k < 320; k++) s = s int(rand() * 10)
        print s " big" i
      }
      else if (r < 0.9) printf "%s%d.%d x%d\n", rand() < 0.3 ? "-" : "", int(rand() * 100), int(rand() * 100), i
      else printf "%s y%d\n", rand() < 0.3 ? "0" : rand() < 0.5 ? "0.000" : "-0", i
    }
  }' > "$T/in"
  same_as_sort "$T/in" "-n" -n
  same_as_sort "$T/in" "-rn" -rn
  same_as_sort "$T/in" "-k1,1n -k2,2r" -k1,1n -k2,2r
  same_as_sort "$T/in" "-u -n" -u -n
  sort -s -t ' ' -k1,1n "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t ' ' -F 1 -n "$T/in")
  # Checked and merged as sort orders them.
  sort -s -n "$T/in" > "$T/sorted"
  "$CLSORT" -c -n "$T/sorted"
  run -1 "$CLSORT" -c -n "$T/in"
  sort -s -m -n <(head -1500 "$T/sorted") <(tail -n +1501 "$T/sorted") |
    cmp - <("$CLSORT" "${DEV[@]}" -m -n <(head -1500 "$T/sorted") <(tail -n +1501 "$T/sorted"))
}

@test "sort's -n, -h and -g with -t blank: a number may begin past an empty field, as sort -s reads it" {
  # sort skips blanks, the separator among them, before it reads a
  # number: -k2n of 'a  5' is 5, -k2,2n 0 (field 2 is empty).
  printf 'a  5 x\nb 3 y\nc  -7\nd\ne   2\nf 1K\ng  2M\nh\t\t4\ni 0\n' > "$T/in"
  local k
  for k in "-k2n" "-k2,3n" "-k2,2n" "-k2h" "-k2,3rn -k1,1" "-u -k2n" "-k2g" "-k2,3g -k1,1" \
    "-k2,2g"; do
    # shellcheck disable=SC2086
    sort -s -t ' ' $k "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t ' ' $k "$T/in") ||
      fail "-t ' ' $k: not sort's bytes"
  done
  sort -s -t "$(printf '\t')" -k2n "$T/in" | cmp - <("$CLSORT" "${DEV[@]}" -t '\t' -k2n "$T/in")
  sort -s -t ' ' -k2n "$T/in" > "$T/sorted"
  "$CLSORT" -c -t ' ' -k2n "$T/sorted"
  run -1 "$CLSORT" -c -t ' ' -k2,2n "$T/sorted"
}

# human N SEED: N lines of du -h's shape, "SIZE,COUNT<TAB>path", sizes
# with and without units, negative ones, zeros with a unit.
human() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed)
    split("K k M G T P E Z Y", u, " ")
    for (i = 0; i < n; i++) {
      r = rand()
      if (r < 0.1) s = "0" (rand() < 0.5 ? u[1 + int(rand() * 9)] : "")
      else if (r < 0.5) s = int(rand() * 1024) u[1 + int(rand() * 9)]
      else if (r < 0.8) s = sprintf("%.1f", rand() * 10) u[1 + int(rand() * 9)]
      else s = int(rand() * 5000)
      if (rand() < 0.1) s = "-" s
      printf "%s,%s\tdir%d\n", s, int(rand() * 50), i
    }
  }'
}

@test "sort's -h and -kNh: a number and its unit, as sort -s -h" {
  human 3000 31 > "$T/in"
  same_as_sort "$T/in" "-h" -h
  same_as_sort "$T/in" "-rh" -rh
  same_as_sort "$T/in" "-u -h" -u -h
  same_as_sort "$T/in" "-t , -k1,1h -k2,2r" -t , -k1,1h -k2,2r
  same_as_sort "$T/in" "-t , -k2,2n -k1,1hr" -t , -k2,2n -k1,1hr
  # Units past Y (R and Q) above it; 1.0K and 1k equal; zero below any unit.
  printf '1Q\n1R\n1Y\n2\n1.0K\n0M\n1k\n' | "$CLSORT" "${DEV[@]}" -h > "$T/got"
  printf '0M\n2\n1.0K\n1k\n1Y\n1R\n1Q\n' | cmp - "$T/got"
  # Checked and merged as sort orders them.
  sort -s -h "$T/in" > "$T/sorted"
  "$CLSORT" -c -h "$T/sorted"
  run -1 "$CLSORT" -c -h "$T/in"
  head -1000 "$T/in" | sort -s -h > "$T/a"
  tail -n +1001 "$T/in" | sort -s -h > "$T/b"
  sort -s -m -h "$T/a" "$T/b" | cmp - <("$CLSORT" "${DEV[@]}" -m -h "$T/a" "$T/b")
  # sort folds a key before it reads it: under f, a unit in lower case
  # (3z, 2e) counts, as 3Z and 2E do; without f, it is no unit.
  printf '3z\n2E\n1m\n2e\n3Z\n1M\n5\n-1z\n-1\n1p\n' > "$T/low"
  same_as_sort "$T/low" "-k1,1fh" -k1,1fh
  same_as_sort "$T/low" "-k1,1hf -k1,1r" -k1,1hf -k1,1r
  same_as_sort "$T/low" "-h --ignore-case" -h --ignore-case
  same_as_sort "$T/low" "-k1,1h" -k1,1h
  sort -s -k1,1fh "$T/low" > "$T/sorted"
  "$CLSORT" -c -k1,1fh "$T/sorted"
  run -1 "$CLSORT" -c -k1,1h "$T/sorted"
  # A key with no digit at its start is 0, as in sort.
  printf '1K\nK1\n-1\n\n0.5\n' > "$T/bad"
  same_as_sort "$T/bad" "-h" -h
  same_as_sort "$T/bad" "-rh" -rh
  refused "$T/in" "-n -h:each say how numbers are read" "-g -h:-g reads numbers as floats" \
    "-k1,1gn:g reads numbers as floats, n and h as sort -n" "-F 2 -h:not -F: -k N,Nh" \
    "-k 1,1h -k u32:says how the key is read: no -k TYPE beside it" \
    "-f bin -h:sort's key options apply to the kv format only"
}

# versions N SEED: N lines of version strings and file names, "NAME,N":
# numbers with leading zeros and past 64 bits, '~', dots, suffixes, hidden
# names, empty names.
versions() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed)
    split("v ~ . - _ a b Z rc .tar.gz .gz .a1 ~rc 0 007 1 9 10 123456789012345678901234", p, " ")
    for (i = 0; i < n; i++) {
      s = ""
      k = int(rand() * 7)
      for (j = 0; j < k; j++)
        s = s p[1 + int(rand() * 18)]
      if (rand() < 0.1) s = "." s
      printf "%s,%d\n", s, int(rand() * 9)
    }
  }'
}

@test "sort's -V and -kNV: version strings, as sort -s -V" {
  versions 3000 37 > "$T/in"
  # Each shape of the order: numbers by value, '~' first, suffixes last.
  printf 'v1.10\nv1.9\nv1.9~rc1\nv01.9\nfile.tar.gz\nfile-1.0.tar.gz\n.\n..\n.hidden\n\n' > "$T/few"
  "$CLSORT" "${DEV[@]}" -V "$T/few" > "$T/got"
  printf '\n.\n..\n.hidden\nfile.tar.gz\nfile-1.0.tar.gz\nv1.9~rc1\nv1.9\nv01.9\nv1.10\n' |
    cmp - "$T/got"
  same_as_sort "$T/in" "-V" -V
  same_as_sort "$T/in" "-rV" -rV
  same_as_sort "$T/in" "-u -V" -u -V
  same_as_sort "$T/in" "-t , -k1,1V -k2,2nr" -t , -k1,1V -k2,2nr
  same_as_sort "$T/in" "-t , -k2,2n -k1,1Vr" -t , -k2,2n -k1,1Vr
  # Checked and merged as sort orders them (lines compared one by one).
  sort -s -V "$T/in" > "$T/sorted"
  "$CLSORT" -c -V "$T/sorted"
  run -1 "$CLSORT" -c -V "$T/in"
  head -1000 "$T/in" | sort -s -t , -k1,1V > "$T/a"
  tail -n +1001 "$T/in" | sort -s -t , -k1,1V > "$T/b"
  sort -s -m -t , -k1,1V "$T/a" "$T/b" |
    cmp - <("$CLSORT" "${DEV[@]}" -m -t , -k1,1V "$T/a" "$T/b")
  refused "$T/in" "-n -V:-V and -n (or -g, -h) each say how keys are compared" \
    "-F 2 -V:not -F, -K or -k TYPE" "-k 1,1nV:V and a number's option" \
    "-k 1,1V -k str:says how the key is read: no -k TYPE beside it" \
    "-f bin -V:sort's key options apply to the kv format only"
}

@test "sort's f and b: case folded, leading blanks skipped, as sort -s -f and -b" {
  printf 'b,  Bx\nA, a\na,b\nB,   A\n  c,C\n C,c\n_,[\n~,  ^\n' > "$T/in"
  same_as_sort "$T/in" "--ignore-case" -f
  same_as_sort "$T/in" "-b" -b
  same_as_sort "$T/in" "-r --ignore-case -b" -r -f -b
  same_as_sort "$T/in" "-t , -k2b" -t , -k2b
  same_as_sort "$T/in" "-t , -k2bf,2 -k1,1r" -t , -k2bf,2 -k1,1r
  same_as_sort "$T/in" "-u -t , -k2,2f" -u -t , -k2,2f
  same_as_sort "$T/in" "-t , -k2,2fb" -t , -k2,2fb
  same_as_sort "$T/in" "-t , --ignore-case -k2,2 -k1,1" -t , -f -k2,2 -k1,1
  # Larger, through every mode: fields that differ only in case.
  gen_text 2000 41 , > "$T/big"
  tr 'ab' 'AB' < "$T/big" | head -1000 >> "$T/big"
  same_as_sort "$T/big" "-t , -k2,2f -k3,3n" -t , -k2,2f -k3,3n
  sort -s -f "$T/big" > "$T/sorted"
  "$CLSORT" -c --ignore-case "$T/sorted"
  run -1 "$CLSORT" -c --ignore-case "$T/big"
  sort -s -m -f <(head -1500 "$T/sorted") <(tail -n +1501 "$T/sorted") |
    cmp - <("$CLSORT" "${DEV[@]}" -m --ignore-case <(head -1500 "$T/sorted") <(tail -n +1501 "$T/sorted"))
  refused "$T/in" "--ignore-case -V:--ignore-case is not taken beside -V" \
    "-k 1,1Vf:f is not taken beside V" "-b -t , -F 2:not -F, -K or -k TYPE" \
    "-f bin -b:sort's key options apply to the kv format only"
}

@test "sort's -M and -kNM: month names, as sort -s -M" {
  # syslog's lines, months in any case and cut short, other words, blanks.
  awk 'BEGIN {
    srand(41)
    split("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec jan SEPT dec. Ma Foo", m, " ")
    for (i = 0; i < 3000; i++)
      printf "%s%s %2d %02d:%02d:%02d host%d msg %d\n", (rand() < 0.1 ? "  " : ""),
        (rand() < 0.05 ? "" : m[1 + int(rand() * 17)]), 1 + int(rand() * 31), int(rand() * 24),
        int(rand() * 60), int(rand() * 60), int(rand() * 3), i
  }' > "$T/in"
  same_as_sort "$T/in" "-M" -M
  same_as_sort "$T/in" "-rM" -rM
  same_as_sort "$T/in" "-k1,1M -k2,2n -k3,3" -k1,1M -k2,2n -k3,3
  same_as_sort "$T/in" "-u -k1,1M" -u -k1,1M
  same_as_sort "$T/in" "-k2,2n -k1,1Mr" -k2,2n -k1,1Mr
  # Checked and merged as sort orders them.
  sort -s -M "$T/in" > "$T/sorted"
  "$CLSORT" -c -M "$T/sorted"
  run -1 "$CLSORT" -c -M "$T/in"
  sort -s -m -M <(head -1500 "$T/sorted") <(tail -n +1501 "$T/sorted") |
    cmp - <("$CLSORT" "${DEV[@]}" -m -M <(head -1500 "$T/sorted") <(tail -n +1501 "$T/sorted"))
  refused "$T/in" "-M -n:-M and -n (or -g, -h, -V) each say how keys are compared" \
    "-k 1,1Mn:M and n, g, h or V each say how the key is compared" \
    "-M -F 2:not -F, -K or -k TYPE: -k N,NM" "-f bin -M:sort's key options apply to the kv format only"
}

@test "sort's -k forms clsort does not take: one line naming the clsort way" {
  printf 'a,1\n' > "$T/in"
  # A number may go on past -t . or a digit: sort would read past its field.
  for t in . 0 e -; do
    run --separate-stderr "$CLSORT" -t "$t" -k 2n "$T/in"
    [ "$status" -eq 2 ] || fail "-t $t -k 2n: status $status"
    [[ "${stderr_lines[0]}" == *"may go on past the separator '$t': -k 2,2 reads the field alone"* ]] ||
      fail "-t $t -k 2n: ${stderr_lines[0]}"
  done
  refused "$T/in" "-t , -k 3,2:the key's end is a field from its start's" \
    "-t , -k 2.3,2:character positions" "-t , -k 2,2d:sort(1) key option is not taken"
  run --separate-stderr "$CLSORT" -t , -k 2,2 -F 2 "$T/in"
  [ "$status" -eq 2 ]
  [[ "${stderr_lines[0]}" == *"-K (or sort's -k N,N) and -F both name the key field"* ]]
  run --separate-stderr "$CLSORT" -t , -k 1,1 -k 2,2n -k u32 "$T/in"
  [ "$status" -eq 2 ]
  [[ "${stderr_lines[0]}" == *"and -k TYPE both name the key's type"* ]]
}
