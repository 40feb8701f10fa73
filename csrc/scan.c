/*
 * gpured — prefix scans: enqueue the passes a scan plan describes
 * (gr_scan_run), the host shell around it (scan_host), and the _core entry
 * points (scan, scan_explain, bench_scan, scan_variants, scan_plan_for).
 *
 *   row_per_item        gr_scan_row_items                       1 kernel
 *   naive, blelloch,    gr_scan_chunks (one group per row)      1 kernel
 *   workgroup, subgroup   ... or, for few long rows, as below
 *   reduce_then_scan    gr_scan_reduce -> gr_scan_partials ->   3 kernels
 *                       gr_scan_chunks (carry-in)
 *   decoupled_lookback  fill(status) -> gr_scan_lookback        1 kernel
 *
 * Scratch is O(n / tile): chunk states (reduce_then_scan) or one status
 * word (plus value words for 64-bit values) per tile; no full-size
 * temporary besides the output.  gr_scan_run takes buffers only (device
 * arrays can call it directly); scan_host() is the one place where NumPy
 * memory becomes buffers and back.
 */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "gpured.h"

#include <math.h>

#include <numpy/arrayobject.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- programs */

typedef struct {
    int lookback, pack, in_aligned, out_aligned;
} kcfg;

static int vec_width(int items, int size)
{
    int v = 16 / size;
    if (v < 1) v = 1;
    while (v > items) v /= 2;
    return v;
}

/* The #define block that specialises kernels/common.cl + kernels/scan.cl. */
static void defines(char *buf, size_t n, const gr_device *d, gr_op op,
                    const gr_accum *acc, const gr_scan_plan *p, const kcfg *k)
{
    const int fp64 = strcmp(acc->a_cl, "double") == 0 ||
                     acc->t == GR_FLOAT64 || acc->r == GR_FLOAT64;
    const int rsize = gr_dtypes[acc->r].size;
    /* float32 sums in float64: each work-item's register run (<= 32
     * elements) in float32, the rest in float64 (kernels/scan.cl). */
    const int tsum = op == GR_ADD && acc->t == GR_FLOAT32 &&
                     acc->r == GR_FLOAT32 && strcmp(acc->a_cl, "double") == 0 &&
                     !acc->comp && !p->cpu_tile && p->items > 1 &&
                     p->items <= 32;
    snprintf(buf, n,
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
             "#define GR_T_SIZE %d\n#define GR_R_SIZE %d\n#define GR_TSUM %d\n",
             fp64, gr_dtypes[acc->t].cl, acc->a_cl, gr_dtypes[acc->r].cl,
             acc->a_size == 1   ? "char"
             : acc->a_size == 2 ? "short"
             : acc->a_size == 4 ? "int"
                                : "long",
             acc->a_size, acc->a_size,
             strcmp(acc->a_cl, "float") == 0 || strcmp(acc->a_cl, "double") == 0,
             (int)op, acc->cvt, acc->comp, acc->a_min, acc->a_max, p->wg,
             p->ilp, p->sg, p->items, p->local,
             vec_width(p->items, gr_dtypes[acc->t].size),
             vec_width(p->items, rsize), k->in_aligned, k->out_aligned,
             k->lookback, p->spin, p->cpu_tile, d->nvidia_ptx,
             gr_dtypes[acc->t].size, rsize, tsum);
}

/* The build of one run: its defines and options (kernels are found by
 * them through gr_kernel_get, without rebuilding the program text). */
typedef struct {
    gr_device *d;
    char defs[1800];
    char opts[160];
} kbuild;

static cl_kernel kernel_of(const kbuild *b, const char *name, gr_status *st)
{
    return gr_kernel_get(b->d, "scan", b->defs, b->opts, name, st);
}

static void get_build(kbuild *b, gr_device *d, gr_op op, const gr_accum *acc,
                      const gr_scan_plan *p, const kcfg *k)
{
    char *defs = b->defs, *opts = b->opts;
    b->d = d;
    opts[0] = '\0';
    defines(defs, sizeof b->defs, d, op, acc, p, k);
    /* Work-group collectives and khr sub-groups need OpenCL C 2.0/3.0. */
    if ((p->local == 3 || p->sg == 2) && d->c_std[0] != '\0') {
        snprintf(opts, sizeof b->opts, "-cl-std=%s", d->c_std);
    }
    {   /* Developer knobs for benchmarks/scan_knobs.py: GPURED_SCAN_XDEFS
         * appends #define lines, GPURED_SCAN_XOPTS build options, to every
         * scan program (both are part of the program cache's key). */
        const char *xd = getenv("GPURED_SCAN_XDEFS"), *xo = getenv("GPURED_SCAN_XOPTS");
        if (xd != NULL && strlen(defs) + strlen(xd) + 2 < sizeof b->defs) {
            strcat(defs, xd);
            strcat(defs, "\n");
        }
        if (xo != NULL && strlen(opts) + strlen(xo) + 2 < sizeof b->opts) {
            strcat(opts, " ");
            strcat(opts, xo);
        }
    }
}

#define ARG(k, i, v) GR_CL_CHECK_AS(st, "clSetKernelArg", clSetKernelArg(k, i, sizeof(v), &(v)))

static int launch(gr_device *d, cl_kernel k, size_t global, size_t local,
                  gr_span *sp, gr_status *st)
{
    cl_event ev = NULL;
    GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global,
                                           &local, 0, NULL, sp ? &ev : NULL));
    if (sp != NULL) {
        gr_span_add(sp, ev);
    }
    return 0;
fail:
    return -1;
}

/* ------------------------------------------------------------- the run */

