/*
 * exact.h — exact sums: the plan (policy layer, plan_exact.c) and the job
 * the family layer (exact.c) enqueues; the host's twin is host_exact.h.
 */
#ifndef GR_EXACT_H
#define GR_EXACT_H

#include "gpured.h"

/* longs a group writes: 68 digits, its flags, its count (kernels/exact.cl) */
#define GR_EXACT_PART 70

typedef struct {
    int wg;             /* work-group size (a power of two)              */
    int k;              /* doubles in each work-item's expansion         */
    size_t groups;      /* work-groups per segment in pass 1             */
    const char *row;    /* the geometry table's row                       */
    char why[256];
} gr_exact_plan;

typedef struct {
    cl_mem in, out;
    cl_ulong base;      /* first element of segment 0 in `in`            */
    size_t M, L;        /* segments, elements per segment                */
    ptrdiff_t ss, es;   /* strides in elements                           */
    gr_dtype t, rt;     /* float32/float64 in, float32/float64 out       */
    int nan, mean;      /* NaNs left out; divided by the count           */
    cl_ulong out_off;   /* out[out_off + m] gets segment m               */
} gr_exact_job;

/* 0, or -2 where the device cannot (why says so). */
int gr_plan_exact(const gr_device *d, size_t M, size_t L, gr_exact_plan *p);
int gr_exact_run(gr_device *d, const gr_exact_plan *p, const gr_exact_job *j,
                 gr_span *sp, gr_status *st);

#endif
