"""NumPy's ``where=`` on gpured's reductions: sum, prod, min, max, all, any,
mean, nansum, nanprod, nanmin, nanmax, nanmean, against NumPy 2.x.

What is checked, each on both sides of placement (the host path, forced by
a device call cost no array can amortize, and the device, forced by
``placement("current")``):

* every function x dtype (bool, int8, int32, int64, uint8, uint64, float16,
  float32, float64) with random masks: full reductions, axis reductions of
  2-D and 3-D arrays (int, negative, tuples, ``()``), keepdims, one slice
  all masked and one all kept, small (7, 100) and device-sized (2**20)
  inputs;
* non-contiguous inputs and masks (steps, transposes, negative strides,
  Fortran order);
* broadcast masks (a row, a column, scalar False/True, 0-d arrays), list
  and Python-scalar masks (converted as ``np.asarray(where, dtype=bool)``);
* NaN and inf under masks (``sum`` propagates NaN only where it is kept,
  ``nan*`` skip the kept NaNs), the sign of zero sums (a mask starts the
  fold at the identity +0.0), the mean of integers (float64), all-masked
  slices (0, 1, True, False, ``initial``, NaN with NumPy's "Mean of empty
  slice" RuntimeWarning), empty arrays;
* ``initial=`` (min/max/nanmin/nanmax need it with a mask), ``dtype=``,
  ``out=`` (NumPy and device outs), device Arrays with device and host
  masks, device views;
* every variant ``gpured.variants()`` offers for sum and min on float32
  device-sized inputs, and the ``wg_size``/``vw`` knobs;
* errors: a non-bool NumPy mask (TypeError: NumPy's 'safe' cast rule), a
  mask that does not broadcast (ValueError), min/max/nanmin/nanmax with a
  mask and no ``initial`` (ValueError: "does not have an identity").

Integer, bool, min/max and all/any results must be NumPy's bit for bit;
floating-point sums, means and products are compared with the exact value
(long double), allowing twice NumPy's own error or the pairwise-summation
bound (products: a 4*sqrt(n) random-walk bound), whichever is larger --
gpured accumulates float32 in float64, NumPy in float32.  Non-finite
results must be NumPy's, position by position.

float16 goes through gpured/_half.py (widened to float32 where a mask is
given): a masked call must give NumPy's answer (or refuse it as the
unmasked call would).
"""
import contextlib
import functools
import math
import warnings
import zlib

import numpy as np
import pytest

import gpured

try:
    HAS_FP64 = bool(gpured.get_device()["fp64"])
except Exception:  # pragma: no cover - the tests will say why
    HAS_FP64 = True

FUNCS = ["sum", "prod", "min", "max", "all", "any", "mean",
         "nansum", "nanprod", "nanmin", "nanmax", "nanmean"]
MINMAX = ("min", "max", "nanmin", "nanmax")
NO_INITIAL = ("all", "any", "mean", "nanmean")  # no initial= in NumPy
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64,
          np.float16, np.float32, np.float64]
FLOATS = [np.float32] + ([np.float64] if HAS_FP64 else [])
PATHS = ["host", "device"]
BIG = 1 << 20


def dtype_id(dt):
    return np.dtype(dt).name


def base_of(func):
    return func[3:] if func.startswith("nan") else func


# --------------------------------------------------------------------------
# where a call runs
# --------------------------------------------------------------------------

@contextlib.contextmanager
def on(path):
    """``"device"``: placement("current"), every NumPy array on the current
    device.  ``"host"``: placement("auto") with a device call cost no array
    amortizes, every NumPy array on the host path (device Arrays and knobs
    still run on the device)."""
    old = gpured.placement("current" if path == "device" else "auto")
    saved = None
    try:
        if path == "host":
            saved = gpured.rates()
            gpured.set_rates(device_call_us=1e12)
        yield
    finally:
        if saved is not None:
            gpured.set_rates(host_call_us=saved["host_call_us"],
                             device_call_us=saved["device_call_us"],
                             host_gbs=saved["host_gbs"], device_gbs=saved["device_gbs"])
        gpured.placement(old)


@functools.lru_cache(maxsize=None)
def gpured_takes(dtype):
    """Whether gpured reduces ``dtype`` at all (without a mask)."""
    try:
        gpured.sum(np.zeros(3, dtype))
    except TypeError:
        return False
    return True


def on_path(path, host_dtypes, device_dtypes=(np.float32,)):
    """The dtypes a test runs on a path.  The device compiles a program per
    (op, dtype, kernel shape, knobs): about 1.1 s each with PoCL on a 2-core
    machine from a cold cache, so device-side tests keep to float32 (and a
    few cells), whose programs the cross test has built; the host path (no
    builds) takes every dtype."""
    return [d for d in (host_dtypes if path == "host" else device_dtypes)
            if HAS_FP64 or np.dtype(d) != np.float64]


def skip_f64(dtype):
    if np.dtype(dtype) == np.float64 and not HAS_FP64:
        pytest.skip("device without fp64: float64 is refused there (tested elsewhere)")


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------

def rng_for(*parts):
    return np.random.default_rng(zlib.crc32(repr(tuple(str(p) for p in parts)).encode()))