int gr_scan_run(gr_device *d, gr_op op, const gr_accum *acc, int exclusive,
                const gr_layout *lay, const gr_scan_plan *plan,
                const gr_scan_io *io, gr_timing *timing, gr_status *st)
{
    cl_int err = CL_SUCCESS;
    cl_mem pv = NULL, px = NULL, status = NULL;
    cl_kernel k1 = NULL, k2 = NULL, k3 = NULL;
    gr_span sp = {NULL, NULL};
    gr_span *spp = timing ? &sp : NULL;
    const int tsize = gr_dtypes[acc->t].size, rsize = gr_dtypes[acc->r].size;
    const int mv = vec_width(plan->items, tsize), mvr = vec_width(plan->items, rsize);
    const cl_ulong M = lay->M, L = lay->L, ss = (cl_ulong)lay->seg_stride;
    const cl_ulong es = (cl_ulong)lay->elem_stride;
    const cl_ulong in_base = io->in_base, out_base = io->out_base;
    const cl_ulong oss = (cl_ulong)io->out_seg_stride;
    const cl_ulong oes = (cl_ulong)io->out_elem_stride;
    const cl_uint excl = exclusive ? 1 : 0;
    int rc = -1;
    kcfg k = {plan->kind == GR_SK_LOOKBACK, 0,
              in_base % mv == 0 && (M == 1 || ss % mv == 0),
              out_base % mvr == 0 && (M == 1 || oss % mvr == 0)};
    kbuild kb;

    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    get_build(&kb, d, op, acc, plan, &k);
    switch (plan->kind) {
    case GR_SK_ROW_ITEMS: {
        if ((k1 = kernel_of(&kb, "gr_scan_row_items", st)) == NULL) {
            goto fail;
        }
        size_t local = (size_t)plan->wg;
        ARG(k1, 0, io->in);
        ARG(k1, 1, in_base);
        ARG(k1, 2, L);
        ARG(k1, 3, ss);
        ARG(k1, 4, es);
        ARG(k1, 5, M);
        ARG(k1, 6, io->out);
        ARG(k1, 7, out_base);
        ARG(k1, 8, oss);
        ARG(k1, 9, oes);
        ARG(k1, 10, excl);
        if (launch(d, k1, (M + local - 1) / local * local, local, spp, st)) {
            goto fail;
        }
        break;
    }
    case GR_SK_CHUNKS:
    case GR_SK_RTS: {
        const cl_ulong chunk = plan->chunk;
        const cl_uint parts = (cl_uint)plan->parts;
        const cl_uint has_carry = plan->kind == GR_SK_RTS;
        const size_t groups = (size_t)(M * parts), wg = (size_t)plan->wg;
        if ((k3 = kernel_of(&kb, "gr_scan_chunks", st)) == NULL) {
            goto fail;
        }
        if (has_carry) {
            cl_ulong m = M;
            size_t l2 = d->is_gpu ? 64 : 1;
            pv = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                                groups * acc->a_size, NULL, &err);
            GR_CL_CHECK_AS(st, "clCreateBuffer", err);
            if (acc->x_size) {
                px = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                                    groups * acc->x_size, NULL, &err);
                GR_CL_CHECK_AS(st, "clCreateBuffer", err);
            }
            if ((k1 = kernel_of(&kb, "gr_scan_reduce", st)) == NULL ||
                (k2 = kernel_of(&kb, "gr_scan_partials", st)) == NULL) {
                goto fail;
            }
            ARG(k1, 0, io->in);
            ARG(k1, 1, in_base);
            ARG(k1, 2, L);
            ARG(k1, 3, ss);
            ARG(k1, 4, chunk);
            ARG(k1, 5, parts);
            ARG(k1, 6, pv);
            ARG(k1, 7, px);
            if (launch(d, k1, groups * wg, wg, spp, st) != 0) {
                goto fail;
            }
            ARG(k2, 0, pv);
            ARG(k2, 1, px);
            ARG(k2, 2, parts);
            ARG(k2, 3, m);
            if (launch(d, k2, (M + l2 - 1) / l2 * l2, l2, spp, st) != 0) {
                goto fail;
            }
        }
        ARG(k3, 0, io->in);
        ARG(k3, 1, in_base);
        ARG(k3, 2, L);
        ARG(k3, 3, ss);
        ARG(k3, 4, chunk);
        ARG(k3, 5, parts);
        ARG(k3, 6, pv);
        ARG(k3, 7, px);
        ARG(k3, 8, has_carry);
        ARG(k3, 9, io->out);
        ARG(k3, 10, out_base);
        ARG(k3, 11, oss);
        ARG(k3, 12, excl);
        if (launch(d, k3, groups * wg, wg, spp, st) != 0) {
            goto fail;
        }
        break;
    }
    case GR_SK_LOOKBACK: {
        const cl_ulong tiles = plan->tiles, ntiles = M * plan->tiles;
        const cl_ulong zero = 0;
        cl_event ev = NULL;
        /* Per tile: the state in 32-bit pieces, each in a 64-bit word
         * tagged with the tile's flag (kernels/scan.cl). */
        const size_t nw = ((size_t)acc->a_size * (acc->x_size ? 2 : 1) + 3) / 4;
        size_t bytes = (size_t)ntiles * nw * 8;
        if ((k1 = kernel_of(&kb, "gr_scan_lookback", st)) == NULL) {
            goto fail;
        }
        pv = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 8, NULL, &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        status = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
        GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, pv, &zero, sizeof zero,
                                            0, 8, 0, NULL, spp ? &ev : NULL));
        if (spp) {
            gr_span_add(spp, ev);
            ev = NULL;
        }
        GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, status, &zero,
                                            sizeof zero, 0, bytes, 0, NULL,
                                            spp ? &ev : NULL));
        if (spp) {
            gr_span_add(spp, ev);
        }
        ARG(k1, 0, io->in);
        ARG(k1, 1, in_base);
        ARG(k1, 2, L);
        ARG(k1, 3, ss);
        ARG(k1, 4, tiles);
        ARG(k1, 5, pv);      /* tile counter */
        ARG(k1, 6, status);
        ARG(k1, 7, ntiles);
        ARG(k1, 8, io->out);
        ARG(k1, 9, out_base);
        ARG(k1, 10, oss);
        ARG(k1, 11, excl);
        if (launch(d, k1, (size_t)ntiles * plan->wg, (size_t)plan->wg, spp,
                   st) != 0) {
            goto fail;
        }
        break;
    }
    }
    if (timing != NULL) {
        GR_CL_CHECK(st, clFinish(d->queue));
        timing->first_ns = gr_span_ns(&sp);
        timing->second_ns = 0;
    }
    rc = 0;
