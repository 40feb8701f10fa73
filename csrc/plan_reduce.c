/*
 * gpured — policy layer: reductions' planner (gr_plan_reduce) and their
 * variants (the seed's ladder, the vector, sub-group, atomic, CPU, column
 * and warp kernels of kernels/reduce.cl), with the table of their default
 * geometry.  Pure: no OpenCL, no Python.
 */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- variants */

typedef struct {
    const char *name;
    gr_kernel_kind kind;
    int load, combine;
    int one_per_item;  /* one element per work-item (the ladder's start) */
    int vector;        /* 16-byte vector loads by default                */
    int atomic;
    int needs_sg, needs_wgc;
} variant_def;

static const variant_def variant_defs[] = {
    {"naive", GR_K_GROUP, LOAD_COALESCED, COMB_NAIVE, 1, 0, 0, 0, 0},
    {"divergence_free", GR_K_GROUP, LOAD_COALESCED, COMB_SEQ, 1, 0, 0, 0, 0},
    {"unroll_last", GR_K_GROUP, LOAD_COALESCED, COMB_UNROLL_LAST, 1, 0, 0, 1, 0},
    {"unroll_complete", GR_K_GROUP, LOAD_COALESCED, COMB_UNROLL_COMPLETE, 1, 0, 0, 0, 0},
    {"stride_global", GR_K_GROUP, LOAD_STRIDE_GLOBAL, COMB_UNROLL_COMPLETE, 0, 0, 0, 0, 0},
    {"stride_local", GR_K_GROUP, LOAD_COALESCED, COMB_UNROLL_COMPLETE, 0, 0, 0, 0, 0},
    {"vector", GR_K_GROUP, LOAD_COALESCED, COMB_UNROLL_COMPLETE, 0, 1, 0, 0, 0},
    {"workgroup", GR_K_GROUP, LOAD_COALESCED, COMB_WORKGROUP, 0, 1, 0, 0, 1},
    {"subgroup", GR_K_GROUP, LOAD_COALESCED, COMB_SUBGROUP, 0, 1, 0, 1, 0},
    {"atomic", GR_K_GROUP, LOAD_COALESCED, COMB_UNROLL_COMPLETE, 0, 1, 1, 0, 0},
    {"chunked", GR_K_GROUP, LOAD_CONTIG, COMB_UNROLL_COMPLETE, 0, 0, 0, 0, 0},
    {"segment_per_item", GR_K_ITEMS, 0, 0, 0, 0, 0, 0, 0},
    {"segment_per_warp", GR_K_WARP, 0, 0, 0, 0, 0, 0, 0},
};
#define NVARIANTS ((int)(sizeof variant_defs / sizeof *variant_defs))

static const char *const variants[] = {
    "auto", "naive", "divergence_free", "unroll_last", "unroll_complete",
    "stride_global", "stride_local", "vector", "workgroup", "subgroup",
    "atomic", "chunked", "segment_per_item", "segment_per_warp", NULL};

const char *const *gr_reduce_variants(void) { return variants; }

static const variant_def *find_variant(const char *name)
{
    for (int i = 0; i < NVARIANTS; ++i) {
        if (strcmp(variant_defs[i].name, name) == 0) {
            return &variant_defs[i];
        }
    }
    return NULL;
}

/* 1 if the device can run the variant for this operator and accumulator,
 * else 0 with the reason in why. */
static int available(const gr_device *d, gr_op op, const gr_accum *acc,
                     const variant_def *v, char *why, size_t n)
{
    const int sized = acc->a_size == 4 || acc->a_size == 8;
    if (v->kind == GR_K_WARP && !d->nvidia_ptx) {
        snprintf(why, n, "variant '%s' shuffles within NVIDIA's warps "
                 "(inline PTX); device '%s' has none", v->name, d->name);
        return 0;
    }
    if (v->needs_sg && !d->nvidia_ptx && !d->subgroups) {
        snprintf(why, n, "variant '%s' needs sub-groups (cl_khr_subgroups or "
                 "NVIDIA PTX warp primitives); device '%s' has neither",
                 v->name, d->name);
        return 0;
    }
    if (v->needs_sg && !d->nvidia_ptx) {
        /* cl_khr_subgroups: PoCL 5.0 crashed (SIGSEGV) on sub_group_barrier()
         * inside the unroll loop, so the sub-group barrier path is NVIDIA's
         * only; sub_group_reduce_* covers add/min/max on 32/64-bit values. */
        if (v->combine == COMB_UNROLL_LAST) {
            snprintf(why, n, "variant 'unroll_last' uses NVIDIA's bar.warp.sync; "
                     "through cl_khr_subgroups (device '%s') it is not offered "
                     "(PoCL 5.0 crashes on sub_group_barrier in the loop)",
                     d->name);
            return 0;
        }
        if (acc->x_size != 0 || !sized ||
            !(op == GR_ADD || op == GR_MIN || op == GR_MAX)) {
            snprintf(why, n, "variant 'subgroup' through cl_khr_subgroups uses "
                     "sub_group_reduce_add/min/max on 32- and 64-bit values "
                     "(not %s on %d-byte values)", gr_op_names[op], acc->a_size);
            return 0;
        }
    }
    if (v->needs_wgc) {
        if (!d->wg_collectives) {
            snprintf(why, n, "variant 'workgroup' needs OpenCL 2.0 work-group "
                     "collective functions; device '%s' has none", d->name);
            return 0;
        }
        if (op == GR_MUL || op == GR_ARGMIN || op == GR_ARGMAX || !sized) {
            snprintf(why, n, "variant 'workgroup' covers add/min/max/all/any "
                     "on 32- and 64-bit accumulators (work_group_reduce_*), "
                     "not %s on %d-byte values", gr_op_names[op], acc->a_size);
            return 0;
        }
    }
    if (v->atomic) {
        if (acc->var) {
            snprintf(why, n, "variant 'atomic' merges one accumulator by "
                     "compare-and-swap; var/std's state is two sums, "
                     "nanmean's a sum and its count");
            return 0;
        }
        if (acc->ptp) {
            snprintf(why, n, "variant 'atomic' merges one accumulator by "
                     "compare-and-swap; ptp's state is a maximum and a "
                     "minimum");
            return 0;
        }
        if (op == GR_ARGMIN || op == GR_ARGMAX || !sized) {
            snprintf(why, n, "variant 'atomic' needs a 32- or 64-bit "
                     "accumulator that one compare-and-swap can update (not "
                     "%s on %d-byte values)", gr_op_names[op], acc->a_size);
            return 0;
        }
        if (acc->a_size == 8 && !d->atomics64) {
            snprintf(why, n, "variant 'atomic' on 64-bit accumulators needs "
                     "cl_khr_int64_base_atomics; device '%s' lacks it",
                     d->name);
            return 0;
        }
    }
    return 1;
}

