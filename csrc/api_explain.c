/*
 * api_explain.c — the api layer's entry points that plan without running:
 * variants, plan_for / scan_plan_for / bykey_plan_for on synthetic
 * devices, the tuned table, devices, placement and its rates, the host
 * path's threads, program cache facts.
 */
#include "api.h"
#include "elementwise.h"
#include "hostpar.h"

/* ==================================================== explain/variants */

/* variants(name, dtype) -> the variant names the current device (or
 * device=) runs for that function on that input dtype ("auto" first). */
PyObject *py_variants(PyObject *self, PyObject *args)
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
    switch (f->rt) {
    case RT_SUM:
        r = sum_dtype((gr_dtype)t);
        break;
    case RT_MEAN:
        r = gr_dtypes[t].is_float && !d->fp64 ? GR_FLOAT32 : GR_FLOAT64;
        if (!d->fp64) {
            r = GR_FLOAT32;
        }
        break;
    case RT_BOOL:
        r = GR_BOOL;
        break;
    default: /* RT_INPUT; RT_INDEX: the input's (the values compared) */
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
PyObject *py_bykey_variants(PyObject *self, PyObject *args)
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
    const gr_bk_func bf = f->bkf;
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
PyObject *py_plan_for(PyObject *self, PyObject *args, PyObject *kw)
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
PyObject *py_scan_plan_for(PyObject *self, PyObject *args, PyObject *kw)
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

/* ew_plan_for(caps, n, wg_size=0, items=0) -> the elementwise plan
 * (csrc/plan_elementwise.c) for n result elements on a synthetic device
 * (caps a dict) or on device caps (an int: its position in devices()). */
PyObject *py_ew_plan_for(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"caps", "n", "wg_size", "items", NULL};
    PyObject *caps = NULL;
    Py_ssize_t n = 0, wg = 0, items = 0;
    gr_device dev;
    const gr_device *d = &dev;
    gr_ew_plan p;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "On|nn", kwlist, &caps, &n,
                                     &wg, &items)) {
        return NULL;
    }
    if (n < 0 || wg < 0 || items < 0) {
        PyErr_SetString(PyExc_ValueError, "ew_plan_for needs n, wg_size, "
                        "items >= 0");
        return NULL;
    }
    if (PyLong_Check(caps)) {
        long i = PyLong_AsLong(caps);
        if (i < 0 || i >= gr_device_count()) {
            PyErr_SetString(PyExc_ValueError, "no such device");
            return NULL;
        }
        d = gr_device_get((int)i);
    } else if (caps_parse(caps, &dev) != 0) {
        return NULL;
    }
    if (gr_plan_elementwise(d, (size_t)n, (size_t)wg, (size_t)items, &p)
        != 0) {
        PyErr_SetString(PyExc_ValueError, p.why);
        return NULL;
    }
    return Py_BuildValue("{s:s,s:n,s:n,s:n,s:n,s:s,s:s,s:s}", "kernel",
                         "gr_elementwise", "wg_size", (Py_ssize_t)p.wg,
                         "items", (Py_ssize_t)p.items, "groups",
                         (Py_ssize_t)p.groups, "global_size",
                         (Py_ssize_t)(p.groups * p.wg), "row", p.row, "why",
                         p.why, "device", d->name);
}

/* bykey_plan_for(caps, func, kdtype, vdtype, op, n, num_keys=0, heads=0,
 * descents=0, variant=None, deterministic=False, sorted=-1, wg_size=0,
 * items=0, sm=0, exact=False) -> by-key plan dict for synthetic device
 * caps. */
PyObject *py_bykey_plan_for(PyObject *self, PyObject *args,
                                   PyObject *kw)
{
    static char *kwl[] = {"caps", "func", "kdtype", "vdtype", "op", "n",
                          "num_keys", "heads", "descents", "variant",
                          "deterministic", "sorted", "wg_size", "items", "sm",
                          "exact", NULL};
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
            args, kw, "O!sO&O&On|nnnzpiinip", kwl, &PyDict_Type, &caps, &func,
            PyArray_DescrConverter, &kd, PyArray_DescrConverter, &vd, &opo,
            &n, &nk, &heads, &desc, &ov.variant, &ov.deterministic,
            &ov.sorted, &ov.wg_size, &items, &sm, &ov.exact)) {
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
PyObject *py_set_tuned(PyObject *self, PyObject *arg)
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

PyObject *py_size_class(PyObject *self, PyObject *arg)
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

PyObject *py_devices(PyObject *self, PyObject *noargs)
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

PyObject *py_current_index(PyObject *self, PyObject *noargs)
{
    return PyLong_FromLong(gr_current_index());
}

PyObject *py_device_pinned(PyObject *self, PyObject *noargs)
{
    return PyBool_FromLong(gr_device_pinned());
}

PyObject *py_get_device(PyObject *self, PyObject *noargs)
{
    gr_device *d = gr_current_device();
    return d ? device_dict(d) : NULL;
}

PyObject *py_set_device(PyObject *self, PyObject *arg)
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

PyObject *py_kernel_source(PyObject *self, PyObject *arg)
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
                 "reduce, scan, bykey, copy, segments, exact, elementwise)",
                 family);
    return NULL;
}

