/*
 * gpured — policy layer: reduce-by-key's planner (gr_bk_plan_for), its
 * types (gr_bk_types_init) and variants (kernels/bykey.cl), with the table
 * of their default geometry.  Pure: no OpenCL, no Python.
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

const char *const gr_bk_variant_names[] = {
    "atomic", "warp_aggregated", "local_hash", "sorted_segments",
    "private_bins", "lookback", "fixed_point", NULL};
const char *const gr_bk_func_names[] = {"reduce_by_key", "sum_by_key",
                                            "scan_by_key"};

int gr_bk_types_init(const gr_device *d, gr_bk_types *ty, char *err,
                     size_t n)
{
    const gr_dtype_info *vi = &gr_dtypes[ty->v];
    if (!(ty->k >= GR_INT8 && ty->k <= GR_UINT64)) {
        snprintf(err, n, "keys must be integers, int8 .. uint64 (got %s)",
                 gr_dtypes[ty->k].name);
        return -1;
    }
    if (!ty->count && !(ty->v >= GR_INT32 && ty->v <= GR_FLOAT64)) {
        snprintf(err, n, "values must be int32, int64, uint32, uint64, "
                 "float32 or float64 (got %s)", vi->name);
        return -1;
    }
    if (!ty->count && ty->v == GR_FLOAT64 && !d->fp64) {
        snprintf(err, n, "dtype float64 is not supported by device '%s' "
                 "(no fp64)", d->name);
        return -1;
    }
    if (ty->count) {
        ty->r = GR_INT64;
    } else if (ty->op == GR_ADD || ty->op == GR_MUL) {
        ty->r = vi->is_float ? ty->v
                : vi->is_signed ? GR_INT64 : GR_UINT64; /* NumPy's add.reduce */
    } else {
        ty->r = ty->v;
    }
    return 0;
}

/* Bytes of a key and its value (reduce_by_key's lookback stages both). */
static size_t bk_pair_size(const gr_bk_types *ty)
{
    return (size_t)gr_dtypes[ty->k].size +
           (ty->count ? 0 : (size_t)gr_dtypes[ty->v].size);
}

/* Local memory of gr_bk_lb_tiles (bykey.cl): keys and values of wg x it
 * elements with a padding word every 32, the scan's flag, count and
 * accumulator per work-item (4 + 8 + 8 bytes), two words. */
static size_t bk_lb_local(size_t wg, size_t it, size_t esz)
{
    return (wg * it + wg * it / 32) * esz + wg * 20 + 16;
}

/* A lookback tile of wg x it pairs of esz bytes stages at most 32 KiB and
 * fits the device's local memory. */
static int bk_lb_fits(const gr_device *d, size_t wg, size_t it, size_t esz)
{
    return wg * it * esz <= 32768 && bk_lb_local(wg, it, esz) <= local_max(d);
}

/* fixed_point: sum_by_key of float values into 128-bit integer
 * accumulators by 64-bit integer atomics (kernels/bykey.cl, "fixed-point
 * sums"): 16 GR_FX_WMAX + 4 bytes a key; float64 rounds in fp64, float32
 * in float. */
static int bk_fixed_ok(const gr_device *d, gr_bk_func f, const gr_bk_types *ty,
                       size_t n, size_t nk, char *why, size_t len)
{
    const char *no = f != GR_BK_DENSE ? "runs sum_by_key only"
                     : n > ((size_t)1 << 31)
                         ? "sums at most 2^31 values (32 bits of headroom)"
                     : ty->count || ty->op != GR_ADD ||
                             !gr_dtypes[ty->v].is_float
                         ? "sums float32 or float64 values only"
                     : !d->atomics64 ? "needs cl_khr_int64_base_atomics"
                     : ty->v == GR_FLOAT64 && !d->fp64 ? "needs fp64"
                     : d->max_alloc &&
                             nk > (d->max_alloc - 16) / (16 * GR_FX_WMAX + 4)
                         ? "keeps 68 bytes a key: too many keys"
                         : NULL;
    if (no != NULL && why != NULL) {
        snprintf(why, len, "variant 'fixed_point' %s (device '%.64s', %s %s)",
                 no, d->name, ty->count ? "count" : gr_dtypes[ty->v].name,
                 gr_bk_func_names[f]);
    }
    return no == NULL;
}

