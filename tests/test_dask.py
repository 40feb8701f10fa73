"""gpured.dask: reductions and scans over Dask arrays, on several devices.

Results are checked against NumPy on the whole array (conftest.compare:
types, dtypes, shapes, exact integers/min/max/arg results, accuracy bounds
for floats) and against dask.array's own functions (dtype, shape, chunks),
for several chunkings, axes, keepdims, dtypes and NaN placements.

The two-device tests (``test_two_devices_*``) need two OpenCL devices.
Where this process has one, ``test_two_devices_in_child`` runs them in a
child process with ``POCL_DEVICES="pthread pthread"`` (PoCL then shows two
CPU devices), so they run wherever PoCL is installed: both devices must
have reduced chunks (gpured.dask.stats() and the devices' memory pools),
with the threaded scheduler and with dask.distributed (one worker per
device) when distributed is installed.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gpured
from conftest import HAS_FP64, compare, make_data, run_two_device_child

try:
    import dask
    import dask.array as da
    import gpured.dask as gd
    HAS_DASK = True
except ImportError:  # pragma: no cover - the repo's test extras install dask
    HAS_DASK = False

try:
    import distributed  # noqa: F401
    HAS_DISTRIBUTED = True
except ImportError:
    HAS_DISTRIBUTED = False

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NDEV = len(gpured.devices())

needs_dask = pytest.mark.skipif(
    not HAS_DASK, reason="dask is not installed (pip install dask): "
    "gpured.dask cannot be tested")
two_devices = pytest.mark.skipif(
    NDEV < 2, reason="one OpenCL device here: test_two_devices_in_child "
    "runs these with POCL_DEVICES='pthread pthread'")

DTYPES = [np.bool_, np.int8, np.int32, np.uint64, np.float32] + (
    [np.float64] if HAS_FP64 else [])
FLOATS = [np.float32] + ([np.float64] if HAS_FP64 else [])
REDS = ["sum", "prod", "min", "max", "all", "any", "mean"]
ARGS = ["argmin", "argmax"]
SCANS = ["cumsum", "cumprod", "cummin", "cummax"]

# (shape, chunks): uneven chunks, 1-D, 3-D, one chunk, a zero-size chunk
CASES = [
    ((37, 23), (10, 7)),
    ((50,), (13,)),
    ((4, 5, 6), (3, 2, 4)),
    ((9, 8), (9, 8)),
    ((5, 6), ((3, 0, 2), (4, 2))),
]


def _axes(ndim, arg=False):
    out = [None] + list(range(ndim)) + [-1]
    if not arg and ndim >= 2:
        out += [(0, ndim - 1)]
    if not arg and ndim >= 3:
        out += [(1, 2)]
    return out


def _kind(op):
    return {"prod": "prod", "all": "fewzeros", "any": "fewnonzeros",
            "min": "ties", "max": "ties"}.get(op, "general")


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*a, **k)


def _np(op, a, **kw):
    return _quiet(getattr(np, op), a, **kw)


# ------------------------------------------------------------ packaging

def _py(code, env=None):
    e = dict(os.environ, **(env or {}))
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=300)


def test_import_gpured_does_not_import_dask():
    r = _py("import sys, gpured, numpy as np; gpured.sum(np.ones(3));"
            "bad = [m for m in sys.modules if m == 'dask' or "
            "m.startswith('dask.')]; assert not bad, bad")
    assert r.returncode == 0, r.stderr


def test_gpured_dask_without_dask_names_pip_install():
    r = _py("import sys; sys.modules['dask'] = None\n"
            "try:\n    import gpured.dask\nexcept ImportError as e:\n"
            "    print('IMPORTERROR', e)\n")
    assert r.returncode == 0, r.stderr
    assert "IMPORTERROR" in r.stdout and "pip install dask" in r.stdout


@needs_dask
def test_array_query_planning_refused_clearly():
    r = _py("import dask.array as da, gpured.dask as gd\n"
            "try:\n    gd.sum(da.ones(4))\n"
            "except NotImplementedError as e:\n    print('REFUSED', e)\n",
            {"DASK_ARRAY__QUERY_PLANNING": "True"})
    assert r.returncode == 0, r.stderr
    assert "REFUSED" in r.stdout and "query-planning" in r.stdout


# ------------------------------------------------------------ reductions

@needs_dask
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", REDS)
def test_reduction_against_numpy_and_dask(op, dtype):
    for ci, (shape, chunks) in enumerate(CASES):
        a = make_data(dtype, shape, _kind(op), seed=ci)
        x = da.from_array(a, chunks=chunks)
        for i, axis in enumerate(_axes(len(shape))):
            keepdims = bool(i % 2)
            kw = {"axis": axis, "keepdims": keepdims}
            r = getattr(gd, op)(x, **kw)
            ref = getattr(da, op)(x, **kw)
            what = "gd.%s(%s %s chunks=%s, %s)" % (op, np.dtype(dtype), shape,
                                                   chunks, kw)
            assert (r.dtype, r.shape, r.chunks) == (ref.dtype, ref.shape,
                                                     ref.chunks), what
            got = _quiet(r.compute)
            compare(op, a, got, _np(op, a, **kw), kw, what)


@needs_dask
@pytest.mark.parametrize("op", ["sum", "prod", "mean"])
def test_reduction_dtype_argument(op):
    a = make_data(np.int16, (30, 20), "prod" if op == "prod" else "general")
    x = da.from_array(a, chunks=(7, 9))
    for dtype in ([np.int8, np.uint32, np.float32] +
                  ([np.float64] if HAS_FP64 else [])):
        for axis in (None, 1):
            kw = {"axis": axis, "dtype": dtype}
            compare(op, a, _quiet(getattr(gd, op)(x, **kw).compute),
                    _np(op, a, **kw), kw)


@needs_dask
@pytest.mark.parametrize("op", ["sum", "prod", "min", "max"])
def test_initial(op):
    a = make_data(np.int32, (12, 10), "prod" if op == "prod" else "ties")
    x = da.from_array(a, chunks=(5, 4))
    for axis in (None, 0, (0, 1)):
        kw = {"axis": axis, "initial": 3}
        compare(op, a, getattr(gd, op)(x, **kw).compute(), _np(op, a, **kw),
                kw)
    e = np.zeros((0, 4), np.int32)
    kw = {"axis": 0, "initial": 5}
    compare(op, e, getattr(gd, op)(da.from_array(e), **kw).compute(),
            _np(op, e, **kw), kw)


@needs_dask
@pytest.mark.parametrize("split_every", [2, 3, {0: 2, 1: 4}])
@pytest.mark.parametrize("op", ["sum", "min", "mean", "all"])
def test_split_every_tree(op, split_every):
    a = make_data(np.float32 if op != "all" else np.bool_, (64, 48),
                  _kind(op))
    x = da.from_array(a, chunks=(4, 5))  # 16 x 10 chunks: several levels
    for axis in (None, 0, 1):
        kw = {"axis": axis}
        r = getattr(gd, op)(x, split_every=split_every, **kw)
        ref = getattr(da, op)(x, split_every=split_every, **kw)
        assert len(r.dask) == len(ref.dask)  # the same tree as Dask's
        compare(op, a, r.compute(), _np(op, a, **kw), kw)


@needs_dask
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_nan_placement(dtype):
    """NaN propagates through min/max/sum/mean wherever it is (first chunk,
    a middle chunk, the last element, two chunks, a whole row), and
    argmin/argmax give the first NaN's index across chunks."""
    base = make_data(dtype, (23, 17), "ties")
    places = [[], [(0, 0)], [(11, 8)], [(22, 16)], [(3, 15), (20, 2)],
              [(7, j) for j in range(17)], [(i, 5) for i in range(23)]]
    for chunks in ((5, 4), (23, 3), (6, 17)):
        for pl in places:
            a = base.copy()
            for p in pl:
                a[p] = np.nan
            x = da.from_array(a, chunks=chunks)
            for op in ("min", "max", "sum", "mean", "argmin", "argmax"):
                for axis in (None, 0, 1):
                    kw = {"axis": axis}
                    got = _quiet(getattr(gd, op)(x, **kw).compute)
                    compare(op, a, got, _np(op, a, **kw), kw,
                            "%s %s nan at %s chunks %s" % (op, kw, pl, chunks))


