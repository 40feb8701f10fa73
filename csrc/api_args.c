/*
 * api_args.c — the api layer's hallway of argument rules: the function
 * table (one row per public name, with the columns NumPy's face reads),
 * and NumPy's rules for the arguments every family shares: axes, dtype=,
 * keepdims and gpured's flags, the knobs (variant=, wg_size=, device=, ...),
 * out= checks, the shells' positional arguments.  Python objects in, C
 * values or NumPy's exceptions out; nothing here runs a request.
 */
#include "api.h"

/* ----------------------------------------------------------- table */

#define REDUCE GR_FAM_REDUCE
#define SCAN GR_FAM_SCAN
#define BYKEY GR_FAM_BYKEY

static const fdef fdefs[] = {
    {"sum", GR_F_SUM, REDUCE, GR_ADD, "add", .rt = RT_SUM, .dtype_ok = 1,
     .out_kind = 1, .init_uf = "add"},
    {"prod", GR_F_PROD, REDUCE, GR_MUL, "multiply", .rt = RT_SUM,
     .dtype_ok = 1, .out_kind = 1, .init_uf = "multiply"},
    {"min", GR_F_MIN, REDUCE, GR_MIN, "minimum", .out_kind = 1, .minmax = 1,
     .init_uf = "minimum"},
    {"max", GR_F_MAX, REDUCE, GR_MAX, "maximum", .out_kind = 1, .minmax = 1,
     .init_uf = "maximum"},
    {"all", GR_F_ALL, REDUCE, GR_ALL, "logical_and", .rt = RT_BOOL},
    {"any", GR_F_ANY, REDUCE, GR_ANY, "logical_or", .rt = RT_BOOL},
    {"mean", GR_F_MEAN, REDUCE, GR_ADD, "add", .rt = RT_MEAN, .is_mean = 1,
     .dtype_ok = 1},
    {"argmin", GR_F_ARGMIN, REDUCE, GR_ARGMIN, "argmin", .rt = RT_INDEX,
     .is_arg = 1},
    {"argmax", GR_F_ARGMAX, REDUCE, GR_ARGMAX, "argmax", .rt = RT_INDEX,
     .is_arg = 1},
    {"cumsum", GR_F_CUMSUM, SCAN, GR_ADD, "add", .rt = RT_SUM},
    {"cumprod", GR_F_CUMPROD, SCAN, GR_MUL, "multiply", .rt = RT_SUM},
    {"cummin", GR_F_CUMMIN, SCAN, GR_MIN, "minimum", .accum_uf = "minimum"},
    {"cummax", GR_F_CUMMAX, SCAN, GR_MAX, "maximum", .accum_uf = "maximum"},
    {"nansum", GR_F_SUM, REDUCE, GR_ADD, "add", 1, .rt = RT_SUM,
     .dtype_ok = 1, .out_kind = 1, .init_uf = "add"},
    {"nanprod", GR_F_PROD, REDUCE, GR_MUL, "multiply", 1, .rt = RT_SUM,
     .dtype_ok = 1, .out_kind = 1, .init_uf = "multiply"},
    {"nanmin", GR_F_MIN, REDUCE, GR_MIN, "fmin", 1, .out_kind = 1,
     .minmax = 1, .init_uf = "minimum"},
    {"nanmax", GR_F_MAX, REDUCE, GR_MAX, "fmax", 1, .out_kind = 1,
     .minmax = 1, .init_uf = "maximum"},
    {"nanargmin", GR_F_ARGMIN, REDUCE, GR_ARGMIN, "argmin", 1,
     .rt = RT_INDEX, .is_arg = 1},
    {"nanargmax", GR_F_ARGMAX, REDUCE, GR_ARGMAX, "argmax", 1,
     .rt = RT_INDEX, .is_arg = 1},
    {"count_nonzero", GR_F_SUM, REDUCE, GR_ADD, "add", 0, GR_CNT_NONZERO,
     .rt = RT_SUM, .dtype_ok = 1, .out_kind = 1, .init_uf = "add"},
    {"_count_valid", GR_F_SUM, REDUCE, GR_ADD, "add", 0, GR_CNT_VALID,
     .rt = RT_SUM, .dtype_ok = 1, .out_kind = 1, .init_uf = "add"},
    {"var", GR_F_MEAN, REDUCE, GR_ADD, "add", 0, 0, GR_VK_VAR, .rt = RT_MEAN,
     .is_mean = 1, .dtype_ok = 1},
    {"std", GR_F_MEAN, REDUCE, GR_ADD, "add", 0, 0, GR_VK_STD, .rt = RT_MEAN,
     .is_mean = 1, .dtype_ok = 1},
    {"nanvar", GR_F_MEAN, REDUCE, GR_ADD, "add", 1, 0, GR_VK_VAR,
     .rt = RT_MEAN, .is_mean = 1, .dtype_ok = 1},
    {"nanstd", GR_F_MEAN, REDUCE, GR_ADD, "add", 1, 0, GR_VK_STD,
     .rt = RT_MEAN, .is_mean = 1, .dtype_ok = 1},
    {"nanmean", GR_F_MEAN, REDUCE, GR_ADD, "add", 1, 0, GR_VK_NANMEAN,
     .rt = RT_MEAN, .is_mean = 1, .dtype_ok = 1},
    /* average(weights): the weighted sum over the weights' sum, one pass
     * (its mask operand carries the weights) */
    {"_average", GR_F_MEAN, REDUCE, GR_ADD, "add", 0, 0, GR_VK_RATIO,
     .rt = RT_MEAN, .is_mean = 1, .dtype_ok = 1},
    /* ptp: computed in the input's dtype (an out= of another dtype: the
     * Python face takes NumPy's steps, max into out, then subtract) */
    {"ptp", GR_F_MAX, REDUCE, GR_MAX, "maximum", 0, 0, 0, 1, .minmax = 1,
     .init_uf = "maximum"},
    {"nancumsum", GR_F_CUMSUM, SCAN, GR_ADD, "add", 1, .rt = RT_SUM},
    {"nancumprod", GR_F_CUMPROD, SCAN, GR_MUL, "multiply", 1, .rt = RT_SUM},
    {"reduce_by_key", GR_F_REDUCE_BY_KEY, BYKEY, GR_ADD, "",
     .bkf = GR_BK_REDUCE},
    {"sum_by_key", GR_F_SUM_BY_KEY, BYKEY, GR_ADD, "", .bkf = GR_BK_DENSE},
    {"scan_by_key", GR_F_SCAN_BY_KEY, BYKEY, GR_ADD, "", .bkf = GR_BK_SCAN},
};
#define NFDEFS ((int)(sizeof fdefs / sizeof *fdefs))

