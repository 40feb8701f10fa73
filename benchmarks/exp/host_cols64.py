"""Issue 15: column sums (axis 0 of a C-ordered rows x cols matrix) of NumPy
arrays, gpured (placement auto: the host path) against numpy, several shapes
per size from 64 KiB to 64 MiB, one process.  Wall clock of loops of calls,
median of the loops; ratio = numpy time / gpured time (above 1: gpured
faster).  Every shape is timed `--rounds` times, alternating gpured and
numpy, and the median ratio printed with the range.

    PYTHONPATH=. python3 benchmarks/exp/host_cols64.py [--dtype float64]
        [--sizes 64K,1M,4M,16M,64M] [--rounds 3] [--device]

--device times gpured on PoCL instead (placement "current", a device Array
made once), for the tall-narrow shapes only.
"""
import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402

# columns per shape at every size (rows = size / 8 bytes / cols)
COLS = [64, 128, 512, 1024, 2048, 8192]


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def label(nb):
    return "%d MiB" % (nb >> 20) if nb >= 1 << 20 else "%d KiB" % (nb >> 10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--sizes", default="64K,1M,4M,16M,64M")
    ap.add_argument("--cols", default=",".join(map(str, COLS)))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", action="store_true")
    args = ap.parse_args()
    dt = np.dtype(args.dtype)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    cols = [int(c) for c in args.cols.split(",")]
    rng = np.random.default_rng(0)
    print("device:", gpured.get_device()["name"], "| placement:",
          gpured.placement(), "| dtype:", dt.name, "| device path:", args.device)
    print("| size | shape | numpy us | gpured us | ratio (median) | range |")
    print("|---|---|---|---|---|---|")
    for nb in sizes:
        n = nb // dt.itemsize
        for m in cols:
            if n % m or n // m < 2:
                continue
            a = rng.random(n).astype(dt).reshape(n // m, m)
            if args.device:
                gpured.placement("current")
                d = gpured.to_device(a)
                g = lambda: gpured.sum(d, axis=0).get()  # noqa: E731
            else:
                g = lambda: gpured.sum(a, axis=0)  # noqa: E731
            f = lambda: np.sum(a, axis=0)  # noqa: E731
            calls = max(3, min(3000, (1 << 27) // nb))
            rs, tgs, tns = [], [], []
            for _ in range(args.rounds):
                tg = loop_ms(g, lambda: None, calls)
                tn = loop_ms(f, lambda: None, calls)
                rs.append(tn / tg)
                tgs.append(tg)
                tns.append(tn)
            if args.device:
                gpured.placement("auto")
            print("| %s | %d x %d | %.1f | %.1f | %.2f | %.2f-%.2f |" % (
                label(nb), n // m, m, statistics.median(tns) * 1e3,
                statistics.median(tgs) * 1e3, statistics.median(rs), min(rs),
                max(rs)), flush=True)


if __name__ == "__main__":
    main()
