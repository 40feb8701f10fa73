"""Elementwise operations on device Arrays against NumPy.

Operators over a representative cross product of dtypes (each operator
sees several pairs, each pair several operators: every distinct
operator/type/layout combination is one kernel build, so the product is
sampled, not exhausted), broadcasting, scalars on both sides (NumPy 2's
weak Python scalars), strided and transposed views, empty and 0-d
arrays, NaN/inf, NumPy's integer division edge cases, where, ufuncs and
their reduce/accumulate, and that nothing is copied to the host.
"""
import operator
import warnings

import numpy as np
import pytest

import gpured
from conftest import HAS_FP64

F64 = np.float64 if HAS_FP64 else np.float32
PAIRS = [(np.int8, np.int8), (np.uint8, np.int32), (np.int64, np.uint64),
         (np.float32, np.float32), (np.float32, F64), (np.bool_, np.bool_),
         (np.int32, np.float32), (np.uint64, np.uint64), (np.bool_, np.int8),
         (F64, np.int64)]

ARITH = [operator.add, operator.sub, operator.mul, operator.truediv,
         operator.floordiv, operator.mod, operator.pow]
COMPARE = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
           operator.ge]
BITWISE = [operator.and_, operator.or_, operator.xor]


def data(dt, shape, seed=0, lo=-20, hi=20):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, lo), min(info.max, hi), size=shape,
                        dtype=dt)


