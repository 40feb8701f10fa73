"""H200 rows for gpured.aggregate (issue 41): mean / var / max / first /
argmax of 16 Mi float32 in random order into 4096 groups, device-resident
keys (int64) and values, wall clock, a loop of calls on the same data, one
synchronisation, median of 5 loops (_loop.py); peers in the same process:

  * torch: scatter_reduce_(reduce="mean"/"amax", include_self=False);
    var as two scatter passes (index_add_ of x and of ones, the mean
    gathered back, index_add_ of the squared deviations)
  * CuPy: bincount (mean = bincount(w) / bincount), var by the same two
    passes, max by cupy.maximum.at where it exists

Every gpured result is checked against NumPy (numpy_groupies where
installed) before it is timed.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/agg_h200.py
"""
import os

import numpy as np

import gpured
from _loop import PeerRows, loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = PeerRows()


row = rows.add


def ref(g, a, func, size):
    """The host reference: numpy_groupies' NumPy engine, else NumPy."""
    try:
        from numpy_groupies.aggregate_numpy import aggregate
        return aggregate(g, a, func, size=size)
    except ImportError:
        cnt = np.bincount(g, minlength=size)
        s = np.bincount(g, a, minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = s / cnt
            if func == "mean":
                return m.astype(a.dtype)
            if func == "var":
                d = a - m[g]
                return (np.bincount(g, d * d, minlength=size) / cnt).astype(a.dtype)
        if func == "first":
            out = np.full(size, np.nan, a.dtype)
            out[g[::-1]] = a[::-1]
            return out
        out = np.full(size, -np.inf, a.dtype)
        np.maximum.at(out, g, a)
        if func == "argmax":  # the smallest position among the maxima
            idx = np.flatnonzero(a == out[g])
            arg = np.full(size, -1, np.int64)
            arg[g[idx][::-1]] = idx[::-1]
            return arg
        return out


def guard(name, fn):
    try:
        return fn()
    except Exception as e:  # a peer without this op: no column
        print("peer %s unavailable: %s" % (name, e))
        return None


n = 1 << int(os.environ.get("AGG_LOG2", "24"))
G = int(os.environ.get("AGG_GROUPS", "4096"))
rng = np.random.default_rng(0)
g = rng.integers(0, G, n)
a = rng.standard_normal(n).astype(np.float32)
dg, da = gpured.to_device(g), gpured.to_device(a)
sync()

for func in ("mean", "var", "max", "first", "argmax", "nanmean", "len"):
    got = gpured.aggregate(dg, da, func, size=G).get()
    if func in ("mean", "var", "max", "first", "argmax"):
        want = ref(g, a, func, G)
        if want.dtype.kind == "f":
            assert np.allclose(got, want, rtol=1e-4, atol=1e-6, equal_nan=True), func
        else:
            assert np.array_equal(got, want), func
    print(func, gpured.explain_aggregate(dg, da, func, size=G)["by_key"]["variant"])

peers_by = {f: {} for f in ("mean", "var", "max")}
if torch is not None:
    tg = torch.from_numpy(g).cuda()
    ta = torch.from_numpy(a).cuda()
    ts = torch.cuda.synchronize

    def t_mean():
        return torch.zeros(G, device="cuda").scatter_reduce_(
            0, tg, ta, reduce="mean", include_self=False)

    def t_max():
        return torch.zeros(G, device="cuda").scatter_reduce_(
            0, tg, ta, reduce="amax", include_self=False)

    def t_var():
        s = torch.zeros(G, device="cuda").index_add_(0, tg, ta)
        c = torch.zeros(G, device="cuda").index_add_(0, tg, torch.ones_like(ta))
        m = s / c
        d = ta - m[tg]
        return torch.zeros(G, device="cuda").index_add_(0, tg, d * d) / c

    for f, fn in (("mean", t_mean), ("max", t_max), ("var", t_var)):
        peers_by[f]["torch"] = guard("torch " + f, lambda: loop_ms(fn, ts))
if cp is not None:
    cg, ca = cp.asarray(g), cp.asarray(a)
    cs = cp.cuda.Device().synchronize

    def c_mean():
        return cp.bincount(cg, ca, minlength=G) / cp.bincount(cg, minlength=G)

    def c_var():
        c = cp.bincount(cg, minlength=G)
        m = cp.bincount(cg, ca, minlength=G) / c
        d = ca - m[cg]
        return cp.bincount(cg, d * d, minlength=G) / c

    def c_max():
        out = cp.full(G, -cp.inf, cp.float32)
        cp.maximum.at(out, cg, ca)
        return out

    for f, fn in (("mean", c_mean), ("var", c_var), ("max", c_max)):
        peers_by[f]["cupy"] = guard("cupy " + f, lambda: loop_ms(fn, cs))

for func in ("mean", "var", "max", "first", "argmax", "nanmean", "len"):
    ms = loop_ms(lambda: gpured.aggregate(dg, da, func, size=G), sync)
    row("aggregate %s 2**%d f32, %d groups" % (func, n.bit_length() - 1, G), ms, peers_by.get(func, {}))

rows.print()
