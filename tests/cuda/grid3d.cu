// Three-dimensional grids and blocks: every thread of a 3x4x5 grid of
// 4x2x3 blocks writes its linearized global index and its built-in
// coordinates; the host checks each one, and gridDim/blockDim.
#include "check.h"

__global__ void count_blocks(unsigned long long *sum)
{
    if (threadIdx.x == 0)
        atomicAdd(sum, 1ull + blockIdx.x + 2ull * blockIdx.y + 1000ull * blockIdx.z);
}

__global__ void coords(int *out, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    int idx = (z * ny + y) * nx + x;
    out[idx * 4 + 0] = idx;
    out[idx * 4 + 1] = blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z;
    out[idx * 4 + 2] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z;
    out[idx * 4 + 3] = gridDim.x + 10 * gridDim.y + 100 * gridDim.z + 1000 * (blockDim.x * blockDim.y * blockDim.z);
}

int main()
{
    dim3 grid(3, 4, 5), block(4, 2, 3);
    int nx = grid.x * block.x, ny = grid.y * block.y, nz = grid.z * block.z;
    int total = nx * ny * nz;
    int *d, *h = new int[total * 4];
    CHECK(cudaMalloc(&d, total * 4 * sizeof(int)));
    coords<<<grid, block>>>(d, nx, ny);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, total * 4 * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                int idx = (z * ny + y) * nx + x;
                int b = x / 4 + 10 * (y / 2) + 100 * (z / 3), t = x % 4 + 10 * (y % 2) + 100 * (z % 3);
                if ((h[idx * 4] != idx || h[idx * 4 + 1] != b || h[idx * 4 + 2] != t ||
                     h[idx * 4 + 3] != 3 + 40 + 500 + 24000) && bad++ < 5)
                    printf("(%d,%d,%d): %d %d %d %d\n", x, y, z, h[idx * 4], h[idx * 4 + 1], h[idx * 4 + 2],
                           h[idx * 4 + 3]);
            }
    EXPECT(bad == 0);
    // a grid with many blocks along y and z
    dim3 big(2, 300, 70);
    unsigned long long *dsum, sum = 0, want = 0;
    CHECK(cudaMalloc(&dsum, sizeof sum));
    CHECK(cudaMemset(dsum, 0, sizeof sum));
    count_blocks<<<big, 32>>>(dsum);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&sum, dsum, sizeof sum, cudaMemcpyDeviceToHost));
    for (unsigned z = 0; z < big.z; z++)
        for (unsigned y = 0; y < big.y; y++)
            for (unsigned x = 0; x < big.x; x++)
                want += 1ull + x + 2ull * y + 1000ull * z;
    EXPECT(sum == want);
    // a grid dimension over the limit is a configuration error
    count_blocks<<<dim3(1, 70000, 1), 1>>>(dsum);
    EXPECT_ERROR(cudaGetLastError(), LAUNCH_CONFIG_ERROR);
    count_blocks<<<1, 1025>>>(dsum);
    EXPECT_ERROR(cudaGetLastError(), LAUNCH_CONFIG_ERROR);
    EXPECT_ERROR(cudaGetLastError(), cudaSuccess);
    delete[] h;
    return finish("grid3d");
}
