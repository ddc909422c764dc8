#!/usr/bin/env bats
# The -o file (and standard output that is a regular file).  When the
# output's size is known beforehand (binary records sorted on the device)
# and is at most half of --memory, the temporary -o file is allocated at
# that size and mapped while the device starts, and the sorted records are
# copied, decoded or gathered into the mapping by several threads.  Whatever the path, -o FILE must hold byte for byte what
# standard output gets; where no mapping can be had, write(2) takes over.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
}

# same_as_stdout WHAT IN [OPTION]...: clsort -o $T/out writes what clsort
# writes to standard output ($T/want); -vv of the -o sort goes to $T/err.
same_as_stdout() {
  local what=$1 in=$2
  shift 2
  "$CLSORT" "${DEV[@]}" "$@" "$in" > "$T/want" || fail "clsort $* failed on $what"
  rm -f "$T/out"
  "$CLSORT" "${DEV[@]}" -vv "$@" -o "$T/out" "$in" 2> "$T/err" ||
    fail "clsort $* -o failed on $what: $(cat "$T/err")"
  cmp "$T/want" "$T/out" || fail "-o differs from standard output with $* on $what"
}

# The last -o sort wrote through a mapping, or did not.
mapped() {
  grep -q "through a shared mapping" "$T/err" || fail "not written through a mapping: $(cat "$T/err")"
}
not_mapped() {
  ! grep -q "through a shared mapping" "$T/err" || fail "written through a mapping"
}

# --- the mapped path -------------------------------------------------------------

@test "u32 keys, 0, 1, 1000003 and 5000011 of them: -o holds what stdout gets" {
  local n r
  for n in 0 1 1000003 5000011; do
    "$REFSORT" gen u32 $n $n > "$T/in"
    for r in "" -r; do
      same_as_stdout "$n keys" "$T/in" $r
      if [ $n -eq 0 ]; then
        [ -f "$T/out" ] && [ ! -s "$T/out" ]
        not_mapped
      else
        mapped
      fi
    done
  done
  # The reference order too, for the largest.
  "$REFSORT" sort -r < "$T/in" | cmp - "$T/out"
}

@test "signed keys descending: decoded straight into the mapping" {
  local n k
  for n in 1 1000003 5000011; do
    for k in i32 i64; do
      "$REFSORT" gen $k $n $n few > "$T/in"
      same_as_stdout "$n $k keys" "$T/in" -k $k -r
      mapped
    done
  done
  "$REFSORT" sort -k i64 -r < "$T/in" | cmp - "$T/out"
}

@test "f64 and f32 keys with --stable: records gathered into the mapping" {
  local n k
  for n in 1 1000003; do
    for k in f64 f32; do
      "$REFSORT" gen $k $n $n special > "$T/in"
      same_as_stdout "$n $k keys" "$T/in" -k $k --stable
      mapped
      same_as_stdout "$n $k keys, descending" "$T/in" -k $k --stable -r
      mapped
    done
  done
  "$REFSORT" sort -k f32 -r < "$T/in" | cmp - "$T/out"
}

@test "records with the key inside (-R --key-offset): gathered into the mapping" {
  local n
  for n in 1 1000003; do
    "$REFSORT" gen-rec $n 12 4 i32 $n few > "$T/in"
    same_as_stdout "$n 12-byte records" "$T/in" -R 12 --key-offset=4 -k i32
    mapped
    "$REFSORT" gen-rec $n 24 8 f64 $n special > "$T/in"
    same_as_stdout "$n 24-byte records" "$T/in" -R 24 --key-offset=8 -k f64 -r
    mapped
  done
  "$REFSORT" sort -R 24 --key-offset 8 -k f64 -r < "$T/in" | cmp - "$T/out"
}

@test "--parallel=1, 3 and 64: copies and decodes cut in shares of every size" {
  local p
  "$REFSORT" gen u32 5000011 7 > "$T/in"
  for p in 1 3 64; do
    same_as_stdout "5000011 keys" "$T/in" --parallel=$p
    mapped
    same_as_stdout "5000011 keys, descending" "$T/in" --parallel=$p -r
    mapped
  done
  "$REFSORT" gen-rec 1000003 20 0 u64 8 > "$T/in"
  same_as_stdout "1000003 20-byte records" "$T/in" --parallel=3 -R 20 -k u64
  mapped
}

@test "-o onto its own input: replaced by the sorted keys through the mapping" {
  "$REFSORT" gen i32 1000003 9 > "$T/in"
  cp "$T/in" "$T/self"
  "$REFSORT" sort -k i32 -r < "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -vv -k i32 -r -o "$T/self" "$T/self" 2> "$T/err" || fail "$(cat "$T/err")"
  mapped
  cmp "$T/want" "$T/self"
  [ -z "$(find "$T" -name '.clsort.*')" ]
}

