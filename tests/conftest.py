"""Shared helpers for the gpured test suite.

Everything here is deterministic (fixed seeds) so failures reproduce.

Accuracy bounds used for floating-point sum / prod / mean (see ``check``):

* sum:  |got - exact| <= max(2 * |numpy - exact|,
                             (ceil(log2(n)) + 2) * eps * sum(|x_i|))
                         + 2 * eps * |exact|
  where ``exact`` is the sum of the (dtype-converted) inputs computed in
  80-bit long double, ``n`` the number of reduced elements and ``eps`` the
  machine epsilon of the result dtype.  The second term is the classic
  pairwise-summation worst-case bound; the first allows anything that is not
  worse than NumPy itself on the same reduction.
* mean: the sum bound divided by n, plus 2 * eps * |exact mean| for the
  division.
* prod: |got - exact| <= max(2 * |numpy - exact|, (4 * sqrt(n) + 2) * eps * |exact|)
  (each multiplication contributes an independent relative rounding error
  of at most eps/2; 4*sqrt(n) is a > 10 sigma bound for that random walk,
  far below the (n-1)*eps worst case, and the data is chosen near 1 so no
  intermediate over/underflow can occur).
* Wherever NumPy's result is non-finite (nan / +-inf) gpured's must be
  identical.
"""

import math
import os
import warnings
import zlib

# The vendored array API test suite runs apart (make test-array-api,
# tests/array_api/vendor/README.md), never in gpured's own pytest run.
collect_ignore = ["array_api"]

import numpy as np
import pytest

import gpured

# --------------------------------------------------------------------------
# dtypes / ops
# --------------------------------------------------------------------------

try:
    HAS_FP64 = bool(gpured.get_device()["fp64"])
except Exception:  # pragma: no cover - let the real tests report the problem
    HAS_FP64 = True

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float32] + ([np.float64] if HAS_FP64 else [])
DTYPES = [np.bool_] + INT_DTYPES + FLOAT_DTYPES

OPS = ["sum", "prod", "min", "max", "all", "any", "mean", "argmin", "argmax"]
ARG_OPS = ("argmin", "argmax")
EXACT_OPS = ("min", "max", "all", "any", "argmin", "argmax")


# A second pass on another device (the Makefile's Intel pass) re-runs only
# the variants it adds to the main pass: GPURED_TEST_VARIANTS, a comma list
# (e.g. "auto,subgroup,workgroup": the sub-group and work-group collective
# paths PoCL lacks); unset, every variant runs.
PASS_VARIANTS = tuple(v for v in os.environ.get("GPURED_TEST_VARIANTS",
                                                "").split(",") if v)


def pass_variants(names):
    """names, less those this pass leaves to the main pass."""
    return [v for v in names if not PASS_VARIANTS or v in PASS_VARIANTS]


def dtype_id(dt):
    return np.dtype(dt).name


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "huge: tests on arrays with more than 2**31 elements (slow, ~2 GiB "
        "each); skipped unless selected: -m huge, or GPURED_TEST_HUGE=1")


def _huge_selected(config):
    return (os.environ.get("GPURED_TEST_HUGE", "") not in ("", "0")
            or "huge" in (config.getoption("markexpr", "") or ""))


def pytest_collection_modifyitems(config, items):
    if not _huge_selected(config):
        skip = pytest.mark.skip(reason="huge (~2 GiB) test: run with -m huge or "
                                       "GPURED_TEST_HUGE=1 (make test-huge)")
        for item in items:
            if "huge" in item.keywords:
                item.add_marker(skip)
    for item in items:
        bug = _known_bug(item)
        if bug is not None:
            item.add_marker(pytest.mark.xfail(strict=False, raises=KnownBug,
                                              reason=bug["reason"]))


# --------------------------------------------------------------------------
# known device bugs: expected failures, narrowly
# --------------------------------------------------------------------------

class KnownBug(AssertionError):
    """A failure that is one of KNOWN_BUGS and nothing else."""


def _intel_cpu(dev):
    return dev["type"] == "CPU" and dev["platform"].startswith("Intel(R) OpenCL")


# Each entry: the device it shows on, the test ids it breaks, the variant at
# fault, and why.  A listed test that fails is retried with that variant left
# out of gpured.variants(): only when every other variant then passes is the
# failure reported as the expected one (XFAIL); any other failure fails.  A
# test that passes (the bug fixed) is an XPASS, which does not fail the run.
KNOWN_BUGS = [
    dict(device=_intel_cpu, variant="subgroup",
         tests=["test_variants.py::test_every_variant_matches_numpy[sum-%s]" % d
                for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                          "uint32", "uint64", "float32")]
         + ["test_variants.py::test_nan_propagates_in_every_variant"],
         reason="Intel CPU runtime: the subgroup REDUCE variant gives wrong sums (and "
                "min(NaN) = 0) -- the kernels bug in kernels/common.cl's sub-group "
                "combine (issue 13's 'see the kernels issue'), fixed on another branch"),
]


