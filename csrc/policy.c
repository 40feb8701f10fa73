/*
 * gpured — policy: every "auto" rule of every family, in one place.
 *
 * Pure functions of (device facts, operator, types, layout, knobs, tuned
 * table): nothing here touches OpenCL or Python, so every decision can be
 * unit-tested through _core.plan_for on synthetic devices and shown to
 * users (gpured.explain).
 *
 *   gr_accum_for     the accumulator of (family, op, input, result)
 *   gr_plan_reduce   reductions: variant, work-group, vectors, passes
 *   gr_plan_scan     scans: variant, tile, passes
 *   gr_bk_plan_for   reduce-by-key: variant and geometry from key facts
 *
 * The auto choice for reductions, in a few lines:
 *   - NVIDIA, contiguous rows of 16-511 elements: lanes of a warp per
 *       row, shuffled down ("segment_per_warp");
 *   - strided segments (column reductions) or very short rows:
 *       one work-item per segment, consecutive work-items on consecutive
 *       addresses ("segment_per_item"), rows split in parts when there are
 *       too few segments to fill the device;
 *   - GPU: coalesced vector loads of 16 bytes, several accumulators per
 *       work-item, enough work-groups to fill every compute unit ("vector";
 *       "subgroup" with PTX warp shuffles on NVIDIA);
 *   - CPU: each work-item streams one contiguous run with explicit 64-byte
 *       vectors ("chunked"); a few work-groups per core;
 *   - if one work-group's tile covers the input: one pass, one group.
 *
 * For scans:
 *   - strided rows (scans along a non-last axis) or short rows:
 *       one work-item per row ("row_per_item");
 *   - otherwise a single pass with decoupled look-back where the device has
 *     64-bit atomics ("decoupled_lookback"): GPU tiles of 256 work-items x
 *     64 bytes (128 for 4-byte data) in registers; CPU tiles of one
 *     work-item's contiguous run that fits L1;
 *   - else reduce_then_scan (three passes).
 */
#include "gpured.h"
#include "host.h"
#include "hostpar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ============================================================ reductions */

const gr_dtype_info gr_dtypes[GR_NDTYPES] = {
    /* name       cl        uns       mask     min            max        sz fl sg */
    {"bool",    "uchar",  "uchar",  "char",  "0",           "1",         1, 0, 0},
    {"int8",    "char",   "uchar",  "char",  "CHAR_MIN",    "CHAR_MAX",  1, 0, 1},
    {"uint8",   "uchar",  "uchar",  "char",  "0",           "UCHAR_MAX", 1, 0, 0},
    {"int16",   "short",  "ushort", "short", "SHRT_MIN",    "SHRT_MAX",  2, 0, 1},
    {"uint16",  "ushort", "ushort", "short", "0",           "USHRT_MAX", 2, 0, 0},
    {"int32",   "int",    "uint",   "int",   "INT_MIN",     "INT_MAX",   4, 0, 1},
    {"uint32",  "uint",   "uint",   "int",   "0",           "UINT_MAX",  4, 0, 0},
    {"int64",   "long",   "ulong",  "long",  "LONG_MIN",    "LONG_MAX",  8, 0, 1},
    {"uint64",  "ulong",  "ulong",  "long",  "0",           "ULONG_MAX", 8, 0, 0},
    {"float32", "float",  "float",  "int",   "(-INFINITY)", "INFINITY",  4, 1, 1},
    {"float64", "double", "double", "long",  "(-INFINITY)", "INFINITY",  8, 1, 1},
};

const char *const gr_op_names[GR_NOPS] = {"add",    "multiply", "minimum",
                                          "maximum", "argmin",  "argmax",
                                          "all",    "any"};

/* CVT modes, as in kernels/common.cl */
enum { CVT_NONE = 0, CVT_TO_A = 1, CVT_WRAP = 2, CVT_MASK = 3,
       CVT_COUNT = GR_CVT_COUNT_MODE, CVT_VALID = GR_CVT_VALID_MODE };

static int accum_reduce(const gr_device *d, gr_op op, gr_dtype t,
                        gr_dtype r, gr_accum *acc, char *err, size_t errlen)
{
    const gr_dtype_info *ti = &gr_dtypes[t], *ri = &gr_dtypes[r];
    memset(acc, 0, sizeof *acc);
    acc->t = t;
    acc->r = r;
    if ((t == GR_FLOAT64 || r == GR_FLOAT64) && !d->fp64) {
        snprintf(err, errlen,
                 "dtype float64 is not supported by device '%s' (no fp64)",
                 d->name);
        return -1;
    }
    switch (op) {
    case GR_ADD:
    case GR_MUL:
        if (ri->is_float) {
            /* float32 sums accumulate in double where the device has it:
             * correctly rounded in practice, and memory-bound anyway. */
            if (op == GR_ADD && r == GR_FLOAT32 && d->fp64) {
                acc->a_cl = "double";
                acc->a_size = 8;
            } else {
                acc->a_cl = ri->cl;
                acc->a_size = ri->size;
                acc->comp = op == GR_ADD;
            }
            acc->cvt = (t == r && !(op == GR_ADD && acc->a_size != ri->size))
                           ? CVT_NONE
                           : CVT_TO_A;
        } else {
            /* Integer add/mul in the unsigned twin: wraps like NumPy. */
            acc->a_cl = ri->cl_uns;
            acc->a_size = ri->size;
            acc->cvt = CVT_WRAP;
        }
        acc->a_min = "0";
        acc->a_max = "0";
        acc->x_size = acc->comp ? acc->a_size : 0;
        return 0;
    case GR_MIN:
    case GR_MAX:
    case GR_ARGMIN:
    case GR_ARGMAX:
        acc->a_cl = ti->cl;
        acc->a_size = ti->size;
        acc->a_min = ti->minv;
        acc->a_max = ti->maxv;
        acc->cvt = CVT_NONE;
        acc->x_size = (op == GR_ARGMIN || op == GR_ARGMAX) ? 8 : 0;
        return 0;
    case GR_ALL:
    case GR_ANY:
        acc->a_cl = ti->cl_mask;
        acc->a_size = ti->size;
        acc->a_min = "0";
        acc->a_max = "0";
        acc->cvt = CVT_MASK;
        return 0;
    default:
        snprintf(err, errlen, "unknown reduction operator %d", (int)op);
        return -1;
    }
}

/* ------------------------------------------------------------- variants */

/* The seed's ladder, plus the CPU and column kernels.  GR_LOAD_* and
 * GR_COMBINE_* are the numbers of kernels/reduce.cl and kernels/common.cl. */
enum { LOAD_COALESCED = 0, LOAD_CONTIG = 1, LOAD_STRIDE_GLOBAL = 2 };
enum {
    COMB_NAIVE = 0, COMB_SEQ = 1, COMB_UNROLL_COMPLETE = 2, COMB_UNROLL_LAST = 3,
    COMB_SUBGROUP = 4, COMB_WORKGROUP = 5
};

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

/* ----------------------------------------------------------- tuned table */

#define MAX_TUNED 256
static gr_tuned tuned[MAX_TUNED];
static int ntuned = 0;

int gr_size_class(size_t nbytes)
{
    int c = 0;
    while (c < 40 && ((size_t)1 << (c + 1)) <= nbytes) {
        ++c;
    }
    return c; /* floor(log2(bytes)) */
}

void gr_tuned_set(const gr_tuned *entries, int n)
{
    ntuned = n < MAX_TUNED ? n : MAX_TUNED;
    memcpy(tuned, entries, (size_t)ntuned * sizeof *tuned);
}

/* The measured winner for (device, op, input dtype, size class), if any. */
static const gr_tuned *tuned_lookup(const gr_device *d, gr_op op,
                                    gr_dtype t, size_t nbytes)
{
    const int cls = gr_size_class(nbytes);
    for (int i = 0; i < ntuned; ++i) {
        if (tuned[i].op == op && tuned[i].t == t && tuned[i].size_class == cls &&
            strcmp(tuned[i].device, d->name) == 0) {
            return &tuned[i];
        }
    }
    return NULL;
}

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
static size_t round_up(size_t a, size_t b) { return ceil_div(a, b) * b; }
static int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

static int pow2_at_most(size_t x)
{
    int p = 1;
    while ((size_t)p * 2 <= x) {
        p *= 2;
    }
    return p;
}

/* Lanes of a warp per segment of about len elements, per elements a lane:
 * a power of two from 2 to most (reductions' short rows, reduceat). */
static size_t warp_lanes(size_t len, size_t per, size_t most)
{
    return min_sz(most, max_sz(2, (size_t)pow2_at_most(max_sz(1, len / per))));
}

/* The device's local memory (32 KiB, OpenCL's minimum, where unknown). */
static size_t local_max(const gr_device *d)
{
    return d->local_mem ? (size_t)d->local_mem : 32768;
}

#define MAX_PARTS 65535 /* CUDA's grid y limit bounds the items kernel   */
#define ITEMS_ROW_MAX 16 /* rows this short: one work-item per row       */
/* GPUs, float32 rows summed (1 GiB, H100, wall, benchmarks/exp/
 * short_rows_plans.py, 2026-11-27): one work-item per row 0.54 ms at 16
 * elements, 1.07-1.08 at 32-128, 1.09 at 256; a work-group of 256 per
 * row 13.9 / 7.19 / 3.80 / 2.13 ms at 32 / 64 / 128 / 256 elements, of 64
 * 5.08 / 2.55 / 1.28 / 0.64 (0.35 at 512). */
#define ITEMS_ROW_MAX_GPU 128
/* NVIDIA, rows of WARP_ROW_MIN .. WARP_ROW_MAX - 1 elements read along
 * the row: lanes of a warp per row, about 8 elements a lane (H100, 1 GiB
 * float32 row sums, wall, benchmarks/exp/rows_warp.py, 2026-11-27): rows
 * of 16 0.38 ms (a work-item per row 0.54; CuPy 0.38), 32 0.41 (1.06),
 * 64 0.38 (1.06), 128 0.36 (1.08), 256 0.35 (a work-group of 64 0.64),
 * 511 0.36 (0.40); from 512 the groups' 0.35 */
#define WARP_ROW_MIN 16
#define WARP_ROW_MAX 512

static int knob_error(gr_plan *plan, const char *knob, const char *range)
{
    snprintf(plan->why, sizeof plan->why, "%s must be %s", knob, range);
    return -1;
}

/* The refusals of variants that read one element at a time (more: what
 * else they refuse) and of NVIDIA's shuffles in part of a warp. */
static int one_at_a_time(gr_plan *plan, const char *name, const char *more)
{
    snprintf(plan->why, sizeof plan->why,
             "variant '%s' reads one element at a time: vw and ilp must be "
             "1%s", name, more);
    return -1;
}

static int whole_warps(gr_plan *plan, const char *name)
{
    snprintf(plan->why, sizeof plan->why,
             "variant '%s' on NVIDIA needs whole warps: wg_size at least 32",
             name);
    return -1;
}

