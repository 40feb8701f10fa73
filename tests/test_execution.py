"""The execution layer (issue 11): device calls that do not wait, a caching
allocator that reuses memory, and lifetimes that survive threads.

The "does not wait" checks do not depend on timing: the device's queue is
shut behind an OpenCL user event (``_core._gate``), so nothing enqueued can
start until the test opens it.  A call that returns while the gate is shut
enqueued its work without waiting for it; a call that waited would never
return (the test runs it in a thread and fails after a timeout, then opens
the gate so that the process stays usable).
"""
import threading

import numpy as np
import pytest

import gpured
from gpured import _core

from conftest import FLOAT_DTYPES


def _returns_while_gated(fn, timeout=20.0):
    """Run fn() in a thread while the current device's queue is shut;
    True if it returned before the gate opened.  Its result (or exception)
    is returned too."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - reported below
            box["error"] = e

    gate = _core._gate()
    t = threading.Thread(target=run)
    t.start()
    t.join(timeout)
    returned = not t.is_alive()
    _core._gate_open(gate)
    t.join()
    if "error" in box:
        raise box["error"]
    return returned, box.get("value")


@pytest.mark.parametrize("call", [
    "sum", "max", "argmax", "mean", "sum_axis0", "sum_out", "initial",
    "cumsum", "cumsum_axis0", "cumsum_out", "astype", "zeros", "view_sum"])
def test_device_calls_do_not_wait(call):
    a = np.arange(4096, dtype=np.float32).reshape(64, 64) % 97
    d = gpured.to_device(a)
    gpured.synchronize()
    calls = {
        "sum": (lambda: gpured.sum(d), lambda: a.sum(dtype=np.float64)),
        "max": (lambda: gpured.max(d), lambda: a.max()),
        "argmax": (lambda: gpured.argmax(d), lambda: a.argmax()),
        "mean": (lambda: gpured.mean(d), lambda: a.mean(dtype=np.float64)),
        "sum_axis0": (lambda: gpured.sum(d, axis=0), lambda: a.sum(axis=0)),
        "sum_out": (lambda: gpured.sum(d, axis=1, out=gpured.empty(64, np.float64)),
                    lambda: a.sum(axis=1, dtype=np.float64)),
        "initial": (lambda: gpured.max(d, initial=1000.0), lambda: 1000.0),
        "cumsum": (lambda: gpured.cumsum(d), lambda: np.cumsum(a, dtype=np.float64)),
        "cumsum_axis0": (lambda: gpured.cumsum(d, axis=0),
                         lambda: np.cumsum(a, axis=0, dtype=np.float64)),
        "cumsum_out": (lambda: gpured.cumsum(d, axis=1, out=gpured.empty((64, 64), np.float64)),
                       lambda: np.cumsum(a, axis=1, dtype=np.float64)),
        "astype": (lambda: d.astype(np.float64), lambda: a.astype(np.float64)),
        "zeros": (lambda: gpured.zeros((64, 64), np.int32), lambda: np.zeros((64, 64))),
        "view_sum": (lambda: gpured.sum(d[::2, ::3].T, axis=0),
                     lambda: a[::2, ::3].T.sum(axis=0)),
    }
    fn, want = calls[call]
    returned, res = _returns_while_gated(fn)
    assert returned, "%s waited for the device" % call
    assert isinstance(res, gpured.Array)
    np.testing.assert_allclose(res.get(), want(), rtol=1e-6)


def test_many_calls_return_before_the_device_finishes():
    """A loop of 1,000 enqueued calls returns while the queue is shut."""
    d = gpured.to_device(np.ones(1 << 12, np.float32))
    gpured.synchronize()
    returned, res = _returns_while_gated(lambda: [gpured.sum(d) for _ in range(1000)][-1])
    assert returned
    assert res.get() == 1 << 12


def test_a_released_block_is_reused_in_queue_order():
    """sum(d) is enqueued behind the gate; d is released and its block (by
    then back in the pool) serves a new array that is filled with zeros,
    also behind the gate.  The in-order queue runs the sum first: it sees
    d's values, not the zeros."""
    a = np.arange(1, 65, dtype=np.float32)
    d = gpured.to_device(a)
    gpured.synchronize()
    before = gpured.memory_info()["reuses"]
    gate = _core._gate()
    try:
        r = gpured.sum(d)
        d.release()
        z = gpured.zeros(64, np.float32)
    finally:
        _core._gate_open(gate)
    assert gpured.memory_info()["reuses"] > before
    assert r.get() == a.sum()
    assert z.get().sum() == 0


