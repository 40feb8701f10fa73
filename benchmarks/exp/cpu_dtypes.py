"""Issue 40's CPU target: float16 / bfloat16 / complex sums (complex means
too, the "mean" rows) of NumPy arrays
(the host path or the CPU device, as placement picks) against NumPy's, at
64 KiB - 256 MiB, on this machine (run it on an idle CI-class machine):
    .venv/bin/python benchmarks/exp/cpu_dtypes.py"""
import sys
import time

import numpy as np

import gpured

sys.path.insert(0, "benchmarks/exp")
from _loop import loop_ms  # noqa: E402

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # the `ml` extra
    BF16 = None

rng = np.random.default_rng(0)
print("%-10s %9s %11s %11s %7s  %s" % ("dtype", "bytes", "gpured ms", "numpy ms",
                                         "ratio", "placement"))
for dt in [np.dtype(np.float16), BF16, np.dtype(np.complex64),
           np.dtype(np.complex128)]:
    if dt is None:
        continue
    for nbytes in (64 << 10, 1 << 20, 16 << 20, 256 << 20):
        n = nbytes // dt.itemsize
        if dt.kind == "c":
            a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        else:
            a = rng.standard_normal(n).astype(np.float32).astype(dt)
        calls = max(1, min(200, (64 << 20) // nbytes))
        g = loop_ms(lambda: gpured.sum(a), lambda: None, calls=calls, loops=5)
        w = loop_ms(lambda: np.sum(a), lambda: None, calls=calls, loops=5)
        try:
            where = gpured.explain("sum", a).get("placement", "?")
        except Exception as e:  # noqa: BLE001
            where = type(e).__name__
        print("%-10s %9d %11.3f %11.3f %7.2f  %s" % (dt.name, nbytes, g, w, w / g, where),
              flush=True)
        if dt.kind == "c":  # mean too (one call on the (n, 2) view)
            g = loop_ms(lambda: gpured.mean(a), lambda: None, calls=calls, loops=5)
            w = loop_ms(lambda: np.mean(a), lambda: None, calls=calls, loops=5)
            print("%-10s %9d %11.3f %11.3f %7.2f  %s" % (
                "  mean", nbytes, g, w, w / g, where), flush=True)