static int check_knobs(const gr_device *d, const gr_knobs *ov,
                       gr_plan *plan)
{
    char range[96];
    if (ov->wg_size != 0 &&
        (!is_pow2(ov->wg_size) || (size_t)ov->wg_size > d->max_wg)) {
        snprintf(range, sizeof range, "a power of two in [1, %zu]", d->max_wg);
        return knob_error(plan, "wg_size", range);
    }
    if (ov->groups < 0 || ov->groups > MAX_PARTS) {
        return knob_error(plan, "groups", "in [1, 65535]");
    }
    if (ov->items < 0) {
        return knob_error(plan, "items", "at least 1");
    }
    if (ov->ilp < 0 || ov->ilp > 8) {
        return knob_error(plan, "ilp", "in [1, 8]");
    }
    if (ov->vw != 0 && ov->vw != 1 && ov->vw != 2 && ov->vw != 4 &&
        ov->vw != 8 && ov->vw != 16) {
        return knob_error(plan, "vw", "one of 1, 2, 4, 8, 16");
    }
    return 0;
}

/* Second pass: one work-group per segment folds the segment's partials,
 * or, with many segments, one work-item per segment. */
static void plan_second_pass(const gr_device *d, size_t M, gr_plan *plan)
{
    plan->passes = plan->parts > 1 ? 2 : 1;
    if (!d->is_gpu) {
        plan->wg2 = 1;
    } else if (M >= 4096) {
        plan->wg2 = 0; /* items kernel */
    } else {
        plan->wg2 = (int)min_sz(256, max_sz(32, (size_t)pow2_at_most(
                                                   plan->parts * 2 - 1)));
    }
}

int gr_plan_reduce(const gr_device *d, gr_op op, const gr_accum *acc,
                   const gr_layout *lay, const gr_knobs *ov_in,
                   gr_plan *plan)
{
    const char *name = (ov_in->variant && ov_in->variant[0]) ? ov_in->variant
                                                             : "auto";
    const int tsize = gr_dtypes[acc->t].size;
    const size_t cu = d->compute_units;
    const variant_def *v;
    gr_knobs ov = *ov_in;
    memset(plan, 0, sizeof *plan);
    if (strcmp(name, "auto") != 0 && find_variant(name) == NULL) {
        snprintf(plan->why, sizeof plan->why,
                 "unknown variant '%s' (gpured.variants() lists them)", name);
        return -1;
    }
    if (check_knobs(d, &ov, plan) != 0) {
        return -1;
    }
    if (strcmp(name, "auto") == 0) {
        const gr_tuned *tu = NULL;
        if (lay->M == 1 && lay->elem_stride == 1) {
            tu = tuned_lookup(d, op, acc->t, lay->L * (size_t)tsize);
        }
        if (tu != NULL && find_variant(tu->variant) != NULL &&
            available(d, op, acc, find_variant(tu->variant), plan->why,
                      sizeof plan->why)) {
            /* gpured.tune() measured this on this device. */
            name = find_variant(tu->variant)->name;
            ov.wg_size = tu->wg_size;
            ov.ilp = tu->ilp;
            ov.vw = tu->vw;
            ov.groups = tu->groups;
            plan->tuned = 1;
        } else if (d->nvidia_ptx && lay->elem_stride == 1 && lay->M > 1 &&
                   lay->L >= WARP_ROW_MIN && lay->L < WARP_ROW_MAX) {
            name = "segment_per_warp";
        } else if (lay->elem_stride != 1 ||
                   (lay->L <= (d->is_gpu ? ITEMS_ROW_MAX_GPU : ITEMS_ROW_MAX) &&
                    lay->M > 1)) {
            name = "segment_per_item";
        } else if (d->is_gpu) {
            /* Coalesced vectors, warp combine where the warp is reachable. */
            name = d->nvidia_ptx ? "subgroup" : "vector";
        } else {
            name = "chunked";
        }
    }
    v = find_variant(name);
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

    if (plan->kind == GR_K_WARP) {
        /* lanes: a power of two up to 32, about 8 elements each (items=:
         * elements per lane).  argmin/argmax shuffle an index beside the
         * value: 2-4 lanes, 16 elements each at least (H100, float32,
         * benchmarks/exp/rows_warp.py SWEEP=1: rows of 64 in 4 lanes
         * 0.48 ms a GiB, 8 lanes 0.60; rows of 256 in 4 lanes 0.51, 32
         * lanes 0.67; torch 1.85 / 0.63) */
        const int arg = op == GR_ARGMIN || op == GR_ARGMAX;
        if ((ov.vw && ov.vw != 1) || (ov.ilp && ov.ilp != 1)) {
            return one_at_a_time(plan, v->name, "");
        }
        /* items: the power of two at or above length / items */
        plan->lanes = (int)(ov.items ? min_sz(32, (size_t)pow2_at_most(
                                                      2 * ceil_div(lay->L, (size_t)ov.items) - 1))
                                     : warp_lanes(lay->L, arg ? 16 : 8, arg ? 4 : 32));
        plan->wg = (int)min_sz(ov.wg_size ? (size_t)ov.wg_size : 256, d->max_wg);
        if (plan->wg < 32) {
            return whole_warps(plan, v->name);
        }
        plan->sg = 1; /* GR_SG_PTX: the shuffles */
        plan->vw = 1;
        plan->ilp = 1;
        const size_t parts = ov.groups ? min_sz((size_t)ov.groups, lay->L) : 1;
        plan->chunk = ceil_div(lay->L, parts);
        plan->parts = ceil_div(lay->L, plan->chunk);
        plan_second_pass(d, lay->M, plan);
        snprintf(plan->why, sizeof plan->why,
                 "short rows: %d lanes of a warp per segment (%zu work-items), "
                 "shuffle combine; each segment in %zu part(s) of %zu "
                 "elements", plan->lanes, lay->M * (size_t)plan->lanes,
                 plan->parts, plan->chunk);
        return 0;
    }

    if (plan->kind == GR_K_ITEMS) {
        /* CPUs: adjacent columns are read as one 64-byte vector per row by
         * one work-item (0.6 -> see BENCHMARKS.md); GPUs coalesce across
         * work-items instead. */
        const int cols = lay->seg_stride == 1 && lay->elem_stride > 1;
        const int vec_cols = cols && !d->is_gpu && lay->M >= 16;
        plan->wg = ov.wg_size ? ov.wg_size : (d->is_gpu ? 256 : vec_cols ? 4 : 64);
        plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
        plan->vw = vec_cols ? (int)min_sz(16, max_sz(1, (size_t)(64 / tsize))) : 1;
        if (cols && ov.vw) {
            plan->vw = ov.vw; /* vw applies to adjacent segments only */
        }
        plan->ilp = 1;
        size_t threads = round_up(ceil_div(lay->M, (size_t)plan->vw),
                                  (size_t)plan->wg);
        size_t target = d->is_gpu ? cu * 2048 : cu * (size_t)plan->wg * 4;
        size_t parts;
        if (ov.items) {
            parts = ceil_div(lay->L, (size_t)ov.items);
        } else if (ov.groups) {
            parts = (size_t)ov.groups;
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
                /* CPUs: each part's rows span at most 4 MiB.  A work-item
                 * reads 64 bytes a row, every row on its own page: over
                 * more, each page walk misses the TLB, where the groups
                 * of one part (adjacent columns, the same rows) share
                 * them.  2-core PoCL 3.1, float32 axis-0 sums of device
                 * arrays, numpy / gpured (benchmarks/exp/cpu_columns.py):
                 * 1024 x 4096 0.55 -> 1.06, 4096 x 4096 0.53 -> 0.98,
                 * 16384 x 1024 0.47 -> 1.02, 256 x 16384 0.75 -> 0.91. */
                const size_t span = lay->L * (size_t)lay->elem_stride *
                                    (size_t)tsize;
                parts = max_sz(parts, ceil_div(span, (size_t)4 << 20));
            }
        }
        parts = max_sz(1, min_sz(min_sz(parts, lay->L), MAX_PARTS));
        plan->chunk = ceil_div(lay->L, parts);
        plan->parts = ceil_div(lay->L, plan->chunk);
        plan_second_pass(d, lay->M, plan);
        snprintf(plan->why, sizeof plan->why,
                 "%s segments: one work-item per %d segment(s) (%zu "
                 "work-items), each segment in %zu part(s) of %zu elements",
                 lay->elem_stride != 1 ? "strided" : "short", plan->vw,
                 threads, plan->parts, plan->chunk);
        return 0;
    }

    /* Work-group kernels: contiguous segments. */
    if (v->load == LOAD_CONTIG) {
        plan->wg = 4;
        plan->vw = (int)min_sz(16, max_sz(1, (size_t)(64 / tsize)));
        plan->ilp = 2;
    } else {
        /* H100, 1 GiB: float32/float64 sum/min/max 2.95-2.99 TB/s with
         * 2 accumulators (99% of the 3.0 TB/s copy); an int32 sum into
         * int64 needs 4 (74% with 2, 99% with 4); all/any want 1 (98%
         * vs 68%). */
        plan->wg = 256;
        plan->vw = v->vector ? (int)min_sz(16, max_sz(1, (size_t)(16 / tsize)))
                             : 1;
        plan->ilp = v->one_per_item || v->load == LOAD_STRIDE_GLOBAL ? 1
                    : !v->vector ? 4
                    : (!gr_dtypes[acc->r].is_float && acc->a_size > tsize) ? 4
                                                                            : 2;
        if (v->vector && tsize == 8 && d->is_gpu && acc->var != 3) {
            /* H100, 1 GiB of 8-byte values by events (benchmarks/exp/
             * vw8.py, 2026-11-26): double4/long4 loads with 4 accumulators
             * against vw 2, ilp 2: max float64 0.373 -> 0.356 ms, var
             * 0.365 -> 0.356, sum int64 0.361 -> 0.356; argmin/argmax
             * keep 2 accumulators (0.3585 against 0.3620 with 4).
             * nanmean keeps vw 2, ilp 2: 0.357 ms against 0.415 in loops
             * of calls (benchmarks/exp/nanmean8.py) */
            plan->vw = 4;
            plan->ilp = (op == GR_ARGMIN || op == GR_ARGMAX) ? 2 : 4;
        }
        if (v->vector && (op == GR_ALL || op == GR_ANY)) {
            plan->ilp = 1;
        }
        if (d->is_gpu && lay->M > 1 && !v->one_per_item &&
            v->load != LOAD_STRIDE_GLOBAL) {
            /* Short rows, one group each: groups no wider than a couple
             * of loads a work-item, 64 at least (figures at
             * ITEMS_ROW_MAX_GPU: rows of 256-512 at 64 0.64 / 0.35 ms,
             * at 256 2.13 / 1.05) */
            const size_t per = (size_t)plan->vw * (size_t)plan->ilp * 2;
            plan->wg = (int)max_sz(64, (size_t)pow2_at_most(
                                           min_sz(lay->L / per, 256)));
        }
        if (v->vector && tsize == 8 &&
            (acc->cvt == CVT_COUNT || acc->cvt == CVT_VALID)) {
            /* H100, 1 GiB float64 count_nonzero: double2 loads ran at
             * 0.78 of sum in a loop of calls (double4: 0.55; events at
             * sum's speed either way), scalar loads at sum's speed
             * (benchmarks/exp/count_gap2.py) */
            plan->vw = 1;
        }
    }
    if (ov.wg_size) {
        plan->wg = ov.wg_size;
    }
    if (ov.vw) {
        plan->vw = ov.vw;
    }
    if (ov.ilp) {
        plan->ilp = ov.ilp;
    }
    plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
    if (v->one_per_item || v->load == LOAD_STRIDE_GLOBAL) {
        if ((ov.vw && ov.vw != 1) || (ov.ilp && ov.ilp != 1) ||
            (v->one_per_item && ov.items > 1)) {
            return one_at_a_time(plan, v->name,
                                 v->one_per_item
                                     ? ", items 1 (use stride_local for more)"
                                     : "");
        }
        plan->vw = 1;
        plan->ilp = 1;
    }
    if (plan->sg == 1 && plan->wg < 32) {
        return whole_warps(plan, v->name);
    }

    const size_t tile = (size_t)plan->wg * plan->vw;
    const size_t full = tile * plan->ilp;
    /* CPUs: a few groups per core; 16 per core over a long segment (H100
     * host, PoCL 5, 16 cores, 1 GiB float32 sum, benchmarks/exp/
     * cpu_groups.py: 64 groups 14.6-15.7 ms, 256 groups 13.1-13.7; the
     * cores' shares even out) */
    size_t target = d->is_gpu ? cu * max_sz(1, 2048 / (size_t)plan->wg)
                    : lay->L * (size_t)tsize >= ((size_t)64 << 20) ? cu * 16
                                                                  : cu * 4;
    size_t parts, max_parts = MAX_PARTS;
    if (v->one_per_item) {
        /* The ladder's start: one element per work-item, as many groups as
         * that takes; pass 2 folds their partials. */
        parts = ceil_div(lay->L, (size_t)plan->wg);
        max_parts = (size_t)1 << 40;
    } else if (ov.items) {
        parts = ceil_div(lay->L, (size_t)ov.items * plan->wg);
    } else if (ov.groups) {
        parts = (size_t)ov.groups;
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
    plan_second_pass(d, lay->M, plan);
    if (plan->atomic) {
        plan->passes = 1; /* groups merge into the result with atomics */
    }
    snprintf(plan->why, sizeof plan->why,
             "%s%s: %d work-items per group, %s loads of %d element(s), %d "
             "accumulator(s), %s combine; %zu group(s) per segment%s",
             plan->tuned ? "tuned by gpured.tune(); " : "",
             d->is_gpu ? "GPU" : "CPU", plan->wg,
             v->load == LOAD_CONTIG          ? "contiguous per-work-item"
             : v->load == LOAD_STRIDE_GLOBAL ? "global-size-strided"
                                             : "coalesced",
             plan->vw, plan->ilp,
             (const char *[]){"interleaved (naive)", "sequential",
                              "unrolled sequential", "unrolled, last warp by "
                              "sub-group barrier",
                              "sub-group shuffle", "work_group_reduce"}
                 [plan->combine],
             plan->parts,
             plan->atomic ? ", merged into the result by compare-and-swap"
             : plan->passes > 1 ? ", then one pass over the partials"
                                : " (single pass)");
    return 0;
}

