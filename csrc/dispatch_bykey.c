/*
 * gpured — dispatch layer, reduce-by-key: the by-key driver
 * (dp_run_bykey): key check and measurement, plan (policy.c), a stable
 * sort where determinism asks for one, aggregation (bykey.c), counts.
 */

#include "dispatch_common.h"
#include "host_exact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The ValueError of a bad key: its index and value (read from the host
 * array, or 8 bytes from the device). */
static void bad_key(gr_device *d, const gr_request *req, cl_mem keys,
                    size_t koff, uint64_t i, gr_status *st)
{
    const size_t ksz = isz_of(req->bkt.k);
    unsigned char p[8] = {0};
    if (req->in.host != NULL) {
        memcpy(p, req->in.host + i * ksz, ksz);
    } else if (dp_read_unlocked(d, keys, (koff + i) * ksz, ksz, p, st) != 0) {
        return;
    }
    long long sv = 0;
    unsigned long long uv = 0;
    switch (req->bkt.k) {
    case GR_INT8: { int8_t x; memcpy(&x, p, 1); sv = x; break; }
    case GR_UINT8: { uint8_t x; memcpy(&x, p, 1); uv = x; break; }
    case GR_INT16: { int16_t x; memcpy(&x, p, 2); sv = x; break; }
    case GR_UINT16: { uint16_t x; memcpy(&x, p, 2); uv = x; break; }
    case GR_INT32: { int32_t x; memcpy(&x, p, 4); sv = x; break; }
    case GR_UINT32: { uint32_t x; memcpy(&x, p, 4); uv = x; break; }
    case GR_INT64: { int64_t x; memcpy(&x, p, 8); sv = x; break; }
    default: { uint64_t x; memcpy(&x, p, 8); uv = x; break; }
    }
    const int sgn = gr_dtypes[req->bkt.k].is_signed;
    if (sgn && sv < 0) {
        gr_status_kind(st, GR_E_VALUE, "keys[%llu] = %lld is negative: keys "
                       "must lie in [0, num_keys)", (unsigned long long)i, sv);
    } else {
        gr_status_kind(st, GR_E_VALUE, "keys[%llu] = %llu is out of range: "
                       "keys must lie in [0, num_keys) with num_keys = %lld",
                       (unsigned long long)i,
                       sgn ? (unsigned long long)sv : uv,
                       (long long)req->num_keys);
    }
}

/* A stable sort of (keys, values) by key on the host: LSD radix sort of
 * the keys (all in [0, num_keys): validated), 8 bits per pass, as many
 * passes as num_keys needs.  Deterministic sum_by_key on unsorted keys
 * takes this, then the sorted-segments kernels (README: which calls
 * wait). */
static int host_sort_by_key(const char *keys, const char *vals, size_t n,
                            size_t ksz, size_t vsz, uint64_t max_key,
                            char **ok, char **ov, gr_status *st)
{
    uint64_t *k0 = malloc(n * 8), *k1 = malloc(n * 8);
    size_t *i0 = malloc(n * sizeof(size_t)), *i1 = malloc(n * sizeof(size_t));
    char *sk = dp_aligned_alloc_bytes(n * ksz);
    char *sv = dp_aligned_alloc_bytes(n * vsz);
    int rc = -1;
    if (!k0 || !k1 || !i0 || !i1 || !sk || !sv) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory sorting %zu keys",
                       n);
        goto out;
    }
    for (size_t i = 0; i < n; ++i) {
        uint64_t k = 0;
        memcpy(&k, keys + i * ksz, ksz); /* little-endian, non-negative */
        k0[i] = k;
        i0[i] = i;
    }
    for (int shift = 0; shift < 64 && (max_key >> shift) != 0; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; ++i) {
            count[((k0[i] >> shift) & 255) + 1]++;
        }
        for (int b = 0; b < 256; ++b) {
            count[b + 1] += count[b];
        }
        for (size_t i = 0; i < n; ++i) {
            size_t at = count[(k0[i] >> shift) & 255]++;
            k1[at] = k0[i];
            i1[at] = i0[i];
        }
        uint64_t *tk = k0; k0 = k1; k1 = tk;
        size_t *ti = i0; i0 = i1; i1 = ti;
    }
    for (size_t i = 0; i < n; ++i) {
        memcpy(sk + i * ksz, keys + i0[i] * ksz, ksz);
        memcpy(sv + i * vsz, vals + i0[i] * vsz, vsz);
    }
    *ok = sk;
    *ov = sv;
    sk = sv = NULL;
    rc = 0;
