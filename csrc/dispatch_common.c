/*
 * gpured — dispatch layer, the hallway: what every family's driver uses.
 * Element strides and merged dims, reductions' M x L views of their input
 * (and where='s masks gathered alike), gathers and scatters of strided
 * host views, aligned host memory, uploads that do not wait (their host
 * copies freed once written: the deferred list), the interrupt check and
 * the device's lock (dp_dev_begin).  No family's code lives here.
 */

#include "dispatch_common.h"
#include "hostpar.h"

#include <pthread.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Element strides of an operand; -1 if one is not a multiple of the item
 * size (api.c copies such arrays first, so this is a safety net). */
int dp_elem_strides(const gr_operand *o, ptrdiff_t *es)
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
int dp_collapse(const size_t *shape, const ptrdiff_t *str, int n,
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

/* memcpy in blocks of GR_HOST_STOP_BYTES, Ctrl-C's check between (issue
 * 39: a 1-D view of 1 GiB is one inner row); -1 stopped. */
static int copy_blocks(char *dst, const char *src, size_t n)
{
    while (n > GR_HOST_STOP_BYTES) {
        memcpy(dst, src, GR_HOST_STOP_BYTES);
        dst += GR_HOST_STOP_BYTES;
        src += GR_HOST_STOP_BYTES;
        n -= GR_HOST_STOP_BYTES;
        if (gr_par_stopped()) {
            return -1;
        }
    }
    memcpy(dst, src, n);
    return 0;
}

/* Walk an N-d strided host view (byte strides) in C order, copying each
 * element between it and a C-contiguous buffer: gather (view -> buf) or
 * scatter (buf -> view).  A contiguous innermost dimension is one memcpy.
 * Ctrl-C's check after every GR_HOST_STOP_BYTES or so (issue 39): the
 * host path's copies of 1 GiB; stopped, the rest is not copied (the
 * call's result is dropped). */
static void host_walk(char *view, char *buf, int n, const size_t *shape,
                      const ptrdiff_t *bstr, size_t isz, int gather)
{
    size_t idx[GR_MAXDIMS] = {0};
    size_t since = 0; /* bytes since the last check */
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
            if (copy_blocks(gather ? buf : p, gather ? p : buf,
                            inner * isz) != 0) {
                return;
            }
            buf += inner * isz;
        } else {
            for (size_t i = 0; i < inner; ++i) {
                char *e = p + (ptrdiff_t)i * is;
                memcpy(gather ? buf : e, gather ? e : buf, isz);
                buf += isz;
            }
        }
        if ((since += inner * isz) >= GR_HOST_STOP_BYTES) {
            since = 0;
            if (gr_par_stopped()) {
                return;
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

void dp_host_gather(char *dst, const char *src, int n,
                    const size_t *shape, const ptrdiff_t *bstr,
                    size_t isz)
{
    host_walk((char *)src, dst, n, shape, bstr, isz, 1);
}

void dp_host_scatter(char *dst, const char *src, int n,
                     const size_t *shape, const ptrdiff_t *bstr,
                     size_t isz)
{
    host_walk(dst, (char *)src, n, shape, bstr, isz, 0);
}

/* 128-byte aligned host memory (PoCL uses it in place). */
void *dp_aligned_alloc_bytes(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, GR_ZC_ALIGN, n ? n : 1) != 0) {
        return NULL;
    }
    return p;
}

/* The request's interrupt check (req->interrupted) says stop?  Or a host
 * loop of this call has already seen it (the signal is consumed then:
 * the flag says it again). */
int dp_interrupted(const gr_request *req)
{
    return gr_par_stopped() ||
           (req->interrupted != NULL && req->interrupted(req->ictx));
}

/* The interruption as the call's error; -1. */
int dp_stop(gr_status *st)
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
 * in a list that later calls reap once the event is complete (the list
 * is every device's: its own mutex, innermost; issue 43).  No driver
 * callback frees it: the H100 whole suite stalled in 3 of 6 runs
 * inside reduceat's upload of 160 KB of offsets when a callback
 * did, the main thread running in the driver. */
typedef struct deferred {
    cl_event ev;
    void *p;
    struct deferred *next;
} deferred;
static deferred *deferred_list = NULL;
static pthread_mutex_t deferred_mu = PTHREAD_MUTEX_INITIALIZER;

static void deferred_reap(void) /* deferred_mu held */
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
void dp_deferred_add(cl_event ev, void *p)
{
    deferred *q = malloc(sizeof *q);
    pthread_mutex_lock(&deferred_mu);
    deferred_reap();
    if (q == NULL) {
        pthread_mutex_unlock(&deferred_mu);
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
        free(p);
        return;
    }
    q->ev = ev;
    q->p = p;
    q->next = deferred_list;
    deferred_list = q;
    pthread_mutex_unlock(&deferred_mu);
}

/* n bytes of cp (malloc'd; freed here, now or once written) into mem at
 * byte 0 without a wait; 0, or -1 with st set. */
int dp_upload_owned(gr_device *d, cl_mem mem, void *cp, size_t n,
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
    dp_deferred_add(ev, cp);
    return 0;
}

/* n bytes of src into mem (at byte 0) without a wait, from a copy. */
int dp_upload_nowait(gr_device *d, cl_mem mem, const void *src, size_t n,
                     gr_status *st)
{
    void *cp = malloc(n + 1);
    if (cp == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    memcpy(cp, src, n);
    return dp_upload_owned(d, mem, cp, n, st);
}

/* n bytes of m at off into dst, waited for without gr_lock and without an
 * interrupt check (runtime.c gr_read_wait). */
int dp_read_unlocked(gr_device *d, cl_mem m, size_t off, size_t n,
                     void *dst, gr_status *st)
{
    return gr_read_wait(d, m, off, n, dst, NULL, NULL, NULL, st);
}

/* Devices and their lock.  dev_begin opens the device under gr_lock. */
gr_device *dp_dev_begin(gr_request *req, gr_status *st)
{
    gr_device *d = gr_device_get(req->dev);
    gr_lock(d);
    if (gr_device_open(d, st) != 0) {
        if (req->dev == req->home_dev) {
            gr_unlock(d);
            return NULL;
        }
        /* placement moved it to a device that does not open: back home */
        free(st->log);
        memset(st, 0, sizeof *st);
        req->dev = req->home_dev;
        gr_unlock(d);
        return dp_dev_begin(req, st);
    }
    return d;
}

/* The shape of the non-unit dimensions of an operand: its geometry as the
 * output of M results (kept dims in order); byte strides -> elements. */
int dp_out_geometry(const gr_operand *o, size_t *shape, ptrdiff_t *str)
{
    ptrdiff_t es[GR_MAXDIMS];
    int n = 0;
    if (dp_elem_strides(o, es) != 0) {
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

/* ------------------------------------------------ reductions' views */

/* The request's input as kept and reduced dims (order-free operators:
 * by decreasing stride, none negative), M x L where memory allows (ok). */
void dp_red_view_of(const gr_request *req, red_view *v)
{
    const gr_operand *in = &req->in;
    ptrdiff_t es[GR_MAXDIMS];
    memset(v, 0, sizeof *v);
    if (dp_elem_strides(in, es) != 0) {
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
    v->ok = dp_collapse(v->kshape, v->kstr, v->nk, &M, &ss) &&
            dp_collapse(v->rshape, v->rstr, v->nr, &L, &est);
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
int dp_red_gather_dims(const red_view *v, size_t *shape, ptrdiff_t *str)
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

/* The C-contiguous element strides of shape[0..n) into cstr; the number
 * of elements. */
size_t dp_packed_strides(int n, const size_t *shape, ptrdiff_t *cstr)
{
    size_t count = 1;
    for (int i = n - 1; i >= 0; --i) {
        cstr[i] = (ptrdiff_t)count;
        count *= shape[i];
    }
    return count;
}

/* A packed (C-contiguous) result of type s on the device copied, cast to
 * t, into dst laid out by oshape / ostr from element doff (the device
 * outs of the reduction and exact drivers); epi as gr_copy_nd's. */
int dp_copy_packed(gr_device *d, cl_mem src, gr_dtype s, cl_mem dst,
                   gr_dtype t, size_t doff, int on, const size_t *oshape,
                   const ptrdiff_t *ostr, const gr_epilogue *epi,
                   gr_status *st)
{
    ptrdiff_t cstr[GR_MAXDIMS];
    if (on < 0) {
        gr_status_kind(st, GR_E_VALUE, "misaligned out");
        return -1;
    }
    dp_packed_strides(on, oshape, cstr);
    return gr_copy_nd(d, src, s, 0, dst, t, doff, on, oshape, cstr, ostr,
                      epi, st) != 0 ? -1 : 0;
}

/* The device elements of in at gbase + the gn-d gshape / gstr (elements)
 * copied, cast to t, into a new packed temporary *tmp (the drivers'
 * gathers, in (kept..., reduced...) order); cstr gets its strides. */
int dp_gather_device(gr_device *d, const gr_operand *in, ptrdiff_t gbase,
                     int gn, const size_t *gshape, const ptrdiff_t *gstr,
                     gr_dtype t, gr_block **tmp, ptrdiff_t *cstr,
                     gr_status *st)
{
    const size_t isz = isz_of(in->t);
    const size_t count = dp_packed_strides(gn, gshape, cstr);
    if ((*tmp = gr_block_get(d, count * isz_of(t), st)) == NULL) {
        return -1;
    }
    return gr_copy_nd(d, in->blk->mem, in->t,
                      (size_t)((ptrdiff_t)(in->off / isz) + gbase),
                      (*tmp)->mem, t, 0, gn, gshape, gstr, cstr, NULL,
                      st) != 0 ? -1 : 0;
}

/* The M x L elements a view reads from src, gathered into dst in
 * (kept..., reduced...) C order (the host path's copies). */
void dp_gather_rows(const red_view *v, const char *src, size_t isz,
                    char *dst)
{
    size_t gshape[GR_MAXDIMS];
    ptrdiff_t gstr[GR_MAXDIMS], bstr[GR_MAXDIMS];
    const int gn = dp_red_gather_dims(v, gshape, gstr);
    for (int i = 0; i < gn; ++i) {
        bstr[i] = gstr[i] * (ptrdiff_t)isz;
    }
    dp_host_gather(dst, src, gn, gshape, bstr, isz);
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
int dp_split_dims(const gr_operand *o, uint64_t axes, size_t *shape,
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

/* where= copies: M x L elements of `o` (dims split_dims) gathered into
 * dst, and the mask the same way into wdst (NULL: not wanted). */
void dp_gather_masked(const gr_request *req, char *dst, char *wdst)
{
    size_t shape[GR_MAXDIMS];
    ptrdiff_t bstr[GR_MAXDIMS];
    int n = dp_split_dims(&req->in, req->axes, shape, bstr);
    if (dst != NULL) {
        dp_host_gather(dst, req->in.host, n, shape, bstr,
                       isz_of(req->in.t));
    }
    if (wdst != NULL) {
        n = dp_split_dims(&req->mask, req->axes, shape, bstr);
        dp_host_gather(wdst, req->mask.host, n, shape, bstr,
                       isz_of(req->mask.t));
    }
}

/* ------------------------------------------- a request's references */

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
    free(res->bk.host[0]);
    free(res->bk.host[1]);
    res->bk.host[0] = res->bk.host[1] = NULL;
}
