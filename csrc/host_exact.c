/*
 * host_exact.c — exact sums on the host path (sum/mean/nansum/nanmean with
 * exact=True): the exact sum of the elements, rounded once to the result
 * dtype.  Host layer: plain C over NumPy memory, no OpenCL, no Python.
 *
 * Two pieces, as in Collange, Defour, Graillat and Iakymchuk, "Numerical
 * reproducibility for the parallel reduction on multi- and many-core
 * architectures" (ExSum, 2015):
 *
 *   a long accumulator (gr_sacc): the exact value as GR_SACC_N signed
 *   64-bit digits of 32 bits each, bit 0 worth 2^-1074 (the smallest
 *   double), room above for 2^64 additions of the largest double.  A
 *   double is added exactly into at most three digits; 2^31 additions fit
 *   before a carry must move (gr_sacc_norm).
 *
 *   floating-point expansions in front of it: each lane keeps K doubles
 *   whose sum is exact (TwoSum, error-free), and only the error that
 *   falls out of the last one goes to the long accumulator.  On ordinary
 *   data that almost never happens, so the loop runs at the speed of a
 *   compensated sum.
 *
 * The rounding (gr_sacc_round) is the one place where the exact value
 * becomes a float: to nearest, ties to even, with the result type's
 * precision and subnormal range, so the answer is the correctly rounded
 * one, whatever the order of the elements, the threads or the device
 * (kernels/exact.cl holds the device's twin of the same format).
 */
#include "gpured.h"
#include "host_exact.h"
#include "hostpar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------- the long accumulator */

void gr_sacc_init(gr_sacc *s) { memset(s, 0, sizeof *s); }

/* x's bits as (digit index, three 32-bit pieces); non-finite values only
 * set the flags. */
void gr_sacc_add(gr_sacc *s, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    const unsigned e = (unsigned)(b >> 52) & 0x7ffu;
    uint64_t m = b & ((UINT64_C(1) << 52) - 1);
    if (e == 0x7ffu) {
        if (m != 0) {
            s->nan = 1;
        } else if (b >> 63) {
            s->ninf = 1;
        } else {
            s->pinf = 1;
        }
        return;
    }
    if (m == 0 && e == 0) {
        return;
    }
    unsigned p = 0; /* the position of m's bit 0 above 2^-1074 */
    if (e != 0) {
        m |= UINT64_C(1) << 52;
        p = e - 1;
    }
    const unsigned i = p >> 5, sh = p & 31u;
    const uint64_t hi = m >> (32 - sh); /* sh = 0: m >> 32 */
    const int64_t d0 = (int64_t)((m << sh) & 0xffffffffu);
    const int64_t d1 = (int64_t)(hi & 0xffffffffu);
    const int64_t d2 = (int64_t)(hi >> 32);
    if (b >> 63) {
        s->d[i] -= d0;
        s->d[i + 1] -= d1;
        s->d[i + 2] -= d2;
    } else {
        s->d[i] += d0;
        s->d[i + 1] += d1;
        s->d[i + 2] += d2;
    }
    if (++s->adds >= (UINT32_C(1) << 30)) {
        gr_sacc_norm(s);
    }
}

void gr_sacc_merge(gr_sacc *s, const gr_sacc *o)
{
    for (int i = 0; i < GR_SACC_N; ++i) {
        s->d[i] += o->d[i];
    }
    s->nan |= o->nan;
    s->pinf |= o->pinf;
    s->ninf |= o->ninf;
    s->adds += o->adds + 1;
    if (s->adds >= (UINT32_C(1) << 30)) {
        gr_sacc_norm(s);
    }
}

/* Carries moved up: digits 0..N-2 in [0, 2^32), the top one signed. */
void gr_sacc_norm(gr_sacc *s)
{
    for (int i = 0; i < GR_SACC_N - 1; ++i) {
        const int64_t c = s->d[i] >> 32; /* floor: arithmetic shift */
        s->d[i] -= c * ((int64_t)1 << 32);
        s->d[i + 1] += c;
    }
    s->adds = 0;
}

/* ------------------------------------------------------------ the rounding */

