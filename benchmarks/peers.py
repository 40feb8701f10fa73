"""gpured beside its peers, wall clock, one process, one table.

Every row is a loop of calls on the same data, synchronised once at the end
(as a user's program runs), the median of several loops divided by the
number of calls.  On a GPU the peers are torch, CuPy and PyOpenCL (its own
reductions, and a plain two-kernel float4 sum: the OpenCL floor) on
device-resident data; on a CPU device they are NumPy and torch's CPU
kernels on host arrays.  `ratio` is the best peer's time over gpured's
(>= 1: gpured as fast or faster).  `events` is gpured's kernel time by
OpenCL profiling events: when wall time exceeds it, the difference is
host-side cost (ours).

    python3 benchmarks/peers.py [--quick] [--gib 1] [--json out.json]

GPURED_DEVICE picks the device (e.g. GPURED_DEVICE=nvidia).
"""
import argparse
import faulthandler
import json
import os
import statistics
import sys
import time

import numpy as np

import gpured
from gpured import _core


VERBOSE = os.environ.get("PEERS_VERBOSE") == "1"


def loop_time(fn, sync, calls, loops=5):
    """Median over `loops` of (wall time of `calls` calls + one sync) / calls."""
    if VERBOSE:
        print("    timing %s" % getattr(fn, "__qualname__", fn), flush=True)
    fn()
    sync()
    ts = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        ts.append((time.perf_counter() - t0) / calls)
    return statistics.median(ts)


class Peers:
    def __init__(self, gpu):
        self.torch = self.cupy = self.cl = None
        self.gpu = gpu
        try:
            import torch
            if not gpu or torch.cuda.is_available():
                self.torch = torch
        except Exception:
            pass
        if gpu:
            try:
                import cupy
                cupy.zeros(1).sum()
                self.cupy = cupy
            except Exception:
                pass
            try:
                import pyopencl as cl
                import pyopencl.array as cla
                plat = [p for p in cl.get_platforms() if "NVIDIA" in p.name]
                if plat:
                    self.ctx = cl.Context(plat[0].get_devices())
                    self.q = cl.CommandQueue(self.ctx)
                    self.cl, self.cla = cl, cla
                    self._floor = cl.Program(self.ctx, FLOOR_SRC).build()
            except Exception as e:  # noqa: BLE001 - report and go on
                print("pyopencl unavailable:", e, file=sys.stderr)

    # device-resident copies of a host array
    def torch_dev(self, a):
        t = self.torch.from_numpy(a)
        return t.cuda() if self.gpu else t

    def sync_torch(self):
        if self.gpu:
            self.torch.cuda.synchronize()


FLOOR_SRC = """
__kernel void part(__global const float4 *x, ulong n4, __global float *out)
{
    __local float s[256];
    float acc = 0.0f;
    for (ulong i = get_global_id(0); i < n4; i += get_global_size(0)) {
        float4 v = x[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    s[get_local_id(0)] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 128; k > 0; k >>= 1) {
        if (get_local_id(0) < k) s[get_local_id(0)] += s[get_local_id(0) + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (get_local_id(0) == 0) out[get_group_id(0)] = s[0];
}
__kernel void fin(__global const float *p, uint n, __global float *out)
{
    __local float s[256];
    float acc = 0.0f;
    for (uint i = get_local_id(0); i < n; i += 256) acc += p[i];
    s[get_local_id(0)] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 128; k > 0; k >>= 1) {
        if (get_local_id(0) < k) s[get_local_id(0)] += s[get_local_id(0) + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (get_local_id(0) == 0) out[0] = s[0];
}
"""


def settle(P, d, tt, cp):
    """Every library's copies finished, then a warm-up before a block's
    first row (gpured's): the first kernels right after torch and CuPy
    copied 1 GiB beside ours ran 8% slow (H100, 2026-11-26,
    benchmarks/exp/sum_first.py: sum 0.386 ms there, 0.361 ms a few calls
    later with the same plan; the row sums' 0.381 ms events against 0.352
    in benchmarks/exp/knobs_rows.py)."""
    if tt is not None:
        P.sync_torch()
    if cp is not None:
        P.cupy.cuda.Device().synchronize()
    for _ in range(30):
        gpured.sum(d)
    gpured.synchronize()