/* Integer values (and counts): atomics add, min and max them exactly, so
 * every sum_by_key variant gives the same bits in any order and
 * deterministic=True needs no sort. */
int gr_bk_exact(const gr_bk_types *ty)
{
    return ty->count || !gr_dtypes[ty->v].is_float;
}

/* ---------------------------------------------------- geometry defaults
 * The default geometry of every by-key kernel, one row per variant and
 * device class (plan->row names it); a field left 0 is not used. */
typedef struct {
    const char *row;
    int wg;            /* work-items per group                             */
    size_t items;      /* items a work-item (lookback: the largest tried)  */
    size_t items_min;  /* at least this many (by fill)                     */
    size_t fill;       /* GPU: groups a compute unit; CPU: groups (or
                        * parts) a core                                    */
    double min_run;    /* auto: mean run length from which it is chosen    */
    double max_bytes;  /* auto: private copies of at most this many bytes  */
    double keys_per_n; /* auto: bins at most this many per element         */
    int bins, bins_wide; /* local_hash: bins of 4- / 8-byte results        */
} bk_row;

enum {
    BR_GPU_LB, BR_GPU_LB_WIDE, BR_GPU_SEG, BR_GPU_PRIV, BR_GPU_ATOMIC,
    BR_GPU_WARP, BR_GPU_HASH, BR_CPU_LB, BR_CPU_SEG, BR_CPU_PRIV,
    BR_CPU_ATOMIC, BR_CPU_WARP, BR_CPU_HASH, BR_BINS
};

static const bk_row bk_rows[] = {
    /* lookback, H100, 2^28 int32 keys / f32 (benchmarks/exp/
     * bykey_lb.py, events): wg 256 x 16 items 1.076 ms, 128 x 16 1.097,
     * 128 x 32 1.096, 256 x 8 1.360.  Items: the largest power of two up
     * to 16 that fits: 16-byte loads from 4 up, and a work-item's
     * elements share one padding step in local memory */
    [BR_GPU_LB] = {.row = "gpu lookback 256 x 16", .wg = 256, .items = 16},
    /* 16 items a work-item where 256 x 16 does not fit: pairs of 12 or 16
     * bytes (H100, 2^27 runs of 64: int64/f64 128 x 16 1.039 ms, 256 x 8
     * 1.042; int32/f64 0.802, 0.827; 256 x 16, 0.77-0.99, takes 48-64
     * KiB), devices with 32 KiB */
    [BR_GPU_LB_WIDE] = {.row = "gpu lookback, wide pairs 128 x 16",
                        .wg = 128, .items = 16},
    /* H100, 2^28 int32 keys in runs of 64: items 8 3.40 ms, 16 4.47 ms,
     * 32 22.3 ms. */
    [BR_GPU_SEG] = {.row = "gpu sorted segments", .wg = 256, .items = 8},
    [BR_GPU_PRIV] = {.row = "gpu private bins", .wg = 256, .fill = 1},
    [BR_GPU_ATOMIC] = {.row = "gpu atomics", .wg = 256, .fill = 32},
    /* H100, 10 Mi f64 into 1 Mi keys, runs of 10: warp_aggregated 0.128
     * ms, atomic 0.164, sorted_segments 0.295 (sorted); 0.126 vs 0.153
     * (partly sorted).  Random keys: atomic 0.196 ms, warp_aggregated
     * 0.246. */
    [BR_GPU_WARP] = {.row = "gpu warp-aggregated atomics", .wg = 256,
                     .fill = 32, .min_run = 2.0},
    /* a tile of several elements per bin window */
    [BR_GPU_HASH] = {.row = "gpu local hash", .wg = 256, .fill = 32,
                     .items_min = 8},
    [BR_CPU_LB] = {.row = "cpu lookback", .wg = 1, .items = 16},
    /* CPUs: 8 parts a core, 4096 items at least */
    [BR_CPU_SEG] = {.row = "cpu sorted segments", .wg = 1, .fill = 8,
                    .items_min = 4096},
    /* CPUs: one private copy of the bins per core, up to 512 MiB of
     * them and 4 bins an element */
    [BR_CPU_PRIV] = {.row = "cpu private bins", .wg = 1, .fill = 1,
                     .max_bytes = 512.0 * 1024 * 1024, .keys_per_n = 4.0},
    [BR_CPU_ATOMIC] = {.row = "cpu atomics", .wg = 1, .fill = 4},
    [BR_CPU_WARP] = {.row = "cpu warp-aggregated atomics", .wg = 64,
                     .fill = 4},
    [BR_CPU_HASH] = {.row = "cpu local hash", .wg = 64, .fill = 4,
                     .items_min = 8},
    [BR_BINS] = {.row = "local hash bins", .bins = 2048, .bins_wide = 1024},
};

