"""gpured.reduceat against NumPy's ufunc.reduceat (np.add, np.multiply,
np.minimum, np.maximum, np.logical_and, np.logical_or): result dtypes
(NumPy's promotion, dtype=), the segment rule (indices[i] >= indices[i+1]
gives a[indices[i]]; the last segment runs to the end), index forms
(lists, int32/uint8 arrays, empty), errors (IndexError, TypeError, AxisError,
multiple axes), N-d inputs along every axis, non-contiguous views, device
Arrays and out=, both sides of placement, and the two kernels
(variant="segment_per_group" / "segment_per_item", wg_size=) on long and on
many short segments.

Integer, boolean, minimum/maximum and logical results must be NumPy's bit for
bit (integer sums and products wrap as NumPy's do); floating-point sums and
products are compared with the exact (long double) value, allowing twice
NumPy's own error or the pairwise-summation bound, whichever is larger (the
device accumulates float32 in float64).  Non-finite results must be NumPy's.

The device builds a program per (op, dtype, kernel, work-group size, ...)
on its first call, about 1-1.5 s each with PoCL on a 2-core machine (then
cached on disk), so the full dtype x op cross runs once on small inputs
under the default placement, the device gets a covering set of (op, dtype,
kernel) cells, and the other tests take a few combinations each, mostly
reusing the cells' programs: about 45 builds, a minute from a cold cache.
"""
import math
import warnings

import numpy as np
import pytest

import gpured
from conftest import DTYPES, FLOAT_DTYPES, HAS_FP64, dtype_id, rng_for
from test_nan import placed

UFUNCS = {"add": np.add, "multiply": np.multiply, "minimum": np.minimum,
          "maximum": np.maximum, "logical_and": np.logical_and,
          "logical_or": np.logical_or}
# every spelling gpured.reduceat's op= accepts, per ufunc
SPELLINGS = {"add": ["add", "sum", np.add],
             "multiply": ["multiply", "prod", np.multiply],
             "minimum": ["minimum", "min", np.minimum],
             "maximum": ["maximum", "max", np.maximum],
             "logical_and": ["logical_and", "all", np.logical_and],
             "logical_or": ["logical_or", "any", np.logical_or]}
EXACT = ("minimum", "maximum", "logical_and", "logical_or")
MODES = ["auto", "current"]
VARIANTS = ["segment_per_group", "segment_per_item"]
WG_SIZES = [32, 64, 128, 256]


def skip_f64(dtype):
    if np.dtype(dtype) == np.float64 and not HAS_FP64:
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------

def gen(dtype, shape, op, seed=0):
    """C-contiguous data of ``dtype``/``shape`` suited to ``op``.

    add: integers over the type's whole range (int64/uint64 sums wrap),
    floats of mixed sign with magnitudes 1e-2..1e2.  multiply: small odd
    integers and a few 2s (products wrap without collapsing to 0), floats in
    1 +- 1/256 with random sign.  minimum/maximum: whole range, ties in the
    small types, floats with one NaN in about 500.  logical: about one zero
    in eight (-0.0 among the float zeros, NaN among the non-zeros) so that
    segments come out both ways.
    """
    dt = np.dtype(dtype)
    rng = rng_for("reduceat", dt.name, shape, op, seed)
    n = int(np.prod(shape, dtype=np.int64))
    if op in ("logical_and", "logical_or"):
        nz = rng.random(n) >= 0.125
        if dt.kind == "b":
            flat = nz
        elif dt.kind in "iu":
            flat = np.where(nz, rng.integers(1, 100, n), 0)
        else:
            flat = np.where(nz, rng.standard_normal(n), np.where(rng.random(n) < 0.5, 0.0, -0.0))
            flat[nz & (rng.random(n) < 0.02)] = np.nan
    elif dt.kind == "b":
        flat = rng.random(n) < (0.9 if op == "multiply" else 0.5)
    elif op == "multiply":
        if dt.kind == "f":
            flat = (1.0 + rng.uniform(-1, 1, n) / 256.0) * rng.choice([-1.0, 1.0], n)
        else:
            choices = [1, 1, 1, 1, 3, 5, 7] + ([1, 255] if dt.kind == "u" else [-1, -3])
            flat = rng.choice(np.array(choices), size=n)
            if n > 8:
                flat[rng.integers(0, n, size=3)] = 2
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    else:
        flat = rng.standard_normal(n) * 10.0 ** rng.uniform(-2, 2, n)
        if op in ("minimum", "maximum"):
            flat[rng.random(n) < 0.002] = np.nan  # a few segments propagate NaN
    return np.ascontiguousarray(np.asarray(flat).astype(dt).reshape(shape))


def layout(make, shape, how):
    """``make(shape)`` laid out in memory as ``how``, logical shape ``shape``."""
    if how == "C":
        return make(shape)
    if how == "F":
        return np.asfortranarray(make(shape))
    if how == "T":  # a transposed view of a C array
        return make(shape[::-1]).T
    if how == "strided":  # every axis stepped by 2 (the last one: a[:, ::2])
        v = make(tuple(2 * s + 1 for s in shape))[tuple(slice(1, None, 2) for _ in shape)]
        assert v.shape == shape
        return v
    if how == "negstride":  # first and last axes reversed: negative strides
        return np.flip(make(shape), axis=(0, len(shape) - 1))
    raise ValueError(how)


