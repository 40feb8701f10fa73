"""Deterministic sum_by_key on unsorted keys (GPUs: fixed_point's exact
integer sums; variant lookback: the device radix sort, then the sorted
keys' runs) against the non-deterministic call (atomics) and
torch.index_add_ — issue 15: "deterministic sum_by_key on random keys
within 3x of the non-deterministic time".  Device-resident keys and values,
wall clock of loops of calls synchronised once (median of loops), kernel
events from timeit_by_key beside.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/bykey_sort.py [N_MI] [KEYS_MI] [sweep]

"radix+lookback" is the deterministic call with variant="lookback" (the
radix sort, then one pass over the sorted runs), timed in the same process.

With "sweep", the deterministic call on random float64 keys is also timed
at other (wg_size, items) geometries (they reach the sort and the
segments kernels both).
"""
import os
import sys

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms  # noqa: E402

n = int(float(sys.argv[1] if len(sys.argv) > 1 else 10) * 2**20)
nk = int(float(sys.argv[2] if len(sys.argv) > 2 else 1) * 2**20)
dev = gpured.get_device()
print("%s: %d values into %d keys" % (dev["name"], n, nk), flush=True)
try:
    import torch
    tdev = "cuda" if torch.cuda.is_available() else "cpu"
except Exception:  # noqa: BLE001
    torch = None

rng = np.random.default_rng(0)
vdts = [np.float64, np.float32] if dev["fp64"] else [np.float32]
rows = []
for vdt in vdts:
    for order in ("random", "sorted"):
        k = rng.integers(0, nk, n).astype(np.int64)
        if order == "sorted":
            k.sort()
        v = rng.standard_normal(n).astype(vdt)
        kd, vd = gpured.to_device(k), gpured.to_device(v)
        want = np.bincount(k, v.astype(np.float64), nk)
        det = gpured.sum_by_key(kd, vd, nk, deterministic=True).get()
        err = np.max(np.abs(det - want))
        assert err < 1e-3 * max(1.0, np.abs(want).max()), err
        again = gpured.sum_by_key(kd, vd, nk, deterministic=True).get()
        assert again.tobytes() == det.tobytes()
        sync = gpured.synchronize
        w_nd = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk), sync, 10)
        w_det = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk, deterministic=True), sync, 10)
        ev_nd = gpured.timeit_by_key("sum_by_key", kd, vd, num_keys=nk, reps=5)["seconds"] * 1e3
        t = gpured.timeit_by_key("sum_by_key", kd, vd, num_keys=nk, reps=5, deterministic=True)
        ev_det = t["seconds"] * 1e3
        lb = gpured.sum_by_key(kd, vd, nk, deterministic=True, variant="lookback").get()
        assert np.max(np.abs(lb - want)) < 1e-3 * max(1.0, np.abs(want).max())
        w_lb = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk, deterministic=True,
                                                 variant="lookback"), sync, 10)
        w_fx = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk, deterministic=True,
                                                 variant="fixed_point"), sync, 10)
        if os.environ.get("GPURED_BYKEY_PROFILE"):
            for var in ("auto", "lookback"):
                print("-- kernels, deterministic, %s:" % var, flush=True)
                gpured.timeit_by_key("sum_by_key", kd, vd, num_keys=nk, reps=1,
                                     deterministic=True, variant=var)
                sys.stderr.flush()
        peer = float("nan")
        if torch is not None:
            tk = torch.from_numpy(k).to(tdev)
            tv = torch.from_numpy(v).to(tdev)
            out = torch.zeros(nk, dtype=tv.dtype, device=tdev)
            tsync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)
            peer = loop_ms(lambda: out.zero_().index_add_(0, tk, tv), tsync, 10)
        name = np.dtype(vdt).name
        print("%-8s %-7s nondet %.3f ms (events %.3f)  det %.3f ms (events %.3f)  "
              "det/nondet %.2f  radix+lookback %.3f  fixed_point %.3f  torch.index_add_ %.3f  | %s"
              % (name, order, w_nd, ev_nd, w_det, ev_det, w_det / w_nd, w_lb, w_fx, peer,
                 t["plan"]["why"][:70]), flush=True)
        rows.append((name, order, w_nd, w_det, w_det / w_nd, w_lb, w_fx, peer))
if len(sys.argv) > 3 and sys.argv[3] == "sweep":
    k = rng.integers(0, nk, n).astype(np.int64)
    v = rng.standard_normal(n).astype(vdts[0])
    kd, vd = gpured.to_device(k), gpured.to_device(v)
    want = gpured.sum_by_key(kd, vd, nk, deterministic=True).get()
    for wg, it in ((256, 8), (256, 4), (256, 12), (256, 15), (128, 8), (128, 15),
                   (512, 4), (512, 8), (1024, 4)):
        try:
            got = gpured.sum_by_key(kd, vd, nk, deterministic=True, wg_size=wg, items=it).get()
            assert np.allclose(got, want, rtol=1e-9, atol=1e-9)
            w = loop_ms(lambda: gpured.sum_by_key(kd, vd, nk, deterministic=True,
                                                  wg_size=wg, items=it), gpured.synchronize, 10)
            print("sweep wg %4d items %2d: det %.3f ms" % (wg, it, w), flush=True)
        except Exception as e:  # noqa: BLE001
            print("sweep wg %4d items %2d: %s" % (wg, it, e), flush=True)
print()
print("| values | keys | non-deterministic ms | deterministic ms | ratio | radix+lookback ms | fixed_point ms | torch.index_add_ ms |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.3f |" % r)
