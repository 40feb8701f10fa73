"""User-defined reductions (gpured.ReductionKernel) and the fused
built-ins on them (dot, vdot, logsumexp) against NumPy.

Each distinct (operator, types, variant knobs) is one program build, so
the cross product is sampled: several kernels over several dtypes, axes,
layouts (host arrays, device Arrays, views, broadcast inputs, scalars),
empty inputs (the identity through the post-map), keepdims / out=, and
every variant legal for a user operator that this device runs.
"""
import numpy as np
import pytest

import gpured
from conftest import HAS_FP64

F64 = np.float64 if HAS_FP64 else np.float32
RNG = np.random.default_rng(42)

SUM = gpured.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "usum")
L2 = gpured.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)",
                            "0", "l2norm")
DOT = gpured.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0",
                             "udot")
UMAX = gpured.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a",
                              "-INFINITY", "umax")
MEAN = gpured.ReductionKernel("T x", "T y", "x", "a + b",
                              "y = a / _in_ind.size()", "0", "umean")


def _data(shape, dt, lo=-2, hi=2):
    if np.dtype(dt).kind == "f":
        return RNG.uniform(lo, hi, shape).astype(dt)
    return RNG.integers(lo, hi + 8, shape).astype(dt)


def _close(got, want, dt):
    got = np.asarray(got)
    if np.dtype(dt).kind == "f":
        tol = 2e-5 if np.dtype(dt) == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", [np.float32, np.int64])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1, 2)])
def test_sum_axes(dt, axis):
    x = _data((5, 33, 17), dt)
    want = np.sum(x, axis=axis, dtype=dt)
    _close(SUM(x, axis=axis), want, dt)


@pytest.mark.parametrize("n", [1, 2, 1000, 100_003])
def test_1d_sizes(n):
    x = _data(n, np.float32)
    _close(SUM(x), np.sum(x.astype(np.float64)), np.float32)
    _close(L2(x), np.linalg.norm(x.astype(np.float64)), np.float32)
    _close(UMAX(x), np.max(x), np.float32)
    _close(MEAN(x), np.mean(x.astype(np.float64)), np.float32)


def test_device_arrays_and_views():
    x = _data((64, 257), np.float32)
    d = gpured.to_device(x)
    r = L2(d, axis=1)
    assert isinstance(r, gpured.Array)
    _close(r.get(), np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=1)),
           np.float32)
    # a transposed view (columns) and a sliced view (an offset)
    _close(SUM(d.T, axis=1).get(), x.sum(axis=0), np.float32)
    _close(SUM(d[3:], axis=0).get(), x[3:].sum(axis=0), np.float32)
    r0 = SUM(d)
    assert isinstance(r0, gpured.Array) and r0.shape == ()
    _close(r0.get(), x.astype(np.float64).sum(), np.float32)


def test_broadcast_and_scalars():
    x = _data((40, 30), np.float32)
    y = _data((30,), np.float32)
    _close(DOT(x, y, axis=1), (x * y).sum(axis=1), np.float32)
    _close(DOT(gpured.to_device(x), gpured.to_device(y[None, :]), axis=0).get(),
           (x * y).sum(axis=0), np.float32)
    axpy = gpured.ReductionKernel("T x, T alpha", "T y", "alpha * x", "a + b",
                                  "y = a", "0", "scaled")
    _close(axpy(x, np.float32(3.0), axis=0), (3 * x).sum(axis=0), np.float32)


def test_keepdims_out():
    x = _data((6, 7, 8), np.float32)
    r = SUM(x, axis=(0, 2), keepdims=True)
    assert r.shape == (1, 7, 1)
    _close(r, x.sum(axis=(0, 2), keepdims=True), np.float32)
    out = np.zeros(7, np.float32)
    assert SUM(x, axis=(0, 2), out=out) is out
    _close(out, x.sum(axis=(0, 2)), np.float32)
    dout = gpured.zeros((6,), np.float32)
    assert SUM(gpured.to_device(x), axis=(1, 2), out=dout) is dout
    _close(dout.get(), x.sum(axis=(1, 2)), np.float32)


def test_empty_identity():
    x = np.zeros((4, 0), np.float32)
    _close(SUM(x, axis=1), np.zeros(4, np.float32), np.float32)
    assert UMAX(np.zeros(0, np.float32)) == -np.inf
    assert SUM(np.zeros((0, 3), np.float32), axis=0).tolist() == [0, 0, 0]
    assert SUM(np.zeros((0, 3), np.float32), axis=1).shape == (0,)


