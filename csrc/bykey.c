/*
 * gpured — reduce-by-key: enqueue the kernels of kernels/bykey.cl for a
 * plan (plan_bykey.c, gr_bk_plan_for).  reduce_by_key (runs of equal keys, in
 * order), sum_by_key (a dense array of num_keys bins), scan_by_key
 * (segmented prefix scans); the order in which they run (measure the keys,
 * plan, allocate, aggregate, read a count) is dispatch.c's.
 *
 *   gr_bykey_stats_dev     one pass over the keys: first bad key, run
 *                          heads, descents, largest key (read back: the
 *                          plan needs them)
 *   gr_bykey_segments_dev  sorted segments (head flags + segmented scan),
 *                          the CPU chunk kernels, the single-pass look-back
 *   gr_bykey_dense_dev     dense bins: atomic, warp_aggregated, local_hash,
 *                          private_bins, sorted_segments, fixed_point
 *   gr_bykey_sort_dev      stable radix sort of (keys, values) for
 *                          deterministic sum_by_key on unsorted keys
 *
 * Inputs as (cl_mem, element offset, length); outputs in cl_mem buffers;
 * temporaries from the device pool.  No GIL, no Python objects.
 */
#include "gpured.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ kernels */

/* What decides a by-key program's defines (the kernel memo's key); each
 * program holds only its seg's kernels (GR_BK_SEG).  seg 0: the atomic
 * kernels, whose accumulator has the result's bits, so atomics fold
 * straight into the output; seg 1: key checks, sorted segments, private
 * bins, accumulating as gr_accum_for says (float32 sums in double where
 * the device has it); seg 2: the same, for the CPU chunk kernels (a
 * program caches 8 kernels); seg 3: the single-pass reduce_by_key (items
 * fixed at build time); seg 4: the radix sort (items fixed at build
 * time). */
typedef struct {
    int k, v, r, op, count, seg, wg, ptx, match, hash_bins, items;
    int fp64, atomics64;
    int fxw;        /* seg 5 (fixed_point): windows a key (FX_WMAX)     */
    unsigned xdefs; /* hash of GPURED_BYKEY_XDEFS (0: unset) */
} bkey;
_Static_assert(sizeof(bkey) <= GR_MEMO_KEY,
               "bkey outgrew the kernel memo's key (every call would miss)");

/* Developer knobs for benchmarks/exp/bykey_lb.py: GPURED_BYKEY_XDEFS
 * appends #define lines to every by-key program (as GPURED_SCAN_XDEFS),
 * GPURED_BYKEY_XOPTS build options; their hash is part of the kernel
 * memo's key. */
static unsigned bk_xdefs_hash(void)
{
    const char *xd = getenv("GPURED_BYKEY_XDEFS");
    const char *xo = getenv("GPURED_BYKEY_XOPTS");
    unsigned h = 2166136261u;
    if (xd == NULL && xo == NULL) {
        return 0;
    }
    for (; xd != NULL && *xd; ++xd) {
        h = (h ^ (unsigned char)*xd) * 16777619u;
    }
    h = (h ^ '|') * 16777619u;
    for (; xo != NULL && *xo; ++xo) {
        h = (h ^ (unsigned char)*xo) * 16777619u;
    }
    return h ? h : 1;
}

static void bk_defines(const void *ctx, char *buf, size_t n)
{
    const bkey *key = ctx;
    const gr_dtype_info *ki = &gr_dtypes[key->k], *ri = &gr_dtypes[key->r];
    const gr_dtype_info *ti = key->count ? &gr_dtypes[GR_UINT8]
                                         : &gr_dtypes[key->v];
    const char *a_cl, *minv = "0", *maxv = "0";
    int a_size, cvt, a_float;
    if (key->count) {
        a_cl = "ulong";
        a_size = 8;
        cvt = 0;
        a_float = 0;
    } else {
        gr_device fake;
        gr_accum acc;
        char err[128];
        memset(&fake, 0, sizeof fake);
        fake.fp64 = key->fp64;
        gr_accum_for(&fake, GR_FAM_BYKEY, (gr_op)key->op, (gr_dtype)key->v,
                     (gr_dtype)key->r, &acc, err, sizeof err);
        a_cl = acc.a_cl;
        a_size = acc.a_size;
        cvt = acc.cvt;
        a_float = strcmp(a_cl, "float") == 0 || strcmp(a_cl, "double") == 0;
        if (!key->seg && a_float && a_size != ri->size) {
            /* atomics fold into result-sized words */
            a_cl = ri->cl;
            a_size = ri->size;
            cvt = key->v != key->r ? 1 : 0;
        }
        minv = acc.a_min;
        maxv = acc.a_max;
    }
    const int atomics = !key->seg && (a_size == 4 || key->atomics64);
    snprintf(buf, n,
             "#define GR_NEED_FP64 %d\n"
             "#define GR_T %s\n#define GR_A %s\n#define GR_R %s\n"
             "#define GR_AM %s\n#define GR_A_SIZE %d\n#define GR_X_SIZE %d\n"
             "#define GR_A_FLOAT %d\n#define GR_OP %d\n#define GR_CVT %d\n"
             "#define GR_COMP 0\n#define GR_A_MINV %s\n#define GR_A_MAXV %s\n"
             "#define GR_VW 1\n#define GR_WG %d\n#define GR_ILP 1\n"
             "#define GR_SG 0\n#define GR_ATOMIC %d\n"
             "#define GR_K %s\n#define GR_K_SIZE %d\n#define GR_BK_COUNT %d\n"
             "#define GR_BK_PTX %d\n#define GR_BK_MATCH %d\n"
             "#define GR_BK_H %d\n#define GR_BK_ATOMICS %d\n"
             "#define GR_BK_CHECK %d\n#define GR_BK_CHUNKS %d\n"
             "#define GR_BK_LOOKBACK %d\n#define GR_BK_ITEMS %d\n"
             "#define GR_BK_SORT %d\n#define GR_BK_SEG %d\n"
             "#define GR_T_SIZE %d\n#define GR_BK_FXW %d\n",
             strcmp(a_cl, "double") == 0 || ti->size == 8 * ti->is_float ||
                 key->r == GR_FLOAT64,
             ti->cl, a_cl, key->count ? "long" : ri->cl,
             a_size == 4 ? "int" : "long", a_size, a_size, a_float,
             key->count ? (int)GR_ADD : key->op, cvt, minv, maxv, key->wg,
             atomics, ki->cl, ki->size, key->count, key->ptx, key->match,
             key->hash_bins, atomics, atomics && key->atomics64,
             key->seg == 2,
             /* the sweep's status words: common.cl's look-back macros */
             key->seg == 3 || (key->seg == 4 && key->wg > 1),
             key->seg == 3 || key->seg == 4 ? key->items : 0,
             key->seg == 4 ? (key->wg == 1 ? 1 : 2) : 0,
             /* each program holds only its own kernels: PoCL compiles every
              * kernel of a program when its binary is read for the cache */
             key->seg, (int)ti->size, key->fxw);
    if (key->xdefs) {
        gr_defines_append_env(buf, n, "GPURED_BYKEY_XDEFS");
    }
}