/* ================================================================= scans */

static int accum_scan(const gr_device *d, gr_op op, gr_dtype t, gr_dtype r,
                      gr_accum *acc, char *err, size_t errlen)
{
    if (op != GR_ADD && op != GR_MUL && op != GR_MIN && op != GR_MAX) {
        snprintf(err, errlen, "scans are add, multiply, minimum, maximum");
        return -1;
    }
    if ((op == GR_MIN || op == GR_MAX) && t != r) {
        snprintf(err, errlen, "cummin/cummax keep the input dtype");
        return -1;
    }
    if (accum_reduce(d, op, t, r, acc, err, errlen) != 0) {
        return -1;
    }
    /* float32 products: in float64 too where the device has it (the sums
     * already are, through gr_accum_for). */
    if (op == GR_MUL && r == GR_FLOAT32 && d->fp64) {
        acc->a_cl = "double";
        acc->a_size = 8;
        acc->cvt = 1; /* GR_CVT_TO_A */
        acc->comp = 0;
        acc->x_size = 0;
    }
    return 0;
}

/* Results of rsize bytes, wider than the elements, staged through local
 * memory as well (kernels/scan.cl GR_STRIPE_WIDE): their tile of wg x
 * items, padded one vector in 8, beside the group scan's arrays. */
static int scan_wide_fits(const gr_device *d, size_t wg, size_t items,
                          size_t rsize)
{
    return wg * items * rsize * 9 / 8 + 8192 <= local_max(d);
}

enum { LOC_NONE = 0, LOC_NAIVE = 1, LOC_BLELLOCH = 2, LOC_WORKGROUP = 3,
       LOC_SUBGROUP = 4 };

static const char *const scan_variants[] = {
    "auto", "naive", "blelloch", "workgroup", "subgroup", "reduce_then_scan",
    "decoupled_lookback", "row_per_item", NULL};

const char *const *gr_scan_variants(void) { return scan_variants; }

#define ROW_ITEMS_GPU 32   /* rows this short: one work-item per row (GPU) */
#define MAX_REG_ITEMS 64   /* items of a tile kept in registers          */
#define ROW_ITEMS_CPU 256  /* ... (CPU: work-items are cheap threads)      */
#define CPU_TILE_BYTES 32768 /* one look-back tile per work-item: in L1    */
#define DEFAULT_SPIN 4096


/* Collectives/sub-group functions exist for add/min/max of 32/64-bit. */
static int native_ok(gr_op op, const gr_accum *acc)
{
    return (op == GR_ADD || op == GR_MIN || op == GR_MAX) &&
           (acc->a_size == 4 || acc->a_size == 8);
}

static int unavailable(const gr_device *d, gr_op op, const gr_accum *acc,
                       const char *name, char *why, size_t n)
{
    if (strcmp(name, "workgroup") == 0) {
        if (!d->wg_collectives) {
            snprintf(why, n, "variant 'workgroup' needs OpenCL 2.0 work-group "
                     "collective functions (work_group_scan_exclusive_*); "
                     "device '%s' has none", d->name);
            return 1;
        }
        if (!native_ok(op, acc)) {
            snprintf(why, n, "variant 'workgroup' covers add/min/max on 32- "
                     "and 64-bit accumulators (work_group_scan_*), not %s on "
                     "%d-byte values", gr_op_names[op], acc->a_size);
            return 1;
        }
    }
    if (strcmp(name, "subgroup") == 0) {
        if (!d->nvidia_ptx && !d->subgroups) {
            snprintf(why, n, "variant 'subgroup' needs sub-groups (NVIDIA PTX "
                     "shfl.sync or cl_khr_subgroups); device '%s' has neither",
                     d->name);
            return 1;
        }
        if (!d->nvidia_ptx && !native_ok(op, acc)) {
            snprintf(why, n, "variant 'subgroup' through cl_khr_subgroups uses "
                     "sub_group_scan_exclusive_add/min/max on 32- and 64-bit "
                     "values (not %s on %d-byte values)", gr_op_names[op],
                     acc->a_size);
            return 1;
        }
    }
    if (strcmp(name, "decoupled_lookback") == 0 && !d->atomics64) {
        snprintf(why, n, "variant 'decoupled_lookback' publishes tile status "
                 "with 64-bit atomics (cl_khr_int64_base_atomics); device "
                 "'%s' lacks them", d->name);
        return 1;
    }
    return 0;
}

int gr_scan_variant_available(const gr_device *d, gr_op op,
                              const gr_accum *acc, const char *name,
                              char *why, size_t n)
{
    int known = 0;
    for (int i = 0; scan_variants[i] != NULL; ++i) {
        known |= strcmp(scan_variants[i], name) == 0;
    }
    if (!known) {
        snprintf(why, n, "unknown variant '%s'", name);
        return 0;
    }
    return !unavailable(d, op, acc, name, why, n);
}

/* The work-group scan inside tiles when the caller did not pick one. */
static int best_local(const gr_device *d, gr_op op, const gr_accum *acc,
                      int *sg)
{
    *sg = 0;
    if (d->nvidia_ptx) {
        *sg = 1;
        return LOC_SUBGROUP;
    }
    if (d->is_gpu && d->wg_collectives && native_ok(op, acc)) {
        return LOC_WORKGROUP;
    }
    return LOC_BLELLOCH;
}

static int pow2_at_least(size_t x)
{
    int p = 1;
    while ((size_t)p < x && p < (1 << 30)) {
        p *= 2;
    }
    return p;
}

static int plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                     const gr_layout *lay, int out_contig,
                     const gr_knobs *ov, gr_scan_plan *plan);

int gr_plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                 const gr_layout *lay, int out_contig,
                 const gr_knobs *ov, gr_scan_plan *plan)
{
    const int rc = plan_scan(d, op, acc, lay, out_contig, ov, plan);
    if (rc == 0) {
        const size_t rsize = (size_t)gr_dtypes[acc->r].size;
        plan->wide = (size_t)gr_dtypes[acc->t].size < rsize && !plan->cpu_tile &&
                     scan_wide_fits(d, (size_t)plan->wg, (size_t)plan->items, rsize);
    }
    return rc;
}

