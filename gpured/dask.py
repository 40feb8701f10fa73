"""gpured over Dask arrays: reductions and scans past one device.

    >>> import dask.array as da, gpured.dask as gd
    >>> x = da.random.random((100_000, 1_000), chunks=(10_000, 1_000)).astype("f4")
    >>> gd.sum(x).compute()                 # every chunk reduced by gpured
    >>> gd.argmin(x, axis=0).compute()      # NumPy's first-index rule across chunks
    >>> gd.cumsum(x, axis=0)                # a Dask array, chunked as x

The functions have NumPy's names and signatures plus Dask's conventions
(they take and return Dask arrays, ``split_every=``, ``out=`` a Dask
array, scans take ``method=``): ``sum, prod, min, max, all, any, mean,
argmin, argmax`` and ``cumsum, cumprod, cummin, cummax`` (the scans also
take gpured's ``exclusive=``); ``nansum, nanprod, nanmin, nanmax,
nanargmin, nanargmax, nanmean, var, std, nanvar, nanstd, count_nonzero,
ptp, nancumsum, nancumprod``;
``where=`` on ``sum, prod, min, max, all, any, mean`` and their nan forms;
complex64/complex128 chunks in ``sum, mean, var, std`` and their nan
forms (each chunk's real view with a trailing axis of 2, gpured/_complex.py);
``average`` (``weights=``, ``returned=``) and ``reduceat`` (NumPy's
``ufunc.reduceat`` over one axis).  Results equal NumPy's on the whole array
(dtypes, integer wraparound, NaN propagation, first index of the min/max or
of the first NaN, empty reductions and their errors); float sums are
gpured's compensated ones per chunk, combined in float64.

How the work is split
---------------------
* **Reductions of persisted device-resident arrays** (every block a
  ``gpured.Array`` in the graph, no ``split_every=``): every block's
  reduction is enqueued on its own device when the reduction is built
  (the devices in turn, so all start at once; persisted blocks are values,
  which Dask never changes in place), and one task per output block reads
  the partials back (one wait and one read per device) and combines them.
  A device's chunks that lie one after the other in one buffer
  (:func:`to_device`'s slabs) are read as one view where axis 0 is the
  only reduced axis of several blocks: one call for the run, not one per
  chunk.  The one-call rows (sum, prod, min, max, all, any, nansum, nanprod)
  enqueue each chunk as one ``_core.reduce`` call writing its partial
  into a row of one buffer per device (``out=``): no Python face, no
  placement, no per-chunk bookkeeping (issue 43).  The task holds the
  partials, not x's keys: Dask's host time (~0.3 ms a task on the H100
  host, as long as a GiB chunk's kernel; ~2 ms to compute any graph) is
  not paid per chunk, and overlaps the kernels.
* **Other reductions** go through ``dask.array.reduction``: each chunk is reduced
  by gpured (keepdims) on one device, the small partials are combined on
  the host by Dask's tree reduction (``split_every``; device-resident
  partials read with one ``_core.get_many`` per combine).  ``mean``
  carries a sum (float64 where the device has it) and a count; ``argmin``/``argmax``
  go through Dask's ``arg_reduction`` with (value, global index) partials
  and a combine that keeps the smallest index among equal values (or among
  NaNs), so the first-index rule holds across chunks and axes.
* ``where=`` masks (a Dask array, a NumPy array or a scalar, broadcast
  against ``a``) are broadcast and chunked as ``a`` and reach each chunk
  task beside its chunk (``dask.array.reduction``'s second operand, as
  its ``weights=``): gpured reads the mask in the chunk's pass; ``mean``
  counts the kept elements of the mask's block (nanmean: the kept ones
  that are not NaN, on the host: a device-resident float chunk is read
  back for that count).  ``average`` carries ``sum(a * w)`` and
  ``sum(w)`` per chunk (gpured's one-pass weighted mean times the
  weights' sum; a chunk slice whose weights sum to 0 is summed on the
  host).
* ``reduceat`` cuts every chunk along ``axis`` at the segment bounds that
  fall in it and reduces the pieces with one ``gpured.reduceat`` call per
  chunk; a segment spanning chunks combines its pieces with the op's
  ufunc on the host.  The result is chunked along ``axis`` by groups of
  consecutive segments (sorted indices: those starting in one chunk).
* **Scans** of host chunks go through ``dask.array.reductions.cumreduction``
  (``method="sequential"`` or ``"blelloch"``): gpured scans each chunk,
  block totals are the scans' last slices (or gpured reductions, for
  blelloch), and the carry is applied on the host, as Dask does.  Scans of
  device-resident chunks, and ``exclusive=True`` scans, take the
  carry-first path: gpured reduces every chunk to its total (in parallel),
  the carries are chained on the host (small), and each chunk is then
  scanned once with its carry: on the device the carry is written in front
  of a device copy of the chunk (``scan([carry, chunk])[1:]``, or
  ``scan([carry, chunk[:-1]])`` for an exclusive scan: an inclusive scan
  of the shifted chunk *is* the exclusive result), so no chunk leaves its
  device; on the host gpured's ``exclusive=True`` scan is used directly and
  the carry applied in place.

Chunks and devices
------------------
Chunks may be NumPy arrays (host-resident) or ``gpured.Array``
(device-resident).  A device-resident chunk is always reduced on its own
device and stays there: only the partials (one value per output element
per chunk) move to the host; scans of such chunks give device-resident
chunks.  Make a device-resident chunked array with :func:`to_device` (each
chunk on a device chosen by the same policy), ``da.from_array(arr,
chunks=..., asarray=False)`` of one Array, or ``x.map_blocks(gpured.to_device,
device=...)``.  :func:`to_host` brings the chunks back.

A host-resident chunk goes to a device chosen from ``devices=`` when the
chunk task runs (in the process that runs it):

* ``devices=None`` (default): every device of ``gpured.devices()``, unless
  the ``GPURED_DEVICE`` environment variable names one (read when the
  chunk runs), then that one only: the ``dask.distributed`` set-up below.
  ``"all"``, ``"current"`` (gpured's current device), a position, a name
  part, or a list of those choose explicitly.  (On a GPU host "every
  device" includes the host's CPU device through PoCL, when installed: the
  "rate" policy gives it the share its measured rate earns.)
* ``policy="rate"`` (default): the chunk goes where it would finish first
  given what this process has already queued there: the device minimising
  (bytes in flight there + this chunk) / rate, ties taken in turn.  Rates (bytes/s) come from ``rates=`` (a list
  aligned with ``devices``, or a dict keyed by position), else from
  :func:`calibrate`: one timed ``gpured.sum`` of a 32 MiB host float32
  array per device, once per process and cached (identical devices, e.g.
  two of the same GPU, are not measured: equal rates).
* ``policy="round_robin"``: the i-th chunk placed on a given device list
  goes to ``devices[i % len(devices)]`` (a process-wide counter per list).

:func:`stats` counts the chunk tasks and bytes each device ran in this
process (``reset_stats()`` clears it; a carry-first scan runs two tasks
per chunk: its total, then its scan).

Schedulers
----------
*Threaded* (the default for Dask arrays; one process, several devices):
calls into gpured from several threads are safe (the C core serialises
each device's work with that device's lock and releases the GIL while it
waits), so chunk
tasks on different devices run at once.  ``dask.config.set(num_workers=k)``
bounds the chunks in flight.  Device-resident chunks return their partials
(and scans their results) without waiting, so a thread enqueues chunk
after chunk and the device queue stays full (argmin/argmax wait for their
two small partials); host chunks wait for their result (the thread is
busy until the chunk is reduced).

*dask.distributed* (one worker process per device): give each worker
``GPURED_DEVICE`` in its environment, so ``devices=None`` means that
worker's device.  On one machine :func:`local_cluster` does it::

    from distributed import Client
    cluster = gpured.dask.local_cluster()        # one Nanny per device
    client = Client(cluster)
    gpured.dask.sum(x).compute()

or by hand, one worker per device::

    GPURED_DEVICE=0:0 dask worker tcp://scheduler:8786 --nthreads 4 &
    GPURED_DEVICE=1:0 dask worker tcp://scheduler:8786 --nthreads 4 &

(``SpecCluster(workers={name: {"cls": Nanny, "options": {"env":
{"GPURED_DEVICE": "1:0"}}}})`` is the same in Python.)  Workers must start
by spawning (distributed's default), never by fork: gpured refuses device
work in a forked child of a process that used OpenCL.

Extending: a reduction is one row of ``_REDUCTIONS`` (its gpured
function(s) per chunk as named partial fields, how fields combine, the
final step and NumPy's result dtype); the public function, its signature
and docstring are made from the row.
"""
import builtins
import inspect
import operator
import os
import sys
import threading
import time
import uuid
import warnings
from functools import partial
from itertools import product

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.array.core import Array as _DaskArray
    from dask.array.core import _concatenate2, handle_out
    from dask.array.reductions import arg_reduction, cumreduction
    from dask.callbacks import Callback
    from dask.delayed import single_key
    from dask.highlevelgraph import HighLevelGraph
    from dask.utils import deepmap
except ImportError as _e:  # pragma: no cover - exercised in a child process
    raise ImportError(
        "gpured.dask needs Dask, which is not installed: pip install dask "
        "(gpured itself does not depend on it)") from _e

import gpured
from . import _complex as _cx, _core, _half
from ._array import Array
from ._reduce import _at_op, _bool_check, _like, _weights_check

_NoValue = np._NoValue

__all__ = ["sum", "prod", "min", "max", "all", "any", "mean", "argmin",
           "argmax", "nanargmin", "nanargmax", "cumsum", "cumprod", "cummin",
           "cummax", "nansum",
           "nanprod", "nanmin", "nanmax", "nanmean", "var", "std", "nanvar",
           "nanstd", "count_nonzero", "ptp", "nancumsum", "nancumprod",
           "average", "reduceat", "to_device",
           "to_host", "calibrate", "stats", "reset_stats", "local_cluster"]

_POLICIES = ("rate", "round_robin")

# --------------------------------------------------------------- devices

_lock = threading.Lock()          # placement state and statistics
_cal_lock = threading.Lock()      # one calibration at a time
_DEVS = None
_RR = {}                          # device tuple -> chunks placed so far
_QUEUED = {}                      # position -> host bytes in flight
_RATES = {}                       # (resident, position) -> bytes/s
_STATS = {}                       # position -> {"chunks", "bytes"}


def _devices():
    global _DEVS
    if _DEVS is None:
        _DEVS = gpured.devices()
    return _DEVS


def _resolve(devices):
    """Device positions for a ``devices=`` spec, in this process."""
    if devices is None:
        # read now, not at import: a worker may import gpured before its
        # environment is set (spawn re-imports the parent's main module)
        devices = os.environ.get("GPURED_DEVICE") or "all"
    if isinstance(devices, str) and devices == "all":
        return tuple(range(len(_devices())))
    if isinstance(devices, str) and devices == "current":
        return (_core.current_index(),)
    if isinstance(devices, (str, int, np.integer)):
        devices = [devices]
    out = []
    for d in devices:
        p = _core.device_index(d)
        if p not in out:
            out.append(p)
    if not out:
        raise ValueError("devices= lists no device")
    return tuple(out)


def _count(pos, nbytes, chunks=1):
    with _lock:
        s = _STATS.setdefault(pos, {"chunks": 0, "bytes": 0})
        s["chunks"] += chunks
        s["bytes"] += int(nbytes)


def stats():
    """Chunks and bytes reduced or scanned per device by gpured.dask in this
    process: ``{position: {"name", "chunks", "bytes"}}`` (for a
    ``dask.distributed`` cluster: ``client.run(gpured.dask.stats)``)."""
    with _lock:
        return {p: dict(s, name=_devices()[p]["name"])
                for p, s in sorted(_STATS.items())}


def reset_stats():
    """Clear :func:`stats`."""
    with _lock:
        _STATS.clear()


# ------------------------------------------------------------------ rates

def _tuned_rate(name):
    """bytes/s of the device's tuned float32 sum (largest size measured)."""
    try:
        from ._tune import _read
        rows = [e for e in _read().get(name, [])
                if e.get("op") == "sum" and e.get("dtype") == "float32"
                and float(e.get("seconds", 0)) > 0]
    except Exception:  # a damaged table is ignored, as gpured.tune does
        return None
    if not rows:
        return None
    e = builtins.max(rows, key=lambda e: int(e["size_class"]))
    return float(2 ** int(e["size_class"])) / float(e["seconds"])