/* Bit k of the magnitude held in u (N digits of 32 bits, normalised). */
static int bit_at(const uint32_t *u, long k)
{
    return k < 0 ? 0 : (int)((u[k >> 5] >> (k & 31)) & 1u);
}

static int any_below(const uint32_t *u, long k) /* bits 0..k-1 */
{
    if (k <= 0) {
        return 0;
    }
    const long w = k >> 5;
    for (long i = 0; i < w; ++i) {
        if (u[i]) {
            return 1;
        }
    }
    return (k & 31) && (u[w] & ((UINT32_C(1) << (k & 31)) - 1u)) != 0;
}

/* u / div in place (long division, digits from the top); 1 if a remainder
 * was left (the sticky bit of the quotient). */
static int divide(uint32_t *u, int n, uint64_t div)
{
    unsigned __int128 r = 0;
    for (int i = n - 1; i >= 0; --i) {
        const unsigned __int128 cur = (r << 32) | u[i];
        u[i] = (uint32_t)(cur / div);
        r = cur % div;
    }
    return r != 0;
}

/* The result type's format: precision and the position (above 2^-1074)
 * of its smallest subnormal's bit, and its largest finite value. */
static void format_of(gr_dtype rt, int *prec, long *lsb, double *maxv)
{
    if (rt == GR_FLOAT32) {
        *prec = 24, *lsb = 1074 - 149, *maxv = 3.4028234663852886e38;
    } else {
        *prec = 53, *lsb = 0, *maxv = 1.7976931348623157e308;
    }
}

/* The exact value s / div rounded once to rt (float32 or float64; the
 * double returned is exactly representable in rt).  div >= 1. */
double gr_sacc_round(const gr_sacc *s0, gr_dtype rt, uint64_t div)
{
    enum { X = 2 }; /* extra low digits: the quotient's guard bits */
    uint32_t u[GR_SACC_N + X];
    gr_sacc s = *s0;
    int prec, neg = 0, sticky = 0;
    long lsb;
    double maxv;
    if (s.nan || (s.pinf && s.ninf)) {
        return NAN;
    }
    if (s.pinf || s.ninf) {
        return s.pinf ? INFINITY : -INFINITY;
    }
    format_of(rt, &prec, &lsb, &maxv);
    gr_sacc_norm(&s);
    if (s.d[GR_SACC_N - 1] < 0) { /* the magnitude: negate the digits */
        neg = 1;
        int64_t c = 0;
        for (int i = 0; i < GR_SACC_N; ++i) {
            int64_t v = -s.d[i] + c;
            c = v >> 32;
            s.d[i] = v - c * ((int64_t)1 << 32);
        }
    }
    memset(u, 0, sizeof u);
    for (int i = 0; i < GR_SACC_N; ++i) {
        u[i + X] = (uint32_t)s.d[i];
    }
    if (div > 1) {
        sticky = divide(u, GR_SACC_N + X, div);
    }
    long top = -1; /* the highest set bit, in u's numbering */
    for (int i = GR_SACC_N + X - 1; i >= 0 && top < 0; --i) {
        if (u[i]) {
            top = 32L * i + 31 - __builtin_clz(u[i]);
        }
    }
    if (top < 0) {
        return neg ? -0.0 : 0.0;
    }
    /* keep the bits from `low` up: prec of them, or down to the
     * smallest subnormal's bit (u's numbering is shifted by 32 X) */
    long low = top - (prec - 1);
    if (low < lsb + 32L * X) {
        low = lsb + 32L * X;
    }
    uint64_t m = 0;
    for (long k = top; k >= low; --k) {
        m = (m << 1) | (uint64_t)bit_at(u, k);
    }
    const int half = bit_at(u, low - 1);
    const int rest = sticky || any_below(u, low - 1);
    if (half && (rest || (m & 1u))) {
        ++m; /* to nearest, ties to even; 2^prec still exact below */
    }
    const double r = ldexp((double)m, (int)(low - 32L * X - 1074));
    if (r > maxv) {
        return neg ? -INFINITY : INFINITY;
    }
    return neg ? -r : r;
}

/* ----------------------------------------------------------- the fast loop */

