/*
 * gpured — dispatch layer: NumPy-exact finishing on the host.  What the
 * drivers do to host results after a kernel or a host loop, and to host
 * copies before one: C's casts into a result element (put_double), nan*'s
 * replacement of NaNs, ptp's max - min, a masked-out element's stand-in,
 * the -0.0 of float sums with an initial, the fold of an initial of
 * another dtype, mean's division, and nanvar's count check (NumPy's
 * warning).
 */

#include "dispatch_common.h"
#include "hostpar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The NaNs of f[0..n) replaced by rep; how many there were. */
#define DEF_NAN_RUN(NAME, T)                                                 \
    static size_t NAME(T *f, size_t n, T rep)                                \
    {                                                                        \
        size_t k = 0;                                                        \
        for (size_t i = 0; i < n; ++i) {                                     \
            const int z = isnan(f[i]);                                       \
            k += (size_t)z;                                                  \
            f[i] = z ? rep : f[i];                                           \
        }                                                                    \
        return k;                                                            \
    }
DEF_NAN_RUN(nan_run_f32, float)
DEF_NAN_RUN(nan_run_f64, double)

/* Write double x as element i of type t (C's conversions: the casts
 * NumPy makes with casting="unsafe"); host.c's gr_host_as_double reads. */
void dp_put_double(void *p, gr_dtype t, size_t i, double x, int f32)
{
    switch (t) {
    case GR_BOOL: ((unsigned char *)p)[i] = x != 0; break;
    case GR_INT8: ((int8_t *)p)[i] = (int8_t)(int64_t)x; break;
    case GR_UINT8: ((uint8_t *)p)[i] = (uint8_t)(int64_t)x; break;
    case GR_INT16: ((int16_t *)p)[i] = (int16_t)(int64_t)x; break;
    case GR_UINT16: ((uint16_t *)p)[i] = (uint16_t)(int64_t)x; break;
    case GR_INT32: ((int32_t *)p)[i] = (int32_t)(int64_t)x; break;
    case GR_UINT32: ((uint32_t *)p)[i] = (uint32_t)(int64_t)x; break;
    case GR_INT64: ((int64_t *)p)[i] = (int64_t)x; break;
    case GR_UINT64: ((uint64_t *)p)[i] = (uint64_t)x; break;
    case GR_FLOAT32: ((float *)p)[i] = (float)x; break;
    default: ((double *)p)[i] = f32 ? (double)(float)x : x; break;
    }
}

/* nan* functions on the host path: M rows of L contiguous elements of
 * float type t with every NaN replaced, in place, by the operator's
 * replacement (NumPy's _replace_nan: 1 for products, 0 for sums, +inf
 * for nanmin/nanargmin, -inf for nanmax/nanargmax).  allnan (M flags, or
 * NULL) says which rows held NaNs only: nanmin/nanmax give NaN there. */
void dp_replace_nan(void *p, gr_dtype t, size_t M, size_t L, gr_op op,
                    unsigned char *allnan)
{
    const double rep = op == GR_MUL ? 1.0
                       : op == GR_MIN || op == GR_ARGMIN ? INFINITY
                       : op == GR_MAX || op == GR_ARGMAX ? -INFINITY
                                                         : 0.0;
    /* blocks of GR_HOST_STOP_BYTES, Ctrl-C's check between (issue 39: a
     * nan* copy of 1 GiB is ~0.1-0.3 s here); stopped, the rest is left
     * (the call's result is dropped) */
    const size_t blk = GR_HOST_STOP_BYTES / 8;
    for (size_t m = 0; m < M; ++m) {
        size_t k = 0;
        for (size_t i0 = 0; i0 < L; i0 += blk) {
            const size_t n = L - i0 < blk ? L - i0 : blk;
            if (i0 > 0 && gr_par_stopped()) {
                return;
            }
            if (t == GR_FLOAT32) {
                k += nan_run_f32((float *)p + m * L + i0, n, (float)rep);
            } else if (t == GR_FLOAT64) {
                k += nan_run_f64((double *)p + m * L + i0, n, rep);
            }
        }
        if (allnan != NULL) {
            allnan[m] = k == L;
        }
    }
}

/* ptp's finish on the host: y[m] = y[m] - z[m] in dtype t (integers
 * wrap, as NumPy's subtraction; floats round once). */
void dp_ptp_finish(char *y, const char *z, gr_dtype t, size_t M)
{
    for (size_t m = 0; m < M; ++m) {
        switch (t) {
#define SUB(T, U)                                                            \
        ((T *)y)[m] = (T)(U)((U)((T *)y)[m] - (U)((const T *)z)[m]);         \
        break
        case GR_INT8: SUB(int8_t, uint8_t);
        case GR_UINT8: SUB(uint8_t, uint8_t);
        case GR_INT16: SUB(int16_t, uint16_t);
        case GR_UINT16: SUB(uint16_t, uint16_t);
        case GR_INT32: SUB(int32_t, uint32_t);
        case GR_UINT32: SUB(uint32_t, uint32_t);
        case GR_INT64: SUB(int64_t, uint64_t);
        case GR_UINT64: SUB(uint64_t, uint64_t);
        case GR_FLOAT32:
            ((float *)y)[m] -= ((const float *)z)[m];
            break;
        case GR_FLOAT64:
            ((double *)y)[m] -= ((const double *)z)[m];
            break;
        default:
            break;
#undef SUB
        }
    }
}

