#!/usr/bin/env bats
# Inputs: standard input that a shell or an earlier command has partly
# read, files that stat calls empty but that have contents, pipes and
# FIFOs (the same bytes as the file, the device opened while they are read,
# a writer that dies mid-record).
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
  # Four u32 keys: 40 30 20 10.
  printf '\x28\0\0\0\x1e\0\0\0\x14\0\0\0\x0a\0\0\0' > "$T/k4.bin"
  printf '\x0a\0\0\0\x14\0\0\0' > "$T/last2.sorted"
}

@test "standard input that is a file is sorted from where it was left, and left at its end" {
  { dd bs=8 count=1 of=/dev/null status=none; "$CLSORT" "${DEV[@]}" > "$T/got"; } < "$T/k4.bin"
  cmp "$T/last2.sorted" "$T/got"
  # A page-crossing offset: the mapping starts at a page, the keys past it.
  "$REFSORT" gen u32 3000 7 > "$T/big.bin"
  { dd bs=4 count=1500 of=/dev/null status=none; "$CLSORT" "${DEV[@]}" > "$T/got"
    "$CLSORT" "${DEV[@]}" > "$T/rest"; } < "$T/big.bin"
  tail -c 6000 "$T/big.bin" | "$REFSORT" sort > "$T/want"
  cmp "$T/want" "$T/got"
  [ ! -s "$T/rest" ] || fail "a second sort of the same standard input read it again"
  # Every byte read already: an empty input.
  { cat > /dev/null; "$CLSORT" "${DEV[@]}" > "$T/got"; } < "$T/k4.bin"
  [ ! -s "$T/got" ]
}

@test "the host engine and -c read standard input from its offset too" {
  { dd bs=8 count=1 of=/dev/null status=none; "$CLSORT" -d host > "$T/got"; } < "$T/k4.bin"
  cmp "$T/last2.sorted" "$T/got"
  # 20 10 is out of order; 10 alone is sorted.
  run -1 bash -c "{ dd bs=8 count=1 of=/dev/null status=none; exec '$CLSORT' -C; } < '$T/k4.bin'"
  run -0 bash -c "{ dd bs=12 count=1 of=/dev/null status=none; exec '$CLSORT' -C; } < '$T/k4.bin'"
}

@test "lines after a header read by the shell, from a file and from a pipe" {
  printf 'name,score\nb,3\na,1\nc,2\n' > "$T/h.csv"
  printf 'a,1\nc,2\nb,3\n' > "$T/want"
  { IFS= read -r h; "$CLSORT" -t, -F 2 > "$T/got"; } < "$T/h.csv"
  cmp "$T/want" "$T/got"
  cat "$T/h.csv" | { IFS= read -r h; "$CLSORT" -t, -F 2 > "$T/got"; }
  cmp "$T/want" "$T/got"
}

@test "a regular file that stat calls empty is read to its end" {
  [ -r /proc/self/mounts ] || skip "no /proc"
  run -0 "$CLSORT" -f kv -t blank -F 1 -k str /proc/self/mounts
  [ -n "$output" ] || fail "nothing read from /proc/self/mounts"
}

@test "a pipe larger than --memory is held in a temporary file, sorted as the file is" {
  "$REFSORT" gen u32 600000 3 > "$T/in"
  "$CLSORT" -d host "$T/in" > "$T/want"
  mkdir "$T/tmp"
  cat "$T/in" | "$CLSORT" -d host --memory 1M -T "$T/tmp" > "$T/got"
  cmp "$T/want" "$T/got"
  cat "$T/in" | "$CLSORT" "${DEV[@]}" --memory 1M -S 256K -T "$T/tmp" > "$T/got"
  cmp "$T/want" "$T/got"
  [ -z "$(ls -A "$T/tmp")" ] || fail "temporary files left: $(ls -A "$T/tmp")"
}

@test "a writer that sends small pieces with pauses: the same sort as of the file" {
  "$REFSORT" gen-kv 3000 5 > "$T/in"
  "$CLSORT" -f kv "$T/in" > "$T/want"
  { for ((i = 0; i < 3000; i += 500)); do
      sed -n "$((i + 1)),$((i + 500))p" "$T/in"; sleep 0.05
    done; } | "$CLSORT" -f kv "${DEV[@]}" > "$T/got"
  cmp "$T/want" "$T/got"
}

