"""sum_by_key's host path (csrc/host_bykey.c, issue 41) against NumPy.

Oracles: np.bincount (sums in float64), np.add.at (integer sums, wrapping
as NumPy's int64 / uint64), np.minimum.at / np.maximum.at (min / max,
exact), np.bincount of the keys (counts).  Float sums within the
recursive-summation bound tests/test_bykey.py uses,

    |got - want| <= (m + 2) * eps * sum(|x|)   (m: the key's pairs),

eps of the result dtype; the host path accumulates float32 in float64
and rounds once, so float32 sums are in fact within one rounding.

Placement is forced both ways: "auto" with the host path's rates made
overwhelming (gpured.set_rates, as tests/test_placement.py does) sends
the call to the host path -- explain() says so -- and
placement("current") keeps it on the device.
"""
import numpy as np
import pytest

import gpured
from gpured import _core
from gpured._bykey import _sum_count_by_key

HAS_FP64 = bool(gpured.get_device()["fp64"])
KDT = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
       "uint64"]
DEV_KDT = ["int32", "uint32", "int64", "uint64"]
VDT = (["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
        "int64", "uint64", "float32"] + (["float64"] if HAS_FP64 else []))
DEV_VDT = [v for v in VDT if v in ("int32", "uint32", "int64", "uint64",
                                   "float32", "float64")]
OPS = ["sum", "min", "max"]
FAMILIES = ("reduce", "arg", "column", "scan")


@pytest.fixture
def host_side():
    """placement 'auto' with a host path far faster than the device (and
    its threads faster still, where more than one is set)."""
    old_mode = gpured.placement("auto")
    saved = gpured.rates()
    th = _core.host_threads()
    gpured.set_rates(host_call_us=0.0, device_call_us=1e6,
                     host_gbs={k: 1e3 for k in FAMILIES},
                     device_gbs={k: 1e-3 for k in FAMILIES},
                     threads_call_us=0.0, threads_gbs={"reduce": 1e9})
    try:
        yield
    finally:
        gpured.set_rates(host_call_us=saved["host_call_us"],
                         device_call_us=saved["device_call_us"],
                         host_gbs=saved["host_gbs"],
                         device_gbs=saved["device_gbs"])
        _core.host_threads(threads=0 if th["auto"] else th["threads"],
                           call_us=th["call_us"], gbs=th["gbs"],
                           measured=th["measured"])
        gpured.placement(old_mode)


@pytest.fixture
def device_side():
    old = gpured.placement("current")
    try:
        yield
    finally:
        gpured.placement(old)