out:
    free(k0);
    free(k1);
    free(i0);
    free(i1);
    free(sk);
    free(sv);
    return rc;
}

/* One input of a by-key call as (cl_mem, first element): device blocks in
 * place (strided views copied), host arrays uploaded or used in place. */
typedef struct {
    cl_mem mem;
    size_t base;
    gr_input host;
    gr_block *tmp;
} bk_in;

static int bk_in_open(gr_device *d, const gr_operand *o, size_t n,
                      bk_in *b, gr_status *st)
{
    const size_t isz = isz_of(o->t);
    memset(b, 0, sizeof *b);
    if (!o->present) {
        return 0;
    }
    if (o->host != NULL) {
        if (gr_input_from_host(d, o->host, n * isz, isz, &b->host, st) != 0) {
            return -1;
        }
        b->mem = b->host.mem;
        b->base = b->host.base;
        return 0;
    }
    if (o->nd == 1 && o->shape[0] > 1 && o->strides[0] != (ptrdiff_t)isz) {
        const size_t shape[1] = {n};
        const ptrdiff_t ss[1] = {o->strides[0] / (ptrdiff_t)isz}, one[1] = {1};
        if ((b->tmp = gr_block_get(d, n * isz, st)) == NULL ||
            gr_copy_nd(d, o->blk->mem, o->t, o->off / isz, b->tmp->mem, o->t,
                       0, 1, shape, ss, one, NULL, st) != 0) {
            return -1;
        }
        b->mem = b->tmp->mem;
        return 0;
    }
    b->mem = o->blk->mem;
    b->base = o->off / isz;
    return 0;
}

static void bk_in_close(bk_in *b)
{
    gr_input_release(&b->host);
    gr_block_put(b->tmp);
    memset(b, 0, sizeof *b);
}

/* One sum_by_key's state: the inputs as the kernels read them (sorted
 * copies where a sort came first), the plan's overrides, the owned
 * copies and blocks (start NULL; bykey_dense releases them). */
typedef struct {
    gr_device *d;
    gr_request *req;
    gr_result *res;
    gr_bk_result *r;
    gr_status *st;
    gr_bk_overrides ov;
    gr_bk_types ty;        /* keys as uint32 once sorted on the device    */
    size_t n;
    bk_in *kb, *vb;
    bk_in skb, svb;        /* the sorted pairs                            */
    char *sk, *sv;         /* ... sorted on the host                      */
    gr_block *flag;
} bk_call;

/* The plan of the key facts so far (prc -2: the variant's refusal). */
static int bk_plan(bk_call *c, const gr_bk_types *ty)
{
    gr_bk_result *r = c->r;
    int prc = gr_bk_plan_for(c->d, c->d->sm, GR_BK_DENSE, ty, &r->facts,
                             &c->ov, &r->plan);
    if (prc != 0) {
        gr_status_kind(c->st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                       r->plan.why);
        return -1;
    }
    return 0;
}

/* The key check fused into an atomic kernel: num_keys given,
 * nondeterministic or integer values (exact in any order), an atomic
 * variant (asked for, or auto on NVIDIA), and 64-bit atomics for the
 * flag word.  Sets r->fused. */