def _known_bug(item):
    name = "%s::%s" % (os.path.basename(str(item.fspath)), item.name)
    try:
        dev = gpured.get_device()
    except Exception:  # pragma: no cover - the tests will say why
        return None
    for bug in KNOWN_BUGS:
        if name in bug["tests"] and bug["device"](dev):
            return bug
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    bug = _known_bug(item)
    if bug is None or outcome.excinfo is None:
        return
    err = outcome.excinfo[1]
    if not isinstance(err, AssertionError) or repr(bug["variant"]) not in str(err):
        return  # another failure: stands as it is
    real = gpured.variants
    reductions = set(OPS)

    def without(op="sum", dtype="float32"):
        names = real(op, dtype)
        return [v for v in names if not (op in reductions and v == bug["variant"])]

    gpured.variants = without
    try:
        item.runtest()  # every other variant must pass
    except BaseException as again:
        outcome.force_exception(again)
        return
    finally:
        gpured.variants = real
    outcome.force_exception(KnownBug("%s\n(every other variant passes)\n%s"
                                     % (bug["reason"], err)))


# --------------------------------------------------------------------------
# data generation
# --------------------------------------------------------------------------

SHAPES = [
    (), (0,), (1,), (2, 0, 1), (0, 3), (3, 0),
    (7,), (1021,), (3000,), (65535,), (65537,),
    (3, 5), (1, 300), (17, 130), (4, 5, 6), (2, 3, 4, 5),
]


def shape_id(shape):
    return "x".join(map(str, shape)) if shape else "scalar"


def _seed(*parts):
    return zlib.crc32(repr(tuple(str(p) for p in parts)).encode())


def rng_for(*parts):
    """Deterministic (process-independent) RNG keyed on arbitrary parts."""
    return np.random.default_rng(_seed(*parts))


def make_data(dtype, shape, kind="general", seed=0):
    """Return a C-contiguous array of ``dtype``/``shape``.

    kinds:
      general     ints: full range of the type (so int64/uint64 sums wrap and
                  small types have many ties);  floats: normal values with
                  magnitudes spread over 1e-3..1e3 and mixed signs;  bool: 50/50.
      ties        small range values (-3..3 / 0..6) so min/max/argmin/argmax
                  have many ties.
      prod        values for products: odd ints near +-1 (products wrap
                  without collapsing to 0), floats in 1 +- 1/256 with random
                  sign (no over/underflow), bools mostly True.
      fewzeros    mostly non-zero (true) with a handful of zeros.
      fewnonzeros mostly zero (false) with a handful of non-zeros.
      wrap        large values of the type so that summing in the type wraps.
    """
    dtype = np.dtype(dtype)
    rng = rng_for(dtype.name, shape, kind, seed)
    n = int(np.prod(shape, dtype=np.int64))
    if kind == "general":
        if dtype.kind == "b":
            flat = rng.random(n) < 0.5
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            flat = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
        else:
            flat = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
    elif kind == "ties":
        if dtype.kind == "b":
            flat = rng.random(n) < 0.5
        elif dtype.kind == "u":
            flat = rng.integers(0, 7, size=n)
        else:
            flat = rng.integers(-3, 4, size=n)
    elif kind == "prod":
        if dtype.kind == "b":
            flat = rng.random(n) < 0.97
        elif dtype.kind in "iu":
            choices = np.array([1, 1, 1, 3, 5, 7, 255, 1 if dtype.kind == "u" else -1,
                                1 if dtype.kind == "u" else -3])
            flat = rng.choice(choices, size=n)
            if n > 4:  # a few even factors, not enough to collapse to 0
                flat[rng.integers(0, n, size=2)] = 2
        else:
            flat = (1.0 + rng.uniform(-1, 1, n) / 256.0) * rng.choice([-1.0, 1.0], n)
    elif kind in ("fewzeros", "fewnonzeros"):
        if dtype.kind == "b":
            base, other = (True, False)
        elif dtype.kind in "iu":
            base, other = (1, 0)
        else:
            base, other = (0.5, 0.0)
        if kind == "fewnonzeros":
            base, other = other, base
        flat = np.full(n, base)
        if dtype.kind in "iu" and kind == "fewzeros":
            flat = rng.integers(1, 100, size=n)
        if n:
            k = min(n, 3)
            flat[rng.choice(n, size=k, replace=False)] = other
    elif kind == "wrap":
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            lo = info.max // 2 if dtype.kind == "u" else info.max // 2
            flat = rng.integers(lo, info.max, size=n, dtype=dtype, endpoint=True)
        else:
            raise ValueError("wrap kind is for integers")
    else:
        raise ValueError(kind)
    return np.ascontiguousarray(np.asarray(flat).astype(dtype).reshape(shape))


