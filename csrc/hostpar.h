/*
 * gpured — the host path's threads (issue 12): a pool of worker threads
 * that runs one job's tasks beside the calling thread.  csrc/hostpar.c has
 * the details.
 */
#ifndef GPURED_HOSTPAR_H
#define GPURED_HOSTPAR_H

#include <stddef.h>

/* One task of a job: fn(arg, i), i < ntasks. */
typedef void (*gr_par_fn)(void *arg, size_t i);

/* Runs fn(arg, i) for every i < ntasks on up to `threads` threads, the
 * caller one of them (each thread a fixed range of the tasks first, in
 * order, then what the others left); returns when every task has run.  One job at
 * a time: while another thread's job holds the pool, or where threads
 * cannot be started, every task runs on the caller.  Returns the number
 * of threads that took part (1: the caller alone). */
int gr_par_run(gr_par_fn fn, void *arg, size_t ntasks, int threads);

/* What the pool did since the process started (jobs on several threads;
 * diagnosis: a call whose workers were asleep, or not run by the OS in
 * time, shows as tasks run by the caller and workers closed). */
typedef struct {
    size_t jobs;         /* jobs given to workers                        */
    size_t tasks;        /* their tasks                                  */
    size_t caller_tasks; /* of which the calling thread ran              */
    size_t woken;        /* workers found asleep (a futex wake each)     */
    size_t closed;       /* workers that had not started their job when
                            the caller had run every task                */
} gr_par_counts;
void gr_par_counts_get(gr_par_counts *c);

/* Ctrl-C on the host path (issue 39).  Python sees a signal only when
 * its main thread checks (PyErr_CheckSignals, under the GIL; on any other
 * thread it does nothing), so the thread that entered the call polls,
 * and its pool workers read the flag that poll sets.
 *
 *   gr_par_intr_begin  the calling thread, as a call starts: poll(ctx)
 *                      says stop (NULL: never); calls nest (the outer
 *                      one's poll stays)
 *   gr_par_stopped     any host loop, between blocks (GR_HOST_STOP_BYTES)
 *                      and the pool between tasks: 1 once the call is to
 *                      stop; on the calling thread it also polls, at most
 *                      every GR_PAR_POLL_NS (it takes the GIL)
 *   gr_par_intr_end    the calling thread, as the call ends: 1 if it was
 *                      stopped (its results are then partial: dropped)
 *
 * A worker reads the job's flag; a stopped job's tasks not yet begun are
 * skipped, and gr_par_run still returns only once no worker runs it.
 * 2-core test host, 2026-11-28, 1 GiB float32 on the host path, SIGINT
 * 0.15 s in (benchmarks/host_sigint.py): KeyboardInterrupt 7-33 ms
 * later for sum (4 GiB), cumsum, exact sum and var, 1 or 2 threads (main:
 * when the call ended, 0.41-2.75 s); 64 MiB sum and cumsum unchanged
 * within noise (benchmarks/host_ab.py: new/base 0.89-1.12). */
#define GR_PAR_POLL_NS 25000000LL  /* 25 ms: a poll costs ~1 us (GIL) */
#define GR_HOST_STOP_BYTES (4u << 20) /* a block between checks: ~1-2 ms
                                         at one core's 2-4 GB/s          */
/* The check in a loop of single elements: every 2^20 (i + 1 a multiple) */
#define GR_PAR_STOP_AT(i) ((((i) + 1) & 0xFFFFF) == 0 && gr_par_stopped())
void gr_par_intr_begin(int (*poll)(void *), void *ctx);
int gr_par_stopped(void);
int gr_par_intr_end(void);

/* The CPUs this process may run on (at least 1; fewer where a cgroup's
 * CPU quota allows fewer). */
int gr_par_cpus(void);

#endif
