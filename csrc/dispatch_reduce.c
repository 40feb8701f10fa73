/*
 * gpured — dispatch layer, reductions on a device: the driver of the
 * reduce family (dp_run_reduce): the host path where placement picks it
 * (dispatch_reduce_host.c), else plan (policy.c), the input on the device
 * (in place, a copy, an upload, streamed or in pieces), the destination,
 * the kernels (reduce.c) and the epilogue into out.
 */

#include "dispatch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PIECES 256

static void contiguous_layout(red_view *v)
{
    v->gbase = v->base;
    v->base = 0;
    v->lay.seg_stride = (ptrdiff_t)v->lay.L;
    v->lay.elem_stride = 1;
    v->ok = 1;
}

/* What the reduction computes (st: mean's sum dtype) and its plan. */
static int red_plan(gr_device *d, const gr_request *req, gr_dtype t,
                    const red_view *v, gr_accum *acc, gr_plan *plan,
                    gr_status *st)
{
    char err[256];
    if (gr_accum_for(d, GR_FAM_REDUCE, req->op, t, req->st, acc, err,
                     sizeof err) != 0) {
        gr_status_kind(st, GR_E_TYPE, "%s", err);
        return -1;
    }
    /* float sums start from -0.0 under an initial= (NumPy's fold starts
     * from it): the exact identity keeps an all-(-0.0) sum -0.0 */
    acc->neg0 = req->has_initial && req->op == GR_ADD &&
                gr_dtypes[req->st].is_float;
    acc->nan = req->var ? var_nan(req, t) : nan_floats(req, t);
    if (req->count) {
        acc->cvt = req->count == 2 ? GR_CVT_VALID_MODE : GR_CVT_COUNT_MODE;
    }
    if (req->var) {
        gr_accum_var(acc, req->var);
        acc->var_n = v->lay.L;
        acc->var_ddof = req->ddof;
    }
    if (req->ptp) {
        gr_accum_ptp(acc);
    }
    int rc = gr_plan_reduce(d, req->op, acc, &v->lay, &req->kn, plan);
    if (rc != 0) {
        gr_status_kind(st, rc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                       plan->why);
        return -1;
    }
    return 0;
}

/* The epilogue this request needs between the computed results (dtype
 * st, or int64) and the result dtype rt, if any. */
static int red_epilogue(const gr_request *req, gr_epilogue *epi)
{
    memset(epi, 0, sizeof *epi);
    if (req->div != 0.0) {
        epi->mode = GR_EPI_DIV;
        epi->div = req->div;
        return 1;
    }
    if (req->has_initial) {
        epi->mode = GR_EPI_OP;
        epi->op = req->op == GR_ANY ? GR_ANY
                  : req->op == GR_ALL ? GR_ALL
                                      : req->op;
        memcpy(epi->value, req->initial, 8);
        epi->nan = req->nan && (req->op == GR_MIN || req->op == GR_MAX);
        return 1;
    }
    epi->mode = GR_EPI_CAST;
    return req->st != req->rt;
}

/* A second operand (where='s mask, average's weights): its n elements
 * of wsz bytes at wptr (element for element beside the n elements `in`
 * holds) made readable by the device, and the piece told where they are. */
static int mask_piece(gr_device *d, const char *wptr, size_t n, size_t wsz,
                      const gr_input *in, gr_input *w, gr_piece *pc,
                      gr_status *st)
{
    if (gr_input_from_host(d, wptr, n * wsz, wsz, w, st) != 0) {
        return -1;
    }
    pc->wmem = w->mem;
    pc->wdelta = (ptrdiff_t)w->base - (ptrdiff_t)in->base;
    return 0;
}

/* Host input of a device reduction (reduce_host's phases): the request's
 * layout from ptr, its second operand, where results go, and the pieces
 * made readable by the device so far. */
typedef struct {
    gr_device *d;
    const gr_request *req;
    gr_accum *acc;
    const gr_layout *lay;
    gr_plan *plan;
    const char *ptr, *wptr;
    cl_mem wax_mem;
    ptrdiff_t wax_delta;
    const gr_output *o;
    gr_status *st;
    size_t isz, wsz, limit, seg_bytes, span;
    gr_input inp[MAX_PIECES], winp[MAX_PIECES];
    gr_piece pieces[MAX_PIECES];
    int np;
} host_in;

/* var/std of one segment that may come in pieces: the shift is the
 * host's, as the kernels would pick it. */
static void host_var_shift(host_in *h)
{
    gr_accum *acc = h->acc;
    const char *ptr = h->ptr, *wptr = h->wptr;
    /* (nanvar: the first of the first 8 elements that is not NaN, else
     * 0) */
    double k = gr_host_as_double(ptr, acc->t, 0);
    for (size_t i = 1; acc->nan && isnan(k) && i < 8 && i < h->lay->L; ++i) {
        k = gr_host_as_double(ptr, acc->t, i);
    }
    if (wptr != NULL) {
        /* where=: the first finite one the mask keeps (the kernels'
         * gr_var_shift_w) */
        k = 0.0;
        for (size_t i = h->lay->L < 8 ? h->lay->L : 8; i-- > 0;) {
            const double x = gr_host_as_double(ptr, acc->t, i);
            k = wptr[i * h->wsz] && isfinite(x) ? x : k;
        }
    }
    acc->var_k = acc->nan && isnan(k) ? 0.0 : k;
    acc->var_self = 0;
}

