// Shared by the racebench kernels (tests/racebench/): graph codes over a
// graph in CSR form, written for kemu in the style of race-detection
// suites (one code, several bug variants and a clean twin).
//
// Every kernel has the same parameters:
//   n, m      nodes and edges
//   nindex    n + 1 offsets: the neighbours of v are nlist[nindex[v]] to
//             nlist[nindex[v + 1] - 1] (sorted)
//   nlist     m node ids
//   data      n ints: the per-node state (the runner fills it; each code
//             says what it holds)
//   aux       n ints, zero: a second per-node array
//   out       4 ints, zero: scalar results (counters, maxima)
// and loops over its nodes grid-stride, so any launch covers any graph.
//
// Variants (the kernel name's suffix):
//   clean   race-free and in bounds
//   atomic  an atomic read-modify-write done as a plain load and store
//   race    data other threads update read (or checked, then stored)
//           with plain accesses rather than atomic or volatile ones
//   sync    a __syncthreads() or __syncwarp() left out
//   guard   the guard that lets one thread write a shared result left out
//   bounds  a loop or range bound off by one: an out-of-bounds read
#ifndef RACEBENCH_COMMON_H
#define RACEBENCH_COMMON_H

enum { CLEAN, ATOMIC, RACE, SYNC, GUARD, BOUNDS };

#define RB_PARAMS int n, int m, const int *nindex, const int *nlist, int *data, int *aux, int *out
#define RB_ARGS n, m, nindex, nlist, data, aux, out

// Instantiates the code template NAME<V> as the kernel NAME_SUFFIX.
#define RB_KERNEL(NAME, SUFFIX, V) \
    extern "C" __global__ void NAME##_##SUFFIX(RB_PARAMS) { NAME<V>(RB_ARGS); }

// The threads of the grid, each visiting nodes v, v + threads, ...
#define FOR_NODES(v, limit) \
    for (int v = threadIdx.x + blockIdx.x * blockDim.x; v < (limit); v += gridDim.x * blockDim.x)

// A load of a word other threads may update atomically at the same time.
__device__ __forceinline__ int load_shared_state(const int *p) { return *(const volatile int *)p; }

#endif