/* The row of variant v on device d (lookback: by its tile's fit). */
static const bk_row *bk_row_for(const gr_device *d, int v,
                                const gr_bk_types *ty)
{
    switch (v) {
    case GR_BKV_LOOKBACK:
        if (!d->is_gpu) {
            return &bk_rows[BR_CPU_LB];
        }
        return &bk_rows[bk_lb_fits(d, (size_t)bk_rows[BR_GPU_LB].wg,
                                   bk_rows[BR_GPU_LB].items, bk_pair_size(ty))
                            ? BR_GPU_LB
                            : BR_GPU_LB_WIDE];
    case GR_BKV_SEGMENTS:
        return &bk_rows[d->is_gpu ? BR_GPU_SEG : BR_CPU_SEG];
    case GR_BKV_PRIV:
        return &bk_rows[d->is_gpu ? BR_GPU_PRIV : BR_CPU_PRIV];
    case GR_BKV_WARP:
        return &bk_rows[d->is_gpu ? BR_GPU_WARP : BR_CPU_WARP];
    case GR_BKV_HASH:
        return &bk_rows[d->is_gpu ? BR_GPU_HASH : BR_CPU_HASH];
    default:
        return &bk_rows[d->is_gpu ? BR_GPU_ATOMIC : BR_CPU_ATOMIC];
    }
}

/* p->why from a scratch buffer, cut as snprintf into p->why would cut
 * it (the device's name can fill it alone). */
static void bk_why(gr_bk_plan *p, const char *msg)
{
    size_t n = strlen(msg);
    if (n >= sizeof p->why) {
        n = sizeof p->why - 1;
    }
    memcpy(p->why, msg, n);
    p->why[n] = '\0';
}

/* private_bins in local memory (gr_bk_lbins): copies of the nk bins of
 * a_size bytes in at most 32 KiB of the device's local memory, one a
 * work-item of wg where they fit (no atomics), else the most (a power of
 * two, up to 32) that fit.  0 where one copy does not fit, or the device
 * cannot fold a_size bytes by atomics. */
int gr_bk_lbins_copies(const gr_device *d, size_t nk, int a_size, int wg,
                       size_t *words)
{
    size_t cap = local_max(d) > 1024 ? local_max(d) - 1024 : 0;
    cap = (cap < 32768 ? cap : 32768) / (size_t)a_size;
    size_t c = (size_t)wg;
    if (nk == 0 || (a_size == 8 && !d->atomics64) || nk > cap) {
        return 0;
    }
    if (nk * c > cap) {
        for (c = wg < 32 ? (size_t)wg : 32; c > 1 && nk * c > cap; c /= 2) {
        }
    }
    if (words != NULL) {
        size_t w = 1;
        while (w < nk * c) {
            w *= 2; /* a few program variants, not one per num_keys */
        }
        *words = w <= cap ? w : nk * c;
    }
    return (int)c;
}

/* ------------------------------------------------------------ variant */

