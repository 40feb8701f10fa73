/*
 * gpured — device buffers: the C half of gpured.Array.
 *
 * A _core.Buffer owns one cl_mem on one device.  Everything about shape,
 * dtype, strides and views lives in Python (gpured/_array.py); here are
 * only the byte-level operations the Python side needs:
 *
 *   buffer_alloc(nbytes)                       -> Buffer (current device)
 *   buffer_write(buf, byte_off, ndarray)       host -> device (blocking)
 *   buffer_read(buf, byte_off, ndarray)        device -> host (blocking)
 *   buffer_fill(buf, byte_off, nbytes, bytes)  a repeated byte pattern
 *   buffer_copy(src, soff, dst, doff, nbytes)  device -> device
 *   device_copy(src, sdtype, soff, shape, sstrides,
 *               dst, ddtype, doff, dstrides, div=0.0)
 *        strided, casting copy (offsets and strides in elements):
 *        dst[i] = (ddtype)src[i], or (ddtype)(src[i] / div) with div != 0
 *   finish()                                   wait for the current queue
 *
 * Buffers are released when collected or at once by release(); a released
 * buffer raises ValueError wherever it is used.  Commands already enqueued
 * on a released buffer still complete: OpenCL frees the memory only after
 * them.  Large host -> device writes on GPUs stream through pinned staging
 * buffers (stream.c).
 */
#include "gpured.h"

#include <numpy/arrayobject.h>
#include <structmember.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small buffers (reduction results) are recycled: creating and releasing
 * an OpenCL buffer costs microseconds per call on GPU drivers.  A recycled
 * buffer may still be the target of enqueued commands; the next user's
 * commands go to the same in-order queue, so they run after them. */
#define SMALL_BYTES 256
#define SMALL_KEEP 64
#define MAX_DEVS 64

static cl_mem small_pool[MAX_DEVS][SMALL_KEEP];
static int small_n[MAX_DEVS];

static void buffer_drop(gr_buffer *b)
{
    if (b->mem == NULL) {
        return;
    }
    if (b->nbytes <= SMALL_BYTES && b->dev < MAX_DEVS &&
        small_n[b->dev] < SMALL_KEEP) {
        small_pool[b->dev][small_n[b->dev]++] = b->mem;
    } else {
        clReleaseMemObject(b->mem);
    }
    b->mem = NULL;
}

