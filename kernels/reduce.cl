/*
 * gpured — reductions.
 *
 * Every reduction is seen as M segments of L elements each (a full reduction
 * is M = 1); element i of segment s lives at
 *
 *     in[base + s * seg_stride + i * elem_stride]
 *
 * and each segment may be split into `parts` chunks that are reduced by
 * different work-groups (or work-items) into partial states:
 *
 *     pass 1:  in (M x L elements)  --fold-->  partial states (M x parts)
 *     pass 2:  partial (M x parts)  --merge--> result (M)          [parts > 1]
 *
 * Pass 2 is the same gr_reduce_group kernel built with GR_IN_PARTIAL 1: its
 * "elements" are states (value array + auxiliary array) and folding is
 * merging.  GR_FINAL 1 writes gr_finish(state) in the result type instead of
 * a state.
 *
 * gr_reduce_group — one work-group per (segment, part); the segment's
 * elements are contiguous (elem_stride 1).  Two ways to split a chunk among
 * the work-items of a group (the plan's choice, GR_CONTIG_WI):
 *
 *   coalesced (GPU)       wi0 wi1 wi2 wi3 wi0 wi1 wi2 wi3 ...   vectors of
 *                         |v0 |v1 |v2 |v3 |v4 |...               GR_VW, local
 *                                                               size apart
 *   contiguous (CPU)      wi0 wi0 wi0 ... wi1 wi1 wi1 ...       one run per
 *                                                               work-item
 *
 * Each work-item keeps GR_ILP independent vector accumulators (the seed on
 * latency hiding: more loads in flight per work-item), then its lanes and
 * accumulators are merged into one state and the group combines states in
 * local memory.  Elements that do not fill a whole vector tile are folded
 * one by one afterwards.
 *
 * Inputs larger than one buffer may hold (CL_DEVICE_MAX_MEM_ALLOC_SIZE) come
 * as several pieces of one segment: each piece is a pass-1 launch whose
 * element indices start at idx0 and whose states land at out0 onwards.
 *
 * gr_reduce_items — one work-item per (segment, part): for segments whose
 * elements are strided (column reductions: consecutive work-items read
 * consecutive addresses) and for very short rows.
 */

#ifndef GR_IN_PARTIAL
#define GR_IN_PARTIAL 0
#endif

#define GR_LOAD_COALESCED 0     /* stride_local, vector, one-per-item ladder */
#define GR_LOAD_CONTIG 1        /* chunked                                  */
#define GR_LOAD_STRIDE_GLOBAL 2 /* stride_global                           */
#ifndef GR_LOAD
#define GR_LOAD GR_LOAD_COALESCED
#endif
#ifndef GR_ATOMIC
#define GR_ATOMIC 0
#endif

/* A second operand beside the elements (GR_WHERE), element j's at
 * wm[j + wdelta], of type GR_WT; wq: the operand beside p.  Fused into
 * the loads (no masking or multiplying pass):
 *   GR_WHERE 1  where=: a bool mask; an element whose byte is 0 reads as
 *               GR_WOFF: the operator's identity (float sums -0.0, the
 *               exact one), or NaN for the nan* forms that count
 *               (nanmean: NaN is neither summed nor counted); mean
 *               (GR_VAR 4): 0, and the mask's 0 / 1 goes to gr_wv / gr_ws;
 *   GR_WHERE 2  average's weights (GR_VAR 4): the element times its
 *               weight, the weight to gr_wv / gr_ws.
 * GR_WAXIS 1: the operand is one vector along the segment (average's 1-d
 * weights along its one reduced axis): element i of a segment reads
 * wm[wdelta + idx0 + i], whatever the segment (GR_WIDX). */
#ifndef GR_WHERE
#define GR_WHERE 0
#endif
#ifndef GR_WT
#define GR_WT uchar
#endif
#ifndef GR_WAXIS
#define GR_WAXIS 0
#endif
#if GR_WAXIS
#define GR_WIDX(off, idx) (idx)
#else
#define GR_WIDX(off, idx) (off)
#endif
#define GR_WLOAD_V(q) GR_CONVERT(GR_VA, GR_VLOAD(q))
#if GR_WHERE && !GR_IN_PARTIAL
#if GR_VAR == 4
#define GR_WOFF ((GR_A)0)
#elif GR_VAR && GR_NAN
#define GR_WOFF ((GR_A)NAN)
#elif GR_OP == GR_OP_ADD && GR_A_FLOAT
#define GR_WOFF ((GR_A)(-0.0))
#else
#define GR_WOFF GR_IDENT_V
#endif
#if GR_WHERE == 2
#define GR_WSEL_V(y, q) (gr_wv = GR_WLOAD_V(q), (y) * gr_wv)
#define GR_WSEL_S(y, q) (gr_ws = (GR_A)(*(q)), (y) * gr_ws)
/* one weight for a vector of adjacent segments' elements (items kernel) */
#define GR_WSEL_B(y, q) (gr_wv = (GR_VA)((GR_A)(*(q))), (y) * gr_wv)
#elif GR_VAR == 4
#define GR_WSEL_V(y, q)                                                      \
    (gr_wv = GR_WLOAD_V(q),                                                  \
     GR_SEL((GR_VA)GR_WOFF, (y), gr_wv != (GR_VA)0))
