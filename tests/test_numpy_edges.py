"""NumPy-exact at the edges, and a process that survives what users do
(issue 14).  Written before the fix: see FAILING TODAY below.

Bottleneck/NumPy style: tables of user mistakes and edge cases.  Every case
computes NumPy's own answer at test time (the exception type NumPy raises,
or NumPy's result, compared exactly: type, dtype, shape and bits, -0.0
included, NaN equal to NaN) -- nothing is hard-coded except where NumPy has
no such function or argument (``exclusive=``, the knobs, the by-key
functions' own checks, the fault behaviour the issue asks for).  Each case
runs with NumPy inputs ("np"), and where it applies with ``gpured.to_device``
inputs and outs ("dev": results compared after ``.get()``) and with host
inputs into a device ``out`` ("dev_out").  When gpured raises, the inputs
and ``out`` must be untouched.

Faults run in child processes (tests/_edge_procs.py) with deadlines, so a
hang or a crash fails a test instead of the run.

FAILING TODAY (main at 79c57ee, PoCL on the 2-core test host, NumPy 2.4.6;
"x N" counts parametrized cases; ids as pytest prints them):

1205 of 3698 cases fail.  Grouped by test and class of case; [np] NumPy
inputs, [dev] device inputs/outs, [dev_out] host input into a device out.

test_subclass (293 of 420, np):
  masked*-{sum,prod,min,max,mean,all,any,argmin,argmax}-*  x 133
      -> the data under the mask are reduced: sum(masked1d) 62.0 (NumPy
         12.0), argmax(masked) picks masked elements, fully masked inputs
         give numbers (NumPy: np.ma.masked); results are plain ndarrays
         where NumPy returns MaskedArray (masked_nomask-*-axis0/1 too).
  masked*-{cumsum,cumprod}-*  x 19 -> a MaskedArray whose unmasked entries
         include the masked values (cumsum(masked1d)[2] = 55, NumPy 5).
  masked*-{cummin,cummax}-*  x 26 -> a MaskedArray carrying the
         input's mask over values scanned through masked data (NumPy's
         np.minimum.accumulate: mask False; a TypeError would also pass).
  matrix*-{reductions}-axis0/axis1  x 36 -> plain 1-D ndarray (NumPy: a 2-D
         np.matrix); matrix*-argmax-axis-keepdims x 2: a plain ndarray.
  matrix*-{sum,mean,max}-keepdims  x 6 -> answers (NumPy: TypeError,
         matrix.sum() has no keepdims).
  matrix*-{cumsum,cumprod,cummin,cummax}-axisNone  x 8 -> the input values
         unscanned (the (1, N) ravel is scanned along its length-1 axis 0).
  plain_subclass-{reductions}-*  x 30 -> ndarray / NumPy scalar (NumPy keeps
         the subclass, 0-d included: np.sum(sub) is Plain(3.)).
  with_methods-*  x 33 -> the subclass's own sum/max/mean/cumsum are not
         called (NumPy returns 'WithMethods.sum' ...), other results lose
         the subclass.
test_out_of_another_dtype (94 of 164):
  {sum,prod,min,max,mean,cumsum,cumprod,cummin,cummax}-*-into-* [np, dev]  x 39
      -> computed in out's dtype, not NumPy's: sum([.5,.5], out=int64) 0
         (NumPy 1), sum(float, out=bool) True (False), mean(uint8
         [200,200], out=uint8) 200 (NumPy 72: sum into out, then divided
         in out's dtype), cumsum([.5]*4, out=int8) [0,0,0,0] (NumPy
         [0,1,1,2]), max(int16 [255,1], out=int8) -1 (NumPy 1: NumPy does
         reduce in out's dtype when the input casts to it same-kind),
         prod(f64, out=int) 0 (NumPy 6), mean-f64-dtype-f32-into-int64.
  *-dev_out (reductions)  x 31 -> TypeError: copyto() argument 1 must be a
         numpy.ndarray, not Array (host input into a device out).
  argmin/argmax-into-{int32,int8,int16,uint64,bool}-*  x 24 -> TypeError
         "Cannot cast ... int64 to int32 according to the rule 'safe'"
         (NumPy answers: argmax into int32 1, into bool True).
test_initial (47 of 100) and test_initial_grid (43 of 44; only sum-bool passes):
  max/min/sum/prod with an initial out of the result dtype's range
      (int8 -129 / 128 / 255 / np.int16(300), uint8 -1 / -1.0, uint64 -1,
      int64 2**63, np.uint64(2**64-1), 1e30, 1e40) -> wraps silently
      (max(int8, initial=-129) 127; NumPy OverflowError).
  sum/prod/min/max of ints with initial nan / inf / -inf -> garbage
      (-9223372036854775805; NumPy ValueError / OverflowError).
  initial=None -> float results nan (NumPy: no initial: max(f32) 2.0),
      bool min False (NumPy True), integer sum/prod TypeError "int()
      argument ... 'NoneType'".
  initial=1j -> accepted (NumPy TypeError); initial=[1] -> 4.0 (NumPy
      ValueError); initial=np.array([1, 2]) [dev] -> AttributeError (NumPy
      ValueError); sum(int8, dtype=uint8, initial=300) -> 47 (NumPy
      OverflowError); min([0., 1.], initial=-0.0) -> -0.0 (NumPy 0.0).
test_axis_argument (146 of 936):
  {13 ops}-axis={True,False,(True,),[0],[0,1],np.array([0])} -> taken as
      axes 1 / 0 / lists (NumPy TypeError; argmin/argmax/scans take
      True/False as 1/0).
  {13 ops}-axis=b'0' and {13 ops}-0d-axis=True -> AxisError (axis 48 / axis
      1 out of bounds; NumPy TypeError).
test_keepdims_argument (196 of 468):
  {sum,prod,min,max,all,any,mean}-keepdims={1.0,'a',None,np.True_,
      np.array(True),[],[1]} -> truthiness accepted (NumPy's sum/min/...
      raise TypeError: keepdims must be an integer; np.True_ included in
      NumPy 2.4; argmin/argmax accept anything, and pass).
test_exclusive_argument (110 of 170):
  {cumsum,cumprod,cummin,cummax,scan_by_key}-exclusive={'no','yes','',
      'False',None,1.0,0.0,[],[True],object()} -> bool(value) used
      ('no' runs an exclusive scan); =np.array([True,False]) -> ValueError
      (truth value ambiguous) instead of TypeError.
test_signed_zero (54 of 146):
  cumsum-[-0,1] / [-0,-0] / [-0]*1000 / 2x3 axis 0, 1 / -out / dtype-f32
      -> first element +0.0 (NumPy keeps -0.0).
  min/max-[0,-0] and [-0,0] -> the other zero than NumPy's (NumPy 2.4:
      min([0.,-0.]) -0.0, min([-0.,0.]) 0.0, max likewise).
  cummin-[0,-0] -> [0, 0] (NumPy [0, -0]); cummax-[-0,0] -> [-0, -0]
      (NumPy [-0, 0]); sum-[-0]-initial-negzero -> 0.0 (NumPy -0.0).
test_byteswapped_with_initial (184 of 224, np):
  {min,max}-{int16..uint64,float32,float64}-*initial* x 176 -> TypeError
      "The `dtype` and `signature` arguments to ufuncs only select the
      general DType ..." (the initial is applied with the byte-swapped
      dtype); argmax-*-out-int32 x 8 -> TypeError 'safe' cast.
test_out_argument (4 of 315):
  sum/prod-out-byteswapped -> the same dtype/signature TypeError;
  argmin/argmax-out-byteswapped ('>i8') -> TypeError 'safe' cast.
test_keys_mistakes (1 of 23): sum_by_key-num_keys=True -> ValueError
      (keys out of range for num_keys 1); np.bincount(minlength=True):
      TypeError.
test_knob_mistakes (24 of 100): {sum,argmax,cumsum}-{wg_size,groups,items,
      ilp,vw}=2**31 / 2**40 / 2**63 and {sum,reduce,scan}_by_key-wg_size=
      2**40 -> OverflowError ("signed integer is greater than maximum",
      "Python int too large to convert to C long"), not a ValueError
      naming the knob.
test_knob_sweep_terminates[scan] -> 13 knob settings never answer (20 s
      each, more behind them): PoCL/LLVM compiles for minutes (gdb:
      llvm::LoopAccessInfo::analyzeLoop under pocl_driver_build_poclbinary)
      the kernels of cumsum(float32 (1000,)) with variant auto /
      decoupled_lookback and wg_size 2 (8192 items per work-item in
      registers), with items=65536 (every variant), wg_size 4096 groups=1,
      and on (6, 300) rows auto/decoupled_lookback wg_size 2 items=1,
      wg_size 64 groups=65535.  [reduce] and [bykey] pass.
test_many_parts_terminate -> sum / argmax (float32 2**24+1, naive,
      wg_size=1) and max (int8 (2, 2**24+1) axis 1, divergence_free,
      wg_size=1) never return (reduce.c: batch = 2**24 / parts = 0); the
      cumsum case passes.
test_size_errors -> empty((2**33, 2**31)) and empty((2**32, 2**32)) uint8
      return an Array over 2**64 bytes (byte count wraps); empty((2**62,),
      f8), ((2**62, 2), i2), zeros((2**33, 2**31), f4) -> OverflowError
      (NumPy ValueError); empty(2**62 u1), zeros(2**40 f8), empty((2**31,
      2**31) u1), sum_by_key(num_keys=2**40) (3 variants) -> OpenCLError
      CL_INVALID_BUFFER_SIZE (not MemoryError); sum_by_key(num_keys=2**62)
      -> the process aborts ("corrupted size vs. prev_size": heap overrun).
test_fork[used, unused, array] -> the forked child's first gpured call
      hangs (no answer within 12 s, the child never exits); the parent
      keeps working.
test_sigint_interrupts_long_call -> KeyboardInterrupt only when the call
      ends: 9.0 s after SIGINT (cumsum of 2**27 float32, variant naive,
      chosen to take ~8 s here); nothing checked after it today.
test_bad_gpured_device_env[no-such-device, 99:99] -> import gpured raises
      ValueError "no OpenCL device matches ..." (no warning, no fallback).
"""

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import gpured
from conftest import HAS_FP64

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
PROCS = os.path.join(HERE, "_edge_procs.py")

F64 = [np.float64] if HAS_FP64 else []
FLOATS = [np.float32] + F64
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
DTYPES = [np.bool_] + INTS + FLOATS

REDUCTIONS = ["sum", "prod", "min", "max", "all", "any", "mean", "argmin", "argmax"]
SCANS = ["cumsum", "cumprod", "cummin", "cummax"]
OPS = REDUCTIONS + SCANS
WITH_DTYPE = ["sum", "prod", "mean"] + SCANS
WITH_INITIAL = ["sum", "prod", "min", "max"]


