/*
 * gpured — the one header shared by the C files of the extension.
 *
 * Layers (data flows top to bottom, never back up), each cut by family
 * with one hallway file (docs/design.md has the whole list):
 *
 *   api_*.c      the Python face: api.c the module, api_args.c /
 *                api_calls.c / api_results.c the hallway, then
 *                api_reduce.c, api_scan.c, api_segments.c, api_bykey.c,
 *                api_explain.c, api_memory.c, api_interop.c.  array.c
 *                holds the Python types it builds on (Buffer, ArrayBase).
 *   dispatch*.c  runs a gr_request (no Python object below this line):
 *                dispatch.c the entry, dispatch_common.c the hallway,
 *                dispatch_<family>.c, host_epilogue.c, blocks.c.
 *   policy.c     every "auto" rule, pure: policy.c the tables, accum.c,
 *                place.c, plan_<family>.c.
 *   reduce.c     enqueue the passes of a plan, one file per family
 *   scan.c  bykey.c  exact.c
 *   host*.c      the host path (no OpenCL): host.c, host_loops.c,
 *                host_minmax.c, host_<family>.c, hostpar.c (threads)
 *   stream.c     pinned staging (GPUs), buffers.c: zero-copy (CPUs)
 *   pool.c       per-device caching allocator (refcounted blocks)
 *   launch.c     kernel arguments, launches, event spans
 *   programs.c   program cache, in memory and on disk
 *   runtime.c    platforms, devices, contexts, queues, errors
 *
 * Code that runs with the GIL released never touches a Python object: it
 * reports failure through a gr_status, which the api turns into a Python
 * exception once the GIL is held again (gr_raise, runtime.c).
 */
#ifndef GPURED_H
#define GPURED_H

/* One NumPy C-API table for the extension: api.c imports it (it defines
 * GR_MODULE_MAIN), the other files borrow it. */
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
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define GR_MAXDIMS 32

/* ------------------------------------------------------------------ types */

/* Host buffers handed to CPU devices as zero-copy are aligned to this
 * (buffers.c, dispatch's owned host blocks). */
#define GR_ZC_ALIGN 128
/* Pinned staging slots of the chunk pipeline (stream.c, streamed scans). */
#define GR_STREAM_SLOTS 16

/* Element types gpured knows; one row each in gr_dtypes[] (policy.c). */
typedef enum {
    GR_BOOL, GR_INT8, GR_UINT8, GR_INT16, GR_UINT16, GR_INT32, GR_UINT32,
    GR_INT64, GR_UINT64, GR_FLOAT32, GR_FLOAT64,
    /* Storage-only halves (issue 40): device Arrays hold them and the copy
     * kernel converts them (vload_half/vstore_half_rte; bfloat16 by
     * integer arithmetic); every reduction, scan and by-key call widens
     * them to float32 first (gpured/_half.py) and narrows the result once.
     * gr_dtype_of refuses them; gr_dtype_of_store accepts them. */
    GR_FLOAT16, GR_BFLOAT16, GR_NDTYPES
} gr_dtype;

/* GR_FLOAT16 / GR_BFLOAT16: computed through float32 (see above). */
#define GR_IS_HALF(t) ((t) == GR_FLOAT16 || (t) == GR_BFLOAT16)

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

/* Operators (same numbering as GR_OP_* in kernels/common.cl). */
typedef enum {
    GR_ADD, GR_MUL, GR_MIN, GR_MAX, GR_ARGMIN, GR_ARGMAX, GR_ALL, GR_ANY,
    GR_NOPS
} gr_op;

extern const char *const gr_op_names[GR_NOPS];

/* The public functions of every family (api.c's table names them). */
typedef enum {
    GR_F_SUM, GR_F_PROD, GR_F_MIN, GR_F_MAX, GR_F_ALL, GR_F_ANY, GR_F_MEAN,
    GR_F_ARGMIN, GR_F_ARGMAX,
    GR_F_CUMSUM, GR_F_CUMPROD, GR_F_CUMMIN, GR_F_CUMMAX,
    GR_F_REDUCE_BY_KEY, GR_F_SUM_BY_KEY, GR_F_SCAN_BY_KEY,
    GR_F_REDUCEAT,
    GR_NFUNCS
} gr_func;

typedef enum { GR_FAM_REDUCE, GR_FAM_SCAN, GR_FAM_BYKEY } gr_family;

/* ---------------------------------------------------------------- devices */

struct gr_pool;
struct gr_progcache;

typedef struct {
    cl_platform_id platform;
    cl_device_id id;
    int index;                 /* position in the device table             */
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
    int sm;                    /* NVIDIA compute capability major, or 0    */
    int is_gpu;
    /* Created lazily by gr_device_open(). */
    cl_context ctx;
    cl_command_queue queue;    /* the one in-order queue all work goes to  */
    /* Timed runs (timeit, bench): `queue` is swapped for a profiling queue
     * of the same context while prof_depth > 0 (each swap finishes the
     * queue it leaves, so the one-queue order holds).  Profiling costs
     * every enqueue 3.5 us on NVIDIA (1 KiB sum: 10.5 vs 7.0 us/call). */
    cl_command_queue plain_queue;
    cl_command_queue prof_queue;
    int prof_depth;
    struct gr_pool *pool;      /* pool.c                                   */
    /* Reads of up to GR_SMALL_READ bytes land in this pinned host
     * memory first (runtime.c gr_read_wait); small_busy 0 free, 1 in use,
     * 2 an interrupted read still going into it (small_ev). */
    cl_mem small_mem;
    void *small_ptr;
    int small_busy;
    int small_failed;
    cl_event small_ev;
    /* The device's own lock (runtime.c's lock map says what it guards)
     * and the condition its staging pool's users wait on (stream.c). */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    struct gr_progcache *progs; /* programs.c: this device's kernels    */
} gr_device;

/* Failure of code running without the GIL: which call, which error. */
typedef struct {
    const char *call;  /* NULL: no error                                   */
    cl_int err;
    char *log;         /* build log (malloc'd) or NULL                     */
    char msg[256];     /* non-OpenCL failures (out of host memory, ...)    */
    int kind;          /* GR_E_* for non-OpenCL failures                   */
} gr_status;

