"""Column sums (axis 0) of a device-resident 4096 x 65536 float32 matrix
on a GPU: the auto plan and forced (vw, groups) geometries, wall clock of
loops of calls synchronised once, kernel events beside; torch in the same
process.  Issue 15's row "column sums at the bandwidth of full sums".

    bash benchmarks/gpu_run.sh exp benchmarks/exp/gpu_columns.py
    (QUICK=1: only auto, 4 and 5 parts)
"""
import os
import sys

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_torch  # noqa: E402

torch = optional_torch()
a = np.random.default_rng(0).standard_normal((4096, 65536), dtype=np.float32)
x = gpured.to_device(a)
want = a.sum(axis=0, dtype=np.float64)
rows = []
if torch is not None and torch.cuda.is_available():
    t = torch.from_numpy(a).cuda()
    tt = loop_ms(lambda: t.sum(dim=0), torch.cuda.synchronize, 20)
    rows.append("torch %.4f ms" % tt)
    print(rows[-1], flush=True)
else:
    tt = float("nan")
full = loop_ms(lambda: gpured.sum(x), gpured.synchronize, 20)
print("full sum %.4f ms" % full, flush=True)
confs = [{}] + [dict(vw=v, groups=g) for v in (1, 2, 4) for g in (2, 4, 8, 16, 32)] \
    + [dict(vw=v, wg_size=w) for v in (1, 4) for w in (128, 512)]
if os.environ.get("QUICK"):
    confs = [{}, dict(groups=4), dict(groups=5)]
for kw in confs * 2:
    got = gpured.sum(x, axis=0, **kw).get()
    ok = np.allclose(got, want, rtol=1e-5, atol=1e-3)
    w = loop_ms(lambda: gpured.sum(x, axis=0, **kw), gpured.synchronize, 20)
    ev = gpured.timeit("sum", x, axis=0, reps=10, **kw)
    p = ev["plan"]
    line = "%-28s vw %2d wg %3d groups %3d  wall %.4f ms events %.4f  torch/ours %.3f ok=%s" % (
        kw or "auto", p["vw"], p["wg_size"], p["groups"], w, ev["seconds"] * 1e3, tt / w, ok)
    print(line, flush=True)
    rows.append(line)
print("\n".join(rows))
