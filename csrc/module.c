/*
 * gpured._core — the Python face of the C core.
 *
 * Thin shells: parse arguments, turn NumPy arrays into (pointer, layout),
 * call the internal functions with the GIL released, turn a gr_status into
 * an exception.  Argument normalisation (axis tuples, keepdims, result
 * dtypes) happens in gpured/ before these are called; here every reduction
 * is a 2-D array of M segments x L elements reduced along its last axis.
 */
#define GR_MODULE_MAIN
#include "gpured.h"

#include <numpy/arrayobject.h>
#include <string.h>

size_t gr_result_size(gr_op op, const gr_accum *acc); /* reduce.c */

/* ----------------------------------------------------------- dtypes */

/* NumPy dtype -> gr_dtype, or -1 with TypeError naming the dtype. */
int gr_dtype_of(PyArray_Descr *descr, const char *what)
{
    static const struct {
        char kind;
        int size;
        gr_dtype t;
    } table[] = {
        {'b', 1, GR_BOOL},   {'i', 1, GR_INT8},    {'u', 1, GR_UINT8},
        {'i', 2, GR_INT16},  {'u', 2, GR_UINT16},  {'i', 4, GR_INT32},
        {'u', 4, GR_UINT32}, {'i', 8, GR_INT64},   {'u', 8, GR_UINT64},
        {'f', 4, GR_FLOAT32}, {'f', 8, GR_FLOAT64},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; ++i) {
        if (descr->kind == table[i].kind &&
            PyDataType_ELSIZE(descr) == table[i].size) {
            return table[i].t;
        }
    }
    PyObject *name = PyObject_Str((PyObject *)descr);
    PyErr_Format(PyExc_TypeError,
                 "gpured does not support %s dtype %S (supported: bool, "
                 "int8-int64, uint8-uint64, float32, float64)",
                 what, name ? name : Py_None);
    Py_XDECREF(name);
    return -1;
}

