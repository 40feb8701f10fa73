"""var, std, nanvar, nanstd against NumPy: one pass of shifted sums
(kernels/common.cl GR_VAR: sum of y = x - K and of y * y, K an element of
the slice), finished in the kernels over max(n - ddof, 0); nanvar's count
of non-NaN elements per slice from a counting pass (device input) or the
host.  dtypes, axes, keepdims, ddof/correction, dtype=/out=, accuracy far
from zero, every reduce variant, streamed pieces (the host's shift), host
and device operands, both placements, NumPy's warnings and edge answers."""
import warnings

import numpy as np
import pytest

import gpured
from test_nan import check, placed
from test_nanmean import data as nm_data

FUNCS = ["var", "std", "nanvar", "nanstd"]
CASES = [((1,), None), ((2,), None), ((7,), None), ((1021,), None),
         ((65537,), None), ((5, 7, 3), 0), ((5, 7, 3), -1), ((5, 7, 3), (0, 2)),
         ((300, 129), 1), ((300, 129), 0), ((3, 40000), 1)]


def fp64_ok(dtype):
    return np.dtype(dtype) != np.float64 or gpured.get_device()["fp64"]


def data(dtype, shape, seed=0, nan_frac=0.0, center=3.0):
    """test_nanmean's data (N(3, 10) floats, NaNs at nan_frac), centred at
    `center` for floats."""
    a = nm_data(dtype, shape, seed, nan_frac)
    return a + a.dtype.type(center - 3.0) if a.dtype.kind == "f" else a