static cl_kernel bk_kernel(gr_device *d, const gr_bk_types *ty,
                           const gr_bk_plan *p, int seg, const char *name,
                           gr_status *st)
{
    bkey k;
    memset(&k, 0, sizeof k);
    k.k = (int)ty->k;
    k.v = (int)ty->v;
    k.r = (int)ty->r;
    k.op = (int)ty->op;
    k.count = ty->count;
    k.seg = seg;
    k.wg = p->wg;
    k.ptx = p->ptx;
    k.match = p->match;
    k.hash_bins = p->hash_bins;
    k.items = seg == 3 || seg == 4 ? (int)p->items : 0;
    k.fp64 = d->fp64;
    k.atomics64 = d->atomics64;
    k.fxw = seg != 5 ? 0 : p->fx_wmax > 0 ? p->fx_wmax : GR_FX_WMAX;
    k.xdefs = bk_xdefs_hash();
    const char *xo = k.xdefs ? getenv("GPURED_BYKEY_XOPTS") : NULL;
    return gr_kernel_memo(d, "bykey", &k, sizeof k, name, bk_defines, &k,
                          xo ? xo : "", st);
}

/* Set the arguments and enqueue k over groups x wg (gr_launch); timed
 * runs (ns) wait for it and add its device time to *ns. */
static int bk_launch(gr_device *d, cl_kernel k, size_t groups, size_t wg,
                     double *ns, const gr_arg *args, int nargs, gr_status *st)
{
    gr_span sp = {NULL, NULL};
    const size_t g = groups * wg, l = wg;
    int rc = gr_launch(d, k, 1, &g, &l, args, nargs, NULL, ns ? &sp : NULL,
                       st);
    if (rc == 0 && ns != NULL && sp.last != NULL) {
        cl_int e = clWaitForEvents(1, &sp.last);
        if (e != CL_SUCCESS) {
            st->call = "clWaitForEvents";
            st->err = e;
            rc = -1;
        } else {
            *ns += gr_span_ns(&sp);
            if (getenv("GPURED_BYKEY_PROFILE") != NULL) {
                /* developer knob, timed runs only (timeit_by_key): each
                 * kernel's event time on stderr
                 * (benchmarks/exp/bykey_profile.py) */
                char name[64] = "?";
                clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name,
                                NULL);
                fprintf(stderr, "  %-18s %8.3f ms\n", name,
                        gr_span_ns(&sp) * 1e-6);
            }
        }
    }
    gr_span_release(&sp);
    return rc;
}
#define BK_LAUNCH(d, k, groups, wg, ns, st, ...)                             \
    bk_launch((d), (k), (groups), (wg), (ns), (gr_arg[]){__VA_ARGS__},       \
              (int)(sizeof((gr_arg[]){__VA_ARGS__}) / sizeof(gr_arg)), (st))

/* Temporaries of one driver call: pool blocks, handed back together once
 * the kernels that use them are enqueued. */
#define BK_SCRATCH 8
typedef struct {
    gr_block *b[BK_SCRATCH];
    int n;
} bk_scratch;

static cl_mem bk_buffer(gr_device *d, size_t bytes, bk_scratch *sc,
                        gr_status *st)
{
    if (sc->n == BK_SCRATCH) {
        gr_status_fail(st, "internal: too many by-key temporaries");
        return NULL;
    }
    gr_block *b = gr_block_get(d, bytes ? bytes : 8, st);
    if (b == NULL) {
        return NULL;
    }
    sc->b[sc->n++] = b;
    return b->mem;
}

static void bk_scratch_free(bk_scratch *sc)
{
    for (int i = 0; i < sc->n; ++i) {
        gr_block_put(sc->b[i]);
    }
    sc->n = 0;
}

/* Groups of wg work-items for a grid-stride loop over count elements:
 * enough for one each, at most per_cu a compute unit. */
static size_t bk_grid(const gr_device *d, size_t count, size_t wg,
                      size_t per_cu)
{
    const size_t cu = d->compute_units ? d->compute_units : 1;
    const size_t g = (count + wg - 1) / wg;
    return g == 0 ? 1 : g < cu * per_cu ? g : cu * per_cu;
}

/* ------------------------------------------------- device-level drivers */

/* The key check and measurement: one pass over the keys writing, per
 * work-group, (first bad index, run heads, descents, largest key); the
 * words are read back without blocking into *words (malloc'd, 4 x
 * *groups), *ready the read's event: the caller waits for it without
 * gr_lock, then gr_bykey_stats_combine folds them. */
