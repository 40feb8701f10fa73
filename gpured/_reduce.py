"""Reductions: NumPy's signatures and docstrings; the work is the C core's.

Each function is one call into ``_core.reduce`` with the arguments as
given: argument checks with NumPy's errors, result dtypes, layouts, copies,
``out``, ``initial`` and the choice of kernels happen in C (csrc/api.c,
csrc/dispatch.c, csrc/policy.c).  Python never touches element values,
except NumPy's all-NaN rules of nanmin/nanmax (a RuntimeWarning, read off
host results) and nanargmin/nanargmax (a ValueError, from the elements at
the returned indices; a device array's slices are checked with one more
nanmax pass).
"""
import warnings

import numpy as np

from . import _complex as _cx, _core, _kernels, _split
from . import _elementwise as _ew

_NoValue = np._NoValue
_reduce = _core.reduce
_ndarray = np.ndarray
_SPLIT_MIN = _split.MIN_BYTES
_Dev = _core.ArrayBase


def _plain(a, where=True):
    """Whether a call goes straight to the core: a real device array and
    no mask, so none of the Python steps apply (complex pairing, mask
    conversion, the host split).  The small calls' host time: a 1 KiB
    device sum is ~9 us a call on the H200 host, ~1 of it in Python."""
    return where is True and isinstance(a, _Dev) and a.dtype.kind != "c"


def _bool_check(where, kinds=(np.ndarray, _core.ArrayBase)):
    """NumPy's rule for a where= array (an instance of kinds): cast to
    bool under "safe", so only bool arrays; NumPy scalars and Python
    objects convert by truth."""
    if isinstance(where, kinds):
        if where.dtype != np.bool_:
            raise TypeError(f"Cannot cast array data from {where.dtype!r} to "
                            "dtype('bool') according to the rule 'safe'")


def _mask(a, where):
    """where= as the core takes it: None for NumPy's default (``True``
    itself), else a bool array of a's shape: NumPy's conversion (arrays
    cast to bool under "safe": only bool arrays; lists and scalars by
    truth) and broadcasting.  A host input gets a host mask laid out as
    the input (the kernels then read it at the input's offsets); a device
    input keeps a device mask of its shape."""
    if where is True:
        return None
    dev = isinstance(a, _core.ArrayBase)
    _bool_check(where)
    if isinstance(where, _core.ArrayBase):
        if dev and where.shape == a.shape:
            return where
        where = where.get()
    w = np.asarray(where, dtype=bool)
    x = a if dev or isinstance(a, np.ndarray) else np.asarray(a)
    if w.shape == x.shape and (dev or w.strides == tuple(
            s // x.itemsize for s in x.strides)):
        return w  # already the input's layout
    return _like(x, w)


def _extreme(name, ufunc, a, axis, out, keepdims, initial, where, kw):
    """min/max/nanmin/nanmax: one core call (which checks NumPy's identity
    rule for a mask after the axes, as NumPy does)."""
    m = _mask(a, where)
    return _where_reduce(name, a, axis, None, out, keepdims, initial, kw, m)


def _where_reduce(name, a, axis, dtype, out, keepdims, initial, kw, m):
    """One core call (or a call split between two devices where placement
    says so: _split); m: _mask's answer (None: no mask)."""
    if m is None:
        if type(a) is _ndarray and a.nbytes >= _SPLIT_MIN and \
                _split.eligible(name, a, axis, out, initial, kw, dtype):
            res = _split.reduce(name, a, dtype, keepdims)
            if res is not None:
                return res
        return _reduce(name, a, axis, dtype, out, keepdims, initial, kw)
    return _reduce(name, a, axis, dtype, out, keepdims, initial, kw, m)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
        where=True, **kw):
    """Sum of array elements over the given axes, as :func:`numpy.sum`.

    Floating-point sums are compensated: float32 accumulates in float64 where
    the device has fp64, float64 with Knuth's TwoSum per work-item and in
    every combine, so the result is at least as accurate as NumPy's pairwise
    summation (typically correctly rounded).  ``exact=True`` (also on
    :func:`mean`, :func:`nansum`, :func:`nanmean`): the exact sum rounded
    once, the same bits on every device and the host path (docs/guide.md,
    "Exact sums").  Extra keywords: ``variant``, ``wg_size``, ``groups``,
    ``items``, ``ilp``, ``vw`` (see :func:`gpured.variants`) and ``device``
    (for NumPy inputs).

    ``where``: NumPy's mask (broadcast against ``a``); the kernels read it
    beside the elements and fold a masked-out element as the identity, in
    the same pass (every reduction with ``where=`` works this way).
    """
    if _plain(a, where):
        return _reduce("sum", a, axis, dtype, out, keepdims, initial, kw)
    if _cx.is_cx(a):
        r = _kernels.cx_sum("sum", _cx.arr(a), axis, dtype, out, keepdims,
                            initial, where, kw)
        return r if r is not None else _cx.reduce(
            sum, a, axis, dtype, out, keepdims, initial, where, kw)
    return _where_reduce("sum", a, axis, dtype, out, keepdims, initial, kw,
                         _mask(a, where))


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
         where=True, **kw):
    """Product of array elements over the given axes, as :func:`numpy.prod`."""
    if _plain(a, where):
        return _reduce("prod", a, axis, dtype, out, keepdims, initial, kw)
    if _cx.is_cx(a):
        return _kernels.cx_prod(_cx.arr(a), axis, dtype, out, keepdims,
                                initial, where, False, kw)
    return _where_reduce("prod", a, axis, dtype, out, keepdims, initial, kw,
                         _mask(a, where))