# ---------------------------------------------------------- arg reductions

@needs_dask
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ARGS)
def test_arg_reduction_first_index(op, dtype):
    for ci, (shape, chunks) in enumerate(CASES):
        a = make_data(dtype, shape, "ties", seed=ci)  # ties across chunks
        x = da.from_array(a, chunks=chunks)
        for i, axis in enumerate(_axes(len(shape), arg=True)):
            kw = {"axis": axis, "keepdims": bool(i % 2)}
            r = getattr(gd, op)(x, **kw)
            assert r.dtype == np.intp
            compare(op, a, r.compute(), _np(op, a, **kw), kw)


@needs_dask
@pytest.mark.parametrize("op", ARGS)
def test_arg_ties_across_blocks_of_a_2d_grid(op):
    """The global minimum in two blocks of a 2-D block grid: NumPy wants
    the smaller flat index, which is in the block visited later in block
    order (dask.array.argmin returns the other one, 4 instead of 3)."""
    a = np.zeros((4, 4), np.float32)
    v = -1 if op == "argmin" else 1
    a[1, 0] = v   # flat 4, block (0, 0)
    a[0, 3] = v   # flat 3, block (0, 1)
    x = da.from_array(a, chunks=2)
    assert getattr(gd, op)(x).compute() == getattr(np, op)(a) == 3
    a[0, 3] = a[1, 0] = np.nan
    assert getattr(gd, op)(x).compute() == getattr(np, op)(a) == 3


