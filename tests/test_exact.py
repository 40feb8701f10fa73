"""exact=True: the exact sum of the elements rounded once to the result
dtype, the same bits on the host path, the CPU device and GPUs, whatever
the order of the elements, the axis or the layout.

Oracles: math.fsum (the correctly rounded float64 sum) and exact rational
sums (fractions.Fraction) rounded once to float32 here.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import gpured

RNG = np.random.default_rng(20261128)


def round_to(fr, dtype):
    """The Fraction fr rounded once to dtype (nearest, ties to even)."""
    dt = np.dtype(dtype)
    if dt == np.float64:
        try:
            return np.float64(float(fr))  # Fraction -> float rounds correctly
        except OverflowError:
            return np.float64(math.copysign(math.inf, fr))
    fi = np.finfo(dt)
    big = Fraction(float(fi.max)) + Fraction(float(fi.max)) / 2 ** (fi.nmant + 2)
    if abs(fr) >= big:
        return dt.type(math.copysign(math.inf, fr))
    f = dt.type(float(fr))  # double rounding: check the neighbours
    best = None
    for c in (np.nextafter(f, dt.type(-np.inf)), f, np.nextafter(f, dt.type(np.inf))):
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - fr)
        even = int(np.array(c).view(np.uint32 if dt.itemsize == 4 else np.uint16)) % 2 == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, c)
    return best[1]


def exact_sum(a, dtype, nan=False, mean=False):
    """The oracle over a 1-d array of floats: sum (or mean) of the finite
    elements rounded once; NaN/inf as IEEE (and NumPy) say."""
    x = np.asarray(a, np.float64).ravel()
    if nan:
        x = x[~np.isnan(x)]
    if mean and x.size == 0:
        return np.dtype(dtype).type(np.nan)
    if np.isnan(x).any() or (np.isposinf(x).any() and np.isneginf(x).any()):
        return np.dtype(dtype).type(np.nan)
    if np.isinf(x).any():
        return np.dtype(dtype).type(np.inf if np.isposinf(x).any() else -np.inf)
    fr = sum((Fraction(float(v)) for v in x), Fraction(0))
    if mean:
        fr /= x.size
    return round_to(fr, dtype)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    g = got.view(np.uint64 if got.dtype.itemsize == 8 else np.uint32)
    w = want.view(g.dtype)
    nan = np.isnan(got) & np.isnan(want)
    bad = (g != w) & ~nan
    assert not bad.any(), (got[bad][:5], want[bad][:5])


def cases(dtype):
    """Hard inputs: cancellation, wide exponent ranges, subnormals,
    values near the largest double, ordinary data."""
    n = 3001
    out = {
        "normal": RNG.standard_normal(n),
        "cancel": np.concatenate([[1e100, 1.0, -1e100, 1e-100] * 50,
                                  RNG.standard_normal(7) * 1e16]),
        "opposites": (lambda v: np.concatenate([v, -v, [3e-5]]))(RNG.standard_normal(n) * 1e20),
        "wide": RNG.standard_normal(n) * 10.0 ** RNG.integers(-300, 300, n),
        "subnormal": RNG.standard_normal(n) * 2.0 ** RNG.integers(-1074, -1000, n),
        "huge": np.concatenate([[1.7976931348623157e308] * 3, [-1.7976931348623157e308] * 2,
                                RNG.standard_normal(9)]),
        "uniform": RNG.random(n),
    }
    if np.dtype(dtype) == np.float32:
        out = {k: v.astype(np.float32) for k, v in out.items()}
        out = {k: v[np.isfinite(v)] for k, v in out.items()}
        out["wide"] = (RNG.standard_normal(n) * 10.0 ** RNG.integers(-40, 38, n)).astype(np.float32)
    return out


def where_run(a, how):
    """a as the call sees it: a NumPy array (placement: host path or
    device), a device Array, or a NumPy array on the device (placement
    'current')."""
    if how == "device_array":
        return gpured.to_device(a)
    return a


def call(fn, a, how, **kw):
    if how == "device":
        old = gpured.placement()
        gpured.placement("current")
        try:
            return np.asarray(gpured.asnumpy(fn(a, exact=True, **kw)))
        finally:
            gpured.placement(old)
    r = fn(where_run(a, how), exact=True, **kw)
    return np.asarray(gpured.asnumpy(r)) if isinstance(r, gpured.Array) else np.asarray(r)


HOWS = ["numpy", "device", "device_array"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", HOWS)
def test_sum_exact_bits(dtype, how):
    for name, a in cases(dtype).items():
        same(call(gpured.sum, a, how), exact_sum(a, dtype))
        b = a.copy()
        RNG.shuffle(b)
        same(call(gpured.sum, b, how), exact_sum(a, dtype))  # any order


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", HOWS)
def test_mean_exact_bits(dtype, how):
    for name, a in cases(dtype).items():
        if name == "huge":
            continue  # a sum past the largest double: NumPy's mean overflows too
        same(call(gpured.mean, a, how), exact_sum(a, dtype, mean=True))


@pytest.mark.parametrize("how", HOWS)
def test_nan_forms_exact(how):
    a = RNG.standard_normal(1000) * 10.0 ** RNG.integers(-20, 20, 1000)
    a[RNG.integers(0, 1000, 50)] = np.nan
    same(call(gpured.nansum, a, how), exact_sum(a, "float64", nan=True))
    same(call(gpured.nanmean, a, how), exact_sum(a, "float64", nan=True, mean=True))
    same(call(gpured.sum, a, how), np.float64(np.nan))
    allnan = np.full(10, np.nan)
    same(call(gpured.nansum, allnan, how), np.float64(0.0))


@pytest.mark.parametrize("how", HOWS)
def test_specials_exact(how):
    inf = np.inf
    for a, want in (([inf, 1.0], inf), ([-inf, 1.0], -inf), ([inf, -inf], np.nan),
                    ([np.nan, 1.0], np.nan), ([1e308, 1e308, -1e308], 1e308),
                    ([1.7976931348623157e308, 1e292], inf), ([0.0, -0.0], 0.0)):
        same(call(gpured.sum, np.array(a), how), np.float64(want))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", HOWS)
def test_axes_and_layouts_exact(dtype, how):
    a = (RNG.standard_normal((37, 53)) * 10.0 ** RNG.integers(-12, 12, (37, 53))).astype(dtype)
    for x in (a, a.T, a[::2, ::-3], np.asfortranarray(a)):
        for axis in (None, 0, 1, -1):
            got = call(gpured.sum, x, how, axis=axis)
            if axis is None:
                want = exact_sum(x, dtype)
            else:
                rows = np.moveaxis(x, axis, -1)
                want = np.array([exact_sum(r, dtype) for r in rows])
            same(got, want)
        got = call(gpured.mean, x, how, axis=0, keepdims=True)
        want = np.array([exact_sum(c, dtype, mean=True) for c in x.T]).reshape(1, -1)
        same(got, want)


def test_same_bits_every_path():
    """Host path, CPU device, a device Array: one answer (the exact one)."""
    a = RNG.standard_normal(200000) * 10.0 ** RNG.integers(-30, 30, 200000)
    got = {how: call(gpured.sum, a, how) for how in HOWS}
    want = np.float64(math.fsum(a))
    for how, g in got.items():
        same(g, want)


def test_large_blocks_exact():
    """Past the host's blocks and several groups per device segment."""
    a = RNG.standard_normal((1 << 20) + 7) * 1e10
    a[::1000] *= 1e200
    want = np.float64(math.fsum(a))
    for how in HOWS:
        same(call(gpured.sum, a, how), want)