def _values(n, vdt, rng):
    dt = np.dtype(vdt)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt)
    info = np.iinfo(dt)
    if dt.itemsize == 8:
        # wrapping sums: large magnitudes both signs
        return rng.integers(info.min // 2, info.max // 2, n, dtype=dt)
    return rng.integers(info.min, info.max, n, endpoint=True).astype(dt)


def _keys(n, kdt, nk, rng):
    return rng.integers(0, nk, n).astype(kdt)


def _oracle(k, v, nk, op):
    kk = k.astype(np.int64)
    if op == "sum":
        if v.dtype.kind == "f":
            return np.bincount(kk, v.astype(np.float64), nk)
        rt = np.add.reduce(v[:0]).dtype
        out = np.zeros(nk, rt)
        np.add.at(out, kk, v.astype(rt))
        return out
    dt = v.dtype
    if dt.kind == "f":
        ident = np.inf if op == "min" else -np.inf
    elif dt.kind == "b":
        ident = op == "min"
    else:
        ident = np.iinfo(dt).max if op == "min" else np.iinfo(dt).min
    out = np.full(nk, ident, dt)
    (np.minimum if op == "min" else np.maximum).at(out, kk, v)
    return out


def _check(got, k, v, nk, op):
    want = _oracle(k, v, nk, op)
    if op == "sum":
        assert got.dtype == np.add.reduce(v[:0]).dtype
    else:
        assert got.dtype == v.dtype
    assert got.shape == (nk,)
    if op == "sum" and v.dtype.kind == "f":
        eps = np.finfo(got.dtype).eps
        m = np.bincount(k.astype(np.int64), minlength=nk)
        mag = np.bincount(k.astype(np.int64), np.abs(v.astype(np.float64)),
                          nk)
        assert np.all(np.abs(got.astype(np.float64) - want)
                      <= (m + 2) * eps * mag + 1e-300)
    else:
        np.testing.assert_array_equal(got, want)


def _placement(k, v, nk, op="sum"):
    return gpured.explain_by_key("sum_by_key", k, v, op, nk).get("placement")


@pytest.mark.parametrize("kdt", KDT)
@pytest.mark.parametrize("vdt", VDT)
def test_host_path_all_dtypes(host_side, kdt, vdt):
    rng = np.random.default_rng(KDT.index(kdt) * 16 + VDT.index(vdt))
    n, nk = 3000, 37
    k, v = _keys(n, kdt, nk, rng), _values(n, vdt, rng)
    assert _placement(k, v, nk) == "host"
    for op in OPS:
        _check(gpured.sum_by_key(k, v, nk, op), k, v, nk, op)


@pytest.mark.parametrize("kdt,vdt", [
    ("int32", "float32"), ("int64", "int32"), ("uint32", "uint64"),
    ("uint64", "float64" if HAS_FP64 else "int64")])
def test_both_sides_agree(host_side, kdt, vdt):
    """The device's answer (placement 'current') and the host path's
    (a few dtype pairs: each compiles the device's kernels)."""
    rng = np.random.default_rng(7 + DEV_KDT.index(kdt))
    n, nk = 5000, 300
    k, v = _keys(n, kdt, nk, rng), _values(n, vdt, rng)
    for op in OPS:
        host = gpured.sum_by_key(k, v, nk, op)
        old = gpured.placement("current")
        try:
            assert _placement(k, v, nk, op) == "device"
            dev = gpured.sum_by_key(k, v, nk, op)
        finally:
            gpured.placement(old)
        _check(host, k, v, nk, op)
        _check(dev, k, v, nk, op)
        if op != "sum" or np.dtype(vdt).kind != "f":
            np.testing.assert_array_equal(host, dev)


@pytest.mark.parametrize("nk", [1, 16, 4096, 5000, 200_000])
def test_key_counts_and_threads(host_side, nk):
    """Few keys (interleaved bin copies), past the copies' limit, bins
    past the cache; on one thread and on two (the pool's tasks, each its
    own bins, merged in order)."""
    rng = np.random.default_rng(nk)
    n = 300_000
    k = rng.integers(0, nk, n).astype(np.int64)
    v = rng.standard_normal(n).astype(np.float32)
    iv = rng.integers(-1000, 1000, n).astype(np.int32)
    old = gpured.set_host_threads(1)
    try:
        for t in (1, 2):
            gpured.set_host_threads(t)
            _check(gpured.sum_by_key(k, v, nk), k, v, nk, "sum")
            _check(gpured.sum_by_key(k, iv, nk, "max"), k, iv, nk, "max")
            s, c = _sum_count_by_key(k, v, nk)
            _check(s, k, v, nk, "sum")
            np.testing.assert_array_equal(c, np.bincount(k, minlength=nk))
            # num_keys not given: one thread grows its bins with the keys
            # (copies folded past 4096), two find the largest key first
            top = int(k.max()) + 1
            _check(gpured.sum_by_key(k, iv, op="min"), k, iv, top, "min")
            s, c = _sum_count_by_key(k, v)
            _check(s, k, v, top, "sum")
            np.testing.assert_array_equal(c, np.bincount(k))
    finally:
        gpured.set_host_threads(old)


@pytest.mark.parametrize("side", ["host_side", "device_side"])
def test_op_count(request, side):
    """op "count" (values None): np.bincount of the keys, on both sides."""
    request.getfixturevalue(side)
    rng = np.random.default_rng(21)
    k = rng.integers(0, 40, 5000).astype(np.uint16)
    got = gpured.sum_by_key(k, None, 45, "count")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.bincount(k, minlength=45))
    got = gpured.sum_by_key(k, None, op="count")
    np.testing.assert_array_equal(got, np.bincount(k))


