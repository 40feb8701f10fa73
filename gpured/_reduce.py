"""Reductions: NumPy's signatures and docstrings; the work is the C core's.

Each function is one call into ``_core.reduce`` with the arguments as
given: argument checks with NumPy's errors, result dtypes, layouts, copies,
``out``, ``initial`` and the choice of kernels happen in C (csrc/api.c,
csrc/dispatch.c, csrc/policy.c).  Python never touches element values.
"""
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
    be copied into it.
    """
    if op in _SCANS:
        exclusive = kw.pop("exclusive", False)
        return _core.scan(op, a, axis, dtype, None, exclusive, kw, 1)
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
    else:
        res, ns, plan = _core.reduce(op, a, axis, dtype, None, False,
                                     _NoValue, kw, 2, int(reps) + 1)
        nbytes = a.nbytes if hasattr(a, "nbytes") else np.asarray(a).nbytes
    times = [t / 1e9 for t in ns[1:]]
    sec = sorted(times)[len(times) // 2]
    return {"seconds": sec,
            "gbps": nbytes / sec / 1e9 if sec > 0 else float("inf"),
            "times": times, "plan": plan, "result": res}
