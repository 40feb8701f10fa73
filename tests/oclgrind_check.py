"""Run every reduction kernel configuration under Oclgrind and fail on any
report (data races, barrier divergence, invalid or out-of-bounds accesses,
uninitialised values), checking each result against NumPy as well.

    python3 tests/oclgrind_check.py                # parent: runs the jobs
    python3 tests/oclgrind_check.py --child JOB    # what runs in oclgrind

Oclgrind simulates an OpenCL device instruction by instruction, so inputs
are small.  Two notes on running it:

* Kernels are built with -cl-opt-disable under Oclgrind: its interpreter
  does not know LLVM's `freeze` instruction, which the optimiser emits.
* Oclgrind 21.10's uninitialised-value plugin reports values as
  uninitialised in the second and later two-pass reductions of a process
  even when every scratch element was written (and even when the scratch
  buffer is cleared first), while the same call as the first of a process
  is clean and the results are right.  So the uninitialised-value check
  runs each case in a process of its own; the data-race, barrier and
  memory-access checks run over the whole matrix in one process per dtype.
"""
import os
import sys
import warnings

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (variant, knobs): every kernel and pass the plans can produce.
CONFIGS = [
    ["auto", {}],
    ["chunked", {"groups": 3}],                 # contiguous per work-item, 2 passes
    ["vector", {"wg_size": 64, "groups": 5}],   # coalesced vectors, 2 passes
    ["stride_local", {"wg_size": 32, "ilp": 3}],
    ["segment_per_item", {"groups": 4}],        # items kernel, 2 passes
    ["naive", {"wg_size": 64}],                 # interleaved combine
    ["divergence_free", {"wg_size": 128}],      # sequential combine, loop kept
    ["stride_global", {"wg_size": 32, "groups": 7}],
    ["atomic", {"wg_size": 64, "groups": 6}],   # compare-and-swap merges
    ["segment_per_item", {"vw": 4}],            # vector of adjacent columns
]
# ptp: max's state with the minimum as its auxiliary part (GR_PTP)
OPS = ["sum", "prod", "min", "max", "all", "any", "argmin", "argmax", "ptp"]
RACE_DTYPES = ["bool", "int8", "uint64", "float32", "float64"]
UNINIT_DTYPES = ["int8", "uint64", "float32", "float64"]
AXES = [None, 1, 0]   # full reduction, rows, columns of a (3, 1031) array


def run_case(gpured, dt, op, variant, knobs, axis):
    rng = np.random.default_rng(1)
    base = rng.integers(0, 3, size=(3, 1031)).astype(dt)
    a = base[0] if axis is None else base
    if op == "prod":
        a = a[..., :40]  # keep integer products from overflowing int8
    got = getattr(gpured, op)(a, axis=axis, variant=variant, **knobs)
    want = getattr(np, op)(a, axis=axis)
    if not np.array_equal(np.asarray(got), np.asarray(want)):
        raise AssertionError("%s %s %s %s axis=%s: %r != %r"
                             % (op, dt, variant, knobs, axis, got, want))


# nan* reductions (NaN skipped: the fold's identity; or replaced at load)
NAN_OPS = ["nansum", "nanmin", "nanmax", "nanargmin", "nanargmax", "nanmean"]
NAN_CONFIGS = [CONFIGS[0], CONFIGS[2], CONFIGS[4], CONFIGS[5], CONFIGS[8]]


def run_nan_case(gpured, op, variant, knobs, axis):
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 3, size=(3, 1031)).astype(np.float32)
    a[rng.random(a.shape) < 0.3] = np.nan
    a[1, :] = np.nan
    a[:, 0] = 1.0
    if "arg" in op:
        # nanarg*: an all-NaN slice raises (tested elsewhere)
        a[1, 7] = 2.0
        a[2] = np.where(np.isnan(a[2]), 1.5, a[2])
    a = a[0] if axis is None else a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices
        got = getattr(gpured, op)(a, axis=axis, variant=variant, **knobs)
        want = getattr(np, op)(a, axis=axis)
    if not np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True):
        raise AssertionError("%s %s %s axis=%s: %r != %r"
                             % (op, variant, knobs, axis, got, want))
    if "arg" in op:
        # a device array: the indices found are checked on the device
        # (reduce.cl gr_nanarg_check)
        got = getattr(gpured, op)(gpured.to_device(a), axis=axis, variant=variant,
                                  **knobs)
        if not np.array_equal(np.asarray(got), np.asarray(want)):
            raise AssertionError("%s device %s %s axis=%s: %r != %r"
                                 % (op, variant, knobs, axis, got, want))


# var/std: the two-part state (shifted sums) of GR_VAR, the shift read by
# the kernels, nanvar's count (fused: lane counts, the work-group's sum in
# local memory, counts beside the partial states); nanmean (GR_VAR 3) is
# in the nan job
VAR_OPS = ["var", "nanstd"]


def run_var_case(gpured, op, variant, knobs, axis):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((3, 1031)) + 100).astype(np.float32)
    if op.startswith("nan"):
        a[rng.random(a.shape) < 0.3] = np.nan
        a[:, :2] = np.nan  # shifts past leading NaNs
    a = a[0] if axis is None else a
    got = getattr(gpured, op)(a, axis=axis, variant=variant, **knobs)
    want = getattr(np, op)(a.astype(np.float64), axis=axis)
    if not np.allclose(np.asarray(got), want, rtol=1e-5, equal_nan=True):
        raise AssertionError("%s %s %s axis=%s: %r != %r"
                             % (op, variant, knobs, axis, got, want))


def child(job):
    sys.path.insert(0, ROOT)
    import gpured

    if job["kind"] in ("nan", "var"):
        # nanmean: the sum and its count in one pass (GR_VAR 3); var: the
        # two-part state
        ops, case, label = ((NAN_OPS, run_nan_case, "nan*   ") if job["kind"] == "nan"
                            else (VAR_OPS, run_var_case, "var/std"))
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices
        n = 0
        for op in ops:
            for variant, knobs in NAN_CONFIGS:
                if variant not in gpured.variants(op, "float32"):
                    continue
                for axis in AXES:
                    case(gpured, op, variant, knobs, axis)
                    n += 1
        print("  races %s %d reductions checked" % (label, n), flush=True)
    elif job["kind"] == "races":
        n = 0
        for op in OPS:
            if op == "ptp" and job["dtype"] == "bool":
                continue  # NumPy's ptp refuses booleans (tested elsewhere)
            for variant, knobs in CONFIGS:
                if variant not in gpured.variants(op, job["dtype"]):
                    continue  # e.g. atomic argmin: unavailable by design
                for axis in AXES:
                    run_case(gpured, job["dtype"], op, variant, knobs, axis)
                    n += 1
        print("  races %-8s %d reductions checked" % (job["dtype"], n), flush=True)
    elif job["variant"] in gpured.variants(job["op"], job["dtype"]):
        run_case(gpured, job["dtype"], job["op"], job["variant"], job["knobs"],
                 job["axis"])
    return 0


def jobs():
    out = [{"kind": "races", "dtype": dt} for dt in RACE_DTYPES]
    out.append({"kind": "nan"})
    out.append({"kind": "var"})
    for dt in UNINIT_DTYPES:
        for op in OPS:
            for variant, knobs in (CONFIGS[2], CONFIGS[4], CONFIGS[5], CONFIGS[8],
                                   CONFIGS[9]):
                out.append({"kind": "uninit", "dtype": dt, "op": op,
                            "variant": variant, "knobs": knobs,
                            "axis": 0 if variant == "segment_per_item" else None})
    return out


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "check")
