/*
 * gpured — platforms, devices, capabilities, contexts and queues, and the one
 * place where OpenCL failures become Python exceptions.
 */
#include "gpured.h"

#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

PyObject *gr_OpenCLError = NULL;
PyObject *gr_VariantUnavailable = NULL;

/* The device table is filled once per process; the extension is a
 * single-interpreter module, so this is its state. */
static gr_device *devices = NULL;
static int ndevices = 0;
static int current = -1;
static int pinned = 0; /* GPURED_DEVICE or set_device() chose current */

/* The default device: the first GPU, else the first device of any kind. */
static int default_index(void)
{
    for (int i = 0; i < ndevices; ++i) {
        if (devices[i].is_gpu) {
            return i;
        }
    }
    return ndevices > 0 ? 0 : -1;
}

/* ------------------------------------------------------------ locking
 *
 * Lock map (issue 43: one lock per device, not one for all).  Until then a
 * single process-wide `device_lock` serialised the work of every device:
 * 16 threads summing on the GPU while one ran gpured.tune() on the CPU
 * device finished 133 calls in 100 s, each waiting behind the tuner's
 * timed runs.  Now each device has its own lock, d->lock, and work on one
 * device never waits for another's.
 *
 * What d->lock guards (all of it is per device):
 *   runtime.c   d->ctx, d->queue (opening: gr_device_open; the profiling
 *               swap: gr_profile_begin/end, prof_queue, prof_depth), the
 *               use of the queue (every enqueue, so that a call's commands
 *               stay in order), the small-read memory's creation
 *               (small_mem, small_ptr, small_failed; small_busy is an
 *               atomic, taken without it, and small_ev goes with its
 *               state 2)
 *   launch.c    cl_kernel arguments: clSetKernelArg + enqueue are one
 *               step (a kernel object belongs to one device's context)
 *   programs.c  the device's program cache, kernel tables and memo
 *               (d->progs): lookups, builds, gr_programs_forget
 *   stream.c    the device's staging pool (pools[d->index], busy; users
 *               wait on d->cv with the lock released)
 *   blocks.c    every byte operation on the device's blocks; adoption of
 *               a queue (d->ctx, d->queue, the pool, programs, staging)
 *   dispatch_*  a request's whole enqueue phase (dp_dev_begin ..
 *               the driver's end), released for host waits and gathers
 *   buffers.c   uploads and copies of one call (the device's queue)
 *
 * Not guarded by a device lock (their own guards):
 *   pool.c      free lists and counters: each pool's own mutex (p->mu),
 *               creation: create_mu
 *   stream.c    registered host memory: reg_mu; the staging settings
 *               (cfg): written under every device's lock, read under one
 *               device's lock; statistics: atomics
 *   programs.c  statistics: atomics; the cache directory's name: its
 *               mutex; disk cache files: a temporary name unique per
 *               process and call, renamed into place
 *   dispatch_common.c  the deferred frees (deferred_list): their mutex
 *   api_calls.c the pending-interrupt list: the GIL
 *   runtime.c   the device table (devices, ndevices): filled once by
 *               gr_runtime_init with the GIL, before any lock is used,
 *               and never moved after; current/pinned: the GIL; forked:
 *               set in the child of fork(), read anywhere
 *   policy.c, place.c  tuned table, rates, split rates: written with the
 *               GIL, read by planners (as before issue 43: the old lock
 *               did not cover them either)
 *
 * Order: a thread holds at most one device lock at a time.  Work on two
 * devices (gr_blocks_read's gathers of Dask partials, copies through host
 * memory) takes one device's lock, enqueues, releases it, then the next:
 * copies between devices' blocks are refused (api_memory.c), and Dask's
 * combine reads partials back to the host.  Only gr_stream_set_cfg (the
 * staging settings every device reads: gpured.set_staging) holds several,
 * taken in device index order, so no two threads wait on each other.  No
 * device lock is taken with a pool's p->mu, reg_mu or the deferred list's
 * mutex held (those are innermost).  Device locks are taken with the GIL
 * released, and interrupt checks (which take the GIL) run in host waits,
 * the lock released. */
static int initialised = 0;
static volatile int forked = 0;

/* The device whose lock this thread holds (gr_unlock_for_wait drops it
 * only then), or NULL. */
