/*
 * gpured — prefix scans (cumsum, cumprod, cummin, cummax) of the rows of an
 * M x L layout, inclusive or exclusive.  A program is
 *     defines + kernels/common.cl + kernels/scan.cl
 * and reuses common.cl's state (gr_state: value v, compensation x), its
 * operator table (gr_merge, GR_FOLD_S, gr_identity, gr_finish) and its PTX
 * helpers.  Macros set by csrc/scan.c besides common.cl's:
 *
 *   GR_ITEMS     elements per work-item per tile (a tile is GR_WG x GR_ITEMS
 *                elements of one row)
 *   GR_LOCAL     the work-group scan of the work-items' aggregates:
 *                  1 naive      each work-item loops over the aggregates
 *                               before it (the seed's first kernel)
 *                  2 blelloch   up-sweep / down-sweep in local memory,
 *                               bank-conflict-avoiding offsets
 *                  3 workgroup  work_group_scan_exclusive_* (OpenCL 2.0)
 *                  4 subgroup   warp scans (shfl.sync.up through PTX, or
 *                               sub_group_scan_* of cl_khr_subgroups), then
 *                               one scan of the warp totals
 *   GR_MV, GR_MVR  vector width of loads / stores (16 bytes)
 *   GR_IN_ALIGNED, GR_OUT_ALIGNED  rows start on a vector boundary: vector
 *                pointers instead of vloadn/vstoren
 *   GR_SPIN      polls of a not-yet-published predecessor before the
 *                look-back reduces that predecessor's tile itself
 *   GR_CPU_TILE  1: the look-back tile is one work-item's contiguous run,
 *                read twice (reduce, then scan from cache) in GR_ILP
 *                independent sub-blocks (CPUs: no serial dependency chain)
 *
 * Phases of each kernel (one row = one segment; rows never mix):
 *
 *   gr_scan_chunks     group g scans chunk g % parts of row g / parts, tile
 *                      after tile, carrying the prefix; with parts == 1 this
 *                      is the seed's "one work-group per sub-array" loop
 *                      (variants naive/blelloch/workgroup/subgroup), with a
 *                      carry-in it is phase 3 of reduce_then_scan.
 *   gr_scan_reduce     phase 1 of reduce_then_scan: one state per chunk
 *   gr_scan_partials   phase 2: exclusive scan of each row's chunk states
 *   gr_scan_lookback   single pass (decoupled look-back, as CUB's
 *                      DeviceScan):
 *
 *        tile t:  load -> reduce -> publish A(t) -> look back -> publish
 *                 P(t) -> scan the registers with the prefix -> store
 *
 *        look-back from t-1 down: P(j) ends it (prefix = P(j) + A(j+1) ...
 *        + A(t-1)); A(j) is folded in and j-1 is read next; X (nothing yet)
 *        is polled again, and after GR_SPIN polls the tile reduces tile j
 *        from the input itself (the "decoupled fallback").
 *   gr_scan_row_items  one work-item per row, sequential: short rows packed
 *                      many to a work-group, and strided (column) layouts
 *                      with consecutive work-items on consecutive rows.
 *
 * Float32 sums accumulate in float64 where the device has it, float64 sums
 * with TwoSum compensation (as the reductions): every prefix is a
 * blocked-pairwise combination (GR_ITEMS sequential folds, then a tree of
 * depth log2(GR_WG) and a chain of tile prefixes held in the accumulator).
 */

#define GR_TILE ((ulong)GR_WG * GR_ITEMS)

/* float16 / bfloat16 storage (issue 40; csrc/scan.c): GR_T and GR_R are
 * float in registers while GR_SELT (the input) and GR_SRELT (the result)
 * say how memory holds them: 1 half (vload_half / vstore_half_rte, core
 * OpenCL C 1.2, no cl_khr_fp16), 2 bfloat16 as ushort bits (the upper
 * half of a float; stores round to nearest even, a NaN stays a NaN).
 * Loads widen exactly; each result is rounded once, from float. */
#ifndef GR_SELT
#define GR_SELT 0
#endif
#ifndef GR_SRELT
#define GR_SRELT 0
#endif
#if GR_SELT == 1
#define GRS_TG half
#define GRS_LD(p, i) vload_half((i), (p))
#elif GR_SELT == 2
#define GRS_TG ushort
#define GRS_LD(p, i) as_float((uint)(p)[i] << 16)
#else
#define GRS_TG GR_T
#define GRS_LD(p, i) ((p)[i])
#endif
#if GR_SRELT == 2
/* float -> bfloat16 bits, round to nearest even (kernels/copy.cl's) */
inline ushort grs_bf16_rne(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (ushort)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}
#endif
#if GR_SRELT == 1
#define GRS_RG half
#define GRS_ST(p, i, v) vstore_half_rte((v), (i), (p))
#elif GR_SRELT == 2
#define GRS_RG ushort
#define GRS_ST(p, i, v) ((p)[i] = grs_bf16_rne(v))
#else
#define GRS_RG GR_R
#define GRS_ST(p, i, v) ((p)[i] = (v))
#endif

#ifndef GR_SPIN
#define GR_SPIN 4096
#endif

/* Element -> state. */
inline gr_state grs_elem(GR_T x)
{
    gr_state s;
    s.v = GR_CVTN_S(x);
    s.x = (GR_X)0;
    return s;
}

/* a then b: the state of a's elements followed by b's. */
inline gr_state grs_cat(gr_state a, gr_state b)
{
    gr_merge(&a, b);
    return a;
}

inline void grs_fold(gr_state *s, GR_T x)
{
#if GR_OP == GR_OP_USER && defined(GR_USER_ELEM)
    /* a user operator whose element sets the whole state (value and
     * auxiliary part: ScanKernel.by_key's run-start flag) */
    gr_state e_;
    GR_USER_ELEM(e_, x);
    gr_merge(s, e_);
#else
    GR_FOLD_S(*s, GR_CVTN_S(x), 0);
#endif
}

