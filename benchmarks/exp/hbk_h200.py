"""H200 rows for sum_by_key's host path (issue 41, csrc/host_bykey.c):
NumPy inputs, where placement now weighs the host loops (on the GPU host's
threads) against the GPU (its transfers included).  Wall clock, a loop of
calls, one synchronisation, median of 5 loops (_loop.py).

  * sum_by_key(NumPy keys, NumPy float32 values), 16 Mi pairs into 16 /
    1024 / 4096 / 2**20 keys: placement 'auto' (what it picked, and its
    time), forced onto the GPU (placement('current')), np.bincount, and
    torch moving the NumPy arrays to the GPU and back (bincount with
    weights) -- the ratio is auto's against the best of those;
  * the same on device-resident Arrays (must stay on the GPU: placement
    'device'), beside torch.bincount on device tensors;
  * aggregate mean, 4096 groups, NumPy in, beside numpy_groupies' NumPy
    engine where installed (else np.bincount / np.bincount).

Every result is checked against NumPy first.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/hbk_h200.py
"""
import os

import numpy as np

import gpured
from _loop import loop_ms, optional_torch

torch = optional_torch()
sync = gpured.synchronize
rows = []
none = lambda: None  # noqa: E731  (NumPy and the host path: synchronous)


def row(name, ms, peers, note=""):
    best = min((v for v in peers.values() if v), default=None)
    rows.append((name, ms, peers, best / ms if best else None, note))


def torch_host_bincount(k, v, nk):
    tk = torch.from_numpy(k).cuda()
    tv = torch.from_numpy(v).cuda()
    return torch.bincount(tk, tv, nk).cpu()


rng = np.random.default_rng(0)
m = 1 << int(os.environ.get("BK_LOG2", "24"))
v = rng.standard_normal(m).astype(np.float32)
print("host threads", gpured.host_threads(), "cpus", os.cpu_count(),
      "device", gpured.get_device()["name"], flush=True)
for nk in (16, 1024, 4096, 1 << 20):
    k = rng.integers(0, nk, m)
    want = np.bincount(k, v, nk)
    got = gpured.sum_by_key(k, v, nk)
    assert np.allclose(got, want, rtol=1e-4, atol=1e-2 * np.sqrt(m / nk)), nk
    plan = gpured.explain_by_key("sum_by_key", k, v, "sum", nk)
    auto = loop_ms(lambda: gpured.sum_by_key(k, v, nk), none, calls=3)
    old = gpured.placement("current")
    try:
        gpu = loop_ms(lambda: gpured.sum_by_key(k, v, nk), sync, calls=3)
    finally:
        gpured.placement(old)
    peers = {"gpu forced": gpu,
             "np.bincount": loop_ms(lambda: np.bincount(k, v, nk), none,
                                    calls=2)}
    if torch is not None:
        peers["torch h2d+bincount+d2h"] = loop_ms(
            lambda: torch_host_bincount(k, v, nk), torch.cuda.synchronize,
            calls=3)
    row(f"sum_by_key NumPy int64/f32 16Mi -> {nk} keys", auto, peers,
        f"[{plan['placement']}] {plan.get('placement_why', '')[:160]}")

    dk, dv = gpured.to_device(k), gpured.to_device(v)
    dplan = gpured.explain_by_key("sum_by_key", dk, dv, "sum", nk)
    assert dplan.get("placement") != "host", dplan
    dev = loop_ms(lambda: gpured.sum_by_key(dk, dv, nk), sync)
    peers = {}
    if torch is not None:
        tk, tv = torch.from_numpy(k).cuda(), torch.from_numpy(v).cuda()
        peers["torch.bincount"] = loop_ms(lambda: torch.bincount(tk, tv, nk),
                                          torch.cuda.synchronize)
    row(f"sum_by_key device Arrays 16Mi -> {nk} keys", dev, peers,
        f"[{dplan.get('placement')}] variant {dplan['variant']}")
    del dk, dv

g = rng.integers(0, 4096, m)
try:
    from numpy_groupies.aggregate_numpy import aggregate as npg
    ref_name = "numpy_groupies"
except ImportError:
    def npg(g, a, func):
        return np.bincount(g, a) / np.bincount(g)
    ref_name = "np.bincount/np.bincount"
assert np.allclose(gpured.aggregate(g, v, "mean"), npg(g, v, "mean"),
                   rtol=1e-5, atol=1e-6)
row("aggregate mean NumPy f32 16Mi, 4096 groups",
    loop_ms(lambda: gpured.aggregate(g, v, "mean"), none, calls=3),
    {ref_name: loop_ms(lambda: npg(g, v, "mean"), none, calls=2)})

print(f"{'row':52s} {'gpured ms':>10s}  peers (ms)  best/gpured")
for name, ms, peers, ratio, note in rows:
    ps = ", ".join(f"{k} {x:.3f}" for k, x in peers.items() if x)
    rs = f"{ratio:.2f}x" if ratio else "-"
    print(f"{name:52s} {ms:10.3f}  {ps}  {rs}  {note}")
