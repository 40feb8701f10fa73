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
/* Auto on GPUs by the segments' average length (H100,
 * benchmarks/exp/reduceat_knobs.py): on NVIDIA up to GR_SEG_WARP_MAX
 * elements the lanes of a warp (below 256 elements part of one: 32 /
 * lanes segments per warp), elsewhere a work-item per segment; a
 * work-group per segment from GR_SEG_GROUP_MIN on (from GR_SEG_WARP_MAX
 * on NVIDIA). */
#define GR_SEG_WARP_MAX 2048
#define GR_SEG_GROUP_MIN 512

int gr_plan_segments(const gr_device *d, gr_op op, const gr_accum *acc,
                     size_t rows, size_t L, size_t inner, size_t S,
                     size_t maxlen, const gr_knobs *kn, gr_plan *plan)
{
    const char *name = (kn->variant && kn->variant[0]) ? kn->variant : "auto";
    const size_t avg = S ? L / S : 0;
    const size_t results = rows * S * inner;
    const size_t cu = max_sz(1, d->compute_units);
    int group;
    memset(plan, 0, sizeof *plan);
    if (gr_pol_check_knobs(d, kn, plan) != 0) {
        return -1;
    }
    if (strcmp(name, "auto") == 0) {
        group = inner == 1 &&
                (d->is_gpu ? avg >= GR_SEG_GROUP_MIN
                           : results < 4 * cu && avg >= 8192);
    } else if (strcmp(name, "segment_per_group") == 0) {
        if (inner != 1) {
            snprintf(plan->why, sizeof plan->why,
                     "segment_per_group reads segments along the innermost "
                     "axis of a C-ordered array (here %zu results per "
                     "offset: use segment_per_item)", inner);
            return -1;
        }
        group = 1;
    } else if (strcmp(name, "segment_per_warp") == 0) {
        if (inner != 1 || !d->nvidia_ptx) {
            snprintf(plan->why, sizeof plan->why,
                     "segment_per_warp needs NVIDIA's warps (inline PTX) and "
                     "segments along the innermost axis of a C-ordered "
                     "array");
            return -2;
        }
        group = 2;
    } else if (strcmp(name, "segment_per_item") == 0) {
        group = 0;
    } else {
        snprintf(plan->why, sizeof plan->why,
                 "unknown reduceat variant '%s' (auto, segment_per_group, "
                 "segment_per_warp, segment_per_item)", name);
        return -1;
    }
    if (strcmp(name, "auto") == 0 && inner == 1 && d->nvidia_ptx &&
        avg < GR_SEG_WARP_MAX &&
        (avg >= 16 || gr_dtypes[acc->t].size == 8)) {
        /* a warp, or part of one, per segment (segments of 8 4-byte
         * values: a work-item each, 0.70 ms per GiB against 0.76) */
        group = 2;
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
    /* GPUs (H100, benchmarks/exp/reduceat_knobs.py): the shorter the
     * segments, the smaller the work-group (more elements per work-item
     * between combines); 8-byte values load scalars in wide groups */
    const int wide = gr_dtypes[acc->t].size == 8;
    int wg = 64, vw = 1;
    if (warp) {
        wg = 256; /* scalar loads: four chains per lane, few leftovers */
    } else if (!group) {
        wg = d->is_gpu ? 256 : 64;
    } else if (!d->is_gpu) {
        wg = 16;
        vw = 8;
    } else if (wide) {
        wg = avg >= 2048 ? 256 : 64;
        vw = avg >= 2048 ? 1 : 2;
    } else {
        wg = avg >= 16384 ? 256 : avg >= 2048 ? 128 : 32;
        vw = 4;
    }
    plan->wg = kn->wg_size ? kn->wg_size : wg;
    plan->wg = (int)min_sz((size_t)plan->wg, d->max_wg);
    if (group) {
        /* aligned vector loads; parts: work-groups of at least C elements
         * each, while fewer than 16 K work-groups would run */
        plan->vw = kn->vw ? kn->vw : vw;
        const size_t C = max_sz(8192, rows * L / (8 * cu));
        const size_t cap = max_sz(1, 16384 / max_sz(1, results));
        plan->parts = kn->groups ? (size_t)kn->groups
                                 : min_sz(cap, max_sz(1, (maxlen + C - 1) / C));
        gr_pol_second_pass(d, results, plan);
    } else if (warp) {
        /* chunk: lanes per segment, a power of two up to 32 (items=):
         * about eight elements per lane (H100: avg 16 -> 2 lanes 0.60 ms
         * per GiB, 64 -> 8 lanes 0.54, 128 -> 16 lanes 0.48, 256 -> 32
         * lanes 0.43; one work-item per segment: 0.66, 0.75, 0.79, 0.87) */
        size_t lanes = kn->items ? (size_t)kn->items : warp_lanes(avg, 8, 32);
        if (lanes > 32 || (lanes & (lanes - 1)) != 0) {
            snprintf(plan->why, sizeof plan->why, "segment_per_warp: items "
                     "(work-items per segment) must be a power of two up to "
                     "32");
            return -1;
        }
        plan->chunk = lanes;
        plan->lanes = (int)lanes;
        plan->wg = (int)max_sz(32, (size_t)plan->wg);
        plan->vw = kn->vw ? kn->vw : vw;
        plan->sg = 1; /* GR_SG_PTX: the shuffles */
    } else {
        if (!d->is_gpu) {
            /* results per work-item (chunk): about 64 work-items per core;
             * sums and products along the innermost axis: vector walks */
            plan->chunk = max_sz(1, results / (64 * cu));
            if (inner == 1 && (op == GR_ADD || op == GR_MUL) && avg >= 64) {
                plan->vw = 8;
            }
        }
        plan->vw = kn->vw ? kn->vw : plan->vw;
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

