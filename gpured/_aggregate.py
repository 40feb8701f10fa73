"""Grouped statistics: ``gpured.aggregate``, numpy_groupies' ``aggregate``
on the device (issue 41).

A Python face that composes device primitives -- no kernel of its own
yet (the layering's own slice, csrc/api_groupby.c and below, is still to
come; DESIGN: "aggregate").  Every element-sized step runs on the device:

* the by-key family's dense reduction ``sum_by_key`` (sum / min / max,
  keys checked in range on the device) carries every per-group pass;
* elementwise kernels do the masks (NaN skipping, empty groups, fill
  values), the casts and the per-group arithmetic;
* the elementwise ``take`` (``out[i] = table[idx[i]]``) gathers a
  per-group value back to the elements: argmin/argmax's "which element
  equals its group's extreme"; var/std's second pass (the sum of squared
  deviations from each group's own mean -- two passes, never a
  single-pass sum of x and x**2) gathers, subtracts and squares in one
  elementwise kernel (``take_sqdev``);
* positions come from a device scan of ones (first/last/arg*: the
  smallest / largest position of a group, argmin/argmax the smallest
  position among the group's extremes, as numpy_groupies).

What the host does: the argument checks, the result dtype and the fill
value (numpy_groupies' rules, reproduced here), the layout of the keys for
``axis=`` and multi-dimensional ``group_idx`` (small index vectors,
combined with the keys on the device by broadcasting), and a handful of
per-group values.  ``prod`` / ``nanprod`` and ``cumsum`` / ``nancumsum``
go through the by-key family's device radix sort (``_core.sort_keys``):
a stable sort by key, then ``reduce_by_key(prod)`` over the runs, or
``scan_by_key(sum)`` over the sorted values scattered back to their
positions (the dense atomics have no product, and a running sum needs
each group's elements in order).
"""
import numpy as np

from . import _core
from ._array import Array, asnumpy, empty, to_device
from ._bykey import (_sum_count_by_key, explain_by_key, reduce_by_key,
                     scan_by_key, sum_by_key)
from ._elementwise import where
from ._reduce import any as _any
from ._scan import cumsum as _dev_cumsum


class _Default:
    """numpy_groupies' DEFAULT_FILL_VALUE: each function's own default."""
    def __repr__(self):
        return "DEFAULT_FILL_VALUE"


DEFAULT_FILL_VALUE = _Default()

_BASE = ("sum", "prod", "mean", "var", "std", "min", "max", "argmin",
         "argmax", "first", "last", "len", "all", "any")
FUNCS = (_BASE + tuple("nan" + f for f in _BASE) + ("cumsum", "nancumsum"))
# the sorted ones: keys checked in full on the way in (the device radix
# sort takes them as they are)
_SORTED_FUNCS = ("prod", "nanprod", "cumsum", "nancumsum")

_ALIAS = {"add": "sum", "plus": "sum", "count": "len", "multiply": "prod",
          "product": "prod", "times": "prod", "amax": "max",
          "maximum": "max", "amin": "min", "minimum": "min", "or": "any",
          "and": "all", "nanadd": "nansum", "nancount": "nanlen",
          "nanamax": "nanmax", "nanamin": "nanmin"}
_BUILTIN = {all: "all", any: "any", len: "len", max: "max", min: "min",
            sum: "sum"}

# numpy_groupies' functions gpured does not run (NotImplementedError)
_OTHER = ("median", "quantile", "percentile", "trapezoid", "skew", "kurt",
          "kurtosis", "nunique", "sort", "sorted", "array", "split",
          "splice", "sumofsquares", "cumprod", "cummax", "cummin",
          "allnan", "anynan", "cumsum", "nancumsum")

_FILL = {"sum": 0, "prod": 1, "all": False, "any": False, "len": 0,
         "mean": np.nan, "var": np.nan, "std": np.nan, "min": np.nan,
         "max": np.nan, "first": np.nan, "last": np.nan, "argmax": -1,
         "argmin": -1, "cumsum": 0}
_FORCED = {"all": np.bool_, "any": np.bool_, "len": np.int64,
           "argmax": np.int64, "argmin": np.int64}
