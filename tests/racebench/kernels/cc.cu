// One sweep of connected components by label propagation: data holds each
// node's label (the runner starts it at the node id); a node pushes its
// label to its neighbours (atomicMin) and to aux (the smallest label it
// saw), and out[0] counts the changes.
#include "common.h"

template <int V> __device__ void cc(RB_PARAMS)
{
    FOR_NODES(v, n) {
        int label = V == RACE ? data[v] : load_shared_state(&data[v]);
        int beg = nindex[v], end = nindex[v + 1];
        int best = label;
        for (int e = beg; e < end; e++) {
            int u = nlist[e];
            int old;
            if (V == ATOMIC) {
                old = data[u];
                if (label < old)
                    data[u] = label;
            } else {
                old = atomicMin(&data[u], label);
            }
            if (old < best)
                best = old;
            if (old > label)
                atomicAdd(&out[0], 1);
        }
        // bounds: the node after the last one is read
        int next = V == BOUNDS ? nindex[v + 2] - nindex[v + 1] : (v + 1 < n ? nindex[v + 2] - nindex[v + 1] : 0);
        aux[v] = best + (next < 0 ? 1 : 0);
    }
}

RB_KERNEL(cc, clean, CLEAN)
RB_KERNEL(cc, atomic, ATOMIC)
RB_KERNEL(cc, race, RACE)
RB_KERNEL(cc, bounds, BOUNDS)