def numpy_or_error(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(*args), None
        except (OverflowError, TypeError, ValueError) as e:
            # NumPy's own subclasses (UFuncTypeError) as their base
            return None, next(c for c in (OverflowError, TypeError,
                                          ValueError) if isinstance(e, c))


def check(got, want):
    assert isinstance(got, gpured.Array)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    g = got.get()
    if want.dtype.kind == "f":
        np.testing.assert_allclose(g, want, rtol=2e-6 if want.dtype ==
                                   np.float32 else 1e-13, atol=0,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


def run(op, *xs):
    """op on NumPy values and on their device twins: equal, or the same
    error."""
    want, err = numpy_or_error(op, *xs)
    dev = [gpured.to_device(x) if isinstance(x, np.ndarray) else x
           for x in xs]
    if err is not None:
        with pytest.raises(err):
            op(*dev)
        return
    check(op(*dev), np.asarray(want))


def pairs_for(i, k=2):
    return [PAIRS[(i * 3 + j * 5) % len(PAIRS)] for j in range(k)]


@pytest.mark.parametrize("op", ARITH + COMPARE + BITWISE,
                         ids=lambda f: f.__name__)
def test_binary_dtype_pairs(op):
    i = (ARITH + COMPARE + BITWISE).index(op)
    # arithmetic over two pairs each, comparisons and bitwise over one
    for ta, tb in pairs_for(i, 2 if op in ARITH else 1):
        a = data(ta, (3, 5), 1)
        b = data(tb, (3, 5), 2, lo=1 if op is operator.pow else -20,
                 hi=4 if op is operator.pow else 20)
        if op is operator.pow and np.dtype(tb).kind == "f":
            a = np.abs(a)
        run(op, a, b)


@pytest.mark.parametrize("dt", [np.int8, np.float32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_unary(dt):
    a = data(dt, (4, 3), 3)
    for op in (operator.neg, operator.pos, abs, operator.invert):
        run(op, a)


@pytest.mark.parametrize("dt,scalar", [
    (np.uint8, 3), (np.uint8, -2), (np.float32, 2.5), (np.int8, True),
    (np.float32, np.int16(7)), (np.int8, np.array(4, np.int64))], ids=repr)
def test_scalars_both_sides(dt, scalar):
    a = data(dt, (6,), 4, lo=0)
    run(operator.add, a, scalar)
    run(operator.mul, scalar, a)


def test_weak_scalar_overflow_and_wide_comparisons():
    a = data(np.uint8, (5,), 0, lo=0)
    run(operator.add, a, 300)          # NumPy 2: OverflowError
    run(operator.lt, a, 300)           # compared by value
    run(operator.eq, a, -1)


@pytest.mark.parametrize("sa,sb", [((3, 1), (1, 4)), ((2, 3, 4), (4,)),
                                   ((5,), ()), ((1,), (2, 1, 3)),
                                   ((0, 3), (3,)), ((2, 0), (1, 1))])
def test_broadcasting(sa, sb):
    run(operator.add, data(np.float32, sa, 1), data(np.float32, sb, 2))


def test_incompatible_shapes():
    d = gpured.to_device(np.ones((2, 3)))
    with pytest.raises(ValueError):
        d + gpured.to_device(np.ones(4))


def test_strided_and_transposed_views():
    a = data(np.float32, (6, 8), 5)
    b = data(np.float32, (8, 6), 6)
    da, db = gpured.to_device(a), gpured.to_device(b)
    check(da.T * db, a.T * b)
    check(da[::2, 1::3] - db.T[::2, 1::3], a[::2, 1::3] - b.T[::2, 1::3])
    check(da[::-1] + 1, a[::-1] + 1)
    check(da[:, 2:5] > db[1:7, 0:3], a[:, 2:5] > b[1:7, 0:3])


def test_empty_and_zero_d():
    e = gpured.to_device(np.zeros((0, 4), np.float32))
    check(e + 1, np.zeros((0, 4), np.float32) + 1)
    z = gpured.to_device(np.array(2.5, np.float32))
    check(z * 2, np.array(2.5, np.float32) * 2)
    s = gpured.sum(gpured.to_device(np.arange(5, dtype=np.float32)))
    r = s * 2
    assert isinstance(r, gpured.Array) and r.ndim == 0 and float(r) == 20.0
    assert f"{s:.2f}" == "10.00" and round(s) == 10 and round(s * 1.26, 1) == 12.6
    assert isinstance(round(gpured.to_device(np.array([1.5, 2.5]))),
                      gpured.Array)
    # a 0-d Array is strong-typed, as a 0-d ndarray in NumPy 2
    check(gpured.to_device(np.array([100], np.int8)) +
          gpured.to_device(np.array(1000)),
          np.array([100], np.int8) + np.array(1000))


def test_nan_inf():
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5],
                 np.float32)
    w = np.array([1.0, np.nan, np.inf, 0.0, 0.0, -np.inf, 0.0], np.float32)
    for op in (operator.truediv, operator.floordiv, operator.mod,
               operator.lt, np.maximum, np.fmax):
        run(op, v, w)
    got = (-gpured.to_device(v)).get()
    assert np.array_equal(np.signbit(got), np.signbit(-v))


@pytest.mark.parametrize("dt", [np.int8, np.int64, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_integer_division_edges(dt):
    info = np.iinfo(dt)
    a = np.array([7, -7, 7, -7, 0, 5, info.min, info.min, info.max],
                 dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 0, -1, 1, 0], dtype=np.int64)
    a, b = a.astype(dt), b.astype(dt)     # unsigned: wrapped values
    run(operator.floordiv, a, b)
    run(operator.mod, a, b)
    if dt is np.int8:
        run(np.fmod, a, b)


def test_integer_power():
    a = np.array([2, -3, 0, 5], np.int32)
    run(operator.pow, a, np.array([3, 2, 0, 30], np.int32))   # wraps
    run(operator.pow, a, 2)
    run(operator.pow, a, -1)                                  # ValueError
    run(operator.pow, a, np.array([1, -1, 2, 2], np.int32))   # ValueError
    run(operator.pow, a.astype(np.float32), -1)


def test_bitwise_bool_and_type_errors():
    a = data(np.bool_, (5,), 1)
    b = data(np.bool_, (5,), 2)
    run(operator.xor, a, b)
    run(operator.sub, a, b)                 # NumPy: TypeError
    run(operator.and_, data(np.float32, (3,), 1), 1)   # TypeError
    run(operator.lshift, data(np.int8, (6,), 1, lo=-5, hi=5),
        np.array([0, 1, 7, 8, 9, 3], np.int8))
    run(operator.rshift, data(np.int16, (6,), 1, lo=-50, hi=50),
        np.array([0, 1, 15, 16, 70, 3], np.int16))


def test_where():
    c = data(np.bool_, (3, 4), 1)
    x = data(np.float32, (3, 4), 2)
    y = data(np.int8, (4,), 3)
    dc, dx, dy = (gpured.to_device(v) for v in (c, x, y))
    check(gpured.where(dc, dx, dy), np.where(c, x, y))
    check(gpured.where(dx > 0, dx, 0), np.where(x > 0, x, 0))
    check(gpured.where(gpured.to_device(y), 1, 2.5), np.where(y, 1, 2.5))
    check(gpured.where(c, x, y), np.where(c, x, y))   # NumPy uploaded


def test_ufuncs():
    a = np.abs(data(np.float32, (4, 5), 7)) + 0.5
    d = gpured.to_device(a)
    for uf in (np.sqrt, np.exp, np.sin, np.floor, np.isnan, np.sign):
        got = uf(d)
        want = uf(a)
        assert isinstance(got, gpured.Array)
        np.testing.assert_allclose(got.get(), want, rtol=4e-6)
    check(np.maximum(d, 3.0), np.maximum(a, 3.0))
    check(np.add(a, d), np.add(a, a))                 # ndarray uploaded
    check(a + d, a + a)                               # ndarray.__add__ defers
    check(np.logical_and(d > 1, d < 3), np.logical_and(a > 1, a < 3))
    check(np.floor(gpured.to_device(np.arange(4, dtype=np.int8))),
          np.floor(np.arange(4, dtype=np.int8)))      # NumPy 2: int stays
    out = gpured.empty((4, 5), np.float32)
    assert np.multiply(d, 2, out=out) is out
    check(out, a * 2)


def test_ufunc_reduce_accumulate_and_functions():
    a = data(np.int32, (4, 5), 8)
    d = gpured.to_device(a)
    check(np.add.reduce(d), np.add.reduce(a))
    check(np.maximum.reduce(d, axis=1, keepdims=True),
          np.maximum.reduce(a, axis=1, keepdims=True))
    check(np.logical_or.reduce(d > 5, axis=None),
          np.asarray(np.logical_or.reduce(a > 5, axis=None)))
    check(np.multiply.accumulate(d, axis=1), np.multiply.accumulate(a, axis=1))
    check(np.sum(d), np.asarray(np.sum(a)))           # still d.sum
    check(np.cumsum(d, axis=0), np.cumsum(a, axis=0))
    # reduceat through gpured.reduceat (an Array as data or as indices)
    idx = np.array([0, 2, 1, 4], np.intp)
    check(np.add.reduceat(d, idx, axis=1), np.add.reduceat(a, idx, axis=1))
    check(np.minimum.reduceat(d, gpured.to_device(idx[:3]), axis=0),
          np.minimum.reduceat(a, idx[:3], axis=0))
    got = np.multiply.reduceat(a, gpured.to_device(idx), axis=1)  # host data
    np.testing.assert_array_equal(np.asarray(got), np.multiply.reduceat(a, idx, axis=1))


def test_unsupported_raise_and_name_asarray():
    d = gpured.to_device(np.arange(6, dtype=np.float32))
    for f in (lambda: np.add.outer(d, d), lambda: np.ldexp(d, 2),
              lambda: np.subtract.reduce(d), lambda: np.add(d, 1, dtype=F64),
              lambda: np.add(d, 1, out=np.empty(6, np.float32)),
              lambda: np.sqrt(gpured.to_device(np.arange(3, dtype=np.int8)))):
        with pytest.raises(TypeError, match="asarray"):
            f()


def test_in_place():
    a = data(np.int32, (3, 4), 1)
    d = gpured.to_device(a)
    buf = d.buffer
    d += 5
    d *= d
    a += 5
    a *= a
    assert d.buffer is buf
    check(d, a)
    with pytest.raises(TypeError):
        d += 1.5            # same_kind, as NumPy
    v = data(np.float32, (4, 4), 2)
    dv = gpured.to_device(v)
    dv += dv.T              # overlapping: the input copied first, as NumPy
    v += v.T
    check(dv, v)


def test_equality_and_hash():
    d = gpured.to_device(np.arange(4))
    assert bool((d == d.copy()).all())
    with pytest.raises(TypeError):
        hash(d)


def test_astype_stays_on_device_and_no_host_copy(monkeypatch):
    a = data(np.float32, (4, 6), 9)
    d = gpured.to_device(a)
    i = gpured.to_device(data(np.int32, (6,), 3))
    # warm: kernels built (builds never read arrays back, but keep the
    # checked block about operators only)
    got = []

    def no_host(*_a, **_k):
        raise AssertionError("an Array was copied to the host")

    monkeypatch.setattr(gpured.Array, "get", no_host)
    monkeypatch.setattr(gpured.Array, "__array__", no_host)
    r = (d * 2 + 1) / (abs(d.T.T) + 1.0)
    r = gpured.where(r > 0, r, -r) - i // 2 % 3 + (i ** 2)
    r = np.sqrt(np.maximum(r, 0.0)) + np.add(d, i)
    c = (d.astype(np.int32) == d.astype(np.int64)) & (d >= d)
    got.append(r)
    got.append(c)
    monkeypatch.undo()
    ai = data(np.int32, (6,), 3)
    want = (a * 2 + 1) / (abs(a) + np.float32(1.0))
    want = np.where(want > 0, want, -want) - ai // 2 % 3 + ai ** 2
    want = np.sqrt(np.maximum(want, 0.0)) + np.add(a, ai)
    check(got[0], want)
    check(got[1], (a.astype(np.int32) == a.astype(np.int64)) & (a >= a))
