#!/usr/bin/env bats
# The out-of-core paths on small data: -S 4K caps a run at 1024 records
# (clsort never goes below that).  Where a copy of the input fits in
# --memory, records and lines are cut into key ranges of a run each, and
# bare keys are sorted in runs that are merged on the device; where it does
# not (a small --memory), runs spill to temporary files and are merged on
# the host.  CLSORT_MERGE_RUNS=ranges|device|host chooses the in-memory
# path.  Whatever the path, the output must be identical to the in-core
# sort of the same input.  Then the temporary
# files themselves: a missing or unwritable -T directory, a full one, few
# file descriptors, and SIGINT in the middle of a spilling sort.
load helpers
bats_require_minimum_version 1.5.0


# tests/outofcore-host.bats is this file under another name: every case
# again on the host engine, whose runs -S and --memory bound alike.
if [[ $BATS_TEST_FILENAME == *-host.bats ]]; then
  DEV=(-d host)
fi

setup() {
  T=$BATS_TEST_TMPDIR
}

# gen_u32 FILE N: N random u32 keys.
gen_u32() {
  head -c $(($2 * 4)) /dev/urandom > "$1"
}

# gen_kv FILE N SEED: N "key:value" lines, keys from a small range so that
# many are equal; the value is the line number.
gen_kv() {
  awk -v n="$2" -v s="$3" 'BEGIN { srand(s); for (i = 0; i < n; i++) printf "%d:v%d\n", int(rand() * 5000), i }' > "$1"
}

# gen_rec FILE N SEED: N 8-byte records, a u32 key from 0..49 then the
# record's position as a u32 payload.
gen_rec() {
  perl -e 'srand($ARGV[1]); print pack("VV", int(rand(50)), $_) for 0 .. $ARGV[0] - 1' "$2" "$3" > "$1"
}

# same_as_incore WHAT COMMON... -- FORCED... -- FILE...: the sort with the
# COMMON and FORCED options (FORCED being those that force runs) is byte
# for byte the in-core sort with the COMMON options alone; -v of the
# forced sort goes to $T/err.
same_as_incore() {
  local what=$1 common=() forced=()
  shift
  while [ "$1" != -- ]; do common+=("$1"); shift; done
  shift
  while [ "$1" != -- ]; do forced+=("$1"); shift; done
  shift
  "$CLSORT" "${DEV[@]}" "${common[@]}" "$@" > "$T/want" || fail "in-core sort of $what failed"
  "$CLSORT" "${DEV[@]}" -v "${common[@]}" "${forced[@]}" "$@" > "$T/got" 2> "$T/err" ||
    fail "clsort ${common[*]} ${forced[*]} failed on $what: $(cat "$T/err")"
  cmp "$T/want" "$T/got" || fail "${forced[*]} differs from the in-core sort on $what"
}

# The counts of the -v report: "RUNS MERGES", runs merged or key ranges.
runs_merges() {
  sed -n -e 's/^clsort: [0-9]* records in \([0-9]*\) runs\{0,1\} of up to [0-9]*.*; \([0-9]*\) merge pass.*/\1 \2/p' \
    -e 's/^clsort: [0-9]* records cut into [0-9]* key ranges in [0-9.]* s, sorted in \([0-9]*\) runs\{0,1\} of up to [0-9]*; \([0-9]*\) merge pass.*/\1 \2/p' "$T/err"
}

# expect_runs MIN_RUNS WHERE: -v reported at least MIN_RUNS runs: with no
# merge on the host (WHERE "ranges": key ranges, or runs merged on the
# device), or runs merged on the host after being kept in WHERE ("memory"
# or "temporary files").
expect_runs() {
  local rm r m
  rm=$(runs_merges)
  [ -n "$rm" ] || fail "no run report in: $(cat "$T/err")"
  read -r r m <<< "$rm"
  [ "$r" -ge "$1" ] || fail "$r runs, expected at least $1"
  [ "$1" -gt 1 ] || return 0
  if [ "$2" = ranges ]; then
    grep -q "records cut into [0-9]* key ranges\|then merged on the device" "$T/err" ||
      fail "neither key ranges nor a merge on the device: $(cat "$T/err")"
    [ "$m" -eq 0 ] || fail "no merge expected on the host, but $m merge passes"
  else
    [ "$m" -ge 1 ] || fail "$r runs but $m merge passes"
    grep -q "of up to [0-9]*, kept in $2;" "$T/err" || fail "runs not kept in $2: $(cat "$T/err")"
  fi
}

# u32 reference order, as decimal lines.
check_u32_sorted() {
  od -An -v -tu4 -w4 "$T/got" | cmp - <(od -An -v -tu4 -w4 "$1" | sort -n ${2:+-r}) ||
    fail "$1: not in u32 order"
}

# --- key ranges of a run each -----------------------------------------------------

@test "u32, -S 4K: key ranges of a run each, identical to the in-core sort" {
  for n in 1 1023 1024 1025 3073 10007 100003; do
    gen_u32 "$T/in" $n
    same_as_incore "$n keys" -- -S 4K -- "$T/in"
    check_u32_sorted "$T/in"
    expect_runs $(((n + 1023) / 1024)) ranges
  done
}

@test "u32, -S 4K --memory=64K: small inputs are cut into key ranges in memory" {
  for n in 1 1023 1025 10007; do
    gen_u32 "$T/in" $n
    same_as_incore "$n keys" -- -S 4K --memory=64K -- "$T/in"
    expect_runs $(((n + 1023) / 1024)) ranges
  done
}