/* One long contiguous segment on a GPU: streamed through the pinned
 * staging pool, planned for one chunk. */
static int host_streamed(host_in *h)
{
    gr_device *d = h->d;
    const gr_layout *lay = h->lay;
    gr_status *st = h->st;
    gr_layout sub = *lay;
    gr_plan p1;
    gr_source src;
    gr_stream_src *s = NULL;
    gr_piece *pc = NULL;
    const size_t per = gr_stream_chunk_elems(h->isz);
    int np = 0, rc = 0;
    sub.L = lay->L < per ? lay->L : per;
    if (gr_plan_reduce(d, h->req->op, h->acc, &sub, &h->req->kn, &p1) != 0) {
        gr_status_kind(st, GR_E_VALUE, "%s", p1.why);
        return -1;
    }
    if ((s = gr_stream_source(d, h->ptr, h->isz, lay->L, &src, &np, st)) ==
        NULL) {
        return -1;
    }
    if ((pc = calloc((size_t)np, sizeof *pc)) == NULL) {
        gr_status_fail(st, "out of host memory");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < np; ++i) {
        size_t at = (size_t)i * per;
        pc[i].len = lay->L - at < per ? lay->L - at : per;
    }
    if (rc == 0) {
        rc = gr_reduce_run(d, h->req->op, h->acc, lay, &p1, pc, np, &src,
                           h->o, NULL, st);
    }
    if (gr_stream_source_end(s, st) != 0) {
        rc = -1;
    }
    free(pc);
    *h->plan = p1;
    return rc;
}

/* len elements from p (nb bytes; their mask from wp) as piece h->np. */
static int host_piece(host_in *h, const char *p, size_t len, size_t nb,
                      const char *wp)
{
    const int k = h->np;
    int rc = gr_input_from_host(h->d, p, nb, h->isz, &h->inp[k], h->st);
    h->pieces[k] = (gr_piece){h->inp[k].mem, h->inp[k].base, len,
                              h->wax_mem, h->wax_delta};
    if (rc == 0 && wp != NULL) {
        rc = mask_piece(h->d, wp, nb / h->isz, h->wsz, &h->inp[k],
                        &h->winp[k], &h->pieces[k], h->st);
        if (rc != 0) {
            gr_input_release(&h->inp[k]);
        }
    }
    h->np += rc == 0;
    return rc;
}

/* One long segment larger than a buffer: pieces of whole chunks. */
static int host_chunks(host_in *h)
{
    const gr_layout *lay = h->lay;
    const size_t isz = h->isz, limit = h->limit;
    const size_t per = limit / isz / h->plan->chunk * h->plan->chunk;
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < lay->L; off += per) {
        const size_t len = lay->L - off < per ? lay->L - off : per;
        if (h->np == MAX_PIECES) {
            gr_status_kind(h->st, GR_E_MEMORY, "input too large: more than "
                           "%d buffers of %zu bytes", MAX_PIECES, limit);
            return -1;
        }
        if (dp_interrupted(h->req)) {
            return dp_stop(h->st);
        }
        rc = host_piece(h, h->ptr + off * isz, len, len * isz,
                        h->wptr != NULL ? h->wptr + off * h->wsz : NULL);
    }
    return rc;
}

/* Many segments larger than a buffer: batches of whole segments, one run
 * each. */
static int host_batches(host_in *h)
{
    gr_device *d = h->d;
    const gr_layout *lay = h->lay;
    const size_t isz = h->isz, wsz = h->wsz;
    const size_t rsize = gr_result_size(h->req->op, h->acc);
    const size_t per = 1 + (h->limit - h->seg_bytes) /
                               ((size_t)lay->seg_stride * isz);
    int rc = 0;
    for (size_t s0 = 0; rc == 0 && s0 < lay->M; s0 += per) {
        gr_layout sub = *lay;
        gr_plan p2;
        if (dp_interrupted(h->req)) {
            return dp_stop(h->st);
        }
        sub.M = lay->M - s0 < per ? lay->M - s0 : per;
        if (gr_plan_reduce(d, h->req->op, h->acc, &sub, &h->req->kn,
                           &p2) != 0) {
            gr_status_kind(h->st, GR_E_VALUE, "%s", p2.why);
            return -1;
        }
        const char *p = h->ptr + s0 * lay->seg_stride * isz;
        const size_t nb = (sub.M - 1) * sub.seg_stride * isz + h->seg_bytes;
        gr_input one, wone;
        gr_piece pc = {NULL, 0, sub.L, h->wax_mem, h->wax_delta};
        memset(&wone, 0, sizeof wone);
        rc = gr_input_from_host(d, p, nb, isz, &one, h->st);
        if (rc == 0 && h->wptr != NULL &&
            mask_piece(d, h->wptr + s0 * lay->seg_stride * wsz, nb / isz,
                       wsz, &one, &wone, &pc, h->st) != 0) {
            gr_input_release(&one);
            rc = -1;
        }
        if (rc == 0) {
            pc.mem = one.mem;
            pc.base = one.base;
            gr_output ob = *h->o;
            if (ob.mem == NULL) {
                ob.host = (char *)h->o->host + s0 * rsize;
            } else {
                ob.off += s0;
            }
            rc = gr_reduce_run(d, h->req->op, h->acc, &sub, &p2, &pc, 1,
                               NULL, &ob, NULL, h->st);
            if (one.zero_copy || wone.zero_copy) {
                clFinish(d->queue);
            }
            gr_input_release(&one);
            gr_input_release(&wone);
        }
    }
    return rc;
}

