"""Plain, deterministic examples of what tests/test_properties.py found
(issue 39): each is a disagreement with NumPy, minimised, compared with
NumPy's own answer at test time.  The ones still wrong are
xfail(strict=True): CI stays green, and a fix turns the test into an XPASS,
which fails the run until the mark is removed (and the matching exclusion
in test_properties.py's strategies, which names the test here).  The
fixed ones stay as plain tests (out= of another dtype: also
tests/test_outdtype.py, every family x out dtype).
"""
import numpy as np
import pytest

import gpured

# NumPy's own warnings on these inputs (mean of empty slice, invalid casts)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _get(x):
    return x.get() if isinstance(x, gpured.Array) else np.asarray(x)


def _both(fn, a, mode, out=None, **kw):
    """(gpured's out values, NumPy's) for fn(a, out=out, **kw); mode "np":
    NumPy input and out, "dev": device input and out."""
    exp = getattr(np, fn)(a, out=out.copy(), **kw)
    if mode == "dev":
        ga, go = gpured.to_device(a), gpured.to_device(out)
    else:
        ga, go = a, out.copy()
    got = getattr(gpured, fn)(ga, out=go, **kw)
    assert got is go
    return _get(go), exp


def _same(got, exp):
    got, exp = np.asarray(got), np.asarray(exp)
    assert got.dtype == exp.dtype and got.shape == exp.shape, (got, exp)
    assert np.array_equal(got, exp, equal_nan=exp.dtype.kind == "f"), \
        f"gpured {got!r}, numpy {exp!r}"


# --------------------------------------------------------------------------
# min/max with out= of another dtype (fixed): NumPy (dtype= absent) runs the
# loop in the promotion of the input's dtype and out's, after copying each
# result's first element into out and reading it back (minimum.reduce has
# no identity); gpured reduced in the input's dtype and cast the result.
# They differed where the cast into out is not monotone: into bool (from a
# non-bool input), integers narrowed or re-signed.  gpured now reduces in
# the promoted dtype with the first elements read back through out
# (api_reduce.c: red_first_via).  Not pinned: the float->unsigned /
# uint64->signed cases, where NumPy's answer is an out-of-range float->int
# cast (C-undefined, x86-specific; on device Arrays cumsum/cumprod/cummin
# of int16 [255, 1, -300] into uint64 give 2**64-1 where NumPy's float64
# loop and x86 cast give 2**64-44 / 2**64-300: the same undefined cast,
# saturated on the device).
# --------------------------------------------------------------------------

MINMAX_OUT = [
    # (id, fn, input, out dtype): NumPy's answer, gpured's before the fix
    ("min-f32-into-bool", "min", np.array([-1.0, 0.0], np.float32), np.bool_),  # False, True
    ("min-int8-into-bool", "min", np.array([-1, 0, 100], np.int8), np.bool_),  # False, True
    ("max-f32-into-bool", "max", np.array([-1.0, 0.0], np.float32), np.bool_),  # True, False
    ("max-int8-into-bool", "max", np.array([-1, 0], np.int8), np.bool_),  # True, False
    ("min-int8-into-uint8", "min", np.array([-1, 0, 100], np.int8), np.uint8),  # 0, 255
    ("max-int8-into-uint8", "max", np.array([-1, 0, 100], np.int8), np.uint8),  # 255, 100
    ("min-int16-into-uint16", "min", np.array([-2, 5], np.int16), np.uint16),  # 5, 65534
    ("max-int32-into-uint32", "max", np.array([-2, 5], np.int32), np.uint32),  # 2**32-2, 5
]


@pytest.mark.parametrize("mode", ["np", "dev"])
@pytest.mark.parametrize("fn,a,odt", [c[1:] for c in MINMAX_OUT], ids=[c[0] for c in MINMAX_OUT])
def test_minmax_out_other_kind(fn, a, odt, mode):
    got, exp = _both(fn, a, mode, out=np.zeros((), odt))
    _same(got, exp)


