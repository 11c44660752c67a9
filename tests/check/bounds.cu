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

// Thread t reads in[t * 1024], 4 KiB apart: up to 252 KiB past a small
// `in` (the graph codes that read nindex[i] with no guard at all overrun as
// far), then counts into out[0] with an atomic. Race-free whatever those
// reads return: under racecheck they go on inside in's mapped granule and
// must not land in `out` (the atomics' target).
extern "C" __global__ void bounds_far_atomic(const unsigned *in, unsigned *out)
{
    unsigned t = threadIdx.x;
    unsigned v = in[t * 1024u];
    atomicAdd(&out[0], v & 1u);
}

// Thread 0 reads in[-1], 4 bytes before `in` (an end - 1 with end == 0:
// mapped on a GPU, in the granule of the allocation below, `pad`), then
// every thread updates out[0] with a plain read-modify-write: the race
// after the read before the allocation must be found.
extern "C" __global__ void bounds_before_race(const unsigned *pad, const unsigned *in, unsigned *out)
{
    int t = (int)threadIdx.x;
    unsigned v = in[t - 1] + pad[0];
    out[0] = max(out[0], v);
}