_FLOAT = ("mean",)
_REAL_FLOAT = ("var", "std")
_NEXT_INT = {"bool": np.int8, "uint8": np.int16, "int8": np.int16,
             "uint16": np.int32, "int16": np.int32, "uint32": np.int64,
             "int32": np.int64}
_NEXT_FLOAT = {"float16": np.float32, "float32": np.float64,
               "float64": np.complex64, "complex64": np.complex128}


def _name(func):
    """The function's canonical name, as numpy_groupies resolves it."""
    if isinstance(func, str):
        name = _ALIAS.get(func, func)
    elif func in _BUILTIN:
        name = _BUILTIN[func]
    elif callable(func) and getattr(func, "__module__", "") == "numpy":
        name = _ALIAS.get(func.__name__, func.__name__)
    else:
        raise NotImplementedError(
            "gpured.aggregate runs the named functions only (%s); a custom "
            "callable %r is not supported" % (", ".join(FUNCS), func))
    if name not in FUNCS and name.removeprefix("nan") not in _OTHER:
        raise ValueError("func %s is neither a valid function string nor "
                         "a callable object" % (func,))
    if name not in FUNCS:
        raise NotImplementedError("gpured.aggregate: function %r is not "
                                  "implemented (one of %s)"
                                  % (func, ", ".join(FUNCS)))
    return name


# ------------------------------------------------- numpy_groupies' dtypes

def _fits(x, dt):
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            c = np.array(x).astype(dt)
    except (ValueError, OverflowError, TypeError):
        return False
    return bool(c == x) or (np.ndim(x) == 0 and bool(np.isnan(x)))


def _minimum_dtype(x, dt):
    """numpy_groupies' minimum_dtype: dt, widened until it holds x."""
    dt = np.dtype(dt)
    if _fits(x, dt):
        return dt
    table = _NEXT_FLOAT if np.issubdtype(dt, np.inexact) else _NEXT_INT
    while True:
        nxt = table.get(dt.name)
        if nxt is None:
            if table is _NEXT_FLOAT:
                raise ValueError("Can not determine dtype of %r" % (x,))
            return np.dtype(np.float32)
        dt = np.dtype(nxt)
        if _fits(x, dt):
            return dt


def _out_dtype(name, dtype, adt, n):
    base = name[3:] if name.startswith("nan") else name
    if dtype is not None:
        if np.issubdtype(dtype, np.bool_) and base not in ("all", "any"):
            raise TypeError("function %s requires a more complex datatype "
                            "than bool" % name)
        if not np.issubdtype(dtype, np.integer) and base == "len":
            raise TypeError("function %s requires an integer datatype"
                            % name)
        return np.dtype(dtype)
    if base in _FORCED:
        return np.dtype(_FORCED[base])
    if base in _FLOAT:
        return adt if np.issubdtype(adt, np.inexact) else np.dtype(np.float64)
    if base in _REAL_FLOAT:
        return adt if np.issubdtype(adt, np.floating) else np.dtype(np.float64)
    if name == "sum":
        if adt == np.int64:
            return adt
        if np.issubdtype(adt, np.integer):
            return _minimum_dtype(np.iinfo(adt).max * n, adt)
        if adt == np.bool_:
            return _minimum_dtype(n, adt)
    return adt


def _fill(name, fill_value, dt):
    """The fill value for groups without elements (numpy_groupies'
    resolve_fill_value and check_fill_value)."""
    base = name[3:] if name.startswith("nan") else name
    if fill_value is None:
        raise ValueError("fill_value=None is not a value %s can fill with"
                         % name)
    if fill_value is DEFAULT_FILL_VALUE:
        fill_value = _FILL[base]
        fits = base in _FLOAT or base in _REAL_FLOAT or \
            np.issubdtype(dt, np.inexact)
        if fill_value != fill_value and not fits:
            fill_value = 0
    if base in ("all", "any"):
        if not (isinstance(fill_value, (bool, np.bool_)) or
                fill_value in (0, 1)):
            raise ValueError("fill_value must be True or False for %s" % name)
        return fill_value
    try:
        dt.type(fill_value)
    except (ValueError, TypeError, OverflowError) as e:
        raise ValueError("fill_value %r cannot be converted to the output "
                         "dtype %s" % (fill_value, dt)) from e
    return fill_value


# ------------------------------------------------------- device helpers

