"""Issue 40's GPU targets for complex inputs, wall clock, a loop of calls
on the same 1 GiB device-resident data, one synchronisation, median of 5
loops (_loop.py), torch and CuPy in the same process:

  * complex64 sum (full): target >= the best peer
  * complex128 cumsum (1-d): target >= the best peer
  * beside them (no targets): complex64/complex128 sum along axis 1 of
    (rows, 1024), mean, var, nansum, argmin, max (lexicographic, real
    passes), and the float32/float64 sums of the same bytes (the real
    view's ceiling); the full sum's column width swept (_COLS_GPU)

Results are checked against NumPy on the host copy first.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/cplx_h200.py

CPLX_LOG2 sets the bytes (default 30: 1 GiB).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpured  # noqa: E402
from _loop import loop_ms, optional_cupy, optional_torch  # noqa: E402

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = []
nbytes = 1 << int(os.environ.get("CPLX_LOG2", "30"))


def row(name, fn, peers):
    try:
        ms = loop_ms(fn, sync)
    except Exception as e:  # report, keep going
        print("%s: gpured failed: %r" % (name, e))
        return
    best = min((v for v in peers.values() if v), default=None)
    rows.append((name, ms, peers, best / ms if best else None))


def peer(name, lib, fn):
    """A peer's time, or None where the library lacks it."""
    if lib is None:
        return None
    try:
        s = (lambda: cp.cuda.Device().synchronize()) if lib is cp \
            else torch.cuda.synchronize
        return loop_ms(fn, s)
    except Exception as e:
        print("%s: %r" % (name, e))
        return None


def check(name, got, want, rtol):
    got = np.asarray(got)
    ok = np.allclose(got, want, rtol=rtol, atol=0)
    print("check %-32s %s (max rel %.2e)" % (
        name, "ok" if ok else "DIFFERS",
        float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))))


rng = np.random.default_rng(0)
for dt, rt in ((np.complex64, np.float32), (np.complex128, np.float64)):
    n = nbytes // np.dtype(dt).itemsize
    h = (rng.standard_normal(n, dtype=np.float32) +
         1j * rng.standard_normal(n, dtype=np.float32)).astype(dt)
    d = gpured.to_device(h)
    tn = torch.from_numpy(h).cuda() if torch is not None else None
    cn = cp.asarray(h) if cp is not None else None
    name = np.dtype(dt).name
    rtol = 1e-5 if dt == np.complex64 else 1e-12

    # full sum
    check(name + " sum", gpured.sum(d).get(),
          np.sum(h.astype(np.complex128)), rtol)
    row(name + " sum", lambda: gpured.sum(d), {
        "torch": peer("torch sum", torch, lambda: tn.sum()),
        "cupy": peer("cupy sum", cp, lambda: cn.sum())})
    # the full sum's column width (gpured/_complex.py _COLS_GPU), swept
    from gpured import _complex
    keep = _complex._COLS_GPU
    for c in (1024, 32768):
        _complex._COLS_GPU = c
        check(name + " sum C=%d" % c, gpured.sum(d).get(),
              np.sum(h.astype(np.complex128)), rtol)
        row(name + " sum, C=%d" % c, lambda: gpured.sum(d), {})
    _complex._COLS_GPU = keep
    # the real view's ceiling: the same bytes as a real sum
    dr = gpured.to_device(h.view(rt))
    row(name + " bytes as %s sum" % np.dtype(rt).name, lambda: gpured.sum(dr),
        {})
    del dr

    # 1-d cumsum
    m = min(n, 1 << 22)
    check(name + " cumsum (first 4 Mi)", gpured.cumsum(d[:m]).get(),
          np.cumsum(h[:m].astype(np.complex128)), rtol * 100)
    row(name + " cumsum", lambda: gpured.cumsum(d), {
        "torch": peer("torch cumsum", torch, lambda: torch.cumsum(tn, 0)),
        "cupy": peer("cupy cumsum", cp, lambda: cp.cumsum(cn))})

    # rows
    d2 = d.reshape(-1, 1024)
    t2 = tn.reshape(-1, 1024) if tn is not None else None
    c2 = cn.reshape(-1, 1024) if cn is not None else None
    check(name + " sum axis 1", gpured.sum(d2, axis=1).get()[:64],
          np.sum(h.reshape(-1, 1024)[:64].astype(np.complex128), axis=1),
          rtol)
    row(name + " sum axis 1 (rows of 1024)", lambda: gpured.sum(d2, axis=1), {
        "torch": peer("torch rows", torch, lambda: t2.sum(1)),
        "cupy": peer("cupy rows", cp, lambda: c2.sum(1))})
    row(name + " mean", lambda: gpured.mean(d), {
        "torch": peer("torch mean", torch, lambda: tn.mean()),
        "cupy": peer("cupy mean", cp, lambda: cn.mean())})
    check(name + " var (first 4 Mi)", gpured.var(d[:m]).get(), np.var(h[:m]),
          1e-4)
    row(name + " var", lambda: gpured.var(d), {
        "torch": peer("torch var", torch,
                      lambda: torch.var(tn, unbiased=False)),
        "cupy": peer("cupy var", cp, lambda: cn.var())})
    row(name + " nansum", lambda: gpured.nansum(d), {
        "torch": peer("torch nansum", torch, lambda: torch.nansum(tn)),
        "cupy": peer("cupy nansum", cp, lambda: cp.nansum(cn))})
    # lexicographic argmin / max by real passes on the device (no target)
    hm = h[:m]
    check(name + " argmin (first 4 Mi)",
          np.float64(gpured.argmin(d[:m]).get()), np.float64(np.argmin(hm)), 0)
    check(name + " max (first 4 Mi)", gpured.max(d[:m]).get(), np.max(hm), 0)
    row(name + " argmin", lambda: gpured.argmin(d), {
        "cupy": peer("cupy argmin", cp, lambda: cp.argmin(cn))})
    row(name + " max", lambda: gpured.max(d), {
        "cupy": peer("cupy max", cp, lambda: cp.max(cn))})
    del d, d2, tn, t2, cn, c2
    gpured.empty_cache()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()
    if torch is not None:
        torch.cuda.empty_cache()

print("%-40s %10s  %-40s %s" % ("row", "gpured ms", "peers ms",
                                "best peer / gpured"))
for name, ms, peers, r in rows:
    print("%-40s %10.3f  %-40s %s" % (
        name, ms, ", ".join("%s %.3f" % (k, v) for k, v in peers.items()
                            if v is not None),
        "%.2f" % r if r else "-"))
