// A cooperative launch: every block writes, the whole grid synchronizes
// with grid.sync(), then every block reads what the others wrote.
#include "check.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void rotate(int *data, int *out)
{
    cg::grid_group grid = cg::this_grid();
    unsigned i = grid.thread_rank();
    data[i] = (int)i;
    grid.sync();
    out[i] = data[(i + 1) % grid.size()];
}

int main()
{
    int supported = 0;
    CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, 0));
    const int blocks = 4, threads = 64, n = blocks * threads;
    int *data, *out, h[n];
    CHECK(cudaMalloc(&data, sizeof h));
    CHECK(cudaMalloc(&out, sizeof h));
    void *args[] = {&data, &out};
    CHECK(cudaLaunchCooperativeKernel((const void *)rotate, dim3(blocks), dim3(threads), args, 0, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == (i + 1) % n);
    if (!supported)
        printf("note: the device reports cudaDevAttrCooperativeLaunch = 0\n");
    return finish("cooperative");
}
