"""H200 rows for the seventeenth session's additions, wall clock, a loop of
calls on the same device-resident data, one synchronisation, median of 5
loops (_loop.py), peers in the same process:

  * elementwise (issue 42): d * 2 + 1 on 1 GiB float32 beside CuPy / torch
  * sum_by_key(exact=True) (issue 39): 16 Mi float32/float64 into 1024 and
    64**3 random keys, beside the plain (atomic) call and torch.index_add_

    bash benchmarks/gpu_run.sh exp benchmarks/exp/h200_session17.py
"""
import numpy as np

import gpured
from _loop import loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = []


def row(name, ms, peers):
    best = min((v for v in peers.values() if v), default=None)
    rows.append((name, ms, peers, best / ms if best else None))


import os
n = 1 << int(os.environ.get("EW_LOG2", "28"))
a = np.ones(n, np.float32)
d = gpured.to_device(a)
peers = {}
if cp is not None:
    c = cp.asarray(a)
    peers["cupy"] = loop_ms(lambda: c * 2 + 1, cp.cuda.Device().synchronize)
if torch is not None:
    t = torch.from_numpy(a).cuda()
    peers["torch"] = loop_ms(lambda: t * 2 + 1, torch.cuda.synchronize)
row("d * 2 + 1, 1 GiB f32", loop_ms(lambda: d * 2 + 1, sync), peers)
del d

rng = np.random.default_rng(0)
m = 1 << int(os.environ.get("BK_LOG2", "24"))
for nk in (1024, 64 ** 3):
    k = rng.integers(0, nk, m).astype(np.int32)
    dk = gpured.to_device(k)
    for dt in ("float32", "float64"):
        v = rng.standard_normal(m).astype(dt)
        dv = gpured.to_device(v)
        plain = loop_ms(lambda: gpured.sum_by_key(dk, dv, nk), sync)
        ex = loop_ms(lambda: gpured.sum_by_key(dk, dv, nk, exact=True), sync)
        peers = {"plain": plain}
        if torch is not None:
            tk, tv = torch.from_numpy(k.astype(np.int64)).cuda(), torch.from_numpy(v).cuda()
            out = torch.zeros(nk, dtype=tv.dtype, device="cuda")
            peers["torch.index_add_"] = loop_ms(
                lambda: out.zero_().index_add_(0, tk, tv), torch.cuda.synchronize)
        row("sum_by_key exact %s, %d keys" % (dt, nk), ex, peers)
        got = gpured.sum_by_key(dk, dv, nk, exact=True).get()
        import math
        want = [math.fsum(x) for x in np.split(v[np.argsort(k, kind="stable")].astype(np.float64),
                                              np.cumsum(np.bincount(k, minlength=nk))[:-1])]
        if dt == "float64":
            assert np.array_equal(got, np.array(want)), "exact sum_by_key differs from fsum"

print("%-36s %10s  %-44s %s" % ("row", "gpured ms", "peers ms", "best peer / gpured"))
for name, ms, peers, r in rows:
    print("%-36s %10.3f  %-44s %s" % (name, ms, ", ".join("%s %.3f" % kv for kv in peers.items()),
                                       "%.2f" % r if r else "-"))
