"""Full sums and means of C-contiguous NumPy complex arrays (issue 40's CPU
target): one core call on the real view (n, 2) over axis 0, which the
host path folds in one pass (csrc/host_reduce.c red_lanes: the
interleaved parts, TwoSum / Fast2Sum per component, float32 in double).
Values against an exact reference per component (math.fsum), NumPy's
result types and shapes, compensation per component where NumPy's
pairwise sum loses the small terms, non-finite parts, and the inputs that
take the other paths (non-contiguous, knobs, where=, dtype=, out=)."""
import math

import numpy as np
import pytest

import gpured

CDTYPES = [np.complex64, np.complex128]
SIZES = [1, 2, 3, 5, 8, 17, 63, 100, 1001, 4099]


def data(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(3, 10, n) + 1j * rng.normal(-2, 5, n)).astype(dtype)


def exact(a, mean=False):
    """The sum (mean) of every element, per component, exactly in Python
    then rounded: float64 parts as a complex."""
    x = np.asarray(a).reshape(-1)
    re = math.fsum(x.real.astype(np.float64))
    im = math.fsum(x.imag.astype(np.float64))
    n = x.size if mean else 1
    return complex(re / n, im / n)


def check(got, a, func):
    want = getattr(np, func)(a)
    assert type(got) is type(want), (type(got), type(want))
    ref = exact(a, func == "mean")
    part = np.float32 if a.dtype == np.complex64 else np.float64
    for g, r in ((got.real, ref.real), (got.imag, ref.imag)):
        # the correctly rounded part, or within one unit in the last place
        # of it (the mean's division, float32's double sums)
        assert abs(float(g) - part(r)) <= np.spacing(abs(part(r))) * 1.01 + \
            (0 if r else np.finfo(part).tiny), (func, a.size, g, r)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_full_sum_mean(dtype):
    """Every size that leaves a different tail of the lanes kernels, 1-d
    and n-d, keepdims."""
    for n in SIZES:
        a = data(dtype, n, seed=n)
        for func in ("sum", "mean"):
            check(getattr(gpured, func)(a), a, func)
    a = data(dtype, 5 * 7 * 3, seed=1).reshape(5, 7, 3)
    for func in ("sum", "mean"):
        check(getattr(gpured, func)(a), a, func)
        got = getattr(gpured, func)(a, keepdims=True)
        want = getattr(np, func)(a, keepdims=True)
        assert got.shape == want.shape == (1, 1, 1) and got.dtype == want.dtype
        check(got[0, 0, 0], a, func)
    e = gpured.explain("sum", a)
    assert "one call" in e["complex"] and e["segments"] == 2, e
    # an offset into the buffer (not 16-byte aligned), read-only
    b = data(dtype, 1001, seed=4)[3:]
    b.flags.writeable = False
    for func in ("sum", "mean"):
        check(getattr(gpured, func)(b), b, func)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_compensated_per_component(dtype):
    """Large terms that cancel in each part, small ones between: NumPy's
    pairwise sum drops the small ones, the compensated sum keeps them (the
    real parts and the imaginary parts each their own state)."""
    big = 1e16 if dtype == np.complex128 else 1e8
    n = 3 * 1001
    a = np.empty(n, dtype)
    a[0::3] = big + 1j * big
    a[1::3] = 1 + 0.5j
    a[2::3] = -big - 1j * big
    for func in ("sum", "mean"):
        check(getattr(gpured, func)(a), a, func)
    assert gpured.sum(a) == 1001 * (1 + 0.5j)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's inf - inf
