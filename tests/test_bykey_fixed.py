"""sum_by_key's fixed_point variant (kernels/bykey.cl, "fixed-point sums"):
float values summed exactly by 64-bit integer atomics, GPUs' deterministic
default for float sums on unsorted keys.

The reference is the exact sum of each key's values (math.fsum over
float64, correctly rounded, then to float32 without double rounding).
Where up to four windows of 43 (float32: 72) exponents cover every value's
exponent (float32's whole range always), one pass adds each value into its
window's 128-bit accumulator and nothing is dropped: the result is the
exact sum rounded once, bit for bit.  Wider float64 data takes each key's
largest exponent first, and a 128-bit accumulator at that scale drops the
bits below 2^-42 of that value's ulp.  NaN and the infinities follow IEEE
sums; there is no intermediate overflow.  The same bits must come back in
any order of the input, on every call.  The variant is asked for by name,
so PoCL (CI) runs every kernel; auto's choice is checked per device.
"""
import math

import numpy as np
import pytest

import gpured
from test_bykey import HAS_FP64, HAS_LOOKBACK

pytestmark = pytest.mark.skipif(not (HAS_FP64 and HAS_LOOKBACK),
                                reason="fixed_point needs fp64 and 64-bit atomics")


def _f32(x, s1):
    """x's exact sum rounded to float32 (s1 = fsum(x), the exact sum
    rounded to float64: float32(s1) is right unless s1 lies on a float32
    tie, where the residual's sign decides)."""
    f = np.float32(s1)
    if not np.isfinite(f) or float(f) == s1:
        return f
    other = np.nextafter(f, np.float32(np.inf if s1 > float(f) else -np.inf))
    if (float(f) + float(other)) / 2 == s1:
        r = math.fsum(list(x) + [-s1])
        if r != 0 and (r > 0) == (float(other) > float(f)):
            return other
    return f


def exact(k, v, nk):
    """Per key: NaN if a NaN or both infinities, an infinity, the exact sum
    (overflow: the sign's infinity), rounded to v's dtype."""
    out = np.zeros(nk, v.dtype)
    order = np.argsort(k, kind="stable")
    ks, vs = k[order], v[order].astype(np.float64)
    bounds = np.searchsorted(ks, np.arange(nk + 1))
    for key in range(nk):
        x = vs[bounds[key]:bounds[key + 1]]
        if x.size == 0:
            continue
        if np.isnan(x).any() or (np.isposinf(x).any() and np.isneginf(x).any()):
            out[key] = np.nan
        elif np.isinf(x).any():
            out[key] = x[np.isinf(x)][0]
        else:
            try:
                s1 = math.fsum(x)
                out[key] = _f32(x, s1) if v.dtype == np.float32 else s1
            except OverflowError:
                out[key] = math.copysign(math.inf, float(np.sum(x)))
    return out


def windows(v):
    """Whether the device takes the one pass: the exponent fields (at least
    1) of the finite nonzero values span at most 4 windows of 43 (float32:
    72) -- kernels/bykey.cl fx_windows."""
    f = v[np.isfinite(v) & (v != 0)]
    if f.size == 0:
        return True
    if v.dtype == np.float64:
        e, s = (f.view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF), 43
    else:
        e, s = (f.view(np.uint32) >> np.uint32(23)) & np.uint32(0xFF), 72
    e = np.maximum(e.astype(np.int64), 1)
    return (e.max() - e.min()) // s + 1 <= 4


def fixed(k, v, nk, **kw):
    return gpured.sum_by_key(k, v, nk, variant="fixed_point", deterministic=True, **kw)


def check(k, v, nk, bits=False):
    """Against the exact sums: within the dropped bits (2^-94 of the key's
    largest |value| each) and the result's rounding; bit for bit where
    asked (nothing dropped)."""
    got = fixed(k, v, nk)
    assert got.dtype == v.dtype
    want = exact(k, v, nk)
    if bits or windows(v):  # windows drop nothing
        np.testing.assert_array_equal(got, want)
    mx = np.zeros(nk)
    fin = np.isfinite(v)
    np.maximum.at(mx, k[fin], np.abs(v[fin]).astype(np.float64))
    cnt = np.bincount(k, minlength=nk)
    tol = np.abs(want) * np.finfo(v.dtype).eps + cnt * mx * 2.0 ** -94
    with np.errstate(invalid="ignore"):
        ok = ((got == want) | (np.isnan(got) & np.isnan(want))
              | (np.abs(got.astype(np.float64) - want) <= tol))
    assert ok.all(), (np.flatnonzero(~ok)[:5], got[~ok][:5], want[~ok][:5])
    o = np.random.default_rng(k.size).permutation(k.size)
    assert fixed(k[o], v[o], nk).tobytes() == got.tobytes()
    return got