def nansum(a, axis=None, dtype=None, out=None, keepdims=False,
           initial=_NoValue, where=True, **kw):
    """Sum treating NaNs as zero, as :func:`numpy.nansum`.

    The NaN test is fused into the kernels' loads (no masking pass): the
    same kernels, accuracy and knobs as :func:`sum`.  All-NaN and empty
    slices give 0; integer and bool inputs are summed as by :func:`sum`.
    """
    if _cx.is_cx(a):
        r = _kernels.cx_sum("nansum", _cx.arr(a), axis, dtype, out, keepdims,
                            initial, where, kw)
        return r if r is not None else _cx.reduce(
            sum, a, axis, dtype, out, keepdims, initial, _cx.valid(a, where),
            kw)
    return _where_reduce("nansum", a, axis, dtype, out, keepdims, initial, kw,
                         _mask(a, where))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False,
            initial=_NoValue, where=True, **kw):
    """Product treating NaNs as one, as :func:`numpy.nanprod` (the NaN test
    fused into the loads, as :func:`nansum`)."""
    if _cx.is_cx(a):
        return _kernels.cx_prod(_cx.arr(a), axis, dtype, out, keepdims,
                                initial, where, True, kw)
    return _where_reduce("nanprod", a, axis, dtype, out, keepdims, initial,
                         kw, _mask(a, where))


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue,
        where=True, **kw):
    """Minimum over the given axes, as :func:`numpy.min` (NaN propagates).
    A ``where`` mask needs an ``initial`` (NumPy's rule)."""
    if _plain(a, where):
        return _reduce("min", a, axis, None, out, keepdims, initial, kw)
    if _cx.is_cx(a):
        return _cx_extreme("min", a, axis, out, keepdims, initial, where, kw)
    return _extreme("min", "minimum", a, axis, out, keepdims, initial, where,
                    kw)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue,
        where=True, **kw):
    """Maximum over the given axes, as :func:`numpy.max` (NaN propagates).
    A ``where`` mask needs an ``initial`` (NumPy's rule)."""
    if _plain(a, where):
        return _reduce("max", a, axis, None, out, keepdims, initial, kw)
    if _cx.is_cx(a):
        return _cx_extreme("max", a, axis, out, keepdims, initial, where, kw)
    return _extreme("max", "maximum", a, axis, out, keepdims, initial, where,
                    kw)


def _cx_extreme(name, a, axis, out, keepdims, initial, where, kw):
    """min / max of complex a in NumPy's order (real parts, then
    imaginary): _cx.lexi, or NumPy's own call beside where it does not
    take the arguments (initial=, where=)."""
    r = _cx.lexi(_lexi_fns(), name, a, axis, out, keepdims, kw) if \
        initial is _NoValue and where is True else None
    return r if r is not None else _cx.numpy_call(name, a, dict(
        axis=axis, out=out, keepdims=keepdims, initial=initial,
        where=where), kw, _beside)


def _lexi_fns():
    """The functions _complex.lexi runs on: this module's real ones and
    the one-pass complex extreme (gpured/_kernels.py)."""
    return (min, max, any, argmax, _kernels.cx_extreme)


def _beside(a, host):
    """A result computed on the host, as a device array on a's device (the
    functions that finish a device array's reductions in NumPy)."""
    return _core.to_device(np.asarray(host), None, a.device_index)


def _warn_all_nan(res):
    if isinstance(res, (np.ndarray, np.generic)) and res.dtype.kind in "fc" \
            and np.isnan(res).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return res


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue,
           where=True, **kw):
    """Minimum ignoring NaNs, as :func:`numpy.nanmin` (NumPy's fmin
    reduction): fused into the kernels (NaN is the fold's identity, no
    masking pass).  A slice of NaNs only gives NaN with NumPy's
    RuntimeWarning (host results); empty slices raise ValueError."""
    if _cx.is_cx(a):
        return _cx.numpy_call("nanmin", a, dict(
            axis=axis, out=out, keepdims=keepdims, initial=initial,
            where=where), kw, _beside)
    return _warn_all_nan(_extreme("nanmin", "fmin", a, axis, out, keepdims,
                                  initial, where, kw))


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue,
           where=True, **kw):
    """Maximum ignoring NaNs, as :func:`numpy.nanmax` (see :func:`nanmin`)."""
    if _cx.is_cx(a):
        return _cx.numpy_call("nanmax", a, dict(
            axis=axis, out=out, keepdims=keepdims, initial=initial,
            where=where), kw, _beside)
    return _warn_all_nan(_extreme("nanmax", "fmax", a, axis, out, keepdims,
                                  initial, where, kw))


