// Kernels written the most common way, one element per thread (issue 27):
// what kemu costs against the sequential C a CPU programmer would write for
// the same result (bench/native/native.c).
//
// block_sum:   out[b] = sum of the 256 elements of block b, by a
//              shared-memory barrier tree (blockDim.x == 256).
// warp_max:    out[w] = max of the 32 elements of warp w, by five
//              __shfl_xor_sync steps (one element per lane).
// row_softmax: y = softmax of each row of x (rows x cols), one block of
//              256 threads per row: max and sum by shared-memory trees with
//              __syncthreads (cols a multiple of 256).
// scale_add:   y[i] = a * x[i] + b, a short elementwise kernel (the suite
//              launches it many times to measure the cost of a launch).

#define BLOCK 256

extern "C" __global__ void block_sum(const float *x, float *out, unsigned n)
{
    __shared__ float s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * BLOCK + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

extern "C" __global__ void warp_max(const float *x, float *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : -3.0e38f;
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if ((threadIdx.x & 31) == 0 && i < n)
        out[i / 32] = v;
}

extern "C" __global__ void row_softmax(const float *x, float *y, unsigned cols)
{
    __shared__ float s[BLOCK];
    const float *row = x + (size_t)blockIdx.x * cols;
    float *out = y + (size_t)blockIdx.x * cols;
    unsigned t = threadIdx.x;
    float m = -3.0e38f;
    for (unsigned c = t; c < cols; c += BLOCK)
        m = fmaxf(m, row[c]);
    s[t] = m;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] = fmaxf(s[t], s[t + stride]);
        __syncthreads();
    }
    m = s[0];
    __syncthreads();
    float sum = 0.0f;
    for (unsigned c = t; c < cols; c += BLOCK)
        sum += __expf(row[c] - m);
    s[t] = sum;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    float inv = 1.0f / s[0];
    for (unsigned c = t; c < cols; c += BLOCK)
        out[c] = __expf(row[c] - m) * inv;
}

extern "C" __global__ void scale_add(const float *x, float *y, float a, float b, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b;
}
