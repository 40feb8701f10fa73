"""Short rows on the H200 (issue 43: 2^24 x 16 float32 row sums >= CuPy):
raw OpenCL kernels through PyOpenCL, to find the loads and geometry that
reach CuPy before the plan changes.  Wall clock of loops of launches,
one finish at the end (median of 5), CuPy and gpured in the same process.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/rows16_h200.py

Kernels (W elements a row, rows contiguous):
  scalar L      L lanes a row, lane l reads l, l+L, ... (gpured's
                segment_per_warp as it is)
  vec L V R     L lanes a row, each reads V-wide vectors at l*V, l*V+L*V,
                ...; a warp's lanes cover 32/L whole rows with one load
                each (coalesced); R such row blocks per warp, their loads
                issued before the shuffles
  tile R        a work-group reads R*wg float4 coalesced into local
                memory, then a work-item sums a row from it
"""
import os, sys
import numpy as np
import pyopencl as cl
sys.path.insert(0, os.path.dirname(__file__))
from _loop import loop_ms, optional_cupy

cp = optional_cupy()
W = int(os.environ.get("W", "16"))
M = (1 << 30) // 4 // W

SRC = r"""
inline float shd(float v, uint d)
{
    uint r;
#ifdef NOPTX
    r = as_uint(v) + d;
#else
    __asm__ volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                     : "=r"(r) : "r"(as_uint(v)), "r"(d));
#endif
    return as_float(r);
}
#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
#if V == 1
#define VT float
#else
#define VT CAT(float, V)
#endif
#ifndef WG
#define WG 256
#endif

__kernel void scalar_rows(__global const float *in, __global float *out,
                          ulong M)
{
    const ulong j = get_global_id(0) / L;
    const uint lane = get_local_id(0) % L;
    const ulong seg = min(j, M - 1);
    float s = 0.0f;
    for (uint i = lane; i < W; i += L) s += in[seg * W + i];
    for (uint d = L / 2; d > 0; d >>= 1) s += shd(s, d);
    if (lane == 0 && j < M) out[seg] = s;
}

inline float hsum(VT v)
{
#if V == 1
    return v;
#elif V == 2
    return v.x + v.y;
#elif V == 4
    return (v.x + v.y) + (v.z + v.w);
#endif
}

__kernel void vec_rows(__global const float *in, __global float *out,
                       ulong M)
{
    const uint GPW = 32 / L;                 /* rows a warp covers */
    const ulong warp = get_global_id(0) / 32;
    const uint wl = get_local_id(0) % 32;
    const uint lane = wl % L;
    const uint gw = wl / L;
    float acc[R];
#pragma unroll
    for (uint r = 0; r < R; ++r) {
        const ulong seg = min((warp * R + r) * GPW + gw, M - 1);
        float a = 0.0f;
#pragma unroll
        for (uint i = lane * V; i < W; i += L * V)
#if V == 1
            a += in[seg * W + i];
#else
            a += hsum(CAT(vload, V)(0, in + seg * W + i));
#endif
        acc[r] = a;
    }
#pragma unroll
    for (uint r = 0; r < R; ++r)
        for (uint d = L / 2; d > 0; d >>= 1) acc[r] += shd(acc[r], d);
    if (lane == 0) {
#pragma unroll
        for (uint r = 0; r < R; ++r) {
            const ulong seg = (warp * R + r) * GPW + gw;
            if (seg < M) out[seg] = acc[r];
        }
    }
}

/* A work-group of WG reads R * WG float4 (R * WG * 4 / W rows) into
 * local memory, then work-item t sums rows t, t + WG, ... */
__kernel void tile_rows(__global const float *in, __global float *out,
                        ulong M)
{
    __local float4 t[R * WG];
    const uint lid = get_local_id(0);
    const ulong row0 = get_group_id(0) * (ulong)(R * WG * 4 / W);
    const ulong n4 = M * W / 4;
    __global const float4 *p = (__global const float4 *)in + row0 * (W / 4);
#pragma unroll
    for (uint r = 0; r < R; ++r) {
        const ulong q = row0 * (W / 4) + r * WG + lid;
        t[r * WG + lid] = q < n4 ? p[r * WG + lid] : (float4)0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint rows = R * WG * 4 / W;
    for (uint k = lid; k < rows; k += WG) {
        __local const float *q = (__local const float *)t + k * W;
        float a = 0.0f;
#pragma unroll
        for (uint i = 0; i < W; ++i) a += q[(i + k) % W];
        if (row0 + k < M) out[row0 + k] = a;
    }
}
"""


