/*
 * gpured — dispatch layer, reduceat (segments by offsets): the driver
 * dp_run_segments.
 *
 * reduceat: the input as rows x L x inner (C order: a copy where it is not
 * that), S checked offsets (host longs, req->vals) along the axis, rows x S
 * x inner results of rt into req->out (C-contiguous: api.c allocates it or
 * checked the user's).  Small host inputs are answered by host.c's loops
 * (one strided reduction per segment); the rest by kernels/segments.cl. */

#include "dispatch_common.h"

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

/* One reduceat's state: the input as rows x L x inner, the offsets, the
 * plan, and the owned copies and blocks (start NULL; seg_end releases
 * them). */
typedef struct {
    gr_request *req;
    gr_result *res;
    gr_status *st;
    gr_device *d;
    const gr_operand *in;
    size_t isz, rows, inner, L, S, n_in, maxlen;
    const int64_t *idx;    /* host offsets (checked by api.c), or NULL    */
    ptrdiff_t es[GR_MAXDIMS], cstr[GR_MAXDIMS];
    int dense;             /* C order without a copy                      */
    gr_layout lay;
    gr_accum acc;
    gr_plan plan;
    char *host_copy;
    const char *hsrc;      /* host input in C order                       */
    gr_block *tmp_in, *dix, *bad;
    cl_mem dmem, imem;
    size_t dbase;
} seg_call;

/* The geometry; host offsets: NumPy's IndexError, and the longest
 * segment (the plan splits long ones), in one pass; device offsets:
 * checked on the device below, their longest segment unknown (L). */
static int seg_start(seg_call *c, gr_request *req, gr_result *res,
                     gr_status *st)
{
    const gr_operand *in = &req->in;
    const int ax = req->axis;
    memset(c, 0, sizeof *c);
    *c = (seg_call){req, res, st, NULL, in, isz_of(in->t), 1, 1,
                    in->shape[ax], req->vals.shape[0]};
    c->idx = (const int64_t *)req->vals.host;
    c->dense = dp_elem_strides(in, c->es) == 0;
    for (int i = 0; i < ax; ++i) {
        c->rows *= in->shape[i];
    }
    for (int i = ax + 1; i < in->nd; ++i) {
        c->inner *= in->shape[i];
    }
    /* C order without a copy? (unit dims do not count) */
    size_t acc_n = 1;
    for (int i = in->nd - 1; i >= 0; --i) {
        c->cstr[i] = (ptrdiff_t)acc_n;
        c->dense &= in->shape[i] == 1 || c->es[i] == c->cstr[i];
        acc_n *= in->shape[i];
    }
    const size_t S = c->S, L = c->L;
    const int64_t *idx = c->idx;
    c->n_in = c->rows * L * c->inner;
    c->lay = (gr_layout){c->rows * S * c->inner, S ? L / S : 0, 1,
                         (ptrdiff_t)c->inner};
    c->maxlen = idx != NULL ? 0 : L;
    for (size_t s = 0; idx != NULL && s < S; ++s) {
        if (idx[s] < 0 || (uint64_t)idx[s] >= L) {
            gr_status_kind(st, GR_E_INDEX, "index %lld out-of-bounds in "
                           "%s.reduceat [0, %zu)", (long long)idx[s],
                           gr_op_ufunc(req->op), L);
            return -1;
        }
        const size_t len = seg_end(idx, s, S, L) - (size_t)idx[s];
        c->maxlen = len > c->maxlen ? len : c->maxlen;
    }
    return 0;
}

/* Host input in C order: in place, or gathered. */
static int seg_host_input(seg_call *c)
{
    const gr_operand *in = c->in;
    if (in->host == NULL) {
        return 0;
    }
    if (!c->dense) {
        ptrdiff_t bstr[GR_MAXDIMS];
        for (int i = 0; i < in->nd; ++i) {
            bstr[i] = in->strides[i];
        }
        if ((c->host_copy = dp_aligned_alloc_bytes(c->n_in * c->isz)) ==
            NULL) {
            gr_status_kind(c->st, GR_E_MEMORY, "out of host memory copying "
                           "%zu bytes", c->n_in * c->isz);
            return -1;
        }
        dp_host_gather(c->host_copy, in->host, in->nd, in->shape, bstr,
                       c->isz);
        c->res->copied = 1;
    }
    c->hsrc = c->host_copy ? c->host_copy : in->host;
    return 0;
}

