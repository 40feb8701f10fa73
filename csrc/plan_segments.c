/*
 * gpured — policy layer: reduceat's planner (gr_plan_segments: segments by
 * offsets, kernels/segments.cl), with the table of its default geometry.
 * Pure: no OpenCL, no Python.
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------- segments by offsets */

/* reduceat (kernels/segments.cl): rows x L x inner elements, S segments
 * per row, the longest maxlen elements (L when unknown).  GPUs: work-groups
 * per segment where segments lie along the innermost axis and hold on
 * average at least 128 elements (coalesced aligned vector loads, a
 * reduction's combine), a long segment split among several work-groups
 * (parts) while there are too few segments to fill the device; else one
 * work-item per result.  CPUs: work-items take runs of consecutive
 * results (vector walks for sums and products), unless too few results
 * keep the cores busy. */

/* ---------------------------------------------------- geometry defaults
 * One row per kernel and device class (GPU work-groups: by the segments'
 * average length, the first row whose lo it reaches); plan->row names
 * the row that set the geometry. */
typedef struct {
    const char *row;
    size_t lo, hi;       /* segments of lo .. hi - 1 elements on average  */
    int wide;            /* GPU groups: 8-byte values                      */
    int wg, vw;
    int per, lanes;      /* warps: elements a lane, lanes at most          */
    size_t fill;         /* CPU: work-items a core                         */
    int vw_walk;         /* CPU items: vectors of sums and products ...    */
    size_t walk_min;     /* ... over segments of this many elements        */
    size_t few;          /* CPU groups: under this many results a core     */
    size_t chunk_min;    /* parts: elements a work-group at least ...      */
    size_t split;        /* ... of the elements over split x compute units */
    size_t max_groups;   /* ... while fewer work-groups than this run      */
} seg_row;

enum {
    SG_WARP, SG_ITEMS_GPU, SG_ITEMS_CPU, SG_GROUP_CPU, SG_GROUP_WIDE_LONG,
    SG_GROUP_WIDE, SG_GROUP_LONG, SG_GROUP_MID, SG_GROUP_SHORT, SG_PARTS
};

static const seg_row seg_rows[] = {
    /* Auto on GPUs by the segments' average length (H100,
     * benchmarks/exp/reduceat_knobs.py): on NVIDIA up to hi elements the
     * lanes of a warp (below 256 elements part of one: 32 / lanes
     * segments per warp), elsewhere a work-item per segment; a work-group
     * per segment from SG_GROUP_SHORT's lo on (from hi on NVIDIA).
     * Lanes: a power of two up to 32, about eight elements per lane
     * (H100: avg 16 -> 2 lanes 0.60 ms per GiB, 64 -> 8 lanes 0.54, 128
     * -> 16 lanes 0.48, 256 -> 32 lanes 0.43; one work-item per segment:
     * 0.66, 0.75, 0.79, 0.87); segments of 8 4-byte values: a work-item
     * each, 0.70 ms per GiB against 0.76 (8-byte values: a warp from 0).
     * Work-groups of 256: scalar loads, four chains per lane, few
     * leftovers. */
    [SG_WARP] = {.row = "nvidia warp lanes per segment, 16-2047",
                 .lo = 16, .hi = 2048, .wg = 256, .vw = 1, .per = 8,
                 .lanes = 32},
    [SG_ITEMS_GPU] = {.row = "gpu segment per item", .wg = 256, .vw = 1},
    /* CPUs: results per work-item (chunk): about 64 work-items per core;
     * sums and products along the innermost axis: vector walks */
    [SG_ITEMS_CPU] = {.row = "cpu runs of results per work-item", .wg = 64,
                      .vw = 1, .fill = 64, .vw_walk = 8, .walk_min = 64},
    /* CPUs: a work-group per segment where too few results keep the
     * cores busy */
    [SG_GROUP_CPU] = {.row = "cpu segment per group", .lo = 8192, .wg = 16,
                      .vw = 8, .few = 4},
    /* GPUs (H100, benchmarks/exp/reduceat_knobs.py): the shorter the
     * segments, the smaller the work-group (more elements per work-item
     * between combines); 8-byte values load scalars in wide groups */
    [SG_GROUP_WIDE_LONG] = {.row = "gpu segment per group, 8-byte, from "
                            "2048", .lo = 2048, .wide = 1, .wg = 256,
                            .vw = 1},
    [SG_GROUP_WIDE] = {.row = "gpu segment per group, 8-byte, under "
                       "2048", .lo = 512, .wide = 1, .wg = 64, .vw = 2},
    [SG_GROUP_LONG] = {.row = "gpu segment per group, from 16384",
                       .lo = 16384, .wg = 256, .vw = 4},
    [SG_GROUP_MID] = {.row = "gpu segment per group, 2048-16383",
                      .lo = 2048, .wg = 128, .vw = 4},
    [SG_GROUP_SHORT] = {.row = "gpu segment per group, under 2048",
                        .lo = 512, .wg = 32, .vw = 4},
    /* aligned vector loads; parts: work-groups of at least C elements
     * each, while fewer than 16 K work-groups would run */
    [SG_PARTS] = {.row = "segments split among work-groups",
                  .chunk_min = 8192, .split = 8, .max_groups = 16384},
};

