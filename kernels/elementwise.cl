/*
 * gpured — elementwise operations on device arrays (NumPy's ufuncs).
 *
 * gr_elementwise writes one element of the result per work-item:
 *
 *   dst[i] = (D) op((I0)in0[i], (I1)in1[i], (I2)in2[i])
 *
 * with NumPy's loop types (I0.., O: the ufunc's resolved loop, chosen on
 * the host by NumPy's own type resolution) and broadcasting done by the
 * host as element strides (0 along a broadcast axis).  Each operand is
 * read one of four ways, fixed at build time (GR_K0.. / GR_KD):
 *
 *   GR_EW_CONTIG   C-contiguous with the result's shape: element gid
 *   GR_EW_STRIDED  any strides: gid split over GR_ND dimensions
 *   GR_EW_VALUE    a scalar, passed by value in its loop type (v0..)
 *   GR_EW_ONE      one element broadcast everywhere (a 0-d array)
 *
 * so the common case (contiguous operands, scalars) does no index
 * arithmetic, and the N-d split is compiled only where a view needs it.
 *
 * Integer semantics are NumPy's: wraparound (computed in the unsigned
 * twin, GR_IU, as signed overflow is undefined in C), floor_divide and
 * remainder taking the divisor's sign, division by zero giving 0, shifts
 * past the width giving 0 or -1.  Floats: IEEE (NaN compares false,
 * maximum/minimum propagate NaN), floor_divide/remainder as NumPy's
 * npy_divmod.
 *
 * Set by the host (csrc/elementwise.c): GR_EOP (a GR_EW_* code below),
 * GR_NIN, GR_S0..2 (storage types), GR_I0..2 (loop input types), GR_O
 * (loop output type), GR_D (destination storage), GR_K0..2, GR_KD,
 * GR_ND, GR_IT (the arithmetic type: I0, where's I1), GR_IU (its
 * unsigned twin), GR_IFLOAT, GR_ISIGNED, GR_IBOOL,
 * GR_IBITS (of I0), GR_MIXED (1: I0 signed and I1 unsigned 64-bit, 2: the
 * reverse; comparisons only), GR_D_BOOL, GR_D_NARROW.
 */
#define GR_EW_CONTIG  0
#define GR_EW_STRIDED 1
#define GR_EW_VALUE   2
#define GR_EW_ONE     3

/* Operator codes: the same numbers as csrc/elementwise.c's table. */
#define GR_EW_ADD 1
#define GR_EW_SUB 2
#define GR_EW_MUL 3
#define GR_EW_DIV 4
#define GR_EW_FLOORDIV 5
#define GR_EW_REM 6
#define GR_EW_POW 7
#define GR_EW_EQ 8
#define GR_EW_NE 9
#define GR_EW_LT 10
#define GR_EW_LE 11
#define GR_EW_GT 12
#define GR_EW_GE 13
#define GR_EW_AND 14
#define GR_EW_OR 15
#define GR_EW_XOR 16
#define GR_EW_LAND 17
#define GR_EW_LOR 18
#define GR_EW_LXOR 19
#define GR_EW_MAX 20
#define GR_EW_MIN 21
#define GR_EW_FMAX 22
#define GR_EW_FMIN 23
#define GR_EW_ATAN2 24
#define GR_EW_HYPOT 25
#define GR_EW_COPYSIGN 26
#define GR_EW_FMOD 27
#define GR_EW_LSHIFT 28
#define GR_EW_RSHIFT 29
#define GR_EW_NEG 40
#define GR_EW_POS 41
#define GR_EW_ABS 42
#define GR_EW_INVERT 43
#define GR_EW_LNOT 44
#define GR_EW_SQRT 45
#define GR_EW_EXP 46
#define GR_EW_LOG 47
#define GR_EW_LOG2 48
#define GR_EW_LOG10 49
#define GR_EW_SIN 50
#define GR_EW_COS 51
#define GR_EW_TAN 52
#define GR_EW_TANH 53
#define GR_EW_ASIN 54
#define GR_EW_ACOS 55
#define GR_EW_ATAN 56
#define GR_EW_SINH 57
#define GR_EW_COSH 58
#define GR_EW_ASINH 59
#define GR_EW_ACOSH 60
#define GR_EW_ATANH 61
#define GR_EW_EXP2 62
#define GR_EW_EXPM1 63
#define GR_EW_LOG1P 64
#define GR_EW_FLOOR 65
#define GR_EW_CEIL 66
#define GR_EW_RINT 67
#define GR_EW_TRUNC 68
#define GR_EW_ISNAN 69
#define GR_EW_ISINF 70
#define GR_EW_ISFINITE 71
#define GR_EW_SIGNBIT 72
#define GR_EW_SQUARE 73
#define GR_EW_SIGN 74
#define GR_EW_CBRT 75
#define GR_EW_RECIP 76
#define GR_EW_WHERE 90
#define GR_EW_TAKE 91 /* out[i] = table[idx[i]] (gpured.aggregate's gather) */
#define GR_EW_TAKE_SQDEV 92 /* out[i] = (x[i] - table[idx[i]])**2 (aggregate's var) */

