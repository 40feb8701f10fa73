"""float32 sums with a float64 result (gpured.dask's partials) against the
plain float32 sum, device-resident 1 GiB (issue 16: gd.sum of 32 x 1 GiB
device chunks took 16.7 ms on one H100 against 11.5 ms for a loop of
plain sums).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/sum_f64acc.py
"""
import os
import sys

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

d = gpured.to_device(np.ones(1 << 28, np.float32))
d64 = gpured.to_device(np.ones(1 << 27, np.float64))
sync = gpured.synchronize
rows = [
    ("sum f32", lambda: gpured.sum(d), "sum", d, {}),
    ("sum f32 dtype=f64", lambda: gpured.sum(d, dtype=np.float64), "sum", d,
     {"dtype": np.float64}),
    ("sum f32 dtype=f64 axis=0 keepdims",
     lambda: gpured.sum(d, axis=(0,), keepdims=True, dtype=np.float64), "sum",
     d, {"dtype": np.float64, "axis": (0,)}),
    ("sum f64", lambda: gpured.sum(d64), "sum", d64, {}),
]
for name, f, op, a, kw in rows:
    e = gpured.explain(op, a, **kw)
    print("%-36s %7.3f ms  %s vw %s wg %s groups %s comp %s" % (
        name, loop_ms(f, sync, 20), e["kernel"], e["vw"], e["wg_size"],
        e["groups"], e["compensated"]), flush=True)
