// Error handling of the runtime API: error names and strings, the
// per-thread last error (set by failing calls, cleared by cudaGetLastError,
// not by cudaPeekAtLastError), launch configuration errors that are not
// sticky, invalid arguments and handles, and copies outside allocations.
#include "check.h"
#include <cstring>

__global__ void k(int *p)
{
    p[threadIdx.x] = 1;
}

int main()
{
    EXPECT(!strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess"));
    EXPECT(!strcmp(cudaGetErrorString(cudaSuccess), "no error"));
    EXPECT(!strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress"));
    EXPECT(!strcmp(cudaGetErrorString(cudaErrorIllegalAddress), "an illegal memory access was encountered"));
    EXPECT(!strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument"));
    EXPECT(!strcmp(cudaGetErrorName(cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration"));
    EXPECT(!strcmp(cudaGetErrorName(cudaErrorNotSupported), "cudaErrorNotSupported"));
    EXPECT(cudaErrorMisalignedAddress == 716 && cudaErrorAssert == 710 && cudaErrorLaunchFailure == 719);

    int *d;
    CHECK(cudaMalloc(&d, 256 * sizeof(int)));
    // a launch configuration error is returned by the launch and not sticky
    k<<<1, 2048>>>(d);
    EXPECT_ERROR(cudaPeekAtLastError(), LAUNCH_CONFIG_ERROR);
    EXPECT_ERROR(cudaGetLastError(), LAUNCH_CONFIG_ERROR);
    EXPECT_ERROR(cudaGetLastError(), cudaSuccess);
    k<<<dim3(1, 1, 0), 32>>>(d);
    EXPECT_ERROR(cudaGetLastError(), LAUNCH_CONFIG_ERROR);
    k<<<1, 32>>>(d);
    EXPECT_ERROR(cudaGetLastError(), cudaSuccess);
    EXPECT_ERROR(cudaDeviceSynchronize(), cudaSuccess);

    // failing calls set the last error
    EXPECT_ERROR(cudaMemcpy(d, d + 200, 100 * sizeof(int), cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
    int host[4];
    EXPECT_ERROR(cudaMemcpy(host, host + 1, sizeof(int), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaMemcpy(d, host, sizeof host, (cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
    EXPECT_ERROR(cudaFree(host), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaFree(d + 1), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaSetDevice(3), cudaErrorInvalidDevice);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamDestroy(s));
    cudaEvent_t e;
    CHECK(cudaEventCreate(&e));
    float ms;
    EXPECT_ERROR(cudaEventElapsedTime(&ms, e, e), cudaErrorInvalidResourceHandle); // never recorded
    CHECK(cudaEventDestroy(e));
    EXPECT_ERROR(cudaMemset(d, 0, 1024 * sizeof(int)), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaGetLastError(), cudaSuccess);
    CHECK(cudaFree(nullptr));
    int *zero = (int *)0x1;
    CHECK(cudaMalloc(&zero, 0));
    CHECK(cudaFree(d));
    return finish("api_errors");
}