/* A variant asked for by name: known, and able to run this call. */
static int bk_requested(const gr_device *d, gr_bk_func f,
                        const gr_bk_types *ty, const gr_bk_facts *facts,
                        const char *want, int a_size, int det, gr_bk_plan *p)
{
    char msg[sizeof p->why + 256];
    int v = -1;
    for (int i = 0; gr_bk_variant_names[i] != NULL; ++i) {
        if (strcmp(want, gr_bk_variant_names[i]) == 0) {
            v = i;
        }
    }
    if (v < 0) {
        snprintf(p->why, sizeof p->why, "unknown variant '%s' (known: "
                 "auto, atomic, warp_aggregated, local_hash, "
                 "sorted_segments, private_bins, lookback, "
                 "fixed_point)", want);
        return -1;
    }
    if (v == GR_BKV_FIXED &&
        !bk_fixed_ok(d, f, ty, facts->n, facts->num_keys, p->why,
                     sizeof p->why)) {
        return -2;
    }
    if (v == GR_BKV_LOOKBACK && f == GR_BK_SCAN) {
        snprintf(p->why, sizeof p->why, "variant 'lookback' runs "
                 "reduce_by_key and sum_by_key only (asked for it in "
                 "%s)", gr_bk_func_names[f]);
        return -2;
    }
    if (f != GR_BK_DENSE && v != GR_BKV_SEGMENTS &&
        v != GR_BKV_LOOKBACK) {
        snprintf(p->why, sizeof p->why, "%s keeps every run of keys in "
                 "input order: only variant 'sorted_segments'%s (asked "
                 "for '%s')", gr_bk_func_names[f],
                 f == GR_BK_REDUCE ? " or 'lookback'" : "", want);
        return -2;
    }
    if (v == GR_BKV_LOOKBACK && !d->atomics64) {
        snprintf(msg, sizeof msg, "variant 'lookback' needs "
                 "cl_khr_int64_base_atomics (status words); device '%s' "
                 "has none", d->name);
        bk_why(p, msg);
        return -2;
    }
    if (v != GR_BKV_SEGMENTS && v != GR_BKV_PRIV &&
        v != GR_BKV_LOOKBACK && a_size == 8 &&
        !d->atomics64) {
        snprintf(msg, sizeof msg, "variant '%s' on 64-bit results "
                 "needs cl_khr_int64_base_atomics; device '%s' has none",
                 want, d->name);
        bk_why(p, msg);
        return -2;
    }
    if (det && v != GR_BKV_SEGMENTS && v != GR_BKV_LOOKBACK &&
        v != GR_BKV_FIXED) {
        snprintf(p->why, sizeof p->why, "deterministic=True runs "
                 "'sorted_segments', 'lookback' or 'fixed_point' (no "
                 "float value through an atomic); '%s' is not "
                 "reproducible", want);
        return -2;
    }
    snprintf(p->why, sizeof p->why, "variant '%s' requested", want);
    return v;
}

/* exact=True (sum_by_key of floats): fixed-point windows over the values'
 * whole exponent range on the device -- float32's 4 windows always cover
 * it, float64 gets GR_FX_WMAX_EXACT a key, so no value takes the per-key
 * path that drops bits -- else each key's long accumulator on the host
 * (CPU devices, no 64-bit atomics, past 2^31 values, windows past the
 * largest buffer, or variant 'host' asked for). */
static int bk_exact_plan(const gr_device *d, const gr_bk_types *ty,
                         const gr_bk_facts *facts, const char *want,
                         gr_bk_plan *p)
{
    char no[sizeof p->why];
    const int f64 = ty->v == GR_FLOAT64;
    const int wmax = f64 ? GR_FX_WMAX_EXACT : GR_FX_WMAX;
    const size_t nk = facts->num_keys;
    const int host = want != NULL && strcmp(want, "host") == 0;
    if (want != NULL && !host && strcmp(want, "fixed_point") != 0) {
        snprintf(p->why, sizeof p->why, "exact=True runs variant "
                 "'fixed_point' (device) or 'host' (asked for '%.64s')",
                 want);
        return -2;
    }
    int ok = bk_fixed_ok(d, GR_BK_DENSE, ty, facts->n, nk, no, sizeof no);
    if (ok && d->max_alloc &&
        (nk > ((size_t)1 << 40) || GR_FX_BYTES(nk, wmax) > d->max_alloc)) {
        ok = 0;
        snprintf(no, sizeof no, "exact fixed-point sums keep %d bytes a "
                 "key: %zu keys pass device '%.64s''s largest buffer",
                 16 * wmax + 4, nk, d->name);
    }
    if (!ok && want != NULL && !host) {
        bk_why(p, no);
        return -2;
    }
    if (ok && !host && (d->is_gpu || want != NULL)) {
        p->exact = 1;
        p->fx_wmax = wmax;
        snprintf(p->why, sizeof p->why, "exact=True: fixed-point sums by "
                 "64-bit integer atomics, %d windows of %d exponents a key "
                 "(the whole %s range, nothing dropped), rounded once", wmax,
                 f64 ? 43 : 72, f64 ? "float64" : "float32");
        return GR_BKV_FIXED;
    }
    /* CPU devices: their memory is the host's, and the host's threads add
     * without atomics (PoCL, 2 shared cores, 16 Mi values into 1024
     * random keys, 2026-11-28, benchmarks/exp/bykey_exact.py, whole calls,
     * best of 5: float32 fixed_point 801 ms, the host 284 ms; float64
     * 1049 / 428 ms) */
    p->exact = 2;
    snprintf(p->why, sizeof p->why, "exact=True on the host: a long "
             "accumulator a key, rounded once (%.190s)",
             host ? "variant 'host' requested"
             : ok ? "CPU device: the host's threads add without atomics"
                  : no);
    return GR_BKV_FIXED;
}

