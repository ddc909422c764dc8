#!/usr/bin/env bats
# -f npy: NumPy arrays.  Arrays are made and the results read back by numpy
# itself: np.load of the output must equal np.sort(..., kind="stable") of
# the input (a stable argsort of the key field for structured records), with
# the same dtype and header.  Skipped, saying why, where numpy is missing;
# the errors are checked on files made by hand where it is.
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$BATS_TEST_TMPDIR
}

need_numpy() {
  python3 -c 'import numpy' 2> /dev/null || skip "numpy is not installed (pip install numpy)"
}

# py SCRIPT: run Python with numpy as np, CLSORT, DEV and T set.
py() {
  CLSORT_CMD="$CLSORT ${DEV[*]}" T="$T" python3 -c "
import os, subprocess, sys
import numpy as np
T = os.environ['T']
def clsort(*args):
    r = subprocess.run(os.environ['CLSORT_CMD'].split() + list(args), capture_output=True, text=True)
    if r.returncode:
        sys.exit('clsort %s: status %d: %s' % (' '.join(args), r.returncode, r.stderr))
def same(got, want, what):
    if got.dtype != want.dtype or not np.array_equal(got, want, equal_nan=got.dtype.kind == 'f'):
        sys.exit('%s: %r differs from %r' % (what, got[:8], want[:8]))
rng = np.random.default_rng(7)
$1"
}

@test "1-D arrays of every key dtype, .npy versions 1, 2 and 3, as np.sort has them" {
  need_numpy
  py "
for dt in ['<u4', '<i4', '<f4', '<u8', '<i8', '<f8', '|u1', '|b1', '|S5', '|S11']:
    n = 30011
    if dt[1] in 'ui' and dt[2] != '1':
        a = rng.integers(0 if dt[1] == 'u' else -1000, 1000, n).astype(dt)
    elif dt[1] == 'f':
        a = rng.standard_normal(n).astype(dt)
        a[::101] = np.nan
    elif dt[1] in 'ub':
        a = rng.integers(0, 2 if dt[1] == 'b' else 256, n).astype(dt)
    else:
        a = rng.integers(0, 3, (n, int(dt[2:])), dtype=np.uint8).view(dt).ravel()
    for ver in [(1, 0), (2, 0), (3, 0)]:
        with open(T + '/a.npy', 'wb') as f:
            np.lib.format.write_array(f, a, version=ver)
        clsort('-f', 'npy', '-o', T + '/o.npy', T + '/a.npy')
        same(np.load(T + '/o.npy'), np.sort(a, kind='stable'), dt + ' v%d' % ver[0])
        if open(T + '/o.npy', 'rb').read(128)[:8] != open(T + '/a.npy', 'rb').read(128)[:8]:
            sys.exit('%s: the version changed' % dt)
    if dt[1] in 'ui':
        clsort('-f', 'npy', '-r', '-o', T + '/o.npy', T + '/a.npy')
        same(np.load(T + '/o.npy'), np.sort(a, kind='stable')[::-1], dt + ' -r')
"
}

