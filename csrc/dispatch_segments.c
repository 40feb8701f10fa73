/*
 * gpured — dispatch layer, reduceat (segments by offsets): the driver
 * dp_run_segments.
 *
 * reduceat: the input as rows x L x inner (C order: a copy where it is not
 * that), S checked offsets (host longs, req->vals) along the axis, rows x S
 * x inner results of rt into req->out (C-contiguous: api.c allocates it or
 * checked the user's).  Small host inputs are answered by host.c's loops
 * (one strided reduction per segment); the rest by kernels/segments.cl. */

#include "dispatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* NumPy's name of the ufunc behind a reduceat operator (messages). */
static const char *gr_op_ufunc(gr_op op)
{
    switch (op) {
    case GR_MUL: return "multiply";
    case GR_MIN: return "minimum";
    case GR_MAX: return "maximum";
    case GR_ALL: return "logical_and";
    case GR_ANY: return "logical_or";
    default: return "add";
    }
}

/* The end of segment s of a row of L (NumPy's reduceat: the next offset
 * where it is larger, else one element; the last runs to L). */
static size_t seg_end(const int64_t *idx, size_t s, size_t S, size_t L)
{
    const size_t lo = (size_t)idx[s];
    if (s + 1 == S) {
        return L;
    }
    return (size_t)idx[s + 1] > lo ? (size_t)idx[s + 1] : lo + 1;
}

/* Float sums of short contiguous segments, one element at a time with the
 * kernels' accuracy: float32 in double (where the device has fp64: one
 * rounding at the end), float64 (and float32 without fp64) with Knuth's
 * TwoSum, whose error term is a chain of its own beside the sum's. */
#define SEG_ADD(COMP, a, c, x)                                               \
    do {                                                                     \
        if (COMP) {                                                          \
            const __typeof__(a) u_ = (a) + (x), b_ = u_ - (a);               \
            (c) += ((a) - (u_ - b_)) + ((x) - b_);                           \
            (a) = u_;                                                        \
        } else {                                                             \
            (a) += (x);                                                      \
        }                                                                    \
    } while (0)
#define SEG_SUM_LOOP(T, ACC, COMP)                                           \
    do {                                                                     \
        const T *p = (const T *)src;                                         \
        T *y = (T *)out;                                                     \
        for (size_t r = 0; r < rows; ++r, p += L) {                          \
            for (size_t s = 0; s < S; ++s, ++y) {                            \
                const size_t lo = (size_t)idx[s];                            \
                const size_t hi = seg_end(idx, s, S, L);                     \
                ACC a = 0, c = 0, a1 = 0, c1 = 0;                            \
                size_t i = lo;                                               \
                for (; i + 1 < hi; i += 2) { /* two chains */                \
                    SEG_ADD(COMP, a, c, p[i]);                               \
                    SEG_ADD(COMP, a1, c1, p[i + 1]);                         \
                }                                                            \
                if (i < hi) {                                                \
                    SEG_ADD(COMP, a, c, p[i]);                               \
                }                                                            \
                SEG_ADD(COMP, a, c, a1);                                     \
                c += c1;                                                     \
                *y = (T)((isinf(a) || c == 0) ? a : a + c);                  \
            }                                                                \
        }                                                                    \
    } while (0)

static void sum_short_segments(gr_dtype t, const char *src, size_t rows,
                               size_t L, const int64_t *idx, size_t S,
                               char *out, int wide)
{
    if (t == GR_FLOAT64) {
        SEG_SUM_LOOP(double, double, 1);
    } else if (wide) {
        SEG_SUM_LOOP(float, double, 0);
    } else {
        SEG_SUM_LOOP(float, float, 1);
    }
}

static int segments_on_host(const gr_request *req, const char *src,
                            size_t rows, size_t L, size_t inner,
                            const int64_t *idx, size_t S)
{
    const gr_device *d = gr_device_get(req->dev);
    const size_t isz = isz_of(req->in.t), rsz = isz_of(req->rt);
    const gr_host_op o = {req->op, req->in.t, req->rt, d->fp64};
    char *out = req->out.host;
    if (inner == 1 && req->op == GR_ADD && req->rt == req->in.t &&
        (req->in.t == GR_FLOAT32 || req->in.t == GR_FLOAT64) &&
        L < gr_seg_short(req->in.t) * S) {
        /* short float sums: host.c's per-call set-up would dominate */
        sum_short_segments(req->in.t, src, rows, L, idx, S, out, d->fp64);
        return 0;
    }
    for (size_t r = 0; r < rows; ++r) {
        for (size_t s = 0; s < S; ++s) {
            const size_t lo = (size_t)idx[s], hi = seg_end(idx, s, S, L);
            if (gr_host_reduce(&o, src + ((r * L + lo) * inner) * isz, inner,
                               hi - lo, 1, (ptrdiff_t)inner,
                               out + ((r * S + s) * inner) * rsz) != 0) {
                return 1; /* not a host loop: the device */
            }
        }
    }
    return 0;
}

