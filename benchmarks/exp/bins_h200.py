"""H200 rows for issue 41 (grouped statistics): sum_by_key / bincount into
few and many cells, and the by-key chooser's variants, wall clock, a loop of
calls on the same device-resident data, one synchronisation, median of 5
loops (_loop.py), peers (torch.index_add_, cupy.bincount,
cupyx.scatter_add) in the same process.  Every gpured row is checked
against NumPy first.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/bins_h200.py

Targets: 16 Mi float32 into 16 and 1024 random cells >= 10x the best
peer; 64^3 random cells >= 1.0x; sorted keys >= 2.5x.  BINS_LOG2 (24)
sets the size.  Prints explain's choice for each row, then the table.
"""
import os

import numpy as np

import gpured
from _loop import loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
try:
    import cupyx
except ImportError:  # pragma: no cover - the GPU host has it
    cupyx = None
sync = gpured.synchronize
rows = []


def row(name, ms, peers):
    best = min((v for v in peers.values() if v), default=None)
    rows.append((name, ms, peers, best / ms if best else None))


def safe(fn):
    try:
        return fn()
    except Exception as e:  # a peer lacking something: the row goes on
        print("  (skipped: %s: %s)" % (type(e).__name__, str(e)[:80]))
        return None


def peers_for(k, v, nk):
    p = {}
    if torch is not None:
        tk = torch.from_numpy(k.astype(np.int64)).cuda()
        tv = torch.from_numpy(v).cuda()
        out = torch.zeros(nk, dtype=tv.dtype, device="cuda")
        p["torch.index_add_"] = safe(lambda: loop_ms(
            lambda: out.zero_().index_add_(0, tk, tv), torch.cuda.synchronize))
    if cp is not None:
        ck, cv = cp.asarray(k), cp.asarray(v)
        cs = cp.cuda.Device().synchronize
        p["cupy.bincount"] = safe(lambda: loop_ms(
            lambda: cp.bincount(ck, weights=cv, minlength=nk), cs))
        if cupyx is not None:
            co = cp.zeros(nk, v.dtype)
            p["cupyx.scatter_add"] = safe(lambda: loop_ms(
                lambda: cupyx.scatter_add(co, ck, cv), cs))
    return p


def check(got, k, v, nk, what):
    want = np.bincount(k, weights=v.astype(np.float64), minlength=nk)
    got = got.get() if isinstance(got, gpured.Array) else got
    tol = 1e-3 * max(1.0, float(np.abs(want).max()))
    assert np.allclose(got, want, rtol=1e-4, atol=tol), what


rng = np.random.default_rng(0)
m = 1 << int(os.environ.get("BINS_LOG2", "24"))
cases = [("random", 16, np.uint8), ("random", 16, np.int32),
         ("random", 1024, np.uint16), ("random", 1024, np.int32),
         ("random", 64 ** 3, np.int32), ("sorted", 64 ** 3, np.int32),
         ("sorted", 1024, np.int32)]
for order, nk, kdt in cases:
    k = rng.integers(0, nk, m).astype(kdt)
    if order == "sorted":
        k.sort()
    v = rng.standard_normal(m).astype(np.float32)
    dk, dv = gpured.to_device(k), gpured.to_device(v)
    tag = "%s %d keys %s" % (order, nk, np.dtype(kdt).name)
    plan = gpured.explain_by_key("sum_by_key", dk, dv, num_keys=nk)
    print("%-28s auto: %-16s %s" % (tag, plan["variant"], plan["why"]))
    check(gpured.sum_by_key(dk, dv, nk), k, v, nk, tag)
    peers = peers_for(k, v, nk)
    row("sum_by_key " + tag,
        loop_ms(lambda: gpured.sum_by_key(dk, dv, nk), sync), peers)
    # each variant, for the chooser's table
    for var in ("atomic", "warp_aggregated", "local_hash", "private_bins"):
        def run(var=var):
            return gpured.sum_by_key(dk, dv, nk, variant=var)
        try:
            check(run(), k, v, nk, tag + " " + var)
        except gpured.VariantUnavailable as e:
            print("  %s: unavailable (%s)" % (var, str(e)[:60]))
            continue
        row("  variant %s" % var, loop_ms(run, sync), peers)
    if nk <= 1024:
        # bincount(weights): float64 sums as NumPy (the weights cast on the
        # device first), the max found on the device
        check(gpured.bincount(dk, dv, minlength=nk), k, v, nk, "bincount")
        row("bincount(w) " + tag,
            loop_ms(lambda: gpured.bincount(dk, dv, minlength=nk), sync), peers)
        dv64 = gpured.to_device(v.astype(np.float64))
        row("bincount(w f64) " + tag,
            loop_ms(lambda: gpured.bincount(dk, dv64, minlength=nk), sync),
            peers)
    del dk, dv

# histogram: 16 Mi float32, 1024 uniform bins, beside cupy / torch
a = rng.standard_normal(m).astype(np.float32)
da = gpured.to_device(a)
h, e = gpured.histogram(da, 1024, range=(-4.0, 4.0))
hw, ew = np.histogram(a, 1024, range=(-4.0, 4.0))
assert np.array_equal(h.get(), hw) and np.array_equal(e, ew), "histogram"
peers = {}
if cp is not None:
    ca = cp.asarray(a)
    peers["cupy.histogram"] = safe(lambda: loop_ms(
        lambda: cp.histogram(ca, 1024, range=(-4.0, 4.0)),
        cp.cuda.Device().synchronize))
if torch is not None:
    ta = torch.from_numpy(a).cuda()
    peers["torch.histc"] = safe(lambda: loop_ms(
        lambda: torch.histc(ta, 1024, -4.0, 4.0), torch.cuda.synchronize))
print("histogram: %s" % gpured.explain_bins("histogram", da, bins=1024,
                                            range=(-4.0, 4.0))["why"])
row("histogram 1024 bins f32",
    loop_ms(lambda: gpured.histogram(da, 1024, range=(-4.0, 4.0)), sync),
    peers)

print("%-40s %10s  %-70s %s" % ("row", "gpured ms", "peers ms",
                                "best peer / gpured"))
for name, ms, peers, r in rows:
    print("%-40s %10.3f  %-70s %s" % (
        name, ms, ", ".join("%s %.3f" % (a, b) for a, b in peers.items() if b),
        "%.2f" % r if r else "-"))
