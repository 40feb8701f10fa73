"""Reductions: NumPy's signatures, normalised here, computed in the C core.

Every reduction becomes a 2-D problem for ``_core.reduce``: the kept axes
are moved to the front and the reduced axes to the back, and the array is
viewed as (M segments, L elements).  NumPy makes a copy only when no view of
that shape exists.  Result dtypes are taken from NumPy itself (by reducing a
one-element array of the input dtype), so promotion rules match exactly.
Python never touches element values.
"""
import builtins
import operator

import numpy as np

from . import _core
from ._array import (Array, _copy_into, _empty_on, _reshape_view, _upload_to,
                     same_device)

try:  # NumPy >= 2
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # pragma: no cover - NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

_NoValue = np._NoValue
_KNOBS = ("variant", "wg_size", "groups", "items", "ilp", "vw")
_SUPPORTED = "bool, int8-int64, uint8-uint64, float32, float64"


def _asarray(a):
    if isinstance(a, Array):
        same_device(a)  # released arrays fail here
        return a
    arr = a if isinstance(a, np.ndarray) else np.asarray(a)
    _check_dtype(arr.dtype, "input")
    return arr


def _check_dtype(dt, what):
    dt = np.dtype(dt)
    if dt.kind in "biu" or (dt.kind == "f" and dt.itemsize in (4, 8)):
        if dt.kind != "f" or dt.itemsize == 4 or _fp64():
            return dt
        raise TypeError("dtype float64 is not supported by device %r (no fp64)"
                        % _core.get_device()["name"])
    raise TypeError("gpured does not support %s dtype %s (supported: %s)"
                    % (what, dt, _SUPPORTED))


_FP64 = {}


def _fp64():
    i = _core.current_index()
    f = _FP64.get(i)
    if f is None:
        f = _FP64[i] = bool(_core.get_device()["fp64"])
    return f


_RD = {}


def _rd_of(opname, in_dtype, dtype):
    """Result dtype of a sum/prod (NumPy's promotion, cached) or None."""
    key = (opname, in_dtype, dtype)
    rd = _RD.get(key)
    if rd is None:
        if dtype is not None:
            _check_dtype(dtype, "result")
        rd = _UFUNC[opname].reduce(np.zeros(1, in_dtype), dtype=dtype).dtype
        _RD[key] = rd
    return rd


