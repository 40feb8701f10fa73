/*
 * gpured — reduce-by-key: reduce_by_key (runs of equal keys, in order),
 * sum_by_key (a dense array of num_keys bins), scan_by_key (segmented
 * prefix scans).  Kernels and their phases: kernels/bykey.cl.
 *
 * Layers inside this file:
 *   bk_plan()            pure: (device facts, function, dtypes, key facts,
 *                        overrides) -> variant and geometry
 *   gr_bykey_*_dev()     device-level drivers, no GIL, no Python objects:
 *                        inputs as (cl_mem, element offset, length), results
 *                        in cl_mem buffers they create (the caller owns them)
 *   bk_run_host()        the one shell that moves NumPy arrays to the device
 *                        and results back (gpured.Array can branch here)
 *   py_*                 argument parsing, exceptions
 */
#include "gpured.h"

#include <numpy/arrayobject.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NumPy's C API table is the module's (gpured.h). */
static int bk_numpy(void) { return 0; }

/* ------------------------------------------------------------ plans */

static const char *const bk_variant_names[] = {
    "atomic", "warp_aggregated", "local_hash", "sorted_segments",
    "private_bins", "lookback", NULL};
static const char *const bk_func_names[] = {"reduce_by_key", "sum_by_key",
                                            "scan_by_key"};

static int bk_types_init(const gr_device *d, gr_bk_types *ty, char *err,
                         size_t n)
{
    const gr_dtype_info *vi = &gr_dtypes[ty->v];
    if (!(ty->k == GR_INT32 || ty->k == GR_UINT32 || ty->k == GR_INT64 ||
          ty->k == GR_UINT64)) {
        snprintf(err, n, "keys must be int32, int64, uint32 or uint64 (got %s)",
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

int gr_bk_plan_for(const gr_device *d, int sm, gr_bk_func f, const gr_bk_types *ty,
               const gr_bk_facts *facts, const gr_bk_overrides *ov,
               gr_bk_plan *p)
{
    const int a_size = ty->count ? 8 : gr_dtypes[ty->r].size;
    const char *want = ov->variant && strcmp(ov->variant, "auto") != 0
                           ? ov->variant : NULL;
    int v = -1;
    memset(p, 0, sizeof *p);
    p->ptx = d->nvidia_ptx;
    p->match = d->nvidia_ptx && sm >= 7;
    if (want != NULL) {
        for (int i = 0; bk_variant_names[i] != NULL; ++i) {
            if (strcmp(want, bk_variant_names[i]) == 0) {
                v = i;
            }
        }
        if (v < 0) {
            snprintf(p->why, sizeof p->why, "unknown variant '%s' (known: "
                     "auto, atomic, warp_aggregated, local_hash, "
                     "sorted_segments, private_bins, lookback)", want);
            return -1;
        }
        if (v == GR_BKV_LOOKBACK && f != GR_BK_REDUCE) {
            snprintf(p->why, sizeof p->why, "variant 'lookback' runs "
                     "reduce_by_key only (asked for it in %s)",
                     bk_func_names[f]);
            return -2;
        }
        if (f != GR_BK_DENSE && v != GR_BKV_SEGMENTS &&
            v != GR_BKV_LOOKBACK) {
            snprintf(p->why, sizeof p->why, "%s keeps every run of keys in "
                     "input order: only variant 'sorted_segments'%s (asked "
                     "for '%s')", bk_func_names[f],
                     f == GR_BK_REDUCE ? " or 'lookback'" : "", want);
            return -2;
        }
        if (v == GR_BKV_LOOKBACK && !d->atomics64) {
            snprintf(p->why, sizeof p->why, "variant 'lookback' needs "
                     "cl_khr_int64_base_atomics (status words); device '%s' "
                     "has none", d->name);
            return -2;
        }
        if (v != GR_BKV_SEGMENTS && v != GR_BKV_PRIV &&
            v != GR_BKV_LOOKBACK && a_size == 8 &&
            !d->atomics64) {
            snprintf(p->why, sizeof p->why, "variant '%s' on 64-bit results "
                     "needs cl_khr_int64_base_atomics; device '%s' has none",
                     want, d->name);
            return -2;
        }
        if (ov->deterministic && v != GR_BKV_SEGMENTS) {
            snprintf(p->why, sizeof p->why, "deterministic=True runs "
                     "'sorted_segments' (no atomics); '%s' is not "
                     "reproducible", want);
            return -2;
        }
        snprintf(p->why, sizeof p->why, "variant '%s' requested", want);
    } else if (f == GR_BK_REDUCE && d->is_gpu && d->atomics64 &&
               !ov->deterministic) {
        /* H100, 2^28 int32 keys in runs of 64, f32: lookback 1.95 ms,
         * sorted_segments 3.43 ms. */
        v = GR_BKV_LOOKBACK;
        snprintf(p->why, sizeof p->why, "reduce_by_key on a GPU: one pass, "
                 "decoupled look-back over the tiles' head counts");
    } else if (f != GR_BK_DENSE) {
        v = GR_BKV_SEGMENTS;
        snprintf(p->why, sizeof p->why, "%s: head flags + segmented scan",
                 bk_func_names[f]);
    } else if (ov->deterministic) {
        v = GR_BKV_SEGMENTS;
        snprintf(p->why, sizeof p->why, "deterministic: sorted segments, "
                 "no atomics");
    } else {
        /* Auto for sum_by_key.  Mean run length (n / heads) says how much
         * aggregating equal neighbours saves; descents say whether runs
         * are complete (sorted keys). */
        const double n = facts->n ? (double)facts->n : 1.0;
        const double run = facts->heads ? n / (double)facts->heads : 1.0;
        const int sorted = facts->sorted >= 0 ? facts->sorted
                                              : facts->descents == 0;
        const size_t parts = d->compute_units ? d->compute_units : 1;
        const double priv_bytes = (double)parts * (double)facts->num_keys * 8;
        if (!d->is_gpu && priv_bytes <= 512.0 * 1024 * 1024 &&
            (double)facts->num_keys <= 4.0 * n) {
            v = GR_BKV_PRIV;
            snprintf(p->why, sizeof p->why, "CPU: one private copy of the "
                     "%zu bins per core (%.0f MiB), no atomics",
                     facts->num_keys, priv_bytes / 1048576.0);
        } else if (!d->is_gpu || (a_size == 8 && !d->atomics64)) {
            v = GR_BKV_SEGMENTS;
            snprintf(p->why, sizeof p->why, "%s: sorted segments",
                     d->is_gpu ? "no 64-bit atomics" : "CPU, bins too many "
                     "to privatise");
        } else if (facts->unmeasured) {
            /* NVIDIA, num_keys given: no pass over the keys before the
             * kernel (the key check is fused into it), so no run length;
             * warp_aggregated falls back to plain atomics in warps whose
             * keys all differ. */
            v = GR_BKV_WARP;
            snprintf(p->why, sizeof p->why, "GPU, keys not measured (check "
                     "fused into the kernel): one atomic per run of equal "
                     "keys per warp, plain atomics where keys all differ");
        } else if (run >= 2.0) {
            /* H100, 10 Mi f64 into 1 Mi keys, runs of 10: warp_aggregated
             * 0.128 ms, atomic 0.164, sorted_segments 0.295 (sorted);
             * 0.126 vs 0.153 (partly sorted). */
            v = GR_BKV_WARP;
            snprintf(p->why, sizeof p->why, "GPU, runs of %.1f equal keys "
                     "(%s): one atomic per key per warp", run,
                     sorted ? "sorted" : "not sorted");
        } else {
            v = GR_BKV_ATOMIC;
            /* H100, random keys: atomic 0.196 ms, warp_aggregated 0.246. */
            snprintf(p->why, sizeof p->why, "GPU, keys in no order (runs of "
                     "%.1f): one atomic per element", run);
        }
        (void)sorted;
    }
    p->variant = v;
    p->name = bk_variant_names[v];
    /* Geometry. */
    const size_t n = facts->n ? facts->n : 1;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    int wg = ov->wg_size;
    if (wg == 0) {
        /* lookback, H100, 2^28 int32 keys / f32: wg 128 x 16 items
         * 1.954 ms, 256 x 16 2.124, 256 x 8 2.071, 512 x 8 2.038. */
        wg = !d->is_gpu ? (v == GR_BKV_HASH || v == GR_BKV_WARP ? 64 : 1)
             : v == GR_BKV_LOOKBACK ? 128 : 256;
    }
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
    if (v == GR_BKV_LOOKBACK) {
        /* Keys and values of a tile in local memory: at most 32 KiB. */
        const size_t esz = gr_dtypes[ty->k].size +
                           (ty->count ? 0 : gr_dtypes[ty->v].size);
        size_t it = ov->items;
        if (it == 0) {
            it = 32768 / ((size_t)wg * esz);
            it = it > 16 ? 16 : it < 1 ? 1 : it;
        }
        if (it > 32) {
            snprintf(p->why, sizeof p->why, "variant 'lookback' takes items "
                     "<= 32 (got %zu)", it);
            return -1;
        }
        p->items = it;
        p->groups = (n + (size_t)wg * it - 1) / ((size_t)wg * it);
    } else if (v == GR_BKV_SEGMENTS) {
        size_t it = ov->items;
        if (it == 0) {
            /* H100, 2^28 int32 keys in runs of 64: items 8 3.40 ms, 16
             * 4.47 ms, 32 22.3 ms. */
            it = d->is_gpu ? 8
                           : (n + cu * 8 - 1) / (cu * 8);
            if (!d->is_gpu && it < 4096) {
                it = 4096;
            }
        }
        p->items = it;
        p->groups = (n + (size_t)wg * it - 1) / ((size_t)wg * it);
    } else if (v == GR_BKV_PRIV) {
        p->parts = ov->items ? (n + ov->items - 1) / ov->items : cu;
        if (p->parts < 1) {
            p->parts = 1;
        }
        p->items = (n + p->parts - 1) / p->parts;
        p->groups = p->parts;
        p->wg = 1;
    } else {
        size_t it = ov->items;
        if (it == 0) {
            size_t groups = d->is_gpu ? cu * 32 : cu * 4;
            it = (n + (size_t)wg * groups - 1) / ((size_t)wg * groups);
            if (v == GR_BKV_HASH && it < 8) {
                it = 8; /* a tile of several elements per bin window */
            }
        }
        p->items = it ? it : 1;
        p->groups = (n + (size_t)wg * p->items - 1) / ((size_t)wg * p->items);
    }
    if (p->groups == 0) {
        p->groups = 1;
    }
    p->hash_bins = a_size == 8 ? 1024 : 2048;
    return 0;
}

/* ------------------------------------------------------------ kernels */

/* The #define block for kernels/bykey.cl.  seg: accumulator of the
 * sorted-segments and private-bins kernels (float32 sums in double where
 * the device has it); otherwise the accumulator has the result's bits, so
 * atomics fold straight into the output.  seg 2: the same, for the CPU
 * chunk kernels, a program of their own (a program caches 8 kernels);
 * seg 3: the single-pass reduce_by_key (items fixed at build time). */
static void bk_defines(char *buf, size_t n, const gr_device *d,
                       const gr_bk_types *ty, const gr_bk_plan *p, int seg)
{
    const gr_dtype_info *ki = &gr_dtypes[ty->k], *ri = &gr_dtypes[ty->r];
    const gr_dtype_info *ti = ty->count ? &gr_dtypes[GR_UINT8]
                                        : &gr_dtypes[ty->v];
    const char *a_cl;
    int a_size, cvt, a_float;
    const char *minv = "0", *maxv = "0";
    if (ty->count) {
        a_cl = "ulong";
        a_size = 8;
        cvt = 0;
        a_float = 0;
    } else if (ty->op == GR_ADD || ty->op == GR_MUL) {
        if (ri->is_float) {
            const int wide = seg && ty->op == GR_ADD && ty->r == GR_FLOAT32 &&
                             d->fp64;
            a_cl = wide ? "double" : ri->cl;
            a_size = wide ? 8 : ri->size;
            cvt = (wide || ty->v != ty->r) ? 1 : 0;
            a_float = 1;
        } else {
            a_cl = ri->cl_uns;
            a_size = ri->size;
            cvt = 2; /* wrap through the signed result, like NumPy */
            a_float = 0;
        }
    } else {
        a_cl = ti->cl;
        a_size = ti->size;
        cvt = 0;
        a_float = ti->is_float;
        minv = ti->minv;
        maxv = ti->maxv;
    }
    const int atomics = !seg && (a_size == 4 || d->atomics64);
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
             "#define GR_BK_LOOKBACK %d\n#define GR_BK_ITEMS %d\n",
             strcmp(a_cl, "double") == 0 || ti->size == 8 * ti->is_float ||
                 ty->r == GR_FLOAT64,
             ti->cl, a_cl, ty->count ? "long" : ri->cl,
             a_size == 4 ? "int" : "long", a_size, a_size, a_float,
             ty->count ? (int)GR_ADD : (int)ty->op, cvt, minv, maxv, p->wg,
             atomics, ki->cl, ki->size, ty->count, p->ptx, p->match,
             p->hash_bins, atomics, atomics && d->atomics64, seg == 2,
             seg == 3, seg == 3 ? (int)p->items : 0);
}

static cl_kernel bk_kernel(gr_device *d, const gr_bk_types *ty,
                           const gr_bk_plan *p, int seg, const char *name,
                           gr_status *st)
{
    char defs[1600];
    bk_defines(defs, sizeof defs, d, ty, p, seg);
    return gr_kernel_get(d, "bykey", defs, "", name, st);
}

#define ARG(k, i, v) \
    GR_CL_CHECK_AS(st, "clSetKernelArg", clSetKernelArg(k, i, sizeof(v), &(v)))

/* Enqueue k over groups x wg and add its device time to *ns. */
static int bk_launch(gr_device *d, cl_kernel k, size_t groups, size_t wg,
                     double *ns, gr_status *st)
{
    cl_event ev = NULL;
    size_t g = groups * wg, l = wg;
    GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &g, &l, 0,
                                           NULL, ns ? &ev : NULL));
    if (ev != NULL) {
        cl_ulong a = 0, b = 0;
        GR_CL_CHECK(st, clWaitForEvents(1, &ev));
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a,
                                NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b,
                                NULL);
        *ns += b > a ? (double)(b - a) : 0.0;
        clReleaseEvent(ev);
    }
    return 0;
