/*
 * gpured — user-defined reductions (gpured.ReductionKernel) and the fused
 * built-ins on them (dot, logsumexp).
 *
 * The same two passes as kernels/reduce.cl (elements -> M x parts states
 * -> M results) and the same ladder: the loads (GR_LOAD: coalesced,
 * chunked, stride_global; GR_VW-wide vector loads, GR_ILP accumulators)
 * and the work-group combine of kernels/common.cl (gr_group_combine:
 * naive, divergence_free, unroll_*, subgroup) are knobs; the operator is
 * the user's, injected by the host's defines (GR_OP GR_OP_USER):
 *
 *   GR_USER_PARAMS     the kernel's inputs: "__global const T *restrict
 *                      gr_in0, ulong gr_o0, ..., const T gr_s2," (each
 *                      array with its element offset; a trailing comma)
 *   GR_USER_ARGS       the same names, to pass them on
 *   GR_USER_LOADS(i)   declares each input parameter's element i (a
 *                      scalar's value) by the user's name
 *   GR_USER_VLOADS(i)  vector loads of GR_VW elements from i into lane
 *                      arrays; GR_USER_LANE(l) declares lane l by name
 *   GR_USER_MAP        the map expression (an element's value)
 *   GR_USER_ELEM_X     an element's auxiliary state part (GR_USER_X 1);
 *                      it may read gr_e_, the element's offset (the
 *                      index that _kernels.py's complex extremes keep)
 *   GR_USER_MERGE(a,b) merge state b into *a (common.cl's gr_merge)
 *   GR_USER_POST       the post-map statement: a state gr_s in, the
 *                      output parameter (GR_USER_OUT) written
 *
 * Elements of segment s: in[base + s * seg_stride + i * elem_stride] for
 * every input alike (the Python face lays them out so); gr_custom_group
 * needs elem_stride 1, gr_custom_items (one work-item per segment and
 * part) takes any.  GR_IN_PARTIAL 1 builds pass 2: its elements are the
 * partial states.  No atomic variant (a user operator has no hardware
 * read-modify-write), no work-group collectives (add/min/max only).
 */
#ifndef GR_IN_PARTIAL
#define GR_IN_PARTIAL 0
#endif
#define GR_LOAD_COALESCED 0
#define GR_LOAD_CONTIG 1
#define GR_LOAD_STRIDE_GLOBAL 2
#ifndef GR_LOAD
#define GR_LOAD GR_LOAD_COALESCED
#endif
#if GR_FINAL
#define GR_OUT GR_R
#else
#define GR_OUT GR_A
#endif
#ifndef GR_USER_ELEM_X
#define GR_USER_ELEM_X 0
#endif

#if GR_IN_PARTIAL
#define GR_CPARAMS                                                           \
    __global const GR_A *restrict gr_pv, __global const GR_X *restrict gr_px,
#define GR_ELEM(i) gr_part_elem(gr_pv, gr_px, (i))
inline gr_state gr_part_elem(__global const GR_A *restrict pv,
                             __global const GR_X *restrict px, ulong i)
{
    gr_state s;
    s.v = pv[i];
#if GR_HAS_X
    s.x = px[i];
#else
    s.x = 0;
#endif
    return s;
}
#else
#define GR_CPARAMS GR_USER_PARAMS
#define GR_ELEM(i) gr_user_elem(GR_USER_ARGS(i))

/* Element gr_i as a state: the map of every input's element gr_i. */
inline gr_state gr_user_elem(GR_USER_PARAMS ulong gr_i)
{
    GR_USER_LOADS(gr_i)
    const ulong gr_e_ = gr_i;
    gr_state gr_s;
    gr_s.v = (GR_A)(GR_USER_MAP);
    gr_s.x = (GR_X)(GR_USER_ELEM_X);
    return gr_s;
}

/* GR_VW elements from gr_i on, lane l folded into acc[l] (independent
 * lanes, as the vector accumulators of reduce.cl). */
inline void gr_user_fold_v(gr_state *gr_acc, GR_USER_PARAMS ulong gr_i)
{
#if GR_VW == 1
    gr_merge(&gr_acc[0], gr_user_elem(GR_USER_ARGS gr_i));
#else
    GR_USER_VLOADS(gr_i)
#pragma unroll
    for (int gr_lane = 0; gr_lane < GR_VW; ++gr_lane) {
        GR_USER_LANE(gr_lane)
        const ulong gr_e_ = gr_i + (ulong)gr_lane;
        gr_state gr_s;
        gr_s.v = (GR_A)(GR_USER_MAP);
        gr_s.x = (GR_X)(GR_USER_ELEM_X);
        gr_merge(&gr_acc[gr_lane], gr_s);
    }
#endif
}
#endif

