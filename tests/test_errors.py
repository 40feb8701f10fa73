"""Bad inputs raise the same exception type as NumPy, leave out= untouched,
and inputs are never modified."""

import numpy as np
import pytest

from conftest import (ARG_OPS, DTYPES, FLOAT_DTYPES, LAYOUTS, OPS, data_kinds, dtype_id,
                      gp_call, make_data, make_layout, np_call)


def _sentinel_out(shape, dtype):
    dtype = np.dtype(dtype)
    val = True if dtype.kind == "b" else 77
    return np.full(shape, val, dtype)


def raises_like_numpy(op, a, expected_exc=None, **kw):
    """NumPy must raise for these arguments; gpured must raise the same type
    and must not touch ``out`` (if given) or the input.  Returns the exception."""
    out = kw.pop("out", None)
    np_kw = dict(kw)
    if out is not None:
        np_kw["out"] = out.copy()
    with pytest.raises(Exception) as np_info:
        np_call(op, a, **np_kw)
    exc_type = type(np_info.value)
    if expected_exc is not None:
        assert issubclass(exc_type, expected_exc), f"test premise: numpy raised {exc_type}"
    gp_kw = dict(kw)
    if out is not None:
        out_before = out.copy()
        gp_kw["out"] = out
    a_before = np.array(a, copy=True)
    with pytest.raises(exc_type) as info:
        gp_call(op, a, **gp_kw)
    if out is not None:
        np.testing.assert_array_equal(out, out_before, err_msg=f"{op}: out was modified",
                                      strict=True)
    np.testing.assert_array_equal(np.asarray(a), a_before, err_msg=f"{op}: input was modified")
    return info.value


# --------------------------------------------------------------------------
# unsupported dtypes -> TypeError naming the dtype
# --------------------------------------------------------------------------

UNSUPPORTED = {
    "object": lambda shape: np.arange(int(np.prod(shape)), dtype=np.int64).astype(object).reshape(shape),
    "str": lambda shape: np.full(shape, "ab"),
    # complex64/complex128 are supported (tests/test_complex.py)
    "clongdouble": lambda shape: (np.arange(int(np.prod(shape))) + 1j).astype(np.clongdouble).reshape(shape),
    "datetime64": lambda shape: np.arange(int(np.prod(shape))).astype("M8[s]").reshape(shape),
}


def _dtype_names(dt):
    dt = np.dtype(dt)
    names = {dt.name, str(dt), dt.str, dt.type.__name__, dt.type.__name__.rstrip("_")}
    if dt.kind == "U":
        names |= {"str", "unicode", "<U"}
    if dt.kind == "M":
        names.add("datetime64")
    return names


@pytest.mark.parametrize("kind", list(UNSUPPORTED))
@pytest.mark.parametrize("op", OPS)
def test_unsupported_dtype_raises_typeerror(op, kind):
    for shape in [(5,), (0,), (3, 4), ()]:
        a = UNSUPPORTED[kind](shape)
        a_before = a.copy()
        with pytest.raises(TypeError) as info:
            gp_call(op, a)
        msg = str(info.value)
        assert any(name in msg for name in _dtype_names(a.dtype)), \
            f"TypeError message {msg!r} does not name dtype {a.dtype}"
        np.testing.assert_array_equal(a, a_before)
    # with out=: untouched
    a = UNSUPPORTED[kind]((3, 4))
    out = _sentinel_out((4,), np.intp if op in ARG_OPS else np.float64)
    before = out.copy()
    with pytest.raises(TypeError):
        gp_call(op, a, axis=0, out=out)
    np.testing.assert_array_equal(out, before, strict=True)


# --------------------------------------------------------------------------
# bad axes
# --------------------------------------------------------------------------

BAD_AXES = [2, -3, 100, (0, 2), (-3,), (0, 1, 2)]
DUP_AXES = [(0, 0), (1, -1), (0, 1, 0)]


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.bool_], ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_bad_axis(op, dtype):
    a = make_data(dtype, (2, 3), "general")
    axes = [ax for ax in BAD_AXES if not (op in ARG_OPS and isinstance(ax, tuple))]
    for axis in axes:
        e = raises_like_numpy(op, a, np.exceptions.AxisError, axis=axis)
        assert isinstance(e, np.exceptions.AxisError)
        raises_like_numpy(op, a, np.exceptions.AxisError, axis=axis, keepdims=True)
    # 0-d arrays
    z = make_data(dtype, (), "general")
    raises_like_numpy(op, z, np.exceptions.AxisError, axis=1)
    # 1-d
    raises_like_numpy(op, make_data(dtype, (10,), "general"), np.exceptions.AxisError, axis=-2)


@pytest.mark.parametrize("op", [o for o in OPS if o not in ARG_OPS])
def test_duplicate_axis(op):
    a = make_data(np.int32, (2, 3), "general")
    for axis in DUP_AXES:
        raises_like_numpy(op, a, ValueError, axis=axis)
    out = _sentinel_out((3,), np.float64)
    raises_like_numpy(op, a, ValueError, axis=(0, 0), out=out)