#if !GR_CPU_TILE /* register tiles (the CPU tile re-reads memory instead) */
/* ------------------------------------------------ vector loads and stores */

#if GR_MV > 1
#define GR_TVEC GR_CAT(GR_T, GR_MV)
#define GR_VLOADN GR_CAT(vload, GR_MV)
#if GR_SELT == 1
#define GRS_VLOAD_IN(k, p) GR_CAT(vload_half, GR_MV)((k), (p))
#elif GR_SELT == 2
#define GRS_VLOAD_IN(k, p)                                                  \
    GR_AS(GR_TVEC, GR_CONVERT(GR_CAT(uint, GR_MV), GR_VLOADN((k), (p))) << 16)
#elif GR_IN_ALIGNED
#define GRS_VLOAD_IN(k, p) (((__global const GR_TVEC *)(p))[k])
#else
#define GRS_VLOAD_IN(k, p) GR_VLOADN((k), (p))
#endif
#endif
#if GR_MVR > 1
#define GR_RVEC GR_CAT(GR_R, GR_MVR)
#define GR_VSTOREN GR_CAT(vstore, GR_MVR)
#if GR_SRELT == 1
#define GRS_VSTORE_OUT(v, k, p)                                             \
    GR_CAT(GR_CAT(vstore_half, GR_MVR), _rte)((v), (k), (p))
#elif GR_SRELT == 2
#define GRS_UVEC GR_CAT(uint, GR_MVR)
/* grs_bf16_rne on a vector */
inline GR_CAT(ushort, GR_MVR) grs_bf16_vec(GR_RVEC v)
{
    const GRS_UVEC u = GR_AS(GRS_UVEC, v);
    const GRS_UVEC r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const GRS_UVEC n = (u >> 16) | 0x40u;
    return GR_CONVERT(GR_CAT(ushort, GR_MVR),
                      select(r, n, GR_AS(GRS_UVEC, isnan(v))));
}
#define GRS_VSTORE_OUT(v, k, p) GR_VSTOREN(grs_bf16_vec(v), (k), (p))
#elif GR_OUT_ALIGNED
#define GRS_VSTORE_OUT(v, k, p) (((__global GR_RVEC *)(p))[k] = (v))
#else
#define GRS_VSTORE_OUT(v, k, p) GR_VSTOREN((v), (k), (p))
#endif
#endif

/* x[0..GR_ITEMS) <- p[0..GR_ITEMS), all in range. */
inline void grs_load_full(__global const GRS_TG *p, GR_T *x)
{
#if GR_MV > 1
#pragma unroll
    for (uint k = 0; k < GR_ITEMS / GR_MV; ++k) {
        GR_TVEC v = GRS_VLOAD_IN(k, p);
        union { GR_TVEC v; GR_T s[GR_MV]; } u;
        u.v = v;
#pragma unroll
        for (uint j = 0; j < GR_MV; ++j) {
            x[k * GR_MV + j] = u.s[j];
        }
    }
#else
#pragma unroll
    for (uint j = 0; j < GR_ITEMS; ++j) {
        x[j] = GRS_LD(p, j);
    }
#endif
}

inline void grs_store_full(__global GRS_RG *p, const GR_R *y)
{
#if GR_MVR > 1
#pragma unroll
    for (uint k = 0; k < GR_ITEMS / GR_MVR; ++k) {
        union { GR_RVEC v; GR_R s[GR_MVR]; } u;
#pragma unroll
        for (uint j = 0; j < GR_MVR; ++j) {
            u.s[j] = y[k * GR_MVR + j];
        }
        GRS_VSTORE_OUT(u.v, k, p);
    }
#else
#pragma unroll
    for (uint j = 0; j < GR_ITEMS; ++j) {
        GRS_ST(p, j, y[j]);
    }
#endif
}

#endif /* !GR_CPU_TILE */

/* ------------------------------------------------ work-group scans
 * grs_group_scan(s, lv, lx, &total): the exclusive prefix of this
 * work-item's state s among the work-group's, and the group's total.
 * Every work-item calls it (it has barriers); lv/lx hold GR_LOCAL_N. */

#define GR_BANK(i) ((i) + ((i) >> 5)) /* one pad slot per 32 banks */
#define GR_LOCAL_N (GR_WG + (GR_WG >> 5) + 66) /* >= 64: warp totals */

