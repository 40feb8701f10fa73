/*
 * api_calls.c — the api layer's hallway of operands and runs: Python
 * objects as gr_operands (NumPy arrays, device arrays, PyOpenCL arrays;
 * host memory used again offered for registration), the common start of
 * every family's request, the run with the GIL released, and work that an
 * interrupt left running.  The phases families share (api_call) are here.
 */
#include "api.h"

/* Work that an interrupt (Ctrl-C) left running on a device, and the
 * Python objects whose memory it reads or writes: kept until the device
 * is done with it, released by the next call that finds it done. */
typedef struct pend {
    cl_event ev;
    PyObject *objs[3];
    struct pend *next;
} pend;
static pend *pending_list = NULL;

void pending_add(cl_event ev, PyObject *a, PyObject *b, PyObject *c)
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
int signals_pending(void *ctx)
{
    (void)ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    int r = PyErr_CheckSignals();
    PyGILState_Release(g);
    return r != 0;
}

int forked_check(void)
{
    if (gr_forked()) {
        PyErr_SetString(PyExc_RuntimeError, GR_FORK_MSG);
        return -1;
    }
    return 0;
}

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
void host_note(PyArrayObject *arr)
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

/* An operand from a Python object: a device array (a block reference is
 * taken), or host memory (an aligned, native-order ndarray kept alive in
 * *keep; copies are made where NumPy's memory is not that).  *dev: the
 * device of a device array, else unchanged. */
int operand_of(PyObject *obj, gr_operand *o, PyObject **keep, int *dev,
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
    /* halves: only the reductions that read them (call_begin) */
    int t = gr_dtype_of_store(PyArray_DESCR(arr), what);
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

/* ---------------------------------------------- PyOpenCL operands */

/* Whether obj is a pyopencl.array.Array (only if PyOpenCL is loaded). */
int is_pyopencl_array(PyObject *obj)
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
int pyopencl_operand(PyObject *obj, gr_operand *o, PyObject **keep,
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

size_t operand_size(const gr_operand *o)
{
    size_t n = 1;
    for (int i = 0; i < o->nd; ++i) {
        n *= o->shape[i];
    }
    return n;
}

/* The device a call without device arrays runs on. */
int default_device(const knobs *k)
{
    if (k->device >= 0) {
        return k->device;
    }
    if (gr_current_device() == NULL) {
        return -1;
    }
    return gr_current_index();
}

/* Run a request with the GIL released; -1 with the exception set. */
int run_request(gr_request *req, gr_result *res)
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

/* The common start of every family's request: the device (an Array
 * operand's or out's, else device=, else the current one), the input
 * operand, the function and mode.  NULL with an exception set. */
gr_device *request_begin(const fdef *f, PyObject *a, PyObject *out,
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
    /* GR_RUN_NANCHECK: a run whose nanargmin/nanargmax indices are
     * checked for NaNs (the face's all-NaN rule): (result, flag) */
    req->mode = mode == GR_RUN_NANCHECK ? GR_RUN : (gr_mode)mode;
    req->nan_check = mode == GR_RUN_NANCHECK;
    /* Placement may answer on the host (place.c decides): not when the
     * user pinned a device, a variant or a knob, nor when timing. */
    req->host_ok = gr_placement_auto() && k->device < 0 && mode != GR_BENCH &&
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
int bench_setup(gr_request *req, int mode, int reps, double **ns)
{
    if (mode != GR_BENCH) {
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

/* ------------------------------------------- phases families share */

/* An api_call with nothing owned yet. */
void call_init(api_call *c, const fdef *f, int mode, int reps)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->mode = mode;
    c->reps = reps;
    c->dev = -1;
    c->rt_i = -2;
}

/* Release what the call owns (its one exit). */
void call_clear(api_call *c)
{
    gr_result_clear(&c->res);
    gr_request_clear(&c->req);
    Py_CLEAR(c->keep);
    Py_CLEAR(c->tmp);
    free(c->ns);
    c->ns = NULL;
}

/* The request's start (request_begin): device, input operand, mode. */
int call_begin(api_call *c, PyObject *a, PyObject *out)
{
    c->d = request_begin(c->f, a, out, &c->k, c->mode, &c->req, &c->keep);
    if (c->d == NULL) {
        return -1;
    }
    c->device_in = c->req.in.blk != NULL;
    c->dev = c->req.dev;
    /* reductions and scans read halves themselves (api_reduce.c
     * red_half_check, kernels/scan.cl GR_SELT) */
    if (GR_IS_HALF(c->req.in.t) &&
        ((c->f->fam != GR_FAM_REDUCE && c->f->fam != GR_FAM_SCAN) ||
         c->f->func == GR_F_REDUCEAT)) {
        PyErr_Format(PyExc_TypeError, "gpured: %s input is widened to "
                     "float32 by the public functions (internal call)",
                     gr_dtypes[c->req.in.t].name);
        return -1;
    }
    return 0;
}

/* The device computes in the result and input dtypes (fp64). */
int call_fp64(api_call *c)
{
    if (fp64_check(c->d, c->rt) != 0 || fp64_check(c->d, c->req.in.t) != 0) {
        return -1;
    }
    return 0;
}

/* An empty input explained or timed: explain's dict (1), or timeit's
 * refusal (-1). */
int call_empty_mode(api_call *c, const char *family)
{
    if (c->mode == GR_EXPLAIN) {
        PyObject *why = PyUnicode_FromFormat("empty %s: answered without "
                                             "running a kernel", family);
        c->result = why ? Py_BuildValue("{s:O, s:i, s:N}", "variant",
                                        Py_None, "passes", 0, "why", why)
                        : NULL;
        return c->result != NULL ? 1 : -1;
    }
    PyErr_Format(PyExc_ValueError, "timeit needs a non-empty %s", family);
    return -1;
}

/* A device out= as the request's out operand (one reference held). */
int out_operand(PyObject *out, gr_operand *o)
{
    int d2 = -1;
    return gr_array_compute_operand(gr_array_of(out), o, &d2);
}

/* Run the request (timed runs set up); hold: work an interrupt left
 * running keeps the input, the temporary and `alive` until it is done. */
int call_run(api_call *c, int hold, PyObject *alive)
{
    if (bench_setup(&c->req, c->mode, c->reps, &c->ns) != 0) {
        return -1;
    }
    if (run_request(&c->req, &c->res) != 0) {
        if (hold && c->res.pending != NULL) {
            pending_add(c->res.pending, c->keep, c->tmp, alive);
            c->res.pending = NULL;
        }
        return -1;
    }
    c->d = gr_device_get(c->req.dev); /* placement may have moved it */
    return 0;
}

/* timeit's (value, times, plan) of a reduction's plan (takes value). */
PyObject *call_timed(api_call *c, PyObject *value)
{
    return timed_result(value, c->ns, c->reps,
                        reduce_plan_dict(c->d, &c->res));
}