@test "u32 descending, -S 4K: identical to the in-core sort" {
  for n in 1025 10007; do
    gen_u32 "$T/in" $n
    same_as_incore "$n keys" -r -- -S 4K -- "$T/in"
    check_u32_sorted "$T/in" -r
    expect_runs 2 ranges
  done
}

@test "u32 from several files and stdin, -S 4K: runs across file boundaries" {
  gen_u32 "$T/a" 1500
  gen_u32 "$T/b" 700
  gen_u32 "$T/c" 2100
  cat "$T/a" "$T/b" "$T/c" > "$T/all"
  same_as_incore "three files" -- -S 4K -- "$T/a" "$T/b" "$T/c"
  check_u32_sorted "$T/all"
  expect_runs 5 ranges
  "$CLSORT" "${DEV[@]}" -S 4K - "$T/c" < "$T/a" > "$T/got2"
  cat "$T/a" "$T/c" > "$T/ac"
  "$CLSORT" "${DEV[@]}" "$T/ac" | cmp - "$T/got2"
}

@test "kv lines, -S 4K: identical to the in-core sort" {
  gen_kv "$T/in" 10007 1
  same_as_incore "10007 kv lines" -f kv -- -S 4K -- "$T/in"
  expect_runs 2 ranges
  same_as_incore "10007 kv lines, descending" -f kv -r -- -S 4K -- "$T/in"
  expect_runs 2 ranges
  # Equal keys keep input order: the values of one key ascend.
  grep '^17:' "$T/in" | cmp - <(grep '^17:' "$T/want")
}

@test "records with --stable, -S 4K: identical to the in-core sort, and stable" {
  gen_rec "$T/in" 10007 2
  same_as_incore "10007 records" -R 8 --stable -- -S 4K -- "$T/in"
  expect_runs 2 ranges
  # Sorted by key, positions ascending within a key.
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1n -k2,2n)
  same_as_incore "10007 records, descending" -R 8 --stable -r -- -S 4K -- "$T/in"
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1nr -k2,2n)
}

@test "records with the key inside, -S 4K: identical to the in-core sort" {
  head -c $((3001 * 12)) /dev/urandom > "$T/in"
  same_as_incore "3001 12-byte records, key at 4" -R 12 --key-offset=4 -k i32 -- -S 4K -- "$T/in"
  expect_runs 2 ranges
}

@test "f64 keys (with NaNs and signed zeros), -S 4K: identical to the in-core sort" {
  head -c $((5003 * 8)) /dev/urandom > "$T/in"
  # A few special values among the random bits.
  printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x80\0\0\0\0\0\0\xf0\x7f\0\0\0\0\0\0\xf0\xff\0\0\0\0\0\0\xf8\x7f' >> "$T/in"
  same_as_incore "5008 f64 keys" -k f64 -- -S 4K -- "$T/in"
  expect_runs 2 ranges
  same_as_incore "5008 f64 keys, descending" -k f64 -r -- -S 4K -- "$T/in"
  expect_runs 2 ranges
}


@test "key ranges: one key throughout spreads over the ranges by position, in input order" {
  awk 'BEGIN { for (i = 0; i < 20000; i++) printf "5:v%d\n", i }' > "$T/in"
  same_as_incore "20000 equal keys" -f kv -- -S 4K -- "$T/in"
  expect_runs 20 ranges
  cmp "$T/in" "$T/got"
  same_as_incore "20000 equal keys, descending" -f kv -r -- -S 4K -- "$T/in"
  cmp "$T/in" "$T/got"
  gen_rec "$T/in" 30011 4
  same_as_incore "30011 records of 50 keys" -R 8 --stable -- -S 4K -- "$T/in"
  expect_runs 30 ranges
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1n -k2,2n)
}

# --- runs merged on the device: cut by key into parts of a run each, each part
# sorted again --------------------------------------------------------------------

@test "runs merged on the device: keys, records and lines, all identical to the in-core sort" {
  export CLSORT_MERGE_RUNS=device
  for n in 1025 3073 10007; do
    gen_u32 "$T/in" $n
    same_as_incore "$n keys" -- -S 4K -- "$T/in"
    grep -q "then merged on the device" "$T/err" || fail "not merged on the device: $(cat "$T/err")"
    expect_runs $(((n + 1023) / 1024)) ranges
    same_as_incore "$n keys, descending" -r -- -S 4K -- "$T/in"
    check_u32_sorted "$T/in" -r
  done
  gen_kv "$T/in" 10007 3
  same_as_incore "10007 kv lines" -f kv -- -S 4K -- "$T/in"
  grep -q "then merged on the device" "$T/err" || fail "not merged on the device: $(cat "$T/err")"
  gen_rec "$T/in" 10007 5
  same_as_incore "10007 records of 50 keys" -R 8 --stable -r -- -S 4K -- "$T/in"
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1nr -k2,2n)
}

@test "runs merged on the device: a part of equal keys larger than a run is merged on the host" {
  export CLSORT_MERGE_RUNS=device
  # 4 keys, each more than a run of 1024: every part is too large.
  perl -e 'srand(9); print pack("V", int(rand(4))) for 1 .. 9001' > "$T/in"
  same_as_incore "9001 keys of 4 values" -- -S 4K -vv -- "$T/in"
  check_u32_sorted "$T/in"
  grep -q "merge on the device: [0-9]* parts, [1-9][0-9]* of them too large" "$T/err" ||
    fail "no part merged on the host: $(cat "$T/err")"
  gen_rec "$T/in" 20011 6
  same_as_incore "20011 records of 50 keys" -R 8 --stable -- -S 4K -- "$T/in"
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1n -k2,2n)
}

