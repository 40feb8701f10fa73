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

from . import _core

_NoValue = np._NoValue
_reduce = _core.reduce


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
        **kw):
    """Sum of array elements over the given axes, as :func:`numpy.sum`.

    Floating-point sums are compensated: float32 accumulates in float64 where
    the device has fp64, float64 with Knuth's TwoSum per work-item and in
    every combine, so the result is at least as accurate as NumPy's pairwise
    summation (typically correctly rounded).  Extra keywords: ``variant``,
    ``wg_size``, ``groups``, ``items``, ``ilp``, ``vw`` (see
    :func:`gpured.variants`) and ``device`` (for NumPy inputs).
    """
    return _reduce("sum", a, axis, dtype, out, keepdims, initial, kw)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
         **kw):
    """Product of array elements over the given axes, as :func:`numpy.prod`."""
    return _reduce("prod", a, axis, dtype, out, keepdims, initial, kw)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False,
           initial=_NoValue, **kw):
    """Sum treating NaNs as zero, as :func:`numpy.nansum`.

    The NaN test is fused into the kernels' loads (no masking pass): the
    same kernels, accuracy and knobs as :func:`sum`.  All-NaN and empty
    slices give 0; integer and bool inputs are summed as by :func:`sum`.
    """
    return _reduce("nansum", a, axis, dtype, out, keepdims, initial, kw)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False,
            initial=_NoValue, **kw):
    """Product treating NaNs as one, as :func:`numpy.nanprod` (the NaN test
    fused into the loads, as :func:`nansum`)."""
    return _reduce("nanprod", a, axis, dtype, out, keepdims, initial, kw)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, **kw):
    """Minimum over the given axes, as :func:`numpy.min` (NaN propagates)."""
    return _reduce("min", a, axis, None, out, keepdims, initial, kw)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, **kw):
    """Maximum over the given axes, as :func:`numpy.max` (NaN propagates)."""
    return _reduce("max", a, axis, None, out, keepdims, initial, kw)


def _beside(a, host):
    """A result computed on the host, as a device array on a's device (the
    functions that finish a device array's reductions in NumPy)."""
    from ._array import to_device
    return to_device(np.asarray(host), device=a.device_index)


def _warn_all_nan(res):
    if isinstance(res, (np.ndarray, np.generic)) and res.dtype.kind in "fc" \
            and np.isnan(res).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return res


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, **kw):
    """Minimum ignoring NaNs, as :func:`numpy.nanmin` (NumPy's fmin
    reduction): fused into the kernels (NaN is the fold's identity, no
    masking pass).  A slice of NaNs only gives NaN with NumPy's
    RuntimeWarning (host results); empty slices raise ValueError."""
    return _warn_all_nan(_reduce("nanmin", a, axis, None, out, keepdims, initial, kw))


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, **kw):
    """Maximum ignoring NaNs, as :func:`numpy.nanmax` (see :func:`nanmin`)."""
    return _warn_all_nan(_reduce("nanmax", a, axis, None, out, keepdims, initial, kw))


def _nanarg(name, a, axis, out, keepdims, kw):
    res = _reduce(name, a, axis, None, out, keepdims, _NoValue, kw)
    dev = isinstance(a, _core.ArrayBase)
    x = a if dev else np.asarray(a)
    if x.dtype.kind not in "fc" or x.size == 0:
        return res
    if dev and (axis is None or x.ndim == 1):
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
    if axis is None:
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


def nanargmin(a, axis=None, out=None, *, keepdims=False, **kw):
    """Index of the first minimum ignoring NaNs, as :func:`numpy.nanargmin`:
    NaN reads as +inf in the kernels' loads (as NumPy replaces it), and a
    slice of NaNs only raises ValueError."""
    return _nanarg("nanargmin", a, axis, out, keepdims, kw)


def nanargmax(a, axis=None, out=None, *, keepdims=False, **kw):
    """Index of the first maximum ignoring NaNs, as :func:`numpy.nanargmax`
    (NaN reads as -inf; see :func:`nanargmin`)."""
    return _nanarg("nanargmax", a, axis, out, keepdims, kw)


