/*
 * gpured — enqueue the passes a reduction plan describes.
 *
 *   pass 1  elements  -> states  (M x parts)   gr_reduce_group / _items
 *   pass 2  states    -> results (M)           only when parts > 1
 *   atomic  init -> pass 1 merging into M accumulators by CAS -> finish
 *
 * Scratch (M x parts states, plus their auxiliary words for compensated
 * sums and argmin/argmax) comes from the device's pool and goes back as
 * soon as the passes that use it are enqueued.  Nothing here waits, except
 * for host results (a blocking read) and timed runs.  Runs without the GIL
 * and with gr_lock held; failures are reported through st.
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
    int lanes;  /* GR_K_WARP: work-items per segment (GR_SEG_LANES; 0 else) */
    int hf;     /* halves: GR_HF, aligned loads (sums folded; gr_plan.hf) */
    int viters; /* GR_K_WARP: GR_SEG_VITERS (gr_plan.viters; 0 none) */
} pass_cfg;

/* What decides a reduce program's defines (the kernel memo's key). */
typedef struct {
    int op, t, r, a_size, cvt, comp, x_size, a_float, fp64, neg0, nan, var,
        ptp, where, wt, waxis;
    int md, mf64; /* a mean's fused division (final passes): its dtype + 1,
                   * and whether it divides in double */
    char a_cl[8];
    pass_cfg c;
} kkey;
_Static_assert(sizeof(kkey) <= GR_MEMO_KEY,
               "kkey outgrew the kernel memo's key (every call would miss)");

static const char *result_cl(int op, gr_dtype r)
{
    if (op == GR_ARGMIN || op == GR_ARGMAX) {
        return "long";
    }
    return gr_dtypes[r].cl;
}

size_t gr_result_size(gr_op op, const gr_accum *acc)
{
    return (op == GR_ARGMIN || op == GR_ARGMAX) ? 8
           : acc->md                         ? (size_t)gr_dtypes[acc->md - 1].size
                                              : (size_t)gr_dtypes[acc->r].size;
}

/* The #define block that specialises kernels/reduce.cl. */
static void defines(const void *ctx, char *buf, size_t n)
{
    const kkey *k = ctx;
    const pass_cfg *c = &k->c;
    const int x_size = (k->op == GR_ARGMIN || k->op == GR_ARGMAX) ? 8
                                                                  : k->a_size;
    const char *a_min = "0", *a_max = "0";
    if (k->op == GR_MIN || k->op == GR_MAX || k->op == GR_ARGMIN ||
        k->op == GR_ARGMAX) {
        a_min = gr_dtypes[k->t].minv;
        a_max = gr_dtypes[k->t].maxv;
    }
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
             "#define GR_IN_PARTIAL %d\n#define GR_FINAL %d\n"
             "#define GR_NEG0 %d\n#define GR_NAN %d\n#define GR_VAR %d\n"
             "#define GR_PTP %d\n",
             k->fp64, gr_dtypes[k->t].cl, k->a_cl, result_cl(k->op, k->r),
             k->a_size == 1   ? "char"
             : k->a_size == 2 ? "short"
             : k->a_size == 4 ? "int"
                              : "long",
             k->a_size, x_size, k->a_float, k->op, k->cvt, k->comp, a_min,
             a_max, c->vw, c->wg, c->ilp, c->load, c->combine, c->sg,
             c->sg_native, c->atomic, c->in_partial, c->final, k->neg0,
             k->nan, k->var, k->ptp);
    if (GR_IS_HALF(k->t)) {
        /* float16 / bfloat16 storage (common.cl GR_ELT): only theirs */
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, "#define GR_ELT %d\n",
                 k->t == GR_FLOAT16 ? 1 : 2);
    }
    if (c->hf) {
        /* halves: aligned loads of vw * hf, sums folded in float */
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used,
                 "#define GR_HF %d\n#define GR_LW %d\n#define GR_LWU %d\n",
                 c->hf, c->vw * c->hf, c->vw * c->hf / 2);
    }
    if (c->lanes) {
        /* only reduceat's programs: the others' sources stay as they were
         * (their disk cache with them) */
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, "#define GR_SEG_LANES %d\n", c->lanes);
    }
    if (c->viters) {
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, "#define GR_SEG_VITERS %d\n",
                 c->viters);
    }
    if (k->md) {
        /* a mean's final pass divides (only those programs say so) */
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used,
                 "#define GR_MDIV 1\n#define GR_MD %s\n#define GR_MF %s\n",
                 gr_dtypes[k->md - 1].cl, k->mf64 ? "double" : "float");
    }
    if (k->where) {
        /* a second operand (where=, weights): only its programs say so */
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used,
                 "#define GR_WHERE %d\n#define GR_WT %s\n#define GR_WAXIS %d\n",
                 k->where, gr_dtypes[k->wt].cl, k->waxis);
    }
}

