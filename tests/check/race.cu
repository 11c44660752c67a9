// Kernels for racecheck: each hazard class with a racy kernel and its
// fixed twin. Launched by the e2e cases tests/e2e/cases/check-race-*.
// Regenerate race.ptx with tests/check/regen.sh.
#include <cuda_pipeline.h>

// ---- shared memory: RAW, WAR, WAW (2 warps, 64 threads) -------------------

// Every thread reads the element the other warp wrote: no barrier between.
extern "C" __global__ void shared_raw(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    out[t] = s[(t + 32) % 64];
}

extern "C" __global__ void shared_raw_fixed(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[(t + 32) % 64];
}

// The element the other warp still reads is overwritten: no barrier
// between the read and the write.
extern "C" __global__ void shared_war(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    float v = s[(t + 32) % 64];
    s[t] = v * 2.0f;
    __syncthreads();
    out[t] = s[t];
}

extern "C" __global__ void shared_war_fixed(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    float v = s[(t + 32) % 64];
    __syncthreads();
    s[t] = v * 2.0f;
    __syncthreads();
    out[t] = s[t];
}

// Both warps write the same 32 elements, different values.
extern "C" __global__ void shared_waw(const float *in, float *out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t % 32] = in[t];
    __syncthreads();
    out[t] = s[t % 32];
}

extern "C" __global__ void shared_waw_fixed(const float *in, float *out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    if (t < 32)
        s[t] = in[t];
    __syncthreads();
    out[t] = s[t % 32];
}

// Both warps store the same value: a benign WAW (a warning).
extern "C" __global__ void shared_waw_same(const float *in, float *out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t % 32] = 1.0f;
    __syncthreads();
    out[t] = s[t % 32] + in[t];
}

// ---- lanes of one warp (32 threads): no __syncwarp between ------------------

extern "C" __global__ void warp_hazard(const float *in, float *out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    out[t] = s[t ^ 1];
}

extern "C" __global__ void warp_hazard_fixed(const float *in, float *out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncwarp();
    out[t] = s[t ^ 1];
}

// ---- global memory between blocks (thread 0 of each block) --------------------

// Every block reads out[0], stores its own value there and keeps what it
// read in out[1 + block]: read/write and write/write races on out[0].
extern "C" __global__ void global_blocks(const float *in, float *out)
{
    if (threadIdx.x == 0) {
        float prev = out[0];
        out[0] = in[blockIdx.x];
        out[1 + blockIdx.x] = prev;
    }
}

extern "C" __global__ void global_blocks_atomic(const float *in, float *out)
{
    if (threadIdx.x == 0)
        out[1 + blockIdx.x] = atomicExch(&out[0], in[blockIdx.x]);
}

// ---- global memory within a block (2 warps) ------------------------------------

extern "C" __global__ void global_block(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    out[t] = in[t];
    out[64 + t] = out[(t + 32) % 64];
}

extern "C" __global__ void global_block_fixed(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    out[t] = in[t];
    __syncthreads();
    out[64 + t] = out[(t + 32) % 64];
}

// ---- the threadfence "last block" reduction --------------------------------------

__device__ unsigned retired;

// Each block writes its partial sum, fences, takes a ticket; the last block
// sums the partial sums. Clean.
extern "C" __global__ void last_block(const float *in, float *partial, float *total)
{
    __shared__ bool last;
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t == 0) {
        float sum = 0;
        for (int i = 0; i < 64; i++)
            sum += s[i];
        partial[blockIdx.x] = sum;
        __threadfence();
        unsigned ticket = atomicInc(&retired, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && t == 0) {
        float sum = 0;
        for (unsigned i = 0; i < gridDim.x; i++)
            sum += partial[i];
        *total = sum;
        retired = 0;
    }
}

// The same without the fence: the partial sums are not released.
extern "C" __global__ void last_block_nofence(const float *in, float *partial, float *total)
{
    __shared__ bool last;
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t == 0) {
        float sum = 0;
        for (int i = 0; i < 64; i++)
            sum += s[i];
        partial[blockIdx.x] = sum;
        unsigned ticket = atomicInc(&retired, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && t == 0) {
        float sum = 0;
        for (unsigned i = 0; i < gridDim.x; i++)
            sum += partial[i];
        *total = sum;
        retired = 0;
    }
}