static void buffer_dealloc(gr_buffer *b)
{
    buffer_drop(b);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static PyObject *buffer_release(gr_buffer *b, PyObject *noargs)
{
    buffer_drop(b);
    Py_RETURN_NONE;
}

static PyObject *buffer_get_released(gr_buffer *b, void *closure)
{
    return PyBool_FromLong(b->mem == NULL);
}

static PyObject *buffer_repr(gr_buffer *b)
{
    gr_device *d = gr_device_get(b->dev);
    return PyUnicode_FromFormat("<gpured._core.Buffer %zd bytes on %s%s>",
                                b->nbytes, d ? d->name : "?",
                                b->mem ? "" : " (released)");
}

static PyMethodDef buffer_methods[] = {
    {"release", (PyCFunction)buffer_release, METH_NOARGS,
     "Release the device memory now (idempotent)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef buffer_members[] = {
    {"nbytes", T_PYSSIZET, offsetof(gr_buffer, nbytes), READONLY,
     "Size in bytes."},
    {"device", T_INT, offsetof(gr_buffer, dev), READONLY,
     "Index of the device (position in gpured.devices())."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef buffer_getset[] = {
    {"released", (getter)buffer_get_released, NULL,
     "Whether release() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject gr_BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpured._core.Buffer",
    .tp_basicsize = sizeof(gr_buffer),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_repr = (reprfunc)buffer_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One OpenCL buffer on one device (see gpured.Array).",
    .tp_methods = buffer_methods,
    .tp_members = buffer_members,
    .tp_getset = buffer_getset,
};

/* The live buffer of obj and its device; NULL with an exception set. */
gr_buffer *gr_buffer_check(PyObject *obj, gr_device **dev)
{
    if (!PyObject_TypeCheck(obj, &gr_BufferType)) {
        PyErr_Format(PyExc_TypeError, "expected a gpured._core.Buffer, got %s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    gr_buffer *b = (gr_buffer *)obj;
    if (b->mem == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the device array has been released");
        return NULL;
    }
    if (dev != NULL) {
        *dev = gr_device_get(b->dev);
    }
    return b;
}

/* A new Buffer of nbytes on device index di (GIL held). */
PyObject *gr_buffer_new(int di, size_t nbytes)
{
    const size_t requested = nbytes;
    gr_status st = {0};
    gr_device *d = gr_device_get(di);
    cl_int err = CL_SUCCESS;
    cl_mem mem = NULL;
    const int small = nbytes <= SMALL_BYTES && di < MAX_DEVS;
    if (small && small_n[di] > 0) {
        mem = small_pool[di][--small_n[di]];
        goto wrap;
    }
    if (small) {
        nbytes = SMALL_BYTES; /* one size: any small buffer can be reused */
    }
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (gr_device_open(d, &st) == 0) {
        mem = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE,
                             nbytes ? nbytes : 1, NULL, &err);
        if (err != CL_SUCCESS) {
            st.call = "clCreateBuffer";
            st.err = err;
        }
    }
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (mem == NULL) {
        gr_raise(&st);
        return NULL;
    }
wrap:;
    gr_buffer *b = PyObject_New(gr_buffer, &gr_BufferType);
    if (b == NULL) {
        clReleaseMemObject(mem);
        return NULL;
    }
    b->mem = mem;
    b->dev = di;
    b->nbytes = (Py_ssize_t)requested;
    return (PyObject *)b;
}

/* buffer_alloc(nbytes, device=-1): -1 is the current device. */
static PyObject *py_buffer_alloc(PyObject *self, PyObject *args)
{
    Py_ssize_t n = 0;
    int di = -1;
    if (!PyArg_ParseTuple(args, "n|i", &n, &di)) {
        return NULL;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "negative buffer size");
        return NULL;
    }
    if (di < 0) {
        if (gr_current_device() == NULL) {
            return NULL;
        }
        di = gr_current_index();
    } else if (di >= gr_device_count()) {
        PyErr_SetString(PyExc_ValueError, "no such device");
        return NULL;
    }
    return gr_buffer_new(di, (size_t)n);
}

/* Checks that [off, off + n) lies inside b. */
static int in_range(const gr_buffer *b, Py_ssize_t off, size_t n)
{
    const size_t cap = (size_t)b->nbytes;
    if (off < 0 || (size_t)off > cap || n > cap - (size_t)off) {
        PyErr_Format(PyExc_ValueError,
                     "%zu bytes at offset %zd do not fit a buffer of %zu",
                     n, off, cap);
        return 0;
    }
    return 1;
}

/* One device operation of this file: the arguments of the enqueue, run by
 * locked() with the GIL released, gr_lock held and the device open. */
typedef struct {
    enum { OP_WRITE, OP_READ, OP_FILL, OP_COPY, OP_FINISH } kind;
    cl_mem a, b;          /* target (and source of a copy)                 */
    size_t off, off_b, n;
    void *ptr;            /* host bytes, or the fill pattern               */
    size_t plen;
} dev_op;

static int dev_op_run(gr_device *d, const dev_op *o, gr_status *st)
{
    switch (o->kind) {
    case OP_WRITE:
        return gr_stream_write(d, o->a, o->off, o->ptr, o->n, st);
    case OP_READ:
        GR_CL_CHECK(st, clEnqueueReadBuffer(d->queue, o->a, CL_TRUE, o->off,
                                            o->n, o->ptr, 0, NULL, NULL));
        return 0;
    case OP_FILL:
        GR_CL_CHECK(st, clEnqueueFillBuffer(d->queue, o->a, o->ptr, o->plen,
                                            o->off, o->n, 0, NULL, NULL));
        return 0;
    case OP_COPY:
        GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, o->b, o->a, o->off_b,
                                            o->off, o->n, 0, NULL, NULL));
        return 0;
    case OP_FINISH:
        GR_CL_CHECK(st, clFinish(d->queue));
        return 0;
    }
fail:
    return -1;
}

/* Runs o on d without the GIL; None, or NULL with the exception set. */
static PyObject *locked(gr_device *d, const dev_op *o)
{
    gr_status st = {0};
    int rc = -1;
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    if (gr_device_open(d, &st) == 0) {
        rc = dev_op_run(d, o, &st);
    }
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* buffer_write(buf, byte_off, arr) / buffer_read(buf, byte_off, arr):
 * arr is C-contiguous (and writeable, for reads). */
static PyObject *transfer(PyObject *args, int write)
{
    PyObject *bo = NULL;
    Py_ssize_t off = 0;
    PyArrayObject *arr = NULL;
    gr_device *d = NULL;
    gr_buffer *b;
    if (!PyArg_ParseTuple(args, "OnO!", &bo, &off, &PyArray_Type, &arr) ||
        (b = gr_buffer_check(bo, &d)) == NULL) {
        return NULL;
    }
    if (!PyArray_IS_C_CONTIGUOUS(arr) ||
        (!write && !PyArray_ISWRITEABLE(arr))) {
        PyErr_SetString(PyExc_ValueError,
                        "transfers need a C-contiguous (writeable) array");
        return NULL;
    }
    size_t n = (size_t)PyArray_NBYTES(arr);
    char *ptr = PyArray_DATA(arr);
    if (!in_range(b, off, n)) {
        return NULL;
    }
    if (n == 0) {
        Py_RETURN_NONE;
    }
    dev_op o = {write ? OP_WRITE : OP_READ, b->mem, NULL, (size_t)off, 0, n,
                ptr, 0};
    return locked(d, &o);
}

static PyObject *py_buffer_write(PyObject *self, PyObject *args)
{
    return transfer(args, 1);
}

static PyObject *py_buffer_read(PyObject *self, PyObject *args)
{
    return transfer(args, 0);
}

/* buffer_fill(buf, byte_off, nbytes, pattern) */
static PyObject *py_buffer_fill(PyObject *self, PyObject *args)
{
    PyObject *bo = NULL;
    Py_ssize_t off = 0, n = 0, plen = 0;
    const char *pat = NULL;
    gr_device *d = NULL;
    gr_buffer *b;
    if (!PyArg_ParseTuple(args, "Onny#", &bo, &off, &n, &pat, &plen) ||
        (b = gr_buffer_check(bo, &d)) == NULL) {
        return NULL;
    }
    if (n < 0 || !in_range(b, off, (size_t)n)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "negative size");
        }
        return NULL;
    }
    if (plen < 1 || (plen & (plen - 1)) != 0 || plen > 128 || n % plen != 0 ||
        off % plen != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "fill pattern: 1-128 bytes, a power of two dividing "
                        "the offset and the size");
        return NULL;
    }
    if (n == 0) {
        Py_RETURN_NONE;
    }
    dev_op o = {OP_FILL, b->mem, NULL, (size_t)off, 0, (size_t)n,
                (void *)pat, (size_t)plen};
    return locked(d, &o);
}

int gr_same_device(const gr_device *a, const gr_device *b)
{
    if (a == b) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "arrays on two devices (%s and %s): move one first", a->name,
                 b->name);
    return -1;
}

