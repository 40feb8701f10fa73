"""where= masks (issue 16): the masked reductions against the same-size
plain ones and the peers' way of masking (torch and CuPy have no where=:
a select, then the reduction), device-resident data with a device mask,
wall clock of loops of calls (one sync at the end), and kernel events.
With --host: NumPy arrays and masks against numpy's where= (the CPU).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/where.py [MiB]
    PYTHONPATH=. python benchmarks/exp/where.py --host [MiB ...]
"""
import os
import sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms

args = [x for x in sys.argv[1:] if not x.startswith("--")]
rng = np.random.default_rng(0)

if "--host" in sys.argv:
    sizes = [float(x) for x in args] or [1 / 1024, 1 / 16, 1, 16, 64]
    print("host arrays (%s), ms per call; ratio numpy / gpured"
          % gpured.get_device()["name"])
    print("| size | function | gpured | numpy | ratio | placement |")
    print("|---|---|---|---|---|---|")
    for mib in sizes:
        n = max(1, int(mib * 2**20) // 4)
        a = rng.standard_normal(n).astype(np.float32)
        w = rng.random(n) < 0.5
        calls = 200 if n < 1 << 16 else 10
        for name, kw in (("sum", {}), ("max", {"initial": -np.inf}),
                         ("mean", {})):
            g = getattr(gpured, name)
            f = getattr(np, name)
            got = g(a, where=w, **kw)
            want = f(a.astype(np.float64), where=w, **kw)  # (numpy's masked
            # float32 sums run in one float32 chain: not the reference)
            assert np.allclose(got, want, rtol=1e-5), (name, got, want)
            tg = loop_ms(lambda: g(a, where=w, **kw), lambda: None, calls)
            tn = loop_ms(lambda: f(a, where=w, **kw), lambda: None, calls)
            pl = gpured.explain(name if name != "mean" else "sum", a,
                                where=w, **kw).get("placement", "")
            print("| %g KiB | %s | %.4f | %.4f | %.2f | %s |"
                  % (mib * 1024, name, tg, tn, tn / tg, pl), flush=True)
    sys.exit(0)

mib = float(args[0]) if args else 1024
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


def tsync():
    if torch is not None and tdev == "cuda":
        torch.cuda.synchronize()


def csync():
    cp.cuda.Device().synchronize()


rows = []
for dt in (np.float32, np.float64, np.int32):
    if dt == np.float64 and not dev["fp64"]:
        continue
    n = int(mib * 2**20) // np.dtype(dt).itemsize
    a = (rng.standard_normal(n) * 100).astype(dt)
    w = rng.random(n) < 0.5
    d, dm = gpured.to_device(a), gpured.to_device(w)
    name = np.dtype(dt).name
    ref = np.sum(a, where=w, dtype=np.float64 if dt != np.int32 else np.int64)
    got = gpured.sum(d, where=dm).get()
    rel = abs(float(got) - float(ref)) / max(abs(float(ref)), 1)
    base = loop_ms(lambda: gpured.sum(d), gpured.synchronize)
    cases = [
        ("sum", lambda: gpured.sum(d, where=dm)),
        ("max (initial)", lambda: gpured.max(d, where=dm, initial=-1e30
                                             if dt != np.int32 else -2**31)),
        ("mean", lambda: gpured.mean(d, where=dm)),
    ]
    if dt != np.int32:
        wt = (rng.random(n) + 0.5).astype(dt)
        dw = gpured.to_device(wt)
        cases.append(("average", lambda: gpured.average(d, weights=dw)))
        cases.append(("var", lambda: gpured.var(d, where=dm)))
        cases.append(("nanstd", lambda: gpured.nanstd(d, where=dm)))
        gv = float(gpured.var(d, where=dm).get())
        rv = float(np.var(a.astype(np.float64), where=w))
        assert abs(gv - rv) <= 1e-5 * rv, (gv, rv)
    ta = tm = ca = cm = None
    if torch is not None:
        ta, tm = torch.from_numpy(a).to(tdev), torch.from_numpy(w).to(tdev)
        tz = torch.zeros((), dtype=ta.dtype, device=tdev)
    if cp is not None:
        ca, cm = cp.asarray(a), cp.asarray(w)
    for label, fn in cases:
        wall = loop_ms(fn, gpured.synchronize)
        peers = []
        if ta is not None and label == "sum":
            peers.append(("torch where+sum", loop_ms(
                lambda: torch.where(tm, ta, tz).sum(), tsync)))
            peers.append(("torch sum", loop_ms(lambda: ta.sum(), tsync)))
        if ca is not None and label == "sum":
            peers.append(("cupy where+sum", loop_ms(
                lambda: cp.where(cm, ca, 0).sum(), csync)))
        if label == "average":
            if torch is not None:
                tw = torch.from_numpy(wt).to(tdev)
                peers.append(("torch (a*w).sum()/w.sum()", loop_ms(
                    lambda: (ta * tw).sum() / tw.sum(), tsync)))
                del tw
            if cp is not None:
                cw = cp.asarray(wt)
                peers.append(("cupy average", loop_ms(
                    lambda: cp.average(ca, weights=cw), csync)))
                del cw
        if label == "var" and torch is not None:
            peers.append(("torch var(a[mask])", loop_ms(
                lambda: torch.var(ta[tm], correction=0), tsync)))
        if label == "mean" and torch is not None:
            peers.append(("torch where-sum / mask-sum", loop_ms(
                lambda: torch.where(tm, ta, tz).sum() / tm.sum(), tsync)))
        rows.append((name, label, wall, base, peers))
        print("%-8s %-14s where wall %.3f ms, sum %.3f ms (sum/where %.3f)%s"
              % (name, label, wall, base, base / wall,
                 "".join(", %s %.3f (%.2fx)" % (p, t, t / wall)
                         for p, t in peers)), flush=True)
    ev = gpured.timeit("sum", d, where=dm, reps=5)["seconds"] * 1e3
    print("%-8s sum where events %.3f ms; rel err vs float64 %.1e"
          % (name, ev, rel), flush=True)
    del d, dm, ta, tm, ca, cm
    if dt != np.int32:
        del dw

# rows and columns of a float32 matrix
R = 4096
C = int(mib * 2**20) // 4 // R
a = rng.standard_normal((R, C)).astype(np.float32)
w = rng.random((R, C)) < 0.5
d, dm = gpured.to_device(a), gpured.to_device(w)
wr = (rng.random(C) + 0.5).astype(np.float32)  # 1-d weights along axis 1
for ax in (1, 0):
    assert np.allclose(gpured.sum(d, axis=ax, where=dm).get(),
                       np.sum(a, axis=ax, where=w, dtype=np.float64), rtol=1e-4)
    wall = loop_ms(lambda: gpured.sum(d, axis=ax, where=dm), gpured.synchronize)
    base = loop_ms(lambda: gpured.sum(d, axis=ax), gpured.synchronize)
    rows.append(("float32", "sum axis=%d" % ax, wall, base, []))
    print("float32  %dx%d sum axis=%d where wall %.3f ms, sum %.3f (%.3f)"
          % (R, C, ax, wall, base, base / wall), flush=True)
# average of rows with 1-d weights (broadcast on the host, then uploaded:
# a NumPy weights vector is the common form)
wall = loop_ms(lambda: gpured.average(d, axis=1, weights=wr),
               gpured.synchronize, 3, 3)
base = loop_ms(lambda: gpured.sum(d, axis=1), gpured.synchronize)
rows.append(("float32", "average axis=1, 1-d weights", wall, base, []))
print("float32  average axis=1 (1-d weights) wall %.3f ms" % wall, flush=True)

print("\n| dtype | function | where ms | sum ms | sum/where | peers (ms, peer/gpured) |")
print("|---|---|---|---|---|---|")
for name, label, wall, base, peers in rows:
    print("| %s | %s | %.3f | %.3f | %.3f | %s |" % (
        name, label, wall, base, base / wall,
        "; ".join("%s %.3f (%.2fx)" % (p, t, t / wall) for p, t in peers)))
