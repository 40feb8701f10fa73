"""complex64 / complex128 inputs: views onto the real machinery.

A complex array is its real dtype with a trailing axis of 2 (real part,
imaginary part): the same memory, no copy.  The componentwise functions
run on that view with the trailing axis kept out of the reduced axes, and
their real results (..., 2) are viewed back as complex:

* sum / mean over every axis, leading ones (columns) or middle ones, or
  with knobs, ``where=`` or a real ``dtype=`` (and cumsum into a real
  dtype), with their ``where=``, ``out=``, ``keepdims``, ``dtype=``: one
  core call on the view, so the kernels, plans, accuracy (compensated per
  component) and knobs are the real ones.  (Along trailing axes the view's
  parts are strided segments, elem_stride 2: those sums, and nansum /
  nanmean along any axes, are user kernels -- gpured/_kernels.py cx_sum,
  routed by cx_sum_route before reduce is called.)  A plain full sum /
  mean of a C-contiguous NumPy array is ONE call on the (n, 2) view over
  axis 0 (the host path's lanes kernels read the parts interleaved, in one
  pass); other full sums of a contiguous array are two calls: the view
  reshaped to (rows, C) columns (C = 2k, adjacent columns coalesced on
  GPUs, one 64-byte vector a row on CPUs) summed over the rows in float64,
  then the (k, 2) partials.
* var / std: NumPy's var of complex is mean(|x - mean|^2) = var(re) +
  var(im) with the same ddof: the per-component variances in one call,
  then their sum over the trailing axis (std: its square root).
* nansum / nanmean with knobs or ``where=``, nanvar / nanstd /
  nancumsum: NumPy drops an element
  whose real *or* imaginary part is NaN (np.isnan of complex): the
  element-level "valid" mask (both parts not NaN) is computed (NumPy's
  isnan for host arrays, the device's elementwise kernels for Arrays) and
  passed as ``where=`` (nancumsum: the NaN elements replaced by 0).

prod / nanprod / cumprod / nancumprod (complex multiplication) are user
kernels with float2 / double2 elements (gpured/_kernels.py cx_prod,
cx_cumprod), on the device for host arrays and device Arrays alike; so
are sum / mean along rows and nansum / nanmean (cx_sum: one pass, the
NaN test in the load; complex64 accumulated in double2 where the device
has fp64, else TwoSum per part); so
are cumsum / nancumsum into a complex dtype (cx_cumsum: one pass, where
the view's scan needed the parts moved apart and back) and cummin /
cummax (cx_cumext, NumPy's order).

What else is not componentwise -- min / max / argmin / argmax / ptp
(NumPy's lexicographic order) and their nan forms, reduceat but add --
runs on NumPy (host arrays; a device Array goes through the host and
the result comes back: reduceat's segments differ in length, which the
user reductions' M x L layout cannot express), except min / max /
argmin / argmax / ptp of device Arrays, which run on the device (lexi:
one pass each through
gpured/_kernels.py cx_extreme); any knob (``variant=``...) asks for a
kernel that does not exist: it raises :class:`gpured.VariantUnavailable` with that reason.  The
by-key sums are two real calls (by_key).

This module only marshals (views, axes, masks); it imports no other face
module: the callers pass in the functions it calls.
"""
import warnings
from math import isfinite as _isfinite

import numpy as np

from . import _core
from ._elementwise import where as ew_where

try:
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # pragma: no cover - NumPy < 2
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

try:
    _ComplexWarning = np.exceptions.ComplexWarning
except AttributeError:  # pragma: no cover - NumPy < 1.25
    _ComplexWarning = np.ComplexWarning

_REAL = {np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}
_CPLX = {v: k for k, v in _REAL.items()}
_Arr = _core.ArrayBase
_NoValue = np._NoValue

# A full sum's columns (_full_sum): C real values a row, from _COLS_MIN
# rows on (below, the (n, 2) column plan is one call).
_COLS_GPU = 8192
_COLS_HOST = 256
_COLS_MIN = 4


def real_dtype(dtype):
    """complex64 -> float32, complex128 -> float64 (TypeError else)."""
    return _rdtype(dtype)


def is_cx(a):
    """Whether a is complex (arrays, scalars, nested sequences)."""
    if isinstance(a, (np.ndarray, _Arr, np.generic)):
        return a.dtype.kind == "c"
    if isinstance(a, complex):
        return True
    if isinstance(a, (list, tuple)):
        return np.asarray(a).dtype.kind == "c"
    return False


def dtype_kind(dtype):
    """np.dtype(dtype).kind, or None where NumPy does not know it (the
    core then says so in its own words)."""
    try:
        return np.dtype(dtype).kind
    except TypeError:
        return None


def dtype_is_cx(dtype):
    return dtype is not None and np.dtype(dtype).kind == "c"