fail:
    if (ev) clReleaseEvent(ev);
    return -1;
}

static cl_mem bk_buffer(gr_device *d, size_t bytes, gr_status *st)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 8,
                              NULL, &err);
    GR_CL_CHECK_AS(st, "clCreateBuffer", err);
    return m;
fail:
    return NULL;
}

/* ------------------------------------------------- device-level drivers */

int gr_bykey_stats_dev(gr_device *d, const gr_bk_types *ty, cl_mem keys,
                       size_t koff, size_t n, uint64_t nk, gr_bk_facts *fx,
                       double *ns, gr_status *st)
{
    gr_bk_plan p;
    cl_mem sb = NULL;
    cl_ulong *h = NULL;
    int rc = -1;
    memset(&p, 0, sizeof p);
    fx->n = n;
    fx->first_bad = UINT64_MAX;
    fx->heads = fx->descents = fx->max_key = 0;
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
    if ((sb = bk_buffer(d, groups * 32, st)) == NULL ||
        (h = malloc(groups * 32)) == NULL) {
        if (h == NULL && sb != NULL) {
            gr_status_fail(st, "out of host memory");
        }
        goto fail;
    }
    cl_ulong un = n, ukoff = koff, unk = nk;
    ARG(k, 0, keys);
    ARG(k, 1, ukoff);
    ARG(k, 2, un);
    ARG(k, 3, unk);
    ARG(k, 4, items);
    ARG(k, 5, sb);
    if (bk_launch(d, k, groups, p.wg, ns, st) != 0) {
        goto fail;
    }
    GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, sb, CL_TRUE, 0, groups * 32,
                                        h, 0, NULL, NULL));
    for (size_t g = 0; g < groups; ++g) {
        fx->first_bad = h[4 * g] < fx->first_bad ? h[4 * g] : fx->first_bad;
        fx->heads += h[4 * g + 1];
        fx->descents += h[4 * g + 2];
        fx->max_key = h[4 * g + 3] > fx->max_key ? h[4 * g + 3] : fx->max_key;
    }
    rc = 0;