def _ones(n, dt, dev):
    o = empty(n, dt, device=dev)
    if n:
        _core.buffer_fill(o.buffer, 0, o.nbytes, np.ones(1, dt).tobytes())
    return o


def _arange(n, dev):
    return _dev_cumsum(_ones(n, np.int64, dev), exclusive=True)


def _take(idx, table):
    """table[idx] on the device (idx in range: the caller's promise)."""
    if table.ndim != 1 or not table.flags["C_CONTIGUOUS"]:
        table = table.copy()
    out = empty(idx.shape, table.dtype, device=idx.device_index)
    _core.elementwise("take", (idx, table), (np.dtype(np.int64), table.dtype,
                                             table.dtype), out)
    return out


def _sqdev(idx, table, x):
    """(x - table[idx])**2 on the device in one kernel (elementwise
    take_sqdev: var's second pass without the gathered and the difference
    arrays)."""
    if table.ndim != 1 or not table.flags["C_CONTIGUOUS"]:
        table = table.copy()
    out = empty(x.shape, x.dtype, device=x.device_index)
    t = x.dtype
    _core.elementwise("take_sqdev", (idx, table, x),
                      (np.dtype(np.int64), t, t, t), out)
    return out


def _dev_values(x):
    """x as a value dtype of the by-key family (int32..float64)."""
    dt = x.dtype
    if dt == np.bool_ or (dt.kind == "i" and dt.itemsize < 4):
        return x.astype(np.int32)
    if dt.kind == "u" and dt.itemsize < 4:
        return x.astype(np.uint32)
    if dt == np.float16:
        return x.astype(np.float32)
    return x


def _by_key(keys, vals, size, op, deterministic=False):
    return sum_by_key(keys, _dev_values(vals), size, op,
                      deterministic=deterministic)


