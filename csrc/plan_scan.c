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

#define MAX_REG_ITEMS 64   /* items of a tile kept in registers          */
#define DEFAULT_SPIN 4096

/* ---------------------------------------------------- geometry defaults
 * The default geometry of every scan kernel, one row per rule: the
 * planner picks the variant's base row, then the adjustment that matches
 * (GPU tiles by element and result sizes), then the CPU's; plan->row
 * names the last row that set the geometry.  A field left 0 keeps what
 * the rows before it set. */
typedef struct {
    const char *row;
    size_t short_max;  /* auto: rows up to this length, a work-item each   */
    int wg, items;
    int vec_bytes;     /* items: a vector of this many bytes               */
    int tile_bytes;    /* items: this many bytes a work-item, clamped to
                        * items_min .. items_max (0: no bound above)       */
    int items_min, items_max;
    int ilp;           /* elements loaded at a time (rows), sub-blocks     */
    int ilp_strided;   /* ... of strided rows                              */
    int res_size;      /* tile rows: for results of this many bytes        */
    size_t fill;       /* GPU: work-items a compute unit; CPU: groups a
                        * core                                             */
} scan_row;

enum {
    SR_ROWS_GPU, SR_ROWS_CPU, SR_NAIVE, SR_BLELLOCH, SR_WORKGROUP,
    SR_SUBGROUP, SR_TILE, SR_TILE_4B, SR_TILE_8B, SR_TILE_4TO8, SR_TILE_NAN8,
    SR_CPU_LOOKBACK, SR_CPU_RUN, SR_FILL_GPU, SR_FILL_CPU
};

static const scan_row scan_rows[] = {
    /* ilp: elements a work-item loads before folding them (loads in
     * flight).  H100, 4096 x 65536 float32 down the columns: 1.99 ms at
     * 1, 0.86 at 8, 0.80 at 16, 0.81 at 32 (torch 1.92).  PoCL (2
     * cores): columns 123 ms at 1 against 135 at 16, rows of 16 8.3
     * against 6.3 ms (2026-11-27).  Rows this short: one work-item per
     * row (GPU 32; CPU 256: work-items are cheap threads). */
    [SR_ROWS_GPU] = {.row = "gpu row per item", .short_max = 32, .wg = 128,
                     .items = 1, .ilp = 16, .ilp_strided = 16},
    [SR_ROWS_CPU] = {.row = "cpu row per item", .short_max = 256, .wg = 16,
                     .items = 1, .ilp = 16, .ilp_strided = 1},
    /* the seed's ladder: naive 64 x 1, Blelloch's two elements per
     * work-item, the collectives one (sub-groups: a 16-byte vector) */
    [SR_NAIVE] = {.row = "ladder naive", .wg = 64, .items = 1},
    [SR_BLELLOCH] = {.row = "ladder blelloch", .wg = 256, .items = 2},
    [SR_WORKGROUP] = {.row = "ladder workgroup", .wg = 256, .items = 1},
    [SR_SUBGROUP] = {.row = "ladder subgroup", .wg = 256, .vec_bytes = 16},
    /* H100 look-back tiles: 64 bytes per work-item; 128 where elements
     * and results have the same size (warp-striped loads and stores
     * through local memory, kernels/scan.cl, read again there after the
     * look-back): 256 x 32 float32, 1 GiB cumsum 1.027 ms vs 1.186 ms at
     * 256 x 16 (2026-11-23); 0.911 ms with the re-read (1.101 without,
     * 2026-11-27). */
    [SR_TILE] = {.row = "gpu tiles, 64 bytes a work-item", .wg = 256,
                 .tile_bytes = 64, .items_min = 4, .items_max = 16},
    /* the tile's exchange buffer in local memory (32 KiB at 256 x 32,
     * padded): the H100's 48 KiB takes it, a 32 KiB device keeps 16
     * (Oclgrind: 38204 bytes refused) */
    [SR_TILE_4B] = {.row = "gpu tiles, 4-byte elements and results",
                    .wg = 256, .items = 32, .res_size = 4},
    /* 8-byte elements and results: 128 x 32 (32 KiB staged, as 256 x 32
     * four-byte ones).  H100, 1 GiB, kernel events, the run re-read from
     * local memory after the look-back: float64 cumsum 1.242 ms at 256 x
     * 8, 1.047 at 256 x 16, 0.891 at 128 x 32; int64 1.030 / 1.001 /
     * 0.933 (benchmarks/exp/scan_reread.py, 2026-11-27); nancumsum
     * float64 1.071 ms at 128 x 16, 1.007 at 128 x 32 (wall) */
    [SR_TILE_8B] = {.row = "gpu tiles, 8-byte elements and results",
                    .wg = 128, .items = 32, .res_size = 8},
    /* 4-byte elements into 8-byte results (int32 -> int64 sums), striped
     * through local memory since 2026-11-27: H100, 1 GiB int32 cumsum
     * (wall) 2.50 ms before, 1.60 / 1.42 / 1.28 at 256 x 8 / 256 x 16 /
     * 128 x 32 (torch 3.02) */
    [SR_TILE_4TO8] = {.row = "gpu tiles, 4-byte elements into 8-byte "
                      "results", .wg = 128, .items = 32, .res_size = 8},
    /* H100, 1 GiB float64 nancumsum: 256 x 8 ran at 0.80 of cumsum's
     * time (1.466 vs 1.173 ms), 128 x 16 at 0.95 (1.230; cumsum itself
     * 1.170 there): fewer, longer work-items hide the NaN selects
     * (benchmarks/exp/nancumsum_knobs.py) */
    [SR_TILE_NAN8] = {.row = "gpu tiles, 8-byte nan scans", .wg = 128,
                      .items = 16},
    /* CPUs: a work-group is one work-item with a long contiguous run;
     * one look-back tile per work-item: 32 KiB, in L1, scanned from
     * cache in sub-blocks of 4 */
    [SR_CPU_LOOKBACK] = {.row = "cpu look-back, a work-item's run in L1",
                         .wg = 1, .tile_bytes = 32768, .items_min = 16,
                         .ilp = 4},
    [SR_CPU_RUN] = {.row = "cpu runs of a 16-byte vector", .wg = 1,
                    .vec_bytes = 16},
    /* chunks of rows: GPUs 2048 work-items a compute unit, CPUs 4 groups
     * a core */
    [SR_FILL_GPU] = {.row = "gpu fill", .fill = 2048},
    [SR_FILL_CPU] = {.row = "cpu fill", .fill = 4},
};

