/*
 * gpured — reductions over segments given by offsets (NumPy's
 * ufunc.reduceat; CSR rows).  Built with reduce.c's defines (the same
 * GR_T/GR_A/GR_R, operator, compensation and combine as a reduction), on
 * top of common.cl's states, folds and work-group combines.
 *
 * The input is rows x L x inner elements, C-contiguous; segment s of a
 * row is
 *
 *     [idx[s], end)   end = idx[s + 1] if that is larger, else idx[s] + 1
 *                     (NumPy's rule for non-increasing indices); the last
 *                     segment ends at L
 *
 * and result (row, s, j) goes to out[out0 + (row * S + s) * inner + j].
 * The host checked 0 <= idx[s] < L.
 *
 *   gr_segments_group  one work-group per (row, segment), inner == 1: the
 *                      work-items read the segment's consecutive elements
 *                      (coalesced), GR_SEG_ILP loads in flight each, and
 *                      the group combines as a reduction's does (long
 *                      segments: CUB's DeviceSegmentedReduce)
 *   gr_segments_items  one work-item per result: short segments
 *                      (consecutive work-items take consecutive segments)
 *                      and inner > 1 (consecutive work-items read
 *                      consecutive j: coalesced rows of a column block)
 */

#define GR_SEG_ILP 4

/* The end of segment s (NumPy's reduceat). */
inline ulong grg_end(__global const long *idx, ulong s, ulong S, ulong L)
{
    const ulong lo = (ulong)idx[s];
    if (s + 1 == S) {
        return L;
    }
    const ulong nx = (ulong)idx[s + 1];
    return nx > lo ? nx : lo + 1;
}

#if GR_FINAL
#define GRG_OUT GR_R
#else
#define GRG_OUT GR_A
#endif
#define GR_VT GR_VEC(GR_T)

/* Elements [lo, hi) of the row starting at element r0 of `in`, folded
 * into a by nl work-items (lane lid of them; coalesced): a work-group, or
 * a warp.  GR_VW > 1: a scalar head up to a multiple of GR_VW elements of
 * the buffer, aligned vector loads (GR_SEG_ILP in flight per work-item), a
 * scalar tail. */
inline void grg_fold_range(__global const GR_T *in, ulong r0, ulong lo,
                           ulong hi, gr_state *a, uint lid, uint nl)
{
    __global const GR_T *p = in + r0;
#if GR_VW > 1
    const ulong vb = (r0 + lo + GR_VW - 1) / GR_VW;
    const ulong ve = max(vb, (r0 + hi) / GR_VW);
    const ulong hb = min(hi, vb * GR_VW - r0); /* head's end */
    for (ulong i = lo + lid; i < hb; i += nl) {
        GR_FOLD_S(*a, GR_CVTN_S(p[i]), (long)i);
    }
    __global const GR_VT *pv = (__global const GR_VT *)in;
    GR_VA av[GR_SEG_ILP];
    GR_VX ax[GR_SEG_ILP];
#pragma unroll
    for (int u = 0; u < GR_SEG_ILP; ++u) {
        av[u] = (GR_VA)GR_IDENT_V;
        ax[u] = (GR_VX)GR_IDENT_X;
    }
    ulong k = vb + lid;
    for (; k + (GR_SEG_ILP - 1) * (ulong)nl < ve;
         k += GR_SEG_ILP * (ulong)nl) {
#pragma unroll
        for (int u = 0; u < GR_SEG_ILP; ++u) {
            GR_FOLD(av[u], ax[u], GR_CVTN_V(pv[k + (ulong)u * nl]),
                    (GR_VX)0, GR_VA, GR_VX, GR_VM);
        }
    }
    for (; k < ve; k += nl) {
        GR_FOLD(av[0], ax[0], GR_CVTN_V(pv[k]), (GR_VX)0, GR_VA, GR_VX,
                GR_VM);
    }
#pragma unroll
    for (int u = 0; u < GR_SEG_ILP; ++u) {
        GR_A lanes_v[GR_VW];
        GR_X lanes_x[GR_VW];
        GR_CAT(vstore, GR_VW)(av[u], 0, lanes_v);
        GR_CAT(vstore, GR_VW)(ax[u], 0, lanes_x);
#pragma unroll
        for (int l = 0; l < GR_VW; ++l) {
            gr_state o;
            o.v = lanes_v[l];
            o.x = lanes_x[l];
            gr_merge(a, o);
        }
    }
    for (ulong i = max(hb, ve * GR_VW - r0) + lid; i < hi; i += nl) {
        GR_FOLD_S(*a, GR_CVTN_S(p[i]), (long)i);
    }
#else
    gr_state b[GR_SEG_ILP];
#pragma unroll
    for (int u = 0; u < GR_SEG_ILP; ++u) {
        b[u] = gr_identity();
    }
    ulong i = lo + lid;
    for (; i + (GR_SEG_ILP - 1) * (ulong)nl < hi;
         i += GR_SEG_ILP * (ulong)nl) {
#pragma unroll
        for (int u = 0; u < GR_SEG_ILP; ++u) {
            const ulong at = i + (ulong)u * nl;
            GR_FOLD_S(b[u], GR_CVTN_S(p[at]), (long)at);
        }
    }
    for (; i < hi; i += nl) {
        GR_FOLD_S(b[0], GR_CVTN_S(p[i]), (long)i);
    }
#pragma unroll
    for (int u = 0; u < GR_SEG_ILP; ++u) {
        gr_merge(a, b[u]);
    }
#endif
}

