"""nansum, nanprod, nancumsum, nancumprod against NumPy: every dtype, axis,
keepdims/out/dtype/initial, every reduce and scan variant, host and device
operands, both sides of placement (the host path and the device), and the
edges (all-NaN, empty, infinities, signed zeros).

The NaN test is fused into the kernels' loads (kernels/common.cl GR_NAN) and
into the host path's copy; these tests check that every path applies it.
"""
import contextlib

import numpy as np
import pytest

import gpured

FLOATS = [np.float32, np.float64]
NON_FLOATS = [np.bool_, np.uint8, np.int32, np.int64]
REDUCE_CASES = [((1,), None), ((7,), None), ((1021,), None), ((65537,), None),
                ((5, 7, 3), None), ((5, 7, 3), 0), ((5, 7, 3), -1),
                ((5, 7, 3), (0, 2)), ((300, 129), 1), ((300, 129), 0)]
SCAN_CASES = [((1,), None), ((7,), None), ((1021,), None), ((70001,), None),
              ((5, 7, 3), 0), ((5, 7, 3), -1), ((300, 129), 1), ((300, 129), 0)]
# Every variant (each compiles its own NaN-fused programs): fewer shapes,
# still one work-group and many, rows and columns.
VARIANT_REDUCE_CASES = [((7,), None), ((65537,), None), ((5, 7, 3), (0, 2)),
                        ((300, 129), 1), ((300, 129), 0)]
VARIANT_SCAN_CASES = [((7,), None), ((70001,), None), ((300, 129), 1), ((300, 129), 0)]


def has_fp64():
    return bool(gpured.get_device()["fp64"])


@contextlib.contextmanager
def placed(mode):
    old = gpured.placement(mode)
    try:
        yield
    finally:
        gpured.placement(old)


def data(dtype, shape, func, seed=0, nan_frac=0.3):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "f":
        if "prod" in func:
            a = 1.0 + 0.01 * rng.standard_normal(n)
        else:
            a = rng.standard_normal(n) * 10
        a = a.astype(dt)
        a[rng.random(n) < nan_frac] = np.nan
    elif dt.kind == "b":
        a = rng.random(n) < 0.5
    else:
        hi = 3 if "prod" in func else 100
        a = rng.integers(0 if dt.kind == "u" else -hi, hi, n).astype(dt)
    return a.reshape(shape)


def tolerance(a, func, axis):
    """Absolute error allowed: float32 rounding of the sum of |x| (NumPy's
    pairwise float32 sum against gpured's float64 accumulation)."""
    if a.dtype.kind != "f":
        return 0.0
    eps = np.finfo(a.dtype).eps
    mag = np.nansum(np.abs(a.astype(np.float64)), axis=axis)
    if "prod" in func:
        return 64 * eps * np.maximum(np.abs(np.nanprod(a.astype(np.float64), axis=axis)), 1)
    return 8 * eps * (mag + 1)


def check(got, want, atol, what):
    got_np = got.get() if isinstance(got, gpured.Array) else np.asarray(got)
    want = np.asarray(want)
    assert got_np.dtype == want.dtype, "%s: dtype %s, NumPy %s" % (
        what, got_np.dtype, want.dtype)
    assert got_np.shape == want.shape, "%s: shape %s, NumPy %s" % (
        what, got_np.shape, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got_np, want, rtol=0, atol=np.max(atol) if np.size(atol) else 0,
                                   err_msg=what, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want, err_msg=what)


def skip_f64(dtype):
    if np.dtype(dtype) == np.float64 and not has_fp64():
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", FLOATS + NON_FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["nansum", "nanprod"])
def test_nan_reductions_match_numpy(func, dtype, mode):
    skip_f64(dtype)
    g, f = getattr(gpured, func), getattr(np, func)
    with placed(mode):
        for shape, axis in REDUCE_CASES:
            a = data(dtype, shape, func, seed=len(shape))
            for kw in ({}, {"keepdims": True}):
                want = f(a, axis=axis, **kw)
                check(g(a, axis=axis, **kw), want, tolerance(a, func, axis),
                      "%s(%s %s, axis=%s, %s) placement %s" % (
                          func, a.dtype, shape, axis, kw, mode))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["nansum", "nanprod"])
