"""Issue 41: keys of every integer width across the by-key family,
gpured.bincount and gpured.histogram against NumPy, sum_by_key's private
bins in local memory (the GPU form, reached on CPU devices with
wg_size > 1) and the chooser's picks for few keys (synthetic caps).

Counts must match exactly; float sums within a summation-order bound
(atomics fold in any order), histograms' edges and counts exactly --
values on every edge included, where NumPy's index fix-ups decide.
"""
import warnings

import numpy as np
import pytest

import gpured
from gpured import _core

HAS_FP64 = bool(gpured.get_device()["fp64"])
SMALL_K = ["int8", "uint16"]  # uint8 / int16: bincount, histogram below


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    tol = 64 * np.finfo(np.float64).eps * max(1.0, float(np.abs(want).sum()))
    assert np.allclose(got, want, rtol=0, atol=tol), (got, want)


# ------------------------------------------------------- small key dtypes

@pytest.mark.parametrize("kdt", SMALL_K)
def test_small_keys_every_variant(kdt):
    rng = np.random.default_rng(1)
    k = rng.integers(0, 40, 700).astype(kdt)
    v = rng.integers(-3, 4, 700).astype(np.float32)
    want = np.bincount(k, v, 45).astype(np.float32)
    variants = gpured.variants_by_key("sum_by_key", kdt, "float32")
    assert "private_bins" in variants and "sorted_segments" in variants
    # small groups (4) where the device takes them; whole warps on NVIDIA
    wg = 64 if gpured.get_device()["type"] == "GPU" else 4
    for var in variants:
        got = gpured.sum_by_key(k, v, 45, variant=var, wg_size=wg, items=3)
        assert np.array_equal(got, want), var
    got = gpured.sum_by_key(k, v, 45, deterministic=True, wg_size=wg, items=3)
    assert np.array_equal(got, want)
    ks = np.sort(k)
    st = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    for var in gpured.variants_by_key("reduce_by_key", kdt, "float32"):
        uk, s = gpured.reduce_by_key(ks, v, variant=var, wg_size=wg, items=3)
        assert uk.dtype == np.dtype(kdt) and np.array_equal(uk, ks[st])
        assert np.array_equal(s, np.add.reduceat(v, st)), var
    got = gpured.scan_by_key(ks, v.astype(np.int32), wg_size=wg, items=3)
    want_s = np.concatenate([np.cumsum(v[a:b].astype(np.int64))
                             for a, b in zip(st, np.r_[st[1:], ks.size])])
    assert np.array_equal(got, want_s)


@pytest.mark.parametrize("kdt", ["int8", "int16"])
def test_small_keys_negative(kdt):
    k = np.array([3, 1, -2, 0], kdt)
    for var in ("auto", "atomic", "private_bins", "sorted_segments"):
        with pytest.raises(ValueError, match=r"keys\[2\] = -2 is negative"):
            gpured.sum_by_key(k, np.ones(4, np.float32), 5, variant=var)
    with pytest.raises(ValueError, match=r"keys\[2\] = -2 is negative"):
        gpured.sum_by_key(k, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="out of range"):
        gpured.sum_by_key(np.array([0, 200], np.uint8), np.ones(2), 100)


def test_small_keys_on_device():
    rng = np.random.default_rng(2)
    k = rng.integers(0, 250, 500).astype(np.uint8)
    v = rng.standard_normal(500).astype(np.float32)
    got = gpured.sum_by_key(gpured.to_device(k), gpured.to_device(v), 256)
    assert isinstance(got, gpured.Array)
    assert np.allclose(got.get(), np.bincount(k, v, 256), atol=1e-4)


# ------------------------------------------------- private bins (local)

@pytest.mark.parametrize("nk,wg,vdt,op", [
    (5, 8, "float32", "sum"), (5, 8, "int32", "sum"), (5, 8, "count", "count"),
    (300, 16, "float32", "sum"), (300, 16, "uint64", "sum"),
    (300, 16, "int64", "max"), (16, 64, "float32", "min")])