/* The runs over the pieces (reps > 0: timed, ns[i]), then the pieces
 * released (host memory used in place outlives the kernels reading it). */
static int host_run(host_in *h, int rc, int reps, double *ns)
{
    gr_timing tm = {0, 0};
    for (int i = 0; rc == 0 && i < (reps > 0 ? reps : 1); ++i) {
        rc = gr_reduce_run(h->d, h->req->op, h->acc, h->lay, h->plan,
                           h->pieces, h->np, NULL, h->o,
                           reps > 0 ? &tm : NULL, h->st);
        if (ns != NULL) {
            ns[i] = tm.first_ns + tm.second_ns;
        }
    }
    for (int i = 0; i < h->np; ++i) {
        if ((h->inp[i].zero_copy || h->winp[i].zero_copy) &&
            h->o->mem != NULL) {
            clFinish(h->d->queue);
            break;
        }
    }
    for (int i = 0; i < h->np; ++i) {
        gr_input_release(&h->inp[i]);
        gr_input_release(&h->winp[i]);
    }
    return rc;
}

/* Host input, M x L layout from `base` (elements from ptr), to `out`:
 * zero-copy or one upload per piece, streamed for long single segments
 * on GPUs, split into pieces (one long segment) or batches of segments
 * when larger than the device's largest buffer.  reps > 0: timed runs
 * (ns[i]).  gr_lock held. */
static int reduce_host(gr_device *d, const gr_request *req, gr_accum *acc,
                       const gr_layout *lay, gr_plan *plan, const char *ptr,
                       const char *wptr, cl_mem wax_mem,
                       ptrdiff_t wax_delta, const gr_output *o, int reps,
                       double *ns, gr_status *st)
{
    host_in hs = {d, req, acc, lay, plan, ptr, wptr, wax_mem, wax_delta,
                  o, st, isz_of(acc->t), isz_of(acc->wt),
                  d->max_alloc ? (size_t)d->max_alloc - 128 : (size_t)-1};
    host_in *h = &hs;
    int rc = 0;
    const size_t isz = h->isz, limit = h->limit;
    h->seg_bytes = ((lay->L - 1) * lay->elem_stride + 1) * isz;
    h->span = ((lay->M - 1) * lay->seg_stride +
               (lay->L - 1) * lay->elem_stride + 1) * isz;
    if (acc->var && lay->M == 1) {
        host_var_shift(h);
    }
    if (reps == 0 && lay->M == 1 && lay->elem_stride == 1 && !plan->atomic &&
        wptr == NULL && wax_mem == NULL && gr_stream_wanted(d, lay->L * isz)) {
        rc = host_streamed(h);
    } else if (h->span <= limit) {
        /* One buffer for everything. */
        rc = gr_input_from_host(d, ptr, h->span, isz, &h->inp[0], st);
        h->pieces[0] = (gr_piece){h->inp[0].mem, h->inp[0].base, lay->L,
                                  wax_mem, wax_delta};
        h->np = rc == 0;
        if (rc == 0 && wptr != NULL) {
            rc = mask_piece(d, wptr, h->span / isz, h->wsz, &h->inp[0],
                            &h->winp[0], &h->pieces[0], st);
        }
        rc = host_run(h, rc, reps, ns);
    } else if (lay->M == 1 && lay->elem_stride == 1 &&
               plan->kind == GR_K_GROUP && plan->chunk * isz <= limit) {
        rc = host_run(h, host_chunks(h), reps, ns);
    } else if (lay->M > 1 && h->seg_bytes <= limit &&
               (size_t)lay->seg_stride * isz >= h->seg_bytes) {
        rc = host_batches(h);
    } else {
        gr_status_kind(st, GR_E_MEMORY, "input of %zu bytes does not fit the "
                       "device's largest buffer (%llu bytes) in this layout",
                       h->span, (unsigned long long)d->max_alloc);
        rc = host_run(h, -1, reps, ns);
    }
    return rc;
}

/* The mask's element strides are the input's (every non-unit dim): it
 * reads at the input's element offsets. */
static int mask_in_step(const gr_request *req)
{
    const gr_operand *in = &req->in, *m = &req->mask;
    const ptrdiff_t isz = (ptrdiff_t)isz_of(in->t);
    const ptrdiff_t wsz = (ptrdiff_t)isz_of(m->t);
    for (int i = 0; i < in->nd; ++i) {
        if (in->shape[i] != 1 &&
            m->strides[i] * isz != in->strides[i] * wsz) {
            return 0;
        }
    }
    return 1;
}

