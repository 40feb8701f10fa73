"""Prefix scans: cumsum, cumprod, cummin, cummax (NumPy's signatures).

Each function is one call into ``_core.scan``.  There (csrc/dispatch.c)
the scanned axis is moved last and the array viewed as (M rows, L
elements), each row scanned independently on the device.  The result is
allocated in the input's memory order, so a column scan reads and writes
with the same strides and nothing is copied; only a layout that no 2-D view
describes (a middle axis of a C-ordered 3-d array, negative strides) is
copied once on the way in.  ``out`` receives the scan directly when its
layout allows, in its own dtype (NumPy's accumulate computes in the dtype
of ``out``).

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
import numpy as np

from . import _complex as _cx, _core, _kernels

_scan = _core.scan


def _beside(a, host):
    return _core.to_device(np.asarray(host), None, a.device_index)


def _cx_numpy(name, a, axis, dtype, out, exclusive, kw):
    """Complex scans other than cumsum: NumPy's (see _complex.py)."""
    if exclusive:
        raise _core.VariantUnavailable(
            f"{name} of a complex array runs on NumPy, which has no "
            "exclusive scans")
    fn = _accumulate(name) if name in ("cummin", "cummax") else None
    return _cx.numpy_call(name, a, dict(axis=axis, dtype=dtype, out=out), kw,
                          _beside, fn)


def _accumulate(name):
    """cummin / cummax as NumPy's minimum / maximum.accumulate (axis None:
    the flattened array)."""
    uf = np.minimum if name == "cummin" else np.maximum

    def fn(h, axis, dtype, out=None):
        if axis is None:
            h, axis = np.ravel(h), 0
        return uf.accumulate(h, axis=axis, dtype=dtype, out=out)
    return fn


def cumsum(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative sum along an axis, as :func:`numpy.cumsum`.

    ``axis=None`` scans the flattened array; ``exclusive=True`` gives the
    exclusive scan (element i is the sum of the elements before it, the
    first is 0).  Small integers and bool promote as NumPy's cumsum does.
    Float results are far more accurate than NumPy's sequential sums (see
    the module docstring for the bound).  Extra keywords: ``variant`` (see
    ``gpured.variants("cumsum")``), ``wg_size``, ``items``, ``groups``,
    ``ilp``, ``spins``, ``device``.
    """
    if _cx.is_cx(a):
        if dtype is None or _cx.dtype_is_cx(dtype):
            return _kernels.cx_cumsum(_cx.arr(a), axis, dtype, out,
                                      exclusive, False, kw)
        return _cx.scan(cumsum, a, axis, dtype, out, exclusive, kw)
    return _scan("cumsum", a, axis, dtype, out, exclusive, kw)


def cumprod(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative product along an axis, as :func:`numpy.cumprod`
    (exclusive scans start from 1)."""
    if _cx.is_cx(a):
        return _kernels.cx_cumprod(_cx.arr(a), axis, dtype, out, exclusive,
                                   False, kw)
    return _scan("cumprod", a, axis, dtype, out, exclusive, kw)


