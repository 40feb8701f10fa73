"""The elementwise family's plan (csrc/plan_elementwise.c) and NumPy
dispatch (gpured/_numpy.py) on the GPU, wall clock: a loop of calls on the
same device-resident data, one synchronisation, median of 5 loops
(_loop.py), CuPy and torch in the same process, ratios printed.

  1. d * 2 + 1 on 1 GiB float32 with the default plan (the policy row's
     citation: 1.588 ms, CuPy 2.552, torch 1.024), results checked;
  2. one launch, np.multiply(d, 2, out=o), over the knobs wg_size x items
     (the grid-stride loop), to fill the table's GPU row with measured
     alternatives; each result checked once;
  3. np.sum(d) / np.var(d) (__array_function__) against gpured.sum(d) /
     gpured.var(d) on 1 KiB and 1 GiB: the dispatch's cost per call.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/ew_plan_h200.py
EW_LOG2 (default 28: 2**28 float32 = 1 GiB) sets the size.
"""
import os

import numpy as np

import gpured
from gpured import _core
from _loop import loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
dev = gpured.get_device()
print("device:", dev["name"], "| max wg", dev["max_work_group_size"])
n = 1 << int(os.environ.get("EW_LOG2", "28"))
a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
d = gpured.to_device(a)


def ratio(ms, peers):
    return "  ".join("%s %.3f ms (%.2fx)" % (k, v, v / ms)
                     for k, v in peers.items() if v)


# 1. the default plan
peers = {}
if cp is not None:
    try:
        c = cp.asarray(a)
        peers["cupy"] = loop_ms(lambda: c * 2 + 1, cp.cuda.Device().synchronize)
        del c
    except Exception as e:  # pragma: no cover - a broken CuPy
        print("cupy: %s" % e)
if torch is not None:
    try:
        t = torch.from_numpy(a).cuda()
        peers["torch"] = loop_ms(lambda: t * 2 + 1, torch.cuda.synchronize)
        del t
    except Exception as e:  # pragma: no cover
        print("torch: %s" % e)
r = (d * 2 + 1).get()
assert np.array_equal(r, a * 2 + 1), "d * 2 + 1 differs from NumPy"
ms = loop_ms(lambda: d * 2 + 1, sync)
print("plan:", gpured.explain("multiply", (d, 2.0)))
print("d * 2 + 1, 2**%d f32: %.3f ms   %s" % (n.bit_length() - 1, ms,
                                            ratio(ms, peers)))

# 2. one launch over the knobs
f4 = np.dtype(np.float32)
two = np.asarray(2, f4)
o = gpured.empty(a.shape, f4)
peers1 = {}
if cp is not None:
    try:
        c, co = cp.asarray(a), cp.empty(n, cp.float32)
        peers1["cupy"] = loop_ms(lambda: cp.multiply(c, 2, out=co),
                                 cp.cuda.Device().synchronize)
        del c, co
    except Exception as e:  # pragma: no cover
        print("cupy: %s" % e)
if torch is not None:
    try:
        t, to = torch.from_numpy(a).cuda(), torch.empty(n, device="cuda")
        peers1["torch"] = loop_ms(lambda: torch.mul(t, 2, out=to),
                                  torch.cuda.synchronize)
        del t, to
    except Exception as e:  # pragma: no cover
        print("torch: %s" % e)
want = a * 2
best = None
for wg in (128, 256, 512, 1024):
    if wg > dev["max_work_group_size"]:
        continue
    for items in (1, 2, 4, 8, 16):
        def run(wg=wg, items=items):
            _core.elementwise("multiply", (d, two), (f4, f4, f4), o, wg, items)
        run()
        assert np.array_equal(o.get(), want), (wg, items)
        ms = loop_ms(run, sync)
        best = min(best or (ms, wg, items), (ms, wg, items))
        print("one launch d*2, wg %4d items %2d: %.3f ms  (%.0f GB/s)  %s"
              % (wg, items, ms, 2 * a.nbytes / ms / 1e6, ratio(ms, peers1)))
print("best one launch: %.3f ms at wg %d items %d" % best)

# 3. NumPy dispatch's cost per call
small = gpured.to_device(a[:256])
for name, f, g in (("sum", lambda x: np.sum(x), lambda x: gpured.sum(x)),
                   ("var", lambda x: np.var(x), lambda x: gpured.var(x))):
    for label, x in (("1 KiB", small), ("1 GiB" if n == 1 << 28 else "n", d)):
        assert np.allclose(f(x).get(), g(x).get(), rtol=1e-5)
        tf = loop_ms(lambda: f(x), sync, calls=100 if x is small else 10)
        tg = loop_ms(lambda: g(x), sync, calls=100 if x is small else 10)
        print("np.%s(d) %s: %.4f ms  gpured.%s(d): %.4f ms  (+%.1f us)"
              % (name, label, tf, name, tg, (tf - tg) * 1e3))
