"""Issue 43 probes on the H200 (eighteenth session): the 1 KiB call after
the kernel-memo fix (reduce/scan keys over 96 bytes missed the memo), and
the look-back scan's tile geometry swept on 1 GiB float32/float64 cumsum,
wall clock of loops of calls beside torch, against a same-bytes copy.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/h200_s18_lead.py
    SCAN=0 ... skips the sweep
"""
import os, sys
import numpy as np
import gpured
from gpured import _core
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_torch, optional_cupy

torch, cp = optional_torch(), optional_cupy()
sync = gpured.synchronize
# --- 1 KiB device sum, per call
s = gpured.to_device(np.ones(256, np.float32))
row = {"gpured": loop_ms(lambda: gpured.sum(s), sync, calls=2000, loops=7)}
if torch is not None:
    ts = torch.ones(256, dtype=torch.float32, device="cuda")
    row["torch"] = loop_ms(lambda: ts.sum(), torch.cuda.synchronize, calls=2000, loops=7)
if cp is not None:
    cs = cp.ones(256, np.float32)
    row["cupy"] = loop_ms(lambda: cs.sum(), cp.cuda.Device().synchronize, calls=2000, loops=7)
print("1 KiB sum per call (us):", {k: round(v * 1e3, 2) for k, v in row.items()}, flush=True)
sc = gpured.to_device(np.ones(256, np.float32))
print("1 KiB cumsum per call (us): gpured %.2f" % (1e3 * loop_ms(lambda: gpured.cumsum(sc), sync, calls=2000, loops=7)), flush=True)
if os.environ.get("SCAN", "1") == "0":
    sys.exit(0)
ns = float(np.median(_core.copy_bandwidth(1 << 30, 10)[1:]))
print("copy of 1 GiB (events): %.3f ms, %.0f GB/s read+write; 90%% of it: %.3f ms" % (
    ns / 1e6, 2 * (1 << 30) / ns, ns / 1e6 / 0.9), flush=True)
rng = np.random.default_rng(0)
for dt, geoms in ((np.float32, [(256, 32), (128, 32), (128, 64), (512, 16), (256, 16), (64, 64), (512, 8), (1024, 8)]),
                  (np.float64, [(128, 32), (256, 16), (64, 64), (128, 16), (512, 8)])):
    n = (1 << 30) // np.dtype(dt).itemsize
    h = rng.standard_normal(n).astype(dt)
    d = gpured.to_device(h)
    p = gpured.explain("cumsum", d)
    t = loop_ms(lambda: gpured.cumsum(d), sync)
    line = "%s auto %s x %s: %.3f ms" % (np.dtype(dt).name, p["wg_size"], p.get("items"), t)
    if torch is not None:
        x = torch.from_numpy(h).cuda()
        line += "  torch %.3f" % loop_ms(lambda: torch.cumsum(x, 0), torch.cuda.synchronize)
        del x
        torch.cuda.empty_cache()
    print(line, flush=True)
    for wg, it in geoms:
        try:
            r = gpured.cumsum(d, variant="decoupled_lookback", wg_size=wg, items=it)
            got = np.asarray(r[-1:])[0]
            tt = loop_ms(lambda: gpured.cumsum(d, variant="decoupled_lookback", wg_size=wg, items=it), sync)
            print("   wg %4d items %3d  %.3f ms  last %.6g" % (wg, it, tt, got), flush=True)
            del r
        except Exception as e:
            print("   wg %4d items %3d  ERR %s" % (wg, it, str(e)[:80]), flush=True)
    for xd in ("GR_BACKOFF_NS 0", "GR_BACKOFF_NS 256"):
        os.environ["GPURED_SCAN_XDEFS"] = "#define " + xd
        tt = loop_ms(lambda: gpured.cumsum(d), sync)
        print("   %s  %.3f ms" % (xd, tt), flush=True)
        del os.environ["GPURED_SCAN_XDEFS"]
    del d
