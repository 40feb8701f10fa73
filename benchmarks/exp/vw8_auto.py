"""The auto plans of 8-byte reductions on a GPU after the vw 4 rule
(policy.c), by kernel events and wall clock of loops, 1 GiB, beside
float32 sum."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

rng = np.random.default_rng(0)
f = gpured.to_device(rng.standard_normal(2**28).astype(np.float32))
for _ in range(30):
    gpured.sum(f)
gpured.synchronize()
print("sum     float32 wall %.4f events %.4f" % (loop_ms(lambda: gpured.sum(f), gpured.synchronize, 10),
                                                 gpured.timeit("sum", f, reps=10)["seconds"] * 1e3))
del f
for dt in (np.float64, np.int64):
    a = (rng.standard_normal(2**27) * 1000).astype(dt)
    if dt == np.float64:
        a[rng.random(a.size) < 0.1] = np.nan
    d = gpured.to_device(a)
    for op in ("sum", "min", "max", "argmin", "argmax", "ptp", "nansum", "nanmax", "nanargmax",
               "var", "nanvar", "nanmean", "count_nonzero"):
        if op.startswith("nan") or op == "var":
            if dt != np.float64:
                continue
        g = getattr(gpured, op)
        w = loop_ms(lambda: g(d), gpured.synchronize, 10)
        ev = gpured.timeit(op, d, reps=10)["seconds"] * 1e3 if op != "nanmean" else float("nan")
        e = gpured.explain(op, d)
        print("%-13s %-7s wall %.4f events %.4f  vw %s ilp %s" % (op, np.dtype(dt).name, w, ev,
                                                                  e.get("vw"), e.get("ilp")), flush=True)
    del d
    gpured.empty_cache()