@needs_dask
def test_arg_errors():
    x = da.from_array(np.arange(12.0).reshape(3, 4), chunks=2)
    with pytest.raises(TypeError):
        gd.argmin(x, axis=(0, 1))
    with pytest.raises(ValueError):
        gd.argmax(da.from_array(np.zeros((0, 3))))
    with pytest.raises(ValueError):
        gd.argmin(da.from_array(np.zeros((0, 3))), axis=0)
    assert gd.argmin(da.from_array(np.zeros((0, 3))), axis=1).compute().shape \
        == (0,)


# ------------------------------------------------------------- empties

@needs_dask
def test_empty_reductions():
    e = da.from_array(np.zeros((0, 4), np.float32), chunks=(1, 2))
    assert gd.sum(e).compute() == np.float32(0)
    assert gd.prod(e, axis=0).compute().tolist() == [1.0] * 4
    assert gd.all(e).compute() is np.True_ and gd.any(e).compute() is np.False_
    with pytest.raises(ValueError):
        gd.min(e).compute()
    with pytest.raises(ValueError):
        gd.max(e, axis=0).compute()
    assert gd.min(e, axis=1).compute().shape == (0,)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        m = gd.mean(e, axis=0).compute()
    assert np.isnan(m).all() and m.dtype == np.float32


@needs_dask
@pytest.mark.parametrize("op", REDS + ARGS)
def test_zero_d_and_no_axes(op):
    z = np.array(3, np.int32)
    for kd in (False, True):
        kw = {"keepdims": kd}
        got = getattr(gd, op)(da.from_array(z), **kw).compute()
        compare(op, z, got, _np(op, z, **kw), kw)
    if op in ARGS:
        return
    a = make_data(np.float32, (10, 4), _kind(op))
    kw = {"axis": ()}
    compare(op, a, getattr(gd, op)(da.from_array(a, chunks=3), **kw)
            .compute(), _np(op, a, **kw), kw)


# -------------------------------------------------------------- scans