int gr_bykey_stats_enqueue(gr_device *d, const gr_bk_types *ty, cl_mem keys,
                           size_t koff, size_t n, uint64_t nk, double *ns,
                           cl_ulong **words, size_t *groups_out,
                           cl_event *ready, gr_status *st)
{
    gr_bk_plan p;
    cl_mem sb = NULL;
    bk_scratch sc = {{NULL}, 0};
    cl_ulong *h = NULL;
    int rc = -1;
    memset(&p, 0, sizeof p);
    *words = NULL;
    *groups_out = 0;
    *ready = NULL;
    if (n == 0) {
        return 0;
    }
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    const size_t cu = d->compute_units ? d->compute_units : 1;
    p.wg = d->is_gpu ? 256 : 1;
    p.ptx = 0;
    p.hash_bins = 1024;
    size_t groups = d->is_gpu ? cu * 16 : cu * 4;
    cl_ulong items = (n + groups * p.wg - 1) / (groups * p.wg);
    groups = (n + p.wg * items - 1) / (p.wg * items);
    cl_kernel k = bk_kernel(d, ty, &p, 1, "gr_bk_stats", st);
    if (k == NULL) {
        goto fail;
    }
    if ((sb = bk_buffer(d, groups * 32, &sc, st)) == NULL ||
        (h = malloc(groups * 32)) == NULL) {
        if (h == NULL && sb != NULL) {
            gr_status_fail(st, "out of host memory");
        }
        goto fail;
    }
    cl_ulong un = n, ukoff = koff, unk = nk;
    if (BK_LAUNCH(d, k, groups, p.wg, ns, st, GR_ARG(keys), GR_ARG(ukoff),
                  GR_ARG(un), GR_ARG(unk), GR_ARG(items), GR_ARG(sb)) != 0) {
        goto fail;
    }
    GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, sb, CL_FALSE, 0, groups * 32,
                                        h, 0, NULL, ready));
    clFlush(d->queue);
    *words = h;
    *groups_out = groups;
    h = NULL;
    rc = 0;
fail:
    free(h);
    bk_scratch_free(&sc);
    return rc;
}

void gr_bykey_stats_combine(const cl_ulong *h, size_t groups, size_t n,
                            gr_bk_facts *fx)
{
    fx->n = n;
    fx->first_bad = UINT64_MAX;
    fx->heads = fx->descents = fx->max_key = 0;
    for (size_t g = 0; g < groups; ++g) {
        fx->first_bad = h[4 * g] < fx->first_bad ? h[4 * g] : fx->first_bad;
        fx->heads += h[4 * g + 1];
        fx->descents += h[4 * g + 2];
        fx->max_key = h[4 * g + 3] > fx->max_key ? h[4 * g + 3] : fx->max_key;
    }
}

/* CPUs: one sequential pass over a few contiguous chunks (mode 0 reduce:
 * runs staged per chunk, then packed; 3 dense); see gr_bk_chunk_runs. */
static int bk_chunks_dev(gr_device *d, const gr_bk_types *ty,
                         const gr_bk_plan *p, int mode, cl_mem keys,
                         size_t koff, cl_mem vals, size_t voff, size_t n,
                         cl_mem okeys, cl_mem ovals, cl_mem count, double *ns,
                         gr_status *st)
{
    cl_mem cb = NULL, sk = NULL, sv = NULL, cnt = NULL;
    bk_scratch sc = {{NULL}, 0};
    int rc = -1;
    const cl_ulong chunk = p->items, P = (n + p->items - 1) / p->items,
                   un = n, ukoff = koff, uvoff = voff;
    const cl_uint umode = (cl_uint)mode;
    cl_kernel k1 = bk_kernel(d, ty, p, 2, "gr_bk_chunk_runs", st);
    cl_kernel k2 = k1 && mode == 0 ? bk_kernel(d, ty, p, 2, "gr_bk_chunk_move",
                                               st) : NULL;
    if (k1 == NULL || (mode == 0 && k2 == NULL) ||
        (cb = bk_buffer(d, P * 8, &sc, st)) == NULL) {
        goto fail;
    }
    if (mode == 0) {
        /* Staging of capacity n: a CPU device touches only the pages the
         * runs are written to. */
        if ((sk = bk_buffer(d, n * gr_dtypes[ty->k].size, &sc, st)) == NULL ||
            (sv = bk_buffer(d, n * gr_dtypes[ty->r].size, &sc, st)) == NULL) {
            goto fail;
        }
        if (count == NULL && (cnt = count = bk_buffer(d, 8, &sc, st)) == NULL) {
            goto fail;
        }
    }
    if (vals == NULL) {
        vals = keys; /* op count reads no values */
    }
    cl_mem wk = mode == 0 ? sk : ovals, wv = mode == 0 ? sv : ovals;
    if (BK_LAUNCH(d, k1, P, 1, ns, st, GR_ARG(keys), GR_ARG(ukoff),
                  GR_ARG(vals), GR_ARG(uvoff), GR_ARG(un), GR_ARG(chunk),
                  GR_ARG(umode), GR_ARG(wk), GR_ARG(wv), GR_ARG(cb)) != 0) {
        goto fail;
    }
    if (mode == 0) {
        if (BK_LAUNCH(d, k2, P, 1, ns, st, GR_ARG(sk), GR_ARG(sv),
                      GR_ARG(chunk), GR_ARG(P), GR_ARG(cb), GR_ARG(okeys),
                      GR_ARG(ovals), GR_ARG(count)) != 0) {
            goto fail;
        }
    }
    rc = 0;
fail:
    bk_scratch_free(&sc);
    return rc;
}

/* Single-pass reduce_by_key (gr_bk_lb_*): zero the tile tickets and status
 * words, one pass over the tiles, then the tiles' last runs are finished.
 * Scratch: status (T words), lead and tail (T accumulators), info (2T). */
