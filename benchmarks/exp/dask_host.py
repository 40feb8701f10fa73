"""Host time of gpured.dask's one-result compute where the device time is
nil (issue 43: after the GPU, Dask's threaded compute() returned 0.5 ms
later than its sync scheduler on the H200 host): a persisted
device-resident array of 64 chunks of 64 KiB, gd.sum(x).compute() under
compute() with no scheduler (gd._OneBlock: its one task in the calling
thread), the threaded and the sync scheduler, a graph built once and
computed again, and a one-task dask Array of Dask's own beside; then the phases
of one compute after a synchronise (task start, get_many, aggregation,
return), medians of 200-300.

    PYTHONPATH=. python3 benchmarks/exp/dask_host.py     (any device)
"""
import os
import statistics
import sys
import time

import numpy as np
import dask.array as da
from dask.highlevelgraph import HighLevelGraph

import gpured
import gpured.dask as gd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import call_ms, spy_resident  # noqa: E402


def med(f, n=200):
    return call_ms(f, n) * 1e3  # us


def one_task():
    name = "t-%d" % time.perf_counter_ns()
    g = HighLevelGraph.from_collections(name, {(name,): (np.float64, 1.0)},
                                        dependencies=[])
    return da.Array(g, name, (), meta=np.empty((), np.float64))


t = one_task()
print("Dask's one-task array: compute threads %.0f us, sync %.0f us" % (
    med(lambda: t.compute()), med(lambda: t.compute(scheduler="sync"))))
a = np.ones(64 * 16384, np.float32)
x = gd.to_device(da.from_array(a, chunks=16384)).persist()
print("gd.sum(x) result type:", type(gd.sum(x)).__name__)
print("build %.0f us; build + compute() %.0f us, threads %.0f us, sync %.0f us" % (
    med(lambda: gd.sum(x)), med(lambda: gd.sum(x).compute()),
    med(lambda: gd.sum(x).compute(scheduler="threads")),
    med(lambda: gd.sum(x).compute(scheduler="sync"))))
r = gd.sum(x)
print("a built graph computed again: compute() %.0f us, threads %.0f us" % (
    med(lambda: r.compute()), med(lambda: r.compute(scheduler="threads"))))
S = {}
spy_resident(gd, S)
dev = x.blocks[0].compute().device_index
for sched in (None, "threads", "sync"):
    rows = {}
    for rep in range(300):
        S.clear()
        t0 = time.perf_counter()
        r = gd.sum(x)
        tb = time.perf_counter()
        gpured.synchronize(dev)
        ts = time.perf_counter()
        float(r.compute(scheduler=sched))
        t1 = time.perf_counter()
        for k, v in (("built", tb), ("synced", ts), ("task", S["task"]),
                     ("get_many", S["gm1"]), ("agg", S["agg"]), ("end", t1)):
            rows.setdefault(k, []).append((v - t0) * 1e6)
    print("%-7s " % (sched or "inline") + "  ".join("%s %.0f" % (k, statistics.median(v))
                                      for k, v in rows.items()),
          "  (us from the call; after the aggregation %.0f)" % (
              statistics.median(rows["end"]) - statistics.median(rows["agg"])))
