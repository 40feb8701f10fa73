/*
 * gpured — dispatch: run one request.
 *
 * api.c turns a Python call into a gr_request (operands as host pointers
 * or device blocks with shape and byte strides, the function, dtypes,
 * knobs) and calls gr_dispatch with the GIL released.  Everything between
 * the arguments and the kernels happens here:
 *
 *   reductions   axes -> an (M segments x L elements) layout: kept axes
 *                first, reduced axes last (sorted by stride when the
 *                operator ignores order, negative strides flipped), merged
 *                into one stride each where memory allows, else one copy;
 *                the plan (policy.c); host memory in place (CPU devices),
 *                uploaded, streamed through pinned buffers or split into
 *                pieces of the largest buffer (GPUs); results straight into
 *                the destination, or through the epilogue kernel (mean's
 *                division, `initial`, a cast or strides of `out`).
 *   scans        axis -> (M rows x L) for input and output alike, copies
 *                only where no such view exists; 1-D host scans stream.
 *   by-key       key check and measurement, plan, aggregation, counts.
 *
 * Device work is enqueued and not waited for; the host waits only for
 * results in host memory and for the few words a by-key plan must read
 * (key facts, reduce_by_key's run count), and then without gr_lock, so
 * other threads keep enqueuing.  Temporaries come from the device pool.
 */
#include "gpured.h"
#include "host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PIECES 256

/* --------------------------------------------------------- small helpers */

static size_t isz_of(gr_dtype t) { return (size_t)gr_dtypes[t].size; }
/* nan* functions act on float elements only (integers have no NaN: the
 * plain function's kernels and host loops) */
static int nan_floats(const gr_request *req, gr_dtype t)
{
    return req->nan && gr_dtypes[t].is_float;
}

/* var/std's NaN rule (gr_accum.nan): 1 nanvar/nanstd of floats (NaN
 * skipped, NaN where n - ddof <= 0); 2 var/std with where= (counted as
 * nanvar: a masked-out element as NaN, a kept NaN as +inf; finished as
 * var); else 0. */
static int var_nan(const gr_request *req, gr_dtype t)
{
    if (nan_floats(req, t)) {
        return 1;
    }
    return (req->var == 1 || req->var == 2) && req->mask.present ? 2 : 0;
}

/* Element strides of an operand; -1 if one is not a multiple of the item
 * size (api.c copies such arrays first, so this is a safety net). */
static int elem_strides(const gr_operand *o, ptrdiff_t *es)
{
    const ptrdiff_t isz = (ptrdiff_t)isz_of(o->t);
    for (int i = 0; i < o->nd; ++i) {
        if (o->strides[i] % isz != 0) {
            return -1;
        }
        es[i] = o->strides[i] / isz;
    }
    return 0;
}

/* Dims given outer to inner as one dimension of N elements, stride *s;
 * 0 if memory does not allow it.  No dims: one element. */
static int collapse(const size_t *shape, const ptrdiff_t *str, int n,
                    size_t *N, ptrdiff_t *s)
{
    if (n == 0) {
        *N = 1;
        *s = 1;
        return 1;
    }
    size_t total = shape[n - 1];
    for (int i = n - 2; i >= 0; --i) {
        if (str[i] != str[i + 1] * (ptrdiff_t)shape[i + 1]) {
            return 0;
        }
        total *= shape[i];
    }
    *N = total;
    *s = str[n - 1];
    return 1;
}

/* Walk an N-d strided host view (byte strides) in C order, copying each
 * element between it and a C-contiguous buffer: gather (view -> buf) or
 * scatter (buf -> view).  A contiguous innermost dimension is one memcpy. */
static void host_walk(char *view, char *buf, int n, const size_t *shape,
                      const ptrdiff_t *bstr, size_t isz, int gather)
{
    size_t idx[GR_MAXDIMS] = {0};
    if (n == 0) {
        memcpy(gather ? buf : view, gather ? view : buf, isz);
        return;
    }
    const size_t inner = shape[n - 1];
    const ptrdiff_t is = bstr[n - 1];
    for (;;) {
        char *p = view;
        for (int k = 0; k < n - 1; ++k) {
            p += (ptrdiff_t)idx[k] * bstr[k];
        }
        if (is == (ptrdiff_t)isz) {
            memcpy(gather ? buf : p, gather ? p : buf, inner * isz);
            buf += inner * isz;
        } else {
            for (size_t i = 0; i < inner; ++i) {
                char *e = p + (ptrdiff_t)i * is;
                memcpy(gather ? buf : e, gather ? e : buf, isz);
                buf += isz;
            }
        }
        int k = n - 2;
        while (k >= 0 && ++idx[k] == shape[k]) {
            idx[k] = 0;
            --k;
        }
        if (k < 0) {
            return;
        }
    }
}

static void host_gather(char *dst, const char *src, int n,
                        const size_t *shape, const ptrdiff_t *bstr,
                        size_t isz)
{
    host_walk((char *)src, dst, n, shape, bstr, isz, 1);
}

static void host_scatter(char *dst, const char *src, int n,
                         const size_t *shape, const ptrdiff_t *bstr,
                         size_t isz)
{
    host_walk(dst, (char *)src, n, shape, bstr, isz, 0);
}

/* 128-byte aligned host memory (PoCL uses it in place). */
static void *aligned_alloc_bytes(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, GR_ZC_ALIGN, n ? n : 1) != 0) {
        return NULL;
    }
    return p;
}

static int interrupted(const gr_request *req)
{
    return req->interrupted != NULL && req->interrupted(req->ictx);
}

static int stop(gr_status *st)
{
    gr_status_kind(st, GR_E_INTERRUPT, "interrupted");
    return -1;
}

int gr_event_done(cl_event ev)
{
    cl_int s = CL_QUEUED;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s,
                       NULL) != CL_SUCCESS) {
        return 1;
    }
    return s == CL_COMPLETE || s < 0;
}

/* Host memory that enqueued work still reads: small uploads that do not
 * wait (a blocking write on the in-order queue waits for every call
 * before it: the bytes are copied, the write enqueued), and host copies
 * an interrupted call left to running work.  Each is kept with its event
 * in a list that later calls reap once the event is complete (gr_lock
 * held).  No driver callback frees it: the H100 whole suite stalled in 3
 * of 6 runs inside reduceat's upload of 160 KB of offsets when a callback
 * did, the main thread running in the driver. */
typedef struct deferred {
    cl_event ev;
    void *p;
    struct deferred *next;
} deferred;
static deferred *deferred_list = NULL;

static void deferred_reap(void)
{
    for (deferred **pp = &deferred_list; *pp != NULL;) {
        deferred *q = *pp;
        if (!gr_event_done(q->ev)) {
            pp = &q->next;
            continue;
        }
        *pp = q->next;
        clReleaseEvent(q->ev);
        free(q->p);
        free(q);
    }
}

/* p (malloc'd) freed once ev is complete; takes the reference to ev.
 * Without memory for the list entry, waits for ev instead. */
static void deferred_add(cl_event ev, void *p)
{
    deferred_reap();
    deferred *q = malloc(sizeof *q);
    if (q == NULL) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
        free(p);
        return;
    }
    q->ev = ev;
    q->p = p;
    q->next = deferred_list;
    deferred_list = q;
}

/* n bytes of cp (malloc'd; freed here, now or once written) into mem at
 * byte 0 without a wait; 0, or -1 with st set. */
static int upload_owned(gr_device *d, cl_mem mem, void *cp, size_t n,
                        gr_status *st)
{
    cl_event ev = NULL;
    const cl_int e = clEnqueueWriteBuffer(d->queue, mem, CL_FALSE, 0, n, cp,
                                          0, NULL, &ev);
    if (e != CL_SUCCESS) {
        free(cp);
        st->call = "clEnqueueWriteBuffer";
        st->err = e;
        return -1;
    }
    clFlush(d->queue);
    deferred_add(ev, cp);
    return 0;
}

