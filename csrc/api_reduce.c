/*
 * api_reduce.c — the api layer's reductions: _core.reduce (sum, prod,
 * min, max, all, any, mean, argmin, argmax and their nan / var / std /
 * ptp / average / count forms) with NumPy's semantics, one phase per
 * static function below, run in order by reduce_impl.
 */
#include "api.h"

/* A reduction's call: the shared api_call and its own arguments. */
typedef struct {
    api_call c;
    PyObject *axis, *dtype, *out, *initial, *where; /* borrowed          */
    int keepdims;
    double ddof;             /* var/std: `initial` carries ddof          */
    PyObject *ddof_o;        /* (borrowed; NULL: not given)              */
    PyObject *wkeep;         /* where=/weights kept alive (owned)        */
    PyObject *init_arr;      /* initial converted by NumPy (owned)       */
    gr_array *oa;            /* out: a device array                      */
    PyArrayObject *oh;       /* out: an ndarray                          */
    int mean_via_numpy;      /* NumPy divides into an out of another type */
    size_t count;            /* elements per result                      */
} red_call;

/* Arguments: knobs, ddof (var/std's `initial`), keepdims. */
static int red_args(red_call *r, PyObject *kw, PyObject *keepdims_o)
{
    const fdef *f = r->c.f;
    if (knobs_of(kw, "variant wg_size groups items ilp vw device exact",
                 f->name, &r->c.k) != 0) {
        return -1;
    }
    if (r->c.k.exact && (f->op != GR_ADD || f->count || f->ptp ||
                         (f->var && f->var != GR_VK_NANMEAN))) {
        PyErr_Format(PyExc_TypeError, "exact=True is for sum, mean, nansum "
                     "and nanmean (not %s)", f->name);
        return -1;
    }
    /* var/std: `initial` carries ddof (a real number, NumPy's) */
    if (f->var) {
        if (!no_value(r->initial) && r->initial != Py_None) {
            r->ddof = PyFloat_AsDouble(r->initial);
            if (r->ddof == -1.0 && PyErr_Occurred()) {
                return -1;
            }
            r->ddof_o = r->initial;
        }
        r->initial = NULL;
    }
    if (f->is_arg) {
        /* NumPy's argmin/argmax take keepdims by its truth value */
        r->keepdims = keepdims_o ? PyObject_IsTrue(keepdims_o) : 0;
        return r->keepdims < 0 ? -1 : 0;
    }
    return index_flag(keepdims_o, &r->keepdims);
}

/* NumPy subclasses (masked arrays, matrices, ...) answer through NumPy,
 * which defers to their own methods: never a silent plain reduction of
 * their data. */
static PyObject *red_defer(red_call *r, PyObject *a)
{
    const fdef *f = r->c.f;
    PyObject *result = NULL;
    PyObject *args = PyTuple_Pack(1, a);
    PyObject *kwd = PyDict_New();
    if (args == NULL || kwd == NULL ||
        PyDict_SetItemString(kwd, "axis", r->axis ? r->axis : Py_None) != 0 ||
        (f->dtype_ok &&
         PyDict_SetItemString(kwd, "dtype",
                              r->dtype ? r->dtype : Py_None) != 0) ||
        (!is_none(r->out) && PyDict_SetItemString(kwd, "out", r->out) != 0) ||
        (!is_none(r->where) &&
         PyDict_SetItemString(kwd, "where", r->where) != 0) ||
        (r->keepdims && PyDict_SetItemString(kwd, "keepdims", Py_True) != 0) ||
        (!no_value(r->initial) &&
         PyDict_SetItemString(kwd, "initial", r->initial) != 0) ||
        (r->ddof_o != NULL &&
         PyDict_SetItemString(kwd, "ddof", r->ddof_o) != 0)) {
        Py_XDECREF(args);
        Py_XDECREF(kwd);
        return NULL;
    }
    result = numpy_call(f->name, args, kwd);
    Py_DECREF(args);
    Py_DECREF(kwd);
    return result;
}

/* Axes: mean checks them against a 0-d array's 0 dimensions (NumPy's
 * _mean), the ufunc reductions and argmin/argmax take 0 / -1. */
static int red_axes(red_call *r)
{
    const fdef *f = r->c.f;
    gr_request *req = &r->c.req;
    const int nd = req->in.nd;
    /* (NumPy's nanmean/nanvar/nanstd of floats reduce with sums, and
     * mean/var/std count a where= mask with one: ufunc rules, a 0-d
     * array's axis 0; nan* of other types are mean/var/std) */
    const int strict0 = f->is_mean && is_none(r->where) &&
                        !(f->nan && gr_dtypes[req->in.t].is_float);
    if (axes_of(r->axis, nd, !f->is_arg, strict0,
                f->is_mean && mean_bool_axes, f->is_mean, &req->axes) != 0) {
        return -1;
    }
    if (f->is_arg && is_none(r->axis)) {
        req->axes = nd >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nd) - 1);
    }
    req->ordered = f->is_arg;
    return 0;
}

