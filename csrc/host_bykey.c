/*
 * gpured — the host path's dense reduce-by-key (issue 41): sum_by_key's
 * sum / min / max (and the counts aggregate's mean asks for with them) on
 * host memory, no OpenCL.  dispatch_bykey.c calls these where placement
 * (place.c, gr_place_bykey) picks the host.
 *
 * Each task takes a fixed range of the pairs, in blocks of HBK_BLOCK:
 * the block's keys become bin indices (uint32) with one range test for
 * the block (vectorised; the first bad index found only where it fails),
 * then the values are folded into the task's own bins.  With few keys the
 * bins are kept in HBK_COPIES interleaved copies (element i into copy
 * i % 4): consecutive elements of one key then do not wait on each
 * other's store.  Accumulators: double for float values (float32 sums
 * rounded once at the end, as the device's float64 accumulation), uint64
 * for integer sums (wrapping as NumPy's int64 / uint64 add.reduce),
 * int64 / uint64 for integer min/max; NaN propagates in min/max.  The
 * tasks' bins are merged in task order: the same bits for a given thread
 * count.  Ctrl-C: gr_par_stopped between blocks.
 */
#include "host_bykey.h"
#include "hostpar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HBK_BLOCK 4096        /* pairs a block (16 KiB of indices)        */
#define HBK_COPIES 4          /* interleaved bin copies for few keys      */
#define HBK_COPY_KEYS 4096    /* ... up to this many keys                 */
#define HBK_TASK_BINS (64u << 20) /* privatized bins, every task: bytes   */
#define HBK_TASK_MIN 65536    /* pairs a task at least                    */

gr_dtype gr_host_bk_result(gr_op op, gr_dtype vt)
{
    if (op != GR_ADD || gr_dtypes[vt].is_float) {
        return vt;
    }
    return vt == GR_BOOL || gr_dtypes[vt].is_signed ? GR_INT64 : GR_UINT64;
}

int gr_host_bk_types_ok(gr_dtype kt, gr_dtype vt)
{
    return kt >= GR_INT8 && kt <= GR_UINT64 && vt >= GR_BOOL &&
           vt <= GR_FLOAT64;
}

/* ------------------------------------------------------------ keys */

/* keys[lo..lo+m) as bin indices; m, or the offset of the first key
 * outside [0, nk) (a negative key, as uint64, is past any nk). */
#define HBK_KEYS(NAME, T)                                                     \
    static size_t NAME(const void *keys, size_t lo, size_t m, uint64_t nk,   \
                       uint32_t *idx)                                         \
    {                                                                         \
        const T *k = (const T *)keys + lo;                                    \
        int bad = 0;                                                          \
        for (size_t i = 0; i < m; ++i) {                                      \
            const uint64_t u = (uint64_t)k[i];                                \
            bad |= u >= nk;                                                   \
            idx[i] = (uint32_t)u;                                             \
        }                                                                     \
        for (size_t i = 0; bad && i < m; ++i) {                               \
            if ((uint64_t)k[i] >= nk) {                                       \
                return i;                                                     \
            }                                                                 \
        }                                                                     \
        return m;                                                             \
    }
HBK_KEYS(keys_i8, int8_t)
HBK_KEYS(keys_u8, uint8_t)
HBK_KEYS(keys_i16, int16_t)
HBK_KEYS(keys_u16, uint16_t)
HBK_KEYS(keys_i32, int32_t)
HBK_KEYS(keys_u32, uint32_t)
HBK_KEYS(keys_i64, int64_t)
HBK_KEYS(keys_u64, uint64_t)

typedef size_t (*keys_fn)(const void *, size_t, size_t, uint64_t, uint32_t *);
static keys_fn keys_of(gr_dtype kt)
{
    static const keys_fn f[GR_NDTYPES] = {
        [GR_INT8] = keys_i8,   [GR_UINT8] = keys_u8,   [GR_INT16] = keys_i16,
        [GR_UINT16] = keys_u16, [GR_INT32] = keys_i32, [GR_UINT32] = keys_u32,
        [GR_INT64] = keys_i64, [GR_UINT64] = keys_u64};
    return f[kt];
}

