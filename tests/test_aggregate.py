"""gpured.aggregate against numpy_groupies' own NumPy engine (the oracle):
every function, floats / ints / bool, NaNs, empty groups, fill values,
dtype=, ddof, axis with n-d values, multi-dimensional group_idx, device
Arrays in and out, and the errors numpy_groupies raises."""
import numpy as np
import pytest

import gpured

npg = pytest.importorskip("numpy_groupies",
                          reason="numpy_groupies (the test extra) is the "
                                 "reference these tests compare with")
from numpy_groupies.aggregate_numpy import aggregate as ref  # noqa: E402

BASE = ["sum", "mean", "var", "std", "min", "max", "first", "last", "len",
        "argmin", "argmax", "all", "any"]
NAN = ["nan" + f for f in BASE]
SORTED = ["prod", "nanprod", "cumsum", "nancumsum"]  # the device sort first


def _data(dtype, n=300, groups=23, nans=False, seed=0):
    rng = np.random.default_rng(seed)
    # unsorted keys; groups 5 and 11 never occur (empty groups)
    g = rng.integers(0, groups, n)
    g[(g == 5) | (g == 11)] = 7
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(n).astype(dtype) * 10
        a[rng.integers(0, n, 20)] = 2.5  # ties for argmin/argmax
        if nans:
            a[rng.integers(0, n, 25)] = np.nan
            a[g == 13] = np.nan          # a group of NaNs only
    elif dtype == np.bool_:
        a = rng.integers(0, 2, n).astype(bool)
    else:
        a = rng.integers(-50 if np.dtype(dtype).kind == "i" else 0, 50,
                         n).astype(dtype)
    return g, a


def _same(got, want, func):
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype, (func, got.dtype, want.dtype)
    assert got.shape == want.shape, (func, got.shape, want.shape)
    if want.dtype.kind == "f":
        tol = 2e-5 if want.dtype == np.float32 else 1e-11
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10,
                                   equal_nan=True, err_msg=func)
    else:
        np.testing.assert_array_equal(got, want, err_msg=func)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32,
                                   np.int64, np.uint32, np.int16, np.bool_])
@pytest.mark.parametrize("func", BASE + SORTED)
def test_funcs(func, dtype):
    g, a = _data(dtype)
    if func in ("var", "std", "mean") and dtype == np.bool_:
        return _same_or_raise(g, a, func)
    _same(gpured.aggregate(g, a, func), ref(g, a, func), func)


def _same_or_raise(g, a, func, **kw):
    try:
        want = ref(g, a, func, **kw)
    except Exception as e:  # the reference refuses: so must gpured
        with pytest.raises(type(e)):
            gpured.aggregate(g, a, func, **kw)
        return
    _same(gpured.aggregate(g, a, func, **kw), want, func)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("func", BASE + NAN + SORTED)
def test_nans(func, dtype):
    g, a = _data(dtype, nans=True, seed=1)
    _same(gpured.aggregate(g, a, func), ref(g, a, func), func)


@pytest.mark.parametrize("func,fill", [
    ("sum", -3), ("sum", 0.5), ("mean", 0), ("mean", -1.5), ("var", 7),
    ("std", 0), ("min", 99), ("max", -99), ("first", 0), ("last", -1),
    ("len", 5), ("argmax", 1000), ("argmin", -7), ("all", True),
    ("any", True), ("nanmax", 0), ("nanlen", 3), ("nanfirst", 42),
    ("prod", 0), ("nanprod", -2), ("nanmean", 0)])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_fill_value(func, fill, dtype):
    g, a = _data(dtype, nans=dtype == np.float64, seed=2)
    _same_or_raise(g, a, func, fill_value=fill)


@pytest.mark.parametrize("func,dtype", [
    ("sum", np.float32), ("sum", np.int64), ("mean", np.float32),
    ("var", np.float32), ("min", np.float64), ("max", np.int64),
    ("first", np.float32), ("len", np.int32), ("argmax", np.int32),
    ("all", np.int32), ("any", np.bool_), ("len", np.float64),
    ("sum", np.bool_)])
def test_dtype(func, dtype):
    g, a = _data(np.float64, seed=3)
    a = np.round(a)
    _same_or_raise(g, a, func, dtype=dtype)


