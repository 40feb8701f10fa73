"""H200 rows for complex sums as user kernels (issue 40, helper cxrows):
1 GiB complex64 device-resident Arrays -- sum and mean along rows of 1024
(gpured/_kernels.py cx_sum: float2 elements accumulated in double2; the
real view's row sum read each part as a strided segment: 11.9 ms), the
sum along axis 0 (columns: still the real view's column kernels), nansum
and nanmean of the whole array and nansum along rows (one pass; before:
an elementwise valid mask, then a masked sum: 13.5 ms) -- and 1 GiB
complex128 sums along rows (double2, TwoSum per part) and nanmean (the
sum, then a counting pass), beside torch and CuPy.  The "before" lines
time the real view's call the old route made, for reference (rows of
256 too: there NVIDIA's warp-per-row plan is no user kernel's, so one
work-item reads a row); the host
line compares a 64 MiB NumPy input's row sum (the user kernel on the
device, copies included) with the old host route and NumPy.  Every result
is checked against NumPy first (rows: a slice; full sums: the whole
array).  Wall clock, a loop of calls on the same data, one
synchronisation, median of 5 loops (_loop.py).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/cxrows_h200.py
"""
import os
import time

import numpy as np

import gpured
from gpured import _complex
from _loop import PeerRows, loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = PeerRows()
tsync = torch.cuda.synchronize if torch is not None else None
csync = cp.cuda.Device().synchronize if cp is not None else None


def peer(name, fn, syncf):
    try:
        return loop_ms(fn, syncf)
    except Exception as e:  # a peer without the function: its row says so
        print("peer %s: %s: %s" % (name, type(e).__name__, str(e)[:100]))
        return None


def peers(tfn, cfn):
    p = {}
    if torch is not None:
        p["torch"] = peer("torch", tfn, tsync)
    if cp is not None:
        p["cupy"] = peer("cupy", cfn, csync)
    return p