def test_minmax_out_other_dtype_monotone_casts_agree():
    """The neighbours that agreed before the fix (monotone casts, or agreeing by chance)."""
    for fn, a, odt in [("min", np.array([255, 1, -300], np.int16), np.int8),
                       ("max", np.array([255, 1, -300], np.int16), np.int8),
                       ("min", np.array([1.5, 2.5], np.float64), np.int32),
                       ("max", np.array([3, 1], np.uint8), np.int8),
                       ("max", np.array([-1.0, 0.5], np.float64), np.float32)]:
        for mode in ("np", "dev"):
            got, exp = _both(fn, a, mode, out=np.zeros((), odt))
            _same(got, exp)


@pytest.mark.parametrize("mode", ["np", "dev"])
@pytest.mark.parametrize("fn", ["sum", "prod"])
def test_sum_out_mixed_sign_64(fn, mode):
    """sum/prod of int64 into a uint64 out (fixed): NumPy's loop is float64
    (int64 with uint64 promotes to it)."""
    # NumPy: sum 2**63 (float64 rounds 2**63-3), prod 3 * 2**53 (float64
    # rounds 2**53+1); gpured gave 2**63-3 and 3 * 2**53 + 3
    a = np.array([2**62, 2**62, -3] if fn == "sum" else [2**53 + 1, 3], np.int64)
    got, exp = _both(fn, a, mode, out=np.zeros((), np.uint64))
    _same(got, exp)


# --------------------------------------------------------------------------
# device input + dtype= + out= of another dtype + initial=
# --------------------------------------------------------------------------

# (fixed: initial= was dropped (sum 3.0, NumPy 4.0) or its bits written raw
# into out (prod 8e-45, NumPy 6.0); dispatch_reduce.c: red_finish_initial)
@pytest.mark.parametrize("fn,a,dtype,odt,initial", [
    ("sum", np.array([1, 2], np.int32), np.int8, np.float32, 1),      # 3.0, NumPy 4.0
    ("sum", np.array([1.0, 2.0], np.float32), np.float32, np.float64, 1),  # 3.0, 4.0
    ("prod", np.array([1, 2], np.int32), np.int8, np.float32, 3),     # 8e-45, 6.0
    ("sum", np.array([False]), np.float32, np.bool_, 1),              # False, True
], ids=["sum-int32-dtype-int8-into-f32", "sum-f32-dtype-f32-into-f64",
        "prod-int32-dtype-int8-into-f32", "sum-bool-dtype-f32-into-bool"])
def test_sum_dtype_out_initial_device(fn, a, dtype, odt, initial):
    got, exp = _both(fn, a, "dev", out=np.zeros((), odt), dtype=dtype, initial=initial)
    _same(got, exp)


def test_sum_dtype_out_initial_host_agrees():
    """The same calls on NumPy inputs (either placement) are right."""
    for place in ("auto", "current"):
        old = gpured.placement(place)
        try:
            got, exp = _both("sum", np.array([1, 2], np.int32), "np",
                             out=np.zeros((), np.float32), dtype=np.int8, initial=1)
        finally:
            gpured.placement(old)
        _same(got, exp)


# --------------------------------------------------------------------------
# errors: which check comes first
# --------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["np", "dev"])
@pytest.mark.parametrize("fn", ["min", "max", "nanmin", "nanmax"])
def test_minmax_where_bad_axis(fn, mode):
    """(fixed: ValueError, no identity, came before the axis check)"""
    a = np.zeros(3)
    with pytest.raises(np.exceptions.AxisError):
        getattr(np, fn)(a, axis=1, where=False)
    x = gpured.to_device(a) if mode == "dev" else a
    with pytest.raises(np.exceptions.AxisError):
        getattr(gpured, fn)(x, axis=1, where=False)


