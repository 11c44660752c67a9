// Shared-memory tree reduction: each block sums its slice in static shared
// memory with __syncthreads between steps; a second launch reduces the
// partial sums. Also a variant sized with dynamic shared memory.
#include "check.h"

template <int BLOCK>
__global__ void block_sum(const int *in, int n, int *partial)
{
    __shared__ int s[BLOCK];
    int i = blockIdx.x * BLOCK * 2 + threadIdx.x;
    int v = 0;
    if (i < n)
        v += in[i];
    if (i + BLOCK < n)
        v += in[i + BLOCK];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
}

__global__ void block_sum_dynamic(const float *in, int n, float *partial)
{
    extern __shared__ float sd[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sd[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            sd[threadIdx.x] += sd[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = sd[0];
}

int main()
{
    const int n = 100003;
    int *h = new int[n];
    long long want = 0;
    for (int i = 0; i < n; i++) {
        h[i] = (i * 7919) % 1000 - 500;
        want += h[i];
    }
    int *d, *p1, *p2;
    const int blocks = (n + 511) / 512;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    CHECK(cudaMalloc(&p1, blocks * sizeof(int)));
    CHECK(cudaMalloc(&p2, sizeof(int)));
    CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    block_sum<256><<<blocks, 256>>>(d, n, p1);
    CHECK(cudaGetLastError());
    block_sum<256><<<1, 256>>>(p1, blocks, p2);
    CHECK(cudaGetLastError());
    int got = 0;
    CHECK(cudaMemcpy(&got, p2, sizeof(int), cudaMemcpyDeviceToHost));
    if (got != want)
        printf("int sum: got %d, expected %lld\n", got, want);
    EXPECT(got == want);

    const int m = 5000;
    float *hf = new float[m];
    double fwant = 0;
    for (int i = 0; i < m; i++) {
        hf[i] = 1.0f / (float)(i + 1);
        fwant += hf[i];
    }
    float *df, *pf;
    for (int block = 32; block <= 1024; block *= 2) {
        int nb = (m + block - 1) / block;
        CHECK(cudaMalloc(&df, m * sizeof(float)));
        CHECK(cudaMalloc(&pf, nb * sizeof(float)));
        CHECK(cudaMemcpy(df, hf, m * sizeof(float), cudaMemcpyHostToDevice));
        block_sum_dynamic<<<nb, block, block * sizeof(float)>>>(df, m, pf);
        CHECK(cudaGetLastError());
        float *parts = new float[nb];
        CHECK(cudaMemcpy(parts, pf, nb * sizeof(float), cudaMemcpyDeviceToHost));
        double sum = 0;
        for (int b = 0; b < nb; b++)
            sum += parts[b];
        if (!close_to(sum, fwant, 1e-5))
            printf("block %d: float sum %.7f, expected %.7f\n", block, sum, fwant);
        EXPECT(close_to(sum, fwant, 1e-5));
        delete[] parts;
        CHECK(cudaFree(df));
        CHECK(cudaFree(pf));
    }
    delete[] h;
    delete[] hf;
    return finish("reduce_shared");
}
