// Elementwise kernels: bounds-checked tails, typed vector adds and the
// built-in index registers (%tid, %ntid, %ctaid, %nctaid) in 1D, 2D and 3D.

// saxpy: y[i] = a*x[i] + y[i] for i < n; n need not be a multiple of blockDim (tail guard).
extern "C" __global__ void saxpy(unsigned n, float a, const float *x, float *y)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// vadd_s32: c[i] = a[i] + b[i] (wrapping int add) for i < n.
extern "C" __global__ void vadd_s32(const int *a, const int *b, int *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

// vadd_f32: c[i] = a[i] + b[i] (round-to-nearest float add) for i < n.
extern "C" __global__ void vadd_f32(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

// vadd_f64: c[i] = a[i] + b[i] (double add) for i < n.
extern "C" __global__ void vadd_f64(const double *a, const double *b, double *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

// grid_stride_scale: x[i] *= s over a grid-stride loop, so any grid covers any n.
extern "C" __global__ void grid_stride_scale(float *x, float s, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] *= s;
}

// index_2d: out[y*W + x] = y*W + x for a 2D grid of 2D blocks, W = gridDim.x*blockDim.x.
extern "C" __global__ void index_2d(unsigned *out)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned w = gridDim.x * blockDim.x;
    out[y * w + x] = y * w + x;
}

// index_3d: for each thread writes 6 words (tid.xyz, ctaid.xyz) at 6*linear_thread_id in out.
extern "C" __global__ void index_3d(unsigned *out)
{
    unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned local = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned id = block * (blockDim.x * blockDim.y * blockDim.z) + local;
    unsigned *o = out + 6 * id;
    o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
    o[3] = blockIdx.x;  o[4] = blockIdx.y;  o[5] = blockIdx.z;
}

// dims_3d: thread 0 of block 0 writes ntid.xyz then nctaid.xyz into out[0..5].
extern "C" __global__ void dims_3d(unsigned *out)
{
    if (threadIdx.x | threadIdx.y | threadIdx.z | blockIdx.x | blockIdx.y | blockIdx.z)
        return;
    out[0] = blockDim.x; out[1] = blockDim.y; out[2] = blockDim.z;
    out[3] = gridDim.x;  out[4] = gridDim.y;  out[5] = gridDim.z;
}
