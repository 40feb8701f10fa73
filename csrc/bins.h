/*
 * bins.h — histogram bin indices (gpured.histogram): what api_bins.c hands
 * to bins.c.  No Python.
 */
#ifndef GPURED_BINS_H
#define GPURED_BINS_H

#include "gpured.h"

typedef struct {
    gr_dtype t;        /* the values' type                                */
    gr_dtype e;        /* the edges' type (NumPy's bin_edges.dtype)       */
    gr_dtype i;        /* the index type: uint8, uint16 or uint32         */
    int uniform;       /* 1: arithmetic (lo, hi, denom), 0: binary search */
    cl_mem a, edges, idx;
    size_t aoff, n;    /* a's first element, count                        */
    unsigned nb;       /* bins                                            */
    unsigned char lo[8], hi[8], denom[8]; /* in type e                    */
} gr_bins_call;

/* Enqueue the index kernel on device dev (takes gr_lock).  0, or -1. */
int gr_bins_run(int dev, const gr_bins_call *c, gr_status *st);

/* gpured.unique's keys: n float bits of type t (uint16, uint32, uint64)
 * at a[aoff..] as order-preserving keys of type kt (uint32, uint64) into
 * key (kernels/bins.cl, gr_float_key; takes gr_lock).  0, or -1. */
int gr_bins_fkey(int dev, cl_mem a, size_t aoff, gr_dtype t, size_t n,
                 uint64_t expo, uint64_t qnan, cl_mem key, gr_dtype kt,
                 gr_status *st);

/* gpured.unique's sort: a stable LSD radix sort of n uint32 keys (below
 * max_key + 1) and their values of type v (GR_NDTYPES: none) on device
 * dev, by the by-key family's radix sort (gr_bykey_sort_dev, kernels/
 * bykey.cl; takes gr_lock).  The sorted keys and values come back in pool
 * blocks *okeys, *ovals (the caller's).  0, or -1. */
int gr_bins_sort(int dev, cl_mem keys, size_t koff, cl_mem vals, size_t voff,
                 gr_dtype v, size_t n, uint64_t max_key, gr_block **okeys,
                 gr_block **ovals, gr_status *st);

#endif
