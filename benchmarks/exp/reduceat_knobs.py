"""reduceat plans by hand: kernel events (and wall) of device-resident
data with device offsets, for segment lengths from 8 to 64 K, per knob set.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/reduceat_knobs.py [MiB]
"""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 256
AVGS = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else \
    [65536, 4096, 1024, 256, 64, 32, 8]
rng = np.random.default_rng(0)
KN = [dict()] + [dict(variant="segment_per_warp", items=k) for k in (2, 4, 8, 16, 32)] + [
      dict(variant="segment_per_warp", items=8, vw=2),
      dict(variant="segment_per_item", wg_size=256),
      dict(variant="segment_per_group", wg_size=128)]
for dt in (np.float32, np.float64):
    n = int(mib * 2**20) // np.dtype(dt).itemsize
    a = rng.standard_normal(n).astype(dt)
    d = gpured.to_device(a)
    s = gpured.timeit("sum", d, reps=5)["seconds"] * 1e3
    print("%s %g MiB sum events %.3f ms" % (np.dtype(dt).name, mib, s), flush=True)
    for avg in AVGS:
        S = n // avg
        idx = np.sort(rng.choice(n, S, replace=False))
        idx[0] = 0
        di = gpured.to_device(idx)
        row = []
        for kn in KN:
            if kn.get("variant") == "segment_per_group" and avg < 256:
                continue
            try:
                t = gpured.timeit("reduceat", d, indices=di, reps=5, **kn)
                row.append("%s/%s%s%s %.3f" % (
                    t["plan"]["variant"][12:16], t["plan"]["wg_size"],
                    "v%d" % t["plan"]["vw"],
                    "x%d" % t["plan"]["chunk"] if "warp" in t["plan"]["variant"] else "",
                    t["seconds"] * 1e3))
            except Exception as e:  # noqa: BLE001
                row.append("%s ERR %s" % (kn, str(e)[:40]))
        print("  avg %6d S %9d: %s" % (avg, S, " | ".join(row)), flush=True)
    del d