static int bk_lookback_dev(gr_device *d, const gr_bk_types *ty,
                           const gr_bk_plan *p, cl_mem keys, size_t koff,
                           cl_mem vals, size_t voff, size_t n, cl_mem okeys,
                           cl_mem ovals, cl_mem count, double *ns,
                           gr_status *st)
{
    cl_mem ctr = NULL, status = NULL, lead = NULL, tail = NULL, info = NULL;
    bk_scratch sc = {{NULL}, 0};
    int rc = -1;
    const cl_ulong T = p->groups, un = n, ukoff = koff, uvoff = voff;
    const size_t asz = 8; /* accumulators of seg programs: at most 8 bytes */
    cl_kernel k0 = bk_kernel(d, ty, p, 3, "gr_bk_lb_init", st);
    cl_kernel k1 = k0 ? bk_kernel(d, ty, p, 3, "gr_bk_lb_tiles", st) : NULL;
    cl_kernel k2 = k1 ? bk_kernel(d, ty, p, 3, "gr_bk_lb_fix", st) : NULL;
    if (k2 == NULL || (ctr = bk_buffer(d, 8, &sc, st)) == NULL ||
        (status = bk_buffer(d, T * 8, &sc, st)) == NULL ||
        (lead = bk_buffer(d, T * asz, &sc, st)) == NULL ||
        (tail = bk_buffer(d, T * asz, &sc, st)) == NULL ||
        (info = bk_buffer(d, T * 16, &sc, st)) == NULL) {
        goto fail;
    }
    if (vals == NULL) {
        vals = keys; /* op count reads no values */
    }
    const size_t wg0 = d->is_gpu ? 256 : 1;
    const size_t g0 = (T + wg0 - 1) / wg0 < 1024 ? (T + wg0 - 1) / wg0 : 1024;
    if (BK_LAUNCH(d, k0, g0, wg0, ns, st, GR_ARG(status), GR_ARG(T),
                  GR_ARG(ctr)) != 0) {
        goto fail;
    }
    if (BK_LAUNCH(d, k1, T, p->wg, ns, st, GR_ARG(keys), GR_ARG(ukoff),
                  GR_ARG(vals), GR_ARG(uvoff), GR_ARG(un), GR_ARG(ctr),
                  GR_ARG(status), GR_ARG(okeys), GR_ARG(ovals), GR_ARG(lead),
                  GR_ARG(tail), GR_ARG(info), GR_ARG(count)) != 0) {
        goto fail;
    }
    if (BK_LAUNCH(d, k2, (T + wg0 - 1) / wg0, wg0, ns, st, GR_ARG(lead),
                  GR_ARG(tail), GR_ARG(info), GR_ARG(T), GR_ARG(ovals)) != 0) {
        goto fail;
    }
    rc = 0;
fail:
    bk_scratch_free(&sc);
    return rc;
}

/* Sorted segments: mode 0 reduce (okeys/ovals of capacity n, count[0] the
 * number of runs), 1/2 inclusive/exclusive scan (ovals, n values),
 * 3 dense (ovals[key], keys sorted).  On CPUs with work-groups of one
 * (the default there), reduce and dense take the chunked two-pass path. */
int gr_bykey_segments_dev(gr_device *d, const gr_bk_types *ty,
                          const gr_bk_plan *p, int mode, cl_mem keys,
                          size_t koff, cl_mem vals, size_t voff, size_t n,
                          cl_mem okeys, cl_mem ovals, cl_mem count, double *ns,
                          gr_status *st)
{
    cl_mem tf = NULL, th = NULL, ta = NULL, cnt = NULL;
    bk_scratch sc = {{NULL}, 0};
    int rc = -1;
    if (n == 0) {
        return 0;
    }
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    if (p->variant == GR_BKV_LOOKBACK && mode == 0) {
        return bk_lookback_dev(d, ty, p, keys, koff, vals, voff, n, okeys,
                               ovals, count, ns, st);
    }
    if (p->variant == GR_BKV_LOOKBACK && mode == 3) {
        /* dense: the runs into temporaries, then each to its bin */
        const size_t wg = d->is_gpu ? 256 : 1;
        const size_t g = bk_grid(d, n, wg, 8);
        cl_kernel kb = bk_kernel(d, ty, p, 3, "gr_bk_lb_bins", st);
        cl_mem rk, rv, rc1;
        if (kb == NULL ||
            (rk = bk_buffer(d, n * gr_dtypes[ty->k].size, &sc, st)) == NULL ||
            (rv = bk_buffer(d, n * gr_dtypes[ty->r].size, &sc, st)) ==
                NULL ||
            (rc1 = bk_buffer(d, 8, &sc, st)) == NULL ||
            bk_lookback_dev(d, ty, p, keys, koff, vals, voff, n, rk, rv, rc1,
                            ns, st) != 0 ||
            BK_LAUNCH(d, kb, g, wg, ns, st, GR_ARG(rk), GR_ARG(rv),
                      GR_ARG(rc1), GR_ARG(ovals)) != 0) {
            goto fail;
        }
        rc = 0;
        goto fail;
    }
    if (!d->is_gpu && p->wg == 1 && (mode == 0 || mode == 3)) {
        return bk_chunks_dev(d, ty, p, mode, keys, koff, vals, voff, n, okeys,
                             ovals, count, ns, st);
    }
    const cl_ulong T = p->groups, un = n, uit = p->items, ukoff = koff,
                   uvoff = voff;
    const cl_uint umode = (cl_uint)mode;
    cl_kernel k1 = bk_kernel(d, ty, p, 1, "gr_bk_summary", st);
    cl_kernel k2 = k1 ? bk_kernel(d, ty, p, 1, "gr_bk_tiles", st) : NULL;
    cl_kernel k3 = k2 ? bk_kernel(d, ty, p, 1, "gr_bk_final", st) : NULL;
    if (k3 == NULL) {
        goto fail;
    }
    if ((tf = bk_buffer(d, T * 4, &sc, st)) == NULL ||
        (th = bk_buffer(d, T * 8, &sc, st)) == NULL ||
        (ta = bk_buffer(d, T * 8, &sc, st)) == NULL) {
        goto fail;
    }
    if (count == NULL && (cnt = count = bk_buffer(d, 8, &sc, st)) == NULL) {
        goto fail;
    }
    if (vals == NULL) {
        vals = keys; /* op count reads no values */
    }
    if (BK_LAUNCH(d, k1, T, p->wg, ns, st, GR_ARG(keys), GR_ARG(ukoff),
                  GR_ARG(vals), GR_ARG(uvoff), GR_ARG(un), GR_ARG(uit),
                  GR_ARG(tf), GR_ARG(th), GR_ARG(ta)) != 0) {
        goto fail;
    }
    if (BK_LAUNCH(d, k2, 1, p->wg, ns, st, GR_ARG(tf), GR_ARG(th), GR_ARG(ta),
                  GR_ARG(T), GR_ARG(count)) != 0) {
        goto fail;
    }
    if (okeys == NULL) {
        okeys = ovals; /* unused outside reduce mode */
    }
    if (BK_LAUNCH(d, k3, T, p->wg, ns, st, GR_ARG(keys), GR_ARG(ukoff),
                  GR_ARG(vals), GR_ARG(uvoff), GR_ARG(un), GR_ARG(uit),
                  GR_ARG(th), GR_ARG(ta), GR_ARG(umode), GR_ARG(okeys),
                  GR_ARG(ovals)) != 0) {
        goto fail;
    }
    rc = 0;
fail:
    bk_scratch_free(&sc);
    return rc;
}

