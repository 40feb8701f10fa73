"""Scan benchmarks (current figures: docs/benchmarks.md; history: docs/journal/BENCHMARKS.md).

    GPURED_DEVICE=nvidia python3 benchmarks/scan_bench.py --gpu
        1 GiB float32 cumsum, device-side input and output, kernel time by
        profiling events, against the device's copy bandwidth (bytes read +
        written) and torch.cumsum / cupy.cumsum timed with CUDA events in the
        same run; a knob sweep; row-wise cumsum of a 4096 x 65536 matrix
        against torch.cumsum(dim=1); the seed's ladder on 256 rows x 65536.
    python3 benchmarks/scan_bench.py --cpu [--n 67108864]
        cumsum of 64 Mi float32, whole call, against numpy.cumsum.
"""
import argparse
import time

import numpy as np

import gpured
from gpured import _core


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def cuda_time(fn, reps=10):
    import torch
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) / 1e3)
    return med(out)


def check(got, a, axis=-1, items=32):
    """gpured's float32 cumsum bound (tests/test_scan.py), items <= 32."""
    ref = np.cumsum(a, axis=axis, dtype=np.float64)
    ax = np.moveaxis(np.abs(a).astype(np.float64), axis, -1)
    mag = np.cumsum(ax, axis=-1)
    n = mag.shape[-1]
    first = np.concatenate([np.zeros(mag.shape[:-1] + (1,)), mag], axis=-1)
    run = mag - first[..., (np.arange(n) // items) * items]
    u = 2.0 ** -24
    bound = (u * np.abs(np.moveaxis(ref, axis, -1)) + items * u * run
             + (4 * u * u + (items + np.log2(n) + 2) * 2.0 ** -53) * mag) * 1.0001
    return bool(np.all(np.abs(np.moveaxis(got, axis, -1) - np.moveaxis(ref, axis, -1)) <= bound))


def gpu(args):
    n = (1 << 30) // 4
    a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    copy = 2 * (1 << 30) / med(_core.copy_bandwidth(1 << 30, 10)[1:])  # GB/s
    print("device:", gpured.get_device()["name"])
    print("copy bandwidth (read + write): %.1f GB/s" % copy)
    rows = []

    def run(label, arr, axis=None, **kw):
        r = gpured.timeit("cumsum", arr, axis=axis, reps=10, **kw)
        good = check(r["result"], arr, -1 if axis is None else axis, r["plan"]["items"])
        p = r["plan"]
        rows.append((label, p["variant"], p["wg_size"], p["items"], r["seconds"] * 1e3,
                     r["gbps"], r["gbps"] / copy * 100, good))
        print("%-28s %-18s wg %4d items %3d  %8.3f ms %8.1f GB/s %5.1f%% copy  ok=%s"
              % rows[-1], flush=True)
        return r

    run("1 GiB f32 auto", a)
    if args.sweep:
        for wg, items in ((128, 32), (256, 16), (256, 32), (512, 16), (512, 32), (1024, 16)):
            try:
                run("1 GiB f32", a, variant="decoupled_lookback", wg_size=wg, items=items)
            except gpured.OpenCLError as e:
                print("wg %d items %d: %s" % (wg, items, e))
        run("1 GiB f32", a, variant="reduce_then_scan")
    try:
        import torch
        x = torch.from_numpy(a).cuda()
        t = cuda_time(lambda: torch.cumsum(x, 0))
        print("torch.cumsum 1 GiB f32: %.3f ms %.1f GB/s" % (t * 1e3, 2 * a.nbytes / t / 1e9))
    except Exception as e:  # pragma: no cover
        print("torch: unavailable (%s)" % e)
    try:
        import cupy
        xc = cupy.asarray(a)
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        cupy.cumsum(xc)
        ts = []
        for _ in range(10):
            s.record()
            cupy.cumsum(xc)
            e.record()
            e.synchronize()
            ts.append(cupy.cuda.get_elapsed_time(s, e) / 1e3)
        t = med(ts)
        print("cupy.cumsum 1 GiB f32: %.3f ms %.1f GB/s" % (t * 1e3, 2 * a.nbytes / t / 1e9))
        del xc
    except Exception as e:  # pragma: no cover
        print("cupy: unavailable (%s)" % e)
    m = a.reshape(4096, 65536)
    run("4096x65536 f32 axis=1", m, axis=1)
    try:
        import torch
        xm = torch.from_numpy(m).cuda()
        t = cuda_time(lambda: torch.cumsum(xm, 1))
        print("torch.cumsum(dim=1) 4096x65536: %.3f ms %.1f GB/s" % (t * 1e3, 2 * m.nbytes / t / 1e9))
        del xm
    except Exception as e:  # pragma: no cover
        print("torch: unavailable (%s)" % e)
    seed = a[: 256 * 65536].reshape(256, 65536)
    for v in gpured.variants("cumsum"):
        if v in ("auto", "row_per_item"):
            continue
        kw = {"groups": 1} if v in ("naive", "blelloch", "workgroup", "subgroup") else {}
        run("seed 256x65536 rows", seed, axis=1, variant=v, **kw)


def cpu(args):
    a = np.random.default_rng(0).random(args.n).astype(np.float32)
    print("device:", gpured.get_device()["name"])
    gpured.cumsum(a)
    g, w = [], []
    for _ in range(5):
        t = time.perf_counter()
        got = gpured.cumsum(a)
        g.append(time.perf_counter() - t)
        t = time.perf_counter()
        want = np.cumsum(a)
        w.append(time.perf_counter() - t)
        del got, want
    r = gpured.timeit("cumsum", a, reps=5)
    print("cumsum %d float32: gpured %.1f ms (device %.1f ms, %s), numpy.cumsum %.1f ms, "
          "ratio %.2fx; ok=%s" % (args.n, med(g) * 1e3, r["seconds"] * 1e3,
                                  r["plan"]["variant"], med(w) * 1e3, med(w) / med(g),
                                  check(r["result"], a)))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--n", type=int, default=1 << 26)
    args = ap.parse_args()
    if args.gpu:
        gpu(args)
    else:
        cpu(args)