def main():
    plats = [p for p in cl.get_platforms() if "NVIDIA" in p.name]
    if not plats:  # a compile check elsewhere
        ctx = cl.create_some_context(interactive=False)
        for o in (["-DL=2", "-DV=1", "-DR=1"], ["-DL=4", "-DV=4", "-DR=4"], ["-DL=8", "-DV=2", "-DR=2"],
                  ["-DR=2", "-DWG=128", "-DL=1", "-DV=1"]):
            cl.Program(ctx, SRC).build(options=["-DW=%d" % W, "-DNOPTX"] + o)
        print("built")
        return
    plat = plats[0]
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(0)
    h = rng.standard_normal((M, W)).astype(np.float32)
    want = h.sum(axis=1, dtype=np.float64)
    mf = cl.mem_flags
    din = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=h)
    dout = cl.Buffer(ctx, mf.WRITE_ONLY, M * 4)
    rows = []

    def run(name, opts, kname, gsize, wg):
        prg = cl.Program(ctx, SRC).build(options=["-DW=%d" % W] + opts)
        k = getattr(prg, kname)
        k.set_args(din, dout, np.uint64(M))
        go = lambda: cl.enqueue_nd_range_kernel(q, k, (gsize,), (wg,))
        t = loop_ms(go, q.finish, calls=20)
        got = np.empty(M, np.float32)
        cl.enqueue_copy(q, got, dout)
        ok = np.allclose(got, want, rtol=1e-4, atol=1e-4)
        rows.append((name, t, ok))
        print("%-24s %8.4f ms  %6.2f TB/s  ok=%s" % (name, t, (M * W * 4 + M * 4) / t / 1e9, ok),
              flush=True)

    up = lambda n, m: (n + m - 1) // m * m
    for L in (2, 4):
        run("scalar L%d" % L, ["-DL=%d" % L, "-DV=1", "-DR=1"], "scalar_rows", up(M * L, 256), 256)
    for L, V in ((4, 4), (2, 4), (8, 2), (1, 4)):
        if L * V > W:
            continue
        for R in (1, 2, 4, 8):
            for wg in (128, 256):
                gpw = 32 // L
                warps = (M + gpw * R - 1) // (gpw * R)
                run("vec L%d V%d R%d wg%d" % (L, V, R, wg),
                    ["-DL=%d" % L, "-DV=%d" % V, "-DR=%d" % R], "vec_rows",
                    up(warps * 32, wg), wg)
    for R in (1, 2, 4):
        for wg in (128, 256):
            per = R * wg * 4 // W
            run("tile R%d wg%d" % (R, wg), ["-DR=%d" % R, "-DWG=%d" % wg, "-DL=1", "-DV=1"],
                "tile_rows", (M + per - 1) // per * wg, wg)
    if cp is not None:
        x = cp.asarray(h)
        t = loop_ms(lambda: x.sum(axis=1), cp.cuda.Device().synchronize, calls=20)
        print("%-24s %8.4f ms  %6.2f TB/s" % ("cupy", t, (M * W * 4 + M * 4) / t / 1e9))
        del x
        cp.get_default_memory_pool().free_all_blocks()
    import gpured
    d = gpured.to_device(h)
    t = loop_ms(lambda: gpured.sum(d, axis=1), gpured.synchronize, calls=20)
    print("%-24s %8.4f ms  %6.2f TB/s  %s" % ("gpured", t, (M * W * 4 + M * 4) / t / 1e9,
                                             gpured.explain("sum", d, axis=1)["why"]))
    best = min(rows, key=lambda r: r[1])
    print("best raw:", best)


main()
