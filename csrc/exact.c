/*
 * exact.c — exact sums on a device (family layer): enqueue the two passes
 * of kernels/exact.cl that a gr_exact_plan (plan_exact.c) describes.
 *
 *   pass 1  gr_exact_part   groups x segments: each group's long
 *                           accumulator, flags and count into `part`
 *                           (a pool block, GR_EXACT_PART longs a group)
 *   pass 2  gr_exact_final  a group per segment: the groups' digits
 *                           summed, rounded once into out[out_off + m]
 *
 * Enqueues and returns; the caller waits where its output is on the host.
 */
#include "gpured.h"
#include "exact.h"

#include <stdio.h>

/* The program's #defines: common.cl's own macros as for a plain double
 * sum (the file needs them to compile), then the exact kernels' own. */
static int exact_defines(const gr_exact_plan *p, gr_dtype t, gr_dtype rt,
                         int nan, int mean, char *buf, size_t n)
{
    const int f32 = rt == GR_FLOAT32;
    const int w = snprintf(
        buf, n,
        "#define GR_NEED_FP64 1\n#define GR_T double\n#define GR_A double\n"
        "#define GR_R double\n#define GR_AM long\n#define GR_A_SIZE 8\n"
        "#define GR_X_SIZE 0\n#define GR_A_FLOAT 1\n#define GR_OP 0\n"
        "#define GR_CVT 1\n#define GR_COMP 0\n#define GR_A_MINV (-INFINITY)\n"
        "#define GR_A_MAXV INFINITY\n#define GR_VW 1\n#define GR_WG %d\n"
        "#define GR_ILP 1\n#define GR_SG 0\n"
        "#define GR_EX_T %s\n#define GR_EX_R %s\n#define GR_EX_WG %d\n"
        "#define GR_EX_K %d\n#define GR_EX_NAN %d\n#define GR_EX_MEAN %d\n"
        "#define GR_EX_PREC %d\n#define GR_EX_LSB %d\n#define GR_EX_RMAX %s\n"
        "#define GR_EX_U %d\n",
        p->wg, t == GR_FLOAT32 ? "float" : "double",
        f32 ? "float" : "double", p->wg, p->k, nan, mean, f32 ? 24 : 53,
        f32 ? 1074 - 149 : 0,
        f32 ? "0x1.fffffep127" : "0x1.fffffffffffffp1023", p->u);
    return w > 0 && (size_t)w < n ? 0 : -1;
}

int gr_exact_run(gr_device *d, const gr_exact_plan *p, const gr_exact_job *j,
                 gr_span *sp, gr_status *st)
{
    char defs[1024];
    gr_block *part = NULL;
    int rc = -1;
    if (exact_defines(p, j->t, j->rt, j->nan, j->mean, defs, sizeof defs)) {
        gr_status_fail(st, "exact sum: kernel options too long");
        return -1;
    }
    cl_kernel k1 = gr_kernel_get(d, "exact", defs, "", "gr_exact_part", st);
    cl_kernel k2 = k1 ? gr_kernel_get(d, "exact", defs, "", "gr_exact_final",
                                      st)
                      : NULL;
    if (k2 == NULL) {
        return -1;
    }
    const cl_ulong G = p->groups, M = j->M, L = j->L, base = j->base;
    const cl_long ss = j->ss, es = j->es;
    const cl_ulong off = j->out_off;
    const cl_int has_init = j->has_init;
    const cl_double init = j->init;
    part = gr_block_get(d, (size_t)(M * G) * GR_EXACT_PART * sizeof(cl_long),
                        st);
    if (part == NULL) {
        return -1;
    }
    const size_t g1[2] = {(size_t)G * p->wg, (size_t)M}, l1[2] = {p->wg, 1};
    const gr_arg a1[] = {GR_ARG(j->in), GR_ARG(base), GR_ARG(L), GR_ARG(ss),
                         GR_ARG(es), GR_ARG(part->mem)};
    if (gr_launch(d, k1, 2, g1, l1, a1, 6, NULL, sp, st) != 0 ||
        GR_LAUNCH1(d, k2, (size_t)M * p->wg, p->wg, sp, st,
                   GR_ARG(part->mem), GR_ARG(G), GR_ARG(L), GR_ARG(j->out),
                   GR_ARG(off), GR_ARG(has_init), GR_ARG(init)) != 0) {
        goto fail;
    }
    rc = 0;
fail:
    gr_block_put(part); /* stream order: free once its uses are enqueued */
    return rc;
}
