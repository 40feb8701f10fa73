"""Deterministic sum_by_key on unsorted keys: the stable radix sort on the
device (GPUs' float sums take fixed_point instead, tests/test_bykey_fixed.py;
_check then asks for the same bits in another order) (kernels/bykey.cl, "radix sort"; 8 bits per pass: contiguous chunks
on CPUs, one sweep per pass over tiles of 256 x 12 on GPUs), then the
sorted keys' runs (sorted_segments; lookback on GPUs).

Two checks on every case:
- against NumPy (np.add.at / np.minimum.at, test_bykey's bound for sums);
- bitwise against the same call on keys already sorted with NumPy's stable
  argsort, which skips the sort: a stable sort hands the sorted-segments
  kernels exactly those pairs, so any slip of the device sort (a lost,
  doubled or reordered element among equal keys) changes bits.
Sizes straddle the tile (511..2049) and the pass counts (max key below 2^8,
2^16, 2^24 and past it: 1 to 4 passes).
"""
import numpy as np
import pytest

import gpured
from test_bykey import HAS_FP64, HAS_LOOKBACK, check_close, ref_dense, values

SIZES = [2, 7, 511, 512, 513, 2047, 2048, 2049, 20001]
NUM_KEYS = [2, 256, 257, 65537, (1 << 24) + 3]


def _presorted(k, v, nk, op):
    o = np.argsort(k, kind="stable")
    return gpured.sum_by_key(k[o], v[o], nk, op, deterministic=True)


def _check(k, v, nk, op):
    plan = gpured.explain_by_key("sum_by_key", k, v, num_keys=nk, op=op,
                                 deterministic=True)
    unsorted = bool(np.any(k[1:] < k[:-1]))
    got = gpured.sum_by_key(k, v, nk, op, deterministic=True)
    want, absx, m = ref_dense(k, v, op, nk)
    check_close(got, want, op, absx, m)
    if plan["variant"] == "fixed_point":
        # GPUs' float sums on unsorted keys: no sort, exact integer sums
        # (tests/test_bykey_fixed.py); the same bits in any order
        assert unsorted, plan["why"]
        o = np.random.default_rng(0).permutation(k.size)
        again = gpured.sum_by_key(k[o], v[o], nk, op, deterministic=True)
        assert got.tobytes() == again.tobytes()
        return got
    if plan["variant"] not in ("lookback", "sorted_segments"):
        # integer values: atomics are exact in any order, no sort
        assert v.dtype.kind in "iu" and "sort on the device" not in plan["why"], plan["why"]
    else:
        assert ("radix sort on the device" in plan["why"]) == unsorted, plan["why"]
    assert got.tobytes() == _presorted(k, v, nk, op).tobytes()
    return got


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("nk", NUM_KEYS)
def test_sizes_and_passes(n, nk):
    rng = np.random.default_rng(n * 31 + nk)
    k = rng.integers(0, nk, n).astype(np.int64)
    k[0] = nk - 1  # the largest key sets the passes; never sorted
    v = values(n, "float32", rng, "sum") * np.float32(10.0) ** rng.integers(-6, 6, n).astype(np.float32)
    _check(k, v, nk, "sum")


DTYPES = [("int32", "float32", "sum"), ("int64", "float64", "sum"),
          ("uint32", "int32", "sum"), ("uint64", "uint64", "sum"),
          ("int64", "uint32", "sum"), ("int32", "uint64", "min"),
          ("int64", "float32", "min"), ("uint32", "float64", "max"),
          ("int32", "int64", "min"), ("uint64", "float32", "max")]


@pytest.mark.parametrize("kdt,vdt,op", DTYPES)
def test_dtypes(kdt, vdt, op):
    if vdt == "float64" and not HAS_FP64:
        pytest.skip("device has no fp64")
    rng = np.random.default_rng(7)
    for nk in (100, 3000, 70000):
        k = rng.integers(0, min(nk, np.iinfo(kdt).max), 9000).astype(kdt)
        v = values(k.size, vdt, rng, op)
        _check(k, v, nk, op)


def test_key_patterns():
    """Runs, one descent, every key equal but the first, reversed keys,
    many duplicates of few keys in no order."""
    rng = np.random.default_rng(11)
    n = 6000
    cases = [np.r_[np.arange(1, n), 0], np.r_[5, np.zeros(n - 1, np.int64)],
             np.arange(n)[::-1].copy(), rng.integers(0, 3, n),
             np.repeat(rng.permutation(300), 20),
             np.tile(np.arange(1000), 6)]
    for k in cases:
        k = k.astype(np.int64)
        nk = int(k.max()) + 1
        _check(k, values(k.size, "float32", rng, "sum"), nk, "sum")


def test_nan_and_signed_zero_order():
    """NaN and -0.0 travel with their keys as bit patterns."""
    rng = np.random.default_rng(12)
    k = rng.integers(0, 50, 4000).astype(np.int64)
    v = rng.standard_normal(k.size).astype(np.float32)
    v[::97] = np.nan
    got = _check(k, v, 50, "min")
    assert np.isnan(got[np.unique(k[::97])]).all()
    vz = np.where(rng.integers(0, 2, k.size) == 1, np.float32(-0.0), np.float32(0.0))
    got = gpured.sum_by_key(k, vz, 50, "max", deterministic=True)
    want, _, _ = ref_dense(k, vz, "max", 50)
    np.testing.assert_array_equal(got, want)


