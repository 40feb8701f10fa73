/*
 * gpured — policy layer: placement's re-measure (issue 39).  A large call
 * on host memory is timed (gr_dispatch) and its wall time compared with
 * the estimate that placed it (place.c's model); where they are more than
 * 4x apart the side's rates are corrected for this process from then on:
 * a factor per side (the host path, each device), rate family and size.
 * No OpenCL, no Python.
 *
 *     estimate = factor x (call + slow x bytes / rate)     (place.c)
 *
 *     after a large call:  off = wall / estimate
 *       off > 4 or < 1/4:  factor = wall / (the model's time alone)
 *                          ("re-measured", with the figures, for explain)
 *       else:              factor x= off^(1/4)     (tracked, gently)
 *     between calls:       factor -> 1, half-life GPURED_PLACE_HALFLIFE_S
 *
 * So a host path priced 0.54 s that took 8.2 s on a loaded machine is
 * priced 8.2 s at once, and the next call of that size goes where the
 * model now says it finishes first; the factor fades when nothing
 * re-measures it (a side that is no longer chosen is not timed), so the
 * side is tried again after a few half-lives and timed again.
 */
#include "policy.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A call is large from 16 MiB: the smallest calls it times.  Below it a
 * call takes a few ms on the 2-core CI machine (float32 cumsum 16 MiB:
 * 5-7 ms on the host path, 2026-11-28, journal (issue 39)),
 * where a scheduler's slice (~4 ms) alone is a 2x error. */
#define LARGE_BYTES ((size_t)16 << 20)
/* Sizes in factors of 4 from LARGE_BYTES: 16, 64, 256 MiB, 1 GiB and up
 * (the host path's rate falls 6x from 1 MiB to 1 GiB on the CI machine
 * (float32 cumsum 6.0 -> 0.9 GB/s, sum 41 -> 5.2, 2026-11-28): one factor
 * for every size would price a 16 MiB call by a 1 GiB one's). */
#define NBUCKETS 4
#define NSIDES 17 /* the host path, then up to 16 devices */
/* More than 4x off re-measures (the bound); a factor stays
 * within [1/64, 1024] (an 8.2 s call priced 0.54 s: 15x). */
#define OFF_BOUND 4.0
#define FACTOR_MIN (1.0 / 64)
#define FACTOR_MAX 1024.0

typedef struct {
    double factor;   /* 1: none                                        */
    double at;       /* seconds (CLOCK_MONOTONIC) of its last update   */
    int jumps;       /* re-measures (more than 4x off)                 */
    int calls;       /* large calls timed                              */
    char why[160];   /* the last re-measure's figures                  */
} cell;

static cell tab[NSIDES][GR_NRATES][NBUCKETS];
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static int cfg_on = -1;           /* -1: GPURED_PLACE_REMEASURE unread   */
static double cfg_half = 120.0;   /* seconds; 0: never fades            */
static __thread gr_place_note last_note;

static const char *const fam_names[GR_NRATES] = {"reduction",
                                                 "argmin/argmax",
                                                 "column reduction", "scan"};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The environment's word, once: GPURED_PLACE_REMEASURE (0: off) and
 * GPURED_PLACE_HALFLIFE_S (seconds; 0: never fades). */
static void cfg_read(void)
{
    if (cfg_on >= 0) {
        return;
    }
    const char *on = getenv("GPURED_PLACE_REMEASURE");
    const char *half = getenv("GPURED_PLACE_HALFLIFE_S");
    cfg_on = !(on != NULL && strcmp(on, "0") == 0);
    if (half != NULL) {
        char *end = NULL;
        const double h = strtod(half, &end);
        if (end != half && h >= 0 && isfinite(h)) {
            cfg_half = h;
        }
    }
}

static int bucket_of(size_t nbytes)
{
    if (nbytes < LARGE_BYTES) {
        return -1;
    }
    int b = 0;
    for (size_t s = LARGE_BYTES * 4; b < NBUCKETS - 1 && nbytes >= s; s *= 4) {
        ++b;
    }
    return b;
}

static cell *cell_of(int side, int f, size_t nbytes)
{
    const int b = bucket_of(nbytes);
    if (b < 0 || side < -1 || side + 1 >= NSIDES || f < 0 || f >= GR_NRATES) {
        return NULL;
    }
    return &tab[side + 1][f][b];
}

/* A cell's factor now: faded towards 1 since its last update. */
static double cell_factor(const cell *c, double t)
{
    if (c->factor <= 0 || c->factor == 1.0) {
        return 1.0;
    }
    if (cfg_half <= 0) {
        return c->factor;
    }
    return pow(c->factor, exp2(-(t - c->at) / cfg_half));
}

