// Dynamic parallelism (CDP2): a child grid that stores through a bad
// pointer faults, and the host sees it as the error of the parent's launch
// (cudaErrorIllegalAddress at the next synchronization, then sticky).
// With the argument "sync", the parent calls cudaDeviceSynchronize in
// device code (built with -DCUDA_FORCE_CDP1_IF_SUPPORTED), which CDP2 does
// not have: kemu refuses it by name and the launch fails.
#include <cuda_runtime.h>
#include <cstring>
#include "check.h"

__global__ void child(int *p) { p[threadIdx.x] = 1; }

__global__ void parent(int *good, int *bad)
{
    good[0] = 1;
    child<<<1, 32>>>(bad);
}

#ifdef CUDA_FORCE_CDP1_IF_SUPPORTED
__global__ void parent_sync(int *good)
{
    child<<<1, 32>>>(good);
    cudaDeviceSynchronize();
}
#endif

int main(int argc, char **argv)
{
    int *d;
    CHECK(cudaMalloc(&d, 64 * sizeof(int)));
#ifdef CUDA_FORCE_CDP1_IF_SUPPORTED
    if (argc > 1 && !strcmp(argv[1], "sync")) {
        parent_sync<<<1, 1>>>(d);
        cudaError_t e = cudaDeviceSynchronize();
        printf("cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
        EXPECT(e == cudaErrorNotSupported);
        return finish("cdp_fault sync");
    }
#endif
    (void)argc;
    (void)argv;
    parent<<<1, 1>>>(d, (int *)0x10);
    CHECK(cudaGetLastError());
    cudaError_t e = cudaDeviceSynchronize();
    printf("cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
    EXPECT(e == cudaErrorIllegalAddress);
    EXPECT(cudaMemset(d, 0, 4) == cudaErrorIllegalAddress); // sticky
    return finish("cdp_fault");
}