/* Both buffers live and on one device; NULL with ValueError otherwise. */
static gr_device *same_device(PyObject *a, PyObject *b, gr_buffer **ba,
                              gr_buffer **bb)
{
    gr_device *da = NULL, *db = NULL;
    if ((*ba = gr_buffer_check(a, &da)) == NULL ||
        (*bb = gr_buffer_check(b, &db)) == NULL) {
        return NULL;
    }
    return gr_same_device(da, db) == 0 ? da : NULL;
}

/* buffer_copy(src, soff, dst, doff, nbytes) */
static PyObject *py_buffer_copy(PyObject *self, PyObject *args)
{
    PyObject *so = NULL, *dobj = NULL;
    Py_ssize_t soff = 0, doff = 0, n = 0;
    gr_buffer *sb, *db;
    gr_device *d;
    if (!PyArg_ParseTuple(args, "OnOnn", &so, &soff, &dobj, &doff, &n) ||
        (d = same_device(so, dobj, &sb, &db)) == NULL) {
        return NULL;
    }
    if (n < 0 || !in_range(sb, soff, (size_t)n) ||
        !in_range(db, doff, (size_t)n)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "negative size");
        }
        return NULL;
    }
    if (n == 0) {
        Py_RETURN_NONE;
    }
    dev_op o = {OP_COPY, db->mem, sb->mem, (size_t)doff, (size_t)soff,
                (size_t)n, NULL, 0};
    return locked(d, &o);
}

