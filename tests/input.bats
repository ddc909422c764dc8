#!/usr/bin/env bats
# Inputs: standard input that a shell or an earlier command has partly
# read, files that stat calls empty but that have contents, pipes and
# FIFOs (the same bytes as the file, the device opened while they are read,
# a writer that dies mid-record).
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
  # Streams go to runs by their rate alone here, whatever else the
  # machine runs meanwhile; the CPUs' idle share has a test of its own.
  export CLSORT_STREAM_IDLE=0
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
# device is opened while the rest is read) opened it ahead, built its
# program there, and wrote its standard output, a file, through a mapping.
pipe_same_as_file() {
  local in=$1
  shift
  "$CLSORT" "${DEV[@]}" "$@" "$in" > "$T/want" || fail "clsort $* $in failed"
  # The writer pauses past 8 MiB: time for the device to open and its
  # programs to build (about a second on a fresh PoCL cache) before the
  # last byte, after which the sort builds what is left itself.
  { head -c $((9 << 20)) "$in"; sleep 2; tail -c +$(((9 << 20) + 1)) "$in"; } |
    "$CLSORT" "${DEV[@]}" -vv "$@" > "$T/got" 2> "$T/err" ||
    fail "clsort $* from a pipe failed: $(cat "$T/err")"
  cmp "$T/want" "$T/got" || fail "clsort $*: the pipe's sort differs from the file's"
  grep -q 'device opened in [0-9.]* s while the input was read' "$T/err" ||
    fail "clsort $*: no device opened ahead: $(cat "$T/err")"
  # Its program built there too, or loaded there from clsort's cache.
  grep -q 'program \(built\|loaded\) while the input was read' "$T/err" ||
    fail "clsort $*: the program was built after the read: $(cat "$T/err")"
  # Standard output into a file is mapped; with no device start left to
  # hide a fault-in ahead under, the copies fault its pages in.
  grep -q 'writing standard output through a shared mapping of [0-9]* bytes, its pages faulted in as they are written' \
    "$T/err" || fail "clsort $*: output not mapped to be faulted in by the copies: $(cat "$T/err")"
}

@test "a pipe gives the file's bytes in every format, the device opened while it is read" {
  "$REFSORT" gen u32 3000000 21 > "$T/u32"
  pipe_same_as_file "$T/u32"
  # A CPU device's staging is the host's memory: made by the sort.
  grep -q 'pinned staging buffers of [0-9]* bytes made in' "$T/err" ||
    fail "the CPU device's staging made ahead: $(cat "$T/err")"
  pipe_same_as_file "$T/u32" -r -k i32
  "$REFSORT" gen-rec 600000 16 4 u64 22 few > "$T/rec"
  pipe_same_as_file "$T/rec" -R 16 --key-offset 4 -k u64 -s
  "$REFSORT" gen-kv 700000 23 > "$T/kv"
  [ "$(stat -c %s "$T/kv")" -gt $((8 << 20)) ] || fail "kv input under 8 MiB"
  pipe_same_as_file "$T/kv" -f kv
  pipe_same_as_file "$T/kv" -f kv -k str -u
  # Lines the device puts in order (forced on a CPU device): that program
  # is built while the stream arrives too.
  CLSORT_DEVICE_GATHER=1 pipe_same_as_file "$T/kv" -f kv
  grep -q 'device gather: [0-9]* lines put in order on the device' "$T/err" ||
    fail "the lines were not put in order on the device: $(cat "$T/err")"
  grep -q 'program \(built\|loaded\) while the input was read: line_count' "$T/err" ||
    fail "the lines' program was built after the read: $(cat "$T/err")"
  # A device that gathers has memory of its own: its pinned staging
  # buffers were made while the stream arrived, and the sort took them.
  grep -q 'pinned staging buffers of [0-9]* bytes made while the input was read' "$T/err" ||
    fail "the staging buffers were made after the read: $(cat "$T/err")"
  # Records wider than their words, put in order on the device: their
  # program is built while the stream arrives too.
  "$REFSORT" gen-rec 400000 32 4 u32 26 few > "$T/rec32"
  CLSORT_DEVICE_GATHER=1 pipe_same_as_file "$T/rec32" -R 32 --key-offset 4 -k u32
  grep -q 'device gather: [0-9]* records put in order on the device' "$T/err" ||
    fail "the records were not put in order on the device: $(cat "$T/err")"
  grep -q 'program \(built\|loaded\) while the input was read: gather_records' "$T/err" ||
    fail "the records' program was built after the read: $(cat "$T/err")"
  # Lines whose ties the host orders: the host puts them in order, and no
  # program for it is built.
  CLSORT_DEVICE_GATHER=1 pipe_same_as_file "$T/kv" -f kv -k str -u
  ! grep -q 'line_count' "$T/err" || fail "the lines' program built for nothing: $(cat "$T/err")"
}

# sent_in_pieces FILE: FILE's bytes with pauses: at 9 MiB (the device opens
# and builds meanwhile), at 17 MiB (a first 16 MiB staging buffer's worth
# of u32 keys sent, into room for twice what came) and at 50 MiB (two
# more, the room grown on the way).
sent_in_pieces() {
  head -c $((9 << 20)) "$1"; sleep 2
  tail -c +$(((9 << 20) + 1)) "$1" | head -c $((8 << 20)); sleep 1
  tail -c +$(((17 << 20) + 1)) "$1" | head -c $((33 << 20)); sleep 1
  tail -c +$(((50 << 20) + 1)) "$1"
}