# pipe_same_as_file FILE OPTION...: FILE through a pipe and as a FILE
# argument gives the same bytes, and the pipe (over 8 MiB, where the
# device is opened while the rest is read) opened it ahead and wrote its
# standard output, a file, through a mapping.
pipe_same_as_file() {
  local in=$1
  shift
  "$CLSORT" "${DEV[@]}" "$@" "$in" > "$T/want" || fail "clsort $* $in failed"
  cat "$in" | "$CLSORT" "${DEV[@]}" -vv "$@" > "$T/got" 2> "$T/err" ||
    fail "clsort $* from a pipe failed: $(cat "$T/err")"
  cmp "$T/want" "$T/got" || fail "clsort $*: the pipe's sort differs from the file's"
  grep -q 'device opened in [0-9.]* s while the input was read' "$T/err" ||
    fail "clsort $*: no device opened ahead: $(cat "$T/err")"
  # Standard output into a file is mapped; with no device start left to
  # hide a fault-in ahead under, the copies fault its pages in.
  grep -q 'writing standard output through a shared mapping of [0-9]* bytes, its pages faulted in as they are written' \
    "$T/err" || fail "clsort $*: output not mapped to be faulted in by the copies: $(cat "$T/err")"
}

@test "a pipe gives the file's bytes in every format, the device opened while it is read" {
  "$REFSORT" gen u32 3000000 21 > "$T/u32"
  pipe_same_as_file "$T/u32"
  pipe_same_as_file "$T/u32" -r -k i32
  "$REFSORT" gen-rec 600000 16 4 u64 22 few > "$T/rec"
  pipe_same_as_file "$T/rec" -R 16 --key-offset 4 -k u64 -s
  "$REFSORT" gen-kv 700000 23 > "$T/kv"
  [ "$(stat -c %s "$T/kv")" -gt $((8 << 20)) ] || fail "kv input under 8 MiB"
  pipe_same_as_file "$T/kv" -f kv
  pipe_same_as_file "$T/kv" -f kv -k str -u
}

@test "a large pipe the host engine sorts touches no OpenCL" {
  "$REFSORT" gen u32 3000000 24 > "$T/u32"
  "$CLSORT" -d host "$T/u32" > "$T/want"
  OCL_ICD_VENDORS="$T" run --separate-stderr "$CLSORT" -d host -o "$T/got" < <(cat "$T/u32")
  assert_success
  [ -z "$stderr" ]
  cmp "$T/want" "$T/got"
  # auto, below its host threshold.
  CLSORT_HOST_THRESHOLD=10000000 OCL_ICD_VENDORS="$T" \
    run --separate-stderr "$CLSORT" -o "$T/got" < <(cat "$T/u32")
  assert_success
  [ -z "$stderr" ]
  cmp "$T/want" "$T/got"
}

@test "a device that cannot be opened while a pipe is read: one message, no output" {
  "$REFSORT" gen u32 3000000 25 > "$T/u32"
  OCL_ICD_VENDORS="$T" run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/got" < <(cat "$T/u32")
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: no OpenCL platform found"* ]] || fail "$stderr"
  [ "$(grep -c . <<< "$stderr")" -eq 1 ] || fail "$stderr"
  [ ! -e "$T/got" ]
}

@test "a FIFO named as an input is read as a pipe" {
  "$REFSORT" gen-kv 20000 26 > "$T/kv"
  "$CLSORT" "${DEV[@]}" -f kv "$T/kv" > "$T/want"
  mkfifo "$T/fifo"
  cat "$T/kv" > "$T/fifo" &
  "$CLSORT" "${DEV[@]}" -f kv "$T/fifo" > "$T/got"
  wait
  cmp "$T/want" "$T/got"
}

@test "a writer killed mid-record: the truncated record's error, no output" {
  "$REFSORT" gen-rec 2000 16 0 u64 27 > "$T/rec"
  run --separate-stderr "$CLSORT" "${DEV[@]}" -R 16 -k u64 -o "$T/got" \
    < <(head -c 16007 "$T/rec"; kill -9 $BASHPID)
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: -: size 16007 is not a multiple of the 16-byte record size (7 trailing bytes)" ] ||
    fail "$stderr"
  [ ! -e "$T/got" ]
}
