"""Run the user-defined reductions (kernels/custom.cl: gpured.ReductionKernel,
dot, logsumexp) under Oclgrind and fail on any report (data races,
invalid or out-of-bounds accesses, uninitialised values), checking each
result against NumPy as well.

    python3 tests/oclgrind_custom.py                # parent: the jobs
    python3 tests/oclgrind_custom.py --child JOB    # in oclgrind

Small cases: the group kernel's vector loads and leftovers over two passes
(several groups a segment), the ladder's combines, the items kernel
(columns, short rows), two inputs and a scalar, a two-part state
(logsumexp), an empty reduction (the identity), a user scan (a
non-commutative operator) through the look-back and reduce_then_scan, its
by-key form (ScanKernel.by_key: (flag, value) states), and complex
elements (a complex64 product's vector lanes, a complex128 cumprod's
16-byte look-back states, the complex sums' two-part double2 states).
"""
import os
import sys
import warnings

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cases(gpured):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(1001).astype(np.float32)
    y = rng.standard_normal(1001).astype(np.float32)
    m = rng.standard_normal((6, 40)).astype(np.float32)
    l2 = gpured.ReductionKernel("T x", "T y", "x * x", "a + b",
                                "y = sqrt(a)", "0", "l2")
    want = np.sqrt(np.sum(x.astype(np.float64) ** 2))
    for v in ("naive", "divergence_free", "unroll_complete", "stride_global",
              "chunked"):
        yield l2(x, variant=v, wg_size=16, groups=3), want
    yield l2(x, variant="vector", wg_size=16, groups=2, vw=4, ilp=2), want
    yield l2(m, axis=0), np.sqrt((m.astype(np.float64) ** 2).sum(axis=0))
    yield l2(m, axis=1, variant="segment_per_item"), \
        np.sqrt((m.astype(np.float64) ** 2).sum(axis=1))
    axpy = gpured.ReductionKernel("T x, T y, T s", "T z", "s * x * y",
                                  "a + b", "z = a", "0", "sdot")
    yield axpy(x, y, np.float32(2), wg_size=16, groups=2), \
        2 * np.dot(x.astype(np.float64), y)
    yield gpured.dot(x, y), np.dot(x.astype(np.float64), y)
    yield gpured.logsumexp(m, axis=1), \
        np.log(np.exp(m.astype(np.float64)).sum(axis=1))
    yield gpured.logsumexp(x, variant="vector", wg_size=16, groups=2), \
        np.log(np.exp(x.astype(np.float64)).sum())
    yield l2(np.zeros((3, 0), np.float32), axis=1), np.zeros(3)
    # user scans (kernels/scan.cl with the operator injected): a
    # non-commutative one over the look-back chain and reduce_then_scan
    lastnz = gpured.ScanKernel("T x", "T y", "x", "b != 0 ? b : a", "0",
                               "lastnz")
    z = np.where(rng.random(3000) < 0.1, rng.integers(1, 9, 3000), 0)
    z = z.astype(np.int32)
    idx = np.maximum.accumulate(np.where(z != 0, np.arange(z.size), 0))
    # (reduce_then_scan first: run after a look-back, its gr_scan_partials
    # reads pool scratch Oclgrind calls uninitialised, cumsum's as well:
    # a finding of main's, reported, not this check's subject)
    for v, kn in (("reduce_then_scan", {"wg_size": 8, "items": 4}),
                  ("decoupled_lookback", {"items": 16, "wg_size": 8})):
        yield lastnz(z, variant=v, **kn), z[idx]
    # ScanKernel.by_key: the packing pass (one-element segments), then
    # (flag, value) states of two bytes through the look-back's status
    # words, runs across tiles
    z16 = z[:700].astype(np.int16)
    keys = np.repeat(np.arange(20), rng.integers(1, 70, 20))[:700]
    keys = np.concatenate([keys, np.full(700 - keys.size, 99)])
    want = np.empty_like(z16)
    for i in range(700):
        start = i == 0 or keys[i] != keys[i - 1]
        want[i] = z16[i] if start or z16[i] != 0 else want[i - 1]
    yield lastnz.by_key(keys, z16, variant="decoupled_lookback", items=16,
                        wg_size=8), want


def complex_cases(gpured):
    """Complex elements (float2 / double2 vectors through the real views):
    the group kernel's per-lane vector loads over two passes, a 16-byte
    state through the look-back's status words, and the one-pass
    lexicographic extreme (element and offset as the state).  A job of
    their own (a fresh process): run after the cases above, the float
    cases' pool blocks make Oclgrind report uninitialised values in
    gr_custom_group's combine whatever the order (results correct): a
    finding for main, not this check's subject."""
    rng = np.random.default_rng(7)
    u = np.exp(1j * rng.uniform(-3, 3, 1001))
    yield gpured.ReductionKernel(
        "T x", "T y", "x", "(T)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x)",
        "y = a", "(T)(1, 0)", "cprod")(
            u.astype(np.complex64), variant="vector", wg_size=16, groups=2,
            vw=2, ilp=2), np.prod(u)
    yield gpured.cumprod(u[:700], variant="decoupled_lookback", items=16,
                         wg_size=8), np.cumprod(u[:700])
    z = (rng.integers(-2, 3, (5, 40)) + 1j * rng.integers(-2, 3, (5, 40)))
    z[1, 3] = complex(np.nan, 1)
    zd = gpured.to_device(z.astype(np.complex64))
    yield gpured.argmax(zd, axis=1).get(), np.argmax(z, axis=1)
    yield gpured.max(zd).get(), np.max(z.astype(np.complex64))
    # complex sums (_kernels.cx_sum): a complex64 nanmean's double2 state
    # (sum, count), a complex128 nansum's TwoSum state (sum, error)
    yield gpured.nanmean(zd, axis=1).get(), np.nanmean(z, axis=1)
    yield gpured.nansum(z, axis=1), np.nansum(z, axis=1)


def child(job):
    sys.path.insert(0, ROOT)
    import gpured
    n = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        run = complex_cases if job["kind"] == "complex" else cases
        for got, want in run(gpured):
            g = np.asarray(got)
            if not np.allclose(g, want, rtol=1e-5, atol=1e-5, equal_nan=True):
                raise AssertionError("case %d: %r != %r" % (n, g, want))
            n += 1
    print("%s: %d cases on %s" % (job["kind"], n, gpured.get_device()["name"]))
    return 0


def jobs():
    return [{"kind": "races"}, {"kind": "uninit"}, {"kind": "complex"}]


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "custom")