def test_allocator_reuses_blocks_over_many_calls():
    d = gpured.to_device(np.ones(257, np.float64))
    for _ in range(50):
        gpured.sum(d).get()
    info0 = gpured.memory_info()
    n = 20000
    for _ in range(n):
        r = gpured.sum(d, axis=0)
    assert r.get() == 257
    info1 = gpured.memory_info()
    # no allocation per call: every temporary and result comes back
    assert info1["allocations"] - info0["allocations"] <= 4
    assert info1["reuses"] - info0["reuses"] >= n
    assert info1["in_use_blocks"] <= info0["in_use_blocks"] + 2


def test_memory_info_and_empty_cache():
    x = gpured.empty(1 << 20, np.uint8)
    info = gpured.memory_info()
    assert info["in_use_bytes"] >= 1 << 20
    x.release()
    assert gpured.memory_info()["cached_bytes"] >= 1 << 20
    gpured.empty_cache()
    assert gpured.memory_info()["cached_bytes"] == 0
    gpured.set_memory_limit(0)
    try:
        y = gpured.empty(4096, np.uint8)
        y.release()
        assert gpured.memory_info()["cached_bytes"] == 0
    finally:
        gpured.set_memory_limit(1 << 28)


@pytest.mark.parametrize("nbytes", [64, 1 << 20])
def test_release_during_calls_from_other_threads(nbytes):
    """Threads reduce arrays while another releases them: every call either
    answers correctly or raises the released-array ValueError; no crash."""
    n = nbytes // 4
    stop = threading.Event()
    errors = []

    def worker(arrays, seed):
        rng = np.random.default_rng(seed)
        while not stop.is_set():
            k = int(rng.integers(len(arrays)))
            d, want = arrays[k]
            try:
                got = gpured.sum(d).get()
            except ValueError as e:
                if "released" not in str(e):
                    errors.append(e)
                continue
            if got != want:
                errors.append(AssertionError("%r != %r" % (got, want)))

    for rnd in range(5):
        arrays = []
        for i in range(16):
            a = np.full(n, i + rnd, np.int32)
            arrays.append((gpured.to_device(a), np.int64(a.sum())))
        threads = [threading.Thread(target=worker, args=(arrays, s)) for s in range(4)]
        for t in threads:
            t.start()
        for d, _ in arrays:
            d.release()
            # the released blocks serve new arrays at once
            gpured.to_device(np.full(n, -7, np.int32))
        stop.set()
        for t in threads:
            t.join()
        stop.clear()
    assert not errors, errors[:3]


def test_eight_threads_mixing_families():
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((37, 53)).astype(dt) for dt in FLOAT_DTYPES for _ in range(2)]
    keys = rng.integers(0, 11, 5000).astype(np.int32)
    vals = rng.integers(-5, 5, 5000).astype(np.int64)
    errors = []

    def work(i):
        try:
            for rep in range(6):
                a = data[(i + rep) % len(data)]
                dev = (i + rep) % 2 == 0
                x = gpured.to_device(a) if dev else a
                get = (lambda r: r.get()) if dev else (lambda r: r)
                np.testing.assert_allclose(get(gpured.sum(x, axis=1)), a.sum(axis=1, dtype=np.float64),
                                           rtol=1e-5, atol=1e-5)
                np.testing.assert_array_equal(get(gpured.argmin(x, axis=0)), a.argmin(axis=0))
                np.testing.assert_allclose(get(gpured.cumsum(x, axis=0)),
                                           np.cumsum(a, axis=0, dtype=np.float64), rtol=1e-5,
                                           atol=1e-4)
                k = gpured.to_device(keys) if dev else keys
                np.testing.assert_array_equal(get(gpured.sum_by_key(k, vals, 11)),
                                              np.bincount(keys, vals, 11).astype(np.int64))
                uk, red = gpured.reduce_by_key(k, vals)
                starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
                np.testing.assert_array_equal(get(red), np.add.reduceat(vals, starts))
        except BaseException as e:  # noqa: BLE001 - collected
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_one_crossing_per_call_for_device_views():
    """A reduction of a strided device view that the plan cannot read in
    place is copied on the device inside the one call (explain says so)."""
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    d = gpured.to_device(a)
    v = d[:, ::3]
    plan = gpured.explain("sum", v, axis=1, variant="vector")
    assert plan["copied"] is True
    np.testing.assert_allclose(gpured.sum(v, axis=1, variant="vector").get(),
                               a[:, ::3].sum(axis=1))
