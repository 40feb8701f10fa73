/*
 * gpured — policy layer: placement.  Where a call on host memory runs (the
 * host path or a device, gr_place), the rates behind it, the host path's
 * threads (gr_host_par) and factors (gr_host_factor, gr_seg_short), and
 * splits between two devices (gr_split_plan).  No OpenCL, no Python.
 */
#include "policy.h"
#include "host_api.h"
#include "hostpar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ============================================================= placement
 * Where a call on host memory runs: the host path (host.c: C on the
 * calling thread, no OpenCL) or the device.  A time model per side,
 *
 *     t = per-call cost + bytes / rate,
 *
 * with rates per family (contiguous reductions, argmin/argmax, column
 * reductions, scans) that gpured.tune() measures on the machine
 * (gr_rates_set); the defaults below are safe guesses from the 2-core CI
 * machine (benchmarks/host_path.py, 2026-11-23: the host path beat PoCL up
 * to 8 MiB for sums, 4 MiB for scans, at every size for argmax and
 * columns) and the H100 host (OpenCL call ~60 us, pinned transfers ~25
 * GB/s).  With several devices (gr_place), each device's rates are its
 * own: a CPU device reads NumPy memory in place (PoCL 5 on the H100
 * host's 16 cores: ~100 GB/s for sums), a GPU through the pinned
 * pipeline. */

/* The default rates, one row per side: the host path's, a GPU's, a CPU
 * device's (dev_gbs a core, times its cores). */
typedef struct {
    const char *row;
    double call_ns;            /* per-call cost                            */
    double gbs[GR_NRATES];     /* bytes per ns, per family                 */
    int per_core;              /* gbs a core                               */
} rates_row;

enum { RT_HOST, RT_GPU, RT_CPU };

static const rates_row rates_rows[] = {
    /* the host path in cache on the 2-core machine: sums ~25 GB/s,
     * argmax 23, float32 columns 22, cumsum 4 (benchmarks/host_path.py,
     * 1 MiB); half of that, as its DRAM-bound rate is lower (sums of 256
     * MiB: 9 GB/s).  With 8 GB/s for sums the H100 host sent a 1 MiB
     * NumPy sum to the GPU: 0.134 ms, numpy 0.112.  Scans 1.5 (issue 39:
     * 2.0 priced a 1 GiB float32 cumsum at 0.54 s; it takes 0.9-1.25 s
     * unloaded; float32 cumsum 1 / 16 / 256 / 1024 MiB: 6.0 / 3.3 / 1.8 /
     * 1.0 GB/s, 2-core machine, 2026-11-28, journal (issue 39);
     * 1.5 is within 4x of each, so a quiet machine never re-measures).
     * Sums checked then: float32 41 / 24 / 8.8 / 5.2 GB/s, float64 (TwoSum
     * lanes) 6.3 / 2.8 / 2.4 / 2.7 at load 4-8 (quieter, a1aaece: half
     * float32's a byte): 16 stays, within 4x but at the loaded float64's
     * edge, where the re-measure (place_remeasure.c) takes over. */
    [RT_HOST] = {"host path", 200,
                 {[GR_RATE_REDUCE] = 16.0, [GR_RATE_ARG] = 12.0,
                  [GR_RATE_COLUMN] = 12.0, [GR_RATE_SCAN] = 1.5}, 0},
    /* the H100 host: OpenCL call ~60 us, pinned transfers ~25 GB/s */
    [RT_GPU] = {"gpu, pinned transfers", 60000,
                {[GR_RATE_REDUCE] = 25.0, [GR_RATE_ARG] = 25.0,
                 [GR_RATE_COLUMN] = 25.0, [GR_RATE_SCAN] = 8.0}, 0},
    /* GPU host's PoCL 5 (16 cores): 1 GiB cumsum ~170 ms, slower than
     * the GPU's pinned pipeline (115 ms): 0.4 GB/s a core keeps scans of
     * NumPy arrays on the GPU there */
    [RT_CPU] = {"cpu device, in place", 120000,
                {[GR_RATE_REDUCE] = 4.0, [GR_RATE_ARG] = 1.0,
                 [GR_RATE_COLUMN] = 1.0, [GR_RATE_SCAN] = 0.4}, 1},
};

static gr_rates rates_default(const gr_device *d)
{
    const rates_row *h = &rates_rows[RT_HOST];
    const rates_row *v = &rates_rows[d->is_gpu ? RT_GPU : RT_CPU];
    const double cores = d->compute_units ? d->compute_units : 1;
    gr_rates r;
    memset(&r, 0, sizeof r);
    r.host_call_ns = h->call_ns;
    r.dev_call_ns = v->call_ns;
    for (int f = 0; f < GR_NRATES; ++f) {
        r.host_gbs[f] = h->gbs[f];
        r.dev_gbs[f] = v->per_core ? v->gbs[f] * cores : v->gbs[f];
    }
    return r;
}

#define MAX_RATES 16
static struct {
    char device[256];
    gr_rates r;
} rates_tab[MAX_RATES];
static int nrates = 0;
static int placement_auto = 1;

void gr_rates_set(const char *device, const gr_rates *r)
{
    for (int i = 0; i < nrates; ++i) {
        if (strcmp(rates_tab[i].device, device) == 0) {
            rates_tab[i].r = *r;
            return;
        }
    }
    if (nrates < MAX_RATES) {
        snprintf(rates_tab[nrates].device, sizeof rates_tab[nrates].device,
                 "%s", device);
        rates_tab[nrates++].r = *r;
    }
}

void gr_rates_get(const gr_device *d, gr_rates *r, int *measured)
{
    for (int i = 0; i < nrates; ++i) {
        if (strcmp(rates_tab[i].device, d->name) == 0) {
            *r = rates_tab[i].r;
            *measured = 1;
            return;
        }
    }
    *r = rates_default(d);
    *measured = 0;
}

void gr_placement_set(int automatic) { placement_auto = automatic; }
int gr_placement_auto(void) { return placement_auto; }

int gr_rate_family(gr_family fam, gr_op op, const gr_layout *lay)
{
    if (fam == GR_FAM_SCAN) {
        return GR_RATE_SCAN;
    }
    if (op == GR_ARGMIN || op == GR_ARGMAX) {
        return GR_RATE_ARG;
    }
    if (lay->elem_stride != 1 && lay->M > 1) {
        return GR_RATE_COLUMN;
    }
    return GR_RATE_REDUCE;
}

/* A device's time for nbytes of family f by its rates. */
static double place_dev_ns(const gr_device *d, int f, size_t nbytes)
{
    gr_rates r;
    int measured = 0;
    gr_rates_get(d, &r, &measured);
    return r.dev_call_ns + (double)nbytes / r.dev_gbs[f];
}

/* ------------------------------------------------------- host threads
 * A large call on the host path runs on several threads (hostpar.c's
 * pool; host.c cuts it into tasks of at least `grain` bytes).  Its time:
 *
 *     host call + pool call + bytes / min(gbs[f], k x host rate),
 *
 * k the threads that get a task, gbs[f] the rate with every thread
 * (measured by gpured.measure_rates; by default threads x the host rate /
 * 2).  Threads: GPURED_HOST_THREADS, gpured.host_threads(n), or (auto)
 * the CPUs this process may use where they are 4 or more, else 1 (on the
 * 2-core CI machine a second thread measured slower: 2026-11-26).  The
 * first part of a request's slowness (nan*'s copy, var's passes: slow) is
 * not cut. */
static struct {
    int threads;          /* -1: automatic                                */
    size_t grain;         /* bytes a task at least (0: host.c's 128 KiB)  */
    double call_ns;       /* a job on the pool: waking and joining        */
    double gbs[GR_NRATES];/* bytes per ns, every thread (0: default)      */
    int measured;
} hpar = {-1, 0, 15000, {0, 0, 0, 0}, 0};

int gr_hpar_threads(void)
{
    if (hpar.threads >= 1) {
        return hpar.threads;
    }
    const int c = gr_par_cpus();
    return c >= 4 ? c : 1;
}

void gr_hpar_get(gr_hpar *p)
{
    p->threads = gr_hpar_threads();
    p->automatic = hpar.threads < 1;
    p->grain = hpar.grain;
    p->call_ns = hpar.call_ns;
    memcpy(p->gbs, hpar.gbs, sizeof p->gbs);
    p->measured = hpar.measured;
}

void gr_hpar_set(const gr_hpar *p)
{
    hpar.threads = p->automatic ? -1 : p->threads;
    hpar.grain = p->grain;
    hpar.call_ns = p->call_ns;
    memcpy(hpar.gbs, p->gbs, sizeof hpar.gbs);
    hpar.measured = p->measured;
}

/* The threads' rate for family f with every thread (bytes per ns). */
static double hpar_gbs(const gr_rates *r, int f)
{
    return hpar.gbs[f] > 0 ? hpar.gbs[f] : r->host_gbs[f] * gr_hpar_threads() / 2;
}

/* The host path's time on one thread for family f. */
static double host_ns(const gr_rates *r, int f, size_t nbytes, double slow)
{
    return r->host_call_ns + slow * (double)nbytes / r->host_gbs[f];
}

/* The host path's time with threads for family f, INFINITY where the call
 * would not be cut (one thread, under two tasks).  (Scans cut in pieces
 * read their input twice; host.c does not cut long float cumprods.) */
static double hpar_ns(const gr_rates *r, int f, size_t nbytes, double slow)
{
    const int T = gr_hpar_threads();
    const size_t tasks = nbytes / (hpar.grain ? hpar.grain : GR_HOST_GRAIN);
    if (T < 2 || tasks < 2) {
        return INFINITY;
    }
    const double k = (double)(tasks < (size_t)T ? tasks : (size_t)T);
    const double rate = fmin(hpar_gbs(r, f), k * r->host_gbs[f]);
    return r->host_call_ns + hpar.call_ns +
           (slow - 1.0) * (double)nbytes / r->host_gbs[f] +
           (double)nbytes / rate;
}

void gr_host_par(int dev, int f, size_t nbytes, int *threads, size_t *grain)
{
    gr_rates r;
    int measured = 0;
    gr_rates_get(gr_device_get(dev), &r, &measured);
    *threads = hpar_ns(&r, f, nbytes, 1.0) < host_ns(&r, f, nbytes, 1.0)
                   ? gr_hpar_threads() : 1;
    *grain = hpar.grain;
}

/* The host path's factors (gr_host_work), each with the measurement
 * that set it.  The request's bytes are priced at factor x the plain
 * form's host time; the device's loads test and mask in place.
 *
 * COPY_REDUCE, COPY_SCAN: The host path's nan* requests gather a copy and rewrite it (NaN
 * replaced) before the reduction or scan, where the device's loads test in
 * place: the placement rule counts them this much slower than their plain
 * forms.  2-core PoCL machine, 1 MiB float32 (2026-11-25): nansum 0.84 ms
 * on the host path vs sum 0.041 ms; a scan is itself slow enough that the
 * copy about doubles it.  Counts (count_nonzero, nanmean's) read in place
 * (host.c gr_host_count), as a sum does.
 *
 * VAR, NANMEAN: var/std on the host path: NumPy's two passes per segment (host.c
 * gr_host_var), rounded once into the result dtype.  The placement rule
 * counts them 5x a sum's time: 2-core machine, float32, host var / host
 * sum 6.7x at 4 MiB, 6.2x at 16, 4.3x at 64 (2026-11-26; it was priced at
 * 2x, which the host sum's default rate of 8 GB/s hid).  nanmean's one
 * pass (mode 3) at 2x: its NaN masks in double lanes ran at 0.6 of a sum's
 * rate (256 KiB-1 MiB float32, 2026-11-25).
 *
 * PTP: ptp on the host path: the host's max and its min (two passes, placed as
 * such: GR_HW_PTP), then their difference.  2-core machine, float32, host /
 * PoCL: 1 MiB 0.03 / 0.13 ms, 4 MiB 0.11 / 0.20, 16 MiB 0.47 / 0.47, 64
 * MiB 4.05 / 2.26 (2026-11-26): 2.2 puts the edge near 10 MB with the
 * default rates. */
static const double host_factors[GR_NHW] = {
    [GR_HW_PLAIN] = 1.0,
    [GR_HW_COPY_REDUCE] = 16.0, /* nansum 0.84 ms vs sum 0.041, 1 MiB f32 */
    [GR_HW_COPY_SCAN] = 2.0,    /* the copy about doubles a scan          */
    [GR_HW_VAR] = 5.0,          /* host var / sum 4.3-6.7x, 4-64 MiB f32  */
    [GR_HW_NANMEAN] = 2.0,      /* NaN masks at 0.6 of a sum's rate       */
    [GR_HW_PTP] = 2.2,          /* edge near 10 MB with default rates     */
    [GR_HW_EXACT] = 2.0,        /* exact f64 sum / plain host sum, 2 cores */
};

double gr_host_factor(gr_host_work w) { return host_factors[w]; }

/* float32 segments averaging fewer elements than this (float64: half as
 * many) take sum_short_segments (2 cores, 16 MiB against
 * numpy.add.reduceat: float32 1.06-1.72x at 8-63 elements; float64 1.03x
 * at 8, 0.9 at 16, and 0.6-0.7 from 32 on either way: TwoSum against
 * NumPy's plain adds). */
size_t gr_seg_short(gr_dtype t) { return t == GR_FLOAT32 ? 64 : 32; }

/* The model's times for a call of family f on nbytes of host memory with
 * the current device cur: the host path's (slow: how much slower than
 * its plain form it runs this request), the current device's, and the
 * fastest device's, d1 (the current one first: ties keep it; with roam
 * every device, those without fp64 left out where cur has it), and the
 * next fastest, d2 (-1: none), for a split. */

typedef struct {
    double host, here, dev_ns; /* dev_ns: d1's */
    double host0, dev0;        /* host's and d1's without re-measure     */
    int d1, d2;
    int par; /* the host path's time is on several threads */
} place_times;

/* Every time is the model's times the side's re-measured factor
 * (place_remeasure.c; 1 until a large call was more than 4x off). */
static void place_times_of(int cur, int roam, int f, size_t nbytes,
                           double slow, place_times *pt)
{
    const gr_device *d = gr_device_get(cur);
    gr_rates r;
    int measured = 0;
    gr_rates_get(d, &r, &measured);
    const double one = host_ns(&r, f, nbytes, slow),
                 par = hpar_ns(&r, f, nbytes, slow);
    pt->par = par < one;
    pt->host0 = pt->par ? par : one;
    pt->host = pt->host0 * gr_remeasure_factor(-1, f, nbytes);
    pt->dev0 = r.dev_call_ns + (double)nbytes / r.dev_gbs[f];
    pt->here = pt->dev_ns =
        pt->dev0 * gr_remeasure_factor(cur, f, nbytes);
    pt->d1 = cur;
    pt->d2 = -1;
    double t2 = INFINITY;
    for (int i = 0; roam && i < gr_device_count(); ++i) {
        const gr_device *c = gr_device_get(i);
        if (i == cur || (!c->fp64 && d->fp64)) {
            continue;
        }
        const double t0 = place_dev_ns(c, f, nbytes),
                     t = t0 * gr_remeasure_factor(i, f, nbytes);
        if (t < pt->dev_ns) {
            pt->dev0 = t0;
            t2 = pt->dev_ns;
            pt->d2 = pt->d1;
            pt->dev_ns = t;
            pt->d1 = i;
        } else if (t < t2) {
            t2 = t;
            pt->d2 = i;
        }
    }
}

/* explain()'s words for the factors in force (the host path's, the
 * device's the call would run on), after the figures. */
static void place_why_factors(char *why, size_t n, int f, size_t nbytes,
                              int dev)
{
    size_t w = strlen(why);
    if (w < n) {
        w += (size_t)gr_remeasure_why(-1, f, nbytes, why + w, n - w);
    }
    if (w < n) {
        gr_remeasure_why(dev, f, nbytes, why + w, n - w);
    }
}

int gr_place(int *dev, int roam, gr_family fam, gr_op op,
             const gr_layout *lay, size_t nbytes, double slow,
             const char *slow_why, char *why, size_t n)
{
    const gr_device *d = gr_device_get(*dev);
    gr_rates r;
    int measured = 0;
    gr_rates_get(d, &r, &measured);
    const int f = gr_rate_family(fam, op, lay);
    /* slow: how much slower than its plain form the host path runs this
     * request (nan*, count: a copy rewritten first; var/std: two passes;
     * dispatch.c) */
    const int copies = slow > 1.0;
    /* another device, by its own rates (a CPU device reads host memory in
     * place; a GPU's rates include the transfers) */
    place_times pt;
    place_times_of(*dev, roam, f, nbytes, slow, &pt);
    const double host = pt.host, here = pt.here, best_ns = pt.dev_ns;
    const int best = pt.d1;
    const int on_host = host <= best_ns;
    if (!on_host) {
        *dev = best;
    }
    /* what gr_dispatch compares the wall time with (re-measure) */
    const gr_place_note note = {1, on_host ? -1 : best, f, nbytes,
                                on_host ? pt.host0 : pt.dev0,
                                on_host ? host : best_ns};
    gr_place_note_set(&note);
    if (why == NULL) {
        return on_host; /* not explaining: formatting floats costs 1 us */
    }
    static const char *const names[] = {"reduction", "argmin/argmax",
                                        "column reduction", "scan"};
    char par[96] = "";
    if (pt.par) {
        snprintf(par, sizeof par, " on %d threads (%.1f GB/s %s + %.1f us)",
                 gr_hpar_threads(), hpar_gbs(&r, f),
                 hpar.measured ? "measured" : "default", hpar.call_ns / 1e3);
    }
    int w = snprintf(why, n, "%s of %zu bytes: host path%s %.1f us vs %s '%s' "
                     "%.1f us (%s rates: host %.1f GB/s%s + %.1f us, device "
                     "%.1f GB/s + %.1f us)", names[f], nbytes, par, host / 1e3,
                     d->is_gpu ? "GPU" : "CPU device", d->name, here / 1e3,
                     measured ? "measured" : "default", r.host_gbs[f] / slow,
                     copies ? slow_why : "", r.host_call_ns / 1e3,
                     r.dev_gbs[f], r.dev_call_ns / 1e3);
    if (w > 0 && (size_t)w < n && best != d->index) {
        const gr_device *b = gr_device_get(best);
        snprintf(why + w, n - (size_t)w, "; %s %d:%d '%s' %.1f us%s",
                 b->is_gpu ? "GPU" : "CPU device", b->pidx, b->didx,
                 b->name, best_ns / 1e3, on_host ? "" : ": it runs there");
    }
    place_why_factors(why, n, f, nbytes, *dev);
    return on_host;
}

/* ------------------------------------------------------ by-key
 * sum_by_key on host memory (issue 41): the host path's loops
 * (host_bykey.c) or the device's kernels, priced as the reduction family
 * times a factor a side.  The host loop converts a block of keys into
 * bin indices, then folds the values into privatized bins: BK_HOST times
 * a sum's time while the bins stay in cache, BK_HOST_BIG beyond
 * BK_CACHE_BINS bytes of them (a miss an element).  The device's dense
 * kernels (atomics, private bins, sorted segments) run at BK_GPU /
 * BK_CPU of its reduction rate, the key check's pass included.  2-core
 * PoCL machine at load 5-7, 16 Mi float32 + int64 / int32 keys into 16
 * and 1024 keys (benchmarks/host_bykey.py, 2026-11-28): host path 77-111
 * ms (2.4 GB/s against the host sum's 16 default: BK_HOST 3 is within
 * 2x), PoCL 136-174 ms (PoCL's sum rate 8 GB/s / 6 = 1.3 GB/s: 145 ms
 * modelled).  1 Mi keys (8 MiB of bins): 16 ns a pair against 5 in cache
 * (BK_HOST_BIG).  H200 host (16 threads), the same 16 Mi pairs into 16
 * to 4096 keys (benchmarks/exp/hbk_h200.py, 2026-11-28): host path 7.3-7.5
 * ms (modelled 4.7), the GPU with the upload 3.9-4.3 ms (modelled 12.1 at
 * BK_GPU 1.5: the H200's dense kernels read as fast as its sums do, the
 * upload is what costs), so BK_GPU 0.5. */
#define BK_HOST 3.0
#define BK_HOST_BIG 9.0
#define BK_CACHE_BINS (1u << 20)
#define BK_GPU 0.5
#define BK_CPU 6.0

int gr_place_bykey(int dev, size_t nbytes, size_t nk, int *threads, char *why,
                   size_t n)
{
    const gr_device *d = gr_device_get(dev);
    gr_rates r;
    int measured = 0;
    gr_rates_get(d, &r, &measured);
    const int f = GR_RATE_REDUCE;
    const double fh = nk * 8 > BK_CACHE_BINS ? BK_HOST_BIG : BK_HOST;
    const double fd = d->is_gpu ? BK_GPU : BK_CPU;
    const double one = host_ns(&r, f, nbytes, fh);
    const int T = gr_hpar_threads();
    const size_t tasks = nbytes / (hpar.grain ? hpar.grain : GR_HOST_GRAIN);
    double par = INFINITY;
    if (T > 1 && tasks >= 2) {
        const double k = (double)(tasks < (size_t)T ? tasks : (size_t)T);
        par = r.host_call_ns + hpar.call_ns +
              fh * (double)nbytes / fmin(hpar_gbs(&r, f), k * r.host_gbs[f]);
    }
    const double host = fmin(one, par);
    const double dev_ns = r.dev_call_ns + fd * (double)nbytes / r.dev_gbs[f];
    *threads = par < one ? T : 1;
    const int on_host = host <= dev_ns;
    if (why != NULL) {
        snprintf(why, n, "sum_by_key of %zu bytes into %zu bins: host path "
                 "on %d thread%s %.1f us vs %s '%s' %.1f us (%s rates: "
                 "reduction rates x %.1f on the host, x %.1f on the device)",
                 nbytes, nk, *threads, *threads > 1 ? "s" : "", host / 1e3,
                 d->is_gpu ? "GPU" : "CPU device", d->name, dev_ns / 1e3,
                 measured ? "measured" : "default", fh, fd);
    }
    return on_host;
}

/* ------------------------------------------------------------ splits */

/* One call on host memory split between two devices at once (issue 12):
 * each reads its share (a CPU device in place, a GPU through its pinned
 * pipeline or the registered array), the partials are combined on the
 * host.  Both shares come out of the host's memory, so their own rates do
 * not add: the pair's rate together (GB/s per family, measured by
 * gpured.tune() on a machine with two devices, gr_split_set) is what the
 * model uses, and 0 -- the default, nothing measured -- never splits. */
static double split_gbs[GR_NRATES];

void gr_split_set(const double *gbs)
{
    memcpy(split_gbs, gbs, sizeof split_gbs);
}

void gr_split_get(double *gbs)
{
    memcpy(gbs, split_gbs, sizeof split_gbs);
}

int gr_split_plan(int cur, int roam, gr_family fam, gr_op op,
                  const gr_layout *lay, size_t nbytes, gr_split *sp,
                  char *why, size_t n)
{
    const int f = gr_rate_family(fam, op, lay);
    place_times pt;
    place_times_of(cur, roam, f, nbytes, 1.0, &pt);
    const int on_host = pt.host <= pt.dev_ns, d1 = pt.d1, d2 = pt.d2;
    const double one = on_host ? pt.host : pt.dev_ns;
    memset(sp, 0, sizeof *sp);
    if (!roam || d2 < 0 || split_gbs[f] <= 0) {
        if (why != NULL) {
            snprintf(why, n, "%s", !roam ? "placement pinned to one device"
                                 : d2 < 0 ? "one device"
                                          : "no rate measured for two "
                                            "devices together (gpured.tune)");
        }
        return 0;
    }
    gr_rates r1, r2;
    int m1 = 0, m2 = 0;
    gr_rates_get(gr_device_get(d1), &r1, &m1);
    gr_rates_get(gr_device_get(d2), &r2, &m2);
    const double call = r1.dev_call_ns > r2.dev_call_ns ? r1.dev_call_ns
                                                        : r2.dev_call_ns;
    const double both = call + (double)nbytes / split_gbs[f];
    sp->dev[0] = d1 < d2 ? d1 : d2; /* (the first share: the lower index) */
    sp->dev[1] = d1 < d2 ? d2 : d1;
    const gr_rates *ra = d1 < d2 ? &r1 : &r2, *rb = d1 < d2 ? &r2 : &r1;
    sp->frac = ra->dev_gbs[f] / (ra->dev_gbs[f] + rb->dev_gbs[f]);
    sp->ns = both;
    sp->single_ns = one;
    const int go = both < 0.95 * one;
    if (go) {
        gr_place_note_clear(); /* not timed: two sides at once */
    }
    if (why != NULL) {
        snprintf(why, n, "split %.3f / %.3f between devices %d and %d: "
                 "%.1f us together (%.1f GB/s measured) vs %.1f us on %s%s",
                 sp->frac, 1.0 - sp->frac, sp->dev[0], sp->dev[1], both / 1e3,
                 split_gbs[f], one / 1e3, on_host ? "the host path"
                                                  : "the fastest device",
                 go ? "" : ": not split");
    }
    return go;
}
