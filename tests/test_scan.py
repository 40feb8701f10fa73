"""Prefix scans against NumPy.

Integers (and bool, and cummin/cummax of anything) must match exactly.
Floats are compared with a float64 (float32 input) or long-double (float64
input) reference within the bound gpured documents (gpured/_scan.py):

    cumsum:  |got_i - S_i| <= u_r |S_i|
                              + (items + log2(n) + 2) u_a sum_{j<=i} |x_j|
                              + items u_r sum_{r(i)<=j<=i} |x_j|  (float32)
                              + 4 u_r^2 sum_{j<=i} |x_j|          (float32)
                              + n u_ref sum_{j<=i} |x_j|     (the reference)
    cumprod: |got_i - P_i| <= (u_r + (i + 2) u_a) |P_i| + n u_ref |P_i|

u_r, u_a, u_ref: unit roundoffs of the result dtype, of the accumulator the
plan reports (float64 for float32 input on fp64 devices) and of the
reference; n is the row length; r(i) = items * floor(i / items), the
start of element i's work-item run (float32 outputs come from float32
partial sums within the run, on a float64 prefix).  The bound grows with n as the algorithm's
error does.
"""
import math
import subprocess
import sys

import numpy as np
import pytest

import gpured
from gpured import _core
from conftest import HAS_FP64, PASS_VARIANTS, make_layout

DEV = gpured.get_device()
SCANS = {"cumsum": np.cumsum, "cumprod": np.cumprod,
         "cummin": np.minimum.accumulate, "cummax": np.maximum.accumulate}
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
          "int64", "uint64", "float32"] + (["float64"] if HAS_FP64 else [])
ALL_VARIANTS = ["naive", "blelloch", "workgroup", "subgroup",
                "reduce_then_scan", "decoupled_lookback", "row_per_item"]


# ------------------------------------------------------------------ helpers

def data(dt, shape, op, seed=0):
    dt = np.dtype(dt)
    rng = np.random.default_rng(seed)
    if op == "cumprod":
        if dt.kind == "f":
            a = (1 + rng.uniform(-1, 1, shape) / 256) * rng.choice([-1.0, 1.0], shape)
        elif dt.kind == "b":
            a = rng.random(shape) < 0.999
        else:
            a = rng.choice([1, 1, 1, 3, 255] + ([-1] if dt.kind == "i" else []), size=shape)
    elif dt.kind == "f":
        a = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)
    elif dt.kind == "b":
        a = rng.random(shape) < 0.5
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    return np.asarray(a).astype(dt)


def numpy_scan(op, a, axis, dtype=None, exclusive=False):
    if op in ("cumsum", "cumprod"):
        want = SCANS[op](a, axis=axis, dtype=dtype)
    else:
        b = a.reshape(-1) if axis is None else a
        want = SCANS[op](b, axis=0 if axis is None else axis,
                         dtype=dtype if dtype is not None else b.dtype.newbyteorder("="))
    if exclusive:
        ax = 0 if axis is None else axis
        w = np.moveaxis(want, ax, -1)
        ex = np.empty_like(w)
        ex[..., 0] = identity(op, want.dtype)
        ex[..., 1:] = w[..., :-1]
        want = np.moveaxis(ex, -1, ax)
    return want


def identity(op, dt):
    dt = np.dtype(dt)
    if op in ("cumsum", "cumprod"):
        return op == "cumprod"
    big = op == "cummin"
    if dt.kind == "b":
        return big
    if dt.kind == "f":
        return np.inf if big else -np.inf
    return np.iinfo(dt).max if big else np.iinfo(dt).min


def assert_scan(op, a, got, want, axis, plan, what, exclusive=False):
    assert type(got) is np.ndarray, what
    assert got.dtype == want.dtype, "%s: dtype %s != %s" % (what, got.dtype, want.dtype)
    assert got.shape == want.shape, "%s: shape %s != %s" % (what, got.shape, want.shape)
    if want.dtype.kind != "f" or op in ("cummin", "cummax"):
        np.testing.assert_array_equal(got, want, err_msg=what, strict=True)
        return
    assert_float_bound(op, a, got, want, axis, plan, what, exclusive)