def test_types_and_errors():
    cnt = gpured.ReductionKernel("T x", "int64 n", "x != 0", "a + b", "n = a",
                                 "0", "nonzero")
    x = _data((50, 9), np.int8)
    _close(cnt(x, axis=0), np.count_nonzero(x, axis=0), np.int64)
    mixed = gpured.ReductionKernel("T x, U y", "float32 z", "x * y", "a + b",
                                   "z = a", "0", "mixed",
                                   reduce_type="float64" if HAS_FP64 else None)
    a, b = _data(100, np.int16), _data(100, np.float32)
    _close(mixed(a, b), np.dot(a.astype(np.float64), b), np.float32)
    with pytest.raises(TypeError):
        DOT(np.zeros(3, np.float32), np.zeros(3, np.int32))
    with pytest.raises(TypeError):
        SUM(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError):
        gpured.ReductionKernel("T x y", "T z", "x", "a", "z = a", "0")
    with pytest.raises(gpured.VariantUnavailable):
        SUM(np.ones(10, np.float32), variant="atomic")


def test_variants():
    x = _data((3, 20_000), np.float32)
    want = x.astype(np.float64).sum(axis=1)
    ran = 0
    for v in gpured.ReductionKernel.variants():
        try:
            got = L2(x, axis=1, variant=v, groups=3)
        except gpured.VariantUnavailable:
            continue
        ran += 1
        _close(got, np.sqrt((x.astype(np.float64) ** 2).sum(axis=1)),
               np.float32)
        if v in ("naive", "stride_global", "chunked"):
            _close(SUM(x, axis=1, variant=v), want, np.float32)
    assert ran >= 8
    for knobs in ({"vw": 4, "ilp": 2}, {"vw": 2, "wg_size": 64},
                  {"groups": 5, "vw": 1}):
        _close(DOT(x, x, axis=1, variant="vector", **knobs),
               (x.astype(np.float64) ** 2).sum(axis=1), np.float32)


def test_strided_layout_variants():
    """Columns (elements a row apart): the group kernels read a segment's
    elements side by side, so a named one is refused with the reason;
    auto and segment_per_item give NumPy's sums."""
    x = _data((9, 300), np.float32)
    want = x.astype(np.float64).sum(axis=0)
    _close(SUM(x, axis=0), want, np.float32)
    _close(SUM(x, axis=0, variant="segment_per_item"), want, np.float32)
    for v in ("vector", "naive", "chunked"):
        with pytest.raises(gpured.VariantUnavailable, match="contiguously"):
            SUM(x, axis=0, variant=v)


def test_explain_timeit_tune():
    x = _data((3, 20_000), np.float32)  # test_variants' programs
    want = np.linalg.norm(x.astype(np.float64), axis=1)
    p = L2.explain(x, axis=1)
    assert p["variant"] in gpured.ReductionKernel.variants()
    assert p == gpured.explain(L2, x, axis=1)
    t = L2.timeit(x, axis=1, reps=2, variant="chunked")
    assert t["seconds"] > 0 and t["plan"]["variant"] == "chunked"
    _close(t["result"].get(), want, np.float32)
    assert gpured.timeit(L2, x, axis=1, reps=2)["plan"]["variant"] == \
        p["variant"]
    found = L2.tune(x, axis=1, reps=1)
    assert "chunked" in found and "atomic" not in found
    assert L2._variant == min(found, key=found.get)
    L2._variant = None


# ---------------------------------------------------------------- dot

@pytest.mark.parametrize("da,db", [(np.float32, np.float32), (F64, F64),
                                   (np.int32, np.int32), (np.int8, np.int64),
                                   (np.float32, np.int32), (np.bool_, np.bool_)])
def test_dot(da, db):
    a, b = _data(5003, da, 0, 1), _data(5003, db, 0, 1)
    want = np.dot(a, b)
    got = gpured.dot(a, b)
    assert np.asarray(got).dtype == want.dtype
    _close(got, want, want.dtype)
    dg = gpured.dot(gpured.to_device(a), gpured.to_device(b))
    _close(dg.get(), want, want.dtype)
    _close(gpured.vdot(a, b), np.vdot(a, b), want.dtype)


