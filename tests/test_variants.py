"""The reduction variant ladder: every variant the device runs gives NumPy's
answer for every op and dtype; unavailable variants say why; knobs are
checked; auto selection (a pure function of device facts) differs where
devices differ; gpured.tune() feeds auto.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpured
from gpured import _core
from conftest import (DTYPES, OPS, compare, data_kinds, dtype_id, make_data,
                      np_call, gp_call, pass_variants)

ALL_VARIANTS = ["naive", "divergence_free", "unroll_last", "unroll_complete",
                "stride_global", "stride_local", "vector", "workgroup",
                "subgroup", "atomic", "chunked", "segment_per_item",
                "segment_per_warp"]

# Shapes from the foundation tests: tiny, primes, 2^k +- 1, more than one
# work-group, and an N-d array reduced along each axis.
CASES = [((1,), None), ((7,), None), ((1021,), None), ((65535,), None),
         ((65537,), None), ((3000,), None), ((5, 7, 3), None), ((5, 7, 3), 0),
         ((5, 7, 3), -1), ((5, 7, 3), (0, 2)), ((300, 129), 1), ((300, 129), 0)]


def kind_for(op):
    return {"prod": "prod", "all": "fewzeros", "any": "fewnonzeros",
            "argmin": "ties", "argmax": "ties", "min": "ties",
            "max": "ties"}.get(op, "general")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_every_variant_matches_numpy(op, dtype):
    names = gpured.variants(op, dtype)
    assert names[0] == "auto" and "segment_per_item" in names
    for variant in pass_variants(names):
        for shape, axis in CASES:
            if op in ("argmin", "argmax") and isinstance(axis, tuple):
                continue
            a = make_data(dtype, shape, kind_for(op), seed=len(shape))
            if op in ("sum", "mean") and np.dtype(dtype).kind == "f":
                a = make_data(dtype, shape, "general", seed=3)
            expected = np_call(op, a, axis=axis)
            got = gp_call(op, a, axis=axis, variant=variant)
            compare(op, a, got, expected, {"axis": axis},
                    "gpured.%s(%s %s, axis=%s, variant=%r)"
                    % (op, np.dtype(dtype).name, shape, axis, variant))


def test_nan_propagates_in_every_variant():
    a = np.arange(5000, dtype=np.float32)
    a[3333] = np.nan
    for op in ("min", "max", "argmin", "argmax", "sum"):
        for v in gpured.variants(op, np.float32):
            got = getattr(gpured, op)(a, variant=v)
            want = getattr(np, op)(a)
            assert np.array_equal(got, want, equal_nan=True), (op, v, got, want)


def _subgroup_wg_sizes():
    """Every legal wg_size of the subgroup variant on this device, or None
    where it has no sub-groups."""
    info = gpured.get_device()
    if not (info.get("subgroups") or info.get("nvidia_ptx")):
        return None
    lo = 32 if info.get("nvidia_ptx") else 1  # whole warps on NVIDIA
    sizes, wg = [], lo
    while wg <= int(info["max_work_group_size"]):
        sizes.append(wg)
        wg *= 2
    return sizes


@pytest.mark.parametrize("op", OPS)
def test_subgroup_variant_every_wg_size(op):
    """The subgroup variant at every legal wg_size, for every dtype it
    offers for op: a work-group of more sub-groups than a sub-group has
    lanes (Intel's CPU runtime: 8 lanes, so from wg_size 128) must fold all
    of them (it used to keep a quarter of the sum at 256)."""
    sizes = _subgroup_wg_sizes()
    if sizes is None:
        pytest.skip("no sub-groups on this device (variant 'subgroup' "
                    "unavailable)")
    ran = 0
    for dtype in DTYPES:
        if "subgroup" not in gpured.variants(op, dtype):
            continue
        for wg in sizes:
            n = 3 * wg * 16 + 7  # three groups of 16-byte tiles and a tail
            for kind in data_kinds(op):
                a = make_data(dtype, (n,), kind, seed=wg)
                if op in ("sum", "mean") and np.dtype(dtype).kind == "f":
                    a = make_data(dtype, (n,), "general", seed=wg)
                for shape, axis in (((n,), None), ((3, n // 3), 1)):
                    x = a[: int(np.prod(shape))].reshape(shape)
                    expected = np_call(op, x, axis=axis)
                    got = gp_call(op, x, axis=axis, variant="subgroup",
                                  wg_size=wg)
                    compare(op, x, got, expected, {"axis": axis},
                            "gpured.%s(%s %s, axis=%s, variant='subgroup', "
                            "wg_size=%d)" % (op, np.dtype(dtype).name,
                                             shape, axis, wg))
                    ran += 1
    if ran == 0:
        pytest.skip("variant 'subgroup' offers no dtype for %s on this "
                    "device" % op)


def test_unavailable_variants_raise_with_reason():
    for op in OPS:
        for dt in (np.int8, np.float32):
            have = gpured.variants(op, dt)
            for v in ALL_VARIANTS:
                if v in have:
                    continue
                with pytest.raises(gpured.VariantUnavailable) as e:
                    getattr(gpured, op)(np.ones(100, dt), variant=v)
                assert v in str(e.value) and len(str(e.value)) > 30
    # argmin carries an index with its value: no single CAS can update both.
    assert "atomic" not in gpured.variants("argmin")
    with pytest.raises(gpured.VariantUnavailable, match="compare-and-swap"):
        gpured.argmin(np.ones(10, np.float32), variant="atomic")


def test_unknown_variant_and_bad_knobs():
    a = np.ones(1000, np.float32)
    with pytest.raises(ValueError, match="unknown variant 'fastest'"):
        gpured.sum(a, variant="fastest")
    for knob, value, text in [("wg_size", 3, "wg_size must be a power of two"),
                              ("wg_size", 1 << 20, "wg_size must be"),
                              ("ilp", 9, r"ilp must be in \[1, 8\]"),
                              ("vw", 3, "vw must be one of 1, 2, 4, 8, 16"),
                              ("groups", 70000, r"groups must be in \[1, 65535\]"),
                              ("ilp", 0, "ilp must be at least 1")]:
        with pytest.raises(ValueError, match=text):
            gpured.sum(a, variant="vector", **{knob: value})
    with pytest.raises(ValueError, match="one element at a time"):
        gpured.sum(a, variant="naive", ilp=4)
    with pytest.raises(TypeError):
        gpured.sum(a, wg_size="big")


@pytest.mark.parametrize("variant", ["vector", "stride_local", "chunked",
                                     "stride_global", "segment_per_item"])
def test_knobs_change_the_plan_not_the_answer(variant):
    a = make_data(np.int32, (100003,), "general", seed=5)
    want = np.sum(a)
    for wg in (1, 16, 64, 256):
        for ilp in (1, 2, 3):
            kn = dict(wg_size=wg)
            if variant not in ("stride_global", "segment_per_item"):
                kn["ilp"] = ilp
            plan = gpured.explain("sum", a, variant=variant, **kn)
            assert plan["wg_size"] == wg
            assert gpured.sum(a, variant=variant, **kn) == want
    for groups in (1, 3, 1000):
        assert gpured.sum(a, variant=variant, groups=groups) == want


def _need_warp_rows():
    if "segment_per_warp" not in gpured.variants("sum", np.float32):
        pytest.skip("variant 'segment_per_warp' needs NVIDIA's warps (inline "
                    "PTX): unavailable on this device (plan tests cover its "
                    "choice on every device)")


@pytest.mark.parametrize("op", OPS + ["var", "nanvar", "nansum", "ptp"])
def test_segment_per_warp_rows(op):
    """NVIDIA's short rows, lanes of a warp per row (auto from 16 to 511
    elements): every dtype on device arrays, rows that do not fill their
    lanes (17, 100: 2 and 8 lanes; argmin/argmax 2 and 4), rows in several
    parts (groups=), 1, 16 and 32 lanes per row (items=), rows of a 3-d
    array."""
    _need_warp_rows()
    for dtype in DTYPES:
        if op in ("var", "nanvar", "nansum") and np.dtype(dtype).kind != "f":
            continue
        for shape, kw in (((37, 17), {}), ((41, 100), {}), ((9, 511), {}),
                          ((5, 3, 33), {}), ((41, 100), {"groups": 3}),
                          ((41, 100), {"items": 1}), ((41, 100), {"items": 8}),
                          ((41, 100), {"items": 1000})):
            a = make_data(dtype, shape, kind_for(op), seed=shape[-1])
            if op in ("sum", "mean", "var") and np.dtype(dtype).kind == "f":
                a = make_data(dtype, shape, "general", seed=3)
            if op.startswith("nan") and np.dtype(dtype).kind == "f":
                a = a.copy()
                a.reshape(-1)[::7] = np.nan
            d = gpured.to_device(a)
            kn = dict(kw, variant="segment_per_warp") if kw else {}
            if op == "ptp" and np.dtype(dtype) == np.bool_:
                with pytest.raises(TypeError):  # as NumPy's
                    gp_call(op, d, axis=-1, **kn)
                continue
            plan = gpured.explain(op, d, axis=-1, **kn)
            assert plan["variant"] == "segment_per_warp", plan
            what = ("gpured.%s(%s %s, axis=-1, %s) lanes %d"
                    % (op, np.dtype(dtype).name, shape, kn, plan["lanes"]))
            expected = np_call(op, a, axis=-1)
            got = np.asarray(gp_call(op, d, axis=-1, **kn))
            if op == "nansum":
                # against the float64 sum (NumPy's float32 pairwise sum is
                # the less exact one here: a float64 accumulator)
                eps = float(np.finfo(dtype).eps)
                exact = np.nansum(a.astype(np.float64), axis=-1)
                bound = 4 * eps * np.nansum(np.abs(a.astype(np.float64)), axis=-1)
                assert got.dtype == expected.dtype, what
                assert np.all(np.abs(got - exact) <= bound), what
            elif op == "ptp":  # max - min: exact
                np.testing.assert_array_equal(got, expected, err_msg=what,
                                              strict=True)
            elif op in ("var", "nanvar"):
                rtol = {4: 2e-5, 8: 1e-12}[np.dtype(dtype).itemsize]
                assert got.dtype == expected.dtype, what
                np.testing.assert_allclose(got, expected, rtol=rtol, err_msg=what)
            else:
                compare(op, a, got, expected, {"axis": -1}, what)


@pytest.mark.parametrize("op", ["sum", "prod", "min", "max", "argmin",
                                "argmax", "mean", "nansum", "ptp"])
def test_segment_per_warp_vector_rows(op):
    """Short rows of 4- and 8-byte elements read as 16-byte vectors (the
    plan's vw, ilp rows a lane at once): rows that fill their vectors
    and rows with a tail, one lane a row (argmin/argmax under 32
    elements), the ilp knob, 3-d rows, and views whose rows start off a
    vector (base 1: the kernel takes their elements one at a time) or on
    one (base 4), with argmin/argmax ties across vectors and lanes."""
    _need_warp_rows()
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.uint32):
        for shape, sl, kw in (((40, 16), None, {}), ((40, 24), None, {}),
                              ((40, 64), None, {"ilp": 3}),
                              ((40, 64), None, {"ilp": 2, "items": 4}),
                              ((40, 100), None, {"items": 64}),  # a loop
                              ((41, 104), (slice(None), slice(1, 101)), {}),
                              ((41, 104), (slice(None), slice(4, 100)), {}),
                              ((6, 40, 48), (slice(None), slice(1, None)), {})):
            a = make_data(dtype, shape, kind_for(op), seed=shape[-1])
            if op in ("sum", "mean") and np.dtype(dtype).kind == "f":
                a = make_data(dtype, shape, "general", seed=3)
            if op == "nansum" and np.dtype(dtype).kind == "f":
                a = a.copy()
                a.reshape(-1)[::7] = np.nan
            if op in ("argmin", "argmax"):
                a = a.copy()
                a[..., -1] = a[..., 0]  # ties: the first index wins
            d = gpured.to_device(a)
            if sl is not None:
                a, d = a[sl], d[sl]
            kn = dict(kw, variant="segment_per_warp") if kw else {}
            plan = gpured.explain(op, d, axis=-1, **kn)
            assert plan["variant"] == "segment_per_warp", plan
            assert plan["vw"] == 16 // np.dtype(dtype).itemsize, plan
            what = ("gpured.%s(%s %s[%s], axis=-1, %s) %s"
                    % (op, np.dtype(dtype).name, shape, sl, kn, plan["why"]))
            expected = np_call(op, a, axis=-1)
            got = np.asarray(gp_call(op, d, axis=-1, **kn))
            if op == "nansum" and np.dtype(dtype).kind == "f":
                exact = np.nansum(a.astype(np.float64), axis=-1)
                bound = 4 * float(np.finfo(dtype).eps) * np.nansum(
                    np.abs(a.astype(np.float64)), axis=-1)
                assert got.dtype == expected.dtype, what
                assert np.all(np.abs(got - exact) <= bound), what
            elif op == "ptp":
                np.testing.assert_array_equal(got, expected, err_msg=what,
                                              strict=True)
            else:
                compare(op, a, got, expected, {"axis": -1}, what)


def test_segment_per_warp_rows_where_and_ties():
    """where= through the warp rows (a mask per element), and argmax's
    first index when a row's equal values fall in different lanes."""
    _need_warp_rows()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((300, 96))
    m = rng.random((300, 96)) < 0.7
    d, dm = gpured.to_device(x), gpured.to_device(m)
    np.testing.assert_allclose(np.asarray(gpured.sum(d, axis=1, where=dm)),
                               np.sum(x, axis=1, where=m), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gpured.mean(d, axis=1, where=dm)),
                               np.mean(x, axis=1, where=m), rtol=1e-12)
    t = rng.integers(0, 3, (300, 96)).astype(np.int32)
    for items in (None, 1, 3):
        kn = {} if items is None else dict(variant="segment_per_warp", items=items)
        dt = gpured.to_device(t)
        assert gpured.explain("argmax", dt, axis=1, **kn)["variant"] == "segment_per_warp"
        np.testing.assert_array_equal(np.asarray(gpured.argmax(dt, axis=1, **kn)),
                                      np.argmax(t, axis=1))
        np.testing.assert_array_equal(np.asarray(gpured.argmin(dt, axis=1, **kn)),
                                      np.argmin(t, axis=1))


