// Atomics on global and shared memory: every integer op and width, float
// and double add, CAS loops, and the sm_80 __half2 add. Results are
// order-independent unless noted (the returned old values are not).

#include <cuda_fp16.h>

// atomic_int_global: every thread applies one of each op to g[0..11] (s32 add/sub/exch/min/max/and/or/xor, u32 inc/dec(wrap w), u32 min/max) with operand in[i]; old[i] = value returned by the add.
extern "C" __global__ void atomic_int_global(int *g, const int *in, int *old, unsigned w)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    unsigned *u = (unsigned *)g;
    old[i] = atomicAdd(&g[0], v);
    atomicSub(&g[1], v);
    atomicExch(&g[2], v);
    atomicMin(&g[3], v);
    atomicMax(&g[4], v);
    atomicAnd(&g[5], v);
    atomicOr(&g[6], v);
    atomicXor(&g[7], v);
    atomicInc(&u[8], w);
    atomicDec(&u[9], w);
    atomicMin(&u[10], (unsigned)v);
    atomicMax(&u[11], (unsigned)v);
}

// atomic_64_global: ull add/exch/min/max/and/or/xor/cas and signed long long min/max on g[0..9] with operand in[i].
extern "C" __global__ void atomic_64_global(unsigned long long *g, const long long *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long v = (unsigned long long)in[i];
    atomicAdd(&g[0], v);
    atomicExch(&g[1], v);
    atomicMin(&g[2], v);
    atomicMax(&g[3], v);
    atomicAnd(&g[4], v);
    atomicOr(&g[5], v);
    atomicXor(&g[6], v);
    atomicCAS(&g[7], 0ull, v);                 // exactly one thread wins
    atomicMin((long long *)&g[8], in[i]);
    atomicMax((long long *)&g[9], in[i]);
}

// atomic_float_global: fsum[0] += in[i] (f32), dsum[0] += (double)in[i] (f64), and a CAS-loop float max into fsum[1].
extern "C" __global__ void atomic_float_global(float *fsum, double *dsum, const float *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    atomicAdd(&fsum[0], v);
    atomicAdd(&dsum[0], (double)v);
    int *slot = (int *)&fsum[1];
    int cur = *slot;
    while (__int_as_float(cur) < v) {
        int prev = atomicCAS(slot, cur, __float_as_int(v));
        if (prev == cur)
            break;
        cur = prev;
    }
}

// atomic_cas_ticket: each thread takes a unique ticket via an atomicCAS increment loop on *counter; tickets[i] = its ticket (a permutation of 0..N-1).
extern "C" __global__ void atomic_cas_ticket(unsigned *counter, unsigned *tickets)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned cur = *(volatile unsigned *)counter, prev;
    while ((prev = atomicCAS(counter, cur, cur + 1)) != cur)
        cur = prev;
    tickets[i] = cur;
}

// atomic_shared: per block, shared counters get add/sub/min/max/and/or/xor/exch/inc/cas (s32) and f32/f64 adds from in[i]; out[13*b+k] = s[0..9], f32 sum bits, (int) f64 sum, (int) u64 sum.
extern "C" __global__ void atomic_shared(const int *in, int *out, unsigned w)
{
    __shared__ int s[10];
    __shared__ float f;
    __shared__ double d;
    __shared__ unsigned long long u64;
    if (threadIdx.x == 0) {
        s[0] = 0; s[1] = 0; s[2] = 0; s[3] = 0x7fffffff; s[4] = (int)0x80000000;
        s[5] = -1; s[6] = 0; s[7] = 0; s[8] = 0; s[9] = 0;
        f = 0.0f; d = 0.0; u64 = 0;
    }
    __syncthreads();
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    atomicAdd(&s[0], v);
    atomicSub(&s[1], v);
    atomicExch(&s[2], v);
    atomicMin(&s[3], v);
    atomicMax(&s[4], v);
    atomicAnd(&s[5], v);
    atomicOr(&s[6], v);
    atomicXor(&s[7], v);
    atomicInc((unsigned *)&s[8], w);
    atomicCAS(&s[9], 0, v);
    atomicAdd(&f, (float)v);
    atomicAdd(&d, (double)v);
    atomicAdd(&u64, (unsigned long long)(unsigned)v);
    __syncthreads();
    if (threadIdx.x < 10)
        out[13 * blockIdx.x + threadIdx.x] = s[threadIdx.x];
    if (threadIdx.x == 0) {
        out[13 * blockIdx.x + 10] = __float_as_int(f);
        out[13 * blockIdx.x + 11] = (int)d;
        out[13 * blockIdx.x + 12] = (int)u64;
    }
}

// atomic_histogram: hist[in[i] % bins] += 1 (global atomicAdd whose result is unused).
extern "C" __global__ void atomic_histogram(const unsigned *in, unsigned *hist, unsigned bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[in[i] % bins], 1u);
}

// red_asm: g[0] += in[i] (red.global.add.u32), g[1] max= in[i] (red.global.max.s32), via inline asm as Triton emits it.
extern "C" __global__ void red_asm(int *g, const int *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    asm volatile("red.global.add.u32 [%0], %1;" :: "l"(g), "r"(in[i]) : "memory");
    asm volatile("red.global.max.s32 [%0], %1;" :: "l"(g + 1), "r"(in[i]) : "memory");
}

#if __CUDA_ARCH__ >= 800  /* vector f16x2 atomics need sm_60+, kept with the sm_80 set */
// atomic_half2: acc[0] += in[i] as __half2 (f16x2 atom.add.noftz), acc[1] += in[i] as a __half.
extern "C" __global__ void atomic_half2(__half2 *acc, const __half2 *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&acc[0], in[i]);
    atomicAdd((__half *)&acc[1], __low2half(in[i]));
}
#endif
