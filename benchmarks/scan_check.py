"""Every scan variant the current device runs x op x dtype x boundary sizes
against NumPy (exact for integers, a bound for floats), plus a look-back
chain of more than 10,000 tiles.  Prints one line per variant and a total;
exits 1 on any mismatch.  Used by benchmarks/scan_gpu.sh on the GPU host.

    GPURED_DEVICE=nvidia python3 benchmarks/scan_check.py
"""
import os
import sys
import time

import numpy as np

import gpured

OPS = {"cumsum": np.cumsum, "cumprod": np.cumprod,
       "cummin": np.minimum.accumulate, "cummax": np.maximum.accumulate}
DTYPES = ["bool", "int8", "int32", "uint64", "float32", "float64"]


def data(dt, shape, op, seed):
    rng = np.random.default_rng(seed)
    if op == "cumprod":
        a = rng.choice([1, 1, 1, -1, 2] if np.dtype(dt).kind != "u" else [1, 1, 2],
                       size=shape)
        if np.dtype(dt).kind == "f":
            a = 1 + rng.uniform(-1, 1, shape) / 512
    elif np.dtype(dt).kind == "f":
        a = rng.standard_normal(shape)
    else:
        a = rng.integers(0, 100, size=shape)
    return a.astype(dt)


def identity(op, dt):
    dt = np.dtype(dt)
    if op == "cumsum":
        return 0
    if op == "cumprod":
        return 1
    big = op == "cummin"
    if dt.kind == "b":
        return big
    if dt.kind == "f":
        return np.inf if big else -np.inf
    return np.iinfo(dt).max if big else np.iinfo(dt).min


def shift(want, axis, op):
    """The exclusive scan from the inclusive one."""
    w = np.moveaxis(want, axis, -1)
    ex = np.empty_like(w)
    ex[..., 0] = identity(op, want.dtype)
    ex[..., 1:] = w[..., :-1]
    return np.moveaxis(ex, -1, axis)


def ok(got, want, a, op, exclusive):
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind != "f":
        return np.array_equal(got, want)
    n = a.shape[-1] if a.ndim else 1
    eps = np.finfo(want.dtype).eps
    if op == "cumsum":
        tol = eps * np.abs(want) + (np.log2(n + 1) + 24) * eps * np.cumsum(
            np.abs(a.astype(np.float64)), axis=-1)
    elif op == "cumprod":
        tol = (4 * np.sqrt(np.arange(1, n + 1)) + 4) * eps * np.abs(want)
    else:
        return np.array_equal(got, want, equal_nan=True)
    return bool(np.all(np.abs(got.astype(np.float64) - want) <= tol))


def main():
    dev = gpured.get_device()
    print("device:", dev["name"], "|", dev["platform"])
    gpured.placement("current")  # the device's kernels, not the host path
    t0 = time.time()
    bad = 0
    count = 0
    only = os.environ.get("SCAN_VARIANTS")
    for variant in gpured.variants("cumsum", "float32"):
        if only and variant not in only.split(","):
            continue
        nv = 0
        for op, f in OPS.items():
            for dt in DTYPES:
                if variant not in gpured.variants(op, dt):
                    continue
                plan = gpured.explain(op, np.ones(100000, dt), variant=variant)
                tile = plan["wg_size"] * plan["items"]
                sizes = sorted({1, tile - 1, tile, tile + 1, 3 * tile + 7})
                cases = [((n,), -1) for n in sizes] + [((7, 2 * tile + 3), 1),
                                                      ((33, 5), 0)]
                for shape, axis in cases:
                    for exclusive in (False, True):
                        a = data(dt, shape, op, count)
                        want = f(a, axis=axis, dtype=np.cumsum(
                            np.ones(1, dt)).dtype if op == "cumsum" else
                            (np.cumprod(np.ones(1, dt)).dtype if op == "cumprod" else None))
                        if exclusive:
                            want = shift(want, axis, op)
                        got = getattr(gpured, op)(a, axis=axis, variant=variant,
                                                  exclusive=exclusive)
                        count += 1
                        nv += 1
                        aa = np.moveaxis(a, axis, -1)
                        if not ok(np.moveaxis(got, axis, -1), np.moveaxis(want, axis, -1),
                                  aa, op, exclusive):
                            bad += 1
                            if bad < 8:
                                print("MISMATCH", variant, op, dt, shape, axis,
                                      exclusive, got.ravel()[:6], want.ravel()[:6])
        print("  %-20s %4d scans" % (variant, nv), flush=True)
    # A long look-back chain: > 10,000 tiles (a tiny tile through the knobs).
    if "decoupled_lookback" in gpured.variants("cumsum"):
        for dt, kw in (("int32", {}), ("float32", {}), ("int64", {"spins": 0})):
            plan = gpured.explain("cumsum", np.ones(10, dt), variant="decoupled_lookback")
            small = {"wg_size": 32 if plan["combine"] == "subgroup" else 1,
                     "items": 4}
            small.update(kw)
            n = 10007 * small["wg_size"] * small["items"] + 3
            a = data(dt, (n,), "cumsum", 5)
            got = gpured.cumsum(a, variant="decoupled_lookback", **small)
            want = np.cumsum(a, dtype=got.dtype)
            tiles = gpured.explain("cumsum", a, variant="decoupled_lookback", **small)["tiles"]
            good = ok(got, want, a, "cumsum", False)
            bad += not good
            print("  look-back chain %s %d tiles %s: %s" % (dt, tiles, kw, "ok" if good else "MISMATCH"))
    e = gpured.cumsum(np.ones(2 ** 25, np.float32))[-1]
    print("  cumsum(ones(2**25, float32))[-1] = %r" % e)
    bad += e != 2 ** 25
    print("scan check: %d scans, %d mismatches, %.0f s" % (count, bad, time.time() - t0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