@test "a stream's bare keys and packed records sent to the device while they arrive: the file's sort" {
  # The CPU device made to send (CLSORT_DEVICE_GATHER=1: its staging made
  # ahead, as a GPU's), through its radix sort, which takes them.
  export CLSORT_DEVICE_GATHER=1
  "$REFSORT" gen u32 15000000 31 > "$T/u32"
  "$REFSORT" gen-rec 3750000 16 8 u64 32 few > "$T/rec16"
  # Three 16 MiB staging buffers' worth: 4194304 u32 keys each, 1048576
  # 16-byte records.
  for c in "u32|-k u32|12582912|15000000" "u32|-r -k i32|12582912|15000000" \
           "rec16|-R 16 --key-offset 8 -k u64 -s|3145728|3750000" \
           "rec16|-R 16 -k u64 -r|3145728|3750000"; do
    IFS='|' read -r in opts sent n <<<"$c"
    "$CLSORT" -d host $opts "$T/$in" > "$T/want"
    sent_in_pieces "$T/$in" | "$CLSORT" "${DEV[@]}" --device-sort=radix -vv $opts > "$T/got" 2> "$T/err" ||
      fail "$c: $(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "$c: not the file's sort"
    grep -q "^clsort: $sent words sent to the device in [0-9.]* s while the stream arrived\$" "$T/err" ||
      fail "$c: $(cat "$T/err")"
    grep -q "^clsort: $sent words of $n on the device already\$" "$T/err" || fail "$c: $(cat "$T/err")"
  done
  # More than the device's budget holds in one run: nothing kept.
  "$CLSORT" -d host -k u32 "$T/u32" > "$T/want"
  sent_in_pieces "$T/u32" | "$CLSORT" "${DEV[@]}" --device-sort=radix -S 8M -vv > "$T/got" 2> "$T/err" ||
    fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  ! grep -q 'sent to the device\|on the device already' "$T/err" || fail "$(cat "$T/err")"
  # A stream that outgrows --memory once chunks were sent, held in a
  # temporary file from then on: what was sent is dropped.
  mkdir "$T/tmp"
  sent_in_pieces "$T/u32" | "$CLSORT" "${DEV[@]}" --device-sort=radix --memory 32M -T "$T/tmp" -vv \
    > "$T/got" 2> "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  ! grep -q 'sent to the device\|on the device already' "$T/err" || fail "$(cat "$T/err")"
  # A writer killed mid-record after chunks were sent: the truncated
  # record's error, no output.
  run --separate-stderr "$CLSORT" "${DEV[@]}" --device-sort=radix -o "$T/got2" \
    < <(sent_in_pieces "$T/u32" | head -c $(((17 << 20) + 2)); sleep 1; kill -9 $BASHPID)
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: -: size $(((17 << 20) + 2)) is not a multiple of the 4-byte record size (2 trailing bytes)" ] ||
    fail "$stderr"
  [ ! -e "$T/got2" ]
}

@test "a stream of kv lines: their words and text sent to the device while they arrive" {
  # The CPU device made to put lines in order (CLSORT_DEVICE_GATHER=1), on
  # its radix sort, which takes the words sent; the gather takes the text.
  # 4500000 lines, 36 MB of u32 keys' words, 72 MB of u64 keys': the text's
  # first three 16 MiB staging buffers' worth come before the pause at 50
  # MiB, the words' first once 2097152 lines (1048576) are parsed.
  export CLSORT_DEVICE_GATHER=1
  "$REFSORT" gen-kv 4500000 7 u32 rand 4 > "$T/kv"
  for opts in "-f kv -k u32" "-f kv -r -s -k u32" "-f kv -k i64 -r"; do
    "$CLSORT" -d host $opts "$T/kv" > "$T/want"
    sent_in_pieces "$T/kv" | "$CLSORT" "${DEV[@]}" --device-sort=radix -vv $opts > "$T/got" 2> "$T/err" ||
      fail "$opts: $(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "$opts: not the file's sort"
    grep -q "^clsort: [1-9][0-9]* words and 50331648 bytes of text sent to the device in [0-9.]* s while the stream arrived\$" \
      "$T/err" || fail "$opts: $(cat "$T/err")"
    grep -q "^clsort: [1-9][0-9]* words of 4500000 on the device already\$" "$T/err" || fail "$opts: $(cat "$T/err")"
    grep -q "^clsort: 50331648 bytes of text of $(stat -c %s "$T/kv") on the device already\$" "$T/err" ||
      fail "$opts: $(cat "$T/err")"
  done
  # Lines the host puts in order (no gather on the device): none sent.
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  sent_in_pieces "$T/kv" | CLSORT_DEVICE_GATHER=0 "$CLSORT" "${DEV[@]}" --device-sort=radix -vv -f kv \
    > "$T/got" 2> "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  ! grep -q 'sent to the device\|on the device already' "$T/err" || fail "$(cat "$T/err")"
  # More than the device's budget holds in one run: nothing kept.
  sent_in_pieces "$T/kv" | "$CLSORT" "${DEV[@]}" --device-sort=radix -S 8M -vv -f kv > "$T/got" 2> "$T/err" ||
    fail "$(cat "$T/err")"
  cmp "$T/want" "$T/got"
  ! grep -q 'sent to the device\|on the device already' "$T/err" || fail "$(cat "$T/err")"
}

