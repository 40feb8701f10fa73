/*
 * gpured — the two Python types of device memory, and the dtype table's
 * NumPy side.
 *
 *   _core.Buffer     one pooled device block (pool.c) on one device: the
 *                    storage that every view of an Array shares.
 *                    release() drops the Buffer's reference, so every view
 *                    is released at once; work already enqueued on the
 *                    block holds references of its own (taken by api.c
 *                    while parsing, with the GIL), so the block goes back
 *                    to the pool only after that work is enqueued -- and
 *                    the device's in-order queue runs it before anything
 *                    enqueued by the block's next user.
 *   _core.ArrayBase  a Buffer plus dtype, shape, byte strides and byte
 *                    offset, the C half of gpured.Array (gpured/_array.py
 *                    adds the methods).  api.c reads these fields directly
 *                    and creates results of the registered subclass
 *                    without running Python code.
 */
#include "gpured.h"
#include "array.h"

#include <numpy/arrayobject.h>
#include <structmember.h>
#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------------- dtypes */

static const int npy_types[GR_NDTYPES] = {
    NPY_BOOL,  NPY_INT8,   NPY_UINT8, NPY_INT16,   NPY_UINT16, NPY_INT32,
    NPY_UINT32, NPY_INT64, NPY_UINT64, NPY_FLOAT32, NPY_FLOAT64, NPY_HALF,
    -1 /* bfloat16: ml_dtypes registers it at run time (bf16_descr) */};

/* ml_dtypes.bfloat16's descriptor (new reference), or NULL with
 * ImportError naming the extra when ml_dtypes is absent. */
static PyArray_Descr *bf16_descr(void)
{
    PyObject *m = PyImport_ImportModule("ml_dtypes");
    if (m == NULL) {
        PyErr_SetString(PyExc_ImportError, "bfloat16 needs the ml_dtypes "
                        "package: pip install gpured[ml]");
        return NULL;
    }
    PyObject *ty = PyObject_GetAttrString(m, "bfloat16");
    Py_DECREF(m);
    PyArray_Descr *d = NULL;
    if (ty != NULL && !PyArray_DescrConverter(ty, &d)) {
        d = NULL;
    }
    Py_XDECREF(ty);
    return d;
}

/* gpured's type of descr, the storage-only halves included; -1 without
 * an exception when it has none. */
static int dtype_lookup(PyArray_Descr *descr)
{
    static const struct {
        char kind;
        int size;
        gr_dtype t;
    } table[] = {
        {'b', 1, GR_BOOL},   {'i', 1, GR_INT8},    {'u', 1, GR_UINT8},
        {'i', 2, GR_INT16},  {'u', 2, GR_UINT16},  {'i', 4, GR_INT32},
        {'u', 4, GR_UINT32}, {'i', 8, GR_INT64},   {'u', 8, GR_UINT64},
        {'f', 4, GR_FLOAT32}, {'f', 8, GR_FLOAT64}, {'f', 2, GR_FLOAT16},
    };
    if (PyDataType_HASFIELDS(descr)) {
        return -1;
    }
    for (size_t i = 0; i < sizeof table / sizeof *table; ++i) {
        if (descr->kind == table[i].kind &&
            PyDataType_ELSIZE(descr) == table[i].size) {
            return table[i].t;
        }
    }
    /* ml_dtypes' bfloat16: kind 'V', 2 bytes, its own scalar type */
    const char *tn = descr->typeobj ? descr->typeobj->tp_name : "";
    const char *dot = strrchr(tn, '.');
    if (PyDataType_ELSIZE(descr) == 2 &&
        strcmp(dot ? dot + 1 : tn, "bfloat16") == 0) {
        return GR_BFLOAT16;
    }
    return -1;
}