static int bk_fuse(bk_call *c)
{
    gr_device *d = c->d;
    const gr_request *req = c->req;
    gr_bk_result *r = c->r;
    const int64_t num_keys = req->num_keys;
    if (!(num_keys > 0 && c->n > 0 && !c->ov.exact &&
          (!c->ov.deterministic || gr_bk_exact(&req->bkt)) &&
          d->atomics64)) {
        return 0;
    }
    const char *w = c->ov.variant;
    const int is_auto = w == NULL || strcmp(w, "auto") == 0;
    const int atomic_kind = !is_auto && (strcmp(w, "atomic") == 0 ||
                                         strcmp(w, "warp_aggregated") == 0 ||
                                         strcmp(w, "local_hash") == 0 ||
                                         strcmp(w, "private_bins") == 0);
    if (!(atomic_kind || (is_auto && d->is_gpu && d->nvidia_ptx))) {
        return 0;
    }
    memset(&r->facts, 0, sizeof r->facts);
    r->facts.n = c->n;
    r->facts.num_keys = (size_t)num_keys;
    r->facts.first_bad = UINT64_MAX;
    r->facts.sorted = c->ov.sorted;
    r->facts.unmeasured = 1;
    if (bk_plan(c, &req->bkt) != 0) {
        return -1;
    }
    r->fused = r->plan.variant == GR_BKV_ATOMIC ||
               r->plan.variant == GR_BKV_WARP ||
               r->plan.variant == GR_BKV_HASH ||
               (r->plan.variant == GR_BKV_PRIV && r->plan.lcopies > 0);
    return 0;
}

/* Unfused: the keys measured (one wait, without the lock), checked,
 * planned; whether a sort comes first and where (why says). */
static int bk_measure(bk_call *c)
{
    gr_device *d = c->d;
    gr_request *req = c->req;
    gr_bk_result *r = c->r;
    const size_t n = c->n;
    const int64_t num_keys = req->num_keys;
    cl_ulong *words = NULL;
    size_t groups = 0;
    cl_event ev = NULL;
    const uint64_t bound = num_keys >= 0 ? (uint64_t)num_keys
                                         : (uint64_t)1 << 62;
    r->ns_stats = 0;
    if (gr_bykey_stats_enqueue(d, &req->bkt, c->kb->mem, c->kb->base, n,
                               bound,
                               req->mode == GR_BENCH ? &r->ns_stats : NULL,
                               &words, &groups, &ev, c->st) != 0) {
        return -1;
    }
    if (ev != NULL) {
        gr_unlock(d);
        int wrc = gr_event_wait_intr(d, ev, NULL, NULL, c->st);
        gr_lock(d);
        clReleaseEvent(ev);
        if (wrc != 0) {
            free(words);
            return -1;
        }
    }
    gr_bykey_stats_combine(words, groups, n, &r->facts);
    free(words);
    if (r->facts.first_bad != UINT64_MAX) {
        bad_key(d, req, c->kb->mem, c->kb->base, r->facts.first_bad, c->st);
        return -1;
    }
    r->facts.num_keys = num_keys >= 0 ? (size_t)num_keys
                        : n ? (size_t)r->facts.max_key + 1 : 0;
    r->facts.sorted = c->ov.sorted;
    if (bk_plan(c, &req->bkt) != 0) {
        return -1;
    }
    r->needs_sort = (r->plan.variant == GR_BKV_SEGMENTS ||
                     r->plan.variant == GR_BKV_LOOKBACK) &&
                    r->facts.descents != 0;
    if (r->needs_sort) {
        /* the pairs sorted first: on the device where its radix sort
         * takes them (keys and length below 2^32), else on the host */
        const size_t at = strlen(r->plan.why);
        r->needs_sort = gr_bykey_sort_fits(n, r->facts.max_key) ? 1 : 2;
        if (r->needs_sort == 1) {
            snprintf(r->plan.why + at, sizeof r->plan.why - at,
                     "; keys not sorted: stable radix sort on the "
                     "device first (%d passes of 8 bits)",
                     gr_bykey_sort_passes(r->facts.max_key));
        } else {
            snprintf(r->plan.why + at, sizeof r->plan.why - at,
                     "; keys not sorted: stable radix sort on the host "
                     "first (keys or length past 2^32)");
        }
    }
    return 0;
}

