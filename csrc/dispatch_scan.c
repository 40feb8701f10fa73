/*
 * gpured — dispatch layer, scans: the driver of the scan family
 * (dp_run_scan): axis -> (M rows x L) for input and output alike, copies
 * only where no such view exists; the host path where placement picks it;
 * long 1-D host scans streamed through pinned buffers (scan_streamed).
 */

#include "dispatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
    const gr_dtype t = acc->t, r = acc->r;
    const size_t isz = isz_of(t), rsz = isz_of(r);
    cl_mem din[GR_STREAM_SLOTS] = {0}, win[GR_STREAM_SLOTS] = {0}, wout[GR_STREAM_SLOTS] = {0};
    cl_event used[GR_STREAM_SLOTS] = {0}, back[GR_STREAM_SLOTS] = {0};
    size_t pend_off[GR_STREAM_SLOTS] = {0}, pend_len[GR_STREAM_SLOTS] = {0};
    unsigned char ident[8];
    gr_accum acc2;
    gr_scan_plan plan2;
    gr_layout lay2 = {1, 0, 0, 1};
    size_t chunk = 0;
    int nbuf = 0, rc = -1;
    char err[256];
    cl_int e = CL_SUCCESS;
    if (gr_accum_for(d, GR_FAM_SCAN, op, r, r, &acc2, err, sizeof err) != 0) {
        gr_status_kind(st, GR_E_TYPE, "%s", err);
        return -1;
    }
    gr_identity_of(op, r, ident);
    gr_stream_pool *p = gr_stream_pool_get(d, &chunk, &nbuf, st);
    if (p == NULL) {
        return -1;
    }
    const size_t per = chunk / (isz > rsz ? isz : rsz);
    const size_t nchunks = (L + per - 1) / per;
    for (size_t k = 0; k < nchunks; ++k) {
        const int s = (int)(k % (size_t)nbuf), s2 = (int)((k + 1) % (size_t)nbuf);
        const size_t off = k * per, len = L - off < per ? L - off : per;
        cl_event w = NULL;
        if (dp_interrupted(req)) {
            dp_stop(st);
            goto fail;
        }
        if (din[s] == NULL) {
            din[s] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, per * isz, NULL, &e);
            GR_CL_CHECK_AS(st, "clCreateBuffer", e);
            wout[s] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, (per + 1) * rsz,
                                     NULL, &e);
            GR_CL_CHECK_AS(st, "clCreateBuffer", e);
        }
        for (int q = 0; q < 2; ++q) {
            int sq = q ? s2 : s;
            if (win[sq] == NULL) {
                win[sq] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                                         (per + 1) * rsz, NULL, &e);
                GR_CL_CHECK_AS(st, "clCreateBuffer", e);
            }
        }
        if (back[s] != NULL) { /* chunk k - nbuf's results leave the slot */
            cl_event b = back[s];
            back[s] = NULL;
            if (gr_stream_drain(p, s, b, out_ptr + pend_off[s] * rsz,
                                pend_len[s] * rsz, st) != 0) {
                goto fail;
            }
        }
        if (gr_stream_upload(p, s, in_ptr + off * isz, len * isz, din[s], 0,
                             used[s], &w, st) != 0) {
            goto fail;
        }
        GR_CL_CHECK(st, clEnqueueBarrierWithWaitList(d->queue, 1, &w, NULL));
        if (k == 0) {
            GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, win[s], CL_TRUE, 0,
                                                 rsz, ident, 0, NULL, NULL));
        }
        if (gr_copy_enqueue(d, din[s], t, 0, win[s], r, 1, len, st) != 0) {
            goto fail;
        }
        if (used[s] != NULL) {
            clReleaseEvent(used[s]);
            used[s] = NULL;
        }
        GR_CL_CHECK(st, clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &used[s]));
        if (lay2.L != len + 1) {
            lay2.L = len + 1;
            lay2.seg_stride = (ptrdiff_t)(len + 1);
            int prc = gr_plan_scan(d, op, &acc2, &lay2, 1, &req->kn, &plan2);
            if (prc != 0) {
                gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE,
                               "%s", plan2.why);
                goto fail;
            }
        }
        gr_scan_io io = {win[s], 0, wout[s], 0, (ptrdiff_t)(len + 1), 1};
        if (gr_scan_run(d, op, &acc2, 0, &lay2, &plan2, &io, NULL, st) != 0) {
            goto fail;
        }
        if (k + 1 < nchunks) {
            GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, wout[s], win[s2],
                                                len * rsz, 0, rsz, 0, NULL,
                                                NULL));
        }
        if (gr_stream_download(p, d, s, wout[s], (exclusive ? 0 : 1) * rsz,
                               len * rsz, &back[s], st) != 0) {
            goto fail;
        }
        pend_off[s] = off;
        pend_len[s] = len;
    }
    for (size_t k = nchunks > (size_t)nbuf ? nchunks - nbuf : 0; k < nchunks; ++k) {
        const int s = (int)(k % (size_t)nbuf);
        if (back[s] != NULL) {
            cl_event b = back[s];
            back[s] = NULL;
            if (gr_stream_drain(p, s, b, out_ptr + pend_off[s] * rsz,
                                pend_len[s] * rsz, st) != 0) {
                goto fail;
            }
        }
    }
    rc = 0;