#define GR_WSEL_S(y, q)                                                      \
    (gr_ws = (GR_A)(*(q)), (*(q)) ? (y) : (GR_A)GR_WOFF)
#elif GR_NAN == 2
/* var/std with where= (GR_NAN 2: counted as nanvar, finished as var): a
 * masked-out element reads as NaN (neither summed nor counted), a kept
 * NaN as +inf (counted: its slice's result is NaN, as NumPy's) */
#define GR_WSEL_S(y, q)                                                      \
    ((*(q)) ? (GR_ISNAN(y) ? (GR_A)INFINITY : (y)) : (GR_A)GR_WOFF)
#if GR_VW == 1
#define GR_WSEL_V(y, q) GR_WSEL_S(y, q)
#else
#define GR_WSEL_V(y, q)                                                      \
    GR_SEL((GR_VA)GR_WOFF, GR_SEL((y), (GR_VA)INFINITY, GR_ISNAN(y)),        \
           GR_CONVERT(GR_VM, GR_VLOAD(q)) != (GR_VM)0)
#endif
#elif GR_VW == 1
#define GR_WSEL_V(y, q) ((*(q)) ? (y) : (GR_A)GR_WOFF)
#define GR_WSEL_S(y, q) ((*(q)) ? (y) : (GR_A)GR_WOFF)
#else
#define GR_WSEL_V(y, q)                                                      \
    GR_SEL((GR_VA)GR_WOFF, (y),                                              \
           GR_CONVERT(GR_VM, GR_VLOAD(q)) != (GR_VM)0)
#define GR_WSEL_S(y, q) ((*(q)) ? (y) : (GR_A)GR_WOFF)
#endif
#if GR_VAR == 4
/* what the last load left: its second operand, in the accumulator type */
#define GR_WTEMPS                                                            \
    GR_VA gr_wv = 0;                                                         \
    GR_A gr_ws = 0;
#endif
#else
#define GR_WSEL_V(y, q) (y)
#define GR_WSEL_S(y, q) (y)
#endif
#ifndef GR_WTEMPS
#define GR_WTEMPS
#endif

#if GR_IN_PARTIAL
#define GR_IN GR_A
#else
#define GR_IN GR_T
#endif
#ifndef GR_MDIV
#define GR_MDIV 0
#endif
#if GR_ATOMIC
#define GR_OUT GR_A /* accumulators, finished by gr_reduce_finish */
#elif GR_FINAL && GR_MDIV
#define GR_OUT GR_MD /* a mean's quotient (gr_store) */
#elif GR_FINAL
#define GR_OUT GR_R
#else
#define GR_OUT GR_A
#endif

/* nanvar/nanstd (GR_VARN): the folds count the elements that are not
 * NaN (common.cl GR_VAR_COUNT_*); the count travels beside the states:
 * summed over a work-group in local memory, stored at the index of each
 * partial state (var_cnt) and summed again in pass 2, and the finish
 * divides by it.  No counting pass. */
#define GR_VARN (GR_VAR && GR_NAN)

/* Read element i (absolute offset) as a state and fold it into s (pass
 * 2: with its count, cnt[off]). */
#if GR_IN_PARTIAL
#define GR_FOLD_ELEM(s, in, inx, cnt, wp, off, idx)                          \
    do {                                                                     \
        gr_state o_;                                                         \
        o_.v = (in)[off];                                                    \
        o_.x = GR_HAS_X ? (inx)[off] : 0;                                    \
        gr_merge(&(s), o_);                                                  \
        if (GR_VARN) {                                                       \
            gr_cs += (cnt)[off];                                             \
        }                                                                    \
    } while (0)
#else
#define GR_FOLD_ELEM(s, in, inx, cnt, wp, off, idx)                          \
    GR_FOLD_S(s,                                                             \
              GR_WSEL_S(GR_CVTN_S(GR_LD(in, off)), (wp) + GR_WIDX(off, idx)),  \
              (long)(idx0 + (idx)))