def _scan_ref(op, a, axis, dtype, exclusive):
    """NumPy's scan (the flattened array for axis=None), exclusive made
    from the inclusive one."""
    fn = {"cumsum": np.cumsum, "cumprod": np.cumprod,
          "cummin": np.minimum.accumulate,
          "cummax": np.maximum.accumulate}[op]
    if axis is None:
        a, axis = a.reshape(-1), 0
    r = _quiet(fn, a, axis=axis, dtype=dtype)
    if exclusive:
        ident = {"cumsum": 0, "cumprod": 1}.get(op)
        if ident is None:
            big = op == "cummin"
            ident = (np.inf if big else -np.inf) if r.dtype.kind == "f" else (
                big if r.dtype.kind == "b" else
                (np.iinfo(r.dtype).max if big else np.iinfo(r.dtype).min))
        first = np.full_like(np.take(r, [0], axis=axis), ident)
        r = np.concatenate([first, np.delete(r, -1, axis=axis)], axis=axis) \
            if r.shape[axis] else r
    return r


def _scan_close(op, a, got, axis, exclusive, what):
    ref = _scan_ref(op, a, axis, None, exclusive)
    assert got.dtype == ref.dtype and got.shape == ref.shape, what
    if ref.dtype.kind != "f" or op in ("cummin", "cummax"):
        np.testing.assert_array_equal(got, ref, err_msg=what)
        return
    # floats: against a float64/long double reference, n eps per element
    hi = np.longdouble
    ref = _scan_ref(op, a.astype(hi), axis, None, exclusive)
    mag = _scan_ref("cumsum", np.abs(a.astype(hi)), axis, None, exclusive) \
        if op == "cumsum" else np.abs(ref)
    n = a.size if axis is None else a.shape[axis]
    eps = np.finfo(got.dtype).eps
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=what + " (NaN)")
    err = np.abs(got.astype(hi) - ref)[~nan]
    tol = (n + 4) * eps * mag[~nan] + np.finfo(got.dtype).tiny
    assert (err <= tol).all(), what


@needs_dask
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.float32]
                         + ([np.float64] if HAS_FP64 else []),
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", SCANS)
def test_scan_against_numpy(op, dtype):
    for ci, (shape, chunks) in enumerate(CASES[:3] + CASES[4:]):
        a = make_data(dtype, shape, "prod" if op == "cumprod" else "ties",
                      seed=ci)
        x = da.from_array(a, chunks=chunks)
        for axis in [None] + list(range(len(shape))):
            for method, exclusive in (("sequential", False),
                                      ("blelloch", False),
                                      ("sequential", True)):
                r = getattr(gd, op)(x, axis=axis, method=method,
                                    exclusive=exclusive)
                what = "gd.%s(%s %s chunks=%s, axis=%s, %s, exclusive=%s)" % (
                    op, np.dtype(dtype), shape, chunks, axis, method,
                    exclusive)
                if not exclusive and op in ("cumsum", "cumprod"):
                    ref = getattr(da, op)(x, axis=axis)
                    assert (r.dtype, r.shape) == (ref.dtype, ref.shape), what
                _scan_close(op, a, _quiet(r.compute), axis, exclusive, what)


@needs_dask
def test_scan_dtype_and_nan():
    a = make_data(np.int8, (40, 6), "general")
    x = da.from_array(a, chunks=(7, 4))
    for dtype in (np.int8, np.int64, np.float32):
        got = gd.cumsum(x, axis=0, dtype=dtype).compute()
        np.testing.assert_array_equal(got, np.cumsum(a, axis=0, dtype=dtype))
    f = make_data(np.float32, (40,), "ties")
    f[17] = np.nan
    y = da.from_array(f, chunks=6)
    for op in ("cummin", "cummax", "cumsum"):
        for exclusive in (False, True):
            _scan_close(op, f, _quiet(getattr(gd, op)(y, exclusive=exclusive)
                                      .compute), None, exclusive, op)


