"""reduce_by_key, sum_by_key, scan_by_key against NumPy.

References: np.<op>.reduceat on run starts (reduce_by_key),
np.bincount / np.minimum.at / np.maximum.at (sum_by_key), a per-run
accumulate (scan_by_key).  Integers must match exactly (wrapping like
NumPy); floats within

    |got - want| <= (m + 2) * eps * sum(|x|)      (sum; m = run length)
    |got - want| <= (m + 2) * eps * |want|        (prod, values near 1)

with eps of the result dtype: any summation order satisfies it (the
classic recursive-summation bound); min/max are exact.

Every variant runs on the current device; the variants a CPU lacks (PTX
paths) are plan-tested through _core.bykey_plan_for with synthetic caps and
run on the GPU by benchmarks/bykey_gpu.sh.
"""
import numpy as np
import pytest

import gpured
from gpured import _core

HAS_FP64 = bool(gpured.get_device()["fp64"])
KDT = ["int32", "int64", "uint32", "uint64"]
VDT = ["int32", "int64", "uint32", "uint64", "float32"] + (["float64"] if HAS_FP64 else [])
VARIANTS = ["atomic", "warp_aggregated", "local_hash", "sorted_segments", "private_bins"]
HAS_LOOKBACK = bool(gpured.get_device()["atomics64"])
# Small tiles so that runs straddle work-items, work-groups and warps.
SMALL = {"wg_size": 4, "items": 3}


def runs_keys(n, mean_run, kdt, rng, order="sorted", nk=None):
    """Keys in runs of random length (mean mean_run), values 0..nk-1."""
    if n == 0:
        return np.zeros(0, kdt)
    lens = rng.integers(1, 2 * mean_run, size=n)  # enough runs
    k = np.repeat(np.arange(len(lens)), lens)[:n]
    if nk is not None:
        k = k % nk
        if order == "sorted":
            k = np.sort(k)
    if order == "partly":
        blk = 16
        m = (n // blk) * blk
        k[:m] = rng.permuted(k[:m].reshape(-1, blk), axis=1).ravel()
    elif order == "random":
        k = rng.permutation(k)
    return k.astype(kdt)


def values(n, vdt, rng, op):
    dt = np.dtype(vdt)
    if op == "prod":
        if dt.kind == "f":
            return rng.uniform(0.9, 1.1, n).astype(dt)
        return rng.integers(1, 4, n).astype(dt)  # wraps in long runs
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, 1000, n).astype(dt)
    return rng.integers(-1000, 1000, n).astype(dt)


def result_dtype(op, vdt):
    if op in ("sum", "prod"):
        return np.add.reduce(np.zeros(1, vdt)).dtype
    return np.dtype(vdt)


UFUNC = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}


def starts_of(k):
    return np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.zeros(0, np.intp)


def check_close(got, want, op, absx, m):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind != "f" or op in ("min", "max"):
        np.testing.assert_array_equal(got, want)
        return
    eps = np.finfo(got.dtype).eps
    scale = absx if op == "sum" else np.abs(want.astype(np.float64))
    bound = (m + 2) * eps * scale
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(err <= bound), (err - bound).max()


def ref_reduce(k, v, op):
    st = starts_of(k)
    lens = np.diff(np.r_[st, k.size])
    if op == "count":
        return k[st], lens.astype(np.int64), None, lens
    rd = result_dtype(op, v.dtype)
    vv = v.astype(rd)
    want = UFUNC[op].reduceat(vv, st) if k.size else np.zeros(0, rd)
    absx = (np.add.reduceat(np.abs(v.astype(np.float64)), st) if k.size
            else np.zeros(0))
    return k[st], want, absx, lens


# (keys, values, op): every key dtype, value dtype and op at least once.
REDUCE_CASES = [
    ("int32", "float32", "sum"), ("int64", "float64", "sum"),
    ("uint32", "int32", "sum"), ("uint64", "uint32", "sum"),
    ("int64", "int64", "prod"), ("int32", "float64", "prod"),
    ("int64", "float32", "min"), ("uint32", "uint64", "max"),
    ("int32", "int32", "min"), ("int64", "uint64", "count"),
]