/* n bytes of src into mem (at byte 0) without a wait, from a copy. */
static int upload_nowait(gr_device *d, cl_mem mem, const void *src, size_t n,
                         gr_status *st)
{
    void *cp = malloc(n + 1);
    if (cp == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    memcpy(cp, src, n);
    return upload_owned(d, mem, cp, n, st);
}

static int read_unlocked(gr_device *d, cl_mem m, size_t off, size_t n,
                         void *dst, gr_status *st);

/* Devices and their lock.  dev_begin opens the device under gr_lock. */
static gr_device *dev_begin(gr_request *req, gr_status *st)
{
    gr_device *d = gr_device_get(req->dev);
    gr_lock();
    if (gr_device_open(d, st) != 0) {
        if (req->dev == req->home_dev) {
            gr_unlock();
            return NULL;
        }
        /* placement moved it to a device that does not open: back home */
        free(st->log);
        memset(st, 0, sizeof *st);
        req->dev = req->home_dev;
        gr_unlock();
        return dev_begin(req, st);
    }
    return d;
}

void gr_request_clear(gr_request *req)
{
    gr_block_put(req->in.blk);
    gr_block_put(req->vals.blk);
    gr_block_put(req->out.blk);
    gr_block_put(req->mask.blk);
    req->in.blk = req->vals.blk = req->out.blk = req->mask.blk = NULL;
}

void gr_result_clear(gr_result *res)
{
    gr_block_put(res->blk[0]);
    gr_block_put(res->blk[1]);
    res->blk[0] = res->blk[1] = NULL;
}

/* The shape of the non-unit dimensions of an operand: its geometry as the
 * output of M results (kept dims in order); byte strides -> elements. */
static int out_geometry(const gr_operand *o, size_t *shape, ptrdiff_t *str)
{
    ptrdiff_t es[GR_MAXDIMS];
    int n = 0;
    if (elem_strides(o, es) != 0) {
        return -1;
    }
    for (int i = 0; i < o->nd; ++i) {
        if (o->shape[i] != 1) {
            shape[n] = o->shape[i];
            str[n] = es[i];
            ++n;
        }
    }
    return n;
}

/* ============================================================ reductions */

/* A reduction's view of its input: M x L with element strides from base
 * (element index in the operand's memory: host pointer or block offset). */
typedef struct {
    gr_layout lay;
    ptrdiff_t base;        /* elements from the operand's element 0       */
    ptrdiff_t gbase;       /* where the gather of a copy starts           */
    int nk;                /* kept dims (non-unit), outer to inner          */
    size_t kshape[GR_MAXDIMS];
    ptrdiff_t kstr[GR_MAXDIMS];
    int nr;                /* reduced dims (non-unit), in visiting order   */
    size_t rshape[GR_MAXDIMS];
    ptrdiff_t rstr[GR_MAXDIMS];
    int ok;                /* the layout exists without a copy            */
} red_view;

static void red_view_of(const gr_request *req, red_view *v)
{
    const gr_operand *in = &req->in;
    ptrdiff_t es[GR_MAXDIMS];
    memset(v, 0, sizeof *v);
    if (elem_strides(in, es) != 0) {
        return; /* ok = 0: copy */
    }
    for (int i = 0; i < in->nd; ++i) {
        if (in->shape[i] == 1) {
            continue;
        }
        if (req->axes >> i & 1) {
            v->rshape[v->nr] = in->shape[i];
            v->rstr[v->nr] = es[i];
            v->nr++;
        } else {
            v->kshape[v->nk] = in->shape[i];
            v->kstr[v->nk] = es[i];
            v->nk++;
        }
    }
    if (!req->ordered) {
        /* Order-free: flip negative strides, visit by decreasing stride. */
        for (int i = 0; i < v->nr; ++i) {
            if (v->rstr[i] < 0) {
                v->base += (ptrdiff_t)(v->rshape[i] - 1) * v->rstr[i];
                v->rstr[i] = -v->rstr[i];
            }
        }
        for (int i = 1; i < v->nr; ++i) {
            for (int j = i; j > 0 && v->rstr[j - 1] < v->rstr[j]; --j) {
                size_t ts = v->rshape[j];
                ptrdiff_t tt = v->rstr[j];
                v->rshape[j] = v->rshape[j - 1];
                v->rstr[j] = v->rstr[j - 1];
                v->rshape[j - 1] = ts;
                v->rstr[j - 1] = tt;
            }
        }
    }
    size_t M = 1, L = 1;
    ptrdiff_t ss = 1, est = 1;
    v->ok = collapse(v->kshape, v->kstr, v->nk, &M, &ss) &&
            collapse(v->rshape, v->rstr, v->nr, &L, &est);
    for (int i = 0; i < v->nk; ++i) {
        v->ok &= v->kstr[i] > 0;
    }
    for (int i = 0; i < v->nr; ++i) {
        v->ok &= v->rstr[i] > 0;
    }
    M = 1;
    for (int i = 0; i < v->nk; ++i) {
        M *= v->kshape[i];
    }
    L = 1;
    for (int i = 0; i < v->nr; ++i) {
        L *= v->rshape[i];
    }
    v->lay.M = M;
    v->lay.L = L;
    v->lay.seg_stride = M > 1 ? ss : (ptrdiff_t)L * (L > 1 ? est : 1);
    v->lay.elem_stride = L > 1 ? est : 1;
}

/* The C-contiguous (kept..., reduced...) copy's geometry, for gathers. */
static int red_gather_dims(const red_view *v, size_t *shape, ptrdiff_t *str)
{
    int n = 0;
    for (int i = 0; i < v->nk; ++i, ++n) {
        shape[n] = v->kshape[i];
        str[n] = v->kstr[i];
    }
    for (int i = 0; i < v->nr; ++i, ++n) {
        shape[n] = v->rshape[i];
        str[n] = v->rstr[i];
    }
    return n;
}

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
            if (interrupted(req)) {
                rc = stop(st);
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
            if (interrupted(req)) {
                rc = stop(st);
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

/* ------------------------------------------------------ the host path */

/* Write double x as element i of type t (C's conversions: the casts
 * NumPy makes with casting="unsafe"); host.c's gr_host_as_double reads. */
static void put_double(void *p, gr_dtype t, size_t i, double x, int f32)
{
    switch (t) {
    case GR_BOOL: ((unsigned char *)p)[i] = x != 0; break;
    case GR_INT8: ((int8_t *)p)[i] = (int8_t)(int64_t)x; break;
    case GR_UINT8: ((uint8_t *)p)[i] = (uint8_t)(int64_t)x; break;
    case GR_INT16: ((int16_t *)p)[i] = (int16_t)(int64_t)x; break;
    case GR_UINT16: ((uint16_t *)p)[i] = (uint16_t)(int64_t)x; break;
    case GR_INT32: ((int32_t *)p)[i] = (int32_t)(int64_t)x; break;
    case GR_UINT32: ((uint32_t *)p)[i] = (uint32_t)(int64_t)x; break;
    case GR_INT64: ((int64_t *)p)[i] = (int64_t)x; break;
    case GR_UINT64: ((uint64_t *)p)[i] = (uint64_t)x; break;
    case GR_FLOAT32: ((float *)p)[i] = (float)x; break;
    default: ((double *)p)[i] = f32 ? (double)(float)x : x; break;
    }
}

/* A reduction of host memory on the calling thread (host.c): the view v
 * (gathered first where it is not one M x L layout), `initial` folded in
 * first as NumPy's reduction does (as column 0 of a copy when it has the
 * input's dtype, else folded with the row's result), mean's division.
 * 0, -1 (st set), or 1: the host path lacks this operator. */
/* nan* functions on the host path: M rows of L contiguous elements of
 * float type t with every NaN replaced, in place, by the operator's
 * replacement (NumPy's _replace_nan: 1 for products, 0 for sums, +inf
 * for nanmin/nanargmin, -inf for nanmax/nanargmax).  allnan (M flags, or
 * NULL) says which rows held NaNs only: nanmin/nanmax give NaN there. */
static void replace_nan(void *p, gr_dtype t, size_t M, size_t L, gr_op op,
                        unsigned char *allnan)
{
    const double rep = op == GR_MUL ? 1.0
                       : op == GR_MIN || op == GR_ARGMIN ? INFINITY
                       : op == GR_MAX || op == GR_ARGMAX ? -INFINITY
                                                         : 0.0;
    for (size_t m = 0; m < M; ++m) {
        size_t k = 0;
        if (t == GR_FLOAT32) {
            float *f = (float *)p + m * L;
            for (size_t i = 0; i < L; ++i) {
                const int n = isnan(f[i]);
                k += (size_t)n;
                f[i] = n ? (float)rep : f[i];
            }
        } else if (t == GR_FLOAT64) {
            double *f = (double *)p + m * L;
            for (size_t i = 0; i < L; ++i) {
                const int n = isnan(f[i]);
                k += (size_t)n;
                f[i] = n ? rep : f[i];
            }
        }
        if (allnan != NULL) {
            allnan[m] = k == L;
        }
    }
}

/* The M x L elements a view reads from src, gathered into dst in
 * (kept..., reduced...) C order (the host path's copies). */
static void gather_rows(const red_view *v, const char *src, size_t isz,
                        char *dst)
{
    size_t gshape[GR_MAXDIMS];
    ptrdiff_t gstr[GR_MAXDIMS], bstr[GR_MAXDIMS];
    const int gn = red_gather_dims(v, gshape, gstr);
    for (int i = 0; i < gn; ++i) {
        bstr[i] = gstr[i] * (ptrdiff_t)isz;
    }
    host_gather(dst, src, gn, gshape, bstr, isz);
}

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
        gather_rows(v, base, isz, copy);
        base = copy;
        ss = (ptrdiff_t)L;
        es = 1;
    }
    for (size_t m = 0; m < M; ++m) {
        double n;
        put_double(req->out.host, req->rt, m,
                   gr_host_var(base + (ptrdiff_t)m * ss * (ptrdiff_t)isz,
                               in->t, L, es, nan, req->ddof, req->var,
                               &n),
                   0);
        res->dof_bad |= n - req->ddof <= 0.0;
    }
    free(copy);
    return 0;
}

/* ptp's finish on the host: y[m] = y[m] - z[m] in dtype t (integers
 * wrap, as NumPy's subtraction; floats round once). */
static void ptp_finish(char *y, const char *z, gr_dtype t, size_t M)
{
    for (size_t m = 0; m < M; ++m) {
        switch (t) {
#define SUB(T, U)                                                            \
        ((T *)y)[m] = (T)(U)((U)((T *)y)[m] - (U)((const T *)z)[m]);         \
        break
        case GR_INT8: SUB(int8_t, uint8_t);
        case GR_UINT8: SUB(uint8_t, uint8_t);
        case GR_INT16: SUB(int16_t, uint16_t);
        case GR_UINT16: SUB(uint16_t, uint16_t);
        case GR_INT32: SUB(int32_t, uint32_t);
        case GR_UINT32: SUB(uint32_t, uint32_t);
        case GR_INT64: SUB(int64_t, uint64_t);
        case GR_UINT64: SUB(uint64_t, uint64_t);
        case GR_FLOAT32:
            ((float *)y)[m] -= ((const float *)z)[m];
            break;
        case GR_FLOAT64:
            ((double *)y)[m] -= ((const double *)z)[m];
            break;
        default:
            break;
#undef SUB
        }
    }
}

/* ptp on the host path: the host's max and its min (two passes, placed
 * as such: HOST_PTP), then their difference.  2-core machine, float32,
 * host / PoCL: 1 MiB 0.03 / 0.13 ms, 4 MiB 0.11 / 0.20, 16 MiB 0.47 /
 * 0.47, 64 MiB 4.05 / 2.26 (2026-11-26): 2.2 puts the edge near 10 MB
 * with the default rates. */
static int reduce_on_host(const gr_request *req, const red_view *v,
                          gr_result *res, gr_status *st);
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
    rc = reduce_on_host(&r, v, res, st);
    if (rc == 0) {
        r.op = GR_MIN;
        r.out.host = z;
        rc = reduce_on_host(&r, v, res, st);
    }
    if (rc == 0) {
        ptp_finish(req->out.host, z, req->rt, v->lay.M);
    }
    free(z);
    return rc;
}