# ==========================================================================
# NumPy's answer, gpured's answer, and the comparison
# ==========================================================================

def _np_cum_extreme(ufunc, a, axis=None, dtype=None, out=None):
    """gpured.cummin / cummax as NumPy writes them: ufunc.accumulate, of the
    flattened array for axis=None; axis, dtype, out and 0-d inputs as
    np.cumsum takes them (a tuple, bool or float axis is a TypeError,
    dtype='>f8' is float64, out=(array,) a TypeError, a 0-d array is
    scanned as one element)."""
    probe_out = out.copy() if isinstance(out, np.ndarray) else out
    np.cumsum(np.zeros(np.shape(a), np.asarray(a).dtype), axis=axis, dtype=dtype, out=probe_out)
    if np.ndim(a) == 0:
        a = np.reshape(a, 1)
    if axis is None:
        a = a.ravel() if isinstance(a, np.ndarray) else np.ravel(a)
        axis = -1
    elif np.ndim(a) == 1:
        axis = 0
    kw = {} if dtype is None else {"dtype": _native(dtype)}
    if out is not None:
        kw["out"] = out
    return ufunc.accumulate(a, axis=axis, **kw)


def np_ref(op, a, **kw):
    if op == "cummin":
        return _np_cum_extreme(np.minimum, a, **kw)
    if op == "cummax":
        return _np_cum_extreme(np.maximum, a, **kw)
    return getattr(np, op)(a, **kw)


_PUBLIC_NP_EXC = {v for v in vars(np.exceptions).values() if isinstance(v, type)}


def public_type(exc_type):
    """The exception type a user can name: NumPy's private subclasses
    (UFuncTypeError, _UFuncNoLoopError, ...) count as their public base
    (TypeError); np.exceptions' classes (AxisError, ...) stay."""
    for c in exc_type.__mro__:
        if c.__module__ == "builtins" or c in _PUBLIC_NP_EXC:
            return c
    return exc_type


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args, **kw)


def dev_ok(x):
    """Whether x is a plain ndarray of a dtype gpured keeps on a device."""
    if type(x) is not np.ndarray:
        return False
    dt = x.dtype
    return dt.kind in "biu" or (dt.kind == "f" and (dt.itemsize == 4
                                                     or (dt.itemsize == 8 and HAS_FP64)))


def _native(dt):
    dt = np.dtype(dt)
    return dt.newbyteorder("=") if dt.byteorder not in ("=", "|") else dt


def bits_equal(got, exp):
    """Same values bit for bit (-0.0 differs from 0.0), NaN equal to NaN."""
    g = np.asarray(got)
    e = np.asarray(exp)
    if g.shape != e.shape:
        return False
    g = g.astype(_native(g.dtype))
    e = e.astype(_native(e.dtype))
    if e.dtype.kind == "f" and g.dtype == e.dtype:
        gn, en = np.isnan(g), np.isnan(e)
        if not np.array_equal(gn, en):
            return False
        u = np.dtype("u%d" % e.dtype.itemsize)
        return bool(np.array_equal(np.where(gn, 0, g).view(u), np.where(en, 0, e).view(u)))
    return bool(np.array_equal(g, e))


def _short(x):
    if isinstance(x, gpured.Array):
        return "gpured.Array(%r, dtype=%s)" % (x.get().tolist() if not x.released else "<released>",
                                               x.dtype)
    r = repr(x)
    return r if len(r) < 200 else r[:200] + "..."


def assert_same(got, exp, what, device=False):
    """got (gpured's) is exp (NumPy's): type, dtype, shape, bits, masks."""
    if device:
        assert isinstance(got, gpured.Array), \
            f"{what}: got {type(got).__name__}, expected a gpured.Array"
        e = np.asarray(exp)
        assert got.shape == e.shape, f"{what}: shape {got.shape} != numpy's {e.shape}"
        assert _native(got.dtype) == _native(e.dtype), \
            f"{what}: dtype {got.dtype} != numpy's {e.dtype}"
        g = got.get()
        assert bits_equal(g, e), f"{what}: got {g!r}, numpy {e!r}"
        return
    assert type(got) is type(exp), \
        f"{what}: got {type(got).__name__} {_short(got)}, numpy {type(exp).__name__} {_short(exp)}"
    if isinstance(exp, str):
        assert got == exp, f"{what}: got {got!r}, numpy {exp!r}"
        return
    assert np.shape(got) == np.shape(exp), \
        f"{what}: shape {np.shape(got)} != numpy's {np.shape(exp)}"
    assert np.asarray(got).dtype == np.asarray(exp).dtype, \
        f"{what}: dtype {np.asarray(got).dtype} != numpy's {np.asarray(exp).dtype}"
    if isinstance(exp, np.ma.MaskedArray):
        gm, em = np.ma.getmaskarray(got), np.ma.getmaskarray(exp)
        assert np.array_equal(gm, em), f"{what}: mask {gm!r} != numpy's {em!r}"
        gd, ed = np.ma.getdata(got), np.ma.getdata(exp)
        assert bits_equal(np.where(em, 0, gd), np.where(em, 0, ed)), \
            f"{what}: got {got!r}, numpy {exp!r}"
        return
    assert bits_equal(got, exp), f"{what}: got {_short(got)}, numpy {_short(exp)}"


def snap(x):
    """A copy of x's state (values, mask) to compare after a call."""
    if isinstance(x, gpured.Array):
        return ("dev", x.get())
    if isinstance(x, np.ma.MaskedArray):
        return ("ma", np.array(np.ma.getdata(x), copy=True), np.ma.getmaskarray(x).copy())
    if isinstance(x, np.ndarray):
        return ("np", np.array(x, copy=True))
    return None


def same_snap(x, s):
    if s is None:
        return True
    now = snap(x)
    return all(bits_equal(a, b) if isinstance(a, np.ndarray) else a == b
               for a, b in zip(now, s))


def _convert(a, kw, mode):
    """(input, kwargs) for a mode, or None where the mode does not apply."""
    out = kw.get("out")
    if mode == "np":
        return a, kw
    if mode == "dev":
        if not dev_ok(a):
            return None
        da = gpured.to_device(a)
        kw = dict(kw)
        if isinstance(out, np.ndarray):
            if out is a:
                kw["out"] = da
            elif dev_ok(out) and out.flags.writeable and out.base is None:
                kw["out"] = gpured.to_device(out)
            else:
                return None
        return da, kw
    if mode == "dev_out":
        if not (isinstance(out, np.ndarray) and dev_ok(out) and out is not a
                and out.flags.writeable and out.base is None):
            return None
        kw = dict(kw)
        kw["out"] = gpured.to_device(out)
        return a, kw
    raise AssertionError(mode)


def modes_for(make, modes=("np", "dev")):
    a, kw = make()
    return [m for m in modes if _convert(a, kw, m) is not None]


def _desc(op, a, kw):
    def d(x):
        if isinstance(x, gpured.Array):
            return f"<device {x.dtype} {x.shape}>"
        if isinstance(x, np.ndarray):
            return f"<{type(x).__name__} {x.dtype.str} {x.shape}>"
        return repr(x)
    return f"gpured.{op}({d(a)}" + "".join(f", {k}={d(v)}" for k, v in kw.items()) + ")"


def run_case(op, make, mode, alt=(), ref=None):
    """NumPy's answer for make()'s arguments, then gpured's in ``mode``.

    NumPy raises: gpured raises an instance of the same type, and leaves the
    input and ``out`` untouched.  NumPy answers: gpured answers the same
    (type, dtype, shape, bits); with ``out``, gpured returns that very
    object, holding NumPy's values.  ``alt``: exception types gpured may
    raise instead of answering (a TypeError for subclasses it refuses).
    ``ref``: stands in for NumPy where NumPy cannot be asked (it crashes).
    """
    a, kw = make()
    try:
        exp = _quiet(ref or (lambda x, **k: np_ref(op, x, **k)), a, **kw)
        exp_exc = None
    except Exception as e:  # noqa: BLE001 - NumPy's answer is an exception
        exp, exp_exc = None, e
    np_out = kw.get("out")
    a, kw = make()
    conv = _convert(a, kw, mode)
    assert conv is not None, "test premise: mode does not apply"
    ga, gkw = conv
    what = _desc(op, ga, gkw) + f" [{mode}]"
    before_a, before_out = snap(ga), snap(gkw.get("out"))
    fn = getattr(gpured, op)
    try:
        got = _quiet(fn, ga, **gkw)
    except Exception as e:  # noqa: BLE001
        ok_types = ((public_type(type(exp_exc)),) if exp_exc is not None else ()) + tuple(alt)
        if not isinstance(e, ok_types):
            numpy_says = (f"NumPy raises {type(exp_exc).__name__}: {exp_exc}" if exp_exc
                          is not None else f"NumPy answers {_short(exp)}")
            raise AssertionError(f"{what}: raised {type(e).__name__}: {e}; {numpy_says}") from e
        assert same_snap(ga, before_a), f"{what}: raised and modified its input"
        assert same_snap(gkw.get("out"), before_out), f"{what}: raised and modified out"
        return
    if exp_exc is not None:
        raise AssertionError(f"{what}: returned {_short(got)}; NumPy raises "
                             f"{type(exp_exc).__name__}: {exp_exc}")
    gout = gkw.get("out")
    device = isinstance(got, gpured.Array) or isinstance(ga, gpured.Array) \
        or isinstance(gout, gpured.Array)
    if np_out is not None and exp is np_out and gout is not None:
        assert got is gout, f"{what}: did not return out (got {_short(got)})"
        assert_same(gout, np_out, what + " (out)", device=isinstance(gout, gpured.Array))
    else:
        assert_same(got, exp, what, device=device)
    if not (isinstance(ga, np.ndarray) and isinstance(gout, np.ndarray)
            and np.shares_memory(ga, gout)) and gout is not ga:
        assert same_snap(ga, before_a), f"{what}: modified its input"


def _cases(table, modes=("np", "dev")):
    """pytest params (case, mode) of a table of (id, op, make[, alt])."""
    params = []
    for case in table:
        for mode in modes_for(case[2], modes):
            params.append(pytest.param(case, mode, id=f"{case[0]}-{mode}"))
    return params


def _t(*values, dtype=np.float64):
    return np.array(values, dtype)


# ==========================================================================
# 1. NumPy subclasses: masked arrays, np.matrix, other ndarray subclasses
# ==========================================================================

class Plain(np.ndarray):
    """A trivial subclass: NumPy keeps its type through reductions."""


