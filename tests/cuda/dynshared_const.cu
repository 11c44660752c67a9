// Dynamic shared memory (extern __shared__, sized at launch, and above the
// 48 KiB default after cudaFuncSetAttribute), __constant__ memory written
// with cudaMemcpyToSymbol, __device__ globals with initializers read and
// written from both sides, cudaGetSymbolAddress and cudaGetSymbolSize.
#include "check.h"

__constant__ float coefficients[16];
__constant__ int offset_table[4] = {1, 2, 3, 4};
__device__ int counter = 5;
__device__ float device_array[256];

__global__ void polynomial(const float *x, float *y, int n)
{
    extern __shared__ float cache[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cache[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) {
        float v = cache[threadIdx.x], acc = 0.0f;
        for (int k = 15; k >= 0; k--)
            acc = acc * v + coefficients[k];
        y[i] = acc + offset_table[i % 4];
        if (i + 256 >= n) /* the last i of each slot writes it: no race between blocks */
            device_array[i % 256] = (float)i;
    }
    if (i == 0)
        atomicAdd(&counter, 10);
}

__global__ void big_shared(int *out, int words)
{
    extern __shared__ int big[];
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        big[i] = i * 3;
    __syncthreads();
    int s = 0;
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        s += big[words - 1 - i];
    atomicAdd(out, s);
}

int main()
{
    float coef[16];
    for (int k = 0; k < 16; k++)
        coef[k] = 1.0f / (float)(k + 1);
    CHECK(cudaMemcpyToSymbol(coefficients, coef, sizeof coef));
    int table[4] = {10, 20, 30, 40};
    CHECK(cudaMemcpyToSymbol(offset_table, table, 2 * sizeof(int), 2 * sizeof(int))); // only the last two
    const int n = 300;
    float hx[n], hy[n];
    for (int i = 0; i < n; i++)
        hx[i] = (float)i / (float)n;
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof hx));
    CHECK(cudaMalloc(&dy, sizeof hy));
    CHECK(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice));
    polynomial<<<(n + 127) / 128, 128, 128 * sizeof(float)>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hy, dy, sizeof hy, cudaMemcpyDeviceToHost));
    const int offsets[4] = {1, 2, 10, 20};
    for (int i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int k = 15; k >= 0; k--)
            acc = acc * hx[i] + coef[k];
        EXPECT(close_to(hy[i], acc + offsets[i % 4], 1e-6));
    }
    int c = 0;
    CHECK(cudaMemcpyFromSymbol(&c, counter, sizeof c));
    EXPECT(c == 15);
    float arr[256];
    CHECK(cudaMemcpyFromSymbol(arr, device_array, sizeof arr));
    EXPECT(arr[0] == 256.0f && arr[43] == 299.0f && arr[44] == 44.0f);
    void *addr = nullptr;
    size_t size = 0;
    CHECK(cudaGetSymbolAddress(&addr, device_array));
    CHECK(cudaGetSymbolSize(&size, device_array));
    EXPECT(addr != nullptr && size == sizeof arr);
    float first = -1;
    CHECK(cudaMemcpy(&first, addr, sizeof first, cudaMemcpyDeviceToHost));
    EXPECT(first == 256.0f);
    EXPECT_ERROR(cudaMemcpyToSymbol(coefficients, coef, sizeof coef, 4), cudaErrorInvalidValue);

    // dynamic shared memory above 48 KiB needs the attribute
    const int words = 80 * 1024 / 4;
    int *dout, got = 0;
    CHECK(cudaMalloc(&dout, sizeof(int)));
    CHECK(cudaMemset(dout, 0, sizeof(int)));
    big_shared<<<1, 256, words * 4>>>(dout, words);
    EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, words * 4));
    big_shared<<<1, 256, words * 4>>>(dout, words);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&got, dout, sizeof got, cudaMemcpyDeviceToHost));
    long long want = 0;
    for (int i = 0; i < words; i++)
        want += i * 3;
    EXPECT(got == (int)want);
    return finish("dynshared_const");
}