def test_dot_errors():
    with pytest.raises(ValueError):
        gpured.dot(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError):
        gpured.dot(np.ones(3), np.ones(2))
    with pytest.raises(ValueError):
        gpured.vdot(np.ones(2, np.complex64), np.ones(3, np.complex64))
    assert gpured.dot(np.zeros(0, np.float32), np.zeros(0, np.float32)) == 0
    _close(gpured.vdot(np.ones((2, 3)), np.ones((2, 3))), 6.0, np.float64)


@pytest.mark.parametrize("da,db", [(np.complex64, np.complex64),
                                   (np.complex128, np.complex128),
                                   (np.float32, np.complex64),
                                   (np.complex128, np.float64)])
def test_dot_complex(da, db):
    """dot / vdot of complex (and mixed) vectors: NumPy's dtype, within a
    few ulps of the products' magnitudes; vdot conjugates a; device Arrays
    give 0-d Arrays."""
    rng = np.random.default_rng(7)

    def vec(dt):
        x = rng.standard_normal(4001)
        if np.dtype(dt).kind == "c":
            x = x + 1j * rng.standard_normal(4001)
        return x.astype(dt)
    a, b = vec(da), vec(db)
    eps = np.finfo(np.result_type(da, db)).eps
    scale = float(np.sum(np.abs(a.astype(complex)) * np.abs(b.astype(complex))))
    for f in ("dot", "vdot"):
        want = getattr(np, f)(a, b)
        for x, y in ((a, b), (gpured.to_device(a), gpured.to_device(b))):
            got = getattr(gpured, f)(x, y)
            g = got.get() if isinstance(got, gpured.Array) else got
            assert np.asarray(g).dtype == np.asarray(want).dtype, f
            assert abs(complex(g) - complex(want)) <= 16 * eps * scale, f


# ---------------------------------------------------------- logsumexp

def _lse(x, axis=None, keepdims=False):
    """scipy.special.logsumexp's semantics, in float64 NumPy."""
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis) if axis is not None \
        else r.reshape(())


@pytest.mark.parametrize("dt", [np.float32, F64])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_logsumexp(dt, axis):
    x = _data((37, 1001), dt, -50, 50)
    got = gpured.logsumexp(x, axis=axis)
    assert np.asarray(got).dtype == dt
    _close(got, _lse(x, axis), dt)
    d = gpured.logsumexp(gpured.to_device(x), axis=axis, keepdims=True)
    _close(d.get(), _lse(x, axis, keepdims=True), dt)