/* Dense bins: out (num_keys results) is filled with the identity (and
 * flag[0] set to "no bad key"), then the plan's variant folds every value
 * into out[key].  Keys must have been validated (gr_bykey_stats_dev) unless
 * the variant checks them itself (atomic kernels on devices with 64-bit
 * atomics: bad indices go to flag[0]); sorted_segments needs sorted keys. */
/* One dense call's arguments as the kernels take them. */
typedef struct {
    cl_mem keys, vals, out;
    cl_ulong un, ukoff, uvoff, unk, uit;
} bk_dense;

/* The bins' identities (and the flag cleared). */
static int dense_init(gr_device *d, const gr_bk_types *ty,
                      const gr_bk_plan *p, cl_mem out, cl_mem flag, size_t nk,
                      double *ns, gr_status *st)
{
    /* A kernel, not clEnqueueFillBuffer: Oclgrind's uninitialised-value
     * check does not see what a fill wrote. */
    cl_kernel ki = bk_kernel(d, ty, p, p->variant == GR_BKV_SEGMENTS ||
                             p->variant == GR_BKV_LOOKBACK ||
                             p->variant == GR_BKV_PRIV ||
                             p->variant == GR_BKV_FIXED, "gr_bk_init", st);
    const cl_ulong unk0 = nk;
    const size_t wg = d->is_gpu ? 256 : 1;
    const size_t groups = bk_grid(d, nk, wg, d->is_gpu ? 32 : 4);
    if (ki == NULL) {
        return -1;
    }
    if (BK_LAUNCH(d, ki, groups, wg, ns, st, GR_ARG(out), GR_ARG(unk0),
                  GR_ARG(flag)) != 0) {
        return -1;
    }
    return 0;
}

/* GR_BKV_FIXED: kernels/bykey.cl, "fixed-point sums": the header (the
 * values' exponent range), the words of the path it picks on the device
 * (windows, or each key's largest exponent first: gr_fx_exp returns at
 * once where windows cover), the sums, every bin. */
static int dense_fixed(gr_device *d, const gr_bk_types *ty,
                       const gr_bk_plan *p, const bk_dense *a, size_t n,
                       size_t nk, bk_scratch *sc, double *ns, gr_status *st)
{
    cl_kernel kh = bk_kernel(d, ty, p, 5, "gr_fx_hinit", st);
    cl_kernel kr = kh ? bk_kernel(d, ty, p, 5, "gr_fx_range", st) : NULL;
    cl_kernel kz = kr ? bk_kernel(d, ty, p, 5, "gr_fx_zero", st) : NULL;
    cl_kernel ke = kz ? bk_kernel(d, ty, p, 5, "gr_fx_exp", st) : NULL;
    cl_kernel ka = ke ? bk_kernel(d, ty, p, 5, "gr_fx_add", st) : NULL;
    cl_kernel kf = ka ? bk_kernel(d, ty, p, 5, "gr_fx_final", st) : NULL;
    const size_t bytes =
        GR_FX_BYTES(nk, p->fx_wmax > 0 ? p->fx_wmax : GR_FX_WMAX);
    cl_mem w;
    if (kf == NULL || (w = bk_buffer(d, bytes, sc, st)) == NULL) {
        return -1;
    }
    const size_t per_cu = d->is_gpu ? 16 : 4;
    const size_t gz = bk_grid(d, 3 * nk, p->wg, per_cu),
                 gn = bk_grid(d, n, p->wg, per_cu),
                 gk = bk_grid(d, nk, p->wg, per_cu);
    if (BK_LAUNCH(d, kh, 1, 1, ns, st, GR_ARG(w), GR_ARG(a->unk)) != 0 ||
        BK_LAUNCH(d, kr, gn, p->wg, ns, st, GR_ARG(a->vals),
                  GR_ARG(a->uvoff), GR_ARG(a->un), GR_ARG(w),
                  GR_ARG(a->unk)) != 0 ||
        BK_LAUNCH(d, kz, gz, p->wg, ns, st, GR_ARG(w),
                  GR_ARG(a->unk)) != 0 ||
        BK_LAUNCH(d, ke, gn, p->wg, ns, st, GR_ARG(a->keys),
                  GR_ARG(a->ukoff), GR_ARG(a->vals), GR_ARG(a->uvoff),
                  GR_ARG(a->un), GR_ARG(w), GR_ARG(a->unk)) != 0 ||
        BK_LAUNCH(d, ka, gn, p->wg, ns, st, GR_ARG(a->keys),
                  GR_ARG(a->ukoff), GR_ARG(a->vals), GR_ARG(a->uvoff),
                  GR_ARG(a->un), GR_ARG(w), GR_ARG(a->unk)) != 0 ||
        BK_LAUNCH(d, kf, gk, p->wg, ns, st, GR_ARG(w), GR_ARG(a->unk),
                  GR_ARG(a->out)) != 0) {
        return -1;
    }
    return 0;
}

