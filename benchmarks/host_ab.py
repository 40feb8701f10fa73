"""Host-path speed, A/B in one process (issue 39's check): gpured (this
tree) against another build, 64 MiB float32 sum and cumsum, rounds
alternated (5 x best of 8), and NumPy.  A noisy shared machine moves
each figure by +-10% from run to run; alternating in one process keeps
new/base within a few per cent.

    cp -r /path/to/main/gpured DIR/gpured_base   # the other build's package
    python benchmarks/host_ab.py DIR             # GPURED_HOST_THREADS=2: the pool
"""
import sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
import gpured, gpured_base
assert gpured._core.__file__ != gpured_base._core.__file__
a = np.random.default_rng(0).random(1 << 24, dtype=np.float32)
out = np.empty_like(a)
def best(f, n=40):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts)
for name, fs in (("sum", {"new": lambda: gpured.sum(a), "base": lambda: gpured_base.sum(a), "numpy": lambda: np.sum(a)}),
                 ("cumsum", {"new": lambda: gpured.cumsum(a, out=out), "base": lambda: gpured_base.cumsum(a, out=out), "numpy": lambda: np.cumsum(a, out=out)})):
    res = {k: [] for k in fs}
    for r in range(5):
        for k, f in fs.items():
            f(); res[k].append(best(f, 8))
    b = {k: min(v) for k, v in res.items()}
    print("%-6s new %.2f ms  base %.2f ms  numpy %.2f ms  new/base %.3f  numpy/new %.2f  numpy/base %.2f" % (
        name, b["new"]*1e3, b["base"]*1e3, b["numpy"]*1e3, b["new"]/b["base"], b["numpy"]/b["new"], b["numpy"]/b["base"]))
