/*
 * gpured — enqueue the passes of a user-defined reduction (custom.h):
 *
 *   pass 1  elements -> states (M x parts)   gr_custom_group / _items
 *   pass 2  states   -> results (M)          only when parts > 1
 *
 * The program is kernels/custom.cl under the plan's knobs and the user's
 * defines (deterministic text: the disk cache keys on it).  Scratch comes
 * from the device's pool.  gr_lock held.
 */
#include "custom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int in_partial, final, wg, vw, ilp, load, combine, sg;
} cpass;

static cl_kernel custom_kernel(gr_device *d, const gr_custom_call *c,
                               const cpass *p, const char *name,
                               gr_status *st)
{
    const gr_custom_types *ty = &c->ty;
    const size_t n = strlen(c->user) + 1024;
    char *buf = malloc(n);
    if (buf == NULL) {
        gr_status_fail(st, "out of host memory");
        return NULL;
    }
    snprintf(buf, n,
             "#define GR_NEED_FP64 %d\n#define GR_T %s\n#define GR_A %s\n"
             "#define GR_R %s\n#define GR_AM %s\n#define GR_A_SIZE %d\n"
             "#define GR_X_SIZE %d\n#define GR_A_FLOAT %d\n#define GR_OP 8\n"
             "#define GR_A_MINV 0\n#define GR_A_MAXV 0\n"
             "#define GR_VW %d\n#define GR_WG %d\n#define GR_ILP %d\n"
             "#define GR_LOAD %d\n#define GR_COMBINE %d\n#define GR_SG %d\n"
             "#define GR_SG_NATIVE 0\n#define GR_IN_PARTIAL %d\n"
             "#define GR_FINAL %d\n%s\n",
             ty->fp64, ty->a_cl, ty->a_cl, ty->r_cl,
             ty->a_size == 8 ? "long" : ty->a_size == 2 ? "short"
             : ty->a_size == 1 ? "char" : "int",
             ty->a_size, ty->a_size, ty->a_float, p->vw, p->wg, p->ilp,
             p->load, p->combine, p->sg, p->in_partial, p->final, c->user);
    /* the build options: OpenCL C 2.0+ for khr sub-groups, then the
     * user's (part of the program cache's key) */
    char opts[GR_USER_OPTS_MAX + 48] = "";
    const char *uo = ty->opts ? ty->opts : "";
    if (p->sg == 2 && d->c_std[0] != '\0') {
        snprintf(opts, sizeof opts, "-cl-std=%s%s%s", d->c_std,
                 uo[0] ? " " : "", uo);
    } else {
        snprintf(opts, sizeof opts, "%s", uo);
    }
    cl_kernel k = gr_kernel_get(d, "custom", buf, opts, name, st);
    free(buf);
    return k;
}

/* One pass: the group kernel (segments' elements contiguous) in batches
 * of at most 2^24 work-groups, or the items kernel.  args: the inputs
 * (pass 1) or the partial states (pass 2). */
static int launch(gr_device *d, cl_kernel k, int group, int wg,
                  const gr_arg *uargs, int nu, cl_ulong L, cl_ulong seg_stride,
                  cl_ulong elem_stride, cl_ulong chunk, cl_ulong parts,
                  cl_ulong M, cl_ulong out0, cl_mem outv, cl_mem outx,
                  cl_ulong post_L, gr_span *sp, gr_status *st)
{
    gr_arg a[GR_CUSTOM_MAXARGS + 16];
    const cl_ulong base = 0;
    const cl_uint uparts = (cl_uint)parts;
    memcpy(a, uargs, (size_t)nu * sizeof *a);
    if (group) {
        cl_ulong batch = ((cl_ulong)1 << 24) / parts;
        batch = batch < 1 ? 1 : batch;
        for (cl_ulong s0 = 0; s0 < M; s0 += batch) {
            const cl_ulong nseg = M - s0 < batch ? M - s0 : batch;
            const size_t local = (size_t)wg;
            const size_t global = (size_t)(nseg * parts * (cl_ulong)wg);
            const gr_arg rest[] = {GR_ARG(base), GR_ARG(L), GR_ARG(seg_stride),
                                   GR_ARG(chunk), GR_ARG(uparts), GR_ARG(s0),
                                   GR_ARG(out0), GR_ARG(outv), GR_ARG(outx),
                                   GR_ARG(post_L), GR_ARG(M)};
            memcpy(a + nu, rest, sizeof rest);
            if (gr_launch(d, k, 1, &global, &local, a, nu + 11, NULL, sp,
                          st) != 0) {
                return -1;
            }
        }
        return 0;
    }
    size_t lw = (size_t)(wg > 0 ? wg : 64);
    const size_t lim = gr_kernel_wg_limit(d, k);
    while (lw > lim) {
        lw /= 2;
    }
    const size_t local[2] = {lw, 1};
    const size_t global[2] = {(size_t)((M + lw - 1) / lw * lw), (size_t)parts};
    const gr_arg rest[] = {GR_ARG(base),  GR_ARG(L),    GR_ARG(seg_stride),
                           GR_ARG(elem_stride), GR_ARG(chunk), GR_ARG(M),
                           GR_ARG(out0),  GR_ARG(outv), GR_ARG(outx),
                           GR_ARG(post_L), GR_ARG(M)};
    memcpy(a + nu, rest, sizeof rest);
    return gr_launch(d, k, 2, global, local, a, nu + 11, NULL, sp, st);
}

