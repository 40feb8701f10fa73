/*
 * gpured — the pipelined host path: pinned staging buffers.
 *
 * A NumPy array lives in pageable memory, which a GPU's DMA engine cannot
 * read: a plain clEnqueueWriteBuffer goes through the driver's own bounce
 * buffer at 7-10 GB/s on the H100 host.  Here the array is cut into chunks
 * that pass through a small pool of pinned buffers (CL_MEM_ALLOC_HOST_PTR,
 * mapped once), three stages overlapping on two queues:
 *
 *      host threads        copy queue             compute queue
 *   memcpy k+1 -> pin[s'] | write pin[s] -> dev[s] | reduce dev[s-1] ...
 *
 * chunk k uses slot s = k % nbuf.  Before its memcpy, the host waits for
 * the write that last read pin[s] (chunk k - nbuf); the write into dev[s]
 * waits (event) for the kernel that last read dev[s]; the kernel waits for
 * the write.  Staging memory is bounded by nbuf x chunk pinned bytes (and
 * as much device memory for reductions), whatever the input's size, so an
 * input larger than the device's memory still reduces.  The memcpy into
 * pinned memory runs on several threads: one thread copies at about the
 * pageable DMA rate, which is what this path is for beating.
 *
 * Host memory used again and again is registered instead (below): on
 * NVIDIA's OpenCL its copies then run at the DMA rate, straight from the
 * NumPy array, with no staging copy.
 *
 * Everything here is called with the device's lock held (gr_lock(d))
 * and without the GIL.  Each device's pool belongs to one stream at a
 * time (busy; pool_get waits for it on d->cv with d's lock released), and
 * its host-side waits (a slot's previous write, the staging memcpy, the
 * end of a stream) run without the lock: two threads stream to two GPUs
 * at once (issue 16), or one streams while the other reduces on the CPU
 * device.  pools[i] and its busy flag are device i's (its lock); the
 * settings are everyone's: gr_stream_set_cfg takes every device's lock
 * (in index order: runtime.c's lock map) and waits for each pool idle.
 */
#include "gpured.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 16

/* Settings (gpured.set_staging); read under any device's lock, written
 * under all of them. */
static gr_stream_cfg cfg = {
    64u << 20, /* chunk bytes: 64 MiB                                      */
    4,         /* slots: 256 MiB pinned                                    */
    16u << 20, /* inputs from 16 MiB up stream on GPUs                     */
    0,         /* force: also on CPU devices (tests)                       */
    0,         /* memcpy threads (0: min(online CPUs, 16))                  */
    GR_REG_AUTO, /* register host memory used again: on NVIDIA GPUs        */
};

typedef struct {
    gr_device *d;
    size_t chunk;
    int nbuf;
    cl_command_queue copyq;
    cl_mem pin[GR_STREAM_SLOTS];
    void *pin_ptr[GR_STREAM_SLOTS];
    cl_mem dev[GR_STREAM_SLOTS];      /* device chunks (reductions), lazily      */
    cl_mem pout[GR_STREAM_SLOTS];     /* pinned buffers for results, lazily      */
    void *pout_ptr[GR_STREAM_SLOTS];
    cl_event written[GR_STREAM_SLOTS];
    cl_event consumed[GR_STREAM_SLOTS];
    int reg[GR_STREAM_SLOTS];         /* registration written[s] reads, or -1    */
    int busy;                   /* a stream holds it (d's lock)            */
} pool;

static pool *pools[64];     /* pools[i]: device i's (its lock)          */
/* Statistics: atomics (streams of several devices count at once). */
static long stat_streams, stat_chunks, stat_direct;
static int stat_busy; /* pools busy now                                   */
static int stat_peak; /* the most pools busy at once                      */

