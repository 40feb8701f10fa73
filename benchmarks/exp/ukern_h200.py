"""H200 rows for issue 42's user-defined reductions and their fused
built-ins: wall clock, a loop of calls on the same device-resident data
(1 GiB float32), one synchronisation, median of 5 loops (_loop.py), peers
in the same process.  Each row's result is checked first.

  * a ReductionKernel sum beside gpured.sum           (target >= 0.98)
  * a ReductionKernel l2-norm beside cupy.linalg.norm (target >= 1)
  * gpured.dot beside cupy.dot / torch.dot            (target >= 1)
  * gpured.logsumexp beside torch.logsumexp           (target >= 1)
  * a ScanKernel cummax beside gpured.cummax / torch.cummax (no target)
  * the variants of the user sum (explain's plan), and tune()'s choice

    bash benchmarks/gpu_run.sh exp benchmarks/exp/ukern_h200.py
"""
import os

import numpy as np

import gpured
from _loop import PeerRows, loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = PeerRows()


row = rows.add


def peer(peers, name, fn, sync_fn):
    try:
        peers[name] = loop_ms(fn, sync_fn)
    except Exception as e:  # a peer lacking the call: say so, keep going
        print("peer %s: %s" % (name, e))


n = 1 << int(os.environ.get("UK_LOG2", "28"))
rng = np.random.default_rng(0)
a = rng.standard_normal(n).astype(np.float32)
b = rng.standard_normal(n).astype(np.float32)
da, db = gpured.to_device(a), gpured.to_device(b)
a64 = a.astype(np.float64)
cps = cp.cuda.Device().synchronize if cp is not None else None
ca = cp.asarray(a) if cp is not None else None
cb = cp.asarray(b) if cp is not None else None
ta = torch.from_numpy(a).cuda() if torch is not None else None
tb = torch.from_numpy(b).cuda() if torch is not None else None
tsync = torch.cuda.synchronize if torch is not None else None

# ---------------------------------------------------------------- sum
usum = gpured.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "usum")
want = a64.sum()
got = float(usum(da).get())
assert abs(got - want) <= 1e-4 * np.abs(a64).sum(), (got, want)
print("user sum plan:", usum.explain(da))
print("gpured.sum plan:", gpured.explain("sum", da))
ref = loop_ms(lambda: gpured.sum(da), sync)
row("ReductionKernel sum, 1 GiB f32", loop_ms(lambda: usum(da), sync),
    {"gpured.sum": ref})
# float64 accumulation, as gpured.sum's float32 sum
usum64 = gpured.ReductionKernel("float32 x", "float32 y", "x", "a + b",
                                "y = a", "0", "usum64", reduce_type="float64")
row("ReductionKernel sum (f64 acc)", loop_ms(lambda: usum64(da), sync),
    {"gpured.sum": ref})

# ------------------------------------------------------------ l2 norm
l2 = gpured.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)",
                            "0", "l2norm")
got = float(l2(da).get())
assert abs(got - np.sqrt((a64 ** 2).sum())) <= 1e-4 * got
peers = {}
if cp is not None:
    peer(peers, "cupy.linalg.norm", lambda: cp.linalg.norm(ca), cps)
if torch is not None:
    peer(peers, "torch.linalg.vector_norm",
         lambda: torch.linalg.vector_norm(ta), tsync)
row("ReductionKernel l2-norm, 1 GiB f32", loop_ms(lambda: l2(da), sync), peers)

# ---------------------------------------------------------------- dot
got = float(gpured.dot(da, db).get())
want = a64 @ b.astype(np.float64)
assert abs(got - want) <= 1e-4 * np.abs(a64 * b).sum(), (got, want)
print("dot plan:", gpured._kernels._KCACHE and
      next(k for key, k in gpured._kernels._KCACHE.items()
           if key[0] == "dot").explain(da, db))
peers = {}
if cp is not None:
    peer(peers, "cupy.dot", lambda: cp.dot(ca, cb), cps)
if torch is not None:
    peer(peers, "torch.dot", lambda: torch.dot(ta, tb), tsync)
row("dot, 2 x 1 GiB f32", loop_ms(lambda: gpured.dot(da, db), sync), peers)

# ----------------------------------------------------------- logsumexp
got = float(gpured.logsumexp(da).get())
m = a64.max()
want = m + np.log(np.exp(a64 - m).sum())
assert abs(got - want) <= 1e-4 * abs(want), (got, want)
peers = {}
if torch is not None:
    peer(peers, "torch.logsumexp", lambda: torch.logsumexp(ta, 0), tsync)
if cp is not None:
    try:
        import cupyx.scipy.special as cps_special
        peer(peers, "cupyx logsumexp", lambda: cps_special.logsumexp(ca), cps)
    except Exception as e:
        print("cupyx logsumexp:", e)
row("logsumexp, 1 GiB f32", loop_ms(lambda: gpured.logsumexp(da), sync), peers)
# rows of 4096 (axis=-1), a softmax denominator's shape
d2 = da.reshape(-1, 4096)
peers = {}
if torch is not None:
    t2 = ta.reshape(-1, 4096)
    peer(peers, "torch.logsumexp", lambda: torch.logsumexp(t2, 1), tsync)
row("logsumexp rows of 4096", loop_ms(
    lambda: gpured.logsumexp(d2, axis=1), sync), peers)

# ----------------------------------------------------------- ScanKernel
ucummax = gpured.ScanKernel("T x", "T y", "x", "max(a, b)", "-INFINITY",
                            "ucummax")
got = ucummax(da)
assert np.array_equal(got[-1000:].get(),
                      np.maximum.accumulate(a)[-1000:]), "user cummax"
print("user cummax plan:", ucummax.explain(da))
del got
peers = {"gpured.cummax": loop_ms(lambda: gpured.cummax(da), sync)}
if torch is not None:
    peer(peers, "torch.cummax", lambda: torch.cummax(ta, 0), tsync)
row("ScanKernel cummax, 1 GiB f32", loop_ms(lambda: ucummax(da), sync), peers)

# ------------------------------------------------- variants and tune()
for v in gpured.ReductionKernel.variants():
    try:
        ms = loop_ms(lambda: usum(da, variant=v), sync, calls=5, loops=3)
    except gpured.VariantUnavailable as e:
        print("variant %s: unavailable (%s)" % (v, e))
        continue
    print("user sum variant %-18s %8.3f ms" % (v, ms))
print("tune():", usum.tune(da, reps=3), "->", usum._variant)
usum._variant = None

rows.print()
