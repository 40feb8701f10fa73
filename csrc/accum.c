/*
 * gpured — policy layer: the accumulator rule.  What a (family, op, input,
 * result) folds in, one rule for every family (gr_accum_for): reductions'
 * (accum_reduce), scans' on top of it (accum_scan), reduce-by-key's without
 * a compensation term; var/std's and ptp's accumulators over their sum's
 * and max's.  Pure: no OpenCL, no Python.
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

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
                /* halves into double: 42 spare bits, no TwoSum needed */
                acc->comp = op == GR_ADD &&
                            !(GR_IS_HALF(t) && r == GR_FLOAT64);
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
        /* float16/bfloat16 elements arrive as float (common.cl GR_LD) */
        acc->a_cl = GR_IS_HALF(t) ? "float" : ti->cl;
        acc->a_size = GR_IS_HALF(t) ? 4 : ti->size;
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
    /* float16 / bfloat16 (issue 40): the kernels read and write them
     * themselves (kernels/scan.cl GR_SELT / GR_SRELT) and compute as for
     * float32 (sums and products in float64 where the device has it) */
    const gr_dtype t0 = t, r0 = r;
    t = GR_IS_HALF(t) ? GR_FLOAT32 : t;
    r = GR_IS_HALF(r) ? GR_FLOAT32 : r;
    if (accum_reduce(d, op, t, r, acc, err, errlen) != 0) {
        return -1;
    }
    acc->t = t0;
    acc->r = r0;
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
