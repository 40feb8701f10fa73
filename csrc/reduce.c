/*
 * gpured — enqueue the passes a reduction plan describes.
 *
 *   pass 1  elements  -> states  (M x parts)   gr_reduce_group / _items
 *   pass 2  states    -> results (M)           only when parts > 1
 *
 * Scratch: one buffer of M x parts accumulator values (plus one of
 * auxiliary states for compensated sums and argmin/argmax), released before
 * returning.  Runs without the GIL; failures are reported through st.
 */
#include "gpured.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int in_partial;
    int final;
    int wg, vw, ilp;
    int load, combine, sg, sg_native, atomic;
} pass_cfg;

static const char *result_cl(gr_op op, const gr_accum *acc)
{
    if (op == GR_ARGMIN || op == GR_ARGMAX) {
        return "long";
    }
    return gr_dtypes[acc->r].cl;
}

size_t gr_result_size(gr_op op, const gr_accum *acc)
{
    return (op == GR_ARGMIN || op == GR_ARGMAX) ? 8
                                                : (size_t)gr_dtypes[acc->r].size;
}

/* The #define block that specialises kernels/reduce.cl. */
static void defines(char *buf, size_t n, gr_op op, const gr_accum *acc,
                    const pass_cfg *c)
{
    const int fp64 = acc->a_size == 8 && strcmp(acc->a_cl, "double") == 0;
    const int x_size = (op == GR_ARGMIN || op == GR_ARGMAX) ? 8 : acc->a_size;
    snprintf(buf, n,
             "#define GR_NEED_FP64 %d\n"
             "#define GR_T %s\n#define GR_A %s\n#define GR_R %s\n"
             "#define GR_AM %s\n#define GR_A_SIZE %d\n#define GR_X_SIZE %d\n"
             "#define GR_A_FLOAT %d\n"
             "#define GR_OP %d\n#define GR_CVT %d\n#define GR_COMP %d\n"
             "#define GR_A_MINV %s\n#define GR_A_MAXV %s\n"
             "#define GR_VW %d\n#define GR_WG %d\n#define GR_ILP %d\n"
             "#define GR_LOAD %d\n#define GR_COMBINE %d\n#define GR_SG %d\n"
             "#define GR_SG_NATIVE %d\n#define GR_ATOMIC %d\n"
             "#define GR_IN_PARTIAL %d\n#define GR_FINAL %d\n",
             fp64 || acc->t == GR_FLOAT64 || acc->r == GR_FLOAT64,
             gr_dtypes[acc->t].cl, acc->a_cl, result_cl(op, acc),
             acc->a_size == 1   ? "char"
             : acc->a_size == 2 ? "short"
             : acc->a_size == 4 ? "int"
                                : "long",
             acc->a_size, x_size,
             strcmp(acc->a_cl, "float") == 0 || strcmp(acc->a_cl, "double") == 0,
             (int)op, acc->cvt, acc->comp, acc->a_min, acc->a_max, c->vw,
             c->wg, c->ilp, c->load, c->combine, c->sg, c->sg_native,
             c->atomic, c->in_partial, c->final);
}

static cl_kernel get_kernel(gr_device *d, gr_op op, const gr_accum *acc,
                            const pass_cfg *c, const char *name,
                            gr_status *st)
{
    char defs[1400], opts[64] = "";
    defines(defs, sizeof defs, op, acc, c);
    /* Work-group collectives and khr sub-groups need OpenCL C 2.0/3.0. */
    if ((c->combine == 5 || c->sg == 2) && d->c_std[0] != '\0') {
        snprintf(opts, sizeof opts, "-cl-std=%s", d->c_std);
    }
    return gr_kernel_get(d, "reduce", defs, opts, name, st);
}

/* Largest work-group the compiled kernel allows. */
static size_t kernel_wg_limit(gr_device *d, cl_kernel k)
{
    size_t lim = d->max_wg;
    clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof lim,
                             &lim, NULL);
    return lim ? lim : 1;
}

#define ARG(k, i, v) GR_CL_CHECK_AS(st, "clSetKernelArg", clSetKernelArg(k, i, sizeof(v), &(v)))

/* Enqueue one pass.  in/inx: elements or states; outv/outx: states or
 * results.  For the group kernel segments are launched in batches so that
 * no launch has more than 2^24 work-groups. */
