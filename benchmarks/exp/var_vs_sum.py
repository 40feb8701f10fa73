"""var/std/nanvar/nanstd against sum on the same device and data (issue
16's target: within 10% of the same-size sum, one fused pass), beside
torch.var and CuPy's var where they are installed: device-resident
float32/float64, wall clock of loops of calls (one sync at the end) and
kernel events; a host-resident float32 array through the GPU's pipeline;
accuracy of the float32 result far from zero."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 64
dev = gpured.get_device()
print("%s, %g MiB" % (dev["name"], mib), flush=True)
try:
    import torch
    torch_ok = torch.cuda.is_available()
except Exception:
    torch_ok = False
try:
    import cupy
except Exception:
    cupy = None
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64):
    if dt == np.float64 and not dev["fp64"]:
        continue
    n = int(mib * 2**20) // np.dtype(dt).itemsize
    a = (rng.standard_normal(n) + 1e3).astype(dt)
    d = gpured.to_device(a)
    nd = gpured.to_device(np.where(rng.random(n) < 0.1, np.nan, a).astype(dt))
    base = loop_ms(lambda: gpured.sum(d), gpured.synchronize, 10)
    base_ev = gpured.timeit("sum", d, reps=5)["seconds"] * 1e3
    print("sum     %-7s wall %.3f ms  events %.3f" % (np.dtype(dt).name, base, base_ev))
    for f, x in (("var", d), ("std", d), ("nanvar", nd), ("nanstd", nd)):
        g = getattr(gpured, f)
        w = loop_ms(lambda: g(x), gpured.synchronize, 10)
        ev = gpured.timeit(f, x, reps=5)["seconds"] * 1e3 if not f.startswith("nan") \
            else float("nan")  # (timeit has no nan* forms)
        peers = ""
        if torch_ok and f in ("var", "std"):
            t = torch.from_numpy(a).cuda()
            tf = getattr(torch, f)
            tw = loop_ms(lambda: tf(t, correction=0), torch.cuda.synchronize, 10)
            peers += "  torch %.3f ms (%.2fx)" % (tw, tw / w)
            del t
        if cupy is not None:
            c = cupy.asarray(a if not f.startswith("nan") else gpured.asnumpy(x))
            cf = getattr(cupy, f)
            cw = loop_ms(lambda: cf(c), cupy.cuda.Device().synchronize, 10)
            peers += "  cupy %.3f ms (%.2fx)" % (cw, cw / w)
            del c
        print("%-7s %-7s wall %.3f ms  events %.3f | sum/%s wall %.3f events %.3f%s" % (
            f, np.dtype(dt).name, w, ev, f, base / w, base_ev / ev, peers), flush=True)
    del d, nd
    gpured.empty_cache()
# accuracy far from zero, float32
a = (1e4 + rng.standard_normal(1 << 24)).astype(np.float32)
exact = float(np.var(a.astype(np.float64)))
d = gpured.to_device(a)
print("var f32 1e4+N(0,1): rel err %.2e (gpured device), %.2e (numpy f32)" % (
    abs(float(gpured.var(d).get()) - exact) / exact, abs(float(np.var(a)) - exact) / exact))
# host-resident float32 through the GPU
h = (rng.standard_normal(int(mib * 2**20) // 4) + 1e3).astype(np.float32)
ws = loop_ms(lambda: gpured.sum(h), lambda: None, 3)
wv = loop_ms(lambda: gpured.var(h), lambda: None, 3)
print("host f32 %g MiB: sum %.2f ms, var %.2f ms (sum/var %.3f), numpy.var %.1f ms" % (
    mib, ws, wv, ws / wv, loop_ms(lambda: np.var(h), lambda: None, 1)))
h[::10] = np.nan
for f in ("nanvar", "nanmean"):
    g = getattr(gpured, f)
    w = loop_ms(lambda: g(h), lambda: None, 3)
    print("host f32 %g MiB with NaNs: %s %.2f ms (sum/%s %.3f), numpy.%s %.1f ms" % (
        mib, f, w, f, ws / w, f, loop_ms(lambda: getattr(np, f)(h), lambda: None, 1)))