def arr(a, what="input"):
    if not isinstance(a, (np.ndarray, _Arr)):
        a = np.asarray(a)
    if isinstance(a, np.ndarray) and not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if a.dtype not in _REAL:
        raise TypeError(f"gpured does not support {what} dtype {a.dtype} "
                        "(supported: bool, int8-int64, uint8-uint64, "
                        "float32, float64, complex64, complex128)")
    return a


def real(a):
    """The real view of complex a: shape + (2,), its real dtype."""
    rt = _REAL[a.dtype]
    if isinstance(a, _Arr):
        return type(a)(a.buffer, a.shape + (2,), rt,
                       a.strides + (rt.itemsize,), a.offset)
    return a[..., None].view(rt)  # NumPy's view: (..., 1) -> (..., 2)


def cx(r, scalar):
    """Real results r (..., 2) viewed as complex (a scalar for NumPy's
    0-d results where scalar)."""
    ct = _CPLX[np.dtype(r.dtype)]
    if isinstance(r, _Arr):
        if r.strides[-1] != r.itemsize:
            r = r.copy()
        return type(r)(r.buffer, r.shape[:-1], ct, r.strides[:-1], r.offset)
    r = np.asarray(r)
    if r.strides[-1] != r.itemsize:
        r = np.ascontiguousarray(r)
    c = r.view(ct).reshape(r.shape[:-1])
    return c[()] if scalar and c.ndim == 0 else c


def dcopy(src, dst):
    """_core.device_copy, complex Arrays through their real views."""
    if src.dtype.kind == "c" and dst.dtype.kind == "c":
        src, dst = real(src), real(dst)
    _core.device_copy(src, dst)


def _axes(axis, nd):
    return tuple(range(nd)) if axis is None else normalize_axis_tuple(axis, nd)


def _rdtype(dtype):
    """The real dtype of a complex dtype= (None: none given)."""
    if dtype is None:
        return None
    dt = np.dtype(dtype)
    if dt not in _REAL:
        raise TypeError(f"gpured does not support result dtype {dt}")
    return _REAL[dt]


def _out(out):
    """A complex out= as its real view (NumPy's casting error for a real
    one: complex results do not cast to it under "same_kind")."""
    if out is None:
        return None
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("out must be a single array")
        out = out[0]
    if not isinstance(out, (np.ndarray, _Arr)):
        raise TypeError("out must be an array")
    if out.dtype.kind != "c":
        raise TypeError(f"Cannot cast ufunc output from dtype('complex') to "
                        f"{out.dtype!r} with casting rule 'same_kind'")
    return real(arr(out, "out"))


def _where(where, a):
    """where= for the real view: the element mask repeated over the
    trailing axis (a stride-0 view; host masks are NumPy's conversion)."""
    if where is True:
        return True
    if isinstance(where, (np.ndarray, _Arr)) and where.dtype != np.bool_:
        raise TypeError(f"Cannot cast array data from {where.dtype!r} to "
                        "dtype('bool') according to the rule 'safe'")
    if isinstance(where, _Arr):
        if isinstance(a, _Arr) and where.shape == a.shape:
            return type(where)(where.buffer, where.shape + (2,), where.dtype,
                               where.strides + (0,), where.offset)
        where = where.get()
    w = np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
    return np.broadcast_to(w[..., None], a.shape + (2,))


def valid(a, where):
    """The element mask of nan* functions: neither part NaN (np.isnan of
    complex), and where."""
    a = arr(a)
    if isinstance(a, _Arr):
        v = real(a)
        ok = np.logical_not(np.logical_or(np.isnan(v[..., 0]),
                                          np.isnan(v[..., 1])))
    else:
        ok = np.logical_not(np.isnan(a))
    if where is True:
        return ok
    if isinstance(where, (np.ndarray, _Arr)) and where.dtype != np.bool_:
        raise TypeError(f"Cannot cast array data from {where.dtype!r} to "
                        "dtype('bool') according to the rule 'safe'")
    if isinstance(ok, _Arr):
        if not isinstance(where, _Arr):
            where = _core.to_device(np.ascontiguousarray(np.broadcast_to(
                np.asarray(where, dtype=bool), a.shape)), None,
                ok.device_index)
        return np.logical_and(ok, where)
    if isinstance(where, _Arr):
        where = where.get()
    return np.logical_and(ok, np.asarray(where, dtype=bool))


def _real_part_call(f, a, args, kw):
    """NumPy's rule for a real dtype= on complex input: ComplexWarning, the
    imaginary part discarded."""
    warnings.warn("Casting complex values to real discards the imaginary "
                  "part", _ComplexWarning, stacklevel=4)
    return f(real(a)[..., 0], *args, **kw)


# ------------------------------------------------------------------- sums