@test "-S 4K: key ranges, runs merged on the device, in one stream and in parallel parts, into the mapping" {
  "$REFSORT" gen u32 100003 10 few > "$T/in"
  CLSORT_MERGE_RUNS=ranges same_as_stdout "100003 keys in key ranges" "$T/in" -S 4K
  mapped
  grep -q "cut into [0-9]* key ranges" "$T/err" || fail "no key ranges: $(cat "$T/err")"
  same_as_stdout "100003 keys in runs merged on the device" "$T/in" -S 4K
  mapped
  grep -q "then merged on the device" "$T/err" || fail "not merged on the device: $(cat "$T/err")"
  CLSORT_MERGE_RUNS=host same_as_stdout "100003 keys in runs" "$T/in" -S 4K
  mapped
  grep -q "kept in memory" "$T/err" || fail "no runs in memory: $(cat "$T/err")"
  CLSORT_MERGE_RUNS=host CLSORT_PARALLEL_MERGE_MIN=1 same_as_stdout "100003 keys, parallel merge" \
    "$T/in" -S 4K -r
  mapped
  "$REFSORT" gen-rec 30011 16 8 f64 11 special > "$T/in"
  same_as_stdout "30011 records in key ranges" "$T/in" -S 4K -R 16 --key-offset=8 -k f64 --stable
  mapped
  CLSORT_MERGE_RUNS=host same_as_stdout "30011 records in runs" "$T/in" -S 4K -R 16 --key-offset=8 \
    -k f64 --stable
  mapped
}

@test "an output of more than half of --memory: mapped, its pages faulted in as written, spilled or not" {
  "$REFSORT" gen u32 100003 12 > "$T/in"
  mkdir "$T/tmp"
  # Runs spilled and merged (bare keys would else be cut into key ranges in
  # the output's place).
  CLSORT_MERGE_RUNS=host same_as_stdout "100003 keys, spilling" "$T/in" -S 4K --memory=64K -T "$T/tmp"
  grep -q "through a shared mapping of 400012 bytes, its pages faulted in as they are written" \
    "$T/err" || fail "not mapped as written: $(cat "$T/err")"
  grep -q "kept in temporary files" "$T/err" || fail "no spilled runs: $(cat "$T/err")"
  grep -q "merge by sorting into the output's mapping" "$T/err" ||
    fail "the merge did not write into the mapping: $(cat "$T/err")"
  [ -z "$(ls -A "$T/tmp")" ]
  same_as_stdout "100003 keys, --memory 2 bytes short of twice their size" "$T/in" --memory=800022
  grep -q "through a shared mapping of 400012 bytes, its pages faulted in as they are written" \
    "$T/err" || fail "not mapped as written: $(cat "$T/err")"
  same_as_stdout "100003 keys, --memory twice their size" "$T/in" --memory=800024
  mapped
  ! grep -q "faulted in as they are written" "$T/err" || fail "pages not faulted in ahead"
}

@test "kv lines: gathered into the mapping, cut to what was written" {
  "$REFSORT" gen-kv 200003 13 > "$T/in"
  same_as_stdout "200003 kv lines" "$T/in" -f kv
  mapped
  [ "$(stat -c %s "$T/out")" -eq "$(stat -c %s "$T/in")" ] || fail "size $(stat -c %s "$T/out")"
  # -u drops lines, a last line without its end gets one, several inputs.
  same_as_stdout "200003 kv lines, -u" "$T/in" -f kv -u
  mapped
  [ "$(stat -c %s "$T/out")" -lt "$(stat -c %s "$T/in")" ] || fail "-u dropped nothing"
  head -c -1 "$T/in" > "$T/cut"
  printf '7:a\n3:b' > "$T/two"
  same_as_stdout "two inputs without a last line end" "$T/cut" -f kv "$T/two"
  mapped
  tail -c 4 "$T/out" | od -c | grep -q '\\n' || fail "no last line end"
  same_as_stdout "whole lines, -z" "$T/in" -z -F 0 -k str
  mapped
  printf 'x:1\n' >> "$T/cut"
  same_as_stdout "--skip-bad" "$T/cut" -f kv --skip-bad
  mapped
}

@test "the host engine on 2 threads or more: an output of 16 MiB or more gathered into a mapping" {
  "$REFSORT" gen u32 4200007 23 > "$T/in"
  "$CLSORT" -d host --parallel=1 "$T/in" > "$T/want"
  for opts in "--parallel=2" "--parallel=4" "--parallel=5 -S 1M"; do
    rm -f "$T/out"
    "$CLSORT" -d host $opts -vv -o "$T/out" "$T/in" 2> "$T/err" || fail "$(cat "$T/err")"
    cmp "$T/want" "$T/out" || fail "$opts"
    mapped
  done
  grep -q "runs of up to" "$T/err" && grep -q "merge pass" "$T/err" || fail "no runs: $(cat "$T/err")"
  "$CLSORT" -d host --parallel=1 -vv -o "$T/out" "$T/in" 2> "$T/err"
  cmp "$T/want" "$T/out"
  not_mapped
  "$REFSORT" gen-kv 600011 29 > "$T/in"
  "$CLSORT" -d host --parallel=2 -f kv "$T/in" > "$T/want"
  "$CLSORT" -d host --parallel=4 -vv -f kv -o "$T/out" "$T/in" 2> "$T/err"
  cmp "$T/want" "$T/out"
  mapped
  "$CLSORT" -d host --parallel=4 -vv -f kv "$T/in" > "$T/out" 2> "$T/err"
  cmp "$T/want" "$T/out"
  grep -q "writing standard output through a shared mapping" "$T/err" || fail "$(cat "$T/err")"
  "$CLSORT" -d host --parallel=4 -vv -F 0 -k str -o "$T/out" "$T/in" 2> "$T/err"
  LC_ALL=C sort -s "$T/in" | cmp - "$T/out"
  mapped
  head -c 4000000 "$T/in" | sed '$d' > "$T/small"
  "$CLSORT" -d host --parallel=4 -vv -f kv -o "$T/out" "$T/small" 2> "$T/err"
  sort -s -t: -k1,1n "$T/small" | cmp - "$T/out"
  not_mapped
}