static __thread gr_device *lock_dev;
void gr_lock(gr_device *d)
{
    pthread_mutex_lock(&d->lock);
    lock_dev = d;
}
void gr_unlock(gr_device *d)
{
    lock_dev = NULL;
    pthread_mutex_unlock(&d->lock);
}
void gr_lock_wait(gr_device *d)
{
    gr_device *const was = lock_dev;
    lock_dev = NULL;
    pthread_cond_wait(&d->cv, &d->lock);
    lock_dev = was;
}
/* Drop the device lock (if this thread holds one) for a wait on the host
 * side: other threads drive the device meanwhile.  Returns the device's
 * index + 1 (0: none held), for gr_relock. */
int gr_unlock_for_wait(void)
{
    gr_device *const d = lock_dev;
    if (d == NULL) {
        return 0;
    }
    gr_unlock(d);
    return d->index + 1;
}
void gr_relock(int held)
{
    if (held > 0) {
        gr_lock(&devices[held - 1]);
    }
}
cl_int gr_finish_unlocked(cl_command_queue q)
{
    const int held = gr_unlock_for_wait();
    const cl_int e = clFinish(q);
    gr_relock(held);
    return e;
}

void gr_device_hold(int dev, double ms)
{
    gr_device *d = gr_device_get(dev);
    struct timespec ts = {(time_t)(ms / 1e3),
                          (long)((ms - 1e3 * (time_t)(ms / 1e3)) * 1e6)};
    gr_lock(d);
    nanosleep(&ts, NULL);
    gr_unlock(d);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Wait for ev (called without gr_lock); 0, or -1 with st set.  It polls with
 * sched_yield for the first 20 ms on a GPU (0.2 ms on a CPU device, whose
 * work-items want the cores), as CUDA's synchronise spins: a sleep would
 * overshoot by the kernel's timer slack (50 us) or more, which a loop of
 * calls synchronised once pays in full (measured on the H100: 440 us per
 * synchronisation with sleeps growing to 1 ms).  Then it sleeps in steps
 * of 1/64 of the time waited so far (20 us to 1 ms), an overshoot of a few
 * per cent at most.  With an interrupt check (intr, every ~50 ms): -1 with
 * GR_E_INTERRUPT when it fires; the work goes on on the device, and
 * whatever it uses must outlive it (the caller's *pending event). */
int gr_event_wait_intr(const gr_device *d, cl_event ev,
                       int (*intr)(void *), void *ictx, gr_status *st)
{
    cl_int s = CL_QUEUED;
    const double t0 = now_ns();
    const double spin = d != NULL && d->is_gpu ? 20e6 : 2e5;
    double last_check = t0;
    for (;;) {
        cl_int e = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                  sizeof s, &s, NULL);
        if (e != CL_SUCCESS) {
            st->call = "clGetEventInfo";
            st->err = e;
            return -1;
        }
        if (s == CL_COMPLETE) {
            return 0;
        }
        if (s < 0) {
            st->call = "a command of this call";
            st->err = s;
            return -1;
        }
        const double t = now_ns(), waited = t - t0;
        if (waited < spin) {
            sched_yield();
        } else {
            long step = (long)(waited / 64);
            step = step < 20000 ? 20000 : step > 1000000 ? 1000000 : step;
            struct timespec ts = {0, step};
            nanosleep(&ts, NULL);
        }
        if (intr != NULL && t - last_check >= 50e6) {
            last_check = t;
            if (intr(ictx)) {
                gr_status_kind(st, GR_E_INTERRUPT, "interrupted");
                return -1;
            }
        }
    }
}


/* The device's pinned memory for small reads: taken (1) if free, else
 * free again once an interrupted read into it has completed; NULL where
 * there is none (a failed map, another thread using it).  CPU devices
 * take it too (a copy of 64 KiB at most more: CI runs this path). */
void *gr_small_take(gr_device *d)
{
    if (d->small_failed) {
        return NULL;
    }
    int expect = 0;
    if (!__atomic_compare_exchange_n(&d->small_busy, &expect, 1, 0,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        cl_int s = CL_QUEUED;
        expect = 2;
        if (!__atomic_compare_exchange_n(&d->small_busy, &expect, 1, 0,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            return NULL;
        }
        clGetEventInfo(d->small_ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                       sizeof s, &s, NULL);
        if (s > CL_COMPLETE) {
            __atomic_store_n(&d->small_busy, 2, __ATOMIC_RELEASE);
            return NULL;
        }
        clReleaseEvent(d->small_ev);
        d->small_ev = NULL;
    }
    if (d->small_ptr == NULL) {
        /* first use (gr_lock held: the queue is ours to map on) */
        cl_int e = CL_SUCCESS;
        d->small_mem = clCreateBuffer(d->ctx,
                                      CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                      GR_SMALL_READ, NULL, &e);
        if (e == CL_SUCCESS) {
            d->small_ptr = clEnqueueMapBuffer(d->queue, d->small_mem, CL_TRUE,
                                              CL_MAP_READ | CL_MAP_WRITE, 0,
                                              GR_SMALL_READ, 0, NULL, NULL, &e);
        }
        if (e != CL_SUCCESS || d->small_ptr == NULL) {
            if (d->small_mem != NULL) {
                clReleaseMemObject(d->small_mem);
            }
            d->small_mem = NULL;
            d->small_ptr = NULL;
            d->small_failed = 1;
            __atomic_store_n(&d->small_busy, 0, __ATOMIC_RELEASE);
            return NULL;
        }
    }
    return d->small_ptr;
}

/* The pinned memory given back: free at once, or (ev: a read into it that
 * may still run, interrupted) once ev completes (gr_small_take checks). */
void gr_small_give(gr_device *d, cl_event ev)
{
    if (ev == NULL) {
        __atomic_store_n(&d->small_busy, 0, __ATOMIC_RELEASE);
        return;
    }
    clRetainEvent(ev);
    d->small_ev = ev;
    __atomic_store_n(&d->small_busy, 2, __ATOMIC_RELEASE);
}

/* Small reads go through pinned host memory: NVIDIA's read into
 * pageable memory cost 20-70 us more a call on the H100 (a 1 GiB sum read
 * back 0.430 ms against 0.377 ms for the sum and a wait, 2026-11-27). */
int gr_read_wait(gr_device *d, cl_mem m, size_t off, size_t n, void *dst,
                 int (*intr)(void *), void *ictx, cl_event *pending,
                 gr_status *st)
{
    cl_event ev = NULL;
    void *pin = n <= GR_SMALL_READ ? gr_small_take(d) : NULL;
    cl_int e = clEnqueueReadBuffer(d->queue, m, CL_FALSE, off, n,
                                   pin != NULL ? pin : dst, 0, NULL, &ev);
    if (e != CL_SUCCESS) {
        if (pin != NULL) {
            __atomic_store_n(&d->small_busy, 0, __ATOMIC_RELEASE);
        }
        st->call = "clEnqueueReadBuffer";
        st->err = e;
        return -1;
    }
    clFlush(d->queue);
    const int held = gr_unlock_for_wait();
    const int rc = gr_event_wait_intr(d, ev, intr, ictx, st);
    gr_relock(held);
    if (pin != NULL) {
        if (rc == 0) {
            memcpy(dst, pin, n);
        }
        gr_small_give(d, rc == 0 ? NULL : ev);
    }
    if (rc != 0 && pending != NULL && pin == NULL &&
        st->kind == GR_E_INTERRUPT) {
        *pending = ev;
    } else {
        clReleaseEvent(ev);
    }
    return rc;
}

/* A child of fork() inherits the parent's OpenCL objects but not the
 * driver threads behind them: any OpenCL call there may hang.  The child
 * handler marks the process; api.c refuses device work in it with an error
 * naming the 'spawn' start method (gr_forked), and nothing of the parent's
 * is released in the child.  The lock is reinitialised: a fork taken while
 * another thread held it would leave it locked forever. */
static void on_fork_child(void)
{
    forked = 1;
    /* another thread may have held a lock at fork(): fresh ones */
    for (int i = 0; i < ndevices; ++i) {
        pthread_mutex_init(&devices[i].lock, NULL);
        pthread_cond_init(&devices[i].cv, NULL);
    }
}

int gr_forked(void) { return forked; }

const char *gr_cl_error_name(cl_int err)
{
    switch (err) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP)
    E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE)
    E(CL_LINK_PROGRAM_FAILURE) E(CL_DEVICE_PARTITION_FAILED)
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE)
    E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES)
    E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
    E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    E(CL_INVALID_IMAGE_SIZE) E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL)
    E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
    E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION)
    E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
    E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT)
    E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_MIP_LEVEL)
    E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
    E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS)
    E(CL_INVALID_LINKER_OPTIONS) E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_UNKNOWN_ERROR";
    }
}

