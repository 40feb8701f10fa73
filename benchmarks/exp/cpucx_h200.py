"""Issue 40's host-side complex sums on the GPU machine (its CPU): full
sum / mean of C-contiguous NumPy complex64 / complex128 arrays, 64 KiB -
256 MiB, wall clock, a loop of calls on the same data, median of 5 loops
(_loop.py), NumPy and torch's CPU sum in the same process.

gpured takes them in ONE core call on the real view (n, 2) over axis 0
(gpured/_complex.py reduce; csrc/host_reduce.c red_lanes on the host
path).  Where a GPU is listed, arrays above _complex._ONE_CALL_GPU_MAX
(1 MiB) keep the (rows, 256) columns of _full_sum, since placement may
send them to the GPU, whose (n, 2) column plan has two columns: the rows
"forced" run the one call at every size (the guard lifted) so that the
two can be compared, with explain()'s placement for each.  Also the real
(n, 2) float64 axis-0 sum (the lanes kernels alone) and the threads the
host path may use here.

Results are checked against NumPy first (within 1e-5 / 1e-12 relative).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/cpucx_h200.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpured  # noqa: E402
from gpured import _complex  # noqa: E402
from _loop import loop_ms, optional_torch  # noqa: E402

torch = optional_torch()
none = lambda: None  # noqa: E731  (host calls return finished)
rng = np.random.default_rng(0)
print("host threads:", gpured.host_threads(), " devices:",
      [d["name"] for d in gpured.devices()])
print("%-34s %10s %10s %10s  %-7s %s" % ("row", "gpured ms", "numpy ms",
                                         "torch ms", "np/gr", "placement"))


def placement(a):
    try:
        e = gpured.explain("sum", a)
        return "%s (%s)" % (e.get("placement", "?"), e.get("device", "?"))
    except Exception as e:  # noqa: BLE001
        return type(e).__name__


for dt in (np.complex64, np.complex128):
    for nbytes in (64 << 10, 1 << 20, 16 << 20, 256 << 20):
        n = nbytes // np.dtype(dt).itemsize
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        tol = 1e-5 if dt == np.complex64 else 1e-12
        calls = max(1, min(200, (64 << 20) // nbytes))
        ta = torch.from_numpy(a) if torch is not None else None
        for func in ("sum", "mean"):
            want = getattr(np, func)(a)
            scale = np.abs(a).sum() / (n if func == "mean" else 1)
            for forced in (False, True):
                old = _complex._ONE_CALL_GPU_MAX
                if forced:
                    _complex._ONE_CALL_GPU_MAX = 1 << 62
                try:
                    got = getattr(gpured, func)(a)
                    assert abs(got - want) <= tol * scale, (func, got, want)
                    g = loop_ms(lambda: getattr(gpured, func)(a), none,
                                calls=calls)
                    where = placement(a)
                finally:
                    _complex._ONE_CALL_GPU_MAX = old
                if forced and nbytes <= old:
                    continue  # the same call as the row above
                w = loop_ms(lambda: getattr(np, func)(a), none, calls=calls)
                t = loop_ms(lambda: getattr(torch, func)(ta), none,
                            calls=calls) if ta is not None else float("nan")
                print("%-34s %10.3f %10.3f %10.3f  %-7.2f %s" % (
                    "%s %s %d%s" % (func, np.dtype(dt).name, nbytes,
                                    " forced" if forced else ""),
                    g, w, t, w / g, where), flush=True)

for nbytes in (1 << 20, 256 << 20):
    v = rng.standard_normal((nbytes // 16, 2))
    want = v.sum(axis=0)
    assert np.allclose(gpured.sum(v, axis=0), want, rtol=1e-12, atol=1e-9)
    calls = max(1, min(200, (64 << 20) // nbytes))
    g = loop_ms(lambda: gpured.sum(v, axis=0), none, calls=calls)
    w = loop_ms(lambda: v.sum(axis=0), none, calls=calls)
    e = gpured.explain("sum", v, axis=0)
    print("%-34s %10.3f %10.3f %10s  %-7.2f %s" % (
        "float64 (n, 2) axis 0 %d" % nbytes, g, w, "-", w / g,
        "%s (%s)" % (e.get("placement"), e.get("device"))), flush=True)
