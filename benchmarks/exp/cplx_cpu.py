"""Complex sums of NumPy arrays against NumPy on this machine (issue 40's
CPU target: complex sums at least NumPy's speed at 64 KiB - 256 MiB):
ms per call (a loop of calls, median of 5 loops), gpured.sum and
gpured.mean (placement auto: the host path here) beside np.sum / np.mean.

    python benchmarks/exp/cplx_cpu.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpured  # noqa: E402
from _loop import loop_ms  # noqa: E402

rng = np.random.default_rng(0)
print("%-10s %10s %-5s %10s %10s %8s" % ("dtype", "bytes", "func", "numpy ms",
                                         "gpured ms", "np/gpured"))
for dt in (np.complex64, np.complex128):
    for nb in (64 << 10, 1 << 20, 16 << 20, 256 << 20):
        n = nb // np.dtype(dt).itemsize
        a = rng.standard_normal(2 * n).view(np.complex128).astype(dt)
        calls = max(1, int(2e8 // nb))
        for f in ("sum", "mean"):
            want = getattr(np, f)(a.astype(np.complex128))
            got = getattr(gpured, f)(a)
            assert abs(got - want) <= 1e-5 * np.abs(a).sum() / (
                1 if f == "sum" else n), (f, got, want)
            tn = loop_ms(lambda: getattr(np, f)(a), lambda: None, calls)
            tg = loop_ms(lambda: getattr(gpured, f)(a), lambda: None, calls)
            print("%-10s %10d %-5s %10.4f %10.4f %8.2f" % (
                np.dtype(dt).name, nb, f, tn, tg, tn / tg), flush=True)
