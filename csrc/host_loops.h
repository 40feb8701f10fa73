/*
 * gpured — the host layer's private header (host path, below dispatch):
 * the typed loops' vocabulary shared by the host files -- one short name
 * per dtype and its 32-byte vector, NaN tests and identities, a segment's
 * state, TwoSum, the target_clones and AVX-512 switches -- and what the
 * files share: the reduction kernels' picks (gr_red_impl), the chunked
 * fold of one segment, states merged, the thread cut.  Included by
 * host.c, host_loops.c, host_minmax.c, host_reduce.c and host_scan.c
 * only; the layer's face is host_api.h.
 */
#ifndef GPURED_HOST_LOOPS_H
#define GPURED_HOST_LOOPS_H

#include "host_api.h"
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
/* The column kernels' states (B segments side by side): field F of
 * segment j's state lives in lane j % W of vector a[j / W] for the nv =
 * B / W whole vectors, after them in r[j - W * nv]; LOAD before the rows,
 * STORE after them. */
#define COL_STATES_LOAD(a, r, s, F, B, W, nv)                                \
    do {                                                                     \
        for (size_t j_ = 0; j_ < (B); ++j_) {                                \
            if (j_ < (W) * (nv)) {                                           \
                (a)[j_ / (W)][j_ % (W)] = (s)[j_].F;                         \
            } else {                                                         \
                (r)[j_ - (W) * (nv)] = (s)[j_].F;                            \
            }                                                                \
        }                                                                    \
    } while (0)
#define COL_STATES_STORE(a, r, s, F, B, W, nv)                               \
    do {                                                                     \
        for (size_t j_ = 0; j_ < (B); ++j_) {                                \
            (s)[j_].F = j_ < (W) * (nv) ? (a)[j_ / (W)][j_ % (W)]            \
                                        : (r)[j_ - (W) * (nv)];              \
        }                                                                    \
    } while (0)

/* Merge compensated state (v2, x2) into (v, x), as common.cl's gr_merge. */
#define TWOMERGE(T, v, x, v2, x2)                                            \
    do {                                                                     \
        T t_ = (v) + (v2);                                                   \
        T b_ = t_ - (v);                                                     \
        (x) += (x2) + (((v) - (t_ - b_)) + ((v2) - b_));                     \
        (v) = t_;                                                            \
    } while (0)

/* What a kernel reads: the input's own elements, or each element cast to
 * the result type first (NumPy's cast) when that is the kernel's type. */
enum { KT_SAME, KT_F32, KT_F64, KT_U64 };

/* ===================================================== reduction kernels
 * Every rows kernel has one signature: fold p[0..n) (element indices base
 * onward) into state s.  Column kernels fold B adjacent segments
 * (p[j + i*es], j < B, i < L) into states s[0..B), their accumulators in
 * scratch (32-byte aligned, COL_SCRATCH(B) bytes). */
typedef void (*fold_fn)(const void *p, size_t n, size_t base, gr_hstate *s);
typedef void (*col_fn)(const void *p, size_t B, size_t L, ptrdiff_t es,
                       gr_hstate *s, void *scratch);
/* Lanes kernels fold B interleaved columns, p[0..n) one run whose
 * element i is column i % B (B dividing the kernel's lanes), into states
 * s[0..B) (host_loops.c: the real view (n, 2) of complex arrays). */
typedef void (*lanes_fn)(const void *p, size_t n, size_t B, gr_hstate *s);
/* Every column kernel keeps at most 16 bytes per segment (two vectors of
 * 8-byte lanes, or value + index), plus a vector of slack. */
#define COL_SCRATCH(B) (16 * (B) + 64)

/* Vectors of 4 elements cast as the integer and float kernels read them
 * (the reductions', the scans' and var's). */
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

/* The AVX-512 kernels (host_loops.c, host_minmax.c; colz: the column
 * sums), built where the compiler has the intrinsics and target_clones'
 * baseline is not forced; used where the CPU has them (gr_host_have_colz). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GR_HOST_NO_CLONES) && \
    (defined(__clang__) || __GNUC__ >= 8)
#define GR_HAVE_COLZ 1
#include <immintrin.h>

#define GR_TARGET_Z __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))
/* scratch of fcompz_f64 for B columns: v and x, each placed in its page */
#define COLZ_SCRATCH(B) (16 * (B) + 8192 + 512)

typedef void (*colz_fn)(const void *p, size_t B, size_t L, ptrdiff_t es,
                        void *out, void *scratch);

/* 1 where the CPU (and the OS) has AVX-512F, DQ and VL. */
int gr_host_have_colz(void);
#endif

