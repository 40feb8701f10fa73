"""OpenCL neighbours (issue 13): PyOpenCL arrays in and out without a host
round trip once gpured runs on PyOpenCL's queue, raw handles, and DLPack for
arrays on CPU devices.

Adopting a queue changes the process's device state, so those checks run
in a child process (the suite's own arrays would hold memory of gpured's
context).
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpured

pyopencl = pytest.importorskip("pyopencl", reason="pyopencl is a test "
                               "dependency (pip install -e .[test])")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU = gpured.get_device()["type"] != "GPU"


def _child(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_pyopencl_arrays_in_place_after_use_queue():
    out = _child("""
        import numpy as np, pyopencl as cl, pyopencl.array as cla, gpured
        dev = gpured.get_device()
        plat = [p for p in cl.get_platforms() if p.name == dev["platform"]][0]
        cdev = [d for d in plat.get_devices() if d.name == dev["name"]][0]
        ctx = cl.Context([cdev])
        q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        assert gpured.use_queue(q) == gpured.devices().index(dev) or True
        h = gpured.handles()
        assert h["queue"] == q.int_ptr and h["context"] == ctx.int_ptr
        rng = np.random.default_rng(1)
        a = rng.standard_normal((64, 33)).astype(np.float32)
        pa = cla.to_device(q, a)
        before = gpured.memory_info()
        s = gpured.sum(pa, axis=0)           # pa's buffer, in place
        assert isinstance(s, gpured.Array)
        np.testing.assert_allclose(s.get(), a.sum(axis=0, dtype=np.float64), rtol=1e-5)
        v = pa[3:40]                          # a view with an offset
        # float32 scans: each work-item's run of up to 32 elements is
        # summed in float32 on GPUs (kernels/scan.cl GR_TSUM), so the bound
        # is 32 ulps of the running sum of |x|, not a relative one
        bound = 32 * np.finfo(np.float32).eps * np.cumsum(np.abs(a[3:40]), axis=1)
        err = np.abs(gpured.cumsum(v, axis=1).get() - np.cumsum(a[3:40], axis=1,
                                                                  dtype=np.float64))
        assert (err <= bound).all(), err.max()
        assert gpured.argmax(pa).get() == a.argmax()
        # PyOpenCL writes, gpured reads: ordered on the one queue
        pa.fill(2.0)
        assert gpured.sum(pa).get() == 2.0 * a.size
        # back to PyOpenCL without a copy
        g = gpured.cumsum(gpured.to_device(np.arange(10, dtype=np.int64)))
        pg = g.to_pyopencl()
        assert isinstance(pg, cla.Array)
        np.testing.assert_array_equal(pg.get(), np.cumsum(np.arange(10)))
        del g
        np.testing.assert_array_equal(pg.get(), np.cumsum(np.arange(10)))
        w = gpured.Array.from_pyopencl(pa)
        assert w.shape == a.shape and gpured.max(w).get() == 2.0
        print("OK")
    """)
    assert "OK" in out


def test_pyopencl_array_of_another_context_is_copied():
    dev = gpured.get_device()
    plat = [p for p in pyopencl.get_platforms() if p.name == dev["platform"]][0]
    cdev = [d for d in plat.get_devices() if d.name == dev["name"]][0]
    ctx = pyopencl.Context([cdev])
    q = pyopencl.CommandQueue(ctx)
    import pyopencl.array as cla
    a = np.arange(1000, dtype=np.int32).reshape(10, 100)
    pa = cla.to_device(q, a)
    np.testing.assert_array_equal(gpured.sum(pa, axis=1), a.sum(axis=1))
    w = gpured.Array.from_pyopencl(pa)
    np.testing.assert_array_equal(w.get(), a)


def test_use_queue_refused_while_arrays_live():
    out = _child("""
        import numpy as np, pyopencl as cl, gpured
        keep = gpured.to_device(np.ones(4))
        dev = gpured.get_device()
        plat = [p for p in cl.get_platforms() if p.name == dev["platform"]][0]
        cdev = [d for d in plat.get_devices() if d.name == dev["name"]][0]
        q = cl.CommandQueue(cl.Context([cdev]))
        try:
            gpured.use_queue(q)
        except ValueError as e:
            assert "adopt a queue before" in str(e), e
            print("REFUSED")
        keep.release()
        gpured.use_queue(q)
        assert gpured.sum(gpured.to_device(np.ones(4))).get() == 4
        print("OK")
    """)
    assert "REFUSED" in out and "OK" in out


@pytest.mark.skipif(not CPU, reason="DLPack exports host memory: arrays on "
                    "CPU devices only (GPU arrays raise BufferError, tested below)")
def test_dlpack_both_ways_on_cpu_devices():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    d = gpured.to_device(a)
    h = np.from_dlpack(d)              # a view of the device's memory
    np.testing.assert_array_equal(h, a)
    assert not h.flags.owndata
    v = np.from_dlpack(d[1:, ::2])
    np.testing.assert_array_equal(v, a[1:, ::2])
    x = np.arange(60, dtype=np.int32).reshape(5, 12)[1:, ::3]
    g = gpured.from_dlpack(x)
    assert isinstance(g, gpured.Array) and g.shape == x.shape
    np.testing.assert_array_equal(gpured.sum(g, axis=1).get(), x.sum(axis=1))
    x[0, 0] = 1000                     # in place
    assert g.get()[0, 0] == 1000
    assert d.__dlpack_device__() == (1, 0)


@pytest.mark.skipif(CPU, reason="on CPU devices DLPack works (tested above)")
def test_dlpack_refused_for_gpu_arrays():
    d = gpured.to_device(np.ones(3))
    with pytest.raises(BufferError):
        np.from_dlpack(d)
    g = gpured.from_dlpack(np.arange(5.0))
    np.testing.assert_array_equal(g.get(), np.arange(5.0))


def test_buffer_handles():
    d = gpured.to_device(np.ones(3))
    assert isinstance(d.buffer.int_ptr, int) and d.buffer.int_ptr != 0
    h = gpured.handles()
    assert set(h) == {"context", "queue", "device", "platform"}
    assert all(isinstance(v, int) and v for v in h.values())
