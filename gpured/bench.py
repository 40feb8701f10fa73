"""``python -m gpured.bench``: time gpured's reductions on the current device
(``GPURED_DEVICE`` picks it) beside NumPy, and torch / CuPy where importable.

For every (op, dtype, n) it prints: the variant auto chose, the device time
of the kernels (profiling events, median of --reps runs after a warm-up,
input already on the device), the bandwidth that implies (bytes read / time),
the end-to-end time of ``gpured.<op>(numpy_array)`` (host memory in, NumPy
scalar out), NumPy's time on the same array and the ratio, plus the device's
own copy bandwidth (clEnqueueCopyBuffer, bytes read + written).

Examples:
    python -m gpured.bench                         # defaults for the device
    python -m gpured.bench --ops sum,min,max --dtypes float32,float64,int32 \
        --sizes 1GiB
    python -m gpured.bench --variants all --sizes 16MiB
"""
import argparse
import statistics
import sys
import time

import numpy as np

import gpured
from gpured import _core
from gpured._tune import _bar

_UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def parse_size(s):
    for u, m in _UNITS.items():
        if s.endswith(u):
            return int(float(s[:-len(u)]) * m)
    return int(s)


def fmt_size(nbytes):
    for u in ("GiB", "MiB", "KiB"):
        if nbytes >= _UNITS[u] and nbytes % _UNITS[u] == 0:
            return "%d%s" % (nbytes // _UNITS[u], u)
    return "%dB" % nbytes


def median_time(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def make_array(dtype, n, rng):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(n, dtype=np.float32).astype(dt, copy=False)
    if dt.kind == "b":
        return rng.integers(0, 2, n, dtype=np.uint8).astype(bool)
    return rng.integers(0, 100, n, dtype=np.uint8).astype(dt)


class Peers:
    """torch / CuPy on the same data, device-side, timed with CUDA events."""

    def __init__(self, enabled):
        self.torch = self.cupy = None
        if not enabled:
            return
        try:
            import torch
            if torch.cuda.is_available():
                self.torch = torch
        except Exception:
            pass
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
            self.cupy = cupy
        except Exception:
            pass

    def _time_cuda(self, fn, reps, sync, event):
        fn()
        sync()
        ts = []
        for _ in range(reps):
            s, e = event(), event()
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e) if hasattr(s, "elapsed_time")
                      else 0.0)
        return statistics.median(ts) / 1e3

    def torch_time(self, op, a, reps):
        if self.torch is None:
            return None
        t = self.torch
        x = t.from_numpy(a).cuda()
        f = {"sum": t.sum, "prod": t.prod, "min": t.amin, "max": t.amax,
             "all": t.all, "any": t.any, "argmin": t.argmin,
             "argmax": t.argmax, "mean": t.mean}.get(op)
        if f is None or (op == "mean" and a.dtype.kind != "f"):
            return None
        try:
            return self._time_cuda(lambda: f(x), reps, t.cuda.synchronize,
                                   lambda: t.cuda.Event(enable_timing=True))
        except Exception:
            return None
        finally:
            del x

    def cupy_time(self, op, a, reps):
        if self.cupy is None:
            return None
        cp = self.cupy
        x = cp.asarray(a)
        f = getattr(cp, op, None)
        try:
            f(x)
            cp.cuda.Device().synchronize()
            ts = []
            for _ in range(reps):
                s, e = cp.cuda.Event(), cp.cuda.Event()
                s.record()
                f(x)
                e.record()
                e.synchronize()
                ts.append(cp.cuda.get_elapsed_time(s, e))
            return statistics.median(ts) / 1e3
        except Exception:
            return None
        finally:
            del x


