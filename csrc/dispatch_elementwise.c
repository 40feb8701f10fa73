/*
 * gpured — dispatch layer, elementwise: the driver of the elementwise
 * family (gr_ew_run), between api_elementwise.c (operands typed by
 * NumPy's loop resolution, broadcast as element strides) and
 * elementwise.c (the kernel and its launch):
 *   1. merges the dimensions that are contiguous in every operand and
 *      drops those of length 1 (a transposed or broadcast operand keeps
 *      its dimensions, a contiguous one loses them all),
 *   2. classifies each operand: contiguous, strided, one element, value,
 *   3. asks the policy layer for the launch geometry
 *      (plan_elementwise.c: a row of its table, from device facts),
 *   4. takes the device's lock, finds the kernel and launches it.
 */
#include "elementwise.h"

#include <string.h>

/* Merge the dimensions contiguous in every array operand (and the
 * result), drop those of length 1.  Returns the new rank. */
static int merge_dims(gr_ew_call *c)
{
    gr_ew_operand *all[4] = {&c->out, &c->in[0], &c->in[1], &c->in[2]};
    const int nop = 1 + c->nin;
    int m = 0;
    for (int i = 0; i < c->nd; ++i) {
        if (c->shape[i] == 1) {
            continue;
        }
        int merge = m > 0;
        for (int j = 0; merge && j < nop; ++j) {
            const gr_ew_operand *o = all[j];
            merge = o->kind == GR_EW_VALUE ||
                    o->str[m - 1] == o->str[i] * (ptrdiff_t)c->shape[i];
        }
        if (merge) {
            c->shape[m - 1] *= c->shape[i];
        } else {
            c->shape[m] = c->shape[i];
            ++m;
        }
        for (int j = 0; j < nop; ++j) {
            all[j]->str[m - 1] = all[j]->str[i];
        }
    }
    return m;
}

static gr_ew_kind kind_of(const gr_ew_operand *o, int nd, const size_t *shape)
{
    if (o->kind == GR_EW_VALUE) {
        return GR_EW_VALUE;
    }
    int zero = 1, contig = 1;
    ptrdiff_t acc = 1;
    for (int i = nd - 1; i >= 0; --i) {
        zero = zero && o->str[i] == 0;
        contig = contig && o->str[i] == acc;
        acc *= (ptrdiff_t)shape[i];
    }
    return contig ? GR_EW_CONTIG : zero ? GR_EW_ONE : GR_EW_STRIDED;
}

/* ------------------------------------------------------------- driver */

int gr_ew_run(int dev, gr_ew_call *c, size_t wg, size_t items,
              gr_status *st)
{
    gr_device *d = gr_device_get(dev);
    size_t n = 1;
    for (int i = 0; i < c->nd; ++i) {
        n *= c->shape[i];
    }
    if (n == 0) {
        return 0;
    }
    c->nd = merge_dims(c);
    if (c->nd > 8) {
        gr_status_kind(st, GR_E_VALUE, "elementwise operation over views "
                       "with %d non-contiguous dimensions (at most 8)", c->nd);
        return -1;
    }
    for (int j = 0; j < c->nin; ++j) {
        c->in[j].kind = kind_of(&c->in[j], c->nd, c->shape);
    }
    c->out.kind = kind_of(&c->out, c->nd, c->shape);
    gr_ew_plan p;
    if (gr_plan_elementwise(d, n, wg, items, &p) != 0) {
        gr_status_kind(st, GR_E_VALUE, "%s", p.why);
        return -1;
    }
    int rc = -1;
    gr_lock(d);
    if (gr_device_open(d, st) == 0) {
        cl_kernel kern = gr_ew_kernel(d, c, st);
        rc = kern == NULL ? -1 : gr_ew_launch(d, kern, c, n, &p, st);
    }
    gr_unlock(d);
    return rc;
}