/* The host path where placement picks it: 0 (done), 1: the device. */
static int seg_on_host(seg_call *c)
{
    gr_request *req = c->req;
    gr_result *res = c->res;
    if (!(req->host_ok && c->hsrc != NULL && c->idx != NULL &&
          req->out.blk == NULL &&
          gr_place(&req->dev, req->roam, GR_FAM_REDUCE, req->op, &c->lay,
                   c->n_in * c->isz, 1.0, "",
                   req->mode == GR_EXPLAIN ? res->place_why : NULL,
                   sizeof res->place_why))) {
        return 1;
    }
    res->where = 1;
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    const int rc = segments_on_host(req, c->hsrc, c->rows, c->L, c->inner,
                                    c->idx, c->S);
    if (rc <= 0) {
        return rc;
    }
    res->where = 0;
    return 1;
}

/* The accumulator and the plan. */
static int seg_plan(seg_call *c)
{
    gr_request *req = c->req;
    char err[256];
    if (gr_accum_for(c->d, GR_FAM_REDUCE, req->op, c->in->t, req->rt,
                     &c->acc, err, sizeof err) != 0) {
        gr_status_kind(c->st, GR_E_TYPE, "%s", err);
        return -1;
    }
    const int prc = gr_plan_segments(c->d, req->op, &c->acc, c->rows, c->L,
                                     c->inner, c->S, c->maxlen, &req->kn,
                                     &c->plan);
    if (prc != 0) {
        gr_status_kind(c->st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                       c->plan.why);
        return -1;
    }
    c->res->acc = c->acc;
    c->res->plan.reduce = c->plan;
    return 0;
}

/* The input on the device, in C order. */
static int seg_input(seg_call *c)
{
    gr_device *d = c->d;
    gr_status *st = c->st;
    const gr_operand *in = c->in;
    const size_t isz = c->isz, n_in = c->n_in;
    const char *hsrc = c->hsrc;
    gr_block *tmp_in = NULL;
    if (hsrc != NULL) {
        if ((c->tmp_in = tmp_in = gr_block_get(d, n_in * isz, st)) == NULL) {
            return -1;
        }
        GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, tmp_in->mem, CL_TRUE,
                                             0, n_in * isz, hsrc, 0, NULL,
                                             NULL));
        c->dmem = tmp_in->mem;
    } else if (!c->dense) {
        if ((c->tmp_in = gr_block_get(d, n_in * isz, st)) == NULL ||
            gr_copy_nd(d, in->blk->mem, in->t, in->off / isz, c->tmp_in->mem,
                       in->t, 0, in->nd, in->shape, c->es, c->cstr, NULL,
                       st) != 0) {
            return -1;
        }
        c->res->copied = 1;
        c->dmem = c->tmp_in->mem;
    } else {
        c->dmem = in->blk->mem;
        c->dbase = in->off / isz;
    }
    return 0;
fail:
    return -1;
}

/* Device offsets: as contiguous int64 (a casting copy where they are
 * not), bounds checked on the device, one 4-byte wait. */
