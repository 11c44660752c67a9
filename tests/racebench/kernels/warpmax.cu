// Maximum degree with a reduction per warp in shared memory, the
// warp-synchronous way: the lanes halve the list, __syncwarp() between
// steps (left out by the sync variant: the legacy idiom that Volta's
// independent thread scheduling breaks), then lane 0 publishes the warp's
// maximum into aux (guard: every lane does, from its own partial).
// Blocks of at most 1024 threads.
#include "common.h"

template <int V> __device__ void warpmax(RB_PARAMS)
{
    __shared__ int part[1024];
    unsigned lane = threadIdx.x % 32;
    int best = 0;
    FOR_NODES(v, V == BOUNDS ? n + 1 : n) // bounds: nindex[n + 1] is read
        best = max(best, nindex[v + 1] - nindex[v]);
    part[threadIdx.x] = best;
    if (V != SYNC)
        __syncwarp();
    for (unsigned half = 16; half > 0; half /= 2) {
        if (lane < half)
            part[threadIdx.x] = max(part[threadIdx.x], part[threadIdx.x + half]);
        if (V != SYNC)
            __syncwarp();
    }
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if ((V == GUARD || lane == 0) && warp < n)
        aux[warp] = part[threadIdx.x];
    if (lane == 0)
        atomicMax(&out[0], part[threadIdx.x]);
}

RB_KERNEL(warpmax, clean, CLEAN)
RB_KERNEL(warpmax, sync, SYNC)
RB_KERNEL(warpmax, guard, GUARD)
RB_KERNEL(warpmax, bounds, BOUNDS)