/* TwoSum (Knuth): s + e == a + b exactly, for scalars and vectors alike. */
#define TWO_SUM(a, b, s, e)                                                  \
    do {                                                                     \
        const __typeof__(a) s_ = (a) + (b);                                  \
        const __typeof__(a) bb_ = s_ - (a);                                  \
        (e) = ((a) - (s_ - bb_)) + ((b) - bb_);                              \
        (s) = s_;                                                            \
    } while (0)

/* target_clones needs ifunc (glibc): an AVX2 clone beside the baseline,
 * picked at load time (as host.c's loops). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__GLIBC__) &&      \
    !defined(GR_HOST_NO_CLONES)
#define EXACT_CLONES                                                         \
    __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EXACT_CLONES
#endif

/* Eight lanes a vector (one AVX-512 register, two AVX2 ones). */
typedef double v4d __attribute__((vector_size(64)));
typedef int64_t v4i __attribute__((vector_size(64)));
typedef float v4f __attribute__((vector_size(32)));
#define VL 8

/* Two vectors of VL lanes, an expansion of GR_EXACT_K doubles in each. */
typedef struct {
    v4d c[GR_EXACT_K][2];
} fpe;

static int fpe_finite(const fpe *f)
{
    for (int k = 0; k < GR_EXACT_K; ++k) {
        for (int j = 0; j < 2; ++j) {
            for (int l = 0; l < VL; ++l) {
                if (!isfinite(f->c[k][j][l])) {
                    return 0;
                }
            }
        }
    }
    return 1;
}

static void fpe_flush(fpe *f, gr_sacc *s)
{
    for (int k = 0; k < GR_EXACT_K; ++k) {
        for (int j = 0; j < 2; ++j) {
            for (int l = 0; l < VL; ++l) {
                gr_sacc_add(s, f->c[k][j][l]);
            }
        }
    }
    memset(f, 0, sizeof *f);
}

/* VL elements into vector j of the expansion; an error that leaves the
 * last part (rare on ordinary data) goes to the accumulator. */
#define FPE_ADD(f, j, x, s)                                                  \
    do {                                                                     \
        v4d e_ = (x);                                                        \
        for (int k_ = 0; k_ < GR_EXACT_K; ++k_) {                            \
            TWO_SUM((f).c[k_][j], e_, (f).c[k_][j], e_);                     \
        }                                                                    \
        v4i nz_ = e_ != 0.0;                                                 \
        int any_ = 0;                                                        \
        for (int l_ = 0; l_ < VL; ++l_) {                                    \
            any_ |= nz_[l_] != 0;                                            \
        }                                                                    \
        if (__builtin_expect(any_, 0)) {                                     \
            for (int l_ = 0; l_ < VL; ++l_) {                                 \
                gr_sacc_add((s), e_[l_]);                                    \
            }                                                                \
        }                                                                    \
    } while (0)

/* NaNs as zeros (nansum), counted per lane in cnt (non-NaN elements). */
#define NAN_ZERO(x, cnt)                                                     \
    do {                                                                     \
        const v4i ok_ = (x) == (x);                                          \
        (x) = (v4d)((v4i)(x) & ok_);                                         \
        (cnt) -= ok_;                                                        \
    } while (0)

/* VL elements from p + VL half, as doubles (macros: no vector crosses a
 * call, whose ABI differs between the clones). */
#define LOAD_F64(p, half, v) memcpy(&(v), (p) + VL * (half), sizeof(v))
#define LOAD_F32(p, half, v)                                                 \
    do {                                                                     \
        v4f f_;                                                              \
        memcpy(&f_, (p) + VL * (half), sizeof f_);                           \
        (v) = __builtin_convertvector(f_, v4d);                              \
    } while (0)

#define BLOCK 4096

/* A contiguous run of n values of type T (float or double) into s, 2 VL
 * at a time; blocks whose expansion left the finite range (infinities, NaN, or
 * partial sums past the largest double) are done again one element at a
 * time straight into the accumulator, from the state before the block.
 * nan: NaNs count as zero (nansum); *count gets the non-NaN elements. */
