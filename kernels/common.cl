/*
 * gpured — shared building blocks for every kernel family.
 *
 * A program is this file plus one family file (reduce.cl, ...), preceded by a
 * block of #defines that csrc/ generates from a plan.  Every identifier here
 * is prefixed gr_/GR_ so that nothing collides with user or vendor names.
 *
 * Macros set by the host (csrc/reduce.c: gr_reduce_defines):
 *   GR_T     element type read by the first pass (e.g. float, uchar for bool)
 *   GR_AM    signed integer type of GR_A's size (masks of comparisons)
 *   GR_A     accumulator type (double for a float32 sum on fp64 devices, the
 *            unsigned twin of the result for integer add/mul so that overflow
 *            wraps as NumPy's does instead of being undefined behaviour)
 *   GR_R     result type written by the final pass
 *   GR_X     auxiliary state: the compensation term of a compensated sum, the
 *            index of argmin/argmax; absent (GR_HAS_X 0) for other operators
 *   GR_OP    one of the GR_OP_* below
 *   GR_CVT   how an element becomes an accumulator value (GR_CVT_*)
 *   GR_COMP  1: compensated (TwoSum) accumulation
 *   GR_VW    vector width of the main loads (1, 2, 4, 8, 16)
 *   GR_WG    work-group size (compile-time: local arrays and unrolled trees)
 *   GR_ILP   independent accumulators per work-item
 *   GR_VAR   1 var, 2 std: var/std's state (see below); 3 nanmean;
 *            4 mean(where=) / average(weights): a ratio of two sums
 *   GR_PTP   1: ptp, a max whose auxiliary state is the minimum
 *   GR_ELT   1 / 2: GR_T is float16 / bfloat16 storage (see GR_LD below)
 */
#if GR_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define GR_OP_ADD    0
#define GR_OP_MUL    1
#define GR_OP_MIN    2
#define GR_OP_MAX    3
#define GR_OP_ARGMIN 4
#define GR_OP_ARGMAX 5
#define GR_OP_ALL    6
#define GR_OP_ANY    7
/* A user-defined operator (kernels/custom.cl, gpured.ReductionKernel): the
 * defines bring GR_USER_MERGE(a, b) (merge state b into *a), GR_USER_IDENT
 * and GR_USER_IDENT_X (the identity), GR_USER_X (1: the auxiliary part x
 * is part of the state, e.g. logsumexp's (max, scaled sum)). */
#define GR_OP_USER   8
#ifndef GR_USER_ELEM_X
#define GR_USER_ELEM_X 0
#endif

#define GR_CVT_NONE  0 /* element is already an accumulator value       */
#define GR_CVT_TO_A  1 /* numeric conversion to the accumulator type    */
#define GR_CVT_WRAP  2 /* convert to the (signed) result, reinterpret A  */
#define GR_CVT_MASK  3 /* nonzero test -> all-ones / zero mask           */
#define GR_CVT_COUNT 4 /* nonzero test -> 1 / 0 (count_nonzero's sum)   */
#define GR_CVT_VALID 5 /* not-NaN test -> 1 / 0 (nanmean's count)      */
#define GR_CVT_USER  6 /* a user operator's map (gr_user_map1, scans)  */

#define GR_CAT_(a, b) a##b
#define GR_CAT(a, b) GR_CAT_(a, b)

/* GR_VEC(float) is float4 for GR_VW 4 and plain float for GR_VW 1. */
#if GR_VW == 1
#define GR_VEC(t) t
#define GR_VLOAD(p) (*(p))
#define GR_IOTA ((long)0)
#else
#define GR_VEC(t) GR_CAT(t, GR_VW)
#define GR_VLOAD(p) GR_CAT(vload, GR_VW)(0, (p))
#if GR_VW == 2
#define GR_IOTA ((long2)(0, 1))
#elif GR_VW == 4
#define GR_IOTA ((long4)(0, 1, 2, 3))
#elif GR_VW == 8
#define GR_IOTA ((long8)(0, 1, 2, 3, 4, 5, 6, 7))
#elif GR_VW == 16
#define GR_IOTA ((long16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif
#endif
#define GR_CONVERT(t, x) GR_CAT(convert_, t)(x)
#define GR_AS(t, x) GR_CAT(as_, t)(x)

/* Element reads of the first pass (GR_ELT, issue 40): 0 plain GR_T; 1
 * float16 stored as half, read with vload_half(N) (core OpenCL C 1.2, no
 * cl_khr_fp16); 2 bfloat16 stored as ushort bits, the upper half of a
 * float.  Both arrive as float (GR_TV, the value type): the accumulator is
 * float32 or wider and the result is never a half (csrc/accum.c). */
#ifndef GR_ELT
#define GR_ELT 0
#endif
#if GR_ELT == 1
#define GR_TV float
#define GR_LD(p, i) vload_half((i), (p))
#if GR_VW == 1
#define GR_VLOAD_T(p) vload_half(0, (p))
#else
#define GR_VLOAD_T(p) GR_CAT(vload_half, GR_VW)(0, (p))
#endif
#elif GR_ELT == 2
#define GR_TV float
#define GR_LD(p, i) as_float((uint)(p)[i] << 16)
#if GR_VW == 1
#define GR_VLOAD_T(p) as_float((uint)(*(p)) << 16)
#else
#define GR_VLOAD_T(p)                                                       \
    GR_AS(GR_VEC(float), GR_CONVERT(GR_VEC(uint), GR_VLOAD(p)) << 16)
#endif
#else
#define GR_TV GR_T
#define GR_LD(p, i) ((p)[i])
#define GR_VLOAD_T(p) GR_VLOAD(p)
#endif

/* Halves' plain sums and extremes (GR_HF, csrc gr_plan.hf): the main loops
 * read GR_LW = GR_VW * GR_HF halves as one naturally aligned vector of
 * GR_LWU uints (a vload of halves or ushorts is GR_LW 2-byte loads on
 * NVIDIA); sums (GR_HF 2, 4) add adjacent elements in float down to GR_VW
 * before the wide accumulator, the others (GR_HF 1) take them in order
 * (a float32 sum of two halves is exact but for exponents more than 13
 * apart, then within 2^-24 of it).  reduce.cl runs the unaligned head of
 * a chunk element by element. */
#ifndef GR_HF
#define GR_HALIGN 0
#define GR_LW GR_VW
#define GR_VLOAD_M(p) GR_VLOAD_T(p)
#else
#define GR_HALIGN 1 /* aligned loads: reduce.cl runs the head apart */
#define GR_UV GR_CAT(uint, GR_LWU)
#define GR_FU GR_CAT(float, GR_LWU)
inline GR_VEC(float) gr_hload(__global const GR_T *p)
{
    const GR_UV u = *(__global const GR_UV *)p;
#if GR_ELT == 2 && GR_HF > 1
    /* bfloat16 pairs: the upper halves of floats, in no particular order */
    const GR_FU f = GR_AS(GR_FU, u << 16) + GR_AS(GR_FU, u & (GR_UV)0xffff0000u);
#else
    uint w[GR_LWU]; /* the bits, read back as GR_LW 2-byte elements */
    GR_CAT(vstore, GR_LWU)(u, 0, w);
#if GR_ELT == 1
    const GR_CAT(float, GR_LW) h = GR_CAT(vload_half, GR_LW)(0, (const half *)w);
#else
    const GR_CAT(float, GR_LW) h = GR_AS(
        GR_CAT(float, GR_LW),
        GR_CONVERT(GR_CAT(uint, GR_LW), GR_CAT(vload, GR_LW)(0, (const ushort *)w))
            << 16);
#endif
#if GR_HF > 1
    const GR_FU f = h.even + h.odd;
#endif
#endif
#if GR_HF == 1
    return h; /* min/max, argmin/argmax: the elements in order */
#elif GR_HF == 2
    return f;
#elif GR_HF == 4
    return f.even + f.odd;
#else
#error "GR_HF is 1, 2 or 4"
#endif
}
#define GR_VLOAD_M(p) gr_hload(p)
#endif

