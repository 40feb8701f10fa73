"""sum_by_key(exact=True) against the plain call (issue 39): 16 Mi values
(float32, float64, standard normal) into 1024 random int32 keys, NumPy
inputs, whole calls (key check included), after one warm-up call each;
best and median of 5 rounds, the three configurations interleaved so that
a loaded machine slows them alike.  "exact host" is what CPU devices run
by default (variant "host"), "exact fixed_point" the device's windows.

    .venv/bin/python benchmarks/exp/bykey_exact.py [float32] [float64]
"""
import sys
import time

import numpy as np

import gpured

rng = np.random.default_rng(0)
n, nk = 16 << 20, 1024
k = rng.integers(0, nk, n).astype(np.int32)
for dt in sys.argv[1:] or ["float32", "float64"]:
    v = rng.standard_normal(n).astype(dt)
    cfg = [("plain", {}), ("exact host", {"exact": True, "variant": "host"}),
           ("exact fixed_point", {"exact": True, "variant": "fixed_point"})]
    ts = {c: [] for c, _ in cfg}
    for c, kw in cfg:
        gpured.sum_by_key(k, v, nk, **kw)
    for _ in range(5):
        for c, kw in cfg:
            t0 = time.perf_counter()
            gpured.sum_by_key(k, v, nk, **kw)
            ts[c].append(time.perf_counter() - t0)
    for c, _ in cfg:
        print("%-8s %-18s best %7.1f ms  median %7.1f ms"
              % (dt, c, min(ts[c]) * 1e3, np.median(ts[c]) * 1e3), flush=True)