/* Auto for sum_by_key without determinism.  Mean run length (n / heads)
 * says how much aggregating equal neighbours saves; descents say whether
 * runs are complete (sorted keys). */
static int bk_auto_dense(const gr_device *d, const gr_bk_facts *facts,
                         int a_size, gr_bk_plan *p)
{
    const double n = facts->n ? (double)facts->n : 1.0;
    const double run = facts->heads ? n / (double)facts->heads : 1.0;
    const int sorted = facts->sorted >= 0 ? facts->sorted
                                          : facts->descents == 0;
    const size_t parts = d->compute_units ? d->compute_units : 1;
    const double priv_bytes = (double)parts * (double)facts->num_keys * 8;
    const bk_row *priv = &bk_rows[BR_CPU_PRIV];
    if (!d->is_gpu && priv_bytes <= priv->max_bytes &&
        (double)facts->num_keys <= priv->keys_per_n * n) {
        snprintf(p->why, sizeof p->why, "CPU: one private copy of the "
                 "%zu bins per core (%.0f MiB), no atomics",
                 facts->num_keys, priv_bytes / 1048576.0);
        return GR_BKV_PRIV;
    }
    if (!d->is_gpu || (a_size == 8 && !d->atomics64)) {
        snprintf(p->why, sizeof p->why, "%s: sorted segments",
                 d->is_gpu ? "no 64-bit atomics" : "CPU, bins too many "
                 "to privatise");
        return GR_BKV_SEGMENTS;
    }
    /* Few keys: the bins privatised in local memory, folded once a
     * work-group.  With a copy a work-item no atomic lands on a bin
     * twice, whatever the order or skew of the keys; with fewer copies
     * (8..32), local atomics share a copy between wg / copies work-items,
     * still no global traffic but one atomic a bin a work-group
     * (benchmarks/exp/bins_h200.py). */
    const int wg = bk_rows[BR_GPU_PRIV].wg;
    const size_t nk = facts->num_keys;
    const int lc = gr_bk_lbins_copies(d, nk, a_size, wg, NULL);
    if (lc == wg) {
        snprintf(p->why, sizeof p->why, "GPU, %zu keys: private bins in "
                 "local memory, a copy a work-item (%d x %zu), no atomic "
                 "but one a bin a work-group, any order or skew", nk, wg, nk);
        return GR_BKV_PRIV;
    }
    if (lc >= 8 && (facts->unmeasured || run < bk_rows[BR_GPU_WARP].min_run)) {
        snprintf(p->why, sizeof p->why, "GPU, %zu keys, %s: private bins "
                 "in local memory, %d copies (local atomics), one global "
                 "atomic a bin a work-group", nk,
                 facts->unmeasured ? "order not measured" : "keys in no order",
                 lc);
        return GR_BKV_PRIV;
    }
    if (facts->unmeasured) {
        /* NVIDIA, num_keys given: no pass over the keys before the
         * kernel (the key check is fused into it), so no run length;
         * warp_aggregated falls back to plain atomics in warps whose
         * keys all differ. */
        snprintf(p->why, sizeof p->why, "GPU, keys not measured (check "
                 "fused into the kernel): one atomic per run of equal "
                 "keys per warp, plain atomics where keys all differ");
        return GR_BKV_WARP;
    }
    if (run >= bk_rows[BR_GPU_WARP].min_run) {
        snprintf(p->why, sizeof p->why, "GPU, runs of %.1f equal keys "
                 "(%s): one atomic per key per warp", run,
                 sorted ? "sorted" : "not sorted");
        return GR_BKV_WARP;
    }
    snprintf(p->why, sizeof p->why, "GPU, keys in no order (runs of "
             "%.1f): one atomic per element", run);
    return GR_BKV_ATOMIC;
}