enum {
    GR_E_RUNTIME = 0,  /* RuntimeError                                     */
    GR_E_MEMORY,       /* MemoryError                                      */
    GR_E_VALUE,        /* ValueError                                       */
    GR_E_TYPE,         /* TypeError                                        */
    GR_E_VARIANT,      /* gpured.VariantUnavailable                        */
    GR_E_INTERRUPT,    /* the call was interrupted (KeyboardInterrupt set) */
    GR_E_INDEX         /* IndexError                                       */
};

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
int gr_find_device(const char *spec);      /* index, or -1 (no exception)  */
int gr_current_index(void);
int gr_device_pinned(void);  /* GPURED_DEVICE or set_device() chose it  */
void gr_unpin_device(void);  /* the default device again, not pinned     */
int gr_device_open(gr_device *d, gr_status *st); /* gr_lock held           */
/* Profiling on for the work enqueued until the matching end (nests; take
 * gr_lock themselves). */
int gr_profile_begin(int dev, gr_status *st);
void gr_profile_end(int dev);
const char *gr_cl_error_name(cl_int err);
void gr_raise(gr_status *st);              /* needs the GIL; frees st->log */
void gr_status_fail(gr_status *st, const char *fmt, ...);
void gr_status_kind(gr_status *st, int kind, const char *fmt, ...);
/* Each device's work is serialised by its own lock (issue 43; the lock
 * map is in runtime.c).  "gr_lock held" in a comment means d's lock, d
 * the device the work is for.  A thread holds at most one device's lock,
 * except gr_stream_set_cfg, which takes every one in index order. */
void gr_lock(gr_device *d);
void gr_unlock(gr_device *d);
/* Waits on d->cv with d's lock released (held on entry and on return). */
void gr_lock_wait(gr_device *d);
/* A host-side wait without the device lock this thread holds, if any:
 * held = gr_unlock_for_wait(); wait; gr_relock(held).  Whatever the
 * caller uses across it must be its own (blocks it holds, a staging pool
 * it owns): other threads enqueue work meanwhile, on this device too. */
int gr_unlock_for_wait(void);
void gr_relock(int held);
/* Tests only (_core._hold_device_lock): hold device dev's lock for ms
 * milliseconds, to show that other devices' work does not wait. */
void gr_device_hold(int dev, double ms);
cl_int gr_finish_unlocked(cl_command_queue q); /* clFinish, so */
/* Wait for ev, spinning first as CUDA's synchronise does; intr (or NULL)
 * polled every ~50 ms: GR_E_INTERRUPT.  0, or -1 with st set.  Called
 * without gr_lock. */
int gr_event_wait_intr(const gr_device *d, cl_event ev, int (*intr)(void *),
                       void *ictx, gr_status *st);
int gr_forked(void);                       /* 1 in a child of fork()       */
/* Read n bytes of m at off into dst after what is enqueued on d's queue
 * and wait for them, without gr_lock (held or not on entry: as on entry
 * on return).  intr as gr_event_wait_intr; on an interrupt the read goes
 * on and, where pending is given, its event is handed out there (dst must
 * outlive it).  0, or -1 with st set. */
#define GR_SMALL_READ 65536
/* The device's pinned memory for reads of up to GR_SMALL_READ bytes
 * (NULL: none free; the device's lock held to take it), and its return
 * (ev: a read into it still possibly running). */
void *gr_small_take(gr_device *d);
void gr_small_give(gr_device *d, cl_event ev);
int gr_read_wait(gr_device *d, cl_mem m, size_t off, size_t n, void *dst,
                 int (*intr)(void *), void *ictx, cl_event *pending,
                 gr_status *st);

/* programs.c */
typedef struct gr_program gr_program;
gr_program *gr_program_get(gr_device *d, const char *source,
                           const char *options, gr_status *st);
cl_kernel gr_program_kernel(gr_program *p, const char *name, gr_status *st);
void gr_programs_set_cache_dir(const char *dir);
const char *gr_programs_cache_dir(void);
extern const char *const gr_kernel_families[];   /* NULL-terminated      */
const char *gr_kernel_text(const char *family);  /* NULL if unknown       */
char *gr_program_source(const char *family, const char *defines); /* malloc */
void gr_programs_stats(long *mem_hits, long *disk_hits, long *builds);
void gr_programs_forget(gr_device *d);     /* its context changes  */
/* The kernel `name` of family + defines built with options.  Borrowed:
 * programs live as long as the process.  gr_lock held. */
cl_kernel gr_kernel_get(gr_device *d, const char *family, const char *defines,
                        const char *options, const char *name, gr_status *st);
/* The same, found first by a compact binary key (the fields that decide
 * the defines): the defines text is built (by `defs`) only on a miss.
 * Repeated calls cost a hash of a few dozen bytes.  A key longer than
 * GR_MEMO_KEY would always miss (the defines text built and hashed on
 * every call): each caller asserts its key type fits. */
#define GR_MEMO_KEY 192
typedef void (*gr_defines_fn)(const void *ctx, char *buf, size_t n);
cl_kernel gr_kernel_memo(gr_device *d, const char *family, const void *key,
                         size_t keylen, const char *name, gr_defines_fn defs,
                         const void *ctx, const char *options, gr_status *st);
/* Developer knobs (benchmarks/scan_knobs.py, benchmarks/exp/bykey_lb.py):
 * the #define lines in environment variable `env`, appended to a defines
 * block as they are. */
void gr_defines_append_env(char *buf, size_t n, const char *env);

/* --------------------------------------------------------------- pool.c
 * Per-device caching allocator.  A block is one cl_mem of a rounded size
 * class; references are counted.  When the last reference goes, the block
 * goes back to its device's free lists (or is released when the cache is
 * full): it may serve the next allocation at once, because every use of a
 * block is enqueued on the device's one in-order queue, and a reference is
 * held until the use is enqueued (CuPy's and torch's stream-ordered rule).
 * Blocks are never used on another queue without a wait. */
typedef struct gr_block {
    cl_mem mem;
    size_t size;       /* bytes (the size class)                           */
    int dev;           /* device index                                     */
    int refs;          /* atomic                                           */
    struct gr_block *next;
    int no_cache;      /* shared outside gpured (PyOpenCL, DLPack): never
                        * served to another allocation                     */
    void (*on_free)(void *ctx);   /* foreign memory: called at the end     */
    void *on_free_ctx;
} gr_block;