@test "the host engine: bare integer keys and packed records sorted through the output's place" {
  local spec k n dist r opts
  for spec in "u32 4200007 rand" "i32 4200007 few" "u64 2100011 rand" "i64 2100011 equal" "u32 4200007 sorted"; do
    read -r k n dist <<< "$spec"
    "$REFSORT" gen "$k" "$n" 31 "$dist" > "$T/in"
    for r in "" -r; do
      "$REFSORT" sort -k "$k" $r < "$T/in" > "$T/want"
      rm -f "$T/out"
      "$CLSORT" -d host --parallel=2 -vv -k "$k" $r -o "$T/out" "$T/in" 2> "$T/err" || fail "$(cat "$T/err")"
      cmp "$T/want" "$T/out" || fail "$spec $r from the file"
      # A file's keys: through the output's place where it is on a disk.
      if in_memory "$T"; then
        ! grep -q "output's place" "$T/err" || fail "$spec: a file's sort into tmpfs took the output's place"
      else
        grep -q "keys sorted through the output's place" "$T/err" ||
          fail "$spec: a file's sort into a disk's file: $(cat "$T/err")"
      fi
      cat "$T/in" | "$CLSORT" -d host --parallel=3 -vv -k "$k" $r > "$T/out" 2> "$T/err" ||
        fail "$(cat "$T/err")"
      cmp "$T/want" "$T/out" || fail "$spec $r through a pipe into a file"
      grep -q "keys sorted through the output's place" "$T/err" || fail "$spec: $(cat "$T/err")"
    done
  done
  # Not where the output is not mapped (one thread, a pipe), nor for -u.
  cat "$T/in" | "$CLSORT" -d host --parallel=1 -vv -k u32 -o "$T/out" 2> "$T/err"
  "$REFSORT" sort -k u32 < "$T/in" | cmp - "$T/out"
  ! grep -q "output's place" "$T/err" || fail "took the output's place: $(cat "$T/err")"
  cat "$T/in" | "$CLSORT" -d host --parallel=2 -vv -k u32 2> "$T/err" | cmp "$T/out" -
  ! grep -q "output's place" "$T/err" || fail "took the output's place: $(cat "$T/err")"
  cat "$T/in" | "$CLSORT" -d host --parallel=2 -vv -u -k u32 -o "$T/out" 2> "$T/err"
  "$REFSORT" sort -u -k u32 < "$T/in" | cmp - "$T/out"
  ! grep -q "output's place" "$T/err" || fail "took the output's place: $(cat "$T/err")"
  # Nor for a file's keys into tmpfs, into a pipe, or on one thread.
  "$REFSORT" sort -k u32 < "$T/in" > "$T/want"
  if in_memory /dev/shm; then
    local shm
    shm=$(mktemp -d /dev/shm/clsort-test.XXXXXX)
    "$CLSORT" -d host --parallel=2 -vv -k u32 -o "$shm/out" "$T/in" 2> "$T/err"
    cmp "$T/want" "$shm/out" || { rm -rf "$shm"; fail "a file into tmpfs"; }
    rm -rf "$shm"
    ! grep -q "output's place" "$T/err" || fail "a file into tmpfs took the output's place"
  fi
  "$CLSORT" -d host --parallel=2 -vv -k u32 "$T/in" 2> "$T/err" | cmp "$T/want" -
  ! grep -q "output's place" "$T/err" || fail "a file into a pipe took the output's place"
  "$CLSORT" -d host --parallel=1 -vv -k u32 -o "$T/out" "$T/in" 2> "$T/err"
  cmp "$T/want" "$T/out" || fail "a file on one thread"
  ! grep -q "output's place" "$T/err" || fail "a file on one thread took the output's place"
  # Records that fill their words, unpacked where they lie.
  for spec in "16 0 u64" "16 8 i64" "8 4 u32" "8 0 i32"; do
    read -r n k dist <<< "$spec"
    "$REFSORT" gen-rec $((16800000 / n)) "$n" "$k" "$dist" 33 few > "$T/in"
    for r in "" -r; do
      opts="-R $n --key-offset $k -k $dist $r"
      "$REFSORT" sort $opts < "$T/in" > "$T/want"
      "$CLSORT" -d host --parallel=2 -vv $opts -o "$T/out" "$T/in" 2> "$T/err" || fail "$(cat "$T/err")"
      cmp "$T/want" "$T/out" || fail "$opts from the file"
      in_memory "$T" || grep -q "records sorted through the output's place" "$T/err" ||
        fail "$opts from the file: $(cat "$T/err")"
      cat "$T/in" | "$CLSORT" -d host --parallel=2 -vv $opts -o "$T/out" 2> "$T/err"
      cmp "$T/want" "$T/out" || fail "$opts through a pipe into a file"
      grep -q "records sorted through the output's place" "$T/err" || fail "$opts: $(cat "$T/err")"
    done
  done
  # Standard output a file that holds something already: its place lies
  # after it, which the sort's words take only where it is a multiple of
  # their size (their passes store whole aligned cache lines there).
  "$REFSORT" gen u32 4200007 36 > "$T/in"
  "$REFSORT" sort -k u32 < "$T/in" > "$T/want"
  for pre in x prefix_ 1234 12345678; do
    { printf '%s' "$pre"; cat "$T/in" | "$CLSORT" -d host --parallel=2 -vv -k u32 2> "$T/err"; } > "$T/out" ||
      fail "after '$pre': $(cat "$T/err")"
    cmp <(printf '%s' "$pre"; cat "$T/want") "$T/out" || fail "after '$pre'"
    case ${#pre} in
      4 | 8) grep -q "keys sorted through the output's place" "$T/err" || fail "after '$pre': $(cat "$T/err")" ;;
      *) ! grep -q "output's place" "$T/err" || fail "after '$pre': took the output's place" ;;
    esac
  done
  "$REFSORT" gen-rec 1050011 16 8 u64 37 few > "$T/in"
  "$REFSORT" sort -R 16 --key-offset 8 -k u64 < "$T/in" > "$T/want"
  for pre in 1234 12345678 1234567812345678; do
    { printf '%s' "$pre"; cat "$T/in" | "$CLSORT" -d host --parallel=2 -vv -R 16 --key-offset 8 -k u64 \
        2> "$T/err"; } > "$T/out" || fail "records after '$pre': $(cat "$T/err")"
    cmp <(printf '%s' "$pre"; cat "$T/want") "$T/out" || fail "records after '$pre'"
  done
  # Records wider than their words or float keys are gathered.
  "$REFSORT" gen-rec 1400011 12 4 u64 34 > "$T/in"
  cat "$T/in" | "$CLSORT" -d host --parallel=2 -vv -R 12 --key-offset 4 -k u64 -o "$T/out" 2> "$T/err"
  "$REFSORT" sort -R 12 --key-offset 4 -k u64 < "$T/in" | cmp - "$T/out"
  ! grep -q "output's place" "$T/err" || fail "took the output's place: $(cat "$T/err")"
  "$REFSORT" gen-rec 1050011 16 0 f64 35 > "$T/in"
  cat "$T/in" | "$CLSORT" -d host --parallel=2 -vv -R 16 -k f64 -o "$T/out" 2> "$T/err"
  "$REFSORT" sort -R 16 -k f64 < "$T/in" | cmp - "$T/out"
  ! grep -q "output's place" "$T/err" || fail "took the output's place: $(cat "$T/err")"
}