#define DEF_RUN(name, T, LOAD)                                               \
    static EXACT_CLONES void name(const T *x, size_t n, int nan, gr_sacc *s, \
                                  uint64_t *count)                           \
    {                                                                        \
        fpe f, keep;                                                         \
        gr_sacc skeep;                                                       \
        v4i cnt = {0};                                                       \
        uint64_t tail = 0;                                                   \
        memset(&f, 0, sizeof f);                                             \
        for (size_t b = 0; b < n; b += BLOCK) {                              \
            const size_t end = b + BLOCK < n ? b + BLOCK : n;                \
            keep = f;                                                        \
            skeep = *s;                                                      \
            size_t i = b;                                                    \
            for (; i + 2 * VL <= end; i += 2 * VL) {                         \
                v4d x0, x1;                                                  \
                LOAD(x + i, 0, x0);                                          \
                LOAD(x + i, 1, x1);                                          \
                if (nan) {                                                   \
                    NAN_ZERO(x0, cnt);                                       \
                    NAN_ZERO(x1, cnt);                                       \
                }                                                            \
                FPE_ADD(f, 0, x0, s);                                        \
                FPE_ADD(f, 1, x1, s);                                        \
            }                                                                \
            for (; i < end; ++i) {                                           \
                const double v = (double)x[i];                               \
                v4d x0 = {v};                                                \
                if (nan && v != v) {                                         \
                    continue;                                                \
                }                                                            \
                tail += nan;                                                 \
                FPE_ADD(f, 0, x0, s);                                        \
            }                                                                \
            if (!fpe_finite(&f)) {                                           \
                f = keep;                                                    \
                *s = skeep;                                                  \
                for (i = b; i < end; ++i) {                                  \
                    const double v = (double)x[i];                           \
                    if (!(nan && v != v)) {                                  \
                        gr_sacc_add(s, v);                                   \
                    }                                                        \
                }                                                            \
            }                                                                \
        }                                                                    \
        fpe_flush(&f, s);                                                    \
        uint64_t kept = tail;                                                \
        for (int l = 0; l < VL; ++l) {                                       \
            kept += (uint64_t)cnt[l];                                        \
        }                                                                    \
        *count = nan ? kept : (uint64_t)n;                                   \
    }

DEF_RUN(run_f32, float, LOAD_F32)
DEF_RUN(run_f64, double, LOAD_F64)

/* One element into lane 0 (the strided loop). */
static inline void fpe_add1(fpe *f, double v, gr_sacc *s)
{
    v4d x0 = {v};
    FPE_ADD(*f, 0, x0, s);
}

/* A strided run (columns, views): one element at a time into lane 0. */
static void run_strided(const char *p, gr_dtype t, size_t n, ptrdiff_t es,
                        int nan, gr_sacc *s, uint64_t *count)
{
    fpe f;
    memset(&f, 0, sizeof f);
    uint64_t nans = 0;
    for (size_t i = 0; i < n; ++i, p += es) {
        double v;
        if (t == GR_FLOAT32) {
            float y;
            memcpy(&y, p, sizeof y);
            v = y;
        } else {
            memcpy(&v, p, sizeof v);
        }
        if (nan && v != v) {
            ++nans;
            continue;
        }
        if (!isfinite(v) || fabs(v) > 0x1p1000) {
            gr_sacc_add(s, v); /* keeps the expansion finite */
            continue;
        }
        fpe_add1(&f, v, s);
    }
    fpe_flush(&f, s);
    *count = (uint64_t)n - nans;
}

/* One segment of n elements at p (byte stride es) into s. */
void gr_host_exact_run(const char *p, gr_dtype t, size_t n, ptrdiff_t es,
                       int nan, gr_sacc *s, uint64_t *count)
{
    const ptrdiff_t isz = t == GR_FLOAT32 ? 4 : 8;
    if (es == isz && t == GR_FLOAT32) {
        run_f32((const float *)(const void *)p, n, nan, s, count);
    } else if (es == isz) {
        run_f64((const double *)(const void *)p, n, nan, s, count);
    } else {
        run_strided(p, t, n, es, nan, s, count);
    }
}

