/*
 * Segmented sum with a barrier inside a condition (seed 002) — BROKEN.
 *
 * Each work-group walks `tiles` tiles of WG ints.  A tile holds NSEG
 * segments of SEG ints; LANES work-items reduce one segment (each folds
 * SEG/LANES elements), then the first NSEG work-items add the LANES
 * partials of "their" segment and write one result per segment.
 *
 * Only NSEG * LANES = 32 of the 64 work-items take the branch, and the
 * second barrier sits inside it: work-items 32..63 never reach it.  A
 * barrier must be reached by all work-items of the group or by none
 * (OpenCL C: otherwise the behaviour is undefined).  On a GPU the
 * wavefronts that skip the branch run ahead into the next tile and
 * overwrite `tile` while the others still read it; Oclgrind reports the
 * barrier divergence and the local-memory races.
 *
 * Run:  oclgrind-kernel --data-races broken_barrier.sim
 * Fixed form: fixed_barrier.cl.
 */
#define WG    64              /* work-items per group (the .sim's local size) */
#define SEG   8               /* ints per segment                             */
#define LANES 4               /* work-items per segment                       */
#define NSEG  (WG / SEG)      /* segments per tile                            */

kernel void segmented_sum(global const int *x, global int *y, int tiles)
{
    local int tile[WG];
    local int partial[NSEG * LANES];
    const int lid = get_local_id(0);
    const int grp = get_group_id(0);

    for (int t = 0; t < tiles; t++) {
        const int base = grp * tiles + t;          /* tile index */
        tile[lid] = x[base * WG + lid];            /* coalesced load */
        barrier(CLK_LOCAL_MEM_FENCE);              /* sync 1: all 64 */

        if (lid < NSEG * LANES) {                  /* 32 of 64 work-items */
            const int seg = lid / LANES, lane = lid % LANES;
            int s = 0;
            for (int j = lane; j < SEG; j += LANES)
                s += tile[seg * SEG + j];
            partial[lid] = s;

            barrier(CLK_LOCAL_MEM_FENCE);          /* sync 2: BUG, only 32 */

            if (lid < NSEG) {                      /* one per segment */
                int r = 0;
                for (int k = 0; k < LANES; k++)
                    r += partial[lid * LANES + k];
                y[base * NSEG + lid] = r;          /* coalesced store */
            }
        }
    }
}