@test "structured records: the key field chosen by -F, stable, the header kept" {
  need_numpy
  py "
dt = np.dtype([('id', '<u8'), ('score', '<f4'), ('tag', 'S3'), ('k', '<i4'), ('pad', 'V5')])
n = 40009
a = np.zeros(n, dtype=dt)
a['id'] = np.arange(n)
a['score'] = rng.standard_normal(n)
a['tag'] = rng.integers(0, 4, (n, 3), dtype=np.uint8).view('S3').ravel()
a['k'] = rng.integers(-50, 50, n)
np.save(T + '/s.npy', a)
for field in ['id', 'score', 'tag', 'k']:
    clsort('-f', 'npy', '-F', field, '-o', T + '/o.npy', T + '/s.npy')
    same(np.load(T + '/o.npy'), a[np.argsort(a[field], kind='stable')], field)
    head = len(open(T + '/s.npy', 'rb').read()) - a.nbytes
    if open(T + '/o.npy', 'rb').read(head) != open(T + '/s.npy', 'rb').read(head):
        sys.exit('the header differs')
clsort('-f', 'npy', '-F', 'k', '-r', '-o', T + '/o.npy', T + '/s.npy')
same(np.load(T + '/o.npy'), a[np.argsort(-a['k'], kind='stable')], 'k descending')
# Out of core, in runs.
clsort('-f', 'npy', '-F', 'k', '-S', '4K', '-o', T + '/o.npy', T + '/s.npy')
same(np.load(T + '/o.npy'), a[np.argsort(a['k'], kind='stable')], 'k in runs')
# -k reads the field as another type of its width.
clsort('-f', 'npy', '-F', 'id', '-k', 'i64', '-o', T + '/o.npy', T + '/s.npy')
same(np.load(T + '/o.npy'), a, 'id as i64')
"
}

@test "several inputs: one array, with a header of their total" {
  need_numpy
  py "
parts = [rng.integers(-9, 9, m).astype('<i8') for m in (5, 0, 70001)]
names = []
for i, p in enumerate(parts):
    names.append(T + '/p%d.npy' % i)
    np.save(names[-1], p)
clsort('-f', 'npy', '-o', T + '/o.npy', *names)
same(np.load(T + '/o.npy'), np.sort(np.concatenate(parts), kind='stable'), 'three inputs')
if len(open(T + '/o.npy', 'rb').read()) % 8 or np.lib.format.read_magic(open(T + '/o.npy', 'rb')) != (1, 0):
    sys.exit('not a version 1.0 file')
"
  cat "$T/p2.npy" | "$CLSORT" "${DEV[@]}" -f npy > "$T/o.npy"
  py "same(np.load(T + '/o.npy'), np.sort(np.load(T + '/p2.npy'), kind='stable'), 'from a pipe')"
  "$CLSORT" -f npy -c "$T/o.npy"
  run --separate-stderr "$CLSORT" -f npy -c "$T/p2.npy"
  [ "$status" -eq 1 ]
}