static int seg_offsets_device(seg_call *c)
{
    gr_device *d = c->d;
    gr_status *st = c->st;
    const gr_operand *v = &c->req->vals;
    const size_t S = c->S, L = c->L;
    const ptrdiff_t vs = v->strides[0] / (ptrdiff_t)isz_of(v->t);
    cl_mem imem;
    gr_block *bad = NULL;
    if (v->t == GR_INT64 && (vs == 1 || S <= 1) && v->off == 0) {
        imem = v->blk->mem;
    } else {
        const size_t one[1] = {S};
        const ptrdiff_t ss[1] = {vs}, ds[1] = {1};
        if ((c->dix = gr_block_get(d, S * sizeof(int64_t), st)) == NULL ||
            gr_copy_nd(d, v->blk->mem, v->t, v->off / isz_of(v->t),
                       c->dix->mem, GR_INT64, 0, 1, one, ss, ds, NULL,
                       st) != 0) {
            return -1;
        }
        imem = c->dix->mem;
    }
    c->imem = imem;
    cl_uint pos = 0;
    if ((c->bad = bad = gr_block_get(d, sizeof pos, st)) == NULL ||
        gr_segments_check(d, c->req->op, &c->acc, &c->plan, imem, S, L,
                          bad->mem, st) != 0) {
        return -1;
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
                       gr_op_ufunc(c->req->op), L);
        return -1;
    }
    return 0;
fail:
    return -1;
}

/* The offsets on the device: host ones uploaded (a copy without a wait
 * for few), device ones checked there. */
static int seg_offsets(seg_call *c)
{
    gr_device *d = c->d;
    gr_status *st = c->st;
    const int64_t *idx = c->idx;
    const size_t S = c->S;
    gr_block *dix = NULL;
    if (idx == NULL) {
        return seg_offsets_device(c);
    }
    if ((c->dix = dix = gr_block_get(d, S * sizeof(int64_t), st)) == NULL) {
        return -1;
    }
    if (S * sizeof(int64_t) > SEG_ASYNC_BYTES) {
        /* many offsets: straight from the caller's memory, waited for (a
         * copy of them first costs more than the wait) */
        GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, dix->mem, CL_TRUE, 0,
                                             S * sizeof(int64_t), idx, 0,
                                             NULL, NULL));
    } else if (dp_upload_nowait(d, dix->mem, idx, S * sizeof(int64_t),
                                st) != 0) {
        /* (a copy the upload reads while the call returns: no wait for
         * the offsets) */
        return -1;
    }
    c->imem = dix->mem;
    return 0;
fail:
    return -1;
}

/* The kernels (reps: timed runs) into out. */
static int seg_run(seg_call *c)
{
    gr_request *req = c->req;
    gr_output o = {NULL, NULL, 0};
    if (req->out.blk != NULL) {
        o.mem = req->out.blk->mem;
        o.off = req->out.off / isz_of(req->rt);
    } else {
        o.host = req->out.host;
    }
    gr_timing tm = {0, 0};
    int rc = 0;
    for (int i = 0; rc == 0 && i < (req->mode == GR_BENCH ? req->reps : 1);
         ++i) {
        rc = gr_segments_run(c->d, req->op, &c->acc, &c->plan, c->dmem,
                             c->dbase, c->rows, c->L, c->inner, c->imem,
                             c->S, &o, req->mode == GR_BENCH ? &tm : NULL,
                             c->st);
        if (req->ns != NULL) {
            req->ns[i] = tm.first_ns;
        }
    }
    return rc;
}

/* reduceat: offsets checked > host input > host path > plan > input >
 * offsets > kernels. */
int dp_run_segments(gr_request *req, gr_result *res, gr_status *st)
{
    seg_call c;
    int rc;
    if (seg_start(&c, req, res, st) != 0) {
        return -1;
    }
    if (c.lay.M == 0 && req->mode != GR_EXPLAIN) {
        return 0; /* nothing to compute (the offsets were checked) */
    }
    res->lay = c.lay;
    if (seg_host_input(&c) != 0) {
        return -1;
    }
    if ((rc = seg_on_host(&c)) > 0 &&
        (c.d = dp_dev_begin(req, st)) != NULL) {
        rc = seg_plan(&c);
        if (rc == 0 && req->mode != GR_EXPLAIN &&
            (rc = seg_input(&c)) == 0 && (rc = seg_offsets(&c)) == 0) {
            rc = seg_run(&c);
        }
        gr_block_put(c.tmp_in);
        gr_block_put(c.dix);
        gr_block_put(c.bad);
        gr_unlock(c.d);
    } else if (rc > 0) {
        rc = -1; /* (the device did not open) */
    }
    free(c.host_copy);
    return rc;
}