#endif

/* The vector loop's fold.  argmin/argmax of 4- and 8-byte values
 * (GR_ARGK): a lane keeps, beside its value, the number k of the load that
 * gave it (GR_KT: unsigned, the value's width), not the element's 64-bit
 * index: the comparison masks and the selects stay in one width, with no
 * 64-bit index arithmetic per element.  A lane's loads come in increasing
 * k, so a strict comparison keeps the first of equal values; its first
 * load is always taken (k == GR_K_NONE: the identity's tie rule).  The
 * lanes turn k back into indices once, at the end (GR_LANE_X: element
 * idx0 + start + k * step + lane; policy.c keeps a work-item's loads
 * below 2^32 - 1 for 4-byte values).  Other operators fold the element's
 * index as it is (only argmin/argmax read it). */
#if (GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX) && GR_A_SIZE >= 4 &&    \
    !GR_IN_PARTIAL
#define GR_ARGK 1
#if GR_A_SIZE == 4
#define GR_KT uint
#else
#define GR_KT ulong
#endif
#define GR_K_NONE ((GR_KT)-1)
#define GR_AUX GR_KT
#define GR_VAUX GR_VEC(GR_KT)
#define GR_VAUX_IDENT ((GR_VAUX)GR_K_NONE)
#define GR_FOLD_MAIN(v, x, y, at, kk)                                        \
    do {                                                                     \
        GR_VA y_ = (y);                                                      \
        GR_VM m_ = GR_BETTER(y_, (v)) | ((x) == GR_VAUX_IDENT);              \
        (v) = GR_SEL((v), y_, m_);                                           \
        (x) = GR_SEL((x), (GR_VAUX)(GR_KT)(kk), m_);                         \
    } while (0)
#define GR_LANE_X(xl, l)                                                     \
    ((xl) == GR_K_NONE ? (long)LONG_MAX                                      \
                       : (long)(idx0 + start + (ulong)(xl) * step + (l)))
#else
#define GR_ARGK 0
#define GR_AUX GR_X
#define GR_VAUX GR_VX
#define GR_VAUX_IDENT ((GR_VX)GR_IDENT_X)
#define GR_FOLD_MAIN(v, x, y, at, kk)                                        \
    GR_FOLD(v, x, y, (long)(idx0 + (at)) + GR_IOTA, GR_VA, GR_VX, GR_VM)
#define GR_LANE_X(xl, l) (xl)
#endif

/* A vector accumulator (av, ax: GR_VW lanes) merged into the state s,
 * lane 0 first (argmin/argmax: lanes hold increasing indices, so ties keep
 * the first; GR_LANE_X reads start and step where it is used). */
#if GR_VW == 1
#define GR_LANES_TO_STATE(s, av_, ax_)                                       \
    do {                                                                     \
        gr_state o_;                                                         \
        o_.v = (av_);                                                        \
        o_.x = GR_LANE_X((ax_), 0);                                          \
        gr_merge(&(s), o_);                                                  \
    } while (0)
#else
#define GR_LANES_TO_STATE(s, av_, ax_)                                       \
    do {                                                                     \
        GR_A lv_[GR_VW];                                                     \
        GR_AUX lx_[GR_VW];                                                   \
        GR_CAT(vstore, GR_VW)((av_), 0, lv_);                                \
        GR_CAT(vstore, GR_VW)((ax_), 0, lx_);                                \
        for (int l_ = 0; l_ < GR_VW; ++l_) {                                 \
            gr_state o_;                                                     \
            o_.v = lv_[l_];                                                  \
            o_.x = GR_LANE_X(lx_[l_], l_);                                   \
            gr_merge(&(s), o_);                                              \
        }                                                                    \
    } while (0)
#endif

#if GR_VAR && !GR_IN_PARTIAL
/* The shift K of a segment: its first element (nanvar: the first of its
 * first 8 that is not NaN, else 0). */
inline GR_A gr_var_shift(__global const GR_T *p, ulong stride, ulong L)
{
    GR_A k = GR_CVT_S(GR_LD(p, 0));
#if GR_NAN
    for (ulong i = 1; i < min(L, (ulong)8) && GR_ISNAN(k); ++i) {
        k = GR_CVT_S(GR_LD(p, i * stride));
    }
    k = GR_ISNAN(k) ? (GR_A)0 : k;
#endif
    return k;
}
#endif

#if (GR_VAR == 1 || GR_VAR == 2) && GR_WHERE && !GR_IN_PARTIAL
/* With where=: the first of the first 8 elements (q: their mask) that
 * reads finite through the mask, else 0 */
