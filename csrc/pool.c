/*
 * gpured — the per-device caching allocator.
 *
 * Creating and releasing an OpenCL buffer per call costs microseconds on
 * GPU drivers and can make the host wait for the device (measured on the
 * H100 with PyOpenCL: copying 1 GiB into a reused buffer 0.712 ms, into a
 * buffer made and released per call 1.779 ms; a tiny kernel writing a
 * reused 16-byte buffer 13.5 us per call, a fresh one 23.2 us).  So every
 * temporary, partial and result of gpured comes from here.
 *
 * A block is one cl_mem whose size is a size class: 256 bytes, or the next
 * of 2^k x {1, 1.25, 1.5, 1.75} (at most 25% unused).  Blocks are counted
 * references.  When the last reference goes the block joins its device's
 * free list for that class at once -- the stream-ordered rule of CuPy's
 * pool and torch's caching allocator: every use of a block is enqueued on
 * the device's one in-order queue while a reference is held, so the next
 * user's commands, enqueued later on the same queue, run after them.  No
 * host wait is ever needed for reuse.  (Blocks never meet the staging
 * pool's copy queue, whose writes the host waits for.)
 *
 *   free lists:  class 0 [256 B] -> blk -> blk
 *                class 9 [5 KiB] -> blk
 *                ...
 *
 * Cached (free) bytes are capped per device (a quarter of its memory by
 * default, gpured.set_memory_limit); past the cap a freed block is
 * released.  An allocation the driver refuses empties the cache and is
 * tried once more.  gpured.memory_info() shows the counters,
 * gpured.empty_cache() releases what is cached.
 */
#include "gpured.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NCLASSES 200
#define MIN_BLOCK 256

typedef struct gr_pool {
    pthread_mutex_t mu;
    gr_block *free[NCLASSES];
    gr_pool_stats s;
} gr_pool;

static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;

/* Size class of n bytes and its size: 256, then 2^k x (4 + j) / 4. */
static int class_of(size_t n, size_t *size)
{
    if (n <= MIN_BLOCK) {
        *size = MIN_BLOCK;
        return 0;
    }
    int k = 8;
    while (k < 62 && ((size_t)1 << (k + 1)) < n) {
        ++k;
    }
    /* 2^k < n <= 2^(k+1): quarters of 2^k above 2^k. */
    const size_t base = (size_t)1 << k, q = base / 4;
    int j = 1;
    while (j < 4 && base + (size_t)j * q < n) {
        ++j;
    }
    *size = base + (size_t)j * q;
    int c = 1 + (k - 8) * 4 + (j - 1);
    return c < NCLASSES ? c : -1; /* -1: too large to cache */
}

static gr_pool *pool_of(gr_device *d)
{
    if (d->pool == NULL) {
        pthread_mutex_lock(&create_mu);
        if (d->pool == NULL) {
            gr_pool *p = calloc(1, sizeof *p);
            if (p != NULL) {
                pthread_mutex_init(&p->mu, NULL);
                p->s.limit_bytes = (size_t)(d->global_mem / 4);
                if (p->s.limit_bytes < ((size_t)64 << 20)) {
                    p->s.limit_bytes = (size_t)64 << 20;
                }
                __atomic_store_n(&d->pool, p, __ATOMIC_RELEASE);
            }
        }
        pthread_mutex_unlock(&create_mu);
    }
    return __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE);
}

/* Release every cached block of p (p->mu held): the cl_mems are returned
 * in *list for release outside the lock. */
static gr_block *take_all(gr_pool *p)
{
    gr_block *all = NULL;
    for (int c = 0; c < NCLASSES; ++c) {
        while (p->free[c] != NULL) {
            gr_block *b = p->free[c];
            p->free[c] = b->next;
            b->next = all;
            all = b;
            p->s.cached_bytes -= b->size;
            p->s.cached_blocks--;
        }
    }
    return all;
}

static void release_list(gr_block *b)
{
    while (b != NULL) {
        gr_block *next = b->next;
        clReleaseMemObject(b->mem);
        free(b);
        b = next;
    }
}