def test_nan_reductions_every_variant(func, dtype):
    skip_f64(dtype)
    g, f = getattr(gpured, func), getattr(np, func)
    for variant in gpured.variants(func, dtype):
        for shape, axis in VARIANT_REDUCE_CASES:
            a = data(dtype, shape, func, seed=7)
            check(g(a, axis=axis, variant=variant), f(a, axis=axis),
                  tolerance(a, func, axis),
                  "%s(%s %s, axis=%s, variant=%r)" % (func, a.dtype, shape, axis, variant))


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["nancumsum", "nancumprod"])
def test_nan_scans_match_numpy(func, dtype, mode):
    skip_f64(dtype)
    g, f = getattr(gpured, func), getattr(np, func)
    with placed(mode):
        for shape, axis in SCAN_CASES:
            a = data(dtype, shape, func, seed=len(shape) + 1)
            want = f(a, axis=axis)
            ax = axis if axis is not None else None
            tol = 0.0
            if a.dtype.kind == "f":
                flat = a if axis is not None else a.ravel()
                mag = np.nancumsum(np.abs(flat.astype(np.float64)), axis=ax if axis is not None else 0)
                tol = np.max(64 * np.finfo(a.dtype).eps * (mag + 1))
            check(g(a, axis=axis), want, tol, "%s(%s %s, axis=%s) placement %s" % (
                func, a.dtype, shape, axis, mode))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["nancumsum", "nancumprod"])
def test_nan_scans_every_variant_and_exclusive(func, dtype):
    skip_f64(dtype)
    g, f = getattr(gpured, func), getattr(np, func)
    ident = 0 if func == "nancumsum" else 1
    for variant in gpured.variants(func, dtype):
        for shape, axis in VARIANT_SCAN_CASES:
            a = data(dtype, shape, func, seed=11)
            want = f(a, axis=axis)
            mag = np.nancumsum(np.abs(a.astype(np.float64)), axis=axis if axis is not None else None)
            tol = np.max(64 * np.finfo(a.dtype).eps * (mag + 1))
            what = "%s(%s %s, axis=%s, variant=%r)" % (func, a.dtype, shape, axis, variant)
            try:
                got = g(a, axis=axis, variant=variant)
            except gpured.VariantUnavailable as e:
                pytest.fail("%s offered but unavailable: %s" % (what, e))
            except ValueError:
                continue  # a tile variant refused on strided rows (said in its message)
            check(got, want, tol, what)
            # exclusive: the identity, then the inclusive scan shifted by one
            ax = -1 if axis is None else axis
            src = a.ravel() if axis is None else a
            inc = f(src, axis=ax)
            ex_want = np.concatenate([np.full_like(np.take(inc, [0], axis=ax), ident),
                                      np.take(inc, range(inc.shape[ax] - 1), axis=ax)], axis=ax)
            check(g(a, axis=axis, variant=variant, exclusive=True), ex_want, tol,
                  what + " exclusive")


