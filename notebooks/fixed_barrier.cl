/*
 * Segmented sum with a barrier inside a condition (seed 002) — FIXED.
 *
 * Same kernel as broken_barrier.cl, with the branch split in two and the
 * second barrier between the halves, where every work-item of the group
 * reaches it.  Work-items that have nothing to do in a phase still take
 * part in the barrier.
 *
 * Run:  oclgrind-kernel --data-races fixed_barrier.sim
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
        }

        barrier(CLK_LOCAL_MEM_FENCE);              /* sync 2: all 64 */

        if (lid < NSEG) {                          /* one per segment */
            int r = 0;
            for (int k = 0; k < LANES; k++)
                r += partial[lid * LANES + k];
            y[base * NSEG + lid] = r;              /* coalesced store */
        }
        /* No third barrier: the next tile's write to `tile` comes after
         * sync 2 (every read of `tile` is done), its write to `partial`
         * after the next sync 1 (every read of `partial` is done). */
    }
}
