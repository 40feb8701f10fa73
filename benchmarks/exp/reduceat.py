"""reduceat (segments by offsets) against the same-size sum (issue 16:
within 10% of it) and the peers that have it: cupy's ufunc.reduceat where
it exists, torch.segment_reduce (offsets) — device-resident data, wall
clock of loops of calls (one sync at the end), and kernel events.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/reduceat.py [MiB]
"""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 64
dev = gpured.get_device()
print("%s, %g MiB" % (dev["name"], mib), flush=True)
try:
    import torch
    tdev = "cuda" if torch.cuda.is_available() else "cpu"
except Exception:  # noqa: BLE001
    torch = None
try:
    import cupy as cp
except Exception:  # noqa: BLE001
    cp = None

rng = np.random.default_rng(0)
for dt in (np.float32, np.float64, np.int32):
    if dt == np.float64 and not dev["fp64"]:
        continue
    n = int(mib * 2**20) // np.dtype(dt).itemsize
    a = (rng.standard_normal(n) * 100).astype(dt)
    d = gpured.to_device(a)
    ws = loop_ms(lambda: gpured.sum(d), gpured.synchronize, 10)
    print("%-8s sum: wall %.3f ms" % (np.dtype(dt).name, ws), flush=True)
    ta = torch.from_numpy(a).to(tdev) if torch is not None else None
    ca = cp.asarray(a) if cp is not None else None
    for avg in (n // 16, 1 << 16, 4096, 1024, 256, 128, 32, 8):
        S = max(1, n // avg)
        idx = np.sort(rng.choice(n, S, replace=False))
        idx[0] = 0
        ref = np.add.reduceat(a.astype(np.float64), idx)
        got = gpured.reduceat(d, idx).get()
        err = np.max(np.abs(got - ref) / (np.abs(ref) + 1e-30 * 0 + 1)) if dt != np.int32 \
            else int(np.max(np.abs(got.astype(np.int64) - np.add.reduceat(a, idx))))
        di = gpured.to_device(idx)
        w = loop_ms(lambda: gpured.reduceat(d, di), gpured.synchronize, 10)
        wh = loop_ms(lambda: gpured.reduceat(d, idx), gpured.synchronize, 3, 3)
        ev = gpured.timeit("reduceat", d, indices=di, reps=5)
        plan = ev["plan"]
        peer = []
        if ta is not None and dt != np.int32:
            try:
                lengths = torch.from_numpy(np.diff(np.append(idx, n))).to(tdev)
                offs = torch.from_numpy(np.append(idx, n)).to(tdev)
                f = lambda: torch.segment_reduce(ta, "sum", offsets=offs)  # noqa: E731
                sync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)
                peer.append(("torch.segment_reduce", loop_ms(f, sync, 10)))
            except Exception as e:  # noqa: BLE001
                print("  torch.segment_reduce: %s" % str(e)[:80])
        if ca is not None:
            try:
                ci = cp.asarray(idx)
                f = lambda: cp.add.reduceat(ca, ci)  # noqa: E731
                peer.append(("cupy add.reduceat", loop_ms(
                    f, cp.cuda.Device().synchronize, 10)))
            except Exception as e:  # noqa: BLE001
                print("  cupy add.reduceat: %s" % str(e)[:80])
        # NumPy arrays in and out: gpured (placement auto) vs NumPy's own
        tn = loop_ms(lambda: np.add.reduceat(a, idx), lambda: None, 2, 3)
        th = loop_ms(lambda: gpured.reduceat(a, idx), lambda: None, 2, 3)
        peer.append(("| numpy in: numpy", tn))
        peer.append(("gpured", th))
        ps = "  ".join("%s %.3f ms (%.2fx)" % (nm, t, t / w) for nm, t in peer)
        print("%-8s avg %9d  S %9d  %-18s wg %4d groups %4d  wall %.3f ms  events %.3f ms  "
              "sum/reduceat %.3f  (host offsets %.3f ms)  err %.1e  %s" % (
                  np.dtype(dt).name, avg, S, plan["variant"], plan["wg_size"],
                  plan["groups"], w, ev["seconds"] * 1e3, ws / w, wh, err, ps), flush=True)
    del d
