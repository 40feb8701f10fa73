"""Host-resident chunks streamed to two GPUs from threads, without Dask
(issue 16: is the device lock still in the way?).

    python3 benchmarks/exp/two_gpu_stream.py [GIB] [CHUNK_MIB]

A float32 host array of GIB GiB (filled with ones), cut into CHUNK_MIB
views, summed chunk by chunk with gpured.sum(view, device=p): a plain loop
on each GPU, two threads (one per GPU, half the chunks each), and a pool
of 32 threads dealing chunks round robin.  Each case: warm-up, then the
median of 3; staging() counters after each.
"""
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import gpured

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 64
cmib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
gpus = [i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"]
t = time.perf_counter()
a = np.empty(int(gib * (1 << 30)) // 4, np.float32)
a.fill(1.0)
per = cmib * (1 << 20) // 4
views = [a[i:i + per] for i in range(0, a.size, per)]
print("%.0f GiB, %d chunks of %d MiB, made in %.1f s; GPUs %s"
      % (gib, len(views), cmib, time.perf_counter() - t, gpus), flush=True)


def timed(name, f, reps=3):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    s = gpured.staging()
    m = statistics.median(ts)
    print("%-34s %9.1f ms %6.1f GB/s  sum %.6g  direct %d/%d at_once %d reg %d"
          % (name, m * 1e3, a.nbytes / m / 1e9, r, s["direct_chunks"],
             s["chunks"], s["streams_at_once"], s["registered"]), flush=True)
    return m


def loop(dev, vs):
    return sum(float(gpured.sum(v, device=dev)) for v in vs)


res = {}
for p in gpus:
    res[p] = timed("loop, GPU %d" % p, lambda p=p: loop(p, views))


def two():
    out = [0.0] * len(gpus)

    def w(k):
        out[k] = loop(gpus[k], views[k::len(gpus)])
    ts = [threading.Thread(target=w, args=(k,)) for k in range(len(gpus))]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    return sum(out)


both = timed("%d threads, one per GPU" % len(gpus), two)
ex = ThreadPoolExecutor(32)


def pool():
    fs = [ex.submit(gpured.sum, v, device=gpus[i % len(gpus)])
          for i, v in enumerate(views)]
    return sum(float(f.result()) for f in fs)


many = timed("32 threads, round robin", pool)
one = min(res.values())
print("\n| case | ms | x one GPU |\n|---|---:|---:|")
for p in gpus:
    print("| loop, GPU %d | %.1f | %.2f |" % (p, res[p] * 1e3, one / res[p]))
print("| threads, one per GPU | %.1f | %.2f |" % (both * 1e3, one / both))
print("| 32 threads, round robin | %.1f | %.2f |" % (many * 1e3, one / many))