fail:
    free(h);
    if (sb) clReleaseMemObject(sb);
    return rc;
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
    int rc = -1;
    const cl_ulong chunk = p->items, P = (n + p->items - 1) / p->items,
                   un = n, ukoff = koff, uvoff = voff;
    const cl_uint umode = (cl_uint)mode;
    cl_kernel k1 = bk_kernel(d, ty, p, 2, "gr_bk_chunk_runs", st);
    cl_kernel k2 = k1 && mode == 0 ? bk_kernel(d, ty, p, 2, "gr_bk_chunk_move",
                                               st) : NULL;
    if (k1 == NULL || (mode == 0 && k2 == NULL) ||
        (cb = bk_buffer(d, P * 8, st)) == NULL) {
        goto fail;
    }
    if (mode == 0) {
        /* Staging of capacity n: a CPU device touches only the pages the
         * runs are written to. */
        if ((sk = bk_buffer(d, n * gr_dtypes[ty->k].size, st)) == NULL ||
            (sv = bk_buffer(d, n * gr_dtypes[ty->r].size, st)) == NULL) {
            goto fail;
        }
        if (count == NULL && (cnt = count = bk_buffer(d, 8, st)) == NULL) {
            goto fail;
        }
    }
    if (vals == NULL) {
        vals = keys; /* op count reads no values */
    }
    cl_mem wk = mode == 0 ? sk : ovals, wv = mode == 0 ? sv : ovals;
    ARG(k1, 0, keys);
    ARG(k1, 1, ukoff);
    ARG(k1, 2, vals);
    ARG(k1, 3, uvoff);
    ARG(k1, 4, un);
    ARG(k1, 5, chunk);
    ARG(k1, 6, umode);
    ARG(k1, 7, wk);
    ARG(k1, 8, wv);
    ARG(k1, 9, cb);
    if (bk_launch(d, k1, P, 1, ns, st) != 0) {
        goto fail;
    }
    if (mode == 0) {
        ARG(k2, 0, sk);
        ARG(k2, 1, sv);
        ARG(k2, 2, chunk);
        ARG(k2, 3, P);
        ARG(k2, 4, cb);
        ARG(k2, 5, okeys);
        ARG(k2, 6, ovals);
        ARG(k2, 7, count);
        if (bk_launch(d, k2, P, 1, ns, st) != 0) {
            goto fail;
        }
    }
    rc = 0;
fail:
    if (cb) clReleaseMemObject(cb);
    if (sk) clReleaseMemObject(sk);
    if (sv) clReleaseMemObject(sv);
    if (cnt) clReleaseMemObject(cnt);
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
    int rc = -1;
    const cl_ulong T = p->groups, un = n, ukoff = koff, uvoff = voff;
    const size_t asz = 8; /* accumulators of seg programs: at most 8 bytes */
    cl_kernel k0 = bk_kernel(d, ty, p, 3, "gr_bk_lb_init", st);
    cl_kernel k1 = k0 ? bk_kernel(d, ty, p, 3, "gr_bk_lb_tiles", st) : NULL;
    cl_kernel k2 = k1 ? bk_kernel(d, ty, p, 3, "gr_bk_lb_fix", st) : NULL;
    if (k2 == NULL || (ctr = bk_buffer(d, 8, st)) == NULL ||
        (status = bk_buffer(d, T * 8, st)) == NULL ||
        (lead = bk_buffer(d, T * asz, st)) == NULL ||
        (tail = bk_buffer(d, T * asz, st)) == NULL ||
        (info = bk_buffer(d, T * 16, st)) == NULL) {
        goto fail;
    }
    if (vals == NULL) {
        vals = keys; /* op count reads no values */
    }
    const size_t wg0 = d->is_gpu ? 256 : 1;
    const size_t g0 = (T + wg0 - 1) / wg0 < 1024 ? (T + wg0 - 1) / wg0 : 1024;
    ARG(k0, 0, status);
    ARG(k0, 1, T);
    ARG(k0, 2, ctr);
    if (bk_launch(d, k0, g0, wg0, ns, st) != 0) {
        goto fail;
    }
    ARG(k1, 0, keys);
    ARG(k1, 1, ukoff);
    ARG(k1, 2, vals);
    ARG(k1, 3, uvoff);
    ARG(k1, 4, un);
    ARG(k1, 5, ctr);
    ARG(k1, 6, status);
    ARG(k1, 7, okeys);
    ARG(k1, 8, ovals);
    ARG(k1, 9, lead);
    ARG(k1, 10, tail);
    ARG(k1, 11, info);
    ARG(k1, 12, count);
    if (bk_launch(d, k1, T, p->wg, ns, st) != 0) {
        goto fail;
    }
    ARG(k2, 0, lead);
    ARG(k2, 1, tail);
    ARG(k2, 2, info);
    ARG(k2, 3, T);
    ARG(k2, 4, ovals);
    if (bk_launch(d, k2, (T + wg0 - 1) / wg0, wg0, ns, st) != 0) {
        goto fail;
    }
    rc = 0;
fail:
    if (ctr) clReleaseMemObject(ctr);
    if (status) clReleaseMemObject(status);
    if (lead) clReleaseMemObject(lead);
    if (tail) clReleaseMemObject(tail);
    if (info) clReleaseMemObject(info);
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
    if ((tf = bk_buffer(d, T * 4, st)) == NULL ||
        (th = bk_buffer(d, T * 8, st)) == NULL ||
        (ta = bk_buffer(d, T * 8, st)) == NULL) {
        goto fail;
    }
    if (count == NULL && (cnt = count = bk_buffer(d, 8, st)) == NULL) {
        goto fail;
    }
    if (vals == NULL) {
        vals = keys; /* op count reads no values */
    }
    ARG(k1, 0, keys);
    ARG(k1, 1, ukoff);
    ARG(k1, 2, vals);
    ARG(k1, 3, uvoff);
    ARG(k1, 4, un);
    ARG(k1, 5, uit);
    ARG(k1, 6, tf);
    ARG(k1, 7, th);
    ARG(k1, 8, ta);
    if (bk_launch(d, k1, T, p->wg, ns, st) != 0) {
        goto fail;
    }
    ARG(k2, 0, tf);
    ARG(k2, 1, th);
    ARG(k2, 2, ta);
    ARG(k2, 3, T);
    ARG(k2, 4, count);
    if (bk_launch(d, k2, 1, p->wg, ns, st) != 0) {
        goto fail;
    }
    if (okeys == NULL) {
        okeys = ovals; /* unused outside reduce mode */
    }
    ARG(k3, 0, keys);
    ARG(k3, 1, ukoff);
    ARG(k3, 2, vals);
    ARG(k3, 3, uvoff);
    ARG(k3, 4, un);
    ARG(k3, 5, uit);
    ARG(k3, 6, th);
    ARG(k3, 7, ta);
    ARG(k3, 8, umode);
    ARG(k3, 9, okeys);
    ARG(k3, 10, ovals);
    if (bk_launch(d, k3, T, p->wg, ns, st) != 0) {
        goto fail;
    }
    rc = 0;
fail:
    if (tf) clReleaseMemObject(tf);
    if (th) clReleaseMemObject(th);
    if (ta) clReleaseMemObject(ta);
    if (cnt) clReleaseMemObject(cnt);
    return rc;
}

/* Dense bins: out (num_keys results) is filled with the identity (and
 * flag[0] set to "no bad key"), then the plan's variant folds every value
 * into out[key].  Keys must have been validated (gr_bykey_stats_dev) unless
 * the variant checks them itself (atomic kernels on devices with 64-bit
 * atomics: bad indices go to flag[0]); sorted_segments needs sorted keys. */
