#!/usr/bin/env bats
# The command line: help and version, option values and the usage errors
# they give, conflicting options, device selection (-L, -d,
# CLSORT_DEVICE), -v reports and the program binary cache.
load helpers
bats_require_minimum_version 1.5.0

# u32 keys of FILE, as sorted decimal lines: the reference order.
ref_u32() {
  od -An -v -tu4 -w4 "$1" | sort -n
}

# Decimal lines of the u32 keys on stdin.
dec_u32() {
  od -An -v -tu4 -w4
}

# usage_error OPTION... : exit 2, a "clsort: " line naming the problem and
# the hint to --help, nothing on stdout.
usage_error() {
  run --separate-stderr "$CLSORT" "$@" < /dev/null
  [ "$status" -eq 2 ] || fail "clsort $* exited with $status, not 2"
  [ -z "$output" ] || fail "clsort $* wrote to stdout: $output"
  [[ "${stderr_lines[0]}" == "clsort: "* ]] || fail "first line of stderr: ${stderr_lines[0]}"
  [[ "$stderr" == *"Try 'clsort --help' for more information."* ]] ||
    fail "no --help hint: $stderr"
}

setup() {
  keys="$BATS_TEST_TMPDIR/keys.bin"
  head -c 40000 /dev/urandom > "$keys"
}

# --- help and version ------------------------------------------------------

@test "--help prints the usage on stdout and exits 0" {
  run --separate-stderr "$CLSORT" --help
  assert_success
  [ -z "$stderr" ]
  [[ "${lines[0]}" == "clsort sorts binary keys, binary records and text lines on an OpenCL device"* ]]
  [[ "${lines[1]}" == "Usage: clsort [OPTION]... [FILE]..." ]]
  [[ "${lines[-1]}" == "The manual: man clsort"* ]]
  for opt in --key-type --format --record-size --key-offset --field-separator \
    --descending --stable --check --skip-bad --output --device --list-devices \
    --buffer-size --memory --temporary-directory --local-kernel --device-sort --parallel \
    --verbose --version; do
    [[ "$output" == *"$opt"* ]] || fail "--help does not mention $opt"
  done
}

@test "--help has one entry for help: no -? and no --usage" {
  run --separate-stderr "$CLSORT" --help
  [ "$(grep -c -- '--help' <<<"$output")" -eq 1 ]
  [[ "$output" != *"--usage"* && "$output" != *"-?"* ]]
  for opt in '-?' --usage; do
    run --separate-stderr "$CLSORT" "$opt"
    [ "$status" -eq 2 ]
    [ "${stderr_lines[0]}" = "clsort: $opt: unknown option" ]
  done
}

# long_options: the long options named in standard input, one a line.
long_options() {
  sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z-]*' | sort -u
}

@test "every long option of --help is in the manual and the completion, and back" {
  local top=${TESTS_DIR:-$BATS_TEST_DIRNAME}/..
  local man=$top/man/clsort.1 comp=$top/contrib/completion/clsort.bash
  "$CLSORT" --help | long_options > "$BATS_TEST_TMPDIR/help"
  # The manual also names an option of ./configure's.
  long_options < "$man" | grep -vx -e --with-mpi > "$BATS_TEST_TMPDIR/man"
  sed -n "/local opts='/,/'\$/p" "$comp" | long_options > "$BATS_TEST_TMPDIR/comp"
  [ "$(wc -l < "$BATS_TEST_TMPDIR/help")" -ge 20 ] || fail "too few options in --help"
  diff "$BATS_TEST_TMPDIR/help" "$BATS_TEST_TMPDIR/man" || fail "--help and the manual differ (<: --help only)"
  diff "$BATS_TEST_TMPDIR/help" "$BATS_TEST_TMPDIR/comp" ||
    fail "--help and the completion differ (<: --help only)"
}

@test "-h is sort's --human-numeric-sort, not the help" {
  run --separate-stderr bash -c 'printf "2K\n1M\n3\n" | "$CLSORT" -h'
  assert_success
  [ -z "$stderr" ]
  [ "$output" = "$(printf '3\n2K\n1M')" ]
}

@test "--help ignores the other options and reads no input" {
  run --separate-stderr "$CLSORT" -k f64 --help /nonexistent/file
  assert_success
  [[ "${lines[1]}" == Usage:* ]]
}

