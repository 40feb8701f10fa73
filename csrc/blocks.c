/*
 * gpured — dispatch layer, byte operations: reads, writes, fills and
 * copies of device blocks (gr_blocks_read: many small reads gathered per
 * device), device readiness, finish, busy and gate (tests of asynchrony),
 * queue adoption (PyOpenCL), maps and host memory as CPU blocks.
 */

#include "dispatch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gr_device_ready(int dev, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    if (__atomic_load_n(&d->queue, __ATOMIC_ACQUIRE) != NULL && !gr_forked()) {
        return 0;
    }
    gr_lock(d);
    int rc = gr_device_open(d, st);
    gr_unlock(d);
    return rc;
}

int gr_block_write(gr_block *b, size_t off, const void *src, size_t n,
                   gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        rc = gr_stream_write(d, b->mem, off, src, n, st);
    }
    gr_unlock(d);
    return rc;
}

int gr_block_read(gr_block *b, size_t off, void *dst, size_t n,
                  int (*intr)(void *), void *ictx, cl_event *pending,
                  gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        rc = gr_read_wait(d, b->mem, off, n, dst, intr, ictx, pending,
                                st);
    }
    gr_unlock(d);
    return rc;
}

/* Reads of many blocks at once (gpured.dask's partials).  A device's
 * small reads (<= GATHER_MAX bytes each, two or more) are gathered on the
 * device (a copy each into one block) and read back once, into the
 * device's pinned small-read memory where it fits and is free: NVIDIA's
 * read into pageable host memory costs ~20 us even enqueued without
 * blocking, and ends up to 0.2 ms after the GPU, a copy between buffers a
 * few us.  Other reads are enqueued as they are.
 * Each device's reads are enqueued under its own lock (one at a time),
 * its queue flushed, then each read waited for with no lock held.
 * evs[i] gets a direct read's event (NULL for gathered ones: those are
 * waited for here, uninterrupted, before return); the caller
 * releases the events, or keeps the host memory of those not complete
 * (an interruption, a failure) alive until they are. */
#define GATHER_MAX 65536

typedef struct {
    int dev, items;
    size_t bytes;
    gr_block *tmp;
    unsigned char *host;
    int pinned; /* host is the device's small-read memory (gr_small_take) */
    cl_event ev;
} gather;

/* One gr_blocks_read's state: the arguments, the gathers (one per
 * device), each read's gather (gi, -1: direct) and place in it (pos),
 * and how many reads were enqueued (i). */
typedef struct {
    int count;
    gr_block *const *b;
    const size_t *off;
    void *const *dst;
    const size_t *n;
    cl_event *evs;
    gr_status *st;
    gather *g;
    int *gi;
    size_t *pos;
    int ng, i;
} blocks_call;

/* The gathers: the small reads of each device, where it has two or more
 * (alone on its device: read directly). */
static void blocks_group(blocks_call *c)
{
    gather *g = c->g;
    for (int i = 0; i < c->count; ++i) {
        c->evs[i] = NULL;
        c->gi[i] = -1;
        if (c->n[i] > GATHER_MAX) {
            continue;
        }
        int j = 0;
        while (j < c->ng && g[j].dev != c->b[i]->dev) {
            ++j;
        }
        if (j == c->ng) {
            g[c->ng++].dev = c->b[i]->dev;
        }
        c->gi[i] = j;
        c->pos[i] = g[j].bytes;
        g[j].bytes += (c->n[i] + 7) & ~(size_t)7;
        g[j].items++;
    }
    for (int i = 0; i < c->count; ++i) {
        if (c->gi[i] >= 0 && g[c->gi[i]].items < 2) {
            c->gi[i] = -1;
        }
    }
}

/* Device dev's gather, if it has one: its host memory and device block
 * (dev's lock held). */
static int blocks_open(blocks_call *c, int dev)
{
    gr_status *st = c->st;
    gr_device *d = gr_device_get(dev);
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    for (int j = 0; j < c->ng; ++j) {
        gather *g = &c->g[j];
        if (g->dev != dev || g->items < 2) {
            continue;
        }
        /* pinned where it fits: NVIDIA's read into pageable memory ended
         * 0.1-0.2 ms after the GPU (two H200s' Dask partials, 16 GiB) */
        if (g->bytes <= GR_SMALL_READ &&
            (g->host = gr_small_take(d)) != NULL) {
            g->pinned = 1;
        }
        if ((g->host == NULL && (g->host = malloc(g->bytes)) == NULL) ||
            (g->tmp = gr_block_get(d, g->bytes, st)) == NULL) {
            if (st->call == NULL && st->kind == 0) {
                gr_status_kind(st, GR_E_MEMORY, "out of host memory");
            }
            return -1;
        }
    }
    return 0;
}

