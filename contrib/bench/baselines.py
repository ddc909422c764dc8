#!/usr/bin/env python3
"""Baselines for the clsort benchmarks (contrib/bench/run).

  baselines.py numpy-e2e IN OUT [DTYPE]  np.fromfile -> np.sort -> tofile
                                      (DTYPE u4, the default, or u8)
  baselines.py cupy-sort N [REPS [DTYPE]]
                                      cupy.sort of N random u32 (DTYPE u4,
                                      the default) or u64 (u8) on the GPU,
                                      device time only (CUB radix sort),
                                      timed with CUDA events; prints the
                                      median seconds
  baselines.py probe numpy|cupy       exit 0 when the baseline can run

Exit status 3 means the baseline is not available here.
"""
import statistics
import sys


def numpy_e2e(src, dst, dtype="u4"):
    import numpy as np
    a = np.fromfile(src, dtype="<" + dtype)
    a = np.sort(a)
    a.tofile(dst)


def have_cupy():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def cupy_sort(n, reps, dtype="u4"):
    import cupy as cp
    rng = cp.random.default_rng(12345)
    if dtype == "u8":
        keys = rng.integers(0, 2**63, size=n, dtype=cp.uint64) * 2 + 1
    else:
        keys = rng.integers(0, 2**32, size=n, dtype=cp.uint64).astype(cp.uint32)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    cp.sort(keys)  # warm up: kernels and temporary storage
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        start.record()
        out = cp.sort(keys)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1000.0)
        del out
    # cupy.sort must have sorted: check once, untimed.
    out = cp.sort(keys)
    if n > 1 and not bool(cp.all(out[1:] >= out[:-1])):
        sys.exit("cupy.sort returned unsorted keys")
    print("%.9f" % statistics.median(times))


def main(argv):
    if len(argv) >= 2 and argv[1] == "probe":
        if argv[2] == "numpy":
            try:
                import numpy  # noqa: F401
            except Exception:
                return 3
            return 0
        return 0 if have_cupy() else 3
    if len(argv) in (4, 5) and argv[1] == "numpy-e2e" and argv[4:] in ([], ["u4"], ["u8"]):
        numpy_e2e(argv[2], argv[3], *argv[4:])
        return 0
    if len(argv) in (3, 4, 5) and argv[1] == "cupy-sort" and argv[4:] in ([], ["u4"], ["u8"]):
        if not have_cupy():
            return 3
        cupy_sort(int(argv[2]), int(argv[3]) if len(argv) >= 4 else 5, *argv[4:])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
