"""The host path of issue 12 (csrc/host.c) through ctypes.

gr_host_reduce / gr_host_scan are exported by gpured._core (every csrc/*.c is
compiled into it); nothing in Python calls them yet, so these tests load them
with ctypes and compare them, over a generator of arrays, with:

* NumPy, exactly: integer sums/products (wrapping), min/max (NaN, and the sign
  of a zero result by NumPy's sequential rule, np.minimum.accumulate(row)[-1]:
  the later of equal values wins; np.minimum.reduce agrees by value, but in
  long rows its zero sign is an artifact of its SIMD lanes), argmin/argmax,
  all/any, integer scans, cummin/cummax (bit for bit, NaN positions included);
* an exact reference for float sums and cumsums (the inputs as scaled Python
  integers, summed exactly, rounded once to the result dtype, ties to even):
  the host result must be that correctly rounded value (float32 accumulated
  in double, float64 with TwoSum); float32 TwoSum (wide=0) within one ulp;
* gpured's own device result through the public API (gpured.sum(x, axis=1)
  ... on the current device, PoCL in CI): identical for reductions; scans
  within the device's documented bound (its float32 cumsum adds float32
  partial sums within a work-item's run, the host rounds every double prefix
  once), and signed zeros / min-max tie signs compared by value only (see
  test_device_zero_signs for what differs).
"""
import ctypes
import math

import numpy as np
import pytest

import gpured

LIB = ctypes.CDLL(gpured._core.__file__)
if not hasattr(LIB, "gr_host_reduce"):  # pragma: no cover - older build
    pytest.skip("gpured._core has no host path", allow_module_level=True)

# gr_dtype and gr_op numbering (csrc/gpured.h)
DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.uint32, np.int64, np.uint64, np.float32, np.float64]
ADD, MUL, MIN, MAX, ARGMIN, ARGMAX, ALL, ANY = range(8)
OPNAMES = ["add", "mul", "min", "max", "argmin", "argmax", "all", "any"]
FLOATS = (np.float32, np.float64)


class HostOp(ctypes.Structure):
    _fields_ = [("op", ctypes.c_int), ("t", ctypes.c_int), ("r", ctypes.c_int),
                ("wide", ctypes.c_int), ("threads", ctypes.c_int),
                ("grain", ctypes.c_size_t)]


# (threads, grain bytes) of every call: PAR[0] is changed by the `par`
# fixture, which runs a test again cut into tasks of a few hundred bytes
# on three threads (hostpar.c's pool; csrc/host.c red_par_run and
# scan_par_run), every answer checked as on one thread.
PAR = [(1, 0)]


@pytest.fixture(params=[(1, 0), (3, 256)], ids=["one_thread", "threads"])
def par(request):
    PAR[0] = request.param
    yield request.param
    PAR[0] = (1, 0)


LIB.gr_host_reduce.argtypes = [ctypes.POINTER(HostOp), ctypes.c_void_p,
                               ctypes.c_size_t, ctypes.c_size_t,
                               ctypes.c_ssize_t, ctypes.c_ssize_t,
                               ctypes.c_void_p]
LIB.gr_host_reduce.restype = ctypes.c_int
LIB.gr_host_scan.argtypes = [ctypes.POINTER(HostOp), ctypes.c_int,
                             ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                             ctypes.c_ssize_t, ctypes.c_ssize_t,
                             ctypes.c_void_p, ctypes.c_ssize_t,
                             ctypes.c_ssize_t]
LIB.gr_host_scan.restype = ctypes.c_int


def code(dt):
    return DTYPES.index(np.dtype(dt).type)


def estrides(a):
    """Strides of a in elements."""
    isz = a.dtype.itemsize
    assert all(s % isz == 0 for s in a.strides)
    return [s // isz for s in a.strides]


def host_reduce(op, a2, r, wide=1):
    """out[m] = reduction of row m of the 2-D view a2, or None (rc -1)."""
    M, L = a2.shape
    ss, es = estrides(a2)
    out = np.zeros(max(M, 1) * np.dtype(r).itemsize, np.uint8)
    out[:] = 0x5A
    o = HostOp(op, code(a2.dtype), code(r), wide, *PAR[0])
    rc = LIB.gr_host_reduce(ctypes.byref(o), a2.ctypes.data, M, L, ss, es,
                            out.ctypes.data)
    if rc != 0:
        assert (out == 0x5A).all(), "written although unsupported"
        return None
    return out.view(r)[:M]


def host_scan(op, a2, r, exclusive=False, wide=1, out=None):
    """Scan of each row of a2 into out (a new C array unless given)."""
    M, L = a2.shape
    ss, es = estrides(a2)
    if out is None:
        out = np.empty((M, L), r)
    oss, oes = estrides(out)
    o = HostOp(op, code(a2.dtype), code(r), wide, *PAR[0])
    rc = LIB.gr_host_scan(ctypes.byref(o), int(exclusive), a2.ctypes.data, M,
                          L, ss, es, out.ctypes.data, oss, oes)
    return None if rc != 0 else out


# ---------------------------------------------------------------- data

def values(dt, n, kind, rng):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(n) < (0.5 if kind != "sparse" else 0.002)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if kind == "wrap":  # full range: sums and products wrap
            return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        if kind == "sparse":  # mostly zeros (all/any, argmin ties)
            x = np.zeros(n, dt)
            x[rng.random(n) < 0.01] = 1
            return x
        lo = max(info.min, -100)
        return rng.integers(lo, 100, n, dtype=dt, endpoint=True)
    # floats
    if kind == "wrap":  # wide exponent range
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)
    elif kind == "sparse":
        x = np.zeros(n)
        x[rng.random(n) < 0.01] = 1.5
        x[rng.random(n) < 0.3] = -0.0
    elif kind == "cancel":  # large terms that cancel, small ones survive
        x = rng.standard_normal(n)
        big = rng.random(n) < 0.1
        x[big] = rng.choice([-1, 1], big.sum()) * 1e6
    else:
        x = rng.standard_normal(n) * 10
    x = x.astype(dt)
    if kind == "special" and n:
        for v in (np.nan, np.inf, -np.inf, -0.0, 0.0):
            if rng.random() < 0.5:
                x[rng.integers(0, n)] = v
    if kind == "zeros" and n:  # min/max of mixed-sign zeros and positives
        x = np.abs(x)
        x[rng.random(n) < 0.3] = 0.0
        x[rng.random(n) < 0.3] = -0.0
    return x


