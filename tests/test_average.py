"""gpured.average against numpy.average: weights read beside the elements
in one pass (kernels/reduce.cl GR_WHERE 2, GR_VAR 4), the host path's
loop (dispatch.c ratio_rows), NumPy's shapes, dtypes, errors, returned=
and keepdims."""
import numpy as np
import pytest

import gpured

RNG = np.random.default_rng(7)


def _close(got, want, rtol=1e-6):
    got_a = np.asarray(got)
    want_a = np.asarray(want)
    assert got_a.shape == want_a.shape, (got_a.shape, want_a.shape)
    assert got_a.dtype == want_a.dtype, (got_a.dtype, want_a.dtype)
    tol = rtol if want_a.dtype == np.float64 else max(rtol, 2e-6)
    np.testing.assert_allclose(got_a, want_a, rtol=tol, atol=0, equal_nan=True)


def _avg_close(got, a, axis=None, weights=None, **kw):
    """got against numpy.average: shape and dtype as NumPy's; values against
    the float64 answer, within a few float32 ulps of the magnitudes summed
    for float32 results (gpured sums in double, NumPy in float32)."""
    want = np.average(a, axis=axis, weights=weights, **kw)
    if weights is not None and np.shape(weights) != np.shape(a):
        # 1-d weights along axis: NumPy's broadcast
        ax = axis % np.ndim(a)
        weights = np.expand_dims(weights, [i for i in range(np.ndim(a))
                                           if i != ax])
    if weights is not None:
        weights = np.broadcast_to(weights, np.shape(a))
    got_a, want_a = np.asarray(got), np.asarray(want)
    assert got_a.shape == want_a.shape and got_a.dtype == want_a.dtype, \
        (got_a.shape, want_a.shape, got_a.dtype, want_a.dtype)
    a64 = np.asarray(a, np.float64)
    w64 = None if weights is None else np.asarray(weights, np.float64)
    ref = np.average(a64, axis=axis, weights=w64, **kw)
    eps = np.finfo(want_a.dtype).eps
    mag = np.average(np.abs(a64), axis=axis,
                     weights=None if w64 is None else np.abs(w64), **kw)
    err = np.abs(got_a.astype(np.float64) - ref)
    tol = 8 * eps * (mag * (np.sum(np.abs(w64), axis=axis, **kw) /
                            np.abs(np.sum(w64, axis=axis, **kw)))
                     if w64 is not None else mag) + 1e-300
    bad = ~(err <= tol) & ~(np.isnan(ref) & np.isnan(got_a))
    assert not np.any(bad), (got_a, ref, err, tol)


def _data(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    return RNG.integers(-50, 50, shape).astype(dtype) if np.dtype(dtype).kind == "i" \
        else RNG.integers(0, 100, shape).astype(dtype)


# device: where the call runs (host: the placement rule's host path for
# small NumPy arrays; "device": the OpenCL device's kernels)
PATHS = ["host", "device"]


def _call(path, *args, **kw):
    if path == "device":
        old = gpured.placement("current")  # the kernels, never the host path
        try:
            return gpured.average(*args, **kw)
        finally:
            gpured.placement(old)
    return gpured.average(*args, **kw)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64,
                                   np.uint8, np.bool_])
@pytest.mark.parametrize("wdtype", [np.float32, np.float64, np.int32])
def test_full_weights_every_axis(path, dtype, wdtype):
    a = _data((23, 31), dtype)
    w = (RNG.random((23, 31)) * 3 + 0.1).astype(wdtype) if wdtype != np.int32 \
        else RNG.integers(1, 5, (23, 31)).astype(wdtype)
    for axis in (None, 0, 1, -1, (0, 1)):
        _avg_close(_call(path, a, axis=axis, weights=w), a, axis, w)


@pytest.mark.parametrize("path", PATHS)
def test_1d_weights_along_axis(path):
    a = _data((6, 7, 8), np.float64)
    for axis in (0, 1, 2, -1):
        w = RNG.random(a.shape[axis]) + 0.5
        _close(_call(path, a, axis=axis, weights=w),
               np.average(a, axis=axis, weights=w))
    w = RNG.random((6, 8)) + 0.5
    _close(_call(path, a, axis=(0, 2), weights=w),
           np.average(a, axis=(0, 2), weights=w))
    _close(_call(path, a, axis=(2, 0), weights=w.T),
           np.average(a, axis=(2, 0), weights=w.T))