/* Element i of type t set to what a masked-out element reads as: the
 * operator's identity (float sums -0.0, the exact one), or NaN where a
 * nan* form skips NaN rather than replacing it (nanmin/nanmax, and
 * nanmean, which does not count it): the kernels' GR_WOFF. */
void dp_put_masked(void *p, gr_dtype t, size_t i, gr_op op, int nan)
{
    const size_t sz = isz_of(t);
    char *e = (char *)p + i * sz;
    if (nan) {
        dp_put_double(p, t, i, NAN, 0);
    } else if (op == GR_ADD || op == GR_ANY) {
        dp_put_double(p, t, i, gr_dtypes[t].is_float ? -0.0 : 0.0, 0);
    } else if (op == GR_MUL || op == GR_ALL) {
        dp_put_double(p, t, i, 1.0, 0);
    } else if (gr_dtypes[t].is_float) {
        dp_put_double(p, t, i, op == GR_MIN ? INFINITY : -INFINITY, 0);
    } else {
        /* integer extremes: all ones (max of unsigned), 0 (its min), or
         * the sign bit's pattern (signed, little-endian) */
        const int hi = op == GR_MIN;
        if (t == GR_BOOL) {
            e[0] = (char)hi;
        } else if (!gr_dtypes[t].is_signed) {
            memset(e, hi ? 0xff : 0, sz);
        } else {
            memset(e, hi ? 0xff : 0, sz);
            e[sz - 1] = (char)(hi ? 0x7f : 0x80);
        }
    }
}

/* nanvar/nanstd of host input into host results: NumPy warns where some
 * slice's count n has n - ddof <= 0, and the kernels made exactly those
 * results nan (or the data did: inf - inf): those slices are counted
 * here, on the host. */
void dp_nanvar_dof(const gr_request *req, const red_view *v,
                   const char *hptr, const char *wptr, gr_dtype t,
                   gr_result *res)
{
    const ptrdiff_t ss = v->lay.seg_stride, es = v->lay.elem_stride;
    const int vn = var_nan(req, t);
    for (size_t m = 0; m < v->lay.M && !res->dof_bad; ++m) {
        /* (var with where=: inf or nan there) */
        const double r = gr_host_as_double(req->out.host, req->rt,
                                           (ptrdiff_t)m);
        if (vn == 2 ? !isfinite(r) : isnan(r)) {
            const char *row = hptr + (ptrdiff_t)m * ss * (ptrdiff_t)isz_of(t);
            uint64_t n = 0;
            if (wptr == NULL) {
                n = gr_host_count(row, t, v->lay.L, es, 1);
            } else {
                /* where=: the elements the mask keeps (bytes beside
                 * them, the same layout) that are not NaN */
                const char *wrow = wptr + (ptrdiff_t)m * ss;
                for (size_t i = 0; i < v->lay.L; ++i) {
                    const ptrdiff_t k = (ptrdiff_t)i * es;
                    n += wrow[k] &&
                         (vn == 2 || !isnan(gr_host_as_double(row, t, k)));
                }
            }
            res->dof_bad = (double)n - req->ddof <= 0.0;
        }
    }
}

/* The results of rows that held NaNs only (allnan: M flags, or NULL) made
 * NaN: nanmin/nanmax of nothing but NaN. */
void dp_host_allnan(char *y, gr_dtype ct, size_t M,
                    const unsigned char *allnan)
{
    for (size_t m = 0; allnan != NULL && m < M; ++m) {
        if (allnan[m]) {
            dp_put_double(y, ct, m, NAN, 0);
        }
    }
}

/* host.c's sums start from +0.0; NumPy's fold starts from the initial: a
 * sum of -0.0s only (initial included: M rows of Lh from base, strides
 * ss, es, elements of isz bytes) is -0.0. */
void dp_host_neg0(char *y, gr_dtype ct, size_t M, const char *base,
                  ptrdiff_t ss, ptrdiff_t es, size_t Lh, size_t isz)
{
    for (size_t m = 0; m < M; ++m) {
        if (gr_host_as_double(y, ct, m) != 0.0) {
            continue;
        }
        int neg = 1;
        for (size_t i = 0; neg && i < Lh; ++i) {
            double x = gr_host_as_double(base + (m * ss + i * es) * isz, ct, 0);
            neg = x == 0.0 && signbit(x);
        }
        if (neg) {
            dp_put_double(y, ct, m, -0.0, 0);
        }
    }
}

/* An initial of another dtype: [initial, row's result] folded in the
 * result dtype ct into req->out.host; 0, -1 (st set), or 1: host.c lacks
 * the operator. */
int dp_host_fold_initial(const gr_request *req, gr_dtype ct, int fp64,
                         const char *y, size_t M, gr_status *st)
{
    const gr_host_op o2 = {req->op, ct, ct, fp64};
    const size_t csz = isz_of(ct);
    char *z = malloc(2 * M * csz + 1);
    int rc = 0;
    if (z == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    for (size_t m = 0; m < M; ++m) {
        memcpy(z + 2 * m * csz, req->initial, csz);
        memcpy(z + (2 * m + 1) * csz, y + m * csz, csz);
    }
    if (gr_host_reduce(&o2, z, M, 2, 2, 1, req->out.host) != 0) {
        rc = 1;
    }
    free(z);
    return rc;
}

/* mean: the sum (ct) divided in double, rounded once to rt. */
void dp_host_mean(const gr_request *req, const char *y, gr_dtype ct,
                  size_t M)
{
    for (size_t m = 0; m < M; ++m) {
        dp_put_double(req->out.host, req->rt, m,
                      gr_host_as_double(y, ct, m) / req->div, 0);
    }
}