static int enqueue_pass(gr_device *d, cl_kernel k, gr_kernel_kind kind,
                        int wg, int vw, cl_mem in, cl_mem inx, cl_ulong base,
                        cl_ulong L, cl_ulong seg_stride, cl_ulong elem_stride,
                        cl_ulong chunk, cl_ulong parts, cl_ulong M,
                        cl_ulong idx0, cl_ulong out0, cl_mem outv,
                        cl_mem outx, cl_event ready, gr_span *sp,
                        gr_status *st)
{
    const cl_uint nwait = ready != NULL;
    cl_event ev = NULL;
    ARG(k, 0, in);
    ARG(k, 1, inx);
    ARG(k, 2, base);
    ARG(k, 3, L);
    ARG(k, 4, seg_stride);
    ARG(k, 8, idx0);
    ARG(k, 9, out0);
    ARG(k, 10, outv);
    ARG(k, 11, outx);
    if (kind == GR_K_GROUP) {
        cl_uint uparts = (cl_uint)parts;
        ARG(k, 5, chunk);
        ARG(k, 6, uparts);
        const cl_ulong batch = ((cl_ulong)1 << 24) / parts;
        for (cl_ulong s0 = 0; s0 < M; s0 += batch) {
            cl_ulong nseg = M - s0 < batch ? M - s0 : batch;
            size_t local = (size_t)wg, global = (size_t)(nseg * parts * wg);
            ARG(k, 7, s0);
            GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, k, 1, NULL,
                                                   &global, &local, nwait,
                                                   nwait ? &ready : NULL, &ev));
            gr_span_add(sp, ev);
            ev = NULL;
        }
    } else {
        ARG(k, 5, elem_stride);
        ARG(k, 6, chunk);
        ARG(k, 7, M);
        size_t lim = kernel_wg_limit(d, k);
        size_t lw = (size_t)wg;
        while (lw > lim) {
            lw /= 2;
        }
        size_t local[2] = {lw, 1};
        const cl_ulong items = (M + vw - 1) / vw; /* vw segments per item */
        size_t global[2] = {(size_t)((items + lw - 1) / lw * lw), (size_t)parts};
        GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, k, 2, NULL, global,
                                               local, nwait,
                                               nwait ? &ready : NULL, &ev));
        gr_span_add(sp, ev);
        ev = NULL;
    }
    return 0;
fail:
    if (ev != NULL) {
        clReleaseEvent(ev);
    }
    return -1;
}

/* Pass 1 over every piece of the input: piece i's element indices start
 * after the pieces before it, and its partial states after theirs (the
 * atomic variant ignores out0: its groups merge into outv[seg]).  With a
 * source, each piece's buffer is produced just before its pass (streamed
 * from the host) and handed back with the event of the pass that read it. */
static int enqueue_pieces(gr_device *d, cl_kernel k, const gr_plan *plan,
                          const gr_layout *lay, const gr_piece *pieces_in,
                          int npieces, const gr_source *src, cl_mem outv,
                          cl_mem outx, gr_span *sp, gr_status *st)
{
    size_t idx0 = 0, out0 = 0;
    for (int i = 0; i < npieces; ++i) {
        gr_piece piece = pieces_in[i];
        cl_event ready = NULL;
        gr_span one = {NULL, NULL};
        if (src != NULL && src->next(src->ctx, i, &piece, &ready, st) != 0) {
            return -1;
        }
        size_t parts_i = npieces > 1
                             ? (piece.len + plan->chunk - 1) / plan->chunk
                             : plan->parts;
        int rc = enqueue_pass(d, k, plan->kind, plan->wg, plan->vw, piece.mem,
                              NULL, piece.base, piece.len, lay->seg_stride,
                              lay->elem_stride, plan->chunk, parts_i, lay->M,
                              idx0, out0, outv, outx, ready,
                              src != NULL ? &one : sp, st);
        if (src != NULL) {
            /* `one` holds a reference to its first and last events. */
            if (rc == 0 && one.last != NULL) {
                clRetainEvent(one.last);
                src->done(src->ctx, i, one.last);
            }
            if (sp != NULL && one.first != NULL) {
                gr_span_add(sp, one.first);
                gr_span_add(sp, one.last);
                one.first = one.last = NULL;
            }
            gr_span_release(&one);
        }
        if (rc != 0) {
            return -1;
        }
        idx0 += piece.len;
        out0 += parts_i;
    }
    return 0;
}