def test_explain_describes_the_plan():
    a = np.ones((4096, 4096), np.float32)
    d = gpured.to_device(a)  # (a NumPy array may go to the host path)
    p = gpured.explain("sum", d)
    for key in ("variant", "kernel", "wg_size", "vw", "ilp", "groups",
                "passes", "why", "accumulator"):
        assert key in p
    assert gpured.explain("sum", d, axis=0)["variant"] == "segment_per_item"
    assert gpured.explain("max", a, variant="naive")["passes"] == 2


# ----------------------------------------------------------------- auto, pure

F32 = np.dtype(np.float32)
H100 = dict(name="H100", gpu=1, compute_units=132, max_work_group_size=1024,
            nvidia_ptx=1, atomics64=1)
AMD = dict(name="other GPU", gpu=1, compute_units=104, max_work_group_size=1024,
           subgroups=1)
CPU = dict(name="CPU", gpu=0, compute_units=16, max_work_group_size=4096)


def plan(caps, M, L, ss=None, es=1, op="add", dt=F32, rd=F32, **kw):
    return _core.plan_for(caps, op, dt, rd, M, L, L if ss is None else ss, es, **kw)


def test_auto_differs_where_devices_differ():
    big = 1 << 28
    g, o, c = plan(H100, 1, big), plan(AMD, 1, big), plan(CPU, 1, big)
    assert g["variant"] == "subgroup" and g["vw"] == 4 and g["passes"] == 2
    assert g["groups"] >= 132 * 4  # fills every compute unit
    assert o["variant"] == "vector" and o["vw"] == 4
    assert c["variant"] == "chunked" and c["contiguous_per_work_item"]
    assert c["vw"] == 16 and c["groups"] >= 16
    # tiny inputs: one work-group, one pass, everywhere
    for caps in (H100, AMD, CPU):
        t = plan(caps, 1, 100)
        assert t["groups"] == 1 and t["passes"] == 1
    # columns and short rows: one work-item per segment
    for caps in (H100, CPU):
        assert plan(caps, 4096, 4096, ss=1, es=4096)["variant"] == "segment_per_item"
        assert plan(caps, 100000, 3)["variant"] == "segment_per_item"
    # GPUs: rows of up to 128 elements one work-item each; longer short
    # rows in groups of 64-256 by length (H100, benchmarks/exp/
    # short_rows_plans.py: rows of 64 in groups of 256 took 7.2 ms a GiB,
    # one work-item a row 1.07); CPUs keep 16 and their chunks
    # NVIDIA: rows of 16-511 elements read by lanes of a warp each, about
    # 8 elements a lane (benchmarks/exp/rows_warp.py: rows of 64 1.06 ms
    # a GiB one work-item a row, 0.40 a warp's 8 lanes); other GPUs keep
    # a work-item per row up to 128
    for L, lanes in ((16, 2), (17, 2), (32, 4), (64, 8), (100, 8), (128, 16),
                     (256, 32), (511, 32)):
        r = plan(H100, 1 << 20, L)
        assert (r["variant"], r["lanes"], r["groups"]) == ("segment_per_warp", lanes, 1)
    # argmin/argmax: 1-4 lanes (an index shuffled beside each value; rows
    # read as vectors under 32 elements one lane, 2 rows a lane at once)
    i64 = np.dtype(np.int64)
    assert [plan(H100, 1 << 20, L, op="argmax", rd=i64)["lanes"]
            for L in (16, 32, 64, 256, 511)] == [1, 2, 4, 4, 4]
    assert [plan(H100, 1 << 20, L, op="argmax", rd=i64)["ilp"]
            for L in (16, 511)] == [2, 1]  # 511: rows off their vectors
    # 4- and 8-byte elements as 16-byte vectors (vw), where each row
    # starts on one; elements one at a time otherwise
    assert [plan(H100, 1 << 20, L)["vw"] for L in (16, 17, 64, 511)] == [4, 1, 4, 1]
    assert plan(H100, 1 << 20, 16, dt=np.dtype(np.float64),
                rd=np.dtype(np.float64))["vw"] == 2
    assert plan(H100, 1 << 20, 16, dt=np.dtype(np.int16),
                rd=np.dtype(np.int64))["vw"] == 1
    # a lane's vector loads of a row compiled in (viters, unrolled) where
    # at most 8; 0: a loop (element loads, or longer runs of vectors)
    assert [plan(H100, 1 << 20, L)["viters"]
            for L in (16, 17, 64, 256, 511)] == [2, 0, 2, 2, 0]
    assert plan(H100, 1 << 20, 16, op="argmax", rd=i64)["viters"] == 4
    assert plan(H100, 1 << 20, 16, dt=np.dtype(np.float64),
                rd=np.dtype(np.float64))["viters"] == 4
    assert plan(H100, 1 << 20, 100, variant="segment_per_warp",
                items=64)["viters"] == 0
    assert plan(H100, 1 << 22, 15)["variant"] == "segment_per_item"
    assert plan(H100, 1 << 22, 64, ss=1, es=1 << 22)["variant"] == "segment_per_item"
    assert plan(H100, 1, 64)["variant"] != "segment_per_warp"
    assert plan(AMD, 1 << 22, 64)["variant"] == "segment_per_item"
    assert plan(AMD, 1 << 22, 128)["variant"] == "segment_per_item"
    assert plan(CPU, 1 << 22, 64)["variant"] == "chunked"
    r = plan(AMD, 1 << 20, 256)
    assert r["variant"] == "vector" and r["wg_size"] == 64
    r = plan(H100, 1 << 20, 512)
    assert r["variant"] == "subgroup" and r["wg_size"] == 64
    assert plan(H100, 1 << 16, 2048)["wg_size"] == 128
    assert plan(H100, 4096, 65536)["wg_size"] == 256
    assert plan(H100, 1, 1000)["wg_size"] == 256  # one segment: as before
    # GPU columns: the nearest whole number of parts along the rows (H100,
    # 4096 x 65536 float32 axis 0: 4 parts fill one wave, 5 took 1.2)
    assert plan(H100, 65536, 4096, ss=1, es=65536)["groups"] == 4
    assert plan(H100, 140000, 4096, ss=1, es=140000)["groups"] == 2
    # widening integer sums get more accumulators on GPUs (H100 measurement)
    i32, i64 = np.dtype(np.int32), np.dtype(np.int64)
    assert plan(H100, 1, big, dt=i32, rd=i64)["ilp"] == 4
    assert plan(H100, 1, big)["ilp"] == 2