#define GR_VA GR_VEC(GR_A)
#define GR_VM GR_VEC(GR_AM)

/* Element -> accumulator value, for scalars (S) and vectors of GR_VW (V). */
#if GR_CVT == GR_CVT_NONE
#define GR_CVT_S(x) (x)
#define GR_CVT_V(x) (x)
#elif GR_CVT == GR_CVT_TO_A
#define GR_CVT_S(x) ((GR_A)(x))
#define GR_CVT_V(x) GR_CONVERT(GR_VA, x)
#elif GR_CVT == GR_CVT_WRAP
#define GR_CVT_S(x) GR_AS(GR_A, (GR_R)(x))
#define GR_CVT_V(x) GR_AS(GR_VA, GR_CONVERT(GR_VEC(GR_R), x))
#elif GR_CVT == GR_CVT_MASK
/* Scalar comparisons give 1, vector ones -1: both are "nonzero" below. */
#define GR_CVT_S(x) ((GR_A)((x) != (GR_T)0))
#define GR_CVT_V(x) ((x) != (GR_VEC(GR_T))0)
#elif GR_CVT == GR_CVT_COUNT
/* count_nonzero: 1 per nonzero element (NaN counts, -0.0 does not); a
 * vector comparison's -1 negated (GR_VW 1 "vectors" are scalars: 1) */
#define GR_CVT_S(x) ((GR_A)((x) != (GR_T)0))
#if GR_VW == 1
#define GR_CVT_V(x) GR_CVT_S(x)
#else
#define GR_CVT_V(x) GR_CONVERT(GR_VA, -((x) != (GR_VEC(GR_T))0))
#endif
#elif GR_CVT == GR_CVT_USER
/* gpured.ScanKernel: the user's map, defined before this file */
#define GR_CVT_S(x) gr_user_map1(x)
#define GR_CVT_V(x) (x)
#elif GR_CVT == GR_CVT_VALID
/* nanmean's divisor: 1 per element that is not NaN (x == x) */
#define GR_CVT_S(x) ((GR_A)((x) == (x)))
#if GR_VW == 1
#define GR_CVT_V(x) GR_CVT_S(x)
#else
#define GR_CVT_V(x) GR_CONVERT(GR_VA, -((x) == (x)))
#endif
#endif

/* x != x is the NaN test for floats and constant false for integers. */
#define GR_ISNAN(x) ((x) != (x))

/* nan* functions (GR_NAN 1, float inputs): a NaN element reads as
 * GR_NANREP, as NumPy's _replace_nan does before it sums (0) or
 * multiplies (1): fused into the load, so every variant and the scans
 * see it, at no extra pass. */
#ifndef GR_NAN
#define GR_NAN 0
#endif
#ifndef GR_VAR
#define GR_VAR 0
#endif
#ifndef GR_PTP
#define GR_PTP 0
#endif
/* nanmin/nanmax are NumPy's fmin/fmax reductions: a NaN is skipped and
 * only a slice of NaNs stays NaN.  No replacement there: NaN is their
 * identity and the fold takes the element wherever the state is NaN
 * (GR_NANSKIP).  nanargmin/nanargmax replace NaN by +inf / -inf, as
 * NumPy's do (np.nanargmin([nan, inf]) is 0); their all-NaN ValueError
 * is the Python face's. */
#if GR_NAN && (GR_OP == GR_OP_MIN || GR_OP == GR_OP_MAX)
#define GR_NANSKIP 1
#else
#define GR_NANSKIP 0
#endif
#if GR_NAN && !GR_NANSKIP && !GR_VAR
#if GR_OP == GR_OP_MUL
#define GR_NANREP 1
#elif GR_OP == GR_OP_ARGMIN
#define GR_NANREP GR_A_MAXV
#elif GR_OP == GR_OP_ARGMAX
#define GR_NANREP GR_A_MINV
#else
#define GR_NANREP 0
#endif
#define GR_NANFIX(y, VT) GR_SEL((y), (VT)(GR_NANREP), GR_ISNAN(y))
#define GR_CVTN_S(x) GR_NANFIX(GR_CVT_S(x), GR_A)
#define GR_CVTN_V(x) GR_NANFIX(GR_CVT_V(x), GR_VA)
#else
#define GR_CVTN_S(x) GR_CVT_S(x)
#define GR_CVTN_V(x) GR_CVT_V(x)
#endif

/*
 * Accumulator state.  Every operator keeps a value v; compensated sums keep
 * the running error in x, argmin/argmax the segment-relative index in x.
 * The fold/merge macros below use only operators that work on scalars and
 * on vectors alike, so the same text folds a float and a float16.
 */
#if GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX
#define GR_X long
#define GR_HAS_X 1
#elif GR_OP == GR_OP_USER
#define GR_X GR_A
#define GR_HAS_X GR_USER_X
#elif GR_COMP || GR_VAR || GR_PTP
#define GR_X GR_A
#define GR_HAS_X 1
#else
#define GR_X GR_A
#define GR_HAS_X 0
#endif
#define GR_VX GR_VEC(GR_X)

typedef struct {
    GR_A v;
    GR_X x;
} gr_state;

/* Identity of each operator (for min/max: the dtype's extreme or +-inf).
 * Float sums in scans start from -0.0, the exact identity (-0.0 + x == x
 * for every x, signed zeros included): NumPy's cumsum([-0.0, 1.0]) begins
 * with -0.0.  Reductions keep +0.0, as np.sum([-0.0]) == +0.0 does,
 * except under an initial= (GR_NEG0): NumPy's fold then starts from it. */
#if GR_OP == GR_OP_USER
#define GR_IDENT_V ((GR_A)(GR_USER_IDENT))
#elif GR_NANSKIP
#define GR_IDENT_V ((GR_A)NAN)
#elif GR_OP == GR_OP_ADD && GR_A_FLOAT && (defined(GR_ITEMS) || (defined(GR_NEG0) && GR_NEG0))
#define GR_IDENT_V ((GR_A)(-0.0))
#elif GR_OP == GR_OP_ADD || GR_OP == GR_OP_ANY
#define GR_IDENT_V ((GR_A)0)
#elif GR_OP == GR_OP_MUL
#define GR_IDENT_V ((GR_A)1)
#elif GR_OP == GR_OP_ALL
#define GR_IDENT_V ((GR_A)-1)
#elif GR_OP == GR_OP_MIN || GR_OP == GR_OP_ARGMIN
#define GR_IDENT_V GR_A_MAXV
#else
#define GR_IDENT_V GR_A_MINV
#endif
#if GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX
#define GR_IDENT_X ((long)LONG_MAX)
#elif GR_PTP
#define GR_IDENT_X GR_A_MAXV
#elif GR_OP == GR_OP_USER
#define GR_IDENT_X ((GR_X)(GR_USER_IDENT_X))
#else
#define GR_IDENT_X ((GR_X)0)
#endif