def _nanarg(name, a, axis, out, keepdims, kw):
    dev = isinstance(a, _core.ArrayBase)
    x = a if dev else np.asarray(a)
    if x.dtype.kind not in "fc" or x.size == 0:
        return _reduce(name, a, axis, None, out, keepdims, _NoValue, kw)
    # mode 3: the device checks the indices it found (a kernel and one
    # small read): nan_at None where it did not (host memory: looked at
    # here), False where no index found is a NaN
    res, nan_at = _reduce(name, a, axis, None, out, keepdims, _NoValue, kw,
                          None, 3)
    if nan_at is False:
        return res
    if dev and nan_at is None and (axis is None or x.ndim == 1):
        # the element found, read back (a few bytes): not NaN, no check
        if not np.isnan(float(x.reshape(-1)[int(np.asarray(res).reshape(-1)[0])])):
            return res
    if dev:
        # one nanmax pass: NaN exactly where a slice holds NaNs only
        bad = np.isnan(np.asarray(_reduce("nanmax", a, axis, None, None, False,
                                          _NoValue, {})))
        if np.any(bad):
            raise ValueError("All-NaN slice encountered")
        return res
    idx = np.asarray(res)
    if axis is None or x.ndim == 0:
        suspect = np.isnan(x.reshape(-1)[int(idx.reshape(-1)[0])])
    else:
        if not keepdims:
            idx = np.expand_dims(idx, axis)
        suspect = np.isnan(np.take_along_axis(x, idx.astype(np.intp), axis)).any()
    # the element found is NaN only where the slice's smallest (largest)
    # value is +inf (-inf) or it holds NaNs only: tell them apart
    if suspect and np.isnan(x).all(axis=axis).any():
        raise ValueError("All-NaN slice encountered")
    return res


def _nanarg_index(a, name, axis=None, keepdims=False, **kw):
    """nanargmin/nanargmax's index with NaN read as +inf/-inf and no
    all-NaN check: gpured.dask's chunks (a chunk's slice of NaNs only is
    no error there; the combine decides)."""
    return _reduce(name, a, axis, None, None, keepdims, _NoValue, kw, None,
                   3)[0]


def nanargmin(a, axis=None, out=None, *, keepdims=False, **kw):
    """Index of the first minimum ignoring NaNs, as :func:`numpy.nanargmin`:
    NaN reads as +inf in the kernels' loads (as NumPy replaces it), and a
    slice of NaNs only raises ValueError."""
    if _cx.is_cx(a):
        r = _cx.nanarg(_lexi_fns(), "nanargmin", a, axis, out, keepdims, kw)
        return r if r is not None else _cx.numpy_call("nanargmin", a, dict(
            axis=axis, out=out, keepdims=keepdims), kw, _beside)
    return _nanarg("nanargmin", a, axis, out, keepdims, kw)


def nanargmax(a, axis=None, out=None, *, keepdims=False, **kw):
    """Index of the first maximum ignoring NaNs, as :func:`numpy.nanargmax`
    (NaN reads as -inf; see :func:`nanargmin`)."""
    if _cx.is_cx(a):
        r = _cx.nanarg(_lexi_fns(), "nanargmax", a, axis, out, keepdims, kw)
        return r if r is not None else _cx.numpy_call("nanargmax", a, dict(
            axis=axis, out=out, keepdims=keepdims), kw, _beside)
    return _nanarg("nanargmax", a, axis, out, keepdims, kw)


def ptp(a, axis=None, out=None, keepdims=False, **kw):
    """Range of values (maximum - minimum), as :func:`numpy.ptp`: one pass
    whose state carries the maximum and the minimum together, finished as
    their difference in the input's dtype (integers wrap, NaN propagates,
    booleans raise NumPy's TypeError).  A device array gives a device
    array on its device.  An ``out`` of another dtype follows NumPy's own
    steps (the maximum cast into ``out``, then the minimum subtracted; a
    device ``out``: that subtraction on the host, its result copied in)."""
    if _cx.is_cx(a):
        r = _cx.lexi(_lexi_fns(), "ptp", a, axis, out, keepdims, kw)
        return r if r is not None else _cx.numpy_call("ptp", a, dict(
            axis=axis, out=out, keepdims=keepdims), kw, _beside)
    if out is not None and isinstance(out, (np.ndarray, _core.ArrayBase)) \
            and out.dtype != (a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype):
        mx = max(a, axis=axis, out=out, keepdims=keepdims, **kw)
        mn = min(a, axis=axis, keepdims=keepdims, **kw)
        if isinstance(mn, _core.ArrayBase):
            mn = np.asarray(mn)
        if isinstance(out, np.ndarray):
            return np.subtract(mx, mn, out=out)
        h = np.asarray(mx)
        np.subtract(h, mn, out=h)
        _core.device_copy(_beside(out, h), out)
        return out
    return _reduce("ptp", a, axis, None, out, keepdims, _NoValue, kw)


def count_nonzero(a, axis=None, *, keepdims=False, **kw):
    """Number of nonzero elements (NaN counts, -0.0 does not), as
    :func:`numpy.count_nonzero`: one sum into intp with the test fused into
    the kernels' loads; intp results as NumPy's."""
    if _cx.is_cx(a):
        return _cx.numpy_call("count_nonzero", a, dict(
            axis=axis, keepdims=keepdims), kw, _beside)
    if isinstance(a, _core.ArrayBase):
        if a.size == 0:  # zeros, on the array's device
            return _beside(a, np.count_nonzero(
                np.empty(a.shape, a.dtype), axis=axis, keepdims=keepdims))
    elif np.size(a) == 0:
        return np.count_nonzero(a, axis=axis, keepdims=keepdims)  # zeros
    return _reduce("count_nonzero", a, axis, np.intp, None, keepdims, _NoValue, kw)


def _nancount(a, axis=None, keepdims=False, **kw):
    """The elements of each slice that are not NaN (intp, as NumPy's
    ``np.sum(~isnan(a), dtype=intp)``): one sum with the test fused into
    the loads (GR_CVT_VALID): gpured.dask's nanmean and nanvar partials."""
    x = a if isinstance(a, _core.ArrayBase) else np.asarray(a)
    return _count_valid(a, x, axis, keepdims, kw)


