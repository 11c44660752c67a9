// Dynamic parallelism (CDP2): every block of a parent grid launches a child
// grid that fills its slice; a grid launched into cudaStreamTailLaunch
// (before the others, in program order) sums all slices, since it runs only
// once the parent grid and all its other work are complete, fire-and-forget
// work included; two grids launched in order into one device stream run in
// that order; and the device runtime's small calls answer from device
// code (cudaGetDevice, cudaDeviceGetAttribute, cudaDeviceGetLimit,
// cudaMalloc/cudaFree, cudaEventRecord, cudaGetLastError).
#include <cuda_runtime.h>
#include "check.h"

__global__ void fill(int *out, int block, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = block * 1000 + i;
}

__global__ void sum_all(const int *vals, int n, long long *result, const int *fnf_flag, int *tail_saw)
{
    long long s = 0;
    for (int i = 0; i < n; i++)
        s += vals[i];
    *result = s;
    *tail_saw = *fnf_flag;
}

__global__ void fire(int *flag) { *flag = 7; }
__global__ void step1(int *x) { *x = 5; }
__global__ void step2(const int *x, int *y) { *y = *x * 3; }

__global__ void parent(int *vals, int per_block, long long *result, int *fnf_flag, int *tail_saw, int *x, int *y,
                       int *info)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        sum_all<<<1, 1, 0, cudaStreamTailLaunch>>>(vals, gridDim.x * per_block, result, fnf_flag, tail_saw);
        info[0] = cudaGetLastError();
        fire<<<1, 1, 0, cudaStreamFireAndForget>>>(fnf_flag);
        info[1] = cudaGetLastError();
        cudaStream_t s;
        info[2] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        step1<<<1, 1, 0, s>>>(x);
        cudaEvent_t e;
        info[3] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
        info[4] = cudaEventRecord(e, s);
        step2<<<1, 1, 0, s>>>(x, y);
        info[5] = cudaGetLastError();
        info[6] = cudaStreamDestroy(s);
        info[7] = cudaEventDestroy(e);
        int dev = -1;
        info[8] = cudaGetDevice(&dev);
        info[9] = dev;
        int warp = 0;
        info[10] = cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0);
        info[11] = warp;
        size_t pending = 0;
        info[12] = cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount);
        info[13] = (int)pending;
        int *p = nullptr;
        info[14] = cudaMalloc((void **)&p, 16 * sizeof(int));
        if (p) {
            p[3] = 42;
            info[15] = p[3];
            info[16] = cudaFree(p);
        }
        info[17] = cudaPeekAtLastError();
    }
    if (threadIdx.x == 0) {
        fill<<<(per_block + 31) / 32, 32>>>(vals + blockIdx.x * per_block, blockIdx.x, per_block);
        if (cudaGetLastError() != cudaSuccess)
            atomicAdd(&info[18], 1);
    }
}

int main()
{
    const int blocks = 12, per_block = 50, n = blocks * per_block;
    int *vals, *ints, *info;
    long long *result;
    CHECK(cudaMalloc(&vals, n * sizeof(int)));
    CHECK(cudaMalloc(&ints, 4 * sizeof(int)));
    CHECK(cudaMalloc(&info, 32 * sizeof(int)));
    CHECK(cudaMalloc(&result, sizeof(long long)));
    CHECK(cudaMemset(vals, 0, n * sizeof(int)));
    CHECK(cudaMemset(ints, 0, 4 * sizeof(int)));
    CHECK(cudaMemset(info, 0xff, 32 * sizeof(int)));
    CHECK(cudaMemset(info + 18, 0, sizeof(int)));
    CHECK(cudaMemset(result, 0, sizeof(long long)));
    parent<<<blocks, 64>>>(vals, per_block, result, ints, ints + 1, ints + 2, ints + 3, info);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int h[n], hi[4], hinfo[32];
    long long hresult;
    CHECK(cudaMemcpy(h, vals, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hi, ints, sizeof hi, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&hresult, result, sizeof hresult, cudaMemcpyDeviceToHost));
    long long want = 0;
    int wrong = 0;
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < per_block; i++) {
            wrong += h[b * per_block + i] != b * 1000 + i;
            want += b * 1000 + i;
        }
    EXPECT(wrong == 0);           // every block's child ran
    EXPECT(hresult == want);      // the tail launch saw all of them
    EXPECT(hi[0] == 7);           // fire-and-forget ran
    EXPECT(hi[1] == 7);           // ... before the tail launch
    EXPECT(hi[3] == 15);          // step2 after step1 in one stream
    for (int k = 0; k <= 8; k++)
        EXPECT(hinfo[k] == cudaSuccess);
    EXPECT(hinfo[9] == 0);
    EXPECT(hinfo[10] == cudaSuccess && hinfo[11] == 32);
    EXPECT(hinfo[12] == cudaSuccess && hinfo[13] == 2048);
    EXPECT(hinfo[14] == cudaSuccess && hinfo[15] == 42 && hinfo[16] == cudaSuccess);
    EXPECT(hinfo[17] == cudaSuccess);
    EXPECT(hinfo[18] == 0);
    printf("sum %lld (expected %lld), fire-and-forget %d, tail saw %d, stream order %d\n", hresult, want, hi[0],
           hi[1], hi[3]);
    CHECK(cudaFree(vals));
    CHECK(cudaFree(ints));
    CHECK(cudaFree(info));
    CHECK(cudaFree(result));
    return finish("cdp_streams");
}