typedef struct {
    size_t in_use_bytes, cached_bytes, limit_bytes;
    long in_use_blocks, cached_blocks;
    long allocs, reuses, frees;
} gr_pool_stats;

/* A block of at least nbytes on d (one reference).  No lock needed. */
gr_block *gr_block_get(gr_device *d, size_t nbytes, gr_status *st);
void gr_block_retain(gr_block *b);
/* Foreign memory as a block (one reference; mem retained by the caller is
 * released at the end, then on_free(ctx) if given).  Never cached. */
gr_block *gr_block_wrap(gr_device *d, cl_mem mem, size_t size,
                        void (*on_free)(void *), void *ctx, gr_status *st);
void gr_block_put(gr_block *b);            /* drop one reference           */
void gr_pool_stats_get(gr_device *d, gr_pool_stats *s);
void gr_pool_empty(gr_device *d);          /* release every cached block   */
void gr_pool_set_limit(gr_device *d, size_t bytes);

/* ------------------------------------------------------------- launch.c */

/* One kernel argument: size and address (a cl_mem is passed by address). */
typedef struct {
    size_t size;
    const void *ptr;
} gr_arg;
#define GR_ARG(v) ((gr_arg){sizeof(v), &(v)})
#define GR_NULLMEM ((gr_arg){sizeof(cl_mem), NULL})

/* Kernel events of a run: the first one's start and the last one's end
 * bound its device time.  gr_span_add takes the caller's reference. */
typedef struct {
    cl_event first, last;
} gr_span;
void gr_span_add(gr_span *s, cl_event e);
double gr_span_ns(const gr_span *s);
void gr_span_release(gr_span *s);

/* Set args[0..n) on k and enqueue it over `dims` dimensions after `wait`
 * (may be NULL); sp (may be NULL) collects its event.  0 or -1 (st set). */
int gr_launch(gr_device *d, cl_kernel k, cl_uint dims, const size_t *global,
              const size_t *local, const gr_arg *args, int n, cl_event wait,
              gr_span *sp, gr_status *st);
#define GR_LAUNCH1(d, k, g, l, sp, st, ...)                                  \
    gr_launch((d), (k), 1, (size_t[]){(g)}, (size_t[]){(l)},                 \
              (gr_arg[]){__VA_ARGS__},                                       \
              (int)(sizeof((gr_arg[]){__VA_ARGS__}) / sizeof(gr_arg)), NULL, \
              (sp), (st))
/* Largest work-group the compiled kernel allows on d. */
size_t gr_kernel_wg_limit(gr_device *d, cl_kernel k);

/* The error of an OpenCL call in a child started with fork(). */
#define GR_FORK_MSG                                                          \
    "gpured cannot run OpenCL work in a child process started with fork() " \
    "(the OpenCL driver's threads do not survive it); start workers with "  \
    "multiprocessing.get_context('spawn') or 'forkserver'"

/* ------------------------------------------------------------------ plans
 * (policy.c: pure functions of device facts, types, layout, overrides) */

/* How a reduction's elements sit in memory, in elements (not bytes). */
typedef struct {
    size_t M;            /* segments (outputs)                              */
    size_t L;            /* elements per segment                            */
    ptrdiff_t seg_stride;
    ptrdiff_t elem_stride;
} gr_layout;

/* GR_K_WARP: lanes of a warp per segment (NVIDIA): reduceat's
 * (kernels/segments.cl) and short rows' (kernels/reduce.cl) */
typedef enum { GR_K_GROUP, GR_K_ITEMS, GR_K_WARP } gr_kernel_kind;

/* The knobs a user may set (0 / NULL / -1: choose); every family reads the
 * ones it has. */
typedef struct {
    const char *variant;  /* NULL or "auto"                                 */
    int wg_size;
    int groups;           /* parts per segment in the first pass           */
    long long items;      /* elements per work-item                        */
    int ilp;
    int vw;
    int spins;            /* scans: -1 default                              */
} gr_knobs;

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
    int lanes;            /* GR_K_WARP: work-items per segment (else 0)    */
    int hf;               /* halves' plain sums: loads of vw * hf elements,
                           * folded in float to vw (reduce.cl GR_HF); 0 none */
    int viters;           /* GR_K_WARP with vectors: a lane's vector loads
                           * per row at most, compiled in (GR_SEG_VITERS:
                           * the loads unrolled, all issued at once); 0: a
                           * loop to the row's end                          */
    const char *row;      /* the policy table's row that set the geometry  */
    char why[256];
} gr_plan;

/* Accumulator choice for (family, op, input, result) on a device: the one
 * rule every family uses (accum.c, gr_accum_for). */
typedef struct {
    gr_dtype t, r;
    const char *a_cl;     /* accumulator OpenCL type                        */
    const char *a_min, *a_max;
    int a_size;
    int cvt;              /* GR_CVT_* of kernels/common.cl                 */
    int comp;
    int x_size;           /* bytes of the auxiliary state, 0 if none       */
    int neg0;             /* float sums start from -0.0 (an initial= that
                           * NumPy's fold begins with follows)            */
    int nan;              /* nan* functions on floats: a NaN element reads
                           * as the op's replacement (NumPy's _replace_nan:
                           * 0 for sums, 1 for products)                  */
    int var;              /* 1 var, 2 std: the shifted sums (sum y, sum
                           * y^2) of kernels/common.cl's GR_VAR, finished
                           * in the kernels (reduce.cl gr_finish_var);
                           * 3 nanmean: the sum and count of GR_VAR's
                           * folds, finished as their quotient           */
    /* per call, not part of a kernel's identity: */
    int var_self;         /* the kernels read each segment's shift K      */
    double var_k;         /* else K (pieces of one streamed segment)      */
    unsigned long long var_n; /* elements per segment                      */
    double var_ddof;      /* NumPy's ddof                                  */
    int where;            /* pieces carry a second operand (gr_piece.wmem):
                           * 1 where='s mask, 2 average's weights         */
    gr_dtype wt;          /* its dtype (bool for masks)                    */
    int waxis;            /* it is one vector along the segment            */
    int ptp;              /* ptp: a max whose auxiliary state (x_size) is
                           * the minimum, finished as their difference in
                           * the input's dtype (kernels/common.cl GR_PTP) */
    const char *user;     /* a user operator's GR_USER_* defines (op
                           * GR_OP_USER, gpured.ScanKernel), else NULL    */
    const char *user_opts; /* its build options (options=), or NULL       */
    int md;               /* mean into a new device result: the final pass
                           * divides by var_n (the count) and writes this
                           * dtype + 1 (reduce.cl GR_MDIV); 0 none        */
} gr_accum;
/* A user-defined operator's gr_op value (kernels/common.cl GR_OP_USER). */
#define GR_OP_USER_ID ((gr_op)8)
/* cvt of count_nonzero's sum: kernels/common.cl GR_CVT_COUNT (elements
 * read as 1 / 0); of nanmean's count: GR_CVT_VALID (1 unless NaN) */
