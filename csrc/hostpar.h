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

/* The CPUs this process may run on (at least 1; fewer where a cgroup's
 * CPU quota allows fewer). */
int gr_par_cpus(void);

#endif