#define GR_VAR_WSHIFT 1
inline GR_A gr_var_shift_w(__global const GR_T *p, __global const GR_WT *q,
                           ulong stride, ulong L)
{
    GR_A k = 0;
    for (long i = (long)min(L, (ulong)8) - 1; i >= 0; --i) {
        const GR_A y =
            GR_WSEL_S(GR_CVT_S(GR_LD(p, i * stride)), q + i * stride);
        k = isfinite(y) ? y : k;
    }
    return k;
}
#define GR_VSHIFT(p, q, stride, L) gr_var_shift_w((p), (q), (stride), (L))
#else
#define GR_VAR_WSHIFT 0
#define GR_VSHIFT(p, q, stride, L) gr_var_shift((p), (stride), (L))
#endif

/* var/std (GR_VAR 1, 2): the sum of squared deviations of a segment's n
 * elements from its shifted sums (never below 0: NumPy's two passes never
 * are) over n - ddof (NumPy's max(n - ddof, 0): inf or nan past it;
 * nanvar: nan);
 * std's root.  n: var_n, or nanvar's count of the segment's others. */
#if GR_VAR == 3
/* nanmean: the sum over the count (0 / 0: nan, NumPy's empty slice) */
inline GR_R gr_finish_var(gr_state s, ulong n, GR_A ddof)
{
    return (GR_R)(s.v / (GR_A)n);
}
#elif GR_VAR == 4
/* mean(where=), average: the sum over the mask's count or the weights'
 * sum (0 / 0: nan, NumPy's empty slice) */
inline GR_R gr_finish_var(gr_state s, ulong n, GR_A ddof)
{
    return (GR_R)(s.v / s.x);
}
#elif GR_VAR
inline GR_R gr_finish_var(gr_state s, ulong n, GR_A ddof)
{
    const GR_A m2 = s.x - s.v * (s.v / (GR_A)n);
    GR_A q = (m2 > (GR_A)0 ? m2 : (m2 == m2 ? (GR_A)0 : m2)) /
             fmax((GR_A)n - ddof, (GR_A)0);
#if GR_NAN == 1
    /* NumPy's nanvar: NaN wherever n - ddof <= 0 (var: the division's
     * inf, or nan for 0 / 0) */
    q = (GR_A)n - ddof > (GR_A)0 ? q : (GR_A)NAN;
#endif
#if GR_VAR == 2
    return (GR_R)sqrt(q);
#else
    return (GR_R)q;
#endif
}
#endif

/* The state at outv/outx[at], or its result (GR_FINAL).  n: var/std's
 * count of the elements folded into s (nanvar: written beside a partial
 * state at cnt[at]). */
#define GR_STORE(s, at, n) gr_store((s), outv, outx, (at), (n), var_ddof, var_cnt)

inline void gr_store(gr_state s, __global GR_OUT *outv, __global GR_X *outx,
                     ulong at, ulong n, GR_A ddof, __global ulong *cnt)
{
#if GR_FINAL && GR_VAR
    outv[at] = gr_finish_var(s, n, ddof);
#elif GR_FINAL && GR_MDIV
    /* mean into a new device result: the sum in its dtype (GR_R), divided
     * by the count n in GR_MF, rounded once into the result's dtype --
     * copy.cl's GR_EPI 1 in the same pass, one launch fewer */
    outv[at] = (GR_MD)((GR_MF)gr_finish(s) / (GR_MF)n);
#elif GR_FINAL
    outv[at] = gr_finish(s);
#else
    outv[at] = s.v;
#if GR_HAS_X
    outx[at] = s.x;
#endif
#if GR_VARN
    cnt[at] = n;
#endif
#endif
}

#if GR_VARN
/* The sum of every work-item's c (any work-group size; every work-item
 * calls it). */