int gr_variant_available(const gr_device *d, gr_op op, const gr_accum *acc,
                         const char *name, char *why, size_t n)
{
    const variant_def *v = find_variant(name);
    if (strcmp(name, "auto") == 0) {
        return 1;
    }
    if (v == NULL) {
        snprintf(why, n, "unknown variant '%s'", name);
        return 0;
    }
    return available(d, op, acc, v, why, n);
}

/* ---------------------------------------------------- geometry defaults
 * The default geometry of every kernel kind, one row per rule.  The
 * planner picks a base row by kernel kind and device class, then applies
 * the adjustment rows that match, in table order; plan->row names the
 * last row that set the geometry.  A field left 0 keeps what the rows
 * before it set. */
typedef struct {
    const char *row;
    size_t lo, hi;     /* warp rows: rows of lo .. hi - 1 elements (auto)  */
    size_t short_max;  /* one work-item per row up to this length (auto)   */
    int wg;            /* work-items per group                             */
    int vec_bytes;     /* vector loads of this many bytes (vw, 1..16)      */
    int vw;            /* a fixed vector width                             */
    int ilp;           /* accumulators a work-item                         */
    int per, lanes;    /* warp rows: elements a lane, lanes at most        */
    int viters_max;    /* warp rows as vectors: a lane's vector loads of a
                        * row compiled in (unrolled) up to this many      */
    int wg_min, loads; /* GPU rows: groups wg_min..wg wide, loads a
                        * work-item at least                               */
    size_t fill;       /* GPU: work-items a compute unit; CPU: groups a
                        * core                                             */
    size_t big;        /* CPU: bytes a segment from which fill applies     */
    size_t span;       /* CPU columns: bytes of rows a part spans at most  */
    size_t min_m;      /* CPU columns: segments at least                   */
} reduce_row;

enum {
    RR_WARP, RR_WARP_ARG, RR_ITEMS_GPU, RR_ITEMS_CPU, RR_ITEMS_COLS,
    RR_CHUNKED, RR_LADDER, RR_SCALAR, RR_VECTOR, RR_VECTOR_WIDE, RR_GPU_2B_SUM,
    RR_GPU_2B_EXT,
    RR_GPU_8B,
    RR_GPU_8B_ARG, RR_ALL_ANY, RR_GPU_ROWS, RR_COUNT_8B, RR_FILL_GPU,
    RR_FILL_CPU, RR_FILL_CPU_BIG
};

/* Halves' plain sums: vectors of this many loads added in float first
 * (gr_plan.hf; kernels/common.cl GR_HF) */
#define HALF_FOLD 2
#define ITEMS_ROW_MAX 16 /* rows this short: one work-item per row       */

