"""Run the kernels of issue 41 under Oclgrind and fail on any report (data
races, barrier divergence, invalid or out-of-bounds accesses,
uninitialised values), checking each result against NumPy as well:

  * gr_bk_lbins (sum_by_key variant private_bins on a GPU -- Oclgrind is
    one to gpured): a copy of the bins a work-item (no atomics) and fewer
    copies than work-items (local atomics: native integer adds, the
    compare-and-swap loop of floats), the fused key check, op count
  * keys of 1 and 2 bytes through the by-key kernels (atomic,
    warp_aggregated's work-group form, sorted segments, the look-back and
    the radix sort read them at their own width)
  * gr_bin_index (kernels/bins.cl): uniform bins with NumPy's edge
    fix-ups, and the binary search over explicit edges
  * gr_float_key (kernels/bins.cl): unique's order-preserving keys of
    float32 bits (NaNs, -0.0), then the radix sort

    python3 tests/oclgrind_bins.py                # parent: runs the jobs
    python3 tests/oclgrind_bins.py --child JOB    # what runs in oclgrind
"""
import os
import sys

import numpy as np

import _oclgrind

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def lbins(gpured):
    rng = np.random.default_rng(2)
    n = 0
    k = rng.integers(0, 7, 150).astype(np.uint8)
    v = rng.integers(-3, 4, 150)
    # 7 keys x 8 work-items: a copy each; 300 keys x 16: fewer copies
    for nk, wg in ((7, 8), (300, 16)):
        for vdt, op in (("float32", "sum"), ("int32", "sum"),
                        ("float64", "max")):
            vv = v.astype(vdt)
            got = gpured.sum_by_key(k, vv, nk, op, variant="private_bins",
                                    wg_size=wg)
            if op == "sum":
                want = np.bincount(k, vv, nk).astype(got.dtype)
            else:
                want = np.full(nk, -np.inf)
                np.maximum.at(want, k, vv)
            assert np.array_equal(got, want), (nk, wg, vdt, op, got, want)
            n += 1
        got = gpured.sum_by_key(k, None, nk, "count", variant="private_bins",
                                wg_size=wg)
        assert np.array_equal(got, np.bincount(k, minlength=nk))
        n += 1
    try:
        gpured.sum_by_key(np.array([0, 5, 9, 2], np.uint8), np.ones(4), 6,
                          variant="private_bins", wg_size=8)
        raise AssertionError("bad key not reported")
    except ValueError as e:
        assert "keys[2]" in str(e), e
    return n + 1


def small_keys(gpured):
    rng = np.random.default_rng(4)
    n = 0
    for kdt in ("int8", "uint16"):
        k = rng.integers(0, 20, 90).astype(kdt)
        v = rng.integers(1, 4, 90).astype(np.float64)
        for variant in ("atomic", "warp_aggregated", "sorted_segments"):
            got = gpured.sum_by_key(k, v, 20, variant=variant, wg_size=4,
                                    items=3)
            assert np.array_equal(got, np.bincount(k, v, 20)), (kdt, variant)
            n += 1
        got = gpured.sum_by_key(k, v, 20, deterministic=True, wg_size=4,
                                items=3, variant="lookback")
        assert np.array_equal(got, np.bincount(k, v, 20)), (kdt, "sort")
        ks = np.sort(k)
        uk, s = gpured.reduce_by_key(ks, v, variant="lookback", wg_size=4,
                                     items=4)
        st = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
        assert np.array_equal(uk, ks[st])
        assert np.array_equal(s, np.add.reduceat(v, st))
        n += 2
    return n


def bins(gpured):
    rng = np.random.default_rng(6)
    a = rng.standard_normal(200).astype(np.float32)
    e = np.histogram_bin_edges(a, 7, (-1.3, 1.1))
    a[:8] = e  # every edge: NumPy's fix-ups decide
    a[8], a[9] = np.nan, 5.0
    h, ed = gpured.histogram(a, 7, range=(-1.3, 1.1))
    hn, en = np.histogram(a, 7, range=(-1.3, 1.1))
    assert np.array_equal(h, hn) and np.array_equal(ed, en), (h, hn)
    edges = [-2.0, -0.5, 0.0, 0.0, 0.25, 2.0]
    h, _ = gpured.histogram(a, edges, weights=np.ones(200))
    assert np.array_equal(h, np.histogram(a, edges, weights=np.ones(200))[0])
    k = rng.integers(0, 9, 60).astype(np.uint8)
    assert np.array_equal(gpured.bincount(k), np.bincount(k))
    return 3


def one(gpured, case):
    """One call a process for the uninitialised-value check (as in
    oclgrind_bykey.py: an earlier by-key call in the same process can draw
    reports on a later one's buffers that it does not make alone)."""
    rng = np.random.default_rng(8)
    k = rng.integers(0, 7, 100).astype(np.uint8)
    v = rng.integers(-3, 4, 100).astype(np.float32)
    if case == "lbins_item":
        got = gpured.sum_by_key(k, v, 7, variant="private_bins", wg_size=8)
        assert np.array_equal(got, np.bincount(k, v, 7).astype(np.float32))
    elif case == "lbins_shared":
        got = gpured.sum_by_key(k, v, 300, variant="private_bins", wg_size=16)
        assert np.array_equal(got, np.bincount(k, v, 300).astype(np.float32))
    elif case == "keys_int8":
        got = gpured.sum_by_key(k.astype(np.int8), v, 7, variant="atomic",
                                wg_size=4, items=3)
        assert np.array_equal(got, np.bincount(k, v, 7).astype(np.float32))
    elif case == "keys_uint16_lookback":
        ks = np.sort(k).astype(np.uint16)
        uk, s = gpured.reduce_by_key(ks, v, variant="lookback", wg_size=4,
                                     items=4)
        st = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
        assert np.array_equal(uk, ks[st])
        assert np.array_equal(s, np.add.reduceat(v, st))
    elif case == "hist_uniform":
        a = rng.standard_normal(100).astype(np.float32)
        h, _ = gpured.histogram(a, 7, range=(-1.3, 1.1))
        assert np.array_equal(h, np.histogram(a, 7, range=(-1.3, 1.1))[0])
    elif case == "hist_edges":
        a = rng.standard_normal(100)
        edges = [-2.0, -0.5, 0.0, 0.0, 0.25, 2.0]
        h, _ = gpured.histogram(a, edges)
        assert np.array_equal(h, np.histogram(a, edges)[0])
    elif case == "unique_f32":
        a = (rng.integers(-9, 9, 90) / 4).astype(np.float32)
        a[[3, 7]], a[[5, 50]] = np.nan, -0.0
        got = gpured.unique(gpured.to_device(a), return_counts=True)
        for g, w in zip(got, np.unique(a, return_counts=True)):
            assert np.array_equal(g.get(), w, equal_nan=True), (g, w)
    return 1


UNINIT = ["lbins_item", "lbins_shared", "keys_int8", "keys_uint16_lookback",
          "hist_uniform", "hist_edges", "unique_f32"]


def child(job):
    sys.path.insert(0, ROOT)
    import gpured
    if job["kind"] != "races":
        return 0 if one(gpured, job["case"]) else 1
    n = {"lbins": lbins, "keys": small_keys, "bins": bins}[job["part"]](gpured)
    print("  races %-6s %d calls checked" % (job["part"], n), flush=True)
    return 0


def jobs():
    return ([{"kind": "races", "part": p} for p in ("lbins", "keys", "bins")] +
            [{"kind": "uninit", "case": c} for c in UNINIT])


if __name__ == "__main__":
    _oclgrind.main(__file__, child, jobs, "bins check")