@test "--version prints the name and version; -V is sort's --version-sort" {
  run --separate-stderr "$CLSORT" --version
  assert_success
  [ -z "$stderr" ]
  [[ "$output" =~ ^clsort\ [0-9]+\.[0-9]+(\.[0-9]+)?[^$'\n']*$ ]] || fail "version: $output"
  run --separate-stderr bash -c 'printf "v1.10\nv1.9\n" | "$CLSORT" -V'
  assert_success
  [ "$output" = "$(printf 'v1.9\nv1.10')" ]
}

@test "--version to a full device fails with status 2" {
  [ -w /dev/full ] || skip "no /dev/full"
  run --separate-stderr bash -c '"$CLSORT" --version > /dev/full'
  [ "$status" -eq 2 ] || fail "--version > /dev/full: status $status"
  [[ "$stderr" == "clsort: write error: No space left on device" ]] || fail "$stderr"
}

@test "--help to a full device fails with status 2" {
  [ -w /dev/full ] || skip "no /dev/full"
  run --separate-stderr bash -c '"$CLSORT" --help > /dev/full'
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: write error"* ]]
}

# --- bad options -----------------------------------------------------------

@test "an unknown option is a usage error" {
  usage_error --bogus
  [[ "$stderr" == *"--bogus"* ]]
  usage_error -X
}

@test "a missing option argument is a usage error" {
  usage_error -k
  usage_error --output
}

@test "-k: an unknown key type is a usage error that lists the types" {
  usage_error -k u16
  [[ "${stderr_lines[0]}" == "clsort: invalid key type 'u16': use u32, i32, f32, u64, i64, f64, str or bytes:N (N from 1 to 64)" ]]
  usage_error -k U32
  usage_error --key-type=
}

@test "-f: an unknown format is a usage error" {
  usage_error -f csv
  [[ "$stderr" == *"invalid format 'csv'"* ]]
  usage_error --format=KV
}

@test "-t: the separator must be one byte" {
  usage_error -f kv -t ab
  [[ "$stderr" == *"one byte"*"'ab'"* ]]
  usage_error -f kv -t '§'
  [[ "$stderr" == *"must be one byte, not '§' (a character of several bytes"* ]]
  usage_error -f kv -t ''
  usage_error -f kv -t $'\n'
}

@test "the manual's -t example renders as it is typed, and runs" {
  command -v man > /dev/null || skip "man is not installed"
  run -0 env MANWIDTH=160 man -l "$TESTS_DIR/../man/clsort.1"
  [[ "$output" != *"'\\\\t'"* ]] || fail "the manual shows '\\\\t'"
  local example
  example=$(grep -m1 "^ *printf '3.tc.n" <<< "$output" | sed 's/^ *//; s/clsort /"$CLSORT" /')
  [ -n "$example" ] || fail "no -t example in the manual"
  run -0 bash -c "$example"
  [ "$output" = $'-1\ta\n2\tb\n3\tc' ]
}

@test "-t accepts one character and \\t" {
  printf '2\tb\n1\ta\n' > "$BATS_TEST_TMPDIR/in"
  run "$CLSORT" -f kv -t '\t' "$BATS_TEST_TMPDIR/in"
  assert_success
  [ "$output" = $'1\ta\n2\tb' ]
  printf '2=b\n1=a\n' > "$BATS_TEST_TMPDIR/in"
  run "$CLSORT" -f kv -t = "$BATS_TEST_TMPDIR/in"
  assert_success
  [ "$output" = $'1=a\n2=b' ]
}

@test "-S: bad sizes are usage errors" {
  for s in 0 -1 4X 4KK abc '' 0% 101% 50%%; do
    usage_error -S "$s"
    [[ "$stderr" == *"invalid buffer size '$s'"* ]] || fail "-S '$s': $stderr"
  done
}

@test "-S: 'nan' is not a size" {
  usage_error -S nan
}

@test "-S: sizes with suffixes and percentages are accepted" {
  for s in 4096 4K 4KiB 1M 1m 1.5M 1G 50% 0.5%; do
    "$CLSORT" "${DEV[@]}" -S "$s" "$keys" | dec_u32 > "$BATS_TEST_TMPDIR/got" ||
      fail "-S $s failed"
    ref_u32 "$keys" | cmp - "$BATS_TEST_TMPDIR/got" || fail "-S $s: wrong order"
  done
}

@test "--memory: bad sizes and percentages are usage errors" {
  for s in 0 abc 12Q 50%; do
    usage_error --memory="$s"
    [[ "$stderr" == *"invalid memory size '$s'"* ]] || fail "--memory='$s': $stderr"
  done
}

