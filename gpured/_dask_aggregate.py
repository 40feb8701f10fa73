"""gpured.dask.aggregate: numpy_groupies' aggregate over a 1-D Dask array
and a group array chunked alike (issue 41).

Map-reduce: one task per chunk runs ``gpured.aggregate`` on the chunk
(host chunks on a device gpured.dask's placer picks -- ``GPURED_DEVICE``
under ``gpured.dask.local_cluster`` -- device-resident chunks on their own)
into per-group partial fields, small NumPy arrays; one final task merges
them in chunk order:

* sum / len / prod: sums (float64 or int64) / products of the partials,
  the fill where no chunk had an element;
* mean / var / std: (count, mean, M2) per chunk, merged by Chan et al.'s
  pairwise update in float64 (each chunk's M2 is its two-pass variance
  times its count: no single-pass sum of squares anywhere);
* min / max: the extremes (NaN propagates as in one call);
* first / last: the value of the first / last chunk holding the group;
* argmin / argmax: each chunk's position (offset to the whole array) and
  extreme; the best extreme wins, ties to the earliest chunk (the smallest
  position, as numpy_groupies), a NaN extreme (plain forms) gives the fill;
* all / any: AND / OR of the chunks' answers over the chunks holding
  the group.

``size`` defaults to ``group_idx.max() + 1``, computed first (one pass).
"""
import numpy as np

from . import _aggregate as _ag
from ._array import Array

_FIELDS_F = np.float64


def _np(x):
    return x.get() if isinstance(x, Array) else np.asarray(x)


# gpured.dask's placement (its _Placer and _on_device), handed over by
# gpured/dask.py when it imports this module (bind): no import back up.
_gd = {}


def bind(placer_cls, on_device):
    """gpured/dask.py gives its chunk placement (at its import)."""
    _gd.update(Placer=placer_cls, on_device=on_device)


def _chunk(g, x, name, size, offset, axis=None, order="C", placer=None):
    """The chunk's partial fields on the chunk's device: its own for a
    device-resident chunk, else the one gpured.dask's placer picks
    (devices=, policy=, rates=; counted in gpured.dask.stats())."""
    if placer is None:
        return _fields(g, x, name, size, offset, axis, order, None)
    return _gd["on_device"](x, placer, lambda call, dev: _fields(
        g, x, name, size, offset, axis, order,
        None if isinstance(x, Array) else dev))


def _fields(g, x, name, size, offset, axis, order, device):
    """The partial fields (NumPy arrays, one entry per group; with axis,
    of the result's shape: the merges below are elementwise)."""
    def agg(g, x, func, size, **kw):
        return _ag.aggregate(g, x, func, size, axis=axis, order=order,
                             device=device, **kw)
    base = name[3:] if name.startswith("nan") else name
    nan = "nan" if name.startswith("nan") else ""
    kind = np.asarray([], dtype=x.dtype).dtype.kind
    f = {"cnt": _np(agg(g, x, nan + "len", size))}
    if base == "sum":
        f["s"] = _np(agg(g, x, name, size, fill_value=0,
                         dtype=_FIELDS_F if kind == "f" else np.int64))
    elif base == "prod":
        f["p"] = _np(agg(g, x, name, size, fill_value=1))
    elif base in ("mean", "var", "std"):
        f["m"] = _np(agg(g, x, nan + "mean", size, fill_value=0,
                         dtype=_FIELDS_F))
        var = _np(agg(g, x, nan + "var", size, fill_value=0, dtype=_FIELDS_F))
        f["M2"] = var * f["cnt"]
    elif base in ("min", "max", "first", "last"):
        f["v"] = _np(agg(g, x, name, size, fill_value=0))
    elif base in ("argmin", "argmax"):
        ext = nan + base[3:]
        f["v"] = _np(agg(g, x, ext, size, fill_value=0))
        i = _np(agg(g, x, name, size, fill_value=-1))
        f["i"] = np.where(i >= 0, i + offset, -1)
    elif base in ("all", "any"):
        f["b"] = _np(agg(g, x, name, size, fill_value=base == "all"))
    return f


