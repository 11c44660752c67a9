// The second translation unit of multi_tu_main.cu.
#include "check.h"

static __device__ int scale = 5;

__global__ void times_scale_plus_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * scale + 1;
}

void run_other_unit(int *p, int n)
{
    times_scale_plus_one<<<(n + 31) / 32, 32>>>(p, n);
    CHECK(cudaGetLastError());
}

int other_unit_scale()
{
    int v = 0;
    CHECK(cudaMemcpyFromSymbol(&v, scale, sizeof v));
    return v;
}