fail:
    if (rc != 0) {
        clFinish(d->queue);
    }
    gr_span_release(&sp);
    if (pv) clReleaseMemObject(pv);
    if (px) clReleaseMemObject(px);
    if (status) clReleaseMemObject(status);
    return rc;
}

/* ================================================== Python entry points */

static int op_of(const char *name)
{
    static const struct {
        const char *name;
        gr_op op;
    } ops[] = {{"add", GR_ADD}, {"multiply", GR_MUL}, {"minimum", GR_MIN},
               {"maximum", GR_MAX}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; ++i) {
        if (strcmp(name, ops[i].name) == 0) {
            return ops[i].op;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown scan operator '%s' (add, "
                 "multiply, minimum, maximum)", name);
    return -1;
}


typedef struct {
    PyObject *din;       /* owned: device input Buffer (gpured.Array)      */
    PyObject *dout;      /* owned: device output Buffer                   */
    size_t din_off, dout_off;
    int need_contig;     /* device rows the plan cannot read in place     */
    PyArrayObject *in;   /* owned: what the kernels read                  */
    PyArrayObject *out;  /* owned: what the kernels write                 */
    PyArrayObject *dest; /* owned: the caller's out when out is a temp     */
    gr_device *dev;
    gr_op op;
    gr_accum acc;
    gr_layout lay;
    ptrdiff_t oss, oes;
    int exclusive;
    gr_scan_overrides ov;
    gr_scan_plan plan;
} scall;

static void scall_clear(scall *c)
{
    Py_CLEAR(c->in);
    Py_CLEAR(c->out);
    Py_CLEAR(c->dest);
    Py_CLEAR(c->din);
    Py_CLEAR(c->dout);
}

/* A device array's 2-D view (Buffer, dtype, offset, M, L, seg_stride,
 * elem_stride), in elements, strides positive (gpured/_scan.py copies
 * anything else); its buffer (a new reference) and its device are
 * stored through buf and dev. */
static size_t span_elems(size_t M, size_t L, ptrdiff_t s0, ptrdiff_t s1);

static int device_rows(PyObject *view, PyObject **buf, gr_device **dev,
                       int *t, size_t *off, gr_layout *lay)
{
    PyObject *bo = NULL;
    PyArray_Descr *td = NULL;
    Py_ssize_t o, M, L, s0, s1;
    gr_buffer *b;
    if (!PyArg_ParseTuple(view, "OO&nnnnn", &bo, PyArray_DescrConverter, &td,
                          &o, &M, &L, &s0, &s1)) {
        return -1;
    }
    *t = gr_dtype_of(td, "array");
    Py_DECREF(td);
    if (*t < 0 || (b = gr_buffer_check(bo, dev)) == NULL) {
        return -1;
    }
    if (M < 1 || L < 1 || o < 0 || s0 < 1 || s1 < 1) {
        PyErr_SetString(PyExc_ValueError, "_core.scan takes non-empty device "
                        "views with positive strides");
        return -1;
    }
    size_t last = (size_t)o + (size_t)(M - 1) * (size_t)s0 +
                  (size_t)(L - 1) * (size_t)s1;
    if ((last + 1) * (size_t)gr_dtypes[*t].size > (size_t)b->nbytes) {
        PyErr_SetString(PyExc_ValueError, "view outside its device buffer");
        return -1;
    }
    *buf = Py_NewRef(bo);
    *off = (size_t)o;
    lay->M = (size_t)M;
    lay->L = (size_t)L;
    lay->seg_stride = M > 1 ? s0 : L * s1;
    lay->elem_stride = L > 1 ? s1 : 1;
    return 0;
}

/* Device input and output (both gpured.Array views): plan only; the
 * kernels read and write the buffers in place. */
static int prepare_device(scall *c, PyObject *obj, PyObject *outobj, int r)
{
    gr_device *dout = NULL;
    gr_layout olay;
    int t, ot;
    char err[256];
    if (device_rows(obj, &c->din, &c->dev, &t, &c->din_off, &c->lay) != 0 ||
        device_rows(outobj, &c->dout, &dout, &ot, &c->dout_off, &olay) != 0) {
        return -1;
    }
    if (gr_same_device(c->dev, dout) != 0) {
        return -1;
    }
    if (ot != r || olay.M != c->lay.M || olay.L != c->lay.L) {
        PyErr_SetString(PyExc_ValueError, "_core.scan: out must have the "
                        "input's shape and the result dtype");
        return -1;
    }
    c->oss = olay.seg_stride;
    c->oes = olay.elem_stride;
    if (span_elems(olay.M, olay.L, c->oss, c->oes) != olay.M * olay.L) {
        PyErr_SetString(PyExc_ValueError, "_core.scan: out must be dense");
        return -1;
    }
    if (gr_scan_accum(c->dev, c->op, (gr_dtype)t, (gr_dtype)r, &c->acc, err,
                      sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        return -1;
    }
    int contig = c->lay.elem_stride == 1 && c->oes == 1;
    int rc = gr_plan_scan(c->dev, c->op, &c->acc, &c->lay, contig, &c->ov,
                          &c->plan);
    if (rc == -1 && !contig) {
        c->need_contig = 1; /* gpured/_scan.py copies the rows and asks again */
        return 0;
    }
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        c->plan.why);
        return -1;
    }
    return 0;
}

/* Element strides of a 2-D array; -1 if unusable (negative, zero, odd). */
static int strides_of(PyArrayObject *a, ptrdiff_t *s0, ptrdiff_t *s1)
{
    const npy_intp isz = PyArray_ITEMSIZE(a);
    const npy_intp M = PyArray_DIM(a, 0), L = PyArray_DIM(a, 1);
    npy_intp b0 = M > 1 ? PyArray_STRIDE(a, 0) : L * isz;
    npy_intp b1 = L > 1 ? PyArray_STRIDE(a, 1) : isz;
    if (b0 <= 0 || b1 <= 0 || b0 % isz != 0 || b1 % isz != 0) {
        return -1;
    }
    *s0 = b0 / isz;
    *s1 = b1 / isz;
    return 0;
}

static size_t span_elems(size_t M, size_t L, ptrdiff_t s0, ptrdiff_t s1)
{
    return (M - 1) * (size_t)s0 + (L - 1) * (size_t)s1 + 1;
}

static int out_layout(scall *c)
{
    if (strides_of(c->out, &c->oss, &c->oes) != 0 ||
        span_elems(c->lay.M, c->lay.L, c->oss, c->oes) != c->lay.M * c->lay.L) {
        PyErr_SetString(PyExc_ValueError, "_core.scan: out must be dense");
        return -1;
    }
    return 0;
}

static char *scan_kw[] = {"a", "op", "rdtype", "out", "exclusive", "variant",
                          "wg_size", "items", "groups", "ilp", "spins", NULL};

/* Parse (a, op, rdtype, out, exclusive, variant, knobs) and plan. */
static int prepare(scall *c, PyObject *args, PyObject *kw)
{
    PyObject *obj = NULL, *outobj = NULL;
    const char *opname = NULL;
    PyArray_Descr *rd = NULL;
    int t, r, rc;
    char err[256];

    memset(c, 0, sizeof *c);
    c->ov.spins = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsO&O|pziiiii", scan_kw, &obj,
                                     &opname, PyArray_DescrConverter, &rd,
                                     &outobj, &c->exclusive, &c->ov.variant,
                                     &c->ov.wg_size, &c->ov.items,
                                     &c->ov.groups, &c->ov.ilp, &c->ov.spins)) {
        return -1;
    }
    if ((c->dev = gr_current_device()) == NULL || (rc = op_of(opname)) < 0) {
        Py_XDECREF(rd);
        return -1;
    }
    c->op = (gr_op)rc;
    if (PyTuple_Check(obj) || PyTuple_Check(outobj)) {
        r = gr_dtype_of(rd, "result");
        Py_XDECREF(rd);
        if (r < 0) {
            return -1;
        }
        if (!PyTuple_Check(obj) || !PyTuple_Check(outobj)) {
            PyErr_SetString(PyExc_ValueError, "_core.scan: a device input "
                            "takes a device out, and a host input a host out");
            return -1;
        }
        return prepare_device(c, obj, outobj, r);
    }
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 2 ||
        !PyArray_Check(outobj) || PyArray_NDIM((PyArrayObject *)outobj) != 2 ||
        !PyArray_SAMESHAPE((PyArrayObject *)obj, (PyArrayObject *)outobj) ||
        PyArray_SIZE((PyArrayObject *)obj) == 0) {
        PyErr_SetString(PyExc_ValueError, "_core.scan takes a non-empty 2-D "
                        "array and a 2-D out array of the same shape");
        Py_XDECREF(rd);
        return -1;
    }
    if ((t = gr_dtype_of(PyArray_DESCR((PyArrayObject *)obj), "input")) < 0 ||
        (r = gr_dtype_of(rd, "result")) < 0) {
        Py_XDECREF(rd);
        return -1;
    }
    if (!PyArray_EquivTypes(PyArray_DESCR((PyArrayObject *)outobj), rd) ||
        !PyArray_ISBEHAVED((PyArrayObject *)outobj)) {
        PyErr_SetString(PyExc_ValueError, "_core.scan: out must be an aligned, "
                        "writeable, native array of the result dtype");
        Py_XDECREF(rd);
        return -1;
    }
    Py_DECREF(rd);
    if (gr_scan_accum(c->dev, c->op, (gr_dtype)t, (gr_dtype)r, &c->acc, err,
                      sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        return -1;
    }
    PyArray_Descr *native = PyArray_DescrNewByteorder(
        PyArray_DESCR((PyArrayObject *)obj), NPY_NATIVE); /* stolen below */
    if (native == NULL) {
        return -1;
    }
    c->in = (PyArrayObject *)PyArray_FromAny(
        obj, native, 2, 2, NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED, NULL);
    if (c->in == NULL) {
        return -1;
    }
    Py_INCREF(outobj);
    c->out = (PyArrayObject *)outobj;
    c->lay.M = (size_t)PyArray_DIM(c->in, 0);
    c->lay.L = (size_t)PyArray_DIM(c->in, 1);
    if (strides_of(c->in, &c->lay.seg_stride, &c->lay.elem_stride) != 0 ||
        span_elems(c->lay.M, c->lay.L, c->lay.seg_stride,
                   c->lay.elem_stride) > 4 * c->lay.M * c->lay.L + 64) {
        /* Negative, zero or sparse strides: one C-order copy. */
        PyArrayObject *cp = (PyArrayObject *)PyArray_NewCopy(c->in, NPY_CORDER);
        if (cp == NULL) {
            return -1;
        }
        Py_SETREF(c->in, cp);
        strides_of(c->in, &c->lay.seg_stride, &c->lay.elem_stride);
    }
    if (out_layout(c) != 0) {
        return -1;
    }
    int contig = c->lay.elem_stride == 1 && c->oes == 1;
    rc = gr_plan_scan(c->dev, c->op, &c->acc, &c->lay, contig, &c->ov,
                      &c->plan);
    if (rc == -1 && !contig) {
        /* A tile variant asked for on strided rows: contiguous copies in,
         * a contiguous temporary out, copied to the caller's out after. */
        if (c->lay.elem_stride != 1) {
            PyArrayObject *cp =
                (PyArrayObject *)PyArray_NewCopy(c->in, NPY_CORDER);
            if (cp == NULL) {
                return -1;
            }
            Py_SETREF(c->in, cp);
            strides_of(c->in, &c->lay.seg_stride, &c->lay.elem_stride);
        }
        if (c->oes != 1) {
            PyArrayObject *tmp = (PyArrayObject *)PyArray_NewLikeArray(
                c->out, NPY_CORDER, NULL, 0);
            if (tmp == NULL) {
                return -1;
            }
            c->dest = c->out;
            c->out = tmp;
            if (out_layout(c) != 0) {
                return -1;
            }
        }
        rc = gr_plan_scan(c->dev, c->op, &c->acc, &c->lay, 1, &c->ov,
                          &c->plan);
    }
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        c->plan.why);
        return -1;
    }
    return 0;
}