def layouts(M, L, dt, rng, kind):
    """2-D views (M, L) of one dtype in several memory layouts."""
    def fill(shape):
        return values(dt, int(np.prod(shape)), kind, rng).reshape(shape)
    yield "rows", fill((M, L))
    yield "cols", fill((L, M)).T                      # seg 1, elem M
    yield "cols_padded", fill((L, M + 3))[:, :M].T    # seg 1, elem M + 3
    yield "neg", fill((M, L))[::-1, ::-1]
    yield "negcols", fill((L, M))[::-1].T             # seg 1, elem -M
    yield "step", fill((2 * M, 3 * L))[::2, ::3]
    if L:
        yield "bcast", np.broadcast_to(fill((1, L)), (M, L))  # seg 0
        yield "bcast_elem", np.broadcast_to(fill((M, 1)), (M, L))  # elem 0


SHAPES_1D = [0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100,
             255, 256, 257, 511, 512, 513, 1000, 1024, 1025, 3000]
SHAPES_2D = [(2, 5), (3, 17), (4, 1), (5, 64), (7, 100), (8, 33), (9, 8),
             (63, 9), (64, 3), (65, 20), (130, 7), (3, 1000)]
KINDS = ["plain", "wrap", "special", "sparse", "cancel", "zeros"]


def cases(dt, rng, with_empty=True):
    """(label, 2-D view) over 1-D lengths and 2-D shapes, every layout."""
    for kind in KINDS:
        for n in SHAPES_1D:
            if n == 0 and not with_empty:
                continue
            x = values(dt, 2 * n, kind, rng)
            yield "%s n=%d" % (kind, n), x[:n].reshape(1, n)
            if n > 1:
                yield "%s n=%d rev" % (kind, n), x[:n][::-1].reshape(1, n)
                yield "%s n=%d step" % (kind, n), x[::2].reshape(1, n)
        for M, L in SHAPES_2D:
            for name, a2 in layouts(M, L, dt, rng, kind):
                yield "%s %dx%d %s" % (kind, M, L, name), a2
        if with_empty:
            for name, a2 in layouts(3, 0, dt, rng, kind):
                yield "%s 3x0 %s" % (kind, name), a2


def near_one(a2):
    """Finite values mapped to [1, 1 + 1/64) (products that neither
    overflow nor vanish); NaN and infinities kept."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(a2), 1 + (a2 % 1) / 64, a2).astype(a2.dtype)


# ---------------------------------------------------- exact float sums

def _scaled(vals):
    """Finite floats as integers N_i with a common scale 2**-K."""
    ratios = [float(v).as_integer_ratio() for v in vals]
    K = max((d.bit_length() - 1 for _, d in ratios), default=0)
    return [n << (K - (d.bit_length() - 1)) for n, d in ratios], K


def round_exact(N, K, dt):
    """N / 2**K rounded once to dt (nearest, ties to even)."""
    if N == 0:
        return dt(0.0)
    d = N / (1 << K)  # Python's int division is correctly rounded
    if dt == np.float64:
        return np.float64(d)
    with np.errstate(over="ignore"):
        f = np.float32(d)
    if float(f) == d or not np.isfinite(f):
        return f
    g = np.nextafter(f, np.float32(np.inf if d > float(f) else -np.inf))
    mid = (float(f) + float(g)) / 2
    if d != mid:  # d is not a float32 tie: rounding d is rounding N/2**K
        return f
    mn, md = mid.as_integer_ratio()
    c = N * md - mn * (1 << K)  # sign of exact - mid
    if c == 0:
        return f if int(f.view(np.uint32)) % 2 == 0 else g
    return g if (c > 0) == (float(g) > float(f)) else f


def nonfinite_sum(vals):
    with np.errstate(invalid="ignore"):
        return np.float64(np.sum(np.asarray(vals, np.float64)))


def exact_sum(vals, dt):
    vals = np.asarray(vals, np.float64)
    if not np.isfinite(vals).all():
        return dt(nonfinite_sum(vals))
    N, K = _scaled(vals)
    return round_exact(sum(N), K, dt)


def exact_cumsum(vals, dt):
    """Correctly rounded prefixes; non-finite ones as NumPy's float64 does."""
    vals = np.asarray(vals, np.float64)
    out = np.empty(len(vals), dt)
    if not np.isfinite(vals).all():
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~np.isfinite(np.cumsum(vals))
    else:
        bad = np.zeros(len(vals), bool)
    fin = np.where(np.isfinite(vals), vals, 0.0)
    N, K = _scaled(fin)
    acc = 0
    with np.errstate(invalid="ignore"):
        ref = np.cumsum(vals)
    for i, n in enumerate(N):
        acc += n
        out[i] = ref[i] if bad[i] else round_exact(acc, K, dt)
    return out


