"""complex64 / complex128 (issue 40) against NumPy: every function x dtype
on small arrays, host arrays and device Arrays.

The componentwise functions (sum, mean, cumsum, var/std, the nan forms,
where=, reduceat add, the by-key sums, gpured.dask) run on the real view
with a trailing axis of 2 (gpured/_complex.py); their values are checked
against NumPy per component within (log2(n) + 4) * 30 eps of the largest
magnitude, result dtypes, shapes and NaN placement exactly (var/std by
relative tolerance).  The others (prod, min/max/arg*, ptp, cumprod...) run
on NumPy and must equal it bit for bit."""
import warnings

import numpy as np
import pytest

import gpured

CDTYPES = [np.complex64, np.complex128]
SHAPES_AXES = [((1,), None), ((7,), None), ((1021,), None), ((5, 7, 3), 0),
               ((5, 7, 3), -1), ((5, 7, 3), (0, 2)), ((40, 33), 1),
               ((40, 33), None)]


def data(dtype, shape, seed=0, nan_frac=0.0):
    rng = np.random.default_rng(seed)
    a = (rng.normal(3, 10, shape) + 1j * rng.normal(-2, 5, shape)).astype(dtype)
    if nan_frac:
        m = rng.random(shape) < nan_frac
        re = rng.random(shape) < 0.5
        a[m & re] = a[m & re].imag * 1j + np.nan          # NaN real part
        a[m & ~re] = a[m & ~re].real + 1j * np.nan        # NaN imaginary part
    return a


def close(got, want, dtype, n=1):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    eps = np.finfo(np.float32 if np.dtype(dtype) == np.complex64
                   else np.float64).eps
    tol = (np.log2(max(n, 2)) + 4) * eps * 30 * max(1.0, float(np.nanmax(
        np.abs(want))) if want.size and not np.isnan(want).all() else 1.0)
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        assert np.array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        assert np.all(np.abs(g[ok] - w[ok]) <= tol), \
            (np.max(np.abs(g[ok] - w[ok])), tol)


def both(a):
    """The host array and its device copy."""
    return [("host", a), ("device", gpured.to_device(a))]


