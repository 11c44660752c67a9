// Kernels for racecheck on distributed shared memory: the blocks of a
// cluster of two read each other's shared memory. Needs sm_90; launched
// by tests/e2e/cases/check-race-cluster*. Regenerate with regen.sh.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each block reads its peer's array with no cluster barrier after the
// peer wrote it.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_race(const float *in, float *out)
{
    __shared__ float s[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    s[t] = in[t] + (float)rank;
    float *peer = cluster.map_shared_rank(s, rank ^ 1);
    out[rank * 32 + t] = peer[t];
    cluster.sync();
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_race_fixed(const float *in, float *out)
{
    __shared__ float s[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    s[t] = in[t] + (float)rank;
    cluster.sync();
    float *peer = cluster.map_shared_rank(s, rank ^ 1);
    out[rank * 32 + t] = peer[t];
    cluster.sync();
}