int gr_bykey_dense_dev(gr_device *d, const gr_bk_types *ty,
                       const gr_bk_plan *p, cl_mem keys, size_t koff,
                       cl_mem vals, size_t voff, size_t n, size_t nk,
                       cl_mem out, cl_mem flag, double *ns, gr_status *st)
{
    cl_mem bins = NULL;
    int rc = -1;
    if (nk == 0) {
        return 0;
    }
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    if (p->variant != GR_BKV_PRIV || n == 0) {
        /* A kernel, not clEnqueueFillBuffer: Oclgrind's uninitialised-value
         * check does not see what a fill wrote. */
        cl_kernel ki = bk_kernel(d, ty, p, p->variant == GR_BKV_SEGMENTS ||
                                 p->variant == GR_BKV_PRIV, "gr_bk_init", st);
        const cl_ulong unk0 = nk;
        const size_t wg = d->is_gpu ? 256 : 1;
        size_t groups = (nk + wg - 1) / wg;
        const size_t cap = (d->compute_units ? d->compute_units : 1) *
                           (d->is_gpu ? 32 : 4);
        groups = groups < cap ? groups : cap;
        if (ki == NULL) {
            goto fail;
        }
        ARG(ki, 0, out);
        ARG(ki, 1, unk0);
        ARG(ki, 2, flag);
        if (bk_launch(d, ki, groups, wg, ns, st) != 0) {
            goto fail;
        }
    }
    if (n == 0) {
        return 0;
    }
    const cl_ulong un = n, ukoff = koff, uvoff = voff, unk = nk,
                   uit = p->items;
    if (p->variant == GR_BKV_SEGMENTS) {
        return gr_bykey_segments_dev(d, ty, p, 3, keys, koff, vals, voff, n,
                                     NULL, out, NULL, ns, st);
    }
    if (p->variant == GR_BKV_PRIV) {
        cl_kernel kf = bk_kernel(d, ty, p, 1, "gr_bk_priv_fill", st);
        cl_kernel km = kf ? bk_kernel(d, ty, p, 1, "gr_bk_priv_merge", st)
                          : NULL;
        const cl_ulong P = p->parts;
        const size_t mparts = (d->compute_units ? d->compute_units : 1) * 4;
        const cl_ulong mchunk = (nk + mparts - 1) / mparts;
        const size_t mgroups = (nk + mchunk - 1) / mchunk;
        if (km == NULL) {
            goto fail;
        }
        const int a_size = (ty->op == GR_ADD && ty->r == GR_FLOAT32 &&
                            d->fp64) ? 8 : gr_dtypes[ty->r].size;
        if ((bins = bk_buffer(d, P * nk * a_size, st)) == NULL) {
            goto fail;
        }
        ARG(kf, 0, keys);
        ARG(kf, 1, ukoff);
        ARG(kf, 2, vals);
        ARG(kf, 3, uvoff);
        ARG(kf, 4, un);
        ARG(kf, 5, uit);
        ARG(kf, 6, unk);
        ARG(kf, 7, bins);
        if (bk_launch(d, kf, P, 1, ns, st) != 0) {
            goto fail;
        }
        ARG(km, 0, bins);
        ARG(km, 1, unk);
        ARG(km, 2, P);
        ARG(km, 3, mchunk);
        ARG(km, 4, out);
        if (bk_launch(d, km, mgroups, 1, ns, st) != 0) {
            goto fail;
        }
        rc = 0;
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
    ARG(k, 0, keys);
    ARG(k, 1, ukoff);
    ARG(k, 2, vals);
    ARG(k, 3, uvoff);
    ARG(k, 4, un);
    ARG(k, 5, uit);
    ARG(k, 6, out);
    ARG(k, 7, unk);
    ARG(k, 8, flag);
    if (bk_launch(d, k, p->groups, p->wg, ns, st) != 0) {
        goto fail;
    }
    rc = 0;
fail:
    if (bins) clReleaseMemObject(bins);
    return rc;
}

/* sum_by_key, first half: the plan, with res->facts.num_keys.  The keys
 * are validated and measured by gr_bk_stats first, except where the check
 * is fused into the aggregation kernel (res->fused): num_keys given,
 * nondeterministic, an atomic variant (asked for, or auto on NVIDIA), and
 * 64-bit atomics for the flag word -- then nothing runs before the kernel
 * and nothing is read back before it.  res->needs_sort: deterministic and
 * the keys are not sorted.  res->facts.first_bad != MAX: a bad key. */
int gr_bykey_sum_plan_dev(gr_device *d, int sm, const gr_bk_types *ty,
                          const gr_bk_overrides *ov, cl_mem keys, size_t koff,
                          size_t n, int64_t num_keys, gr_bk_result *res,
                          gr_status *st)
{
    const uint64_t bound = num_keys >= 0 ? (uint64_t)num_keys
                                         : (uint64_t)1 << 62;
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    res->fused = 0;
    if (num_keys > 0 && n > 0 && !ov->deterministic && d->atomics64) {
        const char *w = ov->variant;
        const int is_auto = w == NULL || strcmp(w, "auto") == 0;
        const int atomic_kind = !is_auto && (strcmp(w, "atomic") == 0 ||
                                             strcmp(w, "warp_aggregated") == 0 ||
                                             strcmp(w, "local_hash") == 0);
        if (atomic_kind || (is_auto && d->is_gpu && d->nvidia_ptx)) {
            memset(&res->facts, 0, sizeof res->facts);
            res->facts.n = n;
            res->facts.num_keys = (size_t)num_keys;
            res->facts.first_bad = UINT64_MAX;
            res->facts.sorted = ov->sorted;
            res->facts.unmeasured = 1;
            int prc = gr_bk_plan_for(d, sm, GR_BK_DENSE, ty, &res->facts, ov,
                                     &res->plan);
            if (prc != 0) {
                res->plan_rc = prc;
                return 0;
            }
            if (res->plan.variant == GR_BKV_ATOMIC ||
                res->plan.variant == GR_BKV_WARP ||
                res->plan.variant == GR_BKV_HASH) {
                res->fused = 1;
                return 0;
            }
        }
    }
    if (gr_bykey_stats_dev(d, ty, keys, koff, n, bound, &res->facts,
                           res->ns ? &res->ns_stats : NULL, st) != 0) {
        return -1;
    }
    if (res->facts.first_bad != UINT64_MAX) {
        return 0;
    }
    res->facts.num_keys = num_keys >= 0 ? (size_t)num_keys
                          : n ? (size_t)res->facts.max_key + 1 : 0;
    res->facts.sorted = ov->sorted;
    int prc = gr_bk_plan_for(d, sm, GR_BK_DENSE, ty, &res->facts, ov,
                             &res->plan);
    if (prc != 0) {
        res->plan_rc = prc;
        return 0;
    }
    if (res->plan.variant == GR_BKV_SEGMENTS && res->facts.descents != 0) {
        res->needs_sort = 1;
    }
    return 0;
}

/* sum_by_key, second half: fill out (res->facts.num_keys results, made by
 * the caller) as planned.  A fused plan reads the flag word back (8 bytes,
 * the one wait) and reports a bad key in res->facts.first_bad; out then
 * holds garbage and must not reach the caller. */
int gr_bykey_sum_exec_dev(gr_device *d, const gr_bk_types *ty, cl_mem keys,
                          size_t koff, cl_mem vals, size_t voff, size_t n,
                          cl_mem out, gr_bk_result *res, gr_status *st)
{
    cl_mem flag = bk_buffer(d, 8, st);
    int rc = -1;
    if (flag == NULL) {
        return -1;
    }
    if (gr_bykey_dense_dev(d, ty, &res->plan, keys, koff, vals, voff, n,
                           res->facts.num_keys, out, flag, res->ns, st) != 0) {
        goto fail;
    }
    if (res->fused) {
        cl_ulong fb = 0;
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, flag, CL_TRUE, 0, 8,
                                            &fb, 0, NULL, NULL));
        res->facts.first_bad = fb;
    }
    rc = 0;
fail:
    clReleaseMemObject(flag);
    return rc;
}

/* sum_by_key on the device: plan, allocate *out (num_keys results; the
 * caller owns it) and fill it.  Nothing in *out on needs_sort, a refused
 * plan or a bad key. */
int gr_bykey_sum_dev(gr_device *d, int sm, const gr_bk_types *ty,
                     const gr_bk_overrides *ov, cl_mem keys, size_t koff,
                     cl_mem vals, size_t voff, size_t n, int64_t num_keys,
                     cl_mem *out, gr_bk_result *res, gr_status *st)
{
    *out = NULL;
    if (gr_bykey_sum_plan_dev(d, sm, ty, ov, keys, koff, n, num_keys, res,
                              st) != 0) {
        return -1;
    }
    if (res->plan_rc != 0 || res->needs_sort ||
        res->facts.first_bad != UINT64_MAX) {
        return 0;
    }
    if ((*out = bk_buffer(d, res->facts.num_keys * gr_dtypes[ty->r].size,
                          st)) == NULL) {
        return -1;
    }
    if (gr_bykey_sum_exec_dev(d, ty, keys, koff, vals, voff, n, *out, res,
                              st) != 0 ||
        res->facts.first_bad != UINT64_MAX) {
        clReleaseMemObject(*out);
        *out = NULL;
        return res->facts.first_bad != UINT64_MAX ? 0 : -1;
    }
    return 0;
}

/* reduce_by_key / scan_by_key on the device: okeys, ovals of capacity n
 * (reduce) or *ovals of n (scan; the caller may pass its own buffer in
 * *ovals), res->count the runs (reduce reads it back: the one wait). */