def same(a, b, zero_sign=True):
    """Bitwise-equal values, any NaN equal to any NaN; zero_sign=False
    compares zeros by value."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return bool((a == b).all())
    nan = np.isnan(a)
    if not (nan == np.isnan(b)).all():
        return False
    eq = a[~nan] == b[~nan]
    if zero_sign:
        eq &= np.signbit(a[~nan]) == np.signbit(b[~nan])
    return bool(eq.all())


def ulps(a, b):
    """Distance in units in the last place (finite values of one dtype)."""
    it = np.int32 if a.dtype == np.float32 else np.int64
    ia = a.view(it).astype(np.int64)
    ib = b.view(it).astype(np.int64)
    ia = np.where(ia < 0, np.iinfo(it).min - ia, ia)
    ib = np.where(ib < 0, np.iinfo(it).min - ib, ib)
    return np.abs(ia - ib)


def twosum_ok(got, exact, sum_abs, n, fin):
    """float32 TwoSum (wide=0): one ulp, or the compensated-sum bound
    eps |S| + 2 n eps^2 sum|x| where cancellation makes that larger."""
    eps = float(np.finfo(np.float32).eps)
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - exact.astype(np.float64))
    tol = eps * np.abs(exact.astype(np.float64)) + 2 * n * eps ** 2 * sum_abs
    return bool(((ulps(got, exact) <= 1) | (err <= tol))[fin].all())


# ---------------------------------------------------------- references

def sum_dtype(dt):
    return np.add.reduce(np.zeros(1, dt)).dtype.type


def prod_dtype(dt):
    return np.multiply.reduce(np.zeros(1, dt)).dtype.type


def rows_of(a2):
    return [np.ascontiguousarray(a2[m]) for m in range(a2.shape[0])]


def numpy_reduce(op, a2, r):
    """NumPy's answer row by row (1-D contiguous rows: NumPy's order)."""
    M = a2.shape[0]
    out = np.empty(M, r)
    with np.errstate(all="ignore"):
        for m, row in enumerate(rows_of(a2)):
            if op == ADD:
                out[m] = np.add.reduce(row, dtype=r)
            elif op == MUL:
                out[m] = np.multiply.reduce(row, dtype=r)
            elif op in (MIN, MAX):
                # NumPy's sequential rule (accumulate: equal values, i.e.
                # zeros of either sign, take the later one); reduce agrees
                # by value, its zero sign follows its SIMD lanes.
                uf = np.minimum if op == MIN else np.maximum
                out[m] = uf.accumulate(row)[-1]
                assert same(out[m:m + 1], np.array([uf.reduce(row)], r),
                            zero_sign=False)
            elif op == ARGMIN:
                out[m] = np.argmin(row)
            elif op == ARGMAX:
                out[m] = np.argmax(row)
            elif op == ALL:
                out[m] = np.all(row)
            else:
                out[m] = np.any(row)
    return out


def check_reduce(op, a2, r, label, wide=1):
    got = host_reduce(op, a2, r, wide)
    assert got is not None, label
    ref = numpy_reduce(op, a2, r)
    rd = np.dtype(r)
    if op == ADD and rd.kind == "f":
        exact = np.array([exact_sum(row.astype(r).astype(np.float64), r)
                          for row in rows_of(a2)], r)
        if rd == np.float32 and not wide:
            fin = np.isfinite(exact) & np.isfinite(got)
            assert same(got[~fin], exact[~fin], zero_sign=False), label
            absx = np.abs(np.where(np.isfinite(a2), a2, 0)).astype(np.float64)
            assert twosum_ok(got, exact, absx.sum(axis=1), a2.shape[1],
                             fin), label
        else:
            assert same(got, exact, zero_sign=False), (label, got, exact)
    elif op == MUL and rd.kind == "f":
        with np.errstate(all="ignore"):
            assert np.allclose(got, ref, rtol=1e-4 if rd == np.float32
                               else 1e-12, equal_nan=True), label
    else:
        assert same(got, ref), (label, got, ref)
    return got


# -------------------------------------------------------------- tests

@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", range(8), ids=OPNAMES)
def test_reduce_vs_numpy(dt, op, par):
    rng = np.random.default_rng(12 + 100 * code(dt) + op)
    r = {ADD: sum_dtype(dt), MUL: prod_dtype(dt), MIN: dt, MAX: dt,
         ARGMIN: np.int64, ARGMAX: np.int64, ALL: np.bool_,
         ANY: np.bool_}[op]
    identity = op in (ADD, MUL, ALL, ANY)
    n = 0
    for label, a2 in cases(dt, rng, with_empty=True):
        if a2.shape[1] == 0 and not identity:
            assert host_reduce(op, a2, r) is None, label
            continue
        if op == MUL and np.dtype(dt).kind == "f":
            a2 = near_one(a2)
        check_reduce(op, a2, r, label)
        n += 1
    assert n > 500


@pytest.mark.parametrize("t,r", [(np.int64, np.int32), (np.uint64, np.int8),
                                 (np.int32, np.float64), (np.int64, np.float32),
                                 (np.uint8, np.int8), (np.int16, np.uint16),
                                 (np.float64, np.float32),
                                 (np.float32, np.float64),
                                 (np.float64, np.int64), (np.float32, np.int16),
                                 (np.bool_, np.float32), (np.int8, np.uint64)],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", [ADD, MUL], ids=["add", "mul"])
def test_reduce_dtype_arg(t, r, op, par):
    """sum/prod(x, dtype=r): each element cast to r as NumPy casts it."""
    rng = np.random.default_rng(7 + code(t) * 11 + code(r))
    for kind in ("plain", "wrap"):
        for label, a2 in cases(t, rng, with_empty=False):
            if not label.startswith(kind):
                continue
            if np.dtype(t).kind == "f" and np.dtype(r).kind in "iu":
                a2 = np.clip(np.nan_to_num(a2), -100, 100).astype(t)
            if op == MUL and np.dtype(r).kind == "f":
                a2 = (1 + (np.abs(np.nan_to_num(a2)) % 3 == 1) * 0.5).astype(t)
                a2 = np.broadcast_to(a2, a2.shape)
            check_reduce(op, a2, r, label)


def test_float32_not_wide(par):
    """wide=0: float32 sums in float with TwoSum (1 ulp), products in float."""
    rng = np.random.default_rng(5)
    for label, a2 in cases(np.float32, rng, with_empty=False):
        check_reduce(ADD, a2, np.float32, label, wide=0)


@pytest.mark.parametrize("dt", [np.bool_, np.uint8, np.int32, np.float32,
                                np.float64], ids=lambda d: np.dtype(d).name)
def test_wide_columns(dt, par):
    """Column layouts wider than the stack scratch (512 segments: one heap
    block of up to 8192) and wider than one heap block."""
    rng = np.random.default_rng(31 + code(dt))
    for M, L in ((513, 5), (8300, 2)):
        for kind in ("special", "zeros"):
            base = values(dt, M * L, kind, rng).reshape(L, M)
            for a2 in (base.T, base[::-1].T):
                for op in range(8):
                    r = {ADD: sum_dtype(dt), MUL: prod_dtype(dt),
                         ARGMIN: np.int64, ARGMAX: np.int64, ALL: np.bool_,
                         ANY: np.bool_}.get(op, dt)
                    x = near_one(a2) if op == MUL and np.dtype(dt).kind == "f" \
                        else a2
                    check_reduce(op, x, r, "%dx%d %s" % (M, L, kind))
                for op in (ADD, MIN, MAX):
                    r = sum_dtype(dt) if op == ADD else dt
                    out = np.empty((L, M), r).T  # the same column layout
                    check_scan(op, a2, r, "%dx%d %s" % (M, L, kind),
                               exclusive=op == MAX, out=out)


ARG_BYTES = 4096  # csrc/host.c: argmin/argmax test a block's lanes per 4 KiB


def _arg_inputs(dt, rng):
    """1-D arrays around argmin/argmax's block edges: sizes across one to
    several ARG_BYTES blocks, starting 0-3 elements into an aligned buffer
    (the first block ends at an aligned address), with the extreme planted
    twice (the first index wins), NaNs planted (the first NaN wins, in any
    block), sorted (every block improves), and the dtype's own extremes
    (integers stop at them)."""
    dt = np.dtype(dt)
    per = ARG_BYTES // dt.itemsize
    sizes = sorted({1, 2, 5, per - 1, per, per + 1, 2 * per + 3,
                    3 * per + 7, 5 * per - 1})
    for n in sizes:
        for off in (0, 1, 3):
            buf = values(dt, n + off, "plain", rng)
            x = buf[off:]
            yield "plain n=%d off=%d" % (n, off), x
            if dt == np.bool_:
                z = np.zeros(n + off, dt)[off:]
                yield "false n=%d off=%d" % (n, off), z
                for i in {0, n // 2, n - 1, min(per, n - 1)}:
                    w = z.copy()
                    w[i] = True
                    yield "true@%d n=%d off=%d" % (i, n, off), w
                    yield "false@%d n=%d off=%d" % (i, n, off), ~w
                continue
            if dt.kind == "f":
                hi, lo = np.inf, -np.inf
            else:
                info = np.iinfo(dt)
                hi, lo = info.max, info.min
            for a, b in ((0, n - 1), (per - 1, per), (per, 2 * per + 1),
                         (n // 3, n // 3), (n - 1, n - 1)):
                if a >= n or b >= n:
                    continue
                for v in (hi, lo):
                    w = x.copy()
                    w[a] = v
                    w[b] = v
                    yield "ext %r@%d,%d n=%d off=%d" % (v, a, b, n, off), w
                if dt.kind == "f":
                    w = x.copy()
                    w[b] = np.nan
                    yield "nan@%d n=%d off=%d" % (b, n, off), w
                    w[a] = np.nan
                    yield "nan@%d,%d n=%d off=%d" % (a, b, n, off), w
                    w = x.copy()
                    w[a] = np.inf
                    w[b] = np.nan
                    yield "inf@%d nan@%d n=%d off=%d" % (a, b, n, off), w
            yield "up n=%d off=%d" % (n, off), np.sort(x)
            yield "down n=%d off=%d" % (n, off), np.sort(x)[::-1].copy()
            if dt.kind == "f":
                z = np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(dt)
                yield "zeros n=%d off=%d" % (n, off), z
                z[n // 2] = -1.0
                yield "zeros-1 n=%d off=%d" % (n, off), z


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_argminmax_blocks(dt, par):
    """argmin/argmax (csrc/host.c DEF_ARG): blocks of ARG_BYTES tested with
    one vector compare, searched again only when one holds a better
    element or a NaN: first index of the extreme (ties across and within
    blocks), first NaN, -0.0 == 0.0, integer extremes; contiguous rows,
    reversed and strided views (gathered in chunks: folds with base > 0)."""
    rng = np.random.default_rng(40 + code(dt))
    n = 0
    for label, x in _arg_inputs(dt, rng):
        for view, a in (("", x), (" rev", x[::-1]), (" step", np.repeat(x, 2)[::2])):
            for op, f in ((ARGMIN, np.argmin), (ARGMAX, np.argmax)):
                got = host_reduce(op, a.reshape(1, -1), np.int64)
                assert got[0] == f(a), (label + view, OPNAMES[op], got[0], f(a))
                n += 1
    assert n > 300


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_column_sums_exact(dt, par):
    """Column sums (fcompc: two vectors of columns at a time, 4 rows a step,
    a - b as fma(b, -1, a) in the x86-64-v3 clone): the correctly rounded
    sum of every column (float32 with wide=0 within the TwoSum bound), over
    widths that leave 0-3 vectors and lanes over and heights that leave
    0-3 rows over."""
    rng = np.random.default_rng(77 + code(dt))
    for M, L in ((4, 1001), (8, 7), (12, 403), (20, 66), (37, 250),
                 (520, 9), (1030, 6)):
        for kind in ("plain", "cancel", "wrap", "special"):
            base = values(dt, M * L, kind, rng).reshape(L, M)
            for a2 in (base.T, base[::-1].T):
                label = "%dx%d %s" % (M, L, kind)
                check_reduce(ADD, a2, dt, label)
                if dt == np.float32:
                    check_reduce(ADD, a2, dt, label, wide=0)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_lanes_sums_exact(dt, par):
    """A few interleaved columns of contiguous rows (M = 2, 4, 8; the real
    view (n, 2) of complex arrays: red_lanes, the lanes kernels -- TwoSum,
    AVX-512 Fast2Sum, float32 in double, float32 into a float64 TwoSum):
    the correctly rounded sum of every column (float32 with wide=0 within
    the TwoSum bound), over heights that leave every tail of the vectors
    and steps, and runs past a Ctrl-C block (4 MiB) and the prefetch's
    reach; M = 3 (not a lanes width) as the column kernels."""
    rng = np.random.default_rng(91 + code(dt))
    shapes = [(M, L) for M in (2, 4, 8) for L in (1, 2, 3, 5, 17, 64, 1001)]
    shapes += [(3, 1001), (2, 300001 if dt == np.float64 else 600001)]
    for M, L in shapes:
        for kind in ("plain", "cancel", "wrap", "special"):
            if L > 10000 and kind != "cancel":
                continue
            base = values(dt, M * L, kind, rng).reshape(L, M)
            label = "%dx%d %s" % (M, L, kind)
            check_reduce(ADD, base.T, dt, label)
            if dt == np.float32 and L < 10000:
                check_reduce(ADD, base.T, np.float64, label + " f64")
                check_reduce(ADD, base.T, dt, label, wide=0)


def test_zero_signs_and_nan(par):
    f = np.float64
    for x in ([0.0, -0.0], [-0.0, 0.0], [1.0, -0.0, 2.0, 0.0, 3.0],
              [-0.0, 1.0, 2.0], [np.nan, 1.0], [1.0, np.nan], [0.0, -0.0] * 9):
        for dt in FLOATS:
            for n in (0, 1, 40, 700):  # padding: vector, tail, block paths
                for pad in (5.0, -5.0):
                    a = np.array([pad] * n + x + [pad] * (n // 3), dt)
                    for op, uf in ((MIN, np.minimum), (MAX, np.maximum)):
                        ref = uf.accumulate(a)[-1]
                        assert same(host_reduce(op, a.reshape(1, -1), dt),
                                    np.array([ref], dt)), (x, n, pad, op)
                        col = np.ascontiguousarray(np.stack([a] * 5, 1)).T
                        assert same(host_reduce(op, col, dt),
                                    np.array([ref] * 5, dt)), (x, n, pad, op)
    z = np.array([-0.0, -0.0], f).reshape(1, 2)
    assert np.signbit(host_reduce(ADD, z, f)[0]) == np.signbit(np.sum(z))
    assert host_reduce(ARGMAX, np.array([[0.0, np.nan, np.nan]]), np.int64)[0] == 1
    assert host_reduce(ANY, np.array([[-0.0, 0.0]]), np.bool_)[0] == 0
    assert host_reduce(ANY, np.array([[0.0, np.nan]]), np.bool_)[0] == 1
    assert host_reduce(ALL, np.array([[1.0, np.nan]]), np.bool_)[0] == 1


def test_minmax_nan_at_every_position(par):
    """min/max and argmin/argmax rows (the AVX-512 folds where the CPU has
    them: one vmaxps a vector, NaNs found two vectors at a time): a NaN at
    every position of rows around the 4-vector step and the tail, beside
    +-inf, the extreme at every position and ties, equal NumPy's."""
    rng = np.random.default_rng(3)
    for dt in FLOATS:
        for n in (1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129,
                  200):
            base = rng.standard_normal(n).astype(dt)
            rows = []
            for i in range(n):
                a = base.copy()
                a[i] = np.nan
                rows.append(a)
                b = base.copy()
                b[i] = np.inf if i % 2 else -np.inf
                rows.append(b)
                c = base.copy()
                c[i] = 1e30 if i % 2 else -1e30
                rows.append(c)
            a2 = np.ascontiguousarray(np.stack(rows))
            for op, uf in ((MIN, np.minimum), (MAX, np.maximum)):
                ref = uf.reduce(a2, axis=1)
                got = host_reduce(op, a2, dt)
                assert same(got, ref, zero_sign=False), (dt, n, op)
            # ties too: the extreme twice, the first index wins
            t2 = np.concatenate([a2, np.ascontiguousarray(
                np.stack([np.where(np.arange(n) % 5 == 0, 9.0, base)
                          .astype(dt)] * 2))])
            for op, fn in ((ARGMIN, np.argmin), (ARGMAX, np.argmax)):
                for x in (a2, t2, -t2):
                    got = host_reduce(op, np.ascontiguousarray(x), np.int64)
                    assert (got == fn(x, axis=1)).all(), (dt, n, op)


