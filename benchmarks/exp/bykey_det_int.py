"""Deterministic sum_by_key of integer values (int32 into int64 sums,
int64 min): integer atomics are exact in any order, so deterministic=True
takes the same atomic variants as the default call (before: the radix sort
and lookback, forced here by variant="lookback").  Device arrays, wall
clock of loops of 10 calls synchronised once (median of 5).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/bykey_det_int.py [N_MI] [KEYS_MI]
"""
import os
import sys

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms  # noqa: E402

n = int(float(sys.argv[1] if len(sys.argv) > 1 else 10) * 2**20)
nk = int(float(sys.argv[2] if len(sys.argv) > 2 else 1) * 2**20)
rng = np.random.default_rng(0)
print("%s: %d values into %d keys" % (gpured.get_device()["name"], n, nk))
k = rng.integers(0, nk, n).astype(np.int64)
for vdt, op in (("int32", "sum"), ("int64", "min")):
    v = rng.integers(-1000, 1000, n).astype(vdt)
    kd, vd = gpured.to_device(k), gpured.to_device(v)
    det = gpured.sum_by_key(kd, vd, nk, op, deterministic=True).get()
    lb = gpured.sum_by_key(kd, vd, nk, op, deterministic=True, variant="lookback").get()
    assert det.tobytes() == lb.tobytes()
    s = gpured.synchronize
    w_nd = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk, op), s, 10)
    w_det = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk, op, deterministic=True), s, 10)
    w_lb = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk, op, deterministic=True,
                                             variant="lookback"), s, 10)
    why = gpured.explain_by_key("sum_by_key", kd, vd, num_keys=nk, op=op, deterministic=True)["why"]
    print("| %s %s | %.3f | %.3f | %.3f | %s |" % (vdt, op, w_nd, w_det, w_lb, why[:60]))
