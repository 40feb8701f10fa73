/*
 * gpured — policy layer: every "auto" rule of every family.  This file is
 * the layer's hallway: the dtype table, the operators' names, the tuned
 * table (gpured.tune()), and the knobs' checks and refusals the reduction
 * planners share; each family's planner has its own file:
 *
 *   accum.c          gr_accum_for: the accumulator of (family, op, types)
 *   plan_reduce.c    gr_plan_reduce: reductions
 *   plan_segments.c  gr_plan_segments: reduceat (segments by offsets)
 *   plan_scan.c      gr_plan_scan: scans
 *   plan_bykey.c     gr_bk_plan_for: reduce-by-key
 *   plan_elementwise.c  gr_plan_elementwise: NumPy's ufuncs on Arrays
 *   place.c          gr_place, gr_host_par, gr_split_plan: placement,
 *                    its rates and the host path's factors
 *   place_remeasure.c  gr_remeasure_*: large calls timed, a side more
 *                    than 4x off its estimate re-priced (issue 39)
 *
 * A planner is a driver of named phases: choose the variant, then one
 * function per kernel kind sets the geometry from a row of the family's
 * table of defaults (each row citing its measurement; the plan's `row`
 * names it), then the why text.
 *
 * Pure functions of (device facts, operator, types, layout, knobs, tuned
 * table): nothing here touches OpenCL or Python, so every decision can be
 * unit-tested through _core.plan_for on synthetic devices and shown to
 * users (gpured.explain).  (place.c also reads the device table and the
 * host's CPUs: its model prices calls on every device.)
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
#include "policy.h"

#include <stdio.h>
#include <string.h>

/* ================================================================ tables */

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
    /* storage only: copy.cl reads/writes them as half / ushort bits */
    {"float16", "half",   "half",   "short", "(-INFINITY)", "INFINITY",  2, 1, 1},
    {"bfloat16", "ushort", "ushort", "short", "(-INFINITY)", "INFINITY", 2, 1, 1},
};

const char *const gr_op_names[GR_NOPS] = {"add",    "multiply", "minimum",
                                          "maximum", "argmin",  "argmax",
                                          "all",    "any"};

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
const gr_tuned *gr_pol_tuned_lookup(const gr_device *d, gr_op op,
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

/* ------------------------------------------- knobs and shared refusals */

static int knob_error(gr_plan *plan, const char *knob, const char *range)
{
    snprintf(plan->why, sizeof plan->why, "%s must be %s", knob, range);
    return -1;
}

/* The refusals of variants that read one element at a time (more: what
 * else they refuse) and of NVIDIA's shuffles in part of a warp. */
int gr_pol_one_at_a_time(gr_plan *plan, const char *name, const char *more)
{
    snprintf(plan->why, sizeof plan->why,
             "variant '%s' reads one element at a time: vw and ilp must be "
             "1%s", name, more);
    return -1;
}

int gr_pol_whole_warps(gr_plan *plan, const char *name)
{
    snprintf(plan->why, sizeof plan->why,
             "variant '%s' on NVIDIA needs whole warps: wg_size at least 32",
             name);
    return -1;
}

int gr_pol_check_knobs(const gr_device *d, const gr_knobs *ov,
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
void gr_pol_second_pass(const gr_device *d, size_t M, gr_plan *plan)
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