@pytest.mark.parametrize("kdt,vdt,op", REDUCE_CASES)
@pytest.mark.parametrize("shape", ["small_tiles", "default"])
def test_reduce_by_key(kdt, vdt, op, shape):
    if vdt == "float64" and not HAS_FP64:
        pytest.skip("device has no fp64")
    rng = np.random.default_rng(hash((kdt, vdt, op)) % 2**32)
    n = 1000 if shape == "small_tiles" else 20011
    k = runs_keys(n, 7, kdt, rng)
    v = values(n, vdt, rng, op)
    kw = SMALL if shape == "small_tiles" else {}
    uk, got = gpured.reduce_by_key(k, None if op == "count" else v, op, **kw)
    wk, want, absx, lens = ref_reduce(k, v, op)
    np.testing.assert_array_equal(uk, wk)
    assert uk.dtype == k.dtype
    check_close(got, want, op, absx, lens)


EDGE = {
    "empty": lambda rng: np.zeros(0, np.int64),
    "one": lambda rng: np.array([7], np.int64),
    "single_run": lambda rng: np.full(3001, 42, np.int64),
    "all_distinct": lambda rng: np.arange(3001, dtype=np.int64) * 3,
    "unsorted_runs": lambda rng: np.repeat(rng.integers(0, 5, 400), 3),
    "runs_of_32": lambda rng: np.repeat(np.arange(100), 32),  # warp-aligned
    "runs_of_33": lambda rng: np.repeat(np.arange(100), 33),  # straddling
}


@pytest.mark.parametrize("case", list(EDGE))
@pytest.mark.parametrize("kw", [{}, SMALL], ids=["default", "small_tiles"])
def test_reduce_by_key_edges(case, kw):
    rng = np.random.default_rng(5)
    k = EDGE[case](rng).astype(np.int64)
    v = values(k.size, "float32", rng, "sum")
    uk, got = gpured.reduce_by_key(k, v, "sum", **kw)
    wk, want, absx, lens = ref_reduce(k, v, "sum")
    np.testing.assert_array_equal(uk, wk)
    check_close(got, want, "sum", absx, lens)
    _, cnt = gpured.reduce_by_key(k, None, "count", **kw)
    np.testing.assert_array_equal(cnt, lens)


# Single pass (variant lookback; each geometry is a program build): tiles
# of 12 (runs straddle work-items and tiles), whole warps in tiles of 64.
# On GPUs the default geometry runs in every reduce_by_key test above.
LB_CASES = [("int32", "float32", "sum", SMALL),
            ("int32", "float32", "sum", {"wg_size": 32, "items": 2}),
            ("int64", "int64", "prod", SMALL), ("uint32", "uint64", "max", SMALL),
            ("int64", "uint64", "count", SMALL)]


@pytest.mark.parametrize("kdt,vdt,op,kw", LB_CASES)
def test_reduce_by_key_lookback(kdt, vdt, op, kw):
    if vdt == "float64" and not HAS_FP64:
        pytest.skip("device has no fp64")
    if "lookback" not in gpured.variants_by_key("reduce_by_key", kdt, vdt, op):
        pytest.skip("device has no 64-bit atomics")
    rng = np.random.default_rng(hash((kdt, vdt, op, 1)) % 2**32)
    # short runs, one run longer than many tiles, distinct keys, a tail run
    k = np.r_[runs_keys(1500, 5, "int64", rng), np.full(900, 10 ** 5),
              np.arange(2 * 10 ** 5, 2 * 10 ** 5 + 300),
              np.full(37, 3 * 10 ** 5)].astype(kdt)
    v = values(k.size, vdt, rng, op)
    wk, want, absx, lens = ref_reduce(k, v, op)
    args = (k, None if op == "count" else v, op)
    uk, got = gpured.reduce_by_key(*args, variant="lookback", **kw)
    np.testing.assert_array_equal(uk, wk)
    check_close(got, want, op, absx, lens)
    again = gpured.reduce_by_key(*args, variant="lookback", **kw)[1]
    assert again.tobytes() == got.tobytes()  # no value goes through atomics


def test_reduce_by_key_lookback_many_tiles():
    """2^20 keys in runs of 64 (the issue-5 shape, smaller): look-back
    chains over thousands of tiles; exact for integer values."""
    if "lookback" not in gpured.variants_by_key("reduce_by_key", "int32", "int32", "sum"):
        pytest.skip("device has no 64-bit atomics")
    n = 1 << 20
    k = (np.arange(n) >> 6).astype(np.int32)
    v = (np.arange(n) % 7).astype(np.int32)
    want = np.add.reduceat(v.astype(np.int64), np.arange(0, n, 64))
    gpu = gpured.get_device()["type"] == "GPU"
    for kw in [{"wg_size": 32, "items": 1}] + ([{}] if gpu else []):
        uk, got = gpured.reduce_by_key(k, v, variant="lookback", **kw)
        np.testing.assert_array_equal(uk, np.arange(n >> 6, dtype=np.int32))
        np.testing.assert_array_equal(got, want)
    p = gpured.explain_by_key("reduce_by_key", k, v, deterministic=True)
    assert p["variant"] == ("lookback" if gpu else "sorted_segments")  # both reproducible


