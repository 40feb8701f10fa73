"""Device arrays (gpured.Array) and the staged host path.

Round trips for every dtype and layout, views, every reduction on device
arrays against NumPy with results staying on the device, chained device
operations, release semantics, arrays of two devices, inputs streamed
through a deliberately tiny staging pool, and memory over 100,000 calls.
"""
import gc
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap

import threading

import numpy as np
import pytest

import gpured
from conftest import DTYPES, FLOAT_DTYPES, dtype_id

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _data(dt, shape, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dt) == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dt).kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape,
                        dtype=dt)


LAYOUTS = {
    "c": lambda a: a,
    "fortran": lambda a: np.asfortranarray(a),
    "transposed": lambda a: a.T,
    "strided": lambda a: a[::2, 1::3],
    "negative": lambda a: a[::-1, ::-2],
    "byteswapped": lambda a: a.astype(a.dtype.newbyteorder(">")),
}


# ------------------------------------------------------------ round trips

@pytest.mark.parametrize("dt", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_round_trip(dt, layout):
    a = LAYOUTS[layout](_data(dt, (13, 17)))
    d = gpured.to_device(a)
    assert isinstance(d, gpured.Array)
    assert d.shape == a.shape and d.dtype == a.dtype.newbyteorder("=")
    assert d.size == a.size and d.ndim == 2 and len(d) == a.shape[0]
    assert d.nbytes == a.nbytes
    got = d.get()
    assert got.dtype == d.dtype
    np.testing.assert_array_equal(got, a)
    np.testing.assert_array_equal(np.asarray(d), a)
    np.testing.assert_array_equal(gpured.asnumpy(d), a)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (1,), (5,), (2, 3, 4)])
def test_round_trip_shapes(shape):
    a = _data(np.float32, shape)
    d = gpured.to_device(a)
    assert d.shape == shape
    np.testing.assert_array_equal(d.get(), a)


def test_metadata_and_repr():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    d = gpured.to_device(a)
    assert d.strides == a.strides
    assert d.device["name"] == gpured.get_device()["name"]
    r = repr(d)
    assert r.startswith("gpured.Array(") and "int32" in r and "11" in r
    with pytest.raises(TypeError):
        len(gpured.to_device(np.float32(1)))
    assert int(gpured.to_device(np.int64(7))) == 7


def test_empty_zeros():
    z = gpured.zeros((4, 5), np.float32)
    np.testing.assert_array_equal(z.get(), np.zeros((4, 5), np.float32))
    e = gpured.empty(7, np.int16)
    assert e.shape == (7,) and e.dtype == np.int16
    with pytest.raises(TypeError):
        gpured.zeros(3, np.clongdouble)  # complex64/128: test_complex.py


# ------------------------------------------------------------------ views

VIEWS = [
    lambda a: a[2:9],
    lambda a: a[:, ::3],
    lambda a: a[::-1],
    lambda a: a[1, 2:],
    lambda a: a[..., None, 1],
    lambda a: a.T,
    lambda a: a.reshape(-1),
    lambda a: a.T.reshape(17, 13),     # not a view: copied on the device
    lambda a: a[::2].reshape(7, 17)[3],
    lambda a: a[[0, 4, 2]],            # advanced: through the host
    lambda a: a.swapaxes(0, 1)[::-2, 3:],
]


@pytest.mark.parametrize("i", range(len(VIEWS)))
def test_views(i):
    a = _data(np.float64 if np.float64 in FLOAT_DTYPES else np.float32, (13, 17))
    d = gpured.to_device(a)
    v = VIEWS[i](d)
    assert isinstance(v, gpured.Array)
    np.testing.assert_array_equal(v.get(), VIEWS[i](a))