const fdef *fdef_of(PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL) {
        return NULL;
    }
    for (int i = 0; i < NFDEFS; ++i) {
        if (strcmp(s, fdefs[i].name) == 0) {
            return &fdefs[i];
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown operation '%s' (one of sum, "
                 "prod, min, max, all, any, mean, argmin, argmax, cumsum, "
                 "cumprod, cummin, cummax, reduce_by_key, sum_by_key, "
                 "scan_by_key)", s);
    return NULL;
}

/* ------------------------------------------------------- small helpers */

/* Append a string to *list; on failure *list is cleared (NULL) with the
 * exception set.  A NULL *list is left alone. */
void list_add(PyObject **list, const char *text)
{
    if (*list == NULL) {
        return;
    }
    PyObject *s = PyUnicode_FromString(text);
    if (s == NULL || PyList_Append(*list, s) != 0) {
        Py_CLEAR(*list);
    }
    Py_XDECREF(s);
}

int is_none(PyObject *o) { return o == NULL || o == Py_None; }

int no_value(PyObject *o)
{
    return o == NULL || o == np_novalue;
}

/* keepdims as NumPy's ufunc reductions take it: a Python bool or anything
 * with __index__ (np.True_, floats, None, strings: TypeError). */
int index_flag(PyObject *o, int *v)
{
    if (o == NULL) {
        *v = 0;
        return 0;
    }
    PyObject *i = PyNumber_Index(o);
    if (i == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "'%s' object cannot be interpreted as an integer",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *v = PyObject_IsTrue(i);
    Py_DECREF(i);
    return *v < 0 ? -1 : 0;
}

/* Boolean flags of gpured's own (exclusive, deterministic, sorted): a
 * bool, np.bool_ or an integer; anything else is a TypeError. */
int flag_of(PyObject *o, const char *what, int *v)
{
    if (o == NULL || o == Py_None) {
        *v = 0;
        return o == NULL ? 0 : (PyErr_Format(PyExc_TypeError,
                                             "%s must be a bool", what), -1);
    }
    if (PyBool_Check(o) || PyArray_IsScalar(o, Bool)) {
        *v = PyObject_IsTrue(o);
        return *v < 0 ? -1 : 0;
    }
    PyObject *i = PyNumber_Index(o);
    if (i == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a bool (got %s)", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *v = PyObject_IsTrue(i);
    Py_DECREF(i);
    return *v < 0 ? -1 : 0;
}

/* One axis as NumPy takes it: an integer (not a bool), normalised.  A
 * 0-d array takes a bare 0 or -1 (NumPy's ufunc reductions do), never a
 * tuple of them (in_tuple). */
static int axis_one_ex(PyObject *o, int ndim, int in_tuple,
                       int bools_are_axes, int mean_call, int *ax)
{
    const int n = ndim > 0 || in_tuple ? ndim : 1; /* 0-d: axis 0 / -1 */
    if (!bools_are_axes && (PyBool_Check(o) || PyArray_IsScalar(o, Bool))) {
        /* NumPy's mean: the reduction's bounds check first (True is 1),
         * then its item count's "an integer is required" */
        if (!mean_call || PyObject_IsTrue(o) < n) {
            PyErr_SetString(PyExc_TypeError, "an integer is required");
            return -1;
        }
    }
    Py_ssize_t v = PyNumber_AsSsize_t(o, PyExc_OverflowError);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "'%s' object cannot be interpreted as an integer",
                         Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    if (v < -n || v >= n) {
        PyObject *e = PyObject_CallFunction(np_axis_error, "ni", v, ndim);
        if (e != NULL) {
            PyErr_SetObject(np_axis_error, e);
            Py_DECREF(e);
        }
        return -1;
    }
    *ax = (int)(v < 0 ? v + n : v);
    return 0;
}

int axis_one(PyObject *o, int ndim, int *ax)
{
    return axis_one_ex(o, ndim, 0, 0, 0, ax);
}

/* axis of a reduction -> bit mask (None: all).  tuple_ok: sum & co.;
 * strict0: a 0-d array's axes are checked against its 0 dimensions;
 * bools_are_axes: True/False read as 1/0; mean_call: NumPy's mean's order
 * of checks (mean checks axes as NumPy's _mean does, where the installed
 * NumPy takes True as 1: mean_bool_axes). */
int axes_of(PyObject *axis, int ndim, int tuple_ok, int strict0,
            int bools_are_axes, int mean_call, uint64_t *mask)
{
    *mask = 0;
    if (is_none(axis)) {
        *mask = ndim >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << ndim) - 1);
        return 0;
    }
    if (tuple_ok && PyTuple_Check(axis)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(axis); ++i) {
            int a;
            if (axis_one_ex(PyTuple_GET_ITEM(axis, i), ndim, 1,
                            bools_are_axes, mean_call, &a) != 0) {
                return -1;
            }
            if (*mask >> a & 1) {
                PyErr_SetString(PyExc_ValueError, "duplicate value in 'axis'");
                return -1;
            }
            *mask |= (uint64_t)1 << a;
        }
    } else {
        int a;
        if (axis_one_ex(axis, ndim, strict0, bools_are_axes, mean_call,
                        &a) != 0) {
            return -1;
        }
        *mask = (uint64_t)1 << a;
    }
    if (ndim == 0) {
        *mask = 0; /* a 0-d array: nothing to reduce */
    }
    return 0;
}

