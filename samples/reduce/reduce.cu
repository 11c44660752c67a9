// reduce: sums n floats; block b writes its partial sum to partial[b].
// Launched with one block, partial[0] is the total of the whole array.
//
// Three stages, each the usual way to do it on a GPU:
//   1. every thread accumulates a grid-stride slice of the input,
//   2. the block halves its 256 values in shared memory, down to one warp,
//   3. that warp finishes with register shuffles (no shared memory, no barrier).
// Requires blockDim.x == 256.

#define BLOCK 256

extern "C" __global__ void reduce_sum(const float *in, float *partial, unsigned n)
{
    __shared__ float sums[BLOCK];
    unsigned t = threadIdx.x;

    // 1. grid-stride accumulation: any grid size covers any n
    float acc = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + t; i < n; i += gridDim.x * BLOCK)
        acc += in[i];
    sums[t] = acc;
    __syncthreads();

    // 2. tree in shared memory: 256 -> 32 values
    for (unsigned stride = BLOCK / 2; stride >= 32; stride >>= 1) {
        if (t < stride)
            sums[t] += sums[t + stride];
        __syncthreads();
    }

    // 3. last warp: 32 -> 1 with shuffles
    if (t < 32) {
        float v = sums[t];
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (t == 0)
            partial[blockIdx.x] = v;
    }
}
