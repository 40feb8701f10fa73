/*
 * gpured — dispatch: run one request.
 *
 * api.c turns a Python call into a gr_request (operands as host pointers
 * or device blocks with shape and byte strides, the function, dtypes,
 * knobs) and calls gr_dispatch with the GIL released.  Everything between
 * the arguments and the kernels happens here:
 *
 *   reductions   axes -> an (M segments x L elements) layout: kept axes
 *                first, reduced axes last (sorted by stride when the
 *                operator ignores order, negative strides flipped), merged
 *                into one stride each where memory allows, else one copy;
 *                the plan (plan_<family>.c); host memory in place (CPU devices),
 *                uploaded, streamed through pinned buffers or split into
 *                pieces of the largest buffer (GPUs); results straight into
 *                the destination, or through the epilogue kernel (mean's
 *                division, `initial`, a cast or strides of `out`).
 *   scans        axis -> (M rows x L) for input and output alike, copies
 *                only where no such view exists; 1-D host scans stream.
 *   by-key       key check and measurement, plan, aggregation, counts.
 *
 * Device work is enqueued and not waited for; the host waits only for
 * results in host memory and for the few words a by-key plan must read
 * (key facts, reduce_by_key's run count), and then without gr_lock, so
 * other threads keep enqueuing.  Temporaries come from the device pool.
 *
 * This file is the layer's entry (gr_dispatch: which family's driver runs
 * the request); dispatch_common.h lists the layer's files, one per family plus
 * the hallway (dispatch_common.c) and the host finishing (host_epilogue.c).
 */
#include "dispatch_common.h"
#include "hostpar.h"

#include <string.h>
#include <time.h>

static double wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* The request's family's driver (reps timed under the profiling queue).
 * A run placed by gr_place is timed: its wall time re-measures the side
 * it ran on where the estimate was more than 4x off (place_remeasure.c;
 * host memory's results are complete when the driver returns). */
int gr_dispatch(gr_request *req, gr_result *res, gr_status *st)
{
    int rc;
    memset(res, 0, sizeof *res);
    gr_place_note_clear();
    const double t0 = req->mode == GR_RUN ? wall_ns() : 0.0;
    if (req->mode == GR_BENCH && gr_profile_begin(req->dev, st) != 0) {
        return -1;
    }
    /* Ctrl-C in host loops (issue 39): this thread polls between their
     * blocks, workers stop on its flag; a stopped call returns the
     * interruption whatever else it met (its results are partial: the
     * caller drops them, as on every error) */
    gr_par_intr_begin(req->interrupted, req->ictx);
    switch (req->fam) {
    case GR_FAM_REDUCE:
        rc = req->func == GR_F_REDUCEAT ? dp_run_segments(req, res, st)
             : req->exact               ? dp_run_exact(req, res, st)
                                        : dp_run_reduce(req, res, st);
        break;
    case GR_FAM_SCAN:
        rc = dp_run_scan(req, res, st);
        break;
    default:
        rc = dp_run_bykey(req, res, st);
        break;
    }
    if (gr_par_intr_end()) {
        rc = dp_stop(st);
    }
    if (req->mode == GR_BENCH) {
        gr_profile_end(req->dev);
    }
    if (rc == 0 && req->mode == GR_RUN) {
        gr_remeasure_observe(wall_ns() - t0);
    }
    return rc;
}