def run(args):
    dev = gpured.get_device()
    rng = np.random.default_rng(0)
    peers = Peers(not args.no_peers)
    rows = []
    copy_gbs = None
    if args.copy:
        nb = min(parse_size(args.copy), int(dev["max_alloc_size"]) // 2)
        ns = _core.copy_bandwidth(nb, args.reps)
        copy_gbs = 2 * nb / statistics.median(ns)  # bytes per ns = GB/s

    def op_variants(op):
        return (["auto"] if args.variants == "auto" else
                [v for v in gpured.variants(op)]
                if args.variants == "all" else args.variants.split(","))

    dtypes = [np.dtype(d) for d in args.dtypes.split(",")]
    dtypes = [dt for dt in dtypes if not (dt.kind == "f" and dt.itemsize == 8
                                          and not dev["fp64"])]
    bar = _bar(len(args.sizes.split(",")) * len(dtypes) *
               sum(len(op_variants(op)) for op in args.ops.split(",")),
               "gpured.bench", None if getattr(args, "progress", True) else False)
    say = bar.write if bar is not None else (lambda s: print(s, flush=True))
    for size in args.sizes.split(","):
        nbytes = parse_size(size)
        for dt in dtypes:
            n = nbytes // dt.itemsize
            a = make_array(dt, n, rng)
            for op in args.ops.split(","):
                variants = op_variants(op)
                want = getattr(np, op)(a)
                t_np = median_time(lambda: getattr(np, op)(a), max(3, args.reps // 4))
                t_torch = peers.torch_time(op, a, args.reps)
                t_cupy = peers.cupy_time(op, a, args.reps)
                for v in variants:
                    r = gpured.timeit(op, a, reps=args.reps, variant=v)
                    plan = r["plan"]
                    t_dev = r["seconds"]
                    got = getattr(gpured, op)(a, variant=v)
                    ok = (np.allclose(got, want, rtol=1e-4) if dt.kind == "f"
                          and op in ("sum", "mean", "prod") else
                          np.array_equal(got, want))
                    t_e2e = median_time(lambda: getattr(gpured, op)(a, variant=v),
                                        max(3, args.reps // 4))
                    rows.append(dict(op=op, dtype=dt.name, n=n, size=fmt_size(nbytes),
                                     variant=plan["variant"], requested=v,
                                     dev_ms=t_dev * 1e3, gbs=nbytes / t_dev / 1e9,
                                     e2e_ms=t_e2e * 1e3, np_ms=t_np * 1e3,
                                     torch_ms=None if t_torch is None else t_torch * 1e3,
                                     cupy_ms=None if t_cupy is None else t_cupy * 1e3,
                                     ok=ok))
                    say("  %-6s %-8s %-7s %-16s dev %9.3f ms %8.1f GB/s  e2e %9.3f ms"
                        "  numpy %9.3f ms  %s" % (op, dt.name, fmt_size(nbytes),
                                                  plan["variant"], t_dev * 1e3,
                                                  nbytes / t_dev / 1e9, t_e2e * 1e3,
                                                  t_np * 1e3, "ok" if ok else "WRONG"))
                    if bar is not None:
                        bar.update(1)
    if bar is not None:
        bar.close()
    return dev, rows, copy_gbs


def table(dev, rows, copy_gbs):
    out = ["", "gpured.bench on %s (%s, %s)" % (dev["name"], dev["platform"], dev["type"])]
    if copy_gbs:
        out.append("device copy bandwidth (read+write): %.1f GB/s" % copy_gbs)
    hdr = ("op", "dtype", "size", "variant", "dev ms", "GB/s", "%copy", "e2e ms",
           "numpy ms", "np/e2e", "torch ms", "cupy ms", "ok")
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "---|" * len(hdr))
    for r in rows:
        pct = "%.0f%%" % (100 * r["gbs"] / copy_gbs) if copy_gbs else "-"
        out.append("| " + " | ".join([
            r["op"], r["dtype"], r["size"], r["variant"], "%.3f" % r["dev_ms"],
            "%.1f" % r["gbs"], pct, "%.3f" % r["e2e_ms"], "%.3f" % r["np_ms"],
            "%.2f" % (r["np_ms"] / r["e2e_ms"]),
            "-" if r["torch_ms"] is None else "%.3f" % r["torch_ms"],
            "-" if r["cupy_ms"] is None else "%.3f" % r["cupy_ms"],
            "yes" if r["ok"] else "NO"]) + " |")
    return "\n".join(out)


def main(argv=None):
    dev = gpured.get_device()
    gpu = dev["type"] == "GPU"
    p = argparse.ArgumentParser(prog="python -m gpured.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", default="sum")
    p.add_argument("--dtypes", default="float32")
    p.add_argument("--sizes", default="1GiB" if gpu else "1MiB,16MiB,256MiB")
    p.add_argument("--variants", default="auto",
                   help="auto, all, or a comma-separated list")
    p.add_argument("--reps", type=int, default=20 if gpu else 8)
    p.add_argument("--copy", default="1GiB" if gpu else "256MiB",
                   help="size for the copy-bandwidth reference ('' to skip)")
    p.add_argument("--no-peers", action="store_true", help="skip torch/CuPy")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bar (shown when tqdm is installed)")
    args = p.parse_args(argv)
    dev, rows, copy_gbs = run(args)
    print(table(dev, rows, copy_gbs))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