/* Whether where='s operand reads as the input's shape (or as average's
 * 1-d weights along the one reduced axis, setting req->wax). */
static int red_where_fits(gr_request *req)
{
    const int nd = req->in.nd;
    int same = (req->mask.t == GR_BOOL || req->wmode == GR_WM_WEIGHTS) &&
               req->mask.nd == nd;
    for (int i = 0; same && i < nd; ++i) {
        same = req->mask.shape[i] == req->in.shape[i];
    }
    if (!same && req->wmode == GR_WM_WEIGHTS && req->mask.nd == 1) {
        /* 1-d weights along the one reduced axis (of more than one
         * element, or the first of length 1 where all are): read by
         * position in the segment */
        int k = -1, n = 0, k1 = -1;
        for (int i = 0; i < nd; ++i) {
            if ((req->axes >> i & 1) && req->in.shape[i] != 1) {
                k = i;
                ++n;
            } else if ((req->axes >> i & 1) && k1 < 0) {
                k1 = i;
            }
        }
        if (n == 0 && k1 >= 0) {
            k = k1;
            n = 1;
        }
        if (n == 1 && req->in.shape[k] == req->mask.shape[0]) {
            req->wax = k;
            same = 1;
        }
    }
    return same;
}

/* where= (or average's weights): the mask operand. */
static int red_where(red_call *r)
{
    gr_request *req = &r->c.req;
    if (is_none(r->where)) {
        if (r->c.f->var == GR_VK_RATIO) {
            PyErr_SetString(PyExc_TypeError, "_average needs its weights");
            return -1;
        }
        return 0;
    }
    if (r->c.f->minmax && !r->c.f->ptp &&
        (no_value(r->initial) || r->initial == Py_None)) {
        /* NumPy's rule, checked after the axes as NumPy does: min/max
         * (fmin/fmax) have no identity */
        PyErr_Format(PyExc_ValueError, "reduction operation '%s' does not "
                     "have an identity, so to use a where mask one has to "
                     "specify 'initial'", r->c.f->ufunc);
        return -1;
    }
    /* where=: a bool mask of a's shape (the Python face converts and
     * broadcasts it; a host input's mask on the host) */
    int wd = r->c.device_in ? r->c.dev : -1;
    if (!r->c.device_in && gr_array_of(r->where) != NULL) {
        PyErr_SetString(PyExc_ValueError, "where: a device mask for a "
                        "host array (the Python face downloads it)");
        return -1;
    }
    if (operand_of(r->where, &req->mask, &r->wkeep, &wd, "where") != 0) {
        return -1;
    }
    /* average's weights: any dtype, converted in the loads */
    req->wmode = r->c.f->var == GR_VK_RATIO ? GR_WM_WEIGHTS : GR_WM_WHERE;
    req->wax = -1;
    if (!red_where_fits(req)) {
        PyErr_SetString(PyExc_ValueError, "where: a bool mask of the "
                        "array's shape (the Python face broadcasts it)");
        return -1;
    }
    return 0;
}

/* NumPy's result dtype (dtype=, the function's rule, out's). */
static int red_result_dtype(red_call *r)
{
    const fdef *f = r->c.f;
    api_call *c = &r->c;
    if (f->dtype_ok) {
        if (dtype_arg_ex(r->dtype, 1, &c->rt_i) != 0) {
            return -1;
        }
    } else if (!is_none(r->dtype)) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword "
                     "argument 'dtype'", f->name);
        return -1;
    }
    const gr_dtype in_t = c->req.in.t;
    switch (f->rt) {
    case RT_SUM:
        c->rt = c->rt_i >= 0 ? (gr_dtype)c->rt_i : sum_dtype(in_t);
        break;
    case RT_MEAN:
        c->rt = c->rt_i >= 0 ? (gr_dtype)c->rt_i
                : gr_dtypes[in_t].is_float ? in_t : GR_FLOAT64;
        break;
    case RT_BOOL:
        c->rt = GR_BOOL;
        break;
    case RT_INDEX:
        c->rt = GR_INT64;
        break;
    default:
        c->rt = in_t;
    }
    if (GR_IS_HALF(c->rt)) {
        c->rt = GR_FLOAT32; /* halves compute into float32 (red_half_check) */
    }
    if (!is_none(r->out) && c->rt_i < 0 && f->out_kind &&
        (gr_array_of(r->out) != NULL || PyArray_Check(r->out)) &&
        out_dtype_rule(r->out, in_t, &c->rt) != 0) {
        return -1;
    }
    return call_fp64(c);
}

