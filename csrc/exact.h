/*
 * exact.h — exact sums on a device: the job the family layer (exact.c)
 * enqueues for a gr_exact_plan (gpured.h, plan_exact.c); the host's twin
 * is host_exact.h.
 */
#ifndef GR_EXACT_H
#define GR_EXACT_H

#include "gpured.h"

/* longs a group writes: 68 digits, its flags, its count (kernels/exact.cl) */
#define GR_EXACT_PART 70

typedef struct {
    cl_mem in, out;
    cl_ulong base;      /* first element of segment 0 in `in`            */
    size_t M, L;        /* segments, elements per segment                */
    ptrdiff_t ss, es;   /* strides in elements                           */
    gr_dtype t, rt;     /* float32/float64 in, float32/float64 out       */
    int nan, mean;      /* NaNs left out; divided by the count           */
    cl_ulong out_off;   /* out[out_off + m] gets segment m               */
    int has_init;       /* sum's initial= joins the exact value          */
    double init;
} gr_exact_job;

int gr_exact_run(gr_device *d, const gr_exact_plan *p, const gr_exact_job *j,
                 gr_span *sp, gr_status *st);

#endif
