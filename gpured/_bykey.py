"""Reduce-by-key: runs of keys (reduce_by_key), dense bins (sum_by_key),
segmented scans (scan_by_key).

Each function is one call into ``_core.bykey``: argument checks, dtype
promotion, the key check, the plan and the kernels are the C core's
(csrc/api.c, csrc/dispatch.c, csrc/bykey.c, kernels/bykey.cl).  Python
never touches element values.

Keys and values may each be a ``gpured.Array`` (1-D; a strided view is
copied on the device) or host data; when either is an Array the work runs
on its device, host data is uploaded there, and the results are Arrays on
that device.  The calls wait only for a few bytes, and then without holding
the device for other threads: sum_by_key's key check (a flag word, or the
key statistics when num_keys is not given or the variant has no fused
check) and reduce_by_key's run count (the result's length).
"""
import numpy as np

from . import _complex as _cx, _core

KEY_DTYPES = ("int32", "int64", "uint32", "uint64")
VALUE_DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")
VARIANTS = ("atomic", "warp_aggregated", "local_hash", "sorted_segments",
            "private_bins", "lookback", "fixed_point")
_FUNCS = ("reduce_by_key", "sum_by_key", "scan_by_key")


def _kw(variant, wg_size, items, kw):
    k = {"variant": variant, "wg_size": wg_size, "items": items}
    k.update(kw)
    return k


