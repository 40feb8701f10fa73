/*
 * gpured — the host path (issue 12): reductions and scans of host memory in
 * plain C, so that small calls need no OpenCL call at all.
 *
 * The answer is the device's (kernels/common.cl, reduce.cl, scan.cl; the
 * accumulators of accum.c gr_accum_for):
 *
 *   integer add/mul   each element cast to the result type as NumPy casts it,
 *                     arithmetic wrapping like NumPy's.  Done in uint64_t
 *                     whatever the result's size: arithmetic modulo 2^64 is
 *                     also arithmetic modulo 2^8/2^16/2^32, so truncating the
 *                     64-bit result at the end is the narrow result.
 *   float32 add       wide: in double, rounded once at the end (scans: every
 *                     prefix rounded from the double prefix); not wide: float
 *                     with TwoSum compensation.
 *   float64 add       TwoSum (Knuth) compensation: state (v, x) with
 *                     v + x == the exact sum of what was folded, up to x's
 *                     own rounding; the result is v + x (v if v is infinite).
 *   float mul         in the result type (reductions); scans of float32 in
 *                     double when wide.
 *   min/max           NaN propagates (the result is the first NaN).  Between
 *                     equal values NumPy's sequential rule (np.minimum of
 *                     (acc, y), as in accumulate, and in reduce of short rows
 *                     and of columns) takes the later one, which only shows
 *                     for -0.0 / +0.0: a zero result has the sign of the
 *                     segment's last zero.  (numpy's reduce of a long row
 *                     follows its SIMD lanes; today's device keeps the first
 *                     zero: those two differ from this only in that sign.)
 *   argmin/argmax     first index of the extreme, or of the first NaN.
 *   all/any           nonzero test (NaN is true, -0.0 false), early exit.
 *   casts             an input of another dtype than the result's is cast
 *                     to the result's first, as NumPy does (an int64 summed
 *                     as float32 is rounded to float32, then summed in
 *                     double; today's device widens it to double directly).
 *   scans             cumsum/cumprod with the accumulators above, every
 *                     prefix finished (rounded) on its own; a float cumsum
 *                     starts from -0.0, the additive identity that keeps
 *                     cumsum([-0.0, ...])[0] == -0.0 as in NumPy; cummin /
 *                     cummax as np.minimum.accumulate (NaN sticks); an
 *                     exclusive scan writes the identity (0, 1, the dtype's
 *                     max or +inf for min, min or -inf for max), then the
 *                     inclusive prefixes of the first L - 1 elements.
 *
 * Layouts.  A call is M segments of L elements (strides in elements):
 *
 *   rows     elem_stride 1: each segment folded by a kernel over contiguous
 *            memory (explicit SIMD, 4 or 8 independent vector accumulators;
 *            float cumsums as 4 interleaved prefix chains, see SUB)
 *   columns  seg_stride 1, |elem_stride| >= M: up to COLB_MAX adjacent
 *            segments folded together, row after row, so memory is read in
 *            order; one vector lane per segment (accumulators in scratch:
 *            the stack up to COLB segments, else one heap block)
 *   other    chunks of CH elements gathered (and cast, where the kernel's
 *            input type is not t) into a stack buffer, then the rows kernel
 *
 * SIMD: GCC vector extensions (32-byte vectors), each kernel built twice by
 * target_clones (AVX2 and the x86-64 baseline), picked at load time.  Vector
 * code lives in macros, never in functions taking vectors by value (their
 * ABI differs between the clones).  No -ffast-math anywhere: TwoSum depends
 * on IEEE rounding of each operation (and -std=c99 turns FP contraction off).
 * The column sums with TwoSum have a third clone, x86-64-v3, where four of
 * TwoSum's seven adds run as exact fmas (TWOSUM_F: the same bits).  Where
 * the CPU has AVX-512 (F, DQ, VL), float64 and (wide) float32 column sums
 * run 512-bit kernels instead, picked at run time (colz: Fast2Sum ordered
 * by vrangepd for float64, the same sums), and so do float rows' min, max,
 * argmin and argmax (DEF_MMZ, DEF_ARGZ: one vmaxps/vminps a vector) and
 * float32 rows summed in double from 256 elements (fsumwz_fold_f32).
 *
 * Threads.  A call of many bytes (gr_host_op.threads > 1, as place.c's
 * model decides) is cut into tasks for hostpar.c's pool: see "several
 * threads" in host_reduce.c.  On the 2-core machine this was tuned on a
 * second thread measured slower with threads made per call (2026-11-26:
 * pthread_create + join 25-150 us); the pool keeps its workers, and the
 * model uses it only where 4 CPUs or more are there (or
 * GPURED_HOST_THREADS says so).
 *
 * Files.  host_api.h is the layer's face; host_loops.h its private header
 * (dtype names, vectors, states, TwoSum, the clone switches, what the
 * files share).  The typed loops: host_loops.c (add, mul: integer, wide,
 * compensated, AVX-512 column sums, products), host_minmax.c (min, max,
 * argmin, argmax, all, any); the drivers: host_reduce.c (gr_host_reduce,
 * gr_host_var, gr_host_count), host_scan.c (scan kernels and
 * gr_host_scan).  This file holds what they share: the kernels' pick for
 * (op, t, r), states merged, the column kernels' room,
 * the thread cut, gr_host_as_double.
 */
#include "host_loops.h"

/* Fills *k for (op, t, r); -1 if unsupported.  The kernels by family:
 * host_loops.c (add, mul), host_minmax.c (the rest). */