/* The GPU work-group row for segments of avg elements. */
static const seg_row *seg_group_row(int wide, size_t avg)
{
    if (wide) {
        return &seg_rows[avg >= seg_rows[SG_GROUP_WIDE_LONG].lo
                             ? SG_GROUP_WIDE_LONG
                             : SG_GROUP_WIDE];
    }
    return &seg_rows[avg >= seg_rows[SG_GROUP_LONG].lo  ? SG_GROUP_LONG
                     : avg >= seg_rows[SG_GROUP_MID].lo ? SG_GROUP_MID
                                                        : SG_GROUP_SHORT];
}

/* The kernel kind: 1 a work-group per segment, 2 a warp's lanes, 0 a
 * work-item per result (or runs of them); auto or by name. */
static int seg_kind(const gr_device *d, const gr_accum *acc,
                    const char *name, size_t inner, size_t avg,
                    size_t results, gr_plan *plan, int *group)
{
    const size_t cu = max_sz(1, d->compute_units);
    const seg_row *w = &seg_rows[SG_WARP];
    if (strcmp(name, "auto") == 0) {
        const seg_row *c = &seg_rows[SG_GROUP_CPU];
        *group = inner == 1 &&
                 (d->is_gpu ? avg >= seg_rows[SG_GROUP_SHORT].lo
                            : results < c->few * cu && avg >= c->lo);
        if (inner == 1 && d->nvidia_ptx && avg < w->hi &&
            (avg >= w->lo || gr_dtypes[acc->t].size == 8)) {
            *group = 2; /* a warp, or part of one, per segment */
        }
    } else if (strcmp(name, "segment_per_group") == 0) {
        if (inner != 1) {
            snprintf(plan->why, sizeof plan->why,
                     "segment_per_group reads segments along the innermost "
                     "axis of a C-ordered array (here %zu results per "
                     "offset: use segment_per_item)", inner);
            return -1;
        }
        *group = 1;
    } else if (strcmp(name, "segment_per_warp") == 0) {
        if (inner != 1 || !d->nvidia_ptx) {
            snprintf(plan->why, sizeof plan->why,
                     "segment_per_warp needs NVIDIA's warps (inline PTX) and "
                     "segments along the innermost axis of a C-ordered "
                     "array");
            return -2;
        }
        *group = 2;
    } else if (strcmp(name, "segment_per_item") == 0) {
        *group = 0;
    } else {
        snprintf(plan->why, sizeof plan->why,
                 "unknown reduceat variant '%s' (auto, segment_per_group, "
                 "segment_per_warp, segment_per_item)", name);
        return -1;
    }
    return 0;
}

/* A work-group per segment: a long one split among parts. */
static void seg_group(const gr_device *d, size_t rows, size_t L,
                      size_t results, size_t maxlen, const gr_knobs *kn,
                      const seg_row *g, gr_plan *plan)
{
    const size_t cu = max_sz(1, d->compute_units);
    const seg_row *s = &seg_rows[SG_PARTS];
    plan->vw = kn->vw ? kn->vw : g->vw;
    const size_t C = max_sz(s->chunk_min, rows * L / (s->split * cu));
    const size_t cap = max_sz(1, s->max_groups / max_sz(1, results));
    plan->parts = kn->groups ? (size_t)kn->groups
                             : min_sz(cap, max_sz(1, (maxlen + C - 1) / C));
    gr_pol_second_pass(d, results, plan);
}