int gr_bykey_runs_dev(gr_device *d, int sm, gr_bk_func f, int exclusive,
                      const gr_bk_types *ty, const gr_bk_overrides *ov,
                      cl_mem keys, size_t koff, cl_mem vals, size_t voff,
                      size_t n, cl_mem *okeys, cl_mem *ovals,
                      gr_bk_result *res, gr_status *st)
{
    cl_mem cnt = NULL;
    const cl_mem given = f == GR_BK_SCAN ? *ovals : NULL;
    *okeys = NULL;
    *ovals = given;
    res->facts.n = n;
    res->facts.sorted = -1;
    int prc = gr_bk_plan_for(d, sm, f, ty, &res->facts, ov, &res->plan);
    if (prc != 0) {
        res->plan_rc = prc;
        return 0;
    }
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    const size_t rs = gr_dtypes[ty->r].size;
    if ((*ovals == NULL && (*ovals = bk_buffer(d, n * rs, st)) == NULL) ||
        (f == GR_BK_REDUCE &&
         ((*okeys = bk_buffer(d, n * gr_dtypes[ty->k].size, st)) == NULL ||
          (cnt = bk_buffer(d, 8, st)) == NULL))) {
        goto fail;
    }
    const int mode = f == GR_BK_REDUCE ? 0 : exclusive ? 2 : 1;
    if (gr_bykey_segments_dev(d, ty, &res->plan, mode, keys, koff, vals, voff,
                              n, *okeys, *ovals, cnt, res->ns, st) != 0) {
        goto fail;
    }
    res->count = n;
    if (cnt != NULL) {
        cl_ulong c = 0;
        if (n > 0) {
            GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, cnt, CL_TRUE, 0, 8,
                                                &c, 0, NULL, NULL));
        }
        res->count = (size_t)c;
        clReleaseMemObject(cnt);
    }
    return 0;
fail:
    if (cnt) clReleaseMemObject(cnt);
    if (*okeys) clReleaseMemObject(*okeys);
    if (*ovals && *ovals != given) clReleaseMemObject(*ovals);
    *okeys = *ovals = NULL;
    return -1;
}

/* NVIDIA compute capability (cl_nv_device_attribute_query), 0 if unknown. */
static int bk_sm(const gr_device *d)
{
    cl_uint major = 0;
    if (!d->nvidia_ptx ||
        clGetDeviceInfo(d->id, 0x4000 /* CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV */,
                        sizeof major, &major, NULL) != CL_SUCCESS) {
        return 0;
    }
    return (int)major;
}

/* ---------------------------------------------------------- the shell */

typedef struct {
    gr_bk_func f;
    int exclusive;
    int64_t num_keys;
    gr_bk_types ty;
    gr_bk_overrides ov;
    PyArrayObject *keys, *vals; /* host inputs (owned); NULL on the device
                                 * (vals also for op count)               */
    PyObject *kbuf, *vbuf;      /* device inputs: _core.Buffer (owned)     */
    size_t koff, voff;          /* their first element                     */
    size_t n;
    int on_device;              /* an input is a gpured.Array: results are
                                 * _core.Buffers on its device             */
    int di;                     /* that device's index                     */
    gr_device *dev;
} bk_call;

static void bk_call_clear(bk_call *c)
{
    Py_CLEAR(c->keys);
    Py_CLEAR(c->vals);
    Py_CLEAR(c->kbuf);
    Py_CLEAR(c->vbuf);
}

static PyObject *bk_array(gr_dtype t, size_t n)
{
    static const int types[GR_NDTYPES] = {
        NPY_BOOL, NPY_INT8, NPY_UINT8, NPY_INT16, NPY_UINT16, NPY_INT32,
        NPY_UINT32, NPY_INT64, NPY_UINT64, NPY_FLOAT32, NPY_FLOAT64};
    npy_intp dims[1] = {(npy_intp)n};
    return PyArray_SimpleNew(1, dims, types[t]);
}

/* The inputs as (cl_mem, first element): device arrays in place, host
 * arrays uploaded (zero-copy on CPU devices).  *_own: ki/vi hold an upload
 * to release.  No GIL. */
typedef struct {
    gr_input ki, vi;
    int kown, vown, zero_copy;
} bk_inputs;

static int bk_inputs_open(bk_call *c, bk_inputs *in, gr_status *st)
{
    memset(in, 0, sizeof *in);
    if (c->kbuf != NULL) {
        in->ki.mem = ((gr_buffer *)c->kbuf)->mem;
        in->ki.base = c->koff;
    } else {
        if (gr_input_from_host(c->dev, PyArray_DATA(c->keys),
                               c->n * PyArray_ITEMSIZE(c->keys),
                               PyArray_ITEMSIZE(c->keys), &in->ki, st) != 0) {
            return -1;
        }
        in->kown = 1;
        in->zero_copy |= in->ki.zero_copy;
    }
    if (c->vbuf != NULL) {
        in->vi.mem = ((gr_buffer *)c->vbuf)->mem;
        in->vi.base = c->voff;
    } else if (c->vals != NULL) {
        if (gr_input_from_host(c->dev, PyArray_DATA(c->vals),
                               c->n * PyArray_ITEMSIZE(c->vals),
                               PyArray_ITEMSIZE(c->vals), &in->vi, st) != 0) {
            return -1;
        }
        in->vown = 1;
        in->zero_copy |= in->vi.zero_copy;
    }
    return 0;
}

/* No GIL.  wait: host memory used in place must outlive the kernels
 * reading it (results on the device are otherwise not waited for). */
static void bk_inputs_close(gr_device *d, bk_inputs *in, int wait)
{
    if (wait && in->zero_copy && d->queue != NULL) {
        clFinish(d->queue);
    }
    if (in->kown) gr_input_release(&in->ki);
    if (in->vown) gr_input_release(&in->vi);
    memset(in, 0, sizeof *in);
}

/* Host arrays out: run the device-level driver `reps` times (reps > 0:
 * device times in ns[]), read the results back into new NumPy arrays.
 * Inputs may be host or device arrays.  Returns (keys or None, values or
 * None) -- None values with res->needs_sort or a bad key reported in res. */
static PyObject *bk_run_host(bk_call *c, int reps, double *ns,
                             gr_bk_result *res)
{
    gr_status st = {0};
    bk_inputs in;
    cl_mem ok = NULL, ov = NULL;
    PyObject *rk = NULL, *rv = NULL, *out = NULL;
    const size_t n = c->n;
    const int sm = bk_sm(c->dev);
    int rc = -1;

    memset(&in, 0, sizeof in);
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (bk_inputs_open(c, &in, &st) != 0) {
        goto unlock;
    }
    for (int i = 0; i < (reps > 0 ? reps : 1); ++i) {
        double t = 0.0;
        if (ok) { clReleaseMemObject(ok); ok = NULL; }
        if (ov) { clReleaseMemObject(ov); ov = NULL; }
        memset(res, 0, sizeof *res);
        res->facts.first_bad = UINT64_MAX;
        res->ns = reps > 0 ? &t : NULL;
        if (c->f == GR_BK_DENSE) {
            if (gr_bykey_sum_dev(c->dev, sm, &c->ty, &c->ov, in.ki.mem,
                                 in.ki.base, in.vi.mem, in.vi.base, n,
                                 c->num_keys, &ov, res, &st) != 0) {
                goto unlock;
            }
        } else if (gr_bykey_runs_dev(c->dev, sm, c->f, c->exclusive, &c->ty,
                                     &c->ov, in.ki.mem, in.ki.base, in.vi.mem,
                                     in.vi.base, n, &ok, &ov, res, &st) != 0) {
            goto unlock;
        }
        if (ns != NULL) {
            ns[i] = t + res->ns_stats;
        }
        res->ns = NULL;
    }
    rc = 0;
unlock:
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        goto done;
    }
    if (res->plan_rc != 0 || res->needs_sort ||
        res->facts.first_bad != UINT64_MAX) {
        out = Py_BuildValue("(OO)", Py_None, Py_None);
        goto done;
    }
    size_t nres = c->f == GR_BK_DENSE    ? res->facts.num_keys
                  : c->f == GR_BK_REDUCE ? res->count
                                         : n;
    if ((rv = bk_array(c->ty.r, nres)) == NULL ||
        (c->f == GR_BK_REDUCE && (rk = bk_array(c->ty.k, nres)) == NULL)) {
        goto done;
    }
    rc = -1;
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (nres > 0) {
        GR_CL_CHECK(&st, clEnqueueReadBuffer(
                             c->dev->queue, ov, CL_TRUE, 0,
                             nres * gr_dtypes[c->ty.r].size,
                             PyArray_DATA((PyArrayObject *)rv), 0, NULL, NULL));
        if (rk != NULL) {
            GR_CL_CHECK(&st, clEnqueueReadBuffer(
                                 c->dev->queue, ok, CL_TRUE, 0,
                                 nres * gr_dtypes[c->ty.k].size,
                                 PyArray_DATA((PyArrayObject *)rk), 0, NULL,
                                 NULL));
        }
    }
    rc = 0;
