// Memory management: pinned, mapped and managed host memory, pitched 2D
// allocations with cudaMemcpy2D and cudaMemset2D, 3D copies, memory info,
// pointer attributes, __managed__ variables, device-side malloc/free and
// the Default copy kind.
#include "check.h"
#include <cstring>

__managed__ int managed_counter = 10;

__global__ void bump(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += i;
    if (i == 0)
        managed_counter += 5;
}

__global__ void add_rows(float *base, size_t pitch, int width, int height)
{
    int x = threadIdx.x, y = blockIdx.x;
    if (x < width && y < height) {
        float *row = (float *)((char *)base + y * pitch);
        row[x] += (float)(y * 1000);
    }
}

__global__ void device_heap(int *out)
{
    int *p = (int *)malloc(16 * sizeof(int));
    if (!p) {
        out[threadIdx.x] = -1;
        return;
    }
    for (int i = 0; i < 16; i++)
        p[i] = threadIdx.x * i;
    int s = 0;
    for (int i = 0; i < 16; i++)
        s += p[i];
    out[threadIdx.x] = s;
    free(p);
}

int main()
{
    size_t free0 = 0, total = 0;
    CHECK(cudaMemGetInfo(&free0, &total));
    EXPECT(total > 0 && free0 <= total);
    const int n = 1000;
    int *dbuf;
    CHECK(cudaMalloc(&dbuf, 64 << 20));
    size_t free1 = 0;
    CHECK(cudaMemGetInfo(&free1, &total));
    EXPECT(free1 + (64 << 20) <= free0);
    CHECK(cudaFree(dbuf));

    // managed memory: written by the host, updated by a kernel, read back directly
    int *m;
    CHECK(cudaMallocManaged(&m, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        m[i] = 1;
    bump<<<(n + 255) / 256, 256>>>(m, n);
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++)
        EXPECT(m[i] == 1 + i);
    EXPECT(managed_counter == 15);
    managed_counter = 100;
    bump<<<1, 1>>>(m, 1);
    CHECK(cudaDeviceSynchronize());
    EXPECT(managed_counter == 105);

    // mapped pinned memory used directly by a kernel
    int *pinned, *mapped;
    CHECK(cudaHostAlloc(&pinned, n * sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(&mapped, pinned, 0));
    memset(pinned, 0, n * sizeof(int));
    bump<<<(n + 255) / 256, 256>>>(mapped, n);
    CHECK(cudaDeviceSynchronize());
    EXPECT(pinned[0] == 0 && pinned[999] == 999);

    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, m));
    EXPECT(attr.type == cudaMemoryTypeManaged);
    CHECK(cudaPointerGetAttributes(&attr, pinned));
    EXPECT(attr.type == cudaMemoryTypeHost && attr.hostPointer == pinned);
    int *plain;
    CHECK(cudaMalloc(&plain, 4));
    CHECK(cudaPointerGetAttributes(&attr, plain));
    EXPECT(attr.type == cudaMemoryTypeDevice && attr.devicePointer == plain && attr.device == 0);
    int stack_value = 0;
    CHECK(cudaPointerGetAttributes(&attr, &stack_value));
    EXPECT(attr.type == cudaMemoryTypeUnregistered);

    // pitched 2D memory
    const int w = 37, h = 11;
    float *pitched;
    size_t pitch = 0;
    CHECK(cudaMallocPitch(&pitched, &pitch, w * sizeof(float), h));
    EXPECT(pitch >= w * sizeof(float) && pitch % 256 == 0);
    float host2d[h][w], back[h][w];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            host2d[y][x] = (float)(y * w + x);
    CHECK(cudaMemset2D(pitched, pitch, 0, w * sizeof(float), h));
    CHECK(cudaMemcpy2D(pitched, pitch, host2d, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
    add_rows<<<h, 64>>>(pitched, pitch, w, h);
    CHECK(cudaMemcpy2D(back, w * sizeof(float), pitched, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            EXPECT(back[y][x] == host2d[y][x] + (float)(y * 1000));
    EXPECT_ERROR(cudaMemcpy2D(back, 4, pitched, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost),
                 cudaErrorInvalidPitchValue);

    // 3D: a pitched volume, copied in and out with cudaMemcpy3D
    cudaExtent ext = make_cudaExtent(8 * sizeof(int), 4, 3);
    cudaPitchedPtr vol;
    CHECK(cudaMalloc3D(&vol, ext));
    int cube[3][4][8], cube_back[3][4][8];
    for (int i = 0; i < 96; i++)
        (&cube[0][0][0])[i] = i * 7;
    cudaMemcpy3DParms p3 = {};
    p3.srcPtr = make_cudaPitchedPtr(cube, 8 * sizeof(int), 8, 4);
    p3.dstPtr = vol;
    p3.extent = ext;
    p3.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p3));
    cudaMemcpy3DParms q3 = {};
    q3.srcPtr = vol;
    q3.dstPtr = make_cudaPitchedPtr(cube_back, 8 * sizeof(int), 8, 4);
    q3.extent = ext;
    q3.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&q3));
    EXPECT(memcmp(cube, cube_back, sizeof cube) == 0);

    // cudaMemcpyDefault infers directions
    int src[4] = {1, 2, 3, 4}, dst[4] = {0};
    CHECK(cudaMemcpy(plain, src, sizeof(int), cudaMemcpyDefault));
    CHECK(cudaMemcpy(dst, plain, sizeof(int), cudaMemcpyDefault));
    EXPECT(dst[0] == 1);

    // device-side malloc
    int *heap_out, heap_host[64];
    CHECK(cudaMalloc(&heap_out, sizeof heap_host));
    device_heap<<<1, 64>>>(heap_out);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(heap_host, heap_out, sizeof heap_host, cudaMemcpyDeviceToHost));
    for (int t = 0; t < 64; t++)
        EXPECT(heap_host[t] == t * 120);

    CHECK(cudaFree(m));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(plain));
    CHECK(cudaFree(pitched));
    CHECK(cudaFree(vol.ptr));
    CHECK(cudaFree(heap_out));
    return finish("memory_api");
}