def test_minmax_every_alignment(par):
    """The AVX-512 min/max folds reach a 64-byte boundary with scalar
    steps first: rows starting at every 4-byte offset, the extreme, a NaN
    and -0.0/+0.0 in those first steps or past them, equal NumPy's."""
    rng = np.random.default_rng(5)
    for dt in FLOATS:
        buf = rng.standard_normal(4096 + 64).astype(dt)
        for k in range(0, 64 // np.dtype(dt).itemsize + 1):
            for pos in (0, 1, 3, 7, 15, 16, 40, 2000):
                for val in (np.nan, 50.0, -50.0, np.inf):
                    a = buf[k:k + 4096]
                    saved = a[pos]
                    a[pos] = val
                    x = a.reshape(1, -1)
                    for op, uf in ((MIN, np.minimum), (MAX, np.maximum)):
                        got = host_reduce(op, x, dt)
                        assert same(got, uf.reduce(x, axis=1), zero_sign=False), \
                            (dt, k, pos, val, op)
                    a[pos] = saved


def test_unsupported_writes_nothing():
    x = np.arange(10, dtype=np.int32).reshape(1, 10)
    assert host_reduce(MIN, x, np.int64) is None         # min keeps t
    assert host_reduce(ARGMIN, x, np.int32) is None      # arg -> int64
    assert host_reduce(ALL, x, np.int64) is None         # all -> bool
    assert host_reduce(ADD, x, np.bool_) is None
    assert host_reduce(MIN, x[:, :0], np.int32) is None  # no identity
    assert host_reduce(ARGMAX, x[:, :0], np.int64) is None
    o = HostOp(99, 5, 5, 1)
    out = np.zeros(1, np.int32)
    assert LIB.gr_host_reduce(ctypes.byref(o), x.ctypes.data, 1, 10, 10, 1,
                              out.ctypes.data) == -1
    assert host_scan(ALL, x, np.bool_) is None
    assert host_scan(MIN, x, np.int64) is None
    assert host_scan(ADD, x, np.bool_) is None


def test_input_not_modified():
    rng = np.random.default_rng(3)
    for dt in DTYPES:
        x = values(dt, 3000, "special", rng).reshape(30, 100)
        before = x.copy()
        for op in range(8):
            r = {ADD: sum_dtype(dt), MUL: prod_dtype(dt), ARGMIN: np.int64,
                 ARGMAX: np.int64, ALL: np.bool_, ANY: np.bool_}.get(op, dt)
            host_reduce(op, x, r)
            host_reduce(op, x.T, r)
        assert same(x, before)


# ------------------------------------------------------------------ scans

def numpy_scan(op, a2, r, exclusive):
    M, L = a2.shape
    out = np.empty((M, L), r)
    with np.errstate(all="ignore"):
        for m, row in enumerate(rows_of(a2)):
            if op == ADD:
                full = np.cumsum(row, dtype=r)
            elif op == MUL:
                full = np.cumprod(row, dtype=r)
            elif op == MIN:
                full = np.minimum.accumulate(row)
            else:
                full = np.maximum.accumulate(row)
            if exclusive and L:
                out[m, 0] = identity(op, r)
                out[m, 1:] = full[:-1]
            else:
                out[m] = full
    return out


def identity(op, r):
    rd = np.dtype(r)
    if op == ADD:
        return rd.type(0)
    if op == MUL:
        return rd.type(1)
    if rd.kind == "f":
        return rd.type(np.inf if op == MIN else -np.inf)
    if rd == np.bool_:
        return op == MIN
    info = np.iinfo(rd)
    return rd.type(info.max if op == MIN else info.min)


def out_layouts(M, L, r):
    """Output views of shape (M, L): C, column-major, reversed, strided."""
    yield np.empty((M, L), r)
    yield np.empty((L, M), r).T
    yield np.empty((M, L), r)[::-1, ::-1]
    yield np.empty((M, 2 * L), r)[:, ::2]


def check_scan(op, a2, r, label, exclusive=False, wide=1, out=None):
    got = host_scan(op, a2, r, exclusive, wide, out)
    assert got is not None, label
    rd = np.dtype(r)
    if op == ADD and rd.kind == "f":
        ref = np.empty(a2.shape, r)
        for m, row in enumerate(rows_of(a2)):
            full = exact_cumsum(row.astype(r).astype(np.float64), r)
            if exclusive and a2.shape[1]:
                ref[m, 0] = 0
                ref[m, 1:] = full[:-1]
            else:
                ref[m] = full
        if rd == np.float32:
            # wide: exactly the exact prefix rounded, except where
            # cancellation (+-1e6 terms) left rounding error in the double
            # prefix (as on the device): there 1 ulp, or the bound of a
            # double sum, u_f32 |S_i| + i u_f64 sum_j<=i |x_j|.  Not wide:
            # the float32 TwoSum bound.
            fin = np.isfinite(ref) & np.isfinite(got)
            assert same(got[~fin], ref[~fin], zero_sign=False), label
            absx = np.abs(np.where(np.isfinite(a2), a2, 0)).astype(np.float64)
            cabs = np.cumsum(absx, axis=1)
            i = np.arange(1, a2.shape[1] + 1)
            if not wide:
                assert twosum_ok(got, ref, cabs, i, fin), label
            elif label.startswith("cancel"):
                err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
                tol = np.finfo(np.float32).eps * np.abs(ref) + \
                    i * np.finfo(np.float64).eps * cabs
                assert ((ulps(got, ref) <= 1) | (err <= tol))[fin].all(), label
            else:
                assert same(got, ref, zero_sign=False), (label, got, ref)
        else:
            assert same(got, ref, zero_sign=False), (label, got, ref)
    elif op == MUL and rd.kind == "f":
        ref = numpy_scan(op, a2, r, exclusive)
        with np.errstate(all="ignore"):
            assert np.allclose(got, ref, rtol=1e-4 if rd == np.float32
                               else 1e-12, equal_nan=True), label
    else:
        ref = numpy_scan(op, a2, r, exclusive)
        assert same(got, ref), (label, got, ref)
    return got


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", [ADD, MUL, MIN, MAX],
                         ids=["cumsum", "cumprod", "cummin", "cummax"])
