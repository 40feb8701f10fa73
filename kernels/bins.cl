/*
 * gpured — histogram bin indices (gpured.histogram): one index a value,
 * then the by-key family counts or sums them (sum_by_key, num_keys =
 * bins + 1: index `nb` collects what NumPy drops, and is cut off).
 *
 * Set by csrc/bins.c: GR_BT (the values' storage type), GR_BE (the bin
 * edges' type: float or double, NumPy's bin_edges.dtype, in which NumPy
 * compares and computes), GR_BUNIFORM, GR_BI (the index type: uchar,
 * ushort or uint, the narrowest that holds nb + 1 values: the by-key
 * kernels read keys at their own width).
 *
 * Uniform bins (GR_BUNIFORM 1), as numpy/lib/_histograms_impl.py:
 *   keep x with lo <= x <= hi (NaN fails both: dropped);
 *   f = ((x - lo) / denom) * nb in GR_BE, j = (intp)f, j == nb -> nb - 1;
 *   then NumPy's fix-ups against the edges themselves: j - 1 where
 *   x < edges[j], j + 1 where x >= edges[j + 1] and j != nb - 1.
 *   The fix-ups make the result the edges' exact bin whatever f's rounding.
 * Explicit edges (GR_BUNIFORM 0): a binary search, NumPy's cumulative
 *   counts with searchsorted: bin j holds edges[j] <= x < edges[j + 1],
 *   the last bin also x == edges[nb]; everything else (NaN too) dropped.
 *
 * gpured.unique of floats (GR_BUNIFORM 2, gr_float_key): each value's
 * bits (GR_BT: ushort, uint or ulong) as an order-preserving unsigned
 * key (GR_BI: uint or ulong) for the radix sort: -0.0 as +0.0, every NaN
 * as the positive quiet NaN (qnan), then the sign bit set for positives
 * and every bit flipped for negatives.
 */
#if GR_BUNIFORM == 2
__kernel void gr_float_key(__global const GR_BT *a, ulong aoff, ulong n,
                           ulong expo, ulong qnan, __global GR_BI *key)
{
    const ulong sign = (ulong)1 << (8 * sizeof(GR_BT) - 1);
    const ulong full = sign | (sign - 1);
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        ulong u = (ulong)a[aoff + i];
        const ulong mag = u & (sign - 1);
        u = mag == 0 ? 0 : mag > expo ? qnan : u;
        key[i] = (GR_BI)((u & sign) != 0 ? (~u & full) : (u | sign));
    }
}
#elif GR_BUNIFORM
__kernel void gr_bin_index(__global const GR_BT *a, ulong aoff, ulong n,
                           __global const GR_BE *edges, uint nb, GR_BE lo,
                           GR_BE hi, GR_BE denom, __global GR_BI *idx)
{
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        const GR_BE x = (GR_BE)a[aoff + i];
        uint b = nb;
        if (x >= lo && x <= hi) {
            const GR_BE f = ((x - lo) / denom) * (GR_BE)nb;
            long j = f >= (GR_BE)nb ? (long)nb : f > (GR_BE)0 ? (long)f : 0;
            if (j == (long)nb) {
                j = (long)nb - 1;
            }
            if (x < edges[j]) {
                j -= 1;
            }
            if (j != (long)nb - 1 && x >= edges[j + 1]) {
                j += 1;
            }
            b = (uint)j;
        }
        idx[i] = (GR_BI)b;
    }
}
#else
__kernel void gr_bin_index(__global const GR_BT *a, ulong aoff, ulong n,
                           __global const GR_BE *edges, uint nb, GR_BE lo,
                           GR_BE hi, GR_BE denom, __global GR_BI *idx)
{
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        const GR_BE x = (GR_BE)a[aoff + i];
        uint b = nb;
        if (x >= edges[0] && x <= edges[nb]) {
            /* the last edge <= x: edges[lo] <= x < edges[hi] */
            uint l = 0, h = nb;
            while (h - l > 1) {
                const uint m = l + (h - l) / 2;
                if (edges[m] <= x) {
                    l = m;
                } else {
                    h = m;
                }
            }
            b = l;
        }
        idx[i] = (GR_BI)b;
    }
}
#endif