static cl_kernel kernel_in(gr_device *d, const char *family, gr_op op,
                           const gr_accum *acc, const pass_cfg *c,
                           const char *name, gr_status *st)
{
    kkey k;
    memset(&k, 0, sizeof k);
    k.op = (int)op;
    k.t = (int)acc->t;
    k.r = (int)acc->r;
    k.a_size = acc->a_size;
    k.cvt = acc->cvt;
    k.comp = acc->comp;
    k.x_size = acc->x_size;
    k.neg0 = acc->neg0;
    k.nan = acc->nan;
    k.var = acc->var;
    k.ptp = acc->ptp;
    k.where = c->in_partial ? 0 : acc->where;
    k.wt = k.where ? (int)acc->wt : 0;
    k.waxis = k.where ? acc->waxis : 0;
    k.a_float = strcmp(acc->a_cl, "float") == 0 ||
                strcmp(acc->a_cl, "double") == 0;
    k.fp64 = (acc->a_size == 8 && strcmp(acc->a_cl, "double") == 0) ||
             acc->t == GR_FLOAT64 || acc->r == GR_FLOAT64;
    if (c->final && acc->md) {
        k.md = acc->md;
        k.mf64 = d->fp64;
        k.fp64 = k.fp64 || k.mf64 || acc->md - 1 == GR_FLOAT64;
    }
    snprintf(k.a_cl, sizeof k.a_cl, "%s", acc->a_cl);
    k.c = *c;
    /* Work-group collectives and khr sub-groups need OpenCL C 2.0/3.0. */
    const char *opts = "";
    char optbuf[32];
    if ((c->combine == 5 || c->sg == 2) && d->c_std[0] != '\0') {
        snprintf(optbuf, sizeof optbuf, "-cl-std=%s", d->c_std);
        opts = optbuf;
    }
    return gr_kernel_memo(d, family, &k, sizeof k, name, defines, &k, opts,
                          st);
}

static cl_kernel get_kernel(gr_device *d, gr_op op, const gr_accum *acc,
                            const pass_cfg *c, const char *name,
                            gr_status *st)
{
    return kernel_in(d, "reduce", op, acc, c, name, st);
}

/* Enqueue one pass.  in/inx: elements or states; outv/outx: states or
 * results; cnt: nanvar's counts beside the partial states (written by
 * pass 1, read by pass 2), else NULL.  For the group kernel segments are
 * launched in batches so that no launch has more than 2^24 work-groups
 * (and at least one segment). */
