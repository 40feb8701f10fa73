/*
 * gpured — the host path's threads (issue 12).
 *
 * A large NumPy array reduced on one core reads memory at one core's rate
 * (the H100 host's Xeon: ~10 GB/s from DRAM, where its 16 cores together
 * read ~100); PoCL's CPU device reads at the cores' rate but costs ~0.2 ms
 * a call.  So the host path splits a large call into tasks (host.c) and
 * runs them here, on the caller and a pool of workers kept between calls.
 *
 *   caller:   gives the job to workers 0..k-1 (their slot: job, gen + 1),
 *             runs its share of the tasks, then waits for each worker's
 *             done == gen
 *   worker i: spins on its gen a while after each job (back-to-back calls
 *             find it awake), then sleeps on its condition variable;
 *             runs its share (run_tasks: the same range of tasks every
 *             call), then what others left of theirs, then done = gen
 *
 * Each worker touches only the jobs given to it, and only once it has
 * taken the job (taken: gen - 1 -> gen); the caller, its own share done
 * and what was left of the others' taken, closes the job to every worker
 * that has not taken it yet (the same swap) and waits for the others: the
 * job can live on the caller's stack, and a worker the OS has not run yet
 * (asleep, or its CPU busy) delays no call.  One job at a time (run_lock,
 * tried, never waited for): a second thread calling meanwhile runs its
 * tasks alone.
 * Workers block every signal (Python handles them on its main thread).
 * Ctrl-C (issue 39): the caller polls Python (gr_par_stopped, between
 * its tasks and while it waits for workers) and sets the call's flag;
 * every thread reads it after each task (the tasks left are not run),
 * and the loops inside a task between blocks of GR_HOST_STOP_BYTES.
 * After fork() the child has no workers: it starts its own when needed.
 */
#define _GNU_SOURCE
#include "hostpar.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAR_MAX 256   /* threads of one job, the caller included         */
#define PAR_SPIN 4096 /* pauses the caller spins on a running worker
                         before it yields                                */
#define PAR_SPIN_US 500 /* how long a worker spins after a job before it
                           sleeps (a time, not a count of pauses: pause
                           takes 10-140 cycles from one x86 to another);
                           the environment's GPURED_HOST_SPIN_US, where
                           set                                            */
static long par_spin_ns = PAR_SPIN_US * 1000L;
static int par_pause = 1; /* GPURED_HOST_PAUSE=0: spin on plain loads      */
static gr_par_counts counts; /* under run_lock */

#if defined(__x86_64__) || defined(__i386__)
#define RELAX() __builtin_ia32_pause()
#else
#define RELAX() ((void)0)
#endif

/* Thread i's share of a job: tasks [i n / k, (i+1) n / k), the next one
 * to run taken from its own counter (a cache line each). */
typedef struct {
    size_t next, end; /* next: atomic */
} __attribute__((aligned(64))) par_share;

/* A call's interruption (hostpar.h): the calling thread's own, pointed
 * to by its workers while they run its job. */
typedef struct {
    int stop;          /* the call is to stop (atomic)                    */
    int (*poll)(void *);
    void *ctx;
    long long next_ns; /* the next poll (0: the clock not read yet)       */
    int depth;         /* gr_par_intr_begin calls not ended               */
} par_intr;

static __thread par_intr own_intr;  /* this thread's call, as caller      */
static __thread par_intr *cur_intr; /* the call this thread works for     */

typedef struct {
    gr_par_fn fn;
    void *arg;
    size_t ntasks;
    int nthreads;
    par_intr *intr; /* the caller's (NULL: none)                          */
    par_share share[PAR_MAX];
} par_job;

typedef struct {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    par_job *job;  /* the job given with gen                             */
    int id;        /* its share of the job's tasks (the caller's is 0)   */
    unsigned gen;  /* bumped (under mu) when a job is given (atomic)     */
    unsigned done; /* = gen once that job is done (atomic)               */
    unsigned taken; /* job gen taken: by the worker (it runs it) or by
                       the caller, closing it to a worker that had not
                       started (atomic compare-and-swap from gen - 1)     */
    int sleeping;  /* under mu                                           */
} __attribute__((aligned(128))) par_worker; /* one per cache line pair */

