"""The host path's pool: what a call on its threads costs (issue 12).

gpured.sum of float32 NumPy arrays on the host path, forced onto 1, 2, 4,
8 and 16 threads (tasks of 4 KiB up to 16 a thread), against numpy and
torch's CPU sum; loops of calls, median of 5 (ms).  GPURED_HOST_SPIN_US sets
how long the pool's workers spin between calls (us), GPURED_HOST_PAUSE=0
spins on plain loads.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/pool_cost.py
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms, optional_torch  # noqa: E402

import gpured  # noqa: E402
from gpured import _core  # noqa: E402

torch = optional_torch()

F = ("reduce", "arg", "column", "scan")


def main():
    gpured.set_device(gpured.get_device()["position"])  # pinned: no roaming
    name = gpured.get_device()["name"]
    _core.set_rates(name, 0.0, 1e9, {k: 1.0 for k in F}, {k: 1e-6 for k in F})
    _core.host_threads(call_us=0.0, gbs={k: 1e6 for k in F})
    print("spin", os.environ.get("GPURED_HOST_SPIN_US"), "pause",
          os.environ.get("GPURED_HOST_PAUSE"), "cpus", _core.host_threads()["cpus"])
    rng = np.random.default_rng(0)
    print("| MiB | " + " | ".join("x%d ms" % t for t in (1, 2, 4, 8, 16)) +
          " | numpy ms | torch ms |")
    print("|---|" + "---|" * 7)
    for nb in (1 << 16, 1 << 20, 1 << 24, 1 << 26):
        a = rng.standard_normal(nb // 4).astype(np.float32)
        calls = max(5, min(2000, (1 << 28) // nb))
        row = []
        for t in (1, 2, 4, 8, 16):
            _core.host_threads(threads=t, grain=max(4096, nb // (16 * t)))
            time.sleep(0.2)
            row.append(loop_ms(lambda: gpured.sum(a), lambda: None, calls))
        time.sleep(0.2)
        npy = loop_ms(lambda: np.sum(a), lambda: None, calls)
        tch = loop_ms(lambda: torch.from_numpy(a).sum(), lambda: None, calls) \
            if torch is not None else float("nan")
        print("| %g | %s | %.4f | %.4f |" % (nb / (1 << 20), " | ".join(
            "%.4f" % x for x in row), npy, tch), flush=True)


if __name__ == "__main__":
    main()