def test_private_bins_local(nk, wg, vdt, op):
    """wg_size > 1 on a CPU device runs the GPU form: copies of the bins in
    local memory (a copy a work-item where nk x wg fits, else fewer)."""
    rng = np.random.default_rng(3)
    n = 3000
    k = rng.integers(0, nk, n).astype(np.uint16)
    v = None if op == "count" else rng.integers(-50, 50, n).astype(vdt)
    plan = gpured.explain_by_key("sum_by_key", k, v, op, nk,
                                 variant="private_bins", wg_size=wg)
    assert plan["local_copies"] >= 1, plan
    assert plan["local_copies"] == wg or nk * wg * 8 > 32768, plan
    got = gpured.sum_by_key(k, v, nk, op, variant="private_bins", wg_size=wg)
    if op == "count":
        want = np.bincount(k, minlength=nk)
    elif op == "sum":
        rd = np.add.reduce(np.zeros(1, vdt)).dtype
        want = np.zeros(nk, rd)
        np.add.at(want, k, v.astype(rd))
    else:
        rd = np.dtype(vdt)
        fill = (np.inf if op == "min" else -np.inf) if rd.kind == "f" else (
            np.iinfo(rd).max if op == "min" else np.iinfo(rd).min)
        want = np.full(nk, fill, rd)
        getattr(np, "minimum" if op == "min" else "maximum").at(want, k, v)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_sum_by_key_count():
    k = np.random.default_rng(11).integers(0, 30, 500).astype(np.int16)
    want = np.bincount(k, minlength=32)
    for var in gpured.variants_by_key("sum_by_key", "int16", "float32", "count"):
        got = gpured.sum_by_key(k, None, 32, op="count", variant=var)
        assert got.dtype == np.int64 and np.array_equal(got, want), var
    got = gpured.sum_by_key(k, None, 32, op="count", deterministic=True)
    assert np.array_equal(got, want)


H100 = {"gpu": 1, "compute_units": 132, "max_work_group_size": 1024,
        "fp64": 1, "atomics64": 1, "nvidia_ptx": 1, "name": "H100",
        "local_mem_size": 48 << 10}


def plan(nk, vdt="float32", heads=None, desc=None, n=16 << 20, **kw):
    heads = n if heads is None else heads
    desc = n // 2 if desc is None else desc
    return _core.bykey_plan_for(H100, "sum_by_key", np.dtype("int32"),
                                np.dtype(vdt), "sum", n, nk, heads, desc, **kw)


def test_chooser_few_keys():
    p = plan(16)
    assert p["variant"] == "private_bins" and p["local_copies"] == 256, p
    assert "a copy a work-item" in p["why"]
    # sorted keys too: no atomic lands twice on a bin either way
    assert plan(16, heads=16, desc=0)["variant"] == "private_bins"
    p = plan(1024)
    assert p["variant"] == "private_bins" and p["local_copies"] == 8, p
    # runs of equal keys (sorted): one atomic a run a warp instead
    assert plan(1024, heads=1024, desc=0)["variant"] == "warp_aggregated"
    # too many keys for local memory: global atomics
    assert plan(64 ** 3)["variant"] == "atomic"
    assert plan(1 << 20, heads=1 << 20, desc=0)["variant"] == "warp_aggregated"
    # deterministic stays without atomics on values
    assert plan(16, deterministic=True)["variant"] != "private_bins"


# -------------------------------------------------------------- bincount

@pytest.mark.parametrize("xdt", ["uint8", "int16", "uint64", "bool"])
@pytest.mark.parametrize("device", [False, True])
def test_bincount(xdt, device):
    rng = np.random.default_rng(4)
    x = rng.integers(0, 100, 1000).astype(xdt)
    w = rng.standard_normal(1000)
    xin = gpured.to_device(x) if device else x
    for minlength in (0, 150):
        got = gpured.bincount(xin, minlength=minlength)
        want = np.bincount(x, minlength=minlength)
        assert isinstance(got, gpured.Array) == device
        got = got.get() if device else got
        assert got.dtype == want.dtype and np.array_equal(got, want)
        if HAS_FP64:
            got = gpured.bincount(xin, w, minlength=minlength)
            close(got.get() if device else got,
                  np.bincount(x, w, minlength=minlength))


