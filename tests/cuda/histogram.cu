// Histograms with atomics: per-block histograms in shared memory with
// shared atomicAdd, merged with global atomicAdd; a global-only variant;
// atomicMax/atomicMin/atomicCAS/atomicExch on global memory.
#include "check.h"

#define BINS 64

__global__ void histogram_shared(const unsigned char *data, int n, unsigned *hist)
{
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        atomicAdd(&hist[b], local[b]);
}

__global__ void histogram_global(const unsigned char *data, int n, unsigned *hist)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i] % BINS], 1u);
}

__global__ void other_atomics(const int *values, int n, int *maxv, int *minv, int *cas_count, int *exch)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    atomicMax(maxv, values[i]);
    atomicMin(minv, values[i]);
    // a CAS loop increment
    int old = *cas_count, assumed;
    do {
        assumed = old;
        old = atomicCAS(cas_count, assumed, assumed + 1);
    } while (old != assumed);
    atomicExch(exch, 42);
}

int main()
{
    const int n = 200000;
    unsigned char *h = new unsigned char[n];
    unsigned want[BINS] = {0};
    for (int i = 0; i < n; i++) {
        h[i] = (unsigned char)((i * 2654435761u) >> 24);
        want[h[i] % BINS]++;
    }
    unsigned char *d;
    unsigned *dh, got[BINS];
    CHECK(cudaMalloc(&d, n));
    CHECK(cudaMalloc(&dh, sizeof got));
    CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dh, 0, sizeof got));
    histogram_shared<<<40, 256>>>(d, n, dh);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got, dh, sizeof got, cudaMemcpyDeviceToHost));
    for (int b = 0; b < BINS; b++)
        EXPECT(got[b] == want[b]);
    CHECK(cudaMemset(dh, 0, sizeof got));
    histogram_global<<<(n + 511) / 512, 512>>>(d, n, dh);
    CHECK(cudaMemcpy(got, dh, sizeof got, cudaMemcpyDeviceToHost));
    for (int b = 0; b < BINS; b++)
        EXPECT(got[b] == want[b]);

    const int m = 1000;
    int vals[m];
    for (int i = 0; i < m; i++)
        vals[i] = (i * 7777) % 2001 - 1000;
    int *dv, *res;
    int init[4] = {-2000000, 2000000, 0, 0};
    CHECK(cudaMalloc(&dv, sizeof vals));
    CHECK(cudaMalloc(&res, sizeof init));
    CHECK(cudaMemcpy(dv, vals, sizeof vals, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(res, init, sizeof init, cudaMemcpyHostToDevice));
    other_atomics<<<(m + 127) / 128, 128>>>(dv, m, res, res + 1, res + 2, res + 3);
    int r[4];
    CHECK(cudaMemcpy(r, res, sizeof r, cudaMemcpyDeviceToHost));
    int mx = -2000000, mn = 2000000;
    for (int i = 0; i < m; i++) {
        mx = vals[i] > mx ? vals[i] : mx;
        mn = vals[i] < mn ? vals[i] : mn;
    }
    EXPECT(r[0] == mx);
    EXPECT(r[1] == mn);
    EXPECT(r[2] == m);
    EXPECT(r[3] == 42);
    delete[] h;
    return finish("histogram");
}
