/*
 * gpured — prefix scans: enqueue the passes a scan plan describes.
 *
 *   row_per_item        gr_scan_row_items                       1 kernel
 *   naive, blelloch,    gr_scan_chunks (one group per row)      1 kernel
 *   workgroup, subgroup   ... or, for few long rows, as below
 *   reduce_then_scan    gr_scan_reduce -> gr_scan_partials ->   3 kernels
 *                       gr_scan_chunks (carry-in)
 *   decoupled_lookback  fill(status) -> gr_scan_lookback        1 kernel
 *
 * Scratch is O(n / tile): chunk states (reduce_then_scan) or one status
 * word (plus value words for 64-bit values) per tile, from the device's
 * pool; no full-size temporary besides the output.  Buffers only: where
 * host memory becomes buffers is dispatch.c's business.  Runs without the
 * GIL, gr_lock held; nothing waits unless timed.
 */
#include "gpured.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- programs */

typedef struct {
    int lookback, pack, in_aligned, out_aligned;
} kcfg;

/* What decides a scan program's defines (the kernel memo's key). */
typedef struct {
    int op, t, r, a_size, cvt, comp, x_size, a_float, fp64, nan;
    char a_cl[8];
    int wg, ilp, sg, items, local, spin, cpu_tile, nvidia, tsum, wide;
    kcfg k;
    const char *user; /* a user operator's defines (never memoised) */
} skey;
_Static_assert(sizeof(skey) <= GR_MEMO_KEY,
               "skey outgrew the kernel memo's key (every call would miss)");

static int vec_width(int items, int size)
{
    int v = 16 / size;
    if (v < 1) v = 1;
    while (v > items) v /= 2;
    return v;
}

/* float16 / bfloat16 (issue 40) are float in the kernels' registers and
 * storage in memory (kernels/scan.cl GR_SELT / GR_SRELT): the register
 * type, its size, and the storage code (0 plain, 1 half, 2 bfloat16). */
static gr_dtype reg_t(int t)
{
    return GR_IS_HALF(t) ? GR_FLOAT32 : (gr_dtype)t;
}

static int reg_size(int t)
{
    return gr_dtypes[reg_t(t)].size;
}

static int elt_of(int t)
{
    return t == GR_FLOAT16 ? 1 : t == GR_BFLOAT16 ? 2 : 0;
}

/* The #define block that specialises kernels/common.cl + kernels/scan.cl. */
static void defines(const void *ctx, char *buf, size_t n)
{
    const skey *k = ctx;
    const int rsize = reg_size(k->r), tsize = reg_size(k->t);
    const char *a_min = "0", *a_max = "0";
    if (k->op == GR_MIN || k->op == GR_MAX) {
        a_min = gr_dtypes[k->t].minv;
        a_max = gr_dtypes[k->t].maxv;
    }
    int len = snprintf(
        buf, n,
        "#define GR_NEED_FP64 %d\n"
        "#define GR_T %s\n#define GR_A %s\n#define GR_R %s\n"
        "#define GR_AM %s\n#define GR_A_SIZE %d\n#define GR_X_SIZE %d\n"
        "#define GR_A_FLOAT %d\n"
        "#define GR_OP %d\n#define GR_CVT %d\n#define GR_COMP %d\n"
        "#define GR_A_MINV %s\n#define GR_A_MAXV %s\n"
        "#define GR_VW 1\n#define GR_WG %d\n#define GR_ILP %d\n"
        "#define GR_COMBINE 1\n#define GR_SG %d\n"
        "#define GR_SG_NATIVE 0\n#define GR_ATOMIC 0\n"
        "#define GR_ITEMS %d\n#define GR_LOCAL %d\n"
        "#define GR_MV %d\n#define GR_MVR %d\n"
        "#define GR_IN_ALIGNED %d\n#define GR_OUT_ALIGNED %d\n"
        "#define GR_LOOKBACK %d\n#define GR_SPIN %d\n"
        "#define GR_CPU_TILE %d\n#define GR_NVIDIA %d\n"
        "#define GR_T_SIZE %d\n#define GR_R_SIZE %d\n#define GR_TSUM %d\n"
        "#define GR_NAN %d\n#define GR_STRIPE_WIDE %d\n",
        k->fp64, gr_dtypes[reg_t(k->t)].cl, k->a_cl, gr_dtypes[reg_t(k->r)].cl,
        k->a_size == 1   ? "char"
        : k->a_size == 2 ? "short"
        : k->a_size == 4 ? "int"
                         : "long",
        k->a_size, k->a_size, k->a_float, k->op, k->cvt, k->comp, a_min,
        a_max, k->wg, k->ilp, k->sg, k->items, k->local,
        vec_width(k->items, tsize), vec_width(k->items, rsize),
        k->k.in_aligned, k->k.out_aligned, k->k.lookback, k->spin,
        k->cpu_tile, k->nvidia, tsize, rsize, k->tsum, k->nan, k->wide);
    if (len > 0 && (elt_of(k->t) || elt_of(k->r))) {
        /* only the halves' programs say so (the others' sources and disk
         * cache stay as they were) */
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, "#define GR_SELT %d\n"
                 "#define GR_SRELT %d\n", elt_of(k->t), elt_of(k->r));
    }
    /* Developer knob for benchmarks/scan_knobs.py: GPURED_SCAN_XDEFS
     * appends #define lines to every scan program (part of the program
     * cache's key; the kernel memo is bypassed while it is set). */
    if (len > 0) {
        gr_defines_append_env(buf, n, "GPURED_SCAN_XDEFS");
    }
    if (len > 0 && k->user != NULL) {
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s", k->user);
    }
}

