/*
 * plan_exact.c — the plan of an exact sum on a device (policy layer):
 * work-group size, expansion length and groups per segment for
 * kernels/exact.cl, from a table of rows by device class.
 */
#include "gpured.h"
#include "exact.h"

#include <stdio.h>

/* Geometry by device class; each row says what set it. */
static const struct {
    const char *row;
    int gpu;            /* 1 GPUs, 0 CPUs                                 */
    int wg, k;
    int groups_per_cu;  /* pass 1's groups for one long segment          */
} rows[] = {
    /* GPU: enough groups to fill every compute unit with four of 256
     * work-items, as the plain sum's first pass (plan_reduce) */
    {"gpu: 256 x 4 per CU, 2 doubles an item", 1, 256, 2, 4},
    /* CPU (PoCL): a group per core, 64 work-items looping over chunks */
    {"cpu: 64 x 1 per CU, 2 doubles an item", 0, 64, 2, 1},
};

int gr_plan_exact(const gr_device *d, size_t M, size_t L, gr_exact_plan *p)
{
    const int r = d->is_gpu ? 0 : 1;
    p->row = rows[r].row;
    p->k = rows[r].k;
    p->wg = rows[r].wg;
    while ((size_t)p->wg > d->max_wg && p->wg > 1) {
        p->wg /= 2;
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
    p->groups = g;
    snprintf(p->why, sizeof p->why,
             "exact: %d work-items per group, expansions of %d doubles, "
             "%zu group(s) per segment into long accumulators, rounded once "
             "(%s)", p->wg, p->k, g, p->row);
    return 0;
}