def test_result_dtype_and_out():
    a = RNG.standard_normal(1000)
    r = gpured.sum(a, exact=True, dtype=np.float32)
    same(np.asarray(r), exact_sum(a, "float32"))  # rounded once to float32
    out = np.empty((), np.float64)
    gpured.sum(a, exact=True, out=out)
    same(out, np.float64(math.fsum(a)))
    r = gpured.sum(a.reshape(10, 100), axis=1, exact=True, keepdims=True)
    assert r.shape == (10, 1)


def test_integers_and_bools_are_exact_already():
    a = RNG.integers(-1000, 1000, 5000, dtype=np.int32)
    assert gpured.sum(a, exact=True) == np.sum(a)
    assert gpured.sum(a, exact=True).dtype == np.sum(a).dtype
    # mean of integers: NumPy's (a float64 sum of integers this small is
    # exact, then one division)
    assert gpured.mean(a, exact=True) == np.mean(a)
    assert gpured.sum(a > 0, exact=True) == np.sum(a > 0)


def test_exact_refuses_what_it_cannot_promise():
    a = RNG.standard_normal(100)
    with pytest.raises(TypeError, match="exact"):
        gpured.prod(a, exact=True)
    with pytest.raises(TypeError, match="exact"):
        gpured.sum(a, exact=True, where=a > 0)