class WithMethods(np.ndarray):
    """A subclass with its own sum/cumsum/max/mean: np.sum etc. call them."""

    def sum(self, *args, **kw):
        return "WithMethods.sum"

    def cumsum(self, *args, **kw):
        return "WithMethods.cumsum"

    def max(self, *args, **kw):
        return "WithMethods.max"

    def mean(self, *args, **kw):
        return "WithMethods.mean"


def _matrix(data, dtype=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.matrix(data, dtype=dtype)


SUB_INPUTS = {
    "masked1d": (lambda: np.ma.masked_array([2.0, 50.0, 3.0, 7.0], mask=[0, 1, 0, 0]),
                 (TypeError,)),
    "masked2d": (lambda: np.ma.masked_array(np.arange(12.0).reshape(3, 4) - 4,
                                            mask=[[0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 0, 1]]),
                 (TypeError,)),
    "masked_int32": (lambda: np.ma.masked_array(np.array([[5, -100, 2], [3, 4, 100]], np.int32),
                                                mask=[[0, 1, 0], [0, 0, 1]]), (TypeError,)),
    "masked_bool": (lambda: np.ma.masked_array([True, False, True], mask=[0, 1, 0]),
                    (TypeError,)),
    "masked_all": (lambda: np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=True),
                   (TypeError,)),
    "masked_nomask": (lambda: np.ma.masked_array([[1.0, -2.0], [3.0, 4.0]]), (TypeError,)),
    "matrix": (lambda: _matrix([[1.0, 2.0, -3.0], [4.0, -5.0, 6.0]]), ()),
    "matrix_int": (lambda: _matrix([[1, 7], [3, 2]], dtype=np.int32), ()),
    "plain_subclass": (lambda: (np.arange(6.0).reshape(2, 3) - 2).view(Plain), ()),
    "with_methods": (lambda: np.arange(6.0).reshape(2, 3).view(WithMethods), (TypeError,)),
}


def _sub_table():
    table = []
    for name, (mk, alt) in SUB_INPUTS.items():
        nd = mk().ndim
        for op in OPS:
            axes = [None] + list(range(nd))
            for ax in axes:
                kw = {} if ax is None else {"axis": ax}
                table.append((f"{name}-{op}-axis{ax}", op,
                              lambda mk=mk, kw=kw: (mk(), dict(kw)), alt))
        # NumPy's own keyword handling for the subclass
        for op, kw in [("sum", {"keepdims": True}), ("mean", {"axis": 0, "keepdims": True}),
                       ("max", {"axis": -1, "keepdims": True}), ("sum", {"dtype": np.float32}),
                       ("argmax", {"axis": 0, "keepdims": True})]:
            table.append((f"{name}-{op}-{'-'.join(kw)}", op,
                          lambda mk=mk, kw=kw: (mk(), dict(kw)), alt))
    # masked input, plain ndarray out: NumPy's masked answer in out
    table.append(("masked1d-sum-out", "sum",
                  lambda: (SUB_INPUTS["masked1d"][0](), {"out": np.zeros(())}), (TypeError,)))
    table.append(("masked2d-max-axis0-out", "max",
                  lambda: (SUB_INPUTS["masked2d"][0](), {"axis": 0, "out": np.zeros(4)}),
                  (TypeError,)))
    table.append(("masked1d-cumsum-out", "cumsum",
                  lambda: (SUB_INPUTS["masked1d"][0](), {"out": np.zeros(4)}), (TypeError,)))
    return table


SUB_TABLE = _sub_table()


@pytest.mark.parametrize("case,mode", _cases(SUB_TABLE, ("np",)))
def test_subclass(case, mode):
    """Masked arrays give NumPy's masked answer or a TypeError (never the sum
    of the data under the mask); np.matrix and other subclasses keep their
    type as NumPy's functions do (they defer to the subclass's methods)."""
    cid, op, make, alt = case
    run_case(op, make, mode, alt=alt)


# ==========================================================================
# 2. out= of a dtype other than the result's
# ==========================================================================

OUT_TABLE = [
    # NumPy computes in the result dtype (from the input and out), then casts
    ("sum-f64-into-int64", "sum", lambda: (_t(0.5, 0.5), {"out": np.zeros((), np.int64)})),
    ("sum-f64-axis0-into-int32", "sum",
     lambda: (np.full((3, 2), 0.5), {"axis": 0, "out": np.zeros(2, np.int32)})),
    ("sum-f64-axis1-keepdims-into-uint8", "sum",
     lambda: (np.full((2, 3), 0.75), {"axis": 1, "keepdims": True,
                                      "out": np.zeros((2, 1), np.uint8)})),
    ("sum-int64-into-f64", "sum",
     lambda: (np.array([2**62, 2**62], np.int64), {"out": np.zeros((), np.float64)})),
    ("sum-int64-into-uint64", "sum",
     lambda: (np.array([2**62, 2**62], np.int64), {"out": np.zeros((), np.uint64)})),
    ("sum-f32-into-f64", "sum",
     lambda: (np.array([16777216, 1, 1], np.float32), {"out": np.zeros((), np.float64)})),
    ("sum-f64-into-f32", "sum",
     lambda: (_t(16777216.0, 1.0, 1.0), {"out": np.zeros((), np.float32)})),
    ("sum-f64-into-bool", "sum", lambda: (_t(0.5, -0.5), {"out": np.zeros((), bool)})),
    ("sum-int32-into-bool", "sum",
     lambda: (np.array([1, -1], np.int32), {"out": np.ones((), bool)})),
    ("sum-bool-into-int8", "sum",
     lambda: (np.array([True, True, False]), {"out": np.zeros((), np.int8)})),
    ("sum-uint8-dtype-uint8-into-int64", "sum",
     lambda: (np.array([200, 100], np.uint8), {"dtype": np.uint8,
                                               "out": np.zeros((), np.int64)})),
    ("sum-f64-dtype-f32-into-int64", "sum",
     lambda: (_t(0.5, 0.5, 2.0), {"dtype": np.float32, "out": np.zeros((), np.int64)})),
    ("sum-int32-into-f16", "sum",
     lambda: (np.array([1, 2], np.int32), {"out": np.zeros((), np.float16)})),
    ("prod-f64-into-int64", "prod", lambda: (_t(0.5, 4.0, 3.0), {"out": np.zeros((), np.int64)})),
    ("prod-int8-into-int16", "prod",
     lambda: (np.array([16, 16], np.int8), {"out": np.zeros((), np.int16)})),
    ("prod-f64-axis0-into-int32", "prod",
     lambda: (np.full((2, 3), 1.5), {"axis": 0, "out": np.zeros(3, np.int32)})),
    ("min-f64-into-int32", "min", lambda: (_t(1.5, 2.5), {"out": np.zeros((), np.int32)})),
    ("max-int16-into-int8", "max",
     lambda: (np.array([255, 1], np.int16), {"out": np.zeros((), np.int8)})),
    ("max-f32-into-bool", "max",
     lambda: (np.array([0.5, -0.5], np.float32), {"out": np.zeros((), bool)})),
    ("max-f64-axis1-into-int64", "max",
     lambda: (np.array([[0.5, 1.5], [2.5, -0.5]]), {"axis": 1, "out": np.zeros(2, np.int64)})),
    ("mean-uint8-into-uint8", "mean",
     lambda: (np.array([200, 200], np.uint8), {"out": np.zeros((), np.uint8)})),
    ("mean-uint8-3-into-uint8", "mean",
     lambda: (np.array([200, 200, 100], np.uint8), {"out": np.zeros((), np.uint8)})),
    ("mean-uint8-axis0-into-uint8", "mean",
     lambda: (np.array([[200, 250, 3], [200, 10, 4]], np.uint8),
              {"axis": 0, "out": np.zeros(3, np.uint8)})),
    ("mean-int16-axis1-into-int8", "mean",
     lambda: (np.array([[300, 301, 2], [-7, 5, 1]], np.int16),
              {"axis": 1, "out": np.zeros(2, np.int8)})),
    ("mean-f64-into-int64", "mean", lambda: (_t(0.5, 1.0), {"out": np.zeros((), np.int64)})),
    ("mean-int32-into-f32", "mean",
     lambda: (np.array([1, 2], np.int32), {"out": np.zeros((), np.float32)})),
    ("mean-f32-into-f64", "mean",
     lambda: (np.array([16777216, 1, 1, 0], np.float32), {"out": np.zeros((), np.float64)})),
    ("mean-f64-dtype-f32-into-int64", "mean",
     lambda: (_t(1.5, 2.5, 0.5, 0.5), {"dtype": np.float32, "out": np.zeros((), np.int64)})),
    ("mean-f64-into-bool", "mean", lambda: (_t(0.5, -0.5), {"out": np.ones((), bool)})),
    ("all-f64-into-f64", "all", lambda: (_t(0.5, 0.5), {"out": np.zeros((), np.float64)})),
    ("any-int32-into-int8", "any",
     lambda: (np.array([0, 2], np.int32), {"out": np.zeros((), np.int8)})),
    ("all-f64-axis0-into-int32", "all",
     lambda: (np.array([[0.5, 0.0], [1.0, 2.0]]), {"axis": 0, "out": np.full(2, 7, np.int32)})),
    ("argmax-into-int32", "argmax",
     lambda: (_t(1.0, 3.0, 2.0), {"out": np.zeros((), np.int32)})),
    ("argmin-into-int32", "argmin",
     lambda: (_t(3.0, 1.0, 2.0), {"out": np.zeros((), np.int32)})),
    ("argmax-into-bool", "argmax", lambda: (_t(1.0, 3.0, 2.0), {"out": np.zeros((), bool)})),
    ("argmin-into-bool-zero", "argmin", lambda: (_t(0.0, 3.0, 2.0), {"out": np.ones((), bool)})),
    ("argmax-into-int8", "argmax",
     lambda: (np.arange(300.0), {"out": np.zeros((), np.int8)})),
    ("argmax-into-uint64", "argmax",
     lambda: (_t(1.0, 3.0, 2.0), {"out": np.zeros((), np.uint64)})),
    ("argmax-into-f64", "argmax",
     lambda: (_t(1.0, 3.0, 2.0), {"out": np.zeros((), np.float64)})),
    ("argmax-axis0-into-int32", "argmax",
     lambda: (np.array([[1.0, 5.0], [3.0, 2.0]]), {"axis": 0, "out": np.zeros(2, np.int32)})),
    ("argmin-axis1-keepdims-into-int16", "argmin",
     lambda: (np.array([[1.0, 5.0], [3.0, 2.0]]), {"axis": 1, "keepdims": True,
                                                  "out": np.zeros((2, 1), np.int16)})),
    ("argmax-axis1-into-bool", "argmax",
     lambda: (np.array([[1.0, 5.0], [3.0, 2.0]]), {"axis": 1, "out": np.zeros(2, bool)})),
    ("cumsum-f64-into-int8", "cumsum",
     lambda: (np.full(4, 0.5), {"out": np.zeros(4, np.int8)})),
    ("cumsum-int16-into-int8", "cumsum",
     lambda: (np.array([100, 100, 100], np.int16), {"out": np.zeros(3, np.int8)})),
    ("cumsum-f64-into-bool", "cumsum",
     lambda: (_t(0.5, -0.5, 0.0), {"out": np.zeros(3, bool)})),
    ("cumsum-int64-into-f64", "cumsum",
     lambda: (np.array([2**62, 2**62], np.int64), {"out": np.zeros(2, np.float64)})),
    ("cumsum-f32-into-f64", "cumsum",
     lambda: (np.array([16777216, 1, 1], np.float32), {"out": np.zeros(3, np.float64)})),
    ("cumsum-dtype-f32-into-int32", "cumsum",
     lambda: (_t(0.5, 0.5, 2.0), {"dtype": np.float32, "out": np.zeros(3, np.int32)})),
    ("cumsum-f64-axis0-into-int16", "cumsum",
     lambda: (np.full((3, 2), 0.5), {"axis": 0, "out": np.zeros((3, 2), np.int16)})),
    ("cumsum-2d-axisNone-into-uint8", "cumsum",
     lambda: (np.full((2, 3), 0.5), {"out": np.zeros(6, np.uint8)})),
    ("cumsum-int32-into-f16", "cumsum",
     lambda: (np.array([1, 2], np.int32), {"out": np.zeros(2, np.float16)})),
    ("cumprod-f64-into-int32", "cumprod",
     lambda: (_t(0.5, 4.0, 3.0), {"out": np.zeros(3, np.int32)})),
    ("cumprod-int8-into-int16", "cumprod",
     lambda: (np.array([16, 16, 2], np.int8), {"out": np.zeros(3, np.int16)})),
    ("cummin-f64-into-int64", "cummin",
     lambda: (_t(1.5, 0.5, 2.5), {"out": np.zeros(3, np.int64)})),
    ("cummax-int16-into-int8", "cummax",
     lambda: (np.array([255, 1, 300], np.int16), {"out": np.zeros(3, np.int8)})),
    ("cummin-f32-into-bool", "cummin",
     lambda: (np.array([0.5, -0.5, 0.0], np.float32), {"out": np.ones(3, bool)})),
]
# dtypes gpured does not keep (float16 outs): NumPy's answer or a TypeError
OUT_ALT = {"sum-int32-into-f16": (TypeError,), "cumsum-int32-into-f16": (TypeError,)}