def ptp(a, axis=None, out=None, keepdims=False, **kw):
    """Range of values (maximum - minimum), as :func:`numpy.ptp`: one pass
    whose state carries the maximum and the minimum together, finished as
    their difference in the input's dtype (integers wrap, NaN propagates,
    booleans raise NumPy's TypeError).  A device array gives a device
    array on its device.  An ``out`` of another dtype follows NumPy's own
    steps (the maximum cast into ``out``, then the minimum subtracted)."""
    if out is not None and isinstance(out, np.ndarray) and out.dtype != (
            a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype):
        mx = max(a, axis=axis, out=out, keepdims=keepdims, **kw)
        mn = min(a, axis=axis, keepdims=keepdims, **kw)
        if isinstance(mn, _core.ArrayBase):
            mn = np.asarray(mn)
        return np.subtract(mx, mn, out=out)
    return _reduce("ptp", a, axis, None, out, keepdims, _NoValue, kw)


def count_nonzero(a, axis=None, *, keepdims=False, **kw):
    """Number of nonzero elements (NaN counts, -0.0 does not), as
    :func:`numpy.count_nonzero`: one sum into intp with the test fused into
    the kernels' loads; intp results as NumPy's."""
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


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """Mean ignoring NaNs, as :func:`numpy.nanmean`, in one pass: the
    folds sum the elements that are not NaN and count them (in float64
    where the device has it), and the kernels finish the quotient.
    Integer and bool inputs are averaged by :func:`mean`.  A slice of NaNs
    only gives NaN with NumPy's "Mean of empty slice" RuntimeWarning
    (NumPy inputs)."""
    dev = isinstance(a, _core.ArrayBase)
    x = a if dev else np.asarray(a)
    if x.dtype.kind not in "fc":
        return mean(a, axis, dtype, out, keepdims, **kw)
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact):
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and not np.issubdtype(out.dtype, np.inexact):
        raise TypeError("If a is inexact, then out must be inexact")
    if dev and out is not None and not isinstance(out, _core.ArrayBase):
        raise TypeError("nanmean of a device array: out= must be a device "
                        "array")
    return _reduce("nanmean", a, axis, dtype, out, keepdims, _NoValue, kw)


def _var(name, a, axis, dtype, out, ddof, keepdims, correction, kw):
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided "
                             "simultaneously.")
        ddof = correction
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
            return _beside(a, getattr(np, name)(np.asarray(x), axis=axis, dtype=dtype,
                                                ddof=ddof, keepdims=keepdims))
        return getattr(np, name)(x, axis=axis, dtype=dtype, out=out,
                                 ddof=ddof, keepdims=keepdims)
    # the core warns as NumPy where some slice has n - ddof <= 0 (nanvar:
    # where it counted on the host)
    return _reduce(name, a, axis, dtype, out, keepdims, ddof, kw)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
        correction=_NoValue, **kw):
    """Variance over the given axes, as :func:`numpy.var`, in one pass.

    Each slice is read once: the kernels sum ``y = x - K`` and ``y * y``
    (K one element of the slice, so no E[x^2] - E[x]^2 cancellation) in
    float64 where the device has it, through every variant's combine, and
    finish ``(sum y^2 - (sum y)^2 / n) / max(n - ddof, 0)``.  NumPy's
    dtypes (float inputs keep theirs, integers and bools give float64),
    ``ddof``/``correction``, and its "Degrees of freedom <= 0" warning.
    """
    return _var("var", a, axis, dtype, out, ddof, keepdims, correction, kw)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
        correction=_NoValue, **kw):
    """Standard deviation, as :func:`numpy.std`: :func:`var`'s one pass,
    its square root taken in the kernels."""
    return _var("std", a, axis, dtype, out, ddof, keepdims, correction, kw)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
           correction=_NoValue, **kw):
    """Variance ignoring NaNs, as :func:`numpy.nanvar`: :func:`var`'s pass
    with NaN elements adding nothing, over each slice's count of the
    others, counted in the same pass.  A slice whose count is at most
    ``ddof`` (all NaN, say) gives NaN with NumPy's warning (NumPy inputs)."""
    return _var("nanvar", a, axis, dtype, out, ddof, keepdims, correction, kw)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
           correction=_NoValue, **kw):
    """Standard deviation ignoring NaNs, as :func:`numpy.nanstd` (see
    :func:`nanvar`)."""
    return _var("nanstd", a, axis, dtype, out, ddof, keepdims, correction, kw)


