"""Property tests (issue 39): hypothesis draws inputs for the whole public
API and every answer is compared with NumPy's.

What is drawn: shapes (0-d, empty, 1-4-d, at most ~2000 elements), layouts
(C order, transposed, sliced with steps, negative strides), dtypes (bool,
int8..uint64, float32, float64), values (full-range integers that wrap,
small integers with ties, floats with NaN / +-inf / -0.0 mixed in), axes
(None, int, negative, tuples, and out-of-range or repeated axes: then NumPy
raises and gpured must raise the same type), keepdims, dtype=, out= (of
NumPy's result dtype or of another one), initial=, where=, ddof, and for
the by-key functions keys (int32/int64/uint32/uint64, sorted or not,
num_keys) and values.  Each call runs in one of three modes: NumPy inputs
under the default placement ("np": small arrays run on the host path),
NumPy inputs with gpured.placement("current") (the device's kernels), and
device Arrays ("dev": gpured.to_device inputs, where= and out=; results are
Arrays, compared after .get()).  After every call the inputs (and where=,
weights=, keys, values) must be unmodified.

Comparison: integers, bools, min/max/argmin/argmax/ptp exactly (wrapping as
NumPy's); floats against the exact value (long double, of the values as
NumPy converts them), allowing twice NumPy's own error or the pairwise
bound, whichever is larger (gpured accumulates float32 in float64, so it is
usually more exact than NumPy: never bit-equality); NaN positions exactly;
where NumPy overflows to inf on the way and the exact value is finite,
gpured may give either.  By-key functions against np.add.at /
np.minimum.at / per-run ufunc.reduceat / accumulate oracles; reduceat
against np.<ufunc>.reduceat.

Known bugs are kept out of the strategies (so the suite stays green) and are
plain xfail(strict=True) tests in tests/test_property_examples.py; each
exclusion below names its test.

Seeds: every test is seeded from today's date (UTC), so each day's CI run
explores new cases and a failure reproduces the same day
(GPURED_HYPOTHESIS_SEED=YYYYMMDD replays another day); no example database.
A failure prints its falsifying example and the @reproduce_failure blob.
GPURED_HYPOTHESIS_EXAMPLES=n sets every test's max_examples (default: each
test's own, 25-45, sized so the file runs in ~3-4 minutes from cold
kernel caches, gpured's and PoCL's, on the 2-core PoCL CI machine); e.g.
GPURED_HYPOTHESIS_EXAMPLES=2000 for a long local hunt.
"""
import datetime
import math
import os
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, seed, settings
from hypothesis import strategies as st

import gpured

try:
    HAS_FP64 = bool(gpured.get_device()["fp64"])
except Exception:  # pragma: no cover - the other tests say why
    HAS_FP64 = True

SEED = int(os.environ.get("GPURED_HYPOTHESIS_SEED")
           or datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d"))
_N = os.environ.get("GPURED_HYPOTHESIS_EXAMPLES")

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32"] + (["float64"] if HAS_FP64 else [])
DTYPES = ["bool"] + INTS + FLOATS
MAX_ELEMS = 2000


def props(n):
    """settings + the day's seed for one test with a default of n examples."""
    s = settings(max_examples=int(_N) if _N else n, deadline=None, derandomize=False,
                 database=None, print_blob=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.filter_too_much,
                                        HealthCheck.large_base_example])

    def deco(f):
        return seed(SEED)(s(f))
    return deco


# ==========================================================================
# strategies
# ==========================================================================

@st.composite
def shapes(draw, min_ndim=0, max_ndim=4, max_elems=MAX_ELEMS):
    ndim = draw(st.integers(min_ndim, max_ndim))
    big = {0: 1, 1: MAX_ELEMS, 2: 60, 3: 14, 4: 7}[ndim]
    dims = []
    for _ in range(ndim):
        dims.append(draw(st.one_of(st.integers(0, 4), st.integers(0, big))))
    while math.prod(dims) > max_elems:
        i = dims.index(max(dims))
        dims[i] //= 2
    return tuple(dims)


def _values(draw, dtype, n, kind):
    """n values of dtype from a drawn seed (fast for 2000 elements; hypothesis
    shrinks the seed, the kind and the shape)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dt.kind == "b":
        p = draw(st.sampled_from([0.0, 0.02, 0.5, 0.98, 1.0]))
        return rng.random(n) < p
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if kind == "prod":
            v = rng.choice(np.array([1, 1, 1, -1, 3, 0] if dt.kind == "i" else [1, 1, 1, 3, 0]), n)
            return v.astype(dt)
        if kind == "small" or draw(st.booleans()):
            lo = -3 if dt.kind == "i" else 0
            return rng.integers(lo, lo + 7, n).astype(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    # floats
    if kind == "prod":
        v = rng.uniform(0.9, 1.1, n) * rng.choice([1.0, -1.0], n)
    elif kind == "small" or draw(st.booleans()):
        v = rng.integers(-3, 4, n).astype(np.float64) * 0.5
    else:
        scale = draw(st.sampled_from([1.0, 1e-3, 1e3, 1e30 if dt.itemsize == 4 else 1e300]))
        v = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n) * scale
    v = v.astype(dt)
    special = draw(st.sampled_from(["none", "none", "nan", "inf", "mixed", "zeros"]))
    if n and special != "none":
        k = draw(st.integers(1, 4))
        idx = rng.integers(0, n, k)
        pool = {"nan": [np.nan], "inf": [np.inf, -np.inf], "zeros": [0.0, -0.0],
                "mixed": [np.nan, np.inf, -np.inf, -0.0, 0.0]}[special]
        v[idx] = rng.choice(np.array(pool), k)
    return v


@st.composite
def arrays(draw, dtypes=DTYPES, shape=None, kind="general", min_ndim=0, max_ndim=4):
    """(array, layout name): C order, transposed, stepped, negative strides."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    if shape is None:
        shape = draw(shapes(min_ndim, max_ndim))
    ndim = len(shape)
    layout = draw(st.sampled_from(["C", "C", "T", "step", "neg"])) if ndim else "C"
    if layout == "T" and ndim >= 2:
        perm = draw(st.permutations(range(ndim)))
        inv = np.argsort(perm)
        base_shape = tuple(shape[p] for p in inv)
        base = _values(draw, dtype, math.prod(base_shape), kind).reshape(base_shape)
        a = base.transpose(perm)
        assert a.shape == shape
        return a, "T%s" % (tuple(perm),)
    if layout in ("step", "neg") and ndim:
        steps = [draw(st.sampled_from([1, 2, 3, -1, -2] if layout == "step" else [-1, -2, 1]))
                 for _ in range(ndim)]
        base_shape = tuple(max(1, s * abs(k)) for s, k in zip(shape, steps))
        base = _values(draw, dtype, math.prod(base_shape), kind).reshape(base_shape)
        a = base[tuple(slice(None, None, k) for k in steps)]
        a = a[tuple(slice(0, s) for s in shape)]
        assert a.shape == shape
        return a, "steps%s" % (tuple(steps),)
    return _values(draw, dtype, math.prod(shape), kind).reshape(shape), "C"


