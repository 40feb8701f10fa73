/*
 * api_results.c — the api layer's hallway of result objects: plan dicts
 * (explain, bench and the plan_for entry points), times lists, device
 * blocks wrapped as Arrays, uploads, host results put into `out`, NumPy
 * calls for what NumPy answers itself.
 */
#include "api.h"

/* ------------------------------------------------------- plan dicts */

/* explain()'s "placement_factor": the re-measured factor (1.0: none)
 * that priced the side the placement chose (place_remeasure.c), where
 * the placement model ran. */
static PyObject *add_factor(PyObject *dict)
{
    gr_place_note n;
    gr_place_note_get(&n);
    if (dict != NULL && n.valid && n.est0_ns > 0) {
        PyObject *k = PyFloat_FromDouble(n.est_ns / n.est0_ns);
        if (k == NULL ||
            PyDict_SetItemString(dict, "placement_factor", k) != 0) {
            Py_CLEAR(dict);
        }
        Py_XDECREF(k);
    }
    return dict;
}

/* What explain() says of a call the host path answers. */
PyObject *host_plan_dict(const gr_device *d, const gr_result *r)
{
    return add_factor(Py_BuildValue("{s:s, s:s, s:s, s:s, s:i, s:s, s:n, s:n, s:s}",
                         "placement", "host", "placement_why", r->place_why,
                         "variant", "host", "kernel",
                         "host.c (no OpenCL)", "passes", 0, "why",
                         r->place_why, "segments", (Py_ssize_t)r->lay.M,
                         "segment_length", (Py_ssize_t)r->lay.L,
                         "device", "host"));
}

PyObject *add_placement(PyObject *dict, const gr_result *r)
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
    return add_factor(dict);
}

/* What explain() says of an exact sum on a device. */
static PyObject *exact_plan_dict(const gr_device *d, const gr_result *r)
{
    const gr_exact_plan *p = &r->exact;
    return add_placement(Py_BuildValue(
        "{s:s, s:s, s:i, s:i, s:n, s:i, s:s, s:s, s:s, s:n, s:n, s:O}",
        "variant", "exact", "kernel", "gr_exact_part", "wg_size", p->wg,
        "items", p->k, "groups", (Py_ssize_t)p->groups, "passes", 2, "why",
        p->why, "row", p->row ? p->row : "", "device", d->name, "segments",
        (Py_ssize_t)r->lay.M, "segment_length", (Py_ssize_t)r->lay.L,
        "exact", Py_True), r);
}

PyObject *reduce_plan_dict(const gr_device *d, const gr_result *r)
{
    const gr_plan *p = &r->plan.reduce;
    if (r->where == 1) {
        return host_plan_dict(d, r);
    }
    if (r->is_exact) {
        return exact_plan_dict(d, r);
    }
    return add_placement(Py_BuildValue(
        "{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:O, s:n, s:n, s:i, s:i, s:s, "
        "s:s, s:s, s:O, s:n, s:n, s:n, s:n, s:O, s:O, s:s}",
        "variant", p->variant, "kernel",
        p->kind == GR_K_GROUP ? "gr_reduce_group" : "gr_reduce_items",
        "wg_size", p->wg, "vw", p->vw, "ilp", p->ilp, "lanes", p->lanes,
        "viters", p->viters,
        "contiguous_per_work_item", p->load == 1 ? Py_True : Py_False,
        "groups", (Py_ssize_t)p->parts, "chunk", (Py_ssize_t)p->chunk,
        "passes", p->passes, "wg_size_pass2", p->wg2, "accumulator",
        r->acc.a_cl, "why", p->why, "device", d->name, "compensated",
        r->acc.comp ? Py_True : Py_False, "segments", (Py_ssize_t)r->lay.M,
        "segment_length", (Py_ssize_t)r->lay.L, "seg_stride",
        (Py_ssize_t)r->lay.seg_stride, "elem_stride",
        (Py_ssize_t)r->lay.elem_stride, "tuned",
        p->tuned ? Py_True : Py_False, "copied",
        r->copied ? Py_True : Py_False, "row", p->row ? p->row : ""), r);
}

