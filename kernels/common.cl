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

#define GR_CVT_NONE  0 /* element is already an accumulator value       */
#define GR_CVT_TO_A  1 /* numeric conversion to the accumulator type    */
#define GR_CVT_WRAP  2 /* convert to the (signed) result, reinterpret A  */
#define GR_CVT_MASK  3 /* nonzero test -> all-ones / zero mask           */

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
#endif

/* x != x is the NaN test for floats and constant false for integers. */
#define GR_ISNAN(x) ((x) != (x))

/*
 * Accumulator state.  Every operator keeps a value v; compensated sums keep
 * the running error in x, argmin/argmax the segment-relative index in x.
 * The fold/merge macros below use only operators that work on scalars and
 * on vectors alike, so the same text folds a float and a float16.
 */
#if GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX
#define GR_X long
#define GR_HAS_X 1
#elif GR_COMP
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

/* Identity of each operator (for min/max: the dtype's extreme or +-inf). */
#if GR_OP == GR_OP_ADD || GR_OP == GR_OP_ANY
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
#if GR_OP == GR_OP_ADD && GR_COMP
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
#elif GR_OP == GR_OP_MIN
#define GR_FOLD(v, x, y, i, VT, XT, MT) ((v) = GR_SEL((v), (y), ((y) < (v)) || GR_ISNAN(y)))
#elif GR_OP == GR_OP_MAX
#define GR_FOLD(v, x, y, i, VT, XT, MT) ((v) = GR_SEL((v), (y), ((y) > (v)) || GR_ISNAN(y)))
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
#define GR_FOLD_S(s, y, i) GR_FOLD((s).v, (s).x, y, i, GR_A, GR_X, GR_AM)

/* Merge state b into state a (both scalar); order-independent. */
inline void gr_merge(gr_state *a, gr_state b)
{
#if GR_OP == GR_OP_ADD && GR_COMP
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

/* Final value of a state, in the result type. */
inline GR_R gr_finish(gr_state s)
{
#if GR_OP == GR_OP_ARGMIN || GR_OP == GR_OP_ARGMAX
    return (GR_R)s.x;
#elif GR_OP == GR_OP_ALL || GR_OP == GR_OP_ANY
    return (GR_R)(s.v != 0);
#elif GR_OP == GR_OP_ADD && GR_COMP
    /* An infinite sum has a NaN error term (inf - inf): keep the infinity. */
    return (GR_R)(isinf(s.v) ? s.v : s.v + s.x);
#elif GR_CVT == GR_CVT_WRAP
    return GR_AS(GR_R, s.v);
#else
    return (GR_R)s.v;
#endif
}

/*
 * Work-group combine: every work-item brings a state, work-item 0 ends with
 * the group's.  Sequential addressing (stride halves each step) keeps the
 * active work-items contiguous: no divergence inside a warp until fewer
 * than a warp remain, and no local-memory bank conflicts.
 */
inline gr_state gr_group_combine(gr_state s, __local GR_A *lv, __local GR_X *lx)
{
    const uint lid = get_local_id(0);
    lv[lid] = s.v;
#if GR_HAS_X
    lx[lid] = s.x;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint off = GR_WG / 2; off > 0; off >>= 1) {
        if (lid < off) {
            gr_state o;
            o.v = lv[lid + off];
#if GR_HAS_X
            o.x = lx[lid + off];
#else
            o.x = 0;
#endif
            gr_merge(&s, o);
            lv[lid] = s.v;
#if GR_HAS_X
            lx[lid] = s.x;
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return s;
}