static int plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                     const gr_layout *lay, int out_contig,
                     const gr_knobs *ov, gr_scan_plan *plan)
{
    const char *name = (ov->variant && ov->variant[0]) ? ov->variant : "auto";
    const int tsize = gr_dtypes[acc->t].size;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    const int rows_contig = lay->elem_stride == 1 && out_contig;
    int known = 0;

    memset(plan, 0, sizeof *plan);
    for (int i = 0; scan_variants[i] != NULL; ++i) {
        if (strcmp(scan_variants[i], name) == 0) {
            plan->variant = scan_variants[i];
            known = 1;
        }
    }
    if (!known) {
        snprintf(plan->why, sizeof plan->why,
                 "unknown variant '%s' (gpured.variants('cumsum') lists them)",
                 name);
        return -1;
    }
    if (ov->wg_size != 0 &&
        (!is_pow2(ov->wg_size) || (size_t)ov->wg_size > d->max_wg)) {
        snprintf(plan->why, sizeof plan->why,
                 "wg_size must be a power of two in [1, %zu]", d->max_wg);
        return -1;
    }
    if (ov->items != 0 && (ov->items > 65536 || !is_pow2((int)ov->items))) {
        snprintf(plan->why, sizeof plan->why,
                 "items must be a power of two in [1, 65536]");
        return -1;
    }
    if (ov->groups < 0 || ov->groups > 65535) {
        snprintf(plan->why, sizeof plan->why, "groups must be in [1, 65535]");
        return -1;
    }
    if (ov->ilp < 0 || ov->ilp > 16) {
        snprintf(plan->why, sizeof plan->why, "ilp must be in [1, 16]");
        return -1;
    }
    if (strcmp(name, "auto") == 0) {
        const size_t short_row = d->is_gpu ? ROW_ITEMS_GPU : ROW_ITEMS_CPU;
        if (!rows_contig || (lay->L <= short_row && lay->M > 1)) {
            name = "row_per_item";
        } else if (d->atomics64 && (d->is_gpu || ov->wg_size <= 1)) {
            name = "decoupled_lookback";
        } else {
            name = "reduce_then_scan";
        }
        plan->variant = name;
    }
    if (unavailable(d, op, acc, name, plan->why, sizeof plan->why)) {
        return -2;
    }
    if (!d->is_gpu && ov->wg_size > 1 &&
        strcmp(name, "decoupled_lookback") == 0) {
        /* PoCL 3.1 never finishes a look-back of tiles of several
         * work-items (2 tiles of 2 x 1 elements: no answer in minutes);
         * CPUs run one work-item per tile */
        snprintf(plan->why, sizeof plan->why,
                 "variant 'decoupled_lookback' on CPU devices runs one "
                 "work-item per tile: wg_size must be 1 (reduce_then_scan "
                 "takes larger work-groups)");
        return -1;
    }
    plan->spin = ov->spins >= 0 ? ov->spins : DEFAULT_SPIN;
    plan->ilp = 1;

    if (strcmp(name, "row_per_item") == 0) {
        plan->kind = GR_SK_ROW_ITEMS;
        plan->wg = ov->wg_size ? ov->wg_size : (d->is_gpu ? 128 : 16);
        plan->items = 1;
        /* ilp: elements a work-item loads before folding them (loads in
         * flight).  H100, 4096 x 65536 float32 down the columns: 1.99 ms
         * at 1, 0.86 at 8, 0.80 at 16, 0.81 at 32 (torch 1.92).  PoCL
         * (2 cores): columns 123 ms at 1 against 135 at 16, rows of 16
         * 8.3 against 6.3 ms (2026-11-27). */
        plan->ilp = ov->ilp ? ov->ilp : (d->is_gpu || rows_contig ? 16 : 1);
        plan->parts = 1;
        plan->chunk = lay->L;
        snprintf(plan->why, sizeof plan->why,
                 "%s rows: one work-item per row (%zu rows), sequential "
                 "along the row, %d element(s) loaded at a time (ilp), "
                 "consecutive work-items on consecutive rows",
                 rows_contig ? "short" : "strided", lay->M, plan->ilp);
        return 0;
    }
    if (!rows_contig) {
        /* Tile kernels read and write whole rows: the caller copies. */
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' needs contiguous rows", name);
        return -1;
    }

    /* Tile-based variants: local method, work-group size, items. */
    const int ladder = strcmp(name, "naive") == 0 ||
                       strcmp(name, "blelloch") == 0 ||
                       strcmp(name, "workgroup") == 0 ||
                       strcmp(name, "subgroup") == 0;
    const int vec_items = (int)max_sz(1, 16 / (size_t)tsize);
    int wg = 256, items = vec_items;
    if (strcmp(name, "naive") == 0) {
        plan->local = LOC_NAIVE;
        wg = 64;
        items = 1;
    } else if (strcmp(name, "blelloch") == 0) {
        plan->local = LOC_BLELLOCH;
        items = 2; /* the seed's two elements per work-item */
    } else if (strcmp(name, "workgroup") == 0) {
        plan->local = LOC_WORKGROUP;
        items = 1;
    } else if (strcmp(name, "subgroup") == 0) {
        plan->local = LOC_SUBGROUP;
        plan->sg = d->nvidia_ptx ? 1 : 2;
    } else {
        plan->local = best_local(d, op, acc, &plan->sg);
        /* H100 look-back tiles: 64 bytes per work-item; 128 where
         * elements and results have the same size (warp-striped loads and
         * stores through local memory, kernels/scan.cl, read again there
         * after the look-back): 256 x 32 float32, 1 GiB cumsum 1.027 ms
         * vs 1.186 ms at 256 x 16 (2026-11-23); 0.911 ms with the re-read
         * (1.101 without, 2026-11-27). */
        items = (int)max_sz(4, min_sz(16, 64 / (size_t)tsize));
        if (tsize == 4 && gr_dtypes[acc->r].size == 4 &&
            (size_t)wg * 32 * 4 + 8192 <= local_max(d)) {
            /* the tile's exchange buffer in local memory (32 KiB at
             * 256 x 32, padded): the H100's 48 KiB takes it, a 32 KiB
             * device keeps 16 (Oclgrind: 38204 bytes refused) */
            items = 32;
        }
        if (tsize == 8 && gr_dtypes[acc->r].size == 8 &&
            (size_t)128 * 32 * 8 + 8192 <= local_max(d)) {
            /* 8-byte elements and results: 128 x 32 (32 KiB staged, as
             * 256 x 32 four-byte ones).  H100, 1 GiB, kernel events, the
             * run re-read from local memory after the look-back: float64
             * cumsum 1.242 ms at 256 x 8, 1.047 at 256 x 16, 0.891 at
             * 128 x 32; int64 1.030 / 1.001 / 0.933
             * (benchmarks/exp/scan_reread.py, 2026-11-27); nancumsum
             * float64 1.071 ms at 128 x 16, 1.007 at 128 x 32 (wall) */
            wg = 128;
            items = 32;
        } else if (tsize == 4 && gr_dtypes[acc->r].size == 8 &&
                   scan_wide_fits(d, 128, 32, 8)) {
            /* 4-byte elements into 8-byte results (int32 -> int64 sums),
             * striped through local memory since 2026-11-27: H100, 1 GiB
             * int32 cumsum (wall) 2.50 ms before, 1.60 / 1.42 / 1.28 at
             * 256 x 8 / 256 x 16 / 128 x 32 (torch 3.02) */
            wg = 128;
            items = 32;
        } else if (tsize == 8 && acc->nan) {
            /* H100, 1 GiB float64 nancumsum: 256 x 8 ran at 0.80 of
             * cumsum's time (1.466 vs 1.173 ms), 128 x 16 at 0.95
             * (1.230; cumsum itself 1.170 there): fewer, longer
             * work-items hide the NaN selects
             * (benchmarks/exp/nancumsum_knobs.py) */
            wg = 128;
            items = 16;
        }
    }
    if (!d->is_gpu && !ladder) {
        /* CPUs: a work-group is one work-item with a long contiguous run. */
        wg = 1;
        items = strcmp(name, "decoupled_lookback") == 0
                    ? (int)max_sz(16, (size_t)CPU_TILE_BYTES / (size_t)tsize)
                    : vec_items;
        plan->local = LOC_NONE;
        plan->sg = 0;
    }
    if (ov->wg_size) {
        wg = ov->wg_size;
        if (!d->is_gpu && !ladder && wg > 1) {
            items = vec_items; /* CPU tiles of several work-items: the
                                * elements live in registers */
        }
    }
    if (ov->items) {
        items = (int)ov->items;
    }
    wg = (int)min_sz((size_t)wg, d->max_wg);
    if (items > MAX_REG_ITEMS &&
        !(strcmp(name, "decoupled_lookback") == 0 && !d->is_gpu && wg == 1)) {
        /* every tile kernel but the CPU's one-work-item look-back keeps a
         * work-item's elements in private arrays, unrolled: thousands of
         * them take compilers minutes and spill */
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' keeps a work-item's elements in registers: "
                 "items must be at most %d%s", name, MAX_REG_ITEMS,
                 !d->is_gpu && strcmp(name, "decoupled_lookback") == 0
                     ? " (with wg_size 1 on a CPU, up to 65536)"
                     : "");
        return -1;
    }
    if (wg == 1) {
        plan->local = LOC_NONE; /* nothing to combine across work-items */
        plan->sg = 0;
    } else if (plan->local == LOC_NONE) {
        plan->local = best_local(d, op, acc, &plan->sg);
    }
    if (plan->sg == 1 && wg < 32) {
        if (ov->wg_size) {
            snprintf(plan->why, sizeof plan->why,
                     "variant '%s' on NVIDIA scans whole warps: wg_size at "
                     "least 32", name);
            return -1;
        }
        wg = 32;
    }
    plan->wg = wg;
    plan->items = items;
    const size_t tile = (size_t)wg * (size_t)items;

    if (strcmp(name, "decoupled_lookback") == 0) {
        plan->kind = GR_SK_LOOKBACK;
        if (!d->is_gpu && wg == 1) {
            plan->cpu_tile = 1;
            plan->ilp = ov->ilp ? ov->ilp : 4;
        } else if (!ov->wg_size && d->is_gpu && lay->L < tile) {
            /* Shorter rows: a smaller tile per row. */
            size_t w = (size_t)pow2_at_least(ceil_div(lay->L, (size_t)items));
            plan->wg = (int)max_sz(plan->sg == 1 ? 32 : 1, min_sz(w, (size_t)wg));
        }
        const size_t t2 = (size_t)plan->wg * (size_t)plan->items;
        plan->tiles = ceil_div(lay->L, t2);
        plan->parts = plan->tiles;
        plan->chunk = t2;
        if (lay->M * plan->tiles >= ((size_t)1 << 32)) {
            snprintf(plan->why, sizeof plan->why,
                     "decoupled_lookback numbers tiles with 32 bits: %zu "
                     "tiles is too many (use a larger items)",
                     lay->M * plan->tiles);
            return -1;
        }
        snprintf(plan->why, sizeof plan->why,
                 "single pass, decoupled look-back: %zu tile(s) of %d x %d "
                 "element(s) per row, %s; %s combine",
                 plan->tiles, plan->wg, plan->items,
                 plan->cpu_tile ? "one contiguous run per tile, reduced then "
                                  "scanned from cache in sub-blocks"
                                : "elements in registers, staged in local "
                                  "memory where striped",
                 (const char *[]){"no", "naive", "Blelloch", "work_group_scan",
                                  "sub-group scan"}[plan->local]);
        return 0;
    }

    /* Chunks of rows: the ladder variants run one work-group per row (the
     * seed's loop) unless the rows are too few to fill the device, then
     * reduce_then_scan splits each row in chunks carrying prefixes. */
    size_t parts;
    const size_t target = d->is_gpu ? cu * max_sz(1, 2048 / (size_t)wg) : cu * 4;
    if (ov->groups) {
        parts = (size_t)ov->groups;
    } else if (ladder && lay->M >= target) {
        parts = 1;
    } else {
        parts = ceil_div(target, lay->M);
        parts = min_sz(parts, max_sz(1, lay->L / (tile * 4)));
    }
    parts = max_sz(1, min_sz(parts, 65535));
    plan->chunk = round_up(ceil_div(lay->L, parts), tile);
    plan->parts = ceil_div(lay->L, plan->chunk);
    plan->kind = plan->parts > 1 || strcmp(name, "reduce_then_scan") == 0
                     ? GR_SK_RTS
                     : GR_SK_CHUNKS;
    snprintf(plan->why, sizeof plan->why,
             "%s: %d work-items x %d element(s) per tile, %s combine; %zu "
             "chunk(s) of %zu per row%s",
             plan->kind == GR_SK_RTS ? "reduce_then_scan (reduce chunks, scan "
                                       "their states, scan chunks)"
                                     : "one work-group per row",
             plan->wg, plan->items,
             (const char *[]){"no", "naive", "Blelloch", "work_group_scan",
                              "sub-group scan"}[plan->local],
             plan->parts, plan->chunk,
             plan->kind == GR_SK_RTS ? ", 3 passes" : ", 1 pass");
    return 0;
}

