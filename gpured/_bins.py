"""Counting into bins: bincount, histogram and unique, NumPy's semantics,
built on the by-key family (``sum_by_key``: its strategy chooser picks
the kernel, :func:`explain_bins` shows it) and, for histogram, one index
kernel (kernels/bins.cl: NumPy's bin arithmetic with its edge fix-ups, or
a binary search over explicit edges).

Host data in gives NumPy arrays out; a ``gpured.Array`` in gives Arrays
out on its device (histogram's ``bin_edges`` stay a NumPy array: NumPy
computes them on the host from two numbers, and so does gpured).
"""
import operator
import functools
import warnings

import numpy as np

from . import _core
from ._array import Array, empty, to_device, zeros
from ._bykey import explain_by_key, sum_by_key
from ._bykey import reduce_by_key
from ._elementwise import where as _where
from ._reduce import any as _any, argmax as _argmax, max as _max, min as _min
from ._scan import cumsum as _cumsum

_NEG = "'list' argument must have no negative elements"


@functools.cache
def _float_lists_taken():
    """Whether this NumPy's bincount still takes a list of floats (with a
    DeprecationWarning, NumPy 2.1-2.4) or refuses it (TypeError, later)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            np.bincount([0.0])
    except TypeError:
        return False
    return True


def _dev_of(*xs):
    for x in xs:
        if isinstance(x, Array):
            return x.device_index
    return None


def _cast_error(dt, to):
    return TypeError("Cannot cast array data from %r to %r according to the "
                     "rule 'safe'" % (np.dtype(dt), np.dtype(to)))


def _depth(nd):
    if nd != 1:
        raise ValueError("object too deep for desired array" if nd > 1
                         else "object of too small depth for desired array")


def _bincount_keys(x):
    """x as 1-D integer keys the by-key family reads at their own width
    (bool as uint8), with NumPy's checks (np.bincount casts to intp
    'safe'ly, lists as np.array(x, intp) would)."""
    if isinstance(x, Array):
        _depth(x.ndim)
        if x.dtype == np.bool_:
            return x.astype(np.uint8)
        if x.dtype.kind not in "iu":
            raise _cast_error(x.dtype, np.intp)
        return x if x.is_c_contiguous else x.copy()
    if not isinstance(x, np.ndarray) and not hasattr(x, "__array__"):
        a = np.asarray(x)
        if a.size == 0:
            a = a.astype(np.intp)
        elif a.dtype.kind == "f" and not _float_lists_taken():
            raise _cast_error(a.dtype, np.intp)
        elif a.dtype.kind == "f":
            warnings.warn("Non-integer input passed to bincount. In a future "
                          "version of NumPy, this will be an error. "
                          "(Deprecated NumPy 2.1)", DeprecationWarning,
                          stacklevel=3)
            a = a.astype(np.intp)
        x = a
    a = np.asarray(x)
    _depth(a.ndim)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    if a.dtype.kind not in "iu":
        raise _cast_error(a.dtype, np.intp)
    return a


def _bincount_weights(w, n, dev):
    if isinstance(w, Array):
        _depth(w.ndim)
        if w.shape[0] != n:
            raise ValueError("The weights and list don't have the same length.")
        if not np.can_cast(w.dtype, np.float64, "safe"):
            raise _cast_error(w.dtype, np.float64)
        return w.astype(np.float64, copy=False)
    w = np.asarray(w)
    _depth(w.ndim)
    if w.shape[0] != n:
        raise ValueError("The weights and list don't have the same length.")
    if not np.can_cast(w.dtype, np.float64, "safe"):
        raise _cast_error(w.dtype, np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    return to_device(w, device=dev) if dev is not None else w


def _num_keys(keys, minlength):
    """max(keys) + 1 (the max taken on the device), at least minlength;
    NumPy's ValueError for a negative key."""
    n = keys.shape[0]
    if n == 0:
        return minlength
    mx = int(_max(keys))
    if mx < 0:
        raise ValueError(_NEG)
    # a negative key below a non-negative max: sum_by_key's key check
    # (fused into its kernel) raises, _by_key words it as NumPy
    if keys.dtype == np.uint64 and mx >= 2 ** 63:
        raise ValueError(_NEG)  # NumPy casts to intp: negative there
    return max(mx + 1, minlength)


