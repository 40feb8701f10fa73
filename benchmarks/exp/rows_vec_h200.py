"""Short rows read as vectors (issue 43: 2^24 x 16 float32 row sums >=
CuPy): segment_per_warp's auto plan beside CuPy and torch, then (SWEEP=1)
its ilp (rows a lane reads at once) and items (elements a lane) knobs.
Wall clock of loops of calls on 1 GiB device arrays, one sync at the end.

    WIDTHS=16,32 OPS=sum:float32 SWEEP=1 bash benchmarks/gpu_run.sh exp benchmarks/exp/rows_vec_h200.py
"""
import os, sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
WIDTHS = [int(w) for w in os.environ.get("WIDTHS", "16,24,32,64,128,256,511").split(",")]
OPS = [o.split(":") for o in os.environ.get(
    "OPS", "sum:float32,sum:float64,sum:int32,max:float32,argmax:float32,argmin:float64").split(",")]
SWEEP = os.environ.get("SWEEP") == "1"
TORCH = {"sum": "sum", "max": "amax", "argmax": "argmax", "min": "amin", "argmin": "argmin"}
rng = np.random.default_rng(0)
print("%-14s %-7s %-8s %8s %8s %8s %6s  %s" % ("shape", "op", "dtype", "gpured", "torch", "cupy",
                                               "peer/g", "plan"))
for op, dt in OPS:
    dt = np.dtype(dt)
    for w in WIDTHS:
        rows = (1 << 30) // dt.itemsize // w
        h = (rng.standard_normal((rows, w)) if dt.kind == "f"
             else rng.integers(-1000, 1000, (rows, w))).astype(dt)
        if op.startswith("arg"):
            h[::7, w // 2] = h[::7, 1]  # ties
        want = getattr(np, op)(h, axis=1)
        d = gpured.to_device(h)
        f = getattr(gpured, op)
        got = np.asarray(f(d, axis=1))
        ok = (np.allclose(got, want, rtol=1e-5, atol=1e-3) if dt.kind == "f" and not op.startswith("arg")
              else np.array_equal(got, want))
        t = loop_ms(lambda: f(d, axis=1), gpured.synchronize)
        tt = tc = float("nan")
        if torch is not None:
            x = torch.from_numpy(h).cuda()
            g = getattr(x, TORCH[op])
            tt = loop_ms(lambda: g(dim=1), torch.cuda.synchronize)
            del x, g
            torch.cuda.empty_cache()
        if cp is not None:
            y = cp.asarray(h)
            g = getattr(y, op)
            tc = loop_ms(lambda: g(axis=1), cp.cuda.Device().synchronize)
            del y, g
            cp.get_default_memory_pool().free_all_blocks()
        best = min([v for v in (tt, tc) if v == v] or [float("nan")])
        print("%-14s %-7s %-8s %8.4f %8.4f %8.4f %6.2f  %s ok=%s" % (
            "%dx%d" % (rows, w), op, dt.name, t, tt, tc, best / t,
            gpured.explain(op, d, axis=1)["why"], ok), flush=True)
        if SWEEP and gpured.explain(op, d, axis=1)["variant"] == "segment_per_warp":
            for ilp in (1, 2, 4, 8):
                for items in (0, 2, 4, 8, 16):
                    if items and items > w:
                        continue
                    kw = dict(variant="segment_per_warp", ilp=ilp)
                    if items:
                        kw["items"] = items
                    try:
                        g2 = np.asarray(f(d, axis=1, **kw))
                    except Exception as e:
                        print("    ", kw, "refused:", e)
                        continue
                    ok2 = (np.allclose(g2, want, rtol=1e-5, atol=1e-3) if dt.kind == "f" and not op.startswith("arg")
                           else np.array_equal(g2, want))
                    tw = loop_ms(lambda: f(d, axis=1, **kw), gpured.synchronize)
                    print("    ilp %d items %2d lanes %2d %.4f ok=%s" % (
                        ilp, items, gpured.explain(op, d, axis=1, **kw)["lanes"], tw, ok2), flush=True)
        del d