static int dtype_error(PyArray_Descr *descr, const char *what)
{
    PyObject *name = PyObject_Str((PyObject *)descr);
    PyErr_Format(PyExc_TypeError,
                 "gpured does not support %s dtype %S (supported: bool, "
                 "int8-int64, uint8-uint64, float16, bfloat16, float32, "
                 "float64; complex64 and complex128 through gpured's Python "
                 "functions)",
                 what, name ? name : Py_None);
    Py_XDECREF(name);
    return -1;
}

/* Types the kernels compute in: float16/bfloat16 are refused here (the
 * Python face widens them first: gpured/_half.py). */
int gr_dtype_of(PyArray_Descr *descr, const char *what)
{
    const int t = dtype_lookup(descr);
    if (t < 0) {
        return dtype_error(descr, what);
    }
    if (GR_IS_HALF(t)) {
        PyErr_Format(PyExc_TypeError, "gpured: %s dtype %s is computed "
                     "through float32 by the public functions (internal "
                     "call without widening)", what, gr_dtypes[t].name);
        return -1;
    }
    return t;
}

/* Types an Array may hold: gr_dtype_of's and the halves. */
int gr_dtype_of_store(PyArray_Descr *descr, const char *what)
{
    const int t = dtype_lookup(descr);
    return t < 0 ? dtype_error(descr, what) : t;
}

/* What an Array may hold: gr_dtype_of_store's types, and complex64 /
 * complex128 (storage: gpured/_complex.py computes on their real views). */
int gr_storage_ok(PyArray_Descr *descr, const char *what)
{
    if (descr->kind == 'c' && !PyDataType_HASFIELDS(descr) &&
        (PyDataType_ELSIZE(descr) == 8 || PyDataType_ELSIZE(descr) == 16)) {
        return 0;
    }
    return gr_dtype_of_store(descr, what) < 0 ? -1 : 0;
}

PyArray_Descr *gr_descr_of(gr_dtype t)
{
    if (t == GR_BFLOAT16) {
        return bf16_descr();
    }
    return PyArray_DescrFromType(npy_types[t]);
}

/* ----------------------------------------------------------- Buffer */

static void buffer_drop(gr_buffer *b)
{
    gr_block *blk = b->blk;
    b->blk = NULL;
    gr_block_put(blk);
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
    return PyBool_FromLong(b->blk == NULL);
}

static PyObject *buffer_get_int_ptr(gr_buffer *b, void *closure)
{
    if (b->blk == NULL) {
        PyErr_SetString(PyExc_ValueError, "the device array has been released");
        return NULL;
    }
    return PyLong_FromVoidPtr((void *)b->blk->mem);
}

static PyObject *buffer_repr(gr_buffer *b)
{
    gr_device *d = gr_device_get(b->dev);
    return PyUnicode_FromFormat("<gpured._core.Buffer %zd bytes on %s%s>",
                                b->nbytes, d ? d->name : "?",
                                b->blk ? "" : " (released)");
}