#define GR_CVT_COUNT_MODE 4
#define GR_CVT_VALID_MODE 5

int gr_accum_for(const gr_device *d, gr_family fam, gr_op op, gr_dtype t,
                 gr_dtype r, gr_accum *acc, char *err, size_t errlen);
/* The accumulator of var/std (1, 2) over the one gr_accum_for chose for
 * their sum. */
void gr_accum_var(gr_accum *acc, int var);
/* The accumulator of ptp over max's (the minimum as its auxiliary state). */
void gr_accum_ptp(gr_accum *acc);
/* 0 on success, -1 with a message in plan->why (bad knob/variant),
 * -2 when the variant is unavailable on this device. */
int gr_plan_segments(const gr_device *d, gr_op op, const gr_accum *acc,
                     size_t rows, size_t L, size_t inner, size_t S,
                     size_t maxlen, const gr_knobs *kn, gr_plan *plan);
int gr_plan_reduce(const gr_device *d, gr_op op, const gr_accum *acc,
                   const gr_layout *lay, const gr_knobs *ov, gr_plan *plan);
const char *const *gr_reduce_variants(void);
int gr_variant_available(const gr_device *d, gr_op op, const gr_accum *acc,
                         const char *name, char *why, size_t n);

/* Placement (place.c): the host path (host.c) or the device, for calls
 * on host memory, from a time model per side (per-call cost + bytes /
 * rate) with rates per family; gpured.tune() measures them. */
enum { GR_RATE_REDUCE, GR_RATE_ARG, GR_RATE_COLUMN, GR_RATE_SCAN, GR_NRATES };
typedef struct {
    double host_call_ns, dev_call_ns;
    double host_gbs[GR_NRATES], dev_gbs[GR_NRATES];   /* bytes per ns */
} gr_rates;
void gr_rates_set(const char *device, const gr_rates *r);
void gr_rates_get(const gr_device *d, gr_rates *r, int *measured);
void gr_placement_set(int automatic);   /* 0: always the device         */
int gr_placement_auto(void);
int gr_rate_family(gr_family fam, gr_op op, const gr_layout *lay);
/* How much slower than its plain form the host path runs a request that
 * does more than one pass or copies first: the placement rule's factors,
 * one row each with the measurement behind it (place.c host_factors). */
typedef enum {
    GR_HW_PLAIN = 0,     /* a plain reduction or scan                   */
    GR_HW_COPY_REDUCE,   /* nan* reductions and where=: a copy first     */
    GR_HW_COPY_SCAN,     /* nan* scans: a copy first                     */
    GR_HW_VAR,           /* var/std: two passes                          */
    GR_HW_NANMEAN,       /* nanmean: NaN-masked double lanes             */
    GR_HW_PTP,           /* ptp: max, then min                           */
    GR_HW_EXACT,         /* exact=True: expansions and a long accumulator */
    GR_NHW
} gr_host_work;
double gr_host_factor(gr_host_work w);
/* reduceat on the host path: float sums of segments averaging fewer
 * elements than this take the one-element-at-a-time loop. */
size_t gr_seg_short(gr_dtype t);
/* 1 if the host path is expected to finish first (why: the figures).
 * slow: how much slower than its plain form the host path runs this
 * request, slow_why says why (shown where slow > 1).  roam (placement
 * "auto" and no device pinned by GPURED_DEVICE, set_device() or device=):
 * the device expected to finish first among all of them (those with fp64
 * where *dev has it) replaces *dev when the host path does not win. */
/* sum_by_key on host memory (place.c): 1 where the host path's loops
 * (host_bykey.c) are expected to finish first on *threads threads; nk
 * the bins (0: not known yet). */
int gr_place_bykey(int dev, size_t nbytes, size_t nk, int *threads, char *why,
                   size_t n);
int gr_place(int *dev, int roam, gr_family fam, gr_op op,
             const gr_layout *lay, size_t nbytes, double slow,
             const char *slow_why, char *why, size_t n);

/* Placement's re-measure (place_remeasure.c, issue 39): gr_place leaves
 * a note of its choice (per thread); gr_dispatch times the run and hands
 * the wall time to gr_remeasure_observe, which corrects the chosen side's
 * factor (side -1: the host path, else a device index) for the rate
 * family and size where the estimate was more than 4x off. */
typedef struct {
    int valid;
    int side, f;
    size_t nbytes;
    double est0_ns;      /* the model's time without the factor          */
    double est_ns;       /* with it                                      */
} gr_place_note;
typedef struct {
    int side, f;
    size_t bytes;        /* the size class's least bytes                 */
    double factor, age_s;
    int jumps, calls;
    char why[160];
} gr_remeasure_row;
double gr_remeasure_factor(int side, int f, size_t nbytes);
void gr_place_note_set(const gr_place_note *n);
void gr_place_note_get(gr_place_note *n);
void gr_place_note_clear(void);
int gr_remeasure_observe(double wall_ns);
int gr_remeasure_why(int side, int f, size_t nbytes, char *why, size_t n);
int gr_remeasure_rows(gr_remeasure_row *rows, int max);
/* on: 1/0 (-1 keeps), half_life_s (-1 keeps; 0 never fades), reset */
void gr_remeasure_config(int on, double half_life_s, int reset);
void gr_remeasure_get(int *on, double *half_life_s, size_t *large_bytes);

/* The host path on several threads (place.c, hostpar.c): threads (the
 * count in force; automatic: chosen from the CPUs), tasks of at least
 * grain bytes (0: host.c's default), the pool's cost a call and the rates
 * with every thread (bytes per ns; 0: the model's default).  gr_host_par:
 * the threads and grain for a host call of family f on nbytes (1: one
 * thread, as the model prices it). */