/* Component-wise choice: (m ? b : a).  The ?: operator takes vector
 * conditions in OpenCL C (like select(), by the sign bit) and, unlike
 * select(), has no ambiguous scalar overloads. */
#define GR_SEL(a, b, m) ((m) ? (b) : (a))

/* "a is strictly better than b" for argmin/argmax: NaN beats everything. */
#if GR_OP == GR_OP_ARGMIN
#define GR_BETTER(a, b) (((a) < (b)) || (GR_ISNAN(a) && !GR_ISNAN(b)))
#else
#define GR_BETTER(a, b) (((a) > (b)) || (GR_ISNAN(a) && !GR_ISNAN(b)))
#endif
#define GR_SAME(a, b) (((a) == (b)) || (GR_ISNAN(a) && GR_ISNAN(b)))

/*
 * GR_FOLD(v, x, y, i, VT, XT, MT): fold value y (element index i) into
 * state (v, x) whose parts have the built-in types VT and XT (scalar or
 * vector); MT is the signed integer type of VT's size (comparison masks).
 * Elements reach a state in increasing index order, so for argmin/argmax a
 * strict comparison keeps the first occurrence.
 */
#if GR_VAR
/*
 * var/std (GR_VAR, an add of GR_A values): the state is the shifted sums
 * v = sum(y), x = sum(y * y) of y = element - K, where K is one element of
 * the segment (its first, or the host's for streamed input).  Both parts
 * merge by addition in every variant, collective and pass; the finish is
 * M2 = x - v * v / n, the sum of squared deviations (reduce.cl).  K is an
 * element of the segment, so (K - mean)^2 <= M2 and the term subtracted,
 * n (mean - K)^2, is at most n M2 (of order M2 wherever K lies within a
 * few standard deviations): no E[x^2] - E[x]^2 cancellation, whatever
 * the data's distance from 0 (values ~1e4 with spread 1 keep every digit
 * NumPy's two passes keep).  The kernels define
 * gr_kv (the shift of a vector fold) and gr_ks (of a scalar one).
 */
#if GR_NAN
/* nanvar: a NaN element adds nothing, and the folds count the others
 * (fused: no counting pass): gr_cv, the kernel's count of a vector fold
 * (GR_VC lanes, one per lane of the values), gr_cs of a scalar one.  A
 * vector comparison is -1 where true, a scalar one 1. */
#define GR_VAR_SKIP(d, y, VT) GR_SEL((d), (VT)0, GR_ISNAN(y))
#if GR_VW == 1
#define GR_VC ulong
#define GR_VAR_COUNT_V(y) (gr_cv += (ulong)((y) == (y)))
#else
#define GR_VC GR_VEC(long)
#define GR_VAR_COUNT_V(y) (gr_cv -= GR_CONVERT(GR_VC, (y) == (y)))
#endif
#define GR_VAR_COUNT_S(y) (gr_cs += (ulong)((y) == (y)))
#else
#define GR_VAR_SKIP(d, y, VT) (d)
#define GR_VAR_COUNT_V(y) ((void)0)
#define GR_VAR_COUNT_S(y) ((void)0)
#endif
#if GR_VAR == 3
/* nanmean (GR_VAR 3, with GR_NAN): the plain sum of the elements that are
 * not NaN and their count; x stays 0, the finish is v / n. */
#define GR_VAR_DEV(y, k) (y)
#define GR_VAR_SQ(x, d) ((void)0)
#define GR_VAR_SQ_S(x, d) ((void)0)
#elif GR_VAR == 4
/* mean(where=) and average(weights) (GR_VAR 4, with GR_WHERE 1 or 2 in
 * reduce.cl): v sums the elements as the loads give them (a masked-out
 * one as 0, a weighted one times its weight), x sums the second operand
 * (the mask as 0 / 1, the weights), which the loads leave in gr_wv
 * (vector folds) or gr_ws (scalar ones); the finish is v / x.  One pass:
 * no counting pass, no host division. */
#define GR_VAR_DEV(y, k) (y)
#define GR_VAR_SQ(x, d) ((x) += gr_wv)
#define GR_VAR_SQ_S(x, d) ((x) += gr_ws)
#else
#define GR_VAR_DEV(y, k) ((y) - (k))
#define GR_VAR_SQ(x, d) ((x) = fma((d), (d), (x)))
#define GR_VAR_SQ_S(x, d) GR_VAR_SQ(x, d)
#endif
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                      \
    do {                                                                     \
        VT y_ = (y);                                                         \
        VT d_ = GR_VAR_SKIP(GR_VAR_DEV(y_, gr_kv), y_, VT);                  \
        GR_VAR_COUNT_V(y_);                                                  \
        (v) += d_;                                                           \
        GR_VAR_SQ(x, d_);                                                    \
    } while (0)
#define GR_FOLD_S(s, y, i)                                                   \
    do {                                                                     \
        GR_A y_ = (y);                                                       \
        GR_A d_ = GR_VAR_SKIP(GR_VAR_DEV(y_, gr_ks), y_, GR_A);              \
        GR_VAR_COUNT_S(y_);                                                  \
        (s).v += d_;                                                         \
        GR_VAR_SQ_S((s).x, d_);                                              \
    } while (0)
#elif GR_PTP
/* ptp (GR_PTP, an operator GR_OP_MAX): v folds as max, x as min, each with
 * their own rules (a NaN stays in both); one read of every element.  The
 * finish is v - x in the input's dtype (gr_finish). */
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                      \
    do {                                                                     \
        VT y_ = (y);                                                         \
        (v) = GR_SEL((v), y_, (y_ >= (v)) || GR_ISNAN(y_));                  \
        (x) = GR_SEL((x), y_, (y_ <= (x)) || GR_ISNAN(y_));                  \
    } while (0)
#elif GR_OP == GR_OP_ADD && GR_COMP
/* Knuth's TwoSum: t + e == v + y exactly; e collects what t lost. */
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                          \
    do {                                                                     \
        VT t_ = (v) + (y);                                                   \
        VT b_ = t_ - (v);                                                    \
        (x) += ((v) - (t_ - b_)) + ((y) - b_);                               \
        (v) = t_;                                                            \
    } while (0)
#elif GR_OP == GR_OP_ADD
#define GR_FOLD(v, x, y, i, VT, XT, MT) ((v) += (y))
#elif GR_OP == GR_OP_MUL
#define GR_FOLD(v, x, y, i, VT, XT, MT) ((v) *= (y))
#elif GR_NANSKIP && GR_OP == GR_OP_MIN
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                      \
    ((v) = GR_SEL((v), (y), ((y) <= (v)) || GR_ISNAN(v)))
