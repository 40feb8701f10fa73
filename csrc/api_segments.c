/*
 * api_segments.c — the api layer's segmented reductions: _core.reduceat,
 * NumPy's ufunc.reduceat, one phase per static function below, run in
 * order by py_reduceat.
 */
#include "api.h"

/* A reduceat call: the shared api_call and its own arguments. */
typedef struct {
    api_call c;
    fdef f;                  /* the function: reduceat of the ufunc       */
    PyObject *indices, *axis, *dtype, *out; /* borrowed                   */
    int ax;                  /* the one axis                              */
    size_t S;                /* segments (indices)                        */
    size_t nres;             /* result elements                           */
    PyArrayObject *ix;       /* host indices as int64 (owned)             */
    int direct;              /* results straight into out                 */
} seg_call;

/* A reduceat result (tmp) into the user's out of another dtype or layout:
 * NumPy's casting copy (a device tmp comes to the host for a NumPy out);
 * a device out takes a device copy. */
static int seg_copy_out(PyObject *tmp, PyObject *out)
{
    gr_array *oa = gr_array_of(out);
    if (oa == NULL) {
        PyObject *h = gr_array_of(tmp) != NULL
                          ? PyObject_CallMethod(tmp, "get", NULL)
                          : Py_NewRef(tmp);
        int rc = h ? PyArray_CopyInto((PyArrayObject *)out, (PyArrayObject *)h)
                   : -1;
        Py_XDECREF(h);
        return rc;
    }
    return device_copy_into(gr_array_of(tmp), oa);
}

/* op= : the ufunc whose reduceat this is. */
static int seg_op(seg_call *s, PyObject *op)
{
    static const struct {
        const char *name;
        gr_op op;
    } ops[] = {{"add", GR_ADD},     {"multiply", GR_MUL},
               {"minimum", GR_MIN}, {"maximum", GR_MAX},
               {"logical_and", GR_ALL}, {"logical_or", GR_ANY}};
    const char *opname = PyUnicode_Check(op) ? PyUnicode_AsUTF8(op) : NULL;
    const fdef f = {"reduceat", GR_F_REDUCEAT, GR_FAM_REDUCE, GR_ADD, "add"};
    int found = 0;
    s->f = f;
    for (size_t i = 0; opname && i < sizeof ops / sizeof *ops; ++i) {
        if (strcmp(opname, ops[i].name) == 0) {
            s->f.op = ops[i].op;
            s->f.ufunc = ops[i].name;
            found = 1;
        }
    }
    if (!found) {
        PyErr_Format(PyExc_ValueError, "reduceat: unknown operation %R (add, "
                     "multiply, minimum, maximum, logical_and, logical_or)",
                     op);
        return -1;
    }
    return 0;
}

/* one axis (None: every axis, which a 1-D input has one of) */
static int seg_axis(seg_call *s)
{
    const int nd = s->c.req.in.nd;
    PyObject *axis = s->axis;
    if (nd == 0) {
        PyErr_SetString(PyExc_TypeError, "cannot reduceat on a scalar");
        return -1;
    }
    if ((is_none(axis) && nd != 1) ||
        (PyTuple_Check(axis) && PyTuple_GET_SIZE(axis) != 1)) {
        PyErr_SetString(PyExc_ValueError, "reduceat does not allow multiple "
                        "axes");
        return -1;
    }
    if (is_none(axis)) {
        s->ax = 0;
        return 0;
    }
    return axis_one(PyTuple_Check(axis) ? PyTuple_GET_ITEM(axis, 0) : axis,
                    nd, &s->ax);
}

/* Device indices: of the call's device, cast and checked there. */
static int seg_device_indices(seg_call *s, size_t L)
{
    gr_request *req = &s->c.req;
    int di = -1;
    if (gr_array_compute_operand(gr_array_of(s->indices), &req->vals,
                                 &di) != 0) {
        return -1;
    }
    if (di != req->dev) {
        PyErr_Format(PyExc_ValueError,
                     "arrays on two devices (%s and %s): move one first",
                     s->c.d->name, gr_device_get(di)->name);
        return -1;
    }
    if (req->vals.nd > 1) {
        PyErr_SetString(PyExc_ValueError, "object too deep for desired "
                        "array");
        return -1;
    }
    if (req->vals.nd == 0) {
        req->vals.nd = 1;
        req->vals.shape[0] = 1;
        req->vals.strides[0] = gr_dtypes[req->vals.t].size;
    }
    if (gr_dtypes[req->vals.t].is_float || req->vals.t == GR_UINT64) {
        /* NumPy's conversion of an index array: the safe rule */
        PyErr_Format(PyExc_TypeError, "Cannot cast array data from "
                     "dtype('%s') to dtype('int64') according to the "
                     "rule 'safe'", gr_dtypes[req->vals.t].name);
        return -1;
    }
    s->S = req->vals.shape[0];
    if (s->S > 0 && L == 0) {
        PyErr_Format(PyExc_IndexError, "index out-of-bounds in "
                     "%s.reduceat [0, 0)", s->f.ufunc);
        return -1;
    }
    return 0;
}

