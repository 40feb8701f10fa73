/*
 * host_exact.h — the long accumulator of exact sums (host_exact.c), shared
 * by the host path and by the device path's last step (the device's
 * digits are the same format: kernels/exact.cl).
 */
#ifndef GR_HOST_EXACT_H
#define GR_HOST_EXACT_H

#include "gpured.h"

/* 68 digits of 32 bits: bit 0 is worth 2^-1074; a double's bits reach
 * digit 65; two more digits hold the carries of 2^64 additions. */
#define GR_SACC_N 68
/* The host's expansions: GR_EXACT_K doubles in each of 8 lanes. */
#define GR_EXACT_K 2

typedef struct {
    int64_t d[GR_SACC_N];
    uint32_t adds;             /* additions since the last normalisation */
    unsigned char nan, pinf, ninf;
} gr_sacc;

void gr_sacc_init(gr_sacc *s);
void gr_sacc_add(gr_sacc *s, double x);
void gr_sacc_merge(gr_sacc *s, const gr_sacc *o);
void gr_sacc_norm(gr_sacc *s);
double gr_sacc_round(const gr_sacc *s, gr_dtype rt, uint64_t div);
void gr_host_exact_run(const char *p, gr_dtype t, size_t n, ptrdiff_t es,
                       int nan, gr_sacc *s, uint64_t *count);
void gr_host_exact(const char *src, gr_dtype t, size_t M, size_t L,
                   ptrdiff_t ss, ptrdiff_t es, int nan, int mean,
                   const double *init, gr_dtype rt, void *out);
int gr_host_exact_bykey(const char *keys, gr_dtype kt, const char *vals,
                        gr_dtype vt, size_t n, size_t nk, gr_dtype rt,
                        void *out);

#endif
