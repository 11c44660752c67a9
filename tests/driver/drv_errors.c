/* Error paths of the driver API: calls before cuInit and without a
 * context, bad handles and names, error names and strings, a cubin without
 * PTX (argv[2], from `nvcc -cubin`), refused with CUDA_ERROR_NO_BINARY_FOR_GPU
 * under kemu (a GPU of that SM would load it: skipped natively with
 * KEMU_DRIVER_NATIVE=1), and a kernel fault that surfaces as
 * CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronization and stays sticky.
 * argv[1]: kernels.ptx. Self-checking: prints PASS drv_errors. */
#include "check.h"

#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: drv_errors KERNELS.ptx CUBIN\n");
        return 2;
    }
    CUdeviceptr p = 0;
    int count = 0;
    EXPECT(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuMemAlloc(&p, 16) == CUDA_ERROR_NOT_INITIALIZED);
    CK(cuInit(0));
    CUcontext none = (CUcontext)1;
    CK(cuCtxGetCurrent(&none));
    EXPECT(none == NULL);
    EXPECT(cuMemAlloc(&p, 16) == CUDA_ERROR_INVALID_CONTEXT);
    CUdevice dev;
    EXPECT(cuDeviceGet(&dev, 99) == CUDA_ERROR_INVALID_DEVICE);
    CK(cuDeviceGet(&dev, 0));

    const char *s = NULL;
    CK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
    EXPECT(s && !strcmp(s, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    CK(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
    EXPECT(s && strstr(s, "illegal memory access"));
    CK(cuGetErrorName(CUDA_ERROR_INVALID_CONTEXT, &s));
    EXPECT(s && !strcmp(s, "CUDA_ERROR_INVALID_CONTEXT"));
    s = "x";
    EXPECT(cuGetErrorName((CUresult)12345, &s) == CUDA_ERROR_INVALID_VALUE);

    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    EXPECT(cuModuleLoad(&mod, "/nonexistent/kernels.ptx") == CUDA_ERROR_FILE_NOT_FOUND);
    EXPECT(cuModuleLoadData(&mod, "this is not PTX") != CUDA_SUCCESS);
    CK(cuModuleLoad(&mod, argv[1]));
    CUfunction f;
    EXPECT(cuModuleGetFunction(&f, mod, "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
    CUdeviceptr g;
    EXPECT(cuModuleGetGlobal(&g, NULL, mod, "no_such_global") == CUDA_ERROR_NOT_FOUND);
    CK(cuModuleGetFunction(&f, mod, "vadd"));
    /* an invalid launch configuration is an error of the launch, not sticky */
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 1024));
    int n = 1;
    void *params[] = {&d, &d, &d, &n};
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL) == CUDA_ERROR_INVALID_VALUE);
    CK(cuCtxSynchronize());
    EXPECT(cuStreamSynchronize((CUstream)&n) != CUDA_SUCCESS); /* not a stream */

    if (!getenv("KEMU_DRIVER_NATIVE")) {
        FILE *cubin = fopen(argv[2], "rb");
        static char image[1 << 20];
        size_t got = cubin ? fread(image, 1, sizeof image, cubin) : 0;
        if (cubin)
            fclose(cubin);
        EXPECT(got > 0);
        CUmodule sass;
        EXPECT(cuModuleLoadData(&sass, image) == CUDA_ERROR_NO_BINARY_FOR_GPU);
    }

    /* a fault: reported at the next synchronization, sticky afterwards */
    CUfunction far;
    CK(cuModuleGetFunction(&far, mod, "write_far"));
    void *fparams[] = {&d};
    CK(cuLaunchKernel(far, 1, 1, 1, 1, 1, 1, 0, NULL, fparams, NULL));
    EXPECT(cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuMemAlloc(&p, 16) == CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS);
    /* the primary context's reset clears it */
    CK(cuDevicePrimaryCtxReset(dev));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc(&p, 16));
    CK(cuMemFree(p));
    return finish("drv_errors");
}
