# Shared setup for the bats suites.  make check exports CLSORT, REFSORT,
# FAULTINJECT and TESTS_DIR; running a suite by hand from the build tree
# works too.
: "${CLSORT:=$BATS_TEST_DIRNAME/../clsort}"
: "${REFSORT:=$BATS_TEST_DIRNAME/refsort}"
: "${FAULTINJECT:=$BATS_TEST_DIRNAME/faultinject.so}"
export LC_ALL=C

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
