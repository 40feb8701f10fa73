/*
 * gpured — host memory as device buffers, and device element copies.
 *
 * CPU devices (PoCL) share the host's memory: the NumPy buffer is used in
 * place (CL_MEM_USE_HOST_PTR).  PoCL wants such pointers aligned to 128
 * bytes and has been reported to skip elements silently otherwise, while
 * NumPy's large arrays are typically only 16-byte aligned.  So the buffer
 * starts at the pointer rounded down to 128 bytes -- the bytes before the
 * array lie in the same page, hence are mapped -- and the kernels receive
 * the element offset of the array inside it.  Only an array whose address
 * is not a multiple of its item size is copied.
 *
 * GPUs get one copy of the input in a pooled block (a blocking write from
 * the pageable memory, or the pinned pipeline of stream.c for large ones);
 * only the results are read back.
 *
 * gr_copy_nd runs kernels/copy.cl: strided, casting element copies with an
 * epilogue (mean's division, `initial`), at most 8 dimensions after
 * merging the ones that are contiguous in both operands.
 */
#include "gpured.h"

#include <stdio.h>
#include <string.h>


int gr_input_from_host(gr_device *d, const void *ptr, size_t nbytes,
                       size_t itemsize, gr_input *inp, gr_status *st)
{
    cl_int err = CL_SUCCESS;
    memset(inp, 0, sizeof *inp);
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    if (nbytes == 0) {
        nbytes = itemsize; /* OpenCL has no empty buffers */
    }
    uintptr_t addr = (uintptr_t)ptr;
    size_t lead = addr % GR_ZC_ALIGN;
    if (!d->is_gpu && lead % itemsize == 0) {
        inp->mem = clCreateBuffer(d->ctx,
                                  CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                                  nbytes + lead, (void *)(addr - lead), &err);
        if (err == CL_SUCCESS) {
            inp->base = lead / itemsize;
            inp->zero_copy = 1;
            return 0;
        }
    }
    inp->blk = gr_block_get(d, nbytes, st);
    if (inp->blk == NULL) {
        return -1;
    }
    inp->mem = inp->blk->mem;
    if (gr_stream_write(d, inp->mem, 0, ptr, nbytes, st) != 0) {
        gr_input_release(inp);
        return -1;
    }
    return 0;
}

void gr_input_release(gr_input *inp)
{
    if (inp->blk != NULL) {
        gr_block_put(inp->blk);
    } else if (inp->mem != NULL) {
        clReleaseMemObject(inp->mem);
    }
    inp->mem = NULL;
    inp->blk = NULL;
}

cl_mem gr_output_host(gr_device *d, void *ptr, size_t nbytes, size_t itemsize,
                      size_t *base)
{
    cl_int err = CL_SUCCESS;
    uintptr_t addr = (uintptr_t)ptr;
    size_t lead = addr % GR_ZC_ALIGN;
    if (d->is_gpu || lead % itemsize != 0 || nbytes == 0) {
        return NULL;
    }
    cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                              nbytes + lead, (void *)(addr - lead), &err);
    if (err != CL_SUCCESS) {
        return NULL;
    }
    *base = lead / itemsize;
    return m;
}

/* ----------------------------------------------------- element copies */

typedef struct {
    int s, m, d, epi, eop, enan, fp64, fdouble;
} ckey;
_Static_assert(sizeof(ckey) <= GR_MEMO_KEY,
               "ckey outgrew the kernel memo's key (every call would miss)");

static void copy_defines(const void *ctx, char *buf, size_t n)
{
    const ckey *k = ctx;
    const gr_dtype_info *mi = &gr_dtypes[k->m];
    snprintf(buf, n,
             "#define GR_NEED_FP64 %d\n" GR_CL_NO_REDUCTION
             "#define GR_S %s\n#define GR_M %s\n#define GR_D %s\n"
             "#define GR_MU %s\n#define GR_S_BOOL %d\n#define GR_M_BOOL %d\n"
             "#define GR_D_BOOL %d\n#define GR_M_FLOAT %d\n#define GR_F %s\n"
             "#define GR_EPI %d\n#define GR_EOP %d\n#define GR_ENAN %d\n"
             "#define GR_M_NARROW %d\n#define GR_D_NARROW %d\n"
             "#define GR_S_HALF %d\n#define GR_D_HALF %d\n",
             k->fp64, gr_dtypes[k->s].cl, mi->cl, gr_dtypes[k->d].cl,
             mi->is_float ? mi->cl : mi->cl_uns, k->s == GR_BOOL,
             k->m == GR_BOOL, k->d == GR_BOOL, mi->is_float,
             k->fdouble ? "double" : "float", k->epi, k->eop, k->enan,
             !mi->is_float && k->m != GR_BOOL && mi->size < 8,
             !gr_dtypes[k->d].is_float && k->d != GR_BOOL &&
                 gr_dtypes[k->d].size < 8,
             k->s == GR_FLOAT16 ? 1 : k->s == GR_BFLOAT16 ? 2 : 0,
             k->d == GR_FLOAT16 ? 1 : k->d == GR_BFLOAT16 ? 2 : 0);
}

/* Merge dimensions that are contiguous in both operands, drop those of
 * length 1.  Returns the new count (0: a single element). */
