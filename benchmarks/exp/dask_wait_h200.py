"""Where one GPU's gd.sum(x).compute() of a device-resident array in 256
MiB chunks loses to a plain call (issue 43: 0.67 of plain at 16 GiB):
phases of the wall clock (build, the task's start, get_many's wait, the
aggregation, the end) with r.compute() (inline: gd._OneBlock runs its one
task in this thread), dask.compute with the threaded and the sync
scheduler, and the compute alone once the GPU is idle (build,
synchronize, then compute).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/dask_wait_h200.py [GiB ...]
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
from _loop import spy_resident  # noqa: E402

sizes = [float(s) for s in sys.argv[1:]] or [4, 16]
CH = 256 << 20
S = {}
spy_resident(gd, S)
gpu = [i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"] + [0]; gpu = gpu[0]
med = lambda v: statistics.median(v)
for gib in sizes:
    n = int(gib * (1 << 30)) // 4
    x = gd.to_device(da.from_array(np.ones(n, np.float32), chunks=CH // 4),
                     devices=[gpu]).persist()
    whole = gpured.to_device(np.ones(n, np.float32), device=gpu)
    gpured.synchronize(gpu)
    ts = []
    for rep in range(12):
        t0 = time.perf_counter()
        gpured.sum(whole)
        float(gpured.sum(whole))
        ts.append((time.perf_counter() - t0) / 2)
    plain = med(ts[2:]) * 1e3
    print("%g GiB, %d chunks: plain call %.3f ms" % (gib, len(x.chunks[0]), plain), flush=True)
    for sched, opt in (("inline", True), ("threads", True), ("sync", True),
                       ("threads", False)):
        rows = {}
        with dask.config.set(scheduler=None if sched == "inline" else sched):
            for rep in range(12):
                S.clear()
                t0 = time.perf_counter()
                r = gd.sum(x)
                tb = time.perf_counter()
                v = float(r.compute() if sched == "inline" else
                          dask.compute(r, optimize_graph=opt)[0])
                t1 = time.perf_counter()
                assert v == n
                if rep < 2:
                    continue
                for k, t in (("built", tb), ("task start", S["task"]),
                             ("get_many start", S["gm0"]), ("get_many end", S["gm1"]),
                             ("agg done", S["agg"]), ("end", t1)):
                    rows.setdefault(k, []).append((t - t0) * 1e3)
        print("  %-8s opt=%d " % (sched, opt) + "  ".join("%s %.3f" % (k, med(v)) for k, v in rows.items()),
              " -> %.2f of plain" % (plain / med(rows["end"])), flush=True)
    # the compute alone, the GPU idle
    cs, bs = [], []
    for rep in range(12):
        t0 = time.perf_counter()
        r = gd.sum(x)
        tb = time.perf_counter()
        gpured.synchronize(gpu)
        t1 = time.perf_counter()
        float(r.compute())
        t2 = time.perf_counter()
        if rep >= 2:
            bs.append((tb - t0) * 1e3)
            cs.append((t2 - t1) * 1e3)
            S.setdefault("gpu", []).append((t1 - t0) * 1e3)
    print("  build %.3f ms, GPU done at %.3f, then compute alone %.3f ms (get_many %.3f)"
          % (med(bs), med(S["gpu"]), med(cs), (S["gm1"] - S["gm0"]) * 1e3), flush=True)
    # gpured's own calls, as _enqueue_direct makes them, and one get_many
    parts = [b for b in x.__dask_graph__().values() if isinstance(b, gpured.Array)]
    ts = []
    for rep in range(12):
        t0 = time.perf_counter()
        buf = gpured.empty((len(parts) - 1,), np.float64, device=gpu)
        p0 = gpured.sum(parts[0], dtype=np.float64, keepdims=True)
        for i, b in enumerate(parts[1:]):
            gpured.sum(b, dtype=np.float64, out=buf[i:i + 1].reshape(()) if False else None)
        gpured.synchronize(gpu)
        ts.append((time.perf_counter() - t0) * 1e3)
    print("  %d gpured.sum calls + one sync: %.3f ms" % (len(parts), med(ts[2:])), flush=True)
    del x, whole
