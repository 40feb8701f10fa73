"""Look-back scan tiles: the run re-read from the exchange buffer after the
look-back (GRS_REREAD, default where the tile is striped) against held in
registers (GRS_REREAD 0), over dtypes and tile shapes.  Kernel events of
1 GiB (one row) and the same bytes as rows of 65536, median of timeits.

    python3 benchmarks/exp/scan_reread.py [dtypes] [shapes]
    e.g. float32,float64 "256x32,512x32,256x16"
"""
import os, sys
import numpy as np
import gpured

dts = (sys.argv[1] if len(sys.argv) > 1 else "float32,float64,int64").split(",")
shapes = [tuple(map(int, s.split("x"))) for s in
          (sys.argv[2].split(",") if len(sys.argv) > 2 else [])]
rng = np.random.default_rng(0)
for dt in dts:
    n = (1 << 30) // np.dtype(dt).itemsize
    a = (rng.standard_normal(n).astype(dt) if dt.startswith("float")
         else rng.integers(-100, 100, n).astype(dt))
    m = a.reshape(-1, 65536)
    want = np.cumsum(a[: 1 << 20], dtype=np.float64 if dt.startswith("float") else None)
    for knob in ("", "GRS_REREAD 0"):
        os.environ["GPURED_SCAN_XDEFS"] = ("#define " + knob) if knob else ""
        for sh in [None] + shapes:
            kw = {} if sh is None else {"wg_size": sh[0], "items": sh[1]}
            try:
                ts = [gpured.timeit("cumsum", a, reps=10, **kw)["seconds"] for _ in range(2)]
                r = gpured.timeit("cumsum", a, reps=3, **kw)
                got = np.asarray(r["result"])[: 1 << 20]
                ok = np.allclose(got, want, rtol=1e-4, atol=1e-2 * np.sqrt(1 << 20))
                p = r["plan"]
                del r
                tr = gpured.timeit("cumsum", m, axis=1, reps=10, **kw)["seconds"]
                print("%-8s %-14s %4dx%-3d 1GiB %.3f ms  rows %.3f ms  ok=%s"
                      % (dt, knob or "reread", p["wg_size"], p["items"], min(ts) * 1e3,
                         tr * 1e3, ok), flush=True)
            except Exception as e:
                print(dt, knob, sh, "ERROR", str(e)[:200], flush=True)