static const reduce_row reduce_rows[] = {
    /* NVIDIA, rows of lo .. hi - 1 elements read along the row: lanes of
     * a warp per row, about 8 elements a lane (H100, 1 GiB float32 row
     * sums, wall, benchmarks/exp/rows_warp.py, 2026-11-27): rows of 16
     * 0.38 ms (a work-item per row 0.54; CuPy 0.38), 32 0.41 (1.06), 64
     * 0.38 (1.06), 128 0.36 (1.08), 256 0.35 (a work-group of 64 0.64),
     * 511 0.36 (0.40); from 512 the groups' 0.35.  Rows of 4- and
     * 8-byte elements are read as 16-byte vectors, still about 8
     * elements a lane (H200, 1 GiB, wall, benchmarks/exp/
     * rows_vec_h200.py, 2026-11-29): float32 rows of 16 0.276 ms (element
     * loads 0.314, CuPy 0.272), 32 0.277, 64 0.267, 128 0.265, 511 0.257;
     * float64 16 0.309, 64 0.262.  A vector a lane (4 lanes a row of 16)
     * 0.48: per-row work, not loads, bounds those; more rows a lane
     * (ilp) did not pay for sums.  A lane's vector loads of a row
     * unrolled to a compiled-in count where at most 8 (H200, same
     * script, 2026-11-29, commit e3c0423): float32 rows of 16 0.276 ->
     * 0.266-0.269 ms, 32 0.262, 64 0.257, 256 0.247; max rows of 16
     * 0.309 -> 0.267; float64 rows of 256 0.298 -> 0.256. */
    [RR_WARP] = {.row = "nvidia short rows 16-511", .lo = 16, .hi = 512,
                 .wg = 256, .per = 8, .lanes = 32, .vec_bytes = 16,
                 .ilp = 1, .viters_max = 8},
    /* argmin/argmax shuffle an index beside the value: 2-4 lanes, 16
     * elements each at least (H100, float32, benchmarks/exp/rows_warp.py
     * SWEEP=1: rows of 64 in 4 lanes 0.48 ms a GiB, 8 lanes 0.60; rows
     * of 256 in 4 lanes 0.51, 32 lanes 0.67; torch 1.85 / 0.63).  As
     * vectors (H200, rows_vec_h200.py SWEEP=1): 2 rows a lane at once,
     * and one lane a row under 32 elements: rows of 16 0.35 ms (2 lanes
     * 0.48), 32 0.32, 64 0.32, 256 0.27; loads unrolled as RR_WARP's:
     * rows of 16 0.348 -> 0.306 */
    [RR_WARP_ARG] = {.row = "nvidia short rows 16-511, argmin/argmax",
                     .wg = 256, .per = 16, .lanes = 4, .vec_bytes = 16,
                     .ilp = 2, .viters_max = 8},
    /* GPUs, float32 rows summed (1 GiB, H100, wall, benchmarks/exp/
     * short_rows_plans.py, 2026-11-27): one work-item per row 0.54 ms at
     * 16 elements, 1.07-1.08 at 32-128, 1.09 at 256; a work-group of 256
     * per row 13.9 / 7.19 / 3.80 / 2.13 ms at 32 / 64 / 128 / 256
     * elements, of 64 5.08 / 2.55 / 1.28 / 0.64 (0.35 at 512).  Parts:
     * enough work-items for 2048 a compute unit. */
    [RR_ITEMS_GPU] = {.row = "gpu segment per item", .short_max = 128,
                      .wg = 256, .vw = 1, .fill = 2048},
    /* CPUs: rows of up to 16 elements one work-item each; 4 groups a
     * core */
    [RR_ITEMS_CPU] = {.row = "cpu segment per item", .short_max = 16,
                      .wg = 64, .vw = 1, .fill = 4},
    /* CPUs: adjacent columns are read as one 64-byte vector per row by
     * one work-item (0.6 -> see docs/journal/BENCHMARKS.md); GPUs coalesce across
     * work-items instead.  Each part's rows span at most 4 MiB.  A
     * work-item reads 64 bytes a row, every row on its own page: over
     * more, each page walk misses the TLB, where the groups of one part
     * (adjacent columns, the same rows) share them.  2-core PoCL 3.1,
     * float32 axis-0 sums of device arrays, numpy / gpured
     * (benchmarks/exp/cpu_columns.py): 1024 x 4096 0.55 -> 1.06, 4096 x
     * 4096 0.53 -> 0.98, 16384 x 1024 0.47 -> 1.02, 256 x 16384 0.75 ->
     * 0.91. */
    [RR_ITEMS_COLS] = {.row = "cpu adjacent columns, 64-byte vectors",
                       .wg = 4, .vec_bytes = 64, .fill = 4,
                       .span = (size_t)4 << 20, .min_m = 16},
    /* CPUs: each work-item streams one contiguous run in 64-byte
     * vectors, two accumulators */
    [RR_CHUNKED] = {.row = "cpu chunked, 64-byte vectors", .wg = 4,
                    .vec_bytes = 64, .ilp = 2},
    /* the seed's ladder: one element per work-item (or one at a time,
     * global-size-strided) */
    [RR_LADDER] = {.row = "one element at a time", .wg = 256, .vw = 1,
                   .ilp = 1},
    [RR_SCALAR] = {.row = "coalesced scalar loads", .wg = 256, .vw = 1,
                   .ilp = 4},
    /* H100, 1 GiB: float32/float64 sum/min/max 2.95-2.99 TB/s with 2
     * accumulators (99% of the 3.0 TB/s copy); an int32 sum into int64
     * needs 4 (74% with 2, 99% with 4); all/any want 1 (98% vs 68%). */
    [RR_VECTOR] = {.row = "coalesced 16-byte vectors", .wg = 256,
                   .vec_bytes = 16, .ilp = 2},
    [RR_VECTOR_WIDE] = {.row = "coalesced 16-byte vectors, integers "
                        "widened", .wg = 256, .vec_bytes = 16, .ilp = 4},
    /* H100, 1 GiB of 8-byte values by events (benchmarks/exp/vw8.py,
     * 2026-11-26): double4/long4 loads with 4 accumulators against vw 2,
     * ilp 2: max float64 0.373 -> 0.356 ms, var 0.365 -> 0.356, sum int64
     * 0.361 -> 0.356; argmin/argmax keep 2 accumulators (0.3585 against
     * 0.3620 with 4).  nanmean keeps vw 2, ilp 2: 0.357 ms against 0.415
     * in loops of calls (benchmarks/exp/nanmean8.py) */
    /* H200, 1 GiB float16 sum, wall (benchmarks/exp/f16_knobs.py,
     * 2026-11-28): 16-byte loads of halves (vw 8) 0.328 ms at ilp 2,
     * 0.284 at ilp 1; 8-byte loads (vw 4) 0.277 at ilp 2, 0.280 at ilp 1;
     * vw 16 0.54-0.68; float32's own sum 0.243, torch's float16 0.255.
     * Those loads were vload_halfN, N 2-byte loads on NVIDIA.  With the
     * aligned loads folded in pairs (HALF_FOLD; benchmarks/exp/
     * f16_fold_h200.py, 2026-11-29, float16 / bfloat16): vw 4 ilp 4
     * 0.246 / 0.253 ms, vw 2 ilp 2 0.247 / 0.254, vw 4 ilp 2 0.266 /
     * 0.251, 32-byte loads 0.54; float32's sum 0.249. */
    [RR_GPU_2B_SUM] = {.row = "gpu 2-byte floats, 16-byte loads added "
                       "in pairs", .vec_bytes = 8, .ilp = 4},
    /* H200, 1 GiB, wall, aligned loads of halves in order (benchmarks/exp/
     * f16_ext_h200.py, 2026-11-29): vw 4 ilp 4 max 0.255 / 0.260 ms
     * (float16 / bfloat16; float32's max 0.255), argmax 0.289 / 0.325
     * (float32's 0.258); the 16-byte row (vw 8 ilp 2) 0.292 / 0.265 and
     * argmax (vw 8 ilp 4) 0.308 / 0.533 */
    [RR_GPU_2B_EXT] = {.row = "gpu 2-byte extremes, 8-byte aligned loads",
                       .vec_bytes = 8, .ilp = 4},
    [RR_GPU_8B] = {.row = "gpu 8-byte values", .vw = 4, .ilp = 4},
    [RR_GPU_8B_ARG] = {.row = "gpu 8-byte values, argmin/argmax", .vw = 4,
                       .ilp = 2},
    [RR_ALL_ANY] = {.row = "all/any, one accumulator", .ilp = 1},
    /* Short rows, one group each: groups no wider than a couple of loads
     * a work-item, 64 at least (figures at RR_ITEMS_GPU: rows of 256-512
     * at 64 0.64 / 0.35 ms, at 256 2.13 / 1.05) */
    [RR_GPU_ROWS] = {.row = "gpu rows, a group each", .wg = 256,
                     .wg_min = 64, .loads = 2},
    /* H100, 1 GiB float64 count_nonzero: double2 loads ran at 0.78 of sum
     * in a loop of calls (double4: 0.55; events at sum's speed either
     * way), scalar loads at sum's speed (benchmarks/exp/count_gap2.py) */
    [RR_COUNT_8B] = {.row = "8-byte counts, scalar loads", .vw = 1},
    /* GPUs: 2048 work-items a compute unit */
    [RR_FILL_GPU] = {.row = "gpu fill", .fill = 2048},
    /* CPUs: a few groups per core; 16 per core over a long segment (H100
     * host, PoCL 5, 16 cores, 1 GiB float32 sum, benchmarks/exp/
     * cpu_groups.py: 64 groups 14.6-15.7 ms, 256 groups 13.1-13.7; the
     * cores' shares even out) */
    [RR_FILL_CPU] = {.row = "cpu fill", .fill = 4},
    [RR_FILL_CPU_BIG] = {.row = "cpu fill, long segments", .fill = 16,
                         .big = (size_t)64 << 20},
};