static void make_key(skey *k, const gr_device *d, gr_op op,
                     const gr_accum *acc, const gr_scan_plan *p,
                     const kcfg *kc)
{
    memset(k, 0, sizeof *k);
    k->op = (int)op;
    k->t = (int)acc->t;
    k->r = (int)acc->r;
    k->a_size = acc->a_size;
    k->cvt = acc->cvt;
    k->nan = acc->nan;
    k->comp = acc->comp;
    k->x_size = acc->x_size;
    k->a_float = strcmp(acc->a_cl, "float") == 0 ||
                 strcmp(acc->a_cl, "double") == 0;
    k->fp64 = strcmp(acc->a_cl, "double") == 0 || acc->t == GR_FLOAT64 ||
              acc->r == GR_FLOAT64;
    snprintf(k->a_cl, sizeof k->a_cl, "%s", acc->a_cl);
    k->wg = p->wg;
    k->ilp = p->ilp;
    k->sg = p->sg;
    k->items = p->items;
    k->local = p->local;
    k->spin = p->spin;
    k->cpu_tile = p->cpu_tile;
    k->nvidia = d->nvidia_ptx;
    /* float32 sums in float64: each work-item's register run (<= 32
     * elements) in float32, the rest in float64 (kernels/scan.cl). */
    k->tsum = op == GR_ADD && reg_t(acc->t) == GR_FLOAT32 &&
              reg_t(acc->r) == GR_FLOAT32 &&
              strcmp(acc->a_cl, "double") == 0 && !acc->comp &&
              !p->cpu_tile && p->items > 1 && p->items <= 32;
    k->wide = p->wide; /* kernels/scan.cl GR_STRIPE_WIDE */
    k->k = *kc;
    k->user = acc->user;
}

/* The build of one run: its key and options (a user scan's options=
 * included: gpured/_kernels.py keeps them under 1024 characters). */
#define GR_SCAN_OPTS_N 1280
typedef struct {
    gr_device *d;
    skey key;
    char opts[GR_SCAN_OPTS_N];
    int nomemo;
} kbuild;