@pytest.mark.parametrize("kdt,vdt", [("int32", "float32"), ("int64", "float64"),
                                     ("uint32", "int64"), ("int64", "int32")])
@pytest.mark.parametrize("off", [0, 1, 2, 4])
def test_reduce_by_key_lookback_vector_loads(kdt, vdt, off):
    """Items a multiple of 4: full tiles whose keys and values start
    16-byte aligned are staged with vector loads (bykey.cl bk_stage); device
    views that start 1 or 2 elements in take the scalar loads, 4 elements in
    the vector ones again; the last, partial tile always the scalar ones."""
    if vdt == "float64" and not HAS_FP64:
        pytest.skip("device has no fp64")
    if "lookback" not in gpured.variants_by_key("reduce_by_key", kdt, vdt, "sum"):
        pytest.skip("device has no 64-bit atomics")
    rng = np.random.default_rng(off + 17 * len(kdt + vdt))
    n = 6000
    k = runs_keys(n + off, 5, kdt, rng)
    v = values(n + off, vdt, rng, "sum")
    wk, want, absx, lens = ref_reduce(k[off:], v[off:], "sum")
    kd, vd = gpured.to_device(k)[off:], gpured.to_device(v)[off:]
    for kw in ({"wg_size": 8, "items": 4}, {"wg_size": 32, "items": 8}):
        uk, got = gpured.reduce_by_key(kd, vd, variant="lookback", **kw)
        np.testing.assert_array_equal(uk.get(), wk)
        check_close(got.get(), want, "sum", absx, lens)
        _, cnt = gpured.reduce_by_key(kd, None, "count", variant="lookback", **kw)
        np.testing.assert_array_equal(cnt.get(), lens)


def ref_scan(k, v, op, exclusive):
    rd = result_dtype(op, v.dtype)
    out = np.empty(k.size, rd)
    absx = np.empty(k.size)
    st = starts_of(k)
    ident = {"sum": 0, "prod": 1}.get(op)
    if ident is None:
        info = np.finfo(rd) if rd.kind == "f" else np.iinfo(rd)
        ident = (np.inf if op == "min" else -np.inf) if rd.kind == "f" else (
            info.max if op == "min" else info.min)
    for a, b in zip(st, np.r_[st[1:], k.size]):
        acc = UFUNC[op].accumulate(v[a:b].astype(rd))
        ab = np.cumsum(np.abs(v[a:b].astype(np.float64)))
        if exclusive:
            acc = np.r_[np.array([ident], rd), acc[:-1]]
            ab = np.r_[0.0, ab[:-1]]
        out[a:b] = acc
        absx[a:b] = ab
    return out, absx, np.diff(np.r_[st, k.size]).max(initial=1)


SCAN_CASES = [("int64", "float64", "sum"), ("int32", "float32", "sum"),
              ("uint64", "int32", "sum"), ("uint32", "uint32", "prod"),
              ("int64", "float32", "max"), ("int32", "int64", "min")]


@pytest.mark.parametrize("kdt,vdt,op", SCAN_CASES)
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_by_key(kdt, vdt, op, exclusive):
    if vdt == "float64" and not HAS_FP64:
        pytest.skip("device has no fp64")
    rng = np.random.default_rng(11)
    for n, kw in ((0, {}), (1, {}), (2500, SMALL), (9000, {})):
        k = runs_keys(n, 9, kdt, rng)
        v = values(n, vdt, rng, op)
        got = gpured.scan_by_key(k, v, op, exclusive=exclusive, **kw)
        want, absx, m = ref_scan(k, v, op, exclusive)
        check_close(got, want, op, absx, m)


def ref_dense(k, v, op, nk):
    rd = result_dtype(op, v.dtype)
    if op == "sum":
        out = np.zeros(nk, rd)
        np.add.at(out, k.astype(np.int64), v.astype(rd))
    else:
        info = np.finfo(rd) if rd.kind == "f" else np.iinfo(rd)
        fill = (np.inf if op == "min" else -np.inf) if rd.kind == "f" else (
            info.max if op == "min" else info.min)
        out = np.full(nk, fill, rd)
        UFUNC[op].at(out, k.astype(np.int64), v)
    absx = np.bincount(k.astype(np.int64), np.abs(v.astype(np.float64)), minlength=nk)
    m = np.bincount(k.astype(np.int64), minlength=nk)
    return out, absx, m