void gr_status_fail(gr_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    st->call = "gpured";
    st->err = CL_SUCCESS;
    st->kind = strstr(st->msg, "memory") ? GR_E_MEMORY : GR_E_RUNTIME;
}

void gr_status_kind(gr_status *st, int kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    st->call = "gpured";
    st->err = CL_SUCCESS;
    st->kind = kind;
}

/* Sets gpured.OpenCLError(message) with attributes call, code, name and
 * build_log; non-OpenCL failures (st->msg) become MemoryError or
 * RuntimeError. */
void gr_raise(gr_status *st)
{
    PyObject *inst = NULL, *log = NULL;
    char call[64];
    size_t cn = strcspn(st->call ? st->call : "?", "(");
    if (cn >= sizeof call) {
        cn = sizeof call - 1;
    }
    memcpy(call, st->call ? st->call : "?", cn);
    call[cn] = '\0';
    if (st->err == CL_SUCCESS) {
        if (st->kind == GR_E_INTERRUPT) {
            if (!PyErr_Occurred()) {
                PyErr_SetNone(PyExc_KeyboardInterrupt);
            }
            goto done;
        }
        PyErr_SetString(st->kind == GR_E_MEMORY    ? PyExc_MemoryError
                        : st->kind == GR_E_VALUE   ? PyExc_ValueError
                        : st->kind == GR_E_TYPE    ? PyExc_TypeError
                        : st->kind == GR_E_VARIANT ? gr_VariantUnavailable
                        : st->kind == GR_E_INDEX   ? PyExc_IndexError
                                                   : PyExc_RuntimeError,
                        st->msg);
        goto done;
    }
    if (st->err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
        st->err == CL_OUT_OF_RESOURCES) {
        PyErr_Format(PyExc_MemoryError, "%s failed: %s (the device ran out "
                     "of memory)", call, gr_cl_error_name(st->err));
        goto done;
    }
    if (st->err == CL_OUT_OF_HOST_MEMORY) {
        PyErr_Format(PyExc_MemoryError, "%s failed: CL_OUT_OF_HOST_MEMORY",
                     call);
        goto done;
    }
    if (st->log != NULL && st->log[0] != '\0') {
        inst = PyObject_CallFunction(gr_OpenCLError, "s",
                                     "OpenCL build failed");
        if (inst != NULL) {
            PyObject *m = PyUnicode_FromFormat(
                "%s failed: %s (%d)\nbuild log:\n%s", call,
                gr_cl_error_name(st->err), (int)st->err, st->log);
            if (m != NULL) {
                PyObject *args = PyTuple_Pack(1, m);
                if (args != NULL) {
                    PyObject_SetAttrString(inst, "args", args);
                    Py_DECREF(args);
                }
                Py_DECREF(m);
            }
        }
        log = PyUnicode_DecodeUTF8(st->log, strlen(st->log), "replace");
    } else {
        inst = PyObject_CallFunction(
            gr_OpenCLError, "N",
            PyUnicode_FromFormat("%s failed: %s (%d)", call,
                                 gr_cl_error_name(st->err), (int)st->err));
    }
    if (inst == NULL) {
        goto done;
    }
    PyObject *cname = PyUnicode_FromString(call);
    PyObject_SetAttrString(inst, "call", cname);
    Py_XDECREF(cname);
    PyObject *code = PyLong_FromLong(st->err);
    PyObject_SetAttrString(inst, "code", code);
    Py_XDECREF(code);
    PyObject *name = PyUnicode_FromString(gr_cl_error_name(st->err));
    PyObject_SetAttrString(inst, "name", name);
    Py_XDECREF(name);
    PyObject_SetAttrString(inst, "build_log", log ? log : Py_None);
    PyErr_SetObject(gr_OpenCLError, inst);
done:
    Py_XDECREF(inst);
    Py_XDECREF(log);
    free(st->log);
    st->log = NULL;
}

