"""var/nanvar of host float32 arrays (values ~1e3) against numpy.var /
numpy.nanvar on this machine, 1 KiB to 64 MiB: ms per call (a loop of calls,
median of 5 loops), the ratio (numpy / gpured), and where placement put
the call."""
import numpy as np, gpured, time, statistics, warnings
warnings.simplefilter("ignore")
def t(f, calls):
    f(); ts=[]
    for _ in range(5):
        t0=time.perf_counter()
        for _ in range(calls): f()
        ts.append((time.perf_counter()-t0)/calls)
    return statistics.median(ts)*1e3
rng=np.random.default_rng(0)
print("size      var ms  numpy ms  ratio | nanvar ms numpy ms ratio | where")
for kib in [1, 64, 1024, 16384, 65536]:
    a=(rng.standard_normal(kib*256)+1e3).astype(np.float32)
    b=a.copy(); b[rng.random(a.size)<0.1]=np.nan
    c = max(3, 2000//kib)
    g=t(lambda: gpured.var(a), c); n=t(lambda: np.var(a), c)
    g2=t(lambda: gpured.nanvar(b), c); n2=t(lambda: np.nanvar(b), c)
    print("%6d KiB %8.3f %8.3f %6.2f | %8.3f %8.3f %6.2f | %s" % (kib, g, n, n/g, g2, n2, n2/g2, gpured.explain("var", a)["placement"]))
