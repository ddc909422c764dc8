#!/usr/bin/env bats
# Errors on input and output: malformed and unreadable inputs, full
# devices, closed pipes, injected read and write failures, and a machine
# without an OpenCL platform.  Every failure exits 2 with one "clsort: "
# line and leaves no partial output file behind.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
  head -c 40000 /dev/urandom > "$T/good.bin"
}

# u32 keys of FILE as sorted decimal lines.
ref_u32() {
  od -An -v -tu4 -w4 "$1" | sort -n
}

# No clsort temporary (.clsort.*) in DIR.
no_leftovers() {
  local left
  left=$(find "$1" -maxdepth 1 -name '.clsort.*')
  [ -z "$left" ] || fail "temporary left behind: $left"
}

# One line on stderr, starting "clsort: ".
one_error_line() {
  [ "${#stderr_lines[@]}" -eq 1 ] || fail "expected one line on stderr: $stderr"
  [[ "${stderr_lines[0]}" == "clsort: "* ]] || fail "not a clsort message: $stderr"
}

# The device program is built once, before tests that want a silent stderr.
warm() {
  "$CLSORT" "${DEV[@]}" "$T/good.bin" > /dev/null 2>&1 || true
}

# --- input errors ------------------------------------------------------------

@test "input size not a multiple of 4: status 2, file and size named" {
  head -c 4003 /dev/urandom > "$T/odd.bin"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/odd.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [ "$stderr" = "clsort: $T/odd.bin: size 4003 is not a multiple of the 4-byte record size (3 trailing bytes)" ]
  [ ! -e "$T/out" ]
  no_leftovers "$T"
}

@test "input size not a multiple of the record size, through stdin" {
  head -c 100 /dev/urandom > "$T/odd.bin"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -R 12 < "$T/odd.bin"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [ "$stderr" = "clsort: -: size 100 is not a multiple of the 12-byte record size (4 trailing bytes)" ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -k u64 "$T/odd.bin"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"size 100 is not a multiple of the 8-byte record size (4 trailing bytes)" ]]
}

@test "a directory as input: status 2" {
  mkdir "$T/dir"
  run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/dir"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  one_error_line
  [ "$stderr" = "clsort: cannot read $T/dir: Is a directory" ]
}

@test "a nonexistent input: status 2, the file named" {
  run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/missing.bin"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  one_error_line
  [ "$stderr" = "clsort: cannot read $T/missing.bin: No such file or directory" ]
}

@test "an unreadable input: status 2, the file named" {
  if [ "$(id -u)" -ne 0 ]; then
    cp "$T/good.bin" "$T/secret.bin"
    chmod 000 "$T/secret.bin"
    run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/secret.bin"
  else
    # root reads any file: run as nobody, in a directory nobody can enter.
    command -v setpriv > /dev/null || skip "root, and no setpriv to drop privileges"
    as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${as_nobody[@]}" test -x "$CLSORT" || skip "clsort is not reachable as nobody"
    d=$(mktemp -d /tmp/clsort-perm.XXXXXX)
    chmod 755 "$d"
    cp "$T/good.bin" "$d/secret.bin"
    chmod 000 "$d/secret.bin"
    run --separate-stderr "${as_nobody[@]}" "$CLSORT" "${DEV[@]}" "$d/secret.bin"
    rm -rf "$d"
    T=$d
  fi
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [ "$stderr" = "clsort: cannot read $T/secret.bin: Permission denied" ]
}