/* Host offsets up to this size are copied and uploaded without a wait. */
#define SEG_ASYNC_BYTES ((size_t)1 << 20)

int dp_run_segments(gr_request *req, gr_result *res, gr_status *st)
{
    const gr_operand *in = &req->in;
    const size_t isz = isz_of(in->t);
    const int ax = req->axis;
    /* host offsets (checked by api.c), or device offsets (checked here) */
    const int64_t *idx = (const int64_t *)req->vals.host;
    const size_t S = req->vals.shape[0];
    gr_block *bad = NULL;
    size_t rows = 1, inner = 1, L = in->shape[ax];
    ptrdiff_t es[GR_MAXDIMS], cstr[GR_MAXDIMS];
    char *host_copy = NULL;
    gr_block *tmp_in = NULL, *dix = NULL;
    gr_accum acc;
    gr_plan plan;
    int rc = -1, dense = dp_elem_strides(in, es) == 0;
    for (int i = 0; i < ax; ++i) {
        rows *= in->shape[i];
    }
    for (int i = ax + 1; i < in->nd; ++i) {
        inner *= in->shape[i];
    }
    /* C order without a copy? (unit dims do not count) */
    size_t acc_n = 1;
    for (int i = in->nd - 1; i >= 0; --i) {
        cstr[i] = (ptrdiff_t)acc_n;
        dense &= in->shape[i] == 1 || es[i] == cstr[i];
        acc_n *= in->shape[i];
    }
    const size_t n_in = rows * L * inner;
    gr_layout lay = {rows * S * inner, S ? L / S : 0, 1, (ptrdiff_t)inner};
    /* host offsets: NumPy's IndexError, and the longest segment (the plan
     * splits long ones), in one pass; device offsets: checked on the
     * device below, their longest segment unknown (L) */
    size_t maxlen = idx != NULL ? 0 : L;
    for (size_t s = 0; idx != NULL && s < S; ++s) {
        if (idx[s] < 0 || (uint64_t)idx[s] >= L) {
            gr_status_kind(st, GR_E_INDEX, "index %lld out-of-bounds in "
                           "%s.reduceat [0, %zu)", (long long)idx[s],
                           gr_op_ufunc(req->op), L);
            return -1;
        }
        const size_t len = seg_end(idx, s, S, L) - (size_t)idx[s];
        maxlen = len > maxlen ? len : maxlen;
    }
    if (lay.M == 0 && req->mode != GR_EXPLAIN) {
        return 0; /* nothing to compute (the offsets were checked) */
    }
    res->lay = lay;
    const char *hsrc = NULL;
    if (in->host != NULL) {
        if (!dense) {
            ptrdiff_t bstr[GR_MAXDIMS];
            for (int i = 0; i < in->nd; ++i) {
                bstr[i] = in->strides[i];
            }
            if ((host_copy = dp_aligned_alloc_bytes(n_in * isz)) == NULL) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory copying "
                               "%zu bytes", n_in * isz);
                return -1;
            }
            dp_host_gather(host_copy, in->host, in->nd, in->shape, bstr, isz);
            res->copied = 1;
        }
        hsrc = host_copy ? host_copy : in->host;
    }
    if (req->host_ok && hsrc != NULL && idx != NULL && req->out.blk == NULL &&
        gr_place(&req->dev, req->roam, GR_FAM_REDUCE, req->op, &lay,
                      n_in * isz, 1.0, "",
                      req->mode == GR_EXPLAIN ? res->place_why : NULL,
                      sizeof res->place_why)) {
        res->where = 1;
        if (req->mode == GR_EXPLAIN) {
            free(host_copy);
            return 0;
        }
        rc = segments_on_host(req, hsrc, rows, L, inner, idx, S);
        if (rc <= 0) {
            free(host_copy);
            return rc;
        }
        res->where = 0;
    }
    gr_device *d = dp_dev_begin(req, st);
    if (d == NULL) {
        free(host_copy);
        return -1;
    }
    char err[256];
    if (gr_accum_for(d, GR_FAM_REDUCE, req->op, in->t, req->rt, &acc, err,
                     sizeof err) != 0) {
        gr_status_kind(st, GR_E_TYPE, "%s", err);
        goto done;
    }
    const int prc = gr_plan_segments(d, req->op, &acc, rows, L, inner, S,
                                     maxlen, &req->kn, &plan);
    if (prc != 0) {
        gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                       plan.why);
        goto done;
    }
    res->acc = acc;
    res->plan.reduce = plan;
    if (req->mode == GR_EXPLAIN) {
        rc = 0;
        goto done;
    }
    /* the input on the device, in C order */
    cl_mem dmem;
    size_t dbase = 0;
    if (hsrc != NULL) {
        if ((tmp_in = gr_block_get(d, n_in * isz, st)) == NULL) {
            goto done;
        }
        GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, tmp_in->mem, CL_TRUE,
                                             0, n_in * isz, hsrc, 0, NULL,
                                             NULL));
        dmem = tmp_in->mem;
    } else if (!dense) {
        if ((tmp_in = gr_block_get(d, n_in * isz, st)) == NULL ||
            gr_copy_nd(d, in->blk->mem, in->t, in->off / isz, tmp_in->mem,
                       in->t, 0, in->nd, in->shape, es, cstr, NULL,
                       st) != 0) {
            goto done;
        }
        res->copied = 1;
        dmem = tmp_in->mem;
    } else {
        dmem = in->blk->mem;
        dbase = in->off / isz;
    }
    cl_mem imem;
    if (idx != NULL && S * sizeof(int64_t) > SEG_ASYNC_BYTES) {
        /* many offsets: straight from the caller's memory, waited for (a
         * copy of them first costs more than the wait) */
        if ((dix = gr_block_get(d, S * sizeof(int64_t), st)) == NULL) {
            goto done;
        }
        GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, dix->mem, CL_TRUE, 0,
                                             S * sizeof(int64_t), idx, 0,
                                             NULL, NULL));
        imem = dix->mem;
    } else if (idx != NULL) {
        /* a copy the upload reads while the call returns: no wait for
         * the offsets (upload_nowait) */
        if ((dix = gr_block_get(d, S * sizeof(int64_t), st)) == NULL ||
            dp_upload_nowait(d, dix->mem, idx, S * sizeof(int64_t), st) != 0) {
            goto done;
        }
        imem = dix->mem;
    } else {
        /* device offsets: as contiguous int64 (a casting copy where they
         * are not), bounds checked on the device, one 4-byte wait */
        const gr_operand *v = &req->vals;
        const ptrdiff_t vs = v->strides[0] / (ptrdiff_t)isz_of(v->t);
        if (v->t == GR_INT64 && (vs == 1 || S <= 1) && v->off == 0) {
            imem = v->blk->mem;
        } else {
            const size_t one[1] = {S};
            const ptrdiff_t ss[1] = {vs}, ds[1] = {1};
            if ((dix = gr_block_get(d, S * sizeof(int64_t), st)) == NULL ||
                gr_copy_nd(d, v->blk->mem, v->t, v->off / isz_of(v->t),
                           dix->mem, GR_INT64, 0, 1, one, ss, ds, NULL,
                           st) != 0) {
                goto done;
            }
            imem = dix->mem;
        }
        cl_uint pos = 0;
        if ((bad = gr_block_get(d, sizeof pos, st)) == NULL ||
            gr_segments_check(d, req->op, &acc, &plan, imem, S, L, bad->mem,
                              st) != 0) {
            goto done;
        }
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, bad->mem, CL_TRUE, 0,
                                            sizeof pos, &pos, 0, NULL, NULL));
        if (pos != 0xffffffffu) {
            cl_long val = 0;
            GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, imem, CL_TRUE,
                                                pos * sizeof val, sizeof val,
                                                &val, 0, NULL, NULL));
            gr_status_kind(st, GR_E_INDEX, "index %lld out-of-bounds in "
                           "%s.reduceat [0, %zu)", (long long)val,
                           gr_op_ufunc(req->op), L);
            goto done;
        }
    }
    gr_output o = {NULL, NULL, 0};
    if (req->out.blk != NULL) {
        o.mem = req->out.blk->mem;
        o.off = req->out.off / isz_of(req->rt);
    } else {
        o.host = req->out.host;
    }
    gr_timing tm = {0, 0};
    rc = 0;
    for (int i = 0; rc == 0 && i < (req->mode == GR_BENCH ? req->reps : 1);
         ++i) {
        rc = gr_segments_run(d, req->op, &acc, &plan, dmem, dbase, rows, L,
                             inner, imem, S, &o,
                             req->mode == GR_BENCH ? &tm : NULL, st);
        if (req->ns != NULL) {
            req->ns[i] = tm.first_ns;
        }
    }
fail:
done:
    gr_block_put(tmp_in);
    gr_block_put(dix);
    gr_block_put(bad);
    gr_unlock();
    free(host_copy);
    return rc;
}
