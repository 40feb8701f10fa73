"""NumPy arrays on the host path's threads (issue 12; issue 15's CPU rows).

Every listed device's placement rates measured first (gpured.measure_rates,
the host path's threads included), then gpured unpinned (placement "auto":
the host path on its threads, the CPU device, the GPU -- whatever the model
says), the same call with the host path on one thread, numpy and torch's
CPU kernels, in one process.  Wall clock of loops of calls (NumPy in,
answer out), median of 5 loops (3 at 1 GiB), after a warm-up call.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/host_threads.py [MAX_MIB]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms, optional_torch  # noqa: E402

import gpured  # noqa: E402

torch = optional_torch()


def wall(fn, nbytes):
    # after the previous timing's threads (torch's OpenMP, PoCL's, the host
    # path's) have stopped spinning
    time.sleep(0.3)
    calls = max(2, min(2000, (1 << 27) // nbytes))
    return loop_ms(fn, lambda: None, calls, 3 if nbytes >= 1 << 30 else 5)


def cases(max_bytes):
    """(label, op, array, axis, torch call)."""
    rng = np.random.default_rng(0)
    out = []
    for nb in (1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30):
        if nb <= max_bytes:
            out.append(("sum f32", "sum", nb, (nb // 4,), None, np.float32))
    for nb in (1 << 20, 1 << 24, 1 << 28):
        if nb <= max_bytes:
            out.append(("argmax f32", "argmax", nb, (nb // 4,), None, np.float32))
            out.append(("cumsum f32", "cumsum", nb, (nb // 4,), 0, np.float32))
    nb = min(1 << 28, max_bytes)
    out += [("sum f64", "sum", nb, (nb // 8,), None, np.float64),
            ("max f32", "max", nb, (nb // 4,), None, np.float32),
            ("column sum f32", "sum", nb, (4096, nb // 4 // 4096), 0, np.float32),
            ("row sum f32", "sum", nb, (4096, nb // 4 // 4096), 1, np.float32),
            ("short rows x16 f32", "sum", nb, (nb // 64, 16), 1, np.float32),
            ("row cumsum f32", "cumsum", nb, (4096, nb // 4 // 4096), 1, np.float32)]
    for label, op, nb, shape, axis, dt in out:
        a = rng.standard_normal(shape).astype(dt)
        yield label, op, nb, a, axis


def torch_call(op, t, axis):
    if op == "cumsum":
        return lambda: torch.cumsum(t, axis)
    f = {"sum": torch.sum, "max": torch.max, "argmax": torch.argmax}[op]
    return (lambda: f(t)) if axis is None else (lambda: f(t, axis))


def main():
    max_mib = float(sys.argv[1]) if len(sys.argv) > 1 else 1024
    gpured.set_device(None)
    devs = gpured.devices()
    print("devices:", [d["name"] for d in devs], "current:",
          gpured.get_device()["name"], "threads:", gpured.host_threads(),
          "torch threads:", torch.get_num_threads() if torch else None)
    for d in devs:
        r = gpured.measure_rates(device=d["position"])
        print("rates", d["name"][:30], {k: r[k] for k in
                                        ("host_call_us", "host_gbs", "device_gbs",
                                         "device_call_us")})
    print("threads", gpured.rates()["threads"], flush=True)
    rows = []
    for label, op, nb, a, axis in cases(int(max_mib * (1 << 20))):
        f = getattr(gpured, op)
        e = gpured.explain(op, a, axis=axis)
        where = ("host" + (" x%d" % gpured.host_threads()
                           if "threads" in e["placement_why"] else " x1")
                 if e["placement"] == "host" else e["device"][:12])
        c0 = gpured._core.host_threads()["counts"]
        auto = wall(lambda: f(a, axis=axis), nb)
        c1 = gpured._core.host_threads()["counts"]
        jobs = c1["jobs"] - c0["jobs"]
        pool = "%d jobs, caller %.0f%%, woken %.1f/job" % (
            jobs, 100.0 * (c1["caller_tasks"] - c0["caller_tasks"]) /
            max(1, c1["tasks"] - c0["tasks"]), (c1["woken"] - c0["woken"]) / max(1, jobs))
        before = gpured.set_host_threads(1)
        one = wall(lambda: f(a, axis=axis), nb)
        e1 = gpured.explain(op, a, axis=axis)
        where1 = "host" if e1["placement"] == "host" else e1["device"][:12]
        gpured.set_host_threads(before)
        npf = getattr(np, op)
        npy = wall(lambda: npf(a, axis=axis), nb)
        tch = None
        if torch is not None:
            t = torch.from_numpy(a)
            tch = wall(torch_call(op, t, axis), nb)
        got = f(a, axis=axis)
        want = npf(a.astype(np.float64), axis=axis) if op in ("sum", "cumsum") \
            else npf(a, axis=axis)
        ok = np.allclose(got, want, rtol=1e-3, atol=1e-3 * np.sqrt(a.size))
        rows.append((label, nb, where, auto, where1, one, npy, tch, ok, pool))
        print(rows[-1], flush=True)
    print()
    print("| case | MiB | auto runs on | gpured auto ms | one host thread: runs on | ms "
          "| numpy ms | torch CPU ms | best peer / auto | ok | the pool (auto) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, nb, where, auto, where1, one, npy, tch, ok, pool in rows:
        best = min(x for x in (npy, tch) if x is not None)
        print("| %s | %g | %s | %.4f | %s | %.4f | %.4f | %s | %.2f | %s | %s |" % (
            label, nb / (1 << 20), where, auto, where1, one, npy,
            "%.4f" % tch if tch is not None else "-", best / auto, ok, pool))


if __name__ == "__main__":
    main()