def data(shape, dt, seed=0, nan_every=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    part = np.float32 if dt == np.complex64 else np.float64
    a = np.empty(n, dt)
    v = a.view(part)
    v[:] = rng.standard_normal(2 * n, dtype=part)
    if nan_every:
        a[::nan_every] = complex(np.nan, 1.0)
        a[5::nan_every] = complex(2.0, np.nan)
    return a.reshape(shape)


def check(name, got, want, dt):
    got = np.asarray(got.get() if isinstance(got, gpured.Array) else got)
    want = np.asarray(want)
    scale = max(1.0, float(np.nanmax(np.abs(want))))
    err = float(np.nanmax(np.abs(got - want))) / scale
    tol = 1e-5 if dt == np.complex64 else 1e-12
    ok = err <= tol and np.array_equal(np.isnan(got), np.isnan(want))
    print("check %-34s max err / max |want| %.2e  %s" % (
        name, err, "ok" if ok else "MISMATCH"))


def t_of(x):
    return torch.from_numpy(x).cuda() if torch is not None else None


def c_of(x):
    return cp.asarray(x) if cp is not None else None


t0 = time.time()
LOG2 = int(os.environ.get("CX_LOG2", "27"))  # 2^27 complex64 = 1 GiB
C = 1024
for dt, tag in ((np.complex64, "complex64"), (np.complex128, "complex128")):
    n = (1 << LOG2) if dt == np.complex64 else (1 << (LOG2 - 1))
    a = data((n // C, C), dt)
    d = gpured.to_device(a)
    tt, cc = t_of(a), c_of(a)
    k = 2048  # rows checked against NumPy
    check("%s sum rows" % tag, gpured.sum(d, axis=1)[:k], a[:k].sum(axis=1), dt)
    check("%s mean rows" % tag, gpured.mean(d, axis=1)[:k], a[:k].mean(axis=1), dt)
    print("explain %s sum rows: %s" % (tag, gpured.explain("sum", d, 1)["complex"]))
    rows.add("%s sum along rows of %d" % (tag, C),
             loop_ms(lambda: gpured.sum(d, axis=1), sync),
             peers(lambda: torch.sum(tt, 1), lambda: cp.sum(cc, 1)))
    print("before (real view, strided parts): %s sum rows %.3f ms" % (tag, loop_ms(
        lambda: _complex.reduce(gpured.sum, d, 1, None, None, False, np._NoValue, True, {}),
        sync)))
    if dt == np.complex64:
        # short rows: NVIDIA's warp-per-row plan is not a user kernel's,
        # so the items kernel runs them (one work-item per row)
        d2, t2, c2 = d.reshape(-1, 256), (tt.reshape(-1, 256) if tt is not None else None), \
            (cc.reshape(-1, 256) if cc is not None else None)
        check("complex64 sum rows of 256", gpured.sum(d2, axis=1)[:k],
              a.reshape(-1, 256)[:k].sum(axis=1), dt)
        print("explain complex64 sum rows of 256: %s" % gpured.explain("sum", d2, 1)["variant"])
        rows.add("complex64 sum along rows of 256", loop_ms(lambda: gpured.sum(d2, axis=1), sync),
                 peers(lambda: torch.sum(t2, 1), lambda: cp.sum(c2, 1)))
        print("before (real view, strided parts): complex64 sum rows of 256 %.3f ms" % loop_ms(
            lambda: _complex.reduce(gpured.sum, d2, 1, None, None, False, np._NoValue, True, {}),
            sync))
        del d2, t2, c2
        check("complex64 sum axis 0", gpured.sum(d, axis=0), a.sum(axis=0, dtype=np.complex128), dt)
        rows.add("complex64 sum axis 0 (columns)",
                 loop_ms(lambda: gpured.sum(d, axis=0), sync),
                 peers(lambda: torch.sum(tt, 0), lambda: cp.sum(cc, 0)))
        rows.add("complex64 mean along rows of %d" % C,
                 loop_ms(lambda: gpured.mean(d, axis=1), sync),
                 peers(lambda: torch.mean(tt, 1), lambda: cp.mean(cc, 1)))
    del d, tt, cc

    # nan forms: the whole array, and along rows
    a = data((n // C, C), dt, seed=1, nan_every=97)
    d = gpured.to_device(a)
    tt, cc = t_of(a), c_of(a)
    flat = d.reshape(-1)
    check("%s nansum" % tag, gpured.nansum(flat), np.nansum(a.astype(np.complex128)), dt)
    check("%s nanmean" % tag, gpured.nanmean(flat), np.nanmean(a.astype(np.complex128)), dt)
    check("%s nansum rows" % tag, gpured.nansum(d, axis=1)[:k], np.nansum(a[:k], axis=1), dt)
    print("explain %s nanmean: %s" % (tag, gpured.explain("nanmean", flat)["complex"]))
    tf, cf = (tt.reshape(-1) if tt is not None else None), (cc.reshape(-1) if cc is not None else None)
    if dt == np.complex64:
        rows.add("complex64 nansum", loop_ms(lambda: gpured.nansum(flat), sync),
                 peers(lambda: torch.nansum(tf), lambda: cp.nansum(cf)))
        rows.add("complex64 nanmean", loop_ms(lambda: gpured.nanmean(flat), sync),
                 peers(lambda: torch.nanmean(tf), lambda: cp.nanmean(cf)))
        rows.add("complex64 nansum along rows", loop_ms(lambda: gpured.nansum(d, axis=1), sync),
                 peers(lambda: torch.nansum(tt, 1), lambda: cp.nansum(cc, 1)))
        check("complex64 nansum axis 0", gpured.nansum(d, axis=0),
              np.nansum(a.astype(np.complex128), axis=0), dt)
        print("explain complex64 nansum axis 0: %s" % gpured.explain("nansum", d, 0)["variant"])
        rows.add("complex64 nansum axis 0 (columns)", loop_ms(lambda: gpured.nansum(d, axis=0), sync),
                 peers(lambda: torch.nansum(tt, 0), lambda: cp.nansum(cc, 0)))
        print("before (valid mask + masked real sum): complex64 nansum %.3f ms" % loop_ms(
            lambda: _complex.reduce(gpured.sum, flat, None, None, None, False, np._NoValue,
                                    _complex.valid(flat, True), {}), sync))
    else:
        rows.add("complex128 nanmean", loop_ms(lambda: gpured.nanmean(flat), sync),
                 peers(lambda: torch.nanmean(tf), lambda: cp.nanmean(cf)))
    del d, tt, cc, flat, tf, cf

# a host input's row sum: the user kernel on the device (copies included)
h = data((1 << 15, C), np.complex64, seed=2)  # 256 MiB
check("host complex64 sum rows", gpured.sum(h, axis=1), h.sum(axis=1), np.complex64)
print("host 256 MiB complex64 sum rows: gpured %.2f ms, old route (real view) %.2f ms, "
      "numpy %.2f ms" % (loop_ms(lambda: gpured.sum(h, axis=1), sync, calls=3),
                         loop_ms(lambda: _complex.reduce(gpured.sum, h, 1, None, None, False,
                                                         np._NoValue, True, {}), sync, calls=3),
                         loop_ms(lambda: h.sum(axis=1), lambda: None, calls=3)))
rows.print()
print("total %.1f s" % (time.time() - t0))
