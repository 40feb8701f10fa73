/*
 * gpured._core — the one Python face of every family.
 *
 * Each public function of gpured/ (sum, cumsum, sum_by_key, ...) is one
 * call into this file with its arguments as the user gave them:
 *
 *   _core.reduce(name, a, axis, dtype, out, keepdims, initial, kw, mode, reps)
 *   _core.scan(name, a, axis, dtype, out, exclusive, kw, mode, reps)
 *   _core.bykey(func, keys, values, op, num_keys, exclusive, deterministic,
 *               sorted, kw, mode, reps)
 *
 * Here NumPy's semantics are applied (argument checks with NumPy's errors,
 * result dtypes, `out`, `initial`, subclasses deferring to NumPy), the
 * operands become gr_operands (host memory, or a device block with one
 * reference held for the call), results are allocated where the user
 * expects them, and one gr_request goes to dispatch.c with the GIL
 * released.  mode: 0 run, 1 explain (the plan as a dict), 2 bench (reps
 * timed runs: (result, [ns], plan)), 3 (reductions) run and check
 * nanargmin/nanargmax's indices for NaNs: (result, None | False | True).
 * No Python object goes below this file.
 */
#define GR_MODULE_MAIN
#include "gpured.h"
#include "array.h"
#include "hostpar.h"

#include <numpy/arrayobject.h>
#include <string.h>
#include <float.h>
#include <math.h>

/* ------------------------------------------------------------ state */

static PyObject *np_module;      /* numpy                                  */
static PyObject *np_novalue;     /* numpy._NoValue                         */
static PyObject *np_axis_error;  /* numpy.exceptions.AxisError             */
static PyObject *np_true_divide; /* numpy.true_divide                      */

/* ----------------------------------------------------------- table */

typedef struct {
    const char *name;    /* public name                                   */
    gr_func func;
    gr_family fam;
    gr_op op;            /* core operator                                 */
    const char *ufunc;   /* NumPy's name in messages                      */
    int nan;             /* nan* form: NaN elements read as 0 (sums) or 1
                          * (products), fused into the kernels' loads    */
    int count;           /* 1: count_nonzero, a sum of (element != 0);
                          * 2: _count_valid, a sum of (element == element),
                          * nanmean's divisor                            */
    int var;             /* 1: var, 2: std (mean's dtypes; `initial` is
                          * ddof); 3: nanmean (a sum and its count)      */
    int ptp;             /* ptp: one max whose state carries the minimum  */
} fdef;

static const fdef fdefs[] = {
    {"sum", GR_F_SUM, GR_FAM_REDUCE, GR_ADD, "add"},
    {"prod", GR_F_PROD, GR_FAM_REDUCE, GR_MUL, "multiply"},
    {"min", GR_F_MIN, GR_FAM_REDUCE, GR_MIN, "minimum"},
    {"max", GR_F_MAX, GR_FAM_REDUCE, GR_MAX, "maximum"},
    {"all", GR_F_ALL, GR_FAM_REDUCE, GR_ALL, "logical_and"},
    {"any", GR_F_ANY, GR_FAM_REDUCE, GR_ANY, "logical_or"},
    {"mean", GR_F_MEAN, GR_FAM_REDUCE, GR_ADD, "add"},
    {"argmin", GR_F_ARGMIN, GR_FAM_REDUCE, GR_ARGMIN, "argmin"},
    {"argmax", GR_F_ARGMAX, GR_FAM_REDUCE, GR_ARGMAX, "argmax"},
    {"cumsum", GR_F_CUMSUM, GR_FAM_SCAN, GR_ADD, "add"},
    {"cumprod", GR_F_CUMPROD, GR_FAM_SCAN, GR_MUL, "multiply"},
    {"cummin", GR_F_CUMMIN, GR_FAM_SCAN, GR_MIN, "minimum"},
    {"cummax", GR_F_CUMMAX, GR_FAM_SCAN, GR_MAX, "maximum"},
    {"nansum", GR_F_SUM, GR_FAM_REDUCE, GR_ADD, "add", 1},
    {"nanprod", GR_F_PROD, GR_FAM_REDUCE, GR_MUL, "multiply", 1},
    {"nanmin", GR_F_MIN, GR_FAM_REDUCE, GR_MIN, "fmin", 1},
    {"nanmax", GR_F_MAX, GR_FAM_REDUCE, GR_MAX, "fmax", 1},
    {"nanargmin", GR_F_ARGMIN, GR_FAM_REDUCE, GR_ARGMIN, "argmin", 1},
    {"nanargmax", GR_F_ARGMAX, GR_FAM_REDUCE, GR_ARGMAX, "argmax", 1},
    {"count_nonzero", GR_F_SUM, GR_FAM_REDUCE, GR_ADD, "add", 0, 1},
    {"_count_valid", GR_F_SUM, GR_FAM_REDUCE, GR_ADD, "add", 0, 2},
    {"var", GR_F_MEAN, GR_FAM_REDUCE, GR_ADD, "add", 0, 0, 1},
    {"std", GR_F_MEAN, GR_FAM_REDUCE, GR_ADD, "add", 0, 0, 2},
    {"nanvar", GR_F_MEAN, GR_FAM_REDUCE, GR_ADD, "add", 1, 0, 1},
    {"nanstd", GR_F_MEAN, GR_FAM_REDUCE, GR_ADD, "add", 1, 0, 2},
    {"nanmean", GR_F_MEAN, GR_FAM_REDUCE, GR_ADD, "add", 1, 0, 3},
    /* average(weights): the weighted sum over the weights' sum, one pass
     * (its mask operand carries the weights) */
    {"_average", GR_F_MEAN, GR_FAM_REDUCE, GR_ADD, "add", 0, 0, 4},
    {"ptp", GR_F_MAX, GR_FAM_REDUCE, GR_MAX, "maximum", 0, 0, 0, 1},
    {"nancumsum", GR_F_CUMSUM, GR_FAM_SCAN, GR_ADD, "add", 1},
    {"nancumprod", GR_F_CUMPROD, GR_FAM_SCAN, GR_MUL, "multiply", 1},
    {"reduce_by_key", GR_F_REDUCE_BY_KEY, GR_FAM_BYKEY, GR_ADD, ""},
    {"sum_by_key", GR_F_SUM_BY_KEY, GR_FAM_BYKEY, GR_ADD, ""},
    {"scan_by_key", GR_F_SCAN_BY_KEY, GR_FAM_BYKEY, GR_ADD, ""},
};
#define NFDEFS ((int)(sizeof fdefs / sizeof *fdefs))

static const fdef *fdef_of(PyObject *name)
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
static void list_add(PyObject **list, const char *text)
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

static int is_none(PyObject *o) { return o == NULL || o == Py_None; }

static int no_value(PyObject *o)
{
    return o == NULL || o == np_novalue;
}

/* keepdims as NumPy's ufunc reductions take it: a Python bool or anything
 * with __index__ (np.True_, floats, None, strings: TypeError). */
static int index_flag(PyObject *o, int *v)
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
static int flag_of(PyObject *o, const char *what, int *v)
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
static int bools_are_axes = 0; /* mean, where NumPy's _mean takes True as 1 */
static int mean_bool_axes = 0; /* whether the installed NumPy's mean does */
static int mean_call = 0;      /* axes of a mean being read */

static int axis_one_ex(PyObject *o, int ndim, int in_tuple, int *ax)
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

static int axis_one(PyObject *o, int ndim, int *ax)
{
    return axis_one_ex(o, ndim, 0, ax);
}

