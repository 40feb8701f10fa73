"""Compare kernel knobs (GPURED_SCAN_XDEFS / XOPTS) on 1 GiB cumsum
(kernel events).  Arguments: the define blocks to compare ("" the
baseline; ";" separates defines; "DEFS|OPTS" adds build options), each
run twice, interleaved.

    python3 benchmarks/scan_knobs.py "" "GR_BACKOFF_NS 0" "GR_BACKOFF_NS 16"
"""
import os, sys, time
import numpy as np
import gpured
from gpured import _core
sys.path.insert(0, os.path.dirname(__file__))
from scan_bench import med, check

n = (1 << 30) // 4
a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
copy = 2 * (1 << 30) / med(_core.copy_bandwidth(1 << 30, 10)[1:])
print("copy %.1f GB/s" % copy, flush=True)
m = a.reshape(4096, 65536)
args = sys.argv[1:] or ["GR_GID_TILE 0", ""]
V = [("\n".join("#define " + d.strip() for d in x.partition("|")[0].split(";") if d.strip()),
      x.partition("|")[2], {}) for x in args] * 2
ones = np.ones(1 << 25, np.float32)
for xd, xo, kw in V:
    os.environ["GPURED_SCAN_XDEFS"] = xd
    if xo:
        os.environ["GPURED_SCAN_XOPTS"] = xo
    else:
        os.environ.pop("GPURED_SCAN_XOPTS", None)
    tag = "%s | %s | %s" % (xd.replace("\n", "; ").replace("#define ", ""), xo, kw)
    try:
        ts = []
        for _ in range(2):
            r = gpured.timeit("cumsum", a, reps=10, **kw)
            ts.append(r["seconds"])
        t = min(ts)
        ok = check(r["result"], a, -1, r["plan"]["items"])
        del r
        rm = gpured.timeit("cumsum", m, axis=1, reps=10, **kw)
        ok1 = gpured.cumsum(ones)[-1] == 33554432
        print("%-70s 1GiB %.3f ms %5.1f%%  rows %.3f ms  ok=%s ones=%s" %
              (tag, t * 1e3, 2 * a.nbytes / t / 1e9 / copy * 100, rm["seconds"] * 1e3, ok, ok1), flush=True)
        del rm
    except Exception as e:
        print(tag, "ERROR", e, flush=True)
