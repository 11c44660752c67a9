// Dynamic parallelism (CDP2) under racecheck. "clean": every thread of a
// block writes its element, __syncthreads, and thread 0 launches a child
// grid that reads them: the launch orders the block's writes before the
// child, so racecheck must stay quiet. "racy": thread 0 writes an element
// after its launch of a child that reads it; nothing orders that write
// with the child (a real CDP race), and racecheck must report it.
#include <cuda_runtime.h>
#include <cstring>
#include "check.h"

__global__ void reader(const int *a, int *out) { out[threadIdx.x] = a[threadIdx.x] * 2; }

__global__ void clean(int *a, int *out)
{
    a[threadIdx.x] = threadIdx.x + 1;
    __syncthreads();
    if (threadIdx.x == 0)
        reader<<<1, 32>>>(a, out);
}

__global__ void racy(int *a, int *out)
{
    if (threadIdx.x == 0) {
        a[0] = 1;
        reader<<<1, 32>>>(a, out);
        a[5] = 9;
    }
}

int main(int argc, char **argv)
{
    int *a, *out;
    CHECK(cudaMalloc(&a, 32 * sizeof(int)));
    CHECK(cudaMalloc(&out, 32 * sizeof(int)));
    CHECK(cudaMemset(a, 0, 32 * sizeof(int)));
    if (argc > 1 && !strcmp(argv[1], "racy")) {
        racy<<<1, 32>>>(a, out);
        CHECK(cudaDeviceSynchronize());
        return finish("cdp_race racy");
    }
    clean<<<1, 32>>>(a, out);
    CHECK(cudaDeviceSynchronize());
    int h[32];
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 32; i++)
        EXPECT(h[i] == 2 * (i + 1));
    return finish("cdp_race clean");
}
