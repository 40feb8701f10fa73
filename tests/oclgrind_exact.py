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
Then sum_by_key(exact=True)'s kernels (kernels/bykey.cl, "fixed-point
sums", with float64's 48 windows a key): wide exponent ranges, NaN and
infinities, a key that never occurs.
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


def round_f32(fr):
    """A Fraction rounded once to float32 (the neighbours of its float64
    approximation compared exactly; no overflow in these cases)."""
    f = np.float32(float(fr))
    cands = [np.nextafter(f, np.float32(-np.inf)), f,
             np.nextafter(f, np.float32(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - fr),
                                     int(np.array(c).view(np.uint32)) % 2))


def run_bykey(gpured, dt):
    """sum_by_key(exact=True), kernels/bykey.cl "fixed-point sums": float64
    over many windows (exponents from 2^-1000 to 2^1000: 47 of them), NaN
    and infinities, keys that never occur; float32's four windows."""
    rng = np.random.default_rng(7)
    n, nk = 300, 6
    k = rng.integers(0, nk - 1, n)  # the last key never occurs
    lo, hi = (-1000, 1000) if dt == "float64" else (-120, 120)
    v = (rng.standard_normal(n) * 2.0 ** rng.integers(lo, hi, n)).astype(dt)
    v[k == 3] = 0.5
    v[np.flatnonzero(k == 2)[:2]] = [np.inf, np.nan]
    v[np.flatnonzero(k == 1)[0]] = -np.inf
    m = 0
    for kw in ({"wg_size": 8}, {"wg_size": 4, "deterministic": True}):
        kw["variant"] = "fixed_point"  # auto on CPU devices: the host
        got = np.asarray(gpured.asnumpy(gpured.sum_by_key(
            gpured.to_device(k), gpured.to_device(v), nk, exact=True, **kw)))
        want = np.zeros(nk, dt)
        for key in range(nk):
            x = v[k == key].astype(np.float64)
            if not np.isfinite(x).all():
                want[key] = np.sum(x)
                continue
            fr = sum((Fraction(float(e)) for e in x), Fraction(0))
            want[key] = float(fr) if dt == "float64" else round_f32(fr)
        u = np.uint64 if dt == "float64" else np.uint32
        if not (np.array_equal(got.view(u), want.view(u)) or
                np.array_equal(got, want, equal_nan=True)):
            raise AssertionError("sum_by_key exact %s %s: %r != %r"
                                 % (dt, kw, got, want))
        m += 1
    return m


def child(job):
    sys.path.insert(0, ROOT)
    import gpured

    if job.get("bykey"):
        n = run_bykey(gpured, job["dtype"])
        print("  %s %-8s %d exact sum_by_key calls checked"
              % (job["kind"], job["dtype"], n), flush=True)
        return 0
    n = run(gpured, job["dtype"])
    print("  %s %-8s %d exact sums checked" % (job["kind"], job["dtype"], n),
          flush=True)
    return 0


def jobs():
    return [{"kind": k, "dtype": dt, "bykey": bk}
            for bk in (False, True) for k in ("races", "uninit")
            for dt in ("float32", "float64")]


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "exact")