static int enqueue_pass(gr_device *d, const gr_accum *acc, cl_kernel k,
                        gr_kernel_kind kind, int wg, int vw, int lanes,
                        int ilp, cl_mem in,
                        cl_mem inx, cl_mem cnt, cl_ulong base,
                        cl_ulong L, cl_ulong seg_stride, cl_ulong elem_stride,
                        cl_ulong chunk, cl_ulong parts, cl_ulong M,
                        cl_ulong idx0, cl_ulong out0, cl_mem outv,
                        cl_mem outx, cl_mem wm, cl_long wdelta,
                        cl_event ready, gr_span *sp, gr_status *st)
{
    /* var/std: the shift and ddof in the accumulator's type, whether the
     * kernels read each segment's shift, n, nanvar's counts */
    unsigned char vk[8] = {0}, vd[8] = {0};
    const cl_uint vself = acc->var_self;
    const cl_ulong vn = acc->var_n;
    const gr_arg varg = {(size_t)acc->a_size, vk};
    const gr_arg darg = {(size_t)acc->a_size, vd};
    const gr_arg carg = cnt ? GR_ARG(cnt) : GR_NULLMEM;
    if (acc->var && acc->a_size == 8) {
        const double k8 = acc->var_k, d8 = acc->var_ddof;
        memcpy(vk, &k8, 8);
        memcpy(vd, &d8, 8);
    } else if (acc->var && acc->a_size == 4) {
        const float k4 = (float)acc->var_k, d4 = (float)acc->var_ddof;
        memcpy(vk, &k4, 4);
        memcpy(vd, &d4, 4);
    }
    if (kind == GR_K_GROUP) {
        const cl_uint uparts = (cl_uint)parts;
        cl_ulong batch = ((cl_ulong)1 << 24) / parts;
        if (batch < 1) {
            batch = 1;
        }
        for (cl_ulong s0 = 0; s0 < M; s0 += batch) {
            const cl_ulong nseg = M - s0 < batch ? M - s0 : batch;
            const size_t local = (size_t)wg;
            const size_t global = (size_t)(nseg * parts * (cl_ulong)wg);
            const gr_arg args[] = {
                GR_ARG(in),    GR_ARG(inx),  GR_ARG(base), GR_ARG(L),
                GR_ARG(seg_stride), GR_ARG(chunk), GR_ARG(uparts),
                GR_ARG(s0),    GR_ARG(idx0), GR_ARG(out0), GR_ARG(outv),
                GR_ARG(outx),  varg,         GR_ARG(vself), GR_ARG(vn),
                darg,          carg,         GR_ARG(wm),   GR_ARG(wdelta)};
            if (gr_launch(d, k, 1, &global, &local, args, 19,
                          s0 == 0 ? ready : NULL, sp, st) != 0) {
                return -1;
            }
        }
        return 0;
    }
    size_t lw = (size_t)wg;
    const size_t lim = gr_kernel_wg_limit(d, k);
    while (lw > lim) {
        lw /= 2;
    }
    const size_t local[2] = {lw, 1};
    /* GR_K_WARP: `lanes` work-items per segment, whole warps of them
     * (read as vectors: each lane ilp rows), else one per vw */
    const cl_ulong rpw = kind == GR_K_WARP ? (cl_ulong)(32 / lanes) *
                                                 (vw > 1 ? (cl_ulong)ilp : 1)
                                           : 1;
    const cl_ulong items = kind == GR_K_WARP ? (M + rpw - 1) / rpw * 32
                                             : (M + (cl_ulong)vw - 1) / (cl_ulong)vw;
    const size_t global[2] = {(size_t)((items + lw - 1) / lw * lw),
                              (size_t)parts};
    const gr_arg args[] = {GR_ARG(in),          GR_ARG(inx),  GR_ARG(base),
                           GR_ARG(L),           GR_ARG(seg_stride),
                           GR_ARG(elem_stride), GR_ARG(chunk), GR_ARG(M),
                           GR_ARG(idx0),        GR_ARG(out0), GR_ARG(outv),
                           GR_ARG(outx),        varg,         GR_ARG(vself),
                           GR_ARG(vn),          darg,         carg,
                           GR_ARG(wm),          GR_ARG(wdelta)};
    return gr_launch(d, k, 2, global, local, args, 19, ready, sp, st);
}

/* Pass 1 over every piece of the input: piece i's element indices start
 * after the pieces before it, and its partial states after theirs (the
 * atomic variant ignores out0: its groups merge into outv[seg]).  With a
 * source, each piece's buffer is produced just before its pass (streamed
 * from the host) and handed back with the event of the pass that read it. */