@pytest.mark.parametrize("path", PATHS)
def test_returned_and_keepdims(path):
    a = _data((9, 10), np.float32)
    w = RNG.random((9, 10)).astype(np.float32) + 0.25
    for axis in (None, 0, 1):
        for kd in ({}, {"keepdims": True}, {"keepdims": False}):
            got = _call(path, a, axis=axis, weights=w, returned=True, **kd)
            want = np.average(a, axis=axis, weights=w, returned=True, **kd)
            _avg_close(got[0], a, axis, w, **kd)
            _close(got[1], want[1])
            _avg_close(_call(path, a, axis=axis, weights=w, **kd), a, axis, w,
                       **kd)
    # 1-d weights: the weights' sums broadcast to the result's shape
    w1 = RNG.random(10) + 0.5
    got = _call(path, a, axis=1, weights=w1, returned=True)
    want = np.average(a, axis=1, weights=w1, returned=True)
    _close(got[0], want[0])
    _close(got[1], want[1])


@pytest.mark.parametrize("path", PATHS)
def test_no_weights_is_mean(path):
    a = _data((12, 5), np.int32)
    for axis in (None, 0, 1):
        _close(_call(path, a, axis=axis), np.average(a, axis=axis))
        got = _call(path, a, axis=axis, returned=True)
        want = np.average(a, axis=axis, returned=True)
        _close(got[0], want[0])
        _close(got[1], want[1])


def test_errors_as_numpy():
    a = _data((4, 5), np.float64)
    with pytest.raises(TypeError, match="Axis must be specified"):
        gpured.average(a, weights=np.ones(5))
    with pytest.raises(ValueError, match="consistent with shape"):
        gpured.average(a, axis=1, weights=np.ones(4))
    w = np.ones((4, 5))
    w[2] = 0
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        gpured.average(a, axis=1, weights=w)
    with pytest.raises(ZeroDivisionError):
        gpured.average(gpured.to_device(a), axis=1, weights=w)
    # a slice whose weights cancel (not all zero) also sums to zero
    w2 = np.ones((4, 5))
    w2[1, 0], w2[1, 1], w2[1, 2:] = 1.0, -1.0, 0.0
    with pytest.raises(ZeroDivisionError):
        gpured.average(a, axis=1, weights=w2)
    with pytest.raises(np.exceptions.AxisError):
        gpured.average(a, axis=2, weights=w)


def test_nan_and_inf_propagate():
    a = _data((5, 6), np.float64)
    a[1, 2] = np.nan
    a[3, 0] = np.inf
    w = RNG.random((5, 6)) + 0.5
    w[4, 1] = 0.0  # a zero weight times a finite value adds 0
    for path in PATHS:
        _close(_call(path, a, axis=1, weights=w),
               np.average(a, axis=1, weights=w))
    # a zero weight times NaN is NaN, as NumPy's a * w
    w[1, 2] = 0.0
    _close(gpured.average(a, axis=1, weights=w), np.average(a, axis=1, weights=w))


def test_device_arrays_and_layouts():
    a = _data((40, 33), np.float32)
    w = (RNG.random((40, 33)) + 0.5).astype(np.float32)
    d, dw = gpured.to_device(a), gpured.to_device(w)
    for axis in (None, 0, 1):
        want = np.average(a, axis=axis, weights=w)
        got = gpured.average(d, axis=axis, weights=dw)
        if axis is not None:
            assert isinstance(got, gpured.Array)
        _avg_close(got, a, axis, w)
        _avg_close(gpured.average(d, axis=axis, weights=w), a, axis, w)
    # views: non-contiguous, transposed, reversed, Fortran order
    for x, ww in ((a[::2, 1::3], w[::2, 1::3]), (a.T, w.T),
                  (a[::-1, ::-2], w[::-1, ::-2]),
                  (np.asfortranarray(a), np.ascontiguousarray(w))):
        for axis in (None, 0, 1):
            for path in PATHS:
                _avg_close(_call(path, x, axis=axis, weights=ww), x, axis, ww)
    # a device view with device weights of another layout
    _avg_close(gpured.average(d[:, 1:], axis=0, weights=gpured.to_device(
        np.ascontiguousarray(w[:, 1:]))), a[:, 1:], 0, w[:, 1:])


def test_large_inputs_on_the_device():
    n = 1 << 20
    a = RNG.standard_normal(n).astype(np.float32)
    w = RNG.random(n).astype(np.float32)
    exact = np.sum(a.astype(np.float64) * w) / np.sum(w.astype(np.float64))
    got = gpured.average(a, weights=w)
    assert got.dtype == np.float32
    assert abs(float(got) - exact) <= 2e-7 * abs(exact) + 1e-12
    got = gpured.average(gpured.to_device(a), weights=gpured.to_device(w))
    assert abs(float(got.get()) - exact) <= 2e-7 * abs(exact) + 1e-12
    m = a.reshape(1024, 1024)
    wm = w.reshape(1024, 1024)
    for axis in (0, 1):
        _close(gpured.average(m, axis=axis, weights=wm),
               np.average(m.astype(np.float64), axis=axis,
                          weights=wm).astype(np.float32), rtol=1e-5)


