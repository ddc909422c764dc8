#!/usr/bin/env bats
# The caller answered once the output is complete: a sort that may open a
# GPU runs in a worker process, and the process the caller started ends
# with the worker's status, or with 0 as soon as the worker's output is
# whole, while the worker releases the device.  CLSORT_ANSWER=early starts
# the worker on any device (here PoCL's CPU), =late never.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
  export CLSORT_ANSWER=early
  pid= worker=
}

# A test that failed with clsort stopped leaves nothing behind.
teardown() {
  local p
  for p in $worker $pid; do
    kill -KILL "$p" 2> /dev/null || true
  done
}

# worker_of PID: the pid of PID's child process named clsort, if it has one.
# Each process's status is read on its own: one that ends while the others
# are looked at is passed over (awk, given them all, stopped at the first
# it could not open, with status 2, and failed the test).
worker_of() {
  local f key value name ppid
  for f in /proc/[0-9]*/status; do
    name= ppid=
    while read -r key value; do
      case $key in
      Name:) name=$value ;;
      PPid:) ppid=$value; break ;;
      esac
    done < "$f" 2> /dev/null || continue
    if [ "$name" = clsort ] && [ "$ppid" = "$1" ]; then
      f=${f#/proc/}
      echo "${f%/status}"
    fi
  done
}

# ended PID: wait until no process PID is left (a worker the caller's end
# took with it), failing after 10 s.
ended() {
  local i
  for ((i = 0; i < 200; i++)); do
    [ -e "/proc/$1" ] || return 0
    [ "$(awk '{ print $3 }' "/proc/$1/stat" 2> /dev/null)" = Z ] && return 0
    sleep 0.05
  done
  fail "process $1 still there: $(cat "/proc/$1/status")"
}

# stopped_at_write OPTION...: start clsort -o $T/d/out $T/in, its worker
# stopped at its first write into the output's temporary file; sets pid
# (the caller's process, stopped with it) and worker.
stopped_at_write() {
  FAULTINJECT_STOP=1 FAULTINJECT_OP=none FAULTINJECT_TARGET=tmp LD_PRELOAD="$FAULTINJECT" \
    env --default-signal=INT,TERM "$CLSORT" "${DEV[@]}" "$@" -o "$T/d/out" "$T/in" 2> "$T/err" &
  pid=$!
  stopped $pid
  worker=$(worker_of $pid)
  [ -n "$worker" ] || fail "no worker under $pid"
  stopped $worker
}

@test "the worker's output is whole when the caller's process ends: pipes, -o, every format" {
  "$REFSORT" gen u32 300007 1 > "$T/in.bin"
  "$REFSORT" gen-kv 50021 2 > "$T/in.kv"
  for f in bin kv; do
    CLSORT_ANSWER=late "$CLSORT" "${DEV[@]}" -f $f "$T/in.$f" > "$T/want"
    cat "$T/in.$f" | "$CLSORT" "${DEV[@]}" -f $f > "$T/pipe"
    cmp "$T/want" "$T/pipe"
    "$CLSORT" "${DEV[@]}" -f $f "$T/in.$f" -o "$T/o"
    cmp "$T/want" "$T/o"
    "$CLSORT" "${DEV[@]}" -f $f "$T/in.$f" | cmp "$T/want" -
    "$CLSORT" "${DEV[@]}" -f $f "$T/in.$f" --sync -o "$T/s"
    cmp "$T/want" "$T/s"
  done
}

@test "a worker stopped stops the caller's process; continued, the sort ends with 0" {
  "$REFSORT" gen u32 100003 3 > "$T/in"
  mkdir "$T/d"
  "$REFSORT" sort -k u32 < "$T/in" > "$T/want"
  stopped_at_write
  # The output's temporary file is the worker's, not the caller's.
  ls -l "/proc/$worker/fd" | grep -q "$T/d/" || fail "$(ls -l "/proc/$worker/fd")"
  ! ls -l "/proc/$pid/fd" | grep -q "$T/d/"
  kill -CONT $pid
  status=0
  wait $pid || status=$?
  [ "$status" -eq 0 ] || fail "status $status: $(cat "$T/err")"
  cmp "$T/want" "$T/d/out"
  # A worker that stops before the caller's process waits for it (a
  # loaded machine, the caller's process not yet scheduled after the
  # fork): the stop is not lost.
  rm -f "$T/d/out"
  FAULTINJECT_FORK_PAUSE=300 stopped_at_write
  kill -CONT $pid
  status=0
  wait $pid || status=$?
  [ "$status" -eq 0 ] || fail "paused caller: status $status: $(cat "$T/err")"
  cmp "$T/want" "$T/d/out"
}

