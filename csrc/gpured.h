/*
 * gpured — the one header shared by the C files of the extension.
 *
 * Layers (data flows top to bottom, never back up):
 *   module.c    Python C API: arguments, NumPy arrays, exceptions, the GIL
 *   plan.c      variant selection: pure function of (op, types, shape, device)
 *   reduce.c    enqueue the passes a plan describes
 *   buffers.c   host <-> device transfer (zero-copy on CPU devices)
 *   programs.c  program cache, in memory and on disk
 *   runtime.c   platforms, devices, capabilities, contexts, queues, errors
 *
 * Code that runs with the GIL released never touches a Python object: it
 * reports failure through a gr_status, which runtime.c turns into a Python
 * exception once the GIL is held again (gr_raise).
 */
#ifndef GPURED_H
#define GPURED_H

/* One NumPy C-API table for the extension: module.c imports it (it
 * defines GR_MODULE_MAIN), the other files borrow it. */
#ifndef NPY_NO_DEPRECATED_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#endif
#ifndef PY_ARRAY_UNIQUE_SYMBOL
#define PY_ARRAY_UNIQUE_SYMBOL gr_ARRAY_API
#ifndef GR_MODULE_MAIN
#define NO_IMPORT_ARRAY
#endif
#endif

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ types */

/* Element types gpured knows; one row each in gr_dtypes[] (plan.c). */
typedef enum {
    GR_BOOL, GR_INT8, GR_UINT8, GR_INT16, GR_UINT16, GR_INT32, GR_UINT32,
    GR_INT64, GR_UINT64, GR_FLOAT32, GR_FLOAT64, GR_NDTYPES
} gr_dtype;

typedef struct {
    const char *name;    /* NumPy's name                                   */
    const char *cl;      /* OpenCL C storage type                          */
    const char *cl_uns;  /* unsigned twin (wrapping arithmetic)            */
    const char *cl_mask; /* signed integer of the same size (masks)        */
    const char *minv;    /* lowest value / -inf, as OpenCL C text          */
    const char *maxv;    /* highest value / +inf                           */
    int size;
    int is_float;
    int is_signed;
} gr_dtype_info;

extern const gr_dtype_info gr_dtypes[GR_NDTYPES];

/* Reduction operators (same numbering as GR_OP_* in kernels/common.cl). */
typedef enum {
    GR_ADD, GR_MUL, GR_MIN, GR_MAX, GR_ARGMIN, GR_ARGMAX, GR_ALL, GR_ANY,
    GR_NOPS
} gr_op;

extern const char *const gr_op_names[GR_NOPS];

/* ---------------------------------------------------------------- devices */

typedef struct {
    cl_platform_id platform;
    cl_device_id id;
    int pidx, didx;
    char name[256];
    char platform_name[256];
    char vendor[256];
    char version[128];         /* CL_DEVICE_VERSION                        */
    char driver[128];          /* CL_DRIVER_VERSION                        */
    char platform_version[128];
    char c_version[128];       /* CL_DEVICE_OPENCL_C_VERSION               */
    cl_device_type type;
    cl_uint compute_units;
    size_t max_wg;
    cl_ulong local_mem;
    cl_ulong global_mem;
    cl_ulong max_alloc;
    int fp64;
    int atomics64;
    int subgroups;
    int wg_collectives;
    char c_std[16];            /* -cl-std= for OpenCL 2.0/3.0 features      */
    int nvidia_ptx;
    int is_gpu;
    /* Created lazily by gr_device_open(). */
    cl_context ctx;
    cl_command_queue queue;
} gr_device;

/* Failure of code running without the GIL: which call, which error. */
typedef struct {
    const char *call;  /* NULL: no error                                   */
    cl_int err;
    char *log;         /* build log (malloc'd) or NULL                     */
    char msg[256];     /* non-OpenCL failures (out of host memory, ...)    */
} gr_status;

/* Record a failed OpenCL call and jump to the function's `fail:` label.
 * The call's name is the text of the expression up to its '('. */