/* Auto: the variant for this function, device and keys. */
static int bk_auto(const gr_device *d, gr_bk_func f, const gr_bk_types *ty,
                   const gr_bk_facts *facts, int a_size, int det,
                   gr_bk_plan *p)
{
    if (f == GR_BK_REDUCE && d->is_gpu && d->atomics64) {
        /* H100, 2^28 int32 keys in runs of 64, f32: lookback 1.95 ms,
         * sorted_segments 3.43 ms.  Reproducible: atomics carry tickets
         * and head counts, never values. */
        snprintf(p->why, sizeof p->why, "reduce_by_key on a GPU: one pass, "
                 "decoupled look-back over the tiles' head counts");
        return GR_BKV_LOOKBACK;
    }
    if (f != GR_BK_DENSE) {
        snprintf(p->why, sizeof p->why, "%s: head flags + segmented scan",
                 gr_bk_func_names[f]);
        return GR_BKV_SEGMENTS;
    }
    if (det && d->is_gpu && facts->descents != 0 &&
        bk_fixed_ok(d, f, ty, facts->n, facts->num_keys, NULL, 0)) {
        /* H100, 10 Mi float64 values into 2^20 random keys: see
         * docs/journal/BENCHMARKS.md (the radix sort, then lookback: 0.90 ms) */
        snprintf(p->why, sizeof p->why, "deterministic float sums on a GPU, "
                 "keys not sorted: fixed-point sums by integer atomics, "
                 "rounded once (the same bits in any order)");
        return GR_BKV_FIXED;
    }
    if (det && d->is_gpu && d->atomics64) {
        /* H100, 10 Mi f64 values, 2^20 sorted keys: see docs/journal/BENCHMARKS.md */
        snprintf(p->why, sizeof p->why, "deterministic on a GPU: the runs "
                 "of sorted keys in one pass (decoupled look-back, no value "
                 "through an atomic), each run then to its bin");
        return GR_BKV_LOOKBACK;
    }
    if (det) {
        snprintf(p->why, sizeof p->why, "deterministic: sorted segments, "
                 "no atomics");
        return GR_BKV_SEGMENTS;
    }
    return bk_auto_dense(d, facts, a_size, p);
}

/* ----------------------------------------------------------- geometry */

/* The work-group size: the knob or the row's, checked. */
static int bk_wg(const gr_device *d, const gr_bk_overrides *ov, int v,
                 const bk_row *g, gr_bk_plan *p)
{
    const int wg = ov->wg_size ? ov->wg_size : g->wg;
    if (wg < 1 || (wg & (wg - 1)) != 0 || (size_t)wg > d->max_wg) {
        snprintf(p->why, sizeof p->why, "wg_size must be a power of two "
                 "no larger than %zu (got %d)", d->max_wg, wg);
        return -1;
    }
    if (v == GR_BKV_WARP && d->nvidia_ptx && wg < 32) {
        snprintf(p->why, sizeof p->why, "warp_aggregated on NVIDIA needs "
                 "wg_size >= 32 (whole warps)");
        return -1;
    }
    p->wg = wg;
    return 0;
}

/* lookback: keys and values of a tile in local memory: at most 32 KiB,
 * and the whole kernel within the device's local memory. */
static int bk_lookback_items(const gr_device *d, const gr_bk_types *ty,
                             const gr_bk_overrides *ov, const bk_row *g,
                             gr_bk_plan *p)
{
    const size_t esz = bk_pair_size(ty);
    const int wg = p->wg;
    size_t it = ov->items;
    if (it == 0) {
        for (it = g->items; it > 1 && !bk_lb_fits(d, (size_t)wg, it, esz);) {
            it /= 2;
        }
    }
    if (it > 32) {
        snprintf(p->why, sizeof p->why, "variant 'lookback' takes items "
                 "<= 32 (got %zu)", it);
        return -1;
    }
    if (d->is_gpu && bk_lb_local((size_t)wg, it, esz) > local_max(d)) {
        snprintf(p->why, sizeof p->why, "variant 'lookback': a tile of "
                 "%d x %zu takes %zu bytes of local memory, the device "
                 "has %zu: use fewer items or a smaller wg_size", wg, it,
                 bk_lb_local((size_t)wg, it, esz), local_max(d));
        return -1;
    }
    p->items = it;
    return 0;
}

