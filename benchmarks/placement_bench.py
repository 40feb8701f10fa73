"""Placement against NumPy (issue 39): sum and cumsum of float32 and
float64 NumPy arrays from 1 MiB to 1 GiB (powers of 4), each row gpured's
wall time (a loop of calls, the median of several loops), NumPy's, their
ratio (NumPy / gpured: >= 1.0 means gpured is not slower) and the
placement chosen (explain(), after the timed loops: the re-measure may
have moved it).  gpured's and NumPy's loops alternate, so that a busy
machine weighs on both alike.  Prints a markdown table and the load.

    .venv/bin/python benchmarks/placement_bench.py [--max-mib 1024]
        [--loops 5] [--ops sum,cumsum] [--dtypes float32,float64]

Not a test: timings on a shared machine are noisy; the load average
(uptime) is printed before and after.
"""
import argparse
import os
import statistics
import subprocess
import time

import numpy as np

import gpured


def _loop(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def _pair(g, n, loops, reps):
    """Medians of alternating loops of g (gpured) and n (NumPy)."""
    tg, tn = [], []
    for _ in range(loops):
        tg.append(_loop(g, reps))
        tn.append(_loop(n, reps))
    return statistics.median(tg), statistics.median(tn)


def _load():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return "load average: %.2f, %.2f, %.2f" % os.getloadavg()


def _where(op, a):
    e = gpured.explain(op, a)
    k = e.get("placement_factor", 1.0)
    return e["placement"] + ("" if abs(k - 1.0) < 0.05 else " x%.1f" % k)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-mib", type=int, default=1024)
    ap.add_argument("--loops", type=int, default=5)
    ap.add_argument("--ops", default="sum,cumsum")
    ap.add_argument("--dtypes", default="float32,float64")
    args = ap.parse_args()
    print("before:", _load(), flush=True)
    rows = []
    rng = np.random.default_rng(0)
    for dt in args.dtypes.split(","):
        mib = 1
        while mib <= args.max_mib:
            n = mib * (1 << 20) // np.dtype(dt).itemsize
            a = rng.standard_normal(n).astype(dt)
            for op in args.ops.split(","):
                g = (lambda op=op: getattr(gpured, op)(a))
                f = (lambda op=op: getattr(np, op)(a))
                g()  # warm: kernels built, pool filled
                f()
                reps = max(1, int(0.2 / max(_loop(f, 1), 1e-6)))
                loops = args.loops if mib < 256 else 3
                tg, tn = _pair(g, f, loops, reps)
                rows.append((op, dt, mib, tg, tn, _where(op, a)))
                print("| %s | %s | %d | %.3f | %.3f | %.2f | %s |" %
                      (op, dt, mib, tg * 1e3, tn * 1e3, tn / tg, rows[-1][5]),
                      flush=True)
            del a
            mib *= 4
    print("after:", _load())
    print()
    print("| function | dtype | MiB | gpured ms | NumPy ms | NumPy / gpured "
          "| placement |")
    print("|---|---|---:|---:|---:|---:|---|")
    for op, dt, mib, tg, tn, w in rows:
        print("| %s | %s | %d | %.3f | %.3f | %.2f | %s |" %
              (op, dt, mib, tg * 1e3, tn * 1e3, tn / tg, w))
    slow = [r for r in rows if r[4] / r[3] < 1.0]
    print("\nrows with gpured slower: %d of %d" % (len(slow), len(rows)))


if __name__ == "__main__":
    main()
