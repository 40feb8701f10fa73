"""nancumsum float64 vs cumsum float64 across items/wg (diagnosis), plus
count_nonzero/nanmean after the vw rule."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

n = 2**27
rng = np.random.default_rng(0)
a = rng.standard_normal(n)
a[rng.random(n) < 0.1] = np.nan
d = gpured.to_device(a)
for f in ("sum", "count_nonzero", "mean", "nanmean"):
    g = getattr(gpured, f)
    print("%-14s wall %.3f" % (f, loop_ms(lambda: g(d), gpured.synchronize, 10)), flush=True)
for kw in ({}, {"items": 4}, {"items": 16}, {"wg_size": 128}, {"wg_size": 512}, {"wg_size": 128, "items": 16}):
    row = []
    for f in ("cumsum", "nancumsum"):
        g = getattr(gpured, f)
        try:
            w = loop_ms(lambda: g(d, **kw), gpured.synchronize, 10)
            ev = gpured.timeit(f, d, reps=5, **kw)["seconds"] * 1e3
        except Exception as e:  # noqa
            w = ev = float("nan")
            print(f, kw, "error", e)
        row += [w, ev]
    print("%-32s cumsum wall %.3f ev %.3f | nancumsum wall %.3f ev %.3f | ratio %.3f" % (
        kw, row[0], row[1], row[2], row[3], row[0] / row[2]), flush=True)
