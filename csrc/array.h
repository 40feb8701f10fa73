/*
 * gpured — the Python types of device memory (array.c), used by the face:
 * api.c (the module, every family's entry points) and array.c (the Buffer
 * and ArrayBase types, dtypes).  Nothing below the face includes this.
 */
#ifndef GPURED_ARRAY_H
#define GPURED_ARRAY_H

#include "gpured.h"

struct _PyArray_Descr; /* NumPy's PyArray_Descr */

/* _core.Buffer: one pooled block on one device. */
typedef struct {
    PyObject_HEAD
    gr_block *blk;   /* NULL once released                                 */
    int dev;
    Py_ssize_t nbytes;
} gr_buffer;

/* _core.ArrayBase: the C half of gpured.Array. */
typedef struct {
    PyObject_HEAD
    PyObject *buf;                      /* gr_buffer                       */
    struct _PyArray_Descr *descr;       /* native byte order               */
    int nd;
    Py_ssize_t shape[GR_MAXDIMS];
    Py_ssize_t strides[GR_MAXDIMS];     /* bytes                           */
    Py_ssize_t offset;                  /* bytes                           */
    PyObject *dict;                     /* the Python subclass's __dict__  */
} gr_array;

extern PyTypeObject gr_BufferType;
extern PyTypeObject gr_ArrayType;

/* NumPy descr -> gr_dtype, or -1 with TypeError naming `what`. */
int gr_dtype_of(struct _PyArray_Descr *descr, const char *what);
int gr_dtype_of_store(struct _PyArray_Descr *descr, const char *what);
struct _PyArray_Descr *gr_descr_of(gr_dtype t);       /* new reference  */
/* gr_dtype_of, and complex64/complex128: what an Array may hold (complex
 * Arrays are storage: gpured/_complex.py computes on their real views). */
int gr_storage_ok(struct _PyArray_Descr *descr, const char *what);

/* The live Buffer of obj, or NULL with ValueError (released) or TypeError
 * set.  GIL held. */
gr_buffer *gr_buffer_check(PyObject *obj);
/* A Buffer that owns blk (the caller's reference is stolen). */
PyObject *gr_buffer_wrap(gr_block *blk, size_t nbytes);
/* A new Buffer of nbytes on device di; NULL with exception. */
PyObject *gr_buffer_new(int di, size_t nbytes);

void gr_array_set_class(PyTypeObject *cls);
/* A new Array (the registered subclass) over buf; strides NULL: C order. */
PyObject *gr_array_new(PyObject *buf, struct _PyArray_Descr *descr, int nd,
                       const Py_ssize_t *shape, const Py_ssize_t *strides,
                       Py_ssize_t offset);
gr_array *gr_array_of(PyObject *obj);   /* NULL: not a device array     */
/* The operand of a device array (takes a block reference); -1 with an
 * exception (released, unsupported dtype, view outside its buffer). */
int gr_array_operand(gr_array *a, gr_operand *o, int *dev);
int gr_array_compute_operand(gr_array *a, gr_operand *o, int *dev);

/* DLPack import: host memory of obj as an Array of CPU device dev (in
 * place); NULL without an exception when dev is a GPU (copy instead). */
PyObject *gr_array_from_dlpack(PyObject *obj, int dev);

#endif
