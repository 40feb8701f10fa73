/*
 * gpured — variant selection for prefix scans.  Pure functions of (device
 * facts, operator, types, layout, overrides), like plan.c for reductions.
 *
 * The auto choice, in a few lines:
 *   - strided rows (scans along a non-last axis) or short rows:
 *       one work-item per row ("row_per_item"), consecutive work-items on
 *       consecutive rows (coalesced for column scans);
 *   - otherwise a single pass with decoupled look-back where the device has
 *     64-bit atomics ("decoupled_lookback"):
 *       GPU: tiles of 256 work-items x 64 bytes (128 for 4-byte data) in
 *            registers, warp scans (PTX) or Blelloch inside the tile;
 *       CPU: a tile is one work-item's contiguous run that fits L1, read
 *            twice (reduce, then scan from cache) in 4 independent
 *            sub-blocks;
 *   - else reduce_then_scan (three passes).
 */
#include "gpured.h"

#include <stdio.h>
#include <string.h>

enum { LOC_NONE = 0, LOC_NAIVE = 1, LOC_BLELLOCH = 2, LOC_WORKGROUP = 3,
       LOC_SUBGROUP = 4 };

static const char *const scan_variants[] = {
    "auto", "naive", "blelloch", "workgroup", "subgroup", "reduce_then_scan",
    "decoupled_lookback", "row_per_item", NULL};

const char *const *gr_scan_variants(void) { return scan_variants; }

#define ROW_ITEMS_GPU 32   /* rows this short: one work-item per row (GPU) */
#define ROW_ITEMS_CPU 256  /* ... (CPU: work-items are cheap threads)      */
#define CPU_TILE_BYTES 32768 /* one look-back tile per work-item: in L1    */
#define DEFAULT_SPIN 4096

int gr_scan_accum(const gr_device *d, gr_op op, gr_dtype t, gr_dtype r,
                  gr_accum *acc, char *err, size_t errlen)
{
    if (op != GR_ADD && op != GR_MUL && op != GR_MIN && op != GR_MAX) {
        snprintf(err, errlen, "scans are add, multiply, minimum, maximum");
        return -1;
    }
    if ((op == GR_MIN || op == GR_MAX) && t != r) {
        snprintf(err, errlen, "cummin/cummax keep the input dtype");
        return -1;
    }
    if (gr_accum_for(d, op, t, r, acc, err, errlen) != 0) {
        return -1;
    }
    /* float32 products: in float64 too where the device has it (the sums
     * already are, through gr_accum_for). */
    if (op == GR_MUL && r == GR_FLOAT32 && d->fp64) {
        acc->a_cl = "double";
        acc->a_size = 8;
        acc->cvt = 1; /* GR_CVT_TO_A */
        acc->comp = 0;
        acc->x_size = 0;
    }
    return 0;
}

static int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
static size_t round_up(size_t a, size_t b) { return ceil_div(a, b) * b; }
static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

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

int gr_plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                 const gr_layout *lay, int out_contig,
                 const gr_scan_overrides *ov, gr_scan_plan *plan)
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
    if (ov->items != 0 && (!is_pow2(ov->items) || ov->items > 65536)) {
        snprintf(plan->why, sizeof plan->why,
                 "items must be a power of two in [1, 65536]");
        return -1;
    }
    if (ov->groups < 0 || ov->groups > 65535) {
        snprintf(plan->why, sizeof plan->why, "groups must be in [1, 65535]");
        return -1;
    }
    if (ov->ilp < 0 || ov->ilp > 8) {
        snprintf(plan->why, sizeof plan->why, "ilp must be in [1, 8]");
        return -1;
    }
    if (strcmp(name, "auto") == 0) {
        const size_t short_row = d->is_gpu ? ROW_ITEMS_GPU : ROW_ITEMS_CPU;
        if (!rows_contig || (lay->L <= short_row && lay->M > 1)) {
            name = "row_per_item";
        } else if (d->atomics64) {
            name = "decoupled_lookback";
        } else {
            name = "reduce_then_scan";
        }
        plan->variant = name;
    }
    if (unavailable(d, op, acc, name, plan->why, sizeof plan->why)) {
        return -2;
    }
    plan->spin = ov->spins >= 0 ? ov->spins : DEFAULT_SPIN;
    plan->ilp = 1;

    if (strcmp(name, "row_per_item") == 0) {
        plan->kind = GR_SK_ROW_ITEMS;
        plan->wg = ov->wg_size ? ov->wg_size : (d->is_gpu ? 128 : 16);
        plan->items = 1;
        plan->parts = 1;
        plan->chunk = lay->L;
        snprintf(plan->why, sizeof plan->why,
                 "%s rows: one work-item per row (%zu rows), sequential "
                 "along the row, consecutive work-items on consecutive rows",
                 rows_contig ? "short" : "strided", lay->M);
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
        /* H100 look-back tiles: 64 bytes per work-item in registers;
         * 128 when elements and results are 4 bytes (warp-striped loads
         * and stores, kernels/scan.cl): 256 x 32 float32, 1 GiB cumsum
         * 1.027 ms vs 1.186 ms at 256 x 16 (2026-11-23). */
        items = (int)max_sz(4, min_sz(16, 64 / (size_t)tsize));
        if (tsize == 4 && gr_dtypes[acc->r].size == 4) {
            items = 32;
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
    }
    if (ov->items) {
        items = ov->items;
    }
    wg = (int)min_sz((size_t)wg, d->max_wg);
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
                                : "elements in registers",
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