PyObject *py_cache_dir(PyObject *self, PyObject *args)
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

PyObject *py_stats(PyObject *self, PyObject *noargs)
{
    long m, dk, b;
    gr_programs_stats(&m, &dk, &b);
    return Py_BuildValue("{s:l, s:l, s:l}", "memory_hits", m, "disk_hits", dk,
                         "builds", b);
}

/* placement(mode=None) -> the mode ("auto" or "current"), set if given. */
PyObject *py_placement(PyObject *self, PyObject *args)
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
PyObject *py_rates(PyObject *self, PyObject *args)
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
PyObject *py_set_rates(PyObject *self, PyObject *args)
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
PyObject *py_split_rates(PyObject *self, PyObject *args)
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
 * host path's threads and their rates (place.c gr_host_par), after setting
 * those given: threads 0 is automatic; gbs {family: GB/s}, 0 the
 * model's default; measured=True marks rates as measured (tuned.json).
 * "counts": what the pool did so far (hostpar.h gr_par_counts). */
PyObject *py_host_threads(PyObject *self, PyObject *args,
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
PyObject *py_split_plan(PyObject *self, PyObject *args)
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
PyObject *py_device_index(PyObject *self, PyObject *arg)
{
    int dev = -1;
    if (dev_of_arg(arg, &dev) != 0) {
        return NULL;
    }
    return PyLong_FromLong(dev);
}

/* remeasure(on=None, half_life_s=None, reset=False) -> {on, half_life_s,
 * large_bytes, factors: [{side, family, bytes, factor, age_s, jumps,
 * calls, why}]}: placement's re-measure (place_remeasure.c), after
 * setting what is given. */
PyObject *py_remeasure(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"on", "half_life_s", "reset", NULL};
    int on = -1, reset = 0, on_now = 0;
    double half = -1.0;
    size_t large = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|idp", names, &on, &half,
                                     &reset)) {
        return NULL;
    }
    gr_remeasure_config(on, half, reset);
    gr_remeasure_get(&on_now, &half, &large);
    gr_remeasure_row rows[17 * GR_NRATES * 4];
    const int n = gr_remeasure_rows(rows, (int)(sizeof rows / sizeof *rows));
    PyObject *list = PyList_New(0);
    for (int i = 0; list != NULL && i < n; ++i) {
        const gr_remeasure_row *r = &rows[i];
        PyObject *o = Py_BuildValue(
            "{s:N, s:s, s:n, s:d, s:d, s:i, s:i, s:s}", "side",
            r->side < 0 ? PyUnicode_FromString("host")
                        : PyLong_FromLong(r->side),
            "family", rate_names[r->f], "bytes", (Py_ssize_t)r->bytes,
            "factor", r->factor, "age_s", r->age_s, "jumps", r->jumps,
            "calls", r->calls, "why", r->why);
        if (o == NULL || PyList_Append(list, o) != 0) {
            Py_CLEAR(list);
        }
        Py_XDECREF(o);
    }
    if (list == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:O, s:d, s:n, s:N}", "on",
                         on_now ? Py_True : Py_False, "half_life_s", half,
                         "large_bytes", (Py_ssize_t)large, "factors", list);
}

/* place_observe(seconds) -> True where it re-measured: the thread's last
 * placement (explain()'s, say) took that long (tests inject times). */
PyObject *py_place_observe(PyObject *self, PyObject *arg)
{
    const double s = PyFloat_AsDouble(arg);
    if (PyErr_Occurred()) {
        return NULL;
    }
    return PyBool_FromLong(gr_remeasure_observe(s * 1e9));
}