# --- write(2), where the size is not known or no mapping can be had ------------

@test "kv lines gathered in rounds of buffers on 1, 2 and 3 threads: the bytes of sort -s" {
  # 32768 records a thread a round: several rounds, a short last one.
  "$REFSORT" gen-kv 200003 17 > "$T/in"
  sort -s -t: -k1,1n "$T/in" > "$T/want"
  for p in 1 2 3; do
    "$CLSORT" -d host --parallel=$p -f kv -o "$T/out" "$T/in"
    cmp "$T/want" "$T/out" || fail "--parallel=$p"
    "$CLSORT" "${DEV[@]}" --parallel=$p -t: -F 0 -k str "$T/in" | cmp <(sort -s "$T/in") - ||
      fail "-F 0, --parallel=$p"
  done
}

@test "the host shortcut: written as before" {
  "$REFSORT" gen u32 1000 14 > "$T/in"
  "$CLSORT" "$T/in" > "$T/want"
  "$CLSORT" -vv -o "$T/out" "$T/in" 2> "$T/err"
  cmp "$T/want" "$T/out"
  not_mapped
}

@test "standard output into a file: mapped from its offset, left where the data ends" {
  "$REFSORT" gen u32 1000003 14 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" -o "$T/want"
  "$CLSORT" "${DEV[@]}" -vv "$T/in" > "$T/file" 2> "$T/err"
  cmp "$T/want" "$T/file"
  grep -q "writing standard output through a shared mapping" "$T/err" || fail "$(cat "$T/err")"
  # After other output, and followed by more: the shell's file offset moves on.
  { echo head; "$CLSORT" "${DEV[@]}" -vv "$T/in" 2> "$T/err"; echo tail; } > "$T/file"
  { echo head; cat "$T/want"; echo tail; } | cmp - "$T/file"
  mapped
  "$REFSORT" gen-kv 200003 15 > "$T/kv"
  { printf 'x'; "$CLSORT" "${DEV[@]}" -vv -f kv "$T/kv" 2> "$T/err"; echo tail; } > "$T/file"
  { printf 'x'; sort -s -t: -k1,1n "$T/kv"; echo tail; } | cmp - "$T/file"
  mapped
  # A bad line: what came before stays, none of the sort's output.
  { cat "$T/kv"; echo "nokey:x"; } > "$T/bad"
  { echo head; "$CLSORT" "${DEV[@]}" -f kv "$T/bad" || echo "status $?"; } > "$T/file" 2> "$T/err"
  printf 'head\nstatus 2\n' | cmp - "$T/file"
}