def test_get_many_equals_get():
    """_core.get_many (gpured.dask's partials: every read enqueued before
    one wait) returns what get() returns, for contiguous arrays of every
    dtype, 0-d and empty ones, non-contiguous views, repeats; and refuses
    what is not an Array."""
    from gpured import _core
    base = _data(np.float32, (13, 17))
    d = gpured.to_device(base)
    arrays, expect = [], []
    for dt in DTYPES:
        a = _data(dt, (5, 3), seed=3)
        arrays.append(gpured.to_device(a))
        expect.append(a)
    for view in VIEWS:
        arrays.append(view(d))
        expect.append(view(base))
    big = _data(np.float32, (20000,), seed=4)  # past the gather's 64 KiB
    arrays += [d[2, 3], d[:0], gpured.sum(d, axis=0, keepdims=True), d,
               gpured.to_device(big)]
    expect += [base[2, 3], base[:0], None, base, big]
    got = _core.get_many(arrays)
    assert len(got) == len(arrays)
    for g, a, e in zip(got, arrays, expect):
        ref = a.get()
        assert g.dtype == ref.dtype and g.shape == ref.shape
        np.testing.assert_array_equal(g, ref)
        if e is not None:
            np.testing.assert_array_equal(g, e)
    assert _core.get_many([]) == []
    with pytest.raises(TypeError):
        _core.get_many([d, base])


def test_get_many_pinned_and_not_from_threads():
    """A device's gathered small reads land in its pinned small-read
    memory where they fit (<= 64 KiB together) and in host memory of
    their own where not (two 40 KiB reads); from 8 threads at once (one
    takes the pinned memory, the others go without), each result NumPy's,
    and a get() after them still right (the memory given back)."""
    from concurrent.futures import ThreadPoolExecutor
    from gpured import _core
    small = [_data(np.float32, (n,), seed=n) for n in (1, 7, 300)]
    wide = [_data(np.float32, (10000,), seed=s) for s in (5, 6)]
    ds, dw = [gpured.to_device(a) for a in small], [gpured.to_device(a) for a in wide]

    def check(_):
        for arrays, expect in ((ds, small), (dw, wide), (ds + dw, small + wide)):
            for _ in range(5):
                for g, e in zip(_core.get_many(arrays), expect):
                    np.testing.assert_array_equal(g, e)
        return True
    with ThreadPoolExecutor(8) as ex:
        assert all(ex.map(check, range(16)))
    np.testing.assert_array_equal(ds[2].get(), small[2])
    np.testing.assert_array_equal(_core.get_many(ds)[1], small[1])


def test_pickle_and_copy(monkeypatch):
    """An Array pickles as its values (as CuPy's do) and loads onto the
    current device, for every dtype, 0-d and empty arrays and views (their
    elements alone, C-ordered); copy.copy / copy.deepcopy give a copy on
    the same device; a released array refuses to pickle."""
    import copy
    import pickle
    for dt in DTYPES:
        a = _data(dt, (5, 3), seed=7)
        d = gpured.to_device(a)
        for arr, exp in ((d, a), (d[::2, ::-1], a[::2, ::-1]), (d[1, 2], a[1, 2]),
                         (d[:0], a[:0])):
            e = pickle.loads(pickle.dumps(arr))
            assert isinstance(e, gpured.Array) and e.dtype == exp.dtype
            assert e.shape == exp.shape and e.is_c_contiguous
            assert e.device_index == gpured.to_device(a[:1]).device_index
            np.testing.assert_array_equal(e.get(), exp)
            for c in (copy.copy(arr), copy.deepcopy(arr)):
                assert c.buffer is not arr.buffer
                assert c.device_index == arr.device_index
                np.testing.assert_array_equal(c.get(), exp)
    d = gpured.to_device(np.arange(4.0))
    try:
        from dask.base import tokenize
    except ImportError:  # the test extras install dask
        tokenize = None
    if tokenize is not None:  # never by pickling (a read of every byte)
        reads = []
        real = gpured.Array.get
        monkeypatch.setattr(gpured.Array, "get",
                            lambda self, out=None: reads.append(1) or real(self, out))
        assert tokenize(d) != tokenize(d) and not reads
        pickle.dumps(d)
        assert reads == [1]
    d.release()
    with pytest.raises(ValueError, match="released"):
        pickle.dumps(d)


def test_views_share_the_buffer():
    d = gpured.to_device(np.arange(20, dtype=np.int32))
    assert d[5:].buffer is d.buffer
    assert d.reshape(4, 5).T.buffer is d.buffer
    assert d[::-1].astype(np.float32).buffer is not d.buffer