@pytest.mark.skipif(not HAS_FP64, reason="weights sum in float64 (NumPy's)")
def test_bincount_weights_dtypes():
    x = np.array([0, 2, 2, 5], np.uint8)
    for w in (np.array([1, 2, 3, 4], np.float32), np.array([1, 2, 3, 4]),
              [0.5, 1.5, 2.5, 3.5], np.array([True, False, True, True])):
        want = np.bincount(x, w)
        got = gpured.bincount(x, w)
        assert got.dtype == want.dtype == np.float64
        assert np.array_equal(got, want)
    got = gpured.bincount(gpured.to_device(x), gpured.to_device(
        np.array([1, 2, 3, 4], np.float32)))
    assert np.array_equal(got.get(), np.bincount(x, [1, 2, 3, 4]))


def test_bincount_edges():
    for x in ([], (), np.array([], np.int64), np.array([], np.uint8)):
        for ml in (0, 3):
            got, want = gpured.bincount(x, minlength=ml), np.bincount(x, minlength=ml)
            assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(gpured.bincount([1, 2, 2]), np.bincount([1, 2, 2]))
    assert np.array_equal(gpured.bincount(np.array([7])), np.bincount([7]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:   # a list of floats: deprecated in NumPy 2.1, refused later
            want = np.bincount([1.5, 2.0])
        except TypeError:
            with pytest.raises(TypeError):
                gpured.bincount([1.5, 2.0])
        else:
            assert np.array_equal(gpured.bincount([1.5, 2.0]), want)
    d = gpured.to_device(np.array([], np.int32))
    got = gpured.bincount(d, minlength=4)
    assert isinstance(got, gpured.Array) and np.array_equal(got.get(), np.zeros(4))


@pytest.mark.parametrize("args,kw", [
    ((np.array([1, -1, 2]),), {}),
    ((np.array([1, -1], np.int8),), {}),
    ((np.array([1, 2 ** 63], np.uint64),), {}),
    ((np.array([1.0, 2.0]),), {}),
    ((np.array([1, 2], np.float32),), {}),
    ((np.array([[1, 2]]),), {}),
    ((np.array(3),), {}),
    ((np.array([1, 2]),), {"minlength": -1}),
    ((np.array([1, 2]),), {"minlength": None}),
    ((np.array([1, 2]), [1.0]), {}),
    ((np.array([1, 2]), np.array([1, 2], np.complex64)), {}),
    ((np.array([1, 2]), np.array([[1.0, 2.0]])), {}),
])
def test_bincount_errors(args, kw):
    with pytest.raises(Exception) as want:
        np.bincount(*args, **kw)
    with pytest.raises(want.type) as got:
        gpured.bincount(*args, **kw)
    assert str(got.value) == str(want.value)
    if isinstance(args[0], np.ndarray) and args[0].ndim == 1 and \
            args[0].dtype.kind in "iu" and want.type is ValueError and \
            len(args) == 1 and not kw:
        with pytest.raises(ValueError, match="negative"):
            gpured.bincount(gpured.to_device(args[0]))


# ------------------------------------------------------------- histogram

def hist_check(a, *args, **kw):
    got_h, got_e = gpured.histogram(a, *args, **kw)
    want_h, want_e = np.histogram(a, *args, **kw)
    assert got_e.dtype == want_e.dtype and np.array_equal(got_e, want_e)
    assert got_h.dtype == want_h.dtype, (got_h.dtype, want_h.dtype)
    if want_h.dtype.kind == "f" and (kw.get("weights") is not None or
                                     kw.get("density")):
        # NumPy's edges path takes differences of cumulative sums: its
        # error grows with the total, not with the bin
        w = kw.get("weights")
        tot = float(np.abs(w).sum()) if w is not None else 1.0
        assert np.allclose(got_h, want_h, rtol=1e-6, atol=1e-12 * tot)
    else:
        assert np.array_equal(got_h, want_h), (got_h, want_h)


@pytest.mark.parametrize("dt", ["float32", "float64", "int16"])
def test_histogram_uniform_edges(dt):
    """Values on every edge and one ulp either side: NumPy's arithmetic
    index and its fix-ups must give the same bins."""
    rng = np.random.default_rng(5)
    if dt.startswith("float"):
        f = np.dtype(dt).type
        for bins, rng_ in ((7, (-1.3, 1.1)), (10, (0.1, 0.7)),
                           (1000, (-3.0, 3.0)), (13, (1e-3, 1e3))):
            e = np.histogram_bin_edges(np.empty(0, dt), bins, rng_)
            a = np.concatenate([e, np.nextafter(e, f(np.inf)),
                                np.nextafter(e, f(-np.inf)),
                                rng.uniform(rng_[0] - 1, rng_[1] + 1, 500)])
            a = a.astype(dt)
            a[3] = np.nan
            hist_check(a, bins, range=rng_)
            hist_check(a[np.isfinite(a)], bins)
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), 800).astype(dt)
        for bins in (1, 10, 77):
            hist_check(a, bins)
            hist_check(a, bins, range=(-100, 300))


