"""Where does wall time exceed kernel events?  Per-call wall (10 and 100
calls per loop), the host's enqueue-only time per call, and events, for a
1 GiB and a 1 KiB float32 device sum; torch beside."""
import faulthandler, os, sys, time, statistics
faulthandler.dump_traceback_later(240, exit=True)
import numpy as np
import gpured
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms


def enqueue_us(fn, sync, calls):
    fn(); sync()
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        sync()
        ts.append((t1 - t0) / calls)
    return statistics.median(ts) * 1e6


tag = os.environ.get("TAG", "")
for n, calls in ((1 << 28, 100), (256, 2000)):
    a = np.ones(n, np.float32)
    d = gpured.to_device(a)
    f = lambda: gpured.sum(d)
    w10 = loop_ms(f, gpured.synchronize, 10) * 1e3
    wN = loop_ms(f, gpured.synchronize, calls) * 1e3
    eq = enqueue_us(f, gpured.synchronize, calls)
    ev = gpured.timeit("sum", d, reps=5)["seconds"] * 1e6
    print("%s gpured sum %9d B: wall/call %.1f us (10 calls) %.1f us (%d calls); "
          "enqueue-only %.1f us; events %.1f us" % (tag, a.nbytes, w10, wN, calls, eq, ev),
          flush=True)
    if n == 256:
        e = gpured.empty((), np.float64)
        print("%s   empty(()) %.2f us; sum(d, out=0-d) %.1f us" % (
            tag, loop_ms(lambda: gpured.empty((), np.float32), gpured.synchronize, 2000) * 1e3,
            loop_ms(lambda: gpured.sum(d, out=e), gpured.synchronize, 2000) * 1e3), flush=True)
    del d
if os.environ.get("PEERS", "1") == "1":
    import torch
    for n, calls in ((1 << 28, 100), (256, 2000)):
        t = torch.ones(n, dtype=torch.float32, device="cuda")
        f = lambda: t.sum()
        print("torch sum %9d B: wall/call %.1f us; enqueue-only %.1f us" % (
            n * 4, loop_ms(f, torch.cuda.synchronize, calls) * 1e3,
            enqueue_us(f, torch.cuda.synchronize, calls)), flush=True)
    try:
        import pyopencl as cl
        ctx = cl.Context([dd for p in cl.get_platforms() if "NVIDIA" in p.name
                          for dd in p.get_devices()])
        q = cl.CommandQueue(ctx)
        prg = cl.Program(ctx, "__kernel void k(__global float *x){ if (get_global_id(0)==0) x[0]+=1.0f; }").build()
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16)
        k = prg.k; k.set_args(buf)
        f = lambda: cl.enqueue_nd_range_kernel(q, k, (64,), (64,))
        print("pyopencl tiny kernel: wall/call %.1f us; enqueue-only %.1f us" % (
            loop_ms(f, q.finish, 2000) * 1e3, enqueue_us(f, q.finish, 2000)), flush=True)
    except Exception as e:
        print("pyopencl:", e)