#elif GR_NANSKIP
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                      \
    ((v) = GR_SEL((v), (y), ((y) >= (v)) || GR_ISNAN(v)))
#elif GR_OP == GR_OP_MIN
/* min/max: on ties the later element wins (NumPy's np.minimum(a, b) gives
 * b unless a < b: min([0.0, -0.0]) is -0.0); a NaN stays. */
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                      \
    ((v) = GR_SEL((v), (y), ((y) <= (v)) || GR_ISNAN(y)))
#elif GR_OP == GR_OP_MAX
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                      \
    ((v) = GR_SEL((v), (y), ((y) >= (v)) || GR_ISNAN(y)))
#elif GR_OP == GR_OP_USER
/* kernels/custom.cl folds elements through gr_merge only */
#define GR_FOLD(v, x, y, i, VT, XT, MT) ((void)0)
#elif GR_OP == GR_OP_ALL
#define GR_FOLD(v, x, y, i, VT, XT, MT) ((v) &= (y))
#elif GR_OP == GR_OP_ANY
#define GR_FOLD(v, x, y, i, VT, XT, MT) ((v) |= (y))
#else /* ARGMIN / ARGMAX */
/* A tie with the identity (x == LONG_MAX) takes the element's index.
 * m_ is the choice as a mask the size of the value, xm_ the size of x. */
#define GR_FOLD(v, x, y, i, VT, XT, MT)                                      \
    do {                                                                     \
        VT y_ = (y);                                                         \
        XT i_ = (i);                                                         \
        MT m_ = GR_BETTER(y_, (v)) |                                         \
                (GR_SAME(y_, (v)) & GR_CONVERT(MT, i_ < (x)));               \
        XT xm_ = GR_CONVERT(XT, m_);                                         \
        (v) = GR_SEL((v), y_, m_);                                           \
        (x) = GR_SEL((x), i_, xm_);                                          \
    } while (0)
#endif
#if GR_OP == GR_OP_USER
/* a user operator folds an element as the merge of its state */
#define GR_FOLD_S(s, y, i)                                                   \
    do {                                                                     \
        gr_state e_;                                                         \
        e_.v = (y);                                                          \
        e_.x = (GR_X)(GR_USER_ELEM_X);                                       \
        GR_USER_MERGE(&(s), e_);                                             \
    } while (0)
#elif !GR_VAR
#define GR_FOLD_S(s, y, i) GR_FOLD((s).v, (s).x, y, i, GR_A, GR_X, GR_AM)
#endif

/* Merge state b into state a (both scalar); order-independent. */
inline void gr_merge(gr_state *a, gr_state b)
{
#if GR_OP == GR_OP_USER
    GR_USER_MERGE(a, b);
#elif GR_VAR
    a->v += b.v;
    a->x += b.x;
#elif GR_PTP
    a->v = GR_SEL(a->v, b.v, (b.v >= a->v) || GR_ISNAN(b.v));
    a->x = GR_SEL(a->x, b.x, (b.x <= a->x) || GR_ISNAN(b.x));
#elif GR_OP == GR_OP_ADD && GR_COMP
    GR_A t = a->v + b.v;
    GR_A bb = t - a->v;
    a->x += b.x + ((a->v - (t - bb)) + (b.v - bb));
    a->v = t;
#elif GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX
    if (GR_BETTER(b.v, a->v) || (GR_SAME(b.v, a->v) && b.x < a->x)) {
        *a = b;
    }
#else
    GR_FOLD_S(*a, b.v, 0);
#endif
}

inline gr_state gr_identity(void)
{
    gr_state s;
    s.v = GR_IDENT_V;
    s.x = GR_IDENT_X;
    return s;
}

/* Final value of a state, in the result type (var: gr_finish_var). */
inline GR_R gr_finish(gr_state s)
{
#if GR_VAR
    return (GR_R)s.x;
#elif GR_PTP && GR_A_FLOAT
    return (GR_R)(s.v - s.x);
#elif GR_PTP
    /* NumPy's integer subtraction wraps: modulo 2^64, then truncated */
    return (GR_R)((ulong)s.v - (ulong)s.x);
#elif GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX
    return (GR_R)s.x;
#elif GR_OP == GR_OP_ALL || GR_OP == GR_OP_ANY
    return (GR_R)(s.v != 0);
#elif GR_OP == GR_OP_ADD && GR_COMP
    /* An infinite sum has a NaN error term (inf - inf): keep the infinity;
     * a zero error term leaves the sum as it is (-0.0 stays -0.0). */
    return (GR_R)((isinf(s.v) || s.x == 0) ? s.v : s.v + s.x);
#elif GR_CVT == GR_CVT_WRAP
    return GR_AS(GR_R, s.v);
#elif GR_OP == GR_OP_USER && defined(GR_USER_POST)
    /* kernels/custom.cl writes results through the user's post-map (a
     * state and result of unrelated types: a complex arg-extreme's) */
    return (GR_R)0;
#else
    return (GR_R)s.v;
#endif
}

/* ---------------------------------------------------------------------
 * Work-group combine: every work-item brings a state, work-item 0 ends with
 * the group's.  GR_COMBINE picks the step of the seed's ladder:
 *
 *   NAIVE            interleaved addressing: at step d the work-items whose
 *                    id is a multiple of 2d add the neighbour d away.  The
 *                    modulo test leaves most work-items of every warp idle
 *                    (divergence) and strides through local-memory banks.
 *   SEQ              sequential addressing: the first `off` work-items add
 *                    the element `off` away, off = WG/2, WG/4, ...  Active
 *                    work-items stay contiguous: no divergence until fewer
 *                    than a warp remain, no bank conflicts.  Loop kept.
 *   UNROLL_COMPLETE  SEQ with the loop fully unrolled (WG is a compile-time
 *                    constant); still a work-group barrier per step.
 *   UNROLL_LAST      SEQ down to one sub-group, then the last steps with a
 *                    sub-group barrier instead of a work-group barrier.
 *                    The seed's `volatile` version relies on lock-step
 *                    execution and is a data race on NVIDIA since Volta and
 *                    on CPUs; here the sub-group barrier is real:
 *                    bar.warp.sync (PTX) or sub_group_barrier().
 *   SUBGROUP         each sub-group reduces in registers (shfl.sync.down
 *                    through PTX, or sub_group_reduce_*), sub-group leaders
 *                    meet in local memory, one sub-group finishes.
 *   WORKGROUP        OpenCL 2.0 work_group_reduce_* (add/min/max only).
 * --------------------------------------------------------------------- */
#define GR_COMBINE_NAIVE 0
#define GR_COMBINE_SEQ 1
#define GR_COMBINE_UNROLL_COMPLETE 2
#define GR_COMBINE_UNROLL_LAST 3
#define GR_COMBINE_SUBGROUP 4
#define GR_COMBINE_WORKGROUP 5

#define GR_SG_NONE 0
#define GR_SG_PTX 1   /* NVIDIA warps through inline PTX                  */
#define GR_SG_KHR 2   /* cl_khr_subgroups / OpenCL C 3.0 sub-groups       */