static int enqueue_pieces(gr_device *d, const gr_accum *acc, cl_kernel k,
                          const gr_plan *plan,
                          const gr_layout *lay, const gr_piece *pieces_in,
                          int npieces, const gr_source *src, cl_mem outv,
                          cl_mem outx, cl_mem cnt, gr_span *sp, gr_status *st)
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
        int rc = enqueue_pass(d, acc, k, plan->kind, plan->wg, plan->vw,
                              plan->lanes, plan->ilp, piece.mem,
                              NULL, cnt, piece.base, piece.len, lay->seg_stride,
                              lay->elem_stride, plan->chunk, parts_i, lay->M,
                              idx0, out0, outv, outx, piece.wmem,
                              (cl_long)piece.wdelta, ready,
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

/* Pass 2's kernel (partial states in, results out) and the scratch for
 * M x plan->parts partial states: values, auxiliary words, nanvar's counts
 * (pc, when given and the accumulator counts). */
static int pass2_begin(gr_device *d, gr_op op, const gr_accum *acc,
                       const gr_plan *plan, cl_ulong M, cl_kernel *k2,
                       gr_block **pv, gr_block **px, gr_block **pc,
                       gr_status *st)
{
    const pass_cfg c2 = {1, 1, plan->wg2 ? plan->wg2 : 1, 1, 1, 0, 2, 0, 0,
                         0};
    const size_t n = M * plan->parts;
    *k2 = get_kernel(d, op, acc, &c2,
                     plan->wg2 ? "gr_reduce_group" : "gr_reduce_items", st);
    if (*k2 == NULL || (*pv = gr_block_get(d, n * acc->a_size, st)) == NULL ||
        (acc->x_size && (*px = gr_block_get(d, n * acc->x_size, st)) == NULL) ||
        (pc != NULL && acc->var && acc->nan &&
         (*pc = gr_block_get(d, n * 8, st)) == NULL)) {
        return -1;
    }
    return 0;
}

/* n bytes of results in resv to where out wants them (host memory: a
 * blocking read; another device buffer: a copy to element out->off of
 * size rsize).  Device results are not waited for, except when timed:
 * then the passes' device times (spans s1, s2) land in timing.  0, or -1
 * with st set. */
static int deliver(gr_device *d, cl_mem resv, size_t n, const gr_output *out,
                   size_t rsize, gr_timing *timing, gr_span *s1, gr_span *s2,
                   gr_status *st)
{
    if (out->mem == NULL) {
        /* waited for without gr_lock: other threads drive other devices
         * meanwhile (the buffers here are this call's) */
        if (gr_read_wait(d, resv, 0, n, out->host, NULL, NULL, NULL, st) != 0) {
            return -1;
        }
    } else if (resv != out->mem) {
        GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, resv, out->mem, 0,
                                            out->off * rsize, n, 0, NULL,
                                            NULL));
    }
    if (timing != NULL) {
        GR_CL_CHECK(st, clFinish(d->queue));
        timing->first_ns = gr_span_ns(s1);
        timing->second_ns = gr_span_ns(s2);
    }
    return 0;
fail:
    return -1;
}

static cl_mem mem_of(const gr_block *b) { return b ? b->mem : NULL; }

/* Pass 1's program of a plan (its results final where it is the only
 * pass): gr_reduce_run's, and the nanarg check's, which runs in it. */
static pass_cfg pass1_cfg(const gr_plan *p)
{
    const pass_cfg c = {0,        p->passes == 1, p->wg,
                        p->vw,    p->ilp,         p->load,
                        p->combine, p->sg,        p->sg_native,
                        p->atomic, p->lanes,   p->hf,
                        p->viters};
    return c;
}

/* Pass 2: the M x plan->parts partial states in pv/px (nanvar's counts in
 * pc) merged into M results at resv[res0..]. */