#if GR_LOCAL == 1
/* variant: naive */
inline gr_state grs_group_scan(gr_state s, __local GR_A *lv, __local GR_X *lx,
                               gr_state *total)
{
    const uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* previous users of lv are done */
    gr_lstore(lv, lx, lid, s);
    barrier(CLK_LOCAL_MEM_FENCE);
    gr_state e = gr_identity();
    for (uint i = 0; i < lid; ++i) { /* every preceding aggregate */
        gr_merge(&e, gr_lload(lv, lx, i));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == GR_WG - 1) {
        gr_lstore(lv, lx, GR_WG, grs_cat(e, s));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *total = gr_lload(lv, lx, GR_WG);
    return e;
}

#elif GR_LOCAL == 2
/* variant: blelloch */
/* Blelloch's work-efficient scan (GPU Gems 3, ch. 39) over GR_WG states:
 * the up-sweep builds partial sums in a balanced tree, the root is cleared
 * and the down-sweep pushes prefixes back down.  GR_BANK pads one slot per
 * 32 so that the power-of-two strides of the tree fall on different banks.
 * (The seed's BANK_OFFSET(n) parses as n >> (4 + n) >> 8: here the offset
 * is n >> 5.) */
inline gr_state grs_group_scan(gr_state s, __local GR_A *lv, __local GR_X *lx,
                               gr_state *total)
{
    const uint lid = get_local_id(0);
    uint offset = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    gr_lstore(lv, lx, GR_BANK(lid), s);
    for (uint d = GR_WG >> 1; d > 0; d >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            uint ai = GR_BANK(offset * (2 * lid + 1) - 1);
            uint bi = GR_BANK(offset * (2 * lid + 2) - 1);
            gr_lstore(lv, lx, bi, grs_cat(gr_lload(lv, lx, ai), gr_lload(lv, lx, bi)));
        }
        offset <<= 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *total = gr_lload(lv, lx, GR_BANK(GR_WG - 1));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        gr_lstore(lv, lx, GR_BANK(GR_WG - 1), gr_identity());
    }
    for (uint d = 1; d < GR_WG; d <<= 1) {
        offset >>= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            uint ai = GR_BANK(offset * (2 * lid + 1) - 1);
            uint bi = GR_BANK(offset * (2 * lid + 2) - 1);
            gr_state t = gr_lload(lv, lx, ai);
            gr_state b = gr_lload(lv, lx, bi);
            gr_lstore(lv, lx, ai, b);
            gr_lstore(lv, lx, bi, grs_cat(b, t));
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return gr_lload(lv, lx, GR_BANK(lid));
}

#elif GR_LOCAL == 3
/* variant: workgroup */
/* OpenCL 2.0 work-group functions (the seed's last kernel): add, min, max
 * on 32/64-bit values.  They know nothing of NaN, so min/max carry a NaN
 * flag through a second scan; compensated sums enter as v + x. */
inline gr_state grs_group_scan(gr_state s, __local GR_A *lv, __local GR_X *lx,
                               gr_state *total)
{
    gr_state e = gr_identity(), t;
#if GR_OP == GR_OP_ADD
    GR_A v = GR_COMP ? s.v + s.x : s.v;
    s.v = v;
    s.x = 0;
    e.v = work_group_scan_exclusive_add(v);
#elif GR_OP == GR_OP_MIN || GR_OP == GR_OP_MAX
#if GR_OP == GR_OP_MIN
    e.v = work_group_scan_exclusive_min(s.v);
#else
    e.v = work_group_scan_exclusive_max(s.v);
#endif
#if GR_A_FLOAT
    int nan_before = work_group_scan_exclusive_max(GR_ISNAN(s.v) ? 1 : 0);
    e.v = nan_before > 0 ? (GR_A)NAN : e.v; /* exclusive max starts at INT_MIN */
#endif
#else
#error "the workgroup variant covers add, min and max"
#endif
    t = grs_cat(e, s);
    t.v = work_group_broadcast(t.v, GR_WG - 1);
    t.x = 0;
    *total = t;
    return e;
}

#elif GR_LOCAL == 4 && GR_SG == GR_SG_PTX
/* variant: subgroup */
/* NVIDIA: Kogge-Stone scan of each warp in registers (shfl.sync.up: lane
 * i reads lane i - d), the warps' totals meet in local memory, warp 0 scans
 * them the same way. */
/* Inclusive scan within the warp. */
inline gr_state grs_warp_scan(gr_state s, uint lane)
{
#pragma unroll
    for (uint d = 1; d < 32; d <<= 1) {
        gr_state o = gr_shfl_up_state(s, d);
        if (lane >= d) {
            s = grs_cat(o, s);
        }
    }
    return s;
}

inline gr_state grs_group_scan(gr_state s, __local GR_A *lv, __local GR_X *lx,
                               gr_state *total)
{
    const uint lid = get_local_id(0), lane = lid & 31u, warp = lid >> 5;
    const uint nw = GR_WG / 32;
    gr_state incl = grs_warp_scan(s, lane);
    gr_state e = gr_shfl_up_state(incl, 1);
    if (lane == 0) {
        e = gr_identity();
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 31) {
        gr_lstore(lv, lx, warp, incl);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp == 0) {
        gr_state w = lane < nw ? gr_lload(lv, lx, lane) : gr_identity();
        w = grs_warp_scan(w, lane);
        gr_lstore(lv, lx, 32 + lane, w); /* inclusive over warps */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp > 0) {
        e = grs_cat(gr_lload(lv, lx, 32 + warp - 1), e);
    }
    *total = gr_lload(lv, lx, 32 + nw - 1);
    return e;
}

#elif GR_LOCAL == 4 && GR_SG == GR_SG_KHR
/* variant: subgroup */
/* cl_khr_subgroups: sub_group_scan_exclusive_add/min/max in each
 * sub-group; work-item 0 chains the sub-groups' totals (a handful) in
 * local memory, so no sub-group barrier sits inside a loop. */
inline gr_state grs_group_scan(gr_state s, __local GR_A *lv, __local GR_X *lx,
                               gr_state *total)
{
    const uint lid = get_local_id(0);
    const uint sg = get_sub_group_id(), nsg = get_num_sub_groups();
    gr_state e = gr_identity();
#if GR_OP == GR_OP_ADD
    s.v = GR_COMP ? s.v + s.x : s.v;
    s.x = 0;
    e.v = sub_group_scan_exclusive_add(s.v);
#elif GR_OP == GR_OP_MIN || GR_OP == GR_OP_MAX
#if GR_OP == GR_OP_MIN
    e.v = sub_group_scan_exclusive_min(s.v);
#else
    e.v = sub_group_scan_exclusive_max(s.v);
#endif
#if GR_A_FLOAT
    int nan_before = sub_group_scan_exclusive_max(GR_ISNAN(s.v) ? 1 : 0);
    e.v = nan_before > 0 ? (GR_A)NAN : e.v; /* exclusive max starts at INT_MIN */
#endif
#else
#error "the khr subgroup variant covers add, min and max"
#endif
    gr_state incl = grs_cat(e, s);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_sub_group_local_id() == get_sub_group_size() - 1) {
        gr_lstore(lv, lx, sg, incl);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        gr_state run = gr_identity();
        for (uint i = 0; i < nsg; ++i) {
            gr_state t = gr_lload(lv, lx, i);
            gr_lstore(lv, lx, i, run);
            gr_merge(&run, t);
        }
        gr_lstore(lv, lx, nsg, run);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    e = grs_cat(gr_lload(lv, lx, sg), e);
    *total = gr_lload(lv, lx, nsg);
    return e;
}

#else
/* One work-item per group (CPUs): nothing to combine. */
inline gr_state grs_group_scan(gr_state s, __local GR_A *lv, __local GR_X *lx,
                               gr_state *total)
{
    *total = s;
    return gr_identity();
}
#endif

#if !GR_CPU_TILE
/* ------------------------------------------------ one tile of one row
 * The work-items of a group own GR_ITEMS consecutive elements each
 * ("blocked" arrangement) while they scan.  Memory is read and written
 * "warp-striped" when a work-item's run is wider than one 16-byte vector
 * (GRS_STRIPE), as CUB's BLOCK_LOAD_WARP_TRANSPOSE: the 32 work-items of
 * a warp own 32 x GR_ITEMS consecutive elements; vector k of lane l is
 * vector k * 32 + l of that segment, so each load or store instruction of
 * the warp covers 512 contiguous bytes.  The runs are exchanged through
 * local memory, padded by one vector per 8 so that both the striped and
 * the blocked accesses of a quarter-warp fall on distinct banks:
 *
 *     global  |v0 v1 ... v31|v32 ... v63|...     lane l: v_l, v_l+32, ...
 *                   |  local (padded)  |
 *     lane l's run: v_{l*R} .. v_{l*R+R-1}       (R = GR_ITEMS / GR_MV)
 *
 * Only the warp touches its segment, so a warp barrier (NVIDIA) or the
 * group barrier (elsewhere) orders the exchange.
 *
 * GR_TSUM (float32 sums with a float64 accumulator): a work-item's run
 * (<= 32 elements) is totalled in float64 for the tile scan, as before,
 * but its outputs come from float32 partial sums p_j: the run's float64
 * exclusive prefix P is split into hi = (float)P and lo = (float)(P - hi),
 * and y_j = hi + (lo + p_j).  One float64 conversion per element instead
 * of three; the extra error, items * u32 * (sum of |x| over the run so
 * far), stays local to the run (the bound documented with gpured.cumsum). */

/* GR_STRIPE_WIDE (csrc/scan.c: where the results' tile fits the local
 * memory): results wider than the elements (int32 -> int64 sums) are
 * striped too, through the same buffer sized for the wider tile. */
#ifndef GR_STRIPE_WIDE
#define GR_STRIPE_WIDE 0
#endif
#if GR_ITEMS > GR_MV && GR_ITEMS % GR_MV == 0 && GR_WG > 1 && GR_MV > 1 && \
    (GR_T_SIZE == GR_R_SIZE ||                                             \
     (GR_STRIPE_WIDE && GR_ITEMS > GR_MVR && GR_ITEMS % GR_MVR == 0 &&    \
      GR_MVR > 1 && GR_MV * GR_T_SIZE == GR_MVR * GR_R_SIZE))
#define GRS_STRIPE 1
#define GRS_LANES (GR_WG < 32 ? GR_WG : 32)
/* one padding vector per 8, in elements of the loads (PAD) and of the
 * stores (PADR): both vectors are 16 bytes */
#define GRS_PAD(e) ((e) + GR_MV * ((e) / (8 * GR_MV)))
#define GRS_PADR(e) ((e) + GR_MVR * ((e) / (8 * GR_MVR)))
#define GRS_XCH_T (GRS_PAD((uint)GR_WG * GR_ITEMS) / GR_MV)
#define GRS_XCH_R (GRS_PADR((uint)GR_WG * GR_ITEMS) / GR_MVR)
#define GRS_XCH_N (GRS_XCH_T > GRS_XCH_R ? GRS_XCH_T : GRS_XCH_R)
#define GRS_XT GR_TVEC
#if GR_NVIDIA && GR_WG % 32 == 0
#define GRS_WARP_SYNC() gr_warp_sync()
#else
#define GRS_WARP_SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#endif
/* Before a warp writes the buffer again: its own part of it if elements
 * and results have one size, every warp's if not (a warp's results lie
 * over the elements of the next warps). */
#if GR_T_SIZE == GR_R_SIZE
#define GRS_XCH_FREE() GRS_WARP_SYNC()
#else
#define GRS_XCH_FREE() barrier(CLK_LOCAL_MEM_FENCE)
#endif
#else
#define GRS_STRIPE 0
#define GRS_XT GR_T
#endif

#ifndef GR_TSUM
#define GR_TSUM 0
#endif
/* Look-back tiles read their run again from the exchange buffer after the
 * look-back instead of holding it in registers across it. */
#ifndef GRS_REREAD
#define GRS_REREAD GRS_STRIPE
#endif

/* nan* scans: the run's NaNs read as GR_NANREP before anything (the
 * float32 partial sums of GR_TSUM included) uses them. */
inline void grs_nanrep(GR_T *x)
{
#if GR_NAN
#pragma unroll
    for (uint j = 0; j < GR_ITEMS; ++j) {
        x[j] = GR_ISNAN(x[j]) ? (GR_T)GR_NANREP : x[j];
    }
#endif
}

#if GRS_STRIPE
/* x[0..GR_ITEMS) <- this work-item's run, from the exchange buffer the
 * warp filled (its blocked positions). */
inline void grs_tile_regs(GR_T *x, __local const GRS_XT *xch)
{
    const uint lid = get_local_id(0);
#pragma unroll
    for (uint k = 0; k < GR_ITEMS / GR_MV; ++k) {
        union { GR_TVEC v; GR_T s[GR_MV]; } u;
        u.v = xch[GRS_PAD(lid * GR_ITEMS + k * GR_MV) / GR_MV];
#pragma unroll
        for (uint j = 0; j < GR_MV; ++j) {
            x[k * GR_MV + j] = u.s[j];
        }
    }
    grs_nanrep(x);
}
#endif

/* Loads this work-item's run of the tile at row[pos..end) (zeros past
 * end) and folds it; returns how many of its elements are in range. */
inline uint grs_tile_load(__global const GRS_TG *row, ulong pos, ulong end,
                          GR_T *x, gr_state *agg, __local GRS_XT *xch)
{
    const uint lid = get_local_id(0);
    const ulong p = pos + (ulong)lid * GR_ITEMS;
    const uint nv = p >= end ? 0 : (end - p < GR_ITEMS ? (uint)(end - p) : GR_ITEMS);
    gr_state a = gr_identity();
#if GRS_STRIPE
    const uint lane = lid % GRS_LANES, wbase = (lid - lane) * GR_ITEMS;
    GRS_XCH_FREE(); /* done with the exchange buffer */
    if (pos + GR_TILE <= end) {
#pragma unroll
        for (uint k = 0; k < GR_ITEMS / GR_MV; ++k) {
            const uint e = wbase + (k * GRS_LANES + lane) * GR_MV;
            xch[GRS_PAD(e) / GR_MV] = GRS_VLOAD_IN(e / GR_MV, row + pos);
        }
    } else {
        __local GR_T *xs = (__local GR_T *)xch;
        for (uint k = 0; k < GR_ITEMS / GR_MV; ++k) {
            const uint e = wbase + (k * GRS_LANES + lane) * GR_MV;
            for (uint c = 0; c < GR_MV; ++c) {
                xs[GRS_PAD(e) + c] =
                    pos + e + c < end ? GRS_LD(row, pos + e + c) : (GR_T)0;
            }
        }
    }
    GRS_WARP_SYNC();
    grs_tile_regs(x, xch);
#else
    if (nv == GR_ITEMS) {
        grs_load_full(row + p, x);
    } else {
#pragma unroll
        for (uint j = 0; j < GR_ITEMS; ++j) {
            x[j] = j < nv ? GRS_LD(row, p + j) : (GR_T)0;
        }
    }
    grs_nanrep(x);
#endif
#if GR_TSUM
    /* The run's total in float64 (its float32 sum's error would reach
     * every later prefix); zeros past end change nothing. */
#pragma unroll
    for (uint j = 0; j < GR_ITEMS; ++j) {
        a.v += (GR_A)x[j];
    }
#else
#pragma unroll
    for (uint j = 0; j < GR_ITEMS; ++j) {
        if (j < nv) {
            grs_fold(&a, x[j]);
        }
    }
#endif
    *agg = a;
    return nv;
}

/* Writes the scan of this work-item's run (nv elements in range, tile
 * row[pos..end)), starting from its exclusive prefix `run`. */
inline void grs_tile_store(__global GRS_RG *orow, ulong pos, ulong end,
                           uint nv, const GR_T *x, gr_state run, uint excl,
                           __local GRS_XT *xch)
{
    const uint lid = get_local_id(0);
    const ulong p = pos + (ulong)lid * GR_ITEMS;
    GR_R y[GR_ITEMS];
#if GR_TSUM
    const float hi = (float)run.v;
    /* lo's zero takes hi's sign and q starts from -0.0: a prefix of -0.0
     * stays -0.0 (NumPy's cumsum keeps the first element as it is) */
    const float l0 = isinf(hi) ? 0.0f : (float)(run.v - (double)hi);
    const float lo = l0 != 0.0f ? l0 : copysign(0.0f, hi);
    float q = -0.0f; /* the run's float32 partial sums */
#pragma unroll
    for (uint j = 0; j < GR_ITEMS; ++j) {
        const float before = q;
        q += x[j];
        y[j] = hi + (lo + (excl ? before : q));
    }
#else
#pragma unroll
    for (uint j = 0; j < GR_ITEMS; ++j) {
        gr_state before = run;
        grs_fold(&run, x[j]);
        y[j] = gr_finish(excl ? before : run);
    }
#endif
#if GRS_STRIPE
    __local GR_RVEC *xr = (__local GR_RVEC *)xch;
    const uint lane = lid % GRS_LANES, wbase = (lid - lane) * GR_ITEMS;
    GRS_XCH_FREE(); /* done with the exchange buffer */
#pragma unroll
    for (uint k = 0; k < GR_ITEMS / GR_MVR; ++k) {
        union { GR_RVEC v; GR_R s[GR_MVR]; } u;
#pragma unroll
        for (uint j = 0; j < GR_MVR; ++j) {
            u.s[j] = y[k * GR_MVR + j];
        }
        xr[GRS_PADR(lid * GR_ITEMS + k * GR_MVR) / GR_MVR] = u.v;
    }
    GRS_WARP_SYNC();
    if (pos + GR_TILE <= end) {
#pragma unroll
        for (uint k = 0; k < GR_ITEMS / GR_MVR; ++k) {
            const uint e = wbase + (k * GRS_LANES + lane) * GR_MVR;
            GRS_VSTORE_OUT(xr[GRS_PADR(e) / GR_MVR], e / GR_MVR, orow + pos);
        }
    } else {
        __local GR_R *ys = (__local GR_R *)xch;
        for (uint k = 0; k < GR_ITEMS / GR_MVR; ++k) {
            const uint e = wbase + (k * GRS_LANES + lane) * GR_MVR;
            for (uint c = 0; c < GR_MVR; ++c) {
                if (pos + e + c < end) {
                    GRS_ST(orow, pos + e + c, ys[GRS_PADR(e) + c]);
                }
            }
        }
    }
#else
    if (nv == GR_ITEMS) {
        grs_store_full(orow + p, y);
    } else {
#pragma unroll
        for (uint j = 0; j < GR_ITEMS; ++j) {
            if (j < nv) {
                GRS_ST(orow, p + j, y[j]);
            }
        }
    }
#endif
}

/* The group's total of the tile at row[pos..end) (every work-item). */
inline gr_state grs_tile_reduce(__global const GRS_TG *row, ulong pos,
                                ulong end,
                                __local GR_A *lv, __local GR_X *lx,
                                __local GRS_XT *xch)
{
    GR_T x[GR_ITEMS];
    gr_state a, total;
    grs_tile_load(row, pos, end, x, &a, xch);
    grs_group_scan(a, lv, lx, &total);
    return total;
}

/* ------------------------------------------------ kernels */

/* Scan chunk (g % parts) of row (g / parts): elements [c0, c1) of it, from
 * the carried-in prefix carry_v/x[g] (reduce_then_scan) or the identity. */
__kernel void gr_scan_chunks(__global const GRS_TG *in, ulong in_base, ulong L,
                             ulong seg_stride, ulong chunk, uint parts,
                             __global const GR_A *carry_v,
                             __global const GR_X *carry_x, uint has_carry,
                             __global GRS_RG *out, ulong out_base,
                             ulong out_seg_stride, uint excl)
{
    __local GR_A lv[GR_LOCAL_N];
#if GR_HAS_X
    __local GR_X lx[GR_LOCAL_N];
#else
    __local GR_X *lx = 0;
#endif
#if GRS_STRIPE
    __local GRS_XT xch[GRS_XCH_N];
#else
    __local GRS_XT *xch = 0;
#endif
    const ulong g = get_group_id(0);
    const ulong row = g / parts, part = g % parts;
    __global const GRS_TG *rin = in + in_base + row * seg_stride;
    __global GRS_RG *rout = out + out_base + row * out_seg_stride;
    const ulong c0 = part * chunk;
    const ulong c1 = min(L, c0 + chunk);
    gr_state prefix = gr_identity();
    if (has_carry) {
        prefix.v = carry_v[g];
#if GR_HAS_X
        prefix.x = carry_x[g];
#endif
    }
    for (ulong pos = c0; pos < c1; pos += GR_TILE) {
        GR_T x[GR_ITEMS];
        gr_state a, total;
        uint nv = grs_tile_load(rin, pos, c1, x, &a, xch);
        gr_state e = grs_group_scan(a, lv, lx, &total);
        grs_tile_store(rout, pos, c1, nv, x, grs_cat(prefix, e), excl, xch);
        prefix = grs_cat(prefix, total);
    }
}

#else /* GR_CPU_TILE */
#define GRS_STRIPE 0
#define GRS_XT GR_T
#endif /* !GR_CPU_TILE */

/* Phase 1 of reduce_then_scan: the state of every chunk. */
__kernel void gr_scan_reduce(__global const GRS_TG *in, ulong in_base, ulong L,
                             ulong seg_stride, ulong chunk, uint parts,
                             __global GR_A *part_v, __global GR_X *part_x)
{
    __local GR_A lv[GR_LOCAL_N];
#if GR_HAS_X
    __local GR_X lx[GR_LOCAL_N];
#else
    __local GR_X *lx = 0;
#endif
    const ulong g = get_group_id(0);
    const ulong row = g / parts, part = g % parts;
    __global const GRS_TG *rin = in + in_base + row * seg_stride;
    const ulong c0 = part * chunk;
    const ulong c1 = min(L, c0 + chunk);
    gr_state a = gr_identity(), total;
#if GR_WG == 1
    for (ulong i = c0; i < c1; ++i) {
        grs_fold(&a, GRS_LD(rin, i));
    }
#elif GR_OP == GR_OP_USER
    /* A user operator need not commute: work-item l folds the l-th
     * contiguous run of the chunk, in order. */
    {
        const ulong per = (c1 - c0 + GR_WG - 1) / GR_WG;
        const ulong lo = min(c1, c0 + get_local_id(0) * per);
        const ulong hi = min(c1, lo + per);
        for (ulong i = lo; i < hi; ++i) {
            grs_fold(&a, rin[i]);
        }
    }
#else
    /* Coalesced: work-item l folds elements l, l + WG, ... of the chunk
     * (all our operators are commutative). */
    for (ulong i = c0 + get_local_id(0); i < c1; i += GR_WG) {
        grs_fold(&a, GRS_LD(rin, i));
    }
#endif
    grs_group_scan(a, lv, lx, &total);
    if (get_local_id(0) == 0) {
        part_v[g] = total.v;
#if GR_HAS_X
        part_x[g] = total.x;
#endif
    }
}

/* Phase 2 of reduce_then_scan: each row's chunk states -> their exclusive
 * prefixes, in place (one work-item per row: parts is small). */
__kernel void gr_scan_partials(__global GR_A *part_v, __global GR_X *part_x,
                               uint parts, ulong M)
{
    const ulong row = get_global_id(0);
    if (row >= M) {
        return;
    }
    gr_state run = gr_identity();
    for (uint p = 0; p < parts; ++p) {
        const ulong i = row * parts + p;
        gr_state t;
        t.v = part_v[i];
#if GR_HAS_X
        t.x = part_x[i];
        part_x[i] = run.x;
#else
        t.x = 0;
#endif
        part_v[i] = run.v;
        gr_merge(&run, t);
    }
}

/* One work-item per row, sequentially: short rows and strided layouts. */
__kernel void gr_scan_row_items(__global const GRS_TG *in, ulong in_base,
                                ulong L, ulong seg_stride, ulong elem_stride,
                                ulong M, __global GRS_RG *out, ulong out_base,
                                ulong out_seg_stride, ulong out_elem_stride,
                                uint excl)
{
    const ulong row = get_global_id(0);
    if (row >= M) {
        return;
    }
    __global const GRS_TG *rin = in + in_base + row * seg_stride;
    __global GRS_RG *rout = out + out_base + row * out_seg_stride;
    gr_state run = gr_identity();
    ulong i = 0;
    /* GR_ILP (the plan's ilp) loads issued before their folds: each store
     * depends on the loads before it, so one load at a time waits a full
     * memory latency per element (csrc/policy.c has the figures) */
    for (; i + GR_ILP <= L; i += GR_ILP) {
        GR_T x[GR_ILP];
#pragma unroll
        for (uint u = 0; u < GR_ILP; ++u) {
            x[u] = GRS_LD(rin, (i + u) * elem_stride);
        }
#pragma unroll
        for (uint u = 0; u < GR_ILP; ++u) {
            gr_state before = run;
            grs_fold(&run, x[u]);
            GRS_ST(rout, (i + u) * out_elem_stride,
                   gr_finish(excl ? before : run));
        }
    }
    for (; i < L; ++i) {
        gr_state before = run;
        grs_fold(&run, GRS_LD(rin, i * elem_stride));
        GRS_ST(rout, i * out_elem_stride, gr_finish(excl ? before : run));
    }
}

/* ------------------------------------------------ decoupled look-back
 *
 * Tile status words, their publication and polling, and what the
 * look-back relies on (coherent 64-bit atomics or PTX relaxed loads and
 * stores; forward progress through the decoupled fallback) are common.cl's
 * (gr_status_publish / gr_status_poll), shared with reduce_by_key.
 */
#if GR_LOOKBACK
/* Pause between polls of a predecessor (NVIDIA; GR_BACKOFF_NS 0: none). */
#ifndef GR_BACKOFF_NS
#define GR_BACKOFF_NS 64
#endif
#if GR_BACKOFF_NS > 0
#define GRS_BACKOFF() GR_BACKOFF(GR_BACKOFF_NS)
#else
#define GRS_BACKOFF()
#endif

#if GR_SG == GR_SG_PTX && GR_WG >= 32
/* NVIDIA: warp 0 looks back through a window of 32 predecessors at once
 * (lane l reads tile j - l), as CUB's DeviceScan does. */
#define GRS_WARP_LOOKBACK 1

/* Fold of the lanes' states in lane order (lane 0 ends with it).  d grows:
 * after step d lane l holds lanes l .. l + 2d - 1 in order, so an operator
 * that does not commute (ScanKernel's, its by-key (flag, value) states)
 * folds right; a falling d would pair lanes 0, 16, 8, 24, ... */
inline gr_state grs_warp_fold(gr_state s)
{
#pragma unroll
    for (uint d = 1; d < 32; d <<= 1) {
        /* lanes l and l + d: the higher lane is the earlier tile */
        s = grs_cat(gr_shfl_down_state(s, d), s);
    }
    return s;
}
#endif

/* Look back from tile `t` (global index, `k` within its row): returns the
 * exclusive prefix of the tile, to every work-item.  One work-item (or
 * warp 0 on NVIDIA) polls; the whole group joins only to reduce a stalled
 * predecessor (GR_SPIN polls without news). */
inline gr_state grs_look_back(__global ulong *status, ulong t, ulong k,
                              __global const GRS_TG *rin, ulong L,
                              __local GR_A *lv, __local GR_X *lx,
                              __local long *sh_j, __local gr_state *sh_s,
                              __local GRS_XT *xch, uint *fell)
{
    const uint lid = get_local_id(0);
    long j = (long)k - 1; /* predecessor within the row */
    gr_state acc = gr_identity(); /* fold of tiles j+1 .. k-1 */
    for (;;) {
#ifdef GRS_WARP_LOOKBACK
        if (lid < 32) {
            uint spins = 0;
            while (j >= 0) {
                gr_state s = gr_identity();
                uint f = GR_STATUS_P;
                if ((long)lid <= j) {
                    f = gr_status_poll(status, t - (k - (ulong)(j - (long)lid)), &s);
                } else {
                    s = gr_identity();
                }
                uint first_x, first_p;
                gr_window(f, &first_x, &first_p);
                if (first_x == 0) {
                    if (++spins > GR_SPIN) {
                        break; /* stalled: the group reduces tile j */
                    }
                    GRS_BACKOFF();
                    continue;
                }
                spins = 0;
                /* Lanes before the first X or through the first P. */
                const uint take = first_p < first_x ? first_p + 1 : first_x;
                if (lid >= take) {
                    s = gr_identity();
                }
                s = grs_warp_fold(s);
                acc = grs_cat(s, acc); /* lane 0's is the one used */
                if (first_p < first_x) {
                    j = -1;
                    break;
                }
                j -= (long)take;
            }
            if (lid == 0) {
                *sh_j = j;
                *sh_s = acc;
            }
        }
#else
        if (lid == 0) {
            uint spins = 0;
            while (j >= 0) {
                gr_state s;
                uint f = gr_status_poll(status, t - (k - (ulong)j), &s);
                if (f == GR_STATUS_X) {
                    if (++spins > GR_SPIN) {
                        break; /* stalled: the group reduces tile j */
                    }
                    continue;
                }
                spins = 0;
                acc = grs_cat(s, acc);
                if (f == GR_STATUS_P) {
                    j = -1;
                    break;
                }
                --j;
            }
            *sh_j = j;
            *sh_s = acc;
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        const long jj = *sh_j;
        acc = *sh_s;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (jj < 0) {
            return acc;
        }
        /* Decoupled fallback: tile jj's aggregate straight from the input
         * (through the exchange buffer: *fell tells the caller). */
        *fell = 1;
        const ulong p0 = (ulong)jj * GR_TILE;
#if GR_CPU_TILE
        gr_state agg = gr_identity();
        for (ulong i = p0; i < min(L, p0 + GR_TILE); ++i) {
            grs_fold(&agg, GRS_LD(rin, i));
        }
#else
        gr_state agg = grs_tile_reduce(rin, p0, min(L, p0 + GR_TILE), lv, lx, xch);
#endif
        acc = grs_cat(agg, acc);
        j = jj - 1;
    }
}

__kernel void gr_scan_lookback(__global const GRS_TG *in, ulong in_base,
                               ulong L, ulong seg_stride, ulong tiles,
                               __global uint *counter,
                               __global ulong *status, ulong ntiles,
                               __global GRS_RG *out, ulong out_base,
                               ulong out_seg_stride, uint excl)
{
    __local GR_A lv[GR_LOCAL_N];
#if GR_HAS_X
    __local GR_X lx[GR_LOCAL_N];
#else
    __local GR_X *lx = 0;
#endif
#if GRS_STRIPE
    __local GRS_XT xch[GRS_XCH_N];
#else
    __local GRS_XT *xch = 0;
#endif
    __local uint sh_tile;
    __local long sh_j;
    __local gr_state sh_s;
    const uint lid = get_local_id(0);
#ifndef GR_GID_TILE
#define GR_GID_TILE GR_NVIDIA
#endif
#if GR_GID_TILE
    /* NVIDIA: tile = group id, so the loads start at once instead of after
     * the tile counter's atomic round trip (the hardware starts groups in
     * id order; correctness never depends on it: see "Forward progress"). */
    const ulong t = get_group_id(0);
#else
    /* Tiles in the order they start, not in get_group_id() order. */
    if (lid == 0) {
        sh_tile = atomic_inc(counter);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong t = sh_tile;
#endif
    const ulong row = t / tiles, k = t % tiles;
    __global const GRS_TG *rin = in + in_base + row * seg_stride;
    __global GRS_RG *rout = out + out_base + row * out_seg_stride;
    const ulong pos = k * GR_TILE;
    const ulong end = min(L, pos + GR_TILE);
    gr_state prefix;

#if GR_CPU_TILE
    /* One work-item, GR_ITEMS contiguous elements in GR_ILP sub-blocks:
     * reduce each (independent accumulators), publish, look back, then
     * scan the sub-blocks side by side from cache. */
    const ulong n = end - pos;
    const ulong sb = (n + GR_ILP - 1) / GR_ILP;
    gr_state agg[GR_ILP], total = gr_identity();
    if (sb * GR_ILP == n) {
#pragma unroll
        for (uint b = 0; b < GR_ILP; ++b) {
            agg[b] = gr_identity();
        }
        for (ulong i = 0; i < sb; ++i) {
#pragma unroll
            for (uint b = 0; b < GR_ILP; ++b) {
                grs_fold(&agg[b], GRS_LD(rin, pos + b * sb + i));
            }
        }
    } else {
        for (uint b = 0; b < GR_ILP; ++b) {
            agg[b] = gr_identity();
            for (ulong i = pos + b * sb; i < min(end, pos + (b + 1) * sb); ++i) {
                grs_fold(&agg[b], GRS_LD(rin, i));
            }
        }
    }
    for (uint b = 0; b < GR_ILP; ++b) {
        gr_merge(&total, agg[b]);
    }
    if (k > 0) {
        gr_status_publish(status, t, GR_STATUS_A, total);
        uint fell = 0;
        prefix = grs_look_back(status, t, k, rin, L, lv, lx, &sh_j, &sh_s, xch,
                               &fell);
    } else {
        prefix = gr_identity();
    }
    gr_status_publish(status, t, GR_STATUS_P, grs_cat(prefix, total));
    gr_state run[GR_ILP];
    run[0] = prefix;
    for (uint b = 1; b < GR_ILP; ++b) {
        run[b] = grs_cat(run[b - 1], agg[b - 1]);
    }
    if (sb * GR_ILP == n) {
        for (ulong i = 0; i < sb; ++i) {
#pragma unroll
            for (uint b = 0; b < GR_ILP; ++b) {
                const ulong q = pos + b * sb + i;
                gr_state before = run[b];
                grs_fold(&run[b], GRS_LD(rin, q));
                GRS_ST(rout, q, gr_finish(excl ? before : run[b]));
            }
        }
    } else {
        for (uint b = 0; b < GR_ILP; ++b) {
            for (ulong q = pos + b * sb; q < min(end, pos + (b + 1) * sb); ++q) {
                gr_state before = run[b];
                grs_fold(&run[b], GRS_LD(rin, q));
                GRS_ST(rout, q, gr_finish(excl ? before : run[b]));
            }
        }
    }
#else
    GR_T x[GR_ITEMS];
    gr_state a, total;
    uint fell = 0;
    const uint nv = grs_tile_load(rin, pos, end, x, &a, xch);
    const gr_state e = grs_group_scan(a, lv, lx, &total);
    if (k == 0) {
        if (lid == 0) {
            gr_status_publish(status, t, GR_STATUS_P, total);
        }
        prefix = gr_identity();
    } else {
        if (lid == 0) {
            gr_status_publish(status, t, GR_STATUS_A, total);
        }
        prefix = grs_look_back(status, t, k, rin, L, lv, lx, &sh_j, &sh_s, xch,
                               &fell);
        if (lid == 0) {
            gr_status_publish(status, t, GR_STATUS_P, grs_cat(prefix, total));
        }
    }
#if GRS_REREAD
    /* The run again from the exchange buffer, so that x[] does not live
     * in registers across the look-back (more groups per multiprocessor);
     * from the input again where a fallback used the buffer (rare). */
    if (fell) {
        grs_tile_load(rin, pos, end, x, &a, xch);
    } else {
        grs_tile_regs(x, xch);
    }
#endif
    grs_tile_store(rout, pos, end, nv, x, grs_cat(prefix, e), excl, xch);
#endif
}
#endif /* GR_LOOKBACK */