static cl_kernel kernel_of(const kbuild *b, const char *name, gr_status *st)
{
    if (b->nomemo) {
        const size_t n = 2048 + (b->key.user ? strlen(b->key.user) : 0);
        char *defs = malloc(n);
        if (defs == NULL) {
            gr_status_fail(st, "out of host memory");
            return NULL;
        }
        defines(&b->key, defs, n);
        cl_kernel k = gr_kernel_get(b->d, "scan", defs, b->opts, name, st);
        free(defs);
        return k;
    }
    return gr_kernel_memo(b->d, "scan", &b->key, sizeof b->key, name, defines,
                          &b->key, b->opts, st);
}

static void get_build(kbuild *b, gr_device *d, gr_op op, const gr_accum *acc,
                      const gr_scan_plan *p, const kcfg *k)
{
    b->d = d;
    b->opts[0] = '\0';
    make_key(&b->key, d, op, acc, p, k);
    /* Work-group collectives and khr sub-groups need OpenCL C 2.0/3.0. */
    if ((p->local == 3 || p->sg == 2) && d->c_std[0] != '\0') {
        snprintf(b->opts, sizeof b->opts, "-cl-std=%s", d->c_std);
    }
    /* Developer knob: GPURED_SCAN_XOPTS appends build options. */
    const char *xo = getenv("GPURED_SCAN_XOPTS");
    if (xo != NULL && strlen(b->opts) + strlen(xo) + 2 < sizeof b->opts) {
        strcat(b->opts, " ");
        strcat(b->opts, xo);
    }
    const char *uo = acc->user ? acc->user_opts : NULL;
    if (uo != NULL && strlen(b->opts) + strlen(uo) + 2 < sizeof b->opts) {
        strcat(b->opts, " ");
        strcat(b->opts, uo);
    }
    b->nomemo = xo != NULL || getenv("GPURED_SCAN_XDEFS") != NULL ||
                acc->user != NULL;
}

/* ------------------------------------------------------------- the run */

/* One run (gr_scan_run): the layout as the kernels take it, the build,
 * the span, and the pool blocks to hand back once enqueued. */
typedef struct {
    gr_device *d;
    const gr_accum *acc;
    const gr_scan_plan *plan;
    const gr_scan_io *io;
    kbuild kb;
    gr_span *spp;
    cl_ulong M, L, ss, es, in_base, out_base, oss, oes;
    cl_uint excl;
    gr_block *pv, *px, *status, *ctr;
} srun;

/* GR_SK_ROW_ITEMS: a work-item a row. */
static int run_row_items(srun *r, gr_status *st)
{
    gr_device *d = r->d;
    const gr_scan_io *io = r->io;
    const size_t local = (size_t)r->plan->wg;
    cl_kernel k1;
    if ((k1 = kernel_of(&r->kb, "gr_scan_row_items", st)) == NULL ||
        GR_LAUNCH1(d, k1, (r->M + local - 1) / local * local, local, r->spp,
                   st, GR_ARG(io->in), GR_ARG(r->in_base), GR_ARG(r->L),
                   GR_ARG(r->ss), GR_ARG(r->es), GR_ARG(r->M),
                   GR_ARG(io->out), GR_ARG(r->out_base), GR_ARG(r->oss),
                   GR_ARG(r->oes), GR_ARG(r->excl)) != 0) {
        return -1;
    }
    return 0;
}

/* GR_SK_CHUNKS, GR_SK_RTS: parts chunks a row, each scanned by a group;
 * RTS first reduces the chunks and scans their partials into carries. */