def all(a, axis=None, out=None, keepdims=False, **kw):
    """Whether all elements are nonzero (NaN counts as nonzero), as
    :func:`numpy.all`."""
    return _reduce("all", a, axis, None, out, keepdims, _NoValue, kw)


def any(a, axis=None, out=None, keepdims=False, **kw):
    """Whether any element is nonzero, as :func:`numpy.any`."""
    return _reduce("any", a, axis, None, out, keepdims, _NoValue, kw)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """Arithmetic mean over the given axes, as :func:`numpy.mean`.

    The sum runs in float64 where the device has it (float32 results are
    rounded once at the end), so it is at least as accurate as NumPy's.
    With an ``out`` of another dtype the sum is cast into it and divided
    there, as NumPy does.
    """
    return _reduce("mean", a, axis, dtype, out, keepdims, _NoValue, kw)


def argmin(a, axis=None, out=None, keepdims=False, **kw):
    """Index of the first minimum (of the first NaN, if any), as
    :func:`numpy.argmin`."""
    return _reduce("argmin", a, axis, None, out, keepdims, _NoValue, kw)


def argmax(a, axis=None, out=None, keepdims=False, **kw):
    """Index of the first maximum (of the first NaN, if any), as
    :func:`numpy.argmax`."""
    return _reduce("argmax", a, axis, None, out, keepdims, _NoValue, kw)


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
    with the reason."""
    return _core.variants(op, dtype, device)


def explain(op, a, axis=None, dtype=None, **kw):
    """The plan ``op(a, axis=axis, dtype=dtype, **kw)`` would run, and why.

    Returns a dict: variant, kernel, wg_size, vw, ilp, groups (work-groups
    per segment in the first pass), chunk, passes, accumulator, why, the
    (segments x segment_length) layout it saw, and whether the input had to
    be copied into it.  ``explain("reduceat", a, axis, indices=...,
    ufunc="add")`` explains :func:`reduceat` (its ``op`` given as ``ufunc``).
    """
    if op in _SCANS:
        exclusive = kw.pop("exclusive", False)
        return _core.scan(op, a, axis, dtype, None, exclusive, kw, 1)
    if op == "reduceat":
        return _core.reduceat(a, kw.pop("indices"), 0 if axis is None else axis,
                              _at_op(kw.pop("ufunc", "add")), dtype, None, kw,
                              1)
    return _core.reduce(op, a, axis, dtype, None, False, _NoValue, kw, 1)


def timeit(op, a, axis=None, dtype=None, reps=10, **kw):
    """Time ``op(a, axis=axis, dtype=dtype, **kw)`` on the device.

    The input is uploaded once (used in place on CPU devices), then the
    kernels run ``reps`` times after one warm-up run; times come from OpenCL
    profiling events.  Returns a dict: ``seconds`` (median device time),
    ``gbps`` (bytes read, and written for scans, / seconds / 1e9), ``times``
    (every run), ``plan`` (as :func:`explain`) and ``result``.
    """
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
        res, ns, plan = _core.reduce(op, a, axis, dtype, None, False,
                                     _NoValue, kw, 2, int(reps) + 1)
        nbytes = a.nbytes if hasattr(a, "nbytes") else np.asarray(a).nbytes
    times = [t / 1e9 for t in ns[1:]]
    sec = sorted(times)[len(times) // 2]
    return {"seconds": sec,
            "gbps": nbytes / sec / 1e9 if sec > 0 else float("inf"),
            "times": times, "plan": plan, "result": res}