#define GR_CL_CHECK_AS(st, name, expr)                                       \
    do {                                                                     \
        cl_int e_ = (expr);                                                  \
        if (e_ != CL_SUCCESS) {                                              \
            (st)->call = (name);                                             \
            (st)->err = e_;                                                  \
            goto fail;                                                       \
        }                                                                    \
    } while (0)
#define GR_CL_CHECK(st, expr) GR_CL_CHECK_AS(st, #expr, expr)

/* runtime.c */
extern PyObject *gr_OpenCLError;
extern PyObject *gr_VariantUnavailable;
int gr_runtime_init(void);                 /* -1 with exception set        */
int gr_device_count(void);
gr_device *gr_device_get(int i);
gr_device *gr_current_device(void);        /* NULL with exception set      */
int gr_set_device(const char *spec);       /* -1 with exception set        */
int gr_current_index(void);
int gr_device_open(gr_device *d, gr_status *st); /* no GIL needed          */
const char *gr_cl_error_name(cl_int err);
void gr_raise(const gr_status *st);        /* needs the GIL; frees st->log */
void gr_status_fail(gr_status *st, const char *fmt, ...);
void gr_lock(void);                        /* serialises device work       */
void gr_unlock(void);

/* programs.c */
typedef struct gr_program gr_program;
/* Returns the built program for (device, source); NULL with st set. */
gr_program *gr_program_get(gr_device *d, const char *source,
                           const char *options, gr_status *st);
cl_kernel gr_program_kernel(gr_program *p, const char *name, gr_status *st);
void gr_programs_set_cache_dir(const char *dir);
const char *gr_programs_cache_dir(void);
extern const char *const gr_kernel_families[];   /* NULL-terminated      */
const char *gr_kernel_text(const char *family);  /* NULL if unknown       */
char *gr_program_source(const char *family, const char *defines); /* malloc */
void gr_programs_stats(long *mem_hits, long *disk_hits, long *builds);
/* The kernel `name` of family + defines built with options, found by that
 * key without rebuilding the program text (fast path for repeated calls).
 * The kernel is borrowed: programs live as long as the process. */
cl_kernel gr_kernel_get(gr_device *d, const char *family, const char *defines,
                        const char *options, const char *name, gr_status *st);

/* ------------------------------------------------------------------ plans */

/* How a reduction's elements sit in memory, in elements (not bytes). */
typedef struct {
    size_t M;            /* segments (outputs)                              */
    size_t L;            /* elements per segment                            */
    ptrdiff_t seg_stride;
    ptrdiff_t elem_stride;
} gr_layout;

typedef enum { GR_K_GROUP, GR_K_ITEMS } gr_kernel_kind;

/* User overrides; 0 means "choose". */
typedef struct {
    const char *variant;  /* NULL or "auto"                                 */
    int wg_size;
    int groups;           /* parts per segment in the first pass           */
    int items;            /* elements per work-item (sets groups)          */
    int ilp;
    int vw;
} gr_overrides;

typedef struct {
    const char *variant;  /* name shown to users                           */
    gr_kernel_kind kind;
    int load;             /* GR_LOAD_* of kernels/reduce.cl                 */
    int combine;          /* GR_COMBINE_* of kernels/common.cl              */
    int sg;               /* 0 none, 1 NVIDIA PTX, 2 khr sub-groups         */
    int sg_native;        /* khr: sub_group_reduce_* for this op            */
    int atomic;           /* groups merge into the result by CAS            */
    int tuned;            /* chosen from gpured.tune()'s table              */
    int wg;
    int vw;
    int ilp;
    size_t parts;         /* first-pass chunks per segment                 */
    size_t chunk;         /* elements per chunk                            */
    int passes;
    int wg2;              /* work-group size of pass 2                     */
    char why[256];
} gr_plan;

/* Accumulator choice for (op, input, result) on a device. */
typedef struct {
    gr_dtype t, r;
    const char *a_cl;     /* accumulator OpenCL type                        */
    const char *a_min, *a_max;
    int a_size;
    int cvt;              /* GR_CVT_* of kernels/common.cl                 */
    int comp;
    int x_size;           /* bytes of the auxiliary state, 0 if none       */
} gr_accum;