/* var/std (var 1, 2): the accumulator holds two plain sums, of the
 * shifted values and of their squares (kernels/common.cl GR_VAR), with
 * no TwoSum term.  The shift is the kernels' own (var_self) unless the
 * caller says otherwise. */
void gr_accum_var(gr_accum *acc, int var)
{
    acc->var = var;
    acc->comp = 0;
    acc->x_size = acc->a_size;
    acc->var_self = 1;
}

/* ptp: max's accumulator, whose auxiliary state (of the same type) is
 * the minimum (kernels/common.cl GR_PTP). */
void gr_accum_ptp(gr_accum *acc)
{
    acc->ptp = 1;
    acc->x_size = acc->a_size;
}

/* ---------------------------------------------------- accumulators
 * One rule for every family: what a (op, input, result) folds in.  The
 * scan's float32 products also run in double; reduce-by-key keeps no
 * compensation term (its atomic kernels fold into result-sized words; the
 * sorted-segment kernels widen float32 sums to double as reductions do). */
int gr_accum_for(const gr_device *d, gr_family fam, gr_op op, gr_dtype t,
                 gr_dtype r, gr_accum *acc, char *err, size_t errlen)
{
    switch (fam) {
    case GR_FAM_SCAN:
        return accum_scan(d, op, t, r, acc, err, errlen);
    case GR_FAM_BYKEY:
        if (accum_reduce(d, op, t, r, acc, err, errlen) != 0) {
            return -1;
        }
        if (acc->comp) {
            /* no TwoSum in by-key kernels: plain float in the result type */
            acc->comp = 0;
            acc->x_size = 0;
        }
        return 0;
    default:
        return accum_reduce(d, op, t, r, acc, err, errlen);
    }
}

/* ========================================================= reduce-by-key */

const char *const gr_bk_variant_names[] = {
    "atomic", "warp_aggregated", "local_hash", "sorted_segments",
    "private_bins", "lookback", "fixed_point", NULL};
const char *const gr_bk_func_names[] = {"reduce_by_key", "sum_by_key",
                                            "scan_by_key"};

int gr_bk_types_init(const gr_device *d, gr_bk_types *ty, char *err,
                     size_t n)
{
    const gr_dtype_info *vi = &gr_dtypes[ty->v];
    if (!(ty->k == GR_INT32 || ty->k == GR_UINT32 || ty->k == GR_INT64 ||
          ty->k == GR_UINT64)) {
        snprintf(err, n, "keys must be int32, int64, uint32 or uint64 (got %s)",
                 gr_dtypes[ty->k].name);
        return -1;
    }
    if (!ty->count && !(ty->v >= GR_INT32 && ty->v <= GR_FLOAT64)) {
        snprintf(err, n, "values must be int32, int64, uint32, uint64, "
                 "float32 or float64 (got %s)", vi->name);
        return -1;
    }
    if (!ty->count && ty->v == GR_FLOAT64 && !d->fp64) {
        snprintf(err, n, "dtype float64 is not supported by device '%s' "
                 "(no fp64)", d->name);
        return -1;
    }
    if (ty->count) {
        ty->r = GR_INT64;
    } else if (ty->op == GR_ADD || ty->op == GR_MUL) {
        ty->r = vi->is_float ? ty->v
                : vi->is_signed ? GR_INT64 : GR_UINT64; /* NumPy's add.reduce */
    } else {
        ty->r = ty->v;
    }
    return 0;
}

/* Bytes of a key and its value (reduce_by_key's lookback stages both). */
static size_t bk_pair_size(const gr_bk_types *ty)
{
    return (size_t)gr_dtypes[ty->k].size +
           (ty->count ? 0 : (size_t)gr_dtypes[ty->v].size);
}

/* Local memory of gr_bk_lb_tiles (bykey.cl): keys and values of wg x it
 * elements with a padding word every 32, the scan's flag, count and
 * accumulator per work-item (4 + 8 + 8 bytes), two words. */
static size_t bk_lb_local(size_t wg, size_t it, size_t esz)
{
    return (wg * it + wg * it / 32) * esz + wg * 20 + 16;
}

/* A lookback tile of wg x it pairs of esz bytes stages at most 32 KiB and
 * fits the device's local memory. */
static int bk_lb_fits(const gr_device *d, size_t wg, size_t it, size_t esz)
{
    return wg * it * esz <= 32768 && bk_lb_local(wg, it, esz) <= local_max(d);
}

/* fixed_point: sum_by_key of float values into 128-bit integer
 * accumulators by 64-bit integer atomics (kernels/bykey.cl, "fixed-point
 * sums"): 16 GR_FX_WMAX + 4 bytes a key; float64 rounds in fp64, float32
 * in float. */
static int bk_fixed_ok(const gr_device *d, gr_bk_func f, const gr_bk_types *ty,
                       size_t n, size_t nk, char *why, size_t len)
{
    const char *no = f != GR_BK_DENSE ? "runs sum_by_key only"
                     : n > ((size_t)1 << 31)
                         ? "sums at most 2^31 values (32 bits of headroom)"
                     : ty->count || ty->op != GR_ADD ||
                             !gr_dtypes[ty->v].is_float
                         ? "sums float32 or float64 values only"
                     : !d->atomics64 ? "needs cl_khr_int64_base_atomics"
                     : ty->v == GR_FLOAT64 && !d->fp64 ? "needs fp64"
                     : d->max_alloc &&
                             nk > (d->max_alloc - 16) / (16 * GR_FX_WMAX + 4)
                         ? "keeps 68 bytes a key: too many keys"
                         : NULL;
    if (no != NULL && why != NULL) {
        snprintf(why, len, "variant 'fixed_point' %s (device '%.64s', %s %s)",
                 no, d->name, ty->count ? "count" : gr_dtypes[ty->v].name,
                 gr_bk_func_names[f]);
    }
    return no == NULL;
}

/* Integer values (and counts): atomics add, min and max them exactly, so
 * every sum_by_key variant gives the same bits in any order and
 * deterministic=True needs no sort. */
int gr_bk_exact(const gr_bk_types *ty)
{
    return ty->count || !gr_dtypes[ty->v].is_float;
}

