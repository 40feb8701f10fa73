/*
 * api.h — the api layer's own header: what its files share among
 * themselves (included by csrc/api*.c only).
 *
 *   api.c           module init, method table, module state
 *   api_args.c      hallway: NumPy's argument rules (the function table,
 *                   axes, dtypes, flags, knobs, out= checks)
 *   api_calls.c     hallway: operands and runs (host memory notes,
 *                   PyOpenCL operands, request_begin, run_request, work
 *                   an interrupt left running) and the phases several
 *                   families share
 *   api_results.c   hallway: result objects (device blocks as Arrays,
 *                   uploads, host results into `out`) and plan dicts
 *   api_reduce.c    reductions          api_scan.c      scans
 *   api_segments.c  reduceat            api_bykey.c     by-key family
 *   api_explain.c   variants, plan_for, devices, rates, placement
 *   api_memory.c    Buffer / Array entry points, transfers, the pool
 *   api_interop.c   PyOpenCL, DLPack, raw handles, use_queue
 *
 * Family files use the hallway files, never one another; nothing here
 * calls back up into Python's face (the gpured package).
 */
#ifndef GPURED_API_H
#define GPURED_API_H

#include "gpured.h"
#include "array.h"

#include <numpy/arrayobject.h>
#include <string.h>
#include <float.h>
#include <math.h>

/* What the api files share stays inside the extension (not exported from
 * _core's shared object, nor interposable by another library's names). */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* ------------------------------------------------------- module state */

extern PyObject *np_module;      /* numpy                                  */
extern PyObject *np_novalue;     /* numpy._NoValue                         */
extern PyObject *np_axis_error;  /* numpy.exceptions.AxisError             */
extern PyObject *np_true_divide; /* numpy.true_divide                      */
extern int mean_bool_axes;       /* the installed NumPy's mean takes
                                  * axis=True as 1                         */

/* ------------------------------------------------------ function table */

/* NumPy's result dtype of a function (dtype= aside). */
typedef enum {
    RT_INPUT,   /* the input's (min, max, cummin, ...)                    */
    RT_SUM,     /* add/multiply's accumulator (sum_dtype)                 */
    RT_MEAN,    /* mean's: the input's if float, else float64             */
    RT_BOOL,    /* all, any                                               */
    RT_INDEX    /* argmin, argmax: int64                                  */
} rt_rule;

typedef struct {
    const char *name;    /* public name                                   */
    gr_func func;
    gr_family fam;
    gr_op op;            /* core operator                                 */
    const char *ufunc;   /* NumPy's name in messages                      */
    int nan;             /* nan* form: NaN elements read as 0 (sums) or 1
                          * (products), fused into the kernels' loads    */
    int count;           /* gr_count: GR_CNT_NONZERO count_nonzero, a sum
                          * of (element != 0); GR_CNT_VALID _count_valid,
                          * a sum of (element == element), nanmean's
                          * divisor                                       */
    int var;             /* gr_var_kind: GR_VK_VAR var, GR_VK_STD std
                          * (mean's dtypes; `initial` is ddof);
                          * GR_VK_NANMEAN nanmean (a sum and its count);
                          * GR_VK_RATIO average(weights)                  */
    int ptp;             /* ptp: one max whose state carries the minimum  */
    /* the rules of NumPy's face, by function */
    rt_rule rt;          /* result dtype                                  */
    int is_arg;          /* argmin/argmax: keepdims by truth value, int64
                          * results, one axis or all                      */
    int is_mean;         /* NumPy's _mean: its axis checks, float results,
                          * a division                                    */
    int dtype_ok;        /* takes dtype= (sum, prod, mean & co.)          */
    int out_kind;        /* with an out= (no dtype=) computes in the
                          * promotion of the input's dtype and out's,
                          * NumPy's loop (sum, prod, min, max)            */
    int minmax;          /* compares in the result dtype (a host input is
                          * cast first)                                   */
    const char *init_uf; /* initial= converted by this ufunc's reduce
                          * (NULL: initial refused)                       */
    const char *accum_uf;/* scans NumPy answers through this ufunc's
                          * accumulate (NULL: numpy.<name>)               */
    gr_bk_func bkf;      /* by-key: the function dispatch runs            */
} fdef;

/* The knobs of a call (variant, wg_size, ..., device). */
typedef struct {
    gr_knobs kn;
    PyObject *variant_obj;   /* borrowed from the dict                    */
    int device;              /* -1: not given                             */
    int exact;               /* exact=True: sum/mean/nansum/nanmean       */
} knobs;

/* Positional fastcall arguments: args[i] or NULL past nargs. */
#define ARGN(i) ((i) < nargs ? args[i] : NULL)