def assert_float_bound(op, a, got, want, axis, plan, what, exclusive=False):
    ax = 0 if axis is None else axis
    x = np.asarray(a).reshape(-1) if axis is None else np.asarray(a)
    rd = want.dtype
    ref_t = np.float64 if rd == np.float32 else np.longdouble
    x = np.moveaxis(x.astype(rd).astype(ref_t), ax, -1)
    g = np.moveaxis(got, ax, -1).astype(ref_t)
    w = np.moveaxis(want, ax, -1)
    n = x.shape[-1]
    u_r = float(np.finfo(rd).eps) / 2
    u_ref = float(np.finfo(ref_t).eps) / 2
    acc = plan.get("accumulator") if plan else None
    u_a = (2.0 ** -53 if acc == "double" else u_r)
    if plan and plan.get("compensated"):
        u_a = u_r * u_r * 4 + 2.0 ** -53  # TwoSum: second-order term
    items = plan.get("items", 16) if plan else 16
    with np.errstate(all="ignore"):
        if op == "cumsum":
            exact = np.cumsum(x, axis=-1)
            mag = np.cumsum(np.abs(x), axis=-1)
            tol = u_r * np.abs(exact) + ((items + math.log2(n) + 2) * u_a + n * u_ref) * mag
            if rd == np.float32:
                # Each work-item's run of `items` elements (from the row
                # start) is output from float32 partial sums on the float64
                # prefix: items u_r sum|x| over the run so far, + 4 u_r^2.
                first = np.concatenate([np.zeros(mag.shape[:-1] + (1,), ref_t), mag], axis=-1)
                start = (np.arange(n) // items) * items
                tol = tol + items * u_r * (mag - first[..., start]) + 4 * u_r * u_r * mag
        else:
            exact = np.cumprod(x, axis=-1)
            i = np.arange(1, n + 1)
            tol = (u_r + (i + 2) * u_a + n * u_ref) * np.abs(exact)
        if exclusive:  # element i holds the inclusive scan of i - 1
            first = np.full(exact.shape[:-1] + (1,), 1.0 if op == "cumprod" else 0.0, ref_t)
            exact = np.concatenate([first, exact[..., :-1]], axis=-1)
            tol = np.concatenate([first * 0, tol[..., :-1]], axis=-1)
        tol = tol * 1.0001 + np.finfo(rd).tiny
        finite = np.isfinite(w)
        np.testing.assert_array_equal(np.asarray(got)[~np.moveaxis(finite, -1, ax)],
                                      np.asarray(want)[~np.moveaxis(finite, -1, ax)],
                                      err_msg=what + " (non-finite)")
        err = np.abs(g - exact)
        bad = finite & ~(err <= tol)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError("%s: %d element(s) outside the bound; first at %s: got %r, "
                             "exact %r, err %.3g > tol %.3g" % (
                                 what, int(bad.sum()), idx, g[idx], exact[idx],
                                 err[idx], tol[idx]))


def check(op, a, axis=None, dtype=None, exclusive=False, **kw):
    what = "gpured.%s(<%s %s strides=%s>, axis=%s, dtype=%s, exclusive=%s, %s)" % (
        op, a.dtype, a.shape, a.strides, axis, dtype, exclusive, kw)
    want = numpy_scan(op, a, axis, dtype, exclusive)
    got = getattr(gpured, op)(a, axis=axis, dtype=dtype, exclusive=exclusive, **kw)
    plan = gpured.explain(op, a, axis=axis, dtype=dtype, **kw) if a.size else None
    assert_scan(op, a, got, want, axis, plan, what, exclusive)
    return got


# --------------------------------------------------------- NumPy semantics

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(SCANS))
def test_auto_every_dtype_and_axis(op, dtype):
    for shape in [(1,), (7,), (1000,), (4, 5, 6), (3, 70)]:
        a = data(dtype, shape, op, seed=len(shape))
        axes = [None] + list(range(len(shape))) + [-1]
        for axis in axes:
            check(op, a, axis=axis)
    check(op, data(dtype, (3, 70), op), axis=1, exclusive=True)


def test_result_dtypes_follow_numpy():
    for dt in DTYPES:
        a = np.ones(5, dt)
        for op in ("cumsum", "cumprod"):
            assert getattr(gpured, op)(a).dtype == SCANS[op](a).dtype, (op, dt)
        assert gpured.cummax(a).dtype == np.dtype(dt)
    a = np.arange(1, 40, dtype=np.int8)
    for dt in ("int8", "uint16", "float32", "bool", "int64"):
        check("cumsum", a, dtype=dt)
        check("cumprod", a[:6], dtype=dt)
    check("cummin", data("int32", (50,), "cummin"), dtype="int64")
    check("cumsum", np.array([True, False, True, True]))
    check("cumsum", np.array([True, False, True]), dtype=bool)
    check("cumprod", np.array([True, True, False, True]), dtype=bool)