inline ulong gr_group_count(ulong c, __local ulong *lc)
{
    const uint lid = get_local_id(0);
    lc[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = GR_WG; w > 1;) {
        const uint h = (w + 1) / 2;
        if (lid < w - h) {
            lc[lid] += lc[lid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        w = h;
    }
    return lc[0];
}
#endif

__kernel __attribute__((reqd_work_group_size(GR_WG, 1, 1)))
void gr_reduce_group(__global const GR_IN *restrict in,
                     __global const GR_X *restrict inx,
                     ulong base, ulong L, ulong seg_stride, ulong chunk,
                     uint parts, ulong seg0, ulong idx0, ulong out0,
                     __global GR_OUT *restrict outv,
                     __global GR_X *restrict outx,
                     GR_A var_k, uint var_self, ulong var_n,
                     GR_A var_ddof, __global ulong *var_cnt,
                     __global const GR_WT *restrict wm, long wdelta)
{
    GR_WTEMPS
    __local GR_A lv[GR_WG];
    __local GR_X lx[GR_HAS_X ? GR_WG : 1];
#if GR_VARN
    __local ulong lc[GR_WG];
#endif
    ulong gr_cs = 0; /* nanvar: elements counted (GR_VARN) */
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0);
    const ulong seg = seg0 + g / parts;
    const ulong part = g % parts;
    const ulong lo = part * chunk;
    const ulong hi = min(lo + chunk, L);
    const ulong seg_base = base + seg * seg_stride;
    __global const GR_IN *p = in + seg_base;
#if GR_WHERE && !GR_IN_PARTIAL
    __global const GR_WT *wq =
        wm + (GR_WAXIS ? (ulong)wdelta + idx0 : seg_base + (ulong)wdelta);
#endif
#if GR_VAR && !GR_IN_PARTIAL
    /* the segment's first element, or the host's shift (pieces) */
    const GR_A gr_ks = var_self ? GR_VSHIFT(p, wq, 1, L) : var_k;
    const GR_A gr_kv = gr_ks;
#endif

    gr_state s = gr_identity();
    ulong nv = 0;          /* vector loads per work-item               */
    ulong lo_al = lo;      /* where the vector loads start             */
#if !GR_IN_PARTIAL
    const ulong n = hi - lo; /* lo < L: parts = ceil(L / chunk) */
#if GR_LOAD == GR_LOAD_CONTIG
    /* variant: chunked */
    const ulong cw = (n / GR_WG) / GR_VW * GR_VW; /* elements per work-item */
    const ulong start = lo + lid * cw;
    const ulong step = GR_VW;
    nv = cw / GR_VW;
#elif GR_LOAD == GR_LOAD_STRIDE_GLOBAL
    /* variant: stride_global */
    /* The seed's Stride-Global-Size kernel: work-item g of the segment's
     * parts * WG folds elements g, g + G, g + 2G, ... (G = parts * WG). */
    const ulong start = part * GR_WG + lid;
    const ulong step = (ulong)parts * GR_WG;
    nv = L > start ? (L - start + step - 1) / step : 0;
#else
    /* variant: stride_local, vector */
    /* Consecutive work-items read consecutive vectors: coalesced; each
     * work-item's loads are local-size vectors apart. */
#if GR_HALIGN
    /* whole vectors of GR_LW halves from the first aligned one on; the
     * head before it first, element by element (argmin/argmax: the
     * lowest indices fold first, ties then merge by index) */
    lo_al = min(hi, lo + (((ulong)(2 * GR_LW) -
                           ((ulong)(p + lo) & (2 * GR_LW - 1))) &
                          (2 * GR_LW - 1)) / 2);
    for (ulong i = lo + lid; i < lo_al; i += GR_WG) {
        GR_FOLD_ELEM(s, p, inx + seg_base, var_cnt + seg_base, wq, i, i);
    }
#endif
    const ulong start = lo_al + lid * GR_LW;
    const ulong step = (ulong)GR_WG * GR_LW;
    nv = (n - (lo_al - lo)) / ((ulong)GR_WG * GR_LW);
#endif
    {
        GR_VA av[GR_ILP];
        GR_VAUX ax[GR_ILP];
#if GR_VARN
        GR_VC gr_cv = 0;
#endif
#pragma unroll
        for (int u = 0; u < GR_ILP; ++u) {
            av[u] = (GR_VA)GR_IDENT_V;
            ax[u] = GR_VAUX_IDENT;
        }
        ulong k = 0;
        for (; k + GR_ILP <= nv; k += GR_ILP) {
#pragma unroll
            for (int u = 0; u < GR_ILP; ++u) {
                const ulong at = start + (k + u) * step;
                GR_FOLD_MAIN(av[u], ax[u],
                             GR_WSEL_V(GR_CVTN_V(GR_VLOAD_M(p + at)), wq + at),
                             at, k + u);
            }
        }
        for (; k < nv; ++k) {
            const ulong at = start + k * step;
            GR_FOLD_MAIN(av[0], ax[0],
                         GR_WSEL_V(GR_CVTN_V(GR_VLOAD_M(p + at)), wq + at), at,
                         k);
        }
        /* Accumulators and lanes -> one state. */
#pragma unroll
        for (int u = 0; u < GR_ILP; ++u) {
            GR_LANES_TO_STATE(s, av[u], ax[u]);
        }
#if GR_VARN && GR_VW == 1
        gr_cs += gr_cv;
#elif GR_VARN
        {
            long lanes_c[GR_VW];
            GR_CAT(vstore, GR_VW)(gr_cv, 0, lanes_c);
            for (int l = 0; l < GR_VW; ++l) {
                gr_cs += (ulong)lanes_c[l];
            }
        }
#endif
    }
#endif
    /* What the vector tiles left over (all of it for partial input). */
    if (GR_LOAD != GR_LOAD_STRIDE_GLOBAL) {
        const ulong rest = lo_al + nv * (ulong)GR_WG * GR_LW;
        for (ulong i = rest + lid; i < hi; i += GR_WG) {
            GR_FOLD_ELEM(s, p, inx + seg_base, var_cnt + seg_base, wq, i, i);
        }
    }
    s = gr_group_combine(s, lv, lx);
#if GR_VARN
    gr_cs = gr_group_count(gr_cs, lc);
#else
    gr_cs = var_n;
#endif
    if (lid == 0) {
#if GR_ATOMIC
        gr_atomic_merge(outv + seg, s);
#else
        GR_STORE(s, out0 + seg * parts + part, gr_cs);
#endif
    }
}

#if GR_ATOMIC
/* The atomic variant's accumulators start at the identity ... */
__kernel void gr_reduce_init(__global GR_A *acc, ulong M)
{
    const ulong i = get_global_id(0);
    if (i < M) {
        acc[i] = GR_IDENT_V;
    }
}

/* ... and end in the result type. */
__kernel void gr_reduce_finish(__global const GR_A *acc, __global GR_R *out,
                               ulong M)
{
    const ulong i = get_global_id(0);
    if (i < M) {
        gr_state s;
        s.v = acc[i];
        s.x = 0;
        out[i] = gr_finish(s);
    }
}
#endif

__kernel void gr_reduce_items(__global const GR_IN *restrict in,
                              __global const GR_X *restrict inx,
                              ulong base, ulong L, ulong seg_stride,
                              ulong elem_stride, ulong chunk, ulong M,
                              ulong idx0, ulong out0,
                              __global GR_OUT *restrict outv,
                              __global GR_X *restrict outx,
                              GR_A var_k, uint var_self, ulong var_n,
                              GR_A var_ddof,
                              __global ulong *var_cnt,
                              __global const GR_WT *restrict wm, long wdelta)
{
    GR_WTEMPS
    const ulong part = get_global_id(1);
    const uint parts = get_global_size(1);
    const ulong lo = part * chunk;
    const ulong hi = min(lo + chunk, L);
#if GR_VW > 1 && !GR_IN_PARTIAL && !defined(GR_SEG_LANES)
    /* Adjacent segments (seg_stride 1: the columns of a C-ordered matrix),
     * GR_VW of them per work-item: one vector load reads row i of all of
     * them, and each lane of the accumulator is its own segment.  This is
     * the CPU's layout for columns (explicit SIMD, one stream per row). */
    const ulong j0 = get_global_id(0) * GR_VW;
    if (j0 + GR_VW <= M) {
        GR_VA av = (GR_VA)GR_IDENT_V;
        GR_VX ax = (GR_VX)GR_IDENT_X;
#if GR_VARN
        GR_VC gr_cv = 0; /* lane l: segment j0 + l's count */
#endif
        __global const GR_T *p = in + base + j0;
#if GR_VAR
        /* each lane its own segment's shift: row 0 */
#if GR_VAR_WSHIFT
        /* with where=: each lane the first finite of its first 8 rows */
        GR_VA gr_kv = (GR_VA)var_k;
        if (var_self) {
            __global const GR_WT *q0 = wm + (base + j0 + wdelta);
            gr_kv = (GR_VA)0;
            for (long i = (long)min(L, (ulong)8) - 1; i >= 0; --i) {
                const GR_VA y_ = GR_WSEL_V(
                    GR_CVT_V(GR_VLOAD_T(p + i * elem_stride)),
                    q0 + i * elem_stride);
                gr_kv = GR_SEL(gr_kv, y_, isfinite(y_));
            }
        }
#else
        GR_VA gr_kv = var_self ? GR_CVT_V(GR_VLOAD_T(p)) : (GR_VA)var_k;
#if GR_NAN
        gr_kv = GR_SEL(gr_kv, (GR_VA)0, GR_ISNAN(gr_kv));
#endif
#endif
#endif
#if GR_WHERE && GR_WAXIS
        /* one weight per row, for every lane */
        __global const GR_WT *wq = wm + ((ulong)wdelta + idx0);
#define GR_WCOL(y, i) GR_WSEL_B(y, wq + (i))
#elif GR_WHERE
        __global const GR_WT *wq = wm + (base + j0 + wdelta);
#define GR_WCOL(y, i) GR_WSEL_V(y, wq + (i) * elem_stride)
#else
#define GR_WCOL(y, i) (y)
#endif
        for (ulong i = lo; i < hi; ++i) {
            GR_FOLD(av, ax,
                    GR_WCOL(GR_CVTN_V(GR_VLOAD_T(p + i * elem_stride)), i),
                    (GR_VX)((long)(idx0 + i)), GR_VA, GR_VX, GR_VM);
        }
        GR_A lanes_v[GR_VW];
        GR_X lanes_x[GR_VW];
        GR_CAT(vstore, GR_VW)(av, 0, lanes_v);
        GR_CAT(vstore, GR_VW)(ax, 0, lanes_x);
#if GR_VARN
        long lanes_c[GR_VW];
        GR_CAT(vstore, GR_VW)(gr_cv, 0, lanes_c);
#endif
        for (int l = 0; l < GR_VW; ++l) {
            gr_state s;
            s.v = lanes_v[l];
            s.x = lanes_x[l];
#if GR_VARN
            GR_STORE(s, out0 + (j0 + l) * parts + part, (ulong)lanes_c[l]);
#else
            GR_STORE(s, out0 + (j0 + l) * parts + part, var_n);
#endif
        }
    } else {
        /* The last few segments, one at a time. */
        for (ulong seg = j0; seg < M; ++seg) {
#if GR_VAR
            const GR_A gr_ks =
                var_self ? GR_VSHIFT(in + base + seg, wm + wdelta + base + seg,
                                     elem_stride, L)
                         : var_k;
#endif
            gr_state s = gr_identity();
            ulong gr_cs = 0;
            for (ulong i = lo; i < hi; ++i) {
                GR_FOLD_ELEM(s, in, inx, var_cnt,
                             wm + wdelta + (GR_WAXIS ? idx0 : 0),
                             base + seg + i * elem_stride, i);
            }
            GR_STORE(s, out0 + seg * parts + part, GR_VARN ? gr_cs : var_n);
        }
    }
#else
    /* One work-item per segment, or on NVIDIA (segment_per_warp, short
     * rows) GR_SEG_LANES lanes of a warp per segment: lane l reads
     * elements l, l + GR_SEG_LANES, ... (a warp's loads cover 32 /
     * GR_SEG_LANES whole rows, coalesced where a work-item per row reads
     * at the row's stride), then the lanes shuffle down within their
     * group; no barrier, no local memory. */
#ifdef GR_SEG_LANES
#define GRI_LANES GR_SEG_LANES
#else
#define GRI_LANES 1
#endif
#if defined(GR_SEG_LANES) && GR_VW > 1 && !GR_VAR && !GR_WHERE
    /* Short rows read as vectors (plan_warp: 4- and 8-byte elements, no
     * where=, no variance): lane l reads the GR_VW-wide vectors l, l +
     * GRI_LANES, ... of its row, so a warp's lanes read 32 / GRI_LANES
     * whole rows with one load each, every byte of the span once (the
     * element loop above reads a 16-byte piece of each 64-byte row per
     * load).  A warp takes GR_ILP such row blocks, their loads all
     * issued before the shuffles.  A view whose rows do not start on a
     * vector (its base, a part's start or the row stride not a multiple
     * of GR_VW) takes the elements one at a time, in the same places. */
    const ulong warp = get_global_id(0) / 32;
    const uint wl = get_local_id(0) % 32;
    const uint lane = wl % GRI_LANES;
    const ulong start = lo + lane * GR_VW; /* GR_LANE_X: within the row */
    const ulong step = (ulong)GRI_LANES * GR_VW;
    const ulong tail = lo + (hi - lo) / GR_VW * GR_VW;
    const int vec_ok = elem_stride == 1 && (base + lo) % GR_VW == 0 &&
                       (M == 1 || seg_stride % GR_VW == 0);
    gr_state sr[GR_ILP];
#pragma unroll
    for (int r = 0; r < GR_ILP; ++r) {
        const ulong j = (warp * GR_ILP + r) * (32 / GRI_LANES) + wl / GRI_LANES;
        const ulong seg_base = base + min(j, M - 1) * seg_stride;
        gr_state s = gr_identity();
        ulong gr_cs = 0;
        if (vec_ok) {
            __global const GR_T *p = in + seg_base;
            GR_VA av = (GR_VA)GR_IDENT_V;
            GR_VAUX ax = GR_VAUX_IDENT;
            /* vec_ok: p + at is on a whole vector, and a vector pointer
             * says so (a vloadN compiles to N loads) */
#define GRI_VFOLD(at, k)                                                     \
    GR_FOLD_MAIN(av, ax, GR_CVTN_V(*(__global const GR_VEC(GR_T) *)(p + at)), \
                 at, k)
#ifdef GR_SEG_VITERS
            /* at most GR_SEG_VITERS loads a lane (plan_warp): unrolled,
             * so they are all issued before the first fold */
#pragma unroll
            for (uint k = 0; k < GR_SEG_VITERS; ++k) {
                const ulong at = start + k * step;
                if (at + GR_VW <= hi) {
                    GRI_VFOLD(at, k);
                }
            }
#else
            ulong k = 0;
            for (ulong at = start; at + GR_VW <= hi; at += step, ++k) {
                GRI_VFOLD(at, k);
            }
#endif
#undef GRI_VFOLD
            GR_LANES_TO_STATE(s, av, ax);
            for (ulong i = tail + lane; i < hi; i += GRI_LANES) {
                GR_FOLD_ELEM(s, in, inx, var_cnt, wm, seg_base + i, i);
            }
        } else {
            for (ulong i = lo + lane; i < hi; i += GRI_LANES) {
                GR_FOLD_ELEM(s, in, inx, var_cnt, wm,
                             seg_base + i * elem_stride, i);
            }
        }
        (void)gr_cs;
        sr[r] = s;
    }
#pragma unroll
    for (int r = 0; r < GR_ILP; ++r) {
#pragma unroll
        for (uint d = GRI_LANES / 2; d > 0; d >>= 1) {
            gr_merge(&sr[r], gr_shfl_down_state(sr[r], d));
        }
    }
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < GR_ILP; ++r) {
            const ulong j = (warp * GR_ILP + r) * (32 / GRI_LANES) + wl / GRI_LANES;
            if (j < M) {
                GR_STORE(sr[r], out0 + j * parts + part, var_n);
            }
        }
    }
