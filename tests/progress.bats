#!/usr/bin/env bats
# --progress: the phase, bytes done of the total, rate and time left on
# standard error.  On a terminal (a pty made by script(1)) one line is
# redrawn in place, from the start of each phase on, and erased at the end;
# elsewhere each phase ends with one line.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
  "$REFSORT" gen u32 1000003 31 > "$T/in"
  "$REFSORT" sort < "$T/in" > "$T/want"
}

# on_tty COMMAND...: run the command on a pseudo-terminal; what it shows
# there goes to $T/tty.
on_tty() {
  command -v script > /dev/null || skip "no script(1) to make a pseudo-terminal"
  local cmd
  printf -v cmd '%q ' "$@"
  script -qfec "$cmd" /dev/null > "$T/tty"
}

@test "--progress on a terminal: one line redrawn in place, erased at the end" {
  on_tty "$CLSORT" "${DEV[@]}" --progress -o "$T/out" "$T/in"
  cmp "$T/want" "$T/out"
  grep -q $'\rclsort: sort: [0-9.]* [KMG]*i*B of 3.8 MiB ([0-9]*%), ' "$T/tty" ||
    fail "no sort line: $(od -c "$T/tty" | head)"
  grep -q $'\rclsort: write: [0-9.]* [KMG]*i*B of 3.8 MiB ([0-9]*%), ' "$T/tty" ||
    fail "no write line: $(od -c "$T/tty" | head)"
  # Nothing but redrawn lines: no line ends, and the last thing is the erase.
  [ "$(wc -l < "$T/tty")" -eq 0 ] || fail "a line end on the terminal: $(od -c "$T/tty" | tail)"
  [ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] ||
    fail "not erased at the end: $(od -c "$T/tty" | tail -3)"
}

@test "--progress on a terminal: a message takes the line away first" {
  mkdir "$T/d"
  on_tty env FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC LD_PRELOAD="$FAULTINJECT" \
    "$CLSORT" "${DEV[@]}" --progress -o "$T/d/out" "$T/in" || true
  grep -q $'\r\033\\[Kclsort: write error on '"$T/d/out: No space left on device" "$T/tty" ||
    fail "the message shares the progress line: $(od -c "$T/tty" | tail)"
  [ -z "$(ls -A "$T/d")" ]
}

@test "--progress elsewhere: one line per phase, read, sort, merge and write" {
  "$CLSORT" "${DEV[@]}" --progress "$T/in" > "$T/out" 2> "$T/err"
  cmp "$T/want" "$T/out"
  grep -c '' "$T/err" | grep -qx 2 || fail "$(cat "$T/err")"
  grep -q '^clsort: sort: 3.8 MiB in [0-9.]* s, [0-9.]* [KMG]*i*B/s$' "$T/err" || fail "$(cat "$T/err")"
  grep -q '^clsort: write: 3.8 MiB in [0-9.]* s, [0-9.]* [KMG]*i*B/s$' "$T/err" || fail "$(cat "$T/err")"
  ! grep -q $'\r' "$T/err" || fail "redrawn off a terminal"
  # From a pipe, merged runs.
  cat "$T/in" | CLSORT_MERGE_RUNS=1 "$CLSORT" "${DEV[@]}" --progress -S 256K > "$T/out" 2> "$T/err"
  cmp "$T/want" "$T/out"
  [ "$(cut -d: -f2 "$T/err" | tr -d ' ' | tr '\n' ,)" = read,sort,merge, ] || fail "$(cat "$T/err")"
  grep -q '^clsort: merge: 3.8 MiB in ' "$T/err" || fail "$(cat "$T/err")"
  # Key ranges, kv lines.
  "$REFSORT" gen-kv 100000 32 > "$T/kv"
  "$CLSORT" "${DEV[@]}" --progress -f kv -S 256K "$T/kv" 2> "$T/err" | cmp - <("$REFSORT" sort -f kv < "$T/kv")
  grep -q '^clsort: sort: ' "$T/err" || fail "$(cat "$T/err")"
  # -m: a merge alone.
  "$REFSORT" sort < "$T/in" > "$T/a"
  "$CLSORT" --progress -m "$T/a" "$T/want" > /dev/null 2> "$T/err"
  [ "$(cut -d: -f2 "$T/err" | tr -d ' ' | tr '\n' ,)" = merge, ] || fail "$(cat "$T/err")"
  # Nothing with --check, which has no phases.
  "$CLSORT" --progress -c "$T/want" 2> "$T/err"
  [ ! -s "$T/err" ]
}
