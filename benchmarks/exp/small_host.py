"""NumPy arrays of 1 KiB and 64 KiB: gpured (placement auto) vs numpy, per call."""
import time, statistics
import numpy as np
import gpured
def lt(fn, calls=2000, loops=7):
    fn(); ts = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        ts.append((time.perf_counter() - t0) / calls)
    return statistics.median(ts) * 1e6
print(gpured.get_device()["name"])
for n in (256, 16384):
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    for op in ("sum", "max", "argmax", "cumsum"):
        g, f = getattr(gpured, op), getattr(np, op)
        x, y = lt(lambda: g(a)), lt(lambda: f(a))
        print("%-7s %6d B: gpured %.2f us  numpy %.2f us  ratio %.2f  (%s)" % (
            op, a.nbytes, x, y, y / x, gpured.explain(op, a)["placement"]))