def _count_valid(a, x, axis, keepdims, kw):
    if x.size == 0:
        return np.count_nonzero(np.zeros(x.shape, bool), axis=axis,
                                keepdims=keepdims)
    return _reduce("_count_valid", a, axis, np.intp, None, keepdims,
                   _NoValue, kw)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *,
            where=True, **kw):
    """Mean ignoring NaNs, as :func:`numpy.nanmean`, in one pass: the
    folds sum the elements that are not NaN and count them (in float64
    where the device has it), and the kernels finish the quotient.
    Integer and bool inputs are averaged by :func:`mean`.  A slice of NaNs
    only gives NaN with NumPy's "Mean of empty slice" RuntimeWarning
    (NumPy inputs)."""
    if _cx.is_cx(a) and (dtype is None or _cx.dtype_is_cx(dtype)):
        r = _kernels.cx_sum("nanmean", _cx.arr(a), axis, dtype, out,
                            keepdims, _NoValue, where, kw)
        return r if r is not None else _cx.reduce(
            mean, a, axis, dtype, out, keepdims, _NoValue,
            _cx.valid(a, where), kw, sum)
    dev = isinstance(a, _core.ArrayBase)
    x = a if dev else np.asarray(a)
    if x.dtype.kind not in "fc":
        return mean(a, axis, dtype, out, keepdims, where=where, **kw)
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact):
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and not np.issubdtype(out.dtype, np.inexact):
        raise TypeError("If a is inexact, then out must be inexact")
    if dev and out is not None and not isinstance(out, _core.ArrayBase):
        raise TypeError("nanmean of a device array: out= must be a device "
                        "array")
    if dtype is None and out is not None:
        dtype = out.dtype  # NumPy's sum into out runs in out's dtype
    # where=: a masked-out element reads as NaN in the fused pass (neither
    # summed nor counted)
    return _where_reduce("nanmean", a, axis, dtype, out, keepdims, _NoValue,
                         kw, _mask(a, where))


def _like(x, w):
    """w (a NumPy array broadcastable to x's shape) as an array of x's
    shape laid out as x (the kernels then read it at x's offsets)."""
    w = np.broadcast_to(w, x.shape)
    if isinstance(x, _core.ArrayBase):
        f = x.flags
        return np.asarray(w, order="F" if f["F_CONTIGUOUS"] and
                          not f["C_CONTIGUOUS"] else "C")
    if w.strides == x.strides and w.itemsize == x.itemsize:
        return w
    m = np.empty_like(x, dtype=w.dtype) if x.ndim else np.empty((), w.dtype)
    np.copyto(m, w)
    return m


def average(a, axis=None, weights=None, returned=False, *,
            keepdims=_NoValue, **kw):
    """Weighted average, as :func:`numpy.average`, in one pass: the kernels
    read each weight beside its element and sum ``a * w`` and ``w``
    together, finishing their quotient (in float64 where the device has
    it, rounded once into NumPy's result dtype).  Weights of ``a``'s shape
    are read in place where they share its layout; 1-d weights along
    ``axis`` (NumPy's other form) are broadcast on the host first.
    NumPy's ZeroDivisionError where a slice's weights sum to 0 (looked
    for where a result is not finite; a device array's results are read
    back to tell: a wait per call); ``returned=True`` sums the weights
    once more.  Without weights: :func:`mean`."""
    dev = isinstance(a, _core.ArrayBase)
    kd = {} if keepdims is _NoValue else {"keepdims": keepdims}
    if not dev and isinstance(a, np.ndarray) and type(a) is not np.ndarray:
        return np.average(a, axis, weights, returned, **kd)  # subclasses
    x = a if dev else np.asarray(a)
    keep = bool(keepdims) if keepdims is not _NoValue else False
    if axis is not None:
        from numpy.lib.array_utils import normalize_axis_tuple
        axis = normalize_axis_tuple(axis, x.ndim, argname="axis")
    if weights is None:
        avg = mean(a, axis, keepdims=keep, **kw)
        shape = np.shape(avg)
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:
            # NumPy's scale a.size / avg.size, computed even when not
            # returned
            raise ZeroDivisionError("division by zero")
        if not returned:
            return avg
        scl = np.dtype(avg.dtype).type(x.size / size)
        if shape != ():
            scl = np.broadcast_to(scl, shape).copy()
            scl = _beside(a, scl) if dev else scl
        return avg, scl
    wdev = isinstance(weights, _core.ArrayBase)
    w = weights if wdev else np.asarray(weights)
    along = False  # 1-d weights along the one reduced axis: read in place
    if w.shape != x.shape:
        _weights_check(x.shape, w.shape, axis)
        along = len(axis) == 1 and w.ndim == 1
        if not along:
            w = (w.get() if wdev else w).transpose(np.argsort(axis)).reshape(
                tuple(s if ax in axis else 1 for ax, s in enumerate(x.shape)))
            wdev = False
    if x.dtype.kind in "biu":
        rt = np.result_type(x.dtype, w.dtype, "f8")
    else:
        rt = np.result_type(x.dtype, w.dtype)
    if rt.kind != "f" or w.dtype.kind not in "biuf" or x.size == 0:
        # complex, object, empty: NumPy's answer (on a's device)
        r = np.average(x.get() if dev else x, axis,
                       w.get() if wdev else w, returned, **kd)
        if not dev:
            return r
        return tuple(_beside(a, t) for t in r) if returned else _beside(a, r)
    if along:
        # NumPy's check first: the weights' one sum (NumPy weights: NumPy's
        # own sum of a vector as long as one slice, no device call)
        scl = sum(w, None, rt) if wdev else np.add.reduce(w, dtype=rt)
        if (float(scl) if wdev else scl) == 0.0:  # one value read back
            raise ZeroDivisionError("Weights sum to zero, can't be "
                                    "normalized")
        avg = _reduce("_average", a, axis, rt, None, keep, _NoValue, kw, w)
        if not returned:
            return avg
        scl = np.broadcast_to(np.asarray(scl), np.shape(avg)).copy()
        return avg, (_beside(a, scl) if dev else scl)
    wf = w if wdev else _like(x, w)
    avg = _reduce("_average", a, axis, rt, None, keep, _NoValue, kw, wf)
    scl = None
    if not _all_true(np.isfinite(avg), dev):
        # NumPy's check, where it can fail: a slice whose weights sum to 0
        scl = sum(wf, axis, rt, None, keep)
        if not _all_true(np.not_equal(scl, 0.0), dev):
            raise ZeroDivisionError("Weights sum to zero, can't be "
                                    "normalized")
    if not returned:
        return avg
    if scl is None:
        scl = sum(wf, axis, rt, None, keep)
    if dev and not isinstance(scl, _core.ArrayBase):
        scl = _beside(a, scl)
    return avg, scl