int gr_bk_plan_for(const gr_device *d, int sm, gr_bk_func f, const gr_bk_types *ty,
               const gr_bk_facts *facts, const gr_bk_overrides *ov,
               gr_bk_plan *p)
{
    const int a_size = ty->count ? 8 : gr_dtypes[ty->r].size;
    const char *want = ov->variant && strcmp(ov->variant, "auto") != 0
                           ? ov->variant : NULL;
    const int exact = f == GR_BK_DENSE && gr_bk_exact(ty);
    const int det = ov->deterministic && !exact;
    int v = -1;
    memset(p, 0, sizeof *p);
    p->ptx = d->nvidia_ptx;
    p->match = d->nvidia_ptx && sm >= 7;
    if (want != NULL) {
        for (int i = 0; gr_bk_variant_names[i] != NULL; ++i) {
            if (strcmp(want, gr_bk_variant_names[i]) == 0) {
                v = i;
            }
        }
        if (v < 0) {
            snprintf(p->why, sizeof p->why, "unknown variant '%s' (known: "
                     "auto, atomic, warp_aggregated, local_hash, "
                     "sorted_segments, private_bins, lookback, "
                     "fixed_point)", want);
            return -1;
        }
        if (v == GR_BKV_FIXED &&
            !bk_fixed_ok(d, f, ty, facts->n, facts->num_keys, p->why,
                         sizeof p->why)) {
            return -2;
        }
        if (v == GR_BKV_LOOKBACK && f == GR_BK_SCAN) {
            snprintf(p->why, sizeof p->why, "variant 'lookback' runs "
                     "reduce_by_key and sum_by_key only (asked for it in "
                     "%s)", gr_bk_func_names[f]);
            return -2;
        }
        if (f != GR_BK_DENSE && v != GR_BKV_SEGMENTS &&
            v != GR_BKV_LOOKBACK) {
            snprintf(p->why, sizeof p->why, "%s keeps every run of keys in "
                     "input order: only variant 'sorted_segments'%s (asked "
                     "for '%s')", gr_bk_func_names[f],
                     f == GR_BK_REDUCE ? " or 'lookback'" : "", want);
            return -2;
        }
        if (v == GR_BKV_LOOKBACK && !d->atomics64) {
            snprintf(p->why, sizeof p->why, "variant 'lookback' needs "
                     "cl_khr_int64_base_atomics (status words); device '%s' "
                     "has none", d->name);
            return -2;
        }
        if (v != GR_BKV_SEGMENTS && v != GR_BKV_PRIV &&
            v != GR_BKV_LOOKBACK && a_size == 8 &&
            !d->atomics64) {
            snprintf(p->why, sizeof p->why, "variant '%s' on 64-bit results "
                     "needs cl_khr_int64_base_atomics; device '%s' has none",
                     want, d->name);
            return -2;
        }
        if (det && v != GR_BKV_SEGMENTS && v != GR_BKV_LOOKBACK &&
            v != GR_BKV_FIXED) {
            snprintf(p->why, sizeof p->why, "deterministic=True runs "
                     "'sorted_segments', 'lookback' or 'fixed_point' (no "
                     "float value through an atomic); '%s' is not "
                     "reproducible", want);
            return -2;
        }
        snprintf(p->why, sizeof p->why, "variant '%s' requested", want);
    } else if (f == GR_BK_REDUCE && d->is_gpu && d->atomics64) {
        /* H100, 2^28 int32 keys in runs of 64, f32: lookback 1.95 ms,
         * sorted_segments 3.43 ms.  Reproducible: atomics carry tickets
         * and head counts, never values. */
        v = GR_BKV_LOOKBACK;
        snprintf(p->why, sizeof p->why, "reduce_by_key on a GPU: one pass, "
                 "decoupled look-back over the tiles' head counts");
    } else if (f != GR_BK_DENSE) {
        v = GR_BKV_SEGMENTS;
        snprintf(p->why, sizeof p->why, "%s: head flags + segmented scan",
                 gr_bk_func_names[f]);
    } else if (det && d->is_gpu && facts->descents != 0 &&
               bk_fixed_ok(d, f, ty, facts->n, facts->num_keys, NULL, 0)) {
        /* H100, 10 Mi float64 values into 2^20 random keys: see
         * BENCHMARKS.md (the radix sort, then lookback: 0.90 ms) */
        v = GR_BKV_FIXED;
        snprintf(p->why, sizeof p->why, "deterministic float sums on a GPU, "
                 "keys not sorted: fixed-point sums by integer atomics, "
                 "rounded once (the same bits in any order)");
    } else if (det && d->is_gpu && d->atomics64) {
        /* H100, 10 Mi f64 values, 2^20 sorted keys: see BENCHMARKS.md */
        v = GR_BKV_LOOKBACK;
        snprintf(p->why, sizeof p->why, "deterministic on a GPU: the runs "
                 "of sorted keys in one pass (decoupled look-back, no value "
                 "through an atomic), each run then to its bin");
    } else if (det) {
        v = GR_BKV_SEGMENTS;
        snprintf(p->why, sizeof p->why, "deterministic: sorted segments, "
                 "no atomics");
    } else {
        /* Auto for sum_by_key.  Mean run length (n / heads) says how much
         * aggregating equal neighbours saves; descents say whether runs
         * are complete (sorted keys). */
        const double n = facts->n ? (double)facts->n : 1.0;
        const double run = facts->heads ? n / (double)facts->heads : 1.0;
        const int sorted = facts->sorted >= 0 ? facts->sorted
                                              : facts->descents == 0;
        const size_t parts = d->compute_units ? d->compute_units : 1;
        const double priv_bytes = (double)parts * (double)facts->num_keys * 8;
        if (!d->is_gpu && priv_bytes <= 512.0 * 1024 * 1024 &&
            (double)facts->num_keys <= 4.0 * n) {
            v = GR_BKV_PRIV;
            snprintf(p->why, sizeof p->why, "CPU: one private copy of the "
                     "%zu bins per core (%.0f MiB), no atomics",
                     facts->num_keys, priv_bytes / 1048576.0);
        } else if (!d->is_gpu || (a_size == 8 && !d->atomics64)) {
            v = GR_BKV_SEGMENTS;
            snprintf(p->why, sizeof p->why, "%s: sorted segments",
                     d->is_gpu ? "no 64-bit atomics" : "CPU, bins too many "
                     "to privatise");
        } else if (facts->unmeasured) {
            /* NVIDIA, num_keys given: no pass over the keys before the
             * kernel (the key check is fused into it), so no run length;
             * warp_aggregated falls back to plain atomics in warps whose
             * keys all differ. */
            v = GR_BKV_WARP;
            snprintf(p->why, sizeof p->why, "GPU, keys not measured (check "
                     "fused into the kernel): one atomic per run of equal "
                     "keys per warp, plain atomics where keys all differ");
        } else if (run >= 2.0) {
            /* H100, 10 Mi f64 into 1 Mi keys, runs of 10: warp_aggregated
             * 0.128 ms, atomic 0.164, sorted_segments 0.295 (sorted);
             * 0.126 vs 0.153 (partly sorted). */
            v = GR_BKV_WARP;
            snprintf(p->why, sizeof p->why, "GPU, runs of %.1f equal keys "
                     "(%s): one atomic per key per warp", run,
                     sorted ? "sorted" : "not sorted");
        } else {
            v = GR_BKV_ATOMIC;
            /* H100, random keys: atomic 0.196 ms, warp_aggregated 0.246. */
            snprintf(p->why, sizeof p->why, "GPU, keys in no order (runs of "
                     "%.1f): one atomic per element", run);
        }
        (void)sorted;
    }
    p->variant = v;
    p->name = gr_bk_variant_names[v];
    if (ov->deterministic && exact && want == NULL) {
        char why[sizeof p->why];
        snprintf(why, sizeof why, "deterministic with integer values: any "
                 "order gives the same bits, no sort; %.179s", p->why);
        memcpy(p->why, why, sizeof why);
    }
    /* Geometry. */
    const size_t n = facts->n ? facts->n : 1;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    int wg = ov->wg_size;
    if (wg == 0) {
        /* lookback, H100, 2^28 int32 keys / f32 (benchmarks/exp/
         * bykey_lb.py, events): wg 256 x 16 items 1.076 ms, 128 x 16
         * 1.097, 128 x 32 1.096, 256 x 8 1.360. */
        wg = !d->is_gpu ? (v == GR_BKV_HASH || v == GR_BKV_WARP ? 64 : 1)
             : 256;
        if (d->is_gpu && v == GR_BKV_LOOKBACK &&
            !bk_lb_fits(d, 256, 16, bk_pair_size(ty))) {
            /* 16 items a work-item where 256 x 16 does not fit: pairs of
             * 12 or 16 bytes (H100, 2^27 runs of 64: int64/f64 128 x 16
             * 1.039 ms, 256 x 8 1.042; int32/f64 0.802, 0.827; 256 x 16,
             * 0.77-0.99, takes 48-64 KiB), devices with 32 KiB */
            wg = 128;
        }
    }
    if (wg < 1 || (wg & (wg - 1)) != 0 || (size_t)wg > d->max_wg) {
        snprintf(p->why, sizeof p->why, "wg_size must be a power of two "
                 "no larger than %zu (got %d)", d->max_wg, wg);
        return -1;
    }
    if (v == GR_BKV_WARP && d->nvidia_ptx && wg < 32) {
        snprintf(p->why, sizeof p->why, "warp_aggregated on NVIDIA needs "
                 "wg_size >= 32 (whole warps)");
        return -1;
    }
    p->wg = wg;
    if (v == GR_BKV_LOOKBACK) {
        /* Keys and values of a tile in local memory: at most 32 KiB, and
         * the whole kernel within the device's local memory. */
        const size_t esz = bk_pair_size(ty);
        size_t it = ov->items;
        if (it == 0) {
            /* the largest power of two up to 16 that fits: 16-byte loads
             * from 4 up, and a work-item's elements share one padding
             * step in local memory */
            for (it = 16; it > 1 && !bk_lb_fits(d, (size_t)wg, it, esz);) {
                it /= 2;
            }
        }
        if (it > 32) {
            snprintf(p->why, sizeof p->why, "variant 'lookback' takes items "
                     "<= 32 (got %zu)", it);
            return -1;
        }
        if (d->is_gpu && bk_lb_local((size_t)wg, it, esz) > local_max(d)) {
            snprintf(p->why, sizeof p->why, "variant 'lookback': a tile of "
                     "%d x %zu takes %zu bytes of local memory, the device "
                     "has %zu: use fewer items or a smaller wg_size", wg, it,
                     bk_lb_local((size_t)wg, it, esz), local_max(d));
            return -1;
        }
        p->items = it;
        p->groups = (n + (size_t)wg * it - 1) / ((size_t)wg * it);
    } else if (v == GR_BKV_SEGMENTS) {
        size_t it = ov->items;
        if (it == 0) {
            /* H100, 2^28 int32 keys in runs of 64: items 8 3.40 ms, 16
             * 4.47 ms, 32 22.3 ms. */
            it = d->is_gpu ? 8
                           : (n + cu * 8 - 1) / (cu * 8);
            if (!d->is_gpu && it < 4096) {
                it = 4096;
            }
        }
        p->items = it;
        p->groups = (n + (size_t)wg * it - 1) / ((size_t)wg * it);
    } else if (v == GR_BKV_PRIV) {
        p->parts = ov->items ? (n + ov->items - 1) / ov->items : cu;
        if (p->parts < 1) {
            p->parts = 1;
        }
        p->items = (n + p->parts - 1) / p->parts;
        p->groups = p->parts;
        p->wg = 1;
    } else {
        size_t it = ov->items;
        if (it == 0) {
            size_t groups = d->is_gpu ? cu * 32 : cu * 4;
            it = (n + (size_t)wg * groups - 1) / ((size_t)wg * groups);
            if (v == GR_BKV_HASH && it < 8) {
                it = 8; /* a tile of several elements per bin window */
            }
        }
        p->items = it ? it : 1;
        p->groups = (n + (size_t)wg * p->items - 1) / ((size_t)wg * p->items);
    }
    if (p->groups == 0) {
        p->groups = 1;
    }
    p->hash_bins = a_size == 8 ? 1024 : 2048;
    return 0;
}


/* ============================================================= placement
 * Where a call on host memory runs: the host path (host.c: C on the
 * calling thread, no OpenCL) or the device.  A time model per side,
 *
 *     t = per-call cost + bytes / rate,
 *
 * with rates per family (contiguous reductions, argmin/argmax, column
 * reductions, scans) that gpured.tune() measures on the machine
 * (gr_rates_set); the defaults below are safe guesses from the 2-core CI
 * machine (benchmarks/host_path.py, 2026-11-23: the host path beat PoCL up
 * to 8 MiB for sums, 4 MiB for scans, at every size for argmax and
 * columns) and the H100 host (OpenCL call ~60 us, pinned transfers ~25
 * GB/s).  With several devices (gr_place), each device's rates are its
 * own: a CPU device reads NumPy memory in place (PoCL 5 on the H100
 * host's 16 cores: ~100 GB/s for sums), a GPU through the pinned
 * pipeline. */

static gr_rates rates_default(const gr_device *d)
{
    gr_rates r;
    memset(&r, 0, sizeof r);
    /* the host path in cache on the 2-core machine: sums ~25 GB/s,
     * argmax 23, float32 columns 22, cumsum 4 (benchmarks/host_path.py,
     * 1 MiB); half of that, as its DRAM-bound rate is lower (sums of 256
     * MiB: 9 GB/s).  With 8 GB/s for sums the H100 host sent a 1 MiB
     * NumPy sum to the GPU: 0.134 ms, numpy 0.112. */
    r.host_call_ns = 200;
    r.host_gbs[GR_RATE_REDUCE] = 16.0;
    r.host_gbs[GR_RATE_ARG] = 12.0;
    r.host_gbs[GR_RATE_COLUMN] = 12.0;
    r.host_gbs[GR_RATE_SCAN] = 2.0;
    if (d->is_gpu) {
        r.dev_call_ns = 60000;
        for (int f = 0; f < GR_NRATES; ++f) {
            r.dev_gbs[f] = f == GR_RATE_SCAN ? 8.0 : 25.0; /* transfers */
        }
    } else {
        const double cores = d->compute_units ? d->compute_units : 1;
        r.dev_call_ns = 120000;
        r.dev_gbs[GR_RATE_REDUCE] = 4.0 * cores;
        r.dev_gbs[GR_RATE_ARG] = 1.0 * cores;
        r.dev_gbs[GR_RATE_COLUMN] = 1.0 * cores;
        /* GPU host's PoCL 5 (16 cores): 1 GiB cumsum ~170 ms, slower
         * than the GPU's pinned pipeline (115 ms): 0.4 GB/s a core keeps
         * scans of NumPy arrays on the GPU there */
        r.dev_gbs[GR_RATE_SCAN] = 0.4 * cores;
    }
    return r;
}

#define MAX_RATES 16
static struct {
    char device[256];
    gr_rates r;
} rates_tab[MAX_RATES];
static int nrates = 0;
static int placement_auto = 1;

void gr_rates_set(const char *device, const gr_rates *r)
{
    for (int i = 0; i < nrates; ++i) {
        if (strcmp(rates_tab[i].device, device) == 0) {
            rates_tab[i].r = *r;
            return;
        }
    }
    if (nrates < MAX_RATES) {
        snprintf(rates_tab[nrates].device, sizeof rates_tab[nrates].device,
                 "%s", device);
        rates_tab[nrates++].r = *r;
    }
}

void gr_rates_get(const gr_device *d, gr_rates *r, int *measured)
{
    for (int i = 0; i < nrates; ++i) {
        if (strcmp(rates_tab[i].device, d->name) == 0) {
            *r = rates_tab[i].r;
            *measured = 1;
            return;
        }
    }
    *r = rates_default(d);
    *measured = 0;
}

void gr_placement_set(int automatic) { placement_auto = automatic; }
int gr_placement_auto(void) { return placement_auto; }