def gen(func, dtype, shape, seed=0, nan_frac=None):
    """C-contiguous data of ``dtype``/``shape`` suited to ``func``.

    sum/mean/min/max: integers over the type's whole range (int64/uint64
    sums wrap, small types tie), floats of mixed sign with magnitudes
    1e-2..1e2.  prod: small odd integers and a few 2s (products wrap without
    collapsing to 0), floats in 1 +- 1/256 with random sign.  all: mostly
    nonzero, any: mostly zero (so masks change the answer).  nan*: floats
    with NaN at ``nan_frac`` (default 0.2)."""
    dt = np.dtype(dtype)
    rng = rng_for("where", dt.name, shape, func, seed)
    n = int(np.prod(shape, dtype=np.int64))
    base = base_of(func)
    if dt.kind == "b":
        p = {"all": 0.97, "any": 0.03, "prod": 0.9}.get(base, 0.5)
        flat = rng.random(n) < p
    elif base in ("all", "any"):
        nz = rng.random(n) < (0.97 if base == "all" else 0.03)
        if dt.kind in "iu":
            flat = np.where(nz, rng.integers(1, 100, n), 0)
        else:
            flat = np.where(nz, rng.standard_normal(n),
                            np.where(rng.random(n) < 0.5, 0.0, -0.0))
            flat[nz & (rng.random(n) < 0.01)] = np.nan  # NaN is true
    elif base == "prod":
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
    flat = np.asarray(flat).astype(dt)
    if dt.kind == "f" and func.startswith("nan"):
        flat[rng.random(n) < (0.2 if nan_frac is None else nan_frac)] = np.nan
    elif dt.kind == "f" and nan_frac:
        flat[rng.random(n) < nan_frac] = np.nan
    return np.ascontiguousarray(flat.reshape(shape))


