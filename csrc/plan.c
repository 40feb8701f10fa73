/*
 * gpured — variant selection ("dispatch") for reductions.
 *
 * Pure functions of (device facts, operator, types, layout, overrides):
 * nothing here touches OpenCL or Python, so every decision can be unit-tested
 * and shown to users (gpured.explain).
 *
 * The auto choice, in a few lines:
 *   - strided segments (column reductions) or very short rows:
 *       one work-item per segment, consecutive work-items on consecutive
 *       addresses ("segment_per_item"), rows split in parts when there are
 *       too few segments to fill the device;
 *   - GPU: coalesced vector loads of 16 bytes, several accumulators per
 *       work-item, enough work-groups to fill every compute unit ("vector");
 *   - CPU: each work-item streams one contiguous run with explicit 64-byte
 *       vectors ("chunked"); a few work-groups per core;
 *   - if one work-group's tile covers the input: one pass, one group.
 */
#include "gpured.h"

#include <stdio.h>
#include <string.h>

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
enum { CVT_NONE = 0, CVT_TO_A = 1, CVT_WRAP = 2, CVT_MASK = 3 };

int gr_accum_for(const gr_device *d, gr_op op, gr_dtype t, gr_dtype r,
                 gr_accum *acc, char *err, size_t errlen)
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
};
#define NVARIANTS ((int)(sizeof variant_defs / sizeof *variant_defs))

static const char *const variants[] = {
    "auto", "naive", "divergence_free", "unroll_last", "unroll_complete",
    "stride_global", "stride_local", "vector", "workgroup", "subgroup",
    "atomic", "chunked", "segment_per_item", NULL};

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

#define MAX_PARTS 65535 /* CUDA's grid y limit bounds the items kernel   */
#define ITEMS_ROW_MAX 16 /* rows this short: one work-item per row       */

static int knob_error(gr_plan *plan, const char *knob, const char *range)
{
    snprintf(plan->why, sizeof plan->why, "%s must be %s", knob, range);
    return -1;
}

static int check_knobs(const gr_device *d, const gr_overrides *ov,
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
                   const gr_layout *lay, const gr_overrides *ov_in,
                   gr_plan *plan)
{
    const char *name = (ov_in->variant && ov_in->variant[0]) ? ov_in->variant
                                                             : "auto";
    const int tsize = gr_dtypes[acc->t].size;
    const size_t cu = d->compute_units;
    const variant_def *v;
    gr_overrides ov = *ov_in;
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
        } else if (lay->elem_stride != 1 ||
                   (lay->L <= ITEMS_ROW_MAX && lay->M > 1)) {
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
            parts = ceil_div(target, threads);
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
        if (v->vector && (op == GR_ALL || op == GR_ANY)) {
            plan->ilp = 1;
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
            snprintf(plan->why, sizeof plan->why,
                     "variant '%s' reads one element at a time: vw and ilp "
                     "must be 1%s", v->name,
                     v->one_per_item ? ", items 1 (use stride_local for more)"
                                     : "");
            return -1;
        }
        plan->vw = 1;
        plan->ilp = 1;
    }
    if (plan->sg == 1 && plan->wg < 32) {
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' on NVIDIA needs whole warps: wg_size at least 32",
                 v->name);
        return -1;
    }

    const size_t tile = (size_t)plan->wg * plan->vw;
    const size_t full = tile * plan->ilp;
    size_t target = d->is_gpu ? cu * max_sz(1, 2048 / (size_t)plan->wg)
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
