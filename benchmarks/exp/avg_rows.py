"""average(axis=1) with 1-d weights along the rows (issue 16: within 10%
of sum): NumPy weights (uploaded per call) and device weights, beside
sum(axis=1) and mean(axis=1); wall clock of loops of calls, one sync, and
the plan.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/avg_rows.py [MiB]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 1024
rng = np.random.default_rng(0)
for R in (4096, 65536):
    C = int(mib * 2**20) // 4 // R
    a = rng.standard_normal((R, C)).astype(np.float32)
    d = gpured.to_device(a)
    wr = (rng.random(C) + 0.5).astype(np.float32)
    dw = gpured.to_device(wr)
    want = np.average(a[:3], axis=1, weights=wr)
    got = gpured.average(d, axis=1, weights=dw).get()[:3]
    assert np.allclose(got, want, rtol=1e-5), (got, want)
    s = gpured.synchronize
    rows = [("sum axis=1", lambda: gpured.sum(d, axis=1)),
            ("mean axis=1", lambda: gpured.mean(d, axis=1)),
            ("average, NumPy weights", lambda: gpured.average(d, axis=1, weights=wr)),
            ("average, device weights", lambda: gpured.average(d, axis=1, weights=dw))]
    print("%d x %d float32" % (R, C), gpured.explain("sum", d, axis=1).get("variant"))
    for name, f in rows:
        print("  %-26s %.4f ms" % (name, loop_ms(f, s, 10)), flush=True)