/* float16/bfloat16 inputs (issue 40), device Arrays and NumPy arrays
 * alike (never the host C loops: dispatch_reduce.c): the first pass reads
 * them itself (kernels/common.cl GR_ELT) for the plain sum, mean, min, max,
 * argmin and argmax, into float32/float64 results (red_result_dtype); the
 * Python face widens every other call to float32 first (gpured/_half.py),
 * so anything else reaching here is refused. */
static int red_half_check(const red_call *r)
{
    const gr_request *q = &r->c.req;
    const fdef *f = r->c.f;
    if (!GR_IS_HALF(q->in.t)) {
        return 0;
    }
    if (!f->count && !f->nan && !f->var && !f->ptp &&
        !q->mask.present && !r->c.k.exact && is_none(r->out) &&
        (no_value(r->initial) || r->initial == Py_None) &&
        (f->op == GR_ADD || f->op == GR_MIN || f->op == GR_MAX ||
         f->op == GR_ARGMIN || f->op == GR_ARGMAX)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "gpured: %s input is read natively only "
                 "by sum, mean, min, max, argmin and argmax; the public "
                 "functions widen it to float32 first",
                 gr_dtypes[q->in.t].name);
    return -1;
}

/* min/max into an out= whose cast is not monotone (into bool from
 * another type; integers narrowed or re-signed; floats into integers,
 * monotone only in range), no initial=: NumPy
 * copies each result's first element (index 0 along the reduced axes)
 * into out, reads it back into the loop dtype and reduces the rest there,
 * so that element counts as (rt)(out's type)element: np.min(float32
 * [-1, 0], out=bool) compares 1.0 with 0.0, False.  Where the cast is
 * monotone the plain reduction in rt gives the same.  Out's dtype, or -1.
 * (NumPy reads out back again every 8192 elements of its buffer; not
 * followed.) */
static int red_first_via(const red_call *r)
{
    const fdef *f = r->c.f;
    const gr_dtype in_t = r->c.req.in.t;
    const int ot = f->minmax && !f->ptp &&
                   (no_value(r->initial) || r->initial == Py_None)
                       ? out_gr_dtype(r->out) : -1;
    if (ot < 0 || ot == (int)in_t) {
        return -1;
    }
    if (ot == GR_BOOL) {
        return ot;
    }
    if (in_t == GR_BOOL || gr_dtypes[ot].is_float) {
        return -1;
    }
    PyArray_Descr *id = gr_descr_of(in_t), *od = gr_descr_of((gr_dtype)ot);
    const int safe = id && od && PyArray_CanCastTypeTo(id, od,
                                                        NPY_SAFE_CASTING);
    Py_XDECREF(id);
    Py_XDECREF(od);
    return safe ? -1 : ot;
}

/* x (a new array of the loop dtype) with its first elements along the
 * reduced axes cast into ot and back (red_first_via). */
static int first_through_host(PyArrayObject *x, uint64_t axes, gr_dtype ot)
{
    const int nd = PyArray_NDIM(x);
    npy_intp shp[NPY_MAXDIMS];
    for (int i = 0; i < nd; ++i) {
        shp[i] = (axes >> i & 1) ? 1 : PyArray_DIM(x, i);
    }
    PyArray_Descr *xd = PyArray_DESCR(x);
    Py_INCREF(xd);
    PyObject *v = PyArray_NewFromDescr(&PyArray_Type, xd, nd, shp,
                                       PyArray_STRIDES(x), PyArray_DATA(x),
                                       NPY_ARRAY_WRITEABLE |
                                           NPY_ARRAY_ALIGNED, NULL);
    if (v == NULL) {
        return -1;
    }
    Py_INCREF(x);
    if (PyArray_SetBaseObject((PyArrayObject *)v, (PyObject *)x) != 0) {
        Py_DECREF(v);
        return -1;
    }
    PyArray_Descr *od = gr_descr_of(ot);
    PyObject *o = od ? PyArray_CastToType((PyArrayObject *)v, od, 0) : NULL;
    const int rc = o ? PyArray_CopyInto((PyArrayObject *)v,
                                        (PyArrayObject *)o) : -1;
    Py_XDECREF(o);
    Py_DECREF(v);
    return rc;
}

/* A device input's red_first_via: a C-ordered copy in the loop dtype
 * (rt), its first elements through ot, replaces the request's input. */