int gr_op_of(const char *name)
{
    for (int i = 0; i < GR_NOPS; ++i) {
        if (strcmp(name, gr_op_names[i]) == 0) {
            return i;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown reduction operator '%s'", name);
    return -1;
}

static PyObject *device_dict(const gr_device *d)
{
    const char *type = (d->type & CL_DEVICE_TYPE_GPU)           ? "GPU"
                       : (d->type & CL_DEVICE_TYPE_CPU)         ? "CPU"
                       : (d->type & CL_DEVICE_TYPE_ACCELERATOR) ? "ACCELERATOR"
                                                                : "OTHER";
    return Py_BuildValue(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:N, s:I, s:n, s:K, s:K, "
        "s:K, s:O, s:O, s:O, s:O, s:O}",
        "name", d->name, "platform", d->platform_name, "vendor", d->vendor,
        "version", d->version, "driver", d->driver, "opencl_c", d->c_version,
        "platform_version", d->platform_version, "type", type, "index",
        PyUnicode_FromFormat("%d:%d", d->pidx, d->didx), "compute_units",
        d->compute_units, "max_work_group_size", (Py_ssize_t)d->max_wg,
        "local_mem_size", (unsigned long long)d->local_mem, "global_mem_size",
        (unsigned long long)d->global_mem, "max_alloc_size",
        (unsigned long long)d->max_alloc, "fp64", d->fp64 ? Py_True : Py_False,
        "atomics64", d->atomics64 ? Py_True : Py_False, "subgroups",
        d->subgroups ? Py_True : Py_False, "wg_collectives",
        d->wg_collectives ? Py_True : Py_False, "nvidia_ptx",
        d->nvidia_ptx ? Py_True : Py_False);
}

static PyObject *py_devices(PyObject *self, PyObject *noargs)
{
    PyObject *list = PyList_New(0);
    for (int i = 0; list != NULL && i < gr_device_count(); ++i) {
        PyObject *dd = device_dict(gr_device_get(i));
        if (dd == NULL || PyList_Append(list, dd) != 0) {
            Py_XDECREF(dd);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(dd);
    }
    return list;
}

static PyObject *py_current_index(PyObject *self, PyObject *noargs)
{
    return PyLong_FromLong(gr_current_index());
}

static PyObject *py_get_device(PyObject *self, PyObject *noargs)
{
    gr_device *d = gr_current_device();
    return d ? device_dict(d) : NULL;
}

static PyObject *py_set_device(PyObject *self, PyObject *arg)
{
    const char *spec = PyUnicode_AsUTF8(arg);
    if (spec == NULL || gr_set_device(spec) != 0) {
        return NULL;
    }
    return py_get_device(self, NULL);
}

static PyObject *py_kernel_source(PyObject *self, PyObject *arg)
{
    const char *family = PyUnicode_AsUTF8(arg);
    if (family == NULL) {
        return NULL;
    }
    for (int i = 0; gr_kernel_families[i] != NULL; ++i) {
        if (strcmp(family, gr_kernel_families[i]) == 0) {
            char *s = gr_program_source(family, "");
            if (s == NULL) {
                return PyErr_NoMemory();
            }
            PyObject *r = PyUnicode_FromString(s);
            free(s);
            return r;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown kernel family '%s' (known: reduce, scan, bykey)",
                 family);
    return NULL;
}

static PyObject *py_cache_dir(PyObject *self, PyObject *args)
{
    const char *dir = NULL;
    if (!PyArg_ParseTuple(args, "|z", &dir)) {
        return NULL;
    }
    if (dir != NULL) {
        gr_programs_set_cache_dir(dir);
    }
    return PyUnicode_FromString(gr_programs_cache_dir());
}

static PyObject *py_stats(PyObject *self, PyObject *noargs)
{
    long m, dk, b;
    gr_programs_stats(&m, &dk, &b);
    return Py_BuildValue("{s:l, s:l, s:l}", "memory_hits", m, "disk_hits", dk,
                         "builds", b);
}

/* ------------------------------------------------------- reductions */

typedef struct {
    PyArrayObject *arr;  /* owned: the array whose memory the kernel reads */
    PyObject *dbuf;      /* owned: or the Buffer of a device array          */
    size_t doff;         /* its first element                               */
    int need_contig;     /* device view the plan cannot read as it is       */
    PyObject *out;       /* owned: device results go here (Buffer) or NULL  */
    size_t out_off;
    gr_op op;
    gr_accum acc;
    gr_layout lay;
    gr_overrides ov;
    gr_plan plan;
    gr_device *dev;
    PyArray_Descr *rdescr; /* owned: result dtype                          */
} call;

static void call_clear(call *c)
{
    Py_CLEAR(c->arr);
    Py_CLEAR(c->dbuf);
    Py_CLEAR(c->out);
    Py_CLEAR(c->rdescr);
}

/* Element strides of a 2-D aligned native array, or -1 if the array must
 * be copied first (negative or odd strides, or mostly gaps). */
static int layout_of(PyArrayObject *a, gr_layout *lay)
{
    const npy_intp isz = PyArray_ITEMSIZE(a);
    const npy_intp M = PyArray_DIM(a, 0), L = PyArray_DIM(a, 1);
    npy_intp s0 = M > 1 ? PyArray_STRIDE(a, 0) : L * isz;
    npy_intp s1 = L > 1 ? PyArray_STRIDE(a, 1) : isz;
    lay->M = (size_t)M;
    lay->L = (size_t)L;
    if (s0 < 0 || s1 < 0 || s0 % isz != 0 || s1 % isz != 0 ||
        (M > 1 && s0 == 0) || (L > 1 && s1 == 0)) {
        return -1;
    }
    lay->seg_stride = s0 / isz;
    lay->elem_stride = s1 / isz;
    /* Span of memory touched vs. bytes of data: copy sparse views. */
    double span = (double)(M - 1) * lay->seg_stride +
                  (double)(L - 1) * lay->elem_stride + 1;
    if (span > 4.0 * (double)M * (double)L + 64) {
        return -1;
    }
    return 0;
}

static size_t span_bytes(PyArrayObject *a, const gr_layout *lay)
{
    const size_t isz = PyArray_ITEMSIZE(a);
    return ((lay->M - 1) * lay->seg_stride + (lay->L - 1) * lay->elem_stride +
            1) *
           isz;
}

static int copy_c_order(call *c)
{
    PyArrayObject *cp = (PyArrayObject *)PyArray_NewCopy(c->arr, NPY_CORDER);
    if (cp == NULL) {
        return -1;
    }
    Py_SETREF(c->arr, cp);
    return layout_of(c->arr, &c->lay);
}

static char *reduce_kw[] = {"a",     "op",     "rdtype", "variant", "wg_size",
                            "groups", "items", "ilp",    "vw",      "out",
                            NULL};

/* A device array's 2-D view: (Buffer, dtype, offset, M, L, seg_stride,
 * elem_stride), in elements, strides non-negative (gpured/_array.py makes
 * a contiguous copy of anything else).  Fills c's device fields. */
static int device_view(call *c, PyObject *view, PyArray_Descr **td)
{
    PyObject *bo = NULL;
    Py_ssize_t off, M, L, s0, s1;
    gr_buffer *b;
    if (!PyArg_ParseTuple(view, "OO&nnnnn", &bo, PyArray_DescrConverter, td,
                          &off, &M, &L, &s0, &s1) ||
        (b = gr_buffer_check(bo, &c->dev)) == NULL) {
        return -1;
    }
    if (M < 1 || L < 1 || off < 0 || s0 < 0 || s1 < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "_core.reduce takes a non-empty view with "
                        "non-negative strides");
        return -1;
    }
    size_t last = (size_t)off + (size_t)(M - 1) * (size_t)s0 +
                  (size_t)(L - 1) * (size_t)s1;
    if ((last + 1) * (size_t)PyDataType_ELSIZE(*td) > (size_t)b->nbytes) {
        PyErr_SetString(PyExc_ValueError, "view outside its device buffer");
        return -1;
    }
    c->dbuf = Py_NewRef(bo);
    c->doff = (size_t)off;
    c->lay.M = (size_t)M;
    c->lay.L = (size_t)L;
    c->lay.seg_stride = M > 1 ? s0 : L * s1;
    c->lay.elem_stride = L > 1 ? s1 : 1;
    return 0;
}

/* out=(Buffer, offset): where a device reduction's M results go. */
static int device_out(call *c, PyObject *out)
{
    PyObject *bo = NULL;
    Py_ssize_t off = 0;
    gr_device *d = NULL;
    gr_buffer *b;
    if (!PyArg_ParseTuple(out, "On", &bo, &off) ||
        (b = gr_buffer_check(bo, &d)) == NULL) {
        return -1;
    }
    if (gr_same_device(c->dev, d) != 0) {
        return -1;
    }
    if (off < 0 || ((size_t)off + c->lay.M) * gr_result_size(c->op, &c->acc) >
                       (size_t)b->nbytes) {
        PyErr_SetString(PyExc_ValueError, "out does not hold the results");
        return -1;
    }
    c->out = Py_NewRef(bo);
    c->out_off = (size_t)off;
    return 0;
}

/* Parse (a, op, rdtype, variant=None, knobs..., out=None) and plan the
 * call.  a is a 2-D NumPy array or a device view (see device_view). */
static int prepare(call *c, PyObject *args, PyObject *kw)
{
    PyObject *obj = NULL, *out = Py_None;
    const char *opname = NULL;
    PyArray_Descr *rd = NULL, *td = NULL;
    int t, r, rc;
    char err[256];

    memset(c, 0, sizeof *c);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsO&|ziiiiiO", reduce_kw, &obj,
                                     &opname, PyArray_DescrConverter, &rd,
                                     &c->ov.variant, &c->ov.wg_size,
                                     &c->ov.groups, &c->ov.items, &c->ov.ilp,
                                     &c->ov.vw, &out)) {
        return -1;
    }
    c->rdescr = rd;
    if ((rc = gr_op_of(opname)) < 0) {
        return -1;
    }
    c->op = (gr_op)rc;
    if (PyTuple_Check(obj)) {
        rc = device_view(c, obj, &td);
        t = rc == 0 ? gr_dtype_of(td, "input") : -1;
        Py_XDECREF(td);
        if (t < 0) {
            return -1;
        }
    } else {
        if ((c->dev = gr_current_device()) == NULL) {
            return -1;
        }
        if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 2) {
            PyErr_SetString(PyExc_ValueError, "_core.reduce takes a 2-D array");
            return -1;
        }
        if ((t = gr_dtype_of(PyArray_DESCR((PyArrayObject *)obj), "input")) < 0) {
            return -1;
        }
    }
    if ((r = gr_dtype_of(rd, "result")) < 0) {
        return -1;
    }
    if (gr_accum_for(c->dev, c->op, (gr_dtype)t, (gr_dtype)r, &c->acc, err,
                     sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        return -1;
    }
    if (c->dbuf != NULL) {
        if (out != Py_None && device_out(c, out) != 0) {
            return -1;
        }
        rc = gr_plan_reduce(c->dev, c->op, &c->acc, &c->lay, &c->ov, &c->plan);
        if (rc == 0 && c->plan.kind == GR_K_GROUP && c->lay.elem_stride != 1) {
            c->need_contig = 1; /* the caller copies on the device */
        }
        goto planned;
    }
    if (out != Py_None) {
        PyErr_SetString(PyExc_ValueError, "out= is for device arrays");
        return -1;
    }
    /* Native byte order and alignment; a copy only when needed. */
    PyArray_Descr *native =
        PyArray_DescrNewByteorder(PyArray_DESCR((PyArrayObject *)obj),
                                  NPY_NATIVE); /* new reference, stolen below */
    if (native == NULL) {
        return -1;
    }
    c->arr = (PyArrayObject *)PyArray_FromAny(
        obj, native, 2, 2, NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED, NULL);
    if (c->arr == NULL) {
        return -1;
    }
    if (PyArray_DIM(c->arr, 0) == 0 || PyArray_DIM(c->arr, 1) == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "_core.reduce takes a non-empty 2-D array");
        return -1;
    }
    if (layout_of(c->arr, &c->lay) != 0 && copy_c_order(c) != 0) {
        return -1;
    }
    rc = gr_plan_reduce(c->dev, c->op, &c->acc, &c->lay, &c->ov, &c->plan);
    if (rc == 0 && c->plan.kind == GR_K_GROUP && c->lay.elem_stride != 1) {
        /* Work-group variants read contiguous segments. */
        if (copy_c_order(c) != 0) {
            return -1;
        }
        rc = gr_plan_reduce(c->dev, c->op, &c->acc, &c->lay, &c->ov,
                            &c->plan);
    }
planned:
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        c->plan.why);
        return -1;
    }
    return 0;
}