def test_device_arrays_and_out():
    a = data(np.float32, (64, 257), "nansum", seed=3)
    d = gpured.to_device(a)
    for axis in (None, 0, 1):
        r = gpured.nansum(d, axis=axis)
        assert isinstance(r, gpured.Array)
        check(r, np.nansum(a, axis=axis), tolerance(a, "nansum", axis), "device axis=%s" % axis)
    o = gpured.empty(64, np.float32)
    assert gpured.nansum(d, axis=1, out=o) is o
    check(o, np.nansum(a, axis=1), tolerance(a, "nansum", 1), "device out=")
    ho = np.zeros(257, np.float64)
    assert gpured.nansum(a, axis=0, out=ho) is ho
    check(ho, np.nansum(a, axis=0, out=np.zeros(257, np.float64)), tolerance(a, "nansum", 0),
          "host out= float64")
    c = gpured.nancumsum(d, axis=1)
    assert isinstance(c, gpured.Array)
    check(c, np.nancumsum(a, axis=1), 1e-3, "device nancumsum")
    co = gpured.empty((64, 257), np.float64)
    assert gpured.nancumsum(d, axis=0, out=co) is co
    check(co, np.nancumsum(a, axis=0, dtype=np.float64), 1e-3, "device nancumsum out=")
    # strided views, on the host and on the device
    v = a[::2, ::3].T
    check(gpured.nansum(v, axis=0), np.nansum(v, axis=0), tolerance(v, "nansum", 0), "host view")
    check(gpured.nansum(d[::2, ::3].T, axis=0), np.nansum(v, axis=0), tolerance(v, "nansum", 0),
          "device view")
    check(gpured.nancumsum(v, axis=0), np.nancumsum(v, axis=0), 1e-3, "host view scan")


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_edges(mode):
    nan, inf = np.nan, np.inf
    with placed(mode):
        for dt in FLOATS:
            if np.dtype(dt) == np.float64 and not has_fp64():
                continue
            for arr in ([nan] * 5, [], [inf, -inf, nan], [inf, nan, 1.0], [-0.0, nan],
                        [-0.0], [nan, -0.0], [nan, nan, 2.0]):
                a = np.array(arr, dt)
                for func in ("nansum", "nanprod"):
                    got, want = getattr(gpured, func)(a), getattr(np, func)(a)
                    what = "%s(%r) %s" % (func, arr, np.dtype(dt).name)
                    check(got, want, 0.0, what)
                    if want == 0:
                        assert np.signbit(got) == np.signbit(want), what + ": sign of zero"
                for func in ("nancumsum", "nancumprod"):
                    got, want = getattr(gpured, func)(a), getattr(np, func)(a)
                    what = "%s(%r) %s" % (func, arr, np.dtype(dt).name)
                    check(got, want, 0.0, what)
                    # Signs of zeros and infinities; a NaN's sign bit is the
                    # hardware's (x86 makes inf - inf negative, NVIDIA positive).
                    num = ~np.isnan(want)
                    np.testing.assert_array_equal(np.signbit(np.asarray(got))[num],
                                                  np.signbit(want)[num], err_msg=what + ": signs")
            a = np.array([[nan, nan], [1.0, nan]], dt)
            check(gpured.nansum(a, axis=1), np.nansum(a, axis=1), 0.0, "all-NaN row")
            check(gpured.nanprod(a, axis=1), np.nanprod(a, axis=1), 0.0, "all-NaN row prod")
            check(gpured.nansum(a, initial=5.0), np.nansum(a, initial=5.0), 0.0, "initial=")
            check(gpured.nansum(a, axis=0, initial=nan), np.nansum(a, axis=0, initial=nan), 0.0,
                  "initial=nan stays")
            check(gpured.nansum(a, dtype=np.float64), np.nansum(a, dtype=np.float64), 0.0,
                  "dtype=")


def test_numpy_fallbacks_and_plans():
    m = np.ma.masked_array([2.0, np.nan, 3.0], mask=[0, 0, 1])
    assert gpured.nansum(m) == np.nansum(m)
    a = np.array([1.0, np.nan, 3.0])
    for func in ("nansum", "nanprod", "nancumsum", "nancumprod"):
        plan = gpured.explain(func, a)
        assert plan["placement"] in ("host", "device")
    r = gpured.timeit("nansum", gpured.to_device(a) if has_fp64() else a.astype(np.float32),
                      reps=2)
    assert float(np.asarray(r["result"].get() if isinstance(r["result"], gpured.Array)
                            else r["result"])) == 4.0


def test_dask_nan_functions():
    da = pytest.importorskip("dask.array", reason="dask is not installed (pip install dask)")
    import gpured.dask as gd
    a = data(np.float32, (600, 50), "nansum", seed=5)
    x = da.from_array(a, chunks=(128, 25))
    for axis in (None, 0, 1):
        check(gd.nansum(x, axis=axis).compute(), np.nansum(a, axis=axis),
              tolerance(a, "nansum", axis), "dask nansum axis=%s" % axis)
    p = data(np.float64, (300, 20), "nanprod", seed=6) if has_fp64() else \
        data(np.float32, (300, 20), "nanprod", seed=6)
    y = da.from_array(p, chunks=(64, 20))
    check(gd.nanprod(y, axis=0).compute(), np.nanprod(p, axis=0),
          tolerance(p, "nanprod", 0), "dask nanprod")
    check(gd.nancumsum(x, axis=0).compute(), np.nancumsum(a, axis=0), 1e-3, "dask nancumsum")
    check(gd.nancumprod(y, axis=0).compute(), np.nancumprod(p, axis=0), 1e-4,
          "dask nancumprod")