static void stat_add(long *c, long n)
{
    __atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* ------------------------------------------------ registered host memory
 * NVIDIA's OpenCL page-locks the host memory a CL_MEM_USE_HOST_PTR buffer
 * wraps, and while that buffer lives, copies from or to any part of the
 * memory run at the DMA rate.  H100 host, 1 GiB (benchmarks/exp/hostreg.py,
 * hostreg2.py): registering 24.8-28.8 ms, a write from registered memory
 * 19.6 ms (54 GB/s), from pageable memory 115-130 ms, through the staging
 * pool ~35 ms; releasing the buffer unlocks the memory (25.6 ms) and
 * copies are pageable again; a new array at the same address then copies
 * its own data.  A copy of a range only part of which is registered runs
 * at the pageable rate.  The lock is the driver's, not the context's:
 * memory registered through one GPU's context copies at the DMA rate to
 * the other GPU too, and two GPUs pulling from it at once took 10.5 ms
 * for 512 MiB each (nvidia-h100-x2, benchmarks/exp/hostreg_2gpu.py), so a
 * registration serves every eligible device of its platform.  A range
 * longer than the device's largest buffer is registered in pieces of at
 * most that size (whole GiB), a chunk crossing two pieces is staged.
 *
 * api.c offers the memory of NumPy arrays it has seen in several calls
 * (their owner alive: it withdraws the offer when the owner dies, before
 * NumPy frees the memory) and stage() registers an offered range the first
 * time it streams from it to an eligible device.  At most REG_MAX ranges
 * and half of the host's memory are registered at once (a 64 GiB array on a
 * 256 GiB host: issue 16's two-GPU benchmark).  The table has its own
 * lock (offers come with the GIL, stage() with a device's lock).  A
 * write from registered memory counts as a user of its entry until the
 * write is settled; releasing an entry that has users only marks it
 * (REG_RELEASING: no new stream uses it) and the last user releases it. */
#define REG_MAX 16
#define REG_PIECES 16
enum { REG_FREE, REG_OFFERED, REG_PINNED, REG_FAILED, REG_RELEASING };
static struct {
    char *base;
    size_t len;
    int state;
    int users;                 /* writes in flight reading it directly    */
    unsigned long stamp;       /* its last use (reg_clock)                */
    int then;                  /* REG_RELEASING: REG_FREE or REG_OFFERED  */
    gr_device *d;              /* the device it was registered through    */
    size_t piece;              /* bytes per piece (the last one: the rest) */
    int npieces;
    cl_mem mem[REG_PIECES];
} regs[REG_MAX];
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long reg_clock;

int gr_stream_peak(void)
{
    return __atomic_load_n(&stat_peak, __ATOMIC_RELAXED);
}

void gr_stream_get_cfg(gr_stream_cfg *c, long *streams, long *chunks)
{
    *c = cfg;
    *streams = __atomic_load_n(&stat_streams, __ATOMIC_RELAXED);
    *chunks = __atomic_load_n(&stat_chunks, __ATOMIC_RELAXED);
}

/* Ranges registered now and their bytes (reg_mu held). */
static size_t reg_pinned(int *count)
{
    size_t bytes = 0;
    *count = 0;
    for (int i = 0; i < REG_MAX; ++i) {
        if (regs[i].state == REG_PINNED || regs[i].state == REG_RELEASING) {
            ++*count;
            bytes += regs[i].len;
        }
    }
    return bytes;
}

void gr_hostreg_stats(long *direct, int *pinned, size_t *pinned_bytes)
{
    pthread_mutex_lock(&reg_mu);
    *direct = __atomic_load_n(&stat_direct, __ATOMIC_RELAXED);
    *pinned_bytes = reg_pinned(pinned);
    pthread_mutex_unlock(&reg_mu);
}

static void reg_retry_failed(void) /* reg_mu held */
{
    for (int i = 0; i < REG_MAX; ++i) {
        if (regs[i].state == REG_FAILED) {
            regs[i].state = REG_OFFERED; /* it may fit now: try again */
        }
    }
}

static void reg_unpin(int i) /* reg_mu held; no users */
{
    for (int k = 0; k < regs[i].npieces; ++k) {
        if (regs[i].mem[k] != NULL) {
            clReleaseMemObject(regs[i].mem[k]);
        }
        regs[i].mem[k] = NULL;
    }
    regs[i].npieces = 0;
    regs[i].d = NULL;
    if (regs[i].state != REG_FREE) {
        regs[i].state = REG_OFFERED;
    }
}

/* Entry i released now, or by its last user: then REG_FREE (withdrawn)
 * or REG_OFFERED (unregistered only).  reg_mu held. */
static void reg_release(int i, int then)
{
    if (regs[i].users > 0) {
        if (regs[i].state != REG_RELEASING || then == REG_FREE) {
            regs[i].then = then; /* a withdrawal stands */
        }
        regs[i].state = REG_RELEASING;
        return;
    }
    const int was_pinned = regs[i].state == REG_PINNED ||
                           regs[i].state == REG_RELEASING;
    reg_unpin(i);
    if (then == REG_FREE) {
        regs[i].state = REG_FREE;
        regs[i].base = NULL;
        regs[i].len = 0;
    }
    if (was_pinned) {
        reg_retry_failed();
    }
}

/* A write that read entry i directly is settled (any thread). */
static void reg_unuse(int i)
{
    if (i < 0) {
        return;
    }
    pthread_mutex_lock(&reg_mu);
    if (--regs[i].users == 0 && regs[i].state == REG_RELEASING) {
        reg_release(i, regs[i].then);
    }
    pthread_mutex_unlock(&reg_mu);
}

int gr_hostreg_offer(void *base, size_t len)
{
    int id = -1;
    pthread_mutex_lock(&reg_mu);
    for (int i = 0; i < REG_MAX && id < 0; ++i) {
        if (regs[i].state != REG_FREE && regs[i].state != REG_RELEASING &&
            regs[i].base == base && regs[i].len == len) {
            id = i;
        }
    }
    for (int i = 0; i < REG_MAX && id < 0; ++i) {
        if (regs[i].state == REG_FREE) {
            regs[i].base = base;
            regs[i].len = len;
            regs[i].state = REG_OFFERED;
            id = i;
        }
    }
    pthread_mutex_unlock(&reg_mu);
    return id;
}

void gr_hostreg_withdraw(int id)
{
    if (id < 0 || id >= REG_MAX) {
        return;
    }
    pthread_mutex_lock(&reg_mu);
    if (regs[id].state != REG_FREE) {
        reg_release(id, REG_FREE);
    }
    pthread_mutex_unlock(&reg_mu);
}

static void reg_unpin_device(const gr_device *d) /* reg_mu inside */
{
    pthread_mutex_lock(&reg_mu);
    for (int i = 0; i < REG_MAX; ++i) {
        if (regs[i].state == REG_FAILED) {
            regs[i].state = REG_OFFERED;
        } else if (regs[i].state == REG_PINNED &&
                   (d == NULL || regs[i].d->platform == d->platform)) {
            reg_release(i, REG_OFFERED);
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

static int reg_eligible(const gr_device *d)
{
    return cfg.reg == GR_REG_ALWAYS ||
           (cfg.reg == GR_REG_AUTO && d->is_gpu && d->nvidia_ptx);
}

/* A byte count from the environment (tests), or 0. */
static size_t env_bytes(const char *name)
{
    const char *env = getenv(name);
    return env != NULL ? (size_t)strtoull(env, NULL, 10) : 0;
}

static size_t reg_cap(void)
{
    if (env_bytes("GPURED_REG_CAP_BYTES") > 0) {
        return env_bytes("GPURED_REG_CAP_BYTES");
    }
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz / 2
                                : (size_t)4 << 30;
}

/* Register entry i through d: its pieces of at most d's largest buffer
 * (GPURED_REG_PIECE_BYTES, for tests, makes them smaller).  reg_mu held. */
static void reg_pin(int i, gr_device *d)
{
    size_t piece = (size_t)d->max_alloc;
    int count;
    size_t used = reg_pinned(&count);
    cl_int err = CL_SUCCESS;
    if (env_bytes("GPURED_REG_PIECE_BYTES") > 0) {
        piece = env_bytes("GPURED_REG_PIECE_BYTES");
    } else if (piece >= ((size_t)1 << 30)) {
        piece &= ~(((size_t)1 << 30) - 1);
    }
    regs[i].state = REG_FAILED;
    if (piece == 0 || regs[i].len > reg_cap() ||
        (regs[i].len + piece - 1) / piece > REG_PIECES) {
        return;
    }
    /* Past the cap, the registrations used least recently (and not in
     * use) go first: a registration serves the memory streamed now (Dask's
     * from_array copies its input, and the copy's chunks are what streams:
     * two 64 GiB arrays on a 256 GiB host). */
    while (used + regs[i].len > reg_cap()) {
        int old = -1;
        for (int k = 0; k < REG_MAX; ++k) {
            if (regs[k].state == REG_PINNED && regs[k].users == 0 &&
                (old < 0 || regs[k].stamp < regs[old].stamp)) {
                old = k;
            }
        }
        if (old < 0) {
            return;
        }
        used -= regs[old].len;
        reg_unpin(old);
    }
    regs[i].piece = piece;
    regs[i].d = d;
    for (size_t at = 0; at < regs[i].len && err == CL_SUCCESS; at += piece) {
        const size_t len = regs[i].len - at < piece ? regs[i].len - at : piece;
        regs[i].mem[regs[i].npieces] = clCreateBuffer(
            d->ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, len,
            regs[i].base + at, &err);
        regs[i].npieces += err == CL_SUCCESS;
    }
    if (err != CL_SUCCESS) {
        reg_unpin(i);
        regs[i].state = REG_FAILED;
        return;
    }
    regs[i].state = REG_PINNED;
}

/* The entry whose registered memory holds [p, p + n) in one piece, on
 * d's platform, registering an offered range now, as a new user; or -1
 * (d's lock held). */
static int reg_use(gr_device *d, const void *p, size_t n)
{
    int hit = -1;
    if (!reg_eligible(d) || n == 0) {
        return -1;
    }
    pthread_mutex_lock(&reg_mu);
    for (int i = 0; i < REG_MAX; ++i) {
        const char *b = regs[i].base;
        if (regs[i].state == REG_FREE || (const char *)p < b ||
            (const char *)p + n > b + regs[i].len) {
            continue;
        }
        if (regs[i].state == REG_OFFERED) {
            reg_pin(i, d);
        }
        if (regs[i].state == REG_PINNED &&
            regs[i].d->platform == d->platform) {
            const size_t lo = (size_t)((const char *)p - b);
            if (lo / regs[i].piece == (lo + n - 1) / regs[i].piece) {
                hit = i;
                regs[i].users++;
                regs[i].stamp = ++reg_clock;
            }
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
    return hit;
}

/* A pool freed is idle (every write settled: no registration in use). */
static void pool_free(pool *p)
{
    if (p == NULL) {
        return;
    }
    for (int i = 0; i < p->nbuf; ++i) {
        if (p->written[i]) clReleaseEvent(p->written[i]);
        if (p->consumed[i]) clReleaseEvent(p->consumed[i]);
        if (p->pin_ptr[i]) {
            clEnqueueUnmapMemObject(p->copyq, p->pin[i], p->pin_ptr[i], 0,
                                    NULL, NULL);
        }
        if (p->pout_ptr[i]) {
            clEnqueueUnmapMemObject(p->copyq, p->pout[i], p->pout_ptr[i], 0,
                                    NULL, NULL);
        }
    }
    if (p->copyq) clFinish(p->copyq);
    for (int i = 0; i < p->nbuf; ++i) {
        if (p->pin[i]) clReleaseMemObject(p->pin[i]);
        if (p->pout[i]) clReleaseMemObject(p->pout[i]);
        if (p->dev[i]) clReleaseMemObject(p->dev[i]);
    }
    if (p->copyq) clReleaseCommandQueue(p->copyq);
    free(p);
}

/* Wait (d's lock released meanwhile) until no stream holds d's pool. */
static void pool_idle(gr_device *d)
{
    const int di = d->index;
    while (di < (int)(sizeof pools / sizeof *pools) && pools[di] != NULL &&
           pools[di]->busy) {
        gr_lock_wait(d);
    }
}

/* New settings: every device's lock, taken in index order, each pool
 * waited idle once its lock is held (a stream needs no other device's
 * lock to end, so none waits on this thread), then the pools dropped. */
void gr_stream_set_cfg(const gr_stream_cfg *c)
{
    const int n = gr_device_count();
    for (int i = 0; i < n; ++i) {
        gr_device *d = gr_device_get(i);
        pthread_mutex_lock(&d->lock);
        while (i < (int)(sizeof pools / sizeof *pools) && pools[i] != NULL &&
               pools[i]->busy) {
            pthread_cond_wait(&d->cv, &d->lock);
        }
    }
    cfg = *c;
    if (cfg.nbuf < 2) cfg.nbuf = 2;
    if (cfg.nbuf > GR_STREAM_SLOTS) cfg.nbuf = GR_STREAM_SLOTS;
    if (cfg.chunk < 4096) cfg.chunk = 4096;
    cfg.chunk = cfg.chunk / 128 * 128;
    reg_unpin_device(NULL);
    for (size_t i = 0; i < sizeof pools / sizeof *pools; ++i) {
        pool_free(pools[i]);
        pools[i] = NULL;
    }
    for (int i = n - 1; i >= 0; --i) {
        pthread_mutex_unlock(&gr_device_get(i)->lock);
    }
}

void gr_stream_forget(const gr_device *d)
{
    pool_idle((gr_device *)d);
    reg_unpin_device(d);
    if (d->index >= 0 && d->index < (int)(sizeof pools / sizeof *pools)) {
        pool_free(pools[d->index]);
        pools[d->index] = NULL;
    }
}

int gr_stream_wanted(const gr_device *d, size_t nbytes)
{
    return (d->is_gpu || cfg.force) && nbytes >= cfg.min_bytes &&
           nbytes > 0;
}

/* p taken (its device's lock held): the peak of streams at once. */
static pool *pool_took(pool *p)
{
    p->busy = 1;
    const int n = __atomic_add_fetch(&stat_busy, 1, __ATOMIC_RELAXED);
    int peak = __atomic_load_n(&stat_peak, __ATOMIC_RELAXED);
    while (n > peak &&
           !__atomic_compare_exchange_n(&stat_peak, &peak, n, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return p;
}

/* The device's pool, created on first use with the current settings,
 * now this thread's (pool_put gives it back); another stream's pool is
 * waited for with d's lock released. */
static pool *pool_get(gr_device *d, gr_status *st)
{
    const int di = d->index;
    if (di < 0 || di >= (int)(sizeof pools / sizeof *pools)) {
        gr_status_fail(st, "no staging pool for this device");
        return NULL;
    }
    pool_idle(d);
    if (pools[di] != NULL) {
        return pool_took(pools[di]);
    }
    cl_int err = CL_SUCCESS;
    pool *p = calloc(1, sizeof *p);
    if (p == NULL) {
        gr_status_fail(st, "out of host memory");
        return NULL;
    }
    for (int i = 0; i < GR_STREAM_SLOTS; ++i) {
        p->reg[i] = -1;
    }
    p->d = d;
    p->chunk = cfg.chunk;
    p->nbuf = cfg.nbuf;
    p->copyq = clCreateCommandQueue(d->ctx, d->id, 0, &err);
    GR_CL_CHECK_AS(st, "clCreateCommandQueue", err);
    for (int i = 0; i < p->nbuf; ++i) {
        p->pin[i] = clCreateBuffer(d->ctx,
                                   CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                   p->chunk, NULL, &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        p->pin_ptr[i] = clEnqueueMapBuffer(p->copyq, p->pin[i], CL_TRUE,
                                           CL_MAP_READ | CL_MAP_WRITE, 0,
                                           p->chunk, 0, NULL, NULL, &err);
        GR_CL_CHECK_AS(st, "clEnqueueMapBuffer", err);
    }
    pools[di] = p;
    return pool_took(p);
fail:
    pool_free(p);
    return NULL;
}

static void pool_put(pool *p) /* p->d's lock held */
{
    p->busy = 0;
    __atomic_sub_fetch(&stat_busy, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&p->d->cv);
}

/* ------------------------------------------------ multithreaded memcpy */

typedef struct {
    char *dst;
    const char *src;
    size_t n;
} cp_part;

static void *cp_run(void *arg)
{
    cp_part *c = arg;
    memcpy(c->dst, c->src, c->n);
    return NULL;
}

static int memcpy_threads(void)
{
    if (cfg.threads > 0) {
        return cfg.threads > MAX_THREADS ? MAX_THREADS : cfg.threads;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    /* H100 host, 1 GiB float32 sum end to end: 8 MiB chunks 61 ms, 16 MiB
     * 48 ms, 32 MiB 39 ms, 64 MiB 34 ms (16 threads; 8 threads 38 ms,
     * 4 threads 61 ms, 2 threads 94 ms); numpy.sum 144 ms. */
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

void gr_par_memcpy(void *dst, const void *src, size_t n)
{
    int nt = memcpy_threads();
    if (nt < 2 || n < ((size_t)2 << 20)) {
        memcpy(dst, src, n);
        return;
    }
    cp_part parts[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    /* ceil(n / nt), then whole pages: nt parts cover all n bytes (n / nt
     * rounded down dropped the last n % nt bytes whenever it was already a
     * multiple of 4096: bool argmax of 2^24 + 3 elements on the H100). */
    size_t per = ((n + (size_t)nt - 1) / (size_t)nt + 4095) / 4096 * 4096;
    for (int i = 0; i < nt; ++i) {
        size_t a = per * i < n ? per * i : n;
        size_t b = per * (i + 1) < n ? per * (i + 1) : n;
        parts[i] = (cp_part){(char *)dst + a, (const char *)src + a, b - a};
    }
    for (int i = 1; i < nt; ++i) {
        started[i] = pthread_create(&th[i], NULL, cp_run, &parts[i]) == 0;
        if (!started[i]) {
            cp_run(&parts[i]);
        }
    }
    cp_run(&parts[0]);
    for (int i = 1; i < nt; ++i) {
        if (started[i]) {
            pthread_join(th[i], NULL);
        }
    }
}

/* Wait for and drop an event (any thread, device lock or not). */
static int settle(cl_event *e, gr_status *st)
{
    if (*e == NULL) {
        return 0;
    }
    cl_int err = clWaitForEvents(1, e);
    clReleaseEvent(*e);
    *e = NULL;
    if (err != CL_SUCCESS) {
        st->call = "clWaitForEvents";
        st->err = err;
        return -1;
    }
    return 0;
}

/* Slot s's write settled, its registration's use ended. */
static int slot_settle(pool *p, int s, gr_status *st)
{
    const int rc = settle(&p->written[s], st);
    reg_unuse(p->reg[s]);
    p->reg[s] = -1;
    return rc;
}

/* Every slot's write settled, the device lock released meanwhile. */
static int slots_settle(pool *p, gr_status *st)
{
    int rc = 0;
    const int held = gr_unlock_for_wait();
    for (int s = 0; s < p->nbuf; ++s) {
        if (slot_settle(p, s, st) != 0) {
            rc = -1;
        }
    }
    gr_relock(held);
    return rc;
}

/* Stage chunk bytes [src, src + n) in slot s and enqueue its write to
 * (mem, off) after `after` (NULL: no wait); written[s] marks it done.
 * From registered memory the write reads src itself (the caller keeps it
 * until the write is settled).  The wait for the slot and the staging
 * copy run without the device lock. */
static int stage(pool *p, int s, const char *src, size_t n, cl_mem mem,
                 size_t off, cl_event after, gr_status *st)
{
    const int ri = reg_use(p->d, src, n), direct = ri >= 0;
    const int held = gr_unlock_for_wait();
    int rc = slot_settle(p, s, st);
    if (rc == 0 && !direct) {
        gr_par_memcpy(p->pin_ptr[s], src, n);
    }
    gr_relock(held);
    p->reg[s] = ri; /* its use ends when written[s] is settled */
    if (rc != 0) {
        return -1;
    }
    GR_CL_CHECK(st, clEnqueueWriteBuffer(p->copyq, mem, CL_FALSE, off, n,
                                         direct ? src : p->pin_ptr[s],
                                         after != NULL, after ? &after : NULL,
                                         &p->written[s]));
    GR_CL_CHECK(st, clFlush(p->copyq));
    stat_add(&stat_chunks, 1);
    stat_add(&stat_direct, direct);
    return 0;
fail:
    return -1;
}

int gr_stream_write(gr_device *d, cl_mem mem, size_t off, const void *ptr,
                    size_t n, gr_status *st)
{
    cl_event mark = NULL;
    pool *p = NULL;
    int rc = -1;
    if (!gr_stream_wanted(d, n)) {
        GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, mem, CL_TRUE, off, n,
                                             ptr, 0, NULL, NULL));
        return 0;
    }
    if ((p = pool_get(d, st)) == NULL) {
        return -1;
    }
    stat_add(&stat_streams, 1);
    /* The first write waits for what the compute queue has in hand (it may
     * still be reading or writing this buffer); the copy queue is in
     * order, so the others follow it. */
    GR_CL_CHECK(st, clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &mark));
    for (size_t k = 0, at = 0; at < n; ++k, at += p->chunk) {
        size_t len = n - at < p->chunk ? n - at : p->chunk;
        if (stage(p, (int)(k % p->nbuf), (const char *)ptr + at, len, mem,
                  off + at, k == 0 ? mark : NULL, st) != 0) {
            goto fail;
        }
    }
    rc = 0;
fail:
    if (p != NULL) {
        if (slots_settle(p, st) != 0) {
            rc = -1;
        }
        pool_put(p);
    }
    if (mark) clReleaseEvent(mark);
    return rc;
}

/* ------------------------------------------- a gr_source for reductions */

struct gr_stream_src {
    gr_device *d;
    pool *p;
    const char *host;
    size_t itemsize;
    size_t total;      /* elements                                         */
    size_t per;        /* elements per chunk                               */
};

size_t gr_stream_chunk_elems(size_t itemsize)
{
    return cfg.chunk / itemsize;
}

static int src_next(void *ctx, int i, gr_piece *piece, cl_event *ready,
                    gr_status *st)
{
    gr_stream_src *s = ctx;
    pool *p = s->p;
    const int slot = i % p->nbuf;
    const size_t at = (size_t)i * s->per;
    const size_t len = s->total - at < s->per ? s->total - at : s->per;
    cl_int err = CL_SUCCESS;
    if (p->dev[slot] == NULL) {
        p->dev[slot] = clCreateBuffer(s->d->ctx, CL_MEM_READ_WRITE, p->chunk,
                                      NULL, &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
    }
    if (stage(p, slot, s->host + at * s->itemsize, len * s->itemsize,
              p->dev[slot], 0, p->consumed[slot], st) != 0) {
        return -1;
    }
    *piece = (gr_piece){p->dev[slot], 0, len};
    *ready = p->written[slot]; /* borrowed: the pool keeps it */
    return 0;
fail:
    return -1;
}

static void src_done(void *ctx, int i, cl_event used)
{
    gr_stream_src *s = ctx;
    const int slot = i % s->p->nbuf;
    if (s->p->consumed[slot]) {
        clReleaseEvent(s->p->consumed[slot]);
    }
    s->p->consumed[slot] = used;
}

gr_stream_src *gr_stream_source(gr_device *d, const void *host,
                                size_t itemsize, size_t total, gr_source *src,
                                int *npieces, gr_status *st)
{
    gr_stream_src *s = calloc(1, sizeof *s);
    if (s == NULL) {
        gr_status_fail(st, "out of host memory");
        return NULL;
    }
    if ((s->p = pool_get(d, st)) == NULL) {
        free(s);
        return NULL;
    }
    s->d = d;
    s->host = host;
    s->itemsize = itemsize;
    s->total = total;
    s->per = s->p->chunk / itemsize;
    *npieces = (int)((total + s->per - 1) / s->per);
    *src = (gr_source){src_next, src_done, s};
    stat_add(&stat_streams, 1);
    return s;
}

int gr_stream_source_end(gr_stream_src *s, gr_status *st)
{
    int rc = 0;
    if (s == NULL) {
        return 0;
    }
    /* Leave the pool idle: later calls start from empty slots (the
     * kernels that read them done). */
    if (gr_finish_unlocked(s->d->queue) != CL_SUCCESS) {
        rc = -1;
    }
    if (slots_settle(s->p, st) != 0) {
        rc = -1;
    }
    for (int i = 0; i < s->p->nbuf; ++i) {
        if (s->p->consumed[i]) {
            clReleaseEvent(s->p->consumed[i]);
            s->p->consumed[i] = NULL;
        }
    }
    pool_put(s->p);
    free(s);
    return rc;
}

/* ------------------------------------------ chunked transfers, both ways
 * For families that stream a whole computation (scans): chunk k uses slot
 * k % nbuf of the pool for its upload (pinned in) and its results (pinned
 * out).  See gpured.h. */

gr_stream_pool *gr_stream_pool_get(gr_device *d, size_t *chunk, int *nbuf,
                                   gr_status *st)
{
    pool *p = pool_get(d, st);
    if (p != NULL) {
        *chunk = p->chunk;
        *nbuf = p->nbuf;
        stat_add(&stat_streams, 1);
    }
    return (gr_stream_pool *)p;
}

int gr_stream_upload(gr_stream_pool *sp, int slot, const void *src, size_t n,
                     cl_mem mem, size_t off, cl_event after, cl_event *done,
                     gr_status *st)
{
    pool *p = (pool *)sp;
    if (stage(p, slot, src, n, mem, off, after, st) != 0) {
        return -1;
    }
    *done = p->written[slot]; /* borrowed: valid until the slot's next use */
    return 0;
}

int gr_stream_download(gr_stream_pool *sp, gr_device *d, int slot, cl_mem mem,
                       size_t off, size_t n, cl_event *done, gr_status *st)
{
    pool *p = (pool *)sp;
    cl_int err = CL_SUCCESS;
    if (p->pout[slot] == NULL) {
        p->pout[slot] = clCreateBuffer(d->ctx,
                                       CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                       p->chunk, NULL, &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        p->pout_ptr[slot] = clEnqueueMapBuffer(p->copyq, p->pout[slot], CL_TRUE,
                                               CL_MAP_READ | CL_MAP_WRITE, 0,
                                               p->chunk, 0, NULL, NULL, &err);
        GR_CL_CHECK_AS(st, "clEnqueueMapBuffer", err);
    }
    /* On the compute queue: in order after the kernels that wrote mem. */
    GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, mem, CL_FALSE, off, n,
                                        p->pout_ptr[slot], 0, NULL, done));
    GR_CL_CHECK(st, clFlush(d->queue));
    stat_add(&stat_chunks, 1);
    return 0;
fail:
    return -1;
}

int gr_stream_drain(gr_stream_pool *sp, int slot, cl_event done, void *dst,
                    size_t n, gr_status *st)
{
    pool *p = (pool *)sp;
    cl_event e = done;
    const int held = gr_unlock_for_wait();
    int rc = settle(&e, st);
    if (rc == 0) {
        gr_par_memcpy(dst, p->pout_ptr[slot], n);
    }
    gr_relock(held);
    return rc;
}

int gr_stream_idle(gr_stream_pool *sp, gr_status *st)
{
    pool *p = (pool *)sp;
    const int rc = slots_settle(p, st);
    pool_put(p);
    return rc;
}