@test "standard output appended to, or a file with more after the offset: written with write(2)" {
  "$REFSORT" gen u32 1000003 16 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" -o "$T/want"
  echo pre > "$T/file"
  "$CLSORT" "${DEV[@]}" -vv "$T/in" >> "$T/file" 2> "$T/err"
  { echo pre; cat "$T/want"; } | cmp - "$T/file"
  not_mapped
  head -c 5000000 /dev/zero > "$T/file"
  cat "$T/file" >> "$T/file.2"
  cat "$T/file" >> "$T/file.2"
  mv "$T/file.2" "$T/file"
  "$CLSORT" "${DEV[@]}" -vv "$T/in" 1<> "$T/file" 2> "$T/err"
  not_mapped
  [ "$(stat -c %s "$T/file")" -eq 10000000 ]
  cmp -n 4000012 "$T/want" "$T/file"
  tail -c 5999988 "$T/file" | cmp - <(head -c 5999988 /dev/zero)
}

@test "faultinject: fallocate unsupported: written with write(2), identical" {
  "$REFSORT" gen u32 1000003 15 > "$T/in"
  "$CLSORT" "${DEV[@]}" -r "$T/in" > "$T/want"
  FAULTINJECT_OP=fallocate FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EOPNOTSUPP \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${DEV[@]}" -vv -r -o "$T/out" "$T/in" 2> "$T/err" ||
    fail "$(cat "$T/err")"
  not_mapped
  cmp "$T/want" "$T/out"
  [ -z "$(find "$T" -name '.clsort.*')" ]
}

@test "faultinject: fallocate failing part way, the file grown: cut back, identical" {
  "$REFSORT" gen-rec 100003 12 4 i32 16 > "$T/in"
  "$CLSORT" "${DEV[@]}" -R 12 --key-offset=4 -k i32 "$T/in" > "$T/want"
  FAULTINJECT_OP=fallocate FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${DEV[@]}" -vv -R 12 --key-offset=4 -k i32 \
    -o "$T/out" "$T/in" 2> "$T/err" || fail "$(cat "$T/err")"
  not_mapped
  cmp "$T/want" "$T/out"
}

@test "faultinject: no mapping to be had: written with write(2), identical" {
  "$REFSORT" gen f64 1000003 17 special > "$T/in"
  "$CLSORT" "${DEV[@]}" -k f64 --stable "$T/in" > "$T/want"
  FAULTINJECT_OP=mmap FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOMEM \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${DEV[@]}" -vv -k f64 --stable -o "$T/out" "$T/in" \
    2> "$T/err" || fail "$(cat "$T/err")"
  not_mapped
  cmp "$T/want" "$T/out"
}

# --- the temporary file: unnamed, named as a fallback, synced ------------------

# killed_mid_sort DIR OPTION...: start clsort -o DIR/out, stop it at its first
# write (or allocation) into the temporary file, and SIGKILL it there.
killed_mid_sort() {
  local dir=$1 pid
  shift
  FAULTINJECT_STOP=1 FAULTINJECT_TARGET=tmp LD_PRELOAD="$FAULTINJECT" \
    "$CLSORT" "${DEV[@]}" -vv "$@" -o "$dir/out" "$T/in" 2> "$T/err" &
  pid=$!
  stopped $pid
  # The output is open, mid-sort: not yet anywhere to be seen by name.
  ls -l "/proc/$pid/fd" | grep -q "$dir/.*(deleted)\|$dir/\.clsort\." ||
    fail "no temporary file open in $dir: $(ls -l "/proc/$pid/fd")"
  kill -KILL $pid
  wait $pid || true
}

@test "-o: an unnamed temporary file, given its name when complete; nothing else left" {
  "$REFSORT" gen u32 1000003 21 > "$T/in"
  mkdir "$T/d"
  same_as_stdout "1000003 keys" "$T/in" -r
  "$CLSORT" "${DEV[@]}" -vv -r -o "$T/d/out" "$T/in" 2> "$T/err"
  grep -q "through an unnamed temporary file" "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/d/out"
  [ "$(ls -A "$T/d")" = out ]
  # Over an existing file, which keeps its permissions.
  printf 'old\n' > "$T/d/out"
  chmod 640 "$T/d/out"
  "$CLSORT" "${DEV[@]}" -vv -r -o "$T/d/out" "$T/in" 2> "$T/err"
  grep -q "through an unnamed temporary file" "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/d/out"
  [ "$(stat -c %a "$T/d/out")" = 640 ]
  [ "$(ls -A "$T/d")" = out ]
}