double gr_remeasure_factor(int side, int f, size_t nbytes)
{
    cfg_read();
    const cell *c = cfg_on ? cell_of(side, f, nbytes) : NULL;
    if (c == NULL) {
        return 1.0;
    }
    pthread_mutex_lock(&tab_lock);
    const double k = cell_factor(c, now_s());
    pthread_mutex_unlock(&tab_lock);
    return k;
}

void gr_place_note_set(const gr_place_note *n) { last_note = *n; }
void gr_place_note_get(gr_place_note *n) { *n = last_note; }
void gr_place_note_clear(void) { last_note.valid = 0; }

static double clamp_factor(double k)
{
    return k < FACTOR_MIN ? FACTOR_MIN : k > FACTOR_MAX ? FACTOR_MAX : k;
}

/* The thread's last placement (gr_place's note) took wall_ns: 1 where that
 * re-measured its side (more than 4x off), 0 tracked or not timed. */
int gr_remeasure_observe(double wall_ns)
{
    const gr_place_note *n = &last_note;
    cfg_read();
    cell *c = n->valid && cfg_on ? cell_of(n->side, n->f, n->nbytes) : NULL;
    if (c == NULL || !(n->est0_ns > 0) || !(wall_ns > 0)) {
        return 0;
    }
    const double t = now_s();
    int jumped = 0;
    pthread_mutex_lock(&tab_lock);
    const double k = cell_factor(c, t), est = n->est0_ns * k,
                 off = wall_ns / est;
    /* a device's work may still run after the driver returns (a GPU's
     * result read by the face): a device is only ever found slower */
    const double lo = n->side < 0 ? FACTOR_MIN : 1.0;
    c->calls++;
    if (off > OFF_BOUND || (n->side < 0 && off < 1.0 / OFF_BOUND)) {
        c->factor = fmax(lo, clamp_factor(wall_ns / n->est0_ns));
        c->jumps++;
        snprintf(c->why, sizeof c->why,
                 "%s of %zu bytes took %.1f ms against %.1f ms estimated "
                 "(%.1fx)", fam_names[n->f], n->nbytes, wall_ns / 1e6,
                 est / 1e6, off);
        jumped = 1;
    } else {
        c->factor = fmax(lo, clamp_factor(k * pow(off, 0.25)));
    }
    c->at = t;
    pthread_mutex_unlock(&tab_lock);
    return jumped;
}

/* explain()'s words for a side's factor (nothing where it is 1): chars
 * written. */
int gr_remeasure_why(int side, int f, size_t nbytes, char *why, size_t n)
{
    cfg_read();
    const cell *c = cfg_on ? cell_of(side, f, nbytes) : NULL;
    if (c == NULL || n == 0) {
        return 0;
    }
    pthread_mutex_lock(&tab_lock);
    const double t = now_s(), k = cell_factor(c, t);
    int w = 0;
    if (fabs(k - 1.0) > 1e-3) {
        w = snprintf(why, n, "; %s x%.2f %s %.0f s ago%s%s%s",
                     side < 0 ? "host path" : "device",
                     k, c->jumps ? "re-measured" : "tracked", t - c->at,
                     c->jumps ? " (" : "", c->jumps ? c->why : "",
                     c->jumps ? ")" : "");
    }
    pthread_mutex_unlock(&tab_lock);
    return w < 0 ? 0 : (size_t)w >= n ? (int)n - 1 : w;
}

/* Every factor in force (gpured.remeasure()): rows written, at most max. */
int gr_remeasure_rows(gr_remeasure_row *rows, int max)
{
    int k = 0;
    pthread_mutex_lock(&tab_lock);
    const double t = now_s();
    for (int s = 0; s < NSIDES; ++s) {
        for (int f = 0; f < GR_NRATES; ++f) {
            for (int b = 0; b < NBUCKETS && k < max; ++b) {
                const cell *c = &tab[s][f][b];
                if (c->calls == 0) {
                    continue;
                }
                gr_remeasure_row *r = &rows[k++];
                r->side = s - 1;
                r->f = f;
                r->bytes = LARGE_BYTES << (2 * b);
                r->factor = cell_factor(c, t);
                r->age_s = t - c->at;
                r->jumps = c->jumps;
                r->calls = c->calls;
                snprintf(r->why, sizeof r->why, "%s", c->why);
            }
        }
    }
    pthread_mutex_unlock(&tab_lock);
    return k;
}

void gr_remeasure_config(int on, double half_life_s, int reset)
{
    cfg_read();
    pthread_mutex_lock(&tab_lock);
    if (on >= 0) {
        cfg_on = on != 0;
    }
    if (half_life_s >= 0) {
        cfg_half = half_life_s;
    }
    if (reset) {
        memset(tab, 0, sizeof tab);
    }
    pthread_mutex_unlock(&tab_lock);
}

void gr_remeasure_get(int *on, double *half_life_s, size_t *large_bytes)
{
    cfg_read();
    *on = cfg_on;
    *half_life_s = cfg_half;
    *large_bytes = LARGE_BYTES;
}