@pytest.mark.parametrize("src", ["int32", "float32", "bool", "uint8"])
@pytest.mark.parametrize("dst", ["float64", "int16", "bool", "uint64"])
def test_astype(src, dst):
    if "float64" in (src, dst) and np.float64 not in FLOAT_DTYPES:
        pytest.skip("device has no fp64")
    a = _data(src, (9, 7))
    if np.dtype(dst).kind in "ub":
        # Negative floats to unsigned integers are undefined in C (NumPy
        # wraps on x86, GPUs saturate): compare defined conversions only.
        a = np.abs(a)
    d = gpured.to_device(a)[::2, ::-1]
    np.testing.assert_array_equal(d.astype(dst).get(), a[::2, ::-1].astype(dst))


# ------------------------------------------------------------- reductions

RED_OPS = ["sum", "prod", "min", "max", "all", "any", "mean", "argmin", "argmax"]
AXES = [None, 0, 1, 2, (0, 2), -1]


@pytest.mark.parametrize("dt", [np.int8, np.uint32, np.int64, np.bool_] + FLOAT_DTYPES,
                         ids=dtype_id)
@pytest.mark.parametrize("op", RED_OPS)
def test_reductions_stay_on_device(dt, op):
    a = _data(dt, (5, 6, 7), seed=3)
    if op == "prod" and np.dtype(dt).kind == "f":
        a = (1 + a / 64).astype(dt)
    for layout in ("c", "view"):
        src = a if layout == "c" else a[::-1, 1:, ::2]
        d = gpured.to_device(a)
        dv = d if layout == "c" else d[::-1, 1:, ::2]
        for axis in AXES:
            if op.startswith("arg") and isinstance(axis, tuple):
                continue
            got = getattr(gpured, op)(dv, axis=axis)
            want = getattr(np, op)(src, axis=axis)
            assert isinstance(got, gpured.Array), (op, axis)
            assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
            host = getattr(gpured, op)(src, axis=axis)
            if np.dtype(dt).kind == "f" and op in ("sum", "prod", "mean"):
                np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-5)
                if op == "prod":
                    # a small host array is multiplied on the host
                    # (placement "auto"), in another order
                    eps = np.finfo(dt).eps
                    np.testing.assert_allclose(got.get(), host, rtol=64 * eps)
                else:
                    np.testing.assert_array_equal(got.get(), host)  # compensated
            else:
                np.testing.assert_array_equal(got.get(), want)