@pytest.mark.parametrize("vdt", ["float32", "float64"])
@pytest.mark.parametrize("n,nk", [(1, 1), (7, 3), (1000, 10), (20001, 4097), (70000, 300)])
def test_random(vdt, n, nk):
    rng = np.random.default_rng(n + nk)
    k = rng.integers(0, nk, n).astype(np.int64)
    # float32 within 10^+-8 (2^53 < 2^71 apart): nothing dropped
    span = 8 if vdt == "float32" else 12
    v = (rng.standard_normal(n) * 10.0 ** rng.integers(-span, span, n)).astype(vdt)
    check(k, v, nk, bits=vdt == "float32")


@pytest.mark.parametrize("vdt", ["float32", "float64"])
def test_edges(vdt):
    """NaN, +inf, -inf and both, subnormals, -0.0, cancellation, values far
    below a key's largest, overflow, empty keys (0.0)."""
    big = np.finfo(vdt).max
    tiny = np.finfo(vdt).smallest_subnormal
    groups = [[np.nan, 1.0], [np.inf, 2.0], [-np.inf, -3.0], [np.inf, -np.inf],
              [tiny, tiny, tiny], [-0.0, -0.0], [1e16 if vdt == "float64" else 1e7, 1.0, -1e16 if vdt == "float64" else -1e7],
              [1.0, -1.0, 1e-9 if vdt == "float64" else 1e-15], [big, big], [-big, -big, big],
              [big, -big, 1.0], [], [0.5] * 3000, [-0.1] * 5000, [2.0 ** 40, -(2.0 ** -40)]]
    k = np.concatenate([np.full(len(g), i) for i, g in enumerate(groups)]).astype(np.int64)
    v = np.concatenate([np.asarray(g, np.float64) for g in groups]).astype(vdt)
    rng = np.random.default_rng(2)
    o = rng.permutation(k.size)
    got = check(k[o], v[o], len(groups) + 2)
    assert np.isnan(got[[0, 3]]).all()
    assert got[1] == np.inf and got[2] == -np.inf
    assert got[8] == np.inf  # the exact sum past the largest float
    assert got[9] == -big  # exact: no overflow on the way, as a float sum has
    assert got[11] == 0 and not np.signbit(got[11])
    assert got[7] == np.asarray(1e-9 if vdt == "float64" else 1e-15, vdt)  # nothing dropped
    # float32's whole range is four windows: exact; float64's 2^-1024 of big
    # goes through each key's largest exponent and is dropped
    assert got[10] == (1 if vdt == "float32" else 0)


def test_one_key_many_values():
    """One key, 2^20 values of both signs: carries from the low word on
    every other add; and every key but one empty."""
    rng = np.random.default_rng(3)
    for vdt in ("float32", "float64"):
        v = rng.standard_normal(1 << 20).astype(vdt)
        check(np.zeros(v.size, np.int64), v, 1, bits=vdt == "float32")
        check(np.full(v.size, 6, np.int64), np.abs(v), 9, bits=vdt == "float32")


@pytest.mark.parametrize("kdt", ["int32", "uint32", "int64", "uint64"])
def test_key_dtypes_and_device_arrays(kdt):
    rng = np.random.default_rng(4)
    k = rng.integers(0, 500, 9000).astype(kdt)
    v = rng.standard_normal(k.size)
    want = check(k.astype(np.int64), v, 500)
    kd = gpured.to_device(np.r_[np.zeros(3, kdt), k])[3:]
    vd = gpured.to_device(np.r_[np.zeros(5), v])[5:]
    got = fixed(kd, vd, 500)
    assert isinstance(got, gpured.Array)
    assert got.get().tobytes() == want.tobytes()
    # a bad key is reported before anything is written
    kb = k.astype(np.int64).copy()
    kb[77] = 500
    with pytest.raises(ValueError, match="77"):
        fixed(kb, v, 500)