int gr_accum_for(const gr_device *d, gr_op op, gr_dtype t, gr_dtype r,
                 gr_accum *acc, char *err, size_t errlen);
/* Pure: 0 on success, -1 with a message in plan->why (bad knob/variant),
 * -2 when the variant is unavailable on this device. */
int gr_plan_reduce(const gr_device *d, gr_op op, const gr_accum *acc,
                   const gr_layout *lay, const gr_overrides *ov,
                   gr_plan *plan);
const char *const *gr_reduce_variants(void);
int gr_variant_available(const gr_device *d, gr_op op, const gr_accum *acc,
                         const char *name, char *why, size_t n);

/* gpured.tune()'s winners: auto uses them for full reductions. */
typedef struct {
    char device[256];
    gr_op op;
    gr_dtype t;
    int size_class;       /* floor(log2(input bytes))                       */
    char variant[32];
    int wg_size, ilp, vw, groups;
} gr_tuned;
int gr_size_class(size_t nbytes);
void gr_tuned_set(const gr_tuned *entries, int n);

/* --------------------------------------------------------------- reduce.c */

typedef struct {
    double first_ns;     /* device time of each pass (profiling events)     */
    double second_ns;
} gr_timing;

/* A buffer holding elements [base, base + len) of the input.  One piece
 * holds the whole layout; several pieces split one segment (M == 1) into
 * runs of whole plan chunks, for inputs larger than one buffer may be. */
typedef struct {
    cl_mem mem;
    size_t base;
    size_t len;
} gr_piece;

/* Pieces produced on demand (streamed from host memory, stream.c): next()
 * fills piece i's buffer and an event it is ready at (or NULL); done() gets
 * the event of the last command that reads it (the callee takes it). */
typedef struct {
    int (*next)(void *ctx, int i, gr_piece *piece, cl_event *ready,
                gr_status *st);
    void (*done)(void *ctx, int i, cl_event used);
    void *ctx;
} gr_source;

/* Where results go: host memory (mem NULL; the call blocks until they are
 * there) or a device buffer from element `off` on (the call returns once
 * the work is enqueued; the in-order queue orders later readers). */
typedef struct {
    void *host;
    cl_mem mem;
    size_t off;
} gr_output;

/* Runs a planned reduction without the GIL: M results of the result type
 * to `out`.  src may be NULL (the pieces' buffers are given). */
int gr_reduce_run(gr_device *d, gr_op op, const gr_accum *acc,
                  const gr_layout *lay, const gr_plan *plan,
                  const gr_piece *pieces, int npieces, const gr_source *src,
                  const gr_output *out, gr_timing *timing, gr_status *st);
size_t gr_result_size(gr_op op, const gr_accum *acc);

/* -------------------------------------------------------------- buffers.c */

typedef struct {
    cl_mem mem;
    size_t base;       /* offset of the first element, in elements          */
    int zero_copy;
} gr_input;

/* Makes the host bytes [ptr, ptr + nbytes) readable by the device. */
int gr_input_from_host(gr_device *d, const void *ptr, size_t nbytes,
                       size_t itemsize, gr_input *inp, gr_status *st);
void gr_input_release(gr_input *inp);

/* ---------------------------------------------------------------- array.c */

/* _core.Buffer: one cl_mem on one device (gpured.Array's storage). */
typedef struct {
    PyObject_HEAD
    cl_mem mem;      /* NULL once released                                 */
    int dev;         /* index for gr_device_get()                          */
    Py_ssize_t nbytes;
} gr_buffer;
extern PyTypeObject gr_BufferType;
/* The live buffer of obj and its device; NULL with ValueError (released)
 * or TypeError (not a Buffer) set.  GIL held. */
gr_buffer *gr_buffer_check(PyObject *obj, gr_device **dev);
/* 0 if a and b are one device, else -1 with ValueError ("arrays on two
 * devices").  GIL held. */