@test "-R: zero, negative and non-numeric record sizes are usage errors" {
  usage_error -R 0
  [[ "$stderr" == *"invalid record size"* ]]
  usage_error -R -5
  usage_error -R abc
  usage_error --record-size=8x
}

@test "-R -1 is a usage error" {
  usage_error -R -1
}

@test "--key-offset: a negative or non-numeric offset is a usage error" {
  usage_error -R 8 --key-offset=-2
  [[ "$stderr" == *"invalid key offset"* ]]
  usage_error -R 8 --key-offset=x
}

@test "--key-offset=-1 is a usage error" {
  usage_error -R 8 --key-offset=-1
}

@test "--key-offset past the end of the record is an error" {
  run --separate-stderr "$CLSORT" -R 8 --key-offset=6 "$keys"
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: a u32 key at offset 6 does not fit in 8-byte records" ]]
  run --separate-stderr "$CLSORT" -k u64 -R 4 "$keys"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"does not fit in 4-byte records"* ]]
}

@test "--local-kernel: only bitonic and merge" {
  usage_error --local-kernel=quick
  [[ "$stderr" == *"invalid local kernel 'quick': use bitonic or merge"* ]]
  usage_error --local-kernel=Merge
  usage_error --local-kernel=
}

@test "--device-sort: only auto, radix and bitonic" {
  usage_error --device-sort=quick
  [[ "$stderr" == *"invalid device sort 'quick': use auto, radix or bitonic"* ]]
  usage_error --device-sort=Radix
  usage_error --device-sort=
}

@test "--parallel: 1 to 256 threads" {
  usage_error --parallel=0
  [[ "$stderr" == *"invalid thread count"*"(1 to 256)"* ]]
  usage_error --parallel=257
  usage_error --parallel=-3
  usage_error --parallel=x
  for n in 1 256; do
    "$CLSORT" "${DEV[@]}" --parallel=$n "$keys" | dec_u32 > "$BATS_TEST_TMPDIR/got"
    ref_u32 "$keys" | cmp - "$BATS_TEST_TMPDIR/got" || fail "--parallel=$n: wrong order"
  done
}

@test "invalid values are quoted in the message" {
  usage_error --parallel=0
  [[ "$stderr" == *"'0'"* ]]
  usage_error -R 0
  [[ "$stderr" == *"'0'"* ]]
}

@test "--host-threshold: a negative count is a usage error" {
  usage_error --host-threshold=-1
  usage_error --host-threshold=many
}

@test "--check: only diagnose-first, quiet and silent" {
  usage_error --check=loud
  [[ "$stderr" == *"invalid --check argument 'loud'"* ]]
  usage_error --check=
  for m in diagnose-first quiet silent; do
    run "$CLSORT" --check=$m < /dev/null
    [ "$status" -eq 0 ] || fail "--check=$m on empty input: status $status"
  done
}

@test "--check WORD: the word is an input, even one named like a mode" {
  cd "$BATS_TEST_TMPDIR"
  printf '\x02\0\0\0\x01\0\0\0' > quiet
  printf '\x01\0\0\0\x02\0\0\0' > sorted
  # Standard input is sorted: a check of it would pass.
  run --separate-stderr "$CLSORT" --check quiet < sorted
  [ "$status" -eq 1 ] || fail "--check quiet read standard input, not the file quiet: status $status"
  [[ "$stderr" == *"quiet"* ]] || fail "the report names no file: $stderr"
  run --separate-stderr "$CLSORT" --check sorted quiet < sorted
  [ "$status" -eq 1 ]
  run -0 "$CLSORT" --check=quiet sorted
  run -1 "$CLSORT" --check=quiet quiet
  [ -z "$output" ]
}

@test "-d: a malformed P:D spec is a usage error" {
  usage_error -d 1:x
  [[ "$stderr" == *"invalid device '1:x'"* ]]
  usage_error -d 1:2:3
  usage_error -d ''
}

# --- conflicting options ---------------------------------------------------

@test "-c and -C cannot be used with -o" {
  usage_error -c -o "$BATS_TEST_TMPDIR/out" "$keys"
  [[ "$stderr" == *"--check and --output cannot be used together"* ]]
  usage_error -C -o "$BATS_TEST_TMPDIR/out" "$keys"
  [ ! -e "$BATS_TEST_TMPDIR/out" ]
}

