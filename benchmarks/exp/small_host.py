"""NumPy arrays of 1 KiB and 64 KiB: gpured (placement auto) vs numpy, per call."""
import numpy as np
import gpured
from _loop import loop_ms


def lt(fn):  # us per call, no device to wait for
    return loop_ms(fn, lambda: None, 2000, 7) * 1e3


print(gpured.get_device()["name"])
for n in (256, 16384):
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    for op in ("sum", "max", "argmax", "cumsum"):
        g, f = getattr(gpured, op), getattr(np, op)
        x, y = lt(lambda: g(a)), lt(lambda: f(a))
        print("%-7s %6d B: gpured %.2f us  numpy %.2f us  ratio %.2f  (%s)" % (
            op, a.nbytes, x, y, y / x, gpured.explain(op, a)["placement"]))