def test_num_keys_default_and_empty(host_side):
    rng = np.random.default_rng(3)
    k = rng.integers(0, 50, 1000).astype(np.uint16)
    v = rng.standard_normal(1000)
    got = gpured.sum_by_key(k, v)
    _check(got, k, v, int(k.max()) + 1, "sum")
    e = gpured.sum_by_key(np.zeros(0, np.int32), np.zeros(0, np.float32))
    assert e.shape == (0,) and e.dtype == np.float32
    e = gpured.sum_by_key(np.zeros(0, np.int8), np.zeros(0, np.int16), 5,
                          "min")
    np.testing.assert_array_equal(e, np.full(5, np.iinfo(np.int16).max,
                                             np.int16))
    s, c = _sum_count_by_key(np.zeros(0, np.int64), np.zeros(0), 3)
    np.testing.assert_array_equal(s, np.zeros(3))
    np.testing.assert_array_equal(c, np.zeros(3, np.int64))


@pytest.mark.parametrize("side", ["host_side", "device_side"])
def test_key_errors_as_the_device(request, side):
    """A key >= num_keys or a negative key: the same ValueError (the first
    bad index) on both sides."""
    request.getfixturevalue(side)
    v = np.arange(10, dtype=np.float32)
    k = np.array([0, 1, 2, 9, 3, 12, 4, 5, 6, 7], np.int32)
    with pytest.raises(ValueError, match=r"keys\[3\] = 9 is out of range.*"
                                         r"num_keys = 5"):
        gpured.sum_by_key(k, v, 5)
    k = np.array([0, 1, 2, 3, -4, 5, -1, 0, 0, 0], np.int64)
    with pytest.raises(ValueError, match=r"keys\[4\] = -4 is negative"):
        gpured.sum_by_key(k, v, 8)
    with pytest.raises(ValueError, match=r"keys\[4\] = -4 is negative"):
        gpured.sum_by_key(k, v)


def test_small_key_errors_on_host(host_side):
    v = np.ones(6, np.float64 if HAS_FP64 else np.float32)
    with pytest.raises(ValueError, match=r"keys\[2\] = -3 is negative"):
        gpured.sum_by_key(np.array([1, 0, -3, 2, 0, 0], np.int8), v, 4)
    with pytest.raises(ValueError, match=r"keys\[5\] = 200 is out of range"):
        gpured.sum_by_key(np.array([1, 0, 3, 2, 0, 200], np.uint8), v, 4)
    with pytest.raises(ValueError, match=r"keys\[0\] = 0 is out of range"):
        gpured.sum_by_key(np.array([0, 0], np.int16), v[:2], 0)


def test_host_only_dtypes_refused_on_the_device(device_side):
    """bool values are the host path's only: with placement 'current' the
    device refuses them as before (small keys too until the device takes
    them: worktree "bins", so not asserted here)."""
    with pytest.raises(TypeError, match="values must be"):
        gpured.sum_by_key(np.zeros(4, np.int32), np.ones(4, bool), 2)


def test_sum_count_device_side(device_side):
    """sum_count where the device runs: sums there, counts a second pass."""
    rng = np.random.default_rng(11)
    k = rng.integers(0, 20, 4000).astype(np.int32)
    v = rng.standard_normal(4000).astype(np.float32)
    s, c = _sum_count_by_key(k, v, 20)
    _check(s, k, v, 20, "sum")
    np.testing.assert_array_equal(c, np.bincount(k, minlength=20))


