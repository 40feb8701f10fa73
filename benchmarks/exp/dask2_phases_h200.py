"""Where two GPUs' gd.sum(x).compute() of a device-resident array (256 MiB
chunks, half on each H200) loses to twice one GPU (issue 43: 1.85x at 16
GiB, target 1.9): plain calls of each half on its GPU (alone, and both at
once: the hardware's own two-GPU figure), the build, each device's
finish after the build, and the compute's phases (get_many, the end).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/dask2_phases_h200.py [GiB ...]
    (kind nvidia-h200-x2)
"""
import os
import statistics
import sys
import time

import numpy as np
import dask.array as da
import gpured
import gpured.dask as gd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import spy_resident  # noqa: E402

sizes = [float(s) for s in sys.argv[1:]] or [16, 32]
CH = int(os.environ.get("CH_MIB", 256)) << 20
gpus = ([i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"]
        or list(range(len(gpured.devices()))))[:2]  # (no GPU: a dry run)
med = statistics.median


def each(fn, reps=15):
    out = []
    for rep in range(reps + 2):
        out.append(fn())
    return [med(v) * 1e3 for v in zip(*out[2:])]


for gib in sizes:
    n = int(gib * (1 << 30)) // 4
    half = np.ones(n // 2, np.float32)
    hs = [gpured.to_device(half, device=g) for g in gpus]
    for g in gpus:
        gpured.synchronize(g)

    def plain(which):
        t0 = time.perf_counter()
        rs = [gpured.sum(hs[i]) for i in which]
        ts = []
        for i, r in zip(which, rs):
            r.get()
            ts.append(time.perf_counter() - t0)
        return ts
    print("%g GiB: half on one GPU, one call + get: GPU %d %.3f ms, GPU %d %.3f ms"
          % (gib, gpus[0], each(lambda: plain([0]))[0], gpus[1],
             each(lambda: plain([1]))[0]))
    print("  both halves at once, each get done at: %s ms" % (
        ", ".join("%.3f" % v for v in each(lambda: plain([0, 1])))))
    w = [gpured.to_device(np.ones(n, np.float32), device=gpus[0])]
    gpured.synchronize(gpus[0])

    def whole():
        t0 = time.perf_counter()
        gpured.sum(w[0]).get()
        return [time.perf_counter() - t0]
    print("  whole on GPU %d, one call + get: %.3f ms" % (gpus[0], each(whole)[0]))
    del w, hs
    for devs in ([gpus[0]], gpus):
        x = gd.to_device(da.from_array(np.ones(n, np.float32), chunks=CH // 4),
                         devices=devs).persist()
        for g in devs:
            gpured.synchronize(g)
        float(gd.sum(x).compute())

        def build_sync():
            t0 = time.perf_counter()
            gd.sum(x)
            tb = time.perf_counter()
            out = [tb - t0]
            for g in devs:
                gpured.synchronize(g)
                out.append(time.perf_counter() - t0)
            return out
        v = each(build_sync)
        print("  %d GPU(s): build %.3f, then each device synchronised at %s ms"
              % (len(devs), v[0], ", ".join("%.3f" % t for t in v[1:])))
        S = {}
        real = gd._resident_agg, gd._core.get_many
        spy_resident(gd, S)

        def comp():
            S.clear()
            t0 = time.perf_counter()
            r = gd.sum(x)
            tb = time.perf_counter()
            float(r.compute())
            t1 = time.perf_counter()
            return [tb - t0, S["gm0"] - t0, S["gm1"] - t0, S["agg"] - t0, t1 - t0]
        v = each(comp)
        gd._resident_agg, gd._core.get_many = real
        print("  %d GPU(s): compute(): built %.3f  get_many %.3f -> %.3f  agg %.3f  end %.3f ms"
              % ((len(devs),) + tuple(v)), flush=True)
        del x
