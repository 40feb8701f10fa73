"""Plans for short rows on the GPU: float32 sums along rows of 16-512
elements (1 GiB device arrays), wall clock of loops of calls per plan.

    python3 benchmarks/exp/short_rows_plans.py
"""
import os, sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

GIB = float(os.environ.get("GIB", "1"))
rng = np.random.default_rng(0)
PLANS = [("auto", {}), ("segment_per_item", {"variant": "segment_per_item"}),
         ("subgroup wg32", {"variant": "subgroup", "wg_size": 32}),
         ("subgroup wg64", {"variant": "subgroup", "wg_size": 64}),
         ("subgroup wg128", {"variant": "subgroup", "wg_size": 128})]
for w in [int(x) for x in os.environ.get("WIDTHS", "16,32,64,128,256,512").split(",")]:
    rows = int(GIB * (1 << 30)) // 4 // w
    h = rng.standard_normal((rows, w)).astype(np.float32)
    d = gpured.to_device(h)
    want = h.sum(axis=1, dtype=np.float64)
    line = "%9dx%-4d" % (rows, w)
    for name, kw in PLANS:
        try:
            ok = np.allclose(np.asarray(gpured.sum(d, axis=1, **kw)), want, rtol=1e-5, atol=1e-4)
            t = loop_ms(lambda: gpured.sum(d, axis=1, **kw), gpured.synchronize)
            line += "  %s %.3f%s" % (name, t, "" if ok else " BAD")
        except Exception as e:
            line += "  %s ERR(%s)" % (name, str(e)[:60])
    print(line, flush=True)
    del d