@pytest.mark.parametrize("fn", ["mean", "var", "std"])
def test_mean_0d_axis_where_mask(fn):
    """(fixed, issue 39; was: mean/var/std of a 0-d input with axis=0 and a where= mask: NumPy
    answers nan (its where path skips the axis check), gpured raises AxisError)"""
    a = np.array(1.0)
    exp = getattr(np, fn)(a, axis=0, where=False)
    got = getattr(gpured, fn)(a, axis=0, where=False)
    assert type(got) is type(exp)
    _same(got, exp)


# --------------------------------------------------------------------------
# ptp, average
# --------------------------------------------------------------------------

@pytest.mark.parametrize("odt", [np.int8, np.float32])
def test_ptp_bool_device_out(odt):
    """(fixed: TypeError 'numpy boolean subtract')"""
    got, exp = _both("ptp", np.array([True, False]), "dev", out=np.zeros((), odt))
    _same(got, exp)


def test_ptp_bool_host_out_agrees():
    got, exp = _both("ptp", np.array([True, False]), "np", out=np.zeros((), np.int8))
    _same(got, exp)


def test_ptp_narrower_int_out_host():
    """(fixed: 0; NumPy -21698, max taken into out, then subtract)"""
    a = np.array([2526497193922298463, -4246685573565524191], np.int64)
    exp = np.ptp(a, out=np.zeros((), np.int16))
    old = gpured.placement("auto")
    try:
        got = gpured.ptp(a, out=np.zeros((), np.int16))
    finally:
        gpured.placement(old)
    _same(got, exp)


def test_ptp_narrower_int_out_device_agrees():
    a = np.array([2526497193922298463, -4246685573565524191], np.int64)
    got = gpured.ptp(gpured.to_device(a), out=gpured.to_device(np.zeros((), np.int16)))
    _same(got.get(), np.ptp(a, out=np.zeros((), np.int16)))


def test_cumsum_narrower_int_out_host():
    """(fixed: [0, 0], NumPy [95, 96]: the loop is int64, the promotion of
    uint32 and int8, not that of uint64 and int8, float64)"""
    a = np.array([3653403231, 1], np.uint32)
    exp = np.cumsum(a, out=np.zeros(2, np.int8))
    old = gpured.placement("auto")
    try:
        got = gpured.cumsum(a, out=np.zeros(2, np.int8))
    finally:
        gpured.placement(old)
    _same(got, exp)


def test_cumsum_narrower_int_out_device_agrees():
    a = np.array([3653403231, 1], np.uint32)
    got = gpured.cumsum(gpured.to_device(a), out=gpured.to_device(np.zeros(2, np.int8)))
    _same(got.get(), np.cumsum(a, out=np.zeros(2, np.int8)))


@pytest.mark.parametrize("mode", ["np", "dev"])
@pytest.mark.parametrize("shape,axis", [((0, 3), 1), ((0, 0), 0)])
def test_average_empty_result_raises(shape, axis, mode):
    """(fixed, issue 39; was: average of an empty input with an empty result: NumPy raises
    ZeroDivisionError, gpured answers an empty array)"""
    a = np.zeros(shape)
    with pytest.raises(ZeroDivisionError):
        np.average(a, axis=axis)
    with pytest.raises(ZeroDivisionError):
        gpured.average(gpured.to_device(a) if mode == "dev" else a, axis=axis)


@pytest.mark.parametrize("mode", ["np", "dev"])
@pytest.mark.parametrize("shape,axis", [((1, 3), 0), ((3, 1), 1), ((1, 2, 1), 0)])
def test_average_weights_along_length_one_axis(shape, axis, mode):
    """(fixed, issue 39; was: average with 1-d weights along an axis of length 1 of an N-d input
    raises ValueError ('where: a bool mask of the array's shape'); NumPy answers)"""
    a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    w = np.array([3.0])
    exp = np.average(a, axis=axis, weights=w)
    got = gpured.average(gpured.to_device(a) if mode == "dev" else a, axis=axis, weights=w)
    _same(_get(got), exp)