@test "--key-offset needs --record-size" {
  usage_error --key-offset=4 "$keys"
  [[ "$stderr" == *"--key-offset needs --record-size"* ]]
}

@test "-R and --key-offset do not go with -f kv" {
  usage_error -R 8 -f kv "$keys"
  [[ "$stderr" == *"apply to the bin format only"* ]]
  usage_error -f kv --key-offset=2 "$keys"
  [[ "$stderr" == *"apply to the bin format only"* ]]
}

@test "--skip-bad and -t do not go with the bin format" {
  usage_error --skip-bad "$keys"
  [[ "$stderr" == *"apply to the kv format only"* ]]
  usage_error -f bin -t , "$keys"
  [[ "$stderr" == *"apply to the kv format only"* ]]
}

@test "a usage error reads no input and writes no output file" {
  usage_error -k bogus -o "$BATS_TEST_TMPDIR/out" "$keys"
  [ ! -e "$BATS_TEST_TMPDIR/out" ]
  [ -z "$(ls -A "$BATS_TEST_TMPDIR" | grep '^\.clsort')" ]
}

# --- devices ---------------------------------------------------------------

@test "-L lists the CPU device with its index and marks the auto choice" {
  run --separate-stderr "$CLSORT" -L
  assert_success
  [ -z "$stderr" ]
  [[ "$output" =~ (^|$'\n')0:0\ \ [^$'\n']*CPU ]] || fail "no 0:0 CPU device: $output"
  [ "$(grep -c '  (auto)$' <<< "$output")" -eq 1 ] || fail "not one (auto) mark: $output"
  [[ "$output" == *"MiB global memory"* ]]
  run "$CLSORT" --list-devices
  assert_success
}

@test "-L with no OpenCL platform fails with a hint" {
  mkdir "$BATS_TEST_TMPDIR/vendors"
  OCL_ICD_VENDORS="$BATS_TEST_TMPDIR/vendors" run --separate-stderr "$CLSORT" -L
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: no OpenCL platform found: install"*"/etc/OpenCL/vendors"* ]]
}

# select SPEC: -v names the device 0:0 and the sort is right.
select_ok() {
  run --separate-stderr "$CLSORT" -v -d "$1" "$keys"
  [ "$status" -eq 0 ] || fail "-d $1: status $status: $stderr"
  [[ "$stderr" == *"clsort: device 0:0 "* ]] || fail "-d $1: device not reported: $stderr"
  "$CLSORT" -d "$1" "$keys" | dec_u32 | cmp - <(ref_u32 "$keys") || fail "-d $1: wrong order"
}

@test "-d cpu, -d CPU and -d auto pick the CPU device" {
  select_ok cpu
  select_ok CPU
  select_ok auto
}

@test "-d 0:0 picks the first device" {
  select_ok 0:0
}

@test "-d matches part of the device or platform name, case-insensitively" {
  name=$("$CLSORT" -L | sed -n 's/^0:0  \(.*\)  \[.*/\1/p')
  [ -n "$name" ] || fail "no name in -L"
  part=${name:1:5}
  select_ok "$part"
  select_ok "${part^^}"
  select_ok "${part,,}"
  select_ok "portable computing"
}

@test "-d with no matching device fails and lists what was found" {
  run --separate-stderr "$CLSORT" -d no-such-device-xyz "$keys"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [[ "$stderr" == "clsort: no OpenCL device matches 'no-such-device-xyz'; found: 0:0 "*"(CPU)"* ]] ||
    fail "message: $stderr"
  run --separate-stderr "$CLSORT" -d 7:0 "$keys"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"no OpenCL device matches '7:0'; found: 0:0"* ]]
  run --separate-stderr "$CLSORT" -d 0:9 "$keys"
  [ "$status" -eq 2 ]
}

@test "-d gpu fails on a machine whose only device is a CPU" {
  "$CLSORT" -L | grep -q ' GPU, ' && skip "a GPU is present"
  run --separate-stderr "$CLSORT" -d gpu "$keys"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"no OpenCL device matches 'gpu'; found:"* ]]
}

@test "CLSORT_DEVICE chooses the device" {
  CLSORT_DEVICE=no-such-device-xyz run --separate-stderr "$CLSORT" "$keys"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"no OpenCL device matches 'no-such-device-xyz'"* ]]
  CLSORT_DEVICE=cpu run --separate-stderr "$CLSORT" -v "$keys"
  assert_success
  [[ "$stderr" == *"clsort: device 0:0 "* ]]
}