@needs_dask
def test_out_argument():
    a = make_data(np.float32, (20, 10))
    x = da.from_array(a, chunks=(6, 4))
    o = da.zeros((10,), dtype=np.float32, chunks=10)
    r = gd.sum(x, axis=0, out=o)
    assert r is o
    compare("sum", a, o.compute(), np.sum(a, axis=0), {"axis": 0})
    o2 = da.zeros_like(x)
    gd.cumsum(x, axis=1, out=o2)
    _scan_close("cumsum", a, o2.compute(), 1, False, "out")


@needs_dask
def test_argument_errors():
    x = da.from_array(np.arange(12.0).reshape(3, 4), chunks=2)
    with pytest.raises(ValueError, match="policy"):
        gd.sum(x, policy="fastest")
    with pytest.raises(TypeError, match="object"):
        gd.sum(x.astype(object))
    with pytest.raises(TypeError):
        gd.sum(x, bogus=1)
    with pytest.raises(TypeError):
        gd.all(x, dtype=np.int8)  # not NumPy's signature either
    with pytest.raises(ValueError):
        gd.cumsum(x, method="fast")
    with pytest.raises(np.exceptions.AxisError):
        gd.sum(x, axis=2)
    with pytest.raises(ValueError):
        gd.sum(x, axis=(0, 0))
    with pytest.raises(ValueError, match="device"):
        gd.sum(x, devices=["no such device"]).compute()


@needs_dask
def test_numpy_input_and_signatures():
    import inspect
    a = make_data(np.int32, (10, 10))
    assert gd.sum(a, axis=0).compute().tolist() == a.sum(axis=0).tolist()
    s = inspect.signature(gd.sum)
    assert list(s.parameters)[:7] == ["a", "axis", "dtype", "keepdims",
                                      "split_every", "out", "initial"]
    assert "exclusive" in inspect.signature(gd.cumsum).parameters
    assert "numpy.sum" in gd.sum.__doc__


# --------------------------------------------------- device-resident chunks

@needs_dask
def test_device_resident_chunks_stay_on_device(monkeypatch):
    """Reductions of Array chunks move only partials to the host, and scans
    of them give Array chunks on the same devices."""
    a = make_data(np.float32, (60, 20), "ties")
    x = gd.to_device(da.from_array(a, chunks=(8, 7))).persist()
    blocks = [x.blocks[i, j].compute() for i in range(x.numblocks[0])
              for j in range(x.numblocks[1])]
    assert all(isinstance(b, gpured.Array) for b in blocks)
    sizes = []
    real_get = gpured.Array.get

    def spy(self, *a, **k):
        sizes.append(self.size)
        return real_get(self, *a, **k)

    monkeypatch.setattr(gpured.Array, "get", spy)
    for op in REDS + ARGS:
        for axis in (None, 0, 1):
            kw = {"axis": axis}
            got = _quiet(getattr(gd, op)(x, **kw).compute)
            compare(op, a, got, _np(op, a, **kw), kw, "device %s %s" % (op, kw))
    assert sizes and max(sizes) <= 8  # partials: at most one chunk's row
    sizes.clear()
    for op in SCANS:
        for axis in (0, 1):
            for exclusive in (False, True):
                r = getattr(gd, op)(x, axis=axis, exclusive=exclusive)
                assert isinstance(r._meta, gpured.Array)
                sizes.clear()
                out = r.persist()
                assert max(sizes, default=0) <= 8, (op, axis, sizes)
                devs = [(out.blocks[i, j].compute().device_index,
                         x.blocks[i, j].compute().device_index)
                        for i in range(x.numblocks[0])
                        for j in range(x.numblocks[1])]
                assert all(p == q for p, q in devs)
                _scan_close(op, a, np.asarray(out.compute()), axis, exclusive,
                            "device %s axis %s" % (op, axis))
    y = gd.to_host(x)
    assert isinstance(y.blocks[0, 0].compute(), np.ndarray)
    with pytest.raises(ValueError, match="rechunk"):
        gd.cumsum(x)  # axis=None over a 2-D grid of device chunks