/* ------------------------------------------------------ strided copies */

#define MAX_DIMS 32

/* Reads a sequence of ints into v[0..n); the number read, -1 on error. */
static int int_seq(PyObject *o, long long *v, int max)
{
    PyObject *seq = PySequence_Fast(o, "shape and strides are sequences");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > max) {
        PyErr_Format(PyExc_ValueError, "at most %d dimensions", max);
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        v[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return (int)n;
}

static cl_kernel copy_kernel(gr_device *d, gr_dtype s, gr_dtype t, int div,
                             gr_status *st)
{
    char defs[512];
    const int fp64 = d->fp64;
    snprintf(defs, sizeof defs,
             "#define GR_NEED_FP64 %d\n#define GR_T uchar\n#define GR_A uint\n"
             "#define GR_R uint\n#define GR_AM int\n#define GR_A_SIZE 4\n"
             "#define GR_X_SIZE 4\n#define GR_A_FLOAT 0\n#define GR_OP 0\n"
             "#define GR_CVT 0\n#define GR_COMP 0\n#define GR_A_MINV 0\n"
             "#define GR_A_MAXV 0\n#define GR_VW 1\n#define GR_WG 256\n"
             "#define GR_ILP 1\n#define GR_SG 0\n#define GR_ATOMIC 0\n"
             "#define GR_S %s\n#define GR_D %s\n#define GR_S_BOOL %d\n"
             "#define GR_D_BOOL %d\n#define GR_F %s\n#define GR_DIV %d\n",
             fp64 && (s == GR_FLOAT64 || t == GR_FLOAT64 || div),
             gr_dtypes[s].cl, gr_dtypes[t].cl, s == GR_BOOL, t == GR_BOOL,
             fp64 ? "double" : "float", div);
    return gr_kernel_get(d, "copy", defs, "", "gr_copy", st);
}

/* Enqueue the copy of an nd-element geometry (shape, source strides,
 * destination strides; n elements in all). */
static int copy_nd(gr_device *d, cl_mem src, gr_dtype s, size_t soff,
                   cl_mem dst, gr_dtype t, size_t doff, int nd,
                   const long long *geom, unsigned long long n, double div,
                   gr_status *st)
{
    cl_int err = CL_SUCCESS;
    cl_mem gbuf = NULL;
    int rc = -1;
    cl_kernel k = copy_kernel(d, s, t, div != 0.0, st);
    if (k == NULL) {
        return -1;
    }
    gbuf = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          sizeof(cl_long) * 3 * (nd ? nd : 1), (void *)geom,
                          &err);
    GR_CL_CHECK_AS(st, "clCreateBuffer", err);
    cl_ulong so64 = soff, do64 = doff, n64 = n;
    cl_uint und = (cl_uint)nd;
    cl_double dv = div;
    cl_float fv = (cl_float)div;
    const size_t local = 256;
    size_t global = (size_t)((n + local - 1) / local * local);
    GR_CL_CHECK(st, clSetKernelArg(k, 0, sizeof src, &src));
    GR_CL_CHECK(st, clSetKernelArg(k, 1, sizeof so64, &so64));
    GR_CL_CHECK(st, clSetKernelArg(k, 2, sizeof dst, &dst));
    GR_CL_CHECK(st, clSetKernelArg(k, 3, sizeof do64, &do64));
    GR_CL_CHECK(st, clSetKernelArg(k, 4, sizeof gbuf, &gbuf));
    GR_CL_CHECK(st, clSetKernelArg(k, 5, sizeof und, &und));
    GR_CL_CHECK(st, clSetKernelArg(k, 6, sizeof n64, &n64));
    if (d->fp64) {
        GR_CL_CHECK(st, clSetKernelArg(k, 7, sizeof dv, &dv));
    } else {
        GR_CL_CHECK(st, clSetKernelArg(k, 7, sizeof fv, &fv));
    }
    GR_CL_CHECK(st, clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global,
                                           &local, 0, NULL, NULL));
    rc = 0;
