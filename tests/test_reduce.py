"""gpured reductions compared against NumPy.

Integer / bool results and min/max/argmin/argmax/all/any of floats must be
bit-identical to NumPy (values, dtype, result type and shape).  Float
sum/prod/mean are compared against an extended-precision reference with the
bounds documented in conftest.py.
"""

import math

import numpy as np
import pytest

import gpured
from conftest import (DTYPES, FLOAT_DTYPES, INT_DTYPES, LAYOUTS, OPS, SHAPES, ARG_OPS,
                      axis_choices, check, compare, data_kinds, dtype_id, gp_call,
                      make_data, make_layout, np_call, rng_for, shape_id)


# --------------------------------------------------------------------------
# the main matrix: op x dtype x shape x axis x keepdims
# --------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_matches_numpy(op, dtype, shape):
    for kind in data_kinds(op):
        a = make_data(dtype, shape, kind)
        for axis in axis_choices(a.ndim, op):
            for keepdims in (False, True):
                check(op, a, axis=axis, keepdims=keepdims)


# --------------------------------------------------------------------------
# memory layouts: transposed, strided, negative strides, Fortran order,
# byte-swapped, zero strides, unaligned
# --------------------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_layouts(op, dtype, layout):
    kind = data_kinds(op)[0]
    a = make_layout(dtype, (5, 6, 7), layout, kind)
    for axis in axis_choices(3, op):
        check(op, a, axis=axis)
    check(op, a, axis=1, keepdims=True)
    if layout not in ("T", "broadcast"):
        b = make_layout(dtype, (1021,), layout, kind)
        check(op, b)
        check(op, b, axis=0, keepdims=True)


def test_layout_sanity():
    """The layout generator really produces the layouts it claims to."""
    a = make_layout(np.int32, (5, 6, 7), "negstride")
    assert any(s < 0 for s in a.strides)
    assert np.asfortranarray(a).flags.f_contiguous
    assert make_layout(np.int32, (5, 6, 7), "F").flags.f_contiguous
    assert not make_layout(np.int32, (5, 6, 7), "F").flags.c_contiguous
    assert not make_layout(np.int32, (5, 6, 7), "strided").flags.c_contiguous
    assert not make_layout(np.int32, (5, 6, 7), "byteswap").dtype.isnative
    assert not make_layout(np.float64, (5, 6, 7), "byteswap_strided").dtype.isnative
    assert make_layout(np.int32, (5, 6, 7), "broadcast").strides[0] == 0
    assert not make_layout(np.int32, (5, 6, 7), "unaligned").flags.aligned


# --------------------------------------------------------------------------
# NaN / inf handling
# --------------------------------------------------------------------------

SPECIAL_PATTERNS = ["nan_sprinkled", "nan_first", "nan_last", "all_nan", "pos_inf",
                    "neg_inf", "both_inf", "inf_and_nan", "signed_zeros"]


