/* Streams and events through the driver API: two streams, asynchronous
 * copies and launches, an event one stream waits for, host functions run
 * in stream order, event timing and queries. argv[1]: kernels.ptx.
 * Self-checking: prints PASS drv_streams. */
#include "check.h"

#include <string.h>

static int order[8], norder;

static void CUDA_CB note(void *arg)
{
    order[norder++] = (int)(size_t)arg;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: drv_streams KERNELS.ptx\n");
        return 2;
    }
    CK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxPushCurrent(ctx));
    CUmodule mod;
    CK(cuModuleLoad(&mod, argv[1]));
    CUfunction vadd;
    CK(cuModuleGetFunction(&vadd, mod, "vadd"));

    CUstream s1, s2;
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreateWithPriority(&s2, CU_STREAM_DEFAULT, 0));
    unsigned flags = 0;
    CK(cuStreamGetFlags(s1, &flags));
    EXPECT(flags == CU_STREAM_NON_BLOCKING);
    CUevent start, stop, ready;
    CK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING));

    enum { N = 4096 };
    float *ha, *hb, *hc;
    CK(cuMemHostAlloc((void **)&ha, N * sizeof(float), 0));
    CK(cuMemHostAlloc((void **)&hb, N * sizeof(float), 0));
    CK(cuMemHostAlloc((void **)&hc, N * sizeof(float), 0));
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = 1.0f;
        hc[i] = -1.0f;
    }
    CUdeviceptr da, db, dc;
    CK(cuMemAlloc(&da, N * sizeof(float)));
    CK(cuMemAlloc(&db, N * sizeof(float)));
    CK(cuMemAlloc(&dc, N * sizeof(float)));

    CK(cuEventRecord(start, s1));
    CK(cuMemcpyHtoDAsync(da, ha, N * sizeof(float), s1));
    CK(cuMemcpyHtoDAsync(db, hb, N * sizeof(float), s1));
    CK(cuLaunchHostFunc(s1, note, (void *)1));
    CK(cuEventRecord(ready, s1));
    CK(cuStreamWaitEvent(s2, ready, 0));
    int n = N;
    void *params[] = {&da, &db, &dc, &n};
    CK(cuLaunchKernel(vadd, N / 256, 1, 1, 256, 1, 1, 0, s2, params, NULL));
    CK(cuMemcpyDtoHAsync(hc, dc, N * sizeof(float), s2));
    CK(cuLaunchHostFunc(s2, note, (void *)2));
    CK(cuEventRecord(stop, s2));
    CK(cuStreamSynchronize(s2));
    CK(cuEventSynchronize(stop));
    EXPECT(cuStreamQuery(s1) == CUDA_SUCCESS);
    EXPECT(cuEventQuery(stop) == CUDA_SUCCESS);
    float ms = -1.0f;
    CK(cuEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 0.0f);
    EXPECT(norder == 2 && order[0] == 1 && order[1] == 2);
    for (int i = 0; i < N; i++)
        EXPECT(hc[i] == (float)i + 1.0f);

    /* memset on a stream, then a device-to-device copy */
    CK(cuMemsetD32Async(dc, 0x3f800000u, N, s1)); /* 1.0f */
    CK(cuMemcpyDtoDAsync(da, dc, N * sizeof(float), s1));
    CK(cuStreamSynchronize(s1));
    CK(cuMemcpyDtoH(ha, da, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        EXPECT(ha[i] == 1.0f);

    CK(cuEventDestroy(start));
    CK(cuEventDestroy(stop));
    CK(cuEventDestroy(ready));
    CK(cuStreamDestroy(s1));
    CK(cuStreamDestroy(s2));
    CK(cuMemFree(da));
    CK(cuMemFree(db));
    CK(cuMemFree(dc));
    CK(cuMemFreeHost(ha));
    CK(cuMemFreeHost(hb));
    CK(cuMemFreeHost(hc));
    CK(cuModuleUnload(mod));
    CUcontext popped;
    CK(cuCtxPopCurrent(&popped));
    EXPECT(popped == ctx);
    CK(cuDevicePrimaryCtxRelease(dev));
    return finish("drv_streams");
}