static int run_chunks(srun *r, gr_status *st)
{
    gr_device *d = r->d;
    const gr_accum *acc = r->acc;
    const gr_scan_plan *plan = r->plan;
    const gr_scan_io *io = r->io;
    gr_span *spp = r->spp;
    const cl_ulong chunk = plan->chunk;
    const cl_uint parts = (cl_uint)plan->parts;
    const cl_uint has_carry = plan->kind == GR_SK_RTS;
    const size_t groups = (size_t)(r->M * parts), wg = (size_t)plan->wg;
    cl_mem pvm = NULL, pxm = NULL;
    cl_kernel k1 = NULL, k2 = NULL, k3;
    if ((k3 = kernel_of(&r->kb, "gr_scan_chunks", st)) == NULL) {
        return -1;
    }
    if (has_carry) {
        const size_t l2 = d->is_gpu ? 64 : 1;
        if ((r->pv = gr_block_get(d, groups * acc->a_size, st)) == NULL ||
            (acc->x_size &&
             (r->px = gr_block_get(d, groups * acc->x_size, st)) == NULL) ||
            (k1 = kernel_of(&r->kb, "gr_scan_reduce", st)) == NULL ||
            (k2 = kernel_of(&r->kb, "gr_scan_partials", st)) == NULL) {
            return -1;
        }
        pvm = r->pv->mem;
        pxm = r->px ? r->px->mem : NULL;
        if (GR_LAUNCH1(d, k1, groups * wg, wg, spp, st, GR_ARG(io->in),
                       GR_ARG(r->in_base), GR_ARG(r->L), GR_ARG(r->ss),
                       GR_ARG(chunk), GR_ARG(parts), GR_ARG(pvm),
                       GR_ARG(pxm)) != 0 ||
            GR_LAUNCH1(d, k2, (r->M + l2 - 1) / l2 * l2, l2, spp, st,
                       GR_ARG(pvm), GR_ARG(pxm), GR_ARG(parts),
                       GR_ARG(r->M)) != 0) {
            return -1;
        }
    }
    if (GR_LAUNCH1(d, k3, groups * wg, wg, spp, st, GR_ARG(io->in),
                   GR_ARG(r->in_base), GR_ARG(r->L), GR_ARG(r->ss),
                   GR_ARG(chunk), GR_ARG(parts), GR_ARG(pvm), GR_ARG(pxm),
                   GR_ARG(has_carry), GR_ARG(io->out), GR_ARG(r->out_base),
                   GR_ARG(r->oss), GR_ARG(r->excl)) != 0) {
        return -1;
    }
    return 0;
}

/* GR_SK_LOOKBACK: one pass over tiles numbered by a counter, each
 * carrying its predecessors' published states (decoupled look-back). */
static int run_lookback(srun *r, gr_status *st)
{
    gr_device *d = r->d;
    const gr_accum *acc = r->acc;
    const gr_scan_plan *plan = r->plan;
    const gr_scan_io *io = r->io;
    gr_span *spp = r->spp;
    const cl_ulong tiles = plan->tiles, ntiles = r->M * plan->tiles;
    const cl_ulong zero = 0;
    cl_event ev = NULL;
    gr_block *ctr, *status;
    cl_kernel k1;
    /* Per tile: the state in 32-bit pieces, each in a 64-bit word
     * tagged with the tile's flag (kernels/scan.cl).  The tile counter
     * has a block of its own (Oclgrind's uninitialised-value check
     * flags a counter carved out of the filled status words). */
    const size_t nw = ((size_t)acc->a_size * (acc->x_size ? 2 : 1) + 3) / 4;
    const size_t bytes = (size_t)ntiles * nw * 8;
    if ((k1 = kernel_of(&r->kb, "gr_scan_lookback", st)) == NULL ||
        (ctr = r->ctr = gr_block_get(d, 8, st)) == NULL ||
        (status = r->status = gr_block_get(d, bytes, st)) == NULL) {
        return -1;
    }
    GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, ctr->mem, &zero,
                                        sizeof zero, 0, 8, 0, NULL,
                                        spp ? &ev : NULL));
    if (spp) {
        gr_span_add(spp, ev);
        ev = NULL;
    }
    GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, status->mem, &zero,
                                        sizeof zero, 0, bytes, 0, NULL,
                                        spp ? &ev : NULL));
    if (spp) {
        gr_span_add(spp, ev);
    }
    if (GR_LAUNCH1(d, k1, (size_t)ntiles * plan->wg, (size_t)plan->wg,
                   spp, st, GR_ARG(io->in), GR_ARG(r->in_base), GR_ARG(r->L),
                   GR_ARG(r->ss), GR_ARG(tiles), GR_ARG(ctr->mem),
                   GR_ARG(status->mem), GR_ARG(ntiles), GR_ARG(io->out),
                   GR_ARG(r->out_base), GR_ARG(r->oss),
                   GR_ARG(r->excl)) != 0) {
        return -1;
    }
    return 0;
