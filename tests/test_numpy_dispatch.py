"""NumPy's functions on device Arrays (``Array.__array_function__``).

Every NumPy function gpured implements, called with an Array, runs
gpured's function on the device and returns an Array equal to NumPy's
answer on the host data; nothing is copied to the host on the way (a
detector replaces ``Array.__array__``, the door every NumPy host copy goes
through); NumPy keywords gpured lacks and every other NumPy function raise
TypeError naming ``np.asarray(d)``.  Also the elementwise family's plan
(csrc/plan_elementwise.c) through ``gpured.explain`` and its knobs.
"""
import warnings

import numpy as np
import pytest

import gpured
from gpured import _numpy
from conftest import HAS_FP64

F = np.float64 if HAS_FP64 else np.float32


@pytest.fixture
def no_host(monkeypatch):
    """Array.__array__ raises: a NumPy host copy of an Array fails."""
    def refuse(self, *a, **k):
        raise AssertionError("an Array was copied to the host")
    monkeypatch.setattr(gpured.Array, "__array__", refuse)
    yield


def host(x):
    return x.get() if isinstance(x, gpured.Array) else np.asarray(x)


def data(shape=(5, 7), dt=F, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 4).astype(dt)
    if nan:
        a[1, 2] = a[3, 0] = np.nan
    return a


def check(got, want, exact=False):
    assert isinstance(got, gpured.Array), type(got)
    g, w = host(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.dtype, w.dtype)
    if exact or w.dtype.kind not in "fc":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=2e-5 if w.dtype == np.float32
                                   else 1e-12, atol=1e-6, equal_nan=True)


# (NumPy function, keyword arguments, NaNs in the data): every row of
# _numpy.FUNCTIONS that gpured has is called at least once
CASES = [
    (np.sum, {}, False), (np.sum, {"axis": 1, "keepdims": True}, False),
    (np.sum, {"axis": 0, "dtype": np.float32, "initial": 2.0}, False),
    (np.prod, {"axis": 0}, False), (np.min, {"axis": 1}, False),
    (np.amin, {}, False), (np.max, {"axis": 0, "initial": 1.0}, False),
    (np.amax, {"axis": (0, 1)}, False), (np.mean, {"axis": 0}, False),
    (np.argmin, {"axis": 1}, False), (np.argmax, {}, False),
    (np.all, {"axis": 0}, False), (np.any, {"keepdims": True}, False),
    (np.cumsum, {"axis": 1}, False), (np.cumprod, {"axis": 0}, False),
    (np.nancumsum, {"axis": 1}, True), (np.nancumprod, {}, True),
    (np.nansum, {"axis": 0}, True), (np.nanprod, {"axis": 1}, True),
    (np.nanmin, {"axis": 0}, True), (np.nanmax, {}, True),
    (np.nanargmin, {"axis": 1}, True), (np.nanargmax, {}, True),
    (np.nanmean, {"axis": 0}, True), (np.var, {}, False),
    (np.var, {"axis": 1, "ddof": 1}, False), (np.std, {"axis": 0}, False),
    (np.nanvar, {"axis": 1}, True), (np.nanstd, {"ddof": 1}, True),
    (np.ptp, {"axis": 1}, False), (np.ptp, {}, False),
    (np.count_nonzero, {"axis": 0}, False), (np.count_nonzero, {}, False),
    (np.average, {"axis": 1}, False),
]
if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1
    CASES += [(np.cumulative_sum, {"axis": 1, "include_initial": True}, False),
              (np.cumulative_prod, {"axis": 0}, False)]


@pytest.mark.parametrize("f,kw,nan", CASES,
                         ids=["%s-%d" % (c[0].__name__, i)
                              for i, c in enumerate(CASES)])