/* Element and result sizes as the kernels hold them: float16 / bfloat16
 * are float in registers and in the tiles' local memory (kernels/scan.cl
 * GR_SELT), so they take float32's tiles. */
static int reg_size(gr_dtype t)
{
    return GR_IS_HALF(t) ? 4 : gr_dtypes[t].size;
}

/* A row's work-group size and items over wg and items (fields left 0
 * keep theirs). */
static void scan_apply(const scan_row *g, int tsize, int *wg, int *items,
                       gr_scan_plan *plan)
{
    if (g->wg) {
        *wg = g->wg;
    }
    if (g->items) {
        *items = g->items;
    } else if (g->vec_bytes) {
        *items = (int)max_sz(1, (size_t)g->vec_bytes / (size_t)tsize);
    } else if (g->tile_bytes) {
        const size_t it = (size_t)g->tile_bytes / (size_t)tsize;
        *items = (int)max_sz((size_t)g->items_min,
                             g->items_max ? min_sz((size_t)g->items_max, it)
                                          : it);
    }
    plan->row = g->row;
}

/* A tile row whose wg x items elements of esize bytes, staged in local
 * memory beside the group scan's arrays, fit the device. */
static int tile_fits(const gr_device *d, const scan_row *g, size_t esize)
{
    return (size_t)g->wg * (size_t)g->items * esize + 8192 <= local_max(d);
}

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

/* ------------------------------------------------------------ variant */

/* The variant's name and the knobs, checked. */
static int scan_check(const gr_device *d, const char *name,
                      const gr_knobs *ov, gr_scan_plan *plan)
{
    int known = 0;
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
    return 0;
}