DENSE_CASES = [("int64", "float64", "sum"), ("int32", "float32", "sum"),
               ("uint32", "int32", "sum"), ("uint64", "uint64", "sum"),
               ("int64", "int64", "min"), ("int32", "float32", "max"),
               ("uint64", "uint32", "max"), ("int32", "float64", "min")]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kdt,vdt,op", DENSE_CASES)
def test_sum_by_key_variants(variant, kdt, vdt, op):
    if vdt == "float64" and not HAS_FP64:
        pytest.skip("device has no fp64")
    if variant not in gpured.variants_by_key("sum_by_key", kdt, vdt, op):
        pytest.fail("variant %s unavailable on this device" % variant)
    rng = np.random.default_rng(3)
    nk = 300
    for order in ("sorted", "partly", "random"):
        k = runs_keys(5000, 6, kdt, rng, order=order, nk=nk)
        v = values(k.size, vdt, rng, op)
        want, absx, m = ref_dense(k, v, op, nk + 5)
        if variant == "sorted_segments" and order != "sorted":
            got = gpured.sum_by_key(k, v, nk + 5, op, deterministic=True,
                                    variant="sorted_segments")
        else:
            got = gpured.sum_by_key(k, v, nk + 5, op, variant=variant)
        check_close(got, want, op, absx, m)


@pytest.mark.parametrize("variant", VARIANTS)
def test_sum_by_key_small_tiles_and_edges(variant):
    rng = np.random.default_rng(9)
    kw = {"wg_size": 4 if variant != "warp_aggregated" or not gpured.get_device()["nvidia_ptx"] else 32,
          "items": 3}
    cases = [np.zeros(0, np.int64), np.array([3]), np.full(1000, 2),
             np.arange(1000), np.repeat(np.arange(40), 33)]
    for k in cases:
        k = k.astype(np.int64)
        v = values(k.size, "float32", rng, "sum")
        nk = int(k.max()) + 1 if k.size else 0
        want, absx, m = ref_dense(k, v, "sum", nk)
        got = gpured.sum_by_key(k, v, variant=variant, **kw)
        assert got.shape == (nk,)
        check_close(got, want, "sum", absx, m)


def test_sum_by_key_defaults_and_identities():
    k = np.array([4, 1, 4, 1, 1], np.int32)
    v = np.array([1.5, 2.0, -1.0, 0.25, 3.0])
    got = gpured.sum_by_key(k, v)
    np.testing.assert_array_equal(got, np.bincount(k, v))
    mn = gpured.sum_by_key(k, v, 7, "min")
    assert mn[0] == np.inf and mn[6] == np.inf and mn[1] == 0.25 and mn[4] == -1.0
    mx = gpured.sum_by_key(k, v.astype(np.int32), 6, "max")
    assert mx.dtype == np.int32 and mx[0] == np.iinfo(np.int32).min and mx[4] == 1
    s32 = gpured.sum_by_key(k, np.ones(5, np.int32))
    assert s32.dtype == np.int64
    np.testing.assert_array_equal(gpured.sum_by_key(np.zeros(0, np.int64),
                                                    np.zeros(0)), np.zeros(0))
    np.testing.assert_array_equal(gpured.sum_by_key(np.zeros(0, np.int64),
                                                    np.zeros(0), 3), np.zeros(3))


def test_sum_by_key_nan_min_max():
    k = np.array([0, 0, 1, 1, 2], np.int64)
    v = np.array([1.0, np.nan, 2.0, 3.0, np.nan], np.float32)
    for variant in VARIANTS:
        want, _, _ = ref_dense(k, v, "min", 3)
        got = gpured.sum_by_key(k, v, 3, "min", variant=variant)
        np.testing.assert_array_equal(got, want)


def test_sum_by_key_deterministic_bitwise():
    rng = np.random.default_rng(4)
    k = rng.integers(0, 500, 20000).astype(np.int64)
    v = (rng.standard_normal(20000) * 10.0 ** rng.integers(-8, 8, 20000)).astype(np.float32)
    a = gpured.sum_by_key(k, v, deterministic=True)
    b = gpured.sum_by_key(k[::-1].copy()[::-1].copy(), v.copy(), deterministic=True)
    assert a.tobytes() == b.tobytes()
    want, absx, m = ref_dense(k, v, "sum", 500)
    check_close(a, want, "sum", absx, m)
    gpu_lb = gpured.get_device()["type"] == "GPU" and HAS_LOOKBACK
    # GPUs: float sums on unsorted keys in fixed point (test_bykey_fixed.py)
    assert gpured.explain_by_key("sum_by_key", k, v, deterministic=True)["variant"] == (
        "fixed_point" if gpu_lb and gpured.get_device()["fp64"] else "sorted_segments")


