"""nan* functions vs their plain forms (and vs sum: issue 16's target is
within 10% of the same-size sum) on the same device and data:
device-resident float32/float64, wall clock of loops (one sync at the end)
and kernel events.  nanargmin/nanargmax read the element found back (a few
bytes, a wait) to tell an all-NaN array from a NaN-led +-inf one."""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 64
dev = gpured.get_device()
print("%s, %g MiB" % (dev["name"], mib), flush=True)
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64):
    if dt == np.float64 and not dev["fp64"]:
        continue
    n = int(mib * 2**20) // np.dtype(dt).itemsize
    a = rng.standard_normal(n).astype(dt)
    a[rng.random(n) < 0.1] = np.nan
    d = gpured.to_device(a)
    for base, nan in (("sum", "nansum"), ("prod", "nanprod"), ("cumsum", "nancumsum"),
                      ("min", "nanmin"), ("max", "nanmax"), ("sum", "nanmin"),
                      ("argmin", "nanargmin"), ("argmax", "nanargmax"),
                      ("sum", "nanargmax"), ("sum", "count_nonzero"), ("sum", "ptp"), ("max", "ptp"),
                      ("mean", "nanmean"), ("sum", "nanmean")):
        row = []
        for f in (base, nan):
            g = getattr(gpured, f)
            w = loop_ms(lambda: g(d), gpured.synchronize, 10)
            ev = (gpured.timeit(f, d, reps=5)["seconds"] * 1e3
                  if f != "nanmean" else
                  float("nan"))  # nanmean: not timed by timeit
            row.append((w, ev))
        print("%-9s %-7s wall %.3f ms  events %.3f | %-10s wall %.3f ms  events %.3f | "
              "ratio wall %.3f events %.3f" % (
                  base, np.dtype(dt).name, row[0][0], row[0][1], nan, row[1][0], row[1][1],
                  row[0][0] / row[1][0], row[0][1] / row[1][1]), flush=True)
    del d

if len(sys.argv) > 2:  # the plans of cumsum and nancumsum, float64
    d = gpured.to_device(rng.standard_normal(int(mib * 2**20) // 8))
    for f in ("cumsum", "nancumsum"):
        e = gpured.explain(f, d)
        print(f, {k: e.get(k) for k in ("variant", "kernel", "wg_size", "items", "groups", "vw")})
