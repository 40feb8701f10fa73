/*
 * api_custom.c — user-defined reductions' Python entry (gpured/_kernels.py
 * parses the user's parameters and expressions, resolves their types and
 * lays the inputs out; here: the buffers, the plan, the run):
 *
 *   _core.custom_reduce(user, args, out, layout, types, knobs, mode)
 *
 * user: the GR_USER_* defines of kernels/custom.cl; args: the kernel's
 * user arguments in order, each a device Array (its buffer and element
 * offset) or bytes (a scalar's value); out: the result Array (M results,
 * contiguous); layout: (M, L, seg_stride, elem_stride) in elements, the
 * same for every input; types: (a_cl, r_cl, a_size, x_size, a_float,
 * in_size, fp64[, options]) (options: the user's build options, one
 * string); knobs: variant, wg_size, groups, items, ilp, vw;
 * mode: 0 run (None), 1 explain (the plan, no run), 2 time (ns, plan).
 */
#include "api.h"
#include "custom.h"

static const char *const comb_names[] = {
    "naive (interleaved)", "sequential", "unrolled sequential",
    "unrolled, last sub-group by its own barrier", "sub-group", "work-group"};

static PyObject *plan_dict(const gr_plan *p, const gr_device *d)
{
    const int ci = p->combine >= 0 && p->combine < 6 ? p->combine : 0;
    return Py_BuildValue(
        "{s:s,s:s,s:s,s:i,s:i,s:i,s:n,s:n,s:i,s:i,s:s,s:s}", "variant",
        p->variant ? p->variant : "?", "kernel",
        p->kind == GR_K_GROUP ? "gr_custom_group" : "gr_custom_items",
        "device", d->name, "wg_size", p->wg, "vw", p->vw, "ilp", p->ilp,
        "groups", (Py_ssize_t)p->parts, "chunk", (Py_ssize_t)p->chunk,
        "passes", p->parts > 1 ? 2 : 1, "wg2", p->wg2, "combine",
        comb_names[ci], "why", p->why);
}

/* Both entry points' run: fn(d, ctx, ns, st) under the device's lock,
 * the device opened; mode 2 (timed) on the device's profiling queue with
 * the device time in *ns (ns NULL otherwise).  0, or -1 with the error
 * raised. */
typedef int (*run_fn)(gr_device *d, const void *ctx, double *ns,
                      gr_status *st);

static int locked_run(gr_device *d, int mode, run_fn fn, const void *ctx,
                      double *ns)
{
    gr_status st = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mode == 2 ? gr_profile_begin(d->index, &st) : 0;
    if (rc == 0) {
        gr_lock(d);
        rc = gr_device_open(d, &st);
        if (rc == 0) {
            rc = fn(d, ctx, mode == 2 ? ns : NULL, &st);
        }
        gr_unlock(d);
        if (mode == 2) {
            gr_profile_end(d->index);
        }
    }
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        gr_raise(&st);
        return -1;
    }
    return 0;
}

/* A run's answer: None, or (ns, plan) for a timed one (plan: a new
 * reference, stolen). */
static PyObject *run_answer(int mode, double ns, PyObject *plan)
{
    if (mode != 2) {
        Py_XDECREF(plan);
        Py_RETURN_NONE;
    }
    return plan ? Py_BuildValue("(dN)", ns, plan) : NULL;
}

static int reduce_fn(gr_device *d, const void *ctx, double *ns,
                     gr_status *st)
{
    const void *const *cp = ctx; /* {call, plan} */
    return gr_custom_run(d, cp[0], cp[1], ns, st);
}

/* The user arguments: Arrays (buffer, element offset) and scalars. */
static int user_args(PyObject *args, int dev, gr_custom_call *c,
                     gr_block **blk, cl_ulong *offs)
{
    const Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > GR_CUSTOM_MAXARGS / 2) {
        PyErr_SetString(PyExc_ValueError, "a user kernel takes at most 8 "
                        "parameters");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        if (PyBytes_Check(o)) {
            c->args[c->nargs++] = (gr_arg){(size_t)PyBytes_GET_SIZE(o),
                                           PyBytes_AS_STRING(o)};
            continue;
        }
        gr_array *a = gr_array_of(o);
        gr_operand op;
        int odev = -1;
        if (a == NULL || gr_array_operand(a, &op, &odev) != 0) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "user kernel arguments are "
                                "Arrays or bytes");
            }
            return -1;
        }
        blk[i] = op.blk;
        if (odev != dev) {
            PyErr_SetString(PyExc_ValueError,
                            "arrays on two devices: move one first");
            return -1;
        }
        offs[i] = (cl_ulong)(op.off / (size_t)gr_dtypes[op.t].size);
        c->args[c->nargs++] = GR_ARG(op.blk->mem);
        c->args[c->nargs++] = GR_ARG(offs[i]);
    }
    return 0;
}