def test_average_weights_along_longer_axis_agrees():
    a = np.arange(1.0, 7.0).reshape(3, 2)
    w = np.array([1.0, 2.0, 3.0])
    _same(gpured.average(a, axis=0, weights=w), np.average(a, axis=0, weights=w))


def test_average_empty_full_reduction_agrees():
    for a in (np.zeros(0), np.zeros((0, 3))):
        exp = np.average(a)
        got = gpured.average(a)
        assert type(got) is type(exp), f"gpured {type(got).__name__}, numpy {type(exp).__name__}"
        _same(got, exp)


@pytest.mark.parametrize("mode", ["np", "dev"])
def test_ptp_empty_bool(mode):
    """(fixed, issue 39; was: ptp of an empty bool input raises TypeError (numpy boolean
    subtract); NumPy ValueError (zero-size array, no identity))"""
    a = np.zeros(0, bool)
    with pytest.raises(ValueError):
        np.ptp(a)
    with pytest.raises(ValueError):
        gpured.ptp(gpured.to_device(a) if mode == "dev" else a)


@pytest.mark.parametrize("place", ["auto", "current"])
@pytest.mark.parametrize("fn,axis", [("nanargmin", 0), ("nanargmax", -1)])
def test_nanarg_0d_axis(fn, axis, place):
    """(fixed, issue 39; was: nanargmin/nanargmax of a 0-d NumPy input with axis=0 or -1 raise
    AxisError; NumPy answers 0 (as argmin does, and gpured's argmin))"""
    a = np.array(1.0, np.float32)
    exp = getattr(np, fn)(a, axis=axis)
    old = gpured.placement(place)
    try:
        got = getattr(gpured, fn)(a, axis=axis)
    finally:
        gpured.placement(old)
    assert type(got) is type(exp)
    _same(got, exp)


@pytest.mark.parametrize("fn", ["nanmean", "nanvar", "nanstd"])
def test_nanmean_0d_axis(fn):
    """(fixed, issue 39; was: nanmean/nanvar/nanstd of a 0-d NumPy input with axis=0 raise
    AxisError; NumPy answers (1.0 / 0.0))"""
    a = np.array(1.0, np.float32)
    exp = getattr(np, fn)(a, axis=0)
    got = getattr(gpured, fn)(a, axis=0)
    _same(got, exp)


def test_arg_0d_axis_agrees():
    a = np.array(1.0, np.float32)
    for fn in ("argmin", "argmax"):
        _same(getattr(gpured, fn)(a, axis=0), getattr(np, fn)(a, axis=0))
    _same(gpured.nanargmin(gpured.to_device(a), axis=0).get(), np.nanargmin(a, axis=0))


# --------------------------------------------------------------------------
# nan* functions with an integer dtype=
# --------------------------------------------------------------------------

@pytest.mark.xfail(strict=False, reason="nansum/nanprod/nancumsum/nancumprod of floats with an "
                   "integer dtype= on the device cast NaN to the integer before skipping it: "
                   "nansum([nan, 2.], dtype=int32) -2147483646, NumPy 2 (PoCL; NVIDIA's "
                   "conversion of NaN gives 0, which hides it for the scans: not strict)")
@pytest.mark.parametrize("mode", ["current", "dev"])
@pytest.mark.parametrize("fn,dtype", [("nansum", np.int32), ("nanprod", np.int32),
                                      ("nancumprod", np.int8), ("nancumsum", np.int64)])
def test_nan_functions_integer_dtype(fn, dtype, mode):
    a = np.array([np.nan, 2.0, 3.0])
    exp = getattr(np, fn)(a, dtype=dtype)
    old = gpured.placement("current")
    try:
        got = getattr(gpured, fn)(gpured.to_device(a) if mode == "dev" else a, dtype=dtype)
    finally:
        gpured.placement(old)
    _same(_get(got), exp)


