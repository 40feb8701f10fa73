/*
 * gpured — dispatch layer, scans: the driver of the scan family
 * (dp_run_scan): axis -> (M rows x L) for input and output alike, copies
 * only where no such view exists; the host path where placement picks it;
 * long 1-D host scans streamed through pinned buffers (scan_streamed).
 */

#include "dispatch_common.h"
#include "hostpar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A streamed scan's state: the slots' buffers and events, the chunk
 * plan, the staging pool. */
typedef struct {
    gr_device *d;
    const gr_request *req;
    gr_op op;
    int exclusive;
    gr_status *st;
    gr_dtype t, r;
    size_t isz, rsz, per, L;
    cl_mem din[GR_STREAM_SLOTS], win[GR_STREAM_SLOTS], wout[GR_STREAM_SLOTS];
    cl_event used[GR_STREAM_SLOTS], back[GR_STREAM_SLOTS];
    size_t pend_off[GR_STREAM_SLOTS], pend_len[GR_STREAM_SLOTS];
    unsigned char ident[8];
    gr_accum acc2;
    gr_scan_plan plan2;
    gr_layout lay2;
    gr_stream_pool *p;
    int nbuf;
    char *out_ptr;
} scan_stream;

/* Slot s's buffers (and the next slot's carry buffer), made once. */
static int stream_buffers(scan_stream *x, int s, int s2)
{
    gr_device *d = x->d;
    gr_status *st = x->st;
    const size_t per = x->per, rsz = x->rsz;
    cl_int e = CL_SUCCESS;
    if (x->din[s] == NULL) {
        x->din[s] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, per * x->isz,
                                   NULL, &e);
        GR_CL_CHECK_AS(st, "clCreateBuffer", e);
        x->wout[s] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                                    (per + 1) * rsz, NULL, &e);
        GR_CL_CHECK_AS(st, "clCreateBuffer", e);
    }
    for (int q = 0; q < 2; ++q) {
        int sq = q ? s2 : s;
        if (x->win[sq] == NULL) {
            x->win[sq] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                                        (per + 1) * rsz, NULL, &e);
            GR_CL_CHECK_AS(st, "clCreateBuffer", e);
        }
    }
    return 0;
fail:
    return -1;
}

/* Slot s's pending results (an earlier chunk's) into the host out. */
static int stream_drain(scan_stream *x, int s)
{
    if (x->back[s] == NULL) {
        return 0;
    }
    cl_event b = x->back[s];
    x->back[s] = NULL;
    return gr_stream_drain(x->p, s, b, x->out_ptr + x->pend_off[s] * x->rsz,
                           x->pend_len[s] * x->rsz, x->st);
}

/* Chunk k: upload, conversion behind the carry, scan, the next carry,
 * and the download of its results. */