typedef struct {
    int threads, automatic;
    size_t grain;
    double call_ns, gbs[GR_NRATES];
    int measured;
} gr_hpar;
int gr_hpar_threads(void);
void gr_hpar_get(gr_hpar *p);
void gr_hpar_set(const gr_hpar *p);
void gr_host_par(int dev, int f, size_t nbytes, int *threads, size_t *grain);

/* A call on host memory split between two devices (place.c): the pair's
 * rate together per family (0: never split), and the plan for a call:
 * dev[0] takes the first frac of the elements, dev[1] the rest.  1 if the
 * split is expected to finish first (why: the figures). */
typedef struct {
    int dev[2];
    double frac, ns, single_ns;
} gr_split;
void gr_split_set(const double *gbs);   /* GR_NRATES GB/s              */
void gr_split_get(double *gbs);
int gr_split_plan(int cur, int roam, gr_family fam, gr_op op,
                  const gr_layout *lay, size_t nbytes, gr_split *sp,
                  char *why, size_t n);

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
    cl_mem wmem;         /* where=: the mask's bytes, element j's at     */
    ptrdiff_t wdelta;    /* wmem[j + wdelta] (j: mem's element index)    */
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
int gr_nanarg_check(gr_device *d, gr_op op, const gr_accum *acc,
                    const gr_layout *lay, const gr_plan *plan,
                    const gr_piece *piece, cl_mem resv, size_t res0,
                    int *suspect, gr_status *st);
/* Segments by offsets (NumPy's reduceat): see reduce.c.  gr_segments_check
 * enqueues the bounds check of S device offsets into *bad (UINT_MAX: all
 * in [0, L), else the position of one that is not). */
int gr_segments_check(gr_device *d, gr_op op, const gr_accum *acc,
                      const gr_plan *plan, cl_mem idx, size_t S, size_t L,
                      cl_mem bad, gr_status *st);
int gr_segments_run(gr_device *d, gr_op op, const gr_accum *acc,
                    const gr_plan *plan, cl_mem in, size_t base,
                    size_t rows, size_t L, size_t inner, cl_mem idx,
                    size_t S, const gr_output *out, gr_timing *timing,
                    gr_status *st);

/* -------------------------------------------------------------- buffers.c */

typedef struct {
    cl_mem mem;
    size_t base;       /* offset of the first element, in elements          */
    int zero_copy;
    gr_block *blk;     /* the pooled block of an upload, or NULL            */
} gr_input;

/* Makes the host bytes [ptr, ptr + nbytes) readable by the device. */
int gr_input_from_host(gr_device *d, const void *ptr, size_t nbytes,
                       size_t itemsize, gr_input *inp, gr_status *st);
void gr_input_release(gr_input *inp);
/* Host memory the device writes in place (CPU devices), or NULL when it
 * cannot (GPUs, misaligned): *base is the element offset inside it. */
cl_mem gr_output_host(gr_device *d, void *ptr, size_t nbytes, size_t itemsize,
                      size_t *base);

/* Enqueue dst[doff + i] = (t)src[soff + i] for i < n (kernels/copy.cl).
 * gr_lock held. */
int gr_copy_enqueue(gr_device *d, cl_mem src, gr_dtype s, size_t soff,
                    cl_mem dst, gr_dtype t, size_t doff, size_t n,
                    gr_status *st);

/* The element copy of kernels/copy.cl over an N-d geometry: dst[...] =
 * epilogue(src[...]) where epilogue is a cast, a division (mean) or an
 * operator applied with a constant (initial), in the destination type.
 * Offsets and strides in elements; strides may be negative. */
typedef struct {
    int mode;            /* GR_EPI_CAST, GR_EPI_DIV, GR_EPI_OP              */
    double div;          /* GR_EPI_DIV                                     */
    int via_dst;         /* GR_EPI_DIV: round the sum into dst's type first
                          * and divide there (NumPy's mean with an out)   */
    gr_op op;            /* GR_EPI_OP: dst = op(value, src) in dst's type  */
    int nan;             /* GR_EPI_OP min/max of nanmin/nanmax: fmin/fmax  */
    unsigned char value[8]; /* the constant, in dst's type                 */
} gr_epilogue;
enum { GR_EPI_CAST = 0, GR_EPI_DIV = 1, GR_EPI_OP = 2 };
int gr_copy_nd(gr_device *d, cl_mem src, gr_dtype s, size_t soff,
               cl_mem dst, gr_dtype t, size_t doff, int nd,
               const size_t *shape, const ptrdiff_t *sstr,
               const ptrdiff_t *dstr, const gr_epilogue *epi, gr_status *st);

/* The common header's (kernels/common.cl) reduction macros, given dummy
 * values by the kernels that reduce nothing (copy.cl, elementwise.cl). */
#define GR_CL_NO_REDUCTION                                                   \
    "#define GR_T uchar\n#define GR_A uint\n#define GR_R uint\n"            \
    "#define GR_AM int\n#define GR_A_SIZE 4\n#define GR_X_SIZE 4\n"         \
    "#define GR_A_FLOAT 0\n#define GR_OP 0\n#define GR_CVT 0\n"            \
    "#define GR_COMP 0\n#define GR_A_MINV 0\n#define GR_A_MAXV 0\n"        \
    "#define GR_VW 1\n#define GR_WG 256\n#define GR_ILP 1\n"              \
    "#define GR_SG 0\n#define GR_ATOMIC 0\n"

/* --------------------------------------------------------------- stream.c */

/* Staging settings (gpured.set_staging). */
typedef struct {
    size_t chunk;      /* bytes per pinned buffer                          */
    int nbuf;          /* pinned buffers (and device chunks)               */
    size_t min_bytes;  /* smaller transfers take the plain path            */
    int force;         /* stream on CPU devices too (tests)                */
    int threads;       /* memcpy threads, 0: automatic                     */
    int reg;           /* registering host memory: GR_REG_*                */
} gr_stream_cfg;
enum { GR_REG_NEVER = 0, GR_REG_AUTO = 1, GR_REG_ALWAYS = 2 };
void gr_stream_get_cfg(gr_stream_cfg *c, long *streams, long *chunks);
int gr_stream_peak(void);   /* the most streams in flight at once so far */

