"""out= of another dtype (issue 39): every family x out dtype against NumPy.

NumPy's rule with no dtype= (numpy 2.4 and 1.26.4 agree on every case here):
ufunc.reduce and ufunc.accumulate resolve their loop from (out, input,
out), so the loop runs in the promotion of the input's dtype and out's,
and the result is cast into out: sum(int8, out=bool) adds int8s (so
[-128, -128] is False), sum(float64, out=float32) adds float64s,
cumsum(uint32, out=int8) int64s, sum(int64, out=uint64) float64s.  A reduction without an identity
(minimum, maximum, fmin, fmax) first copies each result's first element
(index 0 along the reduced axes) into out and reads it back into the
loop dtype: np.min(float32 [-1, 0], out=bool) compares 1.0 with 0.0 and
answers False.  An initial= goes through out the same way.  ptp is
maximum.reduce into out, then out - minimum (NumPy's same-kind check).
Not here: out-of-range float -> integer casts (C-undefined; x86 and the
devices differ), mixed-sign 64-bit integers (their float64 loop casts
out of range), and NumPy's extra reads of out every 8192 elements of its
buffer (gpured reads the first element through out once).
"""
import warnings

import numpy as np
import pytest

import gpured

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REDUCE = ["sum", "prod", "min", "max", "nansum", "nanprod", "nanmin", "nanmax", "ptp"]
SCAN = ["cumsum", "cumprod", "nancumsum", "nancumprod"]
OUTS = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float32", "float64"]

# small 2-d inputs: the first row is not every column's extreme, so the
# first element read back through out shows (-1 into bool is True, 255
# into int8 is -1, 300 into uint8 is 44)
INPUTS = {
    "bool": np.array([[True, False, True], [False, False, True]]),
    "int8": np.array([[-1, 0, 100], [0, -128, 3]], np.int8),
    "uint8": np.array([[255, 1, 0], [7, 200, 128]], np.uint8),
    "int16": np.array([[255, 1, -300], [1000, 0, 2]], np.int16),
    "int64": np.array([[2**40 + 1, -5, 3], [0, 2**33, -1]], np.int64),
    "float32": np.array([[-1.0, 0.0, 0.5], [0.0, -1.0, 2.5]], np.float32),
    "float64": np.array([[1.5, 0.25, -2.0], [0.0, 3.0, -0.5]]),
}
DEVICE_INPUTS = ["int8", "float32"]  # (device runs kept few: kernel builds)


def _skip(a, odt):
    """Combinations whose NumPy answer is a C-undefined cast."""
    o = np.dtype(odt)
    if a.dtype.kind == "f" and o.kind == "u" and (a < 0).any():
        return True
    if a.dtype.kind in "iu" and o.kind in "iu" and np.result_type(a.dtype, o).kind == "f":
        return True
    return False


def _call(mod, fn, a, out, **kw):
    return getattr(mod, fn)(a, out=out, **kw)


def _expect(fn, a, odt, kw, oshape):
    try:
        return getattr(np, fn)(a, out=np.zeros(oshape, odt), **kw), None
    except Exception as e:  # noqa: BLE001 - the type is compared
        return None, type(e)


def _check(fn, a, odt, kw, mode):
    probe = np.cumsum if fn in SCAN else np.sum
    oshape = np.shape(probe(np.zeros(a.shape), axis=kw.get("axis")))
    exp, err = _expect(fn, a, odt, kw, oshape)
    out = np.zeros(oshape, odt)
    x = a
    if mode == "dev":
        x, out = gpured.to_device(a), gpured.to_device(out)
    old = gpured.placement("current" if mode == "current" else "auto")
    try:
        if err is not None:
            with pytest.raises(err):
                _call(gpured, fn, x, out, **kw)
            return
        got = _call(gpured, fn, x, out, **kw)
    finally:
        gpured.placement(old)
    assert got is out
    got = got.get() if mode == "dev" else got
    what = f"{fn}({a.dtype}, out={np.dtype(odt)}, {kw}) [{mode}]"
    assert got.dtype == exp.dtype, what
    if exp.dtype.kind == "f":
        np.testing.assert_allclose(got, exp, rtol=4 * np.finfo(exp.dtype).eps, err_msg=what)
    else:
        np.testing.assert_array_equal(got, exp, err_msg=what)


def _kws(fn):
    if fn in SCAN:
        return [{"axis": 1}, {"axis": None}]
    if fn == "ptp":
        return [{"axis": 0}]
    return [{"axis": 0}, {"axis": None}, {"axis": 1, "initial": 5}]


@pytest.mark.parametrize("odt", OUTS)
@pytest.mark.parametrize("fn", REDUCE + SCAN)
def test_out_dtype_host(fn, odt):
    """NumPy inputs (the host path) into an out of every dtype."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in INPUTS.values():
            if _skip(a, odt):
                continue
            for kw in _kws(fn):
                _check(fn, a, odt, kw, "np")


@pytest.mark.parametrize("odt", OUTS)
@pytest.mark.parametrize("fn", ["sum", "min", "max", "nanmin", "ptp"])
def test_out_dtype_device(fn, odt):
    """Device Arrays into a device out of every dtype (the scans: the
    examples below; their dtype rule is the api layer's, as on the host)."""
    for name in DEVICE_INPUTS:
        a = INPUTS[name]
        if _skip(a, odt):
            continue
        for kw in _kws(fn):
            if kw["axis"] is not None:  # (axis=None: the host test's)
                _check(fn, a, odt, kw, "dev")


@pytest.mark.parametrize("fn,a,odt,exp", [
    ("min", np.array([0.0, -1.0], np.float32), "bool", True),     # 0 -> 0.0, min -1
    ("min", np.array([-1.0, 0.0], np.float32), "bool", False),    # -1 -> 1.0, min 0
    ("max", np.array([1, 255], np.int16), "int8", -1),            # 1, then 255
    ("max", np.array([255, 1, -300], np.int16), "int8", 1),       # 255 -> -1, max 1
    ("sum", np.array([-128, -128], np.int8), "bool", False),      # int8 adds: 0
    ("sum", np.array([1e8, 1.0, -1e8]), "float32", 1.0),          # float64 adds
    ("cumsum", np.array([-128, -128], np.int8), "bool", [True, False]),
])
def test_out_dtype_rule_examples(fn, a, odt, exp):
    """The rule's telling cases, as literal answers (numpy 2.4's)."""
    for mode in ("np", "dev"):
        oshape = a.shape if fn == "cumsum" else ()
        out = np.zeros(oshape, odt)
        x = a
        if mode == "dev":
            x, out = gpured.to_device(a), gpured.to_device(out)
        got = getattr(gpured, fn)(x, out=out)
        got = got.get() if mode == "dev" else got
        np.testing.assert_array_equal(got, np.array(exp, odt), err_msg=mode)
        np.testing.assert_array_equal(getattr(np, fn)(a, out=np.zeros(oshape, odt)),
                                      np.array(exp, odt))
