/*
 * api_bins.c — histogram bin indices' Python entry:
 *
 *   _core.bin_index(a, edges, idx, uniform, lo, hi, denom)
 *
 * a: the values (a 1-D contiguous device Array), edges: the bin edges
 * (1-D contiguous Array, NumPy's bin_edges dtype), idx: the result (1-D
 * contiguous uint8/uint16/uint32 Array of a's length); lo, hi, denom:
 * 0-d NumPy arrays in the edges' dtype (uniform bins: NumPy's first and
 * last edge and last - first).  gpured/_bins.py prepares all of it as
 * NumPy's histogram does; bins.c runs kernels/bins.cl.
 */
#include "api.h"
#include "bins.h"

/* A 1-D contiguous device Array: its block (retained into *blk), type,
 * first element and length.  0, or -1 with TypeError/ValueError. */
static int bin_array(PyObject *obj, const char *what, int *dev,
                     gr_block **blk, gr_dtype *t, size_t *off, size_t *n)
{
    gr_array *a = gr_array_of(obj);
    gr_operand o;
    int d = -1;
    if (a == NULL) {
        PyErr_Format(PyExc_TypeError, "bin_index / sort_keys: %s must be a "
                     "device Array",
                     what);
        return -1;
    }
    if (gr_array_operand(a, &o, &d) != 0) {
        return -1;
    }
    *blk = o.blk;
    const size_t isz = (size_t)gr_dtypes[o.t].size;
    if (o.nd != 1 || (o.shape[0] > 1 && o.strides[0] != (ptrdiff_t)isz) ||
        o.off % isz != 0 || (*dev >= 0 && d != *dev)) {
        PyErr_Format(PyExc_ValueError, "bin_index: %s must be 1-D, "
                     "contiguous, on the values' device", what);
        return -1;
    }
    *dev = d;
    *t = o.t;
    *off = o.off / isz;
    *n = o.shape[0];
    return 0;
}

/* A 0-d NumPy array of type t: its bytes into buf. */
static int bin_value(PyObject *obj, gr_dtype t, unsigned char *buf)
{
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 0 ||
        gr_dtype_of(PyArray_DESCR((PyArrayObject *)obj), "bound") != (int)t) {
        PyErr_SetString(PyExc_TypeError, "bin_index: bounds must be 0-d "
                        "arrays of the edges' dtype");
        return -1;
    }
    memcpy(buf, PyArray_DATA((PyArrayObject *)obj),
           (size_t)gr_dtypes[t].size);
    return 0;
}

PyObject *py_bin_index(PyObject *self, PyObject *args)
{
    PyObject *ao, *eo, *io, *lo, *hi, *dn;
    int uniform = 0, dev = -1, rc = -1;
    gr_block *blk[3] = {NULL, NULL, NULL};
    gr_bins_call c;
    gr_status st = {0};
    size_t eoff = 0, ne = 0, ioff = 0, ni = 0;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "OOOpOOO", &ao, &eo, &io, &uniform, &lo, &hi,
                          &dn) ||
        forked_check() != 0) {
        return NULL;
    }
    if (bin_array(ao, "a", &dev, &blk[0], &c.t, &c.aoff, &c.n) != 0 ||
        bin_array(eo, "edges", &dev, &blk[1], &c.e, &eoff, &ne) != 0 ||
        bin_array(io, "idx", &dev, &blk[2], &c.i, &ioff, &ni) != 0 ||
        bin_value(lo, c.e, c.lo) != 0 || bin_value(hi, c.e, c.hi) != 0 ||
        bin_value(dn, c.e, c.denom) != 0) {
        goto done;
    }
    if (ne < 2 || ne - 1 > UINT32_MAX - 1 || ni != c.n || eoff != 0 ||
        ioff != 0 || c.t > GR_FLOAT64 || c.e > GR_FLOAT64 ||
        !(c.i == GR_UINT8 || c.i == GR_UINT16 || c.i == GR_UINT32) ||
        ne - 1 >= ((size_t)1 << (8 * gr_dtypes[c.i].size)) - 1) {
        PyErr_SetString(PyExc_ValueError, "bin_index: bad edges or index "
                        "array");
        goto done;
    }
    c.uniform = uniform;
    c.nb = (unsigned)(ne - 1);
    c.a = blk[0]->mem;
    c.edges = blk[1]->mem;
    c.idx = blk[2]->mem;
    Py_BEGIN_ALLOW_THREADS
    rc = gr_bins_run(dev, &c, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
    }