@needs_dask
def test_from_array_of_one_device_array():
    a = make_data(np.int32, (30, 8))
    d = gpured.to_device(a)
    x = da.from_array(d, chunks=(7, 8), asarray=False)
    assert gd.sum(x, axis=0).compute().tolist() == a.sum(axis=0).tolist()
    assert gd.argmax(x).compute() == a.argmax()
    got = gd.cumsum(x, axis=None).compute()  # chunks along axis 0 only
    np.testing.assert_array_equal(got, np.cumsum(a))


# --------------------------------------------------------- two devices

def _pool_counters(p):
    m = gpured.memory_info(p)
    return m["allocations"] + m["reuses"]


@needs_dask
@two_devices
def test_two_devices_round_robin_threaded():
    a = make_data(np.float32, (96, 50))
    x = da.from_array(a, chunks=(8, 50))  # 12 chunks
    before = [_pool_counters(p) for p in (0, 1)]
    gd.reset_stats()
    with dask.config.set(scheduler="threads", num_workers=4):
        got = gd.sum(x, axis=1, devices=[0, 1], policy="round_robin").compute()
    compare("sum", a, got, np.sum(a, axis=1), {"axis": 1})
    st = gd.stats()
    assert sorted(st) == [0, 1] and st[0]["chunks"] == st[1]["chunks"] == 6, st
    assert st[0]["bytes"] + st[1]["bytes"] == a.nbytes
    after = [_pool_counters(p) for p in (0, 1)]
    assert after[0] > before[0] and after[1] > before[1], (before, after)


@needs_dask
@two_devices
def test_two_devices_rate_policy():
    a = make_data(np.float64 if HAS_FP64 else np.float32, (64, 40))
    x = da.from_array(a, chunks=(4, 40))  # 16 chunks
    gd.reset_stats()
    # sequential execution, equal rates: nothing in flight, every chunk a
    # tie, ties taken in turn
    got = gd.mean(x, axis=0, devices=[0, 1], rates=[1, 1]).compute(
        scheduler="sync")
    compare("mean", a, got, np.mean(a, axis=0), {"axis": 0})
    st = gd.stats()
    assert st[0]["chunks"] == st[1]["chunks"] == 8, st
    # sequential execution, one device 10x faster: it finishes every chunk
    # first, so it gets them all
    gd.reset_stats()
    gd.sum(x, devices=[0, 1], rates={0: 1.0, 1: 10.0}).compute(
        scheduler="sync")
    assert list(gd.stats()) == [1]
    # chunks in flight (threads): shares follow the rates
    pl = gd._Placer([0, 1], "rate", [3, 1])
    picks = [pl.pick(1000) for _ in range(8)]
    assert picks.count(0) == 6 and picks.count(1) == 2, picks
    for p in picks:
        pl.done(p, 1000)
    with dask.config.set(scheduler="threads", num_workers=4):
        gd.reset_stats()
        got = gd.max(x, axis=1, devices="all", rates=[1] * NDEV).compute()
    compare("max", a, got, np.max(a, axis=1), {"axis": 1})
    assert len(gd.stats()) >= 2


@needs_dask
@two_devices
def test_two_devices_calibration():
    r = gd.calibrate([0, 1], nbytes=1 << 20)
    assert sorted(r) == [0, 1] and all(v > 0 for v in r.values())
    r = gd.calibrate([0, 1], resident="device", nbytes=1 << 20)
    assert all(v > 0 for v in r.values())
    x = da.from_array(make_data(np.int32, (40, 10)), chunks=(5, 10))
    gd.reset_stats()
    gd.sum(x, devices=[0, 1]).compute()  # policy="rate", measured if unlike
    assert sum(s["chunks"] for s in gd.stats().values()) == 8