static PyObject *result_array(call *c)
{
    npy_intp dims[1] = {(npy_intp)c->lay.M};
    PyArray_Descr *d;
    if (c->op == GR_ARGMIN || c->op == GR_ARGMAX) {
        d = PyArray_DescrFromType(NPY_INT64);
    } else {
        d = PyArray_DescrNewByteorder(c->rdescr, NPY_NATIVE);
    }
    if (d == NULL) {
        return NULL;
    }
    return PyArray_NewFromDescr(&PyArray_Type, d, 1, dims, NULL, NULL, 0,
                                NULL);
}

#define MAX_PIECES 256

/* A full reduction of one long contiguous host segment on a GPU: stream it
 * through the pinned staging pool (stream.c), planned for one chunk. */
static int run_streamed(call *c, const char *ptr, size_t isz, char *out,
                        gr_status *st)
{
    gr_layout sub = c->lay;
    gr_plan plan;
    gr_source src;
    gr_piece *pieces = NULL;
    gr_stream_src *s = NULL;
    gr_output o = {out, NULL, 0};
    int np = 0, rc = -1;
    size_t per = gr_stream_chunk_elems(isz);
    sub.L = c->lay.L < per ? c->lay.L : per;
    if (gr_plan_reduce(c->dev, c->op, &c->acc, &sub, &c->ov, &plan) != 0) {
        gr_status_fail(st, "%s", plan.why);
        return -1;
    }
    if ((s = gr_stream_source(c->dev, ptr, isz, c->lay.L, &src, &np, st)) ==
        NULL) {
        return -1;
    }
    if ((pieces = calloc((size_t)np, sizeof *pieces)) == NULL) {
        gr_status_fail(st, "out of host memory");
        goto fail;
    }
    for (int i = 0; i < np; ++i) {
        size_t at = (size_t)i * per;
        pieces[i].len = c->lay.L - at < per ? c->lay.L - at : per;
    }
    rc = gr_reduce_run(c->dev, c->op, &c->acc, &c->lay, &plan, pieces, np,
                       &src, &o, NULL, st);
fail:
    if (gr_stream_source_end(s, st) != 0) {
        rc = -1;
    }
    free(pieces);
    return rc;
}

