/*
 * gpured — the host path (below dispatch), its typed loops for add and
 * mul: the rows and column kernels of integer sums and products (uint64
 * lanes), float32 sums in double (wide), TwoSum-compensated sums, their
 * AVX-512 column sums (colz) and float products, and gr_host_sum_impl,
 * the pick among them for one (op, t, r).  Kernels are static and reached
 * through gr_red_impl's pointers (target_clones: see host_loops.h); the
 * fold kernels the scans reuse on sub-blocks are exported
 * (gr_host_fsumw_f32, gr_host_fcomp_f32/f64).  host.c says what the
 * answers are.
 */
#include "host_loops.h"

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

/* -------------------------------------------------- integer add and mul
 * Elements widened 4 at a time to uint64_t lanes (sign-extended for signed
 * types: congruent modulo every power of two, so the cast to any result
 * type is its low bytes); bool counts 0/1. */

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
        COL_STATES_STORE(a, r, s, v.u64, B, 4, nv);                          \
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
GR_CLONES void gr_host_fsumw_f32(const void *vp, size_t n, size_t base,
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
    COL_STATES_STORE(a, r, s, v.f64, B, 4, nv);
}

/* ----------------------------------------- compensated sums (TwoSum)
 * float64 (and float32 when not wide): 4 vector states (v, x) updated by
 * TwoSum, then merged lane by lane into the segment's state.  The fold
 * reads TIN elements, each loaded as X (LOADV: a vector of W, LOADS:
 * one); SC its storage class (the plain folds are the scans' too). */
/* The vector part of a compensated sum of p[i .. n): 4 vectors a step,
 * each into its own compensated state (PF: a statement before each
 * step's loads, a prefetch or (void)0), then the remaining whole
 * vectors, the states merged into (v0, x0); i left where the tail of
 * fewer than W elements begins.  v0 and x0 start as the caller set them
 * (zeros). */