static int stream_chunk(scan_stream *x, size_t k, size_t nchunks,
                        const char *in_ptr)
{
    gr_device *d = x->d;
    gr_status *st = x->st;
    cl_mem *win = x->win, *wout = x->wout;
    cl_event *used = x->used;
    const unsigned char *ident = x->ident;
    const size_t per = x->per, rsz = x->rsz;
    const int s = (int)(k % (size_t)x->nbuf);
    const int s2 = (int)((k + 1) % (size_t)x->nbuf);
    const size_t off = k * per, len = x->L - off < per ? x->L - off : per;
    cl_event w = NULL;
    if (dp_interrupted(x->req)) {
        return dp_stop(st);
    }
    if (stream_buffers(x, s, s2) != 0 || stream_drain(x, s) != 0) {
        return -1; /* (chunk k - nbuf's results leave the slot) */
    }
    if (gr_stream_upload(x->p, s, in_ptr + off * x->isz, len * x->isz,
                         x->din[s], 0, used[s], &w, st) != 0) {
        return -1;
    }
    GR_CL_CHECK(st, clEnqueueBarrierWithWaitList(d->queue, 1, &w, NULL));
    if (k == 0) {
        GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, win[s], CL_TRUE, 0,
                                             rsz, ident, 0, NULL, NULL));
    }
    if (gr_copy_enqueue(d, x->din[s], x->t, 0, win[s], x->r, 1, len,
                        st) != 0) {
        return -1;
    }
    if (used[s] != NULL) {
        clReleaseEvent(used[s]);
        used[s] = NULL;
    }
    GR_CL_CHECK(st, clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &used[s]));
    if (x->lay2.L != len + 1) {
        x->lay2.L = len + 1;
        x->lay2.seg_stride = (ptrdiff_t)(len + 1);
        int prc = gr_plan_scan(d, x->op, &x->acc2, &x->lay2, 1,
                               &x->req->kn, &x->plan2);
        if (prc != 0) {
            gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE,
                           "%s", x->plan2.why);
            return -1;
        }
    }
    gr_scan_io io = {win[s], 0, wout[s], 0, (ptrdiff_t)(len + 1), 1};
    if (gr_scan_run(d, x->op, &x->acc2, 0, &x->lay2, &x->plan2, &io, NULL,
                    st) != 0) {
        return -1;
    }
    if (k + 1 < nchunks) {
        GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, wout[s], win[s2],
                                            len * rsz, 0, rsz, 0, NULL,
                                            NULL));
    }
    if (gr_stream_download(x->p, d, s, wout[s],
                           (x->exclusive ? 0 : 1) * rsz, len * rsz,
                           &x->back[s], st) != 0) {
        return -1;
    }
    x->pend_off[s] = off;
    x->pend_len[s] = len;
    return 0;
fail:
    return -1;
}

/* A long 1-D scan of host memory, streamed (stream.c's pinned pool): chunk
 * k is uploaded to din, converted to the result type into win[1..len] after
 * win[0] = the carry (the previous chunk's last inclusive prefix, or the
 * identity), scanned inclusively into wout, and wout[1..len] (inclusive) or
 * wout[0..len-1] (exclusive) streams back; wout[len] is the next carry,
 * copied on the device.  Uploads of later chunks overlap the work on
 * earlier ones; the host waits only for the result copies.  Inputs larger
 * than the device's memory scan this way.  Each chunk boundary adds one
 * rounding of the carry to the result type to the error bound.  The
 * interrupt check runs between chunks. */
static int scan_streamed(gr_device *d, const gr_request *req, gr_op op,
                         const gr_accum *acc, int exclusive, size_t L,
                         const char *in_ptr, char *out_ptr, gr_status *st)
{
    scan_stream x = {d, req, op, exclusive, st, acc->t, acc->r,
                     isz_of(acc->t), isz_of(acc->r)};
    size_t chunk = 0;
    int rc = -1;
    char err[256];
    x.lay2 = (gr_layout){1, 0, 0, 1};
    x.out_ptr = out_ptr;
    x.L = L;
    if (gr_accum_for(d, GR_FAM_SCAN, op, x.r, x.r, &x.acc2, err,
                     sizeof err) != 0) {
        gr_status_kind(st, GR_E_TYPE, "%s", err);
        return -1;
    }
    gr_identity_of(op, x.r, x.ident);
    if ((x.p = gr_stream_pool_get(d, &chunk, &x.nbuf, st)) == NULL) {
        return -1;
    }
    x.per = chunk / (x.isz > x.rsz ? x.isz : x.rsz);
    const size_t nchunks = (L + x.per - 1) / x.per;
    for (size_t k = 0; k < nchunks; ++k) {
        if (stream_chunk(&x, k, nchunks, in_ptr) != 0) {
            goto fail;
        }
    }
    for (size_t k = nchunks > (size_t)x.nbuf ? nchunks - x.nbuf : 0;
         k < nchunks; ++k) {
        if (stream_drain(&x, (int)(k % (size_t)x.nbuf)) != 0) {
            goto fail;
        }
    }
    rc = 0;
fail:
    gr_finish_unlocked(d->queue);
    if (gr_stream_idle(x.p, st) != 0) {
        rc = -1;
    }
    for (int i = 0; i < GR_STREAM_SLOTS; ++i) {
        if (x.back[i]) clReleaseEvent(x.back[i]);
        if (x.used[i]) clReleaseEvent(x.used[i]);
        if (x.din[i]) clReleaseMemObject(x.din[i]);
        if (x.win[i]) clReleaseMemObject(x.win[i]);
        if (x.wout[i]) clReleaseMemObject(x.wout[i]);
    }
    return rc;
}