@needs_dask
@two_devices
def test_two_devices_env_pins_one_device(monkeypatch):
    x = da.from_array(make_data(np.int32, (40, 10)), chunks=(5, 10))
    monkeypatch.setenv("GPURED_DEVICE", gpured.devices()[1]["index"])
    gd.reset_stats()
    assert gd.sum(x).compute() == np.sum(x.compute())
    assert list(gd.stats()) == [1]
    monkeypatch.delenv("GPURED_DEVICE")
    gd.reset_stats()
    gd.sum(x, policy="round_robin").compute()
    assert len(gd.stats()) == NDEV


@needs_dask
def test_device_resident_partials_one_read_per_device(monkeypatch):
    """A persisted device-resident array's one-call reductions (issue 43):
    every partial written into one buffer per device, read back by one
    get_many of a few arrays (not one per chunk), results as NumPy's,
    stats counted per chunk."""
    rng = np.random.default_rng(43)
    reads = []
    real = gpured._core.get_many

    def spy(arrs):
        reads.append(len(arrs))
        return real(arrs)

    monkeypatch.setattr(gpured._core, "get_many", spy)
    for dt in (np.int32, np.float32):
        a = (rng.standard_normal((12, 9, 5)) * 4).astype(dt)
        x = gd.to_device(da.from_array(a, chunks=(3, 4, 5)),
                         policy="round_robin").persist()
        for op in ("sum", "prod", "min", "max", "all", "any", "nansum"):
            for axis in (None, 0, (0, 1), 2):
                reads.clear()
                got = _quiet(getattr(gd, op)(x, axis=axis).compute)
                want = _quiet(lambda: getattr(np, op)(a, axis=axis))
                assert got.dtype == want.dtype, (op, dt, axis)
                if dt == np.float32:
                    np.testing.assert_allclose(got, want, rtol=1e-4,
                                               atol=1e-4)
                else:
                    np.testing.assert_array_equal(got, want)
                # per output block: a first partial and one buffer per
                # device (12 reduced blocks at most here)
                assert reads and max(reads) <= 2 * NDEV, (op, axis, reads)
    gd.reset_stats()
    gd.sum(x).compute()
    assert sum(s["chunks"] for s in gd.stats().values()) == 4 * 3
    assert sum(s["bytes"] for s in gd.stats().values()) == x.nbytes


@needs_dask
@two_devices
def test_two_devices_device_resident():
    a = make_data(np.float32, (64, 30), "ties")
    x = gd.to_device(da.from_array(a, chunks=(8, 15)), devices=[0, 1],
                     policy="round_robin").persist()
    devs = [x.blocks[i, j].compute().device_index
            for i in range(8) for j in range(2)]
    assert devs == [0, 1] * 8
    before = [_pool_counters(p) for p in (0, 1)]
    gd.reset_stats()
    for op in ("sum", "min", "argmax", "mean"):
        for axis in (None, 0, 1):
            kw = {"axis": axis}
            compare(op, a, getattr(gd, op)(x, **kw).compute(),
                    _np(op, a, **kw), kw)
    r = gd.cumsum(x, axis=0).persist()
    assert [r.blocks[i, j].compute().device_index
            for i in range(8) for j in range(2)] == devs
    _scan_close("cumsum", a, r.compute(), 0, False, "two-device cumsum")
    st = gd.stats()
    assert st[0]["chunks"] > 0 and st[1]["chunks"] > 0
    after = [_pool_counters(p) for p in (0, 1)]
    assert after[0] > before[0] and after[1] > before[1]
    # "rate" placement of identical devices: alternate as round robin
    y = gd.to_device(da.from_array(a, chunks=(8, 30)), devices=[0, 1])
    if gpured.devices()[0]["name"] == gpured.devices()[1]["name"]:
        assert [y.blocks[i, 0].compute().device_index for i in range(8)] \
            == [0, 1] * 4


@needs_dask
@two_devices
@pytest.mark.skipif(not HAS_DISTRIBUTED, reason="distributed is not "
                    "installed (pip install distributed)")