@pytest.mark.parametrize("case,mode", _cases(OUT_TABLE, ("np", "dev", "dev_out")))
def test_out_of_another_dtype(case, mode):
    """out= receives the result computed in NumPy's dtype, cast as NumPy
    casts it (mean: NumPy's sum into out, then the division in out's
    dtype); argmin/argmax narrower outs as NumPy; device outs likewise."""
    cid, op, make = case
    run_case(op, make, mode, alt=OUT_ALT.get(cid, ()))


# ==========================================================================
# 3. initial=
# ==========================================================================

def _i8():
    return np.array([1, 2], np.int8)


INITIAL_TABLE = [
    ("max-int8-initial-129", "max", lambda: (_i8(), {"initial": -129})),
    ("max-int8-initial128", "max", lambda: (_i8(), {"initial": 128})),
    ("max-int8-initial-npint64-129", "max", lambda: (_i8(), {"initial": np.int64(-129)})),
    ("max-int8-initial-npint16-300", "max", lambda: (_i8(), {"initial": np.int16(300)})),
    ("min-int8-initial127", "min", lambda: (_i8(), {"initial": 127})),
    ("max-uint8-initial-1", "max", lambda: (np.array([1, 2], np.uint8), {"initial": -1})),
    ("max-uint8-initial-1.0", "max", lambda: (np.array([1, 2], np.uint8), {"initial": -1.0})),
    ("sum-int32-initial-nan", "sum", lambda: (np.array([1, 2], np.int32), {"initial": np.nan})),
    ("sum-int32-initial-inf", "sum", lambda: (np.array([1, 2], np.int32), {"initial": np.inf})),
    ("sum-int32-initial-1.5", "sum", lambda: (np.array([1, 2], np.int32), {"initial": 1.5})),
    ("sum-int32-initial-1e30", "sum", lambda: (np.array([1, 2], np.int32), {"initial": 1e30})),
    ("sum-int32-initial-npf32", "sum",
     lambda: (np.array([1, 2], np.int32), {"initial": np.float32(1.5)})),
    ("sum-int32-initial-2**63", "sum", lambda: (np.array([1, 2], np.int32), {"initial": 2**63})),
    ("sum-int32-initial-u64max", "sum",
     lambda: (np.array([1, 2], np.int32), {"initial": np.uint64(2**64 - 1)})),
    ("sum-uint64-initial-1", "sum", lambda: (np.array([1, 2], np.uint64), {"initial": -1})),
    ("prod-uint8-initial-1", "prod", lambda: (np.array([1, 2], np.uint8), {"initial": -1})),
    ("min-int64-initial-u64-2**63", "min",
     lambda: (np.array([1, 2], np.int64), {"initial": np.uint64(2**63)})),
    ("max-f32-initial-None", "max", lambda: (np.array([1, 2], np.float32), {"initial": None})),
    ("min-f32-initial-None", "min", lambda: (np.array([1, 2], np.float32), {"initial": None})),
    ("sum-f32-initial-None", "sum", lambda: (np.array([1, 2], np.float32), {"initial": None})),
    ("prod-int16-initial-None", "prod", lambda: (np.array([3, 2], np.int16), {"initial": None})),
    ("max-f32-axis0-initial-None", "max",
     lambda: (np.array([[1, 2], [3, -4]], np.float32), {"axis": 0, "initial": None})),
    ("max-f32-initial-1e300", "max", lambda: (np.array([1, 2], np.float32), {"initial": 1e300})),
    ("max-f32-initial-nan", "max", lambda: (np.array([1, 2], np.float32), {"initial": np.nan})),
    ("min-f64-initial-negzero", "min", lambda: (_t(0.0, 1.0), {"initial": -0.0})),
    ("sum-f32-initial-str", "sum", lambda: (np.array([1, 2], np.float32), {"initial": "1"})),
    ("sum-f32-initial-bad-str", "sum", lambda: (np.array([1, 2], np.float32), {"initial": "x"})),
    ("sum-f32-initial-complex", "sum", lambda: (np.array([1, 2], np.float32), {"initial": 1j})),
    ("sum-f32-initial-0d-array", "sum",
     lambda: (np.array([1, 2], np.float32), {"initial": np.array(1)})),
    ("sum-f32-initial-1d-array", "sum",
     lambda: (np.array([1, 2], np.float32), {"initial": np.array([1, 2])})),
    ("sum-f32-initial-list", "sum", lambda: (np.array([1, 2], np.float32), {"initial": [1]})),
    ("max-bool-initial2", "max", lambda: (np.array([True, False]), {"initial": 2})),
    ("sum-bool-initial-True", "sum", lambda: (np.array([True, True]), {"initial": True})),
    ("sum-int8-dtype-uint8-initial300", "sum",
     lambda: (np.array([1, 2], np.int8), {"dtype": np.uint8, "initial": 300})),
    ("sum-int8-dtype-f32-initial-nan", "sum",
     lambda: (np.array([1, 2], np.int8), {"dtype": np.float32, "initial": np.nan})),
    ("max-int8-initial-out-int16", "max",
     lambda: (_i8(), {"initial": 100, "out": np.zeros((), np.int16)})),
    ("sum-int8-initial-keepdims", "sum",
     lambda: (np.array([[1, 2], [3, 4]], np.int8), {"axis": 1, "keepdims": True,
                                                   "initial": -5})),
    # empty inputs
    ("max-empty-int8-initial5", "max", lambda: (np.zeros(0, np.int8), {"initial": 5})),
    ("max-empty-int8-initial-129", "max", lambda: (np.zeros(0, np.int8), {"initial": -129})),
    ("max-empty-0x3-axis0-initial5", "max",
     lambda: (np.zeros((0, 3), np.int8), {"axis": 0, "initial": 5})),
    ("max-empty-0x3-axis0-initial-None", "max",
     lambda: (np.zeros((0, 3), np.int8), {"axis": 0, "initial": None})),
    ("sum-empty-0x3-axis0-initial-None", "sum",
     lambda: (np.zeros((0, 3), np.int8), {"axis": 0, "initial": None})),
    ("sum-empty-f64-initial-negzero", "sum", lambda: (np.zeros(0), {"initial": -0.0})),
    ("min-empty-3x0-axis1-initial-nan", "min",
     lambda: (np.zeros((3, 0), np.float32), {"axis": 1, "initial": np.nan})),
    ("prod-empty-uint16-initial-1", "prod",
     lambda: (np.zeros(0, np.uint16), {"initial": -1})),
    ("sum-empty-int32-initial-nan", "sum",
     lambda: (np.zeros(0, np.int32), {"initial": np.nan})),
    # functions without initial
    ("mean-initial", "mean", lambda: (_t(1.0, 2.0), {"initial": 1})),
    ("all-initial", "all", lambda: (_t(1.0, 2.0), {"initial": 1})),
    ("argmax-initial", "argmax", lambda: (_t(1.0, 2.0), {"initial": 1})),
    ("cumsum-initial", "cumsum", lambda: (_t(1.0, 2.0), {"initial": 1})),
]


@pytest.mark.parametrize("case,mode", _cases(INITIAL_TABLE))
def test_initial(case, mode):
    """initial= is converted with NumPy's checks and errors."""
    cid, op, make = case
    run_case(op, make, mode)


INITIAL_VALUES = [
    0, 1, -1, 5, 127, 128, -128, -129, 255, 256, -32769, 65536, 2**31, -2**31 - 1, 2**32,
    2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64 - 1, 2**64,
    0.5, -2.5, 1e10, 1e40, -0.0, np.inf, -np.inf, np.nan, True, False, None,
    np.float32(0.5), np.float32(np.nan), np.float64(-0.0), np.int8(-1), np.uint8(200),
    np.int64(-129), np.uint64(2**64 - 1), np.uint32(2**32 - 1), np.bool_(True),
    np.int16(300), np.float64(3e38), np.float64(1e300),
]
INITIAL_INPUTS = [((2, 3), None), ((2, 3), 0), ((0, 3), 0), ((0,), None)]


