// Kernels for synccheck on an aligned barrier (__syncthreads(), which is
// bar.sync = barrier.sync.aligned) reached by only part of a warp while its
// other lanes are still live: the PTX ISA requires every non-exited thread
// of the warp to execute the same aligned barrier instruction. Lanes that
// exited before it (the `if (i >= n) return;` idiom) are fine. Launched
// by tests/e2e/cases/check-sync-partial-*; regenerate with regen.sh.

// Odd lanes wait at the barrier; even lanes skip it, read their
// neighbour's word and leave.
extern "C" __global__ void odd_lanes_barrier(float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = (float)t * 2.0f;
    if (t % 2)
        __syncthreads();
    out[t] = s[t ^ 1];
}

// The barrier where every lane reaches it.
extern "C" __global__ void odd_lanes_barrier_fixed(float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = (float)t * 2.0f;
    __syncthreads();
    out[t] = s[t ^ 1];
}

// A block-stride loop with a barrier in its body: threads run
// ceil((n - t) / blockDim.x) rounds, so when n is not a multiple of the
// block size the last round's barrier is reached by the threads below
// n % blockDim.x only, while the others have left the loop and go on.
extern "C" __global__ void uneven_rounds_barrier(const float *in, float *out, unsigned n)
{
    __shared__ float partial[64];
    unsigned t = threadIdx.x;
    float sum = 0.0f;
    for (unsigned i = t; i < n; i += blockDim.x) {
        partial[t] = in[i];
        __syncthreads();
        sum += partial[(t + 1) % blockDim.x];
        __syncthreads();
    }
    out[t] = sum;
}

// Every thread runs the same number of rounds; only the load is guarded.
extern "C" __global__ void uneven_rounds_barrier_fixed(const float *in, float *out, unsigned n)
{
    __shared__ float partial[64];
    unsigned t = threadIdx.x;
    float sum = 0.0f;
    for (unsigned base = 0; base < n; base += blockDim.x) {
        unsigned i = base + t;
        partial[t] = i < n ? in[i] : 0.0f;
        __syncthreads();
        sum += partial[(t + 1) % blockDim.x];
        __syncthreads();
    }
    out[t] = sum;
}

// Threads past n return before the barrier: they have exited, so the
// barrier waits for the others only (clean), even when the return is in
// the middle of a warp.
extern "C" __global__ void early_return_barrier(const float *in, float *out, unsigned n)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    if (t >= n)
        return;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[(t + 1) % n];
}
