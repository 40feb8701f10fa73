/*
 * gpured — the host path (below dispatch), its scans: the scan kernels
 * (integer prefixes in uint64, float cumsums in double or TwoSum, 4
 * interleaved chains for contiguous rows, cumprod, cummin/cummax), rows
 * and columns, and gr_host_scan with its cut for several threads (a few
 * long rows: pieces reduced by the reductions' folds, carries merged).
 * host.c says what the answers are.
 */
#include "host_loops.h"
#include "hostpar.h"

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
        COL_STATES_LOAD(a, r, s, v.u64, B, 4, nv);                           \
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
        COL_STATES_STORE(a, r, s, v.u64, B, 4, nv);                          \
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
        COL_STATES_LOAD(a, r, s, v.f64, B, 4, nv);                           \
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
        COL_STATES_STORE(a, r, s, v.f64, B, 4, nv);                          \
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
        COL_STATES_STORE(v, rv, s, v.X, B, W, nv);                           \
        COL_STATES_STORE(x, rx, s, x.X, B, W, nv);                           \
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
        gr_host_fsumw_f32(p, SUB, 0, &t0);
        gr_host_fsumw_f32(p + SUB, SUB, 0, &t1);
        gr_host_fsumw_f32(p + 2 * SUB, SUB, 0, &t2);
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
            gr_host_fcomp_f64(p + k * SUB, SUB, 0, &t[k]);
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
        COL_STATES_LOAD(a, r, s, v.X, B, W, nv);                             \
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
        COL_STATES_STORE(a, r, s, v.X, B, W, nv);                            \
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
        COL_STATES_LOAD(a, r, s, v.X, B, W, nv);                             \
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
        COL_STATES_STORE(a, r, s, v.X, B, W, nv);                            \
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
        if (gr_host_mm_ident(o->op, t, &k->init.v) != 0) {
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
    /* Ctrl-C's check between blocks (issue 39): a power of two of
     * elements, whole 4-chain tiles, so the prefixes are those of one
     * call */
    const size_t blk = GR_HOST_STOP_BYTES /
                       (size_t)(tsize > k->osize ? tsize : k->osize);
    if (in_place && out_place) {
        for (i0 = 0;; i0 += blk) {
            const size_t n = L - i0 < blk ? L - i0 : blk;
            k->scan(p + i0 * (size_t)tsize, n, s, q + i0 * (size_t)rsize);
            if (L - i0 <= blk || gr_par_stopped()) {
                return;
            }
        }
    }
    /* chunks of CH: gather (and cast), scan, scatter (and narrow) */
    for (i0 = 0; i0 < L; i0 += CH) {
        const size_t n = L - i0 < CH ? L - i0 : CH;
        if (i0 % blk == 0 && i0 > 0 && gr_par_stopped()) {
            return;
        }
        const char *src = p + (ptrdiff_t)i0 * es * tsize;
        char *dst = q + (ptrdiff_t)i0 * oes * rsize;
        if (!in_place) {
            gr_host_gather(ibuf, k->kt, src, es * tsize, o->t, o->r, n);
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
    const size_t W = gr_host_col_room(m1 - m0, &sb, &st, &scratch, &heap);
    size_t m, j;
    for (m = m0; m < m1; m += W) {
        const size_t B = m1 - m < W ? m1 - m : W;
        /* rows in blocks of about GR_HOST_STOP_BYTES, the states carried
         * (the same prefixes), Ctrl-C's check between (issue 39) */
        const size_t R = GR_HOST_STOP_BYTES / (B * (size_t)tsize) + 1;
        for (j = 0; j < B; ++j) {
            st[j] = k->init;
        }
        for (size_t i0 = 0; i0 < L; i0 += R) {
            const size_t n = L - i0 < R ? L - i0 : R;
            if (i0 > 0 && gr_par_stopped()) {
                free(heap);
                return; /* (the result is dropped) */
            }
            k->col(base + ((ptrdiff_t)m + (ptrdiff_t)i0 * es) * tsize, B, n,
                   es, st,
                   obase + ((ptrdiff_t)m + (ptrdiff_t)i0 * oes) * rsize, oes,
                   scratch);
        }
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
    /* Ctrl-C's check every `every` rows (short rows do not check inside) */
    const size_t every = GR_HOST_STOP_BYTES / (L * (size_t)tsize) + 1;
    size_t m, left = every;
    for (m = m0; m < m1; ++m) {
        gr_hstate s = k->init;
        if (--left == 0) {
            left = every;
            if (gr_par_stopped()) {
                return;
            }
        }
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
            gr_host_red_segment(a->rk, a->ro, p, i1 - i0, a->es, i0, &a->st[t]);
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
    const size_t ntasks =
        gr_host_par_tasks(o, M * L * (size_t)gr_dtypes[o->t].size);
    size_t m, j;
    gr_red_impl rk;
    gr_host_op ro = *o;
    if (ntasks == 0) {
        return 1;
    }
    if ((a->cols && M >= 32 * ntasks) || (!a->cols && M >= ntasks)) {
        /* ranges of columns (whole vectors) or of rows */
        gr_par_run(scan_task, a,
                   gr_host_ranges(M, ntasks, a->cols ? 16 : 1, &a->per),
                   o->threads);
        return 0;
    }
    /* pieces of each row (a column layout of few columns: by rows too) */
    ro.threads = 1;
    if ((o->op == GR_MUL && gr_dtypes[o->r].is_float) ||
        gr_host_red_impl(&ro, &rk) != 0) {
        return 1;
    }
    a->P = gr_host_ranges(L, gr_host_div_up(ntasks, M), 64, &a->per);
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
    if (gr_par_stopped()) {
        /* Ctrl-C: skipped pieces left no state (the result is dropped) */
        free(a->st);
        return 0;
    }
    /* each piece's carry: the merged states before it */
    for (m = 0; m < M; ++m) {
        gr_hstate *s = &a->st[m * a->P], c = a->k->init, next;
        const char *p = a->base + (ptrdiff_t)m * a->ss * gr_dtypes[o->t].size;
        for (j = 0; j < a->P; ++j) {
            next = c;
            gr_host_merge(&rk, &ro, &next, &s[j]);
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