static PyMethodDef buffer_methods[] = {
    {"release", (PyCFunction)buffer_release, METH_NOARGS,
     "Release the device memory now (idempotent): back to the pool once "
     "the work already enqueued on it is."},
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
    {"int_ptr", (getter)buffer_get_int_ptr, NULL,
     "The cl_mem handle as an integer (PyOpenCL's int_ptr).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject gr_BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpured._core.Buffer",
    .tp_basicsize = sizeof(gr_buffer),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_repr = (reprfunc)buffer_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One device memory block on one device (see gpured.Array).",
    .tp_methods = buffer_methods,
    .tp_members = buffer_members,
    .tp_getset = buffer_getset,
};

gr_buffer *gr_buffer_check(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &gr_BufferType)) {
        PyErr_Format(PyExc_TypeError, "expected a gpured._core.Buffer, got %s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    gr_buffer *b = (gr_buffer *)obj;
    if (b->blk == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the device array has been released");
        return NULL;
    }
    return b;
}

/* A Buffer owning blk (the reference is stolen). */
PyObject *gr_buffer_wrap(gr_block *blk, size_t nbytes)
{
    gr_buffer *b = PyObject_New(gr_buffer, &gr_BufferType);
    if (b == NULL) {
        gr_block_put(blk);
        return NULL;
    }
    b->blk = blk;
    b->dev = blk->dev;
    b->nbytes = (Py_ssize_t)nbytes;
    return (PyObject *)b;
}

PyObject *gr_buffer_new(int di, size_t nbytes)
{
    gr_status st = {0};
    gr_block *blk = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (gr_device_ready(di, &st) == 0) {
        blk = gr_block_get(gr_device_get(di), nbytes ? nbytes : 1, &st);
    }
    Py_END_ALLOW_THREADS
    if (blk == NULL) {
        gr_raise(&st);
        return NULL;
    }
    return gr_buffer_wrap(blk, nbytes);
}

/* -------------------------------------------------------- ArrayBase */

/* The registered Python subclass (gpured.Array) results are made of. */
static PyTypeObject *array_class = NULL;

void gr_array_set_class(PyTypeObject *cls)
{
    Py_XINCREF(cls);
    Py_XSETREF(array_class, cls);
}

static void array_dealloc(gr_array *a)
{
    PyObject_GC_UnTrack(a);
    Py_CLEAR(a->buf);
    Py_CLEAR(a->descr);
    Py_CLEAR(a->dict);
    Py_TYPE(a)->tp_free((PyObject *)a);
}

static int array_traverse(gr_array *a, visitproc visit, void *arg)
{
    Py_VISIT(a->dict);
    return 0;
}

static int array_clear(gr_array *a)
{
    Py_CLEAR(a->dict);
    return 0;
}

/* Fill a's geometry; strides NULL: C-contiguous.  0 or -1 (exception). */
static int array_fill(gr_array *a, PyObject *buf, PyArray_Descr *descr,
                      int nd, const npy_intp *shape, const npy_intp *strides,
                      npy_intp offset)
{
    if (nd < 0 || nd > GR_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "at most %d dimensions", GR_MAXDIMS);
        return -1;
    }
    Py_INCREF(buf);
    Py_XSETREF(a->buf, buf);
    Py_INCREF(descr);
    Py_XSETREF(a->descr, descr);
    a->nd = nd;
    a->offset = offset;
    npy_intp acc = PyDataType_ELSIZE(descr);
    for (int i = nd - 1; i >= 0; --i) {
        a->shape[i] = shape[i];
        a->strides[i] = strides ? strides[i] : acc;
        acc *= shape[i] > 0 ? shape[i] : 1;
    }
    return 0;
}

PyObject *gr_array_new(PyObject *buf, PyArray_Descr *descr, int nd,
                       const npy_intp *shape, const npy_intp *strides,
                       npy_intp offset)
{
    PyTypeObject *tp = array_class ? array_class : &gr_ArrayType;
    gr_array *a = (gr_array *)tp->tp_alloc(tp, 0);
    if (a == NULL) {
        return NULL;
    }
    if (array_fill(a, buf, descr, nd, shape, strides, offset) != 0) {
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

static int int_seq(PyObject *o, npy_intp *v, int *n, const char *what)
{
    PyObject *seq = PySequence_Fast(o, what);
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > GR_MAXDIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "at most %d dimensions", GR_MAXDIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; ++i) {
        v[i] = PyArray_PyIntAsIntp(PySequence_Fast_GET_ITEM(seq, i));
        if (v[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

/* Array(buf, shape, dtype, strides=None, offset=0) */
static int array_init(gr_array *a, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"buf", "shape", "dtype", "strides", "offset",
                             NULL};
    PyObject *buf = NULL, *shape_o = NULL, *strides_o = Py_None;
    PyArray_Descr *descr = NULL;
    Py_ssize_t offset = 0;
    npy_intp shape[GR_MAXDIMS], strides[GR_MAXDIMS];
    int nd = 0, ns = 0, rc = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OO&|On", kwlist,
                                     &gr_BufferType, &buf, &shape_o,
                                     PyArray_DescrConverter, &descr,
                                     &strides_o, &offset)) {
        return -1;
    }
    if (PyLong_Check(shape_o)) {
        shape[0] = PyLong_AsSsize_t(shape_o);
        nd = 1;
        if (shape[0] == -1 && PyErr_Occurred()) {
            goto done;
        }
    } else if (int_seq(shape_o, shape, &nd, "shape must be a sequence") != 0) {
        goto done;
    }
    if (strides_o != Py_None &&
        (int_seq(strides_o, strides, &ns, "strides must be a sequence") != 0 ||
         ns != nd)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "strides and shape differ in "
                            "length");
        }
        goto done;
    }
    if (gr_storage_ok(descr, "array") != 0) {
        goto done;
    }
    {
        PyArray_Descr *native = PyArray_DescrNewByteorder(descr, NPY_NATIVE);
        if (native == NULL) {
            goto done;
        }
        rc = array_fill(a, buf, native, nd, shape,
                        strides_o == Py_None ? NULL : strides, offset);
        Py_DECREF(native);
    }
done:
    Py_XDECREF(descr);
    return rc;
}