/* average's 1-d weights along the one reduced axis (req->wax) as L
 * contiguous elements on the device, reversed where the view walks that
 * axis backwards (a negative stride read in place): *wmem from element
 * *wbase (a device operand in place where it is that already; else a
 * copy or an upload in *tmp). */
static int weights_vector(gr_device *d, const gr_request *req, size_t L,
                          int rev, gr_block **tmp, cl_mem *wmem,
                          size_t *wbase, gr_status *st)
{
    const gr_operand *mk = &req->mask;
    const size_t wsz = isz_of(mk->t);
    const ptrdiff_t s = mk->strides[0] / (ptrdiff_t)wsz;
    if (mk->blk != NULL) {
        const size_t off = mk->off / wsz;
        if (s == 1 && !rev) {
            *wmem = mk->blk->mem;
            *wbase = off;
            return 0;
        }
        const ptrdiff_t ss = rev ? -s : s, one = 1;
        const size_t from = rev ? (size_t)((ptrdiff_t)off +
                                           (ptrdiff_t)(L - 1) * s) : off;
        if ((*tmp = gr_block_get(d, L * wsz, st)) == NULL ||
            gr_copy_nd(d, mk->blk->mem, mk->t, from, (*tmp)->mem, mk->t, 0,
                       1, &L, &ss, &one, NULL, st) != 0) {
            return -1;
        }
        *wmem = (*tmp)->mem;
        *wbase = 0;
        return 0;
    }
    /* an upload that does not wait, from one host copy (gathered where
     * the weights are strided or reversed) */
    if ((*tmp = gr_block_get(d, L * wsz, st)) == NULL) {
        return -1;
    }
    if (s == 1 && !rev) {
        if (dp_upload_nowait(d, (*tmp)->mem, mk->host, L * wsz, st) != 0) {
            return -1;
        }
    } else {
        char *h = malloc(L * wsz + 1);
        if (h == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            return -1;
        }
        for (size_t i = 0; i < L; ++i) {
            const size_t j = rev ? L - 1 - i : i;
            memcpy(h + i * wsz, mk->host + (ptrdiff_t)j * mk->strides[0],
                   wsz);
        }
        if (dp_upload_owned(d, (*tmp)->mem, h, L * wsz, st) != 0) {
            return -1;
        }
    }
    *wmem = (*tmp)->mem;
    *wbase = 0;
    return 0;
}

/* One reduction's state, from the request to its results: what the
 * driver's phases read and leave for the next (owned pointers start
 * NULL; red_end releases them). */
typedef struct {
    gr_request *req;
    gr_result *res;
    gr_status *st;
    gr_device *d;
    red_view v;
    gr_accum acc;
    gr_plan plan;
    gr_epilogue epi;
    const gr_operand *in, *mk;   /* the input; where='s mask or weights   */
    size_t isz, wsz;
    gr_dtype ct;                 /* the dtype the kernels compare in      */
    int along;                   /* 1-d weights along the reduced axis    */
    int wcopy_all;               /* a mask laid out otherwise: gathered   */
    size_t span_elems;
    /* the input as the layout reads it */
    gr_block *tmp_in, *tmp_res, *tmp_rt, *tmp_w;
    gr_input win;
    char *host_copy, *wcopy;
    const char *hptr;            /* host input                            */
    const char *wptr;            /* the second operand on the host, beside */
    cl_mem dmem, wmem;           /* device input; where=: mask beside it  */
    size_t dbase, wbase;
    /* where the results go */
    gr_output o;
    size_t oshape[GR_MAXDIMS];
    ptrdiff_t ostr[GR_MAXDIMS];
    int on;
    cl_mem final_mem;            /* device destination of dtype dt        */
    size_t final_off;
    gr_dtype dt;
    int direct;
    int dof_check;               /* nanvar/nanstd into host results       */
} red_call;

/* The view, where='s refusals, var's slice check, the compare dtype. */
static int red_start(red_call *c, gr_request *req, gr_result *res,
                     gr_status *st)
{
    memset(c, 0, sizeof *c);
    c->req = req;
    c->res = res;
    c->st = st;
    c->in = &req->in;
    c->mk = req->mask.present ? &req->mask : NULL;
    c->wsz = c->mk != NULL ? isz_of(c->mk->t) : 1;
    c->isz = isz_of(c->in->t);
    const gr_operand *in = c->in, *mk = c->mk;
    dp_red_view_of(req, &c->v);
    res->lay = c->v.lay;
    if (mk != NULL && (req->ptp ||
                       req->count || req->div != 0.0 ||
                       req->op == GR_ARGMIN || req->op == GR_ARGMAX ||
                       (in->host != NULL && mk->host == NULL))) {
        /* (api.c sends host inputs with host masks) */
        gr_status_kind(st, GR_E_VALUE, "where= is not taken by this function");
        return -1;
    }
    /* var/std: every slice holds L elements (nanvar: its counts say) */
    res->dof_bad = (req->var == 1 || req->var == 2) &&
                   !var_nan(req, in->t) &&
                   (double)c->v.lay.L - req->ddof <= 0.0;
    /* min/max into a narrower dtype (out's, NumPy's same-kind rule)
     * compare in it: device inputs are cast by the copy below (host
     * inputs come cast by api.c) */
    c->ct = ((req->op == GR_MIN || req->op == GR_MAX) &&
             in->t != req->rt && !GR_IS_HALF(in->t)) ? req->rt : in->t;
    return 0;
}