/* The variant (named or auto), checked against the device. */
static int scan_variant(const gr_device *d, gr_op op, const gr_accum *acc,
                        const gr_layout *lay, int rows_contig,
                        const gr_knobs *ov, gr_scan_plan *plan,
                        const char **namep)
{
    const char *name = *namep;
    if (strcmp(name, "auto") == 0) {
        const size_t short_row =
            scan_rows[d->is_gpu ? SR_ROWS_GPU : SR_ROWS_CPU].short_max;
        if (!rows_contig || (lay->L <= short_row && lay->M > 1)) {
            name = "row_per_item";
        } else if (d->atomics64 && (d->is_gpu || ov->wg_size <= 1)) {
            name = "decoupled_lookback";
        } else {
            name = "reduce_then_scan";
        }
        plan->variant = name;
        *namep = name;
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
    return 0;
}

/* ------------------------------------------------------- row per item */

/* GR_SK_ROW_ITEMS: one work-item per row, sequential along it. */
static int plan_rows(const gr_device *d, const gr_layout *lay,
                     int rows_contig, const gr_knobs *ov, gr_scan_plan *plan)
{
    const scan_row *g = &scan_rows[d->is_gpu ? SR_ROWS_GPU : SR_ROWS_CPU];
    plan->kind = GR_SK_ROW_ITEMS;
    plan->row = g->row;
    plan->wg = ov->wg_size ? ov->wg_size : g->wg;
    plan->items = g->items;
    plan->ilp = ov->ilp ? ov->ilp : rows_contig ? g->ilp : g->ilp_strided;
    plan->parts = 1;
    plan->chunk = lay->L;
    snprintf(plan->why, sizeof plan->why,
             "%s rows: one work-item per row (%zu rows), sequential "
             "along the row, %d element(s) loaded at a time (ilp), "
             "consecutive work-items on consecutive rows",
             rows_contig ? "short" : "strided", lay->M, plan->ilp);
    return 0;
}

/* ------------------------------------------------------ tile variants */

/* The look-back and reduce_then_scan tiles' default: the GPU row by
 * element and result sizes where local memory takes it. */
static void tile_defaults(const gr_device *d, gr_op op, const gr_accum *acc,
                          int tsize, int *wg, int *items, gr_scan_plan *plan)
{
    const int rsize = reg_size(acc->r);
    plan->local = best_local(d, op, acc, &plan->sg);
    scan_apply(&scan_rows[SR_TILE], tsize, wg, items, plan);
    if (tsize == 4 && rsize == 4 &&
        tile_fits(d, &scan_rows[SR_TILE_4B], 4)) {
        scan_apply(&scan_rows[SR_TILE_4B], tsize, wg, items, plan);
    }
    const scan_row *w = &scan_rows[SR_TILE_4TO8];
    if (tsize == 8 && rsize == 8 &&
        tile_fits(d, &scan_rows[SR_TILE_8B], 8)) {
        scan_apply(&scan_rows[SR_TILE_8B], tsize, wg, items, plan);
    } else if (tsize == 4 && rsize == 8 &&
               scan_wide_fits(d, (size_t)w->wg, (size_t)w->items,
                              (size_t)w->res_size)) {
        scan_apply(w, tsize, wg, items, plan);
    } else if (tsize == 8 && acc->nan) {
        scan_apply(&scan_rows[SR_TILE_NAN8], tsize, wg, items, plan);
    }
}

/* Work-group size and items of a tile: the variant's row, the CPU's,
 * then the knobs. */
static void tile_rows(const gr_device *d, gr_op op, const gr_accum *acc,
                      const char *name, int ladder, const gr_knobs *ov,
                      int *wg, int *items, gr_scan_plan *plan)
{
    const int tsize = reg_size(acc->t);
    const int vec_items = (int)max_sz(1, 16 / (size_t)tsize);
    const int lookback = strcmp(name, "decoupled_lookback") == 0;
    if (strcmp(name, "naive") == 0) {
        plan->local = LOC_NAIVE;
        scan_apply(&scan_rows[SR_NAIVE], tsize, wg, items, plan);
    } else if (strcmp(name, "blelloch") == 0) {
        plan->local = LOC_BLELLOCH;
        scan_apply(&scan_rows[SR_BLELLOCH], tsize, wg, items, plan);
    } else if (strcmp(name, "workgroup") == 0) {
        plan->local = LOC_WORKGROUP;
        scan_apply(&scan_rows[SR_WORKGROUP], tsize, wg, items, plan);
    } else if (strcmp(name, "subgroup") == 0) {
        plan->local = LOC_SUBGROUP;
        plan->sg = d->nvidia_ptx ? 1 : 2;
        scan_apply(&scan_rows[SR_SUBGROUP], tsize, wg, items, plan);
    } else {
        tile_defaults(d, op, acc, tsize, wg, items, plan);
    }
    if (!d->is_gpu && !ladder) {
        /* CPUs: a work-group is one work-item with a long contiguous run. */
        scan_apply(&scan_rows[lookback ? SR_CPU_LOOKBACK : SR_CPU_RUN], tsize,
                   wg, items, plan);
        plan->local = LOC_NONE;
        plan->sg = 0;
    }
    if (ov->wg_size) {
        *wg = ov->wg_size;
        if (!d->is_gpu && !ladder && *wg > 1) {
            *items = vec_items; /* CPU tiles of several work-items: the
                                 * elements live in registers */
        }
    }
    if (ov->items) {
        *items = (int)ov->items;
    }
    *wg = (int)min_sz((size_t)*wg, d->max_wg);
}

/* The tile's geometry and local method, with the refusals it can meet. */
static int tile_geometry(const gr_device *d, gr_op op, const gr_accum *acc,
                         const char *name, int ladder, const gr_knobs *ov,
                         gr_scan_plan *plan)
{
    int wg = 256, items = 1;
    tile_rows(d, op, acc, name, ladder, ov, &wg, &items, plan);
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
    return 0;
}

static const char *const local_names[] = {"no", "naive", "Blelloch",
                                          "work_group_scan", "sub-group scan"};

/* GR_SK_LOOKBACK: one pass, tiles publishing their states. */
static int plan_lookback(const gr_device *d, const gr_layout *lay,
                         const gr_knobs *ov, gr_scan_plan *plan)
{
    const size_t tile = (size_t)plan->wg * (size_t)plan->items;
    plan->kind = GR_SK_LOOKBACK;
    if (!d->is_gpu && plan->wg == 1) {
        plan->cpu_tile = 1;
        plan->ilp = ov->ilp ? ov->ilp : scan_rows[SR_CPU_LOOKBACK].ilp;
    } else if (!ov->wg_size && d->is_gpu && lay->L < tile) {
        /* Shorter rows: a smaller tile per row. */
        size_t w = (size_t)pow2_at_least(ceil_div(lay->L, (size_t)plan->items));
        plan->wg = (int)max_sz(plan->sg == 1 ? 32 : 1,
                               min_sz(w, (size_t)plan->wg));
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
             local_names[plan->local]);
    return 0;
}

/* GR_SK_CHUNKS / GR_SK_RTS: chunks of rows.  The ladder variants run one
 * work-group per row (the seed's loop) unless the rows are too few to
 * fill the device, then reduce_then_scan splits each row in chunks
 * carrying prefixes. */
static int plan_chunks(const gr_device *d, const gr_layout *lay,
                       const char *name, int ladder, const gr_knobs *ov,
                       gr_scan_plan *plan)
{
    const size_t cu = d->compute_units ? d->compute_units : 1;
    const size_t tile = (size_t)plan->wg * (size_t)plan->items;
    size_t parts;
    const size_t target =
        d->is_gpu ? cu * max_sz(1, scan_rows[SR_FILL_GPU].fill /
                                       (size_t)plan->wg)
                  : cu * scan_rows[SR_FILL_CPU].fill;
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
             plan->wg, plan->items, local_names[plan->local],
             plan->parts, plan->chunk,
             plan->kind == GR_SK_RTS ? ", 3 passes" : ", 1 pass");
    return 0;
}

