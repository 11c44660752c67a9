// Dynamic parallelism (CDP2) limits, as device launches report them through
// cudaGetLastError: with cudaLimitDevRuntimePendingLaunchCount lowered to
// 64, a thread that makes 200 launches into cudaStreamTailLaunch (none can
// start before its grid ends) gets cudaErrorLaunchPendingCountExceeded for
// those past the limit, and exactly the others run; a kernel that launches
// itself recursively is refused with cudaErrorLaunchMaxDepthExceeded once
// the nesting would pass 24 levels below the host's launch.
#include <cuda_runtime.h>
#include "check.h"

__global__ void count(int *c) { atomicAdd(c, 1); }

__global__ void many(int *c, int n, int *results)
{
    for (int i = 0; i < n; i++) {
        count<<<1, 1, 0, cudaStreamTailLaunch>>>(c);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess)
            results[0]++;
        else if (e == cudaErrorLaunchPendingCountExceeded)
            results[1]++;
        else
            results[2]++;
    }
}

__global__ void dive(int depth, int *deepest, int *fail_depth, int *fail_code)
{
    atomicMax(deepest, depth);
    dive<<<1, 1>>>(depth + 1, deepest, fail_depth, fail_code);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        *fail_depth = depth;
        *fail_code = e;
    }
}

int main()
{
    int *d;
    CHECK(cudaMalloc(&d, 8 * sizeof(int)));
    CHECK(cudaMemset(d, 0, 8 * sizeof(int)));
    CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 64));
    size_t limit = 0;
    CHECK(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
    EXPECT(limit == 64);
    many<<<1, 1>>>(d, 200, d + 1);
    CHECK(cudaDeviceSynchronize());
    int h[8];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    printf("launched %d, refused %d (pending count), other errors %d, ran %d\n", h[1], h[2], h[3], h[0]);
    EXPECT(h[1] + h[2] == 200);
    EXPECT(h[1] > 0 && h[1] <= 64);
    EXPECT(h[2] > 0);
    EXPECT(h[3] == 0);
    EXPECT(h[0] == h[1]);
    CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 2048));

    CHECK(cudaMemset(d, 0, 8 * sizeof(int)));
    dive<<<1, 1>>>(0, d, d + 1, d + 2);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    printf("deepest grid %d, refused at depth %d with error %d\n", h[0], h[1], h[2]);
    EXPECT(h[2] == cudaErrorLaunchMaxDepthExceeded);
    EXPECT(h[1] == 24 && h[0] == 24);
    CHECK(cudaFree(d));
    return finish("cdp_limits");
}