/* The plan: an empty segment needs one work-item a result. */
static int custom_plan(const gr_device *d, const gr_custom_call *c,
                       const knobs *k, gr_plan *p)
{
    if (c->lay.L == 0 || c->lay.M == 0) {
        memset(p, 0, sizeof *p);
        p->variant = "segment_per_item";
        p->kind = GR_K_ITEMS;
        p->wg = 64;
        p->vw = p->ilp = p->parts = 1;
        snprintf(p->why, sizeof p->why, "empty reduction: the identity "
                 "through the post-map, one work-item a result");
        return 0;
    }
    const int rc = gr_plan_custom(d, &c->ty, &c->lay, &k->kn, p);
    if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        p->why);
        return -1;
    }
    return 0;
}

static int call_args(PyObject *layout, PyObject *types, gr_custom_call *c)
{
    Py_ssize_t M, L, ss, es;
    c->ty.opts = "";
    if (!PyArg_ParseTuple(layout, "nnnn", &M, &L, &ss, &es) ||
        !PyArg_ParseTuple(types, "ssiiiii|s", &c->ty.a_cl, &c->ty.r_cl,
                          &c->ty.a_size, &c->ty.x_size, &c->ty.a_float,
                          &c->ty.in_size, &c->ty.fp64, &c->ty.opts)) {
        return -1;
    }
    if (strlen(c->ty.opts) > GR_USER_OPTS_MAX) {
        PyErr_SetString(PyExc_ValueError, "options= too long");
        return -1;
    }
    c->lay = (gr_layout){(size_t)M, (size_t)L, ss, es};
    return 0;
}

PyObject *py_custom_reduce(PyObject *self, PyObject *args)
{
    PyObject *uargs, *outo, *layout, *types, *kw, *result = NULL;
    gr_block *blk[GR_CUSTOM_MAXARGS] = {NULL};
    cl_ulong offs[GR_CUSTOM_MAXARGS];
    gr_custom_call c;
    gr_operand out;
    gr_plan plan;
    knobs k;
    int mode = 0, dev = -1;
    double ns = 0.0;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "sO!OO!O!Oi", &c.user, &PyTuple_Type, &uargs,
                          &outo, &PyTuple_Type, &layout, &PyTuple_Type, &types,
                          &kw, &mode) ||
        forked_check() != 0 || call_args(layout, types, &c) != 0 ||
        knobs_of(kw, "variant wg_size groups items ilp vw", "ReductionKernel",
                 &k) != 0) {
        return NULL;
    }
    gr_array *oa = gr_array_of(outo);
    if (oa == NULL || gr_array_operand(oa, &out, &dev) != 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "custom_reduce: out is an Array");
        }
        return NULL;
    }
    blk[GR_CUSTOM_MAXARGS - 1] = out.blk;
    c.out = out.blk->mem;
    c.out0 = (cl_ulong)(out.off / (size_t)gr_dtypes[out.t].size);
    gr_device *d = gr_device_get(dev);
    if (user_args(uargs, dev, &c, blk, offs) != 0 ||
        custom_plan(d, &c, &k, &plan) != 0) {
        goto done;
    }
    const void *ctx[2] = {&c, &plan};
    if (mode == 1) {
        result = plan_dict(&plan, d);
    } else if (locked_run(d, mode, reduce_fn, ctx, &ns) == 0) {
        result = run_answer(mode, ns, mode == 2 ? plan_dict(&plan, d) : NULL);
    }
done:
    for (int i = 0; i < GR_CUSTOM_MAXARGS; ++i) {
        if (blk[i] != NULL) {
            gr_block_put(blk[i]);
        }
    }
    return result;
}