@test "CLSORT_INDEX_BITS=10: indexed runs hold at most 1024 records, output unchanged" {
  export CLSORT_INDEX_BITS=10
  gen_kv "$T/in" 10007 5
  same_as_incore "10007 kv lines" -f kv -- -- "$T/in"
  grep -q "of up to 1024;" "$T/err" || fail "runs not capped at 1024: $(cat "$T/err")"
  expect_runs 10 ranges
  gen_rec "$T/in" 10007 6
  same_as_incore "10007 records" -R 8 --stable -r -- -- "$T/in"
  expect_runs 10 ranges
  head -c $((5003 * 8)) /dev/urandom > "$T/in"
  same_as_incore "5003 f64 keys" -k f64 -- -- "$T/in"
  expect_runs 5 ranges
  # Bare integer keys carry no index: one run.
  gen_u32 "$T/in" 5003
  same_as_incore "5003 u32 keys" -- -- "$T/in"
  expect_runs 1 ranges
  grep -q "in 1 run of up to 5003;" "$T/err" || fail "bare keys were cut: $(cat "$T/err")"
}

@test "key ranges of kv lines: a bad line is named with its file and line, --skip-bad counts it" {
  gen_kv "$T/in" 5000 8
  { head -n 3000 "$T/in"; echo "x12:bad"; tail -n 2000 "$T/in"; } > "$T/bad"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv -S 4K "$T/bad" -o "$T/out"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"$T/bad:3001:"* ]] || fail "stderr: $stderr"
  [ ! -e "$T/out" ]
  "$CLSORT" "${DEV[@]}" -f kv "$T/in" > "$T/want"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -v -f kv --skip-bad -S 4K "$T/bad"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"skipped 1 line: 1 with a bad key"* ]] || fail "stderr: $stderr"
  [[ "$stderr" == *"key ranges"* ]] || fail "no key ranges: $stderr"
  cmp "$T/want" <(printf '%s\n' "$output")
}

# --- a device that cannot hold what it claims ------------------------------------
# faultinject.so makes device buffers above FAULTINJECT_CL_MAX_BUFFER bytes
# fail to allocate: the run size is halved until one fits.

@test "device buffer allocation failure: runs halve until they fit, output unchanged" {
  [ "${DEV[*]}" != "-d host" ] || skip "the host engine has no device buffer"
  gen_u32 "$T/in" 300007
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  FAULTINJECT_CL_MAX_BUFFER=262144 LD_PRELOAD=$FAULTINJECT \
    "$CLSORT" "${DEV[@]}" -v -S 64M "$T/in" > "$T/got" 2> "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  grep -q "device buffer of 300007 words failed (CL_MEM_OBJECT_ALLOCATION_FAILURE)" "$T/err" ||
    fail "no halving reported: $(cat "$T/err")"
  expect_runs 4 ranges
  # Nothing fits at all: an error, status 2, and no output file.
  run --separate-stderr env FAULTINJECT_CL_MAX_BUFFER=64 LD_PRELOAD="$FAULTINJECT" \
    "$CLSORT" "${DEV[@]}" "$T/in" -o "$T/none"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"the device cannot hold even 1024 words"* ]] || fail "stderr: $stderr"
  [ ! -e "$T/none" ]
}

# --- the parallel merge: parts cut by key, merged by several threads ------------
# CLSORT_PARALLEL_MERGE_MIN=0 takes it for any size, CLSORT_MERGE_RUNS=host
# keeps the runs in memory to be merged on the host; --parallel sets the number of
# parts.  Equal keys must stay in one part, in input order.

@test "parallel merge: u32, kv, stable records and f64 identical to the in-core sort" {
  export CLSORT_PARALLEL_MERGE_MIN=0 CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 50021
  for p in 2 3 7; do
    same_as_incore "50021 keys" -- -S 4K --parallel=$p -- "$T/in"
    expect_runs 40 memory
  done
  same_as_incore "50021 keys, descending, spilled" -r -- -S 4K --memory=64K --parallel=5 -- "$T/in"
  gen_kv "$T/in" 30011 7
  same_as_incore "30011 kv lines" -f kv -- -S 4K --parallel=4 -- "$T/in"
  grep '^17:' "$T/in" | cmp - <(grep '^17:' "$T/got")
  gen_rec "$T/in" 30011 8
  same_as_incore "30011 records" -R 8 --stable -- -S 4K --parallel=3 -- "$T/in"
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1n -k2,2n)
  same_as_incore "30011 records, descending" -R 8 --stable -r -- -S 4K --parallel=6 -- "$T/in"
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1nr -k2,2n)
  head -c $((20011 * 8)) /dev/urandom > "$T/in"
  same_as_incore "20011 f64 keys" -k f64 -- -S 4K --parallel=4 -- "$T/in"
}

@test "parallel merge in several rounds (48 MiB, rounds of 16 MiB): identical to the in-core sort" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" $((12 * 1024 * 1024))
  same_as_incore "12M keys" -- -S 4M --memory=128M --parallel=3 -- "$T/in"
  expect_runs 12 memory
  same_as_incore "12M keys, descending" -r -- -S 4M --memory=128M --parallel=2 -- "$T/in"
}