def test_availability_follows_capabilities():
    khr = dict(CPU, subgroups=1)
    assert plan(khr, 1, 1000, variant="subgroup")["variant"] == "subgroup"
    with pytest.raises(gpured.VariantUnavailable, match="sub_group_reduce"):
        plan(khr, 1, 1000, op="argmax", rd=np.dtype(np.int64), variant="subgroup")
    with pytest.raises(gpured.VariantUnavailable, match="bar.warp.sync"):
        plan(khr, 1, 1000, variant="unroll_last")
    with pytest.raises(gpured.VariantUnavailable, match="sub-groups"):
        plan(CPU, 1, 1000, variant="subgroup")
    with pytest.raises(gpured.VariantUnavailable, match="collective"):
        plan(H100, 1, 1000, variant="workgroup")
    assert plan(dict(CPU, wg_collectives=1), 1, 1000,
                variant="workgroup")["variant"] == "workgroup"
    with pytest.raises(gpured.VariantUnavailable, match="int64_base_atomics"):
        plan(CPU, 1, 1000, variant="atomic")  # float32 sum accumulates in double
    assert plan(H100, 1, 1000, variant="atomic")["passes"] == 1
    assert plan(dict(CPU, fp64=0), 1, 1000, variant="atomic")["accumulator"] == "float"
    with pytest.raises(ValueError, match="whole warps"):
        plan(H100, 1, 1000, variant="unroll_last", wg_size=16)
    # lanes of a warp per row: NVIDIA only; items= elements per lane
    for caps in (AMD, CPU):
        with pytest.raises(gpured.VariantUnavailable, match="NVIDIA's warps"):
            plan(caps, 100, 64, variant="segment_per_warp")
    w = lambda **kw: plan(H100, 100, 64, variant="segment_per_warp", **kw)
    assert [w(items=k)["lanes"] for k in (1, 3, 8, 64, 1000)] == [32, 32, 8, 1, 1]
    assert (w(groups=3)["groups"], w(groups=3)["passes"]) == (3, 2)
    with pytest.raises(ValueError, match="whole warps"):
        w(wg_size=16)
    assert (w(vw=2, ilp=3)["vw"], w(vw=2, ilp=3)["ilp"]) == (2, 3)
    with pytest.raises(ValueError, match="at most 16"):
        w(vw=8)
    with pytest.raises(ValueError, match="one element at a time"):
        plan(H100, 100, 64, variant="segment_per_warp", dt=np.dtype(np.int16),
             rd=np.dtype(np.int64), vw=4)