static int enqueue_pass2(gr_device *d, const gr_accum *acc, cl_kernel k2,
                         const gr_plan *plan, cl_ulong M, const gr_block *pv,
                         const gr_block *px, const gr_block *pc, cl_mem resv,
                         cl_ulong res0, gr_span *sp, gr_status *st)
{
    return enqueue_pass(d, acc, k2, plan->wg2 ? GR_K_GROUP : GR_K_ITEMS,
                        plan->wg2 ? plan->wg2 : (d->is_gpu ? 256 : 64), 1, 0, 1,
                        mem_of(pv), mem_of(px), mem_of(pc), 0, plan->parts,
                        plan->parts, 1, plan->parts, 1, M, 0, res0, resv,
                        NULL, NULL, 0, NULL, sp, st);
}

/* The pass-1 kernel of *plan; the work-group shrunk if the compiled
 * kernel needs it (PyOpenCL's habit: CL_KERNEL_WORK_GROUP_SIZE has the
 * last word).  NULL with *st set. */
static cl_kernel pass1_kernel(gr_device *d, gr_op op, const gr_accum *acc,
                              gr_plan *plan, gr_status *st)
{
    cl_kernel k1;
    for (;;) {
        const pass_cfg c1 = pass1_cfg(plan);
        const char *name = plan->kind == GR_K_GROUP ? "gr_reduce_group"
                                                    : "gr_reduce_items";
        if ((k1 = get_kernel(d, op, acc, &c1, name, st)) == NULL) {
            return NULL;
        }
        if (plan->kind != GR_K_GROUP || plan->wg == 1 ||
            gr_kernel_wg_limit(d, k1) >= (size_t)plan->wg) {
            return k1;
        }
        plan->wg /= 2;
    }
}

/* The atomic variant, one pass over the data: identity, CAS merges into
 * a block of accumulators (*accv, the caller's to hand back), result
 * type into resv. */
static int run_atomic(gr_device *d, gr_op op, const gr_accum *acc,
                      cl_kernel k1, const gr_plan *plan,
                      const gr_layout *lay, const gr_piece *pieces,
                      int npieces, const gr_source *src, cl_mem resv,
                      gr_block **accv, gr_span *s1, gr_status *st)
{
    const cl_ulong M = lay->M;
    const pass_cfg ca = {0,       1,           plan->wg,   plan->vw,
                         plan->ilp, plan->load,  plan->combine, 0,
                         0,       1};
    cl_kernel ki = get_kernel(d, op, acc, &ca, "gr_reduce_init", st);
    cl_kernel kf = ki ? get_kernel(d, op, acc, &ca, "gr_reduce_finish", st)
                      : NULL;
    const size_t g = (size_t)(M + 63) / 64 * 64;
    if (kf == NULL ||
        (*accv = gr_block_get(d, M * acc->a_size, st)) == NULL) {
        return -1;
    }
    if (GR_LAUNCH1(d, ki, g, 64, NULL, st, GR_ARG((*accv)->mem),
                   GR_ARG(M)) != 0 ||
        enqueue_pieces(d, acc, k1, plan, lay, pieces, npieces, src,
                       (*accv)->mem, NULL, NULL, s1, st) != 0 ||
        GR_LAUNCH1(d, kf, g, 64, NULL, st, GR_ARG((*accv)->mem),
                   GR_ARG(resv), GR_ARG(M)) != 0) {
        return -1;
    }
    return 0;
}