def _special(dtype, shape, pattern, op):
    kind = "prod" if op == "prod" else "general"
    a = make_data(dtype, shape, kind, seed=pattern).copy()
    flat = a.reshape(-1)
    rng = rng_for("special", dtype, shape, pattern)
    n = flat.size
    pick = lambda k: rng.choice(n, size=k, replace=False)  # noqa: E731
    if pattern == "nan_sprinkled":
        flat[pick(max(1, n // 50))] = np.nan
    elif pattern == "nan_first":
        flat[0] = np.nan
        flat[pick(3)] = np.nan
    elif pattern == "nan_last":
        flat[-1] = np.nan
    elif pattern == "all_nan":
        flat[:] = np.nan
    elif pattern == "pos_inf":
        flat[pick(3)] = np.inf
    elif pattern == "neg_inf":
        flat[pick(3)] = -np.inf
    elif pattern == "both_inf":
        idx = pick(4)
        flat[idx[:2]] = np.inf
        flat[idx[2:]] = -np.inf
    elif pattern == "inf_and_nan":
        idx = pick(6)
        flat[idx[:2]] = np.inf
        flat[idx[2:4]] = -np.inf
        flat[idx[4:]] = np.nan
    elif pattern == "signed_zeros":
        flat[:] = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    return a


@pytest.mark.parametrize("pattern", SPECIAL_PATTERNS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_special_float_values(op, dtype, pattern):
    for shape in [(1021,), (7, 13), (3, 4, 5)]:
        a = _special(dtype, shape, pattern, op)
        for axis in axis_choices(a.ndim, op):
            check(op, a, axis=axis)
    # a NaN very late in a long array, beyond the first work-groups
    b = make_data(dtype, (65537,), "prod" if op == "prod" else "general")
    b[65000] = np.nan
    b[65001] = np.nan
    check(op, b)


def test_signed_zero_sum_matches_numpy_sign():
    for dtype in FLOAT_DTYPES:
        a = np.full(1000, -0.0, dtype)
        got, exp = gpured.sum(a), np.sum(a)
        compare("sum", a, got, exp, {})
        assert np.signbit(got) == np.signbit(exp), (got, exp)


# --------------------------------------------------------------------------
# argmin / argmax return the first occurrence
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_first_occurrence(op, dtype):
    dt = np.dtype(dtype)
    for n in (3000, 65537):
        a = make_data(dt, (n,), "ties")
        ext = (np.iinfo(dt).max if op == "argmax" else np.iinfo(dt).min) if dt.kind in "iu" \
            else (True if op == "argmax" else False) if dt.kind == "b" \
            else (np.inf if op == "argmax" else -np.inf)
        for positions in ([n - 1], [n - 1, n // 2], [n - 1, n // 2, 700, 701], [0, n - 1]):
            b = a.copy()
            b[positions] = ext
            check(op, b)
        c = np.full(n, a[0])
        check(op, c)
        # 2-D: per-row / per-column extreme in different places
        m = make_data(dt, (37, 129), "ties")
        check(op, m, axis=0)
        check(op, m, axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.uint64], ids=dtype_id)
@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_first_occurrence_every_variant(op, dtype):
    """The vector loop of 4- and 8-byte argmin/argmax keeps a load number per
    lane (reduce.cl GR_ARGK), not the index: ties, values equal to the
    identity (a lane's first load is always taken) and NaNs, every variant."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(11)
    if dt == np.float64 and not gpured.get_device()["fp64"]:
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")
    ident = (np.iinfo(dt).min if op == "argmax" else np.iinfo(dt).max) if dt.kind in "iu" \
        else (-np.inf if op == "argmax" else np.inf)
    for variant in gpured.variants(op, dtype):
        for shape, axis in (((7,), None), ((65537,), None), ((300, 129), 1)):
            n = int(np.prod(shape))
            ties = rng.integers(0, 5, n).astype(dt)
            same = np.full(n, ident, dt)
            cases = [ties, same]
            if dt.kind == "f":
                nan = ties.copy()
                nan[[n // 3, n // 2, n - 1]] = np.nan
                cases.append(nan)
            for a in cases:
                a = a.reshape(shape)
                got = getattr(gpured, op)(a, axis=axis, variant=variant)
                want = getattr(np, op)(a, axis=axis)
                np.testing.assert_array_equal(np.asarray(got), want,
                                              err_msg="%s %s %s axis=%s %s" % (
                                                  op, dt, shape, axis, variant))


# --------------------------------------------------------------------------
# dtype= argument
# --------------------------------------------------------------------------

def _dtype_cases():
    cases = []
    int_targets = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64]
    for op in ("sum", "prod"):
        for src in DTYPES:
            if np.dtype(src).kind in "biu":
                targets = [None, src] + int_targets + FLOAT_DTYPES
            else:
                targets = [None, src, np.int32, np.int64] + FLOAT_DTYPES
            for t in dict.fromkeys(targets):
                cases.append((op, src, t))
    for src in DTYPES:
        for t in [None] + FLOAT_DTYPES:
            cases.append(("mean", src, t))
    return cases


@pytest.mark.parametrize(
    "op,src,target", _dtype_cases(),
    ids=lambda v: dtype_id(v) if isinstance(v, type) else str(v))
def test_dtype_argument(op, src, target):
    kind = "prod" if op == "prod" else "general"
    if np.dtype(src).kind == "f" and target is not None and np.dtype(target).kind in "iu":
        kind = "ties"  # float -> int conversion is only well defined in range
    for shape in [(1021,), (17, 130)]:
        a = make_data(src, shape, kind)
        for axis in [None, 0, -1]:
            check(op, a, axis=axis, dtype=target)
        check(op, a, axis=0, dtype=target, keepdims=True)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_sum_wraps_in_forced_dtype(dtype):
    a = make_data(dtype, (1000,), "wrap")
    exact = sum(int(v) for v in a)
    expected = check("sum", a, dtype=dtype)
    assert int(expected) != exact, "test data does not wrap; test is meaningless"
    m = make_data(dtype, (10, 300), "wrap")
    check("sum", m, axis=1, dtype=dtype)
    check("sum", m, axis=0, dtype=dtype)
    # products wrap too
    p = make_data(dtype, (301,), "prod")
    check("prod", p, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64], ids=dtype_id)
def test_default_sum_wraps_64bit(dtype):
    a = make_data(dtype, (5000,), "wrap")
    exact = sum(int(v) for v in a)
    expected = check("sum", a)
    assert int(expected) != exact
    check("sum", a.reshape(50, 100), axis=1)
    check("prod", make_data(dtype, (5000,), "prod"))


# --------------------------------------------------------------------------
# initial=
# --------------------------------------------------------------------------

def _initial_for(op, a):
    dt = a.dtype
    if op in ("min", "max"):
        if a.size:
            return np.sort(a.reshape(-1))[a.size // 2].item()
        return True if dt.kind == "b" else 3
    if op == "sum":
        return True if dt.kind == "b" else (5 if dt.kind in "iu" else 0.5)
    return True if dt.kind == "b" else (3 if dt.kind in "iu" else 1.5)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", ["sum", "prod", "min", "max"])
def test_initial(op, dtype):
    kind = "prod" if op == "prod" else "general"
    for shape in [(0,), (7,), (1021,), (2, 0, 1), (4, 5, 6)]:
        a = make_data(dtype, shape, kind)
        init = _initial_for(op, a)
        for axis in axis_choices(a.ndim, op):
            check(op, a, axis=axis, initial=init)
        check(op, a, axis=-1, initial=init, keepdims=True)


def test_initial_with_nan():
    for dtype in FLOAT_DTYPES:
        a = make_data(dtype, (100,), "general")
        a[10] = np.nan
        for op in ("min", "max", "sum"):
            check(op, a, initial=0.0)


# --------------------------------------------------------------------------
# out=
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_out(op, dtype):
    a = make_data(dtype, (17, 130), data_kinds(op)[0])
    for axis, keepdims in [(None, False), (None, True), (0, False), (1, True), (-1, False)]:
        expected = np_call(op, a, axis=axis, keepdims=keepdims)
        exp_arr = np.asarray(expected)
        for strided in (False, True):
            if strided and exp_arr.ndim == 0:
                continue
            if strided:
                big = np.zeros(tuple(2 * s for s in exp_arr.shape), exp_arr.dtype)
                out = big[tuple(slice(None, None, 2) for _ in exp_arr.shape)]
            else:
                out = np.zeros(exp_arr.shape, exp_arr.dtype)
            np_out = out.copy()
            res_np = np_call(op, a, axis=axis, keepdims=keepdims, out=np_out)
            res = gp_call(op, a, axis=axis, keepdims=keepdims, out=out)
            what = f"gpured.{op}({dtype_id(dtype)} (17,130), axis={axis}, keepdims={keepdims}, out=...)"
            assert res is out, what + ": did not return out"
            assert res_np is np_out
            compare(op, a, out, np_out, dict(axis=axis, keepdims=keepdims), what)
            if strided:
                # the gaps between the strided out elements are untouched
                mask = np.ones(big.shape, bool)
                mask[tuple(slice(None, None, 2) for _ in exp_arr.shape)] = False
                assert not big[mask].any(), what + ": wrote outside out's view"


def test_out_with_dtype_argument():
    a = make_data(np.int16, (33, 40), "general")
    out = np.zeros(40, np.int64)
    np_out = out.copy()
    res = gpured.sum(a, axis=0, dtype=np.int64, out=out)
    np.sum(a, axis=0, dtype=np.int64, out=np_out)
    assert res is out
    np.testing.assert_array_equal(out, np_out, strict=True)


# --------------------------------------------------------------------------
# inputs that are not ndarrays, 0-d arrays, zero-size arrays
# --------------------------------------------------------------------------

LIST_INPUTS = [
    [1, 2, 3],
    [[1, 2, 3], [4, 5, 6]],
    [1.5, -2.25, 3.0],
    [[1.5, np.nan], [0.0, -1.0]],
    [True, False, True],
    [-(2 ** 62), 2 ** 62, 2 ** 62],
    [],
    [[]],
    [7],
]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("data", LIST_INPUTS, ids=lambda d: repr(d)[:30])
def test_list_inputs(op, data):
    check(op, data)
    arr = np.asarray(data)
    for axis in axis_choices(arr.ndim, op)[1:]:
        check(op, data, axis=axis)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_zero_d(op, dtype):
    a = make_data(dtype, (), "general")
    for axis in axis_choices(0, op):
        for keepdims in (False, True):
            check(op, a, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("op", OPS)
def test_zero_d_integer_axis(op):
    # NumPy accepts axis=0 / -1 for 0-d arrays in ufunc reductions and
    # argmin/argmax (but not in mean); gpured must do whatever NumPy does.
    a = np.array(5, np.int32)
    for axis in (0, -1, (0,), 1):
        check(op, a, axis=axis)


ZERO_SHAPES = [(0,), (0, 3), (3, 0), (2, 0, 1), (0, 0), (1, 0, 4)]


@pytest.mark.parametrize("shape", ZERO_SHAPES, ids=shape_id)
@pytest.mark.parametrize("op", [o for o in OPS if o not in ARG_OPS])
def test_zero_size_axis_tuples_keepdims(op, shape):
    """The way Dask calls chunk functions: axis tuples with keepdims=True."""
    for dtype in (np.float64 if np.float64 in FLOAT_DTYPES else np.float32, np.int32, np.bool_):
        a = np.zeros(shape, dtype)
        nd = len(shape)
        axes = [tuple(range(nd))] + [(i,) for i in range(nd)] + \
            [tuple(j for j in range(nd) if j != i) for i in range(nd)]
        for axis in axes:
            check(op, a, axis=axis, keepdims=True)
            if op in ("sum", "prod", "mean"):
                check(op, a, axis=axis, keepdims=True, dtype=np.float32)
            if op in ("sum", "prod", "min", "max"):
                check(op, a, axis=axis, keepdims=True, initial=1)


def test_numpy_integer_axis():
    a = make_data(np.int32, (4, 5, 6), "general")
    for op in OPS:
        check(op, a, axis=np.int64(1))
        check(op, a, axis=np.intp(-1), keepdims=True)


def test_variant_auto():
    a = make_data(np.int32, (3000,), "general")
    exp = np.sum(a)
    got = gpured.sum(a, variant="auto")
    compare("sum", a, got, exp, {})
    f = make_data(np.float32, (17, 130), "general")
    compare("sum", f, gpured.sum(f, axis=0, variant="auto"), np.sum(f, axis=0), dict(axis=0))


# --------------------------------------------------------------------------
# float accuracy
# --------------------------------------------------------------------------

def test_float32_sum_of_2_24_tenths():
    n = 2 ** 24
    a = np.full(n, np.float32(0.1), np.float32)
    exact = n * float(np.float32(0.1))
    got = gpured.sum(a)
    assert type(got) is type(np.sum(a)) and got.dtype == np.float32
    assert abs(float(got) - exact) <= 2e-6 * exact, (float(got), exact)
    m = gpured.mean(a)
    assert type(m) is np.float32
    assert abs(float(m) - float(np.float32(0.1))) <= 2e-6 * 0.1, float(m)


def _sum_error(values_f64_list, result):
    """Exact |sum(values) - result| (to float64 precision) via math.fsum."""
    return abs(math.fsum(values_f64_list + [-float(result)]))


def _accuracy_data(dtype, n, dist):
    rng = rng_for("acc", dtype, n, dist)
    if dist == "uniform_pos":
        x = rng.random(n)
    elif dist == "normal":
        x = rng.standard_normal(n)
    elif dist == "wide":
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)
    elif dist == "offset":
        x = 1000.0 + rng.standard_normal(n)
    else:
        raise ValueError(dist)
    return x.astype(dtype)


@pytest.mark.parametrize("dist", ["uniform_pos", "normal", "wide", "offset"])
@pytest.mark.parametrize("n", [1000, 65537, 1_000_003])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_sum_accuracy_not_worse_than_numpy(dtype, n, dist):
    """|ours - exact| <= max(|numpy - exact|, 0.5 ulp(ours)), exact via math.fsum."""
    a = _accuracy_data(dtype, n, dist)
    vals = a.astype(np.float64).tolist()
    got = gpured.sum(a)
    exp = np.sum(a)
    assert type(got) is type(exp)
    ours, theirs = _sum_error(vals, got), _sum_error(vals, exp)
    half_ulp = 0.5 * float(np.spacing(np.abs(got)))
    assert ours <= max(theirs, half_ulp), \
        f"gpured error {ours:.3g} > max(numpy error {theirs:.3g}, half ulp {half_ulp:.3g})"


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_axis_sum_accuracy_not_worse_than_numpy(dtype, axis):
    a = _accuracy_data(dtype, 700 * 1001, "offset").reshape(700, 1001)
    got = gpured.sum(a, axis=axis)
    exp = np.sum(a, axis=axis)
    assert got.dtype == exp.dtype and got.shape == exp.shape
    a64 = np.moveaxis(a.astype(np.float64), axis, -1)
    for i in range(got.shape[0]):
        vals = a64[i].tolist()
        ours, theirs = _sum_error(vals, got[i]), _sum_error(vals, exp[i])
        half_ulp = 0.5 * float(np.spacing(np.abs(got[i])))
        assert ours <= max(theirs, half_ulp), \
            f"[{i}] gpured error {ours:.3g} > max(numpy {theirs:.3g}, half ulp {half_ulp:.3g})"


def _hard_columns(rows, cols, seed):
    """float64 columns of small terms (halves and small integers: every
    column's exact sum is representable) among pairs of huge ones (+-1e16,
    +-2**60) that cancel within the column: a plain sum loses the small
    terms added while a huge one is in it, a compensated one keeps them."""
    rng = np.random.default_rng(seed)
    a = rng.choice([1.0, -1.0, 0.5, 3.0, -2.5], size=(rows, cols))
    for j in range(cols):
        for _ in range(rng.integers(1, 4)):
            i, k = rng.choice(rows, 2, replace=False)
            big = rng.choice([1e16, -1e16, 2.0 ** 60, -(2.0 ** 60)])
            a[i, j], a[k, j] = big, -big
    return a


@pytest.mark.parametrize("rows,cols", [(1000, 37), (257, 512), (64, 1030),
                                       (1001, 8), (9, 8300)])
def test_column_sums_compensated_vs_fsum(rows, cols):
    """Issue 15: float64 column sums (axis 0 of a C-ordered matrix: the host
    path's column kernels, the AVX-512 Fast2Sum one where the CPU has it)
    are compensated: every column equals math.fsum of it, where NumPy's
    row-by-row sum does not; also for a view that starts inside a cache
    line ([:, 1:]) and one read bottom-up ([::-1])."""
    base = _hard_columns(rows, cols + 1, 1000 * rows + cols)
    for label, a in (("C", np.ascontiguousarray(base[:, :cols])),
                     ("[:, 1:]", base[:, 1:]), ("[::-1]", base[::-1, :cols])):
        exact = np.array([math.fsum(a[:, j].tolist()) for j in range(cols)])
        got = gpured.sum(a, axis=0)
        assert got.dtype == np.float64 and got.shape == (cols,)
        bad = np.flatnonzero(got != exact)
        assert bad.size == 0, (label, bad[:5], got[bad[:5]], exact[bad[:5]])
        if label == "C":  # the data is hard: NumPy's plain sum misses
            assert (np.sum(a, axis=0) != exact).any()


@pytest.mark.parametrize("rows,cols", [(700, 1001), (2000, 64), (33, 2051)])
def test_column_sums_correctly_rounded_wide_range(rows, cols):
    """float64 column sums of terms spread over 16 decades, with
    cancellation: the correctly rounded sum (math.fsum) of every column,
    and never further from it than NumPy's."""
    rng = np.random.default_rng(rows + cols)
    a = rng.standard_normal((rows, cols)) * 10.0 ** rng.uniform(-8, 8, (rows, cols))
    got = gpured.sum(a, axis=0)
    exp = np.sum(a, axis=0)
    for j in range(cols):
        col = a[:, j].tolist()
        exact = math.fsum(col)
        assert got[j] == exact, (j, got[j], exact)
        assert _sum_error(col, got[j]) <= _sum_error(col, exp[j])


# --------------------------------------------------------------------------
# large arrays
# --------------------------------------------------------------------------

def test_more_than_2_24_elements():
    n = 2 ** 24 + 3
    a = make_data(np.int32, (n,), "general")
    for op in ("sum", "min", "max", "argmin", "argmax", "any", "all"):
        check(op, a)
    f = make_data(np.float32, (n,), "general")
    f[n - 2] = np.float32(1e30)
    check("sum", f)
    check("argmax", f)
    check("max", f)
    b = np.zeros(n, np.bool_)
    b[n - 1] = True
    check("any", b)
    check("argmax", b)


def _bool_past_2_24(n, at):
    b = np.zeros(n, np.bool_)
    b[list(at)] = True
    return b


@pytest.mark.parametrize("threads", [2, 16])
def test_bool_argmax_past_2_24_streamed(threads):
    """Host arrays past 16 MiB stream through the pinned pool on GPUs (on
    every device here: force), copied by `threads` threads: the copy used to
    drop the last n % threads bytes when n / threads rounded down to whole
    pages, so bool argmax of 2^24 + 3 elements on the H100 read 3 stale bytes
    (16777217 instead of 16777218).  Junk goes through the pool first."""
    old = gpured.set_staging(force=True, threads=threads)
    try:
        for n in (2 ** 24 + 3, 2 ** 24 + 1, 2 ** 25 + 1):
            junk = np.full(n, 0xAB, np.uint8)
            assert int(gpured.max(junk)) == 0xAB
            for at in ((n - 1,), (2 ** 24, n - 1), (n - 2, n - 1)):
                b = _bool_past_2_24(n, at)
                assert int(gpured.argmax(b)) == at[0], (n, at)
                assert int(gpured.argmin(~b)) == at[0], (n, at)
            assert int(gpured.sum(junk)) == 0xAB * n
    finally:
        gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers",
                                                  "min_bytes", "force",
                                                  "threads")})


def test_bool_argmax_past_2_24_every_variant():
    """Every variant the device offers for bool argmax, the first maximum
    past 2^24 (index arithmetic past float's 24-bit mantissa)."""
    n = 2 ** 24 + 5
    b = _bool_past_2_24(n, (2 ** 24 + 2, n - 1))
    d = gpured.to_device(b)
    for variant in gpured.variants("argmax", "bool"):
        assert int(gpured.argmax(b, variant=variant)) == 2 ** 24 + 2, variant
        assert int(gpured.argmin(~b, variant=variant)) == 2 ** 24 + 2, variant
        assert int(gpured.argmax(d, variant=variant)) == 2 ** 24 + 2, variant


@pytest.mark.huge
def test_huge_more_than_2_31_elements():
    n = 2 ** 31 + 3
    a = np.ones(n, np.uint8)
    check("sum", a)
    a[n - 2] = 7
    check("argmax", a)
    check("max", a)
    del a
    b = np.zeros(2 ** 31 + 5, np.bool_)
    b[2 ** 31 + 2] = True
    check("any", b)
    check("argmax", b)
    check("all", b)