@test "faultinject: no unnamed files on the file system: a named temporary, identical" {
  "$REFSORT" gen-kv 20000 22 > "$T/in"
  "$CLSORT" "${DEV[@]}" -f kv "$T/in" > "$T/want"
  "$REFSORT" gen u32 1000003 22 > "$T/in.u32"
  "$CLSORT" "${DEV[@]}" "$T/in.u32" > "$T/want.u32"
  mkdir "$T/d"
  FAULTINJECT_OP=tmpfile FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EOPNOTSUPP \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${DEV[@]}" -vv -f kv -o "$T/d/out" "$T/in" 2> "$T/err" ||
    fail "$(cat "$T/err")"
  grep -q "writing $T/d/out through $T/d/\.clsort\." "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/d/out"
  FAULTINJECT_OP=tmpfile FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EOPNOTSUPP \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${DEV[@]}" -vv -o "$T/d/out" "$T/in.u32" 2> "$T/err" ||
    fail "$(cat "$T/err")"
  grep -q "through $T/d/\.clsort\." "$T/err" || fail "$(cat "$T/err")"
  mapped
  cmp "$T/want.u32" "$T/d/out"
  [ "$(ls -A "$T/d")" = out ]
  # Spilled runs fall back the same way, and leave nothing either.
  mkdir "$T/tmp"
  FAULTINJECT_OP=tmpfile FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EISDIR CLSORT_MERGE_RUNS=host \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${DEV[@]}" -vv -S 4K --memory=64K -T "$T/tmp" \
    -o "$T/d/out" "$T/in.u32" 2> "$T/err" || fail "$(cat "$T/err")"
  grep -q "kept in temporary files" "$T/err" || fail "no spilled runs: $(cat "$T/err")"
  cmp "$T/want.u32" "$T/d/out"
  [ -z "$(ls -A "$T/tmp")" ]
  [ "$(ls -A "$T/d")" = out ]
}

@test "SIGKILL mid-sort leaves nothing beside OUT, and OUT as it was" {
  "$REFSORT" gen u32 1000003 23 > "$T/in"
  mkdir "$T/d" "$T/e"
  killed_mid_sort "$T/d"
  [ -z "$(ls -A "$T/d")" ] || fail "left beside the output: $(ls -A "$T/d")"
  # Written through write(2), over an existing file.
  "$REFSORT" gen-kv 20000 23 > "$T/in"
  printf 'old\n' > "$T/e/out"
  killed_mid_sort "$T/e" -f kv
  [ "$(ls -A "$T/e")" = out ] || fail "left beside the output: $(ls -A "$T/e")"
  [ "$(cat "$T/e/out")" = old ]
}

@test "SIGKILL mid-sort with a named temporary (the fallback) leaves it behind" {
  "$REFSORT" gen u32 1000003 24 > "$T/in"
  mkdir "$T/d"
  FAULTINJECT_OP=tmpfile FAULTINJECT_ERRNO=EOPNOTSUPP killed_mid_sort "$T/d"
  ls -A "$T/d" | grep -q '^\.clsort\.' || fail "no named temporary file: $(ls -A "$T/d")"
}

@test "--sync: the output is synced before it is named; by default and with --no-sync it is not" {
  "$REFSORT" gen u32 100003 25 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -v --sync -o "$T/out" "$T/in" 2> "$T/err"
  grep -q "^clsort: output: $T/out synced to its device in" "$T/err" || fail "$(cat "$T/err")"
  cmp "$T/want" "$T/out"
  "$CLSORT" "${DEV[@]}" -v -o "$T/out1" "$T/in" 2> "$T/err"
  ! grep -q "synced" "$T/err" || fail "synced by default"
  cmp "$T/want" "$T/out1"
  "$CLSORT" "${DEV[@]}" -v --no-sync -o "$T/out2" "$T/in" 2> "$T/err"
  ! grep -q "synced" "$T/err" || fail "synced with --no-sync"
  cmp "$T/want" "$T/out2"
  run --separate-stderr "$CLSORT" --no-sync "$T/in"
  [ "$status" -eq 2 ]
  [ "${stderr_lines[0]}" = "clsort: --no-sync applies to --output only" ]
  run --separate-stderr "$CLSORT" --sync "$T/in"
  [ "$status" -eq 2 ]
  [ "${stderr_lines[0]}" = "clsort: --sync applies to --output only" ]
  run --separate-stderr "$CLSORT" --sync --no-sync -o "$T/out3" "$T/in"
  [ "$status" -eq 2 ]
  [ "${stderr_lines[0]}" = "clsort: --sync and --no-sync cannot be used together" ]
  [ ! -e "$T/out3" ]
}