def test_reduction_keywords():
    a = _data(np.float32, (4, 6))
    d = gpured.to_device(a)
    k = gpured.sum(d, axis=1, keepdims=True)
    assert k.shape == (4, 1)
    np.testing.assert_allclose(k.get(), a.sum(1, keepdims=True), rtol=1e-6)
    out = gpured.zeros(6, np.float64)
    r = gpured.sum(d, axis=0, dtype=np.float64, out=out)
    assert r is out
    np.testing.assert_allclose(out.get(), a.sum(0, dtype=np.float64), rtol=1e-12)
    host_out = np.zeros(4, np.float32)
    assert gpured.max(d, axis=1, out=host_out) is host_out
    np.testing.assert_array_equal(host_out, a.max(1))
    np.testing.assert_allclose(gpured.sum(d, initial=3.0).get(), a.sum() + 3,
                               rtol=1e-6)
    e = gpured.to_device(np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(gpured.sum(e, axis=0).get(), np.zeros(3))
    assert gpured.max(d[0, 0]).get() == a[0, 0]
    np.testing.assert_array_equal(gpured.argmin(d, axis=0, out=gpured.zeros(6, np.int64)).get(),
                                  a.argmin(0))


def test_methods_and_chains():
    a = _data(np.int32, (50, 40))
    d = gpured.to_device(a)
    assert d.sum().get() == a.sum()
    np.testing.assert_array_equal(d.T.max(axis=1).get(), a.T.max(1))
    # chained on the device: a reduction's result feeds the next one
    col = gpured.sum(d, axis=0)
    assert isinstance(col, gpured.Array)
    assert gpured.max(col).get() == a.sum(0).max()
    assert gpured.argmax(col).get() == a.sum(0).argmax()
    m = gpured.mean(gpured.sum(d, axis=1).astype(np.float32))
    np.testing.assert_allclose(m.get(), a.sum(1).astype(np.float32).mean(), rtol=1e-6)
    gpured.synchronize()


def test_timeit_and_explain_on_device():
    d = gpured.to_device(_data(np.float32, (1000,)))
    t = gpured.timeit("sum", d, reps=3)
    assert t["seconds"] > 0 and isinstance(t["result"], gpured.Array)
    np.testing.assert_allclose(t["result"].get(), d.get().sum(dtype=np.float64),
                               rtol=1e-6)
    assert gpured.explain("max", d[::3])["segment_length"] == 334


# ---------------------------------------------------------------- release

def test_release():
    d = gpured.to_device(np.arange(10.0, dtype=np.float32))
    v = d[2:]
    d.release()
    assert d.released and v.released
    d.release()  # twice: nothing happens
    for use in (lambda: d.get(), lambda: gpured.sum(d), lambda: gpured.max(v),
                lambda: d[1:].get(), lambda: d.astype(np.int32),
                lambda: gpured.sum(gpured.to_device(np.ones(3)), out=d)):
        with pytest.raises(ValueError, match="released"):
            use()
    assert "released" in repr(d)


def test_with_releases():
    with gpured.to_device(np.ones(5, np.float32)) as d:
        assert gpured.sum(d).get() == 5
    assert d.released
    with pytest.raises(ValueError, match="released"):
        gpured.sum(d)


def test_released_result_buffer_still_safe():
    d = gpured.to_device(np.ones(1000, np.float32))
    r = gpured.sum(d)
    d.release()  # the enqueued reduction still completes
    assert r.get() == 1000


# ------------------------------------------------------------ two devices

def test_two_devices_do_not_mix(tmp_path):
    """PoCL and Oclgrind's runtime as two platforms in one process."""
    icd = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
    pocl = "/etc/OpenCL/vendors/pocl.icd"
    if not (os.path.exists(icd) and os.path.exists(pocl)):
        pytest.fail("needs PoCL and Oclgrind (Debian packages pocl-opencl-icd, "
                    "oclgrind: make deps installs both)", pytrace=False)
    vend = tmp_path / "vendors"
    vend.mkdir()
    (vend / "pocl.icd").write_text(open(pocl).read())
    (vend / "oclgrind.icd").write_text(icd + "\n")
    script = textwrap.dedent("""
        import json, numpy as np, gpured
        devs = gpured.devices()
        out = {"n": len(devs)}
        gpured.set_device("pthread")
        a = gpured.to_device(np.arange(6, dtype=np.float32))
        gpured.set_device("oclgrind")
        b = gpured.to_device(np.ones(6, np.float32))
        out["b_sum"] = float(gpured.sum(b).get())
        out["a_sum_elsewhere"] = float(gpured.sum(a).get())  # runs on a's device
        try:
            gpured.sum(a, axis=0, out=gpured.zeros((), np.float32))
        except ValueError as e:
            out["mix"] = str(e)
        try:
            gpured.set_device("pthread")
            gpured.max(b, out=a[:1].reshape(()))
        except ValueError as e:
            out["mix2"] = str(e)
        print(json.dumps(out))
    """)
    env = dict(os.environ, OCL_ICD_VENDORS=str(vend), GPURED_CACHE_DIR=str(tmp_path / "c"),
               PYTHONPATH=ROOT)
    env.pop("GPURED_DEVICE", None)
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["n"] == 2
    assert out["b_sum"] == 6.0 and out["a_sum_elsewhere"] == 15.0
    assert "two devices" in out["mix"] and "two devices" in out["mix2"]


# ---------------------------------------------------------- staged inputs

@pytest.fixture
def tiny_staging():
    # placement "current": these host arrays go to the device (the host
    # path would take them), through the staging pool
    old_place = gpured.placement("current")
    old = gpured.set_staging(chunk_bytes=4096, buffers=2, min_bytes=0, force=True)
    yield
    gpured.placement(old_place)
    gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes",
                                              "force", "threads")})


