"""Short rows on the GPU (issue 15's row "short rows 2^24 x 16 sum"):
sums along rows of 4-64 elements of 1 GiB float32 device arrays, wall
clock of loops of calls synchronised once (median of 5) beside torch and
CuPy, kernel events and the plan beside.

    python3 benchmarks/exp/short_rows.py
"""
import os, sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_torch

torch = optional_torch()
try:
    import cupy as cp
except ImportError:
    cp = None
GIB = float(os.environ.get("GIB", "1"))
rng = np.random.default_rng(0)
print("%-14s %9s %9s %9s %9s %7s  %s" % ("shape", "gpured", "events", "torch", "cupy", "best/us", "plan"))
for w in (16, 4, 64):
    rows = int(GIB * (1 << 30)) // 4 // w
    h = rng.standard_normal((rows, w)).astype(np.float32)
    d = gpured.to_device(h)
    ok = np.allclose(np.asarray(gpured.sum(d, axis=1)), h.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    t = loop_ms(lambda: gpured.sum(d, axis=1), gpured.synchronize)
    ev = gpured.timeit("sum", d, axis=1, reps=5)
    plan = "%s %sx%s vw%s" % (ev["plan"].get("variant"), ev["plan"].get("wg_size"),
                              ev["plan"].get("groups"), ev["plan"].get("vw"))
    tt = tc = float("nan")
    if torch is not None:
        x = torch.from_numpy(h).cuda()
        tt = loop_ms(lambda: x.sum(dim=1), torch.cuda.synchronize)
        del x
        torch.cuda.empty_cache()
    if cp is not None:
        y = cp.asarray(h)
        tc = loop_ms(lambda: y.sum(axis=1), cp.cuda.Device().synchronize)
        del y
        cp.get_default_memory_pool().free_all_blocks()
    best = min([v for v in (tt, tc) if v == v] or [float("nan")])
    print("%-14s %9.4f %9.4f %9.4f %9.4f %7.3f  %s ok=%s" % ("%dx%d" % (rows, w), t, ev["seconds"] * 1e3,
          tt, tc, best / t, plan, ok), flush=True)
    del d