/* ------------------------------------------------------------ discovery */

static void info_str(gr_device *d, cl_device_info what, char *buf, size_t n)
{
    buf[0] = '\0';
    if (clGetDeviceInfo(d->id, what, n, buf, NULL) != CL_SUCCESS) {
        buf[0] = '\0';
    }
    buf[n - 1] = '\0';
}

static int has_extension(const char *exts, const char *name)
{
    size_t len = strlen(name);
    const char *p = exts;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == exts || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) {
            return 1;
        }
        p += len;
    }
    return 0;
}

static void probe(gr_device *d)
{
    char *exts = NULL;
    size_t n = 0;
    cl_bool b = CL_FALSE;

    info_str(d, CL_DEVICE_NAME, d->name, sizeof d->name);
    info_str(d, CL_DEVICE_VENDOR, d->vendor, sizeof d->vendor);
    info_str(d, CL_DEVICE_VERSION, d->version, sizeof d->version);
    info_str(d, CL_DRIVER_VERSION, d->driver, sizeof d->driver);
    info_str(d, CL_DEVICE_OPENCL_C_VERSION, d->c_version, sizeof d->c_version);
    clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof d->platform_name,
                      d->platform_name, NULL);
    clGetPlatformInfo(d->platform, CL_PLATFORM_VERSION,
                      sizeof d->platform_version, d->platform_version, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS,
                    sizeof d->compute_units, &d->compute_units, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg,
                    &d->max_wg, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem,
                    &d->local_mem, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem,
                    &d->global_mem, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc,
                    &d->max_alloc, NULL);
    if (d->compute_units == 0) {
        d->compute_units = 1;
    }
    if (d->max_wg == 0) {
        d->max_wg = 1;
    }
    d->is_gpu = (d->type & CL_DEVICE_TYPE_GPU) != 0;

    if (clGetDeviceInfo(d->id, CL_DEVICE_EXTENSIONS, 0, NULL, &n) ==
            CL_SUCCESS &&
        (exts = calloc(n + 1, 1)) != NULL) {
        clGetDeviceInfo(d->id, CL_DEVICE_EXTENSIONS, n, exts, NULL);
    }
    const char *e = exts ? exts : "";
    cl_device_fp_config fp = 0;
    clGetDeviceInfo(d->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL);
    d->fp64 = has_extension(e, "cl_khr_fp64") || fp != 0;
    d->atomics64 = has_extension(e, "cl_khr_int64_base_atomics");
    d->subgroups = has_extension(e, "cl_khr_subgroups");
    d->nvidia_ptx = strstr(d->vendor, "NVIDIA") != NULL ||
                    strstr(d->platform_name, "NVIDIA") != NULL;
    /* The newest OpenCL C the compiler takes: CL_DEVICE_OPENCL_C_VERSION
     * says at most 1.2 on OpenCL 3.0 devices, which list the rest in
     * CL_DEVICE_OPENCL_C_ALL_VERSIONS. */
    int cmajor = 1, cminor = 2, dmajor = 1, dminor = 2;
    sscanf(d->c_version, "OpenCL C %d.%d", &cmajor, &cminor);
    sscanf(d->version, "OpenCL %d.%d", &dmajor, &dminor);
    if (dmajor >= 3) {
        cl_name_version vs[16];
        size_t nb = 0;
        if (clGetDeviceInfo(d->id, CL_DEVICE_OPENCL_C_ALL_VERSIONS, sizeof vs,
                            vs, &nb) == CL_SUCCESS) {
            for (size_t i = 0; i < nb / sizeof *vs; ++i) {
                int mj = (int)CL_VERSION_MAJOR(vs[i].version);
                int mn = (int)CL_VERSION_MINOR(vs[i].version);
                if (mj > cmajor || (mj == cmajor && mn > cminor)) {
                    cmajor = mj;
                    cminor = mn;
                }
            }
        }
    }
    if (cmajor >= 2) {
        snprintf(d->c_std, sizeof d->c_std, "CL%d.%d", cmajor, cminor);
    }
    /* Work-group collectives: OpenCL C 2.x, or 3.0 with the feature. */
    if (cmajor == 2) {
        d->wg_collectives = 1;
    } else if (cmajor >= 3) {
        b = CL_FALSE;
        clGetDeviceInfo(d->id, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
                        sizeof b, &b, NULL);
        d->wg_collectives = b == CL_TRUE;
    }
    if (!d->subgroups && dmajor >= 3 && cmajor >= 3) {
        cl_uint nsg = 0;
        clGetDeviceInfo(d->id, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof nsg, &nsg,
                        NULL);
        d->subgroups = nsg > 0;
    }
    if (d->nvidia_ptx) {
        cl_uint major = 0;
        if (clGetDeviceInfo(d->id, 0x4000 /* COMPUTE_CAPABILITY_MAJOR_NV */,
                            sizeof major, &major, NULL) == CL_SUCCESS) {
            d->sm = (int)major;
        }
    }
    free(exts);
}