@st.composite
def axes(draw, ndim, tuples=True, bad=True):
    """None, an int (maybe negative), a tuple; sometimes out of range or repeated."""
    choices = ["none", "int"] + (["tuple"] if tuples else [])
    if bad:
        choices.append("bad")
    what = draw(st.sampled_from(choices))
    if what == "none":
        return None
    if what == "bad":
        opts = [ndim, -ndim - 1]
        if tuples and ndim:
            opts += [(0, 0), (0, -ndim)]
        return draw(st.sampled_from(opts))
    if ndim == 0:
        return draw(st.sampled_from([0, -1] if what == "int" else [(), (0,), (-1,)])) \
            if draw(st.booleans()) else None
    if what == "int":
        ax = draw(st.integers(0, ndim - 1))
        return ax - ndim if draw(st.booleans()) else ax
    ax = draw(st.lists(st.integers(0, ndim - 1), min_size=0, max_size=ndim, unique=True))
    return tuple(x - ndim if draw(st.booleans()) else x for x in ax)


def norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(sorted(x % ndim for x in axis)) if ndim else ()
    return (axis % ndim,) if ndim else ()


def result_shape(shape, axis, keepdims):
    ax = norm_axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in ax else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in ax)


MODES = ["np", "current", "dev"]


@contextmanager
def placed(mode):
    if mode != "current":
        yield
        return
    old = gpured.placement("current")
    try:
        yield
    finally:
        gpured.placement(old)


def dev_ok(x):
    if not isinstance(x, np.ndarray):
        return False
    return x.dtype.kind in "biu" or (x.dtype.kind == "f" and (x.dtype.itemsize == 4 or
                                                               HAS_FP64 and x.dtype.itemsize == 8))


def to_dev(x):
    return gpured.to_device(x) if dev_ok(x) else x


def host(x):
    return x.get() if isinstance(x, gpured.Array) else x


def snap(x):
    if isinstance(x, gpured.Array):
        return x.get()
    if isinstance(x, np.ndarray):
        return x.copy()
    return None


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return bool(np.array_equal(a.view("u%d" % a.itemsize), b.view("u%d" % b.itemsize)))
    return bool(np.array_equal(a, b))


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args, **kw)


def public(exc_type):
    """NumPy's private exception subclasses count as their public base."""
    pub = {v for v in vars(np.exceptions).values() if isinstance(v, type)}
    for c in exc_type.__mro__:
        if c.__module__ == "builtins" or c in pub:
            return c
    return exc_type


# ==========================================================================
# the comparison
# ==========================================================================

