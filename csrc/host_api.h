/*
 * gpured — the host path (issue 12): reductions and scans of host memory in
 * plain C, with the device kernels' semantics and accuracy, for calls too
 * small to be worth an OpenCL round trip.  No OpenCL call, no Python object
 * (safe to run without the GIL), no allocation but one heap block for
 * column layouts wider than 512 segments (and the states of a call cut
 * for several threads).  csrc/host.c has the details.
 */
#ifndef GPURED_HOST_H
#define GPURED_HOST_H

#include "gpured.h"

typedef struct {
    gr_op op;     /* GR_ADD, GR_MUL, GR_MIN, GR_MAX, GR_ARGMIN, GR_ARGMAX, GR_ALL, GR_ANY */
    gr_dtype t;   /* input dtype */
    gr_dtype r;   /* result dtype: NumPy's (sum/prod of int32 -> int64 etc., given by the
                     caller); argmin/argmax: GR_INT64; all/any: GR_BOOL */
    int wide;     /* 1: float32 add (reductions) and float32 add/mul (scans) accumulate in
                     double, as the device does where it has fp64; 0: float32 with TwoSum
                     compensation for add, plain float for mul */
    int threads;  /* a call of many bytes: up to this many threads (hostpar.c's
                     pool); 0 or 1: the calling thread alone */
    size_t grain; /* ... in tasks of at least this many bytes (0: GR_HOST_GRAIN) */
} gr_host_op;
#define GR_HOST_GRAIN (128 << 10)

/* out[m] = reduction of in[m*seg_stride + i*elem_stride], i < L, for m < M.
 * Strides in elements (may be negative or zero), in points at element (0,0).
 * out: M results of type r, contiguous.  Returns 0, or -1 if (op, t, r) is
 * not supported (then nothing is written).  L may be 0 only for ops with an
 * identity (add, mul, all, any): the identity is written. */
int gr_host_reduce(const gr_host_op *o, const void *in, size_t M, size_t L,
                   ptrdiff_t seg_stride, ptrdiff_t elem_stride, void *out);

/* out[m*oss + i*oes] = inclusive (or exclusive: identity first) scan along i of
 * in[m*ss + i*es].  ops: GR_ADD, GR_MUL, GR_MIN, GR_MAX; r as NumPy's cumsum/cumprod
 * (cummin/cummax keep t; the caller passes r == t).  Returns 0 or -1. */
int gr_host_scan(const gr_host_op *o, int exclusive, const void *in, size_t M,
                 size_t L, ptrdiff_t ss, ptrdiff_t es, void *out,
                 ptrdiff_t oss, ptrdiff_t oes);

/* Element i of (in, dtype t) as double (C's conversions). */
double gr_host_as_double(const void *in, gr_dtype t, ptrdiff_t i);

/* var (mode 1) or std (2) of one row: in[i*es], i < L, of dtype t (nan:
 * NaNs skipped), NumPy's two passes in double, over max(n - ddof, 0);
 * mode 3: the mean (nanmean), the first pass only.  *count (if not
 * NULL): n, the elements summed. */
double gr_host_var(const void *in, gr_dtype t, size_t L, ptrdiff_t es,
                   int nan, double ddof, int mode, double *count);

/* Elements of one row in[i*es], i < L, of dtype t that are nonzero
 * (valid 0: count_nonzero, NaN counts) or not NaN (valid 1). */
uint64_t gr_host_count(const void *in, gr_dtype t, size_t L, ptrdiff_t es,
                       int valid);

#endif