/* A warp's lanes per segment (chunk: lanes, items=). */
static int seg_warp(size_t avg, const gr_knobs *kn, const seg_row *g,
                    gr_plan *plan)
{
    size_t lanes = kn->items ? (size_t)kn->items
                             : warp_lanes(avg, (size_t)g->per, (size_t)g->lanes);
    if (lanes > 32 || (lanes & (lanes - 1)) != 0) {
        snprintf(plan->why, sizeof plan->why, "segment_per_warp: items "
                 "(work-items per segment) must be a power of two up to "
                 "32");
        return -1;
    }
    plan->chunk = lanes;
    plan->lanes = (int)lanes;
    plan->wg = (int)max_sz(32, (size_t)plan->wg);
    plan->vw = kn->vw ? kn->vw : g->vw;
    plan->sg = 1; /* GR_SG_PTX: the shuffles */
    return 0;
}

/* A work-item per result; on CPUs runs of results (chunk) per work-item. */
static void seg_items(const gr_device *d, gr_op op, size_t inner, size_t avg,
                      size_t results, const gr_knobs *kn, const seg_row *g,
                      gr_plan *plan)
{
    const size_t cu = max_sz(1, d->compute_units);
    if (!d->is_gpu) {
        plan->chunk = max_sz(1, results / (g->fill * cu));
        if (inner == 1 && (op == GR_ADD || op == GR_MUL) &&
            avg >= g->walk_min) {
            plan->vw = g->vw_walk;
        }
    }
    plan->vw = kn->vw ? kn->vw : plan->vw;
}

int gr_plan_segments(const gr_device *d, gr_op op, const gr_accum *acc,
                     size_t rows, size_t L, size_t inner, size_t S,
                     size_t maxlen, const gr_knobs *kn, gr_plan *plan)
{
    const char *name = (kn->variant && kn->variant[0]) ? kn->variant : "auto";
    const size_t avg = S ? L / S : 0;
    const size_t results = rows * S * inner;
    int group = 0, rc;
    memset(plan, 0, sizeof *plan);
    if (gr_pol_check_knobs(d, kn, plan) != 0) {
        return -1;
    }
    if ((rc = seg_kind(d, acc, name, inner, avg, results, plan, &group)) != 0) {
        return rc;
    }
    const int warp = group == 2;
    if (warp) {
        group = 0;
    }
    plan->kind = group ? GR_K_GROUP : warp ? GR_K_WARP : GR_K_ITEMS;
    plan->variant = group  ? "segment_per_group"
                    : warp ? "segment_per_warp"
                           : "segment_per_item";
    plan->ilp = 1;
    plan->vw = 1;
    plan->parts = 1;
    plan->passes = 1;
    plan->chunk = 1;
    const seg_row *g =
        warp ? &seg_rows[SG_WARP]
        : !group ? &seg_rows[d->is_gpu ? SG_ITEMS_GPU : SG_ITEMS_CPU]
        : !d->is_gpu ? &seg_rows[SG_GROUP_CPU]
                     : seg_group_row(gr_dtypes[acc->t].size == 8, avg);
    plan->row = g->row;
    plan->wg = kn->wg_size ? kn->wg_size : g->wg;
    plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
    if (group) {
        seg_group(d, rows, L, results, maxlen, kn, g, plan);
    } else if (warp) {
        if (seg_warp(avg, kn, g, plan) != 0) {
            return -1;
        }
    } else {
        seg_items(d, op, inner, avg, results, kn, g, plan);
    }
    plan->combine = COMB_UNROLL_COMPLETE;
    if (group && d->nvidia_ptx && plan->wg >= 32) {
        plan->combine = COMB_SUBGROUP; /* warp shuffles through PTX */
        plan->sg = 1;
    }
    snprintf(plan->why, sizeof plan->why,
             "%s: %zu result(s), %zu offset(s) over rows of %zu (%zu "
             "element(s) per segment on average, longest %zu), %zu apart; "
             "work-groups of %d, vw %d, %s",
             plan->variant, results, S, L, avg, maxlen, inner, plan->wg,
             plan->vw,
             group  ? (plan->parts > 1 ? "segments split among work-groups "
                                         "(groups), a second pass merges"
                                       : "one work-group per segment")
             : warp ? "warp lanes per segment (chunk), shuffle combine"
                    : "consecutive results per work-item (chunk)");
    return 0;
}
