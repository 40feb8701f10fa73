"""Why a 1 GiB NumPy sum placed on the CPU device by "auto" (18 ms) is
slower than the same call pinned to the CPU device (12 ms)?  Same array,
same process, alternating.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/place_cpu.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402


def main():
    a = np.random.default_rng(0).random(1 << 28, dtype=np.float32)
    cpu = [i for i, d in enumerate(gpured.devices()) if d["type"] == "CPU"][0]
    for rep in range(2):
        gpured.set_device(None)
        gpured.placement("auto")
        e = gpured.explain("sum", a)
        auto = loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5)
        gpured.set_device(cpu)
        gpured.placement("current")
        e2 = gpured.explain("sum", a)
        pinned = loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5)
        gpured.placement("auto")
        pinned_auto = loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5)
        print("auto %.2f ms (%s, %s) | CPU pinned, current %.2f ms (%s) | CPU pinned, auto %.2f"
              % (auto, e.get("device"), e.get("why", "")[:160], pinned,
                 e2.get("why", "")[:160], pinned_auto), flush=True)
    gpured.set_device(None)
    gpured.placement("auto")
    import time
    ts = []
    for k in range(10):
        t0 = time.perf_counter(); gpured.sum(a); ts.append((time.perf_counter() - t0) * 1e3)
    print("auto, single calls ms:", ["%.1f" % t for t in ts])
    if gpured.timeit is not None if hasattr(gpured, "timeit") else False:
        pass


if __name__ == "__main__":
    main()
