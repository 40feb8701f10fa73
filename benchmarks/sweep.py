"""Sweep the knobs of one reduction on the current device (device time by
events, input on the device): python3 benchmarks/sweep.py sum int32 1GiB"""
import itertools
import sys

import numpy as np

import gpured
from gpured.bench import make_array, parse_size

op, dtype, size = (sys.argv[1:4] + ["sum", "float32", "256MiB"][len(sys.argv) - 1:])[:3]
variants = sys.argv[4].split(",") if len(sys.argv) > 4 else ["auto"]
dt = np.dtype(dtype)
a = make_array(dt, parse_size(size) // dt.itemsize, np.random.default_rng(0))
want = getattr(np, op)(a)
rows = []
for v in variants:
    for wg, ilp, vw, groups in itertools.product(
            [int(x) for x in (sys.argv[5] if len(sys.argv) > 5 else "0").split(",")],
            [int(x) for x in (sys.argv[6] if len(sys.argv) > 6 else "1,2,4").split(",")],
            [int(x) for x in (sys.argv[7] if len(sys.argv) > 7 else "0").split(",")],
            [int(x) for x in (sys.argv[8] if len(sys.argv) > 8 else "0").split(",")]):
        kn = {k: x for k, x in dict(wg_size=wg, ilp=ilp, vw=vw, groups=groups).items() if x}
        try:
            r = gpured.timeit(op, a, reps=10, variant=v, **kn)
        except Exception as e:  # report and go on: a sweep explores
            print(v, kn, "error:", str(e).splitlines()[0])
            continue
        t, res, plan = r["seconds"], r["result"], r["plan"]
        ok = np.allclose(res, want, rtol=1e-4) if dt.kind == "f" else res == want
        rows.append((a.nbytes / t / 1e9, v, kn, plan["wg_size"], plan["vw"], plan["ilp"],
                     plan["groups"], ok))
for r in sorted(rows, key=lambda r: -r[0]):
    print("%8.1f GB/s  %-14s wg %4d vw %2d ilp %d groups %6d %s %s"
          % (r[0], r[1], r[3], r[4], r[5], r[6], r[2], "" if r[7] else "WRONG"))