@pytest.mark.parametrize("op", OPS)
def test_non_integer_axis(op):
    a = make_data(np.int32, (2, 3), "general")
    raises_like_numpy(op, a, TypeError, axis=1.0)
    raises_like_numpy(op, a, TypeError, axis="0")


@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_ops_reject_tuple_axis(op):
    a = make_data(np.int32, (2, 3), "general")
    raises_like_numpy(op, a, TypeError, axis=(0,))
    raises_like_numpy(op, a, TypeError, axis=(0, 1))


# --------------------------------------------------------------------------
# out= of the wrong shape / kind
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.bool_], ids=dtype_id)
@pytest.mark.parametrize("op", OPS)
def test_out_wrong_shape(op, dtype):
    if dtype not in DTYPES:
        pytest.skip("dtype not supported on this device")
    a = make_data(dtype, (4, 5), data_kinds(op)[0])
    rdt = np.asarray(np_call(op, a, axis=0)).dtype
    cases = [
        dict(axis=0, out=_sentinel_out((4,), rdt)),
        dict(axis=0, out=_sentinel_out((1, 5), rdt)),
        dict(axis=1, out=_sentinel_out((5,), rdt)),
        dict(axis=None, out=_sentinel_out((2,), rdt)),
        dict(axis=None, out=_sentinel_out((1, 1, 1), rdt)),
        dict(axis=0, keepdims=True, out=_sentinel_out((5,), rdt)),
        dict(axis=None, keepdims=True, out=_sentinel_out((), rdt)),
    ]
    for kw in cases:
        raises_like_numpy(op, a, ValueError, **kw)


@pytest.mark.parametrize("op", OPS)
def test_out_not_an_array(op):
    a = make_data(np.int32, (4, 5), data_kinds(op)[0])
    raises_like_numpy(op, a, TypeError, axis=0, out=[0, 0, 0, 0, 0])


@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_out_wrong_dtype(op):
    a = make_data(np.float32, (4, 5), "general")
    raises_like_numpy(op, a, TypeError, axis=0, out=_sentinel_out((5,), np.float64))


# --------------------------------------------------------------------------
# empty min / max / argmin / argmax -> ValueError
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("op", ["min", "max", "argmin", "argmax"])
def test_empty_reduction_without_identity(op, dtype):
    rdt = np.intp if op in ARG_OPS else dtype
    for shape, axis, out_shape in [((0,), None, ()), ((0, 3), 0, (3,)), ((3, 0), 1, (3,)),
                                   ((0, 3), None, ()), ((2, 0, 1), 1, (2, 1))]:
        a = np.zeros(shape, dtype)
        raises_like_numpy(op, a, ValueError, axis=axis)
        raises_like_numpy(op, a, ValueError, axis=axis, out=_sentinel_out(out_shape, rdt))
    if op in ("min", "max"):
        a = np.zeros((2, 0, 1), dtype)
        raises_like_numpy(op, a, ValueError, axis=(0, 1), keepdims=True)
        raises_like_numpy(op, a, ValueError, axis=(1, 2), keepdims=True)
    # an empty python list
    raises_like_numpy(op, [], ValueError)


# --------------------------------------------------------------------------
# inputs are never modified
# --------------------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64] + FLOAT_DTYPES,
                         ids=dtype_id)
def test_input_not_modified(dtype, layout):
    a = make_layout(dtype, (6, 7, 9), layout, "general")
    if a.dtype.kind == "f":
        if a.flags.writeable:
            a[0, 0, 0] = np.nan
            a[1, 2, 3] = -np.inf
    before_bytes = np.ascontiguousarray(a).tobytes()
    before_dtype, before_strides, before_flags = a.dtype, a.strides, dict(
        c=a.flags.c_contiguous, f=a.flags.f_contiguous, w=a.flags.writeable,
        aligned=a.flags.aligned)
    base_before = None if a.base is None else np.array(a.base, copy=True)
    for op in OPS:
        for axis in (None, 0, 2):
            gp_call(op, a, axis=axis)
        if op not in ARG_OPS:
            gp_call(op, a, axis=(0, 2), keepdims=True)
    assert np.ascontiguousarray(a).tobytes() == before_bytes
    assert a.dtype == before_dtype and a.strides == before_strides
    assert dict(c=a.flags.c_contiguous, f=a.flags.f_contiguous, w=a.flags.writeable,
                aligned=a.flags.aligned) == before_flags
    if base_before is not None:
        np.testing.assert_array_equal(np.asarray(a.base), base_before)


def test_input_not_modified_on_error():
    a = np.zeros((0, 4), np.float32)
    b = make_data(np.float64 if np.float64 in FLOAT_DTYPES else np.float32, (4, 5), "general")
    b_before = b.copy()
    for op in OPS:
        with pytest.raises(Exception):
            gp_call(op, b, axis=5)
        np.testing.assert_array_equal(b, b_before, strict=True)
    for op in ("min", "argmax"):
        with pytest.raises(ValueError):
            gp_call(op, a, axis=0)
    assert a.shape == (0, 4) and a.dtype == np.float32