/* The host path where placement picks it: 0 or -1 (done), 1: the device
 * (placed there, or an operator the host path lacks). */
static int red_on_host(red_call *c)
{
    gr_request *req = c->req;
    gr_result *res = c->res;
    const gr_operand *in = c->in, *mk = c->mk;
    const red_view *v = &c->v;
    if (!(req->host_ok && in->host != NULL && c->ct == in->t &&
          !GR_IS_HALF(in->t) &&
          (!req->out.present || req->out.blk == NULL) &&
          gr_place(&req->dev, req->roam, GR_FAM_REDUCE, req->op, &v->lay,
                   v->lay.M * v->lay.L * c->isz,
                   gr_host_factor(req->var == 3 ? GR_HW_NANMEAN
                                  : req->var ? GR_HW_VAR
                                  : req->ptp ? GR_HW_PTP
                                  : nan_floats(req, in->t) || mk != NULL
                                      ? GR_HW_COPY_REDUCE : GR_HW_PLAIN),
                   mk != NULL    ? " (where=: a masked copy first)"
                   : req->var == 3 ? " (nanmean: NaN-masked double lanes)"
                   : req->var    ? " (var/std: two passes)"
                   : req->ptp    ? " (ptp: max, then min)"
                                 : " (a copy first: nan*)",
                   req->mode == GR_EXPLAIN ? res->place_why : NULL,
                   sizeof res->place_why))) {
        return 1;
    }
    /* The host path: no OpenCL call, no device lock. */
    res->where = 1;
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    const int rc = mk != NULL && mk->host != NULL
                       ? dp_masked_on_host(req, v, res, c->st)
                       : mk != NULL ? 1 : dp_reduce_on_host(req, v, res, c->st);
    if (rc <= 0) {
        return rc;
    }
    res->where = 0; /* an operator the host path lacks: the device */
    return 1;
}

/* The accumulator's where= fields (after each red_plan). */
static void red_where(red_call *c)
{
    c->acc.where = c->mk != NULL ? c->req->wmode : 0;
    c->acc.wt = c->mk != NULL ? c->mk->t : GR_BOOL;
    c->acc.waxis = c->along;
}

/* The plan, and the layout of a copy where the view needs one (planned
 * again for it). */
static int red_plan_call(red_call *c)
{
    gr_request *req = c->req;
    gr_device *d = c->d;
    if (red_plan(d, req, c->ct, &c->v, &c->acc, &c->plan, c->st) != 0) {
        return -1;
    }
    /* where=: a mask laid out otherwise than the input is gathered with
     * it (both in split_dims order) */
    c->along = c->mk != NULL && req->wax >= 0;
    red_where(c);
    c->wcopy_all = c->mk != NULL && !c->along && !mask_in_step(req);
    /* Work-group variants read contiguous segments; host views that are
     * mostly gaps are not uploaded as they are; a min/max into a narrower
     * dtype compares cast elements (a casting copy). */
    const gr_layout *lay = &c->v.lay;
    const int need_rows = c->plan.kind == GR_K_GROUP && lay->elem_stride != 1;
    c->span_elems = (lay->M - 1) * (size_t)lay->seg_stride +
                    (lay->L - 1) * (size_t)lay->elem_stride + 1;
    const int sparse = c->in->host != NULL && d->is_gpu &&
                       c->span_elems > 4 * lay->M * lay->L + 64;
    if (!c->v.ok || need_rows || sparse || c->ct != c->in->t ||
        c->wcopy_all) {
        contiguous_layout(&c->v);
        c->res->copied = 1;
        if (red_plan(d, req, c->ct, &c->v, &c->acc, &c->plan, c->st) != 0) {
            return -1;
        }
        red_where(c);
    }
    c->res->acc = c->acc;
    c->res->lay = c->v.lay;
    c->res->plan.reduce = c->plan;
    return 0;
}

/* Host input: in place, or gathered (with its mask) into aligned copies
 * without the lock. */