/* indices: NumPy's forced cast to intp, one dimension; a device array of
 * the call's device stays there (cast and checked on the device) */
static int seg_indices(seg_call *s)
{
    gr_request *req = &s->c.req;
    if (gr_array_of(s->indices) != NULL) {
        return seg_device_indices(s, req->in.shape[s->ax]);
    }
    s->ix = (PyArrayObject *)PyArray_FromAny(
        s->indices, PyArray_DescrFromType(NPY_INT64), 0, 1, NPY_ARRAY_CARRAY,
        NULL);
    if (s->ix == NULL) {
        return -1;
    }
    s->S = PyArray_NDIM(s->ix) == 0 ? 1 : (size_t)PyArray_DIM(s->ix, 0);
    req->vals.present = 1; /* checked by dispatch.c, with the plan's pass */
    req->vals.t = GR_INT64;
    req->vals.nd = 1;
    req->vals.shape[0] = s->S;
    req->vals.strides[0] = 8;
    req->vals.host = (char *)PyArray_DATA(s->ix);
    return 0;
}

/* NumPy's result dtype, the request's operator, the result's shape. */
static int seg_result_dtype(seg_call *s)
{
    api_call *c = &s->c;
    const gr_op op = s->f.op;
    if (op == GR_ADD || op == GR_MUL) {
        if (dtype_arg_ex(s->dtype, 1, &c->rt_i) != 0) {
            return -1;
        }
        c->rt = c->rt_i >= 0 ? (gr_dtype)c->rt_i : sum_dtype(c->req.in.t);
    } else {
        c->rt = op == GR_MIN || op == GR_MAX ? c->req.in.t : GR_BOOL;
    }
    if (call_fp64(c) != 0) {
        return -1;
    }
    /* NumPy's bool add / multiply: logical or / and (elements by truth:
     * 0.5 is True) */
    c->req.op = c->rt == GR_BOOL && op == GR_ADD   ? GR_ANY
                : c->rt == GR_BOOL && op == GR_MUL ? GR_ALL
                                                   : op;
    c->req.rt = c->req.st = c->rt;
    c->req.axis = s->ax;
    c->rnd = c->req.in.nd;
    s->nres = 1;
    for (int i = 0; i < c->rnd; ++i) {
        c->shape[i] = i == s->ax ? (npy_intp)s->S
                                 : (npy_intp)c->req.in.shape[i];
        s->nres *= (size_t)c->shape[i];
    }
    return 0;
}

/* Whether out takes the results in place: C-contiguous (unit dims aside)
 * of the result dtype; a device out's operand is dropped otherwise. */
static int seg_out_direct(seg_call *s)
{
    api_call *c = &s->c;
    if (gr_array_of(s->out) != NULL) {
        if (out_operand(s->out, &c->req.out) != 0) {
            return -1;
        }
        ptrdiff_t want = (ptrdiff_t)gr_dtypes[c->rt].size;
        s->direct = c->req.out.t == c->rt;
        for (int i = c->rnd - 1; s->direct && i >= 0; --i) {
            s->direct = c->req.out.shape[i] <= 1 ||
                        c->req.out.strides[i] == want;
            want *= (ptrdiff_t)c->req.out.shape[i];
        }
        if (!s->direct) {
            gr_block_put(c->req.out.blk);
            memset(&c->req.out, 0, sizeof c->req.out);
        }
        return 0;
    }
    PyArrayObject *oh = (PyArrayObject *)s->out;
    s->direct = PyArray_IS_C_CONTIGUOUS(oh) && PyArray_ISBEHAVED(oh) &&
                PyArray_ISNOTSWAPPED(oh) &&
                gr_dtype_of(PyArray_DESCR(oh), "out") == (int)c->rt;
    if (s->direct) {
        c->req.out.present = 1;
        c->req.out.host = PyArray_DATA(oh);
    }
    return 0;
}

/* where results go: out in place, else a temporary where the input (or
 * a device out) lives */
static int seg_dest(seg_call *s)
{
    api_call *c = &s->c;
    if (!is_none(s->out)) {
        if (out_shape_check(s->out, c->shape, c->rnd, "output operand has "
                            "the wrong shape for reduceat") != 0 ||
            seg_out_direct(s) != 0) {
            return -1;
        }
    }
    if (s->direct) {
        return 0;
    }
    if (c->device_in || (!is_none(s->out) && gr_array_of(s->out) != NULL)) {
        c->tmp = device_empty(c->req.dev, c->rt, c->rnd, c->shape, NULL);
    } else {
        c->tmp = PyArray_Empty(c->rnd, c->shape, gr_descr_of(c->rt), 0);
    }
    if (c->tmp == NULL) {
        return -1;
    }
    if (gr_array_of(c->tmp) != NULL) {
        return out_operand(c->tmp, &c->req.out);
    }
    c->req.out.present = 1;
    c->req.out.host = PyArray_DATA((PyArrayObject *)c->tmp);
    return 0;
}

