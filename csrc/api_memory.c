/*
 * api_memory.c — the api layer's device memory entry points: Buffers
 * (alloc, read, write, fill, copy), Arrays to and from the host
 * (to_device, get, get_many), device copies, the pool's and staging's
 * settings and counters, finish, and the tests' queue gate.
 */
#include "api.h"

/* buffer_alloc(nbytes, device=None) */
PyObject *py_buffer_alloc(PyObject *self, PyObject *args)
{
    Py_ssize_t n = 0;
    PyObject *devo = Py_None;
    int dev = -1;
    if (!PyArg_ParseTuple(args, "n|O", &n, &devo) ||
        dev_of_arg(devo, &dev) != 0 || forked_check() != 0) {
        return NULL;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "negative buffer size");
        return NULL;
    }
    return gr_buffer_new(dev, (size_t)n);
}

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

/* buffer_write(buf, byte_off, arr) / buffer_read(buf, byte_off, arr):
 * arr is C-contiguous (and writeable, for reads). */
static PyObject *transfer(PyObject *args, int write)
{
    PyObject *bo = NULL;
    Py_ssize_t off = 0;
    PyArrayObject *arr = NULL;
    gr_buffer *b;
    gr_status st = {0};
    int rc;
    if (!PyArg_ParseTuple(args, "OnO!", &bo, &off, &PyArray_Type, &arr) ||
        (b = gr_buffer_check(bo)) == NULL || forked_check() != 0) {
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
    gr_block *blk = b->blk;
    gr_block_retain(blk);
    Py_BEGIN_ALLOW_THREADS
    rc = write ? gr_block_write(blk, (size_t)off, ptr, n, &st)
               : gr_block_read(blk, (size_t)off, ptr, n, NULL, NULL, NULL, &st);
    Py_END_ALLOW_THREADS
    gr_block_put(blk);
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    Py_RETURN_NONE;
}

PyObject *py_buffer_write(PyObject *self, PyObject *args)
{
    return transfer(args, 1);
}

PyObject *py_buffer_read(PyObject *self, PyObject *args)
{
    return transfer(args, 0);
}

/* buffer_fill(buf, byte_off, nbytes, pattern) */
PyObject *py_buffer_fill(PyObject *self, PyObject *args)
{
    PyObject *bo = NULL;
    Py_ssize_t off = 0, n = 0, plen = 0;
    const char *pat = NULL;
    gr_buffer *b;
    gr_status st = {0};
    int rc;
    if (!PyArg_ParseTuple(args, "Onny#", &bo, &off, &n, &pat, &plen) ||
        (b = gr_buffer_check(bo)) == NULL || forked_check() != 0) {
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
    gr_block *blk = b->blk;
    gr_block_retain(blk);
    Py_BEGIN_ALLOW_THREADS
    rc = gr_block_fill(blk, (size_t)off, (size_t)n, pat, (size_t)plen, &st);
    Py_END_ALLOW_THREADS
    gr_block_put(blk);
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* buffer_copy(src, soff, dst, doff, nbytes) */
PyObject *py_buffer_copy(PyObject *self, PyObject *args)
{
    PyObject *so = NULL, *dobj = NULL;
    Py_ssize_t soff = 0, doff = 0, n = 0;
    gr_buffer *sb, *db;
    gr_status st = {0};
    int rc;
    if (!PyArg_ParseTuple(args, "OnOnn", &so, &soff, &dobj, &doff, &n) ||
        (sb = gr_buffer_check(so)) == NULL ||
        (db = gr_buffer_check(dobj)) == NULL || forked_check() != 0) {
        return NULL;
    }
    if (sb->dev != db->dev) {
        PyErr_Format(PyExc_ValueError,
                     "arrays on two devices (%s and %s): move one first",
                     gr_device_get(sb->dev)->name,
                     gr_device_get(db->dev)->name);
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
    gr_block *a = sb->blk, *bb = db->blk;
    gr_block_retain(a);
    gr_block_retain(bb);
    Py_BEGIN_ALLOW_THREADS
    rc = gr_block_copy(a, (size_t)soff, bb, (size_t)doff, (size_t)n, &st);
    Py_END_ALLOW_THREADS
    gr_block_put(a);
    gr_block_put(bb);
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* device_copy(src, dst, div=0.0): dst[...] = src (a device Array of the
 * same shape, any layout and dtype), cast as NumPy's unsafe astype, or
 * divided by div (the mean of a sum). */
PyObject *py_device_copy(PyObject *self, PyObject *args)
{
    PyObject *so = NULL, *dobj = NULL;
    double div = 0.0;
    gr_array *sa, *da;
    gr_operand s, d;
    gr_status st = {0};
    gr_epilogue epi;
    int ds = -1, dd = -1, rc;
    if (!PyArg_ParseTuple(args, "OO|d", &so, &dobj, &div)) {
        return NULL;
    }
    if ((sa = gr_array_of(so)) == NULL || (da = gr_array_of(dobj)) == NULL) {
        PyErr_SetString(PyExc_TypeError, "device_copy takes two device "
                        "arrays");
        return NULL;
    }
    if (forked_check() != 0 || gr_array_operand(sa, &s, &ds) != 0) {
        return NULL;
    }
    if (gr_array_operand(da, &d, &dd) != 0) {
        gr_block_put(s.blk);
        return NULL;
    }
    int same = s.nd == d.nd && ds == dd;
    for (int i = 0; same && i < s.nd; ++i) {
        same = s.shape[i] == d.shape[i];
    }
    if (!same) {
        gr_block_put(s.blk);
        gr_block_put(d.blk);
        PyErr_SetString(PyExc_ValueError, ds != dd
                        ? "arrays on two devices: move one first"
                        : "device_copy: shapes differ");
        return NULL;
    }
    memset(&epi, 0, sizeof epi);
    epi.mode = div != 0.0 ? GR_EPI_DIV : GR_EPI_CAST;
    epi.div = div;
    Py_BEGIN_ALLOW_THREADS
    rc = operand_size(&s) == 0 ? 0 : gr_operand_copy(&s, &d, &epi, &st);
    Py_END_ALLOW_THREADS
    gr_block_put(s.blk);
    gr_block_put(d.blk);
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* to_device(obj, dtype=None, device=None) -> Array */
PyObject *py_to_device(PyObject *self, PyObject *args)
{
    PyObject *obj = NULL, *dto = Py_None, *devo = Py_None;
    PyArray_Descr *descr = NULL;
    int dev = -1;
    if (!PyArg_ParseTuple(args, "O|OO", &obj, &dto, &devo) ||
        dev_of_arg(devo, &dev) != 0 || forked_check() != 0) {
        return NULL;
    }
    if (dto != Py_None && !PyArray_DescrConverter(dto, &descr)) {
        return NULL;
    }
    PyArrayObject *h = (PyArrayObject *)PyArray_FromAny(obj, descr, 0, 0, 0,
                                                        NULL);
    if (h == NULL) {
        return NULL;
    }
    host_note(h);
    PyObject *r = upload(h, dev);
    Py_DECREF(h);
    return r;
}

/* get(array) -> a NumPy array with the device array's values. */
static PyObject *array_get(gr_array *a)
{
    gr_operand s, d;
    gr_status st = {0};
    int dev = -1, rc = 0;
    PyObject *host = NULL;
    gr_block *tmp = NULL;
    cl_event pend_ev = NULL;
    if (forked_check() != 0 || gr_array_operand(a, &s, &dev) != 0) {
        return NULL;
    }
    host = PyArray_Empty(a->nd, a->shape, (PyArray_Descr *)Py_NewRef(a->descr),
                         0);
    const size_t n = operand_size(&s), isz = (size_t)gr_dtypes[s.t].size;
    if (host == NULL || n == 0) {
        gr_block_put(s.blk);
        return host;
    }
    void *p = PyArray_DATA((PyArrayObject *)host);
    int contiguous = 1;
    {
        ptrdiff_t acc = (ptrdiff_t)isz;
        for (int i = s.nd - 1; i >= 0; --i) {
            if (s.shape[i] != 1 && s.strides[i] != acc) {
                contiguous = 0;
            }
            acc *= (ptrdiff_t)s.shape[i];
        }
    }
    Py_BEGIN_ALLOW_THREADS
    if (contiguous) {
        rc = gr_block_read(s.blk, s.off, p, n * isz, signals_pending, NULL,
                           &pend_ev, &st);
    } else {
        /* a C-ordered copy on the device, then one read */
        rc = gr_device_ready(dev, &st);
        if (rc == 0 &&
            (tmp = gr_block_get(gr_device_get(dev), n * isz, &st)) == NULL) {
            rc = -1;
        }
        if (rc == 0) {
            memset(&d, 0, sizeof d);
            d = s;
            d.blk = tmp;
            d.off = 0;
            ptrdiff_t acc = (ptrdiff_t)isz;
            for (int i = s.nd - 1; i >= 0; --i) {
                d.strides[i] = acc;
                acc *= (ptrdiff_t)s.shape[i];
            }
            rc = gr_operand_copy(&s, &d, NULL, &st);
        }
        if (rc == 0) {
            rc = gr_block_read(tmp, 0, p, n * isz, signals_pending, NULL,
                               &pend_ev, &st);
        }
    }
    Py_END_ALLOW_THREADS
    gr_block_put(tmp);
    gr_block_put(s.blk);
    if (rc != 0) {
        if (pend_ev != NULL) {
            pending_add(pend_ev, host, NULL, NULL);
        }
        gr_raise(&st);
        Py_DECREF(host);
        return NULL;
    }
    return host;
}

/* get_many(arrays) -> [numpy.ndarray]: the reads of all of them enqueued
 * before the first wait (one round trip per device, not one per array:
 * gpured.dask's partials).  Non-contiguous views go through get(). */
PyObject *py_get_many(PyObject *self, PyObject *arg)
{
    PyObject *seq = PySequence_Fast(arg, "get_many takes a sequence of Arrays");
    if (seq == NULL || forked_check() != 0) {
        Py_XDECREF(seq);
        return NULL;
    }
    const Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(m);
    gr_block **blk = calloc((size_t)m + 1, sizeof *blk);
    size_t *off = calloc((size_t)m + 1, sizeof *off);
    size_t *len = calloc((size_t)m + 1, sizeof *len);
    void **dst = calloc((size_t)m + 1, sizeof *dst);
    PyObject **host = calloc((size_t)m + 1, sizeof *host);
    cl_event *evs = calloc((size_t)m + 1, sizeof *evs);
    gr_status st = {0};
    int k = 0, rc = 0;
    if (out == NULL || !blk || !off || !len || !dst || !host || !evs) {
        if (out != NULL) {
            PyErr_NoMemory();
        }
        goto done;
    }
    for (Py_ssize_t i = 0; i < m; ++i) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        gr_array *a = gr_array_of(item);
        gr_operand o;
        int dev = -1;
        if (a == NULL) {
            PyErr_SetString(PyExc_TypeError, "get_many takes device arrays");
            goto done;
        }
        if (gr_array_operand(a, &o, &dev) != 0) {
            goto done;
        }
        const size_t isz = (size_t)gr_dtypes[o.t].size, n = operand_size(&o);
        ptrdiff_t acc = (ptrdiff_t)isz;
        int contiguous = 1;
        for (int d = o.nd - 1; d >= 0; --d) {
            contiguous &= o.shape[d] == 1 || o.strides[d] == acc;
            acc *= (ptrdiff_t)o.shape[d];
        }
        PyObject *h;
        if (!contiguous || n == 0) {
            gr_block_put(o.blk);
            h = array_get(a);
        } else {
            h = PyArray_Empty(a->nd, a->shape,
                              (PyArray_Descr *)Py_NewRef(a->descr), 0);
            if (h != NULL) {
                blk[k] = o.blk;
                off[k] = o.off;
                len[k] = n * isz;
                dst[k] = PyArray_DATA((PyArrayObject *)h);
                host[k++] = h;
            } else {
                gr_block_put(o.blk);
            }
        }
        if (h == NULL) {
            goto done;
        }
        PyList_SET_ITEM(out, i, h);
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_blocks_read(k, blk, off, dst, len, signals_pending, NULL, evs,
                        &st);
    Py_END_ALLOW_THREADS
    for (int j = 0; j < k; ++j) {
        if (evs[j] == NULL) {
            continue;
        }
        if (rc != 0 && !gr_event_done(evs[j])) {
            pending_add(evs[j], host[j], NULL, NULL); /* keeps it alive */
        } else {
            clReleaseEvent(evs[j]);
        }
    }
    if (rc != 0) {
        gr_raise(&st);
    }
done:
    for (int j = 0; j < k; ++j) {
        gr_block_put(blk[j]);
    }
    free(blk);
    free(off);
    free(len);
    free(dst);
    free(host);
    free(evs);
    Py_DECREF(seq);
    if (PyErr_Occurred()) {
        Py_XDECREF(out);
        return NULL;
    }
    return out;
}

PyObject *py_get(PyObject *self, PyObject *arg)
{
    gr_array *a = gr_array_of(arg);
    if (a == NULL) {
        PyErr_SetString(PyExc_TypeError, "get takes a device array");
        return NULL;
    }
    return array_get(a);
}

/* finish(device=None): wait for everything enqueued on the device. */
PyObject *py_finish(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    gr_status st = {0};
    int dev = -1, rc;
    if (!PyArg_ParseTuple(args, "|O", &devo) || dev_of_arg(devo, &dev) != 0 ||
        forked_check() != 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_device_finish(dev, signals_pending, NULL, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* copy_bandwidth(nbytes, reps, device=None) -> [ns per copy] */
PyObject *py_copy_bandwidth(PyObject *self, PyObject *args)
{
    Py_ssize_t nbytes = 0;
    int reps = 0, dev = -1, rc;
    PyObject *devo = Py_None, *out;
    gr_status st = {0};
    double *ns;
    if (!PyArg_ParseTuple(args, "ni|O", &nbytes, &reps, &devo) ||
        dev_of_arg(devo, &dev) != 0 || forked_check() != 0) {
        return NULL;
    }
    if (nbytes <= 0 || reps <= 0) {
        PyErr_SetString(PyExc_ValueError, "copy_bandwidth(nbytes>0, reps>0)");
        return NULL;
    }
    if ((ns = calloc((size_t)reps, sizeof *ns)) == NULL) {
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_copy_bandwidth(dev, (size_t)nbytes, reps, ns, &st);
    Py_END_ALLOW_THREADS
    out = rc == 0 ? times_list(ns, reps) : (gr_raise(&st), NULL);
    free(ns);
    return out;
}

/* memory_info(device=None) -> the pool's counters. */
PyObject *py_memory_info(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    gr_pool_stats s;
    int dev = -1;
    if (!PyArg_ParseTuple(args, "|O", &devo) || dev_of_arg(devo, &dev) != 0) {
        return NULL;
    }
    gr_pool_stats_get(gr_device_get(dev), &s);
    return Py_BuildValue("{s:n, s:n, s:n, s:l, s:l, s:l, s:l, s:l}",
                         "in_use_bytes", (Py_ssize_t)s.in_use_bytes,
                         "cached_bytes", (Py_ssize_t)s.cached_bytes,
                         "limit_bytes", (Py_ssize_t)s.limit_bytes,
                         "in_use_blocks", s.in_use_blocks, "cached_blocks",
                         s.cached_blocks, "allocations", s.allocs, "reuses",
                         s.reuses, "frees", s.frees);
}

/* empty_cache(device=None) / set_memory_limit(bytes, device=None) */
PyObject *py_empty_cache(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    int dev = -1;
    if (!PyArg_ParseTuple(args, "|O", &devo) || dev_of_arg(devo, &dev) != 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    gr_pool_empty(gr_device_get(dev));
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

PyObject *py_set_memory_limit(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    Py_ssize_t bytes = 0;
    int dev = -1;
    if (!PyArg_ParseTuple(args, "n|O", &bytes, &devo) ||
        dev_of_arg(devo, &dev) != 0) {
        return NULL;
    }
    if (bytes < 0) {
        PyErr_SetString(PyExc_ValueError, "the limit must be >= 0 bytes");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    gr_pool_set_limit(gr_device_get(dev), (size_t)bytes);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static const char *const reg_modes[] = {"never", "auto", "always"};

/* set_staging(chunk_bytes, buffers, min_bytes, force, threads, register) */
PyObject *py_set_staging(PyObject *self, PyObject *args)
{
    Py_ssize_t chunk, min_bytes;
    int nbuf, force, threads, reg = -1;
    const char *regs = NULL;
    if (!PyArg_ParseTuple(args, "ninpis", &chunk, &nbuf, &min_bytes, &force,
                          &threads, &regs)) {
        return NULL;
    }
    for (int i = 0; i < 3; ++i) {
        reg = strcmp(regs, reg_modes[i]) == 0 ? i : reg;
    }
    if (chunk < 4096 || nbuf < 2 || nbuf > 16 || min_bytes < 0 ||
        threads < 0 || reg < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "staging: chunk_bytes >= 4096, 2 <= buffers <= 16, "
                        "min_bytes >= 0, threads >= 0, register 'auto', "
                        "'always' or 'never'");
        return NULL;
    }
    gr_stream_cfg c = {(size_t)chunk, nbuf, (size_t)min_bytes, force, threads,
                       reg};
    Py_BEGIN_ALLOW_THREADS
    gr_stream_set_cfg(&c); /* (takes every device's lock) */
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

PyObject *py_staging(PyObject *self, PyObject *noargs)
{
    gr_stream_cfg c;
    long streams, chunks, direct;
    int pinned;
    size_t pinned_bytes;
    gr_stream_get_cfg(&c, &streams, &chunks);
    gr_hostreg_stats(&direct, &pinned, &pinned_bytes);
    return Py_BuildValue("{s:n, s:i, s:n, s:O, s:i, s:s, s:l, s:l, s:l, s:i, "
                         "s:n, s:i}", "chunk_bytes", (Py_ssize_t)c.chunk, "buffers",
                         c.nbuf, "min_bytes", (Py_ssize_t)c.min_bytes, "force",
                         c.force ? Py_True : Py_False, "threads", c.threads,
                         "register", reg_modes[c.reg], "streams", streams,
                         "chunks", chunks, "direct_chunks", direct,
                         "registered", pinned, "registered_bytes",
                         (Py_ssize_t)pinned_bytes, "streams_at_once",
                         gr_stream_peak());
}

/* _gate(device=None) -> a capsule; the device's queue waits behind it
 * until _gate_open(capsule).  For tests: a call that returns while the
 * gate is shut enqueued its work without waiting for it. */
static void gate_destructor(PyObject *cap)
{
    cl_event ev = PyCapsule_GetPointer(cap, "gpured.gate");
    gr_gate_open(ev); /* never leave a queue blocked */
}

PyObject *py_gate(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    gr_status st = {0};
    cl_event ev = NULL;
    int dev = -1, rc;
    if (!PyArg_ParseTuple(args, "|O", &devo) || dev_of_arg(devo, &dev) != 0 ||
        forked_check() != 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_gate_shut(dev, &ev, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return NULL;
    }
    return PyCapsule_New(ev, "gpured.gate", gate_destructor);
}

PyObject *py_gate_open(PyObject *self, PyObject *cap)
{
    cl_event ev = PyCapsule_GetPointer(cap, "gpured.gate");
    if (ev == NULL) {
        return NULL;
    }
    if (PyCapsule_SetPointer(cap, (void *)1) != 0) {
        return NULL;
    }
    gr_gate_open(ev);
    PyCapsule_SetDestructor(cap, NULL);
    Py_RETURN_NONE;
}

/* _busy(device=None) -> whether earlier commands are still pending. */
PyObject *py_busy(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    gr_status st = {0};
    int dev = -1, rc;
    if (!PyArg_ParseTuple(args, "|O", &devo) || dev_of_arg(devo, &dev) != 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_device_busy(dev, &st);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        gr_raise(&st);
        return NULL;
    }
    return PyBool_FromLong(rc);
}

/* _hold_device_lock(device, ms): hold the device's lock for ms
 * milliseconds, the GIL released (tests of issue 43: work on another
 * device goes on meanwhile; work on this one waits and then completes). */
PyObject *py_hold_device_lock(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    double ms = 0;
    int dev = -1;
    if (!PyArg_ParseTuple(args, "Od", &devo, &ms) ||
        dev_of_arg(devo, &dev) != 0) {
        return NULL;
    }
    if (!(ms >= 0 && ms <= 600e3)) {
        PyErr_SetString(PyExc_ValueError, "ms must be in [0, 600000]");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    gr_device_hold(dev, ms);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

PyObject *py_set_array_class(PyObject *self, PyObject *cls)
{
    if (!PyType_Check(cls) ||
        !PyType_IsSubtype((PyTypeObject *)cls, &gr_ArrayType)) {
        PyErr_SetString(PyExc_TypeError, "a subclass of _core.ArrayBase");
        return NULL;
    }
    gr_array_set_class((PyTypeObject *)cls);
    Py_RETURN_NONE;
}