int gr_same_device(const gr_device *a, const gr_device *b);
/* A new Buffer of nbytes on device index di; NULL with exception. */
PyObject *gr_buffer_new(int di, size_t nbytes);
/* Enqueue dst[doff + i] = (t)src[soff + i] for i < n (kernels/copy.cl),
 * or (t)(src / div) when div != 0.  No GIL; gr_lock held. */
int gr_copy_enqueue(gr_device *d, cl_mem src, gr_dtype s, size_t soff,
                    cl_mem dst, gr_dtype t, size_t doff, size_t n, double div,
                    gr_status *st);

/* --------------------------------------------------------------- stream.c */

/* Staging settings (gpured.set_staging). */
typedef struct {
    size_t chunk;      /* bytes per pinned buffer                          */
    int nbuf;          /* pinned buffers (and device chunks)               */
    size_t min_bytes;  /* smaller transfers take the plain path            */
    int force;         /* stream on CPU devices too (tests)                */
    int threads;       /* memcpy threads, 0: automatic                     */
} gr_stream_cfg;
void gr_stream_get_cfg(gr_stream_cfg *c, long *streams, long *chunks);
void gr_stream_set_cfg(const gr_stream_cfg *c);   /* gr_lock held         */
int gr_stream_wanted(const gr_device *d, size_t nbytes);
size_t gr_stream_chunk_elems(size_t itemsize);

/* Host -> device write of n bytes into mem at off; on GPUs large writes
 * stream through the pinned staging pool.  No GIL; gr_lock held. */
int gr_stream_write(gr_device *d, cl_mem mem, size_t off, const void *ptr,
                    size_t n, gr_status *st);

/* A gr_source streaming `total` elements from host memory in chunks of
 * gr_stream_chunk_elems(); *npieces is their number.  End it with
 * gr_stream_source_end (waits for the device, frees).  gr_lock held. */
typedef struct gr_stream_src gr_stream_src;
gr_stream_src *gr_stream_source(gr_device *d, const void *host,
                                size_t itemsize, size_t total, gr_source *src,
                                int *npieces, gr_status *st);
int gr_stream_source_end(gr_stream_src *s, gr_status *st);

/* Chunked transfers both ways through the pool (scans): the pool's chunk
 * bytes and slot count; gr_stream_upload stages host bytes through slot's
 * pinned buffer into (mem, off) after `after` (may be NULL), *done is
 * borrowed (valid until the slot's next upload); gr_stream_download reads
 * (mem, off, n) into slot's pinned result buffer on the compute queue (*done
 * is the caller's: gr_stream_drain waits for and releases it, then copies
 * the bytes to dst).  gr_stream_idle waits for every upload.  gr_lock held. */
typedef struct gr_stream_pool gr_stream_pool;
gr_stream_pool *gr_stream_pool_get(gr_device *d, size_t *chunk, int *nbuf,
                                   gr_status *st);
int gr_stream_upload(gr_stream_pool *p, int slot, const void *src, size_t n,
                     cl_mem mem, size_t off, cl_event after, cl_event *done,
                     gr_status *st);
int gr_stream_download(gr_stream_pool *p, gr_device *d, int slot, cl_mem mem,
                       size_t off, size_t n, cl_event *done, gr_status *st);
int gr_stream_drain(gr_stream_pool *p, int slot, cl_event done, void *dst,
                    size_t n, gr_status *st);
int gr_stream_idle(gr_stream_pool *p, gr_status *st);

/* ------------------------------------------------------------------ scans
 * (scan_plan.c: pure plan; scan.c: enqueue, host shell, _core entry points)
 * A scan runs along the rows of an M x L layout (gr_layout: elements,
 * not bytes), each row independently; the output has its own strides. */

typedef enum {
    GR_SK_ROW_ITEMS,   /* one work-item per row, sequential               */
    GR_SK_CHUNKS,      /* one work-group per row (parts == 1) or per chunk */
    GR_SK_RTS,         /* reduce_then_scan: reduce, scan partials, scan    */
    GR_SK_LOOKBACK     /* decoupled look-back, single pass                 */
} gr_scan_kind;