@pytest.mark.parametrize("dt", [np.float32, np.int64, np.uint8] + FLOAT_DTYPES[1:],
                         ids=dtype_id)
def test_streamed_inputs(tiny_staging, dt):
    """Inputs many times the staging pool (4 KiB x 2) stream through it."""
    a = _data(dt, (100_003,), seed=5)
    before = gpured.staging()["chunks"]
    for op in ("sum", "min", "max", "argmin", "argmax"):
        got = getattr(gpured, op)(a)
        want = getattr(np, op)(a)
        if op == "sum" and np.dtype(dt).kind == "f":
            np.testing.assert_allclose(got, a.sum(dtype=np.float64), rtol=1e-6)
        else:
            assert got == want, op
    chunks = gpured.staging()["chunks"] - before
    assert chunks >= 5 * a.nbytes // 4096
    d = gpured.to_device(a)  # uploads stream too
    np.testing.assert_array_equal(d.get(), a)
    assert gpured.staging()["chunks"] - before > chunks


def test_streamed_variants(tiny_staging):
    a = _data(np.float32, (50_000,), seed=6)
    for variant in ("atomic", "stride_local", "chunked", "naive"):
        if variant in gpured.variants("sum", "float32"):
            np.testing.assert_allclose(gpured.sum(a, variant=variant),
                                       a.sum(dtype=np.float64), rtol=1e-6)


@pytest.mark.parametrize("piece", [None, 262144], ids=["one piece", "256 KiB pieces"])
def test_registered_host_memory(tiny_staging, monkeypatch, piece):
    """A NumPy array seen in three calls has its memory registered (by
    default on NVIDIA GPUs; forced here) and its chunks are copied straight
    from it.  Results follow the array's host writes, views of it use the
    registration too, and it goes when the array goes.  Memory longer than
    a device buffer is registered in pieces (made small here), chunks
    crossing two of them staged."""
    if piece:
        monkeypatch.setenv("GPURED_REG_PIECE_BYTES", str(piece))
    gpured.set_staging(register="always")
    try:
        a = np.arange(300_007, dtype=np.int64)
        st0 = gpured.staging()
        for k in range(5):
            a[k * 1000] -= 3 * k  # host writes between calls are seen
            assert gpured.sum(a) == a.sum()
            assert gpured.argmin(a) == a.argmin()
        st = gpured.staging()
        assert st["registered"] == st0["registered"] + 1
        assert st["registered_bytes"] >= st0["registered_bytes"] + a.nbytes
        assert st["direct_chunks"] > st0["direct_chunks"]
        v = a[5:-7]
        d0 = st["direct_chunks"]
        assert gpured.sum(v) == v.sum() and gpured.argmax(v) == v.argmax()
        assert gpured.staging()["direct_chunks"] > d0
        np.testing.assert_array_equal(gpured.cumsum(v), np.cumsum(v))
        np.testing.assert_array_equal(gpured.to_device(v).get(), v)
        assert gpured.max(v[::3]) == v[::3].max()
        with pytest.raises(ValueError):
            a.resize(10)  # NumPy refuses: gpured holds a weak reference
        del v
        del a
        gc.collect()
        assert gpured.staging()["registered"] == st0["registered"]
        b = np.arange(300_007, dtype=np.int64)[::-1]  # maybe at a's address
        for _ in range(4):
            assert gpured.sum(b) == b.sum() and gpured.argmax(b) == 0
        gpured.set_staging(register="never")  # releases every registration
        assert gpured.staging()["registered"] == 0
        d1 = gpured.staging()["direct_chunks"]
        assert gpured.sum(b) == b.sum()
        assert gpured.staging()["direct_chunks"] == d1
    finally:
        gpured.set_staging(register="auto")