/* The Khronos ICD loader (the GPU machine's) splits OCL_ICD_FILENAMES
 * with strtok on getenv()'s own string, so the process's environment
 * keeps only the first file ("libpocl.so.2" of
 * "libpocl.so.2:libnvidia-opencl.so.1") and every child process -- Dask's
 * workers, pytest-xdist's, subprocess, multiprocessing -- saw PoCL alone:
 * local_cluster's worker for device 1:1 found no such device (issue 43).
 * The value is kept before the loader runs and put back after. */
static char *icd_filenames;

static void icd_env_keep(void)
{
    const char *v = getenv("OCL_ICD_FILENAMES");
    icd_filenames = v != NULL ? strdup(v) : NULL;
}

static void icd_env_restore(void)
{
    if (icd_filenames != NULL) {
        const char *v = getenv("OCL_ICD_FILENAMES");
        if (v == NULL || strcmp(v, icd_filenames) != 0) {
            /* a new string: the loader may still point into the old */
            setenv("OCL_ICD_FILENAMES", icd_filenames, 1);
        }
        free(icd_filenames);
        icd_filenames = NULL;
    }
}

static int platforms_count(cl_uint *np)
{
    icd_env_keep();
    const cl_int err = clGetPlatformIDs(0, NULL, np);
    icd_env_restore();
    return err == CL_SUCCESS && *np > 0;
}