/* Deterministic on unsorted keys: a stable sort on the device, then
 * sorted segments over uint32 keys (planned again, the why kept). */
static int bk_sort_device(bk_call *c)
{
    gr_device *d = c->d;
    const gr_request *req = c->req;
    gr_bk_result *r = c->r;
    if (gr_bykey_sort_dev(d, &req->bkt, c->ov.wg_size, c->ov.items,
                          c->kb->mem, c->kb->base, c->vb->mem, c->vb->base,
                          c->n, r->facts.max_key, &c->skb.tmp, &c->svb.tmp,
                          req->mode == GR_BENCH ? &r->ns_stats : NULL,
                          c->st) != 0) {
        return -1;
    }
    c->skb.mem = c->skb.tmp->mem;
    c->svb.mem = c->svb.tmp != NULL ? c->svb.tmp->mem : c->vb->mem;
    c->svb.base = c->svb.tmp != NULL ? 0 : c->vb->base;
    c->kb = &c->skb;
    c->vb = &c->svb;
    c->ty.k = GR_UINT32;
    r->facts.sorted = 1;
    r->facts.descents = 0;
    c->ov.sorted = 1;
    char why[sizeof r->plan.why];
    memcpy(why, r->plan.why, sizeof why);
    int prc = gr_bk_plan_for(d, d->sm, GR_BK_DENSE, &c->ty, &r->facts,
                             &c->ov, &r->plan);
    memcpy(r->plan.why, why, sizeof why);
    if (prc != 0) {
        gr_status_kind(c->st, GR_E_VALUE, "%s", r->plan.why);
        return -1;
    }
    return 0;
}

/* Deterministic on unsorted keys past the device sort's range: the pairs
 * (read back where on the device) sorted on the host without the lock,
 * then uploaded and planned again. */
static int bk_sort_host(bk_call *c)
{
    gr_device *d = c->d;
    const gr_request *req = c->req;
    gr_bk_result *r = c->r;
    gr_status *st = c->st;
    const size_t n = c->n;
    const size_t ksz = isz_of(req->bkt.k), vsz = isz_of(req->bkt.v);
    char *hk = req->in.host, *hv = req->vals.host;
    char *rk = NULL, *rv = NULL;
    if (hk == NULL && (rk = malloc(n * ksz)) != NULL &&
        dp_read_unlocked(d, c->kb->mem, c->kb->base * ksz, n * ksz, rk,
                         st) != 0) {
        free(rk);
        return -1;
    }
    if (hv == NULL && (rv = malloc(n * vsz)) != NULL &&
        dp_read_unlocked(d, c->vb->mem, c->vb->base * vsz, n * vsz, rv,
                         st) != 0) {
        free(rk);
        free(rv);
        return -1;
    }
    if ((hk == NULL && rk == NULL) || (hv == NULL && rv == NULL)) {
        free(rk);
        free(rv);
        gr_status_kind(st, GR_E_MEMORY, "out of host memory");
        return -1;
    }
    gr_unlock(d);
    int rc = host_sort_by_key(hk ? hk : rk, hv ? hv : rv, n, ksz, vsz,
                              r->facts.max_key, &c->sk, &c->sv, st);
    gr_lock(d);
    free(rk);
    free(rv);
    if (rc != 0) {
        return -1;
    }
    if (gr_input_from_host(d, c->sk, n * ksz, ksz, &c->skb.host, st) != 0 ||
        gr_input_from_host(d, c->sv, n * vsz, vsz, &c->svb.host, st) != 0) {
        return -1;
    }
    c->skb.mem = c->skb.host.mem;
    c->skb.base = c->skb.host.base;
    c->svb.mem = c->svb.host.mem;
    c->svb.base = c->svb.host.base;
    c->kb = &c->skb;
    c->vb = &c->svb;
    r->facts.sorted = 1;
    r->facts.descents = 0;
    c->ov.sorted = 1;
    int prc = gr_bk_plan_for(d, d->sm, GR_BK_DENSE, &req->bkt, &r->facts,
                             &c->ov, &r->plan);
    if (prc != 0) {
        gr_status_kind(st, GR_E_VALUE, "%s", r->plan.why);
        return -1;
    }
    return 0;
}

