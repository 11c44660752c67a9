// A worklist of the nodes with neighbours, compacted into data: in each
// round a block takes blockDim.x consecutive nodes, counts those that go
// on the list in shared memory, one thread reserves the block's range of
// the list (atomicAdd on out[0]), and every thread writes its node there.
#include "common.h"

template <int V> __device__ void worklist(RB_PARAMS)
{
    __shared__ int count, base;
    int limit = V == BOUNDS ? n + 1 : n; // bounds: nindex[n + 1] is read
    for (int start = blockIdx.x * blockDim.x; start < limit; start += gridDim.x * blockDim.x) {
        if (threadIdx.x == 0)
            count = 0;
        __syncthreads();
        int v = start + threadIdx.x;
        int deg = v < limit ? nindex[v + 1] - nindex[v] : 0;
        int slot = -1;
        if (v < n && deg >= 1) {
            if (V == ATOMIC)
                slot = count++;
            else
                slot = atomicAdd(&count, 1);
        }
        __syncthreads();
        if (V == GUARD || threadIdx.x == 0)
            base = atomicAdd(&out[0], count);
        if (V != SYNC)
            __syncthreads();
        if (slot >= 0 && base + slot < n)
            data[base + slot] = v;
        __syncthreads(); // before the next round resets count
    }
}

RB_KERNEL(worklist, clean, CLEAN)
RB_KERNEL(worklist, atomic, ATOMIC)
RB_KERNEL(worklist, guard, GUARD)
RB_KERNEL(worklist, sync, SYNC)
RB_KERNEL(worklist, bounds, BOUNDS)