def _extreme(dt, op):
    """op's identity for dt (a value no element beats)."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return np.inf if op == "min" else -np.inf
    info = np.iinfo(dt)
    return info.max if op == "min" else info.min


def _filled(res, empty_mask, fill, dt):
    res = res.astype(dt) if res.dtype != dt else res
    return where(empty_mask, np.asarray(fill).astype(dt)[()], res)


# ------------------------------------------------- the functions, per group

class _Ctx:
    """One call's device operands: keys (int32/int64, 1-D), values (1-D),
    the number of groups, the NaN mask of the nan forms (None: every
    element counts), and the lazily made per-call vectors."""

    def __init__(self, keys, a, size, nan, det=False):
        self.keys, self.a, self.size, self.det = keys, a, size, det
        self.n = keys.shape[0]
        self.dev = keys.device_index
        self.valid = (~np.isnan(a)) if nan and a.dtype.kind == "f" else None
        self._cnt = self._pos = None

    def masked(self, x, absent):
        """x where the element counts, else absent."""
        return x if self.valid is None else where(self.valid, x, absent)

    def count(self):
        if self._cnt is None:
            ones = _ones(self.n, np.int32, self.dev)
            self._cnt = sum_by_key(self.keys, self.masked(ones, 0), self.size)
        return self._cnt

    def pos(self):
        if self._pos is None:
            self._pos = _arange(self.n, self.dev)
        return self._pos


def _sum(c, dt, fill):
    dt = _minimum_dtype(fill, dt)
    s = _by_key(c.keys, c.masked(c.a, 0), c.size, "sum", c.det)
    if fill == 0:
        return s.astype(dt) if s.dtype != dt else s
    return _filled(s, c.count() == 0, fill, dt)


def _len(c, dt, fill):
    dt = _minimum_dtype(fill, np.int64)  # numpy_groupies ignores dtype=
    return _filled(c.count(), c.count() == 0, fill, dt)


def _mean_of(c):
    a = c.a if c.a.dtype.kind == "f" else c.a.astype(np.float64)
    if c.valid is None and c._cnt is None:
        # sums and counts in one call (one pass on the host path)
        s, c._cnt = _sum_count_by_key(c.keys, _dev_values(a), c.size,
                                      deterministic=c.det)
    else:
        s = _by_key(c.keys, c.masked(a, 0), c.size, "sum", c.det)
    cnt = c.count()
    # s / cnt is float64 by NumPy's promotion; float32 on devices without it
    return a, s / (cnt if _fp64(c.dev) else cnt.astype(s.dtype)), cnt


_FP64 = {}


def _fp64(dev):
    if dev not in _FP64:
        _FP64[dev] = bool(_core.devices()[dev]["fp64"])
    return _FP64[dev]


def _mean(c, dt, fill):
    _, m, cnt = _mean_of(c)
    return _filled(m, cnt == 0, fill, dt)


def _var(c, dt, fill, ddof=0, sqrt=False):
    """Two passes: each group's mean, gathered back to its elements, then
    the sum of the squared deviations from it."""
    a, m, cnt = _mean_of(c)
    # the mean gathered in a's own float type: float32 data moves half the
    # bytes, and subtracting the rounded mean m' only adds n * (m - m')**2
    # to the group's sum of squares (the cross term sums to zero)
    # one elementwise kernel gathers, subtracts and squares (take_sqdev)
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float32)  # float16: computed through float32
    mt = m.astype(a.dtype) if m.dtype != a.dtype else m
    ss = _by_key(c.keys, c.masked(_sqdev(c.keys, mt, a), 0), c.size, "sum",
                 c.det)
    denom = where(cnt > ddof, cnt - ddof, 0)
    r = ss / denom
    if sqrt:
        r = np.sqrt(r)
    return _filled(r, denom == 0, fill, dt)


def _minmax(op):
    def f(c, dt, fill):
        dt = _minimum_dtype(fill, dt)
        a = _dev_values(c.a)
        ident = _extreme(a.dtype, op)
        x = _by_key(c.keys, c.masked(a, ident), c.size, op)
        # a group left at the identity may be empty (or hold only it): the
        # counts pass only then (one small device test, read back)
        if not bool(_any(x == ident)):
            return x.astype(dt) if x.dtype != dt else x
        return _filled(x, c.count() == 0, fill, dt)
    return f


def _firstlast(last):
    def f(c, dt, fill):
        dt = _minimum_dtype(fill, dt)
        none = -1 if last else c.n
        p = _by_key(c.keys, c.masked(c.pos(), none), c.size,
                    "max" if last else "min")
        # absent: the masked position, or the op's identity (no element)
        empty_mask = (p < 0) if last else (p >= c.n)
        v = _take(where(empty_mask, 0, p), c.a)
        return _filled(v, empty_mask, fill, dt)
    return f


def _arg(op):
    """The smallest position among each group's extremes: the extreme by
    key, gathered back, compared, the smallest matching position by key.
    A NaN extreme matches nothing (the group gets the fill), as in
    numpy_groupies; the nan forms replace NaN by the op's identity first."""
    def f(c, dt, fill):
        a = _dev_values(c.a)
        sq = a if c.valid is None else where(c.valid, a, _extreme(a.dtype, op))
        ext = _by_key(c.keys, sq, c.size, op)
        hit = a == _take(c.keys, ext)
        p = _by_key(c.keys, where(hit, c.pos(), c.n), c.size, "min")
        return _filled(p, p >= c.n, fill, dt)  # c.n or the identity
    return f


def _allany(is_all):
    """One pass over codes: all takes the minimum of (0 false, 1 true,
    2 absent), any the maximum of (2 true, 1 false, 0 absent); a group
    left at the code of absence or the identity gets the fill."""
    def f(c, dt, fill):
        b = c.a != 0
        t, fl, ab = (1, 0, 2) if is_all else (2, 1, 0)
        code = c.masked(where(b, np.int32(t), np.int32(fl)), ab)
        r = sum_by_key(c.keys, code, c.size, "min" if is_all else "max")
        res = r == t
        return where((r == t) | (r == fl), res, bool(fill)).astype(np.bool_)
    return f


_DEVICE = {"sum": _sum, "len": _len, "mean": _mean, "var": _var,
           "std": lambda c, dt, fill, ddof=0: _var(c, dt, fill, ddof, True),
           "min": _minmax("min"), "max": _minmax("max"),
           "first": _firstlast(False), "last": _firstlast(True),
           "argmin": _arg("min"), "argmax": _arg("max"),
           "all": _allany(True), "any": _allany(False)}

