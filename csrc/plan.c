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

static const char *const variants[] = {"auto", "vector", "stride_local",
                                       "chunked", "segment_per_item", NULL};

const char *const *gr_reduce_variants(void) { return variants; }

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
                   const gr_layout *lay, const gr_overrides *ov,
                   gr_plan *plan)
{
    const char *v = (ov->variant && ov->variant[0]) ? ov->variant : "auto";
    const int tsize = gr_dtypes[acc->t].size;
    const size_t cu = d->compute_units;
    int known = 0;
    memset(plan, 0, sizeof *plan);
    for (int i = 0; variants[i] != NULL; ++i) {
        if (strcmp(v, variants[i]) == 0) {
            plan->variant = variants[i];
            known = 1;
        }
    }
    if (!known) {
        snprintf(plan->why, sizeof plan->why,
                 "unknown variant '%s' (gpured.variants() lists them)", v);
        return -1;
    }
    if (check_knobs(d, ov, plan) != 0) {
        return -1;
    }
    if (strcmp(plan->variant, "auto") == 0) {
        if (lay->elem_stride != 1 || (lay->L <= ITEMS_ROW_MAX && lay->M > 1)) {
            plan->variant = "segment_per_item";
        } else {
            plan->variant = d->is_gpu ? "vector" : "chunked";
        }
    }

    if (strcmp(plan->variant, "segment_per_item") == 0) {
        plan->kind = GR_K_ITEMS;
        plan->wg = ov->wg_size ? ov->wg_size : (d->is_gpu ? 256 : 64);
        plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
        plan->vw = 1;
        plan->ilp = 1;
        size_t threads = round_up(lay->M, (size_t)plan->wg);
        size_t target = d->is_gpu ? cu * 2048 : cu * (size_t)plan->wg * 4;
        size_t parts;
        if (ov->items) {
            parts = ceil_div(lay->L, (size_t)ov->items);
        } else if (ov->groups) {
            parts = (size_t)ov->groups;
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
                 "%s segments: one work-item per segment (%zu work-items), "
                 "each segment in %zu part(s) of %zu elements",
                 lay->elem_stride != 1 ? "strided" : "short", threads,
                 plan->parts, plan->chunk);
        return 0;
    }

    /* Work-group kernels: contiguous segments. */
    plan->kind = GR_K_GROUP;
    if (strcmp(plan->variant, "chunked") == 0) {
        plan->contig_wi = 1;
        plan->wg = 4;
        plan->vw = (int)min_sz(16, max_sz(1, (size_t)(64 / tsize)));
        plan->ilp = 2;
    } else if (strcmp(plan->variant, "stride_local") == 0) {
        plan->wg = 256;
        plan->vw = 1;
        plan->ilp = 4;
    } else { /* vector */
        /* H100, 1 GiB: float32/float64 sum/min/max 2.95-2.99 TB/s with
         * 2 accumulators (99% of the 3.0 TB/s copy); an int32 sum into
         * int64 needs 4 (74% with 2, 99% with 4). */
        plan->wg = 256;
        plan->vw = (int)min_sz(16, max_sz(1, (size_t)(16 / tsize)));
        plan->ilp = (!gr_dtypes[acc->r].is_float && acc->a_size > tsize) ? 4 : 2;
        if (op == GR_ALL || op == GR_ANY) {
            plan->ilp = 1; /* H100 all(float32): 2.94 TB/s vs 2.04 with 2 */
        }
    }
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

    const size_t tile = (size_t)plan->wg * plan->vw;
    const size_t full = (size_t)plan->wg * plan->vw * plan->ilp;
    size_t target = d->is_gpu ? cu * max_sz(1, 2048 / (size_t)plan->wg)
                              : cu * 4;
    size_t parts;
    if (ov->items) {
        parts = ceil_div(lay->L, (size_t)ov->items * plan->wg);
    } else if (ov->groups) {
        parts = (size_t)ov->groups;
    } else {
        parts = ceil_div(target, lay->M);
        /* Give each work-group at least a few full tiles. */
        parts = min_sz(parts, max_sz(1, lay->L / (full * 4)));
    }
    parts = max_sz(1, min_sz(parts, MAX_PARTS));
    plan->chunk = round_up(ceil_div(lay->L, parts), tile);
    plan->parts = ceil_div(lay->L, plan->chunk);
    plan_second_pass(d, lay->M, plan);
    snprintf(plan->why, sizeof plan->why,
             "%s: %d work-items per group, %s loads of %d element(s), %d "
             "accumulator(s); %zu group(s) per segment of %zu elements%s",
             d->is_gpu ? "GPU" : "CPU", plan->wg,
             plan->contig_wi ? "contiguous per-work-item" : "coalesced",
             plan->vw, plan->ilp, plan->parts, plan->chunk,
             plan->passes > 1 ? ", then one pass over the partials"
                              : " (single pass)");
    return 0;
}