@test "parallel merge: all keys equal, and long kv lines across part cuts" {
  export CLSORT_PARALLEL_MERGE_MIN=0 CLSORT_MERGE_RUNS=host
  awk 'BEGIN { for (i = 0; i < 20000; i++) printf "5:v%d\n", i }' > "$T/in"
  same_as_incore "20000 equal keys" -f kv -- -S 4K --parallel=4 -- "$T/in"
  cmp "$T/in" "$T/got"
  awk 'BEGIN { srand(3); for (i = 0; i < 3000; i++) { printf "%d:", int(rand() * 100); for (j = 0; j < int(rand() * 3000); j++) printf "x"; printf "%d\n", i } }' > "$T/in"
  same_as_incore "3000 long kv lines" -f kv -- -S 4K --parallel=5 -- "$T/in"
}

# --- runs spilled to temporary files ---------------------------------------------

@test "u32, -S 4K --memory=64K: runs spill to temporary files" {
  export CLSORT_MERGE_RUNS=host
  for n in 20011 100003; do
    gen_u32 "$T/in" $n
    same_as_incore "$n keys" -- -S 4K --memory=64K -- "$T/in"
    check_u32_sorted "$T/in"
    expect_runs $(((n + 1023) / 1024)) "temporary files"
  done
  # 98 runs, more than one merge fan-in: more than one pass.
  read -r r m <<< "$(runs_merges)"
  [ "$m" -ge 2 ] || fail "$r runs in $m merge passes"
}

@test "u32 descending, spilling: identical to the in-core sort" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 30011
  same_as_incore "30011 keys" -r -- -S 4K --memory=64K -- "$T/in"
  check_u32_sorted "$T/in" -r
  expect_runs 30 "temporary files"
}

@test "kv lines, spilling: identical to the in-core sort" {
  gen_kv "$T/in" 30011 3
  same_as_incore "30011 kv lines" -f kv -- -S 4K --memory=64K -- "$T/in"
  expect_runs 30 "temporary files"
}

@test "records with --stable, spilling: identical to the in-core sort" {
  gen_rec "$T/in" 30011 4
  same_as_incore "30011 records" -R 8 --stable -- -S 4K --memory=64K -- "$T/in"
  expect_runs 30 "temporary files"
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1n -k2,2n)
}

@test "f64 keys, spilling: identical to the in-core sort" {
  head -c $((20011 * 8)) /dev/urandom > "$T/in"
  same_as_incore "20011 f64 keys" -k f64 -- -S 4K --memory=64K -- "$T/in"
  expect_runs 20 "temporary files"
}

@test "stdin larger than --memory is copied to a temporary file and sorted" {
  gen_u32 "$T/in" 600000
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  mkdir "$T/tmp"
  "$CLSORT" "${DEV[@]}" -S 4K --memory=64K -T "$T/tmp" < "$T/in" > "$T/got"
  cmp "$T/want" "$T/got"
  [ -z "$(ls -A "$T/tmp")" ]
}

@test "a large spilling sort (expensive)" {
  [ "$RUN_EXPENSIVE_TESTS" = yes ] || skip "expensive"
  gen_u32 "$T/in" $((4 << 20))
  same_as_incore "4 Mi keys" -- -S 64K --memory=1M -- "$T/in"
  expect_runs 256 "temporary files"
}

@test "bare keys larger than --memory, to a file: key ranges sorted in the output's place" {
  gen_u32 "$T/in" 100004
  for opts in "-k u32" "-k u32 -r" "-k i32" "-k u64" "-k i64 -r"; do
    "$CLSORT" "${DEV[@]}" $opts "$T/in" > "$T/want"
    # No temporary file: a -T that does not exist is never used.
    "$CLSORT" "${DEV[@]}" -v $opts -S 4K --memory=64K -T /nonexistent "$T/in" -o "$T/got" 2> "$T/err" ||
      fail "$opts: $(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "$opts: differs"
    grep -q "^clsort: [0-9]* records cut into [0-9]* key ranges in the output's place" "$T/err" ||
      fail "$opts: not in place: $(cat "$T/err")"
  done
  # Standard output into a file, and the input as its own output.
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -S 4K --memory=64K "$T/in" > "$T/got"
  cmp "$T/want" "$T/got"
  cp "$T/in" "$T/self"
  "$CLSORT" "${DEV[@]}" -S 4K --memory=64K "$T/self" -o "$T/self"
  cmp "$T/want" "$T/self"
}

@test "bare keys larger than --memory into a pipe, or with -u: runs in temporary files" {
  gen_u32 "$T/in" 100003
  mkdir "$T/tmp"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -v -S 4K --memory=64K -T "$T/tmp" "$T/in" 2> "$T/err" | cat > "$T/got"
  cmp "$T/want" "$T/got"
  expect_runs 98 "temporary files"
  "$CLSORT" "${DEV[@]}" -u "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -v -u -S 4K --memory=64K -T "$T/tmp" "$T/in" -o "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  expect_runs 98 "temporary files"
  [ -z "$(ls -A "$T/tmp")" ]
}

# --- the temporary directory -------------------------------------------------------

@test "-T naming a missing directory, with runs to spill: status 2, the directory named" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 20011
  run --separate-stderr "$CLSORT" "${DEV[@]}" -S 4K --memory=64K -T /nonexistent -o "$T/out" "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: cannot create a temporary file in /nonexistent: No such file or directory" ]
  [ ! -e "$T/out" ]
  [ -z "$(find "$T" -name '.clsort.*')" ]
}