@pytest.mark.parametrize("func", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_ddof(func, ddof):
    g, a = _data(np.float64, nans=True, seed=4)
    _same(gpured.aggregate(g, a, func, ddof=ddof),
          ref(g, a, func, ddof=ddof), func)


def test_size_and_aliases():
    g, a = _data(np.float64, seed=5)
    for func, name in [("add", "sum"), ("count", "len"), ("amax", "max"),
                       (np.sum, "sum"), (np.mean, "mean"), (max, "max"),
                       (len, "len"), ("maximum", "max"), ("or", "any")]:
        _same(gpured.aggregate(g, a, func, size=40),
              ref(g, a, name, size=40), str(func))


def test_var_large_offset():
    """Two passes: a large common offset leaves the small spread intact
    (a single-pass sum of x and x**2 would lose it)."""
    rng = np.random.default_rng(6)
    g = rng.integers(0, 16, 5000)
    a = 1e8 + rng.standard_normal(5000)
    _same(gpured.aggregate(g, a, "var"), ref(g, a, "var"), "var")


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("func", ["sum", "mean", "nanvar", "max", "first",
                                  "argmax", "nanargmin", "len", "all"])
def test_axis(func, axis, order):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 40))
    a[rng.random(a.shape) < 0.1] = np.nan
    g = rng.integers(0, 9, a.shape[axis])
    g[g == 4] = 3
    _same(gpured.aggregate(g, a, func, axis=axis, order=order),
          ref(g, a, func, axis=axis, order=order), func)


def test_axis_3d_and_2d_labels():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 17, 4))
    g = rng.integers(0, 5, 17)
    for func in ("sum", "var", "argmin", "last"):
        _same(gpured.aggregate(g, a, func, axis=1, size=6),
              ref(g, a, func, axis=1, size=6), func)
    a2 = rng.standard_normal((4, 30))
    g2 = rng.integers(0, 6, (4, 30))   # labels per row
    for func in ("sum", "mean", "max"):
        _same(gpured.aggregate(g2, a2, func, axis=1),
              ref(g2, a2, func, axis=1), func)


@pytest.mark.parametrize("order", ["C", "F"])
def test_multi_index(order):
    rng = np.random.default_rng(9)
    g = np.vstack([rng.integers(0, 4, 200), rng.integers(0, 7, 200)])
    a = rng.standard_normal(200)
    for func in ("sum", "mean", "min", "argmax", "len"):
        _same(gpured.aggregate(g, a, func, order=order),
              ref(g, a, func, order=order), func)
        _same(gpured.aggregate(g, a, func, size=(5, 8), order=order),
              ref(g, a, func, size=(5, 8), order=order), func)


@pytest.mark.parametrize("func", ["sum", "mean", "var", "nanmax", "first",
                                  "argmin", "len", "any"])
def test_device_arrays(func):
    g, a = _data(np.float32, nans=True, seed=10)
    want = ref(g, a, func)
    for gg, aa in [(gpured.to_device(g), gpured.to_device(a)),
                   (g, gpured.to_device(a)), (gpured.to_device(g), a)]:
        got = gpured.aggregate(gg, aa, func)
        assert isinstance(got, gpured.Array)
        _same(got.get(), want, func)
    a2 = np.random.default_rng(11).standard_normal((5, 300))
    got = gpured.aggregate(gpured.to_device(g), gpured.to_device(a2), func,
                           axis=1)
    _same(got.get(), ref(g, a2, func, axis=1), func)


@pytest.mark.parametrize("func", SORTED)
def test_sorted_funcs_device_arrays(func):
    """prod / cumsum and their nan forms on device Arrays: the radix sort
    by key, results on the device (empty groups 5 and 11, a group of NaNs
    only, fill values, a size past the largest key)."""
    for dt in (np.float32, np.int32):
        g, a = _data(dt, nans=True, seed=13)
        dg, da = gpured.to_device(g), gpured.to_device(a)
        kws = [{}] + ([{"fill_value": -2, "size": 30}] if "prod" in func
                      else [])
        for kw in kws:
            got = gpured.aggregate(dg, da, func, **kw)
            assert isinstance(got, gpured.Array)
            _same(got.get(), ref(g, a, func, **kw), func)
    g, a = _data(np.float64, n=5000, groups=300, seed=14)
    a = 1 + a / 1000  # products of a group of ~17 stay finite
    got = gpured.aggregate(gpured.to_device(g), gpured.to_device(a), func)
    _same(got.get(), ref(g, a, func), func)