@test "faultinject: fsync failing without --sync: not called, the output named" {
  "$REFSORT" gen u32 100003 26 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  mkdir "$T/d"
  FAULTINJECT_OP=fsync FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EIO \
    LD_PRELOAD="$FAULTINJECT" "$CLSORT" "${DEV[@]}" -o "$T/d/out" "$T/in"
  cmp "$T/want" "$T/d/out"
  [ "$(ls -A "$T/d")" = out ] || fail "left beside the output: $(ls -A "$T/d")"
}

@test "faultinject: fsync failing with --sync: exit 2, OUT as it was, nothing left" {
  local fmt
  "$REFSORT" gen u32 100003 26 > "$T/in.bin"
  "$REFSORT" gen-kv 20000 26 > "$T/in.kv"
  mkdir "$T/d"
  for fmt in bin kv; do
    printf 'old\n' > "$T/d/out"
    FAULTINJECT_OP=fsync FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=EIO \
      LD_PRELOAD="$FAULTINJECT" run --separate-stderr "$CLSORT" "${DEV[@]}" -f $fmt --sync \
      -o "$T/d/out" "$T/in.$fmt"
    [ "$status" -eq 2 ]
    [ "$stderr" = "clsort: cannot sync $T/d/out: Input/output error" ]
    [ "$(cat "$T/d/out")" = old ]
    [ "$(ls -A "$T/d")" = out ] || fail "left beside the output: $(ls -A "$T/d")"
  done
}

# --- the file keeps its identity, as with sort -o --------------------------------

@test "-o through a symbolic link: the target gets the result, the link stays a link" {
  "$REFSORT" gen u32 100003 31 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  mkdir "$T/d" "$T/e"
  printf 'old\n' > "$T/d/target"
  ln -s ../d/target "$T/e/link"
  ln -s link "$T/e/link2"
  "$CLSORT" "${DEV[@]}" -o "$T/e/link2" "$T/in"
  [ -L "$T/e/link" ] && [ -L "$T/e/link2" ] || fail "a link was replaced: $(ls -l "$T/e")"
  cmp "$T/want" "$T/d/target"
  [ "$(ls -A "$T/d")" = target ] && [ "$(ls -A "$T/e" | tr '\n' ' ')" = "link link2 " ]
  # A dangling link: its target is created.
  ln -s ../d/new "$T/e/dangling"
  "$CLSORT" "${DEV[@]}" -o "$T/e/dangling" "$T/in"
  [ -L "$T/e/dangling" ]
  cmp "$T/want" "$T/d/new"
}

@test "-o onto a file with another hard link: the other name sees the result" {
  local opt
  "$REFSORT" gen u32 100003 32 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  mkdir "$T/d"
  for opt in "" -m; do
    printf 'old\n' > "$T/d/a"
    ln -f "$T/d/a" "$T/d/b"
    if [ -n "$opt" ]; then
      "$CLSORT" "${DEV[@]}" -m -o "$T/d/a" "$T/want"
    else
      "$CLSORT" "${DEV[@]}" -o "$T/d/a" "$T/in"
    fi
    cmp "$T/want" "$T/d/b" || fail "the other name is not sorted ($opt)"
    [ "$(stat -c %h "$T/d/a")" = 2 ] && [ "$(stat -c %i "$T/d/a")" = "$(stat -c %i "$T/d/b")" ]
    [ "$(ls -A "$T/d" | tr '\n' ' ')" = "a b " ] || fail "left beside: $(ls -A "$T/d")"
  done
}

@test "-o onto an input: through a symbolic link, with another hard link, with -m" {
  "$REFSORT" gen u32 1000003 33 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  "$CLSORT" "${DEV[@]}" -m "$T/want" "$T/want" > "$T/want2"
  cp "$T/in" "$T/t"
  ln -s t "$T/l"
  "$CLSORT" "${DEV[@]}" -o "$T/l" "$T/l"
  [ -L "$T/l" ]
  cmp "$T/want" "$T/t"
  cp "$T/in" "$T/h1"
  ln "$T/h1" "$T/h2"
  "$CLSORT" "${DEV[@]}" -o "$T/h1" "$T/h2"
  cmp "$T/want" "$T/h1"
  [ "$(stat -c %i "$T/h1")" = "$(stat -c %i "$T/h2")" ]
  # -m reads its inputs while it writes: the file is written only after.
  "$CLSORT" "${DEV[@]}" -m -o "$T/h1" "$T/h2" "$T/h1"
  cmp "$T/want2" "$T/h2"
}

@test "-o keeps the owner, group and mode of the file it replaces" {
  "$REFSORT" gen u32 10007 34 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  printf 'old\n' > "$T/out"
  chmod 604 "$T/out"
  "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/in"
  cmp "$T/want" "$T/out"
  [ "$(stat -c %a "$T/out")" = 604 ]
  [ "$(id -u)" = 0 ] || skip "not root: the owner cannot be given away"
  chown 1234:5678 "$T/out"
  chmod 640 "$T/out"
  "$CLSORT" "${DEV[@]}" -o "$T/out" "$T/in"
  cmp "$T/want" "$T/out"
  [ "$(stat -c '%u %g %a' "$T/out")" = "1234 5678 640" ] || fail "$(stat -c '%u %g %a' "$T/out")"
}

