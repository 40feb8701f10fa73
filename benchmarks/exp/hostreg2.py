"""After clReleaseMemObject on a USE_HOST_PTR buffer (NVIDIA), is the host
memory unpinned?  And does a new array at the same address copy its own
data (no stale registration)?

    bash benchmarks/gpu_run.sh exp benchmarks/exp/hostreg2.py
"""
import gc
import os
import sys
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostreg import ms, nvidia_queue  # noqa: E402


def main():
    ctx, q = nvidia_queue()
    mf = cl.mem_flags
    n = 1 << 28
    d = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    back = np.empty(n, np.float32)

    def write(x, label):
        t0 = time.perf_counter(); cl.enqueue_copy(q, d, x); q.finish(); t = ms(t0)
        cl.enqueue_copy(q, back, d); q.finish()
        print("%-44s %7.1f ms  data ok %s  ptr %x" % (
            label, t, np.array_equal(back, x), x.__array_interface__["data"][0]))

    a2 = np.full(n, 2.0, np.float32)
    write(a2, "a2 unregistered")
    t0 = time.perf_counter()
    h = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a2)
    print("register a2 %.1f ms" % ms(t0))
    write(a2, "a2 registered")
    t0 = time.perf_counter(); h.release(); del h; gc.collect()
    print("release %.1f ms" % ms(t0))
    write(a2, "a2 after release")
    write(a2, "a2 after release (again)")
    addr = a2.__array_interface__["data"][0]
    del a2; gc.collect()
    a3 = np.full(n, 3.0, np.float32)
    print("a3 at the same address:", a3.__array_interface__["data"][0] == addr)
    write(a3, "a3 (new array)")
    # register a4, free a4 while registered (a buggy user of registration),
    # then a5 at the same address
    a4 = np.full(n, 4.0, np.float32)
    h4 = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a4)
    write(a4, "a4 registered")
    addr = a4.__array_interface__["data"][0]
    h4.release(); del h4
    del a4; gc.collect()
    a5 = np.full(n, 5.0, np.float32)
    print("a5 at a4's address:", a5.__array_interface__["data"][0] == addr)
    write(a5, "a5 after a4 released then freed")
    # register by a buffer over a sub-range: does the whole array copy fast?
    a6 = np.full(n, 6.0, np.float32)
    h6 = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a6[: n // 2])
    write(a6, "a6 half registered")
    write(a6[: n // 2], "a6 registered half")
    h6.release()


if __name__ == "__main__":
    main()
