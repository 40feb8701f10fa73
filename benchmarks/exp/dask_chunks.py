"""Where does gd.sum of a device-resident chunked array spend its time, per
chunk, on one device?  (Issue 16: two GPUs summed 32 GiB of device-resident
chunks in 42 ms against 11 ms of kernels; one GPU took 48.5 ms.)

    bash benchmarks/gpu_run.sh exp benchmarks/exp/dask_chunks.py [GiB] [chunk MiB ...]
    DEVICES=gpus ... (each GPU alone, then all GPUs: chunks placed by
    gd.to_device's rate policy, reduced where they live); SETS=first: the
    first GPU alone, then all

Rows, each the median of 5 after a warm-up, the same chunks (gpured.Array):
  loop, no wait       gpured.sum(chunk) per chunk, one synchronize at the end
  loop, each read     float(gpured.sum(chunk).get()) per chunk (a wait each)
  gd.sum threads      gd.sum(x).compute() (Dask's threaded scheduler)
  gd.sum sync         the same, scheduler="sync" (one thread, no pool)
  gd.sum split 4 ...  threads, split_every=4: Dask's reduction tree, a task per chunk
"""
import os
import sys

import numpy as np
import dask
import dask.array as da
import gpured
import gpured.dask as gd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import call_ms, sum_in_turns  # noqa: E402

args = [float(x) for x in sys.argv[1:]]
gib = args[0] if args else 8
chunks_mib = args[1:] or [1024, 256, 64]
dev = gpured.get_device()
print("%s, %g GiB float32 device-resident" % (dev["name"], gib), flush=True)
n = int(gib * (1 << 30)) // 4
host = np.ones(n, np.float32)


def med(f, reps=5):
    return call_ms(f, reps)


rows = []
sets = [None]
if os.environ.get("DEVICES") in ("gpus", "all"):
    gp = [i for i, d in enumerate(gpured.devices())
          if d["type"] == "GPU" or os.environ["DEVICES"] == "all"]
    sets = [[p] for p in gp] + ([gp] if len(gp) > 1 else [])
    if os.environ.get("SETS") == "first":  # the first GPU, then all
        sets = [sets[0], sets[-1]]

for cm, devs in [(c, s) for c in chunks_mib for s in sets]:
    step = int(cm * (1 << 20)) // 4
    x = gd.to_device(da.from_array(host, chunks=step), devices=devs).persist()
    for q in devs or [None]:
        gpured.synchronize(q)
    label = "" if devs is None else "d" + "+".join(map(str, devs)) + " "
    parts = [b for b in x.__dask_graph__().values()
             if isinstance(b, gpured.Array)]
    k = len(parts)
    assert k == x.npartitions, (k, x.npartitions)

    def loop_nowait():
        for c in parts:
            gpured.sum(c)
        for q in devs or [None]:
            gpured.synchronize(q)

    def loop_read():
        s = 0.0
        for c in parts:
            s += float(gpured.sum(c).get())
        return s

    def gd_threads():
        with dask.config.set(scheduler="threads"):
            return float(gd.sum(x).compute())

    def gd_sync():
        with dask.config.set(scheduler="sync"):
            return float(gd.sum(x).compute())

    def gd_split4():
        with dask.config.set(scheduler="threads"):
            return float(gd.sum(x, split_every=4).compute())

    assert abs(gd_threads() - n) <= 1e-6 * n
    def loop_turns():  # the devices in turn, as gd.sum enqueues them
        sum_in_turns(parts, devs or [None])

    cases = [("gd.sum threads", gd_threads), ("gd.sum sync", gd_sync),
             ("gd.sum split 4 (Dask tree)", gd_split4)]
    if devs is None or len(devs) == 1:
        cases[:0] = [("loop, no wait", loop_nowait),
                     ("loop, each read", loop_read)]
    else:
        cases[:0] = [("loop, devices in turn, no wait", loop_turns)]
    for name, f in cases:
        name = label + name
        ms = med(f)
        rows.append((cm, k, name, ms))
        print("  %5d MiB x %4d  %-16s %8.2f ms  %7.3f ms/chunk  %6.1f GB/s"
              % (cm, k, name, ms, ms / k, n * 4 / ms / 1e6), flush=True)
    del x, parts

print("\n| chunk MiB | chunks | case | ms | ms per chunk | GB/s |")
print("|---|---|---|---|---|---|")
for cm, k, name, ms in rows:
    print("| %d | %d | %s | %.2f | %.3f | %.0f |" % (cm, k, name, ms, ms / k,
                                                   n * 4 / ms / 1e6))
