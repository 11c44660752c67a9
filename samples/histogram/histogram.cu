// histogram: counts the n bytes of data into 256 bins; hist must start at
// zero (several launches keep accumulating).
//
// Each block first counts into a private histogram in shared memory (cheap
// shared atomics, contention stays inside the block), then adds its 256
// counts to the global histogram with one global atomic per non-empty bin.
// Works for any block size and grid size (grid-stride loop).

#define BINS 256

extern "C" __global__ void histogram(const unsigned char *data, unsigned n, unsigned *hist)
{
    __shared__ unsigned local[BINS];
    for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();

    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();

    for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&hist[b], local[b]);
}