static int reduce_on_host(const gr_request *req, const red_view *v,
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
    const size_t isz = isz_of(in->t), M = v->lay.M, L = v->lay.L;
    const int arg = req->op == GR_ARGMIN || req->op == GR_ARGMAX;
    const gr_dtype ct = arg ? GR_INT64 : req->st;
    const size_t csz = isz_of(ct);
    const int init_col = req->has_initial && ct == in->t;
    const int nan = nan_floats(req, in->t);
    /* nanmin/nanmax: replaced by +-inf, NaN again where a row (initial
     * included) held NaNs only */
    const int skip = nan && (req->op == GR_MIN || req->op == GR_MAX);
    char *copy = NULL, *y = NULL, *z = NULL;
    unsigned char *allnan = NULL;
    const char *base = in->host + v->base * (ptrdiff_t)isz;
    ptrdiff_t ss = v->lay.seg_stride, es = v->lay.elem_stride;
    size_t Lh = L;
    int rc = -1;
    (void)res;
    if (!v->ok || init_col || nan) {
        /* (kept..., reduced...) in C order, behind a column of initial
         * (nan*: a copy with the NaNs replaced) */
        const size_t lead = init_col ? 1 : 0;
        char *rows = NULL;
        Lh = L + lead;
        copy = malloc(M * Lh * isz + 1);
        rows = lead ? malloc(M * L * isz + 1) : copy;
        if (copy == NULL || rows == NULL) {
            if (rows != copy) {
                free(rows);
            }
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            goto out;
        }
        gather_rows(v, in->host + v->base * (ptrdiff_t)isz, isz, rows);
        if (nan && !skip) {
            replace_nan(rows, in->t, M, L, req->op, NULL);
        }
        if (lead) {
            for (size_t m = 0; m < M; ++m) {
                memcpy(copy + m * Lh * isz, req->initial, isz);
                memcpy(copy + (m * Lh + 1) * isz, rows + m * L * isz, L * isz);
            }
            free(rows);
        }
        if (skip) {
            if ((allnan = malloc(M + 1)) == NULL) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory");
                goto out;
            }
            replace_nan(copy, in->t, M, Lh, req->op, allnan);
        }
        base = copy;
        ss = (ptrdiff_t)Lh;
        es = 1;
    }
    /* a large call on several threads, where the model says so */
    gr_host_op o = {req->op, in->t, ct, d->fp64, 1, 0};
    gr_host_par(req->dev, gr_rate_family(GR_FAM_REDUCE, req->op, &v->lay),
                M * Lh * isz, &o.threads, &o.grain);
    const int fold_init = req->has_initial && !init_col;
    if (skip && fold_init) {
        rc = 1; /* an initial of another dtype: the device's fmin epilogue */
        goto out;
    }
    const int epi = req->div != 0.0 || fold_init;
    y = epi ? malloc(M * csz + 1) : req->out.host;
    if (y == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        goto out;
    }
    if (req->count) {
        /* count_nonzero (element != 0, NaN included); the count of valid
         * elements (not NaN) */
        for (size_t m = 0; m < M; ++m) {
            put_double(y, ct, m,
                       (double)gr_host_count(base + (ptrdiff_t)m * ss *
                                                        (ptrdiff_t)isz,
                                             in->t, Lh, es, req->count == 2),
                       0);
        }
    } else if (gr_host_reduce(&o, base, M, Lh, ss, es, y) != 0) {
        rc = 1;
        goto out;
    }
    for (size_t m = 0; allnan != NULL && m < M; ++m) {
        if (allnan[m]) {
            put_double(y, ct, m, NAN, 0);
        }
    }
    if (init_col && req->op == GR_ADD && gr_dtypes[ct].is_float) {
        /* host.c's sums start from +0.0; NumPy's fold starts from the
         * initial: a sum of -0.0s only (initial included) is -0.0 */
        for (size_t m = 0; m < M; ++m) {
            if (gr_host_as_double(y, ct, m) != 0.0) {
                continue;
            }
            int neg = 1;
            for (size_t i = 0; neg && i < Lh; ++i) {
                double x = gr_host_as_double(base + (m * ss + i * es) * isz, ct, 0);
                neg = x == 0.0 && signbit(x);
            }
            if (neg) {
                put_double(y, ct, m, -0.0, 0);
            }
        }
    }
    if (fold_init) {
        /* [initial, row's result] folded in the result dtype */
        const gr_host_op o2 = {req->op, ct, ct, d->fp64};
        if ((z = malloc(2 * M * csz + 1)) == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            goto out;
        }
        for (size_t m = 0; m < M; ++m) {
            memcpy(z + 2 * m * csz, req->initial, csz);
            memcpy(z + (2 * m + 1) * csz, y + m * csz, csz);
        }
        if (gr_host_reduce(&o2, z, M, 2, 2, 1, req->out.host) != 0) {
            rc = 1;
            goto out;
        }
    } else if (req->div != 0.0) {
        /* mean: the sum (ct) divided in double, rounded once to rt */
        for (size_t m = 0; m < M; ++m) {
            put_double(req->out.host, req->rt, m,
                       gr_host_as_double(y, ct, m) / req->div, 0);
        }
    }
    rc = 0;
out:
    if (y != NULL && y != req->out.host) {
        free(y);
    }
    free(z);
    free(copy);
    free(allnan);
    return rc;
}

/* ------------------------------------------------------------ where= masks
 *
 * A mask (req->mask: bool, the input's shape, any strides) reads beside
 * the elements.  Where its element strides are the input's, the kernels
 * read it in place at the input's offsets; otherwise both are gathered
 * alike (split_dims) into M rows of L. */

/* The operand's non-unit dims, kept ones then reduced ones, each in the
 * array's own order, with byte strides: data and mask walked this way
 * meet element for element (no stride sorting). */
static int split_dims(const gr_operand *o, uint64_t axes, size_t *shape,
                      ptrdiff_t *bstr)
{
    int n = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < o->nd; ++i) {
            if (o->shape[i] != 1 && (int)(axes >> i & 1) == pass) {
                shape[n] = o->shape[i];
                bstr[n++] = o->strides[i];
            }
        }
    }
    return n;
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

/* Element i of type t set to what a masked-out element reads as: the
 * operator's identity (float sums -0.0, the exact one), or NaN where a
 * nan* form skips NaN rather than replacing it (nanmin/nanmax, and
 * nanmean, which does not count it): the kernels' GR_WOFF. */
static void put_masked(void *p, gr_dtype t, size_t i, gr_op op, int nan)
{
    const size_t sz = isz_of(t);
    char *e = (char *)p + i * sz;
    if (nan) {
        put_double(p, t, i, NAN, 0);
    } else if (op == GR_ADD || op == GR_ANY) {
        put_double(p, t, i, gr_dtypes[t].is_float ? -0.0 : 0.0, 0);
    } else if (op == GR_MUL || op == GR_ALL) {
        put_double(p, t, i, 1.0, 0);
    } else if (gr_dtypes[t].is_float) {
        put_double(p, t, i, op == GR_MIN ? INFINITY : -INFINITY, 0);
    } else {
        /* integer extremes: all ones (max of unsigned), 0 (its min), or
         * the sign bit's pattern (signed, little-endian) */
        const int hi = op == GR_MIN;
        if (t == GR_BOOL) {
            e[0] = (char)hi;
        } else if (!gr_dtypes[t].is_signed) {
            memset(e, hi ? 0xff : 0, sz);
        } else {
            memset(e, hi ? 0xff : 0, sz);
            e[sz - 1] = (char)(hi ? 0x7f : 0x80);
        }
    }
}

/* where= copies: M x L elements of `o` (dims split_dims) gathered into
 * dst, and the mask the same way into wdst (NULL: not wanted). */