#define ZC_ALIGN 128
#define MAX_SLOTS 16

/* The identity of op in dtype r (the carry into the first chunk). */
static void identity_of(gr_op op, gr_dtype r, unsigned char *buf)
{
    const gr_dtype_info *ti = &gr_dtypes[r];
    union {
        float f;
        double d;
        int64_t i;
        uint64_t u;
    } v;
    int big = op == GR_MIN; /* min: the largest value, max: the smallest */
    memset(buf, 0, 8);
    if (op == GR_ADD || (op == GR_MAX && !ti->is_signed && !ti->is_float)) {
        return; /* 0 (also bool's logical or, and unsigned max) */
    }
    if (op == GR_MUL || (r == GR_BOOL && op == GR_MIN)) {
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

/* A long 1-D scan of host memory, streamed (stream.c's pinned pool): chunk
 * k is uploaded to din, converted to the result type into win[1..len] after
 * win[0] = the carry (the previous chunk's last inclusive prefix, or the
 * identity), scanned inclusively into wout, and wout[1..len] (inclusive) or
 * wout[0..len-1] (exclusive) streams back; wout[len] is the next carry,
 * copied on the device.  Uploads of later chunks overlap the work on
 * earlier ones; nothing waits on the host but the result copies.  Inputs
 * larger than the device's memory scan this way.  Each chunk boundary adds
 * one rounding of the carry to the result type to the error bound. */
static int scan_streamed(scall *c, const char *in_ptr, char *out_ptr,
                         gr_status *st)
{
    gr_device *d = c->dev;
    const gr_dtype t = c->acc.t, r = c->acc.r;
    const size_t isz = gr_dtypes[t].size, rsz = gr_dtypes[r].size;
    const size_t L = c->lay.L;
    cl_mem din[MAX_SLOTS] = {0}, win[MAX_SLOTS] = {0}, wout[MAX_SLOTS] = {0};
    cl_event used[MAX_SLOTS] = {0}, back[MAX_SLOTS] = {0};
    size_t pend_off[MAX_SLOTS] = {0}, pend_len[MAX_SLOTS] = {0};
    unsigned char ident[8];
    gr_accum acc2;
    gr_scan_plan plan2;
    gr_layout lay2 = {1, 0, 0, 1};
    size_t chunk = 0;
    int nbuf = 0, rc = -1;
    char err[256];
    cl_int e = CL_SUCCESS;
    gr_stream_pool *p = gr_stream_pool_get(d, &chunk, &nbuf, st);
    if (p == NULL) {
        return -1;
    }
    const size_t per = chunk / (isz > rsz ? isz : rsz);
    if (gr_scan_accum(d, c->op, r, r, &acc2, err, sizeof err) != 0) {
        gr_status_fail(st, "%s", err);
        return -1;
    }
    identity_of(c->op, r, ident);
    const size_t nchunks = (L + per - 1) / per;
    for (size_t k = 0; k < nchunks; ++k) {
        const int s = (int)(k % (size_t)nbuf), s2 = (int)((k + 1) % (size_t)nbuf);
        const size_t off = k * per, len = L - off < per ? L - off : per;
        cl_event w = NULL;
        if (din[s] == NULL) {
            din[s] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, per * isz, NULL, &e);
            GR_CL_CHECK_AS(st, "clCreateBuffer", e);
            wout[s] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, (per + 1) * rsz,
                                     NULL, &e);
            GR_CL_CHECK_AS(st, "clCreateBuffer", e);
        }
        for (int q = 0; q < 2; ++q) {
            int sq = q ? s2 : s;
            if (win[sq] == NULL) {
                win[sq] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                                         (per + 1) * rsz, NULL, &e);
                GR_CL_CHECK_AS(st, "clCreateBuffer", e);
            }
        }
        if (back[s] != NULL) { /* chunk k - nbuf's results leave the slot */
            if (gr_stream_drain(p, s, back[s], out_ptr + pend_off[s] * rsz,
                                pend_len[s] * rsz, st) != 0) {
                back[s] = NULL;
                goto fail;
            }
            back[s] = NULL;
        }
        if (gr_stream_upload(p, s, in_ptr + off * isz, len * isz, din[s], 0,
                             used[s], &w, st) != 0) {
            goto fail;
        }
        GR_CL_CHECK(st, clEnqueueBarrierWithWaitList(d->queue, 1, &w, NULL));
        if (k == 0) {
            GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, win[s], CL_TRUE, 0,
                                                 rsz, ident, 0, NULL, NULL));
        }
        if (gr_copy_enqueue(d, din[s], t, 0, win[s], r, 1, len, 0.0, st) != 0) {
            goto fail;
        }
        if (used[s] != NULL) {
            clReleaseEvent(used[s]);
            used[s] = NULL;
        }
        GR_CL_CHECK(st, clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &used[s]));
        if (lay2.L != len + 1) {
            lay2.L = len + 1;
            lay2.seg_stride = (ptrdiff_t)(len + 1);
            int prc = gr_plan_scan(d, c->op, &acc2, &lay2, 1, &c->ov, &plan2);
            if (prc != 0) {
                gr_status_fail(st, "%s", plan2.why);
                goto fail;
            }
        }
        gr_scan_io io = {win[s], 0, wout[s], 0, (ptrdiff_t)(len + 1), 1};
        if (gr_scan_run(d, c->op, &acc2, 0, &lay2, &plan2, &io, NULL, st) != 0) {
            goto fail;
        }
        if (k + 1 < nchunks) {
            GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, wout[s], win[s2],
                                                len * rsz, 0, rsz, 0, NULL,
                                                NULL));
        }
        if (gr_stream_download(p, d, s, wout[s], (c->exclusive ? 0 : 1) * rsz,
                               len * rsz, &back[s], st) != 0) {
            goto fail;
        }
        pend_off[s] = off;
        pend_len[s] = len;
    }
    for (size_t k = nchunks > (size_t)nbuf ? nchunks - nbuf : 0; k < nchunks; ++k) {
        const int s = (int)(k % (size_t)nbuf);
        if (back[s] != NULL) {
            cl_event b = back[s];
            back[s] = NULL;
            if (gr_stream_drain(p, s, b, out_ptr + pend_off[s] * rsz,
                                pend_len[s] * rsz, st) != 0) {
                goto fail;
            }
        }
    }
    rc = 0;