@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_non_finite_parts(dtype):
    """inf and NaN in either part: sums keep them in that part, means
    spread them as NumPy's complex division does (inf+1j over 101+0j is
    inf+nanj: gpured/_complex.py mean_rule)."""
    a = data(dtype, 101, seed=3)
    for val in (complex(np.inf, 1), complex(1, -np.inf), complex(np.nan, 0),
                complex(0, np.nan), complex(np.inf, np.nan)):
        b = a.copy()
        b[50] = val
        for func in ("sum", "mean"):
            with np.errstate(invalid="ignore"):
                got, want = getattr(gpured, func)(b), getattr(np, func)(b)
            assert type(got) is type(want)
            for g, w in ((got.real, want.real), (got.imag, want.imag)):
                if np.isfinite(w):   # (NumPy's rounding: pairwise)
                    assert abs(g - w) <= 1e-5 * abs(w) + 1e-5, (g, w)
                else:
                    np.testing.assert_array_equal(g, w)
    b = a.copy()
    b[3], b[70] = complex(np.inf, 0), complex(-np.inf, 0)
    assert np.isnan(gpured.sum(b).real) and np.isnan(np.sum(b).real)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_other_layouts_fall_back(dtype):
    """Inputs the one call does not take: strided, Fortran-ordered, empty,
    byte-swapped, where=, dtype=, out=, initial=, axis=, knobs; values
    against NumPy."""
    a = data(dtype, 4099, seed=9)
    m = a[:4096].reshape(64, 64)
    tol = 1e-4 if dtype == np.complex64 else 1e-12
    for x in (a[::2], a[::-1], m.T, np.asfortranarray(m)[:, 1:],
              a.astype(np.dtype(dtype).newbyteorder(">"))):
        for func in ("sum", "mean"):
            np.testing.assert_allclose(getattr(gpured, func)(x),
                                       getattr(np, func)(x), rtol=tol)
    e = gpured.explain("sum", a[::2])
    assert "one call" not in e["complex"]
    assert gpured.sum(a[:0]) == np.sum(a[:0]) == 0
    w = np.random.default_rng(1).random(a.size) < 0.5
    np.testing.assert_allclose(gpured.sum(a, where=w), np.sum(a, where=w),
                               rtol=tol)
    np.testing.assert_allclose(gpured.sum(a, dtype=np.complex128),
                               np.sum(a, dtype=np.complex128), rtol=tol)
    out = np.zeros((), dtype)
    assert gpured.sum(a, out=out) is out
    np.testing.assert_allclose(out, np.sum(a), rtol=tol)
    np.testing.assert_allclose(gpured.sum(a, initial=2 - 1j),
                               np.sum(a, initial=2 - 1j), rtol=tol)
    np.testing.assert_allclose(gpured.sum(m, axis=0), np.sum(m, axis=0),
                               rtol=tol)
    np.testing.assert_allclose(gpured.sum(a, exact=True), np.sum(a),
                               rtol=tol)


def test_large_blocks_and_threads():
    """A run past the host path's 4 MiB blocks (Ctrl-C's checks), on one
    thread and cut into tasks on three: the same exact parts."""
    a = data(np.complex128, 300001, seed=5)
    check(gpured.sum(a), a, "sum")
    old = gpured.set_host_threads(3)
    try:
        check(gpured.sum(a), a, "sum")
        check(gpured.mean(a.astype(np.complex64)), a.astype(np.complex64),
              "mean")
    finally:
        gpured.set_host_threads(old)


def test_real_interleaved_columns():
    """The same path for real arrays: (n, 2), (n, 4), (n, 8) summed over
    axis 0, against the exact column sums; (n, 3) by the column kernels."""
    rng = np.random.default_rng(2)
    for dt in (np.float32, np.float64):
        for B in (2, 3, 4, 8):
            for n in (1, 7, 1001):
                v = (rng.standard_normal((n, B)) *
                     10.0 ** rng.uniform(-5, 5, (n, B))).astype(dt)
                for func in ("sum", "mean"):
                    got = getattr(gpured, func)(v, axis=0)
                    assert got.dtype == getattr(np, func)(v, axis=0).dtype
                    div = n if func == "mean" else 1
                    ref = np.array([math.fsum(v[:, j].astype(np.float64)) / div
                                    for j in range(B)]).astype(dt)
                    assert np.all(np.abs(got - ref) <=
                                  np.spacing(np.abs(ref)) * 1.01), (dt, B, n)