/* Vectors of `bytes` bytes of tsize-byte elements: 1 to 16 of them. */
static int vw_of(int bytes, int tsize)
{
    return (int)min_sz(16, max_sz(1, (size_t)(bytes / tsize)));
}

/* A row's geometry over the plan's (fields left 0 keep theirs). */
static void apply_row(gr_plan *plan, const reduce_row *g, int tsize)
{
    if (g->wg) {
        plan->wg = g->wg;
    }
    if (g->vec_bytes) {
        plan->vw = vw_of(g->vec_bytes, tsize);
    } else if (g->vw) {
        plan->vw = g->vw;
    }
    if (g->ilp) {
        plan->ilp = g->ilp;
    }
    plan->row = g->row;
}

/* ------------------------------------------------------------ variant */

/* Auto: gpured.tune()'s winner where it measured this call, else the
 * rule (see policy.c's header).  Sets the tuned knobs in ov. */
static const char *auto_variant(const gr_device *d, gr_op op,
                                const gr_accum *acc, const gr_layout *lay,
                                gr_knobs *ov, gr_plan *plan)
{
    const int tsize = gr_dtypes[acc->t].size;
    const reduce_row *w = &reduce_rows[RR_WARP];
    const gr_tuned *tu = NULL;
    if (lay->M == 1 && lay->elem_stride == 1) {
        tu = gr_pol_tuned_lookup(d, op, acc->t, lay->L * (size_t)tsize);
    }
    if (tu != NULL && find_variant(tu->variant) != NULL &&
        available(d, op, acc, find_variant(tu->variant), plan->why,
                  sizeof plan->why)) {
        /* gpured.tune() measured this on this device. */
        ov->wg_size = tu->wg_size;
        ov->ilp = tu->ilp;
        ov->vw = tu->vw;
        ov->groups = tu->groups;
        plan->tuned = 1;
        return find_variant(tu->variant)->name;
    }
    if (d->nvidia_ptx && lay->elem_stride == 1 && lay->M > 1 &&
        lay->L >= w->lo && lay->L < w->hi) {
        return "segment_per_warp";
    }
    if (lay->elem_stride != 1 ||
        (lay->L <= reduce_rows[d->is_gpu ? RR_ITEMS_GPU : RR_ITEMS_CPU]
                       .short_max &&
         lay->M > 1)) {
        return "segment_per_item";
    }
    if (d->is_gpu) {
        /* Coalesced vectors, warp combine where the warp is reachable. */
        return d->nvidia_ptx ? "subgroup" : "vector";
    }
    return "chunked";
}