fail:
    clFinish(d->queue);
    if (gr_stream_idle(p, st) != 0) {
        rc = -1;
    }
    for (int i = 0; i < MAX_SLOTS; ++i) {
        if (back[i]) clReleaseEvent(back[i]);
        if (used[i]) clReleaseEvent(used[i]);
        if (din[i]) clReleaseMemObject(din[i]);
        if (win[i]) clReleaseMemObject(win[i]);
        if (wout[i]) clReleaseMemObject(wout[i]);
    }
    return rc;
}

/* The host shell (device arrays will add their branch here): NumPy input
 * -> buffer (zero-copy on CPUs), output buffer (the NumPy result itself on
 * CPUs, CL_MEM_USE_HOST_PTR), gr_scan_run `reps` times (timed when reps >
 * 0), results back into the NumPy array.  Runs without the GIL. */
static int scan_host(scall *c, const char *in_ptr, char *out_ptr, int reps,
                     double *ns, gr_status *st)
{
    gr_device *d = c->dev;
    gr_input inp = {NULL, 0, 0};
    gr_scan_io io;
    gr_timing tm = {0, 0};
    cl_int err = CL_SUCCESS;
    const size_t isz = gr_dtypes[c->acc.t].size, osz = gr_dtypes[c->acc.r].size;
    const size_t in_bytes = span_elems(c->lay.M, c->lay.L, c->lay.seg_stride,
                                       c->lay.elem_stride) * isz;
    const size_t out_bytes = c->lay.M * c->lay.L * osz;
    int host_out = 0, rc = -1;

    memset(&io, 0, sizeof io);
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    if (reps == 0 && c->lay.M == 1 && c->lay.elem_stride == 1 && c->oes == 1 &&
        (gr_stream_wanted(d, in_bytes) ||
         (d->max_alloc && (in_bytes > d->max_alloc ||
                           out_bytes > d->max_alloc)))) {
        return scan_streamed(c, in_ptr, out_ptr, st);
    }
    if (d->max_alloc && (in_bytes > d->max_alloc || out_bytes > d->max_alloc)) {
        gr_status_fail(st, "scan of %zu bytes into %zu bytes does not fit the "
                       "device's largest buffer (%llu bytes)", in_bytes,
                       out_bytes, (unsigned long long)d->max_alloc);
        return -1;
    }
    if (gr_input_from_host(d, in_ptr, in_bytes, isz, &inp, st) != 0) {
        return -1;
    }
    io.in = inp.mem;
    io.in_base = inp.base;
    io.out_seg_stride = c->oss;
    io.out_elem_stride = c->oes;
    {
        uintptr_t addr = (uintptr_t)out_ptr;
        size_t lead = addr % ZC_ALIGN;
        if (!d->is_gpu && lead % osz == 0) {
            io.out = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                                    out_bytes + lead, (void *)(addr - lead), &err);
            if (err == CL_SUCCESS) {
                io.out_base = lead / osz;
                host_out = 1;
            }
        }
        if (!host_out) {
            io.out = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, out_bytes, NULL,
                                    &err);
            GR_CL_CHECK_AS(st, "clCreateBuffer", err);
        }
    }
    for (int i = 0; i < (reps > 0 ? reps : 1); ++i) {
        if (gr_scan_run(d, c->op, &c->acc, c->exclusive, &c->lay, &c->plan, &io,
                        reps > 0 ? &tm : NULL, st) != 0) {
            goto fail;
        }
        if (ns != NULL) {
            ns[i] = tm.first_ns;
        }
    }
    if (host_out) {
        void *p = clEnqueueMapBuffer(d->queue, io.out, CL_TRUE, CL_MAP_READ, 0,
                                     out_bytes + io.out_base * osz, 0, NULL,
                                     NULL, &err);
        GR_CL_CHECK_AS(st, "clEnqueueMapBuffer", err);
        GR_CL_CHECK(st, clEnqueueUnmapMemObject(d->queue, io.out, p, 0, NULL,
                                                NULL));
        GR_CL_CHECK(st, clFinish(d->queue));
    } else {
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, io.out, CL_TRUE, 0,
                                            out_bytes, out_ptr, 0, NULL, NULL));
    }
    rc = 0;