typedef GR_IT gr_t; /* the loop's input type (where: x's and y's) */

/* Wrapping integer arithmetic through the unsigned twin. */
#define GR_W(op, a, b) ((gr_t)((GR_IU)(a) op (GR_IU)(b)))

#if GR_IFLOAT
/* NumPy's npy_divmod: the quotient floored and snapped to an integer, the
 * remainder with the divisor's sign; b == 0 gives a/b and fmod's NaN. */
inline gr_t gr_divmod(gr_t a, gr_t b, gr_t *modulus)
{
    gr_t mod = fmod(a, b);
    if (b == (gr_t)0) {
        *modulus = mod;
        return a / b;
    }
    gr_t div = (a - mod) / b;
    if (mod != (gr_t)0) {
        if ((b < (gr_t)0) != (mod < (gr_t)0)) {
            mod += b;
            div -= (gr_t)1;
        }
    } else {
        mod = copysign((gr_t)0, b);
    }
    gr_t fl;
    if (div != (gr_t)0) {
        fl = floor(div);
        if (div - fl > (gr_t)0.5) {
            fl += (gr_t)1;
        }
    } else {
        fl = copysign((gr_t)0, a / b);
    }
    *modulus = mod;
    return fl;
}
#else
/* Integer floor division and remainder (Python's), 0 for a zero divisor;
 * MIN // -1 wraps to MIN and MIN % -1 is 0, as NumPy gives. */
inline gr_t gr_floordiv(gr_t a, gr_t b)
{
    if (b == (gr_t)0) {
        return (gr_t)0;
    }
#if GR_ISIGNED
    if (b == (gr_t)-1) {
        return GR_W(-, 0, a);
    }
    gr_t q = a / b;
    if (((a < 0) != (b < 0)) && q * b != a) {
        q -= 1;
    }
    return q;
#else
    return a / b;
#endif
}

inline gr_t gr_rem(gr_t a, gr_t b)
{
#if GR_ISIGNED
    if (b == (gr_t)0 || b == (gr_t)-1) {
        return (gr_t)0;
    }
    gr_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) {
        r += b;
    }
    return r;
#else
    return b == (gr_t)0 ? (gr_t)0 : a % b;
#endif
}

inline gr_t gr_fmod_int(gr_t a, gr_t b)
{
#if GR_ISIGNED
    if (b == (gr_t)-1) {
        return (gr_t)0;
    }
#endif
    return b == (gr_t)0 ? (gr_t)0 : a % b;
}

/* Powers by squaring, wrapping; negative exponents never get here (the
 * host raises NumPy's ValueError first). */
inline gr_t gr_ipow(gr_t a, gr_t b)
{
    GR_IU r = 1, x = (GR_IU)a;
    GR_IU e = (GR_IU)b;
#if GR_ISIGNED
    if (b < 0) {
        return (gr_t)0;
    }
#endif
    while (e != 0) {
        if (e & 1) {
            r *= x;
        }
        x *= x;
        e >>= 1;
    }
    return (gr_t)r;
}

