"""reduce_by_key's single pass (variant lookback) on issue 15's shape:
2^28 int32 keys in runs of 64, float32 values, on the device.  Wall clock
of loops of calls (synchronised once, median of loops) and kernel events,
for each block of kernel defines (GPURED_BYKEY_XDEFS, ";" between
defines, "" the defaults; "DEFS|OPTS" adds build options,
GPURED_BYKEY_XOPTS) and each geometry; each result checked.  Then
ptxas's registers of each gr_bk_lb_tiles built (NVIDIA).

    bash benchmarks/gpu_run.sh exp "benchmarks/exp/bykey_lb.py [DEFS ...]"
    GEOMS="128x16,256x8" to choose geometries (default: the plan's);
    KDT, VDT the keys' and values' dtypes (int32, float32), LOG2N the size.
"""
import glob
import os
import subprocess
import sys
import time

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms  # noqa: E402

CUB_MS = 1.135  # issue 15: CUB ReduceByKey, H100, by events
LOG2 = int(os.environ.get("LOG2N", 28))
n = 1 << LOG2
dev = gpured.get_device()
KDT, VDT = os.environ.get("KDT", "int32"), os.environ.get("VDT", "float32")
print("%s: 2^%d %s keys in runs of 64, %s values" % (dev["name"], LOG2, KDT, VDT), flush=True)
k = (np.arange(n, dtype=np.int64) >> 6).astype(KDT)
v = np.random.default_rng(0).integers(0, 8, n).astype(VDT)
want = np.add.reduceat(v.astype(np.float64), np.arange(0, n, 64))
kd, vd = gpured.to_device(k), gpured.to_device(v)
del k
geoms = [None]
if os.environ.get("GEOMS"):
    geoms = [tuple(int(x) for x in g.split("x")) for g in os.environ["GEOMS"].split(",")]
cache = os.environ.get("GPURED_CACHE_DIR", "/tmp/gpured-cache")
ptxas = "/usr/local/cuda/bin/ptxas"


def registers(since):
    """ptxas -v of the gr_bk_lb_tiles cached since `since` (NVIDIA)."""
    out = []
    if not os.path.exists(ptxas):
        return out
    for f in sorted(glob.glob(cache + "/*.bin")):
        if os.path.getmtime(f) < since:
            continue
        t = open(f, "rb").read().decode("latin1")
        if "gr_bk_lb_tiles" not in t or ".version" not in t:
            continue
        open("/tmp/k.ptx", "w").write(t[t.find(".version"):t.rfind("}") + 1].replace("\0", "") + "\n")
        err = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90", "/tmp/k.ptx", "-o", "/tmp/k.cubin"],
                             capture_output=True, text=True).stderr.splitlines()
        for i, ln in enumerate(err):
            if "Compiling entry function 'gr_bk_lb_tiles'" in ln:
                out += [x.split("info    :")[-1].strip() for x in err[i + 1:i + 4] if "Used" in x]
    return out


rows = []
seen = set()
for defs in (sys.argv[1:] or [""]) * 2:
    xd, _, xo = defs.partition("|")
    xd = "\n".join("#define " + d.strip() for d in xd.split(";") if d.strip())
    for name, val in (("GPURED_BYKEY_XDEFS", xd), ("GPURED_BYKEY_XOPTS", xo)):
        if val:
            os.environ[name] = val
        else:
            os.environ.pop(name, None)
    for g in geoms:
        since = time.time() - 1
        kw = {"variant": "lookback"}
        if g:
            kw.update(wg_size=g[0], items=g[1])
        try:
            uk, got = gpured.reduce_by_key(kd, vd, **kw)
            got = got.get() if hasattr(got, "get") else got
            ok = got.size == want.size and bool(np.all(got == want))
            wall = loop_ms(lambda: gpured.reduce_by_key(kd, vd, **kw), gpured.synchronize, 10)
            r = gpured.timeit_by_key("reduce_by_key", kd, vd, reps=10, **kw)
            ev = r["seconds"] * 1e3
            tag = "%-40s %dx%d" % (defs or "(defaults)", r["plan"]["wg_size"], r["plan"]["items"])
            line = "%s wall %.3f ms events %.3f ms  CUB/wall %.2f ok=%s" % (
                tag, wall, ev, CUB_MS / wall, ok)
        except Exception as e:  # noqa: BLE001
            line = "%-40s %s FAILED %s" % (defs, g, str(e)[:200])
        if (defs, g) not in seen:
            seen.add((defs, g))
            line += " | " + "; ".join(registers(since))
        print(line, flush=True)
        rows.append(line)
print("\n".join(rows))
