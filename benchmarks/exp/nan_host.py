"""Host-resident float32 with NaNs (NumPy arrays; placement as it is):
nanmean, nanvar and friends (one pass each, counts fused) against sum of
the same array, and NumPy's time (wall clock, loops of calls).

    python3 benchmarks/exp/nan_host.py [MiB ...]     (default 64)
"""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

sizes = [float(s) for s in sys.argv[1:]] or [64.0]
print("%s, host float32, 10%% NaN" % gpured.get_device()["name"], flush=True)
for mib in sizes:
    h = (np.random.default_rng(0).standard_normal(int(mib * 2**20) // 4) + 1e3).astype(np.float32)
    h[::10] = np.nan
    reps = 3 if mib >= 64 else 20
    ws = loop_ms(lambda: gpured.sum(h), lambda: None, reps)
    print("%8g MiB sum     %9.3f ms" % (mib, ws), flush=True)
    for f in ("nansum", "nanmean", "nanvar", "nanstd"):
        g = getattr(gpured, f)
        w = loop_ms(lambda: g(h), lambda: None, reps)
        wn = loop_ms(lambda: getattr(np, f)(h), lambda: None, 1 if mib >= 64 else reps)
        print("%8g MiB %-7s %9.3f ms  sum/%s %.3f  numpy %9.3f ms (%.1fx)  [%s]" % (
            mib, f, w, f, ws / w, wn, wn / w, gpured.explain(f, h)["placement"]), flush=True)
