"""Ctrl-C on the host path (issue 39): the delay from SIGINT to
KeyboardInterrupt in a host-path call of 2**LOG2N float32 ones (every
device priced out), and whether the next call is right.

    python benchmarks/host_sigint.py FUNC THREADS WAIT [LOG2N]

FUNC: sum cumsum exact var nansum argmax sum_cols sum_colz argmax_cols
cumsum_cols cumsum_nan mean_where; WAIT: seconds from the call's start to
SIGINT.  Another build (main's, for a before/after): PYTHONPATH=DIR where
DIR/gpured is that build's package.  Prints "delay D s INTERRUPTED T"
(T: seconds into the call) or "RETURNED T" (the call ended first)."""
import os, signal, subprocess, sys, time
import numpy as np

def calls(gpured, a):
    w = np.ones(a.shape, bool)
    return {
        "sum": lambda: gpured.sum(a), "cumsum": lambda: gpured.cumsum(a),
        "exact": lambda: gpured.sum(a, exact=True), "var": lambda: gpured.var(a),
        "nansum": lambda: gpured.nansum(a), "argmax": lambda: gpured.argmax(a),
        "sum_cols": lambda: gpured.sum(a.reshape(-1, 64), axis=0),
        "sum_colz": lambda: gpured.sum(a.reshape(-1, 1024), axis=0),
        "argmax_cols": lambda: gpured.argmax(a.reshape(-1, 64), axis=0),
        "cumsum_cols": lambda: gpured.cumsum(a.reshape(-1, 64), axis=0),
        "cumsum_nan": lambda: gpured.nancumsum(a),
        "mean_where": lambda: gpured.mean(a, where=w),
    }

def child(func, th, lg):
    import gpured
    for d in gpured.devices():
        gpured.set_rates(device=d["index"], device_call_us=1e9)
    gpured.set_host_threads(int(th))
    a = np.ones(1 << int(lg), np.float32)
    f = calls(gpured, a)[func]
    calls(gpured, a[:1 << 20])[func]()
    print("START", flush=True)
    t0 = time.perf_counter()
    try:
        f()
        print("RETURNED %.3f" % (time.perf_counter() - t0), flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED %.3f" % (time.perf_counter() - t0), flush=True)
    b = np.random.default_rng(1).random(1 << 22, dtype=np.float32)
    g = calls(gpured, b)[func]()
    ref = calls(np, b.astype(np.float64))[func.replace("exact", "sum")]() if func not in ("sum_cols", "sum_colz", "argmax_cols", "cumsum_cols", "cumsum_nan", "mean_where") else None
    ok = ref is None or np.allclose(g, ref, rtol=1e-5)
    print("AFTER", "ok" if ok else "wrong", flush=True)

def parent(func, th, wait, lg):
    p = subprocess.Popen([sys.executable, __file__, "child", func, th, lg],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("START"), line
    time.sleep(wait)
    t = time.monotonic()
    os.kill(p.pid, signal.SIGINT)
    line = p.stdout.readline()
    d = time.monotonic() - t
    after = p.stdout.readline().strip()
    p.wait()
    print("%-11s threads=%s n=2^%s: delay %.3f s  %s  %s" % (func, th, lg, d, line.strip(), after), flush=True)

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(*sys.argv[2:5])
    else:
        parent(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "28")
