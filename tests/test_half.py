"""float16 and bfloat16 (ml_dtypes) through every gpured function
(gpured/_half.py: widened to float32, computed, narrowed once).

Oracle: the function computed exactly enough in float64 (NumPy on
a.astype(float64)) and rounded ONCE to the half dtype (bfloat16 rounded
from float64 bits here, so that ml_dtypes' own cast cannot round twice).
Host (NumPy) inputs and device Arrays; results' dtypes are NumPy's
(float16 for float16, bfloat16 for bfloat16, indices int64, counts int,
bool for all/any)."""
import warnings

import numpy as np
import pytest

import gpured

ml_dtypes = pytest.importorskip(
    "ml_dtypes", reason="ml_dtypes is in the test extra (bfloat16)")
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
HALVES = [F16, BF16]
HAS_FP64 = bool(gpured.get_device()["fp64"])


def round_once(x, dt):
    """float64 values x rounded once (nearest even) to dt."""
    x = np.asarray(x, dtype=np.float64)
    if dt == F16:
        return x.astype(F16)  # NumPy's double -> half is one rounding
    b = x.view(np.uint64).copy()
    fin = np.isfinite(x)
    lsb = (b >> np.uint64(45)) & np.uint64(1)
    b[fin] = (b[fin] + np.uint64((1 << 44) - 1) + lsb[fin]) & \
        ~np.uint64((1 << 45) - 1)
    return b.view(np.float64).astype(np.float32).astype(BF16)


def ulps(got, want, dt):
    """|got - want| in units of dt's spacing at want."""
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    sp = np.asarray(np.spacing(np.abs(w).astype(np.float32)), np.float64)
    sp *= 2.0 ** (23 - (10 if dt == F16 else 7))
    both = (np.isnan(g) & np.isnan(w)) | (g == w)
    return np.where(both, 0.0, np.abs(g - w) / np.maximum(sp, 1e-300))