/* Split the input into buffers no larger than the device allows
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE: 1 GiB on PoCL, a quarter of memory on
 * GPUs) and run the plan, `reps` times (reps > 0: timed with device events,
 * the input uploaded once).  Runs without the GIL. */
static int run_nogil(call *c, const char *ptr, size_t isz, char *out, int reps,
                     double *ns, gr_status *st)
{
    gr_input inp[MAX_PIECES];
    gr_piece pieces[MAX_PIECES];
    gr_timing tm = {0, 0};
    gr_layout lay = c->lay;
    gr_output o = {out, NULL, 0};
    const size_t limit = (size_t)c->dev->max_alloc - 128;
    const size_t rsize = gr_result_size(c->op, &c->acc);
    const size_t seg_bytes = ((lay.L - 1) * lay.elem_stride + 1) * isz;
    int np = 0, rc = 0;

    memset(inp, 0, sizeof inp);
    if (gr_device_open(c->dev, st) != 0) {
        return -1;
    }
    if (reps == 0 && lay.M == 1 && lay.elem_stride == 1 &&
        gr_stream_wanted(c->dev, lay.L * isz)) {
        return run_streamed(c, ptr, isz, out, st);
    }
    if (span_bytes(c->arr, &lay) <= limit || c->dev->max_alloc == 0) {
        /* One buffer for everything. */
        rc = gr_input_from_host(c->dev, ptr, span_bytes(c->arr, &lay), isz,
                                &inp[0], st);
        pieces[0] = (gr_piece){inp[0].mem, inp[0].base, lay.L};
        np = rc == 0;
    } else if (lay.M == 1 && lay.elem_stride == 1 &&
               c->plan.kind == GR_K_GROUP && c->plan.chunk * isz <= limit) {
        /* One long segment: pieces of whole chunks. */
        size_t per = limit / isz / c->plan.chunk * c->plan.chunk;
        for (size_t off = 0; rc == 0 && off < lay.L; off += per) {
            size_t len = lay.L - off < per ? lay.L - off : per;
            if (np == MAX_PIECES) {
                gr_status_fail(st, "input too large: more than %d buffers",
                               MAX_PIECES);
                rc = -1;
                break;
            }
            rc = gr_input_from_host(c->dev, ptr + off * isz, len * isz, isz,
                                    &inp[np], st);
            pieces[np] = (gr_piece){inp[np].mem, inp[np].base, len};
            np += rc == 0;
        }
    } else if (lay.M > 1 && seg_bytes <= limit &&
               (size_t)lay.seg_stride * isz >= seg_bytes) {
        /* Many segments: batches of whole segments, one run each. */
        size_t per = 1 + (limit - seg_bytes) / ((size_t)lay.seg_stride * isz);
        for (size_t s0 = 0; rc == 0 && s0 < c->lay.M; s0 += per) {
            gr_layout sub = c->lay;
            gr_plan plan;
            sub.M = c->lay.M - s0 < per ? c->lay.M - s0 : per;
            rc = gr_plan_reduce(c->dev, c->op, &c->acc, &sub, &c->ov, &plan);
            if (rc != 0) {
                gr_status_fail(st, "%s", plan.why);
                break;
            }
            const char *p = ptr + s0 * lay.seg_stride * isz;
            size_t nb = ((sub.M - 1) * sub.seg_stride) * isz + seg_bytes;
            rc = gr_input_from_host(c->dev, p, nb, isz, &inp[0], st);
            if (rc == 0) {
                gr_piece one = {inp[0].mem, inp[0].base, sub.L};
                gr_output ob = {out + s0 * rsize, NULL, 0};
                rc = gr_reduce_run(c->dev, c->op, &c->acc, &sub, &plan, &one,
                                   1, NULL, &ob, NULL, st);
            }
            gr_input_release(&inp[0]);
        }
        return rc;
    } else {
        gr_status_fail(st, "input of %zu bytes does not fit the device's "
                       "largest buffer (%llu bytes) in this layout",
                       span_bytes(c->arr, &lay),
                       (unsigned long long)c->dev->max_alloc);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < (reps > 0 ? reps : 1); ++i) {
        rc = gr_reduce_run(c->dev, c->op, &c->acc, &lay, &c->plan, pieces, np,
                           NULL, &o, reps > 0 ? &tm : NULL, st);
        if (ns != NULL) {
            ns[i] = tm.first_ns + tm.second_ns;
        }
    }
    for (int i = 0; i < np; ++i) {
        gr_input_release(&inp[i]);
    }
    return rc;
}

