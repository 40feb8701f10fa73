/*
 * api_elementwise.c — the elementwise family's Python entry:
 *
 *   _core.elementwise(name, inputs, loop, out, wg_size=0, items=0)
 *
 * name: a NumPy ufunc's name (or "where"); inputs: device Arrays, or 0-d
 * NumPy arrays holding a scalar already in its loop type; loop: the
 * dtypes of NumPy's resolved loop (inputs..., output), as gpured's face
 * got them from the ufunc itself (ufunc.resolve_dtypes: NumPy's promotion
 * and weak Python scalars, never a second copy of its rules); out: the
 * result Array (the broadcast shape, any layout, any dtype the loop's
 * output casts to).  Inputs are broadcast against out's shape here, as
 * element strides (0 along broadcast axes); dispatch_elementwise.c does
 * the rest.  wg_size / items: the developer knobs of the launch geometry
 * (0: plan_elementwise.c's choice; benchmarks/exp/ew_plan_h200.py).
 */
#include "api.h"
#include "elementwise.h"

/* Broadcast operand o (nd dims) to the result's shape as element
 * strides; 0, or -1 with ValueError. */
static int broadcast(const gr_operand *o, const gr_operand *out,
                     gr_ew_operand *e)
{
    const ptrdiff_t isz = gr_dtypes[o->t].size;
    const int lead = out->nd - o->nd;
    if (lead < 0 || o->off % (size_t)isz != 0) {
        goto bad;
    }
    e->off = o->off / (size_t)isz;
    for (int i = 0; i < out->nd; ++i) {
        const int j = i - lead;
        if (j < 0 || (o->shape[j] == 1 && out->shape[i] != 1)) {
            e->str[i] = 0;
        } else if (o->shape[j] == out->shape[i] && o->strides[j] % isz == 0) {
            e->str[i] = o->strides[j] / isz;
        } else {
            goto bad;
        }
    }
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "elementwise: operands could not be "
                    "broadcast to the result's shape (or a misaligned view)");
    return -1;
}

/* take's table: a contiguous 1-D Array read at its offset plus each
 * index (strides 0: no broadcast against the indices' shape). */
static int take_table(const gr_operand *o, gr_ew_operand *e)
{
    const ptrdiff_t isz = gr_dtypes[o->t].size;
    if (o->nd != 1 || o->off % (size_t)isz != 0 ||
        (o->shape[0] > 1 && o->strides[0] != isz)) {
        PyErr_SetString(PyExc_ValueError, "take: the table must be a "
                        "contiguous 1-D Array");
        return -1;
    }
    e->off = o->off / (size_t)isz;
    memset(e->str, 0, sizeof e->str);
    return 0;
}

static int loop_type(PyObject *loop, Py_ssize_t i, gr_dtype *t)
{
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter(PyTuple_GET_ITEM(loop, i), &descr)) {
        return -1;
    }
    int r = gr_dtype_of(descr, "elementwise operand");
    Py_DECREF(descr);
    if (r < 0) {
        return -1;
    }
    *t = (gr_dtype)r;
    return 0;
}

/* A scalar input: its bytes in the loop type t. */
static int value_of(PyObject *obj, gr_dtype t, gr_ew_operand *e)
{
    PyArray_Descr *descr = gr_descr_of(t);
    PyArrayObject *v = descr == NULL ? NULL :
        (PyArrayObject *)PyArray_FromAny(obj, descr, 0, 0, NPY_ARRAY_DEFAULT,
                                         NULL);  /* steals descr */
    if (v == NULL) {
        return -1;
    }
    if (PyArray_NDIM(v) != 0) {
        Py_DECREF(v);
        PyErr_SetString(PyExc_TypeError, "elementwise: an input is neither "
                        "a device Array nor a scalar");
        return -1;
    }
    e->kind = GR_EW_VALUE;
    e->s = t;
    memcpy(e->value, PyArray_DATA(v), (size_t)gr_dtypes[t].size);
    Py_DECREF(v);
    return 0;
}