@test "-T is not needed when nothing spills" {
  gen_u32 "$T/in" 10007
  run --separate-stderr "$CLSORT" "${DEV[@]}" -S 4K -T /nonexistent "$T/in"
  [ "$status" -eq 0 ] || fail "status $status: $stderr"
  [ -z "$stderr" ] || fail "$stderr"
}

@test "TMPDIR is the default temporary directory" {
  gen_u32 "$T/in" 20011
  TMPDIR=/nonexistent/tmp run --separate-stderr "$CLSORT" "${DEV[@]}" -S 4K --memory=64K "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: cannot create a temporary file in /nonexistent/tmp: No such file or directory" ]
}

@test "an unwritable temporary directory: status 2, the directory named" {
  d=$(mktemp -d /tmp/clsort-ooc.XXXXXX)
  chmod 755 "$d"
  mkdir "$d/ro"
  gen_u32 "$d/in" 20011
  chmod 644 "$d/in"
  chmod 555 "$d/ro"
  as=()
  if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv > /dev/null || { rm -rf "$d"; skip "root, and no setpriv"; }
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${as[@]}" test -x "$CLSORT" || { rm -rf "$d"; skip "clsort not reachable as nobody"; }
    # nobody needs a cache directory of its own for the OpenCL compilers.
    mkdir "$d/cache"
    chown 65534 "$d/cache"
  fi
  XDG_CACHE_HOME="$d/cache" run --separate-stderr "${as[@]}" \
    "$CLSORT" "${DEV[@]}" -S 4K --memory=64K -T "$d/ro" "$d/in"
  rm -rf "$d"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [[ "${stderr_lines[-1]}" == "clsort: cannot create a temporary file in $d/ro: Permission denied" ]] ||
    fail "stderr: $stderr"
}

@test "faultinject: ENOSPC on the temporary files: status 2, the directory named" {
  gen_u32 "$T/in" 20011
  mkdir "$T/tmp"
  FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC LD_PRELOAD="$FAULTINJECT" \
    run --separate-stderr "$CLSORT" "${DEV[@]}" -S 4K --memory=64K -T "$T/tmp" -o "$T/out" "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: write error on a temporary file in $T/tmp: No space left on device" ]
  [ ! -e "$T/out" ]
  [ -z "$(ls -A "$T/tmp")" ]
  [ -z "$(find "$T" -name '.clsort.*')" ]
}

@test "faultinject: ENOSPC after some runs were written: status 2, the directory named" {
  gen_u32 "$T/in" 20011
  mkdir "$T/tmp"
  FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC FAULTINJECT_AFTER=30000 LD_PRELOAD="$FAULTINJECT" \
    run --separate-stderr "$CLSORT" "${DEV[@]}" -S 4K --memory=64K -T "$T/tmp" -o "$T/out" "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: write error on a temporary file in $T/tmp: No space left on device" ]
  [ ! -e "$T/out" ]
  [ -z "$(ls -A "$T/tmp")" ]
}

@test "faultinject: ENOSPC copying a large stdin to a temporary file" {
  gen_u32 "$T/in" 600000
  mkdir "$T/tmp"
  run --separate-stderr bash -c 'cat "$1" | FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${@:3}" --memory=64K -T "$2"' _ "$T/in" "$T/tmp" "${DEV[@]}"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [ "$stderr" = "clsort: cannot write a temporary file in $T/tmp: No space left on device" ]
  [ -z "$(ls -A "$T/tmp")" ]
}

@test "a full tmpfs as the temporary directory: status 2, the directory named" {
  export CLSORT_MERGE_RUNS=host
  mkdir "$T/small"
  mount -t tmpfs -o size=256k tmpfs "$T/small" 2> /dev/null || skip "cannot mount a tmpfs here"
  gen_u32 "$T/in" 200003
  run --separate-stderr "$CLSORT" "${DEV[@]}" -S 4K --memory=64K -T "$T/small" -o "$T/out" "$T/in"
  left=$(ls -A "$T/small")
  umount "$T/small"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: write error on a temporary file in $T/small: No space left on device" ]
  [ ! -e "$T/out" ]
  [ -z "$left" ]
}

@test "ulimit -n 16 with many spilled runs: still sorted" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 100003
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  # Descriptors inherited from the test harness would count against the
  # limit: close all but 0, 1 and 2 first.
  run --separate-stderr bash -c 'for fd in $(ls /proc/$BASHPID/fd); do
      [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2> /dev/null
    ulimit -n 16 && exec "$CLSORT" "${@:3}" -v -S 4K --memory=64K "$2" > "$1"' \
    _ "$T/got" "$T/in" "${DEV[@]}"
  [ "$status" -eq 0 ] || fail "status $status: $stderr"
  cmp "$T/want" "$T/got"
  [[ "$stderr" == *"kept in temporary files"* ]]
}

# --- interrupted ---------------------------------------------------------------------

# interrupt OPTION...: start clsort with the options (SIGINT at its default
# even though it runs in the background), send SIGINT after a short sleep;
# sets $status to its exit status, or skips when it was done already (a
# process that has ended but is not yet waited for takes the signal too).
interrupt() {
  env --default-signal=INT "$CLSORT" "${DEV[@]}" "$@" 2> "$T/err" &
  pid=$!
  sleep "${SIGINT_AFTER:-1.5}"
  kill -INT "$pid" 2> /dev/null || { wait "$pid"; skip "clsort finished before SIGINT (status $?)"; }
  status=0
  wait "$pid" || status=$?
  [ "$status" -ne 0 ] || skip "clsort finished before SIGINT"
}

