// Device management: device count and selection, properties of the device
// (compute capability, limits used by launch code), attributes agreeing
// with the properties, limits, flags, versions, and a kernel's attributes
// and occupancy.
#include "check.h"
#include <cstring>

__global__ void uses_shared(float *out)
{
    __shared__ float tile[1024];
    tile[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[1023 - threadIdx.x];
}

__global__ void __launch_bounds__(128) bounded(int *p)
{
    p[threadIdx.x] = 1;
}

int main()
{
    int count = 0, dev = -1;
    CHECK(cudaGetDeviceCount(&count));
    EXPECT(count >= 1);
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDevice(&dev));
    EXPECT(dev == 0);
    cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, compute capability %d.%d, %d SMs\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
    EXPECT(prop.major * 10 + prop.minor >= 80);
    EXPECT(prop.warpSize == 32);
    EXPECT(prop.maxThreadsPerBlock == 1024);
    EXPECT(prop.maxThreadsDim[0] == 1024 && prop.maxThreadsDim[2] == 64);
    EXPECT(prop.maxGridSize[0] == 2147483647 && prop.maxGridSize[1] == 65535);
    EXPECT(prop.sharedMemPerBlock == 48 * 1024);
    EXPECT(prop.sharedMemPerBlockOptin > 48 * 1024);
    EXPECT(prop.totalGlobalMem > (size_t)1 << 30);
    EXPECT(prop.multiProcessorCount > 0 && prop.l2CacheSize > 0);
    EXPECT(prop.unifiedAddressing == 1 && prop.managedMemory == 1);
    int v = 0;
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0));
    EXPECT(v == prop.major);
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
    EXPECT(v == prop.multiProcessorCount);
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    EXPECT(v == (int)prop.sharedMemPerBlockOptin);
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0));
    EXPECT(v == 32);
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0));
    EXPECT(v > 0);
    EXPECT_ERROR(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 5), cudaErrorInvalidDevice);
    EXPECT_ERROR(cudaGetDeviceProperties(&prop, 2), cudaErrorInvalidDevice);

    int driver = 0, runtime = 0;
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    EXPECT(driver >= runtime && runtime >= 12000);
    size_t limit = 0;
    CHECK(cudaDeviceGetLimit(&limit, cudaLimitPrintfFifoSize));
    EXPECT(limit > 0);
    CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
    CHECK(cudaDeviceGetLimit(&limit, cudaLimitStackSize));
    EXPECT(limit == 4096);
    CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    unsigned flags = 0;
    CHECK(cudaGetDeviceFlags(&flags));
    EXPECT(flags & cudaDeviceScheduleBlockingSync);
    CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));

    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, uses_shared));
    EXPECT(fa.sharedSizeBytes == 4096);
    EXPECT(fa.maxThreadsPerBlock == 1024);
    EXPECT(fa.ptxVersion >= 80 && fa.binaryVersion >= 80);
    EXPECT(fa.maxDynamicSharedSizeBytes == 48 * 1024 - 4096);
    CHECK(cudaFuncGetAttributes(&fa, bounded));
    EXPECT(fa.maxThreadsPerBlock == 128);
    CHECK(cudaFuncSetAttribute(uses_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
    CHECK(cudaFuncGetAttributes(&fa, uses_shared));
    EXPECT(fa.maxDynamicSharedSizeBytes == 64 * 1024);
    EXPECT_ERROR(cudaFuncSetAttribute(uses_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 30),
                 cudaErrorInvalidValue);
    CHECK(cudaFuncSetCacheConfig(uses_shared, cudaFuncCachePreferL1));
    EXPECT_ERROR(cudaFuncGetAttributes(&fa, (const void *)main), NOT_A_KERNEL_ERROR);

    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_shared, 256, 0));
    EXPECT(blocks >= 1 && blocks <= prop.maxBlocksPerMultiProcessor);
    EXPECT(blocks * 256 <= prop.maxThreadsPerMultiProcessor);
    int min_grid = 0, best_block = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best_block, uses_shared, 0, 0));
    EXPECT(best_block > 0 && best_block <= 1024 && best_block % 32 == 0 && min_grid > 0);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bounded, 256, 0));
    // __launch_bounds__(128) does not enter the occupancy of a 256-thread block
    // (an H200 reports resident blocks for it; launching it fails)
    EXPECT(blocks >= 1 && blocks * 256 <= prop.maxThreadsPerMultiProcessor);

    float *out;
    CHECK(cudaMalloc(&out, 1024 * sizeof(float)));
    uses_shared<<<1, 1024>>>(out);
    CHECK(cudaDeviceSynchronize());
    float h[1024];
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 1023.0f && h[1023] == 0.0f);
    CHECK(cudaDeviceReset());
    return finish("device_api");
}
