"""count_nonzero and ptp against NumPy: dtypes, axes, keepdims, every reduce
variant (count_nonzero's test is fused into the kernels' loads: GR_CVT_COUNT;
ptp is one pass, the minimum riding as max's auxiliary state: GR_PTP),
host and device operands, both sides of placement, gpured.dask rows."""
import numpy as np
import pytest

import gpured
from test_nan import check, placed

DTYPES = [np.float32, np.float64, np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64]
CASES = [((1,), None), ((7,), None), ((1021,), None), ((65537,), None),
         ((5, 7, 3), 0), ((5, 7, 3), -1), ((5, 7, 3), (0, 2)), ((300, 129), 1),
         ((300, 129), 0)]


def fp64_ok(dtype):
    return np.dtype(dtype) != np.float64 or gpured.get_device()["fp64"]


def data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return (rng.random(n) < 0.4).reshape(shape)
    a = rng.integers(0 if dt.kind == "u" else -3, 4, n).astype(dt)
    if dt.kind == "f":
        a[rng.random(n) < 0.1] = np.nan   # nonzero
        a[rng.random(n) < 0.1] = -0.0     # zero
        a[rng.random(n) < 0.02] = np.inf
    return a.reshape(shape)


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_count_nonzero_matches_numpy(dtype, mode):
    if not fp64_ok(dtype):
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")
    with placed(mode):
        for shape, axis in CASES:
            a = data(dtype, shape, seed=len(shape))
            for kw in ({}, {"keepdims": True}):
                got, want = gpured.count_nonzero(a, axis=axis, **kw), np.count_nonzero(a, axis=axis, **kw)
                what = "count_nonzero(%s %s, axis=%s, %s) %s" % (a.dtype, shape, axis, kw, mode)
                assert type(got) is type(want), what
                check(got, want, 0.0, what)
        # strided views, empty
        a = data(dtype, (40, 33))
        check(gpured.count_nonzero(a[::3, ::2], axis=1), np.count_nonzero(a[::3, ::2], axis=1),
              0.0, "strided")
        check(gpured.count_nonzero(a[:0]), np.count_nonzero(a[:0]), 0.0, "empty")
        check(gpured.count_nonzero(a[:0], axis=0), np.count_nonzero(a[:0], axis=0), 0.0, "empty axis 0")


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_count_nonzero_every_variant(dtype):
    for variant in gpured.variants("count_nonzero", dtype):
        for shape, axis in (((7,), None), ((65537,), None), ((300, 129), 1), ((300, 129), 0)):
            a = data(dtype, shape, seed=5)
            check(gpured.count_nonzero(a, axis=axis, variant=variant),
                  np.count_nonzero(a, axis=axis), 0.0,
                  "count_nonzero(%s %s, axis=%s, variant=%r)" % (a.dtype, shape, axis, variant))


def test_count_nonzero_device_arrays():
    a = data(np.float32, (300, 129), seed=2)
    d = gpured.to_device(a)
    for axis in (None, 0, 1):
        check(gpured.count_nonzero(d, axis=axis), np.count_nonzero(a, axis=axis), 0.0,
              "device axis=%s" % axis)
        check(gpured.count_nonzero(d[:0], axis=axis), np.count_nonzero(a[:0], axis=axis), 0.0,
              "empty device array axis=%s" % axis)


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_ptp_matches_numpy(dtype, mode):
    if not fp64_ok(dtype):
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")
    rng = np.random.default_rng(1)
    with placed(mode):
        for shape, axis in CASES:
            dt = np.dtype(dtype)
            a = rng.integers(dt.type(np.iinfo(dt).min if dt.kind in "iu" else -100),
                             dt.type(np.iinfo(dt).max if dt.kind in "iu" else 100),
                             int(np.prod(shape)), endpoint=True).astype(dt).reshape(shape)
            if dt.kind == "f" and a.size > 10:
                a.reshape(-1)[3] = np.nan
            for kw in ({}, {"keepdims": True}):
                # integers wrap in their dtype, as NumPy's ptp does
                check(gpured.ptp(a, axis=axis, **kw), np.ptp(a, axis=axis, **kw), 0.0,
                      "ptp(%s %s, axis=%s, %s) %s" % (a.dtype, shape, axis, kw, mode))
    a = rng.standard_normal((30, 20)).astype(np.float32)
    out = np.empty(20, np.float32)
    assert gpured.ptp(a, axis=0, out=out) is out
    check(out, np.ptp(a, axis=0), 0.0, "out=")
    got = gpured.ptp(gpured.to_device(a), axis=1)
    assert isinstance(got, gpured.Array)
    check(got, np.ptp(a, axis=1), 0.0, "device array")
    with pytest.raises(ValueError):
        gpured.ptp(np.array([], np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int32, np.int64,
                                   np.uint64], ids=lambda d: np.dtype(d).name)