int gr_rate_family(gr_family fam, gr_op op, const gr_layout *lay)
{
    if (fam == GR_FAM_SCAN) {
        return GR_RATE_SCAN;
    }
    if (op == GR_ARGMIN || op == GR_ARGMAX) {
        return GR_RATE_ARG;
    }
    if (lay->elem_stride != 1 && lay->M > 1) {
        return GR_RATE_COLUMN;
    }
    return GR_RATE_REDUCE;
}

/* A device's time for nbytes of family f by its rates. */
static double place_dev_ns(const gr_device *d, int f, size_t nbytes)
{
    gr_rates r;
    int measured = 0;
    gr_rates_get(d, &r, &measured);
    return r.dev_call_ns + (double)nbytes / r.dev_gbs[f];
}

/* ------------------------------------------------------- host threads
 * A large call on the host path runs on several threads (hostpar.c's
 * pool; host.c cuts it into tasks of at least `grain` bytes).  Its time:
 *
 *     host call + pool call + bytes / min(gbs[f], k x host rate),
 *
 * k the threads that get a task, gbs[f] the rate with every thread
 * (measured by gpured.measure_rates; by default threads x the host rate /
 * 2).  Threads: GPURED_HOST_THREADS, gpured.host_threads(n), or (auto)
 * the CPUs this process may use where they are 4 or more, else 1 (on the
 * 2-core CI machine a second thread measured slower: 2026-11-26).  The
 * first part of a request's slowness (nan*'s copy, var's passes: slow) is
 * not cut. */
static struct {
    int threads;          /* -1: automatic                                */
    size_t grain;         /* bytes a task at least (0: host.c's 128 KiB)  */
    double call_ns;       /* a job on the pool: waking and joining        */
    double gbs[GR_NRATES];/* bytes per ns, every thread (0: default)      */
    int measured;
} hpar = {-1, 0, 15000, {0, 0, 0, 0}, 0};

int gr_hpar_threads(void)
{
    if (hpar.threads >= 1) {
        return hpar.threads;
    }
    const int c = gr_par_cpus();
    return c >= 4 ? c : 1;
}

void gr_hpar_get(gr_hpar *p)
{
    p->threads = gr_hpar_threads();
    p->automatic = hpar.threads < 1;
    p->grain = hpar.grain;
    p->call_ns = hpar.call_ns;
    memcpy(p->gbs, hpar.gbs, sizeof p->gbs);
    p->measured = hpar.measured;
}

void gr_hpar_set(const gr_hpar *p)
{
    hpar.threads = p->automatic ? -1 : p->threads;
    hpar.grain = p->grain;
    hpar.call_ns = p->call_ns;
    memcpy(hpar.gbs, p->gbs, sizeof hpar.gbs);
    hpar.measured = p->measured;
}

/* The threads' rate for family f with every thread (bytes per ns). */
static double hpar_gbs(const gr_rates *r, int f)
{
    return hpar.gbs[f] > 0 ? hpar.gbs[f] : r->host_gbs[f] * gr_hpar_threads() / 2;
}

/* The host path's time on one thread for family f. */
static double host_ns(const gr_rates *r, int f, size_t nbytes, double slow)
{
    return r->host_call_ns + slow * (double)nbytes / r->host_gbs[f];
}

/* The host path's time with threads for family f, INFINITY where the call
 * would not be cut (one thread, under two tasks).  (Scans cut in pieces
 * read their input twice; host.c does not cut long float cumprods.) */
static double hpar_ns(const gr_rates *r, int f, size_t nbytes, double slow)
{
    const int T = gr_hpar_threads();
    const size_t tasks = nbytes / (hpar.grain ? hpar.grain : GR_HOST_GRAIN);
    if (T < 2 || tasks < 2) {
        return INFINITY;
    }
    const double k = (double)(tasks < (size_t)T ? tasks : (size_t)T);
    const double rate = fmin(hpar_gbs(r, f), k * r->host_gbs[f]);
    return r->host_call_ns + hpar.call_ns +
           (slow - 1.0) * (double)nbytes / r->host_gbs[f] +
           (double)nbytes / rate;
}

void gr_host_par(int dev, int f, size_t nbytes, int *threads, size_t *grain)
{
    gr_rates r;
    int measured = 0;
    gr_rates_get(gr_device_get(dev), &r, &measured);
    *threads = hpar_ns(&r, f, nbytes, 1.0) < host_ns(&r, f, nbytes, 1.0)
                   ? gr_hpar_threads() : 1;
    *grain = hpar.grain;
}

/* The model's times for a call of family f on nbytes of host memory with
 * the current device cur: the host path's (slow: how much slower than
 * its plain form it runs this request), the current device's, and the
 * fastest device's, d1 (the current one first: ties keep it; with roam
 * every device, those without fp64 left out where cur has it), and the
 * next fastest, d2 (-1: none), for a split. */
/* The host path's factors (gr_host_work), each with the measurement
 * that set it.  The request's bytes are priced at factor x the plain
 * form's host time; the device's loads test and mask in place.
 *
 * COPY_REDUCE, COPY_SCAN: The host path's nan* requests gather a copy and rewrite it (NaN
 * replaced) before the reduction or scan, where the device's loads test in
 * place: the placement rule counts them this much slower than their plain
 * forms.  2-core PoCL machine, 1 MiB float32 (2026-11-25): nansum 0.84 ms
 * on the host path vs sum 0.041 ms; a scan is itself slow enough that the
 * copy about doubles it.  Counts (count_nonzero, nanmean's) read in place
 * (host.c gr_host_count), as a sum does.
 *
 * VAR, NANMEAN: var/std on the host path: NumPy's two passes per segment (host.c
 * gr_host_var), rounded once into the result dtype.  The placement rule
 * counts them 5x a sum's time: 2-core machine, float32, host var / host
 * sum 6.7x at 4 MiB, 6.2x at 16, 4.3x at 64 (2026-11-26; it was priced at
 * 2x, which the host sum's default rate of 8 GB/s hid).  nanmean's one
 * pass (mode 3) at 2x: its NaN masks in double lanes ran at 0.6 of a sum's
 * rate (256 KiB-1 MiB float32, 2026-11-25).
 *
 * PTP: ptp on the host path: the host's max and its min (two passes, placed as
 * such: GR_HW_PTP), then their difference.  2-core machine, float32, host /
 * PoCL: 1 MiB 0.03 / 0.13 ms, 4 MiB 0.11 / 0.20, 16 MiB 0.47 / 0.47, 64
 * MiB 4.05 / 2.26 (2026-11-26): 2.2 puts the edge near 10 MB with the
 * default rates. */
static const double host_factors[GR_NHW] = {
    [GR_HW_PLAIN] = 1.0,
    [GR_HW_COPY_REDUCE] = 16.0, /* nansum 0.84 ms vs sum 0.041, 1 MiB f32 */
    [GR_HW_COPY_SCAN] = 2.0,    /* the copy about doubles a scan          */
    [GR_HW_VAR] = 5.0,          /* host var / sum 4.3-6.7x, 4-64 MiB f32  */
    [GR_HW_NANMEAN] = 2.0,      /* NaN masks at 0.6 of a sum's rate       */
    [GR_HW_PTP] = 2.2,          /* edge near 10 MB with default rates     */
};

double gr_host_factor(gr_host_work w) { return host_factors[w]; }

/* float32 segments averaging fewer elements than this (float64: half as
 * many) take sum_short_segments (2 cores, 16 MiB against
 * numpy.add.reduceat: float32 1.06-1.72x at 8-63 elements; float64 1.03x
 * at 8, 0.9 at 16, and 0.6-0.7 from 32 on either way: TwoSum against
 * NumPy's plain adds). */
size_t gr_seg_short(gr_dtype t) { return t == GR_FLOAT32 ? 64 : 32; }

/* The model's times for a call of family f on nbytes of host memory with
 * the current device cur: the host path's (slow: how much slower than
 * its plain form it runs this request), the current device's, and the
 * fastest device's, d1 (the current one first: ties keep it; with roam
 * every device, those without fp64 left out where cur has it), and the
 * next fastest, d2 (-1: none), for a split. */

typedef struct {
    double host, here, dev_ns; /* dev_ns: d1's */
    int d1, d2;
    int par; /* the host path's time is on several threads */
} place_times;

static void place_times_of(int cur, int roam, int f, size_t nbytes,
                           double slow, place_times *pt)
{
    const gr_device *d = gr_device_get(cur);
    gr_rates r;
    int measured = 0;
    gr_rates_get(d, &r, &measured);
    const double one = host_ns(&r, f, nbytes, slow),
                 par = hpar_ns(&r, f, nbytes, slow);
    pt->par = par < one;
    pt->host = pt->par ? par : one;
    pt->here = pt->dev_ns = r.dev_call_ns + (double)nbytes / r.dev_gbs[f];
    pt->d1 = cur;
    pt->d2 = -1;
    double t2 = INFINITY;
    for (int i = 0; roam && i < gr_device_count(); ++i) {
        const gr_device *c = gr_device_get(i);
        if (i == cur || (!c->fp64 && d->fp64)) {
            continue;
        }
        const double t = place_dev_ns(c, f, nbytes);
        if (t < pt->dev_ns) {
            t2 = pt->dev_ns;
            pt->d2 = pt->d1;
            pt->dev_ns = t;
            pt->d1 = i;
        } else if (t < t2) {
            t2 = t;
            pt->d2 = i;
        }
    }
}

int gr_place(int *dev, int roam, gr_family fam, gr_op op,
             const gr_layout *lay, size_t nbytes, double slow,
             const char *slow_why, char *why, size_t n)
{
    const gr_device *d = gr_device_get(*dev);
    gr_rates r;
    int measured = 0;
    gr_rates_get(d, &r, &measured);
    const int f = gr_rate_family(fam, op, lay);
    /* slow: how much slower than its plain form the host path runs this
     * request (nan*, count: a copy rewritten first; var/std: two passes;
     * dispatch.c) */
    const int copies = slow > 1.0;
    /* another device, by its own rates (a CPU device reads host memory in
     * place; a GPU's rates include the transfers) */
    place_times pt;
    place_times_of(*dev, roam, f, nbytes, slow, &pt);
    const double host = pt.host, here = pt.here, best_ns = pt.dev_ns;
    const int best = pt.d1;
    const int on_host = host <= best_ns;
    if (!on_host) {
        *dev = best;
    }
    if (why == NULL) {
        return on_host; /* not explaining: formatting floats costs 1 us */
    }
    static const char *const names[] = {"reduction", "argmin/argmax",
                                        "column reduction", "scan"};
    char par[96] = "";
    if (pt.par) {
        snprintf(par, sizeof par, " on %d threads (%.1f GB/s %s + %.1f us)",
                 gr_hpar_threads(), hpar_gbs(&r, f),
                 hpar.measured ? "measured" : "default", hpar.call_ns / 1e3);
    }
    int w = snprintf(why, n, "%s of %zu bytes: host path%s %.1f us vs %s '%s' "
                     "%.1f us (%s rates: host %.1f GB/s%s + %.1f us, device "
                     "%.1f GB/s + %.1f us)", names[f], nbytes, par, host / 1e3,
                     d->is_gpu ? "GPU" : "CPU device", d->name, here / 1e3,
                     measured ? "measured" : "default", r.host_gbs[f] / slow,
                     copies ? slow_why : "", r.host_call_ns / 1e3,
                     r.dev_gbs[f], r.dev_call_ns / 1e3);
    if (w > 0 && (size_t)w < n && best != d->index) {
        const gr_device *b = gr_device_get(best);
        snprintf(why + w, n - (size_t)w, "; %s %d:%d '%s' %.1f us%s",
                 b->is_gpu ? "GPU" : "CPU device", b->pidx, b->didx,
                 b->name, best_ns / 1e3, on_host ? "" : ": it runs there");
    }
    return on_host;
}