def _exact(ref, x, kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(ref(x, **kw), dtype=np.longdouble)


def assert_close(got, exp, exact, bound, what):
    """got: gpured's (host) values, exp: NumPy's, exact: long double values,
    bound: allowed |got - exact| (elementwise, besides 2 * NumPy's error)."""
    g = np.asarray(got)
    e = np.asarray(exp)
    assert g.shape == e.shape and g.dtype == e.dtype, (what, g.shape, e.shape, g.dtype, e.dtype)
    if e.dtype.kind != "f":
        assert np.array_equal(g, e), f"{what}: got {g!r}, numpy {e!r}"
        return
    eps = float(np.finfo(e.dtype).eps)
    with np.errstate(all="ignore"):
        exact = np.broadcast_to(np.asarray(exact, np.longdouble), e.shape)
        in_range = np.asarray(exact.astype(e.dtype), np.longdouble)
        gl, el = g.astype(np.longdouble), e.astype(np.longdouble)
        # NaN where NumPy has NaN (and nowhere else, unless the exact value is NaN)
        assert np.array_equal(np.isnan(g), np.isnan(e)) or np.array_equal(
            np.isnan(g), np.isnan(in_range)), f"{what}: NaN positions: got {g!r}, numpy {e!r}"
        fin_ex = np.isfinite(in_range)
        # where the exact value overflows the dtype (or is inf): NumPy's inf
        nf = ~fin_ex & ~np.isnan(e) & ~np.isnan(in_range)
        assert np.array_equal(g[nf], e[nf]), f"{what}: got {g!r}, numpy {e!r} (overflow)"
        np_err = np.where(np.isfinite(el), np.abs(el - exact), 0)
        tol = np.maximum(2 * np_err, np.broadcast_to(bound, e.shape)) + 2 * eps * np.abs(exact) \
            + np.finfo(e.dtype).smallest_subnormal
        ok = (np.abs(gl - exact) <= tol) | (same_eq(g, e)) | np.isnan(e)
        bad = fin_ex & ~ok
    if bad.any():
        i = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        raise AssertionError(f"{what}: {int(bad.sum())} element(s) off; first at {i}: got "
                             f"{gl[i]!r}, numpy {el[i]!r}, exact {exact[i]!r}, tol {tol[i]!r}")


def same_eq(g, e):
    return (g == e) | (np.isnan(g) & np.isnan(e))


def call_both(name, a, kw, np_fn, mode, checker, extra_in=()):
    """NumPy's answer, then gpured's in mode; same exception type, or
    checker(got_host, numpy_result) on the values.  kw may hold out= (a
    NumPy array: each side gets its own copy)."""
    np_kw = dict(kw)
    if isinstance(kw.get("out"), np.ndarray):
        np_kw["out"] = kw["out"].copy()
    try:
        exp = _quiet(np_fn, a, **np_kw)
        exp_exc = None
    except Exception as e:  # noqa: BLE001 - NumPy's answer is an exception
        exp, exp_exc = None, e
    g_kw = dict(kw)
    if isinstance(kw.get("out"), np.ndarray):
        g_kw["out"] = kw["out"].copy()
    ga = a
    if mode == "dev":
        ga = to_dev(a)
        for k in ("out", "where", "weights"):
            if isinstance(g_kw.get(k), np.ndarray) and dev_ok(g_kw[k]):
                g_kw[k] = to_dev(g_kw[k])
    fn = getattr(gpured, name) if isinstance(name, str) else name
    name = fn.__name__
    what = (f"gpured.{name}(<{a.dtype} {a.shape} strides={a.strides}>, "
            + ", ".join(f"{k}={_d(v)}" for k, v in kw.items()) + f") [{mode}]")
    note(what)
    before = [snap(x) for x in (ga, g_kw.get("where"), g_kw.get("weights"), *extra_in)]
    out_before = snap(g_kw.get("out"))
    try:
        with placed(mode):
            got = _quiet(fn, ga, **g_kw)
        got_exc = None
    except Exception as e:  # noqa: BLE001
        got, got_exc = None, e
    after = [snap(x) for x in (ga, g_kw.get("where"), g_kw.get("weights"), *extra_in)]
    for b, c in zip(before, after):
        if b is not None:
            assert same_bits(b, c), f"{what}: modified an input"
    if exp_exc is not None:
        assert got_exc is not None, (f"{what}: answered {got!r}; NumPy raises "
                                     f"{type(exp_exc).__name__}: {exp_exc}")
        assert isinstance(got_exc, public(type(exp_exc))), (
            f"{what}: raised {type(got_exc).__name__}: {got_exc}; NumPy raises "
            f"{type(exp_exc).__name__}: {exp_exc}")
        if out_before is not None:
            assert same_bits(out_before, snap(g_kw.get("out"))), f"{what}: raised, modified out"
        return None
    if got_exc is not None:
        raise AssertionError(f"{what}: raised {type(got_exc).__name__}: {got_exc}; "
                             f"NumPy answers {exp!r}") from got_exc
    if "out" in g_kw and g_kw["out"] is not None:
        assert got is g_kw["out"], f"{what}: did not return out"
        exp = np_kw["out"]
    if isinstance(exp, tuple):  # average(returned=True)
        assert isinstance(got, tuple) and len(got) == len(exp), what
        for gi, ei in zip(got, exp):
            _kind(gi, ei, ga, what)
        checker(tuple(host(x) for x in got), exp, what)
    else:
        _kind(got, exp, ga, what)
        checker(host(got), exp, what)
    return exp


def _kind(got, exp, ga, what):
    """Type, dtype and shape as NumPy's (an Array for device input)."""
    if isinstance(ga, gpured.Array):
        assert isinstance(got, gpured.Array), f"{what}: got {type(got).__name__}, not an Array"
    else:
        assert type(got) is type(exp), \
            f"{what}: type {type(got).__name__} != numpy's {type(exp).__name__}"
    assert np.dtype(got.dtype) == np.asarray(exp).dtype, \
        f"{what}: dtype {got.dtype} != numpy's {np.asarray(exp).dtype}"
    assert tuple(np.shape(got)) == np.shape(exp), \
        f"{what}: shape {np.shape(got)} != numpy's {np.shape(exp)}"


def _d(v):
    if isinstance(v, np.ndarray):
        return f"<{v.dtype} {v.shape}: {np.array2string(v.ravel()[:8], threshold=8)}>"
    return repr(v)


def exact_checker(g, e, what):
    g, e = np.asarray(g), np.asarray(e)
    assert g.dtype == e.dtype and g.shape == e.shape, what
    if e.dtype.kind == "f":
        assert np.array_equal(g, e, equal_nan=True), f"{what}: got {g!r}, numpy {e!r}"
    else:
        assert np.array_equal(g, e), f"{what}: got {g!r}, numpy {e!r}"


# ==========================================================================
# reductions
# ==========================================================================

def _levels(n):
    return math.ceil(math.log2(n)) if n > 1 else 0


def _reduced_count(a, axis, where=True):
    ax = norm_axes(axis, a.ndim)
    w = np.broadcast_to(np.asarray(where, bool), a.shape)
    return int(w.sum(axis=ax).max(initial=0)) if a.size else 0


@st.composite
def out_for(draw, shape, res_dtype, allowed):
    """None, or an out of shape of res_dtype or of one of allowed (a list)."""
    what = draw(st.sampled_from(["none", "none", "same", "other"]))
    if what == "none":
        return None
    dt = res_dtype if what == "same" or not allowed else np.dtype(draw(st.sampled_from(allowed)))
    return np.full(shape, 7 if dt.kind != "b" else True, dt)


@st.composite
def wheres(draw, shape):
    what = draw(st.sampled_from(["none", "none", "true", "mask", "bcast"]))
    if what == "none":
        return None
    if what == "true":
        return True
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    p = draw(st.sampled_from([0.0, 0.5, 0.9, 1.0]))
    if what == "bcast" and len(shape):
        wshape = tuple(s if draw(st.booleans()) else 1 for s in shape)
        wshape = wshape[draw(st.integers(0, len(wshape))):]
        return rng.random(wshape) < p
    return rng.random(shape) < p


def _mixed_sign_64(in_dt, out_dt):
    """NumPy's loop for (out, input) is float64 here (uint64 with a signed
    int): gpured follows it (test_property_examples.py::
    test_sum_out_mixed_sign_64), but full-range values then meet an
    out-of-range float64 -> integer cast into out (C-undefined: x86 and
    the devices differ), so the strategies leave these outs out."""
    return (in_dt.kind in "iu" and out_dt.kind in "iu"
            and np.result_type(in_dt, out_dt).kind == "f")


def _float_into_int(loop_dt, out_dt):
    """A float loop into an integer out: full-range values meet an
    out-of-range float -> integer cast (C-undefined), and gpured's float32
    sums, accumulated in float64, round otherwise than NumPy's float32
    ones, which a wrapping cast shows (cumsum(int32 [1505919583,
    588245967, 47830817], dtype=float32, out=int8): NumPy's third sum
    2141996288 gives 0, gpured's 2141996416 -128).  Left out."""
    return np.dtype(loop_dt).kind == "f" and np.dtype(out_dt).kind in "iu"


def _minmax_out_ok(in_dt, out_dt):
    """out dtypes of min/max (dtype= absent) kept in the strategies: all
    but 64-bit mixed signs (NumPy's float64 loop) and floats into integers
    (out-of-range values: a C-undefined cast on either side).  Into bool,
    signed into unsigned, narrower integers follow NumPy's loop (the
    promotion, each result's first element read back through out) since
    issue 39 (test_property_examples.py::test_minmax_out_other_kind,
    tests/test_outdtype.py)."""
    if out_dt == in_dt or np.can_cast(in_dt, out_dt, "safe"):
        return True
    if _mixed_sign_64(in_dt, out_dt):
        return False
    if in_dt.kind == "f" and out_dt.kind in "iu":
        return False
    return True


def _sum_family_ref(name):
    base = {"sum": np.sum, "prod": np.prod, "nansum": np.nansum, "nanprod": np.nanprod}[name]
    return base


@props(45)
@given(st.data())
def test_sum_prod(data):
    """sum, prod, nansum, nanprod: axis, keepdims, dtype=, out=, initial=, where=."""
    name = data.draw(st.sampled_from(["sum", "prod", "nansum", "nanprod"]))
    kind = "prod" if "prod" in name else "general"
    a, layout = data.draw(arrays(kind=kind))
    axis = data.draw(axes(a.ndim))
    kw = {"axis": axis}
    if data.draw(st.booleans()):
        kw["keepdims"] = True
    dtype = data.draw(st.sampled_from([None, None, None] + DTYPES))
    if name.startswith("nan") and a.dtype.kind == "f" and dtype is not None \
            and np.dtype(dtype).kind in "biu":
        # the device casts NaN to the integer dtype before skipping it:
        # test_property_examples.py::test_nan_functions_integer_dtype
        dtype = None
    if a.dtype.kind == "f" and dtype is not None and np.dtype(dtype).kind in "iu":
        # a NaN, an infinity or a float out of the integer's range has no
        # defined cast (C leaves it undefined; PoCL gives uint32 0xffffffff,
        # x86 and NumPy 0): in range only
        # (test_property_examples.py::test_float_dtype_integer_out_of_range)
        info = np.iinfo(dtype)
        assume(np.isfinite(a).all() and np.all((a > info.min - 1) & (a < info.max + 1)))
    if dtype is not None:
        kw["dtype"] = dtype
    res_dt = _quiet(np.sum if "sum" in name else np.prod, np.zeros(1, a.dtype),
                    dtype=dtype).dtype
    try:
        rshape = result_shape(a.shape, axis, kw.get("keepdims", False))
    except (ValueError, TypeError, IndexError):
        rshape = ()
    # out of another dtype: not where NumPy's (out, input) loop is float64 for
    # two integer types (_mixed_sign_64: out-of-range casts)
    allowed = [d for d in DTYPES if not _mixed_sign_64(np.dtype(dtype or a.dtype), np.dtype(d))
               and not _float_into_int(dtype or a.dtype, d)]
    out = data.draw(out_for(rshape, res_dt, allowed))
    if out is not None:
        kw["out"] = out
    if data.draw(st.booleans()):
        kw["initial"] = data.draw(st.sampled_from([0, 1, 2, -1, 0.5, True]))
    where = data.draw(wheres(a.shape))
    if where is not None:
        kw["where"] = where
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}")
    ref = _sum_family_ref(name)

    def checker(g, e, what):
        e = np.asarray(e)
        if e.dtype.kind != "f":
            return exact_checker(g, e, what)
        # the values as NumPy reduces them: in the result (or out's) dtype
        loop_dt = e.dtype
        x = a.astype(loop_dt).astype(np.longdouble)
        kk = {k: v for k, v in kw.items() if k not in ("dtype", "out")}
        exact = _exact(ref, x, kk)
        n = _reduced_count(a, axis, kw.get("where", True))
        eps = float(np.finfo(loop_dt).eps)
        if "sum" in name:
            kk.pop("initial", None)
            absx = _exact(np.nansum, np.abs(x), kk) + abs(float(kw.get("initial", 0)))
            bound = (_levels(n + 1) + 2) * eps * absx
        else:
            bound = (n + 3) * eps * np.abs(exact)
        assert_close(g, e, exact, bound, what)

    call_both(name, a, kw, ref, mode, checker)


