"""count_nonzero / nanmean's count: wall vs events across vw and ilp (diagnosis)."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

n = 2**27
rng = np.random.default_rng(0)
for dt in (np.float64, np.float32):
    a = rng.standard_normal(n).astype(dt)
    a[rng.random(n) < 0.1] = 0
    d = gpured.to_device(a)
    for f in ("count_nonzero", "_count_valid"):
        for kw in ({}, {"vw": 1}, {"vw": 1, "ilp": 4}, {"vw": 2, "ilp": 4}, {"vw": 2, "ilp": 1}, {"vw": 4, "ilp": 4}, {"vw": 4, "ilp": 2}):
            if f == "count_nonzero":
                g = lambda: gpured.count_nonzero(d, **kw)
            else:
                g = lambda: gpured._core.reduce("_count_valid", d, None, np.intp, None, False, np._NoValue, dict(kw))
            w = loop_ms(g, gpured.synchronize, 10)
            ev = gpured.timeit(f, d, reps=5, **kw)["seconds"] * 1e3
            print("%-8s %-14s %-24s wall %.3f events %.3f" % (np.dtype(dt).name, f, kw, w, ev), flush=True)