fail:
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        goto done;
    }
    out = Py_BuildValue("(OO)", rk ? rk : Py_None, rv);
done:
    Py_XDECREF(rk);
    Py_XDECREF(rv);
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (ok) clReleaseMemObject(ok);
    if (ov) clReleaseMemObject(ov);
    bk_inputs_close(c->dev, &in, 0); /* the reads above waited */
    gr_unlock();
    Py_END_ALLOW_THREADS
    return out;
}

/* Device arrays out (an input was a gpured.Array): results are new
 * _core.Buffers on the inputs' device, enqueued and not waited for.  The
 * waits: sum_by_key's key facts where a stats pass runs (num_keys not
 * given, or a variant without the fused check) or the fused check's flag
 * word (8 bytes); reduce_by_key's run count (the output's length).
 * Returns (keys Buffer or None, values Buffer) or (None, None) as
 * bk_run_host. */
static PyObject *bk_run_device(bk_call *c, gr_bk_result *res)
{
    gr_status st = {0};
    bk_inputs in;
    cl_mem ok = NULL, ov = NULL;
    PyObject *rk = NULL, *rv = NULL, *out = NULL;
    const size_t n = c->n;
    const size_t rs = gr_dtypes[c->ty.r].size, ks = gr_dtypes[c->ty.k].size;
    const int sm = bk_sm(c->dev);
    int rc = -1, opened = 0;

    memset(&in, 0, sizeof in);
    memset(res, 0, sizeof *res);
    res->facts.first_bad = UINT64_MAX;
    if (c->f == GR_BK_SCAN) {
        if ((rv = gr_buffer_new(c->di, n * rs)) == NULL) {
            return NULL;
        }
        ov = ((gr_buffer *)rv)->mem; /* rv's: not released here */
    }
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (bk_inputs_open(c, &in, &st) == 0) {
        opened = 1;
        if (c->f == GR_BK_DENSE) {
            rc = gr_bykey_sum_plan_dev(c->dev, sm, &c->ty, &c->ov, in.ki.mem,
                                       in.ki.base, n, c->num_keys, res, &st);
        } else {
            rc = gr_bykey_runs_dev(c->dev, sm, c->f, c->exclusive, &c->ty,
                                   &c->ov, in.ki.mem, in.ki.base, in.vi.mem,
                                   in.vi.base, n, &ok, &ov, res, &st);
        }
    }
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        goto done;
    }
    if (res->plan_rc != 0 || res->needs_sort ||
        res->facts.first_bad != UINT64_MAX) {
        out = Py_BuildValue("(OO)", Py_None, Py_None);
        goto done;
    }
    if (c->f == GR_BK_DENSE) {
        if ((rv = gr_buffer_new(c->di, res->facts.num_keys * rs)) == NULL) {
            goto done;
        }
        rc = -1;
        Py_BEGIN_ALLOW_THREADS
        gr_lock();
        rc = gr_bykey_sum_exec_dev(c->dev, &c->ty, in.ki.mem, in.ki.base,
                                   in.vi.mem, in.vi.base, n,
                                   ((gr_buffer *)rv)->mem, res, &st);
        gr_unlock();
        Py_END_ALLOW_THREADS
        if (rc != 0) {
            gr_raise(&st);
            goto done;
        }
        if (res->facts.first_bad != UINT64_MAX) {
            out = Py_BuildValue("(OO)", Py_None, Py_None);
            goto done;
        }
    } else if (c->f == GR_BK_REDUCE) {
        const size_t m = res->count;
        if ((rv = gr_buffer_new(c->di, m * rs)) == NULL ||
            (rk = gr_buffer_new(c->di, m * ks)) == NULL) {
            goto done;
        }
        rc = -1;
        Py_BEGIN_ALLOW_THREADS
        gr_lock();
        if (m > 0) {
            GR_CL_CHECK(&st, clEnqueueCopyBuffer(
                                 c->dev->queue, ov, ((gr_buffer *)rv)->mem, 0,
                                 0, m * rs, 0, NULL, NULL));
            GR_CL_CHECK(&st, clEnqueueCopyBuffer(
                                 c->dev->queue, ok, ((gr_buffer *)rk)->mem, 0,
                                 0, m * ks, 0, NULL, NULL));
        }
        rc = 0;
    fail:
        gr_unlock();
        Py_END_ALLOW_THREADS
        if (rc != 0) {
            gr_raise(&st);
            goto done;
        }
    }
    out = Py_BuildValue("(OO)", rk ? rk : Py_None, rv);
done:
    Py_XDECREF(rk);
    Py_XDECREF(rv);
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (ok) clReleaseMemObject(ok);
    if (ov && c->f != GR_BK_SCAN) clReleaseMemObject(ov);
    if (opened) bk_inputs_close(c->dev, &in, 1);
    gr_unlock();
    Py_END_ALLOW_THREADS
    return out;
}

/* ------------------------------------------------------ Python entries */

static int bk_dtype_of(PyArray_Descr *descr, gr_dtype *t)
{
    for (int i = 0; i < GR_NDTYPES; ++i) {
        const gr_dtype_info *di = &gr_dtypes[i];
        char kind = i == GR_BOOL ? 'b' : di->is_float ? 'f'
                    : di->is_signed ? 'i' : 'u';
        if (descr->kind == kind && PyDataType_ELSIZE(descr) == di->size) {
            *t = (gr_dtype)i;
            return 0;
        }
    }
    return -1;
}

