"""where= on var, std, nanvar, nanstd against NumPy: one pass, the mask
read beside the elements (kernels/reduce.cl GR_WSEL: a masked-out element
reads as NaN, skipped and not counted, as nanvar skips NaN; var/std count
a kept NaN as +inf, so its slice's result is NaN, as NumPy's), each
slice's count of kept elements carried beside the states, finished over
max(n - ddof, 0) (var) or NaN where n - ddof <= 0 (nanvar).

Both placements (host path, device), float32/float64/int32/bool, every
axis form, keepdims, ddof, strided and broadcast masks, NaN and inf kept
and masked out (a masked-out inf must not touch the result, nor be the
kernels' shift), all-masked slices with NumPy's warning, accuracy far
from zero with the first elements masked out, every variant, streamed
pieces, device Arrays with device masks, out= and dtype=."""
import warnings

import numpy as np
import pytest

import gpured
from test_nan import check, placed
from test_var import data, fp64_ok, run, tol, want_of

FUNCS = ["var", "std", "nanvar", "nanstd"]
CASES = [((7,), None), ((1021,), None), ((65537,), None), ((5, 7, 3), 0),
         ((5, 7, 3), -1), ((5, 7, 3), (0, 2)), ((300, 129), 1),
         ((300, 129), 0), ((3, 40000), 1)]


def mask_of(shape, seed=0, p=0.7):
    m = np.random.default_rng(seed).random(shape) < p
    m.flat[0] = False  # the kernels' shift must look past a masked-out first
    return m


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", FUNCS)
def test_where_matches_numpy(func, dtype, mode):
    if not fp64_ok(dtype):
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")
    with placed(mode):
        for shape, axis in CASES:
            a = data(dtype, shape, seed=int(np.prod(shape)) % 11, nan_frac=0.1)
            m = mask_of(shape, seed=len(shape))
            for kw in ({}, {"keepdims": True, "ddof": 1}):
                want = want_of(func, a, axis=axis, where=m, **kw)
                got = run(func, a, axis=axis, where=m, **kw)
                what = "%s(%s %s, axis=%s, %s) %s" % (func, a.dtype, shape, axis, kw, mode)
                check(got, want, tol(want), what)


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_nan_and_inf_kept_and_masked(mode):
    # rows: a kept NaN (var: nan, nanvar: skipped), a masked-out NaN, a
    # masked-out inf first (not the shift), a kept inf (nan), all masked
    # (nan), one kept (var 0, ddof=1: nan), two kept
    a = np.tile(np.arange(40, dtype=np.float64) + 100.0, (7, 1))
    m = np.ones_like(a, dtype=bool)
    a[0, 3] = np.nan
    a[1, 5], m[1, 5] = np.nan, False
    a[2, 0], m[2, 0] = np.inf, False
    a[2, 1], m[2, 1] = -np.inf, False
    a[3, 7] = np.inf
    m[4] = False
    m[5] = False
    m[5, 9] = True
    m[6] = False
    m[6, [2, 30]] = True
    with placed(mode):
        for dtype in (np.float32, np.float64):
            if not fp64_ok(dtype):
                continue
            x = a.astype(dtype)
            for func in FUNCS:
                for ddof in (0, 1, 3):
                    want = want_of(func, x, axis=1, where=m, ddof=ddof)
                    got = run(func, x, axis=1, where=m, ddof=ddof)
                    check(got, want, tol(want), "%s %s ddof=%d" % (func, x.dtype, ddof))
                    # and as columns (the items kernel's vector walk)
                    want = want_of(func, x.T.copy(), axis=0, where=m.T.copy(), ddof=ddof)
                    got = run(func, x.T.copy(), axis=0, where=m.T.copy(), ddof=ddof)
                    check(got, want, tol(want), "%s %s cols ddof=%d" % (func, x.dtype, ddof))


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_degrees_of_freedom_warning(mode):
    a = data(np.float32, (6, 50), seed=3)
    m = np.ones(a.shape, bool)
    m[2] = False
    m[4, 1:] = False
    with placed(mode):
        for func in FUNCS:
            with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
                got = getattr(gpured, func)(a, axis=1, where=m, ddof=1)
            want = want_of(func, a, axis=1, where=m, ddof=1)
            check(got, want, tol(want), func)
            assert np.isnan(np.asarray(got)[2]) and np.isnan(np.asarray(got)[4])
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no slice at n - ddof <= 0
                getattr(gpured, func)(a, axis=1, where=m | (np.arange(6) % 2 == 0)[:, None]
                                      | (np.arange(6) == 3)[:, None] | (np.arange(6) == 1)[:, None]
                                      | (np.arange(6) == 5)[:, None], ddof=1)
        # var with ddof past the count: NumPy's inf (nanvar: nan)
        m2 = np.zeros(a.shape, bool)
        m2[:, :3] = True
        for func in FUNCS:
            want = want_of(func, a, axis=1, where=m2, ddof=5)
            got = run(func, a, axis=1, where=m2, ddof=5)
            check(got, want, tol(want), func + " ddof past n")


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_accurate_far_from_zero(mode):
    # values ~1e4 with spread 1, the first elements masked out and huge:
    # the shift is the first kept element, so every digit stays
    rng = np.random.default_rng(11)
    a = (1e4 + rng.standard_normal(200003)).astype(np.float32)
    a[:5] = 3e7
    m = np.ones(a.shape, bool)
    m[:5] = False
    exact = float(np.var(a[5:].astype(np.longdouble)))
    with placed(mode):
        got = float(gpured.var(a, where=m))
        assert abs(got - exact) <= 1e-5 * exact, (got, exact)
        b = a[:401 * 498].reshape(401, 498)
        mb = m[:401 * 498].reshape(401, 498).copy()
        mb[:4] = False
        b[:4] = 3e7
        want = np.var(b.astype(np.longdouble), axis=0, where=mb).astype(np.float64)
        got = np.asarray(gpured.var(b, axis=0, where=mb), np.float64)
        assert np.max(np.abs(got - want) / want) < 1e-5


