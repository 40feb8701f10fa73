"""gpured.dask.sum over several devices against one device, dask.array and
NumPy.

    python3 benchmarks/dask_bench.py [--gib 4] [--chunk-mib 256]
        [--devices all] [--threads 0] [--reps 5] [--dtype float32]
        [--no-device-resident] [--device-gib G] [--skip-host-peers]
        [--json out.json]

A float32 host array of --gib GiB, chunked along axis 0 in --chunk-mib
chunks (contiguous), is summed by:

  numpy.sum                          the host, one call
  dask.array.sum                     NumPy chunks, threaded scheduler
  gpured.sum (device p)              one plain call per device (no Dask)
  gd.sum devices=[p]                 gpured.dask on one device
  gd.sum all, rate / round_robin     gpured.dask on every listed device
  device-resident, devices=[p]/all   the chunks uploaded first
                                     (gd.to_device(...).persist(), the
                                     upload timed apart), then gd.sum

Times are medians of --reps runs after one warm-up (calibration of the
"rate" policy included in the warm-up); GB/s is the array's bytes over
the time.  The last columns say how many chunks each device reduced
in one run (gpured.dask.stats()) and the result's relative error against a float64
NumPy sum.  --threads sets Dask's num_workers (0: Dask's default, one per
CPU).  On the GPU host gpured.devices() lists the GPU and the host's CPU
device (PoCL): "all" is both; "gpus" every GPU.  --device-gib: the
device-resident cases use the first G GiB only (so one GPU holds them);
--skip-host-peers: no numpy.sum / dask.array.sum rows (a 64 GiB run).
"""
import argparse
import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import dask
import dask.array as da

import gpured
import gpured.dask as gd


def timed(f, reps):
    f()  # warm-up
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), r


def split(runs):
    """Chunks per device in one run (stats cover warm-up + reps)."""
    st = gd.stats()
    return " ".join("d%d:%g" % (p, s["chunks"] / runs) for p, s in st.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--chunk-mib", type=int, default=256)
    ap.add_argument("--devices", default="all",
                    help="'all' or comma-separated positions/name parts")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--no-device-resident", action="store_true")
    ap.add_argument("--device-gib", type=float, default=None)
    ap.add_argument("--skip-host-peers", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    devs = gpured.devices()
    if args.devices == "gpus":
        pos = tuple(i for i, d in enumerate(devs) if d["type"] == "GPU")
    else:
        pos = gd._resolve(args.devices if args.devices == "all" else
                          [int(d) if d.isdigit() else d
                           for d in args.devices.split(",")])
    for p in pos:
        print("device %d: %s | %s (%s)" % (p, devs[p]["name"],
                                           devs[p]["platform"], devs[p]["type"]))
    dt = np.dtype(args.dtype)
    n = int(args.gib * (1 << 30)) // dt.itemsize
    per = max(args.chunk_mib * (1 << 20) // dt.itemsize, 1)
    cols = 1024
    rows_n = max(n // cols, 1)
    t = time.perf_counter()
    a = np.empty((rows_n, cols), dt)
    step = max(per // cols, 1)

    def fill(i):  # cheap, non-constant values (threads: NumPy drops the GIL)
        a[i:i + step] = (np.arange(i, min(i + step, rows_n))[:, None] % 97
                         + np.arange(cols) % 7).astype(dt) / 8
    with ThreadPoolExecutor(16) as ex:
        list(ex.map(fill, range(0, rows_n, step)))
    print("array: %s %s, %.2f GiB, chunks of %d rows (%.0f MiB), made in "
          "%.1f s" % (a.shape, dt, a.nbytes / 2**30, step,
                      step * cols * dt.itemsize / 2**20,
                      time.perf_counter() - t))
    x = da.from_array(a, chunks=(step, cols))
    print("%d chunks; Dask threads: %s" % (x.npartitions,
                                           args.threads or "default"))
    exact = float(np.sum(a, dtype=np.float64))
    cfg = {"scheduler": "threads"}
    if args.threads:
        cfg["num_workers"] = args.threads
    rows = []

    def run(name, f, stats=True, arr=a, want=exact):
        gd.reset_stats()
        with dask.config.set(cfg):
            sec, r = timed(f, args.reps)
        err = abs(float(r) - want) / max(abs(want), 1e-300)
        row = {"case": name, "seconds": sec, "gbps": arr.nbytes / sec / 1e9,
               "chunks": split(args.reps + 1) if stats else "", "rel_err": err}
        rows.append(row)
        print("  %-38s %9.2f ms %8.2f GB/s  %-16s err %.1e"
              % (name, sec * 1e3, row["gbps"], row["chunks"], err), flush=True)

    if not args.skip_host_peers:
        run("numpy.sum", lambda: np.sum(a), False)
        run("dask.array.sum (NumPy chunks)", lambda: da.sum(x).compute(), False)
    for p in pos:
        run("gpured.sum, device %d (no Dask)" % p,
            lambda p=p: gpured.sum(a, device=p), False)
    for p in pos:
        run("gd.sum devices=[%d]" % p,
            lambda p=p: gd.sum(x, devices=[p]).compute())
    if len(pos) > 1:
        for policy in ("rate", "round_robin"):
            run("gd.sum all, %s" % policy,
                lambda policy=policy: gd.sum(x, devices=list(pos),
                                             policy=policy).compute())
        print("  host rates (GB/s): %s" % ", ".join(
            "d%d %.1f" % (p, r / 1e9) for p, r in
            gd.calibrate(list(pos)).items()))

    if not args.no_device_resident:
        cases = [[p] for p in pos] + ([list(pos)] if len(pos) > 1 else [])
        ad, xs = a, x
        if args.device_gib:
            ad = a[:max(int(args.device_gib * (1 << 30)) // dt.itemsize // cols, 1)]
            xs = da.from_array(ad, chunks=(step, cols))
        dexact = float(np.sum(ad, dtype=np.float64)) if ad is not a else exact
        for c in cases:
            t = time.perf_counter()
            with dask.config.set(cfg):
                xd = gd.to_device(xs, devices=c).persist()
                for q in c:
                    gpured.synchronize(q)
            up = time.perf_counter() - t
            name = "device-resident, devices=%s" % (
                c if len(c) == 1 else "all (rate)")
            print("  upload for %s: %.2f s (%.2f GB/s, %.1f GiB)"
                  % (name, up, ad.nbytes / up / 1e9, ad.nbytes / 2**30))
            run(name, lambda xd=xd: gd.sum(xd).compute(), arr=ad, want=dexact)
            del xd

    print("\n| case | ms | GB/s | x numpy | chunks per device |")
    print("|---|---:|---:|---:|---|")
    base = rows[0]["seconds"] if not args.skip_host_peers else float("nan")
    for r in rows:
        print("| %s | %.2f | %.1f | %.2f | %s |" % (
            r["case"], r["seconds"] * 1e3, r["gbps"], base / r["seconds"],
            r["chunks"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gib": args.gib, "chunk_mib": args.chunk_mib,
                       "devices": [devs[p]["name"] for p in pos],
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
