"""NumPy's functions on device Arrays: ``Array.__array_function__``.

``np.sum(d)``, ``np.var(d, ddof=1)``, ``np.where(c, d, 0)``, ... with a
gpured Array among the arguments run gpured's function of that name on
the device and return an Array, as CuPy's arrays do.  ``FUNCTIONS`` is
the whole table: NumPy's function name -> gpured's.  NumPy's positional
arguments are named by NumPy's own signature (NumPy has checked the call
against it) and passed on by name, keywords as given; an argument
gpured's function does not take raises TypeError naming it.  Every other NumPy function called with an Array raises
TypeError pointing to ``np.asarray(d)`` / ``d.get()``: nothing is copied
to the host behind the caller's back.

A few functions that only read metadata or make views (``np.shape``,
``np.reshape``, ``np.transpose``, ...) run as the Array's methods
(``METHODS``); ``np.asarray(x, like=d)`` and ``np.array`` / ``np.empty``
/ ``np.zeros`` with ``like=d`` make the array on d's device (``LIKE``:
what dask asks of a chunk type).

To add a function, add its row to ``FUNCTIONS`` (or ``METHODS``); a row
whose NumPy or gpured function does not exist (an older NumPy, a gpured
without it) is left out when the table is built.
"""
import inspect

import numpy as np

from . import _core
from ._elementwise import host_hint

# NumPy's name -> gpured's name (gpured/__init__.py's functions)
FUNCTIONS = {
    "sum": "sum", "prod": "prod", "min": "min", "amin": "min", "max": "max",
    "amax": "max", "mean": "mean", "argmin": "argmin", "argmax": "argmax",
    "all": "all", "any": "any", "cumsum": "cumsum", "cumprod": "cumprod",
    "nancumsum": "nancumsum", "nancumprod": "nancumprod",
    "nansum": "nansum", "nanprod": "nanprod", "nanmin": "nanmin",
    "nanmax": "nanmax", "nanargmin": "nanargmin", "nanargmax": "nanargmax",
    "nanmean": "nanmean", "var": "var", "std": "std", "nanvar": "nanvar",
    "nanstd": "nanstd", "ptp": "ptp", "count_nonzero": "count_nonzero",
    "average": "average", "cumulative_sum": "cumulative_sum",
    "cumulative_prod": "cumulative_prod", "where": "where",
    # added by later helpers where gpured has them (left out otherwise)
    "bincount": "bincount", "histogram": "histogram", "unique": "unique",
    "dot": "dot", "vdot": "vdot",
}

# NumPy's name -> the Array method it runs (metadata and views only)
METHODS = {
    "shape": lambda a: tuple(a.shape), "ndim": lambda a: a.ndim,
    "size": lambda a, axis=None: a.size if axis is None else a.shape[axis],
    "reshape": lambda a, shape=None, order="C", *, newshape=None, copy=None:
        _reshape(a, shape if newshape is None else newshape, order, copy),
    "transpose": lambda a, axes=None: a.transpose(axes),
    "swapaxes": lambda a, axis1, axis2: a.swapaxes(axis1, axis2),
    "ravel": lambda a, order="C": a.reshape(-1, order=order),
    "copy": lambda a, order="K", subok=False: a.copy(),
    "round": lambda a, decimals=0, out=None: _round(a, decimals, out),
    "around": lambda a, decimals=0, out=None: _round(a, decimals, out),
}


def _round(a, decimals, out):
    if decimals != 0:
        raise host_hint("np.round(d, decimals=%r)" % (decimals,))
    if a.dtype.kind == "b":       # NumPy: float16, which Arrays do not hold
        raise host_hint("np.round of a bool Array")
    if a.dtype.kind not in "f":   # NumPy: integers unchanged
        return a.copy() if out is None else np.positive(a, out=out)
    return np.rint(a, out=out)


# NumPy's creation functions called with like=<an Array> (NEP 35, as
# dask's meta arrays do): the new array on that Array's device -- host
# data moving toward the device on request, as CuPy's like= does
# _array.py's creators, handed over by bind() (this module sits below
# _array.py: no import back up)
_made = {}


def bind(to_device, empty, zeros):
    """_array.py gives its creators (at its import)."""
    _made.update(to_device=to_device, empty=empty, zeros=zeros)


def _like_asarray(like, a, dtype=None, order=None, *, copy=None, **kw):
    to_device = _made["to_device"]
    if kw:
        raise host_hint("np.asarray(..., %s, like=d)" % ", ".join(kw))
    return to_device(np.asarray(a, dtype=dtype) if not isinstance(
        a, _core.ArrayBase) else a, dtype=dtype, device=like.device_index)


