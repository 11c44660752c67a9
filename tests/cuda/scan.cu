// Prefix sums: a work-efficient (Blelloch) exclusive scan per block in
// shared memory, a warp-level inclusive scan with __shfl_up_sync, and a
// three-phase multi-block scan (block scans, scan of block sums, add back).
#include "check.h"

#define B 256

__global__ void block_exclusive_scan(const int *in, int *out, int *block_sums, int n)
{
    __shared__ int s[2 * B];
    int base = blockIdx.x * 2 * B, t = threadIdx.x;
    s[t] = base + t < n ? in[base + t] : 0;
    s[t + B] = base + t + B < n ? in[base + t + B] : 0;
    int offset = 1;
    for (int d = B; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            s[bi] += s[ai];
        }
        offset *= 2;
    }
    if (t == 0) {
        block_sums[blockIdx.x] = s[2 * B - 1];
        s[2 * B - 1] = 0;
    }
    for (int d = 1; d < 2 * B; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            int x = s[ai];
            s[ai] = s[bi];
            s[bi] += x;
        }
    }
    __syncthreads();
    if (base + t < n)
        out[base + t] = s[t];
    if (base + t + B < n)
        out[base + t + B] = s[t + B];
}

__global__ void add_block_offsets(int *out, const int *offsets, int n)
{
    int i = blockIdx.x * 2 * B + threadIdx.x;
    if (i < n)
        out[i] += offsets[blockIdx.x];
    if (i + B < n)
        out[i + B] += offsets[blockIdx.x];
}

__global__ void warp_inclusive_scan(const int *in, int *out)
{
    int v = in[threadIdx.x];
    int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += up;
    }
    out[threadIdx.x] = v;
}

int main()
{
    const int n = 100000;
    const int blocks = (n + 2 * B - 1) / (2 * B);
    int *h = new int[n], *got = new int[n];
    for (int i = 0; i < n; i++)
        h[i] = (i * 31) % 7 - 2;
    int *din, *dout, *dsums, *dsums_scan, *dtotal;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaMalloc(&dsums, blocks * sizeof(int)));
    CHECK(cudaMalloc(&dsums_scan, blocks * sizeof(int)));
    CHECK(cudaMalloc(&dtotal, sizeof(int)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    block_exclusive_scan<<<blocks, B>>>(din, dout, dsums, n);
    block_exclusive_scan<<<1, B>>>(dsums, dsums_scan, dtotal, blocks);
    add_block_offsets<<<blocks, B>>>(dout, dsums_scan, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    int acc = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        if (got[i] != acc && bad++ < 5)
            printf("scan[%d] = %d, expected %d\n", i, got[i], acc);
        acc += h[i];
    }
    EXPECT(bad == 0);
    int total;
    CHECK(cudaMemcpy(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost));
    EXPECT(total == acc);

    int wi[64], wo[64];
    for (int i = 0; i < 64; i++)
        wi[i] = i + 1;
    int *dwi, *dwo;
    CHECK(cudaMalloc(&dwi, sizeof wi));
    CHECK(cudaMalloc(&dwo, sizeof wo));
    CHECK(cudaMemcpy(dwi, wi, sizeof wi, cudaMemcpyHostToDevice));
    warp_inclusive_scan<<<1, 64>>>(dwi, dwo);
    CHECK(cudaMemcpy(wo, dwo, sizeof wo, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++) {
        int lane = i % 32, start = i - lane, s = 0;
        for (int j = start; j <= i; j++)
            s += wi[j];
        EXPECT(wo[i] == s);
    }
    delete[] h;
    delete[] got;
    return finish("scan");
}