def _dev_full(opname, arr, dtype, kw):
    """Fast path: the full reduction of a C-contiguous device array (one
    core call, no view arithmetic); None where it does not apply."""
    if not arr._shape or 0 in arr._shape or not arr._is_c():
        return None
    if opname in ("add", "multiply"):
        rd = _rd_of(opname, arr.dtype, dtype)
        if rd == np.bool_:
            opname = "any" if opname == "add" else "all"
    else:
        rd = arr._dtype
    _check_dtype(rd, "result")
    isz = arr._dtype.itemsize
    n = arr.size
    res = _core.reduce((arr._buf, arr._dtype, arr._offset // isz, 1, n, n, 1),
                       opname, rd, **(_knobs(kw) if kw else {}))
    if res is NotImplemented:
        return None
    return Array._wrap(res, (), rd)


def _knobs(kw, allowed=_KNOBS, zero_ok=()):
    """Validated variant/knob keywords: variant a string, the others
    integers >= 1 (>= 0 for those in zero_ok); None means "choose"."""
    bad = [k for k in kw if k not in allowed]
    if bad:
        raise TypeError("unexpected keyword argument %r" % bad[0])
    knobs = {}
    for k, v in kw.items():
        if v is None:
            continue
        if k == "variant":
            if not isinstance(v, str):
                raise TypeError("variant must be a string")
            knobs[k] = v
        else:
            try:
                iv = operator.index(v)
            except TypeError:
                raise TypeError("%s must be an integer" % k) from None
            lo = 0 if k in zero_ok else 1
            if iv < lo:
                raise ValueError("%s must be at least %d (got %d)" % (k, lo, iv))
            knobs[k] = iv
    return knobs


def _put(res, out):
    """Hand a device result back: into out (a device Array or a NumPy
    array), or as it is."""
    if isinstance(out, Array):
        return _copy_into(res, out)
    if out is not None:
        np.copyto(out, res.get(), casting="unsafe")
        return out
    return res


def _axes(arr, axis):
    if axis is None:
        return tuple(range(arr.ndim))
    if arr.ndim == 0:
        # NumPy's reductions accept axis 0 / -1 (and tuples of them) on 0-d
        # arrays and reduce nothing.
        normalize_axis_tuple(axis, 1, "axis")
        return ()
    return normalize_axis_tuple(axis, arr.ndim, "axis")


def _as_2d(arr, axes, ordered):
    """View arr as (M, L): kept axes first, reduced axes last.

    With ``ordered`` False the reduced axes may be visited in any order
    (sums, min, ...): they are sorted by decreasing stride so that a
    Fortran-ordered or transposed array needs no copy.
    """
    kept = [i for i in range(arr.ndim) if i not in axes]
    red = list(axes) if ordered else sorted(
        axes, key=lambda i: -builtins.abs(arr.strides[i]))
    if not ordered and len(kept) == 0:
        # Full reduction, order-free: any contiguous layout is one segment.
        flat = arr.ravel(order="K")
        return flat.reshape(1, flat.size), ()
    M = int(np.prod([arr.shape[i] for i in kept], dtype=np.int64))
    L = int(np.prod([arr.shape[i] for i in red], dtype=np.int64))
    return arr.transpose(kept + red).reshape(M, L), tuple(arr.shape[i] for i in kept)


def _out_shape(arr, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(arr.shape))
    return tuple(n for i, n in enumerate(arr.shape) if i not in axes)


def _finish(res, arr, axes, keepdims, out, scalar_ok=True):
    """Shape the (M,) core result, then hand it back as NumPy would."""
    shape = _out_shape(arr, axes, keepdims)
    res = res.reshape(shape)
    if isinstance(res, Array):
        return _put(res, out)
    if out is not None:
        np.copyto(out, res, casting="unsafe")
        return out
    if res.ndim == 0 and scalar_ok:
        return res[()]
    return res


def _check_out(out, arr, axes, keepdims, name):
    if out is None:
        return
    if isinstance(out, Array):
        same_device(arr, out)
    elif not isinstance(out, np.ndarray):
        raise TypeError("out must be a numpy.ndarray or a gpured.Array")
    shape = _out_shape(arr, axes, keepdims)
    if out.shape != shape:
        raise ValueError("output parameter for reduction operation %s has the "
                         "wrong shape: found %s but expected %s"
                         % (name, out.shape, shape))
    if isinstance(out, np.ndarray) and not out.flags.writeable:
        raise ValueError("output array is read-only")


def _dev_view(a2):
    """The tuple _core.reduce takes for a 2-D device array (M, L)."""
    isz = a2.itemsize
    return (a2._buf, a2.dtype, a2._offset // isz, a2.shape[0], a2.shape[1],
            a2.strides[0] // isz, a2.strides[1] // isz)


def _dev_2d(arr, axes, ordered):
    """A device array as a 2-D (M, L) Array, kept axes first, reduced axes
    last (see _as_2d), copied on the device when no such view exists."""
    kept = [i for i in range(arr.ndim) if i not in axes]
    red = list(axes) if ordered else sorted(
        axes, key=lambda i: -builtins.abs(arr.strides[i]))
    M = int(np.prod([arr.shape[i] for i in kept], dtype=np.int64))
    L = int(np.prod([arr.shape[i] for i in red], dtype=np.int64))
    t = arr.transpose(kept + red)
    v = _reshape_view(t._sh(), (M, L))
    if v is None or v.strides[0] < 0 or v.strides[1] < 0:
        t = t.copy()
        v = _reshape_view(t._sh(), (M, L))
    return t._from_shadow(v)


def _dev_reduce(opname, arr, axes, rdtype, knobs, ordered):
    a2 = _dev_2d(arr, axes, ordered)
    res = _core.reduce(_dev_view(a2), opname, rdtype, **knobs)
    if res is NotImplemented:  # the plan reads rows: make them contiguous
        a2 = a2.copy()
        res = _core.reduce(_dev_view(a2), opname, rdtype, **knobs)
    rd = np.dtype(np.int64) if opname in ("argmin", "argmax") else np.dtype(rdtype)
    return Array(res, (a2.shape[0],), rd)


def _reduce(opname, arr, axes, rdtype, keepdims, out, knobs, ordered=False):
    """Reduce arr over axes with the core operator opname; arr non-empty."""
    if isinstance(arr, Array):
        return _dev_reduce(opname, arr, axes, rdtype, knobs, ordered)
    a2, _ = _as_2d(arr, axes, ordered)
    res = _core.reduce(a2, opname, rdtype, **knobs)
    return res


def _on_host(npfunc, arr, out, **kw):
    """npfunc on a device array's values (empty or axis-free reductions:
    no kernel to run); the result goes back to the device."""
    host_out = out.get() if isinstance(out, Array) else out
    r = npfunc(arr.get(), out=host_out, **kw)
    if isinstance(out, np.ndarray):
        return r
    r = _upload_to(arr._buf.device, np.asarray(r))
    return _copy_into(r, out) if isinstance(out, Array) else r


# NumPy functions used for empty inputs (no data: nothing to run) and the
# ufunc that applies ``initial`` to a result.
_UFUNC = {"add": np.add, "multiply": np.multiply, "minimum": np.minimum,
          "maximum": np.maximum}


def _generic(npfunc, opname, a, axis, dtype, out, keepdims, initial, kw):
    if (type(a) is Array and axis is None and out is None and not keepdims
            and initial is _NoValue):
        r = _dev_full(opname, a, dtype, kw)
        if r is not None:
            return r
    arr = _asarray(a)
    knobs = _knobs(kw)
    if dtype is not None:
        _check_dtype(dtype, "result")
    axes = _axes(arr, axis)
    if opname in ("add", "multiply"):
        probe_dtype = dtype if dtype is not None else (
            out.dtype if isinstance(out, (np.ndarray, Array)) else None)
        rd = _rd_of(opname, arr.dtype, probe_dtype)
    else:
        rd = arr.dtype
    _check_dtype(rd, "result")
    _check_out(out, arr, axes, keepdims, opname)
    if arr.size == 0 or len(axes) == 0:
        kwargs = {} if initial is _NoValue else {"initial": initial}
        if dtype is not None:
            kwargs["dtype"] = dtype
        if isinstance(arr, Array):
            return _on_host(npfunc, arr, out, axis=axis, keepdims=keepdims,
                            **kwargs)
        return npfunc(arr, axis=axis, out=out, keepdims=keepdims, **kwargs)
    core_op = opname
    if rd == np.bool_ and opname in ("add", "multiply"):
        core_op = "any" if opname == "add" else "all"  # NumPy's bool add/mul
    res = _reduce(core_op, arr, axes, rd, keepdims, out, knobs)
    if initial is not _NoValue:
        dev = isinstance(res, Array)
        res = _UFUNC[opname](res.get() if dev else res,
                             np.asarray(initial).astype(rd), dtype=rd)
        if dev:
            res = _upload_to(arr._buf.device, np.asarray(res))
    return _finish(res if isinstance(res, Array) else np.asarray(res), arr,
                   axes, keepdims, out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
        **kw):
    """Sum of array elements over the given axes, as :func:`numpy.sum`.

    Floating-point sums are compensated: float32 accumulates in float64 where
    the device has fp64, float64 with Knuth's TwoSum per work-item and in
    every combine, so the result is at least as accurate as NumPy's pairwise
    summation (typically correctly rounded).
    """
    return _generic(np.sum, "add", a, axis, dtype, out, keepdims, initial, kw)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
         **kw):
    """Product of array elements over the given axes, as :func:`numpy.prod`."""
    return _generic(np.prod, "multiply", a, axis, dtype, out, keepdims,
                    initial, kw)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, **kw):
    """Minimum over the given axes, as :func:`numpy.min` (NaN propagates)."""
    return _generic(np.min, "minimum", a, axis, None, out, keepdims, initial,
                    kw)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, **kw):
    """Maximum over the given axes, as :func:`numpy.max` (NaN propagates)."""
    return _generic(np.max, "maximum", a, axis, None, out, keepdims, initial,
                    kw)


