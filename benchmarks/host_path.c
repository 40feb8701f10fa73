/*
 * Time per call of the host path (csrc/host.c, issue 12), called from C in
 * a tight loop: gr_host_reduce / gr_host_scan as built into gpured/_core
 * (this program links that very shared object, so it times the code
 * setup.py compiled, -std=c99 -O2 with its target clones).
 *
 *   python3 benchmarks/host_path.py       builds and runs this, then times
 *                                         NumPy and gpured on PoCL alike
 *   host_path [batch_ms [repeats [family [dtype [bytes]]]]]
 *                                         (filters: a name, or "all")
 *
 * Output: one line per case, "family dtype bytes ns_per_call calls".
 * Families: sum, max, argmax, cumsum (1-D), colsum (a C-ordered L x M
 * matrix summed over axis 0: M segments, seg_stride 1, elem_stride M).
 */
#include "host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef struct {
    const char *name;
    gr_op op;
    int scan;
    int col;
} family;

static const family families[] = {
    {"sum", GR_ADD, 0, 0},    {"max", GR_MAX, 0, 0},
    {"argmax", GR_ARGMAX, 0, 0}, {"cumsum", GR_ADD, 1, 0},
    {"colsum", GR_ADD, 0, 1},
};

/* One call of the family on n elements at x (M x L for columns). */
static void call(const family *f, gr_dtype t, const void *x, size_t n,
                 size_t M, void *out)
{
    gr_host_op o;
    o.op = f->op;
    o.t = t;
    o.r = f->op == GR_ARGMAX ? GR_INT64 : t;
    o.wide = 1;
    if (f->scan) {
        gr_host_scan(&o, 0, x, 1, n, (ptrdiff_t)n, 1, out, (ptrdiff_t)n, 1);
    } else if (f->col) {
        gr_host_reduce(&o, x, M, n / M, 1, (ptrdiff_t)M, out);
    } else {
        gr_host_reduce(&o, x, 1, n, (ptrdiff_t)n, 1, out);
    }
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1 << 10, 1 << 12, 1 << 16, 1 << 18,
                                   1 << 20, 1 << 21, 1 << 22, 1 << 23,
                                   1 << 24, 1 << 28};
    const double batch_ns = argc > 1 ? atof(argv[1]) * 1e6 : 20e6;
    const int repeats = argc > 2 ? atoi(argv[2]) : 5;
    const char *ffam = argc > 3 ? argv[3] : "all";
    const char *fdt = argc > 4 ? argv[4] : "all";
    const size_t fsize = argc > 5 ? (size_t)atoll(argv[5]) : 0;
    size_t maxb = fsize ? fsize : sizes[sizeof sizes / sizeof *sizes - 1];
    unsigned char *x = NULL, *out = NULL;
    size_t i;
    int ti, fi, si;
    if (posix_memalign((void **)&x, 64, maxb) != 0 ||
        posix_memalign((void **)&out, 64, maxb) != 0) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* the same random values in [-1, 1) as float32 and float64 inputs */
    srand(12);
    for (ti = 0; ti < 2; ++ti) {
        const gr_dtype t = ti ? GR_FLOAT64 : GR_FLOAT32;
        const size_t esz = ti ? 8 : 4;
        if (strcmp(fdt, "all") != 0 && strcmp(fdt, ti ? "float64" : "float32") != 0) {
            continue;
        }
        for (i = 0; i < maxb / esz; ++i) {
            const double v = 2.0 * rand() / ((double)RAND_MAX + 1) - 1.0;
            if (ti) {
                ((double *)x)[i] = v;
            } else {
                ((float *)x)[i] = (float)v;
            }
        }
        memset(out, 0, maxb);
        /* every family at every size: batches of calls >= batch_ns, the
         * fastest batch's time per call */
        for (fi = 0; fi < (int)(sizeof families / sizeof *families); ++fi) {
            for (si = 0; si < (int)(sizeof sizes / sizeof *sizes); ++si) {
                const size_t n = sizes[si] / esz;
                size_t M = 1;
                long calls = 1, k;
                double best = 1e300;
                int rep;
                if ((strcmp(ffam, "all") != 0 &&
                     strcmp(ffam, families[fi].name) != 0) ||
                    (fsize && fsize != sizes[si])) {
                    continue;
                }
                while (M * M < n) {
                    M *= 2;
                }
                if (M * M > n) { /* a power of two: M x (n / M), M >= L */
                    M = n / (M / 2) > M / 2 ? M : M / 2;
                }
                call(&families[fi], t, x, n, M, out); /* warm-up */
                for (rep = 0; rep < repeats; ++rep) {
                    double t0 = now_ns(), dt;
                    for (k = 0; k < calls; ++k) {
                        call(&families[fi], t, x, n, M, out);
                    }
                    dt = now_ns() - t0;
                    if (dt < batch_ns && rep == 0 && calls < (1L << 30)) {
                        /* grow the batch until it lasts batch_ns */
                        calls = (long)(calls * (batch_ns / (dt + 1.0)) + 1);
                        --rep;
                        continue;
                    }
                    if (dt / calls < best) {
                        best = dt / calls;
                    }
                }
                printf("%s %s %zu %.1f %ld\n", families[fi].name,
                       ti ? "float64" : "float32", sizes[si], best, calls);
                fflush(stdout);
            }
        }
    }
    free(x);
    free(out);
    return 0;
}
