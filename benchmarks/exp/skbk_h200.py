"""H200 rows for ScanKernel.by_key (issue 42, helper skbk): a user sum
scanned within runs of equal keys beside gpured.scan_by_key(keys, x,
"sum"), 2^28 float32 values in 4096-element runs (int32 keys), both
device-resident; wall clock, a loop of calls, one synchronisation, median
of 5 loops (_loop.py).  Results are checked first (float32 sums of at
most 4096 elements: a relative tolerance).  Peers: torch / CuPy have no
scan by key; a plain torch.cumsum / cupy.cumsum of the same data is
printed for scale where they are installed.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/skbk_h200.py
"""
import os

import numpy as np

import gpured
from _loop import loop_ms, optional_cupy, optional_torch

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
n = 1 << int(os.environ.get("SKBK_LOG2", "28"))
run = 4096
rng = np.random.default_rng(0)
x = rng.standard_normal(n).astype(np.float32)
keys = (np.arange(n, dtype=np.int64) // run % 7).astype(np.int32)
dx, dk = gpured.to_device(x), gpured.to_device(keys)

ksum = gpured.ScanKernel("T x", "T y", "x", "a + b", "0", "ksum")
for exclusive in (False, True):
    got = ksum.by_key(dk, dx, exclusive=exclusive).get()
    ref = gpured.scan_by_key(dk, dx, "sum", exclusive=exclusive)
    ref = ref.get() if hasattr(ref, "get") else np.asarray(ref)
    # the NumPy reference on the first runs (cumsum within each run)
    m = 64 * run
    r = x[:m].reshape(-1, run).astype(np.float64).cumsum(axis=1)
    if exclusive:
        r = np.concatenate([np.zeros((r.shape[0], 1)), r[:, :-1]], axis=1)
    np.testing.assert_allclose(got[:m], r.reshape(-1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3)
    print("exclusive=%s: results agree (by_key vs scan_by_key, NumPy)"
          % exclusive)
print("by_key scan plan:", ksum.explain_by_key(dk, dx))

t_user = loop_ms(lambda: ksum.by_key(dk, dx), sync)
t_ref = loop_ms(lambda: gpured.scan_by_key(dk, dx, "sum"), sync)
print("ScanKernel.by_key sum, 2^%d f32, runs of %d: %.3f ms"
      % (n.bit_length() - 1, run, t_user))
print("gpured.scan_by_key sum:                       %.3f ms" % t_ref)
print("ratio (scan_by_key time / by_key time): %.3f" % (t_ref / t_user))
# the packing pass alone (where by_key's time goes)
from gpured import _kernels as _k  # noqa: E402
t_pack = loop_ms(lambda: _k._pack_keyed(dk, dx, np.dtype(np.int32),
                                        np.dtype(np.float32), False), sync)
print("  of which the packing pass:                  %.3f ms" % t_pack)
t_cum = loop_ms(lambda: gpured.cumsum(dx), sync)
print("gpured.cumsum (no keys), for scale:           %.3f ms" % t_cum)
if torch is not None:
    try:
        tx = torch.from_numpy(x).cuda()
        print("torch.cumsum (no keys):                       %.3f ms"
              % loop_ms(lambda: torch.cumsum(tx, 0), torch.cuda.synchronize))
    except Exception as e:  # a peer lacking something: say so, keep going
        print("torch: %s" % e)
if cp is not None:
    try:
        cx = cp.asarray(x)
        print("cupy.cumsum (no keys):                        %.3f ms"
              % loop_ms(lambda: cp.cumsum(cx),
                        cp.cuda.Device().synchronize))
    except Exception as e:
        print("cupy: %s" % e)