def test_histogram_explicit_edges():
    rng = np.random.default_rng(6)
    a = rng.standard_normal(1000)
    a[:4] = [np.nan, 0.0, 0.25, 2.0]
    for edges in ([-2.0, -0.5, 0.0, 0.0, 0.25, 2.0], [0.0, 1.0],
                  np.linspace(-3, 3, 301)):
        hist_check(a, edges)
        hist_check(a.astype(np.float32), edges, weights=rng.random(1000))
    hist_check(rng.integers(0, 50, 300), [0, 10, 10, 20, 49])


@pytest.mark.skipif(not HAS_FP64, reason="weights sum in float64 (NumPy's)")
def test_histogram_weights_density():
    rng = np.random.default_rng(7)
    a = rng.standard_normal(2000).astype(np.float32)
    for w in (rng.random(2000), rng.integers(0, 5, 2000)):
        hist_check(a, 20, weights=w)
        hist_check(a, 20, range=(-1, 1), weights=w, density=True)
    hist_check(a, 20, density=True)
    hist_check(a, [-1.0, 0.0, 0.5, 3.0], density=True)
    hist_check(a, "auto")
    hist_check(a, "sqrt", range=(-1, 2))


def test_histogram_device_and_empty():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((30, 40))
    h, e = gpured.histogram(gpured.to_device(a), 12)
    hn, en = np.histogram(a, 12)
    assert isinstance(h, gpured.Array) and np.array_equal(h.get(), hn)
    assert np.array_equal(e, en)
    for x in (np.array([]), np.array([5.0, 5.0, 5.0]), np.array([True, False])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            hist_check(x, 4)


@pytest.mark.parametrize("bins,kw", [
    (0, {}), (2.5, {}), ([[1, 2]], {}), ([3, 1], {}),
    (3, {"range": (2, 1)}), (3, {"range": (0, np.inf)}),
])
def test_histogram_errors(bins, kw):
    a = np.arange(4.0)
    with pytest.raises(Exception) as want:
        np.histogram(a, bins, **kw)
    with pytest.raises(want.type) as got:
        gpured.histogram(a, bins, **kw)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="autodetected range"):
        gpured.histogram(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="same shape"):
        gpured.histogram(a, 3, weights=np.ones(3))


def test_explain_bins():
    x = np.random.default_rng(9).integers(0, 16, 5000).astype(np.uint8)
    p = gpured.explain_bins("bincount", x)
    assert p["function"] == "sum_by_key" and p["num_keys"] == 16 and p["why"]
    p = gpured.explain_bins("histogram", x.astype(np.float32), bins=8)
    assert p["num_keys"] == 9 and p["why"]
    with pytest.raises(ValueError, match="bincount"):
        gpured.explain_bins("mean", x)


# ---------------------------------------------------------------- unique

UNIQUE_CASES = [
    ("int8", lambda r: r.integers(-50, 50, (20, 30)).astype(np.int8)),
    ("uint16", lambda r: r.integers(0, 1000, 500).astype(np.uint16)),
    ("bool", lambda r: r.integers(0, 2, 50).astype(bool)),
    ("wide", lambda r: np.array([2 ** 40, 5, 2 ** 40, -3])),  # host path
    ("nan", lambda r: np.array([2.0, np.nan, 1.0, np.nan, 2.0])),
    ("empty", lambda r: np.array([], np.int32)),
    ("one", lambda r: np.array([7, 7, 7], np.uint64)),
]