/* GR_BKV_PRIV: P private copies of the bins filled, then merged. */
static int dense_priv(gr_device *d, const gr_bk_types *ty,
                      const gr_bk_plan *p, const bk_dense *a, size_t nk,
                      bk_scratch *sc, double *ns, gr_status *st)
{
    cl_kernel kf = bk_kernel(d, ty, p, 1, "gr_bk_priv_fill", st);
    cl_kernel km = kf ? bk_kernel(d, ty, p, 1, "gr_bk_priv_merge", st)
                      : NULL;
    const cl_ulong P = p->parts;
    const size_t mparts = (d->compute_units ? d->compute_units : 1) * 4;
    const cl_ulong mchunk = (nk + mparts - 1) / mparts;
    const size_t mgroups = (nk + mchunk - 1) / mchunk;
    cl_mem bins;
    if (km == NULL) {
        return -1;
    }
    const int a_size = (ty->op == GR_ADD && ty->r == GR_FLOAT32 &&
                        d->fp64) ? 8 : gr_dtypes[ty->r].size;
    if ((bins = bk_buffer(d, P * nk * a_size, sc, st)) == NULL) {
        return -1;
    }
    if (BK_LAUNCH(d, kf, P, 1, ns, st, GR_ARG(a->keys), GR_ARG(a->ukoff),
                  GR_ARG(a->vals), GR_ARG(a->uvoff), GR_ARG(a->un),
                  GR_ARG(a->uit), GR_ARG(a->unk), GR_ARG(bins)) != 0) {
        return -1;
    }
    if (BK_LAUNCH(d, km, mgroups, 1, ns, st, GR_ARG(bins), GR_ARG(a->unk),
                  GR_ARG(P), GR_ARG(mchunk), GR_ARG(a->out)) != 0) {
        return -1;
    }
    return 0;
}

int gr_bykey_dense_dev(gr_device *d, const gr_bk_types *ty,
                       const gr_bk_plan *p, cl_mem keys, size_t koff,
                       cl_mem vals, size_t voff, size_t n, size_t nk,
                       cl_mem out, cl_mem flag, double *ns, gr_status *st)
{
    bk_scratch sc = {{NULL}, 0};
    int rc = -1;
    if (nk == 0) {
        return 0;
    }
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    if (((p->variant != GR_BKV_PRIV && p->variant != GR_BKV_FIXED) ||
         n == 0) &&
        dense_init(d, ty, p, out, flag, nk, ns, st) != 0) {
        goto fail;
    }
    if (n == 0) {
        return 0;
    }
    const bk_dense a = {keys, vals, out, n, koff, voff, nk, p->items};
    if (p->variant == GR_BKV_FIXED) {
        rc = dense_fixed(d, ty, p, &a, n, nk, &sc, ns, st);
        goto fail;
    }
    if (p->variant == GR_BKV_SEGMENTS || p->variant == GR_BKV_LOOKBACK) {
        return gr_bykey_segments_dev(d, ty, p, 3, keys, koff, vals, voff, n,
                                     NULL, out, NULL, ns, st);
    }
    if (p->variant == GR_BKV_PRIV) {
        rc = dense_priv(d, ty, p, &a, nk, &sc, ns, st);
        goto fail;
    }
    const char *name = p->variant == GR_BKV_ATOMIC ? "gr_bk_atomic"
                       : p->variant == GR_BKV_HASH ? "gr_bk_hash"
                       : p->ptx                    ? "gr_bk_warp"
                                                   : "gr_bk_wg_runs";
    cl_kernel k = bk_kernel(d, ty, p, 0, name, st);
    if (k == NULL) {
        goto fail;
    }
    if (BK_LAUNCH(d, k, p->groups, p->wg, ns, st, GR_ARG(keys),
                  GR_ARG(a.ukoff), GR_ARG(vals), GR_ARG(a.uvoff),
                  GR_ARG(a.un), GR_ARG(a.uit), GR_ARG(out), GR_ARG(a.unk),
                  GR_ARG(flag)) != 0) {
        goto fail;
    }
    rc = 0;
fail:
    bk_scratch_free(&sc);
    return rc;
}


/* Deterministic sum_by_key on unsorted keys: a stable LSD radix sort of
 * (keys, values) on the device, 8 bits of the key per pass, as many
 * passes as max_key needs (kernels/bykey.cl, "radix sort").  Keys must
 * have been validated and max_key, n below 2^32 (gr_bykey_sort_fits).
 * Geometry: wg work-items per group (0: 256 on GPUs, 1 on CPUs), items
 * per work-item (1..15; 0: 8); wg 1 runs the chunk kernels, one
 * contiguous chunk per work-item.  The sorted keys (uint32) and values
 * (ty->v; none for counts) come back in pool blocks *okeys and *ovals,
 * which the caller hands back once the kernels reading them are
 * enqueued. */
int gr_bykey_sort_fits(size_t n, uint64_t max_key)
{
    return max_key <= UINT32_MAX && n <= (size_t)UINT32_MAX - 65536;
}

