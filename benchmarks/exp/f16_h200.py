"""H200 rows for issue 40 (float16 and bfloat16), wall clock, a loop of
calls on the same device-resident data, one synchronisation, median of 5
loops (_loop.py), peers in the same process:

  * sum, max, argmax of 1 GiB device-resident float16 and bfloat16 (read
    natively by the reduce kernels: common.cl GR_ELT) beside torch and
    CuPy on the same data, and beside gpured's own float32 rows of 1 GiB:
    targets >= the best peer and >= 0.95 of float32's bytes per second;
  * cumsum of float16 (widened to float32 on the device, float64 scan,
    narrowed once: gpured/_half.py) beside torch.cumsum, with the error of
    each against the exact scan rounded once (the issue: no larger than a
    float32-accumulated scan's).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/f16_h200.py

bfloat16 rows need ml_dtypes on the GPU host (a wheel in .whl/); without
it they are skipped with a line saying so.
"""
import os

import numpy as np

import gpured
from _loop import loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = []
try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BF16 = None
    print("no ml_dtypes here: the bfloat16 rows are skipped")

GIB = 1 << int(os.environ.get("F16_LOG2_BYTES", "30"))
rng = np.random.default_rng(0)
SZ = "%d MiB" % (GIB >> 20) if GIB < 1 << 30 else "%d GiB" % (GIB >> 30)


def row(name, ms, peers, f32_ms=None):
    best = min((v for v in peers.values() if v), default=None)
    rows.append((name, ms, peers, best / ms if best else None,
                 f32_ms / ms if f32_ms else None))


def peer_rows(a, dt):
    """torch / CuPy on the same values; {} where absent."""
    out = {}
    if torch is not None:
        if dt == BF16:
            t = torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16)
        else:
            t = torch.from_numpy(a).cuda()
        out["torch"] = {
            "sum": lambda: t.sum(), "max": lambda: t.max(),
            "argmax": lambda: t.argmax()}, torch.cuda.synchronize, t
    if cp is not None and dt == np.float16:
        c = cp.asarray(a)
        out["cupy"] = {
            "sum": lambda: c.sum(), "max": lambda: c.max(),
            "argmax": lambda: c.argmax()}, cp.cuda.Device().synchronize, c
    return out


# float32's bytes per second: the reference of the 0.95 target
n32 = GIB // 4
a32 = rng.standard_normal(n32, dtype=np.float32)
d32 = gpured.to_device(a32)
f32 = {op: loop_ms(lambda: getattr(gpured, op)(d32), sync)
       for op in ("sum", "max", "argmax")}
for op, ms in f32.items():
    row("%s %s float32" % (op, SZ), ms, {})
del d32

for dt in (np.dtype(np.float16), BF16):
    if dt is None:
        continue
    n = GIB // 2
    a = (rng.standard_normal(n, dtype=np.float32) * 4).astype(dt)
    d = gpured.to_device(a)
    a64 = a.astype(np.float64)
    # correctness first: the float64 oracle rounded once
    s = gpured.sum(d).get()
    assert s == np.sum(a64).astype(dt) or abs(float(s) - np.sum(a64)) <= \
        abs(np.sum(a64)) * 2 ** -7, (s, np.sum(a64))
    assert gpured.max(d).get() == a.max()
    assert int(gpured.argmax(d).get()) == int(np.argmax(a64))
    peers = peer_rows(a, dt)
    for op in ("sum", "max", "argmax"):
        pm = {k: loop_ms(fns[op], sy) for k, (fns, sy, _) in peers.items()}
        # 1 GiB of halves against 1 GiB of float32: equal bytes, so the
        # bytes-per-second ratio is the time ratio
        row("%s %s %s" % (op, SZ, dt.name),
            loop_ms(lambda: getattr(gpured, op)(d), sync), pm, f32[op])
    if dt == np.float16:
        # cumsum: speed beside torch, error beside a float32 scan
        m = min(n, 1 << 26)
        x = (rng.standard_normal(m, dtype=np.float32)).astype(dt)
        dx = gpured.to_device(x)
        pm = {}
        tc = None
        if torch is not None:
            tx = torch.from_numpy(x).cuda()
            pm["torch"] = loop_ms(lambda: torch.cumsum(tx, 0),
                                  torch.cuda.synchronize, calls=3, loops=3)
            tc = torch.cumsum(tx, 0).cpu().numpy()
        row("cumsum %d Mi float16" % (m >> 20),
            loop_ms(lambda: gpured.cumsum(dx), sync, calls=3, loops=3), pm)
        exact = np.cumsum(x.astype(np.float64)).astype(np.float16)
        f32scan = np.cumsum(x.astype(np.float32)).astype(np.float16)
        got = gpured.cumsum(dx).get()

        def err(v):
            return float(np.max(np.abs(v.astype(np.float64) -
                                       exact.astype(np.float64))))
        print("cumsum float16 max |error| vs exact-rounded: gpured %.4g, "
              "float32 scan %.4g, torch %s" % (
                  err(got), err(f32scan),
                  "%.4g" % err(tc) if tc is not None else "-"))
        assert err(got) <= err(f32scan)
        del dx
    del d

print("%-28s %10s  %-36s %10s %12s" % ("row", "gpured ms", "peers ms",
                                        "best/ours", "vs f32 B/s"))
for name, ms, peers, r, f in rows:
    print("%-28s %10.3f  %-36s %10s %12s" % (
        name, ms, ", ".join("%s %.3f" % kv for kv in peers.items()),
        "%.2f" % r if r else "-", "%.2f" % f if f else "-"))
