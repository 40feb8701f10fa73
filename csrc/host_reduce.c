/*
 * gpured — the host path (below dispatch), its reductions: gr_host_reduce
 * (results finished from the kernels' states, the row, column and
 * generic layouts, the cut for several threads), and the one-row helpers
 * gr_host_var (var, std, nanmean) and gr_host_count.  The kernels are in
 * host_loops.c and host_minmax.c, the shared glue in host.c.
 */
#include "host_loops.h"
#include "hostpar.h"

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

/* Columns p[0..B) over L rows into st (the column kernel's states), in
 * blocks of about GR_HOST_STOP_BYTES of rows with Ctrl-C's check between
 * (issue 39): each block's fresh states merged in order, as the pieces
 * of several threads (an earlier block wins ties; float sums round in
 * another order).  One call where the rows fit one block. */
static void col_rows(const gr_red_impl *k, const gr_host_op *o,
                     const char *p, size_t B, size_t L, ptrdiff_t es,
                     gr_hstate *st, void *scratch)
{
    const size_t tsize = (size_t)gr_dtypes[o->t].size;
    const size_t R = GR_HOST_STOP_BYTES / (B * tsize) + 1;
    gr_hstate *t;
    if (L <= R || (t = malloc(B * sizeof *t)) == NULL) {
        k->col(p, B, L, es, st, scratch);
        return;
    }
    /* (the kernels write v and i, not flag: merges read it) */
    for (size_t j = 0; j < B; ++j) {
        st[j] = k->init;
    }
    k->col(p, B, R, es, st, scratch);
    for (size_t i0 = R; i0 < L && !gr_par_stopped(); i0 += R) {
        const size_t n = L - i0 < R ? L - i0 : R;
        for (size_t j = 0; j < B; ++j) {
            t[j] = k->init;
        }
        k->col(p + (ptrdiff_t)i0 * es * (ptrdiff_t)tsize, B, n, es, t, scratch);
        for (size_t j = 0; j < B; ++j) {
            if (k->fin == FIN_ARG) {
                t[j].i += (int64_t)i0;
            }
            gr_host_merge(k, o, &st[j], &t[j]);
        }
    }
    free(t);
}