/* ------------------------------------------------------------ planner */

/* The variant, then the geometry of its kernel kind, then the why. */
static int plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                     const gr_layout *lay, int out_contig,
                     const gr_knobs *ov, gr_scan_plan *plan)
{
    const char *name = (ov->variant && ov->variant[0]) ? ov->variant : "auto";
    const int rows_contig = lay->elem_stride == 1 && out_contig;
    int rc;
    memset(plan, 0, sizeof *plan);
    if ((rc = scan_check(d, name, ov, plan)) != 0 ||
        (rc = scan_variant(d, op, acc, lay, rows_contig, ov, plan, &name)) != 0) {
        return rc;
    }
    plan->spin = ov->spins >= 0 ? ov->spins : DEFAULT_SPIN;
    plan->ilp = 1;
    if (strcmp(name, "row_per_item") == 0) {
        return plan_rows(d, lay, rows_contig, ov, plan);
    }
    if (!rows_contig) {
        /* Tile kernels read and write whole rows: the caller copies. */
        snprintf(plan->why, sizeof plan->why,
                 "variant '%s' needs contiguous rows", name);
        return -1;
    }
    const int ladder = strcmp(name, "naive") == 0 ||
                       strcmp(name, "blelloch") == 0 ||
                       strcmp(name, "workgroup") == 0 ||
                       strcmp(name, "subgroup") == 0;
    if (tile_geometry(d, op, acc, name, ladder, ov, plan) != 0) {
        return -1;
    }
    if (strcmp(name, "decoupled_lookback") == 0) {
        return plan_lookback(d, lay, ov, plan);
    }
    return plan_chunks(d, lay, name, ladder, ov, plan);
}

int gr_plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                 const gr_layout *lay, int out_contig,
                 const gr_knobs *ov, gr_scan_plan *plan)
{
    const int rc = plan_scan(d, op, acc, lay, out_contig, ov, plan);
    if (rc == 0) {
        const size_t rsize = (size_t)reg_size(acc->r);
        plan->wide = (size_t)reg_size(acc->t) < rsize && !plan->cpu_tile &&
                     scan_wide_fits(d, (size_t)plan->wg, (size_t)plan->items, rsize);
    }
    return rc;
}
