/*
 * dispatch_exact.c — the driver of exact sums (sum, mean, nansum, nanmean
 * with exact=True), dispatch layer: start > host path > device (plan >
 * input > destination > kernels > finish).
 *
 * The answer is unique (the exact sum rounded once to the result dtype),
 * so the host path (host_exact.c) and every device (exact.c over
 * kernels/exact.cl) give the same bits; placement only picks the faster.
 * Float32 and float64 inputs into float32 or float64 results; integer
 * inputs never come here (their sums are exact already: api's rule).
 */
#include "dispatch_common.h"
#include "exact.h"
#include "host_exact.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    gr_request *req;
    gr_result *res;
    gr_status *st;
    gr_device *d;
    red_view v;
    size_t isz, M, L;
    int nan, mean;
    double init;
    gr_exact_plan plan;
    char *copy;              /* the input gathered (views without a layout) */
    const char *src;         /* host input as the layout reads it          */
    gr_input win;            /* host input made readable by the device     */
    gr_block *tmp_in, *tmp_out;
    gr_exact_job job;
} ex_call;

/* The request's checks and its view. */
static int ex_start(ex_call *c, gr_request *req, gr_result *res,
                    gr_status *st)
{
    memset(c, 0, sizeof *c);
    c->req = req;
    c->res = res;
    c->st = st;
    const gr_dtype t = req->in.t, rt = req->rt;
    if ((t != GR_FLOAT32 && t != GR_FLOAT64) ||
        (rt != GR_FLOAT32 && rt != GR_FLOAT64) || req->op != GR_ADD ||
        req->mask.present || req->var == 1 || req->var == 2) {
        gr_status_kind(st, GR_E_TYPE, "exact=True sums float32/float64 "
                       "elements into a float32/float64 result (sum, mean, "
                       "nansum, nanmean, without where=)");
        return -1;
    }
    dp_red_view_of(req, &c->v);
    res->lay = c->v.lay;
    c->isz = isz_of(t);
    c->M = c->v.lay.M;
    c->L = c->v.lay.L;
    c->nan = nan_floats(req, t);
    c->mean = req->div != 0.0 || req->var == 3;
    if (req->has_initial) {
        memcpy(&c->init, req->initial, sizeof c->init); /* rt: double */
        if (rt == GR_FLOAT32) {
            float f;
            memcpy(&f, req->initial, sizeof f);
            c->init = f;
        }
    }
    return 0;
}