int gr_reduce_run(gr_device *d, gr_op op, const gr_accum *acc,
                  const gr_layout *lay, const gr_plan *plan_in,
                  const gr_piece *pieces, int npieces, const gr_source *src,
                  const gr_output *out, gr_timing *timing, gr_status *st)
{
    gr_block *pv = NULL, *px = NULL, *pc = NULL, *res = NULL, *accv = NULL;
    cl_mem resv = NULL;
    cl_ulong res0 = 0;
    gr_span s1 = {NULL, NULL}, s2 = {NULL, NULL};
    gr_plan plan = *plan_in;
    size_t total_parts = 0;
    const size_t rsize = gr_result_size(op, acc);
    const cl_ulong M = lay->M;
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
    if ((k1 = pass1_kernel(d, op, acc, &plan, st)) == NULL) {
        goto fail;
    }
    if (plan.passes > 1 &&
        pass2_begin(d, op, acc, &plan, M, &k2, &pv, &px, &pc, st) != 0) {
        goto fail;
    }
    /* Results go straight into the caller's device buffer, if any (the
     * atomic variant's finish kernel has no offset: it writes a temporary
     * that is copied). */
    if (out->mem != NULL && !plan.atomic) {
        resv = out->mem;
        res0 = out->off;
    } else {
        if ((res = gr_block_get(d, M * rsize, st)) == NULL) {
            goto fail;
        }
        resv = res->mem;
    }

    if (plan.atomic) {
        if (run_atomic(d, op, acc, k1, &plan, lay, pieces, npieces, src,
                       resv, &accv, timing ? &s1 : NULL, st) != 0) {
            goto fail;
        }
    } else if (plan.passes == 1) {
        if (enqueue_pass(d, acc, k1, plan.kind, plan.wg, plan.vw, plan.lanes,
                         plan.ilp, pieces[0].mem,
                         NULL, NULL, pieces[0].base, lay->L, lay->seg_stride,
                         lay->elem_stride, plan.chunk, 1, M, 0, res0, resv,
                         NULL, pieces[0].wmem, (cl_long)pieces[0].wdelta,
                         NULL, timing ? &s1 : NULL, st) != 0) {
            goto fail;
        }
    } else {
        if (enqueue_pieces(d, acc, k1, &plan, lay, pieces, npieces, src,
                           mem_of(pv), mem_of(px), mem_of(pc),
                           timing ? &s1 : NULL, st) != 0 ||
            enqueue_pass2(d, acc, k2, &plan, M, pv, px, pc, resv, res0,
                          timing ? &s2 : NULL, st) != 0) {
            goto fail;
        }
    }
    rc = deliver(d, resv, M * rsize, out, rsize, timing, &s1, &s2, st);
fail:
    gr_span_release(&s1);
    gr_span_release(&s2);
    gr_block_put(pv);
    gr_block_put(px);
    gr_block_put(pc);
    gr_block_put(res);
    gr_block_put(accv);
    return rc;
}

/* nanargmin/nanargmax of one piece of device memory (req->nan_check):
 * *suspect = whether the index found for some segment (M int64 indices
 * at resv[res0..]) points at a NaN (kernels/reduce.cl gr_nanarg_check,
 * in the program pass 1 ran: no build), read back at once -- one wait of
 * M bytes, where the face read the index and then the element (two).
 * 0, or -1 with st set. */