/* axis of a reduction -> bit mask (None: all).  tuple_ok: sum & co. */
static int axes_of(PyObject *axis, int ndim, int tuple_ok, int strict0,
                   uint64_t *mask)
{
    *mask = 0;
    if (is_none(axis)) {
        *mask = ndim >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << ndim) - 1);
        return 0;
    }
    if (tuple_ok && PyTuple_Check(axis)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(axis); ++i) {
            int a;
            if (axis_one_ex(PyTuple_GET_ITEM(axis, i), ndim, 1, &a) != 0) {
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
        if (axis_one_ex(axis, ndim, strict0, &a) != 0) {
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
static gr_dtype sum_dtype(gr_dtype t)
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
static int dtype_arg_ex(PyObject *o, int strict, int *t)
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

static int dtype_arg(PyObject *o, int *t)
{
    return dtype_arg_ex(o, 0, t);
}

/* NumPy computes a reduction or an accumulation in out's dtype when the
 * input casts to it "same kind" (max(int16, out=int8) compares int8s) and
 * in its own result dtype otherwise (sum(float, out=int64) sums floats,
 * then casts).  *rt is replaced by out's dtype in the first case. */
static int out_dtype_rule(PyObject *out, gr_dtype in_t, gr_dtype *rt)
{
    gr_array *oa = gr_array_of(out);
    PyArray_Descr *od = oa ? oa->descr : PyArray_DESCR((PyArrayObject *)out);
    PyArray_Descr *id = gr_descr_of(in_t);
    if (id == NULL) {
        return -1;
    }
    const int same = PyArray_CanCastTypeTo(id, od, NPY_SAME_KIND_CASTING);
    Py_DECREF(id);
    if (same) {
        const int t = gr_dtype_of(od, "out");
        if (t < 0) {
            return -1;
        }
        *rt = (gr_dtype)t;
    }
    return 0;
}

/* NumPy accumulates in the promotion of its result dtype and out's
 * (cummax(int16, out=int8) compares int16s, then casts; cumsum(float64,
 * out=float32) adds float64s; cummax(uint64, out=int64) float64s). */
static int scan_out_dtype_rule(PyObject *out, gr_dtype *rt)
{
    gr_array *oa = gr_array_of(out);
    PyArray_Descr *od = oa ? oa->descr : PyArray_DESCR((PyArrayObject *)out);
    if (gr_dtype_of(od, "out") < 0) {
        return -1; /* (float16, ...: gpured keeps none of them) */
    }
    PyArray_Descr *rd = gr_descr_of(*rt);
    PyArray_Descr *pd = rd ? PyArray_PromoteTypes(rd, od) : NULL;
    Py_XDECREF(rd);
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

static int fp64_check(const gr_device *d, gr_dtype t)
{
    if (t == GR_FLOAT64 && !d->fp64) {
        PyErr_Format(PyExc_TypeError, "dtype float64 is not supported by "
                     "device '%s' (no fp64)", d->name);
        return -1;
    }
    return 0;
}

/* Work that an interrupt (Ctrl-C) left running on a device, and the
 * Python objects whose memory it reads or writes: kept until the device
 * is done with it, released by the next call that finds it done. */
typedef struct pend {
    cl_event ev;
    PyObject *objs[3];
    struct pend *next;
} pend;
static pend *pending_list = NULL;

static void pending_add(cl_event ev, PyObject *a, PyObject *b, PyObject *c)
{
    pend *p = calloc(1, sizeof *p);
    if (p == NULL) {
        /* nothing else can keep the memory alive: wait for the device */
        Py_BEGIN_ALLOW_THREADS
        clWaitForEvents(1, &ev);
        Py_END_ALLOW_THREADS
        clReleaseEvent(ev);
        return;
    }
    p->ev = ev;
    p->objs[0] = Py_XNewRef(a);
    p->objs[1] = Py_XNewRef(b);
    p->objs[2] = Py_XNewRef(c);
    p->next = pending_list;
    pending_list = p;
}

static void pending_reap(void)
{
    for (pend **pp = &pending_list; *pp != NULL;) {
        pend *p = *pp;
        if (!gr_event_done(p->ev)) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        clReleaseEvent(p->ev);
        for (int i = 0; i < 3; ++i) {
            Py_XDECREF(p->objs[i]);
        }
        free(p);
    }
}

/* Interrupt check for dispatch (called without the GIL). */
static int signals_pending(void *ctx)
{
    (void)ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    int r = PyErr_CheckSignals();
    PyGILState_Release(g);
    return r != 0;
}

static int forked_check(void)
{
    if (gr_forked()) {
        PyErr_SetString(PyExc_RuntimeError, GR_FORK_MSG);
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------- knobs */

typedef struct {
    gr_knobs kn;
    PyObject *variant_obj;   /* borrowed from the dict                    */
    int device;              /* -1: not given                             */
} knobs;

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

static int device_arg(PyObject *v, int *dev);

/* The knob keywords of a family (allowed: names separated by spaces). */
static int knobs_of(PyObject *kw, const char *allowed, const char *fname,
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
static int device_arg(PyObject *v, int *dev)
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

/* ---------------------------------------------------------- operands */

/* An operand from a Python object: a device array (a block reference is
 * taken), or host memory (an aligned, native-order ndarray kept alive in
 * *keep; copies are made where NumPy's memory is not that).  *dev: the
 * device of a device array, else unchanged. */
static int is_pyopencl_array(PyObject *obj);
static int pyopencl_operand(PyObject *obj, gr_operand *o, PyObject **keep,
                            int *dev, const char *what);

/* ------------------------------------------ host memory used again
 * The memory of a NumPy array seen in NOTE_USES calls (its owner: the
 * array that owns the data its views share) is offered for registration
 * (stream.c: on NVIDIA GPUs its copies then run at the DMA rate, straight
 * from the array, 19.6 against ~35 ms per GiB through the staging pool;
 * registering costs ~25 ms per GiB and releasing as much, so arrays used
 * once or twice are left alone).  A weak reference to the owner withdraws
 * the offer when the owner dies, before NumPy frees the memory.  While an
 * array is noted, ndarray.resize() refuses it (NumPy's refcheck counts weak
 * references); resize(refcheck=False) of a registered array would leave
 * the driver holding the old pages. */
#define NOTE_MAX 16
#define NOTE_USES 3
static struct {
    PyObject *wr;     /* weak reference to the owner (dead: target None)   */
    char *base;
    size_t len;
    int uses;
    int id;           /* stream.c's offer, or -1                          */
    unsigned long stamp;
} notes[NOTE_MAX];
static unsigned long note_clock;
static PyObject *note_cb;
static int reg_devices = -1; /* a device registration helps: 1, none: 0 */

/* The weak reference's target, compared by identity only (not owned). */
static PyObject *note_target(PyObject *wr)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *t = NULL;
    if (PyWeakref_GetRef(wr, &t) < 0) {
        PyErr_Clear();
        return Py_None;
    }
    if (t == NULL) {
        return Py_None;
    }
    Py_DECREF(t);
    return t;
#else
    return PyWeakref_GetObject(wr);
#endif
}

/* Forget note i's offer; returns it for withdraw() (the weak reference
 * stays: it may be the one being called back; a later note drops it). */
static int note_forget(int i)
{
    const int id = notes[i].wr != NULL ? notes[i].id : -1; /* unused: 0s */
    notes[i].id = -1;
    notes[i].uses = 0;
    notes[i].base = NULL;
    notes[i].len = 0;
    return id;
}

/* Withdraw an offer.  No lock but the table's: a registration that writes
 * in flight still read is released by the last of them (stream.c).  The
 * release unlocks the memory (~25 ms per GiB on NVIDIA's driver), so it
 * runs without the GIL; the notes table may change meanwhile. */
static void withdraw(int id)
{
    if (id >= 0) {
        Py_BEGIN_ALLOW_THREADS
        gr_hostreg_withdraw(id);
        Py_END_ALLOW_THREADS
    }
}

static PyObject *note_dead(PyObject *self, PyObject *wr)
{
    for (int i = 0; i < NOTE_MAX; ++i) {
        if (notes[i].wr == wr) {
            withdraw(note_forget(i));
            break;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef note_cb_def = {"_host_memory_freed", note_dead, METH_O,
                                  NULL};

static int note_wanted(size_t nbytes)
{
    gr_stream_cfg c;
    long s, k;
    gr_stream_get_cfg(&c, &s, &k);
    if (c.reg == GR_REG_NEVER || nbytes == 0 || nbytes < c.min_bytes) {
        return 0;
    }
    if (c.reg == GR_REG_ALWAYS) {
        return 1;
    }
    if (reg_devices < 0) {
        reg_devices = 0;
        for (int i = 0; i < gr_device_count(); ++i) {
            const gr_device *d = gr_device_get(i);
            reg_devices |= d->is_gpu && d->nvidia_ptx;
        }
    }
    return reg_devices;
}

/* Count a call on host array arr; offer its owner's memory from the
 * NOTE_USES-th call on.  Never fails: a note is only a speed-up. */
static void host_note(PyArrayObject *arr)
{
    if (!note_wanted((size_t)PyArray_NBYTES(arr))) {
        return;
    }
    PyObject *own = (PyObject *)arr;
    while (PyArray_Check(own) &&
           !PyArray_CHKFLAGS((PyArrayObject *)own, NPY_ARRAY_OWNDATA) &&
           PyArray_BASE((PyArrayObject *)own) != NULL) {
        own = PyArray_BASE((PyArrayObject *)own);
    }
    if (!PyArray_Check(own) ||
        !PyArray_CHKFLAGS((PyArrayObject *)own, NPY_ARRAY_OWNDATA)) {
        return;
    }
    char *base = PyArray_DATA((PyArrayObject *)own);
    const size_t len = (size_t)PyArray_NBYTES((PyArrayObject *)own);
    int at = -1, oldest = 0, gone = -1;
    for (int i = 0; i < NOTE_MAX; ++i) {
        if (notes[i].wr != NULL && note_target(notes[i].wr) == own) {
            at = i;
            break;
        }
        if (notes[i].stamp < notes[oldest].stamp) {
            oldest = i;
        }
    }
    if (at >= 0 && (notes[at].base != base || notes[at].len != len)) {
        gone = note_forget(at); /* resized (refcheck=False) */
        notes[at].base = base;
        notes[at].len = len;
    }
    if (at < 0) {
        if (note_cb == NULL &&
            (note_cb = PyCFunction_New(&note_cb_def, NULL)) == NULL) {
            PyErr_Clear();
            return;
        }
        PyObject *wr = PyWeakref_NewRef(own, note_cb);
        if (wr == NULL) {
            PyErr_Clear();
            return;
        }
        at = oldest;
        for (int i = 0; i < NOTE_MAX; ++i) {
            if (notes[i].wr == NULL || note_target(notes[i].wr) == Py_None) {
                at = i; /* a free or dead slot before the oldest live one */
                break;
            }
        }
        gone = note_forget(at);
        Py_XSETREF(notes[at].wr, wr);
        notes[at].base = base;
        notes[at].len = len;
        notes[at].uses = 0;
        notes[at].id = -1;
    }
    notes[at].stamp = ++note_clock;
    if (++notes[at].uses >= NOTE_USES && notes[at].id < 0) {
        notes[at].id = gr_hostreg_offer(base, len);
    }
    withdraw(gone);
}

static int operand_of(PyObject *obj, gr_operand *o, PyObject **keep, int *dev,
                      const char *what)
{
    gr_array *a = gr_array_of(obj);
    memset(o, 0, sizeof *o);
    *keep = NULL;
    if (a != NULL) {
        int di = -1;
        if (gr_array_operand(a, o, &di) != 0) {
            return -1;
        }
        if (*dev >= 0 && *dev != di) {
            gr_block_put(o->blk);
            o->blk = NULL;
            PyErr_Format(PyExc_ValueError,
                         "arrays on two devices (%s and %s): move one first",
                         gr_device_get(*dev)->name, gr_device_get(di)->name);
            return -1;
        }
        *dev = di;
        return 0;
    }
    PyArrayObject *arr;
    if (PyArray_Check(obj)) {
        arr = (PyArrayObject *)Py_NewRef(obj);
    } else if (is_pyopencl_array(obj)) {
        return pyopencl_operand(obj, o, keep, dev, what);
    } else {
        arr = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
        if (arr == NULL) {
            return -1;
        }
    }
    int t = gr_dtype_of(PyArray_DESCR(arr), what);
    if (t < 0) {
        Py_DECREF(arr);
        return -1;
    }
    if (!PyArray_ISNOTSWAPPED(arr) || !PyArray_ISALIGNED(arr)) {
        PyArray_Descr *nat = PyArray_DescrNewByteorder(PyArray_DESCR(arr),
                                                       NPY_NATIVE);
        PyObject *cp = nat ? PyArray_FromAny((PyObject *)arr, nat, 0, 0,
                                             NPY_ARRAY_ALIGNED |
                                                 NPY_ARRAY_NOTSWAPPED |
                                                 NPY_ARRAY_ENSURECOPY,
                                             NULL)
                           : NULL;
        Py_DECREF(arr);
        if (cp == NULL) {
            return -1;
        }
        arr = (PyArrayObject *)cp;
    }
    o->present = 1;
    o->t = (gr_dtype)t;
    o->nd = PyArray_NDIM(arr);
    if (o->nd > GR_MAXDIMS) {
        Py_DECREF(arr);
        PyErr_Format(PyExc_ValueError, "at most %d dimensions", GR_MAXDIMS);
        return -1;
    }
    for (int i = 0; i < o->nd; ++i) {
        o->shape[i] = (size_t)PyArray_DIM(arr, i);
        o->strides[i] = (ptrdiff_t)PyArray_STRIDE(arr, i);
    }
    o->host = PyArray_DATA(arr);
    *keep = (PyObject *)arr;
    host_note(arr);
    return 0;
}

/* ------------------------------------------------- PyOpenCL, DLPack */

/* Whether obj is a pyopencl.array.Array (only if PyOpenCL is loaded). */
static int is_pyopencl_array(PyObject *obj)
{
    PyObject *mods = PyImport_GetModuleDict(); /* borrowed */
    PyObject *m = PyDict_GetItemString(mods, "pyopencl.array"); /* borrowed */
    if (m == NULL) {
        return 0;
    }
    PyObject *cls = PyObject_GetAttrString(m, "Array");
    int r = cls ? PyObject_IsInstance(obj, cls) : -1;
    Py_XDECREF(cls);
    if (r < 0) {
        PyErr_Clear();
        return 0;
    }
    return r;
}

/* obj.a.b (or obj.a when b is NULL) as an integer (int_ptr, sizes). */
static int attr_int(PyObject *obj, const char *a, const char *b,
                    long long *v)
{
    PyObject *x = PyObject_GetAttrString(obj, a);
    if (x != NULL && b != NULL) {
        Py_SETREF(x, PyObject_GetAttrString(x, b));
    }
    if (x == NULL) {
        return -1;
    }
    *v = PyLong_AsLongLong(x);
    Py_DECREF(x);
    return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* A PyOpenCL array: its buffer in place when gpured runs on its context
 * (gpured.use_queue / set_device(queue=...)), else a copy through the
 * host (its get()).  A queue of the context other than gpured's is
 * finished first, so that gpured sees what PyOpenCL enqueued. */
static int pyopencl_operand(PyObject *obj, gr_operand *o, PyObject **keep,
                            int *dev, const char *what)
{
    long long ctx = 0, q = 0, mem = 0, size = 0, off = 0;
    if (attr_int(obj, "context", "int_ptr", &ctx) != 0) {
        return -1;
    }
    const int di = gr_device_of_context((cl_context)(intptr_t)ctx);
    if (di < 0) {
        PyObject *host = PyObject_CallMethod(obj, "get", NULL);
        if (host == NULL) {
            return -1;
        }
        int rc = operand_of(host, o, keep, dev, what);
        Py_DECREF(host);
        return rc;
    }
    if (*dev >= 0 && *dev != di) {
        PyErr_Format(PyExc_ValueError,
                     "arrays on two devices (%s and %s): move one first",
                     gr_device_get(*dev)->name, gr_device_get(di)->name);
        return -1;
    }
    PyObject *shape = PyObject_GetAttrString(obj, "shape");
    PyObject *strides = shape ? PyObject_GetAttrString(obj, "strides") : NULL;
    PyObject *dto = strides ? PyObject_GetAttrString(obj, "dtype") : NULL;
    PyArray_Descr *descr = NULL;
    gr_status st = {0};
    int rc = -1, t;
    if (dto == NULL || !PyArray_DescrConverter(dto, &descr) ||
        (t = gr_dtype_of(descr, what)) < 0 ||
        attr_int(obj, "base_data", "int_ptr", &mem) != 0 ||
        attr_int(obj, "base_data", "size", &size) != 0 ||
        attr_int(obj, "offset", NULL, &off) != 0 ||
        attr_int(obj, "queue", "int_ptr", &q) != 0) {
        goto done;
    }
    if (!PyArray_ISNBO(descr->byteorder)) {
        PyErr_SetString(PyExc_TypeError, "byte-swapped PyOpenCL arrays are "
                        "not supported");
        goto done;
    }
    memset(o, 0, sizeof *o);
    o->present = 1;
    o->t = (gr_dtype)t;
    o->nd = (int)PyTuple_GET_SIZE(shape);
    if (o->nd > GR_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "at most %d dimensions", GR_MAXDIMS);
        goto done;
    }
    for (int i = 0; i < o->nd; ++i) {
        o->shape[i] = (size_t)PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        o->strides[i] = (ptrdiff_t)PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i));
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    gr_device *d = gr_device_get(di);
    cl_command_queue theirs = (cl_command_queue)(intptr_t)q;
    cl_mem m = (cl_mem)(intptr_t)mem;
    Py_BEGIN_ALLOW_THREADS
    if (theirs != d->queue) {
        rc = gr_queue_finish(theirs, &st);
    } else {
        rc = 0;
    }
    if (rc == 0) {
        clRetainMemObject(m);
        o->blk = gr_block_wrap(d, m, (size_t)size, NULL, NULL, &st);
        if (o->blk == NULL) {
            clReleaseMemObject(m);
            rc = -1;
        }
    }
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        goto done;
    }
    o->off = (size_t)off;
    *dev = di;
    rc = 0;
done:
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(dto);
    Py_XDECREF(descr);
    return rc;
}

static size_t operand_size(const gr_operand *o)
{
    size_t n = 1;
    for (int i = 0; i < o->nd; ++i) {
        n *= o->shape[i];
    }
    return n;
}

/* The device a call without device arrays runs on. */
static int default_device(const knobs *k)
{
    if (k->device >= 0) {
        return k->device;
    }
    if (gr_current_device() == NULL) {
        return -1;
    }
    return gr_current_index();
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

/* A device array's values as a NumPy array (a wait, then a read). */
static PyObject *array_get(gr_array *a);

/* A device array from host values (one pooled block, one write). */
static PyObject *upload(PyArrayObject *host, int dev);

/* Check `out` (an ndarray or a device array) against the result shape. */
static int out_check(PyObject *out, const npy_intp *shape, int nd,
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

/* Run a request with the GIL released; -1 with the exception set. */
static int run_request(gr_request *req, gr_result *res)
{
    gr_status st = {0};
    int rc;
    req->interrupted = signals_pending;
    Py_BEGIN_ALLOW_THREADS
    rc = gr_dispatch(req, res, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------- plan dicts */

/* What explain() says of a call the host path answers. */
static PyObject *host_plan_dict(const gr_device *d, const gr_result *r)
{
    return Py_BuildValue("{s:s, s:s, s:s, s:s, s:i, s:s, s:n, s:n, s:s}",
                         "placement", "host", "placement_why", r->place_why,
                         "variant", "host", "kernel",
                         "host.c (no OpenCL)", "passes", 0, "why",
                         r->place_why, "segments", (Py_ssize_t)r->lay.M,
                         "segment_length", (Py_ssize_t)r->lay.L,
                         "device", "host");
}

static PyObject *add_placement(PyObject *dict, const gr_result *r)
{
    if (dict != NULL) {
        PyObject *p = PyUnicode_FromString("device");
        PyObject *w = PyUnicode_FromString(r->place_why[0] ? r->place_why
                                           : "the device: a device operand, a "
                                             "device or knob given, or "
                                             "placement('current')");
        if (p == NULL || w == NULL || PyDict_SetItemString(dict, "placement", p) ||
            PyDict_SetItemString(dict, "placement_why", w)) {
            Py_CLEAR(dict);
        }
        Py_XDECREF(p);
        Py_XDECREF(w);
    }
    return dict;
}

static PyObject *reduce_plan_dict(const gr_device *d, const gr_result *r)
{
    const gr_plan *p = &r->plan.reduce;
    if (r->where == 1) {
        return host_plan_dict(d, r);
    }
    return add_placement(Py_BuildValue(
        "{s:s, s:s, s:i, s:i, s:i, s:i, s:O, s:n, s:n, s:i, s:i, s:s, s:s, "
        "s:s, s:O, s:n, s:n, s:n, s:n, s:O, s:O}",
        "variant", p->variant, "kernel",
        p->kind == GR_K_GROUP ? "gr_reduce_group" : "gr_reduce_items",
        "wg_size", p->wg, "vw", p->vw, "ilp", p->ilp, "lanes", p->lanes,
        "contiguous_per_work_item", p->load == 1 ? Py_True : Py_False,
        "groups", (Py_ssize_t)p->parts, "chunk", (Py_ssize_t)p->chunk,
        "passes", p->passes, "wg_size_pass2", p->wg2, "accumulator",
        r->acc.a_cl, "why", p->why, "device", d->name, "compensated",
        r->acc.comp ? Py_True : Py_False, "segments", (Py_ssize_t)r->lay.M,
        "segment_length", (Py_ssize_t)r->lay.L, "seg_stride",
        (Py_ssize_t)r->lay.seg_stride, "elem_stride",
        (Py_ssize_t)r->lay.elem_stride, "tuned",
        p->tuned ? Py_True : Py_False, "copied",
        r->copied ? Py_True : Py_False), r);
}

static PyObject *scan_plan_dict(const gr_device *d, const gr_scan_plan *p,
                                const gr_accum *acc, const gr_layout *lay)
{
    static const char *const kinds[] = {"row_per_item", "chunks",
                                        "reduce_then_scan", "lookback"};
    static const char *const locals[] = {"none", "naive", "blelloch",
                                         "workgroup", "subgroup"};
    return Py_BuildValue(
        "{s:s, s:s, s:s, s:i, s:i, s:i, s:n, s:n, s:n, s:i, s:i, s:s, s:s, "
        "s:O, s:s, s:n, s:n, s:n, s:n}",
        "variant", p->variant, "kernel", kinds[p->kind], "combine",
        locals[p->local], "wg_size", p->wg, "items", p->items, "ilp", p->ilp,
        "groups", (Py_ssize_t)p->parts, "chunk", (Py_ssize_t)p->chunk,
        "tiles", (Py_ssize_t)p->tiles, "passes",
        p->kind == GR_SK_RTS ? 3 : 1, "spins", p->spin, "accumulator",
        acc->a_cl, "why", p->why, "compensated",
        acc->comp ? Py_True : Py_False, "device", d->name, "segments",
        (Py_ssize_t)lay->M, "segment_length", (Py_ssize_t)lay->L,
        "seg_stride", (Py_ssize_t)lay->seg_stride, "elem_stride",
        (Py_ssize_t)lay->elem_stride);
}

static PyObject *bk_plan_dict(const gr_bk_plan *p, const gr_bk_facts *fx,
                              const gr_device *d, const char *func)
{
    return Py_BuildValue(
        "{s:s, s:s, s:i, s:n, s:n, s:n, s:O, s:O, s:s, s:s, s:n, s:K, s:K, "
        "s:n, s:O}",
        "function", func, "variant", p->name ? p->name : "", "wg_size", p->wg,
        "items", (Py_ssize_t)p->items, "groups", (Py_ssize_t)p->groups,
        "parts", (Py_ssize_t)p->parts, "ptx", p->ptx ? Py_True : Py_False,
        "match_any", p->match ? Py_True : Py_False, "why", p->why, "device",
        d->name, "n", (Py_ssize_t)fx->n, "heads",
        (unsigned long long)fx->heads, "descents",
        (unsigned long long)fx->descents, "num_keys",
        (Py_ssize_t)fx->num_keys, "measured",
        fx->unmeasured ? Py_False : Py_True);
}

static PyObject *times_list(const double *ns, int reps)
{
    PyObject *t = PyList_New(reps);
    for (int i = 0; t != NULL && i < reps; ++i) {
        PyObject *x = PyFloat_FromDouble(ns[i]);
        if (x == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyList_SET_ITEM(t, i, x);
    }
    return t;
}

/* Call numpy.<name>(*args, **kw) (empty inputs, subclasses). */
/* timeit's (result, times, plan): takes the references to value and
 * plan (NULL: an error is set). */
static PyObject *timed_result(PyObject *value, const double *ns, int reps,
                              PyObject *plan)
{
    PyObject *times = plan ? times_list(ns, reps) : NULL;
    PyObject *r = times ? Py_BuildValue("(OOO)", value, times, plan) : NULL;
    Py_XDECREF(times);
    Py_XDECREF(plan);
    Py_DECREF(value);
    return r;
}

static PyObject *numpy_call(const char *name, PyObject *args, PyObject *kw)
{
    PyObject *f = PyObject_GetAttrString(np_module, name);
    if (f == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_Call(f, args, kw);
    Py_DECREF(f);
    return r;
}

/* Wrap a device result block as an Array of shape/dtype (C order). */
static PyObject *wrap_block(gr_block *blk, gr_dtype t, const npy_intp *shape,
                            int nd)
{
    PyArray_Descr *descr = gr_descr_of(t);
    size_t nbytes = (size_t)gr_dtypes[t].size;
    for (int i = 0; i < nd; ++i) {
        nbytes *= (size_t)shape[i];
    }
    PyObject *buf = descr ? gr_buffer_wrap(blk, nbytes) : NULL;
    if (descr == NULL) {
        gr_block_put(blk);
    }
    PyObject *arr = buf ? gr_array_new(buf, descr, nd, shape, NULL, 0) : NULL;
    Py_XDECREF(buf);
    Py_XDECREF(descr);
    return arr;
}

/* A casting copy between two device Arrays of one device (strided, any
 * dtypes): 0, or -1 with an exception set. */
static int device_copy_into(gr_array *src, gr_array *dst)
{
    gr_operand so, dd;
    gr_status st = {0};
    int d0 = -1, d1 = -1, rc;
    if (gr_array_operand(src, &so, &d0) != 0) {
        return -1;
    }
    if (gr_array_operand(dst, &dd, &d1) != 0) {
        gr_block_put(so.blk);
        return -1;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = gr_operand_copy(&so, &dd, NULL, &st);
    Py_END_ALLOW_THREADS
    gr_block_put(so.blk);
    gr_block_put(dd.blk);
    if (rc != 0) {
        gr_raise(&st);
        return -1;
    }
    return 0;
}

/* Put a host result into `out` (device array or ndarray) or onto dev. */
static PyObject *host_result_to(PyObject *r, PyObject *out, int device_res,
                                int dev)
{
    if (r == NULL) {
        return NULL;
    }
    gr_array *oa = out ? gr_array_of(out) : NULL;
    if (oa == NULL && !device_res) {
        return r;
    }
    PyArrayObject *h = (PyArrayObject *)PyArray_FromAny(r, NULL, 0, 0,
                                                        NPY_ARRAY_CARRAY, NULL);
    Py_DECREF(r);
    if (h == NULL) {
        return NULL;
    }
    PyObject *up = upload(h, oa ? ((gr_buffer *)oa->buf)->dev : dev);
    Py_DECREF(h);
    if (up == NULL || oa == NULL) {
        return up;
    }
    /* into the device out: a cast copy on the device */
    const int rc = device_copy_into((gr_array *)up, oa);
    Py_DECREF(up);
    return rc != 0 ? NULL : Py_NewRef(out);
}

/* The common start of every family's request: the device (an Array
 * operand's or out's, else device=, else the current one), the input
 * operand, the function and mode.  NULL with an exception set. */
static gr_device *request_begin(const fdef *f, PyObject *a, PyObject *out,
                                const knobs *k, int mode, gr_request *req,
                                PyObject **keep)
{
    int dev = k->device;
    if (forked_check() != 0) {
        return NULL;
    }
    if (pending_list != NULL) {
        pending_reap();
    }
    if (!is_none(out) && gr_array_of(out) != NULL) {
        gr_buffer *b = gr_buffer_check(((gr_array *)out)->buf);
        if (b == NULL) {
            return NULL;
        }
        dev = b->dev;
    }
    if (operand_of(a, &req->in, keep, &dev, "input") != 0) {
        return NULL;
    }
    if (dev < 0 && (dev = default_device(k)) < 0) {
        return NULL;
    }
    req->dev = dev;
    req->func = f->func;
    req->fam = f->fam;
    req->nan = f->nan;
    req->count = f->count;
    req->kn = k->kn;
    /* mode 3: a run whose nanargmin/nanargmax indices are checked for
     * NaNs (the face's all-NaN rule): (result, flag) */
    req->mode = mode == 3 ? GR_RUN : (gr_mode)mode;
    req->nan_check = mode == 3;
    /* Placement may answer on the host (policy.c decides): not when the
     * user pinned a device, a variant or a knob, nor when timing. */
    req->host_ok = gr_placement_auto() && k->device < 0 && mode != 2 &&
                   (k->kn.variant == NULL ||
                    strcmp(k->kn.variant, "auto") == 0) &&
                   !k->kn.wg_size && !k->kn.groups && !k->kn.items &&
                   !k->kn.ilp && !k->kn.vw && k->kn.spins < 0;
    /* ... nor move it to another device: the current one was named
     * (GPURED_DEVICE, set_device()), or an operand lives on it */
    req->roam = req->host_ok && !gr_device_pinned() && dev == gr_current_index();
    req->home_dev = dev;
    return gr_device_get(dev);
}

/* Timed runs: reps device times land in *ns (malloc'd). */
static int bench_setup(gr_request *req, int mode, int reps, double **ns)
{
    if (mode != 2) {
        return 0;
    }
    if (reps < 1 || (*ns = calloc((size_t)reps, sizeof **ns)) == NULL) {
        PyErr_SetString(PyExc_ValueError, "reps must be at least 1");
        return -1;
    }
    req->reps = reps;
    req->ns = *ns;
    return 0;
}

/* ======================================================== reductions */

static PyObject *reduce_impl(const fdef *f, PyObject *a, PyObject *axis,
                             PyObject *dtype, PyObject *out,
                             PyObject *keepdims_o, PyObject *initial,
                             PyObject *kw, int mode, int reps,
                             PyObject *where)
{
    gr_request req;
    gr_result res;
    knobs k;
    PyObject *keep = NULL, *result = NULL, *tmp = NULL, *init_arr = NULL;
    PyObject *wkeep = NULL;
    double *ns = NULL;
    int keepdims = 0, dev = -1, rt_i = -2;
    npy_intp oshape[GR_MAXDIMS];
    int ond = 0;
    const int is_arg = f->op == GR_ARGMIN || f->op == GR_ARGMAX;

    memset(&req, 0, sizeof req);
    memset(&res, 0, sizeof res);
    if (knobs_of(kw, "variant wg_size groups items ilp vw device", f->name,
                 &k) != 0) {
        return NULL;
    }
    /* var/std: `initial` carries ddof (a real number, NumPy's) */
    double ddof = 0.0;
    PyObject *ddof_o = NULL;
    if (f->var) {
        if (!no_value(initial) && initial != Py_None) {
            ddof = PyFloat_AsDouble(initial);
            if (ddof == -1.0 && PyErr_Occurred()) {
                return NULL;
            }
            ddof_o = initial;
        }
        initial = NULL;
    }
    if (is_arg) {
        /* NumPy's argmin/argmax take keepdims by its truth value */
        keepdims = keepdims_o ? PyObject_IsTrue(keepdims_o) : 0;
        if (keepdims < 0) {
            return NULL;
        }
    } else if (index_flag(keepdims_o, &keepdims) != 0) {
        return NULL;
    }
    /* NumPy subclasses (masked arrays, matrices, ...) answer through
     * NumPy, which defers to their own methods: never a silent plain
     * reduction of their data. */
    if (PyArray_Check(a) && !PyArray_CheckExact(a) && mode == 0) {
        PyObject *args = PyTuple_Pack(1, a);
        PyObject *kwd = PyDict_New();
        if (args == NULL || kwd == NULL ||
            PyDict_SetItemString(kwd, "axis", axis ? axis : Py_None) != 0 ||
            (!is_arg && f->func != GR_F_MIN && f->func != GR_F_MAX &&
             f->func != GR_F_ALL && f->func != GR_F_ANY &&
             PyDict_SetItemString(kwd, "dtype", dtype ? dtype : Py_None) != 0) ||
            (!is_none(out) && PyDict_SetItemString(kwd, "out", out) != 0) ||
            (!is_none(where) && PyDict_SetItemString(kwd, "where", where) != 0) ||
            (keepdims && PyDict_SetItemString(kwd, "keepdims", Py_True) != 0) ||
            (!no_value(initial) &&
             PyDict_SetItemString(kwd, "initial", initial) != 0) ||
            (ddof_o != NULL && PyDict_SetItemString(kwd, "ddof", ddof_o) != 0)) {
            Py_XDECREF(args);
            Py_XDECREF(kwd);
            return NULL;
        }
        result = numpy_call(f->name, args, kwd);
        Py_DECREF(args);
        Py_DECREF(kwd);
        return result;
    }
    gr_device *d = request_begin(f, a, out, &k, mode, &req, &keep);
    if (d == NULL) {
        goto done;
    }
    const int device_in = req.in.blk != NULL;
    dev = req.dev;
    const int nd = req.in.nd;
    /* mean checks axes against a 0-d array's 0 dimensions (NumPy's
     * _mean), the ufunc reductions and argmin/argmax take 0 / -1 */
    bools_are_axes = f->func == GR_F_MEAN && mean_bool_axes;
    mean_call = f->func == GR_F_MEAN;
    const int arc = axes_of(axis, nd, !is_arg, f->func == GR_F_MEAN,
                            &req.axes);
    bools_are_axes = 0;
    mean_call = 0;
    if (arc != 0) {
        goto done;
    }
    if (is_arg && is_none(axis)) {
        req.axes = nd >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nd) - 1);
    }
    if (!is_none(where)) {
        /* where=: a bool mask of a's shape (the Python face converts and
         * broadcasts it; a host input's mask on the host) */
        int wd = device_in ? dev : -1;
        if (!device_in && gr_array_of(where) != NULL) {
            PyErr_SetString(PyExc_ValueError, "where: a device mask for a "
                            "host array (the Python face downloads it)");
            goto done;
        }
        if (operand_of(where, &req.mask, &wkeep, &wd, "where") != 0) {
            goto done;
        }
        /* average's weights: any dtype, converted in the loads */
        req.wmode = f->var == 4 ? 2 : 1;
        req.wax = -1;
        int same = (req.mask.t == GR_BOOL || req.wmode == 2) &&
                   req.mask.nd == nd;
        for (int i = 0; same && i < nd; ++i) {
            same = req.mask.shape[i] == req.in.shape[i];
        }
        if (!same && req.wmode == 2 && req.mask.nd == 1) {
            /* 1-d weights along the one reduced axis (of more than one
             * element): read by position in the segment */
            int k = -1, n = 0;
            for (int i = 0; i < nd; ++i) {
                if ((req.axes >> i & 1) && req.in.shape[i] != 1) {
                    k = i;
                    ++n;
                }
            }
            if (n == 1 && req.in.shape[k] == req.mask.shape[0]) {
                req.wax = k;
                same = 1;
            }
        }
        if (!same) {
            PyErr_SetString(PyExc_ValueError, "where: a bool mask of the "
                            "array's shape (the Python face broadcasts it)");
            goto done;
        }
    } else if (f->var == 4) {
        PyErr_SetString(PyExc_TypeError, "_average needs its weights");
        goto done;
    }
    req.ordered = is_arg;
    /* result dtype (NumPy's) and what is computed before the epilogue */
    if (f->func == GR_F_SUM || f->func == GR_F_PROD || f->func == GR_F_MEAN) {
        if (dtype_arg_ex(dtype, 1, &rt_i) != 0) {
            goto done;
        }
    } else if (!is_none(dtype)) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword "
                     "argument 'dtype'", f->name);
        goto done;
    }
    gr_dtype rt;
    switch (f->func) {
    case GR_F_SUM: case GR_F_PROD:
        rt = rt_i >= 0 ? (gr_dtype)rt_i : sum_dtype(req.in.t);
        break;
    case GR_F_MEAN:
        rt = rt_i >= 0 ? (gr_dtype)rt_i
             : gr_dtypes[req.in.t].is_float ? req.in.t : GR_FLOAT64;
        break;
    case GR_F_ALL: case GR_F_ANY:
        rt = GR_BOOL;
        break;
    case GR_F_ARGMIN: case GR_F_ARGMAX:
        rt = GR_INT64;
        break;
    default:
        rt = req.in.t;
    }
    if (!is_none(out) && rt_i < 0 && !f->ptp &&
        (f->func == GR_F_SUM || f->func == GR_F_PROD || f->func == GR_F_MIN ||
         f->func == GR_F_MAX) &&
        (gr_array_of(out) != NULL || PyArray_Check(out)) &&
        out_dtype_rule(out, req.in.t, &rt) != 0) {
        goto done;
    }
    if (fp64_check(d, rt) != 0 || fp64_check(d, req.in.t) != 0) {
        goto done;
    }
    if (f->var && !gr_dtypes[rt].is_float) {
        PyErr_Format(PyExc_TypeError, "%s: dtype %s is not a float type (the "
                     "Python face answers others through NumPy)", f->name,
                     gr_dtypes[rt].name);
        goto done;
    }
    if (f->ptp && rt == GR_BOOL) {
        /* NumPy's ptp subtracts: booleans refuse */
        PyErr_SetString(PyExc_TypeError, "numpy boolean subtract, the `-` "
                        "operator, is not supported, use the bitwise_xor, the "
                        "`^` operator, or the logical_xor function instead.");
        goto done;
    }
    if ((f->func == GR_F_MIN || f->func == GR_F_MAX) && rt != req.in.t &&
        keep != NULL) {
        /* min/max compare in the result dtype: a host input is cast
         * first (NumPy's unsafe cast); device inputs are cast in
         * dispatch's copy */
        PyArray_Descr *rd = gr_descr_of(rt);
        PyObject *c = rd ? PyArray_CastToType((PyArrayObject *)keep, rd, 0)
                         : NULL;
        if (c == NULL) {
            goto done;
        }
        Py_SETREF(keep, c);
        req.in.host = PyArray_DATA((PyArrayObject *)c);
        req.in.t = rt;
        for (int i = 0; i < req.in.nd; ++i) {
            req.in.strides[i] = PyArray_STRIDE((PyArrayObject *)c, i);
        }
    }
    req.rt = rt;
    req.st = rt;
    req.op = f->op;
    if (rt == GR_BOOL && f->op == GR_ADD) {
        req.op = GR_ANY; /* NumPy's bool add / multiply: or / and */
    } else if (rt == GR_BOOL && f->op == GR_MUL) {
        req.op = GR_ALL;
    }
    if (f->func == GR_F_MEAN) {
        req.st = gr_dtypes[rt].is_float ? (d->fp64 ? GR_FLOAT64 : GR_FLOAT32)
                                        : rt;
        if (rt == GR_BOOL) {
            req.op = GR_ANY; /* mean(dtype=bool): NumPy's sum is or */
        }
    }
    /* the result's shape */
    for (int i = 0; i < nd; ++i) {
        if (req.axes >> i & 1) {
            if (keepdims) {
                oshape[ond++] = 1;
            }
        } else {
            oshape[ond++] = (npy_intp)req.in.shape[i];
        }
    }
    if (!is_none(out) && out_check(out, oshape, ond, f->ufunc, &dev) != 0) {
        goto done;
    }
    if (!is_none(out) && is_arg) {
        /* NumPy's argmin/argmax take an out whose dtype casts safely to
         * intp (int8..int64, uint8..uint32, bool) */
        PyArray_Descr *od = gr_array_of(out) ? gr_array_of(out)->descr
                            : PyArray_DESCR((PyArrayObject *)out);
        PyArray_Descr *ip = PyArray_DescrFromType(NPY_INTP);
        int ok = PyArray_CanCastTypeTo(od, ip, NPY_SAFE_CASTING);
        Py_DECREF(ip);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "Cannot cast scalar from %R to "
                         "dtype('int64') according to the rule 'safe'",
                         (PyObject *)od);
            goto done;
        }
    }
    /* initial, converted as NumPy converts it (None: no initial) */
    if (!no_value(initial) && initial != Py_None) {
        if (f->func != GR_F_SUM && f->func != GR_F_PROD &&
            f->func != GR_F_MIN && f->func != GR_F_MAX) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword "
                         "argument 'initial'", f->name);
            goto done;
        }
        /* initial goes into the result dtype exactly as NumPy puts it
         * there (Python ints through range checks, NumPy scalars and 0-d
         * arrays by NumPy's own rules, which differ by kind): NumPy
         * converts it, reducing an empty array of the result dtype with
         * this initial; larger arrays refused */
        if (PyArray_Check(initial) &&
            PyArray_NDIM((PyArrayObject *)initial) > 0) {
            PyErr_SetString(PyExc_ValueError,
                            "setting an array element with a sequence.");
            goto done;
        }
        /* the common cases without NumPy's call (~2 us): a Python float
         * into a float result that holds it, a Python int into int64 or
         * an int32 that holds it (NumPy's conversion gives the same) */
        if (PyFloat_CheckExact(initial) &&
            (rt == GR_FLOAT64 ||
             (rt == GR_FLOAT32 && !(fabs(PyFloat_AS_DOUBLE(initial)) >
                                    FLT_MAX && isfinite(PyFloat_AS_DOUBLE(
                                                   initial)))))) {
            const double v = PyFloat_AS_DOUBLE(initial);
            const float f4 = (float)v;
            req.has_initial = 1;
            if (rt == GR_FLOAT64) {
                memcpy(req.initial, &v, 8);
            } else {
                memcpy(req.initial, &f4, 4);
            }
            goto initial_done;
        }
        if (PyLong_CheckExact(initial) && (rt == GR_INT64 || rt == GR_INT32)) {
            int of = 0;
            const long long v = PyLong_AsLongLongAndOverflow(initial, &of);
            if (!of && !(v == -1 && PyErr_Occurred()) &&
                (rt == GR_INT64 || (v >= INT32_MIN && v <= INT32_MAX))) {
                const int64_t v8 = v;
                const int32_t v4 = (int32_t)v;
                req.has_initial = 1;
                if (rt == GR_INT64) {
                    memcpy(req.initial, &v8, 8);
                } else {
                    memcpy(req.initial, &v4, 4);
                }
                goto initial_done;
            }
            PyErr_Clear();
        }
        {
            static const char *const uf_names[] = {
                [GR_F_SUM] = "add", [GR_F_PROD] = "multiply",
                [GR_F_MIN] = "minimum", [GR_F_MAX] = "maximum"};
            PyArray_Descr *rd = gr_descr_of(rt);
            PyObject *uf = rd ? PyObject_GetAttrString(np_module, uf_names[f->func])
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
                kw0 = Py_BuildValue("{s:O,s:O}", "dtype", (PyObject *)rd,
                                    "initial", initial);
            }
            if (args && kw0) {
                res = PyObject_Call(red, args, kw0);
            }
            if (res != NULL) {
                Py_INCREF(rd);
                init_arr = PyArray_FromAny(res, rd, 0, 0, 0, NULL);
            }
            Py_XDECREF(res);
            Py_XDECREF(kw0);
            Py_XDECREF(args);
            Py_XDECREF(red);
            Py_XDECREF(empty);
            Py_XDECREF(uf);
            Py_XDECREF(rd);
        }
        if (init_arr == NULL) {
            goto done;
        }
        if (PyArray_NDIM((PyArrayObject *)init_arr) != 0) {
            PyErr_SetString(PyExc_ValueError,
                            "setting an array element with a sequence.");
            goto done;
        }
        req.has_initial = 1;
        memcpy(req.initial, PyArray_DATA((PyArrayObject *)init_arr),
               (size_t)gr_dtypes[rt].size);
    }
initial_done:
    /* Empty input: NumPy's answer (identity, initial, or its error). */
    const size_t n = operand_size(&req.in);
    if (n == 0) {
        if (mode == 1) {
            result = Py_BuildValue("{s:O, s:i, s:s}", "variant", Py_None,
                                   "passes", 0, "why", "empty reduction: "
                                   "answered without running a kernel");
            goto done;
        }
        if (mode == 2) {
            PyErr_SetString(PyExc_ValueError, "timeit needs a non-empty "
                            "reduction");
            goto done;
        }
        PyObject *host = keep;
        PyObject *hobj = NULL;
        if (device_in) {
            npy_intp shp[GR_MAXDIMS];
            for (int i = 0; i < nd; ++i) {
                shp[i] = (npy_intp)req.in.shape[i];
            }
            hobj = PyArray_Empty(nd, shp, gr_descr_of(req.in.t), 0);
            if (hobj == NULL) {
                goto done;
            }
            host = hobj;
        }
        PyObject *args = PyTuple_Pack(1, host);
        PyObject *kwd = PyDict_New();
        int bad = args == NULL || kwd == NULL ||
                  PyDict_SetItemString(kwd, "axis", axis ? axis : Py_None) ||
                  (keepdims && PyDict_SetItemString(kwd, "keepdims", Py_True)) ||
                  (!no_value(initial) &&
                   PyDict_SetItemString(kwd, "initial", initial)) ||
                  (rt_i >= 0 && PyDict_SetItemString(kwd, "dtype", dtype)) ||
                  (ddof_o != NULL && PyDict_SetItemString(kwd, "ddof", ddof_o)) ||
                  (!is_none(where) &&
                   PyDict_SetItemString(kwd, "where", wkeep ? wkeep : where)) ||
                  (!is_none(out) && gr_array_of(out) == NULL &&
                   PyDict_SetItemString(kwd, "out", out));
        if (!bad) {
            result = numpy_call(f->name, args, kwd);
            result = host_result_to(result, is_none(out) ? NULL : out,
                                    device_in, dev);
            if (result != NULL && mode == 3) {
                result = Py_BuildValue("(NO)", result, Py_None);
            }
        }
        Py_XDECREF(args);
        Py_XDECREF(kwd);
        Py_XDECREF(hobj);
        goto done;
    }
    /* Where results go. */
    gr_array *oa = is_none(out) ? NULL : gr_array_of(out);
    PyArrayObject *oh = (!is_none(out) && oa == NULL) ? (PyArrayObject *)out
                                                      : NULL;
    int mean_via_numpy = 0;
    if (oa != NULL) {
        int d2 = -1;
        if (gr_array_operand(oa, &req.out, &d2) != 0) {
            goto done;
        }
    } else if (oh != NULL) {
        PyArray_Descr *rd = gr_descr_of(rt);
        const int direct = rd != NULL && PyArray_ISCARRAY(oh) &&
                           PyArray_ISNOTSWAPPED(oh) &&
                           PyArray_EquivTypes(PyArray_DESCR(oh), rd);
        if (f->func == GR_F_MEAN && !direct && !f->var) {
            /* NumPy's mean with an out of another type: the sum lands in
             * out (unsafe cast), then is divided there.  The division is
             * NumPy's, so the answer is NumPy's to the bit. */
            mean_via_numpy = 1;
            Py_XDECREF(rd);
            rd = gr_descr_of(req.st);
        }
        if (direct && !mean_via_numpy) {
            Py_XDECREF(rd);
        } else {
            tmp = rd ? PyArray_Empty(ond, oshape, rd, 0) : NULL;
            rd = NULL;
            if (tmp == NULL) {
                goto done;
            }
        }
        PyArrayObject *dst = tmp ? (PyArrayObject *)tmp : oh;
        req.out.present = 1;
        req.out.host = PyArray_DATA(dst);
        req.out.t = tmp && mean_via_numpy ? req.st : rt;
    } else if (!device_in) {
        PyArray_Descr *rd = gr_descr_of(rt);
        tmp = rd ? PyArray_Empty(ond, oshape, rd, 0) : NULL;
        if (tmp == NULL) {
            goto done;
        }
        req.out.present = 1;
        req.out.host = PyArray_DATA((PyArrayObject *)tmp);
        req.out.t = rt;
    }
    size_t count = 1;
    for (int i = 0; i < nd; ++i) {
        if (req.axes >> i & 1) {
            count *= req.in.shape[i];
        }
    }
    if (f->var) {
        /* the squared deviations over max(n - ddof, 0), finished in the
         * kernels; NumPy's warning below where some n <= ddof */
        req.var = f->var;
        req.ddof = ddof;
    } else if (f->ptp) {
        req.ptp = 1; /* max - min in the input's dtype, one pass */
    } else if (f->func == GR_F_MEAN) {
        if (req.mask.present) {
            /* mean(where=): the masked sum over the mask's count, both
             * summed in the same pass (the Python face sends an out of
             * another dtype through its own division) */
            if (mean_via_numpy) {
                PyErr_SetString(PyExc_TypeError, "mean(where=) into an out "
                                "of another dtype: the Python face divides");
                goto done;
            }
            req.var = 4;
        } else if (mean_via_numpy) {
            req.rt = req.st; /* the sum only */
        } else {
            req.div = (double)count;
        }
    }
    if (bench_setup(&req, mode, reps, &ns) != 0) {
        goto done;
    }
    if (run_request(&req, &res) != 0) {
        if (res.pending != NULL) {
            pending_add(res.pending, keep, tmp, out);
            res.pending = NULL;
        }
        goto done;
    }
    d = gr_device_get(req.dev); /* placement may have moved it */
    if (mode == 1) {
        result = reduce_plan_dict(d, &res);
        goto done;
    }
    /* The result object. */
    PyObject *value = NULL;
    if (oa != NULL) {
        value = Py_NewRef(out);
    } else if (oh != NULL) {
        if (tmp != NULL) {
            if (PyArray_CopyInto(oh, (PyArrayObject *)tmp) != 0) {
                goto done;
            }
            if (mean_via_numpy) {
                PyObject *args = Py_BuildValue("(On)", out,
                                               (Py_ssize_t)count);
                PyObject *kwd = Py_BuildValue("{s:O, s:s, s:O}", "out", out,
                                              "casting", "unsafe", "subok",
                                              Py_False);
                PyObject *r = (args && kwd)
                                  ? PyObject_Call(np_true_divide, args, kwd)
                                  : NULL;
                Py_XDECREF(args);
                Py_XDECREF(kwd);
                if (r == NULL) {
                    goto done;
                }
                Py_DECREF(r);
            }
        }
        value = Py_NewRef(out);
    } else if (device_in) {
        value = wrap_block(res.blk[0], rt, oshape, ond);
        res.blk[0] = NULL;
    } else {
        value = PyArray_Return((PyArrayObject *)Py_NewRef(tmp));
    }
    if (value == NULL) {
        goto done;
    }
    if (res.dof_bad && mode == 0 &&
        PyErr_WarnEx(PyExc_RuntimeWarning,
                     f->var == 3 ? "Mean of empty slice"
                                 : "Degrees of freedom <= 0 for slice.",
                     1) != 0) {
        Py_DECREF(value);
        goto done;
    }
    result = mode == 2   ? timed_result(value, ns, reps,
                                        reduce_plan_dict(d, &res))
             : mode == 3 ? Py_BuildValue("(NO)", value,
                                         res.nan_idx == 0   ? Py_None
                                         : res.nan_idx == 2 ? Py_True
                                                            : Py_False)
                         : value;
done:
    gr_result_clear(&res);
    gr_request_clear(&req);
    Py_XDECREF(keep);
    Py_XDECREF(wkeep);
    Py_XDECREF(tmp);
    Py_XDECREF(init_arr);
    free(ns);
    return result;
}

/* Positional fastcall arguments: args[i] or NULL past nargs. */
#define ARGN(i) ((i) < nargs ? args[i] : NULL)

static int mode_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t at,
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
static const fdef *shell_entry(PyObject *const *args, Py_ssize_t nargs,
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

/* reduce(name, a, axis, dtype, out, keepdims, initial, kw, where, mode,
 *        reps) */
static PyObject *py_reduce(PyObject *self, PyObject *const *args,
                           Py_ssize_t nargs)
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

/* ============================================================= scans */

/* An out= (ndarray or gpured.Array) of exactly `shape`, writeable: 0, or
 * -1 with NumPy's TypeError / ValueError (wrong_shape: its message). */
static int out_shape_check(PyObject *out, const npy_intp *shape, int nd,
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

/* A device array of shape in the memory order of `like` (NumPy's
 * empty_like(order="K")), or C order when like is NULL. */
static PyObject *device_empty(int dev, gr_dtype t, int nd,
                              const npy_intp *shape, const gr_operand *like)
{
    npy_intp strides[GR_MAXDIMS];
    int perm[GR_MAXDIMS];
    size_t n = 1;
    for (int i = 0; i < nd; ++i) {
        perm[i] = i;
        n *= (size_t)shape[i];
    }
    if (like != NULL && like->nd == nd) {
        /* dims by decreasing |stride| of like (stable) */
        for (int i = 1; i < nd; ++i) {
            for (int j = i; j > 0; --j) {
                long long a = llabs((long long)like->strides[perm[j - 1]]);
                long long b = llabs((long long)like->strides[perm[j]]);
                if (a >= b) {
                    break;
                }
                int x = perm[j];
                perm[j] = perm[j - 1];
                perm[j - 1] = x;
            }
        }
    }
    npy_intp acc = gr_dtypes[t].size;
    for (int j = nd - 1; j >= 0; --j) {
        strides[perm[j]] = acc;
        acc *= shape[perm[j]] > 0 ? shape[perm[j]] : 1;
    }
    PyObject *buf = gr_buffer_new(dev, n * (size_t)gr_dtypes[t].size);
    PyArray_Descr *descr = buf ? gr_descr_of(t) : NULL;
    PyObject *arr = descr ? gr_array_new(buf, descr, nd, shape, strides, 0)
                          : NULL;
    Py_XDECREF(buf);
    Py_XDECREF(descr);
    return arr;
}

static PyObject *scan_impl(const fdef *f, PyObject *a, PyObject *axis,
                           PyObject *dtype, PyObject *out, PyObject *excl_o,
                           PyObject *kw, int mode, int reps)
{
    gr_request req;
    gr_result res;
    knobs k;
    PyObject *keep = NULL, *result = NULL, *tmp = NULL, *dres = NULL;
    double *ns = NULL;
    int exclusive = 0, dev = -1, rt_i = -2;
    npy_intp shape[GR_MAXDIMS];

    memset(&req, 0, sizeof req);
    memset(&res, 0, sizeof res);
    if (knobs_of(kw, "variant wg_size items groups ilp spins device",
                 f->name, &k) != 0 ||
        flag_of(excl_o, "exclusive", &exclusive) != 0 ||
        dtype_arg(dtype, &rt_i) != 0) {
        return NULL;
    }
    if (PyArray_Check(a) && !PyArray_CheckExact(a) && mode == 0 &&
        !exclusive) {
        /* subclasses: NumPy's own answer (it defers to their methods);
         * cummin/cummax are np.minimum/maximum.accumulate of the
         * flattened array (axis None) or along the axis */
        const int cum = f->func == GR_F_CUMSUM || f->func == GR_F_CUMPROD;
        PyObject *src = (!cum && is_none(axis))
                            ? PyObject_CallMethod(a, "ravel", NULL)
                            : Py_NewRef(a);
        PyObject *args = src ? PyTuple_Pack(1, src) : NULL;
        PyObject *kwd = Py_BuildValue(
            "{s:N, s:O, s:O}", "axis",
            !cum && is_none(axis) ? PyLong_FromLong(-1) /* (a matrix
                                                         ravels to 1 x n) */
                                  : Py_NewRef(axis ? axis : Py_None),
            "dtype", dtype ? dtype : Py_None, "out", out ? out : Py_None);
        if (args != NULL && kwd != NULL) {
            if (cum) {
                result = numpy_call(f->name, args, kwd);
            } else {
                PyObject *uf = PyObject_GetAttrString(
                    np_module, f->func == GR_F_CUMMIN ? "minimum" : "maximum");
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
    gr_device *d = request_begin(f, a, out, &k, mode, &req, &keep);
    if (d == NULL) {
        goto done;
    }
    const int device_in = req.in.blk != NULL;
    dev = req.dev;
    req.exclusive = exclusive;
    /* axis: None scans the flattened array (C order) */
    int nd = req.in.nd, rnd;
    if (is_none(axis)) {
        req.axis = -1;
        rnd = 1;
        shape[0] = (npy_intp)operand_size(&req.in);
    } else {
        int ax;
        if (PyTuple_Check(axis)) {
            PyErr_SetString(PyExc_TypeError,
                            "'tuple' object cannot be interpreted as an "
                            "integer");
            goto done;
        }
        if (axis_one(axis, nd, &ax) != 0) {
            goto done;
        }
        if (nd == 0) {
            req.axis = -1; /* one element: a 1-d result */
            rnd = 1;
            shape[0] = 1;
        } else {
            req.axis = ax;
            rnd = nd;
            for (int i = 0; i < nd; ++i) {
                shape[i] = (npy_intp)req.in.shape[i];
            }
        }
    }
    /* result dtype: dtype=, else NumPy's default for the operator, or
     * out's where the input casts to it "same kind" (NumPy's accumulate) */
    gr_dtype rt;
    if (rt_i >= 0) {
        rt = (gr_dtype)rt_i;
    } else if (f->op == GR_ADD || f->op == GR_MUL) {
        rt = sum_dtype(req.in.t);
    } else {
        rt = req.in.t;
    }
    if (rt_i < 0 && !is_none(out) &&
        (gr_array_of(out) != NULL || PyArray_Check(out)) &&
        scan_out_dtype_rule(out, &rt) != 0) {
        goto done;
    }
    if (fp64_check(d, rt) != 0 || fp64_check(d, req.in.t) != 0) {
        goto done;
    }
    req.rt = req.st = rt;
    req.op = f->op;
    if (rt == GR_BOOL && f->op == GR_ADD) {
        req.op = GR_MAX; /* bool add / multiply: logical or / and */
    } else if (rt == GR_BOOL && f->op == GR_MUL) {
        req.op = GR_MIN;
    }
    if (!is_none(out) &&
        out_shape_check(out, shape, rnd, "provided out is the wrong size "
                        "for the accumulation.") != 0) {
        goto done;
    }
    const size_t n = operand_size(&req.in);
    if (n == 0) {
        if (mode != 0) {
            if (mode == 1) {
                result = Py_BuildValue("{s:O, s:i, s:s}", "variant", Py_None,
                                       "passes", 0, "why", "empty scan: "
                                       "answered without running a kernel");
            } else {
                PyErr_SetString(PyExc_ValueError, "timeit needs a non-empty "
                                "scan");
            }
            goto done;
        }
        if (!is_none(out)) {
            result = Py_NewRef(out);
        } else if (device_in || gr_array_of(out) != NULL) {
            result = device_empty(dev, rt, rnd, shape, NULL);
        } else {
            result = PyArray_Empty(rnd, shape, gr_descr_of(rt), 0);
        }
        goto done;
    }
    /* where results go: the user's out where it can take them (a device
     * array of any layout and dtype; a host array that is aligned, native
     * and of the result dtype), else a new array in the input's memory
     * order (a temporary for host outs, cast into them afterwards) */
    gr_array *oa = is_none(out) ? NULL : gr_array_of(out);
    PyArrayObject *oh = (!is_none(out) && oa == NULL) ? (PyArrayObject *)out
                                                      : NULL;
    const gr_operand *like = req.axis >= 0 ? &req.in : NULL;
    if (oa != NULL) {
        int d2 = -1;
        if (gr_array_operand(oa, &req.out, &d2) != 0) {
            goto done;
        }
    } else if (oh != NULL && PyArray_ISBEHAVED(oh) &&
               PyArray_ISNOTSWAPPED(oh) &&
               gr_dtype_of(PyArray_DESCR(oh), "out") == (int)rt) {
        int d2 = -1;
        if (operand_of(out, &req.out, &tmp, &d2, "out") != 0) {
            goto done;
        }
        Py_CLEAR(tmp); /* out is alive: the caller holds it */
    } else if (device_in && oh == NULL) {
        if ((dres = device_empty(dev, rt, rnd, shape, like)) == NULL) {
            goto done;
        }
        int d2 = -1;
        if (gr_array_operand((gr_array *)dres, &req.out, &d2) != 0) {
            goto done;
        }
    } else {
        PyArray_Descr *rd = gr_descr_of(rt);
        if (rd == NULL) {
            goto done;
        }
        if (like != NULL && keep != NULL) {
            tmp = PyArray_NewLikeArray((PyArrayObject *)keep, NPY_KEEPORDER,
                                       rd, 0);
        } else {
            tmp = PyArray_Empty(rnd, shape, rd, 0);
        }
        if (tmp == NULL) {
            goto done;
        }
        int d2 = -1;
        PyObject *k2 = NULL;
        if (operand_of(tmp, &req.out, &k2, &d2, "out") != 0) {
            goto done;
        }
        Py_XDECREF(k2);
    }
    if (bench_setup(&req, mode, reps, &ns) != 0) {
        goto done;
    }
    if (run_request(&req, &res) != 0) {
        if (res.pending != NULL) {
            pending_add(res.pending, keep, tmp, is_none(out) ? dres : out);
            res.pending = NULL;
        }
        goto done;
    }
    d = gr_device_get(req.dev); /* placement may have moved it */
    if (mode == 1) {
        result = res.where == 1
                     ? host_plan_dict(d, &res)
                     : add_placement(scan_plan_dict(d, &res.plan.scan,
                                                    &res.acc, &res.lay),
                                     &res);
        goto done;
    }
    PyObject *value;
    if (oa != NULL) {
        value = Py_NewRef(out);
    } else if (oh != NULL) {
        if (tmp != NULL && PyArray_CopyInto(oh, (PyArrayObject *)tmp) != 0) {
            goto done;
        }
        value = Py_NewRef(out);
    } else if (dres != NULL) {
        value = Py_NewRef(dres);
    } else {
        value = Py_NewRef(tmp);
    }
    if (mode == 2) {
        PyObject *times = times_list(ns, reps);
        PyObject *plan = scan_plan_dict(d, &res.plan.scan, &res.acc, &res.lay);
        result = (times && plan) ? Py_BuildValue("(OO)", times, plan) : NULL;
        Py_XDECREF(times);
        Py_XDECREF(plan);
        if (result != NULL) {
            PyObject *full = Py_BuildValue("(ON)", value, result);
            result = full;
        }
        Py_DECREF(value);
    } else {
        result = value;
    }
done:
    gr_result_clear(&res);
    gr_request_clear(&req);
    Py_XDECREF(keep);
    Py_XDECREF(tmp);
    Py_XDECREF(dres);
    free(ns);
    return result;
}

/* scan(name, a, axis, dtype, out, exclusive, kw, mode, reps) */
static PyObject *py_scan(PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs)
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

/* ========================================================== by key */

static int bk_op_of(const char *func, PyObject *op, gr_bk_types *ty)
{
    static const struct {
        const char *name;
        gr_op op;
        int count;
    } ops[] = {{"sum", GR_ADD, 0}, {"prod", GR_MUL, 0}, {"min", GR_MIN, 0},
               {"max", GR_MAX, 0}, {"count", GR_ADD, 1}};
    const char *allowed = strcmp(func, "reduce_by_key") == 0
                              ? "sum, prod, min, max, count"
                          : strcmp(func, "sum_by_key") == 0 ? "sum, min, max"
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

/* A 1-D by-key input; keys must be int32/int64/uint32/uint64, values
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
    if (keys && !(t == GR_INT32 || t == GR_INT64 || t == GR_UINT32 ||
                  t == GR_UINT64)) {
        PyErr_Format(PyExc_TypeError, "keys must be integers (int32, int64, "
                     "uint32, uint64); got dtype %s", gr_dtypes[t].name);
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

/* bykey(func, keys, values, op, num_keys, exclusive, deterministic, sorted,
 *       kw, mode, reps) */
static PyObject *py_bykey(PyObject *self, PyObject *const *args,
                          Py_ssize_t nargs)
{
    gr_request req;
    gr_result res;
    knobs k;
    PyObject *kkeep = NULL, *vkeep = NULL, *result = NULL;
    double *ns = NULL;
    int mode, reps, dev = -1, exclusive = 0, det = 0;
    char err[256];
    memset(&req, 0, sizeof req);
    memset(&res, 0, sizeof res);
    const fdef *f = shell_entry(args, nargs, 4, 11,
                                "bykey(func, keys, values, op, num_keys, "
                                "exclusive, deterministic, sorted, kw, mode, "
                                "reps)",
                                GR_FAM_BYKEY, "a by-key function", &mode, &reps);
    if (f == NULL) {
        return NULL;
    }
    if (knobs_of(ARGN(8), "variant wg_size items device", f->name, &k) != 0 ||
        bk_op_of(f->name, args[3], &req.bkt) != 0 ||
        (ARGN(5) && flag_of(args[5], "exclusive", &exclusive) != 0) ||
        (ARGN(6) && flag_of(args[6], "deterministic", &det) != 0)) {
        return NULL;
    }
    if (forked_check() != 0) {
        return NULL;
    }
    req.bkf = f->func == GR_F_REDUCE_BY_KEY ? GR_BK_REDUCE
              : f->func == GR_F_SUM_BY_KEY  ? GR_BK_DENSE
                                            : GR_BK_SCAN;
    req.num_keys = -1;
    if (!is_none(ARGN(4))) {
        long long x = 0;
        if (PyBool_Check(args[4])) {
            PyErr_SetString(PyExc_TypeError, "num_keys must be an integer");
            return NULL;
        }
        PyObject *i = PyNumber_Index(args[4]);
        if (i == NULL) {
            return NULL;
        }
        x = PyLong_AsLongLong(i);
        Py_DECREF(i);
        if (x == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (x < 0) {
            PyErr_Format(PyExc_ValueError, "num_keys must be >= 0 (got %lld)",
                         x);
            return NULL;
        }
        req.num_keys = x;
    }
    req.sorted = -1;
    if (!is_none(ARGN(7))) {
        int sv = 0;
        if (flag_of(args[7], "sorted", &sv) != 0) {
            return NULL;
        }
        req.sorted = sv;
    }
    dev = k.device;
    if (bk_operand(args[1], &req.in, &kkeep, &dev, "keys", 1) != 0) {
        goto done;
    }
    if (req.bkt.count && is_none(args[2])) {
        req.vals.present = 0;
    } else if (is_none(args[2])) {
        PyErr_SetString(PyExc_TypeError, "values are required");
        goto done;
    } else if (bk_operand(args[2], &req.vals, &vkeep, &dev, "values", 0) !=
               0) {
        goto done;
    }
    const int on_device = req.in.blk != NULL || req.vals.blk != NULL;
    if (dev < 0 && (dev = default_device(&k)) < 0) {
        goto done;
    }
    gr_device *d = gr_device_get(dev);
    const size_t n = req.in.shape[0];
    if (req.vals.present && req.vals.shape[0] != n) {
        PyErr_Format(PyExc_ValueError, "keys and values must have the same "
                     "length (keys %zu, values %zu)", n, req.vals.shape[0]);
        goto done;
    }
    req.bkt.k = req.in.t;
    req.bkt.v = req.vals.present ? req.vals.t : GR_UINT8;
    if (gr_bk_types_init(d, &req.bkt, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    req.dev = dev;
    req.func = f->func;
    req.fam = GR_FAM_BYKEY;
    req.kn = k.kn;
    req.mode = (gr_mode)mode;
    req.exclusive = exclusive;
    req.deterministic = det;
    req.rt = req.bkt.r;
    if (bench_setup(&req, mode, reps, &ns) != 0) {
        goto done;
    }
    if (run_request(&req, &res) != 0) {
        goto done;
    }
    PyObject *plan = NULL;
    if (mode != 0) {
        plan = bk_plan_dict(&res.bk.plan, &res.bk.facts, d, f->name);
        if (plan == NULL || mode == 1) {
            result = plan;
            goto done;
        }
    }
    PyObject *rk = NULL, *rv = NULL;
    const size_t m = res.count;
    if (on_device) {
        npy_intp dims[1] = {(npy_intp)m};
        if (res.blk[0] != NULL) {
            rk = wrap_block(res.blk[0], req.bkt.k, dims, 1);
            res.blk[0] = NULL;
        }
        rv = wrap_block(res.blk[1], req.bkt.r, dims, 1);
        res.blk[1] = NULL;
    } else {
        if (res.blk[0] != NULL) {
            rk = host_from_block(res.blk[0], req.bkt.k, m);
        }
        rv = host_from_block(res.blk[1], req.bkt.r, m);
    }
    if (rv == NULL || (req.bkf == GR_BK_REDUCE && rk == NULL)) {
        Py_XDECREF(rv);
        Py_XDECREF(rk);
        Py_XDECREF(plan);
        goto done;
    }
    PyObject *value = req.bkf == GR_BK_REDUCE
                          ? Py_BuildValue("(NN)", rk ? rk : Py_NewRef(Py_None),
                                          rv)
                          : (Py_XDECREF(rk), rv);
    if (mode == 2 && value != NULL) {
        PyObject *times = times_list(ns, reps);
        result = times ? Py_BuildValue("(NNN)", value, times, plan) : NULL;
        plan = NULL;
    } else {
        result = value;
    }
    Py_XDECREF(plan);
done:
    gr_result_clear(&res);
    gr_request_clear(&req);
    Py_XDECREF(kkeep);
    Py_XDECREF(vkeep);
    free(ns);
    return result;
}

/* ==================================================== explain/variants */

/* variants(name, dtype) -> the variant names the current device (or
 * device=) runs for that function on that input dtype ("auto" first). */
static PyObject *py_variants(PyObject *self, PyObject *args)
{
    PyObject *name = NULL, *dto = NULL, *devo = Py_None;
    PyArray_Descr *td = NULL;
    PyObject *list = NULL;
    gr_accum acc;
    char err[256];
    int dev = -1, t;
    if (!PyArg_ParseTuple(args, "OO|O", &name, &dto, &devo)) {
        return NULL;
    }
    const fdef *f = fdef_of(name);
    if (f == NULL) {
        return NULL;
    }
    if (f->fam == GR_FAM_BYKEY) {
        PyErr_SetString(PyExc_ValueError, "by-key functions: use "
                        "variants_by_key");
        return NULL;
    }
    if (devo != Py_None ? device_arg(devo, &dev) != 0
                        : (gr_current_device() == NULL ||
                           (dev = gr_current_index()) < 0)) {
        return NULL;
    }
    gr_device *d = gr_device_get(dev);
    if (!PyArray_DescrConverter(dto, &td)) {
        return NULL;
    }
    t = gr_dtype_of(td, "input");
    Py_DECREF(td);
    if (t < 0 || fp64_check(d, (gr_dtype)t) != 0) {
        return NULL;
    }
    gr_dtype r = (gr_dtype)t;
    gr_op op = f->op;
    switch (f->func) {
    case GR_F_SUM: case GR_F_PROD: case GR_F_CUMSUM: case GR_F_CUMPROD:
        r = sum_dtype((gr_dtype)t);
        break;
    case GR_F_MEAN:
        r = gr_dtypes[t].is_float && !d->fp64 ? GR_FLOAT32 : GR_FLOAT64;
        if (!d->fp64) {
            r = GR_FLOAT32;
        }
        break;
    case GR_F_ALL: case GR_F_ANY:
        r = GR_BOOL;
        break;
    case GR_F_ARGMIN: case GR_F_ARGMAX:
        r = (gr_dtype)t;
        break;
    default:
        break;
    }
    if (r == GR_BOOL && op == GR_ADD) {
        op = f->fam == GR_FAM_SCAN ? GR_MAX : GR_ANY;
    }
    if (gr_accum_for(d, f->fam, op, (gr_dtype)t, r, &acc, err, sizeof err) !=
        0) {
        PyErr_SetString(PyExc_TypeError, err);
        return NULL;
    }
    if (f->var) {
        gr_accum_var(&acc, f->var);
    }
    if (f->ptp) {
        gr_accum_ptp(&acc);
    }
    const char *const *v = f->fam == GR_FAM_SCAN ? gr_scan_variants()
                                                 : gr_reduce_variants();
    list = PyList_New(0);
    for (int i = 0; list != NULL && v[i] != NULL; ++i) {
        int ok = strcmp(v[i], "auto") == 0 ||
                 (f->fam == GR_FAM_SCAN
                      ? gr_scan_variant_available(d, op, &acc, v[i], err,
                                                  sizeof err)
                      : gr_variant_available(d, op, &acc, v[i], err,
                                             sizeof err));
        if (ok) {
            list_add(&list, v[i]);
        }
    }
    return list;
}

/* bykey_variants(func, kdtype, vdtype, op) -> names the device runs. */
static PyObject *py_bykey_variants(PyObject *self, PyObject *args)
{
    PyObject *func = NULL, *op = NULL;
    PyArray_Descr *kd = NULL, *vd = NULL;
    PyObject *list = NULL;
    gr_bk_types ty;
    gr_bk_facts fx;
    char err[256];
    int kt, vt;
    gr_device *d = gr_current_device();
    memset(&ty, 0, sizeof ty);
    memset(&fx, 0, sizeof fx);
    if (d == NULL ||
        !PyArg_ParseTuple(args, "OO&O&O", &func, PyArray_DescrConverter, &kd,
                          PyArray_DescrConverter, &vd, &op)) {
        goto done;
    }
    const fdef *f = fdef_of(func);
    if (f == NULL || f->fam != GR_FAM_BYKEY) {
        if (f != NULL) {
            PyErr_Format(PyExc_ValueError, "'%s' is not a by-key function",
                         f->name);
        }
        goto done;
    }
    if (bk_op_of(f->name, op, &ty) != 0 ||
        (kt = gr_dtype_of(kd, "keys")) < 0 ||
        (vt = gr_dtype_of(vd, "values")) < 0) {
        goto done;
    }
    ty.k = (gr_dtype)kt;
    ty.v = (gr_dtype)vt;
    if (gr_bk_types_init(d, &ty, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    const gr_bk_func bf = f->func == GR_F_REDUCE_BY_KEY ? GR_BK_REDUCE
                          : f->func == GR_F_SUM_BY_KEY  ? GR_BK_DENSE
                                                        : GR_BK_SCAN;
    fx.n = 1;
    fx.num_keys = 1;
    fx.sorted = -1;
    list = Py_BuildValue("[s]", "auto");
    for (int i = 0; list != NULL && gr_bk_variant_names[i] != NULL; ++i) {
        gr_bk_overrides ov;
        gr_bk_plan p;
        memset(&ov, 0, sizeof ov);
        ov.variant = gr_bk_variant_names[i];
        if (gr_bk_plan_for(d, d->sm, bf, &ty, &fx, &ov, &p) != 0) {
            continue;
        }
        list_add(&list, gr_bk_variant_names[i]);
    }
done:
    Py_XDECREF(kd);
    Py_XDECREF(vd);
    return list;
}

/* A synthetic device from a dict of capabilities (gpu, compute_units,
 * max_work_group_size, fp64, atomics64, subgroups, wg_collectives,
 * nvidia_ptx, local_mem_size, max_alloc_size, name): what the plan_for
 * functions of every family plan for.  caps is borrowed; -1 with an exception set. */
static int caps_parse(PyObject *caps, gr_device *dev)
{
    static const struct {
        const char *key;
        size_t off;
        int is_size;
    } fields[] = {
        {"gpu", offsetof(gr_device, is_gpu), 0},
        {"compute_units", offsetof(gr_device, compute_units), 0},
        {"max_work_group_size", offsetof(gr_device, max_wg), 1},
        {"fp64", offsetof(gr_device, fp64), 0},
        {"atomics64", offsetof(gr_device, atomics64), 0},
        {"subgroups", offsetof(gr_device, subgroups), 0},
        {"wg_collectives", offsetof(gr_device, wg_collectives), 0},
        {"nvidia_ptx", offsetof(gr_device, nvidia_ptx), 0},
    };
    memset(dev, 0, sizeof *dev);
    dev->compute_units = 1;
    dev->max_wg = 1024;
    dev->fp64 = 1;
    if (!PyDict_Check(caps)) {
        PyErr_SetString(PyExc_TypeError, "caps must be a dict");
        return -1;
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; ++i) {
        PyObject *v = PyDict_GetItemString(caps, fields[i].key); /* borrowed */
        if (v == NULL) {
            continue;
        }
        long x = PyLong_AsLong(v);
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        char *fp = (char *)dev + fields[i].off;
        if (fields[i].is_size) {
            *(size_t *)fp = (size_t)x;
        } else if (fields[i].key[0] == 'c') {
            *(cl_uint *)fp = (cl_uint)x;
        } else {
            *(int *)fp = (int)x;
        }
    }
    PyObject *lm = PyDict_GetItemString(caps, "local_mem_size"); /* borrowed */
    if (lm != NULL) {
        dev->local_mem = PyLong_AsUnsignedLongLong(lm);
        if (PyErr_Occurred()) {
            return -1;
        }
    }
    PyObject *ma = PyDict_GetItemString(caps, "max_alloc_size"); /* borrowed */
    if (ma != NULL) {
        dev->max_alloc = PyLong_AsUnsignedLongLong(ma);
        if (PyErr_Occurred()) {
            return -1;
        }
    }
    PyObject *nm = PyDict_GetItemString(caps, "name"); /* borrowed */
    const char *s = nm ? PyUnicode_AsUTF8(nm) : "synthetic";
    if (s == NULL) {
        return -1;
    }
    snprintf(dev->name, sizeof dev->name, "%s", s);
    return 0;
}

static int core_op_of(const char *name)
{
    for (int i = 0; i < GR_NOPS; ++i) {
        if (strcmp(name, gr_op_names[i]) == 0) {
            return i;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown operator '%s'", name);
    return -1;
}

/* plan_for(caps, op, dtype, rdtype, M, L, seg_stride, elem_stride,
 *          variant=None, wg_size=0, groups=0, items=0, ilp=0, vw=0)
 * -> the reduction plan for a device that need not exist. */
static PyObject *py_plan_for(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"caps", "op", "dtype", "rdtype", "M", "L",
                             "seg_stride", "elem_stride", "variant", "wg_size",
                             "groups", "items", "ilp", "vw", NULL};
    PyObject *caps = NULL;
    const char *opname = NULL;
    PyArray_Descr *td = NULL, *rd = NULL;
    Py_ssize_t M = 0, L = 0, ss = 0, es = 0;
    gr_result r;
    gr_knobs ov;
    PyObject *res = NULL;
    char err[256];
    int op, t, rt, rc, items = 0;
    gr_device dev;
    memset(&r, 0, sizeof r);
    memset(&ov, 0, sizeof ov);
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "O!sO&O&nnnn|ziiiii", kwlist, &PyDict_Type, &caps,
            &opname, PyArray_DescrConverter, &td, PyArray_DescrConverter, &rd,
            &M, &L, &ss, &es, &ov.variant, &ov.wg_size, &ov.groups, &items,
            &ov.ilp, &ov.vw)) {
        goto done;
    }
    ov.items = items;
    if (caps_parse(caps, &dev) != 0) {
        goto done;
    }
    if (M < 1 || L < 1) {
        PyErr_SetString(PyExc_ValueError, "plan_for needs M >= 1 and L >= 1");
        goto done;
    }
    if ((op = core_op_of(opname)) < 0 || (t = gr_dtype_of(td, "input")) < 0 ||
        (rt = gr_dtype_of(rd, "result")) < 0) {
        goto done;
    }
    if (gr_accum_for(&dev, GR_FAM_REDUCE, (gr_op)op, (gr_dtype)t,
                     (gr_dtype)rt, &r.acc, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    r.lay.M = (size_t)M;
    r.lay.L = (size_t)L;
    r.lay.seg_stride = ss;
    r.lay.elem_stride = es;
    rc = gr_plan_reduce(&dev, (gr_op)op, &r.acc, &r.lay, &ov, &r.plan.reduce);
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        r.plan.reduce.why);
        goto done;
    }
    res = reduce_plan_dict(&dev, &r);
done:
    Py_XDECREF(td);
    Py_XDECREF(rd);
    return res;
}

/* scan_plan_for(caps, op, dtype, rdtype, M, L, seg_stride, elem_stride,
 * variant=None, wg_size, items, groups, ilp, spins) -> scan plan dict. */
static PyObject *py_scan_plan_for(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"caps", "op", "dtype", "rdtype", "M", "L",
                             "seg_stride", "elem_stride", "variant", "wg_size",
                             "items", "groups", "ilp", "spins", NULL};
    PyObject *caps = NULL;
    const char *opname = NULL;
    PyArray_Descr *td = NULL, *rd = NULL;
    Py_ssize_t M = 0, L = 0, ss = 0, es = 0;
    gr_knobs ov;
    gr_scan_plan plan;
    gr_accum acc;
    gr_layout lay;
    gr_device dev;
    PyObject *res = NULL;
    char err[256];
    int op, t, r, rc, items = 0;
    memset(&ov, 0, sizeof ov);
    ov.spins = -1;
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "O!sO&O&nnnn|ziiiii", kwlist, &PyDict_Type, &caps,
            &opname, PyArray_DescrConverter, &td, PyArray_DescrConverter, &rd,
            &M, &L, &ss, &es, &ov.variant, &ov.wg_size, &items, &ov.groups,
            &ov.ilp, &ov.spins)) {
        goto done;
    }
    ov.items = items;
    if (caps_parse(caps, &dev) != 0) {
        goto done;
    }
    if (M < 1 || L < 1 || ss < 1 || es < 1) {
        PyErr_SetString(PyExc_ValueError,
                        "scan_plan_for needs M, L, strides >= 1");
        goto done;
    }
    if ((op = core_op_of(opname)) < 0 || (t = gr_dtype_of(td, "input")) < 0 ||
        (r = gr_dtype_of(rd, "result")) < 0) {
        goto done;
    }
    if (gr_accum_for(&dev, GR_FAM_SCAN, (gr_op)op, (gr_dtype)t, (gr_dtype)r,
                     &acc, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    lay.M = (size_t)M;
    lay.L = (size_t)L;
    lay.seg_stride = ss;
    lay.elem_stride = es;
    rc = gr_plan_scan(&dev, (gr_op)op, &acc, &lay, es == 1, &ov, &plan);
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        plan.why);
        goto done;
    }
    res = scan_plan_dict(&dev, &plan, &acc, &lay);
done:
    Py_XDECREF(td);
    Py_XDECREF(rd);
    return res;
}

/* bykey_plan_for(caps, func, kdtype, vdtype, op, n, num_keys=0, heads=0,
 * descents=0, variant=None, deterministic=False, sorted=-1, wg_size=0,
 * items=0, sm=0) -> by-key plan dict for synthetic device caps. */
static PyObject *py_bykey_plan_for(PyObject *self, PyObject *args,
                                   PyObject *kw)
{
    static char *kwl[] = {"caps", "func", "kdtype", "vdtype", "op", "n",
                          "num_keys", "heads", "descents", "variant",
                          "deterministic", "sorted", "wg_size", "items", "sm",
                          NULL};
    PyObject *caps = NULL, *opo = NULL;
    const char *func = NULL;
    PyArray_Descr *kd = NULL, *vd = NULL;
    Py_ssize_t n = 0, nk = 0, heads = 0, desc = 0, items = 0;
    gr_device dev;
    gr_bk_types ty;
    gr_bk_overrides ov;
    gr_bk_facts fx;
    gr_bk_plan p;
    PyObject *res = NULL;
    int sm = 0, rc, kt, vt;
    char err[256];
    memset(&ty, 0, sizeof ty);
    memset(&ov, 0, sizeof ov);
    memset(&fx, 0, sizeof fx);
    ov.sorted = -1;
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "O!sO&O&On|nnnzpiini", kwl, &PyDict_Type, &caps, &func,
            PyArray_DescrConverter, &kd, PyArray_DescrConverter, &vd, &opo,
            &n, &nk, &heads, &desc, &ov.variant, &ov.deterministic,
            &ov.sorted, &ov.wg_size, &items, &sm)) {
        goto done;
    }
    ov.items = items > 0 ? (size_t)items : 0;
    if (caps_parse(caps, &dev) != 0) {
        goto done;
    }
    gr_bk_func f = strcmp(func, "reduce_by_key") == 0 ? GR_BK_REDUCE
                   : strcmp(func, "scan_by_key") == 0 ? GR_BK_SCAN
                                                      : GR_BK_DENSE;
    if (bk_op_of(func, opo, &ty) != 0 || (kt = gr_dtype_of(kd, "keys")) < 0 ||
        (vt = gr_dtype_of(vd, "values")) < 0) {
        goto done;
    }
    ty.k = (gr_dtype)kt;
    ty.v = (gr_dtype)vt;
    if (gr_bk_types_init(&dev, &ty, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_TypeError, err);
        goto done;
    }
    fx.n = (size_t)n;
    fx.num_keys = (size_t)nk;
    fx.heads = (uint64_t)heads;
    fx.descents = (uint64_t)desc;
    fx.sorted = ov.sorted;
    rc = gr_bk_plan_for(&dev, sm, f, &ty, &fx, &ov, &p);
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        p.why);
        goto done;
    }
    res = bk_plan_dict(&p, &fx, &dev, gr_bk_func_names[f]);
done:
    Py_XDECREF(kd);
    Py_XDECREF(vd);
    return res;
}

/* set_tuned([(device, op, dtype, size_class, variant, wg, ilp, vw, groups)])
 * loads gpured.tune()'s table for auto. */
static PyObject *py_set_tuned(PyObject *self, PyObject *arg)
{
    PyObject *seq = PySequence_Fast(arg, "set_tuned takes a list of tuples");
    gr_tuned *tab = NULL;
    Py_ssize_t n;
    if (seq == NULL) {
        return NULL;
    }
    n = PySequence_Fast_GET_SIZE(seq);
    tab = calloc(n > 0 ? (size_t)n : 1, sizeof *tab);
    if (tab == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        const char *dv, *opname, *variant;
        PyArray_Descr *td = NULL;
        int cls, wg, ilp, vw, groups, op, t;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ssO&isiiii",
                              &dv, &opname, PyArray_DescrConverter, &td, &cls,
                              &variant, &wg, &ilp, &vw, &groups) ||
            (op = core_op_of(opname)) < 0 ||
            (t = gr_dtype_of(td, "input")) < 0) {
            Py_XDECREF(td);
            free(tab);
            Py_DECREF(seq);
            return NULL;
        }
        Py_DECREF(td);
        snprintf(tab[i].device, sizeof tab[i].device, "%s", dv);
        snprintf(tab[i].variant, sizeof tab[i].variant, "%s", variant);
        tab[i].op = (gr_op)op;
        tab[i].t = (gr_dtype)t;
        tab[i].size_class = cls;
        tab[i].wg_size = wg;
        tab[i].ilp = ilp;
        tab[i].vw = vw;
        tab[i].groups = groups;
    }
    gr_tuned_set(tab, (int)n);
    free(tab);
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

static PyObject *py_size_class(PyObject *self, PyObject *arg)
{
    Py_ssize_t nb = PyLong_AsSsize_t(arg);
    if (nb < 0 && PyErr_Occurred()) {
        return NULL;
    }
    return PyLong_FromLong(gr_size_class((size_t)(nb < 0 ? 0 : nb)));
}

/* ========================================================= devices */

static PyObject *device_dict(const gr_device *d)
{
    const char *type = (d->type & CL_DEVICE_TYPE_GPU)           ? "GPU"
                       : (d->type & CL_DEVICE_TYPE_CPU)         ? "CPU"
                       : (d->type & CL_DEVICE_TYPE_ACCELERATOR) ? "ACCELERATOR"
                                                                : "OTHER";
    return Py_BuildValue(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:N, s:i, s:I, s:n, s:K, "
        "s:K, s:K, s:O, s:O, s:O, s:O, s:O}",
        "name", d->name, "platform", d->platform_name, "vendor", d->vendor,
        "version", d->version, "driver", d->driver, "opencl_c", d->c_version,
        "platform_version", d->platform_version, "type", type, "index",
        PyUnicode_FromFormat("%d:%d", d->pidx, d->didx), "position", d->index,
        "compute_units", d->compute_units, "max_work_group_size",
        (Py_ssize_t)d->max_wg, "local_mem_size",
        (unsigned long long)d->local_mem, "global_mem_size",
        (unsigned long long)d->global_mem, "max_alloc_size",
        (unsigned long long)d->max_alloc, "fp64", d->fp64 ? Py_True : Py_False,
        "atomics64", d->atomics64 ? Py_True : Py_False, "subgroups",
        d->subgroups ? Py_True : Py_False, "wg_collectives",
        d->wg_collectives ? Py_True : Py_False, "nvidia_ptx",
        d->nvidia_ptx ? Py_True : Py_False);
}

static PyObject *py_devices(PyObject *self, PyObject *noargs)
{
    PyObject *list = PyList_New(0);
    for (int i = 0; list != NULL && i < gr_device_count(); ++i) {
        PyObject *dd = device_dict(gr_device_get(i));
        if (dd == NULL || PyList_Append(list, dd) != 0) {
            Py_XDECREF(dd);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(dd);
    }
    return list;
}

static PyObject *py_current_index(PyObject *self, PyObject *noargs)
{
    return PyLong_FromLong(gr_current_index());
}

static PyObject *py_device_pinned(PyObject *self, PyObject *noargs)
{
    return PyBool_FromLong(gr_device_pinned());
}

static PyObject *py_get_device(PyObject *self, PyObject *noargs)
{
    gr_device *d = gr_current_device();
    return d ? device_dict(d) : NULL;
}

static PyObject *py_set_device(PyObject *self, PyObject *arg)
{
    int dev = -1;
    if (arg == Py_None) {
        gr_unpin_device();
        return py_get_device(self, NULL);
    }
    if (PyUnicode_Check(arg)) {
        const char *spec = PyUnicode_AsUTF8(arg);
        if (spec == NULL || gr_set_device(spec) != 0) {
            return NULL;
        }
        return py_get_device(self, NULL);
    }
    if (device_arg(arg, &dev) != 0) {
        return NULL;
    }
    char spec[32];
    snprintf(spec, sizeof spec, "%d:%d", gr_device_get(dev)->pidx,
             gr_device_get(dev)->didx);
    if (gr_set_device(spec) != 0) {
        return NULL;
    }
    return py_get_device(self, NULL);
}

static PyObject *py_kernel_source(PyObject *self, PyObject *arg)
{
    const char *family = PyUnicode_AsUTF8(arg);
    if (family == NULL) {
        return NULL;
    }
    for (int i = 0; gr_kernel_families[i] != NULL; ++i) {
        if (strcmp(family, gr_kernel_families[i]) == 0) {
            char *s = gr_program_source(family, "");
            if (s == NULL) {
                return PyErr_NoMemory();
            }
            PyObject *r = PyUnicode_FromString(s);
            free(s);
            return r;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown kernel family '%s' (known: "
                 "reduce, scan, bykey, copy)", family);
    return NULL;
}

static PyObject *py_cache_dir(PyObject *self, PyObject *args)
{
    const char *dir = NULL;
    if (!PyArg_ParseTuple(args, "|z", &dir)) {
        return NULL;
    }
    if (dir != NULL) {
        gr_programs_set_cache_dir(dir);
    }
    return PyUnicode_FromString(gr_programs_cache_dir());
}

static PyObject *py_stats(PyObject *self, PyObject *noargs)
{
    long m, dk, b;
    gr_programs_stats(&m, &dk, &b);
    return Py_BuildValue("{s:l, s:l, s:l}", "memory_hits", m, "disk_hits", dk,
                         "builds", b);
}

/* ============================================ device memory (Arrays) */

static int dev_of_arg(PyObject *o, int *dev)
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

/* buffer_alloc(nbytes, device=None) */
static PyObject *py_buffer_alloc(PyObject *self, PyObject *args)
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

static PyObject *py_buffer_write(PyObject *self, PyObject *args)
{
    return transfer(args, 1);
}

static PyObject *py_buffer_read(PyObject *self, PyObject *args)
{
    return transfer(args, 0);
}

/* buffer_fill(buf, byte_off, nbytes, pattern) */
static PyObject *py_buffer_fill(PyObject *self, PyObject *args)
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
static PyObject *py_buffer_copy(PyObject *self, PyObject *args)
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
static PyObject *py_device_copy(PyObject *self, PyObject *args)
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

static PyObject *upload(PyArrayObject *host, int dev)
{
    PyArray_Descr *nat = PyArray_DescrNewByteorder(PyArray_DESCR(host),
                                                   NPY_NATIVE);
    PyArrayObject *c = nat ? (PyArrayObject *)PyArray_FromAny(
                                 (PyObject *)host, nat, 0, 0,
                                 NPY_ARRAY_CARRAY, NULL)
                           : NULL;
    if (c == NULL) {
        return NULL;
    }
    int t = gr_dtype_of(PyArray_DESCR(c), "array");
    if (t < 0) {
        Py_DECREF(c);
        return NULL;
    }
    const size_t nbytes = (size_t)PyArray_NBYTES(c);
    PyObject *buf = gr_buffer_new(dev, nbytes);
    PyObject *arr = NULL;
    if (buf != NULL && nbytes > 0) {
        gr_status st = {0};
        gr_block *blk = ((gr_buffer *)buf)->blk;
        const void *p = PyArray_DATA(c);
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = gr_block_write(blk, 0, p, nbytes, &st);
        Py_END_ALLOW_THREADS
        if (rc != 0) {
            gr_raise(&st);
            Py_CLEAR(buf);
        }
    }
    if (buf != NULL) {
        arr = gr_array_new(buf, PyArray_DESCR(c), PyArray_NDIM(c),
                           PyArray_DIMS(c), NULL, 0);
    }
    Py_XDECREF(buf);
    Py_DECREF(c);
    return arr;
}

/* to_device(obj, dtype=None, device=None) -> Array */
static PyObject *py_to_device(PyObject *self, PyObject *args)
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
static PyObject *py_get_many(PyObject *self, PyObject *arg)
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

static PyObject *py_get(PyObject *self, PyObject *arg)
{
    gr_array *a = gr_array_of(arg);
    if (a == NULL) {
        PyErr_SetString(PyExc_TypeError, "get takes a device array");
        return NULL;
    }
    return array_get(a);
}

/* finish(device=None): wait for everything enqueued on the device. */
static PyObject *py_finish(PyObject *self, PyObject *args)
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
static PyObject *py_copy_bandwidth(PyObject *self, PyObject *args)
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
static PyObject *py_memory_info(PyObject *self, PyObject *args)
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
static PyObject *py_empty_cache(PyObject *self, PyObject *args)
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

static PyObject *py_set_memory_limit(PyObject *self, PyObject *args)
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
static PyObject *py_set_staging(PyObject *self, PyObject *args)
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
    gr_lock();
    gr_stream_set_cfg(&c);
    gr_unlock();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_staging(PyObject *self, PyObject *noargs)
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

static PyObject *py_gate(PyObject *self, PyObject *args)
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

static PyObject *py_gate_open(PyObject *self, PyObject *cap)
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
static PyObject *py_busy(PyObject *self, PyObject *args)
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

/* use_queue(queue_int_ptr) -> device index: gpured runs that device on
 * the caller's context and queue (PyOpenCL's) from now on. */
static PyObject *py_use_queue(PyObject *self, PyObject *arg)
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
static PyObject *py_handles(PyObject *self, PyObject *args)
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
static PyObject *py_export(PyObject *self, PyObject *arg)
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
static PyObject *py_from_pyopencl(PyObject *self, PyObject *obj)
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
static PyObject *py_from_dlpack(PyObject *self, PyObject *args)
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

/* placement(mode=None) -> the mode ("auto" or "current"), set if given. */
static PyObject *py_placement(PyObject *self, PyObject *args)
{
    const char *m = NULL;
    if (!PyArg_ParseTuple(args, "|z", &m)) {
        return NULL;
    }
    if (m != NULL) {
        if (strcmp(m, "auto") == 0) {
            gr_placement_set(1);
        } else if (strcmp(m, "current") == 0) {
            gr_placement_set(0);
        } else {
            PyErr_Format(PyExc_ValueError, "placement is 'auto' or 'current' "
                         "(got '%s')", m);
            return NULL;
        }
    }
    return PyUnicode_FromString(gr_placement_auto() ? "auto" : "current");
}

static const char *const rate_names[GR_NRATES] = {"reduce", "arg", "column",
                                                  "scan"};

static PyObject *rates_dict(const gr_rates *r, int measured)
{
    PyObject *h = PyDict_New(), *dv = PyDict_New();
    for (int i = 0; h && dv && i < GR_NRATES; ++i) {
        PyObject *a = PyFloat_FromDouble(r->host_gbs[i]);
        PyObject *b = PyFloat_FromDouble(r->dev_gbs[i]);
        if (!a || !b || PyDict_SetItemString(h, rate_names[i], a) ||
            PyDict_SetItemString(dv, rate_names[i], b)) {
            Py_CLEAR(h);
        }
        Py_XDECREF(a);
        Py_XDECREF(b);
    }
    if (h == NULL || dv == NULL) {
        Py_XDECREF(h);
        Py_XDECREF(dv);
        return NULL;
    }
    return Py_BuildValue("{s:d, s:d, s:N, s:N, s:O}", "host_call_us",
                         r->host_call_ns / 1e3, "device_call_us",
                         r->dev_call_ns / 1e3, "host_gbs", h, "device_gbs", dv,
                         "measured", measured ? Py_True : Py_False);
}

/* rates(device=None) -> the placement rates for the device. */
static PyObject *py_rates(PyObject *self, PyObject *args)
{
    PyObject *devo = Py_None;
    gr_rates r;
    int dev = -1, measured = 0;
    if (!PyArg_ParseTuple(args, "|O", &devo) || dev_of_arg(devo, &dev) != 0) {
        return NULL;
    }
    gr_rates_get(gr_device_get(dev), &r, &measured);
    return rates_dict(&r, measured);
}

/* set_rates(device_name, host_call_us, device_call_us, host_gbs{},
 * device_gbs{}): measured rates (gpured.tune(), tuned.json). */
static PyObject *py_set_rates(PyObject *self, PyObject *args)
{
    const char *name = NULL;
    double hc = 0, dc = 0;
    PyObject *h = NULL, *dv = NULL;
    gr_rates r;
    if (!PyArg_ParseTuple(args, "sddO!O!", &name, &hc, &dc, &PyDict_Type, &h,
                          &PyDict_Type, &dv)) {
        return NULL;
    }
    memset(&r, 0, sizeof r);
    r.host_call_ns = hc * 1e3;
    r.dev_call_ns = dc * 1e3;
    for (int i = 0; i < GR_NRATES; ++i) {
        PyObject *a = PyDict_GetItemString(h, rate_names[i]);   /* borrowed */
        PyObject *b = PyDict_GetItemString(dv, rate_names[i]);  /* borrowed */
        r.host_gbs[i] = a ? PyFloat_AsDouble(a) : 0;
        r.dev_gbs[i] = b ? PyFloat_AsDouble(b) : 0;
        if (PyErr_Occurred() || r.host_gbs[i] <= 0 || r.dev_gbs[i] <= 0) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_ValueError, "rates for '%s' must be > 0",
                             rate_names[i]);
            }
            return NULL;
        }
    }
    gr_rates_set(name, &r);
    Py_RETURN_NONE;
}

/* split_rates() -> {family: GB/s} of two devices together (0: never
 * split); split_rates({family: GB/s}) replaces them (tune, tuned.json). */
static PyObject *py_split_rates(PyObject *self, PyObject *args)
{
    PyObject *in = NULL;
    double gbs[GR_NRATES];
    if (!PyArg_ParseTuple(args, "|O!", &PyDict_Type, &in)) {
        return NULL;
    }
    gr_split_get(gbs);
    if (in != NULL) {
        for (int i = 0; i < GR_NRATES; ++i) {
            PyObject *v = PyDict_GetItemString(in, rate_names[i]); /* borrowed */
            if (v != NULL) {
                const double x = PyFloat_AsDouble(v);
                if (PyErr_Occurred()) {
                    return NULL;
                }
                if (!(x >= 0)) {
                    PyErr_Format(PyExc_ValueError, "split rate for '%s' must "
                                 "be >= 0", rate_names[i]);
                    return NULL;
                }
                gbs[i] = x;
            }
        }
        gr_split_set(gbs);
    }
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && i < GR_NRATES; ++i) {
        PyObject *v = PyFloat_FromDouble(gbs[i]);
        if (v == NULL || PyDict_SetItemString(d, rate_names[i], v) != 0) {
            Py_CLEAR(d);
        }
        Py_XDECREF(v);
    }
    return d;
}

/* host_threads(threads=None, grain=None, call_us=None, gbs=None) -> the
 * host path's threads and their rates (policy.c gr_hpar), after setting
 * those given: threads 0 is automatic; gbs {family: GB/s}, 0 the
 * model's default; measured=True marks rates as measured (tuned.json).
 * "counts": what the pool did so far (hostpar.h gr_par_counts). */
static PyObject *py_host_threads(PyObject *self, PyObject *args,
                                 PyObject *kw)
{
    static char *names[] = {"threads", "grain", "call_us", "gbs", "measured",
                            NULL};
    PyObject *th = Py_None, *gr = Py_None, *cu = Py_None, *gb = Py_None,
             *me = Py_None;
    gr_hpar p;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOOO", names, &th, &gr, &cu,
                                     &gb, &me)) {
        return NULL;
    }
    gr_hpar_get(&p);
    if (th != Py_None) {
        const long n = PyLong_AsLong(th);
        if (PyErr_Occurred() || n < 0 || n > 256) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "threads is 0 (automatic) to 256");
            return NULL;
        }
        p.automatic = n == 0;
        p.threads = (int)n;
    }
    if (gr != Py_None) {
        const Py_ssize_t g = PyNumber_AsSsize_t(gr, NULL);
        if (PyErr_Occurred() || g < 0) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "grain is bytes >= 0 (0: the default)");
            return NULL;
        }
        p.grain = (size_t)g;
    }
    if (cu != Py_None) {
        const double c = PyFloat_AsDouble(cu);
        if (PyErr_Occurred() || !(c >= 0)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "call_us must be >= 0");
            return NULL;
        }
        p.call_ns = c * 1e3;
    }
    if (gb != Py_None) {
        if (!PyDict_Check(gb)) {
            PyErr_SetString(PyExc_TypeError, "gbs is a dict {family: GB/s}");
            return NULL;
        }
        for (int i = 0; i < GR_NRATES; ++i) {
            PyObject *v = PyDict_GetItemString(gb, rate_names[i]); /* borrowed */
            if (v != NULL) {
                const double x = PyFloat_AsDouble(v);
                if (PyErr_Occurred() || !(x >= 0)) {
                    PyErr_Clear();
                    PyErr_Format(PyExc_ValueError, "rate for '%s' must be >= 0",
                                 rate_names[i]);
                    return NULL;
                }
                p.gbs[i] = x;
            }
        }
    }
    if (me != Py_None) {
        p.measured = PyObject_IsTrue(me) == 1;
    }
    gr_hpar_set(&p);
    gr_hpar_get(&p);
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && i < GR_NRATES; ++i) {
        PyObject *v = PyFloat_FromDouble(p.gbs[i]);
        if (v == NULL || PyDict_SetItemString(d, rate_names[i], v) != 0) {
            Py_CLEAR(d);
        }
        Py_XDECREF(v);
    }
    if (d == NULL) {
        return NULL;
    }
    gr_par_counts c;
    gr_par_counts_get(&c);
    return Py_BuildValue(
        "{s:i, s:O, s:i, s:n, s:d, s:N, s:O, s:{s:n, s:n, s:n, s:n, s:n}}",
        "threads", p.threads, "auto", p.automatic ? Py_True : Py_False,
        "cpus", gr_par_cpus(), "grain", (Py_ssize_t)p.grain, "call_us",
        p.call_ns / 1e3, "gbs", d, "measured", p.measured ? Py_True : Py_False,
        "counts", "jobs", (Py_ssize_t)c.jobs, "tasks", (Py_ssize_t)c.tasks,
        "caller_tasks", (Py_ssize_t)c.caller_tasks, "woken",
        (Py_ssize_t)c.woken, "closed", (Py_ssize_t)c.closed);
}