inline gr_t gr_shift(gr_t a, gr_t b, int left)
{
    /* NumPy: a shift by the width or more (or a negative one) empties the
     * value: 0, or -1 for a right shift of a negative one. */
    if ((ulong)(long)b >= (ulong)GR_IBITS) {
#if GR_ISIGNED
        return left ? (gr_t)0 : (a < 0 ? (gr_t)-1 : (gr_t)0);
#else
        return (gr_t)0;
#endif
    }
    return left ? (gr_t)((GR_IU)a << (GR_IU)b) : (gr_t)(a >> b);
}
#endif

/* Comparisons of int64 with uint64 (NumPy's mixed loops): exact. */
#if GR_MIXED == 1
#define GR_LT(a, b) ((a) < 0 || (ulong)(a) < (b))
#define GR_LE(a, b) ((a) < 0 || (ulong)(a) <= (b))
#define GR_EQ(a, b) ((a) >= 0 && (ulong)(a) == (b))
#define GR_GT(a, b) ((a) >= 0 && (ulong)(a) > (b))
#define GR_GE(a, b) ((a) >= 0 && (ulong)(a) >= (b))
#elif GR_MIXED == 2
#define GR_LT(a, b) ((b) >= 0 && (a) < (ulong)(b))
#define GR_LE(a, b) ((b) >= 0 && (a) <= (ulong)(b))
#define GR_EQ(a, b) ((b) >= 0 && (a) == (ulong)(b))
#define GR_GT(a, b) ((b) < 0 || (a) > (ulong)(b))
#define GR_GE(a, b) ((b) < 0 || (a) >= (ulong)(b))
#else
#define GR_LT(a, b) ((a) < (b))
#define GR_LE(a, b) ((a) <= (b))
#define GR_EQ(a, b) ((a) == (b))
#define GR_GT(a, b) ((a) > (b))
#define GR_GE(a, b) ((a) >= (b))
#endif

#if GR_IFLOAT
#define GR_ARITH(op, a, b) ((a) op (b))
#elif GR_IBOOL
#define GR_ARITH(op, a, b) ((gr_t)((a) op (b)))
#else
#define GR_ARITH(op, a, b) GR_W(op, a, b)
#endif