static int first_through_device(api_call *c, gr_dtype ot)
{
    gr_operand *in = &c->req.in;
    gr_operand x = *in, s, o;
    gr_epilogue epi;
    gr_status st = {0};
    const size_t n = operand_size(in);
    size_t acc = 1, m = 1;
    int rc;
    x.t = c->rt;
    x.blk = NULL;
    x.host = NULL;
    x.off = 0;
    for (int i = x.nd - 1; i >= 0; --i) {
        x.strides[i] = (ptrdiff_t)(acc * (size_t)gr_dtypes[x.t].size);
        acc *= x.shape[i];
    }
    s = x;
    for (int i = 0; i < s.nd; ++i) {
        s.shape[i] = (c->req.axes >> i & 1) ? 1 : s.shape[i];
    }
    o = s;
    o.t = ot;
    for (int i = o.nd - 1; i >= 0; --i) {
        o.strides[i] = (ptrdiff_t)(m * (size_t)gr_dtypes[ot].size);
        m *= o.shape[i];
    }
    memset(&epi, 0, sizeof epi);
    epi.mode = GR_EPI_CAST;
    const size_t xb = n * (size_t)gr_dtypes[x.t].size;
    const size_t ob = m * (size_t)gr_dtypes[ot].size;
    Py_BEGIN_ALLOW_THREADS
    gr_device *d = gr_device_get(c->dev);
    rc = gr_device_ready(c->dev, &st);
    if (rc == 0 && ((x.blk = gr_block_get(d, xb, &st)) == NULL ||
                    (o.blk = gr_block_get(d, ob, &st)) == NULL)) {
        rc = -1;
    }
    s.blk = x.blk;
    rc = rc != 0 ? rc
         : gr_operand_copy(in, &x, &epi, &st) != 0 ||
                   gr_operand_copy(&s, &o, &epi, &st) != 0 ||
                   gr_operand_copy(&o, &s, &epi, &st) != 0 ? -1 : 0;
    Py_END_ALLOW_THREADS
    if (o.blk != NULL) {
        gr_block_put(o.blk);
    }
    if (rc != 0) {
        if (x.blk != NULL) {
            gr_block_put(x.blk);
        }
        gr_raise(&st);
        return -1;
    }
    gr_block_put(in->blk);
    *in = x;
    return 0;
}

/* Refusals of the result dtype, and min/max's host input cast to it
 * (with red_first_via's first elements). */
static int red_dtype_checks(red_call *r)
{
    const fdef *f = r->c.f;
    api_call *c = &r->c;
    if (f->var && !gr_dtypes[c->rt].is_float) {
        PyErr_Format(PyExc_TypeError, "%s: dtype %s is not a float type (the "
                     "Python face answers others through NumPy)", f->name,
                     gr_dtypes[c->rt].name);
        return -1;
    }
    if (f->ptp && c->rt == GR_BOOL && operand_size(&c->req.in) != 0) {
        /* NumPy's ptp subtracts: booleans refuse (an empty input: the
         * max's error first, red_empty's) */
        PyErr_SetString(PyExc_TypeError, "numpy boolean subtract, the `-` "
                        "operator, is not supported, use the bitwise_xor, the "
                        "`^` operator, or the logical_xor function instead.");
        return -1;
    }
    const int fv = c->device_in ? -1 : red_first_via(r);
    if (f->minmax && (c->rt != c->req.in.t || fv >= 0) && c->keep != NULL &&
        !c->device_in) {
        /* min/max compare in the result dtype: a host input is cast
         * first (NumPy's unsafe cast); device inputs are cast in
         * dispatch's copy (or first_through_device's) */
        PyArray_Descr *rd = gr_descr_of(c->rt);
        PyObject *cast = rd ? PyArray_CastToType((PyArrayObject *)c->keep, rd,
                                                 0)
                            : NULL;
        if (cast == NULL ||
            (fv >= 0 && first_through_host((PyArrayObject *)cast,
                                           c->req.axes, (gr_dtype)fv) != 0)) {
            Py_XDECREF(cast);
            return -1;
        }
        Py_SETREF(c->keep, cast);
        c->req.in.host = PyArray_DATA((PyArrayObject *)cast);
        c->req.in.t = c->rt;
        for (int i = 0; i < c->req.in.nd; ++i) {
            c->req.in.strides[i] = PyArray_STRIDE((PyArrayObject *)cast, i);
        }
    }
    return 0;
}

/* initial= as NumPy holds it with an out= of another dtype: put into out
 * (cast) before the loop reads it back into rt (np.min(float32 [-1, 0],
 * out=bool, initial=5) starts from 1.0; sum(float32 [0.5], out=int32,
 * initial=0.5) from 0.0). */
static int red_initial_via_out(red_call *r)
{
    gr_request *req = &r->c.req;
    const int ot = out_gr_dtype(r->out);
    if (!req->has_initial || ot < 0 || ot == (int)r->c.rt) {
        return 0;
    }
    PyArray_Descr *rd = gr_descr_of(r->c.rt), *od = gr_descr_of((gr_dtype)ot);
    PyObject *z = NULL, *o = NULL, *b = NULL;
    const size_t sz = (size_t)gr_dtypes[r->c.rt].size;
    if (rd != NULL && od != NULL) {
        Py_INCREF(rd);
        z = PyArray_Empty(0, NULL, rd, 0);
    }
    if (z != NULL) {
        memcpy(PyArray_DATA((PyArrayObject *)z), req->initial, sz);
        o = PyArray_CastToType((PyArrayObject *)z, od, 0);
        od = NULL; /* (stolen) */
    }
    if (o != NULL) {
        b = PyArray_CastToType((PyArrayObject *)o, rd, 0);
        rd = NULL;
    }
    if (b != NULL) {
        memcpy(req->initial, PyArray_DATA((PyArrayObject *)b), sz);
    }
    Py_XDECREF(rd);
    Py_XDECREF(od);
    Py_XDECREF(z);
    Py_XDECREF(o);
    Py_XDECREF(b);
    return b != NULL ? 0 : -1;
}