def data_kinds(op):
    if op in ("all", "any"):
        return ["fewzeros", "fewnonzeros", "general"]
    if op == "prod":
        return ["prod"]
    if op in ("min", "max", "argmin", "argmax"):
        return ["general", "ties"]
    return ["general"]


# --------------------------------------------------------------------------
# layouts
# --------------------------------------------------------------------------

LAYOUTS = ["C", "F", "T", "strided", "negstride", "byteswap",
           "byteswap_strided", "broadcast", "unaligned"]


def make_layout(dtype, shape, layout, kind="general", seed=0):
    """Array with the given logical ``shape`` and memory ``layout``."""
    dtype = np.dtype(dtype)
    if layout == "C":
        return make_data(dtype, shape, kind, seed)
    if layout == "F":
        return np.asfortranarray(make_data(dtype, shape, kind, seed))
    if layout == "T":
        return make_data(dtype, shape[::-1], kind, seed).T
    if layout in ("strided", "byteswap_strided"):
        big = make_data(dtype, tuple(2 * s + 1 for s in shape), kind, seed)
        v = big[tuple(slice(1, None, 2) for _ in shape)]
        if layout == "byteswap_strided":
            big = big.astype(dtype.newbyteorder())
            v = big[tuple(slice(1, None, 2) for _ in shape)]
        assert v.shape == shape
        return v
    if layout == "negstride":
        big = make_data(dtype, tuple(3 * s for s in shape), kind, seed)
        sl = tuple(slice(None, None, -3) if i % 2 == 0 else slice(s, 2 * s)
                   for i, s in enumerate(shape))
        v = big[sl]
        assert v.shape == shape
        return v
    if layout == "byteswap":
        return make_data(dtype, shape, kind, seed).astype(dtype.newbyteorder())
    if layout == "broadcast":
        # zero strides on the first axis
        row = make_data(dtype, (1,) + tuple(shape[1:]), kind, seed)
        return np.broadcast_to(row, shape)
    if layout == "unaligned":
        src = make_data(dtype, shape, kind, seed)
        buf = bytearray(src.nbytes + 1)
        v = np.frombuffer(buf, dtype=dtype, count=src.size, offset=1).reshape(shape)
        v[...] = src
        return v
    raise ValueError(layout)


# --------------------------------------------------------------------------
# axis choices
# --------------------------------------------------------------------------

def axis_choices(ndim, op):
    """None, every int axis, negative ints, and a selection of tuples."""
    if ndim == 0:
        return [None] if op in ARG_OPS else [None, ()]
    out = [None] + list(range(ndim)) + [-1]
    if ndim >= 3:
        out.append(-ndim)
    if op in ARG_OPS:
        return out
    out += [(0,), ()]
    if ndim >= 2:
        out += [(0, ndim - 1), (-1, 0), tuple(range(ndim))]
    if ndim >= 3:
        out += [(0, 1), (1, 2), (1, -1)]
    if ndim >= 4:
        out += [(0, 2, 3), (0, 1, 2)]
    return out


def normalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(sorted(a % ndim for a in axis)) if ndim else ()
    return (axis % ndim,) if ndim else ()


# --------------------------------------------------------------------------
# comparison against NumPy
# --------------------------------------------------------------------------