static PyObject *intp_tuple(const npy_intp *v, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; ++i) {
        PyObject *x = PyLong_FromSsize_t(v[i]);
        if (x == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *array_get_shape(gr_array *a, void *c)
{
    return intp_tuple(a->shape, a->nd);
}

static PyObject *array_get_strides(gr_array *a, void *c)
{
    return intp_tuple(a->strides, a->nd);
}

static PyObject *array_get_dtype(gr_array *a, void *c)
{
    return Py_NewRef((PyObject *)a->descr);
}

static PyObject *array_get_ndim(gr_array *a, void *c)
{
    return PyLong_FromLong(a->nd);
}

static npy_intp array_size(const gr_array *a)
{
    npy_intp n = 1;
    for (int i = 0; i < a->nd; ++i) {
        n *= a->shape[i];
    }
    return n;
}

static PyObject *array_get_size(gr_array *a, void *c)
{
    return PyLong_FromSsize_t(array_size(a));
}

static PyObject *array_get_nbytes(gr_array *a, void *c)
{
    return PyLong_FromSsize_t(array_size(a) * PyDataType_ELSIZE(a->descr));
}

static PyObject *array_get_itemsize(gr_array *a, void *c)
{
    return PyLong_FromSsize_t(PyDataType_ELSIZE(a->descr));
}

static PyObject *array_get_offset(gr_array *a, void *c)
{
    return PyLong_FromSsize_t(a->offset);
}

static PyObject *array_get_buf(gr_array *a, void *c)
{
    return Py_NewRef(a->buf);
}

static PyObject *array_get_released(gr_array *a, void *c)
{
    return PyBool_FromLong(((gr_buffer *)a->buf)->blk == NULL);
}

static PyObject *array_get_device_index(gr_array *a, void *c)
{
    return PyLong_FromLong(((gr_buffer *)a->buf)->dev);
}

static PyMethodDef array_methods[];

static PyGetSetDef array_getset[] = {
    {"shape", (getter)array_get_shape, NULL, "Tuple of dimensions.", NULL},
    {"strides", (getter)array_get_strides, NULL, "Byte strides.", NULL},
    {"dtype", (getter)array_get_dtype, NULL, "Element type.", NULL},
    {"ndim", (getter)array_get_ndim, NULL, "Number of dimensions.", NULL},
    {"size", (getter)array_get_size, NULL, "Number of elements.", NULL},
    {"nbytes", (getter)array_get_nbytes, NULL, "Bytes of the elements.", NULL},
    {"itemsize", (getter)array_get_itemsize, NULL, "Bytes per element.", NULL},
    {"offset", (getter)array_get_offset, NULL,
     "Byte offset of element 0 in the buffer.", NULL},
    {"buffer", (getter)array_get_buf, NULL, "The _core.Buffer.", NULL},
    {"_buf", (getter)array_get_buf, NULL, "The _core.Buffer.", NULL},
    {"released", (getter)array_get_released, NULL,
     "Whether the memory was released.", NULL},
    {"device_index", (getter)array_get_device_index, NULL,
     "Position of the array's device in gpured.devices().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject gr_ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpured._core.ArrayBase",
    .tp_basicsize = sizeof(gr_array),
    .tp_dealloc = (destructor)array_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The C half of gpured.Array: a Buffer plus dtype, shape, "
              "byte strides and byte offset.",
    .tp_traverse = (traverseproc)array_traverse,
    .tp_clear = (inquiry)array_clear,
    .tp_getset = array_getset,
    .tp_methods = array_methods,
    .tp_dictoffset = offsetof(gr_array, dict),
    .tp_init = (initproc)array_init,
    .tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------- DLPack
 * Arrays on CPU devices are host memory: __dlpack__ maps the block (a
 * blocking map, after everything enqueued on it) and hands NumPy & co. a
 * view of it; the deleter unmaps and drops the reference.  GPU memory is
 * not host memory: BufferError there, as the protocol asks. */

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice;
typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
enum { kDLCPU = 1, kDLOpenCL = 4 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };

typedef struct {
    DLManagedTensor t;
    gr_block *blk;
    void *mapped;
    int64_t shape[GR_MAXDIMS];
    int64_t strides[GR_MAXDIMS];
} dl_export;

static void dl_export_free(DLManagedTensor *self)
{
    dl_export *e = (dl_export *)self;
    gr_block_unmap(e->blk, e->mapped);
    gr_block_put(e->blk);
    free(e);
}

static void dl_capsule_free(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, "dltensor")) { /* never consumed */
        DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
        if (t != NULL && t->deleter != NULL) {
            t->deleter(t);
        }
    }
}

static PyObject *array_dlpack_device(gr_array *a, PyObject *noargs)
{
    gr_buffer *b = gr_buffer_check(a->buf);
    if (b == NULL) {
        return NULL;
    }
    const gr_device *d = gr_device_get(b->dev);
    return Py_BuildValue("(ii)", d->is_gpu ? kDLOpenCL : kDLCPU,
                         d->is_gpu ? b->dev : 0);
}

static PyObject *array_dlpack(gr_array *a, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy",
                             NULL};
    PyObject *stream = Py_None, *maxv = Py_None, *dld = Py_None,
             *copy = Py_None;
    gr_status st = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO", kwlist, &stream,
                                     &maxv, &dld, &copy)) {
        return NULL;
    }
    gr_buffer *b = gr_buffer_check(a->buf);
    if (b == NULL) {
        return NULL;
    }
    if (gr_device_get(b->dev)->is_gpu) {
        PyErr_SetString(PyExc_BufferError, "DLPack: only arrays on CPU "
                        "devices are host memory (use get() for GPU "
                        "arrays)");
        return NULL;
    }
    if (copy == Py_True) {
        PyErr_SetString(PyExc_BufferError, "DLPack: copy=True is not "
                        "supported (use get())");
        return NULL;
    }
    const int t = gr_dtype_of_store(a->descr, "array");
    if (t < 0) {
        return NULL;
    }
    dl_export *e = calloc(1, sizeof *e);
    if (e == NULL) {
        return PyErr_NoMemory();
    }
    e->blk = b->blk;
    gr_block_retain(e->blk);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = gr_block_map(e->blk, &e->mapped, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_block_put(e->blk);
        free(e);
        gr_raise(&st);
        return NULL;
    }
    const npy_intp isz = PyDataType_ELSIZE(a->descr);
    const gr_dtype_info *ti = &gr_dtypes[t];
    e->t.dl_tensor.data = e->mapped;
    e->t.dl_tensor.device.device_type = kDLCPU;
    e->t.dl_tensor.device.device_id = 0;
    e->t.dl_tensor.ndim = a->nd;
    e->t.dl_tensor.dtype.code = t == GR_BOOL ? kDLBool
                                : t == GR_BFLOAT16 ? kDLBfloat
                                : ti->is_float ? kDLFloat
                                : ti->is_signed ? kDLInt
                                                : kDLUInt;
    e->t.dl_tensor.dtype.bits = (uint8_t)(8 * ti->size);
    e->t.dl_tensor.dtype.lanes = 1;
    for (int i = 0; i < a->nd; ++i) {
        e->shape[i] = a->shape[i];
        e->strides[i] = a->strides[i] / isz;
    }
    e->t.dl_tensor.shape = e->shape;
    e->t.dl_tensor.strides = e->strides;
    e->t.dl_tensor.byte_offset = (uint64_t)a->offset;
    e->t.manager_ctx = e;
    e->t.deleter = dl_export_free;
    PyObject *cap = PyCapsule_New(&e->t, "dltensor", dl_capsule_free);
    if (cap == NULL) {
        dl_export_free(&e->t);
    }
    return cap;
}

