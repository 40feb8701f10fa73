/*
 * gpured — reduce-by-key kernels (seed 004: warp-aggregated atomics by
 * key; seed 002: reductions of groups inside a wavefront).
 *
 * Macros set by csrc/bykey.c on top of those of common.cl (GR_T is the
 * value type, GR_A the accumulator, GR_R the result):
 *   GR_K         key type (char .. ulong, read at its own width: uint8
 *                label images move a byte a key); GR_K_SIZE its bytes
 *   GR_BK_COUNT  1: every value is 1 (op "count": run lengths)
 *   GR_BK_PTX    NVIDIA inline PTX: red.global.add.f32/f64, warp votes
 *   GR_BK_MATCH  warp_aggregated finds peers with match.any.sync (sm_70+)
 *   GR_BK_H      bins of the local_hash variant
 *   GR_BK_LW     private_bins in local memory (gr_bk_lbins): words of them
 *                (0: the kernel is not compiled), GR_BK_LC copies a bin
 *
 * Two families of algorithms live here.
 *
 * Sorted segments (reduce_by_key, scan_by_key, deterministic sum_by_key) —
 * a segmented scan over tiles, as CUB's ReduceByKey is one:
 *
 *   keys   3 3 3 | 5 5 7 | 7 7 7 | 7 2 2      (tiles of WG x ITEMS)
 *   head   1 0 0 | 1 0 1 | 0 0 0 | 0 1 0      k[i] != k[i-1]
 *   pass 1 gr_bk_summary: per tile (has a head, heads, aggregate of the
 *          run still open at the tile's end)
 *   pass 2 gr_bk_tiles: one work-group scans the tile summaries: heads
 *          before each tile (output offsets) and the open run's aggregate
 *          carried into it
 *   pass 3 gr_bk_final: each work-item walks ITEMS consecutive elements
 *          with its carry (a segmented scan of the work-items' summaries
 *          in local memory, seeded by the tile's carry) and writes: every
 *          prefix (scan), each run's total at its last element (reduce:
 *          at the run's index; dense: at out[key]).
 *   The folding order depends only on the tile geometry, never on timing:
 *   results are bitwise reproducible on a device.
 *
 * Atomics into a dense array of num_keys bins (sum_by_key):
 *   gr_bk_atomic      one global atomic per element
 *   gr_bk_warp        seed 004: lanes with equal keys ("peers", found by
 *                     match.any.sync or a shuffle/ballot loop over the
 *                     distinct keys) combine in log2(peers) shuffle steps,
 *                     one atomic per key per warp
 *   gr_bk_wg_runs     the same over a work-group in local memory, for
 *                     devices without sub-groups: one atomic per run of
 *                     equal keys in each tile of WG elements
 *   gr_bk_hash        work-group-private bins in local memory for keys
 *                     kmin .. kmin + H of each tile (kmin: the tile's
 *                     smallest key), one global atomic per occupied bin;
 *                     keys outside the window go straight to global memory
 *   gr_bk_lbins       GPUs (private_bins): copies of the bins in local
 *                     memory (one a work-item for few keys: no atomics),
 *                     folded once a work-group, one global atomic a bin
 *   gr_bk_priv_*      CPUs: each work-item owns a full private copy of the
 *                     bins (no atomics at all), merged bin by bin after
 *
 * gr_bk_stats validates keys (0 <= key < num_keys; first offending index)
 * and measures order (descents k[i] < k[i-1], heads) before anything is
 * written; the plan picks the variant from these.
 */

#if GR_K_SIZE == 8 || GR_A_SIZE == 8 || GR_BK_CHECK || GR_BK_SEG == 5
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#define BK_KEY(i) keys[koff + (i)]
#if GR_BK_COUNT
#define BK_VAL(i) ((GR_A)1)
#else
#define BK_VAL(i) GR_CVT_S(vals[voff + (i)])
#endif
/* Negative keys, as unsigned, are larger than any num_keys. */
#define BK_U(k) ((k) < (GR_K)0 ? ULONG_MAX : (ulong)(k))

/* ------------------------------------------------------------ stats */

/* Tile t covers elements [t * WG * items, (t + 1) * WG * items); work-item
 * l reads l, l + WG, ... (coalesced; with WG 1 one contiguous chunk).
 * stats[4t + 0..3] = first bad index (ULONG_MAX: none), heads, descents,
 * largest key. */