def _initial_data(op, dtype, shape):
    """Small integers; for prod +-1 (unsigned and bool: 1), so that the
    product with any initial is exact in any order (NumPy multiplies the
    initial in first, gpured last)."""
    if shape != (2, 3):
        return np.zeros(shape, dtype)
    if op == "prod":
        signed = np.dtype(dtype).kind in "if"
        return np.array([[1, -1, 1], [1, 1, -1]] if signed else [[1, 1, 1], [1, 1, 1]]).astype(dtype)
    return np.array([[1, 2, 3], [3, 1, 2]]).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", WITH_INITIAL)
def test_initial_grid(op, dtype):
    """initial of every kind against every input dtype, non-empty and empty
    inputs, host and device: NumPy's answer or NumPy's exception type."""
    failures = []
    n = 0
    for shape, axis in INITIAL_INPUTS:
        for init in INITIAL_VALUES:
            kw = {"initial": init} if axis is None else {"axis": axis, "initial": init}

            def make(shape=shape, kw=kw):
                return _initial_data(op, dtype, shape), dict(kw)
            for mode in ("np", "dev"):
                n += 1
                try:
                    run_case(op, make, mode)
                except AssertionError as e:
                    failures.append(str(e).split("\n")[0])
    assert not failures, (f"{len(failures)} of {n} initial= cases differ from NumPy:\n  "
                          + "\n  ".join(failures[:25]))


# ==========================================================================
# 4. argument types: axis, keepdims, dtype, out, exclusive
# ==========================================================================

AXIS_VALUES = {
    "True": True, "False": False, "npTrue": np.True_, "1.0": 1.0, "list01": [0, 1],
    "list0": [0], "str0": "0", "arr1d": np.array([0]), "tupleTrue": (True,),
    "tuple1.0": (1.0,), "npint64": np.int64(0), "npuint8": np.uint8(1), "arr0d": np.array(1),
    "tuple-npint64": (np.int64(1),), "dup00": (0, 0), "dup1-1": (1, -1), "2": 2, "-3": -3,
    "tuple02": (0, 2), "100": 100, "-1": -1, "tuple-empty": (), "None": None,
    "tuple01": (0, 1), "npfloat": np.float64(0.0), "bytes": b"0",
}


def _axis_table():
    table = []
    for op in OPS:
        for name, ax in AXIS_VALUES.items():
            table.append((f"{op}-axis={name}", op,
                          lambda ax=ax: (np.array([[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]]),
                                         {"axis": ax})))
        # 0-d and 1-d arrays
        for name, ax in [("0", 0), ("-1", -1), ("1", 1), ("tuple0", (0,)), ("True", True),
                         ("tuple-empty", ())]:
            table.append((f"{op}-0d-axis={name}", op,
                          lambda ax=ax: (np.array(2.5), {"axis": ax})))
        for name, ax in [("-2", -2), ("dup00", (0, 0)), ("tuple0", (0,)), ("1", 1)]:
            table.append((f"{op}-1d-axis={name}", op,
                          lambda ax=ax: (np.array([3, 1, 2], np.int32), {"axis": ax})))
    return table


AXIS_TABLE = _axis_table()


@pytest.mark.parametrize("case,mode", _cases(AXIS_TABLE))
def test_axis_argument(case, mode):
    """Booleans, floats, lists, strings and arrays of size > 1 as axis are
    TypeErrors; NumPy integers and 0-d integer arrays are axes; duplicate
    axes ValueError; out of range NumPy's AxisError (ValueError and
    IndexError both)."""
    cid, op, make = case
    run_case(op, make, mode)


KEEPDIMS_VALUES = {"1": 1, "0": 0, "2": 2, "-1": -1, "1.0": 1.0, "str": "a", "None": None,
                   "npTrue": np.True_, "npint8": np.int8(1), "arr0d-bool": np.array(True),
                   "list-empty": [], "list1": [1], "arr0d-int": np.array(1)}


def _keepdims_table():
    table = []
    for op in REDUCTIONS:
        for name, kd in KEEPDIMS_VALUES.items():
            for ax in (None, 1):
                table.append((f"{op}-keepdims={name}-axis{ax}", op,
                              lambda kd=kd, ax=ax: (np.array([[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]]),
                                                    {"axis": ax, "keepdims": kd})))
    return table


KEEPDIMS_TABLE = _keepdims_table()


@pytest.mark.parametrize("case,mode", _cases(KEEPDIMS_TABLE))
def test_keepdims_argument(case, mode):
    """keepdims as NumPy treats it, function by function (sum/min take
    integers only, argmin/argmax any truth value)."""
    cid, op, make = case
    run_case(op, make, mode)


DTYPE_VALUES = {
    "str-float32": "float32", "f4": "f4", "i8": "i8", "<f8": "<f8", ">f8": ">f8", "u1": "u1",
    "str-int": "int", "str-float": "float", "py-float": float, "py-int": int, "py-bool": bool,
    "str-bool": "bool", "np.int8": np.int8, "dtype-uint16": np.dtype("uint16"), "u8": "u8",
    "no-such": "no-such-dtype", "int-3": 3, "structured": [("a", "i4")], "S1": "S1",
    "M8": "M8[s]", "empty-str": "", "None": None, "py-complex": complex,
    "f2": "float16", "c8": "complex64", "object": object,
}
# dtypes NumPy computes in and gpured documents as unsupported: NumPy's
# answer or gpured's TypeError naming the dtype
DTYPE_ALT = {"f2", "c8", "object", "py-complex"}
DTYPE_ALT |= set() if HAS_FP64 else {"<f8", ">f8", "str-float", "py-float"}


def _dtype_table():
    table = []
    for op in WITH_DTYPE + ["min", "argmax", "all"]:
        for name, dt in DTYPE_VALUES.items():
            table.append((f"{op}-dtype={name}", op,
                          lambda dt=dt: (np.array([[1, -2, 3], [4, 0, 6]], np.int16),
                                         {"axis": 0, "dtype": dt}),
                          (TypeError,) if name in DTYPE_ALT else ()))
        for name in ("py-float", "np.int8", "str-bool"):
            dt = DTYPE_VALUES[name]
            table.append((f"{op}-f32-dtype={name}", op,
                          lambda dt=dt: (np.array([0.5, 1.5, -2.5], np.float32), {"dtype": dt}),
                          (TypeError,) if name in DTYPE_ALT else ()))
    return table


DTYPE_TABLE = _dtype_table()


@pytest.mark.parametrize("case,mode", _cases(DTYPE_TABLE))
def test_dtype_argument(case, mode):
    """dtype= as strings, Python types, NumPy types; invalid dtypes raise
    NumPy's TypeError; functions without dtype= refuse it as NumPy does."""
    cid, op, make, alt = case
    run_case(op, make, mode, alt=alt)


def _ro(x):
    x.flags.writeable = False
    return x


def _m23():
    return np.array([[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]])


def _scan_0d_out_ref(a, **kw):
    raise ValueError("provided out is the wrong size for the accumulation.")


OUTARG_TABLE = []
for _op in OPS:
    _rshape = (6,) if _op in SCANS else (3,)
    _rdt = np.intp if _op in ("argmin", "argmax") else (bool if _op in ("all", "any")
                                                         else np.float64)
    _ax = {} if _op in SCANS else {"axis": 0}
    OUTARG_TABLE += [
        (f"{_op}-out=list", _op, lambda _ax=_ax, s=_rshape: (_m23(), {**_ax, "out": [0.0] * s[0]})),
        (f"{_op}-out=int", _op, lambda _ax=_ax: (_m23(), {**_ax, "out": 0})),
        (f"{_op}-out=npscalar", _op, lambda _ax=_ax: (_m23(), {**_ax, "out": np.float64(0)})),
        (f"{_op}-out=tuple1", _op,
         lambda _ax=_ax, s=_rshape, d=_rdt: (_m23(), {**_ax, "out": (np.zeros(s, d),)})),
        (f"{_op}-out=readonly", _op,
         lambda _ax=_ax, s=_rshape, d=_rdt: (_m23(), {**_ax, "out": _ro(np.zeros(s, d))})),
        (f"{_op}-out-wrong-shape-short", _op,
         lambda _ax=_ax, s=_rshape, d=_rdt: (_m23(), {**_ax, "out": np.zeros(s[0] - 1, d)})),
        (f"{_op}-out-wrong-shape-2d", _op,
         lambda _ax=_ax, s=_rshape, d=_rdt: (_m23(), {**_ax, "out": np.zeros((1,) + s, d)})),
        (f"{_op}-out-wrong-shape-0d", _op,
         lambda _ax=_ax, d=_rdt: (_m23(), {**_ax, "out": np.zeros((), d)})),
        (f"{_op}-out-strided-view", _op,
         lambda _ax=_ax, s=_rshape, d=_rdt: (_m23(), {**_ax, "out": np.zeros(2 * s[0], d)[::2]})),
        (f"{_op}-out-byteswapped", _op,
         lambda _ax=_ax, s=_rshape, d=_rdt: (_m23(), {**_ax, "out": np.zeros(s, np.dtype(d).newbyteorder())})),
        (f"{_op}-out=None", _op, lambda _ax=_ax: (_m23(), {**_ax, "out": None})),
    ]
    if _op in SCANS:
        # np.cumsum / ufunc.accumulate with a 0-d out crash NumPy 2.4 (SIGSEGV):
        # no live answer; every other wrong shape is NumPy's ValueError
        OUTARG_TABLE = [c + (_scan_0d_out_ref,) if c[0] == f"{_op}-out-wrong-shape-0d" else c
                        for c in OUTARG_TABLE]
        OUTARG_TABLE += [
            (f"{_op}-out-2d-for-flat", _op, lambda: (_m23(), {"out": np.zeros((2, 3))})),
            (f"{_op}-axis1-out-is-input", _op, lambda: ((lambda a: (a, {"axis": 1, "out": a}))(_m23()))),
        ]
    else:
        OUTARG_TABLE += [
            (f"{_op}-keepdims-out-unkept-shape", _op,
             lambda d=_rdt: (_m23(), {"axis": 0, "keepdims": True, "out": np.zeros(3, d)})),
            (f"{_op}-axisNone-out-shape1", _op,
             lambda d=_rdt: (_m23(), {"out": np.zeros(1, d)})),
        ]
    if _op in ("sum", "max", "prod"):
        OUTARG_TABLE.append((f"{_op}-axis0-out-overlaps-input", _op,
                             lambda: ((lambda a: (a, {"axis": 0, "out": a[1]}))(_m23()))))


@pytest.mark.parametrize("case,mode", _cases(OUTARG_TABLE))
def test_out_argument(case, mode):
    """out not an array (TypeError), read-only (ValueError), of the wrong
    shape (ValueError); strided, byte-swapped, aliased outs answer."""
    cid, op, make = case[:3]
    run_case(op, make, mode, ref=case[3] if len(case) > 3 else None)


# ---- exclusive= (no NumPy argument: a bool, as NumPy's strict flags) ------