/* The variant (named or auto), checked against the device; the plan's
 * kernel kind, loads and combine from it. */
static int reduce_variant(const gr_device *d, gr_op op, const gr_accum *acc,
                          const gr_layout *lay, gr_knobs *ov, gr_plan *plan,
                          const variant_def **vp)
{
    const char *name = (ov->variant && ov->variant[0]) ? ov->variant : "auto";
    if (strcmp(name, "auto") != 0 && find_variant(name) == NULL) {
        snprintf(plan->why, sizeof plan->why,
                 "unknown variant '%s' (gpured.variants() lists them)", name);
        return -1;
    }
    if (gr_pol_check_knobs(d, ov, plan) != 0) {
        return -1;
    }
    if (strcmp(name, "auto") == 0) {
        name = auto_variant(d, op, acc, lay, ov, plan);
    }
    const variant_def *v = find_variant(name);
    *vp = v;
    plan->variant = v->name;
    if (!available(d, op, acc, v, plan->why, sizeof plan->why)) {
        return -2;
    }
    plan->kind = v->kind;
    plan->load = v->load;
    plan->combine = v->combine;
    plan->atomic = v->atomic;
    if (v->needs_sg) {
        plan->sg = d->nvidia_ptx ? 1 : 2; /* GR_SG_PTX / GR_SG_KHR */
        plan->sg_native = plan->sg == 2 && acc->x_size == 0 &&
                          (op == GR_ADD || op == GR_MIN || op == GR_MAX) &&
                          (acc->a_size == 4 || acc->a_size == 8);
    }
    return 0;
}

/* ------------------------------------------------- warp: short rows */

/* GR_K_WARP: lanes of a warp per row (items=: elements per lane).  Rows
 * of 4- and 8-byte elements along the row (no where=, no variance, no
 * user operator) are read as g->vec_bytes vectors, g->ilp rows a lane at
 * once (vw=, ilp=: those two); others one element at a time. */
/* GPURED_WARP_VITERS=0 (benchmarks/exp A/B runs): the loop instead of
 * the unrolled loads.  Read once per process. */
static int warp_viters_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *ve = getenv("GPURED_WARP_VITERS");
        on = !(ve && ve[0] == '0');
    }
    return on;
}

