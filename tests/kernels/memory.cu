// Memory spaces and calls: dynamically indexed local arrays, recursive and
// non-inlined __device__ functions (PTX call with .param passing), generic
// pointers into shared and global, __constant__ and __device__ variables
// with initializers, vector and read-only loads, volatile, a struct with
// padding passed by value as a kernel parameter, and 32-bit shared
// addresses whose sum with an offset wraps.

// c_table: 16 constant words with an initializer (ld.const).
__constant__ int c_table[16] = {1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987};
// g_scale: a __device__ global with an initializer; g_calls: a zero-initialized __device__ counter.
__device__ float g_scale = 2.5f;
__device__ unsigned g_calls;

// local_array: out[i] = sum of buf[idx[i*4+k] & 63] for k<4, where buf[j] = j*j + i lives in local memory (dynamic indexing).
extern "C" __global__ void local_array(const int *idx, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int buf[64];
    for (int j = 0; j < 64; j++)
        buf[j] = j * j + i;
    int s = 0;
    for (int k = 0; k < 4; k++)
        s += buf[idx[i * 4 + k] & 63];
    out[i] = s;
}

__device__ __noinline__ unsigned fib(unsigned k)
{
    return k < 2 ? k : fib(k - 1) + fib(k - 2);
}

__device__ __noinline__ unsigned ackermann(unsigned m, unsigned k)
{
    if (m == 0)
        return k + 1;
    if (k == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, k - 1));
}

// recursion: out[2*i] = fib(in[i] % 20), out[2*i+1] = ackermann(2, in[i] % 8) (recursive __noinline__ calls, stack in local memory).
extern "C" __global__ void recursion(const unsigned *in, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[2 * i + 0] = fib(in[i] % 20);
    out[2 * i + 1] = ackermann(2, in[i] % 8);
}

struct Mixed {
    char tag;     // offset 0
    double value; // offset 8
    int4 quad;    // offset 16
};

__device__ __noinline__ double mixed_sum(Mixed m, const float *p, int count)
{
    double s = m.tag + m.value + m.quad.x + m.quad.y + m.quad.z + m.quad.w;
    for (int k = 0; k < count; k++)
        s += p[k];    // p may point to shared or global: generic loads
    return s;
}

// struct_param: kernel takes char c, struct Mixed m (padded, 32 bytes, 16-aligned) by value, float *x; out[0] = c, out[1] = mixed_sum(m, x, 4), out[2] = same over a shared copy of x.
extern "C" __global__ void struct_param(char c, Mixed m, const float *x, double *out)
{
    __shared__ float sx[4];
    if (threadIdx.x < 4)
        sx[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = c;
        out[1] = mixed_sum(m, x, 4);
        out[2] = mixed_sum(m, sx, 4);
    }
}

// const_and_globals: out[i] = c_table[in[i] & 15] * g_scale (ld.const, ld.global of a __device__ var); atomically counts calls in g_calls, copied to calls[0] by the last thread.
extern "C" __global__ void const_and_globals(const int *in, float *out, unsigned *calls, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = c_table[in[i] & 15] * g_scale;
    unsigned prev = atomicAdd(&g_calls, 1);
    if (prev == (unsigned)n - 1)
        calls[0] = prev + 1;
}

// vector_io: out4[i] = in4[i] * 2 (float4 ld/st.v4), outi2[i] = {in2[i].y, in2[i].x} (int2 v2), ro[i] = __ldg(&in4[i].x) + __ldg(&in2[i].x).
extern "C" __global__ void vector_io(const float4 *in4, float4 *out4, const int2 *in2, int2 *outi2, float *ro, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 v = in4[i];
    out4[i] = make_float4(v.x * 2, v.y * 2, v.z * 2, v.w * 2);
    int2 w = in2[i];
    outi2[i] = make_int2(w.y, w.x);
    ro[i] = __ldg(&in4[i].x) + (float)__ldg(&in2[i].x);
}

// ldg_restrict: y[i] = x[i] + x[n-1-i] through const __restrict__ pointers (ld.global.nc).
extern "C" __global__ void ldg_restrict(const float *__restrict__ x, float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + x[n - 1 - i];
}

// volatile_poll: launch 1 block of 64: warp 1 (thread 32) writes data[0] = 42 then flag[0] = 1; warp 0 (thread 0) spins on the volatile flag, then out[0] = data[0]. Needs warps to be preempted while spinning.
extern "C" __global__ void volatile_poll(volatile int *flag, volatile int *data, int *out)
{
    if (threadIdx.x == 32) {
        data[0] = 42;
        __threadfence_block();
        flag[0] = 1;
    } else if (threadIdx.x == 0) {
        while (flag[0] == 0)
            ;
        __threadfence_block();
        out[0] = data[0];
    }
}

// byte_access: out[i] = (in[i] as signed char) * 3, out16[i] = (short)(in[i] << 8) >> 3 (ld/st u8/s8/u16 and sign extension).
extern "C" __global__ void byte_access(const signed char *in, int *out, short *out16, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 3;
        out16[i] = (short)((short)(in[i] << 8) >> 3);
    }
}

// shared_wavefront: one block of n <= 16 threads sweeps the anti-diagonals of a 17x17 shared table (filled from in[289]) as Rodinia's nw
// does: at step m < n, thread tx <= m adds the cells above-left, left and above of cell (m - tx + 1, tx + 1) to its sum. nvcc -O3
// unrolls the loop and addresses later steps' cells as [%r+imm] with %r below the table's start: a 32-bit shared address that wraps when
// the table starts low in shared memory. out[tx] = the thread's sum.
extern "C" __global__ void shared_wavefront(const int *in, int *out, int n)
{
    __shared__ int s[17][17];
    int tx = threadIdx.x;
    for (int i = tx; i < 17 * 17; i += blockDim.x)
        (&s[0][0])[i] = in[i];
    __syncthreads();
    int acc = 0;
    for (int m = 0; m < n; m++) {
        if (tx <= m) {
            int y = m - tx + 1, x = tx + 1;
            acc += s[y - 1][x - 1] + s[y][x - 1] + s[y - 1][x];
        }
        __syncthreads();
    }
    out[tx] = acc;
}
