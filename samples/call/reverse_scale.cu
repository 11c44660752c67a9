// kemu call sample: every block stages its tile of x in a scratch buffer in
// shared memory, synchronizes, and writes the tile reversed and scaled by w:
//     y[b*n + t] = x[b*n + (n-1-t)] * w[t]      (n = blockDim.x)
// Parameters follow the kemu call ABI: inputs (x, w), outputs (y), scratch
// (tile), one each.

// kemu call passes an "smem" scratch operand as the address of its buffer in
// the block's shared memory (the .shared state space), in a 64-bit
// parameter. A pointer parameter would not do: CUDA compilers take kernel
// pointer parameters to point to global memory. __cvta_shared_to_generic
// turns the shared address into an ordinary (generic) pointer.
template <typename T>
__device__ T *shared_scratch(unsigned long long shared_address)
{
    return static_cast<T *>(__cvta_shared_to_generic(shared_address));
}

extern "C" __global__ void reverse_scale(const float *__restrict__ x, const float *__restrict__ w,
                                         float *__restrict__ y, unsigned long long tile_address)
{
    float *tile = shared_scratch<float>(tile_address);
    unsigned t = threadIdx.x, n = blockDim.x, i = blockIdx.x * n + t;
    tile[t] = x[i];
    __syncthreads();
    y[i] = tile[n - 1 - t] * w[t];
}
