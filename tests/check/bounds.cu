// Kernels for the checkers on accesses just past an allocation (the
// "bounds" bug class): a GPU maps global memory in whole pages, so such an
// access does not trap there, and a race after it must still be found.
// Launched by tests/e2e/cases/check-bounds-*; regenerate with regen.sh.

// The last thread reads one element past the end of `in`; then every
// thread reads its neighbour's shared word with no barrier between (RAW).
extern "C" __global__ void bounds_then_race(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t + 1];
    out[t] = s[(t + 1) % blockDim.x];
}

// The same with the barrier: only the read past the end is left.
extern "C" __global__ void bounds_then_sync(const float *in, float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t + 1];
    __syncthreads();
    out[t] = s[(t + 1) % blockDim.x];
}

// Thread t stores at out[t + shift] and then reads it back: stores past the
// end of `out` are dropped, so those threads read the fill.
extern "C" __global__ void bounds_store(float *out, float *back, unsigned shift)
{
    unsigned t = threadIdx.x;
    out[t + shift] = (float)t;
    __threadfence();
    back[t] = out[t + shift];
}

// An atomic past the end returns what a load there reads.
extern "C" __global__ void bounds_atomic(unsigned *counter, unsigned *old, unsigned shift)
{
    unsigned t = threadIdx.x;
    old[t] = atomicAdd(&counter[t + shift], 1u);
}

// A read far past every allocation (16 MiB) still faults.
extern "C" __global__ void bounds_far(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    out[t] = in[t + (4u << 20)];
}
