// Control-flow divergence: nested branches, data-dependent loop trip counts,
// early exit, an intra-warp spin lock that needs independent thread
// scheduling, and the counting barriers __syncthreads_count/and/or.

// classify: out[i] = class code of in[i] via nested if/else (neg even/odd, zero, small, big mult of 3, big other).
extern "C" __global__ void classify(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in[i], c;
    if (v < 0) {
        if (v & 1) c = 1; else c = 2;
    } else if (v == 0) {
        c = 3;
    } else {
        if (v < 100) {
            c = 4;
        } else {
            if (v % 3 == 0) c = 5; else c = 6;
        }
    }
    out[i] = c;
}

// collatz_steps: steps[i] = Collatz steps from start[i] to 1 (capped at limit); each lane loops a different count.
extern "C" __global__ void collatz_steps(const unsigned *start, unsigned *steps, int n, unsigned limit)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long x = start[i];
    unsigned count = 0;
    while (x > 1 && count < limit) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        count++;
    }
    steps[i] = count;
}

// early_exit_loop: out[i] = index of first zero in row i of m (row length len), or -1; lanes leave the loop at different times.
extern "C" __global__ void early_exit_loop(const int *m, int *out, int rows, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows)
        return;
    out[i] = -1;
    for (int j = 0; j < len; j++) {
        if (m[i * len + j] == 0) {
            out[i] = j;
            return;
        }
    }
}

// spin_lock_its: every thread iters times takes a global spin lock (atomicCAS), does a non-atomic ++*counter, releases; needs independent thread scheduling (lanes of one warp contend). Expect *counter == threads*iters.
extern "C" __global__ void spin_lock_its(int *lock, volatile int *counter, int iters)
{
    for (int k = 0; k < iters; k++) {
        while (atomicCAS(lock, 0, 1) != 0)
            ;
        __threadfence();
        *counter = *counter + 1;
        __threadfence();
        atomicExch(lock, 0);
    }
}

// spin_lock_lanes: per-lane lock array: lane l of each warp adds its value into slot[l % nlocks] under lock[l % nlocks] (lanes sharing a lock contend inside one warp).
extern "C" __global__ void spin_lock_lanes(int *locks, volatile float *slot, const float *in, int nlocks)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = (threadIdx.x & 31) % nlocks;
    while (atomicCAS(&locks[k], 0, 1) != 0)
        ;
    __threadfence();
    slot[k] = slot[k] + in[i];
    __threadfence();
    atomicExch(&locks[k], 0);
}

// barrier_votes: per block, out[3*b+0..2] = __syncthreads_count / _and / _or of (in[i] != 0).
extern "C" __global__ void barrier_votes(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = in[i] != 0;
    int count = __syncthreads_count(p);
    int all = __syncthreads_and(p);
    int any = __syncthreads_or(p);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x + 0] = count;
        out[3 * blockIdx.x + 1] = all;
        out[3 * blockIdx.x + 2] = any;
    }
}

// divergent_switch: out[i] = f(in[i]) through a switch nvcc may lower to a jump table (brx.idx) or compare chain.
extern "C" __global__ void divergent_switch(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in[i], r;
    switch (v & 7) {
    case 0: r = v * 3; break;
    case 1: r = v - 17; break;
    case 2: r = v ^ 0x5a5a; break;
    case 3: r = v << 2; break;
    case 4: r = -v; break;
    case 5: r = v / 7; break;
    case 6: r = v | 1; break;
    default: r = 42; break;
    }
    out[i] = r;
}