static void gather_masked(const gr_request *req, char *dst, char *wdst)
{
    size_t shape[GR_MAXDIMS];
    ptrdiff_t bstr[GR_MAXDIMS];
    int n = split_dims(&req->in, req->axes, shape, bstr);
    if (dst != NULL) {
        host_gather(dst, req->in.host, n, shape, bstr, isz_of(req->in.t));
    }
    if (wdst != NULL) {
        n = split_dims(&req->mask, req->axes, shape, bstr);
        host_gather(wdst, req->mask.host, n, shape, bstr,
                    isz_of(req->mask.t));
    }
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
        put_double(out, req->rt, m, (isfinite(s) ? s + c : s) / sw, 0);
    }
}

/* where= on the host path: the elements gathered into M rows of L with
 * every masked-out one replaced (put_masked), then the plain host path
 * over that copy (a copy, as the nan* forms make; the device's loads
 * select in place). */
static int masked_on_host(const gr_request *req, const red_view *v,
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
    gather_masked(req, copy, along ? NULL : w);
    if (along) {
        host_gather(w, req->mask.host, 1, req->mask.shape,
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
        for (size_t i = 0; i < M * L; ++i) {
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
        for (size_t i = 0; i < M * L; ++i) {
            if (!w[i]) {
                put_masked(copy, req->in.t, i, req->op, skip);
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
    red_view_of(&r, &v2);
    rc = reduce_on_host(&r, &v2, res, st);
out:
    free(copy);
    free(w);
    return rc;
}

/* nanvar/nanstd of host input into host results: NumPy warns where some
 * slice's count n has n - ddof <= 0, and the kernels made exactly those
 * results nan (or the data did: inf - inf): those slices are counted
 * here, on the host. */
static void nanvar_dof(const gr_request *req, const red_view *v,
                       const char *hptr, const char *wptr, gr_dtype t,
                       gr_result *res)
{
    const ptrdiff_t ss = v->lay.seg_stride, es = v->lay.elem_stride;
    const int vn = var_nan(req, t);
    for (size_t m = 0; m < v->lay.M && !res->dof_bad; ++m) {
        /* (var with where=: inf or nan there) */
        const double r = gr_host_as_double(req->out.host, req->rt,
                                           (ptrdiff_t)m);
        if (vn == 2 ? !isfinite(r) : isnan(r)) {
            const char *row = hptr + (ptrdiff_t)m * ss * (ptrdiff_t)isz_of(t);
            uint64_t n = 0;
            if (wptr == NULL) {
                n = gr_host_count(row, t, v->lay.L, es, 1);
            } else {
                /* where=: the elements the mask keeps (bytes beside
                 * them, the same layout) that are not NaN */
                const char *wrow = wptr + (ptrdiff_t)m * ss;
                for (size_t i = 0; i < v->lay.L; ++i) {
                    const ptrdiff_t k = (ptrdiff_t)i * es;
                    n += wrow[k] &&
                         (vn == 2 || !isnan(gr_host_as_double(row, t, k)));
                }
            }
            res->dof_bad = (double)n - req->ddof <= 0.0;
        }
    }
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
        if (upload_nowait(d, (*tmp)->mem, mk->host, L * wsz, st) != 0) {
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
        if (upload_owned(d, (*tmp)->mem, h, L * wsz, st) != 0) {
            return -1;
        }
    }
    *wmem = (*tmp)->mem;
    *wbase = 0;
    return 0;
}

static int run_reduce(gr_request *req, gr_result *res, gr_status *st)
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
    red_view_of(req, &v);
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
                 ? masked_on_host(req, &v, res, st)
                 : mk != NULL ? 1 : reduce_on_host(req, &v, res, st);
        if (rc <= 0) {
            return rc;
        }
        res->where = 0; /* an operator the host path lacks: the device */
    }
    gr_device *d = dev_begin(req, st);
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
    int gn = res->copied ? red_gather_dims(&v, gshape, gstr) : 0;
    if (res->copied && mk != NULL) {
        /* data and mask gathered alike, from element 0 */
        gn = split_dims(in, req->axes, gshape, gstr);
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
            host_copy = aligned_alloc_bytes(v.lay.M * v.lay.L * isz);
            if (host_copy == NULL) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory copying "
                               "%zu bytes", v.lay.M * v.lay.L * isz);
                goto done;
            }
            if (mk != NULL && !along &&
                (wcopy = aligned_alloc_bytes(v.lay.M * v.lay.L * wsz)) ==
                    NULL) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory");
                goto done;
            }
            gr_unlock();
            if (mk != NULL) {
                gather_masked(req, host_copy, wcopy); /* (along: NULL) */
            } else {
                host_gather(host_copy, in->host + v.gbase * (ptrdiff_t)isz,
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
                const int wn = split_dims(mk, req->axes, ws, wstr);
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
                if ((wcopy = aligned_alloc_bytes(v.lay.M * v.lay.L * wsz)) ==
                    NULL) {
                    gr_status_kind(st, GR_E_MEMORY, "out of host memory");
                    goto done;
                }
                gr_unlock();
                size_t ws[GR_MAXDIMS];
                ptrdiff_t wstr[GR_MAXDIMS];
                const int wn = split_dims(mk, req->axes, ws, wstr);
                host_gather(wcopy, mk->host, wn, ws, wstr, wsz);
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
        on = out_geometry(&req->out, oshape, ostr);
        size_t n1 = 1;
        ptrdiff_t s1 = 1;
        final_mem = req->out.blk->mem;
        final_off = req->out.off / isz_of(req->out.t);
        dt = req->out.t;
        direct = on >= 0 && collapse(oshape, ostr, on, &n1, &s1) &&
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
            nanvar_dof(req, &v, hptr, wptr, ct, res);
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
            nanvar_dof(req, &v, hptr, wptr, ct, res);
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

/* ====================================================== segments by offsets
 *
 * reduceat: the input as rows x L x inner (C order: a copy where it is not
 * that), S checked offsets (host longs, req->vals) along the axis, rows x S
 * x inner results of rt into req->out (C-contiguous: api.c allocates it or
 * checked the user's).  Small host inputs are answered by host.c's loops
 * (one strided reduction per segment); the rest by kernels/segments.cl. */

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

static int run_segments(gr_request *req, gr_result *res, gr_status *st)
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
    int rc = -1, dense = elem_strides(in, es) == 0;
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
            if ((host_copy = aligned_alloc_bytes(n_in * isz)) == NULL) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory copying "
                               "%zu bytes", n_in * isz);
                return -1;
            }
            host_gather(host_copy, in->host, in->nd, in->shape, bstr, isz);
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
    gr_device *d = dev_begin(req, st);
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
            upload_nowait(d, dix->mem, idx, S * sizeof(int64_t), st) != 0) {
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

/* ================================================================= scans */

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
        if (interrupted(req)) {
            stop(st);
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
    if (elem_strides(o, e) != 0) {
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
    int okk = collapse(s.gsh, s.gst, s.gn, &s.M, &s.ss);
    for (int j = 0; j < nr; ++j) {
        s.gsh[s.gn] = rsh[j];
        s.gst[s.gn] = rst[j];
        s.gn++;
    }
    int okr = collapse(rsh, rst, nr, &s.L, &s.es);
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

static int run_scan(gr_request *req, gr_result *res, gr_status *st)
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
                replace_nan(c, in->t, 1, M * L, req->op, NULL);
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

    gr_device *d = dev_begin(req, st);
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
        if ((host_copy = aligned_alloc_bytes(M * L * isz)) == NULL) {
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            goto done;
        }
        gr_unlock();
        host_gather(host_copy, in->host, si.gn, si.gsh, bstr, isz);
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
        if (read_unlocked(d, tout->mem, 0, M * L * rsz, buf, st) != 0) {
            free(buf);
            goto done;
        }
        for (int j = 0; j < so.gn; ++j) {
            bstr[j] = so.gst[j] * (ptrdiff_t)rsz;
        }
        host_scatter(out->host, buf, so.gn, so.gsh, bstr, rsz);
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
                    deferred_add(ev, host_copy);
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
                deferred_add(res->pending, host_copy);
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

/* ========================================================= reduce-by-key */

/* n bytes of m at off into dst, waited for without gr_lock and without an
 * interrupt check (runtime.c gr_read_wait). */
static int read_unlocked(gr_device *d, cl_mem m, size_t off, size_t n,
                         void *dst, gr_status *st)
{
    return gr_read_wait(d, m, off, n, dst, NULL, NULL, NULL, st);
}

/* The ValueError of a bad key: its index and value (read from the host
 * array, or 8 bytes from the device). */
static void bad_key(gr_device *d, const gr_request *req, cl_mem keys,
                    size_t koff, uint64_t i, gr_status *st)
{
    const size_t ksz = isz_of(req->bkt.k);
    unsigned char p[8] = {0};
    if (req->in.host != NULL) {
        memcpy(p, req->in.host + i * ksz, ksz);
    } else if (read_unlocked(d, keys, (koff + i) * ksz, ksz, p, st) != 0) {
        return;
    }
    long long sv = 0;
    unsigned long long uv = 0;
    switch (req->bkt.k) {
    case GR_INT32: { int32_t x; memcpy(&x, p, 4); sv = x; break; }
    case GR_UINT32: { uint32_t x; memcpy(&x, p, 4); uv = x; break; }
    case GR_INT64: { int64_t x; memcpy(&x, p, 8); sv = x; break; }
    default: { uint64_t x; memcpy(&x, p, 8); uv = x; break; }
    }
    const int sgn = gr_dtypes[req->bkt.k].is_signed;
    if (sgn && sv < 0) {
        gr_status_kind(st, GR_E_VALUE, "keys[%llu] = %lld is negative: keys "
                       "must lie in [0, num_keys)", (unsigned long long)i, sv);
    } else {
        gr_status_kind(st, GR_E_VALUE, "keys[%llu] = %llu is out of range: "
                       "keys must lie in [0, num_keys) with num_keys = %lld",
                       (unsigned long long)i,
                       sgn ? (unsigned long long)sv : uv,
                       (long long)req->num_keys);
    }
}

/* A stable sort of (keys, values) by key on the host: LSD radix sort of
 * the keys (all in [0, num_keys): validated), 8 bits per pass, as many
 * passes as num_keys needs.  Deterministic sum_by_key on unsorted keys
 * takes this, then the sorted-segments kernels (README: which calls
 * wait). */
static int host_sort_by_key(const char *keys, const char *vals, size_t n,
                            size_t ksz, size_t vsz, uint64_t max_key,
                            char **ok, char **ov, gr_status *st)
{
    uint64_t *k0 = malloc(n * 8), *k1 = malloc(n * 8);
    size_t *i0 = malloc(n * sizeof(size_t)), *i1 = malloc(n * sizeof(size_t));
    char *sk = aligned_alloc_bytes(n * ksz), *sv = aligned_alloc_bytes(n * vsz);
    int rc = -1;
    if (!k0 || !k1 || !i0 || !i1 || !sk || !sv) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory sorting %zu keys",
                       n);
        goto out;
    }
    for (size_t i = 0; i < n; ++i) {
        uint64_t k = 0;
        memcpy(&k, keys + i * ksz, ksz); /* little-endian, non-negative */
        k0[i] = k;
        i0[i] = i;
    }
    for (int shift = 0; shift < 64 && (max_key >> shift) != 0; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; ++i) {
            count[((k0[i] >> shift) & 255) + 1]++;
        }
        for (int b = 0; b < 256; ++b) {
            count[b + 1] += count[b];
        }
        for (size_t i = 0; i < n; ++i) {
            size_t at = count[(k0[i] >> shift) & 255]++;
            k1[at] = k0[i];
            i1[at] = i0[i];
        }
        uint64_t *tk = k0; k0 = k1; k1 = tk;
        size_t *ti = i0; i0 = i1; i1 = ti;
    }
    for (size_t i = 0; i < n; ++i) {
        memcpy(sk + i * ksz, keys + i0[i] * ksz, ksz);
        memcpy(sv + i * vsz, vals + i0[i] * vsz, vsz);
    }
    *ok = sk;
    *ov = sv;
    sk = sv = NULL;
    rc = 0;
out:
    free(k0);
    free(k1);
    free(i0);
    free(i1);
    free(sk);
    free(sv);
    return rc;
}

/* One input of a by-key call as (cl_mem, first element): device blocks in
 * place (strided views copied), host arrays uploaded or used in place. */
typedef struct {
    cl_mem mem;
    size_t base;
    gr_input host;
    gr_block *tmp;
} bk_in;

static int bk_in_open(gr_device *d, const gr_operand *o, size_t n,
                      bk_in *b, gr_status *st)
{
    const size_t isz = isz_of(o->t);
    memset(b, 0, sizeof *b);
    if (!o->present) {
        return 0;
    }
    if (o->host != NULL) {
        if (gr_input_from_host(d, o->host, n * isz, isz, &b->host, st) != 0) {
            return -1;
        }
        b->mem = b->host.mem;
        b->base = b->host.base;
        return 0;
    }
    if (o->nd == 1 && o->shape[0] > 1 && o->strides[0] != (ptrdiff_t)isz) {
        const size_t shape[1] = {n};
        const ptrdiff_t ss[1] = {o->strides[0] / (ptrdiff_t)isz}, one[1] = {1};
        if ((b->tmp = gr_block_get(d, n * isz, st)) == NULL ||
            gr_copy_nd(d, o->blk->mem, o->t, o->off / isz, b->tmp->mem, o->t,
                       0, 1, shape, ss, one, NULL, st) != 0) {
            return -1;
        }
        b->mem = b->tmp->mem;
        return 0;
    }
    b->mem = o->blk->mem;
    b->base = o->off / isz;
    return 0;
}

static void bk_in_close(bk_in *b)
{
    gr_input_release(&b->host);
    gr_block_put(b->tmp);
    memset(b, 0, sizeof *b);
}

/* sum_by_key: key facts (or the fused check), plan, sort if asked to be
 * deterministic on unsorted keys, bins, aggregation.  gr_lock held. */
static int bykey_dense(gr_device *d, gr_request *req, gr_result *res,
                       bk_in *kb, bk_in *vb, gr_status *st)
{
    gr_bk_result *r = &res->bk;
    gr_bk_overrides ov = {req->kn.variant, req->kn.wg_size,
                          req->kn.items > 0 ? (size_t)req->kn.items : 0,
                          req->deterministic, req->sorted};
    const size_t n = req->in.shape[0];
    const int64_t num_keys = req->num_keys;
    gr_bk_types ty = req->bkt; /* keys as uint32 once sorted on the device */
    char *sk = NULL, *sv = NULL;
    gr_block *flag = NULL;
    bk_in skb, svb;
    int rc = -1;
    memset(&skb, 0, sizeof skb);
    memset(&svb, 0, sizeof svb);
    r->facts.first_bad = UINT64_MAX;
    r->fused = 0;
    /* The key check fused into an atomic kernel: num_keys given,
     * nondeterministic or integer values (exact in any order), an atomic
     * variant (asked for, or auto on NVIDIA), and 64-bit atomics for the
     * flag word. */
    if (num_keys > 0 && n > 0 &&
        (!ov.deterministic || gr_bk_exact(&req->bkt)) && d->atomics64) {
        const char *w = ov.variant;
        const int is_auto = w == NULL || strcmp(w, "auto") == 0;
        const int atomic_kind = !is_auto && (strcmp(w, "atomic") == 0 ||
                                             strcmp(w, "warp_aggregated") == 0 ||
                                             strcmp(w, "local_hash") == 0);
        if (atomic_kind || (is_auto && d->is_gpu && d->nvidia_ptx)) {
            memset(&r->facts, 0, sizeof r->facts);
            r->facts.n = n;
            r->facts.num_keys = (size_t)num_keys;
            r->facts.first_bad = UINT64_MAX;
            r->facts.sorted = ov.sorted;
            r->facts.unmeasured = 1;
            int prc = gr_bk_plan_for(d, d->sm, GR_BK_DENSE, &req->bkt,
                                     &r->facts, &ov, &r->plan);
            if (prc != 0) {
                gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE,
                               "%s", r->plan.why);
                return -1;
            }
            r->fused = r->plan.variant == GR_BKV_ATOMIC ||
                       r->plan.variant == GR_BKV_WARP ||
                       r->plan.variant == GR_BKV_HASH;
        }
    }
    if (!r->fused) {
        cl_ulong *words = NULL;
        size_t groups = 0;
        cl_event ev = NULL;
        const uint64_t bound = num_keys >= 0 ? (uint64_t)num_keys
                                             : (uint64_t)1 << 62;
        r->ns_stats = 0;
        if (gr_bykey_stats_enqueue(d, &req->bkt, kb->mem, kb->base, n, bound,
                                   req->mode == GR_BENCH ? &r->ns_stats : NULL,
                                   &words, &groups, &ev, st) != 0) {
            return -1;
        }
        if (ev != NULL) {
            gr_unlock();
            int wrc = gr_event_wait_intr(d, ev, NULL, NULL, st);
            gr_lock();
            clReleaseEvent(ev);
            if (wrc != 0) {
                free(words);
                return -1;
            }
        }
        gr_bykey_stats_combine(words, groups, n, &r->facts);
        free(words);
        if (r->facts.first_bad != UINT64_MAX) {
            bad_key(d, req, kb->mem, kb->base, r->facts.first_bad, st);
            return -1;
        }
        r->facts.num_keys = num_keys >= 0 ? (size_t)num_keys
                            : n ? (size_t)r->facts.max_key + 1 : 0;
        r->facts.sorted = ov.sorted;
        int prc = gr_bk_plan_for(d, d->sm, GR_BK_DENSE, &req->bkt, &r->facts,
                                 &ov, &r->plan);
        if (prc != 0) {
            gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                           r->plan.why);
            return -1;
        }
        r->needs_sort = (r->plan.variant == GR_BKV_SEGMENTS ||
                         r->plan.variant == GR_BKV_LOOKBACK) &&
                        r->facts.descents != 0;
        if (r->needs_sort) {
            /* the pairs sorted first: on the device where its radix sort
             * takes them (keys and length below 2^32), else on the host */
            const size_t at = strlen(r->plan.why);
            r->needs_sort = gr_bykey_sort_fits(n, r->facts.max_key) ? 1 : 2;
            if (r->needs_sort == 1) {
                snprintf(r->plan.why + at, sizeof r->plan.why - at,
                         "; keys not sorted: stable radix sort on the "
                         "device first (%d passes of 8 bits)",
                         gr_bykey_sort_passes(r->facts.max_key));
            } else {
                snprintf(r->plan.why + at, sizeof r->plan.why - at,
                         "; keys not sorted: stable radix sort on the host "
                         "first (keys or length past 2^32)");
            }
        }
    }
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    const size_t nk = r->facts.num_keys;
    const size_t rs = isz_of(req->bkt.r);
    if (nk * rs / (rs ? rs : 1) != nk || (d->max_alloc && nk * rs > d->max_alloc)) {
        gr_status_kind(st, GR_E_MEMORY, "sum_by_key: %zu bins of %zu bytes "
                       "do not fit device '%s' (largest buffer %llu bytes)",
                       nk, rs, d->name, (unsigned long long)d->max_alloc);
        return -1;
    }
    if (r->needs_sort == 1) {
        /* deterministic on unsorted keys: a stable sort on the device,
         * then sorted segments over uint32 keys */
        if (gr_bykey_sort_dev(d, &req->bkt, ov.wg_size, ov.items, kb->mem,
                              kb->base, vb->mem, vb->base, n,
                              r->facts.max_key, &skb.tmp,
                              &svb.tmp, req->mode == GR_BENCH ? &r->ns_stats
                                                              : NULL,
                              st) != 0) {
            goto out;
        }
        skb.mem = skb.tmp->mem;
        svb.mem = svb.tmp != NULL ? svb.tmp->mem : vb->mem;
        svb.base = svb.tmp != NULL ? 0 : vb->base;
        kb = &skb;
        vb = &svb;
        ty.k = GR_UINT32;
        r->facts.sorted = 1;
        r->facts.descents = 0;
        ov.sorted = 1;
        char why[sizeof r->plan.why];
        memcpy(why, r->plan.why, sizeof why);
        int prc = gr_bk_plan_for(d, d->sm, GR_BK_DENSE, &ty, &r->facts, &ov,
                                 &r->plan);
        memcpy(r->plan.why, why, sizeof why);
        if (prc != 0) {
            gr_status_kind(st, GR_E_VALUE, "%s", r->plan.why);
            goto out;
        }
    } else if (r->needs_sort == 2) {
        /* deterministic on unsorted keys: a stable sort on the host */
        const size_t ksz = isz_of(req->bkt.k), vsz = isz_of(req->bkt.v);
        char *hk = req->in.host, *hv = req->vals.host;
        char *rk = NULL, *rv = NULL;
        if (hk == NULL && (rk = malloc(n * ksz)) != NULL &&
            read_unlocked(d, kb->mem, kb->base * ksz, n * ksz, rk, st) != 0) {
            free(rk);
            return -1;
        }
        if (hv == NULL && (rv = malloc(n * vsz)) != NULL &&
            read_unlocked(d, vb->mem, vb->base * vsz, n * vsz, rv, st) != 0) {
            free(rk);
            free(rv);
            return -1;
        }
        if ((hk == NULL && rk == NULL) || (hv == NULL && rv == NULL)) {
            free(rk);
            free(rv);
            gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            return -1;
        }
        gr_unlock();
        rc = host_sort_by_key(hk ? hk : rk, hv ? hv : rv, n, ksz, vsz,
                              r->facts.max_key, &sk, &sv, st);
        gr_lock();
        free(rk);
        free(rv);
        if (rc != 0) {
            return -1;
        }
        rc = -1;
        if (gr_input_from_host(d, sk, n * ksz, ksz, &skb.host, st) != 0 ||
            gr_input_from_host(d, sv, n * vsz, vsz, &svb.host, st) != 0) {
            goto out;
        }
        skb.mem = skb.host.mem;
        skb.base = skb.host.base;
        svb.mem = svb.host.mem;
        svb.base = svb.host.base;
        kb = &skb;
        vb = &svb;
        r->facts.sorted = 1;
        r->facts.descents = 0;
        ov.sorted = 1;
        int prc = gr_bk_plan_for(d, d->sm, GR_BK_DENSE, &req->bkt, &r->facts,
                                 &ov, &r->plan);
        if (prc != 0) {
            gr_status_kind(st, GR_E_VALUE, "%s", r->plan.why);
            goto out;
        }
    }
    if ((res->blk[1] = gr_block_get(d, nk ? nk * rs : 8, st)) == NULL ||
        (flag = gr_block_get(d, 8, st)) == NULL) {
        goto out;
    }
    for (int i = 0; i < (req->mode == GR_BENCH ? req->reps : 1); ++i) {
        double t = 0.0;
        if (gr_bykey_dense_dev(d, &ty, &r->plan, kb->mem, kb->base,
                               vb->mem, vb->base, n, nk, res->blk[1]->mem,
                               flag->mem, req->mode == GR_BENCH ? &t : NULL,
                               st) != 0) {
            goto out;
        }
        if (req->ns != NULL) {
            req->ns[i] = t + r->ns_stats;
        }
    }
    if (r->fused && nk > 0 && n > 0) {
        cl_ulong fb = 0;
        if (read_unlocked(d, flag->mem, 0, 8, &fb, st) != 0) {
            goto out;
        }
        if (fb != UINT64_MAX) {
            bad_key(d, req, kb->mem, kb->base, fb, st);
            goto out;
        }
    }
    res->count = nk;
    rc = 0;
