"""Prefix scans: cumsum, cumprod, cummin, cummax (NumPy's signatures).

Every scan becomes a 2-D problem for ``_core.scan``: the scanned axis is
moved last and the array viewed as (M rows, L elements), each row scanned
independently on the device.  The result is allocated here in the input's
memory order, so a column scan reads and writes with the same strides and
nothing is copied; only a layout that no 2-D view describes (a middle axis
of a C-ordered 3-d array, negative strides) is copied once on the way in.

Accuracy of floating-point scans (what the tests check):

* float32 cumsum/cumprod accumulate in float64 where the device has fp64;
  float64 cumsum uses TwoSum compensation in every fold and combine.  Each
  prefix is a blocked-pairwise combination: ``items`` sequential folds per
  work-item, a tree of depth log2(wg_size) across the tile, and a chain of
  tile (or chunk) prefixes held in the accumulator.  For a cumsum, with u_r
  and u_a the unit roundoffs of the result and accumulator dtypes,

      |got_i - S_i| <= u_r |S_i| + (items + log2(n) + 2) u_a sum_{j<=i} |x_j|

  and, for float32 cumsums in tile variants, whose outputs come from float32
  partial sums on top of the float64 prefix of each work-item's run of
  ``items`` (<= 32) elements starting at r(i) = items * floor(i / items),

      + items u_r sum_{r(i) <= j <= i} |x_j| + 4 u_r^2 sum_{j<=i} |x_j|

  (the added error is local to one run, never carried along the row: run
  totals stay in float64).  So float32 results are accurate up to a
  run-local term and a ~1e-14 relative term
  (numpy.cumsum(numpy.ones(2**25, numpy.float32))[-1] is 16777216 in NumPy,
  exactly 33554432 here).  Products: relative error <= u_r + (i + 1) u_a.
* Long 1-D scans of host arrays that stream through the staging pool (GPUs,
  or any input larger than one device buffer) pass the carry between chunks
  in the result dtype: each chunk boundary before element i adds at most
  u_r |S_i| to the bound above (chunks are 64 MiB by default, see
  gpured.set_staging).
* cummin/cummax are exact; a NaN propagates to every later prefix, as in
  numpy.maximum.accumulate.
"""
import operator

import numpy as np

from . import _core
from ._array import (Array, _copy_into, _empty_on, _reshape_view, _upload_to,
                     same_device)
from ._reduce import _asarray, _check_dtype, _dev_view
from ._reduce import _knobs as _reduce_knobs

try:  # NumPy >= 2
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # pragma: no cover - NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index

_KNOBS = ("variant", "wg_size", "items", "groups", "ilp", "spins")
_OPS = {"cumsum": "add", "cumprod": "multiply", "cummin": "minimum",
        "cummax": "maximum"}
_UFUNC = {"add": np.add, "multiply": np.multiply, "minimum": np.minimum,
          "maximum": np.maximum}


def _knobs(kw):
    return _reduce_knobs(kw, _KNOBS, zero_ok=("spins",))


def _result_dtype(opname, in_dtype, dtype):
    if opname in ("add", "multiply"):
        f = np.cumsum if opname == "add" else np.cumprod
        return f(np.zeros(1, in_dtype), dtype=dtype).dtype
    return np.dtype(dtype) if dtype is not None else np.dtype(in_dtype)


def _rows(arr, axis):
    """(M, L) view of arr with axis last, or None if no view exists."""
    moved = np.moveaxis(arr, axis, -1)
    L = arr.shape[axis]
    v = moved.view()
    try:
        v.shape = (-1, L) if L else (0, 0)
    except AttributeError:
        return None, moved
    return v, moved


def _prepare(name, a, axis, dtype, out, kw):
    """Normalise arguments: (arr, axis, result dtype, core op, knobs)."""
    opname = _OPS[name]
    arr = _asarray(a)
    knobs = _knobs(kw)
    if dtype is not None:
        _check_dtype(dtype, "result")
    if axis is None:
        arr = arr.reshape(-1)  # NumPy flattens in C order
        axis = 0
    else:
        if arr.ndim == 0:
            normalize_axis_index(operator.index(axis), 1, "axis")
            arr = arr.reshape(1)
            axis = 0
        axis = normalize_axis_index(operator.index(axis), arr.ndim, "axis")
    probe = dtype if dtype is not None else (
        out.dtype if isinstance(out, (np.ndarray, Array)) and opname in ("add", "multiply")
        else None)
    rd = _check_dtype(_result_dtype(opname, arr.dtype, probe), "result")
    rd = rd.newbyteorder("=")
    if out is not None:
        if isinstance(out, Array):
            if isinstance(arr, Array):
                same_device(arr, out)
            else:  # host input, device out: the scan runs on out's device
                arr = _upload_to(out.buffer.device, np.asarray(arr))
        elif not isinstance(out, np.ndarray):
            raise TypeError("out must be a numpy.ndarray or a gpured.Array")
        if out.shape != arr.shape:
            raise ValueError("provided out is the wrong size for the scan: "
                             "found %s but expected %s" % (out.shape, arr.shape))
        if isinstance(out, np.ndarray) and not out.flags.writeable:
            raise ValueError("output array is read-only")
    core_op = opname
    if rd == np.bool_ and opname in ("add", "multiply"):
        # NumPy's bool add / multiply are logical or / and.
        core_op = "maximum" if opname == "add" else "minimum"
    if core_op in ("minimum", "maximum") and arr.dtype.newbyteorder("=") != rd:
        arr = arr.astype(rd)  # cummin(a, dtype=...) compares in that dtype
    return arr, axis, rd, core_op, knobs


