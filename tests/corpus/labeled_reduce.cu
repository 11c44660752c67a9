// Corpus: per-group reductions after cg::labeled_partition (the pattern of
// NVIDIA's cooperative-groups samples): cg::reduce lowers to redux.sync with
// a different member mask in each lane group of one warp. Self-checking.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
namespace cg = cooperative_groups;

__global__ void group_sums(const int *in, const int *label, int *sum, int *size, int *rank)
{
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cg::coalesced_group g = cg::labeled_partition(warp, label[i]);
    sum[i] = cg::reduce(g, in[i], cg::plus<int>());
    size[i] = (int)g.size();
    rank[i] = (int)g.thread_rank();
}

int main()
{
    const int n = 256;
    int hin[n], hlab[n], hsum[n], hsize[n], hrank[n];
    for (int i = 0; i < n; i++) {
        hin[i] = (i * 37 + 11) % 101 - 50;
        hlab[i] = (i * i + 3 * i) % 5; /* five groups of uneven size in every warp */
    }
    int *in, *lab, *sum, *size, *rank;
    cudaMalloc(&in, sizeof hin);
    cudaMalloc(&lab, sizeof hlab);
    cudaMalloc(&sum, sizeof hsum);
    cudaMalloc(&size, sizeof hsize);
    cudaMalloc(&rank, sizeof hrank);
    cudaMemcpy(in, hin, sizeof hin, cudaMemcpyHostToDevice);
    cudaMemcpy(lab, hlab, sizeof hlab, cudaMemcpyHostToDevice);
    group_sums<<<n / 128, 128>>>(in, lab, sum, size, rank);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(hsum, sum, sizeof hsum, cudaMemcpyDeviceToHost);
    cudaMemcpy(hsize, size, sizeof hsize, cudaMemcpyDeviceToHost);
    cudaMemcpy(hrank, rank, sizeof hrank, cudaMemcpyDeviceToHost);
    int bad = e != cudaSuccess;
    for (int i = 0; i < n; i++) {
        int w = i / 32 * 32, s = 0, c = 0, r = 0;
        for (int j = w; j < w + 32; j++)
            if (hlab[j] == hlab[i]) {
                s += hin[j];
                r += j < i;
                c++;
            }
        if (hsum[i] != s || hsize[i] != c || hrank[i] != r) {
            if (bad++ < 5)
                printf("lane %d: sum %d size %d rank %d, want %d %d %d\n", i, hsum[i], hsize[i], hrank[i], s, c, r);
        }
    }
    printf("labeled_reduce: %s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