EXCL_BAD = {"str-no": "no", "str-yes": "yes", "str-empty": "", "str-False": "False",
            "None": None, "float1": 1.0, "float0": 0.0, "list-empty": [], "list-True": [True],
            "arr2": np.array([True, False]), "object": object()}
EXCL_GOOD = {"True": True, "False": False, "npTrue": np.True_, "npFalse": np.False_}
EXCL_EITHER = {"int1": 1, "int0": 0}  # a TypeError, or the flag's truth value

_EX_A = np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]])


def _excl_ref(op, a, axis, flag):
    import _edge_procs
    return _edge_procs._ref_scan(op, a, axis, flag)


def _scan_by_key_ref(keys, values, exclusive):
    out = np.zeros(values.shape, np.add.reduce(values[:1]).dtype)
    starts = list(np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])) + [keys.size]
    for s, e in zip(starts[:-1], starts[1:]):
        c = np.cumsum(values[s:e])
        out[s:e] = np.r_[0, c[:-1]] if exclusive else c
    return out


def _excl_params():
    ps = []
    for op in SCANS + ["scan_by_key"]:
        for kind, table in (("bad", EXCL_BAD), ("good", EXCL_GOOD), ("either", EXCL_EITHER)):
            for name in table:
                for mode in ("np", "dev"):
                    ps.append(pytest.param(op, kind, name, mode,
                                           id=f"{op}-exclusive={name}-{mode}"))
    return ps


@pytest.mark.parametrize("op,kind,name,mode", _excl_params())
def test_exclusive_argument(op, kind, name, mode):
    """exclusive must be a bool (Python or NumPy): 'no', None, floats and
    sequences are TypeErrors (they ran an exclusive scan: bool('no'))."""
    value = {**EXCL_BAD, **EXCL_GOOD, **EXCL_EITHER}[name]
    if op == "scan_by_key":
        keys = np.array([0, 0, 1, 1, 1, 2], np.int32)
        vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        args = (gpured.to_device(keys), gpured.to_device(vals)) if mode == "dev" else (keys, vals)
        call = lambda: gpured.scan_by_key(*args, exclusive=value)  # noqa: E731
        ref = lambda flag: _scan_by_key_ref(keys, vals, flag)  # noqa: E731
        inputs = args
    else:
        a = _EX_A.copy()
        ga = gpured.to_device(a) if mode == "dev" else a
        call = lambda: getattr(gpured, op)(ga, axis=1, exclusive=value)  # noqa: E731
        ref = lambda flag: _excl_ref(op, a, 1, flag)  # noqa: E731
        inputs = (ga,)
    before = [snap(x) for x in inputs]
    try:
        got = call()
    except TypeError:
        assert kind != "good", f"{op}(exclusive={value!r}) raised TypeError"
        assert all(same_snap(x, s) for x, s in zip(inputs, before))
        return
    assert kind != "bad", (f"{op}(exclusive={value!r}) [{mode}] returned "
                           f"{_short(got)}; a non-bool flag must raise TypeError")
    exp = ref(bool(value))
    g = got.get() if isinstance(got, gpured.Array) else got
    assert bits_equal(g, exp), f"{op}(exclusive={value!r}) [{mode}]: got {g!r}, expected {exp!r}"


# ==========================================================================
# 5. signed zeros
# ==========================================================================

NZ = -0.0
ZERO_TABLE = []
for _dt in FLOATS:
    _n = np.dtype(_dt).name
    ZERO_TABLE += [
        (f"sum-[-0]-{_n}", "sum", lambda d=_dt: (np.array([NZ], d), {})),
        (f"sum-[-0,-0]-{_n}", "sum", lambda d=_dt: (np.array([NZ, NZ], d), {})),
        (f"sum-[-0]*1000-{_n}", "sum", lambda d=_dt: (np.full(1000, NZ, d), {})),
        (f"sum-3x4-negzero-axis0-{_n}", "sum", lambda d=_dt: (np.full((3, 4), NZ, d), {"axis": 0})),
        (f"sum-3x4-negzero-axis1-{_n}", "sum", lambda d=_dt: (np.full((3, 4), NZ, d), {"axis": 1})),
        (f"sum-[-0]-keepdims-{_n}", "sum", lambda d=_dt: (np.array([NZ], d), {"keepdims": True})),
        (f"sum-[-0]-initial-negzero-{_n}", "sum", lambda d=_dt: (np.array([NZ], d), {"initial": NZ})),
        (f"sum-empty-initial-negzero-{_n}", "sum", lambda d=_dt: (np.zeros(0, d), {"initial": NZ})),
        (f"sum-empty-{_n}", "sum", lambda d=_dt: (np.zeros(0, d), {})),
        (f"prod-[-0]-{_n}", "prod", lambda d=_dt: (np.array([NZ], d), {})),
        (f"prod-[-0,1]-{_n}", "prod", lambda d=_dt: (np.array([NZ, 1.0], d), {})),
        (f"prod-[-1,0]-{_n}", "prod", lambda d=_dt: (np.array([-1.0, 0.0], d), {})),
        (f"prod-[-0,-0]-{_n}", "prod", lambda d=_dt: (np.array([NZ, NZ], d), {})),
        (f"prod-[-0]*7-axis0-{_n}", "prod", lambda d=_dt: (np.full((7, 2), NZ, d), {"axis": 0})),
        (f"min-[0,-0]-{_n}", "min", lambda d=_dt: (np.array([0.0, NZ], d), {})),
        (f"min-[-0,0]-{_n}", "min", lambda d=_dt: (np.array([NZ, 0.0], d), {})),
        (f"max-[0,-0]-{_n}", "max", lambda d=_dt: (np.array([0.0, NZ], d), {})),
        (f"max-[-0,0]-{_n}", "max", lambda d=_dt: (np.array([NZ, 0.0], d), {})),
        (f"min-[-0]*1000-{_n}", "min", lambda d=_dt: (np.full(1000, NZ, d), {})),
        (f"max-[-0]*1000-{_n}", "max", lambda d=_dt: (np.full(1000, NZ, d), {})),
        (f"max-[-0,-1]-axis-{_n}", "max", lambda d=_dt: (np.array([[NZ, -1.0]], d), {"axis": 1})),
        (f"mean-[-0]-{_n}", "mean", lambda d=_dt: (np.array([NZ], d), {})),
        (f"mean-[-0,-0]-{_n}", "mean", lambda d=_dt: (np.array([NZ, NZ], d), {})),
        (f"argmin-[0,-0]-{_n}", "argmin", lambda d=_dt: (np.array([0.0, NZ], d), {})),
        (f"argmax-[-0,0]-{_n}", "argmax", lambda d=_dt: (np.array([NZ, 0.0], d), {})),
        (f"cumsum-[-0,1]-{_n}", "cumsum", lambda d=_dt: (np.array([NZ, 1.0], d), {})),
        (f"cumsum-[-0,-0]-{_n}", "cumsum", lambda d=_dt: (np.array([NZ, NZ], d), {})),
        (f"cumsum-[-0]*1000-{_n}", "cumsum", lambda d=_dt: (np.full(1000, NZ, d), {})),
        (f"cumsum-2x3-negzero-axis0-{_n}", "cumsum",
         lambda d=_dt: (np.full((2, 3), NZ, d), {"axis": 0})),
        (f"cumsum-2x3-negzero-axis1-{_n}", "cumsum",
         lambda d=_dt: (np.full((2, 3), NZ, d), {"axis": 1})),
        (f"cumprod-[-0,2]-{_n}", "cumprod", lambda d=_dt: (np.array([NZ, 2.0], d), {})),
        (f"cumprod-[2,-0,-1]-{_n}", "cumprod", lambda d=_dt: (np.array([2.0, NZ, -1.0], d), {})),
        (f"cummin-[0,-0]-{_n}", "cummin", lambda d=_dt: (np.array([0.0, NZ], d), {})),
        (f"cummax-[-0,0]-{_n}", "cummax", lambda d=_dt: (np.array([NZ, 0.0], d), {})),
        (f"cumsum-[-0,1]-out-{_n}", "cumsum",
         lambda d=_dt: (np.array([NZ, 1.0], d), {"out": np.ones(2, d)})),
    ]
ZERO_TABLE += [
    ("sum-f64-[-0]-dtype-f32", "sum", lambda: (_t(NZ), {"dtype": np.float32})),
    ("cumsum-f64-[-0,1]-dtype-f32", "cumsum", lambda: (_t(NZ, 1.0), {"dtype": np.float32})),
    ("cumsum-int-[0,1]-dtype-f64", "cumsum", lambda: (np.array([0, 1]), {"dtype": np.float64})),
]


@pytest.mark.parametrize("case,mode", _cases(ZERO_TABLE))
def test_signed_zero(case, mode):
    """-0.0 is kept where NumPy keeps it (compared bit for bit)."""
    cid, op, make = case
    run_case(op, make, mode)


# ==========================================================================
# 6. byte-swapped inputs with initial=; argmin/argmax narrower outs above
# ==========================================================================

def _bs(dtype, shape=(2, 3), strided=False):
    base = np.array([[5, 1, 7], [3, 9, 2]])
    if shape == (0, 3):
        base = np.zeros((0, 3))
    a = base.astype(np.dtype(dtype).newbyteorder())
    if strided:
        big = np.zeros((2 * a.shape[0], 2 * a.shape[1]), a.dtype)
        big[::2, ::2] = a
        a = big[::2, ::2]
    return a


BYTESWAP_TABLE = []
for _dt in [np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64] + FLOATS:
    _n = np.dtype(_dt).name
    for _op in ("min", "max"):
        for _init in (0, 4, 100):
            for _ax in (None, 0, 1):
                BYTESWAP_TABLE.append((f"{_op}-{_n}-initial{_init}-axis{_ax}", _op,
                                       lambda d=_dt, i=_init, ax=_ax:
                                       (_bs(d), {"axis": ax, "initial": i})))
        BYTESWAP_TABLE.append((f"{_op}-{_n}-strided-initial4", _op,
                               lambda d=_dt: (_bs(d, strided=True), {"initial": 4})))
        BYTESWAP_TABLE.append((f"{_op}-{_n}-empty-axis0-initial4", _op,
                               lambda d=_dt: (_bs(d, (0, 3)), {"axis": 0, "initial": 4})))
        BYTESWAP_TABLE.append((f"{_op}-{_n}-initial-out-swapped", _op,
                               lambda d=_dt: (_bs(d), {"axis": 0, "initial": 4,
                                                       "out": np.zeros(3, np.dtype(d).newbyteorder())})))
    for _op in ("sum", "prod"):
        BYTESWAP_TABLE.append((f"{_op}-{_n}-initial3-axis1", _op,
                               lambda d=_dt, o=_op: (_bs(d), {"axis": 1, "initial": 3})))
    BYTESWAP_TABLE.append((f"argmax-{_n}-out-int32", "argmax",
                           lambda d=_dt: (_bs(d), {"axis": 1, "out": np.zeros(2, np.int32)})))
    BYTESWAP_TABLE.append((f"cummax-{_n}-axis0", "cummax", lambda d=_dt: (_bs(d), {"axis": 0})))