typedef struct {
    const char *variant;  /* NULL or "auto"                                 */
    int wg_size, items, groups, ilp;
    int spins;            /* -1: default                                    */
} gr_scan_overrides;

typedef struct {
    const char *variant;
    gr_scan_kind kind;
    int local;            /* GR_LOCAL of kernels/scan.cl (0: none)          */
    int sg;               /* 0 none, 1 NVIDIA PTX, 2 khr sub-groups         */
    int wg, items, ilp;
    int cpu_tile;         /* look-back tile = one work-item's run          */
    int spin;             /* polls before the look-back fallback           */
    size_t parts, chunk;  /* CHUNKS / RTS: chunks per row, elements each    */
    size_t tiles;         /* LOOKBACK: tiles per row                       */
    char why[256];
} gr_scan_plan;

int gr_scan_accum(const gr_device *d, gr_op op, gr_dtype t, gr_dtype r,
                  gr_accum *acc, char *err, size_t errlen);
/* Pure: 0, or -1 (bad knob, message in why), -2 (variant unavailable). */
int gr_plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                 const gr_layout *lay, int out_contig,
                 const gr_scan_overrides *ov, gr_scan_plan *plan);
const char *const *gr_scan_variants(void);
int gr_scan_variant_available(const gr_device *d, gr_op op,
                              const gr_accum *acc, const char *name,
                              char *why, size_t n);

/* Device side of one scan: input elements at in[in_base + row * seg_stride
 * + i * elem_stride], output at out[out_base + row * out_seg_stride + i *
 * out_elem_stride].  Buffers only, never host pointers (device arrays). */
typedef struct {
    cl_mem in;
    size_t in_base;
    cl_mem out;
    size_t out_base;
    ptrdiff_t out_seg_stride, out_elem_stride;
} gr_scan_io;

/* Runs a planned scan without the GIL; st reports failures. */
int gr_scan_run(gr_device *d, gr_op op, const gr_accum *acc, int exclusive,
                const gr_layout *lay, const gr_scan_plan *plan,
                const gr_scan_io *io, gr_timing *timing, gr_status *st);

/* ---------------------------------------------------------------- module.c
 * Shared by the Python shells of every family (GIL held; -1 with an
 * exception set on failure). */
struct _PyArray_Descr; /* NumPy's PyArray_Descr */
int gr_dtype_of(struct _PyArray_Descr *descr, const char *what);
int gr_op_of(const char *name);
int gr_caps_parse(PyObject *caps, gr_device *dev);
void gr_list_add(PyObject **list, const char *text);

/* --------------------------------------------------------------- runtime.c
 * Kernel events of a run: the first one's start and the last one's end
 * bound its device time.  gr_span_add takes the caller's reference. */
typedef struct {
    cl_event first, last;
} gr_span;
void gr_span_add(gr_span *s, cl_event e);
double gr_span_ns(const gr_span *s);
void gr_span_release(gr_span *s);

/* ------------------------------------------------ other Python entry points
 * Each family's C file owns its _core functions (NULL-terminated tables,
 * added to the module by module.c). */
extern PyMethodDef gr_scan_methods[];   /* scan.c   (prefix scans)        */
extern PyMethodDef gr_bykey_methods[];  /* bykey.c  (reduce-by-key)       */
extern PyMethodDef gr_array_methods[];  /* array.c  (device arrays)       */

/* ------------------------------------------------------------ bykey.c
 * Reduce-by-key (gpured.reduce_by_key, sum_by_key, scan_by_key). */
typedef enum { GR_BK_REDUCE, GR_BK_DENSE, GR_BK_SCAN } gr_bk_func;
typedef enum {
    GR_BKV_ATOMIC, GR_BKV_WARP, GR_BKV_HASH, GR_BKV_SEGMENTS, GR_BKV_PRIV,
    GR_BKV_LOOKBACK
} gr_bk_variant;