/* Registered host memory (stream.c): api.c offers [base, base + len), the
 * memory of a host array it saw in several calls, while its owner lives
 * (id, or -1: the table is full); streams to an eligible device (GR_REG_AUTO:
 * NVIDIA GPUs; GR_REG_ALWAYS: any, for tests) register it on first use and
 * copy from it directly.  withdraw releases the registration before the
 * owner's memory is freed (or marks it, and the last write in flight from
 * it releases it: no lock needed). */
int gr_hostreg_offer(void *base, size_t len);
void gr_hostreg_withdraw(int id);
void gr_hostreg_stats(long *direct, int *pinned, size_t *pinned_bytes);
void gr_stream_set_cfg(const gr_stream_cfg *c);   /* takes every lock     */
int gr_stream_wanted(const gr_device *d, size_t nbytes);
size_t gr_stream_chunk_elems(size_t itemsize);

/* Host -> device write of n bytes into mem at off; on GPUs large writes
 * stream through the pinned staging pool.  Blocks until written.  No GIL;
 * gr_lock held. */
int gr_stream_write(gr_device *d, cl_mem mem, size_t off, const void *ptr,
                    size_t n, gr_status *st);

/* A stream owns its device's staging pool from gr_stream_source /
 * gr_stream_pool_get to gr_stream_source_end / gr_stream_idle (which must
 * follow, also on errors); another thread's stream to the same device
 * waits, one to another device runs beside it: the host-side waits run
 * without gr_lock. */
typedef struct gr_stream_src gr_stream_src;
gr_stream_src *gr_stream_source(gr_device *d, const void *host,
                                size_t itemsize, size_t total, gr_source *src,
                                int *npieces, gr_status *st);
int gr_stream_source_end(gr_stream_src *s, gr_status *st);

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
void gr_par_memcpy(void *dst, const void *src, size_t n);
void gr_stream_forget(const gr_device *d);      /* gr_lock held         */

/* ------------------------------------------------------------------ scans
 * A scan runs along the rows of an M x L layout (gr_layout: elements,
 * not bytes), each row independently; the output has its own strides. */

typedef enum {
    GR_SK_ROW_ITEMS,   /* one work-item per row, sequential               */
    GR_SK_CHUNKS,      /* one work-group per row (parts == 1) or per chunk */
    GR_SK_RTS,         /* reduce_then_scan: reduce, scan partials, scan    */
    GR_SK_LOOKBACK     /* decoupled look-back, single pass                 */
} gr_scan_kind;

typedef struct {
    const char *variant;
    gr_scan_kind kind;
    int local;            /* GR_LOCAL of kernels/scan.cl (0: none)          */
    int sg;               /* 0 none, 1 NVIDIA PTX, 2 khr sub-groups         */
    int wg, items, ilp;
    int cpu_tile;         /* look-back tile = one work-item's run          */
    int wide;             /* results wider than the elements staged too    */
    int spin;             /* polls before the look-back fallback           */
    size_t parts, chunk;  /* CHUNKS / RTS: chunks per row, elements each    */
    size_t tiles;         /* LOOKBACK: tiles per row                       */
    const char *row;      /* the policy table's row that set the geometry  */
    char why[256];
} gr_scan_plan;

/* 0, or -1 (bad knob, message in why), -2 (variant unavailable). */
int gr_plan_scan(const gr_device *d, gr_op op, const gr_accum *acc,
                 const gr_layout *lay, int out_contig, const gr_knobs *ov,
                 gr_scan_plan *plan);
const char *const *gr_scan_variants(void);
int gr_scan_variant_available(const gr_device *d, gr_op op,
                              const gr_accum *acc, const char *name,
                              char *why, size_t n);

/* Device side of one scan: input elements at in[in_base + row * seg_stride
 * + i * elem_stride], output at out[out_base + row * out_seg_stride + i *
 * out_elem_stride]. */
typedef struct {
    cl_mem in;
    size_t in_base;
    cl_mem out;
    size_t out_base;
    ptrdiff_t out_seg_stride, out_elem_stride;
} gr_scan_io;

int gr_scan_run(gr_device *d, gr_op op, const gr_accum *acc, int exclusive,
                const gr_layout *lay, const gr_scan_plan *plan,
                const gr_scan_io *io, gr_timing *timing, gr_status *st);
/* The identity of op in dtype r, little-endian in buf[0..8). */
void gr_identity_of(gr_op op, gr_dtype r, unsigned char *buf);

/* ------------------------------------------------------------ bykey
 * Reduce-by-key (reduce_by_key, sum_by_key, scan_by_key). */
typedef enum { GR_BK_REDUCE, GR_BK_DENSE, GR_BK_SCAN } gr_bk_func;
typedef enum {
    GR_BKV_ATOMIC, GR_BKV_WARP, GR_BKV_HASH, GR_BKV_SEGMENTS, GR_BKV_PRIV,
    GR_BKV_LOOKBACK, GR_BKV_FIXED
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
    int exact;            /* sum_by_key(exact=True) of floats              */
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
    int lcopies;          /* private_bins in local memory (GPUs): copies of
                           * every bin (wg: one a work-item), 0: the CPU
                           * form (global copies, one a part)              */
    size_t lwords;        /* ... and the local words they take             */
    const char *row;      /* the policy table's row that set the geometry  */
    int exact;            /* exact=True: 1 fixed-point windows over the
                           * whole exponent range (device), 2 long
                           * accumulators a key on the host                */
    int fx_wmax;          /* fixed_point: windows a key allocated (0:
                           * GR_FX_WMAX)                                   */
    char why[256];
} gr_bk_plan;

typedef struct {
    gr_bk_facts facts;
    gr_bk_plan plan;
    int plan_rc;          /* nonzero: the plan refused (message in plan.why)*/
    int needs_sort;       /* deterministic sum_by_key on unsorted keys:
                           * 1 radix sort on the device, 2 on the host     */
    int fused;            /* sum_by_key: key check inside the atomic kernel */
    size_t count;         /* reduce_by_key: runs                           */
    double *ns;           /* non-NULL: add kernel times here               */
    double ns_stats;
    int on_host;          /* sum_by_key ran on the host path (host_bykey.c):
                           * its results in host[] (malloc'd), no blocks   */
    void *host[2];        /* ... the values, the counts (sum_count)        */
} gr_bk_result;

