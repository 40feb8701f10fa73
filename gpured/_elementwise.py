"""Elementwise operations on device Arrays: operators, NumPy's ufuncs,
``gpured.where``.

The face only marshals: NumPy decides the types (``ufunc.resolve_dtypes``:
its promotion rules, Python scalars weak as NumPy 2 has them), NumPy's
``broadcast_shapes`` the result's shape; scalars are cast to their loop
type here (NumPy's OverflowError for a Python int out of range), NumPy
arrays are uploaded to the Arrays' device (explicit data movement toward
the device), and one ``_core.elementwise`` call runs the generated kernel
(csrc/api_elementwise.c > csrc/elementwise.c > kernels/elementwise.cl).
Nothing here copies an Array to the host.
"""
import numpy as np

from . import _core

# NumPy's elementwise ufuncs that run on the device (csrc/elementwise.c's
# table); every other ufunc raises TypeError (no silent host copy).
UFUNCS = frozenset("""
add subtract multiply true_divide divide floor_divide remainder mod power
equal not_equal less less_equal greater greater_equal bitwise_and bitwise_or
bitwise_xor logical_and logical_or logical_xor maximum minimum fmax fmin
arctan2 hypot copysign fmod left_shift right_shift negative positive absolute
invert bitwise_not logical_not sqrt exp log log2 log10 sin cos tan tanh
arcsin arccos arctan sinh cosh arcsinh arccosh arctanh exp2 expm1 log1p floor
ceil rint trunc isnan isinf isfinite signbit square sign cbrt reciprocal
""".split())

_DEVICE_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
    np.int64, np.uint64, np.float32, np.float64))

_COMPARE = frozenset("equal not_equal less less_equal greater greater_equal"
                     .split())

# ufunc.reduce / accumulate -> the gpured function that computes it
_REDUCE = {"add": "sum", "multiply": "prod", "minimum": "min",
           "maximum": "max", "logical_and": "all", "logical_or": "any",
           "fmin": "nanmin", "fmax": "nanmax"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod", "minimum": "cummin",
               "maximum": "cummax"}


# What the Array's module gives this one (bind, called by gpured/_array.py
# once Array exists): results are made with its ``empty``, so that this
# module never imports the class it serves (data flows down the face).
_bound = {}


# The package's functions that ufunc.reduce / accumulate / reduceat and
# the power check route to (gpured.min, sum, reduceat, cumsum, ...):
# handed over by gpured/__init__.py (bind_family), never imported from
# here -- this module sits below the families it serves.
_family = None


def bind_family(ns):
    """gpured/__init__.py gives the package's namespace (at its import)."""
    global _family
    _family = ns


def bind(empty):
    _bound["empty"] = empty


def host_hint(what):
    return TypeError(
        "%s is not supported on gpured Arrays (it would compute on the "
        "host): copy to the host explicitly with np.asarray(d) or d.get()"
        % what)


def _is_array(x):
    return isinstance(x, _core.ArrayBase)


def _kind(x):
    """(the operand, its dtype or weak Python type for NumPy's resolver).
    None for an operand that is no array or number."""
    if _is_array(x):
        return x, x.dtype
    if isinstance(x, bool):
        return x, np.dtype(bool)
    if isinstance(x, int):
        return x, int
    if isinstance(x, float):
        return x, float
    if isinstance(x, np.generic):
        return x, x.dtype
    if isinstance(x, complex):
        return None
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        return None
    return (x[()] if x.ndim == 0 else x), x.dtype


def _device_of(ops, device=None):
    for x in ops:
        if _is_array(x):
            x._live()
            return x.device_index
    return device


def _value(name, x, dt):
    try:
        return np.asarray(x, dtype=dt)
    except OverflowError:
        if name in _COMPARE:
            raise _Widen() from None
        raise


class _Widen(Exception):
    """A comparison with a Python int past its loop type: widen the loop."""


def _resolve(ufunc, kinds):
    try:
        return ufunc.resolve_dtypes(tuple(kinds) + (None,))
    except TypeError as e:
        raise TypeError("%s (gpured Arrays follow NumPy's type rules)" % e) \
            from None


def _widened(kinds, ops):
    # NumPy compares a Python int by value; 64-bit loops hold every value
    # a uint8..int64 array has, and NumPy's int64/uint64 loop is exact
    out = []
    for k, x in zip(kinds, ops):
        if k is int:
            k = np.dtype(np.uint64 if x > np.iinfo(np.int64).max else np.int64)
        out.append(k)
    return out


