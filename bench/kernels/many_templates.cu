// A large module for kemu's PTX load benchmark: one kernel template
// instantiated a few thousand times (element type x tile size x unroll x
// operation variant), the way template-heavy CUDA libraries produce large
// PTX. Each instantiation reads a tile of its input through shared memory,
// applies a small variant-specific expression with FMAs and a guarded tail,
// and writes the result. The kernels are only loaded (parsed and lowered),
// never run, by the benchmark.
//
// Build: nvcc -arch=sm_80 -O3 -ptx bench/kernels/many_templates.cu -o many_templates.ptx
// (bench/gen_nvcc_ptx.sh does this where nvcc is available.)

template <typename T, int VARIANT>
__device__ __forceinline__ T combine(T a, T b, T scale)
{
    switch (VARIANT % 8) {
    case 0: return a * scale + b;
    case 1: return a * b + scale;
    case 2: return (a > b ? a : b) * scale;
    case 3: return (a < b ? a : b) + scale;
    case 4: return a * a * scale + b * b;
    case 5: return (a - b) * scale + a;
    case 6: return a * scale - b * (T)VARIANT;
    default: return (a + b) * (scale + (T)(VARIANT / 8));
    }
}

template <typename T, int TILE, int UNROLL, int VARIANT>
__global__ void __launch_bounds__(TILE)
tile_kernel(const T *__restrict__ in, const T *__restrict__ other, T *__restrict__ out,
            T scale, int n)
{
    __shared__ T tile[TILE * UNROLL];
    int base = blockIdx.x * TILE * UNROLL;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        int i = base + u * TILE + threadIdx.x;
        tile[u * TILE + threadIdx.x] = i < n ? in[i] : (T)0;
    }
    __syncthreads();
    T acc = (T)0;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        int i = base + u * TILE + threadIdx.x;
        T neighbour = tile[(u * TILE + threadIdx.x + 1) % (TILE * UNROLL)];
        if (i < n)
            acc = combine<T, VARIANT>(tile[u * TILE + threadIdx.x], other[i] + neighbour, scale) + acc;
    }
    __syncthreads();
    int j = base + threadIdx.x;
    if (j < n)
        out[j] = acc;
}

// Explicit instantiations: 4 types x 4 tiles x 3 unrolls x 64 variants.
#define KEMU_INST(T, TILE, U, V) \
    template __global__ void tile_kernel<T, TILE, U, V>(const T *, const T *, T *, T, int);
#define KEMU_V8(T, TILE, U, V)                                                     \
    KEMU_INST(T, TILE, U, V + 0) KEMU_INST(T, TILE, U, V + 1) KEMU_INST(T, TILE, U, V + 2) \
    KEMU_INST(T, TILE, U, V + 3) KEMU_INST(T, TILE, U, V + 4) KEMU_INST(T, TILE, U, V + 5) \
    KEMU_INST(T, TILE, U, V + 6) KEMU_INST(T, TILE, U, V + 7)
#define KEMU_V64(T, TILE, U)                                                          \
    KEMU_V8(T, TILE, U, 0) KEMU_V8(T, TILE, U, 8) KEMU_V8(T, TILE, U, 16) KEMU_V8(T, TILE, U, 24) \
    KEMU_V8(T, TILE, U, 32) KEMU_V8(T, TILE, U, 40) KEMU_V8(T, TILE, U, 48) KEMU_V8(T, TILE, U, 56)
#define KEMU_UNROLLS(T, TILE) KEMU_V64(T, TILE, 1) KEMU_V64(T, TILE, 2) KEMU_V64(T, TILE, 4)
#define KEMU_TILES(T) \
    KEMU_UNROLLS(T, 32) KEMU_UNROLLS(T, 64) KEMU_UNROLLS(T, 128) KEMU_UNROLLS(T, 256)

KEMU_TILES(float)
KEMU_TILES(double)
KEMU_TILES(int)
KEMU_TILES(unsigned)
