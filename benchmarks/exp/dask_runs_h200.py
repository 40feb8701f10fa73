"""Where gd.sum's time goes over device-resident chunks that to_device
put end to end (_Slabs, _runs): the chunks' buffers, the core calls one
compute makes, and wall times of plain / the rows call alone / the
graph build / compute (4 GiB float32 ones, 256 MiB chunks, one GPU).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/dask_runs_h200.py
"""
import os
import sys
import time

import numpy as np
import dask
import dask.array as da

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.dirname(here)]
import gpured  # noqa: E402
import gpured.dask as gd  # noqa: E402
from gpured._array import Array  # noqa: E402
from _loop import loop_ms  # noqa: E402

gpus = [i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"] or [0]
g = gpus[0]
GIB = float(os.environ.get("GIB", "4"))
n = int(GIB * (1 << 30)) // 4
step = (256 << 20) // 4
h = np.ones(n, np.float32)
d = gpured.to_device(h, device=g)
print("plain %.3f ms" % loop_ms(lambda: gpured.sum(d), lambda: gpured.synchronize(g)), flush=True)
del d
t = time.perf_counter()
x = gd.to_device(da.from_array(h, chunks=step), devices=[g]).persist()
gpured.synchronize(g)
print("persist %.1f s" % (time.perf_counter() - t), flush=True)
bl = dask.compute(*x.to_delayed().ravel())
print("chunks", len(bl), "one buffer:", all(b.buffer is bl[0].buffer for b in bl),
      "offsets", [b.offset for b in bl[:3]], flush=True)
calls = []
real = gpured._core.reduce


def spy(*a):
    calls.append((np.shape(a[1]), a[2]))
    return real(*a)


gpured._core.reduce = spy
print("gd.sum", gd.sum(x).compute(), "want", n, flush=True)
print("core calls:", calls, flush=True)
gpured._core.reduce = real
b = bl[1]
rows = Array(b.buffer, (len(bl) - 1, b.size), b.dtype, (b.nbytes, 4), b.offset)
print("rows call %.3f ms" % loop_ms(lambda: gpured.sum(rows, axis=1, dtype=np.float64), lambda: gpured.synchronize(g)), flush=True)
print("rows plan", {k: v for k, v in gpured.explain("sum", rows, axis=1, dtype=np.float64).items() if k in ("variant", "groups", "wg_size", "vw", "ilp", "passes", "row")}, flush=True)
ts = []
for _ in range(7):
    t = time.perf_counter()
    r = gd.sum(x)
    t1 = time.perf_counter()
    r.compute()
    ts.append((t1 - t, time.perf_counter() - t1))
ts.sort(key=lambda p: p[0] + p[1])
print("gd.sum build %.3f ms, compute %.3f ms (median of 7)" % (ts[3][0] * 1e3, ts[3][1] * 1e3), flush=True)
import cProfile, pstats
pr = cProfile.Profile()
pr.enable()
for _ in range(5):
    gd.sum(x).compute()
pr.disable()
pstats.Stats(pr).sort_stats("cumulative").print_stats(18)
