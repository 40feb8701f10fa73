/*
 * custom.h — user-defined reductions (gpured.ReductionKernel) and the fused
 * built-ins on them: the plan (plan_custom.c, policy) and the passes
 * (custom.c) of kernels/custom.cl.
 */
#ifndef GPURED_CUSTOM_H
#define GPURED_CUSTOM_H

#include "gpured.h"

#define GR_CUSTOM_MAXARGS 16
/* The longest options= text of a user kernel (gpured/_kernels.py checks). */
#define GR_USER_OPTS_MAX 1024

/* A user operator's types: the accumulator (GR_A, its auxiliary part of
 * the same type where x_size), the result (GR_R), the widest input (the
 * vector loads' default width). */
typedef struct {
    const char *a_cl, *r_cl;
    int a_size, x_size, a_float, in_size, fp64;
    const char *opts; /* the user's build options (options=), "" if none */
} gr_custom_types;

/* One call: the user's defines text (kernels/custom.cl's GR_USER_*), its
 * kernel arguments (each input: a buffer and its element offset; each
 * scalar: its bytes), the layout, the result's buffer and element offset. */
typedef struct {
    const char *user;
    int nargs;
    gr_arg args[GR_CUSTOM_MAXARGS];
    gr_custom_types ty;
    gr_layout lay;
    cl_mem out;
    cl_ulong out0;
} gr_custom_call;

/* The plan of a user operator: gr_plan_reduce's geometry under the user
 * operator's rules (no atomic, no work-group collective, no sub-group
 * built-in, one work-item per row rather than a warp).  0, -1 (bad knob
 * or variant, plan->why), -2 (unavailable here). */
int gr_plan_custom(const gr_device *d, const gr_custom_types *ty,
                   const gr_layout *lay, const gr_knobs *ov, gr_plan *plan);
/* The variants a user operator may name. */
const char *const *gr_custom_variants(void);
/* A user scan's plan (gr_plan_scan under the user operator's rules). */
int gr_plan_custom_scan(const gr_device *d, const gr_accum *acc,
                        const gr_layout *lay, int out_contig,
                        const gr_knobs *ov, gr_scan_plan *plan);
/* Enqueue the passes of plan (gr_lock held, device open); ns: the device
 * time when not NULL (waits). */
int gr_custom_run(gr_device *d, const gr_custom_call *c, const gr_plan *plan,
                  double *ns, gr_status *st);

#endif
