// Tiled matrix multiply: 16x16 shared-memory tiles with bounds checks for
// sizes that are not multiples of the tile, compared with a host GEMM.
#include "check.h"

#define TILE 16

__global__ void gemm(int m, int n, int k, const float *a, const float *b, float *c)
{
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = row < m && ka < k ? a[row * k + ka] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = kb < k && col < n ? b[kb * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; i++)
            acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}

int main()
{
    const int m = 70, n = 45, k = 33;
    float *a = new float[m * k], *b = new float[k * n], *c = new float[m * n];
    for (int i = 0; i < m * k; i++)
        a[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    for (int i = 0; i < k * n; i++)
        b[i] = (float)((i * 11) % 23) / 16.0f - 0.5f;
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, m * k * sizeof(float)));
    CHECK(cudaMalloc(&db, k * n * sizeof(float)));
    CHECK(cudaMalloc(&dc, m * n * sizeof(float)));
    CHECK(cudaMemcpy(da, a, m * k * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, k * n * sizeof(float), cudaMemcpyHostToDevice));
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
    gemm<<<grid, block>>>(m, n, k, da, db, dc);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c, dc, m * n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int p = 0; p < k; p++)
                want += (double)a[i * k + p] * b[p * n + j];
            if (!close_to(c[i * n + j], want, 1e-5, 1e-5) && bad++ < 5)
                printf("c[%d][%d] = %g, expected %g\n", i, j, c[i * n + j], want);
        }
    EXPECT(bad == 0);
    delete[] a;
    delete[] b;
    delete[] c;
    return finish("gemm_tiled");
}