/* Arrays' operands, retained blocks in blk[] (put by the caller). */
static int operands(PyObject *ins, PyObject *loop, const gr_operand *out,
                    int dev, gr_ew_call *c, gr_block **blk)
{
    for (int i = 0; i < c->nin; ++i) {
        PyObject *obj = PyTuple_GET_ITEM(ins, i);
        gr_ew_operand *e = &c->in[i];
        gr_array *a = gr_array_of(obj);
        int odev = -1;
        if (loop_type(loop, i, &e->t) != 0) {
            return -1;
        }
        if (a == NULL) {
            if (value_of(obj, e->t, e) != 0) {
                return -1;
            }
            continue;
        }
        gr_operand o;
        if (gr_array_compute_operand(a, &o, &odev) != 0) {
            return -1;
        }
        blk[i] = o.blk;
        if (odev != dev) {
            PyErr_SetString(PyExc_ValueError,
                            "arrays on two devices: move one first");
            return -1;
        }
        e->kind = GR_EW_STRIDED;
        e->s = o.t;
        e->mem = o.blk->mem;
        if ((c->op == 91 || c->op == 92) && i == 1) {
            if (take_table(&o, e) != 0) {
                return -1;
            }
            continue;
        }
        if (broadcast(&o, out, e) != 0) {
            return -1;
        }
    }
    return 0;
}

static int type_checks(const char *name, int float_only, const gr_ew_call *c,
                       int dev)
{
    const gr_device *d = gr_device_get(dev);
    const gr_dtype arith = c->op >= 90 ? c->in[1].t : c->in[0].t;
    if (float_only && !gr_dtypes[arith].is_float) {
        PyErr_Format(PyExc_TypeError, "np.%s of %s runs on gpured Arrays "
                     "in float32 or float64 only: astype() first, or "
                     "np.asarray(a) to compute on the host", name,
                     gr_dtypes[arith].name);
        return -1;
    }
    for (int i = 0; i < c->nin; ++i) {
        if (fp64_check(d, c->in[i].s) != 0 || fp64_check(d, c->in[i].t) != 0) {
            return -1;
        }
    }
    return fp64_check(d, c->out.s) != 0 || fp64_check(d, c->out.t) != 0
               ? -1 : 0;
}

/* elementwise(name, inputs, loop, out, wg_size=0, items=0) -> None (out
 * written) */
PyObject *py_elementwise(PyObject *self, PyObject *args)
{
    const char *name = NULL;
    PyObject *ins = NULL, *loop = NULL, *outo = NULL;
    gr_block *blk[4] = {NULL, NULL, NULL, NULL};
    gr_ew_call c;
    gr_operand out;
    gr_status st = {0};
    int dev = -1, fl = 0, rc = -1;
    Py_ssize_t wg = 0, items = 0;
    gr_array *oa;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "sO!O!O|nn", &name, &PyTuple_Type, &ins,
                          &PyTuple_Type, &loop, &outo, &wg, &items) ||
        forked_check() != 0) {
        return NULL;
    }
    if (wg < 0 || items < 0) {
        PyErr_SetString(PyExc_ValueError, "elementwise: wg_size and items "
                        "must be >= 0");
        return NULL;
    }
    if ((c.op = gr_ew_find(name, &c.nin, &fl)) < 0 ||
        PyTuple_GET_SIZE(ins) != c.nin ||
        PyTuple_GET_SIZE(loop) != c.nin + 1 ||
        (oa = gr_array_of(outo)) == NULL) {
        PyErr_Format(PyExc_TypeError, "elementwise: bad call of '%s'", name);
        return NULL;
    }
    if (gr_array_compute_operand(oa, &out, &dev) != 0) {
        return NULL;
    }
    blk[3] = out.blk;
    c.out.s = out.t;
    c.out.mem = out.blk->mem;
    c.nd = out.nd;
    for (int i = 0; i < out.nd; ++i) {
        c.shape[i] = out.shape[i];
    }
    if (loop_type(loop, c.nin, &c.out.t) != 0 ||
        broadcast(&out, &out, &c.out) != 0 ||
        operands(ins, loop, &out, dev, &c, blk) != 0 ||
        type_checks(name, fl, &c, dev) != 0) {
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_ew_run(dev, &c, (size_t)wg, (size_t)items, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
    }
done:
    for (int i = 0; i < 4; ++i) {
        if (blk[i] != NULL) {
            gr_block_put(blk[i]);
        }
    }
    if (rc != 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}