# /dev/stdout last: a clsort that renamed over it would replace the link
# (as root), and fails on the names in /proc first.
@test "-o /dev/stdout and /proc/self/fd/1: the output goes to standard output" {
  local name
  [ -L /dev/stdout ] || skip "/dev/stdout is not a symbolic link"
  "$REFSORT" gen u32 1000003 35 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  for name in /proc/self/fd/1 /dev/fd/1 /dev/stdout; do
    printf 'old\n' > "$T/out"
    "$CLSORT" "${DEV[@]}" -o $name "$T/in" > "$T/out"
    cmp "$T/want" "$T/out" || fail "$name into a file"
    "$CLSORT" "${DEV[@]}" -o $name "$T/in" | cmp "$T/want" - || fail "$name into a pipe"
  done
  [ -L /dev/stdout ]
}

# --- signals ---------------------------------------------------------------------

# A signal in the window where the complete output has a temporary name
# beside OUT (linked, not yet renamed over OUT) waits for the rename,
# whichever thread takes it (--progress keeps one more running).
@test "SIGINT while the output has its temporary name: OUT whole, nothing beside it" {
  local pid
  env --default-signal=INT true 2> /dev/null || skip "env --default-signal not available"
  "$REFSORT" gen u32 1000003 36 > "$T/in"
  "$CLSORT" "${DEV[@]}" "$T/in" > "$T/want"
  mkdir "$T/d"
  printf 'old\n' > "$T/d/out"
  FAULTINJECT_STOP=link LD_PRELOAD="$FAULTINJECT" env --default-signal=INT \
    "$CLSORT" "${DEV[@]}" --progress -o "$T/d/out" "$T/in" 2> "$T/err" &
  pid=$!
  stopped $pid
  ls -A "$T/d" | grep -q '^\.clsort\.' || fail "not stopped in the window: $(ls -A "$T/d")"
  kill -INT $pid
  kill -CONT $pid
  status=0
  wait $pid || status=$?
  [ "$status" -eq 130 ] || fail "status $status: $(cat "$T/err")"
  [ "$(ls -A "$T/d")" = out ] || fail "left beside the output: $(ls -A "$T/d")"
  cmp "$T/want" "$T/d/out"
}

@test "SIGINT while standard output is mapped: the file cut back to where the sort began" {
  local pid
  env --default-signal=INT true 2> /dev/null || skip "env --default-signal not available"
  "$REFSORT" gen u32 1000003 38 > "$T/in"
  FAULTINJECT_STOP=sized FAULTINJECT_OP=none FAULTINJECT_TARGET=stdout LD_PRELOAD="$FAULTINJECT" \
    env --default-signal=INT "$CLSORT" "${DEV[@]}" "$T/in" > "$T/file" 2> "$T/err" &
  pid=$!
  stopped $pid
  [ "$(stat -c %s "$T/file")" -eq 4000012 ] || fail "not sized: $(stat -c %s "$T/file") bytes"
  kill -INT $pid
  kill -CONT $pid
  status=0
  wait $pid || status=$?
  [ "$status" -eq 130 ] || fail "status $status: $(cat "$T/err")"
  [ ! -s "$T/file" ] || fail "$(stat -c %s "$T/file") bytes left"
}

@test "with and without --sync: an error or SIGINT mid-write leaves OUT as it was, nothing beside it" {
  local mode pid
  env --default-signal=INT true 2> /dev/null || skip "env --default-signal not available"
  "$REFSORT" gen u32 1000003 37 > "$T/in"
  mkdir "$T/d"
  for mode in --no-sync --sync; do
    printf 'old\n' > "$T/d/out"
    FAULTINJECT_TARGET=tmp FAULTINJECT_ERRNO=ENOSPC FAULTINJECT_AFTER=100000 \
      LD_PRELOAD="$FAULTINJECT" run --separate-stderr "$CLSORT" "${DEV[@]}" $mode \
      -o "$T/d/out" "$T/in"
    [ "$status" -eq 2 ] || fail "$mode: status $status"
    [[ "$stderr" == *"No space left on device"* ]] || fail "$mode: $stderr"
    [ "$(cat "$T/d/out")" = old ] || fail "$mode: OUT changed by the error"
    [ "$(ls -A "$T/d")" = out ] || fail "$mode: left beside the output: $(ls -A "$T/d")"
    FAULTINJECT_STOP=1 FAULTINJECT_OP=none FAULTINJECT_TARGET=tmp LD_PRELOAD="$FAULTINJECT" env --default-signal=INT \
      "$CLSORT" "${DEV[@]}" $mode -o "$T/d/out" "$T/in" 2> "$T/err" &
    pid=$!
    stopped $pid
    kill -INT $pid
    kill -CONT $pid
    status=0
    wait $pid || status=$?
    [ "$status" -eq 130 ] || fail "$mode: status $status: $(cat "$T/err")"
    [ "$(cat "$T/d/out")" = old ] || fail "$mode: OUT changed by SIGINT"
    [ "$(ls -A "$T/d")" = out ] || fail "$mode: left beside the output: $(ls -A "$T/d")"
  done
}
