"""Reduce-by-key benchmark: gpured's by-key functions vs NumPy (and, on a
CUDA machine, torch) on the seed's problem shapes.

    python3 benchmarks/bykey_bench.py            # 10 Mi values, 1 Mi keys
    python3 benchmarks/bykey_bench.py --small    # quick

Device times: OpenCL profiling events (gpured.timeit_by_key: inputs on the
device, key check included); NumPy: wall-clock median of the same reps.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gpured
from gpured import _bykey as B


# a warm-up call, then the median of reps single calls (s)
from gpured.bench import median_time as wall  # noqa: E402


def keys_for(order, nk, per, kdt, rng):
    k = np.repeat(np.arange(nk), per)
    if order == "partly":
        # each key moved by up to ~one run: locally shuffled blocks of 64
        k = k.reshape(-1, 64)
        k = np.take_along_axis(k, rng.permuted(np.tile(np.arange(64), (k.shape[0], 1)), axis=1), 1).ravel()
    elif order == "random":
        k = rng.permutation(k)
    return k.astype(kdt)


def main():
    small = "--small" in sys.argv
    nk = 1 << (14 if small else 20)
    per = 10
    reps = 3 if small else 5
    rng = np.random.default_rng(0)
    dev = gpured.get_device()
    print("device:", dev["name"])
    for vdt in (np.float64, np.float32):
        v = rng.random(nk * per).astype(vdt)
        for order in ("sorted", "partly", "random"):
            k = keys_for(order, nk, per, np.int64, rng)
            ref = np.bincount(k, v, minlength=nk)
            t_np = wall(lambda: np.bincount(k, v, minlength=nk), reps)
            line = ["sum_by_key %-7s %-6s bincount %.2f ms" % (vdt.__name__, order, t_np * 1e3)]
            for var in gpured.variants_by_key("sum_by_key", "int64", vdt, "sum"):
                r = B.timeit_by_key("sum_by_key", k, v, "sum", num_keys=nk,
                                    variant=var, reps=reps)
                if r["result"] is None:
                    line.append("%s: keys unsorted (deterministic path sorts on the host)" % var)
                    continue
                err = np.abs(r["result"] - ref).max() / max(1.0, np.abs(ref).max())
                name = r["plan"]["variant"] if var == "auto" else var
                line.append("%s%s %.2f ms (x%.2f, err %.1e)" % (
                    "auto=" if var == "auto" else "", name, r["seconds"] * 1e3,
                    t_np / r["seconds"], err))
            print(" | ".join(line), flush=True)
        k = keys_for("sorted", nk, per, np.int64, rng)
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        t_ra = wall(lambda: np.add.reduceat(v, starts), reps)
        t_full = wall(lambda: np.add.reduceat(v, np.flatnonzero(np.r_[True, k[1:] != k[:-1]])), reps)
        r = B.timeit_by_key("reduce_by_key", k, v, "sum", reps=reps)
        ok = np.array_equal(r["result"][0], k[starts])
        print("reduce_by_key %-7s sorted: add.reduceat %.2f ms (with run starts %.2f ms) "
              "| gpured %.2f ms (x%.2f vs reduceat, x%.2f vs full; keys ok %s)"
              % (vdt.__name__, t_ra * 1e3, t_full * 1e3, r["seconds"] * 1e3,
                 t_ra / r["seconds"], t_full / r["seconds"], ok), flush=True)


if __name__ == "__main__":
    main()
