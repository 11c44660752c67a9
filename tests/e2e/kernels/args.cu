// Kernels for the `kemu run` end-to-end cases (tests/e2e/cases/run-*):
// small enough to check by eye, each exercising one way of passing data.
// Regenerate args.ptx with tests/e2e/kernels/regen.sh (nvcc -ptx -arch=sm_80
// -O3 -std=c++17).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// copy_bytes: out[i] = in[i] for the first n bytes (grid-stride loop). Any
// dtype can be copied this way; bytes of `out` past n keep their fill, and
// an n past the end of either buffer faults.
extern "C" __global__ void copy_bytes(const unsigned char *in, unsigned char *out, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = in[i];
}

// scalars: out[k] = the raw bits of the k-th parameter, zero-extended to 64
// bits (so a negative s8 shows as 0xfe, a float as its IEEE bits).
extern "C" __global__ void scalars(unsigned char u8, unsigned short u16, unsigned u32, unsigned long long u64,
                                   signed char s8, short s16, int s32, long long s64, __half f16,
                                   __nv_bfloat16 bf16, float f32, double f64, unsigned long long *out)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    out[0] = u8;
    out[1] = u16;
    out[2] = u32;
    out[3] = u64;
    out[4] = (unsigned char)s8;
    out[5] = (unsigned short)s16;
    out[6] = (unsigned)s32;
    out[7] = (unsigned long long)s64;
    out[8] = __half_as_ushort(f16);
    out[9] = __bfloat16_as_ushort(bf16);
    out[10] = __float_as_uint(f32);
    out[11] = (unsigned long long)__double_as_longlong(f64);
}

// A 16-byte aggregate passed by value: .param .align 8 .b8 name[16].
struct Record {
    unsigned a;          // bytes 0..3
    unsigned short b;    // bytes 4..5
    unsigned char c[2];  // bytes 6..7
    double d;            // bytes 8..15
};

// aggregate: out = {a, b, c[0], c[1], bits of d}.
extern "C" __global__ void aggregate(Record r, unsigned long long *out)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    out[0] = r.a;
    out[1] = r.b;
    out[2] = r.c[0];
    out[3] = r.c[1];
    out[4] = (unsigned long long)__double_as_longlong(r.d);
}

// add_one: x[i] += 1 for i < n (an in-place update, for inout: buffers).
extern "C" __global__ void add_one(float *x, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0f;
}

// shared_peek: out[t] = the word at index t of a shared array that only
// threads t < written store to (t itself); the others read shared memory
// nobody initialized. The first 64 words are a static __shared__ array,
// the next ones the dynamic (extern) shared memory of the launch.
extern "C" __global__ void shared_peek(unsigned *out, unsigned written)
{
    __shared__ unsigned fixed[64];
    extern __shared__ unsigned dynamic[];
    unsigned t = threadIdx.x;
    unsigned *slot = t < 64 ? &fixed[t] : &dynamic[t - 64];
    if (t < written)
        *slot = t;
    __syncthreads();
    out[t] = *slot;
}