def test_ptp_every_variant(dtype):
    """ptp is one pass (the minimum rides as max's auxiliary state): every
    variant the device offers, both kernels, full ranges (integers wrap)."""
    if not fp64_ok(dtype):
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")
    dt = np.dtype(dtype)
    rng = np.random.default_rng(7)
    names = gpured.variants("ptp", dtype)
    assert "atomic" not in names  # a maximum and a minimum: two words
    for variant in names:
        for shape, axis in (((7,), None), ((65537,), None), ((300, 129), 1), ((300, 129), 0),
                            ((4, 5, 6), (0, 2))):
            n = int(np.prod(shape))
            if dt.kind == "f":
                a = (rng.standard_normal(n) * 1e3).astype(dt)
                a[rng.random(n) < 0.001] = np.nan
            else:
                ii = np.iinfo(dt)
                a = rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)
            a = a.reshape(shape)
            check(gpured.ptp(a, axis=axis, variant=variant), np.ptp(a, axis=axis), 0.0,
                  "ptp(%s %s, axis=%s, variant=%r)" % (dt, shape, axis, variant))


def test_ptp_edges():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((40, 33)).astype(np.float32)
    # NaN propagates, infinities give inf or nan as NumPy's subtraction
    b = a.copy()
    b[3, 4] = np.nan
    b[5, :] = np.inf
    b[6, 0], b[6, 1] = np.inf, -np.inf
    for axis in (None, 0, 1):
        for mode in ("auto", "current"):
            with placed(mode):
                check(gpured.ptp(b, axis=axis), np.ptp(b, axis=axis), 0.0,
                      "ptp inf/nan axis=%s %s" % (axis, mode))
    # booleans: NumPy's TypeError; empty: max's ValueError
    with pytest.raises(TypeError):
        gpured.ptp(np.ones(5, bool))
    with pytest.raises(ValueError):
        gpured.ptp(a[:0], axis=0)
    check(gpured.ptp(a[:0], axis=1), np.ptp(a[:0], axis=1), 0.0, "empty rows")
    # strided views, keepdims
    check(gpured.ptp(a[::3, ::2], axis=1, keepdims=True), np.ptp(a[::3, ::2], axis=1, keepdims=True),
          0.0, "strided keepdims")
    # out of another dtype: NumPy's steps (max cast into out, then the
    # minimum subtracted there)
    i = rng.integers(-2**40, 2**40, (30, 20))
    out = np.empty(20, np.float32)
    want = np.empty(20, np.float32)
    assert gpured.ptp(i, axis=0, out=out) is out
    np.ptp(i, axis=0, out=want)
    check(out, want, 0.0, "out of another dtype")
    # device arrays: a device result on the device, into a device out=
    d = gpured.to_device(a)
    for axis in (None, 0, 1):
        got = gpured.ptp(d, axis=axis)
        assert isinstance(got, gpured.Array)
        check(got, np.ptp(a, axis=axis), 0.0, "device axis=%s" % axis)
    dout = gpured.to_device(np.zeros(33, np.float32))
    assert gpured.ptp(d, axis=0, out=dout) is dout
    check(dout, np.ptp(a, axis=0), 0.0, "device out=")
    # explain says where it runs and that the host path reads twice
    e = gpured.explain("ptp", a)
    assert e["placement"] in ("host", "device") and e.get("variant") != "atomic"


def test_dask_count_nonzero():
    da = pytest.importorskip("dask.array", reason="dask is not installed (pip install dask)")
    import gpured.dask as gd
    a = data(np.int32, (300, 129))
    x = da.from_array(a, chunks=(100, 50))
    for axis in (None, 0, 1):
        got = gd.count_nonzero(x, axis=axis).compute()
        check(np.asarray(got), np.asarray(np.count_nonzero(a, axis=axis)), 0.0,
              "dask axis=%s" % axis)


def test_dask_ptp():
    da = pytest.importorskip("dask.array", reason="dask is not installed (pip install dask)")
    import gpured.dask as gd
    rng = np.random.default_rng(9)
    for dt in (np.float32, np.int8, np.int64):
        ii = np.iinfo(dt) if np.dtype(dt).kind == "i" else None
        a = (rng.standard_normal((300, 129)).astype(dt) if ii is None else
             rng.integers(ii.min, ii.max, (300, 129), dtype=dt, endpoint=True))
        if ii is None:
            a[7, 3] = np.nan
        x = da.from_array(a, chunks=(100, 50))
        for axis in (None, 0, 1):
            for kw in ({}, {"keepdims": True}):
                got = gd.ptp(x, axis=axis, **kw).compute()
                check(np.asarray(got), np.asarray(np.ptp(a, axis=axis, **kw)), 0.0,
                      "dask ptp %s axis=%s %s" % (np.dtype(dt), axis, kw))
    with pytest.raises(TypeError):
        gd.ptp(da.from_array(np.ones(4, bool), chunks=2)).compute()
