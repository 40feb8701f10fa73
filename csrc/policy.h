/*
 * gpured — policy layer: declarations its files share (policy.c, accum.c,
 * plan_reduce.c, plan_segments.c, plan_scan.c, plan_bykey.c, place.c,
 * place_remeasure.c).
 * Included by those files only; the planners' public face is gpured.h.
 */
#ifndef GPURED_POLICY_H
#define GPURED_POLICY_H

#include "gpured.h"

#include <stddef.h>

/* CVT modes, as in kernels/common.cl */
enum { CVT_NONE = 0, CVT_TO_A = 1, CVT_WRAP = 2, CVT_MASK = 3,
       CVT_COUNT = GR_CVT_COUNT_MODE, CVT_VALID = GR_CVT_VALID_MODE };

/* The seed's ladder, plus the CPU and column kernels.  GR_LOAD_* and
 * GR_COMBINE_* are the numbers of kernels/reduce.cl and kernels/common.cl. */
enum { LOAD_COALESCED = 0, LOAD_CONTIG = 1, LOAD_STRIDE_GLOBAL = 2 };
enum {
    COMB_NAIVE = 0, COMB_SEQ = 1, COMB_UNROLL_COMPLETE = 2, COMB_UNROLL_LAST = 3,
    COMB_SUBGROUP = 4, COMB_WORKGROUP = 5
};

#define MAX_PARTS 65535 /* CUDA's grid y limit bounds the items kernel   */

/* ------------------------------------------------------ shared math */

static inline size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
static inline size_t round_up(size_t a, size_t b) { return ceil_div(a, b) * b; }
static inline int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
static inline size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

static inline int pow2_at_most(size_t x)
{
    int p = 1;
    while ((size_t)p * 2 <= x) {
        p *= 2;
    }
    return p;
}

/* Lanes of a warp per segment of about len elements, per elements a lane:
 * a power of two from 2 to most (reductions' short rows, reduceat). */
static inline size_t warp_lanes(size_t len, size_t per, size_t most)
{
    return min_sz(most, max_sz(2, (size_t)pow2_at_most(max_sz(1, len / per))));
}

/* The device's local memory (32 KiB, OpenCL's minimum, where unknown). */
static inline size_t local_max(const gr_device *d)
{
    return d->local_mem ? (size_t)d->local_mem : 32768;
}

/* policy.c: the tuned table, the knobs' checks and refusals every
 * reduction planner shares (reductions, reduceat) */
const gr_tuned *gr_pol_tuned_lookup(const gr_device *d, gr_op op, gr_dtype t,
                                    size_t nbytes);
int gr_pol_check_knobs(const gr_device *d, const gr_knobs *ov, gr_plan *plan);
int gr_pol_one_at_a_time(gr_plan *plan, const char *name, const char *more);
int gr_pol_whole_warps(gr_plan *plan, const char *name);
void gr_pol_second_pass(const gr_device *d, size_t M, gr_plan *plan);

#endif