static int red_input_host(red_call *c, int gn, const size_t *gshape,
                          const ptrdiff_t *gstr)
{
    const gr_request *req = c->req;
    const gr_operand *in = c->in, *mk = c->mk;
    const size_t isz = c->isz, wsz = c->wsz;
    const red_view *v = &c->v;
    gr_status *st = c->st;
    if (!c->res->copied) {
        c->hptr = in->host + v->base * (ptrdiff_t)isz;
        c->wptr = mk != NULL && !c->along
                      ? mk->host + v->base * (ptrdiff_t)wsz : NULL;
        return 0;
    }
    ptrdiff_t bstr[GR_MAXDIMS];
    for (int i = 0; i < gn; ++i) {
        bstr[i] = gstr[i] * (ptrdiff_t)isz;
    }
    c->host_copy = dp_aligned_alloc_bytes(v->lay.M * v->lay.L * isz);
    if (c->host_copy == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory copying "
                       "%zu bytes", v->lay.M * v->lay.L * isz);
        return -1;
    }
    if (mk != NULL && !c->along &&
        (c->wcopy = dp_aligned_alloc_bytes(v->lay.M * v->lay.L * wsz)) ==
            NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    gr_unlock(c->d);
    if (mk != NULL) {
        dp_gather_masked(req, c->host_copy, c->wcopy); /* (along: NULL) */
    } else {
        dp_host_gather(c->host_copy, in->host + v->gbase * (ptrdiff_t)isz,
                       gn, gshape, bstr, isz);
    }
    gr_lock(c->d);
    c->hptr = c->host_copy;
    c->wptr = c->along ? NULL : c->wcopy;
    return 0;
}

/* A device input's mask beside its copy (cstr: the copy's strides): a
 * device copy, or a host gather uploaded. */