fail:
    gr_finish_unlocked(d->queue);
    if (gr_stream_idle(p, st) != 0) {
        rc = -1;
    }
    for (int i = 0; i < GR_STREAM_SLOTS; ++i) {
        if (back[i]) clReleaseEvent(back[i]);
        if (used[i]) clReleaseEvent(used[i]);
        if (din[i]) clReleaseMemObject(din[i]);
        if (win[i]) clReleaseMemObject(win[i]);
        if (wout[i]) clReleaseMemObject(wout[i]);
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

int dp_run_scan(gr_request *req, gr_result *res, gr_status *st)
{
    const gr_operand *in = &req->in, *out = &req->out;
    const int axis = req->axis; /* -1: flattened, C order */
    int order[GR_MAXDIMS], nk = 0;
    gr_accum acc;
    gr_scan_plan plan;
    gr_layout lay;
    char err[256];
    gr_block *tin = NULL, *tout = NULL;
    gr_input hin;
    cl_mem hout = NULL;
    char *host_copy = NULL;
    int rc = -1;
    memset(&hin, 0, sizeof hin);

    /* kept dims by decreasing input stride (the input's memory order) */
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
    scan_side si = scan_side_of(in, axis, order, nk);
    scan_side so = scan_side_of(out, axis, order, nk);
    const size_t M = si.M, L = si.L;
    /* min/max scan in the input's dtype: a cast copy first otherwise */
    const int cast_in = (req->op == GR_MIN || req->op == GR_MAX) &&
                        in->t != req->rt;
    const gr_dtype ct = cast_in ? req->rt : in->t;
    int copy_in = !si.ok || cast_in ||
                  (in->host != NULL &&
                   (si.M - 1) * (size_t)si.ss + (si.L - 1) * (size_t)si.es +
                           1 > 4 * M * L + 64);
    int temp_out = !so.ok || (out->host != NULL && !scan_dense(&so)) ||
                   out->t != req->rt;

    if (req->host_ok && in->host != NULL && out->host != NULL && !cast_in &&
        si.ok && so.ok && out->t == req->rt) {
        const gr_layout hl = {M, L, si.ss, si.es};
        const gr_device *hd = gr_device_get(req->dev);
        if (gr_place(&req->dev, req->roam, GR_FAM_SCAN, req->op, &hl,
                          M * L * isz_of(in->t),
                          gr_host_factor(nan_floats(req, in->t)
                                             ? GR_HW_COPY_SCAN : GR_HW_PLAIN),
                          " (a copy first: nan*)",
                          req->mode == GR_EXPLAIN ? res->place_why : NULL,
                          sizeof res->place_why)) {
            /* The host path: no OpenCL call, no device lock. */
            gr_host_op o = {req->op, in->t, req->rt, hd->fp64, 1, 0};
            gr_host_par(req->dev, GR_RATE_SCAN, M * L * isz_of(in->t),
                        &o.threads, &o.grain);
            res->where = 1;
            if (req->mode == GR_EXPLAIN) {
                return 0;
            }
            if (nan_floats(req, in->t)) {
                /* nan*: a contiguous copy with the NaNs replaced */
                const size_t isz = isz_of(in->t);
                char *c = malloc(M * L * isz + 1);
                if (c == NULL) {
                    gr_status_kind(st, GR_E_MEMORY, "out of host memory");
                    return -1;
                }
                for (size_t m = 0; m < M; ++m) {
                    for (size_t i = 0; i < L; ++i) {
                        memcpy(c + (m * L + i) * isz,
                               in->host + ((ptrdiff_t)m * si.ss +
                                           (ptrdiff_t)i * si.es) *
                                              (ptrdiff_t)isz,
                               isz);
                    }
                }
                dp_replace_nan(c, in->t, 1, M * L, req->op, NULL);
                const int hrc = gr_host_scan(&o, req->exclusive, c, M, L,
                                             (ptrdiff_t)L, 1, out->host,
                                             so.ss, so.es);
                free(c);
                if (hrc == 0) {
                    return 0;
                }
            } else if (gr_host_scan(&o, req->exclusive, in->host, M, L, si.ss,
                                    si.es, out->host, so.ss, so.es) == 0) {
                return 0;
            }
            res->where = 0; /* an operator the host path lacks */
        }
    }

    gr_device *d = dp_dev_begin(req, st);
    if (d == NULL) {
        return -1;
    }
    if (gr_accum_for(d, GR_FAM_SCAN, req->op, ct, req->rt, &acc, err,
                     sizeof err) != 0) {
        gr_status_kind(st, GR_E_TYPE, "%s", err);
        goto done;
    }
    acc.nan = nan_floats(req, ct);
    for (int attempt = 0;; ++attempt) {
        lay.M = M;
        lay.L = L;
        lay.seg_stride = copy_in ? (ptrdiff_t)L : si.ss;
        lay.elem_stride = copy_in ? 1 : si.es;
        const ptrdiff_t oes = temp_out ? 1 : so.es;
        const int contig = lay.elem_stride == 1 && oes == 1;
        int prc = gr_plan_scan(d, req->op, &acc, &lay, contig, &req->kn,
                               &plan);
        if (prc == -1 && !contig && attempt == 0) {
            /* a tile variant asked for on strided rows: contiguous copies */
            copy_in |= lay.elem_stride != 1;
            temp_out |= oes != 1;
            continue;
        }
        if (prc != 0) {
            gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                           plan.why);
            goto done;
        }
        break;
    }
    res->acc = acc;
    res->lay = lay;
    res->plan.scan = plan;
    res->copied = copy_in;
    if (req->mode == GR_EXPLAIN) {
        rc = 0;
        goto done;
    }
    const size_t isz = isz_of(in->t), csz = isz_of(ct), rsz = isz_of(req->rt);
    ptrdiff_t gc_in[GR_MAXDIMS], gc_out[GR_MAXDIMS];
    c_strides(si.gsh, si.gn, gc_in);
    c_strides(so.gsh, so.gn, gc_out);

    /* Streamed: a long 1-D scan of host memory (GPUs, or anything larger
     * than one buffer). */
    if (in->host != NULL && out->host != NULL && !copy_in && !temp_out &&
        M == 1 && lay.elem_stride == 1 && so.es == 1 &&
        req->mode == GR_RUN &&
        (gr_stream_wanted(d, L * isz) ||
         (d->max_alloc && (L * isz > d->max_alloc || L * rsz > d->max_alloc)))) {
        rc = scan_streamed(d, req, req->op, &acc, req->exclusive, L,
                           in->host, out->host, st);
        goto done;
    }
    if (d->max_alloc && (M * L * isz > d->max_alloc ||
                         M * L * rsz > d->max_alloc)) {
        gr_status_kind(st, GR_E_MEMORY, "scan of %zu bytes into %zu bytes "
                       "does not fit the device's largest buffer (%llu "
                       "bytes)", M * L * isz, M * L * rsz,
                       (unsigned long long)d->max_alloc);
        goto done;
    }
    gr_scan_io io;
    memset(&io, 0, sizeof io);
    /* the input as the kernels read it */
    if (in->host != NULL && !copy_in) {
        const size_t span = ((si.M - 1) * (size_t)si.ss +
                             (si.L - 1) * (size_t)si.es + 1) * isz;
        if (gr_input_from_host(d, in->host, span, isz, &hin, st) != 0) {
            goto done;
        }
        io.in = hin.mem;
        io.in_base = hin.base;
    } else if (in->host != NULL) {
        /* host gather (and the cast of a min/max scan, on the device) */
        ptrdiff_t bstr[GR_MAXDIMS];
        for (int j = 0; j < si.gn; ++j) {
            bstr[j] = si.gst[j] * (ptrdiff_t)isz;
        }
        if ((host_copy = dp_aligned_alloc_bytes(M * L * isz)) == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            goto done;
        }
        gr_unlock();
        dp_host_gather(host_copy, in->host, si.gn, si.gsh, bstr, isz);
        gr_lock();
        if (gr_input_from_host(d, host_copy, M * L * isz, isz, &hin, st) != 0) {
            goto done;
        }
        io.in = hin.mem;
        io.in_base = hin.base;
        if (cast_in) {
            if ((tin = gr_block_get(d, M * L * csz, st)) == NULL ||
                gr_copy_enqueue(d, hin.mem, in->t, hin.base, tin->mem, ct, 0,
                                M * L, st) != 0) {
                goto done;
            }
            io.in = tin->mem;
            io.in_base = 0;
        }
    } else if (!copy_in) {
        io.in = in->blk->mem;
        io.in_base = in->off / isz;
    } else {
        if ((tin = gr_block_get(d, M * L * csz, st)) == NULL ||
            gr_copy_nd(d, in->blk->mem, in->t, in->off / isz, tin->mem, ct, 0,
                       si.gn, si.gsh, si.gst, gc_in, NULL, st) != 0) {
            goto done;
        }
        io.in = tin->mem;
        io.in_base = 0;
    }
    /* the output as the kernels write it */
    if (temp_out) {
        if ((tout = gr_block_get(d, M * L * rsz, st)) == NULL) {
            goto done;
        }
        io.out = tout->mem;
        io.out_base = 0;
        io.out_seg_stride = (ptrdiff_t)L;
        io.out_elem_stride = 1;
    } else if (out->host != NULL) {
        size_t base = 0;
        hout = gr_output_host(d, out->host, M * L * rsz, rsz, &base);
        if (hout == NULL) {
            if ((tout = gr_block_get(d, M * L * rsz, st)) == NULL) {
                goto done;
            }
            io.out = tout->mem;
        } else {
            io.out = hout;
        }
        io.out_base = hout ? base : 0;
        io.out_seg_stride = so.ss;
        io.out_elem_stride = so.es;
    } else {
        io.out = out->blk->mem;
        io.out_base = out->off / rsz;
        io.out_seg_stride = so.ss;
        io.out_elem_stride = so.es;
    }
    {
        gr_timing tm = {0, 0};
        const int reps = req->mode == GR_BENCH ? req->reps : 1;
        for (int i = 0; i < reps; ++i) {
            if (gr_scan_run(d, req->op, &acc, req->exclusive, &lay, &plan, &io,
                            req->mode == GR_BENCH ? &tm : NULL, st) != 0) {
                goto done;
            }
            if (req->ns != NULL) {
                req->ns[i] = tm.first_ns;
            }
        }
    }
    if (req->exclusive && req->op == GR_ADD && gr_dtypes[req->rt].is_float) {
        /* an exclusive sum starts from +0.0 (the kernels' identity is
         * -0.0, which keeps NumPy's inclusive -0.0s): 0.0 + column 0 */
        gr_epilogue z;
        const size_t one[1] = {M};
        const ptrdiff_t rs[1] = {io.out_seg_stride};
        memset(&z, 0, sizeof z);
        z.mode = GR_EPI_OP;
        z.op = GR_ADD;
        if (gr_copy_nd(d, io.out, req->rt, io.out_base, io.out, req->rt,
                       io.out_base, 1, one, rs, rs, &z, st) != 0) {
            goto done;
        }
    }
    /* results to their destination */
    if (temp_out && out->host != NULL) {
        /* a host out no dense row view describes: read, then scatter */
        ptrdiff_t bstr[GR_MAXDIMS];
        char *buf = malloc(M * L * rsz);
        if (buf == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            goto done;
        }
        if (dp_read_unlocked(d, tout->mem, 0, M * L * rsz, buf, st) != 0) {
            free(buf);
            goto done;
        }
        for (int j = 0; j < so.gn; ++j) {
            bstr[j] = so.gst[j] * (ptrdiff_t)rsz;
        }
        dp_host_scatter(out->host, buf, so.gn, so.gsh, bstr, rsz);
        free(buf);
    } else if (temp_out) {
        if (gr_copy_nd(d, tout->mem, req->rt, 0, out->blk->mem, out->t,
                       out->off / isz_of(out->t), so.gn, so.gsh, gc_out,
                       so.gst, NULL, st) != 0) {
            goto done;
        }
    } else if (out->host != NULL && hout != NULL) {
        /* written in place: map (so the host sees it), then wait for it
         * without the lock, interruptibly */
        void *p = NULL;
        cl_int e = CL_SUCCESS;
        cl_event ev = NULL;
        p = clEnqueueMapBuffer(d->queue, hout, CL_FALSE, CL_MAP_READ, 0,
                               (M * L + io.out_base) * rsz, 0, NULL, NULL, &e);
        GR_CL_CHECK_AS(st, "clEnqueueMapBuffer", e);
        GR_CL_CHECK(st, clEnqueueUnmapMemObject(d->queue, hout, p, 0, NULL,
                                                &ev));
        clFlush(d->queue);
        gr_unlock();
        int wrc = gr_event_wait_intr(d, ev, req->interrupted, req->ictx, st);
        gr_lock();
        if (wrc != 0) {
            if (st->kind == GR_E_INTERRUPT) {
                res->pending = ev;
                if (host_copy != NULL) {
                    clRetainEvent(ev);
                    dp_deferred_add(ev, host_copy);
                    host_copy = NULL;
                }
            } else {
                clReleaseEvent(ev);
            }
            goto done;
        }
        clReleaseEvent(ev);
    } else if (out->host != NULL) {
        /* dense host out (non-negative strides): one read of its span */
        if (gr_read_wait(d, tout->mem, 0, M * L * rsz, out->host,
                               req->interrupted, req->ictx, &res->pending,
                               st) != 0) {
            if (res->pending != NULL && host_copy != NULL) {
                clRetainEvent(res->pending);
                dp_deferred_add(res->pending, host_copy);
                host_copy = NULL;
            }
            goto done;
        }
    }
    if (hin.zero_copy && out->host == NULL) {
        clFinish(d->queue); /* host input read in place: let it finish */
    }
    rc = 0;
fail:
done:
    if (rc != 0 && res->pending == NULL && host_copy != NULL) {
        clFinish(d->queue); /* nothing may read the gather after it goes */
    }
    gr_input_release(&hin);
    if (hout != NULL) {
        clReleaseMemObject(hout);
    }
    gr_block_put(tin);
    gr_block_put(tout);
    gr_unlock();
    free(host_copy);
    return rc;
}