int gr_host_red_impl(const gr_host_op *o, gr_red_impl *k)
{
    memset(k, 0, sizeof *k);
    k->kt = KT_SAME;
    k->ksize = gr_dtypes[o->t].size;
    k->init.i = -1;
    switch (o->op) {
    case GR_ADD:
    case GR_MUL:
        return gr_host_sum_impl(o, k);
    case GR_MIN:
    case GR_MAX:
        return gr_host_minmax_impl(o, k);
    case GR_ARGMIN:
    case GR_ARGMAX:
        return gr_host_arg_impl(o, k);
    case GR_ALL:
    case GR_ANY:
        return gr_host_logical_impl(o, k);
    default:
        return -1;
    }
}
/* b strictly better than a for min (lt) or max: the value of dtype t. */
static int val_better(gr_dtype t, int lt, const gr_val *b, const gr_val *a)
{
    switch (t) {
#define VB(TAG, X)                                                           \
    case TAG:                                                                \
        return lt ? b->X < a->X : b->X > a->X;
        VB(GR_BOOL, b)
        VB(GR_INT8, i8)
        VB(GR_UINT8, u8)
        VB(GR_INT16, i16)
        VB(GR_UINT16, u16)
        VB(GR_INT32, i32)
        VB(GR_UINT32, u32)
        VB(GR_INT64, i64)
        VB(GR_UINT64, u64)
        VB(GR_FLOAT32, f32)
        VB(GR_FLOAT64, f64)
#undef VB
    default:
        return 0;
    }
}

static int val_nan(gr_dtype t, const gr_val *v)
{
    return (t == GR_FLOAT32 && v->f32 != v->f32) ||
           (t == GR_FLOAT64 && v->f64 != v->f64);
}

/* a = a merged with b, the state of the elements after a's. */
void gr_host_merge(const gr_red_impl *k, const gr_host_op *o, gr_hstate *a,
                   const gr_hstate *b)
{
    const int lt = o->op == GR_MIN || o->op == GR_ARGMIN;
    switch (k->fin) {
    case FIN_INT:
        a->v.u64 = o->op == GR_MUL ? a->v.u64 * b->v.u64 : a->v.u64 + b->v.u64;
        break;
    case FIN_F32W:
        a->v.f64 += b->v.f64;
        break;
    case FIN_F32C:
        TWOMERGE(float, a->v.f32, a->x.f32, b->v.f32, b->x.f32);
        break;
    case FIN_F64C:
        TWOMERGE(double, a->v.f64, a->x.f64, b->v.f64, b->x.f64);
        break;
    case FIN_F32:
        a->v.f32 *= b->v.f32;
        break;
    case FIN_F64:
        a->v.f64 *= b->v.f64;
        break;
    case FIN_MINMAX:
        /* v: the extreme of the elements that are not NaN; flag: a NaN */
        a->flag |= b->flag;
        if (val_better(o->t, lt, &b->v, &a->v)) {
            a->v = b->v;
        }
        break;
    case FIN_ARG:
        /* decided (a NaN -- the column kernels keep it as the value; an
         * integer's extreme) stays; else strictly better, or b decided,
         * takes over */
        if (!(a->flag || val_nan(o->t, &a->v)) && b->i >= 0 &&
            (a->i < 0 || b->flag || val_nan(o->t, &b->v) ||
             val_better(o->t, lt, &b->v, &a->v))) {
            *a = *b;
        }
        break;
    case FIN_ALL:
    case FIN_ANY:
        a->flag |= b->flag;
        break;
    }
}

size_t gr_host_col_room(size_t M, gr_colbuf *sb, gr_hstate **st,
                        void **scratch, void **heap)
{
    const size_t B = M < COLB_MAX ? M : COLB_MAX;
    *heap = NULL;
    *st = sb->st;
    *scratch = sb->scratch;
    if (M <= COLB) {
        return M;
    }
    *heap = malloc(B * sizeof(gr_hstate) + COL_SCRATCH(B) + 32);
    if (*heap == NULL) {
        return COLB;
    }
    *st = (gr_hstate *)*heap;
    /* scratch after the states, rounded up to 32 bytes */
    *scratch = (void *)(((uintptr_t)(*st + B) + 31) & ~(uintptr_t)31);
    return B;
}

/* Tasks for a call of `bytes` on o->threads threads: one per grain bytes,
 * at most 4 a thread; 0 where it is not cut (one thread, under two). */
size_t gr_host_par_tasks(const gr_host_op *o, size_t bytes)
{
    const size_t n = bytes / (o->grain ? o->grain : GR_HOST_GRAIN);
    if (o->threads <= 1 || n < 2) {
        return 0;
    }
    return n < 4 * (size_t)o->threads ? n : 4 * (size_t)o->threads;
}

/* n items cut into about `parts` ranges of a multiple of `align` items:
 * *per items a range (the last one shorter); returns how many ranges. */
size_t gr_host_ranges(size_t n, size_t parts, size_t align, size_t *per)
{
    *per = gr_host_div_up(gr_host_div_up(n, parts), align) * align;
    return gr_host_div_up(n, *per);
}

double gr_host_as_double(const void *in, gr_dtype t, ptrdiff_t i)
{
    const char *p = (const char *)in;
    switch (t) {
    case GR_BOOL: return ((const s_b *)p)[i] != 0;
    case GR_INT8: return ((const s_i8 *)p)[i];
    case GR_UINT8: return ((const s_u8 *)p)[i];
    case GR_INT16: return ((const s_i16 *)p)[i];
    case GR_UINT16: return ((const s_u16 *)p)[i];
    case GR_INT32: return ((const s_i32 *)p)[i];
    case GR_UINT32: return ((const s_u32 *)p)[i];
    case GR_INT64: return (double)((const s_i64 *)p)[i];
    case GR_UINT64: return (double)((const s_u64 *)p)[i];
    case GR_FLOAT32: return ((const s_f32 *)p)[i];
    default: return ((const s_f64 *)p)[i];
    }
}