def test_device_arrays_stay_on_the_device(host_side):
    rng = np.random.default_rng(12)
    k = rng.integers(0, 20, 4000).astype(np.int32)
    v = rng.standard_normal(4000).astype(np.float32)
    dk, dv = gpured.to_device(k), gpured.to_device(v)
    plan = gpured.explain_by_key("sum_by_key", dk, dv, "sum", 20)
    assert plan.get("placement") != "host"
    got = gpured.sum_by_key(dk, dv, 20)
    assert isinstance(got, gpured.Array)
    _check(gpured.asnumpy(got), k, v, 20, "sum")
    s, c = _sum_count_by_key(dk, dv, 20)
    np.testing.assert_array_equal(gpured.asnumpy(c),
                                  np.bincount(k, minlength=20))


def test_explain_names_the_host_path(host_side):
    k = np.zeros(100, np.int64)
    v = np.ones(100, np.float32)
    plan = gpured.explain_by_key("sum_by_key", k, v, "sum", 4)
    assert plan["placement"] == "host" and plan["variant"] == "host"
    assert "host path" in plan["placement_why"]
    # knobs and deterministic=True keep the device
    assert gpured.explain_by_key("sum_by_key", k, v, "sum", 4,
                                 variant="atomic")["placement"] == "device"
    assert gpured.explain_by_key("sum_by_key", k, v, "sum", 4,
                                 deterministic=True)["placement"] == "device"


def test_aggregate_mean_on_host_path(host_side):
    """aggregate's mean of NumPy inputs (one sum_count call) against
    numpy_groupies' NumPy engine: dtypes, empty groups' fill, values."""
    npg = pytest.importorskip("numpy_groupies.aggregate_numpy",
                              reason="numpy_groupies (the test extra) is "
                                     "the oracle")
    rng = np.random.default_rng(5)
    g = rng.integers(0, 300, 20000)
    a = rng.standard_normal(20000).astype(np.float32)
    for kw in ({"size": 310}, {"size": 310, "fill_value": -1.5}, {}):
        got = gpured.aggregate(g, a, "mean", **kw)
        want = npg.aggregate(g, a, "mean", **kw)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    ai = (a * 100).astype(np.int16)
    gs = g.astype(np.uint16)
    got = gpured.aggregate(gs, ai, "mean", fill_value=-1)
    want = npg.aggregate(gs, ai, "mean", fill_value=-1)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError):
        gpured.aggregate(np.array([0, -1, 2]), np.ones(3), "mean")


def test_ctrl_c_stops_the_host_loop(host_side):
    """Ctrl-C (simulated: _thread.interrupt_main) during one long host-path
    call raises KeyboardInterrupt within ~0.2 s, and the next call is
    right.  64 Mi int8 keys and bool values (128 MiB; host-only dtypes)."""
    import _thread
    import threading
    import time
    n = 64 << 20
    k = np.zeros(n, np.int8)
    k[1::3] = 1
    v = np.ones(n, bool)
    at = {}

    def fire():
        at["sig"] = time.perf_counter()
        _thread.interrupt_main()

    timer = threading.Timer(0.02, fire)
    ended = None
    try:
        timer.start()
        gpured.sum_by_key(k, v, 2)
        ended = time.perf_counter()
        time.sleep(5)  # the interrupt lands here if the call ended first
        raise AssertionError("no KeyboardInterrupt")
    except KeyboardInterrupt:
        delay = time.perf_counter() - at["sig"]
    finally:
        timer.cancel()
    if ended is not None and ended < at["sig"]:
        pytest.skip("the call ended before the interrupt (a fast machine)")
    assert ended is None, "the call ran to its end"
    assert delay < 0.25, delay
    got = gpured.sum_by_key(k[:3000], v[:3000], 2)
    np.testing.assert_array_equal(got, [2000, 1000])
