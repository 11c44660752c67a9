// Kernels for the debugger's tests (tests/debug/): a .func call, a loop
// with barriers over shared memory, a race and a wild store. Built with
// -lineinfo so breakpoints and steps work by CUDA line (regen.sh).

__device__ __noinline__ float scale(float x, float s)
{
    float y = x * s;
    return y + 1.0f;
}

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = scale(x[i], a);
        y[i] = v + y[i];
    }
}

extern "C" __global__ void reduce(const float *in, float *out, int n)
{
    __shared__ float buf[64];
    int t = threadIdx.x;
    buf[t] = t < n ? in[blockIdx.x * 64 + t] : 0.0f;
    __syncthreads();
    for (int s = 32; s > 0; s >>= 1) {
        if (t < s)
            buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = buf[0];
}

extern "C" __global__ void racy(int *out)
{
    __shared__ int cell;
    if (threadIdx.x == 0)
        cell = 1;
    if (threadIdx.x == 32)
        cell = 5; /* no barrier orders this store after warp 0's */
    __syncthreads();
    out[threadIdx.x] = cell;
}

extern "C" __global__ void wild(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i * 1000 + n] = 1.0f; /* lanes past the first write outside y */
}