def np_call(op, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return getattr(np, op)(a, **kw)


def gp_call(op, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return getattr(gpured, op)(a, **kw)


def _desc(op, a, kw):
    arr = np.asarray(a)
    return (f"gpured.{op}(<{arr.dtype} {arr.shape} strides={arr.strides}>, "
            + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")")


def assert_same_kind(got, expected, what):
    assert type(got) is type(expected), \
        f"{what}: type {type(got).__name__} != numpy's {type(expected).__name__}"
    assert np.asarray(got).dtype == np.asarray(expected).dtype, \
        f"{what}: dtype {np.asarray(got).dtype} != numpy's {np.asarray(expected).dtype}"
    assert np.shape(got) == np.shape(expected), \
        f"{what}: shape {np.shape(got)} != numpy's {np.shape(expected)}"


def check(op, a, **kw):
    """Call gpured.<op> and numpy.<op> with the same arguments and compare.

    If NumPy raises, gpured must raise an exception of the same type.
    Returns numpy's result (or None if it raised).
    """
    what = _desc(op, a, kw)
    try:
        expected = np_call(op, a, **kw)
    except Exception as e:  # NumPy rejects it: gpured must too, same type
        with pytest.raises(type(e)):
            gp_call(op, a, **kw)
        return None
    got = gp_call(op, a, **kw)
    compare(op, a, got, expected, kw, what)
    return expected


def compare(op, a, got, expected, kw, what=None):
    what = what or _desc(op, a, kw)
    assert_same_kind(got, expected, what)
    res_dtype = np.asarray(expected).dtype
    if op in EXACT_OPS or res_dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected, err_msg=what, strict=True)
        return
    assert_float_close(op, a, got, expected, kw, what)


def assert_float_close(op, a, got, expected, kw, what):
    with np.errstate(all="ignore"):
        _assert_float_close(op, a, got, expected, kw, what)


def _assert_float_close(op, a, got, expected, kw, what):
    a = np.asarray(a)
    res_dtype = np.asarray(expected).dtype
    eps = float(np.finfo(res_dtype).eps)
    axis = kw.get("axis", None)
    keepdims = kw.get("keepdims", False)
    axes = normalize_axes(axis, a.ndim)
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))

    # the values as NumPy sees them in the reduction: converted to the
    # accumulation dtype first, then widened to long double for the reference
    acc_dtype = res_dtype
    x = a.astype(acc_dtype).astype(np.longdouble)
    initial = kw.get("initial", None)
    if op in ("sum", "mean"):
        exact = np.sum(x, axis=axes, keepdims=keepdims)
        abs_sum = np.sum(np.abs(x), axis=axes, keepdims=keepdims)
        if initial is not None:
            exact = exact + np.longdouble(initial)
            abs_sum = abs_sum + abs(np.longdouble(initial))
        levels = math.ceil(math.log2(n)) if n > 1 else 0
        bound = (levels + 2) * eps * abs_sum
        if op == "mean":
            exact = exact / n if n else exact * np.nan
            bound = bound / max(n, 1)
    elif op == "prod":
        exact = np.prod(x, axis=axes, keepdims=keepdims)
        if initial is not None:
            exact = exact * np.longdouble(initial)
        bound = (4 * math.sqrt(n) + 2) * eps * np.abs(exact)
    else:  # pragma: no cover
        raise AssertionError(op)

    exp_arr = np.asarray(expected, dtype=np.longdouble)
    got_arr = np.asarray(got, dtype=np.longdouble)
    exact = np.broadcast_to(exact, exp_arr.shape)
    bound = np.broadcast_to(bound, exp_arr.shape)
    finite = np.isfinite(exp_arr)
    # non-finite results: identical to NumPy
    np.testing.assert_array_equal(np.asarray(got)[~finite], np.asarray(expected)[~finite],
                                  err_msg=what + " (non-finite positions)")
    if not finite.any():
        return
    np_err = np.abs(exp_arr - exact)
    tol = np.maximum(2 * np_err, bound) + 2 * eps * np.abs(exact)
    err = np.abs(got_arr - exact)
    bad = finite & ~(err <= tol)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        raise AssertionError(
            f"{what}: {int(bad.sum())} element(s) outside the accuracy bound; first at {idx}: "
            f"got {got_arr[idx]!r}, numpy {exp_arr[idx]!r}, exact {exact[idx]!r}, "
            f"err {err[idx]:.3g} > tol {tol[idx]:.3g}")


def run_two_device_child(test_file, timeout):
    """Run ``test_file``'s tests marked two_devices in a child process that
    sees two PoCL CPU devices (POCL_DEVICES="pthread pthread"); its output,
    after the checks that it ran and passed (a skip where PoCL gave one
    device)."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, POCL_DEVICES="pthread pthread")
    env.pop("GPURED_DEVICE", None)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         os.path.join(root, "tests", test_file), "-k",
         "two_devices and not in_child"],
        cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    out = r.stdout + r.stderr
    if "one OpenCL device here" in out:
        pytest.skip("POCL_DEVICES='pthread pthread' gave one device (no "
                    "PoCL?):\n" + out[-2000:])
    assert r.returncode == 0, out[-6000:]
    assert " passed" in out and " failed" not in out, out[-3000:]
    return out
