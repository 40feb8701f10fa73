"""Small complex sums of NumPy arrays on the host (the H200 host's 16
threads): gpured.sum / mean against NumPy, 64 KiB and 1 MiB, loops of
2000 / 200 calls, median of 7 (the call's Python route was ~50 us of
cx_sum_route's _Layout before 2026-11-29).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/cx_small_h200.py
"""
import time

import numpy as np
import gpured

rng = np.random.default_rng(0)
print("%-26s %9s %9s %6s" % ("row", "gpured us", "numpy us", "np/gr"))
for dt in (np.complex64, np.complex128):
    for nbytes, calls in ((64 << 10, 2000), (1 << 20, 200)):
        n = nbytes // np.dtype(dt).itemsize
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        for func in ("sum", "mean"):
            g, f = getattr(gpured, func), getattr(np, func)
            assert abs(g(a) - f(a)) <= 1e-5 * np.abs(a).sum()
            res = []
            for fn in (lambda: g(a), lambda: f(a)):
                fn()
                ts = []
                for _ in range(7):
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        fn()
                    ts.append((time.perf_counter() - t0) / calls * 1e6)
                res.append(sorted(ts)[3])
            print("%-26s %9.2f %9.2f %6.2f" % ("%s %s %d KiB" % (
                func, np.dtype(dt).name, nbytes >> 10), res[0], res[1],
                res[1] / res[0]), flush=True)
