/*
 * api_bykey.c — the api layer's by-key family: _core.bykey
 * (reduce_by_key, sum_by_key, scan_by_key) over 1-D keys and values, one
 * phase per static function below, run in order by py_bykey.
 */
#include "api.h"

/* A 1-D by-key input; keys must be integers (int8..uint64), values
 * int32..float64 (count: none).  Host arrays made contiguous. */
static int bk_operand(PyObject *obj, gr_operand *o, PyObject **keep, int *dev,
                      const char *what, int keys)
{
    if (obj == Py_None) {
        PyErr_Format(PyExc_ValueError, "%s must be a 1-D array, not None",
                     what);
        return -1;
    }
    if (operand_of(obj, o, keep, dev, what) != 0) {
        return -1;
    }
    if (o->nd != 1) {
        PyErr_Format(PyExc_ValueError, "%s must be 1-D (got %d dimensions)",
                     what, o->nd);
        return -1;
    }
    const gr_dtype t = o->t;
    if (keys && !(t >= GR_INT8 && t <= GR_UINT64)) {
        PyErr_Format(PyExc_TypeError, "keys must be integers (int8, uint8, "
                     "int16, uint16, int32, uint32, int64, uint64); got dtype "
                     "%s", gr_dtypes[t].name);
        return -1;
    }
    if (!keys && !(t >= GR_INT32 && t <= GR_FLOAT64)) {
        PyErr_Format(PyExc_TypeError, "values must be int32, int64, uint32, "
                     "uint64, float32 or float64; got dtype %s",
                     gr_dtypes[t].name);
        return -1;
    }
    if (o->host != NULL && o->shape[0] > 1 &&
        o->strides[0] != gr_dtypes[t].size) {
        PyObject *c = PyArray_NewCopy((PyArrayObject *)*keep, NPY_CORDER);
        if (c == NULL) {
            return -1;
        }
        Py_SETREF(*keep, c);
        o->host = PyArray_DATA((PyArrayObject *)c);
        o->strides[0] = gr_dtypes[t].size;
    }
    return 0;
}

