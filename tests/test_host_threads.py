"""The host path on several threads (issue 12: csrc/hostpar.c's pool,
csrc/host.c red_par_run / scan_par_run, the model in csrc/policy.c).

test_host_path.py checks every kernel cut into tasks against exact
references (its ``threads`` cases); here the public face: NumPy arrays
through gpured.sum & co. with the threads forced on (tasks of a few KiB,
three threads, on CI's 2 cores too), the knobs, explain(), the rates,
GPURED_HOST_THREADS, fork() and calls from several Python threads.
"""
import concurrent.futures
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpured
from gpured import _core

FAMILIES = ("reduce", "arg", "column", "scan")


@pytest.fixture
def threads():
    """Three threads, tasks of 4 KiB, and a model that always takes them
    (the host path for every size, on its threads); restored after."""
    saved = _core.host_threads()
    rates = gpured.rates()
    name = gpured.get_device()["name"]
    old_place = gpured.placement("auto")
    _core.set_rates(name, 0.0, 1e9, {k: 1.0 for k in FAMILIES},
                    {k: 1e-6 for k in FAMILIES})
    _core.host_threads(threads=3, grain=4096, call_us=0.0,
                       gbs={k: 1e6 for k in FAMILIES})
    try:
        yield 3
    finally:
        _core.host_threads(threads=0 if saved["auto"] else saved["threads"],
                           grain=saved["grain"], call_us=saved["call_us"],
                           gbs=saved["gbs"], measured=saved["measured"])
        _core.set_rates(name, rates["host_call_us"], rates["device_call_us"],
                        rates["host_gbs"], rates["device_gbs"])
        gpured.placement(old_place)


def _f64_sum(a, axis=None):
    return np.sum(a.astype(np.float64), axis=axis)


def test_explain_names_the_threads(threads):
    a = np.ones(1 << 16, np.float32)
    why = gpured.explain("sum", a)["placement_why"]
    assert gpured.explain("sum", a)["placement"] == "host"
    assert "on 3 threads" in why, why
    assert "on 3 threads" in gpured.explain("cumsum", a)["placement_why"]
    # too small for two tasks: one thread
    assert "threads" not in gpured.explain("sum", a[:1000])["placement_why"]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int8,
                                np.uint64, np.bool_])
def test_reductions_match_numpy(threads, dt):
    rng = np.random.default_rng(3)
    for shape, axis in [((200003,), None), ((5, 40001), 1), ((40001, 5), 0),
                        ((3000, 300), 0), ((300, 3000), 1), ((3000, 300), None),
                        ((300, 3000), (0, 1))]:
        a = (rng.standard_normal(shape) * 50).astype(dt) if dt != np.bool_ \
            else rng.random(shape) < 0.5
        for op in ("sum", "prod", "min", "max", "all", "any"):
            got = getattr(gpured, op)(a, axis=axis)
            with np.errstate(all="ignore"):
                want = getattr(np, op)(a, axis=axis)
            if op == "sum" and a.dtype.kind == "f":
                np.testing.assert_allclose(got, _f64_sum(a, axis).astype(dt),
                                           rtol=1e-6 if dt == np.float32 else 1e-12)
            elif op == "prod" and a.dtype.kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-4)
            else:
                np.testing.assert_array_equal(got, want, err_msg=(op, shape, axis))
        if not isinstance(axis, tuple):
            for op in ("argmin", "argmax"):
                np.testing.assert_array_equal(getattr(gpured, op)(a, axis=axis),
                                              getattr(np, op)(a, axis=axis))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_argmax_nan_and_ties_across_tasks(threads, dt):
    n = 1 << 18
    a = np.zeros(n, dt)
    # ties: the first index, whichever task found it
    for i in (n - 5, n // 2, 7000):
        a[i] = 9
    assert gpured.argmax(a) == 7000
    assert gpured.argmin(-a) == 7000
    # a NaN in a later task wins over a larger value before it
    a[n - 3] = np.nan
    assert gpured.argmax(a) == n - 3 == np.argmax(a)
    assert gpured.argmin(a) == n - 3 == np.argmin(a)
    assert np.isnan(gpured.max(a)) and np.isnan(gpured.min(a))
    a[100] = np.nan
    assert gpured.argmax(a) == 100
    # columns cut by rows: NaN and ties in a later piece
    b = np.zeros((1 << 14, 4), dt)
    b[9000, 1] = 5
    b[12000, 1] = 5
    b[15000, 2] = np.nan
    b[2, 2] = 1
    np.testing.assert_array_equal(gpured.argmax(b, axis=0), np.argmax(b, axis=0))
    np.testing.assert_array_equal(gpured.argmin(b, axis=0), np.argmin(b, axis=0))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.uint8])