/* The request's dtypes and operator (bool add / multiply: or / and). */
static void red_request_dtypes(red_call *r)
{
    const fdef *f = r->c.f;
    gr_request *req = &r->c.req;
    const gr_dtype rt = r->c.rt;
    req->rt = rt;
    req->st = rt;
    req->op = f->op;
    if (rt == GR_BOOL && f->op == GR_ADD) {
        req->op = GR_ANY; /* NumPy's bool add / multiply: or / and */
    } else if (rt == GR_BOOL && f->op == GR_MUL) {
        req->op = GR_ALL;
    }
    if (f->is_mean) {
        req->st = gr_dtypes[rt].is_float
                      ? (r->c.d->fp64 ? GR_FLOAT64 : GR_FLOAT32)
                      : rt;
        if (rt == GR_BOOL) {
            req->op = GR_ANY; /* mean(dtype=bool): NumPy's sum is or */
        }
    }
}

/* The result's shape, and out= checked against it. */
static int red_out(red_call *r)
{
    api_call *c = &r->c;
    const gr_request *req = &c->req;
    for (int i = 0; i < req->in.nd; ++i) {
        if (req->axes >> i & 1) {
            if (r->keepdims) {
                c->shape[c->rnd++] = 1;
            }
        } else {
            c->shape[c->rnd++] = (npy_intp)req->in.shape[i];
        }
    }
    if (is_none(r->out)) {
        return 0;
    }
    if (out_check(r->out, c->shape, c->rnd, c->f->ufunc, &c->dev) != 0) {
        return -1;
    }
    if (c->f->is_arg) {
        /* NumPy's argmin/argmax take an out whose dtype casts safely to
         * intp (int8..int64, uint8..uint32, bool) */
        PyArray_Descr *od = gr_array_of(r->out)
                                ? gr_array_of(r->out)->descr
                                : PyArray_DESCR((PyArrayObject *)r->out);
        PyArray_Descr *ip = PyArray_DescrFromType(NPY_INTP);
        int ok = PyArray_CanCastTypeTo(od, ip, NPY_SAFE_CASTING);
        Py_DECREF(ip);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "Cannot cast scalar from %R to "
                         "dtype('int64') according to the rule 'safe'",
                         (PyObject *)od);
            return -1;
        }
    }
    return 0;
}

/* initial's common cases without NumPy's call (~2 us): a Python float
 * into a float result that holds it, a Python int into int64 or an
 * int32 that holds it (NumPy's conversion gives the same).  1: done. */
static int red_initial_fast(red_call *r)
{
    PyObject *initial = r->initial;
    gr_request *req = &r->c.req;
    const gr_dtype rt = r->c.rt;
    if (PyFloat_CheckExact(initial) &&
        (rt == GR_FLOAT64 ||
         (rt == GR_FLOAT32 && !(fabs(PyFloat_AS_DOUBLE(initial)) > FLT_MAX &&
                                isfinite(PyFloat_AS_DOUBLE(initial)))))) {
        const double v = PyFloat_AS_DOUBLE(initial);
        const float f4 = (float)v;
        req->has_initial = 1;
        if (rt == GR_FLOAT64) {
            memcpy(req->initial, &v, 8);
        } else {
            memcpy(req->initial, &f4, 4);
        }
        return 1;
    }
    if (PyLong_CheckExact(initial) && (rt == GR_INT64 || rt == GR_INT32)) {
        int of = 0;
        const long long v = PyLong_AsLongLongAndOverflow(initial, &of);
        if (!of && !(v == -1 && PyErr_Occurred()) &&
            (rt == GR_INT64 || (v >= INT32_MIN && v <= INT32_MAX))) {
            const int64_t v8 = v;
            const int32_t v4 = (int32_t)v;
            req->has_initial = 1;
            if (rt == GR_INT64) {
                memcpy(req->initial, &v8, 8);
            } else {
                memcpy(req->initial, &v4, 4);
            }
            return 1;
        }
        PyErr_Clear();
    }
    return 0;
}

/* initial as NumPy converts it: the ufunc's reduce of an empty array of
 * the result dtype with this initial (r->init_arr; NULL: its error). */
