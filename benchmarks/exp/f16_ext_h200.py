"""Halves' max / argmax (aligned loads in order, GR_HF 1) over the vector
width and accumulators: 1 GiB float16 / bfloat16 device arrays, wall
clock, beside float32's max and argmax; results checked against NumPy.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/f16_ext_h200.py
"""
import os
import sys

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms  # noqa: E402

rng = np.random.default_rng(0)
n16 = (1 << 30) // 2
h = (rng.standard_normal(n16) * 3 + 1).astype(np.float32)
d32 = gpured.to_device(h[: n16 // 2])
for op in ("max", "argmax"):
    print("float32 %s 1 GiB %.3f ms" % (op, loop_ms(lambda: getattr(gpured, op)(d32), gpured.synchronize)), flush=True)
del d32
try:
    import ml_dtypes
    dts = [np.float16, ml_dtypes.bfloat16]
except ImportError:
    dts = [np.float16]
for dt in dts:
    a = h.astype(dt)
    d = gpured.to_device(a)
    for op in ("max", "argmax"):
        f = getattr(gpured, op)
        ref = getattr(np, op)(a)
        for kw in ({}, dict(vw=4, ilp=2), dict(vw=4, ilp=4), dict(vw=8, ilp=2), dict(vw=8, ilp=4),
                   dict(vw=8, ilp=1), dict(vw=4, ilp=8)):
            try:
                got = f(d, **kw)
                ok = (int(got) == int(ref)) if op == "argmax" else float(got) == float(ref)
                t = loop_ms(lambda: f(d, **kw), gpured.synchronize)
                p = gpured.explain(op, d, **kw)
                print("  %-8s %-6s %-20s %.3f ms  %s  [%s vw %s ilp %s wg %s]" % (
                    np.dtype(dt).name, op, kw or "auto", t, "ok" if ok else "BAD",
                    p["variant"], p["vw"], p["ilp"], p["wg_size"]), flush=True)
            except Exception as e:
                print("  %-8s %-6s %-20s ERR %s" % (np.dtype(dt).name, op, kw, str(e)[:80]), flush=True)
    del d
