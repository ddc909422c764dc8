#!/usr/bin/env bats
# Bare u32 keys through the device engine: edge sizes around the tile and
# work-group boundaries, key distributions, both directions, both tile
# kernels, the ways input can arrive, and the host shortcut.  Every result
# is compared byte for byte with refsort's.
load helpers
bats_require_minimum_version 1.5.0

# Auto keeps the rates these tests measure though other suites' sorts run
# beside them (make -j check): all but the test of that check itself.
export CLSORT_OTHERS_MAX=1

# gen FILE N SEED [DIST]: N u32 keys into FILE.
gen() {
  "$REFSORT" gen u32 "$2" "$3" "${4:-rand}" > "$1"
}

# expect FILE [-r]: refsort's order of FILE into $BATS_TEST_TMPDIR/want.
expect() {
  "$REFSORT" sort "${@:2}" < "$1" > "$BATS_TEST_TMPDIR/want"
}

# same_as_ref FILE WHAT [CLSORT OPTION]...: clsort on the device sorts
# FILE as refsort does; -r among the options sorts both descending.
same_as_ref() {
  local in=$1 what=$2 ref=() a
  shift 2
  for a; do [ "$a" = -r ] && ref=(-r); done
  expect "$in" "${ref[@]}"
  "$CLSORT" "${DEV[@]}" "$@" "$in" > "$BATS_TEST_TMPDIR/got" ||
    fail "clsort $* failed with status $? on $what"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" ||
    fail "clsort $* differs from refsort on $what"
}