/* Group g = (row * S + s) * parts + part folds its part of segment s of
 * the row (parts: the segment's length split in whole vectors) into a
 * result (GR_FINAL: parts == 1) or a partial state at out0 + g, merged by
 * reduce.cl's second pass. */
__kernel __attribute__((reqd_work_group_size(GR_WG, 1, 1)))
void gr_segments_group(__global const GR_T *restrict in, ulong base, ulong L,
                       __global const long *restrict idx, ulong S, uint parts,
                       ulong g0, __global GRG_OUT *restrict outv,
                       __global GR_X *restrict outx, ulong out0)
{
    __local GR_A lv[GR_WG];
    __local GR_X lx[GR_HAS_X ? GR_WG : 1];
    const ulong g = g0 + get_group_id(0);
    const ulong rs = g / parts, part = g % parts;
    const ulong row = rs / S, s = rs % S;
    const ulong lo0 = (ulong)idx[s], hi0 = grg_end(idx, s, S, L);
    const ulong ch = ((hi0 - lo0 + parts - 1) / parts + GR_VW - 1) / GR_VW *
                     GR_VW;
    const ulong lo = min(hi0, lo0 + part * ch), hi = min(hi0, lo + ch);
    gr_state a = gr_identity();
    grg_fold_range(in, base + row * L, lo, hi, &a, get_local_id(0), GR_WG);
    const gr_state r = gr_group_combine(a, lv, lx);
    if (get_local_id(0) == 0) {
#if GR_FINAL
        outv[out0 + g] = gr_finish(r);
#else
        outv[out0 + g] = r.v;
#if GR_HAS_X
        outx[out0 + g] = r.x;
#endif
#endif
    }
}

#if GR_SG == GR_SG_PTX
#ifndef GR_SEG_LANES
#define GR_SEG_LANES 32
#endif
/* NVIDIA: GR_SEG_LANES lanes of a warp per segment (32: a warp; 2..16:
 * 32 / GR_SEG_LANES segments per warp, for short segments): the lanes
 * fold the segment as a work-group would, then shuffle down within their
 * group; no barrier, no local memory.  Every lane of a warp reaches the
 * shuffles (the tail's lanes fold an empty range and store nothing). */
__kernel __attribute__((reqd_work_group_size(GR_WG, 1, 1)))
void gr_segments_warp(__global const GR_T *restrict in, ulong base, ulong L,
                      __global const long *restrict idx, ulong S, ulong n,
                      __global GR_R *restrict out, ulong out0)
{
    const ulong w = get_global_id(0) / GR_SEG_LANES; /* row * S + s */
    const uint lane = get_local_id(0) % GR_SEG_LANES;
    gr_state a = gr_identity();
    if (w < n) {
        const ulong row = w / S, s = w % S;
        const ulong lo = (ulong)idx[s], hi = grg_end(idx, s, S, L);
        grg_fold_range(in, base + row * L, lo, hi, &a, lane, GR_SEG_LANES);
    }
#pragma unroll
    for (uint d = GR_SEG_LANES / 2; d > 0; d >>= 1) {
        gr_merge(&a, gr_shfl_down_state(a, d));
    }
    if (lane == 0 && w < n) {
        out[out0 + w] = gr_finish(a);
    }
}
#endif