/* The largest key and the smallest (as int64; unsigned: 0) of a range. */
#define HBK_KMAX(NAME, T, SIGNED)                                             \
    static void NAME(const void *keys, size_t lo, size_t m, uint64_t *mx,    \
                     int64_t *mn)                                             \
    {                                                                         \
        const T *k = (const T *)keys + lo;                                    \
        T a = k[0], b = k[0];                                                 \
        for (size_t i = 1; i < m; ++i) {                                      \
            a = k[i] > a ? k[i] : a;                                          \
            b = k[i] < b ? k[i] : b;                                          \
        }                                                                     \
        if (a >= 0 && (uint64_t)a > *mx) {                                    \
            *mx = (uint64_t)a;                                                \
        }                                                                     \
        if (SIGNED && (int64_t)b < *mn) {                                     \
            *mn = (int64_t)b;                                                 \
        }                                                                     \
    }
HBK_KMAX(kmax_i8, int8_t, 1)
HBK_KMAX(kmax_u8, uint8_t, 0)
HBK_KMAX(kmax_i16, int16_t, 1)
HBK_KMAX(kmax_u16, uint16_t, 0)
HBK_KMAX(kmax_i32, int32_t, 1)
HBK_KMAX(kmax_u32, uint32_t, 0)
HBK_KMAX(kmax_i64, int64_t, 1)
HBK_KMAX(kmax_u64, uint64_t, 0)

int gr_host_bk_keymax(const void *keys, gr_dtype kt, size_t n, uint64_t *max,
                      uint64_t *bad)
{
    typedef void (*fn)(const void *, size_t, size_t, uint64_t *, int64_t *);
    static const fn f[GR_NDTYPES] = {
        [GR_INT8] = kmax_i8,   [GR_UINT8] = kmax_u8,   [GR_INT16] = kmax_i16,
        [GR_UINT16] = kmax_u16, [GR_INT32] = kmax_i32, [GR_UINT32] = kmax_u32,
        [GR_INT64] = kmax_i64, [GR_UINT64] = kmax_u64};
    const size_t step = 1u << 20;
    uint64_t mx = 0;
    int64_t mn = 0;
    for (size_t lo = 0; lo < n; lo += step) {
        if (gr_par_stopped()) {
            return -1;
        }
        f[kt](keys, lo, n - lo < step ? n - lo : step, &mx, &mn);
        if (mn < 0) {
            /* the first negative key: a scan with nk past every key */
            uint32_t idx[HBK_BLOCK];
            for (size_t b = 0; b < n; b += HBK_BLOCK) {
                const size_t m = n - b < HBK_BLOCK ? n - b : HBK_BLOCK;
                const size_t at = keys_of(kt)(keys, b, m, (uint64_t)1 << 63,
                                              idx);
                if (at < m) {
                    *bad = b + at;
                    return 1;
                }
            }
        }
    }
    *max = mx;
    return 0;
}

/* ---------------------------------------------------------- values */

/* One block's values into bins b (copies cs apart: 0 for one copy),
 * counts c (NULL: none) likewise. */
typedef void (*fold_fn)(const void *vals, size_t lo, size_t m,
                        const uint32_t *idx, void *b, size_t cs);

#define HBK_SUM(NAME, VT, AT)                                                 \
    static void NAME(const void *vals, size_t lo, size_t m,                  \
                     const uint32_t *idx, void *bins, size_t cs)              \
    {                                                                         \
        const VT *v = (const VT *)vals + lo;                                  \
        AT *b = (AT *)bins;                                                   \
        size_t i = 0;                                                         \
        for (; i + 4 <= m; i += 4) {                                          \
            b[idx[i]] += (AT)v[i];                                            \
            b[cs + idx[i + 1]] += (AT)v[i + 1];                               \
            b[2 * cs + idx[i + 2]] += (AT)v[i + 2];                           \
            b[3 * cs + idx[i + 3]] += (AT)v[i + 3];                           \
        }                                                                     \
        for (; i < m; ++i) {                                                  \
            b[idx[i]] += (AT)v[i];                                            \
        }                                                                     \
    }

/* min (GT: <) or max (>), NaN kept once met */
#define HBK_MM(NAME, VT, AT, GT)                                              \
    static void NAME(const void *vals, size_t lo, size_t m,                  \
                     const uint32_t *idx, void *bins, size_t cs)              \
    {                                                                         \
        const VT *v = (const VT *)vals + lo;                                  \
        AT *b = (AT *)bins;                                                   \
        for (size_t i = 0; i < m; ++i) {                                      \
            AT *o = b + (i & 3) * cs + idx[i];                                \
            const AT x = (AT)v[i];                                            \
            *o = (x GT * o || x != x) ? x : *o;                               \
        }                                                                     \
    }