def data(dt, shape, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    if nan:
        a.flat[::7] = np.nan
    return a.astype(dt)


def host(x):
    return x.get() if isinstance(x, gpured.Array) else x


def check(got, want, dt, tol=0):
    got = host(got)
    want = np.asarray(want)
    assert np.asarray(got).dtype == want.dtype, (np.asarray(got).dtype,
                                                 want.dtype)
    assert np.shape(got) == want.shape
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
        return
    assert ulps(got, want, dt).max(initial=0) <= tol, (got, want)


# func -> (float64 oracle, tolerance in ulps of the half)
def _np64(name):
    return lambda a, **k: getattr(np, name)(a.astype(np.float64), **k)


EXACT = ["sum", "mean", "nansum", "nanmean", "min", "max", "nanmin",
         "nanmax", "ptp"]
ULP1 = ["prod", "nanprod", "var", "std", "nanvar", "nanstd"]
INDEX = ["argmin", "argmax", "nanargmin", "nanargmax"]
SCANS = ["cumsum", "cumprod", "nancumsum", "nancumprod", "cummin", "cummax"]
CASES = [((1000,), None), ((23, 40), 0), ((23, 40), 1), ((6, 5, 7), (0, 2))]
# device Arrays: fewer layouts (each is kernels to build on PoCL)
DEV_CASES = [((1000,), None), ((23, 40), 1)]


def oracle(name, a, **k):
    a64 = a.astype(np.float64)
    if name in ("cummin", "cummax"):
        f = np.minimum if name == "cummin" else np.maximum
        return f.accumulate(a64, axis=k.get("axis") or 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, name)(a64, **k)


def operand(a, dev):
    return gpured.to_device(a) if dev else a


@pytest.mark.parametrize("dev", [False, True], ids=["host", "device"])
@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name", EXACT + ULP1 + INDEX)
def test_reductions(name, dt, dev):
    for shape, axis in DEV_CASES if dev else CASES:
        if name in INDEX and isinstance(axis, tuple):
            continue  # NumPy's arg* take one axis
        if name.endswith("prod"):
            a = (1 + data(np.float32, shape) / 64).astype(dt)
        else:
            a = data(dt, shape, nan=name.startswith("nan"))
        got = getattr(gpured, name)(operand(a, dev), axis=axis)
        want = oracle(name, a, axis=axis)
        if name in INDEX:
            check(got, np.asarray(want), dt)
        else:
            check(got, round_once(want, dt), dt,
                  0 if name in EXACT else 1)


@pytest.mark.parametrize("dev", [False, True], ids=["host", "device"])
@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_counts_and_bools(dt, dev):
    a = data(dt, (23, 40))
    a[3] = 0
    d = operand(a, dev)
    for ax in (None, 1) if dev else (None, 0, 1):
        nz = a.astype(np.float32) != 0
        check(gpured.count_nonzero(d, axis=ax),
              np.asarray(np.count_nonzero(nz, axis=ax)), dt)
        check(gpured.all(d, axis=ax), np.asarray(np.all(nz, axis=ax)), dt)
        check(gpured.any(d, axis=ax), np.asarray(np.any(nz, axis=ax)), dt)


@pytest.mark.parametrize("dev", [False, True], ids=["host", "device"])
@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name", SCANS)
def test_scans(name, dt, dev):
    """The scans read and write the halves in the kernels (one program per
    op, layout and dtype: rows and columns here for float16's cumsum and
    cummax, the other ops' and bfloat16's in test_native_scans)."""
    cases = [((1000,), None), ((23, 40), 1), ((23, 40), 0)] \
        if dt == F16 and name in ("cumsum", "cummax") else [((1000,), None)]
    for shape, axis in [c for c in DEV_CASES if c in cases] if dev else cases:
        if name.endswith("prod"):
            a = (1 + data(np.float32, shape) / 64).astype(dt)
        else:
            a = data(dt, shape, nan=name.startswith("nan"))
        got = getattr(gpured, name)(operand(a, dev), axis=axis)
        want = round_once(oracle(name, a, axis=axis), dt)
        check(got, want, dt, 0 if name in ("cummin", "cummax") else 1)


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_cumsum_no_worse_than_float32_scan(dt):
    """The issue's bound: no larger error than a float32-accumulated scan
    rounded to the half (within 1 ulp of the half), and exact-rounded
    here (float64 accumulation)."""
    a = np.abs(data(dt, (20000,)))
    got = gpured.cumsum(a)
    f32 = np.cumsum(a.astype(np.float32)).astype(dt)
    exact = round_once(np.cumsum(a.astype(np.float64)), dt)
    e_got = ulps(got, exact, dt)
    e_f32 = ulps(f32, exact, dt)
    assert got.dtype == dt
    assert (e_got <= np.maximum(e_f32, 1)).all()
    assert e_got.max() <= 1


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_large_sum_and_mean_do_not_overflow(dt):
    """Naive float16 accumulation stalls at 2048 (and overflows past
    65504); float32+ accumulation rounded once does neither."""
    a = np.ones(100000, dt)
    check(gpured.mean(a), round_once(1.0, dt), dt)
    check(gpured.sum(a[:30000]), round_once(30000.0, dt), dt)
    b = np.full(200000, 0.5, dt)
    d = gpured.to_device(b)
    check(gpured.mean(d), round_once(0.5, dt), dt)
    check(gpured.sum(np.ones(100000, dt)), round_once(100000.0, dt), dt)


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_arguments(dt):
    """dtype=, out=, keepdims, where=, initial=, average's weights."""
    a = data(dt, (23, 40))
    a64 = a.astype(np.float64)
    check(gpured.sum(a, axis=1, dtype=np.float32),
          np.sum(a64, axis=1).astype(np.float32), dt, 1 << 13)
    assert gpured.sum(a, dtype=np.float64) == pytest.approx(
        np.sum(a64), rel=1e-12)
    out = np.empty(40, dt)
    r = gpured.sum(a, axis=0, out=out)
    assert r is out
    check(out, round_once(np.sum(a64, axis=0), dt), dt)
    d = gpured.to_device(a)
    dout = gpured.empty((23,), dt)
    assert gpured.max(d, axis=1, out=dout) is dout
    check(dout, np.max(a, axis=1), dt)
    check(gpured.sum(a, axis=0, keepdims=True),
          round_once(np.sum(a64, axis=0, keepdims=True), dt), dt)
    w = a64 > 0
    check(gpured.sum(a, where=w), round_once(np.sum(a64, where=w), dt), dt)
    check(gpured.mean(d, axis=1, where=w),
          round_once(np.mean(a64, axis=1, where=w), dt), dt)
    check(gpured.max(a, initial=100.0),
          round_once(np.max(a64, initial=100.0), dt), dt)
    wt = np.abs(data(dt, (40,), seed=3))
    check(gpured.average(a, axis=1, weights=wt),
          round_once(np.average(a64, axis=1, weights=wt.astype(np.float64)),
                     dt), dt, 1)
    sw = a.astype(a.dtype.newbyteorder(">"))  # byte-swapped input / out
    check(gpured.sum(sw, axis=1), round_once(np.sum(a64, axis=1), dt), dt)
    osw = np.zeros(23, sw.dtype)
    gpured.mean(a, axis=1, out=osw)
    check(osw.astype(dt), round_once(np.mean(a64, axis=1), dt), dt)
    idx = np.array([0, 5, 6, 20])
    check(gpured.reduceat(a, idx, axis=1),
          round_once(np.add.reduceat(a64, idx, axis=1), dt), dt)
    check(gpured.reduceat(d, idx, axis=0, op="max"),
          round_once(np.maximum.reduceat(a64, idx, axis=0), dt), dt)


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_device_arrays_round_trip(dt):
    a = data(dt, (37, 11), nan=True)
    d = gpured.to_device(a)
    assert d.dtype == dt and d.shape == a.shape
    np.testing.assert_array_equal(d.get().view(np.uint16), a.view(np.uint16))
    np.testing.assert_array_equal(d[3:20:2, ::-1].get().view(np.uint16),
                                  a[3:20:2, ::-1].view(np.uint16))
    # on-device casts both ways: exact widening, one rounding narrowing
    np.testing.assert_array_equal(d.astype(np.float32).get(),
                                  a.astype(np.float32))
    x = np.random.default_rng(5).standard_normal(5000) * 1e3
    x[:4] = [np.nan, np.inf, -np.inf, 7e38 if dt == BF16 else 7e4]
    for src in (x.astype(np.float32), x) if HAS_FP64 else (
            x.astype(np.float32),):
        got = gpured.to_device(src).astype(dt).get()
        want = round_once(src.astype(np.float64), dt)
        np.testing.assert_array_equal(got.view(np.uint16)[4:],
                                      want.view(np.uint16)[4:])
        assert np.isnan(got[0].astype(np.float32))
        assert list(got[1:4].astype(np.float32)) == list(
            want[1:4].astype(np.float32))


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_by_key(dt):
    rng = np.random.default_rng(1)
    keys = np.sort(rng.integers(0, 30, 2000)).astype(np.int32)
    v = data(dt, (2000,))
    v64 = v.astype(np.float64)
    uk, s = gpured.reduce_by_key(keys, v)
    u, starts = np.unique(keys, return_index=True)
    np.testing.assert_array_equal(uk, u)
    check(s, round_once(np.add.reduceat(v64, starts), dt), dt)
    check(gpured.sum_by_key(keys, v, 30),
          round_once(np.bincount(keys, v64, 30), dt), dt)
    uk, m = gpured.reduce_by_key(keys, gpured.to_device(v), op="max")
    check(m, round_once(np.maximum.reduceat(v64, starts), dt), dt)
    sc = gpured.scan_by_key(keys, v)
    want = np.concatenate([np.cumsum(v64[i:j]) for i, j in
                           zip(starts, list(starts[1:]) + [len(v)])])
    check(sc, round_once(want, dt), dt, 1)


def test_result_dtypes_match_numpy_float16():
    a = data(F16, (50,))
    for name in EXACT + ULP1 + INDEX + SCANS + ["count_nonzero", "all"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.asarray(
                np.minimum.accumulate(a) if name == "cummin" else
                np.maximum.accumulate(a) if name == "cummax" else
                getattr(np, name)(a)).dtype
        assert np.asarray(getattr(gpured, name)(a)).dtype == want, name


def test_dask(tmp_path):
    da = pytest.importorskip("dask.array", reason="dask is in the test extra")
    import gpured.dask  # noqa: F401
    for dt in HALVES:
        a = data(dt, (400, 30))
        x = da.from_array(a, chunks=(100, 30))
        got = gpured.dask.sum(x, axis=0).compute() if hasattr(
            gpured.dask, "sum") else None
        if got is None:
            pytest.skip("gpured.dask has no sum")
        a64 = a.astype(np.float64)
        check(np.asarray(got), round_once(np.sum(a64, axis=0), dt), dt)
        check(np.asarray(gpured.dask.mean(x, axis=1).compute()),
              round_once(np.mean(a64, axis=1), dt), dt)
        check(np.asarray(gpured.dask.max(x).compute()),
              round_once(np.max(a64), dt), dt)


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_native_reads(dt, monkeypatch):
    """Device Arrays' sum/mean/min/max/argmin/argmax read the halves in
    the kernels (no widening pass), every variant of the ladder runs them
    (or names why not), and the answers are the rounded-once oracle's."""
    import gpured._half as half

    def no_widen(x):
        raise AssertionError("widened")
    monkeypatch.setattr(half, "_widen", no_widen)
    for shape, axis in DEV_CASES:  # test_reductions' layouts: its kernels
        a = data(dt, shape)
        d = gpured.to_device(a)
        a64 = a.astype(np.float64)
        for name in ("sum", "mean", "min", "max", "argmin", "argmax"):
            got = getattr(gpured, name)(d, axis=axis)
            want = getattr(np, name)(a64, axis=axis)
            check(got, np.asarray(want) if name.startswith("arg")
                  else round_once(want, dt), dt)
        # NaN: propagated by min/max, found first by argmin/argmax
        a.flat[3::17] = np.nan
        for x in (a, gpured.to_device(a)):
            for name in ("max", "argmin"):
                got = getattr(gpured, name)(x, axis=axis)
                want = getattr(np, name)(a.astype(np.float64), axis=axis)
                check(got, np.asarray(want) if name == "argmin"
                      else round_once(want, dt), dt)
    # the ladder (a few rungs here; tests/oclgrind_half.py runs more; all
    # of them run float16 sum, max and argmax on PoCL)
    for v in ("naive", "atomic", "segment_per_item"):
        name = "sum" if dt == F16 else "argmax"
        try:
            got = getattr(gpured, name)(d, variant=v)
        except gpured.VariantUnavailable as e:
            assert v == "atomic" and name == "argmax", e
            assert "4-byte" in str(e)
            continue
        want = getattr(np, name)(a64)
        check(got, np.asarray(want) if name == "argmax"
              else round_once(want, dt), dt)
    with pytest.raises(TypeError, match="widen"):
        gpured._core.reduce("prod", d, None, None, None, False,
                            np._NoValue, {})


SCAN_VARIANTS = ["naive", "blelloch", "workgroup", "subgroup",
                 "reduce_then_scan", "decoupled_lookback", "row_per_item"]


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_native_scans(dt, monkeypatch):
    """The scan kernels read the halves and write the half results
    themselves (kernels/scan.cl GR_SELT / GR_SRELT: no widening pass), for
    host and device inputs: the look-back over several tiles (exclusive
    too), rows, columns (a work-item each), dtype=float32, the nan forms,
    products and cummax; each result within one rounding of the exact
    float64 scan, and every variant of the ladder runs them or names why
    not."""
    import gpured._half as half

    def no_widen(x):
        raise AssertionError("widened")
    monkeypatch.setattr(half, "_widen", no_widen)
    big = data(dt, (3 * 8192 + 77,), seed=4)  # > 3 CPU look-back tiles
    a64 = big.astype(np.float64)
    for x in (big, gpured.to_device(big)):
        got = gpured.cumsum(x)
        assert got.dtype == dt and isinstance(got, type(x))
        check(got, round_once(np.cumsum(a64), dt), dt, 1)
    d = gpured.to_device(big)
    ex = gpured.cumsum(d, exclusive=True).get()
    check(ex, round_once(np.concatenate([[0.0], np.cumsum(a64)[:-1]]), dt),
          dt, 1)
    assert np.signbit(ex[0].astype(np.float32)) == 0  # +0.0, as NumPy's
    f32 = gpured.cumsum(d, dtype=np.float32)
    assert f32.dtype == np.float32
    assert np.allclose(f32.get(), np.cumsum(a64), rtol=1e-5, atol=1e-3)
    m = data(dt, (23, 40), seed=5, nan=True)
    m64 = m.astype(np.float64)
    dm = gpured.to_device(m)
    for axis in (0, 1):  # columns: a work-item each; short rows alike
        check(gpured.nancumsum(dm, axis=axis),
              round_once(np.nancumsum(m64, axis=axis), dt), dt, 1)
        check(gpured.cummax(m, axis=axis),
              round_once(np.maximum.accumulate(m64, axis=axis), dt), dt)
    p = (1 + data(np.float32, (3, 700), seed=6) / 64).astype(dt)
    p64 = p.astype(np.float64)
    check(gpured.cumprod(gpured.to_device(p), axis=1),
          round_once(np.cumprod(p64, axis=1), dt), dt, 1)
    dp = gpured.to_device(p)
    ci = gpured.cumulative_sum(dp, axis=1, include_initial=True)
    check(ci, round_once(np.concatenate(
        [np.zeros((3, 1)), np.cumsum(p64, axis=1)], axis=1), dt), dt, 1)
    # bfloat16 shares every path but its load and store macros: float16
    # alone climbs the ladder (program builds are CI's time)
    for v in SCAN_VARIANTS if dt == F16 else ["decoupled_lookback"]:
        try:
            got = gpured.cumsum(dp, axis=1, variant=v)
        except gpured.VariantUnavailable as e:
            assert str(e), v  # names why
            continue
        check(got, round_once(np.cumsum(p64, axis=1), dt), dt, 1)


def test_explain_names_the_path():
    a = data(F16, (100,))
    native = gpured.explain("sum", a)
    assert "widened" not in native and native["accumulator"] in (
        "double", "float")
    assert "float16 -> float32" in gpured.explain("var", a)["widened"]
    assert "device" in gpured.explain("var", gpured.to_device(a))[
        "widened"]
    assert "widened" not in gpured.explain("cumsum", gpured.to_device(a))
    # timeit of a native reduction gives the call's (narrowed) result, as
    # notebooks/01_reduction_ladder.ipynb's float16 ladder checks it
    r = gpured.timeit("sum", a, reps=1)["result"]
    check(r, round_once(np.sum(a.astype(np.float64)), F16), F16)


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_sum_pairs_in_float(dt):
    """Plain sums of halves on the coalesced variants read vw * 2 halves
    as one aligned vector and add pairs in float before the double
    accumulator, min/max read them unfolded (csrc/plan_reduce.c
    HALF_FOLD, kernels/common.cl GR_HF): rounded-once answers at every
    vector width (loads over 16 bytes: no fold), with the tails and the
    unaligned heads, rows included; nansum and where= keep their
    per-element rules."""
    for shape, axis in (((4099,), None), ((3, 1000), 1), ((2, 8195), -1)):
        a = data(dt, shape, seed=3)
        d = gpured.to_device(a)
        want = round_once(np.sum(a.astype(np.float64), axis=axis), dt)
        for vw in (2, 4, 16):
            got = gpured.sum(d, axis=axis, variant="vector", vw=vw,
                             wg_size=32)
            check(got, want, dt)
        if axis is None:  # a view one half in: the unaligned head
            for off in (1, 3):
                got = gpured.sum(d[off:], variant="vector", vw=4, wg_size=32)
                check(got, round_once(np.sum(a[off:].astype(np.float64)),
                                      dt), dt)
        # extremes: aligned loads in order, no fold; ties to the first
        x = a[1:] if axis is None else a.copy()
        x[..., 3::5] = x.max()  # ties across heads, vectors and lanes
        if axis is None:
            b = a.copy()
            b[1:] = x
            dx = gpured.to_device(b)[1:]
        else:
            dx = gpured.to_device(x)
        got = gpured.max(dx, axis=axis, variant="vector", vw=8, wg_size=32)
        check(got, np.max(x, axis=axis), dt)
        got = gpured.argmax(dx, axis=axis, variant="vector", vw=4,
                            wg_size=32)
        check(got, np.argmax(x.astype(np.float64), axis=axis), dt)
        why = gpured.explain("sum", d, axis=axis, variant="vector", vw=4)
        assert "halves added in float first" in why["why"], why["why"]
        a[..., 5] = np.nan
        d = gpured.to_device(a)
        check(gpured.nansum(d, axis=axis, variant="vector"),
              round_once(np.nansum(a.astype(np.float64), axis=axis), dt), dt)
        m = np.arange(a.size).reshape(a.shape) % 3 != 0
        check(gpured.sum(d, axis=axis, variant="vector", where=m),
              round_once(np.sum(a.astype(np.float64), axis=axis, where=m),
                         dt), dt)
