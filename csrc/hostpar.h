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

/* The CPUs this process may run on (at least 1; fewer where a cgroup's
 * CPU quota allows fewer). */
int gr_par_cpus(void);

#endif
