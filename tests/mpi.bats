#!/usr/bin/env bats
# Across processes with MPI (a build configured --with-mpi): mpirun -n 1,
# 2, 3 and 4 on one host, every process on the same OpenCL device.  Every
# output must be the one-process sort's, byte for byte; a failing process
# ends the job with status 2, naming itself, and leaves no output.
load helpers
bats_require_minimum_version 1.5.0

: "${MPIRUN:=mpirun}"
# Open MPI refuses to start as root unless told it may.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

setup() {
  T=$BATS_TEST_TMPDIR
}

# across N ARGS...: clsort ARGS under mpirun -n N.
across() {
  local n=$1
  shift
  "$MPIRUN" --oversubscribe -n "$n" "$CLSORT" "$@"
}

# same_as_one ARGS...: sorting $T/in with ARGS on 1 to 4 processes gives
# the one-process output, which -c finds sorted.
same_as_one() {
  local n
  "$CLSORT" "${DEV[@]}" "$@" "$T/in" -o "$T/one"
  for n in 1 2 3 4; do
    across "$n" "${DEV[@]}" "$@" "$T/in" -o "$T/out$n"
    cmp "$T/one" "$T/out$n"
  done
  "$CLSORT" -c "$@" "$T/out4"
}

@test "u32 keys" {
  "$REFSORT" gen u32 200000 1 > "$T/in"
  same_as_one
  "$REFSORT" sort -k u32 < "$T/in" | cmp - "$T/out3"
}

@test "f32 keys with NaNs and signed zeros, descending" {
  "$REFSORT" gen f32 100000 2 special > "$T/in"
  same_as_one -k f32 -r
}

@test "16-byte records, u64 key at offset 8, stable and stable descending" {
  "$REFSORT" gen-rec 100000 16 8 u64 3 few > "$T/in"
  same_as_one -R 16 --key-offset 8 -k u64 -s
  "$REFSORT" sort -R 16 --key-offset 8 -k u64 -s < "$T/in" | cmp - "$T/out4"
  same_as_one -R 16 --key-offset 8 -k u64 -s -r
}

@test "skewed keys: all equal, few distinct" {
  "$REFSORT" gen-rec 60000 8 0 u32 4 equal > "$T/in"
  same_as_one -R 8
  cmp "$T/in" "$T/out4"
  "$REFSORT" gen i64 100000 5 few > "$T/in"
  same_as_one -k i64
}

@test "kv lines: i32 keys, stable, descending, a last line without newline" {
  "$REFSORT" gen-kv 40000 6 i32 200 > "$T/in"
  printf '7:last' >> "$T/in"
  same_as_one -f kv -k i32 -s
  same_as_one -f kv -k i32 -s -r
}

@test "kv lines: string keys, -u, --skip-bad" {
  "$REFSORT" gen-kv 30000 7 u32 500 > "$T/in"
  same_as_one -f kv -k str
  same_as_one -f kv -k str -r
  same_as_one -f kv -k u32 -u
  printf 'x:bad\n\n' >> "$T/in"
  same_as_one -f kv -k u32 --skip-bad
}

@test "kv lines: several keys (-K), -u" {
  "$REFSORT" gen-kv 30000 8 u32 300 > "$T/in"
  same_as_one -K 2 -K 1,u32
  same_as_one -K 1,u32,r -K 2 -u
}

@test "kv lines: sort's -h, -V and -n (exact past a double's digits), as sort -s orders them" {
  awk 'BEGIN { srand(15); split("K M G T", u, " ")
    for (i = 0; i < 20000; i++)
      printf "%s%s,v%d.%d.%d%s\t%d\n", int(rand() * 1000), (rand() < 0.8 ? u[1 + int(rand() * 4)] : ""),
        int(rand() * 3), int(rand() * 12), int(rand() * 30), (rand() < 0.2 ? "~rc1" : ""), i }' > "$T/in"
  same_as_one -h
  sort -s -h "$T/in" | cmp - "$T/one"
  # (Not -t :, which mpirun reads as the end of its program's arguments.)
  same_as_one -t , -k2,2V -k1,1hr
  sort -s -t , -k2,2V -k1,1hr "$T/in" | cmp - "$T/one"
  same_as_one -n -r
  sort -s -n -r "$T/in" | cmp - "$T/one"
  # 19-digit timestamps that a double ties, told apart as sort -n does.
  awk 'BEGIN { srand(16)
    for (i = 0; i < 20000; i++) printf "17329248001234%05d,%d\n", int(rand() * 100000), i }' > "$T/in"
  same_as_one -n
  sort -s -n "$T/in" | cmp - "$T/one"
}