/* Kernel tables indexed by gr_dtype. */
#define BY_DTYPE(P, S)                                                       \
    { P##b##S, P##i8##S, P##u8##S, P##i16##S, P##u16##S, P##i32##S,          \
      P##u32##S, P##i64##S, P##u64##S, P##f32##S, P##f64##S }
#define BY_SIZE(P, S)                                                        \
    { P##u8##S, P##u8##S, P##u8##S, P##u16##S, P##u16##S, P##u32##S,         \
      P##u32##S, P##u64##S, P##u64##S, P##f32##S, P##f64##S }

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
    lanes_fn lanes;   /* NULL, or interleaved columns (lanes_w: lanes)    */
    int lanes_w;
#ifdef GR_HAVE_COLZ
    colz_fn colz;     /* NULL, or a column kernel writing finished results */
#endif
    int kt;           /* KT_*: the kernel's input                        */
    int ksize;        /* bytes of the kernel's input elements            */
    gr_finish_kind fin;
    gr_hstate init;
    int stops;        /* flag set means the segment is decided           */
} gr_red_impl;

/* The kernels of one (op, t, r), in parts by family: add and mul
 * (host_loops.c), min and max, argmin and argmax, all and any
 * (host_minmax.c); k is zeroed with kt KT_SAME, ksize t's, init.i -1
 * (red_impl, host.c).  Each returns 0, or -1 if unsupported. */
int gr_host_sum_impl(const gr_host_op *o, gr_red_impl *k);
int gr_host_minmax_impl(const gr_host_op *o, gr_red_impl *k);
int gr_host_arg_impl(const gr_host_op *o, gr_red_impl *k);
int gr_host_logical_impl(const gr_host_op *o, gr_red_impl *k);
/* The identity of min (the type's highest value) or max (its lowest) of
 * dtype t into *v; -1 for a dtype without one. */
int gr_host_mm_ident(gr_op op, gr_dtype t, gr_val *v);
/* Fold kernels the scans call on sub-blocks (host_loops.c). */
void gr_host_fsumw_f32(const void *vp, size_t n, size_t base, gr_hstate *s);
void gr_host_fcomp_f32(const void *vp, size_t n, size_t base, gr_hstate *s);
void gr_host_fcomp_f64(const void *vp, size_t n, size_t base, gr_hstate *s);

/* host.c: the kernels of (op, t, r) in *k (-1 if unsupported); states
 * merged; the gathered chunks of strided or cast inputs; the column
 * kernels' room; the thread cut. */
int gr_host_red_impl(const gr_host_op *o, gr_red_impl *k);
void gr_host_merge(const gr_red_impl *k, const gr_host_op *o, gr_hstate *a,
                   const gr_hstate *b);
/* dst[i] = element i of (src, sb bytes apart) of dtype t, as kernel type kt
 * (r is the result dtype, for KT_U64).  KT_SAME copies bytes. */
void gr_host_gather(void *dst, int kt, const char *src, ptrdiff_t sb,
                    gr_dtype t, gr_dtype r, size_t n);

/* Room for the column kernels of up to B segments: their states and
 * scratch.  The stack buffer serves up to COLB; wider matrices get one heap
 * block for up to COLB_MAX (whole rows read in order), or COLB if malloc
 * fails.  Returns the block width; *heap is to be freed. */
typedef struct {
    gr_hstate st[COLB];
    v_u64 scratch[COL_SCRATCH(COLB) / sizeof(v_u64) + 1];
} gr_colbuf;

size_t gr_host_col_room(size_t M, gr_colbuf *sb, gr_hstate **st,
                        void **scratch, void **heap);

static inline size_t gr_host_div_up(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

/* Tasks for a call of `bytes` on o->threads threads: one per grain bytes,
 * at most 4 a thread; 0 where it is not cut (one thread, under two). */
size_t gr_host_par_tasks(const gr_host_op *o, size_t bytes);
/* n items cut into about `parts` ranges of a multiple of `align` items:
 * *per items a range (the last one shorter); returns how many ranges. */
size_t gr_host_ranges(size_t n, size_t parts, size_t align, size_t *per);

/* Folds one segment (p, L, es) into s: directly where the kernel can read
 * it (contiguous, no cast), else chunk by chunk through a buffer; blocks
 * of GR_HOST_STOP_BYTES (a power of two of elements) with Ctrl-C's check
 * between (issue 39; the kernels' states carry across calls, as the
 * chunks').  Inline: the rows' loop calls it once a row. */
static inline void gr_host_red_segment(const gr_red_impl *k,
                                       const gr_host_op *o, const char *p,
                                       size_t L, ptrdiff_t es, size_t base,
                                       gr_hstate *s)
{
    const int tsize = gr_dtypes[o->t].size;
    const size_t blk = GR_HOST_STOP_BYTES / (size_t)tsize;
    uint64_t buf[CH];
    size_t i0;
    if (es == 1 && k->kt == KT_SAME) {
        for (i0 = 0;; i0 += blk) {
            const size_t n = L - i0 < blk ? L - i0 : blk;
            k->fold(p + i0 * (size_t)tsize, n, base + i0, s);
            if (L - i0 <= blk || (k->stops && s->flag) || gr_par_stopped()) {
                return;
            }
        }
    }
    /* chunks of CH: gather (and cast), fold, stop once decided */
    for (i0 = 0; i0 < L && !(k->stops && s->flag); i0 += CH) {
        const size_t n = L - i0 < CH ? L - i0 : CH;
        if (i0 % blk == 0 && i0 > 0 && gr_par_stopped()) {
            return;
        }
        gr_host_gather(buf, k->kt, p + (ptrdiff_t)i0 * es * tsize,
                       es * tsize, o->t, o->r, n);
        k->fold(buf, n, base + i0, s);
    }
}

#endif