def _like_empty(like, shape, dtype=float, order="C", **kw):
    empty = _made["empty"]
    if kw:
        raise host_hint("np.empty(..., %s, like=d)" % ", ".join(kw))
    return empty(shape, dtype, device=like.device_index)


def _like_zeros(like, shape, dtype=float, order="C", **kw):
    zeros = _made["zeros"]
    if kw:
        raise host_hint("np.zeros(..., %s, like=d)" % ", ".join(kw))
    return zeros(shape, dtype, device=like.device_index)


LIKE = {"asarray": _like_asarray, "array": _like_asarray,
        "asanyarray": _like_asarray, "empty": _like_empty,
        "zeros": _like_zeros}


def _reshape(a, shape, order, copy):
    r = a.reshape(shape, order=order)
    return r.copy() if copy and r.buffer is a.buffer else r


# NumPy function object -> (gpured function, NumPy's positional parameter
# names, gpured's named parameters, gpured's positional-only ones, gpured's
# required ones); built on first use (gpured's functions are imported by
# then).  NumPy has checked the call against its dispatcher (the same
# parameters) before __array_function__ is called, so the positional
# arguments are mapped to their names here without inspect's bind (a call
# costs a dict lookup and a zip).
_table = {}


# NumPy's C functions whose signature inspect may not see (their
# dispatcher's, where NumPy does not expose it)
_C_PARAMS = {"where": ("condition", "x", "y")}


def _positional(f, npname):
    """The names of f's positional parameters (a NumPy function: its own
    signature, or its dispatcher's, which NumPy gives the same names)."""
    for g in (f, getattr(f, "_dispatcher", None)):
        try:
            ps = inspect.signature(g).parameters.values()
        except (TypeError, ValueError):
            continue
        return tuple(p.name for p in ps if p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return _C_PARAMS[npname]


def _build():
    import gpured
    for npname, grname in FUNCTIONS.items():
        f, g = getattr(np, npname, None), getattr(gpured, grname, None)
        if f is None or g is None:
            continue
        pos = _positional(f, npname)
        gps = inspect.signature(g).parameters.values()
        named = frozenset(p.name for p in gps
                          if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))
        # a NumPy positional parameter gpured names otherwise (np.dot's a,
        # b against x1, x2, say): gpured's parameter at the same place
        gpos = [p.name for p in gps if p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        pos = tuple(n if n in named or i >= len(gpos) else gpos[i]
                    for i, n in enumerate(pos))
        posonly = tuple(p.name for p in gps if p.kind == p.POSITIONAL_ONLY)
        required = tuple(p.name for p in gps if p.default is p.empty and
                         p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))
        _table[f] = (g, pos, named, posonly, required)
    for npname, m in METHODS.items():
        f = getattr(np, npname, None)
        if f is not None:
            _table[f] = (m, None, None, None, None)
    for npname, m in LIKE.items():
        _table[getattr(np, npname)] = (m, "like", None, None, None)


def _what(func):
    return "np.%s" % getattr(func, "__name__", func)


def array_function(self, func, types, args, kwargs):
    """Array.__array_function__ (NEP 18)."""
    for t in types:
        if not issubclass(t, (_core.ArrayBase, np.ndarray)):
            return NotImplemented
    if not _table:
        _build()
    row = _table.get(func)
    if row is None:
        raise host_hint(_what(func))
    g, pos, named, posonly, required = row
    if pos is None:   # a method: metadata or a view
        return g(*args, **kwargs)
    if pos == "like":   # np.asarray(x, like=self) and kin
        return g(self, *args, **kwargs)
    given = dict(zip(pos, args))
    given.update(kwargs)   # (NumPy's keyword names of renamed positionals
    #                        are not renamed: rare, and then refused below)
    bad = [k for k in given if k not in named]
    if bad:
        raise TypeError(
            "%s(%s) is not supported on gpured Arrays (gpured.%s takes no "
            "%s): leave it out, or copy to the host explicitly with "
            "np.asarray(d) or d.get()" % (
                _what(func), ", ".join(k + "=" for k in sorted(bad)),
                g.__name__, " or ".join(sorted(bad))))
    for k in required:
        if k not in given:   # e.g. np.where(c): NumPy's nonzero form
            raise host_hint("%s(%s)" % (_what(func), ", ".join(given)))
    if posonly:
        return g(*[given.pop(k) for k in posonly], **given)
    return g(**given)