/* split_plan(family, nbytes) -> (dev0, dev1, frac0, why, go): the pair of
 * devices a call of that family on nbytes of contiguous host memory (a
 * full reduction) would split between, and whether it is expected to
 * finish first that way (go); (None, None, 0.0, why, False) where no pair
 * is considered.  Placement "auto" with no device pinned only. */
static PyObject *py_split_plan(PyObject *self, PyObject *args)
{
    const char *fam = NULL;
    Py_ssize_t nbytes = 0;
    char why[512];
    gr_split sp;
    if (!PyArg_ParseTuple(args, "sn", &fam, &nbytes)) {
        return NULL;
    }
    const int arg = strcmp(fam, "arg") == 0;
    if (!arg && strcmp(fam, "reduce") != 0) {
        PyErr_Format(PyExc_ValueError, "split_plan: family 'reduce' or 'arg' "
                     "(got '%s')", fam);
        return NULL;
    }
    gr_layout lay;
    memset(&lay, 0, sizeof lay);
    lay.M = 1;
    lay.L = (size_t)nbytes;
    lay.elem_stride = 1;
    const int cur = gr_current_index();
    const int roam = gr_placement_auto() && !gr_device_pinned();
    const int go = gr_split_plan(cur, roam, GR_FAM_REDUCE,
                                 arg ? GR_ARGMAX : GR_ADD, &lay,
                                 (size_t)nbytes, &sp, why, sizeof why);
    if (sp.frac > 0) { /* a pair: what it would do (go: whether it does) */
        return Py_BuildValue("iidsO", sp.dev[0], sp.dev[1], sp.frac, why,
                             go ? Py_True : Py_False);
    }
    return Py_BuildValue("OOdsO", Py_None, Py_None, 0.0, why, Py_False);
}

