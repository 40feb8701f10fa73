"""Issue 43's Dask targets on the H200s (one or two GPUs), wall clock, peers
in the same process:

  plain            one gpured.sum call over the whole device-resident array
                   (a loop of calls, one synchronise, median: _loop.py)
  gd 1 GPU         gpured.dask.sum(x).compute(), x persisted device-resident
                   on the first GPU in C MiB chunks: ratio to plain (>= 0.9
                   at 256 MiB is the target)
  gd N GPUs        the same chunks spread over every GPU: speed-up over one
                   (>= 1.9 on two H200s); "in turns": every chunk enqueued
                   from the calling thread, the devices in turn;
                   "threads": each device's chunks from a thread of its own
                   (gpured.dask's default; GPURED_DASK_THREADS=0 is the
                   other)
  cupy             the same chunks summed by CuPy, one stream per GPU,
                   partials added after one synchronise per GPU: gd's ratio
  host-resident    gd.sum of a NumPy-backed Dask array (HOST GiB), chunks
                   uploaded and reduced on one GPU, then on every GPU
                   (speed-up >= 1.9); CuPy beside (cp.asarray + sum per
                   chunk on its GPU's stream)

Every result is checked (the arrays are ones: the sum is exact).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/dask43_h200.py
    env: D43_GIB=1,4,16 (device-resident sizes)  D43_CHUNKS=256,1024 (MiB)
         D43_HOST_GIB=4  D43_REPS=15  D43_CUPY=0 (no CuPy rows)
         DASK_SCHEDULER=sync or threads (Dask's own variable: that
         scheduler for every compute; unset, a resident gd.sum's
         compute() runs its one task inline: gd._OneBlock)
On kinds nvidia-h200 (one GPU: the multi-GPU rows are left out) and
nvidia-h200-x2.  About 60-90 s (the uploads dominate).  benchmarks/
multi_gpu.py is the long form (16-32 GiB, --chunks-mib, every row); its
helpers are reused here.
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
from _loop import call_ms, loop_ms, optional_cupy  # noqa: E402
from multi_gpu import cupy_sum  # noqa: E402

cp = optional_cupy() if os.environ.get("D43_CUPY", "1") != "0" else None
T0 = time.perf_counter()
GIBS = [float(v) for v in os.environ.get("D43_GIB", "1,4,16").split(",")]
CHUNKS = [float(v) for v in os.environ.get("D43_CHUNKS", "256,1024").split(",")]
HOST_GIB = float(os.environ.get("D43_HOST_GIB", "4"))
REPS = int(os.environ.get("D43_REPS", "15"))
gpus = [i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"]
if not gpus:  # a machine without GPUs: every device, small (a dry run;
    # POCL_DEVICES="pthread pthread" gives two)
    gpus = list(range(len(gpured.devices())))
    GIBS, CHUNKS, HOST_GIB = [1 / 64], [1, 4], 1 / 64
print("devices:", [(p, gpured.devices()[p]["name"]) for p in gpus],
      "scheduler:", dask.config.get("scheduler", None)
      or "default (gd._OneBlock's compute() inline, others threads)", flush=True)
rows = []


def med(f, reps=REPS):
    return call_ms(f, reps)


def row(what, ms, nbytes, ref=None, ref_name=""):
    gbs = nbytes / ms / 1e6
    r = "" if ref is None else "%s %.2f" % (ref_name, ref / ms)
    rows.append((what, ms, gbs, r))
    print("%-44s %9.3f ms %9.1f GB/s  %s   [%.0f s]" % (
        what, ms, gbs, r, time.perf_counter() - T0), flush=True)


def check(v, n, what):
    if float(v) != n:
        if what.startswith("cupy"):  # a peer's answer: reported, not fatal
            print("PEER WRONG %s: %r, want %d" % (what, v, n), flush=True)
            return
        raise SystemExit("WRONG %s: %r, want %d" % (what, v, n))


def free():
    gpured.empty_cache()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()


top = int(max(GIBS + [HOST_GIB]) * (1 << 30)) // 4
host = np.ones(top, np.float32)
for gib in GIBS:
    n = int(gib * (1 << 30)) // 4
    h = host[:n]
    d = gpured.to_device(h, device=gpus[0])
    check(gpured.sum(d), n, "plain")
    t_plain = loop_ms(lambda: gpured.sum(d), lambda: gpured.synchronize(gpus[0]),
                      calls=5, loops=max(REPS // 3, 3))
    row("plain gpured.sum %g GiB" % gib, t_plain, h.nbytes)
    del d
    free()
    for cm in CHUNKS:
        step = int(cm * (1 << 20)) // 4
        if step > n:
            continue
        x1 = gd.to_device(da.from_array(h, chunks=step), devices=[gpus[0]]).persist()
        gpured.synchronize(gpus[0])
        check(gd.sum(x1).compute(), n, "gd one")
        t1 = med(lambda: gd.sum(x1).compute())
        row("gd 1 GPU %g GiB, %g MiB chunks" % (gib, cm), t1, h.nbytes,
            t_plain, "/plain")
        del x1
        free()
        ta = None
        if len(gpus) > 1:
            xa = gd.to_device(da.from_array(h, chunks=step), devices=gpus).persist()
            for p in gpus:
                gpured.synchronize(p)
            check(gd.sum(xa).compute(), n, "gd all")
            gd._ENQ_THREADS = False  # the devices in turn from one thread
            t_turns = med(lambda: gd.sum(xa).compute())
            gd._ENQ_THREADS = True   # a thread per device (the default)
            ta = med(lambda: gd.sum(xa).compute())
            row("gd %d GPUs %g GiB, %g MiB chunks, in turns" % (
                len(gpus), gib, cm), t_turns, h.nbytes, t1, "x one")
            row("gd %d GPUs %g GiB, %g MiB chunks, threads" % (
                len(gpus), gib, cm), ta, h.nbytes, t1, "x one")
            ta = min(ta, t_turns)
            del xa
            free()
        if cp is not None:
            blocks = [h[i:i + step] for i in range(0, n, step)]
            for k, tg in ((1, t1), (len(gpus), ta)):
                if tg is None or (k > 1 and len(gpus) < 2):
                    continue
                run, held = cupy_sum(blocks, k)
                check(run(), n, "cupy")
                tc = med(run)
                row("cupy %d GPU %g GiB, %g MiB chunks" % (k, gib, cm), tc,
                    h.nbytes)
                rows[-1] = rows[-1][:3] + ("gd/cupy %.2f" % (tc / tg),)
                print("    gd/cupy (>1: gd faster) %.2f" % (tc / tg))
                del held, run
                free()
if HOST_GIB > 0:
    m = int(HOST_GIB * (1 << 30)) // 4
    h = host[:m]
    for cm in [c for c in CHUNKS if int(c * (1 << 20)) // 4 <= m]:
        xh = da.from_array(h, chunks=int(cm * (1 << 20)) // 4)
        check(gd.sum(xh, devices=[gpus[0]]).compute(), m, "host one")
        th1 = med(lambda: gd.sum(xh, devices=[gpus[0]]).compute(),
                  max(REPS // 5, 2))
        row("host-resident %g GiB, %g MiB chunks, 1 GPU" % (HOST_GIB, cm),
            th1, h.nbytes)
        if len(gpus) > 1:
            check(gd.sum(xh, devices=gpus).compute(), m, "host all")
            tha = med(lambda: gd.sum(xh, devices=gpus).compute(),
                      max(REPS // 5, 2))
            row("host-resident %g GiB, %g MiB chunks, %d GPUs" % (
                HOST_GIB, cm, len(gpus)), tha, h.nbytes, th1, "x one")
    if cp is not None:
        blocks = [h[i:i + int(cm * (1 << 20)) // 4] for i in range(0, m, int(cm * (1 << 20)) // 4)]
        streams = []
        for g in range(len(gpus)):
            with cp.cuda.Device(g):
                streams.append(cp.cuda.Stream(non_blocking=True))

        def cupy_host(k):
            def run():
                parts = []
                for i, b in enumerate(blocks):
                    g = i % k
                    with cp.cuda.Device(g), streams[g]:
                        parts.append(cp.asarray(b).sum(dtype=np.float64))
                for g in range(k):
                    streams[g].synchronize()
                return float(sum(float(p) for p in parts))
            return run
        for k in sorted({1, len(gpus)}):
            check(cupy_host(k)(), m, "cupy host")
            row("cupy host-resident %g GiB, %g MiB chunks, %d GPU" % (
                HOST_GIB, cm, k),
                med(cupy_host(k), max(REPS // 5, 2)), h.nbytes)
print("\n| what | ms | GB/s | ratio |\n|---|---|---|---|")
for what, ms, gbs, r in rows:
    print("| %s | %.3f | %.1f | %s |" % (what, ms, gbs, r))
print("total %.0f s" % (time.perf_counter() - T0))