static int red_mask_copied(red_call *c, const ptrdiff_t *cstr)
{
    const gr_request *req = c->req;
    const gr_operand *mk = c->mk;
    gr_device *d = c->d;
    gr_status *st = c->st;
    const size_t wsz = c->wsz, ML = c->v.lay.M * c->v.lay.L;
    size_t ws[GR_MAXDIMS];
    ptrdiff_t wstr[GR_MAXDIMS];
    const int wn = dp_split_dims(mk, req->axes, ws, wstr);
    if (mk->blk != NULL) {
        for (int i = 0; i < wn; ++i) {
            wstr[i] /= (ptrdiff_t)wsz;
        }
        if ((c->tmp_w = gr_block_get(d, ML * wsz, st)) == NULL ||
            gr_copy_nd(d, mk->blk->mem, mk->t, mk->off / wsz, c->tmp_w->mem,
                       mk->t, 0, wn, ws, wstr, cstr, NULL, st) != 0) {
            return -1;
        }
        c->wmem = c->tmp_w->mem;
        return 0;
    }
    if ((c->wcopy = dp_aligned_alloc_bytes(ML * wsz)) == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    gr_unlock(d);
    dp_host_gather(c->wcopy, mk->host, wn, ws, wstr, wsz);
    gr_lock(d);
    if (gr_input_from_host(d, c->wcopy, ML * wsz, wsz, &c->win, st) != 0) {
        return -1;
    }
    c->wmem = c->win.mem;
    c->wbase = c->win.base;
    return 0;
}

/* Device input: a copy in (kept..., reduced...) order (casting), or in
 * place; its mask beside it (the weights vector: red_input). */
static int red_input_device(red_call *c, int gn, const size_t *gshape,
                            const ptrdiff_t *gstr)
{
    const gr_operand *in = c->in, *mk = c->mk;
    const size_t isz = c->isz, wsz = c->wsz;
    const red_view *v = &c->v;
    gr_device *d = c->d;
    gr_status *st = c->st;
    if (c->res->copied) {
        ptrdiff_t cstr[GR_MAXDIMS];
        if (dp_gather_device(d, in, v->gbase, gn, gshape, gstr, c->ct,
                             &c->tmp_in, cstr, st) != 0) {
            return -1;
        }
        c->dmem = c->tmp_in->mem;
        c->dbase = 0;
        return mk != NULL && !c->along ? red_mask_copied(c, cstr) : 0;
    }
    c->dmem = in->blk->mem;
    c->dbase = (size_t)((ptrdiff_t)(in->off / isz) + v->base);
    if (c->along || mk == NULL) {
        /* (the weights vector: red_input) */
    } else if (mk->blk != NULL) {
        c->wmem = mk->blk->mem;
        c->wbase = (size_t)((ptrdiff_t)(mk->off / wsz) + v->base);
    } else {
        if (gr_input_from_host(d, mk->host + v->base * (ptrdiff_t)wsz,
                               c->span_elems * wsz, wsz, &c->win, st) != 0) {
            return -1;
        }
        c->wmem = c->win.mem;
        c->wbase = c->win.base;
    }
    return 0;
}

/* The input as the layout reads it (host or device), and average's
 * weights vector. */
static int red_input(red_call *c)
{
    const gr_request *req = c->req;
    size_t gshape[GR_MAXDIMS];
    ptrdiff_t gstr[GR_MAXDIMS];
    int gn = c->res->copied ? dp_red_gather_dims(&c->v, gshape, gstr) : 0;
    if (c->res->copied && c->mk != NULL) {
        /* data and mask gathered alike, from element 0 */
        gn = dp_split_dims(c->in, req->axes, gshape, gstr);
        for (int i = 0; i < gn; ++i) {
            gstr[i] /= (ptrdiff_t)c->isz;
        }
        c->v.gbase = 0;
    }
    if (c->in->host != NULL ? red_input_host(c, gn, gshape, gstr) != 0
                            : red_input_device(c, gn, gshape, gstr) != 0) {
        return -1;
    }
    if (c->along &&
        weights_vector(c->d, req, c->v.lay.L,
                       !c->res->copied && c->in->strides[req->wax] < 0,
                       &c->tmp_w, &c->wmem, &c->wbase, c->st) != 0) {
        return -1;
    }
    return 0;
}

/* A mean into a new device result divides in its reduction's final pass
 * (reduce.cl GR_MDIV: the sum in st, over the count in double where the
 * device has it, rounded once into rt -- copy.cl's epilogue, one launch
 * fewer: a 1 KiB mean on the H200 was two launches, 13.6 us against
 * torch's 8.0).  Device input, a float sum into a float result, the
 * pass-by-pass plans (the atomic one finishes in a kernel of its own).
 * 1 (acc.md and var_n set) or 0. */
static int red_fuse_mean(red_call *c)
{
    const gr_request *req = c->req;
    const gr_dtype rt = req->rt, st = req->st;
    /* (a division is set only for a plain mean: no var, mask or out) */
    if (req->div == 0.0 || c->hptr != NULL || c->plan.atomic ||
        (rt != GR_FLOAT32 && rt != GR_FLOAT64) ||
        (st != GR_FLOAT32 && st != GR_FLOAT64)) {
        return 0;
    }
    c->acc.md = (int)rt + 1;
    c->acc.var_n = (unsigned long long)req->div;
    return 1;
}

/* Where the results go: straight into out or a new block, else into a
 * temporary of computed results the epilogue finishes. */
static int red_destination(red_call *c)
{
    const gr_request *req = c->req;
    gr_device *d = c->d;
    const int has_epi = red_epilogue(req, &c->epi);
    const size_t M = c->v.lay.M;
    if (req->out.present && req->out.blk != NULL) {
        c->on = dp_out_geometry(&req->out, c->oshape, c->ostr);
        size_t n1 = 1;
        ptrdiff_t s1 = 1;
        c->final_mem = req->out.blk->mem;
        c->final_off = req->out.off / isz_of(req->out.t);
        c->dt = req->out.t;
        c->direct = c->on >= 0 &&
                    dp_collapse(c->oshape, c->ostr, c->on, &n1, &s1) &&
                    (s1 == 1 || n1 == 1) && c->dt == req->rt && !has_epi;
        if (req->div != 0.0 && c->dt != req->rt) {
            c->epi.via_dst = 1; /* NumPy's mean into another dtype */
        }
    } else if (req->out.present) {
        /* host memory: M contiguous results of rt (api.c casts) */
        c->dt = req->rt;
        c->direct = !has_epi;
    } else {
        /* a new device result, C-contiguous */
        if ((c->res->blk[0] = gr_block_get(d, M * isz_of(req->rt),
                                           c->st)) == NULL) {
            return -1;
        }
        c->dt = req->rt;
        c->final_mem = c->res->blk[0]->mem;
        c->final_off = 0;
        c->direct = !has_epi || red_fuse_mean(c);
        c->on = c->v.nk;
        size_t acc_n = 1;
        for (int i = c->v.nk - 1; i >= 0; --i) {
            c->oshape[i] = c->v.kshape[i];
            c->ostr[i] = (ptrdiff_t)acc_n;
            acc_n *= c->v.kshape[i];
        }
    }
    if (c->direct && req->out.present && req->out.blk == NULL) {
        c->o.host = req->out.host;
    } else if (c->direct) {
        c->o.mem = c->final_mem;
        c->o.off = c->final_off;
    } else {
        if ((c->tmp_res = gr_block_get(d, M * gr_result_size(req->op,
                                                             &c->acc),
                                       c->st)) == NULL) {
            return -1;
        }
        c->o.mem = c->tmp_res->mem;
        c->o.off = 0;
    }
    return 0;
}

/* The kernels (reduce.c): host input by pieces (reduce_host), device
 * input as one piece; nanargmin/nanargmax's all-NaN check. */
static int red_run(red_call *c)
{
    gr_request *req = c->req;
    gr_device *d = c->d;
    gr_status *st = c->st;
    /* nanvar/nanstd into host results: NumPy's warning (nanvar_dof) */
    c->dof_check = c->acc.var && c->acc.nan && c->hptr != NULL &&
                   req->out.present && req->out.blk == NULL &&
                   req->mode == GR_RUN;
    if (c->hptr != NULL) {
        return reduce_host(d, req, &c->acc, &c->v.lay, &c->plan, c->hptr,
                           c->wptr, c->along ? c->wmem : NULL,
                           (ptrdiff_t)c->wbase, &c->o,
                           req->mode == GR_BENCH ? req->reps : 0, req->ns,
                           st);
    }
    /* (along: the vector's own index, not an offset from dbase) */
    gr_piece piece = {c->dmem, c->dbase, c->v.lay.L, c->wmem,
                      c->along ? (ptrdiff_t)c->wbase
                               : (ptrdiff_t)c->wbase - (ptrdiff_t)c->dbase};
    gr_timing tm = {0, 0};
    int rc = 0;
    for (int i = 0; rc == 0 && i < (req->mode == GR_BENCH ? req->reps : 1);
         ++i) {
        rc = gr_reduce_run(d, req->op, &c->acc, &c->v.lay, &c->plan, &piece,
                           1, NULL, &c->o,
                           req->mode == GR_BENCH ? &tm : NULL, st);
        if (req->ns != NULL) {
            req->ns[i] = tm.first_ns + tm.second_ns;
        }
    }
    if (rc == 0 && req->nan_check && c->acc.nan && c->o.mem != NULL &&
        c->v.lay.L > 0 && (req->op == GR_ARGMIN || req->op == GR_ARGMAX)) {
        int suspect = 0;
        rc = gr_nanarg_check(d, req->op, &c->acc, &c->v.lay, &c->plan,
                             &piece, c->o.mem, c->o.off, &suspect, st);
        c->res->nan_idx = rc == 0 ? 1 + suspect : 0;
    }
    return rc;
}

/* initial= into a device out of another dtype: folded in rt (the
 * epilogue's constant is rt's), then cast into out, NumPy's order
 * (sum(int32 [1, 2], dtype=int8, out=float32, initial=1) is 4.0). */
static int red_finish_initial(red_call *c, gr_dtype rest)
{
    const size_t one[1] = {c->v.lay.M};
    const ptrdiff_t unit[1] = {1};
    gr_epilogue cast;
    memset(&cast, 0, sizeof cast);
    cast.mode = GR_EPI_CAST;
    if ((c->tmp_rt = gr_block_get(c->d, c->v.lay.M * isz_of(c->req->rt),
                                  c->st)) == NULL ||
        gr_copy_nd(c->d, c->tmp_res->mem, rest, 0, c->tmp_rt->mem,
                   c->req->rt, 0, 1, one, unit, unit, &c->epi, c->st) != 0) {
        return -1;
    }
    return dp_copy_packed(c->d, c->tmp_rt->mem, c->req->rt, c->final_mem,
                          c->dt, c->final_off, c->on, c->oshape, c->ostr,
                          &cast, c->st);
}

/* The epilogue: computed results (st or int64) -> destination (through a
 * device temporary of rt and a read for host out); nanvar's check. */
static int red_finish(red_call *c)
{
    const gr_request *req = c->req;
    gr_device *d = c->d;
    gr_status *st = c->st;
    const size_t M = c->v.lay.M;
    if (c->direct) {
        if (c->dof_check) {
            dp_nanvar_dof(req, &c->v, c->hptr, c->wptr, c->ct, c->res);
        }
        return 0;
    }
    const gr_dtype rest = (req->op == GR_ARGMIN || req->op == GR_ARGMAX)
                              ? GR_INT64
                              : req->st;
    if (req->out.present && req->out.blk == NULL) {
        /* host: into a device temporary of rt, then read back */
        const size_t one[1] = {M};
        const ptrdiff_t unit[1] = {1};
        gr_block *tmp_rt = NULL;
        if ((c->tmp_rt = tmp_rt = gr_block_get(d, M * isz_of(req->rt),
                                               st)) == NULL ||
            gr_copy_nd(d, c->tmp_res->mem, rest, 0, tmp_rt->mem, req->rt, 0,
                       1, one, unit, unit, &c->epi, st) != 0) {
            return -1;
        }
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, tmp_rt->mem, CL_TRUE, 0,
                                            M * isz_of(req->rt),
                                            req->out.host, 0, NULL, NULL));
        if (c->dof_check) {
            dp_nanvar_dof(req, &c->v, c->hptr, c->wptr, c->ct, c->res);
        }
        return 0;
    }
    if (c->epi.mode == GR_EPI_OP && c->dt != req->rt) {
        return red_finish_initial(c, rest);
    }
    return dp_copy_packed(d, c->tmp_res->mem, rest, c->final_mem, c->dt,
                          c->final_off, c->on, c->oshape, c->ostr, &c->epi,
                          st);