/* A device array's reduction: results stay on the device, in c->out or a
 * new Buffer, which is returned.  reps > 0: timed, waiting each time. */
static PyObject *run_device(call *c, int reps, double *ns)
{
    gr_status st = {0};
    gr_timing tm = {0, 0};
    const size_t rsize = gr_result_size(c->op, &c->acc);
    gr_buffer *in = (gr_buffer *)c->dbuf;
    int rc = 0;
    if (c->out == NULL) {
        int di = ((gr_buffer *)c->dbuf)->dev;
        if ((c->out = gr_buffer_new(di, c->lay.M * rsize)) == NULL) {
            return NULL;
        }
        c->out_off = 0;
    }
    gr_piece piece = {in->mem, c->doff, c->lay.L};
    gr_output o = {NULL, ((gr_buffer *)c->out)->mem, c->out_off};

    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    rc = gr_device_open(c->dev, &st);
    for (int i = 0; rc == 0 && i < (reps > 0 ? reps : 1); ++i) {
        rc = gr_reduce_run(c->dev, c->op, &c->acc, &c->lay, &c->plan, &piece, 1,
                           NULL, &o, reps > 0 ? &tm : NULL, &st);
        if (ns != NULL) {
            ns[i] = tm.first_ns + tm.second_ns;
        }
    }
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    return Py_NewRef(c->out);
}

/* Runs c's plan (see run_nogil) and returns the result array. */
static PyObject *run(call *c, int reps, double *ns)
{
    gr_status st = {0};
    if (c->dbuf != NULL) {
        if (c->need_contig) {
            /* gpured/_array.py copies the view and asks again. */
            return Py_NewRef(Py_NotImplemented);
        }
        return run_device(c, reps, ns);
    }
    PyObject *res = result_array(c);
    if (res == NULL) {
        return NULL;
    }
    const char *ptr = PyArray_DATA(c->arr);
    size_t isz = PyArray_ITEMSIZE(c->arr);
    char *out = PyArray_DATA((PyArrayObject *)res);
    int rc = 0;

    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    rc = run_nogil(c, ptr, isz, out, reps, ns, &st);
    gr_unlock();
    Py_END_ALLOW_THREADS

    if (rc != 0) {
        gr_raise(&st);
        Py_DECREF(res);
        return NULL;
    }
    return res;
}

static PyObject *py_reduce(PyObject *self, PyObject *args, PyObject *kw)
{
    call c;
    PyObject *res = NULL;
    if (prepare(&c, args, kw) == 0) {
        res = run(&c, 0, NULL);
    }
    call_clear(&c);
    return res;
}

static PyObject *plan_dict(const call *c)
{
    return Py_BuildValue(
        "{s:s, s:s, s:i, s:i, s:i, s:O, s:n, s:n, s:i, s:i, s:s, s:s, s:s, "
        "s:O, s:n, s:n, s:n, s:n, s:O}",
        "variant", c->plan.variant, "kernel",
        c->plan.kind == GR_K_GROUP ? "gr_reduce_group" : "gr_reduce_items",
        "wg_size", c->plan.wg, "vw", c->plan.vw, "ilp", c->plan.ilp,
        "contiguous_per_work_item", c->plan.load == 1 ? Py_True : Py_False,
        "groups", (Py_ssize_t)c->plan.parts, "chunk",
        (Py_ssize_t)c->plan.chunk, "passes", c->plan.passes, "wg_size_pass2",
        c->plan.wg2, "accumulator", c->acc.a_cl, "why", c->plan.why,
        "device", c->dev->name, "compensated", c->acc.comp ? Py_True : Py_False,
        "segments", (Py_ssize_t)c->lay.M, "segment_length",
        (Py_ssize_t)c->lay.L, "seg_stride", (Py_ssize_t)c->lay.seg_stride,
        "elem_stride", (Py_ssize_t)c->lay.elem_stride, "tuned",
        c->plan.tuned ? Py_True : Py_False);
}