/* One call of a family's entry point: the request, what the call owns
 * (released by call_clear at its one exit) and what its phases found. */
typedef struct {
    const fdef *f;
    int mode;                /* gr_mode (GR_RUN_NANCHECK included)        */
    int reps;                /* GR_BENCH: timed runs                      */
    knobs k;
    gr_request req;
    gr_result res;
    gr_device *d;            /* the request's device                      */
    int dev;                 /* its index (out= is checked against it)    */
    int device_in;           /* the input is a device array               */
    PyObject *keep;          /* the host input, kept alive (owned)        */
    PyObject *tmp;           /* a temporary result (owned)                */
    double *ns;              /* GR_BENCH: each run's device time (owned)  */
    int rt_i;                /* dtype= as a gr_dtype (-2: not given)      */
    gr_dtype rt;             /* the result dtype                          */
    npy_intp shape[GR_MAXDIMS]; /* the result's shape                     */
    int rnd;                 /* and its dimensions                        */
    PyObject *result;        /* what the entry point returns              */
} api_call;

/* ---------------------------------------------------------- api_args.c */
int is_none(PyObject *o);
const fdef *fdef_of(PyObject *name);
void list_add(PyObject **list, const char *text);
int no_value(PyObject *o);
int index_flag(PyObject *o, int *v);
int flag_of(PyObject *o, const char *what, int *v);
int axis_one(PyObject *o, int ndim, int *ax);
int axes_of(PyObject *axis, int ndim, int tuple_ok, int strict0,
            int bools_are_axes, int mean_call, uint64_t *mask);
gr_dtype sum_dtype(gr_dtype t);
int dtype_arg_ex(PyObject *o, int strict, int *t);
int dtype_arg(PyObject *o, int *t);
int out_dtype_rule(PyObject *out, gr_dtype in_t, gr_dtype *rt);
int out_gr_dtype(PyObject *out);
int fp64_check(const gr_device *d, gr_dtype t);
int knobs_of(PyObject *kw, const char *allowed, const char *fname,
             knobs *k);
int device_arg(PyObject *v, int *dev);
int dev_of_arg(PyObject *o, int *dev);
int out_check(PyObject *out, const npy_intp *shape, int nd,
              const char *opname, int *dev);
int out_shape_check(PyObject *out, const npy_intp *shape, int nd,
                    const char *wrong_shape);
int mode_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t at,
              int *mode, int *reps);
const fdef *shell_entry(PyObject *const *args, Py_ssize_t nargs,
                        Py_ssize_t lo, Py_ssize_t hi, const char *usage,
                        gr_family fam, const char *what, int *mode,
                        int *reps);
int bk_op_of(const char *func, PyObject *op, gr_bk_types *ty);

/* --------------------------------------------------------- api_calls.c */
void pending_add(cl_event ev, PyObject *a, PyObject *b, PyObject *c);
int signals_pending(void *ctx);
int forked_check(void);
void host_note(PyArrayObject *arr);
int operand_of(PyObject *obj, gr_operand *o, PyObject **keep, int *dev,
               const char *what);
int is_pyopencl_array(PyObject *obj);
int pyopencl_operand(PyObject *obj, gr_operand *o, PyObject **keep,
                     int *dev, const char *what);
size_t operand_size(const gr_operand *o);
int default_device(const knobs *k);
int run_request(gr_request *req, gr_result *res);
gr_device *request_begin(const fdef *f, PyObject *a, PyObject *out,
                         const knobs *k, int mode, gr_request *req,
                         PyObject **keep);
int bench_setup(gr_request *req, int mode, int reps, double **ns);
/* the phases of an api_call that families share */
void call_init(api_call *c, const fdef *f, int mode, int reps);
void call_clear(api_call *c);
int call_begin(api_call *c, PyObject *a, PyObject *out);
int call_fp64(api_call *c);
int call_empty_mode(api_call *c, const char *family);
int out_operand(PyObject *out, gr_operand *o);
int call_run(api_call *c, int hold, PyObject *alive);
PyObject *call_timed(api_call *c, PyObject *value);

/* ------------------------------------------------------- api_results.c */
PyObject *host_plan_dict(const gr_device *d, const gr_result *r);
PyObject *add_placement(PyObject *dict, const gr_result *r);
PyObject *reduce_plan_dict(const gr_device *d, const gr_result *r);
PyObject *scan_plan_dict(const gr_device *d, const gr_scan_plan *p,
                         const gr_accum *acc, const gr_layout *lay);
PyObject *bk_plan_dict(const gr_bk_plan *p, const gr_bk_facts *fx,
                       const gr_device *d, const char *func);
PyObject *times_list(const double *ns, int reps);
PyObject *timed_result(PyObject *value, const double *ns, int reps,
                       PyObject *plan);