/* The operator, on loop-typed values; the result converts to GR_O. */
#if GR_EOP == GR_EW_ADD
#if GR_IBOOL
#define GR_F(a, b, c) ((a) || (b))
#else
#define GR_F(a, b, c) GR_ARITH(+, a, b)
#endif
#elif GR_EOP == GR_EW_SUB
#define GR_F(a, b, c) GR_ARITH(-, a, b)
#elif GR_EOP == GR_EW_MUL
#if GR_IBOOL
#define GR_F(a, b, c) ((a) && (b))
#else
#define GR_F(a, b, c) GR_ARITH(*, a, b)
#endif
#elif GR_EOP == GR_EW_DIV
#define GR_F(a, b, c) ((a) / (b))
#elif GR_EOP == GR_EW_FLOORDIV
#if GR_IFLOAT
#define GR_F(a, b, c) gr_divmod(a, b, &gr_m)
#else
#define GR_F(a, b, c) gr_floordiv(a, b)
#endif
#elif GR_EOP == GR_EW_REM
#if GR_IFLOAT
#define GR_F(a, b, c) (gr_divmod(a, b, &gr_m), gr_m)
#else
#define GR_F(a, b, c) gr_rem(a, b)
#endif
#elif GR_EOP == GR_EW_FMOD
#if GR_IFLOAT
#define GR_F(a, b, c) fmod(a, b)
#else
#define GR_F(a, b, c) gr_fmod_int(a, b)
#endif
#elif GR_EOP == GR_EW_POW
#if GR_IFLOAT
#define GR_F(a, b, c) pow(a, b)
#else
#define GR_F(a, b, c) gr_ipow(a, b)
#endif
#elif GR_EOP == GR_EW_EQ
#define GR_F(a, b, c) GR_EQ(a, b)
#elif GR_EOP == GR_EW_NE
#define GR_F(a, b, c) (!GR_EQ(a, b))
#elif GR_EOP == GR_EW_LT
#define GR_F(a, b, c) GR_LT(a, b)
#elif GR_EOP == GR_EW_LE
#define GR_F(a, b, c) GR_LE(a, b)
#elif GR_EOP == GR_EW_GT
#define GR_F(a, b, c) GR_GT(a, b)
#elif GR_EOP == GR_EW_GE
#define GR_F(a, b, c) GR_GE(a, b)
#elif GR_EOP == GR_EW_AND
#define GR_F(a, b, c) ((a) & (b))
#elif GR_EOP == GR_EW_OR
#define GR_F(a, b, c) ((a) | (b))
#elif GR_EOP == GR_EW_XOR
#define GR_F(a, b, c) ((a) ^ (b))
#elif GR_EOP == GR_EW_LAND
#define GR_F(a, b, c) ((a) != (gr_t)0 && (b) != (gr_t)0)
#elif GR_EOP == GR_EW_LOR
#define GR_F(a, b, c) ((a) != (gr_t)0 || (b) != (gr_t)0)
#elif GR_EOP == GR_EW_LXOR
#define GR_F(a, b, c) (((a) != (gr_t)0) != ((b) != (gr_t)0))
#elif GR_EOP == GR_EW_MAX
#if GR_IFLOAT
#define GR_F(a, b, c) (((a) >= (b) || isnan(a)) ? (a) : (b))
#else
#define GR_F(a, b, c) ((a) >= (b) ? (a) : (b))
#endif
#elif GR_EOP == GR_EW_MIN
#if GR_IFLOAT
#define GR_F(a, b, c) (((a) <= (b) || isnan(a)) ? (a) : (b))
#else
#define GR_F(a, b, c) ((a) <= (b) ? (a) : (b))
#endif
#elif GR_EOP == GR_EW_FMAX && GR_IFLOAT
#define GR_F(a, b, c) fmax(a, b)
#elif GR_EOP == GR_EW_FMAX
#define GR_F(a, b, c) ((a) >= (b) ? (a) : (b))
#elif GR_EOP == GR_EW_FMIN && GR_IFLOAT
#define GR_F(a, b, c) fmin(a, b)
#elif GR_EOP == GR_EW_FMIN
#define GR_F(a, b, c) ((a) <= (b) ? (a) : (b))
#elif GR_EOP == GR_EW_ATAN2
#define GR_F(a, b, c) atan2(a, b)
#elif GR_EOP == GR_EW_HYPOT
#define GR_F(a, b, c) hypot(a, b)
#elif GR_EOP == GR_EW_COPYSIGN
#define GR_F(a, b, c) copysign(a, b)
#elif GR_EOP == GR_EW_LSHIFT
#define GR_F(a, b, c) gr_shift(a, b, 1)
#elif GR_EOP == GR_EW_RSHIFT
#define GR_F(a, b, c) gr_shift(a, b, 0)
#elif GR_EOP == GR_EW_NEG
#if GR_IFLOAT && GR_IBITS == 64
/* the sign bit flipped: -0.0 (not 0 - 0.0), and a NaN's sign too, as
 * NumPy's; NVIDIA's neg.f32/f64 gives an unspecified NaN for a NaN
 * (test_elementwise.py::test_nan_inf on the H200) */