fail:
    return -1;
}

/* Temporaries back, the lock released, host copies freed. */
static void red_end(red_call *c, int rc)
{
    if (c->win.zero_copy) {
        clFinish(c->d->queue); /* host memory read in place */
    }
    gr_input_release(&c->win);
    gr_block_put(c->tmp_in);
    gr_block_put(c->tmp_res);
    gr_block_put(c->tmp_rt);
    gr_block_put(c->tmp_w);
    if (rc != 0) {
        gr_result_clear(c->res);
    }
    gr_unlock(c->d);
    free(c->host_copy);
    free(c->wcopy);
}

/* A reduction: host path > plan > input > destination > kernels >
 * epilogue. */
int dp_run_reduce(gr_request *req, gr_result *res, gr_status *st)
{
    red_call c;
    int rc;
    if (red_start(&c, req, res, st) != 0) {
        return -1;
    }
    if ((rc = red_on_host(&c)) <= 0) {
        return rc;
    }
    if ((c.d = dp_dev_begin(req, st)) == NULL) {
        return -1;
    }
    rc = red_plan_call(&c);
    if (rc == 0 && req->mode != GR_EXPLAIN &&
        (rc = red_input(&c)) == 0 && (rc = red_destination(&c)) == 0 &&
        (rc = red_run(&c)) == 0) {
        rc = red_finish(&c);
    }
    red_end(&c, rc);
    return rc;
}