PyObject *numpy_call(const char *name, PyObject *args, PyObject *kw);
PyObject *wrap_block(gr_block *blk, gr_dtype t, const npy_intp *shape,
                     int nd);
int device_copy_into(gr_array *src, gr_array *dst);
PyObject *host_result_to(PyObject *r, PyObject *out, int device_res,
                         int dev);
PyObject *device_empty(int dev, gr_dtype t, int nd,
                       const npy_intp *shape, const gr_operand *like);
PyObject *upload(PyArrayObject *host, int dev);

/* ------------------------------------- entry points (api.c's table) */
/* api_reduce.c, api_scan.c, api_segments.c, api_bykey.c */
PyObject *py_reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *py_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *py_reduceat(PyObject *self, PyObject *const *args,
                      Py_ssize_t nargs);
PyObject *py_bykey(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* api_explain.c */
PyObject *py_variants(PyObject *self, PyObject *args);
PyObject *py_bykey_variants(PyObject *self, PyObject *args);
PyObject *py_plan_for(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_scan_plan_for(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_bykey_plan_for(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_ew_plan_for(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_set_tuned(PyObject *self, PyObject *arg);
PyObject *py_size_class(PyObject *self, PyObject *arg);
PyObject *py_devices(PyObject *self, PyObject *noargs);
PyObject *py_current_index(PyObject *self, PyObject *noargs);
PyObject *py_device_pinned(PyObject *self, PyObject *noargs);
PyObject *py_get_device(PyObject *self, PyObject *noargs);
PyObject *py_set_device(PyObject *self, PyObject *arg);
PyObject *py_kernel_source(PyObject *self, PyObject *arg);
PyObject *py_cache_dir(PyObject *self, PyObject *args);
PyObject *py_stats(PyObject *self, PyObject *noargs);
PyObject *py_placement(PyObject *self, PyObject *args);
PyObject *py_rates(PyObject *self, PyObject *args);
PyObject *py_set_rates(PyObject *self, PyObject *args);
PyObject *py_split_rates(PyObject *self, PyObject *args);
PyObject *py_host_threads(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_split_plan(PyObject *self, PyObject *args);
PyObject *py_remeasure(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_place_observe(PyObject *self, PyObject *arg);
PyObject *py_device_index(PyObject *self, PyObject *arg);
/* api_memory.c */
PyObject *py_buffer_alloc(PyObject *self, PyObject *args);
PyObject *py_buffer_write(PyObject *self, PyObject *args);
PyObject *py_buffer_read(PyObject *self, PyObject *args);
PyObject *py_buffer_fill(PyObject *self, PyObject *args);
PyObject *py_buffer_copy(PyObject *self, PyObject *args);
PyObject *py_device_copy(PyObject *self, PyObject *args);
PyObject *py_elementwise(PyObject *self, PyObject *args);
PyObject *py_bin_index(PyObject *self, PyObject *args);
PyObject *py_sort_keys(PyObject *self, PyObject *args);
PyObject *py_float_key(PyObject *self, PyObject *args);
PyObject *py_custom_reduce(PyObject *self, PyObject *args);
PyObject *py_custom_variants(PyObject *self, PyObject *unused);
PyObject *py_custom_scan(PyObject *self, PyObject *args);
PyObject *py_to_device(PyObject *self, PyObject *args);
PyObject *py_get_many(PyObject *self, PyObject *arg);
PyObject *py_get(PyObject *self, PyObject *arg);
PyObject *py_finish(PyObject *self, PyObject *args);
PyObject *py_copy_bandwidth(PyObject *self, PyObject *args);
PyObject *py_memory_info(PyObject *self, PyObject *args);
PyObject *py_empty_cache(PyObject *self, PyObject *args);
PyObject *py_set_memory_limit(PyObject *self, PyObject *args);
PyObject *py_set_staging(PyObject *self, PyObject *args);
PyObject *py_staging(PyObject *self, PyObject *noargs);
PyObject *py_gate(PyObject *self, PyObject *args);
PyObject *py_gate_open(PyObject *self, PyObject *cap);
PyObject *py_hold_device_lock(PyObject *self, PyObject *args);
PyObject *py_busy(PyObject *self, PyObject *args);
PyObject *py_set_array_class(PyObject *self, PyObject *cls);
/* api_interop.c */
PyObject *py_use_queue(PyObject *self, PyObject *arg);
PyObject *py_handles(PyObject *self, PyObject *args);
PyObject *py_export(PyObject *self, PyObject *arg);
PyObject *py_from_pyopencl(PyObject *self, PyObject *obj);
PyObject *py_from_dlpack(PyObject *self, PyObject *args);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