@pytest.mark.parametrize("case,mode", _cases(BYTESWAP_TABLE, ("np",)))
def test_byteswapped_with_initial(case, mode):
    """Byte-swapped arrays with initial= (and outs) answer as NumPy."""
    cid, op, make = case
    run_case(op, make, mode)


# ==========================================================================
# 7. keys and knobs: the by-key functions' mistakes, the knob validator
# ==========================================================================

def _bk(keys=(0, 1, 1, 2), values=(1.0, 2.0, 3.0, 4.0), kd=np.int64, vd=np.float64):
    return np.array(keys, kd), np.array(values, vd)


# (id, func, make() -> (keys, values, kwargs), numpy's equivalent (bincount kwargs))
KEYS_TABLE = [
    ("num_keys=-1", lambda: (*_bk(), {"num_keys": -1})),
    ("num_keys=1.5", lambda: (*_bk(), {"num_keys": 1.5})),
    ("num_keys=True", lambda: (*_bk(), {"num_keys": True})),
    ("num_keys='4'", lambda: (*_bk(), {"num_keys": "4"})),
    ("keys-float64", lambda: (*_bk(kd=np.float64), {})),
    ("keys-2d", lambda: (np.array([[0, 1], [1, 2]]), np.array([[1.0, 2.0], [3.0, 4.0]]), {})),
    ("values-2d", lambda: (np.array([0, 1, 1, 2]), np.ones((4, 1)), {})),
    ("length-mismatch", lambda: (np.array([0, 1, 1]), np.ones(4), {})),
    ("negative-key", lambda: (*_bk(keys=(0, -1, 1, 2)), {"num_keys": None})),
    # complex values are summed (issue 40; tests/test_complex.py), where
    # np.bincount refuses them
    ("values-complex256", lambda: (*_bk(vd=np.clongdouble), {})),
    ("keys-None", lambda: (None, np.ones(4), {})),
]


def _bincount(keys, values, num_keys=None):  # noqa: D103 - np.bincount's checks
    kw = {} if num_keys is None else {"minlength": num_keys}
    return np.bincount(keys, values, **kw)


def _keys_params():
    ps = []
    for cid, make in KEYS_TABLE:
        for func in ("sum_by_key", "reduce_by_key", "scan_by_key"):
            # num_keys (and keys as bin indices: negative keys) are sum_by_key's
            if func == "sum_by_key" or not make()[2]:
                ps.append(pytest.param((cid, make), func, id=f"{func}-{cid}"))
    return ps


@pytest.mark.parametrize("case,func", _keys_params())
def test_keys_mistakes(case, func):
    """Mistakes in keys/values/num_keys raise the exception type NumPy's
    np.bincount raises for them, inputs untouched."""
    cid, make = case
    keys, values, kw = make()
    try:
        _quiet(_bincount, keys, values, **kw)
        raise AssertionError(f"test premise: np.bincount accepts {cid}")
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001
        exc = type(e)
    keys, values, kw = make()
    before = [snap(keys), snap(values)]
    args = (keys, values) if kw.get("num_keys") is None else (keys, values, kw["num_keys"])
    with pytest.raises(public_type(exc)):
        _quiet(getattr(gpured, func), *args)
    assert same_snap(keys, before[0]) and same_snap(values, before[1])


def _knob_params():
    maxwg = int(gpured.get_device()["max_work_group_size"])
    bad_value = [("wg_size", 0), ("wg_size", -1), ("wg_size", 3), ("wg_size", 2 * maxwg),
                 ("wg_size", 2**31), ("wg_size", 2**63), ("groups", 0), ("groups", 65536),
                 ("groups", 2**31), ("groups", 2**40), ("items", -1), ("items", 2**63),
                 ("ilp", 0), ("ilp", 9), ("ilp", 2**40)]
    bad_type = [("wg_size", 1.5), ("wg_size", "64"), ("wg_size", [64]), ("groups", 2.0),
                ("variant", 1), ("variant", b"naive")]
    ps = []
    for fn in ("sum", "argmax", "cumsum"):
        for k, v in bad_value:
            if (k, v) == ("ilp", 9) and fn == "cumsum":
                v = 17  # scans take ilp up to 16 (row_per_item's loads)
            ps.append(pytest.param(fn, k, v, ValueError, id=f"{fn}-{k}={v}"))
        if fn != "cumsum":
            for v in (3, 32, 2**40):
                ps.append(pytest.param(fn, "vw", v, ValueError, id=f"{fn}-vw={v}"))
        else:
            for v in (3, 2**17, 2**40):
                ps.append(pytest.param(fn, "items", v, ValueError, id=f"{fn}-items={v}"))
            ps.append(pytest.param(fn, "spins", -1, ValueError, id=f"{fn}-spins=-1"))
        for k, v in bad_type:
            ps.append(pytest.param(fn, k, v, TypeError, id=f"{fn}-{k}={v!r}"))
        ps.append(pytest.param(fn, "variant", "no-such-variant", ValueError,
                               id=f"{fn}-variant=unknown"))
    for fn in ("sum_by_key", "reduce_by_key", "scan_by_key"):
        for k, v in [("wg_size", 0), ("wg_size", 3), ("wg_size", 2 * maxwg),
                     ("wg_size", 2**40), ("items", 0), ("items", -1)]:
            ps.append(pytest.param(fn, k, v, ValueError, id=f"{fn}-{k}={v}"))
        ps.append(pytest.param(fn, "wg_size", 1.5, TypeError, id=f"{fn}-wg_size=1.5"))
        ps.append(pytest.param(fn, "variant", 1, TypeError, id=f"{fn}-variant=1"))
    return ps


@pytest.mark.parametrize("fn,knob,value,exc", _knob_params())
def test_knob_mistakes(fn, knob, value, exc):
    """A knob out of range is a ValueError naming the knob (README), however
    large the value (no OverflowError); a non-integer a TypeError."""
    if fn.endswith("_by_key"):
        args = (np.array([0, 1, 1, 2], np.int32), np.arange(4.0, dtype=np.float32))
    else:
        args = (np.arange(1000, dtype=np.float32).reshape(10, 100),)
    before = [a.copy() for a in args]
    with pytest.raises(exc) as info:
        getattr(gpured, fn)(*args, **{knob: value})
    if exc is ValueError:
        named = value if knob == "variant" else knob
        assert named in str(info.value), \
            f"{fn}({knob}={value!r}): the message {str(info.value)!r} does not name {named!r}"
    for a, b in zip(args, before):
        assert np.array_equal(a, b)


# ==========================================================================
# 8. faults, in child processes
# ==========================================================================