static void red_initial_numpy(red_call *r)
{
    PyArray_Descr *rd = gr_descr_of(r->c.rt);
    PyObject *uf = rd ? PyObject_GetAttrString(np_module, r->c.f->init_uf)
                      : NULL;
    npy_intp zero = 0;
    PyObject *empty = NULL, *args = NULL, *kw0 = NULL, *res = NULL;
    if (uf != NULL) {
        Py_INCREF(rd);
        empty = PyArray_Empty(1, &zero, rd, 0);
    }
    PyObject *red = empty ? PyObject_GetAttrString(uf, "reduce") : NULL;
    if (red != NULL) {
        args = PyTuple_Pack(1, empty);
        kw0 = Py_BuildValue("{s:O,s:O}", "dtype", (PyObject *)rd, "initial",
                            r->initial);
    }
    if (args && kw0) {
        res = PyObject_Call(red, args, kw0);
    }
    if (res != NULL) {
        Py_INCREF(rd);
        r->init_arr = PyArray_FromAny(res, rd, 0, 0, 0, NULL);
    }
    Py_XDECREF(res);
    Py_XDECREF(kw0);
    Py_XDECREF(args);
    Py_XDECREF(red);
    Py_XDECREF(empty);
    Py_XDECREF(uf);
    Py_XDECREF(rd);
}

/* initial, converted as NumPy converts it (None: no initial): into the
 * result dtype exactly as NumPy puts it there (Python ints through range
 * checks, NumPy scalars and 0-d arrays by NumPy's own rules, which differ
 * by kind); larger arrays refused. */
static int red_initial(red_call *r)
{
    PyObject *initial = r->initial;
    if (no_value(initial) || initial == Py_None) {
        return 0;
    }
    if (r->c.f->init_uf == NULL) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword "
                     "argument 'initial'", r->c.f->name);
        return -1;
    }
    if (PyArray_Check(initial) && PyArray_NDIM((PyArrayObject *)initial) > 0) {
        PyErr_SetString(PyExc_ValueError,
                        "setting an array element with a sequence.");
        return -1;
    }
    if (red_initial_fast(r)) {
        return 0;
    }
    red_initial_numpy(r);
    if (r->init_arr == NULL) {
        return -1;
    }
    if (PyArray_NDIM((PyArrayObject *)r->init_arr) != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "setting an array element with a sequence.");
        return -1;
    }
    r->c.req.has_initial = 1;
    memcpy(r->c.req.initial, PyArray_DATA((PyArrayObject *)r->init_arr),
           (size_t)gr_dtypes[r->c.rt].size);
    return 0;
}

/* Empty input: NumPy's answer (identity, initial, or its error). */
static void red_empty(red_call *r)
{
    api_call *c = &r->c;
    if (c->mode == GR_EXPLAIN || c->mode == GR_BENCH) {
        call_empty_mode(c, "reduction");
        return;
    }
    PyObject *host = c->keep;
    PyObject *hobj = NULL;
    if (c->device_in) {
        npy_intp shp[GR_MAXDIMS];
        for (int i = 0; i < c->req.in.nd; ++i) {
            shp[i] = (npy_intp)c->req.in.shape[i];
        }
        hobj = PyArray_Empty(c->req.in.nd, shp, gr_descr_of(c->req.in.t), 0);
        if (hobj == NULL) {
            return;
        }
        host = hobj;
    }
    /* a device mask of an empty input: only its shape matters (NumPy
     * broadcasts it, or raises), so a host one of that shape stands in */
    PyObject *wobj = r->wkeep ? r->wkeep : r->where;
    PyObject *hw = NULL;
    gr_array *wa = is_none(r->where) ? NULL : gr_array_of(r->where);
    if (wa != NULL) {
        npy_intp wshp[GR_MAXDIMS];
        for (int i = 0; i < wa->nd; ++i) {
            wshp[i] = (npy_intp)wa->shape[i];
        }
        hw = PyArray_ZEROS(wa->nd, wshp, NPY_BOOL, 0);
        if (hw == NULL) {
            Py_XDECREF(hobj);
            return;
        }
        wobj = hw;
    }
    PyObject *args = PyTuple_Pack(1, host);
    PyObject *kwd = PyDict_New();
    int bad = args == NULL || kwd == NULL ||
              PyDict_SetItemString(kwd, "axis", r->axis ? r->axis : Py_None) ||
              (r->keepdims && PyDict_SetItemString(kwd, "keepdims", Py_True)) ||
              (!no_value(r->initial) &&
               PyDict_SetItemString(kwd, "initial", r->initial)) ||
              (c->rt_i >= 0 && PyDict_SetItemString(kwd, "dtype", r->dtype)) ||
              (r->ddof_o != NULL &&
               PyDict_SetItemString(kwd, "ddof", r->ddof_o)) ||
              (!is_none(r->where) &&
               PyDict_SetItemString(kwd, "where", wobj)) ||
              (!is_none(r->out) && gr_array_of(r->out) == NULL &&
               PyDict_SetItemString(kwd, "out", r->out));
    if (!bad) {
        c->result = numpy_call(c->f->name, args, kwd);
        c->result = host_result_to(c->result, is_none(r->out) ? NULL : r->out,
                                   c->device_in, c->dev);
        if (c->result != NULL && c->mode == GR_RUN_NANCHECK) {
            c->result = Py_BuildValue("(NO)", c->result, Py_None);
        }
    }
    Py_XDECREF(args);
    Py_XDECREF(kwd);
    Py_XDECREF(hobj);
    Py_XDECREF(hw);
}

