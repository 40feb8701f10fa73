"""nanmean against NumPy: one pass summing and counting the elements that
are not NaN (GR_VAR 3), finished as their quotient in the kernels.
dtypes, axes, keepdims, dtype=/out=, all-NaN and empty slices with NumPy's
warning, every reduce variant, host and device operands, both placements,
gpured.dask."""
import warnings

import numpy as np
import pytest

import gpured
from test_nan import check, placed

CASES = [((1,), None), ((7,), None), ((1021,), None), ((65537,), None),
         ((5, 7, 3), 0), ((5, 7, 3), -1), ((5, 7, 3), (0, 2)), ((300, 129), 1),
         ((300, 129), 0)]


def fp64_ok(dtype):
    return np.dtype(dtype) != np.float64 or gpured.get_device()["fp64"]


def data(dtype, shape, seed=0, nan_frac=0.2):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return (rng.random(n) < 0.4).reshape(shape)
    if dt.kind in "iu":
        return rng.integers(0, 100, n).astype(dt).reshape(shape)
    a = (rng.standard_normal(n) * 10 + 3).astype(dt)
    a[rng.random(n) < nan_frac] = np.nan
    return a.reshape(shape)


def tol(want, a, axis):
    """float32 results: the sum rounds once (gpured) or pairwise (NumPy);
    a few ulps of the mean's magnitude times log2 of the slice length."""
    want = np.asarray(want)
    if want.dtype == np.float64:
        return 1e-12 * (1 + np.nanmax(np.abs(want))) if want.size else 0
    return 1e-5 * (1 + np.nanmax(np.abs(want))) if want.size and not np.isnan(want).all() else 0


def nm(a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(a, **kw)


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_nanmean_matches_numpy(dtype, mode):
    if not fp64_ok(dtype):
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")
    with placed(mode):
        for shape, axis in CASES:
            a = data(dtype, shape, seed=len(shape) + int(np.prod(shape)) % 7)
            for kw in ({}, {"keepdims": True}):
                want = nm(a, axis=axis, **kw)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    got = gpured.nanmean(a, axis=axis, **kw)
                what = "nanmean(%s %s, axis=%s, %s) %s" % (a.dtype, shape, axis, kw, mode)
                assert np.ndim(got) == np.ndim(want), what
                check(got, want, tol(want, a, axis), what)
        # strided views
        a = data(dtype, (40, 33))
        check(gpured.nanmean(a[::3, ::2], axis=1), nm(a[::3, ::2], axis=1),
              tol(nm(a[::3, ::2], axis=1), a, 1), "strided")


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_nanmean_all_nan_and_empty(mode):
    with placed(mode):
        a = data(np.float32, (6, 50), seed=3)
        a[2] = np.nan
        a[:, 7] = np.nan
        for axis in (0, 1):
            with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
                got = gpured.nanmean(a, axis=axis)
            want = nm(a, axis=axis)
            assert np.isnan(got).sum() == np.isnan(want).sum() > 0
            check(got, want, tol(want, a, axis), "all-NaN slices, axis=%d" % axis)
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            got = gpured.nanmean(np.full(100, np.nan, np.float32))
        assert np.isnan(got) and got.dtype == np.float32
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            got = gpured.nanmean(np.zeros(0, np.float32))
        assert np.isnan(got) and got.dtype == np.float32
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            got = gpured.nanmean(np.zeros((0, 4), np.float64), axis=0)
        check(got, nm(np.zeros((0, 4), np.float64), axis=0), 0.0, "empty axis 0")
        # no NaN at all: no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            gpured.nanmean(np.ones(10, np.float32))


def test_nanmean_dtype_and_out():
    a = data(np.float32, (300, 129), seed=4)
    want = np.nanmean(a, axis=1, dtype=np.float64)
    check(gpured.nanmean(a, axis=1, dtype=np.float64), want, 1e-12 * np.abs(want).max(), "dtype=f64")
    out = np.empty(300, np.float64)
    r = gpured.nanmean(a, axis=1, out=out)
    assert r is out
    check(out, np.nanmean(a, axis=1, out=np.empty(300, np.float64)), 1e-5 * np.abs(want).max(), "out=")
    with pytest.raises(TypeError):
        gpured.nanmean(a, dtype=np.int32)
    with pytest.raises(TypeError):
        gpured.nanmean(a, axis=1, out=np.empty(300, np.int64))


@pytest.mark.parametrize("dtype", [np.float32], ids=lambda d: np.dtype(d).name)
def test_nanmean_every_variant(dtype):
    # the sum and its count (one pass: GR_VAR 3) through every variant of
    # the device (float64: the default variants, test_nanmean_matches_numpy)
    with placed("current"):
        assert "atomic" not in gpured.variants("nanmean", dtype)
        with pytest.raises(gpured.VariantUnavailable, match="a sum and its count"):
            gpured.nanmean(data(dtype, (100,)), variant="atomic")
        for variant in gpured.variants("nanmean", dtype):
            for shape, axis in (((7,), None), ((65537,), None), ((300, 129), 1), ((300, 129), 0)):
                a = data(dtype, shape, seed=5)
                want = nm(a, axis=axis)
                check(gpured.nanmean(a, axis=axis, variant=variant), want,
                      tol(want, a, axis), "nanmean(%s %s, axis=%s, variant=%r)" % (
                          a.dtype, shape, axis, variant))


def test_nanmean_device_arrays():
    a = data(np.float32, (300, 129), seed=2)
    a[5] = np.nan
    d = gpured.to_device(a)
    for axis in (None, 0, 1):
        want = nm(a, axis=axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = gpured.nanmean(d, axis=axis)
        assert isinstance(got, gpured.Array)
        check(got, want, tol(want, a, axis), "device axis=%s" % axis)
    with pytest.raises(TypeError):
        gpured.nanmean(d, axis=1, out=np.empty(300, np.float32))


def test_dask_nanmean():
    da = pytest.importorskip("dask.array", reason="dask is not installed (pip install dask)")
    import gpured.dask as gd
    a = data(np.float32, (300, 129))
    a[7] = np.nan
    x = da.from_array(a, chunks=(100, 50))
    for axis in (None, 0, 1):
        want = nm(a, axis=axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = np.asarray(gd.nanmean(x, axis=axis).compute())
        check(got, np.asarray(want), tol(want, a, axis), "dask axis=%s" % axis)
    i = data(np.int32, (300, 129))
    check(np.asarray(gd.nanmean(da.from_array(i, chunks=(100, 50)), axis=0).compute()),
          np.nanmean(i, axis=0), 1e-9, "dask int32")