int gr_nanarg_check(gr_device *d, gr_op op, const gr_accum *acc,
                    const gr_layout *lay, const gr_plan *plan,
                    const gr_piece *piece, cl_mem resv, size_t res0,
                    int *suspect, gr_status *st)
{
    const pass_cfg c1 = pass1_cfg(plan);
    const cl_ulong M = lay->M, base = piece->base, segs = lay->seg_stride,
                   elems = lay->elem_stride, r0 = res0;
    unsigned char one[64], *flags = M <= sizeof one ? one : malloc(M);
    gr_block *fb = NULL;
    int rc = -1;
    cl_kernel k = get_kernel(d, op, acc, &c1, "gr_nanarg_check", st);
    if (flags == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    if (k == NULL || (fb = gr_block_get(d, M, st)) == NULL ||
        GR_LAUNCH1(d, k, (size_t)(M + 63) / 64 * 64, 64, NULL, st,
                   GR_ARG(piece->mem), GR_ARG(base), GR_ARG(segs),
                   GR_ARG(elems), GR_ARG(resv), GR_ARG(r0), GR_ARG(M),
                   GR_ARG(fb->mem)) != 0) {
        goto fail;
    }
    if (gr_read_wait(d, fb->mem, 0, M, flags, NULL, NULL, NULL, st) == 0) {
        *suspect = memchr(flags, 1, M) != NULL;
        rc = 0;
    }
fail:
    gr_block_put(fb);
    if (flags != one) {
        free(flags);
    }
    return rc;
}

/* The defines of a reduceat plan's program: one-pass results unless a
 * segment is split among work-groups (then partial states); the warp
 * kernel's lanes per segment. */
static pass_cfg segments_cfg(const gr_plan *plan)
{
    const int split = plan->kind == GR_K_GROUP && plan->parts > 1;
    const pass_cfg c = {0,           !split,   plan->wg, plan->vw,
                        1,           0,        plan->combine, plan->sg,
                        plan->sg_native, 0,
                        plan->lanes};
    return c;
}

/* The segments kernel of *plan; the work-group shrunk as pass1_kernel's
 * (not below 32).  NULL with *st set. */
static cl_kernel segments_kernel(gr_device *d, gr_op op, const gr_accum *acc,
                                 gr_plan *plan, gr_status *st)
{
    cl_kernel k;
    for (;;) {
        const pass_cfg c = segments_cfg(plan);
        const char *name = plan->kind == GR_K_GROUP  ? "gr_segments_group"
                           : plan->kind == GR_K_WARP ? "gr_segments_warp"
                                                     : "gr_segments_items";
        if ((k = kernel_in(d, "segments", op, acc, &c, name, st)) == NULL) {
            return NULL;
        }
        if (plan->kind == GR_K_ITEMS || plan->wg <= 32 ||
            gr_kernel_wg_limit(d, k) >= (size_t)plan->wg) {
            return k;
        }
        plan->wg /= 2;
    }
}

/* Segments by offsets (kernels/segments.cl, NumPy's reduceat): rows x L x
 * inner elements of `in` from element `base`, S offsets in idx (device
 * longs, checked by the caller), rows * S * inner results into out.  The
 * plan's kind picks the kernel (GR_K_GROUP: work-groups per segment,
 * inner == 1; GR_K_ITEMS: one work-item per plan.chunk results); its wg,
 * vw, combine and sub-group mode as a reduction's.  With plan.parts > 1
 * each segment is split among that many work-groups, whose partial states
 * this file's second pass merges (reduce.cl's, as a reduction's). */
int gr_segments_run(gr_device *d, gr_op op, const gr_accum *acc,
                    const gr_plan *plan_in, cl_mem in, size_t base,
                    size_t rows, size_t L, size_t inner, cl_mem idx,
                    size_t S, const gr_output *out, gr_timing *timing,
                    gr_status *st)
{
    gr_plan plan = *plan_in;
    gr_block *res = NULL, *pv = NULL, *px = NULL;
    gr_span s1 = {NULL, NULL}, s2 = {NULL, NULL};
    const size_t rsize = gr_result_size(op, acc);
    const cl_ulong M = (cl_ulong)rows * S * inner;
    const cl_ulong ub = base, uL = L, ui = inner, uS = S;
    const int split = plan.kind == GR_K_GROUP && plan.parts > 1;
    cl_kernel k = NULL, k2 = NULL;
    cl_mem resv;
    cl_ulong res0 = 0;
    int rc = -1;
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    if ((k = segments_kernel(d, op, acc, &plan, st)) == NULL) {
        goto fail;
    }
    if (out->mem != NULL) {
        resv = out->mem;
        res0 = out->off;
    } else {
        if ((res = gr_block_get(d, M * rsize, st)) == NULL) {
            goto fail;
        }
        resv = res->mem;
    }
    if (split &&
        pass2_begin(d, op, acc, &plan, M, &k2, &pv, &px, NULL, st) != 0) {
        goto fail;
    }
    if (plan.kind == GR_K_GROUP) {
        const cl_uint parts = (cl_uint)(split ? plan.parts : 1);
        const cl_ulong n = M * parts;
        const cl_ulong batch = (cl_ulong)1 << 24;
        cl_mem ov = split ? pv->mem : resv, ox = px ? px->mem : NULL;
        const cl_ulong o0 = split ? 0 : res0;
        for (cl_ulong g0 = 0; g0 < n; g0 += batch) {
            const cl_ulong ng = n - g0 < batch ? n - g0 : batch;
            const size_t local = (size_t)plan.wg;
            const size_t global = (size_t)(ng * (cl_ulong)plan.wg);
            const gr_arg args[] = {GR_ARG(in),    GR_ARG(ub), GR_ARG(uL),
                                   GR_ARG(idx),   GR_ARG(uS), GR_ARG(parts),
                                   GR_ARG(g0),    GR_ARG(ov), GR_ARG(ox),
                                   GR_ARG(o0)};
            if (gr_launch(d, k, 1, &global, &local, args, 10, NULL,
                          timing ? &s1 : NULL, st) != 0) {
                goto fail;
            }
        }
        if (split &&
            enqueue_pass2(d, acc, k2, &plan, M, pv, px, NULL, resv, res0,
                          timing ? &s2 : NULL, st) != 0) {
            goto fail;
        }
    } else if (plan.kind == GR_K_WARP) {
        const size_t local = (size_t)plan.wg;
        const size_t global =
            (size_t)((M * plan.lanes + local - 1) / local * local);
        const gr_arg args[] = {GR_ARG(in),  GR_ARG(ub), GR_ARG(uL),
                               GR_ARG(idx), GR_ARG(uS), GR_ARG(M),
                               GR_ARG(resv), GR_ARG(res0)};
        if (gr_launch(d, k, 1, &global, &local, args, 8, NULL,
                      timing ? &s1 : NULL, st) != 0) {
            goto fail;
        }
    } else {
        size_t lw = (size_t)plan.wg;
        const size_t lim = gr_kernel_wg_limit(d, k);
        while (lw > lim) {
            lw /= 2;
        }
        const cl_ulong per = plan.chunk ? plan.chunk : 1;
        const cl_ulong items = (M + per - 1) / per;
        const size_t global = (size_t)((items + lw - 1) / lw * lw);
        const gr_arg args[] = {GR_ARG(in),  GR_ARG(ub),   GR_ARG(uL),
                               GR_ARG(ui),  GR_ARG(idx),  GR_ARG(uS),
                               GR_ARG(M),   GR_ARG(per),  GR_ARG(resv),
                               GR_ARG(res0)};
        if (gr_launch(d, k, 1, &global, &lw, args, 10, NULL,
                      timing ? &s1 : NULL, st) != 0) {
            goto fail;
        }
    }
    rc = deliver(d, resv, M * rsize, out, rsize, timing, &s1, &s2, st);
fail:
    gr_span_release(&s1);
    gr_span_release(&s2);
    gr_block_put(res);
    gr_block_put(pv);
    gr_block_put(px);
    return rc;
}

int gr_segments_check(gr_device *d, gr_op op, const gr_accum *acc,
                      const gr_plan *plan, cl_mem idx, size_t S, size_t L,
                      cl_mem bad, gr_status *st)
{
    /* the reduceat program's kernel (no build of its own) */
    const pass_cfg c = segments_cfg(plan);
    const cl_ulong uS = S, uL = L;
    const cl_uint none = 0xffffffffu;
    cl_kernel k = kernel_in(d, "segments", op, acc, &c, "gr_segments_check",
                            st);
    if (k == NULL) {
        return -1;
    }
    GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, bad, &none, sizeof none, 0,
                                        sizeof none, 0, NULL, NULL));
    return GR_LAUNCH1(d, k, (size_t)((S + 255) / 256 * 256), 256, NULL, st,
                      GR_ARG(idx), GR_ARG(uS), GR_ARG(uL), GR_ARG(bad));
fail:
    return -1;
}
