// Kernels of the driver-API tests (tests/driver/run.sh compiles this file to
// PTX with `nvcc -ptx` at test time; the C programs load that PTX through
// cuModuleLoad and launch the kernels by name).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ int counter;        // read and written through cuModuleGetGlobal
__constant__ float scale_by;   // set through cuModuleGetGlobal + cuMemcpyHtoD

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" __global__ void scale(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= scale_by;
}

// A block sum in shared memory, then one atomicAdd per block.
extern "C" __global__ void block_sum(const int *in, int *total, int n)
{
    extern __shared__ int part[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(total, part[0]);
        atomicAdd(&counter, 1);
    }
}

// Every block writes, the grid synchronizes, every block reads a neighbour's.
extern "C" __global__ void rotate(int *data, int *out)
{
    cg::grid_group grid = cg::this_grid();
    unsigned i = grid.thread_rank();
    data[i] = (int)i;
    grid.sync();
    out[i] = data[(i + 1) % grid.size()];
}

// Writes far outside any allocation: a kernel fault.
extern "C" __global__ void write_far(int *p)
{
    p[1 << 28] = 1;
}

// Texture objects made with cuTexObjectCreate: a 2-D array read at texel
// centres, and linear memory fetched by index.
extern "C" __global__ void tex_read(cudaTextureObject_t t, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

extern "C" __global__ void tex_fetch(cudaTextureObject_t t, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(t, i);
}