typedef struct {
    gr_dtype k, v, r;     /* keys, values, result                          */
    gr_op op;             /* GR_ADD, GR_MUL, GR_MIN, GR_MAX                */
    int count;            /* op "count": run lengths, no values            */
} gr_bk_types;

typedef struct {
    const char *variant;  /* NULL or "auto"                                */
    int wg_size;
    size_t items;
    int deterministic;
    int sorted;           /* -1 measure, 0/1 declared                      */
} gr_bk_overrides;

/* What the device measured about the keys (gr_bykey_stats_dev). */
typedef struct {
    size_t n, num_keys;
    uint64_t first_bad;   /* UINT64_MAX: every key in range                */
    uint64_t heads, descents, max_key;
    int sorted;
    int unmeasured;       /* no stats pass ran (key check fused)          */
} gr_bk_facts;

typedef struct {
    int variant;          /* gr_bk_variant                                 */
    const char *name;
    int wg;
    size_t items, groups, parts;
    int ptx, match, hash_bins;
    char why[256];
} gr_bk_plan;

typedef struct {
    gr_bk_facts facts;
    gr_bk_plan plan;
    int plan_rc;          /* nonzero: the plan refused (message in plan.why)*/
    int needs_sort;       /* deterministic sum_by_key on unsorted keys     */
    int fused;            /* sum_by_key: key check inside the atomic kernel */
    size_t count;         /* reduce_by_key: runs                           */
    double *ns;           /* non-NULL: add kernel times here               */
    double ns_stats;
} gr_bk_result;

int gr_bk_plan_for(const gr_device *d, int sm, gr_bk_func f, const gr_bk_types *ty,
               const gr_bk_facts *facts, const gr_bk_overrides *ov,
               gr_bk_plan *p);
/* Device-level drivers: inputs (cl_mem, element offset, length), outputs
 * in cl_mem buffers; no GIL, no Python objects. */
int gr_bykey_stats_dev(gr_device *d, const gr_bk_types *ty, cl_mem keys,
                       size_t koff, size_t n, uint64_t nk, gr_bk_facts *fx,
                       double *ns, gr_status *st);
int gr_bykey_segments_dev(gr_device *d, const gr_bk_types *ty,
                          const gr_bk_plan *p, int mode, cl_mem keys,
                          size_t koff, cl_mem vals, size_t voff, size_t n,
                          cl_mem okeys, cl_mem ovals, cl_mem count, double *ns,
                          gr_status *st);
int gr_bykey_dense_dev(gr_device *d, const gr_bk_types *ty,
                       const gr_bk_plan *p, cl_mem keys, size_t koff,
                       cl_mem vals, size_t voff, size_t n, size_t nk,
                       cl_mem out, cl_mem flag, double *ns, gr_status *st);
/* sum_by_key in two halves (the caller allocates num_keys results between
 * them); gr_bykey_sum_dev does both. */
int gr_bykey_sum_plan_dev(gr_device *d, int sm, const gr_bk_types *ty,
                          const gr_bk_overrides *ov, cl_mem keys, size_t koff,
                          size_t n, int64_t num_keys, gr_bk_result *res,
                          gr_status *st);
int gr_bykey_sum_exec_dev(gr_device *d, const gr_bk_types *ty, cl_mem keys,
                          size_t koff, cl_mem vals, size_t voff, size_t n,
                          cl_mem out, gr_bk_result *res, gr_status *st);
int gr_bykey_sum_dev(gr_device *d, int sm, const gr_bk_types *ty,
                     const gr_bk_overrides *ov, cl_mem keys, size_t koff,
                     cl_mem vals, size_t voff, size_t n, int64_t num_keys,
                     cl_mem *out, gr_bk_result *res, gr_status *st);
int gr_bykey_runs_dev(gr_device *d, int sm, gr_bk_func f, int exclusive,
                      const gr_bk_types *ty, const gr_bk_overrides *ov,
                      cl_mem keys, size_t koff, cl_mem vals, size_t voff,
                      size_t n, cl_mem *okeys, cl_mem *ovals,
                      gr_bk_result *res, gr_status *st);
/* ------------------------------------------------------- end of bykey */

#endif
