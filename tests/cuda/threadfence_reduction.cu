// The threadfence reduction of the CUDA samples: each block writes its
// partial sum, __threadfence() makes it visible, and the last block to
// finish (found with atomicInc on a global counter) sums all partials.
#include "check.h"

__device__ unsigned int blocks_done = 0;

__global__ void sum_last_block(const float *in, int n, volatile float *partials, float *result)
{
    __shared__ float s[256];
    __shared__ bool am_last;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k)
            s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s[0];
        __threadfence();
        unsigned ticket = atomicInc(&blocks_done, gridDim.x);
        am_last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (am_last) {
        float v = 0.0f;
        for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x)
            v += partials[b];
        s[threadIdx.x] = v;
        __syncthreads();
        for (int k = blockDim.x / 2; k > 0; k >>= 1) {
            if (threadIdx.x < k)
                s[threadIdx.x] += s[threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            *result = s[0];
            blocks_done = 0; // ready for the next launch
        }
    }
}

int main()
{
    const int n = 1 << 18, blocks = n / 256;
    float *h = new float[n];
    double want = 0;
    for (int i = 0; i < n; i++) {
        h[i] = (float)(i % 100) * 0.25f;
        want += h[i];
    }
    float *d, *partials, *result;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMalloc(&partials, blocks * sizeof(float)));
    CHECK(cudaMalloc(&result, sizeof(float)));
    CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    for (int rep = 0; rep < 2; rep++) {
        CHECK(cudaMemset(result, 0, sizeof(float)));
        sum_last_block<<<blocks, 256>>>(d, n, partials, result);
        CHECK(cudaGetLastError());
        float got;
        CHECK(cudaMemcpy(&got, result, sizeof got, cudaMemcpyDeviceToHost));
        if (!close_to(got, want, 1e-6))
            printf("run %d: sum %f, expected %f\n", rep, got, want);
        EXPECT(close_to(got, want, 1e-6));
    }
    unsigned left;
    CHECK(cudaMemcpyFromSymbol(&left, blocks_done, sizeof left));
    EXPECT(left == 0);
    delete[] h;
    return finish("threadfence_reduction");
}
