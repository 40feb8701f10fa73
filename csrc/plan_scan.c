/*
 * gpured — policy layer: scans' planner (gr_plan_scan) and their variants
 * (kernels/scan.cl), with the table of their default geometry.  Pure: no
 * OpenCL, no Python.
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

/* Results of rsize bytes, wider than the elements, staged through local
 * memory as well (kernels/scan.cl GR_STRIPE_WIDE): their tile of wg x
 * items, padded one vector in 8, beside the group scan's arrays. */
static int scan_wide_fits(const gr_device *d, size_t wg, size_t items,
                          size_t rsize)
{
    return wg * items * rsize * 9 / 8 + 8192 <= local_max(d);
}

enum { LOC_NONE = 0, LOC_NAIVE = 1, LOC_BLELLOCH = 2, LOC_WORKGROUP = 3,
       LOC_SUBGROUP = 4 };

static const char *const scan_variants[] = {
    "auto", "naive", "blelloch", "workgroup", "subgroup", "reduce_then_scan",
    "decoupled_lookback", "row_per_item", NULL};

const char *const *gr_scan_variants(void) { return scan_variants; }

#define ROW_ITEMS_GPU 32   /* rows this short: one work-item per row (GPU) */
#define MAX_REG_ITEMS 64   /* items of a tile kept in registers          */
#define ROW_ITEMS_CPU 256  /* ... (CPU: work-items are cheap threads)      */
#define CPU_TILE_BYTES 32768 /* one look-back tile per work-item: in L1    */
#define DEFAULT_SPIN 4096


/* Collectives/sub-group functions exist for add/min/max of 32/64-bit. */
static int native_ok(gr_op op, const gr_accum *acc)
{
    return (op == GR_ADD || op == GR_MIN || op == GR_MAX) &&
           (acc->a_size == 4 || acc->a_size == 8);
}

static int unavailable(const gr_device *d, gr_op op, const gr_accum *acc,
                       const char *name, char *why, size_t n)
{
    if (strcmp(name, "workgroup") == 0) {
        if (!d->wg_collectives) {
            snprintf(why, n, "variant 'workgroup' needs OpenCL 2.0 work-group "
                     "collective functions (work_group_scan_exclusive_*); "
                     "device '%s' has none", d->name);
            return 1;
        }
        if (!native_ok(op, acc)) {
            snprintf(why, n, "variant 'workgroup' covers add/min/max on 32- "
                     "and 64-bit accumulators (work_group_scan_*), not %s on "
                     "%d-byte values", gr_op_names[op], acc->a_size);
            return 1;
        }
    }
    if (strcmp(name, "subgroup") == 0) {
        if (!d->nvidia_ptx && !d->subgroups) {
            snprintf(why, n, "variant 'subgroup' needs sub-groups (NVIDIA PTX "
                     "shfl.sync or cl_khr_subgroups); device '%s' has neither",
                     d->name);
            return 1;
        }
        if (!d->nvidia_ptx && !native_ok(op, acc)) {
            snprintf(why, n, "variant 'subgroup' through cl_khr_subgroups uses "
                     "sub_group_scan_exclusive_add/min/max on 32- and 64-bit "
                     "values (not %s on %d-byte values)", gr_op_names[op],
                     acc->a_size);
            return 1;
        }
    }
    if (strcmp(name, "decoupled_lookback") == 0 && !d->atomics64) {
        snprintf(why, n, "variant 'decoupled_lookback' publishes tile status "
                 "with 64-bit atomics (cl_khr_int64_base_atomics); device "
                 "'%s' lacks them", d->name);
        return 1;
    }
    return 0;
}

int gr_scan_variant_available(const gr_device *d, gr_op op,
                              const gr_accum *acc, const char *name,
                              char *why, size_t n)
{
    int known = 0;
    for (int i = 0; scan_variants[i] != NULL; ++i) {
        known |= strcmp(scan_variants[i], name) == 0;
    }
    if (!known) {
        snprintf(why, n, "unknown variant '%s'", name);
        return 0;
    }
    return !unavailable(d, op, acc, name, why, n);
}

/* The work-group scan inside tiles when the caller did not pick one. */
static int best_local(const gr_device *d, gr_op op, const gr_accum *acc,
                      int *sg)
{
    *sg = 0;
    if (d->nvidia_ptx) {
        *sg = 1;
        return LOC_SUBGROUP;
    }
    if (d->is_gpu && d->wg_collectives && native_ok(op, acc)) {
        return LOC_WORKGROUP;
    }
    return LOC_BLELLOCH;
}

static int pow2_at_least(size_t x)
{
    int p = 1;
    while ((size_t)p < x && p < (1 << 30)) {
        p *= 2;
    }
    return p;
}

