// Synchronization beyond __syncthreads: named barriers (bar.sync/bar.arrive
// with thread counts), __syncwarp with partial masks, cp.async groups and
// mbarrier phases (sm_80), and the __threadfence last-block reduction.

#include <cuda_pipeline.h>

// named_producer_consumer: 1 block of 128: warps 0-1 fill buf and bar.arrive 1,128; warps 2-3 bar.sync 1,128 then out[t-64] = buf[t-64] * 2 (t = threadIdx.x) for their 64 slots.
extern "C" __global__ void named_producer_consumer(const int *in, int *out)
{
    __shared__ int buf[64];
    unsigned t = threadIdx.x;
    if (t < 64) {
        buf[t] = in[t] + 1;
        asm volatile("bar.arrive 1, 128;" ::: "memory");
    } else {
        asm volatile("bar.sync 1, 128;" ::: "memory");
        out[t - 64] = buf[t - 64] * 2;
    }
}

// named_groups: 1 block of 128: warps 0-1 sync on barrier 1 (64 threads), warps 2-3 on barrier 2 (64 threads); each half reverses its 64 values of in into out through shared memory.
extern "C" __global__ void named_groups(const int *in, int *out)
{
    __shared__ int buf[128];
    unsigned t = threadIdx.x, half = t / 64, base = half * 64;
    buf[t] = in[t];
    if (half == 0)
        asm volatile("bar.sync 1, 64;" ::: "memory");
    else
        asm volatile("bar.sync 2, 64;" ::: "memory");
    out[t] = buf[base + 63 - (t - base)];
}

// syncwarp_masks: one warp per 32 values: lanes in mask exchange neighbours (lane^1) via shared memory between __syncwarp(mask); other lanes write -1. out[i].
extern "C" __global__ void syncwarp_masks(const int *in, int *out, unsigned mask)
{
    __shared__ int buf[1024];
    unsigned t = threadIdx.x, lane = t & 31;
    int i = blockIdx.x * blockDim.x + t;
    if (!((mask >> lane) & 1)) {
        out[i] = -1;
        return;
    }
    buf[t] = in[i];
    __syncwarp(mask);
    unsigned partner = lane ^ 1;
    out[i] = ((mask >> partner) & 1) ? buf[(t & ~31u) | partner] : buf[t];
}

// fence_last_block: each block sums its slice of in into partial[blockIdx.x]; the last block to finish (atomicInc on *count after __threadfence) writes the grand total to *total and resets *count. blockDim.x = 256.
extern "C" __global__ void fence_last_block(const float *in, float *partial, unsigned *count, float *total, int n)
{
    __shared__ float s[256];
    __shared__ bool last;
    int i = blockIdx.x * 256 + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned ticket = atomicInc(count, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float sum = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++)
            sum += ((volatile float *)partial)[b];
        *total = sum;
        *count = 0;
    }
}

#if __CUDA_ARCH__ >= 800  /* cp.async and mbarrier need sm_80 */
// cp_async_copy: (sm_80) 1 block of 64: stage in (64 float4) into shared with cp.async.ca 16-byte copies in two commit groups; wait_group 1 then 0; out[t] = staged[t] + staged[63-t].
extern "C" __global__ void cp_async_copy(const float4 *in, float4 *out)
{
    __shared__ float4 staged[64];
    unsigned t = threadIdx.x;
    unsigned dst = (unsigned)__cvta_generic_to_shared(&staged[t]);
    if (t < 32) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(&in[t]) : "memory");
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 0;" ::: "memory");
    } else {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(&in[t]) : "memory");
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_all;" ::: "memory");
    }
    __syncthreads();
    float4 a = staged[t], b = staged[63 - t];
    out[t] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// pipeline_copy: (sm_80) double-buffered __pipeline_memcpy_async of 4-byte floats: for each of `tiles` tiles of blockDim.x floats, out[tile*bd + t] = in[...] * 3.
extern "C" __global__ void pipeline_copy(const float *in, float *out, int tiles)
{
    extern __shared__ float stage[];   // 2 * blockDim.x floats
    unsigned t = threadIdx.x, bd = blockDim.x;
    __pipeline_memcpy_async(&stage[t], &in[t], sizeof(float));
    __pipeline_commit();
    for (int k = 0; k < tiles; k++) {
        if (k + 1 < tiles)
            __pipeline_memcpy_async(&stage[((k + 1) & 1) * bd + t], &in[(k + 1) * bd + t], sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        out[k * bd + t] = stage[(k & 1) * bd + t] * 3.0f;
    }
}

// mbarrier_phases: (sm_80) 1 block: thread 0 inits a shared mbarrier for blockDim.x arrivals; over 2 phases every thread writes buf, arrives, and waits (test_wait loop) on the phase token; out[phase*bd + t] = sum of buf written in that phase.
extern "C" __global__ void mbarrier_phases(const int *in, int *out)
{
    __shared__ unsigned long long bar;
    __shared__ int buf[1024];
    unsigned t = threadIdx.x, bd = blockDim.x;
    unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
    if (t == 0)
        asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(bar_addr), "r"(bd) : "memory");
    __syncthreads();
    for (int phase = 0; phase < 2; phase++) {
        buf[t] = in[t] * (phase + 1);
        unsigned long long token;
        asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(token) : "r"(bar_addr) : "memory");
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p;\n\tmbarrier.test_wait.shared.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(bar_addr), "l"(token) : "memory");
        int s = buf[(t + 1) % bd] + buf[t];
        out[phase * bd + t] = s;
        __syncthreads();   // nobody overwrites buf before all have read it
    }
    if (t == 0)
        asm volatile("mbarrier.inval.shared.b64 [%0];" :: "r"(bar_addr) : "memory");
}
#endif
