// softmax: y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r) for
// each row r of a rows x cols row-major float matrix.
//
// One warp per row: each lane walks the row with stride 32, and the row's
// maximum and sum are combined across lanes with butterfly shuffles
// (__shfl_xor_sync), so every lane ends with the same value and no shared
// memory or barrier is needed. Subtracting the maximum keeps exp() from
// overflowing. exp is computed as 2^(x*log2 e) with ex2.approx, the fast
// hardware exponential (what __expf does).
// Launch: any block size that is a multiple of 32; rows = total warps needed.

#define FULL_MASK 0xffffffffu
#define LOG2E 1.4426950408889634f

__device__ __forceinline__ float fast_exp(float x)
{
    float r;
    asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x * LOG2E));
    return r;
}

extern "C" __global__ void softmax(const float *x, float *y, unsigned rows, unsigned cols)
{
    unsigned row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned lane = threadIdx.x % 32;
    if (row >= rows)
        return;   // whole warps leave together: the shuffles below stay full-mask
    const float *in = x + (size_t)row * cols;
    float *out = y + (size_t)row * cols;

    float m = -INFINITY;
    for (unsigned c = lane; c < cols; c += 32)
        m = fmaxf(m, in[c]);
    for (int offset = 16; offset > 0; offset >>= 1)
        m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, offset));

    float sum = 0.0f;
    for (unsigned c = lane; c < cols; c += 32)
        sum += fast_exp(in[c] - m);
    for (int offset = 16; offset > 0; offset >>= 1)
        sum += __shfl_xor_sync(FULL_MASK, sum, offset);

    float inv = 1.0f / sum;
    for (unsigned c = lane; c < cols; c += 32)
        out[c] = fast_exp(in[c] - m) * inv;
}