static int plan_warp(const gr_device *d, gr_op op, const gr_accum *acc,
                     const gr_layout *lay, const gr_knobs *ov,
                     const variant_def *v, gr_plan *plan)
{
    const int arg = op == GR_ARGMIN || op == GR_ARGMAX;
    const reduce_row *g = &reduce_rows[arg ? RR_WARP_ARG : RR_WARP];
    const size_t esz = (size_t)gr_dtypes[acc->t].size;
    const size_t vw_row = g->vec_bytes ? (size_t)g->vec_bytes / esz : 1;
    /* (rows whose stride is not a whole number of vectors: every other
     * row starts off a vector, one element at a time as before) */
    const int vec = lay->elem_stride == 1 && (esz == 4 || esz == 8) &&
                    !GR_IS_HALF(acc->t) && !acc->var && !acc->where &&
                    !acc->user && g->vec_bytes &&
                    (lay->M == 1 || (size_t)lay->seg_stride % vw_row == 0);
    const size_t vw_auto = vec ? vw_row : 1;
    if (!vec && ((ov->vw && ov->vw != 1) || (ov->ilp && ov->ilp != 1))) {
        return gr_pol_one_at_a_time(
            plan, v->name,
            " here (rows read as vectors need 4- or 8-byte elements along "
            "the row, no where= and no variance)");
    }
    if (ov->vw && (size_t)ov->vw * esz > 16) {
        snprintf(plan->why, sizeof plan->why,
                 "%s: vw * the element's bytes must be at most 16", v->name);
        return -1;
    }
    if (ov->ilp > 8) {
        snprintf(plan->why, sizeof plan->why,
                 "%s: ilp (rows a lane reads at once) must be at most 8",
                 v->name);
        return -1;
    }
    plan->row = g->row;
    plan->vw = ov->vw ? ov->vw : (int)vw_auto;
    plan->ilp = ov->ilp ? ov->ilp : plan->vw > 1 ? g->ilp : 1;
    /* lanes: a power of two up to 32, about g->per elements each (rows
     * read as vectors: from 1 lane); items: the power of two at or above
     * length / items */
    size_t lanes = ov->items ? min_sz(32, (size_t)pow2_at_most(
                                              2 * ceil_div(lay->L, (size_t)ov->items) - 1))
                             : warp_lanes(lay->L, (size_t)g->per, (size_t)g->lanes);
    if (!ov->items && plan->vw > 1 && lay->L < 2 * (size_t)g->per) {
        lanes = 1;
    }
    plan->lanes = (int)lanes;
    plan->wg = (int)min_sz(ov->wg_size ? (size_t)ov->wg_size : (size_t)g->wg,
                           d->max_wg);
    if (plan->wg < 32) {
        return gr_pol_whole_warps(plan, v->name);
    }
    plan->sg = 1; /* GR_SG_PTX: the shuffles */
    const size_t parts = ov->groups ? min_sz((size_t)ov->groups, lay->L) : 1;
    plan->chunk = ceil_div(lay->L, parts);
    if (plan->vw > 1) {
        /* parts start on a vector */
        plan->chunk = ceil_div(plan->chunk, (size_t)plan->vw) * (size_t)plan->vw;
    }
    plan->parts = ceil_div(lay->L, plan->chunk);
    /* a lane's vector loads of a row, compiled in where few: the loads
     * unrolled and issued together (a loop to a run-time bound issues one
     * at a time) */
    const size_t vsteps = ceil_div(plan->chunk, lanes * (size_t)plan->vw);
    plan->viters = plan->vw > 1 && vsteps <= (size_t)g->viters_max &&
                           warp_viters_on()
                       ? (int)vsteps : 0;
    gr_pol_second_pass(d, lay->M, plan);
    char how[64] = "";
    if (plan->vw > 1) {
        snprintf(how, sizeof how, ", vectors of %d, %d rows a lane at once",
                 plan->vw, plan->ilp);
    }
    snprintf(plan->why, sizeof plan->why,
             "short rows: %d lanes of a warp per segment%s, "
             "shuffle combine; each segment in %zu part(s) of %zu "
             "elements", plan->lanes, how, plan->parts, plan->chunk);
    return 0;
}

/* -------------------------------------- items: strided or short rows */

/* Parts per segment of the items kernel: enough work-items to fill the
 * device (g->fill), unless the knobs say. */
static size_t items_parts(const gr_device *d, const gr_accum *acc,
                          const gr_layout *lay, const gr_knobs *ov,
                          const reduce_row *g, int cols, size_t threads,
                          const gr_plan *plan)
{
    const size_t cu = d->compute_units;
    const size_t target = d->is_gpu ? cu * g->fill
                                    : cu * (size_t)plan->wg * g->fill;
    size_t parts;
    if (ov->items) {
        parts = ceil_div(lay->L, (size_t)ov->items);
    } else if (ov->groups) {
        parts = (size_t)ov->groups;
    } else if (lay->L <= ITEMS_ROW_MAX) {
        parts = 1; /* a few elements per segment: one pass */
    } else {
        /* GPUs: the nearest whole number of parts, not the next one:
         * H100, 4096 x 65536 float32 axis 0 (65536 work-items, target
         * 270336): 5 parts (1280 groups, 1.2 waves) 0.386 ms, 4 parts
         * (one wave) 0.361, 8 parts 0.362; torch 0.375
         * (benchmarks/exp/gpu_columns.py) */
        parts = d->is_gpu ? max_sz(1, (target + threads / 2) / threads)
                          : ceil_div(target, threads);
        if (cols && !d->is_gpu) {
            /* CPUs: each part's rows span at most RR_ITEMS_COLS's span */
            const size_t span = lay->L * (size_t)lay->elem_stride *
                                (size_t)gr_dtypes[acc->t].size;
            parts = max_sz(parts, ceil_div(span, reduce_rows[RR_ITEMS_COLS].span));
        }
    }
    return max_sz(1, min_sz(min_sz(parts, lay->L), MAX_PARTS));
}

/* GR_K_ITEMS: one work-item per segment (or per vw adjacent columns). */
static int plan_items(const gr_device *d, const gr_accum *acc,
                      const gr_layout *lay, const gr_knobs *ov,
                      gr_plan *plan)
{
    const int tsize = gr_dtypes[acc->t].size;
    const int cols = lay->seg_stride == 1 && lay->elem_stride > 1;
    const int vec_cols = cols && !d->is_gpu &&
                         lay->M >= reduce_rows[RR_ITEMS_COLS].min_m;
    const reduce_row *g = &reduce_rows[d->is_gpu ? RR_ITEMS_GPU
                                       : vec_cols ? RR_ITEMS_COLS
                                                  : RR_ITEMS_CPU];
    apply_row(plan, g, tsize);
    plan->wg = ov->wg_size ? ov->wg_size : plan->wg;
    plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
    if (cols && ov->vw) {
        plan->vw = ov->vw; /* vw applies to adjacent segments only */
    }
    plan->ilp = 1;
    size_t threads = round_up(ceil_div(lay->M, (size_t)plan->vw),
                              (size_t)plan->wg);
    const size_t parts = items_parts(d, acc, lay, ov, g, cols, threads, plan);
    plan->chunk = ceil_div(lay->L, parts);
    plan->parts = ceil_div(lay->L, plan->chunk);
    gr_pol_second_pass(d, lay->M, plan);
    snprintf(plan->why, sizeof plan->why,
             "%s segments: one work-item per %d segment(s) (%zu "
             "work-items), each segment in %zu part(s) of %zu elements",
             lay->elem_stride != 1 ? "strided" : "short", plan->vw,
             threads, plan->parts, plan->chunk);
    return 0;
}