gr_block *gr_block_get(gr_device *d, size_t nbytes, gr_status *st)
{
    size_t size = 0;
    gr_pool *p = pool_of(d);
    if (p == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory (device pool)");
        return NULL;
    }
    int c = class_of(nbytes ? nbytes : 1, &size);
    if (c < 0) {
        size = nbytes;
    }
    if (d->max_alloc != 0 && nbytes > d->max_alloc) {
        gr_status_kind(st, GR_E_MEMORY,
                       "cannot allocate %zu bytes on device '%s': its largest "
                       "buffer is %llu bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE), "
                       "its memory %llu bytes", nbytes, d->name,
                       (unsigned long long)d->max_alloc,
                       (unsigned long long)d->global_mem);
        return NULL;
    }
    if (d->max_alloc != 0 && size > d->max_alloc) {
        size = nbytes; /* the class would not fit: exactly what is asked */
        c = -1;
    }
    pthread_mutex_lock(&p->mu);
    if (c >= 0 && p->free[c] != NULL) {
        gr_block *b = p->free[c];
        p->free[c] = b->next;
        p->s.cached_bytes -= b->size;
        p->s.cached_blocks--;
        p->s.in_use_bytes += b->size;
        p->s.in_use_blocks++;
        p->s.reuses++;
        pthread_mutex_unlock(&p->mu);
        b->next = NULL;
        b->refs = 1;
        return b;
    }
    pthread_mutex_unlock(&p->mu);

    gr_block *b = calloc(1, sizeof *b);
    if (b == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return NULL;
    }
    cl_int err = CL_SUCCESS;
    for (int attempt = 0; attempt < 2; ++attempt) {
        b->mem = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, size, NULL, &err);
        if (err == CL_SUCCESS) {
            break;
        }
        /* The driver refused: give back what is cached, then once more. */
        pthread_mutex_lock(&p->mu);
        gr_block *all = take_all(p);
        pthread_mutex_unlock(&p->mu);
        if (all == NULL) {
            break;
        }
        release_list(all);
    }
    if (err != CL_SUCCESS) {
        free(b);
        if (err == CL_INVALID_BUFFER_SIZE ||
            err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
            err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY) {
            gr_status_kind(st, GR_E_MEMORY,
                           "cannot allocate %zu bytes on device '%s' (%s); "
                           "its largest buffer is %llu bytes, its memory "
                           "%llu bytes", nbytes, d->name,
                           gr_cl_error_name(err),
                           (unsigned long long)d->max_alloc,
                           (unsigned long long)d->global_mem);
        } else {
            st->call = "clCreateBuffer";
            st->err = err;
        }
        return NULL;
    }
    b->size = size;
    b->dev = d->index;
    b->refs = 1;
    pthread_mutex_lock(&p->mu);
    p->s.in_use_bytes += size;
    p->s.in_use_blocks++;
    p->s.allocs++;
    pthread_mutex_unlock(&p->mu);
    return b;
}

void gr_block_retain(gr_block *b)
{
    __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
}

void gr_block_put(gr_block *b)
{
    if (b == NULL || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }
    gr_device *d = gr_device_get(b->dev);
    gr_pool *p = d->pool;
    size_t size = 0;
    int c = class_of(b->size, &size);
    int keep = 0;
    pthread_mutex_lock(&p->mu);
    p->s.in_use_bytes -= b->size;
    p->s.in_use_blocks--;
    if (c >= 0 && size == b->size && !gr_forked() && !b->no_cache &&
        p->s.cached_bytes + b->size <= p->s.limit_bytes) {
        b->next = p->free[c];
        p->free[c] = b;
        p->s.cached_bytes += b->size;
        p->s.cached_blocks++;
        keep = 1;
    } else {
        p->s.frees++;
    }
    pthread_mutex_unlock(&p->mu);
    if (!keep) {
        if (!gr_forked()) {
            clReleaseMemObject(b->mem);
        }
        if (b->on_free != NULL) {
            b->on_free(b->on_free_ctx);
        }
        free(b);
    }
}

gr_block *gr_block_wrap(gr_device *d, cl_mem mem, size_t size,
                        void (*on_free)(void *), void *ctx, gr_status *st)
{
    gr_pool *p = pool_of(d);
    gr_block *b = p ? calloc(1, sizeof *b) : NULL;
    if (b == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return NULL;
    }
    b->mem = mem;
    b->size = size;
    b->dev = d->index;
    b->refs = 1;
    b->no_cache = 1;
    b->on_free = on_free;
    b->on_free_ctx = ctx;
    pthread_mutex_lock(&p->mu);
    p->s.in_use_bytes += size;
    p->s.in_use_blocks++;
    pthread_mutex_unlock(&p->mu);
    return b;
}

void gr_pool_stats_get(gr_device *d, gr_pool_stats *s)
{
    gr_pool *p = pool_of(d);
    memset(s, 0, sizeof *s);
    if (p != NULL) {
        pthread_mutex_lock(&p->mu);
        *s = p->s;
        pthread_mutex_unlock(&p->mu);
    }
}

void gr_pool_empty(gr_device *d)
{
    gr_pool *p = pool_of(d);
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    gr_block *all = take_all(p);
    p->s.frees += 0;
    pthread_mutex_unlock(&p->mu);
    release_list(all);
}

void gr_pool_set_limit(gr_device *d, size_t bytes)
{
    gr_pool *p = pool_of(d);
    gr_block *all = NULL;
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->s.limit_bytes = bytes;
    if (p->s.cached_bytes > bytes) {
        all = take_all(p);
    }
    pthread_mutex_unlock(&p->mu);
    release_list(all);
}