@props(40)
@given(st.data())
def test_min_max_ptp(data):
    """min, max, nanmin, nanmax (initial=, where=, out=), ptp: exact."""
    name = data.draw(st.sampled_from(["min", "max", "nanmin", "nanmax", "ptp"]))
    a, layout = data.draw(arrays())
    axis = data.draw(axes(a.ndim))
    kw = {"axis": axis}
    if data.draw(st.booleans()):
        kw["keepdims"] = True
    try:
        rshape = result_shape(a.shape, axis, kw.get("keepdims", False))
    except (ValueError, TypeError, IndexError):
        rshape = ()
    allowed = [d for d in DTYPES if _minmax_out_ok(a.dtype, np.dtype(d))]
    out = data.draw(out_for(rshape, a.dtype, allowed))
    if out is not None:
        kw["out"] = out
    if name != "ptp":
        if data.draw(st.booleans()):
            kw["initial"] = data.draw(st.sampled_from([0, 1, -2, 5, True]))
        where = data.draw(wheres(a.shape))
        if where is not None:
            kw["where"] = where
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}")
    call_both(name, a, kw, getattr(np, name), mode, exact_checker)


@props(30)
@given(st.data())
def test_all_any_count_nonzero(data):
    name = data.draw(st.sampled_from(["all", "any", "count_nonzero"]))
    a, layout = data.draw(arrays(kind="small"))
    axis = data.draw(axes(a.ndim))
    kw = {"axis": axis}
    if data.draw(st.booleans()):
        kw["keepdims"] = True
    if name != "count_nonzero":
        try:
            rshape = result_shape(a.shape, axis, kw.get("keepdims", False))
        except (ValueError, TypeError, IndexError):
            rshape = ()
        out = data.draw(out_for(rshape, np.dtype(bool), DTYPES))
        if out is not None:
            kw["out"] = out
        where = data.draw(wheres(a.shape))
        if where is not None:
            kw["where"] = where
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}")
    call_both(name, a, kw, getattr(np, name), mode, exact_checker)