int gr_bykey_sort_passes(uint64_t max_key)
{
    int passes = 0;
    for (uint64_t m = max_key; m != 0; m >>= 8) {
        ++passes;
    }
    return passes ? passes : 1;
}

/* One radix sort (gr_bykey_sort_dev): its geometry, kernels and scratch.
 * chunks: P work-items of one, c keys each; else the sweep, T tiles of
 * wg x items keys. */
typedef struct {
    gr_bk_plan p;
    int chunks, passes;
    size_t P, T, vsz;
    cl_ulong c;
    cl_kernel k0, kh, kx[2], ks;
    cl_mem hist, status, counter;
} bk_sort;

/* The sort's geometry: chunks or the sweep, tiles, passes. */
static void sort_geometry(const gr_device *d, const gr_bk_types *ty, int wg,
                          size_t items, size_t n, uint64_t max_key,
                          bk_sort *s)
{
    gr_bk_plan *p = &s->p;
    /* H100, 10 Mi f64 values into 2^20 int64 keys, the whole
     * deterministic call (sort, then segments): wg 256 x items 12 1.05 ms,
     * x 8 1.17, x 15 1.55, x 4 1.60; wg 128 x 8 or 15 1.45-1.49; wg 512
     * does not fit the sweep's registers.  The sweep's status words need
     * 64-bit atomics (or NVIDIA's relaxed loads and stores); without
     * them, chunks.  CPUs sort in chunks whatever the call's wg_size and
     * items (the segments' knobs): PoCL, 2 cores, 4 Mi pairs, chunks 89 ms,
     * the sweep at wg 64 or 256 855 / 770 ms. */
    p->wg = !d->is_gpu ? 1 : wg > 0 ? wg : 256;
    p->items = items >= 1 && items <= 15 ? items : 12;
    p->ptx = d->nvidia_ptx;
    p->match = d->nvidia_ptx && d->sm >= 7; /* match.any.sync ranks */
    if ((size_t)p->wg > d->max_wg) {
        p->wg = (int)d->max_wg;
    }
    if (!d->atomics64 && !d->nvidia_ptx) {
        p->wg = 1;
    }
    s->chunks = p->wg == 1;
    if (s->chunks) {
        p->items = 1; /* one program whatever items */
        p->ptx = p->match = 0;
    }
    const size_t tile = (size_t)p->wg * p->items;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    s->P = s->chunks ? (n < cu * 4 ? (n ? n : 1) : cu * 4) : 0;
    s->c = s->chunks ? (n + s->P - 1) / s->P : 0;
    s->T = s->chunks ? s->P : n ? (n + tile - 1) / tile : 1;
    s->vsz = ty->count ? 0 : gr_dtypes[ty->v].size;
    s->passes = gr_bykey_sort_passes(max_key);
}

/* Its kernels: the chunks' (histograms of the input's keys and of a
 * pass's uint32 keys, their scan, scatters) or the sweep's (init,
 * histograms of every pass, sweeps).  0, or -1 with *st set. */
static int sort_kernels(gr_device *d, const gr_bk_types *ty, bk_sort *s,
                        gr_status *st)
{
    const gr_bk_plan *p = &s->p;
    if (s->chunks) {
        s->kh = bk_kernel(d, ty, p, 4, "gr_sr_chist_k", st);
        s->ks = s->kh ? bk_kernel(d, ty, p, 4, "gr_sr_chist_u", st) : NULL;
        s->k0 = s->ks ? bk_kernel(d, ty, p, 4, "gr_sr_cscan", st) : NULL;
        s->kx[0] =
            s->k0 ? bk_kernel(d, ty, p, 4, "gr_sr_cscatter_k", st) : NULL;
        s->kx[1] = s->kx[0] ? bk_kernel(d, ty, p, 4, "gr_sr_cscatter_u", st)
                            : NULL;
    } else {
        s->k0 = bk_kernel(d, ty, p, 4, "gr_sr_init", st);
        s->kh = s->k0 ? bk_kernel(d, ty, p, 4, "gr_sr_ghist", st) : NULL;
        s->kx[0] = s->kh ? bk_kernel(d, ty, p, 4, "gr_sr_sweep_k", st) : NULL;
        s->kx[1] =
            s->kx[0] ? bk_kernel(d, ty, p, 4, "gr_sr_sweep_u", st) : NULL;
    }
    return s->kx[1] == NULL ? -1 : 0;
}

/* Its memory: histograms (the sweep: status words and tickets too) in
 * sc, the keys and values of the passes in two pool blocks each.  0 or
 * -1. */
static int sort_buffers(gr_device *d, bk_sort *s, size_t n, bk_scratch *sc,
                        gr_block *kbuf[2], gr_block *vbuf[2], gr_status *st)
{
    const int passes = s->passes;
    if ((s->hist = bk_buffer(d, 256 * (s->chunks ? s->T : (size_t)passes) * 4,
                             sc, st)) == NULL ||
        (!s->chunks &&
         ((s->status = bk_buffer(d, passes * s->T * 256 * 8, sc, st)) ==
              NULL ||
          (s->counter = bk_buffer(d, passes * 8, sc, st)) == NULL))) {
        return -1;
    }
    for (int b = 0; b < (passes > 1 ? 2 : 1); ++b) {
        if ((kbuf[b] = gr_block_get(d, n * 4 + 8, st)) == NULL ||
            (s->vsz &&
             (vbuf[b] = gr_block_get(d, n * s->vsz + 8, st)) == NULL)) {
            return -1;
        }
    }
    return 0;
}

/* The sweep's start: status, histograms and tickets zeroed; every pass's
 * counts. */