def test_two_devices_distributed():
    """dask.distributed, one worker process per device (GPURED_DEVICE in
    each worker's environment): each worker reduces its chunks on its own
    device, and both devices work."""
    from distributed import Client
    a = make_data(np.float32, (200, 40), "ties")
    x = da.from_array(a, chunks=(10, 40))
    with gd.local_cluster(devices=[0, 1], threads_per_worker=2,
                          silence_logs=40) as cluster, \
            Client(cluster) as client:
        client.run(gd.reset_stats)
        compare("sum", a, gd.sum(x).compute(), np.sum(a), {})
        compare("argmin", a, gd.argmin(x, axis=0).compute(),
                np.argmin(a, axis=0), {"axis": 0})
        _scan_close("cumsum", a, gd.cumsum(x, axis=0).compute(), 0, False,
                    "distributed cumsum")
        got = client.run(lambda: (os.environ.get("GPURED_DEVICE"),
                                  gd.stats()))
    want = {gpured.devices()[p]["index"]: p for p in (0, 1)}
    seen = {}
    for env, st in got.values():
        assert list(st) == [want[env]], got  # only its own device
        seen[want[env]] = st[want[env]]["chunks"]
    assert sorted(seen) == [0, 1] and all(v > 0 for v in seen.values()), got


@two_devices
def test_two_devices_stream_at_once():
    """Host arrays streamed to two devices from several threads at once:
    each device's staging pool serves one stream at a time (a third thread
    waits for device 0's), the host-side waits of a stream run without the
    device lock (so two streams are in flight together: streams_at_once),
    and registrations released while writes from them are in flight
    (set_staging(register=...) from the main thread) end once those writes
    are done.  Every result matches NumPy."""
    import threading
    old_place = gpured.placement("current")
    old = gpured.set_staging(chunk_bytes=4096, buffers=2, min_bytes=0,
                             force=True, register="always")
    try:
        arrays = [np.arange(k * 1000, k * 1000 + 100_003, dtype=np.int64)
                  for k in range(3)]
        errors = []
        stop = threading.Event()

        def work(k, dev):
            a = arrays[k]
            try:
                for i in range(12):
                    got = gpured.sum(a, device=dev)
                    if got != a.sum():
                        errors.append((k, dev, i, "sum", got, a.sum()))
                    if i % 4 == 3:
                        c = gpured.cumsum(a[7:], device=dev)
                        if not np.array_equal(c, np.cumsum(a[7:])):
                            errors.append((k, dev, i, "cumsum"))
            except Exception as e:  # reported below, with the others
                errors.append((k, dev, repr(e)))

        ts = [threading.Thread(target=work, args=a)
              for a in ((0, 0), (1, 1), (2, 0))]
        for t in ts:
            t.start()
        modes = ["never", "always"]
        for i in range(6):  # registrations released and made again
            if not any(t.is_alive() for t in ts):
                break
            gpured.set_staging(register=modes[i % 2])
            stop.wait(0.05)
        gpured.set_staging(register="always")
        for t in ts:
            t.join()
        assert not errors, errors[:5]
        st = gpured.staging()
        assert st["streams_at_once"] >= 2, st
        for dev in (0, 1):  # registered again
            assert gpured.sum(arrays[dev], device=dev) == arrays[dev].sum()
        assert gpured.staging()["direct_chunks"] > st["direct_chunks"]
    finally:
        gpured.placement(old_place)
        gpured.set_staging(register="auto",
                           **{k: old[k] for k in ("chunk_bytes", "buffers",
                                                  "min_bytes", "force",
                                                  "threads")})


def test_two_devices_in_child():
    """Where this process sees one device, run the two-device tests in a
    child with two PoCL CPU devices."""
    if NDEV >= 2:
        pytest.skip("this process has %d devices: the two-device tests ran "
                    "here" % NDEV)
    if not HAS_DASK:
        pytest.skip("dask is not installed (pip install dask)")
    out = run_two_device_child("test_dask.py", 900)
    if HAS_DISTRIBUTED:
        assert "skipped" not in out, out[-3000:]
