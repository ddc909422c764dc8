# Shared setup for the bats suites.  make check exports CLSORT, REFSORT,
# FAULTINJECT and TESTS_DIR; running a suite by hand from the build tree
# works too.
: "${CLSORT:=$BATS_TEST_DIRNAME/../clsort}"
: "${REFSORT:=$BATS_TEST_DIRNAME/refsort}"
: "${FAULTINJECT:=$BATS_TEST_DIRNAME/faultinject.so}"
export LC_ALL=C

# A build with the sanitizers (./configure --enable-sanitizers): their
# runtime is not the first library where faultinject.so is preloaded, which
# AddressSanitizer would refuse.
if ldd "$CLSORT" 2> /dev/null | grep -q libasan; then
  SANITIZED=1
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
else
  SANITIZED=
fi

: "${BATS_LIB_PATH:=/usr/lib/bats}"
export BATS_LIB_PATH
bats_load_library bats-support
bats_load_library bats-assert

# The device path is what the suites test: an explicit device keeps tiny
# inputs off the host-sort shortcut.
DEV=(-d cpu)
# Where a suite leaves the device to clsort, the host threshold is the
# default, not one measured by an earlier test.
export CLSORT_HOST_THRESHOLD=4096

# python3: the first Python 3 that has numpy, of the one on PATH and the
# system's (a Python of one's own on PATH may lack the distribution's
# python3-numpy); the one on PATH where none has it.
python3() {
  local p
  if [ -z "${PYTHON3-}" ]; then
    for p in "$(type -P python3)" /usr/bin/python3; do
      if [ -x "$p" ] && "$p" -c 'import numpy' 2> /dev/null; then
        PYTHON3=$p
        break
      fi
    done
    : "${PYTHON3:=$(type -P python3)}"
  fi
  "$PYTHON3" "$@"
}

# gen_npy FILE SEED LOW HIGH COUNT DTYPE: COUNT random integers of numpy's
# DTYPE in [LOW, HIGH), as a .npy array in FILE; skips the test where
# numpy is missing.
gen_npy() {
  python3 -c 'import numpy' 2> /dev/null || skip "numpy not installed"
  python3 -c "
import numpy as np
rng = np.random.default_rng($2)
np.save('$1.npy', rng.integers($3, $4, $5, dtype=np.$6))
"
  mv "$1.npy" "$1"
}

# stopped PID: wait until the process has stopped itself (FAULTINJECT_STOP),
# failing if it ends first.
stopped() {
  local i state
  for ((i = 0; i < 3000; i++)); do
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2> /dev/null) || fail "clsort ended: $(cat "$T/err")"
    [ "$state" = T ] && return 0
    [ "$state" = Z ] && fail "clsort ended: $(cat "$T/err")"
    sleep 0.05
  done
  fail "clsort never stopped: $(cat "$T/err")"
}

# reader_closes OPTION...: clsort OPTION... into a reader that takes 4 bytes
# and closes the pipe.  clsort must die of SIGPIPE (128 + 13), as a filter
# does, and say nothing; the reader is fine.
reader_closes() {
  run --separate-stderr bash -c '"$CLSORT" "$@" 2> "$0/err" | head -c 4 | wc -c
    echo "status ${PIPESTATUS[*]}"' "$BATS_TEST_TMPDIR" "$@"
  [ "${lines[0]}" -eq 4 ]
  [ "${lines[1]}" = "status 141 0 0" ] || fail "pipeline statuses: ${lines[1]}"
  [ ! -s "$BATS_TEST_TMPDIR/err" ] || fail "stderr: $(cat "$BATS_TEST_TMPDIR/err")"
}

# reader_closes_sigpipe_ignored OPTION...: the same with SIGPIPE ignored:
# status 2 and one line naming the write error.
reader_closes_sigpipe_ignored() {
  run --separate-stderr bash -c 'trap "" PIPE
    "$CLSORT" "$@" 2> "$0/err" | head -c 4 > /dev/null
    echo "status ${PIPESTATUS[*]}"' "$BATS_TEST_TMPDIR" "$@"
  [ "${lines[0]}" = "status 2 0" ] || fail "pipeline statuses: ${lines[0]}"
  [ "$(cat "$BATS_TEST_TMPDIR/err")" = "clsort: write error: Broken pipe" ]
}

# Whether directory $1 lies in memory (tmpfs, ramfs).
in_memory() {
  case $(stat -f -c %T "$1") in
    tmpfs | ramfs) return 0 ;;
  esac
  return 1
}
