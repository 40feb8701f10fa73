/*
 * gpured — the host path's dense reduce-by-key (issue 41): sum_by_key's
 * loops on host memory, csrc/host_bykey.c has the details.  No OpenCL,
 * no Python.
 */
#ifndef GPURED_HOST_BYKEY_H
#define GPURED_HOST_BYKEY_H

#include "gpured.h"

#include <stddef.h>
#include <stdint.h>

/* One dense by-key call on the host: out[k] = op of vals[i] with
 * keys[i] == k (vals NULL: none; counts only), cnt[k] the number of i
 * with keys[i] == k.  nk SIZE_MAX: the largest key + 1 (one pass on one
 * thread, the bins growing; several threads: a pass for the largest key
 * first).  Keys of any integer dtype, values bool, integers or floats;
 * rt the result dtype (gr_host_bk_result). */
typedef struct {
    const void *keys;
    gr_dtype kt;
    const void *vals;
    gr_dtype vt;
    size_t n, nk;
    gr_op op;             /* GR_ADD, GR_MIN, GR_MAX                        */
    gr_dtype rt;
    int counts;           /* the counts too                                */
    int threads;          /* at most this many (placement's choice)        */
} gr_hbk;

/* Its results (malloc'd; the caller frees them): nk bins of rt, the
 * counts (NULL: not asked). */
typedef struct {
    size_t nk;
    void *out;
    int64_t *cnt;
} gr_hbk_out;

/* The result dtype of op over values vt: NumPy's add.reduce for sums
 * (bool and signed -> int64, unsigned -> uint64, floats keep theirs),
 * vt for min/max. */
gr_dtype gr_host_bk_result(gr_op op, gr_dtype vt);

/* Whether the host loops take these dtypes (keys an integer, values bool,
 * an integer or a float). */
int gr_host_bk_types_ok(gr_dtype kt, gr_dtype vt);

/* The largest key of keys[0..n) (n > 0), or the first negative one:
 * 0 and *max, 1 and *bad (its index), -1 stopped (Ctrl-C). */
int gr_host_bk_keymax(const void *keys, gr_dtype kt, size_t n, uint64_t *max,
                      uint64_t *bad);

/* Runs h into o: 0, 1 where a key is out of [0, nk) or negative (*bad:
 * the first such index), -1 out of memory, -2 stopped (Ctrl-C); o's
 * memory is the caller's to free either way. */
int gr_host_bk_dense(const gr_hbk *h, gr_hbk_out *o, uint64_t *bad);

/* The loops' tasks for nk bins on `threads` threads: privatized bins
 * per task cost nk x copies x 8 bytes each; 1 where they would not fit
 * (host_bykey.c). */
int gr_host_bk_tasks(size_t n, size_t nk, int threads, int counts);

#endif
