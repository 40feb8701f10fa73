"""Run the float16/bfloat16 load paths under Oclgrind and fail on any
report (data races, invalid or out-of-bounds accesses, uninitialised
values), checking each result against NumPy as well: the reduce kernels'
native reads (kernels/common.cl GR_ELT: vload_half(N) and the bfloat16
bits, vector loads and scalar tails, rows and adjacent columns) and the
casting copy kernel both ways (kernels/copy.cl GR_S_HALF / GR_D_HALF:
vstore_half_rte, bfloat16 rounding to nearest even), and the scan
kernels' half loads and stores (kernels/scan.cl GR_SELT / GR_SRELT).

    python3 tests/oclgrind_half.py                # parent: runs the jobs
    python3 tests/oclgrind_half.py --child JOB    # what runs in oclgrind

Small: a handful of kernels per dtype (each build is slow under Oclgrind).
"""
import os
import sys

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (function, variant, knobs, axis)
CONFIGS = [
    ("sum", "vector", {"wg_size": 8, "vw": 4}, None),
    ("argmax", "chunked", {"wg_size": 4, "vw": 4, "groups": 2}, None),
    ("max", "segment_per_item", {"wg_size": 4, "vw": 4}, 0),  # columns
    ("mean", "auto", {}, 1),                                   # rows
    # aligned 16-byte loads from a view 203 halves in: the head apart
    # (kernels/common.cl GR_HF; the sum above folds pairs)
    ("max", "vector", {"wg_size": 8, "vw": 8}, "from row 1"),
    ("argmax", "vector", {"wg_size": 8, "vw": 4}, "from row 1"),
]


def run(gpured, dt, job):
    import ml_dtypes
    t = np.dtype(np.float16 if dt == "float16" else ml_dtypes.bfloat16)
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((5, 203)) * 3).astype(np.float32).astype(t)
    d = gpured.to_device(a)
    a64 = a.astype(np.float64)
    n = 0
    if job["kind"] == "races":
        todo = CONFIGS
    else:
        todo = [CONFIGS[job["config"]]]
    for fname, variant, knobs, axis in todo:
        x, x64 = (d[1:], a64[1:]) if axis == "from row 1" else (d, a64)
        axis = None if axis == "from row 1" else axis
        got = np.asarray(getattr(gpured, fname)(x, axis=axis, variant=variant,
                                                **knobs).get())
        want = np.asarray(getattr(np, fname)(x64, axis=axis))
        if fname[:3] != "arg":
            want = want.astype(t)
        if not np.array_equal(got, want):
            raise AssertionError("%s %s %s: %r != %r" % (fname, dt, variant,
                                                         got, want))
        n += 1
    if job["kind"] == "races":
        # the scan kernels' half loads and stores (kernels/scan.cl GR_SELT /
        # GR_SRELT): rows of 203 in tiles of 8 x 8, vectors through the
        # warp-striped exchange and a scalar tail
        got = gpured.cumsum(d, axis=1, variant="blelloch", wg_size=8,
                            items=8).get()
        want = np.cumsum(a64, axis=1)
        wt = want.astype(t).astype(np.float64)
        gap = np.abs(got.astype(np.float64) - wt)
        ulp = 2.0 ** (-10 if dt == "float16" else -7)  # one, relative
        if got.dtype != t or (gap > np.abs(wt) * ulp + 1e-6).any():
            raise AssertionError("cumsum %s: %r != %r" % (dt, got, wt))
        n += 1
    # the copy kernel: widen, narrow from float32 (and float64), a view
    x = rng.standard_normal(301) * 100
    for src in (x.astype(np.float32), x):
        got = gpured.to_device(src).astype(t).get()
        if not np.array_equal(got.astype(np.float64),
                              src.astype(t).astype(np.float64)) and \
                src.dtype == np.float32:
            raise AssertionError("narrowing %s" % dt)
        n += 1
    back = d[:, ::-3].astype(np.float32).get()
    if not np.array_equal(back, a[:, ::-3].astype(np.float32)):
        raise AssertionError("widening %s" % dt)
    return n + 1


def child(job):
    sys.path.insert(0, ROOT)
    import gpured

    gpured.placement("current")  # the kernels, never the host path
    n = run(gpured, job["dtype"], job)
    print("  %s %-8s %d checks" % (job["kind"], job["dtype"], n), flush=True)
    return 0


def jobs():
    out = [{"kind": "races", "dtype": dt} for dt in ("float16", "bfloat16")]
    out += [{"kind": "uninit", "dtype": "float16", "config": 0},
            {"kind": "uninit", "dtype": "bfloat16", "config": 2}]
    return out


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "float16/bfloat16 check")