# sizes_check SIZE [DIST...]: every listed distribution (all five by
# default) of SIZE keys, ascending and descending, both tile kernels.
sizes_check() {
  local n=$1 d r k f="$BATS_TEST_TMPDIR/in" dists
  shift
  dists=("$@")
  [ $# -gt 0 ] || dists=(rand equal few sorted reverse)
  for d in "${dists[@]}"; do
    gen "$f" "$n" "$n" "$d"
    for r in "" -r; do
      for k in --local-kernel=bitonic --local-kernel=merge; do
        same_as_ref "$f" "$n keys, $d" $r "$k"
      done
    done
  done
}

@test "no keys: empty output" {
  sizes_check 0
  [ ! -s "$BATS_TEST_TMPDIR/got" ]
}

@test "1 key" { sizes_check 1; }
@test "2 keys" { sizes_check 2; }
@test "3 keys" { sizes_check 3; }
@test "255 keys" { sizes_check 255; }
@test "256 keys" { sizes_check 256; }
@test "257 keys" { sizes_check 257; }
@test "4095 keys" { sizes_check 4095; }
@test "4097 keys" { sizes_check 4097; }
@test "65537 keys" { sizes_check 65537; }

@test "2^20-1 keys" {
  sizes_check $(((1 << 20) - 1)) rand few
  sizes_check $(((1 << 20) - 1)) reverse
}

@test "2^20+3 keys" {
  sizes_check $(((1 << 20) + 3)) rand equal
}

@test "2^20 +-1 keys, every distribution" {
  [ "$RUN_EXPENSIVE_TESTS" = yes ] || skip "expensive"
  sizes_check $(((1 << 20) - 1))
  sizes_check $(((1 << 20) + 3))
}

@test "sweep of random sizes, random and few-distinct keys" {
  local i n f="$BATS_TEST_TMPDIR/in"
  RANDOM=2024
  for i in $(seq 20); do
    # Mostly small sizes, a few up to about 200000.
    if ((i % 4 == 0)); then n=$((RANDOM * 6 + RANDOM % 7)); else n=$((RANDOM % 9000 + 1)); fi
    gen "$f" "$n" "$i" $( ((i % 2)) && echo rand || echo few)
    same_as_ref "$f" "$n keys (seed $i)"
    same_as_ref "$f" "$n keys (seed $i)" -r --local-kernel=merge
  done
}

@test "the output is a permutation of the input, not just ordered" {
  # Guards the reference itself: sorted keys, then their multiset.
  local f="$BATS_TEST_TMPDIR/in"
  gen "$f" 5000 77 few
  "$CLSORT" "${DEV[@]}" "$f" > "$BATS_TEST_TMPDIR/got"
  od -An -v -tu4 -w4 "$f" | sort -n > "$BATS_TEST_TMPDIR/in.txt"
  od -An -v -tu4 -w4 "$BATS_TEST_TMPDIR/got" > "$BATS_TEST_TMPDIR/got.txt"
  cmp "$BATS_TEST_TMPDIR/in.txt" "$BATS_TEST_TMPDIR/got.txt"
}

@test "input on stdin: a regular file and a pipe" {
  local f="$BATS_TEST_TMPDIR/in"
  gen "$f" 70000 5
  expect "$f"
  "$CLSORT" "${DEV[@]}" < "$f" > "$BATS_TEST_TMPDIR/got"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
  cat "$f" | "$CLSORT" "${DEV[@]}" > "$BATS_TEST_TMPDIR/got"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
  expect "$f" -r
  cat "$f" | "$CLSORT" "${DEV[@]}" -r > "$BATS_TEST_TMPDIR/got"
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

@test "several files are sorted together" {
  local d=$BATS_TEST_TMPDIR
  gen "$d/a" 3000 11
  gen "$d/b" 1 12
  gen "$d/c" 0 13
  gen "$d/e" 40000 14 few
  cat "$d/a" "$d/b" "$d/c" "$d/e" > "$d/all"
  expect "$d/all"
  "$CLSORT" "${DEV[@]}" "$d/a" "$d/b" "$d/c" "$d/e" > "$d/got"
  cmp "$d/want" "$d/got"
  expect "$d/all" -r
  "$CLSORT" "${DEV[@]}" -r --local-kernel=merge "$d/a" "$d/b" "$d/c" "$d/e" > "$d/got"
  cmp "$d/want" "$d/got"
}

@test "the same file twice counts twice" {
  local d=$BATS_TEST_TMPDIR
  gen "$d/a" 5000 21
  cat "$d/a" "$d/a" > "$d/all"
  expect "$d/all"
  "$CLSORT" "${DEV[@]}" "$d/a" "$d/a" > "$d/got"
  cmp "$d/want" "$d/got"
}

@test "- reads stdin among files, in its place" {
  local d=$BATS_TEST_TMPDIR
  gen "$d/a" 2000 31
  gen "$d/b" 3000 32
  gen "$d/c" 4000 33
  cat "$d/a" "$d/b" "$d/c" > "$d/all"
  expect "$d/all"
  "$CLSORT" "${DEV[@]}" "$d/a" - "$d/c" < "$d/b" > "$d/got"
  cmp "$d/want" "$d/got"
  cat "$d/b" | "$CLSORT" "${DEV[@]}" - "$d/a" "$d/c" > "$d/got"
  cmp "$d/want" "$d/got"
}

@test "-o writes a file; -o onto its own input sorts it in place" {
  local d=$BATS_TEST_TMPDIR
  gen "$d/f" 50000 41
  expect "$d/f"
  "$CLSORT" "${DEV[@]}" -o "$d/out" "$d/f"
  cmp "$d/want" "$d/out"
  run "$CLSORT" "${DEV[@]}" -o "$d/f" "$d/f"
  assert_success
  assert_output ""
  cmp "$d/want" "$d/f"
}

@test "-o onto one of several inputs" {
  local d=$BATS_TEST_TMPDIR
  gen "$d/a" 3000 51
  gen "$d/b" 3000 52 reverse
  cat "$d/a" "$d/b" > "$d/all"
  expect "$d/all" -r
  "$CLSORT" "${DEV[@]}" -r -o "$d/b" "$d/a" "$d/b"
  cmp "$d/want" "$d/b"
}

@test "the host shortcut sorts small inputs as the device does" {
  local d=$BATS_TEST_TMPDIR n r
  for n in 0 1 2 17 1000 4096; do
    gen "$d/in" "$n" "$n" few
    for r in "" -r; do
      expect "$d/in" $r
      run env -u CLSORT_DEVICE "$CLSORT" -v $r -o "$d/host" "$d/in"
      assert_success
      assert_output --partial "on the host"
      run "$CLSORT" "${DEV[@]}" -v $r -o "$d/dev" "$d/in"
      assert_success
      refute_output --partial "on the host"
      cmp "$d/want" "$d/host"
      cmp "$d/want" "$d/dev"
    done
  done
}

# own_cache: clsort as a user runs it, with no host threshold or device
# set, and a cache of its own for the measured threshold (the kernels'
# binaries linked in, so that nothing is compiled).
own_cache() {
  local from=${XDG_CACHE_HOME:-$HOME/.cache}/clsort f
  C=$BATS_TEST_TMPDIR/cache/clsort
  mkdir -p "$C"
  for f in "$from"/*.bin; do
    [ -e "$f" ] && ln -s "$f" "$C/"
  done
  export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
  unset CLSORT_HOST_THRESHOLD CLSORT_DEVICE
}

# keys N SEED: N keys into $BATS_TEST_TMPDIR/in, refsort's order of them
# into $BATS_TEST_TMPDIR/want.
keys() {
  gen "$BATS_TEST_TMPDIR/in" "$1" "$2"
  expect "$BATS_TEST_TMPDIR/in"
}

# sorts_in [OPTION]...: clsort with the options sorts $BATS_TEST_TMPDIR/in
# as refsort does; what it said is in $stderr.
sorts_in() {
  run --separate-stderr "$CLSORT" "$@" -o "$BATS_TEST_TMPDIR/got" "$BATS_TEST_TMPDIR/in"
  assert_success
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

# rates SLOT: the cached rates line of SLOT.
rates() {
  grep "^$1 " "$C/rates"
}

# stamp: the drivers' place and when it last changed, as clsort stamps
# what it found of auto's device.
stamp() {
  local at=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors} t
  if t=$(stat -c %.9Y "$at" 2> /dev/null); then
    echo "$at $t"
  else
    echo "$at none"
  fi
}

# autodev TYPE NAME: the cache says auto's device is NAME, of TYPE (cpu
# or other), found with the drivers as they are.
autodev() {
  printf 'clsort auto device 2\n%s\n%s %s\n' "$(stamp)" "$1" "$2" > "$C/autodev"
}

# craft LINE...: a rates cache holding the lines, and auto's device the
# one the first line names (not a CPU), or nothing said of it.
craft() {
  local dev
  printf 'clsort rates 4\n' > "$C/rates"
  printf '%s\n' "$@" >> "$C/rates"
  dev=$(cut -d' ' -f8- <<< "$1")
  if [ -n "$dev" ]; then
    autodev other "$dev"
  else
    rm -f "$C/autodev"
  fi
}

@test "auto tries the host, then the device, and keeps their rates per format and width" {
  own_cache
  keys 20000 71
  sorts_in -v
  [[ "$stderr" == *"auto, keys32: host not measured; device start not measured, not measured"* ]]
  [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  [[ "$stderr" == *"rates of keys32 on the host: "*" ns per record (measured up to 20000 records)"* ]]
  assert [ "$(head -n 1 "$C/rates")" = "clsort rates 4" ]
  [[ "$(rates keys32)" =~ ^"keys32 "[0-9.e-]+" 20000 0 0 0 0 "$ ]]
  # The host measured, the device is tried on the next sort big enough.
  sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
  [[ "$stderr" == *"rates of keys32 on "*"[Portable Computing Language]: "* ]]
  [[ "$(rates keys32)" =~ ^"keys32 "[0-9.e-]+" 20000 "[0-9.e-]+" 0 "[0-9.e-]+" 20000 ".*"[Portable Computing Language]"$ ]]
  # Other formats and widths have rates of their own, measured afresh.
  "$REFSORT" gen u64 20000 72 > "$BATS_TEST_TMPDIR/in"
  "$REFSORT" sort -k u64 < "$BATS_TEST_TMPDIR/in" > "$BATS_TEST_TMPDIR/want"
  sorts_in -v -k u64
  [[ "$stderr" == *"auto, keys64: host not measured"* ]]
  [[ "$stderr" == *"on the host"* ]]
  rates keys32
  rates keys64
}

@test "auto keeps no host rate from a sort held to fewer threads" {
  local all
  all=$(getconf _NPROCESSORS_ONLN)
  [ "$all" -ge 2 ] || skip "one CPU online"
  own_cache
  keys 20000 75
  craft "keys32 1e-08 20000 0.25 0 1e-06 1e+06 a test device"
  sorts_in -v --parallel=1
  [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  [[ "$stderr" == *"rates of keys32 on the host: not kept, a sort on 1 of $all threads"* ]]
  assert_equal "$(rates keys32)" "keys32 1e-08 20000 0.25 0 1e-06 1e+06 a test device"
  # On every thread, the same sort refines the host's rate.
  sorts_in -v
  [[ "$stderr" == *"rates of keys32 on the host: "*" ns per record"* ]]
  [[ "$(rates keys32)" != "keys32 1e-08 20000 "* ]]
}

# Busy loops started by a test, stopped after it whatever its end.
teardown() {
  [ -z "${HOGS:-}" ] || kill $HOGS 2> /dev/null || true
}

@test "auto keeps no rate from a sort that shared the CPUs with other work" {
  local all i
  unset CLSORT_OTHERS_MAX
  all=$(getconf _NPROCESSORS_ONLN)
  own_cache
  keys 16777216 76
  craft "keys32 1e-08 20000 0.25 0 1e-06 1e+06 a test device"
  # Four busy loops a CPU: other work takes about four fifths of them,
  # and the sort, five times as long, lasts long enough to tell on any
  # count of CPUs.
  HOGS=
  for ((i = 0; i < 4 * all; i++)); do
    (while :; do :; done) 3>&- &
    HOGS="$HOGS $!"
  done
  sorts_in -v
  kill $HOGS
  HOGS=
  [[ "$stderr" == *"16777216 records: sorting on the host"* ]]
  [[ "$stderr" == *"rates of keys32 on the host: not kept, other work took "*"% of the CPUs"* ]]
  assert_equal "$(rates keys32)" "keys32 1e-08 20000 0.25 0 1e-06 1e+06 a test device"
}

@test "auto never takes the path measured slower, for each format and width" {
  own_cache
  keys 20000 73
  # The device: 1 ms to start, 1 ns a record; the host 1 us a record.
  craft "keys32 1e-06 1e+06 0.001 0 1e-09 1e+06 a test device"
  sorts_in -v
  [[ "$stderr" == *"auto, keys32: host 1e+03 ns per record"*"; device a test device: 0.001 s to start, 1 ns per record"* ]]
  [[ "$stderr" != *"on the host"* ]]
  # The host's rate is kept, the device's refined and named.
  [[ "$(rates keys32)" == "keys32 1e-06 1e+06 "* ]]
  [[ "$(rates keys32)" != *"a test device"* ]]
  # The other way round, and kv lines, whose slot says the device.
  craft "keys32 1e-09 1e+06 0.25 0 1e-06 1e+06 a test device" \
    "kv64 1e-06 1e+06 0.001 0 1e-09 1e+06 a test device"
  sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  [[ "$(rates keys32)" == *" 0.25 0 1e-06 1e+06 a test device" ]]
  "$REFSORT" gen-kv 20000 74 > "$BATS_TEST_TMPDIR/in"
  "$REFSORT" sort -f kv < "$BATS_TEST_TMPDIR/in" > "$BATS_TEST_TMPDIR/want"
  sorts_in -v -f kv
  [[ "$stderr" == *"auto, kv64: "* ]]
  [[ "$stderr" != *"on the host"* ]]
  # Between the crossover's sides: the host to 0.25 s / 999 ns = 250250
  # records, the device above.
  craft "keys32 1e-06 1e+06 0.25 0 1e-09 1e+06 a test device"
  keys 250000 75
  sorts_in -v
  [[ "$stderr" == *"250000 records: sorting on the host"* ]]
  craft "keys32 1e-06 1e+06 0.25 0 1e-09 1e+06 a test device"
  keys 250500 76
  sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
}

@test "auto opens the device for a stream judged by twice what has come, and its sort takes it" {
  own_cache
  keys 3000000 91
  # The host 20 us a record, the device 1 ns and 100 s to start: a sort of
  # the 3000000 keys is the host's (60 s against 100), one of twice the
  # 2650000 come by 10.1 MiB the device's (106 s against 100).
  craft "keys32 2e-05 1e+07 100 0 1e-09 1e+07 a test device"
  sorts_in -vv
  [[ "$stderr" == *"3000000 records: sorting on the host"* ]] || fail "$stderr"
  craft "keys32 2e-05 1e+07 100 0 1e-09 1e+07 a test device"
  run --separate-stderr bash -c 'cat "$1" | "$CLSORT" -vv > "$2"' _ \
    "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/got"
  assert_success
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
  [[ "$stderr" == *"device opened in "*" s while the input was read"* ]] || fail "$stderr"
  [[ "$stderr" == *"auto: the device opened while the stream arrived, its start spent"* ]] ||
    fail "$stderr"
  [[ "$stderr" == *"3000000 records: sorting on "*" ["* ]] || fail "$stderr"
  # A device opened ahead that failed to open: the host, as the sort of
  # what came says.
  craft "keys32 2e-05 1e+07 100 0 1e-09 1e+07 a test device"
  mkdir "$BATS_TEST_TMPDIR/none"
  run --separate-stderr bash -c 'cat "$1" | OCL_ICD_VENDORS="$3" "$CLSORT" -vv > "$2"' _ \
    "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/got" "$BATS_TEST_TMPDIR/none"
  assert_success
  cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
  [[ "$stderr" == *"clsort: warning: no OpenCL platform found"*"; sorting on the host"* ]] ||
    fail "$stderr"
  [ "$(grep -c 'no OpenCL platform found' <<< "$stderr")" -eq 1 ] || fail "$stderr"
  [[ "$stderr" == *"3000000 records: sorting on the host"* ]] || fail "$stderr"
}

@test "auto's device start: none from a stream that built its kernels, one beside a stream's read tried again alone" {
  local dev
  own_cache
  keys 3000000 92
  # The host measured slow, the device quick, its start not measured:
  # the stream opens it.
  craft "keys32 2e-05 1e+07 0 0 1e-09 1e+07 a test device"
  # First with no kernels in any cache, the device opened ahead compiling
  # them; then with them cached (PoCL keeps its own).  The radix sort, as
  # on a GPU, whose sort takes the program built ahead without waiting.
  rm -f "$C"/*.bin
  export POCL_CACHE_DIR=$BATS_TEST_TMPDIR/pocl
  for pass in compiled cached; do
    run --separate-stderr bash -c '{ head -c $((9 << 20)) "$1"; sleep 2; tail -c +$(((9 << 20) + 1)) "$1"; } |
      "$CLSORT" -vv --device-sort=radix > "$2"' _ "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/got"
    assert_success
    cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
    [[ "$stderr" == *"device opened in "*" s while the input was read"* ]] || fail "$stderr"
    [[ "$stderr" == *"program "@(built|loaded)" while the input was read"* ]] || fail "$stderr"
    if [ $pass = compiled ]; then
      # Its rate measured, its start not: the build, and the driver's
      # first use with it, are not the next sort's.
      [[ "$(rates keys32)" =~ ^"keys32 2e-05 1e+07 0 0 "[0-9.e-]+" 3e+06 " ]] || fail "$(rates keys32)"
    else
      # Its start measured, beside the stream's read.
      [[ "$(rates keys32)" =~ ^"keys32 2e-05 1e+07 "[0-9.e-]*[1-9][0-9.e-]*" 1 "[0-9.e-]+" 3e+06 " ]] ||
        fail "$(rates keys32)"
    fi
  done
  [[ "$stderr" == *"s to start (beside a stream's read), "* ]] || fail "$stderr"
  dev=$(rates keys32 | cut -d' ' -f8-)
  # 20000 keys: the host 0.02 s, the device 0.018 s and 3 ms to start.
  # That start measured alone: the host.  (The radix sort, whose program
  # PoCL has cached: a sort that compiles leaves the start unmeasured.)
  keys 20000 93
  craft "keys32 1e-06 1e+06 0.003 0 9e-07 1e+06 $dev"
  sorts_in -v --device-sort=radix
  [[ "$stderr" == *"20000 records: sorting on the host"* ]] || fail "$stderr"
  # Measured only beside a stream's read: the device, whose start, measured
  # alone, then replaces it.
  craft "keys32 1e-06 1e+06 0.003 1 9e-07 1e+06 $dev"
  sorts_in -v --device-sort=radix
  [[ "$stderr" == *"device $dev: 0.003 s to start (beside a stream's read), "* ]] || fail "$stderr"
  [[ "$stderr" != *"on the host"* ]] || fail "$stderr"
  [[ "$(rates keys32)" =~ ^"keys32 1e-06 1e+06 "[0-9.e-]*[1-9][0-9.e-]*" 0 " ]] || fail "$(rates keys32)"
  [[ "$(rates keys32)" != "keys32 1e-06 1e+06 0.003 "* ]] || fail "$(rates keys32)"
}

@test "auto tries the host past 2^24 records where the device sorts slower than 40 ns a record" {
  own_cache
  keys 16777259 81
  # The host not measured, a device of 50 ns a record (PoCL on 2 cores):
  # the host is tried on this sort too, and measured.
  craft "keys32 0 0 0.05 0 5e-08 1.6e+07 a test device"
  sorts_in -v
  [[ "$stderr" == *"16777259 records: sorting on the host"* ]] || fail "$stderr"
  [[ "$(rates keys32)" =~ ^"keys32 "[0-9.e-]+" 1.67773e+07 0.05 0 5e-08 1.6e+07 a test device"$ ]] ||
    fail "$(rates keys32)"
}

@test "auto's device a CPU: the host at any size until measured, the device on small inputs only" {
  own_cache
  # Nothing measured, 16777259 keys (past 2^24): the host, not PoCL; the
  # device was looked at (not opened) and the cache says it is a CPU.
  keys 16777259 82
  sorts_in -vv
  [[ "$stderr" == *"16777259 records: sorting on the host"* ]] || fail "$stderr"
  [[ "$stderr" == *"auto: its device is "*" [Portable Computing Language], a CPU"* ]] || fail "$stderr"
  [[ "$(cat "$C/autodev")" =~ ^"clsort auto device 2"$'\n'"$(stamp)"$'\n'"cpu "[^$'\n']*" [Portable Computing Language]"$ ]] ||
    fail "$(cat "$C/autodev")"
  [[ "$(rates keys32)" =~ ^"keys32 "[0-9.e-]+" 1.67773e+07 0 0 0 0 "$ ]] || fail "$(rates keys32)"
  # The host measured, the device not: past 2^20 records the host...
  keys 1048577 83
  sorts_in -v
  [[ "$stderr" == *"1048577 records: sorting on the host"* ]] || fail "$stderr"
  # ...up to it the device, measured.
  keys 20000 84
  sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on "*"[Portable Computing Language]"* ]] || fail "$stderr"
  [[ "$(rates keys32)" == *" 20000 "*"[Portable Computing Language]" ]] || fail "$(rates keys32)"
  # Measured slower per record than the host: the host past 2^20 records
  # whatever the sizes, where another device would be tried again.
  dev=$(sed -n 's/^cpu //p' "$C/autodev")
  craft "keys32 4e-09 1e+06 0 0 2e-05 20000 $dev"
  autodev cpu "$dev"
  keys 4194304 85
  sorts_in -v
  [[ "$stderr" == *"4194304 records: sorting on the host"* ]] || fail "$stderr"
  # What the cache says of a device that is not the one that sorts is
  # forgotten, and the device looked at again where it matters.
  craft "keys32 4e-09 1e+06 0 0 0 0 "
  autodev cpu "another device"
  keys 20000 86
  sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on "*"[Portable Computing Language]"* ]] || fail "$stderr"
  [ ! -e "$C/autodev" ]
  craft "keys32 4e-09 1e+06 0 0 0 0 "
  keys 1048577 87
  sorts_in -v
  [[ "$stderr" == *"1048577 records: sorting on the host"* ]] || fail "$stderr"
  grep -q "^cpu .*\[Portable Computing Language\]$" "$C/autodev"
}

@test "auto looks at its device again once the drivers change, and sets aside another device's rates" {
  own_cache
  keys 20000 89
  # A device measured slower per record than the host: the host.
  craft "keys32 4e-09 1e+06 0.001 0 2e-05 1e+06 a test device"
  sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on the host"* ]] || fail "$stderr"
  # A driver registered since (here: the loader pointed at a copy of the
  # drivers' directory): auto's device is looked at again, and the rates
  # of the device measured before are not its own.
  mkdir "$BATS_TEST_TMPDIR/vendors"
  cp /etc/OpenCL/vendors/*.icd "$BATS_TEST_TMPDIR/vendors/"
  export OCL_ICD_VENDORS=$BATS_TEST_TMPDIR/vendors
  sorts_in -vv
  [[ "$stderr" == *"auto: its device is "*"[Portable Computing Language], a CPU"* ]] || fail "$stderr"
  [[ "$stderr" == *"auto: the device rates are of a test device, not of its device: not taken"* ]] ||
    fail "$stderr"
  [[ "$stderr" == *"20000 records: sorting on "*"[Portable Computing Language]"* ]] || fail "$stderr"
  [[ "$(rates keys32)" == "keys32 4e-09 1e+06 "*"[Portable Computing Language]" ]] || fail "$(rates keys32)"
  [[ "$(sed -n 2p "$C/autodev")" == "$BATS_TEST_TMPDIR/vendors "* ]] || fail "$(cat "$C/autodev")"
}

@test "auto with no OpenCL platform: the host, with a warning where the device would be tried" {
  own_cache
  mkdir "$BATS_TEST_TMPDIR/no-vendors"
  export OCL_ICD_VENDORS=$BATS_TEST_TMPDIR/no-vendors
  keys 20000 88
  # Nothing measured: the host is tried, nothing said.
  sorts_in
  [ -z "$stderr" ] || fail "$stderr"
  # The host measured: the device would be tried, and there is none.
  sorts_in -v
  [[ "$stderr" == *"clsort: warning: no OpenCL platform found: install"*"; sorting on the host"* ]] ||
    fail "$stderr"
  [[ "$stderr" == *"20000 records: sorting on the host"* ]] || fail "$stderr"
  [ "$(grep -c warning <<< "$stderr")" -eq 1 ] || fail "$stderr"
  [ ! -e "$C/autodev" ]
}

@test "auto measures the device's start on a sort that did not build its kernels, and keeps the least" {
  local dev
  own_cache
  keys 20000 79
  # The kernels in the cache: the sorts below load them.
  sorts_in -d cpu
  # The device's rate measured, its start not (a sort that built the
  # kernels leaves it out), slower per record than the host on sorts of
  # about this size: no start makes it quicker, the host.
  craft "keys32 1e-06 1e+06 0 0 1.1e-06 1e+06 a test device"
  sorts_in -v
  [[ "$stderr" == *"device a test device: start not measured, 1.1e+03 ns per record"* ]]
  [[ "$stderr" == *"20000 records: sorting on the host"* ]] || fail "$stderr"
  # Quicker per record: tried on the next sort big enough to time.
  craft "keys32 1e-06 1e+06 0 0 9e-07 1e+06 a test device"
  sorts_in -v
  [[ "$stderr" == *"device a test device: start not measured, 900 ns per record"* ]]
  [[ "$stderr" != *"on the host"* ]]
  [[ "$(rates keys32)" =~ ^"keys32 1e-06 1e+06 "[0-9.e-]*[1-9][0-9.e-]*" " ]]
  dev=$(rates keys32 | cut -d' ' -f8-)
  # A start less than this sort's is kept.
  craft "keys32 1e-06 1e+06 1e-06 0 1e-09 1e+06 $dev"
  sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
  [[ "$(rates keys32)" == "keys32 1e-06 1e+06 1e-06 0 "* ]]
}

@test "auto measures again a side measured only on much smaller sorts" {
  own_cache
  keys 20000 80
  # The host 20 ms, the device 10 ms + 19.8 ms by its rate from sorts of
  # 1000 records: measured again on these 20000.
  craft "keys32 1e-06 1e+06 0.01 0 9.9e-07 1000 a test device"
  sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
  # The same rate from sorts as large as this one: the host.
  craft "keys32 1e-06 1e+06 0.01 0 9.9e-07 20000 a test device"
  sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  # A device slower per record is measured again only where the host
  # would take longer than its start and all the work it was measured
  # on, on THR_EXPLORE (4) times as many records: the host's 20 ms
  # against 1 ms + 4 us x 5000, then against 1 ms + 2 us x 1000.
  craft "keys32 1e-06 1e+06 0.001 0 4e-06 5000 a test device"
  sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  craft "keys32 1e-06 1e+06 0.001 0 2e-06 1000 a test device"
  sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
  # A host measured on sorts of 1000 records: measured again on these.
  craft "keys32 1e-06 1000 0.001 0 1e-09 1e+06 a test device"
  sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  [[ "$(rates keys32)" =~ ^"keys32 "[0-9.e-]+" 20000 0.001 0 1e-09 1e+06 a test device"$ ]]
  craft "keys32 1e-06 20000 0.001 0 1e-09 1e+06 a test device"
  sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
}

@test "a slot with no device measured names none, whatever the next slot's line says" {
  own_cache
  keys 20000 94
  # The host measured, no device (a sort held there, or a machine without
  # one), then another slot's line.
  craft "keys32 1e-08 20000 0 0 0 0 " "kv64 1e-08 20000 0.25 0 1e-06 1e+06 a test device"
  sorts_in -vv
  [[ "$stderr" == *"auto, keys32: host 10 ns per record (measured up to 20000 records); device start not measured, not measured"* ]] ||
    fail "$stderr"
  [[ "$stderr" != *"not of its device"* ]] || fail "$stderr"
}

@test "an unsound rates entry is ignored, and the next sort replaces it" {
  local bad
  own_cache
  keys 20000 77
  # Version 1 rates held the ordering of ties: gone with the version.
  for bad in 'garbage\n' 'clsort rates 4\nkeys32 1e-09 1e+06 0.25\n' \
    'clsort rates 4\nkeys32 -1 1e+06 0.001 0 1e-09 1e+06 x\n' \
    'clsort rates 4\nkeys32 1e-09 1e+06 0.001 0 1e-09 1e+06 x' \
    'clsort rates 4\nkeys32 5 1e+06 0.001 0 1e-09 1e+06 x\n' \
    'clsort rates 4\nkeys32 1e-09 1e+06 0.001 2 1e-09 1e+06 x\n' \
    'clsort rates 2\nkeys32 1e-09 1e+06 0.001 1e-09 1e+06 x\n' \
    'clsort rates 1\nkeys32 1e-09 1e+06 0.001 1e-06 1e+06 x\n' ''; do
    printf "$bad" > "$C/rates"
    sorts_in -vv
    [[ "$stderr" == *"auto, keys32: host not measured; device start not measured, not measured"* ]] ||
      fail "entry '$bad' was used"
    [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  done
  assert [ "$(head -n 1 "$C/rates")" = "clsort rates 4" ]
  [[ "$(rates keys32)" =~ ^"keys32 "[0-9.e-]+" 20000 0 0 0 0 "$ ]]
}

@test "a threshold set, or a device other than auto, is not measured" {
  own_cache
  keys 20000 78
  sorts_in --host-threshold=10
  CLSORT_HOST_THRESHOLD=10 sorts_in
  sorts_in -d cpu
  sorts_in -d host
  assert [ ! -e "$C/rates" ]
  sorts_in -d auto
  assert [ -e "$C/rates" ]
}

@test "CLSORT_NO_CACHE: nothing measured, whatever the cache holds" {
  own_cache
  craft "keys32 1e-06 1e+06 0.001 0 1e-09 1e+06 a test device"
  keys 20000 80
  CLSORT_NO_CACHE=1 sorts_in -v
  [[ "$stderr" == *"20000 records: sorting on the host"* ]]
  grep -q "a test device" "$C/rates"
  sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
}

@test "CLSORT_HOST_THRESHOLD sets the threshold; --host-threshold wins; a bad one is ignored" {
  local bad
  own_cache
  craft "keys32 1e-09 1e+06 0.25 0 1e-06 1e+06 a test device"
  keys 300 79
  CLSORT_HOST_THRESHOLD=100 sorts_in -v
  [[ "$stderr" != *"on the host"* ]]
  CLSORT_HOST_THRESHOLD=100 sorts_in -v --host-threshold=1000
  [[ "$stderr" == *"300 records: sorting on the host"* ]]
  for bad in -5 many 12x; do
    CLSORT_HOST_THRESHOLD=$bad sorts_in -v
    [[ "$stderr" == *"warning: ignoring CLSORT_HOST_THRESHOLD='$bad': not a record count"* ]]
    [[ "$stderr" == *"300 records: sorting on the host"* ]]
  done
}

@test "global bitonic passes: fused substage counts, pair tails, odd tile counts" {
  # A CPU device joins tiles by merge-path passes: force the bitonic ones.
  # In tiles of 64, a stage whose global substages come to one more than a
  # multiple of the fused count ends in pair tails (the first stage with
  # the flip step); 129, 700 and 4033 keys leave an odd tile count.
  export CLSORT_GLOBAL=bitonic CLSORT_WG=16 CLSORT_EPT=4
  local f=$BATS_TEST_TMPDIR/in n fuse
  for fuse in 2 4 8 64; do
    for n in 129 700 4033 70001; do
      gen "$f" "$n" "$((n + fuse))"
      CLSORT_FUSE=$fuse same_as_ref "$f" "$n keys, $fuse words per work-item"
      CLSORT_FUSE=$fuse same_as_ref "$f" "$n keys, $fuse words per work-item" -r
    done
  done
}

@test "--host-threshold moves the shortcut" {
  local d=$BATS_TEST_TMPDIR
  gen "$d/in" 20000 61
  expect "$d/in"
  run env -u CLSORT_DEVICE "$CLSORT" -v --host-threshold=30000 -o "$d/host" "$d/in"
  assert_success
  assert_output --partial "on the host"
  cmp "$d/want" "$d/host"
  run env -u CLSORT_DEVICE "$CLSORT" -v --host-threshold=10 -o "$d/dev" "$d/in"
  assert_success
  refute_output --partial "on the host"
  cmp "$d/want" "$d/dev"
}
