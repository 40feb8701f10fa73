/*
 * elementwise.c — the elementwise family: NumPy's ufuncs on device arrays
 * (gpured.Array's operators, __array_ufunc__, gpured.where).
 *
 * The layers: api_elementwise.c (operands typed by NumPy's own loop
 * resolution, broadcast as element strides) -> dispatch_elementwise.c
 * (dimensions merged, operands classified, the plan, the lock) ->
 * plan_elementwise.c (policy: the launch geometry) -> this file:
 *   - the operator table (NumPy's ufunc names -> kernel codes),
 *   - the kernel by a compact key (program cache: programs.c) --
 *     kernels/elementwise.cl built with the operator, the types, the
 *     operand kinds and the rank as macros, so a repeated call costs a
 *     hash and a launch, and the contiguous case no index arithmetic,
 *   - its launch: plan->groups work-groups of plan->wg work-items, each
 *     writing plan->items elements of the result (a grid-stride loop).
 */
#include "elementwise.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------ operator table */

/* NumPy's ufunc names -> kernels/elementwise.cl's GR_EW_* codes.  fl: the
 * device has only float loops (OpenCL's math built-ins); NumPy's integer
 * loops of these (e.g. np.sqrt(int8) -> float16) are typed by NumPy
 * before this, so an integer loop here is refused, not miscompiled. */
static const struct {
    const char *name;
    int code, nin, fl;
} ops[] = {
    {"add", 1, 2, 0}, {"subtract", 2, 2, 0}, {"multiply", 3, 2, 0},
    {"true_divide", 4, 2, 1}, {"divide", 4, 2, 1},
    {"floor_divide", 5, 2, 0}, {"remainder", 6, 2, 0}, {"mod", 6, 2, 0},
    {"power", 7, 2, 0}, {"equal", 8, 2, 0}, {"not_equal", 9, 2, 0},
    {"less", 10, 2, 0}, {"less_equal", 11, 2, 0}, {"greater", 12, 2, 0},
    {"greater_equal", 13, 2, 0}, {"bitwise_and", 14, 2, 0},
    {"bitwise_or", 15, 2, 0}, {"bitwise_xor", 16, 2, 0},
    {"logical_and", 17, 2, 0}, {"logical_or", 18, 2, 0},
    {"logical_xor", 19, 2, 0}, {"maximum", 20, 2, 0}, {"minimum", 21, 2, 0},
    {"fmax", 22, 2, 0}, {"fmin", 23, 2, 0}, {"arctan2", 24, 2, 1},
    {"hypot", 25, 2, 1}, {"copysign", 26, 2, 1}, {"fmod", 27, 2, 0},
    {"left_shift", 28, 2, 0}, {"right_shift", 29, 2, 0},
    {"negative", 40, 1, 0}, {"positive", 41, 1, 0}, {"absolute", 42, 1, 0},
    {"invert", 43, 1, 0}, {"bitwise_not", 43, 1, 0},
    {"logical_not", 44, 1, 0}, {"sqrt", 45, 1, 1}, {"exp", 46, 1, 1},
    {"log", 47, 1, 1}, {"log2", 48, 1, 1}, {"log10", 49, 1, 1},
    {"sin", 50, 1, 1}, {"cos", 51, 1, 1}, {"tan", 52, 1, 1},
    {"tanh", 53, 1, 1}, {"arcsin", 54, 1, 1}, {"arccos", 55, 1, 1},
    {"arctan", 56, 1, 1}, {"sinh", 57, 1, 1}, {"cosh", 58, 1, 1},
    {"arcsinh", 59, 1, 1}, {"arccosh", 60, 1, 1}, {"arctanh", 61, 1, 1},
    {"exp2", 62, 1, 1}, {"expm1", 63, 1, 1}, {"log1p", 64, 1, 1},
    {"floor", 65, 1, 0}, {"ceil", 66, 1, 0}, {"rint", 67, 1, 0},
    {"trunc", 68, 1, 0}, {"isnan", 69, 1, 0}, {"isinf", 70, 1, 0},
    {"isfinite", 71, 1, 0}, {"signbit", 72, 1, 1}, {"square", 73, 1, 0},
    {"sign", 74, 1, 0}, {"cbrt", 75, 1, 1}, {"reciprocal", 76, 1, 1},
    {"where", 90, 3, 0}, {"take", 91, 2, 0}, {"take_sqdev", 92, 3, 0},
};