def _child_env(extra=None, drop=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for k in drop:
        env.pop(k, None)
    env.update(extra or {})
    return env


class _Lines:
    """A child's stdout lines, read with deadlines."""

    def __init__(self, args, env=None):
        self.p = subprocess.Popen([sys.executable, PROCS] + args, cwd=REPO_ROOT,
                                  env=env or _child_env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        self.q = queue.Queue()
        self.err = []
        threading.Thread(target=self._pump, args=(self.p.stdout, self.q), daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    @staticmethod
    def _pump(f, q):
        for line in f:
            q.put(line.rstrip("\n"))
        q.put(None)

    def _drain(self):
        for line in self.p.stderr:
            self.err.append(line)
            del self.err[:-40]

    def next(self, timeout):
        """The next line, None at the end of output, or TimeoutError."""
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()

    def stderr_tail(self):
        return "".join(self.err)[-1500:]


def run_item_set(name, per_item_timeout, max_restarts, total_timeout):
    """Run tests/_edge_procs.py's item set ``name``; a hang or a crash is
    recorded against the item being run, and a fresh child goes on from the
    next one, skipping the items that share a key with it (the same kernel,
    or the same knob setting of the same variant: reported as "skipped",
    so that one fault costs one deadline).  Returns (results {index: dict}, descs
    {index: str}, notes, the number of items)."""
    results, descs, notes = {}, {}, []
    start, restarts, t_end = 0, 0, time.monotonic() + total_timeout
    count, skip, groups = None, [], {}
    while True:
        child = _Lines(["items", name, str(start), json.dumps(skip)])
        current = None
        try:
            while True:
                left = t_end - time.monotonic()
                if left <= 0:
                    notes.append("the item set ran out of its %d s budget" % total_timeout)
                    child.kill()
                    return results, descs, notes, count
                line = child.next(min(per_item_timeout, left) if current is not None
                                  else min(120, left))
                if line is None:  # the child ended
                    child.p.wait()
                    if current is not None:
                        results[current] = {"status": "crash",
                                            "detail": "child died (rc %s): %s"
                                            % (child.p.returncode,
                                               child.stderr_tail()[-300:])}
                        break
                    notes.append("child ended without DONE: rc %s %s"
                                 % (child.p.returncode, child.stderr_tail()[-500:]))
                    return results, descs, notes, count
                if line.startswith("COUNT"):
                    count = int(line.split()[1])
                elif line.startswith("START"):
                    _, i, desc = line.split(" ", 2)
                    current = int(i)
                    descs[current] = desc
                elif line.startswith("GROUP"):
                    _, i, js = line.split(" ", 2)
                    groups[int(i)] = json.loads(js)
                elif line.startswith("END"):
                    _, i, js = line.split(" ", 2)
                    results[int(i)] = json.loads(js)
                    current = None
                elif line == "DONE":
                    child.kill()
                    return results, descs, notes, count
        except TimeoutError:
            if current is None:
                notes.append("child silent before its first item: "
                             + child.stderr_tail()[-500:])
                child.kill()
                return results, descs, notes, count
            results[current] = {"status": "hang",
                                "detail": "no answer after %d s" % per_item_timeout}
            child.kill()
        restarts += 1
        if restarts > max_restarts:
            notes.append("stopped after %d hangs/crashes; items from %d on not run"
                         % (max_restarts, current + 1))
            return results, descs, notes, count
        skip.extend(groups.get(current, []))
        start = current + 1


@pytest.mark.parametrize("family", ["reduce", "scan", "bykey"])
def test_knob_sweep_terminates(family):
    """Every knob combination the validator accepts finishes on a small
    input, with NumPy's answer: reductions (sum: one segment, rows,
    columns), scans (cumsum: the same layouts) and the by-key functions x
    every variant x wg_size {1, 2, 64, max} x items/groups {1, large}.
    Rejections (ValueError, TypeError, VariantUnavailable) are fine; hangs,
    crashes, other errors and wrong answers are not."""
    # 20 s per combination: a kernel compiled cold under load takes ~3 s
    # here; the budget covers a cold kernel cache (every variant x wg_size).
    results, descs, notes, count = run_item_set("sweep_" + family, per_item_timeout=20,
                                                max_restarts=12, total_timeout=600)
    bad = [f"{descs.get(i, i)}: {r['status']} {r.get('detail', '')}"
           for i, r in sorted(results.items()) if r["status"] not in ("ok", "rejected", "skipped")]
    skipped = sum(r["status"] == "skipped" for r in results.values())
    if skipped:
        bad.append(f"({skipped} more combinations sharing a kernel or a knob setting with "
                   f"one that hung not run)")
    n_ok = sum(r["status"] == "ok" for r in results.values())
    assert n_ok > 0, "no knob combination ran: " + "; ".join(notes)
    assert not bad and not notes, (f"{family}: {len(bad)} of {len(results)} knob combinations "
                                   f"failed ({n_ok} ok, {count} in all):\n  "
                                   + "\n  ".join(bad[:40] + notes))


BIGPARTS = ["sum-naive-wg1", "argmax-naive-wg1", "max-rows-divergence_free-wg1",
            "cumsum-naive-wg1-items1"]


def test_many_parts_terminate():
    """Knobs that cut one segment into more than 2^24 pieces (reduce.c:
    batch = 2^24 / parts was 0, an endless loop holding the global lock):
    each finishes with NumPy's answer, or is rejected by the validator."""
    results, descs, notes, count = run_item_set("bigparts", per_item_timeout=30,
                                                max_restarts=len(BIGPARTS), total_timeout=200)
    bad = [f"{descs.get(i, i)}: {r['status']} {r.get('detail', '')} ({r.get('seconds', '?')} s)"
           for i, r in sorted(results.items()) if r["status"] not in ("ok", "rejected")]
    assert len(results) == count == len(BIGPARTS) and not bad and not notes, \
        "\n  ".join(["many-parts knobs:"] + bad + notes)


def _names_bytes(msg, n):
    """Whether msg states the byte count n (digits, separators allowed, or
    a KiB..EiB / kB..EB figure within 1%)."""
    flat = re.sub(r"(?<=\d)[,_' ](?=\d{3})", "", msg)
    if str(n) in re.findall(r"\d+", flat):
        return True
    units = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
    for num, u, i in re.findall(r"(\d+(?:\.\d+)?)\s*([kKmMgGtTpPeE])(i?)B", msg):
        val = float(num) * (1024 if i else 1000) ** units[u.lower()]
        if abs(val - n) <= 0.01 * n:
            return True
    return False


def test_size_errors():
    """Shapes whose byte size overflows: ValueError as NumPy's np.empty;
    allocations beyond the device: MemoryError naming the bytes asked and
    the device's limit (not OpenCLError, not a 0-byte Array, not a crash)."""
    results, descs, notes, count = run_item_set("alloc", per_item_timeout=60, max_restarts=20,
                                         total_timeout=200)
    bad = []
    for i, r in sorted(results.items()):
        desc = descs.get(i, str(i))
        if r["status"] != "facts":
            bad.append(f"{desc}: {r['status']} {r.get('detail', '')}")
            continue
        f = r["detail"]
        if "want" in f:  # overflow: NumPy's exception type (ValueError)
            if f["raised"] is None:
                bad.append(f"{desc}: returned an Array of shape {f['shape']} over "
                           f"{f['nbytes']} bytes; NumPy raises {f['want']}")
            elif f["want"] not in f["mro"]:
                bad.append(f"{desc}: raised {f['raised']}: {f['msg']}; NumPy raises {f['want']}")
            continue
        if f["raised"] is None:
            bad.append(f"{desc}: returned {f['got']}; expected MemoryError")
        elif f["raised"] != "MemoryError" and "MemoryError" not in f["mro"] and not (
                f["asked"] >= 2**62 and "ValueError" in f["mro"] and "sum_by_key" in desc):
            bad.append(f"{desc}: raised {f['raised']}: {f['msg']}; expected MemoryError")
        elif "MemoryError" in f["mro"]:
            msg = f["msg"]
            nums = [int(x) for x in re.findall(r"\d+", re.sub(r"(?<=\d)[,_' ](?=\d{3})", "", msg))]
            asked_ok = _names_bytes(msg, f["asked"]) or any(x >= f["asked"] for x in nums)
            limit_ok = any(_names_bytes(msg, lim) for lim in f["limits"] if lim)
            if not (asked_ok and limit_ok):
                bad.append(f"{desc}: MemoryError {msg!r} does not name the bytes asked "
                           f"(>= {f['asked']}) and the device limit {f['limits']}")
    assert len(results) == count and not bad and not notes, \
        "\n  ".join(["size errors:"] + bad + notes + [f"({len(results)} of {count} ran)"])


FORK_TIMEOUT = 12


@pytest.mark.parametrize("case", ["used", "unused", "array"])
def test_fork(case):
    """A child started with fork (gpured used before the fork / imported
    only / a device Array inherited) works or raises an error naming
    'spawn', within a deadline; the parent keeps working."""
    child = _Lines(["fork", case, str(FORK_TIMEOUT)])
    try:
        line = child.next(FORK_TIMEOUT + 30)
        while line is not None and not line.startswith("RESULT"):
            line = child.next(FORK_TIMEOUT + 30)
    except TimeoutError:
        child.kill()
        raise AssertionError(f"fork({case}): the parent hung after the fork") from None
    child.kill()
    assert line is not None, f"fork({case}): the parent died: {child.stderr_tail()}"
    r = json.loads(line.split(" ", 1)[1])
    assert r["parent"] == "ok", f"fork({case}): parent after the fork: {r}"
    if r["child"] == "raised":
        assert "spawn" in r["msg"], f"fork({case}): the child raised without naming spawn: {r}"
    else:
        assert r["child"] == "ok", f"fork({case}): the child {r['child']}: {r}"
    assert r["child_exited"], f"fork({case}): the child did not exit: {r}"


def test_sigint_interrupts_long_call():
    """Ctrl-C during a long call (a cumsum sized to take several seconds on
    the CPU device) raises KeyboardInterrupt within about a second, and the
    library keeps working (out included)."""
    child = _Lines(["sigint"])
    try:
        line = child.next(60)
        while line is not None and not line.startswith("START"):
            line = child.next(60)
        assert line is not None, f"the child died: {child.stderr_tail()}"
        info = json.loads(line.split(" ", 1)[1])
        time.sleep(0.5)
        t_sig = time.monotonic()
        os.kill(child.p.pid, signal.SIGINT)
        try:
            line = child.next(max(30.0, 3 * info["predicted"]))
        except TimeoutError:
            raise AssertionError(f"no answer within {max(30.0, 3 * info['predicted'])} s of "
                                 f"SIGINT ({info})") from None
        delay = time.monotonic() - t_sig
        assert line is not None, f"the child died on SIGINT: {child.stderr_tail()}"
        kind, secs = line.split()
        assert kind == "INTERRUPTED", (
            f"KeyboardInterrupt not raised: the call ran to its end ({secs} s; {info})")
        assert delay <= 1.25, (f"KeyboardInterrupt {delay:.2f} s after SIGINT (call of "
                               f"{info}, interrupted at {secs} s)")
        after = child.next(60)
        assert after == "AFTER ok", f"after the interrupt: {after} {child.stderr_tail()}"
    finally:
        child.kill()


# Ctrl-C on the host path (issue 39): KeyboardInterrupt within this of
# SIGINT (the calling thread polls every 25 ms; blocks of 4 MiB between).
HOST_SIGINT_S = 0.2


@pytest.mark.parametrize("func,threads", [("cumsum", 1), ("cumsum", 2),
                                          ("sum", 2), ("exact", 0)])
def test_sigint_host_path(func, threads):
    """Ctrl-C during a host-path call of 1 GiB of float32 (cumsum, sum,
    the exact sum; one thread, or the pool's) raises KeyboardInterrupt
    within HOST_SIGINT_S; nothing is written outside the call's out, and
    the next calls (the pool's included) are right."""
    child = _Lines(["sigint_host", func, str(threads)])
    try:
        line = child.next(60)
        while line is not None and not line.startswith("START"):
            line = child.next(60)
        assert line is not None, f"the child died: {child.stderr_tail()}"
        time.sleep(0.15)  # the call is under way (cumsum, exact: ~0.5 s)
        t_sig = time.monotonic()
        os.kill(child.p.pid, signal.SIGINT)
        try:
            line = child.next(30)
        except TimeoutError:
            raise AssertionError(f"{func}: no answer within 30 s of SIGINT") from None
        delay = time.monotonic() - t_sig
        assert line is not None, f"the child died on SIGINT: {child.stderr_tail()}"
        kind, secs = line.split()
        assert kind == "INTERRUPTED", f"{func}: the call ran to its end ({secs} s)"
        assert delay <= HOST_SIGINT_S, (
            f"{func} on {threads} threads: KeyboardInterrupt {delay:.3f} s after SIGINT "
            f"(interrupted at {secs} s)")
        after = child.next(60)
        assert after == "AFTER ok", f"{func}: after the interrupt: {after} {child.stderr_tail()}"
    finally:
        child.kill()


def _env_child(value):
    env = _child_env({"GPURED_DEVICE": value} if value is not None else None,
                     drop=("GPURED_DEVICE",))
    child = _Lines(["env"], env=env)
    try:
        line = child.next(120)
        while line is not None and not line.startswith("RESULT"):
            line = child.next(120)
    finally:
        child.kill()
    assert line is not None, f"GPURED_DEVICE={value!r}: the child died: {child.stderr_tail()}"
    return json.loads(line.split(" ", 1)[1])


@pytest.mark.parametrize("value", ["no-such-device", "99:99"])
def test_bad_gpured_device_env(value):
    """A bad GPURED_DEVICE warns at import and falls back to the default
    device (devices() works); set_device() with it raises ValueError."""
    default = _env_child(None)
    assert default["import"] == "ok", default
    r = _env_child(value)
    assert r["import"] == "ok", f"GPURED_DEVICE={value!r}: import gpured failed: {r['import']}"
    assert "after" not in r, f"GPURED_DEVICE={value!r}: {r['after']}"
    assert any(value in msg for _, msg in r["warnings"]), \
        f"GPURED_DEVICE={value!r}: no warning naming it at import ({r['warnings']})"
    assert r["device"] == default["device"] and r["ndevices"] == default["ndevices"], (r, default)
    assert r["sum"] == 45.0
    before = gpured.get_device()["index"]
    with pytest.raises(ValueError):
        gpured.set_device(value)
    assert gpured.get_device()["index"] == before