def test_plans():
    """Named: float sums only (sum_by_key); auto: GPUs' deterministic
    float sums on unsorted keys (H100, 10 Mi float64 values into 2^20
    keys: docs/journal/BENCHMARKS.md); sorted keys keep lookback's single pass, CPUs
    the radix sort (PoCL, 2 cores, 1 Mi values: fixed_point 33 ms, the
    radix sort and sorted segments 8 ms)."""
    rng = np.random.default_rng(5)
    k = rng.integers(0, 300, 5000).astype(np.int64)
    v = rng.standard_normal(k.size)
    for vi, op in ((v.astype(np.int32), "sum"), (v, "min"), (v, "max")):
        with pytest.raises(gpured.VariantUnavailable, match="fixed_point"):
            gpured.sum_by_key(k, vi, 300, op, variant="fixed_point")
    with pytest.raises(gpured.VariantUnavailable, match="fixed_point"):
        gpured.reduce_by_key(np.sort(k), v, variant="fixed_point")
    assert "fixed_point" in gpured.variants_by_key("sum_by_key", "int64", "float32", "sum")
    assert "fixed_point" not in gpured.variants_by_key("sum_by_key", "int64", "int64", "sum")
    gpu = gpured.get_device()["type"] != "CPU"
    p = gpured.explain_by_key("sum_by_key", k, v, num_keys=300, deterministic=True)
    assert (p["variant"] == "fixed_point") == gpu, p
    p = gpured.explain_by_key("sum_by_key", np.sort(k), v, num_keys=300, deterministic=True)
    assert p["variant"] != "fixed_point", p
    p = gpured.explain_by_key("sum_by_key", k, v, num_keys=300)
    assert p["variant"] != "fixed_point", p  # not asked to be deterministic
    # nondeterministic with the name: still the exact, reproducible sums
    got = gpured.sum_by_key(k, v, 300, variant="fixed_point")
    assert got.tobytes() == fixed(k, v, 300).tobytes()


@pytest.mark.parametrize("wg", [1, 4, 64])
def test_geometries_and_empty(wg):
    """wg_size reaches the kernels (grid-stride loops, FX_U elements a
    step: partial steps at the end); no values, every key's bin 0.0."""
    rng = np.random.default_rng(wg)
    for n, nk in ((0, 5), (1, 1), (3, 2), (4 * wg * 4 + 3, 40)):
        k = rng.integers(0, nk, n).astype(np.int64)
        v = rng.standard_normal(n)
        got = gpured.sum_by_key(k, v, nk, variant="fixed_point", wg_size=wg)
        np.testing.assert_array_equal(got, exact(k, v, nk))


@pytest.mark.parametrize("vdt,span", [("float64", 43), ("float32", 72)])
def test_windows(vdt, span):
    """Values whose exponents span 1 .. 4 windows take the one pass, exact
    bit for bit; 5 windows' worth (float64: float32's whole range is 4)
    take each key's largest exponent first, whose accumulators drop the
    bits far below it.  Keys hold values from the whole span."""
    rng = np.random.default_rng(span)
    top, lowest = (0, -1022) if vdt == "float64" else (127, -126)
    for w in (1, 2, 3, 4, 5) if vdt == "float64" else (1, 2, 3, 4):
        e = rng.integers(max(top - w * span + 1, lowest), top + 1, 6000)
        e[:2] = [top, top - (w - 1) * span]  # the span's two ends
        v = (rng.uniform(1, 1.5, e.size) * 2.0 ** e * rng.choice([-1, 1], e.size)).astype(vdt)
        k = rng.integers(0, 50, e.size).astype(np.int64)
        assert windows(v) == (w <= 4)
        check(k, v, 50)


def test_paths_drop_or_keep():
    """[1, -1, 2^-100]: the windows keep 2^-100 (exponents span 3 windows);
    with a 2^-400 elsewhere (10 windows) each key's largest exponent comes
    first and 2^-100, 2^-100 of 1.0, is dropped as the docs say."""
    k = np.array([0, 0, 0], np.int64)
    v = np.array([1.0, -1.0, 2.0 ** -100])
    assert windows(v)
    np.testing.assert_array_equal(fixed(k, v, 1), [2.0 ** -100])
    k2, v2 = np.r_[k, 1], np.r_[v, 2.0 ** -400]
    assert not windows(v2)
    np.testing.assert_array_equal(fixed(k2, v2, 2), [0.0, 2.0 ** -400])
