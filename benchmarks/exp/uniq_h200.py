"""H200 rows for issue 41's sorted paths, wall clock, a loop of calls on
the same device-resident data, one synchronisation, median of 5 loops
(_loop.py), peers in the same process:

  * gpured.unique of 2**26 float32 with 2**16 distinct values (and float64
    at 2**25): the device radix sort of order-preserving bit keys, runs by
    reduce_by_key -- beside cupy.unique and torch.unique(sorted=True);
    with return_counts / return_inverse beside torch's
  * gpured.aggregate prod (16 Mi float32 into 4096 groups) beside torch's
    scatter_reduce_(prod); cumsum by group beside torch's stable sort +
    gather + cumsum - the group's offset + scatter (the closest torch
    spelling)
  * gpured.aggregate var / mean / max with 4096 groups beside torch
    (index_add_ of x and of the squared deviations, scatter_reduce)

Results are checked against NumPy / numpy_groupies-style references first.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/uniq_h200.py
"""
import os

import numpy as np

import gpured
from _loop import PeerRows, loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = PeerRows()


row = rows.add


def tsync():
    torch.cuda.synchronize()


def peer(peers, name, fn, sync_fn):
    try:
        peers[name] = loop_ms(fn, sync_fn)
    except Exception as e:  # a peer lacking the call: its row says so
        print("peer %s: %s" % (name, e))


rng = np.random.default_rng(0)

# ------------------------------------------------------------------ unique
for dt, log2 in ((np.float32, int(os.environ.get("UQ_LOG2", "26"))),
                 (np.float64, int(os.environ.get("UQ_LOG2_F64", "25")))):
    n = 1 << log2
    vals = rng.standard_normal(1 << 16).astype(dt)
    vals[:4] = (0.0, -0.0, np.inf, -np.inf)
    a = vals[rng.integers(0, vals.size, n)]
    d = gpured.to_device(a)
    want_u, want_i, want_c = np.unique(a, return_inverse=True,
                                       return_counts=True)
    got_u, got_i, got_c = gpured.unique(d, return_inverse=True,
                                        return_counts=True)
    assert np.array_equal(got_u.get(), want_u), "unique values differ"
    assert np.array_equal(got_i.get(), want_i), "unique inverse differs"
    assert np.array_equal(got_c.get(), want_c), "unique counts differ"
    name = np.dtype(dt).name
    peers = {}
    if cp is not None:
        c = cp.asarray(a)
        peer(peers, "cupy.unique", lambda: cp.unique(c),
             cp.cuda.Device().synchronize)
    if torch is not None:
        t = torch.from_numpy(a).cuda()
        peer(peers, "torch.unique", lambda: torch.unique(t, sorted=True),
             tsync)
    row("unique %s 2^%d, 2^16 distinct" % (name, log2),
        loop_ms(lambda: gpured.unique(d), sync), peers)
    peers = {}
    if cp is not None:
        peer(peers, "cupy", lambda: cp.unique(c, return_counts=True),
             cp.cuda.Device().synchronize)
    if torch is not None:
        peer(peers, "torch", lambda: torch.unique(t, sorted=True,
                                                  return_counts=True), tsync)
    row("  + return_counts", loop_ms(
        lambda: gpured.unique(d, return_counts=True), sync), peers)
    peers = {}
    if cp is not None:
        peer(peers, "cupy", lambda: cp.unique(c, return_inverse=True,
                                              return_counts=True),
             cp.cuda.Device().synchronize)
    if torch is not None:
        peer(peers, "torch", lambda: torch.unique(
            t, sorted=True, return_inverse=True, return_counts=True), tsync)
    row("  + return_inverse, counts", loop_ms(
        lambda: gpured.unique(d, return_inverse=True, return_counts=True),
        sync), peers)
    del d, got_u, got_i, got_c
    if cp is not None:
        del c
    if torch is not None:
        del t