def test_scans_match_numpy(threads, dt):
    rng = np.random.default_rng(5)
    for shape, axis in [((200003,), 0), ((3, 70001), 1), ((70001, 3), 0),
                        ((2000, 300), 0), ((300, 2000), 1)]:
        a = (rng.standard_normal(shape) * 20).astype(dt)
        got = gpured.cumsum(a, axis=axis)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(
                got, np.cumsum(a.astype(np.float64), axis=axis).astype(dt),
                rtol=1e-5, atol=1e-3)
        else:
            np.testing.assert_array_equal(got, np.cumsum(a, axis=axis))
        np.testing.assert_array_equal(gpured.cummax(a, axis=axis),
                                      np.maximum.accumulate(a, axis=axis))
        np.testing.assert_array_equal(gpured.cummin(a, axis=axis),
                                      np.minimum.accumulate(a, axis=axis))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_scan_carries_zero_signs_and_nans(threads, dt):
    n = 1 << 17
    z = np.full(n, -0.0, dt)
    got = gpured.cumsum(z)
    assert np.signbit(got).all()  # every prefix of -0.0s is -0.0
    z[n // 2] = 0.0
    got = gpured.cumsum(z)
    assert np.signbit(got[:n // 2]).all() and not np.signbit(got[n // 2:]).any()
    # cummin/cummax: the later of equal zeros, NaN sticks
    a = np.ones(n, dt)
    a[1000] = -0.0
    a[n - 1000] = 0.0
    np.testing.assert_array_equal(np.signbit(gpured.cummin(a)),
                                  np.signbit(np.minimum.accumulate(a)))
    a[5000] = np.nan
    np.testing.assert_array_equal(gpured.cummin(a), np.minimum.accumulate(a))
    np.testing.assert_array_equal(gpured.cummax(a), np.maximum.accumulate(a))


def test_calls_from_several_python_threads(threads):
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal(1 << 16 + i % 3).astype(np.float32)
              for i in range(8)]
    want = [gpured.sum(x) for x in arrays]

    def job(i):
        x = arrays[i % len(arrays)]
        return i, gpured.sum(x), gpured.argmax(x)

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        for i, s, m in ex.map(job, range(64)):
            assert s == want[i % len(arrays)]
            assert m == np.argmax(arrays[i % len(arrays)])


def test_pool_counts(threads):
    """host_threads()["counts"]: jobs given to the pool and who ran their
    tasks (diagnosis of slow calls: the caller running most of them)."""
    a = np.random.default_rng(1).standard_normal(1 << 18).astype(np.float32)
    c0 = _core.host_threads()["counts"]
    for _ in range(5):
        np.testing.assert_allclose(gpured.sum(a), _f64_sum(a), rtol=1e-6)
    c1 = _core.host_threads()["counts"]
    jobs = c1["jobs"] - c0["jobs"]
    tasks = c1["tasks"] - c0["tasks"]
    assert jobs == 5
    assert tasks == 5 * 4 * threads  # four tasks a thread (host.c par_tasks)
    # the caller may run none: on a loaded host the woken workers can take
    # every task, its share too (the H200 host with 14 pytest processes)
    assert 0 <= c1["caller_tasks"] - c0["caller_tasks"] <= tasks
    assert 0 <= c1["closed"] - c0["closed"] <= 2 * jobs
    assert 0 <= c1["woken"] - c0["woken"] <= 2 * jobs


def test_knobs():
    saved = _core.host_threads()
    try:
        before = gpured.set_host_threads(5)
        assert before == (0 if saved["auto"] else saved["threads"])
        assert gpured.host_threads() == 5
        assert gpured.rates()["threads"]["threads"] == 5
        assert gpured.set_host_threads(0) == 5
        cpus = _core.host_threads()["cpus"]
        assert gpured.host_threads() == (cpus if cpus >= 4 else 1)
        with pytest.raises(ValueError):
            gpured.set_host_threads(-1)
        r = gpured.set_rates(threads_call_us=3.0, threads_gbs={"reduce": 77.0})
        assert r["threads"]["call_us"] == 3.0
        assert r["threads"]["gbs"]["reduce"] == 77.0
    finally:
        _core.host_threads(threads=0 if saved["auto"] else saved["threads"],
                           call_us=saved["call_us"], gbs=saved["gbs"],
                           measured=saved["measured"])


def _child(code, **env):
    e = dict(os.environ, **env)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=300, env=e)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_env_variable():
    out = _child("import gpured; print(gpured.host_threads())",
                 GPURED_HOST_THREADS="6")
    assert out.split()[-1] == "6"


def test_measure_rates_measures_the_threads():
    saved = _core.host_threads()
    rates = gpured.rates()
    name = gpured.get_device()["name"]
    try:
        gpured.set_host_threads(2)
        r = gpured.measure_rates()
        t = r["threads"]
        assert t["measured"] and t["threads"] == 2
        assert all(t["gbs"][k] > 0 for k in FAMILIES), t
        assert t["call_us"] >= 0
    finally:
        _core.host_threads(threads=0 if saved["auto"] else saved["threads"],
                           call_us=saved["call_us"], gbs=saved["gbs"],
                           measured=saved["measured"])
        _core.set_rates(name, rates["host_call_us"], rates["device_call_us"],
                        rates["host_gbs"], rates["device_gbs"])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this OS")
def test_fork_after_the_pool_started():
    # gpured refuses OpenCL work in a fork() child, the host path included;
    # host.c itself (through ctypes, as test_host_path.py) must still work
    # there: the child of a process whose pool runs starts its own workers
    out = _child("""
        import ctypes, os, numpy as np, gpured
        class HostOp(ctypes.Structure):
            _fields_ = [("op", ctypes.c_int), ("t", ctypes.c_int),
                        ("r", ctypes.c_int), ("wide", ctypes.c_int),
                        ("threads", ctypes.c_int), ("grain", ctypes.c_size_t)]
        lib = ctypes.CDLL(gpured._core.__file__)
        lib.gr_host_reduce.argtypes = [ctypes.POINTER(HostOp), ctypes.c_void_p,
            ctypes.c_size_t, ctypes.c_size_t, ctypes.c_ssize_t,
            ctypes.c_ssize_t, ctypes.c_void_p]
        a = np.arange(1 << 18, dtype=np.int64)
        o = HostOp(0, 7, 7, 1, 3, 4096)  # add, int64 -> int64, 3 threads
        def total():
            out = np.zeros(1, np.int64)
            assert lib.gr_host_reduce(ctypes.byref(o), a.ctypes.data, 1, a.size,
                                      a.size, 1, out.ctypes.data) == 0
            return int(out[0])
        want = int(a.sum())
        assert total() == want
        pid = os.fork()
        if pid == 0:
            ok = all(total() == want for _ in range(50))
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert total() == want
        print("ok")
    """)
    assert out.split()[-1] == "ok"