out:
    if (sk != NULL || sv != NULL) {
        /* the sorted copies were read in place or uploaded: finish first */
        clFinish(d->queue);
    }
    bk_in_close(&skb);
    bk_in_close(&svb);
    free(sk);
    free(sv);
    gr_block_put(flag);
    return rc;
}

/* reduce_by_key / scan_by_key: plan, outputs of capacity n, the segmented
 * kernels, and reduce_by_key's run count (read without gr_lock).  A result
 * much shorter than its capacity is moved into a block of its size. */
static int bykey_runs(gr_device *d, gr_request *req, gr_result *res,
                      bk_in *kb, bk_in *vb, gr_status *st)
{
    gr_bk_result *r = &res->bk;
    gr_bk_overrides ov = {req->kn.variant, req->kn.wg_size,
                          req->kn.items > 0 ? (size_t)req->kn.items : 0,
                          req->deterministic, -1};
    const size_t n = req->in.shape[0];
    const size_t rs = isz_of(req->bkt.r), ks = isz_of(req->bkt.k);
    gr_block *cnt = NULL;
    int rc = -1;
    r->facts.n = n;
    r->facts.sorted = -1;
    r->facts.first_bad = UINT64_MAX;
    int prc = gr_bk_plan_for(d, d->sm, req->bkf, &req->bkt, &r->facts, &ov,
                             &r->plan);
    if (prc != 0) {
        gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                       r->plan.why);
        return -1;
    }
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    if ((res->blk[1] = gr_block_get(d, n ? n * rs : 8, st)) == NULL ||
        (req->bkf == GR_BK_REDUCE &&
         ((res->blk[0] = gr_block_get(d, n ? n * ks : 8, st)) == NULL ||
          (cnt = gr_block_get(d, 8, st)) == NULL))) {
        goto out;
    }
    const int mode = req->bkf == GR_BK_REDUCE ? 0 : req->exclusive ? 2 : 1;
    for (int i = 0; i < (req->mode == GR_BENCH ? req->reps : 1); ++i) {
        double t = 0.0;
        if (gr_bykey_segments_dev(d, &req->bkt, &r->plan, mode, kb->mem,
                                  kb->base, vb->mem, vb->base, n,
                                  res->blk[0] ? res->blk[0]->mem : NULL,
                                  res->blk[1]->mem, cnt ? cnt->mem : NULL,
                                  req->mode == GR_BENCH ? &t : NULL,
                                  st) != 0) {
            goto out;
        }
        if (req->ns != NULL) {
            req->ns[i] = t;
        }
    }
    res->count = n;
    if (cnt != NULL) {
        cl_ulong c = 0;
        if (n > 0 && read_unlocked(d, cnt->mem, 0, 8, &c, st) != 0) {
            goto out;
        }
        res->count = (size_t)c;
        if (c > 0 && c * 2 < n) {
            /* keep only what the results need */
            gr_block *bk = NULL, *bv = NULL;
            if ((bk = gr_block_get(d, c * ks, st)) == NULL ||
                (bv = gr_block_get(d, c * rs, st)) == NULL) {
                gr_block_put(bk);
                goto out;
            }
            GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, res->blk[0]->mem,
                                                bk->mem, 0, 0, c * ks, 0, NULL,
                                                NULL));
            GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, res->blk[1]->mem,
                                                bv->mem, 0, 0, c * rs, 0, NULL,
                                                NULL));
            gr_block_put(res->blk[0]);
            gr_block_put(res->blk[1]);
            res->blk[0] = bk;
            res->blk[1] = bv;
        }
    }
    rc = 0;
