"""NumPy arrays placed on whichever device finishes first (issue 12).

gpured unpinned (set_device(None): placement "auto" may move a NumPy call
to any device by the model's rates) against the same call pinned to the
GPU, numpy and torch's CPU kernels, in one process.  Wall clock of loops
of calls (NumPy in, NumPy out: each call returns its answer), median of
5 loops, after a warm-up call.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/place_devices.py [MAX_MIB]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms, optional_torch  # noqa: E402

import gpured  # noqa: E402

torch = optional_torch()


def wall(fn, calls):
    """NumPy in, answer out: every call is its own synchronisation."""
    return loop_ms(fn, lambda: None, calls)


def main():
    max_mib = float(sys.argv[1]) if len(sys.argv) > 1 else 1024
    gpu = [i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"]
    gpured.set_device(None)
    print("devices:", [d["name"] for d in gpured.devices()], "current:",
          gpured.get_device()["name"], "pinned:", gpured._core.device_pinned())
    rows = []
    rng = np.random.default_rng(0)
    sizes = [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30]
    for nbytes in [s for s in sizes if s <= max_mib * (1 << 20)]:
        a = rng.standard_normal(nbytes // 4).astype(np.float32)
        calls = max(3, min(2000, (1 << 27) // nbytes))
        for op in ("sum", "cumsum") if nbytes >= 1 << 28 else ("sum",):
            f = getattr(gpured, op)
            e = gpured.explain(op, a)
            where = e["device"] if e["placement"] == "device" else "host"
            auto = wall(lambda: f(a), calls)
            pinned = None
            if gpu:
                gpured.set_device(gpu[0])
                pinned = wall(lambda: f(a), calls)
                gpured.set_device(None)
            npy = wall(lambda: getattr(np, op)(a), calls)
            tch = None
            if torch is not None:
                t = torch.from_numpy(a)
                tch = wall(lambda: getattr(torch, op)(t, 0) if op == "cumsum"
                           else torch.sum(t), calls)
            ok = (np.allclose(f(a), getattr(np, op)(a, dtype=np.float64), rtol=1e-3,
                              atol=1e-2 * np.sqrt(a.size)))
            rows.append((op, nbytes, where, auto, pinned, npy, tch, ok))
            print(rows[-1], flush=True)
    print()
    print("| op | bytes | auto runs on | gpured auto ms | pinned to GPU ms | numpy ms "
          "| torch CPU ms | best peer / auto | answer ok |")
    print("|---|---|---|---|---|---|---|---|---|")
    for op, nb, where, auto, pinned, npy, tch, ok in rows:
        best = min(x for x in (npy, tch) if x is not None)
        print("| %s | %d | %s | %.4f | %s | %.4f | %s | %.2f | %s |" % (
            op, nb, where, auto, "%.4f" % pinned if pinned is not None else "-", npy,
            "%.4f" % tch if tch is not None else "-", best / auto, ok))


if __name__ == "__main__":
    main()
