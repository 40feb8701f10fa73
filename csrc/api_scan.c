/*
 * api_scan.c — the api layer's scans: _core.scan (cumsum, cumprod,
 * cummin, cummax and the nan forms, inclusive or exclusive) with NumPy's
 * accumulate semantics, one phase per static function below, run in
 * order by scan_impl.
 */
#include "api.h"

/* A scan's call: the shared api_call and its own arguments. */
typedef struct {
    api_call c;
    PyObject *axis, *dtype, *out;   /* borrowed                           */
    int exclusive;
    PyObject *dres;          /* a new device result (owned)               */
    gr_array *oa;            /* out: a device array                       */
    PyArrayObject *oh;       /* out: an ndarray                           */
} scan_call;

/* Subclasses: NumPy's own answer (it defers to their methods);
 * cummin/cummax are np.minimum/maximum.accumulate of the flattened array
 * (axis None) or along the axis. */
static PyObject *scan_defer(scan_call *s, PyObject *a)
{
    const fdef *f = s->c.f;
    PyObject *result = NULL;
    const int cum = f->accum_uf == NULL;
    PyObject *src = (!cum && is_none(s->axis))
                        ? PyObject_CallMethod(a, "ravel", NULL)
                        : Py_NewRef(a);
    PyObject *args = src ? PyTuple_Pack(1, src) : NULL;
    PyObject *kwd = Py_BuildValue(
        "{s:N, s:O, s:O}", "axis",
        !cum && is_none(s->axis) ? PyLong_FromLong(-1) /* (a matrix
                                                        ravels to 1 x n) */
                                 : Py_NewRef(s->axis ? s->axis : Py_None),
        "dtype", s->dtype ? s->dtype : Py_None, "out",
        s->out ? s->out : Py_None);
    if (args != NULL && kwd != NULL) {
        if (cum) {
            result = numpy_call(f->name, args, kwd);
        } else {
            PyObject *uf = PyObject_GetAttrString(np_module, f->accum_uf);
            PyObject *acc = uf ? PyObject_GetAttrString(uf, "accumulate")
                               : NULL;
            result = acc ? PyObject_Call(acc, args, kwd) : NULL;
            Py_XDECREF(acc);
            Py_XDECREF(uf);
        }
    }
    Py_XDECREF(src);
    Py_XDECREF(args);
    Py_XDECREF(kwd);
    return result;
}

/* axis: None scans the flattened array (C order); the result's shape. */
static int scan_axis(scan_call *s)
{
    api_call *c = &s->c;
    const int nd = c->req.in.nd;
    int ax;
    if (is_none(s->axis)) {
        c->req.axis = -1;
        c->rnd = 1;
        c->shape[0] = (npy_intp)operand_size(&c->req.in);
        return 0;
    }
    if (PyTuple_Check(s->axis)) {
        PyErr_SetString(PyExc_TypeError,
                        "'tuple' object cannot be interpreted as an "
                        "integer");
        return -1;
    }
    if (axis_one(s->axis, nd, &ax) != 0) {
        return -1;
    }
    if (nd == 0) {
        c->req.axis = -1; /* one element: a 1-d result */
        c->rnd = 1;
        c->shape[0] = 1;
    } else {
        c->req.axis = ax;
        c->rnd = nd;
        for (int i = 0; i < nd; ++i) {
            c->shape[i] = (npy_intp)c->req.in.shape[i];
        }
    }
    return 0;
}

/* out='s dtype rule: an out of the input's own half dtype takes the scan
 * in that half (NumPy's accumulate), the kernels writing it
 * (kernels/scan.cl GR_SRELT); any other, the promotion (out_dtype_rule). */
static int scan_out_rule(PyObject *out, gr_dtype in_t, gr_dtype *rt)
{
    if (GR_IS_HALF(in_t)) {
        gr_array *oa = gr_array_of(out);
        PyArray_Descr *od = oa ? oa->descr
                               : PyArray_DESCR((PyArrayObject *)out);
        if (gr_dtype_of_store(od, "out") == (int)in_t) {
            *rt = in_t;
            return 0;
        }
        PyErr_Clear();
    }
    return out_dtype_rule(out, in_t, rt);
}

/* result dtype: dtype=, else NumPy's default for the operator, or with
 * an out= the promotion of the input's dtype and out's (NumPy's
 * accumulate: out_dtype_rule); the
 * request's operator (bool add / multiply: logical or / and). */