fail:
    if (io.out != NULL) {
        clReleaseMemObject(io.out);
    }
    gr_input_release(&inp);
    return rc;
}

/* The device shell: both sides are gpured.Array buffers; nothing is
 * waited for unless timed (reps > 0).  Runs without the GIL. */
static int scan_device(scall *c, int reps, double *ns, gr_status *st)
{
    gr_scan_io io;
    gr_timing tm = {0, 0};
    memset(&io, 0, sizeof io);
    if (gr_device_open(c->dev, st) != 0) {
        return -1;
    }
    io.in = ((gr_buffer *)c->din)->mem;
    io.in_base = c->din_off;
    io.out = ((gr_buffer *)c->dout)->mem;
    io.out_base = c->dout_off;
    io.out_seg_stride = c->oss;
    io.out_elem_stride = c->oes;
    for (int i = 0; i < (reps > 0 ? reps : 1); ++i) {
        if (gr_scan_run(c->dev, c->op, &c->acc, c->exclusive, &c->lay,
                        &c->plan, &io, reps > 0 ? &tm : NULL, st) != 0) {
            return -1;
        }
        if (ns != NULL) {
            ns[i] = tm.first_ns;
        }
    }
    return 0;
}

static int run(scall *c, int reps, double *ns)
{
    gr_status st = {0};
    const char *in_ptr = c->in ? PyArray_DATA(c->in) : NULL;
    char *out_ptr = c->out ? PyArray_DATA(c->out) : NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    rc = c->din != NULL ? scan_device(c, reps, ns, &st)
                        : scan_host(c, in_ptr, out_ptr, reps, ns, &st);
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return -1;
    }
    if (c->dest != NULL && PyArray_CopyInto(c->dest, c->out) != 0) {
        return -1;
    }
    return 0;
}

