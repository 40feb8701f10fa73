"""Issue 43: does work on one device wait for another device's lock?

N threads sum a 1 MiB float32 device array on device A (PoCL) for SECONDS
seconds while one thread runs gpured.tune() on device B (Intel's CPU
runtime, or a second PoCL device) over and over, its kernel builds and
timed runs holding B's lock.  Prints the sums completed on A, alone and
with the tuner, and the load average.  A fresh kernel cache directory
per run, so that the tuner builds in every run.

    .venv/bin/python benchmarks/exp/devlock.py [N] [SECONDS]
    (PYTHONPATH=<other checkout> for the build before issue 43)

2-core CI-class host shared with other jobs, 2026-11-28, A = PoCL
(pthread), B = Intel's CPU runtime (intel-opencl-rt), sums in 10 s with
the tuner running on B (alone in brackets), 1-min load average:
    4 threads   before (b2caa1c)  3586 (193730)  load 3.8-4.0
                after             79949 (149283) load 3.8-4.5
    4 threads   before            1241 (56443)   load 7.3-7.5
                after             75843 (100320) load 7.6-8.2
    16 threads  before            1651 (45460)   load 7.8-8.2
                after             88501 (134462) load 9.2-11.5
Before, every sum on A waited behind B's builds and timed runs; after,
what A loses is the two cores the tuner shares with it.
"""
import json
import os
import sys
import tempfile
import threading
import time

os.environ["GPURED_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpured-devlock-")

import numpy as np  # noqa: E402

import gpured  # noqa: E402


def pick():
    devs = gpured.devices()
    pocl = [d["position"] for d in devs if d["platform"].startswith("Portable")]
    other = [d["position"] for d in devs if pocl and d["position"] != pocl[0]]
    if not other:
        sys.exit("needs PoCL and a second device: %r" % [d["name"] for d in devs])
    return pocl[0], other[0]


def hammer(da, want, seconds, nthreads):
    """Sums completed on da's device by nthreads threads in seconds."""
    counts = [0] * nthreads
    bad = []
    t_end = time.perf_counter() + seconds

    def work(i):
        while time.perf_counter() < t_end:
            if float(gpured.sum(da)) != want:
                bad.append(i)
            counts[i] += 1

    ts = [threading.Thread(target=work, args=(i,)) for i in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts), len(bad)


def main():
    nthreads = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    a_dev, b_dev = pick()
    a = np.arange(1 << 18, dtype=np.float32)  # 1 MiB
    want = float(a.sum(dtype=np.float64))
    da = gpured.to_device(a, device=a_dev)
    float(gpured.sum(da))  # built and warm
    alone, _ = hammer(da, want, seconds, nthreads)
    gpured.set_device(b_dev)  # tune() measures the current device
    stop = threading.Event()
    tunes = [0]

    def tuner():
        while not stop.is_set():
            gpured.tune(ops=("sum", "max"), sizes=(1 << 20, 1 << 22), reps=3,
                        save=False, progress=False, rates=False)
            tunes[0] += 1

    t = threading.Thread(target=tuner, daemon=True)
    t.start()
    time.sleep(1.0)  # the tuner is building and timing
    load0 = os.getloadavg()[0]
    with_tune, bad = hammer(da, want, seconds, nthreads)
    load1 = os.getloadavg()[0]
    stop.set()
    print(json.dumps({
        "A": gpured.devices()[a_dev]["name"][:40],
        "B": gpured.devices()[b_dev]["name"][:40],
        "threads": nthreads, "seconds": seconds,
        "sums_alone": alone, "sums_with_tune_on_B": with_tune,
        "wrong": bad, "tune_rounds_finished": tunes[0],
        "loadavg_1min": [round(load0, 2), round(load1, 2)]}))
    os._exit(0)  # the tuner thread may be mid-call


if __name__ == "__main__":
    main()
