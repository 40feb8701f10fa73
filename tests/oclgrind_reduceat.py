"""Run every reduceat kernel configuration (kernels/segments.cl) under
Oclgrind and fail on any report (data races, barrier divergence, invalid or
out-of-bounds accesses, uninitialised values), checking each result against
NumPy as well.

    python3 tests/oclgrind_reduceat.py                # parent: runs the jobs
    python3 tests/oclgrind_reduceat.py --child JOB    # what runs in oclgrind

Modelled on tests/oclgrind_check.py (same notes: -cl-opt-disable, and the
uninitialised-value check one case per process).  The offsets mix long,
one-element, repeated and decreasing segments, with segment starts at
every alignment, so the group kernel's scalar heads, aligned vector bodies
and tails, its split segments (groups, merged by reduce.cl's second pass),
the items kernel's runs of results (chunk) and vector walks, and the
device-offset check all run.
"""
import os
import sys

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (variant, knobs, axis, device offsets)
CONFIGS = [
    ["auto", {}, 0, False],
    ["segment_per_group", {"wg_size": 8, "vw": 4}, 1, False],
    ["segment_per_group", {"wg_size": 16, "vw": 2, "groups": 3}, 1, True],
    ["segment_per_group", {"wg_size": 4, "vw": 1, "groups": 2}, 1, False],
    ["segment_per_item", {"wg_size": 8}, 1, True],
    ["segment_per_item", {"wg_size": 4, "vw": 4}, 1, False],
    ["segment_per_item", {"wg_size": 8}, 0, False],       # columns (inner > 1)
]
OPS = ["add", "multiply", "minimum", "maximum", "logical_and", "logical_or"]
RACE_DTYPES = ["bool", "int8", "uint64", "float32", "float64"]
UNINIT_DTYPES = ["int8", "float32", "float64"]
IDX = [0, 3, 70, 71, 71, 40, 42, 130, 133, 250]


def run_case(gpured, dt, op, variant, knobs, axis, dev_idx):
    rng = np.random.default_rng(1)
    base = rng.integers(0, 3, size=(3, 260)).astype(dt)
    if op == "multiply":
        base = np.where(base == 2, -1, 1).astype(dt) if dt not in ("bool", "uint64") \
            else (base > 0).astype(dt)
    a = base if axis == 1 else np.ascontiguousarray(base.T[:, :3])
    idx = IDX if axis == 1 else [0, 5, 5, 2, 100, 259]
    ix = gpured.to_device(np.asarray(idx, np.int32)) if dev_idx else idx
    got = gpured.reduceat(a, ix, axis=axis, op=op, variant=variant, **knobs)
    want = getattr(np, op).reduceat(a, idx, axis=axis)
    if not np.array_equal(np.asarray(got), want):
        raise AssertionError("%s %s %s %s axis=%s: %r != %r"
                             % (op, dt, variant, knobs, axis, got, want))


def child(job):
    sys.path.insert(0, ROOT)
    import gpured

    gpured.placement("current")  # the kernels, never the host path
    if job["kind"] == "races":
        n = 0
        for op in OPS:
            for variant, knobs, axis, dev_idx in CONFIGS:
                run_case(gpured, job["dtype"], op, variant, knobs, axis, dev_idx)
                n += 1
        # a device offset out of bounds: the check kernel's error
        try:
            gpured.reduceat(np.zeros(10, job["dtype"]),
                            gpured.to_device(np.array([0, 4, 10])))
        except IndexError:
            n += 1
        else:
            raise AssertionError("no IndexError for a device offset of 10")
        print("  races %-8s %d reduceats checked" % (job["dtype"], n), flush=True)
    else:
        variant, knobs, axis, dev_idx = CONFIGS[job["config"]]
        run_case(gpured, job["dtype"], job["op"], variant, knobs, axis, dev_idx)
    return 0


def jobs():
    out = [{"kind": "races", "dtype": dt} for dt in RACE_DTYPES]
    for dt in UNINIT_DTYPES:
        for c in range(1, len(CONFIGS)):
            out.append({"kind": "uninit", "dtype": dt,
                        "op": "add" if c % 2 else "maximum", "config": c})
    return out


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "reduceat check")