@pytest.mark.parametrize("g,a,kw", [
    (np.array([0, -1, 2]), np.ones(3), {}),                 # negative
    (np.array([0, -1, 2]), np.ones(3), {"func": "prod"}),   # sorted path
    (np.array([0, 1, 5]), np.ones(3), {"size": 3, "func": "mean"}),
    (np.array([0, 1, 5]), np.ones(3), {"size": 3, "func": "cumsum"}),
    (np.array([0, 1, 5]), np.ones(3), {"size": 3}),         # too large
    (np.array([0.0, 1.0]), np.ones(2), {}),                 # not integer
    (np.array([0, 1]), np.ones((2, 2)), {}),                # n-d without axis
    (np.array([0, 1]), np.ones((2, 3)), {"axis": 1}),       # length
    (np.array([0, 1]), np.ones(2), {"fill_value": np.nan, "func": "len"}),
    (np.array([0, 1]), np.ones(2), {"func": "nosuch"}),
    (np.array([0, 1]), np.ones(2), {"func": "sum", "dtype": bool}),
    (np.array([0, 1]), np.ones(2), {"func": "len", "dtype": float}),
    (np.array([0, 1]), np.ones(2), {"func": "all", "fill_value": 3}),
])
def test_errors(g, a, kw):
    kw = dict(kw)
    func = kw.pop("func", "sum")
    with pytest.raises(Exception) as e:
        ref(g, a, func, **kw)
    with pytest.raises((type(e.value), ValueError, TypeError,
                        NotImplementedError)) as mine:
        gpured.aggregate(g, a, func, **kw)
    assert isinstance(mine.value, (type(e.value), ValueError, TypeError))


def test_explain():
    g, a = _data(np.float32)
    for func in BASE + NAN + SORTED:
        p = gpured.explain_aggregate(g, a, func)
        assert p["path"] == "device"
        assert p["dtype"] == ref(g, a, func).dtype
        if p["path"] == "device":
            assert p["by_key"]["variant"]


@pytest.mark.parametrize("kd", [np.int8, np.uint16, np.uint32, np.uint64])
def test_key_dtypes(kd):
    """Small key dtypes are widened for the by-key family (until it takes
    them); unsigned keys as numpy_groupies."""
    rng = np.random.default_rng(12)
    g = rng.integers(0, 20, 150).astype(kd)
    a = rng.standard_normal(150)
    for func in ("sum", "var", "argmax", "first"):
        _same(gpured.aggregate(g, a, func), ref(g, a, func), func)
    g2 = np.vstack([g % 4, g % 5]).astype(kd)
    _same(gpured.aggregate(g2, a, "mean"), ref(g2, a, "mean"), "mean")


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_minmax_no_empty_groups(dtype):
    """Without empty groups min/max skip the counts; a group holding only
    the identity (-inf, the int minimum) is still no empty group."""
    rng = np.random.default_rng(13)
    g = np.r_[np.arange(10), rng.integers(0, 10, 90)]
    a = rng.integers(-9, 9, 100).astype(dtype)
    for func in ("min", "max", "nanmax"):
        _same(gpured.aggregate(g, a, func, fill_value=7),
              ref(g, a, func, fill_value=7), func)
    lo = -np.inf if dtype == np.float32 else np.iinfo(dtype).min
    a[g == 3] = lo
    g2 = np.r_[g, 12]                      # groups 10, 11 empty
    a2 = np.r_[a, a[:1]]
    for func in ("max", "nanmax", "min"):
        _same(gpured.aggregate(g2, a2, func, fill_value=5),
              ref(g2, a2, func, fill_value=5), func)
        _same(gpured.aggregate(g, a, func, fill_value=5),
              ref(g, a, func, fill_value=5), func)


def test_deterministic():
    g, a = _data(np.float32, nans=True, seed=14)
    for func in ("sum", "nanmean", "var"):
        first = gpured.aggregate(g, a, func, deterministic=True)
        _same(first, ref(g, a, func), func)
        again = gpured.aggregate(g, a, func, deterministic=True)
        assert first.tobytes() == again.tobytes()
    p = gpured.explain_aggregate(g, a, "mean", deterministic=True)
    assert p["by_key"]["variant"] in ("sorted_segments", "lookback",
                                      "fixed_point")


@pytest.mark.parametrize("a", [1, 2, 2.5, np.float32(1.5), True])
@pytest.mark.parametrize("func", ["sum", "prod", "len", "nansum", "mean"])
def test_scalar_a(a, func):
    g = np.array([0, 0, 2, 2, 2, 5])
    _same_or_raise(g, a, func)