@pytest.fixture
def on_device():
    """The device's plans for NumPy inputs (the host path placement may
    pick instead is tests/test_host_bykey.py's)."""
    old = gpured.placement("current")
    yield
    gpured.placement(old)


def test_auto_and_explain(on_device):
    rng = np.random.default_rng(2)
    k = runs_keys(4000, 10, "int64", rng, nk=500)
    v = values(k.size, "float64" if HAS_FP64 else "float32", rng, "sum")
    plan = gpured.explain_by_key("sum_by_key", k, v)
    assert plan["variant"] in VARIANTS and plan["why"]
    assert plan["descents"] == 0 and plan["num_keys"] == k.max() + 1
    assert plan["heads"] == starts_of(k).size
    want_rbk = "lookback" if gpured.get_device()["type"] == "GPU" and HAS_LOOKBACK else "sorted_segments"
    assert gpured.explain_by_key("reduce_by_key", k, v)["variant"] == want_rbk
    t = gpured.timeit_by_key("reduce_by_key", k, v, reps=2)
    assert t["seconds"] > 0 and len(t["times"]) == 2
    np.testing.assert_array_equal(t["result"][0], k[starts_of(k)])
    names = gpured.variants_by_key("sum_by_key", "int64", "float32", "sum")
    assert names[0] == "auto" and set(VARIANTS) <= set(names)
    assert gpured.variants_by_key("reduce_by_key", "int64", "float32", "sum") == [
        "auto", "sorted_segments"] + (["lookback"] if HAS_LOOKBACK else [])


# ------------------------------------------------------------ bad input

def test_bad_inputs():
    k = np.array([0, 1, 2], np.int64)
    v = np.ones(3)
    with pytest.raises(ValueError, match="same length"):
        gpured.sum_by_key(k, np.ones(4))
    with pytest.raises(ValueError, match="same length"):
        gpured.reduce_by_key(k, np.ones(2))
    with pytest.raises(TypeError, match="keys must be integers"):
        gpured.sum_by_key(np.array([0.0, 1.0, 2.0]), v)
    with pytest.raises(TypeError, match="keys"):
        gpured.reduce_by_key(np.array([0, 1, 2], np.bool_), v)
    with pytest.raises(TypeError, match="values"):
        gpured.reduce_by_key(k, np.zeros(3, "M8[s]"))
    with pytest.raises(ValueError, match="1-D"):
        gpured.scan_by_key(k.reshape(1, 3), v.reshape(1, 3))
    with pytest.raises(ValueError, match="unknown op"):
        gpured.sum_by_key(k, v, op="prod")
    with pytest.raises(ValueError, match="unknown variant"):
        gpured.sum_by_key(k, v, variant="nope")
    with pytest.raises(gpured.VariantUnavailable, match="sorted_segments"):
        gpured.reduce_by_key(k, v, variant="atomic")
    with pytest.raises(gpured.VariantUnavailable, match="deterministic"):
        gpured.sum_by_key(k, v, variant="atomic", deterministic=True)
    with pytest.raises(ValueError, match="num_keys"):
        gpured.sum_by_key(k, v, num_keys=-1)


@pytest.mark.parametrize("kdt", KDT)
def test_bad_keys_first_index(kdt):
    k = np.arange(5000).astype(kdt) % 100
    v = np.ones(5000, np.float32)
    bad = k.copy()
    bad[1234] = 100
    bad[4000] = 150
    with pytest.raises(ValueError, match=r"keys\[1234\] = 100 is out of range"):
        gpured.sum_by_key(bad, v, num_keys=100)
    if np.dtype(kdt).kind == "i":
        neg = k.copy()
        neg[777] = -3
        neg[999] = -1
        with pytest.raises(ValueError, match=r"keys\[777\] = -3 is negative"):
            gpured.sum_by_key(neg, v)
        with pytest.raises(ValueError, match=r"keys\[777\]"):
            gpured.sum_by_key(neg, v, deterministic=True)
    np.testing.assert_array_equal(gpured.sum_by_key(k, v, num_keys=100),
                                  np.bincount(k.astype(np.int64), v, 100))