@props(40)
@given(st.data())
def test_mean_var_std(data):
    """mean, nanmean, var, std, nanvar, nanstd: dtype=, out=, ddof, where=."""
    name = data.draw(st.sampled_from(["mean", "nanmean", "var", "std", "nanvar", "nanstd"]))
    a, layout = data.draw(arrays())
    axis = data.draw(axes(a.ndim))
    kw = {"axis": axis}
    if data.draw(st.booleans()):
        kw["keepdims"] = True
    dtype = data.draw(st.sampled_from([None, None, None] + FLOATS))
    if dtype is not None:
        kw["dtype"] = dtype
    if name not in ("mean", "nanmean") and data.draw(st.booleans()):
        kw["ddof"] = data.draw(st.sampled_from([1, 2, 0.5]))
    res_dt = _quiet(np.mean, np.zeros(1, a.dtype), dtype=dtype).dtype
    try:
        rshape = result_shape(a.shape, axis, kw.get("keepdims", False))
    except (ValueError, TypeError, IndexError):
        rshape = ()
    out = data.draw(out_for(rshape, res_dt, FLOATS))
    if out is not None:
        kw["out"] = out
    where = data.draw(wheres(a.shape))
    if where is not None:
        kw["where"] = where
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}")
    ref = getattr(np, name)

    def checker(g, e, what):
        e = np.asarray(e)
        loop_dt = np.dtype(dtype) if dtype else res_dt
        eps = float(np.finfo(e.dtype).eps) if e.dtype.kind == "f" else 0.0
        eps = max(eps, float(np.finfo(loop_dt).eps))
        x = a.astype(loop_dt).astype(np.longdouble)
        kk = {k: v for k, v in kw.items() if k not in ("dtype", "out")}
        exact = _exact(ref, x, kk)
        w = np.broadcast_to(np.asarray(kw.get("where", True), bool), a.shape)
        if "nan" in name:
            w = w & ~np.isnan(x)
        ax = norm_axes(axis, a.ndim)
        kd = kw.get("keepdims", False)
        with np.errstate(all="ignore"):
            n = np.sum(w, axis=ax, keepdims=kd).astype(np.longdouble)
            levels = _levels(int(n.max(initial=0)) + 1) + 4
            xm = np.where(w, x, 0)
            absx = np.sum(np.abs(xm), axis=ax, keepdims=kd)
            if name in ("mean", "nanmean"):
                bound = levels * eps * absx / np.maximum(n, 1)
            else:
                m = np.sum(xm, axis=ax, keepdims=True) / np.maximum(
                    np.sum(w, axis=ax, keepdims=True), 1)
                dev = np.where(w, np.abs(x - m), 0)
                s2 = np.sum(dev * dev, axis=ax, keepdims=kd)
                s1 = np.sum(dev, axis=ax, keepdims=kd)
                mm = np.abs(m) if kd else np.abs(np.squeeze(m, axis=ax))
                dd = np.maximum(n - kw.get("ddof", 0), 1e-300)
                bv = levels * eps * (s2 + 2 * mm * s1 + n * (levels * eps * mm) ** 2) / dd
                if "std" in name:
                    var = exact * exact
                    bound = np.sqrt(var + bv) - np.sqrt(np.maximum(var - bv, 0))
                else:
                    bound = bv
        if e.dtype.kind != "f":  # out of an integer dtype: cast of the float result
            bound = bound + 1
            e_f = e.astype(np.longdouble)
            gl = np.asarray(g).astype(np.longdouble)
            assert np.asarray(g).dtype == e.dtype, what
            diff = np.abs(gl - e_f)
            assert np.all((diff == 0) | (diff <= 1 + bound)), f"{what}: got {g!r}, numpy {e!r}"
            return
        assert_close(g, e, exact, bound, what)

    call_both(name, a, kw, ref, mode, checker)


@props(30)
@given(st.data())
def test_argmin_argmax(data):
    name = data.draw(st.sampled_from(["argmin", "argmax", "nanargmin", "nanargmax"]))
    a, layout = data.draw(arrays())
    axis = data.draw(axes(a.ndim, tuples=False))
    kw = {"axis": axis}
    if data.draw(st.booleans()):
        kw["keepdims"] = True
    if data.draw(st.booleans()):
        try:
            rshape = result_shape(a.shape, axis, kw.get("keepdims", False))
        except (ValueError, TypeError, IndexError):
            rshape = ()
        if axis is None and kw.get("keepdims"):
            rshape = (1,) * a.ndim
        kw["out"] = np.zeros(rshape, np.intp)
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}")
    call_both(name, a, kw, getattr(np, name), mode, exact_checker)