/* Pass 2: M x parts partial states (pv, px) -> results. */
static int pass2(gr_device *d, const gr_custom_call *c, const gr_plan *plan,
                 cl_mem pv, cl_mem px, gr_span *sp, gr_status *st)
{
    const cl_ulong parts = plan->parts, M = c->lay.M;
    const cpass p2 = {1, 1, plan->wg2 ? plan->wg2 : 1, 1, 1, 0, 2, 0};
    cl_kernel k2 = custom_kernel(d, c, &p2,
                                 plan->wg2 ? "gr_custom_group" : "gr_custom_items",
                                 st);
    const gr_arg pa[] = {GR_ARG(pv), px ? GR_ARG(px) : GR_ARG(pv)};
    if (k2 == NULL) {
        return -1;
    }
    return launch(d, k2, plan->wg2 != 0, plan->wg2 ? plan->wg2 : 64, pa, 2,
                  parts, parts, 1, parts, 1, M, c->out0, c->out,
                  c->out, (cl_ulong)c->lay.L, sp, st);
}

int gr_custom_run(gr_device *d, const gr_custom_call *c, const gr_plan *plan,
                  double *ns, gr_status *st)
{
    const gr_layout *lay = &c->lay;
    const int two = plan->parts > 1;
    const int group = plan->kind == GR_K_GROUP && lay->L > 0;
    const cpass p1 = {0, !two, plan->wg, group ? plan->vw : 1, plan->ilp,
                      plan->load, plan->combine, plan->sg};
    gr_span sp = {NULL, NULL};
    gr_block *pv = NULL, *px = NULL;
    int rc = -1;
    if (lay->M == 0) {
        return 0;
    }
    cl_kernel k = custom_kernel(d, c, &p1,
                                group ? "gr_custom_group" : "gr_custom_items",
                                st);
    if (k == NULL) {
        return -1;
    }
    const cl_ulong parts = two ? plan->parts : 1;
    const cl_ulong chunk = lay->L > 0 ? plan->chunk : 0;
    if (two) {
        const size_t n = lay->M * plan->parts;
        if ((pv = gr_block_get(d, n * (size_t)c->ty.a_size, st)) == NULL ||
            (c->ty.x_size &&
             (px = gr_block_get(d, n * (size_t)c->ty.x_size, st)) == NULL)) {
            goto done;
        }
    }
    cl_mem ov = two ? pv->mem : c->out;
    cl_mem ox = two && px ? px->mem : ov;
    if (launch(d, k, group, plan->wg, c->args, c->nargs, lay->L,
               (cl_ulong)lay->seg_stride, (cl_ulong)lay->elem_stride, chunk,
               parts, lay->M, two ? 0 : c->out0, ov, ox, lay->L,
               ns ? &sp : NULL, st) != 0 ||
        (two && pass2(d, c, plan, pv->mem, px ? px->mem : NULL,
                      ns ? &sp : NULL, st) != 0)) {
        goto done;
    }
    rc = 0;
    if (ns != NULL) {
        clFinish(d->queue);
        *ns = gr_span_ns(&sp);
    }
done:
    gr_span_release(&sp);
    if (pv) {
        gr_block_put(pv);
    }
    if (px) {
        gr_block_put(px);
    }
    return rc;
}