def test_inputs_not_modified_and_views():
    rng = np.random.default_rng(8)
    k = np.sort(rng.integers(0, 50, 2000)).astype(">i8")  # byte-swapped
    v = rng.standard_normal(4000)[::2]                    # strided
    k0, v0 = k.copy(), v.copy()
    got = gpured.sum_by_key(k, v)
    np.testing.assert_allclose(got, np.bincount(k.astype(np.int64), v), rtol=1e-12, atol=1e-12)
    uk, _ = gpured.reduce_by_key(k, v)
    np.testing.assert_array_equal(uk, np.unique(k0))
    np.testing.assert_array_equal(k, k0)
    np.testing.assert_array_equal(v, v0)


# ------------------------------------------------- plans on synthetic devices

H100 = {"gpu": 1, "compute_units": 132, "max_work_group_size": 1024,
        "fp64": 1, "atomics64": 1, "nvidia_ptx": 1, "name": "H100",
        "local_mem_size": 48 << 10}
CPU = {"gpu": 0, "compute_units": 2, "max_work_group_size": 4096, "fp64": 1,
       "atomics64": 1}
OTHER_GPU = {"gpu": 1, "compute_units": 60, "max_work_group_size": 256,
             "fp64": 1, "atomics64": 0}


def plan(caps, func="sum_by_key", n=10 << 20, nk=1 << 20, heads=None, desc=0,
         vdt="float64", kdt="int64", **kw):
    heads = n // 10 if heads is None else heads
    return _core.bykey_plan_for(caps, func, np.dtype(kdt), np.dtype(vdt),
                                "sum", n, nk, heads, desc, **kw)


def test_plans_gpu():
    p = plan(H100, sm=9)
    assert p["variant"] == "warp_aggregated" and p["wg_size"] == 256
    p = plan(H100, desc=500000, sm=9)
    assert p["variant"] == "warp_aggregated" and p["ptx"] and p["match_any"]
    assert not plan(H100, desc=5, sm=6, variant="warp_aggregated")["match_any"]
    assert plan(H100, heads=10 << 20, desc=5 << 20)["variant"] == "atomic"
    # deterministic: float sums on unsorted keys in fixed point (no sort),
    # sorted keys and the rest through lookback (unsorted: radix sort first)
    assert plan(H100, deterministic=True, desc=7)["variant"] == "fixed_point"
    assert plan(H100, deterministic=True, desc=7, vdt="float32")["variant"] == "fixed_point"
    assert plan(H100, deterministic=True, desc=0)["variant"] == "lookback"
    # integer values: atomics are exact, so deterministic=True changes nothing
    for vdt in ("int32", "uint64"):
        p = plan(H100, deterministic=True, desc=7, vdt=vdt, heads=10 << 20)
        assert p["variant"] == "atomic" and "integer values" in p["why"], p
        assert plan(H100, deterministic=True, desc=7, vdt=vdt, variant="atomic")["variant"] == "atomic"
        assert plan(CPU, deterministic=True, desc=7, vdt=vdt)["variant"] == "private_bins"
    with pytest.raises(gpured.VariantUnavailable, match="reproducible"):
        plan(H100, deterministic=True, desc=7, vdt="float32", variant="atomic")
    assert plan(CPU, deterministic=True, desc=7)["variant"] == "sorted_segments"
    # float32 needs no fp64 (chunk words, rounded in float); float64 does
    assert plan(dict(H100, fp64=0), deterministic=True, desc=7, vdt="float32")["variant"] == "fixed_point"
    # 32 bits of headroom above a key's largest value: 2^31 values at most
    assert plan(H100, deterministic=True, desc=7, n=(1 << 31) + 1)["variant"] == "lookback"
    with pytest.raises(gpured.VariantUnavailable, match="2\\^31 values"):
        plan(H100, variant="fixed_point", n=(1 << 31) + 1)
    with pytest.raises(gpured.VariantUnavailable, match="too many keys"):
        plan(dict(H100, max_alloc_size=1 << 20), vdt="float32", nk=1 << 20, variant="fixed_point")
    assert plan(OTHER_GPU, deterministic=True, desc=7)["variant"] != "fixed_point"
    with pytest.raises(gpured.VariantUnavailable, match="64-bit atomics|int64_base"):
        plan(OTHER_GPU, variant="fixed_point")
    p = plan(H100, func="reduce_by_key", vdt="float32")
    assert p["variant"] == "lookback" and (p["wg_size"], p["items"]) == (128, 16)
    # 4 + 4 B: 256 x 16 (benchmarks/exp/bykey_lb.py); items a power of two
    p = plan(H100, func="reduce_by_key", vdt="float32", kdt="int32")
    assert (p["wg_size"], p["items"]) == (256, 16)
    assert plan(H100, func="reduce_by_key", wg_size=512, kdt="int32")["items"] == 4  # 32768 / 6144 = 5
    # the tile within local memory: 32 KiB (Oclgrind's) takes 128 x 16,
    # and a wg_size given gets fewer items; items given that do not fit fail
    small = dict(H100, local_mem_size=32 << 10)
    p = plan(small, func="reduce_by_key", vdt="float32", kdt="int32")
    assert (p["wg_size"], p["items"]) == (128, 16)
    assert plan(small, func="reduce_by_key", vdt="float32", kdt="int32",
                wg_size=256)["items"] == 8
    with pytest.raises(ValueError, match="bytes of local memory"):
        plan(small, func="reduce_by_key", vdt="float32", kdt="int32",
             variant="lookback", wg_size=256, items=16)
    assert plan(H100, func="reduce_by_key", wg_size=256)["items"] == 8  # 8 + 8 B: 32 KiB
    assert plan(H100, func="reduce_by_key", deterministic=True)["variant"] == "lookback"
    assert plan(H100, func="reduce_by_key", variant="sorted_segments",
                n=1 << 28)["items"] == 8
    assert plan(H100, variant="lookback", deterministic=True)["variant"] == "lookback"
    with pytest.raises(gpured.VariantUnavailable, match="reduce_by_key and sum_by_key only"):
        plan(H100, func="scan_by_key", variant="lookback")
    with pytest.raises(ValueError, match="items <= 32"):
        plan(H100, func="reduce_by_key", variant="lookback", items=33)
    with pytest.raises(ValueError, match="whole warps"):
        plan(H100, variant="warp_aggregated", wg_size=16)


