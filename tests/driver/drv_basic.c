/* The driver API the way its samples use it: cuInit, the device and its
 * attributes, the primary context, a module from a PTX file (argv[1], made
 * from kernels.cu), launches with kernelParams and with the `extra` buffer,
 * copies, 2-D copies, memsets, module globals, function attributes,
 * occupancy, pointer attributes, cuGetProcAddress, a cooperative launch and
 * cuLaunchKernelEx. Self-checking: prints PASS drv_basic. */
#include "check.h"

#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: drv_basic KERNELS.ptx\n");
        return 2;
    }
    CK(cuInit(0));
    int version = 0, count = 0;
    CK(cuDriverGetVersion(&version));
    EXPECT(version >= 12000);
    CK(cuDeviceGetCount(&count));
    EXPECT(count >= 1);
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    char name[256];
    CK(cuDeviceGetName(name, sizeof name, dev));
    EXPECT(strlen(name) > 0);
    int major = 0, minor = 0, amajor = 0, aminor = 0, warp = 0, mp = 0, coop = 0;
    CK(cuDeviceComputeCapability(&major, &minor, dev));
    CK(cuDeviceGetAttribute(&amajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CK(cuDeviceGetAttribute(&aminor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CK(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    CK(cuDeviceGetAttribute(&mp, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CK(cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
    EXPECT(major == amajor && minor == aminor && major >= 7);
    EXPECT(warp == 32 && mp > 0 && coop == 1);
    size_t total = 0;
    CK(cuDeviceTotalMem(&total, dev));
    EXPECT(total > ((size_t)1 << 30));
    CUuuid uuid;
    CK(cuDeviceGetUuid(&uuid, dev));

    CUcontext ctx, cur = NULL;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuCtxGetCurrent(&cur));
    EXPECT(cur == ctx);
    CUdevice cdev = -1;
    CK(cuCtxGetDevice(&cdev));
    EXPECT(cdev == dev);
    unsigned pflags = 0;
    int active = 0;
    CK(cuDevicePrimaryCtxGetState(dev, &pflags, &active));
    EXPECT(active == 1);

    CUmodule mod;
    CK(cuModuleLoad(&mod, argv[1]));
    CUfunction vadd, scale, block_sum, rotate;
    CK(cuModuleGetFunction(&vadd, mod, "vadd"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuModuleGetFunction(&block_sum, mod, "block_sum"));
    CK(cuModuleGetFunction(&rotate, mod, "rotate"));

    /* vector add, kernelParams */
    enum { N = 1000 };
    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(2 * i + 1);
    }
    CUdeviceptr da, db, dc;
    CK(cuMemAlloc(&da, sizeof a));
    CK(cuMemAlloc(&db, sizeof b));
    CK(cuMemAlloc(&dc, sizeof c));
    CK(cuMemcpyHtoD(da, a, sizeof a));
    CK(cuMemcpyHtoD(db, b, sizeof b));
    int n = N;
    void *params[] = {&da, &db, &dc, &n};
    CK(cuLaunchKernel(vadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(c, dc, sizeof c));
    for (int i = 0; i < N; i++)
        EXPECT(c[i] == (float)(3 * i + 1));

    /* the same launch through the `extra` parameter buffer */
    struct {
        CUdeviceptr a, b, c;
        int n;
    } buffer = {db, da, dc, N};
    size_t buffer_size = sizeof buffer;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &buffer_size,
                     CU_LAUNCH_PARAM_END};
    CK(cuMemsetD32(dc, 0, N));
    CK(cuLaunchKernel(vadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, NULL, extra));
    CK(cuMemcpyDtoH(c, dc, sizeof c));
    for (int i = 0; i < N; i++)
        EXPECT(c[i] == (float)(3 * i + 1));

    /* a __constant__ through cuModuleGetGlobal */
    CUdeviceptr dscale;
    size_t scale_size = 0;
    CK(cuModuleGetGlobal(&dscale, &scale_size, mod, "scale_by"));
    EXPECT(scale_size == sizeof(float));
    float three = 3.0f;
    CK(cuMemcpyHtoD(dscale, &three, sizeof three));
    void *sparams[] = {&dc, &n};
    CK(cuLaunchKernel(scale, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, sparams, NULL));
    CK(cuMemcpyDtoH(c, dc, sizeof c));
    for (int i = 0; i < N; i++)
        EXPECT(c[i] == (float)(3 * (3 * i + 1)));

    /* shared memory (dynamic) and atomics; the __device__ counter */
    int in[N], sum = 0, expect = 0;
    for (int i = 0; i < N; i++) {
        in[i] = i % 17 - 5;
        expect += in[i];
    }
    CUdeviceptr din, dtotal, dcounter;
    CK(cuMemAlloc(&din, sizeof in));
    CK(cuMemAlloc(&dtotal, sizeof(int)));
    CK(cuMemcpyHtoD(din, in, sizeof in));
    CK(cuMemsetD8(dtotal, 0, sizeof(int)));
    size_t counter_size = 0;
    CK(cuModuleGetGlobal(&dcounter, &counter_size, mod, "counter"));
    EXPECT(counter_size == sizeof(int));
    CK(cuMemsetD32(dcounter, 0, 1));
    void *bparams[] = {&din, &dtotal, &n};
    CK(cuLaunchKernel(block_sum, (N + 63) / 64, 1, 1, 64, 1, 1, 64 * sizeof(int), NULL, bparams, NULL));
    CK(cuMemcpyDtoH(&sum, dtotal, sizeof sum));
    EXPECT(sum == expect);
    int blocks_counted = 0;
    CK(cuMemcpyDtoH(&blocks_counted, dcounter, sizeof blocks_counted));
    EXPECT(blocks_counted == (N + 63) / 64);

    /* memsets of 16 and 32 bits, a pitched allocation and 2-D copies */
    unsigned short h16[10];
    CK(cuMemsetD16(dc, 0xbeef, 10));
    CK(cuMemcpyDtoH(h16, dc, sizeof h16));
    for (int i = 0; i < 10; i++)
        EXPECT(h16[i] == 0xbeef);
    enum { W = 13, H = 7 };
    int grid2d[H][W], back[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            grid2d[y][x] = y * 100 + x;
    CUdeviceptr pitched;
    size_t pitch = 0;
    CK(cuMemAllocPitch(&pitched, &pitch, W * sizeof(int), H, 4));
    EXPECT(pitch >= W * sizeof(int));
    CUDA_MEMCPY2D up;
    memset(&up, 0, sizeof up);
    up.srcMemoryType = CU_MEMORYTYPE_HOST;
    up.srcHost = grid2d;
    up.srcPitch = W * sizeof(int);
    up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    up.dstDevice = pitched;
    up.dstPitch = pitch;
    up.WidthInBytes = W * sizeof(int);
    up.Height = H;
    CK(cuMemcpy2D(&up));
    CUDA_MEMCPY2D down;
    memset(&down, 0, sizeof down);
    down.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    down.srcDevice = pitched;
    down.srcPitch = pitch;
    down.srcXInBytes = 2 * sizeof(int); /* a sub-rectangle from (2, 1) */
    down.srcY = 1;
    down.dstMemoryType = CU_MEMORYTYPE_HOST;
    down.dstHost = back;
    down.dstPitch = W * sizeof(int);
    down.WidthInBytes = (W - 2) * sizeof(int);
    down.Height = H - 1;
    memset(back, 0, sizeof back);
    CK(cuMemcpy2D(&down));
    for (int y = 0; y < H - 1; y++)
        for (int x = 0; x < W - 2; x++)
            EXPECT(back[y][x] == (y + 1) * 100 + x + 2);

    /* 3-D copy: two slices of the pitched buffer (as 2 x 3 rows) back */
    CUDA_MEMCPY3D c3;
    memset(&c3, 0, sizeof c3);
    c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c3.srcDevice = pitched;
    c3.srcPitch = pitch;
    c3.srcHeight = 3;
    c3.dstMemoryType = CU_MEMORYTYPE_HOST;
    c3.dstHost = back;
    c3.dstPitch = W * sizeof(int);
    c3.dstHeight = 3;
    c3.WidthInBytes = W * sizeof(int);
    c3.Height = 3;
    c3.Depth = 2;
    memset(back, 0, sizeof back);
    CK(cuMemcpy3D(&c3));
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < W; x++)
            EXPECT(back[y][x] == y * 100 + x);

    /* host memory */
    int *pinned = NULL;
    CK(cuMemAllocHost((void **)&pinned, 64 * sizeof(int)));
    for (int i = 0; i < 64; i++)
        pinned[i] = i * i;
    CK(cuMemcpyHtoD(din, pinned, 64 * sizeof(int)));
    CK(cuMemcpyDtoH(in, din, 64 * sizeof(int)));
    for (int i = 0; i < 64; i++)
        EXPECT(in[i] == i * i);
    CUdeviceptr mapped = 0;
    CK(cuMemHostGetDevicePointer(&mapped, pinned, 0));
    EXPECT(mapped != 0);
    unsigned memtype = 0;
    CK(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, da));
    EXPECT(memtype == CU_MEMORYTYPE_DEVICE);
    CK(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(size_t)pinned));
    EXPECT(memtype == CU_MEMORYTYPE_HOST);
    CUdeviceptr base = 0;
    size_t range = 0;
    CK(cuMemGetAddressRange(&base, &range, da + 40));
    EXPECT(base == da && range == sizeof a);
    CUdeviceptr managed;
    CK(cuMemAllocManaged(&managed, sizeof(float) * 4, CU_MEM_ATTACH_GLOBAL));
    int is_managed = 0;
    CK(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
    EXPECT(is_managed == 1);
    ((float *)(size_t)managed)[0] = 1.5f;
    int one = 1;
    void *mparams[] = {&managed, &one};
    CK(cuLaunchKernel(scale, 1, 1, 1, 32, 1, 1, 0, NULL, mparams, NULL));
    CK(cuCtxSynchronize());
    EXPECT(((float *)(size_t)managed)[0] == 4.5f);
    size_t free_bytes = 0, total_bytes = 0;
    CK(cuMemGetInfo(&free_bytes, &total_bytes));
    EXPECT(total_bytes == total && free_bytes <= total_bytes);

    /* function attributes and occupancy */
    int max_threads = 0, shared = -1, blocks = 0, min_grid = 0, best = 0;
    CK(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, vadd));
    CK(cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, vadd));
    EXPECT(max_threads >= 1024 && shared == 0);
    CK(cuFuncSetAttribute(block_sum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
    int dyn = 0;
    CK(cuFuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, block_sum));
    EXPECT(dyn == 64 * 1024);
    CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, vadd, 128, 0));
    EXPECT(blocks > 0);
    CK(cuOccupancyMaxPotentialBlockSize(&min_grid, &best, vadd, NULL, 0, 0));
    EXPECT(best > 0 && best <= 1024 && best % 32 == 0 && min_grid >= mp);
    const char *fname = NULL;
    CK(cuFuncGetName(&fname, block_sum));
    EXPECT(fname && !strcmp(fname, "block_sum"));

    /* cuGetProcAddress hands out the versioned entry point a name stands for */
    CUresult (*alloc)(CUdeviceptr *, size_t) = NULL;
    CUdriverProcAddressQueryResult found;
    CK(cuGetProcAddress("cuMemAlloc", (void **)&alloc, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    EXPECT(found == CU_GET_PROC_ADDRESS_SUCCESS && alloc != NULL);
    CUdeviceptr viaproc = 0;
    if (alloc) {
        CK(alloc(&viaproc, 4096)); /* _v2: a 64-bit pointer */
        CK(cuMemGetAddressRange(&base, &range, viaproc));
        EXPECT(base == viaproc && range == 4096);
        CK(cuMemFree(viaproc));
    }
    void *nothing = NULL;
    EXPECT(cuGetProcAddress("cuNoSuchFunction", &nothing, 13000, 0, &found) == CUDA_ERROR_NOT_FOUND);
    EXPECT(found == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && nothing == NULL);

    /* a cooperative launch: grid.sync() across all blocks */
    enum { CB = 4, CT = 64 };
    CUdeviceptr ddata, dout;
    CK(cuMemAlloc(&ddata, CB * CT * sizeof(int)));
    CK(cuMemAlloc(&dout, CB * CT * sizeof(int)));
    void *cparams[] = {&ddata, &dout};
    CK(cuLaunchCooperativeKernel(rotate, CB, 1, 1, CT, 1, 1, 0, NULL, cparams));
    int rot[CB * CT];
    CK(cuMemcpyDtoH(rot, dout, sizeof rot));
    for (int i = 0; i < CB * CT; i++)
        EXPECT(rot[i] == (i + 1) % (CB * CT));
    /* and through cuLaunchKernelEx with the cooperative attribute */
    CK(cuMemsetD32(dout, 0, CB * CT));
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = CB;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = CT;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CK(cuLaunchKernelEx(&cfg, rotate, cparams, NULL));
    CK(cuMemcpyDtoH(rot, dout, sizeof rot));
    for (int i = 0; i < CB * CT; i++)
        EXPECT(rot[i] == (i + 1) % (CB * CT));

    CK(cuMemFree(da));
    CK(cuMemFree(db));
    CK(cuMemFree(dc));
    CK(cuMemFree(din));
    CK(cuMemFree(dtotal));
    CK(cuMemFree(pitched));
    CK(cuMemFree(managed));
    CK(cuMemFree(ddata));
    CK(cuMemFree(dout));
    CK(cuMemFreeHost(pinned));
    CK(cuModuleUnload(mod));
    EXPECT(cuModuleGetFunction(&vadd, mod, "vadd") == CUDA_ERROR_INVALID_HANDLE);
    CK(cuDevicePrimaryCtxRelease(dev));
    return finish("drv_basic");
}
