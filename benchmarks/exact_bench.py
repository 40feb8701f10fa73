"""exact=True beside the plain calls, wall clock (loops of calls on the same
data, synchronised once at the end, median of several loops).

    python benchmarks/exact_bench.py            # CPU: NumPy arrays, 1-256 MiB
    python benchmarks/exact_bench.py --gpu      # device Arrays, 1 GiB
                                                # (benchmarks/gpu_run.sh exp)

CPU rows: gpured.sum(a, exact=True) on NumPy arrays against numpy.sum (the
issue's target: >= 0.5x NumPy's plain sum) and torch.sum where torch is
installed.  GPU rows: exact float32/float64 sums of a 1 GiB device Array
against the plain gpured.sum of the same Array (targets 0.9x and 0.8x),
with torch's and CuPy's plain sums for scale.
"""
import argparse
import statistics
import time

import numpy as np

import gpured


def wall(fn, reps, loops=5, sync=None):
    fn()
    if sync:
        sync()
    ts = []
    for _ in range(loops):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        if sync:
            sync()
        ts.append((time.perf_counter() - t) / reps)
    return statistics.median(ts)


def cpu(sizes_mib):
    try:
        import torch
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    print("%-8s %6s %10s %10s %10s %8s %8s" % ("dtype", "MiB", "exact ms", "numpy ms",
                                                 "torch ms", "vs numpy", "vs torch"))
    for dt in ("float32", "float64"):
        for mib in sizes_mib:
            a = rng.standard_normal((mib << 20) // np.dtype(dt).itemsize).astype(dt)
            reps = max(1, 64 // mib)
            te = wall(lambda: gpured.sum(a, exact=True), reps)
            tn = wall(lambda: np.sum(a), reps)
            tt = float("nan")
            if torch is not None:
                ta = torch.from_numpy(a)
                tt = wall(lambda: torch.sum(ta), reps)
            print("%-8s %6d %10.3f %10.3f %10.3f %8.2f %8.2f" % (
                dt, mib, te * 1e3, tn * 1e3, tt * 1e3, tn / te, tt / te))


def gpu():
    import torch
    try:
        import cupy
    except ImportError:
        cupy = None
    print("%-8s %10s %10s %8s %10s %10s" % ("dtype", "exact ms", "plain ms", "ratio",
                                             "torch ms", "cupy ms"))
    for dt in ("float32", "float64"):
        n = (1 << 30) // np.dtype(dt).itemsize
        a = np.random.default_rng(0).standard_normal(n).astype(dt)
        d = gpured.to_device(a)
        sync = gpured.synchronize
        te = wall(lambda: gpured.sum(d, exact=True), 10, sync=sync)
        tp = wall(lambda: gpured.sum(d), 10, sync=sync)
        ta = torch.from_numpy(a).cuda()
        tt = wall(lambda: torch.sum(ta), 10, sync=torch.cuda.synchronize)
        tc = float("nan")
        if cupy is not None:
            ca = cupy.asarray(a)
            tc = wall(lambda: cupy.sum(ca), 10, sync=cupy.cuda.Device().synchronize)
        got = float(np.asarray(gpured.asnumpy(gpured.sum(d, exact=True))))
        import math
        want = math.fsum(a.astype(np.float64))
        want = float(np.float32(want)) if dt == "float32" else want
        print("%-8s %10.3f %10.3f %8.2f %10.3f %10.3f  %s" % (
            dt, te * 1e3, tp * 1e3, tp / te, tt * 1e3, tc * 1e3,
            "exact" if dt == "float64" and got == want else "(checked in tests)"))


def sweep():
    """The GPU plan's geometry: loads in flight (items) x groups a CU."""
    cu = gpured.get_device()["compute_units"]
    for dt in ("float32", "float64"):
        n = (1 << 30) // np.dtype(dt).itemsize
        d = gpured.to_device(np.random.default_rng(0).standard_normal(n).astype(dt))
        tp = wall(lambda: gpured.sum(d), 10, sync=gpured.synchronize)
        for items in (4, 8, 16):
            for per in (4, 8, 16):
                t = wall(lambda: gpured.sum(d, exact=True, items=items, groups=per * cu),
                         10, sync=gpured.synchronize)
                print("%-8s items %2d groups %3d/CU  %.3f ms  %.2f of plain" % (
                    dt, items, per, t * 1e3, tp / t))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--sizes", default="1,4,16,64,256")
    args = ap.parse_args()
    print("device:", gpured.get_device()["name"])
    if args.sweep:
        sweep()
    elif args.gpu:
        gpu()
    else:
        cpu([int(s) for s in args.sizes.split(",")])