static PyObject *py_explain(PyObject *self, PyObject *args, PyObject *kw)
{
    call c;
    PyObject *res = NULL;
    if (prepare(&c, args, kw) == 0) {
        res = plan_dict(&c);
    }
    call_clear(&c);
    return res;
}

/* bench_reduce(a, op, rdtype, reps, ...) -> (result, [ns per run], plan) */
static PyObject *py_bench_reduce(PyObject *self, PyObject *args, PyObject *kw)
{
    call c;
    PyObject *res = NULL, *times = NULL, *out = NULL;
    double *ns = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    long reps = 0;
    if (n < 4 || (reps = PyLong_AsLong(PyTuple_GET_ITEM(args, 3))) <= 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "bench_reduce(a, op, rdtype, reps > 0, ...)");
        }
        return NULL;
    }
    PyObject *head = PyTuple_GetSlice(args, 0, 3);
    if (head == NULL) {
        return NULL;
    }
    int prc = prepare(&c, head, kw);
    Py_DECREF(head);
    if (prc == 0 && (ns = calloc((size_t)reps, sizeof *ns)) == NULL) {
        PyErr_NoMemory();
    } else if (prc == 0 && (res = run(&c, (int)reps, ns)) != NULL &&
               (times = PyList_New(reps)) != NULL) {
        for (long i = 0; i < reps; ++i) {
            PyList_SET_ITEM(times, i, PyFloat_FromDouble(ns[i]));
        }
        out = Py_BuildValue("(OON)", res, times, plan_dict(&c));
    }
    Py_XDECREF(res);
    Py_XDECREF(times);
    free(ns);
    call_clear(&c);
    return out;
}

/* copy_bandwidth(nbytes, reps) -> [ns per device-to-device copy] */
static PyObject *py_copy_bandwidth(PyObject *self, PyObject *args)
{
    Py_ssize_t nbytes = 0;
    int reps = 0;
    gr_status st = {0};
    cl_int err = CL_SUCCESS;
    cl_mem a = NULL, b = NULL;
    cl_event ev = NULL;
    double *ns = NULL;
    gr_device *d = gr_current_device();
    PyObject *out = NULL;
    int rc = -1;
    if (d == NULL || !PyArg_ParseTuple(args, "ni", &nbytes, &reps) ||
        nbytes <= 0 || reps <= 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "copy_bandwidth(nbytes>0, reps>0)");
        }
        return NULL;
    }
    if ((ns = calloc((size_t)reps, sizeof *ns)) == NULL) {
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (gr_device_open(d, &st) != 0) {
        goto fail;
    }
    a = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, (size_t)nbytes, NULL, &err);
    GR_CL_CHECK_AS(&st, "clCreateBuffer", err);
    b = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, (size_t)nbytes, NULL, &err);
    GR_CL_CHECK_AS(&st, "clCreateBuffer", err);
    {
        unsigned char zero = 0;
        GR_CL_CHECK(&st, clEnqueueFillBuffer(d->queue, a, &zero, 1, 0,
                                             (size_t)nbytes, 0, NULL, NULL));
    }
    for (int i = 0; i < reps; ++i) {
        cl_ulong t0 = 0, t1 = 0;
        GR_CL_CHECK(&st, clEnqueueCopyBuffer(d->queue, a, b, 0, 0,
                                             (size_t)nbytes, 0, NULL, &ev));
        GR_CL_CHECK(&st, clWaitForEvents(1, &ev));
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0,
                                NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                                NULL);
        ns[i] = (double)(t1 - t0);
        clReleaseEvent(ev);
        ev = NULL;
    }
    rc = 0;
fail:
    if (ev) clReleaseEvent(ev);
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
    } else if ((out = PyList_New(reps)) != NULL) {
        for (int i = 0; i < reps; ++i) {
            PyList_SET_ITEM(out, i, PyFloat_FromDouble(ns[i]));
        }
    }
    free(ns);
    return out;
}

/* variants(op, dtype) -> the variant names the current device can run
 * for that core operator on that input dtype (result dtype as NumPy's). */