def test_logsumexp_edges():
    inf, nan = np.inf, np.nan
    rows = [[-inf, -inf, -inf], [inf, 1.0, 2.0], [inf, -inf, 0.0],
            [nan, 1.0, 2.0], [1.0, nan, inf], [-inf, 3.0, -inf],
            [1000.0, 1000.0, -1000.0], [inf, inf, 1.0]]
    x = np.array(rows, np.float32)
    with np.errstate(invalid="ignore"):
        want = _lse(x, axis=1)
    got = gpured.logsumexp(x, axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert gpured.logsumexp(np.zeros(0, np.float32)) == -np.inf
    assert gpured.logsumexp(np.arange(5)) == pytest.approx(
        float(_lse(np.arange(5))))
    for v in ("naive", "chunked", "stride_global", "vector", "segment_per_item"):
        try:
            r = gpured.logsumexp(x, axis=1, variant=v)
        except gpured.VariantUnavailable:
            continue
        np.testing.assert_allclose(r, want, rtol=1e-6)


# --------------------------------------------------------------- scans

CUMSUM = gpured.ScanKernel("T x", "T y", "x", "a + b", "0", "ucumsum")
CUMMAX = gpured.ScanKernel("T x", "T y", "x", "max(a, b)", "-INFINITY",
                           "ucummax")
# an affine recurrence y_i = c_i y_{i-1} + d_i as a scan of (c, d) pairs
# would need a two-part state; a non-commutative one-part operator: the
# last non-zero element so far
LASTNZ = gpured.ScanKernel("T x", "T y", "x", "b != 0 ? b : a", "0", "lastnz")


def _lastnz(x, axis):
    out = np.array(x, copy=True)
    idx = np.where(x != 0, np.arange(x.shape[axis]).reshape(
        [-1 if i == axis else 1 for i in range(x.ndim)]), 0)
    idx = np.maximum.accumulate(idx, axis=axis)
    got = np.take_along_axis(x, idx, axis=axis)
    out[...] = got
    return out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_scan_inclusive_exclusive(axis, exclusive):
    x = _data((7, 300), np.int32, -3, 3)
    want = np.cumsum(x, axis=axis, dtype=np.int32)
    if exclusive:
        flat = want.reshape(-1) if axis is None else want
        ax = 0 if axis is None else axis
        want = np.concatenate([np.zeros_like(np.take(flat, [0], axis=ax)),
                               np.delete(flat, -1, axis=ax)], axis=ax)
    got = CUMSUM(x, axis=axis, exclusive=exclusive)
    np.testing.assert_array_equal(got, want)


def test_scan_ops_dtypes_device():
    y = _data((5, 2000), np.float32)
    np.testing.assert_array_equal(CUMMAX(y, axis=1),
                                  np.maximum.accumulate(y, axis=1))
    d = gpured.to_device(y)
    r = CUMMAX(d, axis=0)
    assert isinstance(r, gpured.Array) and r.shape == y.shape
    np.testing.assert_array_equal(r.get(), np.maximum.accumulate(y, axis=0))
    z = _data((4, 999), np.int64, -1, 1) * (RNG.random((4, 999)) < 0.3)
    np.testing.assert_array_equal(LASTNZ(z, axis=1), _lastnz(z, 1))
    f = _data(5000, F64)
    np.testing.assert_allclose(CUMSUM(f), np.cumsum(f), rtol=1e-9, atol=1e-9)
    sq = gpured.ScanKernel("float32 x", "float64 y", "x * x", "a + b", "0",
                           "cumsq") if HAS_FP64 else None
    if sq is not None:
        np.testing.assert_allclose(sq(y[0]), np.cumsum(y[0].astype(np.float64) ** 2),
                                   rtol=1e-6)
    assert CUMSUM(np.zeros((3, 0), np.int32), axis=1).shape == (3, 0)


def test_scan_variants():
    x = _data(70_000, np.int32, -3, 3)
    want = np.cumsum(x, dtype=np.int32)
    z = _data(70_000, np.int32, -1, 1) * (RNG.random(70_000) < 0.2)
    ran = []
    # every variant with the non-commutative operator (one program each)
    for v in gpured.ScanKernel.variants():
        try:
            got = LASTNZ(z, variant=v)
        except gpured.VariantUnavailable:
            continue
        ran.append(v)
        np.testing.assert_array_equal(got, _lastnz(z, 0))
    assert "decoupled_lookback" in ran and "naive" in ran
    # many tiles: the look-back chain carries a non-commutative prefix
    np.testing.assert_array_equal(CUMSUM(x), want)
    # (CPU devices: tiles of 512; a GPU's default tiles already make 9)
    tiles = {} if gpured.get_device()["type"] == "GPU" else {"items": 512}
    np.testing.assert_array_equal(
        LASTNZ(z, variant="decoupled_lookback", **tiles), _lastnz(z, 0))
    np.testing.assert_array_equal(
        LASTNZ(z, variant="reduce_then_scan", wg_size=64 if tiles == {} else 8,
               items=4),
        _lastnz(z, 0))
    p = CUMSUM.explain(x)
    assert p["variant"] in gpured.ScanKernel.variants()
    t = CUMSUM.timeit(x, reps=1)
    np.testing.assert_array_equal(t["result"].get(), want)
    with pytest.raises(gpured.VariantUnavailable):
        CUMSUM(x, variant="workgroup")


# ------------------------------------------------------ scans by key

def _by_key_ref(keys, x, op, ident, exclusive, dt):
    """thrust::inclusive/exclusive_scan_by_key as a NumPy loop."""
    out = np.empty(len(x), dt)
    acc = None
    for i in range(len(x)):
        if i == 0 or keys[i] != keys[i - 1]:
            acc = None
        if exclusive:
            out[i] = ident if acc is None else acc
            acc = dt.type(x[i]) if acc is None else op(acc, x[i])
        else:
            acc = dt.type(x[i]) if acc is None else op(acc, x[i])
            out[i] = acc
    return out


def _runs(n, long_every=0):
    """Keys of random runs (1 .. 40 elements, and a run over 3000 now and
    then: runs across tiles and work-groups)."""
    lens = []
    while sum(lens) < n:
        if long_every and RNG.random() < 1 / long_every:
            lens.append(int(RNG.integers(2000, 4000)))
        else:
            lens.append(int(RNG.integers(1, 40)))
    keys = np.repeat(RNG.integers(0, 5, len(lens)), lens)[:n]
    return keys


KSUM = gpured.ScanKernel("T x", "T y", "x", "a + b", "0", "ksum")
KMAX = gpured.ScanKernel("T x", "T y", "x", "max(a, b)", "-INFINITY", "kmax")
KLAST = gpured.ScanKernel("T x", "T y", "x", "b != 0 ? b : a", "0", "klast")


def _lastnz_op(a, b):
    return b if b != 0 else a


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("kern,dt,kt,ref,ident", [
    (KSUM, np.int32, np.int64, lambda a, b: a + b, 0),
    (KMAX, np.float32, np.uint8, max, -np.inf),
    (KLAST, np.int16, np.int16, _lastnz_op, 0),
])
def test_by_key_ops(kern, dt, kt, ref, ident, exclusive):
    dt = np.dtype(dt)
    n = 9000
    keys = _runs(n, long_every=60).astype(kt)
    x = _data(n, dt, -3, 3)
    if kern is KLAST:
        x = (x * (RNG.random(n) < 0.3)).astype(dt)
    want = _by_key_ref(keys, x, ref, ident, exclusive, dt)
    got = kern.by_key(keys, x, exclusive=exclusive)
    assert isinstance(got, np.ndarray) and got.dtype == dt
    np.testing.assert_array_equal(got, want)


def test_by_key_tiles_variants_devices():
    n = 70_000
    keys = _runs(n, long_every=20).astype(np.int64)
    x = _data(n, np.int32, -3, 3)
    z = (x * (RNG.random(n) < 0.2)).astype(np.int32)
    want = _by_key_ref(keys, z, _lastnz_op, 0, False, np.dtype(np.int32))
    # the default plan: many tiles (a GPU's and PoCL's), the look-back
    # carrying (flag, value) states; reduce_then_scan: the chunks' states
    # with their flags
    p = KLAST.explain_by_key(keys, z)
    assert p["variant"] in gpured.ScanKernel.variants() and p["tiles"] > 4
    np.testing.assert_array_equal(KLAST.by_key(keys, z), want)
    gpu = gpured.get_device()["type"] == "GPU"
    np.testing.assert_array_equal(
        KLAST.by_key(keys, z, variant="reduce_then_scan",
                     wg_size=64 if gpu else 8, items=4), want)
    # device Arrays
    dk, dx = gpured.to_device(keys), gpured.to_device(x)
    for exclusive in (False, True):
        r = KSUM.by_key(dk, dx, exclusive=exclusive)
        assert isinstance(r, gpured.Array) and r.dtype == np.int32
        np.testing.assert_array_equal(r.get(), _by_key_ref(
            keys, x, lambda a, b: a + b, 0, exclusive, np.dtype(np.int32)))
    # one element, every key distinct, one run; empty
    np.testing.assert_array_equal(KSUM.by_key(keys[:1], x[:1]), x[:1])
    ar = np.arange(500)
    np.testing.assert_array_equal(KSUM.by_key(ar, x[:500]), x[:500])
    np.testing.assert_array_equal(KSUM.by_key(ar, x[:500], exclusive=True),
                                  np.zeros(500, np.int32))
    np.testing.assert_array_equal(KSUM.by_key(np.zeros(500, np.int16), x[:500]),
                                  np.cumsum(x[:500], dtype=np.int32))
    e = KSUM.by_key(np.zeros(0, np.int64), np.zeros(0, np.int32))
    assert e.shape == (0,) and e.dtype == np.int32


def test_by_key_errors():
    x = np.ones(10, np.float32)
    with pytest.raises(TypeError):
        KSUM.by_key(np.ones(10, np.float32), x)
    with pytest.raises(ValueError):
        KSUM.by_key(np.ones(9, np.int32), x)
    with pytest.raises(ValueError):
        KSUM.by_key(np.ones((2, 5), np.int32), x.reshape(2, 5))
    with pytest.raises(TypeError):
        KSUM.by_key(np.ones(10, np.int32), np.ones(10, np.int64))


# ------------------------------------------------------ options=

def test_options_build_and_cache_key():
    x = _data(500, np.float32)
    want = np.sum(x.astype(np.float64))
    got = {}
    for scale in (3, 2, 3):  # the second 3: the first's program again
        k = gpured.ReductionKernel("T x", "T y", "x * SCALE", "a + b",
                                   "y = a", "0", "scaled",
                                   options=("-DSCALE=%d" % scale,))
        assert k.options == ("-DSCALE=%d" % scale,)
        got[scale] = float(k(x, variant="segment_per_item"))
        np.testing.assert_allclose(got[scale], scale * want, rtol=1e-4,
                                   atol=1e-3)
    # a scan's options reach its build, and its program's key
    for scale in (3, 2):
        s = gpured.ScanKernel("T x", "T y", "x * SCALE", "a + b", "0",
                              "scaled_scan", options=["-DSCALE=%d" % scale])
        np.testing.assert_allclose(s(x), scale * np.cumsum(x), rtol=1e-4,
                                   atol=1e-3)
    assert got[3] != got[2]
    for bad, err in [("-DSCALE=3", TypeError), ((3,), TypeError),
                     (("-cl-std=CL1.2",), ValueError),
                     (("-DA=1\n",), ValueError)]:
        with pytest.raises(err):
            gpured.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0",
                                   options=bad)
        with pytest.raises(err):
            gpured.ScanKernel("T x", "T y", "x", "a + b", "0", options=bad)