def test_scan_vs_numpy(dt, op, par):
    rng = np.random.default_rng(21 + code(dt) * 10 + op)
    r = {ADD: np.cumsum(np.zeros(1, dt)).dtype.type,
         MUL: np.cumprod(np.zeros(1, dt)).dtype.type}.get(op, dt)
    n = 0
    for label, a2 in cases(dt, rng, with_empty=True):
        if np.dtype(dt).kind == "f" and label.startswith(("cancel", "wrap")) \
                and a2.size > 3000:
            continue  # the exact prefix reference is slow on big cases
        if op == MUL and np.dtype(dt).kind == "f":
            a2 = near_one(a2)
        exclusive = n % 3 == 1
        M, L = a2.shape
        outs = list(out_layouts(M, L, r))
        check_scan(op, a2, r, label, exclusive, out=outs[n % len(outs)])
        n += 1
    assert n > 500


@pytest.mark.parametrize("t,r", [(np.int32, np.float64), (np.int64, np.int16),
                                 (np.float64, np.float32), (np.bool_, np.int8),
                                 (np.float32, np.int64), (np.uint16, np.int64)],
                         ids=lambda d: np.dtype(d).name)
def test_scan_dtype_arg(t, r, par):
    rng = np.random.default_rng(code(t) + 50 * code(r))
    for label, a2 in cases(t, rng, with_empty=False):
        if not label.startswith(("plain", "wrap")) or a2.size > 3000:
            continue
        if np.dtype(t).kind == "f" and np.dtype(r).kind in "iu":
            a2 = np.clip(np.nan_to_num(a2), -100, 100).astype(t)
        check_scan(ADD, a2, r, label)


