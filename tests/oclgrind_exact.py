"""Run the exact sums' kernels (kernels/exact.cl: each group's long
accumulator in local memory through 64-bit atomics, the expansions' tree,
the rounding pass) under Oclgrind and fail on any report (data races,
barrier divergence, invalid accesses, uninitialised values), checking each
result against exact rational sums as well.

    python3 tests/oclgrind_exact.py                # parent: runs the jobs
    python3 tests/oclgrind_exact.py --child JOB    # what runs in oclgrind

The cases: one long segment over several groups (loads in flight and the
scalar tail), rows and columns (strided elements), nansum/nanmean, mean's
division, initial=, values that go straight to the accumulator (huge,
infinite) and errors that leave the expansions (wide exponent ranges).
"""
import os
import sys
from fractions import Fraction

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (function, knobs, axis, kwargs)
CASES = [
    ("sum", {"wg_size": 8, "groups": 3, "items": 4}, None, {}),
    ("sum", {"wg_size": 4, "groups": 2, "items": 2}, 1, {}),
    ("sum", {"wg_size": 8, "groups": 1, "items": 8}, 0, {"initial": 2.5}),
    ("nansum", {"wg_size": 8, "groups": 2, "items": 4}, None, {}),
    ("mean", {"wg_size": 4, "groups": 2, "items": 4}, 1, {}),
    ("nanmean", {"wg_size": 8, "groups": 3, "items": 2}, 0, {}),
]


def data(dt, kind):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 53)) * 10.0 ** rng.integers(-30, 30, (7, 53))
    if kind == "nan":
        a[rng.random(a.shape) < 0.1] = np.nan
    if kind == "huge" and dt == "float64":
        a[1, 3], a[4, 7] = 1e305, -np.inf
    return a.astype(dt)


def want(fname, x, axis, kw):
    def one(v):
        v = np.asarray(v, np.float64).ravel()
        if fname.startswith("nan"):
            v = v[~np.isnan(v)]
        if not np.isfinite(v).all():
            return float(np.sum(v))
        s = sum((Fraction(float(e)) for e in v), Fraction(kw.get("initial", 0)))
        return float(s / v.size if fname.endswith("mean") else s)  # once
    if axis is None:
        return np.float64(one(x))
    return np.array([one(r) for r in np.moveaxis(x, axis, -1)])


def run(gpured, dt):
    n = 0
    for fname, knobs, axis, kw in CASES:
        for kind in ("plain", "nan", "huge"):
            a = data(dt, kind if kind != "nan" or fname.startswith("nan")
                     else "plain")
            got = np.asarray(gpured.asnumpy(getattr(gpured, fname)(
                gpured.to_device(a), axis=axis, exact=True, **knobs, **kw)))
            w = want(fname, a, axis, kw).astype(dt)
            # float32 results: fsum's double rounded again may differ by
            # one float32 ulp in a tie; float64: the same bits
            ok = (np.array_equal(got, w, equal_nan=True) if dt == "float64"
                  else np.allclose(got, w, rtol=2e-7, equal_nan=True))
            if not ok:
                raise AssertionError("%s %s %s axis=%s %s: %r != %r"
                                     % (fname, dt, knobs, axis, kind, got, w))
            n += 1
    return n


def child(job):
    sys.path.insert(0, ROOT)
    import gpured

    n = run(gpured, job["dtype"])
    print("  %s %-8s %d exact sums checked" % (job["kind"], job["dtype"], n),
          flush=True)
    return 0


def jobs():
    return [{"kind": k, "dtype": dt} for k in ("races", "uninit")
            for dt in ("float32", "float64")]


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "exact")