@props(25)
@given(st.data())
def test_average(data):
    a, layout = data.draw(arrays(dtypes=INTS[:4] + FLOATS + ["bool"], max_ndim=3))
    axis = data.draw(axes(a.ndim))
    kw = {"axis": axis}
    if data.draw(st.booleans()):
        kw["keepdims"] = True
    if data.draw(st.booleans()):
        wdt = data.draw(st.sampled_from(["float64", "float32", "int32"]))
        ax = norm_axes(axis, a.ndim) if not isinstance(axis, int) or -a.ndim <= axis < a.ndim \
            else ()
        if data.draw(st.booleans()) or axis is None or len(ax) != 1:
            wshape = a.shape
        else:
            wshape = (a.shape[ax[0]],)
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        kw["weights"] = rng.integers(0, 4, wshape).astype(wdt)
        if data.draw(st.booleans()):
            kw["returned"] = True
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}")

    def checker(g, e, what):
        gs = g if isinstance(g, tuple) else (g,)
        es = e if isinstance(e, tuple) else (e,)
        for gi, ei in zip(gs, es):
            ei = np.asarray(ei)
            gi = np.asarray(gi)
            assert gi.dtype == ei.dtype and gi.shape == ei.shape, what
            if ei.dtype.kind != "f":
                assert np.array_equal(gi, ei), what
                continue
            eps = float(np.finfo(ei.dtype).eps)
            n = max(a.size, 1)
            with np.errstate(all="ignore"):
                mag = np.max(np.abs(a[np.isfinite(a)]), initial=0) if a.dtype.kind == "f" \
                    else np.max(np.abs(a.astype(np.float64)), initial=0)
                bound = (_levels(n) + 4) * eps * (np.abs(ei.astype(np.longdouble)) + 4 * mag)
            assert_close(gi, ei, ei.astype(np.longdouble), bound, what)

    call_both("average", a, kw, np.average, mode, checker, extra_in=(kw.get("weights"),))


# ==========================================================================
# scans
# ==========================================================================

def _np_scan(name):
    if name in ("cummin", "cummax"):
        uf = np.minimum if name == "cummin" else np.maximum

        def ref(a, axis=None, dtype=None, out=None):
            np.cumsum(np.zeros(a.shape, a.dtype), axis=axis)  # NumPy's axis checks
            if a.ndim == 0:
                a = a.reshape(1)
            if axis is None:
                a, axis = a.ravel(), 0
            kk = {} if dtype is None else {"dtype": dtype}
            if out is not None:
                kk["out"] = out
            return uf.accumulate(a, axis=axis, **kk)
        return ref
    return getattr(np, name)


@props(35)
@given(st.data())
def test_scans(data):
    """cumsum, cumprod, nancumsum, nancumprod, cummin, cummax: axis, dtype=, out=."""
    name = data.draw(st.sampled_from(["cumsum", "cumprod", "nancumsum", "nancumprod",
                                      "cummin", "cummax"]))
    kind = "prod" if "prod" in name else "general"
    a, layout = data.draw(arrays(kind=kind, max_ndim=3))
    axis = data.draw(axes(a.ndim, tuples=False))
    kw = {"axis": axis}
    dtype = data.draw(st.sampled_from([None, None, None] + DTYPES))
    if name.startswith("nan") and a.dtype.kind == "f" and dtype is not None \
            and np.dtype(dtype).kind in "biu":
        # (test_property_examples.py::test_nan_functions_integer_dtype)
        dtype = None
    if a.dtype.kind == "f" and dtype is not None and np.dtype(dtype).kind in "iu":
        # as test_sum_prod: a float out of the integer's range has no
        # defined cast (x86 NumPy gives its "integer indefinite", NVIDIA
        # saturates: 5.2e27 into int8 is 0 against -1): in range only
        info = np.iinfo(dtype)
        assume(np.isfinite(a).all() and np.all((a > info.min - 1) & (a < info.max + 1)))
    if dtype is not None:
        kw["dtype"] = dtype
    ref = _np_scan(name)
    try:
        probe = _quiet(ref, np.zeros(a.shape, a.dtype), axis=axis, dtype=dtype)
        rshape, res_dt = probe.shape, probe.dtype
    except Exception:  # noqa: BLE001
        rshape, res_dt = None, None
    if rshape is not None:
        allowed = [d for d in DTYPES
                   if not _mixed_sign_64(np.dtype(dtype or a.dtype), np.dtype(d))
                   and not _float_into_int(dtype or a.dtype, d)]
        out = data.draw(out_for(rshape, res_dt, allowed))
        if out is not None:
            kw["out"] = out
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}")

    def checker(g, e, what):
        e = np.asarray(e)
        if e.dtype.kind != "f" or name in ("cummin", "cummax"):
            return exact_checker(g, e, what)
        x = a.astype(e.dtype).astype(np.longdouble)
        exact = _exact(ref, x, {"axis": axis})
        n = max(a.size, 1)
        eps = float(np.finfo(e.dtype).eps)
        if "sum" in name:
            absx = _exact(ref, np.abs(x), {"axis": axis})
            bound = (_levels(n) + 3) * eps * absx
        else:
            bound = (n + 3) * eps * np.abs(exact)
        assert_close(g, e, exact, bound, what)

    call_both(name, a, kw, ref, mode, checker)


# ==========================================================================
# reduceat
# ==========================================================================

REDUCEAT_UFUNCS = {"add": np.add, "multiply": np.multiply, "minimum": np.minimum,
                   "maximum": np.maximum, "logical_and": np.logical_and,
                   "logical_or": np.logical_or}


