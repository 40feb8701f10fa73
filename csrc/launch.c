/*
 * gpured — kernel launches: arguments, the enqueue, its event.
 *
 * Every family sets a kernel's arguments and enqueues it through
 * gr_launch, so that the `clSetKernelArg` ladders and their error paths are
 * written once:
 *
 *     GR_LAUNCH1(d, k, groups * wg, wg, span, st,
 *                GR_ARG(in), GR_ARG(n), GR_ARG(out));
 *
 * A span collects the events of a run (first start, last end) when the
 * caller times it; without one no event is created at all.
 */
#include "gpured.h"

int gr_launch(gr_device *d, cl_kernel k, cl_uint dims, const size_t *global,
              const size_t *local, const gr_arg *args, int n, cl_event wait,
              gr_span *sp, gr_status *st)
{
    cl_event ev = NULL;
    for (int i = 0; i < n; ++i) {
        GR_CL_CHECK_AS(st, "clSetKernelArg",
                       clSetKernelArg(k, (cl_uint)i, args[i].size,
                                      args[i].ptr));
    }
    for (cl_uint i = 0; i < dims; ++i) {
        if (global[i] == 0) {
            return 0; /* nothing to do */
        }
    }
    /* the compiled kernel may need more registers than a group of local[0]
     * work-items has (NVIDIA: 64K per group): say so, rather than the
     * launch's CL_OUT_OF_RESOURCES ("out of memory") */
    const size_t lim = local != NULL && local[0] > 256 ? gr_kernel_wg_limit(d, k)
                                                       : (size_t)-1;
    if (local != NULL && local[0] > lim) {
        gr_status_kind(st, GR_E_VALUE, "this kernel runs at most %zu "
                       "work-items per group on '%s' (its registers): use a "
                       "smaller wg_size (or items) than %zu",
                       lim, d->name, local[0]);
        return -1;
    }
    GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, k, dims, NULL, global,
                                           local, wait != NULL,
                                           wait ? &wait : NULL,
                                           sp ? &ev : NULL));
    if (sp != NULL) {
        gr_span_add(sp, ev);
    }
    return 0;
fail:
    return -1;
}

size_t gr_kernel_wg_limit(gr_device *d, cl_kernel k)
{
    size_t lim = d->max_wg;
    clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof lim,
                             &lim, NULL);
    return lim ? lim : 1;
}

/* ------------------------------------------------------------ event spans */

void gr_span_add(gr_span *s, cl_event e)
{
    if (s == NULL) {
        clReleaseEvent(e);
        return;
    }
    if (s->first == NULL) {
        s->first = e;
        clRetainEvent(e);
    }
    if (s->last != NULL) {
        clReleaseEvent(s->last);
    }
    s->last = e;
}

double gr_span_ns(const gr_span *s)
{
    cl_ulong a = 0, b = 0;
    if (s->first == NULL) {
        return 0.0;
    }
    clGetEventProfilingInfo(s->first, CL_PROFILING_COMMAND_START, sizeof a,
                            &a, NULL);
    clGetEventProfilingInfo(s->last, CL_PROFILING_COMMAND_END, sizeof b, &b,
                            NULL);
    return b > a ? (double)(b - a) : 0.0;
}

void gr_span_release(gr_span *s)
{
    if (s->first) clReleaseEvent(s->first);
    if (s->last) clReleaseEvent(s->last);
    s->first = s->last = NULL;
}
