/*
 * gpured — element copies between device buffers (gpured.Array).
 *
 * gr_copy visits every index of an N-d shape and copies one element from a
 * strided source to a strided destination, converting its type as NumPy's
 * astype(casting="unsafe") does (bool: nonzero test; to bool: 0 or 1), or
 * dividing it by `div` first (GR_DIV: the mean of a sum).  geom holds the
 * shape, the source strides and the destination strides, ndim each, in
 * elements (strides may be negative).
 *
 * Set by the host (csrc/array.c): GR_S, GR_D source and destination types,
 * GR_S_BOOL / GR_D_BOOL, GR_F the floating type of the division, GR_DIV.
 */
__kernel void gr_copy(__global const GR_S *src, ulong soff, __global GR_D *dst,
                      ulong doff, __global const long *geom, uint ndim,
                      ulong n, GR_F div)
{
    const ulong gid = get_global_id(0);
    if (gid >= n) {
        return;
    }
    ulong rest = gid;
    long so = (long)soff, dso = (long)doff;
    for (int k = (int)ndim - 1; k >= 0; --k) {
        const ulong len = (ulong)geom[k];
        const long i = (long)(rest % len);
        rest /= len;
        so += i * geom[ndim + k];
        dso += i * geom[2 * ndim + k];
    }
    GR_S x = src[so];
#if GR_DIV
    dst[dso] = (GR_D)((GR_F)x / div);
#elif GR_D_BOOL
    dst[dso] = (GR_D)(x != (GR_S)0);
#elif GR_S_BOOL
    dst[dso] = (GR_D)(x != (GR_S)0);
#else
    dst[dso] = (GR_D)x;
#endif
}
