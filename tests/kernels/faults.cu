// Kernels that fail on purpose, for the checkers and the error paths:
// out-of-bounds and misaligned accesses, __trap, a barrier deadlock, a
// barrier in divergent code, an endless loop (timeouts), a shared-memory
// race and a read of uninitialized shared memory.

// oob_global_write: thread 0 writes 1 to p[index]; pass index >= the allocation's element count to fault.
extern "C" __global__ void oob_global_write(int *p, long long index)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        p[index] = 1;
}

// oob_shared_read: out[t] = buf[t + offset] for a 64-int shared buf (filled with t); offset > 0 reads past the end for the last threads. blockDim.x = 64.
extern "C" __global__ void oob_shared_read(int *out, int offset)
{
    __shared__ int buf[64];
    unsigned t = threadIdx.x;
    buf[t] = t;
    __syncthreads();
    out[t] = buf[t + offset];
}

// misaligned_load: out[0] = *(int *)(bytes + skew); skew = 1 gives a misaligned 4-byte global load.
extern "C" __global__ void misaligned_load(const char *bytes, int *out, int skew)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        out[0] = *(const int *)(bytes + skew);
}

// trap_when: out[i] = i, but the thread with i == which calls __trap() first (which < 0: no trap).
extern "C" __global__ void trap_when(int *out, int which)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == which)
        __trap();
    out[i] = i;
}

// barrier_deadlock: 1 block of 64: warp 0 waits in __syncthreads(); warp 1 spins on *flag, which only warp 0 sets after the barrier. Never finishes.
extern "C" __global__ void barrier_deadlock(volatile int *flag)
{
    if (threadIdx.x < 32) {
        __syncthreads();
        *flag = 1;
    } else {
        while (*flag == 0)
            ;
    }
}

// divergent_barrier: __syncthreads() reached only by threads with threadIdx.x < limit (undefined behaviour unless limit >= blockDim.x); out[t] = t.
extern "C" __global__ void divergent_barrier(int *out, int limit)
{
    unsigned t = threadIdx.x;
    if ((int)t < limit)
        __syncthreads();
    out[t] = t;
}

// infinite_loop: spins forever on a volatile read of *flag unless it is nonzero at entry; for launch timeouts.
extern "C" __global__ void infinite_loop(volatile int *flag)
{
    while (*flag == 0)
        ;
}

// shared_race: every thread writes buf[0] = t and thread 0 reads it without a barrier (write-write and read-write race); out[0] = value read.
extern "C" __global__ void shared_race(int *out)
{
    __shared__ int buf[1];
    buf[0] = threadIdx.x;
    if (threadIdx.x == 0)
        out[0] = buf[0];
}

// uninit_shared_read: out[t] = buf[t] where only even t wrote buf (odd slots read uninitialized shared memory). blockDim.x <= 256.
extern "C" __global__ void uninit_shared_read(int *out)
{
    __shared__ int buf[256];
    unsigned t = threadIdx.x;
    if (!(t & 1))
        buf[t] = t;
    __syncthreads();
    out[t] = buf[t];
}
