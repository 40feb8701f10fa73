"""Host-resident float32 with NaNs through the current device: nanvar and
nanmean (one pass each, their counts fused) against sum of the same
array, and NumPy's time (wall clock, loops of calls)."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 64
print("%s, host float32 %g MiB, 10%% NaN" % (gpured.get_device()["name"], mib), flush=True)
h = (np.random.default_rng(0).standard_normal(int(mib * 2**20) // 4) + 1e3).astype(np.float32)
h[::10] = np.nan
ws = loop_ms(lambda: gpured.sum(h), lambda: None, 3)
print("sum     %.2f ms" % ws, flush=True)
for f in ("nansum", "nanmean", "nanvar", "nanstd"):
    g = getattr(gpured, f)
    w = loop_ms(lambda: g(h), lambda: None, 3)
    print("%-7s %.2f ms (sum/%s %.3f)  numpy.%s %.1f ms" % (
        f, w, f, ws / w, f, loop_ms(lambda: getattr(np, f)(h), lambda: None, 1)), flush=True)