/* ------------------------------- work-group kernels: contiguous rows */

/* The group kernels' default geometry: the base row of the variant's
 * loads, then the adjustments that match, in table order. */
static void group_defaults(const gr_device *d, gr_op op, const gr_accum *acc,
                           const gr_layout *lay, const variant_def *v,
                           gr_plan *plan)
{
    const int tsize = gr_dtypes[acc->t].size;
    const int arg = op == GR_ARGMIN || op == GR_ARGMAX;
    const int ladder = v->one_per_item || v->load == LOAD_STRIDE_GLOBAL;
    if (v->load == LOAD_CONTIG) {
        apply_row(plan, &reduce_rows[RR_CHUNKED], tsize);
        return;
    }
    apply_row(plan, &reduce_rows[ladder       ? RR_LADDER
                                 : !v->vector ? RR_SCALAR
                                 : (!gr_dtypes[acc->r].is_float &&
                                    acc->a_size > tsize)
                                     ? RR_VECTOR_WIDE
                                     : RR_VECTOR],
              tsize);
    if (v->vector && tsize == 8 && d->is_gpu && acc->var != 3) {
        apply_row(plan, &reduce_rows[arg ? RR_GPU_8B_ARG : RR_GPU_8B], tsize);
    }
    if (v->vector && d->is_gpu && GR_IS_HALF(acc->t)) {
        if (op == GR_ADD) {
            apply_row(plan, &reduce_rows[RR_GPU_2B_SUM], tsize);
        } else if (op == GR_MIN || op == GR_MAX || arg) {
            apply_row(plan, &reduce_rows[RR_GPU_2B_EXT], tsize);
        }
    }
    if (v->vector && GR_IS_HALF(acc->t) && !acc->where && !acc->ptp &&
        v->load == LOAD_COALESCED && !v->one_per_item) {
        /* halves' aligned loads: plain sums add pairs in float first (a
         * NaN's or a shift's rule applies to each element before it is
         * added); min/max/argmin/argmax read them as they are */
        if (op == GR_ADD && !acc->nan && !acc->var) {
            plan->hf = HALF_FOLD;
        } else if (op == GR_MIN || op == GR_MAX || op == GR_ARGMIN ||
                   op == GR_ARGMAX) {
            plan->hf = 1;
        }
    }
    if (v->vector && (op == GR_ALL || op == GR_ANY)) {
        apply_row(plan, &reduce_rows[RR_ALL_ANY], tsize);
    }
    if (d->is_gpu && lay->M > 1 && !ladder) {
        const reduce_row *g = &reduce_rows[RR_GPU_ROWS];
        const size_t per = (size_t)plan->vw * (size_t)plan->ilp *
                           (size_t)g->loads;
        plan->wg = (int)max_sz((size_t)g->wg_min, (size_t)pow2_at_most(
                                   min_sz(lay->L / per, (size_t)g->wg)));
        plan->row = g->row;
    }
    if (v->vector && tsize == 8 &&
        (acc->cvt == CVT_COUNT || acc->cvt == CVT_VALID)) {
        apply_row(plan, &reduce_rows[RR_COUNT_8B], tsize);
    }
}

/* The knobs over the defaults, and the refusals they can meet. */
static int group_knobs(const gr_device *d, const gr_knobs *ov,
                       const variant_def *v, gr_plan *plan)
{
    if (ov->wg_size) {
        plan->wg = ov->wg_size;
    }
    if (ov->vw) {
        plan->vw = ov->vw;
    }
    if (ov->ilp) {
        plan->ilp = ov->ilp;
    }
    plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
    if (v->one_per_item || v->load == LOAD_STRIDE_GLOBAL) {
        if ((ov->vw && ov->vw != 1) || (ov->ilp && ov->ilp != 1) ||
            (v->one_per_item && ov->items > 1)) {
            return gr_pol_one_at_a_time(plan, v->name,
                                        v->one_per_item
                                            ? ", items 1 (use stride_local for more)"
                                            : "");
        }
        plan->vw = 1;
        plan->ilp = 1;
    }
    if (plan->hf && plan->vw * plan->hf != 4 && plan->vw * plan->hf != 8) {
        plan->hf = 0; /* the aligned loads are 8 or 16 bytes */
    }
    if (plan->sg == 1 && plan->wg < 32) {
        return gr_pol_whole_warps(plan, v->name);
    }
    return 0;
}

