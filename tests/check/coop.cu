// Cooperative launches (kemu run --cooperative) under the checkers. Each
// thread writes its element, then reads its neighbour's, which another
// block wrote for the last thread of each block. Regenerate with regen.sh.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// grid.sync() orders the writes before the reads: clean.
extern "C" __global__ void grid_rotate(int *data, int *out)
{
    cg::grid_group grid = cg::this_grid();
    unsigned i = grid.thread_rank();
    data[i] = (int)i;
    grid.sync();
    out[i] = data[(i + 1) % grid.size()];
}

// Only __syncthreads(): the reads across block boundaries race with the
// other blocks' writes.
extern "C" __global__ void grid_rotate_nosync(int *data, int *out)
{
    cg::grid_group grid = cg::this_grid();
    unsigned i = grid.thread_rank();
    data[i] = (int)i;
    __syncthreads();
    out[i] = data[(i + 1) % grid.size()];
}