def _inputs(ufunc, ops, dev):
    """The loop's dtypes and the operands for _core: Arrays, uploaded
    NumPy arrays, scalars as 0-d arrays in their loop type."""
    kinds, vals = [], []
    for x in ops:
        k = _kind(x)
        if k is None:
            return None, None
        vals.append(k[0])
        kinds.append(k[1])
    loop = _resolve(ufunc, kinds)
    name = ufunc.__name__
    for dt in loop:
        if dt not in _DEVICE_DTYPES:
            raise TypeError(
                "np.%s of these operands computes in %s, which gpured's "
                "elementwise kernels do not: astype() first, or copy to the "
                "host "
                "explicitly with np.asarray(d)" % (name, dt))
    ins = []
    try:
        for x, dt in zip(vals, loop):
            ins.append(x if _is_array(x) else _value(name, x, dt)
                       if np.ndim(x) == 0 else _core.to_device(x, None, dev))
    except _Widen:
        return _inputs_widened(ufunc, vals, kinds, dev)
    return loop, ins


def _inputs_widened(ufunc, vals, kinds, dev):
    loop = _resolve(ufunc, _widened(kinds, vals))
    ins = [x if _is_array(x) else np.asarray(x, dtype=dt)
           if np.ndim(x) == 0 else _core.to_device(x, None, dev)
           for x, dt in zip(vals, loop)]
    return loop, ins


def _check_power(loop, ins):
    if loop[1].kind != "i":
        return
    b = ins[1]
    if _is_array(b):
        # as NumPy, which checks every exponent: one bool read back
        neg = b.size and _core.get(_family.min(b)).item() < 0
    else:
        neg = b < 0
    if neg:
        raise ValueError("Integers to negative integer powers are not "
                         "allowed.")


def _overlaps(x, out):
    # an input sharing out's memory in another layout is read after out is
    # written: NumPy copies it first, and so do we
    return (_is_array(x) and x.buffer is out.buffer and
            (x.offset, x.shape, x.strides) != (out.offset, out.shape,
                                              out.strides))


def _out_check(ufunc, loop, shape, out):
    if not _is_array(out):
        raise host_hint("out= that is not a gpured Array")
    out._live()
    if tuple(out.shape) != tuple(shape):
        raise ValueError("non-broadcastable output operand with shape %s "
                         "doesn't match the broadcast shape %s"
                         % (tuple(out.shape), tuple(shape)))
    if not np.can_cast(loop[-1], out.dtype, "same_kind"):
        raise TypeError("Cannot cast ufunc '%s' output from %r to %r with "
                        "casting rule 'same_kind'"
                        % (ufunc.__name__, loop[-1], out.dtype))


def apply(ufunc, ops, out=None, device=None):
    """ufunc(*ops) on the device: an Array (or out, written).
    NotImplemented where an operand is no array or number."""
    dev = _device_of(ops + ((out,) if out is not None else ()), device)
    loop, ins = _inputs(ufunc, ops, dev)
    if loop is None:
        return NotImplemented
    if ufunc.__name__ == "power":
        _check_power(loop, ins)
    shape = np.broadcast_shapes(*(np.shape(x) if not _is_array(x)
                                  else x.shape for x in ins))
    if out is None:
        out = _bound["empty"](shape, loop[-1], device=dev)
    else:
        _out_check(ufunc, loop, shape, out)
        ins = [x.copy() if _overlaps(x, out) else x for x in ins]
    _core.elementwise(ufunc.__name__, tuple(ins), tuple(loop), out)
    return out


def where(condition, x, y, device=None):
    """Elementwise ``x if condition else y`` on the device, as
    ``np.where(condition, x, y)``: NumPy's promotion of x and y (Python
    scalars weak), broadcasting of all three; NumPy arrays among them are
    uploaded to the Arrays' device (or ``device``, or the current one).
    Returns an Array."""
    ops = (condition, x, y)
    dev = _device_of(ops, device)
    kinds = [_kind(v) for v in ops]
    if any(k is None for k in kinds):
        raise TypeError("gpured.where takes arrays and numbers")
    vals = [k[0] for k in kinds]
    dt = np.result_type(*(v.dtype if _is_array(v) else v for v in vals[1:]))
    loop = (np.dtype(bool), dt, dt, dt)
    ins = [v if _is_array(v) else np.asarray(v, dtype=t) if np.ndim(v) == 0
           else _core.to_device(v, None, dev) for v, t in zip(vals, loop)]
    if not _is_array(ins[0]) and np.ndim(ins[0]) == 0:
        ins[0] = np.asarray(bool(vals[0]))
    shape = np.broadcast_shapes(*(x.shape if _is_array(x) else np.shape(x)
                                  for x in ins))
    out = _bound["empty"](shape, dt, device=dev)
    _core.elementwise("where", tuple(ins), loop, out)
    return out


