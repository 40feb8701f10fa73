/*
 * gpured — the dispatch layer's own header: what its files share among
 * themselves (layouts and views, uploads and deferred frees, the host
 * finishing, each family's driver).  Included by csrc/dispatch*.c,
 * host_epilogue.c and blocks.c only; gpured.h holds what the layer offers
 * the layer above (gr_dispatch, the byte operations).
 *
 *   dispatch.c              gr_dispatch: which family's driver
 *   dispatch_common.c       the hallway: strides and layouts, reductions'
 *                           views, gathers, host memory, uploads that do
 *                           not wait, deferred frees, the device's lock
 *   host_epilogue.c         NumPy-exact finishing on the host: casts into
 *                           results, NaN replacement, ptp's difference,
 *                           masked elements, nanvar's count check
 *   dispatch_reduce.c       reductions on a device (run_reduce)
 *   dispatch_reduce_host.c  reductions on the host path (host.c's loops)
 *   dispatch_segments.c     reduceat (run_segments)
 *   dispatch_scan.c         scans (run_scan, the streamed 1-D scan)
 *   dispatch_elementwise.c  NumPy's ufuncs on Arrays (gr_ew_run; its own
 *                           header: elementwise.h)
 *   dispatch_bykey.c        sum_by_key, reduce_by_key, scan_by_key
 *   blocks.c                byte operations on blocks and devices
 */
#ifndef GPURED_DISPATCH_H
#define GPURED_DISPATCH_H

#include "gpured.h"
#include "host_api.h"

static inline size_t isz_of(gr_dtype t) { return (size_t)gr_dtypes[t].size; }
/* nan* functions act on float elements only (integers have no NaN: the
 * plain function's kernels and host loops) */
static inline int nan_floats(const gr_request *req, gr_dtype t)
{
    return req->nan && gr_dtypes[t].is_float;
}

/* var/std's NaN rule (gr_accum.nan): 1 nanvar/nanstd of floats (NaN
 * skipped, NaN where n - ddof <= 0); 2 var/std with where= (counted as
 * nanvar: a masked-out element as NaN, a kept NaN as +inf; finished as
 * var); else 0. */
static inline int var_nan(const gr_request *req, gr_dtype t)
{
    if (nan_floats(req, t)) {
        return 1;
    }
    return (req->var == 1 || req->var == 2) && req->mask.present ? 2 : 0;
}

/* A reduction's view of its input: M x L with element strides from base
 * (element index in the operand's memory: host pointer or block offset). */
typedef struct {
    gr_layout lay;
    ptrdiff_t base;        /* elements from the operand's element 0       */
    ptrdiff_t gbase;       /* where the gather of a copy starts           */
    int nk;                /* kept dims (non-unit), outer to inner          */
    size_t kshape[GR_MAXDIMS];
    ptrdiff_t kstr[GR_MAXDIMS];
    int nr;                /* reduced dims (non-unit), in visiting order   */
    size_t rshape[GR_MAXDIMS];
    ptrdiff_t rstr[GR_MAXDIMS];
    int ok;                /* the layout exists without a copy            */
} red_view;

/* dispatch_exact.c: sum/mean/nansum/nanmean with exact=True. */
int dp_run_exact(gr_request *req, gr_result *res, gr_status *st);

/* ---------------------------------------------------- dispatch_common.c */

int dp_elem_strides(const gr_operand *o, ptrdiff_t *es);
int dp_collapse(const size_t *shape, const ptrdiff_t *str, int n,
                size_t *N, ptrdiff_t *s);
void dp_host_gather(char *dst, const char *src, int n,
                    const size_t *shape, const ptrdiff_t *bstr,
                    size_t isz);
void dp_host_scatter(char *dst, const char *src, int n,
                     const size_t *shape, const ptrdiff_t *bstr,
                     size_t isz);
void *dp_aligned_alloc_bytes(size_t n);
int dp_interrupted(const gr_request *req);
int dp_stop(gr_status *st);
void dp_deferred_add(cl_event ev, void *p);
int dp_upload_owned(gr_device *d, cl_mem mem, void *cp, size_t n,
                    gr_status *st);
int dp_upload_nowait(gr_device *d, cl_mem mem, const void *src, size_t n,
                     gr_status *st);
int dp_read_unlocked(gr_device *d, cl_mem m, size_t off, size_t n,
                     void *dst, gr_status *st);
gr_device *dp_dev_begin(gr_request *req, gr_status *st);
int dp_out_geometry(const gr_operand *o, size_t *shape, ptrdiff_t *str);
void dp_red_view_of(const gr_request *req, red_view *v);
int dp_red_gather_dims(const red_view *v, size_t *shape, ptrdiff_t *str);
size_t dp_packed_strides(int n, const size_t *shape, ptrdiff_t *cstr);
int dp_copy_packed(gr_device *d, cl_mem src, gr_dtype s, cl_mem dst,
                   gr_dtype t, size_t doff, int on, const size_t *oshape,
                   const ptrdiff_t *ostr, const gr_epilogue *epi,
                   gr_status *st);
int dp_gather_device(gr_device *d, const gr_operand *in, ptrdiff_t gbase,
                     int gn, const size_t *gshape, const ptrdiff_t *gstr,
                     gr_dtype t, gr_block **tmp, ptrdiff_t *cstr,
                     gr_status *st);
void dp_gather_rows(const red_view *v, const char *src, size_t isz,
                    char *dst);
int dp_split_dims(const gr_operand *o, uint64_t axes, size_t *shape,
                  ptrdiff_t *bstr);
void dp_gather_masked(const gr_request *req, char *dst, char *wdst);

/* ------------------------------------------------------ host_epilogue.c */

void dp_put_double(void *p, gr_dtype t, size_t i, double x, int f32);
void dp_replace_nan(void *p, gr_dtype t, size_t M, size_t L, gr_op op,
                    unsigned char *allnan);
void dp_ptp_finish(char *y, const char *z, gr_dtype t, size_t M);
void dp_put_masked(void *p, gr_dtype t, size_t i, gr_op op, int nan);
void dp_nanvar_dof(const gr_request *req, const red_view *v,
                   const char *hptr, const char *wptr, gr_dtype t,
                   gr_result *res);

void dp_host_allnan(char *y, gr_dtype ct, size_t M,
                    const unsigned char *allnan);
void dp_host_neg0(char *y, gr_dtype ct, size_t M, const char *base,
                  ptrdiff_t ss, ptrdiff_t es, size_t Lh, size_t isz);
int dp_host_fold_initial(const gr_request *req, gr_dtype ct, int fp64,
                         const char *y, size_t M, gr_status *st);
void dp_host_mean(const gr_request *req, const char *y, gr_dtype ct,
                  size_t M);

/* ------------------------------------------------ dispatch_reduce_host.c */

int dp_reduce_on_host(const gr_request *req, const red_view *v,
                      gr_result *res, gr_status *st);
int dp_masked_on_host(const gr_request *req, const red_view *v,
                      gr_result *res, gr_status *st);

/* ------------------------------------------- the families' drivers */

int dp_run_reduce(gr_request *req, gr_result *res, gr_status *st);
int dp_run_segments(gr_request *req, gr_result *res, gr_status *st);
int dp_run_scan(gr_request *req, gr_result *res, gr_status *st);
int dp_run_bykey(gr_request *req, gr_result *res, gr_status *st);

#endif