/* NumPy's accumulator dtype of add/multiply on t (LP64: long is int64). */
gr_dtype sum_dtype(gr_dtype t)
{
    switch (t) {
    case GR_BOOL: case GR_INT8: case GR_INT16: case GR_INT32:
        return GR_INT64;
    case GR_UINT8: case GR_UINT16: case GR_UINT32:
        return GR_UINT64;
    default:
        return t;
    }
}

/* dtype= as gr_dtype (None -> -2).  strict: the ufunc reductions' rule,
 * a dtype with a byte order is refused (NumPy's TypeError). */
int dtype_arg_ex(PyObject *o, int strict, int *t)
{
    PyArray_Descr *d = NULL;
    if (is_none(o)) {
        *t = -2;
        return 0;
    }
    if (!PyArray_DescrConverter(o, &d)) {
        return -1;
    }
    if (strict && !PyArray_ISNBO(d->byteorder)) {
        Py_DECREF(d);
        PyErr_SetString(PyExc_TypeError,
                        "The `dtype` and `signature` arguments to ufuncs only "
                        "select the general DType and not details such as the "
                        "byte order or time unit. You can avoid this error by "
                        "using the scalar types `np.float64` or the dtype "
                        "string notation.");
        return -1;
    }
    *t = gr_dtype_of(d, "result");
    Py_DECREF(d);
    return *t < 0 ? -1 : 0;
}