/* A long segment on several threads: tasks of CHUNK elements, each into
 * its own accumulator, merged after (any order: the sum is exact). */
#define CHUNK ((size_t)1 << 18)

typedef struct {
    const char *p;
    gr_dtype t;
    size_t n;
    ptrdiff_t es;
    int nan;
    gr_sacc *s;        /* one a task */
    uint64_t *count;
} par_job;

static void par_task(void *arg, size_t i)
{
    par_job *j = arg;
    const size_t lo = i * CHUNK, len = j->n - lo < CHUNK ? j->n - lo : CHUNK;
    gr_sacc_init(&j->s[i]);
    gr_host_exact_run(j->p + (ptrdiff_t)lo * j->es, j->t, len, j->es, j->nan,
                      &j->s[i], &j->count[i]);
}

/* One segment into s on the calling thread, CHUNK elements at a time
 * with Ctrl-C's check between (issue 39; the sum is exact: no change). */
static void segment_alone(const char *p, gr_dtype t, size_t n, ptrdiff_t es,
                          int nan, gr_sacc *s, uint64_t *count)
{
    size_t lo = 0;
    *count = 0;
    do {
        const size_t len = n - lo < CHUNK ? n - lo : CHUNK;
        uint64_t c = 0;
        gr_host_exact_run(p + (ptrdiff_t)lo * es, t, len, es, nan, s, &c);
        *count += c;
        lo += len;
    } while (lo < n && !gr_par_stopped());
}

/* One segment into s: on the pool's threads where it is long enough and
 * the machine has more than one CPU (2 cores, 2026-11-28: 1-256 MiB
 * float32 0.22-0.45x numpy.sum on one thread). */
static void segment(const char *p, gr_dtype t, size_t n, ptrdiff_t es,
                    int nan, gr_sacc *s, uint64_t *count)
{
    const size_t tasks = (n + CHUNK - 1) / CHUNK;
    const int cpus = gr_par_cpus();
    par_job j = {p, t, n, es, nan, NULL, NULL};
    if (tasks < 2 || cpus < 2 ||
        (j.s = malloc(tasks * sizeof *j.s)) == NULL ||
        (j.count = malloc(tasks * sizeof *j.count)) == NULL) {
        free(j.s);
        segment_alone(p, t, n, es, nan, s, count);
        return;
    }
    gr_par_run(par_task, &j, tasks, cpus);
    *count = 0;
    /* Ctrl-C: tasks skipped left no accumulator (the result is dropped) */
    for (size_t i = 0; i < tasks && !gr_par_stopped(); ++i) {
        gr_sacc_merge(s, &j.s[i]);
        *count += j.count[i];
    }
    free(j.s);
    free(j.count);
}

/* M segments of L elements (byte strides ss between segments, es between
 * elements) summed exactly (with *init where given); mean: divided by the
 * count (nan: NaNs left out of both), each rounded once to rt and stored
 * at out (rt's type). */
void gr_host_exact(const char *src, gr_dtype t, size_t M, size_t L,
                   ptrdiff_t ss, ptrdiff_t es, int nan, int mean,
                   const double *init, gr_dtype rt, void *out)
{
    for (size_t m = 0; m < M && !gr_par_stopped(); ++m) {
        gr_sacc s;
        uint64_t count = 0;
        gr_sacc_init(&s);
        segment(src + (ptrdiff_t)m * ss, t, L, es, nan, &s, &count);
        if (init != NULL) { /* sum's initial= is one more element */
            gr_sacc_add(&s, *init);
        }
        double r;
        if (mean && count == 0) {
            r = NAN; /* NumPy: mean of nothing */
        } else {
            r = gr_sacc_round(&s, rt, mean ? count : 1);
        }
        if (rt == GR_FLOAT32) {
            ((float *)out)[m] = (float)r;
        } else {
            ((double *)out)[m] = r;
        }
    }
}

/* ------------------------------------------------------------------ by key */