@test "empty input: empty output, status 0" {
  : > "$T/empty.bin"
  run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/empty.bin"
  assert_success
  [ -z "$output" ]
  [ -z "$stderr" ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" < /dev/null
  assert_success
  [ -z "$output" ]
  "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/empty.bin"
  [ -f "$T/out" ] && [ ! -s "$T/out" ]
  "$CLSORT" "${DEV[@]}" -f kv -o "$T/out2" < /dev/null
  [ -f "$T/out2" ] && [ ! -s "$T/out2" ]
  "$CLSORT" "${DEV[@]}" -k f64 -R 24 --key-offset=8 "$T/empty.bin" "$T/empty.bin" > "$T/out3"
  [ ! -s "$T/out3" ]
}

@test "empty inputs among others add nothing" {
  : > "$T/empty.bin"
  "$CLSORT" "${DEV[@]}" "$T/empty.bin" "$T/good.bin" "$T/empty.bin" | od -An -v -tu4 -w4 > "$T/got"
  ref_u32 "$T/good.bin" | cmp - "$T/got"
}

@test "a bad input after good ones: status 2, no output file, nothing on stdout" {
  head -c 4002 /dev/urandom > "$T/odd.bin"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/good.bin" "$T/good.bin" "$T/odd.bin"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"$T/odd.bin: size 4002"* ]]
  [ ! -e "$T/out" ]
  no_leftovers "$T"
  run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/good.bin" "$T/missing.bin"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  [[ "$stderr" == *"cannot read $T/missing.bin"* ]]
}

@test "a bad input leaves an existing output file as it was" {
  printf 'old content\n' > "$T/out"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/good.bin" "$T/missing.bin"
  [ "$status" -eq 2 ]
  [ "$(cat "$T/out")" = "old content" ]
  no_leftovers "$T"
}

@test "-o into a missing directory: status 2, the file named" {
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/nodir/out" "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [[ "$stderr" == "clsort: cannot open $T/nodir/out for writing: No such file or directory" ]]
}

@test "-o naming a directory: status 2" {
  mkdir "$T/outdir"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/outdir" "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [[ "$stderr" == *"$T/outdir"* ]]
  [ -z "$(ls -A "$T/outdir")" ]
}

# --- output errors -----------------------------------------------------------

@test "stdout on /dev/full: status 2 and a write error" {
  [ -w /dev/full ] || skip "no /dev/full"
  run --separate-stderr bash -c '"$CLSORT" "$@" > /dev/full' _ "${DEV[@]}" "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [ "$stderr" = "clsort: write error on standard output: No space left on device" ]
}

@test "a few keys to /dev/full (the late write at exit): status 2" {
  [ -w /dev/full ] || skip "no /dev/full"
  printf '\3\0\0\0\1\0\0\0' > "$T/two.bin"
  run --separate-stderr bash -c '"$CLSORT" "$1" > /dev/full' _ "$T/two.bin"
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: write error"*"No space left on device" ]]
  run --separate-stderr bash -c '"$CLSORT" -f kv > /dev/full' <<< "1:a"
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: write error"*"No space left on device" ]]
}

@test "-o /dev/full: status 2, the device named" {
  [ -w /dev/full ] || skip "no /dev/full"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o /dev/full "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [ "$stderr" = "clsort: write error on /dev/full: No space left on device" ]
}

@test "a reader that closes the pipe early: clsort ends quietly" {
  head -c $((8 << 20)) /dev/urandom > "$T/big.bin"
  warm
  reader_closes "${DEV[@]}" "$T/big.bin"
}

@test "a closed pipe with SIGPIPE ignored: status 2 and a write error" {
  head -c $((8 << 20)) /dev/urandom > "$T/big.bin"
  warm
  reader_closes_sigpipe_ignored "${DEV[@]}" "$T/big.bin"
}

@test "a closed pipe on the kv path ends quietly too" {
  seq 300000 | sed 's/$/:v/' > "$T/kv.txt"
  warm
  run bash -c '"$CLSORT" "$@" -f kv 2> "$0/err" | head -n 1
    echo "status ${PIPESTATUS[*]}"' "$T" "${DEV[@]}" "$T/kv.txt"
  [ "${lines[0]}" = "1:v" ]
  [ "${lines[1]}" = "status 141 0" ] || fail "pipeline statuses: ${lines[1]}"
  [ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
}

# --- injected failures -------------------------------------------------------

@test "faultinject: EIO reading stdin from a pipe" {
  run --separate-stderr bash -c 'cat "$1" | FAULTINJECT_OP=read FAULTINJECT_TARGET=stdin \
    FAULTINJECT_ERRNO=EIO LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${@:2}"' _ "$T/good.bin" "${DEV[@]}"
  [ "$status" -eq 2 ]
  [ -z "$output" ]
  one_error_line
  [ "$stderr" = "clsort: -: read failed: Input/output error" ]
}

@test "faultinject: EIO reading stdin after some bytes, with -o" {
  run --separate-stderr bash -c 'cat "$1" | FAULTINJECT_OP=read FAULTINJECT_TARGET=stdin \
    FAULTINJECT_ERRNO=EIO FAULTINJECT_AFTER=20000 LD_PRELOAD="$FAULTINJECT" \
    "$CLSORT" "${@:3}" -o "$2"' _ "$T/good.bin" "$T/out" "${DEV[@]}"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: -: read failed: Input/output error" ]
  [ ! -e "$T/out" ]
  no_leftovers "$T"
}

@test "faultinject: ENOSPC on stdout after 10000 bytes" {
  FAULTINJECT_TARGET=stdout FAULTINJECT_ERRNO=ENOSPC FAULTINJECT_AFTER=10000 \
    LD_PRELOAD="$FAULTINJECT" run --separate-stderr \
    "$CLSORT" "${DEV[@]}" "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [ "$stderr" = "clsort: write error on standard output: No space left on device" ]
}

@test "faultinject: EIO on stdout, the errno is reported" {
  run --separate-stderr bash -c 'FAULTINJECT_TARGET=stdout FAULTINJECT_ERRNO=EIO \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "$@" > "$0/out"' "$T" "${DEV[@]}" "$T/good.bin"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: write error on standard output: Input/output error" ]
  [ ! -s "$T/out" ]
}

@test "faultinject: a short first write is completed, then ENOSPC reported" {
  # The first 4093 bytes go out in a short write; the rest fails.
  run --separate-stderr bash -c 'FAULTINJECT_TARGET=stdout FAULTINJECT_ERRNO=ENOSPC \
    FAULTINJECT_AFTER=4093 LD_PRELOAD="$FAULTINJECT" "$CLSORT" "$@" > "$0/out"' \
    "$T" "${DEV[@]}" "$T/good.bin"
  [ "$status" -eq 2 ]
  [ "$(stat -c %s "$T/out")" -eq 4093 ]
  od -An -v -tu4 -w4 "$T/good.bin" | sort -n | head -n 1023 > "$T/want"
  head -c 4092 "$T/out" | od -An -v -tu4 -w4 | cmp - "$T/want"
}

@test "faultinject: -o FILE with a failing write leaves no FILE and no temporary" {
  FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC FAULTINJECT_AFTER=1000 \
    LD_PRELOAD="$FAULTINJECT" run --separate-stderr \
    "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [ "$stderr" = "clsort: write error on $T/out: No space left on device" ]
  [ ! -e "$T/out" ]
  no_leftovers "$T"
}

@test "faultinject: -o onto an existing FILE with a failing write keeps its content" {
  printf 'old content\n' > "$T/out"
  chmod 640 "$T/out"
  FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EIO \
    LD_PRELOAD="$FAULTINJECT" run --separate-stderr \
    "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/good.bin"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: write error on $T/out: Input/output error" ]
  [ "$(cat "$T/out")" = "old content" ]
  [ "$(stat -c %a "$T/out")" = 640 ]
  no_leftovers "$T"
}

@test "faultinject: -o onto the input itself with a failing write keeps the input" {
  cp "$T/good.bin" "$T/in.bin"
  FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC FAULTINJECT_AFTER=100 \
    LD_PRELOAD="$FAULTINJECT" run --separate-stderr \
    "$CLSORT" "${DEV[@]}" -o "$T/in.bin" "$T/in.bin"
  [ "$status" -eq 2 ]
  cmp "$T/good.bin" "$T/in.bin"
  no_leftovers "$T"
}

@test "faultinject: -o FILE written through a mapping, close failing: status 2, no FILE" {
  # Nothing is written with write(2) there: the late error comes at close.
  FAULTINJECT_OP=close FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EIO \
    LD_PRELOAD="$FAULTINJECT" run --separate-stderr \
    "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [ "$stderr" = "clsort: write error on $T/out: Input/output error" ]
  [ ! -e "$T/out" ]
  no_leftovers "$T"
}

@test "-o FILE on a full tmpfs: status 2, the file named, nothing left there" {
  mkdir "$T/small"
  mount -t tmpfs -o size=256k tmpfs "$T/small" 2> /dev/null || skip "cannot mount a tmpfs here"
  head -c 800000 /dev/urandom > "$T/big.bin"
  # No room to allocate the file for a mapping: write(2) runs out instead.
  run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/small/out" "$T/big.bin"
  left=$(ls -A "$T/small")
  # With room, the same file system takes the output.
  "$CLSORT" "${DEV[@]}" -o "$T/small/ok" "$T/good.bin"
  ok=$(od -An -v -tu4 -w4 "$T/small/ok")
  umount "$T/small"
  [ "$status" -eq 2 ]
  one_error_line
  [ "$stderr" = "clsort: write error on $T/small/out: No space left on device" ]
  [ -z "$left" ] || fail "left behind: $left"
  cmp <(echo "$ok") <(ref_u32 "$T/good.bin")
}

@test "-o onto the input itself replaces it with the sorted keys" {
  cp "$T/good.bin" "$T/in.bin"
  chmod 604 "$T/in.bin"
  "$CLSORT" "${DEV[@]}" -o "$T/in.bin" "$T/in.bin"
  od -An -v -tu4 -w4 "$T/in.bin" | cmp - <(ref_u32 "$T/good.bin")
  [ "$(stat -c %a "$T/in.bin")" = 604 ]
  no_leftovers "$T"
}

# --- no OpenCL -----------------------------------------------------------------

@test "no OpenCL platform: status 2 and how to install or register one" {
  mkdir "$T/empty-dir"
  OCL_ICD_VENDORS="$T/empty-dir" run --separate-stderr \
    "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/good.bin"
  [ "$status" -eq 2 ]
  one_error_line
  [[ "$stderr" == "clsort: no OpenCL platform found: install an OpenCL driver"* ]]
  [[ "$stderr" == *"register an installed one in /etc/OpenCL/vendors"* ]]
  [ ! -e "$T/out" ]
  no_leftovers "$T"
}

@test "no OpenCL platform: a small input still sorts on the host" {
  mkdir "$T/empty-dir"
  head -c 4000 /dev/urandom > "$T/small.bin"
  OCL_ICD_VENDORS="$T/empty-dir" run --separate-stderr "$CLSORT" -o "$T/out" "$T/small.bin"
  assert_success
  [ -z "$stderr" ]
  od -An -v -tu4 -w4 "$T/out" | cmp - <(ref_u32 "$T/small.bin")
}

@test "a bad key is shown with its control bytes escaped; one trailing byte is singular" {
  printf '1:a\n10\r:b\n' > "$T/cr.kv"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv "$T/cr.kv"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/cr.kv:2: invalid u32 key '10\\r'" ]
  printf '7\t\001\\:x\n' > "$T/ctl.kv"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv "$T/ctl.kv"
  [ "$stderr" = "clsort: $T/ctl.kv:1: invalid u32 key '7\\t\\x01\\\\'" ]
  printf 'abcde' > "$T/five.bin"
  run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/five.bin"
  [ "$stderr" = "clsort: $T/five.bin: size 5 is not a multiple of the 4-byte record size (1 trailing byte)" ]
}