def _logical(npfunc, opname, a, axis, out, keepdims, kw):
    arr = _asarray(a)
    knobs = _knobs(kw)
    axes = _axes(arr, axis)
    _check_out(out, arr, axes, keepdims, "logical_" + ("and" if opname == "all" else "or"))
    if arr.size == 0 or len(axes) == 0:
        if isinstance(arr, Array):
            return _on_host(npfunc, arr, out, axis=axis, keepdims=keepdims)
        return npfunc(arr, axis=axis, out=out, keepdims=keepdims)
    res = _reduce(opname, arr, axes, np.dtype(bool), keepdims, out, knobs)
    return _finish(res, arr, axes, keepdims, out)


def all(a, axis=None, out=None, keepdims=False, **kw):
    """Whether all elements are nonzero (NaN counts as nonzero), as
    :func:`numpy.all`."""
    return _logical(np.all, "all", a, axis, out, keepdims, kw)


def any(a, axis=None, out=None, keepdims=False, **kw):
    """Whether any element is nonzero, as :func:`numpy.any`."""
    return _logical(np.any, "any", a, axis, out, keepdims, kw)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """Arithmetic mean over the given axes, as :func:`numpy.mean`.

    The sum runs in float64 where the device has it (float32 results are
    rounded once at the end), so it is at least as accurate as NumPy's.
    """
    arr = _asarray(a)
    knobs = _knobs(kw)
    if dtype is not None:
        _check_dtype(dtype, "result")
    axes = _axes(arr, axis)
    rd = np.mean(np.zeros(1, arr.dtype), dtype=dtype).dtype
    _check_dtype(rd, "result")
    _check_out(out, arr, axes, keepdims, "add")
    if arr.size == 0 or len(axes) == 0:
        if isinstance(arr, Array):
            return _on_host(np.mean, arr, out, axis=axis, dtype=dtype,
                            keepdims=keepdims)
        return np.mean(arr, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    sd = np.dtype(np.float64) if (rd.kind == "f" and _fp64()) else rd
    s = _reduce("add", arr, axes, sd, keepdims, out, knobs)
    count = int(np.prod([arr.shape[i] for i in axes], dtype=np.int64))
    if isinstance(s, Array):
        # Divide on the device, rounding once to the result type.
        res = _copy_into(s, _empty_on(s._buf.device, s.shape, rd), div=count)
        return _finish(res, arr, axes, keepdims, out)
    res = np.true_divide(s, count, dtype=np.result_type(sd, np.float64)
                         if sd.kind != "f" else sd).astype(rd)
    return _finish(res, arr, axes, keepdims, out)


def _arg(npfunc, opname, a, axis, out, keepdims, kw):
    arr = _asarray(a)
    knobs = _knobs(kw)
    if out is not None:
        if isinstance(out, Array):
            same_device(arr, out)
        elif not isinstance(out, np.ndarray):
            raise TypeError("out must be a numpy.ndarray or a gpured.Array")
        if out.dtype != np.intp:
            raise TypeError("Cannot cast array data from dtype('int64') to %r "
                            "according to the rule 'safe'" % out.dtype)
    if arr.ndim == 0:
        # One element: index 0 (NumPy accepts axis 0 / -1 here).
        if axis is not None:
            normalize_axis_index(operator.index(axis), 1, "axis")
        if isinstance(arr, Array):
            return _on_host(npfunc, arr, out, axis=axis, keepdims=keepdims)
        return npfunc(arr, axis=axis, out=out, keepdims=keepdims)
    if axis is None:
        axes = tuple(range(arr.ndim))
        flat = True
    else:
        axes = (normalize_axis_index(operator.index(axis), arr.ndim, "axis"),)
        flat = False
    if arr.size == 0:
        if isinstance(arr, Array):
            return _on_host(npfunc, arr, out, axis=axis, keepdims=keepdims)
        return npfunc(arr, axis=axis, out=out, keepdims=keepdims)
    if flat and isinstance(arr, Array):
        res = _dev_reduce(opname, arr, axes, np.dtype(np.int64), knobs, True)
        shape = (1,) * arr.ndim if keepdims else ()
    elif flat:
        # NumPy's argmin over the flattened (C-order) array.
        res = _core.reduce(arr.reshape(1, arr.size), opname, np.dtype(np.int64),
                           **knobs)
        if keepdims:
            shape = (1,) * arr.ndim
        else:
            shape = ()
    else:
        res = _reduce(opname, arr, axes, np.dtype(np.int64), keepdims, out,
                      knobs, ordered=True)
        shape = _out_shape(arr, axes, keepdims)
    if isinstance(res, Array):
        res = res.reshape(shape)  # int64 is intp on every 64-bit platform
        if out is not None and out.shape != shape:
            raise ValueError("output array has wrong shape: %s, expected %s"
                             % (out.shape, shape))
        return _put(res, out)
    res = res.astype(np.intp, copy=False).reshape(shape)
    if out is not None:
        if out.shape != shape:
            raise ValueError("output array has wrong shape: %s, expected %s"
                             % (out.shape, shape))
        np.copyto(out, res, casting="unsafe")
        return out
    return res[()] if res.ndim == 0 else res


def argmin(a, axis=None, out=None, keepdims=False, **kw):
    """Index of the first minimum (of the first NaN, if any), as
    :func:`numpy.argmin`."""
    return _arg(np.argmin, "argmin", a, axis, out, keepdims, kw)


def argmax(a, axis=None, out=None, keepdims=False, **kw):
    """Index of the first maximum (of the first NaN, if any), as
    :func:`numpy.argmax`."""
    return _arg(np.argmax, "argmax", a, axis, out, keepdims, kw)


# --------------------------------------------------------------- introspection

_OPS = {"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum",
        "all": "all", "any": "any", "mean": "add", "argmin": "argmin",
        "argmax": "argmax"}


def _result_dtype(op, in_dtype, dtype=None):
    """The dtype the C core produces for ``op`` (NumPy's promotion)."""
    if op in ("sum", "prod"):
        return _UFUNC[_OPS[op]].reduce(np.zeros(1, in_dtype), dtype=dtype).dtype
    if op == "mean":
        return np.dtype(np.float64) if _fp64() else np.dtype(np.float32)
    if op in ("all", "any"):
        return np.dtype(bool)
    if op in ("argmin", "argmax"):
        return np.dtype(np.int64)
    return np.dtype(in_dtype)


def variants(op="sum", dtype="float32"):
    """Names of the variants of ``op`` the current device can run on
    ``dtype`` input ("auto" first).  Asking any reduction for a variant not
    listed raises :class:`gpured.VariantUnavailable` with the reason."""
    if op not in _OPS:
        raise ValueError("unknown operation %r (one of %s)" % (op, ", ".join(_OPS)))
    dt = _check_dtype(dtype, "input")
    rd = _result_dtype(op, dt)
    if op == "mean" and rd.kind == "f":
        rd = np.dtype(np.float64) if _fp64() else rd
    return _core.variants(_OPS[op], dt, rd)


def _core_call(op, a, axis, dtype, kw):
    """(array, 2-D view, result dtype, knobs) the core runs for op, or None
    for a reduction with nothing to run (empty input or no axes)."""
    if op not in _OPS:
        raise ValueError("unknown operation %r (one of %s)" % (op, ", ".join(_OPS)))
    arr = _asarray(a)
    knobs = _knobs(kw)
    axes = _axes(arr, axis)
    if arr.size == 0 or len(axes) == 0:
        return None
    ordered = op in ("argmin", "argmax")
    if isinstance(arr, Array):
        a2 = _dev_2d(arr, axes, ordered)
    else:
        a2, _ = _as_2d(arr, axes, ordered)
    return arr, a2, _result_dtype(op, arr.dtype, dtype), knobs


def timeit(op, a, axis=None, dtype=None, reps=10, **kw):
    """Time ``op(a, axis=axis, dtype=dtype, **kw)`` on the device.

    The input is uploaded once (used in place on CPU devices), then the
    kernels run ``reps`` times after one warm-up run; times come from OpenCL
    profiling events.  Returns a dict: ``seconds`` (median device time),
    ``gbps`` (input bytes / seconds / 1e9), ``times`` (every run), ``plan``
    (as :func:`explain`) and ``result`` (the reduced values, shape (M,)).
    """
    core = _core_call(op, a, axis, dtype, kw)
    if core is None:
        raise ValueError("timeit needs a non-empty reduction")
    arr, a2, rd, knobs = core
    if isinstance(a2, Array):
        if _core.bench_reduce(_dev_view(a2), _OPS[op], rd, 1, **knobs)[0] \
                is NotImplemented:  # the plan reads rows: make them contiguous
            a2 = a2.copy()
        res, ns, plan = _core.bench_reduce(_dev_view(a2), _OPS[op], rd,
                                           int(reps) + 1, **knobs)
        res = Array(res, (a2.shape[0],),
                    np.dtype(np.int64) if op in ("argmin", "argmax") else rd)
    else:
        res, ns, plan = _core.bench_reduce(a2, _OPS[op], rd, int(reps) + 1,
                                           **knobs)
    times = [t / 1e9 for t in ns[1:]]
    sec = sorted(times)[len(times) // 2]
    return {"seconds": sec, "gbps": arr.nbytes / sec / 1e9 if sec > 0 else float("inf"),
            "times": times, "plan": plan, "result": res}


def explain(op, a, axis=None, dtype=None, **kw):
    """The plan ``op(a, axis=axis, dtype=dtype, **kw)`` would run, and why.

    Returns a dict: variant, kernel, wg_size, vw, ilp, groups (work-groups
    per segment in the first pass), chunk, passes, accumulator, why, ...
    """
    core = _core_call(op, a, axis, dtype, kw)
    if core is None:
        return {"variant": None, "passes": 0,
                "why": "empty reduction: answered without running a kernel"}
    arr, a2, rd, knobs = core
    return _core.explain(_dev_view(a2) if isinstance(a2, Array) else a2,
                         _OPS[op], rd, **knobs)