#define GR_F(a, b, c) as_double(as_ulong((double)(a)) ^ 0x8000000000000000UL)
#elif GR_IFLOAT
#define GR_F(a, b, c) as_float(as_uint((float)(a)) ^ 0x80000000u)
#else
#define GR_F(a, b, c) GR_ARITH(-, 0, a)
#endif
#elif GR_EOP == GR_EW_POS
#define GR_F(a, b, c) (a)
#elif GR_EOP == GR_EW_ABS
#if GR_IFLOAT
#define GR_F(a, b, c) fabs(a)
#elif GR_ISIGNED
#define GR_F(a, b, c) ((a) < 0 ? GR_W(-, 0, a) : (a))
#else
#define GR_F(a, b, c) (a)
#endif
#elif GR_EOP == GR_EW_INVERT
#if GR_IBOOL
#define GR_F(a, b, c) (!(a))
#else
#define GR_F(a, b, c) (~(a))
#endif
#elif GR_EOP == GR_EW_LNOT
#define GR_F(a, b, c) ((a) == (gr_t)0)
#elif GR_EOP == GR_EW_SQRT
#define GR_F(a, b, c) sqrt(a)
#elif GR_EOP == GR_EW_EXP
#define GR_F(a, b, c) exp(a)
#elif GR_EOP == GR_EW_LOG
#define GR_F(a, b, c) log(a)
#elif GR_EOP == GR_EW_LOG2
#define GR_F(a, b, c) log2(a)
#elif GR_EOP == GR_EW_LOG10
#define GR_F(a, b, c) log10(a)
#elif GR_EOP == GR_EW_SIN
#define GR_F(a, b, c) sin(a)
#elif GR_EOP == GR_EW_COS
#define GR_F(a, b, c) cos(a)
#elif GR_EOP == GR_EW_TAN
#define GR_F(a, b, c) tan(a)
#elif GR_EOP == GR_EW_TANH
#define GR_F(a, b, c) tanh(a)
#elif GR_EOP == GR_EW_ASIN
#define GR_F(a, b, c) asin(a)
#elif GR_EOP == GR_EW_ACOS
#define GR_F(a, b, c) acos(a)
#elif GR_EOP == GR_EW_ATAN
#define GR_F(a, b, c) atan(a)
#elif GR_EOP == GR_EW_SINH
#define GR_F(a, b, c) sinh(a)
#elif GR_EOP == GR_EW_COSH
#define GR_F(a, b, c) cosh(a)
#elif GR_EOP == GR_EW_ASINH
#define GR_F(a, b, c) asinh(a)
#elif GR_EOP == GR_EW_ACOSH
#define GR_F(a, b, c) acosh(a)
#elif GR_EOP == GR_EW_ATANH
#define GR_F(a, b, c) atanh(a)
#elif GR_EOP == GR_EW_EXP2
#define GR_F(a, b, c) exp2(a)
#elif GR_EOP == GR_EW_EXPM1
#define GR_F(a, b, c) expm1(a)
#elif GR_EOP == GR_EW_LOG1P
#define GR_F(a, b, c) log1p(a)
#elif GR_EOP == GR_EW_CBRT
#define GR_F(a, b, c) cbrt(a)
#elif GR_EOP == GR_EW_RECIP
#define GR_F(a, b, c) ((gr_t)1 / (a))
#elif GR_EOP == GR_EW_FLOOR
#if GR_IFLOAT
#define GR_F(a, b, c) floor(a)
#else
#define GR_F(a, b, c) (a)
#endif
#elif GR_EOP == GR_EW_CEIL
#if GR_IFLOAT
#define GR_F(a, b, c) ceil(a)
#else
#define GR_F(a, b, c) (a)
#endif
#elif GR_EOP == GR_EW_RINT
#if GR_IFLOAT
#define GR_F(a, b, c) rint(a)
#else
#define GR_F(a, b, c) (a)
#endif
#elif GR_EOP == GR_EW_TRUNC
#if GR_IFLOAT
#define GR_F(a, b, c) trunc(a)
#else
#define GR_F(a, b, c) (a)
#endif
#elif GR_EOP == GR_EW_ISNAN
#if GR_IFLOAT
#define GR_F(a, b, c) isnan(a)
#else
#define GR_F(a, b, c) 0
#endif
#elif GR_EOP == GR_EW_ISINF
#if GR_IFLOAT
#define GR_F(a, b, c) isinf(a)
#else
#define GR_F(a, b, c) 0
#endif
#elif GR_EOP == GR_EW_ISFINITE
#if GR_IFLOAT
#define GR_F(a, b, c) isfinite(a)
#else
#define GR_F(a, b, c) 1
#endif
#elif GR_EOP == GR_EW_SIGNBIT
#define GR_F(a, b, c) signbit(a)
#elif GR_EOP == GR_EW_SQUARE
#define GR_F(a, b, c) GR_ARITH(*, a, a)
#elif GR_EOP == GR_EW_SIGN
#if GR_IFLOAT
#define GR_F(a, b, c) (isnan(a) ? (a) : (gr_t)(((a) > 0) - ((a) < 0)))
#else
#define GR_F(a, b, c) ((gr_t)(((a) > 0) - ((a) < 0)))
#endif
#elif GR_EOP == GR_EW_WHERE
/* where(cond, x, y): the condition is operand 0 (bool), x and y 1 and 2 */
#define GR_F(a, b, c) ((a) ? (b) : (c))
#elif GR_EOP == GR_EW_TAKE
/* take(idx, table): operand 0 the indices (long), 1 a contiguous 1-D
 * table read at o1 + idx; the caller keeps every index in range */