extern const char *const gr_bk_variant_names[];
extern const char *const gr_bk_func_names[];
/* policy layer (plan_bykey.c) */
int gr_bk_types_init(const gr_device *d, gr_bk_types *ty, char *err,
                     size_t n);
int gr_bk_exact(const gr_bk_types *ty);  /* integer values: atomics exact */
int gr_bk_lbins_copies(const gr_device *d, size_t nk, int a_size, int wg,
                       size_t *words);
int gr_bk_plan_for(const gr_device *d, int sm, gr_bk_func f,
                   const gr_bk_types *ty, const gr_bk_facts *facts,
                   const gr_bk_overrides *ov, gr_bk_plan *p);
/* bykey.c: device-level drivers, inputs as (cl_mem, element offset,
 * length), outputs in cl_mem buffers; no GIL, no Python objects. */
int gr_bykey_stats_enqueue(gr_device *d, const gr_bk_types *ty, cl_mem keys,
                           size_t koff, size_t n, uint64_t nk, double *ns,
                           cl_ulong **words, size_t *groups, cl_event *ready,
                           gr_status *st);
void gr_bykey_stats_combine(const cl_ulong *words, size_t groups, size_t n,
                            gr_bk_facts *fx);
int gr_bykey_segments_dev(gr_device *d, const gr_bk_types *ty,
                          const gr_bk_plan *p, int mode, cl_mem keys,
                          size_t koff, cl_mem vals, size_t voff, size_t n,
                          cl_mem okeys, cl_mem ovals, cl_mem count, double *ns,
                          gr_status *st);
int gr_bykey_dense_dev(gr_device *d, const gr_bk_types *ty,
                       const gr_bk_plan *p, cl_mem keys, size_t koff,
                       cl_mem vals, size_t voff, size_t n, size_t nk,
                       cl_mem out, cl_mem flag, double *ns, gr_status *st);
/* fixed_point's windows a key at most (kernels/bykey.cl FX_WMAX): its
 * words are 16 GR_FX_WMAX + 4 bytes a key.  exact=True on float64 values
 * allocates GR_FX_WMAX_EXACT: 48 windows of 43 exponents cover all 2046
 * of a finite double's, so no value takes the per-key path. */
#define GR_FX_WMAX 4
#define GR_FX_WMAX_EXACT 48
/* fixed_point's bytes for nk keys with wmax windows each */
#define GR_FX_BYTES(nk, wmax) ((nk) * (16 * (size_t)(wmax) + 4) + 16)
int gr_bykey_sort_fits(size_t n, uint64_t max_key);
int gr_bykey_sort_passes(uint64_t max_key);
int gr_bykey_sort_dev(gr_device *d, const gr_bk_types *ty, int wg,
                      size_t items, cl_mem keys, size_t koff, cl_mem vals,
                      size_t voff, size_t n, uint64_t max_key,
                      gr_block **okeys, gr_block **ovals, double *ns,
                      gr_status *st);

/* An exact sum's device plan (plan_exact.c; kernels/exact.cl). */
typedef struct {
    int wg;             /* work-group size (a power of two)              */
    int k;              /* doubles in each work-item's expansion         */
    int u;              /* loads in flight a work-item (the items knob)  */
    size_t groups;      /* work-groups per segment in pass 1             */
    const char *row;    /* the geometry table's row                       */
    char why[256];
} gr_exact_plan;
int gr_plan_exact(const gr_device *d, size_t M, size_t L, const gr_knobs *kn,
                  gr_exact_plan *p);

/* ------------------------------------------------------------- dispatch.c
 * One request: a public function applied to operands.  api.c fills it
 * (no Python object in it) and dispatch.c runs it. */

/* An operand: an N-d array in host memory or in a device block.  Strides
 * in bytes (any sign).  A device operand holds one reference to its block
 * for the request's lifetime (api.c takes it, gr_request_clear drops it). */
typedef struct {
    gr_dtype t;
    int nd;
    size_t shape[GR_MAXDIMS];
    ptrdiff_t strides[GR_MAXDIMS];
    char *host;          /* host address of element 0, or NULL            */
    gr_block *blk;       /* device memory, or NULL                        */
    size_t off;          /* byte offset of element 0 in blk               */
    int present;         /* the operand was given                         */
} gr_operand;

/* GR_RUN_NANCHECK is the face's own (api.c): a run that also checks
 * nanargmin/nanargmax's indices for NaNs; its request carries GR_RUN and
 * nan_check. */
typedef enum {
    GR_RUN = 0, GR_EXPLAIN = 1, GR_BENCH = 2, GR_RUN_NANCHECK = 3
} gr_mode;

/* gr_request.count, .var and .wmode (ints there; these name their values) */
typedef enum { GR_CNT_NONE = 0, GR_CNT_NONZERO = 1, GR_CNT_VALID = 2 } gr_count;
typedef enum {
    GR_VK_NONE = 0, GR_VK_VAR = 1, GR_VK_STD = 2, GR_VK_NANMEAN = 3,
    GR_VK_RATIO = 4
} gr_var_kind;
typedef enum { GR_WM_NONE = 0, GR_WM_WHERE = 1, GR_WM_WEIGHTS = 2 } gr_wmode;