def index_sets(n, seed=0):
    """Index arrays for an axis of length n >= 1: sorted with repeats,
    unsorted, non-increasing, and the edges (first, last, every element)."""
    rng = rng_for("reduceat-idx", n, seed)
    k = max(1, min(40, n // 4))
    sets = [
        np.sort(rng.integers(0, n, k)),                  # sorted, repeats
        rng.integers(0, n, k),                           # unsorted
        [n - 1, 0],                                      # last then the whole axis
        [0] + sorted(rng.integers(0, n, 3).tolist(), reverse=True),  # non-increasing
        np.arange(n),                                    # every element (last alone)
        [n - 1],
        [0],
    ]
    if n > 3:
        sets.append([2, 2, 2, n - 2, 1, n - 1])          # repeats, jumps back
    return sets


def unsort(idx, rng, frac=0.3):
    """Sorted indices with random adjacent pairs swapped (disjoint pairs):
    non-increasing steps among short segments."""
    idx = np.array(idx)
    starts = np.flatnonzero(rng.random(len(idx) - 1) < frac)
    starts = starts[np.concatenate([[True], np.diff(starts) > 1])] if starts.size else starts
    idx[starts], idx[starts + 1] = idx[starts + 1], idx[starts].copy()
    assert (np.diff(idx) < 0).any()
    return idx


def short_segments(n, k, seed=0):
    rng = rng_for("reduceat-short", n, k, seed)
    return np.sort(rng.integers(0, n, k))


# --------------------------------------------------------------------------
# NumPy's answer and the comparison
# --------------------------------------------------------------------------

def _host(idx):
    """Indices as given, a device Array's read back: NumPy's answer comes
    from host data (an Array would send ufunc.reduceat to gpured's)."""
    return idx.get() if isinstance(idx, gpured.Array) else idx


def np_reduceat(ufunc, a, idx, axis=0, dtype=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return ufunc.reduceat(np.asarray(a), _host(idx), axis=axis,
                                  dtype=dtype)


def gp_reduceat(a, idx, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return gpured.reduceat(a, idx, **kw)


def describe(name, a, idx, kw):
    arr = gpured.asnumpy(a)
    idx_s = np.asarray(idx)
    idx_d = (repr(idx_s.tolist()) if idx_s.size <= 12
             else "<%d indices %s>" % (idx_s.size, idx_s.dtype))
    return "reduceat(%s, <%s %s strides=%s>, %s, %s)" % (
        name, arr.dtype, arr.shape, arr.strides, idx_d,
        ", ".join("%s=%r" % kv for kv in kw.items()))


def assert_reduceat(got, name, a, idx, axis=0, dtype=None, what=""):
    """``got`` is NumPy's ``<name>.reduceat(a, idx, axis, dtype)``: dtype and
    shape always; values exactly, or for floating-point add/multiply within
    the accuracy bound of the module docstring."""
    ufunc = UFUNCS[name]
    host = gpured.asnumpy(a)
    idx = _host(idx)
    want = np_reduceat(ufunc, host, idx, axis=axis, dtype=dtype)
    got_np = gpured.asnumpy(got)
    what = what or describe(name, a, idx, dict(axis=axis, dtype=dtype))
    assert isinstance(got_np, np.ndarray), "%s: %r" % (what, type(got))
    assert got_np.dtype == want.dtype, "%s: dtype %s, NumPy %s" % (what, got_np.dtype, want.dtype)
    assert got_np.shape == want.shape, "%s: shape %s, NumPy %s" % (what, got_np.shape, want.shape)
    if name in EXACT or want.dtype.kind != "f":
        np.testing.assert_array_equal(got_np, want, err_msg=what, strict=True)
        return
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got_np[~finite], want[~finite],
                                  err_msg=what + " (non-finite results)")
    eps = float(np.finfo(want.dtype).eps)
    with np.errstate(all="ignore"):
        x = host.astype(want.dtype).astype(np.longdouble)
        exact = ufunc.reduceat(x, idx, axis=axis)
        ax = 0 if axis is None else (axis[0] if isinstance(axis, tuple) else axis)
        n = max(host.shape[ax], 1)  # no segment is longer
        if name == "add":
            scale = np.add.reduceat(np.abs(x), idx, axis=axis)
            bound = (math.ceil(math.log2(n)) + 2) * eps * scale
        else:
            bound = (4 * math.sqrt(n) + 2) * eps * np.abs(exact)
        tol = np.maximum(2 * np.abs(want.astype(np.longdouble) - exact), bound) \
            + 2 * eps * np.abs(exact)
        err = np.abs(got_np.astype(np.longdouble) - exact)
    bad = finite & ~(err <= tol)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            "%s: %d element(s) outside the accuracy bound; first at %s: got %r, NumPy %r, "
            "exact %r, err %.3g > tol %.3g" % (what, int(bad.sum()), i, got_np[i], want[i],
                                               exact[i], err[i], tol[i]))


def check(name, a, idx, axis=0, dtype=None, **kw):
    """gpured.reduceat(a, idx, axis, dtype, op=name, **kw) against NumPy;
    returns gpured's result."""
    args = dict(axis=axis, op=name, **kw)
    if dtype is not None:
        args["dtype"] = dtype
    got = gp_reduceat(a, idx, **args)
    if isinstance(a, gpured.Array):
        assert isinstance(got, gpured.Array), "device input gave %r" % type(got)
    else:
        assert type(got) is np.ndarray, "NumPy input gave %r" % type(got)
    assert_reduceat(got, name, a, idx, axis=axis, dtype=dtype,
                    what=describe(name, a, idx, args))
    return got


def raises_like_numpy(ufunc, a, idx, accept=None, **kw):
    """NumPy raises for these arguments; gpured must raise the same type
    (or one of ``accept``)."""
    with pytest.raises(Exception) as np_err:
        ufunc.reduceat(gpured.asnumpy(a), idx, **kw)
    kinds = accept or np_err.type
    with pytest.raises(kinds):
        gpured.reduceat(a, idx, op=ufunc.__name__, **kw)
    return np_err.type


# --------------------------------------------------------------------------
# every dtype x every op
# --------------------------------------------------------------------------

I, G = "segment_per_item", "segment_per_group"
# The device cross, a covering set: every dtype and every op on each kernel
# at least once (with the promotions: bool and int8 sums and products, int32
# into an int64 accumulator, wrapping int64 sums, NaN in float minimum and
# maximum), one program build per cell.  PoCL builds a program in about a
# second and a half on a 2-core machine, so the full 66-cell dtype x op cross
# runs on small inputs with the default placement (the host path) below
# instead.  The other device tests mostly reuse these cells' programs
# (segment_per_item is what "auto" picks for short segments).
DEVICE_CELLS = [
    ("add", np.bool_, I), ("logical_and", np.bool_, G),
    ("multiply", np.int8, I), ("logical_or", np.int8, G),
    ("minimum", np.int16, I),
    ("add", np.int32, G),
    ("add", np.int64, I),
    ("maximum", np.uint8, G),
    ("logical_or", np.uint16, I),
    ("multiply", np.uint32, G),
    ("maximum", np.uint64, I),
    ("add", np.float32, I), ("logical_and", np.float32, I), ("minimum", np.float32, G),
    ("minimum", np.float64, I), ("maximum", np.float64, G),
]


def cell_id(p):
    if isinstance(p, str):
        return {I: "item", G: "group"}.get(p, p)
    return dtype_id(p)


@pytest.mark.parametrize("name,dtype,variant", DEVICE_CELLS, ids=cell_id)
def test_dtypes_and_ops_on_device(name, dtype, variant):
    """Result dtype (add/multiply promote bool and small integers to
    int64/uint64, minimum/maximum keep it, logical ops give bool) and values,
    on the device: 1-D and the rows of a 2-D array (and its columns for
    segment_per_item), many index patterns, short and long segments."""
    skip_f64(dtype)
    a = gen(dtype, (1000,), name, seed=1)
    for idx in index_sets(1000, seed=1):
        assert check_variant(variant, name, a, idx) is not None
    b = gen(dtype, (7, 300), name, seed=2)
    for idx in index_sets(300, seed=2)[:4]:
        assert check_variant(variant, name, b, idx, axis=-1) is not None
    if variant == I:
        for idx in index_sets(7, seed=3)[:4]:
            assert check_variant(variant, name, b, idx, axis=0) is not None


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("name", list(UFUNCS))
def test_every_dtype_and_op_small_auto(name, dtype):
    """Every dtype x every op on small inputs with the default placement
    ("auto": the host path in C where it is faster), every axis of a 2-D
    input, many index patterns."""
    with placed("auto"):
        a = gen(dtype, (61,), name, seed=4)
        for idx in index_sets(61, seed=4):
            check(name, a, idx)
        b = gen(dtype, (5, 13), name, seed=5)
        for axis in (0, 1, -1):
            for idx in index_sets(b.shape[axis], seed=5)[:4]:
                check(name, b, idx, axis=axis)


# --------------------------------------------------------------------------
# small cases, both sides of placement
# --------------------------------------------------------------------------

SMALL = [("add", np.bool_), ("add", np.float32), ("add", np.int64), ("multiply", np.int8),
         ("maximum", np.uint64), ("minimum", np.float64), ("minimum", np.int16),
         ("logical_and", np.float32), ("logical_or", np.uint16)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,dtype", SMALL, ids=cell_id)
def test_index_forms_and_segment_rule(name, dtype, mode):
    """indices as a list, a tuple, int32/uint8/int64 arrays, NumPy integer
    scalars; repeated, non-increasing, single; empty indices give an empty
    result along the axis; zero-length other axes."""
    skip_f64(dtype)
    with placed(mode):
        a = gen(dtype, (61,), name, seed=3)
        for idx in index_sets(61, seed=3):
            check(name, a, idx)
            check(name, a, np.asarray(idx, dtype=np.int32))
        base = [0, 5, 5, 60, 3, 17, 2, 60]
        for idx in (base, tuple(base), np.array(base, np.int32), np.array(base, np.uint8),
                    np.array(base, np.int64), [np.int16(i) for i in base],
                    [5, 4, 3, 2, 1, 0], [60, 59, 58], [7]):
            check(name, a, idx)
        # empty indices: an empty result of NumPy's dtype
        for idx in ([], np.array([], np.int32), np.array([], np.uint8)):
            check(name, a, idx)
        b = gen(dtype, (6, 9, 11), name, seed=4)
        for axis in (0, 1, 2, -1):
            check(name, b, [], axis=axis)
            check(name, b, np.array([0, 3, 3, 1, 5], np.uint8), axis=axis)
        check(name, a[:0], [])  # empty input, empty indices
        # a zero-length axis that is not reduced
        check(name, gen(dtype, (0, 4), name), [0, 2, 1], axis=1)
        check(name, gen(dtype, (3, 0), name), [0, 1, 2, 0], axis=0)


SPELLING_DTYPE = {"add": np.float32, "multiply": np.int8, "minimum": np.int16,
                  "maximum": np.uint64, "logical_and": np.float32, "logical_or": np.uint16}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(SPELLINGS))
def test_op_spellings(name, mode):
    """op= as the ufunc's name, the reduction's name, or the ufunc itself."""
    dtype = SPELLING_DTYPE[name]
    a = gen(dtype, (200,), name, seed=5)
    b = gen(dtype, (5, 40), name, seed=6)
    idx = [0, 13, 13, 150, 40, 199, 7]
    with placed(mode):
        for op in SPELLINGS[name]:
            got = gp_reduceat(a, idx, op=op)
            assert_reduceat(got, name, a, idx, what="op=%r %s" % (op, np.dtype(dtype)))
            got = gp_reduceat(b, [0, 4, 2], axis=1, op=op)
            assert_reduceat(got, name, b, [0, 4, 2], axis=1,
                            what="op=%r %s axis=1" % (op, np.dtype(dtype)))
        # the default op is add
        c = gen(np.int64, (50,), "add", seed=7)
        assert_reduceat(gp_reduceat(c, [0, 10, 3]), "add", c, [0, 10, 3], what="default op")


DTYPE_ARG = [("add", np.int8, np.float32), ("add", np.int8, np.int16),
             ("multiply", np.int8, np.int16), ("add", np.float32, np.float64)]


@pytest.mark.parametrize("mode", MODES)
def test_dtype_argument(mode):
    """dtype= for add/multiply: the accumulation and result dtype, integer
    sums and products wrapping in it exactly as NumPy's (segments of up to
    a few hundred int8s overflow int16)."""
    with placed(mode):
        for name, src, dt in DTYPE_ARG:
            if np.dtype(dt) == np.float64 and not HAS_FP64:
                continue
            a = gen(src, (600,), name, seed=8)
            b = gen(src, (9, 300), name, seed=9)
            sets = index_sets(600, seed=8)[:2]
            if (src, dt) == (np.int8, np.int16):  # long segments too
                sets.append([0, 13, 5, 6, 300, 317, 599])
            for idx in sets:
                got = check(name, a, idx, dtype=dt)
                assert got.dtype == np.dtype(dt)
            check(name, b, short_segments(300, 30, seed=9), axis=1, dtype=dt)
            check(name, b, [0, 4, 4, 8, 1], axis=0, dtype=dt)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=dtype_id)
def test_nan_inf_and_signed_zeros(dtype, mode):
    """minimum/maximum propagate NaN (first, middle, last of a segment, and
    single-element segments); sums give NaN/inf exactly where NumPy does;
    NaN is true and -0.0 false for the logical ops."""
    skip_f64(dtype)
    rng = np.random.default_rng(10)
    a = rng.standard_normal(300).astype(dtype)
    a[[0, 37, 38, 99, 150, 151, 152, 299]] = np.nan
    a[[60, 61]] = [np.inf, -np.inf]  # inf + -inf: nan
    a[[200]] = np.inf
    a[[210, 211, 212]] = [-0.0, 0.0, -0.0]
    idx = [0, 1, 37, 38, 39, 60, 62, 99, 100, 150, 151, 152, 153, 200, 201,
           210, 213, 250, 299, 151, 210]
    b = rng.standard_normal((40, 17)).astype(dtype)
    b[rng.random((40, 17)) < 0.05] = np.nan
    b[3, :] = np.nan
    z = np.array([0.0, -0.0, np.nan, -0.0, 0.0, 1.0, -0.0], dtype)
    with placed(mode):
        names = (("add", "minimum", "maximum", "logical_and") if dtype == np.float32
                 else ("minimum", "maximum"))
        for name in names:
            check(name, a, idx)
            check(name, a, idx[::-1])
            check(name, b, [0, 3, 4, 20, 39, 2], axis=0)
            check(name, b, [0, 8, 8, 16, 3], axis=1)
            check(name, z, [0, 1, 2, 3, 5, 1, 6])
            check(name, z, [0, 3])


# --------------------------------------------------------------------------
# N-d, every axis, memory layouts
# --------------------------------------------------------------------------

ND_CASES = [("add", np.float32), ("maximum", np.uint64), ("logical_or", np.uint16),
            ("multiply", np.int8)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["C", "F", "T", "strided", "negstride"])
def test_nd_every_axis_and_layout(how, mode):
    """2-D and 3-D inputs along every axis (negative axes too), C and
    Fortran order, transposed views, a[:, ::2]-style strides, negative
    strides."""
    with placed(mode):
        for name, dtype in ND_CASES:
            for shape in ((9, 31), (4, 6, 35)):
                a = layout(lambda s: gen(dtype, s, name, seed=11), shape, how)
                assert a.shape == shape
                for axis in list(range(len(shape))) + [-1, -len(shape)]:
                    n = shape[axis]
                    for idx in index_sets(n, seed=12)[:4] + [[n - 1, 0, n // 2]]:
                        check(name, a, idx, axis=axis)


# --------------------------------------------------------------------------
# device Arrays and out=
# --------------------------------------------------------------------------

def test_device_arrays():
    """A device Array in, a device Array out (gpured.asnumpy / .get() bring
    it back), for C arrays and device views (transposed, stepped, negative
    strides), along each axis; empty indices; errors as for NumPy input."""
    x = gen(np.float32, (50, 64), "add", seed=13)
    d = gpured.to_device(x)
    for axis in (0, 1, -1):
        n = x.shape[axis]
        for idx in ([0, 7, 7, n - 1, 3], np.array([n - 1, 0], np.int32), []):
            r = check("add", d, idx, axis=axis)
            assert isinstance(r, gpured.Array)
            np.testing.assert_array_equal(r.get(), gpured.asnumpy(r))
    for view, host in ((d.T, x.T), (d[:, ::2], x[:, ::2]), (d[::-1], x[::-1]),
                       (d[::2, ::-3], x[::2, ::-3])):
        np.testing.assert_array_equal(view.get(), host)
        for axis in (0, 1):
            n = host.shape[axis]
            r = check("add", view, [0, n // 3, n // 3, n - 1, 1], axis=axis)
            assert isinstance(r, gpured.Array)
    y = gen(np.float32, (1000,), "minimum", seed=14)
    dy = gpured.to_device(y)
    for name in ("minimum", "maximum", "add"):
        for idx in index_sets(1000, seed=14)[:4]:
            r = check(name, dy, idx)
            assert isinstance(r, gpured.Array)
    check("logical_and", dy, np.array([0, 500, 250], np.int32))
    with pytest.raises(IndexError):
        gpured.reduceat(dy, [0, 1000])
    with pytest.raises(IndexError):
        gpured.reduceat(dy, [-1])


def test_out_device_array():
    """out= a device Array from gpured.empty / gpured.zeros: returned as
    itself, holding NumPy's answer."""
    x = gen(np.float32, (50, 64), "add", seed=15)
    d = gpured.to_device(x)
    idx = [0, 10, 10, 63, 5]
    o = gpured.empty((50, 5), np.float32)
    r = gpured.reduceat(d, idx, axis=1, out=o)
    assert r is o
    assert_reduceat(o, "add", x, idx, axis=1, what="device out= axis 1")
    o = gpured.zeros((3, 64), np.float32)
    assert gpured.reduceat(d, [0, 49, 20], axis=0, out=o, op="min") is o
    assert_reduceat(o, "minimum", x, [0, 49, 20], axis=0, what="device out= min axis 0")
    y = gen(np.bool_, (700,), "add", seed=16)
    o = gpured.zeros((4,), np.int64)  # NumPy's dtype for boolean sums
    assert gpured.reduceat(gpured.to_device(y), [0, 300, 299, 650], out=o) is o
    assert_reduceat(o, "add", y, [0, 300, 299, 650], what="device out= bool sum")
    y = gen(np.int8, (700,), "add", seed=16)
    o = gpured.empty((2,), np.int16)
    assert gpured.reduceat(gpured.to_device(y), [0, 350], dtype=np.int16, out=o) is o
    assert_reduceat(o, "add", y, [0, 350], dtype=np.int16, what="device out= dtype=int16")


@pytest.mark.parametrize("mode", MODES)
def test_out_numpy_array(mode):
    """out= a NumPy array of the result's shape and dtype: returned as
    itself, holding NumPy's answer."""
    with placed(mode):
        x = gen(np.float32, (12, 40), "add", seed=17)
        out = np.full((12, 4), -1.0, np.float32)
        assert gpured.reduceat(x, [0, 20, 5, 39], axis=1, out=out) is out
        assert_reduceat(out, "add", x, [0, 20, 5, 39], axis=1, what="out= axis 1")
        y = gen(np.bool_, (30, 7), "add", seed=18)
        out = np.zeros((5, 7), np.int64)
        assert gpured.reduceat(y, [0, 4, 4, 29, 10], axis=0, out=out) is out
        assert_reduceat(out, "add", y, [0, 4, 4, 29, 10], axis=0, what="out= bool sum")
        z = gen(np.uint64, (500,), "maximum", seed=19)
        out = np.zeros(6, np.uint64)
        assert gpured.reduceat(z, [0, 100, 99, 400, 401, 499], op="max", out=out) is out
        assert_reduceat(out, "maximum", z, [0, 100, 99, 400, 401, 499], what="out= max")
        z = gen(np.uint16, (500,), "logical_or", seed=19)
        out = np.zeros(3, np.bool_)
        assert gpured.reduceat(z, [0, 2, 1], op=np.logical_or, out=out) is out
        assert_reduceat(out, "logical_or", z, [0, 2, 1], what="out= logical_or")
        t = x.T  # non-contiguous input into out
        out = np.empty((2, 12), np.float32)
        assert gpured.reduceat(t, [3, 30], axis=0, out=out) is out
        assert_reduceat(out, "add", t, [3, 30], axis=0, what="out= transposed input")


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_errors_like_numpy(mode):
    """IndexError for an index outside [0, len) (negative included) on the
    host and device paths, TypeError for a 0-d input, ValueError for several
    axes, AxisError for a bad axis; an unknown variant or op is refused."""
    a = gen(np.float32, (10,), "add", seed=20)
    b = gen(np.int64, (4, 5), "add", seed=21)
    with placed(mode):
        for idx in ([10], [-1], [0, 10], [3, -2], [2 ** 40], np.array([11], np.int32),
                    np.array([-3], np.int32), np.array([200], np.uint8)):
            for name in ("add", "maximum"):
                assert raises_like_numpy(UFUNCS[name], a, idx) is IndexError
        assert raises_like_numpy(np.add, b, [0, 5], axis=1) is IndexError
        assert raises_like_numpy(np.add, b, [4], axis=0) is IndexError
        assert raises_like_numpy(np.add, b, [-1], axis=-1) is IndexError
        assert raises_like_numpy(np.add, a[:0], [0]) is IndexError
        # 0-d input
        for z in (np.array(5.0, np.float32), np.array(3, np.int64)):
            assert raises_like_numpy(np.add, z, [0]) is TypeError
            assert raises_like_numpy(np.minimum, z, [0]) is TypeError
        # several axes (NumPy: ValueError "reduceat does not allow multiple axes")
        for arr in (b, gen(np.int64, (2, 3, 4), "add")):
            for axis in (None, (), (0, 1)):
                raises_like_numpy(np.add, arr, [0], accept=(ValueError, TypeError), axis=axis)
        # a bad axis: AxisError (a ValueError and an IndexError)
        for arr, axis in ((b, 2), (b, -3), (a, 1), (a, -2)):
            assert raises_like_numpy(np.add, arr, [0], axis=axis) is np.exceptions.AxisError
            with pytest.raises(np.exceptions.AxisError):
                gpured.reduceat(arr, [0], axis=axis, op="max")
        # an unknown variant / op
        with pytest.raises(ValueError):
            gpured.reduceat(a, [0, 3], variant="no_such_variant")
        with pytest.raises(ValueError):
            gpured.reduceat(b, [0, 3], axis=1, variant="no_such_variant")
        for op in ("subtract", "mean", np.subtract):
            with pytest.raises((ValueError, TypeError)):
                gpured.reduceat(a, [0, 3], op=op)
        # and after all that, a good call still gives NumPy's answer
        check("add", a, [0, 3, 3, 9])
    d = gpured.to_device(b)
    with pytest.raises(IndexError):
        gpured.reduceat(d, [0, 5], axis=1)
    with pytest.raises(np.exceptions.AxisError):
        gpured.reduceat(d, [0], axis=2)
    with pytest.raises(TypeError):
        gpured.reduceat(gpured.to_device(np.array(2.0, np.float32)), [0])
    check("add", d, [0, 4, 1], axis=1)


@pytest.mark.parametrize("mode", MODES)
def test_axis_forms_numpy_accepts(mode):
    """Axis forms NumPy's reduceat takes although they look like errors:
    axis=None on a 1-D input (all axes = the one axis), a one-element tuple,
    a NumPy integer."""
    a = gen(np.float32, (10,), "add", seed=22)
    b = gen(np.int16, (4, 5), "minimum", seed=23)
    c = gen(np.uint16, (4, 5), "logical_or", seed=23)
    with placed(mode):
        got = gp_reduceat(a, [0, 4, 2], axis=None)
        assert_reduceat(got, "add", a, [0, 4, 2], axis=None, what="1-D axis=None")
        got = gp_reduceat(b, [0, 3], axis=(1,), op="min")
        assert_reduceat(got, "minimum", b, [0, 3], axis=(1,), what="axis=(1,)")
        got = gp_reduceat(c, [0, 3], axis=np.int64(0), op="any")
        assert_reduceat(got, "logical_or", c, [0, 3], axis=np.int64(0),
                        what="axis=np.int64(0)")


# --------------------------------------------------------------------------
# the two kernels
# --------------------------------------------------------------------------

def check_variant(variant, name, a, idx, axis=0, **kw):
    """variant=segment_per_group may refuse a layout whose reduced axis is
    not the innermost contiguous one (ValueError); otherwise NumPy's answer."""
    try:
        got = gp_reduceat(a, idx, axis=axis, op=name, variant=variant, **kw)
    except ValueError:
        if variant != "segment_per_group":
            raise
        ax = axis % a.ndim
        innermost = ax == a.ndim - 1 and a.flags.c_contiguous
        assert not innermost, "segment_per_group refused a C-contiguous innermost-axis case"
        return None
    if isinstance(a, gpured.Array):
        assert isinstance(got, gpured.Array), "device input gave %r" % type(got)
    else:
        assert type(got) is np.ndarray, "NumPy input gave %r" % type(got)
    assert_reduceat(got, name, a, idx, axis=axis,
                    what=describe(name, a, idx, dict(axis=axis, variant=variant, **kw)))
    return got


VARIANT_CASES = [("add", np.float32), ("add", np.int32)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_long_segments(variant):
    """Few long segments: 300_000 elements with 7 random sorted indices,
    rows of a (37, 5000) array; segment_per_item also down columns."""
    rng = np.random.default_rng(24)
    for name, dtype in VARIANT_CASES:
        a = gen(dtype, (300_000,), name, seed=24)
        idx = np.sort(rng.choice(300_000, 7, replace=False))
        check_variant(variant, name, a, idx)
        check_variant(variant, name, a, np.concatenate([[0], idx]))
        check_variant(variant, name, a, [0])  # one segment: the whole array
        b = gen(dtype, (37, 5000), name, seed=25)
        idx2 = np.sort(rng.choice(5000, 7, replace=False))
        check_variant(variant, name, b, idx2, axis=1)
        check_variant(variant, name, b, idx2.astype(np.int32), axis=-1)
    c = gen(np.float32, (5000, 37), "add", seed=26)  # long segments down columns
    got = check_variant(variant, "add", c, np.sort(rng.choice(5000, 7, replace=False)), axis=0)
    if variant == "segment_per_item":
        assert got is not None


@pytest.mark.parametrize("order", ["sorted", "unsorted"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_many_short_segments(variant, order):
    """Many short segments: 100_000 elements, 20_000 random indices,
    sorted and unsorted: random adjacent pairs swapped, so about a third of
    the results take the single-element rule (a[indices[i]]) while the
    segments stay short (fully shuffled indices would make O(n) segments
    of O(n) elements: slow on NumPy's side too)."""
    rng = np.random.default_rng(27)
    idx = np.sort(rng.integers(0, 100_000, 20_000))
    if order == "unsorted":
        idx = unsort(idx, rng)
    for name, dtype in VARIANT_CASES:
        a = gen(dtype, (100_000,), name, seed=27)
        check_variant(variant, name, a, idx)
        check_variant(variant, name, a, idx.astype(np.int32))
    b = gen(np.float32, (20, 5000), "add", seed=28)
    idx2 = np.sort(rng.integers(0, 5000, 1000))
    if order == "unsorted":
        idx2 = unsort(idx2, rng)
    check_variant(variant, "add", b, idx2, axis=1)


@pytest.mark.parametrize("wg_size", WG_SIZES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_wg_size(variant, wg_size):
    """wg_size= 32..256: segments shorter and longer than a work-group
    (segment_per_item: short segments, one result per work-item)."""
    rng = np.random.default_rng(29)
    a = gen(np.float32, (50_001,), "add", seed=29)
    long_idx = np.sort(rng.choice(50_001, 33, replace=False))
    short_idx = np.sort(rng.integers(0, 50_001, 3000))
    sets = [short_idx, unsort(short_idx, rng)]
    if variant == G:
        sets += [long_idx, [0], [50_000, 0, 1, 257, 256, 255]]
    for idx in sets:
        check_variant(variant, "add", a, idx, wg_size=wg_size)
    b = gen(np.float32, (37, 777), "add", seed=30)
    idx = ([0, 31, 32, 33, 64, 65, 500, 776, 2] if variant == G
           else short_segments(777, 100, seed=30))
    check_variant(variant, "add", b, idx, axis=1, wg_size=wg_size)


@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_other_layouts(variant):
    """Segments not along the innermost contiguous axis (down columns, a
    transposed view, a[:, ::2], negative strides, Fortran order):
    segment_per_item gives NumPy's answer; segment_per_group gives it too
    or refuses with ValueError."""
    x = gen(np.float32, (300, 257), "add", seed=31)
    y = gen(np.int32, (64, 90), "add", seed=32)
    answered = 0
    for name, base in (("add", x), ("add", y)):
        for arr in (base, base.T, base[:, ::2], base[::-1, ::-1], np.asfortranarray(base)):
            for axis in (0, 1):
                n = arr.shape[axis]
                idx = [0, n // 7, n // 7, n // 2, 3, n - 1]
                if check_variant(variant, name, arr, idx, axis=axis) is not None:
                    answered += 1
    # the C-contiguous innermost axis is every variant's case
    assert answered >= 2


def test_variants_device_arrays():
    """Both kernels on device Arrays: the result stays on the device."""
    x = gen(np.float32, (64, 3000), "add", seed=33)
    d = gpured.to_device(x)
    idx = short_segments(3000, 200, seed=33)
    for variant in VARIANTS:
        r = gp_reduceat(d, idx, axis=1, variant=variant)
        assert isinstance(r, gpured.Array)
        assert_reduceat(r, "add", x, idx, axis=1, what="device variant=%s" % variant)
        r = gp_reduceat(d, [0, 2000, 5], axis=1, op=np.add, variant=variant, wg_size=64)
        assert isinstance(r, gpured.Array)
        assert_reduceat(r, "add", x, [0, 2000, 5], axis=1,
                        what="device variant=%s wg_size=64" % variant)
    r = gp_reduceat(d, [0, 10, 63], axis=0, variant="segment_per_item")
    assert_reduceat(r, "add", x, [0, 10, 63], axis=0, what="device columns segment_per_item")


# --------------------------------------------------------------------------
# device offsets, split segments, explain/timeit
# --------------------------------------------------------------------------

@pytest.mark.parametrize("idt", [np.int64, np.int32, np.uint8, np.bool_], ids=dtype_id)
def test_device_offsets(idt):
    """Offsets already on the device stay there: cast to int64 on the device
    where they are another dtype or a view, checked there (IndexError as
    NumPy's), host or device data alike."""
    x = gen(np.float32, (5, 300), "add", seed=40)
    idx = np.array([0, 3, 3, 1, 200, 250], idt) if idt is not np.bool_ \
        else np.array([False, True, True])
    d = gpured.to_device(x)
    di = gpured.to_device(idx)
    got = gp_reduceat(d, di, axis=1)
    assert isinstance(got, gpured.Array)
    assert_reduceat(got, "add", x, idx, axis=1, what="device offsets %s" % idx.dtype)
    got = gp_reduceat(x, di, axis=1, op="max")  # host data, device offsets
    assert_reduceat(got, "maximum", x, idx, axis=1, what="host data, device offsets")
    # a strided view of the offsets, and one at an offset in its buffer
    big = gpured.to_device(np.repeat(np.asarray(idx), 2))
    got = gp_reduceat(d, big[::2], axis=1, op="min")
    assert_reduceat(got, "minimum", x, idx, axis=1, what="strided device offsets")
    tail = gpured.to_device(np.concatenate([np.asarray(idx), np.asarray(idx)]))
    got = gp_reduceat(d, tail[len(idx):], axis=1, op="min")
    assert_reduceat(got, "minimum", x, idx, axis=1, what="device offsets at an offset")


def test_device_offsets_errors():
    d = gpured.to_device(np.arange(10, dtype=np.float32))
    for bad in ([0, 4, 10], [0, -1], [9, 10**6]):
        with pytest.raises(IndexError) as e_np:
            np.add.reduceat(np.arange(10, dtype=np.float32), bad)
        with pytest.raises(IndexError) as e_gr:
            gpured.reduceat(d, gpured.to_device(np.array(bad)))
        assert str(e_gr.value) == str(e_np.value)
    for idt in (np.float64, np.uint64):  # NumPy's safe rule for index arrays
        with pytest.raises(TypeError):
            np.add.reduceat(np.arange(10.0), np.array([0, 3], idt))
        with pytest.raises(TypeError):
            gpured.reduceat(d, gpured.to_device(np.array([0, 3], idt)))
    with pytest.raises(ValueError):
        gpured.reduceat(d, gpured.to_device(np.zeros((2, 2), np.int64)))


@pytest.mark.parametrize("name", ["add", "maximum", "logical_or"])
@pytest.mark.parametrize("groups", [2, 5])
def test_split_segments(name, groups):
    """Long segments split among several work-groups (groups=), partial
    states merged by the reduction's second pass: every alignment of the
    segment starts, one-element and repeated segments among them."""
    dt = np.float64 if HAS_FP64 else np.float32
    for dtype in (dt, np.int8):
        x = gen(dtype, (3, 4099), name, seed=41)
        idx = [0, 1, 2, 3, 1000, 999, 1001, 1001, 2047, 4000, 4098]
        for vw in (1, 2, 4):
            check(name, x, idx, axis=1, variant="segment_per_group",
                  wg_size=32, vw=vw, groups=groups)


def test_explain_and_timeit():
    """explain/timeit take reduceat (its op as ufunc=): the plan says which
    kernel, the placement and why; timeit's result is NumPy's answer."""
    x = gen(np.float32, (100000,), "add", seed=42)
    idx = [0, 5, 60000]
    with placed("current"):
        e = gpured.explain("reduceat", x, indices=idx, ufunc="max")
        assert e["kernel"] in ("gr_segments_group", "gr_segments_items")
        assert e["variant"] in VARIANTS and e["placement"] == "device"
        e = gpured.explain("reduceat", x, indices=idx, variant="segment_per_group",
                           wg_size=32, groups=3)
        assert e["kernel"] == "gr_segments_group" and e["groups"] == 3
        assert e["passes"] == 2 and "split" in e["why"]
    t = gpured.timeit("reduceat", gpured.to_device(x), indices=idx, reps=2)
    assert t["seconds"] > 0 and len(t["times"]) == 2
    assert_reduceat(t["result"], "add", x, idx, what="timeit's result")
    with placed("auto"):
        e = gpured.explain("reduceat", x[:100], indices=[0, 50])
        assert e["placement"] == "host" and "host path" in e["placement_why"]


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint64], ids=dtype_id)
def test_host_path_matches_device(dtype):
    """The host path (small NumPy inputs) and the device give the same
    results (float32 sums accumulate in float64 on both)."""
    skip_f64(dtype)
    x = gen(dtype, (7, 257), "add", seed=43)
    idx = [0, 3, 3, 1, 100, 256]
    for name in ("add", "minimum", "logical_and"):
        with placed("auto"):
            assert gpured.explain("reduceat", x, indices=idx, axis=1,
                                  ufunc=name)["placement"] == "host"
            h = gp_reduceat(x, idx, axis=1, op=name)
        with placed("current"):
            g = gp_reduceat(x, idx, axis=1, op=name)
        np.testing.assert_array_equal(h, g, strict=True)
        assert_reduceat(h, name, x, idx, axis=1)


def test_warp_variant():
    """segment_per_warp (NVIDIA: a warp, or items= lanes of one, per
    segment, shuffles through inline PTX) at every vector width, dtypes
    whose states are one and two words, segments from one element to
    thousands."""
    if not gpured.get_device().get("nvidia_ptx"):
        # elsewhere the variant is refused with the reason
        with pytest.raises(gpured.VariantUnavailable, match="warps"):
            gpured.reduceat(np.ones(100, np.float32), [0, 50], variant="segment_per_warp")
        return
    for dtype, name in ((np.float32, "add"), (np.float64, "add"),
                        (np.int8, "add"), (np.int32, "maximum"),
                        (np.bool_, "logical_and")):
        skip_f64(dtype)
        x = gen(dtype, (3, 20000), name, seed=44)
        idx = np.concatenate([[0, 1, 2, 3, 5, 5, 4], short_segments(20000, 300, seed=44)[1:]])
        idx = np.sort(idx[idx < 20000]) if name != "add" else idx[idx < 20000]
        for vw in (1, 2, 4):
            check(name, x, idx, axis=1, variant="segment_per_warp", vw=vw)
            check(name, gpured.to_device(x), gpured.to_device(idx), axis=1,
                  variant="segment_per_warp", vw=vw, wg_size=64)
        # part of a warp per segment (items: lanes), a warp's segments
        # running past the last one
        for lanes in (2, 4, 8, 16):
            check(name, x[:, :2011], idx[idx < 2011], axis=1,
                  variant="segment_per_warp", items=lanes, vw=1 + (lanes == 8))
    with pytest.raises(ValueError, match="power of two"):
        gpured.reduceat(np.ones(100, np.float32), [0, 50],
                        variant="segment_per_warp", items=3)


def test_many_host_offsets():
    """More than 1 MiB of host offsets: uploaded from the caller's memory
    (fewer are copied and uploaded without a wait); both agree with NumPy."""
    x = gen(np.int32, (600000,), "add", seed=45)
    idx = short_segments(600000, 150000, seed=45)
    with placed("current"):
        check("add", x, idx)
        check("maximum", x, idx[:1000])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_host_short_float_sums(dtype):
    """Short float segments on the host path (a loop of their own: float32
    in double, float64 with TwoSum): NumPy's answer within the bound, rows
    of a 2-D array, repeated and decreasing offsets, infinities."""
    x = gen(dtype, (5, 400), "add", seed=46)
    x[2, 17] = np.inf
    x[3, 40:42] = [np.inf, -np.inf]
    idx = np.concatenate([[0, 3, 3, 1], np.arange(10, 400, 7)])
    with placed("auto"):
        assert gpured.explain("reduceat", x, indices=idx, axis=1)["placement"] == "host"
        check("add", x, idx, axis=1)