/* exact=True: float elements summed exactly (integers and bools are
 * exact already, and their mean is NumPy's: the plain path); no where=. */
static int red_exact(red_call *r)
{
    gr_request *req = &r->c.req;
    if (!r->c.k.exact) {
        return 0;
    }
    if (!is_none(r->where)) {
        PyErr_SetString(PyExc_TypeError, "exact=True does not take where=");
        return -1;
    }
    req->exact = gr_dtypes[req->in.t].is_float;
    return 0;
}

/* A host out=: in place, or through a temporary (of the computed dtype
 * where NumPy's mean divides into an out of another type). */
static int red_dest_host(red_call *r)
{
    api_call *c = &r->c;
    PyArrayObject *oh = r->oh;
    PyArray_Descr *rd = gr_descr_of(c->rt);
    const int direct = rd != NULL && PyArray_ISCARRAY(oh) &&
                       PyArray_ISNOTSWAPPED(oh) &&
                       PyArray_EquivTypes(PyArray_DESCR(oh), rd);
    if (c->f->is_mean && !direct && !c->f->var && !c->req.exact) {
        /* NumPy's mean with an out of another type: the sum lands in
         * out (unsafe cast), then is divided there.  The division is
         * NumPy's, so the answer is NumPy's to the bit. */
        r->mean_via_numpy = 1;
        Py_XDECREF(rd);
        rd = gr_descr_of(c->req.st);
    }
    if (direct && !r->mean_via_numpy) {
        Py_XDECREF(rd);
    } else {
        c->tmp = rd ? PyArray_Empty(c->rnd, c->shape, rd, 0) : NULL;
        rd = NULL;
        if (c->tmp == NULL) {
            return -1;
        }
    }
    PyArrayObject *dst = c->tmp ? (PyArrayObject *)c->tmp : oh;
    c->req.out.present = 1;
    c->req.out.host = PyArray_DATA(dst);
    c->req.out.t = c->tmp && r->mean_via_numpy ? c->req.st : c->rt;
    return 0;
}

/* Where results go: a device out, a host out, a new host array (device
 * inputs: a block dispatch allocates). */
static int red_dest(red_call *r)
{
    api_call *c = &r->c;
    r->oa = is_none(r->out) ? NULL : gr_array_of(r->out);
    r->oh = (!is_none(r->out) && r->oa == NULL) ? (PyArrayObject *)r->out
                                                : NULL;
    if (r->oa != NULL) {
        return out_operand(r->out, &c->req.out);
    }
    if (r->oh != NULL) {
        return red_dest_host(r);
    }
    if (!c->device_in) {
        PyArray_Descr *rd = gr_descr_of(c->rt);
        c->tmp = rd ? PyArray_Empty(c->rnd, c->shape, rd, 0) : NULL;
        if (c->tmp == NULL) {
            return -1;
        }
        c->req.out.present = 1;
        c->req.out.host = PyArray_DATA((PyArrayObject *)c->tmp);
        c->req.out.t = c->rt;
    }
    return 0;
}

/* The epilogue the kernels finish with: var/std, ptp, mean's division
 * (or mean(where=)'s ratio of two sums). */
static int red_epilogue(red_call *r)
{
    const fdef *f = r->c.f;
    gr_request *req = &r->c.req;
    r->count = 1;
    for (int i = 0; i < req->in.nd; ++i) {
        if (req->axes >> i & 1) {
            r->count *= req->in.shape[i];
        }
    }
    if (f->var) {
        /* the squared deviations over max(n - ddof, 0), finished in the
         * kernels; NumPy's warning below where some n <= ddof */
        req->var = f->var;
        req->ddof = r->ddof;
    } else if (f->ptp) {
        req->ptp = 1; /* max - min in the input's dtype, one pass */
    } else if (f->is_mean) {
        if (req->mask.present) {
            /* mean(where=): the masked sum over the mask's count, both
             * summed in the same pass (the Python face sends an out of
             * another dtype through its own division) */
            if (r->mean_via_numpy) {
                PyErr_SetString(PyExc_TypeError, "mean(where=) into an out "
                                "of another dtype: the Python face divides");
                return -1;
            }
            req->var = GR_VK_RATIO;
        } else if (r->mean_via_numpy) {
            req->rt = req->st; /* the sum only */
        } else {
            req->div = (double)r->count;
        }
    }
    return 0;
}