def test_scan_float32_not_wide(par):
    rng = np.random.default_rng(9)
    for label, a2 in cases(np.float32, rng, with_empty=False):
        if a2.size <= 2000:
            check_scan(ADD, a2, np.float32, label, wide=0)
            check_scan(MUL, near_one(a2), np.float32, label, wide=0)


def test_scan_negative_zero(par):
    for dt in FLOATS:
        for wide in (0, 1):
            x = np.array([[-0.0, 1.0]], dt)
            got = host_scan(ADD, x, dt, wide=wide)
            assert same(got, np.cumsum(x, axis=1)), got
            z = np.full((1, 50), -0.0, dt)
            assert np.signbit(host_scan(ADD, z, dt, wide=wide)).all()
            assert np.signbit(host_scan(ADD, z.T.copy().T, dt, wide=wide)).all()
            # exclusive: the identity 0.0 first, then the inclusive prefixes
            got = host_scan(ADD, x, dt, exclusive=True, wide=wide)
            assert same(got, np.array([[0.0, -0.0]], dt)), got
        m = np.array([[0.0, -0.0, 0.0, np.nan, -1.0]], dt)
        assert same(host_scan(MIN, m, dt), np.minimum.accumulate(m, axis=1))
        assert same(host_scan(MAX, m, dt), np.maximum.accumulate(m, axis=1))


