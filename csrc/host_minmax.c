/*
 * gpured — the host path (below dispatch), its typed loops for min and
 * max (NaN flag, zero signs settled from memory), argmin and argmax
 * (blocks with one lane test, the AVX-512 variants), all and any (first
 * zero / nonzero, early exit), rows and columns, and the picks among them
 * (gr_host_minmax_impl, gr_host_arg_impl, gr_host_logical_impl) with the
 * identities of min and max (gr_host_mm_ident, shared with the scans).
 * host.c says what the answers are.
 */
#include "host_loops.h"

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

/* Kernel tables indexed by gr_dtype. */
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

int gr_host_mm_ident(gr_op op, gr_dtype t, gr_val *v)
{
    switch (t) {
#define MM_INIT(TAG, X)                                                      \
    case TAG:                                                                \
        v->X = op == GR_MIN ? (s_##X)HI_##X : (s_##X)LO_##X;                 \
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
}

int gr_host_minmax_impl(const gr_host_op *o, gr_red_impl *k)
{
    const gr_dtype t = o->t, r = o->r;
    if (r != t) {
        return -1;
    }
    k->fold = o->op == GR_MIN ? k_min[t] : k_max[t];
#ifdef GR_HAVE_COLZ
    if ((t == GR_FLOAT32 || t == GR_FLOAT64) && gr_host_have_colz()) {
        k->fold = t == GR_FLOAT32 ? (o->op == GR_MIN ? minz_f32 : maxz_f32)
                                  : (o->op == GR_MIN ? minz_f64 : maxz_f64);
    }
#endif
    k->col = o->op == GR_MIN ? k_minc[t] : k_maxc[t];
    k->fin = FIN_MINMAX;
    /* the identity as first value */
    return gr_host_mm_ident(o->op, t, &k->init.v);
}

int gr_host_arg_impl(const gr_host_op *o, gr_red_impl *k)
{
    const gr_dtype t = o->t, r = o->r;
    if (r != GR_INT64) {
        return -1;
    }
    k->fold = o->op == GR_ARGMIN ? k_argmin[t] : k_argmax[t];
#ifdef GR_HAVE_COLZ
    if ((t == GR_FLOAT32 || t == GR_FLOAT64) && gr_host_have_colz()) {
        k->fold = t == GR_FLOAT32
                      ? (o->op == GR_ARGMIN ? argminz_f32 : argmaxz_f32)
                      : (o->op == GR_ARGMIN ? argminz_f64 : argmaxz_f64);
    }
#endif
    k->col = o->op == GR_ARGMIN ? k_argminc[t] : k_argmaxc[t];
    k->fin = FIN_ARG;
    k->stops = 1;
    return 0;
}

int gr_host_logical_impl(const gr_host_op *o, gr_red_impl *k)
{
    const gr_dtype t = o->t, r = o->r;
    if (r != GR_BOOL) {
        return -1;
    }
    k->fold = o->op == GR_ALL ? k_zero[t] : k_nonzero[t];
    k->col = o->op == GR_ALL ? k_zeroc[t] : k_nonzeroc[t];
    k->fin = o->op == GR_ALL ? FIN_ALL : FIN_ANY;
    k->stops = 1;
    return 0;
}
