// Kernels for synccheck, each misuse with a correct twin. Launched by the
// e2e cases tests/e2e/cases/check-sync-*. Regenerate with regen.sh.

// Lanes of one warp reach two different bar.sync instructions.
extern "C" __global__ void divergent_barrier(float *out)
{
    unsigned t = threadIdx.x;
    if (t % 32 < 16) {
        out[t] = 1.0f;
        asm volatile("bar.sync 0;" ::: "memory");
    } else {
        out[t] = 2.0f;
        asm volatile("bar.sync 0;" ::: "memory");
    }
}

extern "C" __global__ void divergent_barrier_fixed(float *out)
{
    unsigned t = threadIdx.x;
    out[t] = t % 32 < 16 ? 1.0f : 2.0f;
    __syncthreads();
}

// Warp 0 and warp 1 name different thread counts for barrier 1.
extern "C" __global__ void count_mismatch(float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32)
        asm volatile("bar.sync 1, 64;" ::: "memory");
    else
        asm volatile("bar.sync 1, 96;" ::: "memory");
    out[t] = 1.0f;
}

extern "C" __global__ void count_match(float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32)
        asm volatile("bar.sync 1, 64;" ::: "memory");
    else
        asm volatile("bar.sync 1, 64;" ::: "memory");
    out[t] = 1.0f;
}

// The upper half of the warp has exited when the rest calls __syncwarp
// with a full mask.
extern "C" __global__ void syncwarp_exited(float *out)
{
    unsigned t = threadIdx.x;
    if (t >= 16)
        return;
    out[t] = 1.0f;
    __syncwarp(0xffffffffu);
    out[t] += 1.0f;
}

extern "C" __global__ void syncwarp_exited_fixed(float *out)
{
    unsigned t = threadIdx.x;
    if (t >= 16)
        return;
    out[t] = 1.0f;
    __syncwarp(0x0000ffffu);
    out[t] += 1.0f;
}

// Lanes 16-31 shuffle with a mask that names only lanes 0-15.
extern "C" __global__ void shfl_not_member(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    out[t] = __shfl_xor_sync(0x0000ffffu, in[t], 1);
}

extern "C" __global__ void shfl_member(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    out[t] = __shfl_xor_sync(0xffffffffu, in[t], 1);
}

__device__ __forceinline__ unsigned smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// Thread 0 arrives on an mbarrier nobody initialized.
extern "C" __global__ void mbarrier_uninit(float *out)
{
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0)
        asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}" ::"r"(smem(&bar)) : "memory");
    out[threadIdx.x] = 1.0f;
}

extern "C" __global__ void mbarrier_init_first(float *out)
{
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
        asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}" ::"r"(smem(&bar)) : "memory");
    }
    out[threadIdx.x] = 1.0f;
}

// An mbarrier expecting 1 arrival gets an arrival of count 2.
extern "C" __global__ void mbarrier_overflow(float *out)
{
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
        asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.noComplete.shared.b64 st, [%0], 2;\n}" ::"r"(smem(&bar)) : "memory");
    }
    out[threadIdx.x] = 1.0f;
}

// Warp 0 waits at a barrier for 64 threads; warp 1 never comes.
extern "C" __global__ void deadlock(float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32)
        asm volatile("bar.sync 1, 64;" ::: "memory");
    out[t] = 1.0f;
}

extern "C" __global__ void deadlock_fixed(float *out)
{
    unsigned t = threadIdx.x;
    asm volatile("bar.sync 1, 64;" ::: "memory");
    out[t] = 1.0f;
}

// Warp 0 reaches the CTA-wide barrier at one bar.sync, the other warps at
// another. bar.sync is barrier.sync.aligned: every thread of the block must
// execute the same instruction.
extern "C" __global__ void divergent_block_barrier(float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32) {
        out[t] = 1.0f;
        asm volatile("bar.sync 0;" ::: "memory");
    } else {
        out[t] = 2.0f;
        asm volatile("bar.sync 0;" ::: "memory");
    }
    out[t] += 1.0f;
}

// The same with the non-aligned barrier.sync, which may be executed at
// different instructions.
extern "C" __global__ void divergent_block_barrier_fixed(float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32) {
        out[t] = 1.0f;
        asm volatile("barrier.sync 0;" ::: "memory");
    } else {
        out[t] = 2.0f;
        asm volatile("barrier.sync 0;" ::: "memory");
    }
    out[t] += 1.0f;
}

// Threads at or past n return before __syncthreads(): a barrier waits for
// the threads that have not exited (PTX ISA, barrier), so this is clean.
extern "C" __global__ void exited_before_barrier(float *out, unsigned n)
{
    __shared__ float s[128];
    unsigned t = threadIdx.x;
    if (t >= n)
        return;
    s[t] = (float)t;
    __syncthreads();
    out[t] = s[(t + 1) % n];
}

// Named barrier 1 with a thread count given at run time (48: not a
// multiple of the warp size; ptxas refuses such a constant).
extern "C" __global__ void count_not_warps(float *out, unsigned count)
{
    unsigned t = threadIdx.x;
    asm volatile("bar.sync 1, %0;" ::"r"(count) : "memory");
    out[t] = 1.0f;
}

// A block of 48 threads: warp 1 has lanes 0-15 only, yet names all 32 in
// __syncwarp.
extern "C" __global__ void syncwarp_absent(float *out)
{
    unsigned t = threadIdx.x;
    out[t] = 1.0f;
    __syncwarp(0xffffffffu);
    out[t] += 1.0f;
}

// The same naming only the lanes that exist.
extern "C" __global__ void syncwarp_absent_fixed(float *out)
{
    unsigned t = threadIdx.x;
    unsigned n = blockDim.x - (t & ~31u);
    unsigned mask = n >= 32 ? 0xffffffffu : (1u << n) - 1;
    out[t] = 1.0f;
    __syncwarp(mask);
    out[t] += 1.0f;
}
