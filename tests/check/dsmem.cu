// Kernels for racecheck on the lifetime of distributed shared memory: a
// block's shared memory lives as long as the block, so a peer of its
// cluster may read or write it only while it has not exited; a cluster
// barrier that the peer arrives at after the access, and that the owner
// waits for before exiting, is what guarantees it. Needs sm_90; launched
// by tests/e2e/cases/check-race-dsmem-*. Regenerate with regen.sh.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each block fills its own tile, the cluster syncs, then each block reads
// its neighbour's tile and exits: the neighbour may have exited already.
extern "C" __global__ void __cluster_dims__(4, 1, 1) dsmem_read_after_exit(const float *in, float *out)
{
    __shared__ float tile[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    tile[t] = in[blockIdx.x * 32 + t] * 2.0f;
    cluster.sync();
    const float *next = cluster.map_shared_rank(tile, (rank + 1) % cluster.num_blocks());
    out[blockIdx.x * 32 + t] = next[t] + tile[t];
}

// The same with a second cluster.sync() before exiting: every read of a
// peer's tile is done before any block of the cluster exits.
extern "C" __global__ void __cluster_dims__(4, 1, 1) dsmem_read_after_exit_fixed(const float *in, float *out)
{
    __shared__ float tile[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    tile[t] = in[blockIdx.x * 32 + t] * 2.0f;
    cluster.sync();
    const float *next = cluster.map_shared_rank(tile, (rank + 1) % cluster.num_blocks());
    out[blockIdx.x * 32 + t] = next[t] + tile[t];
    cluster.sync();
}

// Block 0 pushes a value into every other block's shared memory and
// exits; the others wait for it with a cluster barrier first, so the
// pushes are ordered before their exits, but block 0 arrives only (it does
// not wait), and nobody reads block 0's memory: clean.
extern "C" __global__ void __cluster_dims__(2, 1, 1) dsmem_push_then_barrier(float *out)
{
    __shared__ float inbox[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    if (rank == 0) {
        float *peer = cluster.map_shared_rank(inbox, 1);
        peer[t] = (float)t + 0.5f;
        cluster.sync();
    } else {
        cluster.sync();
        out[t] = inbox[t];
    }
}

// Block 1 writes into block 0's shared memory after the only cluster
// barrier, and block 0 exits right after it: a write into memory whose
// owner may have exited.
extern "C" __global__ void __cluster_dims__(2, 1, 1) dsmem_write_after_exit(float *out)
{
    __shared__ float inbox[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    inbox[t] = 0.0f;
    cluster.sync();
    if (rank == 1) {
        float *peer = cluster.map_shared_rank(inbox, 0);
        peer[t] = (float)t;
        out[t] = (float)t;
    }
}
