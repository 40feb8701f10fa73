"""Why peers.py's sum rows ran 8% behind the same sum elsewhere (H100,
2026-11-26: 0.387 ms wall, 0.396 events, against 0.358/0.360 in
nan_vs_sum.py): sum as the first call on freshly uploaded data, with and
without torch/CuPy copies of the array made beside it, then again after
min/max, and explain() of each."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

n = 2**30 // 4
rng = np.random.default_rng(0)
a = (rng.standard_normal(n) * 100).astype(np.float32)
peers = len(sys.argv) > 1
d = gpured.to_device(a)
if peers:
    import torch, cupy
    tt = torch.from_numpy(a).cuda()
    cp = cupy.asarray(a)
for op in ("sum", "min", "max", "sum", "argmax", "sum"):
    g = getattr(gpured, op)
    w = loop_ms(lambda: g(d), gpured.synchronize, 4)
    ev = gpured.timeit(op, d, reps=5)["seconds"] * 1e3
    e = gpured.explain(op, d)
    print("%-6s wall %.4f events %.4f  %s" % (op, w, ev, {k: e.get(k) for k in (
        "variant", "wg_size", "vw", "ilp", "groups", "passes", "accumulator", "tuned")}), flush=True)