static PyObject *py_variants(PyObject *self, PyObject *args)
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
    if ((op = gr_op_of(opname)) < 0 || (t = gr_dtype_of(td, "input")) < 0 ||
        (r = gr_dtype_of(rd, "result")) < 0) {
        goto done;
    }
    if (gr_accum_for(d, (gr_op)op, (gr_dtype)t, (gr_dtype)r, &acc, err,
                     sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    const char *const *v = gr_reduce_variants();
    list = PyList_New(0);
    for (int i = 0; list != NULL && v[i] != NULL; ++i) {
        if (!gr_variant_available(d, (gr_op)op, &acc, v[i], err, sizeof err)) {
            continue;
        }
        gr_list_add(&list, v[i]);
    }
done:
    Py_XDECREF(td);
    Py_XDECREF(rd);
    return list;
}

/* set_tuned([(device, op, dtype, size_class, variant, wg, ilp, vw, groups)])
 * loads gpured.tune()'s table for auto. */
static PyObject *py_set_tuned(PyObject *self, PyObject *arg)
{
    PyObject *seq = PySequence_Fast(arg, "set_tuned takes a list of tuples");
    gr_tuned *tab = NULL;
    Py_ssize_t n;
    if (seq == NULL) {
        return NULL;
    }
    n = PySequence_Fast_GET_SIZE(seq);
    tab = calloc(n > 0 ? (size_t)n : 1, sizeof *tab);
    if (tab == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        const char *dev, *opname, *variant;
        PyArray_Descr *td = NULL;
        int cls, wg, ilp, vw, groups, op, t;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ssO&isiiii",
                              &dev, &opname, PyArray_DescrConverter, &td, &cls,
                              &variant, &wg, &ilp, &vw, &groups) ||
            (op = gr_op_of(opname)) < 0 || (t = gr_dtype_of(td, "input")) < 0) {
            Py_XDECREF(td);
            free(tab);
            Py_DECREF(seq);
            return NULL;
        }
        Py_DECREF(td);
        snprintf(tab[i].device, sizeof tab[i].device, "%s", dev);
        snprintf(tab[i].variant, sizeof tab[i].variant, "%s", variant);
        tab[i].op = (gr_op)op;
        tab[i].t = (gr_dtype)t;
        tab[i].size_class = cls;
        tab[i].wg_size = wg;
        tab[i].ilp = ilp;
        tab[i].vw = vw;
        tab[i].groups = groups;
    }
    gr_tuned_set(tab, (int)n);
    free(tab);
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

static PyObject *py_size_class(PyObject *self, PyObject *arg)
{
    Py_ssize_t nb = PyLong_AsSsize_t(arg);
    if (nb < 0 && PyErr_Occurred()) {
        return NULL;
    }
    return PyLong_FromLong(gr_size_class((size_t)(nb < 0 ? 0 : nb)));
}

/* Append a string to *list; on failure *list is cleared (NULL) with the
 * exception set.  A NULL *list is left alone. */
void gr_list_add(PyObject **list, const char *text)
{
    if (*list == NULL) {
        return;
    }
    PyObject *s = PyUnicode_FromString(text);
    if (s == NULL || PyList_Append(*list, s) != 0) {
        Py_CLEAR(*list);
    }
    Py_XDECREF(s);
}

/* A synthetic device from a dict of capabilities (gpu, compute_units,
 * max_work_group_size, fp64, atomics64, subgroups, wg_collectives,
 * nvidia_ptx, name): what the plan_for functions of every family plan for.
 * caps is borrowed; -1 with an exception set. */
int gr_caps_parse(PyObject *caps, gr_device *dev)
{
    static const struct {
        const char *key;
        size_t off;
        int is_size;
    } fields[] = {
        {"gpu", offsetof(gr_device, is_gpu), 0},
        {"compute_units", offsetof(gr_device, compute_units), 0},
        {"max_work_group_size", offsetof(gr_device, max_wg), 1},
        {"fp64", offsetof(gr_device, fp64), 0},
        {"atomics64", offsetof(gr_device, atomics64), 0},
        {"subgroups", offsetof(gr_device, subgroups), 0},
        {"wg_collectives", offsetof(gr_device, wg_collectives), 0},
        {"nvidia_ptx", offsetof(gr_device, nvidia_ptx), 0},
    };
    memset(dev, 0, sizeof *dev);
    dev->compute_units = 1;
    dev->max_wg = 1024;
    dev->fp64 = 1;
    if (!PyDict_Check(caps)) {
        PyErr_SetString(PyExc_TypeError, "caps must be a dict");
        return -1;
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; ++i) {
        PyObject *v = PyDict_GetItemString(caps, fields[i].key); /* borrowed */
        if (v == NULL) {
            continue;
        }
        long x = PyLong_AsLong(v);
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        char *f = (char *)dev + fields[i].off;
        if (fields[i].is_size) {
            *(size_t *)f = (size_t)x;
        } else if (fields[i].key[0] == 'c') {
            *(cl_uint *)f = (cl_uint)x;
        } else {
            *(int *)f = (int)x;
        }
    }
    PyObject *lm = PyDict_GetItemString(caps, "local_mem_size"); /* borrowed */
    if (lm != NULL) {
        dev->local_mem = PyLong_AsUnsignedLongLong(lm);
        if (PyErr_Occurred()) {
            return -1;
        }
    }
    PyObject *nm = PyDict_GetItemString(caps, "name"); /* borrowed */
    const char *s = nm ? PyUnicode_AsUTF8(nm) : "synthetic";
    if (s == NULL) {
        return -1;
    }
    snprintf(dev->name, sizeof dev->name, "%s", s);
    return 0;
}

/* plan_for(caps, op, dtype, rdtype, M, L, seg_stride, elem_stride,
 *          variant=None, wg_size=0, ...) -> plan dict, for a device that
 * need not exist: caps is a dict of gpu, compute_units, max_work_group_size,
 * fp64, atomics64, subgroups, wg_collectives, nvidia_ptx, name.  The plan is
 * a pure function of these, so tests can ask what it would do anywhere. */
