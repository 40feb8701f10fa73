"""nanmean/nanvar float64 (1 GiB, 10% NaN) by wall clock of loops with the
8-byte load rules: auto, vw 2 ilp 2, vw 4 ilp 4, vw 4 ilp 2."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

rng = np.random.default_rng(0)
a = rng.standard_normal(2**27)
a[rng.random(a.size) < 0.1] = np.nan
d = gpured.to_device(a)
for _ in range(30):
    gpured.sum(d)
gpured.synchronize()
for op in ("sum", "nanmean", "nanvar", "mean"):
    g = getattr(gpured, op)
    row = []
    for kn in ({}, {"vw": 2, "ilp": 2}, {"vw": 4, "ilp": 4}, {"vw": 4, "ilp": 2}, {"vw": 2, "ilp": 4}):
        kw = dict(kn, variant="subgroup") if kn else {}
        row.append("%s %.4f" % (kn or "auto", loop_ms(lambda: g(d, **kw), gpured.synchronize, 10)))
    print("%-8s | %s" % (op, " | ".join(row)), flush=True)