/* Device dev's reads enqueued (its lock held): a copy into its gather,
 * or a read of its own; then the gather's read, and a flush. */
static int blocks_enqueue(blocks_call *c, int dev)
{
    gr_status *st = c->st;
    gr_device *d = gr_device_get(dev);
    int rc = 0;
    for (int i = 0; i < c->count && rc == 0; ++i) {
        const int k = c->gi[i];
        cl_int e;
        if (c->b[i]->dev != dev) {
            continue;
        }
        if (k >= 0) {
            e = clEnqueueCopyBuffer(d->queue, c->b[i]->mem, c->g[k].tmp->mem,
                                    c->off[i], c->pos[i], c->n[i], 0, NULL,
                                    NULL);
        } else {
            e = clEnqueueReadBuffer(d->queue, c->b[i]->mem, CL_FALSE,
                                    c->off[i], c->n[i], c->dst[i], 0, NULL,
                                    &c->evs[i]);
            if (e != CL_SUCCESS) {
                c->evs[i] = NULL;
            }
        }
        if (e != CL_SUCCESS) {
            st->call = k >= 0 ? "clEnqueueCopyBuffer" : "clEnqueueReadBuffer";
            st->err = e;
            rc = -1;
        }
    }
    for (int j = 0; j < c->ng && rc == 0; ++j) {
        gather *g = &c->g[j];
        if (g->dev == dev && g->tmp != NULL) {
            cl_int e = clEnqueueReadBuffer(d->queue, g->tmp->mem, CL_FALSE, 0,
                                           g->bytes, g->host, 0, NULL, &g->ev);
            if (e != CL_SUCCESS) {
                g->ev = NULL;
                st->call = "clEnqueueReadBuffer";
                st->err = e;
                rc = -1;
            }
        }
    }
    clFlush(d->queue);
    return rc;
}

/* Every device's part, one device's lock at a time in index order (the
 * lock order: runtime.c), so that reading Dask partials of two GPUs never
 * holds both; c->i: how many reads the waits look at (all, or none after
 * a failure: the events enqueued are the caller's still). */
static int blocks_enqueue_all(blocks_call *c)
{
    int rc = 0, dev = -1;
    for (;;) {
        int next = -1; /* the lowest device index above dev */
        for (int i = 0; i < c->count; ++i) {
            const int di = c->b[i]->dev;
            if (di > dev && (next < 0 || di < next)) {
                next = di;
            }
        }
        if (next < 0 || rc != 0) {
            break;
        }
        dev = next;
        gr_device *d = gr_device_get(dev);
        gr_lock(d);
        rc = blocks_open(c, dev);
        if (rc == 0) {
            rc = blocks_enqueue(c, dev);
        }
        gr_unlock(d);
    }
    c->i = rc == 0 ? c->count : 0;
    return rc;
}

/* The waits without a device lock: gathers first (none left pending, even when
 * interrupted), then the direct reads, the gathered bytes copied out. */
static int blocks_wait(blocks_call *c, int rc, int (*intr)(void *),
                       void *ictx)
{
    for (int j = 0; j < c->ng; ++j) {
        gather *g = &c->g[j];
        if (g->ev != NULL) {
            if (rc == 0) {
                rc = gr_event_wait_intr(gr_device_get(g->dev), g->ev, intr,
                                        ictx, c->st);
            }
            clWaitForEvents(1, &g->ev); /* (interrupted: still wait) */
            clReleaseEvent(g->ev);
        }
    }
    for (int k = 0; k < c->i && rc == 0; ++k) {
        if (c->evs[k] != NULL) {
            rc = gr_event_wait_intr(gr_device_get(c->b[k]->dev), c->evs[k],
                                    intr, ictx, c->st);
        } else if (c->gi[k] >= 0) {
            memcpy(c->dst[k], c->g[c->gi[k]].host + c->pos[k], c->n[k]);
        }
    }
    return rc;
}