static PyObject *py_plan_for(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"caps", "op", "dtype", "rdtype", "M", "L",
                             "seg_stride", "elem_stride", "variant", "wg_size",
                             "groups", "items", "ilp", "vw", NULL};
    PyObject *caps = NULL;
    const char *opname = NULL;
    PyArray_Descr *td = NULL, *rd = NULL;
    Py_ssize_t M = 0, L = 0, ss = 0, es = 0;
    call c;
    PyObject *res = NULL;
    char err[256];
    int op, t, r, rc;
    gr_device dev;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "O!sO&O&nnnn|ziiiii", kwlist, &PyDict_Type, &caps,
            &opname, PyArray_DescrConverter, &td, PyArray_DescrConverter, &rd,
            &M, &L, &ss, &es, &c.ov.variant, &c.ov.wg_size, &c.ov.groups,
            &c.ov.items, &c.ov.ilp, &c.ov.vw)) {
        goto done;
    }
    if (gr_caps_parse(caps, &dev) != 0) {
        goto done;
    }
    if (M < 1 || L < 1) {
        PyErr_SetString(PyExc_ValueError, "plan_for needs M >= 1 and L >= 1");
        goto done;
    }
    if ((op = gr_op_of(opname)) < 0 || (t = gr_dtype_of(td, "input")) < 0 ||
        (r = gr_dtype_of(rd, "result")) < 0) {
        goto done;
    }
    if (gr_accum_for(&dev, (gr_op)op, (gr_dtype)t, (gr_dtype)r, &c.acc, err,
                     sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    c.op = (gr_op)op;
    c.dev = &dev;
    c.lay.M = (size_t)M;
    c.lay.L = (size_t)L;
    c.lay.seg_stride = ss;
    c.lay.elem_stride = es;
    rc = gr_plan_reduce(&dev, c.op, &c.acc, &c.lay, &c.ov, &c.plan);
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        c.plan.why);
        goto done;
    }
    res = plan_dict(&c);
done:
    Py_XDECREF(td);
    Py_XDECREF(rd);
    return res;
}

static PyMethodDef methods[] = {
    {"devices", py_devices, METH_NOARGS, "List OpenCL devices."},
    {"get_device", py_get_device, METH_NOARGS, "The current device."},
    {"current_index", py_current_index, METH_NOARGS,
     "Position of the current device in devices()."},
    {"set_device", py_set_device, METH_O, "Choose the current device."},
    {"kernel_source", py_kernel_source, METH_O, "OpenCL source of a family."},
    {"cache_dir", py_cache_dir, METH_VARARGS, "Get/set the binary cache dir."},
    {"stats", py_stats, METH_NOARGS, "Program cache counters."},
    {"reduce", (PyCFunction)(void (*)(void))py_reduce,
     METH_VARARGS | METH_KEYWORDS, "Reduce a 2-D array along axis 1."},
    {"explain", (PyCFunction)(void (*)(void))py_explain,
     METH_VARARGS | METH_KEYWORDS, "The plan reduce() would run."},
    {"bench_reduce", (PyCFunction)(void (*)(void))py_bench_reduce,
     METH_VARARGS | METH_KEYWORDS, "Time a reduction with device events."},
    {"copy_bandwidth", py_copy_bandwidth, METH_VARARGS,
     "Time device-to-device copies."},
    {"variants", py_variants, METH_VARARGS,
     "Variants the device runs for (op, dtype, result dtype)."},
    {"set_tuned", py_set_tuned, METH_O, "Load gpured.tune()'s table."},
    {"plan_for", (PyCFunction)(void (*)(void))py_plan_for,
     METH_VARARGS | METH_KEYWORDS, "The plan for synthetic device caps."},
    {"size_class", py_size_class, METH_O, "Size class of a byte count."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "gpured._core",
    "C core of gpured: OpenCL runtime, program cache, plans and kernels.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) {
        return NULL;
    }
    gr_OpenCLError = PyErr_NewExceptionWithDoc(
        "gpured.OpenCLError",
        "An OpenCL call failed; attributes: call, code, name, build_log.",
        PyExc_RuntimeError, NULL);
    gr_VariantUnavailable = PyErr_NewExceptionWithDoc(
        "gpured.VariantUnavailable",
        "The requested variant cannot run on this device (see the message).",
        PyExc_ValueError, NULL);
    if (gr_OpenCLError == NULL || gr_VariantUnavailable == NULL ||
        PyType_Ready(&gr_BufferType) < 0 ||
        PyModule_AddObjectRef(m, "Buffer", (PyObject *)&gr_BufferType) < 0 ||
        PyModule_AddObjectRef(m, "OpenCLError", gr_OpenCLError) < 0 ||
        PyModule_AddObjectRef(m, "VariantUnavailable", gr_VariantUnavailable) <
            0 ||
        PyModule_AddFunctions(m, gr_scan_methods) != 0 ||
        PyModule_AddFunctions(m, gr_bykey_methods) != 0 ||
        PyModule_AddFunctions(m, gr_array_methods) != 0 ||
        gr_runtime_init() != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
