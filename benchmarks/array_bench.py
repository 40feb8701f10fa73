"""Device arrays and the pipelined host path: end-to-end and per-call times.

    python3 benchmarks/array_bench.py [--size-mib 1024] [--huge-gib 0]

Prints, for the current device (GPURED_DEVICE):
  * end to end: gpured.sum of a float32 NumPy array (host memory in, Python
    scalar out) through the staged pipeline, the same through the plain
    pageable path, and numpy.sum, medians of several runs;
  * the staging knobs (chunk size, memcpy threads) around the defaults;
  * to_device of the same array (upload rate);
  * device-resident sum (kernel time by events) against the device copy;
  * per-call overhead for a 1 KiB array: device-resident calls (enqueue
    only; and with .get()), host-array calls, and numpy.sum;
  * optionally (--huge-gib N) the sum of an N GiB host array, larger than
    the device's memory if N is.
A short table comes last.
"""
import argparse
import statistics
import time

import numpy as np

import gpured
from gpured import _core


def med(f, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def per_call(f, n):
    for _ in range(min(n, 500)):
        f()
    gpured.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        f()
    gpured.synchronize()
    return (time.perf_counter() - t) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--huge-gib", type=float, default=0)
    ap.add_argument("--huge-scan-gib", type=float, default=0)
    ap.add_argument("--sweep", action="store_true")
    args = ap.parse_args()
    dev = gpured.get_device()
    print("device:", dev["name"], "|", dev["platform"])
    rows = []
    n = args.size_mib * (1 << 20) // 4
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    ref = a.sum(dtype=np.float64)

    # End to end, host memory in, scalar out.
    r = gpured.sum(a)
    assert abs(float(r) - ref) <= 1e-6 * abs(ref), (r, ref)
    t_np = med(lambda: np.sum(a), args.reps)
    t_gr = med(lambda: gpured.sum(a), args.reps)
    st = gpured.staging()
    old = gpured.set_staging(min_bytes=1 << 62)  # the plain pageable path
    t_plain = med(lambda: gpured.sum(a), max(2, args.reps // 2))
    gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes",
                                              "force", "threads")})
    mib = args.size_mib
    rows.append(("e2e sum %d MiB f32: numpy.sum" % mib, t_np * 1e3, "ms", ""))
    how = ("staged, %d MiB x %d" % (st["chunk_bytes"] >> 20, st["buffers"])
           if dev["type"] == "GPU" else "NumPy memory in place")
    rows.append(("e2e sum: gpured (%s)" % how,
                 t_gr * 1e3, "ms", "%.2fx numpy" % (t_np / t_gr)))
    rows.append(("e2e sum: gpured (pageable path)", t_plain * 1e3, "ms",
                 "%.2fx numpy" % (t_np / t_plain)))
    print("e2e: numpy %.1f ms, staged %.1f ms (%.1f GB/s), pageable %.1f ms"
          % (t_np * 1e3, t_gr * 1e3, a.nbytes / t_gr / 1e9, t_plain * 1e3), flush=True)

    if args.sweep:
        for chunk in (8, 16, 32, 64):
            for threads in (2, 4, 8, 16):
                gpured.set_staging(chunk_bytes=chunk << 20, threads=threads,
                                   buffers=4)
                t = med(lambda: gpured.sum(a), 3)
                print("  sweep chunk %2d MiB threads %2d: %.1f ms (%.1f GB/s)"
                      % (chunk, threads, t * 1e3, a.nbytes / t / 1e9), flush=True)
        gpured.set_staging(**{k: old[k] for k in ("chunk_bytes", "buffers", "min_bytes",
                                                  "force", "threads")})

    # End-to-end cumsum (host in, host out), streamed both ways on GPUs.
    c = gpured.cumsum(a)
    step = max(1, n // 4096)
    np.testing.assert_allclose(c[::step], np.cumsum(a, dtype=np.float64)[::step], rtol=1e-5)
    del c
    t_npc = med(lambda: np.cumsum(a), max(2, args.reps // 2))
    t_grc = med(lambda: gpured.cumsum(a), max(2, args.reps // 2))
    rows.append(("e2e cumsum %d MiB f32: numpy.cumsum" % mib, t_npc * 1e3, "ms", ""))
    rows.append(("e2e cumsum: gpured (%s)" % ("streamed both ways" if dev["type"] == "GPU"
                                              else "NumPy memory in place"), t_grc * 1e3, "ms",
                 "%.2fx numpy" % (t_npc / t_grc)))

    # Upload, and device-resident reductions.
    t_up = med(lambda: gpured.to_device(a).release(), 3)
    rows.append(("to_device %d MiB" % mib, t_up * 1e3, "ms", "%.1f GB/s" % (a.nbytes / t_up / 1e9)))
    d = gpured.to_device(a)
    np.testing.assert_array_equal(d[-1000:].get(), a[-1000:])
    t = gpured.timeit("sum", d, reps=10)
    copy = min(_core.copy_bandwidth(a.nbytes, 5)) / 1e9
    gbps = a.nbytes / t["seconds"] / 1e9
    assert abs(float(t["result"].get()[0]) - ref) <= 1e-6 * abs(ref)
    rows.append(("device-resident sum %d MiB (events)" % mib, t["seconds"] * 1e3, "ms",
                 "%.0f GB/s = %.0f%% of copy" % (gbps, 100 * gbps / (2 * a.nbytes / copy / 1e9))))
    d.release()

    # Per-call overhead, 1 KiB.
    small = np.ones(256, np.float32)
    ds = gpured.to_device(small)
    assert gpured.sum(ds).get() == 256
    oc = [("per call 1 KiB: device array, enqueued", lambda: gpured.sum(ds)),
          ("per call 1 KiB: device array + .get()", lambda: gpured.sum(ds).get()),
          ("per call 1 KiB: NumPy array in, scalar out", lambda: gpured.sum(small)),
          ("per call 1 KiB: numpy.sum", lambda: np.sum(small))]
    nov = np._NoValue
    oc += [("  of which _core.reduce (C, enqueue)",
            lambda: _core.reduce("sum", ds, None, None, None, False, nov, None)),
           ("  of which a result buffer", lambda: _core.buffer_alloc(4))]
    for name, f in oc:
        rows.append((name, per_call(f, args.calls) * 1e6, "us", ""))

    if args.huge_gib:
        nh = int(args.huge_gib * (1 << 30)) // 4
        print("huge: filling %.1f GiB on the host ..." % args.huge_gib, flush=True)
        h = np.empty(nh, np.float32)
        h[: 1 << 24] = 1.0
        for i in range(1 << 24, nh, 1 << 24):
            h[i:i + (1 << 24)] = h[: min(1 << 24, nh - i)]
        t0 = time.perf_counter()
        r = gpured.sum(h)
        th = time.perf_counter() - t0
        assert float(r) == float(nh), (r, nh)
        rows.append(("e2e sum %.1f GiB (device memory %.1f GiB)"
                     % (args.huge_gib, dev["global_mem_size"] / 2**30), th * 1e3, "ms",
                     "%.1f GB/s, exact" % (h.nbytes / th / 1e9)))
        del h

    if args.huge_scan_gib:
        nh = int(args.huge_scan_gib * (1 << 30)) // 4
        h = np.ones(nh, np.float32)
        t0 = time.perf_counter()
        r = gpured.cumsum(h)
        th = time.perf_counter() - t0
        idx = np.array([0, 1 << 24, (1 << 24) + 1, nh // 2, nh - 1])
        np.testing.assert_allclose(r[idx], (idx + 1).astype(np.float64), rtol=1e-6)
        rows.append(("e2e cumsum %.1f GiB (largest buffer %.1f GiB)"
                     % (args.huge_scan_gib, dev["max_alloc_size"] / 2**30), th * 1e3, "ms",
                     "%.1f GB/s in+out" % (2 * h.nbytes / th / 1e9)))
        del h, r

    print("\n%-52s %12s" % ("what", "time"))
    for name, v, unit, note in rows:
        print("%-52s %9.3f %-2s %s" % (name, v, unit, note))


if __name__ == "__main__":
    main()
