"""One lock per device (issue 43): work on one device never waits for
another device's lock, and threads sharing one device stay correct.

The two-device tests run in a subprocess with POCL_DEVICES="pthread
pthread": PoCL then lists two CPU devices, so CI's PoCL-only pass has two
devices too (Intel's CPU runtime, where installed, is a third).  They
use _core._hold_device_lock(device, ms), a test hook that holds one
device's lock: before issue 43 it held every device's work.
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import gpured
from gpured import _core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_two_devices(body, timeout=240, **env_extra):
    """body (Python) in a process with two PoCL devices at least; its last
    stdout line as JSON, or a skip when fewer than two devices appear."""
    prelude = textwrap.dedent("""
        import json, threading, time
        import numpy as np
        import gpured
        from gpured import _core
        devs = gpured.devices()
        pocl = [d["position"] for d in devs
                if d["platform"].startswith("Portable")]
        pair = pocl[:2] if len(pocl) >= 2 else [d["position"] for d in devs][:2]
        if len(pair) < 2:
            print(json.dumps({"skip": [d["name"] for d in devs]}))
            raise SystemExit(0)
        A, B = pair
    """)
    env = dict(os.environ, POCL_DEVICES="pthread pthread", **env_extra)
    env.pop("GPURED_DEVICE", None)
    p = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(body)],
                       cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip("needs two OpenCL devices (POCL_DEVICES='pthread pthread' "
                    "gave only %r)" % out["skip"])
    return out


def test_other_device_not_blocked_by_a_held_lock():
    """While device A's lock is held for 4 s, sums on device B complete
    (many of them, correct); a call on A then waits for the hold and
    completes correctly."""
    out = _run_two_devices("""
        a = np.arange(1 << 18, dtype=np.float32)      # 1 MiB
        want = float(a.sum(dtype=np.float64))
        da = gpured.to_device(a, device=A)
        db = gpured.to_device(a, device=B)
        float(gpured.sum(da)); float(gpured.sum(db))  # built, warm
        hold = threading.Thread(target=_core._hold_device_lock, args=(A, 4000))
        t0 = time.perf_counter()
        hold.start()
        time.sleep(0.3)  # the hook holds A's lock by now
        n, bad = 0, 0
        while time.perf_counter() - t0 < 1.5:
            n += 1
            bad += float(gpured.sum(db)) != want
        b_during = hold.is_alive()
        ta = time.perf_counter()
        ra = float(gpured.sum(da))
        a_waited = time.perf_counter() - ta
        hold.join()
        # gathered reads of both devices' partials (Dask's get_many): one
        # device's lock at a time
        parts = [gpured.sum(da), gpured.sum(db), gpured.sum(da), gpured.sum(db)]
        many = [float(x) for x in _core.get_many(parts)]
        print(json.dumps({"b_calls": n, "bad": bad, "b_during": b_during,
                          "ra_ok": ra == want, "a_waited": a_waited,
                          "many_ok": many == [want] * 4}))
    """)
    assert out["b_during"], out      # B's loop ended while A was still held
    assert out["bad"] == 0, out
    assert out["b_calls"] >= 20, out  # before issue 43: 0 (all waited)
    assert out["ra_ok"] and out["many_ok"], out
    assert out["a_waited"] > 1.0, out  # A's own work did wait for its lock


def test_two_devices_hammered_at_once_with_builds(tmp_path):
    """Threads on two devices at once, each device building kernels of its
    own (program caches are per device; an empty disk cache, which the two
    identical PoCL devices write under the same keys at once) and reading
    partials of both (get_many): every answer right, nothing hangs."""
    out = _run_two_devices("""
        rng = np.random.default_rng(3)
        data = [rng.integers(-9, 9, 5000 + 97 * i).astype(np.int32)
                for i in range(6)]
        errors = []

        def work(dev, seed):
            try:
                for i in range(12):
                    x = data[(seed + i) % len(data)]
                    d = gpured.to_device(x, device=dev)
                    op = ("sum", "max", "min")[i % 3]
                    got = int(getattr(gpured, op)(d))
                    if got != int(getattr(np, op)(x)):
                        errors.append((dev, op, got))
                    c = gpured.cumsum(d).get()
                    if not np.array_equal(c, np.cumsum(x)):
                        errors.append((dev, "cumsum"))
                    other = gpured.to_device(x, device=A if dev == B else B)
                    g = _core.get_many([gpured.sum(d), gpured.sum(other)])
                    if [int(v) for v in g] != [int(x.sum())] * 2:
                        errors.append((dev, "get_many"))
            except BaseException as e:  # collected
                errors.append(repr(e))

        ts = [threading.Thread(target=work, args=(dev, s))
              for s, dev in enumerate([A, B, A, B])]
        for t in ts:
            t.start()
        for t in ts:
            t.join(180)
        print(json.dumps({"alive": sum(t.is_alive() for t in ts),
                          "errors": [str(e) for e in errors[:5]]}))
    """, GPURED_CACHE_DIR=str(tmp_path / "cache"))
    assert out["alive"] == 0, out
    assert out["errors"] == [], out
    assert os.listdir(tmp_path / "cache")  # binaries were written
    assert not [f for f in os.listdir(tmp_path / "cache") if f.endswith(".tmp")]


def test_one_device_held_lock_others_wait_and_stay_correct():
    """On one device: while a thread holds its lock, other threads' calls
    wait (none completes) and then all complete correctly; no deadlock."""
    a = np.arange(1 << 16, dtype=np.float32)
    want = float(a.sum(dtype=np.float64))
    d = gpured.to_device(a)
    float(gpured.sum(d))
    dev = d.device_index
    done, errors = [], []

    def work():
        try:
            for _ in range(5):
                got = float(gpured.sum(d))
                if got != want:
                    errors.append(got)
            done.append(time.perf_counter())
        except BaseException as e:  # noqa: BLE001 - collected
            errors.append(e)

    hold = threading.Thread(target=_core._hold_device_lock, args=(dev, 1500))
    hold.start()
    time.sleep(0.3)  # the hook holds the lock by now
    t0 = time.perf_counter()
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    hold.join(60)
    assert not any(t.is_alive() for t in ts)
    assert not errors, errors[:3]
    assert len(done) == 4
    assert min(done) - t0 > 0.6  # they waited for the held lock (1.2 s)


def test_long_calls_and_short_calls_share_one_device():
    """One thread runs long calls (a 32 MiB scan and sum, streamed through
    staging on this CPU device) while others run short ones on the same
    device, and the staging settings change meanwhile (every device's
    lock): all correct against NumPy, no deadlock."""
    rng = np.random.default_rng(11)
    big = rng.integers(-3, 4, 8 << 20).astype(np.int32)       # 32 MiB
    small = [rng.standard_normal(1000 + i).astype(np.float32) for i in range(8)]
    before = gpured.staging()
    errors = []
    stop = threading.Event()

    def long_calls():
        try:
            for _ in range(2):
                d = gpured.to_device(big)  # streamed (force=True)
                if int(gpured.sum(d)) != int(big.sum()):
                    errors.append("sum")
                if not np.array_equal(gpured.cumsum(d).get(), np.cumsum(big)):
                    errors.append("cumsum")
        except BaseException as e:  # noqa: BLE001 - collected
            errors.append(e)

    def short_calls(seed):
        try:
            i = seed
            while not stop.is_set():
                x = small[i % len(small)]
                d = gpured.to_device(x)
                np.testing.assert_allclose(float(gpured.sum(d)),
                                           x.sum(dtype=np.float64), rtol=1e-5,
                                           atol=1e-4)
                if int(gpured.argmax(d)) != int(x.argmax()):
                    errors.append("argmax")
                i += 1
        except BaseException as e:  # noqa: BLE001 - collected
            errors.append(e)

    try:
        gpured.set_staging(force=True, min_bytes=1 << 20, chunk_bytes=4 << 20)
        shorts = [threading.Thread(target=short_calls, args=(s,)) for s in range(3)]
        longs = threading.Thread(target=long_calls)
        for t in shorts + [longs]:
            t.start()
        for k in range(4):  # settings changed under running streams
            time.sleep(0.2)
            gpured.set_staging(chunk_bytes=(2 + k % 2) << 20)
        longs.join(240)
        stop.set()
        for t in shorts:
            t.join(60)
        assert not longs.is_alive()
        assert not any(t.is_alive() for t in shorts)
    finally:
        stop.set()
        gpured.set_staging(chunk_bytes=before["chunk_bytes"],
                           buffers=before["buffers"],
                           min_bytes=before["min_bytes"], force=before["force"])
    assert not errors, errors[:3]


def test_hold_hook_checks_its_arguments():
    with pytest.raises(ValueError):
        _core._hold_device_lock(None, -1)
    _core._hold_device_lock(None, 0)
