"""Two GPUs: does memory page-locked through one GPU's context (a
USE_HOST_PTR buffer there) copy at the DMA rate to the other GPU too?
(a) one context per GPU, as gpured opens them; (b) one context holding
both.  And both GPUs pulling from registered memory at once.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/hostreg_2gpu.py
"""
import os
import sys
import threading
import time

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostreg import ms  # noqa: E402


def main():
    plat = [p for p in cl.get_platforms() if "NVIDIA" in p.name][0]
    devs = plat.get_devices()
    print("GPUs:", [d.name for d in devs])
    if len(devs) < 2:
        return
    mf = cl.mem_flags
    n = 1 << 28
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    ctx = [cl.Context([d]) for d in devs[:2]]
    q = [cl.CommandQueue(c) for c in ctx]
    d = [cl.Buffer(c, mf.READ_WRITE, a.nbytes) for c in ctx]

    def write(k, x=a):
        t0 = time.perf_counter(); cl.enqueue_copy(q[k], d[k], x); q[k].finish()
        return ms(t0)

    print("(a) pageable: GPU0 %.1f ms, GPU1 %.1f ms" % (write(0), write(1)))
    h0 = cl.Buffer(ctx[0], mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a)
    print("(a) registered in GPU0's context: GPU0 %.1f ms, GPU1 %.1f ms, GPU1 again %.1f"
          % (write(0), write(1), write(1)))
    t0 = time.perf_counter()
    h1 = cl.Buffer(ctx[1], mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a)
    print("(a) registering in GPU1's context too: %.1f ms" % ms(t0))
    print("(a) both registered: GPU0 %.1f ms, GPU1 %.1f ms" % (write(0), write(1)))
    # both at once, halves of a
    half = n // 2
    ts = {}

    def pull(k):
        t0 = time.perf_counter()
        cl.enqueue_copy(q[k], d[k], a[k * half:(k + 1) * half]); q[k].finish()
        ts[k] = ms(t0)
    for rep in range(2):
        t0 = time.perf_counter()
        th = [threading.Thread(target=pull, args=(k,)) for k in range(2)]
        [t.start() for t in th]
        [t.join() for t in th]
        print("(a) both GPUs at once, 512 MiB each: %.1f ms wall (%.1f / %.1f)" % (
            ms(t0), ts[0], ts[1]))
    h0.release(); h1.release()
    print("(a) released: GPU0 %.1f ms" % write(0))
    # (b) one context, two devices
    c2 = cl.Context(devs[:2])
    qq = [cl.CommandQueue(c2, dv) for dv in devs[:2]]
    dd = [cl.Buffer(c2, mf.READ_WRITE, a.nbytes) for _ in range(2)]

    def write2(k):
        t0 = time.perf_counter(); cl.enqueue_copy(qq[k], dd[k], a); qq[k].finish()
        return ms(t0)
    print("(b) shared context, pageable: %.1f / %.1f ms" % (write2(0), write2(1)))
    hb = cl.Buffer(c2, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a)
    print("(b) registered once in the shared context: %.1f / %.1f ms" % (write2(0), write2(1)))
    hb.release()


if __name__ == "__main__":
    main()