def _cols(v):
    """A full sum's columns: _COLS_GPU on a GPU's Arrays (coalesced rows,
    few parts), else _COLS_HOST (the host path's column kernels are at
    NumPy's speed from ~256 columns, and the (128, 2) partials cost a
    couple of microseconds)."""
    if isinstance(v, _Arr):
        gpu = _IS_GPU.get(v.device_index)
        if gpu is None:
            gpu = _IS_GPU[v.device_index] = \
                _core.devices()[v.device_index]["type"] == "GPU"
        if gpu:
            return _COLS_GPU
    return _COLS_HOST


_IS_GPU = {}  # device position -> whether it is a GPU (devices() is fixed)


def _elem_mask(where, a):
    """where= as a bool mask of a's shape (None: none), on a's side."""
    if where is True:
        return None
    if isinstance(where, _Arr):
        if isinstance(a, _Arr) and where.shape == a.shape:
            return where
        where = where.get()
    w = np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
    if isinstance(a, _Arr):
        return _core.to_device(np.ascontiguousarray(w), None, a.device_index)
    return w


def _pair_mask(we, n):
    """An element mask (a's shape) as a contiguous (n, 2) bool array: each
    element's flag for both its parts."""
    if isinstance(we, _Arr):
        src = type(we)(we.buffer, we.shape + (2,), we.dtype,
                       we.strides + (0,), we.offset)
        buf = _core.buffer_alloc(2 * n, we.device_index)
        dst = type(we)(buf, we.shape + (2,), we.dtype)
        _core.device_copy(src, dst)
        return dst.reshape(n, 2)
    return np.ascontiguousarray(np.broadcast_to(
        np.asarray(we).reshape(n, 1), (n, 2)))