static int bk_op_of(const char *name, gr_bk_types *ty)
{
    static const struct { const char *name; gr_op op; } ops[] = {
        {"sum", GR_ADD}, {"prod", GR_MUL}, {"min", GR_MIN}, {"max", GR_MAX}};
    ty->count = strcmp(name, "count") == 0;
    if (ty->count) {
        ty->op = GR_ADD;
        return 0;
    }
    for (size_t i = 0; i < sizeof ops / sizeof *ops; ++i) {
        if (strcmp(name, ops[i].name) == 0) {
            ty->op = ops[i].op;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown op '%s'", name);
    return -1;
}

static PyArrayObject *bk_native(PyObject *o, const char *what)
{
    if (!PyArray_Check(o) || PyArray_NDIM((PyArrayObject *)o) != 1) {
        PyErr_Format(PyExc_ValueError, "%s must be a 1-D array", what);
        return NULL;
    }
    PyArray_Descr *nd = PyArray_DescrNewByteorder(
        PyArray_DESCR((PyArrayObject *)o), NPY_NATIVE); /* stolen below */
    if (nd == NULL) {
        return NULL;
    }
    return (PyArrayObject *)PyArray_FromAny(
        o, nd, 1, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
}

/* One input: a 1-D NumPy array, or a contiguous device view given as
 * (Buffer, dtype, first element, length) (gpured/_bykey.py makes it). */
static int bk_input(bk_call *c, PyObject *o, const char *what,
                    PyArrayObject **arr, PyObject **buf, size_t *off,
                    gr_dtype *t, size_t *n)
{
    if (PyTuple_Check(o)) {
        PyObject *bo = NULL;
        PyArray_Descr *td = NULL;
        Py_ssize_t eo = 0, len = 0;
        gr_device *d = NULL;
        gr_buffer *b;
        if (!PyArg_ParseTuple(o, "OO&nn", &bo, PyArray_DescrConverter, &td,
                              &eo, &len)) {
            return -1;
        }
        b = gr_buffer_check(bo, &d);
        const size_t isz = (size_t)PyDataType_ELSIZE(td);
        const int drc = bk_dtype_of(td, t);
        Py_DECREF(td);
        if (b == NULL) {
            return -1;
        }
        if (drc != 0) {
            PyErr_Format(PyExc_TypeError, "unsupported %s dtype", what);
            return -1;
        }
        if (eo < 0 || len < 0 ||
            ((size_t)eo + (size_t)len) * isz > (size_t)b->nbytes) {
            PyErr_Format(PyExc_ValueError, "%s: view outside its device "
                         "buffer", what);
            return -1;
        }
        if (c->on_device && gr_same_device(c->dev, d) != 0) {
            return -1;
        }
        c->on_device = 1;
        c->di = b->dev;
        c->dev = d;
        *buf = Py_NewRef(bo);
        *off = (size_t)eo;
        *n = (size_t)len;
        return 0;
    }
    if ((*arr = bk_native(o, what)) == NULL) {
        return -1;
    }
    if (bk_dtype_of(PyArray_DESCR(*arr), t) != 0) {
        PyErr_Format(PyExc_TypeError, "unsupported %s dtype", what);
        return -1;
    }
    *n = (size_t)PyArray_SIZE(*arr);
    return 0;
}

static char *bk_kw[] = {"func", "keys", "values", "op", "num_keys",
                        "exclusive", "deterministic", "sorted", "variant",
                        "wg_size", "items", NULL};

/* Parse (func, keys, values, op, num_keys=-1, exclusive=0,
 * deterministic=0, sorted=-1, variant=None, wg_size=0, items=0).  keys and
 * values: NumPy arrays or device views (see bk_input). */
static int bk_prepare(bk_call *c, PyObject *args, PyObject *kw)
{
    const char *func = NULL, *op = NULL;
    PyObject *ko = NULL, *vo = NULL;
    long long nk = -1;
    Py_ssize_t items = 0;
    char err[256];
    gr_dtype kt, vt = GR_UINT8;
    size_t vn = 0;
    memset(c, 0, sizeof *c);
    c->ov.sorted = -1;
    if (bk_numpy() != 0 ||
        !PyArg_ParseTupleAndKeywords(args, kw, "sOOs|Lpiizin", bk_kw, &func,
                                     &ko, &vo, &op, &nk, &c->exclusive,
                                     &c->ov.deterministic, &c->ov.sorted,
                                     &c->ov.variant, &c->ov.wg_size, &items)) {
        return -1;
    }
    c->num_keys = nk;
    c->ov.items = items > 0 ? (size_t)items : 0;
    if (strcmp(func, "reduce_by_key") == 0) {
        c->f = GR_BK_REDUCE;
    } else if (strcmp(func, "sum_by_key") == 0) {
        c->f = GR_BK_DENSE;
    } else if (strcmp(func, "scan_by_key") == 0) {
        c->f = GR_BK_SCAN;
    } else {
        PyErr_Format(PyExc_ValueError, "unknown function '%s'", func);
        return -1;
    }
    if (bk_op_of(op, &c->ty) != 0 ||
        bk_input(c, ko, "keys", &c->keys, &c->kbuf, &c->koff, &kt,
                 &c->n) != 0) {
        return -1;
    }
    if (!c->ty.count &&
        (vo == Py_None || bk_input(c, vo, "values", &c->vals, &c->vbuf,
                                   &c->voff, &vt, &vn) != 0)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "values are required");
        }
        return -1;
    }
    if (!c->on_device && (c->dev = gr_current_device()) == NULL) {
        return -1;
    }
    if (!c->ty.count && vn != c->n) {
        PyErr_Format(PyExc_ValueError, "values has %zu elements, keys %zu: "
                     "they must have the same length", vn, c->n);
        return -1;
    }
    c->ty.k = kt;
    c->ty.v = vt;
    if (bk_types_init(c->dev, &c->ty, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        return -1;
    }
    return 0;
}

static PyObject *bk_plan_dict(const gr_bk_plan *p, const gr_bk_facts *fx,
                              const gr_device *d, const char *func)
{
    return Py_BuildValue(
        "{s:s, s:s, s:i, s:n, s:n, s:n, s:O, s:O, s:s, s:s, s:n, s:K, s:K, "
        "s:n, s:O}",
        "function", func, "variant", p->name ? p->name : "", "wg_size", p->wg,
        "items", (Py_ssize_t)p->items, "groups", (Py_ssize_t)p->groups,
        "parts", (Py_ssize_t)p->parts, "ptx", p->ptx ? Py_True : Py_False,
        "match_any", p->match ? Py_True : Py_False, "why", p->why, "device",
        d->name, "n", (Py_ssize_t)fx->n, "heads",
        (unsigned long long)fx->heads, "descents",
        (unsigned long long)fx->descents, "num_keys",
        (Py_ssize_t)fx->num_keys, "measured",
        fx->unmeasured ? Py_False : Py_True);
}

/* Raise for a result the shell could not produce; 0 if there is none.
 * A bad key's value is read from the host array or (8 bytes) from the
 * device array. */
static int bk_check(bk_call *c, gr_bk_result *res)
{
    if (res->plan_rc != 0) {
        PyErr_SetString(res->plan_rc == -2 ? gr_VariantUnavailable
                                           : PyExc_ValueError,
                        res->plan.why);
        return -1;
    }
    if (res->facts.first_bad != UINT64_MAX) {
        const size_t i = (size_t)res->facts.first_bad;
        const size_t ksz = gr_dtypes[c->ty.k].size;
        char p[8] = {0};
        if (c->keys != NULL) {
            memcpy(p, (const char *)PyArray_DATA(c->keys) + i * ksz, ksz);
        } else {
            gr_status st = {0};
            cl_int e;
            Py_BEGIN_ALLOW_THREADS
            gr_lock();
            e = clEnqueueReadBuffer(c->dev->queue, ((gr_buffer *)c->kbuf)->mem,
                                    CL_TRUE, (c->koff + i) * ksz, ksz, p, 0,
                                    NULL, NULL);
            gr_unlock();
            Py_END_ALLOW_THREADS
            if (e != CL_SUCCESS) {
                st.call = "clEnqueueReadBuffer";
                st.err = e;
                gr_raise(&st);
                return -1;
            }
        }
        long long sv = 0;
        unsigned long long uv = 0;
        switch (c->ty.k) {
        case GR_INT32: { int32_t x; memcpy(&x, p, 4); sv = x; break; }
        case GR_UINT32: { uint32_t x; memcpy(&x, p, 4); uv = x; break; }
        case GR_INT64: { int64_t x; memcpy(&x, p, 8); sv = x; break; }
        default: { uint64_t x; memcpy(&x, p, 8); uv = x; break; }
        }
        const int sgn = gr_dtypes[c->ty.k].is_signed;
        if (sgn && sv < 0) {
            PyErr_Format(PyExc_ValueError, "keys[%zu] = %lld is negative: "
                         "keys must lie in [0, num_keys)", i, sv);
        } else {
            PyErr_Format(PyExc_ValueError, "keys[%zu] = %llu is out of range: "
                         "keys must lie in [0, num_keys) with num_keys = %lld",
                         i, sgn ? (unsigned long long)sv : uv,
                         (long long)c->num_keys);
        }
        return -1;
    }
    return 0;
}

/* run(func, keys, values, op, ...) -> (keys or None, values); values None
 * when deterministic sum_by_key needs sorted keys (the caller sorts).
 * Host arrays in: NumPy arrays out; a device view in: _core.Buffers out. */
static PyObject *py_bykey_run(PyObject *self, PyObject *args, PyObject *kw)
{
    bk_call c;
    gr_bk_result res;
    PyObject *out = NULL;
    if (bk_prepare(&c, args, kw) == 0 &&
        (out = c.on_device ? bk_run_device(&c, &res)
                           : bk_run_host(&c, 0, NULL, &res)) != NULL &&
        bk_check(&c, &res) != 0) {
        Py_CLEAR(out);
    }
    bk_call_clear(&c);
    return out;
}

/* bench(func, keys, values, op, reps, ...) -> ((keys, values), [ns], plan) */
static PyObject *py_bykey_bench(PyObject *self, PyObject *args, PyObject *kw)
{
    bk_call c;
    gr_bk_result res;
    PyObject *r = NULL, *times = NULL, *out = NULL, *head = NULL;
    double *ns = NULL;
    long reps = 0;
    if (PyTuple_GET_SIZE(args) != 5 ||
        (reps = PyLong_AsLong(PyTuple_GET_ITEM(args, 4))) <= 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "bench(func, keys, values, op, reps > 0, ...)");
        }
        return NULL;
    }
    if ((head = PyTuple_GetSlice(args, 0, 4)) == NULL) {
        return NULL;
    }
    int prc = bk_prepare(&c, head, kw);
    Py_DECREF(head);
    if (prc == 0 && (ns = calloc((size_t)reps, sizeof *ns)) == NULL) {
        PyErr_NoMemory();
    } else if (prc == 0 && (r = bk_run_host(&c, (int)reps, ns, &res)) != NULL &&
               bk_check(&c, &res) == 0 && (times = PyList_New(reps)) != NULL) {
        for (long i = 0; i < reps; ++i) {
            PyList_SET_ITEM(times, i, PyFloat_FromDouble(ns[i]));
        }
        out = Py_BuildValue("(OON)", r, times,
                            bk_plan_dict(&res.plan, &res.facts, c.dev,
                                         bk_func_names[c.f]));
    }
    Py_XDECREF(r);
    Py_XDECREF(times);
    free(ns);
    bk_call_clear(&c);
    return out;
}