static int sort_init(gr_device *d, const bk_sort *s, cl_mem keys,
                     cl_ulong ikoff, size_t n, double *ns, gr_status *st)
{
    const gr_bk_plan *p = &s->p;
    const cl_ulong un = n;
    const cl_uint upasses = (cl_uint)s->passes;
    const cl_ulong nst = (cl_ulong)s->passes * s->T * 256;
    const cl_uint nh = (cl_uint)(s->passes * 256), nc = (cl_uint)s->passes;
    const size_t g = bk_grid(d, nst, p->wg, 8);
    const size_t gh = bk_grid(d, n, (size_t)p->wg * 64, 4);
    if (BK_LAUNCH(d, s->k0, g, p->wg, ns, st, GR_ARG(s->status), GR_ARG(nst),
                  GR_ARG(s->hist), GR_ARG(nh), GR_ARG(s->counter),
                  GR_ARG(nc)) != 0 ||
        BK_LAUNCH(d, s->kh, gh, p->wg, ns, st, GR_ARG(keys), GR_ARG(ikoff),
                  GR_ARG(un), GR_ARG(upasses), GR_ARG(s->hist)) != 0) {
        return -1;
    }
    return 0;
}

/* Pass `pass`: (ik, iv) sorted by key bits 8 * pass .. into (ok, ov). */
static int sort_pass(gr_device *d, const bk_sort *s, int pass, cl_mem ik,
                     cl_ulong ikoff, cl_mem iv, cl_ulong ivoff, cl_mem ok,
                     cl_mem ov, size_t n, double *ns, gr_status *st)
{
    const cl_uint shift = (cl_uint)(8 * pass), upass = (cl_uint)pass;
    const int u = pass > 0;
    const cl_ulong un = n, c = s->c;
    const cl_uint uT = (cl_uint)s->T;
    const size_t P = s->P, T = s->T;
    const int wg = s->p.wg;
    cl_kernel kx = s->kx[u];
    int lrc;
    if (s->chunks) {
        /* hist, its scan in place, scatter: P work-items of one */
        lrc = BK_LAUNCH(d, u ? s->ks : s->kh, P, 1, ns, st, GR_ARG(ik),
                        GR_ARG(ikoff), GR_ARG(un), GR_ARG(shift), GR_ARG(c),
                        GR_ARG(uT), GR_ARG(s->hist));
        lrc = lrc ? lrc : BK_LAUNCH(d, s->k0, 1, 1, ns, st, GR_ARG(s->hist),
                                    GR_ARG(uT));
        lrc = lrc ? lrc
              : s->vsz ? BK_LAUNCH(d, kx, P, 1, ns, st, GR_ARG(ik),
                                   GR_ARG(ikoff), GR_ARG(iv), GR_ARG(ivoff),
                                   GR_ARG(ov), GR_ARG(un), GR_ARG(shift),
                                   GR_ARG(c), GR_ARG(uT), GR_ARG(s->hist),
                                   GR_ARG(ok))
                       : BK_LAUNCH(d, kx, P, 1, ns, st, GR_ARG(ik),
                                   GR_ARG(ikoff), GR_ARG(un), GR_ARG(shift),
                                   GR_ARG(c), GR_ARG(uT), GR_ARG(s->hist),
                                   GR_ARG(ok));
    } else {
        lrc = s->vsz ? BK_LAUNCH(d, kx, T, wg, ns, st, GR_ARG(ik),
                                 GR_ARG(ikoff), GR_ARG(iv), GR_ARG(ivoff),
                                 GR_ARG(ov), GR_ARG(un), GR_ARG(upass),
                                 GR_ARG(s->hist), GR_ARG(s->status),
                                 GR_ARG(s->counter), GR_ARG(ok))
                     : BK_LAUNCH(d, kx, T, wg, ns, st, GR_ARG(ik),
                                 GR_ARG(ikoff), GR_ARG(un), GR_ARG(upass),
                                 GR_ARG(s->hist), GR_ARG(s->status),
                                 GR_ARG(s->counter), GR_ARG(ok));
    }
    return lrc;
}

int gr_bykey_sort_dev(gr_device *d, const gr_bk_types *ty, int wg,
                      size_t items, cl_mem keys, size_t koff, cl_mem vals,
                      size_t voff, size_t n, uint64_t max_key,
                      gr_block **okeys, gr_block **ovals, double *ns,
                      gr_status *st)
{
    bk_sort s;
    gr_block *kbuf[2] = {NULL, NULL}, *vbuf[2] = {NULL, NULL};
    bk_scratch sc = {{NULL}, 0};
    int rc = -1;
    memset(&s, 0, sizeof s);
    *okeys = *ovals = NULL;
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    sort_geometry(d, ty, wg, items, n, max_key, &s);
    if (sort_kernels(d, ty, &s, st) != 0) {
        return -1;
    }
    if (sort_buffers(d, &s, n, &sc, kbuf, vbuf, st) != 0) {
        goto fail;
    }
    cl_mem ik = keys, iv = vals;
    cl_ulong ikoff = koff, ivoff = voff;
    if (!s.chunks && sort_init(d, &s, keys, ikoff, n, ns, st) != 0) {
        goto fail;
    }
    for (int pass = 0; pass < s.passes; ++pass) {
        cl_mem ok = kbuf[pass & 1]->mem;
        cl_mem ov = s.vsz ? vbuf[pass & 1]->mem : NULL;
        if (sort_pass(d, &s, pass, ik, ikoff, iv, ivoff, ok, ov, n, ns,
                      st) != 0) {
            goto fail;
        }
        ik = ok;
        iv = ov;
        ikoff = ivoff = 0;
    }
    const int last = (s.passes - 1) & 1;
    *okeys = kbuf[last];
    *ovals = vbuf[last];
    kbuf[last] = vbuf[last] = NULL;
    rc = 0;
fail:
    for (int b = 0; b < 2; ++b) {
        gr_block_put(kbuf[b]);
        gr_block_put(vbuf[b]);
    }
    bk_scratch_free(&sc);
    return rc;
}