#ifndef GR_COMBINE
#define GR_COMBINE GR_COMBINE_UNROLL_COMPLETE
#endif
#ifndef GR_SG
#define GR_SG GR_SG_NONE
#endif

#if GR_SG == GR_SG_KHR && !defined(__opencl_c_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif

inline void gr_lstore(__local GR_A *lv, __local GR_X *lx, uint i, gr_state s)
{
    lv[i] = s.v;
#if GR_HAS_X
    lx[i] = s.x;
#endif
}

inline gr_state gr_lload(__local GR_A *lv, __local GR_X *lx, uint i)
{
    gr_state o;
    o.v = lv[i];
#if GR_HAS_X
    o.x = lx[i];
#else
    o.x = 0;
#endif
    return o;
}

/* ---------------------------------------------------------------------
 * NVIDIA inline PTX, shared by every family.  Warp operations exist only
 * in their .sync forms on sm_70+; every lane of the warp takes part (mask
 * 0xffffffff).  GR_PTX is on in the programs built for an NVIDIA device
 * that use it: reductions with GR_SG == GR_SG_PTX, every scan (GR_NVIDIA),
 * every reduce-by-key pass but the key check (GR_BK_PTX).
 *
 *   gr_warp_sync()          bar.warp.sync: the warp's own barrier
 *   gr_shfl_down_u32/u64    lane l gets lane l + d's value (its own past
 *                           lane 31: clamp 0x1f)
 *   gr_shfl_up_u32/u64      lane l gets lane l - d's value (its own below
 *                           lane 0); gr_shfl_up1_*: d = 1, immediate
 *   GR_SHFL_DOWN/UP(T, size, v, d), GR_SHFL_UP1(T, size, v)  the same
 *                           for any 1-, 2-, 4- or 8-byte type T (UP1: 4, 8),
 *                           through 32-bit lanes
 *   gr_shfl_down/up_state   a gr_state, value and auxiliary part
 *   gr_ballot(p)            vote.sync.ballot: bit l is lane l's p != 0
 *   gr_ld/st_relaxed64      ld/st.relaxed.gpu: "strong" operations of
 *                           PTX's memory model, single-copy atomic and
 *                           coherent at device scope, without the
 *                           read-modify-write traffic of atomics
 *   GR_NANOSLEEP(ns)        back-off of a polling loop
 * --------------------------------------------------------------------- */
#ifndef GR_NVIDIA
#define GR_NVIDIA 0
#endif
#ifndef GR_BK_PTX
#define GR_BK_PTX 0
#endif
#define GR_PTX (GR_SG == GR_SG_PTX || GR_NVIDIA || GR_BK_PTX)

#if GR_PTX
inline void gr_warp_sync(void)
{
    __asm__ volatile("bar.warp.sync 0xffffffff;" ::: "memory");
}
inline uint gr_shfl_down_u32(uint v, uint d)
{
    uint r;
    __asm__ volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                     : "=r"(r) : "r"(v), "r"(d));
    return r;
}
inline uint gr_shfl_up_u32(uint v, uint d)
{
    uint r;
    __asm__ volatile("shfl.sync.up.b32 %0, %1, %2, 0x0, 0xffffffff;"
                     : "=r"(r) : "r"(v), "r"(d));
    return r;
}
/* Up by one lane, the distance an immediate operand. */
inline uint gr_shfl_up1_u32(uint v)
{
    uint r;
    __asm__ volatile("shfl.sync.up.b32 %0, %1, 1, 0x0, 0xffffffff;"
                     : "=r"(r) : "r"(v));
    return r;
}
inline ulong gr_shfl_down_u64(ulong v, uint d)
{
    uint2 w = as_uint2(v);
    w.x = gr_shfl_down_u32(w.x, d);
    w.y = gr_shfl_down_u32(w.y, d);
    return as_ulong(w);
}
inline ulong gr_shfl_up_u64(ulong v, uint d)
{
    uint2 w = as_uint2(v);
    w.x = gr_shfl_up_u32(w.x, d);
    w.y = gr_shfl_up_u32(w.y, d);
    return as_ulong(w);
}
inline ulong gr_shfl_up1_u64(ulong v)
{
    uint2 w = as_uint2(v);
    w.x = gr_shfl_up1_u32(w.x);
    w.y = gr_shfl_up1_u32(w.y);
    return as_ulong(w);
}
/* 16-byte states (a user operator's double2: complex128) as two words */
inline ulong2 gr_shfl_down_u128(ulong2 v, uint d)
{
    v.x = gr_shfl_down_u64(v.x, d);
    v.y = gr_shfl_down_u64(v.y, d);
    return v;
}
inline ulong2 gr_shfl_up_u128(ulong2 v, uint d)
{
    v.x = gr_shfl_up_u64(v.x, d);
    v.y = gr_shfl_up_u64(v.y, d);
    return v;
}
inline ulong2 gr_shfl_up1_u128(ulong2 v)
{
    v.x = gr_shfl_up1_u64(v.x);
    v.y = gr_shfl_up1_u64(v.y);
    return v;
}
#define GR_SHFL_DOWN_16(T, v, d) GR_AS(T, gr_shfl_down_u128(as_ulong2(v), d))
#define GR_SHFL_UP_16(T, v, d) GR_AS(T, gr_shfl_up_u128(as_ulong2(v), d))
#define GR_SHFL_UP1_16(T, v) GR_AS(T, gr_shfl_up1_u128(as_ulong2(v)))
#define GR_SHFL_DOWN_1(T, v, d) GR_AS(T, (uchar)gr_shfl_down_u32((uint)as_uchar(v), d))
#define GR_SHFL_DOWN_2(T, v, d) GR_AS(T, (ushort)gr_shfl_down_u32((uint)as_ushort(v), d))
#define GR_SHFL_DOWN_4(T, v, d) GR_AS(T, gr_shfl_down_u32(as_uint(v), d))
#define GR_SHFL_DOWN_8(T, v, d) GR_AS(T, gr_shfl_down_u64(as_ulong(v), d))
#define GR_SHFL_DOWN(T, SIZE, v, d) GR_CAT(GR_SHFL_DOWN_, SIZE)(T, v, d)
#define GR_SHFL_UP_1(T, v, d) GR_AS(T, (uchar)gr_shfl_up_u32((uint)as_uchar(v), d))
#define GR_SHFL_UP_2(T, v, d) GR_AS(T, (ushort)gr_shfl_up_u32((uint)as_ushort(v), d))
#define GR_SHFL_UP_4(T, v, d) GR_AS(T, gr_shfl_up_u32(as_uint(v), d))
#define GR_SHFL_UP_8(T, v, d) GR_AS(T, gr_shfl_up_u64(as_ulong(v), d))
#define GR_SHFL_UP(T, SIZE, v, d) GR_CAT(GR_SHFL_UP_, SIZE)(T, v, d)
#define GR_SHFL_UP1_1(T, v) GR_AS(T, (uchar)gr_shfl_up1_u32((uint)as_uchar(v)))
#define GR_SHFL_UP1_2(T, v) GR_AS(T, (ushort)gr_shfl_up1_u32((uint)as_ushort(v)))
#define GR_SHFL_UP1_4(T, v) GR_AS(T, gr_shfl_up1_u32(as_uint(v)))
#define GR_SHFL_UP1_8(T, v) GR_AS(T, gr_shfl_up1_u64(as_ulong(v)))
#define GR_SHFL_UP1(T, SIZE, v) GR_CAT(GR_SHFL_UP1_, SIZE)(T, v)

