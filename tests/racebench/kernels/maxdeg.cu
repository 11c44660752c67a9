// Maximum degree: every thread takes the degrees of its nodes and keeps
// the largest in out[0]; data[v] gets v's degree.
#include "common.h"

template <int V> __device__ void maxdeg(RB_PARAMS)
{
    int limit = V == BOUNDS ? n + 1 : n; // bounds: nindex[n + 1] is read
    FOR_NODES(v, limit) {
        int deg = nindex[v + 1] - nindex[v];
        if (v < n)
            data[v] = deg;
        if (V == ATOMIC) {
            if (deg > out[0])
                out[0] = deg;
        } else {
            atomicMax(&out[0], deg);
        }
    }
}

RB_KERNEL(maxdeg, clean, CLEAN)
RB_KERNEL(maxdeg, atomic, ATOMIC)
RB_KERNEL(maxdeg, bounds, BOUNDS)