/* The bins, the aggregation (reps: timed runs), and the fused check's
 * flag word. */
static int bk_aggregate(bk_call *c)
{
    gr_device *d = c->d;
    gr_request *req = c->req;
    gr_result *res = c->res;
    gr_bk_result *r = c->r;
    gr_status *st = c->st;
    const size_t n = c->n, nk = r->facts.num_keys;
    const size_t rs = isz_of(req->bkt.r);
    if ((res->blk[1] = gr_block_get(d, nk ? nk * rs : 8, st)) == NULL ||
        (c->flag = gr_block_get(d, 8, st)) == NULL) {
        return -1;
    }
    for (int i = 0; i < (req->mode == GR_BENCH ? req->reps : 1); ++i) {
        double t = 0.0;
        if (gr_bykey_dense_dev(d, &c->ty, &r->plan, c->kb->mem, c->kb->base,
                               c->vb->mem, c->vb->base, n, nk,
                               res->blk[1]->mem, c->flag->mem,
                               req->mode == GR_BENCH ? &t : NULL, st) != 0) {
            return -1;
        }
        if (req->ns != NULL) {
            req->ns[i] = t + r->ns_stats;
        }
    }
    if (r->fused && nk > 0 && n > 0) {
        cl_ulong fb = 0;
        if (dp_read_unlocked(d, c->flag->mem, 0, 8, &fb, st) != 0) {
            return -1;
        }
        if (fb != UINT64_MAX) {
            bad_key(d, req, c->kb->mem, c->kb->base, fb, st);
            return -1;
        }
    }
    res->count = nk;
    return 0;
}

/* exact=True on the host (plan.exact 2): the pairs (read back where on
 * the device) into a long accumulator a key without the lock, each
 * rounded once (host_exact.c); the bins written into the result's block.
 * Timed runs (reps) take the host's wall time. */
static int bk_exact_host(bk_call *c)
{
    gr_device *d = c->d;
    const gr_request *req = c->req;
    gr_status *st = c->st;
    const size_t n = c->n, nk = c->r->facts.num_keys;
    const size_t ksz = isz_of(req->bkt.k), vsz = isz_of(req->bkt.v);
    const size_t rs = isz_of(req->bkt.r);
    const char *hk = req->in.host, *hv = req->vals.host;
    char *rk = NULL, *rv = NULL, *out = NULL;
    int rc = -1, hrc = 0;
    if ((c->res->blk[1] = gr_block_get(d, nk ? nk * rs : 8, st)) == NULL) {
        return -1;
    }
    if ((hk == NULL && (rk = malloc(n * ksz + 8)) == NULL) ||
        (hv == NULL && (rv = malloc(n * vsz + 8)) == NULL) ||
        (out = malloc(nk * rs + 8)) == NULL) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory summing %zu "
                       "values exactly", n);
        goto out;
    }
    if (n > 0 && ((rk != NULL && dp_read_unlocked(d, c->kb->mem,
                                                  c->kb->base * ksz, n * ksz,
                                                  rk, st) != 0) ||
                  (rv != NULL && dp_read_unlocked(d, c->vb->mem,
                                                  c->vb->base * vsz, n * vsz,
                                                  rv, st) != 0))) {
        goto out;
    }
    for (int i = 0; i < (req->mode == GR_BENCH ? req->reps : 1); ++i) {
        struct timespec t0, t1;
        gr_unlock(d);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        hrc = gr_host_exact_bykey(hk ? hk : rk, req->bkt.k, hv ? hv : rv,
                                  req->bkt.v, n, nk, req->bkt.r, out);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        gr_lock(d);
        if (req->ns != NULL) {
            req->ns[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e9 +
                         (double)(t1.tv_nsec - t0.tv_nsec) + c->r->ns_stats;
        }
    }
    if (hrc != 0) {
        gr_status_kind(st, GR_E_MEMORY, "out of host memory: %zu long "
                       "accumulators", nk);
        goto out;
    }
    if (nk > 0) {
        GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, c->res->blk[1]->mem,
                                             CL_TRUE, 0, nk * rs, out, 0,
                                             NULL, NULL));
    }
    c->res->count = nk;
    rc = 0;