fail:
out:
    gr_block_put(cnt);
    return rc;
}

static int run_bykey(gr_request *req, gr_result *res, gr_status *st)
{
    bk_in kb, vb;
    const size_t n = req->in.shape[0];
    int rc = -1;
    memset(&kb, 0, sizeof kb);
    memset(&vb, 0, sizeof vb);
    gr_device *d = dev_begin(req, st);
    if (d == NULL) {
        return -1;
    }
    if (req->mode != GR_EXPLAIN || req->bkf == GR_BK_DENSE) {
        if (bk_in_open(d, &req->in, n, &kb, st) != 0 ||
            bk_in_open(d, &req->vals, n, &vb, st) != 0) {
            goto done;
        }
    }
    if (vb.mem == NULL) {
        vb.mem = kb.mem; /* op count reads no values */
    }
    rc = req->bkf == GR_BK_DENSE ? bykey_dense(d, req, res, &kb, &vb, st)
                                 : bykey_runs(d, req, res, &kb, &vb, st);
    if (kb.host.zero_copy || vb.host.zero_copy) {
        clFinish(d->queue); /* host memory read in place */
    }
done:
    if (rc != 0) {
        gr_result_clear(res);
    }
    bk_in_close(&kb);
    bk_in_close(&vb);
    gr_unlock();
    return rc;
}