def test_nan_propagates():
    a = np.arange(5000, dtype=np.float32)
    a[[1234, 4000]] = np.nan
    for v in gpured.variants("cummax", "float32"):
        for op in ("cummin", "cummax", "cumsum"):
            got = getattr(gpured, op)(a, variant=v)
            want = numpy_scan(op, a, None)
            assert np.isnan(got[1234:]).all() and not np.isnan(got[:1234]).any(), (op, v)
            if op != "cumsum":
                np.testing.assert_array_equal(got, want, err_msg="%s %s" % (op, v))
    b = np.array([3.0, np.inf, -np.inf, 2.0], np.float32)
    check("cummax", b)
    check("cumsum", b)


def test_twenty_five_ones_exact():
    """NumPy's sequential cumsum stops at 2**24; tree scans do not."""
    a = np.ones(2 ** 25, np.float32)
    assert np.cumsum(a)[-1] == 2 ** 24
    got = gpured.cumsum(a)
    assert got[-1] == 2 ** 25
    # every prefix correctly rounded: fl32(i + 1)
    np.testing.assert_array_equal(got[::4097], np.arange(1, 2 ** 25 + 1, 4097).astype(np.float32))


def test_layouts():
    for layout in ("C", "F", "T", "strided", "negstride", "byteswap",
                   "byteswap_strided", "broadcast", "unaligned"):
        for dt in ("int32", "float64" if HAS_FP64 else "float32", "uint8"):
            a = make_layout(dt, (9, 37, 5), layout)
            for axis in (None, 0, 1, 2):
                check("cumsum", a, axis=axis)
                check("cummax", a, axis=axis)


def test_empty_and_scalar():
    for shape in [(0,), (2, 0, 1), (0, 3), (3, 0)]:
        for axis in (None, 0, -1):
            a = np.zeros(shape, np.float32)
            got = gpured.cumsum(a, axis=axis)
            want = np.cumsum(a, axis=axis)
            assert got.shape == want.shape and got.dtype == want.dtype
    s = np.float32(3.5)
    np.testing.assert_array_equal(gpured.cumsum(s), np.cumsum(s))
    np.testing.assert_array_equal(gpured.cumprod(np.int8(3), axis=0), np.cumprod(np.int8(3), axis=0))


def test_out_and_errors():
    a = data("int32", (6, 50), "cumsum")
    out = np.empty((6, 50), np.int64)
    r = gpured.cumsum(a, axis=1, out=out)
    assert r is out
    np.testing.assert_array_equal(out, np.cumsum(a, axis=1))
    out32 = np.zeros((6, 50), np.float32)
    gpured.cumsum(a, axis=0, out=out32)
    np.testing.assert_array_equal(out32, np.cumsum(a, axis=0, out=np.zeros((6, 50), np.float32)))
    # Nothing is written to out unless the call succeeds.
    sentinel = np.full((6, 50), -7, np.int64)
    with pytest.raises(gpured.VariantUnavailable if "workgroup" not in gpured.variants("cumsum", "int32")
                       else ValueError):
        gpured.cumsum(a, axis=1, out=sentinel,
                      variant="workgroup" if "workgroup" not in gpured.variants("cumsum", "int32")
                      else "bogus")
    assert (sentinel == -7).all()
    with pytest.raises(ValueError, match="wrong size"):
        gpured.cumsum(a, out=np.empty(5))
    with pytest.raises(TypeError, match="out must be"):
        gpured.cumsum(a, out=[0] * 300)
    ro = np.empty((6, 50), np.int64)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gpured.cumsum(a, axis=1, out=ro)
    with pytest.raises(np.exceptions.AxisError):
        gpured.cumsum(a, axis=2)
    with pytest.raises(TypeError, match="does not support"):
        gpured.cumsum(np.ones(4, np.clongdouble))
    with pytest.raises(TypeError, match="does not support"):
        gpured.cumsum(np.zeros(4, "M8[s]"))
    with pytest.raises(TypeError, match="unexpected keyword"):
        gpured.cumsum(a, bogus=1)
    with pytest.raises(ValueError, match="unknown variant"):
        gpured.cumsum(a, variant="nope")
    for knob, val in (("wg_size", 3), ("items", 5), ("groups", 70000), ("ilp", 17)):
        with pytest.raises(ValueError, match=knob):
            gpured.cumsum(a, **{knob: val})
    with pytest.raises(ValueError, match="at least 1"):
        gpured.cumsum(a, wg_size=0)
    x = a.copy()
    gpured.cumsum(a, axis=1)
    np.testing.assert_array_equal(a, x)  # input not modified