def test_layouts_and_broadcast_masks():
    a = data(np.float32, (40, 66), seed=4, nan_frac=0.1)
    m = mask_of((40, 66), seed=4)
    with placed("current"):
        for func in FUNCS:
            for x, w, axis in ((a[::3, ::2], m[::3, ::2], 1), (a.T, m.T, 0),
                               (a[:, ::-1], m[:, ::-1], 1), (a, m[0], 0),
                               (a, m[:, :1], 1), (a, False, None), (a, True, 1),
                               (np.asfortranarray(a), m, 1)):
                want = want_of(func, x, axis=axis, where=w)
                got = run(func, x, axis=axis, where=w)
                check(got, want, tol(want), "%s axis=%s" % (func, axis))


def test_every_variant():
    with placed("current"):
        for func in ("var", "nanstd"):
            for variant in gpured.variants(func, np.float32):
                for shape, axis in (((65537,), None), ((300, 129), 1), ((300, 129), 0)):
                    a = data(np.float32, shape, seed=5, nan_frac=0.1)
                    m = mask_of(shape, seed=6)
                    want = want_of(func, a, axis=axis, where=m)
                    got = run(func, a, axis=axis, where=m, variant=variant)
                    check(got, want, tol(want), "%s %s axis=%s %s" % (func, shape, axis, variant))


def test_streamed_pieces():
    # one long slice in pieces: the host picks the shift through the mask
    old = gpured.set_staging(chunk_bytes=1 << 16, buffers=2, min_bytes=0, force=True)
    try:
        a = data(np.float32, (300001,), seed=9, center=5e3)
        a[:4] = np.inf
        m = mask_of(a.shape, seed=9)
        m[:4] = False
        with placed("current"):
            for func in FUNCS:
                want = want_of(func, a, where=m, ddof=1)
                check(run(func, a, where=m, ddof=1), want, tol(want), func + " pieces")
    finally:
        gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes",
                                                  "force", "threads")})


def test_device_arrays_out_and_dtype():
    a = data(np.float32, (300, 129), seed=2, nan_frac=0.1)
    m = mask_of(a.shape, seed=2)
    d, dm = gpured.to_device(a), gpured.to_device(m)
    for func in FUNCS:
        for axis in (None, 0, 1):
            want = want_of(func, a, axis=axis, where=m)
            for w in (dm, m):
                got = run(func, d, axis=axis, where=w)
                assert isinstance(got, gpured.Array), func
                check(got.get(), want, tol(want), "device %s axis=%s" % (func, axis))
        out = np.empty(129, np.float32)
        r = run(func, a, axis=0, where=m, out=out)
        assert r is out
        want = want_of(func, a, axis=0, where=m)
        check(out, want, tol(want), func + " out=")
        if fp64_ok(np.float64):
            i = data(np.int32, (300, 129), seed=3)
            want = want_of(func, i, axis=1, where=m, dtype=np.float64)
            got = run(func, i, axis=1, where=m, dtype=np.float64)
            check(got, want, tol(want), func + " int dtype=")


def test_mask_errors():
    a = data(np.float32, (10, 20))
    with pytest.raises(TypeError, match="Cannot cast"):
        gpured.var(a, where=np.ones((10, 20), np.int8))
    with pytest.raises(ValueError):
        gpured.nanstd(a, axis=1, where=np.ones((3, 20), bool))