/* _core.from_dlpack(obj, device=None): host memory that obj exports
 * (kDLCPU) as an Array of a CPU device, in place; on a GPU device, a copy
 * (to_device).  The exporter's deleter runs when the Array's memory goes. */
static void dl_import_free(void *ctx)
{
    DLManagedTensor *t = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    if (t->deleter != NULL) {
        t->deleter(t);
    }
    PyGILState_Release(g);
}

PyObject *gr_array_from_dlpack(PyObject *obj, int dev)
{
    gr_status st = {0};
    PyObject *cap = PyObject_CallMethod(obj, "__dlpack__", NULL);
    if (cap == NULL) {
        return NULL;
    }
    DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
    if (t == NULL) {
        Py_DECREF(cap);
        return NULL;
    }
    DLTensor *x = &t->dl_tensor;
    int gt = -1;
    for (int i = 0; i < GR_NDTYPES; ++i) {
        const gr_dtype_info *ti = &gr_dtypes[i];
        const int code = i == GR_BOOL ? kDLBool
                         : i == GR_BFLOAT16 ? kDLBfloat
                         : ti->is_float ? kDLFloat
                         : ti->is_signed ? kDLInt
                                         : kDLUInt;
        if (x->dtype.code == code && x->dtype.bits == 8 * ti->size &&
            x->dtype.lanes == 1) {
            gt = i;
        }
    }
    if (x->device.device_type != kDLCPU || gt < 0 || x->ndim > GR_MAXDIMS ||
        x->ndim < 0) {
        Py_DECREF(cap);
        PyErr_SetString(PyExc_BufferError, "from_dlpack: host (kDLCPU) "
                        "arrays of bool, int8-uint64, float32 or float64");
        return NULL;
    }
    const size_t isz = (size_t)gr_dtypes[gt].size;
    npy_intp shape[GR_MAXDIMS], strides[GR_MAXDIMS];
    npy_intp lo = 0, hi = 0, acc = (npy_intp)isz, n = 1;
    for (int i = x->ndim - 1; i >= 0; --i) {
        shape[i] = (npy_intp)x->shape[i];
        strides[i] = x->strides ? (npy_intp)x->strides[i] * (npy_intp)isz : acc;
        acc *= shape[i];
        n *= shape[i];
        npy_intp ext = (shape[i] - 1) * strides[i];
        if (shape[i] > 0) {
            if (ext < 0) {
                lo += ext;
            } else {
                hi += ext;
            }
        }
    }
    char *base = (char *)x->data + x->byte_offset;
    const size_t span = n > 0 ? (size_t)(hi - lo) + isz : isz;
    size_t lead = 0;
    gr_block *blk = NULL;
    int rc;
    /* the capsule is consumed: the block's end calls the deleter */
    PyCapsule_SetName(cap, "used_dltensor");
    Py_BEGIN_ALLOW_THREADS
    rc = gr_device_ready(dev, &st);
    if (rc == 0) {
        blk = gr_block_from_host(dev, base + lo, span, &lead, dl_import_free,
                                 t, &st);
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(cap);
    if (blk == NULL) {
        if (rc != 0 || st.call != NULL) {
            dl_import_free(t);
            gr_raise(&st);
            return NULL;
        }
        /* a GPU: copy through NumPy's view of the exporter */
        dl_import_free(t);
        return NULL; /* the caller copies */
    }
    PyObject *buf = gr_buffer_wrap(blk, blk->size);
    PyArray_Descr *descr = buf ? gr_descr_of((gr_dtype)gt) : NULL;
    PyObject *res = descr ? gr_array_new(buf, descr, x->ndim, shape, strides,
                                         (npy_intp)lead - lo)
                          : NULL;
    Py_XDECREF(buf);
    Py_XDECREF(descr);
    return res;
}

static PyMethodDef array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "DLPack export (arrays on CPU devices: host memory, no copy)."},
    {"__dlpack_device__", (PyCFunction)array_dlpack_device, METH_NOARGS,
     "DLPack device: (kDLCPU, 0) on CPU devices, (kDLOpenCL, index) else."},
    {NULL, NULL, 0, NULL},
};