# ------------------------------------------------------------ the variants

def variant_cases(variant, dt, op):
    """Sizes that end exactly on and one past every tile / work-group
    boundary of the plan, rows, columns and an exclusive scan."""
    p = gpured.explain(op, np.ones(1 << 16, dt), variant=variant)
    tile = p["wg_size"] * p["items"]
    cases = []
    for n in sorted({1, p["wg_size"], p["wg_size"] + 1, tile - 1, tile, tile + 1,
                     2 * tile, 2 * tile + 1}):
        cases.append(((n,), None, {}))
    cases += [((5, tile + 3), 1, {}), ((3, 2 * tile), -1, {"exclusive": True}),
              ((40, 3), 0, {}), ((2, 3, 33), 1, {})]
    return cases


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_every_variant_op_dtype(variant):
    if PASS_VARIANTS and variant not in PASS_VARIANTS:
        pytest.skip("this pass re-runs only the variants it adds "
                    "(GPURED_TEST_VARIANTS); the main pass runs %s" % variant)
    ran = 0
    for op in SCANS:
        for dt in (["bool", "int8", "uint16", "int32", "uint64", "float32"]
                   + (["float64"] if HAS_FP64 else [])):
            if variant not in gpured.variants(op, dt):
                with pytest.raises(gpured.VariantUnavailable) as e:
                    getattr(gpured, op)(np.ones(10, dt), variant=variant)
                assert variant in str(e.value) and len(str(e.value)) > 40
                continue
            for shape, axis, kw in variant_cases(variant, dt, op):
                a = data(dt, shape, op, seed=ran)
                check(op, a, axis=axis, variant=variant, **kw)
                ran += 1
    if variant in ("naive", "blelloch", "reduce_then_scan", "decoupled_lookback",
                   "row_per_item"):
        assert ran > 0, "%s must run on every device" % variant


@pytest.mark.parametrize("variant", ["naive", "blelloch", "reduce_then_scan",
                                     "decoupled_lookback"])
def test_variant_knobs(variant):
    a = data("float32", (3, 5000), "cumsum", 3)
    for kw in ({"wg_size": 1}, {"wg_size": 32, "items": 2}, {"wg_size": 128, "items": 4},
               {"groups": 3}, {"groups": 1}, {"items": 1}):
        if variant != "reduce_then_scan" and "groups" in kw and variant == "decoupled_lookback":
            continue
        if (variant == "decoupled_lookback" and not DEV["type"].startswith("GPU")
                and kw.get("wg_size", 1) > 1):
            # CPUs run one work-item per look-back tile (PoCL never
            # finished tiles of several): refused, with the reason
            with pytest.raises(ValueError, match="wg_size must be 1"):
                gpured.cumsum(a, axis=1, variant=variant, **kw)
            continue
        check("cumsum", a, axis=1, variant=variant, **kw)
        check("cummin", a, axis=1, variant=variant, exclusive=True, **kw)


@pytest.mark.parametrize("ilp", [1, 3, 16])
def test_row_per_item_loads_in_flight(ilp):
    """row_per_item loads `ilp` elements of its row before folding them
    (16 by default on GPUs): rows and columns of every length around it,
    inclusive and exclusive, against NumPy."""
    for dt, op in (("float32", "cumsum"), ("int32", "cummax"), ("float64", "cumprod")):
        for L in (1, ilp - 1, ilp, ilp + 1, 2 * ilp + 5, 40):
            if L < 1:
                continue
            a = data(dt, (L, 7), op, L)
            plan = gpured.explain(op, gpured.to_device(a), axis=0, variant="row_per_item",
                                  ilp=ilp)
            assert plan["ilp"] == ilp
            check(op, a, axis=0, variant="row_per_item", ilp=ilp)
            check(op, np.ascontiguousarray(a.T), axis=1, variant="row_per_item", ilp=ilp,
                  exclusive=True)