/* A scan's view of an operand: the row dims (the axis, or every dim in C
 * order for a flattened scan) merged into one of L elements, the other
 * (non-unit) dims in the order `kept` gives merged into M rows, where
 * memory allows (ok).  gsh/gst: that geometry unmerged, kept dims then row
 * dims, for gathers and copies. */
typedef struct {
    int ok;
    size_t M, L;
    ptrdiff_t ss, es;      /* elements                                     */
    int gn;
    size_t gsh[GR_MAXDIMS];
    ptrdiff_t gst[GR_MAXDIMS];
} scan_side;

static scan_side scan_side_of(const gr_operand *o, int axis, const int *kept,
                              int nk)
{
    scan_side s;
    ptrdiff_t e[GR_MAXDIMS];
    size_t rsh[GR_MAXDIMS];
    ptrdiff_t rst[GR_MAXDIMS];
    int nr = 0;
    memset(&s, 0, sizeof s);
    if (dp_elem_strides(o, e) != 0) {
        return s;
    }
    for (int i = 0; i < o->nd; ++i) {
        if ((axis < 0 || i == axis) && o->shape[i] != 1) {
            rsh[nr] = o->shape[i];
            rst[nr] = e[i];
            nr++;
        }
    }
    for (int j = 0; j < nk; ++j) {
        s.gsh[s.gn] = o->shape[kept[j]];
        s.gst[s.gn] = e[kept[j]];
        s.gn++;
    }
    int okk = dp_collapse(s.gsh, s.gst, s.gn, &s.M, &s.ss);
    for (int j = 0; j < nr; ++j) {
        s.gsh[s.gn] = rsh[j];
        s.gst[s.gn] = rst[j];
        s.gn++;
    }
    int okr = dp_collapse(rsh, rst, nr, &s.L, &s.es);
    /* the sizes, whether or not the dims merge */
    s.M = 1;
    for (int j = 0; j < nk; ++j) {
        s.M *= o->shape[kept[j]];
    }
    s.L = 1;
    for (int j = 0; j < nr; ++j) {
        s.L *= rsh[j];
    }
    if (nr == 0) {
        s.es = 1;
    }
    if (s.L <= 1) {
        s.es = 1;
    }
    if (s.M <= 1) {
        s.ss = (ptrdiff_t)s.L * s.es;
    }
    s.ok = okk && okr && s.es > 0 && s.ss > 0;
    return s;
}

static int scan_dense(const scan_side *s)
{
    return (s->M - 1) * (size_t)s->ss + (s->L - 1) * (size_t)s->es + 1 ==
           s->M * s->L;
}

static void c_strides(const size_t *shape, int n, ptrdiff_t *str)
{
    size_t a = 1;
    for (int j = n - 1; j >= 0; --j) {
        str[j] = (ptrdiff_t)a;
        a *= shape[j];
    }
}

/* One scan's state, from the request to its results (owned pointers
 * start NULL; scan_end releases them). */