def test_failed_registration_tried_again_after_a_release(tiny_staging,
                                                        monkeypatch):
    """Memory that could not be registered (here: more pieces than allowed)
    is tried again once another registration is released."""
    gpured.set_staging(register="always")
    try:
        b = np.arange(50_000, dtype=np.int64)
        for _ in range(3):
            assert gpured.sum(b) == b.sum()
        st = gpured.staging()
        assert st["registered_bytes"] >= b.nbytes
        monkeypatch.setenv("GPURED_REG_PIECE_BYTES", "4096")
        a = np.arange(300_007, dtype=np.int64)
        for _ in range(4):
            assert gpured.sum(a) == a.sum()
        assert gpured.staging()["registered"] == st["registered"]
        monkeypatch.delenv("GPURED_REG_PIECE_BYTES")
        del b
        gc.collect()
        assert gpured.sum(a) == a.sum()
        now = gpured.staging()
        assert now["registered"] == st["registered"]  # b out, a in
        assert now["registered_bytes"] >= a.nbytes
    finally:
        gpured.set_staging(register="auto")


def test_registration_past_the_cap_evicts_the_least_recent(tiny_staging,
                                                           monkeypatch):
    """Past the registration cap (made small here), the registration used
    least recently is released for the memory streamed now, as when Dask's
    from_array copies a large array that is registered already."""
    gpured.set_staging(register="always")
    try:
        st0 = gpured.staging()
        a = np.arange(200_000, dtype=np.int64)
        b = np.arange(200_000, dtype=np.int64)[::-1].copy()
        monkeypatch.setenv("GPURED_REG_CAP_BYTES",
                           str(st0["registered_bytes"] + a.nbytes * 3 // 2))
        for _ in range(4):
            assert gpured.sum(a) == a.sum()
        st = gpured.staging()
        assert st["registered"] == st0["registered"] + 1
        for _ in range(4):  # b's registration evicts a's
            assert gpured.sum(b) == b.sum()
        st2 = gpured.staging()
        assert st2["registered"] == st0["registered"] + 1
        d = st2["direct_chunks"]
        assert gpured.sum(b) == b.sum()
        assert gpured.staging()["direct_chunks"] > d
        d = gpured.staging()["direct_chunks"]
        assert gpured.sum(a) == a.sum()  # and back
        assert gpured.staging()["direct_chunks"] > d
    finally:
        gpured.set_staging(register="auto")


def test_registration_withdrawn_while_a_stream_copies_from_it():
    """A registration withdrawn while writes from it are in flight (here:
    its note pushed out of gpured's table of 16 by other arrays while a
    stream from it waits behind a shut queue, gr_lock released) stays
    until its last write is done, then goes; the stream's result is
    right."""
    from gpured import _core
    old_place = gpured.placement("auto")
    old = gpured.set_staging(chunk_bytes=4096, buffers=2, min_bytes=0,
                             force=True, register="always")
    try:
        x = np.arange(400_000, dtype=np.int64)
        for _ in range(3):
            assert gpured.sum(x, device=0) == x.sum()
        before = gpured.staging()["registered"]
        assert before >= 1
        box = {}
        c0 = gpured.staging()["chunks"]
        gate = _core._gate(0)
        t = threading.Thread(
            target=lambda: box.setdefault("sum", gpured.sum(x, device=0)))
        try:
            t.start()
            for _ in range(400):  # its first writes are in flight
                if gpured.staging()["chunks"] >= c0 + 2:
                    break
                t.join(0.025)
            t.join(0.2)
            assert t.is_alive()  # mid-stream, waiting behind the gate
            smalls = [np.full(64, k, np.int64) for k in range(20)]
            for k, a in enumerate(smalls):  # the host path: no device work
                assert gpured.sum(a) == 64 * k
            # x's note was pushed out: its registration waits for its writes
            assert gpured.staging()["registered"] == before
        finally:
            _core._gate_open(gate)
            t.join()
        assert box["sum"] == x.sum()
        assert gpured.staging()["registered"] == before - 1
        for _ in range(4):  # noted again, registered again
            assert gpured.sum(x, device=0) == x.sum()
        assert gpured.staging()["registered"] == before
    finally:
        gpured.placement(old_place)
        gpured.set_staging(register="auto",
                           **{k: old[k] for k in ("chunk_bytes", "buffers",
                                                  "min_bytes", "force",
                                                  "threads")})


def test_registered_array_freed_under_the_device_lock(tiny_staging):
    """A call's interrupt check takes the GIL with the device lock held and
    runs signal handlers; one that frees a registered array releases the
    registration there, without waiting for the lock (it used to hang)."""
    gpured.set_staging(register="always")
    holder = [np.arange(100_000, dtype=np.int64)]
    for _ in range(3):
        assert gpured.sum(holder[0]) == holder[0].sum()
    assert gpured.staging()["registered"] >= 1
    fired = []

    def handler(signum, frame):
        if holder:
            holder.pop()  # the last reference: the array dies here
            fired.append(1)

    old = signal.signal(signal.SIGALRM, handler)
    b = np.arange(3_000_000, dtype=np.int64)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
        got = gpured.cumsum(b)  # thousands of chunks, a check each
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        gpured.set_staging(register="auto")
    np.testing.assert_array_equal(got, np.cumsum(b))
    assert fired and gpured.staging()["registered"] == 0


@pytest.mark.parametrize("threads", [2, 16])
def test_streamed_parallel_copies_cover_every_byte(threads):
    """Chunks of 2 MiB and more are copied to and from pinned memory by
    several threads; sizes whose share per thread is a whole number of pages
    plus a remainder used to lose the remainder (inputs and scan results)."""
    old = gpured.set_staging(chunk_bytes=4 << 20, buffers=2, min_bytes=0,
                             force=True, threads=threads)
    try:
        for n in ((2 << 20) + 3, (2 << 20) + 1, (4 << 20) + (4 << 20) + 5):
            junk = np.full(n, 0xAB, np.uint8)
            assert int(gpured.max(junk)) == 0xAB
            a = np.zeros(n, np.uint8)
            a[-1] = 7
            assert int(gpured.argmax(a)) == n - 1, n
            assert int(gpured.sum(a)) == 7, n
            np.testing.assert_array_equal(gpured.to_device(a).get(), a)
        for n in ((1 << 18) + 1, (1 << 19) + 1):  # int64: 2 MiB + 8 bytes
            a = np.arange(n, dtype=np.int64)
            got = gpured.cumsum(a)
            np.testing.assert_array_equal(got, np.cumsum(a))
    finally:
        gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers",
                                                  "min_bytes", "force",
                                                  "threads")})