# --------------------------------------------------------------- aggregate
m, ng = 1 << int(os.environ.get("AG_LOG2", "24")), 4096
g = rng.integers(0, ng, m).astype(np.int64)
x = (1 + rng.standard_normal(m) * 1e-4).astype(np.float32)
dg, dx = gpured.to_device(g), gpured.to_device(x)
order = np.argsort(g, kind="stable")

# prod: reference in float64 by group (np.multiply.reduceat on the sorted)
starts = np.flatnonzero(np.r_[True, np.diff(g[order]) != 0])
want = np.multiply.reduceat(x[order].astype(np.float64), starts)
got = gpured.aggregate(dg, dx, "prod").get()
assert np.allclose(got[np.unique(g)], want, rtol=1e-3), "prod differs"
peers = {}
if torch is not None:
    tg, tx = torch.from_numpy(g).cuda(), torch.from_numpy(x).cuda()
    out = torch.ones(ng, dtype=tx.dtype, device="cuda")
    peer(peers, "torch.scatter_reduce_(prod)",
         lambda: out.fill_(1).scatter_reduce_(0, tg, tx, "prod"), tsync)
row("aggregate prod f32 2^%d, 4096 groups" % int(np.log2(m)),
    loop_ms(lambda: gpured.aggregate(dg, dx, "prod"), sync), peers)

# cumsum by group, in the original order
cs = gpured.aggregate(dg, dx, "cumsum").get()
ref = np.empty(m, np.float64)
xs = x[order].astype(np.float64)
run = np.cumsum(xs)
base = np.repeat(run[starts] - xs[starts], np.diff(np.r_[starts, m]))
ref[order] = run - base
assert np.allclose(cs, ref, rtol=1e-4), "cumsum differs"
peers = {}
if torch is not None:
    def torch_cumsum():
        _, p = torch.sort(tg, stable=True)
        s = tx[p]
        c = torch.cumsum(s, 0)
        cnt = torch.bincount(tg, minlength=ng)
        off = torch.cumsum(cnt, 0) - cnt  # each group's first sorted slot
        first = off[tg[p]]
        c = c - (c[first] - s[first])
        o = torch.empty_like(tx)
        o[p] = c
        return o
    peer(peers, "torch sort+cumsum+scatter", torch_cumsum, tsync)
row("aggregate cumsum f32 2^%d, 4096 groups" % int(np.log2(m)),
    loop_ms(lambda: gpured.aggregate(dg, dx, "cumsum"), sync), peers)

# var / mean / max, 4096 groups (issue 41's target: >= torch)
xv = rng.standard_normal(m).astype(np.float32) * 3 + 10
dxv = gpured.to_device(xv)
cnt = np.bincount(g, minlength=ng)
mean = np.bincount(g, xv.astype(np.float64), ng) / cnt
var = np.bincount(g, (xv - mean[g]) ** 2, ng) / cnt
got = gpured.aggregate(dg, dxv, "var").get()
assert np.allclose(got, var, rtol=1e-4), "var differs"
for func in ("var", "mean", "max"):
    peers = {}
    if torch is not None:
        tv = torch.from_numpy(xv).cuda()
        tc = torch.bincount(tg, minlength=ng).to(tv.dtype)

        def tmean():
            return torch.zeros(ng, device="cuda").index_add_(0, tg, tv) / tc

        def tvar():
            mu = tmean()
            dd = tv - mu[tg]
            return torch.zeros(ng, device="cuda").index_add_(0, tg, dd * dd) / tc

        def tmax():
            return torch.full((ng,), -np.inf, device="cuda").scatter_reduce_(
                0, tg, tv, "amax")
        peer(peers, "torch", {"var": tvar, "mean": tmean, "max": tmax}[func],
             tsync)
    row("aggregate %s f32 2^%d, 4096 groups" % (func, int(np.log2(m))),
        loop_ms(lambda: gpured.aggregate(dg, dxv, func), sync), peers)

rows.print()
