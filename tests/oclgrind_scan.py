"""Run every scan kernel configuration under Oclgrind and fail on any report
(data races -- within and between work-groups, so the look-back's status
words too --, barrier divergence, invalid or out-of-bounds accesses,
uninitialised values), checking each result against NumPy as well.

    python3 tests/oclgrind_scan.py                # parent: runs the jobs
    python3 tests/oclgrind_scan.py --child JOB    # what runs in oclgrind

Modelled on tests/oclgrind_check.py (same notes: -cl-opt-disable, and the
uninitialised-value check one case per process).  Tiles are tiny (a few
work-items x 2 items) so that small inputs still cross many tile, chunk
and work-group boundaries, and the look-back walks chains of tiles.
"""
import os
import sys

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (variant, knobs, axis): every kernel and pass the scan plans produce.
CONFIGS = [
    ["auto", {}, None],                                      # CPU look-back tile
    ["naive", {"wg_size": 8, "groups": 1}, 1],               # one group per row
    ["blelloch", {"wg_size": 16, "items": 2, "groups": 1}, 1],
    ["reduce_then_scan", {"wg_size": 8, "items": 8, "groups": 3}, 1],  # striped
    ["decoupled_lookback", {"wg_size": 8, "items": 2}, None],  # group tiles
    ["decoupled_lookback", {"wg_size": 4, "items": 8, "spins": 0}, 1],  # fallback, striped
    ["decoupled_lookback", {"wg_size": 1, "items": 16, "ilp": 4}, None],
    ["row_per_item", {}, 0],                                 # columns
    ["row_per_item", {}, 1],                 # rows of 77: 16 loads at a time
]
OPS = ["cumsum", "cumprod", "cummin", "cummax"]
RACE_DTYPES = ["int8", "int32", "float32", "float64"]
UNINIT_DTYPES = ["int32", "float64"]


def run_case(gpured, dt, op, variant, knobs, axis, exclusive=False):
    rng = np.random.default_rng(1)
    base = rng.integers(0, 3, size=(3, 77)).astype(dt)
    if op == "cumprod":
        base = np.where(base == 2, -1, 1).astype(dt) if dt != "uint8" else (base > 0).astype(dt)
    a = base[0] if axis is None else base
    got = getattr(gpured, op)(a, axis=axis, variant=variant, exclusive=exclusive, **knobs)
    f = {"cumsum": np.cumsum, "cumprod": np.cumprod,
         "cummin": np.minimum.accumulate, "cummax": np.maximum.accumulate}[op]
    want = f(a, axis=0 if axis is None else axis)
    if op in ("cumsum", "cumprod"):
        want = f(a, axis=axis, dtype=got.dtype)
    if exclusive:
        w = np.moveaxis(want, 0 if axis is None else axis, -1)
        ex = np.empty_like(w)
        ex[..., 0] = 0 if op == "cumsum" else 1
        ex[..., 1:] = w[..., :-1]
        want = np.moveaxis(ex, -1, 0 if axis is None else axis)
    if not np.array_equal(np.asarray(got), np.asarray(want)):
        raise AssertionError("%s %s %s %s axis=%s: %r != %r"
                             % (op, dt, variant, knobs, axis, got, want))


def child(job):
    sys.path.insert(0, ROOT)
    import gpured

    if job["kind"] == "races":
        n = 0
        for op in OPS:
            for variant, knobs, axis in CONFIGS:
                if variant not in gpured.variants(op, job["dtype"]):
                    continue
                run_case(gpured, job["dtype"], op, variant, knobs, axis,
                         exclusive=op in ("cumsum", "cumprod") and n % 3 == 0)
                n += 1
        if job["dtype"] in ("float32", "int32"):
            # auto's full GPU tile (Oclgrind is a GPU to gpured): 256 x 16
            # four-byte elements on its 32 KiB of local memory, three tiles
            a = (np.arange(9000) % 3).astype(job["dtype"])
            for rd in (job["dtype"], None):
                got = gpured.cumsum(a, dtype=rd)
                assert np.array_equal(got, np.cumsum(a, dtype=got.dtype)), rd
                n += 1
        print("  races %-8s %d scans checked" % (job["dtype"], n), flush=True)
    elif job["variant"] in gpured.variants(job["op"], job["dtype"]):
        run_case(gpured, job["dtype"], job["op"], job["variant"], job["knobs"],
                 job["axis"])
    return 0


def jobs():
    out = [{"kind": "races", "dtype": dt} for dt in RACE_DTYPES]
    for dt in UNINIT_DTYPES:
        for variant, knobs, axis in CONFIGS[1:]:
            out.append({"kind": "uninit", "dtype": dt, "op": "cumsum",
                        "variant": variant, "knobs": knobs, "axis": axis})
    return out


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "scan check")