typedef struct {
    gr_request *req;
    gr_result *res;
    gr_status *st;
    gr_device *d;
    const gr_operand *in, *out;
    scan_side si, so;      /* the input's and the output's views          */
    size_t M, L;
    int cast_in;           /* min/max into another dtype: a cast copy      */
    gr_dtype ct;
    int copy_in, temp_out;
    gr_accum acc;
    gr_scan_plan plan;
    gr_layout lay;
    size_t isz, csz, rsz;
    ptrdiff_t gc_in[GR_MAXDIMS], gc_out[GR_MAXDIMS];
    gr_block *tin, *tout;
    gr_input hin;
    cl_mem hout;
    char *host_copy;
    gr_scan_io io;
} scan_call;

/* The views of input and output (kept dims by decreasing input stride:
 * the input's memory order) and what needs a copy. */
static void scan_start(scan_call *c, gr_request *req, gr_result *res,
                       gr_status *st)
{
    const gr_operand *in = &req->in;
    const int axis = req->axis; /* -1: flattened, C order */
    int order[GR_MAXDIMS], nk = 0;
    memset(c, 0, sizeof *c);
    c->req = req;
    c->res = res;
    c->st = st;
    c->in = in;
    c->out = &req->out;
    for (int i = 0; axis >= 0 && i < in->nd; ++i) {
        if (i != axis && in->shape[i] != 1) {
            int j = nk++;
            while (j > 0 && llabs((long long)in->strides[order[j - 1]]) <
                                llabs((long long)in->strides[i])) {
                order[j] = order[j - 1];
                --j;
            }
            order[j] = i;
        }
    }
    c->si = scan_side_of(in, axis, order, nk);
    c->so = scan_side_of(c->out, axis, order, nk);
    const scan_side *si = &c->si, *so = &c->so;
    const size_t M = c->M = si->M, L = c->L = si->L;
    /* min/max scan in the input's dtype: a cast copy first otherwise */
    c->cast_in = (req->op == GR_MIN || req->op == GR_MAX) &&
                 in->t != req->rt;
    c->ct = c->cast_in ? req->rt : in->t;
    c->copy_in = !si->ok || c->cast_in ||
                 (in->host != NULL &&
                  (si->M - 1) * (size_t)si->ss + (si->L - 1) * (size_t)si->es +
                          1 > 4 * M * L + 64);
    c->temp_out = !so->ok || (c->out->host != NULL && !scan_dense(so)) ||
                  c->out->t != req->rt;
}

/* nan* on the host path: a contiguous copy with the NaNs replaced,
 * scanned; 0, -1, or 1: the host loop lacks the operator. */
