"""Every plan the policy makes, as text: the before/after check of a
refactor (behaviour unchanged means the two dumps are identical).

    python benchmarks/plans_dump.py > /tmp/plans_before.txt
    ... change the code, rebuild ...
    python benchmarks/plans_dump.py > /tmp/plans_after.txt
    diff /tmp/plans_before.txt /tmp/plans_after.txt

Part 1 asks the pure planners (_core.plan_for, scan_plan_for,
bykey_plan_for) on synthetic devices (an H100, an H200, an AMD-like and an
Intel-like GPU, an old GPU, CPUs of 2 and 16 cores) over operators,
dtypes, layouts, every variant and a few knobs.  Part 2 asks explain() on
the current device (placement, copies, reduceat, by-key) for NumPy arrays
and device Arrays.  One line a plan; errors are lines too.
"""
import itertools
import json
import sys

import numpy as np

import gpured
from gpured import _core

DEVICES = {
    "H100": dict(name="NVIDIA H100", gpu=1, compute_units=132,
                 max_work_group_size=1024, nvidia_ptx=1, atomics64=1, fp64=1,
                 local_mem_size=48 << 10),
    "H200": dict(name="NVIDIA H200", gpu=1, compute_units=132,
                 max_work_group_size=1024, nvidia_ptx=1, atomics64=1, fp64=1,
                 local_mem_size=48 << 10, max_alloc_size=35 << 30),
    "AMD": dict(name="other GPU", gpu=1, compute_units=104,
                max_work_group_size=1024, subgroups=1, atomics64=1,
                local_mem_size=64 << 10),
    "INTEL_GPU": dict(name="Intel GPU", gpu=1, compute_units=96,
                      max_work_group_size=512, fp64=0, subgroups=1,
                      wg_collectives=1, local_mem_size=64 << 10),
    "OLD_GPU": dict(name="old GPU", gpu=1, compute_units=16,
                    max_work_group_size=256, fp64=1, atomics64=0,
                    local_mem_size=16 << 10),
    "CPU2": dict(name="CPU", gpu=0, compute_units=2, max_work_group_size=4096,
                 fp64=1, atomics64=1, local_mem_size=4 << 20),
    "CPU16": dict(name="CPU", gpu=0, compute_units=16,
                  max_work_group_size=4096, fp64=1, atomics64=1,
                  subgroups=1, wg_collectives=1, local_mem_size=256 << 10),
}

REDUCE_OPS = [("add", "float32", "float32"), ("add", "float64", "float64"),
              ("add", "int32", "int64"), ("add", "int8", "int64"),
              ("add", "float32", "float64"), ("multiply", "int64", "int64"),
              ("minimum", "float32", "float32"), ("maximum", "int32", "int32"),
              ("maximum", "uint8", "uint8"), ("argmin", "float64", "int64"),
              ("argmax", "float32", "int64"), ("all", "bool", "bool"),
              ("any", "float32", "bool")]
SCAN_OPS = [("add", "float32", "float32"), ("add", "float64", "float64"),
            ("add", "int32", "int64"), ("add", "int64", "int64"),
            ("multiply", "float32", "float32"), ("minimum", "float64", "float64"),
            ("maximum", "int32", "int32"), ("add", "uint8", "uint64")]
# (M, L, seg_stride, elem_stride): one row, rows, columns, strided
LAYOUTS = [(1, 1), (1, 100), (1, 4097), (1, 1 << 20), (1, 1 << 28),
           (1, (1 << 31) + 5), (3, 17), (1 << 20, 8), (1 << 24, 16),
           (1 << 20, 64), (100000, 200), (1 << 18, 511), (4096, 512),
           (4096, 4096), (64, 1 << 20), ("col", 4096, 4096),
           ("col", 65536, 16), ("col", 8, 1 << 20), ("col", 1000, 1000)]
KNOBS = [{}, {"wg_size": 64}, {"wg_size": 128, "groups": 3},
         {"items": 4}, {"ilp": 2}, {"vw": 4}]
SCAN_KNOBS = [{}, {"wg_size": 64}, {"items": 4}, {"groups": 7},
              {"ilp": 2}, {"spins": 0}]


def show(x):
    if isinstance(x, dict):
        return json.dumps(x, sort_keys=True, default=str)
    return repr(x)


def ask(tag, fn, *a, **kw):
    try:
        out = fn(*a, **kw)
    except Exception as e:  # the refusal is part of the behaviour
        out = "ERR %s: %s" % (type(e).__name__, e)
    print(tag, show(out))


def layout(lay):
    if lay[0] == "col":
        _, M, L = lay
        return M, L, 1, M
    M, L = lay
    return M, L, L, 1


def part_reduce():
    variants = [v for v in _core.variants("sum", "float32", None)] if False else [
        None, "naive", "divergence_free", "unroll_last", "unroll_complete",
        "stride_global", "stride_local", "vector", "workgroup", "subgroup",
        "atomic", "chunked", "segment_per_item", "segment_per_warp"]
    for (dn, caps), (op, dt, rd), lay in itertools.product(
            DEVICES.items(), REDUCE_OPS, LAYOUTS):
        M, L, ss, es = layout(lay)
        for v in variants:
            for kn in (KNOBS if v is None else KNOBS[:2]):
                ask("reduce %s %s %s %s %s %s %s" % (dn, op, dt, rd, lay, v,
                                                     show(kn)),
                    _core.plan_for, caps, op, dt, rd, M, L, ss, es,
                    variant=v, **kn)