/* A host copy of the view's M x L elements where no layout exists. */
static int ex_host_rows(ex_call *c)
{
    const gr_operand *in = &c->req->in;
    if (c->v.ok) {
        c->src = in->host + c->v.base * (ptrdiff_t)c->isz;
        return 0;
    }
    if ((c->copy = dp_aligned_alloc_bytes(c->M * c->L * c->isz)) == NULL) {
        gr_status_kind(c->st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    dp_gather_rows(&c->v, in->host + c->v.base * (ptrdiff_t)c->isz, c->isz,
                   c->copy);
    c->src = c->copy;
    c->v.lay.seg_stride = (ptrdiff_t)c->L;
    c->v.lay.elem_stride = 1;
    return 0;
}

/* The host path where placement picks it: 0 or -1 (done), 1: the device. */
static int ex_on_host(ex_call *c)
{
    gr_request *req = c->req;
    gr_result *res = c->res;
    if (!(req->host_ok && req->in.host != NULL && req->out.present &&
          req->out.blk == NULL &&
          gr_place(&req->dev, req->roam, GR_FAM_REDUCE, GR_ADD, &c->v.lay,
                   c->M * c->L * c->isz, gr_host_factor(GR_HW_EXACT),
                   " (exact: expansions and a long accumulator)",
                   req->mode == GR_EXPLAIN ? res->place_why : NULL,
                   sizeof res->place_why))) {
        return 1;
    }
    res->where = 1;
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    if (ex_host_rows(c) != 0) {
        return -1;
    }
    gr_host_exact(c->src, req->in.t, c->M, c->L,
                  c->v.lay.seg_stride * (ptrdiff_t)c->isz,
                  c->v.lay.elem_stride * (ptrdiff_t)c->isz, c->nan, c->mean,
                  req->has_initial ? &c->init : NULL, req->rt,
                  req->out.host);
    return 0;
}

/* The input as the kernels read it: a device operand in place (or
 * gathered into a copy), host memory made readable (zero-copy on CPUs). */
static int ex_input(ex_call *c)
{
    const gr_operand *in = &c->req->in;
    gr_device *d = c->d;
    if (in->host != NULL) {
        if (ex_host_rows(c) != 0) {
            return -1;
        }
        const size_t span = (c->M - 1) * (size_t)c->v.lay.seg_stride +
                            (c->L - 1) * (size_t)c->v.lay.elem_stride + 1;
        if (gr_input_from_host(d, c->src, span * c->isz, c->isz, &c->win,
                               c->st) != 0) {
            return -1;
        }
        c->job.in = c->win.mem;
        c->job.base = c->win.base;
    } else if (c->v.ok) {
        c->job.in = in->blk->mem;
        c->job.base = (cl_ulong)((ptrdiff_t)(in->off / c->isz) + c->v.base);
    } else {
        size_t gshape[GR_MAXDIMS];
        ptrdiff_t gstr[GR_MAXDIMS], cstr[GR_MAXDIMS];
        const int gn = dp_red_gather_dims(&c->v, gshape, gstr);
        if (dp_gather_device(d, in, c->v.gbase, gn, gshape, gstr, in->t,
                             &c->tmp_in, cstr, c->st) != 0) {
            return -1;
        }
        c->job.in = c->tmp_in->mem;
        c->job.base = 0;
        c->v.lay.seg_stride = (ptrdiff_t)c->L;
        c->v.lay.elem_stride = 1;
    }
    return 0;
}

/* Where the M results of rt go: a new block, a device out of rt laid out
 * C-contiguously, else a temporary (cast or read back by ex_finish). */
static int ex_destination(ex_call *c)
{
    gr_request *req = c->req;
    const size_t rsz = isz_of(req->rt);
    size_t oshape[GR_MAXDIMS], n1 = 1;
    ptrdiff_t ostr[GR_MAXDIMS], s1 = 1;
    if (!req->out.present) {
        if ((c->res->blk[0] = gr_block_get(c->d, c->M * rsz, c->st)) ==
            NULL) {
            return -1;
        }
        c->job.out = c->res->blk[0]->mem;
        return 0;
    }
    if (req->out.blk != NULL && req->out.t == req->rt) {
        const int on = dp_out_geometry(&req->out, oshape, ostr);
        if (on >= 0 && dp_collapse(oshape, ostr, on, &n1, &s1) &&
            (s1 == 1 || n1 == 1)) {
            c->job.out = req->out.blk->mem;
            c->job.out_off = req->out.off / rsz;
            return 0;
        }
    }
    if ((c->tmp_out = gr_block_get(c->d, c->M * rsz, c->st)) == NULL) {
        return -1;
    }
    c->job.out = c->tmp_out->mem;
    return 0;
}

/* The kernels, reps times under GR_BENCH (device time of each). */
static int ex_run(ex_call *c)
{
    gr_request *req = c->req;
    gr_exact_job *j = &c->job;
    j->M = c->M;
    j->L = c->L;
    j->ss = c->v.lay.seg_stride;
    j->es = c->v.lay.elem_stride;
    j->t = req->in.t;
    j->rt = req->rt;
    j->nan = c->nan;
    j->mean = c->mean;
    j->has_init = req->has_initial;
    j->init = c->init;
    const int reps = req->mode == GR_BENCH ? req->reps : 1;
    for (int i = 0; i < reps; ++i) {
        gr_span sp = {NULL, NULL};
        const int rc = gr_exact_run(c->d, &c->plan, j,
                                    req->mode == GR_BENCH ? &sp : NULL,
                                    c->st);
        if (req->ns != NULL) {
            req->ns[i] = gr_span_ns(&sp);
        }
        gr_span_release(&sp);
        if (rc != 0) {
            return -1;
        }
    }
    return 0;
}

/* A temporary's results into out: read back (host out), or cast and laid
 * out by a device copy. */
static int ex_finish(ex_call *c)
{
    gr_request *req = c->req;
    gr_device *d = c->d;
    gr_status *st = c->st;
    if (c->tmp_out == NULL) {
        return 0;
    }
    if (req->out.blk == NULL) {
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, c->tmp_out->mem,
                                            CL_TRUE, 0,
                                            c->M * isz_of(req->rt),
                                            req->out.host, 0, NULL, NULL));
        return 0;
    }
    size_t oshape[GR_MAXDIMS];
    ptrdiff_t ostr[GR_MAXDIMS];
    const int on = dp_out_geometry(&req->out, oshape, ostr);
    return dp_copy_packed(d, c->tmp_out->mem, req->rt, req->out.blk->mem,
                          req->out.t, req->out.off / isz_of(req->out.t), on,
                          oshape, ostr, NULL, st);
fail:
    return -1;
}

/* An exact sum: host path > plan > input > destination > kernels >
 * finish. */
int dp_run_exact(gr_request *req, gr_result *res, gr_status *st)
{
    ex_call c;
    int rc;
    if (ex_start(&c, req, res, st) != 0) {
        return -1;
    }
    if ((rc = ex_on_host(&c)) <= 0) {
        free(c.copy);
        return rc;
    }
    if ((c.d = dp_dev_begin(req, st)) == NULL) {
        return -1;
    }
    rc = gr_plan_exact(c.d, c.M, c.L, &req->kn, &c.plan);
    res->exact = c.plan;
    res->is_exact = 1;
    if (rc != 0) {
        gr_status_kind(st, GR_E_VARIANT, "%s", c.plan.why);
    } else if (req->mode != GR_EXPLAIN &&
               (rc = ex_input(&c)) == 0 && (rc = ex_destination(&c)) == 0 &&
               (rc = ex_run(&c)) == 0) {
        rc = ex_finish(&c);
    }
    if (c.win.zero_copy) {
        clFinish(c.d->queue); /* host memory read in place */
    }
    gr_input_release(&c.win);
    gr_block_put(c.tmp_in);
    gr_block_put(c.tmp_out);
    if (rc != 0) {
        gr_result_clear(res);
    }
    gr_unlock(c.d);
    free(c.copy);
    return rc;
}