int gr_ew_find(const char *name, int *nin, int *float_only)
{
    for (size_t i = 0; i < sizeof ops / sizeof *ops; ++i) {
        if (strcmp(ops[i].name, name) == 0) {
            *nin = ops[i].nin;
            *float_only = ops[i].fl;
            return ops[i].code;
        }
    }
    return -1;
}

/* ------------------------------------------------------------- kernel */

typedef struct {
    int op, nin, s[3], t[3], k[3], o, d, kd, nd, fp64;
} ewkey;
_Static_assert(sizeof(ewkey) <= GR_MEMO_KEY,
               "ewkey outgrew the kernel memo's key (every call would miss)");

/* storage -> loop type: a nonzero test into bool (where's condition),
 * else a C conversion (NumPy's loops only ever cast safely) */
static int conv_define(char *buf, size_t n, int i, int s, int t)
{
    if (t == GR_BOOL && s != GR_BOOL) {
        return snprintf(buf, n, "#define GR_C%d(x) ((uchar)((x) != 0))\n", i);
    }
    return snprintf(buf, n, "#define GR_C%d(x) ((%s)(x))\n", i,
                    gr_dtypes[t].cl);
}

static void ew_defines(const void *ctx, char *buf, size_t n)
{
    const ewkey *k = ctx;
    const gr_dtype_info *i0 = &gr_dtypes[k->t[0]];
    /* where's loop is (bool, T, T), take's (long, T, T), take_sqdev's
     * (long, T, T, T): the arithmetic type is operand 1's */
    const gr_dtype_info *ar = k->op >= 90 ? &gr_dtypes[k->t[1]] : i0;
    int mixed = 0;
    if (k->nin == 2 && k->t[0] != k->t[1]) {
        mixed = gr_dtypes[k->t[0]].is_signed ? 1 : 2;
    }
    size_t len = (size_t)snprintf(
        buf, n,
        "#define GR_NEED_FP64 %d\n" GR_CL_NO_REDUCTION
        "#define GR_EOP %d\n#define GR_NIN %d\n#define GR_S0 %s\n"
        "#define GR_S1 %s\n#define GR_S2 %s\n#define GR_I0 %s\n"
        "#define GR_I1 %s\n#define GR_I2 %s\n#define GR_O %s\n"
        "#define GR_D %s\n#define GR_K0 %d\n#define GR_K1 %d\n"
        "#define GR_K2 %d\n#define GR_KD %d\n#define GR_ND %d\n"
        "#define GR_IT %s\n#define GR_IU %s\n#define GR_IFLOAT %d\n#define GR_ISIGNED %d\n"
        "#define GR_IBOOL %d\n#define GR_IBITS %d\n#define GR_MIXED %d\n"
        "#define GR_D_BOOL %d\n#define GR_D_NARROW %d\n",
        k->fp64, k->op, k->nin, gr_dtypes[k->s[0]].cl, gr_dtypes[k->s[1]].cl,
        gr_dtypes[k->s[2]].cl, i0->cl, gr_dtypes[k->t[1]].cl,
        gr_dtypes[k->t[2]].cl, gr_dtypes[k->o].cl, gr_dtypes[k->d].cl,
        k->k[0], k->k[1], k->k[2], k->kd, k->nd, ar->cl,
        ar->is_float ? ar->cl : ar->cl_uns, ar->is_float,
        ar->is_signed && !ar->is_float, k->t[0] == GR_BOOL, ar->size * 8,
        mixed, k->d == GR_BOOL,
        !gr_dtypes[k->d].is_float && k->d != GR_BOOL &&
            gr_dtypes[k->d].size < 8 && gr_dtypes[k->o].is_float);
    for (int i = 0; i < 3 && len < n; ++i) {
        len += (size_t)conv_define(buf + len, n - len, i, k->s[i], k->t[i]);
    }
}

