"""Host path (issue 12): time per call of gr_host_reduce / gr_host_scan
called from C, against numpy and today's gpured on the current device.

    python3 setup.py -q build_ext --inplace
    python3 benchmarks/host_path.py                      # the whole table
    python3 benchmarks/host_path.py --sizes 1K,64K --families sum,max

Families: sum, max, argmax, cumsum of a 1-D array; colsum: a C-ordered
L x M matrix summed over axis 0 (M = 2**ceil(log2(n)/2) columns, the host
path's column layout: seg_stride 1, elem_stride M).  Values uniform in
[-1, 1).  Each case is timed back to back in the three ways (the machine
may be shared): the host path by benchmarks/host_path.c, a C program that
links gpured/_core*.so itself and calls it in a tight loop; numpy.sum & co.
and gpured.sum & co. with timeit.  Each time is the fastest of `--reps`
batches of at least `--batch-ms` per call, in microseconds.
"""
import argparse
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
import gpured  # noqa: E402

SIZES = {"1K": 1 << 10, "4K": 1 << 12, "64K": 1 << 16, "256K": 1 << 18,
         "1M": 1 << 20, "2M": 1 << 21, "4M": 1 << 22, "8M": 1 << 23,
         "16M": 1 << 24, "256M": 1 << 28}
DEFAULT_SIZES = "1K,4K,64K,1M,16M,256M"
FAMILIES = ["sum", "max", "argmax", "cumsum", "colsum"]


def build(exe):
    core = gpured._core.__file__
    inc = sysconfig.get_paths()["include"]
    libdir = sysconfig.get_config_var("LIBDIR")
    ver = sysconfig.get_config_var("LDVERSION")
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-D_POSIX_C_SOURCE=200809L",
           "-I", os.path.join(ROOT, "csrc"), "-I", inc,
           os.path.join(HERE, "host_path.c"), "-o", exe, core,
           "-L" + libdir, "-lpython" + ver, "-Wl,-rpath," + libdir]
    subprocess.run(cmd, check=True)


def host_us(exe, fam, dt, nbytes, batch_ms, reps):
    out = subprocess.run([exe, str(batch_ms), str(reps), fam, dt, str(nbytes)],
                         check=True, capture_output=True, text=True).stdout
    f = out.split()
    return float(f[3]) / 1e3


def columns(n):
    M = 1 << ((n.bit_length() - 1 + 1) // 2)
    return n // M, M


def calls(mod, fam, x):
    """The family as a no-argument callable on numpy or gpured."""
    if fam == "sum":
        return lambda: mod.sum(x)
    if fam == "max":
        return lambda: mod.max(x)
    if fam == "argmax":
        return lambda: mod.argmax(x)
    if fam == "cumsum":
        return lambda: mod.cumsum(x)
    L, M = columns(x.size)
    X = x.reshape(L, M)
    return lambda: mod.sum(X, axis=0)


def py_us(f, batch_ms, reps):
    f()  # warm-up (first gpured calls build or load kernels)
    t = timeit.Timer(f)
    number = 1
    while True:
        dt = t.timeit(number)
        if dt * 1e3 >= batch_ms or number >= 1 << 20:
            break
        number = max(number * 2, int(number * batch_ms / 1e3 / max(dt, 1e-9)))
    best = dt / number
    for _ in range(reps - 1):
        best = min(best, t.timeit(number) / number)
    return best * 1e6


def fmt(us):
    return "%.3g" % us if us < 100 else "%.0f" % us


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=DEFAULT_SIZES,
                    help="any of " + ",".join(SIZES))
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--batch-ms", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-gpured", action="store_true")
    args = ap.parse_args()
    exe = os.path.join(tempfile.mkdtemp(prefix="gpured_host_"), "host_path")
    build(exe)
    dev = gpured.get_device()
    print("# %s, %d CPUs, numpy %s, gpured device: %s (%s)"
          % (platform.processor() or platform.machine(), os.cpu_count(),
             np.__version__, dev.get("name"), dev.get("platform", "")))
    print("# load average at start: %s" % open("/proc/loadavg").read().split()[:3])
    one = np.zeros(1, np.float32)
    print("# numpy per-call floor: np.sum of 1 element %.2f us"
          % py_us(lambda: np.sum(one), args.batch_ms, args.reps))
    print()
    print("| family | dtype | size | host C (us) | numpy (us) | gpured (us) "
          "| numpy / host | gpured / host |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(12)
    for dt in args.dtypes.split(","):
        for fam in args.families.split(","):
            for sname in args.sizes.split(","):
                nbytes = SIZES[sname]
                n = nbytes // np.dtype(dt).itemsize
                x = (rng.random(n) * 2 - 1).astype(dt)
                h = host_us(exe, fam, dt, nbytes, args.batch_ms, args.reps)
                nu = py_us(calls(np, fam, x), args.batch_ms, args.reps)
                gu = (float("nan") if args.no_gpured else
                      py_us(calls(gpured, fam, x), args.batch_ms, args.reps))
                print("| %s | %s | %s | %s | %s | %s | %.2f | %.1f |"
                      % (fam, dt, sname, fmt(h), fmt(nu), fmt(gu), nu / h,
                         gu / h), flush=True)
                del x
    print()
    print("# load average at end: %s" % open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    main()
