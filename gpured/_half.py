"""float16 and bfloat16 inputs (issue 40): read natively by the reduce
kernels (NATIVE) and by the scan kernels, which also write half results
(NATIVE_SCAN); every other call widened to float32, computed by the
float32 kernels, the result narrowed ONCE to the input's dtype.

The kernels compute in float32 and float64 only; the two 2-byte float
types are storage types: device Arrays hold them, and the casting copy
kernel (kernels/copy.cl) converts them on the device -- float16 with
``vload_half`` / ``vstore_half_rte`` (core OpenCL C 1.2, no cl_khr_fp16
needed), bfloat16 as ushort bits (``as_float(x << 16)``; stores round to
nearest even by integer arithmetic, NaN stays NaN).  Every public function
that takes one of them as data runs as:

1. widen: ``a.astype(float32)`` (exact; on the device for an Array, on
   the host for a NumPy array) -- one extra elementwise pass;
2. compute: the float32 path, asking for a float64 result (``dtype=``)
   where the function accumulates and the device has fp64, so that the
   accumulation is float64 and nothing is rounded before step 3;
3. narrow: the result cast once to the input's dtype (NumPy's result
   dtype: ``np.sum`` of float16 is float16; bfloat16 as torch and JAX
   give it), on the device for Array results.  Index, count and bool
   results are not narrowed.

``dtype=`` other than the half itself is honoured as given (computed from
the widened input); ``out=`` of a half dtype receives the narrowed result.
The cost: the widening pass reads 2 and writes 4 bytes per element before
the float32 kernel reads those 4, about 5x the bytes of a native pass.

bfloat16 needs the optional ``ml_dtypes`` package (``pip install
gpured[ml]``); without it no array can have that dtype, and asking for
``gpured.bfloat16`` raises ImportError naming the extra.
"""
import functools
import inspect

import numpy as np

from . import _core

F16 = np.dtype(np.float16)


def bf16_dtype():
    """ml_dtypes.bfloat16's dtype, or None where ml_dtypes is absent."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def _halves():
    b = bf16_dtype()
    return (F16,) if b is None else (F16, b)


def is_half(dt):
    """dt (a dtype or None) is float16 or bfloat16."""
    if dt is None:
        return False
    dt = np.dtype(dt)
    return dt.itemsize == 2 and (dt.kind == "f" or (
        dt.kind == "V" and dt.name == "bfloat16"))  # either byte order


def _dt(x):
    """x's dtype in native byte order (NumPy's results are), or None."""
    d = getattr(x, "dtype", None)
    if not isinstance(d, np.dtype):
        return None
    return d if d.isnative else d.newbyteorder("=")


def _fp64(x):
    """Whether x's computation can ask for float64 (device Arrays: their
    device; NumPy input: the current device, or the host path's C)."""
    try:
        dev = x.device if isinstance(x, _core.ArrayBase) else \
            _core.get_device()
        return bool(dev.get("fp64", True))
    except Exception:  # pragma: no cover - no device: the host path
        return True


def _widen(x):
    """x (half) as float32, where it lives."""
    if isinstance(x, _core.ArrayBase):
        return x.astype(np.float32)
    return np.asarray(x).astype(np.float32)


def _narrow(r, dt):
    """r (a result) rounded once to dt where it is floating."""
    if isinstance(r, tuple):
        return tuple(_narrow(v, dt) for v in r)
    rd = _dt(r)
    if rd is None or rd.kind != "f":
        return r
    if isinstance(r, _core.ArrayBase):
        return r.astype(dt)
    with np.errstate(over="ignore"):  # NumPy's float16 sums overflow quietly
        return r.astype(dt) if isinstance(r, np.ndarray) else dt.type(r)


def _into(out, r):
    """out[...] = r (one rounding), out a half array of either kind."""
    if isinstance(out, _core.ArrayBase):
        if not isinstance(r, _core.ArrayBase):
            from ._array import to_device
            r = to_device(np.asarray(r), device=out.device_index)
        _core.device_copy(r, out)
    else:
        np.copyto(out, np.asarray(r).astype(out.dtype), casting="unsafe")
    return out


def _maybe_half(v):
    d = getattr(v, "dtype", None)
    if isinstance(d, np.dtype):
        return d.itemsize == 2 and d.kind in "fV"
    if isinstance(v, (np.dtype, type, str)):  # a dtype= argument
        try:
            return is_half(v)
        except TypeError:
            return False
    return False


def _any_half(args, kw):
    """Whether any argument is a half array or dtype (before binding)."""
    for v in args:
        if type(v) is np.ndarray:  # the common case, without a call
            d = v.dtype
            if d.itemsize == 2 and d.kind in "fV":
                return True
        elif _maybe_half(v):
            return True
    for v in kw.values():
        if _maybe_half(v):
            return True
    return False


# name -> (accumulates: asks for float64, float result narrowed)
_ACC, _NOACC, _KEEP = (True, True), (False, True), (False, False)
_KINDS = {
    **dict.fromkeys("sum prod mean nansum nanprod nanmean var std nanvar "
                    "nanstd cumsum cumprod nancumsum nancumprod "
                    "cumulative_sum cumulative_prod reduceat".split(), _ACC),
    **dict.fromkeys("min max nanmin nanmax ptp cummin cummax average "
                    "reduce_by_key scan_by_key sum_by_key".split(), _NOACC),
    **dict.fromkeys("argmin argmax nanargmin nanargmax count_nonzero all "
                    "any".split(), _KEEP),
}
_BYKEY = ("reduce_by_key", "scan_by_key", "sum_by_key")
# the data arguments widened (default: "a")
_DATA = {"average": ("a", "weights"), "reduce_by_key": ("keys", "values"),
         "scan_by_key": ("keys", "values"), "sum_by_key": ("values",),
         "cumulative_sum": ("x",), "cumulative_prod": ("x",)}


