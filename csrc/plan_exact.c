/*
 * plan_exact.c — the plan of an exact sum on a device (policy layer):
 * work-group size, loads in flight, expansion length and groups per
 * segment for kernels/exact.cl, from a table of rows by device class; the
 * knobs wg_size, items (loads in flight) and groups override them.
 */
#include "gpured.h"
#include "exact.h"

#include <stdio.h>

/* Geometry by device class; each row says what set it. */
static const struct {
    const char *row;
    int gpu;            /* 1 GPUs, 0 CPUs                                 */
    int wg, k, u;
    int groups_per_cu;  /* pass 1's groups for one long segment          */
} rows[] = {
    /* GPU: four groups of 256 a compute unit, eight loads in flight an
     * item (H200, 1 GiB device Arrays, 2026-11-28, exact_bench.py: one
     * load in flight 1.04 / 0.58 ms float32 / float64, eight 0.52 / 0.33) */
    {"gpu: 256 x 4 per CU, 8 loads, 2 doubles an item", 1, 256, 2, 8, 4},
    /* CPU (PoCL): a group per core, 64 work-items looping over chunks */
    {"cpu: 64 x 1 per CU, 8 loads, 2 doubles an item", 0, 64, 2, 8, 1},
};

int gr_plan_exact(const gr_device *d, size_t M, size_t L, const gr_knobs *kn,
                  gr_exact_plan *p)
{
    const int r = d->is_gpu ? 0 : 1;
    p->row = rows[r].row;
    p->k = rows[r].k;
    p->u = kn->items > 0 ? (int)(kn->items > 32 ? 32 : kn->items) : rows[r].u;
    p->wg = kn->wg_size > 0 ? kn->wg_size : rows[r].wg;
    while ((size_t)p->wg > d->max_wg && p->wg > 1) {
        p->wg /= 2;
    }
    if (p->wg & (p->wg - 1)) {
        snprintf(p->why, sizeof p->why, "exact sums take a power-of-two "
                 "wg_size (their tree), not %d", p->wg);
        return -2;
    }
    if (!d->fp64 || !d->atomics64) {
        snprintf(p->why, sizeof p->why,
                 "exact sums on a device need fp64 and 64-bit integer atomics "
                 "(%.120s has %s)", d->name, d->fp64 ? "no 64-bit atomics"
                                                   : "no fp64");
        return -2;
    }
    /* groups per segment: the device's share over the segments, and no
     * more than the segment's elements need (one a work-item at least) */
    const size_t want = (size_t)d->compute_units * rows[r].groups_per_cu;
    size_t g = (want + M - 1) / M;
    const size_t most = (L + p->wg - 1) / p->wg;
    g = g < 1 ? 1 : g > most ? (most ? most : 1) : g;
    p->groups = kn->groups > 0 ? (size_t)kn->groups : g;
    snprintf(p->why, sizeof p->why,
             "exact: %d work-items per group, %d loads in flight, expansions "
             "of %d doubles, %zu group(s) per segment into long accumulators, "
             "rounded once (%.100s)", p->wg, p->u, p->k, p->groups, p->row);
    return 0;
}
