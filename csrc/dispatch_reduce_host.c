/*
 * gpured — dispatch layer, reductions on the host path: host memory
 * reduced on the calling thread (or hostpar.c's threads) by host.c's
 * loops, no OpenCL call, no device lock: plain reductions (var/std, ptp,
 * nan*, count, initial, mean) and where=/weights (a masked copy first).
 * dispatch_reduce.c calls these where placement picks the host.
 */

#include "dispatch_common.h"
#include "hostpar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int var_on_host(const gr_request *req, const red_view *v,
                       gr_result *res, gr_status *st)
{
    const gr_operand *in = &req->in;
    const size_t isz = isz_of(in->t), M = v->lay.M, L = v->lay.L;
    const char *base = in->host + v->base * (ptrdiff_t)isz;
    ptrdiff_t ss = v->lay.seg_stride, es = v->lay.elem_stride;
    const int nan = var_nan(req, in->t);
    char *copy = NULL;
    if (!v->ok) {
        if ((copy = malloc(M * L * isz + 1)) == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            return -1;
        }
        dp_gather_rows(v, base, isz, copy);
        base = copy;
        ss = (ptrdiff_t)L;
        es = 1;
    }
    for (size_t m = 0; m < M; ++m) {
        double n;
        dp_put_double(req->out.host, req->rt, m,
                      gr_host_var(base + (ptrdiff_t)m * ss * (ptrdiff_t)isz,
                               in->t, L, es, nan, req->ddof, req->var,
                               &n),
                      0);
        res->dof_bad |= n - req->ddof <= 0.0;
    }
    free(copy);
    return 0;
}

/* ptp on the host path: the host's max and its min (two passes, placed
 * as such: HOST_PTP), then their difference.  2-core machine, float32,
 * host / PoCL: 1 MiB 0.03 / 0.13 ms, 4 MiB 0.11 / 0.20, 16 MiB 0.47 /
 * 0.47, 64 MiB 4.05 / 2.26 (2026-11-26): 2.2 puts the edge near 10 MB
 * with the default rates. */
