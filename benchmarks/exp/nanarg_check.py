"""nanargmin/nanargmax of device arrays: the device's check of the indices
found (reduce.cl gr_nanarg_check, the face's mode 3) -- its flag, the
plan, and wall clock beside argmax and sum (loops of calls, one sync).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/nanarg_check.py [MiB]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402
from gpured import _core  # noqa: E402
from gpured._reduce import _NoValue  # noqa: E402

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 1024
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64):
    n = int(mib * 2**20) // np.dtype(dt).itemsize
    a = rng.standard_normal(n).astype(dt)
    a[rng.random(n) < 0.1] = np.nan
    d = gpured.to_device(a)
    for f in ("nanargmax", "nanargmin"):
        r, flag = _core.reduce(f, d, None, None, None, False, _NoValue, {}, None, 3)
        e = gpured.explain(f, d)
        print(np.dtype(dt).name, f, "index", int(r.get()), "numpy",
              getattr(np, f)(a), "flag", flag,
              {k: e.get(k) for k in ("variant", "wg_size", "groups", "vw", "passes")})
    for f in ("sum", "argmax", "nanargmax", "argmin", "nanargmin"):
        g = getattr(gpured, f)
        print("  %-9s wall %.4f ms" % (f, loop_ms(lambda: g(d), gpured.synchronize, 10)))
    g = gpured.argmax
    print("  argmax + read   %.4f ms" % loop_ms(lambda: int(g(d).get()), gpured.synchronize, 10))
    print("  mode 3 nanargmax %.4f ms" % loop_ms(
        lambda: _core.reduce("nanargmax", d, None, None, None, False, _NoValue, {}, None, 3),
        gpured.synchronize, 10))
    del d
