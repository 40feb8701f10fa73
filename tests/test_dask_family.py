"""gpured.dask: where= masks, average, reduceat and nanargmin/nanargmax
over Dask arrays.

Results are checked against NumPy on the whole array (type, dtype, shape;
exact for integers, bools, min/max/all/any; float sums, means and
products within a few ulps of the reduced magnitudes) for uneven and
zero-size chunks, 1-D and 2-D arrays, axes None/int/negative/tuple,
keepdims, masks as NumPy and Dask arrays (other chunks), broadcast masks
and scalars, NaN data, all-masked slices, and NumPy's errors.

``test_two_devices_*`` need two OpenCL devices; where this process has one,
``test_two_devices_in_child`` runs them in a child with
``POCL_DEVICES="pthread pthread"`` (as tests/test_dask.py does).
"""
import importlib.util
import warnings

import numpy as np
import pytest

import gpured
from conftest import HAS_FP64, make_data, run_two_device_child

try:
    import dask
    import dask.array as da
    import gpured.dask as gd
    HAS_DASK = True
except ImportError:  # pragma: no cover - the repo's test extras install dask
    HAS_DASK = False

NDEV = len(gpured.devices())

pytestmark = pytest.mark.skipif(
    not HAS_DASK, reason="dask is not installed (pip install dask)")
two_devices = pytest.mark.skipif(
    NDEV < 2, reason="one OpenCL device here: test_two_devices_in_child "
    "runs these with POCL_DEVICES='pthread pthread'")

FLOATS = [np.float32] + ([np.float64] if HAS_FP64 else [])
DTYPES = FLOATS + [np.int32, np.bool_]
WHERE_OPS = ["sum", "prod", "min", "max", "all", "any", "mean", "nansum",
             "nanprod", "nanmin", "nanmax", "nanmean"]
NO_IDENTITY = ("min", "max", "nanmin", "nanmax")

# (shape, chunks): uneven 2-D, 1-D, a zero-size chunk
CASES = [((37, 23), (10, 7)), ((50,), (13,)), ((5, 6), ((3, 0, 2), (4, 2)))]


def _axes(ndim):
    return [None, 0, -1] + ([(0, 1)] if ndim == 2 else [])


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*a, **k)


def _data(op, dtype, shape, seed=0):
    kind = {"prod": "prod", "nanprod": "prod", "all": "fewzeros",
            "any": "fewnonzeros"}.get(op, "general")
    a = make_data(dtype, shape, kind, seed)
    if np.dtype(dtype).kind == "f" and op.startswith("nan"):
        rng = np.random.default_rng(seed)
        a[rng.random(shape) < 0.2] = np.nan
        a[(0,) * (len(shape) - 1)] = np.nan  # a whole NaN slice (axis -1)
    return a