typedef struct {
    gr_func func;
    gr_family fam;
    gr_op op;            /* core operator (bool add -> any, ...)          */
    int count;           /* 1: count_nonzero, a sum of (element != 0);
                          * 2: a count of the elements that are not NaN */
    int nan;             /* nansum/nanprod/nancumsum/nancumprod: NaN
                          * elements read as 0 (sums) or 1 (products)    */
    gr_dtype rt;         /* the result dtype (NumPy's)                    */
    gr_dtype st;         /* the computed dtype before the epilogue (mean's
                          * sum: float64 where the device has it)          */
    gr_operand in;       /* the array (keys for by-key)                   */
    gr_operand vals;     /* by-key values (absent for op count)           */
    gr_operand out;      /* where results go (present), else allocated    */
    gr_operand mask;     /* reductions' second operand, in's shape:       */
    int wmode;           /* 1 where= (bool), 2 average's weights; var 4:
                          * the ratio of the two sums (mean, average)     */
    int wax;             /* average's 1-d weights along this one reduced
                          * axis (else -1: the operand has in's shape)    */
    int dev;             /* device index the request runs on              */
    /* reductions */
    uint64_t axes;       /* bit i: axis i is reduced                      */
    int ordered;         /* argmin/argmax: reduced axes in C order         */
    int has_initial;
    unsigned char initial[8]; /* in dtype rt                              */
    double div;          /* mean: the count (0: no division)              */
    int exact;           /* sum/mean/nansum/nanmean: the exact sum, rounded
                          * once (dispatch_exact.c)                       */
    int var;             /* 1: var, 2: std (nan: nanvar, nanstd); 3: nanmean */
    double ddof;         /* var/std                                       */
    int ptp;             /* op GR_MAX: max - min in one pass               */
    /* scans */
    int axis;
    int exclusive;
    /* by-key */
    gr_bk_func bkf;
    gr_bk_types bkt;
    int64_t num_keys;    /* -1: keys.max() + 1                            */
    int deterministic;
    int sorted;          /* -1 measure                                    */
    int bk_exact;        /* sum_by_key(exact=True) of float values         */
    int bk_sumcount;     /* sum_by_key's sums and counts in one call (the
                          * host path's one pass; the device: sums only)   */
    int bk_host_only;    /* dtypes only the host path takes (small keys,
                          * bool / small values): the device's refusal in
                          * bk_type_err                                    */
    char bk_type_err[256];
    gr_knobs kn;
    /* mode */
    gr_mode mode;
    int reps;            /* GR_BENCH: timed runs                          */
    double *ns;          /* GR_BENCH: device time of each run             */
    int nan_check;       /* nanargmin/nanargmax: check the indices found
                          * for NaNs on the device (gr_result.nan_idx)     */
    int host_ok;         /* the host fast path may answer                 */
    int roam;            /* placement may move it to another device       */
    int home_dev;        /* where it was before placement moved it        */
    /* Asked between pieces and while waiting: nonzero stops the call
     * (GR_E_INTERRUPT).  Called without gr_lock. */
    int (*interrupted)(void *ctx);
    void *ictx;
} gr_request;

/* What a run leaves: device results it allocated (new references), the
 * plan it chose (explain / bench) and the layout it saw. */
typedef struct {
    gr_block *blk[2];    /* by-key: keys, values; else blk[0] the result  */
    size_t count;        /* by-key: results (runs, bins, elements)        */
    gr_accum acc;
    gr_layout lay;
    int where;           /* 0 device, 1 host fast path                    */
    char place_why[512]; /* the placement's figures (explain)             */
    union {
        gr_plan reduce;
        gr_scan_plan scan;
    } plan;
    gr_exact_plan exact; /* req->exact's plan (explain)                   */
    int is_exact;        /* the plan above is the one that ran           */
    gr_bk_result bk;
    int copied;          /* the input was copied into a layout the plan
                          * reads                                          */
    int dof_bad;         /* var/std: some slice has n - ddof <= 0 (NumPy's
                          * "Degrees of freedom" warning); nanvar: for
                          * host input into host results                */
    int nan_idx;         /* req->nan_check: 0 not checked (host memory:
                          * the face looks), 1 no index found is a NaN,
                          * 2 some is (all-NaN, or NaNs tied with +-inf) */
    cl_event pending;    /* an interrupt left this work running: the host
                          * memory it uses must outlive the event          */
} gr_result;

/* Runs req (GIL released; takes gr_lock itself).  0, or -1 with st set. */
int gr_dispatch(gr_request *req, gr_result *res, gr_status *st);
void gr_request_clear(gr_request *req);   /* drops operand references     */
void gr_result_clear(gr_result *res);
/* Byte-level operations on device blocks (gpured.Array's transfers).
 * All take gr_lock.  Reads block; writes block (host memory is the
 * caller's); fill and copy are enqueued. */
int gr_block_write(gr_block *b, size_t off, const void *src, size_t n,
                   gr_status *st);
int gr_block_read(gr_block *b, size_t off, void *dst, size_t n,
                  int (*interrupted)(void *), void *ictx, cl_event *pending,
                  gr_status *st);
/* Many reads at once (one wait per device's queue, mostly): evs[count]
 * gets each read's event, for the caller to release or keep pending. */
int gr_blocks_read(int count, gr_block *const *b, const size_t *off,
                   void *const *dst, const size_t *n,
                   int (*interrupted)(void *), void *ictx, cl_event *evs,
                   gr_status *st);
int gr_event_done(cl_event ev);            /* complete (or failed)?       */
int gr_block_fill(gr_block *b, size_t off, size_t n, const void *pat,
                  size_t plen, gr_status *st);
int gr_block_copy(gr_block *src, size_t soff, gr_block *dst, size_t doff,
                  size_t n, gr_status *st);
/* Strided, casting device copy between operands of one device. */
int gr_operand_copy(const gr_operand *src, const gr_operand *dst,
                    const gr_epilogue *epi, gr_status *st);
int gr_device_ready(int dev, gr_status *st);   /* opened (takes gr_lock) */
/* Use the caller's context and in-order queue (PyOpenCL's) for device dev
 * from now on.  Refused while device memory of the old context is in use. */
int gr_device_adopt(int dev, cl_command_queue q, gr_status *st);
int gr_device_of_context(cl_context ctx);      /* index, or -1          */
int gr_device_of_queue(cl_command_queue q);    /* index, or -1          */
int gr_queue_finish(cl_command_queue q, gr_status *st);
/* DLPack on CPU devices: map a block for host access, unmap it; host
 * memory as a block used in place (NULL on GPUs). */
int gr_block_map(gr_block *b, void **ptr, gr_status *st);
void gr_block_unmap(gr_block *b, void *ptr);
gr_block *gr_block_from_host(int dev, void *ptr, size_t nbytes, size_t *lead,
                             void (*on_free)(void *), void *ctx,
                             gr_status *st);
int gr_device_finish(int dev, int (*interrupted)(void *), void *ictx,
                     gr_status *st);
/* Tests of asynchrony: a user event the queue waits behind, and whether
 * earlier commands are still pending (no wait). */
int gr_gate_shut(int dev, cl_event *gate, gr_status *st);
void gr_gate_open(cl_event gate);
int gr_device_busy(int dev, gr_status *st);
/* Device-to-device copy bandwidth (benchmarks): ns of each of reps. */
int gr_copy_bandwidth(int dev, size_t nbytes, int reps, double *ns,
                      gr_status *st);

#endif
