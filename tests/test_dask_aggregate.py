"""gpured.dask.aggregate against numpy_groupies' NumPy engine on the whole
arrays: every function, NaNs, empty groups, fill values, ddof, uneven
chunks, device-resident chunks."""
import numpy as np
import pytest

import gpured

da = pytest.importorskip("dask.array", reason="gpured.dask needs Dask "
                         "(the test extra)")
npg = pytest.importorskip("numpy_groupies", reason="the reference (the "
                          "test extra)")
import gpured.dask as gd  # noqa: E402
from numpy_groupies.aggregate_numpy import aggregate as ref  # noqa: E402

FUNCS = ["sum", "mean", "var", "std", "min", "max", "first", "last", "len",
         "argmin", "argmax", "all", "any", "prod"]


def _data(dtype, nans, n=500, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 19, n)
    g[g == 4] = 9                       # an empty group
    g[:60] = 17                          # a group only in the first chunk
    if np.dtype(dtype).kind == "f":
        a = (rng.standard_normal(n) * 10).astype(dtype)
        a[rng.integers(0, n, 30)] = 1.5  # ties across chunks
        if nans:
            a[rng.integers(0, n, 20)] = np.nan
            a[g == 13] = np.nan
    else:
        a = rng.integers(-40, 40, n).astype(dtype)
    return g, a


def _same(got, want, func):
    assert got.dtype == want.dtype, (func, got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                   equal_nan=True, err_msg=func)
    else:
        np.testing.assert_array_equal(got, want, err_msg=func)


@pytest.mark.parametrize("func", FUNCS + ["nan" + f for f in FUNCS])
@pytest.mark.parametrize("dtype,nans", [(np.float64, True),
                                        (np.float32, False),
                                        (np.int32, False)])
def test_funcs(func, dtype, nans):
    g, a = _data(dtype, nans)
    x = da.from_array(a, chunks=(70, 130, 50, 250))
    gg = da.from_array(g, chunks=100)    # rechunked to a's
    got = gd.aggregate(gg, x, func)
    assert isinstance(got, da.Array)
    _same(got.compute(), ref(g, a, func), func)


@pytest.mark.parametrize("func,kw", [("mean", {"fill_value": 0}),
                                     ("max", {"fill_value": -5}),
                                     ("var", {"ddof": 1}),
                                     ("nanstd", {"ddof": 2}),
                                     ("argmax", {"size": 25}),
                                     ("sum", {"size": 30, "fill_value": 7}),
                                     ("first", {"fill_value": 0.5})])
def test_options(func, kw):
    g, a = _data(np.float64, True, seed=1)
    got = gd.aggregate(g, da.from_array(a, chunks=120), func, **kw)
    _same(got.compute(), ref(g, a, func, **kw), func)


def test_device_chunks():
    g, a = _data(np.float32, False, seed=2)
    x = da.from_array(a, chunks=150).map_blocks(gpured.to_device,
                                                dtype=a.dtype)
    for func in ("mean", "var", "argmin", "last"):
        _same(gd.aggregate(g, x, func).compute(), ref(g, a, func), func)


def test_unsupported():
    g, a = _data(np.float64, False)
    with pytest.raises(NotImplementedError):
        gd.aggregate(g, da.from_array(a), "cumsum")
    with pytest.raises(NotImplementedError):
        gd.aggregate(np.vstack([g, g]), da.from_array(a), "sum")


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("func", ["sum", "mean", "nanvar", "max", "first",
                                  "last", "argmax", "nanargmin", "len",
                                  "any"])
def test_axis(func, axis):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 60))
    a[rng.random(a.shape) < 0.1] = np.nan
    g = rng.integers(0, 9, a.shape[axis])
    g[g == 4] = 3
    x = da.from_array(a, chunks=(15, 25))
    for order in ("C", "F"):
        got = gd.aggregate(g, x, func, axis=axis, order=order)
        _same(got.compute(), ref(g, a, func, axis=axis, order=order), func)


def test_placement_and_stats():
    g, a = _data(np.float64, True, seed=4)
    gd.reset_stats()
    got = gd.aggregate(g, da.from_array(a, chunks=100), "nanmean",
                       devices="current", policy="round_robin")
    _same(got.compute(), ref(g, a, "nanmean"), "nanmean")
    assert sum(s["chunks"] for s in gd.stats().values()) == 5