@pytest.mark.parametrize("wg,items", [(32, 16), (64, 32), (128, 8)])
def test_striped_tiles_with_wider_results(wg, items):
    """Results wider than the elements (int32 -> int64 sums, float32 into
    float64, bool/int8/int16 counts) go through the striped exchange too
    (GR_STRIPE_WIDE): every size around the tile, rows, exclusive."""
    T = wg * items
    for dt, rdt in (("int32", None), ("uint32", None), ("int16", None), ("int8", None),
                    ("bool", None), ("float32", "float64")):
        kw = {"dtype": rdt} if rdt else {}
        for n in (1, T - 1, T, T + 1, 5 * T + 17):
            a = data(dt, (n,), "cumsum", n)
            check("cumsum", a, variant="reduce_then_scan", wg_size=wg, items=items, **kw)
            check("cumsum", a, variant="reduce_then_scan", wg_size=wg, items=items,
                  exclusive=True, **kw)
        check("cumsum", data(dt, (5, 2 * T + 3), "cumsum", 1), axis=1,
              variant="reduce_then_scan", wg_size=wg, items=items, **kw)


def test_lookback_chain_over_10000_tiles():
    """A look-back chain of > 10,000 tiles (tiny tiles through the knobs),
    with the fallback forced on: a tile that finds its predecessor not yet
    published reduces that tile itself (spins=0)."""
    if "decoupled_lookback" not in gpured.variants("cumsum", "int32"):
        pytest.skip("device lacks 64-bit atomics (VariantUnavailable tested elsewhere)")
    wg = 32 if DEV["nvidia_ptx"] else 1
    for dt, kw in (("int32", {}), ("int64", {"spins": 0}), ("float32", {"spins": 0}),
                   ("int16", {})):
        op = "cummax" if dt == "int16" else "cumsum"
        n = 10003 * wg * 4 + 1
        a = data(dt, (n,), op, 11)
        plan = gpured.explain(op, a, variant="decoupled_lookback", wg_size=wg, items=4, **kw)
        assert plan["tiles"] >= 10000
        check(op, a, variant="decoupled_lookback", wg_size=wg, items=4, **kw)
    # Many rows, several tiles each (row-wise look-back).
    check("cumsum", data("int32", (300, 1000), "cumsum"), axis=1,
          variant="decoupled_lookback", wg_size=wg, items=8)


def test_float_accuracy_bound_grows_with_n():
    for n in (1000, 100003, 1 << 20):
        a = data("float32", (n,), "cumsum", n)
        check("cumsum", a)
    if HAS_FP64:
        check("cumsum", data("float64", (100003,), "cumsum", 1))
        check("cumprod", data("float64", (30001,), "cumprod", 1))
    check("cumprod", data("float32", (30001,), "cumprod", 1))


# --------------------------------------------------- plans (synthetic caps)

H100 = {"gpu": 1, "compute_units": 132, "max_work_group_size": 1024, "fp64": 1,
        "atomics64": 1, "subgroups": 0, "wg_collectives": 0, "nvidia_ptx": 1,
        "local_mem_size": 48 << 10, "name": "H100"}
POCL_CPU = {"gpu": 0, "compute_units": 2, "max_work_group_size": 4096, "fp64": 1,
            "atomics64": 1, "name": "PoCL CPU"}
INTEL_GPU = {"gpu": 1, "compute_units": 96, "max_work_group_size": 512, "fp64": 0,
             "atomics64": 1, "subgroups": 1, "wg_collectives": 1, "name": "iGPU"}
OLD_GPU = {"gpu": 1, "compute_units": 16, "max_work_group_size": 256, "fp64": 1,
           "atomics64": 0, "name": "no atomics"}


def plan_for(caps, op="add", dt="float32", rd=None, M=1, L=1 << 28, ss=None, es=1, **kw):
    return _core.scan_plan_for(caps, op, dt, rd or dt, M, L, ss or L, es, **kw)


