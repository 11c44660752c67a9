// Corpus: a kernel that reads 64 elements before its allocation (the bug
// pattern of Rodinia's srad_v2 at small sizes): on a GPU an illegal address;
// kemu must say which allocation the address lies before, and how far.
#include <cstdio>

__global__ void stencil(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i - 64] + in[i]; /* the missing bounds check */
}

int main()
{
    const int n = 256;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));
    stencil<<<1, n>>>(in, out, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("read_before: %s (%s)\n", e == cudaErrorIllegalAddress ? "PASS" : "FAIL", cudaGetErrorName(e));
    return e != cudaErrorIllegalAddress;
}
