// warpSize where nvcc does not fold it: the PTX reads the predefined
// identifier WARP_SZ (`mov.u32 %r, WARP_SZ;`). Each thread writes 1 when
// its lane and warp computed through warpSize are right.
extern "C" __global__ void warp_sz(int *ok)
{
    unsigned t = threadIdx.x;
    unsigned lane = t % warpSize, warp = t / warpSize;
    ok[t] = warpSize == 32 && lane == (t & 31) && warp == (t >> 5);
}