def host(r):
    return r.get() if isinstance(r, gpured.Array) else r


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["sum", "mean", "nansum", "nanmean"])
def test_sums(func, dtype):
    for shape, axis in SHAPES_AXES:
        for nan in (0.0, 0.2):
            a = data(dtype, shape, nan_frac=nan if func.startswith("nan") else 0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = getattr(np, func)(a, axis=axis)
            with warnings.catch_warnings():  # all-NaN slices: NumPy's warning
                warnings.simplefilter("ignore", RuntimeWarning)
                for where, x in both(a):
                    got = getattr(gpured, func)(x, axis=axis)
                    if where == "host" and np.ndim(want) == 0:
                        assert isinstance(got, np.generic)
                    close(host(got), want, dtype, a.size)
                got = getattr(gpured, func)(a, axis=axis, keepdims=True)
                close(got, getattr(np, func)(a, axis=axis, keepdims=True), dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("cols", [256, 8192])
def test_full_sum_columns(dtype, cols, monkeypatch):
    """Full sums and means as (rows, cols) columns then the partials (and
    the rows left over); 8192 is GPU Arrays' width, forced here."""
    from gpured import _complex
    monkeypatch.setattr(_complex, "_COLS_HOST", cols)
    monkeypatch.setattr(_complex, "_COLS_GPU", cols)   # a GPU's Arrays too
    k = cols // 2
    for n in (4 * k, 6 * k, 4 * k + 1, 5 * k + k // 2 + 3, 4 * k - 1):
        a = data(dtype, (n,), seed=n)
        for where, x in both(a):
            close(host(gpured.sum(x)), np.sum(a), dtype, n)
            close(host(gpured.mean(x)), np.mean(a), dtype, n)
            e = gpured.explain("sum", x)   # host arrays: one call
            assert ("columns" in e["complex"]) == (n >= 4 * k and
                                                   where == "device")
        an = data(dtype, (n,), seed=n, nan_frac=0.1)
        m = np.random.default_rng(n).random(n) < 0.6
        for where, x in both(an):
            for func in ("nansum", "nanmean"):
                close(host(getattr(gpured, func)(x)), getattr(np, func)(an),
                      dtype, n)
        for where, x in both(a):
            for wm in (m, gpured.to_device(m)):
                close(host(gpured.sum(x, where=wm)), np.sum(a, where=m), dtype, n)
                close(host(gpured.mean(x, where=wm)), np.mean(a, where=m), dtype, n)
        # var/std: the columns' statistics merged (Chan), far from zero too
        rtol = 2e-5 if dtype == np.complex64 else 1e-12
        for x0 in (a, a + (1000 - 500j), an):
            for where, x in both(x0):
                for func in ("var", "std", "nanvar", "nanstd"):
                    for ddof in (0, 1):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", RuntimeWarning)
                            want = getattr(np, func)(x0, ddof=ddof)
                        got = host(getattr(gpured, func)(x, ddof=ddof))
                        assert np.asarray(got).dtype == np.asarray(want).dtype
                        np.testing.assert_allclose(got, want, rtol=rtol)
                got = host(gpured.var(x, where=m, keepdims=True))
                np.testing.assert_allclose(got, np.var(x0, where=m, keepdims=True),
                                           rtol=rtol)
        b = a[:n - n % 4].reshape(-1, 4)
        close(gpured.sum(b, keepdims=True), np.sum(b, keepdims=True), dtype, n)
        close(gpured.mean(b, keepdims=True), np.mean(b, keepdims=True), dtype, n)
    # all NaN / all masked: NumPy's NaN and warning
    a = np.full(4 * k, complex(np.nan, 1), dtype)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        r = gpured.nanmean(a)
    assert np.isnan(r.real) and np.isnan(r.imag)
    assert gpured.nansum(a) == 0
    # non-contiguous input: the (n, 2) plan
    a = data(dtype, (64, 1024))[:, ::2]
    close(gpured.sum(a), np.sum(a), dtype, a.size)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_sum_args(dtype):
    a = data(dtype, (6, 9))
    ct = np.dtype(dtype)
    # dtype=, out=, initial=, where=
    close(gpured.sum(a, axis=0, dtype=np.complex128),
          np.sum(a, axis=0, dtype=np.complex128), np.complex128)
    out = np.empty(9, ct)
    assert gpured.sum(a, axis=0, out=out) is out
    close(out, np.sum(a, axis=0), dtype)
    close(gpured.sum(a, axis=1, initial=2 - 3j),
          np.sum(a, axis=1, initial=2 - 3j), dtype)
    m = np.random.default_rng(1).random((6, 9)) < 0.5
    for w in (m, m[0], False):
        close(gpured.sum(a, axis=0, where=w), np.sum(a, axis=0, where=w), dtype)
        close(gpured.mean(a, axis=1, where=m), np.mean(a, axis=1, where=m), dtype)
    d = gpured.to_device(a)
    close(host(gpured.sum(d, axis=0, where=gpured.to_device(m))),
          np.sum(a, axis=0, where=m), dtype)
    close(host(gpured.nansum(d, axis=0, where=m)),
          np.nansum(a, axis=0, where=m), dtype)
    # a real dtype=: NumPy's ComplexWarning, the real part
    with pytest.warns(np.exceptions.ComplexWarning):
        r = gpured.sum(a, dtype=np.float64)
    assert r == pytest.approx(np.sum(a.real, dtype=np.float64))
    with pytest.raises(TypeError):
        gpured.sum(a, axis=0, out=np.empty(9, np.float64))
    with pytest.raises(np.exceptions.AxisError):
        gpured.sum(a, axis=2)
    with pytest.raises(TypeError, match="does not support"):
        gpured.sum(np.ones(3, np.clongdouble))
    # lists of Python complex numbers, 0-d arrays, empty arrays
    close(gpured.sum([1 + 2j, 3 - 1j]), np.sum([1 + 2j, 3 - 1j]), np.complex128)
    close(gpured.sum(np.array(1 + 2j, ct)), np.sum(np.array(1 + 2j, ct)), dtype)
    close(gpured.sum(np.zeros((0, 3), ct), axis=0), np.zeros(3, ct), dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["var", "std", "nanvar", "nanstd"])
def test_var(func, dtype):
    for shape, axis in SHAPES_AXES:
        a = data(dtype, shape, nan_frac=0.2 if func.startswith("nan") else 0)
        for ddof in (0, 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = getattr(np, func)(a, axis=axis, ddof=ddof)
                for where, x in both(a):
                    got = host(getattr(gpured, func)(x, axis=axis, ddof=ddof))
                    assert np.asarray(got).dtype == np.asarray(want).dtype
                    np.testing.assert_allclose(
                        got, want, rtol=2e-5 if dtype == np.complex64 else 1e-12)
    a = data(dtype, (8, 5))
    m = np.random.default_rng(2).random((8, 5)) < 0.7
    np.testing.assert_allclose(gpured.var(a, axis=0, where=m),
                               np.var(a, axis=0, where=m), rtol=2e-5)
    out = np.empty(5, np.asarray(np.var(a, axis=0)).dtype)
    assert gpured.std(a, axis=0, out=out) is out
    np.testing.assert_allclose(out, np.std(a, axis=0), rtol=2e-5)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["cumsum", "nancumsum"])
def test_cumsum(func, dtype):
    for shape, axis in [((1,), None), ((300,), None), ((300,), 0),
                        ((5, 7, 3), 1), ((5, 7, 3), None), ((40, 33), 0),
                        ((40, 33), -1)]:
        a = data(dtype, shape, nan_frac=0.2 if func == "nancumsum" else 0)
        want = getattr(np, func)(a, axis=axis)
        for where, x in both(a):
            got = host(getattr(gpured, func)(x, axis=axis))
            assert got.dtype == want.dtype
            close(got, want, dtype, a.size)
    # device scans laid out as rows (_complex._scan_rows), out= too
    a = data(dtype, (3, 700))
    d = gpured.to_device(a)
    for axis in (1, None):
        close(gpured.cumsum(d, axis=axis).get(), np.cumsum(a, axis=axis), dtype,
              a.size)
    close(gpured.nancumsum(d, axis=1, exclusive=True).get()[:, 1:],
          np.cumsum(a, axis=1)[:, :-1], dtype, a.size)
    o = gpured.empty((3, 700), np.complex128)
    assert gpured.cumsum(d, axis=1, out=o) is o
    close(o.get(), np.cumsum(a, axis=1, dtype=np.complex128), np.complex128)
    e = gpured.explain("cumsum", d, 1)
    assert "complex" in e
    a = data(dtype, (50,))
    out = np.empty(50, np.complex128)
    assert gpured.cumsum(a, out=out) is out
    close(out, np.cumsum(a, dtype=np.complex128), np.complex128)
    close(gpured.cumulative_sum(a, include_initial=True),
          np.concatenate([[0], np.cumsum(a)]).astype(dtype), dtype)
    dd = gpured.to_device(a)
    close(gpured.cumulative_sum(dd, include_initial=True).get(),
          np.concatenate([[0], np.cumsum(a)]).astype(dtype), dtype)
    u = unit_data(dtype, (50,))  # (the products on the device: no overflow)
    prod_close(gpured.cumulative_prod(gpured.to_device(u),
                                      include_initial=True),
               np.concatenate([[1], np.cumprod(u)]).astype(dtype), dtype)
    assert "gpured.Array" in repr(dd) and str(dtype.__name__) in repr(dd)
    ex = gpured.cumsum(a, exclusive=True)
    close(ex, np.concatenate([[0], np.cumsum(a)[:-1]]).astype(dtype), dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_reduceat(dtype):
    a = data(dtype, (30, 4))
    idx = [0, 4, 4, 10, 29]
    for op in ("add", "multiply", "minimum", "maximum"):
        want = getattr(np, op).reduceat(a, idx, axis=0)
        for where, x in both(a):
            got = host(gpured.reduceat(x, idx, axis=0, op=op))
            if op == "add":
                close(got, want, dtype, 30)
            else:
                np.testing.assert_array_equal(got, want)
    close(gpured.reduceat(a, [0, 2], axis=1), np.add.reduceat(a, [0, 2], axis=1),
          dtype)


def lexi_data(dtype):
    """Ties in the real part (the imaginary part decides), NaN in either
    part, infinities."""
    a = np.array([3 + 1j, 3 - 2j, -1 + 5j, -1 + 4j, 7 + 0j, 7 + 1j, -1 + 4j,
                  2 + 2j], dtype)
    b = a.copy()
    b[2] = complex(np.nan, 0)
    c = a.copy()
    c[5] = complex(0, np.nan)
    return a, b, c


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", ["min", "max", "nanmin", "nanmax",
                                  "argmin", "argmax", "nanargmin",
                                  "nanargmax", "ptp", "all", "any",
                                  "count_nonzero"])
def test_numpy_family(func, dtype):
    """NumPy's own computation (no complex kernels): equal to NumPy, host
    and device, and knobs name why they do not apply."""
    for a in lexi_data(dtype):
        for x in (a, a.reshape(2, 4)):
            for axis in (None, 0):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = getattr(np, func)(x, axis=axis)
                    for where, d in both(x):
                        got = getattr(gpured, func)(d, axis=axis)
                        assert isinstance(got, gpured.Array) == (where == "device")
                        np.testing.assert_array_equal(host(got), want)
    with pytest.raises(gpured.VariantUnavailable, match="complex"):
        getattr(gpured, func)(lexi_data(dtype)[0], variant="naive")


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_cummin_cummax(dtype):
    """NumPy's minimum / maximum.accumulate bit for bit (NaN in either part
    first, ties, signed zeros) on the device: a user scan of vector
    states; a device Array stays there; a dtype= of another type takes
    NumPy's route (host input)."""
    a = lexi_data(dtype)[0]
    np.testing.assert_array_equal(gpured.cummin(a), np.minimum.accumulate(a))
    got = gpured.cummax(gpured.to_device(a))
    assert isinstance(got, gpured.Array)
    np.testing.assert_array_equal(host(got), np.maximum.accumulate(a))
    rng = np.random.default_rng(7)
    m = (rng.integers(-2, 3, (3, 5000)) + 1j * rng.integers(-2, 3, (3, 5000))
         ).astype(dtype)
    m[1, 99] = complex(np.nan, 1)
    m[2, 4000] = complex(1, np.nan)
    rv = np.float32 if dtype == np.complex64 else np.float64
    for f, u in (("cummin", np.minimum), ("cummax", np.maximum)):
        for axis in (0, 1):
            want = u.accumulate(m, axis=axis)
            got = host(getattr(gpured, f)(gpured.to_device(m), axis=axis))
            np.testing.assert_array_equal(got.view(rv), want.view(rv))
    wide = np.complex128 if dtype == np.complex64 else np.complex64
    np.testing.assert_array_equal(
        gpured.cummax(a, dtype=wide), np.maximum.accumulate(a, dtype=wide))


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_device_arrays(dtype):
    """to_device / get / views / astype of complex Arrays."""
    a = data(dtype, (6, 10))
    d = gpured.to_device(a)
    assert d.dtype == np.dtype(dtype) and d.shape == a.shape
    np.testing.assert_array_equal(d.get(), a)
    np.testing.assert_array_equal(np.asarray(d[1:5, ::3]), a[1:5, ::3])
    np.testing.assert_array_equal(d.T.get(), a.T)
    np.testing.assert_array_equal(d.copy().get(), a)
    other = np.complex128 if dtype == np.complex64 else np.complex64
    np.testing.assert_array_equal(d.astype(other).get(), a.astype(other))
    np.testing.assert_array_equal(
        gpured.to_device(a.real.copy()).astype(dtype).get(), a.real.astype(dtype))
    with pytest.warns(np.exceptions.ComplexWarning):
        r = d.astype(np.float64).get()
    np.testing.assert_array_equal(r, a.real.astype(np.float64))
    z = gpured.zeros(4, dtype)
    np.testing.assert_array_equal(z.get(), np.zeros(4, dtype))
    close(d.sum(axis=1).get(), a.sum(axis=1), dtype)
    close(d.mean().get(), a.mean(), dtype)
    np.testing.assert_allclose(d.var().get(), a.var(), rtol=2e-5)
    close(d.cumsum(axis=0).get(), a.cumsum(axis=0), dtype)
    out = gpured.empty(10, dtype)
    assert gpured.sum(d, axis=0, out=out) is out
    close(out.get(), a.sum(axis=0), dtype)


def test_explain_complex():
    """explain() of a complex call describes the real view's plan, and the
    NumPy family says why it has no kernel."""
    a = data(np.complex64, (1000,))
    e = gpured.explain("sum", a)
    assert e["complex"].startswith("complex64 as float32 (..., 2)")
    assert "variant" in e and "why" in e
    e = gpured.explain("var", a.reshape(10, 100), 1)
    assert "var(re) + var(im)" in e["complex"]
    e = gpured.explain("max", a)
    assert e["variant"] == "numpy" and "no complex kernel" in e["why"]
    for op in ("prod", "nancumprod"):
        e = gpured.explain(op, a)
        assert "float2" in e["complex"] and e["variant"] != "numpy"
    e = gpured.explain("argmax", gpured.to_device(a.reshape(10, 100)), 1)
    assert "one pass" in e["complex"] and e["variant"] != "numpy"
    e = gpured.explain("reduceat", a, 0, indices=[0, 5])
    assert e["complex"].startswith("complex64")


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_by_key(dtype):
    """sum_by_key / reduce_by_key / scan_by_key of complex values (two real
    calls) against NumPy's bincount / add.reduceat / cumsum per run."""
    rng = np.random.default_rng(5)
    keys = np.sort(rng.integers(0, 7, 300)).astype(np.int32)
    v = data(dtype, (300,))
    want = (np.bincount(keys, v.real, 7) + 1j * np.bincount(keys, v.imag, 7))
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    for where, (k, x) in (("host", (keys, v)),
                          ("device", (gpured.to_device(keys), gpured.to_device(v)))):
        got = host(gpured.sum_by_key(k, x, 7))
        close(got, want.astype(dtype), dtype, 300)
        if dtype == np.complex128:
            ex = host(gpured.sum_by_key(k, x, 7, exact=True))
            close(ex, want, dtype, 300)
        uk, rv = gpured.reduce_by_key(k, x)
        np.testing.assert_array_equal(host(uk), keys[starts])
        close(host(rv), np.add.reduceat(v, starts), dtype, 300)
        sc = host(gpured.scan_by_key(k, x))
        ref = np.concatenate([np.cumsum(s) for s in np.split(v, starts[1:])])
        close(sc, ref, dtype, 300)
        np.testing.assert_array_equal(host(gpured.reduce_by_key(k, x, "count")[1]),
                                      np.diff(np.r_[starts, 300]))
        with pytest.raises(TypeError, match="complex"):
            gpured.sum_by_key(k, x, 7, op="max")


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_dask(dtype):
    """gpured.dask's sum/mean/var/std and nan forms of complex chunks (host
    and device-resident) against NumPy on the whole array."""
    da = pytest.importorskip("dask.array")
    import gpured.dask as gd
    a = data(dtype, (40, 30), nan_frac=0.1)
    b = data(dtype, (40, 30))
    for x0, funcs in ((b, ("sum", "mean", "var", "std")),
                      (a, ("nansum", "nanmean", "nanvar", "nanstd"))):
        x = da.from_array(x0, chunks=(16, 12))
        xd = gd.to_device(x)
        m = np.random.default_rng(3).random((40, 30)) < 0.7
        for func in funcs:
            for axis in (None, -1):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = getattr(np, func)(x0, axis=axis)
                    for xx in (x, xd):
                        got = np.asarray(getattr(gd, func)(xx, axis=axis).compute())
                        got = np.asarray(host(got) if isinstance(got, gpured.Array) else got)
                        assert got.dtype == np.asarray(want).dtype, func
                        np.testing.assert_allclose(
                            got, want, rtol=1e-4 if dtype == np.complex64 else 1e-11)
            if func in ("sum", "mean", "nansum"):
                got = getattr(gd, func)(x, axis=0, where=m).compute()
                np.testing.assert_allclose(got, getattr(np, func)(x0, axis=0, where=m),
                                           rtol=1e-4)
        with pytest.raises(TypeError, match="complex"):
            gd.prod(x)


def test_variants_complex():
    """variants(): the real dtype's for the view functions, none for the
    NumPy family; a listed variant runs on complex input."""
    v = gpured.variants("sum", "complex64")
    assert v == gpured.variants("sum", "float32")
    assert gpured.variants("max", "complex128") == []
    assert gpured.variants("prod", "complex128") == \
        gpured.ReductionKernel.variants()
    a = data(np.complex64, (300,))
    for name in v[1:3]:
        close(gpured.sum(a, variant=name), np.sum(a), np.complex64, 300)


def test_timeit_complex():
    a = data(np.complex128, (64, 10))
    t = gpured.timeit("sum", a, 0, reps=2)
    close(t["result"], np.sum(a, axis=0), np.complex128, 64)
    assert t["seconds"] > 0 and "complex" in t
    t = gpured.timeit("cumsum", a, 1, reps=2)
    close(t["result"], np.cumsum(a, axis=1), np.complex128, 640)
    with pytest.raises(gpured.VariantUnavailable, match="NumPy"):
        gpured.timeit("max", a)
    assert "float2" in gpured.explain("prod", a.astype(np.complex64))[
        "complex"]  # (timeit: the same route, kernel.timeit)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_lexi_device(dtype):
    """argmin/argmax/min/max/ptp of device Arrays in one device pass each
    (_complex.lexi with _kernels.cx_extreme): NumPy's lexicographic
    order, first NaN (in either part) wins, ties in the real part decided by the imaginary, the
    first of equal elements, signed zeros and infinities kept, bit for
    bit against NumPy."""
    rng = np.random.default_rng(7)
    re = rng.integers(-2, 3, (9, 11)).astype(np.float64)
    im = rng.integers(-2, 3, (9, 11)).astype(np.float64)
    base = (re + 1j * im).astype(dtype)
    cases = [base]
    c = base.copy()
    c[2, 3] = complex(np.nan, 1)
    c[5, 7] = complex(1, np.nan)
    c[7, 1] = complex(np.nan, np.nan)
    cases.append(c)
    c = base.copy()
    c[:, 4] = complex(np.inf, -np.inf)
    c[3, :] = complex(-np.inf, 2)
    c[0, 0] = complex(-0.0, -0.0)
    c[1, 1] = complex(0.0, -0.0)
    cases.append(c)
    # signed zeros only: every element equal, the first one's signs win
    z = np.array([complex(0.0, -0.0), complex(-0.0, 0.0), complex(-0.0, -0.0),
                  complex(0.0, 0.0)] * 3, dtype).reshape(3, 4)
    cases += [z, z[::-1, ::-1].copy()]
    for x0 in cases:
        d = gpured.to_device(x0)
        for func in ("argmin", "argmax", "min", "max", "ptp"):
            for axis in (None, 0, 1, -1):
                for keepdims in (False, True):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        want = getattr(np, func)(x0, axis=axis, keepdims=keepdims)
                        got = getattr(gpured, func)(d, axis=axis, keepdims=keepdims)
                    assert isinstance(got, gpured.Array)
                    got = got.get()
                    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
                    np.testing.assert_array_equal(got, want)
                    if func in ("min", "max"):
                        w = np.asarray(want)
                        assert np.array_equal(np.signbit(got.real), np.signbit(w.real))
                        assert np.array_equal(np.signbit(got.imag), np.signbit(w.imag))
        if np.isnan(x0).any(axis=0).all():
            continue
        for func in ("nanargmin", "nanargmax"):
            for axis in (None, 0):
                np.testing.assert_array_equal(
                    getattr(gpured, func)(d, axis=axis).get(),
                    getattr(np, func)(x0, axis=axis))
        # a strided view
        v = d[::2, 1::3]
        np.testing.assert_array_equal(gpured.argmax(v, axis=0).get(),
                                      np.argmax(x0[::2, 1::3], axis=0))
    with pytest.raises(ValueError):
        gpured.argmin(gpured.to_device(np.zeros((0, 3), dtype)), axis=0)
    # nanarg*: +-inf + 0j stand for the NaN elements, as NumPy's; all-NaN
    # slices raise
    x0 = np.array([[complex(np.nan, 1), complex(np.inf, 0), 1 + 1j],
                   [complex(np.inf, -1), complex(0, np.nan), -np.inf + 0j]], dtype)
    d = gpured.to_device(x0)
    for func in ("nanargmin", "nanargmax"):
        for axis in (None, 0, 1):
            np.testing.assert_array_equal(getattr(gpured, func)(d, axis=axis).get(),
                                          getattr(np, func)(x0, axis=axis))
    x0[:, 0] = complex(np.nan, 0)
    with pytest.raises(ValueError, match="All-NaN"):
        gpured.nanargmin(gpured.to_device(x0), axis=0)


# ------------------------------------ products on the device (issue 40)

def unit_data(dtype, shape, seed=1, nan_frac=0.0):
    """Values near unit modulus (long products neither overflow nor
    vanish), NaN in either part where nan_frac."""
    rng = np.random.default_rng(seed)
    a = (np.exp(1j * rng.uniform(-np.pi, np.pi, shape)) *
         rng.uniform(0.9, 1.1, shape)).astype(dtype)
    if nan_frac:
        m = rng.random(shape) < nan_frac
        re = rng.random(shape) < 0.5
        a[m & re] = a[m & re].imag * 1j + np.nan
        a[m & ~re] = a[m & ~re].real + 1j * np.nan
    return a


def prod_close(got, want, dtype):
    """The products' rounding order differs from NumPy's: a relative
    tolerance (NaN placement exact)."""
    got, want = np.asarray(host(got)), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol = 2e-4 if np.dtype(dtype) == np.complex64 else 1e-11
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_prod_device(dtype):
    """prod / nanprod run as device kernels: NumPy's values (relative
    tolerance), dtypes and shapes; a device Array in, a device Array out."""
    # (each geometry is a program build or two: few of them, the second
    # dtype fewer still)
    cases = [((1021,), None), ((3, 0), 1)]
    if dtype == np.complex64:
        cases += [((5, 7, 3), (0, 2)), ((40, 33), 1)]
    for shape, axis in cases:
        a = unit_data(dtype, shape, nan_frac=0.1)
        for func in ("prod", "nanprod")[:1 + (shape == (1021,))]:
            for keepdims in (False, True)[:1 + (len(shape) == 3)]:
                want = getattr(np, func)(a, axis=axis, keepdims=keepdims)
                for where, x in both(a):
                    got = getattr(gpured, func)(x, axis=axis,
                                                keepdims=keepdims)
                    assert isinstance(got, gpured.Array) == (where == "device")
                    prod_close(got, want, dtype)


def test_prod_options():
    """dtype=, out=, where=, initial= as NumPy's (one dtype: the kernels
    are the ones test_prod_device runs); a real dtype= casts as NumPy's
    (the real parts, a ComplexWarning); what has no kernel (bool) is
    NumPy's answer on the host and a TypeError naming np.asarray for a
    device Array (never a silent copy)."""
    dtype = np.complex64
    a = unit_data(dtype, (6, 50), nan_frac=0.05)
    d = gpured.to_device(a)
    w = np.random.default_rng(3).random((6, 50)) < 0.7
    with np.errstate(invalid="ignore"):
        prod_close(gpured.prod(d, axis=1, dtype=np.complex128),
                   np.prod(a, axis=1, dtype=np.complex128), np.complex128)
        prod_close(gpured.nanprod(d, axis=0, where=w),
                   np.nanprod(a, axis=0, where=w), dtype)
        prod_close(gpured.nanprod(a, where=gpured.to_device(w)),
                   np.nanprod(a, where=w), dtype)
        prod_close(gpured.nanprod(d, axis=1, initial=2 - 1j),
                   np.nanprod(a, axis=1, initial=2 - 1j), dtype)
        prod_close(gpured.nanprod(a, initial=0.5j),
                   np.nanprod(a, initial=0.5j), dtype)
        o = gpured.empty((6,), dtype)
        assert gpured.nanprod(d, axis=1, out=o) is o
        prod_close(o, np.nanprod(a, axis=1), dtype)
        oh = np.empty((6, 1), dtype)
        assert gpured.nanprod(d, axis=1, keepdims=True, out=oh) is oh
        prod_close(oh, np.nanprod(a, axis=1, keepdims=True), dtype)
    b = unit_data(dtype, (6, 50))
    with pytest.warns(np.exceptions.ComplexWarning):
        got = gpured.prod(gpured.to_device(b), axis=1, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        want = np.prod(b, axis=1, dtype=np.float64)
        np.testing.assert_allclose(got.get(), want, rtol=1e-12)
        assert got.dtype == want.dtype
        with pytest.raises(TypeError, match="np.asarray"):
            gpured.prod(d, dtype=bool)
        np.testing.assert_array_equal(gpured.prod(a, dtype=bool),
                                      np.prod(a, dtype=bool))


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_cumprod_device(dtype):
    """cumprod / nancumprod through the user scan: NumPy's values, host
    and device, axes, NaNs, empty, out=, dtype=, exclusive."""
    for shape, axis in [((1500,), None), ((5, 7, 3), 0), ((3, 0), 1)][
            :3 - 2 * (dtype != np.complex64)]:
        a = unit_data(dtype, shape, nan_frac=0.05)
        for func in ("cumprod", "nancumprod")[:1 + (shape == (1500,))]:
            want = getattr(np, func)(a, axis=axis)
            for where, x in both(a):
                got = getattr(gpured, func)(x, axis=axis)
                assert isinstance(got, gpured.Array) == (where == "device")
                prod_close(got, want, dtype)
    a = unit_data(dtype, (4, 300))
    d = gpured.to_device(a)
    if dtype == np.complex64:
        prod_close(gpured.cumprod(d, axis=1, dtype=np.complex128),
                   np.cumprod(a, axis=1, dtype=np.complex128), np.complex128)
    o = gpured.empty((4, 300), dtype)
    assert gpured.cumprod(d, axis=0, out=o) is o
    prod_close(o, np.cumprod(a, axis=0), dtype)
    ex = np.concatenate([np.ones((4, 1), dtype), np.cumprod(a, axis=1)[:, :-1]],
                        axis=1)
    prod_close(gpured.cumprod(d, axis=1, exclusive=True), ex, dtype)
    with pytest.raises(TypeError, match="np.asarray"):
        gpured.cumprod(d, dtype=bool)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_user_sums(dtype):
    """sum / mean along trailing axes and nansum / nanmean along any axes
    as user kernels of float2 / double2 elements (gpured/_kernels.py
    cx_sum): host arrays and device Arrays against NumPy, keepdims, out=,
    dtype=, initial=, empty slices, NaN in either part, infinities, and
    the compensated accuracy (a cancelling row against math.fsum)."""
    import math
    ct = np.dtype(dtype)
    other = np.complex128 if ct == np.complex64 else np.complex64
    cases = [("sum", (30, 257), 1), ("mean", (4, 6, 33), (1, 2)),
             ("nansum", (37, 5), 0), ("nanmean", (6, 7, 5), 1),
             ("nansum", (513,), None), ("nanmean", (9, 40), -1),
             ("mean", (3, 0), 1), ("nanmean", (0, 4), 0)]
    for func, shape, axis in cases:
        a = data(dtype, shape, seed=len(shape), nan_frac=0.2 if
                 func.startswith("nan") else 0.0)
        if func == "nanmean" and a.size:
            a[..., 0, :] = complex(np.nan, 1)  # an all-NaN slice along 0 / 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for kd in (False, True):
                want = getattr(np, func)(a, axis=axis, keepdims=kd)
                for where, x in both(a):
                    got = getattr(gpured, func)(x, axis=axis, keepdims=kd)
                    assert isinstance(got, gpured.Array) == (where == "device")
                    close(host(got), want, dtype, a.size)
        e = gpured.explain(func, a, axis)
        assert "user kernel" in e["complex"], e["complex"]
    # NumPy's warning for a slice that keeps nothing (host input)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        gpured.nanmean(np.full((3, 4), complex(1, np.nan), ct), axis=1)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        gpured.mean(np.zeros((2, 0), ct), axis=1)
    # NaN propagates in plain sums; infinities stay infinite (TwoSum's
    # error term is NaN there)
    a = data(dtype, (4, 9))
    a[1, 3] = complex(np.nan, 0)
    a[2, 2] = complex(np.inf, -np.inf)
    for where, x in both(a):
        for func in ("sum", "nansum", "mean", "nanmean"):
            with np.errstate(invalid="ignore"):
                want = getattr(np, func)(a, axis=1)
            got = host(getattr(gpured, func)(x, axis=1))
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-5)  # inf == inf
    # dtype=, out= (host and device), initial=
    a = data(dtype, (8, 65))
    for where, x in both(a):
        close(host(gpured.sum(x, axis=1, dtype=other)),
              np.sum(a, axis=1, dtype=other), np.complex64, 65)
        close(host(gpured.nanmean(x, axis=0, dtype=other)),
              np.nanmean(a, axis=0, dtype=other), np.complex64, 8)
        for out in (np.empty(8, other), gpured.empty(8, other)):
            assert gpured.mean(x, axis=1, out=out) is out
            close(host(out), np.mean(a, axis=1, out=np.empty(8, other)), np.complex64, 65)
        close(host(gpured.nansum(x, axis=1, initial=2 - 1j)),
              np.nansum(a, axis=1, initial=2 - 1j), dtype, 65)
    with pytest.raises(TypeError):
        gpured.nansum(a, axis=1, out=np.empty(8, np.float64))
    # compensated: components that cancel
    big = 1e30 if ct == np.complex128 else 1e8
    row = np.array([1, big, 1, -big, 3, big, -big, 1] * 8, np.float64)
    a = (row + 1j * row[::-1]).astype(dtype).reshape(2, 32)
    for where, x in both(a):
        r = host(gpured.sum(x, axis=1))
        for i in range(2):
            re = math.fsum(a[i].real.astype(np.float64))
            im = math.fsum(a[i].imag.astype(np.float64))
            assert r[i] == ct.type(complex(re, im)), (r[i], re, im)


def test_user_sums_no_fp64(monkeypatch):
    """A device without fp64: complex64 sums in float2 with TwoSum per
    part, nanmean divided by a counting pass (forced here: PoCL has
    fp64)."""
    from gpured import _kernels
    monkeypatch.setattr(_kernels, "_device_fp64", lambda args: False)
    a = data(np.complex64, (6, 300), seed=4, nan_frac=0.1)
    d = gpured.to_device(a)
    close(gpured.nanmean(d, axis=1).get(), np.nanmean(a, axis=1), np.complex64, 300)
    close(gpured.nansum(a, axis=1), np.nansum(a, axis=1), np.complex64, 300)
    assert "float2, TwoSum" in gpured.explain("nanmean", d, 1)["complex"]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_mean_nan_inf_spread_as_numpy(dt):
    """NumPy's complex mean divides the sum by the count as a complex
    division: a NaN or an inf part makes the other part NaN (mean([1j,
    nan]) is nan+nanj), and signed zeros follow that rule too; every route
    gives NumPy's bits: the host's one call, the (rows, C) full mean, the
    real view's column means (host and device, out= too), the user
    kernels along rows, where=, nanmean's masked route, and gpured.dask."""
    import warnings
    rt = np.float32 if dt == np.complex64 else np.float64

    def same(got, want):
        g = np.asarray(got.get() if isinstance(got, gpured.Array) else got,
                       dtype=dt).reshape(-1).view(rt)
        w = np.asarray(want, dtype=dt).reshape(-1).view(rt)
        # NaN and inf where NumPy has them, zeros' signs as NumPy's; the
        # finite values to rounding (NumPy multiplies by 1 / n, gpured
        # divides by n)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
        np.testing.assert_array_equal(np.signbit(g[w == 0]),
                                      np.signbit(w[w == 0]))
        np.testing.assert_allclose(g, w, rtol=1e-6 if rt == np.float32
                                   else 1e-14, equal_nan=True)
    base = np.array([1 + 1j, np.nan, -0.0 - 0.0j, complex(2, np.inf),
                     complex(-np.inf, 1), 3 - 1j], dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for a in (base[[0, 1]], base[[0, 3]], base[[4, 5]], base[[2, 2]],
                  base[[0, 5]], np.resize(base, 5000)):
            want = np.mean(a)
            same(gpured.mean(a), want)
            same(gpured.mean(gpured.to_device(a)), want)
            same(gpured.mean(a, where=np.ones(a.shape, bool)), want)
            a2 = np.stack([a, a[::-1], a], axis=1)
            for ax in (0, 1):
                same(gpured.mean(a2, axis=ax), np.mean(a2, axis=ax))
                same(gpured.mean(gpured.to_device(a2), axis=ax),
                     np.mean(a2, axis=ax))
            o = gpured.empty(3, dt)
            gpured.mean(gpured.to_device(a2), axis=0, out=o)
            same(o, np.mean(a2, axis=0))
            ho = np.empty(3, dt)
            gpured.mean(a2, axis=0, out=ho)
            same(ho, np.mean(a2, axis=0))
            b = np.where(np.isnan(a.real) | np.isnan(a.imag), np.nan, a)
            same(gpured.nanmean(b, where=np.ones(b.shape, bool)),
                 np.nanmean(b))
        try:
            import dask.array as da
            import gpured.dask as gd
        except ImportError:  # pragma: no cover - the test extras have dask
            return
        a = np.resize(base, 24)
        same(gd.mean(da.from_array(a, chunks=5)).compute(), np.mean(a))