def _empty_like_k(arr, rd):
    """A device Array of arr's shape laid out in arr's memory order (as
    numpy.empty_like(order="K")), so rows read and write alike."""
    perm = sorted(range(arr.ndim), key=lambda i: -abs(arr.strides[i]))
    res = _empty_on(arr.buffer.device, [arr.shape[i] for i in perm], rd)
    inv = [0] * arr.ndim
    for j, i in enumerate(perm):
        inv[i] = j
    return res.transpose(inv)


def _dev_rows(a, L):
    """(M, L) device view of a (axis already last), or None."""
    v = _reshape_view(a._sh(), (-1, L))
    if v is None or v.strides[0] <= 0 or v.strides[1] <= 0:
        return None
    return a._from_shadow(v)


def _dev_core_args(arr, axis, rd):
    """_core_args for a device array: views (copies only where no 2-D view
    exists), the result allocated in the input's memory order."""
    L = arr.shape[axis]
    last = [i for i in range(arr.ndim) if i != axis] + [axis]
    moved = arr.transpose(last)
    a2 = _dev_rows(moved, L)
    res = _empty_like_k(arr, rd)
    o2 = _dev_rows(res.transpose(last), L)
    if a2 is None or o2 is None:
        moved = moved.copy()
        a2 = _dev_rows(moved, L)
        res_moved = _empty_on(arr.buffer.device, moved.shape, rd)
        o2 = _dev_rows(res_moved, L)
        inv = list(range(arr.ndim - 1))
        inv.insert(axis, arr.ndim - 1)
        res = res_moved.transpose(inv)
    return a2, o2, res


def _dev_call(fn, a2, core_op, rd, o2, *args, **kw):
    """fn(_core view of a2, ..., view of o2, ...), copying the rows once if
    the plan cannot read them in place (NotImplemented)."""
    r = fn(_dev_view(a2), core_op, rd, _dev_view(o2), *args, **kw)
    if r is NotImplemented:
        r = fn(_dev_view(a2.copy()), core_op, rd, _dev_view(o2), *args, **kw)
    return r


def _core_args(arr, axis, rd):
    """(2-D input, 2-D output view, result array) for _core.scan."""
    if isinstance(arr, Array):
        return _dev_core_args(arr, axis, rd)
    a2, moved = _rows(arr, axis)
    if a2 is not None:
        # The result in the input's memory order: same strides, no copies.
        res = np.empty_like(arr, dtype=rd, order="K")
        o2, _ = _rows(res, axis)
        if o2 is not None:
            return a2, o2, res
    a2 = np.ascontiguousarray(moved).reshape(-1, arr.shape[axis])
    res_moved = np.empty(moved.shape, rd)
    return a2, res_moved.reshape(a2.shape), np.moveaxis(res_moved, -1, axis)


def _scan(name, a, axis, dtype, out, exclusive, kw):
    arr, axis, rd, core_op, knobs = _prepare(name, a, axis, dtype, out, kw)
    dev = isinstance(arr, Array)
    if arr.size == 0:
        res = (_empty_on(arr.buffer.device, arr.shape, rd) if dev
               else np.empty(arr.shape, rd))
    elif dev:
        a2, o2, res = _core_args(arr, axis, rd)
        _dev_call(_core.scan, a2, core_op, rd, o2, bool(exclusive), **knobs)
    else:
        a2, o2, res = _core_args(arr, axis, rd)
        _core.scan(a2, core_op, rd, o2, bool(exclusive), **knobs)
    if isinstance(out, Array):
        return _copy_into(res, out)
    if out is not None:
        np.copyto(out, res.get() if dev else res, casting="unsafe")
        return out
    return res