def _all_true(x, dev):
    """Whether every element of x (a bool result of a ufunc) is true: a
    device array's test runs on the device, one bool read back."""
    return bool(all(x)) if dev else bool(np.all(x))


def _weights_check(shape, wshape, axis):
    """NumPy's average: weights of another shape than a's must be 1-d
    along the (normalised) axes, with its messages."""
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and "
                        "weights differ.")
    if wshape != tuple(shape[ax] for ax in axis):
        raise ValueError("Shape of weights must be consistent with "
                         "shape of a along specified axis.")


def _var(name, a, axis, dtype, out, ddof, keepdims, correction, where, kw):
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided "
                             "simultaneously.")
        ddof = correction
    if _cx.is_cx(a) and (dtype is None or _cx.dtype_is_cx(dtype)):
        # var(re) + var(im) (see _complex.py); nan*: NaN in either part
        # drops the element
        if name.startswith("nan"):
            where = _cx.valid(a, where)
        return _cx.var(var, sum, name, a, axis, dtype, out, ddof, keepdims,
                       where, _NoValue, kw, mean)
    dev = isinstance(a, _core.ArrayBase)
    x = a if dev else np.asarray(a)
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact) \
            or x.dtype.kind == "c" or (dtype is not None and
                                       np.dtype(dtype).kind == "c"):
        # integer/bool/complex results: NumPy's arithmetic, NumPy's answer
        if dev:
            if out is not None:
                raise TypeError(f"{name} of a device array: out= is not "
                                "supported with this dtype")
            if isinstance(where, _core.ArrayBase):
                where = where.get()
            return _beside(a, getattr(np, name)(np.asarray(x), axis=axis, dtype=dtype,
                                                ddof=ddof, keepdims=keepdims,
                                                where=where))
        return getattr(np, name)(x, axis=axis, dtype=dtype, out=out,
                                 ddof=ddof, keepdims=keepdims, where=where)
    # the core warns as NumPy where some slice has n - ddof <= 0 (nanvar,
    # where=: where it counted on the host).  where=: a masked-out element
    # is neither summed nor counted, in the same pass
    return _where_reduce(name, a, axis, dtype, out, keepdims, ddof, kw,
                         _mask(a, where))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
        where=True, correction=_NoValue, **kw):
    """Variance over the given axes, as :func:`numpy.var`, in one pass.

    Each slice is read once: the kernels sum ``y = x - K`` and ``y * y``
    (K one element of the slice, so no E[x^2] - E[x]^2 cancellation) in
    float64 where the device has it, through every variant's combine, and
    finish ``(sum y^2 - (sum y)^2 / n) / max(n - ddof, 0)``.  NumPy's
    dtypes (float inputs keep theirs, integers and bools give float64),
    ``ddof``/``correction``, and its "Degrees of freedom <= 0" warning.
    ``where``: NumPy's mask, in the same pass: a masked-out element reads
    as NaN (neither summed nor counted, as nanvar skips NaN), a kept NaN
    as +inf (its slice's result NaN, as NumPy's), each slice's count of
    kept elements carried beside its states; the shift K is the first
    kept element.
    """
    return _var("var", a, axis, dtype, out, ddof, keepdims, correction,
                where, kw)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
        where=True, correction=_NoValue, **kw):
    """Standard deviation, as :func:`numpy.std`: :func:`var`'s one pass,
    its square root taken in the kernels."""
    return _var("std", a, axis, dtype, out, ddof, keepdims, correction,
                where, kw)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
           where=True, correction=_NoValue, **kw):
    """Variance ignoring NaNs, as :func:`numpy.nanvar`: :func:`var`'s pass
    with NaN elements adding nothing, over each slice's count of the
    others, counted in the same pass.  A slice whose count is at most
    ``ddof`` (all NaN, say) gives NaN with NumPy's warning (NumPy inputs)."""
    return _var("nanvar", a, axis, dtype, out, ddof, keepdims, correction,
                where, kw)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
           where=True, correction=_NoValue, **kw):
    """Standard deviation ignoring NaNs, as :func:`numpy.nanstd` (see
    :func:`nanvar`)."""
    return _var("nanstd", a, axis, dtype, out, ddof, keepdims, correction,
                where, kw)


