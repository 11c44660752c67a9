/* Several devices through the driver API (run with KEMU_DEVICES=2, or on a
 * machine with two GPUs): cuDeviceGetCount and cuDeviceGet, the primary
 * context of device 0 and a context made with cuCtxCreate on device 1, a
 * module loaded in each, a vector add per device on its own half, peer
 * access (cuCtxEnablePeerAccess with its errors) and a kernel of device 0
 * scaling device 1's memory, cuMemcpyPeer, and the device of a pointer.
 * Checked against the CPU. argv[1]: kernels.ptx. Prints PASS drv_multigpu. */
#include "check.h"

#include <string.h>

enum { N = 777 };

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: drv_multigpu KERNELS.ptx\n");
        return 2;
    }
    CK(cuInit(0));
    int count = 0;
    CK(cuDeviceGetCount(&count));
    if (count < 2) {
        printf("FAIL drv_multigpu: %d device(s), the test needs 2\n", count);
        return 1;
    }
    CUdevice dev[2], bad;
    CK(cuDeviceGet(&dev[0], 0));
    CK(cuDeviceGet(&dev[1], 1));
    EXPECT(cuDeviceGet(&bad, count) == CUDA_ERROR_INVALID_DEVICE);
    int can = -1;
    CK(cuDeviceCanAccessPeer(&can, dev[0], dev[1]));
    EXPECT(can == 1);
    CK(cuDeviceCanAccessPeer(&can, dev[0], dev[0]));
    EXPECT(can == 0);
    char bus[2][32];
    CK(cuDeviceGetPCIBusId(bus[0], sizeof bus[0], dev[0]));
    CK(cuDeviceGetPCIBusId(bus[1], sizeof bus[1], dev[1]));
    EXPECT(strcmp(bus[0], bus[1]) != 0);
    CUdevice back = -1;
    CK(cuDeviceGetByPCIBusId(&back, bus[1]));
    EXPECT(back == dev[1]);

    CUcontext ctx[2];
    CK(cuDevicePrimaryCtxRetain(&ctx[0], dev[0]));
    CK(cuCtxCreate(&ctx[1], NULL, 0, dev[1])); /* current now */
    CUdevice cd = -1;
    CK(cuCtxGetDevice(&cd));
    EXPECT(cd == dev[1]);
    CK(cuCtxSetCurrent(ctx[0]));
    CK(cuCtxGetDevice(&cd));
    EXPECT(cd == dev[0]);

    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)(i % 50);
        b[i] = (float)(3 * i % 17);
    }
    CUmodule mod[2];
    CUfunction vadd[2], scale[2];
    CUdeviceptr da[2], db[2], dc[2];
    int half = N / 2;
    for (int d = 0; d < 2; d++) {
        CK(cuCtxSetCurrent(ctx[d]));
        CK(cuModuleLoad(&mod[d], argv[1]));
        CK(cuModuleGetFunction(&vadd[d], mod[d], "vadd"));
        CK(cuModuleGetFunction(&scale[d], mod[d], "scale"));
        int lo = d * half, n = d ? N - half : half;
        CK(cuMemAlloc(&da[d], n * sizeof(float)));
        CK(cuMemAlloc(&db[d], n * sizeof(float)));
        CK(cuMemAlloc(&dc[d], N * sizeof(float)));
        CK(cuMemcpyHtoD(da[d], a + lo, n * sizeof(float)));
        CK(cuMemcpyHtoD(db[d], b + lo, n * sizeof(float)));
        void *params[] = {&da[d], &db[d], &dc[d], &n};
        CK(cuLaunchKernel(vadd[d], (n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
        CK(cuCtxSynchronize());
        int ordinal = -1;
        CK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dc[d]));
        EXPECT(ordinal == d);
    }
    /* device 0 gathers device 1's half */
    CK(cuMemcpyPeer(dc[0] + half * sizeof(float), ctx[0], dc[1], ctx[1], (N - half) * sizeof(float)));

    /* peer access: device 0's kernel scales device 1's sums by its own
     * __constant__ scale_by (2.5) */
    CK(cuCtxSetCurrent(ctx[0]));
    EXPECT(cuCtxDisablePeerAccess(ctx[1]) == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CK(cuCtxEnablePeerAccess(ctx[1], 0));
    EXPECT(cuCtxEnablePeerAccess(ctx[1], 0) == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    CUdeviceptr sym;
    size_t symsize = 0;
    CK(cuModuleGetGlobal(&sym, &symsize, mod[0], "scale_by"));
    float by = 2.5f;
    CK(cuMemcpyHtoD(sym, &by, sizeof by));
    int n1 = N - half;
    void *sparams[] = {&dc[1], &n1};
    CK(cuLaunchKernel(scale[0], (n1 + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, sparams, NULL));
    CK(cuCtxSynchronize());
    CK(cuCtxDisablePeerAccess(ctx[1]));

    CK(cuMemcpyDtoH(c, dc[0], sizeof c));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += c[i] != a[i] + b[i];
    EXPECT(wrong == 0);
    CK(cuCtxSetCurrent(ctx[1]));
    CK(cuMemcpyDtoH(c, dc[1], n1 * sizeof(float)));
    wrong = 0;
    for (int i = 0; i < n1; i++)
        wrong += c[i] != (a[half + i] + b[half + i]) * 2.5f;
    EXPECT(wrong == 0);

    for (int d = 0; d < 2; d++) {
        CK(cuCtxSetCurrent(ctx[d]));
        CK(cuMemFree(da[d]));
        CK(cuMemFree(db[d]));
        CK(cuMemFree(dc[d]));
        CK(cuModuleUnload(mod[d]));
    }
    CK(cuCtxDestroy(ctx[1]));
    CK(cuDevicePrimaryCtxRelease(dev[0]));
    return finish("drv_multigpu");
}