def cumsum(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative sum along an axis, as :func:`numpy.cumsum`.

    ``axis=None`` scans the flattened array; ``exclusive=True`` gives the
    exclusive scan (element i is the sum of the elements before it, the
    first is 0).  Small integers and bool promote as NumPy's cumsum does.
    Float results are far more accurate than NumPy's sequential sums (see
    the module docstring for the bound).  Extra keywords: ``variant`` (see
    ``gpured.variants("cumsum")``), ``wg_size``, ``items``, ``groups``,
    ``ilp``, ``spins``.
    """
    return _scan("cumsum", a, axis, dtype, out, exclusive, kw)


def cumprod(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative product along an axis, as :func:`numpy.cumprod`
    (exclusive scans start from 1)."""
    return _scan("cumprod", a, axis, dtype, out, exclusive, kw)


def cummin(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative minimum along an axis: ``numpy.minimum.accumulate`` of the
    flattened array for ``axis=None``; NaN propagates (exclusive scans
    start from the dtype's largest value / +inf)."""
    return _scan("cummin", a, axis, dtype, out, exclusive, kw)


def cummax(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative maximum along an axis, as ``numpy.maximum.accumulate``
    (NaN propagates; exclusive scans start from the smallest value / -inf)."""
    return _scan("cummax", a, axis, dtype, out, exclusive, kw)


def scan_variants(op="cumsum", dtype="float32"):
    """Variant names the current device runs for a scan ("auto" first)."""
    dt = _check_dtype(dtype, "input")
    rd = _check_dtype(_result_dtype(_OPS[op], dt, None), "result")
    core = _OPS[op]
    if rd == np.bool_ and core in ("add", "multiply"):
        core = "maximum" if core == "add" else "minimum"
    return _core.scan_variants(core, dt, rd)


def _call(op, a, axis, dtype, exclusive, kw):
    arr, axis, rd, core_op, knobs = _prepare(op, a, axis, dtype, None, kw)
    if arr.size == 0:
        return None
    a2, o2, res = _core_args(arr, axis, rd)
    return arr, a2, o2, res, rd, core_op, knobs


def scan_explain(op, a, axis=None, dtype=None, exclusive=False, **kw):
    """The plan ``op(a, axis=axis, ...)`` would run, and why (a dict)."""
    c = _call(op, a, axis, dtype, exclusive, kw)
    if c is None:
        return {"variant": None, "passes": 0,
                "why": "empty scan: answered without running a kernel"}
    arr, a2, o2, res, rd, core_op, knobs = c
    if isinstance(arr, Array):
        return _dev_call(_core.scan_explain, a2, core_op, rd, o2,
                         bool(exclusive), **knobs)
    return _core.scan_explain(a2, core_op, rd, o2, bool(exclusive), **knobs)


def scan_timeit(op, a, axis=None, dtype=None, exclusive=False, reps=10, **kw):
    """Time a scan on the device (input uploaded once, kernels timed with
    profiling events after one warm-up run).  Returns seconds (median),
    gbps (bytes read + written / seconds), times, plan and result."""
    c = _call(op, a, axis, dtype, exclusive, kw)
    if c is None:
        raise ValueError("timeit needs a non-empty scan")
    arr, a2, o2, res, rd, core_op, knobs = c
    if isinstance(arr, Array):
        ns, plan = _dev_call(_core.bench_scan, a2, core_op, rd, o2, int(reps) + 1,
                             exclusive=bool(exclusive), **knobs)
    else:
        ns, plan = _core.bench_scan(a2, core_op, rd, o2, int(reps) + 1,
                                    exclusive=bool(exclusive), **knobs)
    times = [t / 1e9 for t in ns[1:]]
    sec = sorted(times)[len(times) // 2]
    nbytes = arr.nbytes + res.nbytes
    return {"seconds": sec, "gbps": nbytes / sec / 1e9 if sec > 0 else float("inf"),
            "times": times, "plan": plan, "result": res}


def with_scans(variants, explain, timeit):
    """The package's variants/explain/timeit, extended to the scan names
    (cumsum, cumprod, cummin, cummax); other names go to the reductions'."""
    import functools

    @functools.wraps(variants)
    def variants_(op="sum", dtype="float32"):
        if op in _OPS:
            return scan_variants(op, dtype)
        return variants(op, dtype)

    @functools.wraps(explain)
    def explain_(op, a, axis=None, dtype=None, **kw):
        if op in _OPS:
            return scan_explain(op, a, axis, dtype, **kw)
        return explain(op, a, axis, dtype, **kw)

    @functools.wraps(timeit)
    def timeit_(op, a, axis=None, dtype=None, reps=10, **kw):
        if op in _OPS:
            return scan_timeit(op, a, axis, dtype, reps=reps, **kw)
        return timeit(op, a, axis, dtype, reps, **kw)

    return variants_, explain_, timeit_