/* ------------------------------------------------------------ splits */

/* One call on host memory split between two devices at once (issue 12):
 * each reads its share (a CPU device in place, a GPU through its pinned
 * pipeline or the registered array), the partials are combined on the
 * host.  Both shares come out of the host's memory, so their own rates do
 * not add: the pair's rate together (GB/s per family, measured by
 * gpured.tune() on a machine with two devices, gr_split_set) is what the
 * model uses, and 0 -- the default, nothing measured -- never splits. */
static double split_gbs[GR_NRATES];

void gr_split_set(const double *gbs)
{
    memcpy(split_gbs, gbs, sizeof split_gbs);
}

void gr_split_get(double *gbs)
{
    memcpy(gbs, split_gbs, sizeof split_gbs);
}

int gr_split_plan(int cur, int roam, gr_family fam, gr_op op,
                  const gr_layout *lay, size_t nbytes, gr_split *sp,
                  char *why, size_t n)
{
    const int f = gr_rate_family(fam, op, lay);
    place_times pt;
    place_times_of(cur, roam, f, nbytes, 1.0, &pt);
    const int on_host = pt.host <= pt.dev_ns, d1 = pt.d1, d2 = pt.d2;
    const double one = on_host ? pt.host : pt.dev_ns;
    memset(sp, 0, sizeof *sp);
    if (!roam || d2 < 0 || split_gbs[f] <= 0) {
        if (why != NULL) {
            snprintf(why, n, "%s", !roam ? "placement pinned to one device"
                                 : d2 < 0 ? "one device"
                                          : "no rate measured for two "
                                            "devices together (gpured.tune)");
        }
        return 0;
    }
    gr_rates r1, r2;
    int m1 = 0, m2 = 0;
    gr_rates_get(gr_device_get(d1), &r1, &m1);
    gr_rates_get(gr_device_get(d2), &r2, &m2);
    const double call = r1.dev_call_ns > r2.dev_call_ns ? r1.dev_call_ns
                                                        : r2.dev_call_ns;
    const double both = call + (double)nbytes / split_gbs[f];
    sp->dev[0] = d1 < d2 ? d1 : d2; /* (the first share: the lower index) */
    sp->dev[1] = d1 < d2 ? d2 : d1;
    const gr_rates *ra = d1 < d2 ? &r1 : &r2, *rb = d1 < d2 ? &r2 : &r1;
    sp->frac = ra->dev_gbs[f] / (ra->dev_gbs[f] + rb->dev_gbs[f]);
    sp->ns = both;
    sp->single_ns = one;
    const int go = both < 0.95 * one;
    if (why != NULL) {
        snprintf(why, n, "split %.3f / %.3f between devices %d and %d: "
                 "%.1f us together (%.1f GB/s measured) vs %.1f us on %s%s",
                 sp->frac, 1.0 - sp->frac, sp->dev[0], sp->dev[1], both / 1e3,
                 split_gbs[f], one / 1e3, on_host ? "the host path"
                                                  : "the fastest device",
                 go ? "" : ": not split");
    }
    return go;
}

/* ------------------------------------------------- segments by offsets */

/* reduceat (kernels/segments.cl): rows x L x inner elements, S segments
 * per row, the longest maxlen elements (L when unknown).  GPUs: work-groups
 * per segment where segments lie along the innermost axis and hold on
 * average at least 128 elements (coalesced aligned vector loads, a
 * reduction's combine), a long segment split among several work-groups
 * (parts) while there are too few segments to fill the device; else one
 * work-item per result.  CPUs: work-items take runs of consecutive
 * results (vector walks for sums and products), unless too few results
 * keep the cores busy. */
/* Auto on GPUs by the segments' average length (H100,
 * benchmarks/exp/reduceat_knobs.py): on NVIDIA up to GR_SEG_WARP_MAX
 * elements the lanes of a warp (below 256 elements part of one: 32 /
 * lanes segments per warp), elsewhere a work-item per segment; a
 * work-group per segment from GR_SEG_GROUP_MIN on (from GR_SEG_WARP_MAX
 * on NVIDIA). */
#define GR_SEG_WARP_MAX 2048
#define GR_SEG_GROUP_MIN 512

int gr_plan_segments(const gr_device *d, gr_op op, const gr_accum *acc,
                     size_t rows, size_t L, size_t inner, size_t S,
                     size_t maxlen, const gr_knobs *kn, gr_plan *plan)
{
    const char *name = (kn->variant && kn->variant[0]) ? kn->variant : "auto";
    const size_t avg = S ? L / S : 0;
    const size_t results = rows * S * inner;
    const size_t cu = max_sz(1, d->compute_units);
    int group;
    memset(plan, 0, sizeof *plan);
    if (check_knobs(d, kn, plan) != 0) {
        return -1;
    }
    if (strcmp(name, "auto") == 0) {
        group = inner == 1 &&
                (d->is_gpu ? avg >= GR_SEG_GROUP_MIN
                           : results < 4 * cu && avg >= 8192);
    } else if (strcmp(name, "segment_per_group") == 0) {
        if (inner != 1) {
            snprintf(plan->why, sizeof plan->why,
                     "segment_per_group reads segments along the innermost "
                     "axis of a C-ordered array (here %zu results per "
                     "offset: use segment_per_item)", inner);
            return -1;
        }
        group = 1;
    } else if (strcmp(name, "segment_per_warp") == 0) {
        if (inner != 1 || !d->nvidia_ptx) {
            snprintf(plan->why, sizeof plan->why,
                     "segment_per_warp needs NVIDIA's warps (inline PTX) and "
                     "segments along the innermost axis of a C-ordered "
                     "array");
            return -2;
        }
        group = 2;
    } else if (strcmp(name, "segment_per_item") == 0) {
        group = 0;
    } else {
        snprintf(plan->why, sizeof plan->why,
                 "unknown reduceat variant '%s' (auto, segment_per_group, "
                 "segment_per_warp, segment_per_item)", name);
        return -1;
    }
    if (strcmp(name, "auto") == 0 && inner == 1 && d->nvidia_ptx &&
        avg < GR_SEG_WARP_MAX &&
        (avg >= 16 || gr_dtypes[acc->t].size == 8)) {
        /* a warp, or part of one, per segment (segments of 8 4-byte
         * values: a work-item each, 0.70 ms per GiB against 0.76) */
        group = 2;
    }
    const int warp = group == 2;
    if (warp) {
        group = 0;
    }
    plan->kind = group ? GR_K_GROUP : warp ? GR_K_WARP : GR_K_ITEMS;
    plan->variant = group  ? "segment_per_group"
                    : warp ? "segment_per_warp"
                           : "segment_per_item";
    plan->ilp = 1;
    plan->vw = 1;
    plan->parts = 1;
    plan->passes = 1;
    plan->chunk = 1;
    /* GPUs (H100, benchmarks/exp/reduceat_knobs.py): the shorter the
     * segments, the smaller the work-group (more elements per work-item
     * between combines); 8-byte values load scalars in wide groups */
    const int wide = gr_dtypes[acc->t].size == 8;
    int wg = 64, vw = 1;
    if (warp) {
        wg = 256; /* scalar loads: four chains per lane, few leftovers */
    } else if (!group) {
        wg = d->is_gpu ? 256 : 64;
    } else if (!d->is_gpu) {
        wg = 16;
        vw = 8;
    } else if (wide) {
        wg = avg >= 2048 ? 256 : 64;
        vw = avg >= 2048 ? 1 : 2;
    } else {
        wg = avg >= 16384 ? 256 : avg >= 2048 ? 128 : 32;
        vw = 4;
    }
    plan->wg = kn->wg_size ? kn->wg_size : wg;
    plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
    if (group) {
        /* aligned vector loads; parts: work-groups of at least C elements
         * each, while fewer than 16 K work-groups would run */
        plan->vw = kn->vw ? kn->vw : vw;
        const size_t C = max_sz(8192, rows * L / (8 * cu));
        const size_t cap = max_sz(1, 16384 / max_sz(1, results));
        plan->parts = kn->groups ? (size_t)kn->groups
                                 : min_sz(cap, max_sz(1, (maxlen + C - 1) / C));
        plan_second_pass(d, results, plan);
    } else if (warp) {
        /* chunk: lanes per segment, a power of two up to 32 (items=):
         * about eight elements per lane (H100: avg 16 -> 2 lanes 0.60 ms
         * per GiB, 64 -> 8 lanes 0.54, 128 -> 16 lanes 0.48, 256 -> 32
         * lanes 0.43; one work-item per segment: 0.66, 0.75, 0.79, 0.87) */
        size_t lanes = kn->items ? (size_t)kn->items : warp_lanes(avg, 8, 32);
        if (lanes > 32 || (lanes & (lanes - 1)) != 0) {
            snprintf(plan->why, sizeof plan->why, "segment_per_warp: items "
                     "(work-items per segment) must be a power of two up to "
                     "32");
            return -1;
        }
        plan->chunk = lanes;
        plan->lanes = (int)lanes;
        plan->wg = (int)max_sz(32, (size_t)plan->wg);
        plan->vw = kn->vw ? kn->vw : vw;
        plan->sg = 1; /* GR_SG_PTX: the shuffles */
    } else {
        if (!d->is_gpu) {
            /* results per work-item (chunk): about 64 work-items per core;
             * sums and products along the innermost axis: vector walks */
            plan->chunk = max_sz(1, results / (64 * cu));
            if (inner == 1 && (op == GR_ADD || op == GR_MUL) && avg >= 64) {
                plan->vw = 8;
            }
        }
        plan->vw = kn->vw ? kn->vw : plan->vw;
    }
    plan->combine = COMB_UNROLL_COMPLETE;
    if (group && d->nvidia_ptx && plan->wg >= 32) {
        plan->combine = COMB_SUBGROUP; /* warp shuffles through PTX */
        plan->sg = 1;
    }
    snprintf(plan->why, sizeof plan->why,
             "%s: %zu result(s), %zu offset(s) over rows of %zu (%zu "
             "element(s) per segment on average, longest %zu), %zu apart; "
             "work-groups of %d, vw %d, %s",
             plan->variant, results, S, L, avg, maxlen, inner, plan->wg,
             plan->vw,
             group  ? (plan->parts > 1 ? "segments split among work-groups "
                                         "(groups), a second pass merges"
                                       : "one work-group per segment")
             : warp ? "warp lanes per segment (chunk), shuffle combine"
                    : "consecutive results per work-item (chunk)");
    return 0;
}