int dtype_arg(PyObject *o, int *t)
{
    return dtype_arg_ex(o, 0, t);
}

/* NumPy's loop dtype for a reduction or an accumulation into out= with
 * no dtype=: the promotion of the input's dtype and out's (ufunc.reduce /
 * accumulate resolve the loop from (out, input, out)), the result then
 * cast into out: sum(int8, out=bool) adds int8s, sum(float64,
 * out=float32) float64s, max(int16, out=int8) compares int16s,
 * sum(int64, out=uint64) adds float64s, cumsum(uint32, out=int8) adds
 * int64s (numpy 2.4 and 1.26: tests/test_outdtype.py).  *rt is replaced
 * by it; an out gpured has no type for (float16, complex) is refused. */
int out_dtype_rule(PyObject *out, gr_dtype in_t, gr_dtype *rt)
{
    gr_array *oa = gr_array_of(out);
    PyArray_Descr *od = oa ? oa->descr : PyArray_DESCR((PyArrayObject *)out);
    if (gr_dtype_of(od, "out") < 0) {
        return -1; /* (float16, complex, ...: gpured keeps none of them) */
    }
    PyArray_Descr *id = gr_descr_of(in_t);
    PyArray_Descr *pd = id ? PyArray_PromoteTypes(id, od) : NULL;
    Py_XDECREF(id);
    if (pd == NULL) {
        return -1;
    }
    const int t = gr_dtype_of(pd, "out");
    Py_DECREF(pd);
    if (t < 0) {
        return -1;
    }
    *rt = (gr_dtype)t;
    return 0;
}

/* out's dtype as a gr_dtype, or -1 (none, or one gpured has no type for;
 * no exception). */
int out_gr_dtype(PyObject *out)
{
    if (is_none(out)) {
        return -1;
    }
    gr_array *oa = gr_array_of(out);
    if (oa == NULL && !PyArray_Check(out)) {
        return -1;
    }
    PyArray_Descr *od = oa ? oa->descr : PyArray_DESCR((PyArrayObject *)out);
    const int t = gr_dtype_of(od, "out");
    if (t < 0) {
        PyErr_Clear();
    }
    return t;
}

