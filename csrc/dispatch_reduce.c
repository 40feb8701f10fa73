/*
 * gpured — dispatch layer, reductions on a device: the driver of the
 * reduce family (dp_run_reduce): the host path where placement picks it
 * (dispatch_reduce_host.c), else plan (policy.c), the input on the device
 * (in place, a copy, an upload, streamed or in pieces), the destination,
 * the kernels (reduce.c) and the epilogue into out.
 */

#include "dispatch.h"

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
    const size_t wsz = isz_of(acc->wt);
    gr_input inp[MAX_PIECES], winp[MAX_PIECES];
    gr_piece pieces[MAX_PIECES];
    gr_timing tm = {0, 0};
    const size_t isz = isz_of(acc->t);
    const size_t limit = d->max_alloc ? (size_t)d->max_alloc - 128
                                      : (size_t)-1;
    const size_t rsize = gr_result_size(req->op, acc);
    const size_t seg_bytes = ((lay->L - 1) * lay->elem_stride + 1) * isz;
    const size_t span = ((lay->M - 1) * lay->seg_stride +
                         (lay->L - 1) * lay->elem_stride + 1) * isz;
    int np = 0, rc = 0;

    memset(inp, 0, sizeof inp);
    memset(winp, 0, sizeof winp);
    if (acc->var && lay->M == 1) {
        /* var/std of one segment that may come in pieces: the shift is
         * the host's, as the kernels would pick it (nanvar: the first of
         * the first 8 elements that is not NaN, else 0) */
        double k = gr_host_as_double(ptr, acc->t, 0);
        for (size_t i = 1; acc->nan && isnan(k) && i < 8 && i < lay->L; ++i) {
            k = gr_host_as_double(ptr, acc->t, i);
        }
        if (wptr != NULL) {
            /* where=: the first finite one the mask keeps (the kernels'
             * gr_var_shift_w) */
            k = 0.0;
            for (size_t i = lay->L < 8 ? lay->L : 8; i-- > 0;) {
                const double x = gr_host_as_double(ptr, acc->t, i);
                k = wptr[i * wsz] && isfinite(x) ? x : k;
            }
        }
        acc->var_k = acc->nan && isnan(k) ? 0.0 : k;
        acc->var_self = 0;
    }
    if (reps == 0 && lay->M == 1 && lay->elem_stride == 1 && !plan->atomic &&
        wptr == NULL && wax_mem == NULL && gr_stream_wanted(d, lay->L * isz)) {
        /* One long contiguous segment on a GPU: stream it through the
         * pinned staging pool, planned for one chunk. */
        gr_layout sub = *lay;
        gr_plan p1;
        gr_source src;
        gr_stream_src *s = NULL;
        gr_piece *pc = NULL;
        const size_t per = gr_stream_chunk_elems(isz);
        sub.L = lay->L < per ? lay->L : per;
        if (gr_plan_reduce(d, req->op, acc, &sub, &req->kn, &p1) != 0) {
            gr_status_kind(st, GR_E_VALUE, "%s", p1.why);
            return -1;
        }
        if ((s = gr_stream_source(d, ptr, isz, lay->L, &src, &np, st)) ==
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
            rc = gr_reduce_run(d, req->op, acc, lay, &p1, pc, np, &src, o,
                               NULL, st);
        }
        if (gr_stream_source_end(s, st) != 0) {
            rc = -1;
        }
        free(pc);
        *plan = p1;
        return rc;
    }
    if (span <= limit) {
        /* One buffer for everything. */
        rc = gr_input_from_host(d, ptr, span, isz, &inp[0], st);
        pieces[0] = (gr_piece){inp[0].mem, inp[0].base, lay->L, wax_mem,
                               wax_delta};
        np = rc == 0;
        if (rc == 0 && wptr != NULL) {
            rc = mask_piece(d, wptr, span / isz, wsz, &inp[0], &winp[0],
                            &pieces[0], st);
        }
    } else if (lay->M == 1 && lay->elem_stride == 1 &&
               plan->kind == GR_K_GROUP && plan->chunk * isz <= limit) {
        /* One long segment: pieces of whole chunks. */
        const size_t per = limit / isz / plan->chunk * plan->chunk;
        for (size_t off = 0; rc == 0 && off < lay->L; off += per) {
            const size_t len = lay->L - off < per ? lay->L - off : per;
            if (np == MAX_PIECES) {
                gr_status_kind(st, GR_E_MEMORY, "input too large: more than "
                               "%d buffers of %zu bytes", MAX_PIECES, limit);
                rc = -1;
                break;
            }
            if (dp_interrupted(req)) {
                rc = dp_stop(st);
                break;
            }
            rc = gr_input_from_host(d, ptr + off * isz, len * isz, isz,
                                    &inp[np], st);
            pieces[np] = (gr_piece){inp[np].mem, inp[np].base, len, wax_mem,
                                    wax_delta};
            if (rc == 0 && wptr != NULL) {
                rc = mask_piece(d, wptr + off * wsz, len, wsz, &inp[np],
                                &winp[np], &pieces[np], st);
                if (rc != 0) {
                    gr_input_release(&inp[np]);
                }
            }
            np += rc == 0;
        }
    } else if (lay->M > 1 && seg_bytes <= limit &&
               (size_t)lay->seg_stride * isz >= seg_bytes) {
        /* Many segments: batches of whole segments, one run each. */
        const size_t per = 1 + (limit - seg_bytes) /
                                   ((size_t)lay->seg_stride * isz);
        for (size_t s0 = 0; rc == 0 && s0 < lay->M; s0 += per) {
            gr_layout sub = *lay;
            gr_plan p2;
            if (dp_interrupted(req)) {
                rc = dp_stop(st);
                break;
            }
            sub.M = lay->M - s0 < per ? lay->M - s0 : per;
            if (gr_plan_reduce(d, req->op, acc, &sub, &req->kn, &p2) != 0) {
                gr_status_kind(st, GR_E_VALUE, "%s", p2.why);
                rc = -1;
                break;
            }
            const char *p = ptr + s0 * lay->seg_stride * isz;
            const size_t nb = (sub.M - 1) * sub.seg_stride * isz + seg_bytes;
            gr_input one, wone;
            gr_piece pc = {NULL, 0, sub.L, wax_mem, wax_delta};
            memset(&wone, 0, sizeof wone);
            rc = gr_input_from_host(d, p, nb, isz, &one, st);
            if (rc == 0 && wptr != NULL &&
                mask_piece(d, wptr + s0 * lay->seg_stride * wsz, nb / isz,
                           wsz, &one, &wone, &pc, st) != 0) {
                gr_input_release(&one);
                rc = -1;
            }
            if (rc == 0) {
                pc.mem = one.mem;
                pc.base = one.base;
                gr_output ob = *o;
                if (ob.mem == NULL) {
                    ob.host = (char *)o->host + s0 * rsize;
                } else {
                    ob.off += s0;
                }
                rc = gr_reduce_run(d, req->op, acc, &sub, &p2, &pc, 1, NULL,
                                   &ob, NULL, st);
                if (one.zero_copy || wone.zero_copy) {
                    clFinish(d->queue);
                }
                gr_input_release(&one);
                gr_input_release(&wone);
            }
        }
        return rc;
    } else {
        gr_status_kind(st, GR_E_MEMORY, "input of %zu bytes does not fit the "
                       "device's largest buffer (%llu bytes) in this layout",
                       span, (unsigned long long)d->max_alloc);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < (reps > 0 ? reps : 1); ++i) {
        rc = gr_reduce_run(d, req->op, acc, lay, plan, pieces, np, NULL, o,
                           reps > 0 ? &tm : NULL, st);
        if (ns != NULL) {
            ns[i] = tm.first_ns + tm.second_ns;
        }
    }
    /* Host memory used in place must outlive the kernels reading it. */
    for (int i = 0; i < np; ++i) {
        if ((inp[i].zero_copy || winp[i].zero_copy) && o->mem != NULL) {
            clFinish(d->queue);
            break;
        }
    }
    for (int i = 0; i < np; ++i) {
        gr_input_release(&inp[i]);
        gr_input_release(&winp[i]);
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

int dp_run_reduce(gr_request *req, gr_result *res, gr_status *st)
{
    red_view v;
    gr_accum acc;
    gr_plan plan;
    gr_epilogue epi;
    gr_block *tmp_in = NULL, *tmp_res = NULL, *tmp_rt = NULL, *tmp_w = NULL;
    gr_input win;
    char *host_copy = NULL;
    char *wcopy = NULL;
    const gr_operand *in = &req->in;
    const gr_operand *mk = req->mask.present ? &req->mask : NULL;
    const size_t wsz = mk != NULL ? isz_of(mk->t) : 1;
    const size_t isz = isz_of(in->t);
    int rc = -1;

    memset(&win, 0, sizeof win);
    dp_red_view_of(req, &v);
    res->lay = v.lay;
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
                   (double)v.lay.L - req->ddof <= 0.0;
    /* min/max into a narrower dtype (out's, NumPy's same-kind rule)
     * compare in it: device inputs are cast by the copy below (host
     * inputs come cast by api.c) */
    const gr_dtype ct = ((req->op == GR_MIN || req->op == GR_MAX) &&
                         in->t != req->rt) ? req->rt : in->t;
    if (req->host_ok && in->host != NULL && ct == in->t &&
        (!req->out.present || req->out.blk == NULL) &&
        gr_place(&req->dev, req->roam, GR_FAM_REDUCE, req->op, &v.lay,
                      v.lay.M * v.lay.L * isz,
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
                      sizeof res->place_why)) {
        /* The host path: no OpenCL call, no device lock. */
        res->where = 1;
        if (req->mode == GR_EXPLAIN) {
            return 0;
        }
        rc = mk != NULL && mk->host != NULL
                 ? dp_masked_on_host(req, &v, res, st)
                 : mk != NULL ? 1 : dp_reduce_on_host(req, &v, res, st);
        if (rc <= 0) {
            return rc;
        }
        res->where = 0; /* an operator the host path lacks: the device */
    }
    gr_device *d = dp_dev_begin(req, st);
    if (d == NULL) {
        return -1;
    }
    if (red_plan(d, req, ct, &v, &acc, &plan, st) != 0) {
        goto done;
    }
    acc.where = mk != NULL ? req->wmode : 0;
    acc.wt = mk != NULL ? mk->t : GR_BOOL;
    /* where=: a mask laid out otherwise than the input is gathered with
     * it (both in split_dims order) */
    const int along = mk != NULL && req->wax >= 0;
    acc.waxis = along;
    const int wcopy_all = mk != NULL && !along && !mask_in_step(req);
    /* Work-group variants read contiguous segments; host views that are
     * mostly gaps are not uploaded as they are; a min/max into a narrower
     * dtype compares cast elements (a casting copy). */
    const int need_rows = plan.kind == GR_K_GROUP && v.lay.elem_stride != 1;
    const size_t span_elems = (v.lay.M - 1) * (size_t)v.lay.seg_stride +
                              (v.lay.L - 1) * (size_t)v.lay.elem_stride + 1;
    const int sparse = in->host != NULL && d->is_gpu &&
                       span_elems > 4 * v.lay.M * v.lay.L + 64;
    if (!v.ok || need_rows || sparse || ct != in->t || wcopy_all) {
        contiguous_layout(&v);
        res->copied = 1;
        if (red_plan(d, req, ct, &v, &acc, &plan, st) != 0) {
            goto done;
        }
        acc.where = mk != NULL ? req->wmode : 0;
        acc.wt = mk != NULL ? mk->t : GR_BOOL;
        acc.waxis = along;
    }
    res->acc = acc;
    res->lay = v.lay;
    res->plan.reduce = plan;
    if (req->mode == GR_EXPLAIN) {
        rc = 0;
        goto done;
    }
    /* The input as the layout reads it. */
    const char *hptr = NULL;
    const char *wptr = NULL; /* the second operand on the host, beside hptr */
    cl_mem dmem = NULL, wmem = NULL;  /* where=: device mask beside dmem */
    size_t dbase = 0, wbase = 0;
    size_t gshape[GR_MAXDIMS];
    ptrdiff_t gstr[GR_MAXDIMS];
    int gn = res->copied ? dp_red_gather_dims(&v, gshape, gstr) : 0;
    if (res->copied && mk != NULL) {
        /* data and mask gathered alike, from element 0 */
        gn = dp_split_dims(in, req->axes, gshape, gstr);
        for (int i = 0; i < gn; ++i) {
            gstr[i] /= (ptrdiff_t)isz;
        }
        v.gbase = 0;
    }
    if (in->host != NULL) {
        if (res->copied) {
            ptrdiff_t bstr[GR_MAXDIMS];
            for (int i = 0; i < gn; ++i) {
                bstr[i] = gstr[i] * (ptrdiff_t)isz;
            }
            host_copy = dp_aligned_alloc_bytes(v.lay.M * v.lay.L * isz);
            if (host_copy == NULL) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory copying "
                               "%zu bytes", v.lay.M * v.lay.L * isz);
                goto done;
            }
            if (mk != NULL && !along &&
                (wcopy = dp_aligned_alloc_bytes(v.lay.M * v.lay.L * wsz)) ==
                    NULL) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory");
                goto done;
            }
            gr_unlock();
            if (mk != NULL) {
                dp_gather_masked(req, host_copy, wcopy); /* (along: NULL) */
            } else {
                dp_host_gather(host_copy, in->host + v.gbase * (ptrdiff_t)isz,
                               gn, gshape, bstr, isz);
            }
            gr_lock();
            hptr = host_copy;
            wptr = along ? NULL : wcopy;
        } else {
            hptr = in->host + v.base * (ptrdiff_t)isz;
            wptr = mk != NULL && !along
                       ? mk->host + v.base * (ptrdiff_t)wsz : NULL;
        }
    } else {
        if (res->copied) {
            /* A device copy in (kept..., reduced...) order. */
            ptrdiff_t cstr[GR_MAXDIMS];
            size_t acc_n = 1;
            for (int i = gn - 1; i >= 0; --i) {
                cstr[i] = (ptrdiff_t)acc_n;
                acc_n *= gshape[i];
            }
            if ((tmp_in = gr_block_get(d, v.lay.M * v.lay.L * isz_of(ct),
                                       st)) == NULL ||
                gr_copy_nd(d, in->blk->mem, in->t,
                           (size_t)((ptrdiff_t)(in->off / isz) + v.gbase),
                           tmp_in->mem, ct, 0, gn, gshape, gstr, cstr,
                           NULL, st) != 0) {
                goto done;
            }
            dmem = tmp_in->mem;
            dbase = 0;
            if (along) {
                /* (the weights vector: below) */
            } else if (mk != NULL && mk->blk != NULL) {
                size_t ws[GR_MAXDIMS];
                ptrdiff_t wstr[GR_MAXDIMS];
                const int wn = dp_split_dims(mk, req->axes, ws, wstr);
                for (int i = 0; i < wn; ++i) {
                    wstr[i] /= (ptrdiff_t)wsz;
                }
                if ((tmp_w = gr_block_get(d, v.lay.M * v.lay.L * wsz, st)) ==
                        NULL ||
                    gr_copy_nd(d, mk->blk->mem, mk->t, mk->off / wsz,
                               tmp_w->mem, mk->t, 0, wn, ws, wstr, cstr, NULL,
                               st) != 0) {
                    goto done;
                }
                wmem = tmp_w->mem;
            } else if (mk != NULL) {
                if ((wcopy = dp_aligned_alloc_bytes(v.lay.M * v.lay.L * wsz)) ==
                    NULL) {
                    gr_status_kind(st, GR_E_MEMORY, "out of host memory");
                    goto done;
                }
                gr_unlock();
                size_t ws[GR_MAXDIMS];
                ptrdiff_t wstr[GR_MAXDIMS];
                const int wn = dp_split_dims(mk, req->axes, ws, wstr);
                dp_host_gather(wcopy, mk->host, wn, ws, wstr, wsz);
                gr_lock();
                if (gr_input_from_host(d, wcopy, v.lay.M * v.lay.L * wsz, wsz,
                                       &win, st) != 0) {
                    goto done;
                }
                wmem = win.mem;
                wbase = win.base;
            }
        } else {
            dmem = in->blk->mem;
            dbase = (size_t)((ptrdiff_t)(in->off / isz) + v.base);
            if (along) {
                /* (the weights vector: below) */
            } else if (mk != NULL && mk->blk != NULL) {
                wmem = mk->blk->mem;
                wbase = (size_t)((ptrdiff_t)(mk->off / wsz) + v.base);
            } else if (mk != NULL) {
                if (gr_input_from_host(d, mk->host + v.base * (ptrdiff_t)wsz,
                                       span_elems * wsz, wsz, &win,
                                       st) != 0) {
                    goto done;
                }
                wmem = win.mem;
                wbase = win.base;
            }
        }
    }

    if (along && weights_vector(d, req, v.lay.L,
                                !res->copied && in->strides[req->wax] < 0,
                                &tmp_w, &wmem, &wbase, st) != 0) {
        goto done;
    }

    /* Where the results go. */
    const int has_epi = red_epilogue(req, &epi);
    const size_t M = v.lay.M;
    const size_t rsize = gr_result_size(req->op, &acc);
    gr_output o = {NULL, NULL, 0};
    size_t oshape[GR_MAXDIMS];
    ptrdiff_t ostr[GR_MAXDIMS];
    int on = 0;
    cl_mem final_mem = NULL;     /* device destination of dtype dt        */
    size_t final_off = 0;
    gr_dtype dt = req->rt;
    int direct = 0;
    if (req->out.present && req->out.blk != NULL) {
        on = dp_out_geometry(&req->out, oshape, ostr);
        size_t n1 = 1;
        ptrdiff_t s1 = 1;
        final_mem = req->out.blk->mem;
        final_off = req->out.off / isz_of(req->out.t);
        dt = req->out.t;
        direct = on >= 0 && dp_collapse(oshape, ostr, on, &n1, &s1) &&
                 (s1 == 1 || n1 == 1) && dt == req->rt && !has_epi;
        if (req->div != 0.0 && dt != req->rt) {
            epi.via_dst = 1; /* NumPy's mean into another dtype */
        }
    } else if (req->out.present) {
        /* host memory: M contiguous results of rt (api.c casts) */
        direct = !has_epi;
    } else {
        /* a new device result, C-contiguous */
        if ((res->blk[0] = gr_block_get(d, M * isz_of(req->rt), st)) ==
            NULL) {
            goto done;
        }
        final_mem = res->blk[0]->mem;
        final_off = 0;
        direct = !has_epi;
        on = v.nk;
        size_t acc_n = 1;
        for (int i = v.nk - 1; i >= 0; --i) {
            oshape[i] = v.kshape[i];
            ostr[i] = (ptrdiff_t)acc_n;
            acc_n *= v.kshape[i];
        }
    }
    if (direct && req->out.present && req->out.blk == NULL) {
        o.host = req->out.host;
    } else if (direct) {
        o.mem = final_mem;
        o.off = final_off;
    } else {
        if ((tmp_res = gr_block_get(d, M * rsize, st)) == NULL) {
            goto done;
        }
        o.mem = tmp_res->mem;
        o.off = 0;
    }
    /* nanvar/nanstd into host results: NumPy's warning (nanvar_dof) */
    const int dof_check = acc.var && acc.nan && hptr != NULL &&
                          req->out.present && req->out.blk == NULL &&
                          req->mode == GR_RUN;
    if (hptr != NULL) {
        rc = reduce_host(d, req, &acc, &v.lay, &plan, hptr, wptr,
                         along ? wmem : NULL, (ptrdiff_t)wbase, &o,
                         req->mode == GR_BENCH ? req->reps : 0, req->ns, st);
    } else {
        /* (along: the vector's own index, not an offset from dbase) */
        gr_piece piece = {dmem, dbase, v.lay.L, wmem,
                          along ? (ptrdiff_t)wbase
                                : (ptrdiff_t)wbase - (ptrdiff_t)dbase};
        gr_timing tm = {0, 0};
        rc = 0;
        for (int i = 0; rc == 0 && i < (req->mode == GR_BENCH ? req->reps : 1);
             ++i) {
            rc = gr_reduce_run(d, req->op, &acc, &v.lay, &plan, &piece, 1,
                               NULL, &o, req->mode == GR_BENCH ? &tm : NULL,
                               st);
            if (req->ns != NULL) {
                req->ns[i] = tm.first_ns + tm.second_ns;
            }
        }
        if (rc == 0 && req->nan_check && acc.nan && o.mem != NULL &&
            v.lay.L > 0 && (req->op == GR_ARGMIN || req->op == GR_ARGMAX)) {
            int suspect = 0;
            rc = gr_nanarg_check(d, req->op, &acc, &v.lay, &plan, &piece,
                                 o.mem, o.off, &suspect, st);
            res->nan_idx = rc == 0 ? 1 + suspect : 0;
        }
    }
    if (rc != 0 || direct) {
        if (rc == 0 && dof_check) {
            dp_nanvar_dof(req, &v, hptr, wptr, ct, res);
        }
        goto done;
    }
    rc = -1;
    /* The epilogue: computed results (st or int64) -> destination. */
    const gr_dtype rest = (req->op == GR_ARGMIN || req->op == GR_ARGMAX)
                              ? GR_INT64
                              : req->st;
    if (req->out.present && req->out.blk == NULL) {
        /* host: into a device temporary of rt, then read back */
        const size_t one[1] = {M};
        const ptrdiff_t unit[1] = {1};
        if ((tmp_rt = gr_block_get(d, M * isz_of(req->rt), st)) == NULL ||
            gr_copy_nd(d, tmp_res->mem, rest, 0, tmp_rt->mem, req->rt, 0, 1,
                       one, unit, unit, &epi, st) != 0) {
            goto done;
        }
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, tmp_rt->mem, CL_TRUE, 0,
                                            M * isz_of(req->rt),
                                            req->out.host, 0, NULL, NULL));
        if (dof_check) {
            dp_nanvar_dof(req, &v, hptr, wptr, ct, res);
        }
    } else {
        ptrdiff_t cstr[GR_MAXDIMS];
        size_t acc_n = 1;
        if (on < 0) {
            gr_status_kind(st, GR_E_VALUE, "misaligned out");
            goto done;
        }
        for (int i = on - 1; i >= 0; --i) {
            cstr[i] = (ptrdiff_t)acc_n;
            acc_n *= oshape[i];
        }
        if (gr_copy_nd(d, tmp_res->mem, rest, 0, final_mem, dt, final_off, on,
                       oshape, cstr, ostr, &epi, st) != 0) {
            goto done;
        }
    }
    rc = 0;
fail:
done:
    if (win.zero_copy) {
        clFinish(d->queue); /* host memory read in place */
    }
    gr_input_release(&win);
    gr_block_put(tmp_in);
    gr_block_put(tmp_res);
    gr_block_put(tmp_rt);
    gr_block_put(tmp_w);
    if (rc != 0) {
        gr_result_clear(res);
    }
    gr_unlock();
    free(host_copy);
    free(wcopy);
    return rc;
}