/* ------------------------------------------------------------- launch */

int gr_ew_launch(gr_device *d, cl_kernel kern, const gr_ew_call *c, size_t n,
                 const gr_ew_plan *p, gr_status *st)
{
    cl_long shp[8] = {1, 1, 1, 1, 1, 1, 1, 1}, str[4][8];
    cl_ulong off[4];
    cl_mem mem[4];
    const gr_ew_operand *all[4] = {&c->in[0], &c->in[1], &c->in[2], &c->out};
    memset(str, 0, sizeof str);
    for (int j = 0; j < 4; ++j) {
        const int used = j == 3 || j < c->nin;
        mem[j] = used && all[j]->mem != NULL ? all[j]->mem : c->out.mem;
        off[j] = used ? (cl_ulong)all[j]->off : 0;
        for (int i = 0; used && i < c->nd; ++i) {
            str[j][i] = (cl_long)all[j]->str[i];
        }
    }
    for (int i = 0; i < c->nd; ++i) {
        shp[i] = (cl_long)c->shape[i];
    }
    size_t vsz[3];
    for (int j = 0; j < 3; ++j) {
        vsz[j] = (size_t)gr_dtypes[j < c->nin ? all[j]->t : GR_BOOL].size;
    }
    const cl_ulong nn = (cl_ulong)n;
    const size_t local = p->wg;
    const size_t global = p->groups * p->wg;
    const gr_arg args[] = {
        GR_ARG(mem[0]), GR_ARG(off[0]), {sizeof str[0], str[0]},
        {vsz[0], c->in[0].value},
        GR_ARG(mem[1]), GR_ARG(off[1]), {sizeof str[1], str[1]},
        {vsz[1], c->in[1].value},
        GR_ARG(mem[2]), GR_ARG(off[2]), {sizeof str[2], str[2]},
        {vsz[2], c->in[2].value},
        GR_ARG(mem[3]), GR_ARG(off[3]), {sizeof str[3], str[3]},
        {sizeof shp, shp}, GR_ARG(nn)};
    return gr_launch(d, kern, 1, &global, &local, args, 17, NULL, NULL, st);
}

cl_kernel gr_ew_kernel(gr_device *d, const gr_ew_call *c, gr_status *st)
{
    ewkey k;
    memset(&k, 0, sizeof k);
    k.op = c->op;
    k.nin = c->nin;
    int strided = 0;
    for (int j = 0; j < 3; ++j) {
        const gr_ew_operand *o = &c->in[j];
        k.s[j] = j < c->nin ? (int)o->s : GR_BOOL;
        k.t[j] = j < c->nin ? (int)o->t : GR_BOOL;
        k.k[j] = j < c->nin ? (int)o->kind : GR_EW_VALUE;
        strided |= k.k[j] == GR_EW_STRIDED;
        k.fp64 |= k.s[j] == GR_FLOAT64 || k.t[j] == GR_FLOAT64;
    }
    k.o = (int)c->out.t;
    k.d = (int)c->out.s;
    k.kd = (int)c->out.kind;
    strided |= k.kd == GR_EW_STRIDED;
    /* the rank is in the kernel only where some operand needs it */
    k.nd = strided ? c->nd : 0;
    k.fp64 |= k.o == GR_FLOAT64 || k.d == GR_FLOAT64;
    /* correctly rounded float32 division and sqrt, as NumPy's */
    return gr_kernel_memo(d, "elementwise", &k, sizeof k, "gr_elementwise",
                          ew_defines, &k,
                          "-cl-fp32-correctly-rounded-divide-sqrt", st);
}