int fp64_check(const gr_device *d, gr_dtype t)
{
    if (t == GR_FLOAT64 && !d->fp64) {
        PyErr_Format(PyExc_TypeError, "dtype float64 is not supported by "
                     "device '%s' (no fp64)", d->name);
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------- knobs */

static int knob_int(PyObject *v, const char *name, long long lo,
                    long long hi, long long *out)
{
    if (PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer", name);
        return -1;
    }
    PyObject *i = PyNumber_Index(v);
    if (i == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be an integer", name);
        return -1;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (x == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow != 0) {
        PyErr_Format(PyExc_ValueError, "%s must be in [%lld, %lld] (got %R)",
                     name, lo, hi, v);
        return -1;
    }
    if (x < lo) {
        PyErr_Format(PyExc_ValueError, "%s must be at least %lld (got %lld)",
                     name, lo, x);
        return -1;
    }
    if (x > hi) {
        PyErr_Format(PyExc_ValueError, "%s must be at most %lld (got %lld)",
                     name, hi, x);
        return -1;
    }
    *out = x;
    return 0;
}

/* The knob keywords of a family (allowed: names separated by spaces). */
int knobs_of(PyObject *kw, const char *allowed, const char *fname,
                    knobs *k)
{
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    memset(k, 0, sizeof *k);
    k->kn.spins = -1;
    k->device = -1;
    if (kw == NULL || kw == Py_None) {
        return 0;
    }
    if (!PyDict_Check(kw)) {
        PyErr_SetString(PyExc_TypeError, "knobs must be a dict");
        return -1;
    }
    while (PyDict_Next(kw, &pos, &key, &val)) {
        const char *n = PyUnicode_AsUTF8(key);
        if (n == NULL) {
            return -1;
        }
        const char *hit = strstr(allowed, n);
        size_t ln = strlen(n);
        int known = 0;
        while (hit != NULL) {
            if ((hit == allowed || hit[-1] == ' ') &&
                (hit[ln] == ' ' || hit[ln] == '\0')) {
                known = 1;
                break;
            }
            hit = strstr(hit + 1, n);
        }
        if (!known) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got an unexpected keyword argument '%s'",
                         fname, n);
            return -1;
        }
        if (val == Py_None) {
            continue;
        }
        long long x = 0;
        if (strcmp(n, "variant") == 0) {
            if (!PyUnicode_Check(val)) {
                PyErr_SetString(PyExc_TypeError, "variant must be a string");
                return -1;
            }
            k->kn.variant = PyUnicode_AsUTF8(val);
            k->variant_obj = val;
            if (k->kn.variant == NULL) {
                return -1;
            }
        } else if (strcmp(n, "device") == 0) {
            if (device_arg(val, &k->device) != 0) {
                return -1;
            }
        } else if (strcmp(n, "exact") == 0) {
            if ((k->exact = PyObject_IsTrue(val)) < 0) {
                return -1;
            }
        } else if (strcmp(n, "spins") == 0) {
            if (knob_int(val, n, 0, 1 << 30, &x) != 0) {
                return -1;
            }
            k->kn.spins = (int)x;
        } else {
            if (knob_int(val, n, 1, (long long)1 << 40, &x) != 0) {
                return -1;
            }
            if (strcmp(n, "wg_size") == 0) {
                k->kn.wg_size = (int)(x > (1 << 30) ? 1 << 30 : x);
            } else if (strcmp(n, "groups") == 0) {
                k->kn.groups = (int)(x > (1 << 30) ? 1 << 30 : x);
            } else if (strcmp(n, "items") == 0) {
                k->kn.items = x;
            } else if (strcmp(n, "ilp") == 0) {
                k->kn.ilp = (int)(x > 64 ? 64 : x);
            } else if (strcmp(n, "vw") == 0) {
                k->kn.vw = (int)(x > 64 ? 64 : x);
            }
        }
    }
    return 0;
}

/* device= : an index into devices(), a spec string, or a device dict. */
int device_arg(PyObject *v, int *dev)
{
    if (PyDict_Check(v)) {
        v = PyDict_GetItemString(v, "index"); /* borrowed */
        if (v == NULL) {
            PyErr_SetString(PyExc_ValueError, "device dict without 'index'");
            return -1;
        }
    }
    if (PyUnicode_Check(v)) {
        const char *s = PyUnicode_AsUTF8(v);
        if (s == NULL) {
            return -1;
        }
        *dev = gr_find_device(s);
        if (*dev < 0) {
            PyErr_Format(PyExc_ValueError, "no OpenCL device matches '%s' "
                         "(gpured.devices() lists them)", s);
            return -1;
        }
        return 0;
    }
    long long x = 0;
    if (knob_int(v, "device", 0, gr_device_count() - 1, &x) != 0) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "no device %R: there are %d "
                         "(gpured.devices())", v, gr_device_count());
        }
        return -1;
    }
    *dev = (int)x;
    return 0;
}

