"""Halves' plain sums with pairs added in float first (gr_plan.hf,
kernels/common.cl GR_HF): 1 GiB float16 / bfloat16 device sums over the
fold factor (GPURED_EXP_HF, set per process by run_many; the knob
existed in csrc/plan_reduce.c up to commit 25072fa, run it there) and the
vector width, wall clock, beside float32's sum, torch and CuPy; every
result checked against the float64 sum rounded once.  Without the knob
it times the plan's rows and the extremes beside the peers.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/run_many.py \\
        GPURED_EXP_HF=1 benchmarks/exp/f16_fold_h200.py \\
        GPURED_EXP_HF=2 benchmarks/exp/f16_fold_h200.py ...
"""
import os
import sys

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_cupy, optional_torch  # noqa: E402

torch, cp = optional_torch(), optional_cupy()
hf = os.environ.get("GPURED_EXP_HF", "(default)")
rng = np.random.default_rng(0)
n16 = (1 << 30) // 2
h = (rng.standard_normal(n16) * 3 + 1).astype(np.float32)
try:
    import ml_dtypes
    dts = [np.float16, ml_dtypes.bfloat16]
except ImportError:
    dts = [np.float16]
d32 = gpured.to_device(h[: n16 // 2])
t32 = loop_ms(lambda: gpured.sum(d32), gpured.synchronize)
print("HF %s: float32 sum 1 GiB %.3f ms" % (hf, t32), flush=True)
del d32
for dt in dts:
    a = h.astype(dt)
    want = np.float64(np.sum(a.astype(np.float64)).astype(dt))
    d = gpured.to_device(a)
    name = np.dtype(dt).name
    if torch is not None and hf in ("1", "(default)"):
        tdt = torch.float16 if dt == np.float16 else torch.bfloat16
        x = torch.from_numpy(a.view(np.int16)).cuda().view(tdt)
        print("  torch %s sum %.3f ms" % (name, loop_ms(lambda: x.sum(), torch.cuda.synchronize)), flush=True)
        del x
    if cp is not None and dt == np.float16 and hf in ("1", "(default)"):
        y = cp.asarray(a)
        print("  cupy %s sum %.3f ms" % (name, loop_ms(lambda: y.sum(), cp.cuda.Device().synchronize)), flush=True)
        del y
    for kw in ({}, dict(vw=2), dict(vw=4), dict(vw=8), dict(vw=4, ilp=4), dict(vw=8, ilp=1)):
        try:
            got = np.float64(gpured.sum(d, **kw))
            ok = got == want or (np.isinf(got) and np.isinf(want))
            t = loop_ms(lambda: gpured.sum(d, **kw), gpured.synchronize)
            p = gpured.explain("sum", d, **kw)
            print("  %-8s %-18s %.3f ms  %.2f of f32 B/s  %s  [%s vw %s ilp %s | %s]" % (
                name, kw or "auto", t, t32 / t, "ok" if ok else "BAD %r vs %r" % (got, want),
                p["variant"], p["vw"], p["ilp"], "fold" if "halves added" in p["why"] else "no fold"), flush=True)
        except Exception as e:  # a knob a variant refuses
            print("  %-8s %-18s ERR %s" % (name, kw, str(e)[:80]), flush=True)
    if hf in ("1", "(default)"):
        x = y = None
        if torch is not None:
            tdt = torch.float16 if dt == np.float16 else torch.bfloat16
            x = torch.from_numpy(a.view(np.int16)).cuda().view(tdt)
        if cp is not None and dt == np.float16:
            y = cp.asarray(a)
        for op in ("max", "argmax"):
            f = getattr(gpured, op)
            got = int(f(d)) if op == "argmax" else float(f(d))
            ref = getattr(np, op)(a)
            ok = got == (int(ref) if op == "argmax" else float(ref))
            t = loop_ms(lambda: f(d), gpured.synchronize)
            peers = []
            if x is not None:
                peers.append("torch %.3f" % loop_ms(lambda: getattr(x, op)(), torch.cuda.synchronize))
            if y is not None:
                peers.append("cupy %.3f" % loop_ms(lambda: getattr(y, op)(), cp.cuda.Device().synchronize))
            print("  %-8s %-18s %.3f ms  %.2f of f32 sum B/s  %s  %s" % (
                name, op, t, t32 / t, "ok" if ok else "BAD", ", ".join(peers)), flush=True)
        del x, y
    del d