def part_scan():
    variants = [None, "naive", "blelloch", "workgroup", "subgroup",
                "reduce_then_scan", "decoupled_lookback", "row_per_item"]
    for (dn, caps), (op, dt, rd), lay in itertools.product(
            DEVICES.items(), SCAN_OPS, LAYOUTS):
        M, L, ss, es = layout(lay)
        for v in variants:
            for kn in (SCAN_KNOBS if v is None else SCAN_KNOBS[:2]):
                ask("scan %s %s %s %s %s %s %s" % (dn, op, dt, rd, lay, v,
                                                   show(kn)),
                    _core.scan_plan_for, caps, op, dt, rd, M, L, ss, es,
                    variant=v, **kn)


def part_bykey():
    variants = [None, "atomic", "warp_aggregated", "local_hash",
                "sorted_segments", "private_bins", "lookback", "fixed_point"]
    funcs = [("sum_by_key", "sum"), ("reduce_by_key", "sum"),
             ("reduce_by_key", "max"), ("reduce_by_key", "min"),
             ("scan_by_key", "sum"), ("sum_by_key", "count")]
    facts = [(1000, 16, 100, 0), (10 << 20, 1 << 20, 1 << 20, 0),
             (10 << 20, 1 << 20, 1 << 20, 500000), (16 << 20, 16, 16 << 20, 8 << 20),
             (16 << 20, 1024, 16 << 20, 8 << 20), (16 << 20, 1 << 18, 1 << 18, 0),
             (1 << 31, 1 << 20, 1 << 20, 7)]
    types = [("int64", "float64"), ("int32", "float32"), ("int32", "int32"),
             ("uint32", "int64"), ("int64", "uint8")]
    for (dn, caps), (fn, op), (kd, vd), (n, nk, heads, desc) in \
            itertools.product(DEVICES.items(), funcs, types, facts):
        for v in variants:
            for det in (False, True):
                for srt in (-1, 0, 1):
                    for sm in ((0, 9) if v is None else (0,)):
                        ask("bykey %s %s %s %s %s %s %s %s %s %s" % (
                            dn, fn, op, kd, vd, (n, nk, heads, desc), v, det,
                            srt, sm),
                            _core.bykey_plan_for, caps, fn, kd, vd, op, n,
                            nk, heads, desc, variant=v, deterministic=det,
                            sorted=srt, sm=sm)
        for kn in ({"wg_size": 64}, {"items": 8}):
            ask("bykey %s %s %s %s %s %s %s" % (dn, fn, op, kd, vd,
                                                (n, nk, heads, desc), show(kn)),
                _core.bykey_plan_for, caps, fn, kd, vd, op, n, nk, heads,
                desc, **kn)


def part_explain():
    rng = np.random.default_rng(0)
    shapes = [(0,), (1,), (1000,), (1 << 16,), (1 << 20,), (3, 5, 7),
              (1000, 16), (16, 1000), (257, 513)]
    ops = ["sum", "prod", "min", "max", "argmin", "argmax", "mean", "var",
           "std", "nansum", "nanmean", "nanmax", "ptp", "count_nonzero",
           "all", "any"]
    for shape, dt in itertools.product(shapes, ["float32", "float64",
                                               "int32", "uint8"]):
        a = (rng.random(shape) * 100).astype(dt)
        arrays = [("np", a)]
        if a.size:
            arrays.append(("dev", gpured.to_device(a)))
            arrays.append(("np_T", a.T))
        for (kind, x), op in itertools.product(arrays, ops):
            for ax in ([None] + list(range(x.ndim))):
                ask("explain %s %s %s %s %s" % (op, kind, shape, dt, ax),
                    gpured.explain, op, x, axis=ax)
        for (kind, x), op in itertools.product(arrays, ["cumsum", "cumprod",
                                                        "cummax", "nancumsum"]):
            for ax in ([None] + list(range(x.ndim))):
                ask("explain %s %s %s %s %s" % (op, kind, shape, dt, ax),
                    gpured.explain, op, x, axis=ax)
        if a.ndim == 1 and a.size > 1:
            for kind, x in arrays:
                idx = np.sort(rng.integers(0, a.size, 7))
                ask("explain reduceat %s %s %s" % (kind, shape, dt),
                    gpured.explain, "reduceat", x, indices=idx)
    for n, nk in ((1000, 10), (1 << 20, 1 << 10), (1 << 20, 1 << 16)):
        keys = rng.integers(0, nk, n).astype(np.int64)
        vals = rng.random(n)
        for fn in ("sum_by_key", "reduce_by_key", "scan_by_key"):
            for k in (keys, np.sort(keys)):
                for det in (False, True):
                    ask("explain_by_key %s %s %s %s" % (fn, n, nk, det),
                        gpured.explain_by_key, fn, k, vals,
                        deterministic=det)


def main():
    parts = sys.argv[1:] or ["reduce", "scan", "bykey", "explain"]
    for p in parts:
        globals()["part_" + p]()


if __name__ == "__main__":
    main()