/* custom_variants() -> the variants a user operator may name. */
PyObject *py_custom_variants(PyObject *self, PyObject *unused)
{
    PyObject *l = PyList_New(0);
    for (const char *const *v = gr_custom_variants(); l && *v; ++v) {
        PyObject *s = PyUnicode_FromString(*v);
        if (s == NULL || PyList_Append(l, s) != 0) {
            Py_XDECREF(s);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(s);
    }
    return l;
}

/* ---------------------------------------------------------------- scans
 *
 *   _core.custom_scan(user, x, out, layout, out_strides, types, exclusive,
 *                     knobs, mode)
 *
 * gpured.ScanKernel: the rows of x (layout (M, L, seg_stride, elem_stride)
 * in elements) scanned into out (its (seg, elem) strides) with the user's
 * operator through kernels/scan.cl (decoupled look-back and the rest of
 * the scans' ladder); types: (input dtype, result dtype, a_cl, a_size[,
 * x_size[, options]]) (x_size: the auxiliary part of the state, as a_size,
 * or 0; options: the user's build options); mode as custom_reduce's. */

static int scan_types(PyObject *types, gr_accum *acc)
{
    PyArray_Descr *dt = NULL, *dr = NULL;
    int t, r;
    acc->user_opts = "";
    if (!PyArg_ParseTuple(types, "O&O&si|is", PyArray_DescrConverter, &dt,
                          PyArray_DescrConverter, &dr, &acc->a_cl,
                          &acc->a_size, &acc->x_size, &acc->user_opts)) {
        Py_XDECREF(dt);
        return -1;
    }
    if (strlen(acc->user_opts) > GR_USER_OPTS_MAX ||
        (acc->x_size != 0 && acc->x_size != acc->a_size)) {
        Py_DECREF(dt);
        Py_DECREF(dr);
        PyErr_SetString(PyExc_ValueError, "ScanKernel: options= too long, "
                        "or x_size neither 0 nor a_size");
        return -1;
    }
    t = gr_dtype_of(dt, "ScanKernel input");
    r = t < 0 ? -1 : gr_dtype_of(dr, "ScanKernel output");
    Py_DECREF(dt);
    Py_DECREF(dr);
    if (r < 0) {
        return -1;
    }
    acc->t = (gr_dtype)t;
    acc->r = (gr_dtype)r;
    acc->a_min = acc->a_max = "0";
    acc->cvt = 6; /* kernels/common.cl GR_CVT_USER */
    return 0;
}

/* One scan run (locked_run's fn): ctx is a scan_ctx. */
typedef struct {
    const gr_accum *acc;
    int exclusive;
    const gr_layout *lay;
    const gr_scan_plan *plan;
    const gr_scan_io *io;
} scan_ctx;

static int scan_fn(gr_device *d, const void *ctx, double *ns, gr_status *st)
{
    const scan_ctx *s = ctx;
    gr_timing tm = {0, 0};
    const int rc = gr_scan_run(d, GR_OP_USER_ID, s->acc, s->exclusive,
                               s->lay, s->plan, s->io, ns ? &tm : NULL, st);
    if (ns != NULL) {
        *ns = tm.first_ns;
    }
    return rc;
}

/* Run (or explain) the planned scan; the result of the call. */
static PyObject *scan_go(gr_device *d, gr_accum *acc, int exclusive,
                         const gr_layout *lay, const gr_scan_plan *plan,
                         const gr_scan_io *io, int mode)
{
    const scan_ctx ctx = {acc, exclusive, lay, plan, io};
    double ns = 0.0;
    if (mode == 1) {
        return scan_plan_dict(d, plan, acc, lay);
    }
    if (locked_run(d, mode, scan_fn, &ctx, &ns) != 0) {
        return NULL;
    }
    return run_answer(mode, ns,
                      mode == 2 ? scan_plan_dict(d, plan, acc, lay) : NULL);
}

PyObject *py_custom_scan(PyObject *self, PyObject *args)
{
    PyObject *xo, *outo, *layout, *ostr, *types, *kw, *result = NULL;
    Py_ssize_t M, L, ss, es, oss, oes;
    gr_accum acc;
    gr_operand x, out;
    gr_scan_plan plan;
    knobs k;
    int exclusive = 0, mode = 0, dev = -1, odev = -1;
    const char *user = NULL;
    memset(&acc, 0, sizeof acc);
    if (!PyArg_ParseTuple(args, "sOOO!O!O!pOi", &user, &xo, &outo,
                          &PyTuple_Type, &layout, &PyTuple_Type, &ostr,
                          &PyTuple_Type, &types, &exclusive, &kw, &mode) ||
        forked_check() != 0 ||
        !PyArg_ParseTuple(layout, "nnnn", &M, &L, &ss, &es) ||
        !PyArg_ParseTuple(ostr, "nn", &oss, &oes) ||
        scan_types(types, &acc) != 0 ||
        knobs_of(kw, "variant wg_size groups items ilp vw spins",
                 "ScanKernel", &k) != 0) {
        return NULL;
    }
    acc.user = user;
    gr_array *xa = gr_array_of(xo), *oa = gr_array_of(outo);
    if (xa == NULL || oa == NULL) {
        PyErr_SetString(PyExc_TypeError, "custom_scan: x and out are Arrays");
        return NULL;
    }
    if (gr_array_operand(xa, &x, &dev) != 0) {
        return NULL;
    }
    if (gr_array_operand(oa, &out, &odev) != 0) {
        gr_block_put(x.blk);
        return NULL;
    }
    gr_device *d = gr_device_get(dev);
    const gr_layout lay = {(size_t)M, (size_t)L, ss, es};
    const gr_scan_io io = {x.blk->mem, x.off / (size_t)gr_dtypes[x.t].size,
                           out.blk->mem,
                           out.off / (size_t)gr_dtypes[out.t].size, oss, oes};
    const int rc = odev != dev ? -3
                   : gr_plan_custom_scan(d, &acc, &lay, oes == 1, &k.kn,
                                         &plan);
    if (rc == -3) {
        PyErr_SetString(PyExc_ValueError, "arrays on two devices");
    } else if (rc != 0) {
        PyErr_SetString(rc == -2 ? gr_VariantUnavailable : PyExc_ValueError,
                        plan.why);
    } else {
        result = scan_go(d, &acc, exclusive, &lay, &plan, &io, mode);
    }
    gr_block_put(x.blk);
    gr_block_put(out.blk);
    return result;
}
