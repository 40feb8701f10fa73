"""Does a CL_MEM_USE_HOST_PTR buffer page-lock the NumPy memory it wraps on
NVIDIA's OpenCL, so that later clEnqueueWriteBuffer/ReadBuffer from that
memory run at pinned DMA speed (the cudaHostRegister of OpenCL)?  And the
cost of registering and releasing, by size.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/hostreg.py
"""
import time

import numpy as np
import pyopencl as cl


def ms(t0):
    return (time.perf_counter() - t0) * 1e3


def nvidia_queue():
    """A context and queue on the first NVIDIA GPU (also for hostreg2.py)."""
    p = [p for p in cl.get_platforms() if "NVIDIA" in p.name][0]
    ctx = cl.Context([p.get_devices()[0]])
    return ctx, cl.CommandQueue(ctx)


def main():
    ctx, q = nvidia_queue()
    mf = cl.mem_flags
    n = 1 << 28
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.empty_like(a)
    d = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
    for k in range(2):
        t0 = time.perf_counter(); cl.enqueue_copy(q, d, a); q.finish()
        print("E2 write 1 GiB from unregistered NumPy: %.1f ms" % ms(t0))
    for k in range(2):
        t0 = time.perf_counter(); cl.enqueue_copy(q, b, d); q.finish()
        print("E2 read 1 GiB into unregistered NumPy: %.1f ms" % ms(t0))
    t0 = time.perf_counter()
    ha = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a)
    print("E1 register a (USE_HOST_PTR create): %.1f ms" % ms(t0))
    t0 = time.perf_counter()
    hb = cl.Buffer(ctx, mf.WRITE_ONLY | mf.USE_HOST_PTR, hostbuf=b)
    print("E1 register b: %.1f ms" % ms(t0))
    for k in range(3):
        t0 = time.perf_counter(); cl.enqueue_copy(q, d, a); q.finish()
        print("E1 write 1 GiB from registered a: %.1f ms" % ms(t0))
    for k in range(3):
        t0 = time.perf_counter(); cl.enqueue_copy(q, b, d); q.finish()
        print("E1 read 1 GiB into registered b: %.1f ms, equal %s" % (
            ms(t0), np.array_equal(a, b)))
    # host writes to a, then a write from a: is the new content uploaded?
    a[12345] = 7.0
    cl.enqueue_copy(q, d, a); b[:] = 0; cl.enqueue_copy(q, b, d); q.finish()
    print("E1 host edit seen after write:", b[12345] == 7.0, "a kept:", a[12345] == 7.0)
    # a slice inside the registered range (offset pointer)
    t0 = time.perf_counter(); cl.enqueue_copy(q, d, a[1000:1000 + (n >> 2)]); q.finish()
    print("E1 write 256 MiB from inside registered a (offset): %.1f ms" % ms(t0))
    # map WRITE_INVALIDATE + unmap on the USE_HOST_PTR buffer: upload cost and host data kept
    a[777] = 5.0
    for k in range(3):
        t0 = time.perf_counter()
        m, _ = cl.enqueue_map_buffer(q, ha, cl.map_flags.WRITE_INVALIDATE_REGION, 0, a.shape, a.dtype)
        t1 = ms(t0)
        same = m.__array_interface__["data"][0] == a.__array_interface__["data"][0]
        m.base.release(q); q.finish()
        print("E3 map(WRITE_INVALIDATE)+unmap USE_HOST_PTR: map %.1f ms, total %.1f ms, "
              "map ptr is host ptr %s, host kept %s" % (t1, ms(t0), same, a[777] == 5.0))
    t0 = time.perf_counter(); del ha; import gc; gc.collect()
    print("E5 release a's registration: %.1f ms" % ms(t0))
    del hb
    for k in range(2):
        t0 = time.perf_counter(); cl.enqueue_copy(q, d, a); q.finish()
        print("E5 write 1 GiB from a after release: %.1f ms" % ms(t0))
    for mib in (1, 16, 256, 1024):
        x = a[: mib << 18]
        ts = []
        for k in range(3):
            t0 = time.perf_counter()
            h = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=x)
            t1 = ms(t0)
            t0 = time.perf_counter(); cl.enqueue_copy(q, d, x); q.finish(); t2 = ms(t0)
            t0 = time.perf_counter(); h.release(); t3 = ms(t0)
            ts.append((t1, t2, t3))
        print("E4 %4d MiB: register %s ms, write %s ms, release %s ms" % (
            mib, ["%.2f" % t[0] for t in ts], ["%.2f" % t[1] for t in ts],
            ["%.2f" % t[2] for t in ts]))
    # unaligned NumPy (offset 4 bytes into a page)
    x = a[1: 1 + (1 << 26)]
    t0 = time.perf_counter()
    h = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=x); t1 = ms(t0)
    t0 = time.perf_counter(); cl.enqueue_copy(q, d, x); q.finish()
    print("E6 unaligned 256 MiB: register %.1f ms, write %.1f ms" % (t1, ms(t0)))


if __name__ == "__main__":
    main()
