"""Column sums (axis 0) of device-resident arrays on a CPU device (PoCL),
against numpy on the same data, one process: the auto plan and forced
parts per column (groups=).  Ratio = numpy time / gpured time.

    PYTHONPATH=. python3 benchmarks/exp/cpu_columns.py [float32|float64]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402


def main():
    dt = np.dtype(sys.argv[1] if len(sys.argv) > 1 else "float32")
    cpu = [i for i, d in enumerate(gpured.devices()) if d["type"] == "CPU"][0]
    gpured.set_device(cpu)
    gpured.placement("current")
    rng = np.random.default_rng(0)
    sweep = (1, 4, 8, 16, 32, 64)
    print("| shape (%s) | numpy ms | auto | auto parts | %s |" % (
        dt.name, " | ".join("groups=%d" % g for g in sweep)))
    print("|---|---|---|---|" + "---|" * len(sweep))
    for shape in [(2048, 512), (1024, 4096), (256, 16384), (4096, 4096),
                  (16384, 1024), (65536, 256)]:
        a = rng.random(shape).astype(dt)
        x = gpured.to_device(a)
        want = a.sum(axis=0, dtype=np.float64)
        assert np.allclose(gpured.sum(x, axis=0).get(), want, rtol=1e-5)
        tn = loop_ms(lambda: a.sum(axis=0), lambda: None, 5, 5)
        ta = loop_ms(lambda: gpured.sum(x, axis=0), gpured.synchronize, 5, 5)
        parts = gpured.explain("sum", x, axis=0)["why"].split(" part(s)")[0].split()[-1]
        cells = []
        for g in sweep:
            t = loop_ms(lambda: gpured.sum(x, axis=0, groups=g), gpured.synchronize, 5, 5)
            cells.append("%.2f" % (tn / t))
        print("| %s | %.2f | **%.2f** | %s | %s |" % (
            shape, tn, tn / ta, parts, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