static PyObject *shape_tuple(const npy_intp *shape, int nd)
{
    PyObject *t = PyTuple_New(nd);
    for (int i = 0; t != NULL && i < nd; ++i) {
        PyObject *x = PyLong_FromSsize_t(shape[i]);
        if (x == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* Check `out` (an ndarray or a device array) against the result shape. */
int out_check(PyObject *out, const npy_intp *shape, int nd,
                     const char *opname, int *dev)
{
    gr_array *a = gr_array_of(out);
    const npy_intp *os;
    int ond;
    if (a != NULL) {
        gr_buffer *b = gr_buffer_check(a->buf);
        if (b == NULL) {
            return -1;
        }
        if (*dev >= 0 && *dev != b->dev) {
            PyErr_Format(PyExc_ValueError,
                         "arrays on two devices (%s and %s): move one first",
                         gr_device_get(*dev)->name,
                         gr_device_get(b->dev)->name);
            return -1;
        }
        os = a->shape;
        ond = a->nd;
    } else if (PyArray_Check(out)) {
        if (!PyArray_ISWRITEABLE((PyArrayObject *)out)) {
            PyErr_SetString(PyExc_ValueError, "output array is read-only");
            return -1;
        }
        os = PyArray_DIMS((PyArrayObject *)out);
        ond = PyArray_NDIM((PyArrayObject *)out);
    } else {
        PyErr_SetString(PyExc_TypeError, "out must be a numpy.ndarray or a "
                        "gpured.Array (return arrays must be of ArrayType)");
        return -1;
    }
    if (ond != nd) {
        PyErr_Format(PyExc_ValueError, "output parameter for reduction "
                     "operation %s has the wrong number of dimensions: Found "
                     "%d but expected %d", opname, ond, nd);
        return -1;
    }
    for (int i = 0; i < nd; ++i) {
        if (os[i] != shape[i]) {
            PyObject *want = shape_tuple(shape, nd);
            PyObject *got = shape_tuple(os, nd);
            if (want && got) {
                PyErr_Format(PyExc_ValueError, "output parameter for "
                             "reduction operation %s has the wrong shape: "
                             "found %S but expected %S", opname, got, want);
            }
            Py_XDECREF(want);
            Py_XDECREF(got);
            return -1;
        }
    }
    return 0;
}

/* Positional fastcall arguments: args[i] or NULL past nargs. */
#define ARGN(i) ((i) < nargs ? args[i] : NULL)

int mode_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t at,
                     int *mode, int *reps)
{
    *mode = 0;
    *reps = 0;
    if (nargs > at && args[at] != Py_None) {
        *mode = (int)PyLong_AsLong(args[at]);
        if (*mode == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    if (nargs > at + 1 && args[at + 1] != Py_None) {
        *reps = (int)PyLong_AsLong(args[at + 1]);
        if (*reps == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    return 0;
}

/* The shells' common entry: argument count, the function by name, its
 * family, mode and reps (args[at], args[at + 1]). */
const fdef *shell_entry(PyObject *const *args, Py_ssize_t nargs,
                               Py_ssize_t lo, Py_ssize_t hi, const char *usage,
                               gr_family fam, const char *what, int *mode,
                               int *reps)
{
    if (nargs < lo || nargs > hi) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    const fdef *f = fdef_of(args[0]);
    if (f == NULL || mode_args(args, nargs, hi - 2, mode, reps) != 0) {
        return NULL;
    }
    if (f->fam != fam) {
        PyErr_Format(PyExc_ValueError, "'%s' is not %s", f->name, what);
        return NULL;
    }
    return f;
}

/* An out= (ndarray or gpured.Array) of exactly `shape`, writeable: 0, or
 * -1 with NumPy's TypeError / ValueError (wrong_shape: its message). */
int out_shape_check(PyObject *out, const npy_intp *shape, int nd,
                           const char *wrong_shape)
{
    gr_array *oa = gr_array_of(out);
    const npy_intp *os = oa ? oa->shape
                         : PyArray_Check(out) ? PyArray_DIMS((PyArrayObject *)out)
                                              : NULL;
    const int ond = oa ? oa->nd
                    : PyArray_Check(out) ? PyArray_NDIM((PyArrayObject *)out)
                                         : -1;
    if (ond < 0) {
        PyErr_SetString(PyExc_TypeError, "out must be a numpy.ndarray or "
                        "a gpured.Array");
        return -1;
    }
    int same = ond == nd;
    for (int i = 0; same && i < nd; ++i) {
        same = os[i] == shape[i];
    }
    if (!same) {
        PyErr_SetString(PyExc_ValueError, wrong_shape);
        return -1;
    }
    if (oa == NULL && !PyArray_ISWRITEABLE((PyArrayObject *)out)) {
        PyErr_SetString(PyExc_ValueError, "output array is read-only");
        return -1;
    }
    return 0;
}

/* The by-key functions' op= (sum, prod, min, max, count). */
int bk_op_of(const char *func, PyObject *op, gr_bk_types *ty)
{
    static const struct {
        const char *name;
        gr_op op;
        int count;
    } ops[] = {{"sum", GR_ADD, 0}, {"prod", GR_MUL, 0}, {"min", GR_MIN, 0},
               {"max", GR_MAX, 0}, {"count", GR_ADD, 1}};
    const char *allowed = strcmp(func, "reduce_by_key") == 0
                              ? "sum, prod, min, max, count"
                          : strcmp(func, "sum_by_key") == 0 ? "sum, min, max, count"
                                                            : "sum, prod, min, max";
    const char *s = PyUnicode_Check(op) ? PyUnicode_AsUTF8(op) : NULL;
    if (s != NULL) {
        for (size_t i = 0; i < sizeof ops / sizeof *ops; ++i) {
            if (strcmp(s, ops[i].name) == 0 && strstr(allowed, s) != NULL) {
                ty->op = ops[i].op;
                ty->count = ops[i].count;
                return 0;
            }
        }
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    PyErr_Format(PyExc_ValueError, "%s: unknown op %R (one of %s)", func, op,
                 allowed);
    return -1;
}

/* device= of the memory and device entry points (None or -1: the
 * current device). */
int dev_of_arg(PyObject *o, int *dev)
{
    if (is_none(o) || (PyLong_Check(o) && PyLong_AsLong(o) == -1)) {
        if (gr_current_device() == NULL) {
            return -1;
        }
        *dev = gr_current_index();
        return 0;
    }
    return device_arg(o, dev);
}
