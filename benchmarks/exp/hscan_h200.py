"""H200 rows for issue 40's native half scans (kernels/scan.cl GR_SELT /
GR_SRELT: float16/bfloat16 read and written by the scan kernels, float32+
accumulation, each result rounded once), wall clock, a loop of calls on
the same device-resident data, one synchronisation, median of 5 loops
(_loop.py), peers in the same process:

  * cumsum of 1 GiB float16 / bfloat16 (ml_dtypes; skipped without it)
    beside torch.cumsum (float16 / bfloat16) and CuPy (float16);
  * max |error| against a float64 reference on a 2**20 sample, gpured and
    torch (torch accumulates in the half: the issue's accuracy point);
  * complex128 cumsum, 1 GiB, beside torch and CuPy (the second target).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/hscan_h200.py
"""
import os

import numpy as np

import gpured
from _loop import PeerRows, loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
rows = PeerRows()


row = rows.add


def bf16():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def peer(fn, sync_fn):
    try:
        return loop_ms(fn, sync_fn)
    except Exception as e:  # a peer lacking the dtype: no row entry
        print("  peer skipped: %s" % (str(e).splitlines() or [""])[0][:80])
        return None


n = 1 << int(os.environ.get("HS_LOG2", "29"))  # 2**29 halves = 1 GiB
rng = np.random.default_rng(0)
base = rng.standard_normal(n, dtype=np.float32)
SAMPLE = 1 << 20
errs = []
for name, dt in (("float16", np.dtype(np.float16)), ("bfloat16", bf16())):
    if dt is None:
        print("bfloat16: ml_dtypes is not installed, row skipped")
        continue
    a = base.astype(dt)
    d = gpured.to_device(a)
    r = gpured.cumsum(d)
    assert r.dtype == dt, r.dtype
    peers = {}
    if torch is not None:
        tdt = torch.float16 if name == "float16" else torch.bfloat16
        t = torch.from_numpy(base).cuda().to(tdt)
        peers["torch"] = peer(lambda: torch.cumsum(t, 0),
                              torch.cuda.synchronize)
    if cp is not None and name == "float16":
        c = cp.asarray(a)
        peers["cupy"] = peer(lambda: cp.cumsum(c),
                             cp.cuda.Device().synchronize)
    row("cumsum 1 GiB %s" % name, loop_ms(lambda: gpured.cumsum(d), sync),
        peers)
    del r, d
    # accuracy: 2**20 elements of |x| (a growing prefix), float64 oracle
    s = np.abs(base[:SAMPLE]).astype(dt)
    ref = np.cumsum(s.astype(np.float64))
    g = gpured.cumsum(gpured.to_device(s)).get().astype(np.float64)
    e = {"gpured": float(np.max(np.abs(g - ref)))}
    if torch is not None:
        ts = torch.from_numpy(s.astype(np.float32)).cuda().to(tdt)
        e["torch"] = float(np.max(np.abs(
            torch.cumsum(ts, 0).float().cpu().numpy().astype(np.float64)
            - ref)))
    f32 = np.cumsum(s.astype(np.float32)).astype(dt).astype(np.float64)
    e["float32 scan rounded"] = float(np.max(np.abs(f32 - ref)))
    errs.append((name, e))
    if torch is not None:
        del t
del base

# complex128 cumsum, 1 GiB
m = 1 << int(os.environ.get("HS_CX_LOG2", "26"))
z = rng.standard_normal(m) + 1j * rng.standard_normal(m)  # complex128
dz = gpured.to_device(z)
got = gpured.cumsum(dz[: 1 << 16]).get()
assert np.allclose(got, np.cumsum(z[: 1 << 16])), "complex cumsum differs"
peers = {}
if torch is not None:
    tz = torch.from_numpy(z).cuda()
    peers["torch"] = peer(lambda: torch.cumsum(tz, 0), torch.cuda.synchronize)
if cp is not None:
    cz = cp.asarray(z)
    peers["cupy"] = peer(lambda: cp.cumsum(cz), cp.cuda.Device().synchronize)
row("cumsum 1 GiB complex128", loop_ms(lambda: gpured.cumsum(dz), sync), peers)
# where its time goes (gpured/_complex.py _scan_rows): the parts laid out
# first (a transposing copy), two float64 rows scanned, copied back
from gpured import _complex as _cx  # noqa: E402
v = _cx.real(dz)
vt = v.transpose((1, 0)).copy()
rt = gpured.cumsum(vt, axis=1)
back = gpured.empty(v.shape, np.float64)
parts = {
    "transpose copy": loop_ms(lambda: v.transpose((1, 0)).copy(), sync),
    "2 x 2**26 float64 row scans": loop_ms(
        lambda: gpured.cumsum(vt, axis=1), sync),
    "copy back": loop_ms(
        lambda: gpured._core.device_copy(rt, back.transpose((1, 0))), sync),
    "float64 cumsum 2**27 (1 GiB)": loop_ms(
        lambda: gpured.cumsum(v.reshape(-1)), sync),
}
del vt, rt, back

rows.print()
print("\ncomplex128 cumsum's parts (ms): " + ", ".join(
    "%s %.3f" % kv for kv in parts.items()))
print("\nmax |error| of cumsum of 2**20 |x| against float64:")
for name, e in errs:
    print("  %-9s " % name + ", ".join("%s %.4g" % kv for kv in e.items()))
