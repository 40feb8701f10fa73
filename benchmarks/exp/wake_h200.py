"""How long a thread blocked on a queue takes to wake (issue 43: after the
GPU is done, Dask's threaded compute() of a one-task graph returns 0.5 ms
later than its sync scheduler's on the H200 host).  A waiter blocks in
queue.get(); after W ms the putter (spinning on the clock, the GIL
released by C sleeps of 0) puts; the waiter's latency from the put, median
of 50, for W from 0.05 to 8 ms; then the same with the waiter spinning
(get with timeout 0 in a loop).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/wake_h200.py
"""
import queue
import statistics
import threading
import time


def one(wait_ms, spin):
    q = queue.Queue()
    got = []

    def waiter():
        if spin:
            while True:
                try:
                    q.get_nowait()
                    break
                except queue.Empty:
                    time.sleep(0)
        else:
            q.get()
        got.append(time.perf_counter())
    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.002)
    end = time.perf_counter() + wait_ms / 1e3
    while time.perf_counter() < end:
        time.sleep(0)
    t0 = time.perf_counter()
    q.put(1)
    t.join()
    return (got[0] - t0) * 1e6


for spin in (False, True):
    for w in (0.05, 0.5, 2, 4, 8):
        v = [one(w, spin) for _ in range(50)]
        print("%s wait %5.2f ms: wake %.1f us (p90 %.1f)" % (
            "spin " if spin else "block", w, statistics.median(v),
            sorted(v)[44]), flush=True)
