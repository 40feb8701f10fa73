"""d * 2 + 1 on a 64 MiB float32 device Array against NumPy's a * 2 + 1
(issue 42's elementwise operators): best of 5, the device synchronised.
    .venv/bin/python benchmarks/exp/ew_axpb.py"""
import time

import numpy as np

import gpured


def best(f, k=5):
    ts = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main():
    n = 64 * 1024 * 1024 // 4
    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    d = gpured.to_device(a)

    def dev():
        r = d * 2 + 1
        gpured.synchronize()
        return r
    dev()                                     # kernels built
    assert np.allclose(dev().get(), a * 2 + 1)
    tg, tn = best(dev), best(lambda: a * 2 + 1)
    print("device: %s" % gpured.get_device()["name"])
    print("gpured d*2+1: %.2f ms   numpy a*2+1: %.2f ms   gpured/numpy = %.3f"
          % (tg * 1e3, tn * 1e3, tg / tn))


if __name__ == "__main__":
    main()