def test_staging_settings():
    old = gpured.staging()
    assert old["chunk_bytes"] >= 4096 and old["buffers"] >= 2
    with pytest.raises(ValueError):
        gpured.set_staging(chunk_bytes=100)
    assert gpured.staging()["chunk_bytes"] == old["chunk_bytes"]


# ------------------------------------------------------------------ memory

def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_memory_flat_over_100k_calls():
    d = gpured.to_device(np.ones(256, np.float32))  # 1 KiB
    for _ in range(2000):  # warm-up: caches, allocator pools
        gpured.sum(d)
    gpured.synchronize()
    before = _rss_mib()
    for i in range(100_000):
        r = gpured.sum(d)
        if i % 10_000 == 0:
            assert r.get() == 256
    gpured.synchronize()
    grown = _rss_mib() - before
    assert grown < 32, "resident memory grew by %.1f MiB over 100,000 calls" % grown


# ------------------------------------------------------------------ scans

SCANS = ["cumsum", "cumprod", "cummin", "cummax"]


@pytest.mark.parametrize("dt", [np.int16, np.uint64, np.bool_] + FLOAT_DTYPES,
                         ids=dtype_id)
@pytest.mark.parametrize("op", SCANS)
def test_scans_stay_on_device(dt, op):
    a = _data(dt, (4, 5, 33), seed=7)
    if op == "cumprod" and np.dtype(dt).kind == "f":
        a = (1 + a / 64).astype(dt)
    d = gpured.to_device(a)
    for src, dv in ((a, d), (a[::-1, 1:, ::2], d[::-1, 1:, ::2])):
        for axis in (None, 0, 1, 2):
            for exclusive in (False, True):
                got = getattr(gpured, op)(dv, axis=axis, exclusive=exclusive)
                host = getattr(gpured, op)(src, axis=axis, exclusive=exclusive)
                assert isinstance(got, gpured.Array)
                assert got.shape == host.shape and got.dtype == host.dtype
                if np.dtype(dt).kind == "f" and op in ("cumsum", "cumprod"):
                    np.testing.assert_allclose(got.get(), host, rtol=1e-6, atol=1e-6)
                else:
                    np.testing.assert_array_equal(got.get(), host)
                if not exclusive and op in ("cumsum", "cumprod"):
                    want = getattr(np, op)(src, axis=axis)
                    np.testing.assert_allclose(got.get(), want, rtol=2e-5, atol=1e-5)