static PyObject *plan_dict(const gr_device *d, const gr_scan_plan *p,
                           const gr_accum *acc, const gr_layout *lay)
{
    static const char *const kinds[] = {"row_per_item", "chunks",
                                        "reduce_then_scan", "lookback"};
    static const char *const locals[] = {"none", "naive", "blelloch",
                                         "workgroup", "subgroup"};
    return Py_BuildValue(
        "{s:s, s:s, s:s, s:i, s:i, s:i, s:n, s:n, s:n, s:i, s:i, s:s, s:s, "
        "s:O, s:s, s:n, s:n, s:n, s:n}",
        "variant", p->variant, "kernel", kinds[p->kind], "combine",
        locals[p->local], "wg_size", p->wg, "items", p->items, "ilp", p->ilp,
        "groups", (Py_ssize_t)p->parts, "chunk", (Py_ssize_t)p->chunk,
        "tiles", (Py_ssize_t)p->tiles, "passes",
        p->kind == GR_SK_RTS ? 3 : 1, "spins", p->spin, "accumulator",
        acc->a_cl, "why", p->why, "compensated",
        acc->comp ? Py_True : Py_False, "device", d->name, "segments",
        (Py_ssize_t)lay->M, "segment_length", (Py_ssize_t)lay->L,
        "seg_stride", (Py_ssize_t)lay->seg_stride, "elem_stride",
        (Py_ssize_t)lay->elem_stride);
}

/* scan(a, op, rdtype, out, exclusive=False, variant=None, knobs...):
 * out[i, :] = scan of a[i, :]; returns None. */
static PyObject *py_scan(PyObject *self, PyObject *args, PyObject *kw)
{
    scall c;
    PyObject *res = NULL;
    int prc = prepare(&c, args, kw);
    if (prc == 0 && c.need_contig) {
        res = Py_NewRef(Py_NotImplemented); /* the caller copies the rows */
    } else if (prc == 0 && run(&c, 0, NULL) == 0) {
        res = Py_NewRef(Py_None);
    }
    scall_clear(&c);
    return res;
}

static PyObject *py_scan_explain(PyObject *self, PyObject *args, PyObject *kw)
{
    scall c;
    PyObject *res = NULL;
    if (prepare(&c, args, kw) == 0) {
        res = c.need_contig ? Py_NewRef(Py_NotImplemented)
                            : plan_dict(c.dev, &c.plan, &c.acc, &c.lay);
    }
    scall_clear(&c);
    return res;
}

/* bench_scan(a, op, rdtype, out, reps, ...) -> ([ns per run], plan); the
 * input is uploaded once, every run's kernels are timed by events. */