static int scan_result_dtype(scan_call *s)
{
    api_call *c = &s->c;
    const fdef *f = c->f;
    if (c->rt_i >= 0) {
        c->rt = (gr_dtype)c->rt_i;
    } else if (f->rt == RT_SUM) {
        c->rt = sum_dtype(c->req.in.t);
    } else {
        c->rt = c->req.in.t;
    }
    if (c->rt_i < 0 && !is_none(s->out) &&
        (gr_array_of(s->out) != NULL || PyArray_Check(s->out)) &&
        scan_out_rule(s->out, c->req.in.t, &c->rt) != 0) {
        return -1;
    }
    if (call_fp64(c) != 0) {
        return -1;
    }
    c->req.rt = c->req.st = c->rt;
    c->req.op = f->op;
    if (c->rt == GR_BOOL && f->op == GR_ADD) {
        c->req.op = GR_MAX; /* bool add / multiply: logical or / and */
    } else if (c->rt == GR_BOOL && f->op == GR_MUL) {
        c->req.op = GR_MIN;
    }
    if (!is_none(s->out) &&
        out_shape_check(s->out, c->shape, c->rnd, "provided out is the "
                        "wrong size for the accumulation.") != 0) {
        return -1;
    }
    return 0;
}

/* A device out= (or new result) as the request's out operand: float16 /
 * bfloat16 ones too, which the scan kernels write themselves
 * (kernels/scan.cl GR_SRELT). */
static int scan_out_operand(PyObject *out, gr_operand *o)
{
    int d2 = -1;
    return gr_array_operand(gr_array_of(out), o, &d2);
}

/* Empty input: out, or an empty result where the input lives. */
static void scan_empty(scan_call *s)
{
    api_call *c = &s->c;
    if (c->mode != GR_RUN) {
        call_empty_mode(c, "scan");
    } else if (!is_none(s->out)) {
        c->result = Py_NewRef(s->out);
    } else if (c->device_in || gr_array_of(s->out) != NULL) {
        c->result = device_empty(c->dev, c->rt, c->rnd, c->shape, NULL);
    } else {
        c->result = PyArray_Empty(c->rnd, c->shape, gr_descr_of(c->rt), 0);
    }
}

/* A new result: a device array in the input's memory order, or a host
 * temporary (the input's order; cast into a host out afterwards). */
static int scan_dest_new(scan_call *s, const gr_operand *like)
{
    api_call *c = &s->c;
    if (c->device_in && s->oh == NULL) {
        s->dres = device_empty(c->dev, c->rt, c->rnd, c->shape, like);
        return s->dres ? scan_out_operand(s->dres, &c->req.out) : -1;
    }
    PyArray_Descr *rd = gr_descr_of(c->rt);
    if (rd == NULL) {
        return -1;
    }
    if (like != NULL && c->keep != NULL) {
        c->tmp = PyArray_NewLikeArray((PyArrayObject *)c->keep, NPY_KEEPORDER,
                                      rd, 0);
    } else {
        c->tmp = PyArray_Empty(c->rnd, c->shape, rd, 0);
    }
    if (c->tmp == NULL) {
        return -1;
    }
    int d2 = -1;
    PyObject *k2 = NULL;
    if (operand_of(c->tmp, &c->req.out, &k2, &d2, "out") != 0) {
        return -1;
    }
    Py_XDECREF(k2);
    return 0;
}

/* A host out of the result dtype (halves included: gr_dtype_of_store). */
static int out_is_rt(PyArrayObject *oh, gr_dtype rt)
{
    const int t = gr_dtype_of_store(PyArray_DESCR(oh), "out");
    if (t < 0) {
        PyErr_Clear();
    }
    return t == (int)rt;
}

/* where results go: the user's out where it can take them (a device
 * array of any layout and dtype; a host array that is aligned, native
 * and of the result dtype), else a new array in the input's memory
 * order (a temporary for host outs, cast into them afterwards) */