static par_worker workers[PAR_MAX - 1];
static int nstarted; /* workers running (under run_lock)                 */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Thread i runs its share first: a fixed range of the tasks, the same
 * from call to call (a loop of calls on one array finds its share in the
 * core's own caches: one counter for all measured 266 GB/s on 16 MiB
 * where torch's static OpenMP split reads 440).  Then it takes what is
 * left of the others' shares, so that a thread the OS did not run soon
 * (a busy CPU) delays no call by its whole share. */
static size_t run_share(par_job *job, int i)
{
    par_share *sh = &job->share[i];
    size_t t, n = 0;
    /* stopped: the tasks not begun are left (checked after each task,
     * not before the first: a call's start waits for no clock read) */
    while ((t = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED)) < sh->end) {
        job->fn(job->arg, t);
        ++n;
        if (gr_par_stopped()) {
            break;
        }
    }
    return n;
}

/* Thread i's tasks; returns how many it ran. */
static size_t run_tasks(par_job *job, int i)
{
    size_t n = run_share(job, i);
    for (int j = 1; j < job->nthreads && !gr_par_stopped(); ++j) {
        n += run_share(job, (i + j) % job->nthreads);
    }
    return n;
}

static void share_out(par_job *job, int k)
{
    const size_t n = job->ntasks;
    int i;
    job->nthreads = k;
    for (i = 0; i < k; ++i) {
        job->share[i].next = (size_t)i * n / (size_t)k;
        job->share[i].end = (size_t)(i + 1) * n / (size_t)k;
    }
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *worker_main(void *vp)
{
    par_worker *w = (par_worker *)vp;
    unsigned seen = 0; /* gen when started: no job missed */
    for (;;) {
        unsigned g;
        unsigned spin = 0;
        const long long t0 = now_ns();
        while ((g = __atomic_load_n(&w->gen, __ATOMIC_ACQUIRE)) == seen) {
            /* the clock read every 64 polls (a vDSO call, ~20 ns) */
            if ((++spin & 63) != 0 || now_ns() - t0 < par_spin_ns) {
                if (par_pause) {
                    RELAX();
                }
                continue;
            }
            pthread_mutex_lock(&w->mu);
            w->sleeping = 1;
            while (__atomic_load_n(&w->gen, __ATOMIC_ACQUIRE) == seen) {
                pthread_cond_wait(&w->cv, &w->mu);
            }
            w->sleeping = 0;
            pthread_mutex_unlock(&w->mu);
        }
        seen = g;
        unsigned expect = g - 1;
        if (!__atomic_compare_exchange_n(&w->taken, &expect, g, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            continue; /* closed: the others ran its share */
        }
        cur_intr = w->job->intr;
        run_tasks(w->job, w->id);
        cur_intr = NULL;
        __atomic_store_n(&w->done, g, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* fork(): no job crosses it; the child starts afresh (its workers are
 * not there). */
static void at_prepare(void) { pthread_mutex_lock(&run_lock); }
static void at_parent(void) { pthread_mutex_unlock(&run_lock); }
static int cpus_seen; /* gr_par_cpus' answer, once (0: not yet) */

static void at_child(void)
{
    nstarted = 0;
    cpus_seen = 0;
    pthread_mutex_init(&run_lock, NULL);
}
static void register_fork(void)
{
    const char *e = getenv("GPURED_HOST_SPIN_US");
    if (e != NULL && atol(e) >= 0) {
        par_spin_ns = atol(e) * 1000L;
    }
    e = getenv("GPURED_HOST_PAUSE");
    if (e != NULL) {
        par_pause = atoi(e) != 0;
    }
    pthread_atfork(at_prepare, at_parent, at_child);
}

/* Starts workers up to n (under run_lock); returns how many run. */
static int start_workers(int n)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (nstarted < n) {
        par_worker *w = &workers[nstarted];
        pthread_attr_t at;
        memset(w, 0, sizeof *w);
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 1 << 20);
        const int rc = pthread_create(&w->tid, &at, worker_main, w);
        pthread_attr_destroy(&at);
        if (rc != 0) {
            pthread_cond_destroy(&w->cv);
            pthread_mutex_destroy(&w->mu);
            break;
        }
        ++nstarted;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return nstarted;
}

int gr_par_run(gr_par_fn fn, void *arg, size_t ntasks, int threads)
{
    par_job job;
    unsigned gens[PAR_MAX - 1];
    int k, i, woken = 0;
    if (threads > PAR_MAX) {
        threads = PAR_MAX;
    }
    if ((size_t)threads > ntasks) {
        threads = (int)ntasks;
    }
    job.fn = fn;
    job.arg = arg;
    job.ntasks = ntasks;
    job.intr = cur_intr;
    if (threads <= 1 || (pthread_once(&once, register_fork),
                         pthread_mutex_trylock(&run_lock) != 0)) {
        share_out(&job, 1);
        run_tasks(&job, 0);
        return 1;
    }
    k = start_workers(threads - 1);
    if (k > threads - 1) {
        k = threads - 1;
    }
    share_out(&job, k + 1);
    for (i = 0; i < k; ++i) {
        par_worker *w = &workers[i];
        w->job = &job;
        w->id = i + 1;
        pthread_mutex_lock(&w->mu);
        gens[i] = w->gen + 1;
        __atomic_store_n(&w->gen, gens[i], __ATOMIC_RELEASE);
        if (w->sleeping) {
            pthread_cond_signal(&w->cv);
            ++woken;
        }
        pthread_mutex_unlock(&w->mu);
    }
    const size_t mine = run_tasks(&job, 0);
    counts.jobs += 1;
    counts.tasks += ntasks;
    counts.caller_tasks += mine;
    counts.woken += (size_t)woken;
    /* every task is taken (the caller took what was left); a worker that
     * has not started the job yet is closed to it, the others finish */
    for (i = 0; i < k; ++i) {
        int spin = 0;
        unsigned expect = gens[i] - 1;
        if (__atomic_compare_exchange_n(&workers[i].taken, &expect, gens[i], 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            counts.closed += 1;
            continue;
        }
        while (__atomic_load_n(&workers[i].done, __ATOMIC_ACQUIRE) != gens[i]) {
            if (++spin < PAR_SPIN) {
                RELAX();
            } else {
                /* a worker still at its task: Ctrl-C is polled here
                 * (time-gated), its flag stops the worker's next block */
                (void)gr_par_stopped();
                sched_yield();
            }
        }
    }
    pthread_mutex_unlock(&run_lock);
    return k + 1;
}

void gr_par_intr_begin(int (*poll)(void *), void *ctx)
{
    par_intr *c = &own_intr;
    if (c->depth++ > 0) {
        return; /* nested: the outer call's poll and flag */
    }
    c->stop = 0;
    c->poll = poll;
    c->ctx = ctx;
    c->next_ns = 0;
    cur_intr = c;
}

int gr_par_intr_end(void)
{
    par_intr *c = &own_intr;
    const int stopped = __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE);
    if (--c->depth == 0) {
        cur_intr = NULL;
    }
    return stopped;
}

/* Called between blocks: a TLS read and a load; the calling thread also
 * reads the clock (~20 ns) and polls every GR_PAR_POLL_NS.  The first
 * check only starts the clock: a call shorter than one period never
 * takes the GIL. */
int gr_par_stopped(void)
{
    par_intr *c = cur_intr;
    if (c == NULL) {
        return 0;
    }
    if (__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
        return 1;
    }
    if (c != &own_intr || c->poll == NULL) {
        return 0; /* a worker: Python is polled by the caller alone */
    }
    const long long t = now_ns();
    if (c->next_ns == 0 || t < c->next_ns) {
        if (c->next_ns == 0) {
            c->next_ns = t + GR_PAR_POLL_NS;
        }
        return 0;
    }
    c->next_ns = t + GR_PAR_POLL_NS;
    if (c->poll(c->ctx)) {
        __atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
        return 1;
    }
    return 0;
}

void gr_par_counts_get(gr_par_counts *c)
{
    pthread_mutex_lock(&run_lock);
    *c = counts;
    pthread_mutex_unlock(&run_lock);
}

/* A cgroup v2 CPU quota ("max" or "<quota> <period>" in cpu.max, as
 * docker --cpus writes it): its CPUs, rounded up; 0 where there is none. */
static int quota_cpus(void)
{
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    long long quota = 0, period = 0;
    int n = 0;
    if (f == NULL) {
        return 0;
    }
    if (fscanf(f, "%lld %lld", &quota, &period) == 2 && quota > 0 &&
        period > 0) {
        n = (int)((quota + period - 1) / period);
    }
    fclose(f);
    return n;
}

static int count_cpus(void)
{
    int n = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        n = CPU_COUNT(&set);
    }
#endif
    if (n <= 0) {
        const long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    const int q = quota_cpus();
    return q > 0 && q < n ? q : n;
}

/* Counted once a process (a child of fork() counts again): placement asks
 * on every call, and reading cpu.max cost ~4 us (the H100 host: a 1 KiB
 * NumPy sum took 6.5 us instead of 1.6). */
int gr_par_cpus(void)
{
    int n = __atomic_load_n(&cpus_seen, __ATOMIC_RELAXED);
    if (n == 0) {
        n = count_cpus();
        __atomic_store_n(&cpus_seen, n, __ATOMIC_RELAXED);
    }
    return n;
}