def test_plans_auto_by_device():
    p = plan_for(H100, rd="float32")
    assert p["variant"] == "decoupled_lookback" and p["combine"] == "subgroup"
    assert p["wg_size"] == 256 and p["items"] == 32 and p["accumulator"] == "double"
    # 8-byte elements and results: 128 x 32 (32 KiB staged, as above)
    p = plan_for(H100, dt="float64")
    assert p["wg_size"] == 128 and p["items"] == 32
    assert plan_for(H100, dt="int64")["items"] == 32
    assert plan_for(dict(H100, local_mem_size=32 << 10), dt="float64")["items"] == 8
    # int32 -> int64 sums: 128 x 32, the results' tile striped (45 KiB)
    p = plan_for(H100, dt="int32", rd="int64")
    assert p["wg_size"] == 128 and p["items"] == 32
    assert plan_for(dict(H100, local_mem_size=32 << 10), dt="int32", rd="int64")["items"] == 16
    # 256 x 32 four-byte elements stage 32 KiB (and padding) in local
    # memory: a 32 KiB device (Oclgrind) keeps 16
    p = plan_for(dict(H100, local_mem_size=32 << 10), rd="float32")
    assert p["wg_size"] == 256 and p["items"] == 16
    p = plan_for(POCL_CPU)
    assert p["variant"] == "decoupled_lookback" and p["wg_size"] == 1 and p["ilp"] == 4
    p = plan_for(INTEL_GPU, op="minimum")
    assert p["variant"] == "decoupled_lookback" and p["combine"] == "workgroup"
    assert p["accumulator"] == "float"
    p = plan_for(OLD_GPU)
    assert p["variant"] == "reduce_then_scan" and p["passes"] == 3
    # Columns and short rows: one work-item per row.
    p = plan_for(H100, M=4096, L=1000, ss=1, es=4096)
    assert p["variant"] == "row_per_item" and p["ilp"] == 16
    # CPUs: 16 loads at a time along short contiguous rows, one down columns
    assert plan_for(POCL_CPU, M=1 << 20, L=8)["ilp"] == 16
    assert plan_for(POCL_CPU, M=4096, L=1000, ss=1, es=4096)["ilp"] == 1
    assert plan_for(H100, M=1 << 20, L=8)["variant"] == "row_per_item"
    # Medium rows get a smaller tile; long rows several tiles.
    p = plan_for(H100, M=4096, L=65536)
    assert p["tiles"] == 8
    p = plan_for(H100, M=100000, L=700)
    assert p["wg_size"] * p["items"] >= 700 and p["tiles"] == 1
    # Scratch O(n / tile): one status word per tile.
    assert plan_for(H100)["tiles"] == (1 << 28) // 8192


def test_plans_variants_and_reasons():
    for name in ("workgroup", "subgroup"):
        with pytest.raises(gpured.VariantUnavailable, match=name):
            plan_for(POCL_CPU, variant=name)
    p = plan_for(INTEL_GPU, variant="workgroup", op="add", dt="int32", rd="int64")
    assert p["combine"] == "workgroup"
    with pytest.raises(gpured.VariantUnavailable, match="add/min/max"):
        plan_for(INTEL_GPU, variant="workgroup", op="multiply", dt="int32", rd="int64")
    with pytest.raises(gpured.VariantUnavailable, match="add/min/max"):
        plan_for(INTEL_GPU, variant="subgroup", op="minimum", dt="int8")
    p = plan_for(INTEL_GPU, variant="subgroup", op="add", dt="float32")
    assert p["combine"] == "subgroup"
    p = plan_for(H100, variant="subgroup", op="multiply", dt="int8", rd="int64")
    assert p["combine"] == "subgroup" and p["wg_size"] >= 32
    with pytest.raises(ValueError, match="whole warps"):
        plan_for(H100, variant="subgroup", wg_size=16)
    with pytest.raises(gpured.VariantUnavailable, match="64-bit atomics"):
        plan_for(OLD_GPU, variant="decoupled_lookback")
    # Ladder variants: one work-group per row when rows fill the device.
    p = plan_for(H100, variant="blelloch", M=4096, L=65536)
    assert p["passes"] == 1 and p["groups"] == 1 and p["combine"] == "blelloch"
    p = plan_for(H100, variant="naive", M=1, L=1 << 24)
    assert p["passes"] == 3 and p["combine"] == "naive"
    p = plan_for(H100, variant="blelloch", M=1, L=1 << 24, groups=1)
    assert p["passes"] == 1