static PyObject *host_from_block(gr_block *b, gr_dtype t, size_t n)
{
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *arr = PyArray_Empty(1, dims, gr_descr_of(t), 0);
    if (arr == NULL || n == 0) {
        return arr;
    }
    gr_status st = {0};
    int rc;
    void *p = PyArray_DATA((PyArrayObject *)arr);
    cl_event pend_ev = NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = gr_block_read(b, 0, p, n * (size_t)gr_dtypes[t].size,
                       signals_pending, NULL, &pend_ev, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        if (pend_ev != NULL) {
            pending_add(pend_ev, arr, NULL, NULL);
        }
        gr_raise(&st);
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* A by-key call: the shared api_call (keep: the keys) and its own. */
typedef struct {
    api_call c;
    PyObject *vkeep;         /* the host values, kept alive (owned)       */
    int on_device;           /* keys or values are device arrays          */
} bk_call;

/* num_keys (None: keys.max() + 1) and sorted (None: measured). */
static int bk_counts(gr_request *req, PyObject *num_keys, PyObject *sorted)
{
    req->num_keys = -1;
    if (!is_none(num_keys)) {
        long long x = 0;
        if (PyBool_Check(num_keys)) {
            PyErr_SetString(PyExc_TypeError, "num_keys must be an integer");
            return -1;
        }
        PyObject *i = PyNumber_Index(num_keys);
        if (i == NULL) {
            return -1;
        }
        x = PyLong_AsLongLong(i);
        Py_DECREF(i);
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (x < 0) {
            PyErr_Format(PyExc_ValueError, "num_keys must be >= 0 (got %lld)",
                         x);
            return -1;
        }
        req->num_keys = x;
    }
    req->sorted = -1;
    if (!is_none(sorted)) {
        int sv = 0;
        if (flag_of(sorted, "sorted", &sv) != 0) {
            return -1;
        }
        req->sorted = sv;
    }
    return 0;
}

/* Arguments: knobs, op, the flags, num_keys, sorted. */
static int bk_args(bk_call *b, PyObject *const *args, Py_ssize_t nargs)
{
    gr_request *req = &b->c.req;
    int exclusive = 0, det = 0;
    if (knobs_of(ARGN(8), "variant wg_size items device exact", b->c.f->name,
                 &b->c.k) != 0 ||
        bk_op_of(b->c.f->name, args[3], &req->bkt) != 0 ||
        (ARGN(5) && flag_of(args[5], "exclusive", &exclusive) != 0) ||
        (ARGN(6) && flag_of(args[6], "deterministic", &det) != 0) ||
        forked_check() != 0) {
        return -1;
    }
    req->bkf = b->c.f->bkf;
    if (b->c.k.exact && (req->bkf != GR_BK_DENSE || req->bkt.op != GR_ADD ||
                         req->bkt.count)) {
        PyErr_SetString(PyExc_TypeError, "exact=True sums values exactly: "
                        "sum_by_key with op='sum' only");
        return -1;
    }
    req->exclusive = exclusive;
    req->deterministic = det;
    return bk_counts(req, ARGN(4), ARGN(7));
}

/* The operands (keys, values unless op is count), their device and
 * types; the request's. */
static int bk_operands(bk_call *b, PyObject *keys, PyObject *values)
{
    api_call *c = &b->c;
    gr_request *req = &c->req;
    char err[256];
    c->dev = c->k.device;
    if (bk_operand(keys, &req->in, &c->keep, &c->dev, "keys", 1) != 0) {
        return -1;
    }
    if (req->bkt.count && is_none(values)) {
        req->vals.present = 0;
    } else if (is_none(values)) {
        PyErr_SetString(PyExc_TypeError, "values are required");
        return -1;
    } else if (bk_operand(values, &req->vals, &b->vkeep, &c->dev, "values",
                          0) != 0) {
        return -1;
    }
    b->on_device = req->in.blk != NULL || req->vals.blk != NULL;
    if (c->dev < 0 && (c->dev = default_device(&c->k)) < 0) {
        return -1;
    }
    c->d = gr_device_get(c->dev);
    const size_t n = req->in.shape[0];
    if (req->vals.present && req->vals.shape[0] != n) {
        PyErr_Format(PyExc_ValueError, "keys and values must have the same "
                     "length (keys %zu, values %zu)", n, req->vals.shape[0]);
        return -1;
    }
    req->bkt.k = req->in.t;
    req->bkt.v = req->vals.present ? req->vals.t : GR_UINT8;
    if (gr_bk_types_init(c->d, &req->bkt, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        return -1;
    }
    /* integer values are summed exactly already: the plain path */
    req->bk_exact = c->k.exact && req->vals.present &&
                    gr_dtypes[req->bkt.v].is_float;
    req->dev = c->dev;
    req->func = c->f->func;
    req->fam = GR_FAM_BYKEY;
    req->kn = c->k.kn;
    req->mode = (gr_mode)c->mode;
    req->rt = req->bkt.r;
    return 0;
}

/* The results (keys, values) where the operands live: (keys, values) for
 * reduce_by_key, the values for the others. */
static PyObject *bk_value(bk_call *b)
{
    api_call *c = &b->c;
    const gr_request *req = &c->req;
    PyObject *rk = NULL, *rv = NULL;
    const size_t m = c->res.count;
    if (b->on_device) {
        npy_intp dims[1] = {(npy_intp)m};
        if (c->res.blk[0] != NULL) {
            rk = wrap_block(c->res.blk[0], req->bkt.k, dims, 1);
            c->res.blk[0] = NULL;
        }
        rv = wrap_block(c->res.blk[1], req->bkt.r, dims, 1);
        c->res.blk[1] = NULL;
    } else {
        if (c->res.blk[0] != NULL) {
            rk = host_from_block(c->res.blk[0], req->bkt.k, m);
        }
        rv = host_from_block(c->res.blk[1], req->bkt.r, m);
    }
    if (rv == NULL || (req->bkf == GR_BK_REDUCE && rk == NULL)) {
        Py_XDECREF(rv);
        Py_XDECREF(rk);
        return NULL;
    }
    return req->bkf == GR_BK_REDUCE
               ? Py_BuildValue("(NN)", rk ? rk : Py_NewRef(Py_None), rv)
               : (Py_XDECREF(rk), rv);
}

/* The result: explain's plan, the value, or timeit's (value, times,
 * plan). */
static void bk_result(bk_call *b)
{
    api_call *c = &b->c;
    PyObject *plan = NULL;
    if (c->mode != GR_RUN) {
        plan = bk_plan_dict(&c->res.bk.plan, &c->res.bk.facts, c->d,
                            c->f->name);
        if (plan == NULL || c->mode == GR_EXPLAIN) {
            c->result = plan;
            return;
        }
    }
    PyObject *value = bk_value(b);
    if (value == NULL) {
        Py_XDECREF(plan);
        return;
    }
    if (c->mode == GR_BENCH) {
        PyObject *times = times_list(c->ns, c->reps);
        c->result = times ? Py_BuildValue("(NNN)", value, times, plan) : NULL;
        plan = NULL;
    } else {
        c->result = value;
    }
    Py_XDECREF(plan);
}

/* bykey(func, keys, values, op, num_keys, exclusive, deterministic, sorted,
 *       kw, mode, reps) */
PyObject *py_bykey(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    bk_call b;
    int mode, reps;
    const fdef *f = shell_entry(args, nargs, 4, 11,
                                "bykey(func, keys, values, op, num_keys, "
                                "exclusive, deterministic, sorted, kw, mode, "
                                "reps)",
                                GR_FAM_BYKEY, "a by-key function", &mode, &reps);
    if (f == NULL) {
        return NULL;
    }
    memset(&b, 0, sizeof b);
    call_init(&b.c, f, mode, reps);
    if (bk_args(&b, args, nargs) != 0 ||
        bk_operands(&b, args[1], args[2]) != 0 || call_run(&b.c, 0, NULL) != 0) {
        goto done;
    }
    bk_result(&b);
done:
    call_clear(&b.c);
    Py_XDECREF(b.vkeep);
    return b.c.result;
}