/* Sums and products walk a segment with GR_SEG_ILP accumulators
 * (independent chains: a float64 add's latency hidden, on CPUs above all);
 * min/max/logical fold in order. */
#if GR_OP == GR_OP_ADD || GR_OP == GR_OP_MUL
#define GR_SEG_WALK GR_SEG_ILP
#else
#define GR_SEG_WALK 1
#endif

/* Work-item w takes results w * per .. w * per + per - 1 (per > 1 on CPUs:
 * consecutive segments, one contiguous walk; the coordinates step along
 * instead of being divided out per result).  With GR_VW > 1 (CPUs, sums
 * and products) a segment along the innermost axis (inner == 1) is read
 * as vectors, one chain per lane. */
__kernel void gr_segments_items(__global const GR_T *restrict in, ulong base,
                                ulong L, ulong inner,
                                __global const long *restrict idx, ulong S,
                                ulong n, ulong per, __global GR_R *restrict out,
                                ulong out0)
{
    const ulong q0 = get_global_id(0) * per;
    const ulong q1 = min(n, q0 + per);
    if (q0 >= q1) {
        return;
    }
    /* q = (row * S + s) * inner + j */
    ulong j = 0, rs = q0;
    if (inner > 1) {
        j = q0 % inner;
        rs = q0 / inner;
    }
    ulong s = rs, row = 0;
    if (rs >= S) {
        s = rs % S;
        row = rs / S;
    }
    for (ulong q = q0; q < q1; ++q) {
        const ulong lo = (ulong)idx[s], hi = grg_end(idx, s, S, L);
        __global const GR_T *p = in + base + row * L * inner + j;
        gr_state a[GR_SEG_WALK];
#pragma unroll
        for (int u = 0; u < GR_SEG_WALK; ++u) {
            a[u] = gr_identity();
        }
        ulong i = lo;
#if GR_VW > 1
        if (inner == 1) {
            GR_VA av = (GR_VA)GR_IDENT_V;
            GR_VX ax = (GR_VX)GR_IDENT_X;
            for (; i + GR_VW <= hi; i += GR_VW) {
                GR_FOLD(av, ax, GR_CVTN_V(GR_VLOAD(p + i)), (GR_VX)0, GR_VA,
                        GR_VX, GR_VM);
            }
            GR_A lanes_v[GR_VW];
            GR_X lanes_x[GR_VW];
            GR_CAT(vstore, GR_VW)(av, 0, lanes_v);
            GR_CAT(vstore, GR_VW)(ax, 0, lanes_x);
            for (int l = 0; l < GR_VW; ++l) {
                gr_state o;
                o.v = lanes_v[l];
                o.x = lanes_x[l];
                gr_merge(&a[0], o);
            }
        }
#endif
        for (; i + GR_SEG_WALK <= hi; i += GR_SEG_WALK) {
#pragma unroll
            for (int u = 0; u < GR_SEG_WALK; ++u) {
                GR_FOLD_S(a[u], GR_CVTN_S(p[(i + u) * inner]), (long)(i + u));
            }
        }
        for (; i < hi; ++i) {
            GR_FOLD_S(a[0], GR_CVTN_S(p[i * inner]), (long)i);
        }
#pragma unroll
        for (int u = 1; u < GR_SEG_WALK; ++u) {
            gr_merge(&a[0], a[u]);
        }
        out[out0 + q] = gr_finish(a[0]);
        if (++j == inner) {
            j = 0;
            if (++s == S) {
                s = 0;
                ++row;
            }
        }
    }
}

/* Device offsets: 0 <= idx[i] < L for every i < S, else *bad ends with the
 * position of one that is not (the smallest; positions past 2^32 - 2 read
 * as 2^32 - 2).  *bad starts at UINT_MAX. */
__kernel void gr_segments_check(__global const long *restrict idx, ulong S,
                                ulong L, __global uint *bad)
{
    const ulong i = get_global_id(0);
    if (i < S && (idx[i] < 0 || (ulong)idx[i] >= L)) {
        atomic_min(bad, (uint)min(i, (ulong)UINT_MAX - 1));
    }
}
