"""Wall clock of 1 GiB scans on device arrays beside torch and CuPy (loops
of calls, one sync a loop, median of loops), kernel events beside.

    python3 benchmarks/exp/scan_peers.py [what,...]
    what: f32 f64 i64 i32 nan32 nan64 max64 prod64 rows cols
"""
import os, sys
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_torch

torch = optional_torch()
try:
    import cupy as cp
except ImportError:
    cp = None
W = (sys.argv[1] if len(sys.argv) > 1 else "f32,f64,i64,i32,rows,cols").split(",")
rng = np.random.default_rng(0)
GIB = float(os.environ.get("GIB", "1"))
CASES = {"f32": ("cumsum", np.float32, None, None), "f64": ("cumsum", np.float64, None, None),
         "i64": ("cumsum", np.int64, None, None), "i32": ("cumsum", np.int32, None, None),
         "nan32": ("nancumsum", np.float32, None, None), "nan64": ("nancumsum", np.float64, None, None),
         "max64": ("cummax", np.float64, None, None), "prod64": ("cumprod", np.float64, None, None),
         "rows": ("cumsum", np.float32, (4096, 65536), 1), "cols": ("cumsum", np.float32, (4096, 65536), 0)}
print("%-8s %9s %9s %9s %9s %7s  %s" % ("case", "gpured", "events", "torch", "cupy", "best/us", "plan"))
for w in W:
    op, dt, shape, axis = CASES[w]
    n = int(GIB * (1 << 30)) // np.dtype(dt).itemsize
    shape = shape or (n,)
    if axis is not None:
        shape = (max(1, int(shape[0] * GIB)), shape[1])
    if np.dtype(dt).kind == "f":
        h = rng.standard_normal(shape).astype(dt)
        if op == "cumprod":
            h = (1 + h / 1024).astype(dt)
        if op == "nancumsum":
            h[rng.random(shape) < 0.1] = np.nan
    else:
        h = rng.integers(-100, 100, shape).astype(dt)
    d = gpured.to_device(h)
    kw = {} if axis is None else {"axis": axis}
    gk = dict(kw, **{k: int(v) for k, v in (x.split("=") for x in
                     os.environ.get("PLAN_KW", "").split(",") if x)})
    f = getattr(gpured, op)
    r = f(d, **gk)
    ref = (np.maximum.accumulate if op == "cummax" else getattr(np, op))(h[:1 << 16] if axis is None else h[:, :64], axis=0 if axis is None else axis)
    got = np.asarray(r)[:1 << 16] if axis is None else np.asarray(r)[:, :64]
    ok = np.allclose(got, ref, rtol=1e-3, atol=1e-2 * 256) if np.dtype(dt).kind == "f" else np.array_equal(got, ref)
    del r
    t = loop_ms(lambda: f(d, **gk), gpured.synchronize)
    ev = gpured.timeit(op, d, reps=5, **gk)
    plan = "%s %sx%s" % (ev["plan"].get("variant"), ev["plan"].get("wg_size"), ev["plan"].get("items"))
    ev = ev["seconds"] * 1e3
    tt = tc = float("nan")
    if torch is not None:
        x = torch.from_numpy(h).cuda()
        dim = 0 if axis is None else axis
        tf = (lambda: torch.nancumsum(x, dim)) if hasattr(torch, "nancumsum") and op == "nancumsum" else \
             (lambda: torch.cummax(x, dim)) if op == "cummax" else \
             (lambda: getattr(torch, op if op != "nancumsum" else "cumsum")(x, dim))
        tt = loop_ms(tf, torch.cuda.synchronize)
        del x
        torch.cuda.empty_cache()
    if cp is not None:
        y = cp.asarray(h)
        cf = getattr(cp, op) if op != "cummax" else None
        if cf is not None:
            tc = loop_ms(lambda: cf(y, **kw), cp.cuda.Device().synchronize)
        del y
        cp.get_default_memory_pool().free_all_blocks()
    best = min([v for v in (tt, tc) if v == v] or [float("nan")])
    print("%-8s %9.4f %9.4f %9.4f %9.4f %7.3f  %s ok=%s" % (w, t, ev, tt, tc, best / t, plan, ok), flush=True)
    del d
