/*
 * gpured — element copies between device buffers, with an epilogue.
 *
 * gr_copy visits every index of an N-d shape (at most 8 dimensions, given
 * by value) and writes one element of a strided destination from one
 * element of a strided source:
 *
 *   GR_EPI 0  dst = (D)src                 a cast, as NumPy's
 *                                          astype(casting="unsafe")
 *   GR_EPI 1  dst = (D)((F)(M)src / div)   mean: the sum divided by the
 *                                          count (M: the sum rounded into
 *                                          `out`'s type first, as NumPy's
 *                                          mean with an out does; or S)
 *   GR_EPI 2  dst = (D)op(value, (M)src)   `initial`: NumPy's fold starts
 *                                          from it, so it is the left
 *                                          operand (min/max keep the right
 *                                          one on ties and propagate NaN)
 *
 * Conversions to bool are nonzero tests; integer add/mul wrap (unsigned
 * twin).  Shape and strides in elements (strides may be negative), the
 * last dimension varying fastest.
 *
 * Set by the host (csrc/buffers.c): GR_S, GR_M, GR_D (types), GR_MU (the
 * unsigned twin of GR_M, or GR_M for floats), GR_S_BOOL, GR_M_BOOL,
 * GR_D_BOOL, GR_M_FLOAT, GR_F (float or double), GR_EPI, GR_EOP (a GR_OP_*),
 * GR_S_HALF / GR_D_HALF (1: float16 stored as half, read with vload_half and
 * written with vstore_half_rte, core OpenCL C 1.2 without cl_khr_fp16;
 * 2: bfloat16 stored as ushort bits, read as the upper half of a float and
 * written rounded to nearest even by integer arithmetic, NaN kept NaN).
 * Only casts (GR_EPI 0) take halves; their values are floats in registers.
 */
#ifndef GR_S_HALF
#define GR_S_HALF 0
#endif
#ifndef GR_D_HALF
#define GR_D_HALF 0
#endif
#if GR_S_HALF == 1
#define GR_SV float
#define GR_LOADS(p, i) vload_half((i), (p))
#elif GR_S_HALF == 2
#define GR_SV float
#define GR_LOADS(p, i) as_float((uint)(p)[i] << 16)
#else
#define GR_SV GR_S
#define GR_LOADS(p, i) ((p)[i])
#endif

/* float -> bfloat16 bits, round to nearest even; a NaN stays a (quiet)
 * NaN of its sign. */
inline ushort gr_bf16_rne(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (ushort)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

#if GR_NEED_FP64
/* double -> bfloat16 rounded once: to float toward zero with a sticky
 * last bit (round to odd: 24 >= 8 + 2 bits, so the second rounding is
 * exact), then gr_bf16_rne. */
inline ushort gr_bf16_rne_d(double x)
{
    const float f = convert_float_rtz(x);
    uint u = as_uint(f);
    if (!isnan(x) && (double)f != x) {
        u |= 1u;
    }
    return gr_bf16_rne(as_float(u));
}
#define GR_BF16_OF(x) gr_bf16_rne_d((double)(x))
#define GR_HALF_STORE(x, i, p) vstore_half_rte((double)(x), (i), (p))
#else
#define GR_BF16_OF(x) gr_bf16_rne((float)(x))
#define GR_HALF_STORE(x, i, p) vstore_half_rte((float)(x), (i), (p))
#endif

/* Into integers narrower than 64 bits through long, as NumPy's casts on
 * x86 do (400.0 into uint8 is 144, not saturated as NVIDIA's direct
 * conversion does); exact for every value a long holds. */
#if GR_M_BOOL
#define GR_TO_M(x) ((GR_M)((x) != (GR_S)0))
#elif GR_M_NARROW
#define GR_TO_M(x) ((GR_M)(long)(x))
#else
#define GR_TO_M(x) ((GR_M)(x))
#endif
#if GR_D_BOOL
#define GR_TO_D(x, T) ((GR_D)((x) != (T)0))
#elif GR_D_NARROW
#define GR_TO_D(x, T) ((GR_D)(long)(x))
#else
#define GR_TO_D(x, T) ((GR_D)(x))
#endif

#if GR_EPI == 2
inline GR_M gr_epi_op(GR_M a, GR_M b)
{
#if GR_EOP == GR_OP_ADD
#if GR_M_FLOAT
    return a + b;
#else
    return (GR_M)((GR_MU)a + (GR_MU)b);
#endif
#elif GR_EOP == GR_OP_MUL
#if GR_M_FLOAT
    return a * b;
#else
    return (GR_M)((GR_MU)a * (GR_MU)b);
#endif
#elif GR_EOP == GR_OP_MIN
#if GR_M_FLOAT && GR_ENAN
    return (a < b || isnan(b)) ? a : b; /* fmin: a NaN loses */
#elif GR_M_FLOAT
    return (a < b || isnan(a)) ? a : b;
#else
    return a < b ? a : b;
#endif
#elif GR_EOP == GR_OP_MAX
#if GR_M_FLOAT && GR_ENAN
    return (a > b || isnan(b)) ? a : b;
#elif GR_M_FLOAT
    return (a > b || isnan(a)) ? a : b;
#else
    return a > b ? a : b;
#endif
#elif GR_EOP == GR_OP_ALL
    return (GR_M)(a && b);
#else
    return (GR_M)(a || b);
#endif
}
#endif

__kernel void gr_copy(__global const GR_S *src, ulong soff, __global GR_D *dst,
                      ulong doff, long8 shape, long8 sstr, long8 dstr,
                      uint ndim, ulong n, GR_F div, GR_M value)
{
    const ulong gid = get_global_id(0);
    if (gid >= n) {
        return;
    }
    const long *shp = (const long *)&shape;
    const long *ss = (const long *)&sstr;
    const long *ds = (const long *)&dstr;
    ulong rest = gid;
    long so = (long)soff, dso = (long)doff;
    for (int k = (int)ndim - 1; k >= 0; --k) {
        const ulong len = (ulong)shp[k];
        const long i = (long)(rest % len);
        rest /= len;
        so += i * ss[k];
        dso += i * ds[k];
    }
    const GR_SV x = GR_LOADS(src, so);
#if GR_EPI == 1
    const GR_F q = (GR_F)GR_TO_M(x) / div;
    dst[dso] = GR_TO_D(q, GR_F);
#elif GR_EPI == 2
    const GR_M m = gr_epi_op(value, GR_TO_M(x));
    dst[dso] = GR_TO_D(m, GR_M);
#elif GR_D_HALF == 1
    GR_HALF_STORE(x, dso, dst);
#elif GR_D_HALF == 2
    dst[dso] = GR_BF16_OF(x);
#else
    dst[dso] = GR_TO_D(x, GR_SV);
#endif
}
