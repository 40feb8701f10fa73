"""Can a GPU read a NumPy array in place through OpenCL (issue 12)?  And why
does PoCL's CPU device read a 1 GiB NumPy array slower than torch?

Part A, NVIDIA's OpenCL through PyOpenCL: one float4 sum kernel over
1 GiB float32 in (1) a device buffer, (2) a CL_MEM_USE_HOST_PTR buffer
wrapping the NumPy array (new buffer per call, and the same buffer again),
(3) a CL_MEM_ALLOC_HOST_PTR buffer read by the kernel directly, against
(4) a pageable clEnqueueWriteBuffer and gpured's pinned pipeline.
Part B, the CPU device (PoCL): gpured.sum of the NumPy array in place,
of a device-resident Array, and a plain float4 kernel over the NumPy array
wrapped in place, beside torch's CPU sum.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/hostptr.py [MIB]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import pyopencl as cl  # noqa: E402

SRC = """
__kernel void s4(__global const float4 *x, ulong n4, __global float *out) {
    float acc = 0.0f;
    for (ulong i = get_global_id(0); i < n4; i += get_global_size(0)) {
        float4 v = x[i]; acc += (v.x + v.y) + (v.z + v.w);
    }
    __local float l[256];
    l[get_local_id(0)] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (get_local_id(0) < s) l[get_local_id(0)] += l[get_local_id(0) + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (get_local_id(0) == 0) out[get_group_id(0)] = l[0];
}
"""


def ms(t0):
    return (time.perf_counter() - t0) * 1e3


KERNELS = {}


def kernel_sum(q, prg, buf, n, groups):
    out = cl.Buffer(q.context, cl.mem_flags.READ_WRITE, groups * 4)
    k = KERNELS.setdefault(id(prg), cl.Kernel(prg, "s4"))
    k(q, (groups * 256,), (256,), buf, np.uint64(n // 4), out)
    h = np.empty(groups, np.float32)
    cl.enqueue_copy(q, h, out)
    return float(h.astype(np.float64).sum())


def part_a(a, want):
    plats = [p for p in cl.get_platforms() if "NVIDIA" in p.name]
    if not plats:
        print("A: no NVIDIA platform")
        return
    dev = plats[0].get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    mf = cl.mem_flags
    n = a.size
    groups = dev.max_compute_units * 8
    print("A: device", dev.name)

    d = cl.Buffer(ctx, mf.READ_ONLY, a.nbytes)
    t0 = time.perf_counter(); cl.enqueue_copy(q, d, a); q.finish()
    print("A: pageable write 1 call %.1f ms" % ms(t0))
    kernel_sum(q, prg, d, n, groups)
    r = loop_ms(lambda: kernel_sum(q, prg, d, n, groups), q.finish, 10, 3)
    print("A1 device buffer: %.3f ms/call (sum ok %s)" % (
        r, abs(kernel_sum(q, prg, d, n, groups) - want) < 1e-3 * abs(want) + 1))
    del d

    for k in range(3):
        t0 = time.perf_counter()
        h = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a)
        t1 = ms(t0)
        s = kernel_sum(q, prg, h, n, groups); q.finish()
        print("A2 USE_HOST_PTR new buffer: create %.2f ms, create+sum %.2f ms, ok %s" % (
            t1, ms(t0), abs(s - want) < 1e-3 * abs(want) + 1))
    for k in range(3):
        t0 = time.perf_counter()
        s = kernel_sum(q, prg, h, n, groups); q.finish()
        print("A2' same USE_HOST_PTR buffer again: %.2f ms" % ms(t0))
    del h

    p = cl.Buffer(ctx, mf.READ_ONLY | mf.ALLOC_HOST_PTR, a.nbytes)
    m, _ = cl.enqueue_map_buffer(q, p, cl.map_flags.WRITE, 0, a.shape, a.dtype)
    t0 = time.perf_counter(); m[...] = a; print("A3 memcpy into mapped pinned: %.1f ms" % ms(t0))
    m.base.release(q); q.finish()
    for k in range(4):
        t0 = time.perf_counter()
        s = kernel_sum(q, prg, p, n, groups); q.finish()
        print("A3 kernel on ALLOC_HOST_PTR buffer: %.2f ms ok %s" % (
            ms(t0), abs(s - want) < 1e-3 * abs(want) + 1))
    # after a host write through a map: does the kernel see it (zero-copy or migrate)?
    m, _ = cl.enqueue_map_buffer(q, p, cl.map_flags.WRITE, 0, a.shape, a.dtype)
    m[:4] += 1.0
    m.base.release(q); q.finish()
    t0 = time.perf_counter()
    s = kernel_sum(q, prg, p, n, groups); q.finish()
    print("A3 after a mapped write: %.2f ms, delta %.1f (want 4)" % (ms(t0), s - want))
    m, _ = cl.enqueue_map_buffer(q, p, cl.map_flags.WRITE, 0, a.shape, a.dtype)
    m[:4] -= 1.0
    m.base.release(q); q.finish()
    del p

    import gpured
    gpu = [i for i, dd in enumerate(gpured.devices()) if dd["type"] == "GPU"]
    if gpu:
        gpured.set_device(gpu[0])
        gpured.placement("current")
        r = loop_ms(lambda: gpured.sum(a), lambda: None, 3, 3)
        print("A4 gpured.sum pinned pipeline: %.2f ms" % r)
        gpured.set_device(None)


def part_b(a, want):
    import gpured
    cpu = [i for i, dd in enumerate(gpured.devices()) if dd["type"] == "CPU"]
    if not cpu:
        print("B: no CPU device")
        return
    gpured.set_device(cpu[0])
    gpured.placement("current")
    print("B: device", gpured.get_device()["name"], gpured.get_device()["compute_units"])
    e = gpured.explain("sum", a)
    print("B explain:", {k: e[k] for k in e if k in ("variant", "plan", "why", "device",
                                                         "wg_size", "items", "groups")})
    r = loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5)
    print("B1 gpured.sum NumPy in place: %.2f ms (ok %s)" % (
        r, abs(float(gpured.sum(a)) - want) < 1e-3 * abs(want) + 1))
    x = gpured.to_device(a)
    r = loop_ms(lambda: float(gpured.sum(x)), lambda: None, 5, 5)
    print("B2 gpured.sum device Array: %.2f ms" % r)
    del x
    try:
        import torch
        t = torch.from_numpy(a)
        print("B3 torch CPU sum (%d threads): %.2f ms" % (
            torch.get_num_threads(), loop_ms(lambda: float(torch.sum(t)), lambda: None, 5, 5)))
    except ImportError:
        pass
    plats = [p for p in cl.get_platforms() if "Portable" in p.name]
    if plats:
        dev = plats[0].get_devices()[0]
        ctx = cl.Context([dev])
        q = cl.CommandQueue(ctx)
        prg = cl.Program(ctx, SRC).build()
        mf = cl.mem_flags
        h = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=a)
        for groups in (dev.max_compute_units, dev.max_compute_units * 4,
                       dev.max_compute_units * 16, dev.max_compute_units * 64):
            r = loop_ms(lambda: kernel_sum(q, prg, h, a.size, groups), q.finish, 5, 5)
            print("B4 plain float4 kernel on PoCL, NumPy in place, %d groups of 256: %.2f ms"
                  % (groups, r))


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    a = np.random.default_rng(0).random(mib << 18, dtype=np.float32)
    want = float(a.sum(dtype=np.float64))
    which = os.environ.get("PARTS", "AB")
    if "A" in which:
        part_a(a, want)
    if "B" in which:
        part_b(a, want)


if __name__ == "__main__":
    main()
