"""Where the ~5 ms between a loop of plain sums over device-resident
chunks and gd.sum of the same chunks goes (issue 16: 64 x 1 GiB on one
H100, 23.2 ms against 28.2 ms), on one GPU, phase by phase.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/dask_overhead.py [GiB] [chunk MiB]
"""
import statistics
import sys
import time

import numpy as np
import dask
import dask.array as da
import gpured
import gpured.dask as gd
from gpured import _core

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 32
cmib = float(sys.argv[2]) if len(sys.argv) > 2 else 1024
n = int(gib * (1 << 30)) // 4
step = int(cmib * (1 << 20)) // 4
dev = gpured.get_device()
x = gd.to_device(da.from_array(np.ones(n, np.float32), chunks=step),
                 devices=[dev["index"]]).persist()
gpured.synchronize()
parts = [b for b in x.__dask_graph__().values() if isinstance(b, gpured.Array)]
k = len(parts)
print("%s: %d chunks of %g MiB" % (dev["name"], k, cmib), flush=True)


def med(f, reps=7):
    f()
    ts = []
    for _ in range(reps):
        gpured.synchronize()
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def plain():
    for c in parts:
        gpured.sum(c)
    gpured.synchronize()


def fields():
    rs = [gpured.sum(c, axis=(0,), keepdims=True, dtype=np.float64)
          for c in parts]
    gpured.synchronize()
    return rs


def fields_get_many():
    rs = [gpured.sum(c, axis=(0,), keepdims=True, dtype=np.float64)
          for c in parts]
    return _core.get_many(rs)


T = {}


def fields_phases():
    t0 = time.perf_counter()
    rs = [gpured.sum(c, axis=(0,), keepdims=True, dtype=np.float64)
          for c in parts]
    t1 = time.perf_counter()
    _core.get_many(rs[:1])
    t2 = time.perf_counter()
    _core.get_many(rs)
    t3 = time.perf_counter()
    for key, v in (("enqueue", t1 - t0), ("first read", t2 - t1),
                   ("all reads", t3 - t2)):
        T.setdefault(key, []).append(v * 1e3)


def build_and_task():
    """gd.sum(x) (enqueues the partials) and its one task, no Dask."""
    task = list(dict(gd.sum(x).__dask_graph__()).values())[0]
    f = task[0] if isinstance(task, tuple) else task
    return f()


def build():
    return gd.sum(x)


def comp_sync():
    with dask.config.set(scheduler="sync"):
        return float(gd.sum(x).compute())


def comp_threads():
    with dask.config.set(scheduler="threads"):
        return float(gd.sum(x).compute())


rows = [("plain loop, one sync", plain),
        ("gd's call (f64, axis, keepdims), one sync", fields),
        ("gd's call + get_many", fields_get_many),
        ("gd's call, phases", fields_phases),
        ("gd.sum(x) built, its task run, no Dask", build_and_task),
        ("gd.sum(x) build only (enqueues)", build),
        ("gd.sum(x).compute() sync", comp_sync),
        ("gd.sum(x).compute() threads", comp_threads)]
out = []
for name, f in rows:
    ms = med(f)
    out.append((name, ms))
    print("  %-44s %8.2f ms" % (name, ms), flush=True)
for key, v in T.items():
    print("    phase %-12s %8.2f ms" % (key, statistics.median(v)), flush=True)
print("\n| case | ms |\n|---|---|")
for name, ms in out:
    print("| %s | %.2f |" % (name, ms))