#define FCOMP_VECTORS(X, LOADV, p, n, i, W, m1, v0, x0, PF)                  \
    do {                                                                     \
        v_##X v1_ = v0, v2_ = v0, v3_ = v0;                                  \
        v_##X x1_ = x0, x2_ = x0, x3_ = x0;                                  \
        for (; (i) + 4 * (W) <= (n); (i) += 4 * (W)) {                       \
            PF;                                                              \
            v_##X y0_ = LOADV((p) + (i)), y1_ = LOADV((p) + (i) + (W));      \
            v_##X y2_ = LOADV((p) + (i) + 2 * (W));                          \
            v_##X y3_ = LOADV((p) + (i) + 3 * (W));                          \
            TWOSUM_F(v_##X, v0, x0, y0_, m1);                                \
            TWOSUM_F(v_##X, v1_, x1_, y1_, m1);                              \
            TWOSUM_F(v_##X, v2_, x2_, y2_, m1);                              \
            TWOSUM_F(v_##X, v3_, x3_, y3_, m1);                              \
        }                                                                    \
        for (; (i) + (W) <= (n); (i) += (W)) {                               \
            v_##X y0_ = LOADV((p) + (i));                                    \
            TWOSUM_F(v_##X, v0, x0, y0_, m1);                                \
        }                                                                    \
        TWOMERGE(v_##X, v0, x0, v1_, x1_);                                   \
        TWOMERGE(v_##X, v2_, x2_, v3_, x3_);                                 \
        TWOMERGE(v_##X, v0, x0, v2_, x2_);                                   \
    } while (0)

#define DEF_FCOMP_FOLD(SC, NAME, TIN, X, LOADV, LOADS)                       \
    SC GR_CLONES_FMA void NAME(const void *vp, size_t n, size_t base,        \
                               gr_hstate *s)                                 \
    {                                                                        \
        const TIN *p = (const TIN *)vp;                                      \
        const size_t W = LANES(X);                                           \
        const v_##X m1 = (v_##X){0} + (s_##X)NEG_ONE;                        \
        v_##X v0 = {0}, x0 = v0;                                             \
        s_##X sv = s->v.X, sx = s->x.X;                                      \
        size_t i = 0;                                                        \
        int l;                                                               \
        (void)base;                                                          \
        FCOMP_VECTORS(X, LOADV, p, n, i, W, m1, v0, x0, (void)0);            \
        /* lanes merged into the segment's state */                         \
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
    DEF_FCOMP_FOLD(, gr_host_fcomp_##X, s_##X, X, LDV_##X, LDS_SAME)         \
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
        COL_STATES_STORE(v, rv, s, v.X, B, W, nv);                           \
        COL_STATES_STORE(x, rx, s, x.X, B, W, nv);                           \
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
#ifdef GR_HAVE_COLZ
#define COLZ_PF_MIN ((size_t)8 << 20)
#define COLZ_PF_BYTES ((size_t)16 << 10)

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


/* Float32 rows summed in double (wide) on AVX-512: gr_host_fsumw_f32's sum with
 * 8-lane conversions, half its instructions (a core of the H100 host's
 * Xeon converts one vector a cycle either width: 16 threads summing 256
 * MiB read 116 GB/s with gr_host_fsumw_f32, torch's plain float32 sum 180). */
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
        gr_host_fsumw_f32(vp, n, base, s);
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
int gr_host_have_colz(void)
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
DEF_FCOMP_FOLD(static, fcomp_f32d, float, f64, CV_F64, LDS_F64)

/* ------------------------------------ a few interleaved columns (lanes)
 * B columns (B dividing the kernel's vector lanes: 2 or 4, and 8 for
 * float32's TwoSum) whose rows are contiguous, p[0..n) one run of
 * elements: element i belongs to column i % B, so lane l of every vector
 * loaded at a multiple of the lanes holds column l % B.  The folds above,
 * their states merged lane by lane into s[l % B] rather than into one
 * state: each column's sum as accurate as a row's (TwoSum states, or
 * double sums of floats), and the whole read in one pass at the rows'
 * speed (the column kernels have under a vector of columns here).  The
 * real view (n, 2) of a complex array is the case (gpured/_complex.py).
 * p starts at column 0; the states carry across calls. */
/* Prefetch (into L2) of the `lines` cache lines LANES_PF_BYTES after q, a
 * step of the lanes folds, where the run is longer than LANES_PF_MIN
 * bytes (pf; shorter runs are in the caches).  As the colz kernels', the
 * folds alone miss too few lines to stream from memory here: 2-core
 * Xeon, complex128 sums, us, 16 MiB 795-850 -> 731-759, 256 MiB
 * 29500-30000 -> 21700-22100; from L2, 1 MiB, 33-35 without, 35-36
 * with (4 KiB ahead; 16 KiB was no better). */
#define LANES_PF_BYTES ((size_t)4096)
#define LANES_PF_MIN ((size_t)2 << 20)
#define LANES_PF(q, pf, lines)                                               \
    do {                                                                     \
        if (pf) {                                                            \
            for (int f_ = 0; f_ < (lines); ++f_) {                           \
                __builtin_prefetch((const char *)(q) + LANES_PF_BYTES +      \
                                       64 * f_, 0, 2);                       \
            }                                                                \
        }                                                                    \
    } while (0)
#define DEF_FCOMP_LANES(NAME, TIN, X, LOADV, LOADS)                          \
    static GR_CLONES_FMA void NAME(const void *vp, size_t n, size_t B,       \
                                   gr_hstate *s)                             \
    {                                                                        \
        const TIN *p = (const TIN *)vp;                                      \
        const size_t W = LANES(X);                                           \
        const v_##X m1 = (v_##X){0} + (s_##X)NEG_ONE;                        \
        v_##X v0 = {0}, x0 = v0;                                             \
        size_t i = 0;                                                        \
        const int pf = n * sizeof *p > LANES_PF_MIN;                         \
        int l;                                                               \
        FCOMP_VECTORS(X, LOADV, p, n, i, W, m1, v0, x0,                      \
                      LANES_PF(p + i, pf,                                    \
                               (int)(4 * W * sizeof *p + 63) / 64));         \
        for (l = 0; l < (int)W; ++l) {                                       \
            TWOMERGE(s_##X, s[l % B].v.X, s[l % B].x.X, v0[l], x0[l]);       \
        }                                                                    \
        for (; i < n; ++i) {                                                 \
            TWOSUM(s_##X, s[i % B].v.X, s[i % B].x.X, LOADS(p[i]));          \
        }                                                                    \
    }
DEF_FCOMP_LANES(fcompl_f32, s_f32, f32, LDV_f32, LDS_SAME)
DEF_FCOMP_LANES(fcompl_f64, s_f64, f64, LDV_f64, LDS_SAME)
DEF_FCOMP_LANES(fcompl_f32d, float, f64, CV_F64, LDS_F64)

#ifdef GR_HAVE_COLZ
/* fcompl_f64 and fcompl_f32d on AVX-512: colz's Fast2Sum steps (F2SUM_Z:
 * TwoSum's states in 6 operations per 8 elements against TWOSUM_F's 7
 * per 4; float32 widened 8 at a time as loaded), B dividing 8.  2-core
 * Xeon (Sapphire Rapids), (n, 2) float64 from the caches: the 256-bit
 * TwoSum read 23 GB/s, NumPy's complex128 sum 29; complex64 mean of 16
 * MiB (float32 into float64 TwoSum) 1.46 ms against NumPy's 1.08. */
#define DEF_FCOMPZ_LANES(NAME, TIN, LOADZ)                                   \
    static GR_TARGET_Z void NAME(const void *vp, size_t n, size_t B,         \
                                 gr_hstate *s)                               \
    {                                                                        \
        const TIN *p = (const TIN *)vp;                                      \
        const __m512d one = _mm512_set1_pd(POS_ONE);                         \
        __m512d v0 = _mm512_setzero_pd(), v1 = v0, v2 = v0, v3 = v0;         \
        __m512d x0 = v0, x1 = v0, x2 = v0, x3 = v0;                          \
        double lv[8], lx[8];                                                 \
        size_t i = 0;                                                        \
        const int pf = n * sizeof *p > LANES_PF_MIN;                         \
        int l;                                                               \
        for (; i + 32 <= n; i += 32) {                                       \
            LANES_PF(p + i, pf, (int)sizeof *p / 2);                         \
            F2SUM_Z(v0, x0, LOADZ(p + i), one);                              \
            F2SUM_Z(v1, x1, LOADZ(p + i + 8), one);                          \
            F2SUM_Z(v2, x2, LOADZ(p + i + 16), one);                         \
            F2SUM_Z(v3, x3, LOADZ(p + i + 24), one);                         \
        }                                                                    \
        for (; i + 8 <= n; i += 8) {                                         \
            F2SUM_Z(v0, x0, LOADZ(p + i), one);                              \
        }                                                                    \
        TWOMERGE(__m512d, v0, x0, v1, x1);                                   \
        TWOMERGE(__m512d, v2, x2, v3, x3);                                   \
        TWOMERGE(__m512d, v0, x0, v2, x2);                                   \
        _mm512_storeu_pd(lv, v0);                                            \
        _mm512_storeu_pd(lx, x0);                                            \
        for (l = 0; l < 8; ++l) {                                            \
            TWOMERGE(double, s[l % B].v.f64, s[l % B].x.f64, lv[l], lx[l]);  \
        }                                                                    \
        for (; i < n; ++i) {                                                 \
            TWOSUM(double, s[i % B].v.f64, s[i % B].x.f64, (double)p[i]);    \
        }                                                                    \
    }
#define LDZ_F64(q) _mm512_loadu_pd(q)
#define LDZ_F32D(q) _mm512_cvtps_pd(_mm256_loadu_ps(q))
DEF_FCOMPZ_LANES(fcompzl_f64, double, LDZ_F64)
DEF_FCOMPZ_LANES(fcompzl_f32d, float, LDZ_F32D)
#endif

/* float32 columns summed in double (wide), as gr_host_fsumw_f32. */
static GR_CLONES void fsumwl_f32(const void *vp, size_t n, size_t B,
                                 gr_hstate *s)
{
    const float *p = (const float *)vp;
    const int pf = n * sizeof *p > LANES_PF_MIN;
    v_f64 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0,
          a6 = a0, a7 = a0;
    size_t i = 0;
    int l;
    for (; i + 32 <= n; i += 32) {
        LANES_PF(p + i, pf, 2);
        a0 += CV_F64(p + i);
        a1 += CV_F64(p + i + 4);
        a2 += CV_F64(p + i + 8);
        a3 += CV_F64(p + i + 12);
        a4 += CV_F64(p + i + 16);
        a5 += CV_F64(p + i + 20);
        a6 += CV_F64(p + i + 24);
        a7 += CV_F64(p + i + 28);
    }
    for (; i + 4 <= n; i += 4) {
        a0 += CV_F64(p + i);
    }
    a0 = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    for (l = 0; l < 4; ++l) {
        s[l % B].v.f64 += a0[l];
    }
    for (; i < n; ++i) {
        s[i % B].v.f64 += (double)p[i];
    }
}

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
        COL_STATES_STORE(a, r, s, v.X, B, W, nv);                            \
    }
DEF_FMUL(f32)
DEF_FMUL(f64)

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

/* add/mul with a float result: the kernels of its accumulator (double
 * sums of float32 when wide, TwoSum otherwise, plain products). */
static void sum_impl_float(const gr_host_op *o, gr_red_impl *k)
{
    const gr_dtype t = o->t, r = o->r;
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
        k->fold = gr_host_fsumw_f32;
        k->col = fsumwc_f32;
        k->fin = FIN_F32W;
        k->lanes = t == GR_FLOAT32 ? fsumwl_f32 : NULL;
        k->lanes_w = 4;
#ifdef GR_HAVE_COLZ
        if (t == GR_FLOAT32 && gr_host_have_colz()) {
            k->colz = fsumwz_f32;
            k->fold = fsumwz_fold_f32;
        }
#endif
    } else {
        k->fold = f64 ? gr_host_fcomp_f64 : gr_host_fcomp_f32;
        k->col = f64 ? fcompc_f64 : fcompc_f32;
        k->fin = f64 ? FIN_F64C : FIN_F32C;
        k->lanes = t == r ? (f64 ? fcompl_f64 : fcompl_f32) : NULL;
        k->lanes_w = f64 ? LANES(f64) : LANES(f32);
#ifdef GR_HAVE_COLZ
        if (f64 && t == GR_FLOAT64 && gr_host_have_colz()) {
            k->colz = fcompz_f64;
            k->lanes = fcompzl_f64;
            k->lanes_w = 8;
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
        k->lanes = fcompl_f32d;
        k->lanes_w = LANES(f64);
#ifdef GR_HAVE_COLZ
        if (gr_host_have_colz()) {
            k->lanes = fcompzl_f32d;
            k->lanes_w = 8;
        }
#endif
    }
}

int gr_host_sum_impl(const gr_host_op *o, gr_red_impl *k)
{
    const gr_dtype t = o->t, r = o->r;
    if (r == GR_BOOL) {
        return -1;
    }
    if (r == GR_FLOAT32 || r == GR_FLOAT64) {
        sum_impl_float(o, k);
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
}

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
void gr_host_gather(void *dst, int kt, const char *src, ptrdiff_t sb,
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
