/*
 * gpured — policy layer: user-defined operators (kernels/custom.cl).
 *
 * A user operator is only known to be associative: every variant of the
 * reduction ladder that folds states with the operator itself is legal
 * (naive, divergence_free, unroll_last, unroll_complete, stride_global,
 * stride_local, vector, subgroup through shuffles or a local tree,
 * chunked, segment_per_item); atomic (a hardware read-modify-write) and
 * workgroup (work_group_reduce_add/min/max) are not, nor segment_per_warp
 * (its kernel is reduce.cl's).  The geometry is the reductions' own
 * (gr_plan_reduce, with the accumulator's and inputs' sizes), so that a
 * user sum runs as gpured.sum does.  Pure: no OpenCL, no Python.
 */
#include "custom.h"
#include "policy.h"

#include <stdio.h>
#include <string.h>

static const char *const variants[] = {
    "auto", "naive", "divergence_free", "unroll_last", "unroll_complete",
    "stride_global", "stride_local", "vector", "subgroup", "chunked",
    "segment_per_item", NULL};

const char *const *gr_custom_variants(void) { return variants; }

static int legal(const char *name)
{
    for (int i = 0; variants[i] != NULL; ++i) {
        if (strcmp(variants[i], name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The accumulator that sizes the plan: the widest input's type for the
 * loads, the state's sizes for local memory. */
static void sizing_accum(const gr_custom_types *ty, gr_accum *acc)
{
    static const gr_dtype by_size[9] = {GR_FLOAT32, GR_UINT8, GR_UINT16,
                                        GR_FLOAT32, GR_FLOAT32, GR_FLOAT32,
                                        GR_FLOAT32, GR_FLOAT32, GR_FLOAT64};
    memset(acc, 0, sizeof *acc);
    acc->t = by_size[ty->in_size > 0 && ty->in_size <= 8 ? ty->in_size : 4];
    acc->r = acc->t;
    acc->a_cl = ty->a_cl;
    acc->a_min = acc->a_max = "0";
    acc->a_size = ty->a_size;
    acc->x_size = ty->x_size;
}

int gr_plan_custom(const gr_device *d, const gr_custom_types *ty,
                   const gr_layout *lay, const gr_knobs *ov_in, gr_plan *plan)
{
    gr_knobs ov = *ov_in;
    gr_accum acc;
    const char *name = ov.variant && ov.variant[0] ? ov.variant : "auto";
    sizing_accum(ty, &acc);
    if (!legal(name)) {
        memset(plan, 0, sizeof *plan);
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' is not available for a user-defined operator "
                 "(gpured.ReductionKernel.variants() lists them)", name);
        return strcmp(name, "atomic") == 0 || strcmp(name, "workgroup") == 0 ||
                       strcmp(name, "segment_per_warp") == 0
                   ? -2
                   : -1;
    }
    int rc = gr_plan_reduce(d, GR_ADD, &acc, lay, &ov, plan);
    if (rc == 0 && (plan->atomic || plan->combine == COMB_WORKGROUP ||
                    plan->kind == GR_K_WARP)) {
        /* auto chose (or tune() measured for sums) a variant a user
         * operator cannot run: the rule's next choice instead */
        ov.variant = plan->kind == GR_K_WARP || lay->elem_stride != 1
                         ? "segment_per_item"
                     : d->is_gpu ? "vector"
                                 : "chunked";
        rc = gr_plan_reduce(d, GR_ADD, &acc, lay, &ov, plan);
    }
    if (rc != 0) {
        return rc;
    }
    if (plan->kind != GR_K_ITEMS && lay->elem_stride != 1) {
        /* custom.cl's group kernel reads a segment's elements side by
         * side; the built-in kernels' strided loads are not in it */
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' reads each segment's elements contiguously; "
                 "here they are %llu elements apart (reduce along the last "
                 "axis, or use segment_per_item)",
                 name, (unsigned long long)lay->elem_stride);
        return -2;
    }
    plan->sg_native = 0; /* sub_group_reduce_* know add/min/max only */
    if (plan->kind == GR_K_ITEMS) {
        plan->vw = 1; /* custom.cl's items kernel: one segment a work-item */
    }
    return 0;
}

/* --------------------------------------------------------------- scans */

/* A user scan (gpured.ScanKernel): gr_plan_scan's geometry for the
 * accumulator's and elements' sizes, without the group scans that are
 * built-ins of add/min/max only (workgroup; subgroup through
 * sub_group_scan_*): auto falls back to the Blelloch tree there, a named
 * one is unavailable.  The sub-group scan through PTX shuffles (NVIDIA)
 * takes any operator. */
int gr_plan_custom_scan(const gr_device *d, const gr_accum *acc,
                        const gr_layout *lay, int out_contig,
                        const gr_knobs *ov, gr_scan_plan *plan)
{
    const char *name = ov->variant && ov->variant[0] ? ov->variant : "auto";
    gr_accum sizing = *acc;
    sizing.user = NULL;
    sizing.cvt = 0;
    const int rc = gr_plan_scan(d, GR_ADD, &sizing, lay, out_contig, ov, plan);
    if (rc != 0) {
        return rc;
    }
    const int builtin_only = plan->local == 3 || (plan->local == 4 &&
                                                  plan->sg == 2);
    if (builtin_only && strcmp(name, "auto") != 0) {
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' uses the work-group / sub-group scan built-ins "
                 "(add, min, max only): not for a user operator here", name);
        return -2;
    }
    if (builtin_only) {
        plan->local = 2; /* LOC_BLELLOCH */
        plan->sg = 0;
        snprintf(plan->why + strlen(plan->why),
                 sizeof plan->why - strlen(plan->why),
                 "; Blelloch group scan (a user operator)");
    }
    return 0;
}