@pytest.mark.xfail(strict=False, reason="sum of floats with an integer dtype= on the device: "
                   "NaN, infinities and floats out of the integer's range convert otherwise "
                   "than on x86 (C-undefined casts): sum(float32 [nan, 1], dtype=uint32) is "
                   "0 on PoCL, NumPy 1 (found by test_properties.py on 2026-11-28; not "
                   "strict: another device's conversion may agree)")
@pytest.mark.parametrize("value", [np.nan, np.inf, 5e9])
def test_float_dtype_integer_out_of_range(value):
    a = np.array([value, 1.0], np.float32)
    old = gpured.placement("current")
    try:
        got = gpured.sum(a, dtype=np.uint32)
    finally:
        gpured.placement(old)
    _same(got, np.sum(a, dtype=np.uint32))


def test_nan_functions_integer_dtype_host_agrees():
    a = np.array([np.nan, 2.0, 3.0])
    old = gpured.placement("auto")
    try:
        for fn in ("nansum", "nanprod", "nancumsum", "nancumprod"):
            _same(getattr(gpured, fn)(a, dtype=np.int32), getattr(np, fn)(a, dtype=np.int32))
    finally:
        gpured.placement(old)


# --------------------------------------------------------------------------
# reduceat
# --------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axis,idx", [((2, 0), 0, [3]), ((0, 1), 1, [1]), ((0, 3), 1, [5])])
def test_reduceat_empty_device_bad_index(shape, axis, idx):
    """(fixed, issue 39; was: an empty result, device indices unchecked)"""
    a = np.zeros(shape)
    with pytest.raises(IndexError):
        np.add.reduceat(a, idx, axis=axis)
    with pytest.raises(IndexError):
        gpured.reduceat(gpured.to_device(a), gpured.to_device(np.array(idx, np.intp)),
                        axis=axis)


@pytest.mark.parametrize("mode", ["np", "current", "dev"])
@pytest.mark.parametrize("op", ["add", "multiply"])
@pytest.mark.parametrize("value", [0.5, -0.3, np.nan])
def test_reduceat_float_dtype_bool(value, op, mode):
    """(fixed, issue 39; was: floats with dtype=bool converted by truncation,
    0.5, -0.3, nan -> False; NumPy by truth: bool add / multiply are logical
    or / and, as in the reductions)"""
    a = np.array([value], np.float32)
    exp = getattr(np, op).reduceat(a, [0], dtype=bool)
    old = gpured.placement("current" if mode == "current" else "auto")
    try:
        got = gpured.reduceat(gpured.to_device(a) if mode == "dev" else a, [0], op=op,
                              dtype=bool)
    finally:
        gpured.placement(old)
    _same(_get(got), exp)


def test_float_dtype_bool_reductions_agree():
    """sum / prod / cumsum of floats with dtype=bool are right (truth)."""
    a = np.array([0.5, -0.3])
    for fn in ("sum", "prod", "cumsum"):
        _same(getattr(gpured, fn)(a, dtype=bool), getattr(np, fn)(a, dtype=bool))


def test_reduceat_empty_bad_index_host_indices_agree():
    a = np.zeros((2, 0))
    for x in (a, gpured.to_device(a)):
        with pytest.raises(IndexError):
            gpured.reduceat(x, [3], axis=0)


# --------------------------------------------------------------------------
# var / std accuracy (found by test_properties.py, 2026-11-28, 200 examples)
# --------------------------------------------------------------------------

def test_var_int8_host_accuracy():
    """(fixed, issue 39; was: var of 888 small int8s on the host path summed
    the squared deviations one by one, 35 ulp off: 4.070651732813864, NumPy
    4.070651732813896, exact 4.07065173281389498; now compensated)"""
    a = np.random.default_rng(0).integers(-3, 4, 888).astype(np.int8)
    old = gpured.placement("auto")
    try:
        for fn in ("var", "std"):
            got, exp = getattr(gpured, fn)(a), getattr(np, fn)(a)
            assert abs(got - exp) <= 4 * np.spacing(exp), (fn, got, exp)
    finally:
        gpured.placement(old)