@pytest.mark.parametrize("name,make", UNIQUE_CASES)
def test_unique(name, make):
    a = make(np.random.default_rng(10))
    for flags in [(False, False, False), (True, False, False),
                  (False, True, False), (False, False, True),
                  (True, True, True)]:
        got, want = gpured.unique(a, *flags), np.unique(a, *flags)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
            assert np.array_equal(g, w, equal_nan=True), (flags, g, w)
    got = gpured.unique(gpured.to_device(a), True, True, True)
    for g, w in zip(got, np.unique(a, True, True, True)):
        assert isinstance(g, gpured.Array)
        assert np.array_equal(g.get(), w, equal_nan=True)


def _float_cases():
    r = np.random.default_rng(11)
    dts = [np.float32, np.float16] + ([np.float64] if HAS_FP64 else [])
    try:
        import ml_dtypes
        dts.append(ml_dtypes.bfloat16)
    except ImportError:  # the optional extra; float16 covers 16-bit keys
        pass
    for dt in dts:
        x = (r.integers(-40, 40, 1500) / 4).astype(dt)
        x[r.random(1500) < 0.1] = np.nan
        x[[3, 40]] = -0.0
        x[[9, 100]] = np.inf
        x[11] = -np.inf
        yield dt, x.reshape(30, 50)
        yield dt, np.array([-0.0, 0.0, 2.0, -0.0], dt)
        yield dt, np.array([0.0, -0.0], dt)
        yield dt, np.array([np.nan, np.nan], dt)
        yield dt, np.array([], dt)


FLAG_SETS = [(False, False, False), (True, False, False),
             (False, True, False), (False, False, True), (True, True, True)]


@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_float_device(equal_nan, monkeypatch):
    """Float device Arrays: the device radix sort on order-preserving bit
    keys (np.unique is never reached: patched to fail); one NaN at the end
    (equal_nan=False: one a NaN, in the order they occur), -0.0 and 0.0
    one value with the sign of its first occurrence (NumPy's, with
    return_index's stable sort)."""
    host_unique = np.unique
    cases = list(_float_cases())

    def refuse(*a, **k):
        raise AssertionError("np.unique reached for a float device Array")

    for dt, x in cases:
        d = gpured.to_device(x)
        for flags in FLAG_SETS:
            # NumPy's own sort of ml_dtypes' bfloat16 misorders: the
            # reference of bfloat16 is float32's, cast back (exact)
            bf = dt not in (np.float16, np.float32, np.float64)
            want = host_unique(x.astype(np.float32) if bf else x, *flags,
                               equal_nan=equal_nan)
            if bf:
                want = (want.astype(dt) if not isinstance(want, tuple) else
                        (want[0].astype(dt),) + want[1:])
            if x.size:
                monkeypatch.setattr(np, "unique", refuse)
            got = gpured.unique(d, *flags, equal_nan=equal_nan)
            monkeypatch.setattr(np, "unique", host_unique)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            assert len(got) == len(want)
            for i, (g, w) in enumerate(zip(got, want)):
                assert isinstance(g, gpured.Array)
                g = g.get()
                assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
                nan = np.isnan(x.ravel().astype(np.float32))
                if flags[1] and i == 1 + flags[0] and not equal_nan:
                    # NaNs' own entries: NumPy's order among them is its
                    # unstable sort's; each NaN once, the rest exact
                    g, w = g.ravel(), w.ravel()
                    assert np.array_equal(g[~nan], w[~nan])
                    assert len(set(g[nan])) == nan.sum()
                    u = got[0].get().astype(np.float32)
                    assert np.array_equal(u[g], x.ravel().astype(np.float32),
                                          equal_nan=True)
                else:
                    assert np.array_equal(g.astype(np.float64),
                                          w.astype(np.float64),
                                          equal_nan=True), (dt, flags, g, w)
            if x.size and flags[0]:
                s = np.signbit(got[0].get().astype(np.float32))
                assert np.array_equal(s, np.signbit(want[0].astype(np.float32)))


def test_unique_float_sizes():
    """Past one sort chunk and tile, keys spread over all 4 radix passes
    (float32) and both 32-bit halves (float64)."""
    r = np.random.default_rng(12)
    for dt in [np.float32] + ([np.float64] if HAS_FP64 else []):
        x = r.standard_normal(9999).astype(dt)
        x[::3] = x[1::3][: x[::3].size]  # duplicates
        got = gpured.unique(gpured.to_device(x), True, True, True)
        for g, w in zip(got, np.unique(x, True, True, True)):
            assert np.array_equal(g.get(), w)
