// Reductions: shared-memory tree with __syncthreads, warp-shuffle trees,
// and a block reduction over dynamically sized (extern) shared memory.

#define TREE_BLOCK 256

// reduce_tree_f32: out[blockIdx.x] = sum of in[blockIdx.x*256 .. +256) (zero past n); blockDim.x must be 256.
extern "C" __global__ void reduce_tree_f32(const float *in, float *out, int n)
{
    __shared__ float partial[TREE_BLOCK];
    int i = blockIdx.x * TREE_BLOCK + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = TREE_BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

// reduce_warp_s32: out[warp] = sum of in[32*warp .. +32) via __shfl_down_sync, one warp per 32 inputs; n % 32 == 0.
extern "C" __global__ void reduce_warp_s32(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in[i];
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31) == 0)
        out[i / 32] = v;
}

// reduce_warp_xor_f32: every lane gets its warp's sum (butterfly __shfl_xor_sync); out[i] = warp sum of in.
extern "C" __global__ void reduce_warp_xor_f32(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int mask = 16; mask > 0; mask >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, mask);
    out[i] = v;
}

// reduce_dyn_f64: out[blockIdx.x] = sum over a grid-stride slice of in; needs blockDim.x*8 bytes of dynamic shared memory, blockDim.x a power of two.
extern "C" __global__ void reduce_dyn_f64(const double *in, double *out, int n)
{
    extern __shared__ double scratch[];
    double sum = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += in[i];
    scratch[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            scratch[threadIdx.x] += scratch[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = scratch[0];
}

// reduce_two_level_u32: *total += block sum of in (warp shuffles, then one warp over per-warp sums, then atomicAdd); blockDim.x <= 1024, multiple of 32.
extern "C" __global__ void reduce_two_level_u32(const unsigned *in, unsigned *total, int n)
{
    __shared__ unsigned warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < n ? in[i] : 0u;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? warp_sums[lane] : 0u;
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0)
            atomicAdd(total, v);
    }
}
