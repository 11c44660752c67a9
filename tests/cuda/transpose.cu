// Matrix transpose: naive, and tiled through padded shared memory (32x33
// to avoid bank conflicts) with 32x8 thread blocks, on non-square sizes
// that are not multiples of the tile.
#include "check.h"

#define TILE 32
#define ROWS 8

__global__ void transpose_naive(float *out, const float *in, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[x * h + y] = in[y * w + x];
}

__global__ void transpose_tiled(float *out, const float *in, int w, int h)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < w && y + j < h)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < h && y + j < w)
            out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main()
{
    const int w = 100, h = 70;
    float *in = new float[w * h], *out = new float[w * h];
    for (int i = 0; i < w * h; i++)
        in[i] = (float)i;
    float *din, *dout;
    CHECK(cudaMalloc(&din, w * h * sizeof(float)));
    CHECK(cudaMalloc(&dout, w * h * sizeof(float)));
    CHECK(cudaMemcpy(din, in, w * h * sizeof(float), cudaMemcpyHostToDevice));
    for (int variant = 0; variant < 2; variant++) {
        CHECK(cudaMemset(dout, 0, w * h * sizeof(float)));
        if (variant == 0)
            transpose_naive<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(dout, din, w, h);
        else
            transpose_tiled<<<dim3((w + TILE - 1) / TILE, (h + TILE - 1) / TILE), dim3(TILE, ROWS)>>>(dout, din, w, h);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out, dout, w * h * sizeof(float), cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (out[x * h + y] != in[y * w + x] && bad++ < 3)
                    printf("variant %d: out[%d][%d] = %g\n", variant, x, y, out[x * h + y]);
        EXPECT(bad == 0);
    }
    delete[] in;
    delete[] out;
    return finish("transpose");
}