inline gr_state gr_shfl_down_state(gr_state s, uint d)
{
    gr_state o;
    o.v = GR_SHFL_DOWN(GR_A, GR_A_SIZE, s.v, d);
#if GR_HAS_X
    o.x = GR_SHFL_DOWN(GR_X, GR_X_SIZE, s.x, d);
#else
    o.x = 0;
#endif
    return o;
}
inline gr_state gr_shfl_up_state(gr_state s, uint d)
{
    gr_state o;
    o.v = GR_SHFL_UP(GR_A, GR_A_SIZE, s.v, d);
#if GR_HAS_X
    o.x = GR_SHFL_UP(GR_X, GR_X_SIZE, s.x, d);
#else
    o.x = 0;
#endif
    return o;
}

inline uint gr_ballot(uint p)
{
    uint r;
    __asm__ volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; "
                     "vote.sync.ballot.b32 %0, p, 0xffffffff; }"
                     : "=r"(r) : "r"(p));
    return r;
}

inline ulong gr_ld_relaxed64(__global ulong *p)
{
    ulong v;
    __asm__ volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                     : "=l"(v) : "l"(p) : "memory");
    return v;
}
inline void gr_st_relaxed64(__global ulong *p, ulong v)
{
    __asm__ volatile("st.relaxed.gpu.global.u64 [%0], %1;"
                     :: "l"(p), "l"(v) : "memory");
}
#define GR_NANOSLEEP(ns) __asm__ volatile("nanosleep.u32 %0;" :: "n"(ns))
#endif /* GR_PTX */

/* Index of the lowest set bit of x (x != 0). */
inline uint gr_lowest(uint x) { return 31u - clz(x & (0u - x)); }

#if GR_SG == GR_SG_PTX
/* NVIDIA: a warp is the sub-group. */
#define GR_SG_SIZE 32u
#define GR_SG_LANE() (get_local_id(0) & 31u)
#define GR_SG_ID() (get_local_id(0) >> 5)
#define GR_SG_COUNT() ((GR_WG + 31u) >> 5)
inline void gr_sg_barrier(void) { gr_warp_sync(); }
#elif GR_SG == GR_SG_KHR
#define GR_SG_SIZE get_max_sub_group_size()
#define GR_SG_LANE() get_sub_group_local_id()
#define GR_SG_ID() get_sub_group_id()
#define GR_SG_COUNT() get_num_sub_groups()
inline void gr_sg_barrier(void) { sub_group_barrier(CLK_LOCAL_MEM_FENCE); }
#endif

