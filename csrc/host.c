/*
 * gpured — the host path (issue 12): reductions and scans of host memory in
 * plain C, so that small calls need no OpenCL call at all.
 *
 * The answer is the device's (kernels/common.cl, reduce.cl, scan.cl; the
 * accumulators of plan.c gr_accum_for and scan_plan.c gr_scan_accum):
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
 * Threads.  A call of many bytes (gr_host_op.threads > 1, as policy.c's
 * model decides) is cut into tasks for hostpar.c's pool: see "several
 * threads" below.  On the 2-core machine this was tuned on a second thread
 * measured slower with threads made per call (2026-11-26: pthread_create +
 * join 25-150 us); the pool keeps its workers, and the model uses it only
 * where 4 CPUs or more are there (or GPURED_HOST_THREADS says so).
 */
#include "host.h"
#include "hostpar.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* target_clones needs ifunc: glibc (GR_HOST_NO_CLONES builds the baseline
 * only: how the "default" clone's code was tested). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__GLIBC__) &&      \
    !defined(GR_HOST_NO_CLONES)
#define GR_CLONES __attribute__((target_clones("avx2", "default")))
#if __GNUC__ >= 12
/* Kernels whose a - b may run as fma(b, -1, a) (TWOSUM_F): one clone more
 * for x86-64-v3 (AVX2 + FMA; picked by feature bits, unlike arch=haswell,
 * which asks for that very CPU), and a * b + c contracted to an fma only
 * in these functions (-std=c99 leaves contraction off everywhere else;
 * the only products in them are TWOSUM_F's). */
#define GR_CLONES_FMA                                                        \
    __attribute__((target_clones("arch=x86-64-v3", "avx2", "default"),       \
                   optimize("fp-contract=fast")))
#endif
#else
#define GR_CLONES
#endif
#ifndef GR_CLONES_FMA
#define GR_CLONES_FMA GR_CLONES
#define GR_NO_FMA_CLONE
#endif

#define CH 1024        /* elements per gathered chunk (generic layouts)     */
#define COLB 512       /* columns folded together with stack scratch        */
#define COLB_MAX 8192  /* ... with heap scratch (wider: whole rows)         */
#define COLZ_STACK 1024 /* columns of the AVX-512 sums with stack scratch  */
#define COLZ_ROWS_HEAP 16 /* ... wider with heap scratch from this many rows */
/* float32 (wide) column sums take the AVX-512 kernel from this many
 * columns: narrower, fsumwc_f32's 4-column vectors measured faster (2-core
 * Zen 4, us: 32768 x 32 73 against 99, 16384 x 64 74 against 87, 10923 x
 * 96 74 against 84; 8192 x 128 88-95 against 84-86). */
#define COLZ_F32_MIN 128

/* ------------------------------------------------------------------ types
 * One short name per dtype: s_X is the scalar, v_X a 32-byte vector of it,
 * q_X 4 lanes of it, m_X the comparison mask of v_X; the _u types are their
 * unaligned, may-alias twins for loads and stores. */
typedef uint8_t s_b;
typedef int8_t s_i8;
typedef uint8_t s_u8;
typedef int16_t s_i16;
typedef uint16_t s_u16;
typedef int32_t s_i32;
typedef uint32_t s_u32;
typedef int64_t s_i64;
typedef uint64_t s_u64;
typedef float s_f32;
typedef double s_f64;

#define GR_UNALIGNED __attribute__((aligned(1), may_alias))
#define DEF_VEC(X, MT)                                                       \
    typedef s_##X v_##X __attribute__((vector_size(32)));                    \
    typedef s_##X q_##X __attribute__((vector_size(4 * sizeof(s_##X))));     \
    typedef MT m_##X __attribute__((vector_size(32)));                       \
    typedef v_##X v_##X##_u GR_UNALIGNED;                                    \
    typedef q_##X q_##X##_u GR_UNALIGNED;
DEF_VEC(b, int8_t)
DEF_VEC(i8, int8_t)
DEF_VEC(u8, int8_t)
DEF_VEC(i16, int16_t)
DEF_VEC(u16, int16_t)
DEF_VEC(i32, int32_t)
DEF_VEC(u32, int32_t)
DEF_VEC(i64, int64_t)
DEF_VEC(u64, int64_t)
DEF_VEC(f32, int32_t)
DEF_VEC(f64, int64_t)

/* Unaligned vector load; lane-wise choice m ? b : a (m a comparison mask). */
#define LD(VT, p) (*(const VT##_u *)(const void *)(p))
#define ST(VT, p, v) (*(VT##_u *)(void *)(p) = (v))
#define SEL(VT, MT, a, b, m) ((VT)(((MT)(b) & (m)) | ((MT)(a) & ~(m))))
/* Lanes of a vector type. */
#define LANES(X) ((int)(sizeof(v_##X) / sizeof(s_##X)))

/* NaN tests per type (integers: constant false, no self-comparison). */
#define NANS_b(y) 0
#define NANS_i8(y) 0
#define NANS_u8(y) 0
#define NANS_i16(y) 0
#define NANS_u16(y) 0
#define NANS_i32(y) 0
#define NANS_u32(y) 0
#define NANS_i64(y) 0
#define NANS_u64(y) 0
#define NANS_f32(y) ((y) != (y))
#define NANS_f64(y) ((y) != (y))
#define NANV_b(y) ((m_b){0})
#define NANV_i8(y) ((m_i8){0})
#define NANV_u8(y) ((m_u8){0})
#define NANV_i16(y) ((m_i16){0})
#define NANV_u16(y) ((m_u16){0})
#define NANV_i32(y) ((m_i32){0})
#define NANV_u32(y) ((m_u32){0})
#define NANV_i64(y) ((m_i64){0})
#define NANV_u64(y) ((m_u64){0})
#define NANV_f32(y) ((y) != (y))
#define NANV_f64(y) ((y) != (y))

/* Identities of min (the type's highest value) and max (its lowest). */
#define HI_b 1
#define HI_i8 INT8_MAX
#define HI_u8 UINT8_MAX
#define HI_i16 INT16_MAX
#define HI_u16 UINT16_MAX
#define HI_i32 INT32_MAX
#define HI_u32 UINT32_MAX
#define HI_i64 INT64_MAX
#define HI_u64 UINT64_MAX
#define HI_f32 INFINITY
#define HI_f64 ((double)INFINITY)
#define LO_b 0
#define LO_i8 INT8_MIN
#define LO_u8 0
#define LO_i16 INT16_MIN
#define LO_u16 0
#define LO_i32 INT32_MIN
#define LO_u32 0
#define LO_i64 INT64_MIN
#define LO_u64 0
#define LO_f32 (-INFINITY)
#define LO_f64 (-(double)INFINITY)

/* One value of any dtype. */
typedef union {
    s_b b;
    s_i8 i8;
    s_u8 u8;
    s_i16 i16;
    s_u16 u16;
    s_i32 i32;
    s_u32 u32;
    s_i64 i64;
    s_u64 u64;
    s_f32 f32;
    s_f64 f64;
} gr_val;

/* State of one segment's reduction or scan: v the value (sum, product,
 * extreme), x the compensation of a TwoSum, i the index of argmin/argmax
 * (-1: none yet), flag: NaN seen (min/max), decided (all/any, argmin/argmax
 * on a NaN). */
typedef struct {
    gr_val v, x;
    int64_t i;
    int flag;
} gr_hstate;

/* Knuth's TwoSum: t + e == v + y exactly; e joins the compensation x.
 * Written for scalars and vectors alike (T their type). */
#define TWOSUM(T, v, x, y)                                                   \
    do {                                                                     \
        T t_ = (v) + (y);                                                    \
        T b_ = t_ - (v);                                                     \
        (x) += ((v) - (t_ - b_)) + ((y) - b_);                               \
        (v) = t_;                                                            \
    } while (0)
/* TWOSUM with its four subtractions written a + b * m1, m1 = -1 (a
 * vector of it, read from NEG_ONE so that the compiler cannot fold the
 * product into a subtraction): under GR_CLONES_FMA an fma(b, -1, a), which
 * is a - b exactly (the product -b is exact, the sum rounded once; signed
 * zeros alike), elsewhere -b then a + -b, the same.  The state is TWOSUM's
 * bit for bit; the work moves from the two add pipes (7 adds, the column
 * sums' limit on Zen 3) to 3 adds and 4 fmas on the multiply pipes. */
#ifndef GR_NO_FMA_CLONE
#define FSUB(a, b, m1) ((a) + (b) * (m1))
#else
#define FSUB(a, b, m1) ((void)(m1), (a) - (b))
#endif
#define TWOSUM_F(T, v, x, y, m1)                                             \
    do {                                                                     \
        T t_ = (v) + (y);                                                    \
        T b_ = FSUB(t_, (v), m1);                                            \
        (x) += FSUB((v), FSUB(t_, b_, m1), m1) + FSUB((y), b_, m1);          \
        (v) = t_;                                                            \
    } while (0)
static volatile const double NEG_ONE = -1.0;
/* Merge compensated state (v2, x2) into (v, x), as common.cl's gr_merge. */
#define TWOMERGE(T, v, x, v2, x2)                                            \
    do {                                                                     \
        T t_ = (v) + (v2);                                                   \
        T b_ = t_ - (v);                                                     \
        (x) += (x2) + (((v) - (t_ - b_)) + ((v2) - b_));                     \
        (v) = t_;                                                            \
    } while (0)

/* ------------------------------------------------ conversions and chunks */

/* What a kernel reads: the input's own elements, or each element cast to
 * the result type first (NumPy's cast) when that is the kernel's type. */
enum { KT_SAME, KT_F32, KT_F64, KT_U64 };

/* A float cast to an integer result as x86 NumPy does for in-range values;
 * out of range and NaN give the type's "integer indefinite" (lowest value
 * of the 32- or 64-bit conversion) instead of undefined behaviour. */
static uint64_t float_to_int(double d, gr_dtype r)
{
    const int size = gr_dtypes[r].size;
    if (r == GR_UINT64 && d >= 9223372036854775808.0 &&
        d < 18446744073709551616.0) {
        return (uint64_t)(d - 9223372036854775808.0) + (UINT64_C(1) << 63);
    }
    if (size == 8 || r == GR_UINT32) {
        if (d > -9223372036854775808.0 && d < 9223372036854775808.0) {
            return (uint64_t)(int64_t)d;
        }
        return UINT64_C(1) << 63;
    }
    if (d > -2147483649.0 && d < 2147483648.0) {
        return (uint64_t)(int64_t)(int32_t)d;
    }
    return (uint64_t)(int64_t)INT32_MIN;
}

/* dst[i] = element i of (src, sb bytes apart) of dtype t, as kernel type kt
 * (r is the result dtype, for KT_U64).  KT_SAME copies bytes. */
static void gather(void *dst, int kt, const char *src, ptrdiff_t sb,
                   gr_dtype t, gr_dtype r, size_t n)
{
    size_t i;
    if (kt == KT_SAME) {
        /* A strided copy by element size. */
        switch (gr_dtypes[t].size) {
        case 1:
            for (i = 0; i < n; ++i) {
                ((uint8_t *)dst)[i] =
                    *(const uint8_t *)(src + (ptrdiff_t)i * sb);
            }
            return;
        case 2:
            for (i = 0; i < n; ++i) {
                memcpy((uint16_t *)dst + i, src + (ptrdiff_t)i * sb, 2);
            }
            return;
        case 4:
            for (i = 0; i < n; ++i) {
                memcpy((uint32_t *)dst + i, src + (ptrdiff_t)i * sb, 4);
            }
            return;
        default:
            for (i = 0; i < n; ++i) {
                memcpy((uint64_t *)dst + i, src + (ptrdiff_t)i * sb, 8);
            }
            return;
        }
    }
    /* Casts: each element read in its own type and cast once to the
     * destination (an int64 becomes a float32 in one rounding). */
#define GATHER_CAST(DT, EXPR)                                                \
    switch (t) {                                                             \
    case GR_BOOL:                                                            \
        for (i = 0; i < n; ++i) {                                            \
            s_b e_ = *(const s_b *)(src + (ptrdiff_t)i * sb);                \
            ((DT *)dst)[i] = (DT)(e_ != 0);                                  \
        }                                                                    \
        break;                                                               \
    GATHER_CASE(GR_INT8, s_i8, DT, EXPR)                                     \
    GATHER_CASE(GR_UINT8, s_u8, DT, EXPR)                                    \
    GATHER_CASE(GR_INT16, s_i16, DT, EXPR)                                   \
    GATHER_CASE(GR_UINT16, s_u16, DT, EXPR)                                  \
    GATHER_CASE(GR_INT32, s_i32, DT, EXPR)                                   \
    GATHER_CASE(GR_UINT32, s_u32, DT, EXPR)                                  \
    GATHER_CASE(GR_INT64, s_i64, DT, EXPR)                                   \
    GATHER_CASE(GR_UINT64, s_u64, DT, EXPR)                                  \
    GATHER_CASE(GR_FLOAT32, s_f32, DT, EXPR)                                 \
    GATHER_CASE(GR_FLOAT64, s_f64, DT, EXPR)                                 \
    default:                                                                 \
        break;                                                               \
    }
#define GATHER_CASE(TAG, ST, DT, EXPR)                                       \
    case TAG:                                                                \
        for (i = 0; i < n; ++i) {                                            \
            ST e_;                                                           \
            memcpy(&e_, src + (ptrdiff_t)i * sb, sizeof e_);                 \
            ((DT *)dst)[i] = EXPR;                                           \
        }                                                                    \
        break;
    if (kt == KT_F32) {
        GATHER_CAST(float, (float)e_)
    } else if (kt == KT_F64) {
        GATHER_CAST(double, (double)e_)
    } else {
        /* KT_U64: float inputs of an integer add/mul. */
        GATHER_CAST(uint64_t, float_to_int((double)e_, r))
    }
#undef GATHER_CASE
#undef GATHER_CAST
}

/* Store the low bytes of a wrapped integer result as dtype r. */
static void store_int(void *out, size_t m, int size, uint64_t v)
{
    switch (size) {
    case 1:
        ((uint8_t *)out)[m] = (uint8_t)v;
        break;
    case 2:
        ((uint16_t *)out)[m] = (uint16_t)v;
        break;
    case 4:
        ((uint32_t *)out)[m] = (uint32_t)v;
        break;
    default:
        ((uint64_t *)out)[m] = v;
        break;
    }
}

/* ===================================================== reduction kernels
 * Every rows kernel has one signature: fold p[0..n) (element indices base
 * onward) into state s.  Column kernels fold B adjacent segments
 * (p[j + i*es], j < B, i < L) into states s[0..B), their accumulators in
 * scratch (32-byte aligned, COL_SCRATCH(B) bytes). */
typedef void (*fold_fn)(const void *p, size_t n, size_t base, gr_hstate *s);
typedef void (*col_fn)(const void *p, size_t B, size_t L, ptrdiff_t es,
                       gr_hstate *s, void *scratch);
/* Every column kernel keeps at most 16 bytes per segment (two vectors of
 * 8-byte lanes, or value + index), plus a vector of slack. */
#define COL_SCRATCH(B) (16 * (B) + 64)

/* -------------------------------------------------- integer add and mul
 * Elements widened 4 at a time to uint64_t lanes (sign-extended for signed
 * types: congruent modulo every power of two, so the cast to any result
 * type is its low bytes); bool counts 0/1. */
/* (Vectors built from 4 cast elements: GCC 12 turns these into one
 * vpmovsx/vpmovzx/vcvtps2pd from memory, but splits the equivalent
 * __builtin_convertvector in halves, or through the stack.) */
#define CV4(T, p, CS) ((T){CS((p)[0]), CS((p)[1]), CS((p)[2]), CS((p)[3])})
#define CV_SIGNED(p) CV4(v_u64, p, CS_SIGNED)
#define CV_UNSIGNED(p) CV4(v_u64, p, CS_UNSIGNED)
#define CV_BOOL(p) CV4(v_u64, p, CS_BOOL)
#define CV_F64(p) CV4(v_f64, p, (double))
#define CS_SIGNED(y) ((uint64_t)(int64_t)(y))
#define CS_UNSIGNED(y) ((uint64_t)(y))
#define CS_BOOL(y) ((uint64_t)((y) != 0))
#define OP_ADD(a, b) ((a) + (b))
#define OP_MUL(a, b) ((a) * (b))

#define DEF_IFOLD(NAME, X, CV, CS, OP, ID)                                   \
    static GR_CLONES void NAME(const void *vp, size_t n, size_t base,        \
                               gr_hstate *s)                                 \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        v_u64 a0 = {ID, ID, ID, ID}, a1 = a0, a2 = a0, a3 = a0;              \
        uint64_t acc = s->v.u64;                                             \
        size_t i = 0;                                                        \
        (void)base;                                                          \
        /* 16 elements a step into 4 independent accumulators */            \
        for (; i + 16 <= n; i += 16) {                                       \
            a0 = OP(a0, CV(p + i));                               \
            a1 = OP(a1, CV(p + i + 4));                           \
            a2 = OP(a2, CV(p + i + 8));                           \
            a3 = OP(a3, CV(p + i + 12));                          \
        }                                                                    \
        /* the remaining whole vectors, then the lanes, then the tail */    \
        for (; i + 4 <= n; i += 4) {                                         \
            a0 = OP(a0, CV(p + i));                               \
        }                                                                    \
        a0 = OP(OP(a0, a1), OP(a2, a3));                                     \
        acc = OP(OP(acc, a0[0]), OP(a0[1], OP(a0[2], a0[3])));               \
        for (; i < n; ++i) {                                                 \
            acc = OP(acc, CS(p[i]));                                         \
        }                                                                    \
        s->v.u64 = acc;                                                      \
    }

/* Columns: one uint64_t lane per segment, B / 4 vectors, row by row. */
#define DEF_ICOL(NAME, X, CV, CS, OP, ID)                                    \
    static GR_CLONES void NAME(const void *vp, size_t B, size_t L,           \
                               ptrdiff_t es, gr_hstate *s, void *scratch)    \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        v_u64 *a = (v_u64 *)scratch;                                         \
        uint64_t r[4];                                                       \
        const size_t nv = B / 4;                                             \
        size_t i, k, j, n4;                                                  \
        for (k = 0; k < nv; ++k) {                                           \
            a[k] = (v_u64){ID, ID, ID, ID};                                  \
        }                                                                    \
        for (j = 0; j < 4; ++j) {                                            \
            r[j] = ID;                                                       \
        }                                                                    \
        /* 4 rows a step (each accumulator loaded and stored once a step),   \
         * the last rows one at a time, the last few segments in scalars */  \
        for (i = 0; i < L; i += n4) {                                        \
            const s_##X *r0 = p + (ptrdiff_t)i * es;                         \
            size_t q;                                                        \
            n4 = i + 4 <= L ? 4 : 1;                                         \
            if (n4 == 4) {                                                   \
                const s_##X *r1 = r0 + es, *r2 = r1 + es, *r3 = r2 + es;     \
                for (k = 0; k < nv; ++k) {                                   \
                    v_u64 t = OP(a[k], CV(r0 + 4 * k));                      \
                    t = OP(t, CV(r1 + 4 * k));                               \
                    t = OP(t, CV(r2 + 4 * k));                               \
                    a[k] = OP(t, CV(r3 + 4 * k));                            \
                }                                                            \
            } else {                                                         \
                for (k = 0; k < nv; ++k) {                                   \
                    a[k] = OP(a[k], CV(r0 + 4 * k));                         \
                }                                                            \
            }                                                                \
            for (q = 0; q < n4; ++q) {                                       \
                const s_##X *row = r0 + (ptrdiff_t)q * es;                   \
                for (j = 4 * nv; j < B; ++j) {                               \
                    r[j - 4 * nv] = OP(r[j - 4 * nv], CS(row[j]));           \
                }                                                            \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.u64 = j < 4 * nv ? a[j / 4][j % 4] : r[j - 4 * nv];       \
        }                                                                    \
    }