/* A host out's temporary copied in (and divided there by NumPy). */
static int red_into_host_out(red_call *r)
{
    if (PyArray_CopyInto(r->oh, (PyArrayObject *)r->c.tmp) != 0) {
        return -1;
    }
    if (!r->mean_via_numpy) {
        return 0;
    }
    PyObject *args = Py_BuildValue("(On)", r->out, (Py_ssize_t)r->count);
    PyObject *kwd = Py_BuildValue("{s:O, s:s, s:O}", "out", r->out, "casting",
                                  "unsafe", "subok", Py_False);
    PyObject *res = (args && kwd) ? PyObject_Call(np_true_divide, args, kwd)
                                  : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kwd);
    if (res == NULL) {
        return -1;
    }
    Py_DECREF(res);
    return 0;
}

/* The result object: out, a device Array, or the new host array; the
 * mode's wrapping (timeit, the NaN check's flag). */
static void red_result(red_call *r)
{
    api_call *c = &r->c;
    PyObject *value = NULL;
    if (r->oa != NULL) {
        value = Py_NewRef(r->out);
    } else if (r->oh != NULL) {
        if (c->tmp != NULL && red_into_host_out(r) != 0) {
            return;
        }
        value = Py_NewRef(r->out);
    } else if (c->device_in) {
        value = wrap_block(c->res.blk[0], c->rt, c->shape, c->rnd);
        c->res.blk[0] = NULL;
    } else {
        value = PyArray_Return((PyArrayObject *)Py_NewRef(c->tmp));
    }
    if (value == NULL) {
        return;
    }
    if (c->res.dof_bad && c->mode == GR_RUN &&
        PyErr_WarnEx(PyExc_RuntimeWarning,
                     c->f->var == GR_VK_NANMEAN
                         ? "Mean of empty slice"
                         : "Degrees of freedom <= 0 for slice.",
                     1) != 0) {
        Py_DECREF(value);
        return;
    }
    c->result = c->mode == GR_BENCH ? call_timed(c, value)
                : c->mode == GR_RUN_NANCHECK
                    ? Py_BuildValue("(NO)", value,
                                    c->res.nan_idx == 0   ? Py_None
                                    : c->res.nan_idx == 2 ? Py_True
                                                          : Py_False)
                    : value;
}

static PyObject *reduce_impl(const fdef *f, PyObject *a, PyObject *axis,
                             PyObject *dtype, PyObject *out,
                             PyObject *keepdims_o, PyObject *initial,
                             PyObject *kw, int mode, int reps,
                             PyObject *where)
{
    red_call r;
    memset(&r, 0, sizeof r);
    call_init(&r.c, f, mode, reps);
    r.axis = axis;
    r.dtype = dtype;
    r.out = out;
    r.initial = initial;
    r.where = where;
    if (red_args(&r, kw, keepdims_o) != 0) {
        goto done;
    }
    if (PyArray_Check(a) && !PyArray_CheckExact(a) && mode == GR_RUN) {
        r.c.result = red_defer(&r, a);
        goto done;
    }
    if (call_begin(&r.c, a, out) != 0 || red_axes(&r) != 0 ||
        red_where(&r) != 0 || red_result_dtype(&r) != 0 ||
        red_dtype_checks(&r) != 0 || red_exact(&r) != 0 ||
        red_half_check(&r) != 0) {
        goto done;
    }
    red_request_dtypes(&r);
    if (red_out(&r) != 0 || red_initial(&r) != 0 ||
        red_initial_via_out(&r) != 0) {
        goto done;
    }
    if (operand_size(&r.c.req.in) == 0) {
        red_empty(&r);
        goto done;
    }
    const int fv = r.c.device_in ? red_first_via(&r) : -1;
    if (fv >= 0 && first_through_device(&r.c, (gr_dtype)fv) != 0) {
        goto done;
    }
    if (red_dest(&r) != 0 || red_epilogue(&r) != 0 ||
        call_run(&r.c, 1, out) != 0) {
        goto done;
    }
    if (mode == GR_EXPLAIN) {
        r.c.result = reduce_plan_dict(r.c.d, &r.c.res);
        goto done;
    }
    red_result(&r);
done:
    call_clear(&r.c);
    Py_XDECREF(r.wkeep);
    Py_XDECREF(r.init_arr);
    return r.c.result;
}

/* reduce(name, a, axis, dtype, out, keepdims, initial, kw, where, mode,
 *        reps) */
PyObject *py_reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mode, reps;
    const fdef *f = shell_entry(args, nargs, 2, 11,
                                "reduce(name, a, axis, dtype, out, keepdims, "
                                "initial, kw, where, mode, reps)",
                                GR_FAM_REDUCE, "a reduction", &mode, &reps);
    if (f == NULL) {
        return NULL;
    }
    return reduce_impl(f, args[1], ARGN(2), ARGN(3), ARGN(4), ARGN(5),
                       ARGN(6), ARGN(7), mode, reps, ARGN(8));
}