def row(rows, name, t_gr, peers, events=None, note=""):
    best = min((t for t in peers.values() if t is not None), default=None)
    r = dict(name=name, gpured_ms=t_gr * 1e3,
             peers={k: (None if v is None else v * 1e3) for k, v in peers.items()},
             ratio=None if best is None else best / t_gr,
             events_ms=None if events is None else events * 1e3, note=note)
    rows.append(r)
    peer_txt = " ".join("%s %.4f" % (k, v * 1e3) for k, v in peers.items() if v is not None)
    print("%-44s gpured %9.4f ms  %-48s ratio %s%s" % (
        name, t_gr * 1e3, peer_txt, "-" if r["ratio"] is None else "%.3f" % r["ratio"],
        "" if events is None else "  events %.4f ms (wall/events %.2f)" % (events * 1e3, t_gr / events)),
        flush=True)


def gpu_rows(P, gib, quick):
    rows = []
    n = int(gib * (1 << 30))
    sync = gpured.synchronize
    calls = 10 if not quick else 4
    rng = np.random.default_rng(0)
    # --- full reductions, 1 GiB, device-resident
    for dt in (np.float32, np.float64, np.int32):
        a = (rng.standard_normal(n // np.dtype(dt).itemsize) * 100).astype(dt)
        d = gpured.to_device(a)
        tt = P.torch_dev(a) if P.torch else None
        cp = P.cupy.asarray(a) if P.cupy else None
        ca = P.cla.to_device(P.q, a) if P.cl else None
        settle(P, d, tt, cp)
        for op in ("sum", "min", "max") + (("argmax",) if dt != np.float64 else ()):
            g = getattr(gpured, op)
            t = loop_time(lambda: g(d), sync, calls)
            ev = gpured.timeit(op, d, reps=5)["seconds"]
            peers = {}
            if tt is not None:
                f = {"sum": tt.sum, "min": tt.min, "max": tt.max, "argmax": tt.argmax}[op]
                peers["torch"] = loop_time(f, P.sync_torch, calls)
            if cp is not None:
                f = getattr(P.cupy, op)
                peers["cupy"] = loop_time(lambda: f(cp), P.cupy.cuda.Device().synchronize, calls)
            if ca is not None and op in ("sum", "min", "max"):
                f = {"sum": P.cla.sum, "min": P.cla.min, "max": P.cla.max}[op]
                peers["pyopencl"] = loop_time(lambda: f(ca, queue=P.q), P.q.finish, calls)
            if ca is not None and op == "sum" and dt == np.float32:
                groups = 132 * 8
                part = P.cla.empty(P.q, groups, np.float32)
                res = P.cla.empty(P.q, 1, np.float32)
                n4 = np.uint64(a.size // 4)
                def floor():
                    P._floor.part(P.q, (groups * 256,), (256,), ca.data, n4, part.data)
                    P._floor.fin(P.q, (256,), (256,), part.data, np.uint32(groups), res.data)
                peers["cl_floor"] = loop_time(floor, P.q.finish, calls)
            row(rows, "%s %s %g GiB (device)" % (op, np.dtype(dt).name, gib), t, peers, ev)
        del d, tt, cp, ca
        gpured.empty_cache()
    # --- rows and columns of a 4096 x (n/4096/4) float32 matrix
    cols = n // 4 // 4096
    a = rng.standard_normal((4096, cols)).astype(np.float32)
    d = gpured.to_device(a)
    tt = P.torch_dev(a) if P.torch else None
    cp = P.cupy.asarray(a) if P.cupy else None
    settle(P, d, tt, cp)
    for axis, name in ((1, "row sums"), (0, "column sums")):
        t = loop_time(lambda: gpured.sum(d, axis=axis), sync, calls)
        ev = gpured.timeit("sum", d, axis=axis, reps=5)["seconds"]
        peers = {}
        if tt is not None:
            peers["torch"] = loop_time(lambda: tt.sum(dim=axis), P.sync_torch, calls)
        if cp is not None:
            peers["cupy"] = loop_time(lambda: cp.sum(axis=axis), P.cupy.cuda.Device().synchronize, calls)
        row(rows, "%s 4096x%d f32" % (name, cols), t, peers, ev)
    o = gpured.empty(4096, np.float32)
    t_out = loop_time(lambda: gpured.sum(d, axis=1, out=o), sync, calls)
    t_new = loop_time(lambda: gpured.sum(d, axis=1), sync, calls)
    row(rows, "row sums into out= (vs new result)", t_out, {"new result": t_new})
    for axis, name in ((1, "row cumsum"), (0, "column cumsum")):
        t = loop_time(lambda: gpured.cumsum(d, axis=axis), sync, calls)
        ev = gpured.timeit("cumsum", d, axis=axis, reps=5)["seconds"]
        peers = {}
        if tt is not None:
            peers["torch"] = loop_time(lambda: tt.cumsum(dim=axis), P.sync_torch, calls)
        if cp is not None:
            peers["cupy"] = loop_time(lambda: cp.cumsum(axis=axis), P.cupy.cuda.Device().synchronize, calls)
        row(rows, "%s 4096x%d f32" % (name, cols), t, peers, ev)
    del d, tt, cp
    gpured.empty_cache()
    # --- scans of 1 GiB
    a = rng.standard_normal(n // 4).astype(np.float32)
    d = gpured.to_device(a)
    tt = P.torch_dev(a) if P.torch else None
    cp = P.cupy.asarray(a) if P.cupy else None
    ca = P.cla.to_device(P.q, a) if P.cl else None
    t = loop_time(lambda: gpured.cumsum(d), sync, calls)
    ev = gpured.timeit("cumsum", d, reps=5)["seconds"]
    o = gpured.empty(a.size, np.float32)
    t_out = loop_time(lambda: gpured.cumsum(d, out=o), sync, calls)
    peers = {}
    if tt is not None:
        peers["torch"] = loop_time(lambda: tt.cumsum(0), P.sync_torch, calls)
    if cp is not None:
        peers["cupy"] = loop_time(lambda: cp.cumsum(), P.cupy.cuda.Device().synchronize, calls)
    if ca is not None:
        from pyopencl.scan import GenericScanKernel
        try:
            from pyopencl.scan import InclusiveScanKernel
            k = InclusiveScanKernel(P.ctx, np.float32, "a+b")
            peers["pyopencl"] = loop_time(lambda: k(ca.copy(queue=P.q), queue=P.q), P.q.finish, calls)
        except Exception as e:  # noqa: BLE001
            print("pyopencl scan:", e, file=sys.stderr)
    row(rows, "cumsum f32 %g GiB (device)" % gib, t, peers, ev)
    row(rows, "cumsum f32 into out=", t_out, {"new result": t}, ev)
    # --- small arrays: per-call cost
    s = gpured.to_device(np.ones(256, np.float32))
    ts = P.torch_dev(np.ones(256, np.float32)) if P.torch else None
    cs = P.cupy.ones(256, np.float32) if P.cupy else None
    t = loop_time(lambda: gpured.sum(s), sync, 2000)
    peers = {}
    if ts is not None:
        peers["torch"] = loop_time(lambda: ts.sum(), P.sync_torch, 2000)
    if cs is not None:
        peers["cupy"] = loop_time(lambda: cs.sum(), P.cupy.cuda.Device().synchronize, 2000)
    row(rows, "sum 1 KiB f32 (device), per call", t, peers)
    # --- 1,000 enqueued calls return before the device finishes
    big = d
    gpured.synchronize()
    t0 = time.perf_counter()
    for _ in range(1000):
        r = gpured.sum(big)
    t_enq = time.perf_counter() - t0
    busy = _core._busy()
    gpured.synchronize()
    t_all = time.perf_counter() - t0
    row(rows, "1000 x sum %g GiB: enqueue loop" % gib, t_enq / 1000, {},
        note="returned in %.1f ms, device finished after %.1f ms, busy at return: %s"
        % (t_enq * 1e3, t_all * 1e3, busy))
    print("    1000 calls returned in %.1f ms; the device finished after %.1f ms; busy: %s"
          % (t_enq * 1e3, t_all * 1e3, busy))
    del d, big, r
    gpured.empty_cache()
    # --- host arrays, end to end
    h = rng.standard_normal(n // 4).astype(np.float32)
    t = loop_time(lambda: gpured.sum(h), lambda: None, 1, loops=3)
    t_np = loop_time(lambda: h.sum(), lambda: None, 1, loops=3)
    row(rows, "sum f32 %g GiB NumPy array, end to end" % gib, t, {"numpy": t_np})
    if not quick:
        t = loop_time(lambda: gpured.cumsum(h), lambda: None, 1, loops=2)
        t_np = loop_time(lambda: np.cumsum(h), lambda: None, 1, loops=2)
        row(rows, "cumsum f32 %g GiB NumPy array, end to end" % gib, t, {"numpy": t_np})
    return rows


def family_rows(P, nbytes, quick, gpu):
    """The NumPy family beside the peers' own: float32 with 10% NaN,
    device-resident on a GPU (torch, CuPy), host arrays on a CPU device
    (NumPy, torch's CPU kernels)."""
    rows = []
    rng = np.random.default_rng(1)
    n = int(nbytes) // 4
    a = rng.standard_normal(n).astype(np.float32)
    a[rng.random(n) < 0.1] = np.nan
    th, cpm = P.torch, P.cupy
    if gpu:
        x, sync, calls = gpured.to_device(a), gpured.synchronize, 4 if quick else 10
        tt = P.torch_dev(a) if th else None
        cp = cpm.asarray(a) if cpm else None
        csync = cpm.cuda.Device().synchronize if cpm else None
    else:
        x, sync, calls = a, (lambda: None), 3
        tt = th.from_numpy(a) if th else None
        cp, csync = None, None
    torch_f = {"nansum": "nansum", "nanmean": "nanmean", "count_nonzero": "count_nonzero",
               "var": "var", "std": "std"}
    for f in ("nansum", "nanmin", "nanmax", "nanargmax", "nanmean", "count_nonzero",
              "ptp", "nancumsum", "var", "std", "nanvar", "nanstd"):
        g = getattr(gpured, f)
        t = loop_time(lambda: g(x), sync, calls)
        peers = {}
        if not gpu:
            peers["numpy"] = loop_time(lambda: getattr(np, f)(a), sync, calls)
        if tt is not None and f in torch_f:
            tf = getattr(th, torch_f[f])
            kw = {"correction": 0} if f in ("var", "std") else {}
            peers["torch"] = loop_time(lambda: tf(tt, **kw), P.sync_torch if gpu else sync,
                                       calls)
        if cp is not None:
            cf = getattr(cpm, f)
            peers["cupy"] = loop_time(lambda: cf(cp), csync, calls)
        row(rows, "%s f32 %d MiB (%s, 10%% NaN)" % (f, n * 4 >> 20, "device" if gpu else "host"),
            t, peers)
    del x, tt, cp
    gpured.empty_cache()
    return rows


def cpu_rows(P, mib, quick):
    rows = []
    rng = np.random.default_rng(0)
    n = int(mib * (1 << 20))
    sync = lambda: None  # noqa: E731 - host results wait already
    calls = 5
    th = P.torch
    for dt in (np.float32, np.float64):
        a = rng.standard_normal(n // np.dtype(dt).itemsize).astype(dt)
        ta = th.from_numpy(a) if th else None
        for op in ("sum", "max", "argmax"):
            g = getattr(gpured, op)
            t = loop_time(lambda: g(a), sync, calls)
            peers = {"numpy": loop_time(lambda: getattr(np, op)(a), sync, calls)}
            if ta is not None:
                peers["torch"] = loop_time(lambda: getattr(th, op)(ta), sync, calls)
            row(rows, "%s %s %g MiB (host)" % (op, np.dtype(dt).name, mib), t, peers)
    m = rng.standard_normal((4096, n // 4 // 4096)).astype(np.float32)
    tm = th.from_numpy(m) if th else None
    for axis in (1, 0):
        t = loop_time(lambda: gpured.sum(m, axis=axis), sync, calls)
        peers = {"numpy": loop_time(lambda: m.sum(axis=axis), sync, calls)}
        if tm is not None:
            peers["torch"] = loop_time(lambda: tm.sum(dim=axis), sync, calls)
        row(rows, "sum axis=%d 4096x%d f32 (host)" % (axis, m.shape[1]), t, peers)
    t = loop_time(lambda: gpured.cumsum(m, axis=1), sync, calls)
    peers = {"numpy": loop_time(lambda: np.cumsum(m, axis=1), sync, calls)}
    if tm is not None:
        peers["torch"] = loop_time(lambda: th.cumsum(tm, dim=1), sync, calls)
    row(rows, "row cumsum 4096x%d f32 (host)" % m.shape[1], t, peers)
    for nb in (1 << 10, 64 << 10):
        s = rng.standard_normal(nb // 4).astype(np.float32)
        t = loop_time(lambda: gpured.sum(s), sync, 200)
        row(rows, "sum %d KiB f32 (host), per call" % (nb >> 10), t,
            {"numpy": loop_time(lambda: np.sum(s), sync, 200)})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.0, help="GPU data size (GiB)")
    ap.add_argument("--mib", type=float, default=256.0, help="CPU data size (MiB)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--baseline", help="a JSON file of known ratios (benchmarks/"
                    "peers_h200.json): rows under %g of theirs are printed" % SLOWER)
    ap.add_argument("--family", choices=("with", "only", "without"), default="with",
                    help="the NumPy family rows (nan*, count_nonzero, ptp)")
    args = ap.parse_args(argv)
    # A stalled row names itself: every thread's stack, every 90 s.
    faulthandler.dump_traceback_later(90, repeat=True)
    dev = gpured.get_device()
    gpu = dev["type"] == "GPU"
    P = Peers(gpu)
    print("gpured peers on %s (%s), %s" % (dev["name"], dev["platform"],
                                          time.strftime("%Y-%m-%d")))
    rows = []
    if args.family != "only":
        rows += gpu_rows(P, args.gib, args.quick) if gpu else cpu_rows(P, args.mib, args.quick)
    if args.family != "without":
        rows += family_rows(P, args.gib * (1 << 30) if gpu else args.mib * (1 << 20),
                            args.quick, gpu)
    print()
    print("| what | gpured ms | best peer ms | ratio | events ms | note |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        peers = {k: v for k, v in r["peers"].items() if v is not None}
        best = min(peers.items(), key=lambda kv: kv[1]) if peers else None
        print("| %s | %.4f | %s | %s | %s | %s |" % (
            r["name"], r["gpured_ms"],
            "-" if best is None else "%s %.4f" % best,
            "-" if r["ratio"] is None else "%.3f" % r["ratio"],
            "-" if r["events_ms"] is None else "%.4f" % r["events_ms"], r["note"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=dev["name"], rows=rows), f, indent=1)
    if args.baseline:
        slower(rows, args.baseline, dev["name"])


# a row slower than this share of its baseline ratio is printed (run to
# run the ratios move +-3%; the float32 scan regression was 0.84)
SLOWER = 0.88


def slower(rows, path, device):
    """Rows whose ratio to the best peer fell under SLOWER of the baseline's
    (a regression: the peers, timed in the same process, stand for the
    machine).  Only printed: benchmarks are not tests."""
    with open(path) as f:
        base = json.load(f)
    if base.get("device") and base["device"] not in device:
        print("baseline %s is for %s, not %s: not compared" % (path, base["device"], device))
        return
    seen = 0
    for r in rows:
        b = base["ratios"].get(r["name"])
        if b is None or r["ratio"] is None:
            continue
        seen += 1
        if r["ratio"] < SLOWER * b:
            print("SLOWER THAN BASELINE: %s: ratio %.3f against %.3f (%s)" % (
                r["name"], r["ratio"], b, path))
    print("baseline %s: %d rows compared" % (path, seen))


if __name__ == "__main__":
    main()
