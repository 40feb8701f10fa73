"""The benchmarks' timing rule: a loop of calls on the same data, one
synchronisation at the end, the median over loops (ms per call)."""
import statistics
import time


def optional_torch():
    """torch for the peer rows, or None where it is not installed (the
    GPU host has it)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - the GPU host has it
        return None
    return torch


def optional_cupy():
    """CuPy for the peer rows, or None where it is not installed."""
    try:
        import cupy
    except ImportError:  # pragma: no cover - the GPU host has it
        return None
    return cupy


def loop_ms(fn, sync, calls=10, loops=5):
    fn()
    sync()
    ts = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        ts.append((time.perf_counter() - t0) / calls)
    return statistics.median(ts) * 1e3


def call_ms(fn, reps=5):
    """Median wall time of single calls that each return a host value
    (a Dask compute: it waits by itself), one warm-up call first (ms):
    gpured.bench's rule, in ms."""
    from gpured.bench import median_time
    return median_time(fn, reps) * 1e3


def sum_in_turns(parts, devices):
    """gpured.dask's partials of device-resident chunks (float64 sums,
    keepdims), the devices taken in turn as gd.sum enqueues them, then
    one synchronisation per device (dask_chunks.py, dask_phases.py)."""
    import numpy as np
    import gpured
    by = {}
    for c in parts:
        by.setdefault(c.device_index, []).append(c)
    qs = list(by.values())
    for k in range(max(len(q) for q in qs)):
        for q in qs:
            if k < len(q):
                gpured.sum(q[k], axis=(0,), keepdims=True, dtype=np.float64)
    for d in devices:
        gpured.synchronize(d)


class PeerRows(list):
    """The exp scripts' table: rows of (name, gpured ms, {peer: ms or
    None}, best peer / gpured), printed last."""

    def add(self, name, ms, peers):
        best = min((v for v in peers.values() if v), default=None)
        self.append((name, ms, peers, best / ms if best else None))

    def print(self, width=40, pwidth=44):
        print("%-*s %10s  %-*s %s" % (width, "row", "gpured ms", pwidth,
                                      "peers ms", "best peer / gpured"))
        for name, ms, peers, r in self:
            print("%-*s %10.3f  %-*s %s" % (
                width, name, ms, pwidth,
                ", ".join("%s %s" % (k, "%.3f" % v if v else "-")
                          for k, v in peers.items()),
                "%.2f" % r if r else "-"))



def spy_resident(gd, S):
    """Timestamps into S of a persisted device-resident gpured.dask
    reduction's result task: "task" (it starts), "gm0" / "gm1" (its
    get_many's start and end: the devices done), "agg" (it returns)."""
    real_agg, real_gm = gd._resident_agg, gd._core.get_many

    def agg(*a, **k):
        S["task"] = time.perf_counter()
        r = real_agg(*a, **k)
        S["agg"] = time.perf_counter()
        return r

    def gm(arrays):
        S["gm0"] = time.perf_counter()
        r = real_gm(arrays)
        S["gm1"] = time.perf_counter()
        return r

    gd._resident_agg, gd._core.get_many = agg, gm