# ------------------------------------------------------ complex types

CXT = [np.complex64] + ([np.complex128] if HAS_FP64 else [])


def _cdata(shape, dt):
    return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)) \
        .astype(dt)


@pytest.mark.parametrize("dt", CXT, ids=lambda d: np.dtype(d).name)
def test_complex_types(dt):
    """complex64 / complex128 parameters are OpenCL float2 / double2 (.x
    the real part, .y the imaginary): a vector identity, vector
    arithmetic (+ is complex addition; * is componentwise), complex
    inputs, outputs, scalars and reduce types, host and device, the
    vector variant and a column layout."""
    tol = 2e-5 if dt == np.complex64 else 1e-12
    csum = gpured.ReductionKernel("T x", "T y", "x", "a + b", "y = a",
                                  "(T)(0, 0)", "csum")
    cprod = gpured.ReductionKernel(
        "T x", "T y", "x", "(T)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x)",
        "y = a", "(T)(1, 0)", "cprod")
    x = _cdata((9, 300), dt)
    d = gpured.to_device(x)
    u = np.exp(1j * RNG.uniform(-3, 3, 500)).astype(dt)
    got = cprod(u)
    assert got.dtype == dt and np.ndim(got) == 0
    np.testing.assert_allclose(got, np.prod(u), rtol=tol * 50)
    if dt != np.complex64:
        return  # (the rest: the same text, one dtype: fewer builds)
    for arg in (x, d):
        r = csum(arg, axis=1)
        assert isinstance(r, gpured.Array) == (arg is d)
        np.testing.assert_allclose(np.asarray(r.get() if arg is d else r),
                                   x.sum(axis=1), rtol=tol, atol=tol * 300)
    np.testing.assert_allclose(csum(x, axis=0), x.sum(axis=0), rtol=tol,
                               atol=tol * 10)  # columns: the items kernel
    np.testing.assert_allclose(csum(x, axis=1, variant="vector", vw=2, ilp=2),
                               x.sum(axis=1), rtol=tol, atol=tol * 300)
    assert csum(np.zeros((2, 0), dt), axis=1).tolist() == [0, 0]
    # complex in, real out; a complex scalar parameter
    norm2 = gpured.ReductionKernel("T x", "float32 y",
                                   "x.x * x.x + x.y * x.y", "a + b", "y = a",
                                   "0", "norm2")
    np.testing.assert_allclose(norm2(d, axis=1).get(),
                               (np.abs(x) ** 2).sum(axis=1), rtol=2e-5)
    shift = gpured.ReductionKernel("T x, T s", "T y", "x + s", "a + b",
                                   "y = a", "(T)(0)", "cshift")
    s = dt(0.5 - 2j)
    np.testing.assert_allclose(shift(x, s, axis=0), (x + s).sum(axis=0),
                               rtol=tol, atol=tol * 10)


def test_complex_scan():
    """ScanKernel over complex elements (a cumulative sum: vector +), host
    and device, along either axis, exclusive (the product's scan:
    gpured.cumprod's tests in test_complex.py)."""
    dt, tol = np.complex64, 2e-5
    ccum = gpured.ScanKernel("T x", "T y", "x", "a + b", "(T)(0)", "ccum")
    x = _cdata((6, 700), dt)
    np.testing.assert_allclose(ccum(x, axis=1), np.cumsum(x, axis=1),
                               rtol=tol, atol=tol * 700)
    d = gpured.to_device(x)
    r = ccum(d, axis=0, exclusive=True)
    want = np.concatenate([np.zeros((1, 700), dt), np.cumsum(x, axis=0)[:-1]])
    np.testing.assert_allclose(r.get(), want, rtol=tol, atol=tol * 10)