// ---- named barriers: warp 0 produces, warp 1 consumes (bar.arrive / bar.sync) -----

extern "C" __global__ void named_barrier(const float *in, float *out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    if (t < 32) {
        s[t] = in[t] * 2.0f;
        asm volatile("bar.arrive 1, 64;" ::: "memory");
    } else {
        asm volatile("bar.sync 1, 64;" ::: "memory");
        out[t - 32] = s[t - 32];
    }
}

// Broken: the producer arrives before it writes.
extern "C" __global__ void named_barrier_broken(const float *in, float *out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    if (t < 32) {
        asm volatile("bar.arrive 1, 64;" ::: "memory");
        s[t] = in[t] * 2.0f;
    } else {
        asm volatile("bar.sync 1, 64;" ::: "memory");
        out[t - 32] = s[t - 32];
    }
}

// ---- cp.async: the copy is ordered by its wait group ------------------------------

extern "C" __global__ void async_copy(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    __pipeline_memcpy_async(&s[t], &in[t], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[t] = s[(t + 32) % 64];
}

// Broken: the barrier comes before the wait.
extern "C" __global__ void async_copy_broken(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    __pipeline_memcpy_async(&s[t], &in[t], sizeof(float));
    __pipeline_commit();
    __syncthreads();
    __pipeline_wait_prior(0);
    out[t] = s[(t + 32) % 64];
}

// ---- mbarrier: warp 0 produces, warp 1 waits for the phase ------------------------

__device__ __forceinline__ void mbar_init(unsigned long long *bar, unsigned count)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned long long *bar)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}" ::"r"(a) : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("{\n .reg .pred p;\n wait:\n mbarrier.test_wait.parity.shared.b64 p, [%0], %1;\n @!p bra wait;\n}" ::"r"(a),
                 "r"(parity)
                 : "memory");
}

extern "C" __global__ void mbarrier_pc(const float *in, float *out)
{
    __shared__ float s[32];
    __shared__ unsigned long long bar;
    unsigned t = threadIdx.x;
    if (t == 0)
        mbar_init(&bar, 32);
    __syncthreads();
    if (t < 32) {
        s[t] = in[t] * 2.0f;
        mbar_arrive(&bar);
    } else {
        mbar_wait(&bar, 0);
        out[t - 32] = s[t - 32];
    }
}

// Broken: the consumer does not wait.
extern "C" __global__ void mbarrier_pc_broken(const float *in, float *out)
{
    __shared__ float s[32];
    __shared__ unsigned long long bar;
    unsigned t = threadIdx.x;
    if (t == 0)
        mbar_init(&bar, 32);
    __syncthreads();
    if (t < 32) {
        s[t] = in[t] * 2.0f;
        mbar_arrive(&bar);
    } else {
        out[t - 32] = s[t - 32];
    }
}

// ---- shared atomics and a plain read ------------------------------------------------

extern "C" __global__ void atomic_then_read(const unsigned *in, unsigned *out)
{
    __shared__ unsigned bins[4];
    unsigned t = threadIdx.x;
    if (t < 4)
        bins[t] = 0;
    __syncthreads();
    atomicAdd(&bins[in[t] % 4], 1u);
    if (t < 4)
        out[t] = bins[t];
}

extern "C" __global__ void atomic_then_read_fixed(const unsigned *in, unsigned *out)
{
    __shared__ unsigned bins[4];
    unsigned t = threadIdx.x;
    if (t < 4)
        bins[t] = 0;
    __syncthreads();
    atomicAdd(&bins[in[t] % 4], 1u);
    __syncthreads();
    if (t < 4)
        out[t] = bins[t];
}

// ---- tile reads: the shapes a 16x16 tile product reads in -----------------------------
// A warp of a (16,16) block reads a[ty][k] in two blocks of 16 lanes at one
// element each and bt[k][tx] with both half-warps on one row (period 16);
// s[0] is read by every lane. Without the barrier each read races with the
// other warps' tile stores.