static int ptp_on_host(const gr_request *req, const red_view *v,
                       gr_result *res, gr_status *st)
{
    gr_request r = *req;
    const size_t sz = isz_of(req->rt);
    char *z = malloc(v->lay.M * sz + 1);
    int rc;
    if (z == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    r.ptp = 0;
    r.op = GR_MAX;
    rc = dp_reduce_on_host(&r, v, res, st);
    if (rc == 0) {
        r.op = GR_MIN;
        r.out.host = z;
        rc = dp_reduce_on_host(&r, v, res, st);
    }
    if (rc == 0) {
        dp_ptp_finish(req->out.host, z, req->rt, v->lay.M);
    }
    free(z);
    return rc;
}

/* A host-path reduction's rows: M rows of Lh elements from base (strides
 * ss, es, elements), a copy where the view needed one (gathered, NaNs
 * replaced, initial as column 0), and which rows held NaNs only. */
typedef struct {
    const gr_request *req;
    gr_status *st;
    size_t isz, M, L, Lh;
    gr_dtype ct;           /* the computed dtype (argmin/argmax: int64)   */
    int init_col;          /* initial as column 0 (the input's dtype)     */
    int nan, skip;         /* nan*; nanmin/nanmax (NaN-only rows: NaN)    */
    char *copy;
    unsigned char *allnan;
    const char *base;
    ptrdiff_t ss, es;
} host_rows;

/* (kept..., reduced...) in C order, behind a column of initial (nan*: a
 * copy with the NaNs replaced). */
static int host_rows_copy(host_rows *h, const red_view *v)
{
    const gr_request *req = h->req;
    const gr_operand *in = &req->in;
    const size_t isz = h->isz, M = h->M, L = h->L;
    const size_t lead = h->init_col ? 1 : 0;
    char *rows = NULL;
    const size_t Lh = h->Lh = L + lead;
    char *copy = h->copy = malloc(M * Lh * isz + 1);
    rows = lead ? malloc(M * L * isz + 1) : copy;
    if (copy == NULL || rows == NULL) {
        if (rows != copy) {
            free(rows);
        }
        gr_status_kind(h->st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    dp_gather_rows(v, in->host + v->base * (ptrdiff_t)isz, isz, rows);
    if (h->nan && !h->skip) {
        dp_replace_nan(rows, in->t, M, L, req->op, NULL);
    }
    if (lead) {
        for (size_t m = 0; m < M; ++m) {
            memcpy(copy + m * Lh * isz, req->initial, isz);
            memcpy(copy + (m * Lh + 1) * isz, rows + m * L * isz, L * isz);
        }
        free(rows);
    }
    if (h->skip) {
        if ((h->allnan = malloc(M + 1)) == NULL) {
            gr_status_kind(h->st, GR_E_MEMORY, "out of host memory");
            return -1;
        }
        dp_replace_nan(copy, in->t, M, Lh, req->op, h->allnan);
    }
    h->base = copy;
    h->ss = (ptrdiff_t)Lh;
    h->es = 1;
    return 0;
}

/* The rows' results into y (dtype ct): count_nonzero (element != 0, NaN
 * included) or the count of valid elements (not NaN); else host.c's
 * reduction (1: it lacks the operator). */
static int host_rows_reduce(const host_rows *h, const gr_host_op *o, char *y)
{
    const gr_request *req = h->req;
    if (req->count) {
        for (size_t m = 0; m < h->M; ++m) {
            dp_put_double(y, h->ct, m,
                          (double)gr_host_count(h->base + (ptrdiff_t)m *
                                                              h->ss *
                                                              (ptrdiff_t)h->isz,
                                                req->in.t, h->Lh, h->es,
                                                req->count == 2),
                          0);
        }
        return 0;
    }
    return gr_host_reduce(o, h->base, h->M, h->Lh, h->ss, h->es, y) != 0;
}

/* A reduction of host memory on the calling thread (host.c): the view v
 * (gathered first where it is not one M x L layout), `initial` folded in
 * first as NumPy's reduction does (as column 0 of a copy when it has the
 * input's dtype, else folded with the row's result), mean's division.
 * 0, -1 (st set), or 1: the host path lacks this operator. */
int dp_reduce_on_host(const gr_request *req, const red_view *v,
                      gr_result *res, gr_status *st)
{
    if (req->var) {
        return var_on_host(req, v, res, st);
    }
    if (req->ptp) {
        return ptp_on_host(req, v, res, st);
    }
    const gr_operand *in = &req->in;
    const gr_device *d = gr_device_get(req->dev);
    const int arg = req->op == GR_ARGMIN || req->op == GR_ARGMAX;
    host_rows h = {req, st, isz_of(in->t), v->lay.M, v->lay.L, v->lay.L,
                   arg ? GR_INT64 : req->st};
    const size_t isz = h.isz, M = h.M, csz = isz_of(h.ct);
    h.init_col = req->has_initial && h.ct == in->t;
    h.nan = nan_floats(req, in->t);
    /* nanmin/nanmax: replaced by +-inf, NaN again where a row (initial
     * included) held NaNs only */
    h.skip = h.nan && (req->op == GR_MIN || req->op == GR_MAX);
    h.base = in->host + v->base * (ptrdiff_t)isz;
    h.ss = v->lay.seg_stride;
    h.es = v->lay.elem_stride;
    char *y = NULL;
    int rc = -1;
    (void)res;
    if ((!v->ok || h.init_col || h.nan) && host_rows_copy(&h, v) != 0) {
        goto out;
    }
    /* a large call on several threads, where the model says so */
    gr_host_op o = {req->op, in->t, h.ct, d->fp64, 1, 0};
    gr_host_par(req->dev, gr_rate_family(GR_FAM_REDUCE, req->op, &v->lay),
                M * h.Lh * isz, &o.threads, &o.grain);
    const int fold_init = req->has_initial && !h.init_col;
    if (h.skip && fold_init) {
        rc = 1; /* an initial of another dtype: the device's fmin epilogue */
        goto out;
    }
    const int epi = req->div != 0.0 || fold_init;
    y = epi ? malloc(M * csz + 1) : req->out.host;
    if (y == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        goto out;
    }
    if (host_rows_reduce(&h, &o, y) != 0) {
        rc = 1;
        goto out;
    }
    dp_host_allnan(y, h.ct, M, h.allnan);
    if (h.init_col && req->op == GR_ADD && gr_dtypes[h.ct].is_float) {
        dp_host_neg0(y, h.ct, M, h.base, h.ss, h.es, h.Lh, isz);
    }
    if (fold_init) {
        rc = dp_host_fold_initial(req, h.ct, d->fp64, y, M, st);
        goto out;
    } else if (req->div != 0.0) {
        dp_host_mean(req, y, h.ct, M);
    }
    rc = 0;
out:
    if (y != NULL && y != req->out.host) {
        free(y);
    }
    free(h.copy);
    free(h.allnan);
    return rc;
}

/* mean(where=) and average(weights) on the host path (var 4): per row,
 * the elements (a masked-out one as 0, a weighted one times its weight)
 * summed in double with Neumaier's compensation, over the sum of the
 * second operand (the mask's count, the weights), rounded once into the
 * result dtype: the kernels' answer. */
static void ratio_rows(const gr_request *req, const char *x, const char *w,
                       size_t M, size_t L, size_t wrow, void *out)
{
    const gr_dtype t = req->in.t, wt = req->mask.t;
    for (size_t m = 0; m < M; ++m) {
        double s = 0.0, c = 0.0, sw = 0.0;
        for (size_t i = 0; i < L; ++i) {
            const size_t k = m * L + i;
            if (GR_PAR_STOP_AT(i)) {
                return; /* Ctrl-C (issue 39): the result is dropped */
            }
            const double wk = gr_host_as_double(w, wt,
                                                (ptrdiff_t)(m * wrow + i));
            double y;
            if (req->wmode == 1) {
                if (wk == 0.0) {
                    continue;
                }
                y = gr_host_as_double(x, t, (ptrdiff_t)k);
            } else {
                y = gr_host_as_double(x, t, (ptrdiff_t)k) * wk;
            }
            const double u = s + y;
            c += fabs(s) >= fabs(y) ? (s - u) + y : (y - u) + s;
            s = u;
            sw += wk;
        }
        /* (an infinite or NaN sum leaves c NaN: the sum as it is) */
        dp_put_double(out, req->rt, m, (isfinite(s) ? s + c : s) / sw, 0);
    }
}

/* where= on the host path: the elements gathered into M rows of L with
 * every masked-out one replaced (put_masked), then the plain host path
 * over that copy (a copy, as the nan* forms make; the device's loads
 * select in place). */
int dp_masked_on_host(const gr_request *req, const red_view *v,
                      gr_result *res, gr_status *st)
{
    const size_t isz = isz_of(req->in.t), M = v->lay.M, L = v->lay.L;
    const size_t wsz = isz_of(req->mask.t);
    const int along = req->wax >= 0; /* 1-d weights: one row of L */
    /* min/max with initial: the copy takes the initial as its rows' first
     * column (reduce_on_host would copy once more to put it there) */
    const int lead = req->has_initial && !req->var &&
                     (req->op == GR_MIN || req->op == GR_MAX);
    char *copy = malloc(M * (L + lead) * isz + 1);
    char *w = malloc((along ? L : M * L) * wsz + 1);
    int rc = -1;
    if (copy == NULL || w == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        goto out;
    }
    dp_gather_masked(req, copy, along ? NULL : w);
    if (along) {
        dp_host_gather(w, req->mask.host, 1, req->mask.shape,
                       req->mask.strides, wsz);
    }
    if (req->var == 4) {
        ratio_rows(req, copy, w, M, L, along ? 0 : L, req->out.host);
        rc = 0;
        goto out;
    }
    gr_request r = *req;
    red_view v2;
    const int vn = req->var ? var_nan(req, req->in.t) : 0;
    if (vn) {
        /* var/std: a float64 copy, a masked-out element NaN (skipped), a
         * kept NaN +inf (var/std: counted, var_nan) */
        double *dc = malloc(M * L * sizeof(double) + 1);
        if (dc == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            goto out;
        }
        for (size_t i = 0; i < M * L && !GR_PAR_STOP_AT(i); ++i) {
            const double x = gr_host_as_double(copy, req->in.t, (ptrdiff_t)i);
            dc[i] = !w[i] ? NAN : vn == 2 && isnan(x) ? INFINITY : x;
        }
        free(copy);
        copy = (char *)dc;
        r.in.t = GR_FLOAT64;
        r.nan = vn == 1;
    } else {
        const int skip = nan_floats(req, req->in.t) &&
                         (req->op == GR_MIN || req->op == GR_MAX);
        for (size_t i = 0; i < M * L && !GR_PAR_STOP_AT(i); ++i) {
            if (!w[i]) {
                dp_put_masked(copy, req->in.t, i, req->op, skip);
            }
        }
        for (size_t m = M; lead && m-- > 0;) { /* (in place, last row first) */
            memmove(copy + (m * (L + 1) + 1) * isz, copy + m * L * isz,
                    L * isz);
            memcpy(copy + m * (L + 1) * isz, req->initial, isz);
        }
        r.has_initial = !lead && req->has_initial;
    }
    memset(&r.mask, 0, sizeof r.mask);
    /* var/std keep where='s NaN rule over the copy (var_nan: nothing
     * else reads the absent mask) */
    r.mask.present = vn == 2;
    r.in.nd = 2;
    r.in.shape[0] = M;
    r.in.shape[1] = L + lead;
    r.in.strides[1] = (ptrdiff_t)isz_of(r.in.t);
    r.in.strides[0] = (ptrdiff_t)(L + lead) * r.in.strides[1];
    r.in.host = copy;
    r.axes = 2;
    dp_red_view_of(&r, &v2);
    rc = dp_reduce_on_host(&r, &v2, res, st);
out:
    free(copy);
    free(w);
    return rc;
}