@test "a stream's output faulted in while the device sorts: the file's bytes in every format" {
  # Over 8 MiB each: the device opened while the stream arrives, whose
  # output's pages are then not faulted in when it is mapped.
  "$REFSORT" gen u32 2500000 61 > "$T/u32"
  "$REFSORT" gen-rec 600000 16 0 u64 62 > "$T/rec16"
  "$REFSORT" gen-rec 300000 32 4 u32 63 few > "$T/rec32"
  "$REFSORT" gen-kv 700000 64 > "$T/kv"
  # Each way a run's sorted data comes down: bare keys; records in their
  # words; records and lines the device puts in order; lines the host
  # puts in order from their words.
  for c in "u32|-k u32|" "rec16|-R 16 -k u64|" "rec32|-R 32 --key-offset 4 -k u32|1" \
           "kv|-f kv|1" "kv|-f kv -r|0"; do
    IFS='|' read -r in opts gather <<<"$c"
    "$CLSORT" -d host $opts "$T/$in" > "$T/want"
    cat "$T/$in" | CLSORT_HOST_IDLE=1 CLSORT_DEVICE_GATHER=$gather "$CLSORT" "${DEV[@]}" -vv $opts \
      > "$T/got" 2> "$T/err" || fail "$c: $(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "$c: not the file's sort"
    # All the run writes (a line end the last line may lack: 1 more).
    n=$(sed -n 's/^clsort: output: \([0-9]*\) bytes of its pages faulted in in [0-9.]* s while the device sorted$/\1/p' \
      "$T/err")
    [ -n "$n" ] || fail "$c: nothing faulted in: $(cat "$T/err")"
    size=$(stat -c %s "$T/want")
    [ "$n" -ge "$size" ] && [ "$n" -le $((size + 1)) ] || fail "$c: $n bytes faulted in, $size written"
  done
  # Into a pipe: no pages to fault in.
  cat "$T/u32" | CLSORT_HOST_IDLE=1 "$CLSORT" "${DEV[@]}" -vv -k u32 2> "$T/err" |
    cmp - <("$CLSORT" -d host -k u32 "$T/u32") || fail "into a pipe: not the file's sort"
  ! grep -q 'faulted in in' "$T/err" || fail "into a pipe: $(cat "$T/err")"
  # A CPU device's sort takes the host's threads: nothing meanwhile.
  cat "$T/u32" | "$CLSORT" "${DEV[@]}" -vv -k u32 > "$T/got" 2> "$T/err"
  "$CLSORT" -d host -k u32 "$T/u32" | cmp - "$T/got"
  ! grep -q 'faulted in in' "$T/err" || fail "a CPU device: $(cat "$T/err")"
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

@test "auto opens the device while a pipe is read once the stream outgrows the host's share" {
  # 5000000 u32 keys (20 MB): the host's at 8 MiB (2097152 keys), the
  # device's once the stream has doubled past 3000000 keys.
  "$REFSORT" gen u32 5000000 26 > "$T/u32"
  "$CLSORT" -d host "$T/u32" > "$T/want.u32"
  cat "$T/u32" | "$CLSORT" --host-threshold=3000000 -vv > "$T/got" 2> "$T/err"
  cmp "$T/want.u32" "$T/got"
  grep -q 'device opened in [0-9.]* s while the input was read' "$T/err" ||
    fail "no device opened ahead: $(cat "$T/err")"
  grep -q '5000000 records: sorting on .*\[' "$T/err" || fail "not sorted on the device: $(cat "$T/err")"
  # A stream that ends before it has doubled from its first look to past
  # the host's share (8000000 keys, 31 MiB; the share 6000000, 23 MiB):
  # looked at as it grows by an eighth, not only as it doubles.
  "$REFSORT" gen u32 8000000 28 > "$T/u32.8"
  cat "$T/u32.8" | "$CLSORT" --host-threshold=6000000 -vv > "$T/got" 2> "$T/err"
  "$CLSORT" -d host "$T/u32.8" | cmp - "$T/got"
  grep -q 'device opened in [0-9.]* s while the input was read' "$T/err" ||
    fail "past the share by less than double: no device opened ahead: $(cat "$T/err")"
  # kv lines: the stream's records taken from its first 8 MiB's lines.
  "$REFSORT" gen-kv 700000 27 > "$T/kv"
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  cat "$T/kv" | "$CLSORT" -f kv --host-threshold=500000 -vv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'device opened in [0-9.]* s while the input was read' "$T/err" ||
    fail "kv: no device opened ahead: $(cat "$T/err")"
  # A stream the host keeps: no device opened.
  cat "$T/u32" | "$CLSORT" --host-threshold=30000000 -vv > "$T/got" 2> "$T/err"
  cmp "$T/want.u32" "$T/got"
  ! grep -q 'device opened' "$T/err" || fail "a device opened for the host's sort: $(cat "$T/err")"
}

@test "a device that cannot be opened while a pipe is read: one message, no output" {
  "$REFSORT" gen u32 3000000 25 > "$T/u32"
  OCL_ICD_VENDORS="$T" run --separate-stderr "$CLSORT" "${DEV[@]}" -o "$T/got" < <(cat "$T/u32")
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: no OpenCL platform found"* ]] || fail "$stderr"
  [ "$(grep -c . <<< "$stderr")" -eq 1 ] || fail "$stderr"
  [ ! -e "$T/got" ]
}

@test "kernel sources that cannot be read while a pipe is read: one message, no output" {
  "$REFSORT" gen u32 3000000 29 > "$T/u32"
  # The writer pauses past 8 MiB: the device's thread meets the missing
  # sources first, and leaves the message to the sort.
  { head -c $((9 << 20)) "$T/u32"; sleep 1; tail -c +$(((9 << 20) + 1)) "$T/u32"; } |
    CLSORT_KERNEL_DIR="$T/none" XDG_CACHE_HOME="$T/cache" \
      "$CLSORT" "${DEV[@]}" -k u32 -o "$T/got" 2> "$T/err" && fail "sorted without kernels"
  [ "$(cat "$T/err")" = "clsort: $T/none/common.cl: No such file or directory" ] ||
    fail "$(cat "$T/err")"
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

# --- a stream sorted in runs while it is read ------------------------------
# Records and lines from a pipe that comes no faster than CLSORT_STREAM_RATE
# bytes a second are cut into runs of CLSORT_STREAM_RUN bytes that are
# sorted while the rest arrives, then merged.

# stream_same_as_file FILE OPTION...: FILE through a pipe, sorted in runs of
# 64 KiB, gives the file's bytes, in more than one run.
stream_same_as_file() {
  local in=$1
  shift
  "$CLSORT" "${DEV[@]}" "$@" "$in" > "$T/want" || fail "clsort $* $in failed"
  cat "$in" | CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=1e15 "$CLSORT" "${DEV[@]}" -v "$@" \
    > "$T/got" 2> "$T/err" || fail "clsort $* from a pipe failed: $(cat "$T/err")"
  cmp "$T/want" "$T/got" || fail "clsort $*: the stream's runs differ from the file's sort"
  grep -q 'sorting its runs on .* while it is read, 65536 bytes a run' "$T/err" ||
    fail "clsort $*: not sorted in runs while read: $(cat "$T/err")"
  grep -Eq 'records in ([2-9]|[1-9][0-9]+) runs' "$T/err" ||
    fail "clsort $*: not in several runs: $(cat "$T/err")"
}

@test "a stream's runs sorted while it is read give the file's bytes in every format" {
  "$REFSORT" gen-rec 60000 16 4 u64 31 few > "$T/rec"
  stream_same_as_file "$T/rec" -R 16 --key-offset 4 -k u64 -s
  stream_same_as_file "$T/rec" -R 16 --key-offset 4 -k u64 -u
  stream_same_as_file "$T/rec" -R 16 -k f32 -r
  "$REFSORT" gen-kv 40000 32 > "$T/kv"
  stream_same_as_file "$T/kv" -f kv
  stream_same_as_file "$T/kv" -f kv -r -s
  "$REFSORT" gen-kv 40000 33 u32 300 > "$T/few"
  stream_same_as_file "$T/few" -f kv -u
  stream_same_as_file "$T/few" -f kv -k str -u
  stream_same_as_file "$T/few" -t: -K 1,u32,r -K 2,str
  stream_same_as_file "$T/few" -k str -F 0
  # The last line without its line end.
  printf '7:last' >> "$T/few"
  stream_same_as_file "$T/few" -f kv -s
}

@test "a pipe's device loads its program from clsort's cache while the stream arrives" {
  # PoCL's own kernel cache off: clsort keeps the programs in its own.
  export XDG_CACHE_HOME=$T/cache POCL_KERNEL_CACHE=0
  "$REFSORT" gen u32 3000000 25 > "$T/u32"
  # Its sort of the file first caches the program.
  pipe_same_as_file "$T/u32"
  ls "$XDG_CACHE_HOME"/clsort/*.bin > /dev/null || fail "nothing cached"
  grep -q 'program loaded while the input was read' "$T/err" ||
    fail "the program was loaded after the read: $(cat "$T/err")"
}

@test "a stream in runs past 8 MiB builds its program once" {
  "$REFSORT" gen-kv 500000 39 > "$T/kv"
  [ "$(stat -c %s "$T/kv")" -gt $((8 << 20)) ] || fail "kv input under 8 MiB"
  "$CLSORT" "${DEV[@]}" -f kv "$T/kv" > "$T/want"
  cat "$T/kv" | CLSORT_STREAM_RUN=4000000 CLSORT_STREAM_RATE=1e15 "$CLSORT" "${DEV[@]}" -f kv -vv \
    > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'sorting its runs on .* while it is read' "$T/err" || fail "not in runs: $(cat "$T/err")"
  [ "$(grep -c 'program built' "$T/err")" -le 1 ] || fail "built twice: $(cat "$T/err")"
}

@test "a stream's runs go to temporary files past half of --memory" {
  "$REFSORT" gen-kv 60000 34 > "$T/kv"
  mkdir "$T/tmp"
  stream_same_as_file "$T/kv" -f kv --memory 1M -T "$T/tmp"
  grep -q 'the later ones in temporary files' "$T/err" || fail "no runs in files: $(cat "$T/err")"
  "$REFSORT" gen-rec 60000 16 0 u32 35 > "$T/rec"
  stream_same_as_file "$T/rec" -R 16 -k u32 -s --memory 1M -T "$T/tmp"
  [ -z "$(ls -A "$T/tmp")" ] || fail "temporary files left: $(ls -A "$T/tmp")"
}

@test "a line longer than a stream's memory: the region grows, the sort is the file's" {
  { printf '5:%0300000d\n' 1; "$REFSORT" gen-kv 20000 36; printf '3:%0700000d\n' 2
    "$REFSORT" gen-kv 3000 37; } > "$T/long"
  stream_same_as_file "$T/long" -f kv --memory 1M -T "$BATS_TEST_TMPDIR"
}

@test "a stream in runs: bad lines named by their line in the whole stream, --skip-bad counted" {
  "$REFSORT" gen-kv 30000 38 > "$T/kv"
  sed '25000s/^[0-9]*:/x:/' "$T/kv" > "$T/bad"
  run --separate-stderr bash -c "cat '$T/bad' | CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=1e15 \
    '$CLSORT' ${DEV[*]} --parallel 4 -f kv -o '$T/got'"
  [ "$status" -eq 2 ]
  [[ "$stderr" == "clsort: -:25000: "* ]] || fail "$stderr"
  [ ! -e "$T/got" ]
  stream_same_as_file "$T/bad" -f kv --skip-bad
  grep -q '^clsort: skipped 1 line: 1 with a bad key' "$T/err" || fail "$(cat "$T/err")"
}

@test "a stream in runs from a writer killed mid-record: the truncated record's error" {
  "$REFSORT" gen-rec 20000 16 0 u64 39 > "$T/rec"
  CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=1e15 run --separate-stderr "$CLSORT" "${DEV[@]}" \
    --parallel 4 -R 16 -k u64 \
    -o "$T/got" < <(head -c 160007 "$T/rec"; kill -9 $BASHPID)
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: -: size 160007 is not a multiple of the 16-byte record size (7 trailing bytes)" ] ||
    fail "$stderr"
  [ ! -e "$T/got" ]
}

@test "a stream in runs that fails while its writer still writes ends at once" {
  "$REFSORT" gen-kv 30000 40 > "$T/kv"
  sed '2000s/^[0-9]*:/x:/' "$T/kv" > "$T/bad"
  # The writer sends the bad line, then stalls: the reader is cancelled.
  SECONDS=0
  CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=1e15 run --separate-stderr timeout 30 "$CLSORT" \
    "${DEV[@]}" --parallel 4 \
    -f kv -o "$T/got" < <(cat "$T/bad"; exec sleep 60 3>&-)
  kill $! 2>/dev/null || true
  [ "$status" -eq 2 ] || fail "status $status: $stderr"
  [[ "$stderr" == "clsort: -:2000: "* ]] || fail "$stderr"
  [ "$SECONDS" -lt 30 ]
  [ ! -e "$T/got" ]
  # The output's reader goes away: SIGPIPE, as a filter dies of it.
  run bash -c "cat '$T/kv' | CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=1e15 '$CLSORT' \
    ${DEV[*]} --parallel 4 -f kv |
    head -c 10 > /dev/null; echo \${PIPESTATUS[1]}"
  [ "$output" = 141 ] || fail "status $output"
}

@test "a writer with pauses is sorted in runs, on 1 thread or 4; a fast one is read whole first" {
  "$REFSORT" gen-kv 6000 41 > "$T/in"
  "$CLSORT" -f kv "$T/in" > "$T/want"
  # Pauses of 0.05 s between pieces of about 30 KiB: under 1 MB/s, where
  # runs of 64 KiB count the stream slower than 10 MB/s.
  for p in 1 4 fast; do
    { for ((i = 0; i < 6000; i += 1000)); do
        sed -n "$((i + 1)),$((i + 1000))p" "$T/in"; sleep 0.05
      done; } | CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=$([ $p = fast ] && echo 1000 || echo 1e7) \
        "$CLSORT" -f kv "${DEV[@]}" --parallel ${p/fast/2} -v > "$T/got" 2> "$T/err"
    cmp "$T/want" "$T/got"
    if [ $p = fast ]; then
      ! grep -q 'while it is read' "$T/err" || fail "a fast stream in runs: $(cat "$T/err")"
    else
      grep -q 'while it is read' "$T/err" || fail "not in runs on $p threads: $(cat "$T/err")"
    fi
  done
}

@test "a slow stream that left the CPUs busy is read whole first" {
  "$REFSORT" gen-kv 6000 43 > "$T/in"
  "$CLSORT" -f kv "$T/in" > "$T/want"
  # The writer with pauses of the test above (under 1 MB/s), its runs
  # of 64 KiB slow enough; the CPUs idle less than the share asked for
  # (over 100 %: always) or not (0: never).
  for share in 2 0; do
    { for ((i = 0; i < 6000; i += 1000)); do
        sed -n "$((i + 1)),$((i + 1000))p" "$T/in"; sleep 0.05
      done; } | CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=1e7 CLSORT_STREAM_IDLE=$share \
        "$CLSORT" -f kv "${DEV[@]}" -vv > "$T/got" 2> "$T/err"
    cmp "$T/want" "$T/got" || fail "$share: not the file's sort"
    if [ $share = 2 ]; then
      grep -q 'its first 0 MiB came at [0-9]* MB/s, the CPUs [0-9]*% idle: the CPUs busy, read whole first' \
        "$T/err" || fail "$(cat "$T/err")"
      ! grep -q 'while it is read' "$T/err" || fail "in runs: $(cat "$T/err")"
    else
      grep -q 'the CPUs [0-9]*% idle: sorted in runs as it arrives' "$T/err" || fail "$(cat "$T/err")"
      grep -q 'while it is read' "$T/err" || fail "not in runs: $(cat "$T/err")"
    fi
  done
}

@test "a stream near the line at its first run is looked at again past its second" {
  "$REFSORT" gen-kv 40000 49 > "$T/in"
  "$CLSORT" -f kv "$T/in" > "$T/want"
  # Five pieces of 16 KiB with pauses (under 1 MB/s), then the rest in one
  # write: near the line (from 0, CLSORT_STREAM_NEAR) of 2 MB/s at the
  # first look; the rest fast (read whole) or, under a line of 10^15, slow
  # (in runs).
  slow_then_fast() {
    for i in 0 1 2 3 4; do
      dd if="$T/in" bs=16384 skip=$i count=1 status=none
      [ $i = 4 ] || sleep 0.05
    done
    tail -c +81921 "$T/in" | dd bs=4M iflag=fullblock status=none
  }
  for line in 2e6 1e15; do
    slow_then_fast | CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=$line CLSORT_STREAM_NEAR=0 \
      "$CLSORT" -f kv "${DEV[@]}" -vv > "$T/got" 2> "$T/err"
    cmp "$T/want" "$T/got" || fail "$line: not the file's sort"
    grep -q 'its first 0 MiB came at .*: near the line, looked at again' "$T/err" ||
      fail "$line: $(cat "$T/err")"
    if [ $line = 2e6 ]; then
      grep -q 'the next [0-9]* MiB came at .*: read whole first' "$T/err" || fail "$(cat "$T/err")"
      ! grep -q 'while it is read' "$T/err" || fail "in runs: $(cat "$T/err")"
    else
      grep -q 'the next [0-9]* MiB came at .*: sorted in runs as it arrives' "$T/err" ||
        fail "$(cat "$T/err")"
      grep -q 'while it is read' "$T/err" || fail "not in runs: $(cat "$T/err")"
    fi
  done
  # Ended before the second look: in runs, as the first found it.
  head -c 100000 "$T/in" | sed '$d' > "$T/short"
  "$CLSORT" -f kv "$T/short" > "$T/want"
  { dd if="$T/short" bs=16384 count=5 status=none; sleep 0.05
    dd if="$T/short" bs=16384 skip=5 status=none; } |
    CLSORT_STREAM_RUN=65536 CLSORT_STREAM_RATE=1e15 CLSORT_STREAM_NEAR=0 \
      "$CLSORT" -f kv "${DEV[@]}" -vv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "short: not the file's sort"
  grep -q 'near the line, looked at again' "$T/err" || fail "short: $(cat "$T/err")"
  ! grep -q 'the next' "$T/err" || fail "short: a second look"
  grep -q 'while it is read' "$T/err" || fail "short: not in runs: $(cat "$T/err")"
  # Its memory (1 MiB) full before the second look (past 2 runs of 600000
  # bytes): in runs too, the later ones in temporary files.
  "$CLSORT" -f kv "$T/in" > "$T/want"
  { dd if="$T/in" bs=100000 count=7 status=none; sleep 0.1
    dd if="$T/in" bs=100000 skip=7 status=none; } |
    CLSORT_STREAM_RUN=600000 CLSORT_STREAM_RATE=1e15 CLSORT_STREAM_NEAR=0 \
      "$CLSORT" -f kv "${DEV[@]}" -vv --memory 1M -T "$BATS_TEST_TMPDIR" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got" || fail "memory full: not the file's sort"
  grep -q 'near the line, looked at again' "$T/err" || fail "memory full: $(cat "$T/err")"
  ! grep -q 'the next' "$T/err" || fail "memory full: a second look"
  grep -q 'while it is read' "$T/err" || fail "memory full: not in runs: $(cat "$T/err")"
}

@test "a writer that starts late, then writes fast, is read whole first" {
  "$REFSORT" gen-kv 100000 48 > "$T/in"
  "$CLSORT" -f kv "$T/in" > "$T/want"
  # A second before the first byte, then the pipe's speed: the rate is the
  # writer's once it writes, far over 10 MB/s.  (Runs of 1 MiB: more than
  # the first read brings.)
  { sleep 1; cat "$T/in"; } | CLSORT_STREAM_RUN=1048576 CLSORT_STREAM_RATE=1e7 \
    "$CLSORT" -f kv "${DEV[@]}" -v > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  ! grep -q 'while it is read' "$T/err" || fail "in runs: $(cat "$T/err")"
}

# --- a stream's output given its room while the stream arrives -------------

# paused FILE: FILE's bytes, with half a second's pause after the first
# 40000000: the room's pages are faulted in by then, however busy the
# machine.
paused() {
  head -c 40000000 "$1"
  sleep 0.5
  tail -c +40000001 "$1"
}

@test "a stream's output pages faulted in while it arrives, room of any length: kv lines" {
  # kv lines' room is a byte more than what came (a last line may lack its
  # end): the pages are faulted in whole, up to the room's last one, and
  # on after more room is taken.  Pauses where 32 MiB and 80 MB have come,
  # the room then 33554433 and 67108865 bytes long.
  "$REFSORT" gen-kv 3000000 43 > "$T/kv"
  [ "$(stat -c %s "$T/kv")" -gt 90000000 ] || fail "kv input under 90 MB"
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  { head -c $((32 << 20)) "$T/kv"; sleep 0.5; tail -c +$(((32 << 20) + 1)) "$T/kv" | head -c $((80000000 - (32 << 20)))
    sleep 0.5; tail -c +80000001 "$T/kv"; } | "$CLSORT" -d host --parallel 4 -vv -f kv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  n=$(sed -n 's/^clsort: output: \([0-9]*\) bytes of its pages faulted in in [0-9.]* s while the input arrived$/\1/p' "$T/err")
  [ -n "$n" ] && [ "$n" -ge 67108864 ] || fail "pages faulted in for ${n:-no} bytes: $(cat "$T/err")"
}

@test "a stream's output takes its room while the stream arrives: the file's bytes, after what the shell wrote and with -o" {
  # 48 MB: past the first 8 MiB and a 32 MiB step of room.
  "$REFSORT" gen u32 12000000 42 > "$T/u32"
  "$CLSORT" -d host "$T/u32" > "$T/want"
  # On 4 threads its pages are faulted in behind it, whole pages only: the
  # first holds what the shell wrote.
  { printf 'HEAD'; paused "$T/u32" | "$CLSORT" -d host --parallel 4 -vv 2> "$T/err"; } > "$T/got"
  grep -q 'output: room for [0-9]* bytes taken in .* while the input arrived' "$T/err" ||
    fail "no room taken: $(cat "$T/err")"
  grep -q 'output: [0-9]* bytes of its pages faulted in in .* while the input arrived' "$T/err" ||
    fail "no pages faulted in: $(cat "$T/err")"
  cmp <(printf 'HEAD'; cat "$T/want") "$T/got"
  # With 120 MB free, pages are faulted in for 30 MB of it at most: the
  # sort maps the output again, whole.
  { printf 'HEAD'; paused "$T/u32" |
      CLSORT_MEMORY_AVAILABLE=120000000 "$CLSORT" -d host --parallel 4 -vv 2> "$T/err"; } > "$T/got"
  grep -q 'output: [0-9]* bytes of its pages faulted in' "$T/err" ||
    fail "no pages faulted in with little memory: $(cat "$T/err")"
  cmp <(printf 'HEAD'; cat "$T/want") "$T/got"
  paused "$T/u32" | "$CLSORT" -d host --parallel 4 -vv -o "$T/got" 2> "$T/err"
  grep -q 'output: room for' "$T/err" || fail "no room taken for -o: $(cat "$T/err")"
  grep -q 'bytes of its pages faulted in' "$T/err" || fail "no pages faulted in for -o: $(cat "$T/err")"
  cmp "$T/want" "$T/got"
  # On 2 threads too, its pages left to the sort (the read and the
  # stream's writer keep both busy); on one, none: its copies into the
  # output's pages are no quicker than write(2).
  cat "$T/u32" | "$CLSORT" -d host --parallel 2 -vv > "$T/got" 2> "$T/err"
  grep -q 'output: room for' "$T/err" || fail "no room taken on 2 threads: $(cat "$T/err")"
  ! grep -q 'bytes of its pages faulted in' "$T/err" || fail "pages faulted in on 2 threads"
  cmp "$T/want" "$T/got"
  cat "$T/u32" | "$CLSORT" -d host --parallel 1 -vv > "$T/got" 2> "$T/err"
  ! grep -q 'output: room for' "$T/err" || fail "room taken on 1 thread"
  cmp "$T/want" "$T/got"
  # kv lines, the last without its line end: one byte more than the input.
  "$REFSORT" gen-kv 2500000 43 | head -c -1 > "$T/kv"
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  cat "$T/kv" | "$CLSORT" -d host -f kv --parallel 4 -vv > "$T/got" 2> "$T/err"
  grep -q 'output: room for' "$T/err" || fail "no room taken for kv lines: $(cat "$T/err")"
  cmp "$T/want" "$T/got"
}

@test "a stream's output with its room taken: an error or SIGINT leaves none of it" {
  local pid
  "$REFSORT" gen u32 12000000 44 > "$T/u32"
  # A last key cut short, found once the stream has ended.
  { printf 'HEAD'; { cat "$T/u32"; printf 'x'; } |
      "$CLSORT" -d host --parallel 4 -vv 2> "$T/err" && echo 0 > "$T/status" ||
      echo $? > "$T/status"; } > "$T/got"
  [ "$(cat "$T/status")" -eq 2 ] || fail "status $(cat "$T/status"): $(cat "$T/err")"
  grep -q 'output: room for' "$T/err" || fail "no room taken: $(cat "$T/err")"
  grep -q 'is not a multiple of the 4-byte record size' "$T/err" || fail "$(cat "$T/err")"
  [ "$(cat "$T/got")" = HEAD ] || fail "$(stat -c %s "$T/got") bytes left"
  cat "$T/u32" | { printf 'x'; cat; } | "$CLSORT" -d host --parallel 4 -o "$T/none" 2> /dev/null &&
    fail "a bad stream sorted"
  [ ! -e "$T/none" ]
  # SIGINT once room is taken, the stream still arriving.
  env --default-signal=INT true 2> /dev/null || skip "env --default-signal not available"
  FAULTINJECT_STOP=sized FAULTINJECT_OP=none FAULTINJECT_TARGET=stdout LD_PRELOAD="$FAULTINJECT" \
    env --default-signal=INT "$CLSORT" -d host --parallel 4 < <(cat "$T/u32") > "$T/file" 2> "$T/err" &
  pid=$!
  stopped $pid
  [ "$(stat -c %s "$T/file")" -gt 0 ] || fail "no room taken before the stop"
  kill -INT $pid
  kill -CONT $pid
  status=0
  wait $pid || status=$?
  [ "$status" -eq 130 ] || fail "status $status: $(cat "$T/err")"
  [ ! -s "$T/file" ] || fail "$(stat -c %s "$T/file") bytes left"
}

# --- kv lines parsed ahead: while their stream arrives, or the device starts ---

# lines_ahead_same IN ARGS...: a pipe of IN on 4 threads gives the file's
# bytes, its lines parsed while it arrived.
lines_ahead_same() {
  local in=$1
  shift
  "$CLSORT" -d host "$@" "$in" > "$T/want" || fail "clsort $* $in failed"
  cat "$in" | "$CLSORT" -d host --parallel 4 -vv "$@" > "$T/got" 2> "$T/err" ||
    fail "clsort $* from a pipe failed: $(cat "$T/err")"
  cmp "$T/want" "$T/got" || fail "clsort $*: the pipe's sort differs from the file's"
  grep -q 'lines parsed while the stream arrived' "$T/err" ||
    fail "clsort $*: the lines were not parsed ahead: $(cat "$T/err")"
}

@test "kv lines parsed while their stream arrives give the file's bytes" {
  # About 27 MB: several chunks, and room for the lines grown twice.
  "$REFSORT" gen-kv 1200000 45 > "$T/kv"
  lines_ahead_same "$T/kv" -f kv
  lines_ahead_same "$T/kv" -f kv -r -s
  lines_ahead_same "$T/kv" -f kv -k str
  # Several keys composed into one, kept in blocks beside the words.
  lines_ahead_same "$T/kv" -t: -K 2,str -K 1,u32,r
  # The last line without its line end; lines ended by NUL.
  head -c -1 "$T/kv" > "$T/cut"
  lines_ahead_same "$T/cut" -f kv
  tr '\n' '\0' < "$T/kv" > "$T/z"
  lines_ahead_same "$T/z" -f kv -z
  # On the device, whose run takes the words and line table.
  lines_ahead_same "$T/kv" -f kv "${DEV[@]}"
}

@test "kv lines parsed ahead: a bad line, too many lines for a run, a header, a stream that leaves memory" {
  "$REFSORT" gen-kv 1200000 46 > "$T/kv"
  # A line without a key late in the stream: named as in the file.
  sed '1100000s/^[0-9]*:/x:/' "$T/kv" > "$T/bad"
  run --separate-stderr bash -c "cat '$T/bad' | '$CLSORT' -d host --parallel 4 -vv -f kv -o '$T/got'"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"clsort: -:1100000: "* ]] || fail "$stderr"
  [[ "$stderr" == *"lines parsed again, as usual: a line without a key"* ]] || fail "$stderr"
  [ ! -e "$T/got" ]
  # More lines than a run's index holds: runs, the lines parsed again.
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  cat "$T/kv" | CLSORT_INDEX_BITS=20 "$CLSORT" -d host --parallel 4 -vv -f kv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'lines parsed again, as usual' "$T/err" || fail "$(cat "$T/err")"
  # A header line goes first: not parsed ahead.
  { echo 'key:value'; cat "$T/kv"; } > "$T/head"
  "$CLSORT" -d host -f kv --header "$T/head" > "$T/want"
  cat "$T/head" | "$CLSORT" -d host --parallel 4 -vv -f kv --header > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  ! grep -q 'lines parsed' "$T/err" || fail "$(cat "$T/err")"
  # Past --memory the stream's region goes to a temporary file, and past
  # CLSORT_STREAM_RUN to the sort of its runs: the parse stops first.
  # (Lines of 80 bytes: the lines of 30 MB fit half of --memory 30M.)
  sed 's/$/:padding-padding-padding-padding-padding-padding-padding/' "$T/kv" > "$T/long"
  "$CLSORT" -d host -f kv "$T/long" > "$T/want"
  cat "$T/long" | "$CLSORT" -d host --parallel 4 -vv -f kv --memory 30M -T "$T" > "$T/got" \
    2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'lines parsed ahead: stopped after' "$T/err" || fail "$(cat "$T/err")"
  cat "$T/long" | CLSORT_STREAM_RUN=$((12 << 20)) CLSORT_STREAM_RATE=1e15 "$CLSORT" -d host \
    --parallel 4 -vv -f kv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'while it is read' "$T/err" || fail "not in runs: $(cat "$T/err")"
  grep -q 'lines parsed ahead: stopped after' "$T/err" || fail "$(cat "$T/err")"
  # On 2 threads, by one parser; on one, none.
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  cat "$T/kv" | "$CLSORT" -d host --parallel 2 -vv -f kv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'lines parsed while the stream arrived (.* chunks, 1 parsing thread)' "$T/err" ||
    fail "$(cat "$T/err")"
  cat "$T/kv" | "$CLSORT" -d host --parallel 1 -vv -f kv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  ! grep -q 'lines parsed' "$T/err" || fail "$(cat "$T/err")"
}

@test "kv lines left unparsed at a stream's end are shared out in small chunks" {
  # 12 MB: the first 10 MB, then a pause in which two chunks of 4 MiB are
  # cut and parsed, then the last 2 MB and the stream's end.  The 3.6 MB
  # not cut by then go in chunks of 256 KiB, for the parsers to share (in
  # one, before, parsed by one thread while the sort waited).
  "$REFSORT" gen-kv 380000 48 > "$T/kv"
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  { head -c 10000000 "$T/kv"; sleep 1; tail -c +10000001 "$T/kv"; } |
    "$CLSORT" -d host --parallel 8 -vv -f kv > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  local chunks
  chunks=$(sed -n 's/.*lines parsed while the stream arrived (\([0-9]*\) chunks.*/\1/p' "$T/err")
  [ -n "$chunks" ] && [ "$chunks" -ge 12 ] || fail "$chunks chunks: $(cat "$T/err")"
}

@test "kv lines of a file parsed while the device starts give the host's bytes" {
  "$REFSORT" gen-kv 1200000 47 > "$T/kv"
  for args in "-f kv" "-f kv -r -s" "-f kv -k str" "-f kv --header" "-t: -K 2,str -K 1,u32,r"; do
    "$CLSORT" -d host $args "$T/kv" > "$T/want"
    "$CLSORT" "${DEV[@]}" --parallel 4 -vv $args "$T/kv" > "$T/got" 2> "$T/err" ||
      fail "clsort $args: $(cat "$T/err")"
    cmp "$T/want" "$T/got" || fail "clsort $args: differs from the host's sort"
    grep -q 'lines parsed while the device started' "$T/err" || fail "$args: $(cat "$T/err")"
  done
  # A line without a key: named by its line, as the usual parse does.
  sed '1000000s/^[0-9]*:/x:/' "$T/kv" > "$T/bad"
  run --separate-stderr "$CLSORT" "${DEV[@]}" --parallel 4 -vv -f kv "$T/bad"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"clsort: $T/bad:1000000: "* ]] || fail "$stderr"
  # Several runs: the parse stops once the device says so.
  "$CLSORT" -d host -f kv "$T/kv" > "$T/want"
  "$CLSORT" "${DEV[@]}" --parallel 4 -vv -S 4M -f kv "$T/kv" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  grep -q 'lines parsed again, as usual: more than one run' "$T/err" || fail "$(cat "$T/err")"
  # More lines than a run's index holds, known from the file's count: none
  # parsed ahead.
  CLSORT_INDEX_BITS=20 "$CLSORT" "${DEV[@]}" --parallel 4 -vv -f kv "$T/kv" > "$T/got" 2> "$T/err"
  cmp "$T/want" "$T/got"
  ! grep -q 'lines parsed' "$T/err" || fail "$(cat "$T/err")"
  # The host engine parses as it goes: none ahead.
  "$CLSORT" -d host --parallel 4 -vv -f kv "$T/kv" > "$T/got" 2> "$T/err"
  ! grep -q 'lines parsed' "$T/err" || fail "$(cat "$T/err")"
}