fail:
    if (gbuf != NULL) {
        clReleaseMemObject(gbuf); /* freed once the kernel is done */
    }
    return rc;
}

int gr_copy_enqueue(gr_device *d, cl_mem src, gr_dtype s, size_t soff,
                    cl_mem dst, gr_dtype t, size_t doff, size_t n, double div,
                    gr_status *st)
{
    const long long geom[3] = {(long long)n, 1, 1};
    return copy_nd(d, src, s, soff, dst, t, doff, 1, geom, n, div, st);
}

static PyObject *py_device_copy(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "sdtype", "soff", "shape", "sstrides",
                             "dst", "ddtype", "doff", "dstrides", "div", NULL};
    PyObject *so, *dobj, *shape_o, *ss_o, *ds_o;
    PyArray_Descr *sd = NULL, *dd = NULL;
    Py_ssize_t soff = 0, doff = 0;
    double div = 0.0;
    long long geom[3 * MAX_DIMS];
    gr_buffer *sb, *db;
    gr_device *d;
    gr_status st = {0};
    PyObject *res = NULL;
    int st_, dt_, nd, rc = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&nOOOO&nO|d", kwlist, &so,
                                     PyArray_DescrConverter, &sd, &soff,
                                     &shape_o, &ss_o, &dobj,
                                     PyArray_DescrConverter, &dd, &doff, &ds_o,
                                     &div) ||
        (d = same_device(so, dobj, &sb, &db)) == NULL ||
        (st_ = gr_dtype_of(sd, "source")) < 0 ||
        (dt_ = gr_dtype_of(dd, "destination")) < 0 ||
        (nd = int_seq(shape_o, geom, MAX_DIMS)) < 0 ||
        int_seq(ss_o, geom + nd, nd) != nd ||
        int_seq(ds_o, geom + 2 * nd, nd) != nd) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "shape and strides must have one length");
        }
        goto done;
    }
    unsigned long long n = 1;
    for (int i = 0; i < nd; ++i) {
        n *= (unsigned long long)geom[i];
    }
    if (n == 0) {
        res = Py_NewRef(Py_None);
        goto done;
    }
    /* Bounds: every element either side lies inside its buffer. */
    {
        long long lo[2] = {soff, doff}, hi[2] = {soff, doff};
        for (int i = 0; i < nd; ++i) {
            for (int k = 0; k < 2; ++k) {
                long long ext = (geom[i] - 1) * geom[(k + 1) * nd + i];
                if (ext < 0) {
                    lo[k] += ext;
                } else {
                    hi[k] += ext;
                }
            }
        }
        if (lo[0] < 0 || lo[1] < 0 ||
            (unsigned long long)(hi[0] + 1) * gr_dtypes[st_].size > (unsigned long long)sb->nbytes ||
            (unsigned long long)(hi[1] + 1) * gr_dtypes[dt_].size > (unsigned long long)db->nbytes) {
            PyErr_SetString(PyExc_ValueError,
                            "device copy outside its buffers");
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    rc = gr_device_open(d, &st) == 0
             ? copy_nd(d, sb->mem, (gr_dtype)st_, (size_t)soff, db->mem,
                       (gr_dtype)dt_, (size_t)doff, nd, geom, n, div, &st)
             : -1;
    gr_unlock();
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
    } else {
        res = Py_NewRef(Py_None);
    }
done:
    Py_XDECREF(sd);
    Py_XDECREF(dd);
    return res;
}