int gr_reduce_run(gr_device *d, gr_op op, const gr_accum *acc,
                  const gr_layout *lay, const gr_plan *plan_in,
                  const gr_piece *pieces, int npieces, const gr_source *src,
                  const gr_output *out, gr_timing *timing, gr_status *st)
{
    cl_int err = CL_SUCCESS;
    cl_mem pv = NULL, px = NULL, outv = NULL, accv = NULL, resv = NULL;
    cl_ulong res0 = 0;
    gr_span s1 = {NULL, NULL}, s2 = {NULL, NULL};
    gr_plan plan = *plan_in;
    size_t total_parts = 0;
    const size_t rsize = gr_result_size(op, acc);
    const size_t M = lay->M;
    cl_kernel k1 = NULL, k2 = NULL;
    int rc = -1;

    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    /* Several pieces (one segment larger than a buffer may be): every
     * piece is a run of whole chunks, and pass 2 merges all their parts. */
    for (int i = 0; i < npieces; ++i) {
        total_parts += (pieces[i].len + plan.chunk - 1) / plan.chunk;
    }
    if ((npieces > 1 || src != NULL) && !plan.atomic) {
        plan.passes = 2;
        plan.parts = total_parts;
    }
    /* Pass 1 kernel; shrink the work-group if the compiled kernel needs to
     * (PyOpenCL's habit: CL_KERNEL_WORK_GROUP_SIZE has the last word). */
    for (;;) {
        pass_cfg c1 = {0,         plan.passes == 1, plan.wg,
                       plan.vw,   plan.ilp,         plan.load,
                       plan.combine, plan.sg,       plan.sg_native,
                       plan.atomic};
        const char *name = plan.kind == GR_K_GROUP ? "gr_reduce_group"
                                                   : "gr_reduce_items";
        k1 = get_kernel(d, op, acc, &c1, name, st);
        if (k1 == NULL) {
            goto fail;
        }
        if (plan.kind != GR_K_GROUP || plan.wg == 1 ||
            kernel_wg_limit(d, k1) >= (size_t)plan.wg) {
            break;
        }
        plan.wg /= 2;
    }
    if (plan.passes > 1) {
        pass_cfg c2 = {1, 1, plan.wg2 ? plan.wg2 : 1, 1, 1, 0, 2, 0, 0, 0};
        k2 = get_kernel(d, op, acc, &c2,
                        plan.wg2 ? "gr_reduce_group" : "gr_reduce_items", st);
        if (k2 == NULL) {
            goto fail;
        }
        pv = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                            M * plan.parts * acc->a_size, NULL, &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        if (acc->x_size) {
            px = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                                M * plan.parts * acc->x_size, NULL, &err);
            GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        }
    }
    /* Results go straight into the caller's device buffer, if any (the
     * atomic variant's finish kernel has no offset: it copies). */
    if (out->mem != NULL && !plan.atomic) {
        resv = out->mem;
        res0 = out->off;
    } else {
        outv = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, M * rsize, NULL, &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        resv = outv;
    }

    if (plan.atomic) {
        /* One pass over the data: identity, CAS merges, result type. */
        cl_kernel ki = get_kernel(d, op, acc, &(pass_cfg){0, 1, plan.wg, plan.vw,
                                  plan.ilp, plan.load, plan.combine, 0, 0, 1},
                                  "gr_reduce_init", st);
        cl_kernel kf = ki ? get_kernel(d, op, acc, &(pass_cfg){0, 1, plan.wg,
                                       plan.vw, plan.ilp, plan.load,
                                       plan.combine, 0, 0, 1},
                                       "gr_reduce_finish", st)
                          : NULL;
        size_t g = (M + 63) / 64 * 64, l = 64;
        cl_ulong m = M;
        if (kf == NULL) {
            goto fail;
        }
        accv = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, M * acc->a_size, NULL,
                              &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        ARG(ki, 0, accv);
        ARG(ki, 1, m);
        GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, ki, 1, NULL, &g, &l,
                                               0, NULL, NULL));
        if (enqueue_pieces(d, k1, &plan, lay, pieces, npieces, src, accv,
                           NULL, timing ? &s1 : NULL, st) != 0) {
            goto fail;
        }
        ARG(kf, 0, accv);
        ARG(kf, 1, outv);
        ARG(kf, 2, m);
        GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, kf, 1, NULL, &g, &l,
                                               0, NULL, NULL));
    } else if (plan.passes == 1) {
        if (enqueue_pass(d, k1, plan.kind, plan.wg, plan.vw, pieces[0].mem, NULL,
                         pieces[0].base, lay->L, lay->seg_stride,
                         lay->elem_stride, plan.chunk, 1, M, 0, res0, resv,
                         NULL, NULL, timing ? &s1 : NULL, st) != 0) {
            goto fail;
        }
    } else {
        if (enqueue_pieces(d, k1, &plan, lay, pieces, npieces, src, pv, px,
                           timing ? &s1 : NULL, st) != 0) {
            goto fail;
        }
        if (enqueue_pass(d, k2, plan.wg2 ? GR_K_GROUP : GR_K_ITEMS,
                         plan.wg2 ? plan.wg2 : (d->is_gpu ? 256 : 64), 1, pv, px,
                         0, plan.parts, plan.parts, 1, plan.parts, 1, M, 0,
                         res0, resv, NULL, NULL, timing ? &s2 : NULL,
                         st) != 0) {
            goto fail;
        }
    }
    if (out->mem == NULL) {
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, outv, CL_TRUE, 0,
                                            M * rsize, out->host, 0, NULL,
                                            NULL));
    } else if (resv != out->mem) {
        GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, outv, out->mem, 0,
                                            out->off * rsize, M * rsize, 0,
                                            NULL, NULL));
    }
    if (timing != NULL) {
        /* Device results are not waited for, except when timed. */
        GR_CL_CHECK(st, clFinish(d->queue));
    }
    if (timing != NULL) {
        timing->first_ns = gr_span_ns(&s1);
        timing->second_ns = gr_span_ns(&s2);
    }
    rc = 0;
fail:
    if (rc != 0) {
        clFinish(d->queue);
    }
    gr_span_release(&s1);
    gr_span_release(&s2);
    if (pv) clReleaseMemObject(pv);
    if (px) clReleaseMemObject(px);
    if (outv) clReleaseMemObject(outv);
    if (accv) clReleaseMemObject(accv);
    return rc;
}
