"""count_nonzero float64 wall vs events (issue 16 note): plans and loops."""
import os
import sys
import time
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 1024
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64):
    n = int(mib * 2**20) // np.dtype(dt).itemsize
    a = rng.standard_normal(n).astype(dt)
    a[rng.random(n) < 0.1] = 0
    d = gpured.to_device(a)
    for f in ("sum", "count_nonzero", "nansum"):
        e = gpured.explain(f, d)
        print(np.dtype(dt).name, f, {k: e.get(k) for k in ("variant", "kernel", "wg_size", "items", "groups", "vw", "passes", "epilogue")}, flush=True)
        g = getattr(gpured, f)
        for reps in (1, 3):
            ws = [loop_ms(lambda: g(d), gpured.synchronize, 10) for _ in range(reps)]
            ev = gpured.timeit(f, d, reps=5)["seconds"] * 1e3
            print("   wall", " ".join("%.3f" % w for w in ws), "events %.3f" % ev, flush=True)
        # with the Python face bypassed
        if f == "count_nonzero":
            w = loop_ms(lambda: gpured._core.reduce("count_nonzero", d, None, np.intp, None, False, np._NoValue, {}), gpured.synchronize, 10)
            print("   core wall %.3f" % w, flush=True)
        # one call: how long until it returns
        gpured.synchronize()
        t = time.perf_counter(); r = g(d); t1 = time.perf_counter(); gpured.synchronize(); t2 = time.perf_counter()
        print("   one call returns after %.3f ms, done %.3f ms" % ((t1 - t) * 1e3, (t2 - t) * 1e3), flush=True)
    del d
