// Thread block clusters (sm_90 only): compile-time cluster dimensions,
// cluster-wide barriers, distributed shared memory (reading a peer block's
// shared memory), and the cluster special registers.

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// cluster_regs: __cluster_dims__(2,1,1); thread 0 of each block writes 8 words at out[8*linear_block]: %cluster_ctarank, %cluster_nctarank, %clusterid.x, %nclusterid.x, %cluster_ctaid.x, %cluster_nctaid.x, %ctaid.x, %is_explicit_cluster.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_regs(unsigned *out)
{
    if (threadIdx.x != 0)
        return;
    unsigned r[8];
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r[0]));
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(r[1]));
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(r[2]));
    asm("mov.u32 %0, %%nclusterid.x;" : "=r"(r[3]));
    asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(r[4]));
    asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(r[5]));
    r[6] = blockIdx.x;
    asm("{ .reg .pred p;\n\tmov.pred p, %%is_explicit_cluster;\n\tselp.u32 %0, 1, 0, p; }" : "=r"(r[7]));
    for (int k = 0; k < 8; k++)
        out[8 * blockIdx.x + k] = r[k];
}

// dsmem_exchange: __cluster_dims__(2,1,1); each block fills its shared buf with in[block slice], cluster.sync(), then reads the peer block's buf through map_shared_rank: out[i] = peer_buf[t] + own_buf[t].
extern "C" __global__ void __cluster_dims__(2, 1, 1) dsmem_exchange(const int *in, int *out)
{
    __shared__ int buf[256];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned t = threadIdx.x, rank = cluster.block_rank();
    int i = blockIdx.x * blockDim.x + t;
    buf[t] = in[i];
    cluster.sync();
    int *peer = cluster.map_shared_rank(buf, rank ^ 1);
    out[i] = peer[t] + buf[t];
    cluster.sync();   // keep our shared memory alive until the peer is done reading it
}

// dsmem_atomic: __cluster_dims__(4,1,1); every thread atomically adds 1 into rank 0's shared counter via distributed shared memory; rank 0 thread 0 writes it to out[cluster id] after cluster.sync().
extern "C" __global__ void __cluster_dims__(4, 1, 1) dsmem_atomic(unsigned *out)
{
    __shared__ unsigned counter;
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0)
        counter = 0;
    cluster.sync();
    unsigned *root = cluster.map_shared_rank(&counter, 0);
    atomicAdd(root, 1u);
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0)
        out[blockIdx.x / 4] = counter;
}

// cluster_runtime_dims: no __cluster_dims__ (cluster shape given at launch); out[blockIdx.x] = cluster.block_rank() * 100 + cluster.num_blocks().
extern "C" __global__ void cluster_runtime_dims(unsigned *out)
{
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0)
        out[blockIdx.x] = cluster.block_rank() * 100 + cluster.num_blocks();
    cluster.sync();
}

// barrier_split_arrive: __cluster_dims__(2,1,1); barrier.cluster.arrive.release / wait.acquire split around independent work; out[i] = in[i] + peer's in value written to its shared memory before arriving.
extern "C" __global__ void __cluster_dims__(2, 1, 1) barrier_split_arrive(const int *in, int *out)
{
    __shared__ int buf[256];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    buf[t] = in[i];
    asm volatile("barrier.cluster.arrive.release;" ::: "memory");
    int own = in[i] * 10;          // work overlapped with the barrier
    asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
    int *peer = cluster.map_shared_rank(buf, cluster.block_rank() ^ 1);
    out[i] = own + peer[t];
    cluster.sync();
}
