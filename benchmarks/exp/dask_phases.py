"""Timestamps inside gd.sum(x).compute() of a device-resident array over
every GPU (issue 16): build start, first and last partial enqueued, the
task's start, the partials read, the end; beside a plain loop of the same
calls, the devices in turn.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/dask_phases.py [GiB] [chunk MiB]
"""
import os
import statistics
import sys
import time

import numpy as np
import dask
import dask.array as da
import gpured
import gpured.dask as gd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import sum_in_turns  # noqa: E402

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 32
cmib = float(sys.argv[2]) if len(sys.argv) > 2 else 1024
n = int(gib * (1 << 30)) // 4
step = int(cmib * (1 << 20)) // 4
gp = [i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"] or [0]
x = gd.to_device(da.from_array(np.ones(n, np.float32), chunks=step),
                 devices=gp).persist()
for q in gp:
    gpured.synchronize(q)
parts = [b for b in x.__dask_graph__().values() if isinstance(b, gpured.Array)]
print("%d chunks of %g MiB on devices %s" % (len(parts), cmib, gp), flush=True)

S = {}
real_on, real_agg, real_gm = gd._on_device, gd._resident_agg, gd._core.get_many


def on_device(x, placer, body):
    r = real_on(x, placer, body)
    S.setdefault("enq", []).append(time.perf_counter())
    return r


def agg(*a, **k):
    S["task"] = time.perf_counter()
    r = real_agg(*a, **k)
    S["agg done"] = time.perf_counter()
    return r


def gm(arrays):
    r = real_gm(arrays)
    S["read"] = time.perf_counter()
    return r


gd._on_device, gd._resident_agg, gd._core.get_many = on_device, agg, gm


def loop_turns():
    sum_in_turns(parts, gp)


rows = {}
for sched in ("sync", "threads"):
    with dask.config.set(scheduler=sched):
        for rep in range(8):
            S.clear()
            t0 = time.perf_counter()
            r = gd.sum(x)
            tb = time.perf_counter()
            v = float(r.compute())
            t1 = time.perf_counter()
            if rep == 0:
                continue
            for k, t in (("first enqueued", S["enq"][0]),
                         ("last enqueued", S["enq"][-1]), ("built", tb),
                         ("task start", S["task"]), ("read", S["read"]),
                         ("agg done", S["agg done"]), ("end", t1)):
                rows.setdefault((sched, k), []).append((t - t0) * 1e3)
    assert abs(v - n) <= 1e-6 * n
ts = []
for rep in range(8):
    t = time.perf_counter()
    loop_turns()
    ts.append((time.perf_counter() - t) * 1e3)
print("loop, devices in turn: %.2f ms" % statistics.median(ts[1:]))
for (sched, k), v in rows.items():
    print("%-8s %-16s %8.2f ms" % (sched, k, statistics.median(v)))
