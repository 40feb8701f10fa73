/*
 * gpured — policy layer: the elementwise family's planner
 * (gr_plan_elementwise), with the table of its default geometry.  Pure:
 * no OpenCL, no Python; every decision can be shown for a synthetic
 * device (_core.ew_plan_for) and for a call (gpured.explain("add", ...)).
 *
 * An elementwise call is one memory-bound pass: the only choices are the
 * work-group size and how many result elements each work-item writes
 * (kernels/elementwise.cl's grid-stride loop).
 */
#include "elementwise.h"
#include "policy.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------- geometry defaults
 * One row per kind of device; plan->row names it. */
typedef struct {
    const char *row;
    int wg;            /* work-items a group (clamped to the device's)     */
    int items;         /* result elements a work-item                      */
} ew_row;

enum { ER_GPU, ER_CPU };

static const ew_row ew_rows[] = {
    /* H200, one launch of d * 2 on a 1 GiB float32 Array, wall clock
     * (benchmarks/exp/ew_plan_h200.py, commit e980740+, 2026-11-28):
     * wg 256 x 1 element 0.823 ms (2.61 TB/s), 256 x 8 0.673, 128 x 2
     * 0.698, 128 x 4 0.658, 128 x 8 0.656 (3.27 TB/s), 128 x 16 0.657;
     * CuPy 1.279, torch 0.516.  Several elements a work-item (grid
     * stride) hide the loads' latency. */
    [ER_GPU] = {.row = "gpu 8 elements a work-item", .wg = 128, .items = 8},
    /* PoCL 5 on the 2-core CI-class machine (shared, noisy), one launch
     * of d * 2 on 4 MiB float32 (benchmarks/exp/ew_plan_h200.py,
     * EW_LOG2=20, 2026-11-28): 0.62-1.6 ms for wg 128-1024 x items 1-8
     * (256 x 1: 0.97), 4-10 ms at 16 items; no geometry clearly better,
     * so the one every device ran before this table. */
    [ER_CPU] = {.row = "cpu one element a work-item", .wg = 256, .items = 1},
};

int gr_plan_elementwise(const gr_device *d, size_t n, size_t wg,
                        size_t items, gr_ew_plan *p)
{
    memset(p, 0, sizeof *p);
    const ew_row *r = &ew_rows[d->is_gpu ? ER_GPU : ER_CPU];
    const size_t most = d->max_wg ? d->max_wg : 256;
    if (wg != 0 && (!is_pow2((int)min_sz(wg, 1u << 30)) || wg > most)) {
        snprintf(p->why, sizeof p->why,
                 "wg_size must be a power of two in [1, %zu]", most);
        return -1;
    }
    p->row = r->row;
    p->wg = wg ? wg : (size_t)pow2_at_most(min_sz((size_t)r->wg, most));
    p->items = items ? items : (size_t)r->items;
    const size_t per = p->wg * p->items;
    p->groups = n == 0 ? 0 : ceil_div(n, per);
    snprintf(p->why, sizeof p->why,
             "%s device: %zu work-groups of %zu work-items, %zu result "
             "element%s each (row '%s'%s)",
             d->is_gpu ? "GPU" : "CPU", p->groups, p->wg, p->items,
             p->items == 1 ? "" : "s", r->row,
             wg || items ? ", knobs given" : "");
    return 0;
}