def want_of(func, a, **kw):
    """NumPy's answer, computed from float64 data (NumPy's float32 var
    sums in float32 along an axis and is the less accurate one), in the
    dtype NumPy's own call gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        kind = np.asarray(getattr(np, func)(a, **kw)).dtype
        wide = a.astype(np.float64) if a.dtype == np.float32 else a
        return np.asarray(getattr(np, func)(wide, **kw)).astype(kind)


def tol(want):
    want = np.asarray(want)
    finite = want[np.isfinite(want)] if want.size else want
    scale = 1 + (np.abs(finite).max() if finite.size else 0)
    return (1e-12 if want.dtype == np.float64 else 2e-6) * scale


def run(func, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(gpured, func)(a, **kw)


@pytest.mark.parametrize("mode", ["auto", "current"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("func", FUNCS)
def test_var_matches_numpy(func, dtype, mode):
    if not fp64_ok(dtype):
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")
    nan_frac = 0.2 if func.startswith("nan") else 0.0
    with placed(mode):
        for shape, axis in CASES:
            a = data(dtype, shape, seed=len(shape) + int(np.prod(shape)) % 7,
                     nan_frac=nan_frac)
            for kw in ({}, {"keepdims": True, "ddof": 1}):
                want = want_of(func, a, axis=axis, **kw)
                got = run(func, a, axis=axis, **kw)
                what = "%s(%s %s, axis=%s, %s) %s" % (func, a.dtype, shape, axis, kw, mode)
                assert np.asarray(got).dtype == want.dtype, what
                assert np.shape(got) == want.shape, what
                check(got, want, tol(want), what)
        # a strided view
        a = data(dtype, (40, 33), nan_frac=nan_frac)
        want = want_of(func, a[::3, ::2], axis=1)
        check(run(func, a[::3, ::2], axis=1), want, tol(want), "strided")


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_var_accurate_far_from_zero(mode):
    # values ~1e4 (float32) / ~1e9 (float64) with spread 1: E[x^2] - E[x]^2
    # loses every digit there; the shifted sums keep NumPy's two passes'
    rng = np.random.default_rng(7)
    with placed(mode):
        for dtype, center in ((np.float32, 1e4), (np.float64, 1e9)):
            if not fp64_ok(dtype):
                continue
            a = (center + rng.standard_normal(200003)).astype(dtype)
            exact = np.var(a.astype(np.longdouble))
            naive = np.mean(a * a) - np.mean(a) ** 2  # in the input's dtype
            assert abs(naive - exact) > 1e-3 * exact  # the trap is real
            for func, ref in (("var", exact), ("std", np.sqrt(exact))):
                got = float(gpured.__dict__[func](a))
                assert abs(got - float(ref)) <= 1e-5 * float(ref), (func, dtype, got, ref)
            b = a[:401 * 498].reshape(401, 498)
            want = np.var(b.astype(np.longdouble), axis=0).astype(np.float64)
            got = np.asarray(gpured.var(b, axis=0), np.float64)
            assert np.max(np.abs(got - want) / want) < 1e-5, dtype
            # a first element far out (the shift) still gives every digit
            c = a.copy()
            c[0] = center + 1e3
            exact = float(np.var(c.astype(np.longdouble)))
            got = float(gpured.var(c))
            assert abs(got - exact) <= 1e-4 * exact, (dtype, got, exact)


@pytest.mark.parametrize("func", ["var", "nanstd"])
def test_var_every_variant(func):
    # the two-part state through every variant's combine and both passes
    dtype = np.float32
    with placed("current"):
        for variant in gpured.variants(func, dtype):
            for shape, axis in (((7,), None), ((65537,), None), ((300, 129), 1),
                                ((300, 129), 0)):
                a = data(dtype, shape, seed=5, nan_frac=0.2 if "nan" in func else 0)
                want = want_of(func, a, axis=axis)
                check(run(func, a, axis=axis, variant=variant), want, tol(want),
                      "%s(%s %s, axis=%s, variant=%r)" % (func, a.dtype, shape, axis, variant))
        with pytest.raises(gpured.VariantUnavailable, match="two sums"):
            run(func, data(dtype, (100,)), variant="atomic")
    assert "atomic" not in gpured.variants(func, dtype)


def test_var_streamed_pieces():
    # host input streamed in pieces: the host picks the shift (nanvar: the
    # first element that is not NaN) and every piece subtracts it
    old = gpured.set_staging(chunk_bytes=1 << 16, buffers=2, min_bytes=0, force=True)
    try:
        a = data(np.float32, (300001,), seed=9, center=5e3)
        b = a.copy()
        b[:3] = np.nan
        b[1000:1100] = np.nan
        before = gpured.staging()["streams"]
        with placed("current"):
            for func, x in (("var", a), ("std", a), ("nanvar", b), ("nanstd", b)):
                want = want_of(func, x, ddof=1)
                check(run(func, x, ddof=1), want, tol(want), func + " streamed")
        assert gpured.staging()["streams"] > before
    finally:
        gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes",
                                                  "force", "threads")})


def test_var_device_arrays():
    a = data(np.float32, (300, 129), seed=2, nan_frac=0.1)
    a[5] = np.nan
    d = gpured.to_device(a)
    for func in FUNCS:
        for axis in (None, 0, 1):
            want = want_of(func, a, axis=axis)
            got = run(func, d, axis=axis)
            assert isinstance(got, gpured.Array), func
            check(got.get(), want, tol(want), "device %s axis=%s" % (func, axis))


def test_var_ddof_and_edges():
    a = data(np.float64 if fp64_ok(np.float64) else np.float32, (4, 3), seed=1)
    # ddof past n: NumPy's warning, inf (or nan where every deviation is 0)
    for func in ("var", "std"):
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            got = getattr(gpured, func)(a, axis=0, ddof=4)
        want = want_of(func, a, axis=0, ddof=4)
        assert np.array_equal(got, want), (got, want)
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            got = getattr(gpured, func)(np.float32([3.0]), ddof=1)
        assert np.isnan(got) and got.dtype == np.float32
    # a slice of NaNs only: nan and the same warning
    b = a.copy()
    b[:, 1] = np.nan
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = gpured.nanvar(b, axis=0)
    check(got, want_of("nanvar", b, axis=0), tol(got), "all-NaN column")
    assert np.isnan(got[1]) and not np.isnan(got[0])
    # no warning where nothing is degenerate
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        gpured.var(a, ddof=1)
        gpured.nanstd(b[:, 0])
    # float ddof, correction (NumPy 2's name), both at once
    check(gpured.var(a, ddof=0.5), want_of("var", a, ddof=0.5), tol(a), "ddof=0.5")
    check(gpured.std(a, correction=1), want_of("std", a, ddof=1), tol(a), "correction")
    with pytest.raises(ValueError):
        gpured.var(a, ddof=1, correction=1)
    # empty input: NumPy's answers and warnings
    with pytest.warns(RuntimeWarning):
        assert np.isnan(gpured.var(np.zeros(0, np.float32)))
    got = run("std", np.zeros((0, 4)), axis=0)
    assert got.shape == (4,) and np.isnan(got).all()
    # dtypes: integer inputs give float64, dtype=float32 is honoured, and
    # integer dtypes get NumPy's integer arithmetic
    i = np.arange(10, dtype=np.int16)
    assert gpured.var(i).dtype == np.float64 == np.var(i).dtype
    assert gpured.var(i, dtype=np.float32).dtype == np.float32
    assert gpured.var(i, dtype=np.int64) == np.var(i, dtype=np.int64)
    # out= of the result dtype and of another
    f = data(np.float32, (50, 20), seed=3)
    out = np.empty(50, np.float32)
    assert gpured.std(f, axis=1, out=out) is out
    check(out, want_of("std", f, axis=1), tol(out), "out=")
    if fp64_ok(np.float64):
        out64 = np.empty(20, np.float64)
        assert gpured.var(f, axis=0, out=out64) is out64
        check(out64, want_of("var", f, axis=0).astype(np.float64), 1e-5 * out64.max(), "out= f64")


@pytest.mark.parametrize("mode", ["auto", "current"])
def test_nanvar_warning_both_placements(mode):
    """NumPy's "Degrees of freedom <= 0" exactly where some slice's count
    of non-NaN elements is at most ddof: the host path counts in its two
    passes, the device path counts host input on the host."""
    b = data(np.float32, (64, 5), seed=2)
    b[:, 1] = np.nan
    b[:60, 3] = np.nan                    # 4 elements left in column 3
    with placed(mode):
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            got = gpured.nanvar(b, axis=0)
        check(got, want_of("nanvar", b, axis=0), tol(got), "all-NaN column")
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            got = gpured.nanstd(b[:, 2:], axis=0, ddof=4)
        check(got, want_of("nanstd", b[:, 2:], axis=0, ddof=4), tol(got), "ddof 4")
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = gpured.nanvar(b[:, 2:], axis=0, ddof=3)
            gpured.var(b[:, 0], ddof=63)
        check(got, want_of("nanvar", b[:, 2:], axis=0, ddof=3), tol(got), "ddof 3")
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            gpured.std(b[:, 0], ddof=64)


def test_var_placement():
    # small host arrays take the host path (two passes in C), larger ones
    # the device; both give NumPy's answer at the threshold's edges
    small = data(np.float32, (64,), seed=4)
    e = gpured.explain("var", small)
    assert e["placement"] == "host" and "var/std" in e["placement_why"], e
    big = data(np.float32, (1 << 20,), seed=4)
    assert gpured.explain("var", big)["placement"] != "host"
    for n in (64, 1024, 16384, 1 << 16):
        a = data(np.float32, (n,), seed=n)
        want = want_of("var", a)
        with placed("auto"):
            h = gpured.var(a)
        with placed("current"):
            dv = gpured.var(a)
        check(h, want, tol(want), "auto n=%d" % n)
        check(dv, want, tol(want), "device n=%d" % n)


def test_dask_var():
    da = pytest.importorskip("dask.array", reason="dask is not installed (pip install dask)")
    import gpured.dask as gd
    a = data(np.float32, (37, 23), seed=6, center=1e4)
    b = a.copy()
    b[np.random.default_rng(1).random(b.shape) < 0.3] = np.nan
    b[:, 3] = np.nan
    for func, arr in (("var", a), ("std", a), ("nanvar", b), ("nanstd", b)):
        x = da.from_array(arr, chunks=(10, 7))
        for axis, ddof, keepdims in ((None, 0, False), (0, 1, True), (1, 0, False)):
            r = getattr(gd, func)(x, axis=axis, ddof=ddof, keepdims=keepdims)
            ref = getattr(da, func)(x, axis=axis, ddof=ddof, keepdims=keepdims)
            assert (r.dtype, r.shape) == (ref.dtype, ref.shape), func
            want = want_of(func, arr, axis=axis, ddof=ddof, keepdims=keepdims)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                got = r.compute()
            check(got, want, tol(want), "dask %s axis=%s ddof=%d" % (func, axis, ddof))
    # a slice of n <= ddof: NumPy's nanvar gives nan (var: a division by
    # 0), and warns
    c = b.copy()
    c[:, 5] = np.nan
    c[[0, 20], 5] = (1.0, 3.0)
    for func in ("nanvar", "nanstd"):
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            # (the synchronous scheduler: a worker thread's warning is
            # not seen here)
            got = getattr(gd, func)(da.from_array(c, chunks=(10, 7)), axis=0,
                                    ddof=2).compute(scheduler="sync")
        want = want_of(func, c, axis=0, ddof=2)
        check(got, want, tol(want), "dask %s ddof=2" % func)
    i = np.arange(50, dtype=np.int32).reshape(5, 10)
    check(gd.var(da.from_array(i, chunks=(2, 3)), axis=0).compute(),
          np.var(i, axis=0), 1e-9, "dask int32")