@test "--header lines and npy arrays" {
  "$REFSORT" gen-kv 20000 13 i32 300 > "$T/in"
  same_as_one -f kv -k i32 --header=2
  gen_npy "$T/in" 14 -9 9 50000 int32
  same_as_one -f npy
}

@test "ranges sent in many messages" {
  "$REFSORT" gen-kv 30000 15 u64 > "$T/in"
  CLSORT_MPI_CHUNK=1000 same_as_one -f kv -k u64 -s
  CLSORT_MPI_CHUNK=1000 run across 3 -v "${DEV[@]}" -f kv -k u64 "$T/in" -o "$T/out"
  assert_success
  assert_output --regexp "rank 1: .* [0-9]{6} bytes received"
}

@test "each process sorts its range in runs when it does not fit" {
  "$REFSORT" gen-rec 100000 8 0 u32 8 > "$T/in"
  same_as_one -R 8 -S 32K
}

@test "several inputs, the output one of them" {
  "$REFSORT" gen-kv 9000 9 i32 > "$T/a"
  "$REFSORT" gen-kv 100 10 i32 > "$T/b"
  : > "$T/c"
  "$CLSORT" "${DEV[@]}" -f kv -k i32 "$T/a" "$T/b" "$T/c" -o "$T/one"
  across 3 "${DEV[@]}" -f kv -k i32 "$T/a" "$T/b" "$T/c" -o "$T/a"
  cmp "$T/one" "$T/a"
}

@test "inputs with fewer records than processes" {
  printf '\3\0\0\0\1\0\0\0' > "$T/in"
  same_as_one
  : > "$T/in"
  same_as_one
  [ ! -s "$T/out4" ]
}

@test "standard input and output are refused with several processes" {
  "$REFSORT" gen u32 1000 11 > "$T/in"
  run -2 across 2 "${DEV[@]}" "$T/in"
  assert_output --partial "rank 0: standard output is not shared by the 2 processes"
  run -2 across 2 "${DEV[@]}" -o "$T/out" < "$T/in"
  assert_output --partial "standard input is not shared by the 2 processes"
  run -2 across 2 "${DEV[@]}" - -o "$T/out" < "$T/in"
  [ ! -e "$T/out" ]
  run -2 across 2 -c "${DEV[@]}" "$T/in"
  assert_output --partial "--check and --merge run in one process"
}

@test "a bad line on one process: status 2, the process and the line named, no output" {
  "$REFSORT" gen-kv 30000 12 i32 > "$T/in"
  printf 'oops:1\n' >> "$T/in"
  echo old > "$T/out"
  run -2 across 3 "${DEV[@]}" -f kv -k i32 "$T/in" -o "$T/out"
  assert_output --partial "clsort: rank 2: $T/in:30001: invalid i32 key 'oops'"
  # Every process learned of it and ended on its own: none was killed
  # while its message or process 0's cleaning up was under way.
  refute_output --partial MPI_ABORT
  [ "$(cat "$T/out")" = old ]
  [ -z "$(ls -A "$T" | grep '^\.clsort')" ]
}

@test "a bad line on process 0, an output process 0 cannot make: each ends on its own" {
  { printf 'bad:1\n'; "$REFSORT" gen-kv 30000 12 i32; } > "$T/in"
  run -2 across 3 "${DEV[@]}" -f kv -k i32 "$T/in" -o "$T/out"
  assert_output --partial "clsort: rank 0: $T/in:1: invalid i32 key 'bad'"
  refute_output --partial MPI_ABORT
  [ ! -e "$T/out" ]
  [ -z "$(ls -A "$T" | grep '^\.clsort')" ]
  run -2 across 3 "${DEV[@]}" -f kv -k i32 "$T/in" -o "$T/missing/out"
  assert_output --partial "clsort: rank 0: cannot open $T/missing/out for writing"
  refute_output --partial MPI_ABORT
}

@test "a missing input: status 2, named" {
  run -2 across 2 "${DEV[@]}" "$T/missing" -o "$T/out"
  assert_output --partial "$T/missing"
  [ ! -e "$T/out" ]
}