/* device_index(device=None) -> its position in devices(). */
static PyObject *py_device_index(PyObject *self, PyObject *arg)
{
    int dev = -1;
    if (dev_of_arg(arg, &dev) != 0) {
        return NULL;
    }
    return PyLong_FromLong(dev);
}

static PyObject *py_set_array_class(PyObject *self, PyObject *cls)
{
    if (!PyType_Check(cls) ||
        !PyType_IsSubtype((PyTypeObject *)cls, &gr_ArrayType)) {
        PyErr_SetString(PyExc_TypeError, "a subclass of _core.ArrayBase");
        return NULL;
    }
    gr_array_set_class((PyTypeObject *)cls);
    Py_RETURN_NONE;
}

/* ====================================================== reduceat */

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

/* reduceat(a, indices, axis, op, dtype, out, kw, mode, reps): NumPy's
 * ufunc.reduceat for add, multiply, minimum, maximum, logical_and,
 * logical_or (the face casts for min/max/logical dtype=).  Results of
 * NumPy's dtype, in the input's memory (a new C-ordered array, or out:
 * C-contiguous of the result dtype, or a temporary copied into it). */
static PyObject *py_reduceat(PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs)
{
    static const struct {
        const char *name;
        gr_op op;
    } ops[] = {{"add", GR_ADD},     {"multiply", GR_MUL},
               {"minimum", GR_MIN}, {"maximum", GR_MAX},
               {"logical_and", GR_ALL}, {"logical_or", GR_ANY}};
    gr_request req;
    gr_result res;
    knobs k;
    PyObject *keep = NULL, *result = NULL, *tmp = NULL;
    PyArrayObject *ix = NULL;
    double *ns = NULL;
    int mode = 0, reps = 1, ax = 0, rt_i = -2;
    (void)self;
    memset(&req, 0, sizeof req);
    memset(&res, 0, sizeof res);
    if (nargs < 7) {
        PyErr_SetString(PyExc_TypeError, "reduceat(a, indices, axis, op, "
                        "dtype, out, kw, mode, reps)");
        return NULL;
    }
    if (mode_args(args, nargs, 7, &mode, &reps) != 0) {
        return NULL;
    }
    PyObject *a = args[0], *indices = args[1], *axis = args[2],
             *dtype = args[4], *out = args[5];
    const char *opname = PyUnicode_Check(args[3]) ? PyUnicode_AsUTF8(args[3])
                                                  : NULL;
    fdef f = {"reduceat", GR_F_REDUCEAT, GR_FAM_REDUCE, GR_ADD, "add"};
    int found = 0;
    for (size_t i = 0; opname && i < sizeof ops / sizeof *ops; ++i) {
        if (strcmp(opname, ops[i].name) == 0) {
            f.op = ops[i].op;
            f.ufunc = ops[i].name;
            found = 1;
        }
    }
    if (!found) {
        PyErr_Format(PyExc_ValueError, "reduceat: unknown operation %R (add, "
                     "multiply, minimum, maximum, logical_and, logical_or)",
                     args[3]);
        return NULL;
    }
    if (knobs_of(ARGN(6), "variant wg_size groups items vw device", "reduceat",
                 &k) != 0) {
        return NULL;
    }
    gr_device *d = request_begin(&f, a, out, &k, mode, &req, &keep);
    if (d == NULL) {
        goto done;
    }
    const int nd = req.in.nd;
    if (nd == 0) {
        PyErr_SetString(PyExc_TypeError, "cannot reduceat on a scalar");
        goto done;
    }
    /* one axis (None: every axis, which a 1-D input has one of) */
    if ((is_none(axis) && nd != 1) ||
        (PyTuple_Check(axis) && PyTuple_GET_SIZE(axis) != 1)) {
        PyErr_SetString(PyExc_ValueError, "reduceat does not allow multiple "
                        "axes");
        goto done;
    }
    if (is_none(axis)) {
        ax = 0;
    } else if (axis_one(PyTuple_Check(axis) ? PyTuple_GET_ITEM(axis, 0) : axis,
                        nd, &ax) != 0) {
        goto done;
    }
    /* indices: NumPy's forced cast to intp, one dimension; a device array
     * of the call's device stays there (cast and checked on the device) */
    const size_t L = req.in.shape[ax];
    size_t S;
    if (gr_array_of(indices) != NULL) {
        int di = -1;
        if (gr_array_operand(gr_array_of(indices), &req.vals, &di) != 0) {
            goto done;
        }
        if (di != req.dev) {
            PyErr_Format(PyExc_ValueError,
                         "arrays on two devices (%s and %s): move one first",
                         d->name, gr_device_get(di)->name);
            goto done;
        }
        if (req.vals.nd > 1) {
            PyErr_SetString(PyExc_ValueError, "object too deep for desired "
                            "array");
            goto done;
        }
        if (req.vals.nd == 0) {
            req.vals.nd = 1;
            req.vals.shape[0] = 1;
            req.vals.strides[0] = gr_dtypes[req.vals.t].size;
        }
        if (gr_dtypes[req.vals.t].is_float || req.vals.t == GR_UINT64) {
            /* NumPy's conversion of an index array: the safe rule */
            PyErr_Format(PyExc_TypeError, "Cannot cast array data from "
                         "dtype('%s') to dtype('int64') according to the "
                         "rule 'safe'", gr_dtypes[req.vals.t].name);
            goto done;
        }
        S = req.vals.shape[0];
        if (S > 0 && L == 0) {
            PyErr_Format(PyExc_IndexError, "index out-of-bounds in "
                         "%s.reduceat [0, 0)", f.ufunc);
            goto done;
        }
    } else {
        ix = (PyArrayObject *)PyArray_FromAny(
            indices, PyArray_DescrFromType(NPY_INT64), 0, 1,
            NPY_ARRAY_CARRAY, NULL);
        if (ix == NULL) {
            goto done;
        }
        S = PyArray_NDIM(ix) == 0 ? 1 : (size_t)PyArray_DIM(ix, 0);
        req.vals.present = 1; /* checked by dispatch.c, with the plan's pass */
        req.vals.t = GR_INT64;
        req.vals.nd = 1;
        req.vals.shape[0] = S;
        req.vals.strides[0] = 8;
        req.vals.host = (char *)PyArray_DATA(ix);
    }
    /* NumPy's result dtype */
    gr_dtype rt;
    if (f.op == GR_ADD || f.op == GR_MUL) {
        if (dtype_arg_ex(dtype, 1, &rt_i) != 0) {
            goto done;
        }
        rt = rt_i >= 0 ? (gr_dtype)rt_i : sum_dtype(req.in.t);
    } else {
        rt = f.op == GR_MIN || f.op == GR_MAX ? req.in.t : GR_BOOL;
    }
    if (fp64_check(d, rt) != 0 || fp64_check(d, req.in.t) != 0) {
        goto done;
    }
    req.op = f.op;
    req.rt = req.st = rt;
    req.axis = ax;
    npy_intp shape[GR_MAXDIMS];
    size_t nres = 1;
    for (int i = 0; i < nd; ++i) {
        shape[i] = i == ax ? (npy_intp)S : (npy_intp)req.in.shape[i];
        nres *= (size_t)shape[i];
    }
    /* where results go */
    const int device_in = req.in.blk != NULL;
    gr_array *oa = is_none(out) ? NULL : gr_array_of(out);
    if (!is_none(out) &&
        out_shape_check(out, shape, nd, "output operand has the wrong shape "
                        "for reduceat") != 0) {
        goto done;
    }
    int direct = 0;
    if (oa != NULL) {
        int d2 = -1;
        if (gr_array_operand(oa, &req.out, &d2) != 0) {
            goto done;
        }
        /* C-contiguous (unit dims aside) of the result dtype */
        ptrdiff_t want = (ptrdiff_t)gr_dtypes[rt].size;
        direct = req.out.t == rt;
        for (int i = nd - 1; direct && i >= 0; --i) {
            direct = req.out.shape[i] <= 1 || req.out.strides[i] == want;
            want *= (ptrdiff_t)req.out.shape[i];
        }
        if (!direct) {
            gr_block_put(req.out.blk);
            memset(&req.out, 0, sizeof req.out);
        }
    } else if (!is_none(out)) {
        PyArrayObject *oh = (PyArrayObject *)out;
        direct = PyArray_IS_C_CONTIGUOUS(oh) && PyArray_ISBEHAVED(oh) &&
                 PyArray_ISNOTSWAPPED(oh) &&
                 gr_dtype_of(PyArray_DESCR(oh), "out") == (int)rt;
        if (direct) {
            req.out.present = 1;
            req.out.host = PyArray_DATA(oh);
        }
    }
    if (!direct) {
        if (device_in || oa != NULL) {
            tmp = device_empty(req.dev, rt, nd, shape, NULL);
        } else {
            tmp = PyArray_Empty(nd, shape, gr_descr_of(rt), 0);
        }
        if (tmp == NULL) {
            goto done;
        }
        if (gr_array_of(tmp) != NULL) {
            int d2 = -1;
            if (gr_array_operand(gr_array_of(tmp), &req.out, &d2) != 0) {
                goto done;
            }
        } else {
            req.out.present = 1;
            req.out.host = PyArray_DATA((PyArrayObject *)tmp);
        }
    }
    /* host offsets are checked by the run, even for an empty result */
    if (nres > 0 || mode == 1 || req.vals.blk == NULL) {
        if (mode == 2 && nres == 0) {
            PyErr_SetString(PyExc_ValueError, "timeit needs a non-empty "
                            "result");
            goto done;
        }
        if (bench_setup(&req, mode, reps, &ns) != 0 ||
            run_request(&req, &res) != 0) {
            goto done;
        }
    }
    d = gr_device_get(req.dev); /* placement may have moved it */
    if (mode == 1) {
        result = reduce_plan_dict(d, &res);
        if (result != NULL && res.where != 1) {
            const gr_kernel_kind kk = res.plan.reduce.kind;
            PyObject *kn = PyUnicode_FromString(
                kk == GR_K_GROUP  ? "gr_segments_group"
                : kk == GR_K_WARP ? "gr_segments_warp"
                                  : "gr_segments_items");
            if (kn == NULL || PyDict_SetItemString(result, "kernel", kn) != 0) {
                Py_CLEAR(result);
            }
            Py_XDECREF(kn);
        }
        goto done;
    }
    PyObject *value;
    if (direct) {
        value = Py_NewRef(out);
    } else if (!is_none(out)) {
        if (seg_copy_out(tmp, out) != 0) {
            goto done;
        }
        value = Py_NewRef(out);
    } else {
        value = Py_NewRef(tmp);
    }
    result = mode == 2 ? timed_result(value, ns, reps,
                                      reduce_plan_dict(d, &res))
                       : value;
done:
    gr_result_clear(&res);
    gr_request_clear(&req);
    Py_XDECREF(keep);
    Py_XDECREF(tmp);
    Py_XDECREF(ix);
    free(ns);
    return result;
}

