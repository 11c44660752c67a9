// The library translation unit of rdc_main.cu (built with -rdc=true).
#include "check.h"

__device__ float lib_bias = 0.5f;
static __device__ int unit_local = 2;

template <typename T> __device__ T twice(T x) { return x + x; }

__device__ float lib_transform(float x)
{
    return x * 2.0f + 1.0f;
}

__global__ void lib_kernel(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = lib_transform(p[i]) + lib_bias - 1.0f + twice(1.0f) * (float)(unit_local - 1);
    if (i == 0)
        printf("library unit: %d\n", unit_local);
}

void lib_launch(float *p, int n)
{
    lib_kernel<<<1, 64>>>(p, n);
    CHECK(cudaGetLastError());
}