def _by_key(keys, w, nk, **kw):
    try:
        if w is None:
            return sum_by_key(keys, None, nk, op="count", **kw)
        return sum_by_key(keys, w, nk, **kw)
    except ValueError as e:
        if "negative" in str(e):
            raise ValueError(_NEG) from None
        raise


def _empty_result(n, dtype, dev):
    if dev is None:
        return np.zeros(n, dtype)
    return zeros(n, dtype, device=dev)


def bincount(x, weights=None, minlength=0, **kw):
    """Count occurrences of each value in a non-negative integer array, as
    ``numpy.bincount``: ``out[k]`` is how many times ``k`` occurs in ``x``
    (int64), or the sum of the ``weights`` where it does (float64), for
    ``k`` in ``[0, max(x) + 1)``, at least ``minlength`` long.

    ``x``: 1-D integers of any width (uint8 label images are read a byte
    a key on the device) or bools; a negative value raises NumPy's
    ValueError, floats NumPy's TypeError.  The largest value is found on
    the device, then ``sum_by_key`` bins the values (its chooser picks the
    kernel: see :func:`explain_bins`).  Weights are summed in float64 as
    NumPy does (a device without fp64 refuses them).  A ``gpured.Array``
    in (``x`` or ``weights``) gives an Array out on its device; ``kw``
    goes to :func:`sum_by_key` (``variant``, ``wg_size``, ...).
    """
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    dev = _dev_of(x, weights)
    keys = _bincount_keys(x)
    n = keys.shape[0]
    w = None if weights is None else _bincount_weights(weights, n, dev)
    rdt = np.intp if w is None else np.float64
    nk = _num_keys(keys, minlength)
    if n == 0 or nk == 0:
        return _empty_result(nk, rdt, dev)
    res = _by_key(keys, w, nk, **kw)
    if w is None and res.dtype != np.intp:
        res = res.astype(np.intp)
    return res


# ---------------------------------------------------------------- histogram

def _scalar(v):
    """A NumPy scalar of the reduction's dtype (a 0-d Array read back)."""
    return v.get()[()] if isinstance(v, Array) else v