_BITS = {4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _as(x, dt):
    """x's bits as dtype dt of the same width (a view, no copy)."""
    x = x if x.is_c_contiguous else x.copy()
    return Array(x.buffer, x.shape, np.dtype(dt), x.strides, x.offset)


def _sorted_by_key(keys, vals, size):
    """(keys, values) in a stable order of the keys: the by-key family's
    device radix sort (gpured._core.sort_keys; keys in [0, size), checked
    on the way in), values as their bits."""
    k = keys.astype(np.uint32) if keys.dtype != np.uint32 else keys
    sk, sv = _core.sort_keys(k, _as(vals, _BITS[vals.dtype.itemsize]),
                             max(int(size) - 1, 0))
    return sk, _as(sv, vals.dtype)


def _prod(c, dt, fill):
    """A stable sort by key, reduce_by_key(prod) over the runs, each
    group's run found by a dense max of the run numbers."""
    dt = _minimum_dtype(fill, dt)
    a = _dev_values(c.a)
    sk, sv = _sorted_by_key(c.keys, c.masked(a, 1), c.size)
    uk, pr = reduce_by_key(sk, sv, "prod")
    run = sum_by_key(uk, _arange(uk.shape[0], c.dev), c.size, "max")
    # a group without a run is left at max's identity (negative); the nan
    # form also empties a group of NaNs only (its valid count)
    empty_mask = run < 0 if c.valid is None else c.count() == 0
    v = _take(where(empty_mask, 0, run), pr)
    return _filled(v, empty_mask, fill, dt)


def _cumsum(c, dt):
    """Group-wise running sums in the original order: a stable sort of
    (key, position), the values gathered in that order, scan_by_key, and
    scattered back to the positions (a dense sum of one value a key)."""
    a = c.masked(_dev_values(c.a), 0)
    sk, perm = _sorted_by_key(c.keys, c.pos(), c.size)
    cs = scan_by_key(sk, _take(perm, a), "sum")
    out = sum_by_key(perm, cs, c.n, "sum")
    return out.astype(dt) if out.dtype != dt else out


_DEVICE["prod"] = _prod

# what explain_aggregate says each one runs
_PATHS = {
    "sum": "sum_by_key(sum); counts only for a nonzero fill",
    "len": "sum_by_key(sum) of ones",
    "mean": "sum_by_key(sum) / sum_by_key(sum) of ones",
    "var": "mean as above; take_sqdev (x - mean[key])**2 in one "
           "elementwise kernel; sum_by_key(sum) of them (two passes)",
    "std": "var as above, then sqrt",
    "min": "sum_by_key(min); counts only where a group is left at the "
           "identity (maybe empty)",
    "max": "sum_by_key(max); counts only where a group is left at the "
           "identity (maybe empty)",
    "first": "sum_by_key(min) of positions; take(a, position)",
    "last": "sum_by_key(max) of positions; take(a, position)",
    "argmin": "sum_by_key(min); take(min, keys); sum_by_key(min) of the "
              "positions that equal it",
    "argmax": "sum_by_key(max); take(max, keys); sum_by_key(min) of the "
              "positions that equal it",
    "all": "sum_by_key(min) of codes (false 0, true 1, absent 2)",
    "any": "sum_by_key(max) of codes (true 2, false 1, absent 0)",
    "prod": "device: radix sort by key; reduce_by_key(prod); "
            "sum_by_key(max) of the run numbers; take",
    "cumsum": "device: radix sort of (key, position); take(a, position); "
              "scan_by_key(sum); sum_by_key(sum) back to the positions",
}


# ------------------------------------------------------------ the layout

def _scalar(x):
    return int(np.asarray(asnumpy(x) if isinstance(x, Array) else x))


def _strides(dims, order):
    m, acc = [0] * len(dims), 1
    seq = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    for i in seq:
        m[i] = acc
        acc *= int(dims[i])
    return m


def _check_idx(g, size=None, full=True):
    """Integer keys, none negative, none past size; returns max + 1.
    full=False: the by-key family checks every key against size on the
    device anyway (a ValueError naming the first bad one) -- only the
    maximum is needed, and only without size."""
    if g.dtype.kind not in "iu":
        raise TypeError("group_idx must be of integer type")
    if g.size == 0:
        raise ValueError("group_idx must not be empty")
    if not full:
        return None if size is not None else _scalar(g.max()) + 1
    lo, hi = _scalar(g.min()), _scalar(g.max())
    if lo < 0:
        raise ValueError("negative indices not supported")
    if size is not None and hi > int(size) - 1:
        raise ValueError("one or more indices are too large for size %d"
                         % int(size))
    return hi + 1


def _keys_of(parts, dev):
    """sum of part_i * mult_i on the device (broadcast), as int64."""
    keys = None
    for p, m in parts:
        if not isinstance(p, Array):
            p = to_device(np.ascontiguousarray(p, dtype=np.int64), device=dev)
        t = p.astype(np.int64) * np.int64(m) if m != 1 or p.dtype != \
            np.int64 else p
        keys = t if keys is None else keys + t
    return keys


def _layout(g, a, size, order, axis, full):
    """(flat keys, flat values, groups, output shape or None, the shape
    and axis to unravel arg* positions to or None) -- numpy_groupies'
    input_validation, with the keys combined on the device."""
    dev = a.device_index
    if axis is None:
        if a.ndim > 1:
            raise ValueError("a must be scalar or 1 dimensional, use .ravel "
                             "to flatten. Alternatively specify axis.")
        if g.ndim == 1:
            if size is not None and not np.isscalar(size):
                raise ValueError("output size must be scalar or None")
            top = _check_idx(g, size, full)
            if a.shape[0] != g.shape[0]:
                raise ValueError("group_idx and a must be of the same length")
            return g, a, int(top if size is None else size), None, None
        if size is None:
            size = tuple(_scalar(g[i].max()) + 1 for i in range(g.shape[0]))
        elif np.isscalar(size):
            raise ValueError("output size must be of length %d" % len(g))
        elif len(size) != len(g):
            raise ValueError("%d sizes given, but %d output dimensions "
                             "specified in index" % (len(size), len(g)))
        for i in range(g.shape[0]):
            _check_idx(g[i], size[i])
        keys = _keys_of([(g[i], m) for i, m in
                         enumerate(_strides(size, order))], dev)
        if a.shape[0] != keys.shape[0]:
            raise ValueError("group_idx and a must be of the same length")
        return keys, a, int(np.prod(size)), tuple(int(s) for s in size), None
    if not -a.ndim <= axis < a.ndim:
        raise ValueError("axis arg too large for np.ndim(a)")
    axis = axis % a.ndim
    if g.ndim > 1:
        if g.ndim != a.ndim:
            raise ValueError("when using axis arg, group_idx must be 1d, or "
                             "of the same dimensionality as a")
        if np.broadcast_shapes(g.shape, a.shape) != a.shape:
            raise ValueError("group_idx with shape %s cannot be broadcast to "
                             "a with shape %s" % (g.shape, a.shape))
    elif a.shape[axis] != g.shape[0]:
        raise ValueError("a.shape[axis] doesn't match length of group_idx.")
    if size is not None and not np.isscalar(size):
        raise NotImplementedError("when using axis arg, size must be None "
                                  "or scalar.")
    top = _check_idx(g, size)
    dims = [int(top if size is None else size) if i == axis else s
            for i, s in enumerate(a.shape)]
    mult = _strides(dims, order)
    one = [1] * a.ndim
    parts = []
    for d, s in enumerate(a.shape):
        sh = list(one)
        sh[d] = s
        if d == axis:
            parts.append((g.reshape(sh) if g.ndim == 1 else g, mult[d]))
        else:
            parts.append((np.arange(s).reshape(sh), mult[d]))
    keys = _keys_of(parts, dev)
    if keys.shape != a.shape:
        keys = keys + to_device(np.zeros(a.shape, np.int64), device=dev)
    return (keys.ravel(), a.ravel(), int(np.prod(dims)), tuple(dims),
            (a.shape, axis))


def _reshape(res, shape, order):
    if order == "C":
        return res.reshape(shape)
    if isinstance(res, np.ndarray):
        return res.reshape(shape, order="F")
    return res.reshape(tuple(shape[::-1])).transpose()


def _unravel(res, shape, axis, fill):
    """arg* positions in the raveled a -> positions along axis (the fill
    kept), as numpy_groupies' unravel_index(ret, shape)[axis]."""
    stride = int(np.prod(shape[axis + 1:]))
    along = (res // stride) % shape[axis]
    return where(res == fill, res, along.astype(res.dtype))


# ------------------------------------------------------------- the entry

def _scalar_a(a, name, g, axis):
    """A scalar a (sum, prod, len only, as numpy_groupies): repeated for
    every label, in the scalar's own dtype (a Python int: int64)."""
    if name.startswith("nan"):
        raise ValueError("nan-version not supported for scalar input.")
    if name not in ("sum", "prod", "len"):
        raise ValueError("scalar inputs are supported only for 'sum', "
                         "'prod' and 'len'")
    if axis is not None:
        raise ValueError("axis arg too large for np.ndim(a)")
    dt = np.dtype(getattr(a, "dtype", None) or type(a))
    return np.full(g.shape[-1] if g.ndim else 0, a, dtype=dt)


def _operands(group_idx, a, device, name, axis):
    """Both on one device: Arrays stay, host data is uploaded to the
    Arrays' device (or device=, or the current one)."""
    arrs = [x for x in (group_idx, a) if isinstance(x, Array)]
    dev = arrs[0].device_index if arrs and device is None else device
    g = group_idx if isinstance(group_idx, Array) else np.asarray(group_idx)
    x = a if isinstance(a, Array) else np.asarray(a)
    if np.ndim(x) == 0:
        x = _scalar_a(a, name, g, axis)
    if not isinstance(g, Array):
        if g.dtype.kind not in "iu":
            raise TypeError("group_idx must be of integer type")
        g = to_device(g, device=dev)
    if not isinstance(x, Array):
        x = to_device(x, device=dev)
    if g.device_index != x.device_index:
        raise ValueError("group_idx and a are on two devices: move one first")
    return g, x, bool(arrs)


def _prepare(group_idx, a, func, size, fill_value, order, dtype, axis,
             device):
    name = _name(func)
    if order not in ("C", "F"):
        raise ValueError("order must be 'C' or 'F'")
    g, x, on_dev = _operands(group_idx, a, device, name, axis)
    if x.dtype.kind not in "biuf":
        raise TypeError("gpured.aggregate: values of dtype %s are not "
                        "supported (bool, integers, floats)" % x.dtype)
    keys, vals, n_groups, shape, unravel = _layout(
        g, x, size, order, axis, name in _SORTED_FUNCS)
    dt = _out_dtype(name, None if dtype is None else np.dtype(dtype),
                    vals.dtype, vals.shape[0])
    fill = _fill(name, fill_value, dt)
    return name, keys, vals, n_groups, shape, unravel, dt, fill, on_dev


def _host_mean(group_idx, a, func, size, fill_value, dtype, device, axis,
               det):
    """mean of 1-D NumPy inputs: one sum_count_by_key call on the NumPy
    arrays (the host path's single pass where placement picks it, the
    device otherwise), then the per-group division.  None where the call
    is not of that form."""
    if (isinstance(group_idx, Array) or isinstance(a, Array) or
            device is not None or axis is not None or _name(func) != "mean"):
        return None
    g, x = np.asarray(group_idx), np.asarray(a)
    if (g.ndim != 1 or x.ndim != 1 or g.dtype.kind not in "iu" or
            x.dtype.kind not in "biuf" or x.dtype == np.float16 or
            (size is not None and not np.isscalar(size))):
        return None
    if g.size == 0:
        raise ValueError("group_idx must not be empty")
    if x.shape[0] != g.shape[0]:
        raise ValueError("group_idx and a must be of the same length")
    dt = _out_dtype("mean", None if dtype is None else np.dtype(dtype),
                    x.dtype, x.shape[0])
    fill = _fill("mean", fill_value, dt)
    s, cnt = _sum_count_by_key(g, _dev_values(x),
                               None if size is None else int(size),
                               deterministic=det)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = s / cnt
    m = m.astype(dt) if m.dtype != dt else m
    return np.where(cnt == 0, np.asarray(fill).astype(dt)[()], m)


def aggregate(group_idx, a, func="sum", size=None,
              fill_value=DEFAULT_FILL_VALUE, order="C", dtype=None,
              axis=None, *, device=None, deterministic=False, **kwargs):
    """numpy_groupies' ``aggregate`` on the device: ``func`` of the values
    of ``a`` in each group ``group_idx`` names.

    Same signature and semantics as ``numpy_groupies.aggregate`` (its NumPy
    engine is the reference the tests compare with): ``func`` a name
    ("sum", "prod", "mean", "var", "std", "min", "max", "argmin",
    "argmax", "first", "last", "len", "all", "any", "cumsum", the "nan"
    forms that skip NaN elements, numpy_groupies' aliases such as "add",
    "count", "amax", and builtins / NumPy functions of those names);
    ``size`` the number of groups (default ``max(group_idx) + 1``);
    ``fill_value`` for groups without elements (default: each function's,
    as numpy_groupies: 0 for sum/len, nan for mean/var/std and float
    min/max/first/last, -1 for argmin/argmax, False for all/any);
    ``dtype`` the result's; ``ddof=`` for var/std; ``axis`` for an n-d
    ``a`` grouped along one axis (``group_idx`` 1-d of that length, or of
    ``a``'s dimensionality, broadcast); a 2-d ``group_idx`` without axis
    holds one index array per output dimension (``size`` a tuple).

    NumPy arrays in, a NumPy array out; a ``gpured.Array`` among the
    inputs keeps the work and the result on its device (or ``device=``
    for NumPy inputs).  ``deterministic=True`` passes on to the float
    sums' ``sum_by_key`` (sum, mean, var, std: no atomics, the same bits
    on every call); the other passes are exact already.  The functions
    compose device primitives (see :func:`explain_aggregate`); ``prod``
    and ``cumsum`` (and their nan forms) sort by key on the device first.
    """
    ddof = kwargs.pop("ddof", 0)
    if kwargs:
        raise TypeError("aggregate: unexpected keyword argument(s) %s"
                        % ", ".join(sorted(kwargs)))
    if not kwargs:
        res = _host_mean(group_idx, a, func, size, fill_value, dtype, device,
                         axis, bool(deterministic))
        if res is not None:
            return res
    name, keys, vals, ng, shape, unr, dt, fill, on_dev = _prepare(
        group_idx, a, func, size, fill_value, order, dtype, axis, device)
    base = name[3:] if name.startswith("nan") else name
    if base == "cumsum" and np.ndim(a) > 1 and order != "C":
        raise NotImplementedError("cumsum with order='F'")
    if base == "cumsum":
        c = _Ctx(keys, vals, ng, name.startswith("nan"))
        res = _cumsum(c, dt).reshape(np.shape(a))
        return res if on_dev else asnumpy(res)
    c = _Ctx(keys, vals, ng, name.startswith("nan"), bool(deterministic))
    if base in ("var", "std"):
        res = _DEVICE[base](c, dt, fill, ddof)
    else:
        res = _DEVICE[base](c, dt, fill)
    if unr is not None and base in ("argmin", "argmax"):
        res = _unravel(res, unr[0], unr[1], fill)
    if shape is not None:
        res = _reshape(res, shape, order)
    return res if on_dev else asnumpy(res)


def explain_aggregate(group_idx, a, func="sum", size=None,
                      fill_value=DEFAULT_FILL_VALUE, order="C", dtype=None,
                      axis=None, *, device=None, deterministic=False,
                      **kwargs):
    """What ``aggregate(group_idx, a, func, ...)`` would run: a dict with
    func (the canonical name), path ("device" or "host"), steps (the
    primitives in order), dtype, fill_value, groups, and by_key (the plan
    ``sum_by_key`` chooses for these keys, :func:`explain_by_key`)."""
    kwargs.pop("ddof", None)
    name, keys, vals, ng, shape, unr, dt, fill, on_dev = _prepare(
        group_idx, a, func, size, fill_value, order, dtype, axis, device)
    base = name[3:] if name.startswith("nan") else name
    steps = _PATHS[base]
    if name.startswith("nan"):
        steps = "NaN elements masked out (isnan, where); " + steps
    plan = explain_by_key(
        "sum_by_key", keys, _dev_values(vals) if vals.dtype.kind != "b"
        else vals.astype(np.int32), "sum" if vals.dtype.kind != "b"
        else "min", ng, deterministic=bool(deterministic))
    return {"func": name, "path": "device",
            "steps": steps, "dtype": dt, "fill_value": fill, "groups": ng,
            "shape": shape, "by_key": plan}