#else
    const ulong j = get_global_id(0) / GRI_LANES;
    const uint lane = get_local_id(0) % GRI_LANES;
    /* Clamp instead of returning early: the loop bounds stay uniform in
     * the work-group, which lets PoCL vectorise across work-items (and
     * every lane of a warp reaches the shuffles). */
    const ulong seg = min(j, M - 1);
    const ulong seg_base = base + seg * seg_stride;
#if GR_VAR && !GR_IN_PARTIAL
    const GR_A gr_ks = var_self ? GR_VSHIFT(in + seg_base,
                                            wm + seg_base + wdelta,
                                            elem_stride, L)
                                : var_k;
#endif
    gr_state s = gr_identity();
    ulong gr_cs = 0;
    for (ulong i = lo + lane; i < hi; i += GRI_LANES) {
        GR_FOLD_ELEM(s, in, inx, var_cnt, wm + wdelta + (GR_WAXIS ? idx0 : 0),
                     seg_base + i * elem_stride, i);
    }
#if GRI_LANES > 1
#pragma unroll
    for (uint d = GRI_LANES / 2; d > 0; d >>= 1) {
        gr_merge(&s, gr_shfl_down_state(s, d));
#if GR_VARN
        gr_cs += gr_shfl_down_u64(gr_cs, d);
#endif
    }
#endif
    if (lane == 0 && j < M) {
        GR_STORE(s, out0 + seg * parts + part, GR_VARN ? gr_cs : var_n);
    }
#endif
#endif
}

#if GR_NAN && !GR_IN_PARTIAL && (GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX)
/* nanargmin/nanargmax (NaN read as +inf / -inf): flag[m] = whether the
 * index found for segment m (res[res0 + m]) points at a NaN.  That is a
 * slice of NaNs only (NumPy's ValueError) or one whose NaNs tie with its
 * +inf / -inf and come first (NumPy's answer, an index of a NaN): the
 * Python face tells the two apart, only where a flag is set.  One
 * work-item a segment, enqueued after the reduction. */
__kernel void gr_nanarg_check(__global const GR_T *in, ulong base,
                              ulong seg_stride, ulong elem_stride,
                              __global const long *res, ulong res0, ulong M,
                              __global uchar *flag)
{
    const ulong m = get_global_id(0);
    if (m < M) {
        const ulong i = (ulong)res[res0 + m];
        const GR_TV y = GR_LD(in, base + m * seg_stride + i * elem_stride);
        flag[m] = (uchar)(GR_ISNAN(y) != 0);
    }
}
#endif