def nancumsum(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative sum treating NaNs as zero, as :func:`numpy.nancumsum`
    (leading NaNs give zeros; the NaN test is fused into the scan's loads).
    Knobs as :func:`cumsum`."""
    if _cx.is_cx(a):
        if dtype is None or _cx.dtype_is_cx(dtype):
            return _kernels.cx_cumsum(_cx.arr(a), axis, dtype, out,
                                      exclusive, True, kw)
        return _cx.scan(cumsum, _cx.nan_zeroed(a), axis, dtype, out,
                        exclusive, kw)
    return _scan("nancumsum", a, axis, dtype, out, exclusive, kw)


def nancumprod(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative product treating NaNs as one, as
    :func:`numpy.nancumprod`.  Knobs as :func:`cumprod`."""
    if _cx.is_cx(a):
        return _kernels.cx_cumprod(_cx.arr(a), axis, dtype, out, exclusive,
                                   True, kw)
    return _scan("nancumprod", a, axis, dtype, out, exclusive, kw)


def cummin(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative minimum along an axis: ``numpy.minimum.accumulate`` of the
    flattened array for ``axis=None``; NaN propagates (exclusive scans
    start from the dtype's largest value / +inf)."""
    if _cx.is_cx(a):
        r = _kernels.cx_cumext(_cx.arr(a), axis, dtype, out, exclusive, True,
                               kw)
        return r if r is not None else \
            _cx_numpy("cummin", a, axis, dtype, out, exclusive, kw)
    return _scan("cummin", a, axis, dtype, out, exclusive, kw)


def cummax(a, axis=None, dtype=None, out=None, exclusive=False, **kw):
    """Cumulative maximum along an axis, as ``numpy.maximum.accumulate``
    (NaN propagates; exclusive scans start from the smallest value / -inf)."""
    if _cx.is_cx(a):
        r = _kernels.cx_cumext(_cx.arr(a), axis, dtype, out, exclusive, False,
                               kw)
        return r if r is not None else \
            _cx_numpy("cummax", a, axis, dtype, out, exclusive, kw)
    return _scan("cummax", a, axis, dtype, out, exclusive, kw)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None,
                   include_initial=False, **kw):
    """The array API's (and NumPy 2.1's) :func:`numpy.cumulative_sum`: a
    :func:`cumsum` along ``axis`` (required for more than one dimension),
    with ``include_initial=True`` a leading 0 along the axis (its length
    one more).  Knobs as :func:`cumsum`."""
    return _cumulative("cumsum", 0, x, axis, dtype, out, include_initial, kw)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None,
                    include_initial=False, **kw):
    """:func:`numpy.cumulative_prod`: :func:`cumprod` along ``axis``, with
    ``include_initial=True`` a leading 1.  Knobs as :func:`cumprod`."""
    return _cumulative("cumprod", 1, x, axis, dtype, out, include_initial,
                       kw)


def _cx_scan(fname):
    """_core.scan's signature over the complex-aware cumsum / cumprod."""
    f = cumsum if fname == "cumsum" else cumprod

    def scan(fname, x, ax, dtype, out, excl, kw):
        return f(x, ax, dtype, out, excl, **kw)
    return scan


def _cumulative(fname, ident, x, axis, dtype, out, include_initial, kw):
    import numpy as np
    from numpy.lib.array_utils import normalize_axis_index
    device = isinstance(x, _core.ArrayBase)
    if not device:
        x = np.asarray(x)
    if x.ndim > 1 and axis is None:
        raise ValueError("For arrays which have more than one dimension "
                         "``axis`` argument is required.")
    if x.ndim == 0:
        x = x.reshape(1)
    ax = normalize_axis_index(0 if axis is None else axis, x.ndim)
    scan = _cx_scan(fname) if _cx.is_cx(x) else _scan
    if not include_initial:
        return scan(fname, x, ax, dtype, out, False, kw)
    shape = list(x.shape)
    shape[ax] += 1
    # NumPy's result dtype for this input dtype and dtype=
    rdt = getattr(np, fname)(np.empty(0, x.dtype), dtype=dtype).dtype
    res = out
    if res is None:
        if device:
            from ._array import empty
            res = empty(tuple(shape), rdt, device=x.device_index)
        else:
            res = np.empty(shape, rdt)
    elif tuple(res.shape) != tuple(shape):
        raise ValueError("out has shape %s, the result %s"
                         % (tuple(res.shape), tuple(shape)))
    lead = (slice(None),) * ax
    scan(fname, x, ax, dtype, res[lead + (slice(1, None),)], False, kw)
    head = res[lead + (slice(0, 1),)]
    if isinstance(res, _core.ArrayBase) and res.dtype.kind == "c":
        # complex: the identity copied in through the real views
        _core.device_copy(_cx.real(_core.to_device(
            np.full(head.shape, ident, res.dtype), None, res.device_index)),
            _cx.real(head))
    elif isinstance(res, _core.ArrayBase) and res.dtype.itemsize == 2 and \
            res.dtype.kind in "fV":
        # float16 / bfloat16 (no elementwise kernels): copied in
        _core.device_copy(_core.to_device(
            np.full(head.shape, ident, res.dtype), None, res.device_index),
            head)
    elif isinstance(res, _core.ArrayBase):
        from ._array import zeros
        # the identity written in place on the device (elementwise add)
        np.add(zeros(head.shape, head.dtype, device=res.device_index),
               ident, out=head)
    else:
        head[...] = ident
    return res
