"""float16 / bfloat16 1 GiB sums on the GPU over the plan's knobs (vw,
ilp, wg_size, variant), wall clock, beside float32 and torch: which
geometry reads 2-byte elements at float32's bytes per second.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/f16_knobs.py
"""
import os, sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_torch

torch = optional_torch()
rng = np.random.default_rng(0)
n16 = (1 << 30) // 2
h = rng.standard_normal(n16).astype(np.float16)
d = gpured.to_device(h)
d32 = gpured.to_device(rng.standard_normal(n16 // 2).astype(np.float32))
print("float32 sum 1 GiB: %.3f ms" % loop_ms(lambda: gpured.sum(d32), gpured.synchronize), flush=True)
p = gpured.explain("sum", d)
print("float16 auto:", {k: p.get(k) for k in ("variant", "vw", "ilp", "wg_size", "groups", "accumulator")},
      "%.3f ms" % loop_ms(lambda: gpured.sum(d), gpured.synchronize), flush=True)
if torch is not None:
    x = torch.from_numpy(h).cuda()
    print("torch float16 sum: %.3f ms" % loop_ms(lambda: x.sum(), torch.cuda.synchronize), flush=True)
    del x
want = float(np.sum(h, dtype=np.float64))
for var in ("subgroup", "vector", "stride_local"):
    for vw in (4, 8, 16):
        for ilp in (1, 2, 4, 8):
            for wg in (256, 512):
                kw = dict(variant=var, vw=vw, ilp=ilp, wg_size=wg)
                try:
                    got = float(gpured.sum(d, **kw))
                    t = loop_ms(lambda: gpured.sum(d, **kw), gpured.synchronize)
                    print("%-12s vw %2d ilp %d wg %d  %.3f ms  %s" % (
                        var, vw, ilp, wg, t, "ok" if abs(got - want) < 1e-2 * max(1, abs(want)) ** 0.5 + 64 else "BAD %g vs %g" % (got, want)), flush=True)
                except Exception as e:
                    print("%-12s vw %2d ilp %d wg %d  ERR %s" % (var, vw, ilp, wg, str(e)[:70]), flush=True)