def explain(name, ops, device=None, wg_size=0, items=0):
    """gpured.explain for an elementwise operation: ``name`` a ufunc's name
    in UFUNCS (or "where"), ``ops`` its operand or a tuple of operands.
    The plan (csrc/plan_elementwise.c) with NumPy's loop and the result's
    shape; nothing runs and nothing is uploaded."""
    ops = ops if isinstance(ops, tuple) else (ops,)
    kinds = [_kind(x) for x in ops]
    if any(k is None for k in kinds):
        raise TypeError("explain(%r, ...) takes arrays and numbers" % name)
    if name == "where":
        dt = np.result_type(*(k[0].dtype if _is_array(k[0]) else k[0]
                              for k in kinds[1:]))
        loop = (np.dtype(bool), dt, dt, dt)
    else:
        loop = _resolve(getattr(np, name), [k[1] for k in kinds])
    shape = np.broadcast_shapes(*(np.shape(x) if not _is_array(x)
                                  else x.shape for x in ops))
    dev = _device_of(ops, device)
    dev = _core.current_index() if dev is None else _core.device_index(dev)
    plan = _core.ew_plan_for(dev, int(np.prod(shape, dtype=np.int64)),
                             wg_size, items)
    plan.update(op=name, loop=[str(t) for t in loop], shape=tuple(shape))
    return plan


def array_ufunc(self, ufunc, method, *inputs, **kw):
    """Array.__array_ufunc__: NumPy's ufuncs on the device, reductions and
    accumulations through gpured's own functions; TypeError otherwise."""
    name = ufunc.__name__
    what = "np.%s%s" % (name, "" if method == "__call__" else "." + method)
    if method == "__call__":
        return _call(ufunc, what, inputs, kw)
    if method == "reduce" and name in _REDUCE:
        return _reduce(_REDUCE[name], what, inputs, kw)
    if method == "accumulate" and name in _ACCUMULATE:
        return _accumulate(_ACCUMULATE[name], what, inputs, kw)
    if method == "reduceat" and name in _REDUCEAT:
        return _reduceat(name, what, inputs, kw)
    raise host_hint(what)


_REDUCEAT = ("add", "multiply", "minimum", "maximum", "logical_and",
             "logical_or")


def _reduceat(name, what, inputs, kw):
    """ufunc.reduceat(a, indices, axis=0, dtype=None, out=None) through
    gpured.reduceat, on the device of the Array among a and indices (the
    other uploaded there, as gpured.reduceat does)."""
    gpured = _family
    if len(inputs) != 2 or not (_is_array(inputs[0]) or _is_array(inputs[1])):
        raise host_hint(what + " of a non-Array")
    kw = dict(kw)
    if set(kw) - {"axis", "dtype", "out"}:
        raise host_hint(what + " with " + ", ".join(sorted(kw)))
    return gpured.reduceat(inputs[0], inputs[1], op=name, **kw)


def _call(ufunc, what, inputs, kw):
    if ufunc.__name__ not in UFUNCS or ufunc.nout != 1:
        raise host_hint(what)
    out = kw.pop("out", None)
    if isinstance(out, tuple):
        out = out[0] if len(out) == 1 else None
    if kw.get("where", True) is not True or kw.get("dtype") is not None or \
            kw.get("signature") is not None or \
            kw.get("casting", "same_kind") != "same_kind" or \
            set(kw) - {"where", "dtype", "signature", "casting", "order",
                       "subok"}:
        raise host_hint(what + " with " + ", ".join(sorted(kw)))
    return apply(ufunc, tuple(inputs), out=out)


def _first_array(what, inputs):
    if len(inputs) != 1 or not _is_array(inputs[0]):
        raise host_hint(what + " of a non-Array")
    return inputs[0]


def _reduce(fname, what, inputs, kw):
    gpured = _family
    a = _first_array(what, inputs)
    kw = dict(kw)
    kw.setdefault("axis", 0)   # ufunc.reduce's default, not sum's None
    if isinstance(kw.get("out"), tuple):
        kw["out"] = kw["out"][0]
    if fname in ("all", "any"):
        if kw.pop("dtype", None) not in (None, bool, np.bool_) or \
                "initial" in kw:
            raise host_hint(what + " with dtype or initial")
    if fname in ("min", "max", "nanmin", "nanmax") and \
            kw.pop("dtype", None) is not None:
        raise host_hint(what + " with dtype")
    return getattr(gpured, fname)(a, **kw)


def _accumulate(fname, what, inputs, kw):
    gpured = _family
    a = _first_array(what, inputs)
    kw = dict(kw)
    kw.setdefault("axis", 0)
    if isinstance(kw.get("out"), tuple):
        kw["out"] = kw["out"][0]
    if fname in ("cummin", "cummax") and kw.get("dtype") is not None:
        raise host_hint(what + " with dtype")
    return getattr(gpured, fname)(a, **kw)


def round_(a, ndigits=None):
    """round(a): a Python/NumPy scalar for a 0-d Array (as NumPy's); for
    others NumPy's np.round(a, 0) (rint, on the device)."""
    if a.ndim == 0:
        return round(_core.get(a)[()], ndigits)
    if ndigits not in (None, 0):
        raise host_hint("round(d, ndigits)")
    return apply(np.rint, (a,))
