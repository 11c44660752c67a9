/* Texture objects through the driver API, the way simpleTextureDrv-style
 * programs make them: a CUDA array (cuArrayCreate) filled by cuMemcpy2D from
 * the host, read back the same way, a texture object over it read by a
 * kernel at texel centres (point filtering); and a texture over linear
 * memory of 8-bit integers read as normalized floats. argv[1]: kernels.ptx.
 * Self-checking: prints PASS drv_texture. */
#include "check.h"

#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: drv_texture KERNELS.ptx\n");
        return 2;
    }
    CK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CK(cuModuleLoad(&mod, argv[1]));
    CUfunction tex_read, tex_fetch;
    CK(cuModuleGetFunction(&tex_read, mod, "tex_read"));
    CK(cuModuleGetFunction(&tex_fetch, mod, "tex_fetch"));

    enum { W = 37, H = 11 };
    float img[H][W], back[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y][x] = (float)(y * 1000 + x) * 0.5f;
    CUDA_ARRAY_DESCRIPTOR ad;
    memset(&ad, 0, sizeof ad);
    ad.Width = W;
    ad.Height = H;
    ad.Format = CU_AD_FORMAT_FLOAT;
    ad.NumChannels = 1;
    CUarray array;
    CK(cuArrayCreate(&array, &ad));
    CUDA_ARRAY_DESCRIPTOR got;
    CK(cuArrayGetDescriptor(&got, array));
    EXPECT(got.Width == W && got.Height == H && got.Format == CU_AD_FORMAT_FLOAT && got.NumChannels == 1);
    CUDA_MEMCPY2D up;
    memset(&up, 0, sizeof up);
    up.srcMemoryType = CU_MEMORYTYPE_HOST;
    up.srcHost = img;
    up.srcPitch = sizeof img[0];
    up.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    up.dstArray = array;
    up.WidthInBytes = sizeof img[0];
    up.Height = H;
    CK(cuMemcpy2D(&up));
    CUDA_MEMCPY2D down;
    memset(&down, 0, sizeof down);
    down.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    down.srcArray = array;
    down.dstMemoryType = CU_MEMORYTYPE_HOST;
    down.dstHost = back;
    down.dstPitch = sizeof back[0];
    down.WidthInBytes = sizeof back[0];
    down.Height = H;
    memset(back, 0, sizeof back);
    CK(cuMemcpy2D(&down));
    EXPECT(!memcmp(img, back, sizeof img));

    CUDA_RESOURCE_DESC rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = array;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_POINT;
    CUtexObject tex;
    CK(cuTexObjectCreate(&tex, &rd, &td, NULL));
    CUdeviceptr dout;
    CK(cuMemAlloc(&dout, sizeof img));
    int w = W, h = H;
    void *params[] = {&tex, &dout, &w, &h};
    CK(cuLaunchKernel(tex_read, (W + 15) / 16, (H + 15) / 16, 1, 16, 16, 1, 0, NULL, params, NULL));
    memset(back, 0, sizeof back);
    CK(cuMemcpyDtoH(back, dout, sizeof back));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            EXPECT(back[y][x] == img[y][x]);
    CK(cuTexObjectDestroy(tex));

    /* linear memory of unsigned bytes, read as normalized floats */
    enum { N = 256 };
    unsigned char bytes[N];
    for (int i = 0; i < N; i++)
        bytes[i] = (unsigned char)i;
    CUdeviceptr dbytes;
    CK(cuMemAlloc(&dbytes, N));
    CK(cuMemcpyHtoD(dbytes, bytes, N));
    memset(&rd, 0, sizeof rd);
    rd.resType = CU_RESOURCE_TYPE_LINEAR;
    rd.res.linear.devPtr = dbytes;
    rd.res.linear.format = CU_AD_FORMAT_UNSIGNED_INT8;
    rd.res.linear.numChannels = 1;
    rd.res.linear.sizeInBytes = N;
    memset(&td, 0, sizeof td);
    CK(cuTexObjectCreate(&tex, &rd, &td, NULL));
    int n = N;
    void *fparams[] = {&tex, &dout, &n};
    CK(cuLaunchKernel(tex_fetch, 1, 1, 1, N, 1, 1, 0, NULL, fparams, NULL));
    float norm[N];
    CK(cuMemcpyDtoH(norm, dout, sizeof norm));
    for (int i = 0; i < N; i++)
        EXPECT(norm[i] == (float)i / 255.0f);
    CK(cuTexObjectDestroy(tex));

    CK(cuMemFree(dbytes));
    CK(cuMemFree(dout));
    CK(cuArrayDestroy(array));
    CK(cuModuleUnload(mod));
    CK(cuDevicePrimaryCtxRelease(dev));
    return finish("drv_texture");
}