def all(a, axis=None, out=None, keepdims=False, *, where=True, **kw):
    """Whether all elements are nonzero (NaN counts as nonzero), as
    :func:`numpy.all`."""
    if _cx.is_cx(a):
        return _cx.numpy_call("all", a, dict(
            axis=axis, out=out, keepdims=keepdims, where=where), kw, _beside)
    return _where_reduce("all", a, axis, None, out, keepdims, _NoValue, kw,
                         _mask(a, where))


def any(a, axis=None, out=None, keepdims=False, *, where=True, **kw):
    """Whether any element is nonzero, as :func:`numpy.any`."""
    if _cx.is_cx(a):
        return _cx.numpy_call("any", a, dict(
            axis=axis, out=out, keepdims=keepdims, where=where), kw, _beside)
    return _where_reduce("any", a, axis, None, out, keepdims, _NoValue, kw,
                         _mask(a, where))


def _warn_empty_mask(res, m, axis, keepdims):
    """NumPy's "Mean of empty slice" where a slice's mask is all False
    (its result is NaN: looked for only there)."""
    r = np.asarray(res)
    if r.dtype.kind == "f" and np.isnan(r).any() and np.any(np.asarray(
            sum(m, axis, np.intp, None, keepdims)) == 0):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=4)


def _masked_mean(a, where, m, axis, dtype, out, keepdims, kw):
    """NumPy's _mean under a where mask: the masked sum (one pass, the
    mask read beside the elements) over each slice's count of the mask
    (NumPy's: the broadcast ``where`` summed as intp), with its warnings.
    A device array's results (M values) are divided on the host and
    travel back."""
    dev = isinstance(a, _core.ArrayBase)
    x = a if dev else np.asarray(a)
    if isinstance(where, _core.ArrayBase) or np.asarray(where).dtype == np.bool_:
        cnt = np.asarray(sum(m, axis, np.intp, None, keepdims))
    else:  # NumPy sums a non-bool where as it is (0.5 counts 0)
        cnt = np.add.reduce(np.broadcast_to(np.asarray(where), x.shape),
                            axis=axis, dtype=np.intp, keepdims=keepdims)
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.float64
    if np.any(cnt == 0):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
    host_out = out if isinstance(out, np.ndarray) else None
    tot = sum(a, axis, dtype, host_out, keepdims, where=m, **kw)
    if isinstance(tot, np.ndarray):
        return np.true_divide(tot, cnt, out=tot, casting="unsafe")
    if isinstance(tot, np.generic):
        return tot.dtype.type(tot / cnt)
    h = np.asarray(tot)
    res = np.true_divide(h, cnt, out=np.empty_like(h), casting="unsafe")
    if out is not None:
        _core.device_copy(_beside(a, res), out)
        return out
    return _beside(a, res)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True,
         **kw):
    """Arithmetic mean over the given axes, as :func:`numpy.mean`.

    The sum runs in float64 where the device has it (float32 results are
    rounded once at the end), so it is at least as accurate as NumPy's.
    With an ``out`` of another dtype the sum is cast into it and divided
    there, as NumPy does.  ``where``: NumPy's mask; the masked sum is one
    pass, divided by each slice's count of the mask.
    """
    if _plain(a, where):
        return _reduce("mean", a, axis, dtype, out, keepdims, _NoValue, kw)
    if _cx.is_cx(a):
        r = _kernels.cx_sum("mean", _cx.arr(a), axis, dtype, out, keepdims,
                            _NoValue, where, kw)
        return r if r is not None else _cx.reduce(
            mean, a, axis, dtype, out, keepdims, _NoValue, where, kw, sum)
    m = _mask(a, where)
    if m is None:
        return _reduce("mean", a, axis, dtype, out, keepdims, _NoValue, kw)
    bool_where = isinstance(where, _core.ArrayBase) or \
        np.asarray(where).dtype == np.bool_
    dev = isinstance(a, _core.ArrayBase)
    x = a if dev else np.asarray(a)
    rt = np.dtype(dtype) if dtype is not None else (
        x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64))
    if not bool_where or x.dtype.kind == "c" or rt.kind not in "f" or (
            out is not None and (out.dtype != rt or (
                isinstance(out, np.ndarray) and not out.flags.c_contiguous))):
        # NumPy's own steps: its count of a non-bool where (0.5 counts
        # 0), an out of another dtype (the sum lands there first)
        return _masked_mean(a, where, m, axis, dtype, out, keepdims, kw)
    # one pass: the masked sum and the mask's count together (GR_VAR 4)
    res = _reduce("mean", a, axis, dtype, out, keepdims, _NoValue, kw, m)
    if not dev:
        _warn_empty_mask(res, m, axis, keepdims)
    return res


def argmin(a, axis=None, out=None, keepdims=False, **kw):
    """Index of the first minimum (of the first NaN, if any), as
    :func:`numpy.argmin`."""
    if _plain(a):
        return _reduce("argmin", a, axis, None, out, keepdims, _NoValue, kw)
    if _cx.is_cx(a):
        r = _cx.lexi(_lexi_fns(), "argmin", a, axis, out, keepdims, kw)
        return r if r is not None else _cx.numpy_call("argmin", a, dict(
            axis=axis, out=out, keepdims=keepdims), kw, _beside)
    return _where_reduce("argmin", a, axis, None, out, keepdims, _NoValue, kw,
                         None)


def argmax(a, axis=None, out=None, keepdims=False, **kw):
    """Index of the first maximum (of the first NaN, if any), as
    :func:`numpy.argmax`."""
    if _plain(a):
        return _reduce("argmax", a, axis, None, out, keepdims, _NoValue, kw)
    if _cx.is_cx(a):
        r = _cx.lexi(_lexi_fns(), "argmax", a, axis, out, keepdims, kw)
        return r if r is not None else _cx.numpy_call("argmax", a, dict(
            axis=axis, out=out, keepdims=keepdims), kw, _beside)
    return _where_reduce("argmax", a, axis, None, out, keepdims, _NoValue, kw,
                         None)


