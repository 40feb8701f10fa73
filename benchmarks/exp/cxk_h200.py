"""H200 rows for complex products on the device (issue 40, helper cxk):
1 GiB complex64 device-resident prod and cumprod (values near unit modulus:
no overflow), beside torch.prod / torch.cumprod and cupy.prod /
cupy.cumprod; a 1 GiB complex128 cumprod; 1 GiB complex64 max (one pass:
_kernels.cx_extreme; 362 ms by the real passes before) beside torch.max of
the real view (no peer has a lexicographic complex max).  Wall clock, a
loop of calls on the same data, one synchronisation, median of 5 loops
(_loop.py).  Results are checked against NumPy on a slice first (and the
full prod against torch).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/cxk_h200.py
"""
import os

import numpy as np

import gpured
from _loop import PeerRows, loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = PeerRows()


row = rows.add


def peer(name, fn, syncf):
    try:
        return loop_ms(fn, syncf)
    except Exception as e:  # a peer without the function: its row says so
        print("peer %s: %s: %s" % (name, type(e).__name__, e))
        return None


def unit(n, dt, seed=0):
    rng = np.random.default_rng(seed)
    # exp(i t) with |.| within 1 +- 1e-7: a 2^27-long product stays finite
    th = rng.uniform(-np.pi, np.pi, n)
    return (np.exp(1j * th) * (1 + rng.uniform(-1e-7, 1e-7, n))).astype(dt)


def rel(g, w):
    g, w = complex(g), complex(w)
    return abs(g - w) / max(abs(w), 1e-30)


LOG2 = int(os.environ.get("CX_LOG2", "27"))  # 2^27 complex64 = 1 GiB
for dt, name in ((np.complex64, "c64"), (np.complex128, "c128")):
    n = (1 << LOG2) if dt == np.complex64 else (1 << (LOG2 - 1))
    a = unit(n, dt)
    d = gpured.to_device(a)
    tt = torch.from_numpy(a).cuda() if torch is not None else None
    cc = cp.asarray(a) if cp is not None else None
    # correctness first: against NumPy on a slice, against the peers whole
    k = 1 << 16
    r = gpured.prod(d[:k]).get()
    print("prod %s rel err vs numpy (2^16): %.2e" % (name, rel(r, np.prod(a[:k]))))
    c = gpured.cumprod(d[:k]).get()
    e = np.max(np.abs(c - np.cumprod(a[:k])))
    print("cumprod %s max abs err vs numpy (2^16): %.2e" % (name, e))
    m = gpured.max(d[:k]).get()
    print("max %s equal to numpy (2^16): %s" % (name, m == np.max(a[:k])))
    if dt == np.complex64:
        full = gpured.prod(d).get()
        if tt is not None:
            print("prod c64 full rel vs torch: %.2e" % rel(full, torch.prod(tt).item()))
        peers = {}
        if tt is not None:
            peers["torch"] = peer("torch.prod", lambda: torch.prod(tt), torch.cuda.synchronize)
        if cc is not None:
            peers["cupy"] = peer("cupy.prod", lambda: cp.prod(cc), cp.cuda.Device().synchronize)
        row("prod %d MiB %s" % (a.nbytes >> 20, name), loop_ms(lambda: gpured.prod(d), sync), peers)
        peers = {}
        if tt is not None:
            peers["torch"] = peer("torch.max", lambda: torch.max(torch.view_as_real(tt)),
                                  torch.cuda.synchronize)
        row("max %d MiB c64 (one pass; peer: real-view max)" % (a.nbytes >> 20), loop_ms(lambda: gpured.max(d), sync),
            peers)
    peers = {}
    if tt is not None:
        peers["torch"] = peer("torch.cumprod", lambda: torch.cumprod(tt, 0), torch.cuda.synchronize)
    if cc is not None:
        peers["cupy"] = peer("cupy.cumprod", lambda: cp.cumprod(cc), cp.cuda.Device().synchronize)
    row("cumprod %d MiB %s" % (a.nbytes >> 20, name),
        loop_ms(lambda: gpured.cumprod(d), sync), peers)
    del d, tt, cc

rows.print()
