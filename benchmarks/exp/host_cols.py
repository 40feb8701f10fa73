"""Issue 15's 2-core row: column sums (axis 0 of a C-ordered L x M matrix,
M = 2^ceil(log2(n)/2)) and argmax of NumPy arrays, gpured (placement auto)
against numpy, one process; ratio = numpy time / gpured time.

    PYTHONPATH=. python3 benchmarks/exp/host_cols.py
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402
from host_sizes import header  # noqa: E402

import gpured  # noqa: E402


def main():
    sizes = [1 << 16, 1 << 20, 1 << 22, 1 << 24, 1 << 26]
    rng = np.random.default_rng(0)
    header("case", sizes)
    for dt in (np.float32, np.float64):
        for case in ("column sum", "argmax"):
            cells = []
            for nb in sizes:
                n = nb // np.dtype(dt).itemsize
                m = 1 << math.ceil(math.log2(n) / 2)
                a = rng.random(n).astype(dt)
                if case == "column sum":
                    a = a.reshape(n // m, m)
                    g, f = (lambda: gpured.sum(a, axis=0)), (lambda: np.sum(a, axis=0))
                else:
                    g, f = (lambda: gpured.argmax(a)), (lambda: np.argmax(a))
                calls = max(3, min(3000, (1 << 26) // nb))
                tg = loop_ms(g, lambda: None, calls)
                tn = loop_ms(f, lambda: None, calls)
                cells.append("%.2f" % (tn / tg))
            print("| %s | %s | %s |" % (case, np.dtype(dt).name, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