extern "C" __global__ void tile_reads(const float *in, float *out)
{
    __shared__ float a[16][16], bt[16][16];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    a[ty][tx] = in[ty * 16 + tx];
    bt[ty][tx] = in[256 + ty * 16 + tx];
    float acc = 0.0f;
    for (unsigned k = 0; k < 16; k++)
        acc += a[ty][k] * bt[k][tx];
    out[ty * 16 + tx] = acc + a[0][0];
}

extern "C" __global__ void tile_reads_fixed(const float *in, float *out)
{
    __shared__ float a[16][16], bt[16][16];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    a[ty][tx] = in[ty * 16 + tx];
    bt[ty][tx] = in[256 + ty * 16 + tx];
    __syncthreads();
    float acc = 0.0f;
    for (unsigned k = 0; k < 16; k++)
        acc += a[ty][k] * bt[k][tx];
    out[ty * 16 + tx] = acc + a[0][0];
}

// ---- scattered reads: lanes at words in no order, several at one word ------------------
// Every thread writes its word of the table, then reads (without the
// barrier) the word (t * t) % 64 another warp may have written, and the odd
// lanes add atomically to word (t * 13) % 64: races between warps, and
// lanes of one warp at one word.

extern "C" __global__ void scatter_reads(const unsigned *in, unsigned *out)
{
    __shared__ unsigned table[64];
    unsigned t = threadIdx.x;
    table[t] = in[t];
    unsigned v = table[(t * t) % 64];
    if (t & 1)
        atomicAdd(&table[(t * 13) % 64], v);
    out[t] = v;
}

extern "C" __global__ void scatter_reads_fixed(const unsigned *in, unsigned *out)
{
    __shared__ unsigned table[64];
    unsigned t = threadIdx.x;
    table[t] = in[t];
    __syncthreads();
    unsigned v = table[(t * t) % 64];
    __syncthreads();
    if (t & 1)
        atomicAdd(&table[(t * 13) % 64], v);
    out[t] = v;
}

// ---- reads racecheck defers, and a barrier among part of the block -------------------
// Warps 0 and 1 read s[] (nothing wrote it since the barrier, so racecheck
// lists the reads instead of recording them); warp 0 meets warp 2 at named
// barrier 1, then warp 2 overwrites s[]: ordered after warp 0's reads, not
// after warp 1's (WAR). In the fixed twin warp 1 joins the barrier too.

extern "C" __global__ void partial_order(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x, w = t / 32;
    if (t < 64)
        s[t] = in[t];
    __syncthreads();
    float v = 0.0f;
    if (w < 2)
        v = s[t % 64] + s[(t * 7) % 64];
    if (w == 0 || w == 2)
        asm volatile("bar.sync 1, 64;" ::: "memory");
    if (w == 2)
        s[t % 64] = v + 1.0f;
    out[t] = v;
}

extern "C" __global__ void partial_order_fixed(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x, w = t / 32;
    if (t < 64)
        s[t] = in[t];
    __syncthreads();
    float v = 0.0f;
    if (w < 2)
        v = s[t % 64] + s[(t * 7) % 64];
    asm volatile("bar.sync 1, 96;" ::: "memory");
    if (w == 2)
        s[t % 64] = v + 1.0f;
    out[t] = v;
}

// ---- more reads in one barrier interval than racecheck lists ------------------------------
// Warp 0 reads s[] 32 words at a time, iters times (5000: 160000 lane
// groups, more than the 65536 racecheck lists before recording them);
// warp 1 overwrites s[32..63] with no barrier in between (WAR).

extern "C" __global__ void many_reads(const float *in, float *out, int iters)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x, w = t / 32;
    for (unsigned i = t; i < 256; i += blockDim.x)
        s[i] = in[i];
    __syncthreads();
    float v = 0.0f;
    if (w == 0)
        for (int i = 0; i < iters; i++)
            v += s[(i * 32 + t) % 256];
    if (w == 1)
        s[t] = 1.0f;
    out[t] = v;
}

// ---- global memory within a block, among strided reads -----------------------

