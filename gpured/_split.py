"""One call on a NumPy array split between two devices at once (issue 12).

Placement (csrc/policy.c) may find that a large NumPy array finishes first
read by two devices together -- a CPU device in place and a GPU through
its pinned pipeline or the registered array -- each taking a share in
proportion to its own rate.  Both shares come out of the host's memory, so
the model uses the pair's rate together, measured by :func:`gpured.tune`
where there are two devices (``split_rates()``); until it is measured
nothing is split.

The split runs here: the first share on a worker thread (the C core
releases the GIL and waits without its device lock, so both devices' calls
run at once), the second on the caller's thread, then the partials are
combined with NumPy's rules:

* ``sum``: float32 in float64 partials where both devices have fp64 (the
  result rounded once, as one call's); not split: float64 sums (each
  device's compensation would be lost in its partial) and other inputs
  summed as float32 (each element is rounded to float32 first); integer
  partials in the result dtype (wrapping as NumPy's);
* ``prod`` in the result dtype;
* ``min``/``max``: NaN propagates;
* ``argmin``/``argmax``: the first index of the extreme or of the first
  NaN, the second share's index offset by the first share's size;
* ``all``/``any``.

Full reductions (``axis=None``, or every axis) of C-contiguous NumPy
arrays without ``out``, ``initial``, ``where`` or knobs only; anything
else runs as one call.
"""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _core

# below this, no plan is asked for (a call this small never splits, and
# the check stays off small calls' path)
MIN_BYTES = 1 << 20
OPS = frozenset(("sum", "prod", "min", "max", "all", "any", "argmin",
                 "argmax"))
_NoValue = np._NoValue
_pool = None
_pool_lock = threading.Lock()


def _worker():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(1, thread_name_prefix="gpured-split")
        return _pool


def eligible(name, a, axis, out, initial, kw, dtype=None):
    """Whether a call may split (the cheap tests first; anything unusual
    goes to the one call, which also raises NumPy's errors)."""
    return (type(a) is np.ndarray and a.nbytes >= MIN_BYTES and name in OPS
            and out is None and initial is _NoValue and not kw
            and a.flags.c_contiguous and a.dtype.kind in "biuf"
            and a.dtype != np.float16 and _plain_dtype(dtype)
            and (axis is None or _all_axes(axis, a.ndim, name)))


def _plain_dtype(dtype):
    try:
        return dtype is None or (np.dtype(dtype).kind in "biuf" and
                                 np.dtype(dtype) != np.float16)
    except TypeError:
        return False


def _all_axes(axis, ndim, name):
    """axis names every axis once (argmin/argmax: one int, 1-d)."""
    if name in ("argmin", "argmax") and (np.ndim(axis) != 0 or ndim != 1):
        return False
    try:
        ax = [int(i) for i in ((axis,) if np.ndim(axis) == 0 else axis)]
    except (TypeError, ValueError):
        return False
    return all(-ndim <= i < ndim for i in ax) and \
        sorted(i % ndim for i in ax) == list(range(ndim))


def plan(name, nbytes):
    """(device 0, device 1, share of device 0, why, go): the pair a call
    would split between (Nones: none) and whether it does (go)."""
    return _core.split_plan("arg" if name in ("argmin", "argmax") else
                            "reduce", nbytes)


def _result_dtype(name, a, dtype):
    if name in ("sum", "prod"):
        return np.dtype(dtype) if dtype is not None else \
            getattr(np, name)(np.zeros(1, a.dtype)).dtype
    if name in ("all", "any"):
        return np.dtype(bool)
    if name in ("argmin", "argmax"):
        return np.dtype(np.intp)
    return a.dtype


def _fp64(devs):
    infos = _core.devices()
    return all(infos[d]["fp64"] for d in devs)


def cut(a, frac):
    """The first share's element count (0: no split)."""
    k = int(round(a.size * frac))
    return k if 0 < k < a.size else 0


def shares(name, a, dtype, force=False):
    """The split of this call, or None where it stays one call: (device 0,
    device 1, elements of device 0, why, partial dtype, result dtype).
    force: split wherever there is a pair (measure_split)."""
    d0, d1, frac, why, go = plan(name, a.nbytes)
    k = cut(a, frac) if d0 is not None and (go or force) else 0
    if not k:
        return None
    rt = _result_dtype(name, a, dtype)
    pd = None
    if name == "sum" and rt.kind == "f":
        # float32 sums: float64 partials, rounded once at the end, as one
        # call's.  A float64 sum stays one call: its compensation (the
        # low part each device carries) would be lost in its partial.
        if rt != np.float32 or a.dtype != np.float32 or not _fp64((d0, d1)):
            return None  # (an int summed as float32 is rounded first)
        pd = np.float64
    elif name in ("sum", "prod"):
        pd = rt
    return d0, d1, k, why, pd, rt


def reduce(name, a, dtype, keepdims, force=False):
    """The split call, or None where it stays one call (shares)."""
    sp = shares(name, a, dtype, force)
    if sp is None:
        return None
    d0, d1, k, _why, pd, rt = sp
    flat = a.reshape(-1)
    first = _worker().submit(_core.reduce, name, flat[:k], None, pd, None,
                             False, _NoValue, {"device": d0})
    try:
        r1 = _core.reduce(name, flat[k:], None, pd, None, False, _NoValue,
                          {"device": d1})
    finally:
        r0 = first.result()
    res = _combine(name, flat, k, r0, r1, rt)
    if keepdims:
        return np.asarray(res).reshape((1,) * a.ndim)
    return res


def _combine(name, flat, k, r0, r1, rt):
    if name in ("argmin", "argmax"):
        i0, i1 = int(r0), k + int(r1)
        v0, v1 = flat[i0], flat[i1]
        if flat.dtype.kind == "f" and (np.isnan(v0) or np.isnan(v1)):
            return np.intp(i0 if np.isnan(v0) else i1)
        better = v1 < v0 if name == "argmin" else v1 > v0
        return np.intp(i1 if better else i0)
    if name in ("all", "any"):
        return np.bool_(bool(r0) and bool(r1) if name == "all"
                        else bool(r0) or bool(r1))
    parts = np.array([r0, r1], dtype=np.result_type(r0, r1))
    uf = {"sum": np.add, "prod": np.multiply, "min": np.minimum,
          "max": np.maximum}[name]
    with np.errstate(over="ignore", invalid="ignore"):
        # (float64 partials of float32: rounded once, here)
        return rt.type(uf.reduce(parts))