static PyObject *py_finish(PyObject *self, PyObject *noargs)
{
    gr_device *d = gr_current_device();
    dev_op o = {OP_FINISH, NULL, NULL, 0, 0, 0, NULL, 0};
    return d ? locked(d, &o) : NULL;
}

/* set_staging(chunk_bytes, buffers, min_bytes, force, threads) */
static PyObject *py_set_staging(PyObject *self, PyObject *args)
{
    Py_ssize_t chunk, min_bytes;
    int nbuf, force, threads;
    if (!PyArg_ParseTuple(args, "ninpi", &chunk, &nbuf, &min_bytes, &force,
                          &threads)) {
        return NULL;
    }
    if (chunk < 4096 || nbuf < 2 || nbuf > 16 || min_bytes < 0 ||
        threads < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "staging: chunk_bytes >= 4096, 2 <= buffers <= 16, "
                        "min_bytes >= 0, threads >= 0");
        return NULL;
    }
    gr_stream_cfg c = {(size_t)chunk, nbuf, (size_t)min_bytes, force, threads};
    Py_BEGIN_ALLOW_THREADS
    gr_lock();
    gr_stream_set_cfg(&c);
    gr_unlock();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_staging(PyObject *self, PyObject *noargs)
{
    gr_stream_cfg c;
    long streams, chunks;
    gr_stream_get_cfg(&c, &streams, &chunks);
    return Py_BuildValue("{s:n, s:i, s:n, s:O, s:i, s:l, s:l}", "chunk_bytes",
                         (Py_ssize_t)c.chunk, "buffers", c.nbuf, "min_bytes",
                         (Py_ssize_t)c.min_bytes, "force",
                         c.force ? Py_True : Py_False, "threads", c.threads,
                         "streams", streams, "chunks", chunks);
}

PyMethodDef gr_array_methods[] = {
    {"set_staging", py_set_staging, METH_VARARGS,
     "set_staging(chunk_bytes, buffers, min_bytes, force, threads)."},
    {"staging", py_staging, METH_NOARGS,
     "Staging settings and counters (streams, chunks)."},
    {"buffer_alloc", py_buffer_alloc, METH_VARARGS,
     "buffer_alloc(nbytes, device=-1): a new device buffer."},
    {"buffer_write", py_buffer_write, METH_VARARGS,
     "buffer_write(buf, byte_off, array): host -> device."},
    {"buffer_read", py_buffer_read, METH_VARARGS,
     "buffer_read(buf, byte_off, array): device -> host."},
    {"buffer_fill", py_buffer_fill, METH_VARARGS,
     "buffer_fill(buf, byte_off, nbytes, pattern)."},
    {"buffer_copy", py_buffer_copy, METH_VARARGS,
     "buffer_copy(src, soff, dst, doff, nbytes): device -> device."},
    {"device_copy", (PyCFunction)(void (*)(void))py_device_copy,
     METH_VARARGS | METH_KEYWORDS,
     "Strided, casting element copy between device buffers."},
    {"finish", py_finish, METH_NOARGS, "Wait for the current device's queue."},
    {NULL, NULL, 0, NULL},
};