# interrupt_at_write OPTION...: as interrupt, the SIGINT sent while clsort
# is stopped at its first write (or allocation) into a temporary file: a
# run's, or the -o output's before it has its name.
interrupt_at_write() {
  FAULTINJECT_STOP=1 FAULTINJECT_OP=none FAULTINJECT_TARGET=tmp LD_PRELOAD="$FAULTINJECT" \
    env --default-signal=INT "$CLSORT" "${DEV[@]}" "$@" 2> "$T/err" &
  pid=$!
  stopped $pid
  kill -INT $pid
  kill -CONT $pid
  status=0
  wait "$pid" || status=$?
}

@test "SIGINT during a sort with runs in memory: status 130, no partial -o output" {
  env --default-signal=INT true 2> /dev/null || skip "env --default-signal not available"
  gen_u32 "$T/in" $((12 << 20))
  mkdir "$T/out" "$T/tmp"
  interrupt_at_write -S 4K -T "$T/tmp" -o "$T/out/sorted" "$T/in"
  [ "$status" -eq 130 ] || fail "status $status: $(cat "$T/err")"
  [ -z "$(ls -A "$T/out")" ] || fail "left beside the output: $(ls -A "$T/out")"
  [ -z "$(ls -A "$T/tmp")" ]
}

@test "SIGINT during a spilling sort: status 130, no partial -o output" {
  env --default-signal=INT true 2> /dev/null || skip "env --default-signal not available"
  gen_u32 "$T/in" $((12 << 20))
  mkdir "$T/out" "$T/tmp"
  interrupt_at_write -S 4K --memory=64K -T "$T/tmp" -o "$T/out/sorted" "$T/in"
  [ "$status" -eq 130 ] || fail "status $status: $(cat "$T/err")"
  [ -z "$(ls -A "$T/out")" ] || fail "left beside the output: $(ls -A "$T/out")"
}

@test "SIGINT during a spilling sort leaves nothing in the temporary directory" {
  env --default-signal=INT true 2> /dev/null || skip "env --default-signal not available"
  gen_u32 "$T/in" $((12 << 20))
  mkdir "$T/out"
  # The window is narrow: interrupt a few times, at different moments.
  for i in 1 2 3 4; do
    mkdir "$T/tmp$i"
    SIGINT_AFTER=1.$((i * 2)) interrupt -S 4K --memory=64K -T "$T/tmp$i" -o "$T/out/sorted" "$T/in"
    [ "$status" -eq 130 ] || fail "status $status: $(cat "$T/err")"
    [ -z "$(ls -A "$T/tmp$i")" ] || fail "left in the temporary directory: $(ls -A "$T/tmp$i")"
  done
}

# peak_of OPTION...: the peak resident MiB that clsort -v reports.
peak_of() {
  "$CLSORT" -v "${DEV[@]}" "$@" 2>&1 > /dev/null |
    sed -n 's/^clsort: peak resident memory \([0-9]*\) MiB.*/\1/p'
}

@test "-v reports the peak memory: within --memory beside the input's and output's mappings" {
  [ -z "$SANITIZED" ] || skip "the sanitizers' shadow memory and quarantine are in the peak"
  # The process's own footprint (libraries, a device's runtime) first.
  head -c 4096 /dev/urandom > "$T/small"
  base=$(peak_of "$T/small" -o "$T/got")
  [ -n "$base" ] || fail "no peak reported"
  gen_u32 "$T/in" $((8 << 20))	# 32 MiB
  mkdir "$T/tmp"
  for mem in 64M 16M; do
    peak=$(peak_of -S 1M --memory=$mem -T "$T/tmp" "$T/in" -o "$T/got")
    # Budget, 32 MiB of input and 32 of output mapped, 8 MiB of slack.
    [ "$peak" -le $((base + ${mem%M} + 32 + 32 + 8)) ] ||
      fail "--memory=$mem: peak $peak MiB, over $base + ${mem%M} + 64 + 8"
    "$CLSORT" -c "$T/got" || fail "--memory=$mem: not sorted"
  done
}

# --- the merge of runs in temporary files: parts by key, read with pread ---------
# --memory=64K lets a merge read at most two runs in pieces of 64 KiB: many
# runs then take several merge passes.

# passes: the merge passes -v reported, at least MIN (2).
expect_passes() {
  local r m
  read -r r m <<< "$(runs_merges)"
  [ -n "$m" ] || fail "no run report in: $(cat "$T/err")"
  [ "$m" -ge "${1:-2}" ] || fail "$r runs in $m merge passes, expected at least ${1:-2}"
}