@pytest.mark.parametrize("variant", [v for v in gpured.variants("sum", "float32")
                                     if v != "atomic"])
def test_every_variant(variant):
    a = _data((3, 4099), np.float32)
    w = (RNG.random((3, 4099)) + 0.5).astype(np.float32)
    d = gpured.to_device(a)
    for axis in (None, 1):
        try:
            got = gpured.average(d, axis=axis, weights=w, variant=variant)
        except gpured.VariantUnavailable:
            continue  # (e.g. the row layout a variant does not take)
        _avg_close(got, a, axis, w)


def test_atomic_variant_refused():
    a = _data(5000, np.float32)
    with pytest.raises(gpured.VariantUnavailable):
        gpured.average(gpured.to_device(a), weights=np.ones(5000, np.float32),
                       variant="atomic")


def test_empty_and_subclass_follow_numpy():
    a = np.zeros((0, 3))
    w = np.ones((0, 3))
    with pytest.raises(ZeroDivisionError):
        np.average(a, axis=0, weights=w)
    with pytest.raises(ZeroDivisionError):
        gpured.average(a, axis=0, weights=w)
    ma = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=[[0, 1], [0, 0]])
    wts = np.array([[1.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(gpured.average(ma, axis=0, weights=wts),
                               np.average(ma, axis=0, weights=wts))


def test_explain_takes_weights():
    a = _data(100000, np.float32)
    w = np.ones(100000, np.float32)
    old = gpured.placement("current")
    try:
        plan = gpured.explain("average", a, weights=w)
        t = gpured.timeit("average", a, weights=w, reps=2)
    finally:
        gpured.placement(old)
    assert plan["accumulator"] in ("double", "float")
    assert plan["placement"] == "device"
    _avg_close(t["result"], a, None, w)


@pytest.mark.parametrize("path", PATHS)
def test_1d_weights_read_in_place(path):
    """1-d weights along one axis are read by position in each slice
    (GR_WAXIS): every layout of the data (rows, columns, reversed and
    stepped views, Fortran order, copies) and of the weights (strided,
    reversed, on the device)."""
    base = _data((24, 35, 6), np.float64)
    views = [base, base[::-1], base[:, ::-2], base[::3, :, ::-1],
             np.asfortranarray(base), base.transpose(2, 0, 1)]
    for x in views:
        for axis in range(x.ndim):
            n = x.shape[axis]
            w_full = RNG.random(2 * n) + 0.5
            for w in (w_full[:n], w_full[::2], w_full[::-2][:n]):
                want = np.average(x, axis=axis, weights=w)
                _close(_call(path, x, axis=axis, weights=w), want)
                if path == "device":
                    d = gpured.to_device(np.ascontiguousarray(x))
                    _close(gpured.average(d, axis=axis, weights=w), want)
                    _close(gpured.average(d, axis=axis,
                                          weights=gpured.to_device(w)), want)
                    dv = gpured.to_device(base)[::-1, :, ::2]
                    xv = base[::-1, :, ::2]
                    wv = RNG.random(xv.shape[axis]) + 0.5
                    _close(gpured.average(dv, axis=axis,
                                          weights=gpured.to_device(wv)[::-1]),
                           np.average(xv, axis=axis, weights=wv[::-1]))


@pytest.mark.parametrize("variant", [v for v in gpured.variants("sum", "float32")
                                     if v != "atomic"])
def test_1d_weights_every_variant(variant):
    a = _data((37, 1030), np.float32)
    d = gpured.to_device(a)
    for axis in (0, 1):
        w = (RNG.random(a.shape[axis]) + 0.5).astype(np.float32)
        try:
            got = gpured.average(d, axis=axis, weights=w, variant=variant)
        except gpured.VariantUnavailable:
            continue
        _avg_close(got, a, axis, w)


def test_1d_weights_zero_sum_and_returned():
    a = _data((5, 4), np.float32)
    with pytest.raises(ZeroDivisionError):
        gpured.average(a, axis=1, weights=[1.0, -1.0, 0.0, 0.0])
    with pytest.raises(ZeroDivisionError):
        gpured.average(gpured.to_device(a), axis=0,
                       weights=gpured.to_device(np.zeros(5, np.float32)))
    got = gpured.average(gpured.to_device(a), axis=1,
                         weights=np.arange(1, 5, dtype=np.float32), returned=True)
    want = np.average(a, axis=1, weights=np.arange(1, 5, dtype=np.float32),
                      returned=True)
    assert isinstance(got[0], gpured.Array) and isinstance(got[1], gpured.Array)
    _close(got[1], want[1])
    _avg_close(got[0], a, 1, np.arange(1, 5, dtype=np.float32))