def test_plans_cpu_and_unavailable():
    p = plan(CPU)
    assert p["variant"] == "private_bins" and p["parts"] == 2
    assert plan(CPU, nk=1 << 30)["variant"] == "sorted_segments"
    for v in ("atomic", "warp_aggregated", "local_hash"):
        with pytest.raises(gpured.VariantUnavailable, match="int64_base_atomics"):
            plan(OTHER_GPU, variant=v)
        assert plan(OTHER_GPU, variant=v, vdt="float32")["variant"] == v
        with pytest.raises(gpured.VariantUnavailable, match="input order"):
            plan(CPU, func="scan_by_key", variant=v)
    assert plan(OTHER_GPU)["variant"] == "sorted_segments"
    assert plan(OTHER_GPU, func="reduce_by_key")["variant"] == "sorted_segments"
    assert plan(CPU, func="reduce_by_key")["variant"] == "sorted_segments"
    with pytest.raises(gpured.VariantUnavailable, match="int64_base_atomics"):
        plan(OTHER_GPU, func="reduce_by_key", variant="lookback")
    assert not plan(OTHER_GPU, vdt="float32", variant="warp_aggregated")["ptx"]
    with pytest.raises(ValueError, match="power of two"):
        plan(CPU, wg_size=3)


# ------------------------------------------------ CPU chunk path, fused check