PyObject *scan_plan_dict(const gr_device *d, const gr_scan_plan *p,
                                const gr_accum *acc, const gr_layout *lay)
{
    static const char *const kinds[] = {"row_per_item", "chunks",
                                        "reduce_then_scan", "lookback"};
    static const char *const locals[] = {"none", "naive", "blelloch",
                                         "workgroup", "subgroup"};
    return Py_BuildValue(
        "{s:s, s:s, s:s, s:i, s:i, s:i, s:n, s:n, s:n, s:i, s:i, s:s, s:s, "
        "s:O, s:s, s:n, s:n, s:n, s:n, s:s}",
        "variant", p->variant, "kernel", kinds[p->kind], "combine",
        locals[p->local], "wg_size", p->wg, "items", p->items, "ilp", p->ilp,
        "groups", (Py_ssize_t)p->parts, "chunk", (Py_ssize_t)p->chunk,
        "tiles", (Py_ssize_t)p->tiles, "passes",
        p->kind == GR_SK_RTS ? 3 : 1, "spins", p->spin, "accumulator",
        acc->a_cl, "why", p->why, "compensated",
        acc->comp ? Py_True : Py_False, "device", d->name, "segments",
        (Py_ssize_t)lay->M, "segment_length", (Py_ssize_t)lay->L,
        "seg_stride", (Py_ssize_t)lay->seg_stride, "elem_stride",
        (Py_ssize_t)lay->elem_stride, "row", p->row ? p->row : "");
}

PyObject *bk_plan_dict(const gr_bk_plan *p, const gr_bk_facts *fx,
                              const gr_device *d, const char *func)
{
    return Py_BuildValue(
        "{s:s, s:s, s:i, s:n, s:n, s:n, s:O, s:O, s:s, s:s, s:n, s:K, s:K, "
        "s:n, s:O, s:s, s:i}",
        "function", func, "variant", p->name ? p->name : "", "wg_size", p->wg,
        "items", (Py_ssize_t)p->items, "groups", (Py_ssize_t)p->groups,
        "parts", (Py_ssize_t)p->parts, "ptx", p->ptx ? Py_True : Py_False,
        "match_any", p->match ? Py_True : Py_False, "why", p->why, "device",
        d->name, "n", (Py_ssize_t)fx->n, "heads",
        (unsigned long long)fx->heads, "descents",
        (unsigned long long)fx->descents, "num_keys",
        (Py_ssize_t)fx->num_keys, "measured",
        fx->unmeasured ? Py_False : Py_True, "row", p->row ? p->row : "",
        "local_copies", p->lcopies);
}

/* ---------------------------------------------------- result objects */

/* Each timed run's device time (ns) as a list. */
PyObject *times_list(const double *ns, int reps)
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

/* timeit's (result, times, plan): takes the references to value and
 * plan (NULL: an error is set). */
PyObject *timed_result(PyObject *value, const double *ns, int reps,
                              PyObject *plan)
{
    PyObject *times = plan ? times_list(ns, reps) : NULL;
    PyObject *r = times ? Py_BuildValue("(OOO)", value, times, plan) : NULL;
    Py_XDECREF(times);
    Py_XDECREF(plan);
    Py_DECREF(value);
    return r;
}

/* Call numpy.<name>(*args, **kw) (empty inputs, subclasses). */
PyObject *numpy_call(const char *name, PyObject *args, PyObject *kw)
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
PyObject *wrap_block(gr_block *blk, gr_dtype t, const npy_intp *shape,
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
int device_copy_into(gr_array *src, gr_array *dst)
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
PyObject *host_result_to(PyObject *r, PyObject *out, int device_res,
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

/* A device array of shape in the memory order of `like` (NumPy's
 * empty_like(order="K")), or C order when like is NULL. */
PyObject *device_empty(int dev, gr_dtype t, int nd,
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

PyObject *upload(PyArrayObject *host, int dev)
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
    if (gr_storage_ok(PyArray_DESCR(c), "array") != 0) {
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