@test "spilled merge, several passes: every format identical to the in-core sort" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 100003
  same_as_incore "100003 u32 keys" -- -S 4K --memory=64K -- "$T/in"
  expect_runs 90 "temporary files"
  expect_passes
  gen_u32 "$T/in" 100002
  same_as_incore "50001 i64 keys, descending, unique" -k i64 -r -u -- -S 4K --memory=64K -- "$T/in"
  expect_passes
  gen_kv "$T/in" 60013 5
  same_as_incore "60013 kv lines" -f kv -- -S 4K --memory=64K -- "$T/in"
  expect_runs 50 "temporary files"
  expect_passes
  same_as_incore "60013 kv lines, unique keys" -f kv -u -- -S 4K --memory=64K -- "$T/in"
  expect_passes
  # String keys of 0-11 bytes from three letters: many equal, many prefixes of others.
  awk 'BEGIN { srand(4); for (i = 0; i < 60013; i++) { k = ""; n = int(rand() * 12)
    for (j = 0; j < n; j++) k = k sprintf("%c", 97 + int(rand() * 3)); printf "%s:v%d\n", k, i } }' > "$T/in"
  same_as_incore "60013 kv lines, string keys" -f kv -k str -- -S 4K --memory=64K -- "$T/in"
  expect_passes
  gen_rec "$T/in" 60013 6
  same_as_incore "60013 records" -R 8 --stable -- -S 4K --memory=64K -- "$T/in"
  expect_passes
  od -An -v -tu4 -w8 "$T/got" | cmp - <(od -An -v -tu4 -w8 "$T/in" | sort -k1,1n -k2,2n)
  # 10-byte keys whose first 8 bytes often tie: the rest of the key decides.
  perl -e 'srand(9); for (0 .. 20010) { print pack("x7 C", int(rand(4))), pack("C*", map { int(rand(256)) } 1 .. 92) }' > "$T/in"
  same_as_incore "20011 100-byte records, tied 10-byte keys" -R 100 -k bytes:10 -- -S 256K --memory=64K -- "$T/in"
  expect_runs 2 "temporary files"
}

@test "spilled merge: -v says the plan, -vv each pass on several threads" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 2000003
  mkdir "$T/tmp"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -vv -S 256K --memory=4M --parallel=3 -T "$T/tmp" "$T/in" > "$T/got" 2> "$T/err" ||
    fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  grep -q "^clsort: merge plan: about [0-9]* runs in temporary files, [0-9]* at a time" "$T/err" ||
    fail "no plan: $(cat "$T/err")"
  # The plan counts the runs there will be (kv lines too, whatever their length).
  gen_kv "$T/kv" 60013 5
  "$CLSORT" "${DEV[@]}" -v -f kv -S 64K --memory=512K -T "$T/tmp" "$T/kv" 2> "$T/kverr" > "$T/kvgot" ||
    fail "$(cat "$T/kverr")"
  planned=$(sed -n 's/^clsort: merge plan: about \([0-9]*\) runs.*/\1/p' "$T/kverr")
  runs=$(sed -n 's/^clsort: 60013 records in \([0-9]*\) runs.*/\1/p' "$T/kverr")
  [ -n "$runs" ] && [ "$planned" = "$runs" ] || fail "planned ${planned:-none}, sorted ${runs:-none}: $(cat "$T/kverr")"
  line=$(grep "^clsort: merge pass: [0-9]* runs in temporary files" "$T/err" | tail -1)
  [[ $line =~ ([0-9]+)\ parts\ in\ [0-9]+\ rounds\ on\ ([0-9]+)\ threads,\ the\ largest\ [0-9]+%\ of\ the\ bytes:\ .*read\ .*merge\ .*writing ]] ||
    fail "no pass report: $(cat "$T/err")"
  [ "${BASH_REMATCH[1]}" -ge 3 ] || fail "${BASH_REMATCH[1]} parts: $line"
  [ "${BASH_REMATCH[2]}" -eq 3 ] || fail "not on 3 threads: $line"
}

@test "spilled records and lines: each part merged straight into the output's mapping, identical" {
  gen_rec "$T/in" 300007 7
  gen_kv "$T/kv" 200003 8
  printf '17:no line end' >> "$T/kv"
  mkdir "$T/tmp"
  for opts in "-R 8 -k u32" "-R 8 -k u32 --stable" "-f kv" "-f kv -r" "-t: -F 2 -k str"; do
    in=$T/in; [[ $opts == -R* ]] || in=$T/kv
    "$CLSORT" "${DEV[@]}" $opts "$in" > "$T/want"
    "$CLSORT" "${DEV[@]}" -vv $opts -S 64K --memory=1M --parallel=3 -T "$T/tmp" \
      "$in" -o "$T/got" 2> "$T/err" || fail "$opts: $(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "$opts: differs"
    grep -q "^clsort: merge pass: .* on 3 threads, .* merge into the output's mapping" "$T/err" ||
      fail "$opts: not merged into the mapping: $(cat "$T/err")"
  done
}

@test "spilled runs past half the memory available: written back as they come, output identical" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 2000003
  mkdir "$T/tmp"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  CLSORT_MEMORY_AVAILABLE=2000000 "$CLSORT" "${DEV[@]}" -vv -S 256K --memory=4M -T "$T/tmp" \
    "$T/in" -o "$T/got" 2> "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  grep -q "^clsort: runs: more than half the memory available (1 MiB) in temporary files, written back" "$T/err" ||
    fail "runs not written back: $(cat "$T/err")"
  grep -q "^clsort: merge pass: .*; the output written back as it came$" "$T/err" ||
    fail "output not written back: $(cat "$T/err")"
  # With room in the page cache, neither: runs merged before the kernel
  # writes them back are never written.
  rm "$T/got"
  CLSORT_MEMORY_AVAILABLE=$((1 << 40)) "$CLSORT" "${DEV[@]}" -vv -S 256K --memory=4M -T "$T/tmp" \
    "$T/in" -o "$T/got" 2> "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  run grep "written back" "$T/err"
  [ "$status" -eq 1 ] || fail "written back with room: $output"
  [ -z "$(ls -A "$T/tmp")" ]
}

