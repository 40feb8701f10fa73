"""Short rows on NVIDIA (issue 15's "short rows 2^24 x 16"): row
reductions of 1 GiB device arrays by the auto plan (segment_per_warp from
16 to 511 elements: lanes of a warp per row), beside the plan it replaced
(PREV: segment_per_item up to 128 elements, else subgroup), torch and
CuPy; wall clock of loops of calls synchronised once (median of 5).

    WIDTHS=16,64 OPS=sum:float32,argmax:int32 python3 benchmarks/exp/rows_warp.py
    SWEEP=1 ...   also every lane count (items=) and work-group size

The first measurement (2026-11-27) ran reduceat's warp kernel on one
offset per row: gpured.reduceat(d, [0], axis=1, variant="segment_per_warp").
"""
import os, sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
GIB = float(os.environ.get("GIB", "1"))
WIDTHS = [int(w) for w in os.environ.get(
    "WIDTHS", "8,16,24,32,64,100,128,256,384,511,512,1024").split(",")]
OPS = [o.split(":") for o in os.environ.get(
    "OPS", "sum:float32,sum:float64,sum:int32,max:float32,argmax:float32").split(",")]
SWEEP = os.environ.get("SWEEP") == "1"
rng = np.random.default_rng(0)
TORCH = {"sum": "sum", "max": "amax", "argmax": "argmax", "min": "amin", "mean": "mean"}


def peer(lib, x, op):
    if lib == "torch":
        f = getattr(x, TORCH[op])
        return loop_ms(lambda: f(dim=1), torch.cuda.synchronize)
    f = getattr(x, op)
    return loop_ms(lambda: f(axis=1), cp.cuda.Device().synchronize)


print("%-16s %-8s %-8s %8s %8s %8s %8s %7s  %s" % (
    "shape", "op", "dtype", "gpured", "prev", "torch", "cupy", "peer/us", "plan"))
for op, dt in OPS:
    dt = np.dtype(dt)
    for w in WIDTHS:
        rows = int(GIB * (1 << 30)) // dt.itemsize // w
        if dt.kind == "f":
            h = rng.standard_normal((rows, w)).astype(dt)
        else:
            h = rng.integers(-1000, 1000, (rows, w)).astype(dt)
        want = getattr(np, op)(h, axis=1)
        d = gpured.to_device(h)
        f = getattr(gpured, op)
        got = np.asarray(f(d, axis=1))
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-3) if dt.kind == "f" else np.array_equal(got, want)
        t = loop_ms(lambda: f(d, axis=1), gpured.synchronize)
        p = gpured.explain(op, d, axis=1)
        prev = "segment_per_item" if w <= 128 else "subgroup"
        tp = float("nan")
        if p["variant"] == "segment_per_warp":
            kp = dict(variant=prev)
            if prev == "subgroup":
                kp["wg_size"] = max(64, min(256, 1 << int(np.log2(max(1, w // 16)))))
            tp = loop_ms(lambda: f(d, axis=1, **kp), gpured.synchronize)
        tt = tc = float("nan")
        if torch is not None:
            x = torch.from_numpy(h).cuda()
            tt = peer("torch", x, op)
            del x
            torch.cuda.empty_cache()
        if cp is not None:
            y = cp.asarray(h)
            tc = peer("cupy", y, op)
            del y
            cp.get_default_memory_pool().free_all_blocks()
        best = min([v for v in (tt, tc) if v == v] or [float("nan")])
        print("%-16s %-8s %-8s %8.4f %8.4f %8.4f %8.4f %7.3f  %s lanes %s wg %s ok=%s" % (
            "%dx%d" % (rows, w), op, dt.name, t, tp, tt, tc, best / t, p["variant"],
            p.get("lanes"), p["wg_size"], ok), flush=True)
        if SWEEP and p["variant"] == "segment_per_warp":
            for items in (1, 2, 4, 8, 16, 32, 64):
                if items > 4 * w:
                    continue
                for wg in (128, 256):
                    kw = dict(variant="segment_per_warp", items=items, wg_size=wg)
                    tw = loop_ms(lambda: f(d, axis=1, **kw), gpured.synchronize)
                    print("    items %2d (lanes %2d) wg %3d %.4f" % (
                        items, gpured.explain(op, d, axis=1, **kw)["lanes"], wg, tw), flush=True)
        del d
