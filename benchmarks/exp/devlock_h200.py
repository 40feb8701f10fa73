"""Issue 43 on the GPU host: do GPU calls wait for the CPU device's lock?

16 threads sum a 1 MiB float32 array resident on the first GPU for
SECONDS seconds, alone, then while one more thread runs gpured.tune() on
the host's PoCL CPU device over and over (its kernel builds and timed
runs hold that device's lock, never the GPU's).  Prints the GPU sums per
second alone and under that load (before issue 43's per-device locks:
133 calls in 100 s under load).  benchmarks/exp/devlock.py is the same
test with the roles swapped (PoCL summing, another device tuning: the
2-core CI host); this file reuses its hammer().

    bash benchmarks/gpu_run.sh exp benchmarks/exp/devlock_h200.py [N] [SECONDS]
    (defaults 16 threads, 8 s per phase: about 25 s with the builds)
"""
import json
import os
import sys
import tempfile
import threading
import time

os.environ["GPURED_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpured-devlock-")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import gpured  # noqa: E402
from devlock import hammer  # noqa: E402


def pick():
    devs = gpured.devices()
    gpus = [d["position"] for d in devs if d["type"] == "GPU"]
    cpus = [d["position"] for d in devs if d["type"] != "GPU"]
    if not gpus and len(cpus) > 1:  # a dry run: POCL_DEVICES="pthread pthread"
        return cpus[0], cpus[1]
    if not gpus or not cpus:
        sys.exit("needs a GPU and a CPU OpenCL device (PoCL): %r"
                 % [(d["name"], d["type"]) for d in devs])
    return gpus[0], cpus[0]


def main():
    nthreads = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 8.0
    g, c = pick()
    a = np.arange(1 << 18, dtype=np.float32)  # 1 MiB
    want = float(a.sum(dtype=np.float64))
    d = gpured.to_device(a, device=g)
    assert float(gpured.sum(d)) == want
    alone, bad0 = hammer(d, want, seconds, nthreads)
    gpured.set_device(c)  # tune() measures the current device
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
    loaded, bad1 = hammer(d, want, seconds, nthreads)
    stop.set()
    r0, r1 = alone / seconds, loaded / seconds
    print(json.dumps({
        "gpu": gpured.devices()[g]["name"][:40],
        "cpu_tuned": gpured.devices()[c]["name"][:40],
        "threads": nthreads, "seconds": seconds,
        "calls_per_s_alone": round(r0, 1),
        "calls_per_s_with_tune_on_cpu": round(r1, 1),
        "ratio": round(r1 / r0, 3) if r0 else None,
        "wrong": bad0 + bad1, "tune_rounds_finished": tunes[0],
        "loadavg_1min": round(os.getloadavg()[0], 2)}))
    print("DEVLOCK %s: %.0f calls/s alone, %.0f with tune() on the CPU device "
          "(x%.2f)" % ("OK" if r1 >= 0.5 * r0 and not (bad0 or bad1) else "LOW",
                      r0, r1, r1 / r0 if r0 else 0), flush=True)
    os._exit(0)  # the tuner thread may be mid-call


if __name__ == "__main__":
    main()