#define GR_F(a, b, c) (b)
#elif GR_EOP == GR_EW_TAKE_SQDEV
/* take_sqdev(idx, table, x): the squared deviation of x from its group's
 * value (var's second pass in one kernel: gather, subtract, square) */
#define GR_F(a, b, c) GR_ARITH(*, GR_ARITH(-, c, b), GR_ARITH(-, c, b))
#endif

#if GR_D_BOOL
#define GR_STORE(x) ((GR_D)((x) != (GR_O)0))
#elif GR_D_NARROW
#define GR_STORE(x) ((GR_D)(long)(x))
#else
#define GR_STORE(x) ((GR_D)(x))
#endif

/* Where operand k's element of work-item gid lies (elements from p). */
#define GR_AT(K, o, s) \
    ((K) == GR_EW_CONTIG ? (long)(o) + (long)gid \
     : (K) == GR_EW_ONE ? (long)(o) : gr_offset(&(s), (long)(o), idx))

inline long gr_offset(const long8 *s, long o, const long *idx)
{
    const long *sp = (const long *)s;
    for (int k = 0; k < GR_ND; ++k) {
        o += idx[k] * sp[k];
    }
    return o;
}

/* GR_C0..2(x): storage -> loop type (a nonzero test into bool, for
 * where's condition), set by the host. */
#define GR_LOAD(K, C, p, o, s, v) \
    ((K) == GR_EW_VALUE ? (v) : C((p)[GR_AT(K, o, s)]))

/* Result element gid. */
inline void gr_elementwise_at(__global const GR_S0 *p0, ulong o0, long8 s0,
                              GR_I0 v0, __global const GR_S1 *p1, ulong o1,
                              long8 s1, GR_I1 v1, __global const GR_S2 *p2,
                              ulong o2, long8 s2, GR_I2 v2, __global GR_D *pd,
                              ulong od, long8 sd, long8 shape, ulong gid)
{
    long idx[GR_ND > 0 ? GR_ND : 1];
#if GR_ND > 0
    {
        const long *shp = (const long *)&shape;
        ulong rest = gid;
        for (int k = GR_ND - 1; k >= 0; --k) {
            idx[k] = (long)(rest % (ulong)shp[k]);
            rest /= (ulong)shp[k];
        }
    }
#endif
    const GR_I0 a = GR_LOAD(GR_K0, GR_C0, p0, o0, s0, v0);
#if GR_EOP == GR_EW_TAKE || GR_EOP == GR_EW_TAKE_SQDEV
    const GR_I1 b = GR_C1(p1[(long)o1 + (long)a]);
#elif GR_NIN > 1
    const GR_I1 b = GR_LOAD(GR_K1, GR_C1, p1, o1, s1, v1);
#else
    const GR_I1 b = v1;
#endif
#if GR_NIN > 2
    const GR_I2 c = GR_LOAD(GR_K2, GR_C2, p2, o2, s2, v2);
#else
    const GR_I2 c = v2;
#endif
#if GR_IFLOAT
    gr_t gr_m = (gr_t)0; /* divmod's remainder */
#endif
    const GR_O r = (GR_O)(GR_F(a, b, c));
    pd[GR_AT(GR_KD, od, sd)] = GR_STORE(r);
}

__kernel void gr_elementwise(__global const GR_S0 *p0, ulong o0, long8 s0,
                             GR_I0 v0, __global const GR_S1 *p1, ulong o1,
                             long8 s1, GR_I1 v1, __global const GR_S2 *p2,
                             ulong o2, long8 s2, GR_I2 v2, __global GR_D *pd,
                             ulong od, long8 sd, long8 shape, ulong n)
{
    /* plan->items elements a work-item, the grid's width apart (one where
     * the grid covers the result: csrc/plan_elementwise.c) */
    for (ulong gid = get_global_id(0); gid < n; gid += get_global_size(0)) {
        gr_elementwise_at(p0, o0, s0, v0, p1, o1, s1, v1, p2, o2, s2, v2, pd,
                          od, sd, shape, gid);
    }
}