/* Items a work-item, groups (and private copies) of the variant. */
static int bk_geometry(const gr_device *d, const gr_bk_types *ty,
                       const gr_bk_facts *facts, const gr_bk_overrides *ov,
                       int v, const bk_row *g, gr_bk_plan *p)
{
    const size_t n = facts->n ? facts->n : 1;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    const size_t wg = (size_t)p->wg;
    if (v == GR_BKV_LOOKBACK) {
        if (bk_lookback_items(d, ty, ov, g, p) != 0) {
            return -1;
        }
    } else if (v == GR_BKV_SEGMENTS) {
        size_t it = ov->items;
        if (it == 0) {
            it = g->items ? g->items : (n + cu * g->fill - 1) / (cu * g->fill);
            if (it < g->items_min) {
                it = g->items_min;
            }
        }
        p->items = it;
    } else if (v == GR_BKV_PRIV && (d->is_gpu || ov->wg_size > 1) &&
               (p->lcopies = gr_bk_lbins_copies(
                    d, facts->num_keys,
                    ty->count ? 8 : gr_dtypes[ty->r].size, p->wg,
                    &p->lwords)) > 0) {
        /* local copies, a grid-stride loop: 8 groups a compute unit */
        const size_t groups = cu * (d->is_gpu ? 8 : 1);
        p->row = "private bins in local memory, 8 groups a compute unit";
        p->items = (n + wg * groups - 1) / (wg * groups);
    } else if (v == GR_BKV_PRIV) {
        p->parts = ov->items ? (n + ov->items - 1) / ov->items : cu * g->fill;
        if (p->parts < 1) {
            p->parts = 1;
        }
        p->items = (n + p->parts - 1) / p->parts;
        p->groups = p->parts;
        p->wg = 1;
        return 0;
    } else {
        size_t it = ov->items;
        if (it == 0) {
            size_t groups = cu * g->fill;
            it = (n + wg * groups - 1) / (wg * groups);
            if (it < g->items_min) {
                it = g->items_min;
            }
        }
        p->items = it ? it : 1;
    }
    p->groups = (n + wg * p->items - 1) / (wg * p->items);
    return 0;
}

/* ------------------------------------------------------------ planner */

/* The variant (asked for or auto), then its geometry from its row. */
int gr_bk_plan_for(const gr_device *d, int sm, gr_bk_func f, const gr_bk_types *ty,
               const gr_bk_facts *facts, const gr_bk_overrides *ov,
               gr_bk_plan *p)
{
    const int a_size = ty->count ? 8 : gr_dtypes[ty->r].size;
    const char *want = ov->variant && strcmp(ov->variant, "auto") != 0
                           ? ov->variant : NULL;
    const int exact = f == GR_BK_DENSE && gr_bk_exact(ty);
    const int det = ov->deterministic && !exact;
    memset(p, 0, sizeof *p);
    p->ptx = d->nvidia_ptx;
    p->match = d->nvidia_ptx && sm >= 7;
    const int v = ov->exact && f == GR_BK_DENSE && !exact
                      ? bk_exact_plan(d, ty, facts, want, p)
                  : want != NULL
                      ? bk_requested(d, f, ty, facts, want, a_size, det, p)
                      : bk_auto(d, f, ty, facts, a_size, det, p);
    if (v < 0) {
        return v;
    }
    p->variant = v;
    p->name = p->exact == 2 ? "host" : gr_bk_variant_names[v];
    if (ov->deterministic && exact && want == NULL) {
        char why[sizeof p->why];
        snprintf(why, sizeof why, "deterministic with integer values: any "
                 "order gives the same bits, no sort; %.179s", p->why);
        memcpy(p->why, why, sizeof why);
    }
    const bk_row *g = bk_row_for(d, v, ty);
    p->row = g->row;
    if (bk_wg(d, ov, v, g, p) != 0 || bk_geometry(d, ty, facts, ov, v, g, p) != 0) {
        return -1;
    }
    if (p->groups == 0) {
        p->groups = 1;
    }
    p->hash_bins = a_size == 8 ? bk_rows[BR_BINS].bins_wide
                               : bk_rows[BR_BINS].bins;
    return 0;
}