fail:
    return -1;
}

int gr_scan_run(gr_device *d, gr_op op, const gr_accum *acc, int exclusive,
                const gr_layout *lay, const gr_scan_plan *plan,
                const gr_scan_io *io, gr_timing *timing, gr_status *st)
{
    gr_span sp = {NULL, NULL};
    const int tsize = reg_size(acc->t), rsize = reg_size(acc->r);
    const int mv = vec_width(plan->items, tsize);
    const int mvr = vec_width(plan->items, rsize);
    srun r = {d, acc, plan, io};
    int rc = -1;
    r.spp = timing ? &sp : NULL;
    r.M = lay->M;
    r.L = lay->L;
    r.ss = (cl_ulong)lay->seg_stride;
    r.es = (cl_ulong)lay->elem_stride;
    r.in_base = io->in_base;
    r.out_base = io->out_base;
    r.oss = (cl_ulong)io->out_seg_stride;
    r.oes = (cl_ulong)io->out_elem_stride;
    r.excl = exclusive ? 1 : 0;
    const kcfg k = {plan->kind == GR_SK_LOOKBACK, 0,
                    r.in_base % mv == 0 && (r.M == 1 || r.ss % mv == 0),
                    r.out_base % mvr == 0 && (r.M == 1 || r.oss % mvr == 0)};

    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    get_build(&r.kb, d, op, acc, plan, &k);
    switch (plan->kind) {
    case GR_SK_ROW_ITEMS:
        if (run_row_items(&r, st) != 0) {
            goto fail;
        }
        break;
    case GR_SK_CHUNKS:
    case GR_SK_RTS:
        if (run_chunks(&r, st) != 0) {
            goto fail;
        }
        break;
    case GR_SK_LOOKBACK:
        if (run_lookback(&r, st) != 0) {
            goto fail;
        }
        break;
    }
    if (timing != NULL) {
        GR_CL_CHECK(st, clFinish(d->queue));
        timing->first_ns = gr_span_ns(&sp);
        timing->second_ns = 0;
    }
    rc = 0;
fail:
    gr_span_release(&sp);
    gr_block_put(r.pv);
    gr_block_put(r.px);
    gr_block_put(r.status);
    gr_block_put(r.ctr);
    return rc;
}

/* The identity of op in dtype r, little-endian in buf[0..8). */
void gr_identity_of(gr_op op, gr_dtype r, unsigned char *buf)
{
    const gr_dtype_info *ti = &gr_dtypes[r];
    union {
        float f;
        double d;
        int64_t i;
        uint64_t u;
    } v;
    int big = op == GR_MIN || op == GR_ARGMIN; /* min: the largest value */
    memset(buf, 0, 8);
    v.u = 0;
    if (op == GR_ADD || op == GR_ANY ||
        ((op == GR_MAX || op == GR_ARGMAX) && !ti->is_signed && !ti->is_float)) {
        return; /* 0 (also bool's logical or, and unsigned max) */
    }
    if (op == GR_MUL || op == GR_ALL || (r == GR_BOOL && big)) {
        if (ti->is_float) {
            if (ti->size == 4) {
                v.f = 1.0f;
            } else {
                v.d = 1.0;
            }
        } else {
            v.u = 1;
        }
    } else if (ti->is_float) {
        if (ti->size == 4) {
            v.f = big ? INFINITY : -INFINITY;
        } else {
            v.d = big ? INFINITY : -INFINITY;
        }
    } else if (ti->is_signed) {
        int bits = 8 * ti->size;
        v.i = big ? (int64_t)((UINT64_C(1) << (bits - 1)) - 1)
                  : -(int64_t)(UINT64_C(1) << (bits - 1));
    } else {
        v.u = ti->size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * ti->size)) - 1;
    }
    memcpy(buf, &v, (size_t)ti->size); /* little-endian: the low bytes */
}
