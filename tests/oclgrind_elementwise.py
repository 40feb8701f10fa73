"""Run the elementwise kernels (kernels/elementwise.cl) under Oclgrind and
fail on any report (invalid or out-of-bounds accesses, uninitialised
values), checking each result against NumPy as well.

    python3 tests/oclgrind_elementwise.py                # parent: the jobs
    python3 tests/oclgrind_elementwise.py --child JOB    # in oclgrind

The cases cover each way an operand is read (contiguous, strided through
merged dimensions, one element broadcast, a scalar by value), offsets and
negative strides of views, broadcasting on both sides, writes into a
strided `out` (in place), where's three inputs, a mixed int64/uint64
comparison, NumPy's integer floor division edges, take (the gather of
gpured.aggregate: indices into an offset table; take_sqdev, var's squared
deviations from the gathered mean) and the grid-stride loop
(several result elements a work-item, the last pass partial: the knobs
wg_size / items of csrc/plan_elementwise.c).
"""
import os
import sys
import warnings

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cases(gpured):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((7,)).astype(np.float32)
    i = rng.integers(-9, 9, (5, 7)).astype(np.int32)
    da, db, di = (gpured.to_device(x) for x in (a, b, i))
    yield da + 1.5, a + np.float32(1.5)                       # contig, value
    yield da[1:, ::-2] * db[::-2], a[1:, ::-2] * b[::-2]      # strided views
    yield da.T - db[:, None], a.T - b[:, None]                # broadcast
    yield 2 - da[2, 3], 2 - a[2, 3]                           # one element
    yield gpured.where(da > 0, da, di), np.where(a > 0, a, i)
    yield di // (di[::-1] % 4), i // (i[::-1] % 4)
    big = np.array([-1, 0, 2**62, -2**62], np.int64)
    ub = np.array([2**63, 0, 2**62, 3], np.uint64)
    yield gpured.to_device(big) < gpured.to_device(ub), big < ub
    o = gpured.to_device(a.copy())
    v = o[::2, 1:]
    v += db[1:]
    w = a.copy()
    w[::2, 1:] += b[1:]
    yield o, w
    # take (gpured.aggregate's gather): int32 indices into an offset table
    tab = db[2:]
    idx = rng.integers(0, 5, 11).astype(np.int32)
    out = gpured.empty(11, np.float32)
    gpured._core.elementwise("take", (gpured.to_device(idx), tab),
                             (np.dtype(np.int64), np.dtype(np.float32),
                              np.dtype(np.float32)), out)
    yield out, b[2:][idx]
    # take_sqdev (aggregate var's second pass): (x - table[idx])**2
    x = rng.standard_normal(11).astype(np.float32)
    out = gpured.empty(11, np.float32)
    gpured._core.elementwise("take_sqdev",
                             (gpured.to_device(idx), tab, gpured.to_device(x)),
                             (np.dtype(np.int64),) + (np.dtype(np.float32),) * 3,
                             out)
    yield out, (x - b[2:][idx]) ** 2
    f4 = np.dtype(np.float32)
    for x, want in ((da, a), (da[::-1, ::2], a[::-1, ::2])):
        out = gpured.empty(want.shape, f4)   # 35 / 20 elements, 8 x 3 a pass
        gpured._core.elementwise("add", (x, np.asarray(1, f4)), (f4,) * 3,
                                 out, 8, 3)
        yield out, want + np.float32(1)


def child(job):
    sys.path.insert(0, ROOT)
    import gpured
    n = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for got, want in cases(gpured):
            g = got.get()
            ok = (np.allclose(g, want, rtol=1e-6) if g.dtype.kind == "f"
                  else np.array_equal(g, want))
            if not ok or g.dtype != np.asarray(want).dtype:
                raise AssertionError("case %d: %r != %r" % (n, g, want))
            n += 1
    print("%s: %d cases on %s" % (job["kind"], n, gpured.get_device()["name"]))
    return 0


def jobs():
    return [{"kind": "races"}, {"kind": "uninit"}]


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "elementwise")
