// One push step of PageRank in fixed point: every node sends its rank
// (data) divided by its degree to each neighbour's next rank (aux), and
// the largest contribution goes to out[1].
#include "common.h"

template <int V> __device__ void pagerank(RB_PARAMS)
{
    FOR_NODES(v, n) {
        int beg = nindex[v], end = nindex[v + 1];
        if (beg == end)
            continue;
        int share = data[v] / (end - beg);
        for (int e = beg; e < end; e++) {
            int u = nlist[e];
            if (V == ATOMIC)
                aux[u] += share;
            else
                atomicAdd(&aux[u], share);
        }
        if (V == RACE) {
            if (share > out[1])
                out[1] = share;
        } else {
            atomicMax(&out[1], share);
        }
    }
}

RB_KERNEL(pagerank, clean, CLEAN)
RB_KERNEL(pagerank, atomic, ATOMIC)
RB_KERNEL(pagerank, race, RACE)
