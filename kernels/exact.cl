/*
 * gpured — exact sums on the device (sum/mean/nansum/nanmean with
 * exact=True): the device's half of csrc/host_exact.c, in the same format,
 * so that every device and the host give the same bits.
 *
 * The exact value is a long accumulator: GR_SACC_N signed 64-bit digits of
 * 32 bits each, bit 0 worth 2^-1074 (the smallest double).  A double goes
 * into at most three digits exactly (gr_sacc_add_local: atomic adds on a
 * work-group's copy in local memory).
 *
 * Pass 1, gr_exact_part (grid: groups x segments): each work-item keeps a
 * floating-point expansion of GR_EX_K doubles (TwoSum, error-free); only the
 * error that leaves its last part goes to the work-group's accumulator,
 * which on ordinary data is rare, so the pass reads at memory speed.
 * Values that could carry the expansion out of the finite range
 * (infinities, NaN, |x| > 2^1000) go to the accumulator directly.  At the
 * end the expansions are merged in a tree (the same TwoSums), the last
 * one added to the accumulator, and the group writes its digits, its
 * non-finite flags and its count of non-NaN elements:
 *
 *   part[(m * G + g) * GR_EX_PART + j]   j < GR_SACC_N: digits
 *                                      GR_SACC_N: flags (1 NaN, 2 +inf, 4 -inf)
 *                                      GR_SACC_N + 1: non-NaN elements
 *
 * Pass 2, gr_exact_final (a work-group per segment): the groups' digits
 * summed (and sum's initial= added as one more element), carries moved up, the magnitude rounded once to GR_EX_R (to
 * nearest, ties to even, GR_EX_R's precision and subnormal range); mean: the
 * exact value divided by the count first, the remainder kept as the
 * sticky bit.
 *
 * Set by the host (csrc/exact.c), prefixed GR_EX_ so that common.cl's own
 * macros (set to a plain double sum) keep their meaning: GR_EX_T (float or
 * double), GR_EX_R (float or double), GR_EX_WG (work-group size, a power of two), GR_EX_K (expansion
 * length), GR_EX_NAN (1: NaNs left out, nansum/nanmean), GR_EX_MEAN (1: divide
 * by the count), GR_EX_PREC and GR_EX_LSB (GR_EX_R's precision and the position of
 * its smallest subnormal's bit above 2^-1074), GR_EX_RMAX (its largest finite
 * value), GR_EX_U (loads in flight a work-item).  Needs fp64 and 64-bit
 * integer atomics.
 */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#define GR_SACC_N 68
#define GR_EX_PART (GR_SACC_N + 2)
#define GR_EX_F_NAN 1
#define GR_EX_F_PINF 2
#define GR_EX_F_NINF 4

/* TwoSum (Knuth): s + e == a + b exactly. */
#define GR_EX_TWO_SUM(a, b, s, e)                                               \
    do {                                                                     \
        const double s_ = (a) + (b);                                         \
        const double bb_ = s_ - (a);                                         \
        (e) = ((a) - (s_ - bb_)) + ((b) - bb_);                              \
        (s) = s_;                                                            \
    } while (0)

/* x into the work-group's accumulator, exactly; non-finite: a flag. */
void gr_sacc_add_local(volatile __local long *acc, volatile __local int *flags,
                       double x)
{
    const ulong b = as_ulong(x);
    const uint e = (uint)(b >> 52) & 0x7ffu;
    ulong m = b & 0xfffffffffffffUL;
    if (e == 0x7ffu) {
        atomic_or(flags, m != 0 ? GR_EX_F_NAN : (b >> 63) ? GR_EX_F_NINF : GR_EX_F_PINF);
        return;
    }
    if (m == 0 && e == 0) {
        return;
    }
    uint p = 0;
    if (e != 0) {
        m |= 1UL << 52;
        p = e - 1;
    }
    const uint i = p >> 5, sh = p & 31u;
    const ulong hi = m >> (32 - sh);
    long d0 = (long)((m << sh) & 0xffffffffUL);
    long d1 = (long)(hi & 0xffffffffUL);
    long d2 = (long)(hi >> 32);
    if (b >> 63) {
        d0 = -d0, d1 = -d1, d2 = -d2;
    }
    if (d0) {
        atom_add(acc + i, d0);
    }
    if (d1) {
        atom_add(acc + i + 1, d1);
    }
    if (d2) {
        atom_add(acc + i + 2, d2);
    }
}

/* One value into an expansion of GR_EX_K parts; what leaves the last part
 * goes to the accumulator. */