# ----------------------------------------------------------------- reduceat

_AT_OPS = {"add": "add", "sum": "add", "multiply": "multiply",
           "prod": "multiply", "minimum": "minimum", "min": "minimum",
           "maximum": "maximum", "max": "maximum",
           "logical_and": "logical_and", "all": "logical_and",
           "logical_or": "logical_or", "any": "logical_or"}


def _at_op(op):
    name = getattr(op, "__name__", op) if isinstance(op, np.ufunc) else op
    try:
        return _AT_OPS[name]
    except (KeyError, TypeError):
        raise ValueError("reduceat: unknown operation %r (add, multiply, "
                         "minimum, maximum, logical_and, logical_or, or "
                         "those ufuncs)" % (op,)) from None


def reduceat(a, indices, axis=0, dtype=None, out=None, op="add", **kw):
    """Reductions over segments of one axis given by offsets, as NumPy's
    ``ufunc.reduceat``: ``np.add.reduceat(a, indices, axis, dtype, out)`` is
    ``gpured.reduceat(a, indices, axis, dtype, out)``.

    ``op``: "add" (or "sum"), "multiply" ("prod"), "minimum" ("min"),
    "maximum" ("max"), "logical_and" ("all"), "logical_or" ("any"), or
    the NumPy ufunc.  Result ``i`` along ``axis`` reduces
    ``a[indices[i]:indices[i + 1]]`` where ``indices[i] < indices[i + 1]``,
    else it is ``a[indices[i]]``; the last runs to the end (CSR rows are
    ``reduceat(values, row_ptr[:-1])`` for rows that are not empty).
    NumPy's result dtypes; float32 sums accumulate in float64 where the
    device has it (NumPy's reduceat adds in float32, one element at a
    time).  Device arrays give device results.  Knobs: ``variant``
    ("segment_per_group": one work-group per segment, segments along the
    innermost axis; "segment_per_item": one work-item per result),
    ``wg_size``, ``device``.
    """
    name = _at_op(op)
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]  # NumPy's ufunc form, out=(array,)
    if _cx.is_cx(a):
        return _cx.reduceat(reduceat, name, a, indices, axis, dtype, out, kw,
                            _beside)
    if dtype is not None and name not in ("add", "multiply"):
        # NumPy computes in dtype: cast first (min/max/logical keep theirs)
        a = a.astype(dtype) if isinstance(a, _core.ArrayBase) else \
            np.asarray(a).astype(dtype)
        dtype = None
    return _core.reduceat(a, indices, axis, name, dtype, out, kw)


# --------------------------------------------------------------- introspection

_SCANS = ("cumsum", "cumprod", "cummin", "cummax", "nancumsum", "nancumprod")


def variants(op="sum", dtype="float32", device=None):
    """Names of the variants of ``op`` (a reduction or a scan) the current
    device (or ``device``) can run on ``dtype`` input ("auto" first).
    Asking for a variant not listed raises :class:`gpured.VariantUnavailable`
    with the reason.  complex64/complex128: the real dtype's variants for
    the functions that run on the real view (sum, mean, cumsum, var, ...),
    the user kernels' for the products (prod, cumprod and nan forms), none
    for those that have no single kernel (min, max, argmin, ...)."""
    if _cx.dtype_kind(dtype) == "c":
        if op in _kernels._CX_OPS + _kernels._CX_SUMS:
            return (_kernels.ScanKernel if "cum" in op else
                    _kernels.ReductionKernel).variants()
        dtype = _cx.real_dtype(dtype)
        if op not in _cx.VIEW_OPS:
            return []
    return _core.variants(op, dtype, device)


def _second(op, a, kw):
    """explain/timeit: the core's name and second operand (where='s mask,
    average's full-shape weights)."""
    if op == "average":
        x = a if isinstance(a, _core.ArrayBase) else np.asarray(a)
        w = kw.pop("weights")
        if isinstance(w, _core.ArrayBase) or np.ndim(w) == 1 != x.ndim:
            return "_average", w  # (1-d: along the one reduced axis)
        return "_average", _like(x, np.asarray(w))
    return op, _mask(a, kw.pop("where", True))


def _user_kernel(op, dtype):
    """op is a user-defined kernel (gpured.ReductionKernel)."""
    if isinstance(op, str) or not hasattr(op, "explain"):
        return False
    if dtype is not None:
        raise TypeError("a user kernel's types come from its parameters: "
                        "no dtype=")
    return True


