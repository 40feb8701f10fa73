"""Reduce-by-key: runs of keys (reduce_by_key), dense bins (sum_by_key),
segmented scans (scan_by_key).  Argument checks and dtype promotion here;
the work (including key validation) in the C core (csrc/bykey.c,
kernels/bykey.cl).  Python never touches element values, except the
documented host-side stable argsort of ``sum_by_key(deterministic=True)``
on unsorted keys.

Device arrays (issue 6): keys and values may each be a ``gpured.Array``
(1-D; a strided view is first copied on the device) or host data; when
either is an Array the work runs on its device, host data is uploaded
there, and the results are Arrays on that device, enqueued and not waited
for.  The only reads back are a few bytes: sum_by_key's key check (a flag
word, or the key statistics when num_keys is not given) and reduce_by_key's
run count (the result's length).
"""
import operator

import numpy as np

from . import _core
from ._array import Array, _upload_to, same_device

KEY_DTYPES = ("int32", "int64", "uint32", "uint64")
VALUE_DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")
VARIANTS = ("atomic", "warp_aggregated", "local_hash", "sorted_segments",
            "private_bins", "lookback")
_FUNCS = ("reduce_by_key", "sum_by_key", "scan_by_key")
_OPS = {"reduce_by_key": ("sum", "prod", "min", "max", "count"),
        "sum_by_key": ("sum", "min", "max"),
        "scan_by_key": ("sum", "prod", "min", "max")}