/* Work-groups per segment (parts) and their chunks: enough groups to
 * fill the device, each with a few full tiles. */
static void group_parts(const gr_device *d, gr_op op, const gr_accum *acc,
                        const gr_layout *lay, const gr_knobs *ov,
                        const variant_def *v, gr_plan *plan)
{
    const size_t cu = d->compute_units;
    const int tsize = gr_dtypes[acc->t].size;
    const size_t tile =
        (size_t)plan->wg * plan->vw * (size_t)(plan->hf ? plan->hf : 1);
    const size_t full = tile * plan->ilp;
    const reduce_row *big = &reduce_rows[RR_FILL_CPU_BIG];
    size_t target = d->is_gpu ? cu * max_sz(1, reduce_rows[RR_FILL_GPU].fill /
                                                   (size_t)plan->wg)
                    : lay->L * (size_t)tsize >= big->big
                        ? cu * big->fill
                        : cu * reduce_rows[RR_FILL_CPU].fill;
    size_t parts, max_parts = MAX_PARTS;
    if (v->one_per_item) {
        /* The ladder's start: one element per work-item, as many groups as
         * that takes; pass 2 folds their partials. */
        parts = ceil_div(lay->L, (size_t)plan->wg);
        max_parts = (size_t)1 << 40;
    } else if (ov->items) {
        parts = ceil_div(lay->L, (size_t)ov->items * plan->wg);
    } else if (ov->groups) {
        parts = (size_t)ov->groups;
    } else {
        parts = ceil_div(target, lay->M);
        /* Give each work-group at least a few full tiles. */
        parts = min_sz(parts, max_sz(1, lay->L / (full * 4)));
    }
    parts = max_sz(1, min_sz(parts, max_parts));
    if ((op == GR_ARGMIN || op == GR_ARGMAX) && acc->a_size == 4) {
        /* kernels/reduce.cl GR_ARGK numbers a work-item's loads in 32
         * bits: fewer than 2^32 - 1 of them per work-item */
        parts = max_sz(parts, ceil_div(lay->L, (size_t)0xfffffff0u * tile));
    }
    if (v->load == LOAD_STRIDE_GLOBAL) {
        parts = min_sz(parts, ceil_div(lay->L, (size_t)plan->wg));
        plan->chunk = ceil_div(lay->L, parts);
        plan->parts = parts;
    } else {
        plan->chunk = round_up(ceil_div(lay->L, parts), tile);
        plan->parts = ceil_div(lay->L, plan->chunk);
    }
    gr_pol_second_pass(d, lay->M, plan);
    if (plan->atomic) {
        plan->passes = 1; /* groups merge into the result with atomics */
    }
}

/* The group kernels' why text. */
static void group_why(const gr_device *d, const variant_def *v,
                      gr_plan *plan)
{
    snprintf(plan->why, sizeof plan->why,
             "%s%s: %d work-items per group, %s loads of %d element(s), %d "
             "accumulator(s)%s, %s combine; %zu group(s) per segment%s",
             plan->tuned ? "tuned by gpured.tune(); " : "",
             d->is_gpu ? "GPU" : "CPU", plan->wg,
             v->load == LOAD_CONTIG          ? "contiguous per-work-item"
             : v->load == LOAD_STRIDE_GLOBAL ? "global-size-strided"
                                             : "coalesced",
             plan->hf ? plan->vw * plan->hf : plan->vw, plan->ilp,
             plan->hf > 1 ? " (halves added in float first)" : "",
             (const char *[]){"interleaved (naive)", "sequential",
                              "unrolled sequential", "unrolled, last warp by "
                              "sub-group barrier",
                              "sub-group shuffle", "work_group_reduce"}
                 [plan->combine],
             plan->parts,
             plan->atomic ? ", merged into the result by compare-and-swap"
             : plan->passes > 1 ? ", then one pass over the partials"
                                : " (single pass)");
}

/* GR_K_GROUP: work-groups along contiguous segments. */
static int plan_group(const gr_device *d, gr_op op, const gr_accum *acc,
                      const gr_layout *lay, const gr_knobs *ov,
                      const variant_def *v, gr_plan *plan)
{
    group_defaults(d, op, acc, lay, v, plan);
    if (group_knobs(d, ov, v, plan) != 0) {
        return -1;
    }
    group_parts(d, op, acc, lay, ov, v, plan);
    group_why(d, v, plan);
    return 0;
}

/* ------------------------------------------------------------ planner */

/* The variant, then the geometry of its kernel kind, then the why. */
int gr_plan_reduce(const gr_device *d, gr_op op, const gr_accum *acc,
                   const gr_layout *lay, const gr_knobs *ov_in,
                   gr_plan *plan)
{
    gr_knobs ov = *ov_in;
    const variant_def *v = NULL;
    memset(plan, 0, sizeof *plan);
    const int rc = reduce_variant(d, op, acc, lay, &ov, plan, &v);
    if (rc != 0) {
        return rc;
    }
    if (plan->kind == GR_K_WARP) {
        return plan_warp(d, op, acc, lay, &ov, v, plan);
    }
    if (plan->kind == GR_K_ITEMS) {
        return plan_items(d, acc, lay, &ov, plan);
    }
    return plan_group(d, op, acc, lay, &ov, v, plan);
}