// global_block among many strided 2-byte reads of another array (operands
// loaded lane by lane, as mma fragments are): racecheck sorts and sweeps
// only the accesses that can race, and must still find the one race.
extern "C" __global__ void global_block_strided(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    const unsigned short *h = (const unsigned short *)in;
    float s = 0.0f;
    for (unsigned i = 0; i < 16; i++)
        s += (float)h[(t * 6 + i * 97) % 1024];
    out[t] = in[t] + s;
    out[64 + t] = out[(t + 32) % 64];
}

extern "C" __global__ void global_block_strided_fixed(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    const unsigned short *h = (const unsigned short *)in;
    float s = 0.0f;
    for (unsigned i = 0; i < 16; i++)
        s += (float)h[(t * 6 + i * 97) % 1024];
    out[t] = in[t] + s;
    __syncthreads();
    out[64 + t] = out[(t + 32) % 64];
}

// ---- global memory: lanes at strided elements --------------------------------
// A warp whose lanes read every other element (or, lane by lane, elements
// a row apart: mma fragments) is logged as a few strided ranges with gaps
// between their elements. A write into the gaps is no race; a write to an
// element one lane read is, and names that lane.

// Warp 0 reads the even floats of out[0..63], warp 1 writes the odd ones.
extern "C" __global__ void global_strided_gaps(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32)
        out[256 + t] = out[2 * t];
    else
        out[2 * (t - 32) + 1] = in[t];
}

// The same, and thread 40 also writes out[10], which lane 5 read.
extern "C" __global__ void global_strided_hit(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32) {
        out[256 + t] = out[2 * t];
    } else {
        out[2 * (t - 32) + 1] = in[t];
        if (t == 40)
            out[10] = in[0];
    }
}

// 2-byte elements 4 bytes apart (an mma A fragment's pattern): warp 1
// writes the other half of each word warp 0 read from; no race.
extern "C" __global__ void global_strided_halves(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    unsigned short *h = (unsigned short *)out;
    if (t < 32)
        out[256 + t] = (float)h[2 * t];
    else
        h[2 * (t - 32) + 1] = (unsigned short)in[t];
}

// Lane l reads out[(l % 4) * 64 + l / 4] (an mma B fragment's pattern: in
// lane order, runs of four lanes 64 elements apart). Warp 1 writes
// elements no lane read, and thread 41 out[130], which lane 10 read.
extern "C" __global__ void global_strided_columns(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32) {
        out[384 + t] = out[(t % 4) * 64 + t / 4];
    } else {
        unsigned l = t - 32;
        out[(l % 4) * 64 + l / 4 + 8] = in[t];
        if (t == 41)
            out[130] = in[0];
    }
}

// Across blocks (the analysis across clusters): block 0 reads the even
// floats, block 1 writes the odd ones (no race) and, for hit != 0, thread
// 3 of block 1 also writes out[12], which lane 6 of block 0 read.
__device__ void strided_blocks(const float *in, float *out, int hit)
{
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0) {
        out[256 + t] = out[2 * t];
    } else {
        out[2 * t + 1] = in[t];
        if (hit && t == 3)
            out[12] = in[0];
    }
}

extern "C" __global__ void global_strided_blocks(const float *in, float *out) { strided_blocks(in, out, 0); }
extern "C" __global__ void global_strided_blocks_hit(const float *in, float *out) { strided_blocks(in, out, 1); }

// Every element warp 0 read is written by a lane of warp 1: 32 instances
// of one hazard, on the even floats and on the columns' pattern.
extern "C" __global__ void global_strided_all(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32)
        out[256 + t] = out[2 * t];
    else
        out[2 * (t - 32)] = in[t];
}

extern "C" __global__ void global_strided_columns_all(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32) {
        out[384 + t] = out[(t % 4) * 64 + t / 4];
    } else {
        unsigned l = t - 32;
        out[((l + 1) % 4) * 64 + l / 4] = in[t];
    }
}

// Lanes in reverse order (lane l reads out[62 - 2 * l]: in address order
// the thread falls by one per element); thread 45 writes out[40], which
// lane 11 read, and the gaps between the elements.
extern "C" __global__ void global_strided_reversed(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    if (t < 32) {
        out[256 + t] = out[62 - 2 * t];
    } else {
        out[2 * (t - 32) + 1] = in[t];
        if (t == 45)
            out[40] = in[0];
    }
}