# ------------------------------------------------------------------- tune

def test_tune_stores_winners_and_auto_uses_them(tmp_path):
    code = textwrap.dedent("""
        import json, numpy as np, gpured
        gpured.placement("current")  # (small host arrays: kernels, not the host path)
        res = gpured.tune(sizes=(2**14,), reps=2)
        r = res[0]
        a = np.random.default_rng(0).standard_normal(2**12).astype(np.float32)
        p = gpured.explain("sum", a)
        print(json.dumps(dict(best=r["best"]["variant"], auto=r["auto"]["variant"],
                              n=len(r["all"]), tuned=p["tuned"], variant=p["variant"],
                              ok=bool(gpured.sum(a) == np.float32(np.sum(a, dtype=np.float64))))))
    """)
    env = dict(os.environ, GPURED_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    assert r["n"] > 10 and r["tuned"] and r["variant"] == r["best"] and r["ok"]
    table = json.load(open(tmp_path / "tuned.json"))
    rates = table.pop("_rates")  # the placement rates, measured by tune() too
    # the host path's threads, measured where it has several (4+ CPUs)
    threads = table.pop("_threads", None)
    assert threads is None or all(v > 0 for v in threads["gbs"].values())
    (entries,) = table.values()
    assert entries[0]["size_class"] == 14 and entries[0]["op"] == "sum"
    assert list(rates) == list(table) and all(v > 0 for side in ("host_gbs", "device_gbs")
                                              for v in rates[list(table)[0]][side].values())
    # a second process picks the table up at import
    out = subprocess.run([sys.executable, "-c",
                          "import gpured, numpy as np; gpured.placement('current');"
                          "print(gpured.explain('sum', np.ones(2**12, np.float32))['tuned'],"
                          " gpured.rates()['measured'])"],
                         env=env, check=True, capture_output=True, text=True).stdout
    assert out.strip() == "True True"
    # a damaged table is ignored, never trusted
    (tmp_path / "tuned.json").write_text("{not json")
    out = subprocess.run([sys.executable, "-c",
                          "import gpured, numpy as np;"
                          "print(gpured.sum(np.ones(100, np.float32)))"],
                         env=env, check=True, capture_output=True, text=True).stdout
    assert out.strip() == "100.0"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_],
                         ids=dtype_id)