def axes_of(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(sorted(x % ndim for x in axis))
    return (axis % ndim,)


def gen_mask(shape, axis=None, seed=0, p=0.6):
    """A random bool mask (about ``p`` kept); for an axis reduction, the
    first slice all masked and the second all kept."""
    rng = rng_for("where-mask", shape, axis, seed)
    m = rng.random(shape) < p
    if len(shape) and axis is not None:
        red = axes_of(axis, len(shape))
        kept = [d for d in range(len(shape)) if d not in red]
        if kept:
            first = tuple(0 if d in kept else slice(None) for d in range(len(shape)))
            m[first] = False
            if all(shape[d] > 1 for d in kept):
                second = tuple(1 if d in kept else slice(None) for d in range(len(shape)))
                m[second] = True
    return m


def initial_for(func, dtype):
    """An ``initial`` that lies among the data (so it wins in some slices)."""
    dt = np.dtype(dtype)
    is_min = base_of(func) == "min"
    if dt.kind == "b":
        return True if is_min else False
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if dt.kind == "u":
            return int(info.max // 4) if is_min else int(info.max // 8)
        return int(info.max // 4) if is_min else int(info.min // 4)
    return 0.5 if is_min else -0.5


def with_initial(func, dtype, kw):
    """min/max and their nan forms need ``initial`` with a mask."""
    if func in MINMAX and "initial" not in kw:
        kw = dict(kw, initial=initial_for(func, dtype))
    return kw


# --------------------------------------------------------------------------
# the comparison
# --------------------------------------------------------------------------

def host(x):
    return x.get() if isinstance(x, gpured.Array) else x


def np_call(func, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return getattr(np, func)(a, **kw)


def gp_call(func, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return getattr(gpured, func)(a, **kw)


def describe(func, a, kw):
    def one(v):
        if isinstance(v, gpured.Array):
            return "<device %s %s strides=%s>" % (v.dtype, v.shape, v.strides)
        if isinstance(v, np.ndarray) and v.ndim:
            return "<%s %s strides=%s>" % (v.dtype, v.shape, v.strides)
        if isinstance(v, list) and len(v) > 8:
            return "<list of %d>" % len(v)
        return repr(v)
    return "gpured.%s(%s, %s)" % (func, one(a), ", ".join(
        "%s=%s" % (k, one(v)) for k, v in kw.items()))


def verify(func, a, what=None, **kw):
    """gpured.<func>(a, **kw) must be numpy.<func>(host a, **host kw):
    the same exception type where NumPy raises, else the same type (a
    gpured.Array for a device ``a``; ``out`` itself where given), dtype,
    shape and values (see the module docstring).  Returns NumPy's result
    (None where it raised)."""
    what = what or describe(func, a, kw)
    a_h = host(a)
    hkw = {k: host(v) for k, v in kw.items()}
    out = kw.get("out")
    if out is not None:
        hkw["out"] = np.zeros(out.shape, out.dtype)
    try:
        want = np_call(func, a_h, **hkw)
    except Exception as e:  # NumPy refuses it: gpured must, with the same type
        with pytest.raises(type(e)):
            gp_call(func, a, **kw)
        return None
    if not gpured_takes(a_h.dtype):
        with pytest.raises(TypeError):
            gp_call(func, a, **kw)
        return None
    got = gp_call(func, a, **kw)
    if out is not None:
        assert got is out, "%s: did not return out" % what
    elif isinstance(a, gpured.Array):
        assert isinstance(got, gpured.Array), "%s: %s, not a device Array" % (
            what, type(got).__name__)
    else:
        assert type(got) is type(want), "%s: type %s, NumPy %s" % (
            what, type(got).__name__, type(want).__name__)
    got_h = np.asarray(host(got))
    want_h = np.asarray(want)
    assert got_h.dtype == want_h.dtype, "%s: dtype %s, NumPy %s" % (
        what, got_h.dtype, want_h.dtype)
    assert got_h.shape == want_h.shape, "%s: shape %s, NumPy %s" % (
        what, got_h.shape, want_h.shape)
    if want_h.dtype.kind != "f" or base_of(func) in ("min", "max", "all", "any"):
        np.testing.assert_array_equal(got_h, want_h, err_msg=what, strict=True)
        return want
    assert_float_close(func, a_h, hkw, got_h, want_h, what)
    return want


def assert_float_close(func, a, kw, got, want, what):
    with np.errstate(all="ignore"):
        _assert_float_close(func, a, kw, got, want, what)


def _assert_float_close(func, a, kw, got, want, what):
    finite = np.isfinite(want)
    # non-finite results: NumPy's, position by position (NaN matches NaN)
    np.testing.assert_array_equal(got[~finite], want[~finite],
                                  err_msg=what + " (non-finite positions)")
    if not finite.any():
        return
    base = base_of(func)
    axis, keepdims = kw.get("axis"), kw.get("keepdims", False)
    where = kw.get("where", True)
    w = np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
    eps = float(np.finfo(want.dtype).eps)
    x = a.astype(np.longdouble)
    if func.startswith("nan") and a.dtype.kind == "f":
        valid = ~np.isnan(x)
        x = np.where(valid, x, 1.0 if base == "prod" else 0.0)
        counted = w & valid
    else:
        counted = w
    red = dict(axis=axis, keepdims=keepdims)
    n = np.sum(counted, dtype=np.int64, **red)
    nmax = max(int(np.max(n)) if np.size(n) else 0, 1)
    initial = kw.get("initial")
    if base in ("sum", "mean"):
        exact = np.sum(x, where=w, **red)
        mag = np.sum(np.abs(x), where=w, **red)
        if initial is not None:
            exact = exact + np.longdouble(initial)
            mag = mag + abs(np.longdouble(initial))
        bound = (math.ceil(math.log2(nmax)) + 2) * eps * mag
        if base == "mean":
            exact = exact / n
            bound = bound / np.maximum(n, 1)
    elif base == "prod":
        exact = np.prod(x, where=w, **red)
        if initial is not None:
            exact = exact * np.longdouble(initial)
        bound = (4 * math.sqrt(nmax) + 2) * eps * np.abs(exact)
    else:  # pragma: no cover
        raise AssertionError(func)
    want_l = want.astype(np.longdouble)
    got_l = got.astype(np.longdouble)
    exact = np.broadcast_to(exact, want.shape)
    bound = np.broadcast_to(bound, want.shape)
    tol = np.maximum(2 * np.abs(want_l - exact), bound) + 2 * eps * np.abs(exact)
    err = np.abs(got_l - exact)
    bad = finite & ~(err <= tol)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        raise AssertionError(
            "%s: %d element(s) outside the accuracy bound; first at %s: got %r, "
            "numpy %r, exact %r, err %.3g > tol %.3g" % (
                what, int(bad.sum()), idx, got[idx], want[idx], exact[idx],
                float(err[idx]), float(tol[idx])))


# --------------------------------------------------------------------------
# every function x dtype, both paths
# --------------------------------------------------------------------------

HOST_CASES = [((7,), None), ((100,), None), ((1 << 16,), None), ((5, 7, 3), None),
              ((5, 7, 3), 1), ((5, 7, 3), (0, 2)), ((100, 33), 0), ((100, 33), -1)]
DEVICE_CASES = [((7,), None), ((BIG,), None), ((5, 7, 3), (0, 2)),
                ((300, 129), 0), ((300, 129), 1)]
# The device's cells (see on_path): every function on float32, sum on every
# dtype, and a few more integer/bool cells.
DEVICE_CELLS = ([(f, np.float32) for f in FUNCS]
                + [("sum", d) for d in DTYPES if d is not np.float32]
                + [("min", np.int64), ("max", np.uint8), ("all", np.bool_), ("any", np.int8),
                   ("prod", np.int32), ("mean", np.int64), ("nanmax", np.float64),
                   ("nanmean", np.float64)])
CROSS = ([(f, d, "host") for f in FUNCS for d in DTYPES]
         + [(f, d, "device") for f, d in DEVICE_CELLS])


@pytest.mark.parametrize("func,dtype,path", CROSS,
                         ids=["%s-%s-%s" % (f, dtype_id(d), p) for f, d, p in CROSS])
def test_every_function_and_dtype(func, dtype, path):
    skip_f64(dtype)
    cases = HOST_CASES if path == "host" else DEVICE_CASES
    with on(path):
        for i, (shape, axis) in enumerate(cases):
            a = gen(func, dtype, shape, seed=i)
            m = gen_mask(shape, axis, seed=i)
            kw = with_initial(func, dtype, dict(axis=axis, where=m))
            if i % 3 == 1:
                kw["keepdims"] = True
            verify(func, a, **kw)


# --------------------------------------------------------------------------
# axes and keepdims
# --------------------------------------------------------------------------

AXES_3D = [None, 0, 1, 2, -1, -3, (0,), (0, 2), (2, 0), (1, 2), (0, 1), (-1, 0), (0, 1, 2), ()]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", FUNCS)
def test_axes_and_keepdims(func, path):
    shape = (6, 5, 9)
    with on(path):
        for dtype in on_path(path, (np.float32, np.int32)):
            a = gen(func, dtype, shape, seed=11)
            for axis in AXES_3D:
                m = gen_mask(shape, axis if axis != () else None, seed=12)
                for keepdims in (False, True):
                    verify(func, a, **with_initial(func, dtype, dict(
                        axis=axis, where=m, keepdims=keepdims)))


# --------------------------------------------------------------------------
# layouts: of the data and of the mask
# --------------------------------------------------------------------------

def layout(x_of_shape, shape, how):
    """``x_of_shape(s)`` laid out as ``how`` with logical shape ``shape``."""
    if how == "C":
        return x_of_shape(shape)
    if how == "F":
        return np.asfortranarray(x_of_shape(shape))
    if how == "T":
        return x_of_shape(shape[::-1]).T
    if how == "strided":  # every axis stepped (the last by 3)
        big = x_of_shape(tuple(2 * s + 1 for s in shape[:-1]) + (3 * shape[-1],))
        v = big[tuple(slice(1, None, 2) for _ in shape[:-1]) + (slice(None, None, 3),)]
        assert v.shape == shape
        return v
    if how == "negstride":  # first and last axes reversed
        return np.flip(x_of_shape(shape), axis=(0, len(shape) - 1))
    if how == "byteswap":
        x = x_of_shape(shape)
        return x.astype(x.dtype.newbyteorder()) if x.dtype.itemsize > 1 else x
    if how == "broadcast":  # zero strides on the first axis
        return np.broadcast_to(x_of_shape((1,) + shape[1:]), shape)
    raise ValueError(how)


LAYOUTS = ["F", "T", "strided", "negstride", "byteswap", "broadcast"]
LAYOUT_FUNCS = ["sum", "prod", "min", "max", "all", "any", "mean", "nansum", "nanmax",
                "nanmean"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", LAYOUT_FUNCS)
def test_non_contiguous(func, path):
    with on(path):
        for dtype in on_path(path, (np.float32, np.int64)):
            for shape, axis in (((40, 33), None), ((40, 33), 0), ((40, 33), 1),
                                ((6, 7, 8), (0, 2)), ((6, 7, 8), 1)):
                for how in LAYOUTS:
                    a = layout(lambda s: gen(func, dtype, s, seed=3), shape, how)
                    # the mask in its own layout: C, and the same as the data
                    for mhow in ("C", how):
                        m = layout(lambda s: gen_mask(s, seed=4), shape, mhow)
                        verify(func, a, what="%s %s data, %s mask, axis=%s" % (
                            describe(func, a, {}), how, mhow, axis),
                            **with_initial(func, dtype, dict(axis=axis, where=m)))


# --------------------------------------------------------------------------
# broadcast, list and scalar masks
# --------------------------------------------------------------------------

def mask_forms(shape):
    """(name, mask) pairs that broadcast against ``shape`` (2-D)."""
    rows, cols = shape
    rng = rng_for("where-forms", shape)
    row = rng.random(cols) < 0.5
    col = rng.random((rows, 1)) < 0.5
    full = rng.random(shape) < 0.5
    return [
        ("row", row),
        ("row 1xN", row[None, :]),
        ("column Mx1", col),
        ("scalar False", False),
        ("scalar True", True),
        ("np.False_", np.False_),
        ("0-d False", np.array(False)),
        ("0-d True", np.array(True)),
        ("1x1", np.ones((1, 1), bool)),
        ("list row", row.tolist()),
        ("list of int row", [int(v) for v in row]),
        ("nested list", full.tolist()),
        ("nested int list column", [[int(v)] for v in col[:, 0]]),
        ("python int 0", 0),
        ("python int 1", 1),
        ("None", None),
        ("0-d uint8 array", np.array(1, np.uint8)),  # an array: TypeError
        ("list of np.int64", [np.int64(v) for v in row]),
        ("strided row", (rng.random(2 * cols) < 0.5)[::2]),
        ("broadcast_to view", np.broadcast_to(row, shape)),
    ]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", FUNCS)
def test_broadcast_and_list_masks(func, path):
    shape = (64, 33)
    with on(path):
        for dtype in on_path(path, (np.float32, np.uint8)):
            a = gen(func, dtype, shape, seed=5)
            for name, m in mask_forms(shape):
                for axis in (None, 0, 1):
                    for keepdims in (False, True):
                        kw = dict(axis=axis, where=m, keepdims=keepdims)
                        if m is not True:  # where=True: no initial needed
                            kw = with_initial(func, dtype, kw)
                        verify(func, a, what="%s mask %s, axis=%s, keepdims=%s" % (
                            describe(func, a, {}), name, axis, keepdims), **kw)


# NumPy scalars convert by value, as Python scalars do: only arrays of
# another dtype meet the 'safe' cast rule's TypeError
NUMPY_SCALAR_MASKS = [np.int64(1), np.uint8(0), np.int8(1), np.float32(0.0),
                      np.float64(1.0), np.bool_(False)]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mask", NUMPY_SCALAR_MASKS, ids=lambda m: "%s(%s)" % (
    type(m).__name__, m))
def test_numpy_scalar_masks(mask, path):
    with on(path):
        for func in FUNCS:
            a = gen(func, np.float32, (64, 33), seed=5)
            for axis in (None, 1):
                verify(func, a, **with_initial(func, np.float32, dict(axis=axis, where=mask)))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", FUNCS)
def test_where_true_is_no_mask(func, path):
    """where=True (the default) changes nothing: min/max need no initial."""
    with on(path):
        for dtype in on_path(path, (np.float32, np.int8, np.bool_)):
            a = gen(func, dtype, (50, 21), seed=8)
            for axis in (None, 0, 1):
                verify(func, a, axis=axis, where=True)
                verify(func, a, axis=axis, where=True, keepdims=True)


# --------------------------------------------------------------------------
# NaN and inf under masks; signed zeros
# --------------------------------------------------------------------------

def nan_inf_rows(dtype, width):
    """Rows of data and mask, each making one point:
    0: a NaN, masked out;            1: a NaN, kept;
    2: +inf kept;                     3: +inf and -inf kept (NaN for sums);
    4: +inf kept, -inf masked;        5: NaN and inf kept, the rest masked;
    6: only NaNs kept (all-NaN slice for nan*);   7: nothing kept;
    8: -inf kept with finite values;  9: NaNs everywhere, masked out."""
    rng = rng_for("where-naninf", np.dtype(dtype).name, width)
    a = (1.0 + rng.uniform(-1, 1, (10, width)) / 256.0).astype(dtype)
    m = rng.random((10, width)) < 0.7
    a[0, 3], m[0, 3] = np.nan, False
    a[1, 5], m[1, 5] = np.nan, True
    a[2, 7], m[2, 7] = np.inf, True
    a[3, 1], m[3, 1] = np.inf, True
    a[3, 9], m[3, 9] = -np.inf, True
    a[4, 2], m[4, 2] = np.inf, True
    a[4, 4], m[4, 4] = -np.inf, False
    m[5] = False
    a[5, 0], m[5, 0] = np.nan, True
    a[5, 6], m[5, 6] = np.inf, True
    a[6, ::2] = np.nan
    m[6] = False
    m[6, ::4] = True
    m[7] = False
    a[8, width // 2], m[8, width // 2] = -np.inf, True
    a[9, ::3] = np.nan
    m[9, ::3] = False
    return a, m


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", FUNCS)
def test_nan_and_inf_under_masks(func, path):
    with on(path):
        for dtype in on_path(path, FLOATS):
            for width in (16, 5000):
                a, m = nan_inf_rows(dtype, width)
                for axis in (1, None):
                    verify(func, a, **with_initial(func, dtype, dict(axis=axis, where=m)))
                # each row alone, as a full reduction (NaN only kept in row 1, ...)
                for r in range(a.shape[0]):
                    verify(func, a[r], **with_initial(func, dtype, dict(where=m[r])))
            # initial=NaN for the nan forms: a kept NaN initial survives fmin/fmax
            if func in ("nanmin", "nanmax"):
                a, m = nan_inf_rows(dtype, 16)
                verify(func, a, axis=1, where=m, initial=np.nan)


@pytest.mark.parametrize("dtype,path", [(d, "host") for d in FLOATS] + [(np.float32, "device")],
                         ids=["%s-host" % dtype_id(d) for d in FLOATS] + ["float32-device"])
def test_signed_zero_sums(dtype, path):
    """NumPy's fold starts at the identity +0.0: -0.0 + -0.0 gives +0.0
    (under a mask and without one); initial=-0.0 keeps the sign."""
    with on(path):
        for n in ((3, 100, 5000) if path == "host" else (3, 5000)):
            a = np.full(n, -0.0, dtype)
            a[1] = 1.0  # masked out below
            m = np.ones(n, bool)
            m[1] = False
            for func in ("sum", "nansum", "mean", "nanmean"):
                for kw in (dict(where=m), dict(where=True), dict(where=np.ones(n, bool)),
                           dict(where=False), dict(where=m, keepdims=True)):
                    if func in ("sum", "nansum"):
                        cases = [kw, dict(kw, initial=-0.0), dict(kw, initial=0.0)]
                    else:
                        cases = [kw]
                    for kw2 in cases:
                        want = verify(func, a, **kw2)
                        got = gp_call(func, a, **kw2)
                        if want is not None and not np.isnan(want).any():
                            assert np.array_equal(np.signbit(np.asarray(got)),
                                                  np.signbit(np.asarray(want))), \
                                "%s: sign of zero %r, NumPy %r" % (
                                    describe(func, a, kw2), got, want)
            # axis reductions: a column of -0.0s, kept or masked
            b = np.full((4, n), -0.0, dtype)
            mb = np.ones((4, n), bool)
            mb[1] = False
            mb[2, ::2] = False
            for axis in (0, 1):
                want = verify("sum", b, axis=axis, where=mb)
                got = np.asarray(gp_call("sum", b, axis=axis, where=mb))
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want),
                                              err_msg="sum(-0.0 rows, axis=%d) signs" % axis)


# --------------------------------------------------------------------------
# mean of integers, all-masked slices, warnings
# --------------------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS)
def test_mean_of_integers(path):
    with on(path):
        for dtype in on_path(path, (np.bool_, np.int8, np.int32, np.int64, np.uint8,
                                    np.uint64), (np.int64,)):
            for shape, axis in (((100,), None), ((40, 30), 0), ((40, 30), 1),
                                ((70001,), None)):
                a = gen("mean", dtype, shape, seed=9)
                m = gen_mask(shape, axis, seed=10)
                for func in ("mean", "nanmean"):
                    kws = [{}, {"keepdims": True}]
                    if path == "host":
                        kws += [{"dtype": np.float32}, {"dtype": np.float64}]
                    for kw in kws:
                        want = verify(func, a, axis=axis, where=m, **kw)
                        if want is not None and "dtype" not in kw:
                            assert np.asarray(want).dtype == np.float64


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", FUNCS)
def test_all_masked(func, path):
    """Nothing kept: the identity (0, 1, True, False), initial (min/max), or
    NaN for the means; also empty arrays."""
    with on(path):
        for dtype in on_path(path, (np.float32, np.int64, np.bool_)):
            for n in (5, 3000):
                a = gen(func, dtype, (n,), seed=13)
                for where in (False, np.zeros(n, bool), np.zeros((3, n), bool)):
                    want = verify(func, a, **with_initial(func, dtype, dict(where=where)))
                    if func in ("sum", "nansum") and want is not None:
                        assert np.all(np.asarray(want) == 0)
                b = gen(func, dtype, (4, n), seed=14)
                mb = np.zeros((4, n), bool)
                mb[2, 1] = True
                for axis in (0, 1, None):
                    verify(func, b, **with_initial(func, dtype, dict(axis=axis, where=mb)))
                    verify(func, b, **with_initial(func, dtype, dict(
                        axis=axis, where=np.zeros((4, 1), bool), keepdims=True)))
            # empty arrays
            for shape, axis in (((0,), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1)):
                e = np.zeros(shape, dtype)
                verify(func, e, **with_initial(func, dtype, dict(
                    axis=axis, where=np.ones(shape, bool))))
                verify(func, e, **with_initial(func, dtype, dict(axis=axis, where=False)))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", ["mean", "nanmean"])
def test_mean_of_empty_slice_warns(func, path):
    with on(path):
        for dtype in on_path(path, FLOATS + [np.int32]):
            for n in (7, 3000):
                a = gen(func, dtype, (n,), seed=15)
                with pytest.warns(RuntimeWarning):
                    r = getattr(gpured, func)(a, where=False)
                assert np.isnan(r) and np.asarray(r).dtype == np.asarray(
                    np_call(func, a, where=False)).dtype
                with pytest.warns(RuntimeWarning):
                    r = getattr(gpured, func)(a, where=np.zeros(n, bool))
                assert np.isnan(r)
                b = gen(func, dtype, (3, n), seed=16)
                mb = np.ones((3, n), bool)
                mb[1] = False
                with pytest.warns(RuntimeWarning):
                    r = getattr(gpured, func)(b, axis=1, where=mb)
                want = np_call(func, b, axis=1, where=mb)
                np.testing.assert_allclose(np.asarray(r), want, rtol=1e-5, equal_nan=True)
                assert np.isnan(r[1]) and not np.isnan(r[[0, 2]]).any()
            # nanmean: the only kept elements are NaN
            if func == "nanmean" and dtype in FLOATS:
                c = np.array([np.nan, 1.0, np.nan], FLOATS[0])
                with pytest.warns(RuntimeWarning):
                    r = gpured.nanmean(c, where=[True, False, True])
                assert np.isnan(r)
        # nothing to warn about: no warning
        a = gen(func, np.float32, (50,), seed=17, nan_frac=0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            getattr(gpured, func)(a, where=gen_mask((50,), seed=18))


# --------------------------------------------------------------------------
# initial, dtype, out
# --------------------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", MINMAX + ("sum", "prod", "nansum", "nanprod"))
def test_initial(func, path):
    with on(path):
        for dtype in on_path(path, (np.float32, np.float64, np.int8, np.int64, np.uint8,
                                    np.uint64, np.bool_), (np.float32, np.int64)):
            for shape, axis in (((9,), None), ((5000,), None), ((30, 41), 1), ((30, 41), 0)):
                a = gen(func, dtype, shape, seed=19)
                m = gen_mask(shape, axis, seed=20)
                dt = np.dtype(dtype)
                if dt.kind == "b":
                    inits = [True, False]
                elif dt.kind in "iu":
                    info = np.iinfo(dt)
                    inits = [0, 1, int(info.max), int(info.min), int(info.max // 3)]
                else:
                    inits = [0.0, -3.5, 1e3, np.inf, -np.inf]
                if base_of(func) == "prod" and dt.kind == "f":
                    inits = [1.0, -2.0, 0.5]
                for init in inits:
                    verify(func, a, axis=axis, where=m, initial=init)
                    verify(func, a, axis=axis, where=True, initial=init)


@pytest.mark.parametrize("path", PATHS)
def test_dtype_keyword(path):
    with on(path):
        cases = [("sum", np.int8, np.int8), ("sum", np.int8, np.int16),
                 ("sum", np.int32, np.int64), ("sum", np.uint8, np.uint64),
                 ("sum", np.float32, np.float64), ("sum", np.int64, np.float64),
                 ("sum", np.bool_, np.int32), ("prod", np.int32, np.int64),
                 ("prod", np.float32, np.float64), ("nansum", np.float32, np.float64),
                 ("nanprod", np.float32, np.float64), ("mean", np.float32, np.float64),
                 ("mean", np.float64, np.float32), ("mean", np.int64, np.float32),
                 ("nanmean", np.float32, np.float64)]
        if path == "device":
            cases = [("sum", np.float32, np.float64), ("sum", np.int8, np.int8),
                     ("mean", np.int64, np.float32)]
        for func, dtype, rdtype in cases:
            if np.float64 in (np.dtype(dtype).type, np.dtype(rdtype).type) and not HAS_FP64:
                continue
            for shape, axis in (((1000,), None), ((30, 41), 1), ((30, 41), 0)):
                a = gen(func, dtype, shape, seed=21)
                m = gen_mask(shape, axis, seed=22)
                verify(func, a, axis=axis, where=m, dtype=rdtype)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", FUNCS)
def test_numpy_out(func, path):
    with on(path):
        shape = (40, 37)
        for dtype in on_path(path, (np.float32, np.int32)):
            a = gen(func, dtype, shape, seed=23)
            for axis, keepdims in ((0, False), (1, False), (1, True), (None, True)):
                m = gen_mask(shape, axis, seed=24)
                want = np_call(func, a, **with_initial(func, dtype, dict(
                    axis=axis, where=m, keepdims=keepdims)))
                outs = [np.asarray(want).dtype]
                if base_of(func) in ("sum", "prod", "mean", "min", "max") and path == "host":
                    outs.append(np.float64)  # another dtype: cast into it
                for odt in outs:
                    out = np.full(np.shape(want), 77, odt)
                    verify(func, a, **with_initial(func, dtype, dict(
                        axis=axis, where=m, keepdims=keepdims, out=out)))


# --------------------------------------------------------------------------
# device arrays
# --------------------------------------------------------------------------

@pytest.mark.parametrize("func", FUNCS)
def test_device_arrays(func):
    """Device data with device masks, host masks and broadcast masks; device
    views; device out=; results are device Arrays."""
    for dtype in (np.float32,) + ((np.bool_,) if func in ("all", "any") else ()):
        for shape, axis in (((100,), None), ((BIG // 4,), None), ((300, 129), 0),
                            ((300, 129), 1), ((6, 7, 8), (0, 2)), ((6, 7, 8), -1)):
            a = gen(func, dtype, shape, seed=25)
            m = gen_mask(shape, axis, seed=26)
            d, dm = gpured.to_device(a), gpured.to_device(m)
            for where in (dm, m):
                for keepdims in (False, True):
                    verify(func, d, **with_initial(func, dtype, dict(
                        axis=axis, where=where, keepdims=keepdims)))
            # a broadcast device mask (the last axis only)
            row = gpured.to_device(gen_mask((shape[-1],), seed=27))
            verify(func, d, **with_initial(func, dtype, dict(axis=axis, where=row)))
        # device views: strided and transposed data and masks
        a = gen(func, dtype, (81, 65), seed=27)
        m = gen_mask((81, 65), seed=28)
        d, dm = gpured.to_device(a), gpured.to_device(m)
        for axis in (None, 0, 1):
            verify(func, d[::2, 1::3].T, **with_initial(func, dtype, dict(
                axis=axis, where=dm[::2, 1::3].T)))
            verify(func, d.T, **with_initial(func, dtype, dict(axis=axis, where=m.T)))
            verify(func, d[::-1], **with_initial(func, dtype, dict(axis=axis, where=dm)))
            verify(func, d, **with_initial(func, dtype, dict(axis=axis, where=dm[::-1, ::-1])))
            # a NumPy input with a device mask: NumPy's answer, on the host
            verify(func, a, **with_initial(func, dtype, dict(axis=axis, where=dm)))
        # device out=
        want = np_call(func, a, **with_initial(func, dtype, dict(axis=1, where=m)))
        out = gpured.empty(np.shape(want), np.asarray(want).dtype)
        verify(func, d, **with_initial(func, dtype, dict(axis=1, where=dm, out=out)))


def test_device_mask_errors():
    a = gen("sum", np.float32, (30, 20))
    d = gpured.to_device(a)
    with pytest.raises(TypeError):
        gpured.sum(d, where=gpured.to_device(np.ones((30, 20), np.uint8)))
    with pytest.raises(TypeError):
        gpured.sum(d, where=np.ones((30, 20), np.uint8))
    with pytest.raises(ValueError):
        gpured.sum(d, where=gpured.to_device(np.ones((20, 30), bool)))
    with pytest.raises(ValueError):
        gpured.sum(d, axis=0, where=gpured.to_device(np.ones((30, 1, 20), bool)))
    with pytest.raises(ValueError, match="initial"):
        gpured.min(d, where=gpured.to_device(np.ones((30, 20), bool)))
    with pytest.raises(ValueError, match="initial"):
        gpured.nanmax(d, axis=1, where=np.ones(20, bool))


# --------------------------------------------------------------------------
# variants and knobs
# --------------------------------------------------------------------------

@pytest.mark.parametrize("func", ["sum", "min"])
def test_every_variant(func):
    """Every variant gpured.variants() offers, on a device-sized full
    reduction (sum: and a row reduction).  A program per variant, so few
    shapes (see on_path)."""
    names = gpured.variants(func, "float32")
    assert names[0] == "auto"
    cases = [((BIG + 5,), None)] + ([((300, 129), 1)] if func == "sum" else [])
    data = []
    for i, (shape, axis) in enumerate(cases):
        a = gen(func, np.float32, shape, seed=30 + i)
        data.append((a, axis, gen_mask(shape, axis, seed=40 + i)))
    for variant in names:
        for a, axis, m in data:
            check_knobs(func, a, with_initial(func, np.float32, dict(axis=axis, where=m)),
                        dict(variant=variant))


def check_knobs(func, a, kw, knobs):
    """gpured.<func>(a, **kw, **knobs) against numpy.<func>(a, **kw)."""
    want = np.asarray(np_call(func, a, **kw))
    what = describe(func, a, dict(kw, **knobs))
    try:
        got = gp_call(func, a, **kw, **knobs)
    except gpured.VariantUnavailable as e:
        pytest.fail("%s: variant offered by gpured.variants() but refused with a "
                    "mask: %s" % (what, e))
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, "%s: %s %s, NumPy %s %s" % (
        what, got.dtype, got.shape, want.dtype, want.shape)
    if base_of(func) in ("min", "max") or want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        assert_float_close(func, a, kw, got, want, what)


def test_knobs():
    """wg_size and vw with a mask (combinations that run without one)."""
    a = gen("sum", np.float32, (BIG + 13,), seed=50)
    m = gen_mask(a.shape, seed=51)
    b = gen("sum", np.float32, (301, 257), seed=52)
    mb = gen_mask(b.shape, 1, seed=53)
    have = gpured.variants("sum", "float32")
    for variant, knobs in (("auto", {"wg_size": 64}), ("vector", {"vw": 4}),
                           ("stride_local", {"wg_size": 32, "vw": 2})):
        if variant not in have:
            continue
        knobs = dict(knobs, variant=variant)
        gpured.sum(a[:100], **knobs)  # runs without a mask
        check_knobs("sum", a, dict(where=m), knobs)
        check_knobs("sum", b, dict(axis=1, where=mb), knobs)


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("func", FUNCS)
def test_errors(func, path):
    a = gen(func, np.float32, (20, 30), seed=60)
    with on(path):
        for dt in (np.uint8, np.int64, np.float32, np.float64):
            bad = np.ones((20, 30), dt)
            with pytest.raises(TypeError):
                np_call(func, a, where=bad)
            with pytest.raises(TypeError, match="Cannot cast|cast|bool"):
                gp_call(func, a, **with_initial(func, np.float32, dict(where=bad)))
            with pytest.raises(TypeError):
                gp_call(func, a, **with_initial(func, np.float32, dict(axis=1, where=bad[0])))
        for shape in ((30, 20), (20,), (2, 20, 30), (31,), (1, 20), (20, 1, 30)):
            m = np.ones(shape, bool)
            for axis in (None, 0, 1):
                kw = with_initial(func, np.float32, dict(axis=axis, where=m))
                with pytest.raises(ValueError):
                    np_call(func, a, **kw)
                with pytest.raises(ValueError):
                    gp_call(func, a, **kw)
        verify(func, a, **with_initial(func, np.float32, dict(where=[True, False])))
        verify(func, a, where=[True, False])  # min/max: both errors; NumPy's first
        if func in MINMAX:
            op = {"min": "minimum", "max": "maximum", "nanmin": "fmin", "nanmax": "fmax"}[func]
            for dtype in on_path(path, (np.float32, np.int32, np.bool_)):
                x = gen(func, dtype, (20, 30), seed=61)
                for where in (np.ones((20, 30), bool), gen_mask((20, 30), seed=62), False,
                              np.False_, np.True_, np.array(True), [True] * 30,
                              np.ones(30, bool)):
                    for axis in (None, 0, 1):
                        with pytest.raises(ValueError):
                            np_call(func, x, axis=axis, where=where)
                        with pytest.raises(ValueError, match="identity"):
                            gp_call(func, x, axis=axis, where=where)
                # NumPy's message: its ufunc's name (nanmin/nanmax: fmin/fmax
                # for every dtype)
                with pytest.raises(ValueError) as np_err:
                    np_call(func, x, where=False)
                with pytest.raises(ValueError) as gp_err:
                    gp_call(func, x, where=False)
                assert str(gp_err.value) == str(np_err.value), (op, dtype)


@pytest.mark.parametrize("func", FUNCS)
def test_float16(func):
    """Where gpured refuses float16 (TypeError without a mask), a masked
    call refuses it too; where it takes it, NumPy's answer."""
    a = gen(func, np.float16, (50,), seed=70)
    m = gen_mask((50,), seed=71)
    for path in PATHS:
        with on(path):
            verify(func, a, **with_initial(func, np.float16, dict(where=m)))
            verify(func, a.reshape(5, 10), **with_initial(func, np.float16, dict(
                axis=1, where=m.reshape(5, 10))))


@pytest.mark.parametrize("path", PATHS)
def test_zero_d(path):
    with on(path):
        for func in FUNCS:
            for dtype in on_path(path, (np.float32, np.int32, np.bool_)):
                x = np.array(gen(func, dtype, (1,), seed=80)[0])
                for where in (True, False, np.array(False), np.array(True), [True]):
                    kw = dict(where=where)
                    if where is not True:
                        kw = with_initial(func, dtype, kw)
                    verify(func, x, **kw)
                    verify(func, x, axis=(), **kw)
