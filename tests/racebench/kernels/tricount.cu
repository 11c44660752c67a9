// Triangles, roughly: for every edge (v, u) with v < u, the common
// neighbours of v and u (a merge of the two sorted lists) are added to a
// per-block count in shared memory, which thread 0 adds to out[0] after a
// barrier.
#include "common.h"

template <int V> __device__ void tricount(RB_PARAMS)
{
    __shared__ int count;
    if (threadIdx.x == 0)
        count = 0;
    __syncthreads();
    FOR_NODES(v, n) {
        int vb = nindex[v], ve = nindex[v + 1];
        for (int e = vb; e < ve; e++) {
            int u = nlist[e];
            if (u <= v)
                continue;
            int i = vb, j = nindex[u], ie = ve, je = nindex[u + 1], common = 0;
            if (V == BOUNDS)
                je++; // bounds: reads past u's list, past nlist for the last node
            while (i < ie && j < je) {
                int a = nlist[i], b = nlist[j];
                common += a == b;
                i += a <= b;
                j += b <= a;
            }
            if (V == ATOMIC)
                count += common;
            else
                atomicAdd(&count, common);
        }
    }
    if (V != SYNC)
        __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(&out[0], count);
}

RB_KERNEL(tricount, clean, CLEAN)
RB_KERNEL(tricount, atomic, ATOMIC)
RB_KERNEL(tricount, sync, SYNC)
RB_KERNEL(tricount, bounds, BOUNDS)