static PyObject *py_bench_scan(PyObject *self, PyObject *args, PyObject *kw)
{
    scall c;
    PyObject *times = NULL, *out = NULL;
    double *ns = NULL;
    long reps = 0;
    if (PyTuple_GET_SIZE(args) != 5 ||
        (reps = PyLong_AsLong(PyTuple_GET_ITEM(args, 4))) <= 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "bench_scan(a, op, rdtype, out, reps > 0, ...)");
        }
        return NULL;
    }
    PyObject *head = PyTuple_GetSlice(args, 0, 4);
    if (head == NULL) {
        return NULL;
    }
    int prc = prepare(&c, head, kw);
    Py_DECREF(head);
    if (prc == 0 && c.need_contig) {
        out = Py_NewRef(Py_NotImplemented); /* the caller copies the rows */
    } else if (prc == 0 && (ns = calloc((size_t)reps, sizeof *ns)) == NULL) {
        PyErr_NoMemory();
    } else if (prc == 0 && run(&c, (int)reps, ns) == 0 &&
               (times = PyList_New(reps)) != NULL) {
        for (long i = 0; i < reps; ++i) {
            PyList_SET_ITEM(times, i, PyFloat_FromDouble(ns[i]));
        }
        out = Py_BuildValue("(NN)", times, plan_dict(c.dev, &c.plan, &c.acc,
                                                     &c.lay));
    }
    free(ns);
    scall_clear(&c);
    return out;
}

/* scan_variants(op, dtype, rdtype) -> names the device runs. */
static PyObject *py_scan_variants(PyObject *self, PyObject *args)
{
    const char *opname = NULL;
    PyArray_Descr *td = NULL, *rd = NULL;
    PyObject *list = NULL;
    gr_accum acc;
    char err[256];
    int op, t, r;
    gr_device *d = gr_current_device();
    if (d == NULL ||
        !PyArg_ParseTuple(args, "sO&O&", &opname, PyArray_DescrConverter, &td,
                          PyArray_DescrConverter, &rd)) {
        goto done;
    }
    if ((op = op_of(opname)) < 0 || (t = gr_dtype_of(td, "input")) < 0 ||
        (r = gr_dtype_of(rd, "result")) < 0) {
        goto done;
    }
    if (gr_scan_accum(d, (gr_op)op, (gr_dtype)t, (gr_dtype)r, &acc, err,
                      sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    const char *const *v = gr_scan_variants();
    list = PyList_New(0);
    for (int i = 0; list != NULL && v[i] != NULL; ++i) {
        if (strcmp(v[i], "auto") != 0 &&
            !gr_scan_variant_available(d, (gr_op)op, &acc, v[i], err,
                                       sizeof err)) {
            continue;
        }
        gr_list_add(&list, v[i]);
    }
done:
    Py_XDECREF(td);
    Py_XDECREF(rd);
    return list;
}

/* scan_plan_for(caps, op, dtype, rdtype, M, L, seg_stride, elem_stride,
 * variant=None, knobs...) -> plan dict for synthetic device caps (gpu,
 * compute_units, max_work_group_size, fp64, atomics64, subgroups,
 * wg_collectives, nvidia_ptx, name), as _core.plan_for for reductions. */
static PyObject *py_scan_plan_for(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"caps", "op", "dtype", "rdtype", "M", "L",
                             "seg_stride", "elem_stride", "variant", "wg_size",
                             "items", "groups", "ilp", "spins", NULL};
    PyObject *caps = NULL;
    const char *opname = NULL;
    PyArray_Descr *td = NULL, *rd = NULL;
    Py_ssize_t M = 0, L = 0, ss = 0, es = 0;
    gr_scan_overrides ov = {NULL, 0, 0, 0, 0, -1};
    gr_scan_plan plan;
    gr_accum acc;
    gr_layout lay;
    gr_device dev;
    PyObject *res = NULL;
    char err[256];
    int op, t, r, rc;
    memset(&dev, 0, sizeof dev);
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "O!sO&O&nnnn|ziiiii", kwlist, &PyDict_Type, &caps,
            &opname, PyArray_DescrConverter, &td, PyArray_DescrConverter, &rd,
            &M, &L, &ss, &es, &ov.variant, &ov.wg_size, &ov.items, &ov.groups,
            &ov.ilp, &ov.spins)) {
        goto done;
    }
    if (gr_caps_parse(caps, &dev) != 0) {
        goto done;
    }
    if (M < 1 || L < 1 || ss < 1 || es < 1) {
        PyErr_SetString(PyExc_ValueError,
                        "scan_plan_for needs M, L, strides >= 1");
        goto done;
    }
    if ((op = op_of(opname)) < 0 || (t = gr_dtype_of(td, "input")) < 0 ||
        (r = gr_dtype_of(rd, "result")) < 0) {
        goto done;
    }
    if (gr_scan_accum(&dev, (gr_op)op, (gr_dtype)t, (gr_dtype)r, &acc, err,
                      sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    lay.M = (size_t)M;
    lay.L = (size_t)L;
    lay.seg_stride = ss;
    lay.elem_stride = es;
    rc = gr_plan_scan(&dev, (gr_op)op, &acc, &lay, es == 1, &ov, &plan);
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        plan.why);
        goto done;
    }
    res = plan_dict(&dev, &plan, &acc, &lay);
done:
    Py_XDECREF(td);
    Py_XDECREF(rd);
    return res;
}

PyMethodDef gr_scan_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))py_scan, METH_VARARGS | METH_KEYWORDS,
     "Scan the rows of a 2-D array into out."},
    {"scan_explain", (PyCFunction)(void (*)(void))py_scan_explain,
     METH_VARARGS | METH_KEYWORDS, "The plan scan() would run."},
    {"bench_scan", (PyCFunction)(void (*)(void))py_bench_scan,
     METH_VARARGS | METH_KEYWORDS, "Time a scan with device events."},
    {"scan_variants", py_scan_variants, METH_VARARGS,
     "Scan variants the device runs for (op, dtype, result dtype)."},
    {"scan_plan_for", (PyCFunction)(void (*)(void))py_scan_plan_for,
     METH_VARARGS | METH_KEYWORDS, "The scan plan for synthetic device caps."},
    {NULL, NULL, 0, NULL},
};
