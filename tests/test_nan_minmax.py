"""nanmin, nanmax, nanargmin, nanargmax against NumPy: dtypes, axes,
keepdims/out/initial, every reduce variant, host and device operands, both
sides of placement (the host path and the device), and the all-NaN rules
(nanmin/nanmax: NaN with a RuntimeWarning; nanargmin/nanargmax: ValueError).

nanmin/nanmax are NumPy's fmin/fmax reductions: in the kernels NaN is the
fold's identity (kernels/common.cl GR_NANSKIP); nanargmin/nanargmax read NaN
as +inf/-inf, as NumPy's replace it (so np.nanargmin([nan, inf]) is 0).
"""
import warnings

import numpy as np
import pytest

import gpured
from test_nan import FLOATS, check, placed, skip_f64

MINMAX = ["nanmin", "nanmax"]
ARGS = ["nanargmin", "nanargmax"]
CASES = [((1,), None), ((7,), None), ((1021,), None), ((65537,), None),
         ((5, 7, 3), 0), ((5, 7, 3), -1), ((300, 129), 1), ((300, 129), 0)]
VARIANT_CASES = [((7,), None), ((65537,), None), ((300, 129), 1), ((300, 129), 0)]


def data(dtype, shape, func, seed=0, all_nan=True):
    """Normal values with 30% NaN, and infinities; rows/columns (or the
    whole array, for 1-d shapes of one element) of NaNs only, unless
    all_nan is False (nanarg* raise there)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return rng.integers(-100, 100, n).astype(dt).reshape(shape)
    a = (rng.standard_normal(n) * 10).astype(dt)
    a[rng.random(n) < 0.3] = np.nan
    a[rng.random(n) < 0.01] = np.inf
    a[rng.random(n) < 0.01] = -np.inf
    a = a.reshape(shape)
    if a.ndim == 2:
        a[3] = np.nan
        a[:, 2] = np.nan
        a[7] = np.where(rng.random(shape[1]) < 0.5, np.nan, np.inf)
        a[:, 5] = np.where(rng.random(shape[0]) < 0.5, np.nan, -np.inf)
        if not all_nan:
            a[3, 0] = 1.0
            a[0, 2] = -1.0
    if not all_nan and np.isnan(a).all():
        a.flat[-1] = 2.0
    return a


def numpy_result(f, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(a, **kw)


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", MINMAX + ARGS)
def test_matches_numpy(func, dtype, mode):
    skip_f64(dtype)
    g, f = getattr(gpured, func), getattr(np, func)
    with placed(mode):
        for shape, axis in CASES:
            a = data(dtype, shape, func, seed=len(shape), all_nan=func in MINMAX)
            for kw in ({}, {"keepdims": True}):
                want = numpy_result(f, a, axis=axis, **kw)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    got = g(a, axis=axis, **kw)
                check(got, want, 0.0, "%s(%s %s, axis=%s, %s) placement %s"
                      % (func, a.dtype, shape, axis, kw, mode))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", MINMAX + ARGS)
def test_every_variant(func, dtype):
    skip_f64(dtype)
    g, f = getattr(gpured, func), getattr(np, func)
    vs = gpured.variants(func, dtype)
    if np.dtype(dtype) == np.float64 and func in ("nanmin", "nanargmax"):
        vs = vs[:1] + vs[-2:]  # float64: the other two functions take every variant
    for variant in vs:
        for shape, axis in VARIANT_CASES:
            a = data(dtype, shape, func, seed=7, all_nan=func in MINMAX)
            check(g(a, axis=axis, variant=variant) if func in ARGS else
                  _quiet(g, a, axis=axis, variant=variant),
                  numpy_result(f, a, axis=axis), 0.0,
                  "%s(%s %s, axis=%s, variant=%r)" % (func, a.dtype, shape, axis, variant))


def _quiet(g, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return g(a, **kw)


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_all_nan_rules(mode):
    nan, inf = np.nan, np.inf
    with placed(mode):
        for dt in FLOATS:
            if np.dtype(dt) == np.float64 and not gpured.get_device()["fp64"]:
                continue
            for arr in ([nan] * 5, [inf, nan], [nan, inf], [nan, -inf, nan], [-inf, -inf],
                        [nan, 1.0, nan], [3.0]):
                a = np.array(arr, dt)
                allnan = np.isnan(a).all()
                for func in MINMAX:
                    what = "%s(%r) %s" % (func, arr, np.dtype(dt).name)
                    with warnings.catch_warnings(record=True) as w:
                        warnings.simplefilter("always")
                        got = getattr(gpured, func)(a)
                    check(got, numpy_result(getattr(np, func), a), 0.0, what)
                    assert [str(x.message) for x in w] == \
                        (["All-NaN slice encountered"] if allnan else []), what
                for func in ARGS:
                    what = "%s(%r) %s" % (func, arr, np.dtype(dt).name)
                    if allnan:
                        with pytest.raises(ValueError, match="All-NaN slice"):
                            getattr(gpured, func)(a)
                        with pytest.raises(ValueError, match="All-NaN slice"):
                            getattr(np, func)(a)
                    else:
                        check(getattr(gpured, func)(a), getattr(np, func)(a), 0.0, what)
            # along an axis: one all-NaN row among good ones
            b = np.array([[1.0, nan], [nan, nan], [inf, 2.0]], dt)
            for func in ARGS:
                with pytest.raises(ValueError, match="All-NaN slice"):
                    getattr(gpured, func)(b, axis=1)
                check(getattr(gpured, func)(b, axis=0), getattr(np, func)(b, axis=0), 0.0,
                      func + " axis 0")
            for func in MINMAX:
                with pytest.warns(RuntimeWarning, match="All-NaN slice"):
                    got = getattr(gpured, func)(b, axis=1)
                check(got, numpy_result(getattr(np, func), b, axis=1), 0.0, func + " axis 1")
                # initial: fmin/fmax with it (an all-NaN slice gives it)
                for init in (0.5, -5.0, 5.0):
                    check(getattr(gpured, func)(b, axis=1, initial=init),
                          getattr(np, func)(b, axis=1, initial=init), 0.0,
                          "%s initial=%s" % (func, init))
            with pytest.raises(ValueError):
                gpured.nanmin(np.array([], dt))
            with pytest.raises(ValueError):
                gpured.nanargmax(np.array([], dt))


@pytest.mark.parametrize("func", MINMAX + ARGS)
def test_device_arrays_and_out(func):
    g, f = getattr(gpured, func), getattr(np, func)
    a = data(np.float32, (300, 129), func, seed=3, all_nan=func in MINMAX)
    d = gpured.to_device(a)
    for axis in (None, 0, 1):
        want = numpy_result(f, a, axis=axis)
        check(_quiet(g, d, axis=axis), want, 0.0, "%s device axis=%s" % (func, axis))
        out = np.empty_like(want) if np.ndim(want) else None
        if out is not None:
            r = _quiet(g, a, axis=axis, out=out)
            assert r is out
            check(out, want, 0.0, "%s out= axis=%s" % (func, axis))
    # strided views
    check(_quiet(g, a[::2, 1::3], axis=1), numpy_result(f, a[::2, 1::3], axis=1), 0.0,
          func + " strided")
    if func in ARGS:
        bad = np.full((4, 9), np.nan, np.float32)
        bad[0] = 1.0
        bad[1, 4] = -2.0
        bad[2] = np.nan
        with pytest.raises(ValueError, match="All-NaN slice"):
            g(gpured.to_device(bad), axis=1)
        check(g(gpured.to_device(bad), axis=0), f(bad, axis=0), 0.0, func + " device axis 0")


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_device_nan_check(dtype):
    """Device arrays: the indices found are checked for NaNs on the device
    (reduce.cl gr_nanarg_check, the face's mode 3), one small read; only
    where one points at a NaN does the face look further (all-NaN slices
    raise, NaNs tied with +-inf give NumPy's index)."""
    skip_f64(dtype)
    from gpured import _core
    from gpured._reduce import _NoValue
    nan, inf = np.nan, np.inf

    def flag(func, x, axis=None):
        return _core.reduce(func, x, axis, None, None, False, _NoValue, {}, None, 3)[1]

    for arr in ([nan] * 5, [inf, nan], [nan, inf], [nan, -inf, nan], [-inf, -inf],
                [nan, 1.0, nan], [3.0], [nan, -inf], [-inf, nan]):
        a = np.array(arr, dtype)
        d = gpured.to_device(a)
        for func in ARGS:
            f, g = getattr(np, func), getattr(gpured, func)
            rep = inf if func == "nanargmin" else -inf
            # the flag: the index found (NaN read as +-inf, first of ties) is a NaN
            want_flag = bool(np.isnan(a[int(np.argmax(np.where(np.isnan(a), rep, a)) if
                                          func == "nanargmax" else
                                          np.argmin(np.where(np.isnan(a), rep, a)))]))
            assert flag(func, d) is want_flag, (func, arr)
            if np.isnan(a).all():
                with pytest.raises(ValueError, match="All-NaN slice"):
                    g(d)
            else:
                check(g(d), f(a), 0.0, "%s(%r) device" % (func, arr))
    # rows: clean ones, NaNs tied with +-inf, all-NaN; C order and transposed
    rng = np.random.default_rng(5)
    b = rng.standard_normal((6, 37)).astype(dtype)
    b[rng.random(b.shape) < 0.3] = nan
    b[1] = np.where(rng.random(37) < 0.5, nan, inf)
    b[2] = np.where(rng.random(37) < 0.5, nan, -inf)
    b[2, 0] = b[1, 0] = nan
    good = np.delete(b, 4, axis=0)
    b[4] = nan
    for func in ARGS:
        f, g = getattr(np, func), getattr(gpured, func)
        for x, name in ((good, "C"), (np.ascontiguousarray(good.T), "T")):
            d = gpured.to_device(x)
            for axis in (0, 1):
                for kw in ({}, {"keepdims": True}):
                    check(g(d, axis=axis, **kw), f(x, axis=axis, **kw), 0.0,
                          "%s %s axis=%s %s" % (func, name, axis, kw))
            dv = gpured.to_device(good)[:, 1::3]  # a strided device view
            check(g(dv, axis=1), f(good[:, 1::3], axis=1), 0.0, func + " strided view")
            for variant in gpured.variants(func, dtype):
                check(g(d, axis=1, variant=variant), f(x, axis=1), 0.0,
                      "%s %s variant %s" % (func, name, variant))
        db = gpured.to_device(b)
        assert flag(func, db, 1) is True
        with pytest.raises(ValueError, match="All-NaN slice"):
            g(db, axis=1)
        with pytest.raises(ValueError, match="All-NaN slice"):
            g(gpured.to_device(np.ascontiguousarray(b.T)), axis=0)
        assert flag(func, gpured.to_device(good[[0, 3, 4]]), 1) is False
        # host memory: the face looks (no device check)
        assert flag(func, good[[0, 3]], 1) is None


def test_dask_rows():
    da = pytest.importorskip("dask.array", reason="dask is not installed (pip install dask)")
    import gpured.dask as gd
    a = data(np.float64 if gpured.get_device()["fp64"] else np.float32, (300, 129), "nanmin")
    x = da.from_array(a, chunks=(100, 50))
    for func in MINMAX:
        for axis in (None, 0, 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                got = getattr(gd, func)(x, axis=axis).compute()
            check(got, numpy_result(getattr(np, func), a, axis=axis), 0.0,
                  "dask %s axis=%s" % (func, axis))