HBK_SUM(sum_b, uint8_t, uint64_t)
HBK_SUM(sum_i8, int8_t, uint64_t)
HBK_SUM(sum_u8, uint8_t, uint64_t)
HBK_SUM(sum_i16, int16_t, uint64_t)
HBK_SUM(sum_u16, uint16_t, uint64_t)
HBK_SUM(sum_i32, int32_t, uint64_t)
HBK_SUM(sum_u32, uint32_t, uint64_t)
HBK_SUM(sum_i64, int64_t, uint64_t)
HBK_SUM(sum_u64, uint64_t, uint64_t)
HBK_SUM(sum_f32, float, double)
HBK_SUM(sum_f64, double, double)

#define HBK_MM_ALL(P, GT)                                                     \
    HBK_MM(P##_b, uint8_t, uint64_t, GT)                                      \
    HBK_MM(P##_i8, int8_t, int64_t, GT)                                       \
    HBK_MM(P##_u8, uint8_t, uint64_t, GT)                                     \
    HBK_MM(P##_i16, int16_t, int64_t, GT)                                     \
    HBK_MM(P##_u16, uint16_t, uint64_t, GT)                                   \
    HBK_MM(P##_i32, int32_t, int64_t, GT)                                     \
    HBK_MM(P##_u32, uint32_t, uint64_t, GT)                                   \
    HBK_MM(P##_i64, int64_t, int64_t, GT)                                     \
    HBK_MM(P##_u64, uint64_t, uint64_t, GT)                                   \
    HBK_MM(P##_f32, float, double, GT)                                        \
    HBK_MM(P##_f64, double, double, GT)
HBK_MM_ALL(min, <)
HBK_MM_ALL(max, >)

#define HBK_ROW(P)                                                            \
    {P##_b, P##_i8, P##_u8, P##_i16, P##_u16, P##_i32, P##_u32, P##_i64,     \
     P##_u64, P##_f32, P##_f64}

static fold_fn fold_of(gr_op op, gr_dtype vt)
{
    static const fold_fn f[3][GR_NDTYPES] = {HBK_ROW(sum), HBK_ROW(min),
                                             HBK_ROW(max)};
    return f[op == GR_ADD ? 0 : op == GR_MIN ? 1 : 2][vt];
}

static void count_block(size_t m, const uint32_t *idx, int64_t *c, size_t cs)
{
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        c[idx[i]]++;
        c[cs + idx[i + 1]]++;
        c[2 * cs + idx[i + 2]]++;
        c[3 * cs + idx[i + 3]]++;
    }
    for (; i < m; ++i) {
        c[idx[i]]++;
    }
}

/* --------------------------------------------------- bins and merge */

/* The accumulator's kind: 0 double, 1 int64, 2 uint64. */
static int acc_kind(gr_op op, gr_dtype vt)
{
    if (gr_dtypes[vt].is_float) {
        return 0;
    }
    return op != GR_ADD && gr_dtypes[vt].is_signed ? 1 : 2;
}

/* op's identity for values vt in the accumulator's representation. */
static uint64_t identity_bits(gr_op op, gr_dtype vt)
{
    uint64_t u = 0;
    const int kind = acc_kind(op, vt);
    if (op == GR_ADD) {
        return 0;
    }
    if (kind == 0) {
        const double x = op == GR_MIN ? INFINITY : -INFINITY;
        memcpy(&u, &x, 8);
        return u;
    }
    const int bits = vt == GR_BOOL ? 1 : 8 * gr_dtypes[vt].size;
    if (kind == 2) { /* unsigned: min starts at the largest, max at 0 */
        return op == GR_MIN ? (bits == 64 ? UINT64_MAX
                                          : ((uint64_t)1 << bits) - 1)
                            : 0;
    }
    const int64_t hi = bits == 64 ? INT64_MAX
                                  : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
    const int64_t s = op == GR_MIN ? hi : -hi - 1;
    memcpy(&u, &s, 8);
    return u;
}

/* b op= x in the accumulator's kind. */
static void combine(int kind, gr_op op, uint64_t *b, uint64_t x)
{
    if (op == GR_ADD) {
        if (kind == 0) {
            double p, q;
            memcpy(&p, b, 8);
            memcpy(&q, &x, 8);
            p += q;
            memcpy(b, &p, 8);
        } else {
            *b += x;
        }
        return;
    }
    const int want_lt = op == GR_MIN;
    int take;
    if (kind == 0) {
        double p, q;
        memcpy(&p, b, 8);
        memcpy(&q, &x, 8);
        take = isnan(q) || (!isnan(p) && (want_lt ? q < p : q > p));
    } else if (kind == 1) {
        const int64_t p = (int64_t)*b, q = (int64_t)x;
        take = want_lt ? q < p : q > p;
    } else {
        take = want_lt ? x < *b : x > *b;
    }
    if (take) {
        *b = x;
    }
}

/* The accumulator value u as one element of rt at out[k]. */
static void put_result(int kind, gr_dtype rt, void *out, size_t k, uint64_t u)
{
    char *o = (char *)out + k * (size_t)gr_dtypes[rt].size;
    if (kind == 0) {
        double x;
        memcpy(&x, &u, 8);
        if (rt == GR_FLOAT32) {
            const float f = (float)x;
            memcpy(o, &f, 4);
        } else {
            memcpy(o, &x, 8);
        }
        return;
    }
    if (rt == GR_BOOL) {
        *(uint8_t *)o = u != 0;
        return;
    }
    memcpy(o, &u, (size_t)gr_dtypes[rt].size); /* little-endian: truncate */
}

/* -------------------------------------------------------------- tasks */

typedef struct {
    const gr_hbk *h;
    size_t nk;                     /* bins (growing: the capacity)       */
    size_t tasks, per, cs, copies; /* pairs a task; copy stride; copies  */
    uint64_t *bins;                /* tasks x copies x nk                */
    int64_t *cnts;                 /* ... likewise, or NULL              */
    uint64_t *bad;                 /* the first bad index a task: n none */
    uint64_t ident;
    int grow;                      /* nk from the keys (one task)        */
    uint32_t kmax;                 /* ... the largest key seen           */
    int stopped, oom;
} hbk_job;

static int acc_kind_of(const gr_hbk *h)
{
    return h->vals != NULL ? acc_kind(h->op, h->vt) : 2;
}

/* Growing: the bins for keys up to top (one task), every copy folded
 * into one where they pass HBK_COPY_KEYS. */
static int hbk_grow(hbk_job *j, uint64_t top)
{
    const gr_hbk *h = j->h;
    size_t cap = j->nk * 2 > top + 1 ? j->nk * 2 : (size_t)top + 1;
    const size_t copies = cap <= HBK_COPY_KEYS ? j->copies : 1;
    uint64_t *b = malloc(copies * cap * 8);
    int64_t *c = j->cnts != NULL ? calloc(copies * cap, 8) : NULL;
    if (cap > UINT32_MAX || b == NULL || (j->cnts != NULL && c == NULL)) {
        free(b);
        free(c);
        return -1;
    }
    for (size_t i = 0; i < copies * cap; ++i) {
        b[i] = j->ident;
    }
    const int kind = acc_kind_of(h);
    for (size_t p = 0; p < j->copies; ++p) {
        const size_t q = copies > 1 ? p : 0;
        for (size_t k = 0; k < j->nk; ++k) {
            combine(kind, h->op, &b[q * cap + k], j->bins[p * j->nk + k]);
            if (c != NULL) {
                c[q * cap + k] += j->cnts[p * j->nk + k];
            }
        }
    }
    free(j->bins);
    free(j->cnts);
    j->bins = b;
    j->cnts = c;
    j->nk = cap;
    j->copies = copies;
    j->cs = copies > 1 ? cap : 0;
    return 0;
}

/* One block's keys as indices: 0, or 1 where it stops the task (a bad
 * key, growing's negative one, out of memory). */
static int hbk_block_keys(hbk_job *j, keys_fn kf, size_t s, size_t m,
                          uint32_t *idx, size_t t)
{
    const gr_hbk *h = j->h;
    size_t at = kf(h->keys, s, m, j->nk, idx);
    if (at < m && j->grow) {
        /* past the bins: a negative key (the first is the error), or
         * the bins grow to the block's largest (below 2^32) */
        at = kf(h->keys, s, m, (uint64_t)1 << 63, idx);
        if (at == m) {
            uint32_t mx = 0;
            for (size_t i = 0; i < m; ++i) {
                mx = idx[i] > mx ? idx[i] : mx;
            }
            if (kf(h->keys, s, m, UINT32_MAX, idx) < m ||
                hbk_grow(j, mx) != 0) {
                j->oom = 1;
                return 1;
            }
        }
    }
    if (at < m) {
        j->bad[t] = s + at;
        return 1;
    }
    if (j->grow) {
        uint32_t mx = j->kmax;
        for (size_t i = 0; i < m; ++i) {
            mx = idx[i] > mx ? idx[i] : mx;
        }
        j->kmax = mx;
    }
    return 0;
}

static void hbk_task(void *arg, size_t t)
{
    hbk_job *j = arg;
    const gr_hbk *h = j->h;
    const size_t nb = j->copies * j->nk, lo = t * j->per;
    const size_t hi = lo + j->per < h->n ? lo + j->per : h->n;
    uint32_t idx[HBK_BLOCK];
    const keys_fn kf = keys_of(h->kt);
    const fold_fn ff = h->vals != NULL ? fold_of(h->op, h->vt) : NULL;
    for (size_t i = 0; i < nb; ++i) {
        j->bins[t * nb + i] = j->ident;
    }
    if (j->cnts != NULL) {
        memset(j->cnts + t * nb, 0, nb * sizeof *j->cnts);
    }
    j->bad[t] = h->n;
    for (size_t s = lo; s < hi; s += HBK_BLOCK) {
        const size_t m = hi - s < HBK_BLOCK ? hi - s : HBK_BLOCK;
        if (((s - lo) & ((HBK_BLOCK << 6) - 1)) == 0 && gr_par_stopped()) {
            j->stopped = 1;
            return;
        }
        if (hbk_block_keys(j, kf, s, m, idx, t) != 0) {
            return;
        }
        /* (growing moves the bins: their address after the keys) */
        if (ff != NULL) {
            ff(h->vals, s, m, idx, j->bins + t * nb, j->cs);
        }
        if (j->cnts != NULL) {
            count_block(m, idx, j->cnts + t * nb, j->cs);
        }
    }
}

int gr_host_bk_tasks(size_t n, size_t nk, int threads, int counts)
{
    const size_t copies = nk <= HBK_COPY_KEYS ? HBK_COPIES : 1;
    const size_t per = nk * copies * 8 * (counts ? 2 : 1);
    size_t t = threads > 1 ? (size_t)threads : 1;
    if (n / HBK_TASK_MIN < t) {
        t = n / HBK_TASK_MIN ? n / HBK_TASK_MIN : 1;
    }
    while (t > 1 && per * t > HBK_TASK_BINS) {
        --t;
    }
    return (int)t;
}

/* Every task's bins (copies included) folded into task 0's copy 0, in
 * order, then written out (nk of them: growing, the largest key + 1). */
static void hbk_merge(const hbk_job *j, size_t nk, gr_hbk_out *o)
{
    const gr_hbk *h = j->h;
    const int kind = acc_kind_of(h);
    const size_t parts = j->tasks * j->copies;
    for (size_t p = 1; p < parts; ++p) {
        const uint64_t *b = j->bins + p * j->nk;
        const int64_t *c = j->cnts != NULL ? j->cnts + p * j->nk : NULL;
        for (size_t k = 0; k < nk; ++k) {
            if (h->vals != NULL) {
                combine(kind, h->op, &j->bins[k], b[k]);
            }
            if (c != NULL) {
                j->cnts[k] += c[k];
            }
        }
    }
    for (size_t k = 0; o->out != NULL && k < nk; ++k) {
        put_result(kind, h->rt, o->out, k, j->bins[k]);
    }
    if (o->cnt != NULL && nk > 0) {
        memcpy(o->cnt, j->cnts, nk * sizeof *o->cnt);
    }
}

/* Counts kept: asked for, or they are the result (no values: op count). */
static int hbk_counts(const gr_hbk *h)
{
    return h->counts || h->vals == NULL;
}

/* The job's bins: tasks (placement's threads, as the bins allow), copies;
 * growing (nk not given, one task) from HBK_COPY_KEYS / 4 on. */
static int hbk_setup(hbk_job *j, const gr_hbk *h, size_t nk)
{
    memset(j, 0, sizeof *j);
    j->h = h;
    j->grow = nk == SIZE_MAX;
    j->nk = j->grow ? HBK_COPY_KEYS / 4 : nk;
    j->tasks = j->grow ? 1 : (size_t)gr_host_bk_tasks(h->n, nk, h->threads,
                                                       hbk_counts(h));
    j->per = (h->n + j->tasks - 1) / j->tasks;
    j->copies = j->nk <= HBK_COPY_KEYS ? HBK_COPIES : 1;
    j->cs = j->copies > 1 ? j->nk : 0;
    j->ident = h->vals != NULL ? identity_bits(h->op, h->vt) : 0;
    const size_t nb = j->tasks * j->copies * (j->nk ? j->nk : 1);
    j->bins = malloc(nb * 8);
    j->cnts = hbk_counts(h) ? malloc(nb * 8) : NULL;
    j->bad = malloc(j->tasks * sizeof *j->bad);
    return j->bins == NULL || j->bad == NULL || (hbk_counts(h) && !j->cnts)
               ? -1 : 0;
}

/* The results' memory (nk of rt) into o. */
static int hbk_out_alloc(const gr_hbk *h, size_t nk, gr_hbk_out *o)
{
    o->nk = nk;
    o->out = malloc(nk * (size_t)gr_dtypes[h->rt].size + 8);
    return o->out == NULL ? -1 : 0;
}

/* The merged bins as the results: where the accumulator is the result
 * dtype's own 8 bytes (float64; int64 / uint64 sums; 8-byte integer
 * min/max) task 0's bins become the result without a copy, as do the
 * counts (many keys: no second buffer to fault in). */
static int hbk_finish(hbk_job *j, size_t nk, gr_hbk_out *o)
{
    const gr_hbk *h = j->h;
    const int own = h->vals != NULL && gr_dtypes[h->rt].size == 8 &&
                    (h->rt == GR_FLOAT64 || !gr_dtypes[h->rt].is_float);
    if (h->vals == NULL) { /* op count: the counts are the result */
        gr_hbk_out tmp = {nk, NULL, NULL};
        hbk_merge(j, nk, &tmp);
        o->nk = nk;
        o->out = j->cnts;
        j->cnts = NULL;
        return 0;
    }
    if (!own && hbk_out_alloc(h, nk, o) != 0) {
        return -1;
    }
    gr_hbk_out tmp = {nk, NULL, NULL};
    hbk_merge(j, nk, own ? &tmp : o);
    o->nk = nk;
    if (own) {
        o->out = j->bins;
        j->bins = NULL;
    }
    if (h->counts) {
        o->cnt = j->cnts;
        j->cnts = NULL;
    }
    return 0;
}

int gr_host_bk_dense(const gr_hbk *h, gr_hbk_out *o, uint64_t *bad)
{
    hbk_job j;
    size_t nk = h->nk;
    uint64_t mx = 0;
    memset(o, 0, sizeof *o);
    if (nk == SIZE_MAX && h->n == 0) {
        nk = 0;
    }
    if (nk == SIZE_MAX && gr_host_bk_tasks(h->n, HBK_COPY_KEYS, h->threads,
                                           hbk_counts(h)) > 1) {
        /* several tasks: the largest key first, a pass of its own */
        const int krc = gr_host_bk_keymax(h->keys, h->kt, h->n, &mx, bad);
        if (krc != 0) {
            return krc == 1 ? 1 : -2;
        }
        nk = (size_t)mx + 1;
    }
    int rc = -1;
    if (hbk_setup(&j, h, nk) != 0) {
        goto out;
    }
    if (j.tasks > 1) {
        gr_par_run(hbk_task, &j, j.tasks, h->threads);
    } else {
        hbk_task(&j, 0);
    }
    *bad = h->n;
    for (size_t t = 0; t < j.tasks; ++t) {
        *bad = j.bad[t] < *bad ? j.bad[t] : *bad;
    }
    if (j.stopped || gr_par_stopped()) {
        rc = -2;
    } else if (*bad < h->n) {
        rc = 1;
    } else if (!j.oom) {
        nk = j.grow ? (h->n ? (size_t)j.kmax + 1 : 0) : nk;
        rc = hbk_finish(&j, nk, o);
    }
out:
    free(j.bins);
    free(j.cnts);
    free(j.bad);
    return rc;
}