@test "CLSORT_DEVICE keeps even a tiny input on the device" {
  head -c 40 /dev/urandom > "$BATS_TEST_TMPDIR/tiny"
  run --separate-stderr "$CLSORT" -v "$BATS_TEST_TMPDIR/tiny"
  assert_success
  [[ "$stderr" == *"sorting on the host"* ]]
  CLSORT_DEVICE=cpu run --separate-stderr "$CLSORT" -v "$BATS_TEST_TMPDIR/tiny"
  assert_success
  [[ "$stderr" != *"sorting on the host"* ]]
  [[ "$stderr" == *"clsort: device 0:0 "* ]]
}

@test "-d overrides CLSORT_DEVICE" {
  CLSORT_DEVICE=no-such-device-xyz run --separate-stderr "$CLSORT" -d cpu -v "$keys"
  assert_success
  [[ "$stderr" == *"clsort: device 0:0 "* ]]
}

@test "a malformed CLSORT_DEVICE is ignored with a warning" {
  CLSORT_DEVICE=1:x run --separate-stderr "$CLSORT" "$keys"
  assert_success
  [ "${stderr_lines[0]}" = "clsort: warning: ignoring CLSORT_DEVICE='1:x': not a device spec" ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  CLSORT_DEVICE=1:x "$CLSORT" "$keys" 2> /dev/null | dec_u32 | cmp - <(ref_u32 "$keys")
}

@test "-v reports the device and the time of each phase" {
  run --separate-stderr "$CLSORT" "${DEV[@]}" -v -o "$BATS_TEST_TMPDIR/out" "$keys"
  assert_success
  [ -z "$output" ]
  [[ "$stderr" == *"clsort: read 40000 bytes from 1 input in "*" s"* ]]
  [[ "$stderr" == *"clsort: device 0:0 "*"["*"]"* ]]
  [[ "$stderr" == *"clsort: 10000 records in 1 run of up to 10000; 0 merge passes"* ]]
  [[ "$stderr" =~ clsort:\ time:\ encode\ [0-9.]+\ s,\ sort[a-z\ ]*\ [0-9.]+\ s,\ .*merge\ [0-9.]+\ s ]]
  [[ "$stderr" =~ clsort:\ total\ [0-9.]+\ s ]]
  # -v reports; it changes nothing in the output.
  dec_u32 < "$BATS_TEST_TMPDIR/out" | cmp - <(ref_u32 "$keys")
}

@test "-vv reports each kernel's device time by name" {
  # Tiles of 64 and 2 substages per global pass: 10000 keys take stages
  # with tile tails, pair tails and the pair flip tail.
  CLSORT_GLOBAL=bitonic CLSORT_WG=16 CLSORT_EPT=4 CLSORT_FUSE=4 \
    run --separate-stderr "$CLSORT" "${DEV[@]}" -vv "$keys"
  assert_success
  [[ "$stderr" =~ clsort:\ kernel\ time:\ tile\ sort\ [0-9.]+\ s,\ tile\ tail\ [0-9.]+\ s,\ pair\ tail\ [0-9.]+\ s,\ pair\ flip\ tail\ [0-9.]+\ s,\ flip_2\ [0-9.]+\ s,\ half_2\ [0-9.]+\ s ]] ||
    fail "$stderr"
}

@test "without -v a successful sort writes nothing on stderr" {
  "$CLSORT" "${DEV[@]}" "$keys" > /dev/null 2>&1 # a first build may talk
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$BATS_TEST_TMPDIR/out" "$keys"
  assert_success
  [ -z "$stderr" ]
  [ -z "$output" ]
}

# --- program cache -----------------------------------------------------------
# On PoCL, clsort leaves compiled kernels to PoCL's own cache; with that
# turned off (POCL_KERNEL_CACHE=0) it keeps them in its own, as for every
# other driver: these cases test that one.

@test "a second run loads the program from the cache" {
  export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
  export POCL_KERNEL_CACHE=0
  run --separate-stderr "$CLSORT" "${DEV[@]}" -vv "$keys"
  assert_success
  [[ "$stderr" == *"program built in"* ]]
  [[ "$stderr" != *"program loaded from cache"* ]]
  ls "$XDG_CACHE_HOME"/clsort/*.bin > /dev/null
  run --separate-stderr "$CLSORT" "${DEV[@]}" -vv "$keys"
  assert_success
  [[ "$stderr" == *"program loaded from cache"* ]]
  [[ "$stderr" != *"program built in"* ]]
  "$CLSORT" "${DEV[@]}" "$keys" | dec_u32 | cmp - <(ref_u32 "$keys")
}

@test "PoCL with its kernel cache: clsort stores no program of its own" {
  export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
  export POCL_KERNEL_CACHE=1
  for i in 1 2; do
    run --separate-stderr "$CLSORT" "${DEV[@]}" -vv "$keys"
    assert_success
    [[ "$stderr" == *"program built in"* ]] || fail "run $i: $stderr"
    [[ "$stderr" != *"cached in"* && "$stderr" != *"loaded from cache"* ]] || fail "run $i: $stderr"
  done
  [ -z "$(ls "$XDG_CACHE_HOME/clsort/"*.bin 2> /dev/null)" ] || fail "$(ls "$XDG_CACHE_HOME/clsort")"
  "$CLSORT" "${DEV[@]}" "$keys" | dec_u32 | cmp - <(ref_u32 "$keys")
}

@test "CLSORT_NO_CACHE builds every time and writes no cache" {
  export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
  export POCL_KERNEL_CACHE=0
  CLSORT_NO_CACHE=1 run --separate-stderr "$CLSORT" "${DEV[@]}" -vv "$keys"
  assert_success
  [[ "$stderr" == *"program built in"* ]]
  [ -z "$(ls -A "$XDG_CACHE_HOME/clsort" 2> /dev/null)" ]
}

# corrupt_check HOW: damage every cache entry with HOW, then the next run
# rebuilds, sorts right and leaves an entry that loads again.
corrupt_check() {
  export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
  export POCL_KERNEL_CACHE=0
  "$CLSORT" "${DEV[@]}" "$keys" > /dev/null 2>&1
  local f n=0
  for f in "$XDG_CACHE_HOME"/clsort/*.bin; do
    [ -f "$f" ] || continue
    "$@" "$f"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || fail "no cache entry was written"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -vv -o "$BATS_TEST_TMPDIR/out" "$keys"
  assert_success
  [[ "$stderr" == *"no usable program cache entry"* ]] || fail "not noticed: $stderr"
  [[ "$stderr" == *"program built in"* ]]
  dec_u32 < "$BATS_TEST_TMPDIR/out" | cmp - <(ref_u32 "$keys") || fail "wrong order"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -vv "$keys"
  assert_success
  [[ "$stderr" == *"program loaded from cache"* ]] || fail "entry not rewritten: $stderr"
}

garbage() { head -c 5000 /dev/urandom > "$1"; }
truncate_half() { truncate -s $(($(stat -c %s "$1") / 2)) "$1"; }
truncate_zero() { : > "$1"; }
flip_tail() { printf 'XXXX' | dd of="$1" bs=1 seek=$(($(stat -c %s "$1") - 10)) conv=notrunc status=none; }
flip_head() { printf 'X' | dd of="$1" bs=1 seek=2 conv=notrunc status=none; }

@test "a cache entry overwritten with garbage is rebuilt" {
  corrupt_check garbage
}

@test "a truncated cache entry is rebuilt" {
  corrupt_check truncate_half
}

@test "an empty cache entry is rebuilt" {
  corrupt_check truncate_zero
}

@test "a cache entry with damaged bytes in the binary is rebuilt" {
  corrupt_check flip_tail
}

@test "a cache entry with a damaged header is rebuilt" {
  corrupt_check flip_head
}

@test "an unwritable cache directory only costs a build" {
  [ "$(id -u)" -ne 0 ] || skip "root writes anywhere"
  export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/ro"
  export POCL_KERNEL_CACHE=0
  mkdir -p "$XDG_CACHE_HOME"
  chmod 555 "$XDG_CACHE_HOME"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$BATS_TEST_TMPDIR/out" "$keys"
  chmod 755 "$XDG_CACHE_HOME"
  assert_success
  dec_u32 < "$BATS_TEST_TMPDIR/out" | cmp - <(ref_u32 "$keys")
}

@test "a cache directory that cannot be made only costs a build" {
  export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
  export POCL_KERNEL_CACHE=0
  mkdir -p "$XDG_CACHE_HOME"
  echo not a directory > "$XDG_CACHE_HOME/clsort"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$BATS_TEST_TMPDIR/out" "$keys"
  assert_success
  dec_u32 < "$BATS_TEST_TMPDIR/out" | cmp - <(ref_u32 "$keys")
  [ "$(cat "$XDG_CACHE_HOME/clsort")" = "not a directory" ]
}