int gr_blocks_read(int count, gr_block *const *b, const size_t *off,
                   void *const *dst, const size_t *n, int (*intr)(void *),
                   void *ictx, cl_event *evs, gr_status *st)
{
    blocks_call c = {count, b, off, dst, n, evs, st};
    int rc = 0;
    c.g = calloc((size_t)count + 1, sizeof *c.g);
    c.gi = malloc(((size_t)count + 1) * sizeof *c.gi);
    c.pos = malloc(((size_t)count + 1) * sizeof *c.pos);
    if (c.g == NULL || c.gi == NULL || c.pos == NULL) {
        free(c.g);
        free(c.gi);
        free(c.pos);
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    blocks_group(&c);
    rc = blocks_enqueue_all(&c);
    rc = blocks_wait(&c, rc, intr, ictx);
    for (int j = 0; j < c.ng; ++j) {
        gr_block_put(c.g[j].tmp);
        if (c.g[j].pinned) {
            /* (a gather's read is always waited for: blocks_wait) */
            gr_small_give(gr_device_get(c.g[j].dev), NULL);
        } else {
            free(c.g[j].host);
        }
    }
    free(c.g);
    free(c.gi);
    free(c.pos);
    return rc;
}

int gr_block_fill(gr_block *b, size_t off, size_t n, const void *pat,
                  size_t plen, gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, b->mem, pat, plen, off,
                                            n, 0, NULL, NULL));
        rc = 0;
    }
fail:
    gr_unlock(d);
    return rc;
}

int gr_block_copy(gr_block *src, size_t soff, gr_block *dst, size_t doff,
                  size_t n, gr_status *st)
{
    gr_device *d = gr_device_get(dst->dev);
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, src->mem, dst->mem, soff,
                                            doff, n, 0, NULL, NULL));
        rc = 0;
    }
fail:
    gr_unlock(d);
    return rc;
}

int gr_operand_copy(const gr_operand *src, const gr_operand *dst,
                    const gr_epilogue *epi, gr_status *st)
{
    ptrdiff_t ss[GR_MAXDIMS], ds[GR_MAXDIMS];
    gr_device *d = gr_device_get(dst->blk->dev);
    int rc = -1;
    if (dp_elem_strides(src, ss) != 0 || dp_elem_strides(dst, ds) != 0) {
        gr_status_kind(st, GR_E_VALUE, "misaligned device view");
        return -1;
    }
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        rc = gr_copy_nd(d, src->blk->mem, src->t, src->off / isz_of(src->t),
                        dst->blk->mem, dst->t, dst->off / isz_of(dst->t),
                        dst->nd, dst->shape, ss, ds, epi, st);
    }
    gr_unlock(d);
    return rc;
}

int gr_device_finish(int dev, int (*intr)(void *), void *ictx, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    cl_event ev = NULL;
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) != 0) {
        gr_unlock(d);
        return -1;
    }
    GR_CL_CHECK(st, clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &ev));
    clFlush(d->queue);
    gr_unlock(d);
    rc = gr_event_wait_intr(d, ev, intr, ictx, st);
    clReleaseEvent(ev);
    return rc;
fail:
    gr_unlock(d);
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
    gr_lock(d);
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
    gr_unlock(d);
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
    gr_lock(d);
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
    gr_unlock(d);
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
    gr_lock(d);
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
    gr_unlock(d);
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
    gr_lock(d);
    if (d->queue == q) {
        gr_unlock(d);
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
    gr_unlock(d);
    return rc;
}

/* Host access to a block of a CPU device (DLPack): a blocking map, after
 * everything enqueued before it; gr_block_unmap ends it. */
int gr_block_map(gr_block *b, void **ptr, gr_status *st)
{
    gr_device *d = gr_device_get(b->dev);
    cl_int e = CL_SUCCESS;
    int rc = -1;
    gr_lock(d);
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
    gr_unlock(d);
    return rc;
}

void gr_block_unmap(gr_block *b, void *ptr)
{
    gr_device *d = gr_device_get(b->dev);
    if (gr_forked()) {
        return;
    }
    gr_lock(d);
    clEnqueueUnmapMemObject(d->queue, b->mem, ptr, 0, NULL, NULL);
    clFlush(d->queue);
    gr_unlock(d);
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
    gr_lock(d);
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
    gr_unlock(d);
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