def explain(op, a, axis=None, dtype=None, **kw):
    """The plan ``op(a, axis=axis, dtype=dtype, **kw)`` would run, and why.

    Returns a dict: variant, kernel, wg_size, vw, ilp, groups (work-groups
    per segment in the first pass), chunk, passes, accumulator, why, the
    (segments x segment_length) layout it saw, and whether the input had to
    be copied into it.  ``explain("reduceat", a, axis, indices=...,
    ufunc="add")`` explains :func:`reduceat` (its ``op`` given as ``ufunc``);
    ``explain("sum_by_key", keys, values, ...)`` is :func:`explain_by_key`
    (``exact=True``: variant "fixed_point" or "host", and why).
    ``explain(kernel, a)`` (``a``: an array or a tuple of the inputs) is a
    :class:`ReductionKernel`'s ``kernel.explain(*a)``.

    Elementwise operations: ``explain("add", (d, 1.0))``, ``explain("sqrt",
    d)``, ``explain("where", (c, x, y))`` -- a ufunc's name and its operand
    or a tuple of operands: the launch geometry (wg_size, items per
    work-item, groups), the policy row and why, NumPy's loop dtypes and the
    result's shape.
    """
    if _user_kernel(op, dtype):
        return op.explain(*(a if isinstance(a, tuple) else (a,)), axis=axis,
                          **kw)
    if op in _ew.UFUNCS or op == "where":
        if axis is not None or dtype is not None:
            raise TypeError("explain(%r, operands): an elementwise operation "
                            "takes no axis or dtype" % op)
        return _ew.explain(op, a, **kw)
    if _cx.is_cx(a) and _kernels.cx_kernel_op(op, a, dtype, axis, kw):
        return _kernels.cx_plan("explain", op, a, axis, dtype, kw)
    if op in _kernels._CX_EXT and _cx.is_cx(a):
        r = _kernels.cx_ext_explain(op, a, axis, kw)
        if r is not None:
            return r
    if op not in ("sum_by_key", "reduce_by_key", "scan_by_key") and \
            _cx.is_cx(a):
        return _cx.explain(explain, op, a, axis, dtype, kw)
    if op in ("sum_by_key", "reduce_by_key", "scan_by_key"):
        # explain("sum_by_key", keys, values, num_keys=..., exact=True):
        # the second positional is the values
        from ._bykey import explain_by_key
        return explain_by_key(op, a, axis, **kw)
    if op in _SCANS:
        exclusive = kw.pop("exclusive", False)
        return _core.scan(op, a, axis, dtype, None, exclusive, kw, 1)
    if op == "reduceat":
        return _core.reduceat(a, kw.pop("indices"), 0 if axis is None else axis,
                              _at_op(kw.pop("ufunc", "add")), dtype, None, kw,
                              1)
    op, m = _second(op, a, kw)
    initial = kw.pop("initial", _NoValue)
    sp = _split.shares(op, a, dtype) if m is None and _split.eligible(
        op, a, axis, None, initial, kw, dtype) else None
    if sp is not None:
        d0, d1, k, why = sp[:4]
        flat = a.reshape(-1)
        return {"placement": "split", "placement_why": why,
                "device": [_core.devices()[d]["name"] for d in (d0, d1)],
                "device_index": [d0, d1], "shares": [k, flat.size - k],
                "plans": [_core.reduce(op, part, None, dtype, None, False,
                                       initial, {"device": d}, None, 1)
                          for d, part in ((d0, flat[:k]), (d1, flat[k:]))]}
    return _core.reduce(op, a, axis, dtype, None, False, initial, kw, m, 1)


def timeit(op, a, axis=None, dtype=None, reps=10, **kw):
    """Time ``op(a, axis=axis, dtype=dtype, **kw)`` on the device.

    The input is uploaded once (used in place on CPU devices), then the
    kernels run ``reps`` times after one warm-up run; times come from OpenCL
    profiling events.  Returns a dict: ``seconds`` (median device time),
    ``gbps`` (bytes read, and written for scans, / seconds / 1e9), ``times``
    (every run), ``plan`` (as :func:`explain`) and ``result``.
    ``timeit(kernel, a)``: a :class:`ReductionKernel`'s ``kernel.timeit``.

    complex64/complex128: the user kernel where one runs the call
    (products, complex cumsum, sum/mean along rows, nansum/nanmean:
    ``kernel.timeit``), else the real view's one call (the (..., 2) plan
    over the same axes; a full sum's two-stage columns and device cumsum's
    row layout are not what this times), its result viewed as complex
    (var/std: the two parts' variances); the functions NumPy computes raise
    VariantUnavailable.
    """
    if _user_kernel(op, dtype):
        return op.timeit(*(a if isinstance(a, tuple) else (a,)), axis=axis,
                         reps=reps, **kw)
    if _cx.is_cx(a) and _kernels.cx_kernel_op(op, a, dtype, axis, kw):
        return _kernels.cx_plan("timeit", op, a, axis, dtype, kw, reps)
    if _cx.is_cx(a):
        return _cx.timeit(timeit, op, a, axis, dtype, reps, kw)
    if op in _SCANS:
        exclusive = kw.pop("exclusive", False)
        res, (ns, plan) = _core.scan(op, a, axis, dtype, None, exclusive, kw,
                                     2, int(reps) + 1)
        nbytes = np.asarray(a).nbytes if not hasattr(a, "buffer") else a.nbytes
        nbytes += res.nbytes
    elif op == "reduceat":
        res, ns, plan = _core.reduceat(a, kw.pop("indices"),
                                       0 if axis is None else axis,
                                       _at_op(kw.pop("ufunc", "add")), dtype,
                                       None, kw, 2, int(reps) + 1)
        nbytes = a.nbytes if hasattr(a, "nbytes") else np.asarray(a).nbytes
    else:
        op, m = _second(op, a, kw)
        res, ns, plan = _core.reduce(op, a, axis, dtype, None, False,
                                     kw.pop("initial", _NoValue), kw, m, 2,
                                     int(reps) + 1)
        nbytes = a.nbytes if hasattr(a, "nbytes") else np.asarray(a).nbytes
    times = [t / 1e9 for t in ns[1:]]
    sec = sorted(times)[len(times) // 2]
    return {"seconds": sec,
            "gbps": nbytes / sec / 1e9 if sec > 0 else float("inf"),
            "times": times, "plan": plan, "result": res}