@test "npy errors: one line naming the file, status 2, no output" {
  local magic=$'\x93NUMPY'
  # header FILE TEXT: a version 1.0 .npy header of TEXT, padded.
  header() {
    local text=$2 len
    len=$(( (10 + ${#text} + 1 + 63) / 64 * 64 - 10 ))
    { printf '%s\001\000' "$magic"; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))";
      printf '%-*s\n' $((len - 1)) "$text"; } > "$1"
  }
  check() {
    run --separate-stderr "$CLSORT" "${DEV[@]}" -f npy "${@:2}" -o "$T/out" "$T/bad.npy"
    [ "$status" -eq 2 ] || fail "status $status for $1"
    [ "$stderr" = "clsort: $T/bad.npy: $1" ] || fail "'$stderr' is not '$1'"
    [ ! -e "$T/out" ]
  }
  header "$T/bad.npy" "{'descr': '>u4', 'fortran_order': False, 'shape': (0,), }"
  check "dtype '>u4': big-endian: make it little-endian first (arr.astype(arr.dtype.newbyteorder('<')))"
  header "$T/bad.npy" "{'descr': '<u4', 'fortran_order': True, 'shape': (0,), }"
  check "a Fortran-order array: save it in C order (np.ascontiguousarray)"
  header "$T/bad.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 0), }"
  check "an array of shape (2, 0): only one-dimensional arrays are sorted"
  header "$T/bad.npy" "{'descr': '<c8', 'fortran_order': False, 'shape': (0,), }"
  check "dtype '<c8': cannot sort by it (keys: u4, i4, f4, u8, i8, f8, u1, b1, or S or V of up to 64 bytes)"
  header "$T/bad.npy" "{'descr': [('a', '<u4'), ('b', '>f8')], 'fortran_order': False, 'shape': (0,), }"
  check "records of a structured dtype: name the key field with --field"
  check "no field 'c' in dtype [('a', '<u4'), ('b', '>f8')]" -F c
  check "field 'b' (('b', '>f8')): big-endian: make it little-endian first (arr.astype(arr.dtype.newbyteorder('<')))" -F b
  check "-k u64 is 8 bytes wide, the key field 4" -F a -k u64
  header "$T/bad.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }"
  printf 'abcdefghij' >> "$T/bad.npy"
  check "the header says 3 records of 4 bytes, the file holds 10 bytes of data"
  check "--field a: the array has no fields (dtype '<u4')" -F a
  header "$T/bad.npy" "{'descr': '<u4', 'fortran_order': False}"
  check "the .npy header is not a dictionary of descr, fortran_order and shape"
  head -c 30 "$T/bad.npy" > "$T/cut" && mv "$T/cut" "$T/bad.npy"
  check "the .npy header is cut short"
  printf 'PK\003\004 not an array' > "$T/bad.npy"
  check 'not a .npy file (no \x93NUMPY at its start)'
  # Without -f npy, -F is a text field's number.
  run --separate-stderr "$CLSORT" -F a "$T/bad.npy"
  [ "$status" -eq 2 ]
  [ "${stderr_lines[0]}" = "clsort: invalid field number 'a' (0 to 65535)" ]
}

@test "-u and -m -u: the header counts the records kept, to a file and to a pipe" {
  need_numpy
  py "
a = rng.integers(-40, 40, 20011).astype('<i4')
np.save(T + '/a.npy', a)
clsort('-f', 'npy', '-u', '-o', T + '/o.npy', T + '/a.npy')
same(np.load(T + '/o.npy'), np.unique(a), '-u to a file')
clsort('-f', 'npy', '-u', '-r', '-S', '4K', '-o', T + '/o.npy', T + '/a.npy')
same(np.load(T + '/o.npy'), np.unique(a)[::-1], '-u -r in runs')
s = np.sort(a, kind='stable')
np.save(T + '/s.npy', s)
clsort('-f', 'npy', '-m', '-u', '-o', T + '/o.npy', T + '/s.npy', T + '/s.npy')
same(np.load(T + '/o.npy'), np.unique(a), '-m -u')
# Structured records: the first record of each key, in key order.
dt = np.dtype([('id', '<u8'), ('k', '<u4'), ('pad', 'V4')])
r = np.zeros(30011, dtype=dt)
r['id'] = np.arange(len(r))
r['k'] = rng.integers(0, 700, len(r))
np.save(T + '/r.npy', r)
clsort('-f', 'npy', '-F', 'k', '-u', '-o', T + '/o.npy', T + '/r.npy')
keys, first = np.unique(r['k'], return_index=True)
same(np.load(T + '/o.npy'), r[first], '-u of records')
"
  "$CLSORT" "${DEV[@]}" -f npy -u "$T/a.npy" | cat > "$T/p.npy"
  py "same(np.load(T + '/p.npy'), np.unique(np.load(T + '/a.npy')), '-u to a pipe')"
}

@test "a header that ends in a number at the end of the file: an error, no read past it" {
  # 4096 bytes, a page: the header's last number runs to the end of the
  # file, and of its mapping.
  local text="{'descr': '<u4', 'fortran_order': False, 'shape': (" len=4086
  { printf '\223NUMPY\001\000'; printf '\366\017'; printf '%s' "$text"
    head -c $((len - ${#text})) /dev/zero | tr '\0' 7; } > "$T/bad.npy"
  [ "$(stat -c %s "$T/bad.npy")" -eq 4096 ]
  run --separate-stderr "$CLSORT" "${DEV[@]}" -f npy -o "$T/out" "$T/bad.npy"
  [ "$status" -eq 2 ]
  [ "$stderr" = "clsort: $T/bad.npy: the .npy header is not a dictionary of descr, fortran_order and shape" ]
  [ ! -e "$T/out" ]
}
