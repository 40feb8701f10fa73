"""Issue 43's multi-GPU rows: gpured.dask.sum over one and every GPU,
device-resident and host-resident, beside CuPy with one stream per GPU.

    python3 benchmarks/multi_gpu.py [--gib 16] [--chunks-mib 256,1024,4096]
        [--host-gib 16] [--devices gpus|all|P,Q] [--reps 5]
    bash benchmarks/gpu_run.sh exp benchmarks/multi_gpu.py   (the H200s:
        kind nvidia-h200-x2)

Rows (ms, median of --reps after a warm-up; GB/s over the array's bytes):
  plain, GPU p        one gpured.sum per chunk on GPU p, one synchronize
                      (no Dask: the kernels' floor on that GPU)
  gd one GPU          gd.sum(x).compute(), every chunk on the first GPU
  gd all GPUs         gd.sum(x).compute(), the chunks spread over the GPUs
                      by gd.to_device's policy, reduced where they live
  cupy one / all      cupy: each GPU's chunks summed on its own stream
                      (cupy.cuda.Stream per device), partials added on
                      the host after one synchronize per device
  host-resident       gd.sum of a NumPy-backed Dask array (the chunks
                      uploaded by gpured while the other GPU sums)
The last column is the speed-up of all GPUs over one (target >= 1.9).
On a machine without GPUs, --devices all takes every OpenCL device
(two PoCL devices: POCL_DEVICES="pthread pthread").
"""
import argparse
import os
import sys

import numpy as np
import dask.array as da

import gpured
import gpured.dask as gd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "exp"))
from _loop import call_ms as med  # noqa: E402  (one call, then the median)

try:
    import cupy as cp
except ImportError:  # the GPU host has it
    cp = None


def pick(spec):
    devs = gpured.devices()
    if spec in ("gpus", "all"):
        return [i for i, d in enumerate(devs) if spec == "all" or d["type"] == "GPU"]
    return [int(x) for x in spec.split(",")]


def plain(parts, pos):
    mine = [c for c in parts if c.device_index == pos]

    def run():
        for c in mine:
            gpured.sum(c, dtype=np.float64)
        gpured.synchronize(pos)
    return run


def cupy_sum(blocks, ngpu):
    """CuPy over ngpu GPUs: block i on GPU i % ngpu, one stream each."""
    held, streams = [], []
    for g in range(ngpu):
        with cp.cuda.Device(g):
            streams.append(cp.cuda.Stream(non_blocking=True))
    for i, b in enumerate(blocks):
        with cp.cuda.Device(i % ngpu):
            held.append(cp.asarray(b))
    for g in range(ngpu):  # the uploads ran on the legacy stream, which a
        cp.cuda.Device(g).synchronize()  # non-blocking stream does not wait for

    def run():
        parts = []
        for i, b in enumerate(held):
            g = i % ngpu
            with cp.cuda.Device(g), streams[g]:
                parts.append(b.sum(dtype=np.float64))  # gd's partials' dtype
        for g in range(ngpu):
            streams[g].synchronize()
        return float(sum(float(p) for p in parts))
    return run, held


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=16)
    ap.add_argument("--chunks-mib", default="256,1024,4096")
    ap.add_argument("--host-gib", type=float, default=16)
    ap.add_argument("--devices", default="gpus")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    pos = pick(a.devices)
    names = [gpured.devices()[p]["name"] for p in pos]
    print("devices:", ", ".join("%d %s" % pn for pn in zip(pos, names)), flush=True)
    n = int(a.gib * (1 << 30)) // 4
    host = np.ones(n, np.float32)
    nbytes = host.nbytes
    rows = []

    def row(what, ms, one=None):
        gbs = nbytes / ms / 1e6
        rows.append((what, ms, gbs, one / ms if one else None))
        print("%-40s %9.3f ms %8.1f GB/s %s" % (
            what, ms, gbs, "" if one is None else "x%.2f" % (one / ms)), flush=True)

    for cm in [float(c) for c in a.chunks_mib.split(",")]:
        step = int(cm * (1 << 20)) // 4
        x1 = gd.to_device(da.from_array(host, chunks=step), devices=[pos[0]]).persist()
        gpured.synchronize()
        parts = [b for b in x1.__dask_graph__().values() if isinstance(b, gpured.Array)]
        t_plain = med(plain(parts, pos[0]), a.reps)
        row("plain, GPU %d, %g MiB chunks" % (pos[0], cm), t_plain)
        t1 = med(lambda: gd.sum(x1).compute(), a.reps)
        row("gd one GPU, %g MiB chunks" % cm, t1)
        assert float(gd.sum(x1).compute()) == n
        del x1, parts
        gpured.empty_cache()
        if len(pos) > 1:
            xa = gd.to_device(da.from_array(host, chunks=step), devices=pos).persist()
            gpured.synchronize()
            ta = med(lambda: gd.sum(xa).compute(), a.reps)
            row("gd %d GPUs, %g MiB chunks" % (len(pos), cm), ta, t1)
            assert float(gd.sum(xa).compute()) == n
            del xa
            gpured.empty_cache()
        if cp is not None:
            blocks = [host[i:i + step] for i in range(0, n, step)]
            r1, held = cupy_sum(blocks, 1)
            c1 = med(r1, a.reps)
            row("cupy one GPU, %g MiB chunks" % cm, c1)
            del held, r1
            if len(pos) > 1:
                ra, held = cupy_sum(blocks, len(pos))
                ca = med(ra, a.reps)
                row("cupy %d GPUs, %g MiB chunks" % (len(pos), cm), ca, c1)
                del held, ra
            cp.get_default_memory_pool().free_all_blocks()
    if a.host_gib > 0:
        m = int(a.host_gib * (1 << 30)) // 4
        h = host[:m] if m <= n else np.ones(m, np.float32)
        xh = da.from_array(h, chunks=(1 << 30) // 4)
        th1 = med(lambda: gd.sum(xh, devices=[pos[0]]).compute(), a.reps)
        row("host-resident %g GiB, one GPU" % a.host_gib, th1)
        if len(pos) > 1:
            tha = med(lambda: gd.sum(xh, devices=pos).compute(), a.reps)
            row("host-resident %g GiB, %d GPUs" % (a.host_gib, len(pos)), tha, th1)
    print("\n| what | ms | GB/s | x one |\n|---|---|---|---|")
    for what, ms, gbs, sp in rows:
        print("| %s | %.3f | %.1f | %s |" % (what, ms, gbs, "" if sp is None else "%.2f" % sp))


if __name__ == "__main__":
    main()