#define DEF_INT_KERNELS(X, CV, CS)                                           \
    DEF_IFOLD(isum_##X, X, CV, CS, OP_ADD, 0)                                \
    DEF_IFOLD(iprod_##X, X, CV, CS, OP_MUL, 1)                               \
    DEF_ICOL(isumc_##X, X, CV, CS, OP_ADD, 0)                                \
    DEF_ICOL(iprodc_##X, X, CV, CS, OP_MUL, 1)
DEF_INT_KERNELS(b, CV_BOOL, CS_BOOL)
DEF_INT_KERNELS(i8, CV_SIGNED, CS_SIGNED)
DEF_INT_KERNELS(u8, CV_UNSIGNED, CS_UNSIGNED)
DEF_INT_KERNELS(i16, CV_SIGNED, CS_SIGNED)
DEF_INT_KERNELS(u16, CV_UNSIGNED, CS_UNSIGNED)
DEF_INT_KERNELS(i32, CV_SIGNED, CS_SIGNED)
DEF_INT_KERNELS(u32, CV_UNSIGNED, CS_UNSIGNED)
DEF_INT_KERNELS(i64, CV_SIGNED, CS_SIGNED)
DEF_INT_KERNELS(u64, CV_UNSIGNED, CS_UNSIGNED)

/* ------------------------------------------ float32 sum in double (wide)
 * 8 accumulators of 4 doubles: 32 floats a step.  Their combination order
 * differs from the device's, but double sums of floats are exact or nearly
 * so: the rounded result is the same in practice. */
static GR_CLONES void fsumw_f32(const void *vp, size_t n, size_t base,
                                gr_hstate *s)
{
    const float *p = (const float *)vp;
    v_f64 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0,
          a6 = a0, a7 = a0;
    double acc = 0.0;
    size_t i = 0;
    (void)base;
    /* 32 elements a step, each 4 widened and added to its accumulator */
    for (; i + 32 <= n; i += 32) {
        a0 += CV_F64(p + i);
        a1 += CV_F64(p + i + 4);
        a2 += CV_F64(p + i + 8);
        a3 += CV_F64(p + i + 12);
        a4 += CV_F64(p + i + 16);
        a5 += CV_F64(p + i + 20);
        a6 += CV_F64(p + i + 24);
        a7 += CV_F64(p + i + 28);
    }
    /* the remaining groups of 4 */
    for (; i + 4 <= n; i += 4) {
        a0 += CV_F64(p + i);
    }
    a0 = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    acc = (a0[0] + a0[1]) + (a0[2] + a0[3]);
    /* the tail */
    for (; i < n; ++i) {
        acc += (double)p[i];
    }
    s->v.f64 += acc;
}

static GR_CLONES void fsumwc_f32(const void *vp, size_t B, size_t L,
                                 ptrdiff_t es, gr_hstate *s, void *scratch)
{
    const float *p = (const float *)vp;
    v_f64 *a = (v_f64 *)scratch;
    double r[4] = {0, 0, 0, 0};
    const size_t nv = B / 4;
    size_t i, k, j, n4;
    for (k = 0; k < nv; ++k) {
        a[k] = (v_f64){0, 0, 0, 0};
    }
    /* 4 rows a step (each accumulator loaded and stored once a step),
     * the last rows one at a time, the last few segments in scalars */
    for (i = 0; i < L; i += n4) {
        const float *r0 = p + (ptrdiff_t)i * es;
        size_t q;
        n4 = i + 4 <= L ? 4 : 1;
        if (n4 == 4) {
            const float *r1 = r0 + es, *r2 = r1 + es, *r3 = r2 + es;
            for (k = 0; k < nv; ++k) {
                v_f64 t = a[k] + CV_F64(r0 + 4 * k);
                t += CV_F64(r1 + 4 * k);
                t += CV_F64(r2 + 4 * k);
                a[k] = t + CV_F64(r3 + 4 * k);
            }
        } else {
            for (k = 0; k < nv; ++k) {
                a[k] += CV_F64(r0 + 4 * k);
            }
        }
        for (q = 0; q < n4; ++q) {
            const float *row = r0 + (ptrdiff_t)q * es;
            for (j = 4 * nv; j < B; ++j) {
                r[j - 4 * nv] += (double)row[j];
            }
        }
    }
    for (j = 0; j < B; ++j) {
        s[j].v.f64 = j < 4 * nv ? a[j / 4][j % 4] : r[j - 4 * nv];
    }
}

/* ----------------------------------------- compensated sums (TwoSum)
 * float64 (and float32 when not wide): 4 vector states (v, x) updated by
 * TwoSum, then merged lane by lane into the segment's state.  The fold
 * reads TIN elements, each loaded as X (LOADV: a vector of W, LOADS:
 * one). */
#define DEF_FCOMP_FOLD(NAME, TIN, X, LOADV, LOADS)                           \
    static GR_CLONES_FMA void NAME(const void *vp, size_t n, size_t base,    \
                                   gr_hstate *s)                             \
    {                                                                        \
        const TIN *p = (const TIN *)vp;                                      \
        const size_t W = LANES(X);                                           \
        const v_##X m1 = (v_##X){0} + (s_##X)NEG_ONE;                        \
        v_##X v0 = {0}, v1 = v0, v2 = v0, v3 = v0;                           \
        v_##X x0 = v0, x1 = v0, x2 = v0, x3 = v0;                            \
        s_##X sv = s->v.X, sx = s->x.X;                                      \
        size_t i = 0;                                                        \
        int l;                                                               \
        (void)base;                                                          \
        /* 4 vectors a step, each into its own compensated state */        \
        for (; i + 4 * W <= n; i += 4 * W) {                                 \
            v_##X y0 = LOADV(p + i), y1 = LOADV(p + i + W);                  \
            v_##X y2 = LOADV(p + i + 2 * W);                                 \
            v_##X y3 = LOADV(p + i + 3 * W);                                 \
            TWOSUM_F(v_##X, v0, x0, y0, m1);                                 \
            TWOSUM_F(v_##X, v1, x1, y1, m1);                                 \
            TWOSUM_F(v_##X, v2, x2, y2, m1);                                 \
            TWOSUM_F(v_##X, v3, x3, y3, m1);                                 \
        }                                                                    \
        /* the remaining whole vectors */                                   \
        for (; i + W <= n; i += W) {                                         \
            v_##X y0 = LOADV(p + i);                                         \
            TWOSUM_F(v_##X, v0, x0, y0, m1);                                 \
        }                                                                    \
        /* states and lanes merged into the segment's state */              \
        TWOMERGE(v_##X, v0, x0, v1, x1);                                     \
        TWOMERGE(v_##X, v2, x2, v3, x3);                                     \
        TWOMERGE(v_##X, v0, x0, v2, x2);                                     \
        for (l = 0; l < (int)W; ++l) {                                       \
            TWOMERGE(s_##X, sv, sx, v0[l], x0[l]);                           \
        }                                                                    \
        /* the tail */                                                       \
        for (; i < n; ++i) {                                                 \
            TWOSUM(s_##X, sv, sx, LOADS(p[i]));                              \
        }                                                                    \
        s->v.X = sv;                                                         \
        s->x.X = sx;                                                         \
    }
#define LDV_f32(p) LD(v_f32, p)
#define LDV_f64(p) LD(v_f64, p)
#define LDS_SAME(y) (y)
#define LDS_F64(y) ((double)(y))
#define DEF_FCOMP(X)                                                         \
    DEF_FCOMP_FOLD(fcomp_##X, s_##X, X, LDV_##X, LDS_SAME)                   \
    static GR_CLONES_FMA void fcompc_##X(const void *vp, size_t B,          \
                                         size_t L, ptrdiff_t es,             \
                                         gr_hstate *s, void *scratch)        \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        enum { W = LANES(X) };                                               \
        const size_t nv = B / W;                                             \
        const v_##X m1 = (v_##X){0} + (s_##X)NEG_ONE;                        \
        v_##X *v = (v_##X *)scratch, *x = v + nv;                            \
        s_##X rv[W], rx[W];                                                  \
        size_t i, k, j, n4;                                                  \
        for (k = 0; k < nv; ++k) {                                           \
            v[k] = (v_##X){0};                                               \
            x[k] = (v_##X){0};                                               \
        }                                                                    \
        for (j = 0; j < W; ++j) {                                            \
            rv[j] = 0;                                                       \
            rx[j] = 0;                                                       \
        }                                                                    \
        /* 4 rows a step (each accumulator loaded and stored once a step),   \
         * the last rows one at a time, the last few segments in scalars */  \
        for (i = 0; i < L; i += n4) {                                        \
            const s_##X *r0 = p + (ptrdiff_t)i * es;                         \
            size_t q;                                                        \
            n4 = i + 4 <= L ? 4 : 1;                                         \
            if (n4 == 4) {                                                   \
                const s_##X *r1 = r0 + es, *r2 = r1 + es, *r3 = r2 + es;     \
                /* two vectors of segments at once: twice the            \
                 * independent work in flight */                             \
                for (k = 0; k + 2 <= nv; k += 2) {                           \
                    v_##X tv = v[k], tx = x[k], uv = v[k + 1], ux = x[k + 1];\
                    const s_##X *c0 = r0 + W * k, *c1 = r1 + W * k;          \
                    const s_##X *c2 = r2 + W * k, *c3 = r3 + W * k;          \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, c0), m1);              \
                    TWOSUM_F(v_##X, uv, ux, LD(v_##X, c0 + W), m1);          \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, c1), m1);              \
                    TWOSUM_F(v_##X, uv, ux, LD(v_##X, c1 + W), m1);          \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, c2), m1);              \
                    TWOSUM_F(v_##X, uv, ux, LD(v_##X, c2 + W), m1);          \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, c3), m1);              \
                    TWOSUM_F(v_##X, uv, ux, LD(v_##X, c3 + W), m1);          \
                    v[k] = tv;                                               \
                    x[k] = tx;                                               \
                    v[k + 1] = uv;                                           \
                    x[k + 1] = ux;                                           \
                }                                                            \
                for (; k < nv; ++k) {                                        \
                    v_##X tv = v[k], tx = x[k];                              \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, r0 + W * k), m1);      \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, r1 + W * k), m1);      \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, r2 + W * k), m1);      \
                    TWOSUM_F(v_##X, tv, tx, LD(v_##X, r3 + W * k), m1);      \
                    v[k] = tv;                                               \
                    x[k] = tx;                                               \
                }                                                            \
            } else {                                                         \
                for (k = 0; k < nv; ++k) {                                   \
                    TWOSUM_F(v_##X, v[k], x[k], LD(v_##X, r0 + W * k), m1);  \
                }                                                            \
            }                                                                \
            for (q = 0; q < n4; ++q) {                                       \
                const s_##X *row = r0 + (ptrdiff_t)q * es;                   \
                for (j = W * nv; j < B; ++j) {                               \
                    TWOSUM(s_##X, rv[j - W * nv], rx[j - W * nv], row[j]);   \
                }                                                            \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.X = j < W * nv ? v[j / W][j % W] : rv[j - W * nv];        \
            s[j].x.X = j < W * nv ? x[j / W][j % W] : rx[j - W * nv];        \
        }                                                                    \
    }
DEF_FCOMP(f32)
DEF_FCOMP(f64)

/* ------------------------------------- column sums on AVX-512 (colz)
 * float64: the sums of fcompc_f64 (TwoSum's state (v, x) per column), with
 * fewer operations.  Dekker's Fast2Sum t = a + b, e = b - (t - a) is exact
 * when |a| >= |b|, and vrangepd orders (v, y) by magnitude in one
 * instruction each way.  t is computed as v + y (the same value; a NaN in
 * y, which vrangepd drops, still reaches v), so every step has TwoSum's t,
 * and e is the exact error whenever t is finite, as TwoSum's is: v and x
 * are TwoSum's wherever the result v + x is used (a non-finite v is the
 * result on its own; only a NaN result's sign bit may differ, as it does
 * with the order of an add's operands).  The subtractions and x's add run
 * as fmas by 1 (the same bits), so 8 columns take 2 ranges and 1 add on
 * the add pipes and 3 fmas on the multiply pipes: 6 operations against
 * TwoSum's 7, and one instruction per 8 columns, not 4.  Accuracy is
 * unchanged: every add still compensated.  (Summing a block of rows
 * plainly, then compensating the block's sum, is not: it misses the
 * correctly rounded sum of wide-range columns even for blocks of 2 rows.)
 * 2-core Zen 4, the C call alone on arrays 16 bytes into a line (as
 * NumPy's large ones), us, fcompc_f64 (x86-64-v3 clone) -> this: 512 x
 * 1024 96-98 -> 80-86; 1024 x 512 95-100 -> 79-87; 4096 x 128 116-121 ->
 * 89-103.
 *
 * Rows that span more than COLZ_PF_MIN (out of the caches) are prefetched
 * COLZ_PF_BYTES ahead, at least 4 rows: the fold keeps so many operations
 * in flight per cache line that the core's own misses are too few to
 * stream from memory (16384 x 128 float64: 1730-1870 -> 380-430 us;
 * 65536 x 128: 8800 -> 2900-3000 us).
 *
 * The kernels write finished results, 8 columns at a time: no per-segment
 * states, no finish call per column (2 x 8192 float64: 31.6 -> 6.0 us,
 * 8 x 1024: 4.8 -> 1.6 us). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GR_HOST_NO_CLONES) && \
    (defined(__clang__) || __GNUC__ >= 8)
#define GR_HAVE_COLZ 1
#include <immintrin.h>

#define GR_TARGET_Z __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))
#define COLZ_PF_MIN ((size_t)8 << 20)
#define COLZ_PF_BYTES ((size_t)16 << 10)
/* scratch of fcompz_f64 for B columns: v and x, each placed in its page */
#define COLZ_SCRATCH(B) (16 * (B) + 8192 + 512)

typedef void (*colz_fn)(const void *p, size_t B, size_t L, ptrdiff_t es,
                        void *out, void *scratch);

static volatile const double POS_ONE = 1.0;

/* (v, x) += y for 8 columns, one = 1.0 in every lane. */
#define F2SUM_Z(v, x, y, one)                                                \
    do {                                                                     \
        const __m512d y_ = (y);                                              \
        const __m512d a_ = _mm512_range_pd((v), y_, 0x7); /* |.| larger  */ \
        const __m512d b_ = _mm512_range_pd((v), y_, 0x6); /* |.| smaller */ \
        const __m512d t_ = _mm512_add_pd((v), y_);                           \
        const __m512d z_ = _mm512_fnmadd_pd(a_, (one), t_); /* t - a */     \
        (x) = _mm512_fmadd_pd(_mm512_fnmadd_pd(z_, (one), b_), (one), (x));  \
        (v) = t_;                                                            \
    } while (0)
/* 4 rows of the vector of columns k (mask m: its lanes, LOAD(m, p) the
 * load) into its accumulators. */
#define COLZ_STEP4(k, m, LOAD)                                               \
    do {                                                                     \
        __m512d tv_ = _mm512_load_pd(v + 8 * (k));                           \
        __m512d tx_ = _mm512_load_pd(x + 8 * (k));                           \
        PF_Z(r0 + 8 * (k), pf);                                              \
        PF_Z(r1 + 8 * (k), pf);                                              \
        PF_Z(r2 + 8 * (k), pf);                                              \
        PF_Z(r3 + 8 * (k), pf);                                              \
        F2SUM_Z(tv_, tx_, LOAD((m), r0 + 8 * (k)), one);                     \
        F2SUM_Z(tv_, tx_, LOAD((m), r1 + 8 * (k)), one);                     \
        F2SUM_Z(tv_, tx_, LOAD((m), r2 + 8 * (k)), one);                     \
        F2SUM_Z(tv_, tx_, LOAD((m), r3 + 8 * (k)), one);                     \
        _mm512_store_pd(v + 8 * (k), tv_);                                   \
        _mm512_store_pd(x + 8 * (k), tx_);                                   \
    } while (0)
/* Prefetch of the line at p into L2 (pf: 0, none). */
#define PF_Z(p, pf)                                                          \
    do {                                                                     \
        if (pf) {                                                            \
            _mm_prefetch((const char *)((p) + (pf)), _MM_HINT_T1);           \
        }                                                                    \
    } while (0)
/* The row loop of the colz kernels (in scope: p, L, es, nv, g, m0, mt, pf,
 * i, k, n4): 4 rows a step -- the masked first vector of columns
 * (STEP4(k, m), rows r0..r3), two vectors at a time between (PAIR(k, c0,
 * c1, c2, c3) after their prefetch), the rest one at a time and the masked
 * last -- and the last rows one at a time (ONE(k, m, r0), every vector
 * masked as colz_mask says). */
#define COLZ_ROWS(T, STEP4, PAIR, ONE)                                       \
    for (i = 0; i < L; i += n4) {                                            \
        const T *r0 = p + (ptrdiff_t)i * es;                                 \
        n4 = i + 4 <= L ? 4 : 1;                                             \
        if (n4 == 4) {                                                       \
            const T *r1 = r0 + es, *r2 = r1 + es, *r3 = r2 + es;             \
            const size_t last = nv - 1;                                      \
            STEP4(0, m0);                                                    \
            for (k = 1; k + 2 <= last; k += 2) {                             \
                const T *c0 = r0 + 8 * k, *c1 = r1 + 8 * k;                  \
                const T *c2 = r2 + 8 * k, *c3 = r3 + 8 * k;                  \
                PF_Z(c0, pf);                                                \
                PF_Z(c0 + 8, pf);                                            \
                PF_Z(c1, pf);                                                \
                PF_Z(c1 + 8, pf);                                            \
                PF_Z(c2, pf);                                                \
                PF_Z(c2 + 8, pf);                                            \
                PF_Z(c3, pf);                                                \
                PF_Z(c3 + 8, pf);                                            \
                PAIR(k, c0, c1, c2, c3);                                     \
            }                                                                \
            for (; k < last; ++k) {                                          \
                STEP4(k, 0xFF);                                              \
            }                                                                \
            if (last > 0) {                                                  \
                STEP4(last, mt);                                             \
            }                                                                \
        } else {                                                             \
            for (k = 0; k < nv; ++k) {                                       \
                ONE(k, (__mmask8)colz_mask(&g, k), r0);                      \
            }                                                                \
        }                                                                    \
    }

/* Where in a 4 KiB page, relative to the rows' own phase, the kernel's
 * accumulators go: a multiple of 256 as far as possible from the phases of
 * the 4 rows it reads together (0, rb, 2 rb, 3 rb mod 4096) and from
 * `other` (4096: none).  A load whose address matches an earlier store's
 * in its low 12 bits waits for that store (4K aliasing): rows starting 16
 * bytes into a line with the accumulators at their phase took 0.81-1.03 ns
 * per 4 elements (4096 x 128 ... 512 x 1024), 0.59-0.68 ns placed so. */
static size_t colz_phase(size_t rb, size_t other)
{
    size_t best = 0, at = 0, o, j;
    for (o = 0; o < 4096; o += 256) {
        size_t near = 4096;
        for (j = 0; j < 5; ++j) {
            const size_t ph = j < 4 ? (j * rb) & 4095 : other;
            size_t d = (o - ph) & 4095;
            if (j == 4 && other >= 4096) {
                break;
            }
            d = d < 4096 - d ? d : 4096 - d;
            near = d < near ? d : near;
        }
        if (near > best) {
            best = near;
            at = o;
        }
    }
    return at;
}

/* The lanes and prefetch of a colz kernel over B columns of esz-byte
 * elements at vp, L rows es elements apart: lanes count from vp's
 * `align`-byte boundary (p), s of them before vp; nv vectors of 8 lanes,
 * the first masked by m0 and the last by mt; rb bytes a row; pf the
 * prefetch distance in elements (0: data in the caches). */
typedef struct {
    size_t s, nv, rb;
    unsigned m0, mt;
    ptrdiff_t pf;
} colz_geom;

static colz_geom colz_geom_of(const void *vp, size_t B, size_t L,
                              ptrdiff_t es, size_t esz, size_t align)
{
    colz_geom g;
    size_t ahead = 0;
    g.s = ((uintptr_t)vp & (align - 1)) / esz;
    g.nv = (B + g.s + 7) / 8;
    g.mt = 0xFFu >> (8 * g.nv - (B + g.s));
    g.m0 = (0xFFu << g.s) & (g.nv == 1 ? g.mt : 0xFFu);
    g.rb = (size_t)(es < 0 ? -es : es) * esz;
    if (g.rb != 0 && L * g.rb > COLZ_PF_MIN) {
        ahead = (COLZ_PF_BYTES + g.rb - 1) / g.rb;
        ahead = ahead < 4 ? 4 : ahead;
    }
    g.pf = (ptrdiff_t)ahead * es;
    return g;
}

/* Vector k's mask. */
static unsigned colz_mask(const colz_geom *g, size_t k)
{
    return k == 0 ? g->m0 : k == g->nv - 1 ? g->mt : 0xFFu;
}

/* Accumulators in scratch (64-byte aligned from `from`), o bytes after
 * the phase of p's line in their 4 KiB page. */
static double *colz_place(uintptr_t from, const void *p, size_t o)
{
    const uintptr_t base = (from + 63) & ~(uintptr_t)63;
    const uintptr_t ph = (uintptr_t)p & ~(uintptr_t)63;
    return (double *)(base + ((ph + o - base) & 4095));
}

static GR_TARGET_Z void fcompz_f64(const void *vp, size_t B, size_t L,
                                   ptrdiff_t es, void *outp, void *scratch)
{
    /* Lanes are columns counted from the start of p's cache line: the
     * first vector's lanes below s and the last one's past B are masked
     * off (masked loads do not touch memory, masked lanes stay 0), so
     * rows that start on a line load whole lines (NumPy's large arrays
     * start 16 bytes into one: 1.4x slower unaligned). */
    const colz_geom g = colz_geom_of(vp, B, L, es, sizeof(double), 64);
    const size_t nv = g.nv;
    const __mmask8 mt = (__mmask8)g.mt, m0 = (__mmask8)g.m0;
    const ptrdiff_t pf = g.pf;
    const double *p = (const double *)((uintptr_t)vp - g.s * sizeof(double));
    const __m512d one = _mm512_set1_pd(POS_ONE);
    const size_t o = colz_phase(g.rb, 4096); /* v's phase, x's next */
    /* the accumulators, each placed in its 4 KiB page o (o2) bytes after
     * the rows' phase */
    double *v = colz_place((uintptr_t)scratch, p, o);
    double *x = colz_place((uintptr_t)(v + 8 * nv), p, colz_phase(g.rb, o));
    uintptr_t out = (uintptr_t)outp - g.s * sizeof(double);
    size_t i, k, n4;
    for (k = 0; k < nv; ++k) {
        _mm512_store_pd(v + 8 * k, _mm512_setzero_pd());
        _mm512_store_pd(x + 8 * k, _mm512_setzero_pd());
    }
    /* 4 rows a step, two vectors of columns at a time (as fcompc), the
     * masked first and last vectors alone, the last rows one at a time */
#define F64_STEP4(k, m) COLZ_STEP4(k, m, _mm512_maskz_loadu_pd)
#define F64_PAIR(k, c0, c1, c2, c3)                                          \
    do {                                                                     \
        __m512d tv = _mm512_load_pd(v + 8 * k);                              \
        __m512d tx = _mm512_load_pd(x + 8 * k);                              \
        __m512d uv = _mm512_load_pd(v + 8 * k + 8);                          \
        __m512d ux = _mm512_load_pd(x + 8 * k + 8);                          \
        F2SUM_Z(tv, tx, _mm512_loadu_pd(c0), one);                           \
        F2SUM_Z(uv, ux, _mm512_loadu_pd(c0 + 8), one);                       \
        F2SUM_Z(tv, tx, _mm512_loadu_pd(c1), one);                           \
        F2SUM_Z(uv, ux, _mm512_loadu_pd(c1 + 8), one);                       \
        F2SUM_Z(tv, tx, _mm512_loadu_pd(c2), one);                           \
        F2SUM_Z(uv, ux, _mm512_loadu_pd(c2 + 8), one);                       \
        F2SUM_Z(tv, tx, _mm512_loadu_pd(c3), one);                           \
        F2SUM_Z(uv, ux, _mm512_loadu_pd(c3 + 8), one);                       \
        _mm512_store_pd(v + 8 * k, tv);                                      \
        _mm512_store_pd(x + 8 * k, tx);                                      \
        _mm512_store_pd(v + 8 * k + 8, uv);                                  \
        _mm512_store_pd(x + 8 * k + 8, ux);                                  \
    } while (0)
#define F64_ONE(k, m, r0)                                                    \
    do {                                                                     \
        __m512d tv = _mm512_load_pd(v + 8 * k);                              \
        __m512d tx = _mm512_load_pd(x + 8 * k);                              \
        F2SUM_Z(tv, tx, _mm512_maskz_loadu_pd(m, r0 + 8 * k), one);          \
        _mm512_store_pd(v + 8 * k, tv);                                      \
        _mm512_store_pd(x + 8 * k, tx);                                      \
    } while (0)
    COLZ_ROWS(double, F64_STEP4, F64_PAIR, F64_ONE)
#undef F64_STEP4
#undef F64_PAIR
#undef F64_ONE
    /* finished: v + x, or v where v is infinite (FIN_F64C; a NaN v gives
     * NaN either way) */
    for (k = 0; k < nv; ++k) {
        const __mmask8 m = (__mmask8)colz_mask(&g, k);
        const __m512d tv = _mm512_load_pd(v + 8 * k);
        const __m512d sum = _mm512_add_pd(tv, _mm512_load_pd(x + 8 * k));
        const __mmask8 inf = _mm512_fpclass_pd_mask(tv, 0x18); /* +-inf */
        _mm512_mask_storeu_pd((void *)(out + 64 * k), m,
                              _mm512_mask_blend_pd(inf, sum, tv));
    }
}

/* float32 column sums in double (wide), 8 columns a vector at 512 bits:
 * fsumwc_f32's sums (each column's elements added in row order to a
 * double, rounded once to float), bit for bit, with fcompz_f64's masked
 * first and last vectors (lanes from p's 32-byte boundary), two vectors at
 * a time between them, accumulator placement and prefetch (of every
 * vector's 32 bytes: the rows' lines hold two).  2-core Zen 4, the C call
 * alone on float32 arrays 16 bytes into a line, us, fsumwc_f32 (avx2
 * clone, per-column finish) -> this: 2 x 8192 23.5 -> 3.5; 8 x 2048 6.6
 * -> 1.8; 8192 x 512 900-1500 -> 310-340; 131072 x 128 7800-9300 ->
 * 3400-4000; from the caches (512 x 2048, 1024 x 1024, 4096 x 128) 45-88
 * -> 42-82. */
static GR_TARGET_Z void fsumwz_f32(const void *vp, size_t B, size_t L,
                                   ptrdiff_t es, void *outp, void *scratch)
{
    const colz_geom g = colz_geom_of(vp, B, L, es, sizeof(float), 32);
    const size_t nv = g.nv;
    const __mmask8 mt = (__mmask8)g.mt, m0 = (__mmask8)g.m0;
    const ptrdiff_t pf = g.pf;
    const float *p = (const float *)((uintptr_t)vp - g.s * sizeof(float));
    double *a = colz_place((uintptr_t)scratch, p, colz_phase(g.rb, 4096));
    uintptr_t out = (uintptr_t)outp - g.s * sizeof(float);
    size_t i, k, n4;
    for (k = 0; k < nv; ++k) {
        _mm512_store_pd(a + 8 * k, _mm512_setzero_pd());
    }
#define LDW(m, q) _mm512_cvtps_pd(_mm256_maskz_loadu_ps((m), (q)))
#define LDU(q) _mm512_cvtps_pd(_mm256_loadu_ps(q))
#define SUMW_STEP4(k, m)                                                     \
    do {                                                                     \
        __m512d t_ = _mm512_load_pd(a + 8 * (k));                            \
        PF_Z(r0 + 8 * (k), pf);                                              \
        PF_Z(r1 + 8 * (k), pf);                                              \
        PF_Z(r2 + 8 * (k), pf);                                              \
        PF_Z(r3 + 8 * (k), pf);                                              \
        t_ = _mm512_add_pd(t_, LDW((m), r0 + 8 * (k)));                      \
        t_ = _mm512_add_pd(t_, LDW((m), r1 + 8 * (k)));                      \
        t_ = _mm512_add_pd(t_, LDW((m), r2 + 8 * (k)));                      \
        t_ = _mm512_add_pd(t_, LDW((m), r3 + 8 * (k)));                      \
        _mm512_store_pd(a + 8 * (k), t_);                                    \
    } while (0)
#define SUMW_PAIR(k, c0, c1, c2, c3)                                         \
    do {                                                                     \
        __m512d t = _mm512_load_pd(a + 8 * k);                               \
        __m512d u = _mm512_load_pd(a + 8 * k + 8);                           \
        t = _mm512_add_pd(t, LDU(c0));                                       \
        u = _mm512_add_pd(u, LDU(c0 + 8));                                   \
        t = _mm512_add_pd(t, LDU(c1));                                       \
        u = _mm512_add_pd(u, LDU(c1 + 8));                                   \
        t = _mm512_add_pd(t, LDU(c2));                                       \
        u = _mm512_add_pd(u, LDU(c2 + 8));                                   \
        t = _mm512_add_pd(t, LDU(c3));                                       \
        u = _mm512_add_pd(u, LDU(c3 + 8));                                   \
        _mm512_store_pd(a + 8 * k, t);                                       \
        _mm512_store_pd(a + 8 * k + 8, u);                                   \
    } while (0)
#define SUMW_ONE(k, m, r0)                                                   \
    _mm512_store_pd(a + 8 * k,                                               \
                    _mm512_add_pd(_mm512_load_pd(a + 8 * k), LDW(m, r0 + 8 * k)))
    COLZ_ROWS(float, SUMW_STEP4, SUMW_PAIR, SUMW_ONE)
#undef LDW
#undef LDU
#undef SUMW_STEP4
#undef SUMW_PAIR
#undef SUMW_ONE
    for (k = 0; k < nv; ++k) {
        const __mmask8 m = (__mmask8)colz_mask(&g, k);
        _mm256_mask_storeu_ps((void *)(out + 32 * k), m,
                              _mm512_cvtpd_ps(_mm512_load_pd(a + 8 * k)));
    }
}

/* min/max of float rows on AVX-512 (issue 12's 2-core row): the fold of
 * DEF_MM with one vmaxps/vminps per vector (y > a ? y : a is MAXPS(y, a)
 * exactly: a NaN y leaves a; ties keep a) and one unordered compare per
 * two vectors for the NaN flag, instead of a compare, a blend and a NaN
 * compare each (the AVX2 clone: ~20 instructions per 32 floats, compute-
 * bound at 1-16 MiB where NumPy was faster).  Zero signs and NaNs are
 * settled from memory afterwards (FIN_MINMAX), as for DEF_MM. */
/* The AVX-512 min/max loop of DEF_MMZ and DEF_ARGZ: whole vectors of
 * p[i..n), four accumulators, NaNs two vectors at a time into nn. */
#define MMZ_LANES(V, W, SFX, OP, p, n, i, a0, a1, a2, a3, nn)                \
    do {                                                                     \
        for (; (i) + 4 * (W) <= (n); (i) += 4 * (W)) {                       \
            const V y0 = _mm512_loadu_##SFX((p) + (i));                      \
            const V y1 = _mm512_loadu_##SFX((p) + (i) + (W));                \
            const V y2 = _mm512_loadu_##SFX((p) + (i) + 2 * (W));            \
            const V y3 = _mm512_loadu_##SFX((p) + (i) + 3 * (W));            \
            a0 = _mm512_##OP##_##SFX(y0, a0);                                \
            a1 = _mm512_##OP##_##SFX(y1, a1);                                \
            a2 = _mm512_##OP##_##SFX(y2, a2);                                \
            a3 = _mm512_##OP##_##SFX(y3, a3);                                \
            nn |= _mm512_cmp_##SFX##_mask(y0, y1, _CMP_UNORD_Q) |            \
                  _mm512_cmp_##SFX##_mask(y2, y3, _CMP_UNORD_Q);             \
        }                                                                    \
        for (; (i) + (W) <= (n); (i) += (W)) {                               \
            const V y0 = _mm512_loadu_##SFX((p) + (i));                      \
            a0 = _mm512_##OP##_##SFX(y0, a0);                                \
            nn |= _mm512_cmp_##SFX##_mask(y0, y0, _CMP_UNORD_Q);             \
        }                                                                    \
        a0 = _mm512_##OP##_##SFX(a1, a0);                                    \
        a2 = _mm512_##OP##_##SFX(a3, a2);                                    \
        a0 = _mm512_##OP##_##SFX(a2, a0);                                    \
    } while (0)

#define DEF_MMZ(NAME, T, X, V, W, SFX, MT, OP, CMP, IDENT)                    \
    static GR_TARGET_Z void NAME(const void *vp, size_t n, size_t base,      \
                                 gr_hstate *s)                               \
    {                                                                        \
        const T *p = (const T *)vp;                                          \
        V a0 = _mm512_set1_##SFX(IDENT), a1 = a0, a2 = a0, a3 = a0;          \
        MT nn = 0;                                                           \
        T r = s->v.X, lanes[W];                                              \
        size_t i = 0;                                                        \
        int nan = 0;                                                         \
        (void)base;                                                          \
        /* to a 64-byte boundary first: a vector that straddles two cache   \
         * lines costs two loads (NumPy's data is 16-byte aligned) */       \
        const size_t head_ = ((64 - ((uintptr_t)p & 63)) & 63) / sizeof(T);  \
        for (; i < head_ && i < n; ++i) {                                    \
            r = p[i] CMP r ? p[i] : r;                                       \
            nan |= p[i] != p[i];                                             \
        }                                                                    \
        MMZ_LANES(V, W, SFX, OP, p, n, i, a0, a1, a2, a3, nn);               \
        _mm512_storeu_##SFX(lanes, a0);                                      \
        nan |= nn != 0;                                                      \
        for (int l = 0; l < W; ++l) {                                        \
            r = lanes[l] CMP r ? lanes[l] : r;                               \
        }                                                                    \
        for (; i < n; ++i) {                                                 \
            r = p[i] CMP r ? p[i] : r;                                       \
            nan |= p[i] != p[i];                                             \
        }                                                                    \
        s->v.X = r;                                                          \
        s->flag |= nan;                                                      \
    }

DEF_MMZ(minz_f32, float, f32, __m512, 16, ps, __mmask16, min, <, INFINITY)
DEF_MMZ(maxz_f32, float, f32, __m512, 16, ps, __mmask16, max, >, -INFINITY)
DEF_MMZ(minz_f64, double, f64, __m512d, 8, pd, __mmask8, min, <,
        (double)INFINITY)
DEF_MMZ(maxz_f64, double, f64, __m512d, 8, pd, __mmask8, max, >,
        -(double)INFINITY)

/* Float32 rows summed in double (wide) on AVX-512: fsumw_f32's sum with
 * 8-lane conversions, half its instructions (a core of the H100 host's
 * Xeon converts one vector a cycle either width: 16 threads summing 256
 * MiB read 116 GB/s with fsumw_f32, torch's plain float32 sum 180). */
static GR_TARGET_Z void fsumwz_fold_f32(const void *vp, size_t n,
                                        size_t base, gr_hstate *s)
{
    const float *p = (const float *)vp;
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0,
            a5 = a0, a6 = a0, a7 = a0;
    double lanes[8], acc = 0.0;
    size_t i = 0;
    if (n < 256) {
        /* short rows: the 256-bit loop's set-up is cheaper (2^22 rows of
         * 16 on the H100 host's 16 threads: 17.1 ms here, 5.9 there) */
        fsumw_f32(vp, n, base, s);
        return;
    }
    /* 64 elements a step, 8 widened at a time into 8 accumulators */
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_loadu_ps(p + i)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm256_loadu_ps(p + i + 8)));
        a2 = _mm512_add_pd(a2, _mm512_cvtps_pd(_mm256_loadu_ps(p + i + 16)));
        a3 = _mm512_add_pd(a3, _mm512_cvtps_pd(_mm256_loadu_ps(p + i + 24)));
        a4 = _mm512_add_pd(a4, _mm512_cvtps_pd(_mm256_loadu_ps(p + i + 32)));
        a5 = _mm512_add_pd(a5, _mm512_cvtps_pd(_mm256_loadu_ps(p + i + 40)));
        a6 = _mm512_add_pd(a6, _mm512_cvtps_pd(_mm256_loadu_ps(p + i + 48)));
        a7 = _mm512_add_pd(a7, _mm512_cvtps_pd(_mm256_loadu_ps(p + i + 56)));
    }
    for (; i + 8 <= n; i += 8) {
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_loadu_ps(p + i)));
    }
    a0 = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)),
                       _mm512_add_pd(_mm512_add_pd(a4, a5), _mm512_add_pd(a6, a7)));
    _mm512_storeu_pd(lanes, a0);
    acc = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
          ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < n; ++i) {
        acc += (double)p[i];
    }
    s->v.f64 += acc;
}

/* The AVX-512 kernels where the CPU (and the OS) has AVX-512F, DQ and VL. */
static int have_colz(void)
{
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
    }
    return have;
}
#endif

/* float32 into a compensated float64 sum (mean of float32, sum with
 * dtype=float64): each float widened as it is loaded, no gathered copy in
 * chunks of CH. */
DEF_FCOMP_FOLD(fcomp_f32d, float, f64, CV_F64, LDS_F64)

/* ------------------------------------------------- float products */
#define DEF_FMUL(X)                                                          \
    static GR_CLONES void fmul_##X(const void *vp, size_t n, size_t base,    \
                                   gr_hstate *s)                             \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        const size_t W = LANES(X);                                           \
        v_##X a0 = (v_##X){0} + 1, a1 = a0, a2 = a0, a3 = a0;                \
        s_##X acc = s->v.X;                                                  \
        size_t i = 0;                                                        \
        int l;                                                               \
        (void)base;                                                          \
        /* 4 vectors a step into 4 accumulators */                          \
        for (; i + 4 * W <= n; i += 4 * W) {                                 \
            a0 *= LD(v_##X, p + i);                                          \
            a1 *= LD(v_##X, p + i + W);                                      \
            a2 *= LD(v_##X, p + i + 2 * W);                                  \
            a3 *= LD(v_##X, p + i + 3 * W);                                  \
        }                                                                    \
        for (; i + W <= n; i += W) {                                         \
            a0 *= LD(v_##X, p + i);                                          \
        }                                                                    \
        a0 = (a0 * a1) * (a2 * a3);                                          \
        for (l = 0; l < (int)W; ++l) {                                       \
            acc *= a0[l];                                                    \
        }                                                                    \
        for (; i < n; ++i) {                                                 \
            acc *= p[i];                                                     \
        }                                                                    \
        s->v.X = acc;                                                        \
    }                                                                        \
    static GR_CLONES void fmulc_##X(const void *vp, size_t B, size_t L,      \
                                    ptrdiff_t es, gr_hstate *s,              \
                                    void *scratch)                           \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        enum { W = LANES(X) };                                               \
        v_##X *a = (v_##X *)scratch;                                         \
        s_##X r[W];                                                          \
        const size_t nv = B / W;                                             \
        size_t i, k, j, n4;                                                  \
        for (k = 0; k < nv; ++k) {                                           \
            a[k] = (v_##X){0} + 1;                                           \
        }                                                                    \
        for (j = 0; j < W; ++j) {                                            \
            r[j] = 1;                                                        \
        }                                                                    \
        /* 4 rows a step (each accumulator loaded and stored once a step),   \
         * the last rows one at a time, the last few segments in scalars */  \
        for (i = 0; i < L; i += n4) {                                        \
            const s_##X *r0 = p + (ptrdiff_t)i * es;                         \
            size_t q;                                                        \
            n4 = i + 4 <= L ? 4 : 1;                                         \
            if (n4 == 4) {                                                   \
                const s_##X *r1 = r0 + es, *r2 = r1 + es, *r3 = r2 + es;     \
                for (k = 0; k < nv; ++k) {                                   \
                    v_##X t = a[k] * LD(v_##X, r0 + W * k);                  \
                    t *= LD(v_##X, r1 + W * k);                              \
                    t *= LD(v_##X, r2 + W * k);                              \
                    a[k] = t * LD(v_##X, r3 + W * k);                        \
                }                                                            \
            } else {                                                         \
                for (k = 0; k < nv; ++k) {                                   \
                    a[k] *= LD(v_##X, r0 + W * k);                           \
                }                                                            \
            }                                                                \
            for (q = 0; q < n4; ++q) {                                       \
                const s_##X *row = r0 + (ptrdiff_t)q * es;                   \
                for (j = W * nv; j < B; ++j) {                               \
                    r[j - W * nv] *= row[j];                                 \
                }                                                            \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.X = j < W * nv ? a[j / W][j % W] : r[j - W * nv];         \
        }                                                                    \
    }
DEF_FMUL(f32)
DEF_FMUL(f64)

/* ------------------------------------------------------- min and max
 * The vector loop keeps the extreme of the non-NaN elements and a mask of
 * NaNs seen; s->flag says "NaN seen".  The result's NaN and the sign of a
 * zero result are settled afterwards from memory (minmax_finish).
 * CMP is > for max, < for min; IDENT the identity (LO_X / HI_X). */

/* The whole vectors of p[i .. n) (i advanced past them): 4 vectors a step,
 * each lane of a0..a3 keeping its extreme (SEL on CMP: never a NaN), nn
 * the mask of NaNs seen.  Shared by min/max and argmin/argmax. */
#define MM_LANES(X, CMP, p, n, i, a0, a1, a2, a3, nn)                        \
    do {                                                                     \
        for (; (i) + 4 * W <= (n); (i) += 4 * W) {                           \
            v_##X y0 = LD(v_##X, (p) + (i)), y1 = LD(v_##X, (p) + (i) + W);  \
            v_##X y2 = LD(v_##X, (p) + (i) + 2 * W);                         \
            v_##X y3 = LD(v_##X, (p) + (i) + 3 * W);                         \
            a0 = SEL(v_##X, m_##X, a0, y0, y0 CMP a0);                       \
            a1 = SEL(v_##X, m_##X, a1, y1, y1 CMP a1);                       \
            a2 = SEL(v_##X, m_##X, a2, y2, y2 CMP a2);                       \
            a3 = SEL(v_##X, m_##X, a3, y3, y3 CMP a3);                       \
            nn |= NANV_##X(y0) | NANV_##X(y1) | NANV_##X(y2) |               \
                  NANV_##X(y3);                                              \
        }                                                                    \
        for (; (i) + W <= (n); (i) += W) {                                   \
            v_##X y0 = LD(v_##X, (p) + (i));                                 \
            a0 = SEL(v_##X, m_##X, a0, y0, y0 CMP a0);                       \
            nn |= NANV_##X(y0);                                              \
        }                                                                    \
    } while (0)
#define DEF_MM(NAME, X, CMP, IDENT)                                          \
    static GR_CLONES void NAME(const void *vp, size_t n, size_t base,        \
                               gr_hstate *s)                                 \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        const size_t W = LANES(X);                                           \
        v_##X a0 = (v_##X){0} + (s_##X)(IDENT), a1 = a0, a2 = a0, a3 = a0;   \
        m_##X nn = {0};                                                      \
        s_##X r = s->v.X;                                                    \
        int nan = 0;                                                         \
        size_t i = 0;                                                        \
        int l;                                                               \
        (void)base;                                                          \
        MM_LANES(X, CMP, p, n, i, a0, a1, a2, a3, nn);                       \
        a0 = SEL(v_##X, m_##X, a0, a1, a1 CMP a0);                           \
        a2 = SEL(v_##X, m_##X, a2, a3, a3 CMP a2);                           \
        a0 = SEL(v_##X, m_##X, a0, a2, a2 CMP a0);                           \
        /* lanes, then the tail */                                          \
        for (l = 0; l < (int)W; ++l) {                                       \
            r = a0[l] CMP r ? a0[l] : r;                                     \
            nan |= nn[l] != 0;                                               \
        }                                                                    \
        for (; i < n; ++i) {                                                 \
            r = p[i] CMP r ? p[i] : r;                                       \
            nan |= NANS_##X(p[i]);                                           \
        }                                                                    \
        s->v.X = r;                                                          \
        s->flag |= nan;                                                      \
    }

#define DEF_MMC(NAME, X, CMP, IDENT)                                         \
    static GR_CLONES void NAME(const void *vp, size_t B, size_t L,           \
                               ptrdiff_t es, gr_hstate *s, void *scratch)    \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        enum { W = LANES(X) };                                               \
        const size_t nv = B / W;                                             \
        v_##X *a = (v_##X *)scratch;                                         \
        m_##X *nn = (m_##X *)(a + nv);                                       \
        s_##X r[W];                                                          \
        int rn[W];                                                           \
        size_t i, k, j, n4;                                                  \
        for (k = 0; k < nv; ++k) {                                           \
            a[k] = (v_##X){0} + (s_##X)(IDENT);                              \
            nn[k] = (m_##X){0};                                              \
        }                                                                    \
        for (j = 0; j < W; ++j) {                                            \
            r[j] = (s_##X)(IDENT);                                           \
            rn[j] = 0;                                                       \
        }                                                                    \
        /* 4 rows a step (each accumulator loaded and stored once a step),   \
         * the last rows one at a time, the last few segments in scalars */  \
        for (i = 0; i < L; i += n4) {                                        \
            const s_##X *r0 = p + (ptrdiff_t)i * es;                         \
            size_t q;                                                        \
            n4 = i + 4 <= L ? 4 : 1;                                         \
            if (n4 == 4) {                                                   \
                const s_##X *r1 = r0 + es, *r2 = r1 + es, *r3 = r2 + es;     \
                for (k = 0; k < nv; ++k) {                                   \
                    v_##X t = a[k];                                          \
                    const v_##X y0 = LD(v_##X, r0 + W * k);                  \
                    const v_##X y1 = LD(v_##X, r1 + W * k);                  \
                    const v_##X y2 = LD(v_##X, r2 + W * k);                  \
                    const v_##X y3 = LD(v_##X, r3 + W * k);                  \
                    t = SEL(v_##X, m_##X, t, y0, y0 CMP t);                  \
                    t = SEL(v_##X, m_##X, t, y1, y1 CMP t);                  \
                    t = SEL(v_##X, m_##X, t, y2, y2 CMP t);                  \
                    a[k] = SEL(v_##X, m_##X, t, y3, y3 CMP t);               \
                    nn[k] |= NANV_##X(y0) | NANV_##X(y1) | NANV_##X(y2) |    \
                             NANV_##X(y3);                                   \
                }                                                            \
            } else {                                                         \
                for (k = 0; k < nv; ++k) {                                   \
                    v_##X y0 = LD(v_##X, r0 + W * k);                        \
                    a[k] = SEL(v_##X, m_##X, a[k], y0, y0 CMP a[k]);         \
                    nn[k] |= NANV_##X(y0);                                   \
                }                                                            \
            }                                                                \
            for (q = 0; q < n4; ++q) {                                       \
                const s_##X *row = r0 + (ptrdiff_t)q * es;                   \
                for (j = W * nv; j < B; ++j) {                               \
                    s_##X y = row[j];                                        \
                    r[j - W * nv] = y CMP r[j - W * nv] ? y : r[j - W * nv]; \
                    rn[j - W * nv] |= NANS_##X(y);                           \
                }                                                            \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            if (j < W * nv) {                                                \
                s[j].v.X = a[j / W][j % W];                                  \
                s[j].flag = nn[j / W][j % W] != 0;                           \
            } else {                                                         \
                s[j].v.X = r[j - W * nv];                                    \
                s[j].flag = rn[j - W * nv];                                  \
            }                                                                \
        }                                                                    \
    }

/* ------------------------------------------------- argmin and argmax
 * The first element starts the state (s->v, s->i); after it only a strictly
 * better element, or the first NaN, takes over.  Blocks of ARG_BYTES: 4
 * vector accumulators start at the best value so far, each lane keeps its
 * extreme (SEL on CMP: never a NaN) and a mask of NaNs seen; at the
 * block's end one vector test asks "does a lane beat the best, or was
 * there a NaN" -- on most data almost never true, so a block costs the
 * min/max loop and that test, no reduction across lanes.  Only a block
 * that passes is looked at again (from L1): its first NaN ends the
 * reduction (s->flag: decided), else its extreme becomes the best, at its
 * first index (FIND: no earlier element equals it, it beats all of them;
 * -0.0 == 0.0, so the first zero of either sign, as NumPy).  Integers
 * stop once the best is the type's own extreme TOP (nothing beats it;
 * floats go on: a later NaN would win). */
#define ARG_BYTES 4096 /* a block: one lane test, L1-resident second look  */
#define IS_INT(X) ((s_##X)0.5 == 0)
/* Pieces of DEF_ARG and DEF_ARGZ.  ARG_BEGIN: nothing left to do, or the
 * first element starts the state.  ARG_BLOCK: the block of q = p + b0,
 * ending at a multiple of ARG_BYTES in memory (aligned loads after the
 * first; numpy aligns to 16 bytes only).  ARG_FIRST_NAN: the block's
 * first NaN is the answer (leaves the block loop). */
#define ARG_BEGIN(X, TOP)                                                    \
    if (s->flag || n == 0) {                                                 \
        return;                                                              \
    }                                                                        \
    if (s->i < 0) {                                                          \
        s->v.X = p[0];                                                       \
        s->i = (int64_t)base;                                                \
        s->flag = NANS_##X(p[0]) || (IS_INT(X) && p[0] == (s_##X)(TOP));     \
        b0 = 1;                                                              \
    }
#define ARG_BLOCK(X, q, nb)                                                  \
    const s_##X *q = p + b0;                                                 \
    const size_t to = (ARG_BYTES - (uintptr_t)q % ARG_BYTES) / sizeof(s_##X); \
    nb = n - b0 < to ? n - b0 : to ? to : NB
#define ARG_FIRST_NAN(X, q)                                                  \
    for (j = 0; !NANS_##X(q[j]); ++j) {                                      \
    }                                                                        \
    s->v.X = q[j];                                                           \
    s->i = (int64_t)(base + b0 + j);                                         \
    s->flag = 1;                                                             \
    break
#define DEF_ARG(NAME, X, FIND, CMP, TOP)                                     \
    static GR_CLONES void NAME(const void *vp, size_t n, size_t base,        \
                               gr_hstate *s)                                 \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        enum { W = LANES(X), NB = ARG_BYTES / sizeof(s_##X) };               \
        size_t b0 = 0, i, j, nb;                                             \
        ARG_BEGIN(X, TOP)                                                    \
        for (; b0 < n && !s->flag; b0 += nb) {                               \
            ARG_BLOCK(X, q, nb);                                             \
            const v_##X bv = (v_##X){0} + s->v.X;                            \
            v_##X a0 = bv, a1 = bv, a2 = bv, a3 = bv;                        \
            m_##X nn = {0};                                                  \
            s_##X e = s->v.X;                                                \
            int nan = 0, hit;                                                \
            v_u64 u;                                                         \
            /* whole vectors (MM_LANES), then the tail */                   \
            i = 0;                                                           \
            MM_LANES(X, CMP, q, nb, i, a0, a1, a2, a3, nn);                  \
            for (j = i; j < nb; ++j) {                                       \
                e = q[j] CMP e ? q[j] : e;                                   \
                nan |= NANS_##X(q[j]);                                       \
            }                                                                \
            a0 = SEL(v_##X, m_##X, a0, a1, a1 CMP a0);                       \
            a2 = SEL(v_##X, m_##X, a2, a3, a3 CMP a2);                       \
            a0 = SEL(v_##X, m_##X, a0, a2, a2 CMP a0);                       \
            /* the one test */                                              \
            u = (v_u64)((a0 CMP bv) | nn);                                   \
            hit = (u[0] | u[1] | u[2] | u[3]) != 0;                          \
            if (!hit && !nan && !(e CMP s->v.X)) {                           \
                continue;                                                    \
            }                                                                \
            u = (v_u64)nn;                                                   \
            if (nan || (u[0] | u[1] | u[2] | u[3])) {                        \
                ARG_FIRST_NAN(X, q);                                         \
            }                                                                \
            /* the block's extreme (lanes and tail), at its first index */  \
            for (j = 0; j < (size_t)W; ++j) {                                \
                e = a0[j] CMP e ? a0[j] : e;                                 \
            }                                                                \
            s->v.X = e;                                                      \
            s->i = (int64_t)(base + b0 + FIND(q, nb, e));                    \
            s->flag = IS_INT(X) && e == (s_##X)(TOP);                        \
        }                                                                    \
    }

/* Index of the first element of p[0..n) equal to v (v is there and is not
 * NaN; -0.0 equals 0.0): a vector compare at a time, then its lanes. */
#define DEF_FINDEQ(NAME, X)                                                  \
    static GR_CLONES size_t NAME(const s_##X *p, size_t n, s_##X v)          \
    {                                                                        \
        const size_t W = LANES(X);                                           \
        const v_##X vv = (v_##X){0} + v;                                     \
        size_t i = 0;                                                        \
        /* 4 vectors a step until one holds v (the lane test is costly) */  \
        for (; i + 4 * W <= n; i += 4 * W) {                                 \
            v_u64 u = (v_u64)((LD(v_##X, p + i) == vv) |                     \
                              (LD(v_##X, p + i + W) == vv) |                 \
                              (LD(v_##X, p + i + 2 * W) == vv) |             \
                              (LD(v_##X, p + i + 3 * W) == vv));             \
            if (u[0] | u[1] | u[2] | u[3]) {                                 \
                break;                                                       \
            }                                                                \
        }                                                                    \
        /* element by element from there */                                 \
        while (p[i] != v) {                                                  \
            ++i;                                                             \
        }                                                                    \
        return i;                                                            \
    }

/* Columns: value and index per segment, scalar (one compare a segment). */
#define DEF_ARGC(NAME, X, CMP)                                               \
    static GR_CLONES void NAME(const void *vp, size_t B, size_t L,           \
                               ptrdiff_t es, gr_hstate *s, void *scratch)    \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        int64_t *ix = (int64_t *)scratch;                                    \
        s_##X *v = (s_##X *)(ix + B);                                        \
        size_t i, j;                                                         \
        /* the first row starts every segment */                            \
        for (j = 0; j < B; ++j) {                                            \
            v[j] = p[j];                                                     \
            ix[j] = 0;                                                       \
        }                                                                    \
        /* each later row: strictly better, or a first NaN, takes over */   \
        for (i = 1; i < L; ++i) {                                            \
            const s_##X *row = p + (ptrdiff_t)i * es;                        \
            for (j = 0; j < B; ++j) {                                        \
                const s_##X y = row[j];                                      \
                const int take = (y CMP v[j]) ||                             \
                                 (NANS_##X(y) && !NANS_##X(v[j]));           \
                v[j] = take ? y : v[j];                                      \
                ix[j] = take ? (int64_t)i : ix[j];                           \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.X = v[j];                                                 \
            s[j].i = ix[j];                                                  \
        }                                                                    \
    }

#define DEF_MINMAX_KERNELS(X)                                                \
    DEF_MM(min_##X, X, <, HI_##X)                                            \
    DEF_MM(max_##X, X, >, LO_##X)                                            \
    DEF_MMC(minc_##X, X, <, HI_##X)                                          \
    DEF_MMC(maxc_##X, X, >, LO_##X)                                          \
    DEF_FINDEQ(findeq_##X, X)                                                \
    DEF_ARG(argmin_##X, X, findeq_##X, <, LO_##X)                            \
    DEF_ARG(argmax_##X, X, findeq_##X, >, HI_##X)                            \
    DEF_ARGC(argminc_##X, X, <)                                              \
    DEF_ARGC(argmaxc_##X, X, >)
DEF_MINMAX_KERNELS(b)
DEF_MINMAX_KERNELS(i8)
DEF_MINMAX_KERNELS(u8)
DEF_MINMAX_KERNELS(i16)
DEF_MINMAX_KERNELS(u16)
DEF_MINMAX_KERNELS(i32)
DEF_MINMAX_KERNELS(u32)
DEF_MINMAX_KERNELS(i64)
DEF_MINMAX_KERNELS(u64)
DEF_MINMAX_KERNELS(f32)
DEF_MINMAX_KERNELS(f64)

#ifdef GR_HAVE_COLZ
/* argmin/argmax of float rows on AVX-512: DEF_ARG's blocks and tests with
 * DEF_MMZ's loop (one vmaxps/vminps a vector, NaNs two vectors at a
 * time); the first index of a better block extreme by findeq, the
 * block's first NaN by a scalar look. */
#define DEF_ARGZ(NAME, T, X, V, W, SFX, MT, OP, CMP, PRED)                    \
    static GR_TARGET_Z void NAME(const void *vp, size_t n, size_t base,      \
                                 gr_hstate *s)                               \
    {                                                                        \
        const T *p = (const T *)vp;                                          \
        enum { NB = ARG_BYTES / sizeof(T) };                                 \
        size_t b0 = 0, i, j, nb;                                             \
        T lanes[W];                                                          \
        ARG_BEGIN(X, 0)                                                      \
        for (; b0 < n && !s->flag; b0 += nb) {                               \
            ARG_BLOCK(X, q, nb);                                             \
            const V bv = _mm512_set1_##SFX(s->v.X);                          \
            V a0 = bv, a1 = bv, a2 = bv, a3 = bv;                            \
            MT nn = 0;                                                       \
            T e = s->v.X;                                                    \
            int nan = 0;                                                     \
            i = 0;                                                           \
            MMZ_LANES(V, W, SFX, OP, q, nb, i, a0, a1, a2, a3, nn);          \
            for (j = i; j < nb; ++j) {                                       \
                e = q[j] CMP e ? q[j] : e;                                   \
                nan |= q[j] != q[j];                                         \
            }                                                                \
            /* the one test: a lane better than the state, a NaN, a tail */ \
            const int hit = _mm512_cmp_##SFX##_mask(a0, bv, PRED) != 0;      \
            if (!hit && !nan && !nn && !(e CMP s->v.X)) {                    \
                continue;                                                    \
            }                                                                \
            if (nan || nn) {                                                 \
                ARG_FIRST_NAN(X, q);                                         \
            }                                                                \
            _mm512_storeu_##SFX(lanes, a0);                                  \
            for (j = 0; j < (size_t)W; ++j) {                                \
                e = lanes[j] CMP e ? lanes[j] : e;                           \
            }                                                                \
            s->v.X = e;                                                      \
            s->i = (int64_t)(base + b0 + findeq_##X(q, nb, e));              \
        }                                                                    \
    }

DEF_ARGZ(argminz_f32, float, f32, __m512, 16, ps, __mmask16, min, <,
         _CMP_LT_OQ)
DEF_ARGZ(argmaxz_f32, float, f32, __m512, 16, ps, __mmask16, max, >,
         _CMP_GT_OQ)
DEF_ARGZ(argminz_f64, double, f64, __m512d, 8, pd, __mmask8, min, <,
         _CMP_LT_OQ)
DEF_ARGZ(argmaxz_f64, double, f64, __m512d, 8, pd, __mmask8, max, >,
         _CMP_GT_OQ)
#endif

/* ------------------------------------------------------- all and any
 * "all" looks for the first zero, "any" for the first nonzero (floats
 * compare with 0.0: -0.0 is zero, NaN is not); s->flag says "found", which
 * decides the result and stops the reduction.  Integers of one size share
 * a kernel (only the bits matter). */
#define ZERO_T(y) ((y) == 0)
#define NONZERO_T(y) ((y) != 0)
#define DEF_FIND(NAME, X, TEST)                                              \
    static GR_CLONES void NAME(const void *vp, size_t n, size_t base,        \
                               gr_hstate *s)                                 \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        const size_t W = LANES(X);                                           \
        size_t i = 0;                                                        \
        (void)base;                                                          \
        /* 4 vectors a step until one holds a hit */                        \
        for (; i + 4 * W <= n; i += 4 * W) {                                 \
            m_##X m = TEST(LD(v_##X, p + i)) | TEST(LD(v_##X, p + i + W)) |  \
                      TEST(LD(v_##X, p + i + 2 * W)) |                       \
                      TEST(LD(v_##X, p + i + 3 * W));                        \
            v_u64 u = (v_u64)m;                                              \
            if (u[0] | u[1] | u[2] | u[3]) {                                 \
                break;                                                       \
            }                                                                \
        }                                                                    \
        /* element by element from there */                                 \
        for (; i < n; ++i) {                                                 \
            if (TEST(p[i])) {                                                \
                s->flag = 1;                                                 \
                return;                                                      \
            }                                                                \
        }                                                                    \
    }
#define DEF_FINDC(NAME, X, TEST)                                             \
    static GR_CLONES void NAME(const void *vp, size_t B, size_t L,           \
                               ptrdiff_t es, gr_hstate *s, void *scratch)    \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        enum { W = LANES(X) };                                               \
        m_##X *a = (m_##X *)scratch;                                         \
        int r[W];                                                            \
        const size_t nv = B / W;                                             \
        size_t i, k, j, n4;                                                  \
        for (k = 0; k < nv; ++k) {                                           \
            a[k] = (m_##X){0};                                               \
        }                                                                    \
        for (j = 0; j < W; ++j) {                                            \
            r[j] = 0;                                                        \
        }                                                                    \
        /* 4 rows a step (each accumulator loaded and stored once a step),   \
         * the last rows one at a time, the last few segments in scalars */  \
        for (i = 0; i < L; i += n4) {                                        \
            const s_##X *r0 = p + (ptrdiff_t)i * es;                         \
            size_t q;                                                        \
            n4 = i + 4 <= L ? 4 : 1;                                         \
            if (n4 == 4) {                                                   \
                const s_##X *r1 = r0 + es, *r2 = r1 + es, *r3 = r2 + es;     \
                for (k = 0; k < nv; ++k) {                                   \
                    a[k] |= TEST(LD(v_##X, r0 + W * k)) |                    \
                            TEST(LD(v_##X, r1 + W * k)) |                    \
                            TEST(LD(v_##X, r2 + W * k)) |                    \
                            TEST(LD(v_##X, r3 + W * k));                     \
                }                                                            \
            } else {                                                         \
                for (k = 0; k < nv; ++k) {                                   \
                    a[k] |= TEST(LD(v_##X, r0 + W * k));                     \
                }                                                            \
            }                                                                \
            for (q = 0; q < n4; ++q) {                                       \
                const s_##X *row = r0 + (ptrdiff_t)q * es;                   \
                for (j = W * nv; j < B; ++j) {                               \
                    r[j - W * nv] |= TEST(row[j]);                           \
                }                                                            \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].flag = j < W * nv ? a[j / W][j % W] != 0 : r[j - W * nv];   \
        }                                                                    \
    }
#define DEF_LOGICAL_KERNELS(X)                                               \
    DEF_FIND(fzero_##X, X, ZERO_T)                                           \
    DEF_FIND(fnonzero_##X, X, NONZERO_T)                                     \
    DEF_FINDC(fzeroc_##X, X, ZERO_T)                                         \
    DEF_FINDC(fnonzeroc_##X, X, NONZERO_T)
DEF_LOGICAL_KERNELS(u8)
DEF_LOGICAL_KERNELS(u16)
DEF_LOGICAL_KERNELS(u32)
DEF_LOGICAL_KERNELS(u64)
DEF_LOGICAL_KERNELS(f32)
DEF_LOGICAL_KERNELS(f64)

/* ======================================================== reduction driver */

/* Kernel tables indexed by gr_dtype. */
#define BY_DTYPE(P, S)                                                       \
    { P##b##S, P##i8##S, P##u8##S, P##i16##S, P##u16##S, P##i32##S,          \
      P##u32##S, P##i64##S, P##u64##S, P##f32##S, P##f64##S }
#define BY_SIZE(P, S)                                                        \
    { P##u8##S, P##u8##S, P##u8##S, P##u16##S, P##u16##S, P##u32##S,         \
      P##u32##S, P##u64##S, P##u64##S, P##f32##S, P##f64##S }
static const fold_fn k_min[] = BY_DTYPE(min_, );
static const fold_fn k_max[] = BY_DTYPE(max_, );
static const col_fn k_minc[] = BY_DTYPE(minc_, );
static const col_fn k_maxc[] = BY_DTYPE(maxc_, );
static const fold_fn k_argmin[] = BY_DTYPE(argmin_, );
static const fold_fn k_argmax[] = BY_DTYPE(argmax_, );
static const col_fn k_argminc[] = BY_DTYPE(argminc_, );
static const col_fn k_argmaxc[] = BY_DTYPE(argmaxc_, );
static const fold_fn k_zero[] = BY_SIZE(fzero_, );
static const fold_fn k_nonzero[] = BY_SIZE(fnonzero_, );
static const col_fn k_zeroc[] = BY_SIZE(fzeroc_, );
static const col_fn k_nonzeroc[] = BY_SIZE(fnonzeroc_, );
/* Integer add/mul of float inputs run the uint64 kernels on casts. */
static const fold_fn k_isum[] = {isum_b, isum_i8, isum_u8, isum_i16,
                                 isum_u16, isum_i32, isum_u32, isum_i64,
                                 isum_u64, isum_u64, isum_u64};
static const fold_fn k_iprod[] = {iprod_b, iprod_i8, iprod_u8, iprod_i16,
                                  iprod_u16, iprod_i32, iprod_u32, iprod_i64,
                                  iprod_u64, iprod_u64, iprod_u64};
static const col_fn k_isumc[] = {isumc_b, isumc_i8, isumc_u8, isumc_i16,
                                 isumc_u16, isumc_i32, isumc_u32, isumc_i64,
                                 isumc_u64, NULL, NULL};
static const col_fn k_iprodc[] = {iprodc_b, iprodc_i8, iprodc_u8, iprodc_i16,
                                  iprodc_u16, iprodc_i32, iprodc_u32,
                                  iprodc_i64, iprodc_u64, NULL, NULL};

/* How one (op, t, r) reduces: its kernels, what they read, how a state
 * becomes a result. */
typedef enum {
    FIN_INT,      /* low bytes of v.u64                                  */
    FIN_F32W,     /* (float)v.f64                                        */
    FIN_F32C,     /* v + x, float32 (v if infinite)                      */
    FIN_F64C,     /* v + x, float64                                      */
    FIN_F32,      /* v.f32                                               */
    FIN_F64,      /* v.f64                                               */
    FIN_MINMAX,   /* v, NaN and zero sign settled from memory            */
    FIN_ARG,      /* i as int64                                          */
    FIN_ALL,      /* !flag as bool                                       */
    FIN_ANY       /* flag as bool                                        */
} gr_finish_kind;

typedef struct {
    fold_fn fold;
    col_fn col;       /* NULL: no column kernel                          */
#ifdef GR_HAVE_COLZ
    colz_fn colz;     /* NULL, or a column kernel writing finished results */
#endif
    int kt;           /* KT_*: the kernel's input                        */
    int ksize;        /* bytes of the kernel's input elements            */
    gr_finish_kind fin;
    gr_hstate init;
    int stops;        /* flag set means the segment is decided           */
} gr_red_impl;

/* Fills *k for (op, t, r); -1 if unsupported. */
static int red_impl(const gr_host_op *o, gr_red_impl *k)
{
    const gr_dtype t = o->t, r = o->r;
    memset(k, 0, sizeof *k);
    k->kt = KT_SAME;
    k->ksize = gr_dtypes[t].size;
    k->init.i = -1;
    switch (o->op) {
    case GR_ADD:
    case GR_MUL:
        if (r == GR_BOOL) {
            return -1;
        }
        if (r == GR_FLOAT32 || r == GR_FLOAT64) {
            const int f64 = r == GR_FLOAT64;
            k->kt = t == r ? KT_SAME : (f64 ? KT_F64 : KT_F32);
            k->ksize = f64 ? 8 : 4;
            if (o->op == GR_MUL) {
                k->fold = f64 ? fmul_f64 : fmul_f32;
                k->col = f64 ? fmulc_f64 : fmulc_f32;
                k->fin = f64 ? FIN_F64 : FIN_F32;
                if (f64) {
                    k->init.v.f64 = 1.0;
                } else {
                    k->init.v.f32 = 1.0f;
                }
            } else if (!f64 && o->wide) {
                k->fold = fsumw_f32;
                k->col = fsumwc_f32;
                k->fin = FIN_F32W;
#ifdef GR_HAVE_COLZ
                if (t == GR_FLOAT32 && have_colz()) {
                    k->colz = fsumwz_f32;
                    k->fold = fsumwz_fold_f32;
                }
#endif
            } else {
                k->fold = f64 ? fcomp_f64 : fcomp_f32;
                k->col = f64 ? fcompc_f64 : fcompc_f32;
                k->fin = f64 ? FIN_F64C : FIN_F32C;
#ifdef GR_HAVE_COLZ
                if (f64 && t == GR_FLOAT64 && have_colz()) {
                    k->colz = fcompz_f64;
                }
#endif
            }
            if (o->op == GR_ADD && f64 && t == GR_FLOAT32) {
                /* floats read as they are, widened in the fold (columns:
                 * segment by segment, as gathered before) */
                k->kt = KT_SAME;
                k->ksize = 4;
                k->fold = fcomp_f32d;
                k->col = NULL;
            }
            return 0;
        }
        /* integer results: wrapping uint64 arithmetic */
        if (gr_dtypes[t].is_float) {
            k->kt = KT_U64;
            k->ksize = 8;
        }
        k->fold = o->op == GR_ADD ? k_isum[t] : k_iprod[t];
        k->col = o->op == GR_ADD ? k_isumc[t] : k_iprodc[t];
        k->fin = FIN_INT;
        k->init.v.u64 = o->op == GR_ADD ? 0 : 1;
        return 0;
    case GR_MIN:
    case GR_MAX:
        if (r != t) {
            return -1;
        }
        k->fold = o->op == GR_MIN ? k_min[t] : k_max[t];
#ifdef GR_HAVE_COLZ
        if ((t == GR_FLOAT32 || t == GR_FLOAT64) && have_colz()) {
            k->fold = t == GR_FLOAT32 ? (o->op == GR_MIN ? minz_f32 : maxz_f32)
                                      : (o->op == GR_MIN ? minz_f64 : maxz_f64);
        }
#endif
        k->col = o->op == GR_MIN ? k_minc[t] : k_maxc[t];
        k->fin = FIN_MINMAX;
        /* the identity as first value */
        switch (t) {
#define MM_INIT(TAG, X)                                                      \
    case TAG:                                                                \
        k->init.v.X = o->op == GR_MIN ? (s_##X)HI_##X : (s_##X)LO_##X;       \
        break;
        MM_INIT(GR_BOOL, b)
        MM_INIT(GR_INT8, i8)
        MM_INIT(GR_UINT8, u8)
        MM_INIT(GR_INT16, i16)
        MM_INIT(GR_UINT16, u16)
        MM_INIT(GR_INT32, i32)
        MM_INIT(GR_UINT32, u32)
        MM_INIT(GR_INT64, i64)
        MM_INIT(GR_UINT64, u64)
        MM_INIT(GR_FLOAT32, f32)
        MM_INIT(GR_FLOAT64, f64)
#undef MM_INIT
        default:
            return -1;
        }
        return 0;
    case GR_ARGMIN:
    case GR_ARGMAX:
        if (r != GR_INT64) {
            return -1;
        }
        k->fold = o->op == GR_ARGMIN ? k_argmin[t] : k_argmax[t];
#ifdef GR_HAVE_COLZ
        if ((t == GR_FLOAT32 || t == GR_FLOAT64) && have_colz()) {
            k->fold = t == GR_FLOAT32
                          ? (o->op == GR_ARGMIN ? argminz_f32 : argmaxz_f32)
                          : (o->op == GR_ARGMIN ? argminz_f64 : argmaxz_f64);
        }
#endif
        k->col = o->op == GR_ARGMIN ? k_argminc[t] : k_argmaxc[t];
        k->fin = FIN_ARG;
        k->stops = 1;
        return 0;
    case GR_ALL:
    case GR_ANY:
        if (r != GR_BOOL) {
            return -1;
        }
        k->fold = o->op == GR_ALL ? k_zero[t] : k_nonzero[t];
        k->col = o->op == GR_ALL ? k_zeroc[t] : k_nonzeroc[t];
        k->fin = o->op == GR_ALL ? FIN_ALL : FIN_ANY;
        k->stops = 1;
        return 0;
    default:
        return -1;
    }
}

/* Min/max result of the segment (p, L, es) from its state: the first NaN if
 * one was seen; for a zero result the sign of the segment's last zero
 * (NumPy keeps the last of equal values); else the extreme. */
static void minmax_finish(gr_dtype t, const gr_hstate *s, const char *p,
                          size_t L, ptrdiff_t es, void *out, size_t m)
{
    size_t i;
    if (t == GR_FLOAT32) {
        float v = s->v.f32;
        if (s->flag) {
            /* the first NaN */
            for (i = 0; i < L; ++i) {
                memcpy(&v, p + (ptrdiff_t)i * es * 4, 4);
                if (v != v) {
                    break;
                }
            }
        } else if (v == 0) {
            /* the last zero, from the end */
            for (i = L; i-- > 0;) {
                memcpy(&v, p + (ptrdiff_t)i * es * 4, 4);
                if (v == 0) {
                    break;
                }
            }
        }
        ((float *)out)[m] = v;
    } else if (t == GR_FLOAT64) {
        double v = s->v.f64;
        if (s->flag) {
            for (i = 0; i < L; ++i) {
                memcpy(&v, p + (ptrdiff_t)i * es * 8, 8);
                if (v != v) {
                    break;
                }
            }
        } else if (v == 0) {
            for (i = L; i-- > 0;) {
                memcpy(&v, p + (ptrdiff_t)i * es * 8, 8);
                if (v == 0) {
                    break;
                }
            }
        }
        ((double *)out)[m] = v;
    } else {
        const int size = gr_dtypes[t].size;
        memcpy((char *)out + m * size, &s->v, size);
    }
}

/* Writes segment m's result from its state. */
static void red_finish(const gr_red_impl *k, const gr_host_op *o,
                       const gr_hstate *s, const char *p, size_t L,
                       ptrdiff_t es, void *out, size_t m)
{
    switch (k->fin) {
    case FIN_INT:
        store_int(out, m, gr_dtypes[o->r].size, s->v.u64);
        break;
    case FIN_F32W:
        ((float *)out)[m] = (float)s->v.f64;
        break;
    case FIN_F32C:
        ((float *)out)[m] = isinf(s->v.f32) ? s->v.f32 : s->v.f32 + s->x.f32;
        break;
    case FIN_F64C:
        ((double *)out)[m] = isinf(s->v.f64) ? s->v.f64 : s->v.f64 + s->x.f64;
        break;
    case FIN_F32:
        ((float *)out)[m] = s->v.f32;
        break;
    case FIN_F64:
        ((double *)out)[m] = s->v.f64;
        break;
    case FIN_MINMAX:
        minmax_finish(o->t, s, p, L, es, out, m);
        break;
    case FIN_ARG:
        ((int64_t *)out)[m] = s->i;
        break;
    case FIN_ALL:
        ((uint8_t *)out)[m] = !s->flag;
        break;
    case FIN_ANY:
        ((uint8_t *)out)[m] = s->flag != 0;
        break;
    }
}

/* Writes the results of B adjacent column segments from their states st
 * (segment m + j at p + j elements): one loop per finish kind, not a call
 * per segment (column sums of a few rows are mostly this). */
static void col_finish(const gr_red_impl *k, const gr_host_op *o,
                       const gr_hstate *st, size_t B, const char *p, size_t L,
                       ptrdiff_t es, void *out, size_t m)
{
    const int tsize = gr_dtypes[o->t].size;
    size_t j;
    switch (k->fin) {
    case FIN_F32W: {
        float *y = (float *)out + m;
        for (j = 0; j < B; ++j) {
            y[j] = (float)st[j].v.f64;
        }
        return;
    }
    case FIN_F64C: {
        double *y = (double *)out + m;
        for (j = 0; j < B; ++j) {
            const double v = st[j].v.f64;
            y[j] = isinf(v) ? v : v + st[j].x.f64;
        }
        return;
    }
    case FIN_F32C: {
        float *y = (float *)out + m;
        for (j = 0; j < B; ++j) {
            const float v = st[j].v.f32;
            y[j] = isinf(v) ? v : v + st[j].x.f32;
        }
        return;
    }
    default:
        for (j = 0; j < B; ++j) {
            red_finish(k, o, &st[j], p + j * tsize, L, es, out, m + j);
        }
    }
}

/* Folds one segment (p, L, es) into s: directly where the kernel can read
 * it (contiguous, no cast), else chunk by chunk through a buffer. */
static void red_segment(const gr_red_impl *k, const gr_host_op *o,
                        const char *p, size_t L, ptrdiff_t es, size_t base,
                        gr_hstate *s)
{
    const int tsize = gr_dtypes[o->t].size;
    uint64_t buf[CH];
    size_t i0;
    if (es == 1 && k->kt == KT_SAME) {
        k->fold(p, L, base, s);
        return;
    }
    /* chunks of CH: gather (and cast), fold, stop once decided */
    for (i0 = 0; i0 < L && !(k->stops && s->flag); i0 += CH) {
        const size_t n = L - i0 < CH ? L - i0 : CH;
        gather(buf, k->kt, p + (ptrdiff_t)i0 * es * tsize, es * tsize, o->t,
               o->r, n);
        k->fold(buf, n, base + i0, s);
    }
}

/* Room for the column kernels of up to B segments: their states and
 * scratch.  The stack buffer serves up to COLB; wider matrices get one heap
 * block for up to COLB_MAX (whole rows read in order), or COLB if malloc
 * fails.  Returns the block width; *heap is to be freed. */
typedef struct {
    gr_hstate st[COLB];
    v_u64 scratch[COL_SCRATCH(COLB) / sizeof(v_u64) + 1];
} gr_colbuf;

static size_t col_room(size_t M, gr_colbuf *sb, gr_hstate **st,
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

/* Writes the identity of add/mul/all/any to out[0..M). */
static void red_identity(const gr_host_op *o, size_t M, void *out)
{
    size_t m;
    for (m = 0; m < M; ++m) {
        switch (o->r) {
        case GR_FLOAT32:
            ((float *)out)[m] = o->op == GR_MUL ? 1.0f : 0.0f;
            break;
        case GR_FLOAT64:
            ((double *)out)[m] = o->op == GR_MUL ? 1.0 : 0.0;
            break;
        default:
            store_int(out, m, gr_dtypes[o->r].size,
                      (o->op == GR_MUL || o->op == GR_ALL) ? 1 : 0);
            break;
        }
    }
}

/* Columns m0..m1 of a column layout (seg_stride 1, |es| >= M): the
 * AVX-512 kernels where there are (finished by the kernel: no states,
 * only scratch), else blocks of adjacent segments row by row. */
static void red_cols(const gr_red_impl *k, const gr_host_op *o,
                     const char *base, size_t m0, size_t m1, size_t L,
                     ptrdiff_t es, void *out)
{
    const int tsize = gr_dtypes[o->t].size;
    const size_t M = m1 - m0;
    size_t m;
#ifdef GR_HAVE_COLZ
    if (k->colz != NULL && k->kt == KT_SAME &&
        (o->t != GR_FLOAT32 || M >= COLZ_F32_MIN)) {
        v_u64 zs[COLZ_SCRATCH(COLZ_STACK) / sizeof(v_u64) + 1];
        void *scratch = zs, *heap = NULL;
        size_t W = M < COLZ_STACK ? M : COLZ_STACK;
        /* whole rows (up to COLB_MAX columns, read in order) where there
         * are rows enough for it to matter; a few rows (2 x 8192) go by
         * blocks of the stack's width, not zeroing and freeing a heap
         * block for each call */
        if (M > COLZ_STACK && L >= COLZ_ROWS_HEAP) {
            const size_t B = M < COLB_MAX ? M : COLB_MAX;
            heap = malloc(COLZ_SCRATCH(B) + 32);
            if (heap != NULL) {
                scratch = (void *)(((uintptr_t)heap + 31) & ~(uintptr_t)31);
                W = B;
            }
        }
        for (m = m0; m < m1; m += W) {
            const size_t B = m1 - m < W ? m1 - m : W;
            k->colz(base + m * tsize, B, L, es,
                    (char *)out + m * gr_dtypes[o->r].size, scratch);
        }
        free(heap);
        return;
    }
#endif
    {
        gr_colbuf sb;
        gr_hstate *st;
        void *scratch, *heap;
        const size_t W = col_room(M, &sb, &st, &scratch, &heap);
        for (m = m0; m < m1; m += W) {
            const size_t B = m1 - m < W ? m1 - m : W;
            k->col(base + m * tsize, B, L, es, st, scratch);
            col_finish(k, o, st, B, base + m * tsize, L, es, out, m);
        }
        free(heap);
    }
}

/* Short contiguous float32 rows (L <= SHORT_ROW) summed in double, rows
 * m0..m1: no call and no state a row (2^22 rows of 16 on the H100 host's
 * 16 threads: 5.6 ms through the fold, torch 3.9). */
#define SHORT_ROW 64
static GR_CLONES void fsumw_rows_f32(const float *p, size_t m0, size_t m1,
                                     size_t L, ptrdiff_t ss, float *out)
{
    size_t m, i;
    for (m = m0; m < m1; ++m) {
        const float *r = p + (ptrdiff_t)m * ss;
        v_f64 a0 = {0, 0, 0, 0}, a1 = a0;
        double acc;
        for (i = 0; i + 8 <= L; i += 8) {
            a0 += CV_F64(r + i);
            a1 += CV_F64(r + i + 4);
        }
        if (i + 4 <= L) {
            a0 += CV_F64(r + i);
            i += 4;
        }
        a0 += a1;
        acc = (a0[0] + a0[1]) + (a0[2] + a0[3]);
        for (; i < L; ++i) {
            acc += (double)r[i];
        }
        out[m] = (float)acc;
    }
}

/* Whole segments m0..m1 of any layout, one after the other. */
static void red_rows(const gr_red_impl *k, const gr_host_op *o,
                     const char *base, size_t m0, size_t m1, size_t L,
                     ptrdiff_t ss, ptrdiff_t es, void *out)
{
    const int tsize = gr_dtypes[o->t].size;
    size_t m;
    if (k->fin == FIN_F32W && k->kt == KT_SAME && es == 1 && L <= SHORT_ROW) {
        fsumw_rows_f32((const float *)base, m0, m1, L, ss, (float *)out);
        return;
    }
    for (m = m0; m < m1; ++m) {
        const char *p = base + (ptrdiff_t)m * ss * tsize;
        gr_hstate s = k->init;
        red_segment(k, o, p, L, es, 0, &s);
        red_finish(k, o, &s, p, L, es, out, m);
    }
}

/* ------------------------------------------------- several threads
 * A large call (gr_host_op.threads > 1) is cut into tasks for
 * hostpar.c's pool, at least grain bytes each, about 4 a thread:
 *
 *   columns   ranges of adjacent columns (each task red_cols), or, for a
 *             few columns of many rows, ranges of rows (the column
 *             kernels' states, merged column by column)
 *   rows      ranges of whole segments (red_rows), or, for fewer long
 *             segments than tasks, pieces of each (states merged in
 *             order: merge())
 *
 * Merged states give the one-thread answer for integers, min/max,
 * argmin/argmax (first index: an earlier piece wins ties), all/any; float
 * sums differ only in rounding order (double sums of floats, TwoSum
 * merges for compensated sums, as the device's work-groups). */

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
static void merge(const gr_red_impl *k, const gr_host_op *o, gr_hstate *a,
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

typedef struct {
    const gr_red_impl *k;
    const gr_host_op *o;
    const char *base;
    size_t M, L;
    ptrdiff_t ss, es;
    void *out;
    int cols;        /* a column layout                                   */
    size_t per;      /* segments (columns) a task, or elements (rows) a piece */
    size_t P;        /* pieces of each segment (0: whole segments a task) */
    gr_hstate *st;   /* pieces: P states a segment (columns: M a piece)   */
} red_par;

static void red_task(void *vp, size_t t)
{
    const red_par *a = (const red_par *)vp;
    const gr_red_impl *k = a->k;
    const int tsize = gr_dtypes[a->o->t].size;
    if (a->P == 0) {
        /* whole segments t*per .. */
        const size_t m0 = t * a->per, m1 = m0 + a->per < a->M ? m0 + a->per : a->M;
        if (a->cols) {
            red_cols(k, a->o, a->base, m0, m1, a->L, a->es, a->out);
        } else {
            red_rows(k, a->o, a->base, m0, m1, a->L, a->ss, a->es, a->out);
        }
        return;
    }
    if (a->cols) {
        /* rows i0..i1 of every column: piece t's M states */
        const size_t i0 = t * a->per, i1 = i0 + a->per < a->L ? i0 + a->per : a->L;
        gr_colbuf sb;
        gr_hstate *st = a->st + t * a->M;
        size_t j;
        for (j = 0; j < a->M; ++j) {
            st[j] = k->init;
        }
        k->col(a->base + (ptrdiff_t)i0 * a->es * tsize, a->M, i1 - i0, a->es,
               st, sb.scratch);
        for (j = 0; k->fin == FIN_ARG && j < a->M; ++j) {
            st[j].i += (int64_t)i0;
        }
        return;
    }
    {
        /* piece j of segment m: elements i0..i1 */
        const size_t m = t / a->P, j = t % a->P, i0 = j * a->per;
        const size_t i1 = i0 + a->per < a->L ? i0 + a->per : a->L;
        gr_hstate *s = &a->st[t];
        *s = k->init;
        if (i0 < i1) {
            red_segment(k, a->o,
                        a->base + ((ptrdiff_t)m * a->ss + (ptrdiff_t)i0 * a->es) * tsize,
                        i1 - i0, a->es, i0, s);
        }
    }
}

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

/* Tasks for a call of `bytes` on o->threads threads: one per grain bytes,
 * at most 4 a thread; 0 where it is not cut (one thread, under two). */
static size_t par_tasks(const gr_host_op *o, size_t bytes)
{
    const size_t n = bytes / (o->grain ? o->grain : GR_HOST_GRAIN);
    if (o->threads <= 1 || n < 2) {
        return 0;
    }
    return n < 4 * (size_t)o->threads ? n : 4 * (size_t)o->threads;
}

/* n items cut into about `parts` ranges of a multiple of `align` items:
 * *per items a range (the last one shorter); returns how many ranges. */
static size_t ranges(size_t n, size_t parts, size_t align, size_t *per)
{
    *per = div_up(div_up(n, parts), align) * align;
    return div_up(n, *per);
}

/* The call on o->threads threads; 1 if it is not worth it (too few
 * bytes, one thread) or the layout is not cut (then nothing is written),
 * -1 out of memory. */
static int red_par_run(const gr_red_impl *k, const gr_host_op *o,
                       const char *base, size_t M, size_t L, ptrdiff_t ss,
                       ptrdiff_t es, int cols, void *out)
{
    size_t ntasks = par_tasks(o, M * L * (size_t)gr_dtypes[o->t].size), m, j;
    red_par a = {k, o, base, M, L, ss, es, out, cols, 0, 0, NULL};
    if (ntasks == 0) {
        return 1;
    }
    if (cols && M >= 32 * ntasks) {
        /* column ranges, whole vectors of columns each */
        ntasks = ranges(M, ntasks, 16, &a.per);
    } else if (cols) {
        /* row ranges of a few columns: the column kernels' states */
        if (k->col == NULL || M > COLB || k->kt != KT_SAME || L < 2 * ntasks) {
            return 1;
        }
        a.P = ntasks = ranges(L, ntasks, 1, &a.per);
    } else if (M >= ntasks) {
        ntasks = ranges(M, ntasks, 1, &a.per);
    } else {
        /* pieces of each segment, whole cache lines each */
        a.P = ranges(L, div_up(ntasks, M), 64, &a.per);
        ntasks = M * a.P;
        if (a.P < 2) {
            return 1;
        }
    }
    if (a.P && (a.st = malloc(ntasks * (cols ? M : 1) * sizeof(gr_hstate))) == NULL) {
        return -1;
    }
    gr_par_run(red_task, &a, ntasks, o->threads);
    if (a.P == 0) {
        return 0;
    }
    if (cols) {
        /* column j's pieces in order, then the columns' results */
        for (j = 1; j < a.P; ++j) {
            for (m = 0; m < M; ++m) {
                merge(k, o, &a.st[m], &a.st[j * M + m]);
            }
        }
        col_finish(k, o, a.st, M, base, L, es, out, 0);
    } else {
        for (m = 0; m < M; ++m) {
            gr_hstate *s = &a.st[m * a.P];
            for (j = 1; j < a.P; ++j) {
                merge(k, o, s, &s[j]);
            }
            red_finish(k, o, s, base + (ptrdiff_t)m * ss * gr_dtypes[o->t].size,
                       L, es, out, m);
        }
    }
    free(a.st);
    return 0;
}

int gr_host_reduce(const gr_host_op *o, const void *in, size_t M, size_t L,
                   ptrdiff_t seg_stride, ptrdiff_t elem_stride, void *out)
{
    gr_red_impl k;
    const char *base = (const char *)in;
    int cols, rc;
    if (o == NULL || (unsigned)o->t >= GR_NDTYPES ||
        (unsigned)o->r >= GR_NDTYPES || red_impl(o, &k) != 0) {
        return -1;
    }
    if (L == 0) {
        if (o->op != GR_ADD && o->op != GR_MUL && o->op != GR_ALL &&
            o->op != GR_ANY) {
            return -1;
        }
        red_identity(o, M, out);
        return 0;
    }
    /* columns: blocks of adjacent segments, row by row */
    cols = M > 1 && seg_stride == 1 && k.kt == KT_SAME &&
           (size_t)(elem_stride < 0 ? -elem_stride : elem_stride) >= M &&
           (k.col != NULL
#ifdef GR_HAVE_COLZ
            || k.colz != NULL
#endif
           );
    rc = red_par_run(&k, o, base, M, L, seg_stride, elem_stride, cols, out);
    if (rc <= 0) {
        return rc == 0 ? 0 : -1;
    }
    if (cols) {
        red_cols(&k, o, base, 0, M, L, elem_stride, out);
    } else {
        /* rows, or any other layout: segment by segment */
        red_rows(&k, o, base, 0, M, L, seg_stride, elem_stride, out);
    }
    return 0;
}

/* ====================================================== var and std
 * NumPy's two passes over a row (the mean, then the squared deviations
 * from it) in double; nanvar skips NaNs.  Contiguous float32/float64 rows
 * run 16 elements a step in 4 accumulators of 4 doubles (the NaN test a
 * lane mask); anything else one element at a time. */
#define VAR_STEP(X, LOAD)                                                    \
    do {                                                                     \
        for (; i + 16 <= L; i += 16) {                                       \
            v_f64 x0 = LOAD(p + i), x1 = LOAD(p + i + 4),                    \
                  x2 = LOAD(p + i + 8), x3 = LOAD(p + i + 12);               \
            VAR_LANE(a0, c0, x0);                                            \
            VAR_LANE(a1, c1, x1);                                            \
            VAR_LANE(a2, c2, x2);                                            \
            VAR_LANE(a3, c3, x3);                                            \
        }                                                                    \
    } while (0)
/* pass 1 (sq 0): a += x, c += 1 for the lanes kept; pass 2 (sq 1):
 * a += (x - m)^2 */
#define VAR_LANE(a, c, x)                                                    \
    do {                                                                     \
        const m_f64 k_ = nan ? (m_f64)((x) == (x)) : (m_f64){-1, -1, -1, -1}; \
        v_f64 y_ = sq ? ((x) - mv) * ((x) - mv) : (x);                       \
        (a) += SEL(v_f64, m_f64, zero, y_, k_);                              \
        (c) -= __builtin_convertvector(k_, v_f64);                           \
    } while (0)
#define LD_F64(p) LD(v_f64, p)

/* var_pass_X: pass 1 (sq 0: sum and count of the kept elements) or pass
 * 2 (sq 1: their squared deviations from m) over a contiguous row. */
#define DEF_VAR_PASS(X, LOAD)                                                \
    static GR_CLONES void var_pass_##X(const s_##X *p, size_t L, int nan,    \
                                       int sq, double m, double *sum,        \
                                       double *cnt)                          \
    {                                                                        \
        const v_f64 zero = {0, 0, 0, 0}, mv = {m, m, m, m};                  \
        v_f64 a0 = zero, a1 = zero, a2 = zero, a3 = zero;                    \
        v_f64 c0 = zero, c1 = zero, c2 = zero, c3 = zero;                    \
        size_t i = 0;                                                        \
        VAR_STEP(X, LOAD);                                                   \
        a0 = (a0 + a1) + (a2 + a3);                                          \
        c0 = (c0 + c1) + (c2 + c3);                                          \
        double s = (a0[0] + a0[1]) + (a0[2] + a0[3]);                        \
        double c = (c0[0] + c0[1]) + (c0[2] + c0[3]);                        \
        for (; i < L; ++i) {                                                 \
            const double x = p[i];                                           \
            if (!(nan && x != x)) {                                          \
                s += sq ? (x - m) * (x - m) : x;                             \
                c += 1;                                                      \
            }                                                                \
        }                                                                    \
        *sum = s;                                                            \
        *cnt = c;                                                            \
    }
DEF_VAR_PASS(f32, CV_F64)
DEF_VAR_PASS(f64, LD_F64)

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

/* count_X: elements of a row that are nonzero (valid 0) or not NaN
 * (valid 1).  Contiguous rows in vectors: a comparison's all-ones lanes
 * subtracted from lane counts (flushed every 2^24 elements, before a
 * 32-bit lane could overflow). */
#define COUNT_STEP(X, CMP)                                                   \
    for (; i + 2 * W <= stop; i += 2 * W) {                                  \
        const v_##X x0 = LD(v_##X, p + i), x1 = LD(v_##X, p + i + W);        \
        a0 -= (m_##X)(CMP(x0));                                              \
        a1 -= (m_##X)(CMP(x1));                                              \
    }
#define COUNT_VALID(x) ((x) == (x))
#define COUNT_NZ(x) ((x) != zero)
#define DEF_COUNT(X)                                                         \
    static GR_CLONES uint64_t count_##X(const s_##X *p, size_t L,            \
                                        ptrdiff_t es, int valid)             \
    {                                                                        \
        const int W = LANES(X);                                              \
        const v_##X zero = {0};                                              \
        uint64_t c = 0;                                                      \
        size_t i = 0;                                                        \
        while (es == 1 && i + 2 * W <= L) {                                  \
            const size_t stop = L - i > ((size_t)1 << 24)                    \
                                    ? i + ((size_t)1 << 24) : L;             \
            m_##X a0 = {0}, a1 = {0};                                        \
            if (valid) {                                                     \
                COUNT_STEP(X, COUNT_VALID)                                   \
            } else {                                                         \
                COUNT_STEP(X, COUNT_NZ)                                      \
            }                                                                \
            a0 += a1;                                                        \
            for (int l = 0; l < W; ++l) {                                    \
                c += (uint64_t)a0[l];                                        \
            }                                                                \
            if (stop == L) {                                                 \
                break;                                                       \
            }                                                                \
        }                                                                    \
        for (; i < L; ++i) {                                                 \
            const s_##X x = p[(ptrdiff_t)i * es];                            \
            c += valid ? x == x : x != 0;                                    \
        }                                                                    \
        return c;                                                            \
    }
DEF_COUNT(f32)
DEF_COUNT(f64)

uint64_t gr_host_count(const void *in, gr_dtype t, size_t L, ptrdiff_t es,
                       int valid)
{
    if (t == GR_FLOAT32) {
        return count_f32((const s_f32 *)in, L, es, valid);
    }
    if (t == GR_FLOAT64) {
        return count_f64((const s_f64 *)in, L, es, valid);
    }
    uint64_t c = 0;
    for (size_t i = 0; i < L; ++i) {
        const double x = gr_host_as_double(in, t, (ptrdiff_t)i * es);
        c += valid ? !isnan(x) : x != 0.0;
    }
    return c;
}

double gr_host_var(const void *in, gr_dtype t, size_t L, ptrdiff_t es,
                   int nan, double ddof, int mode, double *count)
{
    const char *p = (const char *)in;
    double s = 0.0, q = 0.0, n = 0.0, c = 0.0;
    if (es == 1 && (t == GR_FLOAT32 || t == GR_FLOAT64)) {
        if (t == GR_FLOAT32) {
            var_pass_f32((const s_f32 *)p, L, nan, 0, 0.0, &s, &n);
            if (mode != 3) {
                var_pass_f32((const s_f32 *)p, L, nan, 1, s / n, &q, &c);
            }
        } else {
            var_pass_f64((const s_f64 *)p, L, nan, 0, 0.0, &s, &n);
            if (mode != 3) {
                var_pass_f64((const s_f64 *)p, L, nan, 1, s / n, &q, &c);
            }
        }
    } else {
        for (size_t i = 0; i < L; ++i) {
            const double x = gr_host_as_double(p, t, (ptrdiff_t)i * es);
            if (!(nan && x != x)) {
                s += x;
                n += 1;
            }
        }
        const double m = s / n;
        for (size_t i = 0; mode != 3 && i < L; ++i) {
            const double x = gr_host_as_double(p, t, (ptrdiff_t)i * es);
            if (!(nan && x != x)) {
                q += (x - m) * (x - m);
            }
        }
    }
    const double dn = n - ddof;
    if (count != NULL) {
        *count = n;
    }
    if (mode == 3) {
        return s / n; /* nanmean (0 / 0: nan) */
    }
    q = (n > 0 ? q : NAN) / (dn > 0.0 ? dn : 0.0);
    if (nan == 1 && !(dn > 0.0)) {
        q = NAN; /* NumPy's nanvar: nan where n - ddof <= 0 */
    }
    return mode == 2 ? sqrt(q) : q;
}

/* ============================================================== scans
 * A scan kernel reads n elements of its input type, carries the row's
 * state s and writes n prefixes (its output type) to o.  The row's state
 * starts at the identity, -0.0 for float sums (-0.0 + x is x for every x,
 * so cumsum([-0.0, ...])[0] is -0.0 as in NumPy). */
typedef void (*scan_fn)(const void *p, size_t n, gr_hstate *s, void *o);
/* Columns: B adjacent rows, prefixes of row element i written at
 * o[j + i*oes]; states s[0..B) carried in and out; accumulators in
 * scratch as the column reductions'. */
typedef void (*scanc_fn)(const void *p, size_t B, size_t L, ptrdiff_t es,
                         gr_hstate *s, void *o, ptrdiff_t oes,
                         void *scratch);

/* Integer cumsum/cumprod: uint64 prefixes (narrowed by the caller). */
#define DEF_ISCAN(NAME, X, CS, OP)                                           \
    static void NAME(const void *vp, size_t n, gr_hstate *s, void *vo)       \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        uint64_t *o = (uint64_t *)vo;                                        \
        uint64_t acc = s->v.u64;                                             \
        size_t i;                                                            \
        /* the running prefix, element by element */                        \
        for (i = 0; i < n; ++i) {                                            \
            acc = OP(acc, CS(p[i]));                                         \
            o[i] = acc;                                                      \
        }                                                                    \
        s->v.u64 = acc;                                                      \
    }
/* Columns of 64-bit results: one uint64 lane per row being scanned. */
#define DEF_ISCANC(NAME, X, CV, CS, OP)                                      \
    static GR_CLONES void NAME(const void *vp, size_t B, size_t L,           \
                               ptrdiff_t es, gr_hstate *s, void *vo,         \
                               ptrdiff_t oes, void *scratch)                 \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        uint64_t *o = (uint64_t *)vo;                                        \
        v_u64 *a = (v_u64 *)scratch;                                         \
        uint64_t r[4];                                                       \
        const size_t nv = B / 4;                                             \
        size_t i, k, j;                                                      \
        for (j = 0; j < B; ++j) {                                            \
            if (j < 4 * nv) {                                                \
                a[j / 4][j % 4] = s[j].v.u64;                                \
            } else {                                                         \
                r[j - 4 * nv] = s[j].v.u64;                                  \
            }                                                                \
        }                                                                    \
        /* each step: one element of every row, prefixes stored */         \
        for (i = 0; i < L; ++i) {                                            \
            const s_##X *row = p + (ptrdiff_t)i * es;                        \
            uint64_t *orow = o + (ptrdiff_t)i * oes;                         \
            for (k = 0; k < nv; ++k) {                                       \
                a[k] = OP(a[k], CV(row + 4 * k));                            \
                ST(v_u64, orow + 4 * k, a[k]);                               \
            }                                                                \
            for (j = 4 * nv; j < B; ++j) {                                   \
                r[j - 4 * nv] = OP(r[j - 4 * nv], CS(row[j]));               \
                orow[j] = r[j - 4 * nv];                                     \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.u64 = j < 4 * nv ? a[j / 4][j % 4] : r[j - 4 * nv];       \
        }                                                                    \
    }
#define DEF_INT_SCANS(X, CV, CS)                                             \
    DEF_ISCAN(iscan_add_##X, X, CS, OP_ADD)                                  \
    DEF_ISCAN(iscan_mul_##X, X, CS, OP_MUL)                                  \
    DEF_ISCANC(iscanc_add_##X, X, CV, CS, OP_ADD)                            \
    DEF_ISCANC(iscanc_mul_##X, X, CV, CS, OP_MUL)
DEF_INT_SCANS(b, CV_BOOL, CS_BOOL)
DEF_INT_SCANS(i8, CV_SIGNED, CS_SIGNED)
DEF_INT_SCANS(u8, CV_UNSIGNED, CS_UNSIGNED)
DEF_INT_SCANS(i16, CV_SIGNED, CS_SIGNED)
DEF_INT_SCANS(u16, CV_UNSIGNED, CS_UNSIGNED)
DEF_INT_SCANS(i32, CV_SIGNED, CS_SIGNED)
DEF_INT_SCANS(u32, CV_UNSIGNED, CS_UNSIGNED)
DEF_INT_SCANS(i64, CV_SIGNED, CS_SIGNED)
DEF_INT_SCANS(u64, CV_UNSIGNED, CS_UNSIGNED)

/* float32 cumsum/cumprod in double (wide): each prefix rounded once. */
#define DEF_WSCAN(NAME, OPEQ)                                                \
    static void NAME(const void *vp, size_t n, gr_hstate *s, void *vo)       \
    {                                                                        \
        const float *p = (const float *)vp;                                  \
        float *o = (float *)vo;                                              \
        double acc = s->v.f64;                                               \
        size_t i;                                                            \
        /* the running double prefix, element by element */                 \
        for (i = 0; i < n; ++i) {                                            \
            acc OPEQ (double)p[i];                                           \
            o[i] = (float)acc;                                               \
        }                                                                    \
        s->v.f64 = acc;                                                      \
    }
DEF_WSCAN(wscan_add, +=)
DEF_WSCAN(wscan_mul, *=)

#define DEF_WSCANC(NAME, OPEQ)                                               \
    static GR_CLONES void NAME(const void *vp, size_t B, size_t L,           \
                               ptrdiff_t es, gr_hstate *s, void *vo,         \
                               ptrdiff_t oes, void *scratch)                 \
    {                                                                        \
        const float *p = (const float *)vp;                                  \
        float *o = (float *)vo;                                              \
        v_f64 *a = (v_f64 *)scratch;                                         \
        double r[4];                                                         \
        const size_t nv = B / 4;                                             \
        size_t i, k, j;                                                      \
        for (j = 0; j < B; ++j) {                                            \
            if (j < 4 * nv) {                                                \
                a[j / 4][j % 4] = s[j].v.f64;                                \
            } else {                                                         \
                r[j - 4 * nv] = s[j].v.f64;                                  \
            }                                                                \
        }                                                                    \
        /* each step: one element of every row, prefixes rounded, stored */ \
        for (i = 0; i < L; ++i) {                                            \
            const float *row = p + (ptrdiff_t)i * es;                        \
            float *orow = o + (ptrdiff_t)i * oes;                            \
            for (k = 0; k < nv; ++k) {                                       \
                a[k] OPEQ CV_F64(row + 4 * k);                               \
                ST(q_f32, orow + 4 * k,                                      \
                   ((q_f32){(float)a[k][0], (float)a[k][1], (float)a[k][2],  \
                            (float)a[k][3]}));                               \
            }                                                                \
            for (j = 4 * nv; j < B; ++j) {                                   \
                r[j - 4 * nv] OPEQ (double)row[j];                           \
                orow[j] = (float)r[j - 4 * nv];                              \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.f64 = j < 4 * nv ? a[j / 4][j % 4] : r[j - 4 * nv];       \
        }                                                                    \
    }
DEF_WSCANC(wscanc_add, +=)
DEF_WSCANC(wscanc_mul, *=)

/* A compensated prefix: w = v + x where that is a nonzero number, else v.
 * (|x| <= ulp(v)/2, so w is zero only if v and x are: v keeps the sign of
 * a -0.0 prefix; w is NaN with v infinite and x NaN (inf - inf): v.)
 * Branch-free: a bit mask picks one of the two. */
static inline float comp_out_f32(float v, float x)
{
    const float w = v + x;
    const uint32_t m = -(uint32_t)((w > 0) | (w < 0));
    uint32_t bw, bv;
    memcpy(&bw, &w, 4);
    memcpy(&bv, &v, 4);
    bw = (bw & m) | (bv & ~m);
    memcpy(&v, &bw, 4);
    return v;
}

static inline double comp_out_f64(double v, double x)
{
    const double w = v + x;
    const uint64_t m = -(uint64_t)((w > 0) | (w < 0));
    uint64_t bw, bv;
    memcpy(&bw, &w, 8);
    memcpy(&bv, &v, 8);
    bw = (bw & m) | (bv & ~m);
    memcpy(&v, &bw, 8);
    return v;
}

/* Compensated cumsum (float64; float32 when not wide). */
#define DEF_CSCAN(X)                                                         \
    static void cscan_##X(const void *vp, size_t n, gr_hstate *s, void *vo)  \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        s_##X *o = (s_##X *)vo;                                              \
        s_##X v = s->v.X, x = s->x.X;                                        \
        size_t i;                                                            \
        /* TwoSum element by element, every prefix finished */             \
        for (i = 0; i < n; ++i) {                                            \
            TWOSUM(s_##X, v, x, p[i]);                                       \
            o[i] = comp_out_##X(v, x);                                       \
        }                                                                    \
        s->v.X = v;                                                          \
        s->x.X = x;                                                          \
    }                                                                        \
    static GR_CLONES void cscanc_##X(const void *vp, size_t B, size_t L,     \
                                     ptrdiff_t es, gr_hstate *s, void *vo,   \
                                     ptrdiff_t oes, void *scratch)           \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        s_##X *o = (s_##X *)vo;                                              \
        enum { W = LANES(X) };                                               \
        const size_t nv = B / W;                                             \
        v_##X *v = (v_##X *)scratch, *x = v + nv;                            \
        s_##X rv[W], rx[W];                                                  \
        size_t i, k, j;                                                      \
        for (j = 0; j < B; ++j) {                                            \
            if (j < W * nv) {                                                \
                v[j / W][j % W] = s[j].v.X;                                  \
                x[j / W][j % W] = s[j].x.X;                                  \
            } else {                                                         \
                rv[j - W * nv] = s[j].v.X;                                   \
                rx[j - W * nv] = s[j].x.X;                                   \
            }                                                                \
        }                                                                    \
        /* each step: one element of every row, TwoSum, prefixes stored */  \
        for (i = 0; i < L; ++i) {                                            \
            const s_##X *row = p + (ptrdiff_t)i * es;                        \
            s_##X *orow = o + (ptrdiff_t)i * oes;                            \
            for (k = 0; k < nv; ++k) {                                       \
                v_##X y = LD(v_##X, row + W * k);                            \
                TWOSUM(v_##X, v[k], x[k], y);                                \
                /* v + x where that is a nonzero number, else v */          \
                {                                                            \
                    v_##X w = v[k] + x[k];                                   \
                    ST(v_##X, orow + W * k,                                  \
                       SEL(v_##X, m_##X, v[k], w, (w > 0) | (w < 0)));       \
                }                                                            \
            }                                                                \
            for (j = W * nv; j < B; ++j) {                                   \
                TWOSUM(s_##X, rv[j - W * nv], rx[j - W * nv], row[j]);       \
                orow[j] = comp_out_##X(rv[j - W * nv], rx[j - W * nv]);      \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.X = j < W * nv ? v[j / W][j % W] : rv[j - W * nv];        \
            s[j].x.X = j < W * nv ? x[j / W][j % W] : rx[j - W * nv];        \
        }                                                                    \
    }
DEF_CSCAN(f32)
DEF_CSCAN(f64)

/* ------------------------------------------------- 4-chain cumsums
 * A one-chain cumsum waits for one add per element.  For float32 (wide)
 * and float64 cumsums, each tile of 4 * SUB elements is cut into 4
 * sub-blocks: the totals of the first three by the reduction kernels
 * (SIMD) give each sub-block its starting prefix, then the 4 prefix chains
 * run interleaved, their adds independent (float64: as the lanes of one
 * vector).  Every prefix is still a double
 * (or compensated) prefix rounded once; only the association differs from
 * a single chain (by less than the accumulator's rounding).
 *
 *     tile:  | sub 0      | sub 1      | sub 2      | sub 3      |
 *     start:   c            c+T0         c+T0+T1      c+T0+T1+T2
 *     step j:  a0 += p[j],  a1 += p[SUB+j], a2 += ..., a3 += ...
 */
#define SUB 128

/* A sub-block total that is zero: -0.0 where every element is -0.0 (the
 * running sum of NumPy's cumsum stays -0.0 across such a block; the
 * vector totals start from +0.0), else as computed. */
#define DEF_ZSIGN(NAME, T)                                                   \
    static double NAME(const T *p, size_t n, double t)                       \
    {                                                                        \
        size_t i;                                                            \
        if (t != 0.0) {                                                      \
            return t;                                                        \
        }                                                                    \
        for (i = 0; i < n; ++i) {                                            \
            if (p[i] != 0 || !signbit(p[i])) {                               \
                return t;                                                    \
            }                                                                \
        }                                                                    \
        return -0.0;                                                         \
    }
DEF_ZSIGN(zsign_f32, float)
DEF_ZSIGN(zsign_f64, double)

static void wscan4_add(const void *vp, size_t n, gr_hstate *s, void *vo)
{
    const float *p = (const float *)vp;
    float *o = (float *)vo;
    double c = s->v.f64;
    size_t j;
    /* whole tiles: sub-block totals, then 4 chains side by side */
    while (n >= 4 * SUB) {
        gr_hstate t0, t1, t2;
        double a0, a1, a2, a3;
        t0.v.f64 = t1.v.f64 = t2.v.f64 = 0.0;
        fsumw_f32(p, SUB, 0, &t0);
        fsumw_f32(p + SUB, SUB, 0, &t1);
        fsumw_f32(p + 2 * SUB, SUB, 0, &t2);
        a0 = c;
        a1 = a0 + zsign_f32(p, SUB, t0.v.f64);
        a2 = a1 + zsign_f32(p + SUB, SUB, t1.v.f64);
        a3 = a2 + zsign_f32(p + 2 * SUB, SUB, t2.v.f64);
        for (j = 0; j < SUB; ++j) {
            a0 += (double)p[j];
            a1 += (double)p[SUB + j];
            a2 += (double)p[2 * SUB + j];
            a3 += (double)p[3 * SUB + j];
            o[j] = (float)a0;
            o[SUB + j] = (float)a1;
            o[2 * SUB + j] = (float)a2;
            o[3 * SUB + j] = (float)a3;
        }
        c = a3;
        p += 4 * SUB;
        o += 4 * SUB;
        n -= 4 * SUB;
    }
    /* the rest in one chain */
    s->v.f64 = c;
    wscan_add(p, n, s, o);
}

/* float64: the 4 chains are the 4 lanes of one vector state (v, x), each
 * lane's element loaded from its own sub-block. */
static GR_CLONES void cscan4_f64(const void *vp, size_t n, gr_hstate *s,
                                 void *vo)
{
    const double *p = (const double *)vp;
    double *o = (double *)vo;
    double cv = s->v.f64, cx = s->x.f64;
    size_t j;
    /* whole tiles: compensated sub-block totals, then 4 TwoSum lanes */
    while (n >= 4 * SUB) {
        gr_hstate t[3];
        v_f64 v, x;
        int k;
        for (k = 0; k < 3; ++k) {
            t[k].v.f64 = 0.0;
            t[k].x.f64 = 0.0;
            fcomp_f64(p + k * SUB, SUB, 0, &t[k]);
            t[k].v.f64 = zsign_f64(p + k * SUB, SUB, t[k].v.f64);
        }
        /* lane k starts from lane k - 1's start merged with T(k-1) */
        v[0] = cv;
        x[0] = cx;
        for (k = 1; k < 4; ++k) {
            double a = v[k - 1], b = x[k - 1];
            TWOMERGE(double, a, b, t[k - 1].v.f64, t[k - 1].x.f64);
            v[k] = a;
            x[k] = b;
        }
        for (j = 0; j < SUB; ++j) {
            const v_f64 y = {p[j], p[SUB + j], p[2 * SUB + j], p[3 * SUB + j]};
            v_f64 w;
            TWOSUM(v_f64, v, x, y);
            /* v + x where that is a nonzero number, else v */
            w = v + x;
            w = SEL(v_f64, m_f64, v, w, (w > 0) | (w < 0));
            o[j] = w[0];
            o[SUB + j] = w[1];
            o[2 * SUB + j] = w[2];
            o[3 * SUB + j] = w[3];
        }
        cv = v[3];
        cx = x[3];
        p += 4 * SUB;
        o += 4 * SUB;
        n -= 4 * SUB;
    }
    /* the rest in one chain */
    s->v.f64 = cv;
    s->x.f64 = cx;
    cscan_f64(p, n, s, o);
}

/* Plain float cumprod in the result type. */
#define DEF_PSCAN(X)                                                         \
    static void pscan_##X(const void *vp, size_t n, gr_hstate *s, void *vo)  \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        s_##X *o = (s_##X *)vo;                                              \
        s_##X acc = s->v.X;                                                  \
        size_t i;                                                            \
        /* the running product */                                           \
        for (i = 0; i < n; ++i) {                                            \
            acc *= p[i];                                                     \
            o[i] = acc;                                                      \
        }                                                                    \
        s->v.X = acc;                                                        \
    }                                                                        \
    static GR_CLONES void pscanc_##X(const void *vp, size_t B, size_t L,     \
                                     ptrdiff_t es, gr_hstate *s, void *vo,   \
                                     ptrdiff_t oes, void *scratch)           \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        s_##X *o = (s_##X *)vo;                                              \
        enum { W = LANES(X) };                                               \
        v_##X *a = (v_##X *)scratch;                                         \
        s_##X r[W];                                                          \
        const size_t nv = B / W;                                             \
        size_t i, k, j;                                                      \
        for (j = 0; j < B; ++j) {                                            \
            if (j < W * nv) {                                                \
                a[j / W][j % W] = s[j].v.X;                                  \
            } else {                                                         \
                r[j - W * nv] = s[j].v.X;                                    \
            }                                                                \
        }                                                                    \
        /* each step: one element of every row, products stored */         \
        for (i = 0; i < L; ++i) {                                            \
            const s_##X *row = p + (ptrdiff_t)i * es;                        \
            s_##X *orow = o + (ptrdiff_t)i * oes;                            \
            for (k = 0; k < nv; ++k) {                                       \
                a[k] *= LD(v_##X, row + W * k);                              \
                ST(v_##X, orow + W * k, a[k]);                               \
            }                                                                \
            for (j = W * nv; j < B; ++j) {                                   \
                r[j - W * nv] *= row[j];                                     \
                orow[j] = r[j - W * nv];                                     \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.X = j < W * nv ? a[j / W][j % W] : r[j - W * nv];         \
        }                                                                    \
    }
DEF_PSCAN(f32)
DEF_PSCAN(f64)

/* cummin/cummax: NumPy's minimum(acc, y) = (acc < y || acc is NaN) ? acc
 * : y (max with >): equal values take the later one, NaN sticks. */
#define DEF_MSCAN(NAME, X, CMP)                                              \
    static void NAME(const void *vp, size_t n, gr_hstate *s, void *vo)       \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        s_##X *o = (s_##X *)vo;                                              \
        s_##X acc = s->v.X;                                                  \
        size_t i;                                                            \
        /* the running extreme */                                           \
        for (i = 0; i < n; ++i) {                                            \
            const s_##X y = p[i];                                            \
            acc = (acc CMP y || NANS_##X(acc)) ? acc : y;                    \
            o[i] = acc;                                                      \
        }                                                                    \
        s->v.X = acc;                                                        \
    }
#define DEF_MSCANC(NAME, X, CMP)                                             \
    static GR_CLONES void NAME(const void *vp, size_t B, size_t L,           \
                               ptrdiff_t es, gr_hstate *s, void *vo,         \
                               ptrdiff_t oes, void *scratch)                 \
    {                                                                        \
        const s_##X *p = (const s_##X *)vp;                                  \
        s_##X *o = (s_##X *)vo;                                              \
        enum { W = LANES(X) };                                               \
        v_##X *a = (v_##X *)scratch;                                         \
        s_##X r[W];                                                          \
        const size_t nv = B / W;                                             \
        size_t i, k, j;                                                      \
        for (j = 0; j < B; ++j) {                                            \
            if (j < W * nv) {                                                \
                a[j / W][j % W] = s[j].v.X;                                  \
            } else {                                                         \
                r[j - W * nv] = s[j].v.X;                                    \
            }                                                                \
        }                                                                    \
        /* each step: one element of every row, extremes stored */         \
        for (i = 0; i < L; ++i) {                                            \
            const s_##X *row = p + (ptrdiff_t)i * es;                        \
            s_##X *orow = o + (ptrdiff_t)i * oes;                            \
            for (k = 0; k < nv; ++k) {                                       \
                v_##X y = LD(v_##X, row + W * k);                            \
                m_##X keep = (a[k] CMP y) | NANV_##X(a[k]);                  \
                a[k] = SEL(v_##X, m_##X, y, a[k], keep);                     \
                ST(v_##X, orow + W * k, a[k]);                               \
            }                                                                \
            for (j = W * nv; j < B; ++j) {                                   \
                const s_##X y = row[j];                                      \
                s_##X *acc = &r[j - W * nv];                                 \
                *acc = (*acc CMP y || NANS_##X(*acc)) ? *acc : y;            \
                orow[j] = *acc;                                              \
            }                                                                \
        }                                                                    \
        for (j = 0; j < B; ++j) {                                            \
            s[j].v.X = j < W * nv ? a[j / W][j % W] : r[j - W * nv];         \
        }                                                                    \
    }
#define DEF_MINMAX_SCANS(X)                                                  \
    DEF_MSCAN(mscan_min_##X, X, <)                                           \
    DEF_MSCAN(mscan_max_##X, X, >)                                           \
    DEF_MSCANC(mscanc_min_##X, X, <)                                         \
    DEF_MSCANC(mscanc_max_##X, X, >)
DEF_MINMAX_SCANS(b)
DEF_MINMAX_SCANS(i8)
DEF_MINMAX_SCANS(u8)
DEF_MINMAX_SCANS(i16)
DEF_MINMAX_SCANS(u16)
DEF_MINMAX_SCANS(i32)
DEF_MINMAX_SCANS(u32)
DEF_MINMAX_SCANS(i64)
DEF_MINMAX_SCANS(u64)
DEF_MINMAX_SCANS(f32)
DEF_MINMAX_SCANS(f64)

/* ============================================================ scan driver */

static const scan_fn k_iscan_add[] = {
    iscan_add_b, iscan_add_i8, iscan_add_u8, iscan_add_i16, iscan_add_u16,
    iscan_add_i32, iscan_add_u32, iscan_add_i64, iscan_add_u64,
    iscan_add_u64, iscan_add_u64};
static const scan_fn k_iscan_mul[] = {
    iscan_mul_b, iscan_mul_i8, iscan_mul_u8, iscan_mul_i16, iscan_mul_u16,
    iscan_mul_i32, iscan_mul_u32, iscan_mul_i64, iscan_mul_u64,
    iscan_mul_u64, iscan_mul_u64};
static const scanc_fn k_iscanc_add[] = {
    iscanc_add_b, iscanc_add_i8, iscanc_add_u8, iscanc_add_i16,
    iscanc_add_u16, iscanc_add_i32, iscanc_add_u32, iscanc_add_i64,
    iscanc_add_u64, NULL, NULL};
static const scanc_fn k_iscanc_mul[] = {
    iscanc_mul_b, iscanc_mul_i8, iscanc_mul_u8, iscanc_mul_i16,
    iscanc_mul_u16, iscanc_mul_i32, iscanc_mul_u32, iscanc_mul_i64,
    iscanc_mul_u64, NULL, NULL};
static const scan_fn k_mscan_min[] = BY_DTYPE(mscan_min_, );
static const scan_fn k_mscan_max[] = BY_DTYPE(mscan_max_, );
static const scanc_fn k_mscanc_min[] = BY_DTYPE(mscanc_min_, );
static const scanc_fn k_mscanc_max[] = BY_DTYPE(mscanc_max_, );

typedef struct {
    scan_fn scan;
    scanc_fn col;     /* NULL: no column kernel                          */
    int kt;           /* KT_*: the kernel's input                        */
    int ksize;        /* bytes of the kernel's input elements            */
    int osize;        /* bytes of the kernel's output elements           */
    gr_hstate init;   /* the row's starting state                        */
    gr_val ident;     /* the exclusive scan's first output (dtype r)     */
} gr_scan_impl;

/* Fills *k for (op, t, r); -1 if unsupported. */
static int scan_impl(const gr_host_op *o, gr_scan_impl *k)
{
    const gr_dtype t = o->t, r = o->r;
    memset(k, 0, sizeof *k);
    k->kt = KT_SAME;
    k->ksize = gr_dtypes[t].size;
    k->osize = gr_dtypes[r].size;
    switch (o->op) {
    case GR_ADD:
    case GR_MUL:
        if (r == GR_BOOL) {
            return -1;
        }
        if (r == GR_FLOAT32 || r == GR_FLOAT64) {
            const int f64 = r == GR_FLOAT64, add = o->op == GR_ADD;
            k->kt = t == r ? KT_SAME : (f64 ? KT_F64 : KT_F32);
            k->ksize = f64 ? 8 : 4;
            if (!f64 && o->wide) {
                k->scan = add ? wscan4_add : wscan_mul;
                k->col = add ? wscanc_add : wscanc_mul;
                k->init.v.f64 = add ? -0.0 : 1.0;
            } else if (add) {
                k->scan = f64 ? cscan4_f64 : cscan_f32;
                k->col = f64 ? cscanc_f64 : cscanc_f32;
                if (f64) {
                    k->init.v.f64 = -0.0;
                } else {
                    k->init.v.f32 = -0.0f;
                }
            } else {
                k->scan = f64 ? pscan_f64 : pscan_f32;
                k->col = f64 ? pscanc_f64 : pscanc_f32;
                if (f64) {
                    k->init.v.f64 = 1.0;
                } else {
                    k->init.v.f32 = 1.0f;
                }
            }
            if (f64) {
                k->ident.f64 = add ? 0.0 : 1.0;
            } else {
                k->ident.f32 = add ? 0.0f : 1.0f;
            }
            return 0;
        }
        /* integer results: uint64 prefixes, narrowed on the way out */
        if (gr_dtypes[t].is_float) {
            k->kt = KT_U64;
            k->ksize = 8;
        }
        k->scan = o->op == GR_ADD ? k_iscan_add[t] : k_iscan_mul[t];
        k->col = o->op == GR_ADD ? k_iscanc_add[t] : k_iscanc_mul[t];
        k->osize = 8;
        k->init.v.u64 = o->op == GR_ADD ? 0 : 1;
        k->ident.u64 = k->init.v.u64;
        return 0;
    case GR_MIN:
    case GR_MAX:
        if (r != t) {
            return -1;
        }
        k->scan = o->op == GR_MIN ? k_mscan_min[t] : k_mscan_max[t];
        k->col = o->op == GR_MIN ? k_mscanc_min[t] : k_mscanc_max[t];
        switch (t) {
#define MM_INIT(TAG, X)                                                      \
    case TAG:                                                                \
        k->init.v.X = o->op == GR_MIN ? (s_##X)HI_##X : (s_##X)LO_##X;       \
        break;
        MM_INIT(GR_BOOL, b)
        MM_INIT(GR_INT8, i8)
        MM_INIT(GR_UINT8, u8)
        MM_INIT(GR_INT16, i16)
        MM_INIT(GR_UINT16, u16)
        MM_INIT(GR_INT32, i32)
        MM_INIT(GR_UINT32, u32)
        MM_INIT(GR_INT64, i64)
        MM_INIT(GR_UINT64, u64)
        MM_INIT(GR_FLOAT32, f32)
        MM_INIT(GR_FLOAT64, f64)
#undef MM_INIT
        default:
            return -1;
        }
        k->ident = k->init.v;
        return 0;
    default:
        return -1;
    }
}

/* Copies n kernel outputs (osize bytes each, contiguous) to out (dtype r,
 * ob bytes apart); integer prefixes (osize 8, r narrower) keep their low
 * bytes. */
static void scatter(char *out, ptrdiff_t ob, int rsize, const void *src,
                    int osize, size_t n)
{
    size_t i;
    if (osize == rsize) {
        for (i = 0; i < n; ++i) {
            memcpy(out + (ptrdiff_t)i * ob, (const char *)src + i * osize,
                   osize);
        }
        return;
    }
    /* uint64 prefixes narrowed (little-endian: the low bytes come first) */
    for (i = 0; i < n; ++i) {
        const uint64_t v = ((const uint64_t *)src)[i];
        switch (rsize) {
        case 1: {
            uint8_t b = (uint8_t)v;
            memcpy(out + (ptrdiff_t)i * ob, &b, 1);
            break;
        }
        case 2: {
            uint16_t b = (uint16_t)v;
            memcpy(out + (ptrdiff_t)i * ob, &b, 2);
            break;
        }
        default: {
            uint32_t b = (uint32_t)v;
            memcpy(out + (ptrdiff_t)i * ob, &b, 4);
            break;
        }
        }
    }
}

/* Inclusive scan of one row (p, L, es) into (q, oes), state s carried:
 * straight through the kernel where it can read the input and write the
 * output in place, else chunk by chunk through buffers. */
static void scan_row(const gr_scan_impl *k, const gr_host_op *o,
                     const char *p, size_t L, ptrdiff_t es, char *q,
                     ptrdiff_t oes, gr_hstate *s)
{
    const int tsize = gr_dtypes[o->t].size, rsize = gr_dtypes[o->r].size;
    uint64_t ibuf[CH], obuf[CH];
    size_t i0;
    const int in_place = es == 1 && k->kt == KT_SAME;
    const int out_place = oes == 1 && k->osize == rsize;
    if (in_place && out_place) {
        k->scan(p, L, s, q);
        return;
    }
    /* chunks of CH: gather (and cast), scan, scatter (and narrow) */
    for (i0 = 0; i0 < L; i0 += CH) {
        const size_t n = L - i0 < CH ? L - i0 : CH;
        const char *src = p + (ptrdiff_t)i0 * es * tsize;
        char *dst = q + (ptrdiff_t)i0 * oes * rsize;
        if (!in_place) {
            gather(ibuf, k->kt, src, es * tsize, o->t, o->r, n);
            src = (const char *)ibuf;
        }
        k->scan(src, n, s, out_place ? (void *)dst : (void *)obuf);
        if (!out_place) {
            scatter(dst, oes * rsize, rsize, obuf, k->osize, n);
        }
    }
}

/* Columns m0..m1 of a column scan: blocks of adjacent rows, one element
 * of each a step. */
static void scan_cols(const gr_scan_impl *k, const gr_host_op *o,
                      const char *base, char *obase, size_t m0, size_t m1,
                      size_t L, ptrdiff_t es, ptrdiff_t oes)
{
    const int tsize = gr_dtypes[o->t].size, rsize = gr_dtypes[o->r].size;
    gr_colbuf sb;
    gr_hstate *st;
    void *scratch, *heap;
    const size_t W = col_room(m1 - m0, &sb, &st, &scratch, &heap);
    size_t m, j;
    for (m = m0; m < m1; m += W) {
        const size_t B = m1 - m < W ? m1 - m : W;
        for (j = 0; j < B; ++j) {
            st[j] = k->init;
        }
        k->col(base + m * tsize, B, L, es, st, obase + m * rsize, oes,
               scratch);
    }
    free(heap);
}

/* Rows m0..m1 of any layout, one after the other. */
static void scan_rows(const gr_scan_impl *k, const gr_host_op *o,
                      const char *base, char *obase, size_t m0, size_t m1,
                      size_t L, ptrdiff_t ss, ptrdiff_t es, ptrdiff_t oss,
                      ptrdiff_t oes)
{
    const int tsize = gr_dtypes[o->t].size, rsize = gr_dtypes[o->r].size;
    size_t m;
    for (m = m0; m < m1; ++m) {
        gr_hstate s = k->init;
        scan_row(k, o, base + (ptrdiff_t)m * ss * tsize, L, es,
                 obase + (ptrdiff_t)m * oss * rsize, oes, &s);
    }
}

/* ------------------------------------------ scans on several threads
 * As the reductions (red_par_run): ranges of rows or of columns, each
 * scanned as on one thread; a few long rows in pieces, two passes: each
 * piece reduced (the reduction's fold, whose state is the scan's: the
 * double sum of floats, TwoSum's pair, wrapping integers, the extreme),
 * the states merged in order into each piece's carry, then each piece
 * scanned from its carry.  The carry's few memory-decided bits (a zero's
 * sign, which NaN) are read back from memory as one thread's scan would
 * leave them.  Not cut in pieces: float products (the fold's product is
 * not the scan's double one). */
typedef struct {
    const gr_scan_impl *k;
    const gr_host_op *o;
    const char *base;
    char *obase;
    size_t M, L;
    ptrdiff_t ss, es, oss, oes;
    int cols;
    size_t per;          /* rows (columns) a task, or elements a piece */
    size_t P;            /* pieces a row (0: whole rows)               */
    int pass;            /* pieces: 1 reduce, 2 scan                   */
    const gr_red_impl *rk;
    const gr_host_op *ro;
    gr_hstate *st;       /* pieces: M x P states, then carries          */
} scan_par;

static void scan_task(void *vp, size_t t)
{
    const scan_par *a = (const scan_par *)vp;
    const int tsize = gr_dtypes[a->o->t].size, rsize = gr_dtypes[a->o->r].size;
    if (a->P == 0) {
        const size_t m0 = t * a->per, m1 = m0 + a->per < a->M ? m0 + a->per : a->M;
        if (a->cols) {
            scan_cols(a->k, a->o, a->base, a->obase, m0, m1, a->L, a->es, a->oes);
        } else {
            scan_rows(a->k, a->o, a->base, a->obase, m0, m1, a->L, a->ss,
                      a->es, a->oss, a->oes);
        }
        return;
    }
    {
        const size_t m = t / a->P, j = t % a->P, i0 = j * a->per;
        const size_t i1 = i0 + a->per < a->L ? i0 + a->per : a->L;
        const char *p = a->base + ((ptrdiff_t)m * a->ss + (ptrdiff_t)i0 * a->es) * tsize;
        if (i0 >= i1) {
            return;
        }
        if (a->pass == 1) {
            a->st[t] = a->rk->init;
            red_segment(a->rk, a->ro, p, i1 - i0, a->es, i0, &a->st[t]);
        } else {
            gr_hstate s = a->st[t];
            scan_row(a->k, a->o, p, i1 - i0, a->es,
                     a->obase + ((ptrdiff_t)m * a->oss + (ptrdiff_t)i0 * a->oes) * rsize,
                     a->oes, &s);
        }
    }
}

/* The carry of a float scan before element i0 of the row p: what one
 * thread's scan holds there, where merged states cannot say -- the sign
 * of a zero sum (-0.0 only if every element before was -0.0), of a zero
 * extreme (the last zero's), the first NaN. */
static void carry_fix(const gr_host_op *o, const gr_red_impl *rk,
                      const char *p, ptrdiff_t es, size_t i0, gr_hstate *c)
{
    const int f64 = o->r == GR_FLOAT64;
    double v = f64 ? c->v.f64 : (rk->fin == FIN_F32W ? c->v.f64 : c->v.f32);
    double x = 0;
    size_t i;
    if (rk->fin == FIN_MINMAX && c->flag) {
        for (i = 0; i < i0; ++i) {
            x = gr_host_as_double(p, o->t, (ptrdiff_t)i * es);
            if (x != x) {
                break;
            }
        }
        /* the first NaN itself (its payload), as the scan keeps it */
        if (f64) {
            memcpy(&c->v.f64, p + (ptrdiff_t)i * es * 8, 8);
        } else {
            memcpy(&c->v.f32, p + (ptrdiff_t)i * es * 4, 4);
        }
        return;
    }
    if (v != 0) {
        return;
    }
    if (rk->fin == FIN_MINMAX) {
        /* the last zero's sign, from i0 back */
        for (i = i0; i-- > 0;) {
            x = gr_host_as_double(p, o->t, (ptrdiff_t)i * es);
            if (x == 0) {
                break;
            }
        }
        v = signbit(x) ? -0.0 : 0.0;
    } else {
        for (i = 0; i < i0; ++i) {
            x = gr_host_as_double(p, o->t, (ptrdiff_t)i * es);
            if (!(x == 0 && signbit(x))) {
                break;
            }
        }
        v = i == i0 ? -0.0 : 0.0;
    }
    if (f64 || rk->fin == FIN_F32W) {
        c->v.f64 = v;
    } else {
        c->v.f32 = (float)v;
    }
}

/* As red_par_run: 0 done, 1 not cut (nothing written), -1 no memory. */
static int scan_par_run(scan_par *a)
{
    const gr_host_op *o = a->o;
    const size_t M = a->M, L = a->L;
    const size_t ntasks = par_tasks(o, M * L * (size_t)gr_dtypes[o->t].size);
    size_t m, j;
    gr_red_impl rk;
    gr_host_op ro = *o;
    if (ntasks == 0) {
        return 1;
    }
    if ((a->cols && M >= 32 * ntasks) || (!a->cols && M >= ntasks)) {
        /* ranges of columns (whole vectors) or of rows */
        gr_par_run(scan_task, a, ranges(M, ntasks, a->cols ? 16 : 1, &a->per),
                   o->threads);
        return 0;
    }
    /* pieces of each row (a column layout of few columns: by rows too) */
    ro.threads = 1;
    if ((o->op == GR_MUL && gr_dtypes[o->r].is_float) || red_impl(&ro, &rk) != 0) {
        return 1;
    }
    a->P = ranges(L, div_up(ntasks, M), 64, &a->per);
    if (a->P < 2) {
        return 1;
    }
    a->rk = &rk;
    a->ro = &ro;
    if ((a->st = malloc(M * a->P * sizeof(gr_hstate))) == NULL) {
        return -1;
    }
    a->pass = 1;
    gr_par_run(scan_task, a, M * a->P, o->threads);
    /* each piece's carry: the merged states before it */
    for (m = 0; m < M; ++m) {
        gr_hstate *s = &a->st[m * a->P], c = a->k->init, next;
        const char *p = a->base + (ptrdiff_t)m * a->ss * gr_dtypes[o->t].size;
        for (j = 0; j < a->P; ++j) {
            next = c;
            merge(&rk, &ro, &next, &s[j]);
            if (j > 0 && gr_dtypes[o->r].is_float) {
                carry_fix(o, &rk, p, a->es, j * a->per, &c);
            }
            s[j] = c;
            c = next;
        }
    }
    a->pass = 2;
    gr_par_run(scan_task, a, M * a->P, o->threads);
    free(a->st);
    return 0;
}

int gr_host_scan(const gr_host_op *o, int exclusive, const void *in, size_t M,
                 size_t L, ptrdiff_t ss, ptrdiff_t es, void *out,
                 ptrdiff_t oss, ptrdiff_t oes)
{
    gr_scan_impl k;
    const char *base = (const char *)in;
    char *obase = (char *)out;
    int rsize, cols;
    size_t m;
    if (o == NULL || (unsigned)o->t >= GR_NDTYPES ||
        (unsigned)o->r >= GR_NDTYPES || scan_impl(o, &k) != 0) {
        return -1;
    }
    if (M == 0 || L == 0) {
        return 0;
    }
    rsize = gr_dtypes[o->r].size;
    if (exclusive) {
        /* identity first, then the inclusive scan of the first L - 1
         * elements into the positions after it */
        for (m = 0; m < M; ++m) {
            memcpy(obase + (ptrdiff_t)m * oss * rsize, &k.ident, rsize);
        }
        obase += oes * rsize;
        --L;
        if (L == 0) {
            return 0;
        }
    }
    cols = M > 1 && ss == 1 && oss == 1 && k.col != NULL && k.kt == KT_SAME &&
           k.osize == rsize && (size_t)(es < 0 ? -es : es) >= M &&
           (size_t)(oes < 0 ? -oes : oes) >= M;
    {
        scan_par a = {&k, o, base, obase, M, L, ss, es, oss, oes, cols};
        const int rc = scan_par_run(&a);
        if (rc <= 0) {
            return rc;
        }
    }
    if (cols) {
        /* columns: blocks of adjacent rows, one element of each a step */
        scan_cols(&k, o, base, obase, 0, M, L, es, oes);
        return 0;
    }
    /* rows, or any other layout: row by row */
    scan_rows(&k, o, base, obase, 0, M, L, ss, es, oss, oes);
    return 0;
}