/* Columns m0..m1 of a column layout (seg_stride 1, |es| >= M): the
 * AVX-512 kernels where there are (finished by the kernel: no states,
 * only scratch), else blocks of adjacent segments row by row
 * (col_rows).  Ctrl-C is checked between blocks of columns: an AVX-512
 * call over a few columns runs all their rows (1 GiB: ~0.1 s here). */
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
        for (m = m0; m < m1 && !(m > m0 && gr_par_stopped()); m += W) {
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
        const size_t W = gr_host_col_room(M, &sb, &st, &scratch, &heap);
        for (m = m0; m < m1; m += W) {
            const size_t B = m1 - m < W ? m1 - m : W;
            if (gr_par_stopped()) {
                break; /* (Ctrl-C: the result is dropped) */
            }
            col_rows(k, o, base + m * tsize, B, L, es, st, scratch);
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

/* Whole segments m0..m1 of any layout, one after the other; Ctrl-C's
 * check every `every` rows (about GR_HOST_STOP_BYTES: short rows do not
 * check inside, issue 39). */
static void red_rows(const gr_red_impl *k, const gr_host_op *o,
                     const char *base, size_t m0, size_t m1, size_t L,
                     ptrdiff_t ss, ptrdiff_t es, void *out)
{
    const int tsize = gr_dtypes[o->t].size;
    const size_t every = GR_HOST_STOP_BYTES / (L * (size_t)tsize) + 1;
    size_t m, left = every;
    if (k->fin == FIN_F32W && k->kt == KT_SAME && es == 1 && L <= SHORT_ROW) {
        for (m = m0; m < m1 && !(m > m0 && gr_par_stopped()); m += every) {
            fsumw_rows_f32((const float *)base, m,
                           m1 - m < every ? m1 : m + every, L, ss, (float *)out);
        }
        return;
    }
    for (m = m0; m < m1; ++m) {
        if (--left == 0) {
            left = every;
            if (gr_par_stopped()) {
                return;
            }
        }
        const char *p = base + (ptrdiff_t)m * ss * tsize;
        gr_hstate s = k->init;
        gr_host_red_segment(k, o, p, L, es, 0, &s);
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
 *             order: gr_host_merge, host.c)
 *
 * Merged states give the one-thread answer for integers, min/max,
 * argmin/argmax (first index: an earlier piece wins ties), all/any; float
 * sums differ only in rounding order (double sums of floats, TwoSum
 * merges for compensated sums, as the device's work-groups). */

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
        col_rows(k, a->o, a->base + (ptrdiff_t)i0 * a->es * tsize, a->M,
                 i1 - i0, a->es, st, sb.scratch);
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
            gr_host_red_segment(
                k, a->o,
                a->base + ((ptrdiff_t)m * a->ss + (ptrdiff_t)i0 * a->es) * tsize,
                i1 - i0, a->es, i0, s);
        }
    }
}

/* The call on o->threads threads; 1 if it is not worth it (too few
 * bytes, one thread) or the layout is not cut (then nothing is written),
 * -1 out of memory. */
static int red_par_run(const gr_red_impl *k, const gr_host_op *o,
                       const char *base, size_t M, size_t L, ptrdiff_t ss,
                       ptrdiff_t es, int cols, void *out)
{
    size_t ntasks =
        gr_host_par_tasks(o, M * L * (size_t)gr_dtypes[o->t].size);
    size_t m, j;
    red_par a = {k, o, base, M, L, ss, es, out, cols, 0, 0, NULL};
    if (ntasks == 0) {
        return 1;
    }
    if (cols && M >= 32 * ntasks) {
        /* column ranges, whole vectors of columns each */
        ntasks = gr_host_ranges(M, ntasks, 16, &a.per);
    } else if (cols) {
        /* row ranges of a few columns: the column kernels' states */
        if (k->col == NULL || M > COLB || k->kt != KT_SAME || L < 2 * ntasks) {
            return 1;
        }
        a.P = ntasks = gr_host_ranges(L, ntasks, 1, &a.per);
    } else if (M >= ntasks) {
        ntasks = gr_host_ranges(M, ntasks, 1, &a.per);
    } else {
        /* pieces of each segment, whole cache lines each */
        a.P = gr_host_ranges(L, gr_host_div_up(ntasks, M), 64, &a.per);
        ntasks = M * a.P;
        if (a.P < 2) {
            return 1;
        }
    }
    if (a.P && (a.st = malloc(ntasks * (cols ? M : 1) * sizeof(gr_hstate))) == NULL) {
        return -1;
    }
    gr_par_run(red_task, &a, ntasks, o->threads);
    if (a.P == 0 || gr_par_stopped()) {
        /* (Ctrl-C: skipped pieces left no state; the result is dropped) */
        free(a.st);
        return 0;
    }
    if (cols) {
        /* column j's pieces in order, then the columns' results */
        for (j = 1; j < a.P; ++j) {
            for (m = 0; m < M; ++m) {
                gr_host_merge(k, o, &a.st[m], &a.st[j * M + m]);
            }
        }
        col_finish(k, o, a.st, M, base, L, es, out, 0);
    } else {
        for (m = 0; m < M; ++m) {
            gr_hstate *s = &a.st[m * a.P];
            for (j = 1; j < a.P; ++j) {
                gr_host_merge(k, o, s, &s[j]);
            }
            red_finish(k, o, s, base + (ptrdiff_t)m * ss * gr_dtypes[o->t].size,
                       L, es, out, m);
        }
    }
    free(a.st);
    return 0;
}

/* ------------------------------------------ a few interleaved columns
 * M columns of contiguous rows (elem_stride M, M dividing the lanes
 * kernel's lanes: the real view (n, 2) of a complex array) as one run of
 * M * L elements (k->lanes): blocks of about GR_HOST_STOP_BYTES with
 * Ctrl-C's check between; on several threads, ranges of rows, each with
 * its own M states, merged in order (as the column pieces). */
typedef struct {
    const gr_red_impl *k;
    const char *base;
    size_t M, L, per, tsize;
    gr_hstate *st;
} red_lanes_par;

static void lanes_run(const gr_red_impl *k, const char *p, size_t M,
                      size_t n, size_t tsize, gr_hstate *st)
{
    const size_t blk = (GR_HOST_STOP_BYTES / tsize) / M * M;
    size_t i0;
    for (i0 = 0; i0 < n; i0 += blk) {
        if (i0 > 0 && gr_par_stopped()) {
            return;
        }
        k->lanes(p + i0 * tsize, n - i0 < blk ? n - i0 : blk, M, st);
    }
}

static void lanes_task(void *vp, size_t t)
{
    const red_lanes_par *a = (const red_lanes_par *)vp;
    const size_t i0 = t * a->per, i1 = i0 + a->per < a->L ? i0 + a->per : a->L;
    gr_hstate *st = a->st + t * a->M;
    size_t j;
    for (j = 0; j < a->M; ++j) {
        st[j] = a->k->init;
    }
    if (i0 < i1) {
        lanes_run(a->k, a->base + i0 * a->M * a->tsize, a->M,
                  (i1 - i0) * a->M, a->tsize, st);
    }
}

static int red_lanes(const gr_red_impl *k, const gr_host_op *o,
                     const char *base, size_t M, size_t L, void *out)
{
    const size_t tsize = (size_t)gr_dtypes[o->t].size;
    size_t ntasks = gr_host_par_tasks(o, M * L * tsize), j, m;
    gr_hstate one[8];
    red_lanes_par a = {k, base, M, L, 0, tsize, one};
    if (ntasks > 0) {
        /* whole cache lines of rows a range */
        ntasks = gr_host_ranges(L, ntasks, 64, &a.per);
    }
    if (ntasks < 2) {
        ntasks = 1;
        a.per = L;
    } else if ((a.st = malloc(ntasks * M * sizeof *a.st)) == NULL) {
        return -1;
    }
    if (ntasks == 1) {
        lanes_task(&a, 0);
    } else {
        gr_par_run(lanes_task, &a, ntasks, o->threads);
    }
    if (!gr_par_stopped()) {
        for (j = 1; j < ntasks; ++j) {
            for (m = 0; m < M; ++m) {
                gr_host_merge(k, o, &a.st[m], &a.st[j * M + m]);
            }
        }
        col_finish(k, o, a.st, M, base, L, (ptrdiff_t)M, out, 0);
    }
    if (a.st != one) {
        free(a.st);
    }
    return 0;
}

int gr_host_reduce(const gr_host_op *o, const void *in, size_t M, size_t L,
                   ptrdiff_t seg_stride, ptrdiff_t elem_stride, void *out)
{
    gr_red_impl k;
    const char *base = (const char *)in;
    int cols, rc;
    if (o == NULL || (unsigned)o->t >= GR_NDTYPES ||
        (unsigned)o->r >= GR_NDTYPES || gr_host_red_impl(o, &k) != 0) {
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
    /* a few interleaved columns of contiguous rows: one run */
    if (k.lanes != NULL && k.kt == KT_SAME && M > 1 && M <= 8 &&
        k.lanes_w % (int)M == 0 && seg_stride == 1 &&
        elem_stride == (ptrdiff_t)M) {
        return red_lanes(&k, o, base, M, L, out);
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

static uint64_t count_row(const void *in, gr_dtype t, size_t L,
                          ptrdiff_t es, int valid)
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

/* In blocks of GR_HOST_STOP_BYTES, Ctrl-C's check between (issue 39). */
uint64_t gr_host_count(const void *in, gr_dtype t, size_t L, ptrdiff_t es,
                       int valid)
{
    const size_t isz = (size_t)gr_dtypes[t].size;
    const size_t blk = GR_HOST_STOP_BYTES / isz;
    uint64_t c = 0;
    for (size_t i0 = 0; i0 < L; i0 += blk) {
        const size_t n = L - i0 < blk ? L - i0 : blk;
        c += count_row((const char *)in + (ptrdiff_t)(i0 * isz) * es, t, n,
                       es, valid);
        if (i0 + n < L && gr_par_stopped()) {
            break;
        }
    }
    return c;
}

/* A var pass over a contiguous float row in blocks of
 * GR_HOST_STOP_BYTES, Ctrl-C's check between (issue 39): the blocks'
 * double sums added (a row of one block: the one call's sum). */
static void var_pass(const char *p, gr_dtype t, size_t L, int nan, int sq,
                     double m, double *sum, double *cnt)
{
    const size_t isz = (size_t)gr_dtypes[t].size;
    const size_t blk = GR_HOST_STOP_BYTES / isz;
    double s = 0.0, c = 0.0;
    for (size_t i0 = 0; i0 < L; i0 += blk) {
        const size_t n = L - i0 < blk ? L - i0 : blk;
        double bs, bc;
        if (t == GR_FLOAT32) {
            var_pass_f32((const s_f32 *)(p + i0 * isz), n, nan, sq, m, &bs, &bc);
        } else {
            var_pass_f64((const s_f64 *)(p + i0 * isz), n, nan, sq, m, &bs, &bc);
        }
        s += bs;
        c += bc;
        if (n == blk && gr_par_stopped()) {
            break;
        }
    }
    *sum = s;
    *cnt = c;
}

double gr_host_var(const void *in, gr_dtype t, size_t L, ptrdiff_t es,
                   int nan, double ddof, int mode, double *count)
{
    const char *p = (const char *)in;
    double s = 0.0, q = 0.0, n = 0.0, c = 0.0;
    if (es == 1 && (t == GR_FLOAT32 || t == GR_FLOAT64)) {
        var_pass(p, t, L, nan, 0, 0.0, &s, &n);
        if (mode != 3) {
            var_pass(p, t, L, nan, 1, s / n, &q, &c);
        }
    } else {
        /* one element at a time, compensated (Neumaier): a plain running
         * sum's error grows with L past NumPy's pairwise one (var of 888
         * small int8s: 35 ulp; test_property_examples.py::
         * test_var_int8_host_accuracy) */
        double sc = 0.0, qc = 0.0;
        for (size_t i = 0; i < L && !GR_PAR_STOP_AT(i); ++i) {
            const double x = gr_host_as_double(p, t, (ptrdiff_t)i * es);
            if (!(nan && x != x)) {
                const double u = s + x;
                sc += fabs(s) >= fabs(x) ? (s - u) + x : (x - u) + s;
                s = u;
                n += 1;
            }
        }
        s += sc;
        const double m = s / n;
        for (size_t i = 0; mode != 3 && i < L && !GR_PAR_STOP_AT(i); ++i) {
            const double x = gr_host_as_double(p, t, (ptrdiff_t)i * es);
            if (!(nan && x != x)) {
                const double d = (x - m) * (x - m), u = q + d;
                qc += fabs(q) >= fabs(d) ? (q - u) + d : (d - u) + q;
                q = u;
            }
        }
        q += qc;
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