def reduce_by_key(keys, values, op="sum", *, deterministic=False,
                  variant=None, wg_size=None, items=None, **kw):
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
    where the device has it.  The call waits for the run count (8 bytes).
    """
    if values is not None and _cx.is_cx(values):
        return _cx.by_key(lambda v: reduce_by_key(
            keys, v, op, deterministic=deterministic, variant=variant,
            wg_size=wg_size, items=items, **kw), "reduce_by_key", values, op)
    return _core.bykey("reduce_by_key", keys, values, op, None, False,
                       deterministic, None, _kw(variant, wg_size, items, kw))


def scan_by_key(keys, values, op="sum", exclusive=False, *, variant=None,
                wg_size=None, items=None, **kw):
    """Segmented scan: a prefix ``op`` over ``values`` restarting at every
    new run of equal consecutive keys (thrust::inclusive/exclusive_scan_by_key).

    ``exclusive=True`` shifts each run's prefix by one, starting at the
    op's identity (0, 1, the dtype's extreme or +-inf).  Result dtypes as
    ``np.cumsum``/``np.cumprod`` (int32 -> int64), values' dtype for min/max.
    """
    if values is not None and _cx.is_cx(values):
        return _cx.by_key(lambda v: scan_by_key(
            keys, v, op, exclusive, variant=variant, wg_size=wg_size,
            items=items, **kw), "scan_by_key", values, op)
    return _core.bykey("scan_by_key", keys, values, op, None, exclusive,
                       False, None, _kw(variant, wg_size, items, kw))


def sum_by_key(keys, values, num_keys=None, op="sum", *, deterministic=False,
               sorted=None, exact=False, variant=None, wg_size=None,
               items=None, **kw):
    """Dense reduce-by-key: ``out[k]`` combines every value whose key is k,
    in any order (``numpy.bincount(keys, weights)``, ``np.add.at``).

    ``num_keys`` defaults to ``keys.max() + 1`` (0 for no keys).  Keys must
    lie in ``[0, num_keys)``: the device checks every key before anything is
    returned, and a ValueError names the first offending index.  ``op`` is
    "sum", "min" or "max".  Keys that never occur get the op's identity:
    0 for sum (as bincount), +inf / -inf for float min / max, the dtype's
    largest / smallest value for integer min / max.  Result dtype:
    ``np.add.reduce`` of the values' dtype (int32 -> int64, float32 stays
    float32 -- unlike bincount, which always returns float64).

    By default the fastest variant for the device runs, which may use
    atomics: floating-point sums then depend on the order in which atomics
    land and are not bitwise reproducible.  ``deterministic=True`` uses no
    atomics (variant ``sorted_segments``); when the keys are not sorted, a
    stable radix sort on the device orders them first (8 bits of the key
    per pass; on GPUs ``wg_size``/``items`` shape its tiles too, and
    ``wg_size=1`` sorts in contiguous chunks, as CPU devices always do).
    ``sorted=True`` or ``False`` declares
    the order of the keys for the automatic choice (otherwise it is
    measured on the device, along with the key check).

    ``exact=True`` (float32/float64 values, op "sum"): each ``out[k]`` is
    the exact sum of key k's values rounded once to the result dtype, to
    nearest with ties to even -- ``math.fsum``'s answer for float64, the
    correctly rounded one for float32 -- so the bits are the same on every
    device, for every order of the pairs, sorted or not, deterministic or
    not.  NaN where a key has a NaN or both +inf and -inf, else +-inf where
    it has one; keys that never occur (or sum to zero) give +0.0.  GPUs
    run variant ``fixed_point`` with windows over the whole exponent range
    (float64: 48 windows of 43 exponents, 772 bytes a key on the device).
    CPU devices, devices without 64-bit integer atomics, more than 2**31
    values, or too many keys for the device's largest buffer take the
    host instead (variant ``"host"``: the pairs grouped by key, each key's
    values summed exactly by the host's ``exact=True`` loop on its
    threads); ``variant="fixed_point"`` or ``"host"`` asks for one.
    Integer values are exact already: ``exact=True`` changes nothing there.
    """
    if values is not None and _cx.is_cx(values):
        return _cx.by_key(lambda v: sum_by_key(
            keys, v, num_keys, op, deterministic=deterministic, sorted=sorted,
            exact=exact, variant=variant, wg_size=wg_size, items=items, **kw),
            "sum_by_key", values, op)
    if exact:
        kw["exact"] = True
    return _core.bykey("sum_by_key", keys, values, op, num_keys, False,
                       deterministic, sorted, _kw(variant, wg_size, items, kw))


def _func(func):
    if func not in _FUNCS:
        raise ValueError("unknown function %r (one of %s)"
                         % (func, ", ".join(_FUNCS)))
    return func


def variants_by_key(func="sum_by_key", keys_dtype="int64",
                    values_dtype="float64", op="sum"):
    """Variants of ``func`` the current device runs ("auto" first); asking
    for another raises :class:`gpured.VariantUnavailable` with the reason."""
    return _core.bykey_variants(_func(func), np.dtype(keys_dtype),
                                np.dtype(values_dtype), op)


def _call(func, keys, values, op, num_keys, kw, mode, reps=None):
    _func(func)
    exclusive = kw.pop("exclusive", False)
    deterministic = kw.pop("deterministic", False)
    srt = kw.pop("sorted", None)
    return _core.bykey(func, keys, values, op, num_keys, exclusive,
                       deterministic, srt, kw, mode, reps)


def explain_by_key(func, keys, values=None, op="sum", num_keys=None, **kw):
    """The plan ``func(keys, values, op, ...)`` would run, and why (dict:
    variant, wg_size, items, groups, why, and for sum_by_key the facts the
    device measured: heads, descents, num_keys)."""
    return _call(func, keys, values, op, num_keys, kw, 1)


def timeit_by_key(func, keys, values=None, op="sum", num_keys=None, reps=10,
                  **kw):
    """Time ``func`` on the device: inputs uploaded once (used in place on
    CPU devices), one warm-up run, then ``reps`` runs timed by OpenCL
    profiling events (sum of every kernel's time, key check included).
    Returns {"seconds" (median), "times", "plan", "result"}."""
    res, ns, plan = _call(func, keys, values, op, num_keys, kw, 2,
                          int(reps) + 1)
    times = [t / 1e9 for t in ns[1:]]
    return {"seconds": float(np.median(times)), "times": times, "plan": plan,
            "result": res}