def test_device_arrays_and_views():
    """Device inputs, offset views (the sort reads from the offset), and
    the sorted copies leave the inputs alone."""
    rng = np.random.default_rng(13)
    vdt = np.float64 if HAS_FP64 else np.float32
    kh = rng.integers(0, 5000, 30000).astype(np.int64)
    vh = values(kh.size, vdt, rng, "sum")
    kd = gpured.to_device(np.r_[np.zeros(5, np.int64), kh])[5:]
    vd = gpured.to_device(np.r_[np.zeros(9, vdt), vh])[9:]
    got = gpured.sum_by_key(kd, vd, 5000, deterministic=True)
    assert isinstance(got, gpured.Array)
    want = gpured.sum_by_key(kh, vh, 5000, deterministic=True)
    assert got.get().tobytes() == want.tobytes()
    np.testing.assert_array_equal(kd.get(), kh)
    np.testing.assert_array_equal(vd.get(), vh)
    # strided device keys (copied to a contiguous temporary first)
    k2 = gpured.to_device(np.repeat(kh, 2))[::2]
    got2 = gpured.sum_by_key(k2, vh, 5000, deterministic=True)
    assert got2.get().tobytes() == want.tobytes()


def test_repeatable():
    """Same inputs, same bits, call after call (the sort's scratch from the
    pool, reused)."""
    rng = np.random.default_rng(14)
    k = rng.integers(0, 1 << 20, 50000).astype(np.int64)
    v = (rng.standard_normal(k.size) * 1e3).astype(np.float32)
    first = gpured.sum_by_key(k, v, 1 << 20, deterministic=True).tobytes()
    for _ in range(3):
        assert gpured.sum_by_key(k, v, 1 << 20, deterministic=True).tobytes() == first


@pytest.mark.parametrize("wg,items", [(1, 8), (4, 3), (32, 15), (64, 8), (256, 8), (128, 1)])
def test_geometries(wg, items):
    """wg_size / items reach the sort on GPUs as well as the segments: wg 1
    is the chunk kernels (one contiguous chunk per work-item, CPU devices'
    sort whatever the knobs), the others the tile kernels (two 4-bit
    splits in local memory, or match.any.sync on NVIDIA); items 15 fills
    the packed 4-bit counters.  Oclgrind (a GPU to gpured) runs the tile
    kernels in CI: tests/oclgrind_bykey.py."""
    if wg > gpured.get_device()["max_work_group_size"]:
        pytest.skip("device runs at most %d work-items per group"
                    % gpured.get_device()["max_work_group_size"])
    rng = np.random.default_rng(wg * 100 + items)
    for n, nk in ((1, 1), (3001, 70000), (wg * items * 3 + 1, 300)):
        k = rng.integers(0, nk, n).astype(np.int64)
        if n > 1:
            k[0] = nk - 1
        v = values(n, "float32", rng, "sum")
        # sorted_segments on every device: the knobs reach the radix sort
        # (auto on GPUs sums floats in fixed point, no sort)
        kw = dict(deterministic=True, wg_size=wg, items=items, variant="sorted_segments")
        got = gpured.sum_by_key(k, v, nk, **kw)
        want, absx, m = ref_dense(k, v, "sum", nk)
        check_close(got, want, "sum", absx, m)
        o = np.argsort(k, kind="stable")
        same = gpured.sum_by_key(k[o], v[o], nk, **kw)
        assert got.tobytes() == same.tobytes()


@pytest.mark.skipif(not HAS_LOOKBACK, reason="variant lookback needs 64-bit atomics (status words)")
@pytest.mark.parametrize("kdt,vdt,op", [("int64", "float64", "sum"), ("int32", "float32", "sum"),
                                        ("uint32", "int32", "min"), ("uint64", "float32", "max"),
                                        ("int64", "uint64", "sum")])
@pytest.mark.parametrize("kw", [{}, {"wg_size": 4, "items": 3}, {"wg_size": 64, "items": 5}])
def test_lookback_dense(kdt, vdt, op, kw):
    """sum_by_key with variant lookback (GPUs' deterministic default): the
    runs of sorted keys in one pass, then each run to its bin; unsorted
    keys sorted first.  Runs straddle work-items and tiles; absent keys keep
    the identity; bitwise repeatable."""
    if vdt == "float64" and not HAS_FP64:
        pytest.skip("device has no fp64")
    rng = np.random.default_rng(17)
    for order in ("sorted", "random"):
        nk = 700
        k = np.repeat(rng.permutation(nk)[:500], rng.integers(1, 15, 500)).astype(kdt)
        if order == "sorted":
            k = np.sort(k)
        v = values(k.size, vdt, rng, op)
        got = gpured.sum_by_key(k, v, nk, op, variant="lookback", deterministic=True, **kw)
        want, absx, m = ref_dense(k, v, op, nk)
        check_close(got, want, op, absx, m)
        again = gpured.sum_by_key(k, v, nk, op, variant="lookback", deterministic=True, **kw)
        assert again.tobytes() == got.tobytes()
        p = gpured.explain_by_key("sum_by_key", k, v, num_keys=nk, op=op, variant="lookback",
                                  deterministic=True, **kw)
        assert p["variant"] == "lookback"
        assert ("radix sort" in p["why"]) == (order == "random")