/* obj as a live device array; NULL (no exception) if it is not one. */
gr_array *gr_array_of(PyObject *obj)
{
    return PyObject_TypeCheck(obj, &gr_ArrayType) ? (gr_array *)obj : NULL;
}

/* gr_array_operand for the computing families: float16/bfloat16 Arrays
 * are refused (the Python face widens them first: gpured/_half.py). */
int gr_array_compute_operand(gr_array *a, gr_operand *o, int *dev)
{
    if (gr_array_operand(a, o, dev) != 0) {
        return -1;
    }
    if (GR_IS_HALF(o->t)) {
        gr_block_put(o->blk);
        o->blk = NULL;
        PyErr_Format(PyExc_TypeError, "gpured: %s Arrays are computed "
                     "through float32 by the public functions (internal "
                     "call without widening)", gr_dtypes[o->t].name);
        return -1;
    }
    return 0;
}

/* A device operand of a (one block reference taken: the request's). */
int gr_array_operand(gr_array *a, gr_operand *o, int *dev)
{
    gr_buffer *b = gr_buffer_check(a->buf);
    int t;
    if (b == NULL || (t = gr_dtype_of_store(a->descr, "array")) < 0) {
        return -1;
    }
    memset(o, 0, sizeof *o);
    o->present = 1;
    o->t = (gr_dtype)t;
    o->nd = a->nd;
    for (int i = 0; i < a->nd; ++i) {
        o->shape[i] = (size_t)a->shape[i];
        o->strides[i] = (ptrdiff_t)a->strides[i];
    }
    o->blk = b->blk;
    gr_block_retain(b->blk);
    o->off = (size_t)a->offset;
    *dev = b->dev;
    /* Bounds: every element inside the block. */
    if (array_size(a) > 0) {
        npy_intp lo = a->offset, hi = a->offset;
        for (int i = 0; i < a->nd; ++i) {
            npy_intp ext = (a->shape[i] - 1) * a->strides[i];
            if (ext < 0) {
                lo += ext;
            } else {
                hi += ext;
            }
        }
        if (lo < 0 || (size_t)(hi + PyDataType_ELSIZE(a->descr)) >
                          (size_t)b->nbytes) {
            gr_block_put(o->blk);
            o->blk = NULL;
            PyErr_SetString(PyExc_ValueError, "view outside its device buffer");
            return -1;
        }
    }
    return 0;
}