done:
    for (int i = 0; i < 3; ++i) {
        if (blk[i] != NULL) {
            gr_block_put(blk[i]);
        }
    }
    if (rc != 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* sort_keys(keys, vals, max_key) -> (keys, vals): a stable radix sort of
 * uint32 keys (a 1-D contiguous device Array, every key <= max_key) and
 * their values (a 1-D contiguous Array of 4 or 8 bytes an element, or
 * None) on the device, as new Arrays (vals None where none came). */
PyObject *py_sort_keys(PyObject *self, PyObject *args)
{
    PyObject *ko, *vo;
    unsigned long long max_key;
    int dev = -1, rc = -1;
    gr_block *blk[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
    gr_dtype kt, vt = GR_NDTYPES;
    size_t koff = 0, voff = 0, n = 0, nv = 0;
    gr_status st = {0};
    PyObject *res = NULL;
    if (!PyArg_ParseTuple(args, "OOK", &ko, &vo, &max_key) ||
        forked_check() != 0) {
        return NULL;
    }
    if (bin_array(ko, "keys", &dev, &blk[0], &kt, &koff, &n) != 0 ||
        (vo != Py_None &&
         bin_array(vo, "vals", &dev, &blk[1], &vt, &voff, &nv) != 0)) {
        goto done;
    }
    if (kt != GR_UINT32 || (vo != Py_None && (nv != n ||
                                              !(vt == GR_UINT32 ||
                                                vt == GR_INT32 ||
                                                vt == GR_UINT64 ||
                                                vt == GR_INT64)))) {
        PyErr_SetString(PyExc_TypeError, "sort_keys: uint32 keys, 32- or "
                        "64-bit integer values of their length");
        goto done;
    }
    if (n > 0) {
        Py_BEGIN_ALLOW_THREADS
        rc = gr_bins_sort(dev, blk[0]->mem, koff,
                          blk[1] ? blk[1]->mem : NULL, voff, vt, n,
                          (uint64_t)max_key, &out[0], &out[1], &st);
        Py_END_ALLOW_THREADS
        if (rc != 0) {
            gr_raise(&st);
            goto done;
        }
    } else if ((out[0] = gr_block_get(gr_device_get(dev), 8, &st)) == NULL ||
               (vo != Py_None &&
                (out[1] = gr_block_get(gr_device_get(dev), 8, &st)) == NULL)) {
        gr_raise(&st);
        goto done;
    }
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *rk = wrap_block(out[0], GR_UINT32, dims, 1);
    out[0] = NULL;
    PyObject *rv = Py_NewRef(Py_None);
    if (out[1] != NULL) {
        Py_SETREF(rv, wrap_block(out[1], vt, dims, 1));
        out[1] = NULL;
    }
    res = rk && rv ? Py_BuildValue("(OO)", rk, rv) : NULL;
    Py_XDECREF(rk);
    Py_XDECREF(rv);
done:
    for (int i = 0; i < 2; ++i) {
        if (blk[i] != NULL) {
            gr_block_put(blk[i]);
        }
        if (out[i] != NULL) {
            gr_block_put(out[i]);
        }
    }
    return res;
}

/* float_key(bits, key, expo, qnan): gpured.unique's order-preserving
 * keys of float bits (a 1-D contiguous uint16/uint32/uint64 Array) into
 * key (uint32/uint64 of its length, at least as wide). */
PyObject *py_float_key(PyObject *self, PyObject *args)
{
    PyObject *ao, *ko;
    unsigned long long expo, qnan;
    int dev = -1, rc = -1;
    gr_block *blk[2] = {NULL, NULL};
    gr_dtype t, kt;
    size_t aoff = 0, n = 0, koff = 0, nk = 0;
    gr_status st = {0};
    if (!PyArg_ParseTuple(args, "OOKK", &ao, &ko, &expo, &qnan) ||
        forked_check() != 0) {
        return NULL;
    }
    if (bin_array(ao, "bits", &dev, &blk[0], &t, &aoff, &n) != 0 ||
        bin_array(ko, "key", &dev, &blk[1], &kt, &koff, &nk) != 0) {
        goto done;
    }
    if (!(t == GR_UINT16 || t == GR_UINT32 || t == GR_UINT64) ||
        !(kt == GR_UINT32 || kt == GR_UINT64) || nk != n || koff != 0 ||
        gr_dtypes[kt].size < gr_dtypes[t].size) {
        PyErr_SetString(PyExc_ValueError, "float_key: uint16/32/64 bits, "
                        "uint32/64 keys of their length");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_bins_fkey(dev, blk[0]->mem, aoff, t, n, (uint64_t)expo,
                      (uint64_t)qnan, blk[1]->mem, kt, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
    }
done:
    for (int i = 0; i < 2; ++i) {
        if (blk[i] != NULL) {
            gr_block_put(blk[i]);
        }
    }
    if (rc != 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}