def test_scan_then_reduce_on_device():
    """cumsum then sum, cummax then argmax: chained without host copies."""
    a = _data(np.int64, (300, 40), seed=8)
    d = gpured.to_device(a)
    c = gpured.cumsum(d, axis=0)
    assert isinstance(c, gpured.Array)
    s = gpured.sum(c, axis=1)
    np.testing.assert_array_equal(s.get(), np.cumsum(a, axis=0).sum(axis=1))
    m = gpured.cummax(gpured.to_device(a[:, 3].astype(np.float32)))
    assert gpured.argmax(m).get() == np.maximum.accumulate(a[:, 3].astype(np.float32)).argmax()
    f = gpured.to_device(_data(np.float32, (10_000,), seed=9))
    total = gpured.sum(gpured.cumsum(f, dtype=np.float64))
    np.testing.assert_allclose(total.get(), np.cumsum(f.get(), dtype=np.float64).sum(),
                               rtol=1e-12)


def test_scan_out_on_device():
    a = _data(np.float32, (6, 50), seed=10)
    out = gpured.zeros((6, 50), np.float64)
    assert gpured.cumsum(gpured.to_device(a), axis=1, dtype=np.float64, out=out) is out
    np.testing.assert_allclose(out.get(), np.cumsum(a, axis=1, dtype=np.float64), rtol=1e-12)
    out2 = gpured.zeros((6, 50), np.float32)
    gpured.cummin(a, axis=0, out=out2)  # host input, device out
    np.testing.assert_array_equal(out2.get(), np.minimum.accumulate(a, axis=0))
    host = np.zeros((6, 50), np.float32)
    gpured.cummax(gpured.to_device(a), axis=1, out=host)
    np.testing.assert_array_equal(host, np.maximum.accumulate(a, axis=1))
    d = gpured.to_device(a)
    d.release()
    with pytest.raises(ValueError, match="released"):
        gpured.cumsum(d)


@pytest.mark.parametrize("dt", [np.float32, np.int8, np.uint64, np.bool_] + FLOAT_DTYPES[1:],
                         ids=dtype_id)
def test_streamed_scans(dt):
    """1-D scans of host arrays stream chunk by chunk through the pool (as
    inputs larger than the device's memory do), the carry passing on."""
    a = _data(dt, (10_007,), seed=11)
    if np.dtype(dt).kind == "f":
        a = (1 + np.abs(a) / 1000).astype(dt)
    want = {}
    for op in SCANS:
        for exclusive in (False, True):
            want[op, exclusive] = getattr(gpured, op)(a, exclusive=exclusive)
    old = gpured.set_staging(chunk_bytes=4096, buffers=2, min_bytes=0, force=True)
    old_place = gpured.placement("current")  # (not the host path)
    try:
        before = gpured.staging()["chunks"]
        for (op, exclusive), w in want.items():
            got = getattr(gpured, op)(a, exclusive=exclusive)
            assert got.dtype == w.dtype
            if np.dtype(dt).kind == "f" and op in ("cumsum", "cumprod"):
                # each 4 KiB chunk boundary rounds the carry once
                np.testing.assert_allclose(got, w, rtol=1e-5)
            else:
                np.testing.assert_array_equal(got, w)
        per_scan = -(-a.nbytes // 4096)  # at least this many chunks each way
        assert gpured.staging()["chunks"] - before >= 8 * 2 * per_scan
        np.testing.assert_allclose(gpured.cumsum(a), np.cumsum(a, dtype=np.float64
                                   if np.dtype(dt).kind == "f" else None), rtol=1e-5)
    finally:
        gpured.placement(old_place)
        gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes",
                                                  "force", "threads")})
