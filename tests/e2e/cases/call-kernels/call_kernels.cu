// Kernels of the `kemu call` end-to-end cases (tests/e2e/cases/call-*).
// This directory has no `cmd` file, so run_cases.sh does not run it as a
// case. Parameters follow the kemu call ABI: inputs, outputs, scratch; an
// "smem" scratch operand arrives as the address of its buffer in the
// block's shared memory (.shared state space) in a 64-bit parameter.

template <typename T>
__device__ T *shared_scratch(unsigned long long shared_address)
{
    return static_cast<T *>(__cvta_shared_to_generic(shared_address));
}

__device__ unsigned global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// y = x + 1; with y aliased to x it updates x's buffer in place.
extern "C" __global__ void add_one(const float *x, float *y)
{
    unsigned i = global_index();
    y[i] = x[i] + 1.0f;
}

// Static shared memory, two smem scratch buffers of different dtypes and a
// gmem scratch buffer, each written and read back:
//   y[b*n + t] = 2*x[b*n + (n-1-t)] + t + t%3,   g = global scratch
extern "C" __global__ void scratch_mix(const float *x, float *y, unsigned long long a_address,
                                       unsigned long long b_address, int *g)
{
    __shared__ float own[3];
    double *a = shared_scratch<double>(a_address);
    int *b = shared_scratch<int>(b_address);
    unsigned t = threadIdx.x, n = blockDim.x, i = global_index();
    if (t < 3)
        own[t] = (float)t;
    a[t] = 2.0 * x[i];
    b[t] = (int)t;
    g[i] = (int)i;
    __syncthreads();
    y[i] = (float)a[n - 1 - t] + (float)b[t] + own[t % 3] + (float)(g[i] - (int)i);
}

// Copies the initial contents of its scratch buffers (never written) out.
extern "C" __global__ void scratch_fill(float *f, unsigned *u, unsigned long long sf, unsigned long long su)
{
    unsigned t = threadIdx.x, i = global_index();
    f[i] = shared_scratch<float>(sf)[t];
    u[i] = shared_scratch<unsigned>(su)[t];
}

// Where each thread of a mesh launch runs:
//   out[i] = clusterid.x * 10000 + cluster_ctarank * 1000 + warpgroup * 100 + threadIdx.x % 128 / 32
extern "C" __global__ void mesh_ids(int *out)
{
    unsigned cluster, rank;
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    unsigned t = threadIdx.x;
    out[global_index()] = (int)(cluster * 10000 + rank * 1000 + t / 128 * 100 + t % 128 / 32);
}

// Writes only the even elements of y and nothing of z.
extern "C" __global__ void write_even(float *y, int *z)
{
    unsigned i = global_index();
    (void)z;
    if (i % 2 == 0)
        y[i] = (float)i;
}

// Every thread stores its index to the same shared word and reads it back
// without synchronization: a shared-memory race.
extern "C" __global__ void racy(float *y, unsigned long long s_address)
{
    unsigned *s = shared_scratch<unsigned>(s_address);
    s[0] = threadIdx.x;
    y[global_index()] = (float)s[0];
}

// Reads far past the end of x.
extern "C" __global__ void oob_read(const float *x, float *y)
{
    unsigned i = global_index();
    y[i] = x[i + (1u << 24)];
}

// Reads far past the end of x (int) and outside shared memory (through a
// generic pointer): with out_of_bounds_reads "uninitialized" both return
// the fill value.
extern "C" __global__ void oob_read_int(const int *x, int *y, int *z, unsigned long long s_address)
{
    unsigned i = global_index();
    int *s = shared_scratch<int>(s_address);
    s[threadIdx.x] = (int)i;
    y[i] = x[i + (1u << 24)];
    z[i] = s[threadIdx.x + (1u << 20)];
}

// Copies never-written smem scratch of four dtypes out: each starts filled
// by its dtype (NaN, the largest integer, true).
extern "C" __global__ void scratch_fill_typed(int *i32, signed char *i8, bool *b, unsigned short *h,
                                              unsigned long long si32, unsigned long long si8,
                                              unsigned long long sb, unsigned long long sh)
{
    unsigned t = threadIdx.x, i = global_index();
    i32[i] = shared_scratch<int>(si32)[t];
    i8[i] = shared_scratch<signed char>(si8)[t];
    b[i] = shared_scratch<bool>(sb)[t];
    h[i] = shared_scratch<unsigned short>(sh)[t];
}

// smem scratch in a 32-bit parameter (a .u32 shared address) next to one in
// a 64-bit parameter, after static shared memory; each block rotates:
//   y[b*n + t] = 3*x[b*n + (t+1)%n] + x[b*n + t] + own[t%2]
extern "C" __global__ void scratch_u32(const int *x, int *y, unsigned s_address, unsigned long long r_address)
{
    __shared__ int own[2];
    int *s = static_cast<int *>(__cvta_shared_to_generic(s_address));
    int *r = shared_scratch<int>(r_address);
    unsigned t = threadIdx.x, n = blockDim.x, i = global_index();
    if (t < 2)
        own[t] = 100 * (int)(t + 1);
    s[t] = x[i];
    r[t] = 3 * x[i];
    __syncthreads();
    y[i] = r[(t + 1) % n] + s[t] + own[t % 2];
}