/* =============================================================== entry */

int gr_dispatch(gr_request *req, gr_result *res, gr_status *st)
{
    int rc;
    memset(res, 0, sizeof *res);
    if (req->mode == GR_BENCH && gr_profile_begin(req->dev, st) != 0) {
        return -1;
    }
    switch (req->fam) {
    case GR_FAM_REDUCE:
        rc = req->func == GR_F_REDUCEAT ? run_segments(req, res, st)
                                        : run_reduce(req, res, st);
        break;
    case GR_FAM_SCAN:
        rc = run_scan(req, res, st);
        break;
    default:
        rc = run_bykey(req, res, st);
        break;
    }
    if (req->mode == GR_BENCH) {
        gr_profile_end(req->dev);
    }
    return rc;
}

/* ====================================================== byte operations */

int gr_device_ready(int dev, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    if (__atomic_load_n(&d->queue, __ATOMIC_ACQUIRE) != NULL && !gr_forked()) {
        return 0;
    }
    gr_lock();
    int rc = gr_device_open(d, st);
    gr_unlock();
    return rc;
}

int gr_block_write(gr_block *b, size_t off, const void *src, size_t n,
                   gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    int rc = -1;
    gr_lock();
    if (gr_device_open(d, st) == 0) {
        rc = gr_stream_write(d, b->mem, off, src, n, st);
    }
    gr_unlock();
    return rc;
}

int gr_block_read(gr_block *b, size_t off, void *dst, size_t n,
                  int (*intr)(void *), void *ictx, cl_event *pending,
                  gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    int rc = -1;
    gr_lock();
    if (gr_device_open(d, st) == 0) {
        rc = gr_read_wait(d, b->mem, off, n, dst, intr, ictx, pending,
                                st);
    }
    gr_unlock();
    return rc;
}

/* Reads of many blocks at once (gpured.dask's partials).  A device's
 * small reads (<= GATHER_MAX bytes each, two or more) are gathered on the
 * device (a copy each into one block) and read back once: NVIDIA's read
 * into pageable host memory costs ~20 us even enqueued without blocking,
 * a copy between buffers a few.  Other reads are enqueued as they are.
 * Every device's queue is flushed, then each read waited for with gr_lock
 * released.  evs[i] gets a direct read's event (NULL for gathered ones:
 * those are waited for here, uninterrupted, before return); the caller
 * releases the events, or keeps the host memory of those not complete
 * (an interruption, a failure) alive until they are. */
#define GATHER_MAX 65536

typedef struct {
    int dev, items;
    size_t bytes;
    gr_block *tmp;
    unsigned char *host;
    cl_event ev;
} gather;

int gr_blocks_read(int count, gr_block *const *b, const size_t *off,
                   void *const *dst, const size_t *n, int (*intr)(void *),
                   void *ictx, cl_event *evs, gr_status *st)
{
    int rc = 0, ng = 0;
    gather *g = calloc((size_t)count + 1, sizeof *g);
    int *gi = malloc(((size_t)count + 1) * sizeof *gi);
    size_t *pos = malloc(((size_t)count + 1) * sizeof *pos);
    if (g == NULL || gi == NULL || pos == NULL) {
        free(g);
        free(gi);
        free(pos);
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    for (int i = 0; i < count; ++i) { /* the gathers: one per device */
        evs[i] = NULL;
        gi[i] = -1;
        if (n[i] > GATHER_MAX) {
            continue;
        }
        int j = 0;
        while (j < ng && g[j].dev != b[i]->dev) {
            ++j;
        }
        if (j == ng) {
            g[ng++].dev = b[i]->dev;
        }
        gi[i] = j;
        pos[i] = g[j].bytes;
        g[j].bytes += (n[i] + 7) & ~(size_t)7;
        g[j].items++;
    }
    for (int i = 0; i < count; ++i) {
        if (gi[i] >= 0 && g[gi[i]].items < 2) {
            gi[i] = -1; /* alone on its device: read directly */
        }
    }
    gr_lock();
    for (int j = 0; j < ng && rc == 0; ++j) {
        gr_device *d = gr_device_get(g[j].dev);
        if (g[j].items < 2) {
            continue;
        }
        if (gr_device_open(d, st) != 0 ||
            (g[j].host = malloc(g[j].bytes)) == NULL ||
            (g[j].tmp = gr_block_get(d, g[j].bytes, st)) == NULL) {
            if (st->call == NULL && st->kind == 0) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            }
            rc = -1;
        }
    }
    int i = 0;
    for (; i < count && rc == 0; ++i) {
        gr_device *d = gr_device_get(b[i]->dev);
        cl_int e;
        if (gi[i] >= 0) {
            e = clEnqueueCopyBuffer(d->queue, b[i]->mem, g[gi[i]].tmp->mem,
                                    off[i], pos[i], n[i], 0, NULL, NULL);
        } else if (gr_device_open(d, st) != 0) {
            rc = -1;
            break;
        } else {
            e = clEnqueueReadBuffer(d->queue, b[i]->mem, CL_FALSE, off[i],
                                    n[i], dst[i], 0, NULL, &evs[i]);
            if (e != CL_SUCCESS) {
                evs[i] = NULL;
            }
        }
        if (e != CL_SUCCESS) {
            st->call = gi[i] >= 0 ? "clEnqueueCopyBuffer"
                                  : "clEnqueueReadBuffer";
            st->err = e;
            rc = -1;
        }
    }
    for (int j = 0; j < ng && rc == 0; ++j) {
        if (g[j].tmp != NULL) {
            cl_int e = clEnqueueReadBuffer(
                gr_device_get(g[j].dev)->queue, g[j].tmp->mem, CL_FALSE, 0,
                g[j].bytes, g[j].host, 0, NULL, &g[j].ev);
            if (e != CL_SUCCESS) {
                g[j].ev = NULL;
                st->call = "clEnqueueReadBuffer";
                st->err = e;
                rc = -1;
            }
        }
    }
    for (int j = 0; j < i; ++j) { /* each run of one device's commands */
        if (j + 1 == i || b[j + 1]->dev != b[j]->dev) {
            clFlush(gr_device_get(b[j]->dev)->queue);
        }
    }
    gr_unlock();
    for (int j = 0; j < ng; ++j) { /* gathers first: none left pending */
        if (g[j].ev != NULL) {
            if (rc == 0) {
                rc = gr_event_wait_intr(gr_device_get(g[j].dev), g[j].ev,
                                        intr, ictx, st);
            }
            clWaitForEvents(1, &g[j].ev); /* (interrupted: still wait) */
            clReleaseEvent(g[j].ev);
        }
    }
    for (int k = 0; k < i && rc == 0; ++k) {
        if (evs[k] != NULL) {
            rc = gr_event_wait_intr(gr_device_get(b[k]->dev), evs[k], intr,
                                    ictx, st);
        } else if (gi[k] >= 0) {
            memcpy(dst[k], g[gi[k]].host + pos[k], n[k]);
        }
    }
    for (int j = 0; j < ng; ++j) {
        gr_block_put(g[j].tmp);
        free(g[j].host);
    }
    free(g);
    free(gi);
    free(pos);
    return rc;
}

int gr_block_fill(gr_block *b, size_t off, size_t n, const void *pat,
                  size_t plen, gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    int rc = -1;
    gr_lock();
    if (gr_device_open(d, st) == 0) {
        GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, b->mem, pat, plen, off,
                                            n, 0, NULL, NULL));
        rc = 0;
    }
fail:
    gr_unlock();
    return rc;
}

int gr_block_copy(gr_block *src, size_t soff, gr_block *dst, size_t doff,
                  size_t n, gr_status *st)
{
    gr_device *d = gr_device_get(dst->dev);
    int rc = -1;
    gr_lock();
    if (gr_device_open(d, st) == 0) {
        GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, src->mem, dst->mem, soff,
                                            doff, n, 0, NULL, NULL));
        rc = 0;
    }
fail:
    gr_unlock();
    return rc;
}

int gr_operand_copy(const gr_operand *src, const gr_operand *dst,
                    const gr_epilogue *epi, gr_status *st)
{
    ptrdiff_t ss[GR_MAXDIMS], ds[GR_MAXDIMS];
    gr_device *d = gr_device_get(dst->blk->dev);
    int rc = -1;
    if (elem_strides(src, ss) != 0 || elem_strides(dst, ds) != 0) {
        gr_status_kind(st, GR_E_VALUE, "misaligned device view");
        return -1;
    }
    gr_lock();
    if (gr_device_open(d, st) == 0) {
        rc = gr_copy_nd(d, src->blk->mem, src->t, src->off / isz_of(src->t),
                        dst->blk->mem, dst->t, dst->off / isz_of(dst->t),
                        dst->nd, dst->shape, ss, ds, epi, st);
    }
    gr_unlock();
    return rc;
}