def _chan(parts):
    """(count, mean, M2) of all chunks, Chan's pairwise merge (float64)."""
    n = np.zeros_like(parts[0]["m"])
    mean = np.zeros_like(n)
    m2 = np.zeros_like(n)
    for p in parts:
        nb = p["cnt"].astype(np.float64)
        tot = n + nb
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = p["m"] - mean
            w = np.where(tot > 0, nb / tot, 0)
            mean = mean + delta * w
            m2 = m2 + p["M2"] + np.where(tot > 0, delta * delta * n * w, 0)
        n = tot
    return n, mean, m2


def _pick(parts, last):
    """The value of the first (last) chunk holding each group."""
    seq = parts[::-1] if last else parts
    v = np.array(seq[0]["v"])
    have = seq[0]["cnt"] > 0
    for p in seq[1:]:
        take = ~have & (p["cnt"] > 0)
        v[take] = p["v"][take]
        have |= take
    return v


def _arg(parts, is_min, nan):
    best_v = None
    best_i = np.full(parts[0]["i"].shape, -1, np.int64)
    poisoned = np.zeros(best_i.shape, bool)
    for p in parts:
        v, i = p["v"], p["i"]
        has = p["cnt"] > 0
        if not nan and v.dtype.kind == "f":
            poisoned |= has & np.isnan(v)
        ok = i >= 0
        if best_v is None:
            best_v = np.array(v)
            best_i = np.where(ok, i, -1)
            continue
        better = (v < best_v) if is_min else (v > best_v)
        take = ok & ((best_i < 0) | better)
        best_v = np.where(take, v, best_v)
        best_i = np.where(take, i, best_i)
    best_i[poisoned] = -1
    return best_i


def _final(parts, name, dt, fill, ddof):
    base = name[3:] if name.startswith("nan") else name
    cnt = sum(p["cnt"] for p in parts)
    empty = cnt == 0
    if base == "len":
        res = cnt.astype(_ag._minimum_dtype(fill, np.int64))
    elif base == "sum":
        dt = _ag._minimum_dtype(fill, dt)
        res = sum(p["s"] for p in parts).astype(dt)
    elif base == "prod":
        res = np.prod([p["p"] for p in parts], axis=0)
        dt = _ag._minimum_dtype(fill, dt)
        res = res.astype(dt)
    elif base in ("mean", "var", "std"):
        n, mean, m2 = _chan(parts)
        if base == "mean":
            res = mean
        else:
            denom = np.where(n > ddof, n - ddof, 0)
            with np.errstate(invalid="ignore", divide="ignore"):
                res = m2 / denom
            res = np.sqrt(res) if base == "std" else res
            empty = denom == 0
        res = res.astype(dt)
    elif base in ("min", "max"):
        dt = _ag._minimum_dtype(fill, dt)
        red = np.minimum if base == "min" else np.maximum
        res = parts[0]["v"]
        have = parts[0]["cnt"] > 0
        for p in parts[1:]:
            h = p["cnt"] > 0
            res = np.where(have & h, red(res, p["v"]), np.where(h, p["v"], res))
            have |= h
        res = res.astype(dt)
    elif base in ("first", "last"):
        res = _pick(parts, base == "last").astype(_ag._minimum_dtype(fill, dt))
    elif base in ("argmin", "argmax"):
        i = _arg(parts, base == "argmin", name.startswith("nan"))
        return np.where(i < 0, fill, i).astype(dt)
    else:  # all / any
        bs = [np.where(p["cnt"] > 0, p["b"], base == "all") for p in parts]
        res = np.logical_and.reduce(bs) if base == "all" else \
            np.logical_or.reduce(bs)
        return np.where(empty, bool(fill), res)
    if empty.any():
        res = np.array(res)
        res[empty] = fill
    return res


