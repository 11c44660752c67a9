// Thread block clusters (sm_90): launched with cudaLaunchKernelEx and a
// cluster-dimension attribute, and with __cluster_dims__; blocks of a
// cluster synchronize with cluster.sync() and read each other's shared
// memory (distributed shared memory).
#include "check.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void neighbours(int *out)
{
    __shared__ int value;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    if (threadIdx.x == 0)
        value = (int)(blockIdx.x * 100);
    cluster.sync();
    int *other = cluster.map_shared_rank(&value, (rank + 1) % cluster.num_blocks());
    if (threadIdx.x == 0)
        out[blockIdx.x] = *other + (int)cluster.num_blocks();
    cluster.sync();
}

__global__ void __cluster_dims__(2, 1, 1) pairs(int *out)
{
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0)
        out[blockIdx.x] = (int)cluster.block_rank();
}

int main()
{
    int *out, h[8];
    CHECK(cudaMalloc(&out, sizeof h));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(8);
    cfg.blockDim = dim3(64);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 4;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, neighbours, out));
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (int b = 0; b < 8; b++) {
        int first = b / 4 * 4, next = first + (b - first + 1) % 4;
        if (h[b] != next * 100 + 4)
            printf("block %d read %d, expected %d\n", b, h[b], next * 100 + 4);
        EXPECT(h[b] == next * 100 + 4);
    }
    pairs<<<8, 32>>>(out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (int b = 0; b < 8; b++)
        EXPECT(h[b] == b % 2);
    return finish("cluster");
}