@props(30)
@given(st.data())
def test_reduceat(data):
    op = data.draw(st.sampled_from(sorted(REDUCEAT_UFUNCS)))
    kind = "prod" if op == "multiply" else "general"
    a, layout = data.draw(arrays(kind=kind, min_ndim=1, max_ndim=3))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    m = data.draw(st.integers(0 if n == 0 else 1, 12))
    how = data.draw(st.sampled_from(["sorted", "random", "bad"]))
    idx = rng.integers(0, max(n, 1), m)
    if how == "sorted":
        idx = np.sort(idx)
    elif how == "bad" and m:
        idx[rng.integers(0, m)] = data.draw(st.sampled_from([n, -1, n + 3]))
    if how != "bad":
        idx = idx.astype(data.draw(st.sampled_from(["int64", "int32", "intp"]
                                                   + (["uint8"] if n < 256 else []))))
    kw = {"axis": axis}
    uf = REDUCEAT_UFUNCS[op]
    if op in ("add", "multiply") and data.draw(st.booleans()):
        kw["dtype"] = data.draw(st.sampled_from(DTYPES))
        if a.dtype.kind == "f" and np.dtype(kw["dtype"]).kind in "iu":
            # a float out of the integer's range has no defined cast (C
            # leaves it undefined; x86 and NVIDIA differ): in range only
            info = np.iinfo(kw["dtype"])
            assume(np.all(~np.isfinite(a) | ((a > info.min - 1) & (a < info.max + 1)))
                              and np.isfinite(a).all())
    try:
        probe = _quiet(uf.reduceat, a, idx, **kw)
    except Exception:  # noqa: BLE001
        probe = None
    if probe is not None and data.draw(st.booleans()):
        kw["out"] = np.zeros(probe.shape, probe.dtype)
    mode = data.draw(st.sampled_from(MODES))
    note(f"layout {layout}, indices {idx!r}")

    def ref(x, axis, dtype=None, out=None):
        kk = {"axis": axis}
        if dtype is not None:
            kk["dtype"] = dtype
        if out is not None:
            kk["out"] = out
        return uf.reduceat(x, idx, **kk)

    def checker(g, e, what):
        e = np.asarray(e)
        if e.dtype.kind != "f" or op not in ("add", "multiply"):
            return exact_checker(g, e, what)
        x = a.astype(e.dtype).astype(np.longdouble)
        exact = _exact(ref, x, {"axis": axis})
        eps = float(np.finfo(e.dtype).eps)
        if op == "add":
            bound = (_levels(n) + 3) * eps * _exact(ref, np.abs(x), {"axis": axis})
        else:
            bound = (n + 3) * eps * np.abs(exact)
        assert_close(g, e, exact, bound, what)

    gidx = to_dev(idx) if mode == "dev" and data.draw(st.booleans()) else idx

    def gp(x, **kk):
        return gpured.reduceat(x, gidx, op=op, **kk)
    gp.__name__ = f"reduceat[op={op!r}, indices={idx.tolist()!r}]"
    call_both(gp, a, kw, ref, mode, checker, extra_in=(gidx,))


# ==========================================================================
# by key
# ==========================================================================

KEY_DTYPES = ["int32", "int64", "uint32", "uint64"]
VAL_DTYPES = ["int32", "int64", "uint32", "uint64"] + FLOATS
BK_UFUNC = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}