static int merge_dims(int nd, size_t *shape, ptrdiff_t *a, ptrdiff_t *b)
{
    int m = 0;
    for (int i = 0; i < nd; ++i) {
        if (shape[i] == 1) {
            continue;
        }
        if (m > 0 && a[m - 1] == a[i] * (ptrdiff_t)shape[i] &&
            b[m - 1] == b[i] * (ptrdiff_t)shape[i]) {
            shape[m - 1] *= shape[i];
            a[m - 1] = a[i];
            b[m - 1] = b[i];
            continue;
        }
        shape[m] = shape[i];
        a[m] = a[i];
        b[m] = b[i];
        ++m;
    }
    return m;
}

int gr_copy_nd(gr_device *d, cl_mem src, gr_dtype s, size_t soff,
               cl_mem dst, gr_dtype t, size_t doff, int nd,
               const size_t *shape_in, const ptrdiff_t *sstr_in,
               const ptrdiff_t *dstr_in, const gr_epilogue *epi,
               gr_status *st)
{
    size_t shape[GR_MAXDIMS];
    ptrdiff_t ss[GR_MAXDIMS], ds[GR_MAXDIMS];
    cl_ulong n = 1;
    for (int i = 0; i < nd; ++i) {
        shape[i] = shape_in[i];
        ss[i] = sstr_in[i];
        ds[i] = dstr_in[i];
        n *= shape[i];
    }
    if (n == 0) {
        return 0;
    }
    nd = merge_dims(nd, shape, ss, ds);
    if (nd > 8) {
        gr_status_kind(st, GR_E_VALUE, "device copy of a view with %d "
                       "non-contiguous dimensions (at most 8)", nd);
        return -1;
    }
    const int mode = epi ? epi->mode : GR_EPI_CAST;
    if (s == t && GR_IS_HALF(s) && mode == GR_EPI_CAST) {
        s = t = GR_UINT16; /* a half into itself: its bits, NaNs included */
    }
    if ((GR_IS_HALF(s) || GR_IS_HALF(t)) && mode != GR_EPI_CAST) {
        gr_status_kind(st, GR_E_VALUE, "device copy: float16/bfloat16 "
                       "take plain casts only");
        return -1;
    }
    ckey k;
    memset(&k, 0, sizeof k);
    k.s = (int)s;
    k.d = (int)t;
    /* mean: the division in the sum's type (S), or in out's (M = D) when
     * the result is cast into another dtype; initial: in the result's. */
    k.m = mode == GR_EPI_CAST ? (int)s
          : mode == GR_EPI_DIV ? (epi->via_dst ? (int)t : (int)s)
                               : (int)t;
    if (GR_IS_HALF(k.m)) {
        k.m = GR_FLOAT32; /* casts: M is only the unused value argument */
    }
    k.epi = mode;
    k.eop = mode == GR_EPI_OP ? (int)epi->op : 0;
    k.enan = mode == GR_EPI_OP && epi->nan;
    /* The division runs in double where the device has it, except into a
     * float32 out (NumPy divides float32 by the count in float32). */
    k.fdouble = d->fp64 && !(mode == GR_EPI_DIV && epi->via_dst &&
                             t == GR_FLOAT32);
    k.fp64 = k.fdouble || s == GR_FLOAT64 || t == GR_FLOAT64;
    cl_kernel kern = gr_kernel_memo(d, "copy", &k, sizeof k, "gr_copy",
                                    copy_defines, &k, "", st);
    if (kern == NULL) {
        return -1;
    }
    cl_long shp8[8] = {1, 1, 1, 1, 1, 1, 1, 1}, ss8[8] = {0}, ds8[8] = {0};
    for (int i = 0; i < nd; ++i) {
        shp8[i] = (cl_long)shape[i];
        ss8[i] = (cl_long)ss[i];
        ds8[i] = (cl_long)ds[i];
    }
    const cl_ulong so = soff, dof = doff;
    const cl_uint und = (cl_uint)nd;
    const cl_double dv = epi && mode == GR_EPI_DIV ? epi->div : 1.0;
    const cl_float fv = (cl_float)dv;
    const int fdouble = k.fdouble;
    unsigned char value[8] = {0};
    if (mode == GR_EPI_OP) {
        memcpy(value, epi->value, 8);
    }
    const size_t local = 256;
    const size_t global = (size_t)((n + local - 1) / local * local);
    const gr_arg args[] = {
        GR_ARG(src), GR_ARG(so), GR_ARG(dst), GR_ARG(dof),
        {sizeof shp8, shp8}, {sizeof ss8, ss8}, {sizeof ds8, ds8},
        GR_ARG(und), GR_ARG(n),
        fdouble ? GR_ARG(dv) : GR_ARG(fv),
        {(size_t)gr_dtypes[k.m].size, value}};
    return gr_launch(d, kern, 1, &global, &local, args, 11, NULL, NULL, st);
}

int gr_copy_enqueue(gr_device *d, cl_mem src, gr_dtype s, size_t soff,
                    cl_mem dst, gr_dtype t, size_t doff, size_t n,
                    gr_status *st)
{
    const size_t shape[1] = {n};
    const ptrdiff_t one[1] = {1};
    return gr_copy_nd(d, src, s, soff, dst, t, doff, 1, shape, one, one, NULL,
                      st);
}