/* A state, or its result (GR_FINAL: the post-map; gr_L elements per
 * segment, gr_M segments: CuPy's _in_ind.size() / _out_ind.size()). */
inline void gr_cstore(gr_state gr_s, __global GR_OUT *outv,
                      __global GR_X *outx, ulong at, ulong gr_L, ulong gr_M)
{
#if GR_FINAL
    GR_R GR_USER_OUT;
    GR_USER_POST;
    outv[at] = GR_USER_OUT;
#else
    outv[at] = gr_s.v;
#if GR_HAS_X
    outx[at] = gr_s.x;
#endif
#endif
}

__kernel __attribute__((reqd_work_group_size(GR_WG, 1, 1)))
void gr_custom_group(GR_CPARAMS ulong base, ulong L, ulong seg_stride,
                     ulong chunk, uint parts, ulong seg0, ulong out0,
                     __global GR_OUT *restrict outv,
                     __global GR_X *restrict outx, ulong post_L,
                     ulong post_M)
{
    __local GR_A lv[GR_WG];
    __local GR_X lx[GR_HAS_X ? GR_WG : 1];
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0);
    const ulong seg = seg0 + g / parts;
    const ulong part = g % parts;
    const ulong lo = part * chunk;
    const ulong hi = min(lo + chunk, L);
    const ulong sb = base + seg * seg_stride;
    gr_state s = gr_identity();
    ulong nv = 0;
#if !GR_IN_PARTIAL
    const ulong n = hi - lo;
#if GR_LOAD == GR_LOAD_CONTIG
    /* variant: chunked */
    const ulong cw = (n / GR_WG) / GR_VW * GR_VW;
    const ulong start = lo + lid * cw;
    const ulong step = GR_VW;
    nv = cw / GR_VW;
#elif GR_LOAD == GR_LOAD_STRIDE_GLOBAL
    /* variant: stride_global */
    const ulong start = part * GR_WG + lid;
    const ulong step = (ulong)parts * GR_WG;
    nv = L > start ? (L - start + step - 1) / step : 0;
#else
    /* variant: stride_local, vector (and the ladder's one per item) */
    const ulong start = lo + lid * GR_VW;
    const ulong step = (ulong)GR_WG * GR_VW;
    nv = n / ((ulong)GR_WG * GR_VW);
#endif
    {
        gr_state acc[GR_ILP * GR_VW];
#pragma unroll
        for (int u = 0; u < GR_ILP * GR_VW; ++u) {
            acc[u] = gr_identity();
        }
        ulong k = 0;
        for (; k + GR_ILP <= nv; k += GR_ILP) {
#pragma unroll
            for (int u = 0; u < GR_ILP; ++u) {
                gr_user_fold_v(acc + u * GR_VW,
                               GR_USER_ARGS sb + start + (k + u) * step);
            }
        }
        for (; k < nv; ++k) {
            gr_user_fold_v(acc, GR_USER_ARGS sb + start + k * step);
        }
#pragma unroll
        for (int u = 0; u < GR_ILP * GR_VW; ++u) {
            gr_merge(&s, acc[u]);
        }
    }
#endif
    /* What the vector tiles left over (all of it for partial input). */
#if GR_IN_PARTIAL || GR_LOAD != GR_LOAD_STRIDE_GLOBAL
    {
        const ulong rest = lo + nv * (ulong)GR_WG * GR_VW;
        for (ulong i = rest + lid; i < hi; i += GR_WG) {
            gr_merge(&s, GR_ELEM(sb + i));
        }
    }
#endif
    s = gr_group_combine(s, lv, lx);
    if (lid == 0) {
        gr_cstore(s, outv, outx, out0 + seg * parts + part, post_L, post_M);
    }
}

/* variant: segment_per_item: one work-item per (segment, part). */
__kernel void gr_custom_items(GR_CPARAMS ulong base, ulong L, ulong seg_stride,
                              ulong elem_stride, ulong chunk, ulong M,
                              ulong out0, __global GR_OUT *restrict outv,
                              __global GR_X *restrict outx, ulong post_L,
                              ulong post_M)
{
    const ulong j = get_global_id(0);
    const ulong part = get_global_id(1);
    const ulong parts = get_global_size(1);
    const ulong lo = part * chunk;
    const ulong hi = min(lo + chunk, L);
    if (j >= M) {
        return;
    }
    const ulong sb = base + j * seg_stride;
    gr_state s = gr_identity();
    for (ulong i = lo; i < hi; ++i) {
        gr_merge(&s, GR_ELEM(sb + i * elem_stride));
    }
    gr_cstore(s, outv, outx, out0 + j * parts + part, post_L, post_M);
}