/* variant: naive */
inline gr_state gr_combine_naive(gr_state s, __local GR_A *lv, __local GR_X *lx)
{
    const uint lid = get_local_id(0);
    gr_lstore(lv, lx, lid, s);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < GR_WG; d <<= 1) {
        if (lid % (2 * d) == 0) {
            gr_merge(&s, gr_lload(lv, lx, lid + d));
            gr_lstore(lv, lx, lid, s);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return s;
}

/* variant: divergence_free (GR_COMBINE_SEQ), unroll_complete, unroll_last */
inline gr_state gr_combine_seq(gr_state s, __local GR_A *lv, __local GR_X *lx)
{
    const uint lid = get_local_id(0);
#if GR_COMBINE == GR_COMBINE_UNROLL_LAST
    const uint sg = GR_SG_SIZE;
#endif
    gr_lstore(lv, lx, lid, s);
    barrier(CLK_LOCAL_MEM_FENCE);
#if GR_COMBINE == GR_COMBINE_SEQ
#pragma unroll 1
#else
#pragma unroll
#endif
    for (uint off = GR_WG / 2; off > 0; off >>= 1) {
        if (lid < off) {
            gr_merge(&s, gr_lload(lv, lx, lid + off));
            gr_lstore(lv, lx, lid, s);
        }
#if GR_COMBINE == GR_COMBINE_UNROLL_LAST
        /* Once the live states fit in sub-group 0, its own barrier suffices
         * (every sub-group executes it, so it is never divergent). */
        if (2 * off > sg) {
            barrier(CLK_LOCAL_MEM_FENCE);
        } else {
            gr_sg_barrier();
        }
#else
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
    return s;
}

#if GR_COMBINE == GR_COMBINE_SUBGROUP
/* variant: subgroup */
/* Reduce within the caller's sub-group; lane 0 ends with the result. */
inline gr_state gr_sg_reduce(gr_state s, __local GR_A *lv, __local GR_X *lx)
{
#if GR_SG == GR_SG_PTX
#pragma unroll
    for (uint d = 16; d > 0; d >>= 1) {
        gr_merge(&s, gr_shfl_down_state(s, d));
    }
    return s;
#elif GR_SG_NATIVE
    /* sub_group_reduce_* ignore NaN in min/max: propagate it by hand. */
#if GR_VAR
    s.v = sub_group_reduce_add(s.v);
    s.x = sub_group_reduce_add(s.x);
#elif GR_OP == GR_OP_ADD
    s.v = sub_group_reduce_add(GR_COMP ? s.v + s.x : s.v);
    s.x = 0;
#else
#if GR_NANSKIP
    /* nanmin/nanmax: NaNs (the identity included) read as the extreme;
     * NaN only where every lane holds one */
    const GR_A q = GR_ISNAN(s.v) ? (GR_OP == GR_OP_MIN ? GR_A_MAXV : GR_A_MINV) : s.v;
#else
    const GR_A q = s.v;
#endif
#if GR_OP == GR_OP_MIN
    GR_A r = sub_group_reduce_min(q);
#else
    GR_A r = sub_group_reduce_max(q);
#endif
#if GR_NANSKIP
    r = sub_group_all(GR_ISNAN(s.v) ? 1 : 0) ? (GR_A)NAN : r;
#elif GR_A_FLOAT
    r = sub_group_any(GR_ISNAN(s.v) ? 1 : 0) ? (GR_A)NAN : r;
#endif
    s.v = r;
#endif
    return s;
#else
    /* Any state: a tree in this sub-group's slice of local memory, with
     * sub-group barriers only. */
    const uint lane = GR_SG_LANE();
    const uint base = get_local_id(0) - lane;
    const uint n = get_sub_group_size();
    gr_lstore(lv, lx, base + lane, s);
    gr_sg_barrier();
    for (uint off = 1; off < n; off <<= 1) {
        if (lane % (2 * off) == 0 && lane + off < n) {
            gr_merge(&s, gr_lload(lv, lx, base + lane + off));
            gr_lstore(lv, lx, base + lane, s);
        }
        gr_sg_barrier();
    }
    return s;
#endif
}

/* Sub-groups reduce in registers; their leaders' n states then meet in
 * rounds: in each, sub-group k folds states [2 k sg, 2 (k + 1) sg) (two per
 * lane, so that rounds shrink n even for sub-groups of one lane), leaving
 * ceil(n / 2 sg).  One round for up to 2 sg sub-groups (NVIDIA: at most
 * 1024 / 32 = 32 warps); several where sub-groups are small (Intel's CPU
 * runtime: 8 lanes, 32 sub-groups at wg_size 256, where sub-group 0 alone
 * used to fold lv[0..8) of 32 and lose the rest).  States are indexed by
 * (sub-group id, lane), whatever the mapping of local ids to sub-groups. */
inline gr_state gr_combine_subgroup(gr_state s, __local GR_A *lv, __local GR_X *lx)
{
    const uint sg = GR_SG_SIZE;
    const uint id = GR_SG_ID();
    const uint lane = GR_SG_LANE();
    s = gr_sg_reduce(s, lv, lx);
    for (uint n = GR_SG_COUNT(); n > 1;) {
        const uint m = (n + 2 * sg - 1) / (2 * sg);
        const uint i = 2 * (id * sg + lane);
        barrier(CLK_LOCAL_MEM_FENCE); /* the generic tree reuses lv */
        if (lane == 0 && id < n) {
            gr_lstore(lv, lx, id, s);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        gr_state t = gr_identity();
        if (i < n) {
            t = gr_lload(lv, lx, i);
        }
        if (i + 1 < n) {
            gr_merge(&t, gr_lload(lv, lx, i + 1));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (id < m) { /* whole sub-groups: id is uniform in each */
            s = gr_sg_reduce(t, lv, lx);
        }
        n = m;
    }
    return s;
}
#endif

#if GR_COMBINE == GR_COMBINE_WORKGROUP
/* variant: workgroup */
inline gr_state gr_combine_workgroup(gr_state s, __local GR_A *lv, __local GR_X *lx)
{
#if GR_VAR
    s.v = work_group_reduce_add(s.v);
    s.x = work_group_reduce_add(s.x);
#elif GR_OP == GR_OP_ADD
    s.v = work_group_reduce_add(GR_COMP ? s.v + s.x : s.v);
    s.x = 0;
#elif GR_PTP
#if GR_A_FLOAT
    /* a NaN is in both parts of a state, or in neither */
    const int nan = work_group_any(GR_ISNAN(s.v) ? 1 : 0);
#endif
    s.v = work_group_reduce_max(s.v);
    s.x = work_group_reduce_min(s.x);
#if GR_A_FLOAT
    s.v = nan ? (GR_A)NAN : s.v;
    s.x = nan ? (GR_A)NAN : s.x;
#endif
#elif GR_OP == GR_OP_MIN || GR_OP == GR_OP_MAX
#if GR_NANSKIP
    /* nanmin/nanmax: NaN only where every work-item holds one */
    int nan = work_group_all(GR_ISNAN(s.v) ? 1 : 0);
    s.v = GR_ISNAN(s.v) ? (GR_OP == GR_OP_MIN ? GR_A_MAXV : GR_A_MINV) : s.v;
#elif GR_A_FLOAT
    /* work_group_reduce_min/max ignore NaN: propagate it by hand. */
    int nan = work_group_any(GR_ISNAN(s.v) ? 1 : 0);
#endif
#if GR_OP == GR_OP_MIN
    s.v = work_group_reduce_min(s.v);
#else
    s.v = work_group_reduce_max(s.v);
#endif
#if GR_A_FLOAT
    s.v = nan ? (GR_A)NAN : s.v;
#endif
#elif GR_OP == GR_OP_ALL
    s.v = work_group_all(s.v != 0) ? (GR_A)-1 : (GR_A)0;
#elif GR_OP == GR_OP_ANY
    s.v = work_group_any(s.v != 0) ? (GR_A)-1 : (GR_A)0;
#endif
    return s;
}
#endif

inline gr_state gr_group_combine(gr_state s, __local GR_A *lv, __local GR_X *lx)
{
#if GR_COMBINE == GR_COMBINE_NAIVE
    return gr_combine_naive(s, lv, lx);
#elif GR_COMBINE == GR_COMBINE_SUBGROUP
    return gr_combine_subgroup(s, lv, lx);
#elif GR_COMBINE == GR_COMBINE_WORKGROUP
    return gr_combine_workgroup(s, lv, lx);
#else
    return gr_combine_seq(s, lv, lx);
#endif
}

#if GR_ATOMIC
/* variant: atomic */
/* Fold a group's state into *p with a compare-and-swap loop on its bits
 * (no float atomics in OpenCL 1.2; 64-bit needs cl_khr_int64_base_atomics).
 * The order of the merges is the order the groups finish in: results of
 * floating-point sums are not bitwise reproducible. */
#if GR_A_SIZE == 8
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define GR_AU ulong
#define GR_CAS(p, o, n) atom_cmpxchg((volatile __global ulong *)(p), o, n)
#else
#define GR_AU uint
#define GR_CAS(p, o, n) atomic_cmpxchg((volatile __global uint *)(p), o, n)
#endif
inline void gr_atomic_merge(__global GR_A *p, gr_state s)
{
#if GR_OP == GR_OP_ADD && GR_COMP
    s.v = isinf(s.v) ? s.v : s.v + s.x;
    s.x = 0;
#endif
    /* Read the current value atomically too (a CAS that stores what it
     * finds): a plain load would race with other groups' CAS. */
    GR_AU seen = GR_CAS(p, (GR_AU)0, (GR_AU)0);
    for (;;) {
        gr_state a;
        a.v = GR_AS(GR_A, seen);
        a.x = 0;
        gr_merge(&a, s);
        GR_AU prev = GR_CAS(p, seen, GR_AS(GR_AU, a.v));
        if (prev == seen) {
            break;
        }
        seen = prev;
    }
}
#endif

/* ---------------------------------------------------------------------
 * Look-back tile status: the single-pass scans (scan.cl, GR_LOOKBACK) and
 * reduce_by_key's single pass (bykey.cl, GR_BK_LOOKBACK).  A tile's status
 * is published once as A (its aggregate) and once as P (its inclusive
 * prefix); X (0) means nothing yet.
 *
 *   GR_READ64 / GR_WRITE64   every poll and every publication of a status
 *                            word; GR_BACKOFF(ns) between polls (NVIDIA)
 *   gr_status_publish/poll   a gr_state as GR_STATUS_NW flag-tagged words
 *                            (scans; reduce_by_key publishes head counts
 *                            as one word, flag << 62 | count)
 *   gr_window                NVIDIA: the warp-wide window of 32 tiles
 *
 * Status of tile i (scans): GR_STATUS_NW 64-bit words, word w = flag << 32
 * | bits 32w..32w+31 of the state (value, then compensation).  A state of
 * 32 bits or less (int32/float32 min/max, bytes, ...) is one word: flag and
 * value can never be seen apart.  A wider state (float64, int64 sums, the
 * float64 accumulator of float32 sums, TwoSum pairs) spans several words,
 * each tagged with the flag: a reader takes the state only when every word
 * carries the same flag (A or P), otherwise it polls again.  Each tile
 * publishes A once and P once, so equal tags mean one publication: no
 * fence and no ordering between the words is needed.
 *
 * What this relies on (OpenCL 1.2 gives no memory model between
 * work-groups; OpenCL 2.0's would be memory_scope_device):
 *  1. 64-bit atomics (cl_khr_int64_base_atomics) on one address are
 *     atomic and coherent across the device (OpenCL 1.2 s6.12.11: "atomic
 *     across all work-items of the device").  Every publication is an
 *     atom_xchg, every look-back read an atom_add(p, 0): no plain load can
 *     read a stale cache line and no word is ever torn.  On NVIDIA the
 *     same guarantees come from PTX ld/st.relaxed.gpu (gr_ld_relaxed64),
 *     without read-modify-write traffic on the status words (atom_add(p, 0)
 *     polls by many tiles serialise at L2).
 *  2. Forward progress: a tile takes its index from an atomic counter
 *     when it starts, so it only ever waits for tiles that started before
 *     it (scans on NVIDIA, GR_GID_TILE, take get_group_id() instead, and
 *     may wait for a tile not started yet).  OpenCL promises nothing about
 *     a started work-group progressing, nor about the order groups start,
 *     so a scan's look-back that polls a predecessor GR_SPIN times without
 *     news reduces that tile from the input itself ("decoupled fallback")
 *     and goes on: no tile waits forever, whatever the scheduler does.
 * The previous design (64-bit values in their own array, then a fence,
 * then the flag) needed mem_fence to order atomics as seen by other
 * work-groups, which OpenCL 1.2 does not promise; on the H100 it failed
 * look-back chains of 10,000 tiles.
 * --------------------------------------------------------------------- */
#ifndef GR_LOOKBACK
#define GR_LOOKBACK 0
#endif
#ifndef GR_BK_LOOKBACK
#define GR_BK_LOOKBACK 0
#endif
#if GR_LOOKBACK || GR_BK_LOOKBACK
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#define GR_STATUS_X 0u /* nothing published     */
#define GR_STATUS_A 1u /* aggregate of the tile */
#define GR_STATUS_P 2u /* inclusive prefix      */

#if GR_PTX
#define GR_READ64(p) gr_ld_relaxed64(p)
#define GR_WRITE64(p, v) gr_st_relaxed64(p, v)
#define GR_BACKOFF(ns) GR_NANOSLEEP(ns)
#else
#define GR_READ64(p) atom_add((volatile __global ulong *)(p), (ulong)0)
#define GR_WRITE64(p, v) atom_xchg((volatile __global ulong *)(p), (ulong)(v))
#define GR_BACKOFF(ns)
#endif

#if GR_PTX
/* The warp's look-back window: lane l holds the flag f of tile j - l (P
 * for lanes past tile 0).  *first_x, *first_p: the lowest lane showing X,
 * P (32: none).  The lanes to fold are those before the first X, through
 * the first P; none while lane 0's tile shows X. */
inline void gr_window(uint f, uint *first_x, uint *first_p)
{
    const uint xs = gr_ballot(f == GR_STATUS_X);
    const uint ps = gr_ballot(f == GR_STATUS_P);
    *first_x = xs ? gr_lowest(xs) : 32u;
    *first_p = ps ? gr_lowest(ps) : 32u;
}
#endif

#if GR_LOOKBACK
#define GR_STATUS_NW ((GR_A_SIZE * (1 + GR_HAS_X) + 3) / 4)

inline void gr_status_to_words(gr_state s, uint *w)
{
#if GR_A_SIZE == 16 /* a user operator's double2 (complex128) */
    const uint4 b = as_uint4(s.v);
    w[0] = b.x;
    w[1] = b.y;
    w[2] = b.z;
    w[3] = b.w;
#if GR_HAS_X
    const uint4 c = as_uint4(s.x);
    w[4] = c.x;
    w[5] = c.y;
    w[6] = c.z;
    w[7] = c.w;
#endif
#elif GR_A_SIZE == 8
    ulong b = as_ulong(s.v);
    w[0] = (uint)b;
    w[1] = (uint)(b >> 32);
#if GR_HAS_X
    ulong c = as_ulong(s.x);
    w[2] = (uint)c;
    w[3] = (uint)(c >> 32);
#endif
#elif GR_A_SIZE == 4
    w[0] = as_uint(s.v);
#if GR_HAS_X
    w[1] = as_uint(s.x);
#endif
#elif GR_A_SIZE == 2
    w[0] = (uint)as_ushort(s.v);
#if GR_HAS_X && GR_OP == GR_OP_USER /* x: GR_A's size (others: none) */
    w[0] |= (uint)as_ushort(s.x) << 16;
#endif
#else
    w[0] = (uint)as_uchar(s.v);
#if GR_HAS_X && GR_OP == GR_OP_USER
    w[0] |= (uint)as_uchar(s.x) << 8;
#endif
#endif
}

inline gr_state gr_status_from_words(const uint *w)
{
    gr_state s;
    s.x = 0;
#if GR_A_SIZE == 16
    s.v = GR_AS(GR_A, (uint4)(w[0], w[1], w[2], w[3]));
#if GR_HAS_X
    s.x = GR_AS(GR_X, (uint4)(w[4], w[5], w[6], w[7]));
#endif
#elif GR_A_SIZE == 8
    s.v = GR_AS(GR_A, (ulong)w[0] | ((ulong)w[1] << 32));
#if GR_HAS_X
    s.x = GR_AS(GR_X, (ulong)w[2] | ((ulong)w[3] << 32));
#endif
#elif GR_A_SIZE == 4
    s.v = GR_AS(GR_A, w[0]);
#if GR_HAS_X
    s.x = GR_AS(GR_X, w[1]);
#endif
#elif GR_A_SIZE == 2
    s.v = GR_AS(GR_A, (ushort)w[0]);
#if GR_HAS_X && GR_OP == GR_OP_USER
    s.x = GR_AS(GR_X, (ushort)(w[0] >> 16));
#endif
#else
    s.v = GR_AS(GR_A, (uchar)w[0]);
#if GR_HAS_X && GR_OP == GR_OP_USER
    s.x = GR_AS(GR_X, (uchar)(w[0] >> 8));
#endif
#endif
    return s;
}

inline void gr_status_publish(__global ulong *status, ulong i, uint flag,
                              gr_state s)
{
    uint w[GR_STATUS_NW];
    gr_status_to_words(s, w);
    for (uint k = 0; k < GR_STATUS_NW; ++k) {
        GR_WRITE64(status + i * GR_STATUS_NW + k,
                   ((ulong)flag << 32) | (ulong)w[k]);
    }
}

/* The flag of tile i (X unless every word carries the same A or P) and,
 * when not X, its state. */
inline uint gr_status_poll(__global ulong *status, ulong i, gr_state *s)
{
    uint w[GR_STATUS_NW];
    uint flag = 0;
    int same = 1;
    for (uint k = 0; k < GR_STATUS_NW; ++k) {
        ulong x = GR_READ64(status + i * GR_STATUS_NW + k);
        uint f = (uint)(x >> 32);
        w[k] = (uint)x;
        same &= k == 0 || f == flag;
        flag = k == 0 ? f : flag;
    }
    if (!same) {
        return GR_STATUS_X; /* a publication in progress: poll again */
    }
    *s = gr_status_from_words(w);
    return flag;
}
#endif /* GR_LOOKBACK */
#endif /* GR_LOOKBACK || GR_BK_LOOKBACK */