static int scan_dest(scan_call *s)
{
    api_call *c = &s->c;
    s->oa = is_none(s->out) ? NULL : gr_array_of(s->out);
    s->oh = (!is_none(s->out) && s->oa == NULL) ? (PyArrayObject *)s->out
                                                : NULL;
    if (s->oa != NULL) {
        return scan_out_operand(s->out, &c->req.out);
    }
    if (s->oh != NULL && PyArray_ISBEHAVED(s->oh) &&
        PyArray_ISNOTSWAPPED(s->oh) &&
        out_is_rt(s->oh, c->rt)) {
        int d2 = -1;
        if (operand_of(s->out, &c->req.out, &c->tmp, &d2, "out") != 0) {
            return -1;
        }
        Py_CLEAR(c->tmp); /* out is alive: the caller holds it */
        return 0;
    }
    return scan_dest_new(s, c->req.axis >= 0 ? &c->req.in : NULL);
}

/* explain's dict (the host path's, or the scan plan's). */
static PyObject *scan_explain(api_call *c)
{
    return c->res.where == 1
               ? host_plan_dict(c->d, &c->res)
               : add_placement(scan_plan_dict(c->d, &c->res.plan.scan,
                                              &c->res.acc, &c->res.lay),
                               &c->res);
}

/* The result object, and timeit's (result, (times, plan)). */
static void scan_result(scan_call *s)
{
    api_call *c = &s->c;
    PyObject *value;
    if (s->oa != NULL) {
        value = Py_NewRef(s->out);
    } else if (s->oh != NULL) {
        if (c->tmp != NULL &&
            PyArray_CopyInto(s->oh, (PyArrayObject *)c->tmp) != 0) {
            return;
        }
        value = Py_NewRef(s->out);
    } else if (s->dres != NULL) {
        value = Py_NewRef(s->dres);
    } else {
        value = Py_NewRef(c->tmp);
    }
    if (c->mode != GR_BENCH) {
        c->result = value;
        return;
    }
    PyObject *times = times_list(c->ns, c->reps);
    PyObject *plan = scan_plan_dict(c->d, &c->res.plan.scan, &c->res.acc,
                                    &c->res.lay);
    PyObject *tp = (times && plan) ? Py_BuildValue("(OO)", times, plan)
                                   : NULL;
    Py_XDECREF(times);
    Py_XDECREF(plan);
    if (tp != NULL) {
        c->result = Py_BuildValue("(ON)", value, tp);
    }
    Py_DECREF(value);
}

static PyObject *scan_impl(const fdef *f, PyObject *a, PyObject *axis,
                           PyObject *dtype, PyObject *out, PyObject *excl_o,
                           PyObject *kw, int mode, int reps)
{
    scan_call s;
    memset(&s, 0, sizeof s);
    call_init(&s.c, f, mode, reps);
    s.axis = axis;
    s.dtype = dtype;
    s.out = out;
    if (knobs_of(kw, "variant wg_size items groups ilp spins device",
                 f->name, &s.c.k) != 0 ||
        flag_of(excl_o, "exclusive", &s.exclusive) != 0 ||
        dtype_arg(dtype, &s.c.rt_i) != 0) {
        goto done;
    }
    if (PyArray_Check(a) && !PyArray_CheckExact(a) && mode == GR_RUN &&
        !s.exclusive) {
        s.c.result = scan_defer(&s, a);
        goto done;
    }
    if (call_begin(&s.c, a, out) != 0) {
        goto done;
    }
    s.c.req.exclusive = s.exclusive;
    if (scan_axis(&s) != 0 || scan_result_dtype(&s) != 0) {
        goto done;
    }
    if (operand_size(&s.c.req.in) == 0) {
        scan_empty(&s);
        goto done;
    }
    if (scan_dest(&s) != 0 ||
        call_run(&s.c, 1, is_none(out) ? s.dres : out) != 0) {
        goto done;
    }
    if (mode == GR_EXPLAIN) {
        s.c.result = scan_explain(&s.c);
        goto done;
    }
    scan_result(&s);
done:
    call_clear(&s.c);
    Py_XDECREF(s.dres);
    return s.c.result;
}

/* scan(name, a, axis, dtype, out, exclusive, kw, mode, reps) */
PyObject *py_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mode, reps;
    const fdef *f = shell_entry(args, nargs, 2, 9,
                                "scan(name, a, axis, dtype, out, exclusive, "
                                "kw, mode, reps)",
                                GR_FAM_SCAN, "a scan", &mode, &reps);
    if (f == NULL) {
        return NULL;
    }
    return scan_impl(f, args[1], ARGN(2), ARGN(3), ARGN(4), ARGN(5), ARGN(6),
                     mode, reps);
}