int gr_runtime_init(void)
{
    cl_uint np = 0;
    cl_platform_id *plats = NULL;
    if (initialised) {
        return 0;
    }
    initialised = 1;
    pthread_atfork(NULL, NULL, on_fork_child);
    if (!platforms_count(&np)) {
        return 0; /* no OpenCL: devices() is empty, ops raise */
    }
    plats = calloc(np, sizeof *plats);
    if (plats == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    clGetPlatformIDs(np, plats, NULL);
    for (cl_uint p = 0; p < np; ++p) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) !=
                CL_SUCCESS ||
            nd == 0) {
            continue;
        }
        cl_device_id *ids = calloc(nd, sizeof *ids);
        gr_device *grown = realloc(devices, (ndevices + nd) * sizeof *devices);
        if (ids == NULL || grown == NULL) {
            free(ids);
            free(plats);
            PyErr_NoMemory();
            return -1;
        }
        devices = grown;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        for (cl_uint i = 0; i < nd; ++i) {
            gr_device *d = &devices[ndevices++];
            memset(d, 0, sizeof *d);
            d->platform = plats[p];
            d->id = ids[i];
            d->index = ndevices - 1;
            d->pidx = (int)p;
            d->didx = (int)i;
            probe(d);
        }
        free(ids);
    }
    free(plats);
    /* the table is final: its locks may be made (they must not move) */
    for (int i = 0; i < ndevices; ++i) {
        pthread_mutex_init(&devices[i].lock, NULL);
        pthread_cond_init(&devices[i].cv, NULL);
    }
    current = default_index();
    /* GPURED_DEVICE picks another; one that matches nothing warns and
     * leaves the default, so that the user can still list the devices. */
    const char *env = getenv("GPURED_DEVICE");
    if (env != NULL && env[0] != '\0') {
        int i = gr_find_device(env);
        if (i >= 0) {
            current = i;
            pinned = 1;
        } else if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                                    "GPURED_DEVICE='%s' matches no OpenCL "
                                    "device; using the default device (%s). "
                                    "gpured.devices() lists them.",
                                    env, current >= 0 ? devices[current].name
                                                      : "none") != 0) {
            return -1;
        }
    }
    return 0;
}