/* An empty result with device indices: no run checks them on the
 * device, so they are read back (S values) and checked as NumPy does. */
static int seg_check_device_indices(seg_call *s)
{
    PyObject *h = PyObject_CallMethod(s->indices, "get", NULL);
    PyArrayObject *ix = h ? (PyArrayObject *)PyArray_FromAny(
                                h, PyArray_DescrFromType(NPY_INT64), 0, 1,
                                NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST, NULL)
                          : NULL;
    Py_XDECREF(h);
    if (ix == NULL) {
        return -1;
    }
    const long long L = (long long)s->c.req.in.shape[s->ax];
    const npy_int64 *p = (const npy_int64 *)PyArray_DATA(ix);
    int rc = 0;
    for (npy_intp i = 0; rc == 0 && i < PyArray_SIZE(ix); ++i) {
        if (p[i] < 0 || p[i] >= L) {
            PyErr_Format(PyExc_IndexError, "index %lld out-of-bounds in "
                         "%s.reduceat [0, %lld)", (long long)p[i],
                         s->f.ufunc, L);
            rc = -1;
        }
    }
    Py_DECREF(ix);
    return rc;
}

/* Run: host offsets are checked by the run, even for an empty result
 * (device ones: seg_check_device_indices). */
static int seg_run(seg_call *s)
{
    api_call *c = &s->c;
    if (s->nres > 0 || c->mode == GR_EXPLAIN || c->req.vals.blk == NULL) {
        if (c->mode == GR_BENCH && s->nres == 0) {
            PyErr_SetString(PyExc_ValueError, "timeit needs a non-empty "
                            "result");
            return -1;
        }
        return call_run(c, 0, NULL);
    }
    return s->S > 0 ? seg_check_device_indices(s) : 0;
}

/* explain: the reduction plan's dict naming reduceat's kernel. */
static PyObject *seg_explain(api_call *c)
{
    PyObject *result = reduce_plan_dict(c->d, &c->res);
    if (result != NULL && c->res.where != 1) {
        const gr_kernel_kind kk = c->res.plan.reduce.kind;
        PyObject *kn = PyUnicode_FromString(
            kk == GR_K_GROUP  ? "gr_segments_group"
            : kk == GR_K_WARP ? "gr_segments_warp"
                              : "gr_segments_items");
        if (kn == NULL || PyDict_SetItemString(result, "kernel", kn) != 0) {
            Py_CLEAR(result);
        }
        Py_XDECREF(kn);
    }
    return result;
}

/* The result object: out (copied into where not direct) or the new one. */
static void seg_result(seg_call *s)
{
    api_call *c = &s->c;
    PyObject *value;
    if (s->direct) {
        value = Py_NewRef(s->out);
    } else if (!is_none(s->out)) {
        if (seg_copy_out(c->tmp, s->out) != 0) {
            return;
        }
        value = Py_NewRef(s->out);
    } else {
        value = Py_NewRef(c->tmp);
    }
    c->result = c->mode == GR_BENCH ? call_timed(c, value) : value;
}

/* reduceat(a, indices, axis, op, dtype, out, kw, mode, reps): NumPy's
 * ufunc.reduceat for add, multiply, minimum, maximum, logical_and,
 * logical_or (the face casts for min/max/logical dtype=).  Results of
 * NumPy's dtype, in the input's memory (a new C-ordered array, or out:
 * C-contiguous of the result dtype, or a temporary copied into it). */
PyObject *py_reduceat(PyObject *self, PyObject *const *args,
                      Py_ssize_t nargs)
{
    seg_call s;
    int mode = 0, reps = 1;
    (void)self;
    memset(&s, 0, sizeof s);
    if (nargs < 7) {
        PyErr_SetString(PyExc_TypeError, "reduceat(a, indices, axis, op, "
                        "dtype, out, kw, mode, reps)");
        return NULL;
    }
    if (mode_args(args, nargs, 7, &mode, &reps) != 0 ||
        seg_op(&s, args[3]) != 0) {
        return NULL;
    }
    call_init(&s.c, &s.f, mode, reps);
    s.indices = args[1];
    s.axis = args[2];
    s.dtype = args[4];
    s.out = args[5];
    if (knobs_of(ARGN(6), "variant wg_size groups items vw device",
                 "reduceat", &s.c.k) != 0 ||
        call_begin(&s.c, args[0], s.out) != 0 || seg_axis(&s) != 0 ||
        seg_indices(&s) != 0 || seg_result_dtype(&s) != 0 ||
        seg_dest(&s) != 0 || seg_run(&s) != 0) {
        goto done;
    }
    if (mode == GR_EXPLAIN) {
        s.c.result = seg_explain(&s.c);
        goto done;
    }
    seg_result(&s);
done:
    call_clear(&s.c);
    Py_XDECREF(s.ix);
    return s.c.result;
}
