// Corpus: warp-level code written with warpSize, not 32 (the pattern of
// NVIDIA's reduction and shfl_scan samples): nvcc keeps the division and
// modulo by warpSize in the PTX as the predefined constant WARP_SZ.
// An inclusive scan per warp and a block sum. Self-checking.
#include <cstdio>

__global__ void scan(const int *in, int *out, int *block_sum)
{
    __shared__ int warp_tot[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    int v = in[i];
    for (int d = 1; d < warpSize; d *= 2) {
        int u = __shfl_up_sync(0xffffffffu, v, d, warpSize);
        if (lane >= d)
            v += u;
    }
    out[i] = v;
    if (lane == warpSize - 1)
        warp_tot[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        int s = 0;
        for (int w = 0; w < (int)(blockDim.x + warpSize - 1) / warpSize; w++)
            s += warp_tot[w];
        block_sum[blockIdx.x] = s;
    }
}

int main()
{
    const int n = 1024, bs = 256;
    int hin[n], hout[n], hsum[n / bs];
    for (int i = 0; i < n; i++)
        hin[i] = (i * 13) % 17 - 8;
    int *in, *out, *sum;
    cudaMalloc(&in, sizeof hin);
    cudaMalloc(&out, sizeof hout);
    cudaMalloc(&sum, sizeof hsum);
    cudaMemcpy(in, hin, sizeof hin, cudaMemcpyHostToDevice);
    scan<<<n / bs, bs>>>(in, out, sum);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(hout, out, sizeof hout, cudaMemcpyDeviceToHost);
    cudaMemcpy(hsum, sum, sizeof hsum, cudaMemcpyDeviceToHost);
    int bad = e != cudaSuccess;
    for (int i = 0; i < n; i++) {
        int s = 0;
        for (int j = i / 32 * 32; j <= i; j++)
            s += hin[j];
        if (hout[i] != s && bad++ < 5)
            printf("out[%d] = %d, want %d\n", i, hout[i], s);
    }
    for (int b = 0; b < n / bs; b++) {
        int s = 0;
        for (int j = b * bs; j < (b + 1) * bs; j++)
            s += hin[j];
        if (hsum[b] != s && bad++ < 5)
            printf("block %d sum %d, want %d\n", b, hsum[b], s);
    }
    printf("warp_size_scan: %s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