def test_device_mean_divides_in_its_final_pass(dtype):
    """mean of a device array into a new device result divides in the
    reduction's last pass (reduce.cl GR_MDIV, one launch fewer than the
    copy epilogue): every variant, one and two passes, each result
    NumPy's dtype and its value the float64 mean rounded once (float32:
    within an ulp of it), as the epilogue's path (into an out=) gives."""
    for variant in pass_variants(gpured.variants("mean", dtype)):
        for shape, axis in CASES + [((1 << 18,), None), ((3, 70000), 1)]:
            h = make_data(dtype, shape, "general", seed=5)
            d = gpured.to_device(h)
            want = np.mean(h, axis=axis)
            ref = np.mean(h.astype(np.float64), axis=axis)
            what = "mean(%s %s, axis=%s, variant=%r)" % (
                np.dtype(dtype).name, shape, axis, variant)
            rtol = 2.0 ** -23 if want.dtype == np.float32 else 1e-13
            got = gpured.mean(d, axis=axis, variant=variant)
            assert isinstance(got, gpured.Array), what
            g = got.get()
            assert g.dtype == want.dtype and g.shape == np.shape(want), what
            np.testing.assert_allclose(g, ref.astype(want.dtype), rtol=rtol,
                                       err_msg=what)
            # the epilogue's path: into an out= (atomic's order varies)
            out = gpured.to_device(np.empty(np.shape(want), want.dtype))
            gpured.mean(d, axis=axis, out=out, variant=variant)
            np.testing.assert_allclose(out.get(), g, rtol=rtol, err_msg=what)