@st.composite
def keys_values(draw, op, bad_keys=False):
    kdt = np.dtype(draw(st.sampled_from(KEY_DTYPES)))
    vdt = np.dtype(draw(st.sampled_from(VAL_DTYPES)))
    n = draw(st.one_of(st.integers(0, 8), st.integers(0, MAX_ELEMS)))
    nk = draw(st.one_of(st.integers(1, 5), st.integers(1, 300)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    order = draw(st.sampled_from(["sorted", "runs", "random"]))
    k = rng.integers(0, nk, n)
    if order == "sorted":
        k = np.sort(k)
    elif order == "runs":
        k = np.repeat(k, rng.integers(1, 20, n))[:n]
    k = k.astype(kdt)
    if bad_keys and n and kdt.kind == "i" and draw(st.booleans()):
        k[rng.integers(0, n)] = -1
    v = _values(draw, vdt, n, "prod" if op == "prod" else "general")
    if draw(st.booleans()) and n > 1:  # a strided view
        k2 = np.empty(2 * n, kdt)
        k2[::2] = k
        k = k2[::2]
    return k, v, nk


def _bk_dtype(op, vdt):
    if op in ("sum", "prod"):
        return np.add.reduce(np.zeros(1, vdt)).dtype
    return np.dtype(vdt)


def _ident(op, rd):
    if op == "sum":
        return 0
    if op == "prod":
        return 1
    if rd.kind == "f":
        return np.inf if op == "min" else -np.inf
    info = np.iinfo(rd)
    return info.max if op == "min" else info.min


def _bk_float_check(got, want, op, absx, m, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{what}: {got.dtype}{got.shape} != numpy's {want.dtype}{want.shape}"
    if got.dtype.kind != "f" or op in ("min", "max", "count"):
        assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), \
            f"{what}: got {got!r}, want {want!r}"
        return
    eps = float(np.finfo(got.dtype).eps)
    scale = absx if op == "sum" else np.abs(want.astype(np.longdouble))
    bound = (np.asarray(m) + 2) * eps * scale
    assert_close(got, want, want.astype(np.longdouble), bound, what)


def _exact_bk(k, v, op, rd, size, seg=None):
    """(want, absx, m) for sum_by_key (seg None: dense, size keys) in long
    double then rounded to rd -- exact sums rounded once."""
    ki = k.astype(np.int64)
    if op in ("min", "max") or rd.kind != "f":
        out = np.full(size, _ident(op, rd), rd)
        _quiet(BK_UFUNC[op].at, out, ki, v.astype(rd))
        return out, None, None
    xl = v.astype(rd).astype(np.longdouble)
    out = np.full(size, _ident(op, rd), np.longdouble)
    with np.errstate(all="ignore"):
        BK_UFUNC[op].at(out, ki, xl)
    absx = np.zeros(size, np.longdouble)
    np.add.at(absx, ki, np.abs(xl))
    m = np.bincount(ki, minlength=size)
    return out, absx, m


def _run_bk(fn, args, kw, mode, extra=()):
    """gpured's by-key answer (host arrays) or the exception; inputs checked."""
    gargs = [to_dev(x) if mode == "dev" and isinstance(x, np.ndarray) else x for x in args]
    before = [snap(x) for x in gargs]
    try:
        with placed(mode):
            got = _quiet(fn, *gargs, **kw)
    finally:
        for b, x in zip(before, gargs):
            if b is not None:
                assert same_bits(b, snap(x)), f"{fn.__name__}: modified an input"
    if mode == "dev":
        if isinstance(got, tuple):
            assert all(isinstance(x, gpured.Array) for x in got), got
        else:
            assert isinstance(got, gpured.Array), type(got)
    if isinstance(got, tuple):
        return tuple(host(x) for x in got)
    return host(got)


@props(25)
@given(st.data())
def test_sum_by_key(data):
    op = data.draw(st.sampled_from(["sum", "sum", "min", "max"]))
    k, v, nk = data.draw(keys_values(op, bad_keys=True))
    kw = {}
    size = int(k.max()) + 1 if k.size else 0
    num_keys = None
    if data.draw(st.booleans()):
        num_keys = max(size, nk) + data.draw(st.integers(0, 3))
        if data.draw(st.integers(0, 5)) == 0 and size:
            num_keys = size - 1  # a key out of range
    if data.draw(st.booleans()):
        kw["deterministic"] = True
    if k.size and bool(np.all(k[:-1] <= k[1:])) and data.draw(st.booleans()):
        kw["sorted"] = True  # the caller's promise, where it holds
    mode = data.draw(st.sampled_from(MODES))
    what = (f"gpured.sum_by_key(<{k.dtype} {k.shape} {k[:8]}>, <{v.dtype} {v.shape}>, "
            f"{num_keys}, {op!r}, **{kw}) [{mode}]")
    note(what)
    neg = k.size and k.dtype.kind == "i" and k.min() < 0
    if neg or (num_keys is not None and size > num_keys):
        with pytest.raises(ValueError):
            _run_bk(gpured.sum_by_key, (k, v, num_keys, op), kw, mode)
        return
    got = _run_bk(gpured.sum_by_key, (k, v, num_keys, op), kw, mode)
    rd = _bk_dtype(op, v.dtype)
    want, absx, m = _exact_bk(k, v, op, rd, num_keys if num_keys is not None else size)
    if op == "sum" and rd.kind == "f":
        want_np = np.zeros(want.shape, rd)
        np.add.at(want_np, k.astype(np.int64), v.astype(rd))
        with np.errstate(all="ignore"):
            exact = want
        bound = (m + 2) * float(np.finfo(rd).eps) * absx
        assert_close(got, want_np, exact, bound, what)
    else:
        _bk_float_check(got, want, op, None, None, what)


@props(25)
@given(st.data())
def test_reduce_by_key(data):
    op = data.draw(st.sampled_from(["sum", "prod", "min", "max", "count"]))
    k, v, _ = data.draw(keys_values(op))
    mode = data.draw(st.sampled_from(MODES))
    kw = {"deterministic": True} if data.draw(st.booleans()) else {}
    note(f"gpured.reduce_by_key(<{k.dtype} {k[:10]}>, <{v.dtype} {v.shape}>, {op!r}, {kw}) "
         f"[{mode}]")
    vals = None if op == "count" else v
    uk, got = _run_bk(gpured.reduce_by_key, (k, vals, op), kw, mode)
    st_ = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.zeros(0, np.intp)
    lens = np.diff(np.r_[st_, k.size])
    assert np.array_equal(uk, k[st_]) and uk.dtype == k.dtype, (uk, k[st_])
    if op == "count":
        assert np.array_equal(got, lens) and got.dtype == np.int64, (got, lens)
        return
    rd = _bk_dtype(op, v.dtype)
    if k.size == 0:
        assert got.shape == (0,) and got.dtype == rd, (got.shape, got.dtype)
        return
    want_np = _quiet(BK_UFUNC[op].reduceat, v.astype(rd), st_)
    if rd.kind == "f" and op in ("sum", "prod"):
        xl = v.astype(rd).astype(np.longdouble)
        exact = _quiet(BK_UFUNC[op].reduceat, xl, st_)
        absx = np.add.reduceat(np.abs(xl), st_)
        eps = float(np.finfo(rd).eps)
        bound = (lens + 2) * eps * (absx if op == "sum" else np.abs(exact))
        assert_close(got, want_np, exact, bound, "reduce_by_key")
    else:
        _bk_float_check(got, want_np, op, None, None, "reduce_by_key")


@props(25)
@given(st.data())
def test_scan_by_key(data):
    op = data.draw(st.sampled_from(["sum", "prod", "min", "max"]))
    k, v, _ = data.draw(keys_values(op))
    exclusive = data.draw(st.booleans())
    mode = data.draw(st.sampled_from(MODES))
    note(f"gpured.scan_by_key(<{k.dtype} {k[:10]}>, <{v.dtype} {v.shape}>, {op!r}, "
         f"exclusive={exclusive}) [{mode}]")
    got = _run_bk(gpured.scan_by_key, (k, v, op), {"exclusive": exclusive}, mode)
    rd = _bk_dtype(op, v.dtype)
    st_ = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.zeros(0, np.intp)
    want = np.empty(k.size, rd)
    exact = np.empty(k.size, np.longdouble)
    absx = np.empty(k.size, np.longdouble)
    mlen = np.empty(k.size, np.int64)
    ident = _ident(op, rd)
    for s, e in zip(st_, np.r_[st_[1:], k.size]):
        seg = v[s:e].astype(rd)
        acc = _quiet(BK_UFUNC[op].accumulate, seg)
        ex = _quiet(BK_UFUNC[op].accumulate, seg.astype(np.longdouble))
        ab = np.cumsum(np.abs(seg.astype(np.longdouble)))
        if exclusive:
            acc = np.r_[np.array([ident], rd), acc[:-1]]
            ex = np.r_[np.array([ident], np.longdouble), ex[:-1]]
            ab = np.r_[0, ab[:-1]]
        want[s:e], exact[s:e], absx[s:e], mlen[s:e] = acc, ex, ab, e - s
    if rd.kind == "f" and op in ("sum", "prod"):
        eps = float(np.finfo(rd).eps)
        bound = (mlen + 2) * eps * (absx if op == "sum" else np.abs(exact))
        assert_close(got, want, exact, bound, "scan_by_key")
    else:
        _bk_float_check(got, want, op, None, None, "scan_by_key")