def _masks(shape, seed):
    """NumPy mask, Dask mask (other chunks), broadcast masks, a scalar."""
    rng = np.random.default_rng(seed)
    m = rng.random(shape) < 0.7
    if len(shape) == 2:
        m[1] = False  # an all-masked row
    out = [m, da.from_array(m, chunks=tuple(max(s // 2, 1) for s in shape)),
           rng.random(shape[-1:]) < 0.6, False]
    if len(shape) == 2:
        col = rng.random((shape[0], 1)) < 0.6
        out += [col, da.from_array(col, chunks=(3, 1))]
    return out


def _np_mask(m):
    return m.compute() if isinstance(m, da.Array) else m


def _check(got, exp, what, scale=None):
    """NumPy's type, dtype and shape; exact for integer/bool results and
    wherever NumPy's is not finite, else within 32 eps of scale (the
    magnitudes reduced)."""
    assert type(got) is type(exp), "%s: type %s != %s" % (
        what, type(got).__name__, type(exp).__name__)
    got, exp = np.asarray(got), np.asarray(exp)
    assert (got.dtype, got.shape) == (exp.dtype, exp.shape), \
        "%s: %s%s != numpy's %s%s" % (what, got.dtype, got.shape, exp.dtype,
                                      exp.shape)
    if exp.dtype.kind in "biu" or scale is None:
        np.testing.assert_array_equal(got, exp, err_msg=what, strict=True)
        return
    fin = np.isfinite(exp)
    np.testing.assert_array_equal(got[~fin], exp[~fin], err_msg=what)
    tol = 32 * np.finfo(exp.dtype).eps * np.broadcast_to(scale, exp.shape)
    err = np.abs(got.astype(np.float64) - exp.astype(np.float64))
    assert np.all(err[fin] <= tol[fin] + 1e-300), "%s: max error %g" % (
        what, np.max(err[fin] - tol[fin]))


def _scale(op, a, axis, keepdims, m=True):
    """The magnitudes behind a float result: sum |a| (nan forms: of the
    numbers), over the kept count for means, |result| for products."""
    if op in ("min", "max", "nanmin", "nanmax", "all", "any"):
        return None
    b = np.abs(np.nan_to_num(a.astype(np.float64), nan=0.0))
    kw = dict(axis=axis, keepdims=keepdims, where=m)
    if op in ("prod", "nanprod"):
        return 4 * np.sqrt(b.size) * np.abs(_quiet(np.prod, np.where(
            np.isnan(a), 1, b) if a.dtype.kind == "f" else b, **kw))
    s = _quiet(np.sum, b, **kw)
    if op in ("mean", "nanmean"):
        n = np.sum(np.broadcast_to(m, a.shape) & ~np.isnan(a.astype(float))
                   if op == "nanmean" else np.broadcast_to(m, a.shape),
                   axis=axis, keepdims=keepdims)
        s = s / np.maximum(n, 1)
    return s


# ------------------------------------------------------------- where=

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", WHERE_OPS)
def test_where_against_numpy(op, dtype):
    k = 0
    for ci, (shape, chunks) in enumerate(CASES):
        a = _data(op, dtype, shape, ci)
        x = da.from_array(a, chunks=chunks)
        masks = _masks(shape, ci)
        for i, axis in enumerate(_axes(len(shape))):
            for j in (0, 1):  # two of the masks per axis, in turn
                where = masks[k % len(masks)]
                k += 1
                kw = {"axis": axis, "keepdims": bool((i + j) % 2)}
                if op in NO_IDENTITY:
                    kw["initial"] = a.dtype.type(1)
                r = getattr(gd, op)(x, where=where, **kw)
                m = _np_mask(where)
                exp = _quiet(getattr(np, op), a, where=m, **kw)
                what = "gd.%s(%s %s chunks=%s, %s, where=%s)" % (
                    op, a.dtype, shape, chunks, kw,
                    getattr(where, "shape", where))
                assert (r.dtype, r.shape) == (exp.dtype, np.shape(exp)), what
                _check(_quiet(r.compute), exp, what,
                       _scale(op, a, axis, kw["keepdims"], m))


def test_where_masked_slices_and_warnings():
    a = make_data(np.float64 if HAS_FP64 else np.float32, (12, 10))
    a[2, :] = np.nan
    x = da.from_array(a, chunks=(5, 4))
    m = np.ones(a.shape, bool)
    m[0] = False         # all masked
    m[3, 1:] = False     # one kept element
    for op in ("mean", "nanmean"):
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            got = getattr(gd, op)(x, axis=1, where=m).compute()
        exp = _quiet(getattr(np, op), a, axis=1, where=m)
        _check(got, exp, op, _scale(op, a, 1, False, m))
        assert np.isnan(got[0]) and got[3] == a[3, 0]
    # nothing kept anywhere: NaN (mean), 0 (sum), initial (min), True (all)
    with pytest.warns(RuntimeWarning):
        assert np.isnan(gd.mean(x, where=False).compute())
    assert gd.sum(x, axis=0, where=False).compute().tolist() == [0.0] * 10
    got = gd.nanmax(x, axis=1, where=m, initial=-5.0).compute()
    _check(got, np.nanmax(a, axis=1, where=m, initial=-5.0), "nanmax")
    assert got[0] == got[2] == -5.0  # masked row, all-NaN row
    assert gd.all(x > 1e9, where=False).compute() is np.True_
    # a chunk whose mask block keeps nothing, beside one that keeps some
    mm = np.zeros(a.shape, bool)
    mm[7:, :] = True
    for op in ("min", "sum", "prod", "mean"):
        kw = {"initial": 0.0} if op == "min" else {}
        _check(getattr(gd, op)(x, axis=0, where=mm, **kw).compute(),
               getattr(np, op)(a, axis=0, where=mm, **kw), op,
               _scale(op, a, 0, False, mm))


def test_where_options_and_errors():
    a = make_data(np.int32, (9, 8), "ties")
    x = da.from_array(a, chunks=(4, 3))
    m = a > 0
    for op in NO_IDENTITY:  # NumPy's rule, when the graph is built
        with pytest.raises(ValueError, match="identity.*initial"):
            getattr(gd, op)(x, where=m)
        with pytest.raises(ValueError, match="identity.*initial"):
            getattr(gd, op)(x, where=1)  # any where but True itself
        assert getattr(gd, op)(x, where=True).compute() == \
            getattr(np, op)(a)
    with pytest.raises(TypeError, match="Cannot cast"):
        gd.sum(x, where=m.astype(np.int64))
    with pytest.raises(TypeError, match="Cannot cast"):
        gd.sum(x, where=da.from_array(m.astype(np.int8), chunks=3))
    with pytest.raises(ValueError):
        gd.sum(x, where=np.ones((8, 9), bool))
    with pytest.raises(ValueError):
        gd.sum(x, where=da.ones((3, 8), dtype=bool, chunks=2))
    # lists and NumPy scalars convert by truth, as NumPy
    row = [1, 0, 1, 1, 0, 0, 1, 1]
    assert gd.sum(x, axis=1, where=row).compute().tolist() == \
        np.sum(a, axis=1, where=row).tolist()
    assert gd.prod(x, where=np.False_).compute() == 1
    # dtype=, initial= and split_every= with a mask
    for kw in ({"dtype": np.int8}, {"initial": 7}, {"axis": 1},
               {"dtype": np.float32, "axis": 0}):
        _check(gd.sum(x, where=m, split_every=2, **kw).compute(),
               np.sum(a, where=m, **kw), str(kw))
    _check(gd.mean(x, where=m, dtype=np.float32, axis=1).compute(),
           np.mean(a, where=m, dtype=np.float32, axis=1), "mean dtype",
           _scale("mean", a, 1, False, m))
    import inspect
    assert list(inspect.signature(gd.min).parameters)[:7] == [
        "a", "axis", "keepdims", "split_every", "out", "initial", "where"]
    assert "where" not in inspect.signature(gd.var).parameters


def test_where_device_resident(monkeypatch):
    """Masks beside device-resident chunks (host masks and device masks):
    only partials come back, except nanmean's NaN count of float chunks."""
    a = make_data(np.float32, (40, 18), "ties")
    x = gd.to_device(da.from_array(a, chunks=(8, 9))).persist()
    m = np.random.default_rng(3).random(a.shape) < 0.5
    dm = gd.to_device(da.from_array(m, chunks=(8, 9))).persist()
    sizes = []
    real_get = gpured.Array.get

    def spy(self, *args, **kw):
        sizes.append(self.size)
        return real_get(self, *args, **kw)

    monkeypatch.setattr(gpured.Array, "get", spy)
    for where in (m, dm, m[0]):
        mh = m if isinstance(where, da.Array) else where
        for op in ("sum", "mean", "max", "any"):
            kw = {"initial": -9.0} if op == "max" else {}
            for axis in (None, 0, 1):
                got = _quiet(getattr(gd, op)(x, axis=axis, where=where,
                                             **kw).compute)
                exp = _quiet(getattr(np, op), a, axis=axis, where=mh, **kw)
                _check(got, exp, "device %s %s" % (op, axis),
                       _scale(op, a, axis, False, mh))
    assert sizes and max(sizes) <= 9, max(sizes)
    got = _quiet(gd.nanmean(x, axis=0, where=dm).compute)
    _check(got, _quiet(np.nanmean, a, axis=0, where=m), "device nanmean",
           _scale("nanmean", a, 0, False, m))


def test_resident_one_task_per_output_block(monkeypatch):
    """A persisted device-resident array reduces with one task per output
    block (every block's partial enqueued where it lives, read back with
    one get_many, combined), holding the blocks rather than depending on
    x's keys: NumPy's results and Dask's output chunks; with split_every=
    Dask's tree of a task per chunk."""
    a = make_data(np.float32, (40, 18), "general")
    x = gd.to_device(da.from_array(a, chunks=(8, 9))).persist()  # 5 x 2 blocks
    batches = []
    real = gd._core.get_many

    def spy(arrays):
        batches.append({b.device_index for b in arrays})
        return real(arrays)
    monkeypatch.setattr(gd._core, "get_many", spy)
    for op in ("sum", "max", "mean", "var", "nanstd", "ptp", "all"):
        for axis in (None, 0, 1, (0, 1)):
            for keepdims in (False, True):
                r = getattr(gd, op)(x, axis=axis, keepdims=keepdims)
                keys = list(dict(r.__dask_graph__()))
                assert not [k for k in keys if k[0] == x.name], (op, axis)
                nout = int(np.prod(r.numblocks))
                assert len(keys) == nout, (op, axis, keys)
                del batches[:]
                got = _quiet(r.compute)
                exp = _quiet(getattr(np, op), a.astype(np.float64), axis=axis,
                             keepdims=keepdims)
                if op == "all":
                    exp = np.all(a, axis=axis, keepdims=keepdims)
                np.testing.assert_allclose(got, exp, rtol=2e-5, atol=1e-6,
                                           err_msg="%s %s" % (op, axis))
                # one batch of reads per output block, from every device
                # holding its blocks (two with POCL_DEVICES="pthread pthread")
                assert len(batches) == nout, (op, axis, batches)
                if axis in (None, (0, 1)):
                    assert batches[0] == {b.device_index for b in
                                          _blocks(x)}, batches
                if op not in ("ptp",):
                    ref = getattr(da, op)(da.from_array(a, chunks=(8, 9)),
                                          axis=axis, keepdims=keepdims)
                    assert r.chunks == ref.chunks, (op, axis, keepdims)
    tree = gd.sum(x, axis=0, split_every=2)
    assert len(dict(tree.__dask_graph__())) > 2 * x.npartitions
    np.testing.assert_allclose(tree.compute(), a.astype(np.float64).sum(0),
                               rtol=1e-5)


def _blocks(x):
    return [v for k, v in dict(x.__dask_graph__()).items() if k[0] == x.name]


# ------------------------------------------------------------ average

def _weights(kind, a, axis, rng):
    if kind == "same":
        return rng.random(a.shape) + 0.1
    if kind == "dask":
        return da.from_array(rng.random(a.shape) + 0.1,
                             chunks=tuple(max(s // 3, 1) for s in a.shape))
    ax = (axis,) if isinstance(axis, int) else axis
    w = rng.random(tuple(a.shape[i] for i in ax)) + 0.1
    return w if kind == "along" else da.from_array(w, chunks=3)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_average_against_numpy(dtype):
    rng = np.random.default_rng(7)
    k = 0
    for ci, (shape, chunks) in enumerate(CASES):
        a = make_data(dtype, shape, "general", ci)
        x = da.from_array(a, chunks=chunks)
        for i, axis in enumerate(_axes(len(shape))):
            kinds = ["same", "dask"] + (["along", "along-dask"]
                                        if axis is not None else [])
            for kind in kinds:
                wdt = [np.float64, np.float32, np.int32][k % 3]
                k += 1
                w = _weights(kind, a, axis, rng)
                w = w.astype(wdt) if wdt != np.int32 else (w * 10).astype(wdt)
                kw = {"axis": axis, "returned": bool(k % 2)}
                if i % 2:
                    kw["keepdims"] = True
                r = gd.average(x, weights=w, **kw)
                exp = np.average(a, weights=_np_mask(w), **kw)
                got = dask.compute(*r) if kw["returned"] else r.compute()
                what = "gd.average(%s %s chunks=%s, %s, weights %s %s)" % (
                    a.dtype, shape, chunks, kw, kind, np.dtype(wdt))
                if not kw["returned"]:
                    r, got, exp = (r,), (got,), (exp,)
                big = 4 * np.max(np.abs(a.astype(np.float64)))
                for t, g, e in zip(r, got, exp):
                    assert (t.dtype, t.shape) == (e.dtype, e.shape), what
                    _check(g, e, what, np.maximum(big, np.abs(e)))


def test_average_without_weights_and_errors():
    a = make_data(np.int32, (11, 7), "ties")
    x = da.from_array(a, chunks=(4, 3))
    for axis in (None, 0, (0, 1)):
        for keepdims in (False, True):
            avg, scl = gd.average(x, axis=axis, returned=True,
                                  keepdims=keepdims)
            e_avg, e_scl = np.average(a, axis=axis, returned=True,
                                      keepdims=keepdims)
            _check(avg.compute(), e_avg, "avg", 1.0)
            _check(scl.compute(), e_scl, "scl")
    with pytest.raises(TypeError, match="Axis must be specified"):
        gd.average(x, weights=np.ones(7))
    with pytest.raises(ValueError, match="consistent"):
        gd.average(x, axis=0, weights=np.ones(7))
    with pytest.raises(np.exceptions.AxisError):
        gd.average(x, axis=2)
    w = np.ones(a.shape)
    w[:, 2] = 0
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        gd.average(x, axis=0, weights=w).compute()
    # weights summing to zero in one chunk's slices but not overall (the
    # host fallback of those slices), and mixed signs
    w = np.where(np.arange(11)[:, None] < 4, np.array([1.0, -1.0] * 5 + [0])
                 [:11, None], 1.0) * np.ones(a.shape)
    w[:4, 0] = [1.0, -1.0, 1.0, -1.0]
    for axis in (0, None):
        _check(gd.average(x, axis=axis, weights=w).compute(),
               np.average(a, axis=axis, weights=w), "zero chunk sums", 8.0)
    # NaN data propagates; bool data and weights
    f = make_data(np.float64 if HAS_FP64 else np.float32, (11, 7))
    f[3, 4] = np.nan
    got = gd.average(da.from_array(f, chunks=4), axis=0, weights=w).compute()
    exp = np.average(f, axis=0, weights=w)
    _check(got, exp, "nan", 8 * np.max(np.abs(np.nan_to_num(f))) *
           np.ones(7))
    b, wb = a > 0, np.ones(a.shape, bool)
    _check(gd.average(da.from_array(b, chunks=3), axis=1, weights=wb,
                      returned=True)[1].compute(),
           np.average(b, axis=1, weights=wb, returned=True)[1], "bool", 1.0)


def test_average_device_resident():
    a = make_data(np.float32, (32, 12))
    x = gd.to_device(da.from_array(a, chunks=(8, 6))).persist()
    w = np.random.default_rng(1).random(a.shape).astype(np.float32)
    dw = gd.to_device(da.from_array(w, chunks=(8, 6))).persist()
    for weights in (w, dw, w[:, 0]):
        axis = 0 if weights is not dw and weights.ndim == 1 else 1
        avg, scl = gd.average(x, axis=axis, weights=weights, returned=True)
        e_avg, e_scl = np.average(a, axis=axis, weights=_np_mask(weights),
                                  returned=True)
        s = 8 * np.max(np.abs(a))
        _check(avg.compute(), e_avg, "device avg", s * np.ones(e_avg.shape))
        _check(scl.compute(), e_scl, "device scl", 32 * np.ones(e_scl.shape))


# ----------------------------------------------------------- reduceat

AT_OPS = ["add", "multiply", "minimum", "maximum", "logical_and",
          "logical_or"]
INDICES = [
    [0, 4, 4, 2, 9],            # NumPy's example: repeats, a decrease
    [0, 13, 26, 39],            # on chunk bounds
    [3, 30, 1, 45, 45, 44],     # unsorted, spanning several chunks
    [0], [49],                  # one segment, the last element
    list(range(0, 50, 3)),      # many short segments
    [5, 6, 7, 8, 9, 10, 11, 12, 14, 17, 20, 25, 33, 40, 48],
]


def _at_data(op, dtype, shape, seed=0):
    kind = "prod" if op == "multiply" else (
        "ties" if op in ("minimum", "maximum") else "general")
    a = make_data(dtype, shape, kind, seed)
    if op in ("logical_and", "logical_or") and a.dtype.kind != "b":
        a[np.random.default_rng(seed).random(shape) < 0.3] = 0
    return a


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", AT_OPS)
def test_reduceat_1d(op, dtype):
    a = _at_data(op, dtype, (50,))
    for ci, chunks in enumerate([(13,), ((7, 0, 20, 23),), (50,), (4,)]):
        x = da.from_array(a, chunks=chunks)
        for idx in INDICES[ci::2] if ci < 2 else INDICES[ci::3]:
            r = gd.reduceat(x, idx, op=op)
            exp = _quiet(getattr(np, op).reduceat, a, idx)
            what = "gd.reduceat(%s chunks=%s, %s, op=%s)" % (a.dtype, chunks,
                                                           idx, op)
            assert r.dtype == exp.dtype and r.shape == exp.shape, what
            assert sum(r.chunks[0]) == len(idx)
            scale = None
            if op in ("add", "multiply") and exp.dtype.kind == "f":
                scale = np.add.reduceat(np.abs(a.astype(np.float64)), idx) \
                    if op == "add" else 8 * np.abs(exp)
            _check(_quiet(r.compute), exp, what, scale)


@pytest.mark.parametrize("op", ["add", "minimum", "logical_or"])
def test_reduceat_2d_axes_and_dtype(op):
    a = _at_data(op, FLOATS[-1], (26, 31), 2)
    a[5, 7] = np.nan
    x = da.from_array(a, chunks=(7, 9))
    for axis, idx in ((0, [0, 3, 8, 8, 20, 2, 25]), (1, [1, 9, 18, 30]),
                      (-1, [20, 4, 11])):
        r = gd.reduceat(x, idx, axis=axis, op=op)
        exp = _quiet(getattr(np, op).reduceat, a, idx, axis=axis)
        scale = np.add.reduceat(np.abs(np.nan_to_num(a)), idx, axis=axis) \
            if op == "add" else None
        assert r.chunks[1 - axis % 2] == x.chunks[1 - axis % 2]
        _check(_quiet(r.compute), exp, "%s axis %s" % (op, axis), scale)
    i8 = make_data(np.int8, (40, 3), "general")
    xi = da.from_array(i8, chunks=(9, 2))
    for o, dt in (("add", np.int8), ("add", None), ("multiply", np.int16),
                  ("maximum", np.uint8), ("add", np.float32)):
        kw = {"dtype": dt, "op": o}
        _check(gd.reduceat(xi, [0, 5, 17, 3, 33], **kw).compute(),
               getattr(np, o).reduceat(i8, [0, 5, 17, 3, 33], dtype=dt),
               str(kw), 40 * 128.0)
    names = {"sum": "add", "prod": "multiply", "min": "minimum",
             "max": "maximum", "all": "logical_and", "any": "logical_or"}
    for name, uf in names.items():
        _check(gd.reduceat(xi, [2, 30], op=name).compute(),
               getattr(np, uf).reduceat(i8, [2, 30]), name)
    assert np.array_equal(gd.reduceat(xi, [0, 9], op=np.maximum).compute(),
                          np.maximum.reduceat(i8, [0, 9]))


def test_reduceat_edges_and_errors():
    a = make_data(np.int32, (20, 4))
    x = da.from_array(a, chunks=(6, 3))
    e = gd.reduceat(x, [])
    assert e.shape == (0, 4) and e.dtype == np.add.reduceat(a, []).dtype
    assert e.compute().shape == (0, 4)
    assert gd.reduceat(x, np.array([4, 1])).compute().tolist() == \
        np.add.reduceat(a, [4, 1]).tolist()
    assert gd.reduceat(x, da.from_array(np.array([0, 7]))).compute().tolist() \
        == np.add.reduceat(a, [0, 7]).tolist()
    for bad in ([20], [-1], [0, 25]):
        with pytest.raises(IndexError, match="out-of-bounds"):
            gd.reduceat(x, bad)
    with pytest.raises(IndexError):
        gd.reduceat(da.zeros((0,), chunks=1), [0])
    with pytest.raises(ValueError):
        gd.reduceat(x, [[0, 1]])
    with pytest.raises(ValueError):
        gd.reduceat(x, [0], op="subtract")
    with pytest.raises(np.exceptions.AxisError):
        gd.reduceat(x, [0], axis=2)
    with pytest.raises(ValueError, match="multiple axes"):
        gd.reduceat(x, [0], axis=None)
    assert gd.reduceat(x, [0, 2], axis=(1,)).compute().tolist() == \
        np.add.reduceat(a, [0, 2], axis=(1,)).tolist()
    with pytest.raises(TypeError):
        gd.reduceat(da.from_array(np.float32(3)), [0])
    z = np.zeros((6, 0), np.float32)  # zero-size other axis
    np.testing.assert_array_equal(
        gd.reduceat(da.from_array(z, chunks=(4, 1)), [0, 3]).compute(),
        np.add.reduceat(z, [0, 3]))


def test_reduceat_device_resident():
    a = make_data(np.float32, (45, 6), "ties")
    x = gd.to_device(da.from_array(a, chunks=(10, 6))).persist()
    for op in ("add", "maximum"):
        idx = [0, 4, 15, 15, 31, 8, 44]
        _check(gd.reduceat(x, idx, op=op).compute(),
               getattr(np, op).reduceat(a, idx), op,
               np.add.reduceat(np.abs(a), idx) if op == "add" else None)


# ------------------------------------------------- nanargmin / nanargmax

@pytest.mark.parametrize("dtype", FLOATS + [np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fname", ["nanargmin", "nanargmax"])
def test_nanarg_against_numpy(fname, dtype):
    """NaN read as +inf/-inf in every chunk (NumPy's replacement: a NaN
    before an equal infinity is the answer), chunk slices of NaNs only
    beside good ones (no error), NumPy's ValueError only where the whole
    slice is NaN; host and device chunks, uneven and zero-size chunks."""
    g, f = getattr(gd, fname), getattr(np, fname)
    nan, inf = np.nan, np.inf
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((37, 23)) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[rng.random(a.shape) < 0.3] = nan
        a[4, :12] = nan                    # NaNs only in some chunks
        a[6, :] = np.where(np.arange(23) % 2, nan, inf if fname == "nanargmin" else -inf)
        a[6, 0] = nan                      # a NaN ties with the infinities
        a[:15, 2] = nan                    # a column of NaNs in its first chunks
    for chunks in ((10, 7), ((20, 0, 17), (23,)), (37, 23)):
        x = da.from_array(a, chunks=chunks)
        for axis in (None, 0, 1, -1):
            for kd in ({}, {"keepdims": True}):
                got = g(x, axis=axis, **kd).compute()
                want = f(a, axis=axis, **kd)
                assert np.array_equal(got, want), (fname, chunks, axis, kd, got, want)
                assert np.shape(got) == np.shape(want)
        d = gd.to_device(x)
        for axis in (None, 0, 1):
            assert np.array_equal(g(d, axis=axis).compute(), f(a, axis=axis))
    if np.dtype(dtype).kind == "f":
        bad = a.copy()
        bad[9] = nan                       # a row of NaNs only
        x = da.from_array(bad, chunks=(10, 7))
        with pytest.raises(ValueError, match="All-NaN slice"):
            g(x, axis=1).compute()
        with pytest.raises(ValueError, match="All-NaN slice"):
            f(bad, axis=1)
        assert np.array_equal(g(x, axis=0).compute(), f(bad, axis=0))
        with pytest.raises(ValueError, match="All-NaN slice"):
            g(da.from_array(np.full(40, nan, dtype), chunks=9)).compute()


# ------------------------------------------- to_device's slabs (issue 43)

SLAB_OPS = ["sum", "prod", "min", "max", "all", "any", "nansum", "nanprod",
            "mean", "nanmean", "var", "std", "ptp", "count_nonzero"]


def _core_calls(monkeypatch):
    """The shapes of the arrays _core.reduce is called on, as a list."""
    seen = []
    real = gd._core.reduce

    def spy(fname, a, *rest):
        seen.append(tuple(a.shape))
        return real(fname, a, *rest)
    monkeypatch.setattr(gd._core, "reduce", spy)
    return seen


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_slabs_join_chunks_along_axis_0(monkeypatch, dtype):
    """to_device packs a device's chunks into one buffer, one after the
    other; a reduction over axis 0 of the persisted array reads each run
    of them as one view: one core call instead of one per chunk, NumPy's
    results for every row, stats() still counting the chunks."""
    seen = _core_calls(monkeypatch)
    for shape, chunks in (((1000,), 100), ((41, 7), (6, 7))):
        a = _data("sum", dtype, shape, seed=3)
        if dtype == np.float32:
            a.ravel()[::13] = np.nan  # (the nan forms' and propagation)
        x = gd.to_device(da.from_array(a, chunks=chunks)).persist()
        bl = _blocks(x)
        assert len({id(b.buffer) for b in bl}) == 1 < len(bl)
        gd.reset_stats()
        del seen[:]
        got = gd.sum(x, axis=0).compute()
        assert seen == [shape], seen  # one call, the whole run
        assert gd.stats()[bl[0].device_index]["chunks"] == len(bl)
        for op in SLAB_OPS:
            if op == "ptp" and dtype == np.bool_:  # (NumPy refuses it too)
                with pytest.raises(TypeError, match="boolean subtract"):
                    gd.ptp(x)
                continue
            for axis in _axes(a.ndim) + [0]:
                for keepdims in (False, True):
                    if a.ndim == 1 and axis == (0, 1):
                        continue
                    kw = {"axis": axis, "keepdims": keepdims}
                    got = _quiet(getattr(gd, op)(x, **kw).compute)
                    exp = _quiet(getattr(np, op), a, **kw)
                    sc = 4 * np.abs(np.asarray(exp, np.float64)) if op in \
                        ("var", "std") else _scale(op, a, axis, keepdims)
                    _check(got, exp, "slabs %s %s %s" % (op, shape, kw), sc)


def test_slabs_limits_layouts_and_recomputes(monkeypatch):
    """Slabs of at most _SLAB bytes (a call per slab); chunks that do not
    lie along axis 0 alone, a zero-size chunk, _SLAB = 0: each chunk its
    own call or buffer, the same results; a lazy array computed twice
    gives two sets of buffers; a pickled _Slabs (dask.distributed's
    workers) places every chunk alone."""
    import pickle
    seen = _core_calls(monkeypatch)
    a = _data("sum", np.float64 if HAS_FP64 else np.float32, (60, 5))
    monkeypatch.setattr(gd, "_SLAB", 3 * 8 * 5 * a.itemsize)  # 3 chunks
    x = gd.to_device(da.from_array(a, chunks=(8, 5))).persist()  # 8 chunks
    assert len({id(b.buffer) for b in _blocks(x)}) == 3
    del seen[:]
    _check(gd.sum(x, axis=0).compute(), np.sum(a, axis=0), "3 slabs",
           _scale("sum", a, 0, False))
    assert sorted(seen) == [(12, 5), (24, 5), (24, 5)], seen
    monkeypatch.setattr(gd, "_SLAB", 4 << 30)
    for chunks in ((8, 2), ((30, 0, 30), 5)):  # chunked along axis 1; empty
        y = gd.to_device(da.from_array(a, chunks=chunks)).persist()
        for axis in (None, 0, 1):
            del seen[:]
            _check(gd.sum(y, axis=axis).compute(), np.sum(a, axis=axis),
                   "chunks %s axis %s" % (chunks, axis),
                   _scale("sum", a, axis, False))
            _check(gd.max(y, axis=axis).compute(), np.max(a, axis=axis),
                   "chunks %s axis %s" % (chunks, axis))
            assert all(s[0] <= 30 for s in seen), seen  # nothing joined
    lazy = gd.to_device(da.from_array(a, chunks=(8, 5)))
    p1, p2 = lazy.persist(), lazy.persist()
    b1 = {id(b.buffer) for b in _blocks(p1)}
    assert len(b1) == 1 and b1.isdisjoint(id(b.buffer) for b in _blocks(p2))
    np.testing.assert_array_equal(p1.compute(), a)
    np.testing.assert_array_equal(p2.compute(), a)
    assert np.array_equal(np.asarray(lazy.blocks[2, 0].compute()), a[16:24])
    swapped = gd.to_device(da.from_array(a.astype(a.dtype.newbyteorder()),
                                         chunks=(8, 5))).persist()
    assert all(b.dtype == a.dtype for b in _blocks(swapped))  # native
    _check(gd.sum(swapped, axis=0).compute(), np.sum(a, axis=0), "swapped",
           _scale("sum", a, 0, False))
    monkeypatch.setattr(gd, "_SLAB", 0)
    z = gd.to_device(da.from_array(a, chunks=(8, 5))).persist()
    assert len({id(b.buffer) for b in _blocks(z)}) == 8
    sl = gd._Slabs(((8,) * 4,), np.dtype(np.float32), 1 << 20)
    block = np.ones(8, np.float32)
    place = (None, "rate", None)
    p0 = gd._put_device(0, *place)  # (GPURED_DEVICE, where set)
    assert sl.put(block, 0, p0, place) is not None
    sl2 = pickle.loads(pickle.dumps(sl))
    assert not sl2.local and sl2.put(block, 1, gd._put_device(1, *place),
                                     place) is None


# --------------------------------------------------------- two devices

@two_devices
def test_two_devices_family():
    a = make_data(np.float32, (96, 20), "ties")
    x = da.from_array(a, chunks=(8, 20))  # 12 chunks
    m = np.random.default_rng(5).random(a.shape) < 0.5
    w = np.random.default_rng(6).random(a.shape).astype(np.float32)
    an = a.copy()
    an[np.random.default_rng(7).random(a.shape) < 0.3] = np.nan
    an[:40, 3] = np.nan  # NaNs only in some chunks of a column
    xn = da.from_array(an, chunks=(8, 20))
    opts = {"devices": [0, 1], "policy": "round_robin"}
    checks = [
        (gd.sum(x, axis=0, where=m, **opts), np.sum(a, axis=0, where=m),
         _scale("sum", a, 0, False, m)),
        (gd.mean(x, where=m, **opts), np.mean(a, where=m),
         _scale("mean", a, None, False, m)),
        (gd.max(x, axis=1, where=m, initial=-9.0, **opts),
         np.max(a, axis=1, where=m, initial=-9.0), None),
        (gd.average(x, axis=0, weights=w, **opts),
         np.average(a, axis=0, weights=w), 8 * np.max(np.abs(a))),
        (gd.reduceat(x, [0, 10, 50, 90], **opts),
         np.add.reduceat(a, [0, 10, 50, 90]),
         np.add.reduceat(np.abs(a), [0, 10, 50, 90])),
        (gd.nanargmax(xn, axis=0, **opts), np.nanargmax(an, axis=0), None),
        (gd.nanargmin(xn, **opts), np.nanargmin(an), None),
    ]
    for r, exp, scale in checks:
        gd.reset_stats()
        _check(r.compute(), exp, "two devices", scale)
        st = gd.stats()
        assert sorted(st) == [0, 1] and st[0]["chunks"] == \
            st[1]["chunks"] == 6, st


@two_devices
def test_two_devices_resident(monkeypatch):
    """A device-resident array over two devices (round robin): one task,
    both devices' partials enqueued in turn, read back in one get_many
    (sum/max: each device's partials in one buffer there; means' counts,
    var's three fields: each device's gathered on it), NumPy's results.
    Every chunk in a buffer of its own (no slabs: test_two_devices_slabs
    joins them)."""
    monkeypatch.setattr(gd, "_SLAB", 0)
    a = make_data(np.float32, (96, 20), "general")
    x = gd.to_device(da.from_array(a, chunks=(8, 20)), devices=[0, 1],
                     policy="round_robin").persist()
    assert sorted({b.device_index for b in _blocks(x)}) == [0, 1]
    batches = []
    real = gd._core.get_many

    def spy(arrays):
        batches.append(sorted(b.device_index for b in arrays))
        return real(arrays)
    monkeypatch.setattr(gd._core, "get_many", spy)
    for op in ("sum", "mean", "var", "max", "argmin"):
        for axis in (None, 0):
            del batches[:]
            got = _quiet(getattr(gd, op)(x, axis=axis).compute)
            exp = _quiet(getattr(np, op), a.astype(np.float64), axis=axis)
            np.testing.assert_allclose(got, exp, rtol=2e-5, atol=1e-6,
                                       err_msg="%s %s" % (op, axis))
            if op != "argmin":  # (Dask's arg_reduction: a task per chunk)
                # sum/max: a first partial and one buffer of the other five
                # per device (issue 43); mean/var: every partial
                n = [batches[0].count(d) for d in (0, 1)] if batches \
                    else [0, 0]
                assert n == [2, 2] if op in ("sum", "max") else \
                    min(n) >= 6, (op, axis, batches)


def test_one_block_result_without_finalize():
    """A persisted device-resident array's reduction to one block of at
    most one dimension is a gd._OneBlock: compute() returns the task's
    block with no finalize task after it (its postcompute is Delayed's),
    with NumPy's values, dtypes and shapes; beside other collections in
    one dask.compute the results keep their order; what is derived from
    it is a plain dask Array; several blocks, or keepdims of a 2-d
    array, stay plain Arrays."""
    a = _data("sum", np.float32, (40, 6), seed=9)
    x = gd.to_device(da.from_array(a, chunks=(7, 6))).persist()
    r = gd.sum(x)
    assert type(r) is gd._OneBlock
    from dask.callbacks import Callback
    ran = []
    with Callback(pretask=lambda key, dsk, state: ran.append(key)):
        r.compute(scheduler="sync")
        da.Array(r.dask, r.name, r.chunks, meta=r._meta).compute(
            scheduler="sync")
    assert len(ran) == 3, ran  # the result's task alone; a plain Array's
    # compute of the same graph: its task and Dask's finalize
    for op, axis in (("sum", None), ("max", None), ("mean", None),
                     ("min", 0), ("sum", 0), ("var", None)):
        r = getattr(gd, op)(x, axis=axis)
        assert type(r) is gd._OneBlock, (op, axis)
        for sched in ("threads", "sync"):
            got = r.compute(scheduler=sched)
            exp = getattr(np, op)(a, axis=axis)
            assert np.shape(got) == np.shape(exp), (op, axis, got)
            assert np.asarray(got).dtype == exp.dtype, (op, axis, got)
            _check(got, exp, "%s %s %s" % (op, axis, sched),
                   _scale(op, a, axis, False) if op != "var"
                   else 4 * np.abs(exp.astype(np.float64)))
    s, m, b, s1 = dask.compute(gd.sum(x), gd.max(x, axis=0),
                               da.from_array(a, chunks=(7, 6)).sum(), gd.sum(x) + 1)
    _check(s, a.sum(), "mixed: sum", _scale("sum", a, None, False))
    _check(m, a.max(axis=0), "mixed: max")
    _check(b, a.sum(), "mixed: dask's", _scale("sum", a, None, False))
    _check(s1, a.sum() + 1, "mixed: sum + 1", _scale("sum", a, None, False))
    assert type(gd.sum(x) + 1) is da.Array
    assert type(gd.sum(x).persist()) is da.Array
    assert type(gd.sum(x, axis=0, keepdims=True)) is da.Array
    assert type(gd.sum(x, axis=1)) is da.Array  # 6 output blocks


def test_one_block_compute_inline(monkeypatch):
    """A gd._OneBlock's plain compute() runs its one task in the calling
    thread (also with scheduler=None), with NumPy's values; a scheduler
    passed or set in Dask's
    config, an active Dask Callback, or any other argument takes Dask's
    own compute (here made to fail, to see which path ran)."""
    import threading
    from dask.callbacks import Callback
    a = _data("sum", np.float32, (40, 6), seed=11)
    x = gd.to_device(da.from_array(a, chunks=(7, 6))).persist()

    def dask_path(self, **kw):
        raise RuntimeError("dask's compute")
    monkeypatch.setattr(da.Array, "compute", dask_path)
    where = []
    real = gd._resident_agg

    def spy(*args, **kw):
        where.append(threading.get_ident())
        return real(*args, **kw)
    monkeypatch.setattr(gd, "_resident_agg", spy)
    for op, axis in (("sum", None), ("max", 0), ("mean", None)):
        r = getattr(gd, op)(x, axis=axis)
        got = r.compute(scheduler=None) if op == "max" else r.compute()
        _check(got, getattr(np, op)(a, axis=axis), "%s %s" % (op, axis),
               _scale(op, a, axis, False))
        assert np.asarray(got).dtype == getattr(np, op)(a, axis=axis).dtype
    assert where == [threading.get_ident()] * 3, where
    r = gd.sum(x)
    for call in (lambda: r.compute(scheduler="threads"),
                 lambda: r.compute(optimize_graph=False)):
        with pytest.raises(RuntimeError, match="dask's compute"):
            call()
    with dask.config.set(scheduler="sync"):
        with pytest.raises(RuntimeError, match="dask's compute"):
            r.compute()
    with Callback(pretask=lambda key, dsk, state: None):
        with pytest.raises(RuntimeError, match="dask's compute"):
            r.compute()
    _check(r.compute(), a.sum(), "after", _scale("sum", a, None, False))


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="distributed is not installed (pip install distributed)")
def test_resident_under_a_client():
    """Chunks persisted device-resident in this process, reduced while a
    dask.distributed client is active (one worker process): the result
    task's partials are pickled as values (gpured.Array.__reduce__) and
    combined on the worker: NumPy's results, one block and several."""
    from distributed import Client
    a = _data("sum", np.float32, (120, 10), seed=13)
    x = gd.to_device(da.from_array(a, chunks=(20, 10))).persist()
    with gd.local_cluster(devices=[0], silence_logs=40) as cluster, \
            Client(cluster):
        for op, axis in (("sum", None), ("max", 0), ("mean", None), ("sum", 1)):
            got = getattr(gd, op)(x, axis=axis).compute()
            _check(got, getattr(np, op)(a, axis=axis), "client %s %s" % (op, axis),
                   _scale(op, a, axis, False))


def test_resident_groups_kept_per_axes(monkeypatch):
    """A persisted array's blocks, grouped and joined for a reduction over
    some axes, are kept on its graph: a second reduction over the same
    axes does not walk the graph again; other axes, and another persist
    of the same lazy array, are grouped afresh; results stay NumPy's."""
    walks = []
    real = gd._resident_blocks

    def spy(x):
        walks.append(x.name)
        return real(x)
    monkeypatch.setattr(gd, "_resident_blocks", spy)
    a = _data("sum", np.int32, (30, 6), seed=4)
    lazy = gd.to_device(da.from_array(a, chunks=(7, 3)))
    x, y = lazy.persist(), lazy.persist()
    for axis, n in ((0, 1), (0, 1), (None, 2), (1, 3), (None, 3), (0, 3)):
        for op in ("sum", "max", "mean"):
            _check(getattr(gd, op)(x, axis=axis).compute(),
                   getattr(np, op)(a, axis=axis), "%s %s" % (op, axis),
                   _scale(op, a, axis, False))
        assert len(walks) == n, (axis, walks)
    _check(gd.sum(y, axis=0).compute(), np.sum(a, axis=0), "second persist")
    assert len(walks) == 4


@two_devices
def test_two_devices_slabs(monkeypatch):
    """Round robin over two devices: each device's chunks in one slab
    there, one core call per device for a sum over axis 0, NumPy's
    results, stats() counting every chunk."""
    seen = _core_calls(monkeypatch)
    a = make_data(np.float32, (96, 20), "general")
    x = gd.to_device(da.from_array(a, chunks=(8, 20)), devices=[0, 1],
                     policy="round_robin").persist()
    bl = _blocks(x)
    assert [b.device_index for b in bl] == [0, 1] * 6
    assert len({id(b.buffer) for b in bl}) == 2
    for op in ("sum", "max", "mean", "var"):
        for axis in (None, 0):
            del seen[:]
            gd.reset_stats()
            got = _quiet(getattr(gd, op)(x, axis=axis).compute)
            exp = _quiet(getattr(np, op), a, axis=axis)
            _check(got, exp, "two devices, slabs: %s %s" % (op, axis),
                   4 * np.abs(exp.astype(np.float64)) if op == "var"
                   else _scale(op, a, axis, False))
            if op in ("sum", "max"):
                assert sorted(seen) == [(48, 20), (48, 20)], (op, seen)
            st = gd.stats()
            assert st[0]["chunks"] == st[1]["chunks"] == 6, st


def test_two_devices_in_child():
    """Where this process sees one device, run the two-device tests in a
    child with two PoCL CPU devices."""
    if NDEV >= 2:
        pytest.skip("this process has %d devices: the two-device tests ran "
                    "here" % NDEV)
    run_two_device_child("test_dask_family.py", 600)
