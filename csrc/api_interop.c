/*
 * api_interop.c — the api layer's interop entry points: PyOpenCL arrays
 * (from_pyopencl, use_queue), DLPack (from_dlpack), the raw OpenCL
 * handles gpured uses, export of a Buffer.
 */
#include "api.h"

/* use_queue(queue_int_ptr) -> device index: gpured runs that device on
 * the caller's context and queue (PyOpenCL's) from now on. */
PyObject *py_use_queue(PyObject *self, PyObject *arg)
{
    gr_status st = {0};
    void *q = PyLong_AsVoidPtr(arg);
    int dev, rc;
    if (q == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "a queue handle (int_ptr)");
        }
        return NULL;
    }
    if (forked_check() != 0) {
        return NULL;
    }
    dev = gr_device_of_queue((cl_command_queue)q);
    if (dev < 0) {
        PyErr_SetString(PyExc_ValueError, "the queue's device is not among "
                        "gpured.devices()");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_device_adopt(dev, (cl_command_queue)q, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    return PyLong_FromLong(dev);
}

/* handles(device=None) -> the raw OpenCL handles gpured uses (ints, as
 * PyOpenCL's int_ptr): context, queue, device, platform. */
PyObject *py_handles(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    gr_status st = {0};
    int dev = -1, rc;
    if (!PyArg_ParseTuple(args, "|O", &devo) || dev_of_arg(devo, &dev) != 0 ||
        forked_check() != 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_device_ready(dev, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    gr_device *d = gr_device_get(dev);
    return Py_BuildValue("{s:N, s:N, s:N, s:N}", "context",
                         PyLong_FromVoidPtr(d->ctx), "queue",
                         PyLong_FromVoidPtr(d->queue), "device",
                         PyLong_FromVoidPtr(d->id), "platform",
                         PyLong_FromVoidPtr(d->platform));
}

/* export(buffer): the Buffer's memory is shared outside gpured (a PyOpenCL
 * array over it): the pool never serves it to another allocation. */
PyObject *py_export(PyObject *self, PyObject *arg)
{
    gr_buffer *b = gr_buffer_check(arg);
    if (b == NULL) {
        return NULL;
    }
    b->blk->no_cache = 1;
    Py_RETURN_NONE;
}

/* from_pyopencl(a) -> Array: a PyOpenCL array's buffer in place when
 * gpured runs on its context, else a copy to gpured's device. */
PyObject *py_from_pyopencl(PyObject *self, PyObject *obj)
{
    gr_operand o;
    PyObject *keep = NULL, *res = NULL;
    int dev = -1;
    if (!is_pyopencl_array(obj)) {
        PyErr_SetString(PyExc_TypeError, "from_pyopencl takes a "
                        "pyopencl.array.Array");
        return NULL;
    }
    if (forked_check() != 0 || pyopencl_operand(obj, &o, &keep, &dev,
                                                "array") != 0) {
        return NULL;
    }
    if (o.blk == NULL) {
        /* another context: the host copy, uploaded */
        if (gr_current_device() == NULL) {
            Py_XDECREF(keep);
            return NULL;
        }
        res = upload((PyArrayObject *)keep, gr_current_index());
        Py_XDECREF(keep);
        return res;
    }
    npy_intp shape[GR_MAXDIMS], strides[GR_MAXDIMS];
    for (int i = 0; i < o.nd; ++i) {
        shape[i] = (npy_intp)o.shape[i];
        strides[i] = (npy_intp)o.strides[i];
    }
    PyObject *buf = gr_buffer_wrap(o.blk, o.blk->size);
    PyArray_Descr *descr = buf ? gr_descr_of(o.t) : NULL;
    res = descr ? gr_array_new(buf, descr, o.nd, shape, strides,
                               (npy_intp)o.off)
                : NULL;
    Py_XDECREF(buf);
    Py_XDECREF(descr);
    return res;
}

/* from_dlpack(obj, device=None) -> Array (in place on CPU devices). */
PyObject *py_from_dlpack(PyObject *self, PyObject *args)
{
    PyObject *obj = NULL, *devo = Py_None;
    int dev = -1;
    if (!PyArg_ParseTuple(args, "O|O", &obj, &devo) ||
        dev_of_arg(devo, &dev) != 0 || forked_check() != 0) {
        return NULL;
    }
    PyObject *r = gr_array_from_dlpack(obj, dev);
    if (r != NULL || PyErr_Occurred()) {
        return r;
    }
    /* a GPU device: NumPy's view of the exporter, uploaded */
    PyObject *fd = PyObject_GetAttrString(np_module, "from_dlpack");
    PyObject *h = fd ? PyObject_CallOneArg(fd, obj) : NULL;
    Py_XDECREF(fd);
    if (h == NULL) {
        return NULL;
    }
    r = upload((PyArrayObject *)h, dev);
    Py_DECREF(h);
    return r;
}
