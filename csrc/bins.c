/*
 * gpured — histogram bin indices: kernels/bins.cl's gr_bin_index for a
 * gr_bins_call (uniform bins by arithmetic with NumPy's fix-ups, or a
 * binary search over explicit edges).  The by-key family then counts the
 * indices (gpured/_bins.py).  No Python.
 */
#include "bins.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    int t, e, i, uniform;
} binkey;

static void bins_defines(const void *ctx, char *buf, size_t n)
{
    const binkey *k = ctx;
    snprintf(buf, n,
             "#define GR_NEED_FP64 %d\n" GR_CL_NO_REDUCTION
             "#define GR_BT %s\n#define GR_BE %s\n#define GR_BI %s\n"
             "#define GR_BUNIFORM %d\n",
             k->t == GR_FLOAT64 || k->e == GR_FLOAT64,
             gr_dtypes[k->t].cl, gr_dtypes[k->e].cl, gr_dtypes[k->i].cl,
             k->uniform);
}

int gr_bins_run(int dev, const gr_bins_call *c, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    if (c->n == 0) {
        return 0;
    }
    if ((c->t == GR_FLOAT64 || c->e == GR_FLOAT64) && !d->fp64) {
        gr_status_kind(st, GR_E_TYPE, "float64 is not supported by device "
                       "'%s' (no fp64)", d->name);
        return -1;
    }
    binkey k;
    memset(&k, 0, sizeof k);
    k.t = (int)c->t;
    k.e = (int)c->e;
    k.i = (int)c->i;
    k.uniform = c->uniform;
    const size_t esz = (size_t)gr_dtypes[c->e].size;
    const cl_ulong aoff = c->aoff, n = c->n;
    const cl_uint nb = c->nb;
    const size_t wg = d->is_gpu ? 256 : 1;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    size_t groups = (c->n + wg - 1) / wg;
    const size_t most = cu * (d->is_gpu ? 16 : 4);
    groups = groups < most ? groups : most;
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        cl_kernel kern = gr_kernel_memo(d, "bins", &k, sizeof k,
                                        "gr_bin_index", bins_defines, &k,
                                        "-cl-fp32-correctly-rounded-divide-"
                                        "sqrt", st);
        const gr_arg args[] = {
            GR_ARG(c->a), GR_ARG(aoff), GR_ARG(n), GR_ARG(c->edges),
            GR_ARG(nb), {esz, c->lo}, {esz, c->hi}, {esz, c->denom},
            GR_ARG(c->idx)};
        const size_t g = groups * wg;
        rc = kern == NULL ? -1
                          : gr_launch(d, kern, 1, &g, &wg, args, 9, NULL, NULL,
                                      st);
    }
    gr_unlock(d);
    return rc;
}

int gr_bins_fkey(int dev, cl_mem a, size_t aoff, gr_dtype t, size_t n,
                 uint64_t expo, uint64_t qnan, cl_mem key, gr_dtype kt,
                 gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    if (n == 0) {
        return 0;
    }
    binkey k;
    memset(&k, 0, sizeof k);
    k.t = (int)t;
    k.e = (int)t;
    k.i = (int)kt;
    k.uniform = 2;
    const cl_ulong uoff = aoff, un = n, ue = expo, uq = qnan;
    const size_t wg = d->is_gpu ? 256 : 1;
    const size_t cu = d->compute_units ? d->compute_units : 1;
    size_t groups = (n + wg - 1) / wg;
    const size_t most = cu * (d->is_gpu ? 16 : 4);
    groups = groups < most ? groups : most;
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        cl_kernel kern = gr_kernel_memo(d, "bins", &k, sizeof k,
                                        "gr_float_key", bins_defines, &k, "",
                                        st);
        const gr_arg args[] = {GR_ARG(a),  GR_ARG(uoff), GR_ARG(un),
                               GR_ARG(ue), GR_ARG(uq),   GR_ARG(key)};
        const size_t g = groups * wg;
        rc = kern == NULL ? -1
                          : gr_launch(d, kern, 1, &g, &wg, args, 6, NULL, NULL,
                                      st);
    }
    gr_unlock(d);
    return rc;
}

int gr_bins_sort(int dev, cl_mem keys, size_t koff, cl_mem vals, size_t voff,
                 gr_dtype v, size_t n, uint64_t max_key, gr_block **okeys,
                 gr_block **ovals, gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    gr_bk_types ty;
    memset(&ty, 0, sizeof ty);
    ty.k = GR_UINT32;
    ty.op = GR_ADD;
    ty.count = v == GR_NDTYPES;
    ty.v = ty.count ? GR_UINT8 : v;
    *okeys = *ovals = NULL;
    /* the result type as sum_by_key's (the sort's builds are its own) */
    char err[160];
    if (gr_bk_types_init(d, &ty, err, sizeof err) != 0) {
        gr_status_kind(st, GR_E_TYPE, "%s", err);
        return -1;
    }
    if (!gr_bykey_sort_fits(n, max_key)) {
        gr_status_kind(st, GR_E_VALUE, "sort: keys or length past 2^32");
        return -1;
    }
    gr_lock(d);
    const int rc = gr_bykey_sort_dev(d, &ty, 0, 0, keys, koff, vals, voff, n,
                                     max_key, okeys, ovals, NULL, st);
    gr_unlock(d);
    return rc;
}