int gr_device_finish(int dev, int (*intr)(void *), void *ictx, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    cl_event ev = NULL;
    int rc = -1;
    gr_lock();
    if (gr_device_open(d, st) != 0) {
        gr_unlock();
        return -1;
    }
    GR_CL_CHECK(st, clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &ev));
    clFlush(d->queue);
    gr_unlock();
    rc = gr_event_wait_intr(d, ev, intr, ictx, st);
    clReleaseEvent(ev);
    return rc;
fail:
    gr_unlock();
    return -1;
}

static int copy_bandwidth(int dev, size_t nbytes, int reps, double *ns,
                          gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    gr_block *a = NULL, *b = NULL;
    cl_event ev = NULL;
    int rc = -1;
    unsigned char zero = 0;
    gr_lock();
    if (gr_device_open(d, st) != 0 ||
        (a = gr_block_get(d, nbytes, st)) == NULL ||
        (b = gr_block_get(d, nbytes, st)) == NULL) {
        goto fail;
    }
    GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, a->mem, &zero, 1, 0, nbytes,
                                        0, NULL, NULL));
    for (int i = 0; i < reps; ++i) {
        cl_ulong t0 = 0, t1 = 0;
        GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, a->mem, b->mem, 0, 0,
                                            nbytes, 0, NULL, &ev));
        GR_CL_CHECK(st, clWaitForEvents(1, &ev));
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0,
                                NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                                NULL);
        ns[i] = (double)(t1 - t0);
        clReleaseEvent(ev);
        ev = NULL;
    }
    rc = 0;
fail:
    if (ev) clReleaseEvent(ev);
    gr_block_put(a);
    gr_block_put(b);
    gr_unlock();
    return rc;
}

int gr_copy_bandwidth(int dev, size_t nbytes, int reps, double *ns,
                      gr_status *st)
{
    if (gr_profile_begin(dev, st) != 0) {
        return -1;
    }
    int rc = copy_bandwidth(dev, nbytes, reps, ns, st);
    gr_profile_end(dev);
    return rc;
}

/* A gate for tests of asynchrony: the device's queue waits behind a user
 * event until gr_gate_open completes it.  Work enqueued meanwhile cannot
 * start, so a call that returns while the gate is shut did not wait. */
int gr_gate_shut(int dev, cl_event *gate, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    cl_int e = CL_SUCCESS;
    int rc = -1;
    *gate = NULL;
    gr_lock();
    if (gr_device_open(d, st) != 0) {
        goto fail;
    }
    *gate = clCreateUserEvent(d->ctx, &e);
    GR_CL_CHECK_AS(st, "clCreateUserEvent", e);
    GR_CL_CHECK(st, clEnqueueBarrierWithWaitList(d->queue, 1, gate, NULL));
    clFlush(d->queue);
    rc = 0;
fail:
    if (rc != 0 && *gate != NULL) {
        clSetUserEventStatus(*gate, CL_COMPLETE);
        clReleaseEvent(*gate);
        *gate = NULL;
    }
    gr_unlock();
    return rc;
}

void gr_gate_open(cl_event gate)
{
    if (gate != NULL) {
        clSetUserEventStatus(gate, CL_COMPLETE);
        clReleaseEvent(gate);
    }
}

/* 1 while commands enqueued on the device before this call are still
 * pending (a marker's status, no wait). */
int gr_device_busy(int dev, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    cl_event ev = NULL;
    cl_int s = CL_COMPLETE;
    int rc = -1;
    gr_lock();
    if (gr_device_open(d, st) != 0) {
        goto fail;
    }
    GR_CL_CHECK(st, clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &ev));
    clFlush(d->queue);
    GR_CL_CHECK(st, clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                   sizeof s, &s, NULL));
    rc = s != CL_COMPLETE;
fail:
    if (ev) clReleaseEvent(ev);
    gr_unlock();
    return rc;
}

/* Use the caller's context and queue (PyOpenCL's) for device dev: the
 * queue must belong to this device and be in order.  Memory of the old
 * context cannot meet kernels of the new one, so adoption is refused while
 * any of it is in use; the cache, the programs and the staging pool of the
 * old context are dropped. */
int gr_device_adopt(int dev, cl_command_queue q, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    cl_device_id qd = NULL;
    cl_context qc = NULL;
    cl_command_queue_properties props = 0;
    gr_pool_stats ps;
    int rc = -1;
    if (clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL) !=
            CL_SUCCESS ||
        clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL) !=
            CL_SUCCESS ||
        clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props,
                              NULL) != CL_SUCCESS) {
        gr_status_kind(st, GR_E_VALUE, "not an OpenCL command queue");
        return -1;
    }
    if (qd != d->id) {
        gr_status_kind(st, GR_E_VALUE, "the queue belongs to another device "
                       "than '%s'", d->name);
        return -1;
    }
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
        gr_status_kind(st, GR_E_VALUE, "gpured needs an in-order queue");
        return -1;
    }
    gr_lock();
    if (d->queue == q) {
        gr_unlock();
        return 0;
    }
    gr_pool_stats_get(d, &ps);
    if (ps.in_use_blocks > 0) {
        gr_status_kind(st, GR_E_VALUE, "device '%s' holds %ld arrays or "
                       "buffers of its own context: adopt a queue before "
                       "creating any (or release them)", d->name,
                       ps.in_use_blocks);
        goto done;
    }
    if (d->queue != NULL) {
        clFinish(d->queue);
    }
    gr_pool_empty(d);
    gr_stream_forget(d);
    gr_programs_forget(d);
    clRetainContext(qc);
    clRetainCommandQueue(q);
    /* The old context and queue are not released: kernels built for them
     * stay referenced by the forgotten program cache entries. */
    d->ctx = qc;
    __atomic_store_n(&d->queue, q, __ATOMIC_RELEASE);
    rc = 0;
done:
    gr_unlock();
    return rc;
}

/* Host access to a block of a CPU device (DLPack): a blocking map, after
 * everything enqueued before it; gr_block_unmap ends it. */
int gr_block_map(gr_block *b, void **ptr, gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    cl_int e = CL_SUCCESS;
    int rc = -1;
    gr_lock();
    if (gr_device_open(d, st) == 0) {
        *ptr = clEnqueueMapBuffer(d->queue, b->mem, CL_TRUE,
                                  CL_MAP_READ | CL_MAP_WRITE, 0, b->size, 0,
                                  NULL, NULL, &e);
        if (e != CL_SUCCESS) {
            st->call = "clEnqueueMapBuffer";
            st->err = e;
        } else {
            rc = 0;
        }
    }
    gr_unlock();
    return rc;
}

void gr_block_unmap(gr_block *b, void *ptr)
{
    gr_device *d = gr_device_get(b->dev);
    if (gr_forked()) {
        return;
    }
    gr_lock();
    clEnqueueUnmapMemObject(d->queue, b->mem, ptr, 0, NULL, NULL);
    clFlush(d->queue);
    gr_unlock();
}

/* Host memory [ptr, ptr + nbytes) as a block of a CPU device, in place
 * (CL_MEM_USE_HOST_PTR, from the 128-byte boundary below ptr: *lead bytes
 * before it); on_free(ctx) when the block goes.  NULL where the device
 * cannot use it in place (a GPU; or a failure: st set). */
gr_block *gr_block_from_host(int dev, void *ptr, size_t nbytes, size_t *lead,
                             void (*on_free)(void *), void *ctx,
                             gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    cl_int e = CL_SUCCESS;
    gr_block *b = NULL;
    const uintptr_t addr = (uintptr_t)ptr;
    *lead = addr % GR_ZC_ALIGN;
    gr_lock();
    if (gr_device_open(d, st) == 0 && !d->is_gpu) {
        cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                                  nbytes + *lead ? nbytes + *lead : 1,
                                  (void *)(addr - *lead), &e);
        if (e == CL_SUCCESS) {
            b = gr_block_wrap(d, m, nbytes + *lead, on_free, ctx, st);
            if (b == NULL) {
                clReleaseMemObject(m);
            }
        } else {
            st->call = "clCreateBuffer";
            st->err = e;
        }
    }
    gr_unlock();
    return b;
}

/* The device whose (opened) context is ctx, or -1. */
int gr_device_of_context(cl_context ctx)
{
    for (int i = 0; i < gr_device_count(); ++i) {
        gr_device *d = gr_device_get(i);
        if (d->ctx == ctx && ctx != NULL) {
            return i;
        }
    }
    return -1;
}

/* Wait for another queue of a device's context (PyOpenCL's) to finish
 * what it has before gpured uses its memory. */
int gr_queue_finish(cl_command_queue q, gr_status *st)
{
    cl_int e = clFinish(q);
    if (e != CL_SUCCESS) {
        st->call = "clFinish";
        st->err = e;
        return -1;
    }
    return 0;
}

/* The device a queue belongs to, or -1. */
int gr_device_of_queue(cl_command_queue q)
{
    cl_device_id qd = NULL;
    if (clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL) !=
        CL_SUCCESS) {
        return -1;
    }
    for (int i = 0; i < gr_device_count(); ++i) {
        if (gr_device_get(i)->id == qd) {
            return i;
        }
    }
    return -1;
}