def _narrow_bykey(name, r, kdt, vdt):
    """by-key results: unique keys back to kdt, values to vdt (None:
    leave)."""
    if name == "reduce_by_key":
        k, v = r
        return (k if kdt is None else _narrow(k, kdt),
                v if vdt is None else _narrow(v, vdt))
    return r if vdt is None else _narrow(r, vdt)


# Read natively by the reduce kernels (common.cl GR_ELT: vload_half /
# bfloat16 bits), from device Arrays and NumPy arrays alike (NumPy input
# always runs on the device: the host C loops take no halves), into a
# float32/float64 result narrowed once: no widening pass.  Their other
# calls (where=, initial=, out=) and every other function widen.
NATIVE = frozenset("sum mean min max argmin argmax".split())
# Read and written natively by the scan kernels (kernels/scan.cl GR_SELT /
# GR_SRELT): float32 (or float64) accumulation, each result rounded once
# into the result dtype (the half itself unless dtype= says otherwise), on
# the device for NumPy inputs too; out= still widens.
NATIVE_SCAN = frozenset("cumsum cumprod nancumsum nancumprod cummin cummax "
                        "cumulative_sum cumulative_prod".split())
_NATIVE_IN = (_core.ArrayBase, np.ndarray)
_NoValue = np._NoValue


def _native(f, b, arg, has_dtype, dt, tgt):
    """f on the half Array itself (csrc/api_reduce.c red_half_check)."""
    if has_dtype:
        arg["dtype"] = np.float64 if _fp64(arg["a"]) else None
    r = f(*b.args, **b.kwargs)
    return r if f.__name__.startswith("arg") else _narrow(r, tgt)


def wrap(name, f):
    """f, taking float16/bfloat16 data through float32 (module doc)."""
    sig = inspect.signature(f)
    acc, narrow = _KINDS[name]
    data = _DATA.get(name, ("a",))
    has_dtype = "dtype" in sig.parameters
    has_out = "out" in sig.parameters

    @functools.wraps(f)
    def g(*args, **kw):
        if not kw and len(args) == 1:
            a = args[0]  # f(a) of a NumPy or device array: its dtype alone
            if type(a) is np.ndarray or isinstance(a, _core.ArrayBase):
                d = a.dtype
                if d.itemsize != 2 or d.kind not in "fV":
                    return f(a)
        if not _any_half(args, kw):
            return f(*args, **kw)  # the common case: one cheap scan
        try:
            b = sig.bind(*args, **kw)
        except TypeError:
            return f(*args, **kw)  # f raises NumPy's error
        arg = b.arguments
        dts = {k: _dt(arg.get(k)) for k in data}
        halves = [k for k in data if is_half(dts[k])]
        out = arg.get("out") if has_out else None
        want = arg.get("dtype") if has_dtype else None
        want = None if want is None else np.dtype(want)
        half_out, half_want = is_half(_dt(out)), is_half(want)
        if not (halves or half_out or half_want):
            return f(*args, **kw)
        if name in NATIVE and halves == ["a"] and not half_out and \
                out is None and isinstance(arg["a"], _NATIVE_IN) and \
                (want is None or half_want) and \
                arg.get("where", True) is True and \
                arg.get("initial", _NoValue) is _NoValue:
            return _native(f, b, arg, has_dtype, dts["a"],
                           want if half_want else dts["a"])
        if name in NATIVE_SCAN and halves == [data[0]] and out is None \
                and isinstance(arg[data[0]], _NATIVE_IN) and \
                (want is None or half_want or want.kind == "f"):
            return f(*args, **kw)
        for k in halves:
            arg[k] = _widen(arg[k])
        if want is not None and not half_want:
            pass  # dtype= as given, computed from the widened input
        elif has_dtype and acc and _fp64(arg[data[0]]):
            arg["dtype"] = np.float64
        elif has_dtype:
            arg["dtype"] = None if want is None else np.float32
        if half_out:
            arg["out"] = None
        r = f(*b.args, **b.kwargs)
        if name in _BYKEY:
            r = _narrow_bykey(name, r, dts.get("keys") if "keys" in halves
                              else None, dts["values"] if "values" in halves
                              else None)
        elif narrow and (want is None or half_want):
            tgt = want if half_want else \
                dts[halves[0]] if halves else _dt(out)
            r = _narrow(r, tgt)
        return _into(out, r) if half_out else r
    return g


def wrap_all(ns, names):
    """Replace ns[name] (functions of gpured's namespace) by wrap's."""
    for n in names:
        ns[n] = wrap(n, ns[n])


def wrap_explain(f):
    """explain/timeit: a half input of a call that widens is shown (or
    timed) as the float32 call it becomes, with a "widened" note; the
    native calls are explained as they are (timeit's result of a native
    reduction narrowed once, as the call's)."""
    @functools.wraps(f)
    def g(op, a, *args, **kw):
        dt = _dt(a)
        if not is_half(dt) or (op in NATIVE_SCAN and "out" not in kw):
            return f(op, a, *args, **kw)
        if op in NATIVE and not args and not (
                {"where", "initial", "out"} & set(kw)):
            r = f(op, a, *args, **kw)
            if isinstance(r, dict) and "result" in r and \
                    not op.startswith("arg"):  # timeit: as the call gives it
                r = dict(r, result=_narrow(r["result"], dt))
            return r
        r = f(op, _widen(a), *args, **kw)
        if isinstance(r, dict):
            r = dict(r, widened="%s -> float32 on %s first, the result "
                     "narrowed once (gpured/_half.py)" % (
                         dt.name, "the device" if isinstance(
                             a, _core.ArrayBase) else "the host"))
        return r
    return g
