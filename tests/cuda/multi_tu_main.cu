// Several translation units (no -rdc): this file and multi_tu_kernels.cu
// each register their own fatbinary, kernels and __device__ variables with
// the same names; the host calls into both.
#include "check.h"

__device__ int scale = 3; // a second one lives in the other file (static there)

__global__ void triple(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= scale;
}

void run_other_unit(int *p, int n); // multi_tu_kernels.cu
int other_unit_scale();

int main()
{
    const int n = 100;
    int h[n], *d;
    for (int i = 0; i < n; i++)
        h[i] = i;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    triple<<<1, 128>>>(d, n);
    CHECK(cudaGetLastError());
    run_other_unit(d, n);
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == i * 3 * 5 + 1);
    EXPECT(other_unit_scale() == 5);
    return finish("multi_tu");
}