/* explain(func, keys, values, op, ...) -> plan dict.  sum_by_key measures
 * the keys on the device first (the facts the plan reads). */
static PyObject *py_bykey_explain(PyObject *self, PyObject *args,
                                  PyObject *kw)
{
    bk_call c;
    gr_bk_result res;
    gr_status st = {0};
    bk_inputs in;
    PyObject *out = NULL;
    int rc = 0;
    memset(&res, 0, sizeof res);
    res.facts.first_bad = UINT64_MAX;
    if (bk_prepare(&c, args, kw) != 0) {
        goto done;
    }
    const size_t n = c.n;
    const int sm = bk_sm(c.dev);
    res.facts.n = n;
    res.facts.sorted = c.ov.sorted;
    if (c.f == GR_BK_DENSE) {
        /* What sum_by_key would do: measure the keys, unless the check is
         * fused into the kernel. */
        Py_BEGIN_ALLOW_THREADS
        gr_lock();
        rc = bk_inputs_open(&c, &in, &st);
        if (rc == 0) {
            rc = gr_bykey_sum_plan_dev(c.dev, sm, &c.ty, &c.ov, in.ki.mem,
                                       in.ki.base, n, c.num_keys, &res, &st);
        }
        bk_inputs_close(c.dev, &in, 1);
        gr_unlock();
        Py_END_ALLOW_THREADS
        if (rc != 0) {
            gr_raise(&st);
            goto done;
        }
    } else {
        res.plan_rc = gr_bk_plan_for(c.dev, sm, c.f, &c.ty, &res.facts,
                                     &c.ov, &res.plan);
    }
    if (bk_check(&c, &res) == 0) {
        out = bk_plan_dict(&res.plan, &res.facts, c.dev, bk_func_names[c.f]);
    }
done:
    bk_call_clear(&c);
    return out;
}

/* plan_for(caps, func, kdtype, vdtype, op, n, num_keys=0, heads=0,
 * descents=0, variant=None, deterministic=False, sorted=-1, wg_size=0,
 * items=0, sm=0) -> plan dict for synthetic device caps (as
 * _core.plan_for: gpu, compute_units, max_work_group_size, fp64,
 * atomics64, nvidia_ptx, name). */
static PyObject *py_bykey_plan_for(PyObject *self, PyObject *args,
                                   PyObject *kw)
{
    static char *kwl[] = {"caps", "func", "kdtype", "vdtype", "op", "n",
                          "num_keys", "heads", "descents", "variant",
                          "deterministic", "sorted", "wg_size", "items", "sm",
                          NULL};
    PyObject *caps = NULL;
    const char *func = NULL, *op = NULL;
    PyArray_Descr *kd = NULL, *vd = NULL;
    Py_ssize_t n = 0, nk = 0, heads = 0, desc = 0, items = 0;
    gr_device dev;
    gr_bk_types ty;
    gr_bk_overrides ov;
    gr_bk_facts fx;
    gr_bk_plan p;
    PyObject *res = NULL;
    int sm = 0, rc;
    char err[256];
    gr_dtype kt, vt = GR_UINT8;
    memset(&dev, 0, sizeof dev);
    memset(&ty, 0, sizeof ty);
    memset(&ov, 0, sizeof ov);
    memset(&fx, 0, sizeof fx);
    ov.sorted = -1;
    if (bk_numpy() != 0 ||
        !PyArg_ParseTupleAndKeywords(
            args, kw, "O!sO&O&sn|nnnzpiini", kwl, &PyDict_Type, &caps, &func,
            PyArray_DescrConverter, &kd, PyArray_DescrConverter, &vd, &op, &n,
            &nk, &heads, &desc, &ov.variant, &ov.deterministic, &ov.sorted,
            &ov.wg_size, &items, &sm)) {
        goto done;
    }
    ov.items = items > 0 ? (size_t)items : 0;
    if (gr_caps_parse(caps, &dev) != 0) {
        goto done;
    }
    gr_bk_func f = strcmp(func, "reduce_by_key") == 0 ? GR_BK_REDUCE
                   : strcmp(func, "scan_by_key") == 0 ? GR_BK_SCAN
                                                      : GR_BK_DENSE;
    if (bk_op_of(op, &ty) != 0) {
        goto done;
    }
    if (bk_dtype_of(kd, &kt) != 0 || bk_dtype_of(vd, &vt) != 0) {
        PyErr_SetString(PyExc_TypeError, "unsupported dtype");
        goto done;
    }
    ty.k = kt;
    ty.v = vt;
    if (bk_types_init(&dev, &ty, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    fx.n = (size_t)n;
    fx.num_keys = (size_t)nk;
    fx.heads = (uint64_t)heads;
    fx.descents = (uint64_t)desc;
    fx.sorted = ov.sorted;
    rc = gr_bk_plan_for(&dev, sm, f, &ty, &fx, &ov, &p);
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        p.why);
        goto done;
    }
    res = bk_plan_dict(&p, &fx, &dev, bk_func_names[f]);
done:
    Py_XDECREF(kd);
    Py_XDECREF(vd);
    return res;
}

/* variants(func, kdtype, vdtype, op) -> names the current device runs. */
static PyObject *py_bykey_variants(PyObject *self, PyObject *args)
{
    const char *func = NULL, *op = NULL;
    PyArray_Descr *kd = NULL, *vd = NULL;
    PyObject *list = NULL;
    gr_bk_types ty;
    gr_bk_facts fx;
    char err[256];
    gr_dtype kt, vt = GR_UINT8;
    gr_device *d = gr_current_device();
    memset(&ty, 0, sizeof ty);
    memset(&fx, 0, sizeof fx);
    if (d == NULL || bk_numpy() != 0 ||
        !PyArg_ParseTuple(args, "sO&O&s", &func, PyArray_DescrConverter, &kd,
                          PyArray_DescrConverter, &vd, &op) ||
        bk_op_of(op, &ty) != 0) {
        goto done;
    }
    if (bk_dtype_of(kd, &kt) != 0 || bk_dtype_of(vd, &vt) != 0) {
        PyErr_SetString(PyExc_TypeError, "unsupported dtype");
        goto done;
    }
    ty.k = kt;
    ty.v = vt;
    if (bk_types_init(d, &ty, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    gr_bk_func f = strcmp(func, "reduce_by_key") == 0 ? GR_BK_REDUCE
                   : strcmp(func, "scan_by_key") == 0 ? GR_BK_SCAN
                                                      : GR_BK_DENSE;
    fx.n = 1;
    fx.num_keys = 1;
    fx.sorted = -1;
    list = Py_BuildValue("[s]", "auto");
    for (int i = 0; list != NULL && bk_variant_names[i] != NULL; ++i) {
        gr_bk_overrides ov;
        gr_bk_plan p;
        memset(&ov, 0, sizeof ov);
        ov.variant = bk_variant_names[i];
        if (gr_bk_plan_for(d, bk_sm(d), f, &ty, &fx, &ov, &p) != 0) {
            continue;
        }
        gr_list_add(&list, bk_variant_names[i]);
    }
done:
    Py_XDECREF(kd);
    Py_XDECREF(vd);
    return list;
}

PyMethodDef gr_bykey_methods[] = {
    {"bykey_run", (PyCFunction)(void (*)(void))py_bykey_run,
     METH_VARARGS | METH_KEYWORDS, "Run reduce_by_key/sum_by_key/scan_by_key."},
    {"bykey_bench", (PyCFunction)(void (*)(void))py_bykey_bench,
     METH_VARARGS | METH_KEYWORDS, "Time a by-key call with device events."},
    {"bykey_explain", (PyCFunction)(void (*)(void))py_bykey_explain,
     METH_VARARGS | METH_KEYWORDS, "The plan a by-key call would run."},
    {"bykey_plan_for", (PyCFunction)(void (*)(void))py_bykey_plan_for,
     METH_VARARGS | METH_KEYWORDS, "By-key plan for synthetic device caps."},
    {"bykey_variants", py_bykey_variants, METH_VARARGS,
     "By-key variants the device runs."},
    {NULL, NULL, 0, NULL},
};