def test_function_runs_on_device(f, kw, nan, no_host):
    a = data(nan=nan)
    if f in (np.count_nonzero,):
        a[a > 1] = 0
    d = gpured.to_device(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = f(a, **kw)
    got = f(d, **kw)
    check(got, want, exact=f in (np.argmin, np.argmax, np.nanargmin,
                                 np.nanargmax, np.count_nonzero, np.all,
                                 np.any))


def test_positional_arguments_and_out(no_host):
    a = data()
    d = gpured.to_device(a)
    check(np.sum(d, 1), np.sum(a, 1))
    check(np.var(d, 0, None, None, 1), np.var(a, 0, ddof=1))
    out = gpured.empty((7,), a.dtype)
    r = np.sum(d, axis=0, out=out)
    assert r is out
    check(out, np.sum(a, axis=0))
    check(np.cumsum(d, None), np.cumsum(a))


def test_where_weights_returned(no_host):
    a = data()
    d = gpured.to_device(a)
    m = a > 0
    check(np.sum(d, where=gpured.to_device(m)), np.sum(a, where=m))
    check(np.max(d, axis=1, where=gpured.to_device(m), initial=-100.0),
          np.max(a, axis=1, where=m, initial=-100.0))
    w = np.abs(data(seed=1)) + 0.5
    avg, scl = np.average(d, axis=0, weights=gpured.to_device(w),
                          returned=True)
    wa, ws = np.average(a, axis=0, weights=w, returned=True)
    check(avg, wa)
    check(scl, ws)


def test_np_where_three_arguments(no_host):
    a = data()
    d = gpured.to_device(a)
    check(np.where(d > 0, d, 0.0), np.where(a > 0, a, 0.0), exact=True)
    # a NumPy operand goes to the device (explicit movement toward it)
    b = data(seed=2)
    check(np.where(d > 0, d, b), np.where(a > 0, a, b), exact=True)
    with pytest.raises(TypeError, match=r"np\.asarray"):
        np.where(d > 0)   # NumPy's nonzero form: not on the device


@pytest.mark.skipif(not hasattr(gpured, "bincount"),
                    reason="gpured.bincount/histogram/unique not merged in")
def test_bins_functions(no_host):
    """The table's rows for gpured's bincount / histogram / unique (added
    by another branch) reach them on the device."""
    a = np.random.default_rng(4).integers(0, 9, 50)
    d = gpured.to_device(a)
    check(np.bincount(d, minlength=12), np.bincount(a, minlength=12))
    check(np.unique(d), np.unique(a))
    h, e = np.histogram(d, 5)
    wh, we = np.histogram(a, 5)
    check(h, wh)
    np.testing.assert_allclose(host(e), we)


def test_metadata_and_views(no_host):
    a = data((3, 4, 5))
    d = gpured.to_device(a)
    assert np.shape(d) == (3, 4, 5) and np.ndim(d) == 3 and np.size(d) == 60
    assert np.size(d, 1) == 4
    check(np.reshape(d, (12, 5)), a.reshape(12, 5), exact=True)
    check(np.transpose(d, (2, 0, 1)), a.transpose(2, 0, 1), exact=True)
    check(np.swapaxes(d, 0, 2), a.swapaxes(0, 2), exact=True)
    check(np.ravel(d), a.ravel(), exact=True)
    check(np.copy(d), a, exact=True)
    check(np.round(d), np.round(a), exact=True)
    check(np.around(gpured.to_device(np.arange(5))), np.arange(5), exact=True)
    with pytest.raises(TypeError, match=r"np\.asarray"):
        np.round(d, 2)


@pytest.mark.parametrize("f", [np.var, np.std])
def test_unsupported_keywords_raise(f, no_host):
    try:
        f(data(), mean=np.zeros((1, 7)))
    except TypeError:
        pytest.skip("this NumPy's var/std has no mean= (NumPy < 2.0)")
    d = gpured.to_device(data())
    with pytest.raises(TypeError, match=r"mean=.*np\.asarray"):
        f(d, mean=np.zeros((1, 7)))


def test_bad_keyword_is_numpys_error(no_host):
    d = gpured.to_device(data())
    with pytest.raises(TypeError, match="bogus"):   # NumPy's own check
        np.sum(d, bogus=1)


@pytest.mark.parametrize("call", [
    lambda d: np.concatenate([d, d]), lambda d: np.sort(d),
    lambda d: np.median(d), lambda d: np.dot(d, d.T) if not hasattr(
        gpured, "dot") else np.vstack([d]),
    lambda d: np.percentile(d, 50), lambda d: np.unique(d) if not hasattr(
        gpured, "unique") else np.tile(d, 2),
    lambda d: np.linalg.norm(d), lambda d: np.diff(d),
    lambda d: np.matmul(d, d.T), lambda d: np.frexp(d),
    lambda d: np.add.outer(d, d), lambda d: np.ldexp(d, 2),
    lambda d: np.ones(3, like=d), lambda d: np.full(3, 1.0, like=d),
    lambda d: np.sum([d, d]),     # a list holding Arrays: NumPy's own path
])
def test_other_functions_refuse(call, no_host):
    d = gpured.to_device(data())
    with pytest.raises((TypeError, AssertionError)) as e:
        call(d)
    if e.type is AssertionError:   # only a list of Arrays reaches __array__
        assert "copied to the host" in str(e.value)
    else:
        assert "np.asarray(d)" in str(e.value) and "d.get()" in str(e.value)


def test_like_makes_arrays_on_the_device(no_host):
    """NEP 35's like= (dask's meta arrays): host data moves toward the
    like array's device on request."""
    d = gpured.to_device(data())
    r = np.asarray([1, 2, 3], like=d)
    check(r, np.asarray([1, 2, 3]), exact=True)
    assert r.device_index == d.device_index
    check(np.array([1.5], dtype=np.float32, like=d), np.array([1.5], np.float32))
    check(np.zeros((2, 3), np.int16, like=d), np.zeros((2, 3), np.int16))
    e = np.empty(4, like=d)
    assert isinstance(e, gpured.Array) and e.shape == (4,)
    assert np.asarray(d, like=d) is d


def test_ufuncs_stay_on_device(no_host):
    a = data()
    d = gpured.to_device(a)
    check(np.add(d, 1), a + 1, exact=True)
    check(np.sqrt(np.abs(d)), np.sqrt(np.abs(a)))
    check(np.add.reduce(d, axis=1), np.add.reduce(a, axis=1))
    check(np.maximum.accumulate(d, axis=0), np.maximum.accumulate(a, axis=0),
          exact=True)


def test_numpy_inputs_unaffected():
    a = data()
    assert type(np.sum(a)) is type(np.sum(a.copy()))
    assert isinstance(np.var(a, axis=0), np.ndarray)


def test_table_is_extensible(monkeypatch):
    """Rows for functions gpured does not have (yet) are left out, not
    errors; every gpured function the table names is reachable; a gpured
    function that names NumPy's positional parameters otherwise gets them
    by place (a stand-in for a later gpured.vdot(x1, x2, /))."""
    _numpy._table.clear()
    _numpy._build()
    names = {getattr(g, "__name__", None) for g, *_ in _numpy._table.values()}
    for npname, grname in _numpy.FUNCTIONS.items():
        if hasattr(np, npname) and hasattr(gpured, grname):
            assert grname in names, grname
    if hasattr(gpured, "vdot"):
        return

    def vdot(x1, x2, /):
        return gpured.sum(x1 * x2)
    monkeypatch.setattr(gpured, "vdot", vdot, raising=False)
    _numpy._table.clear()
    try:
        a, b = data(), data(seed=3)
        check(np.vdot(gpured.to_device(a), gpured.to_device(b)),
              np.vdot(a, b))
    finally:
        monkeypatch.undo()
        _numpy._table.clear()


# ------------------------------------------- elementwise plan (policy)

GPU = {"gpu": 1, "compute_units": 132, "max_work_group_size": 1024,
       "name": "synthetic GPU"}
CPU = {"gpu": 0, "compute_units": 2, "max_work_group_size": 4096,
       "name": "synthetic CPU"}


def test_ew_plan_rows():
    g = gpured._core.ew_plan_for(GPU, 1 << 28)
    assert (g["wg_size"], g["items"]) == (128, 8)   # plan_elementwise.c's H200 row
    assert g["groups"] == (1 << 28) // (128 * 8) and g["row"].startswith("gpu")
    c = gpured._core.ew_plan_for(CPU, 1000)
    assert c["row"].startswith("cpu") and c["groups"] * c["wg_size"] >= 1000
    small = dict(GPU, max_work_group_size=64)   # the table's 128 clamped
    assert gpured._core.ew_plan_for(small, 1000)["wg_size"] == 64
    k = gpured._core.ew_plan_for(GPU, 1000, wg_size=64, items=4)
    assert (k["wg_size"], k["items"], k["groups"]) == (64, 4, 4)
    with pytest.raises(ValueError, match="power of two"):
        gpured._core.ew_plan_for(GPU, 1000, wg_size=48)


def test_explain_elementwise():
    a = data()
    d = gpured.to_device(a)
    e = gpured.explain("add", (d, 1.0))
    assert e["kernel"] == "gr_elementwise" and e["shape"] == (5, 7)
    assert e["loop"] == [str(a.dtype)] * 3
    assert e["groups"] * e["wg_size"] * e["items"] >= 35
    e = gpured.explain("sqrt", d)
    assert e["loop"] == [str(a.dtype)] * 2
    e = gpured.explain("where", (d > 0, d, np.float32(0)))
    assert e["loop"][0] == "bool" and e["shape"] == (5, 7)


@pytest.mark.parametrize("wg,items", [(64, 3), (16, 1), (32, 100)])
def test_elementwise_knobs_grid_stride(wg, items):
    """Several result elements a work-item (the kernel's grid-stride loop),
    contiguous and strided operands alike."""
    a = data((37, 29))
    d = gpured.to_device(a)
    for x, want in ((d, a), (d.T, a.T), (d[::2, 1::3], a[::2, 1::3])):
        out = gpured.empty(want.shape, want.dtype)
        gpured._core.elementwise(
            "multiply", (x, np.asarray(3, want.dtype)),
            (want.dtype,) * 3, out, wg, items)
        np.testing.assert_array_equal(out.get(), want * 3)