def _dev(a, name):
    """A 1-D Array as the device view _core.bykey_run takes:
    (Buffer, dtype, first element, length); a strided Array is copied."""
    if a.ndim != 1:
        raise ValueError("%s must be 1-D (got %d dimensions)" % (name, a.ndim))
    if not a._is_c() or a._offset % a.itemsize:
        a = a.copy()
    return a, (a._buf, a.dtype, a._offset // a.itemsize, a.shape[0])


class _In:
    """An input as NumPy array or Array: ``arg`` is what _core takes."""
    __slots__ = ("arr", "arg", "dtype", "shape", "ndim", "on_device")

    def __init__(self, x, name):
        if isinstance(x, Array):
            same_device(x)  # released arrays fail here
            if x.ndim != 1:
                raise ValueError("%s must be 1-D (got %d dimensions)"
                                 % (name, x.ndim))
            self.arr, self.arg = _dev(x, name)
            self.on_device = True
        else:
            self.arr = self.arg = np.asarray(x)
            self.on_device = False
        self.dtype, self.shape, self.ndim = (self.arr.dtype, self.arr.shape,
                                             self.arr.ndim)


def _keys(keys):
    k = keys if isinstance(keys, _In) else np.asarray(keys)
    if k.ndim != 1:
        raise ValueError("keys must be 1-D (got %d dimensions)" % k.ndim)
    if k.dtype.kind not in "iu":
        raise TypeError("keys must be integers (int32, int64, uint32, uint64); "
                        "got dtype %s" % k.dtype)
    if k.dtype.name not in KEY_DTYPES:
        raise TypeError("keys must be int32, int64, uint32 or uint64; got "
                        "dtype %s" % k.dtype)
    return k


def _values(values, n, op):
    if op == "count" and values is None:
        return None
    v = values if isinstance(values, _In) else np.asarray(values)
    if v.ndim != 1:
        raise ValueError("values must be 1-D (got %d dimensions)" % v.ndim)
    if v.dtype.name not in VALUE_DTYPES:
        raise TypeError("values must be int32, int64, uint32, uint64, float32 "
                        "or float64; got dtype %s" % v.dtype)
    if v.shape[0] != n:
        raise ValueError("keys and values must have the same length (keys %d, "
                         "values %d)" % (n, v.shape[0]))
    return v


def _inputs(keys, values, op):
    """Checked (keys, values, on_device): NumPy arrays, or _In wrappers
    when either input is an Array (ValueError for two devices or a
    released array)."""
    if same_device(keys, values) is None:
        k = _keys(keys)
        return k, _values(values, k.shape[0], op), False
    k = _keys(_In(keys, "keys"))
    vi = None if (op == "count" and values is None) else _In(values, "values")
    return k, _values(vi, k.shape[0], op), True


def _arg(x):
    return x.arg if isinstance(x, _In) else x


def _result_dtype(op, vdt):
    if op == "count":
        return np.dtype(np.int64)
    if op in ("sum", "prod"):
        return np.add.reduce(np.zeros(1, vdt)).dtype
    return np.dtype(vdt)


def _wrap(buf, dtype):
    """A 1-D Array over a result Buffer of _core.bykey_run."""
    return Array._wrap(buf, (buf.nbytes // dtype.itemsize,), dtype)


def _op(func, op):
    if op not in _OPS[func]:
        raise ValueError("%s: unknown op %r (one of %s)"
                         % (func, op, ", ".join(_OPS[func])))
    return op


def _knobs(variant, wg_size, items):
    kw = {}
    if variant is not None:
        if not isinstance(variant, str):
            raise TypeError("variant must be a string")
        kw["variant"] = variant
    for name, v in (("wg_size", wg_size), ("items", items)):
        if v is not None:
            v = operator.index(v)
            if v < 1:
                raise ValueError("%s must be at least 1 (got %d)" % (name, v))
            kw[name] = v
    return kw


def _num_keys(num_keys):
    if num_keys is None:
        return -1
    nk = operator.index(num_keys)
    if nk < 0:
        raise ValueError("num_keys must be >= 0 (got %d)" % nk)
    return nk


def _sorted_arg(sorted):
    return -1 if sorted is None else int(bool(sorted))


def reduce_by_key(keys, values, op="sum", *, deterministic=False,
                  variant=None, wg_size=None, items=None):
    """Reduce each run of consecutive equal keys, as thrust::reduce_by_key.

    Returns ``(unique_keys, reduced)``: one entry per run, in input order
    (a key that occurs in two separate runs appears twice).  ``op`` is
    "sum", "prod", "min", "max" or "count" (run lengths, int64; ``values``
    may be None).  Result dtypes follow NumPy: ``np.add.reduce`` of the
    values' dtype for sum/prod (int32 -> int64, float32 stays float32),
    the values' dtype for min/max; NaN propagates in min/max.

    On GPUs with 64-bit atomics the default is variant ``lookback`` (one
    pass over keys and values; atomics carry only tile tickets and run
    counts, never values); elsewhere, or with ``deterministic=True``,
    ``sorted_segments`` (head flags + segmented scan, no atomics at all).
    Both fold values in an order fixed by the tile geometry, so results are
    bitwise reproducible on a device.  float32 sums accumulate in float64
    where the device has it.
    """
    op = _op("reduce_by_key", op)
    k, v, dev = _inputs(keys, values, op)
    uk, red = _core.bykey_run("reduce_by_key", _arg(k), _arg(v), op,
                              deterministic=bool(deterministic),
                              **_knobs(variant, wg_size, items))
    if dev:
        return (_wrap(uk, k.dtype),
                _wrap(red, _result_dtype(op, None if v is None else v.dtype)))
    return uk, red


def scan_by_key(keys, values, op="sum", exclusive=False, *, variant=None,
                wg_size=None, items=None):
    """Segmented scan: a prefix ``op`` over ``values`` restarting at every
    new run of equal consecutive keys (thrust::inclusive/exclusive_scan_by_key).

    ``exclusive=True`` shifts each run's prefix by one, starting at the
    op's identity (0, 1, the dtype's extreme or +-inf).  Result dtypes as
    ``np.cumsum``/``np.cumprod`` (int32 -> int64), values' dtype for min/max.
    """
    op = _op("scan_by_key", op)
    k, v, dev = _inputs(keys, values, op)
    _, out = _core.bykey_run("scan_by_key", _arg(k), _arg(v), op,
                             exclusive=bool(exclusive),
                             **_knobs(variant, wg_size, items))
    return _wrap(out, _result_dtype(op, v.dtype)) if dev else out


def sum_by_key(keys, values, num_keys=None, op="sum", *, deterministic=False,
               sorted=None, variant=None, wg_size=None, items=None):
    """Dense reduce-by-key: ``out[k]`` combines every value whose key is k,
    in any order (``numpy.bincount(keys, weights)``, ``np.add.at``).

    ``num_keys`` defaults to ``keys.max() + 1`` (0 for no keys).  Keys must
    lie in ``[0, num_keys)``: the device checks every key before anything is
    written, and a ValueError names the first offending index.  ``op`` is
    "sum", "min" or "max".  Keys that never occur get the op's identity:
    0 for sum (as bincount), +inf / -inf for float min / max, the dtype's
    largest / smallest value for integer min / max.  Result dtype:
    ``np.add.reduce`` of the values' dtype (int32 -> int64, float32 stays
    float32 -- unlike bincount, which always returns float64).

    By default the fastest variant for the device runs, which may use
    atomics: floating-point sums then depend on the order in which atomics
    land and are not bitwise reproducible.  ``deterministic=True`` uses no
    atomics (variant ``sorted_segments``); when the keys are not sorted, a
    stable argsort on the host (NumPy) orders them first.  ``sorted=True``
    or ``False`` declares the order of the keys for the automatic choice
    (otherwise it is measured on the device, along with the key check).
    """
    op = _op("sum_by_key", op)
    k, v, dev = _inputs(keys, values, op)
    nk = _num_keys(num_keys)
    kw = _knobs(variant, wg_size, items)
    _, out = _core.bykey_run("sum_by_key", _arg(k), _arg(v), op, num_keys=nk,
                             deterministic=bool(deterministic),
                             sorted=_sorted_arg(sorted), **kw)
    if out is None:
        # deterministic=True on keys that are not sorted (and all in range:
        # the device checked them): stable host sort, then the sorted path.
        # Device arrays make the one host round trip of this module here.
        hk = k.arr.get() if dev and k.on_device else (k.arr if dev else k)
        hv = v.arr.get() if dev and v.on_device else (v.arr if dev else v)
        order = np.argsort(hk, kind="stable")
        hk, hv = hk[order], hv[order]
        if dev:
            di = k.arr._buf.device if k.on_device else v.arr._buf.device
            hk = _dev(_upload_to(di, hk), "keys")[1]
            hv = _dev(_upload_to(di, hv), "values")[1]
        _, out = _core.bykey_run("sum_by_key", hk, hv, op,
                                 num_keys=nk, deterministic=True, sorted=1,
                                 **kw)
    return _wrap(out, _result_dtype(op, v.dtype)) if dev else out


def _func(func):
    if func not in _FUNCS:
        raise ValueError("unknown function %r (one of %s)"
                         % (func, ", ".join(_FUNCS)))
    return func


def variants_by_key(func="sum_by_key", keys_dtype="int64",
                    values_dtype="float64", op="sum"):
    """Variants of ``func`` the current device runs ("auto" first); asking
    for another raises :class:`gpured.VariantUnavailable` with the reason."""
    _func(func)
    _op(func, op)
    return _core.bykey_variants(func, np.dtype(keys_dtype),
                                np.dtype(values_dtype), op)


def _call_args(func, keys, values, op, num_keys, kw):
    _func(func)
    op = _op(func, op)
    k, v, _ = _inputs(keys, values, op)
    k, v = _arg(k), _arg(v)
    extra = {}
    if func in ("sum_by_key", "reduce_by_key"):
        extra["deterministic"] = bool(kw.pop("deterministic", False))
    if func == "sum_by_key":
        extra["num_keys"] = _num_keys(num_keys)
        extra["sorted"] = _sorted_arg(kw.pop("sorted", None))
    elif func == "scan_by_key":
        extra["exclusive"] = bool(kw.pop("exclusive", False))
    extra.update(_knobs(kw.pop("variant", None), kw.pop("wg_size", None),
                        kw.pop("items", None)))
    if kw:
        raise TypeError("unexpected keyword argument %r" % next(iter(kw)))
    return k, v, op, extra


def explain_by_key(func, keys, values=None, op="sum", num_keys=None, **kw):
    """The plan ``func(keys, values, op, ...)`` would run, and why (dict:
    variant, wg_size, items, groups, why, and for sum_by_key the facts the
    device measured: heads, descents, num_keys)."""
    k, v, op, extra = _call_args(func, keys, values, op, num_keys, kw)
    return _core.bykey_explain(func, k, v, op, **extra)


def timeit_by_key(func, keys, values=None, op="sum", num_keys=None, reps=10,
                  **kw):
    """Time ``func`` on the device: inputs uploaded once (used in place on
    CPU devices), one warm-up run, then ``reps`` runs timed by OpenCL
    profiling events (sum of every kernel's time, key check included).
    Returns {"seconds" (median), "times", "plan", "result"}."""
    k, v, op, extra = _call_args(func, keys, values, op, num_keys, kw)
    res, ns, plan = _core.bykey_bench(func, k, v, op, int(reps) + 1, **extra)
    times = [t / 1e9 for t in ns[1:]]
    sec = np.median(times)
    result = res if func == "reduce_by_key" else res[1]
    return {"seconds": float(sec), "times": times, "plan": plan,
            "result": result}