static int plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                     const gr_layout *lay, int out_contig,
                     const gr_knobs *ov, gr_scan_plan *plan);

int gr_plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                 const gr_layout *lay, int out_contig,
                 const gr_knobs *ov, gr_scan_plan *plan)
{
    const int rc = plan_scan(d, op, acc, lay, out_contig, ov, plan);
    if (rc == 0) {
        const size_t rsize = (size_t)gr_dtypes[acc->r].size;
        plan->wide = (size_t)gr_dtypes[acc->t].size < rsize && !plan->cpu_tile &&
                     scan_wide_fits(d, (size_t)plan->wg, (size_t)plan->items, rsize);
    }
    return rc;
}

static int plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                     const gr_layout *lay, int out_contig,
                     const gr_knobs *ov, gr_scan_plan *plan)
{
    const char *name = (ov->variant && ov->variant[0]) ? ov->variant : "auto";
    const int tsize = gr_dtypes[acc->t].size;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    const int rows_contig = lay->elem_stride == 1 && out_contig;
    int known = 0;

    memset(plan, 0, sizeof *plan);
    for (int i = 0; scan_variants[i] != NULL; ++i) {
        if (strcmp(scan_variants[i], name) == 0) {
            plan->variant = scan_variants[i];
            known = 1;
        }
    }
    if (!known) {
        snprintf(plan->why, sizeof plan->why,
                 "unknown variant '%s' (gpured.variants('cumsum') lists them)",
                 name);
        return -1;
    }
    if (ov->wg_size != 0 &&
        (!is_pow2(ov->wg_size) || (size_t)ov->wg_size > d->max_wg)) {
        snprintf(plan->why, sizeof plan->why,
                 "wg_size must be a power of two in [1, %zu]", d->max_wg);
        return -1;
    }
    if (ov->items != 0 && (ov->items > 65536 || !is_pow2((int)ov->items))) {
        snprintf(plan->why, sizeof plan->why,
                 "items must be a power of two in [1, 65536]");
        return -1;
    }
    if (ov->groups < 0 || ov->groups > 65535) {
        snprintf(plan->why, sizeof plan->why, "groups must be in [1, 65535]");
        return -1;
    }
    if (ov->ilp < 0 || ov->ilp > 16) {
        snprintf(plan->why, sizeof plan->why, "ilp must be in [1, 16]");
        return -1;
    }
    if (strcmp(name, "auto") == 0) {
        const size_t short_row = d->is_gpu ? ROW_ITEMS_GPU : ROW_ITEMS_CPU;
        if (!rows_contig || (lay->L <= short_row && lay->M > 1)) {
            name = "row_per_item";
        } else if (d->atomics64 && (d->is_gpu || ov->wg_size <= 1)) {
            name = "decoupled_lookback";
        } else {
            name = "reduce_then_scan";
        }
        plan->variant = name;
    }
    if (unavailable(d, op, acc, name, plan->why, sizeof plan->why)) {
        return -2;
    }
    if (!d->is_gpu && ov->wg_size > 1 &&
        strcmp(name, "decoupled_lookback") == 0) {
        /* PoCL 3.1 never finishes a look-back of tiles of several
         * work-items (2 tiles of 2 x 1 elements: no answer in minutes);
         * CPUs run one work-item per tile */
        snprintf(plan->why, sizeof plan->why,
                 "variant 'decoupled_lookback' on CPU devices runs one "
                 "work-item per tile: wg_size must be 1 (reduce_then_scan "
                 "takes larger work-groups)");
        return -1;
    }
    plan->spin = ov->spins >= 0 ? ov->spins : DEFAULT_SPIN;
    plan->ilp = 1;

    if (strcmp(name, "row_per_item") == 0) {
        plan->kind = GR_SK_ROW_ITEMS;
        plan->wg = ov->wg_size ? ov->wg_size : (d->is_gpu ? 128 : 16);
        plan->items = 1;
        /* ilp: elements a work-item loads before folding them (loads in
         * flight).  H100, 4096 x 65536 float32 down the columns: 1.99 ms
         * at 1, 0.86 at 8, 0.80 at 16, 0.81 at 32 (torch 1.92).  PoCL
         * (2 cores): columns 123 ms at 1 against 135 at 16, rows of 16
         * 8.3 against 6.3 ms (2026-11-27). */
        plan->ilp = ov->ilp ? ov->ilp : (d->is_gpu || rows_contig ? 16 : 1);
        plan->parts = 1;
        plan->chunk = lay->L;
        snprintf(plan->why, sizeof plan->why,
                 "%s rows: one work-item per row (%zu rows), sequential "
                 "along the row, %d element(s) loaded at a time (ilp), "
                 "consecutive work-items on consecutive rows",
                 rows_contig ? "short" : "strided", lay->M, plan->ilp);
        return 0;
    }
    if (!rows_contig) {
        /* Tile kernels read and write whole rows: the caller copies. */
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' needs contiguous rows", name);
        return -1;
    }

    /* Tile-based variants: local method, work-group size, items. */
    const int ladder = strcmp(name, "naive") == 0 ||
                       strcmp(name, "blelloch") == 0 ||
                       strcmp(name, "workgroup") == 0 ||
                       strcmp(name, "subgroup") == 0;
    const int vec_items = (int)max_sz(1, 16 / (size_t)tsize);
    int wg = 256, items = vec_items;
    if (strcmp(name, "naive") == 0) {
        plan->local = LOC_NAIVE;
        wg = 64;
        items = 1;
    } else if (strcmp(name, "blelloch") == 0) {
        plan->local = LOC_BLELLOCH;
        items = 2; /* the seed's two elements per work-item */
    } else if (strcmp(name, "workgroup") == 0) {
        plan->local = LOC_WORKGROUP;
        items = 1;
    } else if (strcmp(name, "subgroup") == 0) {
        plan->local = LOC_SUBGROUP;
        plan->sg = d->nvidia_ptx ? 1 : 2;
    } else {
        plan->local = best_local(d, op, acc, &plan->sg);
        /* H100 look-back tiles: 64 bytes per work-item; 128 where
         * elements and results have the same size (warp-striped loads and
         * stores through local memory, kernels/scan.cl, read again there
         * after the look-back): 256 x 32 float32, 1 GiB cumsum 1.027 ms
         * vs 1.186 ms at 256 x 16 (2026-11-23); 0.911 ms with the re-read
         * (1.101 without, 2026-11-27). */
        items = (int)max_sz(4, min_sz(16, 64 / (size_t)tsize));
        if (tsize == 4 && gr_dtypes[acc->r].size == 4 &&
            (size_t)wg * 32 * 4 + 8192 <= local_max(d)) {
            /* the tile's exchange buffer in local memory (32 KiB at
             * 256 x 32, padded): the H100's 48 KiB takes it, a 32 KiB
             * device keeps 16 (Oclgrind: 38204 bytes refused) */
            items = 32;
        }
        if (tsize == 8 && gr_dtypes[acc->r].size == 8 &&
            (size_t)128 * 32 * 8 + 8192 <= local_max(d)) {
            /* 8-byte elements and results: 128 x 32 (32 KiB staged, as
             * 256 x 32 four-byte ones).  H100, 1 GiB, kernel events, the
             * run re-read from local memory after the look-back: float64
             * cumsum 1.242 ms at 256 x 8, 1.047 at 256 x 16, 0.891 at
             * 128 x 32; int64 1.030 / 1.001 / 0.933
             * (benchmarks/exp/scan_reread.py, 2026-11-27); nancumsum
             * float64 1.071 ms at 128 x 16, 1.007 at 128 x 32 (wall) */
            wg = 128;
            items = 32;
        } else if (tsize == 4 && gr_dtypes[acc->r].size == 8 &&
                   scan_wide_fits(d, 128, 32, 8)) {
            /* 4-byte elements into 8-byte results (int32 -> int64 sums),
             * striped through local memory since 2026-11-27: H100, 1 GiB
             * int32 cumsum (wall) 2.50 ms before, 1.60 / 1.42 / 1.28 at
             * 256 x 8 / 256 x 16 / 128 x 32 (torch 3.02) */
            wg = 128;
            items = 32;
        } else if (tsize == 8 && acc->nan) {
            /* H100, 1 GiB float64 nancumsum: 256 x 8 ran at 0.80 of
             * cumsum's time (1.466 vs 1.173 ms), 128 x 16 at 0.95
             * (1.230; cumsum itself 1.170 there): fewer, longer
             * work-items hide the NaN selects
             * (benchmarks/exp/nancumsum_knobs.py) */
            wg = 128;
            items = 16;
        }
    }
    if (!d->is_gpu && !ladder) {
        /* CPUs: a work-group is one work-item with a long contiguous run. */
        wg = 1;
        items = strcmp(name, "decoupled_lookback") == 0
                    ? (int)max_sz(16, (size_t)CPU_TILE_BYTES / (size_t)tsize)
                    : vec_items;
        plan->local = LOC_NONE;
        plan->sg = 0;
    }
    if (ov->wg_size) {
        wg = ov->wg_size;
        if (!d->is_gpu && !ladder && wg > 1) {
            items = vec_items; /* CPU tiles of several work-items: the
                                * elements live in registers */
        }
    }
    if (ov->items) {
        items = (int)ov->items;
    }
    wg = (int)min_sz((size_t)wg, d->max_wg);
    if (items > MAX_REG_ITEMS &&
        !(strcmp(name, "decoupled_lookback") == 0 && !d->is_gpu && wg == 1)) {
        /* every tile kernel but the CPU's one-work-item look-back keeps a
         * work-item's elements in private arrays, unrolled: thousands of
         * them take compilers minutes and spill */
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' keeps a work-item's elements in registers: "
                 "items must be at most %d%s", name, MAX_REG_ITEMS,
                 !d->is_gpu && strcmp(name, "decoupled_lookback") == 0
                     ? " (with wg_size 1 on a CPU, up to 65536)"
                     : "");
        return -1;
    }
    if (wg == 1) {
        plan->local = LOC_NONE; /* nothing to combine across work-items */
        plan->sg = 0;
    } else if (plan->local == LOC_NONE) {
        plan->local = best_local(d, op, acc, &plan->sg);
    }
    if (plan->sg == 1 && wg < 32) {
        if (ov->wg_size) {
            snprintf(plan->why, sizeof plan->why,
                     "variant '%s' on NVIDIA scans whole warps: wg_size at "
                     "least 32", name);
            return -1;
        }
        wg = 32;
    }
    plan->wg = wg;
    plan->items = items;
    const size_t tile = (size_t)wg * (size_t)items;

    if (strcmp(name, "decoupled_lookback") == 0) {
        plan->kind = GR_SK_LOOKBACK;
        if (!d->is_gpu && wg == 1) {
            plan->cpu_tile = 1;
            plan->ilp = ov->ilp ? ov->ilp : 4;
        } else if (!ov->wg_size && d->is_gpu && lay->L < tile) {
            /* Shorter rows: a smaller tile per row. */
            size_t w = (size_t)pow2_at_least(ceil_div(lay->L, (size_t)items));
            plan->wg = (int)max_sz(plan->sg == 1 ? 32 : 1, min_sz(w, (size_t)wg));
        }
        const size_t t2 = (size_t)plan->wg * (size_t)plan->items;
        plan->tiles = ceil_div(lay->L, t2);
        plan->parts = plan->tiles;
        plan->chunk = t2;
        if (lay->M * plan->tiles >= ((size_t)1 << 32)) {
            snprintf(plan->why, sizeof plan->why,
                     "decoupled_lookback numbers tiles with 32 bits: %zu "
                     "tiles is too many (use a larger items)",
                     lay->M * plan->tiles);
            return -1;
        }
        snprintf(plan->why, sizeof plan->why,
                 "single pass, decoupled look-back: %zu tile(s) of %d x %d "
                 "element(s) per row, %s; %s combine",
                 plan->tiles, plan->wg, plan->items,
                 plan->cpu_tile ? "one contiguous run per tile, reduced then "
                                  "scanned from cache in sub-blocks"
                                : "elements in registers, staged in local "
                                  "memory where striped",
                 (const char *[]){"no", "naive", "Blelloch", "work_group_scan",
                                  "sub-group scan"}[plan->local]);
        return 0;
    }

    /* Chunks of rows: the ladder variants run one work-group per row (the
     * seed's loop) unless the rows are too few to fill the device, then
     * reduce_then_scan splits each row in chunks carrying prefixes. */
    size_t parts;
    const size_t target = d->is_gpu ? cu * max_sz(1, 2048 / (size_t)wg) : cu * 4;
    if (ov->groups) {
        parts = (size_t)ov->groups;
    } else if (ladder && lay->M >= target) {
        parts = 1;
    } else {
        parts = ceil_div(target, lay->M);
        parts = min_sz(parts, max_sz(1, lay->L / (tile * 4)));
    }
    parts = max_sz(1, min_sz(parts, 65535));
    plan->chunk = round_up(ceil_div(lay->L, parts), tile);
    plan->parts = ceil_div(lay->L, plan->chunk);
    plan->kind = plan->parts > 1 || strcmp(name, "reduce_then_scan") == 0
                     ? GR_SK_RTS
                     : GR_SK_CHUNKS;
    snprintf(plan->why, sizeof plan->why,
             "%s: %d work-items x %d element(s) per tile, %s combine; %zu "
             "chunk(s) of %zu per row%s",
             plan->kind == GR_SK_RTS ? "reduce_then_scan (reduce chunks, scan "
                                       "their states, scan chunks)"
                                     : "one work-group per row",
             plan->wg, plan->items,
             (const char *[]){"no", "naive", "Blelloch", "work_group_scan",
                              "sub-group scan"}[plan->local],
             plan->parts, plan->chunk,
             plan->kind == GR_SK_RTS ? ", 3 passes" : ", 1 pass");
    return 0;
}
