// The device malloc heap's size (cudaLimitMallocHeapSize): 8 MiB by
// default; raised to 64 MiB before the first kernel that calls malloc, a
// 32 MiB block is allocated in a kernel, written end to end and read back
// (kemu's heap used to be a fixed 8 MiB), while a 100 MiB one fails.
#include <cuda_runtime.h>
#include <stdio.h>
#include "check.h"

__global__ void grab(size_t bytes, int *result)
{
    unsigned *p = (unsigned *)malloc(bytes);
    if (!p) {
        *result = -1;
        return;
    }
    size_t n = bytes / sizeof(unsigned);
    for (size_t i = 0; i < n; i += 4096)
        p[i] = (unsigned)(i * 2654435761u);
    p[n - 1] = 77;
    int ok = 1;
    for (size_t i = 0; i + 1 < n; i += 4096)
        ok &= p[i] == (unsigned)(i * 2654435761u);
    ok &= p[n - 1] == 77;
    free(p);
    *result = ok;
}

static int run(size_t bytes, int *d)
{
    int r = 0;
    grab<<<1, 1>>>(bytes, d);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&r, d, sizeof r, cudaMemcpyDeviceToHost));
    return r;
}

int main(void)
{
    size_t limit = 0;
    int *d;
    CHECK(cudaMalloc(&d, sizeof(int)));
    CHECK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
    EXPECT(limit == 8u << 20);
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20));
    CHECK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
    EXPECT(limit == 64u << 20);
    EXPECT(run(32u << 20, d) == 1);
    EXPECT(run(100u << 20, d) == -1);
    CHECK(cudaFree(d));
    return finish("heap_limit");
}
