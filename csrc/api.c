/*
 * gpured._core — the one Python face of every family (the api layer):
 * this file holds the module's init, its method table and its state; the
 * entry points live in the api_*.c files (api.h lists them).
 *
 * Each public function of gpured/ (sum, cumsum, sum_by_key, ...) is one
 * call into this layer with its arguments as the user gave them:
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
 * released.  mode (gr_mode): GR_RUN, GR_EXPLAIN (the plan as a dict),
 * GR_BENCH (reps timed runs: (result, [ns], plan)), GR_RUN_NANCHECK
 * (reductions) run and check nanargmin/nanargmax's indices for NaNs:
 * (result, None | False | True).
 * No Python object goes below this layer.
 */
#define GR_MODULE_MAIN
#include "api.h"

/* ------------------------------------------------------------ state */

PyObject *np_module;      /* numpy                                  */
PyObject *np_novalue;     /* numpy._NoValue                         */
PyObject *np_axis_error;  /* numpy.exceptions.AxisError             */
PyObject *np_true_divide; /* numpy.true_divide                      */
int mean_bool_axes = 0;   /* whether the installed NumPy's mean takes
                           * axis=True as 1                         */

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
    KW("ew_plan_for", py_ew_plan_for, "An elementwise plan (synthetic caps or a device)."),
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
    {"bin_index", py_bin_index, METH_VARARGS, "bin_index(a, edges, idx, uniform, lo, hi, denom): histogram bin indices on the device."},
    {"float_key", py_float_key, METH_VARARGS, "float_key(bits, key, expo, qnan): unique's order-preserving keys of float bits on the device."},
    {"sort_keys", py_sort_keys, METH_VARARGS, "sort_keys(keys, vals, max_key): stable radix sort of uint32 keys (and values) on the device."},
    {"elementwise", py_elementwise, METH_VARARGS, "elementwise(name, inputs, loop, out, wg_size=0, items=0): NumPy's ufuncs on Arrays."},
    {"custom_reduce", py_custom_reduce, METH_VARARGS,
     "custom_reduce(user, args, out, layout, types, knobs, mode): "
     "a user-defined reduction (gpured.ReductionKernel)."},
    {"custom_scan", py_custom_scan, METH_VARARGS,
     "custom_scan(user, x, out, layout, out_strides, types, exclusive, "
     "knobs, mode): a user-defined scan (gpured.ScanKernel)."},
    {"custom_variants", py_custom_variants, METH_NOARGS,
     "custom_variants() -> the variants of a user-defined reduction."},
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
    KW("remeasure", py_remeasure,
       "remeasure(on=None, half_life_s=None, reset=False) -> placement's "
       "re-measured factors and settings."),
    {"place_observe", py_place_observe, METH_O,
     "place_observe(seconds): the thread's last placement took that long."},
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
    {"_hold_device_lock", py_hold_device_lock, METH_VARARGS,
     "_hold_device_lock(device, ms): tests only; hold its lock ms ms."},
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