# ------------------------------------------------------ against the device

def device_reduce(op, a2, r):
    f = {ADD: gpured.sum, MUL: gpured.prod, MIN: gpured.min, MAX: gpured.max,
         ARGMIN: gpured.argmin, ARGMAX: gpured.argmax, ALL: gpured.all,
         ANY: gpured.any}[op]
    if op in (ADD, MUL):
        return np.asarray(f(a2, axis=1, dtype=r))
    return np.asarray(f(a2, axis=1))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reduce_vs_device(dt):
    """The host path gives the device's answer (gpured's public API on the
    current device): identical, zero signs of min/max compared by value."""
    rng = np.random.default_rng(77 + code(dt))
    if dt == np.float64 and not gpured.get_device()["fp64"]:
        pytest.skip("device without fp64")
    n = 0
    for label, a2 in cases(dt, rng, with_empty=False):
        if "bcast" in label:
            continue
        for op in range(8):
            r = {ADD: sum_dtype(dt), MUL: prod_dtype(dt), ARGMIN: np.int64,
                 ARGMAX: np.int64, ALL: np.bool_, ANY: np.bool_}.get(op, dt)
            if op == MUL and np.dtype(dt).kind == "f":
                continue  # products round in a different order
            got = host_reduce(op, a2, r)
            dev = device_reduce(op, a2, r)
            assert same(got, dev, zero_sign=op not in (MIN, MAX, ADD)), \
                (OPNAMES[op], label, got, dev)
            n += 1
    assert n > 1000


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8, np.float32,
                                np.float64], ids=lambda d: np.dtype(d).name)