fail:
out:
    free(rk);
    free(rv);
    free(out);
    return rc;
}

/* sum_by_key: key facts (or the fused check), plan, sort if asked to be
 * deterministic on unsorted keys, bins, aggregation.  gr_lock held. */
static int bykey_dense(gr_device *d, gr_request *req, gr_result *res,
                       bk_in *kb, bk_in *vb, gr_status *st)
{
    bk_call c = {d, req, res, &res->bk, st,
                 {req->kn.variant, req->kn.wg_size,
                  req->kn.items > 0 ? (size_t)req->kn.items : 0,
                  req->deterministic, req->sorted, req->bk_exact},
                 req->bkt, req->in.shape[0], kb, vb};
    gr_bk_result *r = c.r;
    int rc = -1;
    r->facts.first_bad = UINT64_MAX;
    r->fused = 0;
    if (bk_fuse(&c) != 0 || (!r->fused && bk_measure(&c) != 0)) {
        return -1;
    }
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    const size_t nk = r->facts.num_keys;
    const size_t rs = isz_of(req->bkt.r);
    if (nk * rs / (rs ? rs : 1) != nk || (d->max_alloc && nk * rs > d->max_alloc)) {
        gr_status_kind(st, GR_E_MEMORY, "sum_by_key: %zu bins of %zu bytes "
                       "do not fit device '%s' (largest buffer %llu bytes)",
                       nk, rs, d->name, (unsigned long long)d->max_alloc);
        return -1;
    }
    if (r->plan.exact == 2) {
        rc = bk_exact_host(&c);
    } else if ((r->needs_sort == 1 && bk_sort_device(&c) == 0) ||
        (r->needs_sort == 2 && bk_sort_host(&c) == 0) ||
        r->needs_sort == 0) {
        rc = bk_aggregate(&c);
    }
    if (c.sk != NULL || c.sv != NULL) {
        /* the sorted copies were read in place or uploaded: finish first */
        clFinish(d->queue);
    }
    bk_in_close(&c.skb);
    bk_in_close(&c.svb);
    free(c.sk);
    free(c.sv);
    gr_block_put(c.flag);
    return rc;
}

/* reduce_by_key / scan_by_key: plan, outputs of capacity n, the segmented
 * kernels, and reduce_by_key's run count (read without gr_lock).  A result
 * much shorter than its capacity is moved into a block of its size. */