@test "the default --memory is half the memory available" {
  gen_u32 "$T/in" 1000
  CLSORT_MEMORY_AVAILABLE=1073741824 "$CLSORT" "${DEV[@]}" -v "$T/in" 2> "$T/err" > /dev/null ||
    fail "$(cat "$T/err")"
  grep -q "^clsort: host memory budget 512 MiB$" "$T/err" || fail "$(cat "$T/err")"
}

# A memory cgroup of 1 GiB made for the test (root, and a cgroup file
# system it may write, v2 or v1): clsort inside it takes at most half.
@test "the default --memory is within a memory cgroup's limit" {
  local cg v2=1 i
  if [ -w /sys/fs/cgroup/cgroup.subtree_control ]; then
    echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2> /dev/null || true
    cg=/sys/fs/cgroup/clsort-test-$$
  elif [ -w /sys/fs/cgroup/memory ]; then
    v2=0 cg=/sys/fs/cgroup/memory/clsort-test-$$
  else
    skip "no cgroup file system to write"
  fi
  mkdir "$cg" 2> /dev/null || skip "cannot make a cgroup"
  if [ $v2 = 1 ]; then
    echo $((1 << 30)) > "$cg/memory.max" 2> /dev/null || { rmdir "$cg"; skip "no memory controller"; }
  else
    echo $((1 << 30)) > "$cg/memory.limit_in_bytes" || { rmdir "$cg"; skip "no memory limit"; }
  fi
  gen_u32 "$T/in" 1000
  run sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -v "$3" > /dev/null' sh "$cg" "$CLSORT" "$T/in"
  # A sort that may go to a GPU answers before its worker has ended (it
  # releases the device after): the cgroup empties a moment later.
  for ((i = 0; i < 100; i++)); do
    [ -z "$(cat "$cg/cgroup.procs")" ] && break
    sleep 0.1
  done
  rmdir "$cg"
  [ "$status" -eq 0 ] || fail "$output"
  budget=$(sed -n 's/^clsort: host memory budget \([0-9]*\) MiB$/\1/p' <<< "$output")
  [ -n "$budget" ] && [ "$budget" -le 512 ] && [ "$budget" -ge 64 ] || fail "budget ${budget:-none}: $output"
}

@test "spilled runs: written through mappings of their files; without fallocate or mmap, through write(2)" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 200003
  gen_kv "$T/kv" 60013 5
  mkdir "$T/tmp"
  for input in "$T/in" "$T/kv"; do
    fmt=(); [ "$input" = "$T/in" ] || fmt=(-f kv)
    "$CLSORT" "${DEV[@]}" "${fmt[@]}" "$input" > "$T/want"
    "$CLSORT" "${DEV[@]}" "${fmt[@]}" -vvv -S 4K --memory=64K -T "$T/tmp" "$input" > "$T/got" 2> "$T/err" ||
      fail "$(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "mapped runs of $input differ"
    maps=$(grep -c "^clsort: output: writing a temporary file in $T/tmp through a shared mapping" "$T/err")
    [ "$maps" -ge 8 ] || fail "$maps runs written through mappings: $(cat "$T/err")"
    for op in fallocate mmap; do
      FAULTINJECT_TARGET=tmp FAULTINJECT_OP=$op LD_PRELOAD="$FAULTINJECT" \
        "$CLSORT" "${DEV[@]}" "${fmt[@]}" -vvv -S 4K --memory=64K -T "$T/tmp" "$input" > "$T/got" 2> "$T/err" ||
        fail "no $op: $(cat "$T/err")"
      cmp "$T/want" "$T/got" || fail "runs of $input written without $op differ"
      ! grep -q "temporary file in $T/tmp through a shared mapping" "$T/err" || fail "mapped without $op"
      grep -q "kept in temporary files" "$T/err" || fail "no spilled runs: $(cat "$T/err")"
    done
  done
  [ -z "$(ls -A "$T/tmp")" ]
}

@test "faultinject: a temporary file that cannot be read back: status 2, nothing left" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 20011
  mkdir "$T/tmp" "$T/out"
  FAULTINJECT_TARGET=tmp FAULTINJECT_OP=read LD_PRELOAD="$FAULTINJECT" \
    run --separate-stderr "$CLSORT" "${DEV[@]}" -S 4K --memory=64K -T "$T/tmp" -o "$T/out/sorted" "$T/in"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: cannot read back a temporary file in $T/tmp: Input/output error" ] ||
    fail "stderr: $stderr"
  [ -z "$(ls -A "$T/out")" ]
  [ -z "$(ls -A "$T/tmp")" ]
}

@test "SIGTERM during the merge of spilled runs: status 143, no -o output, nothing left" {
  export CLSORT_MERGE_RUNS=host
  gen_u32 "$T/in" 500000
  mkdir "$T/out" "$T/tmp"
  # Stopped at the first read of a temporary file: the first merge.
  FAULTINJECT_STOP=read FAULTINJECT_OP=none FAULTINJECT_TARGET=tmp LD_PRELOAD="$FAULTINJECT" \
    "$CLSORT" "${DEV[@]}" -S 64K --memory=1M -T "$T/tmp" -o "$T/out/sorted" "$T/in" 2> "$T/err" &
  pid=$!
  stopped $pid
  kill -TERM $pid
  kill -CONT $pid
  status=0
  wait $pid || status=$?
  [ "$status" -eq 143 ] || fail "status $status: $(cat "$T/err")"
  [ -z "$(ls -A "$T/out")" ] || fail "left beside the output: $(ls -A "$T/out")"
  [ -z "$(ls -A "$T/tmp")" ] || fail "left in the temporary directory: $(ls -A "$T/tmp")"
}