def _outer_edges(a, range):
    """NumPy's _get_outer_edges, the data's min and max taken on the
    device."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError("supplied range of [%s, %s] is not finite"
                             % (first, last))
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = _scalar(_min(a)), _scalar(_max(a))
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError("autodetected range of [%s, %s] is not finite"
                             % (first, last))
    if first == last:
        first = first - 0.5
        last = last + 0.5
    return first, last


def _unsigned_subtract(a, b):
    """numpy.lib._histograms_impl._unsigned_subtract for two scalars."""
    signed_to_unsigned = {np.byte: np.ubyte, np.short: np.ushort,
                          np.intc: np.uintc, np.int_: np.uint,
                          np.longlong: np.ulonglong}
    dt = np.result_type(a, b)
    try:
        udt = signed_to_unsigned[dt.type]
    except KeyError:
        return np.subtract(a, b, dtype=dt)
    return np.subtract(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt),
                       casting="unsafe", dtype=udt)


def _edges(a, bins, range):
    """(bin_edges, uniform) as NumPy's _get_bin_edges: uniform is
    (first_edge, last_edge, n) for a number of bins, else None."""
    if isinstance(bins, str):
        # NumPy's estimators need the data itself (percentiles, std)
        host = a.get() if isinstance(a, Array) else a
        return np.histogram_bin_edges(host, bins, range), None
    if np.ndim(bins) == 0:
        try:
            nb = operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an "
                            "array") from e
        if nb < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first, last = _outer_edges(a, range)
        # an empty array of a's dtype: NumPy's edges for these outer edges
        edges = np.histogram_bin_edges(np.empty(0, a.dtype), nb,
                                       (first, last))
        return edges, (first, last, nb)
    edges = np.asarray(bins)
    if edges.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges, None


def _index_dtype(nb):
    return (np.uint8 if nb + 1 < 255 else np.uint16 if nb + 1 < 65535
            else np.uint32)


def _hist_values(a, dev):
    if isinstance(a, Array):
        a = a.ravel() if a.is_c_contiguous else a.copy().ravel()
        return a
    a = np.ascontiguousarray(a).ravel()
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    return to_device(a, device=dev)


def _hist_weights(weights, a_shape, dev):
    if weights is None:
        return None, np.dtype(np.intp)
    if isinstance(weights, Array):
        if weights.shape != a_shape:
            raise ValueError("weights should have the same shape as a.")
        wd = weights.dtype
        w = weights.ravel() if weights.is_c_contiguous else weights.copy().ravel()
    else:
        w = np.asarray(weights)
        if w.shape != a_shape:
            raise ValueError("weights should have the same shape as a.")
        wd = w.dtype
        w = w.ravel()
    if wd.kind == "c" or not np.can_cast(wd, np.float64, "same_kind"):
        raise TypeError("gpured.histogram: weights of dtype %s (real numbers "
                        "only)" % wd)
    # NumPy sums the weights in float64 (bincount), then casts to their dtype
    if isinstance(w, Array):
        return w.astype(np.float64, copy=False), wd
    return to_device(np.ascontiguousarray(w, np.float64), device=dev), wd


def _bin_index(av, edges, uniform, dev):
    """The bin of every value on the device (kernels/bins.cl); nb where
    NumPy drops the value."""
    nb = edges.shape[0] - 1
    e = edges
    if uniform is not None:
        first, last, _ = uniform
        et = edges.dtype
        lo, hi = np.asarray(first, et), np.asarray(last, et)
        denom = np.asarray(_unsigned_subtract(last, first), et)
    else:
        # searchsorted compares in the common type of values and edges
        et = np.result_type(av.dtype, edges.dtype)
        e = edges.astype(et)
        lo = hi = denom = np.asarray(0, et)
    if et.kind not in "iuf" or et.itemsize > 8 or et == np.float16:
        raise TypeError("gpured.histogram: values and edges of dtype %s are "
                        "not supported on the device" % et)
    idx = empty(av.shape[0], _index_dtype(nb), device=dev)
    _core.bin_index(av, to_device(np.ascontiguousarray(e), device=dev), idx,
                    uniform is not None, lo, hi, denom)
    return idx


def histogram(a, bins=10, range=None, density=None, weights=None, **kw):
    """Histogram of ``a``, as ``numpy.histogram``: returns ``(hist,
    bin_edges)``.

    ``bins``: a number of equal-width bins over ``range`` (default: the
    data's min and max, taken on the device), an array of edges
    (increasing; every bin half-open but the last, which is closed), or
    one of NumPy's estimator names ('auto', 'fd', ...: the edges are
    NumPy's, computed on the host from the data).  Values outside the
    range (and NaN) are dropped.  Equal-width bins: the device computes
    each value's bin by NumPy's arithmetic, ``(x - lo) / (hi - lo) * n``
    in the edges' dtype, then NumPy's corrections against the edges, so
    a value on an edge lands in NumPy's bin; explicit edges: a binary
    search.  The bins are then counted by ``sum_by_key`` (``hist`` int64),
    or the ``weights`` summed in float64 and cast to their dtype, as NumPy
    does; ``density=True`` divides by the bin widths and the total.

    A ``gpured.Array`` in gives ``hist`` as an Array on its device;
    ``bin_edges`` is a NumPy array.  ``kw`` goes to :func:`sum_by_key`.
    """
    dev = _dev_of(a, weights)
    if isinstance(a, Array):
        a_shape, adt = a.shape, a.dtype
    else:
        a = np.asarray(a)
        a_shape, adt = a.shape, a.dtype
    if adt.kind not in "biuf":
        raise TypeError("gpured.histogram: values of dtype %s are not "
                        "supported" % adt)
    if adt == np.bool_:
        warnings.warn("Converting input from bool to <class 'numpy.uint8'> "
                      "for compatibility.", RuntimeWarning, stacklevel=2)
        a = a.astype(np.uint8)
    w, ntype = _hist_weights(weights, a_shape, dev)
    edges, uniform = _edges(a, bins, range)
    nb = edges.shape[0] - 1
    size = int(np.prod(a_shape))
    if size == 0 or nb < 1:
        hist = _empty_result(max(nb, 0), ntype, dev)
    else:
        if dev is None:
            dev = _core.get_device()["position"]
        av = _hist_values(a, dev)
        idx = _bin_index(av, edges, uniform, dev)
        res = _by_key(idx, w, nb + 1, **kw)
        hist = res[:nb]
        if hist.dtype != ntype:
            hist = hist.astype(ntype)
        if not isinstance(a, Array) and not isinstance(weights, Array):
            hist = hist.get() if isinstance(hist, Array) else np.asarray(hist)
    if density:
        db = np.array(np.diff(edges), float)
        if isinstance(hist, Array):
            h = hist.get()
            return to_device(h / db / h.sum(), device=dev), edges
        return hist / db / hist.sum(), edges
    return hist, edges


def explain_bins(func, x, weights=None, minlength=0, bins=10, range=None,
                 **kw):
    """The plan :func:`bincount` or :func:`histogram` would run on ``x``
    (a dict as :func:`explain_by_key`'s: variant, geometry, why, the keys'
    facts), and the number of bins.  ``func``: "bincount" or "histogram"."""
    if func == "bincount":
        keys = _bincount_keys(x)
        nk = _num_keys(keys, operator.index(minlength))
        w = None if weights is None else _bincount_weights(
            weights, keys.shape[0], _dev_of(x, weights))
    elif func == "histogram":
        dev = _dev_of(x, weights)
        if dev is None:
            dev = _core.get_device()["position"]
        edges, uniform = _edges(x if isinstance(x, Array) else np.asarray(x),
                                bins, range)
        nk = edges.shape[0]
        keys = _bin_index(_hist_values(x, dev), edges, uniform, dev)
        w = None if weights is None else _hist_weights(
            weights, x.shape if isinstance(x, Array) else np.shape(x), dev)[0]
    else:
        raise ValueError("explain_bins: func is 'bincount' or 'histogram' "
                         "(got %r)" % (func,))
    op = "count" if w is None else "sum"
    return explain_by_key("sum_by_key", keys, w, op, nk, **kw)


# ---------------------------------------------------------------- unique

# NumPy 2's inverse has the input's shape (axis=None), older NumPy's is 1-D
_INV_ND = np.unique(np.zeros((1, 1)), return_inverse=True)[1].ndim == 2


def _unique_dense(flat, n, lo, hi):
    """Keys 0 .. R - 1 for integer values in [lo, hi]: the values
    themselves where lo >= 0 (read at their own width), else shifted in
    int64."""
    if lo >= 0:
        return flat, hi + 1, 0
    if isinstance(flat, Array):
        return flat.astype(np.int64) - lo, hi - lo + 1, lo
    return flat.astype(np.int64) - lo, hi - lo + 1, lo


# ------------------------------------------------- unique of floats (device)

def _fbits(dt):
    """(bits, unsigned key dtype, the exponent mask) of a float dtype the
    device sort takes, or None."""
    if dt == np.float32:
        return 32, np.dtype(np.uint32), 0x7f800000
    if dt == np.float64:
        return 64, np.dtype(np.uint64), 0x7ff0000000000000
    if dt == np.float16:
        return 16, np.dtype(np.uint32), 0x7c00
    if dt.name == "bfloat16":
        return 16, np.dtype(np.uint32), 0x7f80
    return None


def _take1(idx, table):
    """table[idx] on the device (elementwise take; idx int64, in range)."""
    out = empty(idx.shape, table.dtype, device=idx.device_index)
    if idx.shape[0]:
        _core.elementwise("take", (idx, table),
                          (np.dtype(np.int64), table.dtype, table.dtype), out)
    return out


def _iota(n, dev):
    o = empty(n, np.int64, device=dev)
    if n:
        _core.buffer_fill(o.buffer, 0, o.nbytes, np.ones(1, np.int64).tobytes())
    return _cumsum(o, exclusive=True)


def _sort_u64(key):
    """uint64 keys sorted on the device: two stable 32-bit sorts (low
    word, then high word), the keys riding as values."""
    lo = (key & 0xffffffff).astype(np.uint32)
    _, v1 = _core.sort_keys(lo, key, 0xffffffff)
    _, v2 = _core.sort_keys((v1 >> 32).astype(np.uint32), v1, 0xffffffff)
    return v2


def _inverse_keys(key, ukeys, dev):
    """Each key's position among the sorted unique keys (binary search,
    kernels/bins.cl), as int64."""
    nu = ukeys.shape[0]
    e = empty(nu + 1, ukeys.dtype, device=dev)
    _core.device_copy(ukeys, e[:nu])
    _core.device_copy(ukeys[nu - 1:] + 1, e[nu:])
    idx = empty(key.shape[0], _index_dtype(nu), device=dev)
    z = np.asarray(0, ukeys.dtype)
    _core.bin_index(key, e, idx, False, z, z, z)
    return idx.astype(np.int64)


def _unique_float(a, shape, info, return_index, return_inverse,
                  return_counts, equal_nan):
    """np.unique of a float device Array on the device: order-preserving
    bit keys (NaNs one canonical NaN, -0.0 as +0.0; kernels/bins.cl's
    gr_float_key, one pass), the device radix sort
    (kernels/bykey.cl, 8 bits a pass; float64: two 32-bit sorts), runs by
    reduce_by_key, the inverse by binary search among the unique keys."""
    nb, kt, expo = info
    dev = a.device_index
    dt = a.dtype
    flat = a.ravel() if a.is_c_contiguous else a.copy().ravel()
    n = flat.shape[0]
    sign = 1 << (nb - 1)
    full = (1 << nb) - 1
    qnan = expo | (((sign - 1) ^ expo) + 1) >> 1  # the quiet NaN's bits
    bits = Array(flat.buffer, flat.shape, np.dtype("uint%d" % nb),
                 flat.strides, flat.offset)
    key = empty(n, kt, device=dev)
    _core.float_key(bits, key, expo, qnan)  # kernels/bins.cl: one pass
    pos = None
    if nb == 64:
        skeys = _sort_u64(key)
    else:
        if return_index:
            pos = _iota(n, dev).astype(np.uint32)
        skeys, pos = _core.sort_keys(key, pos, full)
    ukeys, counts = reduce_by_key(skeys, None, "count")
    nu = ukeys.shape[0]
    first = inv = None
    if return_index and pos is not None:
        first = reduce_by_key(skeys, pos, "min")[1].astype(np.int64)
    if return_inverse or (return_index and first is None):
        inv = _inverse_keys(key, ukeys, dev)
    if return_index and first is None:
        first = sum_by_key(inv, _iota(n, dev), nu, op="min")
    ubits = _where(ukeys >= sign, ukeys ^ kt.type(sign),
                   ukeys ^ kt.type(full))
    if bool(_any(ukeys == sign)):
        # one zero for +-0.0: the sign of its first occurrence (NumPy's,
        # whose stable sort keeps the first of a run)
        i0 = int(_argmax(key == sign))
        z = bits[i0:i0 + 1].get()[0]
        ubits = _where(ukeys == sign, kt.type(z), ubits)
    nnan = int(counts[nu - 1:].get()[0]) if bool(
        _any(ukeys[nu - 1:] == (qnan | sign))) else 0
    if not equal_nan and nnan > 1:
        # every NaN its own entry, in the order they occur
        m = nu - 1 + nnan
        ar = _iota(m, dev)
        head = _where(ar < nu - 1, ar, nu - 1)
        ubits = _take1(head, ubits)
        counts = _where(ar < nu - 1, _take1(head, counts), 1)
        isnan = key == (qnan | sign)
        if return_index:
            okey = (~isnan).astype(np.uint32)  # NaNs first: key 0
            _, npos = _core.sort_keys(okey, _iota(n, dev), 1)
            tail = _where(ar < nu - 1, 0, ar - (nu - 1))
            first = _where(ar < nu - 1, _take1(head, first),
                           _take1(tail, npos))
        if return_inverse:
            rank = _cumsum(isnan.astype(np.int64), exclusive=True)
            inv = _where(isnan, rank + (nu - 1), inv)
    vals = ubits.astype(np.dtype("uint%d" % nb)) if nb == 16 else ubits
    uniq = Array(vals.buffer, vals.shape, dt, vals.strides, vals.offset)
    out = [uniq]
    if return_index:
        out.append(first.astype(np.intp))
    if return_inverse:
        inv = inv.astype(np.intp)
        out.append(inv.reshape(shape) if _INV_ND else inv)
    if return_counts:
        out.append(counts.astype(np.intp))
    return out[0] if len(out) == 1 else tuple(out)


def unique(a, return_index=False, return_inverse=False, return_counts=False,
           *, equal_nan=True, **kw):
    """The sorted unique elements of ``a`` (flattened), as ``numpy.unique``
    (NumPy 2: NaNs collapse into one, ``equal_nan=True``), with the index
    of each one's first occurrence, the inverse (indices into the uniques
    rebuilding ``a``, in ``a``'s shape as NumPy 2 gives it) and the counts
    when asked for.

    Integers and bools whose range (max - min + 1) is at most
    ``max(65536, 4 * a.size)`` run on the device: the counts of every
    value in the range by ``sum_by_key`` (a counting sort), the first
    indices by ``sum_by_key(..., op="min")`` over the positions, the
    inverse by a binary search of each element among the uniques
    (kernels/bins.cl).  The range's counts are read back to find the
    present values (range-sized, on the host).  Float device Arrays
    (float16, bfloat16, float32, float64) run on the device: the by-key
    family's stable radix sort of order-preserving bit keys, runs by
    ``reduce_by_key`` (see ``_unique_float``); -0.0 and 0.0 are one value
    with the sign of its first occurrence, NaNs one entry at the end
    (``equal_nan=False``: one a NaN, in the order they occur).  Float NumPy
    arrays and wider integer ranges are NumPy's ``np.unique`` on the host.
    A ``gpured.Array`` in gives Arrays out.
    """
    dev = _dev_of(a)
    on_dev = isinstance(a, Array)
    shape = a.shape if on_dev else np.shape(a)
    if not on_dev:
        a = np.asarray(a)
    dt = a.dtype
    n = int(np.prod(shape))
    flat = None
    if dt.kind in "biu" and n > 0:
        flat = a.ravel() if (not on_dev or a.is_c_contiguous) else a.copy().ravel()
        if dt == np.bool_:
            flat = flat.astype(np.uint8) if on_dev else flat.view(np.uint8)
        lo, hi = int(_scalar(_min(flat))), int(_scalar(_max(flat)))
        if hi - lo + 1 > max(1 << 16, 4 * n) or hi >= 2 ** 63 - 1:
            flat = None
    info = _fbits(dt) if on_dev and not kw else None
    if info is not None and n > 0:
        return _unique_float(a, shape, info, return_index, return_inverse,
                             return_counts, equal_nan)
    if flat is None:
        host = a.get() if on_dev else a
        eq = {} if equal_nan else {"equal_nan": False}
        res = np.unique(host, return_index=return_index,
                        return_inverse=return_inverse,
                        return_counts=return_counts, **eq)
        if not on_dev:
            return res
        if isinstance(res, tuple):
            return tuple(to_device(r, device=dev) for r in res)
        return to_device(res, device=dev)
    keys, nk, shift = _unique_dense(flat, n, lo, hi)
    counts = sum_by_key(keys, None, nk, op="count", **kw)
    c = counts.get() if isinstance(counts, Array) else counts
    nz = np.flatnonzero(c)
    uniq = (nz + (shift if shift else 0)).astype(dt)
    out = [uniq]
    if return_index:
        pos = np.arange(n, dtype=np.int64)
        if on_dev:
            pos = to_device(pos, device=dev)
        first = sum_by_key(keys, pos, nk, op="min", **kw)
        f = first.get() if isinstance(first, Array) else first
        out.append(f[nz].astype(np.intp))
    if return_inverse:
        edt = np.uint64 if flat.dtype == np.uint64 else np.int64
        edges = np.append(uniq.astype(edt), edt(int(uniq[-1]) + 1))
        d = dev if dev is not None else _core.get_device()["position"]
        fv = flat if on_dev else to_device(flat, device=d)
        inv = _bin_index(fv, edges, None, d).astype(np.intp)
        if _INV_ND:
            inv = inv.reshape(shape)
        out.append(inv if on_dev else inv.get())
    if return_counts:
        out.append(c[nz].astype(np.intp))
    if on_dev:
        out = [o if isinstance(o, Array) else to_device(o, device=dev)
               for o in out]
    return out[0] if len(out) == 1 else tuple(out)