static int bykey_runs(gr_device *d, gr_request *req, gr_result *res,
                      bk_in *kb, bk_in *vb, gr_status *st)
{
    gr_bk_result *r = &res->bk;
    gr_bk_overrides ov = {req->kn.variant, req->kn.wg_size,
                          req->kn.items > 0 ? (size_t)req->kn.items : 0,
                          req->deterministic, -1};
    const size_t n = req->in.shape[0];
    const size_t rs = isz_of(req->bkt.r), ks = isz_of(req->bkt.k);
    gr_block *cnt = NULL;
    int rc = -1;
    r->facts.n = n;
    r->facts.sorted = -1;
    r->facts.first_bad = UINT64_MAX;
    int prc = gr_bk_plan_for(d, d->sm, req->bkf, &req->bkt, &r->facts, &ov,
                             &r->plan);
    if (prc != 0) {
        gr_status_kind(st, prc == -2 ? GR_E_VARIANT : GR_E_VALUE, "%s",
                       r->plan.why);
        return -1;
    }
    if (req->mode == GR_EXPLAIN) {
        return 0;
    }
    if ((res->blk[1] = gr_block_get(d, n ? n * rs : 8, st)) == NULL ||
        (req->bkf == GR_BK_REDUCE &&
         ((res->blk[0] = gr_block_get(d, n ? n * ks : 8, st)) == NULL ||
          (cnt = gr_block_get(d, 8, st)) == NULL))) {
        goto out;
    }
    const int mode = req->bkf == GR_BK_REDUCE ? 0 : req->exclusive ? 2 : 1;
    for (int i = 0; i < (req->mode == GR_BENCH ? req->reps : 1); ++i) {
        double t = 0.0;
        if (gr_bykey_segments_dev(d, &req->bkt, &r->plan, mode, kb->mem,
                                  kb->base, vb->mem, vb->base, n,
                                  res->blk[0] ? res->blk[0]->mem : NULL,
                                  res->blk[1]->mem, cnt ? cnt->mem : NULL,
                                  req->mode == GR_BENCH ? &t : NULL,
                                  st) != 0) {
            goto out;
        }
        if (req->ns != NULL) {
            req->ns[i] = t;
        }
    }
    res->count = n;
    if (cnt != NULL) {
        cl_ulong c = 0;
        if (n > 0 && dp_read_unlocked(d, cnt->mem, 0, 8, &c, st) != 0) {
            goto out;
        }
        res->count = (size_t)c;
        if (c > 0 && c * 2 < n) {
            /* keep only what the results need */
            gr_block *bk = NULL, *bv = NULL;
            if ((bk = gr_block_get(d, c * ks, st)) == NULL ||
                (bv = gr_block_get(d, c * rs, st)) == NULL) {
                gr_block_put(bk);
                goto out;
            }
            GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, res->blk[0]->mem,
                                                bk->mem, 0, 0, c * ks, 0, NULL,
                                                NULL));
            GR_CL_CHECK(st, clEnqueueCopyBuffer(d->queue, res->blk[1]->mem,
                                                bv->mem, 0, 0, c * rs, 0, NULL,
                                                NULL));
            gr_block_put(res->blk[0]);
            gr_block_put(res->blk[1]);
            res->blk[0] = bk;
            res->blk[1] = bv;
        }
    }
    rc = 0;
fail:
out:
    gr_block_put(cnt);
    return rc;
}

int dp_run_bykey(gr_request *req, gr_result *res, gr_status *st)
{
    bk_in kb, vb;
    const size_t n = req->in.shape[0];
    int rc = -1;
    memset(&kb, 0, sizeof kb);
    memset(&vb, 0, sizeof vb);
    gr_device *d = dp_dev_begin(req, st);
    if (d == NULL) {
        return -1;
    }
    if (req->mode != GR_EXPLAIN || req->bkf == GR_BK_DENSE) {
        if (bk_in_open(d, &req->in, n, &kb, st) != 0 ||
            bk_in_open(d, &req->vals, n, &vb, st) != 0) {
            goto done;
        }
    }
    if (vb.mem == NULL) {
        vb.mem = kb.mem; /* op count reads no values */
    }
    rc = req->bkf == GR_BK_DENSE ? bykey_dense(d, req, res, &kb, &vb, st)
                                 : bykey_runs(d, req, res, &kb, &vb, st);
    if (kb.host.zero_copy || vb.host.zero_copy) {
        clFinish(d->queue); /* host memory read in place */
    }
done:
    if (rc != 0) {
        gr_result_clear(res);
    }
    bk_in_close(&kb);
    bk_in_close(&vb);
    gr_unlock(d);
    return rc;
}