/* ========================================================== module */

#define FAST(name, fn, doc) \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, doc}
#define KW(name, fn, doc) \
    {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, doc}

static PyMethodDef methods[] = {
    FAST("reduce", py_reduce,
         "reduce(name, a, axis, dtype, out, keepdims, initial, kw, mode, "
         "reps): sum, prod, min, max, all, any, mean, argmin, argmax."),
    FAST("scan", py_scan,
         "scan(name, a, axis, dtype, out, exclusive, kw, mode, reps): "
         "cumsum, cumprod, cummin, cummax."),
    FAST("reduceat", py_reduceat,
         "reduceat(a, indices, axis, op, dtype, out, kw, mode, reps): "
         "NumPy's ufunc.reduceat."),
    FAST("bykey", py_bykey,
         "bykey(func, keys, values, op, num_keys, exclusive, deterministic, "
         "sorted, kw, mode, reps): reduce_by_key, sum_by_key, scan_by_key."),
    {"variants", py_variants, METH_VARARGS,
     "variants(name, dtype, device=None): variant names the device runs."},
    {"bykey_variants", py_bykey_variants, METH_VARARGS,
     "bykey_variants(func, kdtype, vdtype, op)."},
    KW("plan_for", py_plan_for, "A reduction plan for synthetic caps."),
    KW("scan_plan_for", py_scan_plan_for, "A scan plan for synthetic caps."),
    KW("bykey_plan_for", py_bykey_plan_for, "A by-key plan for synthetic caps."),
    {"set_tuned", py_set_tuned, METH_O, "Load gpured.tune()'s table."},
    {"size_class", py_size_class, METH_O, "Size class of a byte count."},
    {"devices", py_devices, METH_NOARGS, "List OpenCL devices."},
    {"get_device", py_get_device, METH_NOARGS, "The current device."},
    {"current_index", py_current_index, METH_NOARGS,
     "Position of the current device in devices()."},
    {"set_device", py_set_device, METH_O, "Choose the current device."},
    {"device_pinned", py_device_pinned, METH_NOARGS,
     "Whether GPURED_DEVICE or set_device() chose the current device."},
    {"kernel_source", py_kernel_source, METH_O, "OpenCL source of a family."},
    {"cache_dir", py_cache_dir, METH_VARARGS, "Get/set the binary cache dir."},
    {"stats", py_stats, METH_NOARGS, "Program cache counters."},
    {"buffer_alloc", py_buffer_alloc, METH_VARARGS,
     "buffer_alloc(nbytes, device=None): a new device buffer (pooled)."},
    {"buffer_write", py_buffer_write, METH_VARARGS,
     "buffer_write(buf, byte_off, array): host -> device."},
    {"buffer_read", py_buffer_read, METH_VARARGS,
     "buffer_read(buf, byte_off, array): device -> host."},
    {"buffer_fill", py_buffer_fill, METH_VARARGS,
     "buffer_fill(buf, byte_off, nbytes, pattern)."},
    {"buffer_copy", py_buffer_copy, METH_VARARGS,
     "buffer_copy(src, soff, dst, doff, nbytes): device -> device."},
    {"device_copy", py_device_copy, METH_VARARGS,
     "device_copy(src, dst, div=0.0): strided, casting copy of Arrays."},
    {"to_device", py_to_device, METH_VARARGS,
     "to_device(obj, dtype=None, device=None) -> Array."},
    {"get", py_get, METH_O, "get(array) -> numpy.ndarray."},
    {"get_many", py_get_many, METH_O,
     "get_many(arrays) -> [numpy.ndarray]: every read enqueued first."},
    {"finish", py_finish, METH_VARARGS,
     "finish(device=None): wait for the device's queue."},
    {"copy_bandwidth", py_copy_bandwidth, METH_VARARGS,
     "copy_bandwidth(nbytes, reps, device=None): device copy times (ns)."},
    {"memory_info", py_memory_info, METH_VARARGS,
     "memory_info(device=None): the device pool's counters."},
    {"empty_cache", py_empty_cache, METH_VARARGS,
     "empty_cache(device=None): release every cached block."},
    {"set_memory_limit", py_set_memory_limit, METH_VARARGS,
     "set_memory_limit(bytes, device=None): cap the cached bytes."},
    {"set_staging", py_set_staging, METH_VARARGS,
     "set_staging(chunk_bytes, buffers, min_bytes, force, threads, "
     "register)."},
    {"staging", py_staging, METH_NOARGS,
     "Staging settings and counters (streams, chunks)."},
    {"placement", py_placement, METH_VARARGS,
     "placement(mode=None): 'auto' (host path or device) or 'current'."},
    KW("host_threads", py_host_threads,
       "host_threads(threads=None, grain=None, call_us=None, gbs=None, "
       "measured=None) -> the host path's threads and their rates."),
    {"split_rates", py_split_rates, METH_VARARGS,
     "split_rates(rates=None) -> GB/s of two devices together, per family."},
    {"split_plan", py_split_plan, METH_VARARGS,
     "split_plan(family, nbytes) -> (dev0, dev1, frac0, why, go)."},
    {"rates", py_rates, METH_VARARGS,
     "rates(device=None): the placement model's rates for a device."},
    {"set_rates", py_set_rates, METH_VARARGS,
     "set_rates(name, host_call_us, device_call_us, host_gbs, device_gbs)."},
    {"from_dlpack", py_from_dlpack, METH_VARARGS,
     "from_dlpack(obj, device=None): host memory as an Array (CPU: in place)."},
    {"use_queue", py_use_queue, METH_O,
     "use_queue(queue_int_ptr): run that queue's device on its context."},
    {"handles", py_handles, METH_VARARGS,
     "handles(device=None): raw context/queue/device/platform handles."},
    {"export", py_export, METH_O,
     "export(buffer): shared outside gpured, never recycled."},
    {"from_pyopencl", py_from_pyopencl, METH_O,
     "from_pyopencl(a): a PyOpenCL array as an Array (in place if it can)."},
    {"_gate", py_gate, METH_VARARGS,
     "_gate(device=None): shut the device's queue behind a user event."},
    {"_gate_open", py_gate_open, METH_O, "_gate_open(gate): let it run."},
    {"_busy", py_busy, METH_VARARGS,
     "_busy(device=None): earlier commands still pending?"},
    {"device_index", py_device_index, METH_O,
     "device_index(device): its position in devices() (None: current)."},
    {"set_array_class", py_set_array_class, METH_O,
     "Register the Array subclass results are made of."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "gpured._core",
    "C core of gpured: one Python face (api.c) over dispatch, policy, the "
    "kernel families, the device pool and the OpenCL runtime.",
    -1, methods,
};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) {
        return NULL;
    }
    np_module = PyImport_ImportModule("numpy");
    PyObject *exc = np_module ? PyImport_ImportModule("numpy.exceptions")
                              : NULL;
    if (exc != NULL) {
        np_axis_error = PyObject_GetAttrString(exc, "AxisError");
        Py_DECREF(exc);
    }
    if (np_module != NULL) {
        np_novalue = PyObject_GetAttrString(np_module, "_NoValue");
        np_true_divide = PyObject_GetAttrString(np_module, "true_divide");
        /* NumPy versions differ on mean(axis=True): ask this one */
        PyObject *r = PyRun_String(
            "__import__('numpy').mean(__import__('numpy').zeros((1, 1)), axis=True)",
            Py_eval_input, PyModule_GetDict(m), PyModule_GetDict(m));
        mean_bool_axes = r != NULL;
        Py_XDECREF(r);
        PyErr_Clear();
    }
    gr_OpenCLError = PyErr_NewExceptionWithDoc(
        "gpured.OpenCLError",
        "An OpenCL call failed; attributes: call, code, name, build_log.",
        PyExc_RuntimeError, NULL);
    gr_VariantUnavailable = PyErr_NewExceptionWithDoc(
        "gpured.VariantUnavailable",
        "The requested variant cannot run on this device (see the message).",
        PyExc_ValueError, NULL);
    if (np_module == NULL || np_axis_error == NULL || np_novalue == NULL ||
        np_true_divide == NULL || gr_OpenCLError == NULL ||
        gr_VariantUnavailable == NULL || PyType_Ready(&gr_BufferType) < 0 ||
        PyType_Ready(&gr_ArrayType) < 0 ||
        PyModule_AddObjectRef(m, "Buffer", (PyObject *)&gr_BufferType) < 0 ||
        PyModule_AddObjectRef(m, "ArrayBase", (PyObject *)&gr_ArrayType) < 0 ||
        PyModule_AddObjectRef(m, "OpenCLError", gr_OpenCLError) < 0 ||
        PyModule_AddObjectRef(m, "VariantUnavailable", gr_VariantUnavailable) <
            0 ||
        gr_runtime_init() != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
