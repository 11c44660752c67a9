// Warp-shuffle reductions: __shfl_down_sync and __shfl_xor_sync sums within
// warps, per-warp partials combined through shared memory, and one
// atomicAdd per block into the result. Also __reduce_add_sync (sm_80).
#include "check.h"

__inline__ __device__ int warp_sum_down(int v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__inline__ __device__ float warp_sum_xor(float v)
{
    for (int mask = 16; mask > 0; mask >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, mask);
    return v;
}

__global__ void sum_int(const int *in, int n, int *out)
{
    __shared__ int warp_partials[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    v = warp_sum_down(v);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0)
        warp_partials[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x / 32) ? warp_partials[lane] : 0;
        v = warp_sum_down(v);
        if (lane == 0)
            atomicAdd(out, v);
    }
}

__global__ void sum_float_xor(const float *in, float *per_warp)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum_xor(in[i]);
    // every lane holds the full sum after an xor butterfly
    if (__shfl_sync(0xffffffffu, v, 7) != v)
        v = -1.0f;
    if (threadIdx.x % 32 == 0)
        per_warp[i / 32] = v;
}

__global__ void sum_reduce_add(const unsigned *in, unsigned *out)
{
    unsigned v = __reduce_add_sync(0xffffffffu, in[threadIdx.x]);
    if (threadIdx.x % 32 == 0)
        out[threadIdx.x / 32] = v;
}

int main()
{
    const int n = 77777;
    int *h = new int[n];
    long long want = 0;
    for (int i = 0; i < n; i++) {
        h[i] = i % 13 - 6;
        want += h[i];
    }
    int *d, *out;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    CHECK(cudaMalloc(&out, sizeof(int)));
    CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(out, 0, sizeof(int)));
    sum_int<<<(n + 255) / 256, 256>>>(d, n, out);
    CHECK(cudaGetLastError());
    int got;
    CHECK(cudaMemcpy(&got, out, sizeof(int), cudaMemcpyDeviceToHost));
    if (got != want)
        printf("shuffle sum %d, expected %lld\n", got, want);
    EXPECT(got == want);

    const int m = 1024;
    float hf[m], warps[m / 32];
    for (int i = 0; i < m; i++)
        hf[i] = (float)(i % 32);
    float *df, *dw;
    CHECK(cudaMalloc(&df, sizeof hf));
    CHECK(cudaMalloc(&dw, sizeof warps));
    CHECK(cudaMemcpy(df, hf, sizeof hf, cudaMemcpyHostToDevice));
    sum_float_xor<<<4, 256>>>(df, dw);
    CHECK(cudaMemcpy(warps, dw, sizeof warps, cudaMemcpyDeviceToHost));
    for (int w = 0; w < m / 32; w++)
        EXPECT(warps[w] == 496.0f);

    unsigned hu[128], hr[4];
    for (int i = 0; i < 128; i++)
        hu[i] = (unsigned)i * 3u;
    unsigned *du, *dr;
    CHECK(cudaMalloc(&du, sizeof hu));
    CHECK(cudaMalloc(&dr, sizeof hr));
    CHECK(cudaMemcpy(du, hu, sizeof hu, cudaMemcpyHostToDevice));
    sum_reduce_add<<<1, 128>>>(du, dr);
    CHECK(cudaMemcpy(hr, dr, sizeof hr, cudaMemcpyDeviceToHost));
    for (int w = 0; w < 4; w++) {
        unsigned expect = 0;
        for (int l = 0; l < 32; l++)
            expect += hu[w * 32 + l];
        EXPECT(hr[w] == expect);
    }
    delete[] h;
    return finish("reduce_shuffle");
}
