// Relocatable device code (-rdc=true): a kernel in this file calls a
// __device__ function and reads a __device__ variable defined in
// rdc_lib.cu; the device linker joins them.
#include "check.h"

extern __device__ float lib_bias;
__device__ float lib_transform(float x); // rdc_lib.cu

template <typename T> __device__ T twice(T x) { return x + x; } // also instantiated in rdc_lib.cu
static __device__ int unit_local = 1;                            // rdc_lib.cu has its own

__global__ void apply(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = lib_transform(p[i]) + lib_bias + twice(0.0f) * unit_local;
    if (i == 0)
        printf("main unit: bias %.1f\n", lib_bias);
}

void lib_launch(float *p, int n); // a kernel of rdc_lib.cu

__global__ void check_twice(int *out)
{
    out[0] = twice(21) * unit_local;
}

int main()
{
    const int n = 50;
    float h[n], *d;
    for (int i = 0; i < n; i++)
        h[i] = (float)i;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    apply<<<1, 64>>>(d, n);
    CHECK(cudaGetLastError());
    lib_launch(d, n);
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == ((float)i * 2.0f + 1.0f + 0.5f) * 2.0f + 1.0f + 0.5f - 1.0f + 2.0f);
    int *dv, v = 0;
    CHECK(cudaMalloc(&dv, sizeof v));
    check_twice<<<1, 1>>>(dv);
    CHECK(cudaMemcpy(&v, dv, sizeof v, cudaMemcpyDeviceToHost));
    EXPECT(v == 42);
    return finish("rdc");
}