def test_scan_vs_device(dt):
    """Scans: integers and cummin/cummax identical to the device; float
    cumsums within the device's documented error (float32: its run-local
    float32 partial sums; the host rounds each double prefix once)."""
    if dt == np.float64 and not gpured.get_device()["fp64"]:
        pytest.skip("device without fp64")
    rng = np.random.default_rng(99 + code(dt))
    fns = {ADD: gpured.cumsum, MUL: gpured.cumprod, MIN: gpured.cummin,
           MAX: gpured.cummax}
    exact = total = nsum = 0
    for label, a2 in cases(dt, rng, with_empty=False):
        if "bcast" in label:
            continue
        for op in (ADD, MIN, MAX) + ((MUL,) if np.dtype(dt).kind != "f" else ()):
            r = np.cumsum(np.zeros(1, dt)).dtype.type if op == ADD else dt
            if op == MUL:
                r = np.cumprod(np.zeros(1, dt)).dtype.type
            got = host_scan(op, a2, r)
            dev = np.asarray(fns[op](a2, axis=1))
            if op == ADD and np.dtype(dt).kind == "f":
                fin = np.isfinite(got) & np.isfinite(dev)
                assert same(got[~fin], dev[~fin], zero_sign=False), label
                absx = np.abs(np.where(np.isfinite(a2), a2, 0)).astype(np.float64)
                # device bound: u_r |S| + 32 u_r (run of <= 32) + tiny
                u = np.finfo(r).eps / 2
                tol = 2 * u * np.abs(got.astype(np.float64)) + \
                    34 * u * np.maximum.accumulate(absx, axis=1) + \
                    1e-13 * np.cumsum(absx, axis=1)
                with np.errstate(invalid="ignore"):
                    err = np.abs(got.astype(np.float64) - dev.astype(np.float64))
                assert (err[fin] <= tol[fin]).all(), label
                exact += int(same(got, dev, zero_sign=False))
                nsum += 1
            else:
                assert same(got, dev, zero_sign=op not in (MIN, MAX)), \
                    (OPNAMES[op], label, got, dev)
            total += 1
    if nsum:
        print("\n%s cumsums identical to the device: %d of %d; other scans "
              "identical: %d" % (np.dtype(dt).name, exact, nsum, total - nsum))
    else:
        print("\n%s scans identical to the device: %d" % (np.dtype(dt).name,
                                                          total))


def test_device_zero_signs():
    """Where the host follows NumPy and today's device does not (the other
    tests compare these by value): min/max of mixed-sign zeros (NumPy's
    sequential rule and the host take the later of equal values; the device
    keeps the first within a work-item's run, e.g. min([0.0, -0.0]) is 0.0
    there) and a cumsum prefix of -0.0 (NumPy and the host keep -0.0; the
    device computes 0.0 + -0.0 = 0.0)."""
    x = np.array([[0.0, -0.0]])
    assert np.signbit(host_reduce(MIN, x, np.float64)[0])
    assert np.signbit(np.min(x))
    assert np.signbit(host_scan(ADD, np.array([[-0.0, 1.0]]),
                                np.float64)[0, 0])


LIB.gr_host_count.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                              ctypes.c_ssize_t, ctypes.c_int]
LIB.gr_host_count.restype = ctypes.c_uint64


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint64])
def test_host_count(dtype):
    """gr_host_count (count_nonzero's and nanvar's counts on the host)
    against NumPy: contiguous rows past the vector loop's 2^24-element
    flush, odd tails, strided and reversed rows, NaN (nonzero, not
    valid), -0.0 (zero)."""
    rng = np.random.default_rng(5)
    dt = np.dtype(dtype)
    n = (1 << 24) + 37 if dt.itemsize == 4 else 300007
    a = (rng.random(n) * 3).astype(dt)
    if dt.kind == "f":
        a[rng.random(n) < 0.1] = np.nan
        a[rng.random(n) < 0.1] = -0.0
    for x in (a, a[:17], a[5:], a[::3], a[::-2]):
        es = x.strides[0] // dt.itemsize
        nz = LIB.gr_host_count(x.ctypes.data, code(dt), x.size, es, 0)
        assert nz == np.count_nonzero(x), (dt, x.size, es)
        valid = LIB.gr_host_count(x.ctypes.data, code(dt), x.size, es, 1)
        assert valid == (np.count_nonzero(~np.isnan(x)) if dt.kind == "f" else x.size)