@pytest.mark.parametrize("op", ["sum", "count", "max"])
def test_reduce_by_key_chunks(op):
    """wg_size 1 on a CPU: the two-pass chunk kernels; tiny chunks so runs
    cross chunk boundaries (and one run spans many chunks)."""
    rng = np.random.default_rng(11)
    k = np.r_[runs_keys(300, 4, "int64", rng), np.full(40, 10 ** 6)].astype(np.int64)
    v = values(k.size, "float32", rng, op)
    want_k, want = ref_reduce(k, v, op)[:2]
    for kw in ({"wg_size": 1, "items": 3}, {"wg_size": 1, "items": 1}, {}):
        uk, got = gpured.reduce_by_key(k, None if op == "count" else v, op, **kw)
        np.testing.assert_array_equal(uk, want_k)
        if op == "sum":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
        else:
            np.testing.assert_array_equal(got, want)
    ks = np.sort(k % 50)
    got = gpured.sum_by_key(ks, v, 50, deterministic=True, wg_size=1, items=7)
    np.testing.assert_allclose(got, np.bincount(ks, v.astype(np.float64), 50).astype(np.float32),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("variant", ["atomic", "warp_aggregated", "local_hash"])
def test_fused_key_check(variant):
    """num_keys given + an atomic variant: the key check runs inside the
    aggregation kernel; the first bad index is still reported."""
    k = np.arange(3000, dtype=np.int64) % 70
    v = np.ones(3000)
    bad = k.copy()
    bad[2100] = 70
    bad[2500] = -1
    bad[2999] = 99
    with pytest.raises(ValueError, match=r"keys\[2100\] = 70 is out of range"):
        gpured.sum_by_key(bad, v, 70, variant=variant, wg_size=32, items=3)
    bad[1000] = -5
    with pytest.raises(ValueError, match=r"keys\[1000\] = -5 is negative"):
        gpured.sum_by_key(bad, v, 70, variant=variant)
    np.testing.assert_array_equal(gpured.sum_by_key(k, v, 70, variant=variant),
                                  np.bincount(k, v, 70))


# ------------------------------------------------------- device arrays

def _ref_all(k, v):
    return {"reduce": gpured.reduce_by_key(k, v),
            "count": gpured.reduce_by_key(k, None, "count"),
            "scan": gpured.scan_by_key(k, v, "max", exclusive=True),
            "dense": gpured.sum_by_key(k, v),
            "dense_nk": gpured.sum_by_key(k, v, 40, "min"),
            "det": gpured.sum_by_key(k[::-1].copy(), v, deterministic=True)}


def _dev_all(k, v, kh):
    return {"reduce": gpured.reduce_by_key(k, v),
            "count": gpured.reduce_by_key(k, None, "count"),
            "scan": gpured.scan_by_key(k, v, "max", exclusive=True),
            "dense": gpured.sum_by_key(k, v),
            "dense_nk": gpured.sum_by_key(k, v, 40, "min"),
            "det": gpured.sum_by_key(gpured.to_device(kh[::-1].copy()) if isinstance(k, gpured.Array)
                                     else kh[::-1].copy(), v, deterministic=True)}


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert isinstance(got, gpured.Array), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)


def test_device_arrays():
    rng = np.random.default_rng(21)
    vdt = np.float64 if HAS_FP64 else np.float32
    kh = runs_keys(5000, 6, "int64", rng, nk=40)
    vh = values(kh.size, vdt, rng, "sum")
    want = _ref_all(kh, vh)
    kd, vd = gpured.to_device(kh), gpured.to_device(vh)
    for k, v in ((kd, vh), (kh, vd), (kd, vd)):
        got = _dev_all(k, v, kh)
        for name in want:
            if name == "count" and k is kh:
                continue  # no values: host keys, host result
            _same(got[name], want[name])
    # strided views (copied on the device) and an offset view
    k2 = gpured.to_device(np.repeat(kh, 2))[::2]
    v2 = gpured.to_device(np.r_[np.zeros(3, vdt), vh])[3:]
    assert not k2.is_c_contiguous and v2.offset > 0
    _same(gpured.reduce_by_key(k2, v2), want["reduce"])
    _same(gpured.sum_by_key(k2, v2), want["dense"])
    _same(gpured.scan_by_key(k2, v2, "max", exclusive=True), want["scan"])
    # empty inputs
    e = gpured.to_device(np.zeros(0, np.int64))
    uk, r = gpured.reduce_by_key(e, np.zeros(0, vdt))
    assert isinstance(uk, gpured.Array) and uk.shape == (0,) and r.shape == (0,)
    assert gpured.sum_by_key(e, np.zeros(0, vdt), 5).get().tolist() == [0] * 5


def test_device_arrays_errors():
    kh = np.array([0, 1, 1, 7, 2], np.int64)
    vh = np.ones(5, np.float32)
    kd = gpured.to_device(kh)
    with pytest.raises(ValueError, match=r"keys\[3\] = 7 is out of range"):
        gpured.sum_by_key(kd, vh, num_keys=5)
    with pytest.raises(ValueError, match=r"keys\[3\] = 7"):
        gpured.sum_by_key(kd, vh, num_keys=5, variant="atomic")
    with pytest.raises(ValueError, match="same length"):
        gpured.reduce_by_key(kd, np.ones(4))
    with pytest.raises(TypeError, match="values"):
        gpured.sum_by_key(kd, gpured.to_device(np.ones(5, np.int8)))
    dead = gpured.to_device(kh)
    dead.release()
    for f in (lambda: gpured.reduce_by_key(dead, vh),
              lambda: gpured.sum_by_key(kh, dead, 8),
              lambda: gpured.scan_by_key(dead, gpured.to_device(vh))):
        with pytest.raises(ValueError, match="released"):
            f()
    t = gpured.timeit_by_key("sum_by_key", kd, vh, num_keys=8, reps=1)
    np.testing.assert_array_equal(t["result"], np.bincount(kh, vh, 8).astype(np.float32))
