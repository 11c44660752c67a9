// One relaxation sweep of a breadth-first search: data holds each node's
// current level; a node with a level offers level + 1 to its neighbours
// (atomicMin) and counts the improvements in out[0].
#include "common.h"

#define UNSEEN 0x3fffffff

template <int V> __device__ void bfs(RB_PARAMS)
{
    FOR_NODES(v, n) {
        int beg = nindex[v], end = nindex[V == BOUNDS && v == n - 1 ? v + 2 : v + 1]; // bounds: nindex[n + 1]
        int level = V == RACE ? data[v] : load_shared_state(&data[v]);
        if (level == UNSEEN)
            continue;
        for (int e = beg; e < end; e++) {
            int u = nlist[e];
            if (u < 0 || u >= n)
                continue;
            if (V == ATOMIC) {
                if (data[u] > level + 1) {
                    data[u] = level + 1;
                    atomicAdd(&out[0], 1);
                }
            } else if (atomicMin(&data[u], level + 1) > level + 1) {
                atomicAdd(&out[0], 1);
            }
        }
    }
}

RB_KERNEL(bfs, clean, CLEAN)
RB_KERNEL(bfs, atomic, ATOMIC)
RB_KERNEL(bfs, race, RACE)
RB_KERNEL(bfs, bounds, BOUNDS)
