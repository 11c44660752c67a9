// Several devices in one process (`kemu exec --devices N`): the device
// queries, then each device computes a shard of y = a*x + x*x in its own
// memory on its own stream, and the shards are gathered on device 0 three
// ways: cudaMemcpyPeer, cudaMemcpyPeerAsync on the source device's stream,
// and cudaMemcpy with cudaMemcpyDefault (unified addressing: the pointers
// name their devices). Checked against the same sum computed on the CPU.
// Usage: multigpu_shards N (the number of devices the program expects).
#include <cstring>
#include <cuda_runtime.h>

#include "check.h"

#define MAX_DEVICES 16

__global__ void shard_kernel(const float *x, float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + x[i] * x[i];
}

__global__ void scale_kernel(float *y, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] *= s;
}

int main(int argc, char **argv)
{
    int expected = argc > 1 ? atoi(argv[1]) : 2;
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    EXPECT(count == expected);
    if (count != expected || count < 2 || count > MAX_DEVICES) {
        printf("FAIL multigpu_shards: %d devices, expected %d\n", count, expected);
        return 1;
    }

    // ---- queries: every device is the same GPU, each on its own bus
    cudaDeviceProp p0;
    CHECK(cudaGetDeviceProperties(&p0, 0));
    for (int d = 0; d < count; d++) {
        cudaDeviceProp p;
        CHECK(cudaGetDeviceProperties(&p, d));
        EXPECT(!strcmp(p.name, p0.name));
        EXPECT(p.major == p0.major && p.minor == p0.minor);
        EXPECT(p.multiProcessorCount == p0.multiProcessorCount);
        EXPECT(p.unifiedAddressing == 1);
        int bus = -1, sms = 0;
        CHECK(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, d));
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
        EXPECT(bus == p.pciBusID);
        EXPECT(sms == p0.multiProcessorCount);
        char id[32];
        CHECK(cudaDeviceGetPCIBusId(id, sizeof id, d));
        int back = -1;
        CHECK(cudaDeviceGetByPCIBusId(&back, id));
        EXPECT(back == d);
        for (int e = 0; e < d; e++) {
            char other[32];
            CHECK(cudaDeviceGetPCIBusId(other, sizeof other, e));
            EXPECT(strcmp(id, other) != 0);
        }
        for (int q = 0; q < count; q++) {
            int can = -1;
            CHECK(cudaDeviceCanAccessPeer(&can, d, q));
            EXPECT(can == (d != q));
        }
    }
    cudaDeviceProp bad;
    EXPECT_ERROR(cudaGetDeviceProperties(&bad, count), cudaErrorInvalidDevice);
    EXPECT_ERROR(cudaSetDevice(count), cudaErrorInvalidDevice);
    EXPECT_ERROR(cudaSetDevice(-1), cudaErrorInvalidDevice);
    int can = 0;
    EXPECT_ERROR(cudaDeviceCanAccessPeer(&can, 0, count), cudaErrorInvalidDevice);
    EXPECT(cudaGetLastError() == cudaErrorInvalidDevice); // the last failed call's error, then cleared
    EXPECT(cudaGetLastError() == cudaSuccess);
    int current = -1;
    CHECK(cudaGetDevice(&current));
    EXPECT(current == 0); // the failed cudaSetDevice calls changed nothing

    // ---- one shard per device
    const int per = 1000 + 37; // not a multiple of the block size
    const int n = per * count;
    float *hx = (float *)malloc(n * sizeof(float)), *hy = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++)
        hx[i] = (float)((i * 7919) % 1000) / 250.0f - 2.0f;
    float *x[MAX_DEVICES], *y[MAX_DEVICES];
    cudaStream_t stream[MAX_DEVICES];
    cudaEvent_t done[MAX_DEVICES];
    for (int d = 0; d < count; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaGetDevice(&current));
        EXPECT(current == d);
        CHECK(cudaStreamCreate(&stream[d]));
        CHECK(cudaEventCreate(&done[d]));
        int sd = -1;
        CHECK(cudaStreamGetDevice(stream[d], &sd));
        EXPECT(sd == d);
        CHECK(cudaMalloc(&x[d], per * sizeof(float)));
        CHECK(cudaMalloc(&y[d], per * sizeof(float)));
        CHECK(cudaMemcpyAsync(x[d], hx + d * per, per * sizeof(float), cudaMemcpyHostToDevice, stream[d]));
        shard_kernel<<<(per + 127) / 128, 128, 0, stream[d]>>>(x[d], y[d], 0.5f + d, per);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(done[d], stream[d]));
    }
    // a pointer names its device
    for (int d = 0; d < count; d++) {
        cudaPointerAttributes attr;
        CHECK(cudaPointerGetAttributes(&attr, y[d]));
        EXPECT(attr.type == cudaMemoryTypeDevice);
        EXPECT(attr.device == d);
        CHECK(cudaPointerGetAttributes(&attr, x[d] + 5));
        EXPECT(attr.device == d);
        for (int e = 0; e < d; e++)
            EXPECT(y[e] != y[d]);
    }
    // a stream of another device is refused by a launch
    CHECK(cudaSetDevice(0));
    scale_kernel<<<1, 32, 0, stream[1]>>>(y[0], 1.0f, per);
    EXPECT(cudaGetLastError() == cudaErrorInvalidResourceHandle);

    // ---- gather on device 0
    float *all[3];
    for (int k = 0; k < 3; k++) {
        CHECK(cudaMalloc(&all[k], n * sizeof(float)));
        CHECK(cudaMemset(all[k], 0, n * sizeof(float)));
    }
    for (int d = 0; d < count; d++) {
        CHECK(cudaEventSynchronize(done[d]));
        CHECK(cudaMemcpyPeer(all[0] + d * per, 0, y[d], d, per * sizeof(float)));
        CHECK(cudaSetDevice(d));
        CHECK(cudaMemcpyPeerAsync(all[1] + d * per, 0, y[d], d, per * sizeof(float), stream[d]));
        CHECK(cudaStreamSynchronize(stream[d]));
        CHECK(cudaSetDevice(0));
        CHECK(cudaMemcpy(all[2] + d * per, y[d], per * sizeof(float), cudaMemcpyDefault));
    }
    EXPECT_ERROR(cudaMemcpyPeer(all[0], 0, y[1], count, 4), cudaErrorInvalidDevice);
    EXPECT(cudaGetLastError() == cudaErrorInvalidDevice);
    // device 0 works on the gathered vector: scale by 2
    scale_kernel<<<(n + 255) / 256, 256>>>(all[0], 2.0f, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    int bad_values = 0;
    for (int k = 0; k < 3; k++) {
        CHECK(cudaMemcpy(hy, all[k], n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) {
            int d = i / per;
            float want = (0.5f + d) * hx[i] + hx[i] * hx[i];
            if (k == 0)
                want *= 2.0f;
            if (fabsf(hy[i] - want) > 1e-5f * (1.0f + fabsf(want)))
                bad_values++;
        }
    }
    EXPECT(bad_values == 0);

    // ---- per-device synchronization and reset: resetting device 1 frees
    // its memory only
    CHECK(cudaSetDevice(1));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaDeviceReset());
    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, y[1]));
    EXPECT(attr.type == cudaMemoryTypeUnregistered);
    CHECK(cudaPointerGetAttributes(&attr, all[0]));
    EXPECT(attr.device == 0 && attr.type == cudaMemoryTypeDevice);
    float *again = NULL;
    CHECK(cudaMalloc(&again, 64));
    CHECK(cudaPointerGetAttributes(&attr, again));
    EXPECT(attr.device == 1);
    CHECK(cudaFree(again));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemcpy(hy, all[2], 4 * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(fabsf(hy[0] - (0.5f * hx[0] + hx[0] * hx[0])) < 1e-5f);
    for (int k = 0; k < 3; k++)
        CHECK(cudaFree(all[k]));
    free(hx);
    free(hy);
    return finish("multigpu_shards");
}