@test "SIGINT and SIGTERM to the caller's process go to the worker: its status, OUT as it was" {
  local sig want
  "$REFSORT" gen u32 100003 4 > "$T/in"
  mkdir "$T/d"
  for sig in INT TERM; do
    printf 'old\n' > "$T/d/out"
    stopped_at_write
    kill -$sig $pid
    kill -CONT $pid
    status=0
    wait $pid || status=$?
    want=$((128 + $(kill -l $sig)))
    [ "$status" -eq "$want" ] || fail "$sig: status $status: $(cat "$T/err")"
    ended $worker
    [ "$(cat "$T/d/out")" = old ] || fail "$sig: OUT changed"
    [ "$(ls -A "$T/d")" = out ] || fail "$sig: left beside the output: $(ls -A "$T/d")"
  done
}

@test "SIGKILL to the caller's process ends the worker too: OUT as it was" {
  "$REFSORT" gen u32 100003 5 > "$T/in"
  mkdir "$T/d"
  printf 'old\n' > "$T/d/out"
  stopped_at_write
  kill -KILL $pid
  wait $pid || true
  ended $worker
  [ "$(cat "$T/d/out")" = old ]
}

@test "the worker's errors and SIGPIPE are the caller's: same status, same message" {
  local want_err
  run --separate-stderr "$CLSORT" "${DEV[@]}" "$T/missing"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: cannot read $T/missing: No such file or directory" ]
  printf '1:a\nnokey\n' > "$T/bad"
  CLSORT_ANSWER=late run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv "$T/bad"
  want_err=$stderr
  [ "$status" -eq 2 ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f kv "$T/bad"
  [ "$status" -eq 2 ]
  [ "$stderr" = "$want_err" ]
  "$REFSORT" gen u32 3000017 6 > "$T/in"
  reader_closes "${DEV[@]}" "$T/in"
  reader_closes_sigpipe_ignored "${DEV[@]}" "$T/in"
}

@test "standard streams the caller closed: the statuses and messages of one process" {
  local closed
  "$REFSORT" gen u32 10007 9 > "$T/in"
  "$REFSORT" sort -k u32 < "$T/in" > "$T/want"
  # The answer's pipe must not take the place of a closed standard stream.
  for closed in '>&-' '<&- >&-'; do
    run --separate-stderr bash -c "\"\$0\" \"\$@\" $closed" "$CLSORT" "${DEV[@]}" "$T/in"
    [ "$status" -eq 2 ] || fail "$closed: status $status"
    [ "$stderr" = "clsort: write error on standard output: Bad file descriptor" ] ||
      fail "$closed: $stderr"
  done
  "$CLSORT" "${DEV[@]}" "$T/in" -o "$T/out" <&- >&-
  cmp "$T/want" "$T/out"
}

@test "the device is released after the answer: -vv says all but that" {
  "$REFSORT" gen u32 100003 7 > "$T/in"
  CLSORT_ANSWER=late "$CLSORT" "${DEV[@]}" -vv "$T/in" 2> "$T/late" > /dev/null
  grep -q "^clsort: device released in" "$T/late" || fail "$(cat "$T/late")"
  "$CLSORT" "${DEV[@]}" -vv "$T/in" 2> "$T/early" > /dev/null
  grep -q "^clsort: total " "$T/early" || fail "$(cat "$T/early")"
  ! grep -q "device released" "$T/early"
}

# no_worker OPTION...: clsort OPTION... reading $T/in from a pipe,
# stopped at its first read: it has no child process.
no_worker() {
  FAULTINJECT_STOP=read FAULTINJECT_OP=none FAULTINJECT_TARGET=stdin LD_PRELOAD="$FAULTINJECT" \
    "$CLSORT" "$@" < <(cat "$T/in") > "$T/out" 2> "$T/err" &
  pid=$!
  stopped $pid
  [ -z "$(worker_of $pid)" ] || fail "$*: a worker under $pid"
  kill -CONT $pid
  wait $pid || true
}

@test "no worker for -c or -m, with CLSORT_ANSWER=late, on the host or the CPU; one by default" {
  "$REFSORT" gen u32 100003 8 > "$T/in"
  no_worker "${DEV[@]}" -c
  no_worker "${DEV[@]}" -m
  CLSORT_ANSWER=late no_worker "${DEV[@]}"
  unset CLSORT_ANSWER
  no_worker -d host
  no_worker -d cpu
  # The default device may be a GPU: the caller's process waits for a
  # worker, which stops at its first read, and it with it.
  FAULTINJECT_STOP=read FAULTINJECT_OP=none FAULTINJECT_TARGET=stdin LD_PRELOAD="$FAULTINJECT" \
    "$CLSORT" < <(cat "$T/in") > "$T/out" 2> "$T/err" &
  pid=$!
  stopped $pid
  worker=$(worker_of $pid)
  [ -n "$worker" ] || fail "no worker under $pid"
  stopped $worker
  kill -CONT $pid
  wait $pid
  "$REFSORT" sort -k u32 < "$T/in" | cmp - "$T/out"
}
