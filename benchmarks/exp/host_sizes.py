"""Issue 12's 2-core row: gpured.sum / gpured.max of NumPy arrays (placement
"auto") against numpy at every size from 1 KiB to 256 MiB, one process.
Wall clock of loops of calls, median of 5 (ratio = numpy time / gpured
time; above 1: gpured faster).

    PYTHONPATH=. python3 benchmarks/exp/host_sizes.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402


def header(first, sizes):
    """The table's head: a column per size (also for host_cols.py)."""
    print("| %s | dtype | " % first + " | ".join(
        "%d %s" % ((s >> 20, "MiB") if s >= 1 << 20 else (s >> 10, "KiB"))
        for s in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))


def main():
    sizes = [1 << 10, 1 << 12, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24,
             1 << 26, 1 << 28]
    rng = np.random.default_rng(0)
    print("device:", gpured.get_device()["name"], "| placement:", gpured.placement())
    header("op", sizes)
    for dt in (np.float32, np.float64):
        for op in ("sum", "max"):
            cells = []
            for nb in sizes:
                a = rng.random(nb // np.dtype(dt).itemsize).astype(dt)
                calls = max(3, min(5000, (1 << 26) // nb))
                g, f = getattr(gpured, op), getattr(np, op)
                tg = loop_ms(lambda: g(a), lambda: None, calls)
                tn = loop_ms(lambda: f(a), lambda: None, calls)
                e = gpured.explain(op, a)
                where = "H" if e["placement"] == "host" else "D"
                cells.append("%.2f %s" % (tn / tg, where))
            print("| %s | %s | %s |" % (op, np.dtype(dt).name, " | ".join(cells)), flush=True)
    print("(H: the host path ran it, D: the device)")


if __name__ == "__main__":
    main()
