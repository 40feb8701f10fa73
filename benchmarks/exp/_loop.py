"""The benchmarks' timing rule: a loop of calls on the same data, one
synchronisation at the end, the median over loops (ms per call)."""
import statistics
import time


def loop_ms(fn, sync, calls=10, loops=5):
    fn()
    sync()
    ts = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        ts.append((time.perf_counter() - t0) / calls)
    return statistics.median(ts) * 1e3