#if GR_BK_SEG == 1 /* the plain program: key checks */
__kernel void gr_bk_stats(__global const GR_K *keys, ulong koff, ulong n,
                          ulong nk, ulong items, __global ulong *stats)
{
    __local ulong l0[GR_WG], l1[GR_WG], l2[GR_WG], l3[GR_WG];
    const uint lid = get_local_id(0);
    const ulong t0 = (ulong)get_group_id(0) * items * GR_WG;
    ulong bad = ULONG_MAX, heads = 0, desc = 0, kmax = 0;
    for (ulong j = 0; j < items; ++j) {
        const ulong i = t0 + j * GR_WG + lid;
        if (i >= n) {
            break;
        }
        const GR_K k = BK_KEY(i);
        if (i > 0) {
            const GR_K p = BK_KEY(i - 1);
            heads += k != p ? 1 : 0;
            desc += k < p ? 1 : 0;
        } else {
            heads += 1;
        }
        const ulong u = BK_U(k);
        bad = (bad == ULONG_MAX && u >= nk) ? i : bad;
        kmax = u > kmax ? u : kmax;
    }
    l0[lid] = bad;
    l1[lid] = heads;
    l2[lid] = desc;
    l3[lid] = kmax;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = GR_WG / 2; off > 0; off >>= 1) {
        if (lid < off) {
            l0[lid] = min(l0[lid], l0[lid + off]);
            l1[lid] += l1[lid + off];
            l2[lid] += l2[lid + off];
            l3[lid] = max(l3[lid], l3[lid + off]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        const ulong t = get_group_id(0);
        stats[4 * t + 0] = l0[0];
        stats[4 * t + 1] = l1[0];
        stats[4 * t + 2] = l2[0];
        stats[4 * t + 3] = l3[0];
    }
}
#endif /* GR_BK_SEG == 1 */

/* ------------------------------------------------- sorted segments */

/* Summary of a range of elements: f, a head lies in it; h, heads in it;
 * s, the aggregate of the run open at its end (from its last head, or of
 * everything if it has none). */
typedef struct {
    uint f;
    ulong h;
    gr_state s;
} bk_pair;

/* a followed by b. */
inline bk_pair bk_seg(bk_pair a, bk_pair b)
{
    bk_pair r = b;
    r.h = a.h + b.h;
    if (!b.f) {
        r.f = a.f;
        r.s = a.s;
        gr_merge(&r.s, b.s);
    }
    return r;
}

inline bk_pair bk_empty(void)
{
    bk_pair p;
    p.f = 0;
    p.h = 0;
    p.s = gr_identity();
    return p;
}

/* Summary of elements [g0, g0 + it) (clipped to n): the keys give the
 * heads; only the values of the run open at the end are read. */
inline bk_pair bk_thread(__global const GR_K *keys, ulong koff,
                         __global const GR_T *vals, ulong voff, ulong g0,
                         ulong it, ulong n)
{
    bk_pair p = bk_empty();
    if (g0 >= n) {
        return p;
    }
    GR_K prev = g0 > 0 ? BK_KEY(g0 - 1) : (GR_K)0;
    const ulong end = min(n, g0 + it);
    ulong last = g0;
    uint h = 0;
    for (ulong g = g0; g < end; ++g) {
        const GR_K k = BK_KEY(g);
        const uint head = (g == 0 || k != prev) ? 1u : 0u;
        h += head;
        last = head ? g : last;
        prev = k;
    }
    p.f = h != 0;
    p.h = h;
    for (ulong g = last; g < end; ++g) {
        GR_FOLD_S(p.s, BK_VAL(g), 0);
    }
    return p;
}

/* Inclusive segmented scan of the work-items' pairs (Hillis-Steele in local
 * memory); *excl gets the exclusive one. */
inline bk_pair bk_wg_scan(bk_pair p, __local uint *lf, __local ulong *lh,
                          __local GR_A *lv, bk_pair *excl)
{
    const uint lid = get_local_id(0);
    lf[lid] = p.f;
    lh[lid] = p.h;
    lv[lid] = p.s.v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < GR_WG; off <<= 1) {
        bk_pair q = bk_empty();
        if (lid >= off) {
            q.f = lf[lid - off];
            q.h = lh[lid - off];
            q.s.v = lv[lid - off];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid >= off) {
            p = bk_seg(q, p);
            lf[lid] = p.f;
            lh[lid] = p.h;
            lv[lid] = p.s.v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *excl = bk_empty();
    if (lid > 0) {
        excl->f = lf[lid - 1];
        excl->h = lh[lid - 1];
        excl->s.v = lv[lid - 1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return p;
}

/* gr_bk_final's and the chunk kernels' modes */
#define BK_MODE_REDUCE 0
#define BK_MODE_SCAN 1
#define BK_MODE_XSCAN 2
#define BK_MODE_DENSE 3

#if GR_BK_SEG == 1 /* the plain program: sorted segments */
/* Work-item l of tile t owns elements t*WG*it + l*it ... + it - 1. */
__kernel void gr_bk_summary(__global const GR_K *keys, ulong koff,
                            __global const GR_T *vals, ulong voff, ulong n,
                            ulong it, __global uint *tf, __global ulong *th,
                            __global GR_A *ta)
{
    __local uint lf[GR_WG];
    __local ulong lh[GR_WG];
    __local GR_A lv[GR_WG];
    const uint lid = get_local_id(0);
    const ulong t = get_group_id(0);
    bk_pair ex;
    bk_pair p = bk_thread(keys, koff, vals, voff,
                          (t * GR_WG + lid) * it, it, n);
    p = bk_wg_scan(p, lf, lh, lv, &ex);
    if (lid == GR_WG - 1) {
        tf[t] = p.f;
        th[t] = p.h;
        ta[t] = p.s.v;
    }
}

/* One work-group: th[t] becomes the heads before tile t, ta[t] the
 * aggregate of the run open before it; count[0] the number of runs. */
__kernel void gr_bk_tiles(__global const uint *tf, __global ulong *th,
                          __global GR_A *ta, ulong T, __global ulong *count)
{
    __local uint lf[GR_WG];
    __local ulong lh[GR_WG];
    __local GR_A lv[GR_WG];
    const uint lid = get_local_id(0);
    const ulong per = (T + GR_WG - 1) / GR_WG;
    const ulong a = min(T, lid * per), b = min(T, a + per);
    bk_pair p = bk_empty(), ex;
    for (ulong t = a; t < b; ++t) {
        bk_pair q;
        q.f = tf[t];
        q.h = th[t];
        q.s.v = ta[t];
        q.s.x = 0;
        p = bk_seg(p, q);
    }
    bk_wg_scan(p, lf, lh, lv, &ex);
    for (ulong t = a; t < b; ++t) {
        bk_pair q;
        q.f = tf[t];
        q.h = th[t];
        q.s.v = ta[t];
        q.s.x = 0;
        th[t] = ex.h;
        ta[t] = ex.s.v;
        ex = bk_seg(ex, q);
        if (t == T - 1) {
            count[0] = ex.h;
        }
    }
}

/* Pass 3.  mode REDUCE: okeys[r], ovals[r] for run r; SCAN/XSCAN: ovals[g]
 * the inclusive/exclusive prefix of element g within its run; DENSE:
 * ovals[key] for every run (keys sorted: one run per key). */
__kernel void gr_bk_final(__global const GR_K *keys, ulong koff,
                          __global const GR_T *vals, ulong voff, ulong n,
                          ulong it, __global const ulong *th,
                          __global const GR_A *ta, uint mode,
                          __global GR_K *okeys, __global GR_R *ovals)
{
    __local uint lf[GR_WG];
    __local ulong lh[GR_WG];
    __local GR_A lv[GR_WG];
    const uint lid = get_local_id(0);
    const ulong t = get_group_id(0);
    const ulong g0 = (t * GR_WG + lid) * it;
    bk_pair ex;
    bk_pair p = bk_thread(keys, koff, vals, voff, g0, it, n);
    bk_wg_scan(p, lf, lh, lv, &ex);
    bk_pair c = bk_empty();
    c.h = th[t];
    c.s.v = ta[t];
    c = bk_seg(c, ex);
    if (g0 >= n) {
        return;
    }
    gr_state s = c.s;
    ulong run = c.h;
    GR_K prev = g0 > 0 ? BK_KEY(g0 - 1) : (GR_K)0;
    const ulong end = min(n, g0 + it);
    for (ulong g = g0; g < end; ++g) {
        const GR_K k = BK_KEY(g);
        if (g == 0 || k != prev) {
            run += 1;
            s = gr_identity();
        }
        if (mode == BK_MODE_XSCAN) {
            ovals[g] = gr_finish(s);
        }
        GR_FOLD_S(s, BK_VAL(g), 0);
        if (mode == BK_MODE_SCAN) {
            ovals[g] = gr_finish(s);
        } else if (mode != BK_MODE_XSCAN) {
            if (g + 1 == n || BK_KEY(g + 1) != k) {
                if (mode == BK_MODE_DENSE) {
                    ovals[(ulong)k] = gr_finish(s);
                } else {
                    okeys[run - 1] = k;
                    ovals[run - 1] = gr_finish(s);
                }
            }
        }
        prev = k;
    }
}
#endif /* GR_BK_SEG == 1 */

/* CPUs (reduce_by_key, deterministic sum_by_key): a few work-items, each
 * walking one contiguous chunk sequentially, in one pass over keys and
 * values.  Work-item p owns every run whose head (first element) lies in
 * [p * chunk, (p + 1) * chunk) and follows its last run past the chunk's
 * end.  Dense mode writes ovals[key] directly; reduce mode writes its runs
 * to a staging area at the chunk's own offset (a chunk has at most chunk
 * runs) and their number to cnt[p]; gr_bk_chunk_move then packs them. */
#if GR_BK_CHUNKS
__kernel void gr_bk_chunk_runs(__global const GR_K *keys, ulong koff,
                               __global const GR_T *vals, ulong voff, ulong n,
                               ulong chunk, uint mode, __global GR_K *skeys,
                               __global GR_R *svals, __global ulong *cnt)
{
    const ulong p = get_global_id(0);
    const ulong a = p * chunk, e = min(n, a + chunk);
    ulong i = a, r = a;
    if (a > 0 && a < e) {
        const GR_K k0 = BK_KEY(a - 1); /* skip the run owned before */
        while (i < e && BK_KEY(i) == k0) {
            ++i;
        }
    }
    while (i < e) {
        const GR_K k = BK_KEY(i);
        gr_state s = gr_identity();
        do {
            GR_FOLD_S(s, BK_VAL(i), 0);
            ++i;
        } while (i < n && BK_KEY(i) == k);
        if (mode == BK_MODE_DENSE) {
            svals[(ulong)k] = gr_finish(s);
        } else {
            skeys[r] = k;
            svals[r] = gr_finish(s);
        }
        ++r;
    }
    cnt[p] = r - a;
}

/* Work-item p moves its cnt[p] runs to after those of the chunks before;
 * the last one writes the number of runs. */
__kernel void gr_bk_chunk_move(__global const GR_K *skeys,
                               __global const GR_R *svals, ulong chunk,
                               ulong P, __global const ulong *cnt,
                               __global GR_K *okeys, __global GR_R *ovals,
                               __global ulong *count)
{
    const ulong p = get_global_id(0);
    ulong r = 0;
    for (ulong q = 0; q < p; ++q) {
        r += cnt[q];
    }
    if (p == P - 1) {
        count[0] = r + cnt[p];
    }
    const ulong a = p * chunk, m = cnt[p];
    for (ulong j = 0; j < m; ++j) {
        okeys[r + j] = skeys[a + j];
        ovals[r + j] = svals[a + j];
    }
}
#endif

/* Bins of keys that never occur hold the identity; flag[0] (the first
 * bad key's index, found by the atomic kernels) starts at ULONG_MAX. */
#if GR_BK_SEG <= 1 /* the atomic and the plain programs */
__kernel void gr_bk_init(__global GR_R *out, ulong n, __global ulong *flag)
{
    const GR_R id = gr_finish(gr_identity());
    if (get_global_id(0) == 0) {
        flag[0] = ULONG_MAX;
    }
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        out[i] = id;
    }
}
#endif

/* NVIDIA inline PTX (GR_BK_PTX): common.cl's warp shuffles and votes
 * (warp_aggregated, the look-back window of reduce_by_key's single pass). */

/* ----------------------------------------------------------- atomics */

#if GR_BK_ATOMICS
/* The key check fused into the atomic kernels (GR_BK_CHECK: the device has
 * 64-bit atomics): an element whose key lies outside [0, nk) is skipped and
 * its index folded into flag[0] by an atomic minimum (compare-and-swap:
 * base atomics only).  The result buffer stays private until the shell has
 * read flag[0], so a bad key writes nothing the caller sees. */
#if GR_BK_CHECK
inline void bk_flag(__global ulong *flag, ulong i)
{
    volatile __global ulong *f = (volatile __global ulong *)flag;
    ulong seen = atom_cmpxchg(f, ULONG_MAX, i);
    while (i < seen) {
        const ulong prev = atom_cmpxchg(f, seen, i);
        if (prev == seen) {
            break;
        }
        seen = prev;
    }
}
/* 1 if key k (element i) may be folded, else flags i. */
#define BK_OK(k, i) (BK_U(k) < nk ? 1 : (bk_flag(flag, (i)), 0))
#else
#define BK_OK(k, i) 1
#endif

/* Fold a into *p (the accumulator has the result's bits). */
inline void bk_atomic(__global GR_A *p, GR_A a)
{
#if GR_OP == GR_OP_ADD && !GR_A_FLOAT && GR_A_SIZE == 4
    atomic_add((volatile __global uint *)p, (uint)a);
#elif GR_OP == GR_OP_ADD && !GR_A_FLOAT && GR_A_SIZE == 8
    atom_add((volatile __global ulong *)p, (ulong)a);
#elif GR_OP == GR_OP_ADD && GR_BK_PTX && GR_A_SIZE == 4
    __asm__ volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(a) : "memory");
#elif GR_OP == GR_OP_ADD && GR_BK_PTX && GR_A_SIZE == 8
    __asm__ volatile("red.global.add.f64 [%0], %1;" ::"l"(p), "d"(a) : "memory");
#elif GR_OP == GR_OP_MIN && !GR_A_FLOAT && GR_A_SIZE == 4
    atomic_min((volatile __global GR_A *)p, a);
#elif GR_OP == GR_OP_MAX && !GR_A_FLOAT && GR_A_SIZE == 4
    atomic_max((volatile __global GR_A *)p, a);
#else
    /* float64 without native atomics, 64-bit min/max, float min/max: a
     * compare-and-swap loop on the bits (common.cl). */
    gr_state s;
    s.v = a;
    s.x = 0;
    gr_atomic_merge(p, s);
#endif
}

/* Fold a into a local bin (local_hash). */
inline void bk_local_merge(__local GR_A *p, GR_A a)
{
#if GR_OP == GR_OP_ADD && !GR_A_FLOAT && GR_A_SIZE == 4
    atomic_add((volatile __local uint *)p, (uint)a);
#elif GR_OP == GR_OP_ADD && !GR_A_FLOAT && GR_A_SIZE == 8
    atom_add((volatile __local ulong *)p, (ulong)a);
#elif GR_OP == GR_OP_MIN && !GR_A_FLOAT && GR_A_SIZE == 4
    atomic_min((volatile __local GR_A *)p, a);
#elif GR_OP == GR_OP_MAX && !GR_A_FLOAT && GR_A_SIZE == 4
    atomic_max((volatile __local GR_A *)p, a);
#else
#if GR_A_SIZE == 8
#define BK_LCAS(q, o, n) atom_cmpxchg((volatile __local ulong *)(q), o, n)
#else
#define BK_LCAS(q, o, n) atomic_cmpxchg((volatile __local uint *)(q), o, n)
#endif
    GR_AU seen = BK_LCAS(p, (GR_AU)0, (GR_AU)0);
    for (;;) {
        gr_state s;
        s.v = GR_AS(GR_A, seen);
        s.x = 0;
        GR_FOLD_S(s, a, 0);
        GR_AU prev = BK_LCAS(p, seen, GR_AS(GR_AU, s.v));
        if (prev == seen) {
            break;
        }
        seen = prev;
    }
#endif
}

/* variant: atomic */
__kernel void gr_bk_atomic(__global const GR_K *keys, ulong koff,
                           __global const GR_T *vals, ulong voff, ulong n,
                           ulong items, __global GR_A *out, ulong nk,
                           __global ulong *flag)
{
    const uint lid = get_local_id(0);
    const ulong t0 = (ulong)get_group_id(0) * items * GR_WG;
    for (ulong j = 0; j < items; ++j) {
        const ulong i = t0 + j * GR_WG + lid;
        if (i >= n) {
            break;
        }
        const GR_K k = BK_KEY(i);
        if (BK_OK(k, i)) {
            bk_atomic(out + (ulong)k, BK_VAL(i));
        }
    }
}

/* variant: warp_aggregated (devices without sub-groups) */
/* Tiles of WG consecutive elements in local memory; the first work-item of
 * each run of equal keys folds the run and issues the one atomic. */
__kernel void gr_bk_wg_runs(__global const GR_K *keys, ulong koff,
                            __global const GR_T *vals, ulong voff, ulong n,
                            ulong items, __global GR_A *out, ulong nk,
                            __global ulong *flag)
{
    __local GR_K lk[GR_WG];
    __local GR_A lv[GR_WG];
    const uint lid = get_local_id(0);
    const ulong t0 = (ulong)get_group_id(0) * items * GR_WG;
    for (ulong j = 0; j < items; ++j) {
        const ulong b = t0 + j * GR_WG;
        if (b >= n) {
            break; /* uniform: b is the same for the whole group */
        }
        const uint m = (uint)min((ulong)GR_WG, n - b);
        if (lid < m) {
            lk[lid] = BK_KEY(b + lid);
            lv[lid] = BK_VAL(b + lid);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < m && (lid == 0 || lk[lid] != lk[lid - 1])) {
            const GR_K k = lk[lid];
            gr_state s;
            s.v = lv[lid];
            s.x = 0;
            for (uint q = lid + 1; q < m && lk[q] == k; ++q) {
                GR_FOLD_S(s, lv[q], 0);
            }
            if (BK_OK(k, b + lid)) { /* a bad run flags its first index */
                bk_atomic(out + (ulong)k, s.v);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#if GR_BK_PTX
/* variant: warp_aggregated (NVIDIA, inline PTX).  Seed 004's idea (one
 * atomic per key per warp, partial sums combined by shuffles) for keys
 * whose equal neighbours sit in consecutive lanes (sorted or clustered
 * keys): each warp flags the heads of its runs (key != the previous lane's
 * key), and a segmented suffix reduction of log2(32) shuffle steps leaves
 * each run's total in its head lane, which issues the one atomic.  A warp
 * whose lanes are all heads (keys in no order) skips the shuffles and
 * issues plain atomics: no cost over variant atomic for random keys, so
 * the automatic choice needs no measurement of the keys' order.
 * (Seed 004's match-any peers also merge equal keys in non-adjacent
 * lanes; on H100 that cost 25% over plain atomics for random keys.) */
__kernel void gr_bk_warp(__global const GR_K *keys, ulong koff,
                         __global const GR_T *vals, ulong voff, ulong n,
                         ulong items, __global GR_A *out, ulong nk,
                         __global ulong *flag)
{
    const uint lid = get_local_id(0);
    const uint lane = lid & 31u;
    const ulong t0 = (ulong)get_group_id(0) * items * GR_WG;
    for (ulong j = 0; j < items; ++j) {
        const ulong wbase = t0 + j * GR_WG + (lid - lane);
        if (wbase >= n) {
            break; /* uniform over the warp */
        }
        const ulong i = wbase + lane;
        uint valid = i < n;
        const GR_K key = valid ? BK_KEY(i) : (GR_K)0;
        GR_A x = valid ? BK_VAL(i) : GR_IDENT_V;
        if (valid && !BK_OK(key, i)) {
            valid = 0;
            x = GR_IDENT_V;
        }
        /* Heads: invalid lanes are runs of their own that write nothing. */
        const GR_K prev = GR_SHFL_UP1(GR_K, GR_K_SIZE, key);
        const uint vm = gr_ballot(valid);
        const uint head = !valid || lane == 0 || prev != key ||
                          ((vm >> (lane - 1)) & 1u) == 0;
        const uint hb = gr_ballot(head);
        if (hb != 0xffffffffu) { /* uniform: some lane continues a run */
            for (uint d = 1; d < 32; d <<= 1) {
                const GR_A y = GR_SHFL_DOWN(GR_A, GR_A_SIZE, x, d);
                /* add lane + d's partial if no head in (lane, lane + d] */
                if (lane + d < 32 &&
                    ((hb >> (lane + 1)) & ((1u << d) - 1u)) == 0) {
                    gr_state s;
                    s.v = x;
                    s.x = 0;
                    GR_FOLD_S(s, y, 0);
                    x = s.v;
                }
            }
        }
        if (valid && head) {
            bk_atomic(out + (ulong)key, x);
        }
    }
}
#endif

/* variant: local_hash */
__kernel void gr_bk_hash(__global const GR_K *keys, ulong koff,
                         __global const GR_T *vals, ulong voff, ulong n,
                         ulong items, __global GR_A *out, ulong nk,
                         __global ulong *flag)
{
    __local GR_A bins[GR_BK_H];
    __local ulong lmin[GR_WG];
    const uint lid = get_local_id(0);
    const ulong t0 = (ulong)get_group_id(0) * items * GR_WG;
    ulong kmin = ULONG_MAX;
    for (ulong j = 0; j < items; ++j) {
        const ulong i = t0 + j * GR_WG + lid;
        if (i < n && (!GR_BK_CHECK || BK_U(BK_KEY(i)) < nk)) {
            kmin = min(kmin, (ulong)BK_KEY(i));
        }
    }
    lmin[lid] = kmin;
    for (uint h = lid; h < GR_BK_H; h += GR_WG) {
        bins[h] = GR_IDENT_V;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = GR_WG / 2; off > 0; off >>= 1) {
        if (lid < off) {
            lmin[lid] = min(lmin[lid], lmin[lid + off]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    kmin = lmin[0];
    for (ulong j = 0; j < items; ++j) {
        const ulong i = t0 + j * GR_WG + lid;
        if (i >= n) {
            break;
        }
        const GR_K k = BK_KEY(i);
        if (!BK_OK(k, i)) {
            continue;
        }
        const ulong d = (ulong)k - kmin;
        if (d < GR_BK_H) {
            bk_local_merge(bins + d, BK_VAL(i));
        } else {
            bk_atomic(out + kmin + d, BK_VAL(i));
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = lid; h < GR_BK_H; h += GR_WG) {
        const GR_A v = bins[h];
        if (v != GR_IDENT_V) { /* identity bins change nothing */
            bk_atomic(out + kmin + h, v);
        }
    }
}

#if GR_BK_LW
/* variant: private_bins on GPUs: the bins privatised in local memory,
 * GR_BK_LC copies interleaved (bin k of copy c at k * LC + c: the lanes of
 * a warp fall in distinct banks), work-item l folding into copy l % LC.
 * LC == WG (few keys: 16 bins x 256 copies of 4 bytes take 16 KiB): each
 * work-item owns its copy, plain loads and stores, no atomic at all;
 * fewer copies (up to GR_BK_LW words in all): local atomics (native for
 * integer sums, compare-and-swap otherwise) on a copy shared by WG / LC
 * work-items.  A grid-stride loop over all the elements (few groups, each
 * reads a long stretch coalesced), then the copies folded pairwise (a
 * tree over the copies, every work-item busy) and one global atomic a bin
 * a work-group. */
__kernel void gr_bk_lbins(__global const GR_K *keys, ulong koff,
                          __global const GR_T *vals, ulong voff, ulong n,
                          ulong items, __global GR_A *out, ulong nk,
                          __global ulong *flag)
{
    __local GR_A bins[GR_BK_LW];
    const uint lid = get_local_id(0);
    const uint nb = (uint)nk * GR_BK_LC;
    for (uint h = lid; h < nb; h += GR_WG) {
        bins[h] = GR_IDENT_V;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong stride = (ulong)get_num_groups(0) * GR_WG;
    for (ulong i = get_global_id(0); i < n; i += stride) {
        const GR_K k = BK_KEY(i);
        if (BK_OK(k, i)) {
            __local GR_A *p = bins + (uint)k * GR_BK_LC +
                              (lid & (GR_BK_LC - 1u));
#if GR_BK_LC == GR_WG
            gr_state s;
            s.v = *p;
            s.x = 0;
            GR_FOLD_S(s, BK_VAL(i), 0);
            *p = s.v;
#else
            bk_local_merge(p, BK_VAL(i));
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the copies folded pairwise, every work-item busy: log2(LC) steps */
    for (uint s = GR_BK_LC / 2; s > 0; s >>= 1) {
        for (uint h = lid; h < (uint)nk * s; h += GR_WG) {
            const uint q = (h / s) * GR_BK_LC + h % s;
            gr_state t;
            t.v = bins[q];
            t.x = 0;
            GR_FOLD_S(t, bins[q + s], 0);
            bins[q] = t.v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint h = lid; h < (uint)nk; h += GR_WG) {
        const GR_A v = bins[h * GR_BK_LC];
        if (v != GR_IDENT_V) { /* identity bins change nothing */
            bk_atomic(out + h, v);
        }
    }
}
#endif /* GR_BK_LW */
#endif /* GR_BK_ATOMICS */

/* variant: private_bins */
/* Work-item p owns bins[p * nk .. (p + 1) * nk) and the elements
 * [p * chunk, (p + 1) * chunk): plain loads and stores, no atomics. */
#if GR_BK_SEG == 1 /* the plain program: private bins */
__kernel void gr_bk_priv_fill(__global const GR_K *keys, ulong koff,
                              __global const GR_T *vals, ulong voff, ulong n,
                              ulong chunk, ulong nk, __global GR_A *bins)
{
    const ulong p = get_global_id(0);
    __global GR_A *b = bins + p * nk;
    for (ulong h = 0; h < nk; ++h) {
        b[h] = GR_IDENT_V;
    }
    const ulong a = p * chunk, e = min(n, a + chunk);
    for (ulong i = a; i < e; ++i) {
        gr_state s;
        const ulong k = (ulong)BK_KEY(i);
        s.v = b[k];
        s.x = 0;
        GR_FOLD_S(s, BK_VAL(i), 0);
        b[k] = s.v;
    }
}

/* Work-item q folds bins [q * chunk, (q + 1) * chunk) over the P copies. */
__kernel void gr_bk_priv_merge(__global const GR_A *bins, ulong nk, ulong P,
                               ulong chunk, __global GR_R *out)
{
    const ulong q = get_global_id(0);
    const ulong a = q * chunk, e = min(nk, a + chunk);
    for (ulong h = a; h < e; ++h) {
        gr_state s;
        s.v = bins[h];
        s.x = 0;
        for (ulong p = 1; p < P; ++p) {
            GR_FOLD_S(s, bins[p * nk + h], 0);
        }
        out[h] = gr_finish(s);
    }
}
#endif /* GR_BK_SEG == 1 */

/* ------------------------------------------------ single pass (lookback)
 *
 * reduce_by_key in one pass over keys and values, as CUB's ReduceByKey:
 *
 *   tile t (WG x ITEMS elements, taken in the order tiles start: a ticket
 *   from counter[0]) loads its keys and values coalesced into local memory
 *   (16-byte loads where the tile is full and aligned); work-item l then
 *   owns ITEMS consecutive elements of it:
 *
 *     keys  ..7 | 7 7 8 8 | 8 9 9 9 | 9 9 9 9 | 9 4 4..      (tiles)
 *                 lead    run  tail
 *
 *   1. head flags (k[i] != k[i-1]) as bits of a mask, one more for the
 *      element after the work-item's last; each work-item's (heads,
 *      aggregate of its open run); a segmented exclusive scan over the
 *      work-items.  Keys and values stay in local memory and are read
 *      again in step 3 (40 registers on the H100 instead of 64: more tiles
 *      in flight); full tiles take a copy of steps 1 and 3 without bounds
 *      checks.
 *   2. decoupled look-back over the tiles' head counts only: status[t] is
 *      one 64-bit word, flag << 62 | count (A: heads of tile t, P: heads of
 *      tiles 0..t), so a count is never seen apart from its flag and no
 *      fence orders anything.  Runs before the tile = prefix.
 *   3. every run with its head and its end inside the tile is written to
 *      out[prefix + local index]; the tile keeps (no atomics, no races):
 *        lead[t]  aggregate of the elements before its first head (the
 *                 whole tile if it has none), identity if it starts a run
 *        tail[t]  aggregate of its last run from its head to the tile end
 *        info[2t] = runs through tile t, info[2t + 1] = heads in it.
 *   gr_bk_lb_fix then finishes each tile's last run: tail[t] folded with
 *   lead[t+1], lead[t+2], ... up to the next tile with a head.
 *
 * Values are folded in an order fixed by the tile geometry (atomics carry
 * only tickets and head counts): results are bitwise reproducible.
 * Elements past n read as copies of the last key with the identity, so the
 * array's last run is always a tile's tail.
 */
#if GR_BK_LOOKBACK && !GR_BK_SORT
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#define BK_TILE (GR_WG * GR_BK_ITEMS)
#define BK_PAD(i) ((i) + (i) / 32u) /* no bank conflicts at stride ITEMS */
#define BK_LOCAL (BK_TILE + BK_TILE / 32)
/* status[t] = flag << 62 | count: common.cl's GR_STATUS_A / GR_STATUS_P
 * (X: 0) tag a tile's head count (A) or the heads of tiles 0..t (P). */
#define BK_SA ((ulong)GR_STATUS_A)
#define BK_SP ((ulong)GR_STATUS_P)
#define BK_CNT(w) ((w) & ((1ul << 62) - 1ul))

/* status[0 .. T) and counter[0] to zero before each launch. */
__kernel void gr_bk_lb_init(__global ulong *status, ulong T,
                            __global ulong *counter)
{
    for (ulong i = get_global_id(0); i < T; i += get_global_size(0)) {
        status[i] = 0;
    }
    if (get_global_id(0) == 0) {
        counter[0] = 0;
    }
}

/* Full tiles whose keys and values start 16-byte aligned are staged with
 * 16-byte loads (BK_VLOAD). */
#ifndef BK_VLOAD
#define BK_VLOAD (GR_K_SIZE >= 4 && (GR_BK_COUNT || GR_T_SIZE >= 4) && \
                  GR_BK_ITEMS % 4 == 0)
#endif
/* Work-item l's ITEMS elements start at b = l * ITEMS; where ITEMS divides
 * 32 they share one padding step: element b + j sits at BK_PAD(b) + j. */
#if 32 % GR_BK_ITEMS == 0
#define BK_AT(j) (pb + (j))
#else
#define BK_AT(j) BK_PAD(b + (j))
#endif
/* Head bits of a work-item: ITEMS + 1 (its elements and the next one). */
#if GR_BK_ITEMS >= 32
typedef ulong bk_mask;
#else
typedef uint bk_mask;
#endif

#if GR_BK_PTX && GR_WG >= 32
/* Warp 0 looks back through 32 predecessors at once (lane l polls tile
 * j - l); counts of the lanes before the first X, through the first P. */
#define BK_WARP_LOOKBACK 1

inline ulong bk_lookback(__global ulong *status, ulong t)
{
    const uint lane = get_local_id(0);
    long j = (long)t - 1;
    ulong acc = 0;
    while (j >= 0) {
        ulong w = (ulong)BK_SP << 62; /* past tile 0: P of nothing */
        if ((long)lane <= j) {
            w = GR_READ64(status + (j - (long)lane));
        }
        uint fx, fp;
        gr_window((uint)(w >> 62), &fx, &fp);
        if (fx == 0) {
            GR_BACKOFF(32);
            continue;
        }
        const uint take = fp < fx ? fp + 1 : fx;
        ulong c = lane < take ? BK_CNT(w) : 0;
        for (uint d = 16; d > 0; d >>= 1) {
            c += gr_shfl_down_u64(c, d);
        }
        acc += c; /* lane 0's total is the one used */
        if (fp < fx) {
            break;
        }
        j -= (long)take;
    }
    return acc;
}
#else
inline ulong bk_lookback(__global ulong *status, ulong t)
{
    ulong acc = 0;
    long j = (long)t - 1;
    while (j >= 0) {
        const ulong w = GR_READ64(status + j);
        const ulong f = w >> 62;
        if (f == GR_STATUS_X) {
            GR_BACKOFF(32);
            continue;
        }
        acc += BK_CNT(w);
        if (f == BK_SP) {
            break;
        }
        --j;
    }
    return acc;
}
#endif

#if GR_BK_PTX && GR_WG >= 32
/* bk_wg_scan with warp shuffles: each warp scans its 32 pairs, warp w
 * folds the totals of warps 0 .. w-1 from local memory (one barrier). */
inline void bk_lb_scan(bk_pair p, __local uint *lf, __local ulong *lh,
                       __local GR_A *lv, bk_pair *excl, bk_pair *tot)
{
    const uint lid = get_local_id(0), lane = lid & 31u, w = lid >> 5;
    uint h = (uint)p.h;
    GR_A v = p.s.v;
    for (uint d = 1; d < 32; d <<= 1) {
        const uint hu = gr_shfl_up_u32(h, d);
        const GR_A vu = GR_SHFL_UP(GR_A, GR_A_SIZE, v, d);
        if (lane >= d) {
            if (h == 0) {
                gr_state s;
                s.v = vu;
                s.x = 0;
                GR_FOLD_S(s, v, 0);
                v = s.v;
            }
            h += hu;
        }
    }
    if (lane == 31) {
        lh[w] = h;
        lv[w] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    bk_pair wp = bk_empty(), all;
    for (uint u = 0; u < GR_WG / 32; ++u) {
        bk_pair q = bk_empty();
        q.h = lh[u];
        q.f = q.h != 0;
        q.s.v = lv[u];
        if (u == w) {
            all = wp;
        }
        wp = bk_seg(wp, q);
    }
    *tot = wp;
    bk_pair me = bk_empty(); /* this warp's pairs before the lane */
    const uint he = gr_shfl_up_u32(h, 1);
    const GR_A ve = GR_SHFL_UP(GR_A, GR_A_SIZE, v, 1);
    if (lane > 0) {
        me.h = he;
        me.f = he != 0;
        me.s.v = ve;
    }
    *excl = bk_seg(all, me);
}
#endif

#define BK_CAT_(a, b) a##b
#define BK_CAT(a, b) BK_CAT_(a, b)

/* Keys and values of the tile's first m elements into local memory. */
inline void bk_stage(__global const GR_K *keys, ulong koff,
                     __global const GR_T *vals, ulong voff, ulong t0, uint m,
                     __local GR_K *lk, __local GR_T *lval)
{
    const uint lid = get_local_id(0);
#if BK_VLOAD
    if (m == BK_TILE && (koff & 3) == 0 && (voff & 3) == 0) {
        /* t0 is a multiple of the tile, so of 4: 16-byte aligned */
        __global const BK_CAT(GR_K, 4) *k4 =
            (__global const BK_CAT(GR_K, 4) *)(keys + koff + t0);
#if !GR_BK_COUNT
        __global const BK_CAT(GR_T, 4) *v4 =
            (__global const BK_CAT(GR_T, 4) *)(vals + voff + t0);
#endif
#pragma unroll
        for (uint j = 0; j < GR_BK_ITEMS / 4; ++j) {
            const uint q = j * GR_WG + lid;
            const BK_CAT(GR_K, 4) k = k4[q];
#if !GR_BK_COUNT
            const BK_CAT(GR_T, 4) v = v4[q];
#endif
            lk[BK_PAD(4 * q)] = k.x;
            lk[BK_PAD(4 * q + 1)] = k.y;
            lk[BK_PAD(4 * q + 2)] = k.z;
            lk[BK_PAD(4 * q + 3)] = k.w;
#if !GR_BK_COUNT
            lval[BK_PAD(4 * q)] = v.x;
            lval[BK_PAD(4 * q + 1)] = v.y;
            lval[BK_PAD(4 * q + 2)] = v.z;
            lval[BK_PAD(4 * q + 3)] = v.w;
#endif
        }
        return;
    }
#endif
    for (uint j = 0; j < GR_BK_ITEMS; ++j) {
        const uint q = j * GR_WG + lid;
        if (q < m) {
            lk[BK_PAD(q)] = BK_KEY(t0 + q);
#if !GR_BK_COUNT
            lval[BK_PAD(q)] = vals[voff + t0 + q];
#endif
        }
    }
}

#if GR_BK_COUNT
#define BK_VAL_AT(j) ((GR_A)1)
#else
#define BK_VAL_AT(j) GR_CVT_S(lval[BK_AT(j)])
#endif

/* Step 1 for work-item elements b .. b + ITEMS - 1 of a tile of m (full:
 * m is the whole tile, no element past it): bit j of the result, element
 * b + j starts a run; bit ITEMS, the element after the work-item's last
 * does (within the tile).  *p: its heads and the aggregate of its open
 * run.  Elements past m are copies of the tile's last key (no heads). */
inline bk_mask bk_heads(__local const GR_K *lk, __local const GR_T *lval,
                        uint b, uint m, ulong t0, GR_K prev, GR_K klast,
                        const int full, bk_pair *p)
{
    const uint pb = BK_PAD(b);
    bk_mask hm = 0;
    uint h = 0;
    gr_state s = gr_identity();
#pragma unroll
    for (uint j = 0; j < GR_BK_ITEMS; ++j) {
        const int in = full || b + j < m;
        const GR_K k = in ? lk[BK_AT(j)] : klast;
        const GR_A x = in ? BK_VAL_AT(j) : GR_IDENT_V;
        const uint head = (k != prev || (j == 0 && t0 + b == 0)) ? 1u : 0u;
        hm |= (bk_mask)head << j;
        h += head;
        if (head) {
            s = gr_identity();
        }
        GR_FOLD_S(s, x, 0);
        prev = k;
    }
    const uint qn = b + GR_BK_ITEMS;
    if (qn < (full ? BK_TILE : m) && lk[BK_PAD(qn)] != prev) {
        hm |= (bk_mask)1 << GR_BK_ITEMS;
    }
    p->f = h != 0;
    p->h = h;
    p->s = s;
    return hm;
}

/* Step 3 for the same elements: every run that ends inside the tile is
 * written (out[run - 1]; lead[t] for the run that began before it);
 * run: runs begun before the work-item's first element, s: the aggregate
 * of the open one. */
inline void bk_runs(__local const GR_K *lk, __local const GR_T *lval,
                    uint b, uint m, bk_mask hm, ulong run, gr_state s,
                    ulong prefix, ulong t, const int full,
                    __global GR_K *okeys, __global GR_R *ovals,
                    __global GR_A *lead)
{
    const uint pb = BK_PAD(b);
#pragma unroll
    for (uint j = 0; j < GR_BK_ITEMS; ++j) {
        const GR_A x = full || b + j < m ? BK_VAL_AT(j) : GR_IDENT_V;
        if ((hm >> j) & 1u) { /* never past m */
            run += 1;
            s = gr_identity();
            okeys[run - 1] = lk[BK_AT(j)];
        }
        GR_FOLD_S(s, x, 0);
        if ((hm >> (j + 1)) & 1u) {
            if (run > prefix) {
                ovals[run - 1] = gr_finish(s);
            } else {
                lead[t] = s.v;
            }
        }
    }
}

__kernel void gr_bk_lb_tiles(__global const GR_K *keys, ulong koff,
                             __global const GR_T *vals, ulong voff, ulong n,
                             __global ulong *counter, __global ulong *status,
                             __global GR_K *okeys, __global GR_R *ovals,
                             __global GR_A *lead, __global GR_A *tail,
                             __global ulong *info, __global ulong *count)
{
    __local GR_K lk[BK_LOCAL];
#if !GR_BK_COUNT
    __local GR_T lval[BK_LOCAL];
#else
    __local GR_T *lval = 0;
#endif
    __local uint lf[GR_WG];
    __local ulong lh[GR_WG];
    __local GR_A lv[GR_WG];
    __local ulong sh[2];
    const uint lid = get_local_id(0);
    if (lid == 0) {
        /* 64-bit: Oclgrind 21.10 marks what a 32-bit global atomic
         * touched as uninitialised, even in later buffers */
        sh[0] = atom_inc((volatile __global ulong *)counter);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong t = sh[0];
    const ulong t0 = t * BK_TILE;
    const uint m = (uint)min((ulong)BK_TILE, n - t0);
    const uint b = lid * GR_BK_ITEMS;
    bk_stage(keys, koff, vals, voff, t0, m, lk, lval);
    barrier(CLK_LOCAL_MEM_FENCE);
    const GR_K klast = lk[BK_PAD(m - 1)];
    /* 1. heads and the work-item's summary */
    const GR_K prev = b == 0 ? (t0 > 0 ? BK_KEY(t0 - 1) : (GR_K)0)
                             : (b - 1 < m ? lk[BK_PAD(b - 1)] : klast);
    bk_pair p;
    const bk_mask hm = m == BK_TILE
                           ? bk_heads(lk, lval, b, m, t0, prev, klast, 1, &p)
                           : bk_heads(lk, lval, b, m, t0, prev, klast, 0, &p);
    bk_pair ex, tot;
#if GR_BK_PTX && GR_WG >= 32
    bk_lb_scan(p, lf, lh, lv, &ex, &tot);
#else
    tot = bk_wg_scan(p, lf, lh, lv, &ex);
    tot.h = lh[GR_WG - 1];
    tot.s.v = lv[GR_WG - 1];
#endif
    const ulong H = tot.h; /* heads in the tile */
    /* 2. runs before the tile */
    if (lid == 0 && t == 0) {
        GR_WRITE64(status, (BK_SP << 62) | H);
        sh[1] = 0;
    }
#ifdef BK_WARP_LOOKBACK
    if (lid < 32 && t > 0) {
        if (lid == 0) {
            GR_WRITE64(status + t, (BK_SA << 62) | H);
        }
        const ulong pre = bk_lookback(status, t);
        if (lid == 0) {
            GR_WRITE64(status + t, (BK_SP << 62) | (pre + H));
            sh[1] = pre;
        }
    }
#else
    if (lid == 0 && t > 0) {
        GR_WRITE64(status + t, (BK_SA << 62) | H);
        const ulong pre = bk_lookback(status, t);
        GR_WRITE64(status + t, (BK_SP << 62) | (pre + H));
        sh[1] = pre;
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong prefix = sh[1];
    if (lid == 0) {
        info[2 * t] = prefix + H;
        info[2 * t + 1] = H;
        if (H > 0) {
            tail[t] = tot.s.v;
        }
        if (H == 0) {
            lead[t] = tot.s.v;
        } else if (hm & 1u) {
            lead[t] = GR_IDENT_V;
        }
        if (t0 + m == n) {
            count[0] = prefix + H;
        }
    }
    /* 3. the runs that end inside the tile */
    if (m == BK_TILE) {
        bk_runs(lk, lval, b, m, hm, prefix + ex.h, ex.s, prefix, t, 1,
                okeys, ovals, lead);
    } else {
        bk_runs(lk, lval, b, m, hm, prefix + ex.h, ex.s, prefix, t, 0,
                okeys, ovals, lead);
    }
}

/* Tile t's last run: tail[t], then the leads of the tiles after it up to
 * the first one with a head. */
__kernel void gr_bk_lb_fix(__global const GR_A *lead,
                           __global const GR_A *tail,
                           __global const ulong *info, ulong T,
                           __global GR_R *ovals)
{
    const ulong t = get_global_id(0);
    if (t >= T || info[2 * t + 1] == 0) {
        return;
    }
    gr_state s;
    s.v = tail[t];
    s.x = 0;
    for (ulong u = t + 1; u < T; ++u) {
        GR_FOLD_S(s, lead[u], 0);
        if (info[2 * u + 1] != 0) {
            break;
        }
    }
    ovals[info[2 * t] - 1] = gr_finish(s);
}

/* Dense bins from the runs (deterministic sum_by_key on sorted keys):
 * out[okeys[i]] = ovals[i] for the count[0] runs. */
__kernel void gr_bk_lb_bins(__global const GR_K *okeys,
                            __global const GR_R *ovals,
                            __global const ulong *count, __global GR_R *out)
{
    const ulong c = count[0];
    for (ulong i = get_global_id(0); i < c; i += get_global_size(0)) {
        out[(ulong)okeys[i]] = ovals[i];
    }
}
#endif /* GR_BK_LOOKBACK */

/* ------------------------------------------------------ radix sort
 *
 * A stable LSD radix sort of (key, value) pairs on the device, 8 bits of
 * the key per pass, for deterministic sum_by_key on unsorted keys (the
 * sorted pairs then go through the sorted-segments kernels).  Keys were
 * validated (0 <= key < num_keys <= 2^32): they travel as uint (the first
 * pass reads GR_K).  Values move as GR_T bit patterns (none for counts).
 *
 * GPUs (GR_BK_SORT 2), one sweep per pass as CUB's Onesweep:
 *   gr_sr_init     zero the status words, histograms and tile counters
 *   gr_sr_ghist    one read of the keys: each pass's global digit counts
 *                  (permutations do not change them)
 *   gr_sr_sweep    per tile of WG x ITEMS elements (index from a ticket):
 *                  its digit counts in local memory, published at once
 *                  (status[t * 256 + d] = A | count); the tile sorted by
 *                  the digit in local memory (two stable 4-bit splits:
 *                  per work-item counts packed in registers, one scan of
 *                  them over the work-group); the digit-d elements of
 *                  earlier tiles by decoupled look-back (work-item d walks
 *                  back to a P), published as P; then written out in tile
 *                  order: the element at sorted position p of digit d
 *                  lands at G[d] + before[d] + (p - L[d]), G and L the
 *                  exclusive scans of the global and the tile's counts.
 * Work-item l owns the ITEMS consecutive elements l * ITEMS .. of its
 * tile; ranks among equal digits follow (work-item, item) order and tiles
 * keep their order, so every pass is stable.  The last tile's missing
 * elements take digit 255 and, being last, stay last: only positions
 * below the tile's length are written.  Forward progress as for the
 * look-back scans (common.cl): a tile waits only for tiles with earlier
 * tickets, which have started.  (The sweep's program is built with
 * GR_BK_LOOKBACK too, for common.cl's status macros.)
 */
#if GR_BK_SORT

#define SR_R 256u
#define SR_DIGIT(k, shift) (((uint)(k) >> (shift)) & (SR_R - 1u))

#if GR_BK_COUNT
#define SR_VARGS
#define SR_VMOVE(g, src)
#else
#define SR_VARGS , __global const GR_T *vals, ulong voff, __global GR_T *ovals
#define SR_VMOVE(g, src) ovals[g] = vals[voff + (src)]
#endif
#endif /* GR_BK_SORT */

#if GR_BK_SORT == 2
#define SR_IT GR_BK_ITEMS
#define SR_T (GR_WG * SR_IT)
#define SR_CH ((SR_R + GR_WG - 1) / GR_WG) /* digits per work-item */
#define SR_SA ((ulong)GR_STATUS_A << 62)
#define SR_SP ((ulong)GR_STATUS_P << 62)
#define SR_CNT(w) ((w) & ((1ul << 62) - 1ul))

/* Exclusive scan of x over the work-group (no field of a component may
 * overflow: the callers pack 16-bit counts); *total, the sum of all.
 * Every work-item calls it; s holds GR_WG entries. */
#if GR_PTX && GR_WG % 32 == 0
#define SR_SN (GR_WG / 32) /* entries of s: one per warp */
inline ulong4 sr_scan4(ulong4 x, __local ulong4 *s, ulong4 *total)
{
    const uint lid = get_local_id(0), lane = lid & 31u, w = lid >> 5;
    ulong4 inc = x;
    for (uint d = 1; d < 32u; d <<= 1) {
        ulong4 y;
        y.s0 = gr_shfl_up_u64(inc.s0, d);
        y.s1 = gr_shfl_up_u64(inc.s1, d);
        y.s2 = gr_shfl_up_u64(inc.s2, d);
        y.s3 = gr_shfl_up_u64(inc.s3, d);
        if (lane >= d) {
            inc += y;
        }
    }
    if (lane == 31u) {
        s[w] = inc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong4 pre = (ulong4)(0), all = (ulong4)(0);
    for (uint u = 0; u < GR_WG / 32u; ++u) {
        const ulong4 v = s[u];
        pre += u < w ? v : (ulong4)(0);
        all += v;
    }
    *total = all;
    barrier(CLK_LOCAL_MEM_FENCE);
    return pre + inc - x;
}
#else
#define SR_SN GR_WG
inline ulong4 sr_scan4(ulong4 x, __local ulong4 *s, ulong4 *total)
{
    const uint lid = get_local_id(0);
    s[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < GR_WG; off <<= 1) {
        const ulong4 y = lid >= off ? s[lid - off] : (ulong4)(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        s[lid] += y;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const ulong4 r = s[lid] - x;
    *total = s[GR_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
#endif

/* Four 4-bit counts (16 bits of a packed word) in four 16-bit fields. */
inline ulong sr_spread(ulong x)
{
    return (x & 15ul) | ((x >> 4) & 15ul) << 16 | ((x >> 8) & 15ul) << 32 |
           ((x >> 12) & 15ul) << 48;
}

/* Field b (0..15) of four words of 16-bit fields. */
inline uint sr_field(ulong4 v, uint b)
{
    const uint c = b >> 2;
    const ulong w = c == 0u ? v.s0 : c == 1u ? v.s1 : c == 2u ? v.s2 : v.s3;
    return (uint)(w >> (16u * (b & 3u))) & 0xffffu;
}

/* One stable split of the work-item's items by 4 bits of their digit
 * (nibble q): their positions in the tile into pos[]. */
inline void sr_split(const uint *k, uint shift, uint q, uint *pos,
                     __local ulong4 *s)
{
    ulong packed = 0;
    for (uint j = 0; j < SR_IT; ++j) {
        const uint b = (SR_DIGIT(k[j], shift) >> (4u * q)) & 15u;
        pos[j] = (uint)(packed >> (4u * b)) & 15u;
        packed += 1ul << (4u * b);
    }
    const ulong4 c = (ulong4)(sr_spread(packed), sr_spread(packed >> 16),
                              sr_spread(packed >> 32), sr_spread(packed >> 48));
    ulong4 tot;
    ulong4 e = sr_scan4(c, s, &tot);
    /* + the start of each nibble in the tile: the scan of tot's fields */
    uint run = 0;
    for (uint b = 0; b < 16u; ++b) {
        const uint f = sr_field(tot, b);
        const ulong add = (ulong)run << (16u * (b & 3u));
        e.s0 += (b >> 2) == 0u ? add : 0ul;
        e.s1 += (b >> 2) == 1u ? add : 0ul;
        e.s2 += (b >> 2) == 2u ? add : 0ul;
        e.s3 += (b >> 2) == 3u ? add : 0ul;
        run += f;
    }
    for (uint j = 0; j < SR_IT; ++j) {
        const uint b = (SR_DIGIT(k[j], shift) >> (4u * q)) & 15u;
        pos[j] += sr_field(e, b);
    }
}

/* status[0 .. ns), hist[0 .. nh), counter[0 .. nc) to zero. */
__kernel void gr_sr_init(__global ulong *status, ulong ns,
                         __global uint *hist, uint nh,
                         __global ulong *counter, uint nc)
{
    for (ulong i = get_global_id(0); i < ns; i += get_global_size(0)) {
        status[i] = 0;
    }
    for (ulong i = get_global_id(0); i < nh; i += get_global_size(0)) {
        hist[i] = 0;
    }
    for (ulong i = get_global_id(0); i < nc; i += get_global_size(0)) {
        counter[i] = 0;
    }
}

/* hist[p * 256 + d]: the elements whose pass-p digit is d, p < passes. */
__kernel void gr_sr_ghist(__global const GR_K *keys, ulong koff, ulong n,
                          uint passes, __global uint *hist)
{
    __local uint h[4 * SR_R];
    const uint lid = get_local_id(0);
    for (uint d = lid; d < 4u * SR_R; d += GR_WG) {
        h[d] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        const uint k = (uint)keys[koff + i];
        for (uint p = 0; p < passes; ++p) {
            atomic_inc(&h[p * SR_R + SR_DIGIT(k, 8u * p)]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = lid; d < passes * SR_R; d += GR_WG) {
        if (h[d] != 0u) {
            atomic_add(&hist[d], h[d]);
        }
    }
}

/* SR_TILE(KT): the tile's keys read, its digit counts into lc[] (valid
 * elements only) and published (A, or P for tile 0), and the tile sorted
 * by the digit into sk[] (keys) and si[] (their places in the tile).
 *
 * NVIDIA sm_70+ (GR_BK_MATCH): warp w owns the tile's 32 x ITEMS elements
 * from w * 32 * ITEMS, read 32 at a time (coalesced); in each round the
 * lanes of equal digits find each other with match.any.sync, the lowest
 * of them adds their number to the warp's counter of that digit, and each
 * lane's rank is the counter before plus its peers in lower lanes.  One
 * scan of the counters, digit-major over the warps, gives every (warp,
 * digit) its place: one ranking of 8 bits, no splits.
 * Elsewhere: work-item l owns ITEMS consecutive elements, and two stable
 * 4-bit splits (sr_split) sort the tile. */
#if GR_BK_MATCH && GR_PTX && GR_WG % 32 == 0
#define SR_NW (GR_WG / 32)
/* Values staged in local memory at their sorted places, read from global
 * memory in tile order (coalesced); elsewhere si[] keeps each sorted
 * element's place in the tile and the value is gathered from there. */
#if GR_BK_COUNT
#define SR_VLOCAL
#define SR_PLACE(at, q)
#define SR_VOUT(g, p)
#else
#define SR_VLOCAL __local GR_T sv[SR_T];
#define SR_PLACE(at, q)                                                      \
    if ((q) < tn) {                                                          \
        sv[at] = vals[voff + t0 + (q)];                                      \
    }
#define SR_VOUT(g, p) ovals[g] = sv[p]
#endif
inline uint sr_match(uint v)
{
    uint r;
    __asm__ volatile("match.any.sync.b32 %0, %1, 0xffffffff;"
                     : "=r"(r) : "r"(v));
    return r;
}
inline uint sr_shfl_idx(uint v, uint src)
{
    uint r;
    __asm__ volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                     : "=r"(r) : "r"(v), "r"(src));
    return r;
}
#define SR_TILE(KT)                                                          \
    __local uint wc[SR_NW * SR_R];                                           \
    const uint lane = lid & 31u, w = lid >> 5;                               \
    for (uint i = lid; i < SR_NW * SR_R; i += GR_WG) {                       \
        wc[i] = 0;                                                           \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    uint k[SR_IT], r[SR_IT];                                                 \
    for (uint j = 0; j < SR_IT; ++j) {                                       \
        const uint q = (w * SR_IT + j) * 32u + lane;                         \
        k[j] = q < tn ? (uint)keys[koff + t0 + q] : 0xffffffffu;             \
        const uint d = SR_DIGIT(k[j], shift);                                \
        const uint peers = sr_match(d);                                      \
        const uint lead = 31u - clz(peers & (0u - peers));                   \
        uint old = 0;                                                        \
        if (lane == lead) {                                                  \
            old = wc[w * SR_R + d];                                          \
            wc[w * SR_R + d] = old + popcount(peers);                        \
        }                                                                    \
        r[j] = sr_shfl_idx(old, lead) +                                      \
               popcount(peers & ((1u << lane) - 1u));                        \
        gr_warp_sync();                                                      \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    {                                                                        \
        uint tc[SR_CH], run = 0;                                             \
        for (uint c = 0; c < SR_CH; ++c) {                                   \
            const uint d = lid * SR_CH + c;                                  \
            uint acc = 0;                                                    \
            for (uint u = 0; d < SR_R && u < SR_NW; ++u) {                   \
                const uint x = wc[u * SR_R + d];                             \
                wc[u * SR_R + d] = acc;                                      \
                acc += x;                                                    \
            }                                                                \
            tc[c] = acc;                                                     \
            run += acc;                                                      \
        }                                                                    \
        ulong4 tot;                                                          \
        uint e = (uint)sr_scan4((ulong4)(run, 0, 0, 0), s, &tot).s0;         \
        for (uint c = 0; c < SR_CH; ++c) {                                   \
            const uint d = lid * SR_CH + c;                                  \
            if (d < SR_R) {                                                  \
                for (uint u = 0; u < SR_NW; ++u) {                           \
                    wc[u * SR_R + d] += e;                                   \
                }                                                            \
                /* the missing elements of a last tile: digit 255 */        \
                lc[d] = tc[c] - (d == SR_R - 1u ? SR_T - tn : 0u);           \
                GR_WRITE64(status + t * SR_R + d,                            \
                           (t == 0 ? SR_SP : SR_SA) | lc[d]);                \
            }                                                                \
            e += tc[c];                                                      \
        }                                                                    \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    for (uint j = 0; j < SR_IT; ++j) {                                       \
        const uint at = wc[w * SR_R + SR_DIGIT(k[j], shift)] + r[j];         \
        sk[at] = k[j];                                                       \
        SR_PLACE(at, (w * SR_IT + j) * 32u + lane);                          \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);
#else
#define SR_VLOCAL __local ushort si[SR_T];
#define SR_VOUT(g, p) SR_VMOVE(g, t0 + si[p])
#define SR_TILE(KT)                                                          \
    uint k[SR_IT], pos[SR_IT];                                               \
    ushort src[SR_IT];                                                       \
    for (uint j = 0; j < SR_IT; ++j) {                                       \
        const uint q = lid * SR_IT + j;                                      \
        k[j] = q < tn ? (uint)keys[koff + t0 + q] : 0xffffffffu;             \
        src[j] = (ushort)q;                                                  \
        if (q < tn) {                                                        \
            atomic_inc(&lc[SR_DIGIT(k[j], shift)]);                          \
        }                                                                    \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    for (uint d = lid; d < SR_R; d += GR_WG) {                               \
        GR_WRITE64(status + t * SR_R + d, (t == 0 ? SR_SP : SR_SA) | lc[d]); \
    }                                                                        \
    for (uint q = 0; q < 2u; ++q) {                                          \
        sr_split(k, shift, q, pos, s);                                       \
        for (uint j = 0; j < SR_IT; ++j) {                                   \
            sk[pos[j]] = k[j];                                               \
            si[pos[j]] = src[j];                                             \
        }                                                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                        \
        if (q == 0u) {                                                       \
            for (uint j = 0; j < SR_IT; ++j) {                               \
                k[j] = sk[lid * SR_IT + j];                                  \
                src[j] = si[lid * SR_IT + j];                                \
            }                                                                \
            barrier(CLK_LOCAL_MEM_FENCE);                                    \
        }                                                                    \
    }
#endif

#define SR_SWEEP(NAME, KT)                                                   \
__kernel void NAME(__global const KT *keys, ulong koff SR_VARGS, ulong n,    \
                   uint pass, __global const uint *ghist,                    \
                   __global ulong *status, __global ulong *counter,          \
                   __global uint *okeys)                                     \
{                                                                            \
    /* this pass's counts, status words and ticket counter */                \
    const uint shift = 8u * pass;                                            \
    ghist += pass * SR_R;                                                    \
    status += (ulong)pass * ((n + SR_T - 1) / SR_T) * SR_R;                  \
    counter += pass;                                                         \
    __local uint sk[SR_T];                                                   \
    SR_VLOCAL                                                                \
    __local uint lc[SR_R];                                                   \
    __local uint base[SR_R];                                                 \
    __local ulong4 s[SR_SN];                                                 \
    __local ulong tk;                                                        \
    const uint lid = get_local_id(0);                                        \
    if (lid == 0) {                                                          \
        tk = atom_inc((volatile __global ulong *)counter);                   \
    }                                                                        \
    for (uint d = lid; d < SR_R; d += GR_WG) {                               \
        lc[d] = 0;                                                           \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    const ulong t = tk;                                                      \
    const ulong t0 = t * SR_T;                                               \
    const uint tn = (uint)min((ulong)SR_T, n - t0);                          \
    SR_TILE(KT)                                                              \
    /* G[d] - L[d]: one scan over the digits of ghist - lc */                \
    uint x[SR_CH], run = 0;                                                  \
    for (uint c = 0; c < SR_CH; ++c) {                                       \
        const uint d = lid * SR_CH + c;                                      \
        x[c] = d < SR_R ? ghist[d] - lc[d] : 0u;                             \
        run += x[c];                                                         \
    }                                                                        \
    ulong4 tot;                                                              \
    uint e = (uint)sr_scan4((ulong4)(run, 0, 0, 0), s, &tot).s0;             \
    for (uint c = 0; c < SR_CH; ++c) {                                       \
        const uint d = lid * SR_CH + c;                                      \
        if (d < SR_R) {                                                      \
            base[d] = e;                                                     \
        }                                                                    \
        e += x[c];                                                           \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    /* + the digit-d elements of the tiles before: look-back */              \
    for (uint d = lid; d < SR_R; d += GR_WG) {                               \
        ulong before = 0;                                                    \
        if (t > 0) {                                                         \
            long j = (long)t - 1;                                            \
            while (j >= 0) {                                                 \
                const ulong w = GR_READ64(status + (ulong)j * SR_R + d);     \
                const ulong f = w >> 62;                                     \
                if (f == GR_STATUS_X) {                                      \
                    GR_BACKOFF(32);                                          \
                    continue;                                                \
                }                                                            \
                before += SR_CNT(w);                                         \
                if (f == GR_STATUS_P) {                                      \
                    break;                                                   \
                }                                                            \
                --j;                                                         \
            }                                                                \
            GR_WRITE64(status + t * SR_R + d, SR_SP | (before + lc[d]));     \
        }                                                                    \
        base[d] += (uint)before;                                             \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    for (uint p = lid; p < tn; p += GR_WG) {                                 \
        const uint key = sk[p];                                              \
        const uint g = base[SR_DIGIT(key, shift)] + p;                       \
        okeys[g] = key;                                                      \
        SR_VOUT(g, p);                                                       \
    }                                                                        \
}
SR_SWEEP(gr_sr_sweep_k, GR_K)
SR_SWEEP(gr_sr_sweep_u, uint)
#endif /* GR_BK_SORT == 2 */

#if GR_BK_SORT == 1
/* CPUs (wg 1): work-item p owns the contiguous chunk [p c, (p + 1) c) and
 * walks it in order: its digit counts (gr_sr_chist: hist[d * P + p]), one
 * work-item's exclusive scan of hist in that order (gr_sr_cscan: digit
 * major, so chunk p's digit-d elements follow those of chunks before it),
 * then each element to its digit's next slot (gr_sr_cscatter): stable. */
#define SR_CHIST(NAME, KT)                                                   \
__kernel void NAME(__global const KT *keys, ulong koff, ulong n, uint shift, \
                   ulong c, uint P, __global uint *hist)                     \
{                                                                            \
    uint h[SR_R];                                                            \
    const uint p = get_global_id(0);                                         \
    for (uint d = 0; d < SR_R; ++d) {                                        \
        h[d] = 0;                                                            \
    }                                                                        \
    const ulong a = (ulong)p * c, b = min(n, a + c);                         \
    for (ulong i = a; i < b; ++i) {                                          \
        h[SR_DIGIT(keys[koff + i], shift)] += 1u;                            \
    }                                                                        \
    for (uint d = 0; d < SR_R; ++d) {                                        \
        hist[(ulong)d * P + p] = h[d];                                       \
    }                                                                        \
}
SR_CHIST(gr_sr_chist_k, GR_K)
SR_CHIST(gr_sr_chist_u, uint)

__kernel void gr_sr_cscan(__global uint *hist, uint P)
{
    uint run = 0;
    for (ulong i = 0; i < (ulong)SR_R * P; ++i) {
        const uint x = hist[i];
        hist[i] = run;
        run += x;
    }
}

#define SR_CSCATTER(NAME, KT)                                                \
__kernel void NAME(__global const KT *keys, ulong koff SR_VARGS, ulong n,    \
                   uint shift, ulong c, uint P, __global const uint *hist,   \
                   __global uint *okeys)                                     \
{                                                                            \
    uint o[SR_R];                                                            \
    const uint p = get_global_id(0);                                         \
    for (uint d = 0; d < SR_R; ++d) {                                        \
        o[d] = hist[(ulong)d * P + p];                                       \
    }                                                                        \
    const ulong a = (ulong)p * c, b = min(n, a + c);                         \
    for (ulong i = a; i < b; ++i) {                                          \
        const uint key = (uint)keys[koff + i];                               \
        const uint g = o[SR_DIGIT(key, shift)]++;                            \
        okeys[g] = key;                                                      \
        SR_VMOVE(g, i);                                                      \
    }                                                                        \
}
SR_CSCATTER(gr_sr_cscatter_k, GR_K)
SR_CSCATTER(gr_sr_cscatter_u, uint)
#endif /* GR_BK_SORT == 1 */

/* ------------------------------------------------- fixed-point sums
 *
 * Variant fixed_point: deterministic sum_by_key of float values by
 * integer atomics, which give the same bits in any order: integer
 * addition is associative, so the sums are exact whatever the order.
 * A value is m 2^(e' - BIAS) (m the mantissa with its hidden bit, e' its
 * exponent field, at least 1); it goes into a 128-bit two's-complement
 * accumulator (two 64-bit words) as m << sh, 0 <= sh <= G (float64 G = 42,
 * float32 71), with 32 bits of room above for 2^31 values: nothing below
 * the accumulator's unit unless said so.
 *
 *   gr_fx_hinit  the header: the values' largest and smallest exponent
 *   gr_fx_range  one read of the values: both, by atomic_max / atomic_min
 *   gr_fx_zero   the words the path below needs
 * Then, decided on the device from the header (no read by the host):
 * windows, where the exponents span at most FX_WMAX windows of G + 1
 * (float32: its whole range always does): window w of key k holds the
 * values with E - (w + 1)(G + 1) < e' <= E - w(G + 1), E the largest, in
 * units of 2^(E - w(G + 1) - BIAS - G).  One pass, nothing dropped: the
 * sums are exact.
 *   gr_fx_add    each value into its window: the low word by atom_add,
 *                whose old value tells the carry; the high word plus the
 *                carry by a second atom_add (values within 2^(G - 11) of
 *                E touch the high word only); NaN / +inf / -inf set flag
 *                bits (atomic_or)
 *   gr_fx_final  each key's windows added into 32-bit limbs at their bit
 *                offsets (one window: its own two words); the sign and
 *                64 leading bits with a sticky bit rounded once, to
 *                nearest even by hand (fx_round), ldexp
 * sum_by_key(exact=True) on float64 builds with FX_WMAX 48 (bykey.c,
 * GR_BK_FXW): every span of finite exponents has its windows, so the
 * per-key path below never runs and the sums are exact.
 * Else (float64 data spanning more): each key's largest exponent E_k
 * first, one accumulator a key in units of 2^(E_k - BIAS - G), so bits of
 * values below 2^-G of E_k's ulp are dropped (a float sum rounds by half
 * an ulp of its running total).
 *   gr_fx_exp    per key: E_k (atomic_max) and the flags (atomic_or)
 *   gr_fx_add, gr_fx_final as above, with one window per key at E_k
 * Results are reproducible run to run and independent of the input's
 * order.  Needs 64-bit atomics (and fp64 for float64 values).
 * Words: [0, 2 FX_WMAX nk) the accumulators (window w of key k at
 * 2 (w nk + k); the per-key path: 2k, then E_k and its flags as uints
 * from word 2 nk), then as uints the header (largest, smallest exponent)
 * and the windows' flags (one a key).
 * (Tried: float32 in nine 32-bit chunk words a key, no exponent pass:
 * 72 bytes a key left the L2 at 2^20 keys; BENCHMARKS.md.)
 */
#if GR_BK_SEG == 5
#if GR_T_SIZE == 8
#define FX_MBITS 52
#define FX_EMAX 2047u
#define FX_BIAS 1075
#define FX_G 42 /* 128 = 1 sign + 32 headroom + 53 mantissa + 42 */
#define FX_BITS(x) as_ulong(x)
#else
#define FX_MBITS 23
#define FX_EMAX 255u
#define FX_BIAS 150
#define FX_G 71 /* 128 = 1 sign + 32 headroom + 24 mantissa + 71 */
#define FX_BITS(x) ((ulong)as_uint(x))
#endif
#define FX_SIGN(b) (((b) >> (GR_T_SIZE * 8 - 1)) & 1ul)
#define FX_EXP(b) ((uint)((b) >> FX_MBITS) & FX_EMAX)
#define FX_MANT(b) ((b) & ((1ul << FX_MBITS) - 1ul))
#define FX_U 4      /* elements a work-item takes a step, loads together */
#define FX_S (FX_G + 1) /* exponents a window spans */
/* windows a key: GR_FX_WMAX (4), or exact=True's GR_FX_WMAX_EXACT for
 * float64 (48: every finite exponent); bykey.c allocates for it */
#define FX_WMAX GR_BK_FXW
/* limbs of the windows' sum: 128 bits, the last window's offset, 6 bits
 * of carries from up to 48 windows, the sign */
#define FX_L ((128 + (FX_WMAX - 1) * FX_S + 32) / 32 + 1)
#define FX_HDR(w, nk) ((__global uint *)((w) + 2 * FX_WMAX * (nk)))
#define FX_FLAG(b) (FX_MANT(b) ? 1u : FX_SIGN(b) ? 4u : 2u)

/* (hi, lo) <- -(hi, lo), 128-bit two's complement. */
inline void fx_neg(ulong *hi, ulong *lo)
{
    *lo = ~*lo + 1ul;
    *hi = ~*hi + (*lo == 0 ? 1ul : 0ul);
}

/* Windows the header asks for: 0 for the per-key path. */
inline uint fx_windows(__global const uint *hdr)
{
    const uint emax = hdr[0], emin = hdr[1];
    const uint W = emax >= emin ? (emax - emin) / FX_S + 1 : 1;
    return W <= FX_WMAX ? W : 0;
}

__kernel void gr_fx_hinit(__global ulong *w, ulong nk)
{
    __global uint *hdr = FX_HDR(w, nk);
    hdr[0] = 0;
    hdr[1] = 0xffffffffu;
}

__kernel void gr_fx_range(__global const GR_T *vals, ulong voff, ulong n,
                          __global ulong *w, ulong nk)
{
    __local uint lmax[GR_WG], lmin[GR_WG];
    const uint lid = get_local_id(0);
    uint emax = 0, emin = 0xffffffffu;
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        const ulong b = FX_BITS(vals[voff + i]);
        const uint e = FX_EXP(b);
        if (e != FX_EMAX && (e | FX_MANT(b)) != 0) {
            emax = max(emax, max(e, 1u));
            emin = min(emin, max(e, 1u));
        }
    }
    lmax[lid] = emax;
    lmin[lid] = emin;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = GR_WG / 2; off > 0; off >>= 1) {
        if (lid < off) {
            lmax[lid] = max(lmax[lid], lmax[lid + off]);
            lmin[lid] = min(lmin[lid], lmin[lid + off]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        __global uint *hdr = FX_HDR(w, nk);
        atomic_max(&hdr[0], lmax[0]);
        atomic_min(&hdr[1], lmin[0]);
    }
}

__kernel void gr_fx_zero(__global ulong *w, ulong nk)
{
    __global uint *hdr = FX_HDR(w, nk), *fl = hdr + 2;
    const uint W = fx_windows(hdr);
    const ulong nw = W ? 2 * W * nk : 3 * nk;
    for (ulong i = get_global_id(0); i < nw; i += get_global_size(0)) {
        w[i] = 0;
    }
    for (ulong i = get_global_id(0); W && i < nk; i += get_global_size(0)) {
        fl[i] = 0;
    }
}

/* The per-key path's exponents: ef[2k] the largest exponent of key k's
 * finite nonzero values, ef[2k + 1] the flags (1 NaN, 2 +inf, 4 -inf). */
__kernel void gr_fx_exp(__global const GR_K *keys, ulong koff,
                        __global const GR_T *vals, ulong voff, ulong n,
                        __global ulong *w, ulong nk)
{
    __global uint *ef = (__global uint *)(w + 2 * nk);
    if (fx_windows(FX_HDR(w, nk))) {
        return;
    }
    const ulong G = get_global_size(0);
    for (ulong i0 = get_global_id(0); i0 < n; i0 += FX_U * G) {
        ulong b[FX_U];
        uint k[FX_U];
        for (uint u = 0; u < FX_U; ++u) {
            const ulong i = i0 + u * G;
            b[u] = i < n ? FX_BITS(vals[voff + i]) : 0ul;
            k[u] = i < n ? (uint)BK_KEY(i) : 0u;
        }
        for (uint u = 0; u < FX_U; ++u) {
            const uint e = FX_EXP(b[u]);
            if (e == FX_EMAX) {
                atomic_or(&ef[2 * k[u] + 1], FX_FLAG(b[u]));
            } else if ((e | FX_MANT(b[u])) != 0) {
                atomic_max(&ef[2 * k[u]], max(e, 1u));
            }
        }
    }
}

__kernel void gr_fx_add(__global const GR_K *keys, ulong koff,
                        __global const GR_T *vals, ulong voff, ulong n,
                        __global ulong *acc, ulong nk)
{
    __global uint *hdr = FX_HDR(acc, nk), *fl = hdr + 2;
    __global const uint *ef = (__global const uint *)(acc + 2 * nk);
    const uint W = fx_windows(hdr), emax = hdr[0];
    const ulong G = get_global_size(0);
    for (ulong i0 = get_global_id(0); i0 < n; i0 += FX_U * G) {
        ulong b[FX_U], lo[FX_U], hi[FX_U], old[FX_U], at[FX_U];
        uint k[FX_U], ek[FX_U];
        for (uint u = 0; u < FX_U; ++u) {
            const ulong i = i0 + u * G;
            b[u] = i < n ? FX_BITS(vals[voff + i]) : 0ul;
            k[u] = i < n ? (uint)BK_KEY(i) : 0u;
        }
        for (uint u = 0; u < FX_U; ++u) {
            ek[u] = W ? emax : ef[2 * k[u]];
        }
        for (uint u = 0; u < FX_U; ++u) {
            const uint e = FX_EXP(b[u]);
            const ulong m = FX_MANT(b[u]) | (e ? 1ul << FX_MBITS : 0ul);
            lo[u] = hi[u] = 0;
            at[u] = 2 * (ulong)k[u];
            if (e == FX_EMAX) {
                if (W) {
                    atomic_or(&fl[k[u]], FX_FLAG(b[u]));
                }
                continue;
            }
            if (m == 0) {
                continue;
            }
            /* d >= 0: ek is at least every exponent it covers */
            const uint d = ek[u] - max(e, 1u), win = W ? d / FX_S : 0u;
            const int sh = FX_G - (int)(d - win * FX_S);
            at[u] = 2 * ((ulong)win * nk + k[u]);
            if (sh >= 64) {
                hi[u] = m << (sh - 64);
            } else if (sh >= 0) {
                lo[u] = m << sh;
                hi[u] = sh > 0 ? m >> (64 - sh) : 0ul;
            } else if (sh > -64) {
                lo[u] = m >> (-sh); /* per key: bits below the unit dropped */
            }
            if (FX_SIGN(b[u]) && (lo[u] | hi[u]) != 0) {
                fx_neg(&hi[u], &lo[u]);
            }
        }
        for (uint u = 0; u < FX_U; ++u) {
            old[u] = lo[u] != 0 ? atom_add(&acc[at[u]], lo[u]) : 0ul;
        }
        for (uint u = 0; u < FX_U; ++u) {
            const ulong h = hi[u] + (old[u] + lo[u] < old[u] ? 1ul : 0ul);
            if (h != 0) {
                atom_add(&acc[at[u] + 1], h);
            }
        }
    }
}

/* Bits [pos, pos + 32) of the signed 128-bit (hi, lo): zeros below bit 0,
 * the sign above bit 127. */
inline uint fx_bits32(ulong hi, ulong lo, int pos)
{
    if (pos <= -32) {
        return 0u;
    }
    if (pos < 0) {
        return (uint)(lo << (-pos));
    }
    if (pos >= 128) {
        return (long)hi < 0 ? 0xffffffffu : 0u;
    }
    const ulong w0 = pos < 64 ? lo : hi;
    const ulong w1 = pos < 64 ? hi : ((long)hi < 0 ? ~0ul : 0ul);
    const uint o = (uint)pos & 63u;
    return (uint)(o ? (w0 >> o) | (w1 << (64 - o)) : w0);
}

/* Key k's nwin windows summed exactly (each window's magnitude, under
 * 2^126, added at its bit offset into signed 64-bit limbs of 32 bits,
 * then the carries moved up): returns the sign; *m the magnitude's 64
 * leading bits (the last weighing 2^*up units of the last window),
 * *sticky whether any bit below them is set. */
inline int fx_windows_sum(__global const ulong *acc, ulong nk, ulong k,
                          uint nwin, ulong *m, ulong *sticky, int *up)
{
    long lb[FX_L];
    uint limb[FX_L];
    for (uint j = 0; j < FX_L; ++j) {
        lb[j] = 0;
    }
    for (uint w = 0; w < nwin; ++w) {
        ulong lo = acc[2 * (w * nk + k)], hi = acc[2 * (w * nk + k) + 1];
        const int wneg = (long)hi < 0;
        const uint off = (nwin - 1 - w) * FX_S, j0 = off >> 5;
        if (wneg) {
            fx_neg(&hi, &lo);
        }
        for (uint t = 0; t < 5; ++t) {
            const long piece = (long)fx_bits32(hi, lo, 32 * (int)t -
                                                           (int)(off & 31u));
            lb[j0 + t] += wneg ? -piece : piece;
        }
    }
    for (uint j = 0; j + 1 < FX_L; ++j) { /* floor: arithmetic shift */
        const long c = lb[j] >> 32;
        lb[j] -= c * (1L << 32);
        lb[j + 1] += c;
    }
    const int neg = lb[FX_L - 1] < 0;
    long c = 0;
    for (uint j = 0; j < FX_L; ++j) { /* the magnitude */
        const long v = neg ? -lb[j] + c : lb[j];
        c = v >> 32;
        limb[j] = (uint)v;
    }
    int h = FX_L - 1;
    while (h >= 0 && limb[h] == 0) {
        --h;
    }
    *m = 0;
    *sticky = 0;
    *up = 0;
    if (h >= 0) {
        const uint nxt = h >= 2 ? limb[h - 2] : 0u;
        uint rest = 0;
        for (int j = 0; j < h - 2; ++j) {
            rest |= limb[j];
        }
        ulong mm = (ulong)limb[h] << 32 | (h >= 1 ? limb[h - 1] : 0u);
        const uint lz = clz(mm);
        if (lz) {
            mm = (mm << lz) | (ulong)(nxt >> (32 - lz));
        }
        *m = mm;
        *sticky = (rest | (lz ? nxt << lz : nxt)) != 0 ? 1ul : 0ul;
        *up = 32 * (h - 1) - (int)lz;
    }
    return neg;
}

/* m 2^e (m: 64 bits; sticky: nonzero bits below them) rounded once to
 * GR_T: to nearest, ties to even, by hand rather than convert_<type>_rte,
 * which may go through double (two roundings) for float.  The ldexp is
 * exact below the normal range: a sum of GR_T values is a multiple of
 * the smallest subnormal, so there it has fewer bits than the precision;
 * past the largest finite value it gives inf, as IEEE rounding does. */
inline GR_T fx_round(ulong m, ulong sticky, int e)
{
    if (m == 0) {
        return (GR_T)0;
    }
    const uint lz = clz(m);
    m <<= lz;
    e -= (int)lz;
    const uint drop = 64 - (FX_MBITS + 1);
    ulong keep = m >> drop;
    const ulong rest = m & ((1ul << drop) - 1ul), hlf = 1ul << (drop - 1);
    if (rest > hlf || (rest == hlf && (sticky || (keep & 1ul)))) {
        ++keep; /* 2^(FX_MBITS + 1) at most: exact in GR_T */
    }
    return ldexp((GR_T)keep, e + (int)drop);
}

__kernel void gr_fx_final(__global const ulong *acc, ulong nk,
                          __global GR_T *out)
{
    __global const uint *hdr = FX_HDR(acc, nk), *fl = hdr + 2;
    __global const uint *ef = (__global const uint *)(acc + 2 * nk);
    const uint W = fx_windows(hdr), nwin = W ? W : 1u;
    for (ulong k = get_global_id(0); k < nk; k += get_global_size(0)) {
        const uint f = W ? fl[k] : ef[2 * k + 1];
        const uint ek = W ? hdr[0] : ef[2 * k];
        GR_T r;
        if ((f & 1u) || (f & 6u) == 6u) {
            r = (GR_T)NAN;
        } else if (f & 2u) {
            r = (GR_T)INFINITY;
        } else if (f & 4u) {
            r = -(GR_T)INFINITY;
        } else {
            /* the sum's sign, its 64 leading bits m (the last weighing
             * 2^up units of the last window) and a sticky bit for the rest */
            int neg, up = 0;
            ulong m = 0, sticky = 0;
            if (nwin == 1) {
                ulong lo = acc[2 * k], hi = acc[2 * k + 1];
                neg = (long)hi < 0;
                if (neg) {
                    fx_neg(&hi, &lo);
                }
                m = lo;
                if (hi != 0) {
                    const uint lz = clz(hi);
                    m = lz ? (hi << lz) | (lo >> (64 - lz)) : hi;
                    sticky = (lz ? lo << lz : lo) != 0 ? 1ul : 0ul;
                    up = 64 - (int)lz;
                }
            } else {
                neg = fx_windows_sum(acc, nk, k, nwin, &m, &sticky, &up);
            }
            r = fx_round(m, sticky,
                         up + (int)ek - (int)((nwin - 1) * FX_S) - FX_BIAS -
                             FX_G);
            r = neg ? -r : r;
        }
        out[k] = r;
    }
}
#endif /* GR_BK_SEG == 5 */
