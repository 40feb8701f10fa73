"""Kernel by kernel: timed by-key calls (timeit_by_key) with
GPURED_BYKEY_PROFILE=1, which prints each by-key kernel's event time on
stderr: the deterministic sum_by_key on random keys (stats, the radix
sort's passes, the look-back runs, the bins) and the non-deterministic one.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/bykey_profile.py [N_MI] [KEYS_MI]
"""
import os
import sys

import numpy as np

import gpured

os.environ["GPURED_BYKEY_PROFILE"] = "1"
n = int(float(sys.argv[1] if len(sys.argv) > 1 else 10) * 2**20)
nk = int(float(sys.argv[2] if len(sys.argv) > 2 else 1) * 2**20)
rng = np.random.default_rng(0)
k = rng.integers(0, nk, n).astype(np.int64)
v = rng.standard_normal(n)
kd, vd = gpured.to_device(k), gpured.to_device(v)
for det in (True, False):
    gpured.sum_by_key(kd, vd, nk, deterministic=det).get()
    for rep in range(2):
        print("== deterministic=%s, run %d" % (det, rep), flush=True)
        t = gpured.timeit_by_key("sum_by_key", kd, vd, num_keys=nk, reps=1, deterministic=det)
        sys.stderr.flush()
        print("   total events %.3f ms | %s" % (t["seconds"] * 1e3, t["plan"]["why"][-60:]), flush=True)
