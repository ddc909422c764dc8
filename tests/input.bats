#!/usr/bin/env bats
# Inputs: standard input that a shell or an earlier command has partly
# read, files that stat calls empty but that have contents.
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
