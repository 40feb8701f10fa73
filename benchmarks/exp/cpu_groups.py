"""1 GiB float32 NumPy sum on the CPU device (PoCL): groups per segment
and work-group size, against torch's CPU sum, and gpured again after torch
(torch's OpenMP threads spin for a while after each call).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/cpu_groups.py
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
    gpured.set_device(cpu)
    gpured.placement("current")
    print("auto plan: %.2f ms" % loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5))
    for wg in (4, 8, 16):
        line = []
        for g in (16, 32, 64, 128, 256, 1024):
            try:
                t = loop_ms(lambda: gpured.sum(a, wg_size=wg, groups=g), lambda: None, 5, 3)
                line.append("g%d %.2f" % (g, t))
            except Exception as e:  # noqa: BLE001
                line.append("g%d %s" % (g, str(e)[:40]))
        print("wg %d: %s" % (wg, " | ".join(line)), flush=True)
    import torch
    t = torch.from_numpy(a)
    print("torch %.2f ms" % loop_ms(lambda: float(torch.sum(t)), lambda: None, 5, 5))
    print("gpured right after torch %.2f ms" % loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5))
    import time
    time.sleep(1.0)
    print("gpured 1 s after torch %.2f ms" % loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5))


if __name__ == "__main__":
    main()