#define GR_EX_FPE_ADD(c, x, acc, flags)                                         \
    do {                                                                     \
        double e_ = (x);                                                     \
        for (int k_ = 0; k_ < GR_EX_K; ++k_) {                                  \
            GR_EX_TWO_SUM(c[k_], e_, c[k_], e_);                                \
        }                                                                    \
        if (e_ != 0.0) {                                                     \
            gr_sacc_add_local(acc, flags, e_);                               \
        }                                                                    \
    } while (0)

/* One element: NaN left out (nansum), huge or non-finite values straight
 * into the accumulator, the rest into the expansion. */
#if GR_EX_NAN
#define GR_EX_SKIP(x) isnan(x)
#else
#define GR_EX_SKIP(x) 0
#endif
#define GR_EX_TAKE(x)                                                        \
    do {                                                                     \
        if (!GR_EX_SKIP(x)) {                                                \
            ++kept;                                                          \
            if (fabs(x) > 0x1p1000) { /* and infinities, NaN */              \
                gr_sacc_add_local(acc, &flags, (x));                         \
            } else {                                                         \
                GR_EX_FPE_ADD(c, (x), acc, &flags);                          \
            }                                                                \
        }                                                                    \
    } while (0)

__kernel __attribute__((reqd_work_group_size(GR_EX_WG, 1, 1)))
void gr_exact_part(__global const GR_EX_T *src, ulong base, ulong L, long ss,
                   long es, __global long *part)
{
    __local long acc[GR_SACC_N];
    __local int flags;
    __local ulong count;
    __local double tree[GR_EX_K][GR_EX_WG];
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), G = get_num_groups(0);
    const ulong m = get_group_id(1);
    for (uint j = lid; j < GR_SACC_N; j += GR_EX_WG) {
        acc[j] = 0;
    }
    if (lid == 0) {
        flags = 0;
        count = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 1. the work-item's elements into its expansion */
    double c[GR_EX_K];
    for (int k = 0; k < GR_EX_K; ++k) {
        c[k] = 0.0;
    }
    ulong kept = 0;
    __global const GR_EX_T *p = src + base + (long)m * ss;
    const ulong step = G * GR_EX_WG;
    ulong i = g * GR_EX_WG + lid;
    /* GR_EX_U loads in flight before the folds (the loads' latency, not
     * the TwoSums, bounds this loop) */
    for (; i + (GR_EX_U - 1) * step < L; i += GR_EX_U * step) {
        double x[GR_EX_U];
        for (int u = 0; u < GR_EX_U; ++u) {
            x[u] = (double)p[(long)(i + u * step) * es];
        }
        for (int u = 0; u < GR_EX_U; ++u) {
            GR_EX_TAKE(x[u]);
        }
    }
    for (; i < L; i += step) {
        const double x = (double)p[(long)i * es];
        GR_EX_TAKE(x);
    }

    /* 2. the group's expansions merged in a tree, the last one added */
    for (int k = 0; k < GR_EX_K; ++k) {
        tree[k][lid] = c[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = GR_EX_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            for (int k = 0; k < GR_EX_K; ++k) {
                GR_EX_FPE_ADD(c, tree[k][lid + s], acc, &flags);
            }
            for (int k = 0; k < GR_EX_K; ++k) {
                tree[k][lid] = c[k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        for (int k = 0; k < GR_EX_K; ++k) {
            gr_sacc_add_local(acc, &flags, c[k]);
        }
    }
    if (kept) {
        atom_add(&count, kept);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 3. the group's digits, flags and count out */
    __global long *out = part + (m * G + g) * GR_EX_PART;
    for (uint j = lid; j < GR_SACC_N; j += GR_EX_WG) {
        out[j] = acc[j];
    }
    if (lid == 0) {
        out[GR_SACC_N] = flags;
        out[GR_SACC_N + 1] = (long)count;
    }
}

/* Bit k of the magnitude u (digits of 32 bits). */
#define GR_EX_BIT(u, k) ((k) < 0 ? 0u : ((u)[(k) >> 5] >> ((k) & 31)) & 1u)

#define GR_EX_XD 2 /* extra low digits: the quotient's guard bits (mean) */
#define GR_EX_UN (GR_SACC_N + GR_EX_XD)

/* u / div in place, div < 2^32: digits from the top; 1 if a remainder. */
int gr_divide_small(uint *u, ulong div)
{
    ulong r = 0;
    for (int i = GR_EX_UN - 1; i >= 0; --i) {
        const ulong cur = (r << 32) | u[i];
        u[i] = (uint)(cur / div);
        r = cur % div;
    }
    return r != 0;
}

/* u / div in place for any div: one bit at a time (segments of 2^32
 * elements and more: rare, and then long). */
int gr_divide_bits(uint *u, ulong div)
{
    ulong r = 0;
    for (int k = 32 * GR_EX_UN - 1; k >= 0; --k) {
        const ulong top = r >> 63;
        r = (r << 1) | GR_EX_BIT(u, k);
        u[k >> 5] &= ~(1u << (k & 31));
        if (top || r >= div) {
            r -= div;
            u[k >> 5] |= 1u << (k & 31);
        }
    }
    return r != 0;
}

/* The exact value (digits, normalised in place) rounded once to GR_EX_R;
 * div: the mean's count (1: a sum). */
GR_EX_R gr_sacc_round(long *d, int fl, ulong div)
{
    uint u[GR_EX_UN];
    int neg = 0, sticky = 0;
    if ((fl & GR_EX_F_NAN) || (fl & (GR_EX_F_PINF | GR_EX_F_NINF)) == (GR_EX_F_PINF | GR_EX_F_NINF)) {
        return (GR_EX_R)NAN;
    }
    if (fl) {
        return (fl & GR_EX_F_PINF) ? (GR_EX_R)INFINITY : -(GR_EX_R)INFINITY;
    }
    for (int i = 0; i < GR_SACC_N - 1; ++i) { /* carries up */
        const long cy = d[i] >> 32;
        d[i] -= cy * (1L << 32);
        d[i + 1] += cy;
    }
    if (d[GR_SACC_N - 1] < 0) { /* the magnitude */
        neg = 1;
        long cy = 0;
        for (int i = 0; i < GR_SACC_N; ++i) {
            const long v = -d[i] + cy;
            cy = v >> 32;
            d[i] = v - cy * (1L << 32);
        }
    }
    for (int i = 0; i < GR_EX_XD; ++i) {
        u[i] = 0;
    }
    for (int i = 0; i < GR_SACC_N; ++i) {
        u[i + GR_EX_XD] = (uint)d[i];
    }
    if (div > 1) {
        sticky = div >> 32 ? gr_divide_bits(u, div) : gr_divide_small(u, div);
    }
    long top = -1;
    for (int i = GR_EX_UN - 1; i >= 0 && top < 0; --i) {
        if (u[i]) {
            top = 32L * i + 31 - clz(u[i]);
        }
    }
    if (top < 0) {
        return neg ? -(GR_EX_R)0.0 : (GR_EX_R)0.0;
    }
    long low = top - (GR_EX_PREC - 1);
    if (low < GR_EX_LSB + 32L * GR_EX_XD) {
        low = GR_EX_LSB + 32L * GR_EX_XD;
    }
    ulong mant = 0;
    for (long k = top; k >= low; --k) {
        mant = (mant << 1) | GR_EX_BIT(u, k);
    }
    int rest = sticky;
    for (long k = 0; k < low - 1 && !rest; ++k) {
        rest = GR_EX_BIT(u, k);
    }
    if (GR_EX_BIT(u, low - 1) && (rest || (mant & 1u))) {
        ++mant;
    }
    const double r = ldexp((double)mant, (int)(low - 32L * GR_EX_XD - 1074));
    if (r > GR_EX_RMAX) {
        return neg ? -(GR_EX_R)INFINITY : (GR_EX_R)INFINITY;
    }
    return (GR_EX_R)(neg ? -r : r);
}

/* Pass 2: segment m's G groups summed and rounded into out[m]. */
__kernel __attribute__((reqd_work_group_size(GR_EX_WG, 1, 1)))
void gr_exact_final(__global const long *part, ulong G, ulong L,
                    __global GR_EX_R *out, ulong out_off, int has_init,
                    double init)
{
    __local long d[GR_EX_PART];
    __local int fl;
    const uint lid = get_local_id(0);
    const ulong m = get_group_id(0);
    __global const long *p = part + m * G * GR_EX_PART;
    for (uint j = lid; j < GR_EX_PART; j += GR_EX_WG) {
        long s = 0;
        for (ulong g = 0; g < G; ++g) {
            s = j == GR_SACC_N ? (s | p[g * GR_EX_PART + j]) : s + p[g * GR_EX_PART + j];
        }
        d[j] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        fl = (int)d[GR_SACC_N];
        if (has_init) { /* sum's initial= is one more element */
            gr_sacc_add_local(d, &fl, init);
        }
        long dig[GR_SACC_N];
        for (int i = 0; i < GR_SACC_N; ++i) {
            dig[i] = d[i];
        }
        const ulong n = GR_EX_MEAN ? (ulong)d[GR_SACC_N + 1] : 1;
        out[out_off + m] = GR_EX_MEAN && n == 0 ? (GR_EX_R)NAN
                                                : gr_sacc_round(dig, fl, n);
    }
}