def aggregate(group_idx, a, func="sum", size=None,
              fill_value=_ag.DEFAULT_FILL_VALUE, order="C", dtype=None,
              axis=None, *, devices=None, policy="rate", rates=None,
              **kwargs):
    """``gpured.aggregate`` over a 1-D Dask array ``a`` and a group array
    chunked alike (NumPy arrays are wrapped; ``group_idx`` is rechunked to
    ``a``'s chunks).  Returns a Dask array of ``size`` groups (one
    chunk), equal to ``gpured.aggregate`` / numpy_groupies on the whole
    arrays (float sums up to rounding: partials combine in float64).
    ``axis=`` groups an n-d ``a`` along one axis (1-D ``group_idx`` of
    that length; the other axes are rechunked into one chunk each).
    Multi-dimensional ``group_idx`` and ``cumsum`` are not supported here
    (NotImplementedError).  Host chunks go to a device as in the other
    gpured.dask functions (``devices=``, ``policy=``, ``rates=``);
    device-resident chunks stay on theirs."""
    import dask
    import dask.array as da
    ddof = kwargs.pop("ddof", 0)
    if kwargs:
        raise TypeError("aggregate: unexpected keyword argument(s) %s"
                        % ", ".join(sorted(kwargs)))
    name = _ag._name(func)
    if name.removeprefix("nan") == "cumsum":
        raise NotImplementedError("gpured.dask.aggregate: %s" % name)
    a = a if isinstance(a, da.Array) else da.from_array(np.asarray(a))
    ax = 0 if axis is None else axis
    if axis is None and a.ndim != 1:
        raise ValueError("a must be 1 dimensional; or specify axis.")
    if not -a.ndim <= ax < a.ndim:
        raise ValueError("axis arg too large for np.ndim(a)")
    ax %= a.ndim
    # groups along one axis: the other axes in one chunk each
    a = a.rechunk({d: -1 for d in range(a.ndim) if d != ax})
    if np.ndim(group_idx) != 1:
        raise NotImplementedError("gpured.dask.aggregate: 1-D group_idx "
                                  "only")
    g = group_idx if isinstance(group_idx, da.Array) else \
        da.from_array(np.asarray(group_idx), chunks=(a.chunks[ax],))
    if g.shape[0] != a.shape[ax]:
        raise ValueError("group_idx and a must be of the same length along "
                         "axis")
    if g.dtype.kind not in "iu":
        raise TypeError("group_idx must be of integer type")
    g = g.rechunk((a.chunks[ax],))
    if size is None:
        size = int(g.max().compute()) + 1
    elif not np.isscalar(size):
        raise ValueError("output size must be scalar or None")
    size = int(size)
    dt = _ag._out_dtype(name, None if dtype is None else np.dtype(dtype),
                        a.dtype, int(np.prod(a.shape)))
    fill = _ag._fill(name, fill_value, dt)
    offsets = np.cumsum((0,) + a.chunks[ax])[:-1]
    placer = _gd["Placer"](devices, policy, rates)
    chunk = dask.delayed(_chunk, pure=True)
    parts = [chunk(gb, ab, name, size, int(off), axis, order, placer)
             for gb, ab, off in zip(g.to_delayed().ravel(),
                                    a.to_delayed().ravel(), offsets)]
    out = dask.delayed(_final, pure=True)(parts, name, dt, fill, ddof)
    res_dt = _meta_dtype(name, dt, fill)
    shape = tuple(size if d == ax else s for d, s in enumerate(a.shape))
    return da.from_delayed(out, shape=shape, dtype=res_dt)


def _meta_dtype(name, dt, fill):
    base = name[3:] if name.startswith("nan") else name
    if base in ("all", "any"):
        return np.dtype(bool)
    if base == "len":
        return _ag._minimum_dtype(fill, np.int64)
    if base in ("sum", "prod", "min", "max", "first", "last"):
        return _ag._minimum_dtype(fill, dt)
    return dt