/* sum_by_key(exact=True) on the host: the values grouped by key by a
 * counting sort (one pass to count, one to place), then each key's run
 * summed by the fast loop above (expansions, then the long accumulator)
 * and rounded once, the keys shared among the host's threads.  Grouping
 * first rather than a long accumulator a key fed in input order (three
 * digit updates on a random cache line an element): 2 cores under a load
 * of 7, 16 Mi float32 values into 1024 keys, the host's time in
 * timeit_by_key 0.52 s grouped, 1.05 s an accumulator a key. */
typedef struct {
    const char *sorted;  /* the values grouped by key                   */
    const size_t *start; /* nk + 1 offsets into them                    */
    gr_dtype vt, rt;
    size_t nk, per;      /* keys a task                                  */
    void *out;
} bk_job;

static void bk_task(void *arg, size_t t)
{
    const bk_job *j = arg;
    const size_t vsz = j->vt == GR_FLOAT32 ? 4 : 8;
    const size_t hi = (t + 1) * j->per < j->nk ? (t + 1) * j->per : j->nk;
    for (size_t k = t * j->per; k < hi; ++k) {
        const size_t a = j->start[k], len = j->start[k + 1] - a;
        double r = 0.0;
        if (len > 0) {
            gr_sacc s;
            uint64_t count = 0;
            gr_sacc_init(&s);
            gr_host_exact_run(j->sorted + a * vsz, j->vt, len,
                              (ptrdiff_t)vsz, 0, &s, &count);
            r = gr_sacc_round(&s, j->rt, 1);
        }
        if (j->rt == GR_FLOAT32) {
            ((float *)j->out)[k] = (float)r; /* exact: r is a float32 */
        } else {
            ((double *)j->out)[k] = r;
        }
    }
}

/* The key of pair i (validated: in [0, nk)). */
static inline size_t key_at(const char *keys, size_t ksz, size_t i)
{
    if (ksz == 1) {
        return (uint8_t)keys[i];
    }
    if (ksz == 2) {
        uint16_t k;
        memcpy(&k, keys + i * 2, 2);
        return k;
    }
    if (ksz == 4) {
        uint32_t k;
        memcpy(&k, keys + i * 4, 4);
        return k;
    }
    uint64_t k;
    memcpy(&k, keys + i * 8, 8);
    return (size_t)k;
}

/* sum_by_key(exact=True) on the host (CPU devices, devices without 64-bit
 * atomics, past 2^31 values, or variant 'host'): each key's values
 * summed exactly, rounded once to rt into out (rt's type); keys that never
 * occur give 0.  Keys must lie in [0, nk) (the device checked them).
 * -1: out of memory. */
int gr_host_exact_bykey(const char *keys, gr_dtype kt, const char *vals,
                        gr_dtype vt, size_t n, size_t nk, gr_dtype rt,
                        void *out)
{
    const size_t ksz = gr_dtypes[kt].size, vsz = vt == GR_FLOAT32 ? 4 : 8;
    size_t *start = calloc(nk + 2, sizeof *start);
    char *sorted = malloc(n * vsz + 8);
    if (start == NULL || sorted == NULL) {
        free(start);
        free(sorted);
        return -1;
    }
    for (size_t i = 0; i < n; ++i) {
        start[key_at(keys, ksz, i) + 2]++;
    }
    for (size_t k = 2; k < nk + 2; ++k) {
        start[k] += start[k - 1];
    }
    /* start[k + 1]: where key k's next value goes; after: its end */
    for (size_t i = 0; i < n; ++i) {
        const size_t at = start[key_at(keys, ksz, i) + 1]++;
        memcpy(sorted + at * vsz, vals + i * vsz, vsz);
    }
    const int cpus = n >= ((size_t)1 << 16) ? gr_par_cpus() : 1;
    const size_t tasks = nk < 64 * (size_t)cpus ? (nk ? nk : 1)
                                                : 64 * (size_t)cpus;
    bk_job j = {sorted, start, vt, rt, nk, (nk + tasks - 1) / tasks, out};
    if (j.per == 0) {
        j.per = 1;
    }
    if (cpus > 1 && tasks > 1) {
        gr_par_run(bk_task, &j, tasks, cpus);
    } else {
        for (size_t t = 0; t < tasks; ++t) {
            bk_task(&j, t);
        }
    }
    free(start);
    free(sorted);
    return 0;
}