def _full_sum(f, v, rd, kw, mean=False, we=None):
    """The sum (mean: divided by the count) of every element of a
    contiguous real view (n, 2) -- with we, an element mask, of those it
    keeps -- as (rows, C) columns, then the (C / 2, 2) partials in float64
    (and the n % (C / 2) rows left over): a (n, 2) column plan has two
    columns, two work-items' worth of parallelism.  None where the layout
    does not allow it."""
    n = v.size // 2
    cols = _cols(v)
    k = cols // 2
    if kw or n < _COLS_MIN * k:
        return None
    if not (v.flags.c_contiguous if isinstance(v, np.ndarray)
            else v.is_c_contiguous):
        return None
    flat = v.reshape(n, 2)
    h = n - n % k
    w2 = None if we is None else _pair_mask(we, n)

    head = {} if w2 is None else {"where": w2[:h].reshape(h // k, cols)}
    p = f(flat[:h].reshape(h // k, cols), axis=0, **head)
    tot = f(p.reshape(k, 2), axis=0, dtype=np.float64)
    if h < n:
        tail = {} if w2 is None else {"where": w2[h:]}
        tot = tot + f(flat[h:], axis=0, dtype=np.float64, **tail)
    if mean:
        cnt = n if we is None else f(we, dtype=np.intp)
        if isinstance(tot, _Arr):
            tot = tot / cnt
        else:
            if int(cnt) == 0:
                warnings.warn("Mean of empty slice", RuntimeWarning,
                              stacklevel=5)
            with np.errstate(invalid="ignore", divide="ignore"):
                tot = tot / cnt
    t = rd or v.dtype
    return tot.astype(t) if tot.dtype != t else tot


# sum / mean of every element of a C-contiguous NumPy complex array, no
# knobs: ONE core call on the real view (n, 2) over axis 0 (the host path
# folds the interleaved parts in one pass, csrc/host_reduce.c red_lanes;
# a device takes the (n, 2) column plan), its (2,) result viewed as
# complex.  Where a GPU is listed, placement may send a large NumPy array
# to it, whose (n, 2) column plan has two columns: above _ONE_CALL_GPU_MAX
# bytes there, _full_sum's (rows, C) columns instead.
_ONE_CALL_GPU_MAX = 1 << 20
_ndarray = np.ndarray
_core_reduce = _core.reduce
_HAS_GPU = []  # [whether a GPU is listed], once asked


def _has_gpu():
    if not _HAS_GPU:
        _HAS_GPU.append(any(d["type"] == "GPU" for d in _core.devices()))
    return _HAS_GPU[0]


def _one_call(a, axis, dtype, kw):
    """Whether reduce's one call applies (for explain)."""
    return (type(a) is np.ndarray and axis is None and dtype is None and
            not kw and a.nbytes > 0 and a.flags.c_contiguous and
            (a.nbytes <= _ONE_CALL_GPU_MAX or not _has_gpu()))


def reduce(f, a, axis, dtype, out, keepdims, initial, where, kw, fsum=None):
    """sum / mean / nansum / nanmean (f: the real function; where the
    nan mask already folded in)."""
    if type(a) is _ndarray and where is True and axis is None and \
            out is None and dtype is None and initial is _NoValue and \
            not kw:
        nb, rt = a.nbytes, _REAL.get(a.dtype)
        if nb and rt is not None and a.flags.c_contiguous and (
                nb <= _ONE_CALL_GPU_MAX or not _has_gpu()):
            r = _core_reduce(f.__name__, _ndarray((a.size, 2), rt, a), 0,
                             None, None, False, _NoValue, kw)
            if f.__name__ == "mean" and not (_isfinite(r[0]) and
                                             _isfinite(r[1])):
                r = mean_rule(r)  # a NaN or inf part (rare): NumPy's rule
            c = r.view(a.dtype)
            return c.reshape((1,) * a.ndim) if keepdims else c[0]
    a = arr(a)
    if dtype is not None and not dtype_is_cx(dtype):
        return _real_part_call(f, a, (), dict(
            axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where,
            **({} if initial is _NoValue else {"initial": initial}), **kw))
    rd, ro = _rdtype(dtype), _out(out)
    v = real(a)
    ax = _axes(axis, a.ndim)
    w = _where(where, a)
    r = None
    if ro is None and initial is _NoValue and len(ax) == a.ndim and \
            (f.__name__ == "sum" or (f.__name__ == "mean" and fsum)):
        r = _full_sum(fsum or f, v, rd, kw, f.__name__ == "mean",
                      _elem_mask(where, a))
        if r is not None and keepdims:
            r = r.reshape((1,) * a.ndim + (2,))
    if r is None:
        extra = {} if w is True else {"where": w}
        r = f(v, axis=ax, dtype=rd, out=ro, keepdims=keepdims, **extra, **kw)
    if f.__name__ == "mean":
        r = mean_rule(r, ro)
    if initial is not _NoValue:
        r = _add_initial(r, initial, ro)
    if out is not None:
        return out
    return cx(r, isinstance(a, np.ndarray))


def mean_rule(r, ro=None):
    """NumPy divides a complex sum (a, b) by its count n as a complex
    division (Smith's, by n + 0j): re = (a + b * 0) / n, im = (b - a * 0)
    / n, so a NaN or an inf in one part makes the other NaN (np.mean([1j,
    nan]) is nan+nanj, not nan+0.5j).  The per-part means r (..., 2) =
    (a / n, b / n) give the same as r + r[..., ::-1] * (0, -0): on the
    host only where a part is not finite, on a device always (two small
    elementwise kernels; ro: the out= buffer r is, written in place)."""
    if isinstance(r, np.ndarray) and (r - r == 0).all():
        return r
    t = r[..., ::-1] * np.array([0.0, -0.0], dtype=r.dtype)
    if ro is not None:
        np.add(ro, t, out=ro)
        return ro
    return r + t


def _add_initial(r, initial, ro):
    """sum's initial, added to each slice's real and imaginary parts."""
    c = complex(initial)
    pair = np.array([c.real, c.imag], dtype=r.dtype)
    if isinstance(r, _Arr):
        h = r.get() + pair
        if ro is not None:
            _core.device_copy(_core.to_device(h, None, r.device_index), ro)
            return ro
        return _core.to_device(h, None, r.device_index)
    if ro is not None:
        np.add(ro, pair, out=ro)
        return ro
    return np.asarray(r) + pair


def var(fvar, fsum, name, a, axis, dtype, out, ddof, keepdims, where,
        correction, kw, fmean=None):
    """var / std / nanvar / nanstd (the nan mask already in where):
    var(re) + var(im), NumPy's real result dtype."""
    a = arr(a)
    rd = _rdtype(dtype) if dtype_is_cx(dtype) else dtype
    v = real(a)
    ax = _axes(axis, a.ndim)
    r = None
    if len(ax) == a.ndim and fmean is not None and correction is _NoValue:
        r = _full_var(fvar, fsum, fmean, v, rd, ddof, kw,
                      _elem_mask(where, a))
        if r is not None and keepdims:
            r = r.reshape((1,) * a.ndim)
    if r is None:
        w = _where(where, a)
        extra = {} if w is True else {"where": w}
        if correction is not _NoValue:
            extra["correction"] = correction
        parts = fvar(v, axis=ax, dtype=rd, ddof=ddof, keepdims=keepdims,
                     **extra, **kw)
        r = fsum(parts, axis=-1)
    if name.endswith("std"):
        r = np.sqrt(r)
    if out is None:
        return r
    if isinstance(out, _Arr):
        _core.device_copy(r if isinstance(r, _Arr) else _core.to_device(
            np.asarray(r), None, out.device_index), out)
    else:
        np.copyto(out, r, casting="unsafe")
    return out


def _full_var(fvar, fsum, fmean, v, rd, ddof, kw, we):
    """var(re) + var(im) over every element of a contiguous real view
    (n, 2) (with we, an element mask, of those it keeps): each of the
    (rows, C) columns' count, mean and variance (two passes at the
    columns' speed), merged per part by Chan's formula in float64 --
    M2 = sum c_j v_j + sum c_j (m_j - m)^2 -- over sum c_j - ddof.  None
    where the layout does not allow it (as _full_sum)."""
    n = v.size // 2
    cols = _cols(v)
    k = cols // 2
    if kw or n < _COLS_MIN * k or not (
            v.flags.c_contiguous if isinstance(v, np.ndarray)
            else v.is_c_contiguous):
        return None
    flat = v.reshape(n, 2)
    h = n - n % k
    w2 = None if we is None else _pair_mask(we, n)
    dev = isinstance(v, _Arr)
    stats = []  # (counts, means, variances), each (j, 2) float64
    for rows, shape in ((slice(0, h), (h // k, cols)),
                        (slice(h, n), (n - h, 2))):
        if rows.start == rows.stop:
            continue
        x = flat[rows].reshape(shape)
        extra = {} if w2 is None else {"where": w2[rows].reshape(shape)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            m = fmean(x, axis=0, **extra)
            s2 = fvar(x, axis=0, **extra)
        c = shape[0] if w2 is None else fsum(extra["where"], axis=0,
                                              dtype=np.float64)
        if w2 is not None:  # a column of no kept element adds nothing
            keep = c > 0
            wh = ew_where if dev else np.where
            m, s2 = wh(keep, m, 0.0), wh(keep, s2, 0.0)
        stats.append((c, m.astype(np.float64).reshape(-1, 2),
                      s2.astype(np.float64).reshape(-1, 2)))
    if w2 is None:
        cnt = float(n)
        tot = sum(fsum(mj, axis=0) * c for c, mj, _ in stats)
    else:
        stats = [(c.reshape(-1, 2), mj, sj) for c, mj, sj in stats]
        cnt = sum(fsum(c, axis=0) for c, _, _ in stats)
        tot = sum(fsum(mj * c, axis=0) for c, mj, _ in stats)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = tot / cnt
        m2 = sum(fsum(sj * c, axis=0) + fsum(c * (mj - mu) ** 2, axis=0)
                 for c, mj, sj in stats)
        dof = cnt - ddof
        if not dev and np.any(np.asarray(dof) <= 0):
            warnings.warn("Degrees of freedom <= 0 for slice",
                          RuntimeWarning, stacklevel=5)
        r = fsum(m2 / np.maximum(dof, 0), axis=0)
    t = np.dtype(rd) if rd is not None else v.dtype
    return r.astype(t) if r.dtype != t else r


def scan(f, a, axis, dtype, out, exclusive, kw):
    """cumsum / nancumsum (NaN elements already replaced)."""
    a = arr(a)
    if dtype is not None and not dtype_is_cx(dtype):
        return _real_part_call(f, a, (), dict(
            axis=axis, dtype=dtype, out=out, exclusive=exclusive, **kw))
    rd, ro = _rdtype(dtype), _out(out)
    if axis is None:
        a = a.reshape(-1) if isinstance(a, _Arr) else np.ravel(a)
        ax = 0
    else:
        ax = normalize_axis_index(axis, a.ndim)
    if isinstance(a, _Arr) and _SCAN_ROWS_MIN <= a.shape[ax] and \
            2 * a.size // a.shape[ax] < _SCAN_COLS_MAX and (
                out is None or (isinstance(out, _Arr) and
                                out.shape == a.shape)):
        return _scan_rows(f, a, ax, rd, out, exclusive, kw)
    r = f(real(a), axis=ax, dtype=rd, out=ro, exclusive=exclusive, **kw)
    return out if out is not None else cx(r, False)


# Device scans whose real view has fewer than _SCAN_COLS_MAX columns of at
# least _SCAN_ROWS_MIN elements: the parts laid out first, so that each
# part is scanned as rows (the look-back kernels) rather than by one
# work-item per column (2 for a 1-d array).
_SCAN_COLS_MAX = 65536
_SCAN_ROWS_MIN = 256


def _scan_rows(f, a, ax, rd, out, exclusive, kw):
    """A device cumsum as rows: the real view's parts axis moved first and
    copied contiguous (2, ...), scanned along ax + 1, written back through
    the result's (or out's) real view transposed the same way."""
    if out is not None and rd is None:  # NumPy accumulates in out's dtype
        rd = _out(out).dtype
    v = real(a)
    perm = (v.ndim - 1,) + tuple(range(v.ndim - 1))
    vt = v.transpose(perm).copy()
    r = f(vt, axis=ax + 1, dtype=rd, exclusive=exclusive, **kw)
    res = out
    if res is None:
        ct = _CPLX[np.dtype(r.dtype)]
        buf = _core.buffer_alloc(a.size * ct.itemsize, a.device_index)
        res = type(a)(buf, a.shape, ct)
    _core.device_copy(r, real(res).transpose(perm))
    return res


def nan_zeroed(a):
    """a with every element that has a NaN part replaced by 0
    (nancumsum's input, NumPy's _replace_nan)."""
    a = arr(a)
    if isinstance(a, _Arr):
        v = real(a)
        bad = np.logical_or(np.isnan(v[..., 0]), np.isnan(v[..., 1]))
        bad2 = type(a)(bad.buffer, bad.shape + (2,), bad.dtype,
                       bad.strides + (0,), bad.offset)
        return cx(ew_where(bad2, v.dtype.type(0), v), False)
    return np.where(np.isnan(a), a.dtype.type(0), a)


def nan_spread(a):
    """The real view of a (a copy) with both parts NaN wherever either is:
    the real nan* functions then drop whole elements (gpured.dask's
    chunks)."""
    v = real(arr(a))
    if isinstance(v, _Arr):
        bad = np.logical_or(np.isnan(v[..., 0]), np.isnan(v[..., 1]))
        bad2 = type(v)(bad.buffer, bad.shape + (2,), bad.dtype,
                       bad.strides + (0,), bad.offset)
        return ew_where(bad2, v.dtype.type(np.nan), v)
    r = np.array(v)
    r[np.isnan(a)] = np.nan
    return r


# --------------------------------------------------------------- fallback

_ALLOWED = frozenset(("device",))


def numpy_call(name, a, npkw, kw, beside, fn=None):
    """min, max, argmin, argmax, ptp and their nan forms,
    all/any, reduceat but add: NumPy's own computation (gpured has no
    complex kernel for them); a device Array goes through the host and its
    result comes back to its device (beside).  Knobs ask for a kernel that
    does not exist: VariantUnavailable with the reason."""
    knobs = sorted(k for k in kw if k not in _ALLOWED)
    if knobs:
        raise _core.VariantUnavailable(
            f"{name} of a complex array runs on NumPy: gpured has no complex "
            "kernel for it (NumPy's lexicographic order); the knobs "
            f"{knobs} do not apply")
    a = arr(a)
    fn = fn or getattr(np, name)
    out = npkw.pop("out", None)
    npkw = {k: (v.get() if isinstance(v, _Arr) else v)
            for k, v in npkw.items()}
    if isinstance(a, _Arr) or isinstance(out, _Arr):
        r = fn(a.get() if isinstance(a, _Arr) else a, **npkw)
        if isinstance(out, _Arr):
            dcopy(beside(out, np.asarray(r).astype(out.dtype)), out)
            return out
        if out is not None:
            np.copyto(out, r, casting="same_kind")
            return out
        return beside(a, r) if isinstance(a, _Arr) else r
    return fn(a, **npkw) if out is None else fn(a, out=out, **npkw)


def reduceat(f, name, a, indices, axis, dtype, out, kw, beside):
    """reduceat: "add" on the real view (the segments along axis, the
    trailing 2 kept); the other operators on NumPy (as numpy_call)."""
    a = arr(a)
    if name == "add":
        if dtype is not None and not dtype_is_cx(dtype):
            raise TypeError(f"Cannot cast ufunc 'add' output from "
                            f"{a.dtype!r} to {np.dtype(dtype)!r}")
        ax = normalize_axis_index(axis, a.ndim)
        r = f(real(a), indices, ax, _rdtype(dtype), _out(out), "add", **kw)
        return out if out is not None else cx(r, False)
    knobs = sorted(k for k in kw if k not in _ALLOWED)
    if knobs:
        raise _core.VariantUnavailable(
            f"reduceat({name}) of a complex array runs on NumPy: gpured has "
            f"no complex kernel for it; the knobs {knobs} do not apply")
    uf = getattr(np, name)
    idx = indices.get() if isinstance(indices, _Arr) else indices
    if isinstance(a, _Arr):
        r = uf.reduceat(a.get(), idx, axis, dtype)
        if isinstance(out, _Arr):
            dcopy(beside(out, r.astype(out.dtype)), out)
            return out
        return beside(a, r)
    return uf.reduceat(a, idx, axis, dtype, out)


VIEW_OPS = {"sum": "sum", "mean": "mean", "nansum": "sum",
             "nanmean": "mean", "var": "var", "std": "var", "nanvar": "var",
             "nanstd": "var", "cumsum": "cumsum", "nancumsum": "cumsum"}


def explain(f, op, a, axis, dtype, kw):
    """explain() of a complex call: the plan of the real view's call (its
    first call where there are two: the full sum's columns, var's
    per-component variances), with "complex" naming the view; the NumPy
    family says so."""
    a = arr(a)
    rt = _REAL[a.dtype]
    note = f"{a.dtype} as {rt} (..., 2)"
    if op not in VIEW_OPS and not (op == "reduceat" and
                                    kw.get("ufunc", "add") in ("add", "sum")):
        return {"variant": "numpy", "placement": "host", "complex": note,
                "why": f"{op} of a complex array runs on NumPy: gpured has "
                       "no complex kernel for it (NumPy's lexicographic "
                       "order)"}
    rd = _rdtype(dtype) if dtype_is_cx(dtype) else dtype
    v = real(a)
    if op == "reduceat":
        res = f(op, v, normalize_axis_index(0 if axis is None else axis,
                                            a.ndim), rd, **kw)
    elif VIEW_OPS[op] == "cumsum":
        if axis is None:
            a = a.reshape(-1) if isinstance(a, _Arr) else np.ravel(a)
            v = real(a)
        ax = 0 if axis is None else normalize_axis_index(axis, a.ndim)
        if isinstance(a, _Arr) and _SCAN_ROWS_MIN <= a.shape[ax] and \
                2 * a.size // a.shape[ax] < _SCAN_COLS_MAX:
            res = f("cumsum", v.transpose((v.ndim - 1,) + tuple(
                range(v.ndim - 1))).copy(), ax + 1, rd, **kw)
            note += ", the parts laid out as rows (a device copy each way)"
        else:
            res = f("cumsum", v, ax, rd, **kw)
    elif _one_call(a, axis, dtype, kw) and op in ("sum", "mean"):
        res = f(op, np.ndarray((a.size, 2), rt, a), 0)
        note += ", its (n, 2) parts summed over axis 0 in one call"
    else:
        n = a.size
        cols = _cols(v)
        k = cols // 2
        full = (axis is None and op in ("sum", "mean") and not kw and
                n >= _COLS_MIN * k and
                (v.flags.c_contiguous if isinstance(v, np.ndarray)
                 else v.is_c_contiguous))
        if full:
            h = n - n % k
            res = f("sum", v.reshape(n, 2)[:h].reshape(h // k, cols), 0)
            note += f", summed as ({h // k}, {cols}) columns, then the " \
                    f"({k}, 2) partials in float64" + (
                        f" and the last {n - h} rows" if h < n else "")
        else:
            res = f(VIEW_OPS[op], v, _axes(axis, a.ndim), rd, **kw)
            if VIEW_OPS[op] == "var":
                note += ", var(re) + var(im)"
    res = dict(res)
    res["complex"] = note
    return res


def by_key(run, func, values, op):
    """sum_by_key / reduce_by_key / scan_by_key with complex values: op
    "sum" as two real calls (the real parts, then the imaginary parts: the
    same keys, so the same runs and bins), put together as complex; "count"
    ignores the values.  Other ops have no complex kernel: TypeError."""
    v = arr(values, "values")
    rv = real(v)
    if op == "count":
        return run(rv[..., 0])
    if op != "sum":
        raise TypeError(f"{func}(op={op!r}) of complex values: gpured has no "
                        "complex kernel for it (op 'sum' runs, as two real "
                        "calls)")
    re, im = run(rv[..., 0]), run(rv[..., 1])
    if isinstance(re, tuple):  # reduce_by_key: (keys, values)
        return re[0], _pair(re[1], im[1])
    return _pair(re, im)


def _pair(re, im):
    ct = _CPLX[np.dtype(re.dtype)]
    if isinstance(re, _Arr):
        buf = _core.buffer_alloc(re.size * ct.itemsize, re.device_index)
        res = type(re)(buf, re.shape, ct)
        rv = real(res)
        _core.device_copy(re, rv[..., 0])
        _core.device_copy(im, rv[..., 1])
        return res
    res = np.empty(re.shape, ct)
    res.real = re
    res.imag = im
    return res


def timeit(f, op, a, axis, dtype, reps, kw):
    """gpured.timeit of a complex input: the real view's call over the
    same axes (see its docstring), with "complex" naming the view."""
    a = arr(a)
    if op not in VIEW_OPS:
        raise _core.VariantUnavailable(
            f"timeit: {op} of a complex array runs on NumPy (no complex "
            "kernel to time)")
    rd = _rdtype(dtype) if dtype_is_cx(dtype) else dtype
    if VIEW_OPS[op] == "cumsum":
        if axis is None:
            a = a.reshape(-1) if isinstance(a, _Arr) else np.ravel(a)
        ax = 0 if axis is None else normalize_axis_index(axis, a.ndim)
    else:
        ax = _axes(axis, a.ndim)
    r = dict(f(VIEW_OPS[op], real(a), ax, rd, reps, **kw))
    if VIEW_OPS[op] != "var":
        r["result"] = cx(r["result"], False)
    r["complex"] = f"{a.dtype} as {_REAL[a.dtype]} (..., 2)"
    return r


# ------------------------------------------ lexicographic order, devices

def lexi(fns, name, a, axis, out, keepdims, kw):
    """argmin / argmax / min / max / ptp of a device Array in NumPy's
    order (real part first, then imaginary; the first NaN -- in either
    part -- wins, as NumPy's loops) on the device, not the host: one pass
    each where fns[4] is given (gpured/_kernels.py cx_extreme: a user
    reduction keeping the element and its offset), else real passes: the
    slices' NaN flags and first NaN, the real parts' extreme, the
    imaginary parts' extreme among its ties, the first element holding
    both; min/max read that element's parts back out with a one-hot
    mask.  None where this does not apply (host arrays, out=,
    knobs, tuple axes, empty slices): the caller then asks NumPy."""
    if not isinstance(a, _Arr) or a.dtype not in _REAL or out is not None \
            or kw or a.size == 0 or not (
                axis is None or isinstance(axis, (int, np.integer))):
        return None
    x = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else normalize_axis_index(axis, a.ndim)
    one = fns[4] if len(fns) > 4 else None  # one pass (_kernels.cx_extreme)
    if one is not None and name == "ptp":
        hi, lo = one("max", x, ax), one("min", x, ax)
        r = cx(real(hi) - real(lo), False)
    elif one is not None:
        r = one(name, x, ax)
    elif name == "ptp":
        hi = _lexi_value(fns, x, ax, False)
        lo = _lexi_value(fns, x, ax, True)
        r = cx(real(hi) - real(lo), False)
    elif name in ("min", "max"):
        r = _lexi_value(fns, x, ax, name == "min")
    else:
        r = _lexi_index(fns, x, ax, name == "argmin")
    if axis is None:
        return r.reshape((1,) * a.ndim if keepdims else ())
    return r if keepdims else r.reshape(r.shape[:ax] + r.shape[ax + 1:])


def _lexi_index(fns, x, ax, is_min):
    """The index (keepdims) of each slice's first lexicographic extreme,
    or of its first NaN."""
    fmin, fmax, fany, fargmax = fns
    ext, init = (fmin, np.inf) if is_min else (fmax, -np.inf)
    v = real(x)
    re, im = v[..., 0], v[..., 1]
    bad = np.logical_or(np.isnan(re), np.isnan(im))
    mr = ext(re, axis=ax, keepdims=True)
    tie = np.equal(re, mr)
    mi = ext(im, axis=ax, keepdims=True, where=tie, initial=init)
    first = fargmax(np.logical_and(tie, np.equal(im, mi)), axis=ax,
                    keepdims=True)
    return ew_where(fany(bad, axis=ax, keepdims=True),
                    fargmax(bad, axis=ax, keepdims=True), first)


def _lexi_value(fns, x, ax, is_min):
    """The element at _lexi_index (keepdims), its parts read out exactly
    (signed zeros, NaN) by the real extreme under a one-hot mask."""
    fmin, fmax = fns[0], fns[1]
    ext, init = (fmin, np.inf) if is_min else (fmax, -np.inf)
    idx = _lexi_index(fns, x, ax, is_min)
    shape = [1] * x.ndim
    shape[ax] = x.shape[ax]
    iota = _core.to_device(np.arange(x.shape[ax]).reshape(shape), None,
                           x.device_index)
    hot = np.equal(iota, idx)
    v = real(x)
    parts = [ext(v[..., j], axis=ax, keepdims=True, where=hot, initial=init)
             for j in (0, 1)]
    return _pair(*parts)


def nanarg(fns, name, a, axis, out, keepdims, kw):
    """nanargmin / nanargmax of a device Array: NumPy's steps -- an
    element with a NaN part replaced by +inf (-inf) + 0j, then argmin
    (argmax) -- on the device, and its ValueError where a slice holds NaNs
    only (one flag read back).  None where lexi would not apply."""
    if not isinstance(a, _Arr) or a.dtype not in _REAL or out is not None \
            or kw or a.size == 0 or not (
                axis is None or isinstance(axis, (int, np.integer))):
        return None
    fany = fns[2]
    v = real(a)
    bad = np.logical_or(np.isnan(v[..., 0]), np.isnan(v[..., 1]))
    allnan = np.logical_not(fany(np.logical_not(bad), axis=axis))
    if bool(fany(allnan).get()):
        raise ValueError("All-NaN slice encountered")
    fill = np.array([np.inf if name == "nanargmin" else -np.inf, 0.0],
                    v.dtype)
    bad2 = type(bad)(bad.buffer, bad.shape + (2,), bad.dtype,
                     bad.strides + (0,), bad.offset)
    rep = ew_where(bad2, _core.to_device(fill, None, a.device_index), v)
    return lexi(fns, name[3:], cx(rep, False), axis, None, keepdims, {})