def calibrate(devices=None, resident="host", nbytes=32 << 20, force=False):
    """Measure (or return the cached) rates of the devices, in bytes/s.

    ``resident="host"``: a whole ``gpured.sum`` call on a host-resident
    float32 array of ``nbytes`` (what a host chunk costs: transfer
    included), best of 3 after a warm-up.  ``resident="device"``: the
    kernel's rate on a device-resident array (what :func:`to_device`
    weighs): ``gpured.tune()``'s measurement where the device was tuned,
    else ``gpured.timeit``.  Cached per process (``force=True`` measures
    again).  Returns ``{position: bytes_per_second}``.
    """
    if resident not in ("host", "device"):
        raise ValueError("resident must be 'host' or 'device'")
    pos = _resolve(devices)
    with _cal_lock:
        todo = [p for p in pos if force or (resident, p) not in _RATES]
        if todo:
            a = np.ones(builtins.max(int(nbytes) // 4, 1024), np.float32)
            for p in todo:
                _RATES[resident, p] = _measure(a, p, resident)
        return {p: _RATES[resident, p] for p in pos}


def _measure(a, p, resident):
    if resident == "device":
        r = _tuned_rate(_devices()[p]["name"])
        if r is not None:
            return r
        t = gpured.timeit("sum", a, reps=3, device=p)["seconds"]
        return a.nbytes / builtins.max(t, 1e-9)
    gpured.sum(a, device=p)  # warm-up: kernels built, pools filled
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        gpured.sum(a, device=p)
        best = builtins.min(best, time.perf_counter() - t0)
    return a.nbytes / builtins.max(best, 1e-9)


def _rates_for(pos, rates, resident):
    """Rates aligned with pos (user's, equal for identical devices, or
    measured)."""
    if rates is not None:
        if isinstance(rates, dict):
            got = []
            for p in pos:
                key = [k for k in rates if _core.device_index(k) == p]
                if not key:
                    raise ValueError("rates= has no rate for device %d" % p)
                got.append(float(rates[key[0]]))
        else:
            got = [float(r) for r in rates]
            if len(got) != len(pos):
                raise ValueError("rates= needs one rate per device (%d), got "
                                 "%d" % (len(pos), len(got)))
        if not builtins.all(r > 0 for r in got):
            raise ValueError("rates must be positive")
        return got
    devs = _devices()
    if len({(devs[p]["name"], devs[p]["platform"]) for p in pos}) == 1:
        return [1.0] * len(pos)
    cal = calibrate(list(pos), resident)
    return [cal[p] for p in pos]


# -------------------------------------------------------------- placement

class _Placer:
    """Where host chunks go: the ``devices``/``policy``/``rates`` of one
    call, resolved in the process that runs the chunk (picklable; its
    state lives in that process)."""

    def __init__(self, devices=None, policy="rate", rates=None):
        if policy not in _POLICIES:
            raise ValueError("policy must be one of %s, not %r"
                             % (", ".join(map(repr, _POLICIES)), policy))
        if isinstance(devices, (list, tuple)):
            devices = tuple(devices)
        if isinstance(rates, (list, tuple)):
            rates = tuple(rates)
        self.devices, self.policy, self.rates = devices, policy, rates

    def __dask_tokenize__(self):
        r = tuple(sorted(self.rates.items())) if isinstance(self.rates, dict) \
            else self.rates
        return ("gpured.dask.placer", self.devices, self.policy, r)

    def __repr__(self):
        return "placer(devices=%r, policy=%r)" % (self.devices, self.policy)

    def pick(self, nbytes):
        pos = _resolve(self.devices)
        if len(pos) == 1:
            with _lock:
                _QUEUED[pos[0]] = _QUEUED.get(pos[0], 0) + nbytes
            return pos[0]
        rates = (_rates_for(pos, self.rates, "host")
                 if self.policy == "rate" else None)
        n = len(pos)
        with _lock:
            i = _RR.get(pos, 0)
            _RR[pos] = i + 1
            if rates is None:
                p = pos[i % n]
            else:
                # first to finish; ties taken in turn (from the i-th device)
                p = pos[builtins.min(
                    range(n),
                    key=lambda j: ((_QUEUED.get(pos[j], 0) + nbytes) / rates[j],
                                   (j - i) % n))]
            _QUEUED[p] = _QUEUED.get(p, 0) + nbytes
        return p

    def done(self, p, nbytes):
        with _lock:
            _QUEUED[p] -= nbytes


def _on_device(x, placer, body):
    """Run body(call) for one chunk, where call(fname, arr, **kw) runs
    gpured.<fname> on the chunk's device (its own for an Array, else one
    the placer picks).  Counts the chunk in stats()."""
    if isinstance(x, Array):
        _count(x.device_index, x.nbytes)
        return body(_call_own, x.device_index)
    x = np.asarray(x)
    nb = x.nbytes
    p = placer.pick(nb)
    try:
        _count(p, nb)
        return body(lambda f, a, **kw: getattr(gpured, f)(a, device=p, **kw),
                    p)
    finally:
        placer.done(p, nb)


def _host(a):
    return a.get() if isinstance(a, Array) else np.asarray(a)


# ----------------------------------------------------------- dtype rules

_SUPPORTED = ("b", "i", "u")


def _check_dtype(dt, what):
    dt = np.dtype(dt)
    if dt.kind in _SUPPORTED or (dt.kind == "f" and dt.itemsize in (4, 8)) \
            or _half.is_half(dt):  # float16/bfloat16: through float32
        return dt
    raise TypeError("gpured does not support %s dtype %s (supported: bool, "
                    "int8-int64, uint8-uint64, float16, bfloat16, float32, "
                    "float64)" % (what, dt))


def _np_result(fn, xdt, dtype):
    """NumPy's result dtype of fn on an xdt array with dtype=dtype."""
    z = np.zeros(1, xdt)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(z) if dtype is None else fn(z, dtype=dtype)).dtype


def _fp64(pos):
    return bool(_devices()[pos]["fp64"])


def _acc(res, pos):
    """Partial dtype of a sum whose result is res: float64 for float
    results where the device has it (one rounding at the end)."""
    flt = res.kind == "f" or _half.is_half(res)
    return np.dtype(np.float64) if flt and _fp64(pos) else res


# ------------------------------------------------------------ reductions

def _extent(shape, axis):
    n = 1
    for a in axis:
        n *= shape[a]
    return n


def _kept_shape(shape, axis):
    return tuple(1 if i in axis else s for i, s in enumerate(shape))


def _empty_shape(shape, axis):
    """The keepdims shape of an empty partial (a chunk or group with no
    element along some reduced axis): 0 on those axes, 1 on the other
    reduced ones, so that it concatenates with its neighbours."""
    return tuple((0 if s == 0 else 1) if i in axis else s
                 for i, s in enumerate(shape))


class _Row:
    """One reduction.

    fields(call, x, axis, res, pos, kw) -> {field: keepdims partial}
        the chunk's partials (gpured on the chunk's device through call).
    merge: {field: ufunc} (each field combines with ufunc.reduce) or a
        function(fields, axis) -> fields over concatenated partials.
    final(fields, axis, keepdims, res, kw) -> the result.
    result(xdt, dtype) -> NumPy's result dtype.
    params: the NumPy keywords the public function takes besides
        axis/keepdims/split_every/out ("dtype", "initial", "where").
    The chunk's ``where=`` block (or average's weights) is kw["where"].
    empty: what a chunk whose reduced extent is 0 contributes:
        "skip" (an empty partial: min/max have no identity) or "run".
    """

    def __init__(self, name, fields, merge, final, result, params=(),
                 empty="run", doc=None):
        self.name, self.fields, self.merge, self.final = name, fields, merge, final
        self.result, self.params, self.empty, self.doc = (
            result, params, empty, doc)

    def __dask_tokenize__(self):
        # a row is its name: without this Dask tokenizes the row's
        # closures through cloudpickle on every call that builds a graph
        # (tens of ms per gd.sum, whatever the chunks)
        return ("gpured.dask._Row", self.name)


# reductions without an identity: a where= mask needs initial= (NumPy's
# rule and message name their ufunc)
_NO_IDENTITY = {"min": "minimum", "max": "maximum", "nanmin": "fmin",
                "nanmax": "fmax"}


def _w(kw):
    """gpured's where= for the chunk's mask block, if any."""
    m = kw.get("where")
    return {} if m is None else {"where": m}


# gpured functions that are one core call (no warnings, no host work of
# their own): a device-resident chunk's partial may go straight to
# _core.reduce, into its slot of the device's partials buffer
_DIRECT = frozenset(("sum", "prod", "min", "max", "all", "any", "nansum",
                     "nanprod"))


def _one(fname, dtype_of=None):
    """fields for a reduction that is one gpured call per chunk."""
    def fields(call, x, axis, res, pos, kw):
        extra = {} if dtype_of is None else {"dtype": dtype_of(res, pos)}
        extra.update(_w(kw))
        if extra.get("where") is not None and fname in _NO_IDENTITY:
            extra["initial"] = kw["initial"]  # applies again at the end
        return {"v": call(fname, x, axis=axis, keepdims=True, **extra)}
    if fname in _DIRECT:
        fields.direct = (fname, dtype_of)
    return fields


def _kept(m, axis, x=None):
    """Elements kept by the mask block m per slice (int64, keepdims); with
    x: the kept ones that are not NaN (on the host: gpured's NaN count
    takes no mask)."""
    if isinstance(m, Array) and x is None:
        return _host(gpured.count_nonzero(m, axis=axis, keepdims=True)
                     ).astype(np.int64)
    m = _host(m)
    if x is not None:
        m = m & ~np.isnan(_host(x))
    return np.asarray(np.count_nonzero(m, axis=axis, keepdims=True),
                      np.int64)


def _final_ufunc(ufunc):
    def final(f, axis, keepdims, res, kw):
        extra = {}
        if kw.get("initial", _NoValue) is not _NoValue:
            extra["initial"] = kw["initial"]
        with np.errstate(over="ignore"):
            r = ufunc.reduce(f["v"], axis=axis, keepdims=keepdims,
                             dtype=f["v"].dtype, **extra)
        return r.astype(res, copy=False)
    return final


def _mean_fields(call, x, axis, res, pos, kw):
    acc = _acc(res, pos)
    if kw.get("where") is None:
        n = np.full(_kept_shape(x.shape, axis), _extent(x.shape, axis),
                    np.int64)
    else:
        n = _kept(kw["where"], axis)
    return {"s": call("sum", x, axis=axis, keepdims=True, dtype=acc,
                      **_w(kw)), "n": n}


def _mean_final(f, axis, keepdims, res, kw):
    # in the partials' dtype: ufunc.reduce would widen small integers, and
    # mean(dtype=int8) sums in int8 (wrapping) as NumPy does
    s = np.add.reduce(f["s"], axis=axis, keepdims=keepdims, dtype=f["s"].dtype)
    n = np.add.reduce(f["n"], axis=axis, keepdims=keepdims)
    if np.any(n == 0):
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(s, n).astype(res, copy=False)


def _nanmean_fields(call, x, axis, res, pos, kw):
    # the NaN-free sum and the count of non-NaN elements per chunk
    if kw.get("where") is not None:
        n = _kept(kw["where"], axis, x if x.dtype.kind == "f" else None)
    elif call is _np_call:
        n = np.sum(~np.isnan(x), axis=axis, keepdims=True, dtype=np.int64)
    else:
        n = call("_nancount", x, axis=axis, keepdims=True)
    return {"s": call("nansum", x, axis=axis, keepdims=True,
                      dtype=_acc(res, pos), **_w(kw)), "n": n}


def _var_fields(nan):
    """var/std partials of a chunk: its count n, mean m and variance v
    (ddof 0), each one gpured pass (nanvar: NaN-free, counted apart)."""
    def fields(call, x, axis, res, pos, kw):
        acc = _acc(res, pos)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # empty slices
            if not nan:
                n = np.full(_kept_shape(x.shape, axis), _extent(x.shape, axis),
                            np.int64)
            elif call is _np_call:
                n = np.sum(~np.isnan(x), axis=axis, keepdims=True, dtype=np.int64)
            else:
                n = call("_nancount", x, axis=axis, keepdims=True)
            pre = "nan" if nan else ""
            return {"n": n,
                    "m": call(pre + "mean", x, axis=axis, keepdims=True, dtype=acc),
                    "v": call(pre + "var", x, axis=axis, keepdims=True, dtype=acc)}
    return fields


def _var_merge(f, axis):
    """Chan's parallel combine of (n, mean, M2 = n var) partials."""
    n = f["n"].astype(np.float64)
    some = n > 0
    m = np.where(some, f["m"], 0.0)
    q = np.where(some, f["v"] * n, 0.0)
    tot = n.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(tot > 0, (n * m).sum(axis=axis, keepdims=True) / tot, 0.0)
        m2 = q.sum(axis=axis, keepdims=True) + \
            (n * (m - mean) ** 2).sum(axis=axis, keepdims=True)
        v = np.where(tot > 0, m2 / tot, np.nan)
    return {"n": tot.astype(np.int64), "m": mean, "v": v}


def _var_final(root, nan):
    def final(f, axis, keepdims, res, kw):
        n = f["n"].astype(np.float64)
        ddof = kw.get("ddof", 0)
        dof = np.maximum(n - ddof, 0)
        if np.any(dof <= 0):
            warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning,
                          stacklevel=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = f["v"] * n / dof
        if nan:  # NumPy's nanvar: nan wherever n - ddof <= 0
            r = np.where(dof > 0, r, np.nan)
        r = np.sqrt(r) if root else r
        if not keepdims:
            r = np.squeeze(r, axis=axis)
        r = r.astype(res, copy=False)
        return r[()] if r.ndim == 0 else r  # (NumPy's scalar, as np.var)
    return final


_SAME = lambda xdt, dtype: np.dtype(xdt)


def _final_fminmax(ufunc):
    """nanmin/nanmax: fmin/fmax of the chunks' partials (an all-NaN chunk
    slice loses to any number), NumPy's warning where a slice is all NaN."""
    final = _final_ufunc(ufunc)

    def f(fields, axis, keepdims, res, kw):
        r = final(fields, axis, keepdims, res, kw)
        if r.dtype.kind in "fc" and np.isnan(r).any():
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
        return r
    return f


def _ptp_fields(call, x, axis, res, pos, kw):
    """ptp partials of a chunk: its maximum and its minimum (two gpured
    calls: the one-pass ptp returns their difference only)."""
    return {"mx": call("max", x, axis=axis, keepdims=True),
            "mn": call("min", x, axis=axis, keepdims=True)}


def _ptp_final(f, axis, keepdims, res, kw):
    mx = np.maximum.reduce(f["mx"], axis=axis, keepdims=keepdims)
    mn = np.minimum.reduce(f["mn"], axis=axis, keepdims=keepdims)
    with np.errstate(over="ignore", invalid="ignore"):
        # NumPy's ptp: the subtraction in the dtype (integers wrap)
        return np.subtract(np.asarray(mx), np.asarray(mn)).astype(res, copy=False)


def _ptp_result(t, d):
    if np.dtype(t) == np.bool_:
        raise TypeError("numpy boolean subtract, the `-` operator, is not "
                        "supported, use the bitwise_xor, the `^` operator, or "
                        "the logical_xor function instead.")
    return np.dtype(t)


_REDUCTIONS = {r.name: r for r in [
    #     name    chunk partials (gpured)       combine             final                       NumPy's result dtype                     keywords            empty chunk
    _Row("sum",  _one("sum", _acc),             {"v": np.add},      _final_ufunc(np.add),       lambda t, d: _np_result(np.sum, t, d),  ("dtype", "initial", "where")),
    _Row("prod", _one("prod", lambda r, p: r),  {"v": np.multiply}, _final_ufunc(np.multiply),  lambda t, d: _np_result(np.prod, t, d), ("dtype", "initial", "where")),
    _Row("min",  _one("min"),                   {"v": np.minimum},  _final_ufunc(np.minimum),   _SAME,                                  ("initial", "where"), "skip"),
    _Row("max",  _one("max"),                   {"v": np.maximum},  _final_ufunc(np.maximum),   _SAME,                                  ("initial", "where"), "skip"),
    _Row("all",  _one("all"),                   {"v": np.logical_and}, _final_ufunc(np.logical_and), lambda t, d: np.dtype(bool),   ("where",)),
    _Row("any",  _one("any"),                   {"v": np.logical_or},  _final_ufunc(np.logical_or),  lambda t, d: np.dtype(bool),   ("where",)),
    _Row("nansum", _one("nansum", _acc),       {"v": np.add},      _final_ufunc(np.add),       lambda t, d: _np_result(np.nansum, t, d), ("dtype", "initial", "where")),
    _Row("nanprod", _one("nanprod", lambda r, p: r), {"v": np.multiply}, _final_ufunc(np.multiply), lambda t, d: _np_result(np.nanprod, t, d), ("dtype", "initial", "where")),
    _Row("nanmin", _one("nanmin"),             {"v": np.fmin},     _final_fminmax(np.fmin),    _SAME,                                  ("initial", "where"), "skip"),
    _Row("nanmax", _one("nanmax"),             {"v": np.fmax},     _final_fminmax(np.fmax),    _SAME,                                  ("initial", "where"), "skip"),
    _Row("count_nonzero", _one("count_nonzero"), {"v": np.add}, _final_ufunc(np.add),      lambda t, d: np.dtype(np.intp),         ()),
    _Row("ptp", _ptp_fields,                    {"mx": np.maximum, "mn": np.minimum}, _ptp_final, _ptp_result,                 (),                 "skip"),
    _Row("nanmean", _nanmean_fields,            {"s": np.add, "n": np.add}, _mean_final,        lambda t, d: _np_result(np.nanmean, t, d), ("dtype", "where")),
    _Row("mean", _mean_fields,                  {"s": np.add, "n": np.add}, _mean_final,        lambda t, d: _np_result(np.mean, t, d), ("dtype", "where")),
    _Row("var", _var_fields(False),             _var_merge,         _var_final(False, False),   lambda t, d: _np_result(np.var, t, d), ("dtype", "ddof")),
    _Row("std", _var_fields(False),             _var_merge,         _var_final(True, False),    lambda t, d: _np_result(np.std, t, d), ("dtype", "ddof")),
    _Row("nanvar", _var_fields(True),           _var_merge,         _var_final(False, True),    lambda t, d: _np_result(np.nanvar, t, d), ("dtype", "ddof")),
    _Row("nanstd", _var_fields(True),           _var_merge,         _var_final(True, True),     lambda t, d: _np_result(np.nanstd, t, d), ("dtype", "ddof")),
]}


def _red_chunk(x, m=None, axis=None, keepdims=True, *, row, placer, res, kw,
               computing_meta=False):
    """One chunk's partials; m: its block of the second operand (a where=
    mask, average's weights), as dask.array.reduction passes weights."""
    if computing_meta:  # (a structured res, average's: a host meta)
        return x if res.names is None else np.empty((0,) * x.ndim, res)
    if m is not None:
        kw = dict(kw, where=m)
    if row.empty == "skip" and _extent(x.shape, axis) == 0:
        z = np.empty(_empty_shape(x.shape, axis), x.dtype)
        return {f: z for f in row.merge} if isinstance(row.merge, dict) \
            else {"v": z}
    if x.size == 0:
        # nothing to send anywhere (and dask's meta calls): NumPy's
        # identity partials on an empty host array
        if m is not None:
            kw = dict(kw, where=_host(m))
        return row.fields(_np_call, np.empty(x.shape, x.dtype), axis, res,
                          _core.current_index(), kw)
    return _on_device(x, placer,
                      lambda call, pos: row.fields(call, x, axis, res, pos, kw))


def _np_call(fname, a, **kw):
    return getattr(np, fname)(a, **kw)


def _fetch(parts):
    """Nested lists of partial dicts with every device partial read back
    by one _core.get_many (every read enqueued first, one wait per device,
    a device's small reads gathered there and read once) instead of one
    blocking read each."""
    leaves = []

    def walk(p):
        if isinstance(p, list):
            for q in p:
                walk(q)
        elif isinstance(p, dict):
            leaves.extend(v for v in p.values() if isinstance(v, Array))
    walk(parts)
    if len(leaves) < 2:
        return parts
    got = dict(zip(map(id, leaves), _core.get_many(leaves)))

    def put(p):
        if isinstance(p, list):
            return [put(q) for q in p]
        if isinstance(p, dict):
            return {f: got.get(id(v), v) if isinstance(v, Array) else v
                    for f, v in p.items()}
        return p
    return put(parts)


def _gather(parts, axis, fetch=True):
    """Nested lists of partial dicts -> {field: one host array} (fetch:
    device partials among them, read here)."""
    if fetch:
        parts = _fetch(parts)
    if not axis:  # nothing reduced (axis=(), 0-d): one partial per block
        while isinstance(parts, list):
            parts = parts[0]
        return {f: _host(v) for f, v in parts.items()}
    if not isinstance(parts, list):
        parts = [parts]
    if len(axis) == 1 and not isinstance(parts[0], list):
        # one reduced axis: the partials side by side along it (what the
        # nesting below gives, without deepmap's walk: 0.13 -> 0.05 ms for
        # 64 partials)
        return {f: np.concatenate([_host(p[f]) for p in parts], axis=axis[0])
                for f in parts[0]}
    first = parts
    while isinstance(first, list):
        first = first[0]
    out = {}
    for f in first:
        a = deepmap(lambda p, f=f: _host(p[f]), parts)
        out[f] = _concatenate2(a, axes=sorted(axis))
    return out


def _merge(row, f, axis):
    if callable(row.merge):
        return row.merge(f, axis)
    out = {}
    for k, uf in row.merge.items():
        v = f[k]
        if _extent(v.shape, axis) == 0:
            # every partial of the group empty (min/max): stays empty
            out[k] = np.empty(_empty_shape(v.shape, axis), v.dtype)
        else:
            with np.errstate(over="ignore"):
                out[k] = uf.reduce(v, axis=axis, keepdims=True, dtype=v.dtype)
    return out


def _red_combine(parts, axis=None, keepdims=True, *, row, res, ndim,
                 computing_meta=False):
    if computing_meta:  # (Dask's meta: an empty array of the right ndim)
        return np.empty((0,) * ndim, res)
    return _merge(row, _gather(parts, axis), axis)


def _red_agg(parts, axis=None, keepdims=False, *, row, res, kw, ndim,
             computing_meta=False, fetch=True):
    if computing_meta:
        return np.empty((0,) * (ndim if keepdims else ndim - len(axis)), res)
    f = _gather(parts, axis, fetch)
    if not callable(row.merge):
        # the final ufunc.reduce sees every partial (initial applies once)
        return row.final(f, axis, keepdims, res, kw)
    return row.final(_merge(row, f, axis), axis, keepdims, res, kw)


def _norm_axis(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        a %= ndim
        if a in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(a)
    return tuple(out)


def _as_dask(a):
    if getattr(da, "_array_expr_enabled", lambda: False)():
        raise NotImplementedError(
            "gpured.dask builds on Dask's default (graph) arrays; Dask's "
            "experimental array query planning (dask.config "
            "'array.query-planning': True) is not supported yet")
    if isinstance(a, _DaskArray):
        return a
    return da.asarray(a)


def _align(o, x):
    """o (array-like or Dask array) broadcast to x's shape (NumPy's rules)
    and chunked as x: a second operand for da.reduction (no rechunk of x,
    none of o where it already is)."""
    if not isinstance(o, _DaskArray):
        o = np.asarray(o)
        name = "gpured-operand-" + dask.base.tokenize(o, x.shape, x.chunks)
        return da.from_array(np.broadcast_to(o, x.shape), chunks=x.chunks,
                             name=name)
    k = x.ndim - o.ndim
    if k < 0 or builtins.any(s not in (1, x.shape[k + i])
                             for i, s in enumerate(o.shape)):
        raise ValueError("operands could not be broadcast together with "
                         "shapes %s %s" % (o.shape, x.shape))
    o = o.rechunk(tuple(x.chunks[k + i] if s == x.shape[k + i] and s != 1
                        else (s,) for i, s in enumerate(o.shape)))
    return da.broadcast_to(o, x.shape, chunks=x.chunks)


def _where_mask(where, x):
    """where= as a bool Dask array of x's shape and chunks; None for
    NumPy's literal True (no mask).  Arrays must be bool (NumPy's "safe"
    cast), other objects convert by truth, as gpured's where=."""
    if where is True:
        return None
    if isinstance(where, (np.ndarray, _DaskArray, Array)):
        _bool_check(where, (np.ndarray, _DaskArray, Array))
        if isinstance(where, Array):
            where = where.get()
    else:
        where = np.asarray(where, dtype=bool)
    return _align(where, x)


_CX_ROWS = ("sum", "mean", "nansum", "nanmean", "var", "std", "nanvar",
            "nanstd")


def _cx_reduce(row, x, axis, dtype, keepdims, split_every, out, initial,
               devices, policy, rates, ddof, where):
    """Complex chunks (gpured/_complex.py's views, chunk by chunk): the
    blocks viewed as their real dtype with a trailing axis of 2, reduced
    by the real row over the other axes, viewed back as complex (var/std:
    the parts' variances summed, std its root).  The nan forms drop an
    element with a NaN in either part (the mask as where=)."""
    if row.name not in _CX_ROWS or out is not None or initial is not _NoValue:
        raise TypeError("gpured.dask: %s of complex chunks%s is not supported "
                        "(sum, mean, var, std and their nan forms are)" % (
                            row.name, "" if row.name in _CX_ROWS
                            else " with out=/initial="))
    rt = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
    if x.dtype not in (np.complex64, np.complex128) or (
            dtype is not None and np.dtype(dtype).kind != "c"):
        _check_dtype(dtype if dtype is not None else x.dtype, "input")
    rd = None if dtype is None else _cx._rdtype(dtype)
    name = row.name
    w = None if where is True else _align(
        where if isinstance(where, _DaskArray) else np.asarray(where, bool), x)
    ax = _norm_axis(axis, x.ndim)
    # nan forms: both parts NaN wherever either is, so that the real nan*
    # rows drop whole elements
    xr = x.map_blocks(_cx.nan_spread if name.startswith("nan") else _cx.real,
                      new_axis=x.ndim, chunks=x.chunks + ((2,),), dtype=rt)
    kw = {} if w is None else {"where": w.map_blocks(
        lambda b: np.broadcast_to(np.asarray(b)[..., None], b.shape + (2,)),
        new_axis=x.ndim, chunks=w.chunks + ((2,),), dtype=bool)}
    base = name[:-3] + "var" if name.endswith(("var", "std")) else name
    args = {"ddof": ddof} if base.endswith("var") else {}
    r = globals()[base](xr, axis=ax, dtype=rd, keepdims=keepdims,
                        split_every=split_every, devices=devices,
                        policy=policy, rates=rates, **args, **kw)
    if base.endswith("var"):
        r = r.sum(axis=-1)
        return da.sqrt(r) if name.endswith("std") else r
    ct = np.dtype(np.complex64 if r.dtype == np.float32 else np.complex128)
    # means: NumPy's complex division spreads a NaN or inf part
    fix = _cx.mean_rule if base.endswith("mean") else np.asarray
    return r.map_blocks(lambda b: _cx.cx(fix(np.asarray(b)), False),
                        drop_axis=r.ndim - 1, dtype=ct)


_RESULTS = {}


def _result(row, xdt, dtype):
    """row.result(xdt, dtype), once per process per (row, dtypes): NumPy's
    answer costs a call on a small array under caught warnings (~20 us,
    before the first chunk is enqueued)."""
    key = (row.name, xdt, dtype)
    r = _RESULTS.get(key)
    if r is None:
        r = _RESULTS[key] = row.result(xdt, dtype)
    return r


def _reduce(row, a, axis=None, dtype=None, keepdims=False, split_every=None,
            out=None, initial=_NoValue, devices=None, policy="rate",
            rates=None, ddof=0, where=True):
    x = _as_dask(a)
    if x.dtype.kind == "c":
        return _cx_reduce(row, x, axis, dtype, keepdims, split_every, out,
                          initial, devices, policy, rates, ddof, where)
    _check_dtype(x.dtype, "input")
    if dtype is not None:
        dtype = _check_dtype(dtype, "result")
    res = _result(row, x.dtype, dtype)
    ax = _norm_axis(axis, x.ndim)
    m = _where_mask(where, x)
    if m is not None and row.name in _NO_IDENTITY and (
            initial is _NoValue or initial is None):
        raise ValueError("reduction operation '%s' does not have an "
                         "identity, so to use a where mask one has to "
                         "specify 'initial'" % _NO_IDENTITY[row.name])
    return _run(row, x, ax, res, keepdims, split_every, out,
                {"initial": initial, "ddof": ddof},
                _Placer(devices, policy, rates), m)


# split_every=None: one combine of up to _WIDE partials where they are
# small (Dask's default, 4, made 84 host tasks of a 256-chunk sum: each a
# Dask task and a gather, ~0.2-0.4 ms apiece, while a chunk's kernel on
# the H100 takes 0.36 ms per GiB)
_WIDE = 64
_WIDE_BYTES = 64 << 20


def _split_every(x, ax, split_every):
    if split_every is not None:
        return split_every
    kept = 1
    for i, c in enumerate(x.chunks):
        if i not in ax:
            kept *= builtins.max(c, default=1)
    return _WIDE if kept * 16 * _WIDE <= _WIDE_BYTES else None


def _resident_blocks(x):
    """{block index: gpured.Array} where every block of x is an Array held
    in x's graph (a persisted device-resident array), else None."""
    if x.ndim == 0:
        return None
    try:
        g = x.__dask_graph__()
        # a persisted array: one layer holds its blocks (its lookups are
        # a third of the graph's)
        g = getattr(g, "layers", {}).get(x.name, g)
        out = {}
        for idx in product(*(range(n) for n in x.numblocks)):
            v = g[(x.name,) + idx]
            if not isinstance(v, Array) or v.size == 0:
                return None
            out[idx] = v
        return out
    except Exception:  # noqa: BLE001 - any other graph: Dask's reduction
        return None


class _Partials:
    """One output block's partials, enqueued on the blocks' devices when
    the reduction is built (opaque to Dask: its task depends on none of
    x's keys, and the devices work while Dask schedules)."""
    __slots__ = ("at", "slots")

    def __init__(self, at, slots=()):
        self.at = at  # {reduced block index: {field: Array or ndarray}}
        # [(buffer Array, [reduced block index of each row])]: partials
        # written into rows of one device buffer (_enqueue_direct)
        self.slots = slots


def _turns(items):
    """items [(ridx, block)] grouped by device, the devices in turn:
    [(k, ridx, block)] with k the block's place in its device's queue,
    and {device: its blocks}."""
    by_dev = {}
    for ridx, b in items:
        by_dev.setdefault(b.device_index, []).append((ridx, b))
    queues = [by_dev[d] for d in sorted(by_dev)]
    order = []
    for k in range(builtins.max(len(q) for q in queues)):
        for q in queues:
            if k < len(q):
                order.append((k,) + q[k])
    return order, by_dev


def _c_strides(shape, itemsize):
    out, acc = [], itemsize
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def _fuse(items, ax, rshape):
    """One output block's chunks [(ridx, block)] with each device's run of
    chunks that lie one after the other along axis 0 in one buffer
    (to_device's slabs) joined into one view: ([(ridx, block or view)],
    the reduced blocks' new shape), or None where nothing joins.  Only
    where axis 0 is reduced and is the only reduced axis of several
    blocks (one output block's chunks then differ along it alone).  A
    view's partial is the partial of its chunks merged: every row's
    fields (sums, counts, extremes, moments) are partition-invariant."""
    if 0 not in ax or len(items) < 2 or builtins.any(
            n != 1 for a, n in zip(ax, rshape) if a != 0):
        return None
    groups, cstr, out = {}, {}, []
    for _, b in items:
        k = (b.shape, b.dtype.itemsize)
        c = cstr.get(k)
        if c is None:
            c = cstr[k] = _c_strides(*k)
        if b.strides == c:  # (C order, no gaps: a slab's views)
            groups.setdefault((b.device_index, id(b.buffer)), []).append(b)
        else:
            out.append(b)
    for bs in groups.values():
        bs.sort(key=lambda b: b.offset)
        run = [bs[0]]
        for b in bs[1:] + [None]:
            last = run[-1]
            if b is not None and b.shape[1:] == last.shape[1:] and \
                    b.offset == last.offset + last.nbytes:
                run.append(b)
                continue
            if len(run) == 1:
                out.append(last)
            else:
                out.append(Array(run[0].buffer,
                                 (builtins.sum(r.shape[0] for r in run),)
                                 + last.shape[1:], last.dtype, None,
                                 run[0].offset))
            run = [b]
    if len(out) == len(items):  # nothing joined
        return None
    return ([(tuple(i if a == 0 else 0 for a in ax), v)
             for i, v in enumerate(out)],
            tuple(len(out) if a == 0 else 1 for a in ax))


def _resident_enqueue(items, *, row, res, kw, axis, counts):
    """Every block's partial enqueued on its own device, the devices taken
    in turn (each starts at once); no wait.  counts: {device: (bytes,
    chunks)} for stats() (the chunks before _fuse joined them)."""
    for d, (nb, n) in counts.items():
        _count(d, nb, n)
    order, by_dev = _turns(items)
    direct = getattr(row.fields, "direct", None)
    dt = items[0][1].dtype
    if direct is not None and kw.get("where") is None and dt.kind != "c" \
            and not _half.is_half(dt):
        return _enqueue_direct(order, by_dev, direct, res, axis)
    at = {}
    for _, ridx, b in order:
        at[ridx] = row.fields(_call_own, b, axis, res, b.device_index, kw)
    return _Partials(at)


def _call_own(fname, a, **kw):
    """gpured.<fname> on an Array's own device."""
    return getattr(gpured, fname)(a, **kw)


# Several devices, each with at least _THREAD_MIN chunks of one output
# block: each device's chunks enqueued by a thread of its own (the core
# releases the GIL in its calls: the devices' enqueues overlap), the
# first device's in the calling thread; the caller waits for the others
# before the graph is built (no thread is left enqueueing beside Dask's
# scheduler, which would hold the GIL for up to its 5 ms switch
# interval).  GPURED_DASK_THREADS=0 (or _ENQ_THREADS = False): the
# devices in turn from the calling thread.
_ENQ_THREADS = os.environ.get("GPURED_DASK_THREADS", "1") != "0"
_THREAD_MIN = 4
_POOL = [None, None]  # [executor, pid]


def _executor(n):
    from concurrent.futures import ThreadPoolExecutor
    with _lock:
        ex, pid = _POOL
        if ex is None or pid != os.getpid() or ex._max_workers < n:
            # (a forked child gets a pool of its own: the parent's
            # threads are not there)
            _POOL[:] = [ThreadPoolExecutor(
                n, thread_name_prefix="gpured-dask-enqueue"), os.getpid()]
        return _POOL[0]


def _device_partials(fname, dt, q, axis):
    """One device's chunks q [(ridx, block)] in order: the first partial a
    core call of its own, the others written into the rows of one buffer
    there.  Returns (ridx, first partial, buffer or None, its rows'
    ridx)."""
    red = _core.reduce
    r0, b0 = q[0]
    p = red(fname, b0, axis, dt, None, True, _NoValue, {})
    n = len(q) - 1
    if not n:
        return r0, p, None, []
    buf = gpured.empty((n,) + p.shape, p.dtype, device=b0.device_index)
    # rows as Arrays on the buffer (buf[i] without the indexing rules:
    # ~1 us each instead of ~5)
    st, step, off = buf.strides[1:], buf.strides[0], buf.offset
    for i in range(n):
        red(fname, q[i + 1][1], axis, dt,
            Array(buf.buffer, p.shape, p.dtype, st, off + i * step),
            True, _NoValue, {})
    return r0, p, buf, [r for r, _ in q[1:]]


def _enqueue_direct(order, by_dev, direct, res, axis):
    """_resident_enqueue for a row that is one gpured call per chunk
    (sum, prod, min, max, all, any, nansum, nanprod; no where=): each
    device's first partial is a core call of its own (its dtype and
    shape, and any error, as gpured.<fname> gives them), the device's
    other partials are written by the core straight into the rows of one
    buffer there (out=): per chunk one core call and nothing else (no
    Python face, no placement, no per-partial copy or read later: one
    read per device)."""
    fname, dtype_of = direct
    devs = sorted(by_dev)
    dts = {d: None if dtype_of is None else dtype_of(res, d) for d in devs}
    if _ENQ_THREADS and len(devs) > 1 and builtins.min(
            len(by_dev[d]) for d in devs) >= _THREAD_MIN:
        ex = _executor(len(devs) - 1)
        futs = [ex.submit(_device_partials, fname, dts[d], by_dev[d], axis)
                for d in devs[1:]]
        done = [_device_partials(fname, dts[devs[0]], by_dev[devs[0]], axis)]
        done += [f.result() for f in futs]
    else:
        done = _in_turns(order, by_dev, fname, dts, axis)
    return _Partials({r0: {"v": p} for r0, p, _, _ in done},
                     [(buf, rows) for _, _, buf, rows in done
                      if buf is not None])


def _in_turns(order, by_dev, fname, dts, axis):
    """_device_partials of every device from this thread, the devices in
    turn (each starts at once)."""
    red = _core.reduce
    first, views = {}, {}
    for k, ridx, b in order:
        d = b.device_index
        if k == 0:
            p = red(fname, b, axis, dts[d], None, True, _NoValue, {})
            n = len(by_dev[d]) - 1
            buf = gpured.empty((n,) + p.shape, p.dtype, device=d) if n \
                else None
            first[d] = (ridx, p, buf, [r for r, _ in by_dev[d][1:]])
            if n:
                st, step = buf.strides[1:], buf.strides[0]
                views[d] = [Array(buf.buffer, p.shape, p.dtype, st,
                                  buf.offset + i * step) for i in range(n)]
            continue
        red(fname, b, axis, dts[d], views[d][k - 1], True, _NoValue, {})
    return [first[d] for d in sorted(first)]


def _resident_agg(held, *, shape, axis, keepdims, row, res, kw, ndim):
    """One output block from its partials: all read back with one wait
    per device (_core.get_many; a device's partials buffer is one read),
    nested as Dask's reduction would nest them, then _red_agg (whose
    _gather concatenates one reduced axis directly)."""
    at = dict(held.at)
    leaves = [(r, f) for r, p in at.items() for f, v in p.items()
              if isinstance(v, Array)]
    got = _core.get_many([at[r][f] for r, f in leaves] +
                         [buf for buf, _ in held.slots])
    for (r, f), h in zip(leaves, got):
        at[r] = dict(at[r], **{f: h})
    for (_, rows), h in zip(held.slots, got[len(leaves):]):
        for i, r in enumerate(rows):
            at[r] = {"v": h[i]}

    def nest(prefix):
        if len(prefix) == len(shape):
            return at[prefix]
        return [nest(prefix + (i,)) for i in range(shape[len(prefix)])]
    return _red_agg(nest(()), axis, keepdims, row=row, res=res, kw=kw,
                    ndim=ndim, fetch=False)  # (all read above)


def _resident_groups(x, ax):
    """A reduction over ax of a persisted device-resident x, per output
    block: [(oidx, [(ridx, block or joined view)], the reduced blocks'
    shape, {device: (bytes, chunks)})]; None where x is not one.  Kept on
    the graph layer that holds x's blocks, per ax (the layer lives as
    long as the blocks, and a persisted graph is not changed): a second
    reduction of x over the same axes goes straight to its enqueues
    (~0.15 ms sooner for 64 chunks on the 2-core machine)."""
    layer = None
    try:
        layer = x.__dask_graph__().layers.get(x.name)
        hit = layer._gpured_groups.get(ax)
    except Exception:  # noqa: BLE001 - no such layer, or nothing kept yet
        hit = None
    if hit is not None:
        return hit
    blocks = _resident_blocks(x)
    if blocks is None:
        return None
    kept = [i for i in range(x.ndim) if i not in ax]
    rshape = tuple(x.numblocks[i] for i in ax)
    groups = {}  # output block -> [[(ridx, block)], {device: (bytes, n)}]
    for idx, b in blocks.items():
        g = groups.get(oidx := tuple(idx[i] for i in kept))
        if g is None:
            g = groups[oidx] = [[], {}]
        g[0].append((tuple(idx[i] for i in ax), b))
        nb, n = g[1].get(b.device_index, (0, 0))
        g[1][b.device_index] = (nb + b.nbytes, n + 1)
    out = []
    for oidx, (items, counts) in groups.items():
        fused = _fuse(items, ax, rshape)
        items, shape = fused if fused is not None else (items, rshape)
        out.append((oidx, items, shape, counts))
    try:
        layer.__dict__.setdefault("_gpured_groups", {})[ax] = out
    except Exception:  # noqa: BLE001 - a graph without such a layer
        pass
    return out


class _OneBlock(_DaskArray):
    """The result of a reduction of a persisted device-resident array
    whose output is one block of at most one dimension (``gd.sum(x)``,
    ``gd.max(x, axis=0)`` of rows chunked along axis 0, ...).  Its
    ``compute()`` returns that block as the task made it, without the
    finalize task Dask puts after an array's blocks (Dask leaves it out
    for a collection whose postcompute is Delayed's ``single_key``): one
    task and, under the threaded scheduler, one hand-off to a pool thread
    and back fewer per compute (the H200 host: 0.5 ms after the GPU with
    it, 0.22-0.26 with the sync scheduler).  The block is the task's own
    new array each time, so finalize's copy had nothing to guard.  What
    is derived from it (``r + 1``, ``r.persist()``) is a plain dask
    Array; with other collections in one ``dask.compute`` it is finalized
    with them.

    ``r.compute()`` with no arguments (``scheduler=None`` counts as
    none), no scheduler set in Dask's config, no Dask callback active and
    no dask.distributed client runs that one task in the calling thread: a graph of one task with no dependencies
    leaves a scheduler nothing to order, and the threaded scheduler's
    set-up and hand-offs cost ~1 ms of host time, ~0.3 ms of it after the
    GPU is done (the H200 host).  ``dask.compute(r)``, a scheduler named
    or set, a ProgressBar or a client take Dask's own path."""
    __slots__ = ()

    def __dask_postcompute__(self):
        return single_key, ()

    def compute(self, scheduler=None, **kwargs):
        if scheduler is not None or kwargs or not _inline_ok():
            return super().compute(scheduler=scheduler, **kwargs)
        (task,) = self.dask.layers[self.name].mapping.values()
        return task[0]()


def _inline_ok():
    """Whether a compute() may run its one task here: Dask would pick its
    threaded scheduler (no scheduler in its config, no dask.distributed
    client) and nothing watches its tasks (no Callback active)."""
    if dask.config.get("scheduler", None) is not None or Callback.active:
        return False
    if "distributed" in sys.modules:
        try:
            sys.modules["distributed"].get_client()
        except (ValueError, AttributeError):
            return True
        return False
    return True


def _run_resident(row, x, ax, res, keepdims, kw, groups):
    """A persisted device-resident x: its blocks' partials are enqueued
    where they live now (persisted blocks are values: Dask's arrays are
    not changed in place), and one task per output block reads them back
    and combines them.  No Dask task per chunk (a task costs ~0.3 ms of
    host time, a GiB chunk 0.36 ms of an H100), and Dask's own host time
    for the compute (~2 ms on the H100 host) overlaps the kernels.
    groups: _resident_groups(x, ax)."""
    kept = [i for i in range(x.ndim) if i not in ax]
    tasks = [(oidx, shape, _resident_enqueue(
        items, row=row, res=res, kw=kw, axis=ax, counts=counts))
        for oidx, items, shape, counts in groups]
    # (named once the devices work; a name of its own per build: its
    # partials are this build's, never shared with another graph, so
    # Dask's tokenize of the arguments, ~40 us, buys nothing)
    name = "gpured-%s-%s" % (row.name, uuid.uuid4().hex)
    dsk = {}
    for oidx, shape, held in tasks:
        okey = (name,) + (tuple(0 if i in ax else oidx[kept.index(i)]
                                for i in range(x.ndim)) if keepdims else oidx)
        dsk[okey] = (partial(_resident_agg, held, shape=shape, axis=ax,
                             keepdims=keepdims, row=row, res=res, kw=kw,
                             ndim=x.ndim),)
    chunks = tuple((1,) if i in ax else x.chunks[i] for i in range(x.ndim)) \
        if keepdims else tuple(x.chunks[i] for i in kept)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[])
    # (one block: [key] for 0 or 1 dimensions, single_key's shape)
    cls = _OneBlock if len(dsk) == 1 and len(chunks) <= 1 else da.Array
    return cls(graph, name, chunks, meta=np.empty((0,) * len(chunks), res))


def _run(row, x, ax, res, keepdims, split_every, out, kw, placer, other=None):
    """da.reduction of row over x (other: a second operand of x's shape
    and chunks, each block passed beside its chunk)."""
    ndim_out = x.ndim if keepdims else x.ndim - len(ax)
    if other is None and ax and split_every is None:
        groups = _resident_groups(x, ax)
        if groups is not None:
            return handle_out(out, _run_resident(row, x, ax, res, keepdims,
                                                  kw, groups))
    split_every = _split_every(x, ax, split_every)
    return da.reduction(
        x,
        partial(_red_chunk, row=row, placer=placer, res=res, kw=kw),
        partial(_red_agg, row=row, res=res, kw=kw, ndim=x.ndim),
        combine=partial(_red_combine, row=row, res=res, ndim=x.ndim),
        axis=ax, keepdims=keepdims, dtype=res, split_every=split_every,
        out=out, concatenate=False, name="gpured-" + row.name,
        meta=np.empty((0,) * ndim_out, res), weights=other)


# ------------------------------------------------------- argmin / argmax

# name -> (the value's reduction, is_min).  nanargmin/nanargmax: NaN reads
# as +inf/-inf (NumPy's replacement, ties included) and each chunk slice
# says whether it held NaNs only; the global slice raises NumPy's
# ValueError only where every chunk's did.
_ARGS = {"argmin": ("min", True), "argmax": ("max", False),
         "nanargmin": ("nanmin", True), "nanargmax": ("nanmax", False)}


def _arg_chunk(x, axis, offset_info, *, fname, placer):
    arg_axis = None if len(axis) == x.ndim or x.ndim == 1 else axis[0]
    rax = tuple(range(x.ndim)) if arg_axis is None else (arg_axis,)
    vname, is_min = _ARGS[fname]
    nanf = fname.startswith("nan")
    if _extent(x.shape, rax) == 0:
        shape = _empty_shape(x.shape, rax)
        return _struct(np.empty(shape, x.dtype), np.empty(shape, np.int64),
                       np.empty(shape, bool) if nanf else None)

    def body(call, pos):
        if nanf:
            # the index with NaN replaced (no all-NaN error here), the
            # NaN-skipping extreme beside it (NaN: the slice held NaNs only)
            i = call("_nanarg_index", x, name=fname, axis=arg_axis,
                     keepdims=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                v = call(vname, x, axis=arg_axis, keepdims=True)
            return _host(i), _host(v)
        i = call(fname, x, axis=arg_axis, keepdims=True)
        if isinstance(x, Array):
            v = call(vname, x, axis=arg_axis, keepdims=True)
            return _host(i), _host(v)
        i = np.asarray(i)
        if arg_axis is None:
            idx = np.unravel_index(int(i.reshape(-1)[0]), x.shape)
            v = np.asarray(x[idx]).reshape(i.shape)
        else:
            v = np.take_along_axis(np.asarray(x), i, axis=arg_axis)
        return i, v

    i, v = _on_device(x, placer, body)
    i = i.astype(np.int64)
    allnan = None
    if nanf:
        allnan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
        v = np.where(allnan, np.inf if is_min else -np.inf, v).astype(v.dtype)
    if x.ndim > 0:
        if arg_axis is None:
            offset, total = offset_info
            loc = np.unravel_index(int(i.reshape(-1)[0]), x.shape)
            i[...] = np.ravel_multi_index(
                tuple(o + j for o, j in zip(offset, loc)), total)
        else:
            i += offset_info
    return _struct(v, i, allnan)


def _struct(v, i, allnan=None):
    fields = [("vals", v.dtype), ("arg", np.int64)]
    if allnan is not None:
        fields.append(("allnan", bool))
    s = np.empty(v.shape, dtype=fields)
    s["vals"] = v
    s["arg"] = i
    if allnan is not None:
        s["allnan"] = allnan
    return s


def _arg_pick(data, axis, is_min, keepdims):
    """(vals, args, allnan) of the winner along axis: the extreme value,
    NaN first, the smallest global index among equals; allnan (nanarg*,
    else None): every part's slice held NaNs only."""
    v, i = data["vals"], data["arg"]
    nn = data["allnan"] if "allnan" in data.dtype.names else None
    if axis is None:
        v, i, ax = v.reshape(-1), i.reshape(-1), 0
        nn = None if nn is None else nn.reshape(-1)
    else:
        ax = axis
    if v.shape[ax] == 0:
        raise ValueError("attempt to get %s of an empty sequence"
                         % ("argmin" if is_min else "argmax"))
    with np.errstate(invalid="ignore"):
        ext = (np.min if is_min else np.max)(v, axis=ax, keepdims=True)
        cand = v == ext
        if v.dtype.kind == "f":
            cand |= np.isnan(v) & np.isnan(ext)
    key = np.where(cand, i, np.iinfo(np.int64).max)
    at = np.argmin(key, axis=ax, keepdims=True)
    nv = np.take_along_axis(v, at, axis=ax)
    ni = np.take_along_axis(i, at, axis=ax)
    na = None if nn is None else np.all(nn, axis=ax, keepdims=True)
    if axis is None:
        shape = (1,) * data.ndim if keepdims else ()
        return (nv.reshape(shape), ni.reshape(shape),
                None if na is None else na.reshape(shape))
    if not keepdims:
        nv, ni = np.squeeze(nv, ax), np.squeeze(ni, ax)
        na = None if na is None else np.squeeze(na, ax)
    return nv, ni, na


def _arg_axis(data, axis):
    return None if len(axis) == data.ndim or data.ndim == 1 else axis[0]


def _arg_combine(data, axis=None, keepdims=True, *, is_min, **kw):
    return _struct(*_arg_pick(data, _arg_axis(data, axis), is_min, True))


def _arg_agg(data, axis=None, keepdims=False, *, is_min, **kw):
    v, i, na = _arg_pick(data, _arg_axis(data, axis), is_min, keepdims)
    if na is not None and np.any(na):
        raise ValueError("All-NaN slice encountered")
    return i.astype(np.intp)[()] if i.ndim == 0 else i.astype(np.intp)


def _argreduce(fname, a, axis=None, keepdims=False, split_every=None,
               out=None, devices=None, policy="rate", rates=None):
    x = _as_dask(a)
    _check_dtype(x.dtype, "input")
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise TypeError("axis must be None or an int, got %r" % (axis,))
    if x.ndim == 0:  # as NumPy: index 0, a 0-d result with or without keepdims
        x, axis, keepdims = x.reshape(1), None, False
    if x.size == 0 and (axis is None or x.shape[int(axis) % x.ndim] == 0):
        raise ValueError("attempt to get %s of an empty sequence" % fname)
    is_min = _ARGS[fname][1]
    placer = _Placer(devices, policy, rates)
    r = arg_reduction(x, partial(_arg_chunk, fname=fname, placer=placer),
                      partial(_arg_combine, is_min=is_min),
                      partial(_arg_agg, is_min=is_min),
                      axis=axis, keepdims=keepdims,
                      split_every=_split_every(
                          x, tuple(range(x.ndim)) if axis is None
                          else (int(axis) % x.ndim,), split_every))
    return handle_out(out, r)


# ----------------------------------------------------------------- scans

# scan -> (reduction giving a chunk's total, NumPy merge, identity of dtype)
_SCANS = {
    "cumsum": ("sum", np.add, lambda dt: 0, np.cumsum),
    "cumprod": ("prod", np.multiply, lambda dt: 1, np.cumprod),
    "cummin": ("min", np.minimum, lambda dt: _extreme(dt, True),
               np.minimum.accumulate),
    "cummax": ("max", np.maximum, lambda dt: _extreme(dt, False),
               np.maximum.accumulate),
    "nancumsum": ("nansum", np.add, lambda dt: 0, np.nancumsum),
    "nancumprod": ("nanprod", np.multiply, lambda dt: 1, np.nancumprod),
}


def _extreme(dt, big):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return big
    if dt.kind == "f":
        return np.inf if big else -np.inf
    info = np.iinfo(dt)
    return info.max if big else info.min


def _scan_result(op, xdt, dtype):
    fn = _SCANS[op][3]
    z = np.zeros(1, xdt)
    return np.asarray(fn(z) if dtype is None else fn(z, dtype=dtype)).dtype


def _sl(ndim, axis, s):
    return tuple(s if i == axis else slice(None) for i in range(ndim))


def _host_scan(x, axis=None, dtype=None, *, op, placer, exclusive=False):
    """gpured's scan of one chunk, as a host array (for cumreduction)."""
    if x.size == 0:
        return np.empty(x.shape, dtype)
    r = _on_device(x, placer, lambda call, pos: call(
        op, x, axis=axis, dtype=dtype, exclusive=exclusive))
    return _host(r)


def _host_total(x, axis=None, keepdims=True, *, red, res, placer):
    """A chunk's total along axis (keepdims, res dtype): the blelloch preop
    and the carry-first path's totals."""
    if x.size == 0:
        return np.full(_kept_shape(x.shape, (axis,)), _SCANS_ID[red](res), res)
    extra = {"dtype": res} if red in ("sum", "prod", "nansum", "nanprod") else {}
    r = _on_device(x, placer, lambda call, pos: call(
        red, x, axis=axis, keepdims=True, **extra))
    return _host(r).astype(res, copy=False)


_SCANS_ID = {v[0]: v[2] for v in _SCANS.values()}


class _named:
    """A picklable callable with a __name__ (cumreduction names its keys
    after func.__name__) and the wrapped partial's signature."""

    def __init__(self, fn, name):
        self.fn, self.__name__ = fn, name
        self.__signature__ = inspect.signature(fn)

    def __call__(self, *a, **k):
        return self.fn(*a, **k)

    def __dask_tokenize__(self):
        return (self.__name__, self.fn.keywords["op"], self.fn.keywords["placer"])


def _merge_fn(ufunc):
    def merge(a, b):
        return ufunc(_host(a), _host(b))
    merge.__name__ = ufunc.__name__
    return merge


def _scan_block(x, carry, *, op, axis, res, exclusive, placer):
    """One chunk of the carry-first path: the scan of x with carry (None:
    the first chunk) folded in; device chunks stay on their device."""
    merge = _SCANS[op][1]
    if x.size == 0:
        return (gpured.empty(x.shape, res, device=x.device_index)
                if isinstance(x, Array) else np.empty(x.shape, res))
    if not isinstance(x, Array):
        r = _host_scan(x, axis, res, op=op, placer=placer, exclusive=exclusive)
        if carry is not None:
            merge(r, carry.astype(res, copy=False), out=r)
        return r
    _count(x.device_index, x.nbytes)
    if carry is None:
        return getattr(gpured, op)(x, axis=axis, dtype=res, exclusive=exclusive)
    # [carry, x] (or [carry, x[:-1]]) in one device buffer, scanned once
    n = x.shape[axis]
    dev = x.device_index
    shape = tuple(s + (0 if exclusive else 1) if i == axis else s
                  for i, s in enumerate(x.shape))
    o = gpured.empty(shape, res, device=dev)
    body = x[_sl(x.ndim, axis, slice(0, n - 1))] if exclusive else x
    if body.size:
        _core.device_copy(body, o[_sl(x.ndim, axis, slice(1, None))])
    c = gpured.to_device(np.ascontiguousarray(carry, dtype=res), device=dev)
    _core.device_copy(c, o[_sl(x.ndim, axis, slice(0, 1))])
    r = getattr(gpured, op)(o, axis=axis, dtype=res)
    return r if exclusive else r[_sl(x.ndim, axis, slice(1, None))]


def _carry_first(op, x, axis, res, exclusive, placer, device_meta):
    red, merge = _SCANS[op][0], _merge_fn(_SCANS[op][1])
    totals = x.map_blocks(
        _host_total, axis=axis, red=red, res=res, placer=placer,
        chunks=tuple((1,) * len(c) if i == axis else c
                     for i, c in enumerate(x.chunks)),
        dtype=res, meta=np.empty((0,) * x.ndim, res))
    name = "gpured-%s-%s" % (op, dask.base.tokenize(
        x, axis, res, exclusive, placer, op))
    cname = name + "-carry"
    dsk = {}
    nb = x.numblocks
    for idx in product(*(range(n) for n in nb)):
        k = idx[axis]
        if k == 0:
            carry = None
        else:
            prev = idx[:axis] + (k - 1,) + idx[axis + 1:]
            tot = (totals.name,) + prev
            if k == 1:
                dsk[(cname,) + idx] = (_host, tot)
            else:
                dsk[(cname,) + idx] = (merge, (cname,) + prev, tot)
            carry = (cname,) + idx
        dsk[(name,) + idx] = (
            partial(_scan_block, op=op, axis=axis, res=res,
                    exclusive=exclusive, placer=placer),
            (x.name,) + idx, carry)
    graph = HighLevelGraph.from_collections(name, dsk,
                                            dependencies=[x, totals])
    if device_meta is not None:
        meta = gpured.empty((0,) * x.ndim, res,
                            device=device_meta.device_index)
    else:
        meta = np.empty((0,) * x.ndim, res)
    return _DaskArray(graph, name, x.chunks, meta=meta)


def _scan(op, a, axis=None, dtype=None, out=None, method="sequential",
          exclusive=False, devices=None, policy="rate", rates=None):
    x = _as_dask(a)
    _check_dtype(x.dtype, "input")
    if dtype is not None:
        dtype = _check_dtype(dtype, "result")
    res = _scan_result(op, x.dtype, dtype)
    if method not in ("sequential", "blelloch"):
        raise ValueError("method must be 'sequential' or 'blelloch', not %r"
                         % (method,))
    device_meta = x._meta if isinstance(x._meta, Array) else None
    if axis is None:
        if x.ndim != 1:
            if device_meta is not None and builtins.any(
                    n > 1 for n in x.numblocks[1:]):
                raise ValueError(
                    "axis=None on a device-resident array chunked along "
                    "axes past the first would gather chunks on the host: "
                    "rechunk so that only axis 0 is chunked")
            x = x.reshape(-1)  # chunks along axis 0 only: blockwise views
        axis = 0
    else:
        axis = _norm_axis(axis, x.ndim)[0]
    placer = _Placer(devices, policy, rates)
    if device_meta is None and not exclusive and 0 not in x.chunks[axis]:
        # (cumreduction takes a block's total from its last slice: an empty
        # block has none, so arrays with one take the carry-first path)
        ufunc = _SCANS[op][1]
        r = cumreduction(
            _named(partial(_host_scan, op=op, placer=placer), "gpured_" + op),
            _merge_fn(ufunc), _SCANS[op][2](res), x, axis, res,
            method=method,
            preop=partial(_host_total, red=_SCANS[op][0], res=res,
                          placer=placer))
    else:
        r = _carry_first(op, x, axis, res, exclusive, placer, device_meta)
    return handle_out(out, r)


# ------------------------------------------------------ average / reduceat

def _avg_fields(call, x, axis, res, pos, kw):
    """average's partials of a chunk: s = sum(x * w) and w = sum(w) (acc
    dtype): gpured's one-pass weighted mean (the weights read beside the
    elements) times the weights' sum; where a slice's weights sum to 0
    (the mean is lost) its s is summed on the host."""
    acc = _acc(kw["rt"], pos)
    w = kw["where"]  # the chunk's block of the weights
    if x.size == 0:
        z = np.zeros(_kept_shape(x.shape, axis), acc)
        return {"s": z, "w": z}
    dev = isinstance(x, Array)
    if isinstance(w, Array) and not (dev and w.shape == x.shape):
        w = w.get()
    here = {"device": pos}  # (for host operands: the chunk's device)
    sw = _host(gpured.sum(w, axis, acc, keepdims=True,
                          **({} if isinstance(w, Array) else here)))
    wf = w if isinstance(w, Array) else _like(x, np.asarray(w))
    q = _host(_core.reduce("_average", x, axis, acc, None, True, _NoValue,
                           {} if dev else here, wf))
    with np.errstate(all="ignore"):
        s = q * sw
        if np.any(sw == 0):
            s = np.where(sw == 0, np.sum(np.multiply(_host(x), _host(w),
                                                     dtype=acc),
                                         axis=axis, keepdims=True), s)
    return {"s": s, "w": sw}


def _avg_final(f, axis, keepdims, res, kw):
    s = np.add.reduce(f["s"], axis=axis, keepdims=keepdims)
    w = np.add.reduce(f["w"], axis=axis, keepdims=keepdims)
    if np.any(w == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    r = np.empty(np.shape(s), res)
    with np.errstate(all="ignore"):
        r["avg"], r["scl"] = s / w, w
    return r


_AVERAGE = _Row("average", _avg_fields, {"s": np.add, "w": np.add},
                _avg_final, None)


def _field(b, name=None):
    """A field of a structured block (0-d: NumPy's scalar, as NumPy)."""
    v = b if name is None else b[name]
    return v[()] if v.ndim == 0 else v


def average(a, axis=None, weights=None, returned=False, keepdims=False,
            split_every=None, *, devices=None, policy="rate", rates=None):
    """Weighted average, as :func:`numpy.average`, over a Dask array.

    Each chunk gives ``sum(a * w)`` and ``sum(w)`` (gpured's one-pass
    weighted mean with the weights read beside the elements, and the
    weights' sum, in float64 where the device has it), combined by Dask's
    tree reduction; the quotient is rounded once into NumPy's result dtype
    (``result_type(a, w, 'f8')`` for integer and bool ``a``).  NumPy's
    errors: TypeError where the shapes differ and ``axis`` is None,
    ValueError for weights inconsistent with ``a`` along ``axis``,
    ZeroDivisionError where weights sum to 0 (raised when computed).
    ``weights``: a Dask or NumPy array of ``a``'s shape, or 1-d along
    ``axis`` (NumPy's forms).  Without weights: :func:`mean`.
    ``returned=True`` gives ``(average, sum of weights)``, two Dask arrays
    of one graph (``dask.compute(avg, scl)`` reduces once).  ``devices``, ``policy``, ``rates``: the module
    docstring's."""
    x = _as_dask(a)
    _check_dtype(x.dtype, "input")
    ax = None if axis is None else _norm_axis(axis, x.ndim)
    if weights is None:
        avg = mean(x, ax, keepdims=keepdims, split_every=split_every,
                   devices=devices, policy=policy, rates=rates)
        if not returned:
            return avg
        scl = avg.dtype.type(x.size / avg.size)
        return avg, da.full(avg.shape, scl, dtype=avg.dtype,
                            chunks=avg.chunks).map_blocks(_field)
    w = weights if isinstance(weights, _DaskArray) else np.asarray(weights)
    _check_dtype(w.dtype, "weights")
    if w.shape != x.shape:
        _weights_check(x.shape, w.shape, ax)
        w = w.transpose(tuple(np.argsort(ax))).reshape(tuple(
            s if i in ax else 1 for i, s in enumerate(x.shape)))
    ax = tuple(range(x.ndim)) if ax is None else ax
    rt = (np.result_type(x.dtype, w.dtype, "f8") if x.dtype.kind in "biu"
          else np.result_type(x.dtype, w.dtype))
    st = np.dtype([("avg", rt), ("scl", rt)])
    r = _run(_AVERAGE, x, ax, st, keepdims, split_every, None, {"rt": rt},
             _Placer(devices, policy, rates), _align(w, x))
    meta = np.empty((0,) * r.ndim, rt)
    avg = r.map_blocks(_field, "avg", dtype=rt, meta=meta)
    if not returned:
        return avg
    return avg, r.map_blocks(_field, "scl", dtype=rt, meta=meta)


def _at_part(x, *, bounds, op, axis, dtype, res, placer):
    """A chunk cut at its segment bounds: gpured.reduceat of the pieces
    [bounds[k], bounds[k + 1]) (the last to the chunk's end), on the
    host."""
    def body(call, pos):
        d = _acc(res, pos) if op in ("add", "multiply") and res.kind == "f" \
            else dtype
        return _host(call("reduceat", x, indices=bounds, axis=axis, dtype=d,
                          op=op))
    if x.size == 0:
        return getattr(np, op).reduceat(np.empty(x.shape, x.dtype), bounds,
                                        axis=axis, dtype=dtype)
    return _on_device(x, placer, body)


def _at_combine(parts, *, metas, n, op, axis, res):
    """Output block of n segments: segment j's piece of a chunk is the
    op over pieces ka..kb-1 of that chunk's partials; pieces of one
    segment from several chunks combine in chunk order."""
    uf = getattr(np, op)
    vals, ids = [], []
    with np.errstate(all="ignore"):
        for p, (j, ka, kb) in zip(parts, metas):
            p = _host(p)
            if np.array_equal(kb, ka + 1):
                v = np.take(p, ka, axis)
            else:
                # pairs (ka, kb) by increasing ka: the odd results between
                # them then cost at most one pass over p
                o = np.argsort(ka, kind="stable")
                at = np.empty(2 * len(o), np.intp)
                at[0::2], at[1::2] = ka[o], kb[o]
                pe = np.concatenate([p, np.take(p, [0], axis)], axis)
                v = np.take(uf.reduceat(pe, at, axis, dtype=p.dtype),
                            2 * np.argsort(o), axis)
            vals.append(v)
            ids.append(j)
        ids = np.concatenate(ids)
        v = np.concatenate(vals, axis)
        o = np.argsort(ids, kind="stable")
        v = np.take(v, o, axis)
        if len(ids) > n:  # segments spanning chunks
            v = uf.reduceat(v, np.searchsorted(ids[o], np.arange(n)), axis,
                            dtype=v.dtype)
        return v.astype(res, copy=False)


def reduceat(a, indices, axis=0, dtype=None, op="add", *, devices=None,
             policy="rate", rates=None):
    """NumPy's ``ufunc.reduceat`` over a Dask array: result ``i`` along
    ``axis`` reduces ``a[indices[i]:indices[i + 1]]`` where ``indices[i] <
    indices[i + 1]``, else it is ``a[indices[i]]``; the last runs to the
    end.  ``op``: "add" ("sum"), "multiply" ("prod"), "minimum" ("min"),
    "maximum" ("max"), "logical_and" ("all"), "logical_or" ("any") or the
    ufunc.  NumPy's dtypes and errors (IndexError for an index out of
    range).

    Each chunk is cut at the segment bounds falling in it and reduced by
    one ``gpured.reduceat`` call on a device (float sums and products in
    float64 where the device has it); a segment spanning chunks combines
    its pieces with the op's ufunc on the host.  The result (host chunks)
    is chunked along ``axis`` by groups of consecutive segments: those
    starting in one chunk where ``indices`` is sorted, else as many
    groups as ``a`` has chunks along ``axis``.  ``devices``, ``policy``,
    ``rates``: the module docstring's."""
    x = _as_dask(a)
    _check_dtype(x.dtype, "input")
    op = _at_op(op)
    if x.ndim == 0:
        raise TypeError("cannot reduceat on a scalar")
    if axis is None or isinstance(axis, tuple) and len(axis) != 1:
        raise ValueError("reduceat does not allow multiple axes")
    ax = _norm_axis(operator.index(axis[0] if isinstance(axis, tuple)
                                   else axis), x.ndim)[0]
    if dtype is not None:
        dtype = _check_dtype(dtype, "result")
    uf = getattr(np, op)
    res = uf.reduceat(np.zeros(1, x.dtype), [0], dtype=dtype).dtype
    if isinstance(indices, _DaskArray):
        indices = indices.compute()
    idx = np.asarray(indices)
    if idx.ndim != 1:
        raise ValueError("object of too small depth for desired array"
                         if idx.ndim == 0 else "setting an array element "
                         "with a sequence. The requested array would exceed "
                         "the maximum number of dimension of 1.")
    idx = idx.astype(np.intp)
    n = x.shape[ax]
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise IndexError("index %d out-of-bounds in %s.reduceat [0, %d)"
                         % (idx[bad][0], op, n))
    chunks = list(x.chunks)
    if len(idx) == 0:
        chunks[ax] = (0,)
        return da.zeros(tuple(0 if i == ax else s
                              for i, s in enumerate(x.shape)),
                        dtype=res, chunks=tuple(chunks))
    # segment i is [lo[i], hi[i]), never empty
    nxt = np.append(idx[1:], n)
    lo, hi = idx, np.where(idx < nxt, nxt, idx + 1)
    ends = np.cumsum(x.chunks[ax])
    starts = ends - np.asarray(x.chunks[ax])
    m = len(idx)
    if np.all(np.diff(lo) >= 0):
        first = np.searchsorted(starts, lo, side="right") - 1
        cuts = np.flatnonzero(np.diff(first)) + 1
    else:
        k = builtins.min(len(starts), m)  # as many groups as chunks
        cuts = np.arange(1, k) * m // k
    g0s = np.r_[0, cuts].astype(np.intp)
    sizes = np.diff(np.r_[g0s, m])
    # per chunk: its cuts b, the segments j meeting it and their pieces
    # ka..kb-1; per group: (chunk, its segments' rows) in chunk order
    pieces, groups = {}, [[] for _ in g0s]
    for c, (c0, c1) in enumerate(zip(starts, ends)):
        j = np.flatnonzero((lo < c1) & (hi > c0)) if c1 > c0 else ()
        if not len(j):
            continue
        s0 = np.maximum(lo[j], c0) - c0
        s1 = np.minimum(hi[j], c1) - c0
        b = np.unique(np.concatenate([s0, s1[s1 < c1 - c0]]))
        pieces[c] = b
        ka, kb = np.searchsorted(b, s0), np.searchsorted(b, s1)
        gi = np.searchsorted(g0s, j, side="right") - 1
        cut = np.flatnonzero(np.diff(gi)) + 1
        for p, q in zip(np.r_[0, cut], np.r_[cut, len(j)]):
            g = gi[p]
            groups[g].append((c, (j[p:q] - g0s[g], ka[p:q], kb[p:q])))
    placer = _Placer(devices, policy, rates)
    tok = dask.base.tokenize(x, idx, ax, dtype, op, placer)
    pname, name = "gpured-reduceat-part-" + tok, "gpured-reduceat-" + tok
    dsk = {}
    rest_blocks = [range(nb) for i, nb in enumerate(x.numblocks) if i != ax]
    for rest in product(*rest_blocks):
        def key(c, rest=rest):
            return rest[:ax] + (c,) + rest[ax:]
        for c, b in pieces.items():
            dsk[(pname,) + key(c)] = (
                partial(_at_part, bounds=b, op=op, axis=ax, dtype=dtype,
                        res=res, placer=placer), (x.name,) + key(c))
        for g, parts in enumerate(groups):
            dsk[(name,) + key(g)] = (
                partial(_at_combine, metas=[mt for _, mt in parts],
                        n=int(sizes[g]), op=op, axis=ax, res=res),
                [(pname,) + key(c) for c, _ in parts])
    chunks[ax] = tuple(int(n) for n in sizes)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    return _DaskArray(graph, name, tuple(chunks),
                      meta=np.empty((0,) * x.ndim, res))


# ------------------------------------------------- device-resident arrays

def _put_device(k, devices, policy, rates):
    """The device of to_device's chunk k (C order of the block grid)."""
    pos = _resolve(devices)
    if policy == "round_robin" or len(pos) == 1:
        return pos[k % len(pos)]
    return pos[_pattern(pos, tuple(_rates_for(pos, rates, "device")))[k % 64]]


def _put(block, block_id=None, *, grid, devices, policy, rates, slabs=None):
    k = int(np.ravel_multi_index(block_id, grid)) if grid else 0
    p = _put_device(k, devices, policy, rates)
    if slabs is not None and type(block) is np.ndarray:
        a = slabs.put(block, k, p, (devices, policy, rates))
        if a is not None:
            return a
    return gpured.to_device(block, device=p)


# to_device packs the chunks each device receives into slabs: one device
# buffer of up to _SLAB bytes holds several chunks, one after the other in
# the order of the block grid, each chunk an Array view of its place.  A
# reduction of the persisted array then reads a device's run of chunks
# along axis 0 as one view, with one core call (_fuse): a 256 MiB chunk's
# own call costs ~13 us of H200 time beyond its bytes (two kernels, their
# launches and tails), 0.8 ms over 16 GiB.  GPURED_DASK_SLAB=0: every
# chunk a buffer of its own.
_SLAB = int(os.environ.get("GPURED_DASK_SLAB", str(4 << 30)))
# (NumPy's own dtypes: others, ml_dtypes' bfloat16, go alone)
_SLAB_KINDS = "biufc"


class _Slabs:
    """to_device's slabs in this process: where chunk k goes (slab, byte
    offset; planned at the first chunk, from the chunk sizes and the
    devices the placement gives), and each slab's current buffer.  A
    chunk written a second time (the lazy array computed again) starts a
    new buffer for its slab: an earlier result keeps its own.  A slab's
    buffer is dropped here once all its chunks are written (their views
    hold it).  Pickled (dask.distributed: each worker writes the chunks
    it is given), the copy places every chunk alone."""

    def __init__(self, chunks, dtype, limit=None):
        self.chunks, self.itemsize = chunks, int(dtype.itemsize)
        self.limit = _SLAB if limit is None else int(limit)
        self.local = True
        self._plan = None  # [(slab or None, byte offset)] per chunk
        self._slab = None  # slab -> [device, bytes, chunks]
        self._live = {}    # slab -> [buffer, chunks written]

    def __getstate__(self):
        return {"chunks": self.chunks, "itemsize": self.itemsize,
                "limit": self.limit}

    def __setstate__(self, st):
        self.__init__(st["chunks"], np.dtype("V%d" % st["itemsize"]),
                      st["limit"])
        self.local = False

    def __dask_tokenize__(self):
        return ("gpured.dask.slabs", self.chunks, self.itemsize, self.limit)

    def _make_plan(self, place):
        """([(slab or None, byte offset)] per chunk, [[device, bytes,
        chunks]] per slab)."""
        grid = tuple(len(c) for c in self.chunks)
        open_ = {}  # device -> (slab, bytes used)
        plan, slabs = [], []
        for k, idx in enumerate(product(*(range(n) for n in grid))):
            nb = self.itemsize * int(np.prod(
                [self.chunks[i][j] for i, j in enumerate(idx)], dtype=np.int64))
            p = _put_device(k, *place)
            if nb == 0 or nb > self.limit:
                plan.append((None, 0))
                continue
            sid, used = open_.get(p, (None, 0))
            if sid is None or used + nb > self.limit:
                sid, used = len(slabs), 0
                slabs.append([p, 0, 0])
            plan.append((sid, used))
            slabs[sid][1] += nb
            slabs[sid][2] += 1
            open_[p] = (sid, used + nb)
        return plan, slabs

    def put(self, block, k, p, place):
        """block written into its slab on device p: an Array view, or None
        (the chunk goes alone)."""
        if not self.local or self.limit <= 0 or block.dtype.kind not in \
                _SLAB_KINDS or block.dtype.itemsize != self.itemsize:
            return None
        if not block.dtype.isnative:  # (as gpured.to_device: native order)
            block = block.astype(block.dtype.newbyteorder("="))
        # (planned without the lock: the placement may calibrate)
        plan = self._make_plan(place) if self._plan is None else None
        with _lock:
            if self._plan is None:
                self._plan, self._slab = plan
            sid, off = self._plan[k]
            if sid is None or self._slab[sid][0] != p:
                return None
            dev, nbytes, nchunks = self._slab[sid]
            live = self._live.get(sid)
            if live is None or k in live[1]:
                try:
                    live = [_core.buffer_alloc(nbytes, dev), set()]
                except MemoryError:
                    return None
                self._live[sid] = live
            buf = live[0]
            live[1].add(k)
            if len(live[1]) == nchunks:
                del self._live[sid]
        _core.buffer_write(buf, off, np.ascontiguousarray(block))
        return Array(buf, block.shape, block.dtype, None, off)


_PATTERNS = {}


def _pattern(pos, w):
    """64 device slots in proportion to w (smooth weighted round robin)."""
    key = (pos, w)
    if key not in _PATTERNS:
        tot = float(np.sum(w))
        cur = [0.0] * len(w)
        seq = []
        for _ in range(64):
            for j in range(len(w)):
                cur[j] += w[j]
            j = int(np.argmax(cur))
            cur[j] -= tot
            seq.append(j)
        _PATTERNS[key] = seq
    return _PATTERNS[key]


def to_device(a, devices=None, policy="rate", rates=None):
    """A Dask array whose chunks are ``gpured.Array`` s: chunk k (in C order
    of the block grid) goes to a device of ``devices`` (as the reductions'
    ``devices=``): ``policy="round_robin"`` cycles through them,
    ``"rate"`` gives each device a share of the chunks proportional to its
    device-resident rate (:func:`calibrate` with ``resident="device"``;
    equal for identical devices).  The upload runs when the result is
    computed or persisted: ``x = gpured.dask.to_device(x).persist()`` keeps
    the chunks on their devices for later calls.

    The chunks a device receives are packed into slabs: device buffers of
    up to 4 GiB (``GPURED_DASK_SLAB`` bytes; 0: a buffer per chunk), each
    chunk a view of its place, one after the other in block order.  A
    reduction over axis 0 of the persisted array (chunked along axis 0
    alone) then reads each device's run of chunks with one call.  As for
    any views, ``release()`` of one chunk frees its slab."""
    x = _as_dask(a)
    if x.dtype not in (np.complex64, np.complex128):  # complex: storage
        _check_dtype(x.dtype, "input")
    placer = _Placer(devices, policy, rates)  # validates the arguments
    meta = gpured.empty((0,) * x.ndim, x.dtype)
    return x.map_blocks(
        _put, grid=x.numblocks, devices=placer.devices,
        policy=placer.policy, rates=placer.rates,
        slabs=_Slabs(x.chunks, x.dtype), dtype=x.dtype, meta=meta)


def to_host(a):
    """The chunks of a device-resident Dask array as NumPy arrays."""
    x = _as_dask(a)
    return x.map_blocks(gpured.asnumpy, dtype=x.dtype,
                        meta=np.empty((0,) * x.ndim, x.dtype))


# ----------------------------------------------------- dask.distributed

def local_cluster(devices=None, threads_per_worker=1, env=None, **kwargs):
    """A ``distributed.SpecCluster`` on this machine with one worker
    process (a Nanny) per device, each with ``GPURED_DEVICE`` set to its
    device, so that gpured.dask's ``devices=None`` runs each worker's
    chunks on its own device.  ``devices`` as in the reductions (default:
    every device), ``env`` more environment variables for the workers,
    ``kwargs`` to SpecCluster.  Use as ``Client(local_cluster())``."""
    from distributed import Nanny, Scheduler, SpecCluster
    pos = _resolve("all" if devices is None else devices)
    workers = {}
    for p in pos:
        idx = _devices()[p]["index"]
        workers["gpured-%d" % p] = {
            "cls": Nanny,
            "options": {"nthreads": threads_per_worker,
                        "env": dict(env or {}, GPURED_DEVICE=idx)}}
    kwargs.setdefault("scheduler", {"cls": Scheduler,
                                    "options": {"dashboard_address": ":0"}})
    return SpecCluster(workers=workers, **kwargs)


# ------------------------------------------------------- public functions

_OPTS = ("devices", "policy", "rates")

_DOC = """{what}, as :func:`numpy.{np_name}`, over a Dask array.

Each chunk is {how} by gpured on a device (its own for device-resident
chunks; else one of ``devices`` by ``policy``), the partials combined by
Dask ({combine}).  Returns a Dask array.  Keywords: NumPy's ({params}),
Dask's ``split_every`` and ``out`` (a Dask array), and ``devices``,
``policy``, ``rates`` (see the module docstring).
"""


def _public(name, impl, params, what, how="reduced", combine="tree "
            "reduction, split_every"):
    ps = [inspect.Parameter("a", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    defaults = {"axis": None, "dtype": None, "keepdims": False,
                "split_every": None, "out": None, "initial": _NoValue,
                "method": "sequential", "exclusive": False, "ddof": 0,
                "where": True}
    for p in params:
        ps.append(inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    default=defaults[p]))
    for p, d in (("devices", None), ("policy", "rate"), ("rates", None)):
        ps.append(inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY,
                                    default=d))
    sig = inspect.Signature(ps)

    names = frozenset(p.name for p in ps[1:])

    def f(*args, **kw):
        if len(args) == 1 and names.issuperset(kw):
            return impl(args[0], **kw)  # the common call, without bind()
        b = sig.bind(*args, **kw)
        b.apply_defaults()
        return impl(**b.arguments)

    f.__name__ = f.__qualname__ = name
    f.__module__ = __name__
    f.__signature__ = sig
    f.__doc__ = _DOC.format(what=what, np_name={"cummin": "minimum.accumulate",
                                                "cummax": "maximum.accumulate"}
                            .get(name, name), how=how, combine=combine,
                            params=", ".join("``%s``" % p for p in params))
    return f


_WHAT = {"sum": "Sum", "prod": "Product", "min": "Minimum (NaN propagates)",
         "max": "Maximum (NaN propagates)", "nansum": "Sum treating NaNs as "
         "zero", "nanprod": "Product treating NaNs as one",
         "nanmin": "Minimum ignoring NaNs", "nanmax": "Maximum ignoring NaNs",
         "count_nonzero": "Number of nonzero elements",
         "ptp": "Range of values, maximum - minimum (each chunk's maximum "
         "and minimum; integers wrap in their dtype)",
         "nanmean": "Mean ignoring NaNs (NaN-free sum and count per chunk)",
         "var": "Variance (count, mean and variance per chunk, Chan's combine)",
         "std": "Standard deviation (as var, then the square root)",
         "nanvar": "Variance ignoring NaNs (as var, per-chunk counts of the others)",
         "nanstd": "Standard deviation ignoring NaNs (as nanvar, then the root)",
         "all": "Whether all elements are "
         "nonzero", "any": "Whether any element is nonzero", "mean":
         "Arithmetic mean (sum and count per chunk)"}


def _red_impl(row):
    def impl(a, axis=None, dtype=None, keepdims=False, split_every=None,
             out=None, initial=_NoValue, devices=None, policy="rate",
             rates=None, ddof=0, where=True):
        return _reduce(row, a, axis, dtype, keepdims, split_every, out,
                       initial, devices, policy, rates, ddof, where)
    return impl


for _name, _row in _REDUCTIONS.items():
    globals()[_name] = _public(
        _name, _red_impl(_row),
        ("axis",) + tuple(p for p in ("dtype",) if p in _row.params) +
        ("keepdims",) + tuple(p for p in ("ddof",) if p in _row.params) +
        ("split_every", "out") +
        tuple(p for p in ("initial", "where") if p in _row.params),
        _row.doc or _WHAT.get(_name, _name))

for _name, (_v, _is_min) in _ARGS.items():
    _ext = "minimum" if _is_min else "maximum"
    globals()[_name] = _public(
        _name, partial(_argreduce, _name),
        ("axis", "keepdims", "split_every", "out"),
        "Index of the first %s ignoring NaNs (NaN read as %s; a slice of "
        "NaNs only raises ValueError)" % (_ext, "+inf" if _is_min else "-inf")
        if _name.startswith("nan") else
        "Index of the first %s (of the first NaN, if any)" % _ext,
        how="reduced to (value, global index)",
        combine="Dask's arg_reduction; among equal values the smallest "
        "index wins")

for _name in _SCANS:
    globals()[_name] = _public(
        _name, partial(_scan, _name),
        ("axis", "dtype", "out", "method", "exclusive"),
        {"cumsum": "Cumulative sum", "cumprod": "Cumulative product",
         "cummin": "Cumulative minimum", "cummax": "Cumulative maximum",
         "nancumsum": "Cumulative sum treating NaNs as zero",
         "nancumprod": "Cumulative product treating NaNs as one"}[
            _name] + " along an axis (``exclusive=True``: gpured's exclusive "
        "scan)",
        how="scanned", combine="carries through dask.array's cumreduction "
        "for host chunks, the carry-first path for device chunks and "
        "exclusive scans")

del _name, _row, _v, _is_min, _ext

from . import _dask_aggregate  # noqa: E402  (issue 41)
_dask_aggregate.bind(_Placer, _on_device)
aggregate = _dask_aggregate.aggregate
__all__.append("aggregate")