def test_variants_listing():
    names = gpured.variants("cumsum")
    assert names[0] == "auto"
    for v in ("naive", "blelloch", "reduce_then_scan", "row_per_item"):
        assert v in names
    assert ("workgroup" in names) == bool(DEV["wg_collectives"])
    assert ("subgroup" in names) == bool(DEV["nvidia_ptx"] or DEV["subgroups"])
    assert "sum" not in names and gpured.variants("sum")[0] == "auto"
    e = gpured.explain("cumsum", np.ones(1000, np.float32))
    # a small host array may be scanned on the host (placement "auto")
    assert (e["variant"] in names or e["placement"] == "host") and "why" in e
    e = gpured.explain("cumsum", gpured.to_device(np.ones(1000, np.float32)))
    assert e["variant"] in names and "why" in e
    t = gpured.timeit("cumsum", np.ones(1 << 16, np.float32), reps=2)
    assert t["seconds"] > 0 and t["result"][-1] == 1 << 16
    assert "gr_scan_lookback" in gpured.kernel_source("scan")


def test_threads_and_no_leaks():
    import threading
    import resource
    a = data("float32", (64, 1000), "cumsum")
    want = check("cumsum", a, axis=1)  # then every thread: bitwise the same
    errs = []

    def work():
        try:
            for _ in range(20):
                got = gpured.cumsum(a, axis=1)
                if not np.array_equal(got, want):
                    errs.append("mismatch")
        except Exception as e:  # pragma: no cover
            errs.append(repr(e))

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs
    b = np.ones(1 << 20, np.float32)
    for _ in range(5):
        gpured.cumsum(b)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(60):
        gpured.cumsum(b)
        gpured.cumprod(b[:1000], variant="reduce_then_scan")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 64 * 1024, "ru_maxrss grew by %d KiB" % (after - before)


# ------------------------------------------------ the array API's names

@pytest.mark.parametrize("fname", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("where", ["host", "device"])
def test_cumulative_sum_prod(fname, where):
    """cumulative_sum / cumulative_prod (issue 42) as NumPy 2.1's: axis
    required past one dimension, include_initial's leading identity along
    the axis, NumPy's result dtypes, 0-d and empty inputs, out=."""
    npf = getattr(np, fname, None)
    if npf is None:
        pytest.skip("NumPy < 2.1 has no %s to compare with" % fname)
    gpf = getattr(gpured, fname)
    put = gpured.to_device if where == "device" else (lambda x: x)
    rng = np.random.default_rng(5)
    cases = [(rng.integers(-3, 4, 7).astype(np.int8), {}),
             (rng.integers(1, 3, (3, 4)).astype(np.float32), {"axis": 0}),
             (rng.integers(1, 3, (3, 4)).astype(np.int32), {"axis": -1}),
             (rng.integers(1, 3, (2, 3, 4)).astype(np.float64), {"axis": 1}),
             (np.ones((2, 0)), {"axis": 1}), (np.ones((0, 2), bool), {"axis": 0}),
             (np.float32(3), {}), (np.arange(5, dtype=np.uint8), {"dtype": np.int16})]
    for a, kw in cases:
        for init in (False, True):
            want = npf(a, include_initial=init, **kw)
            got = gpf(put(a), include_initial=init, **kw)
            assert isinstance(got, gpured.Array) == (where == "device")
            got = gpured.asnumpy(got)
            assert got.dtype == want.dtype and got.shape == want.shape, (a, kw, init)
            np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="axis"):
        gpf(put(np.ones((2, 2))))
    a = rng.integers(1, 3, (3, 4)).astype(np.float64)
    out = np.full((3, 5), np.nan) if where == "host" else gpured.to_device(np.full((3, 5), np.nan))
    assert gpf(put(a), axis=1, include_initial=True, out=out) is out
    np.testing.assert_allclose(gpured.asnumpy(out), npf(a, axis=1, include_initial=True))


def test_array_var_std_ptp_methods():
    a = np.random.default_rng(6).standard_normal((5, 7)).astype(np.float32)
    d = gpured.to_device(a)
    np.testing.assert_allclose(d.var(axis=0).get(), a.var(axis=0), rtol=1e-5)
    np.testing.assert_allclose(d.std(ddof=1).get(), a.std(ddof=1), rtol=1e-5)
    np.testing.assert_array_equal(d.ptp(axis=1).get(), np.ptp(a, axis=1))