int gr_device_count(void) { return ndevices; }
gr_device *gr_device_get(int i) { return &devices[i]; }
int gr_current_index(void) { return current; }
int gr_device_pinned(void) { return pinned; }

void gr_unpin_device(void)
{
    current = default_index();
    pinned = 0;
}

gr_device *gr_current_device(void)
{
    if (current < 0) {
        PyErr_SetString(gr_OpenCLError,
                        "no OpenCL device found: install an OpenCL driver "
                        "(e.g. pocl-opencl-icd) or set OCL_ICD_VENDORS");
        return NULL;
    }
    return &devices[current];
}

static int ci_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *h = hay; *h; ++h) {
        size_t k = 0;
        while (k < n && h[k] &&
               tolower((unsigned char)h[k]) == tolower((unsigned char)needle[k])) {
            ++k;
        }
        if (k == n) {
            return 1;
        }
    }
    return n == 0;
}

/* "p:d" indices, or a case-insensitive substring of the device name (or of
 * the platform name, so "nvidia" and "portable" work too); -1: none. */
int gr_find_device(const char *spec)
{
    int p = -1, dd = -1;
    char tail = 0;
    if (sscanf(spec, "%d:%d%c", &p, &dd, &tail) == 2) {
        for (int i = 0; i < ndevices; ++i) {
            if (devices[i].pidx == p && devices[i].didx == dd) {
                return i;
            }
        }
        return -1;
    }
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < ndevices; ++i) {
            const char *s = pass == 0 ? devices[i].name
                                      : devices[i].platform_name;
            if (ci_contains(s, spec)) {
                return i;
            }
        }
    }
    return -1;
}

int gr_set_device(const char *spec)
{
    int i = gr_find_device(spec);
    if (i >= 0) {
        current = i;
        pinned = 1;
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "no OpenCL device matches '%s' (GPURED_DEVICE / set_device "
                 "take 'platform:device' indices or part of a device name; "
                 "gpured.devices() lists them)",
                 spec);
    return -1;
}

int gr_device_open(gr_device *d, gr_status *st)
{
    cl_int err = CL_SUCCESS;
    if (forked) {
        gr_status_kind(st, GR_E_RUNTIME, "%s", GR_FORK_MSG);
        return -1;
    }
    if (__atomic_load_n(&d->queue, __ATOMIC_ACQUIRE) != NULL) {
        return 0;
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     (cl_context_properties)d->platform, 0};
    d->ctx = clCreateContext(props, 1, &d->id, NULL, NULL, &err);
    GR_CL_CHECK_AS(st, "clCreateContext", err);
    cl_command_queue q = clCreateCommandQueue(d->ctx, d->id, 0, &err);
    GR_CL_CHECK_AS(st, "clCreateCommandQueue", err);
    __atomic_store_n(&d->queue, q, __ATOMIC_RELEASE);
    return 0;
fail:
    if (d->ctx != NULL) {
        clReleaseContext(d->ctx);
        d->ctx = NULL;
    }
    return -1;
}

int gr_profile_begin(int dev, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    cl_int err = CL_SUCCESS;
    gr_lock(d);
    if (gr_device_open(d, st) != 0) {
        gr_unlock(d);
        return -1;
    }
    if (d->prof_depth == 0) {
        if (d->prof_queue == NULL) {
            d->prof_queue = clCreateCommandQueue(d->ctx, d->id,
                                                 CL_QUEUE_PROFILING_ENABLE,
                                                 &err);
            if (err != CL_SUCCESS) {
                d->prof_queue = NULL;
                gr_unlock(d);
                st->call = "clCreateCommandQueue";
                st->err = err;
                return -1;
            }
        }
        clFinish(d->queue);
        d->plain_queue = d->queue;
        __atomic_store_n(&d->queue, d->prof_queue, __ATOMIC_RELEASE);
    }
    d->prof_depth++;
    gr_unlock(d);
    return 0;
}

void gr_profile_end(int dev)
{
    gr_device *d = gr_device_get(dev);
    gr_lock(d);
    if (d->prof_depth > 0 && --d->prof_depth == 0) {
        clFinish(d->prof_queue);
        __atomic_store_n(&d->queue, d->plain_queue, __ATOMIC_RELEASE);
    }
    gr_unlock(d);
}
