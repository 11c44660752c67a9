// Texture objects over linear memory, pitched 2D memory and a CUDA array
// (cudaMallocArray + cudaMemcpy2DToArray): point-sampled fetches with
// tex1Dfetch and tex2D, clamped addressing, and the descriptor queries.
#include "check.h"
#include <cstring>

__global__ void fetch_linear(cudaTextureObject_t t, float *out, int n)
{
    int i = threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(t, i) * 2.0f;
}

__global__ void fetch_2d(cudaTextureObject_t t, float *out, int w, int h)
{
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h)
        out[y * w + x] = tex2D<float>(t, (float)x + 0.5f, (float)y + 0.5f);
    if (x == 0 && y == 0)
        out[w * h] = tex2D<float>(t, -5.0f, 1000.0f); // clamped to (0, h-1)
}

int main()
{
    const int n = 64, w = 16, h = 8;
    float lin[n], img[h][w], out[w * h + 1];
    for (int i = 0; i < n; i++)
        lin[i] = (float)i;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            img[y][x] = (float)(y * 100 + x);
    float *dlin, *dout;
    CHECK(cudaMalloc(&dlin, sizeof lin));
    CHECK(cudaMalloc(&dout, sizeof out));
    CHECK(cudaMemcpy(dlin, lin, sizeof lin, cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = dlin;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = sizeof lin;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t t1 = 0;
    CHECK(cudaCreateTextureObject(&t1, &res, &td, nullptr));
    fetch_linear<<<1, n>>>(t1, dout, n);
    CHECK(cudaMemcpy(out, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(out[i] == 2.0f * i);
    cudaResourceDesc back;
    CHECK(cudaGetTextureObjectResourceDesc(&back, t1));
    EXPECT(back.resType == cudaResourceTypeLinear && back.res.linear.devPtr == dlin);

    // pitched 2D and an array, both clamped
    float *pitched;
    size_t pitch;
    CHECK(cudaMallocPitch(&pitched, &pitch, w * sizeof(float), h));
    CHECK(cudaMemcpy2D(pitched, pitch, img, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
    cudaChannelFormatDesc fd = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &fd, w, h));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
    for (int variant = 0; variant < 2; variant++) {
        memset(&res, 0, sizeof res);
        if (variant == 0) {
            res.resType = cudaResourceTypePitch2D;
            res.res.pitch2D.devPtr = pitched;
            res.res.pitch2D.desc = fd;
            res.res.pitch2D.width = w;
            res.res.pitch2D.height = h;
            res.res.pitch2D.pitchInBytes = pitch;
        } else {
            res.resType = cudaResourceTypeArray;
            res.res.array.array = arr;
        }
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        cudaTextureObject_t t2 = 0;
        CHECK(cudaCreateTextureObject(&t2, &res, &td, nullptr));
        fetch_2d<<<h, 32>>>(t2, dout, w, h);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                bad += out[y * w + x] != img[y][x];
        EXPECT(bad == 0);
        EXPECT(out[w * h] == img[h - 1][0]);
        CHECK(cudaDestroyTextureObject(t2));
    }
    cudaChannelFormatDesc got;
    cudaExtent ext;
    unsigned flags;
    CHECK(cudaArrayGetInfo(&got, &ext, &flags, arr));
    EXPECT(got.x == 32 && got.f == cudaChannelFormatKindFloat && ext.width == w && ext.height == h);
    float row[w];
    CHECK(cudaMemcpy2DFromArray(row, w * sizeof(float), arr, 0, 3, w * sizeof(float), 1, cudaMemcpyDeviceToHost));
    EXPECT(row[5] == img[3][5]);
    CHECK(cudaDestroyTextureObject(t1));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(pitched));
    return finish("texture");
}
