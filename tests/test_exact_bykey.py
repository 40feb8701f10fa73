"""sum_by_key(exact=True): each bin is the exact sum of its values rounded
once to the result dtype -- the same bits for every order of the pairs,
sorted or not, deterministic or not, device or host, NumPy arrays or
device Arrays.

Oracles, per key: float64, math.fsum (correctly rounded; an exact
rational sum where fsum's partials overflow); float32, the exact sum as an
integer count of 2^-149 (the smallest float32 subnormal: every float32 is
a whole number of them), rounded once in integer arithmetic (24 bits kept,
ties to even).  np.float32(float(x)) would round twice (to float64, then
float32): test_float32_double_rounding is a case where that is wrong, and
checks the integer rounding against a second oracle (the float32
neighbours of a Fraction compared exactly).
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import gpured

RNG = np.random.default_rng(20261128)
F32_MAXF = float(np.finfo(np.float32).max)
F32_MAX = Fraction(F32_MAXF)
# at and past max + half an ulp, float32 rounds to inf (max's last bit is odd)
F32_BIG = F32_MAX + Fraction(2) ** 103


def round_f32(fr):
    """The Fraction fr rounded once to float32 (nearest, ties to even)."""
    if abs(fr) >= F32_BIG:
        return np.float32(math.inf if fr > 0 else -math.inf)
    f = np.float32(float(fr))  # within an ulp; the neighbours decide
    best = None
    with np.errstate(over="ignore"):
        cands = (np.nextafter(f, np.float32(-np.inf)), f,
                 np.nextafter(f, np.float32(np.inf)))
    for c in cands:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - fr)
        even = int(np.array(c).view(np.uint32)) % 2 == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, c)
    return np.float32(best[1])


def round_units_f32(u):
    """u 2^-149 (u an int: every float32 is a whole number of 2^-149)
    rounded once to float32 in integer arithmetic: 24 bits kept, the rest
    to nearest, ties to even; past the largest float32, inf."""
    a = abs(u)
    shift = max(a.bit_length() - 24, 0)  # 24 bits or fewer: exact
    q, r = divmod(a, 1 << shift)
    if shift and (2 * r > (1 << shift) or (2 * r == 1 << shift and q & 1)):
        q += 1
    x = math.ldexp(q, shift - 149)  # exact: q has at most 25 bits
    f = np.float32(x if x <= F32_MAXF else math.inf)
    return -f if u < 0 else f


def exact_key(v, dtype):
    """One key's finite values (a list of Python floats) summed exactly,
    rounded once to dtype."""
    if dtype == np.float64:
        try:
            return np.float64(math.fsum(v) + 0.0)  # -0.0 -> +0.0
        except OverflowError:  # fsum's partials overflowed: exact rationals
            fr = sum((Fraction(x) for x in v), Fraction(0))
            try:
                return np.float64(float(fr))  # int / int: rounded once
            except OverflowError:
                return np.float64(math.inf if fr > 0 else -math.inf)
    units = sum(int(x * 2.0 ** 149) for x in v)  # exact: x is a float32
    return np.float32(round_units_f32(units) + np.float32(0.0))


def oracle(keys, vals, nk):
    """Each key's exact sum rounded once; NaN where a key holds a NaN or
    both infinities, else its infinity; 0 for keys that never occur."""
    out = np.zeros(nk, vals.dtype)
    nan = np.bincount(keys, np.isnan(vals), nk) > 0
    pinf = np.bincount(keys, np.isposinf(vals), nk) > 0
    ninf = np.bincount(keys, np.isneginf(vals), nk) > 0
    order = np.argsort(keys, kind="stable")
    ks, vs = keys[order], vals[order].astype(np.float64).tolist()
    cuts = np.r_[0, np.flatnonzero(np.diff(ks)) + 1, ks.size].tolist()
    for a, b in zip(cuts[:-1], cuts[1:]):
        k = ks[a] if b > a else None
        if k is None or nan[k] or pinf[k] or ninf[k]:
            continue
        out[k] = exact_key(vs[a:b], vals.dtype.type)
    out[pinf] = np.inf
    out[ninf] = -np.inf
    out[nan | (pinf & ninf)] = np.nan
    return out


def same(got, want):
    got = np.asarray(gpured.asnumpy(got) if isinstance(got, gpured.Array) else got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    u = np.uint64 if got.dtype.itemsize == 8 else np.uint32
    bad = (got.view(u) != want.view(u)) & ~(np.isnan(got) & np.isnan(want))
    assert not bad.any(), (np.flatnonzero(bad)[:5], got[bad][:5], want[bad][:5])


def cases(dtype):
    """(keys, values, num_keys): cancellation, huge exponent ranges,
    subnormals, overflow, ordinary data; few keys and many."""
    f64 = np.dtype(dtype) == np.float64
    big, tiny = (1e300, 1e-300) if f64 else (1e30, 1e-30)
    sub = 2.0 ** (-1074 if f64 else -149)
    top = float(np.finfo(dtype).max)
    n = 4000
    k7 = RNG.integers(0, 7, n)
    out = {
        "cancel": ([0, 0, 0, 1, 1, 1, 2], [big, 1.0, -big, -big, big, 3.0, big], 3),
        "range": ([0, 0, 1, 1, 1, 0], [big, tiny, tiny, -big, big, -big], 2),
        "subnormal": (RNG.integers(0, 5, 300),
                      RNG.integers(-50, 50, 300) * sub, 5),
        "overflow": ([0, 0, 0, 1, 1, 1, 2, 2], [top, top, -top, top, top, 1.0,
                                               top, top * 2 ** -30], 3),
        "wide": (k7, RNG.standard_normal(n) * 10.0 ** RNG.integers(
            -300 if f64 else -38, 300 if f64 else 38, n), 9),
        "normal": (k7, RNG.standard_normal(n), 7),
        "opposites": (np.concatenate([k7, k7]),
                      (lambda v: np.concatenate([v, -v]))(
                          RNG.standard_normal(n) * 1e6), 7),
    }
    return {name: (np.asarray(k, np.int64), np.asarray(v).astype(dtype), nk)
            for name, (k, v, nk) in out.items()}


def sbk(keys, vals, nk=None, how="numpy", **kw):
    if how == "device_array":
        keys, vals = gpured.to_device(keys), gpured.to_device(vals)
    r = gpured.sum_by_key(keys, vals, nk, exact=True, **kw)
    return gpured.asnumpy(r) if isinstance(r, gpured.Array) else r


# the device's fixed-point windows, and the host's long accumulators (what
# CPU devices and devices without 64-bit atomics run)
VARIANTS = ["fixed_point", "host"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", ["numpy", "device_array"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_exact_by_key_bits(dtype, how, variant):
    for name, (k, v, nk) in cases(dtype).items():
        want = oracle(k, v, nk)
        same(sbk(k, v, nk, how, variant=variant), want)
        p = RNG.permutation(k.size)  # any order of the pairs
        same(sbk(k[p], v[p], nk, how, variant=variant), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exact_by_key_orders_and_modes(dtype):
    """deterministic, unsorted, sorted keys, num_keys inferred, the host's
    long accumulators: one answer."""
    k, v, nk = cases(dtype)["wide"]
    want = oracle(k, v, nk)
    o = np.argsort(k, kind="stable")
    p = RNG.permutation(k.size)
    for kk, vv in ((k, v), (k[o], v[o]), (k[o][::-1].copy(), v[o][::-1].copy()),
                   (k[p], v[p])):
        for kw in ({}, {"deterministic": True}, {"sorted": False},
                   {"variant": "fixed_point"}, {"variant": "host"}):
            same(sbk(kk, vv, nk, **kw), want)
    same(sbk(k[o], v[o], nk, sorted=True), want)
    same(sbk(k, v), want[:int(k.max()) + 1])  # num_keys = keys.max() + 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exact_by_key_many_keys(dtype):
    nk = 1 << 16
    n = 3 * nk
    k = RNG.integers(0, nk, n).astype(np.int32)
    lo, hi = (-300, 300) if dtype == "float64" else (-37, 37)
    v = (RNG.standard_normal(n) * 10.0 ** RNG.integers(lo, hi, n)).astype(dtype)
    want = oracle(k, v, nk)
    same(sbk(k, v, nk), want)
    same(sbk(k, v, nk, how="device_array", variant="fixed_point"), want)
    p = RNG.permutation(n)
    same(sbk(k[p], v[p], nk, deterministic=True, variant="fixed_point"), want)
    same(sbk(k[p], v[p], nk, how="device_array", variant="host"), want)


def test_float32_double_rounding():
    """1 + 2^-24 + 2^-60: correctly rounded to float32 it is 1 + 2^-23; a
    float64 sum first (1 + 2^-24, a tie) would round to 1."""
    v = np.array([1.0, 2.0 ** -24, 2.0 ** -60, 1.0, -(2.0 ** -24), -(2.0 ** -60)],
                 np.float32)
    k = np.array([0, 0, 0, 1, 1, 1])
    want = np.array([1 + 2.0 ** -23, 1 - 2.0 ** -24], np.float32)
    same(oracle(k, v, 2), want)
    same(np.array([round_f32(Fraction(1) + Fraction(2) ** -24 + Fraction(2) ** -60)]),
         want[:1])
    for variant in VARIANTS:
        same(sbk(k, v, 2, variant=variant), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exact_by_key_specials(dtype):
    inf, nan = np.inf, np.nan
    k = np.array([0, 0, 1, 1, 2, 2, 3, 3, 5, 5, 6])
    v = np.array([inf, 1.0, -inf, 1.0, inf, -inf, nan, 1.0, -0.0, -0.0, 0.0], dtype)
    want = np.array([inf, -inf, nan, nan, 0.0, 0.0, 0.0, 0.0], dtype)  # 4, 7: no values
    for variant in VARIANTS:
        same(sbk(k, v, 8, variant=variant), want)
        same(sbk(k, v, 8, how="device_array", variant=variant), want)


def test_exact_by_key_empty_and_dtypes():
    e = np.zeros(0, np.int64)
    same(sbk(e, np.zeros(0, np.float64), 4), np.zeros(4))
    same(sbk(e, np.zeros(0, np.float32), 3), np.zeros(3, np.float32))
    same(sbk(e, np.zeros(0, np.float64)), np.zeros(0))
    ki = RNG.integers(0, 10, 1000)
    vi = RNG.integers(-1000, 1000, 1000).astype(np.int32)
    r = gpured.sum_by_key(ki, vi, 10, exact=True)  # integers: exact already
    np.testing.assert_array_equal(r, np.bincount(ki, vi, 10).astype(np.int64))
    assert r.dtype == np.int64


def test_exact_by_key_refusals_and_explain():
    k = np.array([0, 1, 1])
    v = np.array([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="exact"):
        gpured.sum_by_key(k, v, 2, op="max", exact=True)
    with pytest.raises(TypeError, match="exact"):
        gpured.reduce_by_key(k, v, exact=True)
    with pytest.raises(gpured.VariantUnavailable, match="exact"):
        gpured.sum_by_key(k, v, 2, exact=True, variant="atomic")
    gpu = gpured.get_device()["type"] == "GPU"
    e = gpured.explain("sum_by_key", k, v, num_keys=2, exact=True)
    assert "exact" in e["why"] and e["variant"] in VARIANTS, e
    if e["variant"] == "host":  # CPU devices
        assert "CPU device" in e["why"] and not gpu, e
    e = gpured.explain("sum_by_key", k, v, num_keys=2, exact=True,
                       variant="fixed_point")
    assert e["variant"] == "fixed_point" and "48 windows" in e["why"], e
    e = gpured.explain_by_key("sum_by_key", k, v.astype(np.float32), exact=True,
                              variant="fixed_point")
    assert e["variant"] == "fixed_point" and "4 windows" in e["why"], e
    e = gpured.explain("sum_by_key", k, v, exact=True, variant="host")
    assert e["variant"] == "host" and "long accumulator" in e["why"], e


def test_exact_by_key_plans():
    """The planner on synthetic devices: fixed-point windows where 64-bit
    atomics and the largest buffer allow, else the host's accumulators."""
    from gpured import _core
    gpu = {"gpu": 1, "compute_units": 132, "max_work_group_size": 1024,
           "fp64": 1, "atomics64": 1, "nvidia_ptx": 1, "name": "H100",
           "local_mem_size": 48 << 10}
    no64 = {"gpu": 1, "compute_units": 60, "max_work_group_size": 256,
            "fp64": 1, "atomics64": 0}

    def plan(caps, vdt="float64", n=1 << 20, nk=1 << 10, **kw):
        return _core.bykey_plan_for(caps, "sum_by_key", np.dtype("int64"),
                                    np.dtype(vdt), "sum", n, nk, n // 2, 7,
                                    exact=True, **kw)
    cpu = {"gpu": 0, "compute_units": 2, "max_work_group_size": 4096,
           "fp64": 1, "atomics64": 1}
    p = plan(cpu)
    assert p["variant"] == "host" and "CPU device" in p["why"], p
    assert plan(cpu, variant="fixed_point")["variant"] == "fixed_point"
    p = plan(gpu, deterministic=True)
    assert p["variant"] == "fixed_point" and "48 windows" in p["why"], p
    assert "4 windows" in plan(gpu, "float32")["why"]
    p = plan(no64)
    assert p["variant"] == "host" and "int64_base_atomics" in p["why"], p
    assert plan(gpu, n=(1 << 31) + 1)["variant"] == "host"
    small = dict(gpu, max_alloc_size=64 << 20)
    assert plan(small, nk=1 << 16)["variant"] == "fixed_point"  # 772 B a key
    p = plan(small, nk=1 << 17)
    assert p["variant"] == "host" and "largest buffer" in p["why"], p
    assert plan(small, "float32", nk=1 << 19)["variant"] == "fixed_point"
    with pytest.raises(gpured.VariantUnavailable, match="int64_base_atomics"):
        plan(no64, variant="fixed_point")
    assert plan(gpu, "int32")["variant"] != "host"  # integers: the plain plan