static int scan_host_nan(scan_call *c, const gr_host_op *o)
{
    const gr_operand *in = c->in;
    const scan_side *si = &c->si, *so = &c->so;
    const size_t M = c->M, L = c->L, isz = isz_of(in->t);
    char *cp = malloc(M * L * isz + 1);
    if (cp == NULL) {
        gr_status_kind(c->st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    /* Ctrl-C's check every 2^20 elements (issue 39) */
    for (size_t m = 0; m < M; ++m) {
        for (size_t i = 0; i < L; ++i) {
            if (GR_PAR_STOP_AT(i)) {
                free(cp);
                return 0; /* (the interruption: gr_dispatch says it) */
            }
            memcpy(cp + (m * L + i) * isz,
                   in->host + ((ptrdiff_t)m * si->ss +
                               (ptrdiff_t)i * si->es) * (ptrdiff_t)isz,
                   isz);
        }
    }
    dp_replace_nan(cp, in->t, 1, M * L, c->req->op, NULL);
    const int hrc = gr_host_scan(o, c->req->exclusive, cp, M, L, (ptrdiff_t)L,
                                 1, c->out->host, so->ss, so->es);
    free(cp);
    return hrc == 0 ? 0 : 1;
}

/* The host path where placement picks it: 0 or -1 (done), 1: the device
 * (placed there, or an operator the host path lacks). */
static int scan_on_host(scan_call *c)
{
    gr_request *req = c->req;
    gr_result *res = c->res;
    const gr_operand *in = c->in, *out = c->out;
    const scan_side *si = &c->si, *so = &c->so;
    const size_t M = c->M, L = c->L;
    /* float16 / bfloat16: the host loops take none; the device reads and
     * writes them itself (kernels/scan.cl GR_SELT) */
    if (!(req->host_ok && in->host != NULL && out->host != NULL &&
          !c->cast_in && si->ok && so->ok && out->t == req->rt &&
          !GR_IS_HALF(in->t) && !GR_IS_HALF(req->rt))) {
        return 1;
    }
    const gr_layout hl = {M, L, si->ss, si->es};
    const gr_device *hd = gr_device_get(req->dev);
    if (!gr_place(&req->dev, req->roam, GR_FAM_SCAN, req->op, &hl,
                  M * L * isz_of(in->t),
                  gr_host_factor(nan_floats(req, in->t)
                                     ? GR_HW_COPY_SCAN : GR_HW_PLAIN),
                  " (a copy first: nan*)",
                  req->mode == GR_EXPLAIN ? res->place_why : NULL,
                  sizeof res->place_why)) {
        return 1;
    }
    /* The host path: no OpenCL call, no device lock. */
    gr_host_op o = {req->op, in->t, req->rt, hd->fp64, 1, 0};
    gr_host_par(req->dev, GR_RATE_SCAN, M * L * isz_of(in->t),
                &o.threads, &o.grain);
    res->where = 1;
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    if (nan_floats(req, in->t)) {
        const int rc = scan_host_nan(c, &o);
        if (rc <= 0) {
            return rc;
        }
    } else if (gr_host_scan(&o, req->exclusive, in->host, M, L, si->ss,
                            si->es, out->host, so->ss, so->es) == 0) {
        return 0;
    }
    res->where = 0; /* an operator the host path lacks */
    return 1;
}

/* The accumulator and the plan (a tile variant asked for on strided rows:
 * contiguous copies, planned again). */
static int scan_plan_call(scan_call *c)
{
    gr_request *req = c->req;
    char err[256];
    if (gr_accum_for(c->d, GR_FAM_SCAN, req->op, c->ct, req->rt, &c->acc,
                     err, sizeof err) != 0) {
        gr_status_kind(c->st, GR_E_TYPE, "%s", err);
        return -1;
    }
    c->acc.nan = nan_floats(req, c->ct);
    for (int attempt = 0;; ++attempt) {
        gr_layout *lay = &c->lay;
        lay->M = c->M;
        lay->L = c->L;
        lay->seg_stride = c->copy_in ? (ptrdiff_t)c->L : c->si.ss;
        lay->elem_stride = c->copy_in ? 1 : c->si.es;
        const ptrdiff_t oes = c->temp_out ? 1 : c->so.es;
        const int contig = lay->elem_stride == 1 && oes == 1;
        int prc = gr_plan_scan(c->d, req->op, &c->acc, lay, contig, &req->kn,
                               &c->plan);
        if (prc == -1 && !contig && attempt == 0) {
            c->copy_in |= lay->elem_stride != 1;
            c->temp_out |= oes != 1;
            continue;
        }
        if (prc != 0) {
            gr_status_kind(c->st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE,
                           "%s", c->plan.why);
            return -1;
        }
        break;
    }
    c->res->acc = c->acc;
    c->res->lay = c->lay;
    c->res->plan.scan = c->plan;
    c->res->copied = c->copy_in;
    return 0;
}

/* Streamed: a long 1-D scan of host memory (GPUs, or anything larger
 * than one buffer)? */
static int scan_streams(const scan_call *c)
{
    const gr_request *req = c->req;
    const gr_device *d = c->d;
    const size_t L = c->L, isz = c->isz, rsz = c->rsz;
    /* not halves: each chunk's carry would be rounded to the result */
    return c->in->host != NULL && c->out->host != NULL && !c->copy_in &&
           !GR_IS_HALF(req->rt) &&
           !c->temp_out && c->M == 1 && c->lay.elem_stride == 1 &&
           c->so.es == 1 && req->mode == GR_RUN &&
           (gr_stream_wanted(d, L * isz) ||
            (d->max_alloc && (L * isz > d->max_alloc ||
                              L * rsz > d->max_alloc)));
}

/* Host input as the kernels read it: in place or uploaded, else gathered
 * without the lock (and cast on the device for a min/max scan). */
static int scan_input_host(scan_call *c)
{
    const gr_operand *in = c->in;
    const scan_side *si = &c->si;
    const size_t M = c->M, L = c->L, isz = c->isz;
    gr_device *d = c->d;
    gr_status *st = c->st;
    if (!c->copy_in) {
        const size_t span = ((si->M - 1) * (size_t)si->ss +
                             (si->L - 1) * (size_t)si->es + 1) * isz;
        if (gr_input_from_host(d, in->host, span, isz, &c->hin, st) != 0) {
            return -1;
        }
        c->io.in = c->hin.mem;
        c->io.in_base = c->hin.base;
        return 0;
    }
    ptrdiff_t bstr[GR_MAXDIMS];
    for (int j = 0; j < si->gn; ++j) {
        bstr[j] = si->gst[j] * (ptrdiff_t)isz;
    }
    if ((c->host_copy = dp_aligned_alloc_bytes(M * L * isz)) == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    gr_unlock(c->d);
    dp_host_gather(c->host_copy, in->host, si->gn, si->gsh, bstr, isz);
    gr_lock(c->d);
    if (gr_input_from_host(d, c->host_copy, M * L * isz, isz, &c->hin,
                           st) != 0) {
        return -1;
    }
    c->io.in = c->hin.mem;
    c->io.in_base = c->hin.base;
    if (c->cast_in) {
        if ((c->tin = gr_block_get(d, M * L * c->csz, st)) == NULL ||
            gr_copy_enqueue(d, c->hin.mem, in->t, c->hin.base, c->tin->mem,
                            c->ct, 0, M * L, st) != 0) {
            return -1;
        }
        c->io.in = c->tin->mem;
        c->io.in_base = 0;
    }
    return 0;
}

/* The input and the output as the kernels read and write them. */
static int scan_io(scan_call *c)
{
    const gr_operand *in = c->in, *out = c->out;
    const size_t M = c->M, L = c->L, rsz = c->rsz;
    gr_device *d = c->d;
    gr_status *st = c->st;
    gr_scan_io *io = &c->io;
    if (in->host != NULL) {
        if (scan_input_host(c) != 0) {
            return -1;
        }
    } else if (!c->copy_in) {
        io->in = in->blk->mem;
        io->in_base = in->off / c->isz;
    } else {
        if ((c->tin = gr_block_get(d, M * L * c->csz, st)) == NULL ||
            gr_copy_nd(d, in->blk->mem, in->t, in->off / c->isz, c->tin->mem,
                       c->ct, 0, c->si.gn, c->si.gsh, c->si.gst, c->gc_in,
                       NULL, st) != 0) {
            return -1;
        }
        io->in = c->tin->mem;
        io->in_base = 0;
    }
    io->out_seg_stride = c->so.ss;
    io->out_elem_stride = c->so.es;
    if (c->temp_out) {
        io->out_seg_stride = (ptrdiff_t)L;
        io->out_elem_stride = 1;
    } else if (out->host != NULL) {
        size_t base = 0;
        c->hout = gr_output_host(d, out->host, M * L * rsz, rsz, &base);
        io->out_base = c->hout ? base : 0;
        if (c->hout != NULL) {
            io->out = c->hout;
            return 0;
        }
    } else {
        io->out = out->blk->mem;
        io->out_base = out->off / rsz;
        return 0;
    }
    if ((c->tout = gr_block_get(d, M * L * rsz, st)) == NULL) {
        return -1;
    }
    io->out = c->tout->mem;
    return 0;
}

/* The kernels (reps: timed runs), and an exclusive float sum's first
 * column made +0.0. */
static int scan_run(scan_call *c)
{
    gr_request *req = c->req;
    gr_device *d = c->d;
    gr_status *st = c->st;
    gr_scan_io *io = &c->io;
    gr_timing tm = {0, 0};
    const int reps = req->mode == GR_BENCH ? req->reps : 1;
    for (int i = 0; i < reps; ++i) {
        if (gr_scan_run(d, req->op, &c->acc, req->exclusive, &c->lay,
                        &c->plan, io, req->mode == GR_BENCH ? &tm : NULL,
                        st) != 0) {
            return -1;
        }
        if (req->ns != NULL) {
            req->ns[i] = tm.first_ns;
        }
    }
    if (req->exclusive && req->op == GR_ADD && gr_dtypes[req->rt].is_float) {
        /* an exclusive sum starts from +0.0 (the kernels' identity is
         * -0.0, which keeps NumPy's inclusive -0.0s): 0.0 + column 0 */
        gr_epilogue z;
        const size_t one[1] = {c->M};
        const ptrdiff_t rs[1] = {io->out_seg_stride};
        /* halves: their bits, min(bits, 0) = +0.0 (column 0 holds the
         * identity -0.0 only) */
        const int half = GR_IS_HALF(req->rt);
        const gr_dtype zt = half ? GR_UINT16 : req->rt;
        memset(&z, 0, sizeof z);
        z.mode = GR_EPI_OP;
        z.op = half ? GR_MIN : GR_ADD;
        if (gr_copy_nd(d, io->out, zt, io->out_base, io->out, zt,
                       io->out_base, 1, one, rs, rs, &z, st) != 0) {
            return -1;
        }
    }
    return 0;
}

/* A wait for host results that an interruption leaves pending: the host
 * copy lives on until ev completes. */
static void scan_pending(scan_call *c, cl_event ev)
{
    if (c->host_copy != NULL) {
        clRetainEvent(ev);
        dp_deferred_add(ev, c->host_copy);
        c->host_copy = NULL;
    }
}

/* Results written in place into host out: mapped (so the host sees
 * them), then waited for without the lock, interruptibly. */
static int scan_map_wait(scan_call *c)
{
    const gr_request *req = c->req;
    gr_device *d = c->d;
    gr_status *st = c->st;
    const size_t M = c->M, L = c->L, rsz = c->rsz;
    const cl_mem hout = c->hout;
    void *p = NULL;
    cl_int e = CL_SUCCESS;
    cl_event ev = NULL;
    p = clEnqueueMapBuffer(d->queue, hout, CL_FALSE, CL_MAP_READ, 0,
                           (M * L + c->io.out_base) * rsz, 0, NULL, NULL, &e);
    GR_CL_CHECK_AS(st, "clEnqueueMapBuffer", e);
    GR_CL_CHECK(st, clEnqueueUnmapMemObject(d->queue, hout, p, 0, NULL,
                                            &ev));
    clFlush(d->queue);
    gr_unlock(d);
    int wrc = gr_event_wait_intr(d, ev, req->interrupted, req->ictx, st);
    gr_lock(d);
    if (wrc != 0) {
        if (st->kind == GR_E_INTERRUPT) {
            c->res->pending = ev;
            scan_pending(c, ev);
        } else {
            clReleaseEvent(ev);
        }
        return -1;
    }
    clReleaseEvent(ev);
    return 0;
fail:
    return -1;
}

/* Results to their destination: a host out no dense row view describes
 * read then scattered; a device out copied; host out written in place
 * mapped; a dense host out read. */
static int scan_deliver(scan_call *c)
{
    const gr_request *req = c->req;
    const gr_operand *out = c->out;
    const scan_side *so = &c->so;
    const size_t M = c->M, L = c->L, rsz = c->rsz;
    gr_device *d = c->d;
    gr_status *st = c->st;
    if (c->temp_out && out->host != NULL) {
        ptrdiff_t bstr[GR_MAXDIMS];
        char *buf = malloc(M * L * rsz);
        if (buf == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            return -1;
        }
        if (dp_read_unlocked(d, c->tout->mem, 0, M * L * rsz, buf, st) != 0) {
            free(buf);
            return -1;
        }
        for (int j = 0; j < so->gn; ++j) {
            bstr[j] = so->gst[j] * (ptrdiff_t)rsz;
        }
        dp_host_scatter(out->host, buf, so->gn, so->gsh, bstr, rsz);
        free(buf);
    } else if (c->temp_out) {
        if (gr_copy_nd(d, c->tout->mem, req->rt, 0, out->blk->mem, out->t,
                       out->off / isz_of(out->t), so->gn, so->gsh, c->gc_out,
                       so->gst, NULL, st) != 0) {
            return -1;
        }
    } else if (out->host != NULL && c->hout != NULL) {
        return scan_map_wait(c);
    } else if (out->host != NULL) {
        /* dense host out (non-negative strides): one read of its span */
        if (gr_read_wait(d, c->tout->mem, 0, M * L * rsz, out->host,
                         req->interrupted, req->ictx, &c->res->pending,
                         st) != 0) {
            if (c->res->pending != NULL) {
                scan_pending(c, c->res->pending);
            }
            return -1;
        }
    }
    return 0;
}

/* Temporaries back, the lock released, the gather freed (once nothing
 * may read it). */
static void scan_end(scan_call *c, int rc)
{
    if (rc != 0 && c->res->pending == NULL && c->host_copy != NULL) {
        clFinish(c->d->queue); /* nothing may read the gather after it goes */
    }
    gr_input_release(&c->hin);
    if (c->hout != NULL) {
        clReleaseMemObject(c->hout);
    }
    gr_block_put(c->tin);
    gr_block_put(c->tout);
    gr_unlock(c->d);
    free(c->host_copy);
}

/* The device's run once planned: streamed, or input > output > kernels
 * > results to their destination. */
static int scan_device(scan_call *c)
{
    gr_request *req = c->req;
    gr_device *d = c->d;
    const size_t M = c->M, L = c->L, isz = c->isz, rsz = c->rsz;
    c_strides(c->si.gsh, c->si.gn, c->gc_in);
    c_strides(c->so.gsh, c->so.gn, c->gc_out);
    if (scan_streams(c)) {
        return scan_streamed(d, req, req->op, &c->acc, req->exclusive, L,
                             c->in->host, c->out->host, c->st);
    }
    if (d->max_alloc && (M * L * isz > d->max_alloc ||
                         M * L * rsz > d->max_alloc)) {
        gr_status_kind(c->st, GR_E_MEMORY, "scan of %zu bytes into %zu "
                       "bytes does not fit the device's largest buffer "
                       "(%llu bytes)", M * L * isz, M * L * rsz,
                       (unsigned long long)d->max_alloc);
        return -1;
    }
    if (scan_io(c) != 0 || scan_run(c) != 0 || scan_deliver(c) != 0) {
        return -1;
    }
    if (c->hin.zero_copy && c->out->host == NULL) {
        clFinish(d->queue); /* host input read in place: let it finish */
    }
    return 0;
}

/* A scan: host path > plan > (streamed | input > output > kernels >
 * results). */
int dp_run_scan(gr_request *req, gr_result *res, gr_status *st)
{
    scan_call c;
    int rc;
    scan_start(&c, req, res, st);
    if ((rc = scan_on_host(&c)) <= 0) {
        return rc;
    }
    if ((c.d = dp_dev_begin(req, st)) == NULL) {
        return -1;
    }
    c.isz = isz_of(c.in->t);
    c.csz = isz_of(c.ct);
    c.rsz = isz_of(req->rt);
    rc = scan_plan_call(&c);
    if (rc == 0 && req->mode != GR_EXPLAIN) {
        rc = scan_device(&c);
    }
    scan_end(&c, rc);
    return rc;
}
